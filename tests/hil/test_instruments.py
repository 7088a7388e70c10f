"""Emulated instruments (in-process, through ``handle``) and their drivers (through Loopback):
command sets, error queues, Qontrol replies, and the light coupling the instruments."""

import math
import re
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.controller import Controller, Rings
from firmware.driver import DriverError
from hil.emulator.clock import ManualClock
from hil.emulator.instruments import (
    DBM_FLOOR,
    LaserTSL570,
    Mainframe8164B,
    PowerMeterN7744A,
    PowerMeterPM100D,
    QontrolQ8iv,
    ScpiInstrument,
    float32_block,
)
from hil.emulator.world import FACET_LOSS_DB, BenchWorld
from hil.errors import InstrumentError, InstrumentReportedError, InstrumentTimeoutError
from hil.instruments import (
    N7744A,
    PM100D,
    QONTROL_ERRORS,
    TSL570,
    Laser,
    Laser8164B,
    Loopback,
    OpticalSwitch,
    Qontrol,
)
from hil.instruments.base import parse_float32_block
from photonics.chips.switch import FeedForwardFabric
from photonics.errors import LimitError, PortError, SettingsError, ShapeError

SEED = 3
NO_ERROR = '0,"No error"'
T_FACET = 10 ** (-FACET_LOSS_DB / 10)


@pytest.fixture(scope="module")
def chip():
    return BenchWorld(seed=SEED).chip


class Bench:
    """A world on a manual clock with every emulated instrument on it."""

    def __init__(self, chip, clock=None) -> None:
        self.world = BenchWorld(chip, seed=SEED, clock=clock or ManualClock(5.0))
        self.meter = PowerMeterN7744A(self.world, channels=8)
        self.mainframe = Mainframe8164B(self.world)
        self.tsl = LaserTSL570(self.world)
        self.pm100d = PowerMeterPM100D(self.world, port=2)
        self.qontrol = QontrolQ8iv(self.world)

    def settle(self) -> None:
        self.world.clock.now_s = max(self.world.settled_at, self.world.clock())


@pytest.fixture
def bench(chip) -> Bench:
    return Bench(chip)


def errors(instrument: ScpiInstrument) -> list[int]:
    """Drain the queue through the wire: the codes, oldest first."""
    codes = []
    while (reply := instrument.handle("SYST:ERR?")) != NO_ERROR:
        codes.append(int(reply.split(",")[0]))
    return codes


def scpi_instruments(bench: Bench) -> list[ScpiInstrument]:
    return [bench.meter, bench.mainframe, bench.tsl, bench.pm100d]


# ---- IEEE 488.2 and the error queue, on every SCPI instrument ------------------------------------
@pytest.mark.parametrize("index", range(4))
def test_common_commands_and_the_error_queue(bench: Bench, index: int) -> None:
    inst = scpi_instruments(bench)[index]
    model = ["N7745A", "8164B", "TSL-570", "PM100D"][index]
    assert inst.handle("*IDN?").split(",")[1] == model
    assert inst.handle("*opc?") == "1"
    assert inst.handle("*TST?;*OPC?") == "0;1"
    assert inst.handle("*WAI;*OPC") is None
    assert inst.handle(":NO:SUCH:THING 1") is None
    assert inst.handle("BAD$HEADER 1") is None
    assert inst.handle("*IDN") is None  # query only
    assert inst.handle("SYST:ERR:COUN?") == "3"
    assert errors(inst) == [-113, -102, -113]
    inst.handle(":BAD")
    inst.handle("*CLS")
    assert inst.handle("SYSTem:ERRor:NEXT?") == NO_ERROR


# ---- N7744A/N7745A -------------------------------------------------------------------------------
def test_power_meter_settings_in_every_form(bench: Bench) -> None:
    m = bench.meter
    m.handle(":SENSe2:CHANnel1:POWer:WAVelength 1.31UM")
    assert m.handle(":sens2:chan1:pow:wav?") == "+1.31000000E-006"
    m.handle(":SENS2:POW:WAV 1550E-9")  # Keysight: a bare wavelength is in metres
    assert float(m.handle(":SENS2:POW:WAV?")) == pytest.approx(1.55e-6)
    m.handle("sens3:pow:wav max;:SENS3:POW:WAV?")
    assert float(m.handle("SENS3:POW:WAV?")) == pytest.approx(1.65e-6)
    m.handle(":SENS1:POW:ATIM 100US;:SENS1:POW:UNIT W")
    assert m.handle(":SENS1:POW:ATIM?;:SENS1:POW:UNIT?;:SENS2:POW:UNIT?") == "+1.00000000E-004;1;0"
    assert errors(m) == []


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (":SENS2:POW:WAV 1550", -222),  # 1550 m
        (":SENS2:POW:WAV 2000NM", -222),
        (":SENS2:POW:WAV 1550KG", -131),
        (":SENS2:POW:WAV", -109),
        (":SENS2:POW:WAV 1550NM,3", -108),
        (":SENS9:POW:WAV 1550NM", -113),  # no slot 9
        (":SENS2:CHAN2:POW:WAV 1550NM", -113),
        (":SENS2:POW:UNIT MILLI", -141),
        (":SENS2:POW:ATIM 20", -222),
        (":SENS2:FUNC:STAT LOGG,PAUSE", -141),  # STABility is a function too (PG p. 132)
        (":SENS2:FUNC:RES?", -221),  # nothing logged
        (":SENS2:POW:WAV 1310NM;:SENS2:POW:WAV 9", -222),  # the first one runs
        (":SENS2:POW:WAV 1310NM;:SENS2:FUNC:RES?;:SENS2:POW:WAV 1600NM", -221),  # not the last
    ],
)
def test_power_meter_refuses_bad_commands_and_changes_nothing(bench, line, code) -> None:
    m = bench.meter
    m.handle(":SENS2:POW:WAV 1500NM")
    assert m.handle(line) is None
    assert errors(m) == [code]
    expected = 1.31e-6 if "1310NM" in line else 1.5e-6
    assert float(m.handle(":SENS2:POW:WAV?")) == pytest.approx(expected)
    assert m.handle(":SENS2:POW:UNIT?;:SENS2:POW:ATIM?") == "0;+1.00000000E-004"


def test_power_meter_reads_the_chip_outputs_in_dbm_and_watts(bench: Bench) -> None:
    bench.mainframe.handle(":SOUR0:POW:STAT 1")
    truth = bench.world.output_power_mW()
    m = bench.meter
    line = ";".join(f":READ{n}:POW?" for n in range(1, 9))
    dbm = np.array([float(x) for x in m.handle(line).split(";")])
    lit = truth > 1e-4  # where the noise (1e-6 mW) is below 0.05 dB
    assert lit.sum() >= 3
    assert np.allclose(dbm[lit], 10 * np.log10(truth[lit]), atol=0.05)
    m.handle(":SENS4:POW:UNIT 1")
    assert float(m.handle(":FETCh4:CHANnel1:SCALar:POWer:DC?")) == pytest.approx(
        1e-3 * truth[3], rel=0.05
    )


def test_power_meter_logging_tracks_a_heater_change(bench: Bench) -> None:
    m, world = bench.meter, bench.world
    bench.mainframe.handle(":SOUR0:POW:STAT 1")
    port = int(np.argmax(world.output_power_mW()))
    n = port + 1
    m.handle(f":SENS{n}:FUNC:PAR:LOGG 50,1MS;:SENS{n}:POW:UNIT W")  # results in the unit
    assert m.handle(f":SENS{n}:FUNC:PAR:LOGG?") == "50,+1.00000000E-003"
    assert m.handle(f":SENS{n}:FUNC:STAT?") == "NONE,COMPLETE"
    m.handle(f":SENS{n}:FUNC:STAT LOGG,STAR")  # no poll: polling would wait for the end
    before = world.output_power_mW()[port]
    world.clock.advance(0.020)
    bench.qontrol.handle(f"I{port}=0")  # the output phase shifter: nothing moves
    old = world.driver.currents()
    assert bench.qontrol.handle("I0=7") == "OK"  # MZI 0: input 0's light moves
    switched = world.settled_at
    # when channel 0's write ended and its heat began to move the light
    moving = switched - world.driver.settle_s(old, world.driver.currents())
    assert m.handle(f":SENS{n}:FUNC:RES?") is None  # not complete yet
    assert errors(m) == [-221]
    world.clock.advance(0.040)
    assert m.handle(f":SENS{n}:FUNC:STAT?") == "LOGGING_STABILITY,COMPLETE"
    block = m.handle(f":SENS{n}:FUNC:RES?")
    assert isinstance(block, bytes)
    watts = parse_float32_block("test", block)
    assert watts.size == 50
    ends = 5.0 + 0.001 * np.arange(1, 51)
    after = world.output_power_mW()[port]
    assert abs(after - before) > 1e-3
    assert np.allclose(1e3 * watts[ends <= moving], before, atol=1e-5)
    # the sample the transient falls in averages the old light and the new
    across = 1e3 * watts[(ends > moving) & (ends - 0.001 < switched)]
    assert across.size == 1 and min(before, after) < across[0] < max(before, after)
    # then the new state, drifting slowly as the chip warms (self-heating, 30 ms)
    assert np.allclose(1e3 * watts[ends - 0.001 >= switched], after, rtol=0.03)
    assert m.handle(f":SENS{n}:FUNC:RES?") == block  # the same log, read again


def test_binary_blocks_round_trip() -> None:
    values = np.array([1.5, -2e-9, 3e4])
    block = float32_block(values)
    assert block.startswith(b"#212")
    assert np.allclose(parse_float32_block("x", block), values, rtol=1e-7)
    with pytest.raises(InstrumentError):
        parse_float32_block("x", block[:-1])
    with pytest.raises(InstrumentError):
        parse_float32_block("x", b"1.5,2.5")


# ---- 8164B: laser and switch module --------------------------------------------------------------
def test_8164b_laser_commands(bench: Bench) -> None:
    mf, world = bench.mainframe, bench.world
    mf.handle(":SOURce0:WAVelength:CW 1552.5NM;:sour0:pow -3DBM;:SOUR0:POW:STAT ON")
    laser = world.laser("8164B")
    assert laser.on and laser.wavelength_nm == pytest.approx(1552.5)
    assert laser.power_mW == pytest.approx(10**-0.3)
    assert float(mf.handle(":SOUR0:WAV?")) == pytest.approx(1.5525e-6)
    assert float(mf.handle(":SOUR0:POW?")) == pytest.approx(-3.0)
    mf.handle(":SOUR0:POW 2")  # bare: dBm
    assert world.laser("8164B").power_mW == pytest.approx(10**0.2)
    mf.handle(":SOUR0:POW:UNIT W;:SOUR0:POW 0.002")  # bare: W
    assert world.laser("8164B").power_mW == pytest.approx(2.0)
    assert mf.handle(":SOUR0:POW:UNIT?;:SOUR0:POW?;:SOUR0:POW:STAT?") == "1;+2.00000000E-003;1"
    mf.handle(":SOUR0:POW 500UW;:SOUR:POW:LEV:IMM:AMPL?")  # unnumbered SOUR is slot 0
    assert world.laser("8164B").power_mW == pytest.approx(0.5)
    assert errors(mf) == []
    for bad, code in [(":SOUR0:POW 20DBM", -222), (":SOUR0:WAV 1700NM", -222)]:
        assert mf.handle(bad) is None
        assert errors(mf) == [code]
    assert mf.handle(":SOUR1:POW:STAT 0") is None  # no laser in slot 1
    assert errors(mf) == [-113]
    assert world.laser("8164B").on and world.laser("8164B").power_mW == pytest.approx(0.5)
    mf.handle("*RST")
    assert not world.laser("8164B").on and mf.handle(":SOUR0:POW?") == "+0.00000000E+000"


def test_8164b_switch_module(bench: Bench) -> None:
    mf, world = bench.mainframe, bench.world
    assert mf.handle(":ROUT1:CHAN1?") == "A,1"
    assert mf.handle(":ROUT1:CONF?") == "A,A;1,8"
    mf.handle(":route1:channel1 a,6")
    assert world.selected_input == 5
    assert mf.handle(":ROUT1?") == "A,6"
    for bad, code in [(":ROUT1:CHAN1 A,9", -222), (":ROUT1:CHAN1 B,2", -141), (":ROUT2 A,2", -113)]:
        assert mf.handle(bad) is None
        assert errors(mf) == [code]
    assert world.selected_input == 5
    mf.handle("*RST")
    assert world.selected_input == 0


# ---- TSL-570 and PM100D --------------------------------------------------------------------------
def test_tsl570_commands(bench: Bench) -> None:
    tsl, world = bench.tsl, bench.world
    tsl.handle(":WAV 1551.25;:POW 3")
    assert tsl.handle(":WAV?;:POW?;:POW:STAT?;:POW:ACT?") == f"1551.2500;3.0000;0;{DBM_FLOOR:.4f}"
    tsl.handle(":POW:UNIT 1;:POW:STAT 1")
    assert float(tsl.handle(":POW:ACT?")) == pytest.approx(10**0.3, abs=1e-4)  # 4 decimals
    tsl.handle(":POWer:LEVel 1.5")  # bare: mW now
    assert world.laser("TSL-570").power_mW == pytest.approx(1.5)
    tsl.handle(":POW -10DBM;:WAV 1.56UM")
    assert world.laser("TSL-570").power_mW == pytest.approx(0.1)
    assert world.source().wavelength_nm == pytest.approx(1560.0)
    assert errors(tsl) == []
    assert tsl.handle(":POW 30") is None  # 30 mW: above +13 dBm
    assert tsl.handle(":WAV 1700") is None
    assert errors(tsl) == [-222, -222]
    assert world.laser("TSL-570").power_mW == pytest.approx(0.1)


def test_pm100d_commands(bench: Bench) -> None:
    pm, world = bench.pm100d, bench.world
    bench.tsl.handle(":POW:STAT 1")
    truth_W = 1e-3 * world.output_power_mW()[2]
    assert float(pm.handle("MEAS:POW?")) == pytest.approx(truth_W, rel=0.05)
    assert float(pm.handle("measure:scalar:power?")) == pytest.approx(truth_W, rel=0.05)
    assert float(pm.handle("CONF:POW;READ?")) == pytest.approx(truth_W, rel=0.05)
    assert pm.handle("FETC?") is None
    assert errors(pm) == [-221]
    first = pm.handle("INIT;FETC?")
    assert pm.handle("FETC?") == first
    pm.handle("SENS:CORR:WAV 1310")
    assert pm.handle("sense:correction:wavelength?") == "1.310000E+03"
    assert pm.handle("SENS:CORR:WAV 1900") is None
    assert errors(pm) == [-222]
    assert pm.handle("SENS:CORR:WAV?") == "1.310000E+03"


# ---- Qontrol -------------------------------------------------------------------------------------
def test_qontrol_replies(bench: Bench) -> None:
    q, world = bench.qontrol, bench.world
    assert q.handle("ID?") == "Q8iv-0001"
    assert q.handle("NCHAN?") == str(world.chip.n_heaters)
    assert q.handle("vfull?") == "12.0 V" and q.handle("IFULL?") == "24.0 mA"
    assert q.handle("I3=4.5") == "OK"
    assert world.driver.currents()[3] == 4.5
    assert float(q.handle("i3?")) == 4.5
    volts = world.chip.heaters.voltage_V(world.driver.currents())[3]
    assert float(q.handle("V3?")) == pytest.approx(volts, abs=1e-4)
    assert q.handle("V5=1.2") == "OK"  # voltage mode: the current that gives 1.2 V
    assert float(q.handle("V5?")) == pytest.approx(1.2, abs=1e-4)
    assert float(q.handle("I5?")) == pytest.approx(1e3 * 1.2 / 500, rel=0.01)
    currents = [float(x) for x in q.handle("IALL?").split("\n")]  # a line per channel
    chain = -(-world.chip.n_heaters // 8) * 8  # whole 8-channel modules
    assert len(currents) == chain and currents[3] == 4.5
    assert float(q.handle("VALL?").split("\n")[5]) == pytest.approx(1.2, abs=1e-4)
    assert q.handle("VMAX7=3") == "OK" and q.handle("VMAX7?") == "3.0000"
    assert q.handle("IMAX7?") == "24.0000"


@pytest.mark.parametrize(
    ("line", "reply"),
    [
        ("I3=11", "E02:03"),  # above the chip's 10 mA
        ("IMAX3=2", "OK"),  # then 2.5 mA is over this channel's IMAX
        ("V3=20", "E01:03"),  # above VMAX (12 V)
        ("I99=1", "E12:99"),
        ("I=1", "E12:00"),
        ("I3=abc", "E11:03"),
        ("I3=-1", "E11:03"),
        ("I3=nan", "E11:03"),
        ("VMAX3=13", "E11:03"),
        ("I3?5", "E11:03"),
        ("NCHAN=4", "E13:00"),
        ("ID3?", "E10:00"),
        ("X3=1", "E10:00"),
        ("hello", "E10:00"),
    ],
)
def test_qontrol_error_replies_change_no_current(bench: Bench, line: str, reply: str) -> None:
    q = bench.qontrol
    before = bench.world.driver.currents()
    assert q.handle(line) == reply
    assert np.array_equal(bench.world.driver.currents(), before)
    if line == "IMAX3=2":
        assert q.handle("I3=2.5") == "E02:03"
        assert q.handle("I3=1.5") == "OK"


def test_qontrol_refuses_what_the_chip_or_the_compliance_cannot_take(chip) -> None:
    bench = Bench(chip)
    q = bench.qontrol
    assert q.handle("VMAX4=1") == "OK"
    assert q.handle("I4=3") == "E01:04"  # 3 mA needs ~1.5 V
    h = chip.heaters
    per_channel = float(h.power_mW(np.full(h.count, 10.0))[0])
    n_full = int(h.power_budget_mW // per_channel)  # this many channels at 10 mA fit
    for ch in range(n_full):
        assert q.handle(f"I{ch + 10}=10") == "OK"
    before = bench.world.driver.currents()
    assert q.handle(f"I{n_full + 10}=10") == f"E03:{n_full + 10:02d}"  # budget exceeded
    assert np.array_equal(bench.world.driver.currents(), before)
    assert QONTROL_ERRORS[3] == "Power error"


channel_text = st.one_of(
    st.integers(0, 100).map(str), st.just(""), st.text("0123456789x", max_size=3)
)
value_text = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text("0123456789.-+eE", max_size=6),
    st.sampled_from(["", "abc", "1e400", "5 ", " 2"]),
)
qontrol_lines = st.one_of(
    st.text(max_size=12),
    st.builds(
        "{}{}{}{}".format,
        st.sampled_from(["V", "I", "VMAX", "IMAX", "VALL", "NCHAN", "v", "imax", "Q"]),
        channel_text,
        st.sampled_from(["=", "?", "", "=="]),
        value_text,
    ),
)


@given(qontrol_lines)
def test_any_refused_qontrol_line_leaves_every_current_unchanged(chip, line: str) -> None:
    world = BenchWorld(chip, seed=SEED, clock=ManualClock())
    q = QontrolQ8iv(world)
    q.handle("I2=3")
    before = world.driver.currents()
    reply = q.handle(line)
    after = world.driver.currents()
    if re.fullmatch(r"E\d\d:\d\d+", reply):
        assert np.array_equal(after, before)
        assert int(reply[1:3]) in QONTROL_ERRORS
    else:  # accepted: at most the one channel named changed, to what was asked
        changed = np.flatnonzero(after != before)
        assert changed.size <= 1
        if changed.size:
            assert line.upper().startswith(("I", "V"))


# ---- the light, across instruments ---------------------------------------------------------------
def test_meters_read_the_noise_floor_in_the_dark(bench: Bench) -> None:
    m = bench.meter
    m.handle(";".join(f":SENS{n}:POW:UNIT W" for n in range(1, 9)))
    line = ";".join(f":READ{n}:POW?" for n in range(1, 9))
    dark = np.array([[float(x) for x in m.handle(line).split(";")] for _ in range(100)])
    floor_W = 1e-3 * bench.world.chip.spec.noise_floor_mW
    assert dark.min() > 0  # no negative watts: a detector reads the noise's magnitude
    assert np.sqrt(np.mean(dark**2)) == pytest.approx(floor_W, rel=0.2)
    bench.mainframe.handle(":SOUR0:POW:STAT 1")
    lit = np.array([float(x) for x in m.handle(line).split(";")])
    assert lit.max() > 1000 * floor_W


def test_a_qontrol_write_reaches_the_meters_after_the_modeled_time(bench: Bench) -> None:
    bench.mainframe.handle(":SOUR0:POW:STAT 1")
    read = ";".join(f":READ{n}:POW?" for n in range(1, 9))
    bench.meter.handle(";".join(f":SENS{n}:POW:UNIT W" for n in range(1, 9)))

    def watts() -> np.ndarray:
        return np.array([float(x) for x in bench.meter.handle(read).split(";")])

    before = watts()
    assert bench.qontrol.handle("I0=7") == "OK"
    assert np.allclose(watts(), before, atol=1e-8)  # the hardware has not acted yet
    bench.settle()
    after = watts()
    assert np.abs(after - before).max() > 1e-6


def test_the_switch_module_lights_another_input(bench: Bench) -> None:
    bench.mainframe.handle(":SOUR0:POW:STAT 1;:ROUT1:CHAN1 A,1")
    first = bench.world.output_power_mW()
    bench.mainframe.handle(":ROUT1:CHAN1 A,7")
    field = np.zeros(8)
    field[6] = np.sqrt(T_FACET)
    expected = chip_power(bench, field)
    seen = bench.world.output_power_mW()
    assert np.allclose(seen, expected, atol=6e-6)
    assert np.abs(seen - first).max() > 1e-3


def chip_power(bench: Bench, field: np.ndarray) -> np.ndarray:
    w = bench.world
    return w.chip.detect(w.applied_currents(), field, wavelength_nm=w.wavelength_nm) * T_FACET


def test_tuning_the_laser_moves_a_ring_drop_port(bench: Bench) -> None:
    mf, pm = bench.mainframe, bench.pm100d  # the PM100D sits on output 2
    mf.handle(":SOUR0:POW:STAT 1")
    mf.handle(f":ROUT1:CHAN1 A,{int(np.argmax(chip_power_column(bench, 2))) + 1}")
    readings = []
    for wl in np.linspace(1549.0, 1551.0, 201):
        mf.handle(f":SOUR0:WAV {wl:.3f}NM")
        readings.append(float(pm.handle("MEAS:POW?")))
    readings = np.array(readings)
    assert readings.max() > 20 * max(readings.min(), 1e-9)
    assert errors(mf) == [] and errors(pm) == []


def chip_power_column(bench: Bench, port: int) -> np.ndarray:
    """Power reaching ``port`` from each input at the present heaters (no rings), relative."""
    w = bench.world
    M = w.chip.transfer(w.applied_currents())
    return np.abs(M[port]) ** 2


# ---- drivers over Loopback -----------------------------------------------------------------------
def test_n7744a_driver(bench: Bench) -> None:
    meter = N7744A(Loopback(bench.meter, "LOOP::N7745A"))
    assert meter.n_channels == 8
    # the driver keeps the channels linear
    assert [c.settings.unit for c in bench.meter.state] == [1] * 8
    meter.set_wavelength_nm(1310.0, channel=2)
    meter.set_wavelength_nm(1540.0)
    assert bench.meter.state[2].settings.wavelength_nm == pytest.approx(1540.0)
    meter.set_averaging_s(2e-4)
    assert [c.settings.averaging_s for c in bench.meter.state] == [2e-4] * 8
    bench.mainframe.handle(":SOUR0:POW:STAT 1")
    truth = bench.world.output_power_mW()
    assert np.allclose(meter.read_all_mW(), truth, atol=6e-6)
    assert meter.read_mW(7) == pytest.approx(truth[7], abs=6e-6)
    with pytest.raises(SettingsError, match=re.escape("channel 8 outside 0..7")):
        meter.read_mW(8)
    with pytest.raises(SettingsError, match=re.escape("1700 nm outside 1250..1650")):
        meter.set_wavelength_nm(1700.0)
    four = N7744A(Loopback(PowerMeterN7744A(bench.world, 4)))
    assert four.n_channels == 4
    with pytest.raises(InstrumentReportedError) as caught:  # the instrument has no slots 5-8
        N7744A(Loopback(PowerMeterN7744A(bench.world, 4)), channels=8)
    assert caught.value.code == -113


def test_n7744a_driver_logs_on_the_wall_clock(chip) -> None:
    bench = Bench(chip, clock=time.monotonic)
    bench.mainframe.handle(":SOUR0:POW:STAT 1")
    meter = N7744A(Loopback(bench.meter))
    port = int(np.argmax(bench.world.output_power_mW()))
    logged = meter.log_mW(port, points=40, averaging_s=2e-4)
    assert logged.shape == (40,)
    assert np.allclose(logged, bench.world.output_power_mW()[port], atol=6e-6)
    with pytest.raises(SettingsError):
        meter.log_mW(port, points=0, averaging_s=1e-3)


def test_laser_drivers_share_one_protocol(bench: Bench) -> None:
    lasers: list[tuple[Laser, str]] = [
        (Laser8164B(Loopback(bench.mainframe, "LOOP::8164B")), "8164B"),
        (TSL570(Loopback(bench.tsl, "LOOP::TSL")), "TSL-570"),
    ]
    for laser, name in lasers:
        laser.set_wavelength_nm(1553.5)
        laser.set_power_mW(2.5)
        laser.on()
        state = bench.world.laser(name)
        assert state.on and state.wavelength_nm == pytest.approx(1553.5)
        assert state.power_mW == pytest.approx(2.5)
        assert laser.wavelength_nm() == pytest.approx(1553.5)
        assert laser.power_mW() == pytest.approx(2.5)
        assert laser.is_on()
        laser.off()
        assert not laser.is_on() and not bench.world.laser(name).on
        with pytest.raises(SettingsError, match="wavelength 1300 nm outside"):
            laser.set_wavelength_nm(1300.0)
        with pytest.raises(SettingsError, match="power"):
            laser.set_power_mW(100.0)
    tsl = lasers[1][0]
    bench.tsl.handle(":POW:UNIT 1")  # the driver follows the unit the laser is in
    tsl.set_power_mW(4.0)
    assert bench.world.laser("TSL-570").power_mW == pytest.approx(4.0)
    assert tsl.power_mW() == pytest.approx(4.0)
    tsl.on()
    assert tsl.actual_power_mW() == pytest.approx(4.0)


def test_optical_switch_and_pm100d_drivers(bench: Bench) -> None:
    switch = OpticalSwitch(Loopback(bench.mainframe))
    assert switch.n_ports == 8 and switch.selected() == 0
    switch.select(4)
    assert switch.selected() == 4 and bench.world.selected_input == 4
    with pytest.raises(SettingsError, match=re.escape("port 8 outside 0..7")):
        switch.select(8)
    with pytest.raises(InstrumentReportedError) as caught:
        OpticalSwitch(Loopback(bench.mainframe), slot=2)  # no module there
    assert caught.value.code == -113
    pm = PM100D(Loopback(bench.pm100d, "LOOP::PM100D"))
    pm.set_wavelength_nm(1555.0)
    assert bench.pm100d.wavelength_nm == pytest.approx(1555.0)
    bench.mainframe.handle(":SOUR0:POW:STAT 1")
    assert pm.read_mW() == pytest.approx(bench.world.output_power_mW()[2], abs=6e-6)
    with pytest.raises(SettingsError):
        pm.set_wavelength_nm(500.0)
    assert pm.errors() == []


def test_loopback_reports_silence_and_stray_replies(bench: Bench) -> None:
    conn = Loopback(bench.meter, "LOOP::meter")
    with pytest.raises(InstrumentTimeoutError):
        conn.query(":SENS9:POW?")
    with pytest.raises(InstrumentError, match="got a reply"):
        conn.write("*IDN?")
    with pytest.raises(InstrumentError, match="binary block"):
        conn.query_binary_floats("*IDN?")


def test_qontrol_driver(bench: Bench) -> None:
    q = Qontrol(Loopback(bench.qontrol, "LOOP::qontrol"), max_current_mA=10.0)
    world = bench.world
    assert q.idn() == "Q8iv-0001" and q.n_channels == world.chip.n_heaters
    assert bench.qontrol.imax.tolist() == [10.0] * q.n_channels  # the limit is the hardware's
    q.set_current(4, 3.25)
    assert world.driver.currents()[4] == 3.25 and q.current(4) == 3.25
    assert q.currents()[4] == 3.25
    volts = q.voltages()
    assert volts[4] == pytest.approx(
        world.chip.heaters.voltage_V(world.driver.currents())[4], abs=1e-4
    )
    assert q.power_mW(q.currents()) == pytest.approx(3.25 * volts[4], rel=1e-3)  # V/I: R
    with pytest.raises(LimitError, match=re.escape("channel 4: 12 mA outside 0..10 mA")):
        q.set_current(4, 12.0)
    with pytest.raises(SettingsError, match="channel 99"):
        q.set_current(99, 1.0)
    q.set_max_voltage(6, 1.0)
    with pytest.raises(InstrumentReportedError) as caught:
        q.set_current(6, 5.0)  # needs ~2.5 V: the instrument refuses
    assert caught.value.code == 1
    assert world.driver.currents()[6] == 0.0 and q.currents()[6] == 0.0
    limit, budget = q.limits()
    assert limit.tolist() == [10.0] * q.n_channels and budget == pytest.approx(
        12.0 * 10.0 * q.n_channels
    )
    assert math.isnan(q.temperature_C())


def test_qontrol_as_chip_driver_checks_everything_before_writing(chip) -> None:
    bench = Bench(chip, clock=time.monotonic)
    q = Qontrol(Loopback(bench.qontrol), max_current_mA=10.0, power_budget_mW=50.0)
    world = bench.world
    with pytest.raises(ShapeError):
        q.write([0, 1], [1.0])
    with pytest.raises(PortError):
        q.write([0, q.n_channels], [1.0, 1.0])
    with pytest.raises(LimitError, match="budget"):
        q.write([0, 1, 2], [6.0, 6.0, 6.0])  # 3 x 18 mW at 500 ohm
    with pytest.raises(LimitError):
        q.write([0, 1], [1.0, float("nan")])
    assert not world.driver.currents().any() and not q.currents().any()
    seconds = q.write([0, 1], [2.0, 3.0])
    assert seconds >= 2 * q.channel_write_s and q.elapsed_s >= seconds
    assert world.driver.currents()[[0, 1]].tolist() == [2.0, 3.0]
    assert world.settled_at <= world.clock()  # it returned once the hardware had acted
    for read in (lambda: q.detect(np.ones(8)), q.monitor):
        with pytest.raises(DriverError, match="no detectors"):
            read()
    bench.qontrol.imax[5] = 1.0  # the instrument's limit drops behind the driver's back
    with pytest.raises(DriverError, match=r"failed on 1 of 2: .*channel 5"):
        q.write([4, 5], [2.0, 2.0])
    assert q.currents()[[4, 5]].tolist() == [2.0, 0.0]  # what was applied, for the roll-back


class BenchDetectors:
    """The chip's outputs as the bench sees them: the laser into the strongest input of the
    field (one input at a time: a single laser cannot make a superposition), every output
    on the power meter, rescaled to the field's power on the chip."""

    def __init__(self, laser: Laser8164B, switch: OpticalSwitch, meter: N7744A) -> None:
        self.laser, self.switch, self.meter = laser, switch, meter
        self.n_detectors = meter.n_channels

    def detect(self, input_field, outputs=None) -> np.ndarray:
        field = np.abs(np.asarray(input_field, dtype=complex)) ** 2
        k = int(np.argmax(field))
        self.switch.select(k)
        scale = field[k] / (self.laser.power_mW() * T_FACET**2)
        return self.meter.read_all_mW(outputs) * scale


def test_the_firmware_runs_on_the_host_over_a_qontrol(chip) -> None:
    bench = Bench(chip, clock=time.monotonic)
    world = bench.world
    laser = Laser8164B(Loopback(bench.mainframe, "LOOP::8164B"))
    laser.set_power_mW(1.0)
    laser.on()
    detectors = BenchDetectors(
        laser, OpticalSwitch(Loopback(bench.mainframe)), N7744A(Loopback(bench.meter))
    )
    q = Qontrol(
        Loopback(bench.qontrol, "LOOP::qontrol"),
        detectors=detectors,
        max_current_mA=chip.spec.max_current_mA,
        power_budget_mW=chip.heaters.power_budget_mW,
    )
    rings = Rings.of_chip(chip)
    firmware = Controller(q, FeedForwardFabric(chip.mesh), None, rings, chip.factory_calibration())
    assert firmware.handle("ROUT:MATC 0,5,1,4;RING:LOCK 5;SYST:ERR?") == NO_ERROR
    assert np.array_equal(world.driver.currents(), q.currents())
    assert firmware.handle("RING:STAT? 5").startswith("1,")
    detectors.switch.select(0)
    seen = detectors.meter.read_all_mW()
    assert int(np.argmax(seen)) == 5
    assert seen[5] > 100 * np.delete(seen, 5).max()


def test_qontrol_measurements_of_one_light_path_write_only_what_differs(chip) -> None:
    bench = Bench(chip, clock=time.monotonic)
    q = Qontrol(Loopback(bench.qontrol), max_current_mA=10.0)
    q.write([0], [1.0])
    sent: list[str] = []
    each = q.conn.query_each
    q.conn.query_each = lambda cmds: sent.extend(cmds) or each(cmds)
    rows = np.zeros((2, q.n_channels))
    rows[:, [3, 4, 5]] = 2.0  # a light path of three heaters...
    rows[1, 6] = 1.0  # ...and the heater under test
    q.voltage(rows)
    q.voltage(rows)  # the same path again: its heaters are already there
    assert sent == ["I0=0.0", "I3=2.0", "I4=2.0", "I5=2.0", "I6=1.0", "I6=0.0", "I6=1.0"]
    assert q.currents().tolist() == [1.0] + [0.0] * (q.n_channels - 1)  # as commanded
    q.release()  # what the firmware does at the end of each command
    assert np.array_equal(bench.world.driver.currents(), q.currents())
