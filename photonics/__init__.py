"""Physics and synthesis of programmable photonic circuits.

Pure numerics: MZI and mesh transfer matrices, unitary decomposition, permutation
routing, imperfection models, heaters and rings, calibration fits. No I/O: files, the
calibration file among them, are read and written by :mod:`firmware`. No global state other
than the topology registry (:mod:`photonics.topologies`); every random draw comes from an
explicit ``numpy.random.Generator``.
"""

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
from photonics.feedforward import ClementsMesh, FeedForwardMesh, MeshSettings, ReckMesh
from photonics.matching import Matching, Permutation
from photonics.mzi import MZIImperfections

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
