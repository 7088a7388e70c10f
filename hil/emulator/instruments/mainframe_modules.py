"""The Keysight 8164B mainframe's command table beyond its laser's power, wavelength and sweeps
and its switch's route (those stay in :mod:`hil.emulator.instruments.lasers`): the mainframe's
own commands (SLOT, SYSTem, DISPlay, TRIGger), the tunable laser's other settings, and the
81636B power sensor module (:class:`PowerSensor`), as the "8163A/B, 8164A/B & 8166A/B
Mainframes Programming Guide" (Keysight) defines them; :mod:`hil.emulator.manuals.mainframe_8164b`
lists the guide's commands with their pages.

A module of its own beside ``lasers.py``, and over 500 lines, because the table is long (well
over 100 commands, each an entry of a few lines):
``lasers.py`` keeps the mainframe's state and the bench it acts on, this module the commands a
client can send and what each keeps. :func:`commands` gives the entries, :func:`reset` their
``*RST`` state, :func:`rewrite_token` the units of the guide's Table 2 the grammar engine lacks.

What is modelled on the bench: the sensor's readings (``READ?``, ``FETCh?``, ``INIT``) and its
logging, stability and MinMax functions read the chip output the sensor sits on, on the world's
clock; its relative mode (``:POW:REF:STAT``) shows the reading against the reference;
``:WAV:FREQ`` and ``:WAV:REF:DISP`` set the laser's wavelength relative to a reference;
``:WAV:SWE:EXPT?`` and ``:FLAG?`` read the sweep's timing. Everything else is kept and read back
(stored only): modulation, output path, display, date and time, GPIB address, trigger settings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments.scpi import (
    UNIT_CODES,
    Entry,
    dbm,
    float32_block,
    in_unit,
    unit_param,
    wavelength_param,
)
from hil.instruments.lasers import KEYSIGHT_LASER_POWER_MW, KEYSIGHT_LASER_WAVELENGTH_NM
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM

if TYPE_CHECKING:
    from hil.emulator.instruments.lasers import Mainframe8164B

#: Speed of light, m/s.
C_M_S = 299_792_458.0
#: The 81636B's wavelength range, nm, and averaging times, s (its data sheet).
SENSOR_WAVELENGTH_NM = (1250.0, 1640.0)
SENSOR_AVERAGING_S = (1e-4, 10.0)
#: Most points of a logging function and of a MinMax window.
MAX_FUNCTION_POINTS = 100_000
#: Power ranges a sensor accepts, dBm (the guide: -110..+30, in steps of 10).
RANGE_DBM = (-110.0, 30.0)
#: The ``:SLOT:OPT?`` reply of a module without options (the guide's example).
NO_OPTIONS = "NO CONNECTOR OPTION, NO INSTRUMENT OPTIONS"
#: ``:TRIG:CONF`` names by code (the guide, TRIGger subsystem).
TRIGGER_CONFIGURATIONS = ("DISabled", "DEFault", "PASSthrough", "LOOPback")
#: Trigger responses a module of each kind takes (laser: sweeps; sensor: measurements).
LASER_TRIGGER_IN = ("IGNore", "NEXTstep", "SWStart")
LASER_TRIGGER_OUT = ("DISabled", "STFinished", "SWFinished", "SWSTarted")
SENSOR_TRIGGER_IN = ("IGNore", "SMEasure", "CMEasure", "MMEasure")
SENSOR_TRIGGER_OUT = ("DISabled", "AVGover", "MEASure")

#: ``:POW:REF:STAT:RAT``: a slot (or TOREF, 255: an absolute reference) and a channel.
RATIO_PARAMS = (
    Param("slot", "name", choices=("TOREF", "0", "1", "2", "3", "4", "255")),
    Param("channel", "int", 0, 2),
)
DATE_PARAMS = (
    Param("year", "int", 1990, 2099),
    Param("month", "int", 1, 12),
    Param("day", "int", 1, 31),
)
TIME_PARAMS = (
    Param("hour", "int", 0, 23),
    Param("minute", "int", 0, 59),
    Param("second", "int", 0, 59),
)

_NUM = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_PICO = re.compile(rf"^({_NUM})\s*P(M|W)$", re.IGNORECASE)
_HERTZ = re.compile(rf"^({_NUM})\s*(T|G|M|K|)HZ$", re.IGNORECASE)
_DBM = re.compile(rf"^({_NUM})\s*(M?)DBM$", re.IGNORECASE)
_HZ_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}  # SCPI: MHZ is mega


def rewrite_token(token: str, param: Param) -> str:
    """An argument in units of the guide's Table 2 (Units and allowed Mnemonics) that the
    grammar engine lacks, rewritten: pico (``PM``, ``PW``) as nano, hertz with its prefixes
    (``MHZ`` is mega) for a parameter in Hz (named ``*_hz``), ``DBM``/``MDBM`` on a parameter in
    dBm (named ``*_dbm``)."""
    m = _PICO.match(token)
    if m:
        return f"{float(m[1]) * 1e-3!r}N{m[2].upper()}"
    m = _HERTZ.match(token)
    if m and param.name.endswith("_hz"):
        return repr(float(m[1]) * _HZ_PREFIX[m[2].upper()])
    m = _DBM.match(token)
    if m and param.name.endswith("_dbm"):
        return repr(float(m[1]) * (1e-3 if m[2] else 1.0))
    return token


def short(choices: tuple[str, ...], value: str) -> str:
    """The short form of ``value`` (a choice's long form in upper case) as a query replies it."""
    for choice in choices:
        if choice.upper() == value:
            return "".join(c for c in choice if c.isupper() or c.isdigit())
    return value


def name(param: str, choices: tuple[str, ...]) -> Param:
    return Param(param, "name", choices=choices)


# ---- the 81636B power sensor -----------------------------------------------------------------
@dataclass
class PowerSensor:
    """An 81636B power sensor's settings and its data-acquisition function (the guide's SENSe
    subsystem): it reads chip output ``output``. Times in s, wavelengths in nm, the reference in
    dBm, the range in dBm. ``started_s`` is when the function started on the world's clock."""

    output: int
    wavelength_nm: float = REFERENCE_WAVELENGTH_NM
    unit: int = 0  # 0 dBm, 1 W
    averaging_s: float = 0.1
    range_auto: bool = True
    range_dbm: float = 0.0
    calibration_db: float = 0.0
    reference_dbm: float = 0.0
    reference_module_db: float = 0.0
    relative: bool = False
    ratio_to: tuple[int, int] = (255, 0)  # 255: TOREF, an absolute reference
    continuous: bool = True
    last_mW: float | None = None
    zeroed: int = 0  # :CORR:COLL:ZERO? 0: the last zeroing succeeded
    function: str = "NONE"  # NONE, LOGGING, STABILITY, MINMAX
    started_s: float | None = None
    log_points: int = 100
    log_averaging_s: float = 1e-4
    minmax_mode: str = "CONTINUOUS"
    minmax_points: int = 1
    stability: tuple[float, float, float] = (10.0, 1.0, 0.1)  # total, period, averaging
    result: np.ndarray | None = None

    def duration_s(self) -> float:
        """How long the function runs (MinMax: until stopped)."""
        if self.function == "LOGGING":
            return self.log_points * self.log_averaging_s
        if self.function == "STABILITY":
            return self.stability[0]
        return math.inf

    def running(self, now_s: float) -> bool:
        return self.started_s is not None and now_s < self.started_s + self.duration_s()


def _sensor(mf: Mainframe8164B, slot: int) -> PowerSensor:
    if slot != mf.sensor_slot or mf.sensor is None:
        raise ScpiError(-113, f"no power sensor in slot {slot}")
    return mf.sensor


def _reading(mf: Mainframe8164B, s: PowerSensor, mW: float) -> float:
    """A reading as the sensor replies it: relative to the reference in dB when relative mode
    is on (the guide, :POW:REF:STAT), else in its unit (dBm or W)."""
    if s.relative:
        return dbm(mW) - s.reference_dbm
    return in_unit(mW, s.unit, 1e3)


def _measure(mf: Mainframe8164B, s: PowerSensor) -> float:
    """Take a reading now, averaged over the sensor's averaging time, mW."""
    mW = mf.world.output_power_mW(averaging_s=s.averaging_s)
    s.last_mW = float(mW[s.output])
    return s.last_mW


def _fetch(mf: Mainframe8164B, slot: int) -> float:
    """``:FETCh?``: the last reading; a sensor measuring continuously (``:INIT:CONT 1``, the
    *RST state) has one now."""
    s = _sensor(mf, slot)
    if s.continuous or s.last_mW is None:
        _measure(mf, s)
    return _reading(mf, s, s.last_mW)


def _samples(mf: Mainframe8164B, s: PowerSensor) -> np.ndarray:
    """The function's samples, W: logging sample k averages ``[start + k t, start + (k+1) t)``;
    stability sample k averages the ``averaging`` after ``start + k period``; MinMax samples
    every averaging time up to now (its last ``points`` in WINDow and REFResh mode)."""
    start = s.started_s
    assert start is not None
    if s.function == "LOGGING":
        ends = start + s.log_averaging_s * np.arange(1, s.log_points + 1)
        averaging = s.log_averaging_s
    elif s.function == "STABILITY":
        total, period, averaging = s.stability
        n = max(1, int(total / period + 1e-9))
        ends = start + period * np.arange(n) + averaging
    else:
        averaging = s.averaging_s
        n = int((mf.world.clock() - start) / averaging + 1e-9)
        n = max(1, min(n, MAX_FUNCTION_POINTS))
        if s.minmax_mode != "CONTINUOUS":
            n = min(n, s.minmax_points)
        ends = mf.world.clock() - averaging * np.arange(n)[::-1]
    seen = mf.world.output_power_mW(ends, averaging_s=averaging)
    return 1e-3 * seen[:, s.output]


def _function_state(mf: Mainframe8164B, slot: int) -> str:
    """``:FUNC:STAT?``: the function and whether it runs; a client polling a run is waiting for
    it, so the world's time goes to its end."""
    s = _sensor(mf, slot)
    if s.started_s is None:
        return "NONE,COMPLETE"
    label = "MINMAX" if s.function == "MINMAX" else "LOGGING_STABILITY"
    running = s.running(mf.world.clock())
    if running and s.function != "MINMAX":
        mf.world.wait_until(s.started_s + s.duration_s())
    return f"{label},{'PROGRESS' if running else 'COMPLETE'}"


def _function(mf: Mainframe8164B, slot: int, function: str, action: str) -> None:
    """``:FUNC:STAT <function>,STAR|STOP``: start a function now, or stop it (a stopped MinMax
    keeps what it saw until then)."""
    s = _sensor(mf, slot)
    if action == "STOP":
        running_minmax = s.function == "MINMAX" and s.started_s is not None
        s.result = _minmax(mf, s) if running_minmax else None
        s.started_s = None
        return
    s.function, s.started_s, s.result = function, mf.world.clock(), None


def _minmax(mf: Mainframe8164B, s: PowerSensor) -> np.ndarray:
    seen = _samples(mf, s)
    return np.array([seen.min(), seen.max(), seen[-1]])


def _result(mf: Mainframe8164B, slot: int) -> np.ndarray:
    """The function's result, W: logging and stability their samples, MinMax its minimum,
    maximum and latest sample."""
    s = _sensor(mf, slot)
    if s.result is not None:
        return s.result
    if s.started_s is None:
        raise ScpiError(-221, "no function result: start one with :FUNC:STAT <function>,STAR")
    if s.function == "MINMAX":
        return _minmax(mf, s)
    if s.running(mf.world.clock()):
        raise ScpiError(-221, "the function is still in progress")
    s.result = _samples(mf, s)
    return s.result


def _block(mf: Mainframe8164B, slot: int, offset: int, points: int) -> bytes:
    data = _result(mf, slot)
    if offset + points > len(data):
        raise ScpiError(-222, f"block {offset}+{points} beyond the {len(data)} results")
    return float32_block(data[offset : offset + points])


def _sensor_setter(mf: Mainframe8164B, field_name: str) -> Callable[..., None]:
    return lambda slot, value: setattr(_sensor(mf, slot), field_name, value)


def _sensor_getter(mf: Mainframe8164B, field_name: str) -> Callable[[int], object]:
    return lambda slot: getattr(_sensor(mf, slot), field_name)


def _set_range(mf: Mainframe8164B, slot: int, value_dbm: float) -> None:
    s = _sensor(mf, slot)
    s.range_dbm, s.range_auto = 10.0 * round(value_dbm / 10.0), False


def _set_reference(mf: Mainframe8164B, slot: int, which: str, value_dbm: float) -> None:
    s = _sensor(mf, slot)
    if which == "TOREF":
        s.reference_dbm = value_dbm
    else:
        s.reference_module_db = value_dbm


def _reference_display(mf: Mainframe8164B, slot: int) -> None:
    """``:POW:REF:DISP``: the power now becomes the reference (the guide)."""
    s = _sensor(mf, slot)
    s.reference_dbm = dbm(_measure(mf, s))


def _set_ratio(mf: Mainframe8164B, slot: int, to: str, channel: int) -> None:
    s = _sensor(mf, slot)
    if to.upper() in ("TOREF", "255"):
        s.ratio_to = (255, 0)
        return
    try:
        target = int(to)
    except ValueError:
        raise ScpiError(-104, f"expected a slot number or TOREF, got {to!r}") from None
    _sensor(mf, target)  # only a sensor can be the reference
    s.ratio_to = (target, channel)


def sensor_commands(mf: Mainframe8164B) -> list[Entry]:
    """The power sensor's commands (the guide, 4 Measurement Operations & Settings: the SENSe
    subsystem with FETCh, READ and INITiate)."""
    sens = "SENSe[:CHANnel]"
    time_s = Param("time", "number", *SENSOR_AVERAGING_S, "s", default=0.1)
    span_s = Param("time", "number", 1e-4, 1e6, "s")
    which = name("function", ("LOGGing", "STABility", "MINMax"))
    get, put = (lambda f: _sensor_getter(mf, f)), (lambda f: _sensor_setter(mf, f))
    limit = Param("limit", "name", choices=("MINimum", "MAXimum", "DEFault"), optional=True)
    low, high = SENSOR_WAVELENGTH_NM
    return [
        Entry("FETCh[:CHANnel][:SCALar]:POWer[:DC]", query=lambda n: _fetch(mf, n)),
        Entry(
            "READ[:CHANnel][:SCALar]:POWer[:DC]",
            query=lambda n: _reading(mf, _sensor(mf, n), _measure(mf, _sensor(mf, n))),
        ),
        Entry("INITiate[:CHANnel][:IMMediate]", set=lambda n: _measure(mf, _sensor(mf, n))),
        Entry(
            "INITiate[:CHANnel]:CONTinuous",
            (Param("on", "bool"),),
            set=put("continuous"),
            query=get("continuous"),
        ),
        Entry(
            f"{sens}:CORRection:COLLect:ZERO",
            set=lambda n: setattr(_sensor(mf, n), "zeroed", 0),
            query=get("zeroed"),
        ),
        Entry(
            f"{sens}:CORRection[:LOSS][:INPut][:MAGNitude]",
            (Param("calibration", "number", -200.0, 200.0, "dB"),),
            set=put("calibration_db"),
            query=lambda n: float(_sensor(mf, n).calibration_db),
        ),
        Entry(
            f"{sens}:FUNCtion:PARameter:LOGGing",
            (Param("points", "int", 1, MAX_FUNCTION_POINTS), time_s),
            set=lambda n, p, t: (
                setattr(_sensor(mf, n), "log_points", p),
                setattr(_sensor(mf, n), "log_averaging_s", t),
            ),
            query=lambda n: [_sensor(mf, n).log_points, _sensor(mf, n).log_averaging_s],
        ),
        Entry(
            f"{sens}:FUNCtion:PARameter:MINMax",
            (
                name("mode", ("CONTinuous", "WINDow", "REFResh")),
                Param("points", "int", 1, MAX_FUNCTION_POINTS),
            ),
            set=lambda n, m, p: (
                setattr(_sensor(mf, n), "minmax_mode", m),
                setattr(_sensor(mf, n), "minmax_points", p),
            ),
            query=lambda n: [
                short(("CONTinuous", "WINDow", "REFResh"), _sensor(mf, n).minmax_mode),
                _sensor(mf, n).minmax_points,
            ],
        ),
        Entry(
            f"{sens}:FUNCtion:PARameter:STABility",
            (span_s, span_s, time_s),
            set=_set_stability(mf),
            query=lambda n: list(_sensor(mf, n).stability),
        ),
        Entry(f"{sens}:FUNCtion:RESult", query=lambda n: float32_block(_result(mf, n))),
        Entry(
            f"{sens}:FUNCtion:RESult:BLOCk",
            query=lambda n, offset, points: _block(mf, n, offset, points),
            query_params=(
                Param("offset", "int", 0, MAX_FUNCTION_POINTS),
                Param("points", "int", 1, MAX_FUNCTION_POINTS),
            ),
        ),
        Entry(
            f"{sens}:FUNCtion:STATe",
            (which, name("action", ("STARt", "STOP"))),
            set=lambda n, f, a: _function(mf, n, f, a),
            query=lambda n: _function_state(mf, n),
        ),
        Entry(f"{sens}:POWer:ATIMe", (time_s,), set=put("averaging_s"), query=get("averaging_s")),
        Entry(
            f"{sens}:POWer:RANGe:AUTO",
            (Param("auto", "bool"),),
            set=put("range_auto"),
            query=get("range_auto"),
        ),
        Entry(
            f"{sens}:POWer:RANGe[:UPPer]",
            (Param("range_dbm", "number", *RANGE_DBM),),
            set=lambda n, v: _set_range(mf, n, v),
            query=lambda n: float(_sensor(mf, n).range_dbm),
        ),
        Entry(
            f"{sens}:POWer:REFerence",
            (name("which", ("TOMODule", "TOREF")), Param("value_dbm", "number", -200.0, 200.0)),
            set=lambda n, w, v: _set_reference(mf, n, w, v),
            query=lambda n, w: float(
                _sensor(mf, n).reference_dbm if w == "TOREF" else _sensor(mf, n).reference_module_db
            ),
            query_params=(name("which", ("TOMODule", "TOREF")),),
        ),
        Entry(f"{sens}:POWer:REFerence:DISPlay", set=lambda n: _reference_display(mf, n)),
        Entry(
            f"{sens}:POWer:REFerence:STATe",
            (Param("relative", "bool"),),
            set=put("relative"),
            query=get("relative"),
        ),
        Entry(
            f"{sens}:POWer:REFerence:STATe:RATio",
            RATIO_PARAMS,
            set=lambda n, to, channel: _set_ratio(mf, n, to, channel),
            query=lambda n: list(_sensor(mf, n).ratio_to),
        ),
        Entry(
            f"{sens}:POWer:UNIT",
            (unit_param(("DBM", "Watt", "0", "1")),),
            set=lambda n, u: setattr(_sensor(mf, n), "unit", UNIT_CODES[u]),
            query=get("unit"),
        ),
        Entry(
            f"{sens}:POWer:WAVelength",
            (wavelength_param(SENSOR_WAVELENGTH_NM),),
            set=put("wavelength_nm"),
            query=lambda n, w=None: (
                1e-9
                * {"MINIMUM": low, "MAXIMUM": high, "DEFAULT": REFERENCE_WAVELENGTH_NM}.get(
                    w or "", _sensor(mf, n).wavelength_nm
                )
            ),
            query_params=(limit,),
        ),
    ]


def _set_stability(mf: Mainframe8164B) -> Callable[..., None]:
    def run(slot: int, total: float, period: float, averaging: float) -> None:
        if not averaging <= period <= total:
            raise ScpiError(-222, "stability needs averaging <= period <= total time")
        _sensor(mf, slot).stability = (total, period, averaging)

    return run


# ---- the tunable laser's other settings -----------------------------------------------------
def _relative_frequency(mf: Mainframe8164B, _: int, df_hz: float) -> None:
    """``:WAV:FREQ``: the wavelength is the reference's plus a frequency difference (the
    guide: lambda = c lambda0 / (c + df lambda0))."""
    ref_m = mf.kept["reference_nm"] * 1e-9
    nm = 1e9 * C_M_S * ref_m / (C_M_S + df_hz * ref_m)
    low, high = KEYSIGHT_LASER_WAVELENGTH_NM
    if not low <= nm <= high:
        raise ScpiError(-222, f"{nm:.4f} nm outside {low:g}..{high:g} nm")
    mf.world.set_laser(mf.laser, wavelength_nm=nm)


def _frequency_difference(mf: Mainframe8164B) -> float:
    nm, ref = mf.world.laser(mf.laser).wavelength_nm, mf.kept["reference_nm"]
    return C_M_S / (nm * 1e-9) - C_M_S / (ref * 1e-9)


def expected_sweep_s(mf: Mainframe8164B) -> float:
    """``:WAV:SWE:EXPT?``: the time a whole sweep takes, s: each pass the span at the sweep
    speed (a stepped sweep also dwells at each step), twice for a two-way sweep, times the
    cycles."""
    s = mf.sweep
    one = abs(s.stop_nm - s.start_nm) / s.speed_nm_s
    if s.mode != 2:
        one += s.dwell_s * len(s.wavelengths_nm())
    return one * (2 if s.two_way else 1) * max(s.cycles, 1)


def _sweep_flag(mf: Mainframe8164B) -> int:
    """``:WAV:SWE:FLAG?``: 0 when no sweep runs, else twice the cycles done so far."""
    s, now = mf.sweep, mf.world.clock()
    return 2 * s.done(now) if s.running(now) else 0


def _pmax(mf: Mainframe8164B, _: int, start_nm: float, stop_nm: float) -> float:
    """``:WAV:SWE:PMAX? start,stop``: the highest power the laser gives over the range, in
    the power unit (this laser's power is flat over its range)."""
    if stop_nm < start_nm:
        raise ScpiError(-222, "PMAX? needs start <= stop")
    return in_unit(KEYSIGHT_LASER_POWER_MW[1], mf.power_unit, 1e3)


def _kept(
    mf: Mainframe8164B,
    header: str,
    params: tuple[Param, ...],
    key: str,
    show: Callable[[object], object] | None = None,
) -> Entry:
    """A setting kept and read back (one value, or the tuple of several)."""

    def put(_: int, *values: object) -> None:
        mf.kept[key] = values[0] if len(values) == 1 else values

    def get(_: int) -> object:
        value = mf.kept[key]
        return show(value) if show else (list(value) if isinstance(value, tuple) else value)

    return Entry(header, params, set=put, query=get)


AM_SOURCES = ("INTernal", "COHCtrl", "AEXTernal", "DEXTernal", "WVLLocking", "BACKplane")
OUTPUT_PATHS = ("HIGHpower", "LOWSse", "BHRatio", "BLRatio")


def laser_commands(mf: Mainframe8164B) -> list[Entry]:
    """The tunable laser's commands beyond its power, wavelength and sweep settings (the guide,
    4: the SOURce subsystem and the laser's OUTPut path)."""
    source = "[SOURce][:CHANnel]"
    swe = f"{source}:WAVelength:SWEep"
    low, high = KEYSIGHT_LASER_WAVELENGTH_NM
    wavelength = wavelength_param(KEYSIGHT_LASER_WAVELENGTH_NM)
    source_choices = tuple(AM_SOURCES)
    return [
        _kept(
            mf,
            f"{source}:AM:INTernal:FREQuency",
            (Param("frequency_hz", "number", 200.0, 1e6),),
            "am_frequency_hz",
            float,
        ),
        _kept(
            mf,
            f"{source}:AM:SOURce",
            (name("source", source_choices),),
            "am_source",
            lambda v: short(source_choices, str(v)),
        ),
        _kept(mf, f"{source}:AM:STATe", (Param("on", "bool"),), "am_state"),
        _kept(
            mf,
            "OUTPut[:CHANnel]:PATH",
            (name("path", OUTPUT_PATHS),),
            "output_path",
            lambda v: short(OUTPUT_PATHS, str(v)),
        ),
        Entry(
            f"{source}:WAVelength:CORRection:ARA",
            set=lambda _: mf.kept.__setitem__("realignments", mf.kept["realignments"] + 1),
        ),
        Entry(
            f"{source}:WAVelength:FREQuency",
            (Param("difference_hz", "number", -1e15, 1e15),),
            set=lambda n, df: _relative_frequency(mf, n, df),
            query=lambda _: _frequency_difference(mf),
        ),
        Entry(f"{source}:WAVelength:REFerence", query=lambda _: mf.kept["reference_nm"] * 1e-9),
        Entry(
            f"{source}:WAVelength:REFerence:DISPlay",
            set=lambda _: mf.kept.__setitem__(
                "reference_nm", mf.world.laser(mf.laser).wavelength_nm
            ),
        ),
        Entry(
            f"{swe}:CYCLes",
            (Param("cycles", "int", 0, 999),),
            set=lambda _, c: setattr(mf.sweep, "cycles", c),
            query=lambda _: mf.sweep.cycles,
        ),
        Entry(
            f"{swe}:DWELl",
            (Param("dwell", "number", 0.0, 1e3, "s"),),
            set=lambda _, t: setattr(mf.sweep, "dwell_s", t),
            query=lambda _: float(mf.sweep.dwell_s),
        ),
        Entry(f"{swe}:EXPTime", query=lambda _: expected_sweep_s(mf)),
        # the short form the guide's example and labs' drivers send (``sour0:wav:swe:exp?``)
        Entry(f"{swe}:EXPtime", query=lambda _: expected_sweep_s(mf)),
        Entry(f"{swe}:FLAG", query=lambda _: _sweep_flag(mf)),
        Entry(
            f"{swe}:PMAX",
            query=lambda n, a, b: _pmax(mf, n, a, b),
            query_params=(wavelength, wavelength),
        ),
        Entry(
            f"{swe}:SOFTtrigger",
            set=lambda _: mf.kept.__setitem__("soft_triggers", mf.kept["soft_triggers"] + 1),
        ),
        Entry(
            f"{source}:WAVelength:FIXed",
            (wavelength,),
            set=lambda _, nm: mf.world.set_laser(mf.laser, wavelength_nm=nm),
            query=lambda _, which=None: (
                1e-9
                * {"MINIMUM": low, "MAXIMUM": high, "DEFAULT": REFERENCE_WAVELENGTH_NM}.get(
                    which or "", mf.world.laser(mf.laser).wavelength_nm
                )
            ),
            query_params=(
                Param("limit", "name", choices=("MINimum", "MAXimum", "DEFault"), optional=True),
            ),
        ),
    ]


# ---- the mainframe ----------------------------------------------------------------------------
def _slot_idn(mf: Mainframe8164B, slot: int) -> str:
    module = mf.modules.get(slot)
    return "" if module is None else f"Keysight Technologies,{module},{mf.serial}-{slot},V1.0"


def _trigger_slot(mf: Mainframe8164B, slot: int) -> str:
    """Which kind of module answers a trigger command on ``slot``: laser or sensor."""
    if slot == mf.laser_slot:
        return "laser"
    if slot == mf.sensor_slot and mf.sensor is not None:
        return "sensor"
    raise ScpiError(-113, f"the module in slot {slot} has no triggers")


def _set_trigger(mf: Mainframe8164B, direction: str, slot: int, value: str) -> None:
    kind = _trigger_slot(mf, slot)
    allowed = {
        ("laser", "in"): LASER_TRIGGER_IN,
        ("laser", "out"): LASER_TRIGGER_OUT,
        ("sensor", "in"): SENSOR_TRIGGER_IN,
        ("sensor", "out"): SENSOR_TRIGGER_OUT,
    }[kind, direction]
    if value not in (c.upper() for c in allowed):
        raise ScpiError(-224, f"a {kind} takes {' | '.join(allowed)}, not {value}")
    mf.triggers[slot, direction] = short(allowed, value)
    if kind == "laser":  # the sweep's trigger settings (lasers.Mainframe8164B)
        setattr(
            mf, "trigger_in" if direction == "in" else "trigger_out", mf.triggers[slot, direction]
        )


def _get_trigger(mf: Mainframe8164B, direction: str, slot: int) -> str:
    _trigger_slot(mf, slot)
    if slot == mf.laser_slot:
        return mf.trigger_in if direction == "in" else mf.trigger_out
    return mf.triggers.get((slot, direction), "IGN" if direction == "in" else "DIS")


def _per_trigger_slot(mf: Mainframe8164B, key: str, default: object) -> tuple[Callable, Callable]:
    def put(slot: int, value: object) -> None:
        _trigger_slot(mf, slot)
        mf.triggers[slot, key] = value

    def get(slot: int) -> object:
        _trigger_slot(mf, slot)
        return mf.triggers.get((slot, key), default)

    return put, get


def mainframe_commands(mf: Mainframe8164B) -> list[Entry]:
    """The mainframe's own commands (the guide, 3 Instrument Setup and Status and 4: the root
    layer's SLOT commands, the switch's route configuration and the TRIGger subsystem)."""
    responses_in = tuple(dict.fromkeys(LASER_TRIGGER_IN + SENSOR_TRIGGER_IN))
    responses_out = tuple(dict.fromkeys(LASER_TRIGGER_OUT + SENSOR_TRIGGER_OUT))
    configurations = (*TRIGGER_CONFIGURATIONS, "0", "1", "2", "3")
    rearm_in = _per_trigger_slot(mf, "in_rearm", True)
    rearm_out = _per_trigger_slot(mf, "out_rearm", True)
    offset = _per_trigger_slot(mf, "offset", 0)
    ports = mf.world.n_ports
    return [
        Entry("SLOT:EMPTy", query=lambda n: n not in mf.modules),
        Entry("SLOT:IDN", query=lambda n: _slot_idn(mf, n)),
        Entry("SLOT:OPTions", query=lambda n: NO_OPTIONS if n in mf.modules else ""),
        Entry("SLOT:TST", query=lambda n: [0, '"self test OK"']),
        Entry(
            "ROUTe:CONFig:ROUTe",
            query=lambda _: ";".join(f"A,{k}" for k in range(1, ports + 1)),
        ),
        Entry(
            "TRIGger:CONFiguration",
            (name("configuration", configurations),),
            set=lambda _, c: mf.kept.__setitem__(
                "trigger_configuration",
                int(c) if c.isdigit() else [x.upper() for x in TRIGGER_CONFIGURATIONS].index(c),
            ),
            query=lambda _: mf.kept["trigger_configuration"],
        ),
        Entry(
            "TRIGger",
            (name("node", ("NODEA", "NODEB", "1", "2")),),
            set=lambda _, node: mf.kept.__setitem__("node_triggers", mf.kept["node_triggers"] + 1),
        ),
        Entry(
            "TRIGger[:CHANnel]:INPut",
            (name("response", responses_in),),
            set=lambda n, r: _set_trigger(mf, "in", n, r),
            query=lambda n: _get_trigger(mf, "in", n),
        ),
        Entry(
            "TRIGger[:CHANnel]:OUTPut",
            (name("when", responses_out),),
            set=lambda n, w: _set_trigger(mf, "out", n, w),
            query=lambda n: _get_trigger(mf, "out", n),
        ),
        Entry("TRIGger[:CHANnel]:INPut:REARm", (Param("on", "bool"),), *rearm_in),
        Entry("TRIGger[:CHANnel]:OUTPut:REARm", (Param("on", "bool"),), *rearm_out),
        Entry("TRIGger[:CHANnel]:OFFSet", (Param("offset", "int", 0, 2**31 - 1),), *offset),
        _kept(
            mf,
            "SYSTem:DATE",
            DATE_PARAMS,
            "date",
        ),
        _kept(
            mf,
            "SYSTem:TIME",
            TIME_PARAMS,
            "time",
        ),
        Entry("SYSTem:PRESet", set=lambda _: mf.reset()),
        _kept(
            mf,
            "SYSTem:COMMunicate:GPIB[:SELF]:ADDRess",
            (Param("address", "int", 0, 30),),
            "gpib_address",
        ),
        _kept(
            mf,
            "DISPlay:BRIGhtness",
            (Param("brightness", "number", 0.0, 1.0),),
            "brightness",
            float,
        ),
        _kept(mf, "DISPlay:CONTrast", (Param("contrast", "number", 0.0, 1.0),), "contrast", float),
        _kept(mf, "DISPlay:ENABle", (Param("on", "bool"),), "display_enabled"),
        _kept(mf, "DISPlay:LOCKout", (Param("on", "bool"),), "lockout"),
    ]


def commands(mf: Mainframe8164B) -> list[Entry]:
    """Every entry this module adds to the mainframe's table."""
    sensor = sensor_commands(mf) if mf.sensor is not None else []
    return [*mainframe_commands(mf), *laser_commands(mf), *sensor]


#: The *RST state of the settings only kept (the mainframe's date, time and GPIB address
#: survive *RST on the instrument, but the emulation starts them here).
KEPT_RESET = {
    "am_frequency_hz": 1e4,
    "am_source": "INTERNAL",
    "am_state": False,
    "output_path": "HIGHPOWER",
    "realignments": 0,
    "reference_nm": REFERENCE_WAVELENGTH_NM,
    "soft_triggers": 0,
    "trigger_configuration": 1,  # DEFault
    "node_triggers": 0,
    "brightness": 1.0,
    "contrast": 0.5,
    "display_enabled": True,
    "lockout": False,
}
#: Settings *RST leaves as they are (the instrument's clock and interface).
KEPT_POWER_ON = {"date": (2026, 1, 1), "time": (0, 0, 0), "gpib_address": 20}


def reset(mf: Mainframe8164B) -> None:
    """The ``*RST`` state of what this module keeps, and a fresh sensor on its output."""
    kept = getattr(mf, "kept", {})
    mf.kept = {**KEPT_POWER_ON, **{k: kept[k] for k in KEPT_POWER_ON if k in kept}}
    mf.kept.update(KEPT_RESET)
    mf.triggers = {}
    if mf.sensor is not None:
        mf.sensor = PowerSensor(mf.sensor.output)
