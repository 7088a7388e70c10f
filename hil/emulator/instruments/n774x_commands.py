"""The N774x multiport power meters' command table (:func:`entries`), in its own module beside
:mod:`hil.emulator.instruments.power_meters` (the state and what acts on the light) because the
manual's command list alone is over 100 commands: a module each keeps both under ~500 lines.

Each :class:`~hil.emulator.instruments.scpi.Entry` is one command of the *Keysight N77xx Series
Programming Guide*, Edition 7, March 2015 ("PG", pages of that edition) or of the *Keysight
N774xC Series Multiport Power Meter Programming Guide* ("C"), with the manual's syntax
(optional nodes in brackets). The IEEE 488.2 commands, ``SYST:ERR?`` and the ``STATus``
subsystem are the SCPI base's (:class:`~hil.emulator.instruments.scpi.ScpiInstrument`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments.scpi import UNIT_CODES, Entry, float32_block, unit_param
from hil.instruments.power_meters import N7744A_AVERAGING_S, N7744A_MAX_LOG_POINTS

#: The meter (:class:`hil.emulator.instruments.power_meters.PowerMeterN7744A`, which imports
#: this module: not imported back).
PowerMeterN7744A = Any

SENS = "SENSe[:CHANnel]"
#: The wavelength (PG p. 138): DEF is half the sum of the ends, 1450 nm, not the *RST value.
WAVELENGTH = Param("wavelength", "number", 1250.0, 1650.0, "nm", default=1450.0)
LIMIT = Param("limit", "name", choices=("MINimum", "MAXimum", "DEFault"), optional=True)
TIME = Param("time", "number", *N7744A_AVERAGING_S, "s", default=1e-4)
#: Function times (PG p. 126): a stability run may last days.
LONG_TIME = Param("time", "number", 1e-6, 1e6, "s", default=1.0)
POINTS = Param("points", "int", 1, N7744A_MAX_LOG_POINTS, default=100)
COUNT = Param("count", "int", 0, 2**31 - 1)
BOOL = Param("state", "bool")


@dataclass
class Interface:
    """The LAN and GPIB parameters (PG pp. 69-77), kept and read back: those set (pending),
    those in use (current, after RESTart or a reboot) and those saved; DHCP and AutoIP on, the
    host name ``A-<model>-<last 6 of the serial>``, GPIB address 20."""

    model: str
    serial: str
    gpib: int = 20
    set: dict[str, object] = field(default_factory=dict)
    current: dict[str, object] = field(default_factory=dict)
    saved: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.action("RESET")

    @property
    def mac(self) -> str:
        return "0030D3" + "".join(f"{ord(ch) % 256:02X}" for ch in self.serial[-3:])

    def factory(self) -> dict[str, object]:
        return {
            "dhcp": True,
            "autoip": True,
            "host": f"A-{self.model}-{self.serial[-6:]}",
            "domain": "",
            "ip": "169.254.58.10",
            "mask": "255.255.0.0",
            "gateway": "0.0.0.0",
        }

    def put(self, key: str, value: object) -> None:
        """Set a parameter (pending until RESTart): an address is ``n.n.n.n`` (-224), a
        string at most 79 characters (-223)."""
        if key in ("ip", "mask", "gateway"):
            parts = str(value).split(".")
            if len(parts) != 4 or not all(p.isdigit() and int(p) <= 255 for p in parts):
                raise ScpiError(-224, f"{value!r} is not an address n.n.n.n")
        if isinstance(value, str) and len(value) > 79:
            raise ScpiError(-223, "at most 79 characters")
        self.set[key] = value

    def action(self, what: str) -> None:
        """RESTART: the set parameters go in use; SAVE: saved; CANCEL: back to those in use;
        REBOOT: the saved ones set and in use; RESET: the factory's everywhere."""
        if what == "RESTART":
            self.current = dict(self.set)
        elif what == "SAVE":
            self.saved = dict(self.set)
        elif what == "CANCEL":
            self.set = dict(self.current)
        elif what == "REBOOT":
            self.set, self.current = dict(self.saved), dict(self.saved)
        else:
            self.set, self.current, self.saved = self.factory(), self.factory(), self.factory()


def _quoted(value: object) -> str:
    return f'"{value}"'  # PG p. 20: a string reply is in double quotes


def entries(m: PowerMeterN7744A) -> list[Entry]:
    """Every command of the N774x manuals on meter ``m``."""
    return [*_sense(m), *_measure(m), *_trigger(m), *_slot(m), *_system(m), *_settings(m)]


def _setting(m: PowerMeterN7744A, name: str, params: tuple[Param, ...], header: str) -> Entry:
    """A ``:SENSe`` setting kept per channel and read back."""
    return Entry(
        header,
        params,
        set=lambda n, v: m.set_setting(n, name, v),
        query=lambda n: getattr(m.settings(n), name),
    )


def _wavelength(m: PowerMeterN7744A, n: int, limit: str | None) -> float:
    ends = {"MINIMUM": 1250.0, "MAXIMUM": 1650.0, "DEFAULT": 1450.0}
    return 1e-9 * (ends[limit] if limit else m.settings(n).wavelength_nm)


def _set_all(m: PowerMeterN7744A, name: str, value: object) -> None:
    for n in range(1, m.channels + 1):
        m.set_setting(n, name, value)


def _sense(m: PowerMeterN7744A) -> list[Entry]:
    """PG pp. 121-139 and C p. 88."""
    unit = unit_param(("DBM", "Watt", "0", "1"))
    power = Param("reference value", "number", unit="mW")
    return [
        Entry(
            f"{SENS}:POWer:WAVelength",
            (WAVELENGTH,),
            set=lambda n, nm: m.set_setting(n, "wavelength_nm", nm),
            query=lambda n, limit: _wavelength(m, n, limit),
            query_params=(LIMIT,),
        ),
        Entry(
            f"{SENS}:POWer:WAVelength:ALL",
            (WAVELENGTH,),
            set=lambda n, nm: _set_all(m, "wavelength_nm", nm),
            query=lambda n, limit: _wavelength(m, n, limit),
            query_params=(LIMIT,),
        ),
        Entry(
            f"{SENS}:POWer:UNIT",
            (unit,),
            set=lambda n, u: m.set_setting(n, "unit", UNIT_CODES[u]),
            query=lambda n: m.settings(n).unit,
        ),
        Entry(
            f"{SENS}:POWer:UNIT:ALL", (unit,), set=lambda n, u: _set_all(m, "unit", UNIT_CODES[u])
        ),
        Entry(
            f"{SENS}:POWer:UNIT:ALL:CSV",
            query=lambda n: [m.settings(k).unit for k in range(1, m.channels + 1)],
        ),
        _setting(m, "averaging_s", (TIME,), f"{SENS}:POWer:ATIMe"),
        Entry(
            f"{SENS}:POWer:RANGe[:UPPer]",
            (Param("range", "number", m.range_low_dbm, 10.0, default=10.0),),
            set=m.set_range,
            query=lambda n: m.settings(n).range_dbm,
        ),
        _setting(m, "range_auto", (BOOL,), f"{SENS}:POWer:RANGe:AUTO"),
        _setting(m, "gain_auto", (BOOL,), f"{SENS}:POWer:GAIN:AUTO"),
        _setting(
            m,
            "correction_db",
            (Param("factor", "number", -200.0, 200.0, "dB"),),
            f"{SENS}:CORRection[:LOSS][:INPut][:MAGNitude]",
        ),
        Entry(
            f"{SENS}:CORRection:COLLect:ZERO",
            set=m.zero,
            query=lambda n: m.state[n - 1].zero_status,
        ),
        Entry(
            f"{SENS}:CORRection:COLLect:ZERO:ALL",
            set=lambda n: m.zero_all(),
            query=lambda n: m.zero_all_status(),
        ),
        Entry(
            f"{SENS}:POWer:REFerence",
            (Param("mode", "name", choices=("TOMODule", "TOREF")), power),
            set=m.set_reference,
            query=m.reference,
            query_params=(Param("mode", "name", choices=("TOMODule", "TOREF")),),
        ),
        Entry(
            f"{SENS}:POWer:REFerence:DISPlay",
            set=lambda n: m.set_setting(n, "toref_mW", m.measure(n)),
        ),
        _setting(m, "reference_state", (BOOL,), f"{SENS}:POWer:REFerence:STATe"),
        Entry(
            f"{SENS}:POWer:REFerence:STATe:RATio",
            (Param("reference slot", "int", 1, 255), Param("channel", "int", 0, 255)),
            set=m.set_ratio,
            query=lambda n: [m.settings(n).reference_slot, m.settings(n).reference_channel],
        ),
        *_functions(m),
    ]


def _functions(m: PowerMeterN7744A) -> list[Entry]:
    """The data-acquisition functions (PG pp. 123-133)."""
    minmax = Param("mode", "name", choices=("CONTinuous", "CONTinous", "WINDow", "REFResh"))
    function = Param("function", "name", choices=("LOGGing", "STABility", "MINMax"))
    return [
        Entry(
            f"{SENS}:FUNCtion:PARameter:LOGGing",
            (POINTS, TIME),
            set=m.set_logging,
            query=lambda n: [m.settings(n).points, m.settings(n).function_averaging_s],
        ),
        Entry(
            f"{SENS}:FUNCtion:PARameter:STABility",
            (LONG_TIME, LONG_TIME, TIME),
            set=m.set_stability,
            query=lambda n: [
                m.settings(n).points * m.settings(n).period_s,
                m.settings(n).period_s,
                m.settings(n).function_averaging_s,
            ],
        ),
        Entry(
            f"{SENS}:FUNCtion:PARameter:MINMax",
            (minmax, POINTS),
            set=m.set_minmax,
            query=lambda n: f"{m.settings(n).minmax_mode},{m.settings(n).points}",
        ),
        Entry(
            f"{SENS}:FUNCtion:STATe",
            (function, Param("action", "name", choices=("STARt", "STOP"))),
            set=m.start_function,
            query=m.function_state,
        ),
        Entry(f"{SENS}:FUNCtion:RESult", query=m.result),
        Entry(f"{SENS}:FUNCtion:RESult:BUFA", query=lambda n: m.result(n, 0)),
        Entry(f"{SENS}:FUNCtion:RESult:BUFB", query=lambda n: m.result(n, 1)),
        Entry(f"{SENS}:FUNCtion:RESult:INDex", query=m.loop_index),
        Entry(
            f"{SENS}:FUNCtion:LOOP",
            (COUNT,),
            set=lambda n, k: (m.check_idle(n), m.set_setting(n, "loops", k)),
            query=lambda n: m.settings(n).loops,
        ),
    ]


def _all_W(m: PowerMeterN7744A, fetch: bool) -> list[float]:
    """Every channel's reading in W, whatever its unit (PG pp. 115, 117)."""
    take = m.fetched_mW if fetch else m.measure
    return [1e-3 * take(k) for k in range(1, m.channels + 1)]


def _slots(m: PowerMeterN7744A) -> bytes:
    """Slot and channel numbers of every channel, 2-byte unsigned pairs (PG p. 116)."""
    pairs = [v for k in range(1, m.channels + 1) for v in (k, 1)]
    return float32_block(np.array(pairs), dtype="<u2")


def _measure(m: PowerMeterN7744A) -> list[Entry]:
    """FETCh, READ and INITiate (PG pp. 114-118, C p. 69)."""
    out: list[Entry] = []
    for root, fetch in (("FETCh", True), ("READ", False)):
        base = f"{root}[:CHANnel][:SCALar]:POWer[:DC]"
        take = m.fetched_mW if fetch else m.measure
        out += [
            Entry(base, query=lambda n, take=take: m.in_unit(n, take(n))),
            Entry(
                f"{base}:ALL",
                query=lambda n, fetch=fetch: float32_block(_all_W(m, fetch)),
            ),
            Entry(f"{base}:ALL:CSV", query=lambda n, fetch=fetch: _all_W(m, fetch)),
            Entry(f"{base}:ALL:CONFig", query=lambda n: _slots(m)),
        ]
    return [
        *out,
        Entry("INITiate[:CHANnel][:IMMediate]", set=m.software_trigger),
        Entry(
            "INITiate[:CHANnel]:CONTinuous",
            (BOOL,),
            set=lambda n, on: setattr(m.state[n - 1], "continuous", on),
            query=lambda n: m.state[n - 1].continuous,
        ),
    ]


def _channel_field(m: PowerMeterN7744A, name: str, param: Param, header: str, short=None):
    """A channel field kept and read back (names stored in their short form)."""
    return Entry(
        header,
        (param,),
        set=lambda n, v: setattr(m.state[n - 1], name, short(v) if short else v),
        query=lambda n: getattr(m.state[n - 1], name),
    )


def _short(choices: tuple[str, ...]):
    forms = {c.upper(): "".join(ch for ch in c if ch.isupper()) or c for c in choices}
    return lambda v: forms[v]


def _trigger(m: PowerMeterN7744A) -> list[Entry]:
    """The TRIGger subsystem (PG pp. 140-144; DELay, INPut:EDGE, OFFSet: C)."""
    inputs = ("IGNore", "SMEasure", "CMEasure", "MMEasure")
    outputs = ("DISabled", "AVGover", "MEASure")
    modes = ("DISabled", "DEFault", "PASSthrough", "LOOPback")
    numbers = {"0": "DIS", "1": "DEF", "2": "PASS", "3": "LOOP"}
    mode = Param("mode", "name", choices=(*modes, "0", "1", "2", "3"))
    return [
        _channel_field(
            m,
            "trigger_input",
            Param("response", "name", choices=inputs),
            "TRIGger[:CHANnel]:INPut",
            _short(inputs),
        ),
        _channel_field(
            m,
            "trigger_output",
            Param("response", "name", choices=outputs),
            "TRIGger[:CHANnel]:OUTPut",
            _short(outputs),
        ),
        Entry(
            "TRIGger:CONFiguration",
            (mode,),
            set=lambda n, v: setattr(
                m, "trigger_configuration", numbers.get(v) or _short(modes)(v)
            ),
            query=lambda n: m.trigger_configuration,
        ),
        Entry(
            "TRIGger",
            (Param("node", "name", choices=("NODEA", "NODEB", "1", "2")),),
            set=lambda n, node: m.hardware_trigger(node),
        ),
        _channel_field(m, "trigger_delay", COUNT, "TRIGger[:CHANnel]:DELay"),
        _channel_field(
            m, "trigger_edge", Param("edge", "int", 0, 1), "TRIGger[:CHANnel]:INPut:EDGE"
        ),
        _channel_field(m, "trigger_offset", COUNT, "TRIGger[:CHANnel]:OFFSet"),
    ]


def _slot(m: PowerMeterN7744A) -> list[Entry]:
    """The root layer's SLOT commands (PG pp. 82-83)."""
    table = m.response_table()
    return [
        Entry("SLOT[:HEAD]:IDN", query=lambda n: m.idn),
        Entry("SLOT[:HEAD]:OPTions", query=lambda n: "NO CONNECTOR OPTION, NO INSTRUMENT OPTIONS"),
        Entry(
            "SLOT[:HEAD]:WAVelength:RESPonse",
            query=lambda n: float32_block(np.array(table).ravel()),
        ),
        # the manual ends each pair with a line feed, which on a socket ends the reply: the
        # pairs are comma-separated here
        Entry(
            "SLOT[:HEAD]:WAVelength:RESPonse:CSV",
            query=lambda n: [float(v) for pair in table for v in pair],
        ),
        Entry("SLOT[:HEAD]:WAVelength:RESPonse:SIZE", query=lambda n: len(table)),
    ]


def _system(m: PowerMeterN7744A) -> list[Entry]:
    """The SYSTem subsystem (PG pp. 67-77)."""
    eth = "SYSTem:COMMunicate:ETHernet"
    text = Param("text", "string")
    date = (Param("year", "int", 0, 9999), Param("month", "int", 0, 12), Param("day", "int", 0, 31))
    time = (
        Param("hour", "int", 0, 23),
        Param("minute", "int", 0, 59),
        Param("second", "int", 0, 59),
    )
    out = [
        Entry(
            "SYSTem:DATE",
            date,
            set=lambda n, *v: setattr(m, "date", v),
            query=lambda n: list(m.date),
        ),
        Entry(
            "SYSTem:TIME",
            time,
            set=lambda n, *v: setattr(m, "time", v),
            query=lambda n: list(m.time),
        ),
        Entry("SYSTem:HELP:HEADers", query=lambda n: ",".join(e.header for e in entries(m))),
        Entry("SYSTem:LXI:IDN", (BOOL,), set=lambda n, on: setattr(m, "lxi_identify", on)),
        Entry("SYSTem:PRESet", set=lambda n: m.reset()),
        Entry("SYSTem:REBoot", set=m.reboot),
        Entry("SYSTem:VERSion", query=lambda n: "1990.0"),
        Entry(
            "SYSTem:COMMunicate:GPIB[:SELF]:ADDRess",
            (Param("address", "int", 0, 30),),
            set=lambda n, a: setattr(m.interface, "gpib", a),
            query=lambda n: m.interface.gpib,
        ),
        Entry(f"{eth}:MACaddress", query=lambda n: _quoted(m.interface.mac)),
    ]
    for node, key in (("DHCP", "dhcp"), ("AUTOip", "autoip")):
        out.append(
            Entry(
                f"{eth}:{node}:ENABle",
                (BOOL,),
                set=lambda n, on, key=key: m.interface.put(key, on),
                query=lambda n, key=key: m.interface.set[key],
            )
        )
    for node, key in (
        ("IPADdress", "ip"),
        ("SMASk", "mask"),
        ("DGATeway", "gateway"),
        ("HOSTname", "host"),
        ("DOMainname", "domain"),
    ):
        out += [
            Entry(
                f"{eth}:{node}",
                (text,),
                set=lambda n, v, key=key: m.interface.put(key, v),
                query=lambda n, key=key: _quoted(m.interface.set[key]),
            ),
            Entry(
                f"{eth}:{node}:CURRent",
                query=lambda n, key=key: _quoted(m.interface.current[key]),
            ),
        ]
    for node, what in (
        ("RESet", "RESET"),
        ("RESTart", "RESTART"),
        ("SAVE", "SAVE"),
        ("CANCel", "CANCEL"),
    ):
        out.append(Entry(f"{eth}:{node}", set=lambda n, what=what: m.interface.action(what)))
    return out


def _settings(m: PowerMeterN7744A) -> list[Entry]:
    """Stored measurement settings (PG pp. 78-80)."""
    place = (Param("index", "int", 1, m.setting_places),)
    root = "CONFigure:MEASurement:SETTing"
    return [
        Entry(f"{root}:ACTual", query=m.actual_setting),
        Entry(f"{root}:NUMBer", query=lambda n: m.setting_places),
        Entry(f"{root}:PRESet", set=m.preset_setting),
        Entry(f"{root}:CANCel", set=m.cancel_setting),
        Entry(f"{root}:RECall", place, set=m.recall_setting),
        Entry(f"{root}:SAVe", place, set=m.save_setting),  # PG p. 80 writes "sav 1"
        Entry(f"{root}:ERASe", place, set=m.erase_setting),
    ]
