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

from collections.abc import Callable
from typing import Any

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments.mainframe_common import (
    C_M_S,
    DATE_PARAMS,
    LASER_TRIGGER_IN,
    LASER_TRIGGER_OUT,
    NO_OPTIONS,
    SENSOR_TRIGGER_IN,
    SENSOR_TRIGGER_OUT,
    TIME_PARAMS,
    TRIGGER_CONFIGURATIONS,
    name,
    short,
)
from hil.emulator.instruments.power_sensor_81636b import PowerSensor, sensor_commands
from hil.emulator.instruments.scpi import (
    Entry,
    in_unit,
    wavelength_param,
)
from hil.instruments.lasers import KEYSIGHT_LASER_POWER_MW, KEYSIGHT_LASER_WAVELENGTH_NM
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM

#: The mainframe (:class:`hil.emulator.instruments.lasers.Mainframe8164B`, which imports this
#: module: not imported back).
Mainframe8164B = Any


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
