"""The switch's command language: a SCPI-style line protocol, shared by controller and SDK.

A line holds one or more commands joined by ``;``. A command is a header of colon-separated
mnemonics (``ROUTe:CONNect``: the upper-case part is the short form, the whole word the long
form; case-insensitive; a leading ``:`` is allowed and every header is absolute), or an IEEE
488.2 common command (``*IDN?``); a ``?`` makes it a query; arguments follow after white space,
separated by commas. Ports, channels and other ids are 0-based.

Arguments:

- numbers: ``5``, ``-2.5``, ``1e-3``, optionally with a unit suffix converted to the
  parameter's unit (``12.5mA``, ``0.01 A``; the prefixes ``K``, ``M`` (milli), ``U``, ``N``),
  or ``MIN`` / ``MAX`` / ``DEF``;
- booleans: ``ON``, ``OFF``, ``1``, ``0``;
- names: character data from a fixed set (``BAR``, ``CROSS``);
- strings: ``"quoted"`` or ``'quoted'``;
- lists: any number of integers (``0,5,1,4``) or of numbers (``1.5mA,0,2``), taking the rest
  of the arguments.

The whole line is parsed before anything runs: a line with a syntax error runs nothing. Errors
are :class:`ScpiError` with the standard codes (:data:`MESSAGES`), kept by :class:`ErrorQueue`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

#: Longest accepted line, characters (terminator excluded).
MAX_LINE = 4096
#: Capacity of the error queue; the last slot becomes -350 when it overflows.
QUEUE_SIZE = 16

#: Standard SCPI error messages by code.
MESSAGES = {
    0: "No error",
    -100: "Command error",
    -101: "Invalid character",
    -102: "Syntax error",
    -103: "Invalid separator",
    -104: "Data type error",
    -108: "Parameter not allowed",
    -109: "Missing parameter",
    -113: "Undefined header",
    -120: "Numeric data error",
    -131: "Invalid suffix",
    -141: "Invalid character data",
    -150: "String data error",
    -200: "Execution error",
    -221: "Settings conflict",
    -222: "Data out of range",
    -224: "Illegal parameter value",
    -240: "Hardware error",
    -300: "Device-specific error",
    -310: "System error",
    -330: "Self-test failed",
    -350: "Queue overflow",
    -363: "Input buffer overrun",
}


class ScpiError(Exception):
    """A command or execution error: its SCPI ``code`` and a message saying what was wrong."""

    def __init__(self, code: int, detail: str = "") -> None:
        if code not in MESSAGES:
            raise ValueError(f"unknown SCPI error code {code}")
        self.code = code
        self.detail = detail
        super().__init__(f"{code},{self.text}")

    @property
    def text(self) -> str:
        """The queue entry's quoted string: the standard message, then the detail."""
        message = MESSAGES[self.code] + (f";{self.detail}" if self.detail else "")
        return '"' + message.replace('"', "'") + '"'


class ErrorQueue:
    """The SCPI error queue: first in, first out, :data:`QUEUE_SIZE` entries; when full, the
    newest entry is replaced by -350 (queue overflow) and further errors are dropped."""

    def __init__(self, size: int = QUEUE_SIZE) -> None:
        self._items: deque[ScpiError] = deque()
        self.size = size

    def push(self, error: ScpiError) -> None:
        if len(self._items) < self.size - 1:
            self._items.append(error)
        elif len(self._items) == self.size - 1:
            self._items.append(ScpiError(-350))

    def pop(self) -> ScpiError:
        """The oldest error, or code 0 (no error) when the queue is empty."""
        return self._items.popleft() if self._items else ScpiError(0)

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def codes(self) -> list[int]:
        return [e.code for e in self._items]


Kind = Literal["number", "int", "bool", "name", "string", "list", "numbers"]

_PREFIX = {"": 1.0, "K": 1e3, "M": 1e-3, "U": 1e-6, "N": 1e-9}
#: Units a parameter may declare, with their size in base units.
_UNITS = {
    "mA": ("A", 1e-3),
    "mW": ("W", 1e-3),
    "V": ("V", 1.0),
    "s": ("S", 1.0),
    "ms": ("S", 1e-3),
    "nm": ("M", 1e-9),
    "C": ("CEL", 1.0),
    "dB": ("DB", 1.0),
}
_NUMBER = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)$")
_HEADER = re.compile(r"^(\*[A-Za-z]+\??|:?[A-Za-z][A-Za-z0-9]*(?::[A-Za-z][A-Za-z0-9]*)*\??)$")


@dataclass(frozen=True)
class Param:
    """One argument: its name, kind, inclusive range (numbers), unit, choices (names), and
    whether it may be left out (then ``default``)."""

    name: str
    kind: Kind
    low: float | None = None
    high: float | None = None
    unit: str = ""
    choices: tuple[str, ...] = ()
    default: object = None
    optional: bool = False

    def describe(self) -> str:
        """The parameter for the command reference."""
        if self.kind in ("number", "int", "list", "numbers"):
            what = {"int": "integer", "list": "comma-separated integers"}.get(self.kind, "number")
            if self.kind == "numbers":
                what = "comma-separated numbers"
            rng = f" {_fmt(self.low)} .. {_fmt(self.high)}" if self.low is not None else ""
            unit = f" {self.unit}" if self.unit else ""
            text = f"{what}{rng}{unit}"
        elif self.kind == "bool":
            text = "ON | OFF | 1 | 0"
        elif self.kind == "name":
            text = " | ".join(self.choices)
        else:
            text = "quoted string"
        return text + (f" (optional, default {self.default})" if self.optional else "")


def _fmt(x: float | None) -> str:
    return "" if x is None else (str(int(x)) if float(x).is_integer() else f"{x:g}")


@dataclass(frozen=True)
class Spec:
    """One command of the grammar: header (mnemonic form), parameters, whether it has a set
    form and a query form, what it does, what a query returns, and an example line."""

    header: str
    params: tuple[Param, ...] = ()
    settable: bool = True
    queryable: bool = False
    summary: str = ""
    reply: str = ""
    example: str = ""
    query_params: tuple[Param, ...] = ()
    mnemonics: tuple[tuple[str, str], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        words = self.header.lstrip(":").split(":")
        forms = tuple(
            (
                "".join(ch for ch in w if ch.isupper() or ch.isdigit() or ch == "*").upper(),
                w.upper(),
            )
            for w in words
        )
        object.__setattr__(self, "mnemonics", forms)

    def matches(self, words: Sequence[str]) -> bool:
        return len(words) == len(self.mnemonics) and all(
            w.upper() in forms for w, forms in zip(words, self.mnemonics, strict=True)
        )


@dataclass(frozen=True)
class Command:
    """A parsed command: its spec, whether it is a query, and its converted arguments."""

    spec: Spec
    query: bool
    args: tuple


def split_line(line: str | bytes) -> list[str]:
    """The commands of one line (split at ``;`` outside quotes), checked for length and
    characters; raises :class:`ScpiError` (-363 too long, -101 bad character, -150 open
    quote)."""
    if isinstance(line, bytes):
        try:
            line = line.decode("ascii")
        except UnicodeDecodeError:
            raise ScpiError(-101, "only printable ASCII is understood") from None
    line = line.rstrip("\r\n")
    if len(line) > MAX_LINE:
        raise ScpiError(-363, f"line of {len(line)} characters; at most {MAX_LINE}")
    bad = [ch for ch in line if not (ch.isascii() and (ch.isprintable() or ch == "\t"))]
    if bad:
        raise ScpiError(-101, f"character {bad[0]!r} is not printable ASCII")
    return [p for p in _split(line, ";") if p]


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside quotes, each part stripped."""
    parts, start, quote = [], 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == sep:
            parts.append(text[start:i].strip())
            start = i + 1
    if quote:
        raise ScpiError(-150, "unterminated string")
    parts.append(text[start:].strip())
    return parts


def parse_line(line: str | bytes, grammar: Sequence[Spec]) -> list[Command]:
    """Parse a whole line into commands; the first error raises :class:`ScpiError`."""
    return [parse_command(text, grammar) for text in split_line(line)]


def parse_command(text: str, grammar: Sequence[Spec]) -> Command:
    """Parse one command (no ``;``) against ``grammar``."""
    head, rest = [*text.strip().split(None, 1), ""][:2]
    if not _HEADER.match(head):
        raise ScpiError(-102, f"cannot read header {head!r}")
    query = head.endswith("?")
    words = head.rstrip("?").lstrip(":").split(":")
    spec = next((s for s in grammar if s.matches(words)), None)
    if spec is None:
        raise ScpiError(-113, head)
    if query and not spec.queryable:
        raise ScpiError(-113, f"{head} (no query form)")
    if not query and not spec.settable:
        raise ScpiError(-113, f"{head} (query only: add '?')")
    params = spec.query_params if query else spec.params
    return Command(spec, query, parse_args(rest.strip(), params))


def _split_args(text: str) -> list[str]:
    if not text:
        return []
    out = _split(text, ",")
    if any(not a for a in out):
        raise ScpiError(-103, "empty argument between commas")
    return out


def parse_args(text: str, params: Sequence[Param]) -> tuple:
    """Convert an argument string against ``params`` (a list parameter takes the rest)."""
    raw = _split_args(text)
    args: list[object] = []
    for i, p in enumerate(params):
        if p.kind in ("list", "numbers"):
            if not raw[i:] and not p.optional:
                raise ScpiError(-109, f"{p.name}: {p.describe()}")
            args.append(tuple(_number(a, p, integer=p.kind == "list") for a in raw[i:]))
            return tuple(args)
        if i >= len(raw):
            if not p.optional:
                raise ScpiError(-109, f"{p.name}: {p.describe()}")
            args.append(p.default)
            continue
        args.append(_convert(raw[i], p))
    if len(raw) > len(params):
        raise ScpiError(-108, f"{len(raw)} arguments given, at most {len(params)}")
    return tuple(args)


def _convert(token: str, p: Param) -> object:
    if p.kind in ("number", "int"):
        return _number(token, p, integer=p.kind == "int")
    if p.kind == "bool":
        value = {"ON": True, "OFF": False, "1": True, "0": False}.get(token.upper())
        if value is None:
            raise ScpiError(-104, f"{p.name}: expected ON, OFF, 1 or 0, got {token!r}")
        return value
    if p.kind == "name":
        for choice in p.choices:
            if token.upper() in (choice.upper(), "".join(c for c in choice if c.isupper())):
                return choice.upper()
        raise ScpiError(-141, f"{p.name}: expected {' | '.join(p.choices)}, got {token!r}")
    if len(token) < 2 or token[0] not in "\"'" or token[-1] != token[0]:
        raise ScpiError(-104, f"{p.name}: expected a quoted string, got {token!r}")
    return token[1:-1]


def _number(token: str, p: Param, integer: bool) -> float | int:
    special = {"MIN": p.low, "MAX": p.high, "DEF": p.default}.get(token.upper())
    if token.upper() in ("MIN", "MAX", "DEF"):
        if special is None:
            raise ScpiError(-224, f"{p.name}: {token.upper()} is not defined here")
        value = float(special)  # type: ignore[arg-type]
    else:
        m = _NUMBER.match(token)
        if not m:
            raise ScpiError(-104, f"{p.name}: expected a number, got {token!r}")
        value = float(m.group(1)) * _scale(m.group(2), p)
    if integer:
        if not value.is_integer():
            raise ScpiError(-104, f"{p.name}: expected an integer, got {token!r}")
        value = int(value)
    if (p.low is not None and value < p.low) or (p.high is not None and value > p.high):
        unit = f" {p.unit}" if p.unit else ""
        raise ScpiError(-222, f"{p.name} {value:g}{unit} outside {_fmt(p.low)}..{_fmt(p.high)}")
    return value


def _scale(suffix: str, p: Param) -> float:
    """Factor from a number's unit suffix to the parameter's unit (1 without a suffix)."""
    if not suffix:
        return 1.0
    if p.unit not in _UNITS:
        raise ScpiError(-131, f"{p.name} takes no unit, got {suffix!r}")
    base, size = _UNITS[p.unit]
    s = suffix.upper()
    for prefix, factor in _PREFIX.items():
        if s == prefix + base:
            return factor / size
    raise ScpiError(-131, f"{p.name}: unit {suffix!r} is not a form of {p.unit}")


def format_reply(value: object) -> str:
    """A query reply: numbers as NR1/NR3, booleans 1/0, sequences comma-joined, strings as
    they are (callers quote what needs quoting)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.9g}"
    if isinstance(value, (list, tuple)):
        return ",".join(format_reply(v) for v in value)
    return str(value)


# ------------------------------------------------------------------------------------------------
# the switch's command table

#: Longest dwell time of a schedule step, s.
MAX_DWELL_S = 3600.0


def switch_grammar(
    ports: int, channels: int, rings: int, max_current_mA: float
) -> tuple[Spec, ...]:
    """Every command of a switch with ``ports`` endpoints, ``channels`` heater channels,
    ``rings`` lockable rings and a per-channel limit of ``max_current_mA``; the order is the
    command reference's."""
    port = Param("port", "int", 0, ports - 1)
    ports_list = Param("ports", "list", 0, ports - 1)
    channel = Param("channel", "int", 0, channels - 1)
    current = Param("current", "number", 0, max_current_mA, "mA", default=0.0)
    ring = Param("ring", "int", 0, max(rings - 1, 0))
    return (
        Spec(
            "*IDN", (), False, True, "Identify the switch.", '"maker,model,serial,version"', "*IDN?"
        ),
        Spec(
            "*RST",
            (),
            summary="Reset: routes cleared, heaters off, schedule stopped, rings "
            "unlocked, limits to the hardware's, interlock released. Calibration, the stored "
            "schedule and the error queue are kept.",
            example="*RST",
        ),
        Spec("*CLS", (), summary="Clear the error queue.", example="*CLS"),
        Spec(
            "*OPC",
            (),
            False,
            True,
            "Operation complete: every command runs to completion "
            "before the next is read, so the answer is always 1.",
            "1",
            "*OPC?",
        ),
        Spec(
            "*TST",
            (),
            False,
            True,
            "Self-test: heater read-back and detectors; 0 when it "
            "passes (else 1 and -330 in the queue).",
            "0 | 1",
            "*TST?",
        ),
        Spec(
            "SYSTem:ERRor",
            (),
            False,
            True,
            "Oldest error in the queue, removing it.",
            'code,"message;detail"',
            "SYST:ERR?",
        ),
        Spec(
            "SYSTem:ERRor:COUNt",
            (),
            False,
            True,
            "Number of errors in the queue.",
            "integer",
            "SYST:ERR:COUN?",
        ),
        Spec(
            "SYSTem:PORTs",
            (),
            False,
            True,
            "Number of endpoints (ports) of the switch.",
            "integer",
            "SYST:PORT?",
        ),
        Spec(
            "SYSTem:INTerlock",
            (Param("engaged", "bool"),),
            True,
            True,
            "Engage (ON) or release (OFF) the interlock. Engaging turns every heater off and "
            "clears the routes; while engaged, any command that would drive a heater fails "
            "with -221.",
            "0 | 1",
            "SYST:INT OFF",
        ),
        Spec(
            "SYSTem:POWer:LIMit",
            (Param("budget", "number", 0, 1e7, "mW"),),
            True,
            True,
            "Total heater power budget, at most the hardware's. A configuration above it is "
            "refused before any heater is written.",
            "number, mW",
            "SYST:POW:LIM 2000 mW",
        ),
        Spec(
            "SYSTem:POWer",
            (),
            False,
            True,
            "Total heater power now, mW.",
            "number, mW",
            "SYST:POW?",
        ),
        Spec(
            "SYSTem:CURRent:LIMit",
            (Param("limit", "number", 0, max_current_mA, "mA"),),
            True,
            True,
            "Per-channel current limit, at most the hardware's.",
            "number, mA",
            "SYST:CURR:LIM MAX",
        ),
        Spec(
            "SYSTem:TEMPerature", (), False, True, "Chip temperature, C.", "number, C", "SYST:TEMP?"
        ),
        Spec(
            "SYSTem:TIME",
            (),
            False,
            True,
            "Hardware time (modeled on the emulator) of the "
            "last command (not query): heater writes, settling and detector reads; 0 when it "
            "touched no hardware, s.",
            "number, s",
            "SYST:TIME?",
        ),
        Spec(
            "SYSTem:TIME:TOTal",
            (),
            False,
            True,
            "Hardware time spent since power-on, s.",
            "number, s",
            "SYST:TIME:TOT?",
        ),
        Spec(
            "STATus:OPERation",
            (),
            False,
            True,
            "Operation condition bits: 1 a matching is "
            "applied, 2 a schedule is running, 4 every requested ring is locked (and at least "
            "one is).",
            "integer",
            "STAT:OPER?",
        ),
        Spec(
            "STATus:QUEStionable",
            (),
            False,
            True,
            "Questionable condition bits: 1 not "
            "calibrated, 2 interlock engaged, 4 heaters set by hand (routes not guaranteed), 8 "
            "a locked ring has drifted off lock, 16 a hardware fault could not be rolled back.",
            "integer",
            "STAT:QUES?",
        ),
        Spec(
            "ROUTe:CONNect",
            (port, Param("peer", "int", 0, ports - 1)),
            summary="Connect two dark ports, keeping every other circuit.",
            example="ROUT:CONN 0,3",
        ),
        Spec(
            "ROUTe:DISConnect",
            (port,),
            summary="Disconnect the pair that holds this port.",
            example="ROUT:DISC 0",
        ),
        Spec(
            "ROUTe:CLEar",
            (),
            summary="Disconnect every pair (heaters of the cells to 0 mA).",
            example="ROUT:CLE",
        ),
        Spec(
            "ROUTe:MATChing",
            (replace(ports_list, optional=True, default=()),),
            True,
            True,
            "Apply a whole matching, given as port pairs a,b,c,d,... (pairs (a,b), (c,d)); "
            "nothing is changed unless all of it can be applied. The query gives the applied "
            "pairs, sorted.",
            "comma-separated ports, pairwise",
            "ROUT:MATC 0,1,2,3",
        ),
        Spec(
            "ROUTe:REPLace",
            (port, Param("spares", "list", 0, ports - 1)),
            summary="Failover: give the port's peer one of the dark spares instead (the one "
            "that disturbs fewest live circuits, then switches fewest cells), re-routing only "
            "that circuit where the mesh allows; ROUT:MATC? shows the spare chosen, "
            "ROUT:REPL:DIST? the live circuits it disturbed.",
            example="ROUT:REPL 1,5,7",
        ),
        Spec(
            "ROUTe:REPLace:DISTurbed",
            (),
            False,
            True,
            "Sources of the live circuits (other than the replaced ones) whose cells the last "
            "ROUT:REPL switched; empty when none.",
            "comma-separated ports",
            "ROUT:REPL:DIST?",
        ),
        Spec(
            "ROUTe:PATH",
            (),
            False,
            True,
            "The circuit carrying a port's light: the port it "
            "reaches, its predicted insertion loss (dB) and the cells it crosses, in order.",
            "peer,loss_dB,cell,cell,...",
            "ROUT:PATH? 0",
            query_params=(port,),
        ),
        Spec(
            "HEATer:CURRent",
            (channel, current),
            True,
            True,
            "Set one heater channel, or read "
            "it back. Setting a heater by hand marks the routes as not guaranteed.",
            "number, mA",
            "HEAT:CURR 0,1.5mA",
            query_params=(channel,),
        ),
        Spec(
            "HEATer:ALL",
            (Param("currents", "numbers", 0, max_current_mA, "mA"),),
            True,
            True,
            f"Set all {channels} channels at once (atomic), or read them all back.",
            "comma-separated numbers, mA",
            "HEAT:ALL?",
        ),
        Spec(
            "HEATer:COUNt", (), False, True, "Number of heater channels.", "integer", "HEAT:COUN?"
        ),
        Spec(
            "CALibration:RUN",
            (),
            summary="Self-calibrate through the chip's detectors (locks "
            "the rings first); the result is used at once and kept until power-off; "
            "CAL:SAVE stores it. The applied matching is re-applied with it.",
            example="CAL:RUN",
        ),
        Spec(
            "CALibration:SAVE",
            (),
            summary="Store the calibration in non-volatile memory.",
            example="CAL:SAVE",
        ),
        Spec(
            "CALibration:LOAD",
            (),
            summary="Use the stored calibration (re-applies the matching).",
            example="CAL:LOAD",
        ),
        Spec(
            "CALibration:STATus",
            (),
            False,
            True,
            "Whether a calibration is in use, its chip id, creation time and whether it is stored.",
            '0|1,"chip id","ISO 8601 time",0|1',
            "CAL:STAT?",
        ),
        Spec(
            "RING:LOCK",
            (ring,),
            summary="Lock a ring to the laser: sweep its heater, hold the drop peak.",
            example="RING:LOCK 0",
        ),
        Spec(
            "RING:UNLock",
            (ring,),
            summary="Release a ring (its heater to 0 mA).",
            example="RING:UNL 0",
        ),
        Spec(
            "RING:STATus",
            (),
            False,
            True,
            "Whether a ring is locked, and its lock error "
            "estimated from the drop power now against the peak found when locking, nm.",
            "0|1,error_nm",
            "RING:STAT? 0",
            query_params=(ring,),
        ),
        Spec("RING:COUNt", (), False, True, "Number of lockable rings.", "integer", "RING:COUN?"),
        Spec(
            "SCHedule:ADD",
            (
                Param("dwell", "number", 1e-6, MAX_DWELL_S, "s"),
                replace(ports_list, optional=True, default=()),
            ),
            summary="Append a step: dwell time, then the matching's port pairs. The matching "
            "must be realizable. The schedule is stored.",
            example="SCH:ADD 2ms,0,1,2,3",
        ),
        Spec("SCHedule:COUNt", (), False, True, "Number of steps.", "integer", "SCH:COUN?"),
        Spec("SCHedule:STARt", (), summary="Apply the first step and run.", example="SCH:STAR"),
        Spec(
            "SCHedule:STEP",
            (),
            summary="Apply the next step (the first after SCH:STAR); wraps around.",
            example="SCH:STEP",
        ),
        Spec("SCHedule:STOP", (), summary="Stop; the applied matching stays.", example="SCH:STOP"),
        Spec(
            "SCHedule:STATus",
            (),
            False,
            True,
            "Running, index of the applied step, number of "
            "steps, duty cycle so far (dwell / (dwell + reconfiguration) over the steps "
            "applied since SCH:STAR).",
            "0|1,index,steps,duty",
            "SCH:STAT?",
        ),
        Spec("SCHedule:CLEar", (), summary="Stop and empty the schedule.", example="SCH:CLE"),
    )


#: Errors every command may put in the queue, for the reference.
_COMMON_ERRORS = (
    "-101/-102/-103/-113/-150/-363 for a malformed line (nothing on the line runs); "
    "-104/-108/-109/-120/-131/-141/-222/-224 for a bad argument"
)


_APPLY = (
    "-221 not calibrated, or interlock engaged; -222 a current or the power budget would be "
    "exceeded (nothing written); -240 the hardware failed part-way (rolled back)"
)
#: What each command adds to the queue when it cannot run (beyond the argument errors).
ERRORS = {
    "SYSTem:POWer:LIMit": "-222 above the hardware's budget; -221 the heaters draw more now",
    "SYSTem:CURRent:LIMit": "-221 a heater carries more now",
    "ROUTe:CONNect": "-221 a port is connected already, or no path is free; " + _APPLY,
    "ROUTe:DISConnect": "-221 the port is dark; " + _APPLY,
    "ROUTe:CLEar": _APPLY,
    "ROUTe:MATChing": "-109 an odd number of ports; -224 a port twice; -221 not realizable; "
    + _APPLY,
    "ROUTe:PATH": "-221 the port is dark",
    "ROUTe:REPLace": "-221 the port is dark or a spare is not; -224 a spare twice; -221 no "
    "path; " + _APPLY,
    "HEATer:CURRent": _APPLY,
    "HEATer:ALL": "-109/-108 too few/many currents; " + _APPLY,
    "CALibration:RUN": "-221 not a feed-forward mesh, or interlock engaged; -200 a fit failed "
    "(calibration unchanged); -240 hardware failure",
    "CALibration:SAVE": "-221 nothing to save; -310 no store, or it failed",
    "CALibration:LOAD": "-221 nothing stored, or for another chip; -310 the stored file is "
    "unreadable",
    "RING:LOCK": "-222 no such ring; -240 no resonance seen; " + _APPLY,
    "RING:UNLock": "-222 no such ring; " + _APPLY,
    "RING:STATus": "-222 no such ring",
    "SCHedule:ADD": "-109 an odd number of ports; -224 a port twice; -221 not realizable; "
    "-310 the store failed",
    "SCHedule:STARt": "-221 the schedule is empty; " + _APPLY,
    "SCHedule:STEP": "-221 not running; " + _APPLY,
    "*RST": "-240 the hardware failed (state rolled back)",
}


def command_reference(grammar: Sequence[Spec], intro: str) -> str:
    """The command reference (Markdown) of ``grammar``: every command, its arguments with
    ranges and units, its reply and an example."""
    lines = [intro.rstrip(), "", f"Errors of every command: {_COMMON_ERRORS}.", ""]
    for spec in grammar:
        forms = (["set"] if spec.settable else []) + (["query"] if spec.queryable else [])
        lines += [f"## `{spec.header}`", "", f"{spec.summary} ({', '.join(forms)})", ""]
        if spec.settable and spec.params:
            lines += [f"- `{p.name}`: {p.describe()}" for p in spec.params]
        if spec.queryable and spec.query_params:
            lines += [f"- query `{p.name}`: {p.describe()}" for p in spec.query_params]
        if spec.queryable:
            lines.append(f"- reply: `{spec.reply}`")
        if spec.header in ERRORS:
            lines.append(f"- errors: {ERRORS[spec.header]}")
        lines += ["", f"Example: `{spec.example}`", ""]
    return "\n".join(lines)
