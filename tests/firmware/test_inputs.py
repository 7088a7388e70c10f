"""Any line, however malformed, ends in the error queue: nothing escapes ``Controller.handle``
and the codes are the standard ones."""

import logging

import pytest
from hypothesis import given

from firmware.commands import MESSAGES
from firmware.sdk import Switch
from tests.strategies import scpi_lines

SWITCH = Switch.emulated(ports=4, seed=0, rings=True)
HEADERS = [
    name + suffix
    for spec in SWITCH.transport.controller.grammar
    for name in (spec.header, spec.short)
    for suffix, form in (("", spec.settable), ("?", spec.queryable))
    if form
]


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
