"""Circuit-switch plans: which cell state realises a matching among a switch's endpoints.

A switch joins ``n`` endpoints (accelerators); a :class:`~photonics.matching.Matching` says who
talks to whom. Two fabrics compute the cell states:

- :class:`FeedForwardFabric`: a Clements or Reck mesh. Endpoint ``i`` transmits into input ``i``
  and receives from output ``i``, so a pair ``(a, b)`` is two directed circuits, ``a -> b`` and
  ``b -> a``, routed by bar/cross settings
  (:meth:`~photonics.feedforward.meshes.FeedForwardMesh.route`; every matching is realizable: the
  mesh is rearrangeably non-blocking);
- :class:`MeshFabric`: a recirculating waveguide mesh with endpoints on chosen edge ports; a
  pair is one reciprocal path found by :class:`~photonics.recirculating.routing.Router` (not every
  matching is realizable).

A :class:`SwitchPlan` holds every cell's angle ``theta`` (rad; 0 bar, pi/2 cross) and each
directed circuit's cells and predicted insertion loss (dB, cells x cell loss, plus waveguide
loss on a recirculating mesh).

Each fabric also re-routes part of a running plan (:meth:`Fabric.rerouter`, a :class:`Rerouter`):
new pairs join while other pairs keep every cell their circuits cross (failover, tenant
isolation). The feed-forward rerouter runs compiled dynamic programming over the mesh's cells
(:mod:`photonics.chips._pinned_kernel`); the recirculating one runs the router's Dijkstra over
port-ends.

Over 500 lines on purpose: the firmware plans through the :class:`Fabric` and
:class:`Rerouter` interfaces defined here, and both implementations sit beside them so the
contract and its two fabrics are read (and changed) together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from photonics.chips import _pinned_kernel as kernel
from photonics.errors import MatchingError, ShapeError
from photonics.feedforward.meshes import FeedForwardMesh
from photonics.matching import Matching, Permutation
from photonics.progress import Progress
from photonics.recirculating.covers import Cover, all_to_all_cover
from photonics.recirculating.mesh_scattering import DEFAULT_CELL_LOSS_DB
from photonics.recirculating.routing import Router, requests_for
from photonics.recirculating.waveguide_mesh import BAR, CROSS, through
from photonics.recirculating.waveguide_mesh import trace as trace_mesh

#: Two endpoints that a matching joins (both directions).
Pair = tuple[int, int]


def cross_of(theta: np.ndarray) -> np.ndarray:
    """Bar/cross state of each cell (True: cross) of bar/cross angles ``theta`` (rad)."""
    return np.sin(np.asarray(theta, dtype=float)) ** 2 > 0.5


def theta_of(cross: np.ndarray) -> np.ndarray:
    """Read-only angles (rad: 0 bar, pi/2 cross) of cell states (True: cross)."""
    theta = np.where(cross, np.pi / 2, 0.0)
    theta.setflags(write=False)
    return theta


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

    @property
    def cross(self) -> np.ndarray:
        """Bar/cross state of each cell (True: cross)."""
        return cross_of(self.theta)


class Rerouter(Protocol):
    """A running plan that takes new pairs while other pairs keep their circuits.

    Cell states are one bool per cell (True: cross). A *kept* pair's circuits keep every cell
    they cross in its state, and no new light enters where theirs runs.
    """

    def pinned(self, keep: Sequence[Pair], new: Sequence[Pair]) -> list[np.ndarray]:
        """Cell states joining ``keep`` and ``new``: the new pairs routed in turn (each switching
        fewest cells, then pinned) around the kept ones. A feed-forward mesh routes a pair's two
        directed circuits one after the other and tries both orders (up to two results); a
        recirculating mesh routes one reciprocal path per pair. Empty when a pair finds no path.
        """
        ...

    def released(
        self, keep: Sequence[Pair], new: Sequence[Pair], max_released: int
    ) -> np.ndarray | None:
        """Rip up and re-route: as :meth:`pinned`, but the kept pairs whose light stands in the
        way of a new pair are routed again after it (at most ``max_released`` of them); None
        when that does not route."""
        ...

    def completions(
        self, matching: Matching, budget: int, score: Callable[[np.ndarray], tuple]
    ) -> None:
        """Offer ``score`` (lower is better) the states of plans of ``matching`` that differ
        only in where dark ports' light goes, the fabric's own plan first, then up to ``budget``
        more searched from the best so far. A recirculating mesh offers none: its plans carry
        no light on dark ports, and its router's plan is a slow search of its own."""
        ...

    def plan(self, matching: Matching, cross: np.ndarray) -> SwitchPlan:
        """The plan of ``matching`` at cell states ``cross`` (e.g. from :meth:`pinned`); raises
        :class:`MatchingError` when they do not join its pairs."""
        ...


class Fabric(Protocol):
    """What the firmware needs from a switch fabric."""

    @property
    def n_ports(self) -> int: ...

    @property
    def n_cells(self) -> int: ...

    def plan(self, matching: Matching) -> SwitchPlan:
        """The plan for ``matching``; raises :class:`MatchingError` when it is not realizable."""
        ...

    def rerouter(self, current: SwitchPlan) -> Rerouter:
        """``current`` (a plan of this fabric), ready to take new pairs around kept ones."""
        ...

    def all_to_all_cover(
        self,
        attempts: int = 8,
        isolation_db: float | None = None,
        progress: Progress | None = None,
    ) -> Cover | None:
        """The fabric's own search for matchings that join every pair of endpoints once, for
        when the circle method's rounds do not all plan (``attempts`` relabelings; keeping only
        matchings whose predicted isolation reaches ``isolation_db``, dB; ``progress`` as in
        :mod:`photonics.progress`); None when it has none."""
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
        return self._plan_at(matching, self.mesh.route(matching).theta)

    def _plan_at(self, matching: Matching, theta: np.ndarray) -> SwitchPlan:
        """The plan of ``matching`` at angles ``theta`` that join its pairs."""
        cells = self.trace(theta)
        circuits = []
        for a, b in matching.pairs:
            for src, dst in ((a, b), (b, a)):
                circuits.append(Circuit(src, dst, cells[src], len(cells[src]) * self.cell_loss_db))
        return SwitchPlan(matching, theta, tuple(circuits))

    def rerouter(self, current: SwitchPlan) -> Rerouter:
        return FeedForwardRerouter(self, current)

    def all_to_all_cover(
        self,
        attempts: int = 8,
        isolation_db: float | None = None,
        progress: Progress | None = None,
    ) -> None:
        """None: the mesh realizes every matching, so the circle method needs no other search
        (and no isolation is predicted)."""
        return None

    def trace(self, theta: np.ndarray) -> list[tuple[int, ...]]:
        """For each input, the MZIs (slot order) its light crosses at ``theta`` (bar/cross
        angles): one pass over the mesh, carrying every input's mode along."""
        source = list(range(self.n_ports))  # source[mode]: the input whose light is there
        cells: list[list[int]] = [[] for _ in range(self.n_ports)]
        cross = cross_of(theta)
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

    def rerouter(self, current: SwitchPlan) -> Rerouter:
        return MeshRerouter(self, current)

    def with_dead_cells(
        self, dead_cells: Sequence[int], extinction_db: np.ndarray | None = None
    ) -> MeshFabric:
        """This fabric with its router leaving ``dead_cells`` out (e.g. the cells a
        calibration could not fit) and, given ``extinction_db`` (a calibration's per-state
        figures, dB, ``(2, n_cells)`` [bar, cross], NaN for a state without one), predicting
        isolation with them (the router's own figure in place of a NaN); its other settings
        kept."""
        r = self.router
        ext = r.extinction_db
        if extinction_db is not None:
            ext = np.where(np.isnan(extinction_db), ext, extinction_db)
        router = Router(
            r.mesh,
            dead_cells,
            r.cell_loss_db,
            r.link_loss_db,
            ext,
            r.max_iterations,
            r.isolation_target_db,
            r.isolation_budget,
            r.max_path_loss_db,
        )
        return MeshFabric(router, self.endpoints)

    def all_to_all_cover(
        self,
        attempts: int = 8,
        isolation_db: float | None = None,
        progress: Progress | None = None,
    ) -> Cover | None:
        """The router's cover (:func:`~photonics.recirculating.covers.all_to_all_cover`) for an even
        number of endpoints; None for an odd number."""
        if self.n_ports % 2:
            return None
        return all_to_all_cover(self.router, self.endpoints, attempts, isolation_db, progress)


def _directed(pairs: Sequence[Pair]) -> list[Pair]:
    """Both directed circuits of each pair, ``(a, b)`` first."""
    return [c for a, b in pairs for c in ((a, b), (b, a))]


class FeedForwardRerouter:
    """:class:`Rerouter` of a feed-forward mesh: a directed circuit at a time, by the compiled
    dynamic programming of :mod:`photonics.chips._pinned_kernel` (the kernels compile on first use
    and are cached on disk)."""

    def __init__(self, fabric: FeedForwardFabric, current: SwitchPlan) -> None:
        self.fabric = fabric
        self.modes = np.ascontiguousarray(fabric.mesh.modes, dtype=np.int64)
        self.cross = current.cross
        lit = np.zeros(fabric.n_ports, dtype=np.bool_)
        self.out = kernel.pins(self.modes, self.cross, lit)[2]  # where each input's light goes

    def _route(
        self, keep: Sequence[Pair], order: Sequence[Pair]
    ) -> tuple[int, np.ndarray, np.ndarray]:
        """The kernel's route of the directed circuits ``order`` with ``keep`` pinned: (index
        of the circuit that found no path or -1, cell states, inputs in its way)."""
        kept = np.zeros(self.fabric.n_ports, dtype=np.bool_)
        kept[[p for pair in keep for p in pair]] = True
        fixed, owner, _ = kernel.pins(self.modes, self.cross, kept)
        src, dst = np.array(order, dtype=np.int64).reshape(-1, 2).T.copy()
        return kernel.route(self.modes, kept.size, self.cross, fixed, owner, src, dst)

    def pinned(self, keep: Sequence[Pair], new: Sequence[Pair]) -> list[np.ndarray]:
        order = _directed(new)
        found = []
        for o in [order, order[::-1]] if order else [order]:
            failed, cross, _ = self._route(keep, o)
            if failed < 0:
                found.append(cross)
        return found

    def released(
        self, keep: Sequence[Pair], new: Sequence[Pair], max_released: int
    ) -> np.ndarray | None:
        # re-route the released pairs after (then before) the new circuits, every other cell kept
        pair_of = {p: pair for pair in keep for p in pair}
        released: set[Pair] = set()
        order = _directed(new)
        for _ in range(2 * max_released + 2):
            failed, cross, blockers = self._route([p for p in keep if p not in released], order)
            if failed < 0:
                return cross
            more = {pair_of[int(i)] for i in np.flatnonzero(blockers) if int(i) in pair_of}
            if len(released | more) > max_released:
                return None
            order.insert(0, order.pop(failed))  # the blocked circuit goes first next time
            order += _directed(sorted(more - released))
            released |= more
        return None

    def completions(
        self, matching: Matching, budget: int, score: Callable[[np.ndarray], tuple]
    ) -> None:
        """The mesh routes a whole permutation as a sorting network, so the dark ports of
        ``matching`` need a completion: the default one (the fabric's plan), the one that
        inherits where the current states send each dark input, then (``budget`` > 0)
        first-improvement swaps of two dark inputs' outputs."""

        def offer(targets: Sequence[int | None]) -> tuple:
            return score(cross_of(self.fabric.mesh.route(Permutation(targets)).theta))

        default = list(matching.to_permutation().targets)
        best = score(cross_of(self.fabric.mesh.route(matching).theta))
        dark = [i for i, t in enumerate(default) if t is None]
        if len(dark) < 2:
            return  # one completion only: the default one
        dark_set = set(dark)
        targets = list(default)
        taken = set()
        for d in dark:  # keep where the current states send each dark input, when still dark
            if self.out[d] in dark_set:
                targets[d] = int(self.out[d])
                taken.add(targets[d])
        free = iter(sorted(dark_set - taken))
        for d in dark:
            if targets[d] is None:
                targets[d] = next(free)
        best_t = [d if t is None else t for d, t in enumerate(default)]
        inherited = offer(targets)
        if inherited < best:
            best, best_t = inherited, targets
        spent = 0
        improved = True
        while improved and spent < budget:
            improved = False
            for i in range(len(dark)):
                for j in range(i + 1, len(dark)):
                    if spent >= budget:
                        return
                    t = list(best_t)
                    a, b = dark[i], dark[j]
                    t[a], t[b] = t[b], t[a]
                    key = offer(t)
                    spent += 1
                    if key < best:
                        best, best_t, improved = key, t, True

    def plan(self, matching: Matching, cross: np.ndarray) -> SwitchPlan:
        _check(matching, self.fabric.n_ports)
        out = kernel.pins(self.modes, cross, np.zeros(self.fabric.n_ports, dtype=np.bool_))[2]
        for a, b in matching.pairs:
            for src, dst in ((a, b), (b, a)):
                if out[src] != dst:
                    raise MatchingError(
                        f"cell states send input {src} to output {out[src]}, not {dst}"
                    )
        return self.fabric._plan_at(matching, theta_of(cross))


class MeshRerouter:
    """:class:`Rerouter` of a recirculating mesh: one reciprocal path per pair, by the
    router's Dijkstra over port-ends with the pinned cells and port-ends barred. The paths of
    the current plan are traced once, here."""

    def __init__(self, fabric: MeshFabric, current: SwitchPlan) -> None:
        self.fabric, self.current = fabric, current
        self.states = np.where(current.cross, CROSS, BAR).astype(np.int64)
        self.paths = {}
        for a, b in current.matching.pairs:
            path = trace_mesh(fabric.router.mesh, self.states, fabric.endpoints[a])
            if path.exit_port != fabric.endpoints[b]:
                raise MatchingError(f"the plan's cell states do not join endpoints {a} and {b}")
            self.paths[(a, b)] = path

    def pinned(self, keep: Sequence[Pair], new: Sequence[Pair]) -> list[np.ndarray]:
        cross = self._route(keep, new)[0]
        return [] if cross is None else [cross]

    def released(
        self, keep: Sequence[Pair], new: Sequence[Pair], max_released: int
    ) -> np.ndarray | None:
        """Where the routed pairs block each other, the contested cells get a growing cost and
        the blocked pair goes first (negotiated congestion), for a bounded number of rounds."""
        released: set[Pair] = set()
        history: dict[int, float] = {}
        order = list(new)
        for _ in range(4 * max_released + 4):
            kept = [p for p in keep if p not in released]
            cross, failed, blockers, contested = self._route(kept, order, history)
            if cross is not None:
                return cross
            if len(released | blockers) > max_released or not (blockers - released or contested):
                return None
            for cell in contested:
                history[cell] = history.get(cell, 0.0) + 1.0
            order.insert(0, order.pop(failed))
            order += sorted(blockers - released)
            released |= blockers
        return None

    def completions(
        self, matching: Matching, budget: int, score: Callable[[np.ndarray], tuple]
    ) -> None:
        return None

    def plan(self, matching: Matching, cross: np.ndarray) -> SwitchPlan:
        """Pairs of the current plan whose cells all keep their states keep their circuits;
        the others are traced at ``cross``."""
        _check(matching, self.fabric.n_ports)
        router, ends = self.fabric.router, self.fabric.endpoints
        states = np.where(cross, CROSS, BAR).astype(np.int64)
        old = {(c.source, c.target): c for c in self.current.circuits}
        circuits: list[Circuit] = []
        for a, b in matching.pairs:
            kept = old.get((a, b))
            cells = list(kept.cells) if kept is not None else []
            if kept is not None and np.array_equal(states[cells], self.states[cells]):
                circuits += [kept, old[(b, a)]]
                continue
            path = trace_mesh(router.mesh, states, ends[a])
            if path.exit_port != ends[b]:
                raise MatchingError(f"cell states do not join endpoints {a} and {b}")
            cells = path.cells
            loss = router.path_loss_db(len(cells))
            circuits += [Circuit(a, b, cells, loss), Circuit(b, a, cells[::-1], loss)]
        return SwitchPlan(matching, theta_of(cross), tuple(circuits))

    def _route(
        self,
        keep: Sequence[Pair],
        new: Sequence[Pair],
        history: Mapping[int, float] | None = None,
    ) -> tuple[np.ndarray | None, int, set[Pair], set[int]]:
        """The cell states of ``keep + new`` with the kept pairs' paths pinned, each new pair
        routed in turn (switching fewest cells, then crossing fewest, plus ``history`` per cell
        crossed; the shortest path where that one loses more than the router's
        ``max_path_loss_db``, and none when the shortest does too) and pinned. On failure: None, the
        index of the new pair that found no path, and, on its cheapest path when pinned paths may be
        pushed aside, the kept pairs in its way and the cells where it meets new pairs routed before
        it."""
        history = history or {}
        fabric, router = self.fabric, self.fabric.router
        states = self.states.copy()
        fixed = np.full(states.size, -1, dtype=np.int64)
        end_owner: dict[int, Pair] = {}
        cell_owners: dict[int, set[Pair]] = {}
        for pair in keep:
            path = self.paths[pair]
            for cell in path.cells:
                fixed[cell] = states[cell]
                cell_owners.setdefault(cell, set()).add(pair)
            end_owner.update(dict.fromkeys(path.port_ends, pair))
        cur = states.tolist()
        for i, (a, b) in enumerate(new):
            start = int(router.port_end_of[fabric.endpoints[a]])
            goal = int(router.port_end_of[fabric.endpoints[b]])
            hops = kernel.mesh_path(router, cur, fixed, end_owner, start, goal, history)
            if hops is not None and router.too_long(len(hops)):  # no detour the router refuses
                shortest = kernel.SHORTEST_COST
                hops = kernel.mesh_path(
                    router, cur, fixed, end_owner, start, goal, history, shortest
                )
                hops = None if hops is None or router.too_long(len(hops)) else hops
            if hops is None:
                args = (router, cur, fixed, end_owner, start, goal, {})
                kept = set(keep)
                # pinned paths that may be pushed aside: first only the kept ones, else all
                soft_kept = (
                    {c for c, o in cell_owners.items() if o <= kept},
                    {e for e, o in end_owner.items() if o in kept},
                )
                soft_all = (set(cell_owners), set(end_owner))
                path = kernel.mesh_search(*args, soft=soft_kept) or kernel.mesh_search(
                    *args, soft=soft_all
                )
                blockers: set[Pair | None] = set()
                contested: set[int] = set()
                for e, st in path or []:
                    owners = {end_owner.get(end) for end in (e, through(e, st))}
                    if fixed[e // 4] >= 0 and fixed[e // 4] != st:
                        owners |= cell_owners.get(e // 4, set())
                    blockers |= owners
                    if owners & set(new):
                        contested.add(e // 4)
                return None, i, {p for p in blockers if p in kept}, contested
            port_ends = [e for h in hops for e in (h[0], through(*h))]
            for e, st in hops:
                states[e // 4] = fixed[e // 4] = cur[e // 4] = st
                cell_owners.setdefault(e // 4, set()).add((a, b))
            end_owner.update(dict.fromkeys(port_ends, (a, b)))
        return states == CROSS, -1, set(), set()
