"""The switches built on recirculating meshes: their meshes and which edge ports are endpoints.

- :func:`switch_6x6` on :func:`switch_6x6_mesh` (71 cells): 6 west inputs to 6 east outputs,
  the published 6x6 switch on a hexagonal mesh (Perez-Lopez et al., Nat. Commun. 15, 1563
  (2024); docs/physics.md);
- :func:`switch_32` on :func:`mesh_9x9` (278 cells): 32 endpoints, 8 a side (PipSwitch, Ding
  and Singh, arXiv:2501.18136);
- :func:`hexagonal_switch`: 4 to 32 endpoints on the smallest hexagonal mesh of
  :data:`HEXAGONAL_SWITCH_SIZES` that routes their matchings; :func:`spread_endpoints` picks the
  endpoints of any mesh.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from photonics.errors import PortError, SettingsError
from photonics.recirculating.lattices import DEFAULT_UNIT_LENGTH_UM, hexagonal_mesh
from photonics.recirculating.waveguide_mesh import WaveguideMesh, forced_entry

#: Size of :func:`switch_6x6_mesh`: hexagonal, 3 rows x 6 columns of faces.
SWITCH_6X6_ROWS, SWITCH_6X6_COLS = 3, 6
#: Size of :func:`mesh_9x9`: hexagonal, 9 x 9 faces.
MESH_9X9_ROWS, MESH_9X9_COLS = 9, 9


def switch_6x6_mesh(unit_length_um: float = DEFAULT_UNIT_LENGTH_UM) -> WaveguideMesh:
    """The hexagonal mesh for a 6x6 switch on about 72 cells: 3 rows x 6 columns of hexagons.

    71 cells, 108 links, 68 edge ports: 10 west (ports 0-9, north to south), 10 east (ports
    43 down to 34, north to south), 24 south (10-33), 24 north (44-67). West and east each
    have 5 boundary cells (3 vertical edges, 2 slanted), two ports each. The region is 9.13 x
    4.06 mm at 811 um. Every west port reaches every east port; the shortest west-to-east
    paths cross 13 to 19 cells, 15.5 on average (Smartlight gen-1: 72 cells, 15 cells per
    path for its 6x6 switch).
    """
    return hexagonal_mesh(SWITCH_6X6_ROWS, SWITCH_6X6_COLS, unit_length_um)


def mesh_9x9(unit_length_um: float = DEFAULT_UNIT_LENGTH_UM) -> WaveguideMesh:
    """The "9x9 programmable mesh" class (PipSwitch: 32 ports): 9 x 9 hexagons.

    278 cells, 486 links, 140 edge ports: 34 west, 34 east, 36 north, 36 south; any 32 of them
    (e.g. 8 a side) can be the switch's fibre ports. Hexagonal rather than square: a square
    mesh of 9 x 9 faces (180 cells, 72 ports) splits its ports into two classes that only
    reach each other (see :meth:`WaveguideMesh.reachability`), so half the pairs of any 32
    ports could never be connected, which rules out all-to-all matchings; every port of a
    hexagonal mesh reaches every other.
    """
    return hexagonal_mesh(MESH_9X9_ROWS, MESH_9X9_COLS, unit_length_um)


def switch_6x6() -> tuple[WaveguideMesh, list[int], list[int]]:
    """The 6x6 circuit switch: :func:`switch_6x6_mesh` (71 cells) with
    6 west inputs and 6 east outputs (edge-port numbers).

    Of each side's 10 ports, these 6 are pairwise compatible: some ports near a corner can only
    enter the mesh through the arm another port needs, which a pairwise routing scan finds.
    """
    mesh = switch_6x6_mesh()
    west, east = list(mesh.side_ports("west")), list(mesh.side_ports("east"))
    return mesh, [west[i] for i in (2, 3, 4, 5, 6, 7)], [east[i] for i in (0, 1, 3, 6, 8, 9)]


#: Share of each side's ports left out at both ends by :func:`switch_32`'s endpoints: at 0.25
#: the 32-endpoint all-to-all covers whose every matching measures >= 25 dB take 37-38
#: matchings on sampled chips, at 0.15 up to 45 (docs/calibration-hex.md, "Endpoint
#: placement"); 99 of 100 random perfect matchings route at either.
SWITCH_32_MARGIN = 0.25


def switch_32(
    per_side: int = 8, margin: float = SWITCH_32_MARGIN
) -> tuple[WaveguideMesh, list[int]]:
    """The PipSwitch-scale switch: :func:`mesh_9x9` (278 cells) and
    32 endpoint edge ports, ``per_side`` on each side (west, south, east, north), picked by
    :func:`spread_endpoints` over the middle ``1 - 2 margin`` of each side.
    """
    mesh = mesh_9x9()
    return mesh, spread_endpoints(mesh, per_side, margin)


def spread_endpoints(
    mesh: WaveguideMesh, per_side: int | Sequence[int], margin: float = 0.15
) -> list[int]:
    """Endpoint edge ports of ``mesh`` for a switch: ``per_side`` ports on each side, or one
    count per side in the order (west, south, east, north); endpoints listed in that order.

    Each side's endpoints are spread evenly over the middle ``1 - 2 margin`` of its ports, each
    snapped to the nearest port that is alone on its edge cell among the endpoints (two on one
    cell would share it, and light entering one would leak into the other's output) and whose
    forced entry (:func:`~photonics.recirculating.waveguide_mesh.forced_entry`) collides with no
    endpoint chosen before. Ports nearer the corners, or with colliding forced entries, leave most
    perfect matchings unroutable by any router. Raises :class:`PortError` when a side has no such
    port left.
    """
    counts = [per_side] * 4 if isinstance(per_side, int | np.integer) else list(per_side)
    if len(counts) != 4 or any(
        isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0 for k in counts
    ):
        raise PortError(
            f"per_side must be an integer >= 0 or 4 of them (west, south, east, north), "
            f"got {per_side!r}"
        )
    if not 0 <= margin < 0.5:
        raise SettingsError(f"margin must be in [0, 0.5), got {margin!r}")
    entries = {p: forced_entry(mesh, p) for p in range(mesh.n_ports)}
    cell_of = mesh.edge_ports // 4
    chosen: list[int] = []

    def fits(p: int) -> bool:
        taken = {c: s for q in chosen for c, s, _, _ in entries[q]}
        ends = {e for q in chosen for _, _, a, b in entries[q] for e in (a, b)}
        return cell_of[p] not in {cell_of[q] for q in chosen} and all(
            taken.get(c, s) == s and a not in ends and b not in ends for c, s, a, b in entries[p]
        )

    for side, count in zip(("west", "south", "east", "north"), counts, strict=True):
        ports = [int(p) for p in mesh.side_ports(side)]
        n = len(ports)
        for target in np.linspace(margin * n, (1 - margin) * n - 1, int(count)):
            near = sorted(range(n), key=lambda i: (abs(i - target), i))
            pick = next((ports[i] for i in near if fits(ports[i])), None)
            if pick is None:
                raise PortError(
                    f"the {side} side has no free port for endpoint {len(chosen)} "
                    f"({n} ports on that side); use a bigger mesh or fewer endpoints"
                )
            chosen.append(pick)
    return chosen


#: Hexagonal switch sizes: (most endpoints, rows = cols of hexagons), measured as the smallest
#: square mesh on which at least 99 % of random perfect matchings of the endpoints that
#: :func:`spread_endpoints` picks route (100 draws each, margin 0.15; on the 9x9 mesh also at
#: :data:`SWITCH_32_MARGIN`, which it uses). Odd sizes do better than even ones here: an 8x8
#: mesh routes 2-23 % of the matchings of 25-32 endpoints, 7x7 93-97 %.
HEXAGONAL_SWITCH_SIZES = ((7, 3), (9, 4), (15, 5), (19, 6), (23, 7), (24, 8), (32, 9))


def hexagonal_switch(
    ports: int, size: int | None = None, margin: float | None = None
) -> tuple[WaveguideMesh, list[int]]:
    """A hexagonal mesh and ``ports`` (4 to 32) endpoint edge ports for a circuit switch.

    The mesh is the smallest square honeycomb of :data:`HEXAGONAL_SWITCH_SIZES` for ``ports``
    (3x3 hexagons for 4-7 endpoints up to :func:`mesh_9x9` for 25-32);
    the endpoints are spread over the four sides by :func:`spread_endpoints`, ``ports // 4`` a
    side and one more on the first ``ports % 4`` of (west, south, east, north), with
    :func:`switch_32`'s margin on the 9x9 mesh. ``hexagonal_switch(32)`` is :func:`switch_32`.
    ``size`` (hexagons a side) and ``margin`` replace those choices (a design study's).
    """
    if isinstance(ports, bool) or not isinstance(ports, int | np.integer) or not 4 <= ports <= 32:
        raise PortError(f"ports must be an integer in 4..32, got {ports!r}")
    if size is None:
        size = next(s for most, s in HEXAGONAL_SWITCH_SIZES if ports <= most)
    mesh = hexagonal_mesh(size, size)
    base, extra = divmod(int(ports), 4)
    if margin is None:
        margin = SWITCH_32_MARGIN if size == MESH_9X9_ROWS else 0.15
    return mesh, spread_endpoints(mesh, [base + (i < extra) for i in range(4)], margin)


__all__ = [
    "HEXAGONAL_SWITCH_SIZES",
    "MESH_9X9_COLS",
    "MESH_9X9_ROWS",
    "SWITCH_6X6_COLS",
    "SWITCH_6X6_ROWS",
    "SWITCH_32_MARGIN",
    "hexagonal_switch",
    "mesh_9x9",
    "spread_endpoints",
    "switch_6x6",
    "switch_6x6_mesh",
    "switch_32",
]
