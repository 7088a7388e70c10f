"""The 2x2 Mach-Zehnder element: the one MZI convention of the project.

Convention (Clements et al., Optica 3, 1460 (2016), Eq. 1)::

    T(theta, phi) = [[e^{i phi} cos(theta), -sin(theta)],
                     [e^{i phi} sin(theta),  cos(theta)]]

acting on the column vector (top mode, bottom mode). Bar is ``theta = 0``, cross is
``theta = pi/2``; the coupling ``k = sin^2(theta)`` is the cross-port *power* fraction;
``phi`` (rad) is the external phase shifter on the top input.

Physically the element is an input phase shifter, a directional coupler, two arms and a
second coupler::

    T = a(theta) * P_out @ C(k2) @ diag(e^{i a_top}, -e^{i a_bot}) @ C(k1) @ diag(e^{i phi}, 1)

with ``C(k) = [[sqrt(1-k), i sqrt(k)], [i sqrt(k), sqrt(1-k)]]``, ``P_out = diag(1, -1)`` and
arm phases ``a_top = sigma + theta``, ``a_bot = sigma - theta``: the internal phase difference
between the arms is ``2 theta`` and their common phase ``sigma`` is a global phase, dropped
here. The fixed ``pi`` that a balanced MZI of symmetric couplers needs for bar, and the
fixed output phase ``P_out``, are part of the element's waveguides (as a fabrication bias
would be). With ideal 50:50 couplers (``k1 = k2 = 1/2``) and no loss this is exactly ``T``.

Conversions between (theta, phi), the arm phases and the coupling live here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import ArrayLike

from photonics._checks import finite
from photonics.errors import SettingsError, ShapeError

#: Typical unit-cell insertion loss, dB (0.46-0.55 dB, Perez-Lopez et al., Nat. Commun. 15, 1563).
DEFAULT_LOSS_DB = 0.5
#: Standard deviation of each coupler's power splitting error. Two couplers off by this much
#: give a bar-port extinction of about 35 dB, the typical unit-cell figure of the same source.
#: Drawn as Gaussians (:meth:`MZIImperfections.sample`), the cells' extinction then has a median
#: of 37.5 dB and 9 % of the cells below the published lowest 32 dB (see
#: :meth:`MZIImperfections.sample_extinction` for cells within the published range).
DEFAULT_SPLITTER_SIGMA = 0.009
#: Published unit-cell extinction ratio, dB, as (lowest, typical, highest) over a chip's cells
#: (32-44 dB, typ. 35: Perez-Lopez et al., Nat. Commun. 15, 1563 (2024); docs/physics.md).
PUBLISHED_EXTINCTION_DB = (32.0, 35.0, 44.0)


def transfer(theta: ArrayLike, phi: ArrayLike) -> np.ndarray:
    """Ideal transfer matrices ``T(theta, phi)``, shape ``broadcast(theta, phi).shape + (2, 2)``.

    ``theta`` and ``phi`` in rad.
    """
    th = finite("theta", theta)
    ph = finite("phi", phi)
    th, ph = np.broadcast_arrays(th, ph)
    e = np.exp(1j * ph)
    c, s = np.cos(th), np.sin(th)
    return np.stack([np.stack([e * c, -s + 0j], -1), np.stack([e * s, c + 0j], -1)], -2)


def coupling(theta: ArrayLike) -> np.ndarray:
    """Cross-port power fraction ``k = sin^2(theta)`` (dimensionless, 0 = bar, 1 = cross)."""
    return np.sin(finite("theta", theta)) ** 2


def theta_from_coupling(k: ArrayLike) -> np.ndarray:
    """The ``theta`` in [0, pi/2] rad whose cross-port power fraction is ``k`` in [0, 1]."""
    k_arr = finite("k", k)
    if np.any((k_arr < 0) | (k_arr > 1)):
        raise SettingsError(f"coupling k must be in [0, 1], got {k!r}")
    return np.arcsin(np.sqrt(k_arr))


def arm_phases(theta: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Heater-friendly arm phases (top, bottom), rad, both >= 0, realising ``theta``.

    The whole difference ``2 theta`` (wrapped to [0, 2 pi)) goes on the top arm and the bottom
    arm is left at 0, since a thermo-optic heater can only add phase.
    """
    diff = np.mod(2 * finite("theta", theta), 2 * np.pi)
    return diff, np.zeros_like(diff)


def from_arm_phases(top: ArrayLike, bottom: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(theta, sigma)``, rad, of arm phases ``top`` and ``bottom`` (rad): the half difference
    ``theta = (top - bottom) / 2`` and the common phase ``sigma = (top + bottom) / 2``.

    Not wrapped: the element is ``e^{i sigma} T(theta)``, which is periodic in 2 pi of either
    arm phase only with both halves together (2 pi more on one arm turns ``theta`` and
    ``sigma`` by pi each, and ``T(theta + pi) = -T(theta)``). Where light meets only one
    element, or every element once, the common phase is a global phase and may be dropped.
    """
    t, b = finite("top", top), finite("bottom", bottom)
    return (t - b) / 2, (t + b) / 2


@dataclass(frozen=True, eq=False)
class MZIImperfections:
    """Fabrication imperfections of a set of MZIs, each field a scalar or one value per MZI.

    - ``splitter_error_in`` / ``splitter_error_out``: deviation of the input / output coupler's
      cross power fraction from 1/2 (so ``k = 0.5 + error``), in [-0.5, 0.5].
    - ``loss_bar_db`` / ``loss_cross_db``: insertion loss, dB (>= 0), in the bar and cross
      states; partial states interpolate linearly in the coupling ``k``.

    Unequal couplers leave light in the unwanted port: finite extinction follows from the
    splitter errors (see :func:`extinction_ratio_db`).
    """

    splitter_error_in: ArrayLike = 0.0
    splitter_error_out: ArrayLike = 0.0
    loss_bar_db: ArrayLike = 0.0
    loss_cross_db: ArrayLike = 0.0

    def __post_init__(self) -> None:
        for f in fields(self):
            arr = finite(f.name, getattr(self, f.name))
            if f.name.startswith("splitter") and np.any(np.abs(arr) > 0.5):
                raise SettingsError(f"{f.name} must be in [-0.5, 0.5], got {arr.max()!r}")
            if f.name.startswith("loss") and np.any(arr < 0):
                raise SettingsError(f"{f.name} must be >= 0 dB, got {arr.min()!r}")
            arr.setflags(write=False)
            object.__setattr__(self, f.name, arr)

    @classmethod
    def sample(
        cls,
        n_mzi: int,
        rng: np.random.Generator,
        splitter_sigma: float = DEFAULT_SPLITTER_SIGMA,
        loss_db: float = DEFAULT_LOSS_DB,
        loss_cross_db: float | None = None,
    ) -> MZIImperfections:
        """``n_mzi`` elements with Gaussian splitter errors of std ``splitter_sigma``, loss in dB.

        Errors are clipped to the physical range [-0.5, 0.5].
        """
        if splitter_sigma < 0:
            raise SettingsError(f"splitter_sigma must be >= 0, got {splitter_sigma}")
        draw = rng.normal(0.0, splitter_sigma, size=(2, n_mzi)).clip(-0.5, 0.5)
        return cls(draw[0], draw[1], loss_db, loss_db if loss_cross_db is None else loss_cross_db)

    @classmethod
    def sample_extinction(
        cls,
        n_mzi: int,
        rng: np.random.Generator,
        extinction_db: tuple[float, float, float] = PUBLISHED_EXTINCTION_DB,
        loss_db: float = DEFAULT_LOSS_DB,
        loss_cross_db: float | None = None,
    ) -> MZIImperfections:
        """``n_mzi`` elements whose extinction ratios (dB) follow a published range.

        ``extinction_db = (lowest, typical, highest)``: half of the elements uniform between
        lowest and typical, half between typical and highest, i.e. the typical value is the
        median and no element leaves the range (the least-informative distribution with that
        range and median; reading "typical" as the mode instead would put fewer elements near
        the lowest value). Gaussian splitter errors cannot match such a range: at any
        ``splitter_sigma`` the extinction has a long low tail, e.g. 9 % below 32 dB at the
        default sigma, whose median is 37.5 dB. Each element's two splitter errors point in the
        direction of a Gaussian pair (as :meth:`sample` draws them) and are scaled so that
        :func:`extinction_ratio_db` gives the drawn extinction. Loss in dB as in :meth:`sample`.
        """
        low, typical, high = (float(x) for x in extinction_db)
        if not 0 < low <= typical <= high or not np.isfinite(high):
            raise SettingsError(
                f"extinction_db must be finite (lowest, typical, highest) with "
                f"0 < lowest <= typical <= highest, got {extinction_db!r}"
            )
        upper = rng.random(n_mzi) < 0.5
        target = np.where(upper, typical, low) + rng.random(n_mzi) * np.where(
            upper, high - typical, typical - low
        )
        e = splitter_errors_for_extinction(target, rng.normal(size=(2, n_mzi)))
        return cls(e[0], e[1], loss_db, loss_db if loss_cross_db is None else loss_cross_db)

    @classmethod
    def typical(
        cls, extinction_db: float = PUBLISHED_EXTINCTION_DB[1], loss_db: float = DEFAULT_LOSS_DB
    ) -> MZIImperfections:
        """Every element at the published typical figures (Perez-Lopez et al., Nat. Commun.
        15, 1563 (2024); docs/physics.md): extinction ``extinction_db`` (dB, 35), loss
        ``loss_db`` (dB, 0.5) in both states; the two splitter errors equal. Scalar fields, so
        it fits a mesh of any size: the default imperfections against which routed
        configurations are verified."""
        e = splitter_errors_for_extinction(extinction_db, np.ones(2))
        return cls(float(e[0]), float(e[1]), loss_db, loss_db)

    def check_count(self, n_mzi: int) -> None:
        """Raise :class:`ShapeError` unless every field broadcasts to ``n_mzi`` elements: a
        scalar, ``(n_mzi,)``, or either behind leading batch axes (e.g. one row per
        wavelength, :func:`photonics.devices.dispersion.imperfections_at`)."""
        for f in fields(self):
            shape = np.shape(getattr(self, f.name))
            if shape[-1:] not in ((), (1,), (n_mzi,)) or (len(shape) == 1 and shape != (n_mzi,)):
                raise ShapeError(f"{f.name} has shape {shape}; expected a scalar or ({n_mzi},)")


def imperfect_transfer(
    theta: ArrayLike, phi: ArrayLike, imperfections: MZIImperfections
) -> np.ndarray:
    """Transfer matrices of real MZIs (see the module docstring), shape ``(..., 2, 2)``.

    Imperfection fields broadcast against the last axis of ``theta`` and ``phi``.
    """
    th = finite("theta", theta)
    ph = finite("phi", phi)
    imp = imperfections
    k1 = 0.5 + np.asarray(imp.splitter_error_in)
    k2 = 0.5 + np.asarray(imp.splitter_error_out)
    k = np.sin(th) ** 2
    loss_db = imp.loss_bar_db * (1 - k) + imp.loss_cross_db * k
    amp = 10.0 ** (-loss_db / 20)
    # C(k2) diag(e^{i th}, -e^{-i th}) C(k1), C(k) = [[t, i s], [i s, t]], written out element
    # by element (batched 2x2 matmuls are several times slower), then the output row sign
    # and the input phase
    t1, s1 = np.sqrt(1 - k1), np.sqrt(k1)
    t2, s2 = np.sqrt(1 - k2), np.sqrt(k2)
    a, b = np.exp(1j * th), -np.exp(-1j * th)
    e = np.exp(1j * ph) * amp
    shape = np.broadcast_shapes(th.shape, ph.shape, k1.shape, k2.shape, np.shape(amp))
    M = np.empty((*shape, 2, 2), complex)
    M[..., 0, 0] = (t2 * t1 * a - s2 * s1 * b) * e
    M[..., 0, 1] = 1j * (t2 * s1 * a + s2 * t1 * b) * amp
    M[..., 1, 0] = -1j * (s2 * t1 * a + t2 * s1 * b) * e
    M[..., 1, 1] = (s2 * s1 * a - t2 * t1 * b) * amp
    return M


def theta_for_coupling(k: ArrayLike, imperfections: MZIImperfections) -> np.ndarray:
    """The ``theta`` in [0, pi/2] rad at which real MZIs reach cross power fraction ``k``.

    With coupler amplitudes ``t_i = sqrt(1 - k_i)``, ``s_i = sqrt(k_i)`` the cross power is
    ``t1^2 s2^2 + s1^2 t2^2 - 2 s1 s2 t1 t2 cos(2 theta)``; a ``k`` outside its reachable range
    gets the nearest reachable value (the element's finite extinction).
    """
    kx = finite("k", k)
    k1 = 0.5 + np.asarray(imperfections.splitter_error_in)
    k2 = 0.5 + np.asarray(imperfections.splitter_error_out)
    t1, s1, t2, s2 = np.sqrt(1 - k1), np.sqrt(k1), np.sqrt(1 - k2), np.sqrt(k2)
    with np.errstate(divide="ignore", invalid="ignore"):
        cos2 = (t1**2 * s2**2 + s1**2 * t2**2 - kx) / (2 * s1 * s2 * t1 * t2)
    # a coupler with k = 0 or 1 makes the element insensitive to theta: keep theta as is
    return np.where(np.isfinite(cos2), np.arccos(np.clip(cos2, -1, 1)) / 2, np.arcsin(np.sqrt(kx)))


def splitter_errors_for_extinction(extinction_db: ArrayLike, direction: ArrayLike) -> np.ndarray:
    """Splitter errors (input, output), shape ``(2, ...)``, giving ``extinction_db`` (dB, >= 10).

    ``direction`` (shape ``(2, ...)``, not both zero) sets the errors' ratio and signs. To
    first order the worst-port null is ``|e_in| + |e_out|``, so the errors are scaled to that sum
    ``10^(-extinction/20)`` and then corrected against :func:`extinction_ratio_db` until they
    agree to 1e-9 dB.
    """
    target = finite("extinction_db", extinction_db)
    d = finite("direction", direction)
    if np.any(target < 10):
        raise SettingsError(f"extinction_db must be >= 10 dB, got {target.min()!r}")
    norm = np.abs(d).sum(axis=0)
    if np.any(norm == 0):
        raise SettingsError("direction must not be zero in both components")
    unit = d / norm
    scale = 10.0 ** (-target / 20)
    for _ in range(60):  # converges by a factor of about the null amplitude per step
        miss = extinction_ratio_db(*(unit * scale)) - target
        if np.all(np.abs(miss) < 1e-9):
            break
        scale = scale * 10.0 ** (miss / 20)
    return unit * scale


def state_extinction_db(splitter_error_in: ArrayLike, splitter_error_out: ArrayLike) -> np.ndarray:
    """Extinction in each state, dB, shape ``(2, ...)`` [bar, cross]: max over theta / min over
    theta of the port a path in that state leaks into (bar leaks into the cross port, cross
    into the bar port).

    With coupler amplitudes ``t_i = sqrt(1 - k_i)``, ``s_i = sqrt(k_i)``, the cross power swings
    between ``(t1 s2 -+ s1 t2)^2`` and the bar power between ``(t1 t2 -+ s1 s2)^2``: to first
    order in the splitter errors ``d_i`` the bar state leaks ``(d2 - d1)^2`` and the cross state
    ``(d1 + d2)^2``, so the two states of one cell differ. Ideal couplers give ``inf``.
    """
    k1 = 0.5 + finite("splitter_error_in", splitter_error_in)
    k2 = 0.5 + finite("splitter_error_out", splitter_error_out)
    t1, s1, t2, s2 = np.sqrt(1 - k1), np.sqrt(k1), np.sqrt(1 - k2), np.sqrt(k2)
    with np.errstate(divide="ignore"):
        bar = 20 * np.log10((t1 * s2 + s1 * t2) / np.abs(t1 * s2 - s1 * t2))
        cross = 20 * np.log10((t1 * t2 + s1 * s2) / np.abs(t1 * t2 - s1 * s2))
    return np.stack(np.broadcast_arrays(bar, cross))


def extinction_ratio_db(splitter_error_in: ArrayLike, splitter_error_out: ArrayLike) -> np.ndarray:
    """Worst-state extinction ratio, dB: the lower of :func:`state_extinction_db`'s two."""
    return state_extinction_db(splitter_error_in, splitter_error_out).min(axis=0)
