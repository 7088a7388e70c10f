"""What a chip's calibration gives: :class:`Calibration` (per-heater P_pi, bias phase and
resistance, crosstalk, one :class:`RingTuning` per ring) and :func:`same_calibration`.

The fits that produce these values are :mod:`photonics.calibration.fits`; the calibration file
(save, load, the versioned format) is :mod:`firmware.calibration_file`: this module does no I/O."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from photonics._checks import array
from photonics.errors import SettingsError, ShapeError

#: The per-heater arrays of a :class:`Calibration`, in their order.
HEATER_FIELDS = ("p_pi_mW", "bias_rad", "a_ohm_per_mA2", "c_ohm")
#: The values of a :class:`RingTuning`, in their order.
RING_FIELDS = ("lambda0_nm", "slope_nm_per_mW", "rms_residual_nm")
#: Extinction ratios (``Calibration.extinction_db``) are reported up to this value, dB (the
#: photodiodes' floor).
MAX_EXTINCTION_DB = 60.0


@dataclass(frozen=True)
class RingTuning:
    """A ring's resonance vs its heater's power: ``lambda = lambda0_nm + slope_nm_per_mW P``
    (nm, nm/mW), and the fit's rms residual (nm, >= 0)."""

    lambda0_nm: float
    slope_nm_per_mW: float
    rms_residual_nm: float = 0.0

    def __post_init__(self) -> None:
        for name in RING_FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
                raise SettingsError(f"RingTuning.{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise SettingsError(f"RingTuning.{name} must be finite, got {float(value)!r}")
            object.__setattr__(self, name, float(value))
        if self.rms_residual_nm < 0:
            raise SettingsError(
                f"RingTuning.rms_residual_nm must be >= 0, got {self.rms_residual_nm}"
            )


@dataclass(frozen=True, eq=False, kw_only=True)
class Calibration:
    """What a chip's calibration gives, for H heaters and any number of rings.

    - ``chip_id``: non-empty identifier of the chip.
    - ``p_pi_mW`` (> 0, mW), ``bias_rad`` (rad), ``a_ohm_per_mA2`` (ohm/mA^2), ``c_ohm`` (> 0,
      ohm): one value per heater, shape (H,).
    - ``crosstalk``: optional ``K`` (H x H, ``[victim, aggressor]``, zero diagonal).
    - ``rings``: one :class:`RingTuning` per ring (possibly none).
    - ``phase_fitted``: per heater, whether ``p_pi_mW`` and ``bias_rad`` were measured (default
      all); a heater whose phase no detector sees (an output phase shifter before the
      photodiodes) keeps its design values, flagged False.
    - ``extinction_db``: optional, of a mesh whose cells are heaters ``0 .. m-1``: each cell's
      measured extinction in each state, dB, shape ``(2, m)`` [bar, cross] (> 0, NaN for a
      cell without a figure, e.g. a dead one): what the router predicts isolation with.
    - ``created``: ISO 8601 time of the calibration (e.g. ``datetime.now(UTC).isoformat()``).

    Arrays are stored read-only. There is deliberately no ``__eq__`` (arrays have no single
    truth value); compare with :func:`same_calibration`.
    """

    chip_id: str
    p_pi_mW: np.ndarray
    bias_rad: np.ndarray
    a_ohm_per_mA2: np.ndarray
    c_ohm: np.ndarray
    created: str
    crosstalk: np.ndarray | None = None
    rings: tuple[RingTuning, ...] = field(default=())
    phase_fitted: np.ndarray | None = None
    extinction_db: np.ndarray | None = None

    def __repr__(self) -> str:
        fitted = self.p_pi_mW.size if self.phase_fitted is None else int(self.phase_fitted.sum())
        crosstalk = "with" if self.crosstalk is not None else "no"
        return (
            f"<Calibration {self.chip_id!r}: {self.p_pi_mW.size} heaters ({fitted} phase-fitted), "
            f"{len(self.rings)} rings, {crosstalk} crosstalk, created {self.created}>"
        )

    def __post_init__(self) -> None:
        if not isinstance(self.chip_id, str) or not self.chip_id:
            raise SettingsError(f"chip_id must be a non-empty string, got {self.chip_id!r}")
        if not isinstance(self.created, str):
            raise SettingsError(f"created must be an ISO 8601 string, got {self.created!r}")
        try:
            datetime.fromisoformat(self.created)
        except ValueError as exc:
            raise SettingsError(f"created must be an ISO 8601 time, got {self.created!r}") from exc
        n = None
        for name in HEATER_FIELDS:
            arr = array(name, getattr(self, name)).copy()  # the caller keeps their array
            if arr.ndim != 1:
                raise ShapeError(
                    f"{name} must be 1-D (one value per heater), got shape {arr.shape}"
                )
            if n is None:
                n = arr.size
            elif arr.size != n:
                raise ShapeError(f"{name} has {arr.size} values but p_pi_mW has {n}")
            _check_finite(name, arr)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        for name in ("p_pi_mW", "c_ohm"):
            arr = getattr(self, name)
            if np.any(arr <= 0):
                i = int(np.flatnonzero(arr <= 0)[0])
                raise SettingsError(f"{name}[{i}] must be > 0, got {float(arr[i])!r}")
        if self.crosstalk is not None:
            K = array("crosstalk", self.crosstalk).copy()
            if K.shape != (n, n):
                raise ShapeError(f"crosstalk must have shape ({n}, {n}), got {K.shape}")
            _check_finite("crosstalk", K)
            if np.any(np.diag(K) != 0):
                i = int(np.flatnonzero(np.diag(K))[0])
                raise SettingsError(
                    f"crosstalk[{i}, {i}] must be 0 (no self-coupling), got {float(K[i, i])!r}"
                )
            K.setflags(write=False)
            object.__setattr__(self, "crosstalk", K)
        fitted = np.ones(n, bool) if self.phase_fitted is None else np.array(self.phase_fitted)
        if fitted.dtype != bool or fitted.shape != (n,):
            raise ShapeError(
                f"phase_fitted must be {n} booleans, got {fitted.dtype} of shape {fitted.shape}"
            )
        fitted.setflags(write=False)
        object.__setattr__(self, "phase_fitted", fitted)
        if self.extinction_db is not None:
            ext = array("extinction_db", self.extinction_db).copy()
            if ext.ndim != 2 or ext.shape[0] != 2 or not 1 <= ext.shape[1] <= n:
                raise ShapeError(f"extinction_db must have shape (2, m <= {n}), got {ext.shape}")
            if np.any(ext <= 0) or np.any(np.isinf(ext)):
                bad = ext[(ext <= 0) | np.isinf(ext)][0]
                raise SettingsError(f"extinction_db must be > 0 dB and finite or NaN, got {bad!r}")
            ext.setflags(write=False)
            object.__setattr__(self, "extinction_db", ext)
        rings = tuple(self.rings)
        for i, ring in enumerate(rings):
            if not isinstance(ring, RingTuning):
                raise SettingsError(f"rings[{i}] must be a RingTuning, got {ring!r}")
        object.__setattr__(self, "rings", rings)

    @property
    def n_heaters(self) -> int:
        return int(self.p_pi_mW.size)


def _check_finite(name: str, arr: np.ndarray) -> None:
    if not np.all(np.isfinite(arr)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise SettingsError(f"{name}{list(idx)} must be finite, got {float(arr[idx])!r}")


def _samearray(x: np.ndarray | None, y: np.ndarray | None) -> bool:
    if x is None or y is None:
        return x is None and y is None
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def same_calibration(a: Calibration, b: Calibration) -> bool:
    """True if ``a`` and ``b`` hold bit-identical values (so ``-0.0`` differs from ``0.0``)."""
    if (a.chip_id, a.created, len(a.rings)) != (b.chip_id, b.created, len(b.rings)):
        return False
    arrays = (*HEATER_FIELDS, "crosstalk", "extinction_db")
    if not all(_samearray(getattr(a, n), getattr(b, n)) for n in arrays):
        return False
    if not np.array_equal(a.phase_fitted, b.phase_fitted):
        return False
    ring_a = np.array([[getattr(r, n) for n in RING_FIELDS] for r in a.rings], dtype=float)
    ring_b = np.array([[getattr(r, n) for n in RING_FIELDS] for r in b.rings], dtype=float)
    return _samearray(ring_a, ring_b)
