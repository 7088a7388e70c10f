"""The emulated bench: one chip, one heater driver and the light around them, shared by every
emulated instrument.

:class:`BenchWorld` holds an emulated :class:`~photonics.chip.Chip` (default: 8-port Clements
mesh with output rings), the heater driver in front of it (:class:`BenchDriver`, an
:class:`~firmware.driver.EmulatedDriver`), a firmware :class:`~firmware.controller.Controller` on
that driver (the pswitch switch controller), the bench's lasers and a 1xN fibre switch choosing
the chip input the laser feeds. Whoever writes heaters (the Qontrol emulation or the
controller) goes through the one driver, so every power meter sees every write.

Light: the active laser (see :meth:`BenchWorld.set_laser`) enters input
:attr:`~BenchWorld.selected_input` through one facet (:data:`FACET_LOSS_DB`), crosses the chip
(:meth:`~photonics.chip.Chip.detect` at the laser's wavelength, rings included) and leaves each
output through another facet; a power meter reads it with Gaussian noise of the chip's noise
floor on top, as a magnitude (``|P + n|``: a detector reads no negative power). Dark (no laser
on): the noise's magnitude only, around the noise floor, never exactly zero.

Time: a heater write takes effect after its modeled hardware time (per-channel write time plus
thermal settling; ``docs/physics.md``, sections 7 and 10), on the world's clock
(``time.monotonic`` by default, :class:`ManualClock` in tests); :meth:`BenchWorld.wait_settled`
waits (sleeps, or advances a manual clock) until the last write has taken effect, as an
instrument's ``*OPC?`` and the switch's do. The driver handles writes in
order: a write starts when the previous one has taken effect. A reading at time ``t`` sees the
currents in effect at ``t``. Laser and fibre-switch changes act at once. Batches of the
firmware's ``measure`` (calibration, ring-lock sweeps) are not replayed to the meters: they see
the state before and after.

Thread-safe: one re-entrant lock (:attr:`BenchWorld.lock`) guards the chip, driver and light.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from firmware.controller import Controller, Rings
from firmware.driver import DriverError, EmulatedDriver
from photonics.chip import REFERENCE_WAVELENGTH_NM, Chip, ChipSpec
from photonics.errors import PortError, SettingsError
from photonics.switch import FeedForwardFabric
from photonics.thermal import Heaters

#: Fibre-to-chip coupling loss per facet, dB (published 1.8-3.6 dB: ``docs/physics.md`` [1]).
FACET_LOSS_DB = 2.5
#: Wavelengths the chip model accepts, nm.
MODEL_WAVELENGTH_NM = (1000.0, 2000.0)
#: A laser's power when it is first added, mW (0 dBm).
DEFAULT_LASER_POWER_MW = 1.0
#: Heater states kept for readings in the past (power-meter logging), newest last.
HISTORY_LENGTH = 1024


class ManualClock:
    """A clock that moves only when told (tests): call it for the time, s."""

    def __init__(self, start_s: float = 0.0) -> None:
        self.now_s = start_s

    def __call__(self) -> float:
        return self.now_s

    def advance(self, seconds: float) -> None:
        self.now_s += seconds

    def sleep(self, seconds: float) -> None:
        """Waiting on a manual clock moves it."""
        self.advance(seconds)


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

    def detect(
        self,
        current_mA: np.ndarray,
        input_field: Sequence[complex],
        rng: np.random.Generator | None = None,
        delta_T_K: float = 0.0,
    ) -> np.ndarray:
        wavelength = self._world.wavelength_nm
        return self.chip.detect(current_mA, input_field, rng, delta_T_K, wavelength)

    def heater_voltage(self, current_mA: np.ndarray) -> np.ndarray:
        return self.chip.heater_voltage(current_mA)


class BenchDriver(EmulatedDriver):
    """The world's heater driver: every call under the world's lock, and every write recorded
    with the time it takes effect on the bench (see the module docstring). Its ``monitor``
    reads the bench's light (not ``launch_mW``): what the power meter reads once the last
    heater write has taken effect, as a switch reads its detectors after settling."""

    def __init__(self, world: BenchWorld, chip: Chip, rng: np.random.Generator) -> None:
        super().__init__(_ChipAtLaser(chip, world), rng=rng)
        self._world = world

    def write(self, channels: Sequence[int], current_mA: Sequence[float]) -> float:
        with self._world.lock:
            try:
                seconds = super().write(channels, current_mA)
            except DriverError:  # a link lost part-way: what was written acts at once
                self._world._record(0.0)
                raise
            self._world._record(seconds)
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
    ``facet_loss_db``: coupling loss of each facet, dB; ``clock``: seconds, monotonic.
    """

    def __init__(
        self,
        chip: Chip | None = None,
        seed: int = 0,
        facet_loss_db: float = FACET_LOSS_DB,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 <= facet_loss_db < 100:
            raise SettingsError(f"facet_loss_db must be in 0..100 dB, got {facet_loss_db}")
        self.chip = chip or Chip(ChipSpec(seed=seed, output_rings=True))
        self.seed = seed
        self.facet_transmission = 10 ** (-facet_loss_db / 10)
        self.clock = clock
        self._sleep: Callable[[float], None] = getattr(clock, "sleep", time.sleep)
        self.lock = threading.RLock()
        self._lasers: dict[str, Laser] = {}
        self._lit: list[str] = []  # lasers that are on, in the order they were switched on
        self._selected = 0
        self._noise = np.random.default_rng([seed, 1])
        self.driver = BenchDriver(self, self.chip, np.random.default_rng(seed))
        self._history: list[tuple[float, np.ndarray]] = [(-np.inf, self.driver.currents())]
        # the last heater state's noise-free readings for every input: a meter is read channel
        # by channel and a bench switches inputs between readings
        self._last: tuple[object, np.ndarray] = ((), np.zeros(0))
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
    def _record(self, seconds: float) -> None:
        """The driver's currents now take effect ``seconds`` after the previous write has."""
        now = self.driver.currents()
        last_s, last = self._history[-1]
        if np.array_equal(now, last):
            return
        self._history.append((max(self.clock(), last_s) + seconds, now))
        del self._history[:-HISTORY_LENGTH]

    @property
    def settled_at(self) -> float:
        """When the last heater write takes effect, on the world's clock, s."""
        with self.lock:
            return self._history[-1][0]

    def wait_settled(self) -> None:
        """Return once the last heater write has taken effect (at once when it has)."""
        while (left := self.settled_at - self.clock()) > 0:
            self._sleep(left)

    def applied_currents(self, t_s: float | None = None) -> np.ndarray:
        """The heater currents in effect at ``t_s`` (default now), mA."""
        with self.lock:
            return self._history[self._index(np.atleast_1d(self._now(t_s)))[0]][1].copy()

    def _now(self, t_s: ArrayLike | None) -> np.ndarray:
        return np.asarray(self.clock() if t_s is None else t_s, dtype=float)

    def _index(self, times: np.ndarray) -> np.ndarray:
        starts = np.array([t for t, _ in self._history])
        return np.maximum(np.searchsorted(starts, times, side="right") - 1, 0)

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

    def output_power_mW(self, times_s: ArrayLike | None = None) -> np.ndarray:
        """Power a meter reads on every chip output, mW: shape ``(n_ports,)`` now, or
        ``(len(times_s), n_ports)`` at those times (s, world clock) with the heaters in effect
        then and the light as it is now."""
        with self.lock:
            times = self._now(times_s)
            index = self._index(np.atleast_1d(times))
            power = np.zeros((index.size, self.n_ports))
            source = self.source()
            key = (tuple(self._history[i][0] for i in index), source, self.driver.delta_T_K)
            if source is not None and source.power_mW > 0:
                if key != self._last[0]:  # solve the chip once per state, for every input
                    states, back = np.unique(index, return_inverse=True)
                    amplitude = np.sqrt(source.power_mW * self.facet_transmission)
                    seen = np.array(
                        [
                            self.chip.detect(
                                self._history[i][1],
                                amplitude * np.eye(self.n_ports),  # one row per input
                                delta_T_K=self.driver.delta_T_K,
                                wavelength_nm=source.wavelength_nm,
                            )
                            for i in states
                        ]
                    )  # [state, input, output]
                    self._last = (key, seen[back] * self.facet_transmission)
                power = self._last[1][:, self._selected]
            noise = self._noise.normal(0.0, self.chip.spec.noise_floor_mW, power.shape)
            power = np.abs(power + noise)  # a detector reads a magnitude: never below zero
            return power if times.ndim else power[0]
