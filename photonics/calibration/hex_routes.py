"""Routes for measuring a cell of a recirculating mesh through the photodiodes at its
switch endpoints (:mod:`photonics.calibration.hex_selfcal`): breadth-first searches over port-ends
through the cells whose calibration is known, for the *input*, *dark* and *on* routes of a cell."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from photonics.recirculating.waveguide_mesh import (
    BAR,
    CROSS,
    WaveguideMesh,
    reach,
    state_between,
    through,
)


@dataclass(frozen=True)
class CellMeasurement:
    """How one cell was measured: the endpoint lit, the port-end where light enters the cell,
    the state that sends it down the dark route, the other cells set (cell, state) and the
    endpoint read (-1: the sum of all but the dark route's end)."""

    cell: int
    source: int
    entry: int
    dark_state: int
    route: tuple[tuple[int, int], ...]
    detector: int


def _hops(partner: np.ndarray, pred: np.ndarray, arrival: int) -> tuple[int, list[tuple[int, int]]]:
    """The start port-end of the search that reached ``arrival`` and the (cell, state) of the
    cells crossed on the way."""
    hops = []
    y = arrival
    while pred[y] >= 0:
        e = int(pred[y])
        hops.append((e // 4, state_between(e, int(partner[y]))))
        y = e
    return y, hops[::-1]


@dataclass(frozen=True)
class Way:
    """One way to measure a cell: how, and the endpoint its dark route leaves at."""

    measurement: CellMeasurement
    dark_end: int  # endpoint where the dark route leaves (-1 when it is not an endpoint)


class RoutePlanner:
    """Finds how to measure a cell through the cells ``allowed`` (set by their calibration):
    the searches from the endpoints and from every edge port are made once per ``allowed``,
    and again without a route's cells only when the shortest routes collide."""

    def __init__(self, mesh: WaveguideMesh, endpoints: Sequence[int], allowed: np.ndarray):
        self.partner = mesh.partner()
        self.allowed = allowed
        self.end_ports = mesh.edge_ports[np.asarray(endpoints, dtype=np.int64)]
        self.edge_ports = mesh.edge_ports
        self.endpoint_of = {int(e): i for i, e in enumerate(self.end_ports)}
        self.from_ends = reach(self.partner, self.end_ports, allowed)
        self.from_edges = reach(self.partner, self.edge_ports, allowed)
        self._found: dict[tuple, dict[str, tuple[int, list[tuple[int, int]]]]] = {}

    def _route(
        self, tree: np.ndarray, starts: np.ndarray, arrival: int, avoid: set[int]
    ) -> tuple[int, list[tuple[int, int]]] | None:
        """(start port-end, hops) of a route arriving at ``arrival`` that crosses none of the
        cells ``avoid``: the shortest one's, else a search without them; None if none."""
        if tree[arrival] == -2:
            return None
        start, hops = _hops(self.partner, tree, arrival)
        if start in starts and not avoid & {c for c, _ in hops}:
            return start, hops
        allowed = self.allowed.copy()
        allowed[list(avoid)] = False
        tree = reach(self.partner, starts, allowed)
        if tree[arrival] == -2:
            return None
        start, hops = _hops(self.partner, tree, arrival)
        return (start, hops) if not avoid & {c for c, _ in hops} else None

    def _routes(
        self, cell: int, entry: int, dark: int, turn: tuple[str, ...]
    ) -> dict[str, tuple[int, list[tuple[int, int]]]]:
        """The routes ``"in"`` (an endpoint to ``entry``), ``"dark"`` (the dark exit to any
        edge port) and ``"on"`` (the other exit to another endpoint), searched in the order
        ``turn``, each avoiding the cells of those found before; the ones found."""
        key = (cell, entry, dark, turn)
        if key in self._found:  # the planner's cells do not change: nor do its routes
            return self._found[key]
        found: dict[str, tuple[int, list[tuple[int, int]]]] = {}
        for name in turn:
            used = {cell} | {c for _, hops in found.values() for c, _ in hops}
            if name == "dark":
                route = self._route(self.from_edges, self.edge_ports, through(entry, dark), used)
            else:
                lit = {found[k][0] for k in ("in", "on") if k in found}
                starts = self.end_ports[[int(e) not in lit for e in self.end_ports]]
                arrival = entry if name == "in" else through(entry, 1 - dark)
                route = self._route(self.from_ends, starts, arrival, used)
            if route is not None:
                found[name] = route
            elif name != "on":
                break
        self._found[key] = found
        return found

    def ways(
        self, cell: int, darks: Sequence[int] = (BAR, CROSS), every_turn: bool = False
    ) -> Iterator[Way]:
        """The ways to measure ``cell`` with its dark state one of ``darks``: per entry
        port-end and dark state, the first order of route searches that finds an input and a
        dark route (``every_turn``: each order that does)."""
        for entry in range(4 * cell, 4 * cell + 4):
            for dark in darks:
                for turn in (("in", "dark", "on"), ("on", "in", "dark"), ("dark", "on", "in")):
                    found = self._routes(cell, entry, dark, turn)
                    if "in" not in found or "dark" not in found:
                        continue
                    hops = [hop for k in ("in", "dark", "on") if k in found for hop in found[k][1]]
                    detector = self.endpoint_of[found["on"][0]] if "on" in found else -1
                    start, edge = found["in"][0], found["dark"][0]
                    how = CellMeasurement(
                        cell, self.endpoint_of[start], entry, dark, tuple(hops), detector
                    )
                    yield Way(how, self.endpoint_of.get(edge, -1))
                    if not every_turn:
                        break

    def plan(self, cell: int) -> Way | None:
        """The shortest way to measure ``cell``, one with an on route first; None if none."""
        ways = list(self.ways(cell))
        if not ways:
            return None
        return min(ways, key=lambda w: (w.measurement.detector < 0, len(w.measurement.route)))


__all__ = ["CellMeasurement", "RoutePlanner", "Way"]
