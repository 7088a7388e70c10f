"""The controller's view of the hardware: write heater currents, read detectors.

:class:`ChipDriver` is the interface; :class:`EmulatedDriver` writes into an emulated chip
(:class:`photonics.chips.emulated_chip.EmulatedChip`: a :class:`~photonics.chips.chip.Chip` or a
:class:`~photonics.chips.mesh_chip.MeshChip`) and models the hardware's time (a per-channel write
time of the driver electronics and first-order thermal settling: Perez-Lopez et al., Nat. Commun.
15, 1563 (2024); docs/physics.md). A real heater driver implements the same interface in :mod:`hil`.

The photodiodes see two kinds of light: the firmware's own (``detect``, ``measure``: the
inputs it lights, for calibration and ring locks) and the light from outside, the endpoints'
(``monitor``). On the emulator every endpoint, an accelerator's transmitter, sends
``launch_mW`` into the chip (default :data:`LAUNCH_MW`: 1 mW = 0 dBm each).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from firmware.electronics import BENCH_CHANNEL_S, DriverClass
from photonics.chips.emulated_chip import EmulatedChip
from photonics.devices.thermal import power_for_current
from photonics.devices.transients import Settling, ThermalDynamics
from photonics.errors import LimitError, PortError, PswitchError, SettingsError, ShapeError

#: Time to write one heater channel on the lab bench's driver, s (the ``bench`` driver class of
#: :mod:`firmware.electronics`: 64 channels of an 8-port Clements chip take 32 ms).
DEFAULT_CHANNEL_WRITE_S = BENCH_CHANNEL_S
#: Settling tolerance of a written phase (fraction of the step).
DEFAULT_SETTLE_TOLERANCE = 1e-3
#: Time for one read of all detectors, s (a multichannel power meter's averaging time).
DEFAULT_READ_S = 1e-4


#: Ambient temperature of the emulated chip at ``delta_T_K = 0``, C.
REFERENCE_TEMPERATURE_C = 25.0
#: Power each endpoint of an emulated switch sends into the chip, mW (0 dBm): the light
#: :meth:`EmulatedDriver.monitor` reads arriving at the endpoints.
LAUNCH_MW = 1.0


class DriverError(PswitchError):
    """The hardware failed a write or a read (the controller reports SCPI -240)."""


class ChipDriver(Protocol):
    """What the controller needs from the hardware. Currents in mA, powers in mW.

    ``write`` either applies every channel or raises; if it raises :class:`DriverError`, some
    channels may have been written, and ``currents()`` tells which values are applied.
    """

    @property
    def n_channels(self) -> int: ...

    @property
    def n_detectors(self) -> int: ...

    @property
    def inputs_per_reading(self) -> int:
        """How many lit inputs of an input field one reading of the detectors takes in:
        every input (``n_detectors``) on a chip that lights its inputs itself; 1 on a bench
        whose one laser reaches one input at a time through a fibre switch, where a field
        with k inputs lit costs k readings."""
        ...

    @property
    def electronics(self) -> DriverClass:
        """The driver class a write is timed by (:mod:`firmware.electronics`)."""
        ...

    @property
    def elapsed_s(self) -> float:
        """Hardware time spent since power-on (modeled or measured), s."""
        ...

    def write(self, channels: Sequence[int], current_mA: Sequence[float]) -> float:
        """Set these channels; return the modeled (or measured) hardware time, s."""
        ...

    def currents(self) -> np.ndarray:
        """The currents now applied, mA (one per channel)."""
        ...

    def detect(
        self, input_field: Sequence[complex], outputs: Sequence[int] | None = None
    ) -> np.ndarray:
        """Output powers, mW, for input fields in sqrt(mW): every detector, or only
        ``outputs`` (in that order; a bench reads fewer channels faster)."""
        ...

    def monitor(self, outputs: Sequence[int] | None = None) -> np.ndarray:
        """Power arriving at every detector now, mW, of the light sent in from outside the
        chip (the endpoints'; on a bench, its laser), none of the firmware's own: every
        detector, or only ``outputs`` (in that order)."""
        ...

    def measure(
        self,
        rows_mA: np.ndarray,
        input_field: Sequence[complex],
        outputs: Sequence[int] | None = None,
    ) -> np.ndarray:
        """Apply each row of currents ``(B, channels)`` in turn and read the detectors
        ``(B, detectors)`` (or only ``outputs``: ``(B, len(outputs))``); the currents applied
        before are restored afterwards, at once or by :meth:`release`."""
        ...

    def voltage(self, rows_mA: np.ndarray) -> np.ndarray:
        """Heater voltages read back, V, at each row of currents ``(B, channels)``."""
        ...

    def power_mW(self, current_mA: np.ndarray) -> np.ndarray:
        """Total electrical power the heaters would draw at currents ``(..., channels)``, mW,
        shape ``(...)``."""
        ...

    def limits(self) -> tuple[np.ndarray, float]:
        """The hardware's per-channel current limit (mA) and total power budget (mW)."""
        ...

    def temperature_C(self) -> float:
        """Chip temperature, C (nan when the hardware has no sensor)."""
        ...

    def wait_settled(self) -> None:
        """Return once every heater write has taken effect on the chip (``*OPC?``, ``*WAI``):
        at once for a driver whose ``write`` returns settled."""
        ...

    def release(self) -> None:
        """Restore the currents a :meth:`measure` or :meth:`voltage` left on the hardware, if
        any: a driver that restores lazily (so consecutive measurements of the same light path
        write only what differs) does it here; the firmware calls it at the end of every
        command. A no-op for a driver that restores at once."""
        ...


class EmulatedDriver:
    """A :class:`ChipDriver` over an emulated chip, with modeled hardware time.

    ``write`` checks the channel numbers and the chip's limits for the whole new state before
    changing anything, and returns the electronics' time (``channels x channel_write_s`` on the
    bench) plus the thermal settling of
    the step (:meth:`settle_s`, from the heaters' time constants and ``dynamics``; 0 when
    nothing changes). ``measure`` models each row as a full
    write of the changed channels plus settling and one detector read of ``read_s``; its rows
    are checked against the limits by the chip, before anything is computed or time passes.

    ``monitor`` reads the light the endpoints send, :attr:`launch_mW`: each endpoint's light
    crosses the chip on its own and the powers add at a photodiode (independent transmitters
    do not interfere), plus the photodiode's noise; one detector read of ``read_s``.

    For tests of the controller's recovery, ``fail_after`` (an int) makes the next write apply
    only its first ``fail_after`` channels and raise :class:`DriverError`, as a driver that
    loses its link part-way would; ``delta_T_K`` is the ambient temperature above 25 C.

    The chip sees every current through the driver's DAC (:meth:`_dac`: the nearest of
    ``chip.heaters.dac_bits`` codes over full scale, 16 bits by default as a Qontrol-class
    driver); ``currents()`` reads back the set points as written.

    ``electronics``: the driver class whose electronics time a write takes
    (:mod:`firmware.electronics`: ``parallel``, ``product``, ...; None: the lab bench's, one
    channel after another, ``channel_write_s`` each).
    """

    def __init__(
        self,
        chip: EmulatedChip,
        channel_write_s: float = DEFAULT_CHANNEL_WRITE_S,
        settle_tolerance: float = DEFAULT_SETTLE_TOLERANCE,
        rng: np.random.Generator | None = None,
        read_s: float = DEFAULT_READ_S,
        launch_mW: float | Sequence[float] = LAUNCH_MW,
        dynamics: ThermalDynamics | None = None,
        electronics: DriverClass | None = None,
    ) -> None:
        if channel_write_s < 0 or read_s < 0:
            raise SettingsError(f"times must be >= 0 s, got {channel_write_s}, {read_s}")
        self.chip = chip
        self.channel_write_s = channel_write_s
        self._electronics = electronics
        self.settle_tolerance = settle_tolerance
        self.dynamics = dynamics or ThermalDynamics()
        self.read_s = read_s
        self.rng = rng
        self._current = np.zeros(chip.n_heaters)
        self.elapsed_s = 0.0  # modeled hardware time spent so far
        self._settle_alone: dict[tuple[int, float, ThermalDynamics], float] = {}
        self._prepared: Settling | None = None
        self.fail_after: int | None = None
        self.delta_T_K = 0.0
        self.launch_mW = launch_mW

    @property
    def launch_mW(self) -> np.ndarray:
        """What each endpoint sends into the chip, mW (one per endpoint): the emulated world's
        transmitters, not the switch's. Set it to one number (every endpoint) or one per
        endpoint, each finite and >= 0."""
        return self._launch_mW.copy()

    @launch_mW.setter
    def launch_mW(self, value: float | Sequence[float]) -> None:
        n, raw = self.n_detectors, np.asarray(value)
        if raw.dtype.kind not in "iuf" or raw.ndim > 1 or raw.size not in (1, n):
            raise SettingsError(f"launch_mW must be one number or {n} numbers, got {value!r}")
        if not np.all(np.isfinite(raw) & (raw >= 0)):
            raise SettingsError(f"launch_mW must be finite and >= 0 mW, got {value!r}")
        self._launch_mW = np.broadcast_to(raw.astype(float), (n,)).copy()

    @property
    def electronics(self) -> DriverClass:
        """The driver class a write is timed by (the bench's, with ``channel_write_s``, unless
        another was given)."""
        if self._electronics is not None:
            return self._electronics
        return DriverClass("bench", channel_s=self.channel_write_s)

    @property
    def n_channels(self) -> int:
        return self.chip.n_heaters

    @property
    def n_detectors(self) -> int:
        return self.chip.n_ports

    @property
    def inputs_per_reading(self) -> int:
        return self.chip.n_ports

    def write(self, channels: Sequence[int], current_mA: Sequence[float]) -> float:
        ch = np.asarray(channels, dtype=np.int64).ravel()
        value = np.asarray(current_mA, dtype=float).ravel()
        if ch.shape != value.shape:
            raise ShapeError(f"{ch.size} channels but {value.size} currents")
        if ch.size and (ch.min() < 0 or ch.max() >= self.n_channels):
            raise PortError(f"channels must be in 0..{self.n_channels - 1}, got {ch.tolist()}")
        if not np.all(np.isfinite(value)):
            raise LimitError(f"currents must be finite, got {value.tolist()}")
        new = self._current.copy()
        new[ch] = value
        self.chip.heaters.check_limits(new)  # raises before anything changes
        if self.fail_after is not None:
            done, self.fail_after = self.fail_after, None
            self._current[ch[:done]] = value[:done]
            raise DriverError(f"link lost after {done} of {ch.size} channels")
        seconds = 0.0
        if np.any(new != self._current):
            electronics = self.electronics.electronics_s(ch.size, self.n_channels)
            seconds = electronics + self.settle_s(self._current, new)
        self._current = new
        self.elapsed_s += seconds
        return seconds

    def settle_s(self, old: np.ndarray, new: np.ndarray) -> float:
        """Thermal settling after the heaters step from currents ``old`` to ``new`` (mA), s:
        until every heater's phase, own heat and crosstalk, is within ``settle_tolerance`` of
        the largest phase step (:func:`photonics.devices.transients.settle_time_s`)."""
        return self._settle(self._steps(np.stack([old, new]))[0])

    def _steps(self, path: np.ndarray) -> np.ndarray:
        """The phase steps (rad) of the heaters' own power between consecutive rows of currents
        ``path`` (R, H) mA: (R - 1, H), exactly 0 where a current stays."""
        h = self.chip.heaters
        power = power_for_current(path, h.r0_ohm, h.r_rise_ohm_per_mA2)
        return np.pi * np.diff(power, axis=0) / h.p_pi_mW

    def _settle(self, step: np.ndarray) -> float:
        """The settling time of a step of phases ``step`` (rad), to ``settle_tolerance`` of the
        largest. One heater's time does not depend on the size of its step (the tolerance and
        its crosstalk scale with it): most writes of a sweep move one heater, whose time is
        memoised."""
        changed = np.flatnonzero(step)
        if not changed.size:
            return 0.0
        key = (int(changed[0]), self.settle_tolerance, self.dynamics)
        if changed.size == 1 and key in self._settle_alone:
            return self._settle_alone[key]
        seconds = self._settling.time_s(step, self.settle_tolerance * float(np.abs(step).max()))
        if changed.size == 1:
            self._settle_alone[key] = seconds
        return seconds

    @property
    def _settling(self) -> Settling:
        """The chip's settling under the driver's ``dynamics``, prepared once per dynamics."""
        if self._prepared is None or self._prepared.dynamics != self.dynamics:
            h = self.chip.heaters
            self._prepared = Settling(h.tau_s, self.chip.crosstalk, self.dynamics)
        return self._prepared

    def currents(self) -> np.ndarray:
        return self._current.copy()

    def _dac(self, current_mA: np.ndarray) -> np.ndarray:
        """The currents the driver's DAC really puts out: each the nearest of its codes
        (``dac_bits`` over full scale, :meth:`~photonics.devices.thermal.Heaters.quantise`). A
        current outside the DAC's range passes unchanged, for the chip's limit check to refuse."""
        h = self.chip.heaters
        inside = (current_mA >= 0) & (current_mA <= h.full_scale_mA)
        return np.where(inside, h.quantise(current_mA), current_mA)

    def detect(
        self, input_field: Sequence[complex], outputs: Sequence[int] | None = None
    ) -> np.ndarray:
        self.elapsed_s += self.read_s
        seen = self.chip.detect(self._dac(self._current), input_field, self.rng, self.delta_T_K)
        return seen if outputs is None else seen[..., list(outputs)]

    def monitor(self, outputs: Sequence[int] | None = None) -> np.ndarray:
        self.elapsed_s += self.read_s
        seen = self._arriving_mW()
        return seen if outputs is None else seen[list(outputs)]

    def _arriving_mW(self) -> np.ndarray:
        """Every photodiode's reading of the endpoints' light, mW (see the class docstring)."""
        n, lit = self.n_detectors, np.flatnonzero(self._launch_mW)
        power = np.zeros(n)
        if lit.size:  # one input field per lit endpoint, alone
            fields = np.sqrt(self._launch_mW[lit])[:, None] * np.eye(n)[lit]
            current = self._dac(self._current)
            power = self.chip.detect(current, fields, None, self.delta_T_K).sum(axis=0)
        if self.rng is not None:
            power = power + self.rng.normal(0.0, self.chip.spec.noise_floor_mW, n)
        return power

    def measure(
        self,
        rows_mA: np.ndarray,
        input_field: Sequence[complex],
        outputs: Sequence[int] | None = None,
    ) -> np.ndarray:
        rows = np.asarray(rows_mA, dtype=float)
        if rows.ndim != 2 or rows.shape[1] != self.n_channels:
            raise ShapeError(f"expected rows of {self.n_channels} currents, got {rows.shape}")
        field = np.broadcast_to(np.asarray(input_field, complex), (len(rows), self.n_detectors))
        # the chip checks the rows against its limits before it computes (or time passes)
        seen = self.chip.detect(self._dac(rows), field, self.rng, self.delta_T_K)
        path = np.vstack([self._current, rows, self._current])
        written = np.count_nonzero(path[1:] != path[:-1], axis=1)
        steps = self._steps(path)
        electronics, n = self.electronics, self.n_channels
        for i in np.flatnonzero(written):  # each row written as one write, then settled
            self.elapsed_s += electronics.electronics_s(int(written[i]), n) + self._settle(steps[i])
        self.elapsed_s += len(rows) * self.read_s
        return seen if outputs is None else seen[:, list(outputs)]

    def voltage(self, rows_mA: np.ndarray) -> np.ndarray:
        return self.chip.heater_voltage(self._dac(np.asarray(rows_mA, dtype=float)))

    def power_mW(self, current_mA: np.ndarray) -> np.ndarray:
        return self.chip.heaters.power_mW(current_mA).sum(axis=-1)

    def limits(self) -> tuple[np.ndarray, float]:
        h = self.chip.heaters
        return np.broadcast_to(h.max_current_mA, (self.n_channels,)).copy(), h.power_budget_mW

    def temperature_C(self) -> float:
        return REFERENCE_TEMPERATURE_C + self.delta_T_K

    def release(self) -> None:
        """Measurements restore at once: nothing to release."""

    def wait_settled(self) -> None:
        """Writes are modeled, not waited for: nothing to wait for."""
