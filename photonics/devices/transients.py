"""Heaters in time: how the heat of a sequence of heater writes reaches each waveguide and the
whole chip, and how long a write takes to settle.

Units: time s, power mW, phase rad, temperature K. Every response is linear in heater power, so
the heat at time ``t`` after writes ``k`` (each channel ``h`` taking its new power ``P[k, h]`` at
its own time ``a[k, h]``: a driver writes channels one after the other) is a sum of step
responses::

    heat(t) = P[0] + sum_k (P[k] - P[k-1]) g(t - a[k])        (g(t) = 0 for t < 0)

with three step responses ``g`` (section 5 of ``docs/physics.md``):

- own heat: first order with the heater's time constant ``tau`` (TiN 5.6 us, doped silicon 2.2 us:
  Jacques et al., Opt. Express 27, 10456 (2019)), optionally a second pole ``tau2_s`` for a
  measured two-pole response;
- thermal crosstalk: the aggressor's own pole cascaded with a diffusion pole ``crosstalk_tau_s``
  (the time heat takes to spread to the neighbours, ``d^2 / 4 D`` over the 60 um mode pitch in
  silicon, D = 88 um^2/us: 10 us), so a neighbour warms later and more slowly than the heater;
- the chip: first order with ``chip_tau_s``, the whole die warming by ``chip_K_per_W`` per watt of
  total heater power (global heating, Staffoli et al., Front. Phys. 10, 1093191 (2022); the two
  figures are assumptions, see ``docs/physics.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from photonics._checks import finite
from photonics.devices import _settle_kernel
from photonics.errors import SettingsError, ShapeError

#: Diffusion pole of thermal crosstalk, s: d^2 / (4 D) over 60 um of silicon (D = 88 um^2/us).
DEFAULT_CROSSTALK_TAU_S = 60.0**2 / (4 * 88.0) * 1e-6
#: Chip-wide self-heating: die temperature rise per watt of total heater power, K/W (assumed: a
#: 5 x 5 mm die on a temperature-controlled mount), and its time constant, s (the die's heat
#: capacity, ~30 mJ/K, times that resistance).
DEFAULT_CHIP_K_PER_W = 1.0
DEFAULT_CHIP_TAU_S = 0.03
#: A step response is taken as complete this many of its slowest time constants after the step
#: (its remainder is then below e^-40).
SETTLED_AFTER_TAU = 40.0


@dataclass(frozen=True)
class ThermalDynamics:
    """The time constants of heat on the chip besides each heater's own ``tau_s`` (s, K/W):
    ``tau2_s`` a second pole of every heater's own response (0: first order),
    ``crosstalk_tau_s`` the diffusion pole of thermal crosstalk, ``chip_tau_s`` and
    ``chip_K_per_W`` the chip-wide self-heating (``chip_K_per_W = 0``: none)."""

    tau2_s: float = 0.0
    crosstalk_tau_s: float = DEFAULT_CROSSTALK_TAU_S
    chip_tau_s: float = DEFAULT_CHIP_TAU_S
    chip_K_per_W: float = DEFAULT_CHIP_K_PER_W

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SettingsError(f"{f.name} must be a number, got {value!r}")
            if not (math.isfinite(value) and value >= 0):
                raise SettingsError(f"{f.name} must be a finite number >= 0, got {value!r}")
        if self.chip_tau_s <= 0:
            raise SettingsError(f"chip_tau_s must be > 0 s, got {self.chip_tau_s!r}")

    def slowest_s(self, tau_s: ArrayLike) -> float:
        """The slowest time constant of a heater's own or crosstalk response, s."""
        return float(max(np.max(tau_s), self.tau2_s, self.crosstalk_tau_s))


def rise(t_s: ArrayLike, tau_s: ArrayLike, tau2_s: ArrayLike = 0.0) -> np.ndarray:
    """Step response (0 before the step, 1 settled) of one pole ``tau_s`` or, with ``tau2_s >
    0``, of two in cascade, at times ``t_s`` after the step (s; broadcast)::

        1 - e^{-t/tau}                                          (one pole)
        1 - (tau e^{-t/tau} - tau2 e^{-t/tau2}) / (tau - tau2)  (two)
        1 - (1 + t/tau) e^{-t/tau}                              (two equal)
    """
    t = np.maximum(np.asarray(t_s, dtype=float), 0.0)
    a, b = np.asarray(tau_s, dtype=float), np.asarray(tau2_s, dtype=float)
    one = np.exp(-t / a)
    if not np.any(b > 0):
        return 1.0 - one
    safe_b = np.where(b > 0, b, 1.0)
    near = np.abs(a - b) <= 1e-9 * a
    with np.errstate(divide="ignore", invalid="ignore"):
        two = (a * one - b * np.exp(-t / safe_b)) / np.where(near, 1.0, a - b)
    two = np.where(near, (1 + t / a) * one, two)
    return np.clip(1.0 - np.where(b > 0, two, one), 0.0, 1.0)  # rounding never leaves [0, 1]


@dataclass(frozen=True)
class Heat:
    """Heater powers as they act at some times (mW): ``own`` on each heater's own waveguide and
    ``crosstalk`` as its neighbours feel it, both ``(T, H)``, and ``chip_K`` the chip-wide
    self-heating, ``(T,)`` K."""

    own: np.ndarray
    crosstalk: np.ndarray
    chip_K: np.ndarray


def heat_at(
    times_s: ArrayLike,
    applied_s: ArrayLike,
    power_mW: ArrayLike,
    tau_s: ArrayLike,
    dynamics: ThermalDynamics,
) -> Heat:
    """The heat at ``times_s`` (T,) after writes that set channel ``h`` to ``power_mW[k, h]``
    at ``applied_s[k, h]`` (s, shape (W, H), writes in order); write 0 is the state settled
    long before (its times are ignored). ``tau_s``: each heater's own time constant (H,)."""
    t = finite("times_s", times_s).reshape(-1)
    applied, power = np.asarray(applied_s, dtype=float), finite("power_mW", power_mW)
    if applied.ndim != 2 or applied.shape != power.shape:
        shapes = f"{applied.shape}, {power.shape}"
        raise ShapeError(f"applied_s and power_mW must be (W, H) alike, got {shapes}")
    finite("applied_s", applied[1:])  # write 0's times are ignored (it settled long before)
    tau = np.broadcast_to(finite("tau_s", tau_s), power.shape[1:])
    # every (write, channel) step at once: its size, when it was applied, which channel
    steps = np.diff(power, axis=0)
    k, h = np.nonzero(steps)
    size, dt = steps[k, h], t[:, None] - applied[k + 1, h]  # (E,), (T, E)
    into = (np.arange(t.size)[:, None] * tau.size + h).ravel()  # (time, channel) of each term

    def summed(response: np.ndarray) -> np.ndarray:
        """Each channel's steps times their responses (T, E), added up: (T, H)."""
        added = np.bincount(into, (response * size).ravel(), minlength=t.size * tau.size)
        return power[0] + added.reshape(t.size, tau.size)

    own = summed(rise(dt, tau[h], dynamics.tau2_s))
    crosstalk = summed(rise(dt, tau[h], dynamics.crosstalk_tau_s))
    return Heat(own, crosstalk, _chip_K(power[0], size, dt, dynamics))


def chip_heat_K(
    times_s: ArrayLike,
    applied_s: ArrayLike,
    power_mW: ArrayLike,
    dynamics: ThermalDynamics,
    lag_mW: float = 0.0,
    lag_at_s: float = -math.inf,
) -> np.ndarray:
    """The chip-wide self-heating at ``times_s`` (T,), K, after the writes of
    :func:`heat_at` (the same arguments): what :func:`heat_at` gives as ``chip_K``. Write 0
    need not have settled: ``lag_mW`` of its power is not felt yet at ``lag_at_s`` (s;
    :func:`chip_lag_mW`), so the writes since one that ended before ``times_s`` suffice, however
    slow the chip's pole."""
    t = finite("times_s", times_s).reshape(-1)
    applied, power = np.asarray(applied_s, dtype=float), finite("power_mW", power_mW)
    steps = np.diff(power, axis=0)
    k, h = np.nonzero(steps)
    heat = _chip_K(power[0], steps[k, h], t[:, None] - applied[k + 1, h], dynamics)
    if lag_mW:
        left_mW = lag_mW * np.exp(-(t - lag_at_s) / dynamics.chip_tau_s)
        heat = heat - 1e-3 * dynamics.chip_K_per_W * left_mW
    return heat


def chip_lag_mW(
    lag_mW: float,
    lag_at_s: float,
    applied_s: np.ndarray,
    step_mW: np.ndarray,
    at_s: float,
    tau_s: float,
) -> float:
    """The heater power the die has not felt yet at ``at_s`` (s), mW (its self-heating is
    first order, ``tau_s``: it lags the heaters' total by this): ``lag_mW`` left at
    ``lag_at_s``, decayed, plus the steps ``step_mW`` applied at ``applied_s`` (each by
    ``at_s``). Kept per write, the self-heating at a later time needs only the writes since."""
    left = lag_mW * math.exp(-(at_s - lag_at_s) / tau_s) if lag_mW else 0.0
    moved = step_mW != 0  # a channel left alone adds nothing (and has no step time)
    return left + float(np.exp(-(at_s - applied_s[moved]) / tau_s) @ step_mW[moved])


def _chip_K(start_mW: np.ndarray, size: np.ndarray, dt: np.ndarray, d: ThermalDynamics):
    """The self-heating (T,), K: the total power settled before, plus each step (E,) risen
    by its time ``dt`` (T, E) since."""
    return 1e-3 * d.chip_K_per_W * (start_mW.sum() + rise(dt, d.chip_tau_s) @ size)


def settle_time_s(
    step_rad: ArrayLike,
    tau_s: ArrayLike,
    crosstalk: sp.spmatrix | np.ndarray | None,
    dynamics: ThermalDynamics,
    tolerance_rad: float,
) -> float:
    """Time after a step of every heater's own phase by ``step_rad`` (H,) at once until every
    heater's phase is within ``tolerance_rad`` of its final value, s: the remainders of the own
    step and of every aggressor's crosstalk (``|K| |step|``), added in magnitude, bound the
    error. 0 when no step exceeds the tolerance. Chip-wide self-heating is a slow drift, not
    part of settling (the ring lock tracks it). Found on a geometric grid of times refined
    twice, to 1e-4 of it. For many steps of one chip, prepare its :class:`Settling` once."""
    return Settling(tau_s, crosstalk, dynamics).time_s(step_rad, tolerance_rad)


class Settling:
    """The settling of one chip's heaters (:func:`settle_time_s`), prepared once: their own
    time constants ``tau_s`` (H,), their thermal crosstalk ``K[victim, aggressor]`` (H, H;
    None: none) and the ``dynamics``, for the many steps an emulated driver times."""

    def __init__(
        self,
        tau_s: ArrayLike,
        crosstalk: sp.spmatrix | np.ndarray | None,
        dynamics: ThermalDynamics,
    ) -> None:
        self.tau_s = np.array(finite("tau_s", tau_s), dtype=float).reshape(-1)  # own, writable
        self.dynamics = dynamics
        if crosstalk is None:
            n = self.tau_s.size
            self._columns = (np.zeros(n + 1, np.int32), np.zeros(0, np.int32), np.zeros(0))
        else:  # the kernel reads each stepped heater's column
            K = sp.csc_matrix(crosstalk)
            self._columns = (
                K.indptr.astype(np.int32),
                K.indices.astype(np.int32),
                K.data.astype(float),
            )

    def time_s(self, step_rad: ArrayLike, tolerance_rad: float) -> float:
        """The settling time (s) of a step of the heaters' own phases by ``step_rad`` (rad, one
        per heater, or one for all) to within ``tolerance_rad``."""
        step = np.abs(finite("step_rad", step_rad)).reshape(-1)
        tau = np.broadcast_to(self.tau_s, step.shape) if self.tau_s.size == 1 else self.tau_s
        if step.shape != tau.shape:
            raise ShapeError(f"step_rad must hold {tau.size} steps, got shape {step.shape}")
        if not tolerance_rad > 0:
            raise SettingsError(f"tolerance_rad must be > 0, got {tolerance_rad!r}")
        if self._columns[0].size != step.size + 1:
            raise ShapeError(f"crosstalk must be ({step.size}, {step.size}) for {step.size} steps")
        return float(
            _settle_kernel.settle_search(
                np.ascontiguousarray(step),
                np.ascontiguousarray(tau),
                *self._columns,
                float(self.dynamics.tau2_s),
                float(self.dynamics.crosstalk_tau_s),
                SETTLED_AFTER_TAU,
                float(tolerance_rad),
            )
        )
