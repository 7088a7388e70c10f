"""Physics and synthesis of programmable photonic circuits.

Pure numerics: MZI and mesh transfer matrices, unitary decomposition, permutation
routing, imperfection models. No I/O and no global state; every random draw comes
from an explicit ``numpy.random.Generator``.
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
