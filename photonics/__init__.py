"""Physics and synthesis of programmable photonic circuits.

Pure numerics: MZI and mesh transfer matrices, unitary decomposition, permutation
routing, imperfection models, heaters and rings, calibration fits. No I/O: files, the
calibration file among them, are read and written by :mod:`firmware`. No global state other
than the topology registry (:mod:`photonics.topologies`); every random draw comes from an
explicit ``numpy.random.Generator``.

The meshes and matchings are imported when first used (``photonics.ClementsMesh``), not with
the package: the errors and the topology names are all the command line's parser needs, and
the numerics pull in numba and scipy.
"""

from importlib import import_module
from typing import Any

from photonics.errors import (
    FitError,
    InvalidInputError,
    LimitError,
    MatchingError,
    NotUnitaryError,
    PortError,
    PswitchError,
    SettingsError,
    ShapeError,
)

__all__ = [
    "ClementsMesh",
    "FeedForwardMesh",
    "FitError",
    "InvalidInputError",
    "LimitError",
    "MZIImperfections",
    "Matching",
    "MatchingError",
    "MeshSettings",
    "NotUnitaryError",
    "Permutation",
    "PortError",
    "PswitchError",
    "ReckMesh",
    "SettingsError",
    "ShapeError",
]

#: Names exported from submodules that are imported on first use, by module.
_LAZY = {
    "ClementsMesh": "photonics.feedforward",
    "FeedForwardMesh": "photonics.feedforward",
    "MeshSettings": "photonics.feedforward",
    "ReckMesh": "photonics.feedforward",
    "Matching": "photonics.matching",
    "Permutation": "photonics.matching",
    "MZIImperfections": "photonics.mzi",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'photonics' has no attribute {name!r}")
