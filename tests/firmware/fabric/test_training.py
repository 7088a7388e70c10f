"""A hybrid-parallel training step (:mod:`firmware.fabric.training`): its groups on the ports,
one matching per phase, and its time in closed form on either switch."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.fabric import (
    Link,
    circuit_timing,
    compile_collective,
    electrical_timing,
    ring_all_reduce,
)
from firmware.fabric.training import HybridJob, StepSettings, in_parallel, training_step
from photonics import PortError, SettingsError
from tests.firmware.fabric.fabrics import clements

LINK = Link(bandwidth_Bps=50e9, alpha_s=5e-6)


def ring_s(p: int, n: float) -> float:
    """The textbook ring all-reduce on an electrical switch, s."""
    return 2 * (p - 1) * LINK.alpha_s + 2 * (p - 1) / p * n / LINK.bandwidth_Bps


def test_groups_follow_megatron_s_order_and_cover_every_port_once_per_kind():
    job = HybridJob(dp=2, tp=2, pp=2, ports=tuple(range(10, 18)))
    assert job.groups("tp") == [(10, 11), (12, 13), (14, 15), (16, 17)]
    assert job.groups("dp") == [(10, 12), (11, 13), (14, 16), (15, 17)]
    assert job.groups("pp") == [(10, 14), (11, 15), (12, 16), (13, 17)]
    for kind in ("tp", "dp", "pp"):
        assert sorted(q for g in job.groups(kind) for q in g) == list(range(10, 18))


def test_a_2x2x2_step_is_one_matching_per_phase_and_its_closed_form_on_both_switches():
    job = HybridJob(dp=2, tp=2, pp=2, ports=tuple(range(8)))
    fwd, bwd, tp, dp, pp = 0.01, 0.02, 2.0**20, 2.0**26, 2.0**22
    c = training_step(job, StepSettings(fwd, bwd, tp, dp, pp))
    a, b = LINK.alpha_s, 1 / LINK.bandwidth_Bps
    traffic = ring_s(2, tp) + (a + pp * b) + ring_s(2, dp)
    assert math.isclose(electrical_timing(c, LINK).total_s, fwd + bwd + traffic, rel_tol=1e-12)
    s = compile_collective(c, 8, clements(8))
    phases = [(st.label, st.matching.pairs) for st in s.steps]
    assert [p for p, _ in phases] == ["tp", "tp", "pp", "dp", "dp"]
    assert s.n_matchings == 3 and s.n_changes == 3  # rings of 2 keep their one matching
    for r in (0.005, 0.015, 0.05):  # hidden by both computations, by one, by none
        want = max(r, fwd) + r + max(r, bwd) + traffic
        assert math.isclose(circuit_timing(s, LINK, r).total_s, want, rel_tol=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from([(1, 2, 2), (2, 2, 1), (2, 1, 2), (4, 2, 1), (2, 2, 2), (1, 4, 2)]),
    st.floats(0, 0.1),
    st.floats(0, 0.1),
    st.floats(0, 0.2),
)
def test_the_step_costs_its_computation_plus_its_phases_however_the_job_is_split(
    shape, fwd, bwd, r
):
    dp, tp, pp = shape
    n = dp * tp * pp
    job = HybridJob(dp, tp, pp, tuple(range(n)))
    sizes = StepSettings(fwd, bwd, tp_bytes=2.0**22, dp_bytes=2.0**24, pp_bytes=2.0**21)
    c = training_step(job, sizes)
    electrical = electrical_timing(c, LINK).total_s
    traffic = electrical - fwd - bwd
    want = 0.0
    if tp > 1:
        want += ring_s(tp, 2.0**22)
    if pp > 1:
        want += LINK.step_s(2.0**21)
    if dp > 1:
        want += ring_s(dp, 2.0**24)
    assert math.isclose(traffic, want, rel_tol=1e-9, abs_tol=1e-15)
    s = compile_collective(c, max(n, 2), clements(max(n, 2)))
    optical = circuit_timing(s, LINK, r).total_s
    # never faster than the electrical switch; at most every change unhidden, plus the alpha
    # of each extra step a round takes (a ring's round is two matchings of half its load)
    extra = (len(s.steps) - len(c.rounds)) * LINK.alpha_s
    assert optical >= electrical - 1e-12
    assert optical <= electrical + s.n_changes * r + extra + 1e-12


def test_bad_jobs_and_settings_are_refused():
    with pytest.raises(PortError, match="8 ranks need as many ports, got 7"):
        HybridJob(2, 2, 2, tuple(range(7)))
    with pytest.raises(SettingsError, match="tp must be an integer >= 1"):
        HybridJob(2, 0, 2, ())
    with pytest.raises(SettingsError, match="forward_s"):
        StepSettings(-1.0, 0.0, 1.0, 1.0, 1.0)
    with pytest.raises(SettingsError, match="all_reduce must be one of"):
        StepSettings(0.0, 0.0, 1.0, 1.0, 1.0, all_reduce="tree")
    with pytest.raises(SettingsError, match="moves no bytes"):
        training_step(HybridJob(1, 1, 1, (0,)), StepSettings(0.0, 0.0, 1.0, 1.0, 1.0))
    with pytest.raises(SettingsError, match="as many rounds"):
        in_parallel([ring_all_reduce([0, 1], 1.0), ring_all_reduce([2, 3, 4], 1.0)], "x")
