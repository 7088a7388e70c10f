"""Input checks shared by the physics modules."""

import reprlib

import numpy as np
from numpy.typing import ArrayLike

from photonics.errors import SettingsError, ShapeError


def array(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as a float array; ragged or non-numeric input is :class:`ShapeError` naming
    ``name``."""
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ShapeError(
            f"{name} must be a rectangular array of numbers, got {reprlib.repr(value)}"
        ) from exc


def finite(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as a float array; :class:`SettingsError` naming ``name`` if any entry is not
    finite."""
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise SettingsError(f"{name} must be finite, got {value!r}")
    return arr
