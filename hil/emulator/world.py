"""The emulated bench: one chip, one heater driver and the light around them, shared by every
emulated instrument.

:class:`BenchWorld` holds an emulated :class:`~photonics.chips.chip.Chip` (default: 8-port Clements
mesh with output rings), the heater driver in front of it (:class:`BenchDriver`, an
:class:`~firmware.driver.EmulatedDriver`), a firmware :class:`~firmware.controller.Controller` on
that driver (the pswitch switch controller), the bench's lasers and a 1xN fibre switch choosing
the chip input the laser feeds. Whoever writes heaters (the Qontrol emulation or the
controller) goes through the one driver, so every power meter sees every write.

Light: the active laser (see :meth:`BenchWorld.set_laser`) enters input
:attr:`~BenchWorld.selected_input` through one facet (:data:`FACET_LOSS_DB`), crosses the chip
(:meth:`~photonics.chips.chip.Chip.detect` at the laser's wavelength, rings included) and leaves
each output through another facet; a power meter reads it with Gaussian noise of the chip's noise
floor on top, as a magnitude (``|P + n|``: a detector reads no negative power). Dark (no laser on):
the noise's magnitude only, around the noise floor, never exactly zero.

Time: the driver writes a heater write's channels one after the other, one every
``channel_write_s``, starting when the previous write has settled; each channel's heat then
spreads as the heaters' step responses say (:mod:`photonics.devices.transients`: its own
first-order response, the slower crosstalk to its neighbours, the chip-wide self-heating), so a
reading at time ``t`` sees the light of the heat at ``t``, transient included, on the world's
clock (a :class:`VirtualClock` by default: the wall clock plus every wait skipped;
``time.monotonic`` for wall-clock pacing, :class:`ManualClock` in tests). A write has settled
after the driver's modeled time (the writes plus the physics' settling, ``docs/physics.md``
section 5); :meth:`BenchWorld.wait_settled` waits until then (a virtual clock jumps, the wall
clock is slept), as an instrument's ``*OPC?`` and ``*WAI`` and the switch's do; a client
polling a logging run or a sweep waits for its end (:meth:`BenchWorld.wait_until`). The chip's
temperature is the driver's ``delta_T_K``, plus the self-heating, plus an
:class:`~photonics.devices.drift.AmbientDrift` when the world has one; the firmware's own
readings (``detect``, ``measure``) see the chip in steady state at the temperature of the
moment. Laser and fibre-switch changes act at once. Batches of the firmware's ``measure``
(calibration, ring-lock sweeps) are not replayed to the meters: they see the state before and
after.

Thread-safe: one re-entrant lock (:attr:`BenchWorld.lock`) guards the chip, driver and light.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from firmware.controller import Controller, Rings
from firmware.driver import REFERENCE_TEMPERATURE_C, DriverError, EmulatedDriver
from hil.emulator.clock import ManualClock, VirtualClock
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM, Chip, ChipSpec
from photonics.chips.switch import FeedForwardFabric
from photonics.devices.drift import AmbientDrift
from photonics.devices.thermal import Heaters
from photonics.devices.transients import (
    SETTLED_AFTER_TAU,
    Heat,
    ThermalDynamics,
    chip_heat_K,
    chip_lag_mW,
    heat_at,
)
from photonics.errors import PortError, SettingsError

#: Fibre-to-chip coupling loss per facet, dB (published 1.8-3.6 dB: ``docs/physics.md`` [1]).
FACET_LOSS_DB = 2.5
#: Wavelengths the chip model accepts, nm.
MODEL_WAVELENGTH_NM = (1000.0, 2000.0)
#: A laser's power when it is first added, mW (0 dBm).
DEFAULT_LASER_POWER_MW = 1.0
#: Heater writes kept for readings in the past (power-meter logging), newest last.
HISTORY_LENGTH = 1024
#: A write has settled once the chip-wide self-heating left of it moves an output ring by less
#: than this fraction of the ring's linewidth.
RING_SETTLE_FRACTION = 0.02
#: Most points a reading averaged over a meter's averaging time is taken at.
AVERAGING_POINTS = 8


class _History:
    """The heater writes kept, oldest first (at most :data:`HISTORY_LENGTH`), as rows of
    arrays: when each channel took its value (s, world clock), the powers (mW) and currents
    (mA) after it, when it has settled (s), when its last channel took its value (s), and the
    heater power the die had not felt yet then (mW, :func:`chip_lag_mW`, with the chip's
    ``chip_tau_s``)."""

    def __init__(self, current_mA: np.ndarray, power_mW: np.ndarray, chip_tau_s: float) -> None:
        cap, h = 2 * HISTORY_LENGTH, current_mA.size
        self.applied_s, self.power_mW = np.empty((cap, h)), np.empty((cap, h))
        self.current_mA = np.empty((cap, h))
        self.settled_s, self.ends_s, self.lag_mW = np.empty(cap), np.empty(cap), np.empty(cap)
        self.chip_tau_s = chip_tau_s
        self.n = 0  # writes kept
        # the state before any write, settled long ago
        self.append(np.full(h, -np.inf), power_mW, current_mA, -np.inf)

    def append(
        self, applied_s: np.ndarray, power_mW: np.ndarray, current_mA: np.ndarray, settled_s: float
    ) -> None:
        rows = (
            self.applied_s,
            self.power_mW,
            self.current_mA,
            self.settled_s,
            self.ends_s,
            self.lag_mW,
        )
        if self.n == len(self.settled_s):  # full: keep the newest, in place (no reallocation)
            keep = HISTORY_LENGTH - 1
            for a in rows:
                a[:keep] = a[self.n - keep : self.n]
            self.n = keep
        k, end = self.n, float(np.max(applied_s))
        lag = 0.0
        if k:
            steps = power_mW - self.power_mW[k - 1]
            lag = chip_lag_mW(
                float(self.lag_mW[k - 1]),
                float(self.ends_s[k - 1]),
                applied_s,
                steps,
                end,
                self.chip_tau_s,
            )
        self.applied_s[k], self.power_mW[k], self.current_mA[k] = applied_s, power_mW, current_mA
        self.settled_s[k], self.ends_s[k], self.lag_mW[k] = settled_s, end, lag
        self.n += 1

    def ended_by(self, t_s: float) -> int:
        """The newest write whose channels had all taken their values by ``t_s`` (writes end
        in order; write 0 always)."""
        return max(0, int(np.searchsorted(self.ends_s[: self.n], t_s, side="right")) - 1)

    def since(self, t_s: float) -> tuple[np.ndarray, np.ndarray]:
        """(applied_s, power_mW) of the writes from the newest one whose channels had all
        taken their values by ``t_s`` on (writes end in order); copies."""
        first = self.ended_by(t_s)
        return self.applied_s[first : self.n].copy(), self.power_mW[first : self.n].copy()


@dataclass(frozen=True)
class Laser:
    """One laser of the bench: on or off, wavelength (nm), output power (mW)."""

    on: bool = False
    wavelength_nm: float = REFERENCE_WAVELENGTH_NM
    power_mW: float = DEFAULT_LASER_POWER_MW


class _ChipAtLaser:
    """The chip as the firmware sees it: its photodiodes read at the bench laser's wavelength."""

    def __init__(self, chip: Chip, world: BenchWorld) -> None:
        self.chip, self._world = chip, world

    @property
    def n_ports(self) -> int:
        return self.chip.n_ports

    @property
    def n_heaters(self) -> int:
        return self.chip.n_heaters

    @property
    def heaters(self) -> Heaters:
        return self.chip.heaters

    @property
    def crosstalk(self) -> sp.csr_matrix | None:
        return self.chip.crosstalk

    def detect(
        self,
        current_mA: np.ndarray,
        input_field: Sequence[complex],
        rng: np.random.Generator | None = None,
        delta_T_K: float = 0.0,
    ) -> np.ndarray:
        # the chip's temperature now (the driver's offset, drift and self-heating)
        world = self._world
        delta_T_K = float(world.temperature_K())
        return self.chip.detect(current_mA, input_field, rng, delta_T_K, world.wavelength_nm)

    def heater_voltage(self, current_mA: np.ndarray) -> np.ndarray:
        return self.chip.heater_voltage(current_mA)


class BenchDriver(EmulatedDriver):
    """The world's heater driver: every call under the world's lock, and every write recorded
    with the time it takes effect on the bench (see the module docstring). Its ``monitor``
    reads the bench's light (not ``launch_mW``): what the power meter reads once the last
    heater write has taken effect, as a switch reads its detectors after settling."""

    def __init__(
        self,
        world: BenchWorld,
        chip: Chip,
        rng: np.random.Generator,
        dynamics: ThermalDynamics | None = None,
    ) -> None:
        super().__init__(_ChipAtLaser(chip, world), rng=rng, dynamics=dynamics)
        self._world = world

    def temperature_C(self) -> float:
        return REFERENCE_TEMPERATURE_C + float(self._world.temperature_K())

    def write(self, channels: Sequence[int], current_mA: Sequence[float]) -> float:
        with self._world.lock:
            try:
                seconds = super().write(channels, current_mA)
            except DriverError:  # a link lost part-way: what was written acts at once
                self._world._record(0.0)
                raise
            self._world._record(seconds, channels)
            return seconds

    def currents(self) -> np.ndarray:
        with self._world.lock:
            return super().currents()

    def detect(
        self, input_field: Sequence[complex], outputs: Sequence[int] | None = None
    ) -> np.ndarray:
        with self._world.lock:
            return super().detect(input_field, outputs)

    def monitor(self, outputs: Sequence[int] | None = None) -> np.ndarray:
        with self._world.lock:
            return super().monitor(outputs)

    def wait_settled(self) -> None:
        self._world.wait_settled()

    def _arriving_mW(self) -> np.ndarray:
        return self._world.output_power_mW(self._world.settled_at)

    def measure(
        self,
        rows_mA: np.ndarray,
        input_field: Sequence[complex],
        outputs: Sequence[int] | None = None,
    ) -> np.ndarray:
        with self._world.lock:
            return super().measure(rows_mA, input_field, outputs)


class BenchWorld:
    """One emulated chip and its bench (see the module docstring).

    ``chip``: default an 8-port Clements chip with output rings drawn from ``seed``;
    ``facet_loss_db``: coupling loss of each facet, dB; ``clock``: seconds, monotonic (default a
    new :class:`VirtualClock`; ``time.monotonic`` paces the bench on the wall clock).
    """

    def __init__(
        self,
        chip: Chip | None = None,
        seed: int = 0,
        facet_loss_db: float = FACET_LOSS_DB,
        clock: Callable[[], float] | None = None,
        dynamics: ThermalDynamics | None = None,
        drift: AmbientDrift | None = None,
    ) -> None:
        if not 0 <= facet_loss_db < 100:
            raise SettingsError(f"facet_loss_db must be in 0..100 dB, got {facet_loss_db}")
        self.chip = chip or Chip(ChipSpec(seed=seed, output_rings=True))
        self.seed = seed
        self.facet_transmission = 10 ** (-facet_loss_db / 10)
        self.clock: Callable[[], float] = VirtualClock() if clock is None else clock
        self.lock = threading.RLock()
        self._lasers: dict[str, Laser] = {}
        self._lit: list[str] = []  # lasers that are on, in the order they were switched on
        self._selected = 0
        self._noise = np.random.default_rng([seed, 1])
        #: The ambient drift of the chip's temperature (None: only the driver's fixed offset).
        self.drift = drift
        self.driver = BenchDriver(self, self.chip, np.random.default_rng(seed), dynamics)
        zero = self.driver.currents()
        self._history = _History(
            zero, self.chip.heaters.power_mW(zero), self.driver.dynamics.chip_tau_s
        )
        self._writes = 0  # heater writes recorded (the light's cache key)
        self._light: tuple[tuple, np.ndarray] | None = None  # (key, noiseless power) of "now"
        self._reading: tuple[tuple, np.ndarray] | None = None  # the last reading and its state
        self._line, self._lines = threading.local(), itertools.count()  # the line being run
        self.controller = self._controller()

    def _controller(self) -> Controller:
        """The pswitch firmware on this world's driver, as :meth:`firmware.sdk.Switch.emulated`
        builds it: feed-forward fabric, the output rings, the chip's factory calibration and
        heater layout."""
        chip, n = self.chip, self.chip.n_ports
        rings = Rings.of_chip(chip)
        model = f"EMU-{chip.spec.mesh.upper()}-{n}"
        fabric = FeedForwardFabric(chip.mesh)
        calibration = chip.factory_calibration(model)
        return Controller(
            self.driver, fabric, None, rings, calibration, model, str(self.seed), chip.heater_layout
        )

    @property
    def n_ports(self) -> int:
        return self.chip.n_ports

    # ---- heaters in time ---------------------------------------------------------------------
    def _record(self, seconds: float, channels: Sequence[int] = ()) -> None:
        """The driver's currents were just written, ``channels`` in that order, one every
        ``channel_write_s``, starting when the previous write has settled; they have settled
        ``seconds`` after that start (see the module docstring)."""
        now = self.driver.currents()
        last = self._history.n - 1
        if np.array_equal(now, self._history.current_mA[last]):
            return
        start = max(self.clock(), float(self._history.settled_s[last]))
        applied = np.full(now.size, start)
        if seconds > 0:  # channel i of the write takes its value when its write ends
            order = np.asarray(channels, dtype=np.int64).ravel()
            applied[order] = start + self.driver.channel_write_s * (1 + np.arange(order.size))
        power = self.chip.heaters.power_mW(now)
        before_mW = float(self._history.power_mW[last].sum())
        settled = max(start + seconds, start + self._rings_settle_s(power.sum() - before_mW))
        self._writes += 1
        self._history.append(applied, power, now, settled)

    def _rings_settle_s(self, step_mW: float) -> float:
        """How long the chip-wide self-heating of a total heater power step (mW) moves the
        output rings, s: until what is left of its temperature step shifts a ring by less
        than :data:`RING_SETTLE_FRACTION` of its linewidth (0 on a chip without rings, whose
        meshes see the chip's temperature in both arms alike). The driver's own settling
        (its heaters, microseconds) leaves this tail out; the rings are what it moves."""
        spec, dynamics = self.chip.spec, self.driver.dynamics
        if not spec.output_rings:
            return 0.0
        shift_nm = 1e-3 * dynamics.chip_K_per_W * abs(step_mW) * spec.ring_thermal.ambient_nm_per_K
        allowed_nm = RING_SETTLE_FRACTION * spec.ring.fwhm_nm()
        return (
            dynamics.chip_tau_s * max(0.0, float(np.log(shift_nm / allowed_nm)))
            if shift_nm > 0
            else 0.0
        )

    @property
    def settled_at(self) -> float:
        """When the last heater write has settled, on the world's clock, s."""
        with self.lock:
            return float(self._history.settled_s[self._history.n - 1])

    @contextlib.contextmanager
    def instant(self) -> Iterator[None]:
        """Run one line of an instrument: inside, this thread's time stands still (a
        :class:`VirtualClock`'s ``held``), so every reading of the line is of one instant, and
        the channels it reads integrate side by side (:meth:`reading_mW`)."""
        outer = getattr(self._line, "id", None)
        self._line.id = outer if outer is not None else next(self._lines)
        held = getattr(self.clock, "held", None)
        try:
            with held() if held is not None else contextlib.nullcontext():
                yield
        finally:
            self._line.id = outer

    def wait_settled(self) -> None:
        """Return once the last heater write has settled (at once when it has)."""
        self.wait_until(self.settled_at)

    def wait_until(self, t_s: float) -> None:
        """Return at world time ``t_s``: a virtual clock jumps there, the wall clock is slept
        through. An instrument that a client polls for an operation ending at ``t_s`` (logging,
        a sweep) calls it: on a virtual clock, polling is waiting."""
        if isinstance(self.clock, ManualClock):
            self.clock.wait_until(t_s)
            return
        sleep = getattr(self.clock, "sleep", time.sleep)
        while (left := t_s - self.clock()) > 0:
            sleep(left)

    def applied_currents(self, t_s: float | None = None) -> np.ndarray:
        """The heater currents the driver had written by ``t_s`` (default now), mA: each
        channel's value once its write has ended (its heat then still spreads)."""
        with self.lock:
            t = float(self._now(t_s))
            h = self._history
            out = h.current_mA[0].copy()
            for k in range(1, h.n):
                done = h.applied_s[k] <= t
                out[done] = h.current_mA[k][done]
            return out

    def _now(self, t_s: ArrayLike | None) -> np.ndarray:
        return np.asarray(self.clock() if t_s is None else t_s, dtype=float)

    def heat(self, times_s: ArrayLike) -> Heat:
        """The heat of the heaters at ``times_s`` (s, world clock): each write's step responses
        (:func:`photonics.devices.transients.heat_at`), from the last write settled long before:
        the heaters' own and crosstalk responses from the writes of their (microsecond)
        horizon; the chip-wide self-heating from the last write ended before, with what the die
        had not felt of the earlier ones (:func:`~photonics.devices.transients.chip_lag_mW`)."""
        t = np.atleast_1d(self._now(times_s)).astype(float)
        dynamics = self.driver.dynamics
        tau = self.chip.heaters.tau_s
        with self.lock:
            h = self._history
            fast = h.since(float(t.min()) - SETTLED_AFTER_TAU * dynamics.slowest_s(tau))
            first = h.ended_by(float(t.min()))  # the die's lag then carries the writes before
            # copies: a full history shifts its rows in place on the next write
            slow = (h.applied_s[first : h.n].copy(), h.power_mW[first : h.n].copy())
            lag = (float(h.lag_mW[first]), float(h.ends_s[first]))
        heat = heat_at(t, *fast, tau, dynamics)
        return replace(heat, chip_K=chip_heat_K(t, *slow, dynamics, *lag))

    def temperature_K(self, times_s: ArrayLike | None = None) -> np.ndarray:
        """The chip's temperature above the reference at ``times_s`` (default now), K: the
        driver's ``delta_T_K``, the ambient drift (when the world has one) and the chip's
        self-heating by its heaters."""
        t = self._now(times_s)
        out = self._temperature_K(t, self.heat(t).chip_K)
        return out if t.ndim else out[0]

    def _temperature_K(self, t: np.ndarray, chip_K: np.ndarray) -> np.ndarray:
        """:meth:`temperature_K` at times ``t`` given the self-heating ``chip_K`` then."""
        out = self.driver.delta_T_K + chip_K
        if self.drift is not None:
            out = out + self.drift.temperature_K(np.maximum(np.atleast_1d(t), 0.0))
        return out

    # ---- light -------------------------------------------------------------------------------
    def add_laser(self, name: str) -> None:
        """Add a laser (off, 1550 nm, 1 mW); a laser of that name already there is kept."""
        with self.lock:
            self._lasers.setdefault(name, Laser())

    def laser(self, name: str) -> Laser:
        with self.lock:
            if name not in self._lasers:
                raise SettingsError(
                    f"no laser {name!r} on the bench; lasers: {sorted(self._lasers)}"
                )
            return self._lasers[name]

    def set_laser(
        self,
        name: str,
        on: bool | None = None,
        wavelength_nm: float | None = None,
        power_mW: float | None = None,
    ) -> None:
        """Change a laser; arguments left None stay. The laser switched on last feeds the
        fibre switch (one source at a time); when it goes off, the one on before it takes over."""
        with self.lock:
            old = self.laser(name)
            wavelength = old.wavelength_nm if wavelength_nm is None else float(wavelength_nm)
            power = old.power_mW if power_mW is None else float(power_mW)
            low, high = MODEL_WAVELENGTH_NM
            if not low <= wavelength <= high:
                raise SettingsError(f"wavelength {wavelength} nm outside {low:g}..{high:g} nm")
            if not (np.isfinite(power) and power >= 0):
                raise SettingsError(f"laser power must be finite and >= 0 mW, got {power}")
            new = replace(old, wavelength_nm=wavelength, power_mW=power)
            if on is not None:
                new = replace(new, on=bool(on))
                if name in self._lit:
                    self._lit.remove(name)
                if on:
                    self._lit.append(name)
            self._lasers[name] = new

    def source(self) -> Laser | None:
        """The laser feeding the chip, or None when every laser is off."""
        with self.lock:
            return self._lasers[self._lit[-1]] if self._lit else None

    @property
    def wavelength_nm(self) -> float:
        """Wavelength of the light on the chip, nm (1550 nm when dark)."""
        source = self.source()
        return REFERENCE_WAVELENGTH_NM if source is None else source.wavelength_nm

    def select_input(self, port: int) -> None:
        """Route the laser to chip input ``port`` (0-based) through the 1xN fibre switch."""
        if not 0 <= port < self.n_ports:
            raise PortError(f"input port must be in 0..{self.n_ports - 1}, got {port}")
        with self.lock:
            self._selected = int(port)

    @property
    def selected_input(self) -> int:
        return self._selected

    def output_power_mW(
        self, times_s: ArrayLike | None = None, averaging_s: float = 0.0
    ) -> np.ndarray:
        """Power a meter reads on every chip output, mW: shape ``(n_ports,)`` now, or
        ``(len(times_s), n_ports)`` at those times (s, world clock) with the heat then and the
        light as it is now. With ``averaging_s``, each reading is the mean over the
        ``averaging_s`` before its time (a meter's averaging), taken at up to
        :data:`AVERAGING_POINTS` points."""
        with self.lock:
            times = self._now(times_s)
            source = self.source()
            # every channel of a meter, and every meter, reads the same light at one instant
            # (a virtual clock stands still between waits): computed once, noise drawn each time
            key = (
                float(times) if times.ndim == 0 else None,
                averaging_s,
                self._writes,
                self._selected,
                source,
                self.driver.delta_T_K,
            )
            if key[0] is not None and self._light is not None and self._light[0] == key:
                power = self._light[1]
            else:
                power = self._light_mW(np.atleast_1d(times), source, averaging_s)
                if key[0] is not None:
                    self._light = (key, power)
            noise = self._noise.normal(0.0, self.chip.spec.noise_floor_mW, power.shape)
            seen = np.abs(power + noise)  # a detector reads a magnitude: never below zero
            return seen if times.ndim else seen[0]

    def reading_mW(self, averaging_s: float) -> np.ndarray:
        """What a meter's reading started now reads on every output, mW: the mean of the
        light over the next ``averaging_s`` (the meter integrates it; the world's time moves
        on by it, at once on a virtual clock, as a real reading takes that long)."""
        with self.lock:
            start = float(self.clock())
            last = self._reading
            # the channels a line reads after one another integrate side by side, as a
            # multiport meter's do: one window, one reading of every output
            line = getattr(self._line, "id", None)
            state = (line, start, averaging_s, self._writes, self._selected, self.source())
            if line is not None and last is not None and last[0] == state:
                return last[1]
            end = start + averaging_s
        self.wait_until(end)
        light = self.output_power_mW(end, averaging_s=averaging_s)
        with self.lock:
            self._reading = ((line, float(self.clock()), *state[2:]), light)
        return light

    def _light_mW(self, ends: np.ndarray, source: Laser | None, averaging_s: float) -> np.ndarray:
        """The noiseless power on every output, mW, shape ``(len(ends), n_ports)``: each the
        mean over the ``averaging_s`` before its time."""
        if source is None or not source.power_mW > 0:
            return np.zeros((ends.size, self.n_ports))
        m = self._averaging_points(averaging_s)
        quiet_from = self._history.ends_s[self._history.n - 1] + SETTLED_AFTER_TAU * (
            self.driver.dynamics.slowest_s(self.chip.heaters.tau_s)
        )
        if m > 1 and float(ends.min()) - averaging_s >= quiet_from:
            m = 1  # no heater moves in the window (the chip's heating is 30 ms slow): one point
        offsets = averaging_s * (np.arange(m) + 0.5) / m - averaging_s
        at = (ends[:, None] + offsets).ravel()
        heat = self.heat(at)
        field = np.zeros(self.n_ports)
        field[self._selected] = np.sqrt(source.power_mW * self.facet_transmission)
        seen = self.chip.power_of_heat(
            heat.own,
            heat.crosstalk,
            self._temperature_K(at, heat.chip_K),
            field,
            source.wavelength_nm,
        )
        return seen.reshape(ends.size, m, -1).mean(axis=1) * self.facet_transmission

    def _averaging_points(self, averaging_s: float) -> int:
        """Points for a mean over ``averaging_s``: one per quarter of the fastest heater's time
        constant, at most :data:`AVERAGING_POINTS`, one without averaging."""
        if not averaging_s > 0:
            return 1
        fastest = float(np.min(self.chip.heaters.tau_s))
        return int(min(AVERAGING_POINTS, max(1, np.ceil(4 * averaging_s / fastest))))
