"""The 81636B power sensor module of the emulated 8164B mainframe (:class:`PowerSensor`,
:func:`sensor_commands`): readings of the chip output it sits on, relative mode, and the
logging, stability and MinMax functions on the world's clock, as the "8163A/B, 8164A/B & 8166A/B
Mainframes Programming Guide" (Keysight) defines them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments.mainframe_common import (
    MAX_FUNCTION_POINTS,
    RANGE_DBM,
    RATIO_PARAMS,
    SENSOR_AVERAGING_S,
    SENSOR_WAVELENGTH_NM,
    name,
    short,
)
from hil.emulator.instruments.scpi import (
    UNIT_CODES,
    Entry,
    dbm,
    float32_block,
    in_unit,
    unit_param,
    wavelength_param,
)
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM

#: The mainframe (:class:`hil.emulator.instruments.lasers.Mainframe8164B`, which imports this
#: module: not imported back).
Mainframe8164B = Any


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
