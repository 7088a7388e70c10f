"""Layout versus model: the optical graph, the metal, and the layout evaluated as a circuit.

- :func:`extract_graph`: gdsfactory's netlist of the top cell (port-level connectivity of its
  instances), with every chain of waveguide pieces reduced to one connection, as a
  :class:`layouts.graph.CircuitGraph` of the named elements;
- :func:`metal_check`: the routing metal merged into separate regions (klayout), each
  expected terminal (heater contact, pad) located in one, compared with the expected nets:
  shorts, opens and floating metal are named;
- :func:`heaters_match`: the heaters drawn against a chip model's heater positions (count and
  places);
- :func:`check_layout`: the graph and the metal against the layout's model, and the heaters
  against a chip model's when given;
- :func:`layout_transfer`: the extracted graph of a feed-forward mesh evaluated with the
  project's MZI model (:func:`photonics.devices.mzi.transfer`), to compare with
  :meth:`photonics.feedforward.meshes.FeedForwardMesh.transfer`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import gdsfactory as gf
import klayout.db as kdb
import numpy as np
import shapely
from gdsfactory.get_netlist import SmartPortMatcher

from layouts.cells import DBU_UM, ELEMENT_PREFIXES, METAL, with_generic_pdk
from layouts.graph import OPEN, CircuitGraph, GraphDifference, compare, connection
from layouts.meshes import MeshLayout, Net, Probe
from photonics.devices.mzi import MZIImperfections, imperfect_transfer, transfer
from photonics.errors import SettingsError
from photonics.feedforward.meshes import FeedForwardMesh, MeshSettings

#: Ports closer than this (nm) are joined; rotated cells put ports off the 1 nm grid.
PORT_TOLERANCE_NM = 5

_MZI = re.compile(r"^mzi_c(\d+)_m(\d+)$")


def is_element(name: str) -> bool:
    """Whether an instance name is a model element (not a piece of waveguide or a pad)."""
    return name.startswith(ELEMENT_PREFIXES)


@with_generic_pdk
def extract_graph(component: gf.Component) -> CircuitGraph:
    """The element-level graph of ``component``'s top cell.

    From gdsfactory's netlist: each element port is followed through the waveguide pieces it
    connects to (instances with two optical ports) to the element port or circuit port at the
    other end, or to :data:`layouts.graph.OPEN` where a chain ends unconnected.
    """
    netlist = component.get_netlist(
        on_dangling_port="ignore",
        on_multi_connect="ignore",
        port_matcher=SmartPortMatcher(position_tolerance_dbu=PORT_TOLERANCE_NM),
    )
    partners: dict[str, list[str]] = {}
    for net in netlist["nets"]:
        partners.setdefault(net["p1"], []).append(net["p2"])
        partners.setdefault(net["p2"], []).append(net["p1"])
    circuit_port = {inst_port: top for top, inst_port in netlist["ports"].items()}
    optical: dict[str, list[str]] = {}
    for inst in component.insts:
        optical[inst.name] = [p.name for p in inst.ports if p.port_type == "optical"]
    elements = {name for name in optical if is_element(name)}
    for name, ports in optical.items():
        if name not in elements and len(ports) not in (0, 2):
            raise SettingsError(
                f"instance {name} has {len(ports)} optical ports: name it as an element "
                f"({', '.join(ELEMENT_PREFIXES)}...) or use two-port waveguide pieces"
            )

    def outward(inst_port: str, hops: int = 0) -> set[str]:
        """The terminals reached looking out of ``inst_port`` (an 'inst,port' string); more
        than one where ports overlap (a waveguide split without a splitter)."""
        if inst_port in circuit_port:
            return {circuit_port[inst_port]}
        if not partners.get(inst_port) or hops > len(optical):
            return {OPEN}
        reached: set[str] = set()
        for nxt in partners[inst_port]:
            inst, port = nxt.split(",", 1)
            if inst in elements:
                reached.add(f"{inst}.{port}")
            elif nxt in circuit_port:
                reached.add(circuit_port[nxt])
            else:
                other = next(p for p in optical[inst] if p != port)
                reached |= outward(f"{inst},{other}", hops + 1)
        return reached

    conns = set()
    for name in elements:
        for port in optical[name]:
            conns |= {connection(f"{name}.{port}", t) for t in outward(f"{name},{port}")}
    for top, inst_port in netlist["ports"].items():
        inst, port = inst_port.split(",", 1)
        if inst in elements:
            conns.add(connection(top, f"{inst}.{port}"))
        elif inst in optical and len(optical[inst]) == 2:
            other = next(p for p in optical[inst] if p != port)
            conns |= {connection(top, t) for t in outward(f"{inst},{other}")}
    return CircuitGraph(frozenset(elements), frozenset(conns))


@dataclass(frozen=True)
class MetalCheck:
    """Separate regions of routing metal against the nets the layout should have.

    ``regions``: regions found; ``expected``: nets expected (one per heater terminal, or per
    wired net: a heater contact with its pad, a shared return with its pad); ``problems``:
    readable lines naming shorts, opens and floating metal.
    """

    regions: int
    expected: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.regions == self.expected and not self.problems

    def __str__(self) -> str:
        head = f"{self.regions} metal regions, {self.expected} expected"
        return "\n".join([head, *self.problems])


def metal_regions(component: gf.Component) -> list[kdb.Polygon]:
    """The routing metal of ``component`` (all levels of hierarchy) merged into separate
    regions, in database units."""
    region = kdb.Region(component.begin_shapes_rec(component.kcl.layer(*METAL)))
    return list(region.merged().each())


@with_generic_pdk
def metal_check(layout: MeshLayout) -> MetalCheck:
    """Locate every expected terminal on the merged metal and name what differs from
    ``layout.nets``: two nets on one region (short), a net on several regions or a terminal on
    no metal (open), a region with no terminal (floating)."""
    polygons = metal_regions(layout.component)
    shapes = [
        shapely.Polygon(
            [(p.x, p.y) for p in poly.each_point_hull()],
            [[(p.x, p.y) for p in poly.each_point_hole(h)] for h in range(poly.holes())],
        )
        for poly in polygons
    ]
    probes = [(net, probe) for net in layout.nets for probe in net.probes]
    points = shapely.points(
        [(probe.x_um / DBU_UM, probe.y_um / DBU_UM) for _, probe in probes]
    ).reshape(-1)
    tree = shapely.STRtree(shapes)
    found = tree.query(points, predicate="intersects")
    where: dict[int, set[int]] = {}
    for i, region in zip(found[0], found[1], strict=True):
        where.setdefault(int(i), set()).add(int(region))
    problems = []
    nets_of_region: dict[int, set[str]] = {}
    regions_of_net: dict[str, set[int]] = {}
    for i, (net, probe) in enumerate(probes):
        if i not in where:
            problems.append(f"open: no metal at {probe.label}")
        for region in where.get(i, ()):
            nets_of_region.setdefault(region, set()).add(net.name)
            regions_of_net.setdefault(net.name, set()).add(region)
    for net in layout.nets:
        if len(regions_of_net.get(net.name, ())) > 1:
            parts = [_labels_on(net, probes, where, r) for r in sorted(regions_of_net[net.name])]
            problems.append(f"open: {net.name} is split: {' | '.join(parts)}")
    for region in sorted(nets_of_region):
        names = sorted(nets_of_region[region])
        if len(names) > 1:
            problems.append(f"short: {' and '.join(names)} are joined")
    for region, poly in enumerate(polygons):
        if region not in nets_of_region:
            box = poly.bbox().center()
            problems.append(
                f"floating metal at ({box.x * DBU_UM:.1f}, {box.y * DBU_UM:.1f}) um, no terminal"
            )
    return MetalCheck(len(polygons), len(layout.nets), tuple(problems))


def _labels_on(
    net: Net, probes: list[tuple[Net, Probe]], where: dict[int, set[int]], region: int
) -> str:
    return ", ".join(
        probe.label
        for i, (n, probe) in enumerate(probes)
        if n is net and region in where.get(i, ())
    )


@dataclass(frozen=True)
class LayoutCheck:
    """The checks of one layout: the graph difference, the metal, their times (s), and the
    heaters against a chip model's (None: not compared)."""

    graph: GraphDifference
    metal: MetalCheck
    graph_s: float
    metal_s: float
    heaters: HeaterMatch | None = None

    @property
    def ok(self) -> bool:
        return self.graph.ok and self.metal.ok and (self.heaters is None or self.heaters.ok)

    def lines(self) -> list[str]:
        graph = "graph: matches the model" if self.graph.ok else "graph: DIFFERS from the model"
        metal = "metal: ok" if self.metal.ok else "metal: PROBLEMS"
        return [
            f"{graph} ({self.graph_s:.2f} s)",
            *(f"  {line}" for line in self.graph.lines()),
            f"{metal}, {self.metal.regions} regions, {self.metal.expected} expected "
            f"({self.metal_s:.2f} s)",
            *(f"  {line}" for line in self.metal.problems),
            *(self.heaters.lines() if self.heaters is not None else []),
        ]


@with_generic_pdk
def check_layout(layout: MeshLayout, heaters_um: np.ndarray | None = None) -> LayoutCheck:
    """Extract ``layout``'s graph and compare it with its model; check its metal; with
    ``heaters_um`` (a chip model's heater positions, :func:`heaters_match`) its heaters."""
    t0 = time.perf_counter()
    diff = compare(layout.model, extract_graph(layout.component))
    t1 = time.perf_counter()
    metal = metal_check(layout)
    t2 = time.perf_counter()
    heaters = None if heaters_um is None else heaters_match(layout, heaters_um)
    return LayoutCheck(diff, metal, t1 - t0, t2 - t1, heaters)


@with_generic_pdk
def layout_transfer(
    graph: CircuitGraph,
    mesh: FeedForwardMesh,
    settings: MeshSettings,
    imperfections: MZIImperfections | None = None,
) -> np.ndarray:
    """The (n, n) transfer matrix of a feed-forward mesh's layout graph (``out = M @ in``).

    Each ``mzi_c{c}_m{m}`` of ``graph`` gets the setting (and imperfections) of the model's MZI
    at that column and mode; light is carried along the graph's connections from ``in{j}`` to
    ``out{i}`` (a connection to nowhere loses it), then the output phase screen applies. For a
    layout that matches its model this equals ``mesh.transfer(settings, imperfections)``.
    """
    if settings.batch_shape:
        raise SettingsError("layout_transfer takes one setting, not a batch")
    slot = {
        f"mzi_c{c}_m{m}": k for k, (c, m) in enumerate(zip(mesh.columns, mesh.modes, strict=True))
    }
    if imperfections is None:
        mats = transfer(settings.theta, settings.phi)
    else:
        mats = imperfect_transfer(settings.theta, settings.phi, imperfections)
    other: dict[str, str] = {}
    for a, b in graph.connections:
        other[a] = b
        other[b] = a
    n = mesh.n
    field: dict[str, np.ndarray] = {f"in{j}": np.eye(n, dtype=complex)[j] for j in range(n)}
    zero = np.zeros(n, dtype=complex)

    pending = sorted(e for e in graph.elements if _MZI.match(e))
    mzis = set(pending)

    def arriving(terminal: str) -> np.ndarray | None:
        """The light arriving at an in port; None while its source MZI is not evaluated."""
        source = other.get(terminal, OPEN)
        if source in field:
            return field[source]
        waiting = source.endswith((".o3", ".o4")) and source.split(".")[0] in mzis
        return None if waiting else zero  # joined to nothing, or to another in port

    for name in pending:
        if name not in slot:
            raise SettingsError(f"element {name} is not an MZI of the {mesh.kind} mesh")
    while pending:
        left = []
        for name in pending:
            top, bottom = arriving(f"{name}.o1"), arriving(f"{name}.o2")
            if top is None or bottom is None:
                left.append(name)
                continue
            T = mats[slot[name]]
            field[f"{name}.o3"] = T[0, 0] * top + T[0, 1] * bottom
            field[f"{name}.o4"] = T[1, 0] * top + T[1, 1] * bottom
        if len(left) == len(pending):  # a loop, or light from nowhere: nothing arrives
            for name in left:
                field[f"{name}.o3"] = field[f"{name}.o4"] = zero
            break
        pending = left
    M = np.array([field.get(other.get(f"out{i}", OPEN), zero) for i in range(n)])
    return M * np.exp(1j * settings.output_phase)[:, None]


# --- heaters: the layout's against the model's -------------------------------------------


@dataclass(frozen=True)
class HeaterMatch:
    """Heaters drawn against the heaters a chip model has (count, and positions in um).

    ``drawn``/``expected``: how many; ``missing``: model heaters (channel numbers) with no
    drawn heater within ``tolerance_um``; ``extra``: drawn heaters (their element names) with
    no model heater that near; ``max_error_um``: the largest distance from a model heater to
    its nearest drawn one."""

    drawn: int
    expected: int
    missing: tuple[int, ...]
    extra: tuple[str, ...]
    max_error_um: float
    tolerance_um: float

    @property
    def ok(self) -> bool:
        return self.drawn == self.expected and not self.missing and not self.extra

    def lines(self) -> list[str]:
        head = f"heaters: {self.drawn} drawn, {self.expected} in the model"
        if self.ok:
            return [f"{head}; every one within {self.tolerance_um:g} um of its own"]
        return [
            f"{head}; worst position difference {self.max_error_um:.4g} um",
            f"  model heaters not drawn: {len(self.missing)} (channels {list(self.missing[:8])}"
            f"{' ...' if len(self.missing) > 8 else ''})",
            f"  drawn heaters the model lacks: {len(self.extra)}",
        ]


def drawn_heaters_um(component: gf.Component) -> dict[str, tuple[float, float]]:
    """Every heater the top cell draws, by instance name: the midpoint of its two terminals,
    um: an element's heater (``e1``, ``e2``) and each phase shifter (``ps_...``, a metal
    heater on a waveguide: ``l_e1``, ``r_e3``)."""
    found = {}
    for inst in component.insts:
        names = {p.name for p in inst.ports}
        if is_element(inst.name) and {"e1", "e2"} <= names:
            a, b = inst.ports["e1"], inst.ports["e2"]
        elif inst.name.startswith("ps_") and {"l_e1", "r_e3"} <= names:
            a, b = inst.ports["l_e1"], inst.ports["r_e3"]
        else:
            continue
        found[inst.name] = ((a.dx + b.dx) / 2, (a.dy + b.dy) / 2)
    return found


def heaters_match(
    layout: MeshLayout, positions_um: np.ndarray, tolerance_um: float = 1.0
) -> HeaterMatch:
    """Compare the heaters ``layout`` draws with a chip model's heater positions
    (``positions_um`` (H, 2), um, model frame: x east, y growing with the mode number; the
    layout's y runs the other way, mode ``m`` at ``-m`` times the mode pitch): as sets, each
    within ``tolerance_um`` of the other's."""
    drawn = drawn_heaters_um(layout.component)
    names = list(drawn)
    at = np.array([drawn[n] for n in names]).reshape(-1, 2)
    model = np.asarray(positions_um, dtype=float) * np.array([1.0, -1.0])
    if not len(at) or not len(model):
        return HeaterMatch(
            len(at), len(model), tuple(range(len(model))), tuple(names), np.inf, tolerance_um
        )
    d = np.linalg.norm(model[:, None, :] - at[None, :, :], axis=-1)
    missing = tuple(int(h) for h in np.flatnonzero(d.min(axis=1) > tolerance_um))
    extra = tuple(names[i] for i in np.flatnonzero(d.min(axis=0) > tolerance_um))
    return HeaterMatch(
        len(at), len(model), missing, extra, float(d.min(axis=1).max()), tolerance_um
    )
