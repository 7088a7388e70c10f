"""Ambient drift: the temperature around a chip as a seeded random process over hours.

The air (or mount) temperature is an Ornstein-Uhlenbeck process (Uhlenbeck and Ornstein,
Phys. Rev. 36, 823 (1930)): mean-reverting to 0 K with correlation time ``correlation_s`` and
stationary std ``sigma_K``. The chip follows it through its package, a first-order low-pass of
``package_tau_s``: the package's heat capacity smooths the air's fast fluctuations, which is
what lets a ring lock that samples every second keep up. Both are sampled exactly on a grid of
``step_s`` (the OU update and the low-pass of a value held over each step) and interpolated
linearly between grid points. Units: K, s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy.signal import lfilter

from photonics._checks import finite
from photonics.errors import SettingsError

#: Ambient fluctuation, K (std), and its correlation time, s: an unregulated lab over hours
#: (assumed figures, see ``docs/physics.md``).
DEFAULT_SIGMA_K = 0.5
DEFAULT_CORRELATION_S = 3600.0
#: Thermal time constant of the package between the air and the chip, s (assumed).
DEFAULT_PACKAGE_TAU_S = 60.0
#: Grid of the sampled path, s.
DEFAULT_STEP_S = 0.1
#: The path is drawn in whole chunks of this many seconds (a longer path extends a shorter one).
CHUNK_S = 3600.0


@dataclass(frozen=True)
class AmbientDrift:
    """The chip's ambient temperature offset over time (K above the reference), drawn from
    ``seed``: same seed, same path (see the module docstring for the model)."""

    seed: int = 0
    sigma_K: float = DEFAULT_SIGMA_K
    correlation_s: float = DEFAULT_CORRELATION_S
    package_tau_s: float = DEFAULT_PACKAGE_TAU_S
    step_s: float = DEFAULT_STEP_S

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise SettingsError(f"seed must be an integer >= 0, got {self.seed!r}")
        for f in fields(self)[1:]:
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SettingsError(f"{f.name} must be a number, got {value!r}")
            low_ok = value >= 0 if f.name == "sigma_K" else value > 0
            if not (math.isfinite(value) and low_ok):
                bound = ">= 0" if f.name == "sigma_K" else "> 0"
                raise SettingsError(f"{f.name} must be a finite number {bound}, got {value!r}")

    def path(self, duration_s: float) -> np.ndarray:
        """The chip's temperature (K) at ``0, step, 2 step, ...`` up to ``duration_s``."""
        if not (math.isfinite(duration_s) and duration_s >= 0):
            raise SettingsError(f"duration_s must be a finite time >= 0 s, got {duration_s!r}")
        return _path(self, math.ceil(duration_s / self.step_s) + 1)

    def temperature_K(self, times_s: ArrayLike) -> np.ndarray:
        """The chip's ambient offset (K) at ``times_s`` (s, >= 0), interpolated on the grid."""
        t = finite("times_s", times_s)
        if np.any(t < 0):
            raise SettingsError(f"times must be >= 0 s, got {t.min()}")
        # whole chunks of the path, cached: readings one after another reuse one draw
        span = CHUNK_S * math.ceil((float(t.max(initial=0.0)) + self.step_s) / CHUNK_S)
        grid = self.path(span)
        return np.interp(t / self.step_s, np.arange(grid.size), grid)


@lru_cache(maxsize=8)
def _path(drift: AmbientDrift, n: int) -> np.ndarray:
    """The first ``n`` grid points of ``drift``'s path: the first point of a longer path are
    these (the draws come in the same order)."""
    rng = np.random.default_rng(drift.seed)
    start = drift.sigma_K * rng.standard_normal()  # the stationary law
    decay = math.exp(-drift.step_s / drift.correlation_s)
    kick = drift.sigma_K * math.sqrt(1 - decay**2) * rng.standard_normal(n - 1)
    # AR(1), the exact OU update over one step: air[k] = decay air[k-1] + kick[k]
    air = lfilter([1.0], [1.0, -decay], np.concatenate([[start], kick]))
    # the package's low-pass of the air held over each step: chip[k] = chip[k-1] + f (air[k-1]
    # - chip[k-1]), from chip[0] = air[0]
    f = 1 - math.exp(-drift.step_s / drift.package_tau_s)
    return lfilter([0.0, f], [1.0, -(1 - f)], air, zi=[start])[0]
