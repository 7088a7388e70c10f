"""Sequences of matchings on switch fabrics: all-to-all covers, schedules, failover, slices."""

import itertools
import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.fabric import (
    HeaterWriteModel,
    Job,
    Schedule,
    Step,
    all_to_all,
    failover,
    job_matchings,
    phases_schedule,
    plan_schedule,
    schedule_timing,
    slice_tenants,
)
from photonics import (
    ClementsMesh,
    Matching,
    MatchingError,
    MeshSettings,
    PortError,
    ReckMesh,
    SettingsError,
    ShapeError,
)
from photonics.mzi import MZIImperfections
from photonics.routing import Router, requests_for, verify
from photonics.switch import FeedForwardFabric, MeshFabric, SwitchPlan
from photonics.switch_geometry import hexagonal_switch, switch_6x6, switch_32
from photonics.waveguide_mesh import BAR, CROSS, trace
from tests.strategies import seeds


@cache
def clements(n: int) -> FeedForwardFabric:
    return FeedForwardFabric(ClementsMesh(n))


@cache
def hex32() -> MeshFabric:
    mesh, ends = switch_32()
    return MeshFabric(Router(mesh), ends)


def pairs_of(matchings) -> list[tuple[int, int]]:
    return [p for m in matchings for p in m.pairs]


def light_goes(fabric: FeedForwardFabric, plan: SwitchPlan) -> np.ndarray:
    """|M[out, in]|^2 of the mesh at the plan's angles (no phases): where light really goes."""
    n = fabric.mesh.n_mzis
    M = fabric.mesh.transfer(MeshSettings(plan.theta, np.zeros(n), np.zeros(fabric.n_ports)))
    return np.abs(M) ** 2


def mesh_exit(fabric: MeshFabric, plan: SwitchPlan, a: int) -> int:
    """The endpoint where light from endpoint ``a`` leaves, traced through the plan's states."""
    states = np.where(np.sin(plan.theta) ** 2 > 0.5, CROSS, BAR)
    return fabric.endpoints.index(trace(fabric.router.mesh, states, fabric.endpoints[a]).exit_port)


# ---- all-to-all ----------------------------------------------------------------------------


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


# ---- schedules -----------------------------------------------------------------------------


def test_duty_cycle_of_a_hand_made_schedule():
    m = Matching([(0, 1), (2, 3)], 4)
    schedule = Schedule([(m, 1e-3), (m, 2e-3), Step(m, 3e-3)])
    timing = schedule_timing(schedule, [0.5e-3, 0.5e-3, 1e-3])
    assert timing.period_s == pytest.approx(8e-3)
    assert timing.duty_cycle == pytest.approx(0.75)
    assert timing.reconfigure_s == (0.5e-3, 0.5e-3, 1e-3)
    assert schedule_timing(schedule, [0, 0, 0]).duty_cycle == 1.0


def test_heater_write_model_gives_the_drivers_time_per_changed_cell():
    fabric = clements(4)
    m1, m2 = Matching([(0, 1), (2, 3)], 4), Matching([(0, 3), (1, 2)], 4)
    schedule = phases_schedule({"tp": m1, "dp": m2}, dwell_s={"tp": 4e-3, "dp": 6e-3})
    plans = plan_schedule(fabric, schedule)
    model = HeaterWriteModel(channel_write_s=0.5e-3, tau_s=5.6e-6, settle_tolerance=1e-3)
    changed = int(np.sum(~np.isclose(plans[0].theta, plans[1].theta)))
    assert changed > 0
    one_way = changed * 0.5e-3 + 5.6e-6 * math.log(1e3)  # ~39 us to settle to 1e-3
    timing = schedule_timing(schedule, model, plans)
    assert timing.reconfigure_s == pytest.approx((one_way, one_way))
    assert timing.duty_cycle == pytest.approx(10e-3 / (10e-3 + 2 * one_way))
    cold = schedule_timing(schedule, model, plans, cyclic=False)
    assert cold.reconfigure_s[0] == pytest.approx(fabric.n_cells * 0.5e-3 + 5.6e-6 * math.log(1e3))
    single = Schedule([(m1, 1e-3)])
    assert schedule_timing(single, model, plan_schedule(fabric, single)).duty_cycle == 1.0
    assert model.seconds(0) == 0.0


def test_phases_schedule_keeps_the_phase_order_and_dwells():
    tp, dp, pp = (Matching([(0, 1)], 4), Matching([(0, 2)], 4), Matching([(1, 3)], 4))
    s = phases_schedule({"tp": tp, "dp": dp, "pp": pp}, {"pp": 3.0, "tp": 1.0, "dp": 2.0})
    assert [(x.label, x.matching, x.dwell_s) for x in s.steps] == [
        ("tp", tp, 1.0),
        ("dp", dp, 2.0),
        ("pp", pp, 3.0),
    ]
    assert s.dwell_s == 6.0
    assert [x.dwell_s for x in phases_schedule({"a": tp, "b": dp}, 0.25).steps] == [0.25, 0.25]


@pytest.mark.parametrize("dwell", [0, -1e-3, math.nan, math.inf, True, "1ms"])
def test_steps_refuse_a_dwell_that_is_not_a_positive_time(dwell):
    with pytest.raises(SettingsError, match="dwell_s"):
        Step(Matching([(0, 1)], 2), dwell)


def test_schedule_validation():
    m2, m4 = Matching([(0, 1)], 2), Matching([(0, 1)], 4)
    with pytest.raises(SettingsError, match="at least one step"):
        Schedule([])
    with pytest.raises(ShapeError, match=r"\[2, 4\]"):
        Schedule([(m2, 1.0), (m4, 1.0)])
    with pytest.raises(MatchingError, match="Matching"):
        Step([(0, 1)], 1.0)
    with pytest.raises(SettingsError, match=r"missing \['dp'\], unknown \['pp'\]"):
        phases_schedule({"tp": m4, "dp": m4}, {"tp": 1.0, "pp": 1.0})
    with pytest.raises(SettingsError, match="at least one phase"):
        phases_schedule({}, 1.0)
    schedule = Schedule([(m4, 1.0), (m4, 1.0)])
    with pytest.raises(SettingsError, match="need 2 reconfiguration times"):
        schedule_timing(schedule, [0.1])
    with pytest.raises(SettingsError, match="step 1 must be >= 0"):
        schedule_timing(schedule, [0.1, -0.1])
    with pytest.raises(SettingsError, match="needs 2 plans"):
        schedule_timing(schedule, HeaterWriteModel())
    plans = plan_schedule(clements(4), Schedule([(Matching([(0, 2)], 4), 1.0)]))
    with pytest.raises(MatchingError, match="plan 0"):
        schedule_timing(Schedule([(m4, 1.0)]), HeaterWriteModel(), plans)
    with pytest.raises(ShapeError, match="2 ports for a 4-port"):
        plan_schedule(clements(4), Schedule([(m2, 1.0)]))
    with pytest.raises(SettingsError, match="channel_write_s"):
        HeaterWriteModel(channel_write_s=-1.0)
    with pytest.raises(SettingsError, match="settle_tolerance"):
        HeaterWriteModel(settle_tolerance=1.0)


# ---- jobs ----------------------------------------------------------------------------------


def ring_edges(cycle) -> set[frozenset[int]]:
    k = len(cycle)
    return {frozenset((cycle[i], cycle[(i + 1) % k])) for i in range(k)}


@given(st.integers(2, 12), seeds)
def test_ring_job_is_its_edges_in_2_matchings_when_even_3_when_odd(k, seed):
    ports = [int(p) for p in np.random.default_rng(seed).permutation(16)[:k]]
    ms = job_matchings(Job("r", "ring", ports), 16)
    assert len(ms) == (1 if k == 2 else 2 if k % 2 == 0 else 3)
    edges = [frozenset(p) for p in pairs_of(ms)]
    assert len(edges) == len(set(edges))  # every link in exactly one matching
    assert set(edges) == ring_edges(ports)


@pytest.mark.parametrize(("rows", "cols", "count"), [(4, 4, 4), (3, 4, 5), (2, 3, 4), (1, 5, 3)])
def test_torus_job_is_its_row_rings_then_column_rings(rows, cols, count):
    ports = list(range(3, 3 + rows * cols))
    ms = job_matchings(Job("t", "torus", ports, shape=(rows, cols)), 32)
    assert len(ms) == count
    grid = np.array(ports).reshape(rows, cols)
    want = set()
    for r in range(rows):
        want |= ring_edges(list(grid[r])) if cols > 1 else set()
    for c in range(cols):
        want |= ring_edges(list(grid[:, c])) if rows > 1 else set()
    assert {frozenset(p) for p in pairs_of(ms)} == {frozenset(map(int, e)) for e in want}


def test_job_validation():
    with pytest.raises(PortError, match="port 3 appears twice"):
        Job("j", "ring", [1, 3, 3])
    with pytest.raises(PortError, match=r"\[2\].*both endpoints and spares"):
        Job("j", "ring", [1, 2, 3], spares=[2])
    with pytest.raises(ShapeError, match="rows x cols = 6"):
        Job("j", "torus", range(6), shape=(4, 2))
    with pytest.raises(SettingsError, match="'mesh'"):
        Job("j", "mesh", [0, 1])
    with pytest.raises(PortError, match="at least 2"):
        Job("j", "ring", [0])
    with pytest.raises(PortError, match="uses port 9"):
        job_matchings(Job("j", "ring", [0, 1], spares=[9]), 8)
    job = Job("j", "ring", [4, 5, 6], spares=[7, 8])
    assert job.with_spare(5, 8) == Job("j", "ring", [4, 8, 6], spares=[7])
    with pytest.raises(PortError, match="not a spare"):
        job.with_spare(5, 4)


# ---- failover ------------------------------------------------------------------------------


def scenario(rng, n, k, n_spares, n_other, topology="ring"):
    """A job of k accelerators (with spares) and another tenant's pairs on an n-port switch;
    the current matching is the job's first matching plus the tenant's pairs."""
    perm = [int(p) for p in rng.permutation(n)]
    shape = (2, k // 2) if topology == "torus" else ()
    job = Job("job", topology, perm[:k], perm[k : k + n_spares], shape)
    other = perm[k + n_spares : k + n_spares + n_other]
    m = Matching([*job_matchings(job, n)[0].pairs, *zip(other[::2], other[1::2], strict=True)], n)
    return job, m


def check_failover(fabric, job, current, failed, result, naive_plans):
    q = current.matching.partner(failed)
    kept_pairs = [p for p in current.matching.pairs if failed not in p]
    spare = result.spare
    assert spare in job.spares and result.partner == q
    assert result.plan.matching == Matching([*kept_pairs, (q, spare)], fabric.n_ports)
    assert result.job.endpoints == tuple(spare if p == failed else p for p in job.endpoints)
    changed = result.plan.changed_cells(current)
    assert result.changed_cells == tuple(changed)
    assert result.n_changed <= min(len(p.changed_cells(current)) for p in naive_plans)
    moved = np.zeros(fabric.n_cells, bool)
    moved[changed] = True
    disturbed = set(result.disturbed)
    live = [c for c in current.circuits if failed not in (c.source, c.target)]
    assert disturbed <= {(c.source, c.target) for c in live}
    for c in live:
        if (c.source, c.target) in disturbed:
            assert moved[list(c.cells)].any()
        else:  # untouched: the same cells, none of them switched
            assert not moved[list(c.cells)].any()
            assert result.plan.circuit_from(c.source).cells == c.cells
    return q, spare


@given(seeds, st.integers(3, 24), st.integers(1, 3), st.integers(0, 4))
def test_failover_on_a_32_port_clements_mesh_swaps_in_a_spare_with_fewest_changes(
    seed, k, n_spares, n_other_pairs
):
    fabric = clements(32)
    rng = np.random.default_rng(seed)
    job, m = scenario(rng, 32, k, n_spares, 2 * n_other_pairs)
    current = fabric.plan(m)
    failed = next(p for p in job.endpoints if m.partner(p) is not None)
    result = failover(fabric, job, current, failed)
    q = m.partner(failed)
    naive = [
        fabric.plan(Matching([*(p for p in m.pairs if failed not in p), (q, s)], 32))
        for s in job.spares
    ]
    q, spare = check_failover(fabric, job, current, failed, result, naive)
    assert result.naive_changed == len(naive[job.spares.index(spare)].changed_cells(current))
    P = light_goes(fabric, result.plan)  # the transfer matrix joins every pair both ways
    for a, b in result.plan.matching.pairs:
        assert P[b, a] == pytest.approx(1) and P[a, b] == pytest.approx(1)
    assert P[spare, q] == pytest.approx(1)
    paths = fabric.trace(result.plan.theta)  # each circuit's cells are where its light goes
    assert all(c.cells == paths[c.source] for c in result.plan.circuits)
    assert len(result.plan.circuits) == 2 * len(result.plan.matching.pairs)


def test_failover_beats_the_naive_reroute_on_a_full_32_port_ring():
    fabric = clements(32)
    totals = {"changed": 0, "naive": 0, "disturbed": 0}
    for seed in range(10):
        job, m = scenario(np.random.default_rng(seed), 32, 28, 2, 2)
        current = fabric.plan(m)
        result = failover(fabric, job, current, job.endpoints[seed % 28])
        totals["changed"] += result.n_changed
        totals["naive"] += result.naive_changed
        totals["disturbed"] += len(result.disturbed)
    assert totals["changed"] < totals["naive"] / 2


def test_failover_for_a_torus_job_keeps_its_other_links():
    fabric = clements(32)
    job, m = scenario(np.random.default_rng(7), 32, 16, 2, 6, topology="torus")
    current = fabric.plan(m)
    failed = job.endpoints[5]
    result = failover(fabric, job, current, failed)
    naive = [
        fabric.plan(
            Matching([*(p for p in m.pairs if failed not in p), (m.partner(failed), s)], 32)
        )
        for s in job.spares
    ]
    check_failover(fabric, job, current, failed, result, naive)
    # the job's later matchings (the column rings) use the spare in the failed port's place
    later = job_matchings(result.job, 32)
    assert result.spare in {p for pair in pairs_of(later) for p in pair}
    assert failed not in {p for pair in pairs_of(later) for p in pair}


def test_failover_of_a_port_dark_in_this_step_changes_nothing():
    fabric = clements(8)
    job = Job("odd", "ring", [0, 1, 2, 3, 4], spares=[6, 7])
    m = job_matchings(job, 8)[0]  # (0, 1), (2, 3): port 4 rests
    current = fabric.plan(m)
    result = failover(fabric, job, current, 4)
    assert result.method == "none" and result.partner is None
    assert result.plan is current and result.changed_cells == () and result.disturbed == ()
    assert result.job.endpoints == (0, 1, 2, 3, 6)


def test_failover_errors_name_the_port():
    fabric = clements(8)
    job = Job("j", "ring", [0, 1, 2, 3], spares=[4])
    current = fabric.plan(Matching([(0, 1), (2, 3), (4, 5)], 8))
    with pytest.raises(PortError, match="failed port 6 is not an endpoint"):
        failover(fabric, job, current, 6)
    with pytest.raises(PortError, match=r"no free spare.*\(4,\)"):
        failover(fabric, job, current, 0)  # spare 4 carries another tenant's circuit
    with pytest.raises(ShapeError, match="fabric has 8 ports"):
        failover(fabric, job, clements(4).plan(Matching([(0, 1)], 4)), 0)
    with pytest.raises(SettingsError, match="max_released"):
        failover(fabric, Job("j", "ring", [0, 1], spares=[6]), current, 0, max_released=-1)


@pytest.mark.parametrize(("seed", "method", "n_disturbed"), [(0, "pinned", 0), (24, "released", 2)])
def test_failover_on_the_hexagonal_switch_32_keeps_other_paths(seed, method, n_disturbed):
    fabric = hex32()
    job, m = scenario(np.random.default_rng(seed), 32, 24, 2, 6)
    current = fabric.plan(m)
    failed = job.endpoints[1]
    result = failover(fabric, job, current, failed, compare_naive=True)
    q = m.partner(failed)
    naive = [
        fabric.plan(Matching([*(p for p in m.pairs if failed not in p), (q, s)], 32))
        for s in job.spares
    ]
    check_failover(fabric, job, current, failed, result, naive)
    assert result.method == method and len(result.disturbed) == n_disturbed
    assert result.n_changed < min(len(p.changed_cells(current)) for p in naive) / 2
    for a, b in result.plan.matching.pairs:  # light really goes where the plan says
        assert mesh_exit(fabric, result.plan, a) == b and mesh_exit(fabric, result.plan, b) == a


# ---- tenant slices -------------------------------------------------------------------------


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
