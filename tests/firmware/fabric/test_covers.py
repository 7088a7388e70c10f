"""All-to-all covers of the endpoints (:mod:`firmware.fabric.covers`)."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.fabric import all_to_all
from photonics import ClementsMesh, ReckMesh, SettingsError
from photonics.chips.switch import FeedForwardFabric, MeshFabric
from photonics.devices.mzi import MZIImperfections
from photonics.recirculating.routing import Router, requests_for, verify
from photonics.recirculating.switch_geometry import hexagonal_switch, switch_6x6
from tests.firmware.fabric.fabrics import clements, light_goes, mesh_exit, pairs_of


@given(st.integers(1, 8).map(lambda h: 2 * h), st.sampled_from([ClementsMesh, ReckMesh]))
def test_all_to_all_even_n_is_n_minus_1_perfect_matchings_joining_each_pair_once(n, kind):
    fabric = FeedForwardFabric(kind(n))
    cover = all_to_all(fabric)
    assert cover.size == n - 1 and cover.optimal
    assert all(m.is_perfect for m in cover.matchings)
    assert sorted(pairs_of(cover.matchings)) == list(itertools.combinations(range(n), 2))
    for m, plan in zip(cover.matchings, cover.plans, strict=True):
        assert plan.matching == m
        P = light_goes(fabric, plan)
        for a, b in m.pairs:
            assert P[b, a] == pytest.approx(1) and P[a, b] == pytest.approx(1)


@given(st.integers(1, 7).map(lambda h: 2 * h + 1))
def test_all_to_all_odd_n_is_n_matchings_each_leaving_one_port_dark(n):
    fabric = clements(n)
    cover = all_to_all(fabric)
    assert cover.size == n and cover.optimal
    dark = [next(p for p in range(n) if m.partner(p) is None) for m in cover.matchings]
    assert all(len(m.pairs) == (n - 1) // 2 for m in cover.matchings)
    assert sorted(dark) == list(range(n))  # each endpoint rests once
    assert sorted(pairs_of(cover.matchings)) == list(itertools.combinations(range(n), 2))
    for m, plan in zip(cover.matchings, cover.plans, strict=True):
        assert all(light_goes(fabric, plan)[b, a] == pytest.approx(1) for a, b in m.pairs)


def test_all_to_all_on_a_recirculating_mesh_falls_back_to_a_larger_cover():
    mesh, _, _ = switch_6x6()
    fabric = MeshFabric(Router(mesh), [24, 64, 5, 65, 63, 54])  # round-robin does not route
    cover = all_to_all(fabric)
    assert cover.size > 5 and not cover.optimal
    assert "above optimal" in cover.note
    assert sorted(pairs_of(cover.matchings)) == list(itertools.combinations(range(6), 2))
    for m, plan in zip(cover.matchings, cover.plans, strict=True):
        assert plan.matching == m
        for a, b in m.pairs:
            assert mesh_exit(fabric, plan, a) == b and mesh_exit(fabric, plan, b) == a


def test_all_to_all_odd_on_a_recirculating_mesh_packs_pairs_that_do_not_route():
    mesh, _, _ = switch_6x6()
    fabric = MeshFabric(Router(mesh), [24, 64, 5, 65, 63])
    cover = all_to_all(fabric)
    assert cover.size >= 5
    assert sorted(pairs_of(cover.matchings)) == list(itertools.combinations(range(5), 2))
    for m, plan in zip(cover.matchings, cover.plans, strict=True):
        assert all(mesh_exit(fabric, plan, a) == b for a, b in m.pairs)


def test_all_to_all_with_an_isolation_requirement_keeps_only_matchings_that_reach_it():
    mesh, ends = hexagonal_switch(16)
    fabric = MeshFabric(Router(mesh), ends)
    plain = all_to_all(fabric)
    strict = all_to_all(fabric, isolation_db=25.0)
    assert sorted(pairs_of(strict.matchings)) == list(itertools.combinations(range(16), 2))
    worst = [
        verify(
            mesh, fabric.router.route(requests_for(m, ends)), MZIImperfections.typical()
        ).worst_isolation_db
        for m in plain.matchings
    ]
    assert min(worst) < 25  # the plain cover has a matching below the requirement ...
    for m, plan in zip(strict.matchings, strict.plans, strict=True):
        result = fabric.router.route(requests_for(m, ends))
        assert result.isolation_db >= 25  # ... the strict one none, as predicted ...
        assert np.array_equal(result.theta(), plan.theta)  # ... and its plans are those routes
    assert "25.0 dB" in strict.note
    with pytest.raises(SettingsError, match="recirculating mesh"):
        all_to_all(clements(4), isolation_db=25.0)


def test_all_to_all_refuses_bad_attempts():
    with pytest.raises(SettingsError, match="attempts"):
        all_to_all(clements(4), attempts=0)
