"""The PM100D's command table (:func:`entries`), beside the state and readings of
:mod:`hil.emulator.instruments.pm100d` (the manual's list alone is over 100 commands).

Each :class:`~hil.emulator.instruments.scpi.Entry` is a command of the *Thorlabs PM100D
Operation Manual*, section 6.4.2, with the manual's syntax (optional nodes in brackets; its
nested ``[:LOSS[:INPut[:MAGNitude]]]`` written as three optional nodes). The IEEE 488.2
commands, ``SYST:ERR?`` and the ``STATus`` registers are the SCPI base's
(:class:`~hil.emulator.instruments.scpi.ScpiInstrument`; the PM100D's MEASurement and
AUXillary registers too, through ``status_nodes``). Numbers take the manual's units: a bare
power is in W, a current in A, a wavelength in nm; ``MIN``/``MAX``/``DEF`` where the manual
has them, queries too (``CORR:WAV? MAX``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments.scpi import Entry, wavelength_param
from hil.instruments.power_meters import PM100D_WAVELENGTH_NM

#: The meter (:class:`hil.emulator.instruments.pm100d.PowerMeterPM100D`, which imports this
#: module: not imported back).
PowerMeterPM100D = Any

#: The photodiode input's current ranges, A: 50 nA to 5 mA in six decades.
CURRENT_RANGES_A = (5e-8, 5e-7, 5e-6, 5e-5, 5e-4, 5e-3)
#: The measurement functions (``CONF``/``MEAS``): their reply to ``CONF?``.
FUNCTIONS = ("POW", "CURR", "VOLT", "ENER", "FREQ", "PDEN", "EDEN", "RES", "TEMP")

LIMIT = Param("limit", "name", choices=("MINimum", "MAXimum", "DEFault"), optional=True)
BOOL = Param("state", "bool")
#: A power range's MAX (mW): the largest range, whatever the responsivity makes it in W.
POWER_RANGE_MAX_MW = 1e6


def _number(name: str, low: float, high: float, default: float, unit: str = "") -> Param:
    return Param(name, "number", low, high, unit, default=default)


#: Settings kept and read back: header, parameter, reply scale (reply = value x scale). Ranges
#: and defaults where the manual gives none are the emulation's.
KEPT_NUMBERS: tuple[tuple[str, Param, float], ...] = (
    ("DISPlay:BRIGhtness", _number("brightness", 0.0, 1.0, 1.0), 1.0),
    ("DISPlay:CONTrast", _number("contrast", 0.0, 1.0, 0.5), 1.0),
    (
        "[SENSe:]CORRection:POWer:THERmopile[:RESPonse]",
        _number("response", 1e-6, 10.0, 1e-3, "V"),  # V/W
        1.0,
    ),
    ("[SENSe:]CORRection:ENERgy[:PYRo][:RESPonse]", _number("response", 1e-3, 1e4, 1.0), 1.0),
    ("[SENSe:]ENERgy:RANGe[:UPPer]", _number("range", 1e-6, 10.0, 1e-3), 1.0),  # J
    ("[SENSe:]ENERgy:REFerence", _number("reference", -10.0, 10.0, 0.0), 1.0),  # J
    ("[SENSe:]VOLTage[:DC]:RANGe[:UPPer]", _number("range", 1e-3, 1.0, 1.0, "V"), 1.0),
    ("[SENSe:]VOLTage[:DC]:REFerence", _number("reference", -1.0, 1.0, 0.0, "V"), 1.0),
    ("[SENSe:]PEAKdetector:THReshold", _number("threshold", 1.0, 95.0, 15.0), 1.0),  # %
    ("INPut:THERmopile:ACCelerator:TAU", _number("tau", 0.0, 100.0, 1.0, "s"), 1.0),
)
KEPT_BOOLS = (
    "SYSTem:BEEPer:STATe",
    "[SENSe:]ENERgy:REFerence:STATe",
    "[SENSe:]VOLTage[:DC]:RANGe:AUTO",
    "[SENSe:]VOLTage[:DC]:REFerence:STATe",
    "INPut[:PDIode]:FILTer[:LPASs][:STATe]",
    "INPut:THERmopile:ACCelerator[:STATe]",
    "INPut:THERmopile:ACCelerator:AUTO",
)
#: ``SENS:FREQ:RANG:LOW?``/``UPP?``, Hz (the emulation's: no pulsed source on this bench).
FREQUENCY_RANGE_HZ = (0.0, 1e5)
ADAPTERS = {"PHOTODIODE": "PHOT", "THERMAL": "THER", "PYRO": "PYR"}


def _limit(m: PowerMeterPM100D, key: str, p: Param, limit: str | None) -> object:
    """A kept number, or its MIN/MAX/DEF."""
    ends = {"MINIMUM": p.low, "MAXIMUM": p.high, "DEFAULT": p.default}
    return float(ends[limit] if limit else m.kept.get(key, p.default))  # type: ignore[arg-type]


def _kept_number(m: PowerMeterPM100D, header: str, p: Param, scale: float) -> Entry:
    def query(_: int, limit: str | None = None) -> float:
        return scale * _limit(m, header, p, limit)  # type: ignore[operator]

    return Entry(
        header,
        (p,),
        set=lambda _, v: m.kept.__setitem__(header, v),
        query=query,
        query_params=(LIMIT,),
    )


def _kept_bool(m: PowerMeterPM100D, header: str) -> Entry:
    default = header.endswith("RANGe:AUTO")  # auto range on after *RST
    return Entry(
        header,
        (BOOL,),
        set=lambda _, v: m.kept.__setitem__(header, v),
        query=lambda _: bool(m.kept.get(header, default)),
    )


def _setter(m: PowerMeterPM100D, name: str, scale: float = 1.0) -> Callable[..., None]:
    return lambda _, v: setattr(m, name, v if scale == 1.0 else v * scale)


def _system(m: PowerMeterPM100D) -> list[Entry]:
    date = (Param("year", "int", 2000, 2099), Param("month", "int", 1, 12))
    date += (Param("day", "int", 1, 31),)
    clock = (Param("hour", "int", 0, 23), Param("minute", "int", 0, 59))
    clock += (Param("second", "int", 0, 59),)

    def line_frequency(_: int, hz: int) -> None:
        if hz not in (50, 60):
            raise ScpiError(-222, f"line frequency {hz} Hz: 50 or 60")
        m.kept["SYSTem:LFRequency"] = hz

    return [
        Entry("SYSTem:BEEPer[:IMMediate]", set=lambda _: None),
        Entry(
            "SYSTem:DATE",
            date,
            set=lambda _, *v: m.kept.__setitem__("date", v),
            query=lambda _: m.kept.get("date", (2025, 1, 1)),
        ),
        Entry(
            "SYSTem:TIME",
            clock,
            set=lambda _, *v: m.kept.__setitem__("time", v),
            query=lambda _: m.kept.get("time", (0, 0, 0)),
        ),
        Entry(
            "SYSTem:LFRequency",
            (Param("frequency", "int", 1, 1000),),
            set=line_frequency,
            query=lambda _: m.kept.get("SYSTem:LFRequency", 50),
        ),
        Entry("SYSTem:SENSor:IDN", query=lambda _: m.SENSOR_IDN),
        Entry("SYSTem:VERSion", query=lambda _: "1999.0"),
        Entry("CALibration:STRing", query=lambda _: '"01-Jan-2025"'),
    ]


def _correction(m: PowerMeterPM100D) -> list[Entry]:
    attenuation = _number("attenuation", -60.0, 60.0, 0.0, "dB")
    beam = _number("diameter", 0.01, 100.0, 9.5)  # mm
    response = _number("response", 1e-4, 10.0, 1.0)  # A/W
    zero = "[SENSe:]CORRection:COLLect:ZERO"
    return [
        Entry(
            "[SENSe:]CORRection[:LOSS][:INPut][:MAGNitude]",
            (attenuation,),
            set=_setter(m, "attenuation_db"),
            query=lambda _, lim=None: _limit_or(attenuation, lim, m.attenuation_db),
            query_params=(LIMIT,),
        ),
        Entry(f"{zero}[:INITiate]", set=lambda _: m.zero()),
        Entry(f"{zero}:ABORt", set=lambda _: None),  # the zeroing ends at once here
        Entry(f"{zero}:STATe", query=lambda _: 0),  # 0: finished (PM100D.h)
        Entry(f"{zero}:MAGNitude", query=lambda _: m.zero_A),
        Entry(
            "[SENSe:]CORRection:BEAMdiameter",
            (beam,),
            set=_setter(m, "beam_mm"),
            query=lambda _, lim=None: _limit_or(beam, lim, m.beam_mm),
            query_params=(LIMIT,),
        ),
        Entry(
            "[SENSe:]CORRection:WAVelength",
            (wavelength_param(PM100D_WAVELENGTH_NM),),
            set=lambda _, nm: m.set_wavelength(nm),
            query=lambda _, lim=None: m.wavelength(lim),
            query_params=(LIMIT,),
        ),
        Entry(
            "[SENSe:]CORRection:POWer[:PDIode][:RESPonse]",
            (response,),
            set=_setter(m, "user_responsivity"),
            query=lambda _, lim=None: _limit_or(response, lim, m.responsivity_AW()),
            query_params=(LIMIT,),
        ),
    ]


def _limit_or(p: Param, limit: str | None, value: float) -> float:
    ends = {"MINIMUM": p.low, "MAXIMUM": p.high, "DEFAULT": p.default}
    return float(ends[limit]) if limit else value  # type: ignore[arg-type]


def _ranges(m: PowerMeterPM100D) -> list[Entry]:
    power = _number("range", 0.0, POWER_RANGE_MAX_MW, POWER_RANGE_MAX_MW, "mW")
    current = _number("range", 0.0, 1e3 * CURRENT_RANGES_A[-1], 5.0, "mA")

    def set_power(_: int, mW: float) -> None:
        if mW >= POWER_RANGE_MAX_MW:  # MAX: the largest range
            m.set_current_range(CURRENT_RANGES_A[-1])
        else:
            m.set_power_range(1e-3 * mW)

    def auto(_: int, on: bool) -> None:
        m.auto_range = on

    return [
        Entry(
            "[SENSe:]POWer[:DC]:RANGe[:UPPer]",
            (power,),
            set=set_power,
            query=lambda _, lim=None: m.power_range(lim),
            query_params=(LIMIT,),
        ),
        Entry("[SENSe:]POWer[:DC]:RANGe:AUTO", (BOOL,), set=auto, query=lambda _: m.auto_range),
        Entry(
            "[SENSe:]CURRent[:DC]:RANGe[:UPPer]",
            (current,),
            set=lambda _, mA: m.set_current_range(1e-3 * mA),
            query=lambda _, lim=None: m.current_range(lim),
            query_params=(LIMIT,),
        ),
        Entry("[SENSe:]CURRent[:DC]:RANGe:AUTO", (BOOL,), set=auto, query=lambda _: m.auto_range),
        Entry("[SENSe:]FREQuency:RANGe[:UPPer]", query=lambda _: FREQUENCY_RANGE_HZ[1]),
        Entry("[SENSe:]FREQuency:RANGe:LOWer", query=lambda _: FREQUENCY_RANGE_HZ[0]),
    ]


def _references(m: PowerMeterPM100D) -> list[Entry]:
    power = _number("reference", -1e3, 1e3, 0.0, "mW")  # +-1 W
    top_mA = 1e3 * CURRENT_RANGES_A[-1]
    current = _number("reference", -top_mA, top_mA, 0.0, "mA")
    return [
        Entry(
            "[SENSe:]POWer[:DC]:REFerence",
            (power,),
            set=_setter(m, "power_reference_W", 1e-3),
            query=lambda _, lim=None: 1e-3 * _limit_or(power, lim, 1e3 * m.power_reference_W),
            query_params=(LIMIT,),
        ),
        Entry(
            "[SENSe:]POWer[:DC]:REFerence:STATe",
            (BOOL,),
            set=_setter(m, "power_delta"),
            query=lambda _: m.power_delta,
        ),
        Entry(
            "[SENSe:]CURRent[:DC]:REFerence",
            (current,),
            set=_setter(m, "current_reference_A", 1e-3),
            query=lambda _, lim=None: 1e-3 * _limit_or(current, lim, 1e3 * m.current_reference_A),
            query_params=(LIMIT,),
        ),
        Entry(
            "[SENSe:]CURRent[:DC]:REFerence:STATe",
            (BOOL,),
            set=_setter(m, "current_delta"),
            query=lambda _: m.current_delta,
        ),
        Entry(
            "[SENSe:]POWer[:DC]:UNIT",
            (Param("unit", "name", choices=("DBM", "W")),),
            set=lambda _, u: setattr(m, "unit", 0 if u == "DBM" else 1),
            query=lambda _: ("DBM", "W")[m.unit],
        ),
        Entry(
            "[SENSe:]AVERage[:COUNt]",
            (Param("count", "int", 1, 10_000),),
            set=_setter(m, "averages"),
            query=lambda _: m.averages,
        ),
    ]


#: ``CONF``/``MEAS`` nodes: the manual's header tail for each function.
NODES = {
    "POW": "[:POWer]",
    "CURR": ":CURRent[:DC]",
    "VOLT": ":VOLTage[:DC]",
    "ENER": ":ENERgy",
    "FREQ": ":FREQuency",
    "PDEN": ":PDENsity",
    "EDEN": ":EDENsity",
    "RES": ":RESistance",
    "TEMP": ":TEMPerature",
}


def _measurement(m: PowerMeterPM100D) -> list[Entry]:
    """CONFigure, MEASure (set form: configure and initiate, for FETCh?), READ, INITiate,
    ABORt, FETCh."""
    out = [
        Entry("CONFigure", query=lambda _: m.function),
        Entry("INITiate[:IMMediate]", set=lambda _: m.initiate()),
        Entry("ABORt", set=lambda _: m.abort()),
        Entry("FETCh", query=lambda _: m.fetch()),
        Entry("READ", query=lambda _: m.reading()),
    ]
    for function in FUNCTIONS:
        tail = NODES[function]
        out += [
            Entry(f"CONFigure[:SCALar]{tail}", set=lambda _, f=function: m.configure(f)),
            Entry(
                f"MEASure[:SCALar]{tail}",
                set=lambda _, f=function: m.measure_later(f),
                query=lambda _, f=function: m.measure(f),
            ),
        ]
    return out


def _inputs(m: PowerMeterPM100D) -> list[Entry]:
    adapter = Param("type", "name", choices=("PHOTodiode", "THERmal", "PYRo"))
    return [
        Entry(
            "INPut:ADAPter[:TYPE]",
            (adapter,),
            set=lambda _, t: m.kept.__setitem__("adapter", ADAPTERS[t]),
            query=lambda _: m.kept.get("adapter", "PHOT"),
        ),
    ]


def entries(m: PowerMeterPM100D) -> list[Entry]:
    """Every command of the manual's section 6.4.2 but the base's."""
    return [
        *_system(m),
        *_correction(m),
        *_ranges(m),
        *_references(m),
        *_measurement(m),
        *_inputs(m),
        *(_kept_number(m, h, p, s) for h, p, s in KEPT_NUMBERS),
        *(_kept_bool(m, h) for h in KEPT_BOOLS),
    ]
