"""Tenant slices and their isolation (:mod:`firmware.fabric.tenants`)."""

import itertools

import pytest

from firmware.fabric import slice_tenants
from photonics import Matching, PortError, SettingsError
from tests.firmware.fabric.fabrics import clements, hex32, mesh_exit, pairs_of


def check_isolated(fabric, slicing):
    """Every matching of every tenant, with the others in their first matchings, leaves the
    cells that the others' circuits cross as they are (checked with the fabric's own plans)."""
    first = {t.name: list(t.matchings[0].pairs) for t in slicing.slices}
    base = fabric.plan(Matching([p for ps in first.values() for p in ps], fabric.n_ports))
    owner = {p: t.name for t in slicing.slices for p in t.ports}
    for t in slicing.slices:
        theirs = {k for c in base.circuits if owner[c.source] != t.name for k in c.cells}
        others = [p for name, ps in first.items() if name != t.name for p in ps]
        for m in t.matchings:
            plan = fabric.plan(Matching([*others, *m.pairs], fabric.n_ports))
            assert not theirs & set(plan.changed_cells(base).tolist())


def test_tenant_slices_are_disjoint_consecutive_and_isolated():
    fabric = clements(16)
    slicing = slice_tenants(fabric, [("a", 5), ("b", 4), ("c", 3)])
    ports = [t.ports for t in slicing.slices]
    assert [len(p) for p in ports] == [5, 4, 3]
    assert all(p == tuple(range(p[0], p[0] + len(p))) for p in ports)
    assert len({x for p in ports for x in p}) == 12
    for t in slicing.slices:  # each tenant's matchings join all its pairs, inside its ports
        assert sorted(pairs_of(t.matchings)) == list(itertools.combinations(t.ports, 2))
    check_isolated(fabric, slicing)
    assert slicing.free_runs() == [(12, 4)]
    assert slicing.fragmentation(4) == 0.0 and slicing.fragmentation(3) == 0.25
    assert slicing.fragmentation(8) == 1.0


def test_tenant_slices_best_fit_around_reserved_ports():
    fabric = clements(16)
    slicing = slice_tenants(fabric, [("a", 3), ("b", 8)], topology="ring", reserved=[3])
    assert slicing.tenant("b").ports == tuple(range(4, 12))  # the only run that fits
    assert slicing.tenant("a").ports == (0, 1, 2)  # the smallest run that fits
    assert slicing.free_runs() == [(12, 4)] and slicing.fragmentation(4) == 0.0
    check_isolated(fabric, slicing)


def test_tenant_slicing_refuses_too_many_ports_and_fragmented_space():
    fabric = clements(16)
    with pytest.raises(PortError, match="need 17 ports in all but only 16"):
        slice_tenants(fabric, [("a", 9), ("b", 8)])
    longest = r"'b' needs 8 consecutive free ports; the longest free run has 6 \(14 ports free"
    with pytest.raises(PortError, match=longest):
        slice_tenants(fabric, [("a", 4), ("b", 8)], reserved=[4, 11])
    with pytest.raises(SettingsError, match="distinct"):
        slice_tenants(fabric, [("a", 4), ("a", 4)])
    with pytest.raises(PortError, match=">= 2 ports"):
        slice_tenants(fabric, [("a", 1)])


def test_tenant_slices_on_the_hexagonal_switch_32_route_around_each_other():
    fabric = hex32()
    slicing = slice_tenants(fabric, [("a", 8), ("b", 8), ("c", 8)])
    assert [t.ports for t in slicing.slices] == [tuple(range(i, i + 8)) for i in (0, 8, 16)]
    base = slicing.baseline
    assert base.matching.pairs == tuple(sorted(pairs_of(t.matchings[0] for t in slicing.slices)))
    assert all(mesh_exit(fabric, base, a) == b for a, b in base.matching.pairs)
    assert slicing.fragmentation(8) == 0.0
