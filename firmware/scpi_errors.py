"""SCPI errors and status: the standard error codes (:data:`MESSAGES`), :class:`ScpiError`, the
device's :class:`ErrorQueue` with its IEEE 488.2 event status bits (:func:`event_bit`), the
status byte's bits, and the client's side of the queue (:func:`drain_errors`). Shared by the
switch (:mod:`firmware.controller`), the SDK, and the instrument drivers and emulations
(:mod:`hil`)."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable

#: Longest detail of an error message, characters; a longer one is cut and ends in ``...``.
MAX_DETAIL = 200
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
    -123: "Exponent too large",
    -124: "Too many digits",
    -131: "Invalid suffix",
    -141: "Invalid character data",
    -150: "String data error",
    -200: "Execution error",
    -221: "Settings conflict",
    -222: "Data out of range",
    -223: "Too much data",
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
        self.detail = detail if len(detail) <= MAX_DETAIL else detail[: MAX_DETAIL - 3] + "..."
        super().__init__(f"{code},{self.text}")

    @property
    def text(self) -> str:
        """The queue entry's quoted string: the standard message, then the detail; ASCII only
        (a detail quoting a non-ASCII character has it escaped, ``\\ufffd``), so a client
        decoding the reply as ASCII never fails."""
        message = MESSAGES[self.code] + (f";{self.detail}" if self.detail else "")
        message = message.encode("ascii", "backslashreplace").decode("ascii")
        return '"' + message.replace('"', "'") + '"'


#: IEEE 488.2 event status register bits (``*ESR?``): operation complete, query error,
#: device-dependent error, execution error, command error, power on.
ESR_OPC, ESR_QYE, ESR_DDE, ESR_EXE, ESR_CME, ESR_PON = 1, 4, 8, 16, 32, 128
#: IEEE 488.2 status byte bits (``*STB?``): error queue not empty, questionable summary,
#: message available, an enabled event (ESR & ESE), master summary, operation summary.
STB_EAV, STB_QUES, STB_MAV, STB_ESB, STB_MSS, STB_OPER = 4, 8, 16, 32, 64, 128


def event_bit(code: int) -> int:
    """The event status bit an error of SCPI ``code`` sets (-1xx command, -2xx execution,
    -3xx device-dependent, -4xx query)."""
    return {1: ESR_CME, 2: ESR_EXE, 3: ESR_DDE, 4: ESR_QYE}.get(-code // 100, ESR_DDE)


class ErrorQueue:
    """The SCPI error queue: first in, first out, :data:`QUEUE_SIZE` entries; when full, the
    newest entry is replaced by -350 (queue overflow) and further errors are dropped. Every
    error pushed also sets its bit in :attr:`events`, the owner's event status register."""

    def __init__(self, size: int = QUEUE_SIZE, events: int = 0) -> None:
        self._items: deque[ScpiError] = deque()
        self.size = size
        self.events = events

    def push(self, error: ScpiError) -> None:
        if error.code < 0:
            self.events |= event_bit(error.code)
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


_ENTRY = re.compile(r'^([+-]?\d+)\s*,\s*"(.*)"$')
#: At most this many entries are read in one drain (a device that never says "No error" would
#: otherwise hold its client for ever); far above any queue's size.
MAX_DRAIN = 1000


def drain_errors(query: Callable[[str], str]) -> list[tuple[int, str]]:
    """Read ``SYST:ERR?`` through ``query`` until the device says ``0,"No error"``: the
    (code, message) entries, oldest first (one query when the queue is empty). Raises
    ``ValueError`` naming an entry that is not ``code,"message"``."""
    out: list[tuple[int, str]] = []
    for _ in range(MAX_DRAIN):
        reply = query("SYST:ERR?").strip()
        m = _ENTRY.match(reply)
        if m is None:
            raise ValueError(f"unreadable error queue entry {reply!r}")
        if int(m.group(1)) == 0:
            return out
        out.append((int(m.group(1)), m.group(2)))
    raise ValueError(f"the error queue did not empty after {MAX_DRAIN} entries")
