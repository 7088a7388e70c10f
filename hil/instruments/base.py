"""What every driver stands on: the :class:`Connection` it talks through, a :class:`Loopback`
connection to an emulation in this process, the :class:`Detectors` a heater driver reads light
with, and :class:`ScpiDriver`, the base of the SCPI drivers (error queue checked after every set
command).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from firmware.scpi_errors import drain_errors
from hil.errors import InstrumentError, InstrumentReportedError, InstrumentTimeoutError
from photonics.errors import SettingsError


class Connection(Protocol):
    """A line-oriented session to one instrument (e.g. :class:`hil.visa.Session`); terminators
    are the connection's business."""

    resource: str

    def write(self, cmd: str) -> None:
        """Send a line that has no query."""
        ...

    def query(self, cmd: str) -> str:
        """Send a line and return the reply line."""
        ...

    def query_lines(self, cmd: str, n: int) -> list[str]:
        """Send a line and return its reply of ``n`` lines (a Qontrol's vector replies)."""
        ...

    def query_binary_floats(self, cmd: str) -> np.ndarray:
        """Send a line and return its reply, an IEEE 488.2 definite-length block of
        little-endian float32, as an array."""
        ...

    def query_each(self, cmds: Sequence[str]) -> list[str]:
        """Send several lines at once and return their replies, one each, in order."""
        ...


class Handler(Protocol):
    """An emulated instrument: one line in, the reply out (bytes for a binary block; None when
    there is no reply)."""

    def handle(self, line: str) -> str | bytes | None: ...


class Detectors(Protocol):
    """Light detection for a heater driver that has none of its own (the bench builds it from
    a laser, an input switch and a power meter)."""

    @property
    def n_detectors(self) -> int: ...

    @property
    def inputs_per_reading(self) -> int:
        """Lit inputs one reading takes in (see :class:`firmware.driver.ChipDriver`)."""
        ...

    def detect(
        self, input_field: Sequence[complex], outputs: Sequence[int] | None = None
    ) -> np.ndarray:
        """Power on every chip output (or only ``outputs``), mW, for input fields in
        sqrt(mW) on the chip."""
        ...

    def monitor(self, outputs: Sequence[int] | None = None) -> np.ndarray:
        """Power on every chip output (or only ``outputs``), mW, with the light as it is."""
        ...


def parse_float32_block(resource: str, data: bytes) -> np.ndarray:
    """The values of an IEEE 488.2 definite-length block (``#<d><length><bytes>``) of
    little-endian float32; raises :class:`InstrumentError` on a malformed block."""
    m = re.match(rb"#([1-9])", data)
    if m is None:
        raise InstrumentError(resource, f"not a definite-length block: {data[:16]!r}")
    digits = int(m.group(1))
    length = data[2 : 2 + digits]
    if not length.isdigit() or int(length) % 4:
        raise InstrumentError(resource, f"bad block length field {length!r}")
    body = data[2 + digits : 2 + digits + int(length)]
    if len(body) != int(length):
        raise InstrumentError(resource, f"block of {len(body)} bytes, header says {int(length)}")
    return np.frombuffer(body, dtype="<f4").astype(float)


class Loopback:
    """A :class:`Connection` to an emulated instrument in this process: each line goes to
    ``handler.handle``. A query that gets no reply raises :class:`InstrumentTimeoutError`, as a
    real session would; a write that gets a reply is a driver bug and raises
    :class:`InstrumentError` (on a real session the reply would shift every later answer)."""

    def __init__(self, handler: Handler, resource: str = "LOOP::emulated") -> None:
        self.handler, self.resource = handler, resource

    def write(self, cmd: str) -> None:
        reply = self.handler.handle(cmd)
        if reply is not None:
            raise InstrumentError(self.resource, f"{cmd!r} got a reply ({reply[:40]!r}): query it")

    def _ask(self, cmd: str) -> str | bytes:
        reply = self.handler.handle(cmd)
        if reply is None:
            raise InstrumentTimeoutError(self.resource, f"no reply to {cmd!r}")
        return reply

    def query(self, cmd: str) -> str:
        reply = self._ask(cmd)
        return reply.decode("ascii", "replace") if isinstance(reply, bytes) else reply

    def query_lines(self, cmd: str, n: int) -> list[str]:
        lines = self.query(cmd).split("\n")
        if len(lines) != n:
            raise InstrumentError(self.resource, f"{cmd!r}: {len(lines)} lines, expected {n}")
        return lines

    def query_each(self, cmds: Sequence[str]) -> list[str]:
        return [self.query(cmd) for cmd in cmds]

    def query_binary_floats(self, cmd: str) -> np.ndarray:
        reply = self._ask(cmd)
        if isinstance(reply, str):
            raise InstrumentError(self.resource, f"{cmd!r}: expected a binary block, got {reply!r}")
        return parse_float32_block(self.resource, reply)


def check_range(
    resource: str, name: str, value: float, low: float, high: float, unit: str
) -> float:
    """``value`` as a float if it is finite and in ``low..high``, else :class:`SettingsError`
    naming the instrument, the value and the range."""
    x = float(value)
    if not (np.isfinite(x) and low <= x <= high):
        raise SettingsError(f"{resource}: {name} {x:g} {unit} outside {low:g}..{high:g} {unit}")
    return x


def check_index(resource: str, name: str, value: int, count: int) -> int:
    """``value`` if it is an integer in ``0..count-1`` (a 0-based channel or port), else
    :class:`SettingsError` naming the instrument, the value and the range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SettingsError(f"{resource}: {name} must be an integer, got {value!r}")
    if not 0 <= value < count:
        raise SettingsError(f"{resource}: {name} {value} outside 0..{count - 1}")
    return int(value)


#: Slots of a Keysight 8164B mainframe (0: the internal laser slot, 1-4: module slots).
MAINFRAME_SLOTS = 5


class ScpiDriver:
    """Base of the SCPI drivers: the connection, identity, reset, and the instrument's error
    queue (``SYST:ERR?``) checked after every set command: an error there is raised as
    :class:`InstrumentReportedError` with its SCPI code, after the queue is drained."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    @property
    def resource(self) -> str:
        return self.conn.resource

    def idn(self) -> str:
        return self._query("*IDN?")

    def reset(self) -> None:
        """``*RST`` then ``*CLS``: the instrument's defaults and an empty error queue."""
        self._set("*RST;*CLS")

    def errors(self) -> list[tuple[int, str]]:
        """Drain the error queue: (code, message) pairs, oldest first."""
        try:
            return drain_errors(self.conn.query)
        except ValueError as exc:
            raise InstrumentError(self.resource, str(exc)) from None

    def _raise_errors(self, cmd: str) -> None:
        queued = self.errors()
        if queued:  # one command, one exception: the rest go with it
            code, message = queued[0]
            raise InstrumentReportedError(self.resource, code, f"{message} (after {cmd!r})")

    def _set(self, cmd: str) -> None:
        self.conn.write(cmd)
        self._raise_errors(cmd)

    def _query(self, cmd: str) -> str:
        """The reply to ``cmd``; a query the instrument refused raises what it reported."""
        try:
            return self.conn.query(cmd).strip()
        except InstrumentTimeoutError:
            self._raise_errors(cmd)
            raise
