"""Leaf cells: the heated MZI, the heated add-drop microring, bond pads, metal wires.

Every cell is built with gdsfactory's generic PDK, active only while a builder runs
(:func:`generic_pdk`: the caller's active PDK, or none, is back afterwards). Lengths in um;
the database unit is 1 nm, so every coordinate here is a whole number of nm.

The heated MZI (:func:`heated_mzi`) is the 2x2 element of :mod:`photonics.devices.mzi`: an input
directional coupler, two arms ``mode_pitch_um`` apart with a metal heater on the top arm (it
sets the arm difference ``2 theta``, the ``k``-th heater channel of :mod:`photonics.chips.chip`),
and an output coupler. Its ports sit on the lines of the two modes it acts on, so the waveguides
between columns of a mesh are straight:

- ``o1`` / ``o3``: top mode in (west) / out (east), at y = 0;
- ``o2`` / ``o4``: bottom mode in / out, at y = -``mode_pitch_um``;
- ``e1`` / ``e2``: the heater's west and east terminals (via-stack tops on the routing metal).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

import gdsfactory as gf
import gdsfactory.pdk
import klayout.db as kdb
from gdsfactory.gpdk import LAYER

from photonics.devices.ring import MicroRing
from photonics.errors import SettingsError

#: Routing metal (wires, pads, tops of the heater via stacks): the generic PDK's M3 / MTOP.
METAL = LAYER.M3
#: Database unit, um.
DBU_UM = 0.001
#: Element-name prefixes: instances whose names start with these are model elements; every
#: other instance with two optical ports is a piece of waveguide.
ELEMENT_PREFIXES = ("mzi_", "cell_", "ring_")


P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def generic_pdk() -> Iterator[None]:
    """gdsfactory's generic PDK active inside the block, and the PDK that was active before (or
    none) active again after it: building a layout leaves the caller's PDK alone."""
    # read the module's global: gf.get_active_pdk() would activate one when none is
    previous = gdsfactory.pdk._ACTIVE_PDK
    gf.gpdk.PDK.activate()
    try:
        yield
    finally:
        if previous is None:
            gdsfactory.pdk._ACTIVE_PDK = None
        elif gdsfactory.pdk._ACTIVE_PDK is not previous:
            previous.activate(force=True)


def with_generic_pdk(builder: Callable[P, R]) -> Callable[P, R]:
    """``builder`` run inside :func:`generic_pdk` (every public builder of the package)."""

    @functools.wraps(builder)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with generic_pdk():
            return builder(*args, **kwargs)

    return run


def clear_cache() -> None:
    """Forget gdsfactory's cached cells (``@gf.cell`` results are cached and locked)."""
    gf.clear_cache()


def nm(value_um: float) -> int:
    """A length in um as a whole number of database units (nm)."""
    return round(value_um / DBU_UM)


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise SettingsError(f"{name} must be a number > 0 um, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class MZICellSettings:
    """Geometry of the heated MZI, um.

    - ``mode_pitch_um``: distance between the two modes (and arms), 60 um as
      :class:`photonics.chips.chip.ChipSpec` ``pitch_y_um``;
    - ``heater_length_um``: metal heater on the top arm;
    - ``coupler_length_um``, ``coupler_gap_um``: straight coupling section and its gap;
    - ``sbend_length_um``: length of the S-bends that bring the arms from the coupler's gap to
      the mode pitch (bend radius stays above the PDK's minimum for 60 um pitch and 60 um);
    - ``spacer_um``: straight arm between each coupler and the heater, so the heater's via
      stacks sit over a straight waveguide.
    """

    mode_pitch_um: float = 60.0
    heater_length_um: float = 100.0
    coupler_length_um: float = 20.0
    coupler_gap_um: float = 0.236
    sbend_length_um: float = 60.0
    spacer_um: float = 20.0

    def __post_init__(self) -> None:
        for name in (
            "mode_pitch_um",
            "heater_length_um",
            "coupler_length_um",
            "coupler_gap_um",
            "sbend_length_um",
            "spacer_um",
        ):
            _positive(name, getattr(self, name))
        if self.mode_pitch_um < 20:
            raise SettingsError(
                f"mode_pitch_um must be >= 20 um (heater via stacks are 11 um), got "
                f"{self.mode_pitch_um!r}"
            )

    @property
    def length_um(self) -> float:
        """West-to-east length of the cell, um."""
        coupler = self.coupler_length_um + 2 * self.sbend_length_um
        return 2 * coupler + 2 * self.spacer_um + self.heater_length_um


@with_generic_pdk
def heated_mzi(settings: MZICellSettings | None = None) -> gf.Component:
    """The heated 2x2 MZI (ports and geometry in the module docstring); cached per settings."""
    return _heated_mzi(settings or MZICellSettings())


@gf.cell(basename="heated_mzi")
def _heated_mzi(settings: MZICellSettings) -> gf.Component:
    s = settings
    c = gf.Component()
    coupler = gf.components.coupler(
        gap=s.coupler_gap_um, length=s.coupler_length_um, dy=s.mode_pitch_um, dx=s.sbend_length_um
    )
    arm = s.heater_length_um + 2 * s.spacer_um
    split = c.add_ref(coupler, name="splitter")
    split.dmove((-split.ports["o2"].dx, -split.ports["o2"].dy))  # top-left port at (0, 0)
    x_arm = split.ports["o3"].dx
    spacer = gf.components.straight(length=s.spacer_um)
    top_in = c.add_ref(spacer, name="arm_top_in")
    top_in.dmove((x_arm, 0))
    heater = c.add_ref(
        gf.components.straight_heater_metal(length=s.heater_length_um), name="heater"
    )
    heater.dmove((x_arm + s.spacer_um, 0))
    top_out = c.add_ref(spacer, name="arm_top_out")
    top_out.dmove((x_arm + s.spacer_um + s.heater_length_um, 0))
    bottom = c.add_ref(gf.components.straight(length=arm), name="arm_bottom")
    bottom.dmove((x_arm, -s.mode_pitch_um))
    combine = c.add_ref(coupler, name="combiner")
    combine.dmove((x_arm + arm - combine.ports["o2"].dx, -combine.ports["o2"].dy))
    c.add_port("o1", port=split.ports["o2"])
    c.add_port("o2", port=split.ports["o1"])
    c.add_port("o3", port=combine.ports["o3"])
    c.add_port("o4", port=combine.ports["o4"])
    c.add_port("e1", port=heater.ports["l_e1"])
    c.add_port("e2", port=heater.ports["r_e3"])
    c.info["length_um"] = s.length_um
    return c


@dataclass(frozen=True)
class PadSettings:
    """Bond pads and the wires to them, um.

    - ``pad_size_um``: side of a square pad (60 um: fine-pitch wire bonding or probing);
    - ``pad_pitch_um``: centre-to-centre distance of neighbouring pads in a row;
    - ``wire_width_um``, ``wire_pitch_um``: metal wires and the distance between parallel
      wires' centres (the gap is ``wire_pitch_um - wire_width_um``).
    """

    pad_size_um: float = 60.0
    pad_pitch_um: float = 80.0
    wire_width_um: float = 4.0
    wire_pitch_um: float = 10.0

    def __post_init__(self) -> None:
        for name in ("pad_size_um", "pad_pitch_um", "wire_width_um", "wire_pitch_um"):
            _positive(name, getattr(self, name))
        if self.pad_pitch_um <= self.pad_size_um:
            raise SettingsError(
                f"pad_pitch_um ({self.pad_pitch_um}) must exceed pad_size_um ({self.pad_size_um})"
            )
        if self.wire_pitch_um <= self.wire_width_um:
            raise SettingsError(
                f"wire_pitch_um ({self.wire_pitch_um}) must exceed wire_width_um "
                f"({self.wire_width_um})"
            )


@with_generic_pdk
def bond_pad(size_um: float = 60.0) -> gf.Component:
    """A square bond pad of side ``size_um`` on the routing metal, centred on (0, 0)."""
    return gf.components.pad(size=(size_um, size_um), layer=METAL, port_orientations=None)


def wire(region: kdb.Region, x0: float, y0: float, x1: float, y1: float, width: float) -> None:
    """Add a horizontal or vertical wire from (x0, y0) to (x1, y1) (um) to ``region``; its ends
    extend by half the width so that wires meeting at a corner overlap."""
    if x0 != x1 and y0 != y1:
        raise SettingsError(f"wire ({x0}, {y0}) -> ({x1}, {y1}) is neither horizontal nor vertical")
    h = width / 2
    region.insert(
        kdb.Box(nm(min(x0, x1) - h), nm(min(y0, y1) - h), nm(max(x0, x1) + h), nm(max(y0, y1) + h))
    )


@dataclass(frozen=True)
class RingCellSettings:
    """Layout of the add-drop ring beyond what :class:`photonics.devices.ring.MicroRing` fixes, um.

    - ``gap_um``: bus-to-ring gap of both couplers (the layout does not derive it from the
      model's self-coupling ``r1``, ``r2``: that needs a mode solver);
    - ``bus_length_um``: straight bus waveguide on each side of the ring's couplers.
    """

    gap_um: float = 0.2
    bus_length_um: float = 20.0

    def __post_init__(self) -> None:
        _positive("gap_um", self.gap_um)
        _positive("bus_length_um", self.bus_length_um)


@with_generic_pdk
def heated_ring(radius_um: float, gap_um: float) -> gf.Component:
    """gdsfactory's heated add-drop ring of radius ``radius_um`` (um): ports ``o1`` in and ``o2``
    through on the bus below the ring, ``o3`` drop and ``o4`` add on the bus above it (light
    circulating counter-clockwise leaves westward); heater terminals ``l_e4`` and ``r_e4``
    (south-facing via-stack tops)."""
    return gf.components.ring_double_heater(radius=radius_um, gap=gap_um)


def check_ring(ring: MicroRing) -> MicroRing:
    """``ring`` when it is an add-drop :class:`MicroRing`, else :class:`SettingsError`."""
    if not isinstance(ring, MicroRing) or not ring.is_add_drop:
        raise SettingsError(f"an add-drop MicroRing (r2 set) is needed, got {ring!r}")
    return ring
