"""The metal of a feed-forward mesh's layout: every heater wired to bond pads, and the nets the
metal must form (checked by :func:`layouts.check.metal_check`).

Each heater (an MZI's, an input phase shifter, an output phase shifter) has its own pad on one
terminal and shares a return wire and pad on the other: an MZI column's return runs
``margin_um`` west of the column and also takes the east terminals of the input phase shifters
just west of it; the output screen's return runs ``margin_um`` east of it. Wires of heaters on
modes at or above the middle leave upward to a row of pads above the mesh, the others downward.
In the gap between columns (:func:`photonics.feedforward.chip_geometry.drawn_geometry`) the wires of
the MZI column west of it take tracks ``margin_um + i * wire_pitch_um`` east of that column, the
outermost heater nearest, and the wires of the phase shifters in the gap take tracks ``margin_um + j
* wire_pitch_um`` west of the shifters, again the outermost nearest, so that no wire crosses
another. Coordinates in um.
"""

from __future__ import annotations

from dataclasses import dataclass

import gdsfactory as gf
import klayout.db as kdb

from layouts.cells import METAL, PadSettings, bond_pad, wire
from photonics.feedforward.chip_geometry import FeedForwardGeometry

#: Distance (um) from a heater terminal's port into its via stack, where metal surely is.
PROBE_INSET_UM = 2.0


@dataclass(frozen=True)
class Probe:
    """A point (um) that lies on the metal of a named terminal (a heater contact or a pad)."""

    label: str
    x_um: float
    y_um: float


@dataclass(frozen=True)
class Net:
    """A set of terminals that must be joined by metal, and by nothing else."""

    name: str
    probes: tuple[Probe, ...]


@dataclass(frozen=True)
class Terminal:
    """A heater's terminal: ``port`` ``e1`` faces west, ``e2`` east; ``gap`` is the gap whose
    tracks its wire takes or whose return it joins (gap ``g`` lies west of column ``g``; the
    output screen's is gap ``n_columns``); ``shifter`` for a phase shifter's."""

    element: str
    gap: int
    port: str
    x: float
    y: float
    shifter: bool


def probe(t: Terminal) -> Probe:
    """A point on the metal of terminal ``t``, ``PROBE_INSET_UM`` into its via stack."""
    inset = PROBE_INSET_UM if t.port == "e1" else -PROBE_INSET_UM
    return Probe(f"{t.element}.{t.port}", t.x + inset, t.y)


def wire_feedforward(
    c: gf.Component,
    terminals: list[Terminal],
    pads: PadSettings,
    geometry: FeedForwardGeometry,
    n_gaps: int,
    heater_length_um: float,
    margin_um: float,
    y_mid: float,
    y_range: tuple[float, float],
) -> tuple[Net, ...]:
    """Draw the wires and pads of the module docstring on ``c``; return the expected nets.

    An MZI's terminals name its gaps as: ``e2`` the gap east of its column (its own pad),
    ``e1`` the gap west of it (the column's return); a phase shifter's both name its own gap
    (``e1`` its own pad, ``e2`` the return). ``y_range``: (top, bottom) y where the wires leave
    the mesh for the pad rows."""
    w, wp, m = pads.wire_width_um, pads.wire_pitch_um, margin_um
    pitch, gap_w = geometry.column_pitch_um, geometry.column_pitch_um - geometry.cell_length_um
    y_top, y_bottom = y_range
    metal = kdb.Region()
    up: list[tuple[float, str]] = []  # (x, net) of wires leaving the mesh upward
    down: list[tuple[float, str]] = []
    nets: dict[str, list[Probe]] = {}
    for g in range(n_gaps):
        x_gap = g * pitch - gap_w  # the gap's west end
        x_shifters = g * pitch - gap_w / 2 - heater_length_um / 2
        own = [t for t in terminals if t.gap == g and (t.port == "e2") != t.shifter]
        for shifter, x_first, step in ((False, x_gap + m, wp), (True, x_shifters - m, -wp)):
            group = [t for t in own if t.shifter == shifter]
            upper = sorted((t for t in group if t.y >= y_mid), key=lambda t: -t.y)
            lower = sorted((t for t in group if t.y < y_mid), key=lambda t: t.y)
            for half, y_end, out in ((upper, y_top, up), (lower, y_bottom, down)):
                for i, t in enumerate(half):
                    x_track = x_first + i * step
                    p = probe(t)
                    wire(metal, p.x_um, t.y, x_track, t.y, w)
                    wire(metal, x_track, t.y, x_track, y_end, w)
                    nets[p.label] = [p]
                    out.append((x_track, p.label))
        shared = [t for t in terminals if t.gap == g and t.port == ("e2" if t.shifter else "e1")]
        if not shared:
            continue
        last = g == n_gaps - 1
        x_return = x_shifters + heater_length_um + m if last else g * pitch - m
        for t in shared:
            wire(metal, probe(t).x_um, t.y, x_return, t.y, w)
        wire(metal, x_return, min(t.y for t in shared), x_return, y_top, w)
        name = "return_out" if last else f"return_c{g}"
        nets[name] = [probe(t) for t in shared]
        up.append((x_return, name))
    x_center = ((n_gaps - 1) * pitch - gap_w) / 2
    for tracks, y0, direction in ((up, y_top, 1.0), (down, y_bottom, -1.0)):
        for name, (x, y) in fan_out(metal, tracks, y0, direction, x_center, pads).items():
            ref = c.add_ref(bond_pad(pads.pad_size_um), name=f"pad_{name}")
            ref.dmove((x, y))
            nets[name].append(Probe(f"pad_{name}", x, y))
    c.shapes(c.kcl.layer(*METAL)).insert(metal)
    return tuple(Net(name, tuple(probes)) for name, probes in nets.items())


def fan_out(
    metal: kdb.Region,
    tracks: list[tuple[float, str]],
    y0: float,
    direction: float,
    x_center: float,
    pads: PadSettings,
) -> dict[str, tuple[float, float]]:
    """Wire vertical tracks that end at ``y0`` to a row of pads centred on ``x_center``,
    beyond ``y0`` in ``direction`` (+1 up, -1 down), keeping their order. Returns each net's
    pad centre (um).

    Each track runs on to its own level, across to its pad's x, then on to the pad. A track that
    moves west turns at a level nearer ``y0`` than every track east of it that also moves west
    (and mirrored for tracks moving east), so no two wires cross.
    """
    w, wp = pads.wire_width_um, pads.wire_pitch_um
    order = sorted(tracks)
    count = len(order)
    pad_x = [round(x_center + (i - (count - 1) / 2) * pads.pad_pitch_um, 3) for i in range(count)]
    west = [i for i in range(count) if pad_x[i] < order[i][0]]
    east = [i for i in range(count) if pad_x[i] > order[i][0]][::-1]
    level = {i: k + 1 for group in (west, east) for k, i in enumerate(group)}
    levels = max(len(west), len(east)) + 1
    y_pads = y0 + direction * (levels * wp + pads.pad_size_um / 2 + wp)
    placed = {}
    for i, (x, name) in enumerate(order):
        y_turn = y0 + direction * level.get(i, 0) * wp
        wire(metal, x, y0, x, y_turn, w)
        wire(metal, x, y_turn, pad_x[i], y_turn, w)
        wire(metal, pad_x[i], y_turn, pad_x[i], y_pads, w)
        placed[name] = (pad_x[i], y_pads)
    return placed
