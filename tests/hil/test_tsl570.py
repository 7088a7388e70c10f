"""The emulated Santec TSL-570 (hil.emulator.instruments.tsl570) as its instruction manual's
command list defines it: units of its two command sets, the light on the bench, the sweep's
timing on the world's clock, its logging data, kept settings, range errors in its own codes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil.emulator.clock import ManualClock
from hil.emulator.instruments.lasers import thz
from hil.emulator.instruments.scpi import DBM_FLOOR
from hil.emulator.instruments.tsl570 import MANUAL_ERRORS, LaserTSL570
from hil.emulator.instruments.tsl570_commands import FIRMWARE, KEPT
from hil.emulator.world import BenchWorld

NO_ERROR = '0,"No error"'


@pytest.fixture(scope="module")
def chip():
    return BenchWorld(seed=0).chip


@pytest.fixture
def tsl(chip) -> LaserTSL570:
    return LaserTSL570(BenchWorld(chip, clock=ManualClock(10.0)))


def errors(t: LaserTSL570) -> list[int]:
    codes = []
    while (reply := t.handle(":SYST:ERR?")) != NO_ERROR:
        codes.append(int(reply.split(",")[0]))
    return codes


def light(t: LaserTSL570):
    return t.world.laser(t.laser)


# ---- units and replies ---------------------------------------------------------------------------
def test_legacy_nm_and_thz_in_fixed_point_scpi_m_and_hz_in_exponent_form(tsl) -> None:
    tsl.handle(":WAV 1550.1234")
    assert tsl.handle(":WAV?") == "1550.1234"  # the manual's 0.1 pm step
    assert tsl.handle(":WAV:FREQ?") == f"{thz(1550.1234):.5f}"  # 10 MHz step: five decimals
    tsl.handle(":FREQ 193.41449")
    assert light(tsl).wavelength_nm == pytest.approx(thz(193.41449))
    tsl.handle(":SYST:COMM:COD 1;:WAV 1.5512E-6")
    assert tsl.handle(":WAV?") == "1.551200E-06" and light(tsl).wavelength_nm == 1551.2
    assert float(tsl.handle(":FREQ?")) == pytest.approx(thz(1551.2) * 1e12)
    tsl.handle(":FREQ 1.935E14")
    assert light(tsl).wavelength_nm == pytest.approx(thz(193.5))
    assert errors(tsl) == []


def test_limits_as_the_lab_drivers_ask_for_them(tsl) -> None:
    assert (tsl.handle(":WAV? MIN"), tsl.handle(":WAVelength? MAXimum")) == (
        "1480.0000",
        "1640.0000",
    )
    assert (tsl.handle(":WAV:MIN?"), tsl.handle(":WAV:MAX?")) == ("1480.0000", "1640.0000")
    assert tsl.handle(":WAV:FREQ:MIN?") == f"{thz(1640):.5f}" == tsl.handle(":FREQ? MIN")
    assert tsl.handle(":POW? MIN;:POW? MAX") == "-15.0000;13.0000"
    tsl.handle(":POW:UNIT 1")
    assert float(tsl.handle(":POW? MAX")) == pytest.approx(10**1.3, abs=1e-4)
    assert errors(tsl) == []


def test_power_output_shutter_and_the_monitor(tsl) -> None:
    tsl.handle(":POW 3")  # bare: dBm, the unit of :POW:UNIT
    assert light(tsl).power_mW == pytest.approx(10**0.3)
    assert tsl.handle(":POW:STAT?;:POW:SHUT?;:POW:ACT?") == f"0;1;{DBM_FLOOR:.4f}"
    tsl.handle(":POW:SHUT 0")  # the manual: :POW:STAT reversed
    assert light(tsl).on and tsl.handle(":POW:STAT?;:POW:ACT?") == "1;3.0000"
    tsl.handle(":POW:UNIT 1;:POW 2")  # bare: mW now
    assert light(tsl).power_mW == 2.0 and tsl.handle(":POW:ACT:LEV?") == "2.0000"
    tsl.handle(":POW:STAT 0")
    assert not light(tsl).on and tsl.handle(":POW:SHUT?") == "1"
    assert errors(tsl) == []


# ---- range errors, in the manual's codes ---------------------------------------------------------
BAD = [
    (":WAV 1479.9", ":WAV?"),
    (":FREQ 210", ":WAV?"),
    (":POW 13.5", ":POW?"),
    (":POW:ATT 30.01", ":POW:ATT?"),
    (":WAV:FIN 100.01", ":WAV:FIN?"),
    (":WAV:OFFS 0.11", ":WAV:OFFS?"),
    (":WAV:SWE:SPE 3", ":WAV:SWE:SPE?"),
    (":WAV:SWE:CYCL 1000", ":WAV:SWE:CYCL?"),
    (":WAV:SWE:DWEL 1000", ":WAV:SWE:DWEL?"),
    (":WAV:SWE:STEP 0.00001", ":WAV:SWE:STEP?"),
    (":FREQ:SWE:STEP 0.00001", ":WAV:SWE:STEP?"),
    (":TRIG:OUTP 4", ":TRIG:OUTP?"),
    (":TRIG:OUTP:STEP 161", ":TRIG:OUTP:STEP?"),
    (":AM:SOUR 2", ":AM:SOUR?"),
    (":SYST:COMM:GPIB:ADDR 31", ":SYST:COMM:GPIB:ADDR?"),
    (":SYST:COMM:GPIB:DEL 4", ":SYST:COMM:GPIB:DEL?"),
    (":SYST:COMM:ETH:IPAD 192.168.1.256", ":SYST:COMM:ETH:IPAD?"),
    (":SYST:COMM:ETH:PORT 65536", ":SYST:COMM:ETH:PORT?"),
    (":DISP:BRIG 101", ":DISP:BRIG?"),
]


@pytest.mark.parametrize(("bad", "state"), BAD, ids=[b for b, _ in BAD])
def test_out_of_range_is_222_and_changes_nothing(tsl, bad, state) -> None:
    before = tsl.handle(state)
    assert tsl.handle(bad) is None
    assert errors(tsl) == [-222] and tsl.handle(state) == before


@given(st.floats(1000, 2000))
@settings(max_examples=40, deadline=None)
def test_a_wavelength_is_set_inside_the_range_and_refused_outside(chip, nm) -> None:
    tsl = LaserTSL570(BenchWorld(chip, clock=ManualClock(0.0)))
    tsl.handle(f":WAV {nm:.4f}")
    inside = 1480 <= round(nm, 4) <= 1640
    assert errors(tsl) == ([] if inside else [-222])
    assert light(tsl).wavelength_nm == pytest.approx(round(nm, 4) if inside else 1550.0)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (":WAV abc", -148),  # a word where a number goes
        (":POW:STAT maybe", -148),
        ("BAD$HEADER 1", -102),
        (":NO:SUCH 1", -113),
        (":WAV 1550,1", -108),
        (":WAV", -109),
        (":SYST:COMM:ETH:IPAD 10.0.0", -102),
        (":WAV 1550XX", -102),  # a suffix that is no unit
    ],
)
def test_every_error_is_one_of_the_manuals(tsl, line, code) -> None:
    tsl.handle(line)
    assert errors(tsl) == [code] and code in MANUAL_ERRORS


def test_a_non_ascii_byte_is_a_syntax_error(tsl) -> None:
    tsl.handle(b":\xff?")
    assert errors(tsl) == [-102]


# ---- kept settings -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("header", "param", "default", "wavelength"), KEPT, ids=[k[0] for k in KEPT]
)
def test_each_kept_setting_reads_back(tsl, header, param, default, wavelength) -> None:
    words = header.replace("[", "").replace("]", "").split(":")
    short = ":".join("".join(c for c in w if c.isupper()) for w in words)  # all nodes, short
    assert tsl.handle(f":{short}?") == tsl.reply(tsl.out_nm(default) if wavelength else default)
    if param.kind == "bool":
        sent, expected = "1", "1"
    elif param.kind == "string":
        sent, expected = "10.1.2.3", "10.1.2.3"
    elif param.kind == "int":
        sent = expected = str(int(param.high))
    else:
        sent, expected = str(param.high), f"{param.high:.4f}"
    tsl.handle(f":{short} {sent}")
    assert tsl.handle(f":{short}?") == expected, header
    assert errors(tsl) == []


def test_rst_stops_a_sweep_clears_errors_and_keeps_settings(tsl) -> None:
    tsl.handle(":WAV 1560;:POW:ATT 4;:POW:STAT 1;:WAV:SWE 1;:NO:SUCH")
    tsl.handle("*RST")
    assert tsl.handle(":WAV:SWE?;:WAV?;:POW:ATT?;:POW:STAT?") == "0;1560.0000;4.0000;1"
    assert errors(tsl) == []


def test_reboot_brings_back_the_power_on_light_and_shutdown_the_dark(tsl) -> None:
    tsl.handle(":WAV 1560;:POW 5;:POW:STAT 1;:COHC 1;:SPEC:REB")
    assert (light(tsl).on, light(tsl).wavelength_nm, light(tsl).power_mW) == (False, 1550.0, 1.0)
    assert tsl.handle(":COHC?") == "1"  # a saved setting
    tsl.handle(":POW:STAT 1;:SPEC:SHUT")
    assert not light(tsl).on and errors(tsl) == []


def test_identity_alerts_and_interface(tsl) -> None:
    assert tsl.handle("*IDN?").endswith(FIRMWARE) and tsl.handle(":SYST:VERS?") == FIRMWARE
    assert tsl.handle(":SYST:ALER?") == "No alerts." and tsl.handle(":SYST:LOCK?") == "0"
    tsl.handle(":SYST:COMM:GPIB:DEL 2")
    assert tsl.framing.reply == "\r\n" and tsl.handle(":SYST:COMM:GPIB:DEL?") == "2"
    tsl.handle(":SYST:COMM:GPIB:DEL 3")
    assert tsl.framing.reply == "" and tsl.framing.accepts == ("\r", "\n", "\r\n")


# ---- the sweep on the world's clock --------------------------------------------------------------
def test_a_continuous_sweep_takes_span_over_speed_plus_delay(tsl) -> None:
    clock = tsl.world.clock
    tsl.handle(":WAV:SWE:MOD 1;:WAV:SWE:STAR 1500;:WAV:SWE:STOP 1600;:WAV:SWE:SPE 50")
    tsl.handle(":WAV:SWE:DEL 1;:WAV:SWE:CYCL 3;:WAV:SWE:REP")
    assert tsl.handle(":WAV:SWE:COUN?") == "0"
    clock.advance(3.0)  # 2 s tuning + 1 s delay: one pass
    assert tsl.handle(":WAV:SWE:COUN?") == "1"
    assert tsl.handle(":WAV:SWE?") == "1"  # polled while running: waits to the end
    assert clock() == pytest.approx(19.0) and tsl.handle(":WAV:SWE?;:WAV:SWE:COUN?") == "0;3"


def test_a_two_way_step_sweep_dwells_at_each_step_both_ways(tsl) -> None:
    clock = tsl.world.clock
    tsl.handle(":WAV:SWE:MOD 2;:WAV:SWE:STAR 1500;:WAV:SWE:STOP 1510;:WAV:SWE:STEP 1")
    tsl.handle(":WAV:SWE:SPE 10;:WAV:SWE:DWEL 0.5;:WAV:SWE:DEL 0;:WAV:SWE 1")
    pass_s = 2 * (10 / 10 + 11 * 0.5)  # 11 steps of 0.5 s plus 1 s tuning, there and back
    clock.advance(pass_s - 0.01)
    assert tsl.handle(":WAV:SWE:COUN?") == "0"
    clock.advance(0.02)
    assert tsl.handle(":WAV:SWE:COUN?") == "1"


def test_a_sweep_with_the_trigger_on_waits_for_it(tsl) -> None:
    tsl.handle(":TRIG:INP:EXT 1;:WAV:SWE:STAR 1500;:WAV:SWE:STOP 1510;:WAV:SWE:SPE 10;:WAV:SWE 1")
    tsl.world.clock.advance(5.0)
    assert tsl.handle(":WAV:SWE?;:WAV:SWE:COUN?") == "3;0"  # standing by for the trigger
    tsl.handle(":TRIG:INP:SOFT")
    assert tsl.handle(":WAV:SWE?") == "1" and tsl.handle(":WAV:SWE:COUN?") == "1"
    tsl.handle(":TRIG:INP:EXT 0;:TRIG:INP:STAN 1;:WAV:SWE 1")
    assert tsl.handle(":WAV:SWE?") == "3"
    tsl.handle("*TRG")  # the device trigger as the soft trigger
    assert tsl.handle(":TRIG:INP:STAN?") == "0" and tsl.handle(":WAV:SWE?") == "1"
    assert errors(tsl) == []


def test_logging_data_of_the_last_sweep(tsl) -> None:
    tsl.handle(":POW:STAT 1;:POW 2")
    assert tsl.handle(":READ:POIN?") == "0"
    tsl.handle(":WAV:SWE:MOD 0;:WAV:SWE:STAR 1500;:WAV:SWE:STOP 1501;:WAV:SWE:STEP 0.25")
    tsl.handle(":WAV:SWE:SPE 1;:WAV:SWE 1;:WAV:SWE?")  # polled to its end
    assert tsl.handle(":READ:POIN?") == "5"  # a point per step
    block = tsl.handle(":READ:DAT?")
    assert block[:4] == b"#220"
    assert np.frombuffer(block[4:], "<i4").tolist() == [15_000_000 + 2500 * k for k in range(5)]
    power = tsl.handle(":READ:DAT:POW?")
    assert np.allclose(np.frombuffer(power[4:], "<f4"), 2.0, atol=1e-6)  # dBm
    tsl.handle(":WAV:SWE:MOD 1;:TRIG:OUTP:STEP 0.1;:WAV:SWE 1;:WAV:SWE?")
    assert tsl.handle(":READ:POIN?") == "11"  # continuous: a point per trigger output step
    assert math.isclose(float(tsl.handle(":TRIG:OUTP:STEP?")), 0.1)
    assert errors(tsl) == []
