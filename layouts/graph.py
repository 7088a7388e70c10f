"""The element-level graph of a circuit, from the model or from a layout, and their difference.

A :class:`CircuitGraph` is a set of named elements and a set of optical connections. A
connection joins two *terminals*: ``"<element>.<port>"`` for a port of an element
(``mzi_c2_m1.o3``), or a bare name for a port of the whole circuit (``in3``, ``p17``). Waveguides
are not elements: a chain of them is one connection. Names come from the model's own indices,
so a layout and its model compare by set equality (:func:`compare`).

Element names:

- feed-forward meshes (:class:`photonics.feedforward.meshes.FeedForwardMesh`):
  ``mzi_c{column}_m{mode}`` for the MZI in ``column`` on modes ``(mode, mode + 1)``; circuit ports
  ``in{m}``, ``out{m}``; MZI ports ``o1``/``o2`` (top/bottom mode in), ``o3``/``o4`` (top/bottom
  mode out);
- recirculating meshes (:class:`photonics.recirculating.waveguide_mesh.WaveguideMesh`):
  ``cell_{id}``, with port-end ``4 id + k`` as port ``o{k + 1}``; edge port ``p`` as circuit port
  ``p{p}``;
- rings: ``ring_{k}``, ports ``o1`` in, ``o2`` through (the bus below the ring), ``o3`` drop,
  ``o4`` add (the bus above: light circulating the ring leaves it westward).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from photonics.errors import SettingsError
from photonics.feedforward.meshes import FeedForwardMesh
from photonics.recirculating.waveguide_mesh import WaveguideMesh

#: The terminal at the far end of a waveguide chain that ends in no port.
OPEN = "(open)"

Connection = tuple[str, str]


def _natural(text: str) -> list[object]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def connection(a: str, b: str) -> Connection:
    """The connection between terminals ``a`` and ``b``, in a canonical (natural) order;
    :data:`OPEN` always comes second."""
    if a == OPEN or (b != OPEN and _natural(b) < _natural(a)):
        return (b, a)
    return (a, b)


def mzi_name(column: int, mode: int) -> str:
    """Instance name of the MZI in ``column`` on modes ``(mode, mode + 1)``."""
    return f"mzi_c{int(column)}_m{int(mode)}"


def cell_name(cell: int) -> str:
    """Instance name of cell ``cell`` of a recirculating mesh."""
    return f"cell_{int(cell)}"


@dataclass(frozen=True)
class CircuitGraph:
    """Named elements and the optical connections between their terminals."""

    elements: frozenset[str]
    connections: frozenset[Connection]

    def __post_init__(self) -> None:
        object.__setattr__(self, "elements", frozenset(self.elements))
        object.__setattr__(
            self, "connections", frozenset(connection(a, b) for a, b in self.connections)
        )

    def lines(self) -> list[str]:
        """One line per connection, ``a -- b``, in natural order (a stable snapshot)."""
        return [f"{a} -- {b}" for a, b in sorted(self.connections, key=_sort_key)]


def _sort_key(conn: Connection) -> tuple[list[object], list[object]]:
    return (_natural(conn[0]), _natural(conn[1]))


@dataclass(frozen=True)
class GraphDifference:
    """What a layout's graph lacks (``missing_*``) and has beyond (``extra_*``) its model's."""

    missing_elements: tuple[str, ...] = ()
    extra_elements: tuple[str, ...] = ()
    missing_connections: tuple[Connection, ...] = ()
    extra_connections: tuple[Connection, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not (
            self.missing_elements
            or self.extra_elements
            or self.missing_connections
            or self.extra_connections
        )

    def lines(self) -> list[str]:
        """Readable lines, each naming the element and port concerned."""
        out = [f"missing element {e}" for e in self.missing_elements]
        out += [f"unexpected element {e}" for e in self.extra_elements]
        out += [f"missing connection {a} -- {b}" for a, b in self.missing_connections]
        out += [f"unexpected connection {a} -- {b}" for a, b in self.extra_connections]
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines()) if self.lines() else "layout matches the model"


def compare(model: CircuitGraph, layout: CircuitGraph) -> GraphDifference:
    """The difference of ``layout`` from ``model`` (empty when they are equal as sets)."""
    return GraphDifference(
        missing_elements=tuple(sorted(model.elements - layout.elements, key=_natural)),
        extra_elements=tuple(sorted(layout.elements - model.elements, key=_natural)),
        missing_connections=tuple(sorted(model.connections - layout.connections, key=_sort_key)),
        extra_connections=tuple(sorted(layout.connections - model.connections, key=_sort_key)),
    )


def feedforward_graph(mesh: FeedForwardMesh) -> CircuitGraph:
    """The model graph of a feed-forward mesh, from its geometry (``columns``, ``modes``).

    Light on mode ``m`` crosses, in column order, every MZI that acts on ``m``; each of those is
    joined to the next one on ``m`` (out port of the one, in port of the next: ``o3``/``o1`` when
    ``m`` is the MZI's top mode, ``o4``/``o2`` when it is its bottom mode), the first one to
    ``in{m}`` and the last one to ``out{m}``. A mode no MZI touches joins ``in{m}`` to
    ``out{m}``.
    """
    if not isinstance(mesh, FeedForwardMesh):
        raise SettingsError(f"expected a FeedForwardMesh, got {type(mesh).__name__}")
    elements = [mzi_name(c, m) for c, m in zip(mesh.columns, mesh.modes, strict=True)]
    conns = []
    for mode in range(mesh.n):
        prev = f"in{mode}"
        on_mode = np.flatnonzero((mesh.modes == mode) | (mesh.modes == mode - 1))
        for k in on_mode[np.argsort(mesh.columns[on_mode], kind="stable")]:
            top = mesh.modes[k] == mode
            name = elements[k]
            conns.append((prev, f"{name}.{'o1' if top else 'o2'}"))
            prev = f"{name}.{'o3' if top else 'o4'}"
        conns.append((prev, f"out{mode}"))
    return CircuitGraph(frozenset(elements), frozenset(conns))


def waveguide_mesh_graph(mesh: WaveguideMesh) -> CircuitGraph:
    """The model graph of a recirculating mesh: a connection per link (port-end ``4 i + k`` is
    port ``o{k + 1}`` of ``cell_{i}``) and one per edge port (``p{p}`` to its port-end)."""
    if not isinstance(mesh, WaveguideMesh):
        raise SettingsError(f"expected a WaveguideMesh, got {type(mesh).__name__}")

    def end(pe: int) -> str:
        cell, k = divmod(int(pe), 4)
        return f"{cell_name(cell)}.o{k + 1}"

    conns = [(end(a), end(b)) for a, b in mesh.links]
    conns += [(f"p{p}", end(pe)) for p, pe in enumerate(mesh.edge_ports)]
    return CircuitGraph(frozenset(cell_name(i) for i in range(mesh.n_cells)), frozenset(conns))


def ring_graph(index: int = 0) -> CircuitGraph:
    """The model graph of one add-drop ring ``ring_{index}`` with circuit ports ``in``,
    ``through``, ``add`` and ``drop``."""
    name = f"ring_{int(index)}"
    ports = {"in": "o1", "through": "o2", "drop": "o3", "add": "o4"}
    return CircuitGraph(
        frozenset({name}), frozenset((top, f"{name}.{p}") for top, p in ports.items())
    )
