"""Limits at every instant: the current limit, the power budget and the interlock hold for every
row of currents the firmware sends, the rows it measures at during self-calibration and ring
locks included; a procedure that cannot run inside them refuses before it sends anything."""

from hypothesis import given
from hypothesis import strategies as st

from firmware.controller import Controller
from firmware.sdk import Switch
from tests.firmware.state import capture, watch_limits


def _controller(**kw) -> Controller:
    return Switch.emulated(**kw).transport.controller


def test_self_calibration_under_a_zero_power_budget_refuses_before_driving_anything() -> None:
    # once: ran with no error while its measurement batches drove 990 mW
    c = _controller(ports=8, seed=0)
    c.handle("SYST:POW:LIM 0")
    before, watch = capture(c), watch_limits(c)
    c.handle("CAL:RUN")
    assert c.errors.codes() == [-222]
    assert watch.rows == 0 and capture(c) == before


def test_a_ring_lock_with_the_interlock_engaged_refuses_before_sweeping() -> None:
    # once: -221 only after sweeping the ring heater up to 3.5 mA
    c = _controller(ports=8, seed=0, rings=True)
    c.handle("SYST:INT ON")
    watch = watch_limits(c)
    c.handle("RING:LOCK 0")
    assert c.errors.codes() == [-221]
    assert watch.rows == 0


def test_a_ring_lock_whose_sweep_exceeds_the_current_limit_refuses_up_front() -> None:
    c = _controller(ports=8, seed=1, rings=True)
    c.handle("SYST:CURR:LIM 3")  # the sweep over 1.25 FSR needs 3.4 mA
    before, watch = capture(c), watch_limits(c)
    c.handle("RING:LOCK 1")
    assert c.errors.codes() == [-222]
    assert "ring 1" in c.next_error()
    assert watch.rows == 0 and capture(c) == before


def test_self_calibration_that_cannot_reach_a_full_period_refuses_up_front() -> None:
    # once: -200 after locking the rings and measuring (P_pi 21.8 mW, 4 mA gives 8.13 mW)
    c = _controller(ports=4, seed=0, rings=True)
    c.handle("SYST:CURR:LIM 4")
    before, watch = capture(c), watch_limits(c)
    c.handle("CAL:RUN")
    assert c.errors.codes() == [-222]
    assert "period" in c.next_error()
    assert watch.rows == 0 and capture(c) == before


def test_self_calibration_whose_sweeps_exceed_the_power_budget_refuses_up_front() -> None:
    c = _controller(ports=8, seed=0)
    c.handle("SYST:POW:LIM 500")  # each heater alone fits; the mesh parked at bar does not
    watch = watch_limits(c)
    c.handle("CAL:RUN")
    assert c.errors.codes() == [-222]
    assert watch.rows == 0


ACTIONS = [
    "ROUT:MATC 0,1,2,3",
    "ROUT:MATC 0,3",
    "ROUT:CLE",
    "HEAT:CURR 2,6",
    "RING:LOCK 0",
    "RING:LOCK 1",
    "RING:LOCK 2",
    "RING:UNL 1",
    "CAL:RUN",
    "RING:STAT? 0;STAT:OPER?;STAT:QUES?",
    "*RST",
]
LIMITS = [
    "SYST:INT ON",
    "SYST:INT OFF",
    "SYST:CURR:LIM 3",
    "SYST:CURR:LIM 3.5",
    "SYST:CURR:LIM 5",
    "SYST:CURR:LIM 10",
    "SYST:POW:LIM 20",
    "SYST:POW:LIM 60",
    "SYST:POW:LIM 150",
    "SYST:POW:LIM 250",
    "SYST:POW:LIM 800",
]


@given(st.lists(st.tuples(st.sampled_from(LIMITS), st.sampled_from(ACTIONS)), max_size=6))
def test_no_row_over_the_limits_ever_reaches_the_driver(steps) -> None:
    c = _controller(ports=4, seed=1, rings=True)
    watch = watch_limits(c)
    for limit, action in steps:
        c.handle(limit)
        c.handle(action)
    assert watch.over == []
