"""The mesh topologies a switch can be built on, by name: one registry that the command line,
the SDK's emulated switch, the demo, the bench and the layouts read their choices from.

A :class:`Topology` says what a name means: the switch ports it is built for, its
:class:`Geometry` for a number of ports (the mesh, and on a recirculating mesh the edge ports of
the endpoints), its fabric (the planner that turns a matching into cell states), and which
gdsfactory builder draws it (a ``"module:function"`` name, so that
this package never imports :mod:`layouts`). :func:`feedforward` and :func:`recirculating` make
the two kinds; :func:`register` adds one, so a new topology is one registration.

Registered here: ``clements`` and ``reck`` (feed-forward meshes, any even or odd port count),
``hexagonal`` (a recirculating honeycomb sized for 4 to 32 endpoints), ``switch6x6`` (6 west
inputs to 6 east outputs on 71 cells, a permutation switch) and ``switch32`` (the 32-port
switch on the 9x9 mesh).

The emulated chips read their meshes from here (``ChipSpec(mesh=name)``), so the registry
knows no chip: :func:`photonics.chips.build.build_chip` makes a topology's chip. It imports no
numerics either: the meshes, router and planners are imported when a geometry or fabric is
first made, so the command line can list the names cheaply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from photonics.errors import PortError, SettingsError

if TYPE_CHECKING:  # imported where used: the command line lists the names cheaply
    from photonics.chips.switch import Fabric
    from photonics.feedforward.meshes import FeedForwardMesh
    from photonics.recirculating.waveguide_mesh import WaveguideMesh

Kind = Literal["feedforward", "recirculating"]


@dataclass(frozen=True)
class Geometry:
    """A switch's mesh and, on a recirculating mesh, the edge ports of its endpoints: where
    endpoint ``i`` sends (``inputs[i]``) and receives (``outputs[i]``), the same port unless
    the switch is directed."""

    mesh: FeedForwardMesh | WaveguideMesh
    inputs: tuple[int, ...] = ()
    outputs: tuple[int, ...] = ()


def _feedforward_fabric(geometry: Geometry) -> Fabric:
    from photonics.chips.switch import FeedForwardFabric
    from photonics.feedforward.meshes import FeedForwardMesh

    assert isinstance(geometry.mesh, FeedForwardMesh)
    return FeedForwardFabric(geometry.mesh)


def _mesh_fabric(geometry: Geometry) -> Fabric:
    from photonics.chips.switch import MeshFabric
    from photonics.recirculating.routing import Router
    from photonics.recirculating.waveguide_mesh import WaveguideMesh

    assert isinstance(geometry.mesh, WaveguideMesh)
    return MeshFabric(Router(geometry.mesh), geometry.inputs)


@dataclass(frozen=True)
class Topology:
    """One registered topology (see the module docstring).

    - ``ports``: (fewest, most) switch ports it is built for; ``default_ports`` in that range;
    - ``geometry(ports)``: its mesh and endpoints for that many ports;
    - ``directed``: endpoints send on one port and receive on another (a permutation switch,
      which routes permutations, not matchings, and cannot be an emulated matching switch);
    - ``make_fabric(geometry)``: its planner;
    - ``layout``: ``"module:function"`` of its gdsfactory builder, called as
      ``builder(geometry.mesh, settings)``.
    """

    name: str
    summary: str
    kind: Kind
    ports: tuple[int, int]
    default_ports: int
    geometry: Callable[[int], Geometry]
    make_fabric: Callable[[Geometry], Fabric] = field(repr=False)
    directed: bool = False
    layout: str = ""

    def __post_init__(self) -> None:
        low, high = self.ports
        if not 2 <= low <= self.default_ports <= high:
            raise SettingsError(
                f"topology {self.name!r}: ports {self.ports} must hold default_ports "
                f"{self.default_ports}, from 2 up"
            )

    def check_ports(self, ports: int) -> int:
        """``ports`` if this topology is built for that many, else :class:`PortError`."""
        low, high = self.ports
        if isinstance(ports, bool) or not isinstance(ports, int) or not low <= ports <= high:
            span = f"{low}" if low == high else f"{low}..{high}"
            raise PortError(f"a {self.name} switch has {span} ports, got {ports!r}")
        return ports

    def fabric(self, ports: int) -> Fabric:
        """Its planner for ``ports`` endpoints."""
        return self.make_fabric(self.geometry(self.check_ports(ports)))


_REGISTRY: dict[str, Topology] = {}


def register(topology: Topology) -> Topology:
    """Add ``topology`` under its name (a name registered again is replaced); returns it."""
    if not isinstance(topology, Topology):
        raise SettingsError(f"register needs a Topology, got {type(topology).__name__}")
    _REGISTRY[topology.name] = topology
    return topology


def unregister(name: str) -> None:
    """Remove a registered topology (a test's toy topology, say)."""
    topology(name)
    del _REGISTRY[name]


def topology(name: str) -> Topology:
    """The topology registered as ``name``; :class:`SettingsError` naming the choices."""
    found = _REGISTRY.get(name)
    if found is None:
        raise SettingsError(f"mesh must be one of {', '.join(_REGISTRY)}; got {name!r}")
    return found


def names(kind: Kind | None = None, directed: bool | None = None) -> tuple[str, ...]:
    """Registered names in registration order, of one ``kind`` and/or ``directed``-ness."""
    return tuple(
        t.name
        for t in _REGISTRY.values()
        if (kind is None or t.kind == kind) and (directed is None or t.directed == directed)
    )


def feedforward(
    name: str,
    summary: str,
    mesh: Callable[[int], FeedForwardMesh],
    ports: tuple[int, int] = (2, 256),
    default_ports: int = 8,
    layout: str = "layouts.meshes:feedforward_layout",
) -> Topology:
    """A feed-forward topology: ``mesh(ports)`` is its mesh (endpoint ``i`` sends into input
    ``i`` and receives from output ``i``); its chip is a :class:`~photonics.chips.chip.Chip`."""
    return Topology(
        name,
        summary,
        "feedforward",
        ports,
        default_ports,
        lambda n: Geometry(mesh(n)),
        _feedforward_fabric,
        layout=layout,
    )


def recirculating(
    name: str,
    summary: str,
    geometry: Callable[[int], Geometry],
    ports: tuple[int, int],
    default_ports: int,
    directed: bool = False,
    layout: str = "layouts.meshes:waveguide_mesh_layout",
) -> Topology:
    """A recirculating topology of the given ``geometry``; its chip is a
    :class:`~photonics.chips.mesh_chip.MeshChip`, its planner the router."""
    return Topology(
        name,
        summary,
        "recirculating",
        ports,
        default_ports,
        geometry,
        _mesh_fabric,
        directed,
        layout,
    )


def _clements(ports: int) -> FeedForwardMesh:
    from photonics.feedforward.meshes import ClementsMesh

    return ClementsMesh(ports)


def _reck(ports: int) -> FeedForwardMesh:
    from photonics.feedforward.meshes import ReckMesh

    return ReckMesh(ports)


def _hexagonal(ports: int) -> Geometry:
    from photonics.recirculating.switch_geometry import hexagonal_switch

    mesh, ends = hexagonal_switch(ports)
    return Geometry(mesh, tuple(ends), tuple(ends))


def _switch_6x6(ports: int) -> Geometry:
    from photonics.recirculating.switch_geometry import switch_6x6

    mesh, inputs, outputs = switch_6x6()
    return Geometry(mesh, tuple(inputs), tuple(outputs))


register(feedforward("clements", "rectangular feed-forward MZI mesh (Clements)", _clements))
register(feedforward("reck", "triangular feed-forward MZI mesh (Reck)", _reck))
register(
    recirculating(
        "hexagonal",
        "recirculating hexagonal mesh, 4-32 endpoints on its edge",
        _hexagonal,
        (4, 32),
        8,
    )
)
register(
    recirculating(
        "switch6x6",
        "6 west inputs to 6 east outputs on a 71-cell hexagonal mesh",
        _switch_6x6,
        (6, 6),
        6,
        directed=True,
    )
)
register(
    recirculating(
        "switch32", "32 endpoints on the 9x9 hexagonal mesh (278 cells)", _hexagonal, (32, 32), 32
    )
)
