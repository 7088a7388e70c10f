"""The emulated Qontrol Q8iv heater driver (:class:`QontrolQ8iv`), which speaks Qontrol's own
line protocol, not SCPI. Its driver is :mod:`hil.instruments.qontrol`."""

from __future__ import annotations

import re

import numpy as np

from hil.emulator.instruments.scpi import BARE_NUMBER
from hil.emulator.world import BenchWorld
from hil.instruments.qontrol import MODULE_CHANNELS, Q8IV_IFULL_MA, Q8IV_VFULL_V
from photonics.errors import LimitError


class _QontrolError(Exception):
    def __init__(self, code: int, channel: int = 0) -> None:
        self.code, self.channel = code, channel


_QLINE = re.compile(r"^([A-Za-z]+?)(\d*)([=?])(.*)$")
#: ``FIRMWARE?``: the emulated modules' firmware version.
FIRMWARE = "v2.4.1"
_NAMES = ("NCHAN", "ID", "VFULL", "IFULL", "VALL", "IALL", "NUPALL", "NUP", "FIRMWARE", "LIFETIME")


class QontrolQ8iv:
    """A Qontrol Q8iv-class heater driver (daisy-chained to one channel per heater of the
    world's chip) on the world's heater driver. Line protocol, replies and error codes: see
    :mod:`hil.instruments.qontrol`; one command per line.

    ``I<ch>=<mA>`` sets a current. ``V<ch>=<V>`` sets a voltage: the current that gives it
    through the heater's ``R(I) = a I^2 + c`` is written (the driver regulates current).
    ``V<ch>?`` reads the voltage the heater develops, ``I<ch>?`` the current. A write is
    refused (nothing changes) with E01 when the voltage would exceed the channel's VMAX, E02
    when the current exceeds its IMAX or the chip's limit, E03 when the chip's power budget
    would be exceeded. ``VMAX``/``IMAX`` start at full scale (12 V, 24 mA).

    The daisy chain: as many 8-channel Q8iv modules as the chip's heaters need
    (:data:`MODULE_CHANNELS`); channels past the last heater are open outputs (a write is
    taken, nothing flows: they read 0 mA and 0 V). ``NCHAN?`` counts the channels wired to
    heaters; ``NUP=0`` resets the chain (``OK``), ``NUP?`` and ``NUPALL?`` name its modules, a
    line each (``Q8iv-0001 : 0``). Vector commands answer a line per channel of the chain
    (``VALL?``, ``IALL?``) or take one value per channel of a module (``IVEC<first>=a,b,...``,
    ``VVEC``), as Qontrol's library sends them; ``FIRMWARE?``, ``LIFETIME?`` (s powered).
    """

    def __init__(self, world: BenchWorld, serial: str = "0001") -> None:
        self.world = world
        self.n = world.driver.n_channels
        self.modules = -(-self.n // MODULE_CHANNELS)
        self.chain = self.modules * MODULE_CHANNELS
        self.ids = [f"Q8iv-{int(serial, 16) + k:04X}" for k in range(self.modules)]
        self.id = self.ids[0]
        self.vmax = np.full(self.chain, Q8IV_VFULL_V)
        self.imax = np.full(self.chain, Q8IV_IFULL_MA)
        self.born_s = world.clock()

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
        currents = self._chain_currents()
        if name in ("IVEC", "VVEC"):
            return self._vector(name[0], channel, op, value, currents)
        if name == "NUP" and op == "=" and value == "0" and not channel:
            return "OK"  # the chain is re-enumerated: it is what it was
        if name in _NAMES:
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
                "VALL": lambda: "\n".join(f"{v:.4f}" for v in self._volts(currents)),
                "IALL": lambda: "\n".join(f"{i:.4f}" for i in currents),
                "NUP": lambda: "\n".join(f"{d} : {k}" for k, d in enumerate(self.ids)),
                "NUPALL": lambda: "\n".join(f"{d} : {k}" for k, d in enumerate(self.ids)),
                "FIRMWARE": lambda: FIRMWARE,
                "LIFETIME": lambda: f"{self.world.clock() - self.born_s:.0f} s",
            }[name]()
        if name not in ("V", "I", "VMAX", "IMAX"):
            raise _QontrolError(10)
        if not channel:
            raise _QontrolError(12)
        ch = int(channel)
        if ch >= self.chain:
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
        self._set(name, ch, x, currents)
        return "OK"

    def _set(self, name: str, ch: int, x: float, currents: np.ndarray) -> None:
        """Set channel ``ch``'s current (``I``) or voltage (``V``) to ``x`` (mA or V)."""
        if name == "V" and x > self.vmax[ch]:
            raise _QontrolError(1, ch)
        if ch >= self.n:  # an open output: taken, nothing flows
            return
        mA = self._current_for(ch, x) if name == "V" else x
        self._write(ch, mA, currents)

    def _vector(self, name: str, channel: str, op: str, value: str, currents: np.ndarray) -> str:
        """``IVEC<first>=a,b,...``: channels ``first``, ``first + 1``... of one module set in
        order (each as ``I<ch>=``; the first refused stops the rest)."""
        if op != "=":
            raise _QontrolError(13)
        first = int(channel) if channel else 0
        values = value.split(",")
        if first >= self.chain or first + len(values) > self.chain:
            raise _QontrolError(12, first)
        if not all(BARE_NUMBER.match(v.strip()) and float(v) >= 0 for v in values):
            raise _QontrolError(11, first)
        for k, v in enumerate(values):
            self._set(name, first + k, float(v), self._chain_currents())
        return "OK"

    def _chain_currents(self) -> np.ndarray:
        """Every channel of the chain's current, mA (the open outputs' 0)."""
        return np.concatenate([self.world.driver.currents(), np.zeros(self.chain - self.n)])

    def _volts(self, currents: np.ndarray) -> np.ndarray:
        volts = self.world.chip.heaters.voltage_V(currents[: self.n])
        return np.concatenate([volts, np.zeros(self.chain - self.n)])

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
        trial = currents[: self.n].copy()
        trial[ch] = mA
        if self._volts(trial)[ch] > self.vmax[ch] * (1 + 1e-9):
            raise _QontrolError(1, ch)
        try:
            self.world.driver.write([ch], [mA])
        except LimitError:  # the chip refused; nothing was written
            over = mA > self.world.chip.heaters.max_current_mA[ch]
            raise _QontrolError(2 if over else 3, ch) from None
