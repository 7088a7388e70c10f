"""Input checks shared by the physics modules."""

import numpy as np
from numpy.typing import ArrayLike

from photonics.errors import SettingsError


def finite(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as a float array; :class:`SettingsError` naming ``name`` if any entry is not
    finite."""
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise SettingsError(f"{name} must be finite, got {value!r}")
    return arr
