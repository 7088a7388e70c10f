"""The controller's view of the hardware: write heater currents, read detectors.

:class:`ChipDriver` is the interface; :class:`EmulatedDriver` writes into a
:class:`photonics.chip.Chip` and models the hardware's time (a per-channel write time of the
driver electronics and first-order thermal settling, design.md section 4). A real heater driver
implements the same interface in :mod:`hil`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from photonics.chip import Chip
from photonics.errors import LimitError, PortError, ShapeError
from photonics.thermal import settling_time_s

#: Time to write one heater channel, s: Smartlight gen-1 reconfigures in 15-90 ms, dominated by
#: the driver electronics (64 channels of an 8-port Clements chip: 32 ms).
DEFAULT_CHANNEL_WRITE_S = 0.5e-3
#: Settling tolerance of a written phase (fraction of the step).
DEFAULT_SETTLE_TOLERANCE = 1e-3


class ChipDriver(Protocol):
    """What the controller needs from the hardware. Currents in mA, powers in mW."""

    @property
    def n_channels(self) -> int: ...

    @property
    def n_detectors(self) -> int: ...

    def write(self, channels: Sequence[int], current_mA: Sequence[float]) -> float:
        """Set these channels; return the modeled (or measured) hardware time, s."""
        ...

    def currents(self) -> np.ndarray:
        """The currents now applied, mA (one per channel)."""
        ...

    def detect(self, input_field: Sequence[complex]) -> np.ndarray:
        """Output powers, mW, for input fields in sqrt(mW)."""
        ...


class EmulatedDriver:
    """A :class:`ChipDriver` over an emulated chip, with modeled hardware time.

    ``write`` checks the channel numbers and the chip's limits for the whole new state before
    changing anything, and returns ``channels x channel_write_s`` plus the settling time of the
    slowest written heater (0 when nothing changes).
    """

    def __init__(
        self,
        chip: Chip,
        channel_write_s: float = DEFAULT_CHANNEL_WRITE_S,
        settle_tolerance: float = DEFAULT_SETTLE_TOLERANCE,
        rng: np.random.Generator | None = None,
    ) -> None:
        if channel_write_s < 0:
            raise LimitError(f"channel_write_s must be >= 0 s, got {channel_write_s}")
        self.chip = chip
        self.channel_write_s = channel_write_s
        self.settle_tolerance = settle_tolerance
        self.rng = rng
        self._current = np.zeros(chip.n_heaters)
        self.elapsed_s = 0.0  # modeled hardware time spent so far

    @property
    def n_channels(self) -> int:
        return self.chip.n_heaters

    @property
    def n_detectors(self) -> int:
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
        changed = np.flatnonzero(new != self._current)
        self._current = new
        if not changed.size:
            return 0.0
        tau = np.broadcast_to(self.chip.heaters.tau_s, (self.n_channels,))[changed]
        seconds = ch.size * self.channel_write_s + settling_time_s(tau, self.settle_tolerance)
        self.elapsed_s += seconds
        return seconds

    def currents(self) -> np.ndarray:
        return self._current.copy()

    def detect(self, input_field: Sequence[complex]) -> np.ndarray:
        return self.chip.detect(self._current, input_field, self.rng)
