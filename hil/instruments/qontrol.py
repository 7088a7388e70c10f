"""A Qontrol Q8iv-class multichannel heater driver on a serial line (its own line protocol,
not SCPI), usable directly and as the firmware's :class:`~firmware.driver.ChipDriver`.

Wire protocol (case-insensitive, channels 0-based): ``I3=4.5`` sets channel 3 to 4.5 mA,
``V3=1.2`` to 1.2 V; ``I3?``, ``V3?`` read back; ``IMAX3=``/``VMAX3=`` set a channel's
compliance limits; ``IALL?``, ``VALL?`` read every channel of the daisy chain, a line each
(the chain is whole 8-channel modules: :data:`MODULE_CHANNELS`); ``NCHAN?`` (the channels wired
to heaters), ``ID?``, ``VFULL?``, ``IFULL?``. A set answers ``OK``; an error answers
``E<code>:<channel>`` with a code of :data:`QONTROL_ERRORS`.

As a :class:`~firmware.driver.ChipDriver` (so the firmware's
:class:`~firmware.controller.Controller` can run on a host against a real heater driver):

- ``write`` validates the whole new state (channels, each channel's ``IMAX`` read from the
  instrument, the power budget) before the first channel is written, writes the changed
  channels one command each, all sent in one write (one round trip, the replies read in
  order), and returns once they have settled: ``channel_write_s`` per channel plus
  ``settle_s`` of thermal settling. A channel that fails raises
  :class:`~firmware.driver.DriverError`, what was applied kept (the controller rolls back);
- ``detect``/``measure``/``monitor`` read light through the optional ``detectors``
  (:class:`~hil.instruments.base.Detectors`); without them they raise ``DriverError``;
- ``power_mW`` models each heater as a constant resistance: the V/I read back at the highest
  current seen so far (``voltages()``, ``voltage()``; the resistance rises with current,
  ``R(I) = a I^2 + c``, so that is the conservative value for a budget), ``resistance_ohm``
  before any read-back;
- ``elapsed_s`` is the time of the hardware operations (measured; not paced: plus the modelled
  waits); ``temperature_C`` is nan (no sensor).

``currents()`` is this driver's record of what it applied (read back once at connection), so
the controller compares exact values; ``current(ch)`` asks the instrument.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

import numpy as np

from firmware.driver import DEFAULT_CHANNEL_WRITE_S, DEFAULT_SETTLE_TOLERANCE, DriverError
from firmware.electronics import DriverClass
from hil.errors import InstrumentError, InstrumentReportedError
from hil.instruments.base import Connection, Detectors, check_index, check_range
from photonics.devices.thermal import DEFAULT_R0_OHM, DEFAULT_TAU_S, settling_time_s
from photonics.errors import LimitError, PortError, ShapeError

#: Error codes of the Qontrol line protocol (Qontrol's own table for Q8-class modules), the
#: one table the emulation and the driver share. The emulation uses: 1 a voltage (set, or the
#: one a current needs) above the channel's VMAX; 2 a current above the channel's IMAX or the
#: chip's limit; 3 the chip's heater power budget would be exceeded; 10 a command it does not
#: know; 11 a value that is not a number, negative, or above full scale; 12 a channel missing
#: or out of range; 13 setting a read-only quantity.
QONTROL_ERRORS = {
    0: "Unknown error",
    1: "Over-voltage error",
    2: "Over-current error",
    3: "Power error",
    10: "Unrecognised command",
    11: "Unrecognised input parameter",
    12: "Unrecognised channel",
    13: "Operation forbidden",
    14: "Serial buffer overflow",
    15: "Serial communication error",
}
#: Channels of one Q8-class module; a daisy chain is whole modules.
MODULE_CHANNELS = 8
#: Q8iv full-scale voltage, V, and current, mA.
Q8IV_VFULL_V = 12.0
Q8IV_IFULL_MA = 24.0
#: Thermal settling after a write: a TiN heater's first-order response within tolerance, s.
DEFAULT_SETTLE_S = settling_time_s(DEFAULT_TAU_S, DEFAULT_SETTLE_TOLERANCE)
#: Below this current a V/I read-back says little about a heater's resistance, mA.
MIN_RESISTANCE_CURRENT_MA = 0.5
#: Margin on the settling wait, s (clock granularity).
_WAIT_MARGIN_S = 1e-5

_ERROR_REPLY = re.compile(r"^E(\d+):(\d+)$")


def qontrol_error(resource: str, reply: str, cmd: str) -> InstrumentReportedError | None:
    """The error an ``E<code>:<channel>`` reply stands for (None for any other reply)."""
    m = _ERROR_REPLY.match(reply.strip())
    if m is None:
        return None
    code, channel = int(m.group(1)), int(m.group(2))
    text = QONTROL_ERRORS.get(code, "Unknown error")
    return InstrumentReportedError(resource, code, f"{text}, channel {channel} (after {cmd!r})")


class Qontrol:
    """A Qontrol heater driver (see the module docstring). Currents mA, voltages V, powers mW.

    ``max_current_mA``: if given, written as every channel's ``IMAX`` (the chip's safe
    current, enforced by the hardware); ``power_budget_mW``: the total heater power allowed
    (default: the instrument's full output, the sum of VMAX x IMAX).
    """

    def __init__(
        self,
        conn: Connection,
        detectors: Detectors | None = None,
        max_current_mA: float | None = None,
        power_budget_mW: float | None = None,
        channel_write_s: float = DEFAULT_CHANNEL_WRITE_S,
        settle_s: float = DEFAULT_SETTLE_S,
        resistance_ohm: float = DEFAULT_R0_OHM,
        paced: bool = True,
    ) -> None:
        self.conn, self.detectors = conn, detectors
        #: True: ``write`` sleeps until the channels have settled and reports the wall time;
        #: False (an emulated bench on a virtual clock): it returns at once and reports the
        #: modelled time, and whoever reads next makes the bench wait (``*WAI``).
        self.paced = paced
        self.channel_write_s = check_range(
            conn.resource, "channel_write_s", channel_write_s, 0, 1, "s"
        )
        self.settle_s = check_range(conn.resource, "settle_s", settle_s, 0, 1, "s")
        self.elapsed_s = 0.0
        self._n = int(self._ask("NCHAN?"))
        self.v_full = float(self._ask("VFULL?").split()[0])
        self.i_full = float(self._ask("IFULL?").split()[0])
        if max_current_mA is not None:
            limit = check_range(
                self.resource, "max_current_mA", max_current_mA, 0, self.i_full, "mA"
            )
            for ch in range(self._n):
                self._set(f"IMAX{ch}={limit!r}")
        self._imax = np.array([float(self._ask(f"IMAX{ch}?")) for ch in range(self._n)])
        self._vmax = np.array([float(self._ask(f"VMAX{ch}?")) for ch in range(self._n)])
        self._budget_mW = float(np.sum(self._vmax * self._imax))
        if power_budget_mW is not None:
            self._budget_mW = check_range(
                self.resource, "power_budget_mW", power_budget_mW, 0, self._budget_mW, "mW"
            )
        self._current = self._all("IALL?")
        #: What the instrument has now: the commanded currents, or a measurement's last row.
        self._applied = self._current.copy()
        self._resistance = np.full(self._n, float(resistance_ohm))
        self._resistance_at_mA = np.zeros(self._n)  # current of each resistance read-back

    @property
    def resource(self) -> str:
        return self.conn.resource

    @property
    def n_channels(self) -> int:
        return self._n

    @property
    def electronics(self) -> DriverClass:
        """A lab driver's class: its channels written one after another."""
        return DriverClass("bench", channel_s=self.channel_write_s)

    @property
    def n_detectors(self) -> int:
        return 0 if self.detectors is None else self.detectors.n_detectors

    @property
    def inputs_per_reading(self) -> int:
        return 0 if self.detectors is None else self.detectors.inputs_per_reading

    # ---- the wire ----------------------------------------------------------------------------
    def _ask(self, cmd: str) -> str:
        reply = self.conn.query(cmd).strip()
        error = qontrol_error(self.resource, reply, cmd)
        if error is not None:
            raise error
        return reply

    def _set(self, cmd: str) -> None:
        reply = self._ask(cmd)
        if reply.upper() != "OK":
            raise InstrumentError(self.resource, f"{cmd!r}: expected OK, got {reply!r}")

    def _all(self, cmd: str) -> np.ndarray:
        """A vector query: a line per channel of the chain; the wired channels' values."""
        chain = -(-self._n // MODULE_CHANNELS) * MODULE_CHANNELS
        lines = [line.strip() for line in self.conn.query_lines(cmd, chain)]
        for line in lines:
            if (error := qontrol_error(self.resource, line, cmd)) is not None:
                raise error
        try:
            return np.array([float(x) for x in lines[: self._n]])
        except ValueError:
            raise InstrumentError(self.resource, f"{cmd!r}: not numbers: {lines[:3]!r}") from None

    # ---- direct use --------------------------------------------------------------------------
    def idn(self) -> str:
        return self._ask("ID?")

    def set_current(self, channel: int, mA: float) -> None:
        """Set one channel's current, mA (checked against its IMAX and the power budget)."""
        channel = check_index(self.resource, "channel", channel, self._n)
        new = self._current.copy()
        new[channel] = mA
        self._check(new)
        self._send(channel, new[channel])

    def current(self, channel: int) -> float:
        """One channel's current as the instrument reads it back, mA."""
        self.release()
        return float(self._ask(f"I{check_index(self.resource, 'channel', channel, self._n)}?"))

    def currents(self) -> np.ndarray:
        """The currents this driver has applied, mA (one per channel)."""
        return self._current.copy()

    def voltages(self) -> np.ndarray:
        """Every channel's voltage as read back, V (refines the resistance model)."""
        self.release()
        return self._volts()

    def _volts(self) -> np.ndarray:
        volts = self._all("VALL?")
        self._learn(self._applied, volts)
        return volts

    def set_max_voltage(self, channel: int, volts: float) -> None:
        """A channel's compliance voltage, V (0..VFULL)."""
        channel = check_index(self.resource, "channel", channel, self._n)
        volts = check_range(self.resource, "VMAX", volts, 0, self.v_full, "V")
        self._set(f"VMAX{channel}={volts!r}")
        self._vmax[channel] = volts

    def _send(self, channel: int, mA: float) -> None:
        self.release()
        self._set(f"I{channel}={float(mA)!r}")
        self._current[channel] = self._applied[channel] = mA

    def _send_all(self, channels: np.ndarray, mA: np.ndarray) -> None:
        """Set several channels in one round trip (their lines sent together, the replies
        read in order); what was applied is kept even when some failed (DriverError)."""
        cmds = [f"I{c}={float(v)!r}" for c, v in zip(channels, mA, strict=True)]
        try:
            replies = self.conn.query_each(cmds)
        except InstrumentError as exc:
            raise DriverError(f"write of {len(cmds)} channels failed: {exc}") from exc
        failed = []
        for c, v, cmd, reply in zip(channels, mA, cmds, replies, strict=True):
            reply = reply.strip()
            if reply.upper() == "OK":
                self._applied[c] = v
            else:
                error = qontrol_error(self.resource, reply, cmd)
                failed.append(str(error or f"{cmd!r}: expected OK, got {reply!r}"))
        if failed:
            raise DriverError(f"write failed on {len(failed)} of {len(cmds)}: {failed[0]}")

    def _check(self, new: np.ndarray) -> None:
        """Every limit of a whole new state, before anything is written."""
        if not np.all(np.isfinite(new)):
            raise LimitError(f"{self.resource}: currents must be finite, got {new.tolist()}")
        over = np.flatnonzero((new < 0) | (new > self._imax))
        if over.size:
            c = int(over[0])
            raise LimitError(
                f"{self.resource}: channel {c}: {new[c]:.6g} mA outside 0..{self._imax[c]:.6g} mA"
            )
        power = float(self.power_mW(new))
        if power > self._budget_mW:
            raise LimitError(
                f"{self.resource}: heater power {power:.6g} mW exceeds the budget "
                f"{self._budget_mW:.6g} mW"
            )

    def _learn(self, current_mA: np.ndarray, volts: np.ndarray) -> None:
        """Take V/I as the resistance where the current is the highest seen so far."""
        use = (current_mA >= MIN_RESISTANCE_CURRENT_MA) & (current_mA >= self._resistance_at_mA)
        self._resistance[use] = 1e3 * volts[use] / current_mA[use]
        self._resistance_at_mA[use] = current_mA[use]

    # ---- the firmware's ChipDriver -----------------------------------------------------------
    def write(self, channels: Sequence[int], current_mA: Sequence[float]) -> float:
        """Set these channels (all checked first); return the measured time, s, once settled."""
        start = time.monotonic()
        ch = np.asarray(channels, dtype=np.int64).ravel()
        value = np.asarray(current_mA, dtype=float).ravel()
        if ch.shape != value.shape:
            raise ShapeError(f"{ch.size} channels but {value.size} currents")
        if ch.size and (ch.min() < 0 or ch.max() >= self._n):
            raise PortError(f"channels must be in 0..{self._n - 1}, got {ch.tolist()}")
        new = self._current.copy()
        new[ch] = value
        self._check(new)
        modelled = 0.0
        try:
            modelled = self._apply(new)
        finally:
            self._current = self._applied.copy()  # what was applied, also part-way
        return self._spent(start, modelled)

    def _apply(self, new: np.ndarray) -> float:
        """Put ``new`` (checked) on the instrument: the channels that differ from what it has
        now, in one round trip; return once they have settled (paced). Returns the modelled
        time, s."""
        todo = np.flatnonzero(new != self._applied)
        if not todo.size:
            return 0.0
        self._send_all(todo, new[todo])
        # the hardware takes channel_write_s per channel, in order, then settles; the
        # channels were acknowledged together, when the last reply came
        modelled = todo.size * (self.channel_write_s + self.settle_s)
        if self.paced:
            until = time.monotonic() + modelled + _WAIT_MARGIN_S
            time.sleep(max(until - time.monotonic(), 0.0))
        return modelled

    def release(self) -> None:
        """Put the currents back that a measurement's rows left (see :meth:`measure`)."""
        if np.any(self._applied != self._current):
            start = time.monotonic()
            self._spent(start, self._apply(self._current))

    def _spent(self, start: float, modelled: float = 0.0) -> float:
        """The time an operation took, s: measured since ``start`` (paced), or the wall time
        plus the ``modelled`` waits it did not sleep (not paced)."""
        seconds = time.monotonic() - start + (0.0 if self.paced else modelled)
        self.elapsed_s += seconds
        return seconds

    def detect(
        self, input_field: Sequence[complex], outputs: Sequence[int] | None = None
    ) -> np.ndarray:
        return self._read(lambda detectors: detectors.detect(input_field, outputs))

    def monitor(self, outputs: Sequence[int] | None = None) -> np.ndarray:
        return self._read(lambda detectors: detectors.monitor(outputs))

    def _read(self, read: Callable[[Detectors], np.ndarray], rows: bool = False) -> np.ndarray:
        """``read(detectors)`` as floats (mW), its time spent; DriverError without them. The
        currents are the commanded ones first, unless the read is one of ``rows``."""
        if self.detectors is None:
            raise DriverError(f"{self.resource}: no detectors attached to this heater driver")
        if not rows:
            self.release()
        start = time.monotonic()
        try:
            return np.asarray(read(self.detectors), dtype=float)
        finally:
            self._spent(start)

    def _each_row(self, rows_mA: np.ndarray, read: Callable[[], np.ndarray]) -> np.ndarray:
        """Apply each row of currents in turn, ``read()`` at each. The commanded currents are
        put back lazily (:meth:`release`: before anything else reads or writes, and by the
        firmware at the end of each command), so the rows of consecutive measurements that set
        up the same light path write only what differs."""
        rows = np.asarray(rows_mA, dtype=float)
        if rows.ndim != 2 or rows.shape[1] != self._n:
            raise ShapeError(f"expected rows of {self._n} currents, got {rows.shape}")
        for row in rows:
            self._check(row)
        out = []
        start, modelled = time.monotonic(), 0.0
        try:
            for row in rows:
                modelled += self._apply(row)
                out.append(read())
        finally:
            self._spent(start, modelled)
        return np.array(out).reshape(len(rows), -1)

    def measure(
        self,
        rows_mA: np.ndarray,
        input_field: Sequence[complex],
        outputs: Sequence[int] | None = None,
    ) -> np.ndarray:
        return self._each_row(
            rows_mA, lambda: self._read(lambda d: d.detect(input_field, outputs), rows=True)
        )

    def voltage(self, rows_mA: np.ndarray) -> np.ndarray:
        return self._each_row(rows_mA, self._volts)

    def power_mW(self, current_mA: np.ndarray) -> np.ndarray:
        current = np.asarray(current_mA, dtype=float)
        return 1e-3 * np.sum(current**2 * self._resistance, axis=-1)

    def limits(self) -> tuple[np.ndarray, float]:
        return self._imax.copy(), self._budget_mW

    def temperature_C(self) -> float:
        return float("nan")

    def wait_settled(self) -> None:
        """``write`` returns once settled: nothing to wait for."""
