"""Emulated bench instruments over one :class:`~hil.emulator.world.BenchWorld`: each has
``handle(line) -> str | bytes | None`` (the reply without terminator; bytes for a binary block;
None when there is no reply), as the servers of :mod:`hil.emulator.server` call it.

SCPI instruments (:class:`ScpiInstrument` and its subclasses) parse with the switch firmware's
grammar engine (:mod:`firmware.commands`): short and long mnemonics, any case, ``;``-joined
commands (each header absolute, as in the firmware: a command after ``;`` repeats its whole
path), unit suffixes, ``MIN``/``MAX``/``DEF``. Unlike the firmware, which parses a whole line
before running any of it, the commands of a line are parsed and run one after the other, as
the instruments do (``:SOUR0:POW:UNIT W;:SOUR0:POW 0.002`` reads 0.002 in W); the first error
stops the rest of the line. On top of the engine, this module adds what the instruments'
programming guides need:

- numeric header suffixes (``:SENS2:CHAN1:POW?``): a node listed in ``numbered`` takes a
  number in its range (omitted: 1, or the range's only value); any other number is -113;
- optional nodes, written in brackets (``:SOURce:POWer[:LEVel][:IMMediate]``);
- instrument units: Keysight takes a bare wavelength in metres (``1550E-9``; ``1550NM`` and
  ``1.55UM`` too); a laser's bare power is in its selected unit (dBm or W/mW), and ``DBM``,
  ``W``, ``MW``, ``UW``, ``NW`` suffixes are accepted wherever a power is.

Every SCPI instrument has ``*IDN?``, ``*RST``, ``*CLS``, ``*OPC``/``*OPC?``, ``*WAI``, ``*TST?``
and ``SYST:ERR?`` with the standard error queue; a bad command changes nothing and queues
its error (-1xx command, -2xx execution); the commands before it on the line have run.

The Qontrol emulation (:class:`QontrolQ8iv`) speaks Qontrol's own line protocol
(:mod:`hil.instruments.qontrol`). The pswitch switch controller is
``world.controller`` itself (``world.controller.handle``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from firmware.commands import (
    ErrorQueue,
    Param,
    ScpiError,
    Spec,
    format_reply,
    parse_args,
    split_line,
)
from hil.emulator.world import BenchWorld
from hil.instruments.lasers import (
    KEYSIGHT_LASER_POWER_MW,
    KEYSIGHT_LASER_WAVELENGTH_NM,
    TSL570_POWER_MW,
    TSL570_WAVELENGTH_NM,
)
from hil.instruments.power_meters import (
    N7744A_AVERAGING_S,
    N7744A_CHANNELS,
    N7744A_MAX_LOG_POINTS,
    N7744A_WAVELENGTH_NM,
    PM100D_WAVELENGTH_NM,
)
from hil.instruments.qontrol import Q8IV_IFULL_MA, Q8IV_VFULL_V
from photonics.chip import REFERENCE_WAVELENGTH_NM
from photonics.errors import LimitError, PswitchError, SettingsError

#: A dBm reading of no light at all is clipped here (1e-12 mW).
DBM_FLOOR = -120.0


def dbm(mW: float) -> float:
    """Power in dBm, clipped at :data:`DBM_FLOOR` for zero or negative (noisy dark) powers."""
    return max(10 * math.log10(mW), DBM_FLOOR) if mW > 0 else DBM_FLOOR


def float32_block(values: Sequence[float] | np.ndarray) -> bytes:
    """An IEEE 488.2 definite-length block (``#<d><length><bytes>``) of little-endian float32."""
    data = np.asarray(values, dtype="<f4").tobytes()
    length = str(len(data))
    return f"#{len(length)}{length}".encode() + data


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
        parts = re.split(r"(\[:[^\]]+\])", self.header)
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
_BARE = re.compile(f"^{_NUMBER}$")
_DBM = re.compile(rf"^({_NUMBER})\s*DBM$", re.IGNORECASE)
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

    def __init__(
        self, world: BenchWorld, idn: str, numbered: dict[str, tuple[int, int]] | None = None
    ) -> None:
        self.world, self.idn = world, idn
        self.numbered = dict(numbered or {})
        self.errors = ErrorQueue()
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

    # ---- the line protocol -------------------------------------------------------------------
    def handle(self, line: str | bytes) -> str | bytes | None:
        """Run one line; return the replies of its queries joined by ``;`` (bytes when one is
        a binary block), None without queries."""
        replies: list[str | bytes] = []
        try:
            for text in split_line(line):
                cmd = self._parse(text)  # after the commands before it: units may have changed
                reply = self._run(cmd)
                if cmd.query:
                    replies.append(reply if isinstance(reply, bytes) else format_reply(reply))
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
        if _BARE.match(token):
            token += self.bare_unit(number, param)
        m = _DBM.match(token)
        if m and param.unit == "mW":
            return f"{10 ** (min(float(m.group(1)), _MAX_DBM) / 10)!r}MW"
        return token

    # ---- IEEE 488.2 and SYSTem ---------------------------------------------------------------
    def _common(self) -> list[Entry]:
        return [
            Entry("*IDN", query=lambda _: self.idn),
            Entry("*RST", set=lambda _: self.reset()),
            Entry("*CLS", set=lambda _: self.errors.clear()),
            Entry("*OPC", set=lambda _: None, query=lambda _: 1),
            Entry("*WAI", set=lambda _: None),
            Entry("*TST", query=lambda _: 0),
            Entry("SYSTem:ERRor[:NEXT]", query=self._error),
            Entry("SYSTem:ERRor:COUNt", query=lambda _: len(self.errors)),
        ]

    def _error(self, _: int) -> str:
        e = self.errors.pop()
        return f"{e.code},{e.text}"


def _wavelength(low_high: tuple[float, float]) -> Param:
    return Param("wavelength", "number", *low_high, "nm", default=REFERENCE_WAVELENGTH_NM)


_UNIT_CODES = {"DBM": 0, "0": 0, "WATT": 1, "MW": 1, "1": 1}


def _unit(choices: tuple[str, ...]) -> Param:
    return Param("unit", "name", choices=choices)


def _in_unit(mW: float, code: int, linear_mW: float) -> float:
    """A power in dBm (code 0) or in linear units of ``linear_mW`` (code 1)."""
    return dbm(mW) if code == 0 else mW / linear_mW


@dataclass
class _MeterChannel:
    """The settings of one power-meter channel and its logging run (``log_start_s`` on the
    world's clock, None when no run; ``log_data`` once read, W)."""

    wavelength_nm: float = REFERENCE_WAVELENGTH_NM
    unit: int = 0  # 0 dBm, 1 W
    averaging_s: float = 1e-4
    log_points: int = 100
    log_averaging_s: float = 1e-4
    log_start_s: float | None = None
    log_data: np.ndarray | None = None

    def logging(self, now_s: float) -> bool:
        """Whether a run has started and has not ended at ``now_s``."""
        if self.log_start_s is None:
            return False
        return now_s < self.log_start_s + self.log_points * self.log_averaging_s


class PowerMeterN7744A(ScpiInstrument):
    """A Keysight N7744A (4 channels) or N7745A (8) multichannel power meter: channel ``n``
    (``SENS<n>``, ``FETC<n>``, ``READ<n>``, each with ``CHAN1``) reads chip output ``n - 1``.

    ``:SENS<n>[:CHAN1]:POW:WAV`` (m; query in m), ``:SENS<n>[:CHAN1]:POW:UNIT 0|1|DBM|W``,
    ``:SENS<n>[:CHAN1]:POW:ATIM`` (s), ``:FETC<n>[:CHAN1][:SCAL]:POW[:DC]?``,
    ``:READ<n>[:CHAN1][:SCAL]:POW[:DC]?`` (in the set unit; both take a reading now),
    ``:SENS<n>[:CHAN1]:FUNC:PAR:LOGG <points>,<averaging s>``,
    ``:SENS<n>[:CHAN1]:FUNC:STAT LOGG,STAR|STOP`` and its query (``LOGGING_STABILITY`` or
    ``NONE``, then ``PROGRESS`` or ``COMPLETE``), ``:SENS<n>[:CHAN1]:FUNC:RES?`` (the log as a
    binary block of little-endian float32, W). Logging runs on the world's clock: sample ``k``
    is averaged over ``[start + k t, start + (k + 1) t)`` and reads the heaters in effect at
    its end. The wavelength setting is kept but the detector's response is flat.
    """

    def __init__(self, world: BenchWorld, channels: int = 4, serial: str = "MY00000001") -> None:
        models = {n: m for m, n in N7744A_CHANNELS.items()}
        if channels not in models or channels > world.n_ports:
            raise SettingsError(
                f"channels must be one of {sorted(models)} and at most the chip's "
                f"{world.n_ports} outputs, got {channels}"
            )
        self.channels = channels
        numbered = {"SENS": (1, channels), "FETC": (1, channels), "READ": (1, channels)}
        idn = f"Keysight Technologies,{models[channels]},{serial},V1.0.0"
        super().__init__(world, idn, {**numbered, "CHAN": (1, 1)})

    def reset(self) -> None:
        self.state = [_MeterChannel() for _ in range(self.channels)]

    def bare_unit(self, number: int, param: Param) -> str:
        return "M" if param.unit == "nm" else ""  # Keysight: bare wavelengths in metres

    def _setter(self, name: str) -> Callable[..., None]:
        return lambda n, value: setattr(self.state[n - 1], name, value)

    def commands(self) -> list[Entry]:
        time_s = Param("time", "number", *N7744A_AVERAGING_S, "s", default=1e-4)
        points = Param("points", "int", 1, N7744A_MAX_LOG_POINTS, default=100)
        sens = "SENSe[:CHANnel]"
        return [
            Entry(
                f"{sens}:POWer:WAVelength",
                (_wavelength(N7744A_WAVELENGTH_NM),),
                set=self._setter("wavelength_nm"),
                query=lambda n: self.state[n - 1].wavelength_nm * 1e-9,
            ),
            Entry(
                f"{sens}:POWer:UNIT",
                (_unit(("DBM", "Watt", "0", "1")),),
                set=lambda n, u: setattr(self.state[n - 1], "unit", _UNIT_CODES[u]),
                query=lambda n: self.state[n - 1].unit,
            ),
            Entry(
                f"{sens}:POWer:ATIMe",
                (time_s,),
                set=self._setter("averaging_s"),
                query=lambda n: self.state[n - 1].averaging_s,
            ),
            Entry("FETCh[:CHANnel][:SCALar]:POWer[:DC]", query=self._reading),
            Entry("READ[:CHANnel][:SCALar]:POWer[:DC]", query=self._reading),
            Entry(
                f"{sens}:FUNCtion:PARameter:LOGGing",
                (points, time_s),
                set=self._log_setup,
                query=lambda n: [self.state[n - 1].log_points, self.state[n - 1].log_averaging_s],
            ),
            Entry(
                f"{sens}:FUNCtion:STATe",
                (
                    Param("function", "name", choices=("LOGGing",)),
                    Param("action", "name", choices=("STARt", "STOP")),
                ),
                set=self._function,
                query=self._function_state,
            ),
            Entry(f"{sens}:FUNCtion:RESult", query=self._result),
        ]

    def _reading(self, n: int) -> float:
        mW = float(self.world.output_power_mW()[n - 1])
        return _in_unit(mW, self.state[n - 1].unit, 1e3)

    def _log_setup(self, n: int, points: int, averaging_s: float) -> None:
        self.state[n - 1].log_points, self.state[n - 1].log_averaging_s = points, averaging_s

    def _function(self, n: int, _function: str, action: str) -> None:
        channel = self.state[n - 1]
        channel.log_start_s = self.world.clock() if action == "START" else None
        channel.log_data = None

    def _function_state(self, n: int) -> str:
        channel = self.state[n - 1]
        if channel.log_start_s is None:
            return "NONE,COMPLETE"
        running = channel.logging(self.world.clock())
        return "LOGGING_STABILITY," + ("PROGRESS" if running else "COMPLETE")

    def _result(self, n: int) -> bytes:
        c = self.state[n - 1]
        if c.log_start_s is None:
            raise ScpiError(-221, "no logging data: start with FUNC:STAT LOGG,STAR")
        if c.logging(self.world.clock()):
            raise ScpiError(-221, "logging still in progress")
        if c.log_data is None:  # sample k averages [start + k t, start + (k + 1) t)
            ends = c.log_start_s + c.log_averaging_s * np.arange(1, c.log_points + 1)
            c.log_data = 1e-3 * self.world.output_power_mW(ends)[:, n - 1]
        return float32_block(c.log_data)


class Mainframe8164B(ScpiInstrument):
    """A Keysight 8164B mainframe: a tunable laser in ``laser_slot`` (a laser named ``laser``
    on the world) and a 1xN optical switch module (81595B class) in ``switch_slot``, its
    outputs 1..N on the chip inputs 0..N-1.

    Laser: ``:SOUR<s>[:CHAN1]:WAV[:CW]`` (bare in m, query in m),
    ``:SOUR<s>[:CHAN1]:POW[:LEV][:IMM][:AMPL]`` (bare in the unit of ``:POW:UNIT``, dBm or W;
    query in it too), ``:SOUR<s>[:CHAN1]:POW:UNIT DBM|W|0|1``, ``:SOUR<s>[:CHAN1]:POW:STAT``.
    Switch: ``:ROUT<s>[:CHAN1] A,<k>`` and its query (``A,<k>``), ``:ROUT<s>[:CHAN1]:CONF?``
    (``A,A;1,<N>``). ``*RST``: laser off at 1550 nm and 0 dBm, switch to ``A,1``.
    """

    def __init__(
        self,
        world: BenchWorld,
        laser: str = "8164B",
        laser_slot: int = 0,
        switch_slot: int = 1,
        serial: str = "DE00000001",
    ) -> None:
        self.laser = laser
        world.add_laser(laser)
        numbered = {"SOUR": (laser_slot,) * 2, "ROUT": (switch_slot,) * 2, "CHAN": (1, 1)}
        super().__init__(world, f"Keysight Technologies,8164B,{serial},V5.25(72637)", numbered)

    def reset(self) -> None:
        self.power_unit = 0  # 0 dBm, 1 W
        self.world.set_laser(
            self.laser, on=False, wavelength_nm=REFERENCE_WAVELENGTH_NM, power_mW=1.0
        )
        self.world.select_input(0)

    def bare_unit(self, number: int, param: Param) -> str:
        if param.unit == "nm":
            return "M"
        return ("DBM", "W")[self.power_unit] if param.unit == "mW" else ""

    def commands(self) -> list[Entry]:
        source = "SOURce[:CHANnel]"
        world, name = self.world, self.laser
        return [
            Entry(
                f"{source}:WAVelength[:CW]",
                (_wavelength(KEYSIGHT_LASER_WAVELENGTH_NM),),
                set=lambda _, nm: world.set_laser(name, wavelength_nm=nm),
                query=lambda _: world.laser(name).wavelength_nm * 1e-9,
            ),
            Entry(
                f"{source}:POWer[:LEVel][:IMMediate][:AMPLitude]",
                (Param("power", "number", *KEYSIGHT_LASER_POWER_MW, "mW", default=1.0),),
                set=lambda _, mW: world.set_laser(name, power_mW=mW),
                query=lambda _: _in_unit(world.laser(name).power_mW, self.power_unit, 1e3),
            ),
            Entry(
                f"{source}:POWer:UNIT",
                (_unit(("DBM", "Watt", "0", "1")),),
                set=lambda _, u: setattr(self, "power_unit", _UNIT_CODES[u]),
                query=lambda _: self.power_unit,
            ),
            Entry(
                f"{source}:POWer:STATe",
                (Param("state", "bool"),),
                set=lambda _, on: world.set_laser(name, on=on),
                query=lambda _: world.laser(name).on,
            ),
            Entry(
                "ROUTe[:CHANnel]",
                (
                    Param("input", "name", choices=("A",)),
                    Param("output", "int", 1, world.n_ports),
                ),
                set=lambda _, _a, k: world.select_input(k - 1),
                query=lambda _: f"A,{world.selected_input + 1}",
            ),
            Entry("ROUTe[:CHANnel]:CONFig", query=lambda _: f"A,A;1,{world.n_ports}"),
        ]


class LaserTSL570(ScpiInstrument):
    """A Santec TSL-570 tunable laser (a laser named ``laser`` on the world).

    ``:WAV`` (nm; query in nm), ``:POW[:LEV]`` (bare in the unit of ``:POW:UNIT``: 0 dBm,
    1 mW; query in it too), ``:POW:UNIT``, ``:POW:STAT``, ``:POW:ACT[:LEV]?`` (the power out
    now: the set power when on, none when off). ``*RST``: off at 1550 nm and 0 dBm.
    """

    def __init__(self, world: BenchWorld, laser: str = "TSL-570", serial: str = "25010001") -> None:
        self.laser = laser
        world.add_laser(laser)
        super().__init__(world, f"SANTEC,TSL-570,{serial},0001.0000")

    def reset(self) -> None:
        self.power_unit = 0  # 0 dBm, 1 mW
        self.world.set_laser(
            self.laser, on=False, wavelength_nm=REFERENCE_WAVELENGTH_NM, power_mW=1.0
        )

    def bare_unit(self, number: int, param: Param) -> str:
        return ("DBM", "MW")[self.power_unit] if param.unit == "mW" else ""

    def _actual_mW(self) -> float:
        laser = self.world.laser(self.laser)
        return laser.power_mW if laser.on else 0.0

    def commands(self) -> list[Entry]:
        world, name = self.world, self.laser
        return [
            Entry(
                "WAVelength",
                (_wavelength(TSL570_WAVELENGTH_NM),),
                set=lambda _, nm: world.set_laser(name, wavelength_nm=nm),
                query=lambda _: world.laser(name).wavelength_nm,
            ),
            Entry(
                "POWer[:LEVel]",
                (Param("power", "number", *TSL570_POWER_MW, "mW", default=1.0),),
                set=lambda _, mW: world.set_laser(name, power_mW=mW),
                query=lambda _: _in_unit(world.laser(name).power_mW, self.power_unit, 1.0),
            ),
            Entry(
                "POWer:UNIT",
                (_unit(("DBM", "MW", "0", "1")),),
                set=lambda _, u: setattr(self, "power_unit", _UNIT_CODES[u]),
                query=lambda _: self.power_unit,
            ),
            Entry(
                "POWer:STATe",
                (Param("state", "bool"),),
                set=lambda _, on: world.set_laser(name, on=on),
                query=lambda _: world.laser(name).on,
            ),
            Entry(
                "POWer:ACTual[:LEVel]",
                query=lambda _: _in_unit(self._actual_mW(), self.power_unit, 1.0),
            ),
        ]


class PowerMeterPM100D(ScpiInstrument):
    """A Thorlabs PM100D power meter whose sensor sits on chip output ``port`` (0-based).

    ``MEAS[:SCAL]:POW?`` and ``READ?`` (a reading now, W), ``CONF[:SCAL]:POW`` (power is all
    it measures here), ``INIT[:IMM]`` then ``FETC?`` (the reading taken by INIT, W),
    ``SENS:CORR:WAV`` (nm; kept, the response is flat). ``*RST``: 1550 nm, no reading.
    """

    def __init__(self, world: BenchWorld, port: int, serial: str = "P0000001") -> None:
        if not 0 <= port < world.n_ports:
            raise SettingsError(f"port must be in 0..{world.n_ports - 1}, got {port}")
        self.port = port
        super().__init__(world, f"Thorlabs,PM100D,{serial},2.8.0")

    def reset(self) -> None:
        self.wavelength_nm = REFERENCE_WAVELENGTH_NM
        self.last_W: float | None = None

    def _watts(self, _: int = 0) -> float:
        return 1e-3 * float(self.world.output_power_mW()[self.port])

    def _initiate(self, _: int) -> None:
        self.last_W = self._watts()

    def _fetch(self, _: int) -> float:
        if self.last_W is None:
            raise ScpiError(-221, "no reading: send INIT first")
        return self.last_W

    def commands(self) -> list[Entry]:
        return [
            Entry("MEASure[:SCALar]:POWer", query=self._watts),
            Entry("READ", query=self._watts),
            Entry("CONFigure[:SCALar]:POWer", set=lambda _: None),
            Entry("INITiate[:IMMediate]", set=self._initiate),
            Entry("FETCh", query=self._fetch),
            Entry(
                "SENSe:CORRection:WAVelength",
                (_wavelength(PM100D_WAVELENGTH_NM),),
                set=lambda _, nm: setattr(self, "wavelength_nm", nm),
                query=lambda _: self.wavelength_nm,
            ),
        ]


class _QontrolError(Exception):
    def __init__(self, code: int, channel: int = 0) -> None:
        self.code, self.channel = code, channel


_QLINE = re.compile(r"^([A-Za-z]+)(\d*)([=?])(.*)$")
_QNUMBER = re.compile(f"^{_NUMBER}$")


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
        if not _QNUMBER.match(value) or not float(value) >= 0:
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
