"""The switch's IEEE 488.2 status model, per client: the event status register (*ESR?, *ESE,
*CLS, *OPC), the status byte (*STB?, *SRE) and *OPT?."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.controller.session import Session
from firmware.scpi_errors import ScpiError, event_bit
from firmware.sdk import Switch

#: Lines and the event status bit each sets: command, execution and device-dependent errors.
FAILING = {"NO:SUCH:THING": 32, "ROUT:MATC 0,0": 16, "HEAT:CURR 10,11": 16, "ROUT:MATC DEF": 16}


def _sessions(n: int = 2, **kw) -> list[Session]:
    c = Switch.emulated(**{"ports": 4, "seed": 0, **kw}).transport.controller
    return [Session(c) for _ in range(n)]


def test_power_on_then_each_error_sets_its_class_bit_in_its_own_client_only() -> None:
    one, other = _sessions()
    assert one.handle("*ESR?") == "128" and one.handle("*ESR?") == "0"  # power on, then read
    other.handle("*ESR?")
    for line, bit in FAILING.items():
        one.handle(line)
        assert one.handle("*ESR?") == str(bit), line
    assert other.handle("*ESR?") == "0" and other.handle("SYST:ERR:COUN?") == "0"


@given(codes=st.lists(st.sampled_from([-113, -109, -222, -224, -240, -310, -350, -363])))
def test_the_register_holds_the_or_of_the_bits_of_every_error_since_it_was_read(codes) -> None:
    (s,) = _sessions(1)
    s.handle("*ESR?")
    for code in codes:
        s.errors.push(ScpiError(code))
    expected = 0
    for code in codes:
        expected |= event_bit(code)
    assert s.handle("*ESR?") == str(expected)


def test_the_status_byte_follows_the_queue_the_enabled_events_and_the_service_mask() -> None:
    (s,) = _sessions(1)
    s.handle("*ESR?")
    assert s.handle("*STB?") == "0"
    s.handle("ROUT:MATC 0,0")  # an execution error: queue not empty (4), event 16 not enabled
    assert s.handle("*STB?") == "4"
    assert s.handle("*ESE 16;*ESE?") == "16" and s.handle("*STB?") == str(4 | 32)
    assert s.handle("*SRE 32;*SRE?") == "32" and s.handle("*STB?") == str(4 | 32 | 64)
    assert s.handle("*CLS;*STB?") == "0"  # queue and events cleared, the masks kept
    assert s.handle("*ESE?;*SRE?") == "16;32"
    s.handle("ROUT:MATC 0,1")
    assert s.handle("*STB?") == "128"  # an operation bit: a matching is applied


@pytest.mark.parametrize("line", ["*ESE 256", "*SRE -1", "*ESE 1.5"])
def test_masks_outside_a_byte_are_refused_and_change_nothing(line: str) -> None:
    (s,) = _sessions(1)
    s.handle("*ESE 4;*SRE 4")
    s.handle(line)
    assert s.handle("SYST:ERR?").startswith(("-222", "-104")) and s.handle("*ESE?;*SRE?") == "4;4"


def test_opc_sets_its_bit_when_the_clients_operation_completes_and_not_before() -> None:
    (s,) = _sessions(1, ports=4, rings=True)
    s.handle("*ESR?")
    assert s.handle("*OPC;*ESR?") == "1"  # nothing runs: at once
    assert s.handle("CAL:RUN;*OPC") is None  # the line goes on at once
    c = s.controller
    deadline = time.monotonic() + 120
    seen = []
    while not seen or not int(seen[-1]) & 1:
        assert time.monotonic() < deadline, "no OPC"
        busy = c.busy
        seen.append(s.handle("*ESR?"))
        if int(seen[-1]) & 1:
            assert not busy or c.busy == ""  # set only once the calibration had completed
        time.sleep(0.005)
    assert c.calibration is not None and s.handle("SYST:ERR?") == '0,"No error"'


def test_options() -> None:
    (s,) = _sessions(1)
    assert s.handle("*OPT?") == "0"
