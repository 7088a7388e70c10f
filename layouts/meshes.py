"""Layouts of whole circuits, built from the model's own data.

- :func:`feedforward_layout`: a Clements or Reck mesh (:class:`photonics.feedforward.meshes.
  FeedForwardMesh`): the MZI of slot ``k`` is placed from ``mesh.columns[k]`` and
  ``mesh.modes[k]`` and named ``mzi_c{column}_m{mode}``; each connection of the model's graph
  (:func:`layouts.graph.feedforward_graph`) is drawn as one waveguide, with the chip model's
  phase shifters on it (each MZI's input, each output), every heater where
  :func:`photonics.feedforward.chip_geometry.drawn_geometry` (the default chip model's geometry)
  puts it. With pads every heater is wired as :mod:`layouts.wiring` says.
- :func:`waveguide_mesh_layout`: a recirculating mesh
  (:class:`photonics.recirculating.waveguide_mesh. WaveguideMesh`): cell ``i`` (``cell_{i}``) is a
  heated MZI centred on ``cell_positions_um[i]``, turned along its lattice edge, its arm 0-2 on the
  side of face ``cell_faces[i, 0]``; every link is a waveguide arc between the two port-ends it
  joins; edge port ``p`` is the circuit port ``p{p}``.
- :func:`layouts.rings.ring_layout` (its own module): a heated add-drop ring.

Coordinates in um. Feed-forward meshes: mode ``m`` runs along y = ``-m * mode_pitch_um``, column
``c`` starts at x = ``c * column_pitch_um`` (:func:`feedforward_geometry`). Each layout comes
with the metal nets it should have (:class:`Net`), which :func:`layouts.check.metal_check`
compares with the drawn metal.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import gdsfactory as gf
import klayout.db as kdb
import numpy as np
from gdsfactory.gpdk import LAYER

from layouts.cells import (
    MZICellSettings,
    PadSettings,
    heated_mzi,
    with_generic_pdk,
)
from layouts.graph import (
    CircuitGraph,
    cell_name,
    feedforward_graph,
    mzi_name,
    waveguide_mesh_graph,
)
from layouts.wiring import PROBE_INSET_UM, Net, Probe, Terminal, probe, wire_feedforward
from photonics.errors import SettingsError
from photonics.feedforward.chip_geometry import FeedForwardGeometry, drawn_geometry
from photonics.feedforward.meshes import FeedForwardMesh
from photonics.recirculating.waveguide_mesh import WaveguideMesh


@dataclass(frozen=True)
class LayoutSettings:
    """How a mesh is drawn, um.

    - ``mzi``: the heated MZI cell;
    - ``pads``: bond pads and wires; ``None`` draws no wiring (each heater terminal stays a
      separate piece of metal);
    - ``io_length_um``: waveguide beyond the outermost metal to the circuit's ports;
    - ``channel_margin_um``: clearance between a column of MZIs and the wires beside it.
    """

    mzi: MZICellSettings = field(default_factory=MZICellSettings)
    pads: PadSettings | None = field(default_factory=PadSettings)
    io_length_um: float = 50.0
    channel_margin_um: float = 20.0

    def __post_init__(self) -> None:
        if not isinstance(self.mzi, MZICellSettings):
            raise SettingsError(f"mzi must be MZICellSettings, got {type(self.mzi).__name__}")
        if self.pads is not None and not isinstance(self.pads, PadSettings):
            raise SettingsError(f"pads must be PadSettings or None, got {self.pads!r}")
        for name in ("io_length_um", "channel_margin_um"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise SettingsError(f"{name} must be a number > 0 um, got {value!r}")


@dataclass(frozen=True, eq=False)
class MeshLayout:
    """A built layout: the gdsfactory component, the model graph it was drawn from, and the
    metal nets it must have.

    ``model`` is the graph of the model the layout claims to implement (check the layout against
    it with :func:`layouts.check.check_layout`); ``nets`` the expected metal nets.
    """

    component: gf.Component
    kind: str
    model: CircuitGraph
    nets: tuple[Net, ...]
    n_elements: int
    n_pads: int

    @property
    def die_size_um(self) -> tuple[float, float]:
        """(width, height) of the bounding box of everything drawn, um."""
        box = self.component.dbbox()
        return (box.width(), box.height())


# --- feed-forward meshes -------------------------------------------------------------------


def feedforward_geometry(
    mesh: FeedForwardMesh, settings: LayoutSettings | None = None
) -> FeedForwardGeometry:
    """The heater geometry :func:`feedforward_layout` draws ``mesh`` with
    (:func:`photonics.feedforward.chip_geometry.drawn_geometry` of ``settings``' cell, heater,
    margin and wire pitch): with the default settings it is the default chip model's
    (``ChipSpec(n_ports=mesh.n, mesh=mesh.kind)``)."""
    s = settings or LayoutSettings()
    return drawn_geometry(
        mesh,
        cell_length_um=s.mzi.length_um,
        heater_length_um=s.mzi.heater_length_um,
        mode_pitch_um=s.mzi.mode_pitch_um,
        margin_um=s.channel_margin_um,
        wire_pitch_um=(s.pads or PadSettings()).wire_pitch_um,
    )


@with_generic_pdk
def feedforward_layout(
    mesh: FeedForwardMesh,
    settings: LayoutSettings | None = None,
    *,
    graph: CircuitGraph | None = None,
) -> MeshLayout:
    """The layout of a Clements or Reck mesh (see the module docstring).

    ``graph`` draws other connections than the model's (e.g. a tampered copy, to show that the
    check catches it); the returned layout's ``model`` is the mesh's own graph either way. Every
    connection must join an east-facing port to a west-facing port further east.

    Every heater of the chip model (:mod:`photonics.chips.chip`) is drawn where
    :func:`feedforward_geometry` puts it: the MZIs' (``mzi_c{column}_m{mode}``), each MZI's
    input phase shifter (``ps_in_c{column}_m{mode}``, on its top input, centred in the gap
    before it) and the output phase screen (``ps_out_{mode}``, in the gap after the last
    column). With pads each is wired as :mod:`layouts.wiring` says; without, each terminal is
    its own metal.
    """
    s = settings or LayoutSettings()
    if not isinstance(mesh, FeedForwardMesh):
        raise SettingsError(f"expected a FeedForwardMesh, got {type(mesh).__name__}")
    model = feedforward_graph(mesh)
    drawn = model if graph is None else graph
    cell = heated_mzi(s.mzi)
    pitch_y = s.mzi.mode_pitch_um
    L = s.mzi.length_um
    y_mid = -(mesh.n - 1) * pitch_y / 2
    columns, modes = np.asarray(mesh.columns), np.asarray(mesh.modes)
    geometry = feedforward_geometry(mesh, s)
    pitch_x = geometry.column_pitch_um
    channel = pitch_x - L
    shifter = gf.components.straight_heater_metal(length=s.mzi.heater_length_um)
    shifters: list[tuple[str, int, gf.ComponentReference]] = []

    c = gf.Component()
    refs: dict[str, gf.ComponentReference] = {}
    for col, mode in zip(columns, modes, strict=True):
        name = mzi_name(col, mode)
        ref = c.add_ref(cell, name=name)
        ref.dmove((float(col * pitch_x), float(-mode * pitch_y)))
        refs[name] = ref

    x_left = -channel - s.io_length_um
    x_right = (mesh.n_columns - 1) * pitch_x + L + channel + s.io_length_um

    def end(terminal: str) -> tuple[float, float]:
        """(x, y) of a terminal of the drawn graph, um."""
        if "." in terminal:
            inst, port = terminal.split(".", 1)
            if inst not in refs or port not in ("o1", "o2", "o3", "o4"):
                raise SettingsError(f"graph terminal {terminal!r} is not an MZI port of the mesh")
            p = refs[inst].ports[port]
            return (p.dx, p.dy)
        for prefix, x in (("in", x_left), ("out", x_right)):
            rest = terminal.removeprefix(prefix)
            if terminal.startswith(prefix) and rest.isdigit() and int(rest) < mesh.n:
                return (x, -int(rest) * pitch_y)
        raise SettingsError(f"graph terminal {terminal!r} is not a port of the mesh")

    for k, (a, b) in enumerate(sorted(drawn.connections)):
        (xa, ya), (xb, yb) = end(a), end(b)
        if xa > xb:
            (xa, ya), (xb, yb), a, b = (xb, yb), (xa, ya), b, a
        out_ok = "." not in a or a.endswith((".o3", ".o4"))
        in_ok = "." not in b or b.endswith((".o1", ".o2"))
        if not (xb > xa and out_ok and in_ok):
            raise SettingsError(
                f"cannot draw connection {a} -- {b}: it must run from an out port (o3, o4) or "
                "input to an in port (o1, o2) or output further east"
            )
        centre = _shifter_centre(b, channel, pitch_x, L, mesh)
        if centre is not None and ya == yb:  # a phase shifter on this waveguide
            h = s.mzi.heater_length_um
            ps = c.add_ref(shifter, name=_shifter_name(b, mesh))
            ps.dmove((centre - h / 2, ya))
            found = _MZI_IN.match(b)  # the gap west of the MZI it feeds, or after the mesh
            shifters.append((ps.name, int(found.group(1)) if found else mesh.n_columns, ps))
            for x0, x1, part in ((xa, centre - h / 2, "a"), (centre + h / 2, xb, "b")):
                ref = c.add_ref(
                    gf.components.straight(length=round(x1 - x0, 3)), name=f"wg_{k}{part}"
                )
                ref.dmove((x0, ya))
            continue
        if ya == yb:
            piece = gf.components.straight(length=round(xb - xa, 3))
        else:
            piece = gf.components.bend_s(size=(round(xb - xa, 3), round(yb - ya, 3)))
        ref = c.add_ref(piece, name=f"wg_{k}")
        ref.dmove((xa, ya))
    for m in range(mesh.n):
        for prefix, x, orientation in (("in", x_left, 180), ("out", x_right, 0)):
            c.add_port(
                f"{prefix}{m}",
                center=(x, -m * pitch_y),
                width=0.5,
                orientation=orientation,
                layer=LAYER.WG,
                port_type="optical",
            )

    # an MZI's east wire runs in the gap east of its column, its return in the gap west of it
    terminals = [
        Terminal(name, int(col) + (port == "e2"), port, *_at(ref, port), False)
        for (name, ref), col in zip(refs.items(), columns, strict=True)
        for port in ("e1", "e2")
    ]
    terminals += [
        Terminal(name, gap, port, *_at(ref, side), True)
        for name, gap, ref in shifters
        for port, side in (("e1", "l_e1"), ("e2", "r_e3"))
    ]
    if s.pads is None:
        nets = tuple(Net(f"{t.element}.{t.port}", (probe(t),)) for t in terminals)
        n_pads = 0
    else:
        y_range = (pitch_y, -mesh.n * pitch_y)
        nets = wire_feedforward(
            c,
            terminals,
            s.pads,
            geometry,
            mesh.n_columns + 1,
            s.mzi.heater_length_um,
            s.channel_margin_um,
            y_mid,
            y_range,
        )
        n_pads = len(nets)
    name_top_cell(c, f"{mesh.kind}_{mesh.n}{'_pads' if s.pads else ''}")
    return MeshLayout(c, mesh.kind, model, nets, mesh.n_mzis, n_pads)


def _at(ref: gf.ComponentReference, port: str) -> tuple[float, float]:
    """(x, y) of a port of an instance, um."""
    return (ref.ports[port].dx, ref.ports[port].dy)


def _shifter_centre(
    terminal: str, channel: float, pitch_x: float, L: float, mesh: FeedForwardMesh
) -> float | None:
    """x (um) of the phase shifter on the waveguide that ends at ``terminal`` (an MZI's top
    input or a circuit output), centred in the channel before it; None: none there."""
    found = _MZI_IN.match(terminal)
    if found:
        return int(found.group(1)) * pitch_x - channel / 2
    if terminal.startswith("out"):
        return (mesh.n_columns - 1) * pitch_x + L + channel / 2
    return None


def _shifter_name(terminal: str, mesh: FeedForwardMesh) -> str:
    found = _MZI_IN.match(terminal)
    if found:
        return f"ps_in_c{found.group(1)}_m{found.group(2)}"
    return f"ps_out_{terminal.removeprefix('out')}"


_MZI_IN = re.compile(r"^mzi_c(\d+)_m(\d+)\.o1$")


def name_top_cell(c: gf.Component, base: str) -> None:
    """Name the top cell ``base``, or ``base_2``, ``base_3``, ... if that name is taken."""
    name, k = base, 1
    while c.kcl.layout.cell(name) is not None:
        k += 1
        name = f"{base}_{k}"
    c.name = name


# --- recirculating meshes ------------------------------------------------------------------


def _cell_directions(mesh: WaveguideMesh) -> np.ndarray:
    """(n_cells, 2) unit vector from end A to end B of each cell, from the model's geometry:
    arm 0-2 (face ``cell_faces[i, 0]``) lies on the left of A -> B."""
    if mesh.cell_faces is None or mesh.face_centers_um is None:
        raise SettingsError("the mesh has no face geometry: build it with a lattice constructor")
    out = np.empty((mesh.n_cells, 2))
    for i, (left, right) in enumerate(mesh.cell_faces):
        face, sign = (left, 1.0) if left >= 0 else (right, -1.0)
        normal = sign * (mesh.face_centers_um[face] - mesh.cell_positions_um[i])
        normal /= np.hypot(*normal)
        out[i] = (normal[1], -normal[0])
    return out


@gf.cell
def link_arc(straight_a: float, radius: float, angle: float, straight_b: float) -> gf.Component:
    """A waveguide: ``straight_a`` um straight, an arc of ``radius`` um turning ``angle``
    degrees (left positive), ``straight_b`` um straight; ``o1`` at (0, 0) facing west."""
    path = gf.Path()
    if straight_a > 0:
        path += gf.path.straight(length=straight_a)
    if angle != 0:
        path += gf.path.arc(radius=radius, angle=angle)
    if straight_b > 0:
        path += gf.path.straight(length=straight_b)
    return gf.path.extrude(path, cross_section="strip")


def _link_shape(
    a: tuple[float, float, float], b: tuple[float, float, float]
) -> tuple[float, float, float, float]:
    """(straight_a, radius, angle, straight_b) of the smooth link from port ``a`` to port
    ``b``, each (x, y, orientation in degrees, facing out of its cell)."""
    (xa, ya, oa), (xb, yb, ob) = a, b
    ua = np.array([math.cos(math.radians(oa)), math.sin(math.radians(oa))])
    ub = np.array([math.cos(math.radians(ob)), math.sin(math.radians(ob))])
    turn = (ob + 180 - oa + 180) % 360 - 180  # travel direction at b is -ub
    gap = np.array([xb - xa, yb - ya])
    if abs(turn) < 1e-6:
        return (round(float(np.hypot(*gap)), 3), 0.0, 0.0, 0.0)
    # rays a + s ua and b + t ub meet where s ua - t ub = gap
    s, t = np.linalg.solve(np.column_stack([ua, -ub]), gap)
    tangent = min(s, t)
    if tangent <= 0:
        raise SettingsError(f"ports at {a} and {b} face away from each other")
    radius = tangent / math.tan(math.radians(abs(turn)) / 2)
    return (round(s - tangent, 3), round(radius, 3), round(turn, 6), round(t - tangent, 3))


@with_generic_pdk
def waveguide_mesh_layout(
    mesh: WaveguideMesh, settings: LayoutSettings | None = None
) -> MeshLayout:
    """The layout of a recirculating mesh (see the module docstring). Heater terminals are not
    wired (``settings.pads`` is not used): each is its own piece of metal, ready for a bump."""
    s = settings or LayoutSettings()
    if not isinstance(mesh, WaveguideMesh):
        raise SettingsError(f"expected a WaveguideMesh, got {type(mesh).__name__}")
    L, pitch = s.mzi.length_um, s.mzi.mode_pitch_um
    if 0.8 * mesh.unit_length_um <= L:
        raise SettingsError(
            f"the MZI cell ({L} um) does not fit a lattice edge of {mesh.unit_length_um} um"
        )
    cell = heated_mzi(s.mzi)
    c = gf.Component()
    refs = []
    for i, (u, pos) in enumerate(zip(_cell_directions(mesh), mesh.cell_positions_um, strict=True)):
        angle = math.degrees(math.atan2(u[1], u[0]))
        centre = np.array([L / 2, -pitch / 2])
        rot = np.array([[u[0], -u[1]], [u[1], u[0]]])
        origin = pos - rot @ centre
        ref = c.add_ref(cell, name=cell_name(i))
        ref.dcplx_trans = kdb.DCplxTrans(1, angle, False, float(origin[0]), float(origin[1]))
        refs.append(ref)

    def port(pe: int) -> tuple[float, float, float]:
        p = refs[pe // 4].ports[f"o{pe % 4 + 1}"]
        return (p.dx, p.dy, p.orientation)

    for k, (a, b) in enumerate(mesh.links):
        pa = port(int(a))
        ref = c.add_ref(link_arc(*_link_shape(pa, port(int(b)))), name=f"wg_{k}")
        ref.dcplx_trans = kdb.DCplxTrans(1, pa[2], False, pa[0], pa[1])
    for p, pe in enumerate(mesh.edge_ports):
        c.add_port(f"p{p}", port=refs[int(pe) // 4].ports[f"o{int(pe) % 4 + 1}"])
    nets = []
    for i, ref in enumerate(refs):
        for name in ("e1", "e2"):
            q = ref.ports[name]
            theta = math.radians(q.orientation)
            x = q.dx - PROBE_INSET_UM * math.cos(theta)
            y = q.dy - PROBE_INSET_UM * math.sin(theta)
            label = f"{cell_name(i)}.{name}"
            nets.append(Net(label, (Probe(label, x, y),)))
    name_top_cell(c, f"{mesh.kind}_mesh_{mesh.n_cells}_cells")
    return MeshLayout(c, mesh.kind, waveguide_mesh_graph(mesh), tuple(nets), mesh.n_cells, 0)
