"""Any line, however malformed, ends in the error queue: nothing escapes ``Controller.handle``,
the codes are the standard ones, and the schedule is loaded whole or not at all."""

import logging

import pytest
from hypothesis import given

from firmware.controller.schedule import MAX_SCHEDULE_STEPS
from firmware.scpi_errors import MESSAGES
from firmware.sdk import Switch
from tests.strategies import scpi_headers, scpi_lines

SWITCH = Switch.emulated(ports=4, seed=0, rings=True)
HEADERS = scpi_headers(SWITCH.transport.controller.grammar)


@given(scpi_lines(HEADERS))
def test_no_line_escapes_the_error_queue_and_every_code_is_standard(line) -> None:
    c = SWITCH.transport.controller
    c.handle("*RST;*CLS")
    reply = c.handle(line)  # raises nothing
    assert reply is None or isinstance(reply, str)
    codes = c.errors.codes()
    assert len(codes) <= 1 and all(code in MESSAGES and code < 0 for code in codes), codes
    assert -300 not in codes, c.next_error()  # the last-resort net never catches a parser bug


def test_an_unexpected_failure_is_queued_named_and_logged_and_stops_the_line(caplog) -> None:
    c = Switch.emulated(ports=4, seed=0).transport.controller
    c.applied_pairs = lambda: 1 / 0  # a firmware bug in the handler of ROUT:MATC?
    with caplog.at_level(logging.ERROR):
        assert c.handle("*IDN?;ROUT:MATC?;ROUT:CONN 0,1") == c.idn
    assert c.errors.codes() == [-300] and "ZeroDivisionError" in c.next_error()
    assert c.matching.pairs == ()  # the rest of the line did not run
    assert "ROUT:MATC?" in caplog.text and "ZeroDivisionError" in caplog.text
    for stop in (KeyboardInterrupt, SystemExit):

        def interrupted(stop=stop):
            raise stop

        c.applied_pairs = interrupted
        with pytest.raises(stop):
            c.handle("ROUT:MATC?")


def _schedule(sw: Switch) -> list:
    return [(s.dwell_s, s.plan.matching.pairs) for s in sw.transport.controller.schedule]


def test_a_schedule_load_replaces_the_whole_schedule_or_nothing(tmp_path) -> None:
    sw = Switch.emulated(ports=4, seed=0, state_dir=tmp_path)
    c, stored = sw.transport.controller, tmp_path / "schedule.json"
    c.handle("SCH:LOAD 1ms,2,0,1,2ms,4,0,2,1,3;SCH:STAR")
    assert _schedule(sw) == [(1e-3, ((0, 1),)), (2e-3, ((0, 2), (1, 3)))] and c.running
    before, on_disk = _schedule(sw), stored.read_bytes()
    for bad, code in (
        ("SCH:LOAD 1ms,2,0,3,1ms,2,0,0", -224),  # the second step pairs a port with itself
        ("SCH:LOAD 1ms,2,0,3,1ms,3,0,1", -109),
        ("SCH:LOAD 1ms,2,0,3,0,2,0,1", -222),
        ("SCH:LOAD " + ",".join(["1ms,0"] * (MAX_SCHEDULE_STEPS + 1)), -223),
    ):
        c.handle(bad)
        assert c.errors.codes() == [code], bad
        c.errors.clear()
        assert _schedule(sw) == before and stored.read_bytes() == on_disk and c.running
    c.store.write = lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    c.handle("SCH:LOAD 5ms,2,2,3")
    assert c.errors.codes() == [-310] and _schedule(sw) == before and c.running
    del c.store.write
    c.errors.clear()
    c.handle("SCH:LOAD 5ms,2,2,3")  # replaces, stops the old run
    assert _schedule(sw) == [(5e-3, ((2, 3),))] and not c.running and c.errors.codes() == []
    again = Switch.emulated(ports=4, seed=0, state_dir=tmp_path)
    assert _schedule(again) == [(5e-3, ((2, 3),))]


def test_the_schedule_is_bounded() -> None:
    c = Switch.emulated(ports=4, seed=0).transport.controller
    c.handle(";".join(["SCH:ADD 1ms,0,1"] * 32))
    c.handle(";".join(["SCH:ADD 1ms,2,3"] * (MAX_SCHEDULE_STEPS - 32)))
    assert len(c.schedule) == MAX_SCHEDULE_STEPS and c.errors.codes() == []
    c.handle("SCH:ADD 1ms")
    assert c.errors.codes() == [-223] and len(c.schedule) == MAX_SCHEDULE_STEPS
