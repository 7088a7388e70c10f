"""Where a feed-forward chip's heaters are: one geometry for the chip model and its layout.

Model frame, um: x runs east through the columns, y grows with the mode number (the layout
draws mode ``m`` at ``-m * mode_pitch_um``; :func:`layouts.check.heaters_match` flips it). The
MZI cell of column ``c`` spans ``c * column_pitch_um`` to that plus ``cell_length_um``, with its
heater centred on its top arm (mode ``m``'s line) and its other arm on mode ``m + 1``'s line;
the gap between cells (``column_pitch_um - cell_length_um``) holds, centred in it, the input
phase shifter of the MZI that follows (on that MZI's top input, mode ``m``) and, after the last
column, the output phase screen (one heater on each mode).

:func:`layouts.meshes.feedforward_geometry` gives the geometry a layout is drawn with, so that
``ChipSpec(geometry=...)`` models the heaters exactly where the layout draws them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from photonics.errors import SettingsError
from photonics.feedforward import FeedForwardMesh


@dataclass(frozen=True)
class FeedForwardGeometry:
    """A feed-forward chip's pitches and MZI cell length, um (see the module docstring)."""

    column_pitch_um: float
    mode_pitch_um: float
    cell_length_um: float

    def __post_init__(self) -> None:
        for name in ("column_pitch_um", "mode_pitch_um", "cell_length_um"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise SettingsError(f"{name} must be a number > 0 um, got {value!r}")
        if self.cell_length_um >= self.column_pitch_um:
            raise SettingsError(
                f"cell_length_um ({self.cell_length_um:g}) must be below column_pitch_um "
                f"({self.column_pitch_um:g}): the phase shifters sit in the gap"
            )

    @property
    def gap_centre_um(self) -> float:
        """Distance from a cell's east end to the centre of the gap after it, um."""
        return (self.column_pitch_um - self.cell_length_um) / 2

    def mzi_heaters_um(self, mesh: FeedForwardMesh) -> np.ndarray:
        """(K, 2) centres of the MZIs' heaters, on their top arms, um."""
        x = mesh.columns * self.column_pitch_um + self.cell_length_um / 2
        return np.c_[x, mesh.modes * self.mode_pitch_um]

    def other_arms_um(self, mesh: FeedForwardMesh) -> np.ndarray:
        """(K, 2) centres of the MZIs' unheated (bottom) arms, um."""
        return self.mzi_heaters_um(mesh) + np.array([0.0, self.mode_pitch_um])

    def input_phase_um(self, mesh: FeedForwardMesh) -> np.ndarray:
        """(K, 2) centres of the MZIs' input phase shifters, in the gap before each, um."""
        x = mesh.columns * self.column_pitch_um - self.gap_centre_um
        return np.c_[x, mesh.modes * self.mode_pitch_um]

    def output_phase_um(self, mesh: FeedForwardMesh) -> np.ndarray:
        """(n, 2) centres of the output phase screen's heaters, after the last column, um."""
        x = (mesh.n_columns - 1) * self.column_pitch_um + self.cell_length_um
        return np.c_[
            np.full(mesh.n, x + self.gap_centre_um), np.arange(mesh.n) * self.mode_pitch_um
        ]

    def heaters_um(self, mesh: FeedForwardMesh) -> np.ndarray:
        """(2K + n, 2) every heater, in the chip's channel order (MZIs, input phase shifters,
        output phase screen), um."""
        return np.concatenate(
            [self.mzi_heaters_um(mesh), self.input_phase_um(mesh), self.output_phase_um(mesh)]
        )
