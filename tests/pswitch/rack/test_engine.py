"""Jobs and failures over time (:mod:`pswitch.rack.engine`)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from photonics import SettingsError
from pswitch.rack import model
from pswitch.rack.engine import FABRICS, Failures, simulate
from pswitch.rack.jobs import JobSpec

RACK = model.Rack(servers=4, per_server=8, ports=8)


def job(name: str, size: int, steps: int = 100, at: float = 0.0) -> JobSpec:
    return JobSpec(name, size, steps, compute_s=0.05, dp_bytes=2e8, arrival_s=at)


traces = st.lists(
    st.tuples(st.sampled_from([1, 2, 4, 6, 8, 12, 16]), st.floats(0, 20), st.integers(5, 60)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=25, deadline=None)
@given(traces)
def test_every_job_finishes_and_the_books_balance(trace):
    jobs = [job(f"j{i}", size, steps, at) for i, (size, at, steps) in enumerate(trace)]
    for fabric in FABRICS:
        r = simulate(RACK, fabric, jobs)
        assert set(r.completion_s) == {j.name for j in jobs}
        for j in jobs:  # no job runs faster than its own steps allow
            assert r.completion_s[j.name] >= j.steps * r.step_s[j.name][0] - 1e-9
        m = r.metrics()
        assert 0 < m["utilization"] <= 1 and m["lost_failures"] == 0
        # any subset of accelerators is a ring at full bandwidth: nothing fragments
        if fabric in ("photonic", "ideal", "server"):
            assert m["fragmentation"] == 0.0


def test_a_fixed_torus_fragments_where_the_photonic_rack_does_not():
    # four rows of 8 held; rows 0 and 2 come free, and a 16 waits on the torus: no two
    # adjacent rows are free, though 16 accelerators are
    rows = [job("a", 8, 50), job("b", 8, 400), job("c", 8, 50), job("d", 8, 400)]
    jobs = [*rows, job("e", 16, 100, at=1.0)]
    torus, photonic = (simulate(RACK, f, jobs) for f in ("torus", "photonic"))
    assert torus.allocation == photonic.allocation == {}
    assert torus.metrics()["fragmentation"] > 0
    assert photonic.metrics()["fragmentation"] == 0
    assert photonic.completion_s["e"] < torus.completion_s["e"]


def test_a_spare_keeps_the_photonic_job_at_full_speed_and_slows_the_server_rack():
    one = [job("ft", 8, 2000)]
    fail = Failures(at_s=(10.0,), restart_s=1.0)
    photonic = simulate(RACK, "photonic", one, fail)
    server = simulate(model.Rack(servers=4, per_server=8, ports=8), "server", one, fail)
    assert photonic.step_s["ft"][0] == photonic.step_s["ft"][1]
    assert server.step_s["ft"][1] > server.step_s["ft"][0]  # the spare is in another server
    assert photonic.failures == server.failures == [10.0]
    # down for the restart (and, photonic, the chips' reconfiguration)
    down = photonic.metrics()["lost_failures"] * RACK.accelerators * photonic.horizon_s / 8
    assert down == pytest.approx(1.0 + model.reconfigure_s(RACK))


def test_migration_pays_its_move_and_frees_the_rack():
    r = simulate(
        RACK, "server", [job("ft", 8, 2000)], Failures(at_s=(10.0,), migrate_s=60.0), "migrate"
    )
    assert r.step_s["ft"][0] == r.step_s["ft"][1]
    assert r.metrics()["lost_failures"] * RACK.accelerators * r.horizon_s / 8 == pytest.approx(60.0)


def test_random_failures_are_the_seeds():
    jobs = [job("a", 16, 3000), job("b", 8, 3000)]
    fail = Failures(mtbf_s=2000.0, repair_s=50.0)
    runs = [simulate(RACK, "photonic", jobs, fail, seed=s).failures for s in (1, 1, 2)]
    assert runs[0] == runs[1] != runs[2]
    assert runs[0]


def test_bad_runs_are_refused():
    with pytest.raises(SettingsError, match="fabric must be one of"):
        simulate(RACK, "copper", [job("a", 2)])  # type: ignore[arg-type]
    with pytest.raises(SettingsError, match="more than the rack's 32"):
        simulate(RACK, "photonic", [job("a", 33)])
    with pytest.raises(SettingsError, match="size must be an integer >= 1"):
        job("a", 0)


def test_reconfiguring_every_step_pays_the_driver_class_each_time():
    jobs = [job("a", 8, 50), job("b", 4, 50, at=2.0)]
    fast, slow = (
        model.Rack(servers=4, per_server=8, ports=8, driver=d) for d in ("parallel", "bench")
    )
    per_job = simulate(fast, "photonic", jobs)
    per_step = {r.driver: simulate(r, "photonic", jobs, reconfigure="step") for r in (fast, slow)}
    # every port on each circuit: faster than the ring per job, unless the driver is slow
    assert per_step["parallel"].step_s["a"][0] < per_job.step_s["a"][0]
    assert per_step["bench"].step_s["a"][0] > 2 * per_job.step_s["a"][0]
    with pytest.raises(SettingsError, match="reconfigure must be job, phase or step"):
        simulate(fast, "photonic", jobs, reconfigure="never")  # type: ignore[arg-type]
