"""(Over 500 lines: one check per client property group, each short; they are counted together.)

Unmodified instrument clients against the served emulated bench: the conformance checks, run
one test each by tests/hil/test_clients.py and counted by benchmarks/bench_hil.py.

Every check drives one served instrument of an :class:`~hil.emulator.bench.EmulatedBench`
(``pswitch serve``'s bench) over real pyvisa-py sockets or its pseudo-terminal, through a client
the project does not change: pymeasure's ``ThorlabsPM100USB`` (PM100D), ``TSL570`` (TSL-570),
``KeysightN7776C`` (the nearest class for the 8164B's laser: the same lightwave command set;
its properties and methods that the 8164B has), Qontrol's own ``qontrol.QXOutput`` (started
without ``n_chs``), and plain pyvisa for transcripts from the programming manuals where
pymeasure has no class (N7744A/N7745A, the IEEE 488.2 common commands, the switch). After each
check the instrument's error queue must be empty (:func:`run`): whatever the client sent, the
emulation understood. The manuals: docs/instruments.md.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyvisa

from hil.emulator.bench import EmulatedBench
from hil.visa import resource_manager

TIMEOUT_MS = 5000
#: Qontrol's library waits this long for a reply line, s (generous: a loaded machine).
QONTROL_TIMEOUT_S = 0.5
_KEYSIGHT_NR3 = re.compile(r"^[+-]\d\.\d{8}E[+-]\d{3}$")
_THORLABS = re.compile(r"^-?\d\.\d{6}E[+-]\d{2}$")


@dataclass(frozen=True)
class Check:
    """One conformance check: its name, the served instrument it talks to (its error queue
    must be empty afterwards), and the check itself."""

    name: str
    instrument: str
    run: Callable[[EmulatedBench], None]


CHECKS: list[Check] = []


def check(instrument: str) -> Callable[[Callable[[EmulatedBench], None]], Callable]:
    def add(fn: Callable[[EmulatedBench], None]) -> Callable[[EmulatedBench], None]:
        CHECKS.append(Check(fn.__name__, instrument, fn))
        return fn

    return add


def run(c: Check, bench: EmulatedBench) -> None:
    """Run ``c`` on ``bench`` from a cleared state; raises AssertionError when it fails or when
    it left an error in its instrument's queue."""
    handler = bench.servers[c.instrument].handler
    errors = getattr(handler, "errors", None)
    if errors is not None:
        errors.clear()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")  # pymeasure: "not known whether ... SCPI" and the like
        c.run(bench)  # what a client prints (QCoDeS: "Connected to ...") is not the caller's
    if errors is not None:
        assert errors.codes() == [], f"{c.name}: the instrument queued {errors.codes()}"


def tally(bench: EmulatedBench, checks: list[Check] | None = None) -> tuple[int, int]:
    """(passed, total) over ``checks`` (default :data:`CHECKS`) on ``bench``."""
    checks = CHECKS if checks is None else checks
    passed = 0
    for c in checks:
        try:
            run(c, bench)
            passed += 1
        except Exception:  # a failed check is counted, not raised
            pass
    return passed, len(checks)


@contextlib.contextmanager
def pymeasure_client(cls: type, bench: EmulatedBench, name: str) -> Iterator:
    """An unmodified pymeasure instrument on the served ``name`` over pyvisa-py, with the
    terminations of the instrument's manual (the TSL-570 replies with CR: pymeasure's class
    sets none, a lab passes them)."""
    read, write = bench.terminations(name)
    inst = cls(
        bench.resources[name],
        visa_library="@py",
        read_termination=read,
        write_termination=write,
        timeout=TIMEOUT_MS,
    )
    try:
        yield inst
        # a round trip: the server has run every line this client wrote (a last *RST
        # included) before the next check, on another connection and server thread, starts
        inst.ask("*OPC?")
    finally:
        inst.adapter.close()


@contextlib.contextmanager
def plain(bench: EmulatedBench, name: str) -> Iterator[pyvisa.resources.MessageBasedResource]:
    """A plain pyvisa-py resource on the served ``name`` (its manual's terminations)."""
    read, write = bench.terminations(name)
    inst = resource_manager().open_resource(
        bench.resources[name], read_termination=read, write_termination=write, timeout=TIMEOUT_MS
    )
    try:
        yield inst
        inst.query("*OPC?")  # every line written has run (see pymeasure_client)
    finally:
        inst.close()


def _scpi_mixin(inst: object, idn_model: str) -> None:
    """pymeasure's SCPI properties and methods on any SCPI instrument."""
    assert idn_model in inst.id
    assert inst.complete == "1"
    inst.clear()
    assert int(inst.status) & 0b00100100 == 0  # no error, no event
    assert inst.options
    assert [int(float(x)) for x in inst.next_error[:1]] == [0]
    inst.reset()
    assert inst.check_errors() == []


# ---- Thorlabs PM100D: pymeasure ThorlabsPM100USB -------------------------------------------------
@check("pm100d")
def pm100d_constructs_and_reads_its_sensor(bench: EmulatedBench) -> None:
    from pymeasure.instruments.thorlabs import ThorlabsPM100USB

    with pymeasure_client(ThorlabsPM100USB, bench, "pm100d") as pm:
        assert pm.sensor_name == "S122C" and pm.is_power_sensor and pm.wavelength_settable
        assert not pm.is_energy_sensor


@check("pm100d")
def pm100d_wavelength_and_its_range(bench: EmulatedBench) -> None:
    from pymeasure.instruments.thorlabs import ThorlabsPM100USB

    with pymeasure_client(ThorlabsPM100USB, bench, "pm100d") as pm:
        assert (pm.wavelength_min, pm.wavelength_max) == (800.0, 1700.0)
        pm.wavelength = 1310
        assert pm.wavelength == 1310.0
        pm.wavelength = 2500  # truncated to the sensor's range by the client
        assert pm.wavelength == 1700.0


@check("pm100d")
def pm100d_power_in_watts(bench: EmulatedBench) -> None:
    from pymeasure.instruments.thorlabs import ThorlabsPM100USB

    world = bench.world
    world.set_laser("TSL-570", on=True)
    try:
        with pymeasure_client(ThorlabsPM100USB, bench, "pm100d") as pm:
            truth_W = 1e-3 * float(world.output_power_mW()[0])
            assert math.isclose(pm.power, truth_W, rel_tol=0.05, abs_tol=1e-8)
            world.set_laser("TSL-570", on=False)
            assert all(pm.power > 0 for _ in range(20))  # dark: noise, never negative
    finally:
        world.set_laser("TSL-570", on=False)


@check("pm100d")
def pm100d_scpi_common(bench: EmulatedBench) -> None:
    from pymeasure.instruments.thorlabs import ThorlabsPM100USB

    with pymeasure_client(ThorlabsPM100USB, bench, "pm100d") as pm:
        _scpi_mixin(pm, "PM100D")


@check("pm100d")
def pm100d_transcript(bench: EmulatedBench) -> None:
    """Thorlabs PM100D manual: SENSe optional, power unit, MEAS?, averaging, version."""
    with plain(bench, "pm100d") as pm:
        assert _THORLABS.match(pm.query("CORR:WAV?"))
        pm.write("SENS:POW:DC:UNIT DBM")
        assert pm.query("SENS:POW:DC:UNIT?") == "DBM"
        reading = pm.query("MEAS?")
        assert _THORLABS.match(reading) and float(reading) < 0  # dark, in dBm
        pm.write("POW:UNIT W")
        assert float(pm.query("MEAS?")) > 0
        pm.write("AVER:COUN 10")
        assert pm.query("SENS:AVER:COUN?") == "10"
        assert pm.query("SYST:VERS?") == "1999.0"
        pm.write("*RST")


# ---- Santec TSL-570: pymeasure TSL570 ----------------------------------------------------------
@check("tsl570")
def tsl570_command_set_and_units(bench: EmulatedBench) -> None:
    from pymeasure.instruments.santec import TSL570

    with pymeasure_client(TSL570, bench, "tsl570") as tsl:
        assert tsl.command_set == "Legacy"
        tsl.wavelength_setpoint = 1550.5
        assert tsl.wavelength_setpoint == 1550.5
        tsl.command_set = "SCPI"
        try:
            assert math.isclose(tsl.wavelength_setpoint, 1550.5e-9, rel_tol=1e-6)
            assert math.isclose(tsl.frequency_setpoint, 299792458 / 1550.5e-9, rel_tol=1e-6)
        finally:
            tsl.command_set = "Legacy"


@check("tsl570")
def tsl570_power(bench: EmulatedBench) -> None:
    from pymeasure.instruments.santec import TSL570

    with pymeasure_client(TSL570, bench, "tsl570") as tsl:
        tsl.power_unit = "dBm"
        tsl.power_setpoint = 3
        assert tsl.power_setpoint == 3.0 and tsl.power_unit == "dBm"
        tsl.output_enabled = True
        assert tsl.output_enabled and tsl.power == 3.0
        tsl.power_unit = "mW"
        assert math.isclose(tsl.power, 10**0.3, abs_tol=1e-4)
        tsl.output_enabled = False
        tsl.reset()


@check("tsl570")
def tsl570_frequency(bench: EmulatedBench) -> None:
    from pymeasure.instruments.santec import TSL570

    with pymeasure_client(TSL570, bench, "tsl570") as tsl:
        tsl.frequency_setpoint = 193.1
        assert math.isclose(tsl.wavelength_setpoint, 299792.458 / 193.1, abs_tol=1e-4)
        assert math.isclose(tsl.frequency_setpoint, 193.1, abs_tol=1e-4)
        tsl.reset()


@check("tsl570")
def tsl570_sweep_settings(bench: EmulatedBench) -> None:
    from pymeasure.instruments.santec import TSL570
    from pymeasure.instruments.santec.tsl570 import SweepMode, SweepPattern, SweepRouting

    with pymeasure_client(TSL570, bench, "tsl570") as tsl:
        tsl.wavelength_start, tsl.wavelength_stop, tsl.wavelength_step = 1520, 1580, 0.5
        assert (tsl.wavelength_start, tsl.wavelength_stop, tsl.wavelength_step) == (
            1520.0,
            1580.0,
            0.5,
        )
        tsl.frequency_start = 197.0
        assert math.isclose(tsl.wavelength_start, 299792.458 / 197.0, abs_tol=1e-4)
        assert math.isclose(tsl.frequency_start, 197.0, abs_tol=1e-4)
        tsl.frequency_stop = 190.0
        assert math.isclose(tsl.frequency_stop, 190.0, abs_tol=1e-4)
        tsl.frequency_step = 0.1
        assert math.isclose(tsl.frequency_step, 0.1, rel_tol=0.05)
        tsl.sweep_mode = SweepMode.STEPPED_TWO_WAY
        assert tsl.sweep_mode == SweepMode.STEPPED_TWO_WAY
        tsl.sweep_pattern = SweepPattern.CONTINUOUS
        assert tsl.sweep_routing == SweepRouting.TWO_WAY
        tsl.sweep_routing = SweepRouting.ONE_WAY
        assert tsl.sweep_mode == SweepMode.CONTINUOUS_ONE_WAY
        tsl.sweep_speed = 100
        tsl.sweep_dwell, tsl.sweep_delay, tsl.sweep_cycles = 0.5, 1.5, 3
        assert (tsl.sweep_speed, tsl.sweep_dwell, tsl.sweep_delay, tsl.sweep_cycles) == (
            100,
            0.5,
            1.5,
            3,
        )
        assert (tsl.wavelength_min, tsl.wavelength_max) == (1480.0, 1640.0)
        assert tsl.frequency_min < tsl.frequency_max
        tsl.reset()


@check("tsl570")
def tsl570_sweep_runs(bench: EmulatedBench) -> None:
    from pymeasure.instruments.santec import TSL570
    from pymeasure.instruments.santec.tsl570 import SweepStatus

    with pymeasure_client(TSL570, bench, "tsl570") as tsl:
        tsl.wavelength_start, tsl.wavelength_stop, tsl.sweep_speed = 1500, 1600, 1  # 100 s
        assert tsl.sweep_status == SweepStatus.STOPPED and tsl.sweep_count == 0
        tsl.start_sweep()
        assert tsl.sweep_status == SweepStatus.RUNNING
        tsl.stop_sweep()
        assert tsl.sweep_status == SweepStatus.STOPPED
        tsl.sweep_cycles = 2
        tsl.start_repeat()
        assert tsl.sweep_status == SweepStatus.RUNNING
        tsl.stop_sweep()
        tsl.reset()


@check("tsl570")
def tsl570_scpi_common(bench: EmulatedBench) -> None:
    from pymeasure.instruments.santec import TSL570

    with pymeasure_client(TSL570, bench, "tsl570") as tsl:
        _scpi_mixin(tsl, "TSL-570")


@check("tsl570")
def tsl570_transcript(bench: EmulatedBench) -> None:
    """Santec TSL-570 manual: attenuator and wavelength display unit."""
    with plain(bench, "tsl570") as tsl:
        tsl.write(":POW:ATT 5.5")
        assert float(tsl.query(":POW:ATT?")) == 5.5
        assert tsl.query(":WAV:UNIT?") == "0"
        tsl.write(":WAV 1550")  # *RST keeps the wavelength (the manual): set it here
        assert tsl.query(":WAV?") == "1550.0000"  # Legacy: nm in fixed point
        tsl.write("*RST")


# ---- Keysight 8164B: pymeasure KeysightN7776C (the same lightwave laser commands) ---------------
@check("laser")
def keysight_laser_output_and_power(bench: EmulatedBench) -> None:
    from pymeasure.instruments.keysight import KeysightN7776C

    with pymeasure_client(KeysightN7776C, bench, "laser") as laser:
        laser.output_power_mW = 2.0
        assert math.isclose(laser.output_power_mW, 2.0, rel_tol=1e-6)
        laser.output_power_dBm = -3.0
        assert math.isclose(laser.output_power_dBm, -3.0, abs_tol=1e-6)
        laser.output_enabled = True
        assert laser.output_enabled and bench.world.laser("8164B").on
        laser.output_enabled = False
        laser.reset()


@check("laser")
def keysight_laser_lock(bench: EmulatedBench) -> None:
    from pymeasure.instruments.keysight import KeysightN7776C

    with pymeasure_client(KeysightN7776C, bench, "laser") as laser:
        laser.output_enabled = True
        laser.locked = True
        assert laser.locked and not laser.output_enabled  # locking switches the laser off
        laser.locked = False
        assert not laser.locked
        laser.reset()


@check("laser")
def keysight_laser_wavelength_and_triggers(bench: EmulatedBench) -> None:
    from pymeasure.instruments.keysight import KeysightN7776C

    with pymeasure_client(KeysightN7776C, bench, "laser") as laser:
        laser.wavelength = 1552.5
        assert math.isclose(laser.wavelength, 1552.5, abs_tol=1e-6)
        laser.trigger_out, laser.trigger_in = "SWF", "NEXT"
        assert (laser.trigger_out, laser.trigger_in) == ("SWF", "NEXT")
        laser.reset()


@check("laser")
def keysight_laser_sweep(bench: EmulatedBench) -> None:
    from pymeasure.instruments.keysight import KeysightN7776C

    with pymeasure_client(KeysightN7776C, bench, "laser") as laser:
        laser.sweep_wl_start, laser.sweep_wl_stop, laser.sweep_step = 1540, 1541, 0.25
        assert math.isclose(laser.sweep_wl_start, 1540, abs_tol=1e-6)
        assert math.isclose(laser.sweep_wl_stop, 1541, abs_tol=1e-6)
        assert math.isclose(laser.sweep_step, 0.25, abs_tol=1e-6)
        laser.sweep_speed = 50
        assert math.isclose(laser.sweep_speed, 50, abs_tol=1e-6)
        laser.sweep_mode = "CONT"
        assert laser.sweep_mode == "CONT"
        laser.sweep_twoway = True
        assert laser.sweep_twoway is True
        laser.wl_logging = True
        assert laser.wl_logging is True and laser.valid_sweep_params()
        assert laser.sweep_points == 5
        laser.sweep_state = 1
        while laser.sweep_state == 1:  # 1 nm at 50 nm/s: 20 ms
            pass
        assert np.allclose(
            laser.get_wl_data(), 1e-9 * np.array([1540, 1540.25, 1540.5, 1540.75, 1541])
        )
        laser.next_step()
        laser.previous_step()
        laser.sweep_wl_stop = 1530  # inconsistent: the client reads the manual's code
        assert not laser.valid_sweep_params()
        laser.reset()


@check("laser")
def keysight_laser_scpi_common(bench: EmulatedBench) -> None:
    from pymeasure.instruments.keysight import KeysightN7776C

    with pymeasure_client(KeysightN7776C, bench, "laser") as laser:
        _scpi_mixin(laser, "8164B")


@check("laser")
def mainframe_8164b_transcript(bench: EmulatedBench) -> None:
    """Keysight 8163A/B, 8164A/B & 8166A/B Mainframes Programming Guide."""
    with plain(bench, "laser") as mf:
        low, high = mf.query(":SOUR0:WAV? MIN"), mf.query(":SOUR0:WAV? MAX")
        assert _KEYSIGHT_NR3.match(low) and float(low) < float(high)
        assert float(high) == 1640e-9
        assert "81600B" in mf.query(":SLOT0:IDN?") and "81595B" in mf.query(":SLOT1:IDN?")
        assert mf.query(":LOCK?") == "0"
        assert _KEYSIGHT_NR3.match(mf.query(":SOUR0:WAV?"))


# ---- Keysight N7744A/N7745A: transcripts (no pymeasure class) ------------------------------------
@check("power_meter")
def n774x_transcript(bench: EmulatedBench) -> None:
    """Keysight N7744A/N7745A Optical Multiport Power Meter Programming Guide."""
    n = bench.world.n_ports
    with plain(bench, "power_meter") as m:
        for cmd in (":READ:POW:ALL:CSV?", ":FETC:POW:ALL:CSV?"):
            values = m.query(cmd).split(",")
            assert len(values) == n and all(_KEYSIGHT_NR3.match(v) for v in values)
            assert all(float(v) > -100 for v in values)  # dark dBm: the noise, no clip
        assert m.query(":SENS1:POW:RANG:AUTO?") == "1"
        assert m.query(":INIT1:CONT?") == "0"
        assert m.query(":TRIG1:INP?") == "IGN"
        assert "N774" in m.query(":SLOT1:IDN?")
        m.write(":SENS2:POW:UNIT W")
        watts = [float(m.query(":READ2:POW?")) for _ in range(20)]
        assert min(watts) > 0  # no negative watts
        m.write("*RST")


# ---- IEEE 488.2 on every SCPI instrument ---------------------------------------------------------
def _ieee488(name: str) -> Callable[[EmulatedBench], None]:
    def run_it(bench: EmulatedBench) -> None:
        """IEEE 488.2: the mandatory common commands and the status model."""
        with plain(bench, name) as inst:
            inst.write("*CLS")
            assert inst.query("*ESR?") == "0"
            inst.write("*ESE 60;*SRE 32")
            assert (inst.query("*ESE?"), inst.query("*SRE?")) == ("60", "32")
            assert inst.query("*STB?") == "0"
            inst.write(":NO:SUCH:HEADER")  # a command error: CME, EAV, ESB, MSS
            assert int(inst.query("*STB?")) == 4 | 32 | 64
            assert int(inst.query("*IDN?;*STB?").split(";")[-1]) & 16  # MAV: a reply waits
            assert int(inst.query("*ESR?")) & 32
            assert int(inst.query("SYST:ERR?").split(",")[0]) == -113
            inst.write("*OPC")
            assert int(inst.query("*ESR?")) & 1
            assert inst.query("*OPC?") == "1" and inst.query("*TST?") == "0"
            inst.write("*WAI")
            assert inst.query("*OPT?")
            inst.write_raw(b":\xff\xfe?\n")  # non-ASCII: its error reads back as ASCII
            code, text = inst.query("SYST:ERR?").split(",", 1)
            # the TSL-570's manual lists no -101: a bad character is its -102, syntax error
            assert code == ("-102" if name == "tsl570" else "-101") and text.isascii()
            inst.write("*ESE 0;*SRE 0;*CLS")

    run_it.__name__ = f"ieee488_{name}"
    return run_it


for _name in ("power_meter", "laser", "tsl570", "pm100d"):
    check(_name)(_ieee488(_name))


# ---- the switch ----------------------------------------------------------------------------------
@check("switch")
def switch_opc_waits_for_the_optics(bench: EmulatedBench) -> None:
    """``ROUT:MATC ...;*OPC?``: once answered, the heaters written are in effect on the chip."""
    world = bench.world
    with plain(bench, "switch") as sw:
        for matching in ("0,1,2,3", "0,2,1,3", "0,3,1,2"):
            assert sw.query(f"ROUT:MATC {matching};*OPC?") == "1"
            assert np.array_equal(world.applied_currents(), world.driver.currents())
        sw.write("*RST")
        assert sw.query("*OPC?") == "1"


# ---- Qontrol: the qontrol library, started without n_chs -----------------------------------------
def _qontrol(bench: EmulatedBench):
    import qontrol

    port = bench.resources["heater_driver"].removeprefix("ASRL").removesuffix("::INSTR")
    with contextlib.redirect_stdout(io.StringIO()):  # the library prints its warnings
        return qontrol.QXOutput(serial_port_name=port, response_timeout=QONTROL_TIMEOUT_S)


def _chain(bench: EmulatedBench) -> int:
    return -(-bench.world.driver.n_channels // 8) * 8


@check("heater_driver")
def qontrol_starts_without_n_chs(bench: EmulatedBench) -> None:
    q = _qontrol(bench)
    try:
        assert q.device_id == "Q8iv-0001"
        assert q.n_chs == _chain(bench) and len(q.chain) == _chain(bench) // 8
        assert (q.v_full, q.i_full) == (12.0, 24.0)
        assert q.firmware and q.lifetime
    finally:
        q.close()


@check("heater_driver")
def qontrol_channel_vectors(bench: EmulatedBench) -> None:
    world, n = bench.world, bench.world.driver.n_channels
    q = _qontrol(bench)
    try:
        q.i[2] = 3.5
        assert world.driver.currents()[2] == 3.5
        currents = q.i[:]
        assert len(currents) == q.n_chs and currents[2] == 3.5
        volts = q.v[:]
        assert math.isclose(
            volts[2], world.chip.heaters.voltage_V(world.driver.currents())[2], abs_tol=1e-4
        )
        assert q.get_all_values("I")[:n] == list(np.round(world.driver.currents(), 4))
        assert len(q.get_all_values("V")) == q.n_chs
        q.set_all_values("I", [1.0] * q.n_chs)  # IVEC, a module at a time
        assert np.all(world.driver.currents() == 1.0)
        q.set_all_values("I", 0)
        assert np.all(world.driver.currents() == 0.0)
        assert [e for e in q.log if e["type"] == "err"] == []
    finally:
        q.close()


@check("switch")
def switch_sees_a_write_behind_its_back(bench: EmulatedBench) -> None:
    """A Qontrol write by another client (``I0=0``) shows in the switch's status."""
    world = bench.world
    with plain(bench, "switch") as sw:
        sw.write("ROUT:MATC 0,1,2,3")
        assert int(sw.query("STAT:QUES?")) & 32 == 0 and sw.query("*TST?") == "0"
        q = _qontrol(bench)
        try:
            q.i[0] = 0.0 if world.driver.currents()[0] else 1.0
        finally:
            q.close()
        assert int(sw.query("STAT:QUES?")) & 32
        assert sw.query("*TST?") == "1"
        code, text = sw.query("SYST:ERR?").split(",", 1)
        assert code == "-330" and "channel 0" in text
        sw.write("*RST")
        assert int(sw.query("STAT:QUES?")) & 32 == 0


# the checks of other labs' drivers, one module per instrument, registered on import
from tests.hil import (  # noqa: E402, F401
    clients_hislip,
    clients_keysight,
    clients_n774x,
    clients_pm100d,
    clients_qontrol,
    clients_tsl570,
)
