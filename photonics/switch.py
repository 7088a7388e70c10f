"""Circuit-switch plans: which cell state realises a matching among a switch's endpoints.

A switch joins ``n`` endpoints (accelerators); a :class:`~photonics.matching.Matching` says who
talks to whom. Two fabrics compute the cell states:

- :class:`FeedForwardFabric`: a Clements or Reck mesh. Endpoint ``i`` transmits into input ``i``
  and receives from output ``i``, so a pair ``(a, b)`` is two directed circuits, ``a -> b`` and
  ``b -> a``, routed by bar/cross settings (:meth:`~photonics.feedforward.FeedForwardMesh.route`;
  every matching is realizable: the mesh is rearrangeably non-blocking);
- :class:`MeshFabric`: a recirculating waveguide mesh with endpoints on chosen edge ports; a
  pair is one reciprocal path found by :class:`~photonics.routing.Router` (not every matching
  is realizable).

A :class:`SwitchPlan` holds every cell's angle ``theta`` (rad; 0 bar, pi/2 cross) and each
directed circuit's cells and predicted insertion loss (dB, cells x cell loss, plus waveguide
loss on a recirculating mesh).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from photonics.errors import MatchingError, ShapeError
from photonics.feedforward import FeedForwardMesh
from photonics.matching import Matching
from photonics.mesh_scattering import DEFAULT_CELL_LOSS_DB
from photonics.routing import Router, requests_for


@dataclass(frozen=True)
class Circuit:
    """Light from endpoint ``source`` to endpoint ``target``: the cells it crosses, in order,
    and its predicted insertion loss, dB."""

    source: int
    target: int
    cells: tuple[int, ...]
    loss_db: float


@dataclass(frozen=True, eq=False)
class SwitchPlan:
    """A matching, the cell angles that realise it (rad, one per cell) and its circuits."""

    matching: Matching
    theta: np.ndarray
    circuits: tuple[Circuit, ...]

    def circuit_from(self, source: int) -> Circuit | None:
        """The circuit that carries ``source``'s light, or None when it is dark."""
        return next((c for c in self.circuits if c.source == source), None)

    def changed_cells(self, other: SwitchPlan) -> np.ndarray:
        """Ids of the cells whose state differs between the two plans."""
        if other.theta.shape != self.theta.shape:
            raise ShapeError(f"plans of {other.theta.size} and {self.theta.size} cells")
        return np.flatnonzero(~np.isclose(self.theta, other.theta, atol=1e-9))


class Fabric(Protocol):
    """What the firmware needs from a switch fabric."""

    @property
    def n_ports(self) -> int: ...

    @property
    def n_cells(self) -> int: ...

    def plan(self, matching: Matching) -> SwitchPlan:
        """The plan for ``matching``; raises :class:`MatchingError` when it is not realizable."""
        ...


def _check(matching: Matching, n_ports: int) -> None:
    if not isinstance(matching, Matching):
        raise MatchingError(f"expected a Matching, got {matching!r}")
    if matching.n_ports != n_ports:
        raise ShapeError(f"matching of {matching.n_ports} ports on a {n_ports}-port switch")


@dataclass(frozen=True)
class FeedForwardFabric:
    """A feed-forward mesh as a switch of ``mesh.n`` endpoints; ``cell_loss_db`` per MZI."""

    mesh: FeedForwardMesh
    cell_loss_db: float = DEFAULT_CELL_LOSS_DB

    @property
    def n_ports(self) -> int:
        return self.mesh.n

    @property
    def n_cells(self) -> int:
        return self.mesh.n_mzis

    def plan(self, matching: Matching) -> SwitchPlan:
        _check(matching, self.n_ports)
        theta = self.mesh.route(matching).theta
        cells = self.trace(theta)
        circuits = []
        for a, b in matching.pairs:
            for src, dst in ((a, b), (b, a)):
                circuits.append(Circuit(src, dst, cells[src], len(cells[src]) * self.cell_loss_db))
        return SwitchPlan(matching, theta, tuple(circuits))

    def trace(self, theta: np.ndarray) -> list[tuple[int, ...]]:
        """For each input, the MZIs (slot order) its light crosses at ``theta`` (bar/cross
        angles): one pass over the mesh, carrying every input's mode along."""
        source = list(range(self.n_ports))  # source[mode]: the input whose light is there
        cells: list[list[int]] = [[] for _ in range(self.n_ports)]
        cross = np.sin(theta) ** 2 > 0.5
        modes = self.mesh.modes
        for k in np.argsort(self.mesh.columns, kind="stable").tolist():
            top = int(modes[k])
            cells[source[top]].append(k)
            cells[source[top + 1]].append(k)
            if cross[k]:
                source[top], source[top + 1] = source[top + 1], source[top]
        return [tuple(c) for c in cells]


@dataclass(frozen=True)
class MeshFabric:
    """A recirculating mesh as a switch: ``endpoints[i]`` is endpoint ``i``'s edge port."""

    router: Router
    endpoints: tuple[int, ...]

    def __init__(self, router: Router, endpoints: Sequence[int]) -> None:
        object.__setattr__(self, "router", router)
        object.__setattr__(self, "endpoints", tuple(int(p) for p in endpoints))

    @property
    def n_ports(self) -> int:
        return len(self.endpoints)

    @property
    def n_cells(self) -> int:
        return self.router.mesh.n_cells

    def plan(self, matching: Matching) -> SwitchPlan:
        _check(matching, self.n_ports)
        result = self.router.route(requests_for(matching, self.endpoints))
        if not result.ok:
            why = "; ".join(f"{pair}: {reason}" for pair, reason in result.failures.items())
            raise MatchingError(f"matching is not realizable on this mesh: {why}")
        index = {p: i for i, p in enumerate(self.endpoints)}
        circuits = []
        for path in result.paths:
            a, b = (index[p] for p in path.ports)
            circuits.append(Circuit(a, b, path.cells, path.loss_db))
            circuits.append(Circuit(b, a, path.cells[::-1], path.loss_db))
        return SwitchPlan(matching, result.theta(), tuple(circuits))
