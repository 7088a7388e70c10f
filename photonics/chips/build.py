"""A registered topology's emulated chip: a :class:`~photonics.chips.chip.Chip` on a feed-forward
mesh, a :class:`~photonics.chips.mesh_chip.MeshChip` on a recirculating one.

Kept apart from the registry (:mod:`photonics.chips.topologies`), which the chips themselves
read their meshes from.
"""

from __future__ import annotations

from dataclasses import replace

from photonics.chips.chip import Chip, ChipSpec
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.chips.topologies import names, topology
from photonics.errors import SettingsError


def build_chip(
    mesh: str,
    ports: int,
    seed: int = 0,
    rings: bool = False,
    pitch_um: tuple[float, float] | None = None,
) -> Chip | MeshChip:
    """The emulated chip of topology ``mesh`` for ``ports`` endpoints, fabrication drawn from
    ``seed``, with add-drop rings before the photodiodes when ``rings`` (feed-forward only);
    ``pitch_um``: a feed-forward chip's (column, mode) pitch, um (None: where the wired layout
    draws its heaters). A permutation switch (inputs and outputs apart) has none."""
    found = topology(mesh)
    if found.directed:
        raise SettingsError(
            f"{mesh} is a permutation switch (inputs and outputs apart); an emulated switch "
            f"needs endpoints that send and receive: {', '.join(names(directed=False))}"
        )
    ports = found.check_ports(ports)
    if found.kind == "feedforward":
        spec = ChipSpec(n_ports=ports, mesh=mesh, seed=seed, output_rings=rings)
        if pitch_um is not None:
            spec = replace(spec, pitch_x_um=pitch_um[0], pitch_y_um=pitch_um[1])
        return Chip(spec)
    if pitch_um is not None:
        raise SettingsError(
            f"pitch_um sets a feed-forward chip's column and mode pitch, not {mesh}'s"
        )
    if rings:
        raise SettingsError(f"rings are modeled on feed-forward chips only, not {mesh}")
    geometry = found.geometry(ports)
    return MeshChip(geometry.mesh, geometry.inputs, MeshChipSpec(seed=seed))
