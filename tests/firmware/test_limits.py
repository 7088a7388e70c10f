"""Limits at every instant: the current limit, the power budget and the interlock hold for every
row of currents the firmware sends, the rows it measures at during self-calibration and ring
locks included; a procedure that cannot run inside them refuses before it sends anything."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.controller import Controller
from firmware.sdk import Switch
from tests.firmware.state import capture, watch_limits


def _controller(**kw) -> Controller:
    return Switch.emulated(**kw).transport.controller


@pytest.mark.parametrize(
    ("switch", "limit", "line", "error", "says"),
    [
        # once: ran with no error while its measurement batches drove 990 mW
        ({"ports": 8, "seed": 0}, "SYST:POW:LIM 0", "CAL:RUN", -222, "budget"),
        # once: -221 only after sweeping the ring heater up to 3.5 mA
        ({"ports": 8, "seed": 0, "rings": True}, "SYST:INT ON", "RING:LOCK 0", -221, "ring 0"),
        # the sweep over 1.25 FSR needs 3.4 mA
        ({"ports": 8, "seed": 1, "rings": True}, "SYST:CURR:LIM 3", "RING:LOCK 1", -222, "ring 1"),
        # once: -200 after locking the rings and measuring (P_pi 21.8 mW, 4 mA gives 8.13 mW)
        ({"ports": 4, "seed": 0, "rings": True}, "SYST:CURR:LIM 4", "CAL:RUN", -222, "period"),
        # each heater alone fits; the mesh parked at bar does not
        ({"ports": 8, "seed": 0}, "SYST:POW:LIM 500", "CAL:RUN", -222, "parked"),
    ],
)
def test_a_procedure_that_cannot_run_inside_the_limits_refuses_before_sending_anything(
    switch, limit, line, error, says
) -> None:
    c = _controller(**switch)
    c.handle(limit)
    before, watch = capture(c), watch_limits(c)
    c.handle(line)
    assert c.errors.codes() == [error]
    assert says in c.next_error()
    assert watch.rows == 0 and capture(c) == before


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
