"""The emulated Thorlabs PM100D as its operation manual (ch. 6.4, PM100D SCPI Commands) defines
it: power, photocurrent, wavelength, averaging, attenuation, zero and delta mode on the bench's
light; ranges and their errors; the status registers; MEAS written without ``?``; the settings
kept and read back; bad input leaves the state as it was."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil.emulator.clock import ManualClock
from hil.emulator.instruments import Mainframe8164B, PowerMeterPM100D
from hil.emulator.instruments.pm100d import SAMPLE_S, responsivity
from hil.emulator.instruments.pm100d_commands import CURRENT_RANGES_A, KEPT_BOOLS, KEPT_NUMBERS
from hil.emulator.world import BenchWorld

SEED = 3
NO_ERROR = '0,"No error"'
REL = 1e-3  # the noise floor (1e-6 mW) against some 22 uW of light


@pytest.fixture(scope="module")
def chip():
    return BenchWorld(seed=SEED).chip


class Bench:
    """A PM100D on the brightest output of a lit world on a manual clock (or a dark one)."""

    def __init__(self, chip, lit: bool = True) -> None:
        self.world = BenchWorld(chip, seed=SEED, clock=ManualClock(5.0))
        laser = Mainframe8164B(self.world)
        if lit:
            laser.handle(":SOUR0:POW:STAT 1")
        self.port = int(np.argmax(self.world.output_power_mW()))
        self.pm = PowerMeterPM100D(self.world, self.port)

    def ask(self, line: str) -> str | None:
        return self.pm.handle(line)

    def num(self, line: str) -> float:
        return float(self.ask(line))

    def true_W(self) -> float:
        return 1e-3 * float(self.world.output_power_mW()[self.port])

    def errors(self) -> list[int]:
        codes = []
        while (reply := self.ask("SYST:ERR?")) != NO_ERROR:
            codes.append(int(reply.split(",")[0]))
        return codes


@pytest.fixture
def bench(chip) -> Bench:
    return Bench(chip)


@pytest.fixture
def dark(chip) -> Bench:
    return Bench(chip, lit=False)


# ---- readings -----------------------------------------------------------------------------------
def test_power_reads_the_light_in_watts_and_dbm(bench: Bench) -> None:
    truth = bench.true_W()
    for line in ("MEAS?", "MEAS:POW?", "MEASURE:SCALAR:POWER?", "READ?"):
        assert math.isclose(bench.num(line), truth, rel_tol=REL)
    bench.ask("SENS:POW:DC:UNIT DBM")
    assert math.isclose(bench.num("MEAS:POW?"), 10 * math.log10(1e3 * truth), abs_tol=0.01)
    assert bench.ask("POW:UNIT?") == "DBM" and bench.errors() == []


def test_replies_are_thorlabs_numbers(bench: Bench) -> None:
    assert bench.ask("CORR:WAV?") == "1.550000E+03"
    assert bench.ask("SENS:AVER:COUN?") == "1" and bench.ask("POW:RANG:AUTO?") == "1"


@settings(max_examples=30, deadline=None)
@given(nm=st.floats(800, 1700))
def test_current_is_power_times_responsivity_at_the_wavelength(chip, nm: float) -> None:
    bench = Bench(chip)
    bench.ask(f"SENS:CORR:WAV {nm!r}")
    truth = bench.true_W()
    assert math.isclose(bench.num("MEAS:POW?"), truth, rel_tol=REL)  # the light is at nm
    assert math.isclose(bench.num("MEAS:CURR?"), truth * responsivity(nm), rel_tol=REL)
    assert math.isclose(bench.num("SENS:CORR:POW?"), responsivity(nm), rel_tol=1e-6)


def test_a_responsivity_set_misreads_the_power_until_a_wavelength(bench: Bench) -> None:
    truth, r = bench.true_W(), responsivity(1550.0)
    bench.ask(f"SENS:CORR:POW:PDI:RESP {r / 2!r}")
    assert math.isclose(bench.num("MEAS:POW?"), 2 * truth, rel_tol=REL)
    assert math.isclose(bench.num("MEAS:CURR?"), truth * r, rel_tol=REL)  # physics unchanged
    bench.ask("CORR:WAV 1550")
    assert math.isclose(bench.num("MEAS:POW?"), truth, rel_tol=REL)


@settings(max_examples=30, deadline=None)
@given(db=st.floats(-60, 60))
def test_attenuation_divides_the_power_by_the_transmission(chip, db: float) -> None:
    bench = Bench(chip)
    truth = bench.true_W()
    bench.ask(f"SENS:CORR:LOSS:INP:MAGN {db!r}")
    assert math.isclose(bench.num("CORR?"), db, abs_tol=1e-5)
    assert math.isclose(bench.num("MEAS:POW?"), truth / 10 ** (-db / 10), rel_tol=REL)
    assert math.isclose(bench.num("MEAS:CURR?"), truth * responsivity(1550), rel_tol=REL)


def test_attenuation_limits_and_range_error(bench: Bench) -> None:
    assert bench.ask("CORR? MIN;:CORR? MAX;:CORR? DEF") == "-6.000000E+01;6.000000E+01;0.000000E+00"
    bench.ask("CORR 3")
    bench.ask("CORR 61")
    assert bench.errors() == [-222] and bench.num("CORR?") == 3.0


def test_zero_takes_the_dark_current_and_subtracts_it(bench: Bench, dark: Bench) -> None:
    dark.ask("SENS:CORR:COLL:ZERO:INIT")
    assert dark.ask("SENS:CORR:COLL:ZERO:STAT?") == "0"
    offset = dark.num("SENS:CORR:COLL:ZERO:MAGN?")
    assert 0 < offset < 1e-8  # the dark noise, A
    truth = bench.true_W()
    bench.ask("CORR:COLL:ZERO")  # on a lit input: the light becomes the zero
    assert math.isclose(bench.num("CORR:COLL:ZERO:MAGN?"), truth * responsivity(1550), rel_tol=REL)
    assert abs(bench.num("MEAS:POW?")) < 1e-4 * truth
    bench.ask("*RST")
    assert bench.num("CORR:COLL:ZERO:MAGN?") == 0.0


def test_delta_mode_reads_against_the_reference(bench: Bench) -> None:
    truth = bench.true_W()
    bench.ask("POW:REF 1E-5;:POW:REF:STAT 1")
    assert math.isclose(bench.num("MEAS:POW?"), truth - 1e-5, rel_tol=REL)
    bench.ask("POW:UNIT DBM")
    assert math.isclose(bench.num("MEAS:POW?"), 10 * math.log10(truth / 1e-5), abs_tol=0.01)
    bench.ask("CURR:REF 1E-6;:CURR:REF:STAT ON")
    assert math.isclose(bench.num("MEAS:CURR?"), truth * responsivity(1550) - 1e-6, rel_tol=REL)
    assert bench.ask("POW:REF?;:POW:REF:STAT?") == "1.000000E-05;1"


def test_averaging_reads_the_light_over_count_times_3ms(bench: Bench, monkeypatch) -> None:
    seen: list[float] = []
    read = bench.world.output_power_mW

    def spy(times_s=None, averaging_s=0.0):
        seen.append(averaging_s)
        return read(times_s, averaging_s)

    monkeypatch.setattr(bench.world, "output_power_mW", spy)
    bench.ask("AVER 300;:MEAS?")
    assert seen == [pytest.approx(300 * SAMPLE_S)]
    bench.ask("SENS:AVER:COUN 0")
    assert bench.errors() == [-222] and bench.ask("AVER?") == "300"


def test_power_density_is_power_over_the_beam_area(bench: Bench) -> None:
    bench.ask("CORR:BEAM 2")
    area_cm2 = math.pi * 0.1**2
    assert math.isclose(bench.num("MEAS:PDEN?"), bench.true_W() / area_cm2, rel_tol=REL)


# ---- ranges --------------------------------------------------------------------------------------
def test_power_range_rounds_up_to_a_current_decade_and_turns_auto_off(bench: Bench) -> None:
    r = responsivity(1550)
    bench.ask("SENS:POW:RANG 1E-6")  # 1 uW is ~1 uA: the 5 uA range
    assert math.isclose(bench.num("SENS:POW:RANG?"), 5e-6 / r, rel_tol=1e-6)
    assert bench.ask("POW:RANG:AUTO?") == "0" and bench.num("CURR:RANG?") == 5e-6
    assert math.isclose(bench.num("POW:RANG? MAX"), CURRENT_RANGES_A[-1] / r, rel_tol=1e-6)
    assert math.isclose(bench.num("POW:RANG? MIN"), CURRENT_RANGES_A[0] / r, rel_tol=1e-6)
    bench.ask("POW:RANG MAX")
    assert bench.num("CURR:RANG?") == CURRENT_RANGES_A[-1]
    bench.ask("POW:RANG 1E-6")
    bench.ask("POW:RANG 1")  # 1 W: above the largest range
    bench.ask("CURR:RANG 6E-3")
    assert bench.errors() == [-222, -222] and bench.num("CURR:RANG?") == 5e-6


def test_auto_range_follows_the_light(bench: Bench) -> None:
    current = bench.true_W() * responsivity(1550)
    bench.ask("MEAS?")
    top = bench.num("CURR:RANG?")
    assert current <= top and top / 10 < current


def test_a_reading_over_a_manual_range_is_questionable(bench: Bench) -> None:
    bench.ask("STAT:QUES:ENAB 8")
    bench.ask("CURR:RANG 5E-7")  # the light is some 20 uA
    reading = bench.num("MEAS?")
    assert math.isclose(reading, bench.true_W(), rel_tol=REL)  # returned all the same
    assert bench.ask("STAT:QUES:COND?") == "10" and int(bench.ask("*STB?")) & 8
    bench.ask("POW:RANG:AUTO 1;:MEAS?")
    assert bench.ask("STAT:QUES:COND?;:STAT:QUES?") == "0;10"


# ---- status and the measurement commands ---------------------------------------------------------
def test_data_ready_is_operation_bit_9_after_init_until_abort(bench: Bench) -> None:
    assert bench.ask("STAT:OPER:COND?") == "256"  # the sensor, connected
    bench.ask("STAT:OPER:PTR 512;:STAT:OPER:NTR 0;:STAT:OPER:ENAB 512")
    bench.ask("CONF:POW;:INIT")
    assert bench.ask("STAT:OPER:COND?") == "768" and int(bench.ask("*STB?")) & 128
    assert bench.ask("STAT:OPER?;:STAT:OPER?") == "512;0"
    bench.ask("ABOR")
    assert bench.ask("STAT:OPER:COND?") == "256"
    bench.ask("FETC?")
    assert bench.errors() == [-221]


def test_meas_written_without_a_query_holds_a_reading_for_fetch(bench: Bench) -> None:
    assert bench.ask("MEAS:POW") is None
    fetched = bench.num("FETC?")
    assert math.isclose(fetched, bench.true_W(), rel_tol=REL)
    assert bench.num("FETCH?") == fetched  # fetched again: the same reading
    assert bench.ask("MEAS:SCAL:CURR:DC") is None and bench.ask("CONF?") == "CURR"
    assert math.isclose(bench.num("FETC?"), bench.true_W() * responsivity(1550), rel_tol=REL)
    assert bench.errors() == []


def test_thorlabs_registers_summarise_into_bits_0_and_1(bench: Bench) -> None:
    assert bench.ask("STAT:MEAS:COND?;:STAT:AUX:COND?") == "0;0"
    bench.ask("STAT:AUX:ENAB 1;:STAT:MEAS:PTR 7")
    assert bench.ask("STATUS:AUXILLARY:ENABLE?;:STAT:MEAS:PTR?") == "1;7"
    bench.ask("STAT:PRES")
    assert bench.ask("STAT:AUX:ENAB?;:STAT:MEAS:PTR?") == "0;32767"


# ---- settings kept and read back, their errors ---------------------------------------------------
@pytest.mark.parametrize("header,param,scale", KEPT_NUMBERS, ids=[h for h, _, _ in KEPT_NUMBERS])
def test_kept_numbers_read_back_with_limits_and_range_errors(bench, header, param, scale) -> None:
    short = "".join(c for c in header.split("[SENSe:]")[-1] if not c.islower() and c not in "[]")
    short = short.replace(":DC", "").replace(":UPP", "").replace(":RESP", "").replace(":PYR", "")
    mid = (param.low + param.high) / 2
    bench.ask(f"{short} {mid!r}")
    assert math.isclose(bench.num(f"{short}?"), mid, rel_tol=1e-6)
    assert bench.num(f"{short}? MIN") == param.low and bench.num(f"{short}? MAX") == param.high
    bench.ask(f"{short} {param.high * 2 + 1!r}")
    assert bench.errors() == [-222] and math.isclose(bench.num(f"{short}?"), mid, rel_tol=1e-6)
    bench.ask("*RST")
    assert bench.num(f"{short}?") == param.default


@pytest.mark.parametrize("header", KEPT_BOOLS)
def test_kept_switches_read_back(bench: Bench, header: str) -> None:
    short = header.replace("[SENSe:]", "").replace("[:DC]", "").replace("[:PDIode]", ":PDI")
    short = "".join(c for c in short if not c.islower() and c not in "[]")
    before = bench.ask(f"{short}?")
    bench.ask(f"{short} {'OFF' if before == '1' else 'ON'}")
    assert bench.ask(f"{short}?") == ("0" if before == "1" else "1")
    bench.ask(f"{short} 2")
    assert bench.errors() == [-104]


def test_system_settings_and_identity(bench: Bench) -> None:
    bench.ask("SYST:DATE 2026, 3, 14;:SYST:TIME 10, 34, 48;:SYST:LFR 60")
    assert bench.ask("SYST:DATE?;:SYST:TIME?;:SYST:LFR?") == "2026,3,14;10,34,48;60"
    bench.ask("SYST:LFR 55")
    bench.ask("SYST:TIME 24, 0, 0")
    assert bench.errors() == [-222, -222]
    assert bench.ask("SYST:LFR?;:SYST:TIME?") == "60;10,34,48"
    bench.ask("*RST")  # the system's date, time and line frequency stay
    assert bench.ask("SYST:DATE?;:SYST:TIME?;:SYST:LFR?") == "2026,3,14;10,34,48;60"
    assert bench.ask("CAL:STR?") == '"01-Jan-2025"'
    assert bench.ask("SYST:SENS:IDN?").split(",")[-1] == "289"
    bench.ask("INP:ADAP:TYPE THERMAL")
    assert bench.ask("INP:ADAP?") == "THER"
    bench.ask("INP:ADAP LASER")
    assert bench.errors() == [-141] and bench.ask("INP:ADAP?") == "THER"


def test_wavelength_out_of_range_changes_nothing(bench: Bench) -> None:
    bench.ask("CORR:WAV 1310")
    bench.ask("CORR:WAV 1800")
    assert bench.errors() == [-222] and bench.num("CORR:WAV?") == 1310.0
    assert bench.ask("CORR:WAV? MIN;:CORR:WAV? MAX") == "8.000000E+02;1.700000E+03"
