import numpy as np
import pytest

from photonics import Matching, PortError
from photonics.recirculating.lattices import hexagonal_mesh
from photonics.recirculating.routing import Router, requests_for
from photonics.recirculating.switch_geometry import (
    hexagonal_switch,
    mesh_9x9,
    spread_endpoints,
    switch_6x6_mesh,
    switch_32,
)
from photonics.recirculating.waveguide_mesh import lattice_counts


def test_named_meshes() -> None:
    mesh = switch_6x6_mesh()
    c6 = lattice_counts(mesh)
    assert c6 == {
        "cells": 71,
        "links": 108,
        "ports": 68,
        "faces": 18,
        "west": 10,
        "east": 10,
        "north": 24,
        "south": 24,
    }
    assert mesh.side_ports("west").tolist() == list(range(10))
    assert mesh.side_ports("east").tolist() == list(range(43, 33, -1))
    c9 = lattice_counts(mesh_9x9())
    assert (c9["cells"], c9["ports"], c9["west"], c9["east"]) == (278, 140, 34, 34)
    assert c9["ports"] >= 32


def test_switch_32_puts_one_endpoint_on_each_edge_cell_eight_a_side() -> None:
    mesh, ends = switch_32()
    assert len(ends) == 32 and len({mesh.edge_ports[p] // 4 for p in ends}) == 32
    for side in ("west", "south", "east", "north"):
        assert len(set(ends) & set(mesh.side_ports(side).tolist())) == 8
    routed = Router(mesh).route(requests_for(Matching.random(32, np.random.default_rng(1)), ends))
    assert routed.ok and len(routed.paths) == 16


@pytest.mark.parametrize("ports", [4, 5, 8, 9, 16, 23, 32])
def test_hexagonal_switch_spreads_endpoints_over_the_four_sides(ports) -> None:
    mesh, ends = hexagonal_switch(ports)
    assert len(ends) == ports == len(set(ends))
    assert len({int(mesh.edge_ports[p]) // 4 for p in ends}) == ports  # one per edge cell
    per_side = [int(np.isin(ends, mesh.side_ports(s)).sum()) for s in ("west", "south", "east")]
    per_side.append(ports - sum(per_side))
    base, extra = divmod(ports, 4)
    assert per_side == [base + (i < extra) for i in range(4)]


def test_hexagonal_switch_32_is_switch_32() -> None:
    mesh, ends = hexagonal_switch(32)
    mesh32, ends32 = switch_32()
    assert ends == ends32 and np.array_equal(mesh.links, mesh32.links)


def test_hexagonal_switch_routes_random_perfect_matchings() -> None:
    # measured: 1000 of 1000 random perfect matchings route for 4, 8 and 16 ports
    rng = np.random.default_rng(11)
    for ports in (4, 8, 16):
        mesh, ends = hexagonal_switch(ports)
        router = Router(mesh)
        ok = [router.route(requests_for(Matching.random(ports, rng), ends)).ok for _ in range(25)]
        assert all(ok), ports


@pytest.mark.parametrize("ports", [3, 33, 8.0, True])
def test_hexagonal_switch_refuses_other_sizes(ports) -> None:
    with pytest.raises(PortError):
        hexagonal_switch(ports)


def test_spread_endpoints_says_when_a_mesh_is_too_small() -> None:
    with pytest.raises(PortError, match="no free port"):
        spread_endpoints(hexagonal_mesh(2, 2), 2)
    with pytest.raises(PortError):
        spread_endpoints(hexagonal_mesh(2, 2), [1, 1, 1])


def test_hexagonal_switch_takes_a_mesh_size_and_margin_of_a_design_study() -> None:
    mesh, ends = hexagonal_switch(32, size=10, margin=0.35)
    assert mesh.n_cells == 339 and len(ends) == 32
    assert hexagonal_switch(32, size=9)[1] == hexagonal_switch(32)[1]
    assert hexagonal_switch(32, margin=0.35)[1] != hexagonal_switch(32)[1]
