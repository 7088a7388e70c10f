"""The TSL-570's command table (:func:`entries`), beside the state and the light of
:mod:`hil.emulator.instruments.tsl570`.

Each :class:`~hil.emulator.instruments.scpi.Entry` is a command of the *Santec TSL-570
Instruction Manual*'s command list, with its syntax (optional nodes in brackets:
``[:WAVelength]:FREQuency``, ``:WAVelength:SWEep[:STATe]:REPeat``, ``:TRIGger:OUTPut:STEP
[:WIDTh]``); the IEEE 488.2 commands and ``:SYST:ERR?`` are the SCPI base's. Queries of a set
value take ``MIN``/``MAX`` where the lab drivers ask for them (``:WAV? MIN``, ``:POW? MAX``);
``:WAV:MIN?``, ``:WAV:MAX?`` and ``[:WAV]:FREQ:MIN?``/``MAX?`` as QMI's driver reads them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.framing import CR, CRLF, LF
from hil.emulator.instruments.lasers import thz
from hil.emulator.instruments.scpi import Entry, float32_block, unit_param, wavelength_param
from hil.instruments.lasers import TSL570_POWER_MW, TSL570_WAVELENGTH_NM

#: The :class:`~hil.emulator.instruments.tsl570.LaserTSL570` a table is built on (not imported
#: here: its module imports this one).
LaserTSL570 = Any
#: Sweep speeds of the TSL-570, nm/s.
TSL570_SPEEDS_NM_S = (1, 2, 5, 10, 20, 50, 100, 200)
#: ``:SYST:COMM:GPIB:DEL`` 0..3: what ends a reply (3: nothing; a GPIB client has EOI).
DELIMITERS = (CR, LF, CRLF, "")
#: The firmware version (``*IDN?``, ``:SYST:VERS?``): the oldest QCoDeS contrib's driver takes.
FIRMWARE = "0026.0026.0011"
#: ``:SYST:ALER?`` without an alert.
NO_ALERTS = "No alerts."
LIMIT = Param("limit", "name", choices=("MINimum", "MAXimum"), optional=True)
LOW_NM, HIGH_NM = TSL570_WAVELENGTH_NM
#: ``:SYST:COMM:ETH:MAC?`` (a documentation address, RFC 7042) and ``:SYST:COD?``, the product
#: code of a 1480-1640 nm model in the manual's ``*-******-*-*-**-**-*`` form.
MAC_ADDRESS = "00-00-5E-00-53-01"
PRODUCT_CODE = "1-480640-1-1-00-00-0"
#: ``:AM:SOUR``: 0 coherence control, 1 intensity modulation, 3 frequency modulation.
AM_SOURCES = (0, 1, 3)
_IPV4 = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")


def on_grid(nm: float) -> float:
    """A wavelength on the manual's 0.1 pm setting step, nm."""
    return round(nm, 4)


def _bool(name: str) -> Param:
    return Param(name, "bool")


def _int(name: str, low: int, high: int) -> Param:
    return Param(name, "int", low, high)


#: The settings kept and read back: header, parameter, power-on value, whether the reply is a
#: wavelength (in the command set's unit). Ranges are the manual's.
KEPT: tuple[tuple[str, Param, object, bool], ...] = (
    ("WAVelength:FINetuning", Param("fine", "number", -100.0, 100.0), 0.0, False),
    ("WAVelength:OFFSet", Param("offset", "number", -0.1, 0.1, "nm"), 0.0, True),
    ("COHCtrl", _bool("coherence"), False, False),
    ("POWer:ATTenuation", Param("attenuation", "number", 0.0, 30.0, "dB"), 0.0, False),
    ("POWer:ATTenuation:AUTo", _bool("auto"), True, False),
    ("AM:STATe", _bool("modulation"), False, False),
    ("AM:SOURce", _int("source", 0, 3), 0, False),
    ("TRIGger:INPut:EXTernal", _bool("external"), False, False),
    ("TRIGger:INPut[:EXTernal]:ACTive", _int("polarity", 0, 1), 0, False),
    ("TRIGger:INPut:STANdby", _bool("standby"), False, False),
    ("TRIGger:OUTPut", _int("timing", 0, 3), 0, False),
    ("TRIGger:OUTPut:ACTive", _int("polarity", 0, 1), 0, False),
    (
        "TRIGger:OUTPut:STEP[:WIDTh]",
        Param("step", "number", 1e-4, HIGH_NM - LOW_NM, "nm"),
        0.1,
        True,
    ),
    ("TRIGger:OUTPut:SETTing", _int("period", 0, 1), 0, False),
    ("TRIGger:THRough", _bool("through"), False, False),
    ("SYSTem:COMMunicate:GPIB:ADDRess", _int("address", 1, 30), 1, False),
    ("SYSTem:COMMunicate:ETHernet:IPADdress", Param("ipv4", "string"), "192.168.1.101", False),
    ("SYSTem:COMMunicate:ETHernet:SMASk", Param("ipv4", "string"), "255.255.255.0", False),
    ("SYSTem:COMMunicate:ETHernet:DGATeway", Param("ipv4", "string"), "192.168.1.1", False),
    ("SYSTem:COMMunicate:ETHernet:PORT", _int("port", 0, 65535), 5000, False),
    ("DISPlay:BRIGhtness", _int("brightness", 0, 100), 100, False),
)


def kept_defaults() -> dict[str, object]:
    """The kept settings at power-on, by header."""
    return {header: default for header, _, default, _ in KEPT}


def _check_kept(header: str, value: object) -> object:
    """A kept value checked where its parameter's range is not the whole story."""
    if header == "AM:SOURce" and value not in AM_SOURCES:
        raise ScpiError(-222, f"modulation source {value}: one of {AM_SOURCES}")
    if isinstance(value, str):  # an IPv4 address: four numbers 0..255
        m = _IPV4.match(value)
        if m is None:
            raise ScpiError(-102, f"{value!r} is not an address ***.***.***.***")
        if any(int(octet) > 255 for octet in m.groups()):
            raise ScpiError(-222, f"{value}: each number 0..255")
    return value


def _kept(t: LaserTSL570, header: str, param: Param, wavelength: bool) -> Entry:
    def put(_: int, value: object) -> None:
        t.kept[header] = _check_kept(header, value)

    def get(_: int) -> object:
        value = t.kept[header]
        return t.out_nm(value) if wavelength else value  # type: ignore[arg-type]

    return Entry(header, (param,), set=put, query=get)


def entries(t: LaserTSL570) -> list[Entry]:
    """Every command of the manual's list but the SCPI base's, on ``t``."""
    return [
        *_wavelength(t),
        *_power(t),
        *_sweep(t),
        *_readout(t),
        *(_kept(t, h, p, w) for h, p, _, w in KEPT),
        *_system(t),
    ]


def _limited(limit: str | None, value: Callable[[], float], low: float, high: float) -> float:
    """A query's value, or its MIN or MAX."""
    return {None: value, "MINIMUM": lambda: low, "MAXIMUM": lambda: high}[limit]()


def _wavelength(t: LaserTSL570) -> list[Entry]:
    world, name = t.world, t.laser

    def wavelength(_: int, limit: str | None = None) -> float:
        now = world.laser(name).wavelength_nm
        return t.out_nm(_limited(limit, lambda: now, LOW_NM, HIGH_NM))

    def frequency(_: int, limit: str | None = None) -> float:
        now = world.laser(name).wavelength_nm
        return t.out_freq(_limited(limit, lambda: now, HIGH_NM, LOW_NM))

    return [
        Entry(
            "WAVelength[:CW]",
            (wavelength_param(TSL570_WAVELENGTH_NM),),
            set=lambda _, nm: world.set_laser(name, wavelength_nm=on_grid(nm)),
            query=wavelength,
            query_params=(LIMIT,),
        ),
        Entry("WAVelength:MINimum", query=lambda _: t.out_nm(LOW_NM)),
        Entry("WAVelength:MAXimum", query=lambda _: t.out_nm(HIGH_NM)),
        Entry(
            "WAVelength:UNIT",
            (_int("unit", 0, 1),),
            set=lambda _, u: setattr(t, "display_unit", u),
            query=lambda _: t.display_unit,
        ),
        Entry(
            "WAVelength:FINetuning:DISable",
            set=lambda _: t.kept.__setitem__("WAVelength:FINetuning", 0.0),
        ),
        Entry(
            "[WAVelength:]FREQuency[:CW]",
            (Param("frequency", "number", 0, 1e16),),
            set=lambda _, f: world.set_laser(name, wavelength_nm=t.in_freq(f)),
            query=frequency,
            query_params=(LIMIT,),
        ),
        Entry("[WAVelength:]FREQuency:MINimum", query=lambda _: t.out_freq(HIGH_NM)),
        Entry("[WAVelength:]FREQuency:MAXimum", query=lambda _: t.out_freq(LOW_NM)),
    ]


def _power(t: LaserTSL570) -> list[Entry]:
    world, name = t.world, t.laser
    low, high = TSL570_POWER_MW

    def level(_: int, limit: str | None = None) -> float:
        return t.power(_limited(limit, lambda: world.laser(name).power_mW, low, high))

    return [
        Entry(
            "POWer[:LEVel]",
            (Param("power", "number", low, high, "mW", default=1.0),),
            set=lambda _, mW: world.set_laser(name, power_mW=mW),
            query=level,
            query_params=(LIMIT,),
        ),
        Entry("POWer:ACTual[:LEVel]", query=lambda _: t.power(t.actual_mW())),
        Entry(
            "POWer:STATe",
            (_bool("state"),),
            set=lambda _, on: world.set_laser(name, on=on),
            query=lambda _: world.laser(name).on,
        ),
        Entry(  # the manual: the same state as :POW:STAT, reversed (1 closed: dark)
            "POWer:SHUTter",
            (_bool("closed"),),
            set=lambda _, closed: world.set_laser(name, on=not closed),
            query=lambda _: not world.laser(name).on,
        ),
        Entry(
            "POWer:UNIT",
            (unit_param(("DBM", "MW", "0", "1")),),
            set=lambda _, u: setattr(t, "power_unit", 0 if u in ("DBM", "0") else 1),
            query=lambda _: t.power_unit,
        ),
    ]


def _sweep(t: LaserTSL570) -> list[Entry]:
    wavelength = (wavelength_param(TSL570_WAVELENGTH_NM),)
    frequency = (Param("frequency", "number", 0, 1e16),)

    def keep(attr: str) -> Callable[[int, object], None]:
        return lambda _, v: setattr(t.sweep, attr, v)

    def keep_nm(attr: str) -> Callable[[int, float], None]:
        return lambda _, nm: setattr(t.sweep, attr, on_grid(nm))

    def speed(_: int, nm_s: float) -> None:
        if nm_s not in TSL570_SPEEDS_NM_S:
            raise ScpiError(-222, f"sweep speed {nm_s:g} nm/s: one of {TSL570_SPEEDS_NM_S}")
        t.sweep.speed_nm_s = nm_s

    def frequency_step(_: int, value: float) -> None:
        """A frequency step (20 MHz to the span), as the wavelength step at the sweep centre."""
        f_thz = t.in_thz(value)
        if not 2e-5 <= f_thz <= thz(LOW_NM) - thz(HIGH_NM):
            raise ScpiError(-222, f"frequency step {value:g} outside 20 MHz..the span")
        centre = (t.sweep.start_nm + t.sweep.stop_nm) / 2
        t.sweep.step_nm = centre * f_thz / thz(centre)

    def state(_: int, on: int) -> None:
        t.start_sweep(1) if on else t.stop_sweep()

    return [
        Entry(
            "WAVelength:SWEep:STARt",
            wavelength,
            set=keep_nm("start_nm"),
            query=lambda _: t.out_nm(t.sweep.start_nm),
        ),
        Entry(
            "WAVelength:SWEep:STOP",
            wavelength,
            set=keep_nm("stop_nm"),
            query=lambda _: t.out_nm(t.sweep.stop_nm),
        ),
        Entry(
            "[WAVelength:]FREQuency:SWEep:STARt",
            frequency,
            set=lambda _, f: setattr(t.sweep, "start_nm", t.in_freq(f)),
            query=lambda _: t.out_freq(t.sweep.start_nm),
        ),
        Entry(
            "[WAVelength:]FREQuency:SWEep:STOP",
            frequency,
            set=lambda _, f: setattr(t.sweep, "stop_nm", t.in_freq(f)),
            query=lambda _: t.out_freq(t.sweep.stop_nm),
        ),
        Entry("WAVelength:SWEep:RANGe:MINimum", query=lambda _: t.out_nm(LOW_NM)),
        Entry("WAVelength:SWEep:RANGe:MAXimum", query=lambda _: t.out_nm(HIGH_NM)),
        Entry("[WAVelength:]FREQuency:SWEep:RANGe:MINimum", query=lambda _: t.out_freq(HIGH_NM)),
        Entry("[WAVelength:]FREQuency:SWEep:RANGe:MAXimum", query=lambda _: t.out_freq(LOW_NM)),
        Entry(
            "WAVelength:SWEep:MODe",
            (_int("mode", 0, 3),),
            set=keep("mode"),
            query=lambda _: t.sweep.mode,
        ),
        Entry(
            "WAVelength:SWEep:SPEed",
            (Param("speed", "number", 1, 200),),
            set=speed,
            query=lambda _: float(t.sweep.speed_nm_s),
        ),
        Entry(
            "WAVelength:SWEep:STEP[:WIDTh]",
            (Param("step", "number", 1e-4, HIGH_NM - LOW_NM, "nm"),),
            set=keep_nm("step_nm"),
            query=lambda _: t.out_nm(t.sweep.step_nm),
        ),
        Entry(
            "[WAVelength:]FREQuency:SWEep:STEP[:WIDTh]",
            frequency,
            set=frequency_step,
            query=lambda _: t.out_freq_step(t.sweep.start_nm, t.sweep.step_nm),
        ),
        Entry(
            "WAVelength:SWEep:DWELl",
            (Param("dwell", "number", 0, 999.9, "s"),),
            set=keep("dwell_s"),
            query=lambda _: t.sweep.dwell_s,
        ),
        Entry(
            "WAVelength:SWEep:DELay",
            (Param("delay", "number", 0, 999.9, "s"),),
            set=keep("delay_s"),
            query=lambda _: t.sweep.delay_s,
        ),
        Entry(
            "WAVelength:SWEep:CYCLes",
            (_int("cycles", 0, 999),),
            set=keep("cycles"),
            query=lambda _: t.sweep.cycles,
        ),
        Entry(
            "WAVelength:SWEep:COUNt",
            query=lambda _: 0 if t.pending else t.sweep.done(t.world.clock()),
        ),
        Entry(
            "WAVelength:SWEep[:STATe]",
            (_int("state", 0, 1),),
            set=state,
            query=lambda _: t.sweep_state(),
        ),
        Entry(
            "WAVelength:SWEep[:STATe]:REPeat",
            set=lambda _: t.start_sweep(max(t.sweep.cycles, 1)),
        ),
        Entry("TRIGger:INPut:SOFTtrigger", set=lambda _: t.soft_trigger()),
    ]


def _readout(t: LaserTSL570) -> list[Entry]:
    def wavelengths(_: int) -> bytes:
        # int32 little-endian in 0.1 pm, as QMI's and instrumental's drivers read it
        return float32_block([round(nm * 1e4) for nm in t.log_points_nm()], dtype="<i4")

    return [
        Entry("READout:POINts", query=lambda _: len(t.log_points_nm())),
        Entry("READout:DATa", query=wavelengths),
        Entry("READout:DATa:POWer", query=lambda _: float32_block(t.log_power_dbm())),
    ]


def _system(t: LaserTSL570) -> list[Entry]:
    def delimiter(_: int, d: int) -> None:
        t.delimiter = d  # the next reply ends in it (hil.emulator.framing)

    return [
        Entry(
            "SYSTem:COMMunicate:GPIB:DELimiter",
            (_int("delimiter", 0, len(DELIMITERS) - 1),),
            set=delimiter,
            query=lambda _: t.delimiter,
        ),
        Entry("SYSTem:COMMunicate:ETHernet:MACaddress", query=lambda _: MAC_ADDRESS),
        Entry(
            "SYSTem:COMMunicate:CODe",
            (_int("code", 0, 1),),
            set=lambda _, c: setattr(t, "code", c),
            query=lambda _: t.code,
        ),
        Entry("SYSTem:LOCK", query=lambda _: 0),  # no external interlock on the bench
        Entry("SYSTem:ALERt", query=lambda _: NO_ALERTS),
        Entry("SYSTem:VERSion", query=lambda _: FIRMWARE),
        Entry("SYSTem:CODe", query=lambda _: PRODUCT_CODE),
        Entry("SPECial:SHUTdown", set=lambda _: t.shutdown()),
        Entry("SPECial:REBoot", set=lambda _: t.reboot()),
    ]
