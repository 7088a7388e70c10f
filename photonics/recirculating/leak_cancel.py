"""Leak cancellation: small trims of the cells' angles that make the leaks of a routed matching
interfere destructively at the other endpoints.

A routed matching sets every cell to bar or cross; two paths sharing a cell leak into each other
with the cell's extinction, and the leaks of many shared cells add at an endpoint with phases set
by the couplers' error signs, the links and the cells' common phases. A cell's one heater moves
its angle ``theta``: a trim of ``t`` rad adds a leak in quadrature with the cell's own (so no one
cell goes below its extinction) and shifts the common phase of the light through it by ``t``.
Trims of many cells together can cancel leaks at the endpoints that no cell's extinction allows
alone.

:class:`CellModel` is a chip as a model knows it (each cell's splitter errors and loss, the
integer wrap of its heater's phase, one link transmission); :func:`isolation_gradient` gives the
isolation objective and its gradient over every cell's angle from one forward and one adjoint
sparse solve; :func:`cancel_leaks` runs L-BFGS-B (scipy) on it. What the model does not know (the
signs of the couplers' errors, for instance) it gets wrong, so a cancelled matching is measured
on the chip before it is believed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.sparse.linalg import splu

from photonics.devices.mzi import MZIImperfections, imperfect_transfer
from photonics.errors import SettingsError
from photonics.recirculating.mesh_scattering import mesh_solver
from photonics.recirculating.routing import RouteResult
from photonics.recirculating.waveguide_mesh import WaveguideMesh

#: Largest trim of a cell's angle, rad: cos^2(0.15) keeps a path's cell within 0.1 dB of its
#: full transmission, so cancelling costs at most about that much loss a trimmed cell.
MAX_TRIM_RAD = 0.15
#: Softness of the worst-leak objective, 1/dB: the log-sum-exp of the leaks' ratios in dB at
#: this sharpness is within ln(count) / 1 dB of the worst one and smooth for L-BFGS.
SOFTMAX_PER_DB = 1.0
_H = 1e-6  # rad: the step of the cells' transfer derivative (central difference)


@dataclass(frozen=True, eq=False)
class CellModel:
    """A mesh chip as a model knows it: per cell (``(n_cells,)`` arrays) the couplers'
    splitting errors and the bar/cross loss (dB), and ``link``, the complex transmission of one
    link. A cell with its one heater on the top arm is ``e^{i theta} T(theta)`` (common phase
    half the heater's; 2 pi more of heater phase leaves it as it was). ``angle_error`` (rad,
    scalar or per cell): what a cell's angle really is beyond the one it is set to."""

    mesh: WaveguideMesh
    endpoints: tuple[int, ...]
    imperfections: MZIImperfections
    link: complex
    angle_error: np.ndarray | float = 0.0

    def cells(self, theta: np.ndarray) -> np.ndarray:
        """The cells' transfers (``(n_cells, 2, 2)``) set to angles ``theta`` (rad), the
        common phase included."""
        real = theta + self.angle_error
        common = np.exp(1j * real)[:, None, None]
        return imperfect_transfer(real, 0.0, self.imperfections) * common

    def transfer(self, theta: np.ndarray) -> np.ndarray:
        """Field transfer between the endpoints, ``M[out, in]``."""
        ends = np.asarray(self.endpoints)
        return mesh_solver(self.mesh).solve(self.cells(theta), self.link, ends, ends)


@dataclass(frozen=True)
class Circuits:
    """The light a matching's isolation is judged on (endpoint indices): each ``signal`` is a
    (out, in) routed circuit and each ``leak`` row a (out, other in) reaching the same output,
    with ``of[k]`` the signal it is judged against."""

    signal: np.ndarray  # (S, 2)
    leak: np.ndarray  # (L, 2)
    of: np.ndarray  # (L,)

    @classmethod
    def of_matching(cls, result: RouteResult, endpoints: Sequence[int]) -> Circuits:
        """Both directions of every routed path; leaks from every other lit endpoint (light a
        port sends and gets back is return loss, not isolation)."""
        index = {p: i for i, p in enumerate(endpoints)}
        lit = [index[p] for path in result.paths for p in path.ports]
        signal, leak, of = [], [], []
        for path in result.paths:
            a, b = (index[p] for p in path.ports)
            for src, dst in ((a, b), (b, a)):
                for x in lit:
                    if x not in (src, dst):
                        leak.append((dst, x))
                        of.append(len(signal))
                signal.append((dst, src))
        return cls(
            np.array(signal, np.int64).reshape(-1, 2),
            np.array(leak, np.int64).reshape(-1, 2),
            np.array(of, np.int64),
        )

    def ratios_db(self, P: np.ndarray) -> np.ndarray:
        """Each leak over its signal, dB (``P[out, in]`` powers)."""
        sig = P[self.signal[:, 0], self.signal[:, 1]][self.of]
        return 10 * np.log10(P[self.leak[:, 0], self.leak[:, 1]] / sig)

    def isolation_db(self, P: np.ndarray) -> float:
        """Worst isolation, dB: per output the strongest leak against its signal."""
        return float(-self.ratios_db(P).max()) if len(self.leak) else np.inf


@dataclass(frozen=True)
class Adjoint:
    """One state of a model solved forward and backward: ``S[out, in]`` between the endpoints,
    ``w`` (``(waves, out)``, ``A^T w = e_out``) and ``u`` (``(port-ends, in)``, the waves entering
    the cells' port-ends). With ``A b = f`` the mesh's waves (``A = I - g S_c P``), a cell's
    transfer entry ``V_j`` (out row ``R_j``, in port-end ``C_j``) moves ``S[o, i]`` by
    ``w[R_j, o] u[C_j, i] dV_j``."""

    S: np.ndarray
    w: np.ndarray
    u: np.ndarray

    @classmethod
    def solve(cls, model: CellModel, theta: np.ndarray) -> Adjoint:
        solver = mesh_solver(model.mesh)
        values = model.cells(theta).reshape(-1)
        ends = np.asarray(model.endpoints)
        N, g = solver.size, model.link
        data = np.empty(solver.nnz, complex)
        data[solver.diagonal] = 1
        data[solver.entries] = -(g * values[solver.entry_source])
        lu = splu(sp.csc_matrix((data, solver.indices, solver.indptr), shape=(N, N)))
        column = np.full(solver.n_ports, -1)
        column[ends] = np.arange(ends.size)
        fed = column[solver.fed_port] >= 0
        rhs = np.zeros((N, ends.size), complex)
        rhs[solver.fed_rows[fed], column[solver.fed_port[fed]]] = values[solver.fed_source[fed]]
        b = lu.solve(rhs)
        rows_out = solver.edge_ports[ends]
        unit = np.zeros((N, ends.size), complex)
        unit[rows_out, np.arange(ends.size)] = 1
        w = lu.solve(unit, trans="T")
        # a linked port-end gets its partner's wave, an endpoint's edge port-end the unit input
        u = np.zeros((N, ends.size), complex)
        linked = solver.partner >= 0
        u[linked] = g * b[solver.partner[linked]]
        u[solver.edge_ports[ends], np.arange(ends.size)] = 1
        return cls(b[rows_out], w, u)

    def weights(self, model: CellModel, lam: np.ndarray, dT: np.ndarray) -> np.ndarray:
        """``Re sum_{o,i} lam[o, i] dS[o, i] / dx_c`` for every cell ``c``, where ``dT``
        (``(n_cells, 2, 2)``) is each cell's transfer derivative by its own ``x_c``."""
        solver = mesh_solver(model.mesh)
        R, C = solver.cell_rows, solver.cell_cols
        per_entry = np.sum((self.w[R] @ lam) * self.u[C], axis=1)
        grad = np.real(per_entry * dT.reshape(-1)[solver.cell_source])
        return np.bincount(solver.cell_source // 4, grad, minlength=model.mesh.n_cells)

    def entries(self, model: CellModel, pairs: np.ndarray, dT: np.ndarray) -> np.ndarray:
        """``dS[o, i] / dx_c`` (complex, ``(len(pairs), n_cells)``) at the (out, in) ``pairs``
        for every cell's own ``x_c`` (``dT`` as in :meth:`weights`)."""
        solver = mesh_solver(model.mesh)
        R, C = solver.cell_rows, solver.cell_cols
        per = self.w[R][:, pairs[:, 0]] * self.u[C][:, pairs[:, 1]]  # (8 n, K)
        per = per * dT.reshape(-1)[solver.cell_source][:, None]
        out = np.zeros((model.mesh.n_cells, len(pairs)), complex)
        np.add.at(out, solver.cell_source // 4, per)
        return out.T


def angle_derivative(model: CellModel, theta: np.ndarray) -> np.ndarray:
    """Each cell's transfer derivative by its own angle, ``(n_cells, 2, 2)`` (central
    difference)."""
    return (model.cells(theta + _H) - model.cells(theta - _H)) / (2 * _H)


def isolation_gradient(
    model: CellModel, theta: np.ndarray, circuits: Circuits
) -> tuple[float, np.ndarray, np.ndarray]:
    """(objective, its gradient over every cell's angle (rad^-1), ``P[out, in]``) at ``theta``:
    the soft maximum (:data:`SOFTMAX_PER_DB`) of the leaks' ratios to their signals, dB, and
    its derivative from one forward and one adjoint solve (:class:`Adjoint`)."""
    adj = Adjoint.solve(model, theta)
    S = adj.S
    P = np.abs(S) ** 2
    r = circuits.ratios_db(P)
    top = r.max()
    soft = np.exp(SOFTMAX_PER_DB * (r - top))
    f = float(top + np.log(soft.sum()) / SOFTMAX_PER_DB)
    weight = soft / soft.sum()  # d f / d r
    dP = np.zeros_like(P)  # d f / d P[out, in]
    lk, sg = circuits.leak, circuits.signal[circuits.of]
    scale = 10 / np.log(10)
    np.add.at(dP, (lk[:, 0], lk[:, 1]), weight * scale / P[lk[:, 0], lk[:, 1]])
    np.add.at(dP, (sg[:, 0], sg[:, 1]), -weight * scale / P[sg[:, 0], sg[:, 1]])
    lam = 2 * dP * np.conj(S)  # d f = Re sum lam dS
    return f, adj.weights(model, lam, angle_derivative(model, theta)), P


@dataclass(frozen=True)
class Cancelled:
    """A matching's cancelling trims (rad, ``(n_cells,)``, added to its states' angles) and the
    model's worst isolation before and after, dB."""

    trims: np.ndarray
    model_before_db: float
    model_after_db: float
    iterations: int


def cancel_leaks(
    model: CellModel,
    result: RouteResult,
    cells: Sequence[int] | None = None,
    max_trim_rad: float = MAX_TRIM_RAD,
    max_iterations: int = 200,
    start: np.ndarray | None = None,
) -> Cancelled:
    """Trims of ``cells`` (default: every cell some path crosses) within ``max_trim_rad`` that
    maximise the model's worst isolation of the routed matching ``result`` (L-BFGS-B on the
    soft maximum of :func:`isolation_gradient`), searched from the trims ``start`` (rad,
    ``(n_cells,)``; default none); ``model_before_db`` is the model's isolation at ``start``."""
    if not 0 < max_trim_rad <= np.pi / 4:
        raise SettingsError(f"max_trim_rad must be in (0, pi/4], got {max_trim_rad!r}")
    if not result.ok:
        raise SettingsError("cannot cancel the leaks of a matching that did not route")
    circuits = Circuits.of_matching(result, model.endpoints)
    n = model.mesh.n_cells
    start = np.zeros(n) if start is None else np.asarray(start, dtype=float)
    if start.shape != (n,) or np.any(np.abs(start) > max_trim_rad):
        raise SettingsError(f"start must be ({n},) trims within +-{max_trim_rad} rad")
    theta0 = result.theta()
    if cells is None:
        cells = sorted({c for path in result.paths for c in path.cells})
    knobs = np.asarray(cells, dtype=np.int64)
    if not len(circuits.leak) or not knobs.size:
        iso = circuits.isolation_db(np.abs(model.transfer(theta0 + start)) ** 2)
        return Cancelled(start.copy(), iso, iso, 0)

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        theta = theta0.copy()
        theta[knobs] += x
        f, grad, _ = isolation_gradient(model, theta, circuits)
        return f, grad[knobs]

    before = circuits.isolation_db(np.abs(model.transfer(theta0 + start)) ** 2)
    found = minimize(
        objective,
        start[knobs],
        jac=True,
        method="L-BFGS-B",
        bounds=[(-max_trim_rad, max_trim_rad)] * knobs.size,
        options={"maxiter": max_iterations},
    )
    trims = start.copy()
    trims[knobs] = found.x
    after = circuits.isolation_db(np.abs(model.transfer(theta0 + trims)) ** 2)
    if after < before:  # the soft maximum may trade the worst leak away: keep the start
        trims, after = start.copy(), before
    return Cancelled(trims, before, after, int(found.nit))


__all__ = [
    "MAX_TRIM_RAD",
    "SOFTMAX_PER_DB",
    "Adjoint",
    "Cancelled",
    "CellModel",
    "Circuits",
    "angle_derivative",
    "cancel_leaks",
    "isolation_gradient",
]
