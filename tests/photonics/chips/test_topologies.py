"""The topology registry: every registered name builds its geometry, planner and chip."""

import numpy as np
import pytest

from photonics.chips import topologies
from photonics.chips.build import build_chip
from photonics.chips.chip import Chip, ChipSpec
from photonics.chips.topologies import Geometry, Topology, names, topology
from photonics.errors import PortError, SettingsError
from photonics.feedforward.meshes import FeedForwardMesh
from photonics.matching import Matching
from photonics.recirculating.waveguide_mesh import WaveguideMesh


@pytest.mark.parametrize("name", names())
def test_every_topology_builds_its_geometry_and_planner_for_its_ports(name) -> None:
    t = topology(name)
    low, high = t.ports
    for ports in sorted({low, t.default_ports, high} - {256}):  # 256 modes: a slow dense mesh
        geometry = t.geometry(ports)
        fabric = t.fabric(ports)
        assert fabric.n_ports == ports
        if t.kind == "feedforward":
            assert isinstance(geometry.mesh, FeedForwardMesh) and geometry.mesh.n == ports
        else:
            assert isinstance(geometry.mesh, WaveguideMesh)
            assert len(geometry.inputs) == len(geometry.outputs) == ports
            assert (geometry.inputs == geometry.outputs) != t.directed


@pytest.mark.parametrize("name", names(directed=False))
def test_every_matching_topology_emulates_a_chip_that_its_planner_drives(name) -> None:
    t = topology(name)
    ports = t.default_ports
    chip, fabric = build_chip(name, ports, seed=1), t.fabric(ports)
    assert chip.n_ports == ports and fabric.n_cells <= chip.n_heaters
    plan = fabric.plan(Matching([(0, 1)], ports))
    assert plan.circuit_from(0).target == 1


def test_a_directed_switch_has_no_emulated_matching_chip() -> None:
    assert names(directed=True) == ("switch6x6",)
    with pytest.raises(SettingsError, match="permutation switch"):
        build_chip("switch6x6", 6)


def test_bad_names_and_port_counts_name_what_is_allowed() -> None:
    with pytest.raises(SettingsError, match="mesh must be one of clements, reck, hexagonal"):
        topology("torus")
    with pytest.raises(PortError, match=r"a hexagonal switch has 4\.\.32 ports, got 3"):
        topology("hexagonal").fabric(3)
    with pytest.raises(PortError, match="a switch32 switch has 32 ports, got 16"):
        build_chip("switch32", 16)
    with pytest.raises(SettingsError, match="default_ports"):
        Topology("bad", "", "feedforward", (4, 8), 2, lambda n: Geometry(np.eye(n)), None, None)


def test_a_registration_adds_a_name_and_unregister_removes_it() -> None:
    toy = topologies.feedforward("toy", "a toy", topology("clements").geometry(4).mesh.__class__)
    topologies.register(toy)
    try:
        assert names()[-1] == "toy" and topology("toy") is toy
        assert topology("toy").fabric(6).n_ports == 6
        # the emulated feed-forward chip reads its mesh from the registry too
        assert build_chip("toy", 6, seed=2).mesh.n == 6
        assert Chip(ChipSpec(mesh="toy", n_ports=5)).n_ports == 5
    finally:
        topologies.unregister("toy")
    assert "toy" not in names()
    with pytest.raises(SettingsError, match="mesh must be one of clements, reck; got 'toy'"):
        ChipSpec(mesh="toy")
