"""The emulated Keysight N774x multiport power meters (:class:`PowerMeterN7744A`: N7744A/C,
N7745A/C, N7747A/C, N7748A/C), reading the world's chip outputs. Their driver is
:class:`hil.instruments.power_meters.N7744A`.

The manuals: *Keysight N77xx Series Programming Guide*, Edition 7, March 2015 (the A models;
"PG" below, pages of that edition) and the *Keysight N774xC Series Multiport Power Meter
Programming Guide* where its pages were seen (the C models). The command table is
:mod:`hil.emulator.instruments.n774x_commands`; this module keeps the state and what acts on the
light: readings, averaging, calibration offset and reference (relative mode), range errors, and
the data-acquisition functions (logging, stability, MinMax) on the world's clock.

(Over 500 lines: the readings and the three functions, which share the channels' settings and
the world's clock, are read side by side; the command table and the stored-only interface are
in :mod:`~hil.emulator.instruments.n774x_commands`.)
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments.n774x_commands import Interface, entries
from hil.emulator.instruments.scpi import BARE_NUMBER, Entry, ScpiInstrument, dbm, float32_block
from hil.emulator.world import BenchWorld
from hil.instruments.power_meters import N7744A_CHANNELS
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM
from photonics.errors import SettingsError

#: A reading beyond the manual range (``RANG:AUTO 0``): SCPI's not-a-number, 9.91E+37 (PG p. 134
#: gives the ranges' upper limits, not the reply; clients test ``> 1e20``).
OVER_RANGE = 9.91e37
#: Upper limit of a manual range, as a factor of the range's decade (PG p. 134: the +10 dBm
#: range reads up to 19.999 mW).
RANGE_HEADROOM = 2.0
#: Shortest time between MinMax samples, s (PG p. 125: "not less than about 2 ms").
MINMAX_MIN_PERIOD_S = 2e-3
#: Most MinMax samples evaluated per query: a run left for hours on a virtual clock is read
#: from its newest samples (its older extremes are those of the samples seen at earlier queries).
MINMAX_BATCH = 10_000
#: Zeroing fails when a channel sees more than this, mW (-40 dBm): a zero needs the input dark.
ZERO_DARK_MW = 1e-4
#: Stored measurement settings (``:CONFigure:MEASurement:SETTing``; the guide does not say).
SETTING_PLACES = 4
#: The detector's wavelength-response table (``:SLOT:WAV:RESP?``): 10 nm steps, flat (1.0).
RESPONSE_STEP_NM = 10.0


@dataclass
class Settings:
    """One channel's measurement setting: everything the ``:SENSe`` commands set (PG p. 78),
    the *RST values by default. Powers in mW, times in s."""

    wavelength_nm: float = REFERENCE_WAVELENGTH_NM
    unit: int = 0  # 0 dBm, 1 W
    averaging_s: float = 1e-4
    range_dbm: float = 10.0
    range_auto: bool = True
    gain_auto: bool = True
    correction_db: float = 0.0
    reference_state: bool = False  # relative (dB) readings
    reference_slot: int = 255  # 255: relative to the TOREF value, else to that slot
    reference_channel: int = 0
    toref_mW: float = 1.0
    tomod_db: float = 0.0
    # the data-acquisition functions share these (PG p. 123: setting one sets the others)
    points: int = 100
    function_averaging_s: float = 1e-4
    period_s: float = 1e-4
    minmax_mode: str = "WIND"
    loops: int = 1


@dataclass
class Run:
    """A data-acquisition function started by ``:SENS:FUNC:STAT <f>,STAR`` at ``armed_s``:
    ``start_s`` (world clock) once it runs (None while it waits for a trigger), its timing,
    the samples' start times when each trigger starts one (SME), and MinMax's running state."""

    function: str  # LOGG, STAB, MINM
    armed_s: float
    start_s: float | None
    points: int
    averaging_s: float
    period_s: float
    loops: int  # 0: endless
    single: bool = False  # SME: every trigger starts one sample
    starts: list[float] = field(default_factory=list)
    triggers: int = 0
    done: dict[int, np.ndarray] = field(default_factory=dict)  # loop index -> samples, mW
    next_sample: int = 0  # MinMax: the next sample index to evaluate
    extremes: tuple[float, float, float] | None = None  # MinMax: min, max, last, mW
    window: deque = field(default_factory=deque)

    @property
    def loop_s(self) -> float:
        return self.points * self.period_s

    def end_s(self) -> float | None:
        """When the run completes, world clock; None while it waits or never ends."""
        if self.function == "MINM" or self.start_s is None:
            return None
        if self.single:
            if len(self.starts) < self.points:
                return None
            return self.starts[-1] + self.averaging_s
        return None if self.loops == 0 else self.start_s + self.loops * self.loop_s

    def finished_loops(self, now_s: float) -> int:
        if self.start_s is None or self.function == "MINM":
            return 0
        if self.single:
            end = self.end_s()
            return int(end is not None and now_s >= end)
        done = int(max(0.0, now_s - self.start_s) / self.loop_s + 1e-9)  # exact ends count
        return done if self.loops == 0 else min(done, self.loops)

    def sample_starts(self, loop: int) -> np.ndarray:
        if self.single:
            return np.asarray(self.starts[: self.points])
        first = self.start_s + loop * self.loop_s
        return first + self.period_s * np.arange(self.points)


@dataclass
class Channel:
    """One channel: its setting, software triggering, trigger response, last reading (mW,
    None before any), zeroing status and data-acquisition function."""

    settings: Settings = field(default_factory=Settings)
    continuous: bool = False
    trigger_input: str = "IGN"
    trigger_output: str = "DIS"
    trigger_edge: int = 0
    trigger_delay: int = 0  # in 1/32 MHz
    trigger_offset: int = 0  # incoming triggers ignored before a function starts
    last_mW: float | None = None
    zero_status: int = 0
    run: Run | None = None
    result: np.ndarray | None = None  # the last completed function's samples, mW


class PowerMeterN7744A(ScpiInstrument):
    """A Keysight N774x multiport power meter (``model``, default by ``channels``: N7747A 2,
    N7744A 4, N7745A 8): channel ``n`` (``SENS<n>``, ``FETC<n>``, ``READ<n>``, each with an
    optional ``CHAN1``) reads chip output ``outputs[n - 1]`` (default ``n - 1``).

    What acts on the light (PG ch. 4): ``READ`` takes a reading (the mean of the light over the
    averaging time before now), ``INIT:IMM`` too and ``FETC`` returns it (a fresh one with
    ``INIT:CONT 1``); readings in dBm or W, plus the calibration factor ``SENS:CORR`` (dB), or
    in dB relative to a reference (``SENS:POW:REF``, ``:REF:STAT``, ``:REF:STAT:RAT``); with
    ``RANG:AUTO 0`` a power over the range reads :data:`OVER_RANGE`. The functions
    (``SENS:FUNC:STAT LOGG|STAB|MINM,STAR``) run on the world's clock: logging sample ``k``
    averages the light over ``[start + k t, start + (k + 1) t)``, stability sample ``k`` over
    ``[start + k p, start + k p + t)`` (period ``p``), MinMax keeps the minimum, maximum and
    last sample every ``max(ATIM, 2 ms)``; with ``TRIG:INP SME|CME|MME`` a function waits for
    a trigger (``INIT:IMM``, ``:TRIG NODEA``), ``FUNC:LOOP`` repeats it (``RES:INDex?``,
    ``RES:BUFA?``/``BUFB?``). A client polling ``FUNC:STAT?`` or ``RES:IND?`` is waiting: the
    world's time goes to the run's (or the loop's) end. Results are little-endian float32 in
    the channel's unit. Zeroing fails on a lit channel. The wavelength is kept; the detector's
    response is flat. The rest (LAN, GPIB, date, stored settings, trigger output) is kept and
    read back. Numbers in Keysight's NR3 (``+1.23456789E-006``).
    """

    #: Places for stored measurement settings (``:CONF:MEAS:SETT``; the guide gives none).
    setting_places = SETTING_PLACES

    def __init__(
        self,
        world: BenchWorld,
        channels: int = 4,
        serial: str = "MY00000001",
        model: str | None = None,
        outputs: Sequence[int] | None = None,
    ) -> None:
        model = model or {2: "N7747A", 4: "N7744A", 8: "N7745A"}.get(channels)
        if model not in N7744A_CHANNELS or N7744A_CHANNELS[model] != channels:
            raise SettingsError(
                f"an N774x meter of {channels} channels: model {model!r} has "
                f"{N7744A_CHANNELS.get(model or '', 'no')} (models: {N7744A_CHANNELS})"
            )
        #: The chip output each channel reads (channel n: ``outputs[n - 1]``).
        self.outputs = tuple(range(channels)) if outputs is None else tuple(outputs)
        if len(self.outputs) != channels or not all(0 <= o < world.n_ports for o in self.outputs):
            raise SettingsError(
                f"outputs must give a chip output (0 to {world.n_ports - 1}) for each of the "
                f"{channels} channels, got {self.outputs}"
            )
        self.channels, self.model, self.serial = channels, model, serial
        #: Lowest range, dBm (PG p. 134: the N7747A/48A go on to -70 dBm).
        self.range_low_dbm = -70.0 if model[:5] in ("N7747", "N7748") else -30.0
        #: LAN and GPIB, kept by *RST and SYST:PRES (PG p. 68).
        self.interface = Interface(model, serial)
        numbered = {
            name: (1, channels) for name in ("SENS", "FETC", "READ", "INIT", "TRIG", "SLOT", "STAT")
        }
        idn = f"Keysight Technologies,{model},{serial},V1.0.0"
        super().__init__(world, idn, {**numbered, "CHAN": (1, 1), "HEAD": (1, 1)})

    def reset(self) -> None:
        """*RST and ``SYST:PRES``: every channel's setting and function, the stored settings
        (PG p. 41: deleted), the trigger configuration; not the interface (LAN, GPIB)."""
        self.state = [Channel() for _ in range(self.channels)]
        self.trigger_configuration = "DEF"
        self.stored: dict[int, list[Settings]] = {}
        self.actual = 0  # the stored setting last saved or recalled (0: none)
        self.date, self.time, self.lxi_identify = (0, 0, 0), (0, 0, 0), False

    def commands(self) -> list[Entry]:
        return entries(self)

    def bare_unit(self, number: int, param: Param) -> str:
        return "M" if param.unit == "nm" else ""  # Keysight: bare wavelengths in metres

    def _token(self, token: str, param: Param, number: int) -> str:
        """The arguments whose form the engine cannot read alone: a range in dBm rounded to
        its 10 dB step (PG p. 134), a reference value in dB (TOMODule) or W/dBm (TOREF, PG
        p. 135; the form is kept for :meth:`set_reference`), ``TOREF`` as slot 255 (p. 137)."""
        upper = token.upper()
        if param.name == "range" and upper not in ("MIN", "MAX", "DEF"):
            body = token[:-3] if upper.endswith("DBM") else token
            if BARE_NUMBER.match(body.strip()):
                return repr(10.0 * round(float(body) / 10))
        if param.name == "reference value":
            self.reference_form = "bare" if BARE_NUMBER.match(token) else "power"
            if upper.endswith("DB"):
                self.reference_form = "dB"
                scale, body = (1e-3, token[:-3]) if upper.endswith("MDB") else (1.0, token[:-2])
                if BARE_NUMBER.match(body.strip()):
                    return repr(float(body) * scale)
        if param.name == "reference slot" and upper == "TOREF":
            return "255"
        return super()._token(token, param, number)

    # ---- readings -------------------------------------------------------------------------------
    def seen_mW(self, n: int, times_s: np.ndarray | None = None, averaging_s: float | None = None):
        """The power channel ``n`` reads, mW, with its calibration factor: now (averaged over
        its averaging time before now), or at ``times_s`` (each averaged over
        ``averaging_s`` before it)."""
        s = self.state[n - 1].settings
        avg = s.averaging_s if averaging_s is None else averaging_s
        # now: a reading integrates the light of the averaging time after it starts
        light = self.world.reading_mW(avg) if times_s is None else None
        if light is None:
            light = self.world.output_power_mW(times_s, averaging_s=avg)
        mW = light[..., self.outputs[n - 1]]
        mW = mW * 10 ** (s.correction_db / 10)
        return float(mW) if times_s is None else mW

    def measure(self, n: int) -> float:
        """A new reading of channel ``n`` (a software trigger), kept for ``FETCh``, mW."""
        self.state[n - 1].last_mW = self.seen_mW(n)
        return self.state[n - 1].last_mW

    def fetched_mW(self, n: int) -> float:
        """What ``FETCh`` returns: the last reading, a new one when measuring continuously
        or when none was taken since *RST."""
        c = self.state[n - 1]
        return self.measure(n) if c.continuous or c.last_mW is None else c.last_mW

    def in_unit(self, n: int, mW: float) -> float:
        """A reading as channel ``n`` replies it: dBm or W, dB when relative, or
        :data:`OVER_RANGE` beyond a manual range."""
        s = self.state[n - 1].settings
        if not s.range_auto and mW > RANGE_HEADROOM * 10 ** (s.range_dbm / 10):
            return OVER_RANGE
        if s.reference_state:
            if s.reference_slot == 255:
                return dbm(mW) - dbm(s.toref_mW)
            return dbm(mW) - dbm(self.seen_mW(s.reference_slot)) - s.tomod_db
        return dbm(mW) if s.unit == 0 else 1e-3 * mW

    def samples_in_unit(self, n: int, mW: np.ndarray) -> np.ndarray:
        """Function results in the channel's unit (PG p. 130: dBm or W), float32."""
        unit = self.state[n - 1].settings.unit
        out = 10 * np.log10(np.maximum(mW, 1e-15)) if unit == 0 else 1e-3 * mW
        return out.astype("<f4")

    # ---- settings --------------------------------------------------------------------------------
    def settings(self, n: int) -> Settings:
        return self.state[n - 1].settings

    def set_setting(self, n: int, name: str, value: object) -> None:
        """A ``:SENSe`` setting of channel ``n``."""
        setattr(self.settings(n), name, value)

    def check_idle(self, n: int) -> None:
        """The functions' parameters are refused while one runs (PG p. 132: stop it, -221)."""
        run = self.state[n - 1].run
        if run is not None and not self.complete(n):
            raise ScpiError(-221, f"a function runs on channel {n}: stop it first")

    def set_logging(self, n: int, points: int, averaging_s: float) -> None:
        self.check_idle(n)
        s = self.settings(n)
        s.points, s.function_averaging_s, s.period_s = points, averaging_s, averaging_s

    def set_stability(self, n: int, total_s: float, period_s: float, averaging_s: float) -> None:
        """PG p. 126: the total time longer than the period, the period than the averaging
        time; the points are the total over the period."""
        self.check_idle(n)
        if not averaging_s <= period_s <= total_s:
            raise ScpiError(-222, "need averaging time <= period time <= total time")
        points = int(round(total_s / period_s, 9))
        if points > 1_000_000:
            raise ScpiError(-222, f"{points} points; at most 1000000")
        s = self.settings(n)
        s.points, s.function_averaging_s, s.period_s = points, averaging_s, period_s

    def set_minmax(self, n: int, mode: str, points: int) -> None:
        self.check_idle(n)
        s = self.settings(n)
        s.minmax_mode, s.points = mode[:4], points

    def set_range(self, n: int, value_dbm: float) -> None:
        """The range, dBm, already rounded to its 10 dB step (:meth:`_token`)."""
        self.settings(n).range_dbm = float(value_dbm)

    def set_reference(self, n: int, mode: str, value: float) -> None:
        """``TOMODule,<dB>`` or ``TOREF,<W|dBm>`` (PG p. 135; the engine read a power as mW);
        a bare number is dB (TOMODule) or W (TOREF)."""
        form = getattr(self, "reference_form", "power")
        if mode.startswith("TOMOD"):
            if form == "power":
                raise ScpiError(-131, "TOMODule takes a value in dB")
            self.settings(n).tomod_db = float(value)
            return
        if form == "dB":
            raise ScpiError(-131, "TOREF takes W or dBm, not dB")
        mW = 1e3 * value if form == "bare" else value
        if not mW > 0:
            raise ScpiError(-222, "a TOREF reference must be a positive power")
        self.settings(n).toref_mW = float(mW)

    def reference(self, n: int, mode: str) -> float:
        s = self.settings(n)
        if mode.startswith("TOMOD"):
            return s.tomod_db
        return dbm(s.toref_mW) if s.unit == 0 else 1e-3 * s.toref_mW

    def set_ratio(self, n: int, slot: int, channel: int) -> None:
        if slot != 255 and not 1 <= slot <= self.channels:
            raise ScpiError(-222, f"slot {slot}: 1..{self.channels} or TOREF (255)")
        s = self.settings(n)
        s.reference_slot, s.reference_channel = slot, (0 if slot == 255 else channel)

    # ---- data-acquisition functions --------------------------------------------------------------
    def start_function(self, n: int, function: str, action: str) -> None:
        """``:SENS<n>:FUNC:STAT LOGG|STAB|MINM,STAR|STOP`` (PG p. 132). STOP keeps a completed
        run's samples for ``RES?``."""
        c, now = self.state[n - 1], self.world.clock()
        if c.run is not None and self.complete(n) and c.run.function != "MINM":
            c.result = self._loop_samples(n, max(0, c.run.finished_loops(now) - 1))
        c.run = None
        if action == "STOP":
            return
        s = c.settings
        minmax = function.startswith("MINM")
        waits = c.trigger_input in ("SME", "CME", "MME")
        c.run = Run(
            function=function[:4],
            armed_s=now,
            start_s=None if waits else now,
            points=s.points,
            averaging_s=s.averaging_s if minmax else s.function_averaging_s,
            period_s=max(s.averaging_s, MINMAX_MIN_PERIOD_S) if minmax else s.period_s,
            loops=1 if c.trigger_input == "CME" else s.loops,
            single=c.trigger_input == "SME" and not minmax,
        )
        if c.run.single:
            c.run.start_s = now  # sampling is armed; each trigger takes one sample
        c.result = None

    def trigger(self, channels: Sequence[int]) -> None:
        """An input trigger on ``channels``: each armed function takes it (after
        ``TRIG:OFFS`` ignored ones, ``TRIG:DEL`` later); a channel without one measures."""
        now = self.world.clock()
        for n in channels:
            c = self.state[n - 1]
            run = c.run
            if run is None:
                self.measure(n)
                continue
            run.triggers += 1
            if run.triggers <= c.trigger_offset:
                continue
            at = now + c.trigger_delay / 32e6
            if run.single and len(run.starts) < run.points:
                run.starts.append(at)
            elif not run.single and run.start_s is None:
                run.start_s = at

    def software_trigger(self, n: int) -> None:
        """``INIT<n>:IMM`` (PG p. 116): in a function it triggers every armed channel."""
        armed = [m for m in range(1, self.channels + 1) if self.state[m - 1].run is not None]
        self.trigger(armed if armed else [n])

    def hardware_trigger(self, node: str) -> None:
        """``:TRIGger NODEA|NODEB`` (PG p. 141): NODEA is a trigger at the input connector
        (none while ``TRIG:CONF DIS``), NODEB one at the output connector (nothing to see)."""
        if node in ("NODEA", "1") and self.trigger_configuration != "DIS":
            listening = [
                m for m in range(1, self.channels + 1) if self.state[m - 1].trigger_input != "IGN"
            ]
            self.trigger(listening)

    def complete(self, n: int) -> bool:
        run, now = self.state[n - 1].run, self.world.clock()
        end = None if run is None else run.end_s()
        return run is not None and end is not None and now >= end

    def function_state(self, n: int) -> str:
        """``FUNC:STAT?``: the mode (NONE, LOGGING_STABILITY, MINMAX) and PROGRESS/COMPLETE.
        Polling a run that ends is waiting for it: the time goes to its end."""
        run = self.state[n - 1].run
        if run is None:
            return "NONE,COMPLETE"
        mode = "MINMAX" if run.function == "MINM" else "LOGGING_STABILITY"
        if self.complete(n):
            return f"{mode},COMPLETE"
        end = run.end_s()
        if end is not None:  # a client polling a run is waiting for it
            self.world.wait_until(end)
        return f"{mode},PROGRESS"

    def loop_index(self, n: int) -> int:
        """``RES:INDex?``: loops finished; polling waits for the next one to end."""
        run = self.state[n - 1].run
        if run is None or run.start_s is None or run.function == "MINM":
            return 0
        now = self.world.clock()
        finished = run.finished_loops(now)
        if not self.complete(n) and not run.single:
            self.world.wait_until(run.start_s + (finished + 1) * run.loop_s)
        return finished

    def _loop_samples(self, n: int, loop: int) -> np.ndarray:
        """The samples of loop ``loop`` (finished), mW: each the light averaged over the
        function's averaging time from its start."""
        run = self.state[n - 1].run
        assert run is not None
        if loop not in run.done:
            starts = run.sample_starts(loop)
            run.done[loop] = self.seen_mW(n, starts + run.averaging_s, run.averaging_s)
            for old in [k for k in run.done if k < loop - 1]:
                del run.done[old]  # a buffer pair at most (PG p. 127)
        return run.done[loop]

    def result(self, n: int, buffer: int | None = None) -> bytes:
        """``FUNC:RES?`` (PG p. 130): the last function's samples (the last finished loop;
        ``buffer`` 0 or 1: the last in buffer A or B), or MinMax's minimum, maximum and
        last sample, as a block of float32 in the channel's unit."""
        c = self.state[n - 1]
        run = c.run
        if run is not None and run.function == "MINM":
            if buffer is not None:
                raise ScpiError(-221, "the buffers hold logging and stability data only")
            return float32_block(self.samples_in_unit(n, np.array(self.minmax(n))))
        if run is None:
            if c.result is None:
                raise ScpiError(-221, "no data: start a function with FUNC:STAT <f>,STAR")
            return float32_block(self.samples_in_unit(n, c.result))
        finished = run.finished_loops(self.world.clock())
        loops = [k for k in range(finished) if buffer is None or k % 2 == buffer]
        if not loops:
            raise ScpiError(-221, "the function is still in progress")
        return float32_block(self.samples_in_unit(n, self._loop_samples(n, loops[-1])))

    def minmax(self, n: int) -> tuple[float, float, float]:
        """MinMax's (minimum, maximum, last) so far, mW: samples every period from the start,
        over all of them (CONT) or the last ``points`` (WIND, REFR). With no sample yet, the
        query waits for the first."""
        run = self.state[n - 1].run
        assert run is not None
        if run.start_s is None:
            raise ScpiError(-221, "MinMax waits for its trigger")
        if run.extremes is None:
            self.world.wait_until(run.start_s + run.period_s)
        due = int((self.world.clock() - run.start_s) / run.period_s + 1e-9)
        first = max(run.next_sample, due - MINMAX_BATCH)
        if due > first:
            ends = run.start_s + run.period_s * (1 + np.arange(first, due))
            seen = self.seen_mW(n, ends, run.averaging_s)
            run.next_sample = due
            mode = self.settings(n).minmax_mode
            if mode == "CONT":
                low, high = float(seen.min()), float(seen.max())
                if run.extremes is not None:
                    low, high = min(low, run.extremes[0]), max(high, run.extremes[1])
            else:
                run.window = deque(list(run.window) + list(seen), maxlen=run.points)
                low, high = float(min(run.window)), float(max(run.window))
            run.extremes = (low, high, float(seen[-1]))
        assert run.extremes is not None
        return run.extremes

    # ---- zeroing, stored settings, interface ----------------------------------------------------
    def zero(self, n: int) -> None:
        """``SENS:CORR:COLL:ZERO`` (PG p. 121): succeeds (0) on a dark input, fails (1) on a
        lit one, which keeps its last zero."""
        self.state[n - 1].zero_status = int(self.seen_mW(n) > ZERO_DARK_MW)

    def zero_all(self) -> None:
        for n in range(1, self.channels + 1):
            self.zero(n)

    def zero_all_status(self) -> int:
        """One hexadecimal digit per channel, channel 1 the lowest (PG p. 122)."""
        return sum(min(c.zero_status, 15) << (4 * i) for i, c in enumerate(self.state))

    def questionable_condition(self) -> int:
        """The questionable summary: bit ``n`` for slot ``n`` whose last zeroing failed (PG
        p. 47, slot bit 1)."""
        return sum(1 << n for n, c in enumerate(self.state, start=1) if c.zero_status)

    def _snapshot(self) -> list[Settings]:
        return [replace(c.settings) for c in self.state]

    def save_setting(self, _: int, index: int) -> None:
        self.stored[index], self.actual = self._snapshot(), index

    def recall_setting(self, _: int, index: int) -> None:
        if index not in self.stored:
            raise ScpiError(-221, f"no setting stored at {index}")
        for c, s in zip(self.state, self.stored[index], strict=True):
            c.settings = replace(s)
        self.actual = index

    def erase_setting(self, _: int, index: int) -> None:
        self.stored.pop(index, None)
        self.actual = 0 if self.actual == index else self.actual

    def cancel_setting(self, _: int) -> None:
        if self.actual:
            self.recall_setting(0, self.actual)

    def preset_setting(self, _: int) -> None:
        for c in self.state:
            c.settings = Settings()

    def actual_setting(self, _: int) -> int:
        """PG p. 78: the place last saved or recalled, -1 once changed since, 0 for none."""
        if not self.actual or self.actual not in self.stored:
            return 0
        return self.actual if self._snapshot() == self.stored[self.actual] else -1

    def reboot(self, _: int) -> None:
        """``SYST:REB``: the saved LAN parameters go in use, the settings reset."""
        self.interface.action("REBOOT")
        self.reset()

    def response_table(self) -> list[tuple[float, float]]:
        """The wavelength-response table (wavelength m, factor): flat over 1250..1650 nm."""
        count = math.floor(400 / RESPONSE_STEP_NM) + 1
        return [((1250 + RESPONSE_STEP_NM * k) * 1e-9, 1.0) for k in range(count)]
