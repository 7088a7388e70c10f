"""The switch's command language: a SCPI-style line protocol, shared by controller and SDK.

A line holds one or more commands joined by ``;``. A command is a header of colon-separated
mnemonics (``ROUTe:CONNect``: the upper-case part is the short form, the whole word the long
form; case-insensitive; a leading ``:`` is allowed and every header is absolute), or an IEEE
488.2 common command (``*IDN?``); a ``?`` makes it a query; arguments follow after white space,
separated by commas. Ports, channels and other ids are 0-based.

Arguments:

- numbers: ``5``, ``-2.5``, ``1e-3``, optionally with a unit suffix converted to the
  parameter's unit (``12.5mA``, ``0.01 A``; the prefixes ``K``, ``M`` (milli), ``U``, ``N``),
  or ``MIN`` / ``MAX`` / ``DEF`` (the parameter's range ends and default; -224 where it has
  none). At most :data:`MAX_DIGITS` significant digits (-124) and an exponent of at most
  :data:`MAX_EXPONENT` (-123);
- integers (ports, channels, rings): a number whose exact decimal value is an integer, so
  ``2``, ``2.0`` and ``20e-1`` are 2 while ``2.5`` and ``0.99999999999999999`` are -104
  (never rounded); no unit suffix;
- booleans: ``ON``, ``OFF``, ``1``, ``0``;
- names: character data from a fixed set (``BAR``, ``CROSS``);
- strings: ``"quoted"`` or ``'quoted'``;
- lists: any number of integers (``0,5,1,4``) or of numbers (``1.5mA,0,2``), taking the rest
  of the arguments; ``MIN`` and ``MAX`` stand for an element's range ends, ``DEF`` for none;
- groups: repeated fields, each group ending in a count ``n`` and ``n`` values
  (``2ms,4,0,1,2,3,1ms,2,0,2``), taking the rest of the arguments.

The whole line is parsed before anything runs: a line with a syntax error runs nothing. Errors
are :class:`~firmware.scpi_errors.ScpiError` with the standard codes, kept by an
:class:`~firmware.scpi_errors.ErrorQueue` (:mod:`firmware.scpi_errors`).
Everything is bounded: :data:`MAX_LINE` characters a line (-363), :data:`MAX_COMMANDS`
commands a line and :data:`MAX_ARGUMENTS` arguments a command (-223), and parsing takes time
linear in the line's length.

A device declares its commands on the methods that handle them (:mod:`firmware.declarations`);
a client writes a declared command's line with :func:`command_line`, and every SCPI client (the
SDK, the instrument drivers) reads the error queue with
:func:`~firmware.scpi_errors.drain_errors`.

The module is over 500 lines on purpose: the parameter kinds, their reader (:func:`parse_line`)
and their writer (:func:`command_line`) must agree on every kind, and are read side by side.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Literal

from firmware.scpi_errors import ScpiError
from photonics.errors import SettingsError

#: Longest accepted line, characters (terminator excluded): a whole schedule of a 64-port
#: switch (``SCH:LOAD``, 64 steps, about 13,000 characters) fits in one.
MAX_LINE = 16384
#: Most commands on one line (-223 beyond).
MAX_COMMANDS = 64
#: Most arguments of one command (-223 beyond); a whole schedule of a 64-port switch is 4,224.
MAX_ARGUMENTS = 5000
#: Most significant digits of a number (-124 beyond) and largest exponent (-123), as IEEE 488.2.
MAX_DIGITS = 255
MAX_EXPONENT = 32000
Kind = Literal["number", "int", "bool", "name", "string", "list", "numbers", "groups"]
#: The kinds that take the rest of the arguments.
_LISTS = ("list", "numbers", "groups")

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
# sign, whole digits, fraction digits, exponent, unit suffix: each part stops where a character
# of another class starts, so a failed match backtracks over each character once (linear time)
_NUMBER = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*([A-Za-z]*)")
_HEADER = re.compile(r"^(\*[A-Za-z]+\??|:?[A-Za-z][A-Za-z0-9]*(?::[A-Za-z][A-Za-z0-9]*)*\??)$")


@dataclass(frozen=True)
class Bound:
    """A range end known only when a device is built: its ``name``d size (``ports``,
    ``channels``, ...) plus ``offset``, and at least ``floor``. :func:`bind` resolves it."""

    name: str
    offset: float = 0.0
    floor: float | None = None

    def resolve(self, sizes: Mapping[str, float]) -> float:
        value = sizes[self.name] + self.offset
        return value if self.floor is None else max(value, self.floor)


@dataclass(frozen=True)
class Param:
    """One argument: its name, kind, inclusive range (numbers; an end may be a :class:`Bound`
    until the grammar is bound to a device), unit, choices (names), whether it may be left
    out (then ``default``), and for ``groups`` the ``fields`` of a group: the leading ones,
    then the last, of which a group holds a counted number."""

    name: str
    kind: Kind
    low: float | Bound | None = None
    high: float | Bound | None = None
    unit: str = ""
    choices: tuple[str, ...] = ()
    default: object = None
    optional: bool = False
    fields: tuple[Param, ...] = ()

    def describe(self) -> str:
        """The parameter for the command reference."""
        if self.kind == "groups":
            *heads, item = self.fields
            text = "groups of " + ", ".join(f"{f.name} ({f.describe()})" for f in heads)
            text += f", a count n, then n values of {item.name} ({item.describe()})"
        elif self.kind in ("number", "int", "list", "numbers"):
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

    def bound(self, sizes: Mapping[str, float]) -> Param:
        """This parameter with each :class:`Bound` named in ``sizes`` resolved (its fields'
        too); the others are kept."""
        low, high = (
            x.resolve(sizes) if isinstance(x, Bound) and x.name in sizes else x
            for x in (self.low, self.high)
        )
        fields = tuple(f.bound(sizes) for f in self.fields)
        return replace(self, low=low, high=high, fields=fields)

    def outside(self, value: float | Decimal) -> bool:
        """Whether ``value`` is outside this parameter's range (an unresolved end is no end)."""
        low, high = (x if isinstance(x, numbers.Real) else None for x in (self.low, self.high))
        return (low is not None and value < low) or (high is not None and value > high)


def _fmt(x: float | Bound | None) -> str:
    if isinstance(x, Bound):
        return f"{x.name}{x.offset:+g}" if x.offset else x.name
    return "" if x is None else (str(int(x)) if float(x).is_integer() else f"{x:g}")


@dataclass(frozen=True)
class Spec:
    """One command of the grammar: header (mnemonic form), parameters, whether it has a set
    form and a query form, what it does, what a query returns, an example line, the errors it
    can queue beyond the argument errors, the names of the methods that handle its set and
    query forms (on a device whose grammar comes from :func:`declarations`), and how it runs
    (:data:`firmware.declarations.Execution`)."""

    header: str
    params: tuple[Param, ...] = ()
    settable: bool = True
    queryable: bool = False
    summary: str = ""
    reply: str = ""
    example: str = ""
    query_params: tuple[Param, ...] = ()
    errors: str = ""
    set_handler: str = ""
    query_handler: str = ""
    execution: str = "device"
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

    @property
    def short(self) -> str:
        """The header in short mnemonics (``ROUT:MATC``, ``*IDN``)."""
        return ":".join(short for short, _ in self.mnemonics)


@dataclass(frozen=True)
class Command:
    """A parsed command: its spec, whether it is a query, and its converted arguments."""

    spec: Spec
    query: bool
    args: tuple


def split_line(line: str | bytes) -> list[str]:
    """The commands of one line (split at ``;`` outside quotes), checked for length and
    characters; raises :class:`ScpiError` (-363 too long, -101 bad character, -150 open
    quote, -223 more than :data:`MAX_COMMANDS` commands)."""
    if isinstance(line, bytes):
        try:
            line = line.decode("ascii")
        except UnicodeDecodeError:
            raise ScpiError(-101, "only printable ASCII is understood") from None
    line = line.rstrip("\r\n")
    if len(line) > MAX_LINE:
        raise ScpiError(-363, f"line of {len(line)} characters; at most {MAX_LINE}")
    bad = [ch for ch in line if not (_printable(ch) or ch == "\t")]
    if bad:
        raise ScpiError(-101, f"character {bad[0]!r} is not printable ASCII")
    commands = [p for p in _split(line, ";") if p]
    if len(commands) > MAX_COMMANDS:
        raise ScpiError(-223, f"{len(commands)} commands on a line; at most {MAX_COMMANDS}")
    return commands


def _printable(ch: str) -> bool:
    return ch.isascii() and ch.isprintable()


def is_query(line: str | bytes) -> bool:
    """Whether ``line`` asks for a reply: one of its commands has a header ending in ``?``
    (a ``;`` or ``?`` inside quotes is data; an unterminated quote runs to the end). Decided
    on the text alone, so a server replies to a failed query with an empty line and to
    nothing else."""
    text = line.decode("ascii", "replace") if isinstance(line, bytes) else line
    parts = _split(text, ";", strict=False)
    return any(part.split(None, 1)[0].endswith("?") for part in parts if part)


def _split(text: str, sep: str, strict: bool = True) -> list[str]:
    """``text`` split at ``sep`` outside quotes, each part stripped; an unterminated quote
    is -150 when ``strict``."""
    parts, start, quote = [], 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == sep:
            parts.append(text[start:i].strip())
            start = i + 1
    if quote and strict:
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
    if len(out) > MAX_ARGUMENTS:
        raise ScpiError(-223, f"{len(out)} arguments; at most {MAX_ARGUMENTS}")
    if any(not a for a in out):
        raise ScpiError(-103, "empty argument between commas")
    return out


def parse_args(text: str, params: Sequence[Param]) -> tuple:
    """Convert an argument string against ``params`` (a list or groups parameter takes the
    rest)."""
    raw = _split_args(text)
    args: list[object] = []
    for i, p in enumerate(params):
        if p.kind in _LISTS:
            if not raw[i:] and not p.optional:
                raise ScpiError(-109, f"{p.name}: {p.describe()}")
            if p.kind == "groups":
                args.append(_groups(raw[i:], p))
            else:
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


#: The count of a group's last field.
_COUNT = Param("n", "int", 0, MAX_ARGUMENTS)


def _groups(tokens: Sequence[str], p: Param) -> tuple:
    """Groups of ``p.fields``: a tuple per group, of its leading fields' values then a tuple
    of its counted values; -109 for a group cut short."""
    *heads, item = p.fields
    out: list[tuple] = []
    i = 0
    while i < len(tokens):
        values = [_convert(t, f) for t, f in zip(tokens[i : i + len(heads)], heads, strict=False)]
        if i + len(heads) >= len(tokens):
            raise ScpiError(-109, f"{p.name}: group {len(out) + 1} is cut short")
        n = int(_number(tokens[i + len(heads)], _COUNT, integer=True))
        i += len(heads) + 1
        if i + n > len(tokens):
            raise ScpiError(
                -109, f"{p.name}: group {len(out) + 1} counts {n} values, {len(tokens) - i} follow"
            )
        out.append((*values, tuple(_convert(t, item) for t in tokens[i : i + n])))
        i += n
    return tuple(out)


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
    """A number (an exact integer when ``integer``) of ``p``'s range: a literal, or ``MIN``,
    ``MAX``, ``DEF`` (``p``'s default, a list element has none)."""
    word = token.upper()
    if word in ("MIN", "MAX", "DEF"):
        default = p.default if p.kind in ("number", "int") else None
        special = {"MIN": p.low, "MAX": p.high, "DEF": default}[word]
        if isinstance(special, bool) or not isinstance(special, numbers.Real):
            raise ScpiError(-224, f"{p.name}: {word} is not defined here")
        exact = Decimal(int(special) if isinstance(special, numbers.Integral) else float(special))
        scale = 1.0
    else:
        exact, suffix = _literal(token, p)
        if integer and suffix:
            raise ScpiError(-131, f"{p.name} is an integer, without unit; got {suffix!r}")
        scale = _scale(suffix, p)
    if integer and exact != exact.to_integral_value():
        raise ScpiError(-104, f"{p.name}: expected an integer, got {token!r}")
    value = exact if integer else float(exact) * scale
    if p.outside(value) or not math.isfinite(value):
        unit = f" {p.unit}" if p.unit else ""
        raise ScpiError(-222, f"{p.name} {value:g}{unit} outside {_fmt(p.low)}..{_fmt(p.high)}")
    return int(value) if integer else value


def _literal(token: str, p: Param) -> tuple[Decimal, str]:
    """A decimal literal's exact value and its unit suffix."""
    m = _NUMBER.fullmatch(token)
    if m is None or not (m[2] or m[3]):
        raise ScpiError(-104, f"{p.name}: expected a number, got {token!r}")
    sign, whole, fraction, exponent, suffix = m.groups()
    if len((whole + (fraction or "")).lstrip("0")) > MAX_DIGITS:
        raise ScpiError(-124, f"{p.name}: more than {MAX_DIGITS} digits")
    e = (exponent or "").lstrip("+-").lstrip("0")
    if len(e) > len(str(MAX_EXPONENT)) or int(e or 0) > MAX_EXPONENT:
        raise ScpiError(-123, f"{p.name}: an exponent beyond {MAX_EXPONENT}")
    return Decimal(f"{sign}{whole or 0}.{fraction or 0}e{exponent or 0}"), suffix


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


def command_line(spec: Spec, *args: object, query: bool = False) -> str:
    """A line of ``spec``'s set (or query) form with ``args``, each checked against its
    parameter first: short mnemonics, integers (``Integral``, not ``bool``) and finite numbers
    as ``repr`` (exact), booleans (``bool`` only) ``ON``/``OFF``, names from their choices,
    strings quoted (printable ASCII without quotes), a list parameter's values from the rest
    of ``args`` (nested iterables are flattened), a groups parameter's groups likewise, each a
    ``(field, ..., values)`` sequence.
    Raises :class:`~photonics.errors.SettingsError`, before anything is sent, for a value its
    parameter cannot take (type, range where known), a missing or extra argument, or a line
    longer than :data:`MAX_LINE`: so no value can add a ``;``, a line end or another header."""
    if not (spec.queryable if query else spec.settable):
        raise ValueError(f"{spec.header} has no {'query' if query else 'set'} form")
    try:
        tokens = _tokens(spec.query_params if query else spec.params, args)
    except SettingsError as exc:
        raise SettingsError(f"{spec.short}: {exc}") from None
    line = spec.short + ("?" if query else "") + (" " + ",".join(tokens) if tokens else "")
    if len(line) > MAX_LINE or len(tokens) > MAX_ARGUMENTS:
        raise SettingsError(
            f"{spec.short}: a line of {len(line)} characters and {len(tokens)} arguments; at "
            f"most {MAX_LINE} and {MAX_ARGUMENTS}"
        )
    return line


def _tokens(params: Sequence[Param], args: Sequence[object]) -> list[str]:
    """The tokens of ``args`` for ``params`` (a list or groups parameter takes the rest)."""
    tokens: list[str] = []
    for i, p in enumerate(params):
        if p.kind in _LISTS:
            return tokens + _list_tokens(p, args[i:])
        if i < len(args):
            tokens.append(_token(p, args[i]))
        elif not p.optional:
            raise SettingsError(f"{p.name} is missing ({p.describe()})")
    if len(args) > len(params):
        raise SettingsError(f"{len(args)} arguments, at most {len(params)}")
    return tokens


def _list_tokens(p: Param, values: Sequence[object]) -> list[str]:
    """The tokens of a list parameter's ``values`` (scalars, or iterables of them), or of a
    groups parameter's (each a ``(field, ..., values)`` sequence)."""
    if p.kind != "groups":
        return [_token(p, v) for v in _flatten(values)]
    *heads, item = p.fields
    tokens = []
    for group in values:
        if isinstance(group, str) or not isinstance(group, Sequence) or len(group) != len(p.fields):
            names = ", ".join(f.name for f in p.fields)
            raise SettingsError(f"{p.name}: a group is ({names}), got {group!r:.80}")
        counted = [_token(item, v) for v in _flatten(group[-1])]
        tokens += [_token(f, v) for f, v in zip(heads, group, strict=False)]
        tokens += [str(len(counted)), *counted]
    return tokens


def _flatten(value: object) -> Iterable[object]:
    """The scalars of nested iterables (a string is a scalar)."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        yield value
    else:
        for v in value:
            yield from _flatten(v)


def _token(p: Param, value: object) -> str:
    """``value`` as an argument of ``p`` on a line; SettingsError when ``p`` cannot take it."""
    if p.kind == "bool":
        if isinstance(value, bool):
            return "ON" if value else "OFF"
        want = "True or False"
    elif p.kind == "name":
        if isinstance(value, str) and value.upper() in (c.upper() for c in p.choices):
            return value.upper()
        want = " | ".join(p.choices)
    elif p.kind == "string":
        if isinstance(value, str) and all(_printable(c) and c not in "\"'" for c in value):
            return f'"{value}"'
        want = "a string of printable ASCII without quotes"
    else:
        integer = p.kind in ("int", "list")
        kind = numbers.Integral if integer else numbers.Real
        want = "an integer" if integer else "a finite number"
        if isinstance(value, kind) and not isinstance(value, bool) and math.isfinite(value):
            if not p.outside(value):
                return (
                    str(int(value)) if isinstance(value, numbers.Integral) else repr(float(value))
                )
            want = f"{_fmt(p.low)} .. {_fmt(p.high)}"
    raise SettingsError(f"{p.name}: expected {want}, got {value!r:.80}")
