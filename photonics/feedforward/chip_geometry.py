"""Where a feed-forward chip's heaters are: one geometry for the chip model and its layout.

Model frame, um: x runs east through the columns, y grows with the mode number (the layout
draws mode ``m`` at ``-m * mode_pitch_um``; :func:`layouts.check.heaters_match` flips it). The
MZI cell of column ``c`` spans ``c * column_pitch_um`` to that plus ``cell_length_um``, with its
heater centred on its top arm (mode ``m``'s line) and its other arm on mode ``m + 1``'s line;
the gap between cells (``column_pitch_um - cell_length_um``) holds, centred in it, the input
phase shifter of the MZI that follows (on that MZI's top input, mode ``m``) and, after the last
column, the output phase screen (one heater on each mode).

:func:`drawn_geometry` is the geometry the project's wired layout
(:func:`layouts.meshes.feedforward_layout`) is drawn with: the default chip model
(``ChipSpec()`` with no pitches) puts its heaters there, and the layout draws its cells and phase
shifters from the same function (:func:`layouts.meshes.feedforward_geometry`), so the two cannot
drift apart. The gap between cells holds the wires to the pads: per half of the mesh (the modes
above / below the middle, whose wires leave upward / downward), one track per heater whose wire
runs through that gap (the MZIs of the column before it, the phase shifters in it), then the
phase shifters with ``2 * margin_um`` on each side (a margin, the next column's shared return
wire, a margin).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from photonics.devices.thermal import HeaterLayout
from photonics.errors import SettingsError
from photonics.feedforward.meshes import FeedForwardMesh


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


#: The wired layout's defaults, um (:class:`layouts.cells.MZICellSettings`,
#: :class:`layouts.cells.PadSettings`, :class:`layouts.meshes.LayoutSettings`): the MZI cell
#: (2 couplers of 20 um between 60 um S-bends, 2 spacers of 20 um, a 100 um heater), the heater
#: (phase shifters too), the mode pitch, the clearance beside a column and the wire pitch.
CELL_LENGTH_UM = 2 * (20.0 + 2 * 60.0) + 2 * 20.0 + 100.0
HEATER_LENGTH_UM = 100.0
MODE_PITCH_UM = 60.0
MARGIN_UM = 20.0
WIRE_PITCH_UM = 10.0


def wire_tracks(mesh: FeedForwardMesh) -> int:
    """The most wires that leave one gap on one side (up or down), over every gap: the MZIs of
    the column west of the gap plus the phase shifters in it, in that half of the mesh (modes
    at or above the middle go up, the others down)."""
    middle = (mesh.n - 1) / 2
    columns, modes = np.asarray(mesh.columns), np.asarray(mesh.modes)

    def halves(in_column: np.ndarray) -> np.ndarray:
        up = int(np.sum(in_column <= middle))
        return np.array([up, in_column.size - up])

    per_column = [halves(modes[columns == c]) for c in range(mesh.n_columns)]
    gaps = [per_column[0]]  # before the first column: its phase shifters only
    gaps += [per_column[c] + per_column[c + 1] for c in range(mesh.n_columns - 1)]
    gaps.append(per_column[-1] + halves(np.arange(mesh.n)))  # the output screen
    return int(max(g.max() for g in gaps))


def drawn_geometry(
    mesh: FeedForwardMesh,
    *,
    cell_length_um: float = CELL_LENGTH_UM,
    heater_length_um: float = HEATER_LENGTH_UM,
    mode_pitch_um: float = MODE_PITCH_UM,
    margin_um: float = MARGIN_UM,
    wire_pitch_um: float = WIRE_PITCH_UM,
) -> FeedForwardGeometry:
    """The geometry of the wired layout of ``mesh`` (module docstring), um: the gap is
    ``heater_length_um + 4 * margin_um + 2 * (tracks - 1) * wire_pitch_um`` wide, ``tracks``
    from :func:`wire_tracks`, so that each half of it (beside the centred phase shifter) holds
    a margin, the tracks and a margin."""
    tracks = max(wire_tracks(mesh), 1)
    gap = heater_length_um + 4 * margin_um + 2 * (tracks - 1) * wire_pitch_um
    return FeedForwardGeometry(cell_length_um + gap, mode_pitch_um, cell_length_um)


def drawn_layout(mesh: FeedForwardMesh) -> HeaterLayout:
    """The heaters of ``mesh`` (MZIs, input phase shifters, output phase screen) and the MZIs'
    other arms where the wired layout draws them (:func:`drawn_geometry`), um: the design a
    switch on such a chip hands its firmware."""
    geometry = drawn_geometry(mesh)
    return HeaterLayout(geometry.heaters_um(mesh), geometry.other_arms_um(mesh))
