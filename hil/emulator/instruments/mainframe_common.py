"""What the 8164B mainframe's command modules share (:mod:`.mainframe_modules`,
:mod:`.power_sensor_81636b`): the guide's constants, the unit rewrites of its Table 2 the
grammar engine lacks (:func:`rewrite_token`), and the short forms of named choices."""

from __future__ import annotations

import re

from firmware.commands import Param

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
