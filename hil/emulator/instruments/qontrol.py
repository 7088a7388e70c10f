"""The emulated Qontrol Q8iv heater driver (:class:`QontrolQ8iv`), which speaks Qontrol's own
line protocol, not SCPI. Its driver is :mod:`hil.instruments.qontrol`; its command list, with
where each command is documented, is :mod:`hil.emulator.manuals.q8iv`.

The commands are those of Qontrol's programming manual as its ``qontrol`` library (1.1.20)
tabulates them (``CMD_CODES``: the manual's command codes), for Q8-class output modules; the
replies and defaults follow what a Q8iv on firmware v2.4.1 answered in the recordings of
Qontrol's own test programs (``progs/*.json`` of github.com/takeqontrol/api, 2024), where the
manual gives no format. Where the bench's driver and its tests already read a format (bare
numbers for ``V?``, ``I?``, ``VMAX?``, ``IMAX?``; ``VFULL?`` as ``12.0 V``), it is kept.
"""

from __future__ import annotations

import math
import re

import numpy as np

from hil.emulator.world import BenchWorld
from hil.instruments.qontrol import (
    MIN_RESISTANCE_CURRENT_MA,
    MODULE_CHANNELS,
    Q8IV_IFULL_MA,
    Q8IV_VFULL_V,
    QONTROL_ERRORS,
)
from photonics.errors import LimitError

#: ``FIRMWARE?``: the emulated modules' firmware version.
FIRMWARE = "v2.4.1"
#: A module's error log (``LOG?``) keeps this many entries, a ring.
LOG_SIZE = 64
#: Words of a module's non-volatile memory (``NVM<address>``, ``NVMALL?``).
NVM_WORDS = 256
#: The largest value a setting takes: the binary protocol carries one 16-bit word per value.
WORD_MAX = 0xFFFF

_LINE = re.compile(r"^([A-Za-z]+)([0-9]*)([=?]?)(.*)$")
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
_INTEGER = re.compile(r"^(?:[+-]?[0-9]+|0[xX][0-9A-Fa-f]+)$")

#: Commands addressed to a channel of the chain: ``<cmd><ch>=``, ``<cmd><ch>?``, ``<cmd>ALL?``.
_CHANNEL = ("V", "I", "VMAX", "IMAX", "VCAL", "ICAL", "VERR", "IERR", "VIP")
_CHANNEL += ("SR", "PDI", "PDP", "PDR", "GAIN")
#: Channel settings only kept (name: highest value; the lowest is 0), read back as ``0.0000``.
_KEPT = {
    "VERR": Q8IV_VFULL_V,
    "IERR": Q8IV_IFULL_MA,
    "SR": WORD_MAX,
    "PDI": WORD_MAX,
    "PDP": WORD_MAX,
    "PDR": WORD_MAX,
    "GAIN": WORD_MAX,
}
#: Commands of a module (no channel): ``<cmd>=``, ``<cmd>?`` and a line per module ``<cmd>ALL?``.
_MODULE = ("VFULL", "IFULL", "NCHAN", "FIRMWARE", "ID", "LIFETIME", "NVM", "LOG", "QUIET")
_MODULE += ("LED", "NUP", "ADCT", "ADCN", "CCFN", "INTEST", "OK", "DIGSUP", "HELP", "SAFE")
_MODULE += ("ROCOM",)
#: Module settings kept for the whole chain: (default, highest value); the lowest is 0.
_SETTINGS = {
    "QUIET": (0, 1),
    "LED": (1, 1),
    "SAFE": (1, 1),
    "ROCOM": (0, 1),
    "ADCT": (5, WORD_MAX),
    "ADCN": (2, WORD_MAX),
    "CCFN": (0, WORD_MAX),
    "INTEST": (0, WORD_MAX),
    "DIGSUP": (0, WORD_MAX),
    "NUP": (0, WORD_MAX),
}
#: ``<cmd>VEC<first>=a,b,...``: consecutive channels in one line.
_VECTOR = ("V", "I", "VMAX", "IMAX")


class _QontrolError(Exception):
    def __init__(self, code: int, channel: int = 0) -> None:
        self.code, self.channel = code, channel


class ErrorLog:
    """The error replies a chain sent: each module's ring of :data:`LOG_SIZE` entries
    (``LOG?``: an error of a channel in the module of that channel, one of no channel in the
    first module), and every code since :meth:`clear` (:meth:`codes`, as a harness reads an
    SCPI error queue)."""

    def __init__(self, modules: int) -> None:
        self.modules = modules
        self.clear()

    def clear(self) -> None:
        self._rings: list[list[tuple[int, int, float] | None]] = [
            [None] * LOG_SIZE for _ in range(self.modules)
        ]
        self._count = [0] * self.modules
        self._codes: list[int] = []

    def add(self, code: int, channel: int, at_s: float) -> None:
        k = min(channel // MODULE_CHANNELS, self.modules - 1)
        self._rings[k][self._count[k] % LOG_SIZE] = (code, channel, at_s)
        self._count[k] += 1
        self._codes.append(code)

    def codes(self) -> list[int]:
        return list(self._codes)

    def __len__(self) -> int:
        return len(self._codes)

    def lines(self, module: int, now_s: float) -> list[str]:
        """Module ``module``'s log: ``#  3, E02:05, 12 s ago``, a line per filled slot."""
        out = []
        for slot, entry in enumerate(self._rings[module]):
            if entry is not None:
                code, channel, at_s = entry
                out.append(f"#{slot:3d}, E{code:02d}:{channel:02d}, {_ago(now_s - at_s)} ago")
        return out or ["#  0, none"]


def _ago(seconds: float) -> str:
    """An age as the log writes it: seconds below 2 minutes, minutes below 2 hours, else hours."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} m" if seconds < 7200 else f"{seconds / 3600:.0f} h"


def _number(value: str, channel: int, high: float) -> float:
    """A plain decimal in 0..high, else E11 on ``channel``."""
    if not _NUMBER.match(value):
        raise _QontrolError(11, channel)
    x = float(value)
    if not (math.isfinite(x) and 0 <= x <= high):
        raise _QontrolError(11, channel)
    return x


def _integer(value: str, channel: int, low: int, high: int) -> int:
    """A decimal or ``0x`` hexadecimal integer in low..high, else E11 on ``channel``."""
    if not _INTEGER.match(value):
        raise _QontrolError(11, channel)
    x = int(value, 0) if value.lower().startswith("0x") else int(value)
    if not low <= x <= high:
        raise _QontrolError(11, channel)
    return x


def help_lines() -> list[str]:
    """``HELP?``: the core command set and the error codes (:data:`QONTROL_ERRORS`)."""
    core = [
        ("V<ch>=<V>", "set a channel's voltage"),
        ("I<ch>=<mA>", "set a channel's current"),
        ("V<ch>?", "read a channel's voltage, V"),
        ("I<ch>?", "read a channel's current, mA"),
        ("VIPALL?", "every channel's voltage, current (power, resistance)"),
        ("VMAX<ch>=<V>", "set a channel's voltage limit"),
        ("IMAX<ch>=<mA>", "set a channel's current limit"),
    ]
    return [
        "Core commands (channels from 0; the programming manual lists the rest):",
        *(f" {syntax:<14} {text}" for syntax, text in core),
        "Error codes (E<code>:<channel>):",
        *(f" {code:02d}  {text}" for code, text in QONTROL_ERRORS.items()),
    ]


class QontrolQ8iv:
    """A Qontrol Q8iv-class heater driver (daisy-chained to one channel per heater of the
    world's chip) on the world's heater driver. One command per line, case-insensitive,
    channels from 0; a set answers ``OK``, an error ``E<code>:<channel>`` (codes of
    :data:`QONTROL_ERRORS`), recorded in the module's log (``LOG?``).

    What acts on the heaters: ``I<ch>=`` sets a current (mA); ``V<ch>=`` a voltage (V): the
    current that gives it through the heater's ``R(I) = a I^2 + c`` is written (the driver
    regulates current). ``V<ch>?`` reads the voltage the heater develops, ``I<ch>?`` the
    current, ``VIP<ch>?`` both (and the power, mW, and resistance, ohm, above 0.5 mA). A write
    is refused (nothing changes) with E01 when the voltage would exceed the channel's VMAX,
    E02 when the current exceeds its IMAX or the chip's limit, E03 when the chip's power budget
    would be exceeded. ``VMAX``/``IMAX`` (0..12 V, 0..24 mA) start at full scale.

    The daisy chain: as many 8-channel Q8iv modules as the chip's heaters need
    (:data:`MODULE_CHANNELS`); channels past the last heater are open outputs (a write is
    taken, nothing flows: they read 0 mA and 0 V). ``NCHAN?`` counts the channels wired to
    heaters (``NCHANALL?``: each module's); ``NUP=<n>`` re-enumerates the chain (``OK``),
    ``NUP?`` and ``NUPALL?`` name its modules, a line each (``Q8iv-0001: 0``). ``<cmd>ALL?``
    answers a line per channel of the chain for a channel command, a line per module for a
    module command; ``<cmd>VEC<first>=a,b,...`` (``IVEC``, ``VVEC``, ``VMAXVEC``, ``IMAXVEC``)
    sets channels ``first``, ``first + 1``... in one line.

    Kept and read back: the calibration (``VCAL``, ``ICAL``: four integers), the channel
    settings of :data:`_KEPT`, the module settings of :data:`_SETTINGS` (one value for the
    whole chain), the non-volatile memory (``NVM<address>=<word>``).
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
        self.cal = {"VCAL": np.zeros((self.chain, 4), int), "ICAL": np.zeros((self.chain, 4), int)}
        for table in self.cal.values():
            table[:, 0] = 1  # gain 1, no offset: as an uncalibrated channel reads
        self.kept = {name: np.zeros(self.chain) for name in _KEPT}
        self.settings = {name: default for name, (default, _) in _SETTINGS.items()}
        self.nvm = np.full(NVM_WORDS, WORD_MAX, dtype=int)
        self.errors = ErrorLog(self.modules)
        self.born_s = world.clock()

    # ---- the line --------------------------------------------------------------------------
    def handle(self, line: str | bytes) -> str:
        try:
            text = line.decode("ascii") if isinstance(line, bytes) else line
            return self._run(*self._parse(text.strip()))
        except UnicodeDecodeError:
            return self._error(_QontrolError(10))
        except _QontrolError as exc:
            return self._error(exc)

    def _error(self, exc: _QontrolError) -> str:
        self.errors.add(exc.code, exc.channel, self.world.clock())
        return f"E{exc.code:02d}:{exc.channel:02d}"

    @staticmethod
    def _parse(text: str) -> tuple[str, str, str, str, str]:
        """(command, form: '' / ALL / VEC, channel digits, operator, value) of a line."""
        m = _LINE.match(text)
        if m is None:
            raise _QontrolError(10)
        word, digits, op, value = m.group(1).upper(), m.group(2), m.group(3), m.group(4)
        if not op and not (word == "HELP" and not digits and not value):
            raise _QontrolError(10)  # only HELP is a query without '?'
        if word in _CHANNEL or word in _MODULE:
            return word, "", digits, op or "?", value.strip()
        stem, form = word[:-3], word[-3:]
        if (form == "ALL" and (stem in _CHANNEL or stem in _MODULE)) or (
            form == "VEC" and stem in _VECTOR
        ):
            return stem, form, digits, op, value.strip()
        raise _QontrolError(10)

    def _run(self, name: str, form: str, digits: str, op: str, value: str) -> str:
        if form == "VEC":
            return self._vector(name, digits, op, value)
        if name == "NVM":
            return self._nvm(form, digits, op, value)
        if form == "ALL":
            if digits:
                raise _QontrolError(10)
            if op == "=":
                raise _QontrolError(13)
            if value:
                raise _QontrolError(11)
            if name in _CHANNEL:
                return "\n".join(self._channel_values(name))
            if name == "NUP":
                return self._module_query(name, None)  # the chain, a line per module
            return "\n".join(self._module_query(name, k) for k in range(self.modules))
        if name in _CHANNEL:
            ch = self._channel(digits)
            if op == "?":
                if value:
                    raise _QontrolError(11, ch)
                return self._channel_values(name)[ch]
            self._channel_set(name, ch, value)
            return "OK"
        if digits:
            raise _QontrolError(10)
        if op == "=":
            if name not in _SETTINGS:
                raise _QontrolError(13)  # read only
            _, high = _SETTINGS[name]
            self.settings[name] = _integer(value, 0, 0, high)
            return "OK"  # NUP=<n>: the chain re-enumerated is what it was
        if value:
            raise _QontrolError(11)
        return self._module_query(name, None)

    def _channel(self, digits: str) -> int:
        if not digits:
            raise _QontrolError(12)
        ch = int(digits)
        if ch >= self.chain:
            raise _QontrolError(12, ch)
        return ch

    # ---- channels --------------------------------------------------------------------------
    def _channel_values(self, name: str) -> list[str]:
        """Every channel's reply to ``<name><ch>?``."""
        if name in self.cal:
            return [",".join(f"{x:+d}" for x in row) for row in self.cal[name]]
        if name in self.kept:
            return [f"{x:.4f}" for x in self.kept[name]]
        if name in ("VMAX", "IMAX"):
            return [f"{x:.4f}" for x in (self.vmax if name == "VMAX" else self.imax)]
        currents = self._chain_currents()
        volts = self._volts(currents)
        if name == "V":
            return [f"{v:.4f}" for v in volts]
        if name == "I":
            return [f"{i:.4f}" for i in currents]
        return [_vip(ch, float(volts[ch]), float(currents[ch])) for ch in range(self.chain)]

    def _channel_set(self, name: str, ch: int, value: str) -> None:
        if name == "VIP":
            raise _QontrolError(13, ch)  # a reading
        if name in self.cal:
            parts = value.split(",")
            if len(parts) != 4:
                raise _QontrolError(11, ch)
            self.cal[name][ch] = [_integer(p.strip(), ch, -32768, 32767) for p in parts]
        elif name in self.kept:
            self.kept[name][ch] = _number(value, ch, _KEPT[name])
        elif name in ("VMAX", "IMAX"):
            limits, full = (
                (self.vmax, Q8IV_VFULL_V) if name == "VMAX" else (self.imax, Q8IV_IFULL_MA)
            )
            limits[ch] = _number(value, ch, full)
        else:
            self._set(name, ch, _number(value, ch, math.inf), self._chain_currents())

    def _vector(self, name: str, digits: str, op: str, value: str) -> str:
        """``<name>VEC<first>=a,b,...``: channels ``first``, ``first + 1``... set in order. A
        limit vector is checked whole before it is written; a current or voltage vector is
        written a channel at a time, the first refused stopping the rest."""
        if op != "=":
            raise _QontrolError(13)
        first = int(digits) if digits else 0
        values = value.split(",")
        if first >= self.chain or first + len(values) > self.chain:
            raise _QontrolError(12, first)
        full = {"VMAX": Q8IV_VFULL_V, "IMAX": Q8IV_IFULL_MA}.get(name, math.inf)
        numbers = [_number(v.strip(), first + k, full) for k, v in enumerate(values)]
        if name in ("VMAX", "IMAX"):
            limits = self.vmax if name == "VMAX" else self.imax
            limits[first : first + len(numbers)] = numbers
            return "OK"
        for k, x in enumerate(numbers):
            self._set(name, first + k, x, self._chain_currents())
        return "OK"

    def _set(self, name: str, ch: int, x: float, currents: np.ndarray) -> None:
        """Set channel ``ch``'s current (``I``) or voltage (``V``) to ``x`` (mA or V)."""
        if name == "V" and x > self.vmax[ch]:
            raise _QontrolError(1, ch)
        if ch >= self.n:  # an open output: taken, nothing flows
            return
        mA = self._current_for(ch, x) if name == "V" else x
        self._write(ch, mA, currents)

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

    # ---- modules ---------------------------------------------------------------------------
    def _module_query(self, name: str, k: int | None) -> str:
        """Module ``k``'s reply to ``<name>?`` (``<name>ALL?``'s line), or the chain's
        (``<name>?``: the first module's, but ``NCHAN?`` and ``NUP?`` answer for the chain)."""
        if name == "NUP":
            return "\n".join(f"{d}: {j}" for j, d in enumerate(self.ids))
        if name in self.settings:
            return str(self.settings[name])
        now, m = self.world.clock(), k or 0
        replies = {
            "VFULL": lambda: f"{Q8IV_VFULL_V:.1f} V",
            "IFULL": lambda: f"{Q8IV_IFULL_MA:.1f} mA",
            # the channels wired to heaters: of the chain, or of module k
            "NCHAN": lambda: str(
                self.n if k is None else min(MODULE_CHANNELS, self.n - MODULE_CHANNELS * k)
            ),
            "FIRMWARE": lambda: FIRMWARE,
            "ID": lambda: self.ids[m],
            "LIFETIME": lambda: f"{now - self.born_s:.0f} s",
            "LOG": lambda: "\n".join(self.errors.lines(m, now)),
            "OK": lambda: "1",
            "HELP": lambda: "\n".join(help_lines()),
        }
        return replies[name]()

    def _nvm(self, form: str, digits: str, op: str, value: str) -> str:
        """``NVM<address>=<word>``, ``NVM<address>?`` (``0x0001``), ``NVMALL?``: each module's
        words, two a line (``00 : 0x0001,  01 : 0xFF78``)."""
        if form == "ALL":
            if digits or op == "=" or value:
                raise _QontrolError(10 if digits else 13 if op == "=" else 11)
            pairs = [
                f"{a:02X} : 0x{self.nvm[a]:04X},  {a + 1:02X} : 0x{self.nvm[a + 1]:04X}"
                for a in range(0, NVM_WORDS, 2)
            ]
            return "\n".join(pairs * self.modules)
        if not digits:
            raise _QontrolError(12)
        address = int(digits)
        if address >= NVM_WORDS:
            raise _QontrolError(12, address)
        if op == "?":
            if value:
                raise _QontrolError(11, address)
            return f"0x{self.nvm[address]:04X}"
        self.nvm[address] = _integer(value, address, 0, WORD_MAX)
        return "OK"


def _vip(ch: int, volts: float, mA: float) -> str:
    """One channel of ``VIPALL?``: ``<module>,<channel>: +V V, +I mA``, and the power (mW) and
    resistance (ohm) when the current says something about them."""
    k, c = divmod(ch, MODULE_CHANNELS)
    line = f"{k},{c}: {volts:+.4f} V, {mA:+.4f} mA"
    if mA >= MIN_RESISTANCE_CURRENT_MA:
        line += f", {volts * mA:8.4f} mW, {1e3 * volts / mA:6.0f} Ohm"
    return line
