"""The leaks of a routed matching, learned from dithered photodiode readings: a chip model good
enough to cancel them (:mod:`photonics.recirculating.leak_cancel`).

A calibration measures each cell's extinction per state, a magnitude. Cancelling leaks needs
their phases too: the sign of each shared cell's coupler error (which sets its leak's sign) and
what is left of each cell's angle error after calibration (a small angle error leaks in
quadrature). Both enter the light at the endpoints linearly, to first order: with ``L_k`` the
field of a leak ``k`` (out, in) and ``J_kc`` its derivative by cell ``c``'s angle (known from the
model, whatever the signs), dithering cell ``c`` by ``+-d`` moves its power by
``4 d Re(conj(L_k) J_kc)``. ``L_k`` is the model's field plus ``sum_c G_kc x_c + J_kc y_c``,
``x_c`` the change of shared cell ``c``'s leak amplitude and ``y_c`` its angle error, so every
dither's readings are linear equations in ``x`` and ``y``: one least-squares solve, repeated
about the fitted model (Gauss-Newton).

A reading is one endpoint lit and every photodiode read; one setting of the cells takes one
reading per endpoint of the matching.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from photonics.devices.mzi import MZIImperfections
from photonics.errors import SettingsError
from photonics.recirculating.leak_cancel import (
    MAX_TRIM_RAD,
    Adjoint,
    CellModel,
    Circuits,
    angle_derivative,
    cancel_leaks,
)
from photonics.recirculating.routing import RouteResult
from photonics.recirculating.waveguide_mesh import BAR, WaveguideMesh

#: Dither of a shared cell's angle, rad: its quadrature leak (about the dither) is then as
#: strong as a 30 dB cell's own, well above the photodiodes' noise, and small enough for the
#: first-order model.
DITHER_RAD = 0.03
#: Prior size of a cell's angle error left after calibration, rad.
ANGLE_PRIOR_RAD = 0.02
#: A dither reaches a leak when its derivative there is above this fraction of the largest.
REACH = 1e-3
#: Gauss-Newton rounds of the fit.
FIT_ROUNDS = 3
#: Rounds of fit, cancel and measure per matching.
CANCEL_LOOPS = 2
_H = 1e-6

#: ``measure(theta)``: the powers ``P[out, in]`` (per unit launched) between the endpoints with
#: the cells set to ``theta`` (rad), every endpoint lit in turn.
Measure = Callable[[np.ndarray], np.ndarray]


def chip_model(
    mesh: WaveguideMesh,
    endpoints: Sequence[int],
    extinction_db: np.ndarray,
    loss_db: float,
    link: complex,
) -> CellModel:
    """A model of a calibrated chip: each cell's couplers from its per-state extinction
    (``(2, n_cells)`` dB [bar, cross], NaN for none: ideal), both errors' signs positive (the
    calibration does not know them), every cell losing ``loss_db``."""
    ext = np.asarray(extinction_db, dtype=float)
    if ext.shape != (2, mesh.n_cells):
        raise SettingsError(f"extinction_db must be (2, {mesh.n_cells}), got {ext.shape}")
    bar, cross = (
        np.where(np.isfinite(e), 10 ** (-np.nan_to_num(e, nan=np.inf) / 20), 0.0) for e in ext
    )
    # to first order a bar cell leaks e_out - e_in, a cross cell e_in + e_out
    imp = MZIImperfections((cross - bar) / 2, (cross + bar) / 2, loss_db, loss_db)
    return CellModel(mesh, tuple(endpoints), imp, link, np.zeros(mesh.n_cells))


@dataclass(frozen=True)
class LeakFit:
    """A model fitted to a matching's dithered readings, the readings taken, and the rms misfit
    of the dithers' power changes before and after (per unit launched)."""

    model: CellModel
    readings: int
    misfit_before: float
    misfit_after: float


def shared_cells(result: RouteResult) -> np.ndarray:
    """The cells two paths of ``result`` cross (the ones that leak between paths)."""
    count = Counter(c for path in result.paths for c in set(path.cells))
    return np.array(sorted(c for c, k in count.items() if k > 1), dtype=np.int64)


def _leak_direction(model: CellModel, result: RouteResult, cells: np.ndarray) -> np.ndarray:
    """(e_in, e_out) change per unit of leak amplitude of each cell in its state, (2, n)."""
    d = np.zeros((2, model.mesh.n_cells))
    bar = result.states[cells] == BAR
    d[0, cells] = np.where(bar, -0.5, 0.5)
    d[1, cells] = 0.5
    return d


def _with_errors(model: CellModel, e_in: np.ndarray, e_out: np.ndarray) -> CellModel:
    imp = model.imperfections
    return replace(
        model, imperfections=replace(imp, splitter_error_in=e_in, splitter_error_out=e_out)
    )


def fit_leaks(
    model: CellModel,
    result: RouteResult,
    measure: Measure,
    noise: float,
    dither_rad: float = DITHER_RAD,
    rounds: int = FIT_ROUNDS,
    trims: np.ndarray | float = 0.0,
) -> LeakFit:
    """``model`` with the leak amplitudes and angle errors of ``result``'s shared cells fitted
    to the readings of each shared cell dithered by ``+-dither_rad`` about ``result``'s states
    plus ``trims`` (rad; see the module docstring). ``noise``: a reading's noise, per unit
    launched."""
    if not 0 < dither_rad <= 0.2:
        raise SettingsError(f"dither_rad must be in (0, 0.2] rad, got {dither_rad!r}")
    cells = shared_cells(result)
    circuits = Circuits.of_matching(result, model.endpoints)
    pairs = circuits.leak
    theta = result.theta() + trims
    n_ends = len({p for path in result.paths for p in path.ports})
    if not cells.size or not len(pairs):
        return LeakFit(model, 0, 0.0, 0.0)
    measured = np.empty((cells.size, len(pairs)))
    level = measure(theta)[pairs[:, 0], pairs[:, 1]]  # the leaks' powers, not dithered
    for i, c in enumerate(cells):
        up, down = theta.copy(), theta.copy()
        up[c] += dither_rad
        down[c] -= dither_rad
        measured[i] = (
            measure(up)[pairs[:, 0], pairs[:, 1]] - measure(down)[pairs[:, 0], pairs[:, 1]]
        )
    readings = (2 * cells.size + 1) * n_ends
    direction = _leak_direction(model, result, cells)
    n = model.mesh.n_cells
    imp = model.imperfections
    e_in = np.array(np.broadcast_to(imp.splitter_error_in, (n,)), dtype=float)
    e_out = np.array(np.broadcast_to(imp.splitter_error_out, (n,)), dtype=float)
    # each shared cell's leak in its state: its magnitude from the extinction, sign unknown, so
    # start from none (the fit is linear about the start) with the magnitude as the prior
    bar = result.states[cells] == BAR
    leak = np.where(bar, e_out[cells] - e_in[cells], e_in[cells] + e_out[cells])
    magnitude = np.maximum(np.abs(leak), 1e-4)
    e_in[cells] -= leak * direction[0, cells]
    e_out[cells] -= leak * direction[1, cells]
    model = _with_errors(model, e_in, e_out)
    current = np.zeros(cells.size)  # the fitted leaks
    sigma = np.sqrt(2) * noise  # a dither's power change: two readings' noise
    prior = np.concatenate([sigma / magnitude, np.full(cells.size, sigma / ANGLE_PRIOR_RAD)])
    misfits = []
    for round_ in range(rounds):
        adj = Adjoint.solve(model, theta)
        J = adj.entries(model, pairs, angle_derivative(model, theta))[:, cells]  # (K, C)
        plus = _with_errors(model, e_in + _H * direction[0], e_out + _H * direction[1])
        minus = _with_errors(model, e_in - _H * direction[0], e_out - _H * direction[1])
        G = adj.entries(model, pairs, (plus.cells(theta) - minus.cells(theta)) / (2 * _H))
        G = G[:, cells]
        L = adj.S[pairs[:, 0], pairs[:, 1]]
        # a dither's predicted power change, 4 d Re(conj(L_k + G x + J y) J_kc), and its
        # derivatives by x_c' (G_kc') and y_c' (J_kc'), at the (leak, dither) pairs reached
        k, c = _reached(J)
        miss = _miss(measured, L, J, k, c, dither_rad)
        misfits.append(float(np.sqrt(np.mean(miss**2))))
        A = np.real(np.conj(np.hstack([G[k], J[k]])) * (4 * dither_rad * J[k, c])[:, None])
        if round_:  # about the dithers' fit: |L|^2 is quadratic, useless about L = 0
            A = np.vstack([A, np.sqrt(2) * 2 * np.real(np.conj(L)[:, None] * np.hstack([G, J]))])
            miss = np.concatenate([miss, np.sqrt(2) * (level - np.abs(L) ** 2)])
        # ridge toward the prior (leaks of the extinction's size, small angle errors), in
        # units of the readings' noise
        target = np.concatenate([-current * prior[: cells.size], np.zeros(cells.size)])
        A = np.vstack([A, np.diag(prior)])
        step = np.linalg.lstsq(A, np.concatenate([miss, target]), rcond=None)[0]
        # a trust region: no leak beyond twice its extinction's, no angle beyond 0.05 rad
        x = np.clip(step[: cells.size], -2 * magnitude, 2 * magnitude)
        y = np.clip(step[cells.size :], -0.05, 0.05)
        current = current + x
        e_in = e_in + direction[0] * _scatter(x, cells, n)
        e_out = e_out + direction[1] * _scatter(x, cells, n)
        model = replace(
            _with_errors(model, e_in, e_out), angle_error=model.angle_error + _scatter(y, cells, n)
        )
    adj = Adjoint.solve(model, theta)
    J = adj.entries(model, pairs, angle_derivative(model, theta))[:, cells]
    miss = _miss(measured, adj.S[pairs[:, 0], pairs[:, 1]], J, *_reached(J), dither_rad)
    misfits.append(float(np.sqrt(np.mean(miss**2))))
    return LeakFit(model, readings, misfits[0], misfits[-1])


def _reached(J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (leak, dither) pairs a dither reaches (its derivative there above :data:`REACH` of
    the largest): the others say nothing of the leak."""
    return np.nonzero(np.abs(J) > REACH * np.abs(J).max())


def _miss(
    measured: np.ndarray, L: np.ndarray, J: np.ndarray, k: np.ndarray, c: np.ndarray, d: float
) -> np.ndarray:
    """Measured less predicted power change of leak ``k`` dithered by ``+-d`` at cell ``c``:
    ``4 d Re(conj(L_k) J_kc)``."""
    return measured[c, k] - 4 * d * np.real(np.conj(L[k]) * J[k, c])


def _scatter(values: np.ndarray, cells: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n)
    out[cells] = values
    return out


@dataclass(frozen=True)
class Cancellation:
    """Leak cancellation of one matching checked on the chip: the trims kept (rad, per cell;
    zero when nothing measured better than the plain states), the worst isolation measured
    without and with them and the model's prediction with them (dB), and the readings taken."""

    trims: np.ndarray
    before_db: float
    after_db: float
    model_db: float
    readings: int

    @property
    def gain_db(self) -> float:
        return self.after_db - self.before_db


def cancel_measured(
    model: CellModel,
    result: RouteResult,
    measure: Measure,
    noise: float,
    loops: int = CANCEL_LOOPS,
    max_trim_rad: float = MAX_TRIM_RAD,
) -> Cancellation:
    """Cancel ``result``'s leaks on the chip ``measure`` reads: fit the model to dithered
    readings (:func:`fit_leaks`), cancel on it (:func:`~photonics.recirculating.leak_cancel.
    cancel_leaks`), measure; again about the best trims measured, ``loops`` times. What a
    matching keeps is what measured best, so cancelling never leaves it worse."""
    circuits = Circuits.of_matching(result, model.endpoints)
    theta = result.theta()
    n_ends = 2 * len(result.paths)

    def isolation(trims: np.ndarray) -> float:
        return circuits.isolation_db(np.maximum(measure(theta + trims), noise))

    trims = np.zeros(model.mesh.n_cells)
    before = best = isolation(trims)
    model_db, readings = before, n_ends
    for _ in range(loops):
        fit = fit_leaks(model, result, measure, noise, trims=trims)
        # only the cells whose dithers the fit read: the model knows what their trims do
        found = cancel_leaks(
            fit.model, result, shared_cells(result), max_trim_rad=max_trim_rad, start=trims
        )
        got = isolation(found.trims)
        readings += fit.readings + n_ends
        if got <= best:
            break
        trims, best, model_db = found.trims, got, found.model_after_db
    return Cancellation(trims, before, best, model_db, readings)
