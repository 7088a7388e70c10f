"""Thermo-optic heaters: drive current -> electrical power -> phase, crosstalk, dynamics, drift.

Model of each heater ``h`` (units: current mA, resistance ohm, power mW, phase rad, time s)::

    R(I)  = a I^2 + c                               (resistance rises as the heater warms)
    P(I)  = 1e-3 I^2 R(I)                           (electrical power)
    phi   = pi P / P_pi                             (own phase, linear in power)
    total = (1 + K) phi + bias + drift * (T - T0)   (K: thermal crosstalk, zero diagonal)

Thermal crosstalk follows the published form (Teofilovic et al., JLT 42, 7816 (2024)): a waveguide
at distance d (um) from an aggressor heater picks up ``p1 e^{-p2 d} + p3 d + p4`` of the
aggressor's phase, clipped at zero and ending where it falls below :data:`NEGLIGIBLE_CROSSTALK`.
An MZI's heater sets the difference of its two arms, and a distant heater warms both: the
crosstalk it sees is the kernel at its heated arm less the kernel at its other arm
(:func:`differential_crosstalk`). Dynamics are first order with a per-heater time constant tau
(5.6 us for TiN heaters, Jacques et al., Opt. Express 27, 10456); heat in time (a second pole,
crosstalk's delay, self-heating) is :mod:`photonics.devices.transients`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike

from photonics._checks import finite
from photonics.devices.mzi import PUBLISHED_EXTINCTION_DB
from photonics.devices.transients import rise
from photonics.errors import LimitError, SettingsError, ShapeError

#: P_pi of a standard TiN heater, mW (Jacques et al., Opt. Express 27, 10456 (2019)).
DEFAULT_P_PI_MW = 21.4
#: Thermal time constant of a TiN heater, s (same source).
DEFAULT_TAU_S = 5.6e-6
#: Cold resistance c of R(I) = a I^2 + c, ohm; and the rise a, ohm/mA^2 (+10 % at 10 mA).
DEFAULT_R0_OHM = 500.0
DEFAULT_R_RISE_OHM_PER_MA2 = 0.5
#: Per-channel current limit, mA, and DAC (bits over full scale) of a Qontrol-class driver.
DEFAULT_MAX_CURRENT_MA = 10.0
DEFAULT_DAC_BITS = 16
#: Phase drift of an MZI with ambient temperature, rad/K: a few um of arm-length imbalance in
#: silicon (dn/dT = 1.86e-4 /K) at 1550 nm.
DEFAULT_DRIFT_RAD_PER_K = 0.003


#: Crosstalk below this fraction of the aggressor's phase is neglected: where the kernel's
#: reach ends (:attr:`CrosstalkModel.reach_um`). 1e-4 of a full 2 pi is 0.6 mrad.
NEGLIGIBLE_CROSSTALK = 1e-4
#: Farthest reach searched for a kernel that never falls below the negligible level, um.
MAX_REACH_UM = 10_000.0


@dataclass(frozen=True)
class CrosstalkModel:
    """Fraction of an aggressor's phase seen by a waveguide at distance ``d`` (um):
    ``max(0, p1 e^{-p2 d} + p3 d + p4)`` for ``0 < d <= reach_um``, else 0.

    ``cutoff_um``: where the law ends (a fitted law holds only where it was measured); None:
    where it falls below :data:`NEGLIGIBLE_CROSSTALK` for good. Defaults: about 11 % at 20 um,
    2.5 % at 50 um, 0.2 % at 100 um, below 1e-4 beyond 133 um; plausible for heaters without
    isolation trenches. Calibrate the real chip's values.
    """

    p1: float = 0.3
    p2_per_um: float = 0.05
    p3_per_um: float = -1e-5
    p4: float = 1e-3
    cutoff_um: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name != "cutoff_um" or self.cutoff_um is not None:
                finite(f.name, getattr(self, f.name))
        if self.cutoff_um is not None and self.cutoff_um < 0:
            raise SettingsError(f"cutoff_um must be >= 0, got {self.cutoff_um}")
        if self.cutoff_um is None and self.law(MAX_REACH_UM) >= NEGLIGIBLE_CROSSTALK:
            raise SettingsError(
                f"the crosstalk law stays above {NEGLIGIBLE_CROSSTALK:g} up to {MAX_REACH_UM:g} "
                "um: give it a cutoff_um"
            )

    def law(self, distance_um: ArrayLike) -> np.ndarray:
        """The fitted form ``p1 e^{-p2 d} + p3 d + p4``, unclipped."""
        d = np.asarray(distance_um, dtype=float)
        return self.p1 * np.exp(-self.p2_per_um * d) + self.p3_per_um * d + self.p4

    @property
    def reach_um(self) -> float:
        """Distance beyond which the law is 0 (um): ``cutoff_um``, or the last distance (0.5 um
        steps) where the law is still at or above :data:`NEGLIGIBLE_CROSSTALK`."""
        if self.cutoff_um is not None:
            return float(self.cutoff_um)
        grid = np.arange(0.0, MAX_REACH_UM + 0.5, 0.5)
        above = np.flatnonzero(self.law(grid) >= NEGLIGIBLE_CROSSTALK)
        return float(grid[above[-1]]) if above.size else 0.0

    def coupling(self, distance_um: ArrayLike) -> np.ndarray:
        d = finite("distance_um", distance_um)
        return np.where((d > 0) & (d <= self.reach_um), np.maximum(self.law(d), 0.0), 0.0)


def crosstalk_matrix(positions_um: ArrayLike, model: CrosstalkModel) -> sp.csr_matrix:
    """Sparse ``K`` (H x H, zero diagonal): ``K[victim, aggressor]`` = fraction of the aggressor's
    phase added to the victim. ``positions_um``: (H, 2) heater centres, um."""
    pos = finite("positions_um", positions_um)
    if pos.ndim != 2 or pos.shape[1] != 2:
        raise ShapeError(f"positions_um must have shape (H, 2), got {pos.shape}")
    from scipy.spatial import cKDTree

    pairs = cKDTree(pos).query_pairs(model.reach_um, output_type="ndarray")
    d = np.linalg.norm(pos[pairs[:, 0]] - pos[pairs[:, 1]], axis=1)
    k = model.coupling(d)
    rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
    cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
    H = len(pos)
    return sp.csr_matrix((np.concatenate([k, k]), (rows, cols)), shape=(H, H))


def current_for_power(
    power_mW: ArrayLike, r0_ohm: ArrayLike, r_rise_ohm_per_mA2: ArrayLike
) -> np.ndarray:
    """Current (mA, >= 0) dissipating ``power_mW`` in ``R(I) = r_rise I^2 + r0`` (ohm, mA):
    the root of ``r_rise I^4 + r0 I^2 = 1e3 P``."""
    p = finite("power_mW", power_mW)
    if np.any(p < 0):
        raise SettingsError(f"a heater cannot dissipate negative power, got {p.min()} mW")
    c, a = np.asarray(r0_ohm, dtype=float), np.asarray(r_rise_ohm_per_mA2, dtype=float)
    # I^2 = 2e3 P / (c + sqrt(c^2 + 4e3 a P)): the quadratic root without cancellation
    return np.sqrt(2e3 * p / (c + np.sqrt(c**2 + 4e3 * a * p)))


def power_for_current(
    current_mA: ArrayLike, r0_ohm: ArrayLike, r_rise_ohm_per_mA2: ArrayLike
) -> np.ndarray:
    """Power (mW) ``1e-3 I^2 R(I)`` that ``current_mA`` dissipates in ``R(I) = r_rise I^2 + r0``
    (ohm, mA): the inverse of :func:`current_for_power`."""
    current = np.asarray(current_mA, dtype=float)
    return 1e-3 * current**2 * (np.asarray(r_rise_ohm_per_mA2) * current**2 + np.asarray(r0_ohm))


@dataclass(frozen=True, eq=False)
class Heaters:
    """A set of H heaters and the limits of the driver behind them (each field: scalar or (H,)).

    - ``p_pi_mW``: electrical power for a pi phase shift, mW;
    - ``r0_ohm``, ``r_rise_ohm_per_mA2``: ``R(I) = r_rise I^2 + r0``;
    - ``bias_rad``: fabrication phase at zero drive, rad;
    - ``tau_s``: thermal time constant, s;
    - ``drift_rad_per_K``: phase change per kelvin of ambient temperature;
    - ``max_current_mA``: per-channel limit; ``power_budget_mW``: limit on the total power;
    - ``dac_bits``, ``full_scale_mA``: the driver's current DAC.
    """

    count: int
    p_pi_mW: ArrayLike = DEFAULT_P_PI_MW
    r0_ohm: ArrayLike = DEFAULT_R0_OHM
    r_rise_ohm_per_mA2: ArrayLike = DEFAULT_R_RISE_OHM_PER_MA2
    bias_rad: ArrayLike = 0.0
    tau_s: ArrayLike = DEFAULT_TAU_S
    drift_rad_per_K: ArrayLike = DEFAULT_DRIFT_RAD_PER_K
    max_current_mA: ArrayLike = DEFAULT_MAX_CURRENT_MA
    power_budget_mW: float = np.inf
    dac_bits: int = DEFAULT_DAC_BITS
    full_scale_mA: float = DEFAULT_MAX_CURRENT_MA

    def __post_init__(self) -> None:
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 0:
            raise ShapeError(f"count must be a non-negative integer, got {self.count!r}")
        for f in fields(self)[1:8]:
            arr = np.broadcast_to(finite(f.name, getattr(self, f.name)), (self.count,)).copy()
            if f.name != "bias_rad" and f.name != "drift_rad_per_K" and np.any(arr < 0):
                raise SettingsError(f"{f.name} must be >= 0, got {arr.min()}")
            if f.name in ("p_pi_mW", "r0_ohm", "tau_s") and np.any(arr <= 0):
                raise SettingsError(f"{f.name} must be > 0, got {arr.min()}")
            arr.setflags(write=False)
            object.__setattr__(self, f.name, arr)
        if not self.power_budget_mW > 0:
            raise SettingsError(f"power_budget_mW must be > 0, got {self.power_budget_mW}")
        if not (isinstance(self.dac_bits, int) and 1 <= self.dac_bits <= 32):
            raise SettingsError(f"dac_bits must be an integer in 1..32, got {self.dac_bits!r}")
        if not self.full_scale_mA > 0:
            raise SettingsError(f"full_scale_mA must be > 0, got {self.full_scale_mA}")

    def _currents(self, current_mA: ArrayLike) -> np.ndarray:
        current = finite("current_mA", current_mA)
        if current.shape[-1:] != (self.count,):
            raise ShapeError(f"expected {self.count} currents (mA), got shape {current.shape}")
        return current

    def power_mW(self, current_mA: ArrayLike) -> np.ndarray:
        """Electrical power ``1e-3 I^2 R(I)``, mW, of currents (mA) shaped ``(..., H)``."""
        return power_for_current(self._currents(current_mA), self.r0_ohm, self.r_rise_ohm_per_mA2)

    def voltage_V(self, current_mA: ArrayLike) -> np.ndarray:
        """Drive voltage ``1e-3 I R(I)``, V."""
        current = self._currents(current_mA)
        return 1e-3 * current * (self.r_rise_ohm_per_mA2 * current**2 + self.r0_ohm)

    def current_for_power(self, power_mW: ArrayLike) -> np.ndarray:
        """The current (mA, >= 0) that dissipates ``power_mW`` in each heater."""
        return current_for_power(power_mW, self.r0_ohm, self.r_rise_ohm_per_mA2)

    def own_phase(self, current_mA: ArrayLike) -> np.ndarray:
        """Phase each heater imposes on its own waveguide, ``pi P / P_pi``, rad."""
        return np.pi * self.power_mW(current_mA) / self.p_pi_mW

    def quantise(self, current_mA: ArrayLike) -> np.ndarray:
        """Currents as the DAC can produce them: nearest code of ``dac_bits`` over full scale."""
        lsb = self.full_scale_mA / (2**self.dac_bits - 1)
        return np.clip(np.round(self._currents(current_mA) / lsb), 0, 2**self.dac_bits - 1) * lsb

    def check_limits(self, current_mA: ArrayLike) -> None:
        """Raise :class:`LimitError` naming the channel if any current exceeds its limit, is
        negative, or the total power exceeds the budget."""
        current = self._currents(current_mA)
        bad = (current > self.max_current_mA) | (current < 0)
        over = np.flatnonzero(bad.reshape(-1, self.count).any(axis=0))
        if over.size:
            h = int(over[0])
            raise LimitError(
                f"channel {h}: {current[..., h].max():.6g} mA is outside "
                f"0..{self.max_current_mA[h]:.6g} mA"
            )
        total = self.power_mW(current).sum(axis=-1)
        if np.any(total > self.power_budget_mW):
            raise LimitError(
                f"total heater power {np.max(total):.6g} mW exceeds the budget "
                f"{self.power_budget_mW:.6g} mW"
            )


def total_phase(
    heaters: Heaters,
    current_mA: ArrayLike,
    crosstalk: sp.spmatrix | None = None,
    delta_T_K: float = 0.0,
    heat_scale: float = 1.0,
) -> np.ndarray:
    """Steady-state phase of every heater's waveguide, rad: own phase plus the crosstalk of the
    others (both times ``heat_scale``, e.g. ``1550 nm / wavelength``), fabrication bias and
    ambient drift (``delta_T_K`` from the reference temperature)."""
    power = heaters.power_mW(current_mA)
    return phase_of_heat(heaters, power, power, crosstalk, delta_T_K, heat_scale)


def phase_of_heat(
    heaters: Heaters,
    own_mW: ArrayLike,
    crosstalk_mW: ArrayLike,
    crosstalk: sp.spmatrix | None = None,
    delta_T_K: ArrayLike = 0.0,
    heat_scale: float = 1.0,
) -> np.ndarray:
    """:func:`total_phase` of heater powers as they act, rad, shape ``(..., H)``: ``own_mW`` on
    each heater's own waveguide, ``crosstalk_mW`` as its neighbours feel it (they differ while
    heat spreads: :mod:`photonics.devices.transients`), ``delta_T_K`` the ambient (scalar or
    ``(...)``)."""
    own = np.pi * np.asarray(own_mW, dtype=float) / heaters.p_pi_mW
    heated = own
    if crosstalk is not None:
        seen = np.pi * np.asarray(crosstalk_mW, dtype=float) / heaters.p_pi_mW
        heated = own + (crosstalk @ seen.T).T
    drift = heaters.drift_rad_per_K * np.asarray(delta_T_K, dtype=float)[..., None]
    return heat_scale * heated + heaters.bias_rad + drift


def own_phase_for(target_rad: ArrayLike, crosstalk: sp.spmatrix | None = None) -> np.ndarray:
    """The own phases ``x`` with ``(1 + K) x = target``: pre-compensation of thermal crosstalk.

    ``target_rad`` is the wanted heater-induced phase (bias and drift already subtracted).
    """
    target = finite("target_rad", target_rad)
    if crosstalk is None:
        return target
    A = (sp.identity(crosstalk.shape[0], format="csc") + crosstalk).tocsc()
    return spla.spsolve(A, target.T).T if target.ndim == 1 else spla.splu(A).solve(target.T).T


def own_for_modular_target(
    want: np.ndarray, period: ArrayLike | None, crosstalk: sp.spmatrix | None
) -> np.ndarray:
    """Own effects ``x >= 0`` with ``(1 + K) x = want`` modulo ``period`` (per heater).

    A heater can only heat: one that the solve drives negative (its neighbours over-heat it) is
    given one more period and the system is solved again, until every heater is >= 0. Without
    a period a negative solution is an error.
    """
    own = own_phase_for(want, crosstalk)
    for _ in range(32):  # each lift lowers the neighbours' needs; settles in a few
        low = own < -1e-12
        if not np.any(low):
            return np.maximum(own, 0.0)
        if period is None:
            h = int(np.flatnonzero(low)[0])
            raise SettingsError(
                f"heater {h} would need {own[h]:.6g} of own effect (< 0) to reach {want[h]:.6g}; "
                "allow a shift by one period"
            )
        want = want + np.asarray(period) * low
        own = own_phase_for(want, crosstalk)
    raise SettingsError("crosstalk compensation did not settle to heater powers >= 0")


def currents_for_phase(
    heaters: Heaters,
    target_rad: ArrayLike,
    crosstalk: sp.spmatrix | None = None,
    delta_T_K: float = 0.0,
) -> np.ndarray:
    """Currents (mA) whose steady-state :func:`total_phase` equals ``target_rad`` modulo 2 pi.

    Each heater's wanted own phase is taken in [0, 2 pi) after removing bias and drift; crosstalk
    is then pre-compensated by solving the linear system, and any own phase the solve pushes
    below zero is lifted by 2 pi (a heater can only heat).
    """
    target = finite("target_rad", target_rad)
    target = target - heaters.bias_rad - heaters.drift_rad_per_K * delta_T_K
    own = own_for_modular_target(np.mod(target, 2 * np.pi), 2 * np.pi, crosstalk)
    return heaters.current_for_power(own * heaters.p_pi_mW / np.pi)


def step_response(
    phase_from: ArrayLike, phase_to: ArrayLike, tau_s: ArrayLike, t_s: ArrayLike
) -> np.ndarray:
    """First-order thermal settling after a step at t = 0: phases at times ``t_s`` (s), shape
    ``(len(t_s), H)``: ``to + (from - to) exp(-t / tau)``."""
    start = finite("phase_from", phase_from)
    end = finite("phase_to", phase_to)
    tau = finite("tau_s", tau_s)
    t = finite("t_s", t_s)
    if np.any(t < 0) or np.any(tau <= 0):
        raise SettingsError("times must be >= 0 s and time constants > 0 s")
    return start + (end - start) * rise(t[:, None], tau)


def settling_time_s(tau_s: ArrayLike, tolerance: float = 1e-3) -> float:
    """Time for every first-order heater to settle within ``tolerance`` of a step, s."""
    if not 0 < tolerance < 1:
        raise SettingsError(f"tolerance must be in (0, 1), got {tolerance}")
    return float(np.max(finite("tau_s", tau_s)) * np.log(1 / tolerance))


# ---- crosstalk on both arms of an MZI --------------------------------------------------------


@dataclass(frozen=True, eq=False)
class HeaterLayout:
    """Where a chip's heaters are, um: ``positions_um`` (H, 2), each heater's centre on the
    waveguide it heats; ``other_arm_um`` (M, 2), M <= H, the centre of the unheated arm of
    heaters ``0 .. M-1`` (each an MZI's heater on one arm; the rest heat a lone waveguide)."""

    positions_um: np.ndarray
    other_arm_um: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))

    def __post_init__(self) -> None:
        for name in ("positions_um", "other_arm_um"):
            arr = finite(name, getattr(self, name)).copy()
            if arr.ndim != 2 or arr.shape[1] != 2:
                raise ShapeError(f"{name} must have shape (N, 2), got {arr.shape}")
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if len(self.other_arm_um) > len(self.positions_um):
            raise ShapeError(
                f"{len(self.other_arm_um)} other arms for {len(self.positions_um)} heaters"
            )

    def arm_crosstalk(self, model: CrosstalkModel) -> sp.csr_matrix:
        """``A`` (M x H): the fraction of heater ``h``'s own phase that reaches the other arm of
        heater ``m``; zero for ``h = m``, whose warmth of its own other arm is part of its
        measured (differential) P_pi."""
        from scipy.spatial import cKDTree

        M, H = len(self.other_arm_um), len(self.positions_um)
        if M == 0:
            return sp.csr_matrix((0, H))
        near = cKDTree(self.other_arm_um).sparse_distance_matrix(
            cKDTree(self.positions_um), model.reach_um, output_type="coo_matrix"
        )
        keep = near.row != near.col
        k = model.coupling(near.data[keep])
        return sp.csr_matrix((k, (near.row[keep], near.col[keep])), shape=(M, H))

    def crosstalk(self, model: CrosstalkModel) -> sp.csr_matrix:
        """:func:`differential_crosstalk` of this layout."""
        return differential_crosstalk(self, model)


def differential_crosstalk(layout: HeaterLayout, model: CrosstalkModel) -> sp.csr_matrix:
    """``K`` (H x H, zero diagonal): the phase ``K[v, a]`` (per rad of heater ``a``'s own phase)
    that heater ``a``'s warmth adds to what heater ``v`` sets: the kernel at ``v``'s waveguide
    less, for an MZI's heater, the kernel at its other arm. Both arms of a distant MZI warm
    about equally, so its differential crosstalk is small; an aggressor nearer the other arm
    gives a negative one."""
    K = crosstalk_matrix(layout.positions_um, model)
    A = layout.arm_crosstalk(model)
    if A.shape[0] == 0:
        return K
    pad = sp.vstack([A, sp.csr_matrix((K.shape[0] - A.shape[0], K.shape[1]))])
    return (K - pad).tocsr()


#: Crosstalk phase (rad) above which self-calibration (``CAL:RUN``) also calibrates crosstalk:
#: where the phase error alone leaks an MZI's light as much as its couplers do, an extinction
#: of 20 log10(1 / sin(phase / 2)) = a cell's typical 35 dB (``mzi.PUBLISHED_EXTINCTION_DB``):
#: 0.0356 rad (docs/physics.md section 5.2).
CROSSTALK_MATTERS_RAD = 2 * math.asin(10 ** (-PUBLISHED_EXTINCTION_DB[1] / 20))


def predicted_crosstalk_rad(
    layout: HeaterLayout, n_cells: int, model: CrosstalkModel | None = None
) -> float:
    """The worst crosstalk phase (rad) a cell's heater would see by the nominal kernel
    (``model``, default the published law of :class:`CrosstalkModel`) from the layout alone:
    every other cell's heater at pi of own phase, ``pi max_v sum_a |K[v, a]|`` over the cells'
    heaters (channels ``0 .. n_cells - 1``)."""
    K = differential_crosstalk(layout, model or CrosstalkModel()).tocsr()[:n_cells, :n_cells]
    return float(np.pi * np.abs(K).sum(axis=1).max()) if n_cells else 0.0


def crosstalk_matters(layout: HeaterLayout, n_cells: int) -> bool:
    """Whether :func:`predicted_crosstalk_rad` exceeds :data:`CROSSTALK_MATTERS_RAD`: the
    criterion by which the firmware's self-calibration calibrates crosstalk too."""
    return predicted_crosstalk_rad(layout, n_cells) > CROSSTALK_MATTERS_RAD
