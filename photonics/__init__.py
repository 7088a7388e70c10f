"""Physics and synthesis of programmable photonic circuits.

Pure numerics, no I/O (files, the calibration file among them, are :mod:`firmware`'s), no global
state other than the topology registry, and every random draw from an explicit
``numpy.random.Generator``. The rooms, each layered on the ones below it (import-linter checks
the order):

- :mod:`photonics.fabrication`: yield studies of many emulated chips, and their statistics;
- :mod:`photonics.calibration`: calibrating a chip through its own photodiodes;
- :mod:`photonics.chips`: the emulated chips, their calibration record, the circuit-switch
  planners and the topology registry;
- :mod:`photonics.feedforward` and :mod:`photonics.recirculating`: the two kinds of mesh,
  apart from each other;
- :mod:`photonics.devices`: one element's physics (MZI, heaters, rings, drift, dispersion);
- here, what every room uses: :mod:`~photonics.matching`, :mod:`~photonics.levels`,
  :mod:`~photonics.errors`, :mod:`~photonics.progress` and the input checks.

The user-facing names are importable from here (``from photonics import ClementsMesh``). They
are imported when first used, not with the package: the errors are all the command line's
parser needs, and the numerics pull in numba and scipy.
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

#: Names exported from the rooms, imported on first use, by defining module.
_LAZY = {
    "ClementsMesh": "photonics.feedforward.meshes",
    "FeedForwardMesh": "photonics.feedforward.meshes",
    "MeshSettings": "photonics.feedforward.meshes",
    "ReckMesh": "photonics.feedforward.meshes",
    "WaveguideMesh": "photonics.recirculating.waveguide_mesh",
    "hexagonal_mesh": "photonics.recirculating.lattices",
    "Router": "photonics.recirculating.routing",
    "Matching": "photonics.matching",
    "Permutation": "photonics.matching",
    "MZIImperfections": "photonics.devices.mzi",
    "Calibration": "photonics.chips.calibration",
    "Chip": "photonics.chips.chip",
    "ChipSpec": "photonics.chips.chip",
    "MeshChip": "photonics.chips.mesh_chip",
    "MeshChipSpec": "photonics.chips.mesh_chip",
    "build_chip": "photonics.chips.build",
    "FeedForwardFabric": "photonics.chips.switch",
    "MeshFabric": "photonics.chips.switch",
    "self_calibrate": "photonics.calibration.selfcal",
    "calibrate_mesh": "photonics.calibration.selfcal",
    "calibrate_recirculating": "photonics.calibration.hex_selfcal",
    "YieldStudy": "photonics.fabrication.study",
    "run_chip": "photonics.fabrication.chip_yield",
}

__all__ = [
    "FitError",
    "InvalidInputError",
    "LimitError",
    "MatchingError",
    "NotUnitaryError",
    "PortError",
    "PswitchError",
    "SettingsError",
    "ShapeError",
    *sorted(_LAZY),
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'photonics' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
