"""Routing light paths through a recirculating waveguide mesh.

A request joins two edge ports (numbered as ``WaveguideMesh.edge_ports``): a :class:`Matching`
(one reciprocal path per pair) or a :class:`Permutation` (a path per input). A path enters a
cell at one port-end and leaves at another, which sets the cell's state (bar or cross). Two paths
may share a cell only if both need the same state (they then use its two arms); no port-end
carries two paths. Cells marked dead are not used.

Routing is negotiated congestion (as in the published penalty routers): every request takes
its cheapest path (cell loss and length), with a growing penalty on cells and port-ends that
other paths use in a conflicting way, and is re-routed until no conflict is left or the
iteration limit is reached. Deterministic for a given mesh and request.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from photonics.errors import PortError, SettingsError
from photonics.matching import Matching, Permutation
from photonics.mzi import MZIImperfections
from photonics.waveguide_mesh import (
    BAR,
    CROSS,
    WaveguideMesh,
    scattering,
    state_between,
    switch_6x6_mesh,
    through,
)

#: Default insertion loss of one cell, dB, and of one link (unit waveguide), dB.
DEFAULT_CELL_LOSS_DB = 0.5
DEFAULT_LINK_LOSS_DB = 0.0
#: Iterations without fewer conflicts after which negotiation stops.
STALL_ITERATIONS = 15


@dataclass(frozen=True)
class Path:
    """One routed request: the edge ports it joins, the cells it crosses with their states, the
    port-ends it occupies, and its insertion loss (dB) from cell and link losses."""

    ports: tuple[int, int]
    cells: tuple[int, ...]
    states: tuple[int, ...]
    port_ends: tuple[int, ...]
    loss_db: float


@dataclass(frozen=True)
class RouteResult:
    """Routed paths, the state of every cell (unused cells parked), what failed and why."""

    paths: tuple[Path, ...]
    states: np.ndarray  # (n_cells,) BAR/CROSS
    failures: dict[tuple[int, int], str] = field(default_factory=dict)
    iterations: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures

    def theta(self) -> np.ndarray:
        """Cell angles (rad) for the scattering solve: 0 for bar, pi/2 for cross."""
        return np.where(self.states == CROSS, np.pi / 2, 0.0)


def requests_for(
    request: Matching | Permutation, endpoints: Sequence[int] | tuple[Sequence[int], Sequence[int]]
) -> list[tuple[int, int]]:
    """Edge-port pairs of a request on chosen edge ports.

    A :class:`Matching` of k endpoints takes ``endpoints``, the edge port of each endpoint; a
    :class:`Permutation` takes ``(inputs, outputs)``, the edge ports of its inputs and outputs.
    """
    if isinstance(request, Matching):
        ends = list(endpoints)
        if len(ends) != request.n_ports:
            raise PortError(
                f"{request.n_ports} endpoints need {request.n_ports} edge ports, got {len(ends)}"
            )
        return [(int(ends[a]), int(ends[b])) for a, b in request.pairs]
    if isinstance(request, Permutation):
        inputs, outputs = (list(x) for x in endpoints)  # type: ignore[misc]
        if len(inputs) != request.n_ports or len(outputs) != request.n_ports:
            raise PortError(
                f"a {request.n_ports}-port permutation needs {request.n_ports} input and output "
                f"edge ports, got {len(inputs)} and {len(outputs)}"
            )
        return [(int(inputs[i]), int(outputs[j])) for i, j in request.pairs()]
    raise SettingsError(f"expected a Matching or a Permutation, got {request!r}")


class Router:
    """Routes requests on one mesh; holds the mesh's graph and the dead cells."""

    def __init__(
        self,
        mesh: WaveguideMesh,
        dead_cells: Sequence[int] = (),
        cell_loss_db: float = DEFAULT_CELL_LOSS_DB,
        link_loss_db: float = DEFAULT_LINK_LOSS_DB,
        max_iterations: int = 60,
    ) -> None:
        if cell_loss_db < 0 or link_loss_db < 0:
            raise SettingsError(f"losses must be >= 0 dB, got {cell_loss_db}, {link_loss_db}")
        self.mesh = mesh
        self.partner = mesh.partner()
        self.dead = np.zeros(mesh.n_cells, bool)
        for c in dead_cells:
            if not 0 <= c < mesh.n_cells:
                raise PortError(f"dead cell {c} is out of range 0..{mesh.n_cells - 1}")
            self.dead[c] = True
        self.port_end_of = np.asarray(mesh.edge_ports, dtype=np.int64)
        self.cell_loss_db = cell_loss_db
        self.link_loss_db = link_loss_db
        self.max_iterations = max_iterations
        self._partner_list = self.partner.tolist()  # plain lists: the search reads them a lot
        self._dead_list = self.dead.tolist()

    def _check(self, pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
        checked: list[tuple[int, int]] = []
        used: dict[int, tuple[int, int]] = {}
        for pair in pairs:
            a, b = (int(p) for p in pair)
            if a == b:
                raise PortError(f"edge port {a} cannot be joined to itself")
            for p in (a, b):
                if not 0 <= p < self.mesh.n_ports:
                    raise PortError(f"edge port {p} is out of range 0..{self.mesh.n_ports - 1}")
                if self.dead[self.port_end_of[p] // 4]:
                    raise PortError(f"edge port {p} is on dead cell {self.port_end_of[p] // 4}")
                if p in used:
                    raise PortError(f"edge port {p} is in two requests: {used[p]} and {(a, b)}")
                used[p] = (a, b)
            checked.append((a, b))
        return checked

    # ---- one path -----------------------------------------------------------------------
    def _search(self, src: int, dst: int, cell_cost: list, end_cost: list):
        """Cheapest path from edge port-end ``src`` to ``dst``: Dijkstra over entry port-ends.

        ``cell_cost[c, state]`` and ``end_cost[port_end]`` are the current penalties.
        Returns the list of (entry, exit) port-end pairs, or None.
        """
        if self.dead[src // 4]:
            return None
        partner, dead, link_cost = self._partner_list, self._dead_list, self.link_cost
        best = {src: 0.0}
        back: dict[int, tuple[int, int]] = {}
        heap = [(0.0, src)]
        found: tuple[float, int, int] | None = None  # cost, last entry, exit at dst
        while heap:
            cost, entry = heapq.heappop(heap)
            if found is not None and cost >= found[0]:
                break  # nothing cheaper is left
            if cost > best.get(entry, np.inf):
                continue
            cell, k = divmod(entry, 4)
            costs = cell_cost[cell]
            # `through` inlined: this loop is the router's hot path
            for state, out in ((BAR, 4 * cell + (k + 2) % 4), (CROSS, 4 * cell + 3 - k)):
                step = cost + costs[state] + end_cost[entry] + end_cost[out]
                if out == dst:
                    if found is None or step < found[0]:
                        found = (step, entry, out)
                    continue
                nxt = partner[out]
                if nxt < 0 or dead[nxt // 4]:
                    continue
                step += link_cost
                if step < best.get(nxt, np.inf):
                    best[nxt] = step
                    back[nxt] = (entry, out)
                    heapq.heappush(heap, (step, nxt))
        if found is None:
            return None
        hops = [(found[1], found[2])]
        node = found[1]
        while node != src:
            node, prev_out = back[node]
            hops.append((node, prev_out))
        return hops[::-1], found[0]

    @property
    def link_cost(self) -> float:
        return self.link_loss_db + 1e-3  # a little length, so shorter paths win ties

    # ---- all requests ---------------------------------------------------------------------
    def route(self, pairs: Iterable[tuple[int, int]], orders: int = 6) -> RouteResult:
        """Route every edge-port pair (see the module docstring and :func:`requests_for`).

        Negotiation depends on the order in which requests are re-routed: when it stalls, it is
        run again with the requests rotated, up to ``orders`` times (deterministically).
        """
        pairs = self._check(pairs)
        result = self._negotiate(pairs)
        for shift in range(1, min(orders, len(pairs))):
            if result.ok:
                break
            retry = self._negotiate(pairs[shift:] + pairs[:shift])
            spent = result.iterations + retry.iterations
            result = replace(
                retry if len(retry.failures) < len(result.failures) else result, iterations=spent
            )
        return result

    def _negotiate(self, pairs: list[tuple[int, int]]) -> RouteResult:
        n_cells = self.mesh.n_cells
        history = np.zeros((n_cells, 2))
        hops: dict[tuple[int, int], list[tuple[int, int]]] = {}
        failures: dict[tuple[int, int], str] = {}
        present = 1.0
        iterations, fewest, stalled = 0, np.inf, 0
        use_state, use_end = np.zeros((n_cells, 2)), np.zeros(4 * n_cells)  # kept up to date
        for _ in range(self.max_iterations):
            iterations += 1
            for pair in pairs:
                if pair in hops:
                    _occupy(hops.pop(pair), use_state, use_end, -1)
                # a cell costs its loss, plus penalties for other paths needing the other state
                cell_cost = self.cell_loss_db + history + present * use_state[:, ::-1]
                end_cost = present * 10.0 * use_end
                src, dst = self.port_end_of[pair[0]], self.port_end_of[pair[1]]
                found = self._search(int(src), int(dst), cell_cost.tolist(), end_cost.tolist())
                if found is None:
                    failures[pair] = "no path: every route is blocked by dead cells or the edge"
                    continue
                failures.pop(pair, None)
                hops[pair] = found[0]
                _occupy(found[0], use_state, use_end, +1)
            conflicts = self._conflicts(hops)
            if not conflicts.any():
                break
            count = int(conflicts.sum())
            if count < fewest:
                fewest, stalled = count, 0
            stalled += 1
            if stalled > STALL_ITERATIONS:  # penalties no longer help: give up early
                break
            history += conflicts
            present *= 1.6
        if self._conflicts(hops).any():
            for pair in pairs:
                if pair in hops and self._conflicts(hops, only=pair).any():
                    failures[pair] = f"still in conflict after {iterations} iterations of penalties"
        return self._result(pairs, hops, failures, iterations)

    def _occupancy(self, hops) -> tuple[np.ndarray, np.ndarray]:
        use_state = np.zeros((self.mesh.n_cells, 2))
        use_end = np.zeros(4 * self.mesh.n_cells)
        for path in hops.values():
            _occupy(path, use_state, use_end, +1)
        return use_state, use_end

    def _conflicts(self, hops, only=None) -> np.ndarray:
        """Per cell and state, how many conflicting uses there are (0 when routable)."""
        use_state, use_end = self._occupancy(hops)
        both = (use_state[:, BAR] > 0) & (use_state[:, CROSS] > 0)
        shared = (use_end.reshape(-1, 4) > 1).any(axis=1)
        bad = (both | shared)[:, None] * (use_state > 0)
        if only is not None:
            mine = np.zeros_like(bad, dtype=bool)
            for entry, out in hops[only]:
                mine[entry // 4, state_between(entry, out)] = True
            bad = bad * mine
        return bad.astype(float)

    def _result(self, pairs, hops, failures, iteration) -> RouteResult:
        states = np.full(self.mesh.n_cells, -1)
        paths = []
        for pair in pairs:
            if pair not in hops or pair in failures:
                continue
            h = hops[pair]
            cells = tuple(entry // 4 for entry, _ in h)
            st = tuple(state_between(entry, out) for entry, out in h)
            for c, s in zip(cells, st, strict=True):
                states[c] = s
            ends = tuple(e for hop in h for e in hop)
            loss = len(cells) * self.cell_loss_db + (len(cells) - 1) * self.link_loss_db
            paths.append(Path(pair, cells, st, ends, loss))
        states = self._park(states, paths)
        return RouteResult(tuple(paths), states, failures, iteration)

    def _park(self, states: np.ndarray, paths: list[Path]) -> np.ndarray:
        """Set each unused cell to the state whose arms join fewest port-ends next to two
        different paths (light that leaks out of one path should not find another)."""
        owner = np.full(4 * self.mesh.n_cells, -1)
        for i, p in enumerate(paths):
            owner[list(p.port_ends)] = i
        for c in np.flatnonzero(states < 0):
            score = []
            for state in (BAR, CROSS):
                bad = 0
                for k in (0, 1):
                    a = 4 * c + k
                    b = through(a, state)
                    na, nb = self.partner[a], self.partner[b]
                    oa = owner[na] if na >= 0 else -1
                    ob = owner[nb] if nb >= 0 else -1
                    bad += oa >= 0 and ob >= 0 and oa != ob
                score.append(bad)
            states[c] = BAR if score[BAR] <= score[CROSS] else CROSS
        return states


def _occupy(path, use_state: np.ndarray, use_end: np.ndarray, sign: int) -> None:
    """Add (``sign`` +1) or remove (-1) a path's uses of cell states and port-ends."""
    for entry, out in path:
        use_state[entry // 4, state_between(entry, out)] += sign
        use_end[entry] += sign
        use_end[out] += sign


def is_realizable(
    mesh: WaveguideMesh, pairs: Iterable[tuple[int, int]], dead_cells: Sequence[int] = ()
) -> bool:
    """True when every edge-port pair routes without conflict."""
    return Router(mesh, dead_cells).route(pairs).ok


def round_robin(n: int, shift: int = 0) -> list[Matching]:
    """The circle method: ``n - 1`` perfect matchings of ``n`` (even) endpoints that together
    join every pair exactly once. ``shift`` relabels the endpoints (another 1-factorisation)."""
    if n < 2 or n % 2:
        raise PortError(f"round_robin needs an even number of endpoints >= 2, got {n}")
    label = [(i + shift) % n for i in range(n)]
    rounds = []
    for r in range(n - 1):
        ring = [n - 1] + [(r + i) % (n - 1) for i in range(n - 1)]
        pairs = [(label[ring[i]], label[ring[n - 1 - i]]) for i in range(n // 2)]
        rounds.append(Matching(pairs, n))
    return rounds


@dataclass(frozen=True)
class Cover:
    """A set of routable matchings that together join every pair of endpoints."""

    matchings: tuple[Matching, ...]
    results: tuple[RouteResult, ...]
    note: str
    unroutable: tuple[tuple[int, int], ...] = ()  # endpoint pairs no path joins, even alone

    @property
    def size(self) -> int:
        return len(self.matchings)


def all_to_all_cover(router: Router, endpoints: Sequence[int], attempts: int = 8) -> Cover:
    """Fewest routable matchings (as found) joining every pair of ``endpoints`` (edge ports).

    Tries the circle method's ``n - 1`` perfect matchings (the optimum) under ``attempts``
    relabelings and keeps the relabeling with most routable rounds; the pairs of rounds that do
    not route are then packed greedily into further matchings, each split until it routes.
    """
    n = len(endpoints)
    best: tuple[list[tuple[Matching, RouteResult]], list[Matching]] | None = None
    for shift in range(attempts):
        good, bad = [], []
        for m in round_robin(n, shift):
            result = router.route(requests_for(m, endpoints))
            (good if result.ok else bad).append((m, result) if result.ok else m)
        if best is None or len(bad) < len(best[1]):
            best = (good, bad)
        if not bad:
            break
    assert best is not None
    good, bad = best
    left = [pair for m in bad for pair in m.pairs]
    extra, unroutable = _pack(router, endpoints, left, n)
    note = (
        f"optimal: {n - 1} perfect matchings"
        if not bad
        else f"{len(bad)} of the {n - 1} perfect matchings did not route; their pairs took "
        f"{len(extra)} more matchings"
    )
    if unroutable:
        note += f"; {len(unroutable)} pairs cannot be routed even alone"
    chosen = good + extra
    return Cover(tuple(m for m, _ in chosen), tuple(r for _, r in chosen), note, tuple(unroutable))


def _pack(router: Router, endpoints: Sequence[int], pairs: list, n: int):
    """Greedy: fill a matching with pairs that still route with it; repeat. Returns the
    matchings and the pairs that route with nothing."""
    out, unroutable = [], []
    pending = list(pairs)
    while pending:
        taken: list[tuple[int, int]] = []
        used: set[int] = set()
        result = None
        for pair in list(pending):
            if pair[0] in used or pair[1] in used:
                continue
            trial = router.route(requests_for(Matching([*taken, pair], n), endpoints))
            if trial.ok:
                taken.append(pair)
                used.update(pair)
                result = trial
                pending.remove(pair)
        if not taken:  # the first pending pair cannot route even alone
            unroutable.append(pending.pop(0))
            continue
        out.append((Matching(taken, n), result))
    return out, unroutable


@dataclass(frozen=True)
class Verification:
    """A routed configuration checked by the scattering solve (dB): each path's measured and
    expected insertion loss, and the worst port isolation (a routed output's signal over the
    strongest other routed input reaching it)."""

    measured_loss_db: tuple[float, ...]
    expected_loss_db: tuple[float, ...]
    worst_isolation_db: float

    @property
    def max_loss_error_db(self) -> float:
        return max(
            (abs(m - e) for m, e in zip(self.measured_loss_db, self.expected_loss_db, strict=True)),
            default=0.0,
        )


def verify(
    mesh: WaveguideMesh,
    result: RouteResult,
    imperfections: MZIImperfections | None = None,
    cell_loss_db: float = DEFAULT_CELL_LOSS_DB,
    waveguide_loss_db_per_cm: float = 2.0,
    wavelength_nm: float = 1550.0,
) -> Verification:
    """Solve the mesh's scattering with ``result``'s cell states and compare with the paths.

    Expected loss of a path: its cells times the cell loss plus its links times one unit length
    of waveguide loss.
    """
    S = scattering(
        mesh,
        result.theta(),
        wavelength_nm=wavelength_nm,
        cell_loss_db=cell_loss_db,
        waveguide_loss_db_per_cm=waveguide_loss_db_per_cm,
        imperfections=imperfections,
    )
    P = np.abs(S) ** 2
    link_db = waveguide_loss_db_per_cm * mesh.unit_length_um * 1e-4
    measured, expected = [], []
    inputs = [p.ports[0] for p in result.paths]
    worst = np.inf
    for path in result.paths:
        a, b = path.ports
        measured.append(float(-10 * np.log10(P[b, a])))
        expected.append(len(path.cells) * cell_loss_db + (len(path.cells) - 1) * link_db)
        others = [P[b, x] for x in inputs if x != a]
        if others:
            worst = min(worst, float(10 * np.log10(P[b, a] / max(others))))
    return Verification(tuple(measured), tuple(expected), worst)


def switch_6x6() -> tuple[WaveguideMesh, list[int], list[int]]:
    """The 6x6 circuit switch: :func:`~photonics.waveguide_mesh.switch_6x6_mesh` (71 cells) with
    6 west inputs and 6 east outputs (edge-port numbers).

    Of each side's 10 ports, these 6 are pairwise compatible: some ports near a corner can only
    enter the mesh through the arm another port needs, which a pairwise routing scan finds.
    """
    mesh = switch_6x6_mesh()
    west, east = list(mesh.side_ports("west")), list(mesh.side_ports("east"))
    return mesh, [west[i] for i in (2, 3, 4, 5, 6, 7)], [east[i] for i in (0, 1, 3, 6, 8, 9)]
