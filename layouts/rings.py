"""The layout of a heated add-drop ring (:class:`photonics.devices.ring.MicroRing`):
:func:`ring_layout`, its two heater terminals wired to bond pads."""

from __future__ import annotations

import gdsfactory as gf
import klayout.db as kdb

from layouts.cells import (
    METAL,
    PadSettings,
    RingCellSettings,
    bond_pad,
    check_ring,
    heated_ring,
    wire,
    with_generic_pdk,
)
from layouts.graph import ring_graph
from layouts.meshes import PROBE_INSET_UM, MeshLayout, Net, Probe, name_top_cell
from photonics.devices.ring import MicroRing


@with_generic_pdk
def ring_layout(
    ring: MicroRing | None = None,
    settings: RingCellSettings | None = None,
    pads: PadSettings | None = None,
) -> MeshLayout:
    """A heated add-drop ring ``ring_0`` of the model's radius, its bus ends as circuit ports
    ``in``, ``through``, ``drop``, ``add``, and its heater terminals wired to two pads below."""
    model = check_ring(ring or MicroRing())
    s = settings or RingCellSettings()
    pad = pads or PadSettings()
    c = gf.Component()
    ref = c.add_ref(heated_ring(model.radius_um, s.gap_um), name="ring_0")
    for top, name in (("in", "o1"), ("through", "o2"), ("drop", "o3"), ("add", "o4")):
        c.add_port(top, port=ref.ports[name])
    metal = kdb.Region()
    w, wp = pad.wire_width_um, pad.wire_pitch_um
    bottom = min(ref.ports["l_e4"].dy, ref.ports["r_e4"].dy) - 2 * wp
    nets = []
    for side, name in ((-1.0, "l_e4"), (1.0, "r_e4")):
        q = ref.ports[name]
        x_pad = side * pad.pad_pitch_um / 2
        y_pad = bottom - wp - pad.pad_size_um / 2
        wire(metal, q.dx, q.dy + PROBE_INSET_UM, q.dx, bottom, w)
        wire(metal, q.dx, bottom, x_pad, bottom, w)
        wire(metal, x_pad, bottom, x_pad, y_pad, w)
        pad_ref = c.add_ref(bond_pad(pad.pad_size_um), name=f"pad_ring_0.{name}")
        pad_ref.dmove((x_pad, y_pad))
        label = f"ring_0.{name}"
        nets.append(
            Net(
                label,
                (
                    Probe(label, q.dx, q.dy + PROBE_INSET_UM / 2),
                    Probe(f"pad_{label}", x_pad, y_pad),
                ),
            )
        )
    c.shapes(c.kcl.layer(*METAL)).insert(metal)
    name_top_cell(c, f"ring_r{model.radius_um:g}".replace(".", "p"))
    return MeshLayout(c, "ring", ring_graph(0), tuple(nets), 1, 2)
