"""Hybrid-parallel jobs and their step time on each fabric (:mod:`pswitch.rack.jobs`)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware import fabric as ff
from photonics import SettingsError
from pswitch.rack import jobs, model

RACK = model.Rack(servers=4, per_server=8, ports=8, port_gbps=100.0, driver="parallel")
HYBRID = jobs.JobSpec("h", 16, 10, 0.05, dp_bytes=1e9, tp=4, pp=2, tp_bytes=2e8, pp_bytes=5e7)


def no_dims(_accelerators) -> int:
    return 1


def test_groups_follow_megatron_order():
    accs = list(range(100, 116))
    assert HYBRID.dp == 2
    assert HYBRID.group("tp", accs) == (100, 101, 102, 103)
    assert HYBRID.group("dp", accs) == (100, 104)
    assert HYBRID.group("pp", accs) == (100, 108)
    assert [p[0] for p in HYBRID.phases()] == ["tp", "pp", "dp"]


def test_per_job_circuits_split_the_ports_between_the_rings():
    accs = range(16)
    per_job = jobs.step_s(RACK, "photonic", "job", HYBRID, accs, no_dims)
    # 8 ports over 3 rings: 2 for tensor, 2 for pipeline, 4 (2 and the rest) for data
    expected = HYBRID.compute_s + sum(
        model.photonic_s(RACK, c, k, n, "job", held)
        for (_, c, k, n), held in zip(HYBRID.phases(), (2, 2, 4), strict=True)
    )
    assert per_job == pytest.approx(expected)
    per_phase = jobs.step_s(RACK, "photonic", "phase", HYBRID, accs, no_dims)
    assert per_phase < per_job  # every port in every phase, for 3 fast reconfigurations
    slow = model.Rack(servers=4, per_server=8, ports=8, driver="bench")
    assert jobs.step_s(slow, "photonic", "phase", HYBRID, accs, no_dims) > per_job


def test_the_server_rack_keeps_tensor_groups_on_its_scale_up_domain():
    tp_only = jobs.JobSpec("t", 8, 1, 0.0, dp_bytes=0.0, tp=8, tp_bytes=1e9)
    inside = jobs.step_s(RACK, "server", "job", tp_only, range(8), no_dims)
    across = jobs.step_s(RACK, "server", "job", tp_only, range(4, 12), no_dims)
    link = RACK.link(RACK.scale_up_gbps)
    assert inside == ff.electrical_timing(ff.ring_all_reduce(range(8), 1e9), link).total_s
    assert across > 1.2 * inside  # hierarchical: a quarter of the bytes over the NICs


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([1, 2, 4]), st.sampled_from([1, 2]), st.floats(0, 1e9), st.floats(0, 1e9))
def test_a_step_is_its_computation_and_its_phases(
    tp: int, pp: int, dp_bytes: float, tp_bytes: float
):
    j = jobs.JobSpec("p", 16, 1, 0.1, dp_bytes, tp=tp, pp=pp, tp_bytes=tp_bytes, pp_bytes=1e6)
    for fabric in ("photonic", "ideal", "server", "torus"):
        t = jobs.step_s(RACK, fabric, "job", j, range(16), no_dims)
        assert t >= j.compute_s
        if not j.phases():
            assert t == j.compute_s


def test_bad_jobs_are_refused():
    with pytest.raises(SettingsError, match="no multiple of tp x pp = 6"):
        jobs.JobSpec("x", 8, 1, 0.1, 1e9, tp=3, pp=2)
    with pytest.raises(SettingsError, match="unknown all-reduce 'chain'"):
        jobs.JobSpec("x", 8, 1, 0.1, 1e9, collective="chain")
    with pytest.raises(SettingsError, match="dp_bytes must be >= 0"):
        jobs.JobSpec("x", 8, 1, 0.1, -1.0)
    two_ports = model.Rack(servers=4, per_server=8, ports=2)
    with pytest.raises(SettingsError, match="3 rings on 2 ports; reconfigure per phase"):
        jobs.step_s(two_ports, "photonic", "job", HYBRID, range(16), no_dims)


def test_a_persistent_straggler_costs_ring_its_delay_and_the_aware_all_reduce_less():
    delay = 0.05
    ring = jobs.JobSpec("r", 8, 1, 0.0, 1e9, straggler_s=delay)
    aware = jobs.JobSpec("s", 8, 1, 0.0, 1e9, collective="straggler", straggler_s=delay)
    t_ring, t_aware = (
        jobs.step_s(RACK, "ideal", "job", j, range(8), no_dims) for j in (ring, aware)
    )
    link = RACK.link(RACK.ports * RACK.port_gbps)
    published = ff.straggler_cost(8, 1e9, link, delay)
    assert t_ring == pytest.approx(delay + published.ring_s)
    assert t_aware == pytest.approx(delay + published.straggler_aware_s)
    assert (t_ring - delay) / (t_aware - delay) == pytest.approx(published.speedup)
