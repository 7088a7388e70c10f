"""The Keysight 8164B mainframe as its programming guide defines it: the mainframe's commands,
the tunable laser's settings and the 81636B power sensor in slot 2
(hil.emulator.instruments.mainframe_modules), with replies, units and range errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.commands import Param
from hil.emulator.instruments.lasers import Mainframe8164B
from hil.emulator.instruments.mainframe_common import C_M_S, rewrite_token
from hil.emulator.world import BenchWorld


def errors(mf: Mainframe8164B) -> list[int]:
    codes = []
    while (entry := mf.handle("SYST:ERR?")).split(",")[0] not in ("0", "+0"):
        codes.append(int(entry.split(",")[0]))
    return codes


@pytest.fixture
def mf() -> Mainframe8164B:
    return Mainframe8164B(BenchWorld(seed=0))


def test_the_issue_s_commands_are_accepted_with_the_guide_s_replies(mf) -> None:
    mf.handle("trig:conf loop")
    assert mf.handle("trig:conf?") == "3"
    mf.handle("trig:conf 1")
    assert mf.handle(":TRIGger:CONFiguration?") == "1"
    mf.handle("outp0:path lows")
    assert mf.handle("outp0:path?") == "LOWS"
    assert float(mf.handle("sour0:wav:swe:pmax? 1520nm,1570nm")) == pytest.approx(10.0)  # dBm
    mf.handle("sour0:pow:unit W")
    assert float(mf.handle("sour0:wav:swe:pmax? 1.52e-6,1.57e-6")) == pytest.approx(0.01)
    mf.handle(":SOUR0:WAV:FIX 1551.25NM")
    assert float(mf.handle(":SOUR0:WAV:FIX?")) == pytest.approx(1551.25e-9)
    assert mf.world.laser("8164B").wavelength_nm == pytest.approx(1551.25)
    mf.handle("sour0:wav:swe:star 1540nm;:sour0:wav:swe:stop 1560nm;:sour0:wav:swe:spe 10nm/s")
    mf.handle("sour0:wav:swe:mode cont;:sour0:wav:swe:cycl 3;:sour0:wav:swe:rep twow")
    assert float(mf.handle("sour0:wav:swe:exp?")) == pytest.approx(20 / 10 * 2 * 3)
    assert float(mf.handle("sour0:wav:swe:expt?")) == pytest.approx(12.0)
    assert errors(mf) == []


def test_slots_options_and_the_default_slot(mf) -> None:
    assert mf.handle("*OPT?") == "81600B, 81595B, 81636B, , "
    assert "81636B" in mf.handle(":SLOT2:IDN?")
    assert "81600B" in mf.handle(":SLOT:IDN?")  # a slot left out is slot 0 (the guide)
    assert (mf.handle("slot1:empt?"), mf.handle("slot3:empt?")) == ("0", "1")
    assert mf.handle("slot2:opt?") == "NO CONNECTOR OPTION, NO INSTRUMENT OPTIONS"
    assert mf.handle("slot:tst?") == '0,"self test OK"'
    mf.handle("trig:outp stf")  # unnumbered: the laser in slot 0
    assert mf.handle("trig0:outp?") == "STF" and mf.trigger_out == "STF"
    assert errors(mf) == []


def test_triggers_per_module_and_bad_responses(mf) -> None:
    mf.handle("trig2:inp sme;:trig2:outp avg;:trig0:inp next")
    assert (mf.handle("trig2:inp?"), mf.handle("trig2:outp?")) == ("SME", "AVG")
    assert mf.handle("trig0:inp?") == "NEXT"
    for bad, code in [("trig0:inp sme", -224), ("trig2:outp stf", -224), ("trig1:inp ign", -113)]:
        assert mf.handle(bad) is None
        assert errors(mf) == [code]
    assert (mf.handle("trig0:inp?"), mf.handle("trig2:outp?")) == ("NEXT", "AVG")  # unchanged
    mf.handle("trig2:offs 5;:trig2:inp:rearm off")
    assert (mf.handle("trig2:offs?"), mf.handle("trig2:inp:rearm?")) == ("5", "0")


def test_stored_settings_read_back_and_range_errors_change_nothing(mf) -> None:
    lines = {
        "disp:brig 0.25": ("disp:brig?", 0.25),
        "syst:comm:gpib:addr 7": ("syst:comm:gpib:self:addr?", 7),
        "sour0:am:int:freq 50KHZ": ("sour0:am:int:freq?", 50e3),
        "sour0:wav:swe:dwel 20ms": ("sour0:wav:swe:dwel?", 0.02),
        "sens2:pow:atim 2ms": ("sens2:pow:atim?", 0.002),
        "sens2:corr 1.5dB": ("sens2:corr?", 1.5),
    }
    for line, (query, value) in lines.items():
        mf.handle(line)
        assert float(mf.handle(query)) == pytest.approx(value)
    mf.handle("sour0:am:sour cohc;:sour0:am:stat 1")
    assert (mf.handle("sour0:am:sour?"), mf.handle("sour0:am:stat?")) == ("COHC", "1")
    assert errors(mf) == []
    bad = {
        "disp:brig 2": "disp:brig?",
        "syst:comm:gpib:addr 31": "syst:comm:gpib:addr?",
        "sour0:am:int:freq 10MHZ": "sour0:am:int:freq?",
        "sens2:pow:wav 2000nm": "sens2:pow:wav?",
        "sour0:wav:swe:cycl 1000": "sour0:wav:swe:cycl?",
        "syst:date 2026,13,1": "syst:date?",
    }
    for line, query in bad.items():
        before = mf.handle(query)
        assert mf.handle(line) is None
        assert errors(mf) == [-222], line
        assert mf.handle(query) == before


def test_rst_restores_settings_but_keeps_date_and_address(mf) -> None:
    mf.handle("syst:date 2027,3,4;:syst:comm:gpib:addr 9;:outp0:path lows;:trig:conf 0")
    mf.handle("sens2:pow:unit W;:sens2:pow:ref:stat 1;:disp:enab 0")
    mf.handle("*RST")
    assert (mf.handle("syst:date?"), mf.handle("syst:comm:gpib:addr?")) == ("2027,3,4", "9")
    assert (mf.handle("outp0:path?"), mf.handle("trig:conf?")) == ("HIGH", "1")
    assert (mf.handle("sens2:pow:unit?"), mf.handle("sens2:pow:ref:stat?")) == ("0", "0")
    assert mf.handle("disp:enab?") == "1"


def _lit(mf: Mainframe8164B) -> None:
    mf.handle(":SOUR0:POW 3DBM;:SOUR0:POW:STAT 1;:ROUT1 A,1")


def test_the_sensor_reads_its_chip_output(mf) -> None:
    _lit(mf)
    world = mf.world
    mf.handle("sens2:pow:unit W;:sens2:pow:atim 1ms")
    truth_W = 1e-3 * float(world.output_power_mW(averaging_s=1e-3)[0])
    assert float(mf.handle("read2:pow?")) == pytest.approx(truth_W, rel=0.05)
    assert float(mf.handle("fetc2:chan1:scal:pow:dc?")) == pytest.approx(truth_W, rel=0.05)
    mf.handle("sens2:pow:unit dbm")
    reading_dbm = float(mf.handle("read2:pow?"))
    assert reading_dbm == pytest.approx(10 * math.log10(1e3 * truth_W), abs=0.2)
    mf.handle("sens2:pow:ref toref,-10dbm;:sens2:pow:ref:stat 1")
    assert float(mf.handle("read2:pow?")) == pytest.approx(reading_dbm + 10, abs=0.2)  # dB
    mf.handle("sens2:pow:ref:disp")  # the power now is the reference: about 0 dB
    assert abs(float(mf.handle("read2:pow?"))) < 0.2
    assert errors(mf) == []


def test_fetch_without_continuous_measuring_repeats_the_last_reading(mf) -> None:
    _lit(mf)
    mf.handle("init2:cont 0;:init2")
    first = mf.handle("fetc2:pow?")
    assert mf.handle("fetc2:pow?") == first  # no new measurement without INIT
    mf.handle("init2:cont 1")
    assert mf.handle("init2:cont?") == "1"


def test_logging_follows_the_world_clock(mf) -> None:
    _lit(mf)
    world = mf.world
    mf.handle("sens2:func:par:logg 16,1ms;:sens2:func:stat logg,star")
    start = world.clock()
    assert mf.handle("sens2:func:par:logg?") == "16,+1.00000000E-003"
    assert mf.handle("sens2:func:res?") is None
    assert errors(mf) == [-221]  # not done yet
    assert mf.handle("sens2:func:stat?") == "LOGGING_STABILITY,PROGRESS"  # polling waits
    assert mf.handle("sens2:func:stat?") == "LOGGING_STABILITY,COMPLETE"
    block = mf.handle("sens2:func:res?")
    assert block.startswith(b"#264")
    logged = np.frombuffer(block[4:], "<f4")
    ends = start + 1e-3 * np.arange(1, 17)
    truth = 1e-3 * world.output_power_mW(ends, averaging_s=1e-3)[:, 0]
    assert np.allclose(logged, truth, rtol=0.05)
    part = np.frombuffer(mf.handle("sens2:func:res:bloc? 4,3")[4:], "<f4")
    assert np.array_equal(part, logged[4:7])
    assert mf.handle("sens2:func:res:bloc? 15,3") is None
    assert errors(mf) == [-222]


def test_stability_and_minmax_functions(mf) -> None:
    _lit(mf)
    mf.handle("sens2:func:par:stab 1s,100ms,10ms;:sens2:func:stat stab,star")
    mf.handle("sens2:func:stat?")
    assert len(np.frombuffer(mf.handle("sens2:func:res?")[4:], "<f4")) == 10
    mf.handle("sens2:func:par:stab 1s,100ms,1s")  # averaging longer than the period
    assert errors(mf) == [-222]
    mf.handle("sens2:func:par:minm wind,5;:sens2:func:stat minm,star")
    assert mf.handle("sens2:func:stat?") == "MINMAX,PROGRESS"
    mf.world.clock.advance(1.0)
    low, high, last = np.frombuffer(mf.handle("sens2:func:res?")[4:], "<f4")
    assert low <= last <= high and low > 0
    mf.handle("sens2:func:stat minm,stop")
    assert mf.handle("sens2:func:stat?") == "NONE,COMPLETE"


@settings(max_examples=30, deadline=None)
@given(df_ghz=st.floats(-2000.0, 2000.0, allow_nan=False))
def test_relative_frequency_sets_the_wavelength_from_the_reference(df_ghz: float) -> None:
    mf = Mainframe8164B(BenchWorld(seed=0))
    mf.handle("sour0:wav 1550nm;:sour0:wav:ref:disp")
    assert float(mf.handle("sour0:wav:ref?")) == pytest.approx(1550e-9)
    mf.handle(f"sour0:wav:freq {df_ghz!r}GHZ")
    nm = mf.world.laser("8164B").wavelength_nm
    assert C_M_S / (nm * 1e-9) - C_M_S / 1550e-9 == pytest.approx(df_ghz * 1e9, abs=1e3)
    assert float(mf.handle("sour0:wav:freq?")) == pytest.approx(df_ghz * 1e9, abs=1e5)
    assert errors(mf) == []


def test_relative_frequency_beyond_the_tuning_range_changes_nothing(mf) -> None:
    mf.handle("sour0:wav 1550nm;:sour0:wav:ref:disp")
    assert mf.handle("sour0:wav:freq -30THZ") is None
    assert errors(mf) == [-222]
    assert mf.world.laser("8164B").wavelength_nm == pytest.approx(1550.0)


def test_sweep_states_by_name_cycles_and_flag(mf) -> None:
    mf.handle("sour0:wav:swe:star 1540nm;:sour0:wav:swe:stop 1541nm;:sour0:wav:swe:spe 1nm/s")
    mf.handle("sour0:wav:swe:mode cont;:sour0:wav:swe:cycl 2;:sour0:wav:swe star")
    assert mf.sweep.passes == 2 and mf.handle("sour0:wav:swe:flag?") == "0"
    mf.world.clock.advance(1.5)  # one of two cycles done
    assert mf.handle("sour0:wav:swe:flag?") == "2"
    mf.handle("sour0:wav:swe paus")
    assert mf.handle("sour0:wav:swe:stat?") == "2"
    mf.handle("sour0:wav:swe cont")
    assert mf.handle("sour0:wav:swe:stat?") == "1"
    mf.handle("sour0:wav:swe stop")
    assert mf.handle("sour0:wav:swe?") == "0" and errors(mf) == []


@pytest.mark.parametrize(
    ("token", "param", "out"),
    [
        ("10pm", Param("step", "number", unit="nm"), "0.01NM"),
        ("5PW", Param("power", "number", unit="mW"), "0.005NW"),
        ("2MHZ", Param("frequency_hz", "number"), "2000000.0"),
        ("-10THZ", Param("difference_hz", "number"), "-10000000000000.0"),
        ("-20dBm", Param("range_dbm", "number"), "-20.0"),
        ("-20dBm", Param("power", "number", unit="mW"), "-20dBm"),  # the base converts it
    ],
)
def test_units_of_the_guide_s_table_2(token: str, param: Param, out: str) -> None:
    assert rewrite_token(token, param) == out
