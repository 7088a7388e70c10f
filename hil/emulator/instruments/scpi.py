"""The base of the emulated SCPI instruments: :class:`ScpiInstrument`, the :class:`Entry` each
command is declared with, and the parameters and units the instruments share.

SCPI instruments parse with the switch firmware's grammar engine (:mod:`firmware.commands`):
short and long mnemonics, any case, ``;``-joined commands (each header absolute, as in the
firmware: a command after ``;`` repeats its whole path), unit suffixes, ``MIN``/``MAX``/``DEF``.
Unlike the firmware, which parses a whole line before running any of it, the commands of a line
are parsed and run one after the other, as the instruments do (``:SOUR0:POW:UNIT W;:SOUR0:POW
0.002`` reads 0.002 in W); the first error stops the rest of the line. On top of the engine,
this module adds what the instruments' programming guides need:

- numeric header suffixes (``:SENS2:CHAN1:POW?``): a node listed in ``numbered`` takes a
  number in its range (omitted: 1, or the range's only value); any other number is -113;
- optional nodes, written in brackets (``:SOURce:POWer[:LEVel][:IMMediate]``);
- instrument units: Keysight takes a bare wavelength in metres (``1550E-9``; ``1550NM`` and
  ``1.55UM`` too); a laser's bare power is in its selected unit (dBm or W/mW), and ``DBM``,
  ``W``, ``MW``, ``UW``, ``NW`` suffixes are accepted wherever a power is.

- optional roots too (``[SENSe:]CORRection:WAVelength``): a bracketed part is written or left out.

Every SCPI instrument has the IEEE 488.2 mandatory commands (``*CLS *ESE *ESE? *ESR? *IDN? *OPC
*OPC? *RST *SRE *SRE? *STB? *TST? *WAI``, and ``*OPT?``) with the standard status model: the
event status register (bit 0 OPC, 2 query error, 3 device error, 4 execution error, 5 command
error, 7 power on: set at power-on), read and cleared by ``*ESR?``, its enable mask ``*ESE``;
the status byte (bit 2 EAV: the error queue holds an error, 3 the instrument's questionable
summary, 4 MAV: a reply of the line is waiting, 5 ESB: an enabled event, 6 MSS: an enabled bit
of the byte) with its enable mask ``*SRE``. ``*OPC?`` and ``*WAI`` return once the bench's
optics have settled (the last heater write has taken effect on the world's clock,
:meth:`~hil.emulator.world.BenchWorld.wait_settled`), so a reading after them sees the new
state; ``*OPC`` sets the OPC bit then. ``SYST:ERR?`` reads the standard error queue; a bad
command changes nothing and queues its error (-1xx command, -2xx execution); the commands
before it on the line have run. ``*TRG`` runs :meth:`ScpiInstrument.trigger` (a model's own).

The SCPI status system (SCPI 1999.0 Vol. 1, 9 "Status Reporting"; Vol. 2, 20 "STATus
Subsystem"): two registers, ``:STATus:OPERation`` and ``:STATus:QUEStionable``
(:class:`StatusRegister`), each with ``:CONDition?`` (the state now, from the model's hooks
:meth:`ScpiInstrument.operation_condition` and :meth:`ScpiInstrument.questionable_condition`),
``:PTRansition`` and ``:NTRansition`` (which rising and falling condition bits latch into the
event register), ``[:EVENt]?`` (latched, cleared by reading it) and ``:ENABle`` (which event bits
summarise into the status byte: bit 7 OSB for operation, bit 3 QSB for questionable). The
conditions are sampled before and after each command and on every status read, so a condition
that rises and falls between two commands is not seen. ``:STATus:PRESet`` sets ENABle 0, PTR
32767, NTR 0 (SCPI Vol. 2, 20.7, the power-on values too) and keeps the event registers;
``*CLS`` clears the event registers and keeps the rest; ``*RST`` changes none of them. Values
are 0..32767 (bit 15 is never used; -222 outside). A numbered ``STATus<n>`` node (a model's
``numbered``) reads the same registers. A model with registers of its own beyond these two
(the PM100D's MEASurement and AUXillary) adds them in :meth:`ScpiInstrument.status_nodes`.

Replies: each instrument writes numbers in its own format (:meth:`ScpiInstrument.number`; the
Keysight ones :func:`keysight_nr3`), strings as they are (ASCII only: an error's detail never
echoes a non-ASCII byte, see :class:`~firmware.scpi_errors.ScpiError`).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from firmware.commands import Param, Spec, format_reply, parse_args, split_line
from firmware.scpi_errors import (
    ESR_OPC,
    ESR_PON,
    STB_EAV,
    STB_ESB,
    STB_MAV,
    STB_MSS,
    STB_OPER,
    STB_QUES,
    ErrorQueue,
    ScpiError,
)
from hil.emulator.world import BenchWorld
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM
from photonics.errors import LimitError, PswitchError

#: The dBm reading of exactly no light (a laser's monitor when it is off), 1e-12 mW. A power
#: meter never reads it: its dark reading is its noise (:meth:`BenchWorld.output_power_mW
#: <hil.emulator.world.BenchWorld.output_power_mW>`), a small positive power.
DBM_FLOOR = -120.0


def dbm(mW: float) -> float:
    """Power in dBm; :data:`DBM_FLOOR` for no power at all (0 mW)."""
    return 10 * math.log10(mW) if mW > 0 else DBM_FLOOR


def keysight_nr3(x: float, decimals: int = 8) -> str:
    """A number as the Keysight lightwave instruments write it: sign, ``decimals`` digits after
    the point, a three-digit signed exponent (``+1.55000000E-006``)."""
    mantissa, exponent = f"{x:+.{decimals}E}".split("E")
    return f"{mantissa}E{int(exponent):+04d}"


def float32_block(values: Sequence[float] | np.ndarray, dtype: str = "<f4") -> bytes:
    """An IEEE 488.2 definite-length block (``#<d><length><bytes>``) of little-endian float32
    (or of ``dtype``)."""
    data = np.asarray(values, dtype=dtype).tobytes()
    length = str(len(data))
    return f"#{len(length)}{length}".encode() + data


#: The SCPI status registers' bits: 0..14 (bit 15 is never used, SCPI 1999.0 Vol. 1, 9.1).
STATUS_MASK = 0x7FFF
#: The questionable condition bit a model's :meth:`ScpiInstrument.questionable` sets: bit 9,
#: the first of SCPI's instrument-defined bits (9..13, SCPI 1999.0 Vol. 1, 9.5).
QUES_DEVICE = 1 << 9


@dataclass
class StatusRegister:
    """One SCPI status structure (SCPI 1999.0 Vol. 1, 9.3): ``condition`` (the bits now),
    the transition filters ``ptr`` (a bit going 0 to 1 latches) and ``ntr`` (1 to 0), the
    latched ``event`` register and the ``enable`` mask of its summary. Power-on values are the
    preset ones (:meth:`preset`)."""

    condition: int = 0
    ptr: int = STATUS_MASK
    ntr: int = 0
    event: int = 0
    enable: int = 0

    def update(self, condition: int) -> None:
        """The condition now: each changed bit its filter passes latches into the event."""
        condition &= STATUS_MASK
        rising, falling = condition & ~self.condition, self.condition & ~condition
        self.event |= (rising & self.ptr) | (falling & self.ntr)
        self.condition = condition

    def read_event(self) -> int:
        """``[:EVENt]?``: the event register, cleared by reading it."""
        value, self.event = self.event, 0
        return value

    def summary(self) -> bool:
        """The register's summary bit: an enabled event."""
        return bool(self.event & self.enable)

    def preset(self) -> None:
        """``:STATus:PRESet`` (SCPI 1999.0 Vol. 2, 20.7): ENABle 0, PTR all ones, NTR 0; the
        event register is kept."""
        self.enable, self.ptr, self.ntr = 0, STATUS_MASK, 0


@dataclass(frozen=True)
class Entry:
    """One command of an emulated instrument: its header as the programming guide writes it
    (optional nodes in brackets), its parameters, and what runs its set and query forms. Both
    get the number of the header's first numbered node (the slot or channel) first."""

    header: str
    params: tuple[Param, ...] = ()
    set: Callable[..., None] | None = None
    query: Callable[..., object] | None = None
    query_params: tuple[Param, ...] = ()

    def specs(self) -> list[Spec]:
        """One grammar spec for every way of writing the header (optional nodes in or out)."""
        parts = re.split(r"(\[[^\]]+\])", self.header)
        choices = [(p[1:-1], "") if p.startswith("[") else (p,) for p in parts if p]
        return [
            Spec(
                "".join(words),
                self.params,
                self.set is not None,
                self.query is not None,
                query_params=self.query_params,
            )
            for words in itertools.product(*choices)
        ]


_HEADER = re.compile(r"^(\*[A-Za-z]+\??|:?[A-Za-z]+\d*(?::[A-Za-z]+\d*)*\??)$")
_WORD = re.compile(r"^([A-Za-z]+)(\d*)$")
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
#: A plain decimal number (no unit), as the instruments write one.
BARE_NUMBER = re.compile(f"^{_NUMBER}$")
_DBM = re.compile(rf"^({_NUMBER})\s*DBM$", re.IGNORECASE)
_PER_SECOND = re.compile(r"/S$", re.IGNORECASE)
#: Highest dBm a token may carry (beyond, the power is out of range anyway).
_MAX_DBM = 300.0


@dataclass(frozen=True)
class _Parsed:
    entry: Entry
    number: int
    query: bool
    args: tuple


class ScpiInstrument:
    """Base of the SCPI emulations (see the module docstring). Subclasses give
    :meth:`commands`, :meth:`reset` (the ``*RST`` state, also the power-on state) and, for
    their unit conventions, :meth:`bare_unit`; ``numbered`` maps the short mnemonic of each
    node that takes a number to its range."""

    #: The reply to ``*OPT?``: the installed options (``0``: none).
    options = "0"

    def __init__(
        self, world: BenchWorld, idn: str, numbered: dict[str, tuple[int, int]] | None = None
    ) -> None:
        self.world, self.idn = world, idn
        self.numbered = dict(numbered or {})
        #: The error queue; ``errors.events`` is the event status register (each error sets
        #: its bit as it is queued).
        self.errors = ErrorQueue(events=ESR_PON)
        self.ese, self.sre = 0, 0  # IEEE 488.2 enable masks
        self._opc_at: float | None = None  # *OPC: the OPC bit is due at this world time
        self._waiting = 0  # replies of the line being run so far (MAV)
        #: The status registers by node (``OPERation``, ``QUEStionable``, a model's own).
        self.status = {node: StatusRegister() for node in self.status_nodes()}
        self.operation_status = self.status["OPERation"]
        self.questionable_status = self.status["QUEStionable"]
        self._status_sampled = False  # the first sample is the power-on condition: no event
        entries = [*self._common(), *self.commands()]
        self._table = [(spec, entry) for entry in entries for spec in entry.specs()]
        self._matching: dict[tuple[str, ...], list[tuple[Spec, Entry]]] = {}  # by header words
        self.reset()

    def commands(self) -> list[Entry]:
        raise NotImplementedError

    def reset(self) -> None:
        """Put the instrument in its ``*RST`` state."""

    def bare_unit(self, number: int, param: Param) -> str:
        """The unit suffix a number without one is read in, for ``param`` (default: the
        parameter's own unit)."""
        return ""

    def number(self, x: float) -> str:
        """A float reply in this instrument's format (default: Keysight's NR3)."""
        return keysight_nr3(x)

    def trigger(self) -> None:
        """The device trigger: ``*TRG``, a HiSLIP Trigger message, GPIB GET (IEEE 488.2 10.37;
        default: nothing to trigger, accepted all the same)."""

    def status_byte(self) -> int:
        """The status byte as a serial poll reads it (``read_stb``), queuing nothing: ``*STB?``'s
        bits outside a line (MAV clear: the transport knows whether a reply waits)."""
        with self.world.instant():
            return self._status_byte(0)

    def device_clear(self) -> None:
        """IEEE 488.2 dcas (5.8, a device clear from HiSLIP or VXI-11): the transport drops
        its input and output; here a pending ``*OPC`` is cancelled (OCIS idle); settings and
        status registers are kept."""
        self._opc_at = None

    def questionable(self) -> bool:
        """Whether the instrument's data is questionable: bit 9 (:data:`QUES_DEVICE`) of the
        default :meth:`questionable_condition` (a model with its own bits overrides that)."""
        return False

    def status_nodes(self) -> dict[str, tuple[Callable[[], int], int]]:
        """The ``STATus`` registers: node mnemonic, its condition hook and the status byte bit
        its summary sets (a model with more registers extends this)."""
        return {
            "OPERation": (self.operation_condition, STB_OPER),
            "QUEStionable": (self.questionable_condition, STB_QUES),
        }

    def operation_condition(self) -> int:
        """The ``:STATus:OPERation:CONDition`` bits now (a model's own; default none)."""
        return 0

    def questionable_condition(self) -> int:
        """The ``:STATus:QUEStionable:CONDition`` bits now (a model's own; default
        :data:`QUES_DEVICE` while :meth:`questionable`)."""
        return QUES_DEVICE if self.questionable() else 0

    def reply(self, value: object) -> str:
        """A query's reply: floats in :meth:`number`'s format, the rest as
        :func:`~firmware.commands.format_reply` writes them."""
        if isinstance(value, float):
            return self.number(value)
        if isinstance(value, (list, tuple)):
            return ",".join(self.reply(v) for v in value)
        return format_reply(value)

    # ---- the line protocol -------------------------------------------------------------------
    def handle(self, line: str | bytes) -> str | bytes | None:
        """Run one line; return the replies of its queries joined by ``;`` (bytes when one is
        a binary block), None without queries. The line runs at one instant of the world's
        time (its readings are simultaneous), moved only by the waits it makes."""
        with self.world.instant():
            return self._handle(line)

    def _handle(self, line: str | bytes) -> str | bytes | None:
        replies: list[str | bytes] = []
        self._sample_status()
        try:
            for text in split_line(line):
                cmd = self._parse(text)  # after the commands before it: units may have changed
                self._waiting = len(replies)
                reply = self._run(cmd)
                self._sample_status()  # a command's own effect on the conditions latches now
                if cmd.query:
                    replies.append(reply if isinstance(reply, bytes) else self.reply(reply))
        except ScpiError as exc:
            self.errors.push(exc)
        if not replies:
            return None
        if any(isinstance(r, bytes) for r in replies):
            return b";".join(r if isinstance(r, bytes) else r.encode() for r in replies)
        return ";".join(str(r) for r in replies)

    def _run(self, cmd: _Parsed) -> object:
        run = cmd.entry.query if cmd.query else cmd.entry.set
        assert run is not None  # the parser accepts only the forms an entry has
        try:
            return run(cmd.number, *cmd.args)
        except PswitchError as exc:  # the world refused: nothing has changed
            raise ScpiError(-222 if isinstance(exc, LimitError) else -200, str(exc)) from None

    def _parse(self, text: str) -> _Parsed:
        head, rest = [*text.split(None, 1), ""][:2]
        if not _HEADER.match(head):
            raise ScpiError(-102, f"cannot read header {head!r}")
        query = head.endswith("?")
        words, numbers = [], []
        for word in head.rstrip("?").lstrip(":").split(":"):
            m = _WORD.match(word)
            words.append(m.group(1) if m else word)
            numbers.append(int(m.group(2)) if m and m.group(2) else None)
        key = tuple(w.upper() for w in words)
        found = self._matching.get(key)
        if found is None:  # a meter is read channel by channel: match each header once
            found = [(s, e) for s, e in self._table if s.matches(words)]
            if found:  # known headers only: unknown ones must not grow the cache
                self._matching[key] = found
        if not found:
            raise ScpiError(-113, head)
        usable = [(s, e) for s, e in found if (s.queryable if query else s.settable)]
        if not usable:
            form = "no query form" if query else "query only: add '?'"
            raise ScpiError(-113, f"{head} ({form})")
        spec, entry = usable[0]
        number = self._number(head, spec, numbers)
        params = spec.query_params if query else spec.params
        raw = rest.strip().split(",") if rest.strip() else []
        tokens = [
            self._token(t.strip(), params[i], number) if i < len(params) else t
            for i, t in enumerate(raw)
        ]
        return _Parsed(entry, number, query, parse_args(",".join(tokens), params))

    def _number(self, head: str, spec: Spec, numbers: list[int | None]) -> int:
        """The first numbered node's number, every node's number checked against its range."""
        first = None
        for given, (short, _) in zip(numbers, spec.mnemonics, strict=True):
            span = self.numbered.get(short)
            if span is None:
                if given is not None:
                    raise ScpiError(-113, f"{head}: {short} takes no number")
                continue
            low, high = span
            value = given if given is not None else (1 if low <= 1 <= high else low)
            if not low <= value <= high:
                raise ScpiError(-113, f"{head}: no {short}{value} here ({short}{low}..{high})")
            first = value if first is None else first
        return 0 if first is None else first

    def _token(self, token: str, param: Param, number: int) -> str:
        """An argument in the engine's terms: a bare number gets this instrument's unit, a
        dBm power becomes mW."""
        if param.name == "speed":  # a sweep speed: nm/s reads as nm (bare: the unit's per s)
            token = _PER_SECOND.sub("", token)
        if BARE_NUMBER.match(token):
            token += self.bare_unit(number, param)
        m = _DBM.match(token)
        if m and param.unit == "mW":
            return f"{10 ** (min(float(m.group(1)), _MAX_DBM) / 10)!r}MW"
        return token

    # ---- IEEE 488.2 and SYSTem ---------------------------------------------------------------
    def _common(self) -> list[Entry]:
        mask = (Param("mask", "int", 0, 255),)
        return [
            Entry("*IDN", query=lambda _: self.idn),
            Entry("*RST", set=lambda _: self.reset()),
            Entry("*CLS", set=self._clear),
            Entry("*ESE", mask, set=lambda _, m: setattr(self, "ese", m), query=lambda _: self.ese),
            Entry("*ESR", query=self._event_status),
            Entry("*SRE", mask, set=lambda _, m: setattr(self, "sre", m), query=lambda _: self.sre),
            Entry("*STB", query=self._status_byte),
            Entry("*OPC", set=self._arm_opc, query=self._operation_complete),
            Entry("*WAI", set=lambda _: self.world.wait_settled()),
            Entry("*TST", query=lambda _: 0),
            Entry("*TRG", set=lambda _: self.trigger()),
            Entry("*OPT", query=lambda _: self.options),
            Entry("SYSTem:ERRor[:NEXT]", query=self._error),
            Entry("SYSTem:ERRor:COUNt", query=lambda _: len(self.errors)),
            *self._status_entries(),
        ]

    # ---- the SCPI status system (the module docstring) ---------------------------------------
    def _status_entries(self) -> list[Entry]:
        entries = [Entry("STATus:PRESet", set=self._status_preset)]
        for node, reg in self.status.items():
            entries += [
                # the conditions were sampled before this command: the registers are current
                Entry(f"STATus:{node}[:EVENt]", query=lambda _, r=reg: r.read_event()),
                Entry(f"STATus:{node}:CONDition", query=lambda _, r=reg: r.condition),
                *(_status_field(f"STATus:{node}:{word}", reg, field) for word, field in _FIELDS),
            ]
        return entries

    def _sample_status(self) -> None:
        """The model's conditions now into the registers (the first sample only sets them)."""
        for node, (condition, _) in self.status_nodes().items():
            reg, bits = self.status[node], condition()
            if not self._status_sampled:
                reg.condition = bits & STATUS_MASK
            reg.update(bits)
        self._status_sampled = True

    def _status_preset(self, _: int) -> None:
        for reg in self.status.values():
            reg.preset()

    def _error(self, _: int) -> str:
        e = self.errors.pop()
        return f"{e.code},{e.text}"

    def _clear(self, _: int) -> None:
        """``*CLS``: the error queue, the event status register, the SCPI status event
        registers and a pending ``*OPC``."""
        self.errors.clear()
        self.errors.events, self._opc_at = 0, None
        for reg in self.status.values():
            reg.event = 0

    def _arm_opc(self, _: int) -> None:
        self._opc_at = self.world.settled_at

    def _operation_complete(self, _: int) -> int:
        self.world.wait_settled()
        return 1

    def _update_opc(self) -> None:
        if self._opc_at is not None and self.world.clock() >= self._opc_at:
            self.errors.events |= ESR_OPC
            self._opc_at = None

    def _event_status(self, _: int) -> int:
        """``*ESR?``: the event status register, cleared by reading it."""
        self._update_opc()
        value, self.errors.events = self.errors.events, 0
        return value

    def _status_byte(self, _: int) -> int:
        """``*STB?``: the status byte (see the module docstring); reading clears nothing."""
        self._update_opc()
        self._sample_status()
        bits = (
            STB_EAV * (len(self.errors) > 0)
            | STB_MAV * (self._waiting > 0)
            | STB_ESB * bool(self.errors.events & self.ese)
        )
        for node, (_, bit) in self.status_nodes().items():
            bits |= bit * self.status[node].summary()
        return bits | (STB_MSS * bool(bits & self.sre & ~STB_MSS))


#: The settable fields of a status register: the manual's node, the attribute it sets.
_FIELDS = (("ENABle", "enable"), ("PTRansition", "ptr"), ("NTRansition", "ntr"))


def _status_field(header: str, reg: StatusRegister, field: str) -> Entry:
    """A status register's ENABle, PTRansition or NTRansition: set 0..32767, query."""
    value = (Param("value", "int", 0, STATUS_MASK),)
    return Entry(
        header,
        value,
        set=lambda _, v: setattr(reg, field, v),
        query=lambda _: getattr(reg, field),
    )


def wavelength_param(low_high: tuple[float, float]) -> Param:
    """A wavelength parameter (nm) over ``low_high``, default the reference wavelength."""
    return Param("wavelength", "number", *low_high, "nm", default=REFERENCE_WAVELENGTH_NM)


#: Power-unit names and codes to the code the instruments keep: 0 dBm, 1 linear (W or mW).
UNIT_CODES = {"DBM": 0, "0": 0, "WATT": 1, "MW": 1, "1": 1}


def unit_param(choices: tuple[str, ...]) -> Param:
    """A power-unit parameter taking one of ``choices`` (see :data:`UNIT_CODES`)."""
    return Param("unit", "name", choices=choices)


def in_unit(mW: float, code: int, linear_mW: float) -> float:
    """A power in dBm (code 0) or in linear units of ``linear_mW`` (code 1)."""
    return dbm(mW) if code == 0 else mW / linear_mW
