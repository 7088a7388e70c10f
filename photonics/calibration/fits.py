"""Fits of calibration measurements: heater resistance, fringes, crosstalk, ring tuning.

The fits are pure functions of measurement arrays, so they run identically on emulator data and on
real bench data. Models (units: current mA, voltage V, resistance ohm, power mW, phase rad,
wavelength nm), the same as :mod:`photonics.devices.thermal`::

    R(I)     = a I^2 + c                          heater resistance; V = 1e-3 I R(I)
    phase    = pi P / P_pi + bias                 a heater's phase, linear in its power P
    detected = offset + amplitude cos(phase)      a detector behind an MZI (a cosine fringe)
    shift_v  = K[v, a] * (pi P_a / P_pi_a)        thermal crosstalk, K with zero diagonal
    lambda   = lambda0 + slope P                  a ring's resonance under its heater

What they give is gathered in a :class:`~photonics.chips.calibration.Calibration`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import least_squares, leastsq

from photonics._checks import array
from photonics.chips.calibration import RingTuning
from photonics.devices.thermal import CrosstalkModel
from photonics.errors import FitError, SettingsError, ShapeError

#: Oversampling of the fringe-frequency scan relative to the natural resolution 2 pi / span.
_SCAN_OVERSAMPLE = 16
#: Largest number of trial frequencies the fringe scan accepts (keeps a bad range from hanging).
_SCAN_MAX_POINTS = 200_000
#: Scan local minima refined by least squares (guards against a noisy scan picking a side lobe).
_SCAN_CANDIDATES = 5
#: How far (a factor) a fit with overtones may leave the scanned frequency range and still
#: count as near it.
_OVERTONE_SLACK = 1.1
#: Smallest fraction of the detected variance a fringe fit must explain (amplitude ~ 1.4 x noise).
_MIN_EXPLAINED = 0.5


# ------------------------------------------------------------------------------------------------
# input checks


def _vector(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as a 1-D float array; a wrong dimension is :class:`ShapeError`."""
    arr = array(name, value)
    if arr.ndim != 1:
        raise ShapeError(f"{name} must be 1-D, got shape {arr.shape}")
    return arr


def _paired(x_name: str, x: ArrayLike, y_name: str, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Two measurement vectors of equal length, all finite (non-finite data is a :class:`FitError`
    since it usually means a failed reading, not a programming error)."""
    xa, ya = _vector(x_name, x), _vector(y_name, y)
    if xa.shape != ya.shape:
        raise ShapeError(f"{x_name} has shape {xa.shape} but {y_name} has shape {ya.shape}")
    for name, arr in ((x_name, xa), (y_name, ya)):
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise FitError(f"{name} must be finite; sample {bad[0]} is {float(arr[bad[0]])!r}")
    return xa, ya


def _line_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares ``y = slope x + intercept``: (slope, intercept, rms residual)."""
    # centred form: better conditioned than the normal equations of [x, 1]
    xm, ym = x.mean(), y.mean()
    dx = x - xm
    slope = float(np.dot(dx, y - ym) / np.dot(dx, dx))
    intercept = float(ym - slope * xm)
    rms = float(np.sqrt(np.mean((y - (slope * x + intercept)) ** 2)))
    return slope, intercept, rms


# ------------------------------------------------------------------------------------------------
# heater resistance


@dataclass(frozen=True)
class HeaterResistance:
    """A heater's ``R(I) = a I^2 + c``: ``a_ohm_per_mA2`` (ohm/mA^2), ``c_ohm`` (ohm, the cold
    resistance), and the fit's rms residual of ``R`` (ohm)."""

    a_ohm_per_mA2: float
    c_ohm: float
    rms_residual_ohm: float


def fit_heater_resistance(current_mA: ArrayLike, voltage_V: ArrayLike) -> HeaterResistance:
    """Fit ``R(I) = a I^2 + c`` to an I-V sweep (current mA, voltage V).

    ``R = V / (1e-3 I)`` is fitted linearly on ``I^2``; points at ``I == 0`` carry no resistance
    and are ignored. Needs at least 3 usable points at two or more distinct ``|I|``.
    """
    current, voltage = _paired("current_mA", current_mA, "voltage_V", voltage_V)
    usable = current != 0
    if np.count_nonzero(usable) < 3:
        raise FitError(
            f"fit_heater_resistance needs at least 3 points with current_mA != 0, "
            f"got {np.count_nonzero(usable)}"
        )
    i = current[usable]
    r_ohm = voltage[usable] / (1e-3 * i)
    x = i * i
    if np.ptp(x) == 0:
        raise FitError(
            f"current_mA must take at least two distinct |I| values, got |I| = {float(abs(i[0]))!r}"
        )
    a, c, rms = _line_fit(x, r_ohm)
    return HeaterResistance(a_ohm_per_mA2=a, c_ohm=c, rms_residual_ohm=rms)


# ------------------------------------------------------------------------------------------------
# fringes


@dataclass(frozen=True)
class Fringe:
    """A fitted fringe ``offset + amplitude cos(pi P / p_pi_mW + bias_rad)``.

    ``p_pi_mW`` > 0 (mW), ``bias_rad`` in [0, 2 pi), ``amplitude`` >= 0 and ``offset`` in the units
    of the detected signal, ``rms_residual`` likewise.
    """

    p_pi_mW: float
    bias_rad: float
    amplitude: float
    offset: float
    rms_residual: float


def _scan_residuals(w: np.ndarray, u: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Residual sum of squares of the best ``o + C cos(w u) + S sin(w u)`` for every ``w``.

    ``y`` is centred. For fixed ``w`` the model is linear in (o, C, S); eliminating ``o``
    (centring the columns) leaves a 2 x 2 normal system per trial frequency, solved in closed
    form. Its sums come from ``z = exp(i w u)``: ``sum cos^2 = (n + Re sum z^2) / 2`` and so on,
    so the cost is a few complex products per (frequency, sample) and three mat-vec products.
    """
    n = u.size
    yy = float(np.dot(y, y))
    out = np.empty(w.size)
    rows = min(w.size, max(1, 1_000_000 // n))  # bound the (rows, samples) temporaries
    # w is evenly spaced: exp(i w_k u) = exp(i w_start u) exp(i (k - start) dw u), so one table
    # of exponentials serves every block and the rest is complex multiplication
    dw = (w[-1] - w[0]) / (w.size - 1) if w.size > 1 else 0.0
    table = np.exp(1j * np.outer(dw * np.arange(rows), u))
    for start in range(0, w.size, rows):
        stop = min(start + rows, w.size)
        z = table[: stop - start] * np.exp(1j * w[start] * u)
        m = z.mean(axis=1)  # column means: cos + i sin
        z2 = (z * z).sum(axis=1)
        zy = z @ y  # centring the columns does not change these, since y is centred
        cy, sy = zy.real, zy.imag
        cc = (n + z2.real) / 2 - n * m.real**2
        ss = (n - z2.real) / 2 - n * m.imag**2
        cs = z2.imag / 2 - n * m.real * m.imag
        det = cc * ss - cs * cs
        with np.errstate(divide="ignore", invalid="ignore"):
            both = (ss * cy * cy - 2 * cs * cy * sy + cc * sy * sy) / det
            # near w = 0 the two columns become collinear: fall back to the better single one
            single = np.maximum(
                np.where(cc > 0, cy * cy / cc, 0), np.where(ss > 0, sy * sy / ss, 0)
            )
        ok = det > 1e-10 * np.abs(cc * ss)
        out[start : start + rows] = yy - np.where(ok, both, single)
    return out


def _scan_harmonics(w: np.ndarray, u: np.ndarray, y: np.ndarray, harmonics: int) -> np.ndarray:
    """Residual sum of squares of the best ``o + sum_m C_m cos(m w u) + S_m sin(m w u)`` for
    every ``w``: exact linear fits, a block of trial frequencies at a time."""
    out = np.empty(w.size)
    m = np.arange(1, harmonics + 1)
    for start in range(0, w.size, 2048):
        arg = w[start : start + 2048, None, None] * u[None, :, None] * m
        design = np.concatenate([np.ones((*arg.shape[:2], 1)), np.cos(arg), np.sin(arg)], axis=2)
        coef = np.linalg.pinv(design) @ y
        r = y - np.einsum("gnk,gk->gn", design, coef)
        out[start : start + 2048] = (r * r).sum(axis=1)
    return out


def _overtone_rank(x: np.ndarray, w_lo: float, w_hi: float) -> int:
    """How a fit with overtones (o, C1, S1, ..., w) is a fringe and its overtones: 0 when its
    frequency is near the scanned range and its fundamental the largest term, 1 when only the
    latter (a sparse sweep also has far, degenerate optima: taken only when nothing is near),
    2 when an overtone is larger (a cosine is fitted exactly at half its frequency too, by the
    second harmonic): not a fit."""
    amplitudes = np.hypot(x[1:-1:2], x[2:-1:2])
    if amplitudes[0] < amplitudes[1:].max():
        return 2
    return 0 if w_lo / _OVERTONE_SLACK <= abs(x[-1]) <= w_hi * _OVERTONE_SLACK else 1


def _local_minima(r: np.ndarray, k: int) -> np.ndarray:
    """Indices of up to ``k`` lowest local minima of ``r`` (end points count)."""
    if r.size == 1:
        return np.array([0])
    left = np.concatenate(([True], r[1:] <= r[:-1]))
    right = np.concatenate((r[:-1] <= r[1:], [True]))
    idx = np.flatnonzero(left & right)
    return idx[np.argsort(r[idx], kind="stable")[:k]]


def _columns(w: float, u: np.ndarray, harmonics: int) -> list[np.ndarray]:
    """The model's linear columns at frequency ``w``: 1, then cos and sin of each ``m w u``."""
    cols = [np.ones_like(u)]
    for m in range(1, harmonics + 1):
        cols += [np.cos(m * w * u), np.sin(m * w * u)]
    return cols


def _linear_start(w0: float, u: np.ndarray, y: np.ndarray, harmonics: int = 1) -> np.ndarray:
    """(o, C1, S1, ..., w0): the exact linear fit at the trial frequency ``w0``."""
    design = np.column_stack(_columns(w0, u, harmonics))
    return np.append(np.linalg.lstsq(design, y, rcond=None)[0], w0)


def _refine(
    x0: np.ndarray, u: np.ndarray, y: np.ndarray, tol: float, harmonics: int = 1
) -> tuple[np.ndarray, float]:
    """Least-squares refinement of (o, C1, S1, ..., w) from ``x0``: (solution, residual sum of
    squares); the model is ``o + sum_m C_m cos(m w u) + S_m sin(m w u)``.

    MINPACK's Levenberg-Marquardt (``lmder``) with the settings of
    ``scipy.optimize.least_squares(method="lm")`` (its scaling from the Jacobian, 100 n
    evaluations at most), called directly: that wrapper cost more than the fit. The model's
    columns are computed once per frequency, for the residual and the Jacobian alike."""
    m = np.arange(1, harmonics + 1)[:, None]
    last: list = [None, None]  # the frequency and (design columns, cos, sin) at it

    def design(w: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if last[0] != w:
            c, s = np.cos(m * w * u), np.sin(m * w * u)
            columns = np.empty((u.size, 2 * harmonics + 1))
            columns[:, 0], columns[:, 1::2], columns[:, 2::2] = 1.0, c.T, s.T
            last[:] = w, (columns, c, s)
        return last[1]

    def resid(x: np.ndarray) -> np.ndarray:
        return design(x[-1])[0] @ x[:-1] - y

    def jac(x: np.ndarray) -> np.ndarray:
        columns, c, s = design(x[-1])
        dw = (m * u * (x[2:-1:2, None] * c - x[1:-1:2, None] * s)).sum(axis=0)
        return np.column_stack([columns, dw])

    # (o, C, S, w) rather than (o, A, bias, w): smooth everywhere, even at zero amplitude
    x, _, info, *_ = leastsq(
        resid,
        np.array(x0, dtype=float),
        Dfun=jac,
        full_output=True,
        ftol=tol,
        xtol=tol,
        gtol=tol,
        maxfev=100 * len(x0),
    )
    return x, float(np.dot(info["fvec"], info["fvec"]))


def fit_fringe(
    power_mW: ArrayLike,
    detected: ArrayLike,
    p_pi_range_mW: tuple[float, float] | None = None,
    harmonics: int = 1,
) -> Fringe:
    """Fit ``detected = offset + amplitude cos(pi P / P_pi + bias)`` to a sweep of one heater's
    electrical power ``P`` (mW).

    The start is found by a dense scan over ``w = pi / P_pi`` (uniform in ``w``, the fringe's
    angular frequency, at 1/16 of its resolution ``2 pi / span``): for fixed ``w`` the model is
    linear in (offset, a cos term, a sin term), so each trial is an exact linear fit. The best
    few scan minima are then refined jointly by Levenberg-Marquardt (MINPACK).

    ``p_pi_range_mW = (lo, hi)`` bounds the scan; the default is (median sample spacing,
    2 x sweep span): below the spacing a uniformly sampled fringe aliases, above twice the
    span the sweep covers less than a quarter fringe. The refined ``P_pi`` may leave the
    range slightly.

    ``harmonics`` > 1 adds the fringe's overtones ``cos(m (pi P / P_pi) + b_m)``, m up to
    ``harmonics``, with free amplitudes and phases: light that crosses the heater's cell more
    than once (a loop of a recirculating mesh) puts them in the signal, and a cosine alone then
    misreads P_pi by up to 1-2 %. The refinement starts from the minima of both the cosine's
    scan and the model's own; a fit whose overtone outweighs its fundamental is refused.
    ``amplitude`` and ``bias`` are the fundamental's.

    Returns ``amplitude >= 0`` and ``bias`` in [0, 2 pi). Raises :class:`FitError` for fewer
    than 5 points (``2 harmonics + 3`` with overtones), a sweep whose power does not vary, or
    data without contrast (the fitted fringe explains less than half of the detected variance).
    """
    p, y = _paired("power_mW", power_mW, "detected", detected)
    if not (isinstance(harmonics, int) and harmonics >= 1):
        raise SettingsError(f"harmonics must be an integer >= 1, got {harmonics!r}")
    need = max(5, 2 * harmonics + 3)
    if p.size < need:
        overtones = f" with {harmonics} harmonics" if harmonics > 1 else ""
        raise FitError(f"fit_fringe{overtones} needs at least {need} points, got {p.size}")
    span = float(np.ptp(p))
    if span == 0:
        raise FitError(f"power_mW does not vary (all {float(p[0])!r} mW): no fringe to fit")
    y_mean = float(y.mean())
    y_std = float(y.std())
    if y_std <= 1e-12 * max(float(np.abs(y).max()), np.finfo(float).tiny):
        raise FitError(f"detected has no contrast: every sample is {float(y[0])!r} (to 1e-12)")

    if p_pi_range_mW is None:
        steps = np.diff(np.unique(p))
        lo, hi = float(np.median(steps)), 2 * span
    else:
        try:
            lo, hi = (float(v) for v in p_pi_range_mW)
        except (TypeError, ValueError) as exc:
            raise SettingsError(
                f"p_pi_range_mW must be (lo, hi) in mW, got {p_pi_range_mW!r}"
            ) from exc
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo < hi):
            raise SettingsError(
                f"p_pi_range_mW must satisfy 0 < lo < hi (finite, mW), got {p_pi_range_mW!r}"
            )

    # work in centred, scaled variables: u in about [-1/2, 1/2], y of unit spread
    p_mid = float(p.mean())
    u = (p - p_mid) / span
    ys = (y - y_mean) / y_std
    w_lo, w_hi = np.pi * span / hi, np.pi * span / lo  # rad per unit of u
    step = 2 * np.pi / _SCAN_OVERSAMPLE
    n_scan = math.ceil((w_hi - w_lo) / step) + 1
    if n_scan > _SCAN_MAX_POINTS:
        raise SettingsError(
            f"p_pi_range_mW {(lo, hi)!r} needs {n_scan} scan points for a {span:g} mW sweep "
            f"(at most {_SCAN_MAX_POINTS}); narrow the range"
        )
    w_grid = np.linspace(w_lo, w_hi, max(n_scan, 2))
    starts = _local_minima(_scan_residuals(w_grid, u, ys), _SCAN_CANDIDATES)
    if harmonics > 1:  # and the model's own scan (a strong overtone moves the cosine's)
        more = _local_minima(_scan_harmonics(w_grid, u, ys, harmonics), _SCAN_CANDIDATES)
        starts = np.union1d(starts, more)

    best_x, best = None, (2, math.inf)
    for i in starts:
        start = _linear_start(float(w_grid[i]), u, ys, harmonics)
        x, cost = _refine(start, u, ys, 1e-8, harmonics)
        rank = 0 if harmonics == 1 else _overtone_rank(x, w_lo, w_hi)
        if rank < 2 and (rank, cost) < best and x[-1] != 0:
            best_x, best = x, (rank, cost)
    if best_x is None:
        raise FitError("fit_fringe did not converge to a fringe of non-zero frequency")
    # polish the winner to machine precision (cheap from a converged start)
    best_x, best_cost = _refine(best_x, u, ys, 1e-15, harmonics)
    explained = 1 - best_cost / float(np.dot(ys, ys))

    o, C, S, w = best_x[0], best_x[1], best_x[2], best_x[-1]
    if w < 0:  # cos(-w u + b) = cos(w u - b): same fringe, mirrored phase
        w, S = -w, -S
    if explained < _MIN_EXPLAINED:
        raise FitError(
            f"detected has no usable contrast: the best fringe explains only {explained:.1%} "
            f"of the variance (need {_MIN_EXPLAINED:.0%}); is the detector seeing this heater?"
        )
    # C cos(w u) + S sin(w u) = A cos(w u + b_u) with A cos b_u = C, A sin b_u = -S
    amplitude = math.hypot(C, S) * y_std
    b_u = math.atan2(-S, C)
    w_mW = w / span  # rad per mW
    bias = float(np.mod(b_u - w_mW * p_mid, 2 * np.pi))
    if bias >= 2 * np.pi:  # np.mod of a tiny negative number rounds up to 2 pi
        bias = 0.0
    offset = o * y_std + y_mean
    rms = math.sqrt(best_cost / p.size) * y_std
    return Fringe(
        p_pi_mW=float(np.pi / w_mW),
        bias_rad=bias,
        amplitude=float(amplitude),
        offset=float(offset),
        rms_residual=float(rms),
    )


# ------------------------------------------------------------------------------------------------
# thermal crosstalk


def fit_crosstalk(aggressor_phase_rad: ArrayLike, victim_shift_rad: ArrayLike) -> np.ndarray:
    """Thermal crosstalk matrix ``K`` (H x H, zero diagonal) from per-pair sweeps.

    - ``victim_shift_rad``: shape (H, H, S), ``[victim, aggressor, sample]``: the phase shift
      (rad) measured on the victim heater while the aggressor alone is swept. The diagonal
      ``[h, h, :]`` is ignored (it may hold NaN).
    - ``aggressor_phase_rad``: the aggressor's own phase ``pi P / P_pi`` (rad) at each sample,
      either shape (S,) (the same sweep for every aggressor) or (H, S) ``[aggressor, sample]``.

    ``K[v, a]`` is the through-origin least-squares slope of the victim's shift on the
    aggressor's phase (a victim sees nothing while the aggressor is off).
    """
    shifts = array("victim_shift_rad", victim_shift_rad)
    if shifts.ndim != 3 or shifts.shape[0] != shifts.shape[1]:
        raise ShapeError(
            f"victim_shift_rad must have shape (H, H, S) [victim, aggressor, sample], "
            f"got {shifts.shape}"
        )
    n, s = shifts.shape[0], shifts.shape[2]
    phase = array("aggressor_phase_rad", aggressor_phase_rad)
    if phase.shape not in ((s,), (n, s)):
        raise ShapeError(
            f"aggressor_phase_rad must have shape ({s},) or ({n}, {s}) to match victim_shift_rad "
            f"{shifts.shape}, got {phase.shape}"
        )
    if not np.all(np.isfinite(phase)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(phase))[0])
        raise FitError(f"aggressor_phase_rad{list(idx)} must be finite, got {float(phase[idx])!r}")
    phase = np.broadcast_to(phase, (n, s))
    off = ~np.eye(n, dtype=bool)
    bad = np.argwhere(off[:, :, None] & ~np.isfinite(shifts))
    if bad.size:
        v, a, k = bad[0]
        raise FitError(
            f"victim_shift_rad[{v}, {a}, {k}] (victim {v}, aggressor {a}) must be finite, "
            f"got {float(shifts[v, a, k])!r}"
        )
    norm = np.einsum("as,as->a", phase, phase)
    if n > 1 and np.any(norm == 0):
        a = int(np.flatnonzero(norm == 0)[0])
        raise FitError(f"aggressor {a}'s phase sweep is all zero: its coupling is undetermined")
    K = np.zeros((n, n))
    if n > 1:
        K[off] = (np.einsum("vas,as->va", np.where(off[:, :, None], shifts, 0), phase) / norm)[off]
    return K


def fit_crosstalk_model(
    distance_um: ArrayLike,
    coupling: ArrayLike,
    cutoff_um: float = 120.0,
    other_arm_distance_um: ArrayLike | None = None,
) -> CrosstalkModel:
    """Fit the published distance law ``p1 e^{-p2 d} + p3 d + p4`` (see
    :class:`photonics.devices.thermal.CrosstalkModel`) to measured pair couplings at distances ``d``
    (um).

    With ``other_arm_distance_um`` (the aggressor's distance to each victim's other arm, um;
    ``inf`` for a victim on a lone waveguide) a coupling is the law at ``d`` less the law
    there, as :func:`photonics.devices.thermal.differential_crosstalk` predicts it. The law ends at
    ``cutoff_um`` in the fit as it does in use: an other arm beyond it sees nothing (fitting
    the uncut law to pairs whose other arms lie beyond the cutoff gives a law that fits them
    and is wrong wherever it is applied).
    A robust (soft-L1) least squares, so a few pairs spoiled by second-order effects do not pull
    the law; the law then gives every pair's coupling from the layout. Needs at least 4 pairs.
    """
    d, k = _paired("distance_um", distance_um, "coupling", coupling)
    if d.size < 4:
        raise FitError(f"fit_crosstalk_model needs at least 4 pairs, got {d.size}")
    scale = float(np.median(d))
    other = np.full(d.shape, np.inf)
    if other_arm_distance_um is not None:
        other = np.broadcast_to(np.asarray(other_arm_distance_um, dtype=float), d.shape)
    d_other = np.where(np.isfinite(other), other, 0.0)  # 0: no other arm, no kernel

    def kernel(x: np.ndarray, dist: np.ndarray) -> np.ndarray:
        """The law ending at ``cutoff_um`` as :meth:`CrosstalkModel.coupling` applies it (an
        other arm beyond the cutoff sees nothing, in the fit as in use); unclipped, so the fit
        keeps its gradient."""
        law = x[0] * np.exp(-x[1] * dist / scale) + x[2] * dist / scale + x[3]
        return np.where((dist > 0) & (dist <= cutoff_um), law, 0.0)

    def residual(x: np.ndarray) -> np.ndarray:
        return kernel(x, d) - kernel(x, d_other) - k

    start = np.array([max(float(np.abs(k).max()), 1e-6) * np.e, 1.0, 0.0, 0.0])
    lower, upper = [0.0, 0.0, -np.inf, -np.inf], [np.inf, 50.0, np.inf, np.inf]
    fit = least_squares(
        residual,
        start,
        loss="soft_l1",
        f_scale=0.1 * max(float(np.ptp(k)), 1e-9),
        bounds=(lower, upper),
    )
    p1, p2, p3, p4 = fit.x
    return CrosstalkModel(
        p1=p1, p2_per_um=p2 / scale, p3_per_um=p3 / scale, p4=p4, cutoff_um=cutoff_um
    )


# ------------------------------------------------------------------------------------------------
# rings


def fit_ring_tuning(heater_power_mW: ArrayLike, resonance_nm: ArrayLike) -> RingTuning:
    """Fit ``lambda = lambda0 + slope P`` to resonance wavelengths (nm) measured at heater powers
    ``P`` (mW). Needs at least 3 points at two or more distinct powers."""
    p, lam = _paired("heater_power_mW", heater_power_mW, "resonance_nm", resonance_nm)
    if p.size < 3:
        raise FitError(f"fit_ring_tuning needs at least 3 points, got {p.size}")
    if np.ptp(p) == 0:
        raise FitError(
            f"heater_power_mW does not vary (all {float(p[0])!r} mW): slope undetermined"
        )
    slope, lam0, rms = _line_fit(p, lam)
    return RingTuning(lambda0_nm=lam0, slope_nm_per_mW=slope, rms_residual_nm=rms)
