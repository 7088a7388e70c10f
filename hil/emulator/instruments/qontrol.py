"""The emulated Qontrol Q8iv heater driver (:class:`QontrolQ8iv`), which speaks Qontrol's own
line protocol, not SCPI. Its driver is :mod:`hil.instruments.qontrol`."""

from __future__ import annotations

import re

import numpy as np

from hil.emulator.instruments.scpi import BARE_NUMBER
from hil.emulator.world import BenchWorld
from hil.instruments.qontrol import Q8IV_IFULL_MA, Q8IV_VFULL_V
from photonics.errors import LimitError


class _QontrolError(Exception):
    def __init__(self, code: int, channel: int = 0) -> None:
        self.code, self.channel = code, channel


_QLINE = re.compile(r"^([A-Za-z]+)(\d*)([=?])(.*)$")


class QontrolQ8iv:
    """A Qontrol Q8iv-class heater driver (daisy-chained to one channel per heater of the
    world's chip) on the world's heater driver. Line protocol, replies and error codes: see
    :mod:`hil.instruments.qontrol`; one command per line.

    ``I<ch>=<mA>`` sets a current. ``V<ch>=<V>`` sets a voltage: the current that gives it
    through the heater's ``R(I) = a I^2 + c`` is written (the driver regulates current).
    ``V<ch>?`` reads the voltage the heater develops, ``I<ch>?`` the current. A write is
    refused (nothing changes) with E01 when the voltage would exceed the channel's VMAX, E02
    when the current exceeds its IMAX or the chip's limit, E03 when the chip's power budget
    would be exceeded. ``VALL?``/``IALL?`` answer on one line, comma-separated (the real one
    sends a line per channel). ``VMAX``/``IMAX`` start at full scale (12 V, 24 mA).
    """

    def __init__(self, world: BenchWorld, serial: str = "0001") -> None:
        self.world = world
        self.n = world.driver.n_channels
        self.id = f"Q8iv-{serial}"
        self.vmax = np.full(self.n, Q8IV_VFULL_V)
        self.imax = np.full(self.n, Q8IV_IFULL_MA)

    def handle(self, line: str | bytes) -> str:
        try:
            text = line.decode("ascii") if isinstance(line, bytes) else line
            m = _QLINE.match(text.strip())
            if m is None:
                raise _QontrolError(10)
            name, channel, op, value = m.group(1).upper(), m.group(2), m.group(3), m.group(4)
            return self._run(name, channel, op, value.strip())
        except UnicodeDecodeError:
            return "E10:00"
        except _QontrolError as exc:
            return f"E{exc.code:02d}:{exc.channel:02d}"

    def _run(self, name: str, channel: str, op: str, value: str) -> str:
        currents = self.world.driver.currents()
        if name in ("NCHAN", "ID", "VFULL", "IFULL", "VALL", "IALL"):
            if channel:
                raise _QontrolError(10)
            if op == "=":
                raise _QontrolError(13)
            if value:
                raise _QontrolError(11)
            return {
                "NCHAN": lambda: str(self.n),
                "ID": lambda: self.id,
                "VFULL": lambda: f"{Q8IV_VFULL_V:.1f} V",
                "IFULL": lambda: f"{Q8IV_IFULL_MA:.1f} mA",
                "VALL": lambda: ",".join(f"{v:.4f}" for v in self._volts(currents)),
                "IALL": lambda: ",".join(f"{i:.4f}" for i in currents),
            }[name]()
        if name not in ("V", "I", "VMAX", "IMAX"):
            raise _QontrolError(10)
        if not channel:
            raise _QontrolError(12)
        ch = int(channel)
        if ch >= self.n:
            raise _QontrolError(12, ch)
        if op == "?":
            if value:
                raise _QontrolError(11, ch)
            table = {
                "V": self._volts(currents),
                "I": currents,
                "VMAX": self.vmax,
                "IMAX": self.imax,
            }
            return f"{table[name][ch]:.4f}"
        if not BARE_NUMBER.match(value) or not float(value) >= 0:
            raise _QontrolError(11, ch)
        x = float(value)
        if name in ("VMAX", "IMAX"):
            full, limits = (
                (Q8IV_VFULL_V, self.vmax) if name == "VMAX" else (Q8IV_IFULL_MA, self.imax)
            )
            if x > full:
                raise _QontrolError(11, ch)
            limits[ch] = x
            return "OK"
        if name == "V" and x > self.vmax[ch]:
            raise _QontrolError(1, ch)
        mA = self._current_for(ch, x) if name == "V" else x
        self._write(ch, mA, currents)
        return "OK"

    def _volts(self, currents: np.ndarray) -> np.ndarray:
        return self.world.chip.heaters.voltage_V(currents)

    def _current_for(self, ch: int, volts: float) -> float:
        """The current (mA) at which heater ``ch`` develops ``volts``: the real root of
        ``1e-3 I (a I^2 + c) = V``, monotonic in I."""
        h = self.world.chip.heaters
        a, c = float(h.r_rise_ohm_per_mA2[ch]), float(h.r0_ohm[ch])
        roots = np.roots([1e-3 * a, 0.0, 1e-3 * c, -volts]) if a > 0 else [1e3 * volts / c]
        return float(min(r.real for r in np.atleast_1d(roots) if abs(r.imag) < 1e-9))

    def _write(self, ch: int, mA: float, currents: np.ndarray) -> None:
        if mA > self.imax[ch]:
            raise _QontrolError(2, ch)
        trial = currents.copy()
        trial[ch] = mA
        if self._volts(trial)[ch] > self.vmax[ch] * (1 + 1e-9):
            raise _QontrolError(1, ch)
        try:
            self.world.driver.write([ch], [mA])
        except LimitError:  # the chip refused; nothing was written
            over = mA > self.world.chip.heaters.max_current_mA[ch]
            raise _QontrolError(2 if over else 3, ch) from None
