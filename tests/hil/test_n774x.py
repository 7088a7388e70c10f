"""The emulated N774x multiport power meters as their programming guides define them (Keysight
N77xx Series Programming Guide, Edition 7, "PG"; the N774xC guide): readings, reference and
range, the logging, stability and MinMax functions on the world's clock, triggers and loops,
zeroing, stored settings and the LAN parameters; bad input leaves the state as it was."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil.emulator.clock import ManualClock
from hil.emulator.instruments import Mainframe8164B, PowerMeterN7744A, QontrolQ8iv
from hil.emulator.instruments.power_meters import OVER_RANGE
from hil.emulator.world import BenchWorld
from hil.instruments import N7744A, Loopback
from hil.instruments.base import parse_float32_block

SEED = 3
NO_ERROR = '0,"No error"'


@pytest.fixture(scope="module")
def chip():
    return BenchWorld(seed=SEED).chip


class Bench:
    """An N7745C on the 8 outputs of a world on a manual clock at 5 s, the laser on."""

    def __init__(self, chip, lit: bool = True) -> None:
        self.world = BenchWorld(chip, seed=SEED, clock=ManualClock(5.0))
        self.meter = PowerMeterN7744A(self.world, 8, "MY00012345", "N7745C")
        self.qontrol = QontrolQ8iv(self.world)
        if lit:
            Mainframe8164B(self.world).handle(":SOUR0:POW:STAT 1")

    def ask(self, line: str):
        return self.meter.handle(line)

    def errors(self) -> list[int]:
        codes = []
        while (reply := self.meter.handle("SYST:ERR?")) != NO_ERROR:
            codes.append(int(reply.split(",")[0]))
        return codes

    def brightest(self) -> int:
        """The channel (1-based) that sees the most light."""
        return int(np.argmax(self.world.output_power_mW())) + 1


@pytest.fixture
def bench(chip) -> Bench:
    return Bench(chip)


def watts(block: bytes) -> np.ndarray:
    return parse_float32_block("test", block).astype(float)


# ---- settings and their replies ------------------------------------------------------------------
def test_settings_read_back_in_the_manuals_forms(bench: Bench) -> None:
    assert bench.ask(":SENS3:POW:WAV? DEF") == "+1.45000000E-006"  # PG p. 138: half the sum
    assert (
        bench.ask(":SENS3:POW:WAV? MIN;:SENS3:POW:WAV? MAX") == "+1.25000000E-006;+1.65000000E-006"
    )
    bench.ask(":SENS:POW:WAV:ALL 1310NM")  # C p. 88: every channel
    assert {bench.ask(f":SENS{n}:POW:WAV?") for n in range(1, 9)} == {"+1.31000000E-006"}
    bench.ask(":SENS2:POW:UNIT W;:SENS5:POW:UNIT 1")
    assert bench.ask(":SENS:POW:UNIT:ALL:CSV?") == "0,1,0,0,1,0,0,0"
    bench.ask(":SENS2:POW:RANG -34;:SENS3:POW:RANG:UPP -16DBM")  # rounded to 10 dB steps
    assert bench.ask(":SENS2:POW:RANG?;:SENS3:POW:RANG?") == "-3.00000000E+001;-2.00000000E+001"
    bench.ask(":SENS1:FUNC:PAR:STAB 1s,0.1s,10ms")  # PG p. 123: the functions share these
    assert bench.ask(":SENS1:FUNC:PAR:LOGG?") == "10,+1.00000000E-002"
    assert bench.ask(":SENS1:FUNC:PAR:STAB?") == (
        "+1.00000000E+000,+1.00000000E-001,+1.00000000E-002"
    )
    bench.ask(":SENS1:FUNC:PAR:MINM CONT,20")
    assert bench.ask(":SENS1:FUNC:PAR:MINM?") == "CONT,20"
    bench.ask(":TRIG2:INP MMEasure;:TRIG2:OUTP AVGover;:TRIG:CONF 2")
    assert bench.ask(":TRIG2:INP?;:TRIG2:OUTP?;:TRIG:CONF?") == "MME;AVG;PASS"
    assert bench.ask(":SENS1:POW:REF:STAT:RAT?") == "255,0"
    bench.ask(":SENS1:POW:REF:STAT:RAT 4,1")
    assert bench.ask(":SENS1:POW:REF:STAT:RAT?") == "4,1"
    assert bench.errors() == []


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (":SENS2:POW:RANG 20", -222),  # the ranges end at +10 dBm
        (":SENS2:POW:RANG -40", -222),  # an N7745C's at -30 dBm (PG p. 134)
        (":SENS2:POW:WAV 2000NM", -222),
        (":SENS2:POW:REF TOMOD,1MW", -131),  # TOMODule takes dB
        (":SENS2:POW:REF TOREF,-3DB", -131),  # TOREF takes W or dBm
        (":SENS2:POW:REF TOREF,0W", -222),
        (":SENS2:POW:REF:STAT:RAT 9,1", -222),  # no slot 9
        (":SENS2:FUNC:PAR:STAB 1s,2s,0.1s", -222),  # the period longer than the total
        (":SENS2:FUNC:PAR:STAB 1s,0.1s,0.2s", -222),  # the averaging longer than the period
        (":SENS2:FUNC:STAT FOO,STAR", -141),
        (":TRIG2:INP FOO", -141),
        (":SYST:COMM:GPIB:ADDR 31", -222),
        (':SYST:COMM:ETH:IPAD "10.0.0.300"', -224),
        (":CONF:MEAS:SETT:REC 3", -221),  # nothing stored there
        (":CONF:MEAS:SETT:SAVE 9", -222),
        (":SENS2:FUNC:RES?", -221),
    ],
)
def test_bad_input_changes_nothing(bench: Bench, line: str, code: int) -> None:
    before = [bench.ask(q) for q in STATE_QUERIES]
    assert bench.ask(line) is None
    assert bench.errors() == [code]
    assert [bench.ask(q) for q in STATE_QUERIES] == before


STATE_QUERIES = (
    ":SENS2:POW:RANG?",
    ":SENS2:POW:WAV?",
    ":SENS2:POW:REF? TOMOD",
    ":SENS2:POW:REF? TOREF",
    ":SENS2:POW:REF:STAT:RAT?",
    ":SENS2:FUNC:PAR:STAB?",
    ":SENS2:FUNC:STAT?",
    ":TRIG2:INP?",
    ":SYST:COMM:GPIB:ADDR?",
    ":SYST:COMM:ETH:IPAD?",
    ":CONF:MEAS:SETT:ACT?",
)


def test_a_function_running_refuses_new_parameters(bench: Bench) -> None:
    bench.ask(":SENS1:FUNC:PAR:LOGG 100,1MS;:SENS1:FUNC:STAT LOGG,STAR")
    assert bench.ask(":SENS1:FUNC:PAR:LOGG 10,1MS") is None
    assert bench.errors() == [-221]  # PG p. 132: stop it first
    assert bench.ask(":SENS1:FUNC:PAR:LOGG?") == "100,+1.00000000E-003"


@settings(max_examples=30, deadline=None)
@given(nm=st.floats(1250, 1650))
def test_any_wavelength_in_range_reads_back_in_metres(chip, nm: float) -> None:
    bench = Bench(chip, lit=False)
    bench.ask(f":SENS4:POW:WAV {nm!r}NM")
    assert float(bench.ask(":SENS4:POW:WAV?")) == pytest.approx(nm * 1e-9, rel=1e-8)


@settings(max_examples=30, deadline=None)
@given(nm=st.one_of(st.floats(0, 1249.99), st.floats(1650.01, 1e5)))
def test_any_wavelength_out_of_range_is_refused(chip, nm: float) -> None:
    bench = Bench(chip, lit=False)
    assert bench.ask(f":SENS4:POW:WAV {nm!r}NM") is None
    assert bench.errors() == [-222]
    assert bench.ask(":SENS4:POW:WAV?") == "+1.55000000E-006"


# ---- readings ------------------------------------------------------------------------------------
def test_readings_in_dbm_watts_relative_and_corrected(bench: Bench) -> None:
    n = bench.brightest()
    truth = bench.world.output_power_mW()[n - 1]
    assert float(bench.ask(f":READ{n}:POW?")) == pytest.approx(10 * np.log10(truth), abs=0.02)
    bench.ask(f":SENS{n}:POW:UNIT W")
    assert float(bench.ask(f":READ{n}:POW?")) == pytest.approx(1e-3 * truth, rel=0.005)
    bench.ask(f":SENS{n}:CORR 3DB")  # the calibration factor adds to the reading (PG p. 121)
    assert float(bench.ask(f":READ{n}:POW?")) == pytest.approx(2e-3 * truth, rel=0.01)
    bench.ask(f":SENS{n}:CORR 0;:SENS{n}:POW:REF TOREF,-30DBM;:SENS{n}:POW:REF:STAT 1")
    relative = float(bench.ask(f":READ{n}:POW?"))  # dB over 1 uW (PG p. 135)
    assert relative == pytest.approx(10 * np.log10(truth) + 30, abs=0.02)
    other = 1 if n != 1 else 2
    bench.ask(f":SENS{n}:POW:REF TOMOD,2DB;:SENS{n}:POW:REF:STAT:RAT {other},1")
    dark = bench.world.output_power_mW()[other - 1]
    expected = 10 * np.log10(truth) - 10 * np.log10(dark) - 2
    assert float(bench.ask(f":READ{n}:POW?")) == pytest.approx(expected, abs=1.0)  # dark: noisy
    bench.ask(f":SENS{n}:POW:REF:DISP;:SENS{n}:POW:REF:STAT:RAT TOREF,1")
    assert abs(float(bench.ask(f":READ{n}:POW?"))) < 0.02  # relative to itself: 0 dB
    assert bench.errors() == []


def test_a_power_over_the_manual_range_reads_not_a_number(bench: Bench) -> None:
    n = bench.brightest()
    level = 10 * np.log10(bench.world.output_power_mW()[n - 1])
    below = 10 * np.floor(level / 10) - 10  # a range the light overflows
    bench.ask(f":SENS{n}:POW:RANG:AUTO 0;:SENS{n}:POW:RANG {below:g}")
    assert float(bench.ask(f":READ{n}:POW?")) == OVER_RANGE
    bench.ask(f":SENS{n}:POW:RANG {below + 20:g}")
    assert float(bench.ask(f":READ{n}:POW?")) == pytest.approx(level, abs=0.02)
    bench.ask(f":SENS{n}:POW:RANG {below:g};:SENS{n}:POW:RANG:AUTO 1")
    assert float(bench.ask(f":READ{n}:POW?")) == pytest.approx(level, abs=0.02)


def test_fetch_returns_the_last_trigger_until_continuous(bench: Bench) -> None:
    n = bench.brightest()
    bench.ask(f":SENS{n}:POW:UNIT W;:INIT{n}:IMM")
    fetched = {bench.ask(f":FETC{n}:POW?") for _ in range(5)}
    assert len(fetched) == 1  # the same value: no new trigger (PG p. 149)
    reads = {bench.ask(f":READ{n}:POW?") for _ in range(5)}
    assert len(reads) == 5  # each READ measures anew (the detector's noise differs)
    bench.ask(f":INIT{n}:CONT 1")
    assert len({bench.ask(f":FETC{n}:POW?") for _ in range(5)}) == 5


def test_all_channels_read_in_watts_whatever_their_unit(bench: Bench) -> None:
    bench.ask(":SENS1:POW:UNIT DBM;:SENS2:POW:UNIT W")
    truth = bench.world.output_power_mW()
    csv = np.array([float(v) for v in bench.ask(":READ:POW:ALL:CSV?").split(",")])
    assert np.allclose(csv, 1e-3 * truth, rtol=0.01, atol=1e-8)  # PG p. 117: always W
    assert np.allclose(watts(bench.ask(":READ:POW:ALL?")), 1e-3 * truth, rtol=0.01, atol=1e-8)
    conf = bench.ask(":FETC:POW:ALL:CONF?")
    assert conf[:4] == b"#232" and np.frombuffer(conf[4:], "<u2").tolist() == [
        v for k in range(1, 9) for v in (k, 1)
    ]


# ---- functions on the world's clock --------------------------------------------------------------
def _heater_change(bench: Bench, after_s: float) -> tuple[float, float]:
    """Advance the clock, write MZI 0's heater; (when its heat began, when it settled)."""
    world = bench.world
    world.clock.advance(after_s)
    old = world.driver.currents()
    assert bench.qontrol.handle("I0=7") == "OK"
    settled = world.settled_at
    return settled - world.driver.settle_s(old, world.driver.currents()), settled


def test_stability_samples_each_period_over_its_averaging_time(bench: Bench) -> None:
    n, world = bench.brightest(), bench.world
    bench.ask(f":SENS{n}:POW:UNIT W;:SENS{n}:FUNC:PAR:STAB 60MS,2MS,0.5MS")
    bench.ask(f":SENS{n}:FUNC:STAT STAB,STAR")
    start = world.clock()
    before = world.output_power_mW()[n - 1]
    _heater_change(bench, 0.020)
    assert bench.ask(f":SENS{n}:FUNC:STAT?") == "LOGGING_STABILITY,PROGRESS"
    assert bench.ask(f":SENS{n}:FUNC:STAT?") == "LOGGING_STABILITY,COMPLETE"  # polling waited
    assert world.clock() == pytest.approx(start + 0.060)
    samples = 1e3 * watts(bench.ask(f":SENS{n}:FUNC:RES?"))
    assert samples.size == 30  # total over period
    ends = start + 0.002 * np.arange(30) + 0.0005  # sample k: [start + k p, start + k p + t)
    expected = world.output_power_mW(ends, averaging_s=0.0005)[:, n - 1]
    assert np.allclose(samples, expected, rtol=1e-3, atol=1e-5)
    after = world.output_power_mW()[n - 1]
    assert abs(after - before) > 1e-3 and samples[0] == pytest.approx(before, rel=0.01)


def test_logging_results_come_in_the_channels_unit(bench: Bench) -> None:
    n = bench.brightest()
    bench.ask(f":SENS{n}:FUNC:PAR:LOGG 20,1MS;:SENS{n}:FUNC:STAT LOGG,STAR")
    bench.ask(f":SENS{n}:FUNC:STAT?;:SENS{n}:FUNC:STAT?")
    dbm = watts(bench.ask(f":SENS{n}:FUNC:RES?"))  # the unit is dBm (PG p. 130, LabExT)
    bench.ask(f":SENS{n}:POW:UNIT W")
    w = watts(bench.ask(f":SENS{n}:FUNC:RES?"))
    assert np.allclose(dbm, 10 * np.log10(1e3 * w), atol=1e-4)
    bench.ask(f":SENS{n}:FUNC:STAT LOGG,STOP")  # the samples stay readable
    assert np.array_equal(watts(bench.ask(f":SENS{n}:FUNC:RES?")), w)
    assert bench.ask(f":SENS{n}:FUNC:STAT?") == "NONE,COMPLETE"


def test_minmax_window_and_continuous(bench: Bench) -> None:
    world, port = bench.world, bench.brightest() - 1
    both = PowerMeterN7744A(world, 2, "MY00000002", "N7747C", (port, port))  # one output twice
    both.handle(":SENS:POW:UNIT:ALL W;:SENS1:POW:ATIM 1MS;:SENS2:POW:ATIM 1MS")
    both.handle(":SENS1:FUNC:PAR:MINM WIND,5;:SENS1:FUNC:STAT MINM,STAR")
    both.handle(":SENS2:FUNC:PAR:MINM CONT,5;:SENS2:FUNC:STAT MINM,STAR")
    before = world.output_power_mW()[port]
    for n in (1, 2):  # the first sample, 2 ms after the start (PG p. 125), is waited for
        low, high, last = 1e3 * watts(both.handle(f":SENS{n}:FUNC:RES?"))
        assert low == pytest.approx(before, rel=0.01) and high == pytest.approx(before, rel=0.01)
    _, settled = _heater_change(bench, 0.010)
    world.clock.advance(settled - world.clock() + 0.012)  # six 2 ms samples of the new light
    after = world.output_power_mW()[port]
    assert abs(after - before) > 1e-3
    low, high, last = 1e3 * watts(both.handle(":SENS2:FUNC:RES?"))  # CONT: every sample
    assert low == pytest.approx(min(before, after), rel=0.03)
    assert high == pytest.approx(max(before, after), rel=0.03)
    assert last == pytest.approx(after, rel=0.03)
    low, high, last = 1e3 * watts(both.handle(":SENS1:FUNC:RES?"))  # WIND: the last five
    assert low == pytest.approx(after, rel=0.03) and high == pytest.approx(after, rel=0.03)
    assert both.handle(":SENS1:FUNC:STAT?") == "MINMAX,PROGRESS"
    assert both.handle("SYST:ERR?") == NO_ERROR


def test_a_triggered_function_starts_at_its_trigger(bench: Bench) -> None:
    n, world = bench.brightest(), bench.world
    bench.ask(f":TRIG{n}:INP CME;:TRIG{n}:OFFS 1;:TRIG{n}:DEL 32000")  # 1 ms delay
    bench.ask(f":SENS{n}:FUNC:PAR:LOGG 10,1MS;:SENS{n}:FUNC:STAT LOGG,STAR")
    assert bench.ask(f":SENS{n}:FUNC:STAT?") == "LOGGING_STABILITY,PROGRESS"
    armed = world.clock()
    assert armed == 5.0  # no end to wait for: the clock stays
    world.clock.advance(0.010)
    bench.ask(":INIT1:IMM")  # the first trigger is the offset's: ignored
    world.clock.advance(0.010)
    bench.ask(":TRIG NODEA")  # a hardware trigger (PG p. 141) starts it
    bench.ask(f":SENS{n}:FUNC:STAT?")
    assert world.clock() == pytest.approx(armed + 0.020 + 0.001 + 0.010)
    assert bench.ask(f":SENS{n}:FUNC:STAT?") == "LOGGING_STABILITY,COMPLETE"


def test_single_measure_triggers_take_one_sample_each(bench: Bench) -> None:
    n, world = bench.brightest(), bench.world
    bench.ask(f":TRIG:CONF DIS;:TRIG{n}:INP SME;:SENS{n}:POW:UNIT W")
    bench.ask(f":SENS{n}:FUNC:PAR:LOGG 3,1MS;:SENS{n}:FUNC:STAT LOGG,STAR")
    bench.ask(":TRIG 1")  # the connectors are disabled: no trigger
    starts = []
    for _ in range(3):
        world.clock.advance(0.1)
        starts.append(world.clock())
        bench.ask(f":INIT{n}:IMM")
    world.clock.advance(0.002)
    samples = 1e3 * watts(bench.ask(f":SENS{n}:FUNC:RES?"))
    expected = world.output_power_mW(np.array(starts) + 0.001, averaging_s=0.001)[:, n - 1]
    assert samples.size == 3 and np.allclose(samples, expected, rtol=1e-3, atol=1e-5)


def test_loops_fill_buffers_a_and_b_in_turn(bench: Bench) -> None:
    n, world = bench.brightest(), bench.world
    bench.ask(f":SENS{n}:FUNC:LOOP 3;:SENS{n}:FUNC:PAR:LOGG 10,1MS;:SENS{n}:FUNC:STAT LOGG,STAR")
    start = world.clock()
    assert bench.ask(f":SENS{n}:FUNC:RES:IND?") == "0"  # polling waits for the loop's end
    assert bench.ask(f":SENS{n}:FUNC:RES:BUFA?").startswith(b"#240")  # loop 0: buffer A
    assert bench.ask(f":SENS{n}:FUNC:RES:BUFB?") is None  # nothing in buffer B yet
    assert bench.errors() == [-221]
    assert bench.ask(f":SENS{n}:FUNC:RES:IND?") == "1"
    a, b = bench.ask(f":SENS{n}:FUNC:RES:BUFA?"), bench.ask(f":SENS{n}:FUNC:RES:BUFB?")
    assert a != b and bench.ask(f":SENS{n}:FUNC:RES?") == b
    assert bench.ask(f":SENS{n}:FUNC:STAT?") == "LOGGING_STABILITY,PROGRESS"
    assert bench.ask(f":SENS{n}:FUNC:STAT?") == "LOGGING_STABILITY,COMPLETE"
    assert world.clock() == pytest.approx(start + 0.030)
    assert bench.ask(f":SENS{n}:FUNC:RES:IND?") == "3"


def test_the_bench_driver_logs_on_a_clock_that_jumps(bench: Bench) -> None:
    meter = N7744A(Loopback(bench.meter))
    port = bench.brightest() - 1
    logged = meter.log_mW(port, points=40, averaging_s=2e-4)
    assert logged.shape == (40,)
    assert np.allclose(logged, bench.world.output_power_mW()[port], rtol=0.01)


# ---- zeroing, stored settings, interface ---------------------------------------------------------
def test_zeroing_fails_on_a_lit_channel(bench: Bench) -> None:
    n = bench.brightest()
    dark = int(np.argmin(bench.world.output_power_mW())) + 1
    bench.ask(f":SENS{n}:CORR:COLL:ZERO;:SENS{dark}:CORR:COLL:ZERO")
    assert bench.ask(f":SENS{n}:CORR:COLL:ZERO?;:SENS{dark}:CORR:COLL:ZERO?") == "1;0"
    assert bench.meter.questionable_condition() == 1 << n  # PG p. 47: slot n's summary bit
    bench.ask(":SENS:CORR:COLL:ZERO:ALL")
    lit = bench.world.output_power_mW() > 1e-4
    digits = sum(1 << (4 * i) for i, on in enumerate(lit) if on)  # a hex digit a channel
    assert bench.ask(":SENS:CORR:COLL:ZERO:ALL?") == str(digits)


def test_stored_settings_save_recall_and_track_changes(bench: Bench) -> None:
    assert bench.ask(":CONF:MEAS:SETT:ACT?;:CONF:MEAS:SETT:NUMB?") == "0;4"
    bench.ask(":SENS1:POW:ATIM 1MS;:CONF:MEAS:SETT:SAV 2")
    assert bench.ask(":CONF:MEAS:SETT:ACT?") == "2"
    bench.ask(":SENS1:POW:ATIM 2MS")
    assert bench.ask(":CONF:MEAS:SETT:ACT?") == "-1"  # changed since (PG p. 78)
    bench.ask(":CONF:MEAS:SETT:CANC")
    assert bench.ask(":SENS1:POW:ATIM?;:CONF:MEAS:SETT:ACT?") == "+1.00000000E-003;2"
    bench.ask(":CONF:MEAS:SETT:PRES")
    assert bench.ask(":SENS1:POW:ATIM?") == "+1.00000000E-004"
    bench.ask(":CONF:MEAS:SETT:REC 2")
    assert bench.ask(":SENS1:POW:ATIM?") == "+1.00000000E-003"
    bench.ask(":CONF:MEAS:SETT:ERAS 2")
    assert bench.ask(":CONF:MEAS:SETT:ACT?") == "0"
    bench.ask(":CONF:MEAS:SETT:SAVE 1;*RST")  # *RST deletes the stored settings (PG p. 41)
    assert bench.ask(":CONF:MEAS:SETT:REC 1") is None and bench.errors() == [-221]


def test_lan_parameters_go_in_use_on_restart_and_survive_a_reset(bench: Bench) -> None:
    eth = ":SYST:COMM:ETH"
    assert bench.ask(f"{eth}:HOST:CURR?") == '"A-N7745C-012345"'
    bench.ask(f'{eth}:IPAD "10.1.2.3";{eth}:DHCP:ENAB OFF;:SYST:COMM:GPIB:ADDR 7')
    assert bench.ask(f"{eth}:IPAD?;{eth}:IPAD:CURR?") == '"10.1.2.3";"169.254.58.10"'
    bench.ask("*RST;:SYST:PRES")  # PG p. 68: the interface is kept
    assert bench.ask(f"{eth}:DHCP:ENAB?;:SYST:COMM:GPIB:ADDR?") == "0;7"
    bench.ask(f"{eth}:REST")
    assert bench.ask(f"{eth}:IPAD:CURR?") == '"10.1.2.3"'
    bench.ask(f'{eth}:IPAD "10.9.9.9";{eth}:CANC')
    assert bench.ask(f"{eth}:IPAD?") == '"10.1.2.3"'
    bench.ask(f'{eth}:SAVE;{eth}:IPAD "10.0.0.1";:SYST:REB')
    assert bench.ask(f"{eth}:IPAD?;{eth}:IPAD:CURR?") == '"10.1.2.3";"10.1.2.3"'
    bench.ask(f"{eth}:RES")
    assert bench.ask(f"{eth}:IPAD:CURR?;{eth}:DHCP:ENAB?") == '"169.254.58.10";1'
    assert bench.errors() == []
