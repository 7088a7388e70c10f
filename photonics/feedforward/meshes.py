"""Feed-forward MZI meshes: Clements (rectangular) and Reck (triangular).

A mesh of ``n`` modes holds ``n (n - 1) / 2`` MZIs, each on a pair of adjacent modes
``(mode, mode + 1)`` in a column; light crosses the columns in order and then an output phase
screen. Its transfer matrix is ``diag(e^{i output_phase}) @ T_{K-1} @ ... @ T_0`` with the MZIs
in *slot order*: sorted by column, then by mode. The geometry (``columns``, ``modes``) is data,
so layouts can be checked against it.

Settings are :class:`MeshSettings` (rad), with any leading batch axes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import least_squares

from photonics.devices.mzi import MZIImperfections, imperfect_transfer, theta_for_coupling, transfer
from photonics.errors import NotUnitaryError, SettingsError, ShapeError
from photonics.feedforward import _kernels
from photonics.matching import Matching, Permutation

#: Default tolerance of the unitarity check, max |U U^dagger - I|.
UNITARY_ATOL = 1e-10
#: Largest mesh that :meth:`FeedForwardMesh.program` refines by least squares by default.
REFINE_MAX_MODES = 16


@dataclass(frozen=True, eq=False)
class MeshSettings:
    """Phases of a feed-forward mesh, rad; leading axes (if any) are a batch.

    - ``theta``, ``phi``: shape ``(..., n_mzis)``, per MZI in slot order;
    - ``output_phase``: shape ``(..., n)``, the phase screen after the last column;
    - ``common_phase``: optional, like ``theta``: the mean phase of each MZI's two arms. It is a
      global phase of that MZI (so ``T`` leaves it out), which still shifts its light against
      light that bypasses it; a heater on one arm sets ``2 theta`` and this together.
    """

    theta: np.ndarray
    phi: np.ndarray
    output_phase: np.ndarray
    common_phase: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.common_phase is not None and np.shape(self.common_phase) != np.shape(self.theta):
            raise ShapeError(
                f"common_phase {np.shape(self.common_phase)} and theta "
                f"{np.shape(self.theta)} differ in shape"
            )
        names = ("theta", "phi", "output_phase") + ("common_phase",) * (
            self.common_phase is not None
        )
        for name in names:
            arr = np.array(getattr(self, name), dtype=float)
            if arr.ndim < 1 or not np.all(np.isfinite(arr)):
                raise SettingsError(f"{name} must be a finite array of phases (rad)")
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if self.theta.shape != self.phi.shape:
            raise ShapeError(f"theta {self.theta.shape} and phi {self.phi.shape} differ in shape")
        if self.theta.shape[:-1] != self.output_phase.shape[:-1]:
            raise ShapeError(
                f"batch shapes differ: theta {self.theta.shape}, "
                f"output_phase {self.output_phase.shape}"
            )

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.theta.shape[:-1]

    def to_vector(self) -> np.ndarray:
        """All phases in one array ``(..., 2 n_mzis + n)``: theta, phi, output_phase."""
        return np.concatenate([self.theta, self.phi, self.output_phase], axis=-1)

    @classmethod
    def from_vector(cls, x: np.ndarray, n_mzis: int) -> MeshSettings:
        x = np.asarray(x, dtype=float)
        return cls(x[..., :n_mzis], x[..., n_mzis : 2 * n_mzis], x[..., 2 * n_mzis :])


def fidelity(target: ArrayLike, actual: ArrayLike) -> np.ndarray:
    """``|Tr(U^dagger M)|^2 / (n Tr(M^dagger M))`` in [0, 1]: 1 iff ``M`` is ``U`` times a scalar.

    Insensitive to a global phase and to uniform loss; batched over leading axes of ``actual``.
    """
    U = np.asarray(target)
    M = np.asarray(actual)
    overlap = np.einsum("ij,...ij->...", U.conj(), M)
    norm = np.einsum("...ij,...ij->...", M.conj(), M).real
    # Cauchy-Schwarz bounds it by 1; rounding may not (1 - F was -4e-16 for a perfect program)
    return np.minimum(np.abs(overlap) ** 2 / (U.shape[-1] * norm), 1.0)


@dataclass(frozen=True)
class ProgramResult:
    """Outcome of imperfection-aware programming (fidelities as defined by :func:`fidelity`)."""

    settings: MeshSettings
    fidelity: float
    naive_settings: MeshSettings
    naive_fidelity: float


@dataclass(frozen=True)
class FeedForwardMesh:
    """What the feed-forward meshes share; use :class:`ClementsMesh` or :class:`ReckMesh`."""

    n: int
    kind: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int | np.integer) or self.n < 2:
            raise ShapeError(f"a mesh needs n >= 2 modes, got n={self.n!r}")

    # ---- geometry -------------------------------------------------------------------------
    @staticmethod
    def _sites(n: int) -> tuple[np.ndarray, np.ndarray]:
        """(column, top mode) of every MZI, in slot order."""
        raise NotImplementedError

    @cached_property
    def _geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _geometry(type(self), int(self.n))

    @property
    def n_mzis(self) -> int:
        return self.n * (self.n - 1) // 2

    @property
    def columns(self) -> np.ndarray:
        """Column of each MZI, shape (n_mzis,), in slot order."""
        return self._geometry[0]

    @property
    def modes(self) -> np.ndarray:
        """Top mode of each MZI (it acts on ``mode`` and ``mode + 1``), shape (n_mzis,)."""
        return self._geometry[1]

    @property
    def n_columns(self) -> int:
        return int(self.columns[-1]) + 1

    # ---- forward --------------------------------------------------------------------------
    def _check_settings(self, settings: MeshSettings) -> None:
        if not isinstance(settings, MeshSettings):
            raise SettingsError(f"expected MeshSettings, got {type(settings).__name__}")
        if settings.theta.shape[-1] != self.n_mzis or settings.output_phase.shape[-1] != self.n:
            raise ShapeError(
                f"{self.kind} mesh of n={self.n} needs {self.n_mzis} MZI phases and {self.n} "
                f"output phases, got {settings.theta.shape[-1]} and "
                f"{settings.output_phase.shape[-1]}"
            )

    def transfer(
        self, settings: MeshSettings, imperfections: MZIImperfections | None = None
    ) -> np.ndarray:
        """Transfer matrix, shape ``batch_shape + (n, n)``; ideal when ``imperfections`` is None.

        Row = output mode, column = input mode (``out = M @ in``, field amplitudes).
        """
        self._check_settings(settings)
        if imperfections is None:
            mats = transfer(settings.theta, settings.phi)
        else:
            imperfections.check_count(self.n_mzis)
            mats = imperfect_transfer(settings.theta, settings.phi, imperfections)
        if settings.common_phase is not None:
            mats = mats * np.exp(1j * settings.common_phase)[..., None, None]
        batch = settings.batch_shape
        flat = np.ascontiguousarray(mats.reshape((-1, self.n_mzis, 2, 2)))
        M = _kernels.apply_mzis(flat, self.modes, self.n).reshape((*batch, self.n, self.n))
        return M * np.exp(1j * settings.output_phase)[..., :, None]

    def random_settings(
        self, rng: np.random.Generator, batch_shape: tuple[int, ...] = ()
    ) -> MeshSettings:
        """Uniformly random phases: theta in [0, pi/2], phi and output phases in [0, 2 pi)."""
        return MeshSettings(
            rng.uniform(0, np.pi / 2, (*batch_shape, self.n_mzis)),
            rng.uniform(0, 2 * np.pi, (*batch_shape, self.n_mzis)),
            rng.uniform(0, 2 * np.pi, (*batch_shape, self.n)),
        )

    # ---- synthesis ------------------------------------------------------------------------
    def _decompose_kernel(self, U: np.ndarray, slot: np.ndarray):
        raise NotImplementedError

    def decompose(self, unitary: ArrayLike, atol: float = UNITARY_ATOL) -> MeshSettings:
        """Settings whose ideal transfer matrix is ``unitary`` (to rounding error).

        Refuses, with :class:`NotUnitaryError`, a matrix with ``max |U U^dagger - I| > atol``.
        Returned theta is in [0, pi/2], phi and output phases in [0, 2 pi) (rad).
        """
        U = np.array(unitary, dtype=np.complex128, order="C")
        if U.shape != (self.n, self.n):
            raise ShapeError(f"expected a {self.n}x{self.n} matrix, got shape {U.shape}")
        if not np.all(np.isfinite(U)):
            raise NotUnitaryError("the matrix has non-finite entries")
        err = float(np.abs(U @ U.conj().T - np.eye(self.n)).max())
        if err > atol:
            raise NotUnitaryError(
                f"matrix is not unitary: max |U U^dagger - I| = {err:.3g} exceeds the "
                f"tolerance atol={atol:g}"
            )
        theta, phi, out = self._decompose_kernel(U, self._geometry[2])
        return MeshSettings(theta, np.mod(phi, 2 * np.pi), np.mod(out, 2 * np.pi))

    def route(self, request: Permutation | Matching) -> MeshSettings:
        """Bar/cross settings realising a (partial) permutation exactly, with no decomposition.

        The mesh is used as a sorting network (odd-even transposition for Clements, bubble sort
        for Reck) on the inputs' destinations; O(n^2). A Matching is routed as its involution.
        Unused inputs are sent to unused outputs. The transfer matrix is the permutation matrix
        of the completed permutation (``M[out, in] = 1``, output phases included) to within the
        rounding of ``cos(pi/2)``, about 1e-16.
        """
        if isinstance(request, Matching):
            request = request.to_permutation()
        if not isinstance(request, Permutation):
            raise SettingsError(f"expected a Permutation or Matching, got {request!r}")
        if request.n_ports != self.n:
            raise ShapeError(f"request has {request.n_ports} ports, the mesh has {self.n} modes")
        labels = np.array(request.completed().targets, dtype=np.int64)
        cross, sign = _kernels.route_labels(labels, self.modes)
        return MeshSettings(
            np.where(cross, np.pi / 2, 0.0),
            np.zeros(self.n_mzis),
            np.where(sign < 0, np.pi, 0.0),
        )

    def correct_locally(
        self, settings: MeshSettings, imperfections: MZIImperfections
    ) -> MeshSettings:
        """Settings for the imperfect mesh that reproduce ``settings``' ideal mesh MZI by MZI.

        Each real MZI is set to the ideal one's cross power (:func:`theta_for_coupling`) and its
        input phase ``phi`` is chosen so that it equals the ideal 2x2 up to phases on its two
        outputs; those phase errors travel with the light into the next MZIs' ``phi`` and finally
        into the output phase screen (the local correction of Bandyopadhyay et al., Optica 8,
        1247 (2021)). Exact unless an MZI needs a state its extinction cannot reach. O(n^2).
        """
        self._check_settings(settings)
        if settings.batch_shape:
            raise ShapeError("correct_locally takes one setting, not a batch")
        imperfections.check_count(self.n_mzis)
        lossless = MZIImperfections(
            imperfections.splitter_error_in, imperfections.splitter_error_out
        )
        new_theta = theta_for_coupling(np.sin(settings.theta) ** 2, lossless)
        V = imperfect_transfer(new_theta, 0.0, lossless)
        T = transfer(settings.theta, settings.phi)
        new_phi = np.empty(self.n_mzis)
        err = np.zeros(self.n)  # phase each mode carries relative to the ideal mesh, rad
        bounds = np.searchsorted(self.columns, np.arange(self.n_columns + 1))
        for lo, hi in itertools.pairwise(bounds):
            top = self.modes[lo:hi]
            X = T[lo:hi] * np.exp(-1j * np.stack([err[top], err[top + 1]], -1))[:, None, :]
            v = V[lo:hi]
            # V diag(e^{i phi}, 1) = diag(e^{i q}) X in the least-squares sense, row by row
            loop = np.einsum(
                "kr,kr->k", X[:, :, 0] * X[:, :, 1].conj(), v[:, :, 0].conj() * v[:, :, 1]
            )
            e = np.exp(1j * np.angle(loop))
            q = np.angle(
                v[:, :, 0] * e[:, None] * X[:, :, 0].conj() + v[:, :, 1] * X[:, :, 1].conj()
            )
            new_phi[lo:hi] = np.angle(e)
            err[top], err[top + 1] = q[:, 0], q[:, 1]
        return MeshSettings(
            new_theta, np.mod(new_phi, 2 * np.pi), np.mod(settings.output_phase - err, 2 * np.pi)
        )

    def program(
        self,
        unitary: ArrayLike,
        imperfections: MZIImperfections,
        max_evaluations: int | None = None,
    ) -> ProgramResult:
        """Imperfection-aware programming: settings maximising fidelity on the imperfect mesh.

        From the ideal decomposition (the naive settings): :meth:`correct_locally`, then a
        Levenberg-Marquardt refinement of all phases on the residual ``M / |M| - (overlap) U``,
        whose squared norm is ``n (1 - fidelity)``, for at most ``max_evaluations`` steps (0 skips
        it). The Jacobian is one batched transfer call, so a step costs O(n^6): by default the
        refinement runs (20 steps, about 1 s at n = 16) only up to ``REFINE_MAX_MODES`` modes.
        """
        if max_evaluations is None:
            max_evaluations = 20 if self.n <= REFINE_MAX_MODES else 0
        if max_evaluations < 0:
            raise SettingsError(f"max_evaluations must be >= 0, got {max_evaluations}")
        U = np.asarray(unitary, dtype=complex)
        naive = self.decompose(U)
        x0 = self.correct_locally(naive, imperfections).to_vector()
        n_mzis = self.n_mzis

        def residual(X: np.ndarray) -> np.ndarray:
            M = self.transfer(MeshSettings.from_vector(X, n_mzis), imperfections)
            M *= np.sqrt(self.n / np.einsum("...ij,...ij->...", M.conj(), M).real)[..., None, None]
            r = M - (np.einsum("ij,...ij->...", U.conj(), M) / self.n)[..., None, None] * U
            return np.concatenate([r.real, r.imag], axis=-1).reshape((*X.shape[:-1], -1))

        def jacobian(x: np.ndarray, step: float = 1e-7) -> np.ndarray:
            return (residual(x + step * np.eye(x.size)) - residual(x)).T / step

        if max_evaluations > 0:
            x0 = least_squares(residual, x0, jac=jacobian, method="lm", max_nfev=max_evaluations).x
        both = MeshSettings.from_vector(np.stack([naive.to_vector(), x0]), n_mzis)
        fids = fidelity(U, self.transfer(both, imperfections))
        best = MeshSettings.from_vector(x0, n_mzis)
        return ProgramResult(best, float(fids[1]), naive, float(fids[0]))


@lru_cache(maxsize=32)
def _geometry(cls: type[FeedForwardMesh], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cols, modes = cls._sites(n)
    order = np.lexsort((modes, cols))
    cols, modes = cols[order].astype(np.int64), modes[order].astype(np.int64)
    slot = np.full((int(cols.max()) + 1, n), -1, dtype=np.int64)
    slot[cols, modes] = np.arange(cols.size)
    for arr in (cols, modes, slot):
        arr.setflags(write=False)
    return cols, modes, slot


@dataclass(frozen=True)
class ClementsMesh(FeedForwardMesh):
    """Rectangular mesh (Clements et al., Optica 3, 1460 (2016)): ``n`` columns, column ``c``
    holding the MZIs on pairs ``(m, m+1)`` with ``m = c mod 2, c mod 2 + 2, ...``.
    A path crosses at most ``n`` MZIs (fewer along the edge modes), against ``2n - 3`` in Reck."""

    kind: ClassVar[str] = "clements"

    @staticmethod
    def _sites(n: int) -> tuple[np.ndarray, np.ndarray]:
        c, m = np.meshgrid(np.arange(n), np.arange(n - 1), indexing="ij")
        keep = (m % 2) == (c % 2)
        return c[keep], m[keep]

    def _decompose_kernel(self, U: np.ndarray, slot: np.ndarray):
        return _kernels.clements_decompose(U, slot)


@dataclass(frozen=True)
class ReckMesh(FeedForwardMesh):
    """Triangular mesh (Reck et al., PRL 73, 58 (1994)): ``2n - 3`` columns; MZI ``j`` of
    diagonal ``p`` (``j = 0 .. n-2-p``) acts on modes ``(j, j+1)`` at column ``j + 2p``."""

    kind: ClassVar[str] = "reck"

    @staticmethod
    def _sites(n: int) -> tuple[np.ndarray, np.ndarray]:
        p, j = np.meshgrid(np.arange(n - 1), np.arange(n - 1), indexing="ij")
        keep = j <= n - 2 - p
        return (j + 2 * p)[keep], j[keep]

    def _decompose_kernel(self, U: np.ndarray, slot: np.ndarray):
        return _kernels.reck_decompose(U, slot)
