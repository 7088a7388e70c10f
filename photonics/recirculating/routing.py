"""Routing light paths through a recirculating waveguide mesh.

A request joins two edge ports (numbered as ``WaveguideMesh.edge_ports``): a :class:`Matching`
(one reciprocal path per pair) or a :class:`Permutation` (a path per input). A path enters a
cell at one port-end and leaves at another, which sets the cell's state (bar or cross). Two paths
may share a cell only if both need the same state (they then use its two arms); no port-end
carries two paths. Cells marked dead are not used.

Routing is negotiated congestion (as in the published penalty routers): every request takes
its cheapest path (cell loss and length), with a growing penalty on cells and port-ends that
other paths use in a conflicting way, and is re-routed until no conflict is left or the
iteration limit is reached. Then, isolation-aware: two paths that share a cell leak into each
other with the cell's extinction (the only first-order leaks); while a path's predicted
isolation is below a target, routing is negotiated again with a rising cost on the leaking
cells, within a budget, and the conflict-free routing with the best worst-path isolation is
kept. Deterministic for a given mesh and request.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from photonics._checks import finite
from photonics.devices.mzi import MZIImperfections
from photonics.errors import PortError, SettingsError
from photonics.matching import Matching, Permutation
from photonics.recirculating._route_kernel import (
    _search,
    improve_isolation,
    isolation_db,
    negotiate,
)
from photonics.recirculating.mesh_scattering import (
    DEFAULT_CELL_LOSS_DB,
    DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM,
    path_loss_db,
    scattering,
    unit_link_loss_db,
)
from photonics.recirculating.waveguide_mesh import BAR, CROSS, WaveguideMesh

#: Default extinction of a cell, dB: how much of a path's light stays out of the cell's other
#: arm (the typical unit-cell figure: Perez-Lopez et al., Nat. Commun. 15, 1563 (2024);
#: docs/physics.md).
DEFAULT_EXTINCTION_DB = 35.0
#: How far the measured isolation of a routed path may fall below its prediction
#: (:attr:`Path.isolation_db`), dB, when the router knows each cell's extinction per state:
#: leaks of leaks, loss spread between cells and light in the loops, which the first-order
#: prediction leaves out. Measured on sampled chips (field solve at 1550 nm, couplers sigma
#: 0.009): under half a dB on 32-endpoint matchings and on 6x6 permutations against the
#: smaller of the prediction and the leaks-of-leaks floor (docs/calibration-hex.md has the
#: measured figures); ``tests/photonics/recirculating/test_routing.py`` checks it.
PREDICTION_MARGIN_DB = 0.5
#: Iterations without fewer conflicts after which negotiation stops.
STALL_ITERATIONS = 15
#: Default worst-path isolation the router aims at, dB: the published 6x6 switch's port
#: isolation (~25 dB) and the unit cell's crosstalk bound (-25 dB) (Perez-Lopez et al., Nat.
#: Commun. 15, 1563 (2024); docs/physics.md).
DEFAULT_ISOLATION_TARGET_DB = 25.0
#: Default limit on a path's predicted loss, dB: about 45 cells at the default cell and link
#: losses, so no request takes an absurd detour; above the longest path of 20 random perfect
#: matchings on every hexagonal switch of ``hexagonal_switch`` (38 cells, 25 dB, on mesh_9x9).
DEFAULT_MAX_PATH_LOSS_DB = 30.0
#: Default budget of the isolation-aware re-negotiation, in cells searched: each path search
#: counts the mesh's cells (its cost grows with them). The 6x6 switch (71 cells, 6 paths) may
#: spend up to about 230 negotiation passes, a 32-port matching on the 9x9 mesh (278 cells, 16
#: paths) about 22, which keeps the latter near 15 ms.
ISOLATION_BUDGET = 100_000


@dataclass(frozen=True)
class Path:
    """One routed request: the edge ports it joins, the cells it crosses with their states, the
    port-ends it occupies, its insertion loss (dB) from cell and link losses, and its predicted
    isolation (dB): its signal over the light other paths leak into it through the cells they
    share (first order in the cells' extinction; ``inf`` when it shares no cell)."""

    ports: tuple[int, int]
    cells: tuple[int, ...]
    states: tuple[int, ...]
    port_ends: tuple[int, ...]
    loss_db: float
    isolation_db: float = np.inf


@dataclass(frozen=True)
class RouteResult:
    """Routed paths, the state of every cell (unused cells parked), what failed and why.

    ``directed``: light enters at each path's first port only (a permutation); otherwise both
    ends send and receive. ``iterations``: negotiation passes in all; ``isolation_rounds``:
    isolation-aware re-negotiations run (see :class:`Router`).
    """

    paths: tuple[Path, ...]
    states: np.ndarray  # (n_cells,) BAR/CROSS
    failures: dict[tuple[int, int], str] = field(default_factory=dict)
    iterations: int = 0
    directed: bool = False
    isolation_rounds: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def isolation_db(self) -> float:
        """Worst predicted isolation of the routed paths, dB."""
        return min((p.isolation_db for p in self.paths), default=np.inf)

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
    """Routes requests on one mesh; holds the mesh's graph, the dead cells and what the cells
    are like.

    - ``cell_loss_db``: insertion loss of a cell, dB; ``link_loss_db``: of a link between
      cells, dB (default: the mesh's unit length at
      :data:`~photonics.recirculating.mesh_scattering.DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM`);
    - ``extinction_db``: each cell's extinction, dB: a scalar, one value per cell, or one per
      state and cell (shape (2, n_cells), [BAR, CROSS]: measured ones from a calibration, or
      :func:`~photonics.devices.mzi.state_extinction_db` of a model chip); a shared cell leaks with
      the extinction of the state its paths set (:attr:`Path.isolation_db`);
    - ``max_path_loss_db``: a request whose path would lose more (dB) fails instead (None:
      no limit);
    - ``isolation_target_db``: worst predicted path isolation (:attr:`Path.isolation_db`) to
      aim at, dB (None: plain routing). When a conflict-free routing falls short, all requests
      are negotiated again from scratch, each round in another order and with a higher cost on
      the cells whose leaks bring a path below the target, in proportion to the leak's
      amplitude (so of two shared cells the one of lower extinction is given up first), until
      the target is met or ``isolation_budget`` cells have been searched (each path search
      counts the mesh's cells); the conflict-free routing with the best worst-path isolation
      is kept, so this never does worse than plain routing, nor fails where it succeeds. The
      prediction is a worst case over the leaks' phases: at one wavelength the scattering
      solve usually finds a few dB more, and across a band about the prediction.
    """

    def __init__(
        self,
        mesh: WaveguideMesh,
        dead_cells: Sequence[int] = (),
        cell_loss_db: float = DEFAULT_CELL_LOSS_DB,
        link_loss_db: float | None = None,
        extinction_db: float | Sequence[float] | np.ndarray = DEFAULT_EXTINCTION_DB,
        max_iterations: int = 60,
        isolation_target_db: float | None = DEFAULT_ISOLATION_TARGET_DB,
        isolation_budget: int = ISOLATION_BUDGET,
        max_path_loss_db: float | None = DEFAULT_MAX_PATH_LOSS_DB,
    ) -> None:
        if link_loss_db is None:
            link_loss_db = unit_link_loss_db(mesh.unit_length_um, DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM)
        if cell_loss_db < 0 or link_loss_db < 0:
            raise SettingsError(f"losses must be >= 0 dB, got {cell_loss_db}, {link_loss_db}")
        ext = finite("extinction_db", extinction_db)
        if ext.shape not in ((), (mesh.n_cells,), (2, mesh.n_cells)):
            raise SettingsError(
                f"extinction_db must be a scalar, ({mesh.n_cells},) or (2, {mesh.n_cells}) "
                f"[BAR, CROSS], got shape {ext.shape}"
            )
        ext = np.broadcast_to(ext, (2, mesh.n_cells))
        if np.any(ext <= 0):
            raise SettingsError(f"extinction_db must be > 0 dB, got {ext.min()}")
        if max_iterations < 1:
            raise SettingsError(f"max_iterations must be >= 1, got {max_iterations}")
        if isolation_target_db is not None and not np.isfinite(isolation_target_db):
            raise SettingsError(f"isolation_target_db must be finite, got {isolation_target_db}")
        if isolation_budget < 0:
            raise SettingsError(f"isolation_budget must be >= 0, got {isolation_budget}")
        if max_path_loss_db is not None and not max_path_loss_db > 0:
            raise SettingsError(f"max_path_loss_db must be > 0 dB or None, got {max_path_loss_db}")
        self.mesh = mesh
        self.partner = mesh.partner()
        self.dead = np.zeros(mesh.n_cells, bool)
        for c in dead_cells:
            if not 0 <= c < mesh.n_cells:
                raise PortError(f"dead cell {c} is out of range 0..{mesh.n_cells - 1}")
            self.dead[c] = True
        self.port_end_of = np.asarray(mesh.edge_ports, dtype=np.int64)
        self.cell_loss_db = float(cell_loss_db)
        self.link_loss_db = float(link_loss_db)
        self.extinction_db = np.array(ext, dtype=float)  # writable: one compiled signature
        self.max_iterations = int(max_iterations)
        self.isolation_target_db = isolation_target_db
        self.isolation_budget = int(isolation_budget)
        self.max_path_loss_db = max_path_loss_db

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

    @property
    def link_cost(self) -> float:
        return self.link_loss_db + 1e-3  # a little length, so shorter paths win ties

    def cheapest_path(
        self,
        start: int,
        goal: int,
        step_cost: np.ndarray,
        end_cost: np.ndarray,
        link_cost: float | None = None,
    ) -> np.ndarray | None:
        """Cheapest path from entry port-end ``start`` to exit port-end ``goal`` (Dijkstra,
        compiled) under given costs: ``step_cost[cell, state]`` to cross a cell in a state,
        ``end_cost[port_end]`` to use a port-end, each link ``link_cost`` (default
        :attr:`link_cost`); an infinite
        cost bars the move. Returns the (entry, exit) port-end of each cell crossed, in order
        (shape (L, 2)), or None when no finite path exists. Dead cells are never entered.
        Dijkstra does not see its own path: a path may cross one cell twice."""
        n = self.mesh.n_cells
        if step_cost.shape != (n, 2) or end_cost.shape != (4 * n,):
            raise SettingsError(f"costs must have shapes ({n}, 2) and ({4 * n},)")
        work = (
            np.empty(4 * n),
            np.empty(4 * n, np.int64),
            np.empty(4 * n, np.int64),
            np.empty(8 * n + 1),
            np.empty(8 * n + 1, np.int64),
        )
        out = np.empty((4 * n, 2), np.int64)
        cost = (np.ascontiguousarray(step_cost, float), np.ascontiguousarray(end_cost, float))
        link = self.link_cost if link_cost is None else float(link_cost)
        length = _search(start, goal, self.partner, self.dead, *cost, link, work, out)
        return out[:length].copy() if length >= 0 else None

    # ---- all requests ---------------------------------------------------------------------
    def route(
        self, pairs: Iterable[tuple[int, int]], directed: bool = False, orders: int = 32
    ) -> RouteResult:
        """Route every edge-port pair (see the module docstring and :func:`requests_for`).

        ``directed``: light enters at each pair's first port only (a permutation); otherwise
        both ends send and receive (a matching); this changes the predicted isolation and so
        the isolation-aware re-negotiation (see :class:`Router`).
        Negotiation depends on the order in which requests are re-routed: when it leaves a
        conflict, it is run again with the requests rotated, then reversed and rotated, up to
        ``orders`` runs in all (deterministically); the run with fewest failures is kept.
        """
        pairs = self._check(pairs)
        order, run = pairs, self._negotiate(pairs)
        spent = run[3]
        n = len(pairs)
        for k in range(1, min(orders, 2 * n)):
            if not _failed(run).any():
                break
            base = pairs if k < n else pairs[::-1]
            shift = k % n
            retry_order = base[shift:] + base[:shift]
            retry = self._negotiate(retry_order)
            spent += retry[3]
            if _failed(retry).sum() < _failed(run).sum():
                order, run = retry_order, retry
        hops, lengths, conflicted, _ = run
        routed = np.where(conflicted, -1, lengths)
        step_db = self.cell_loss_db + self.link_loss_db
        rounds = 0
        if self.isolation_target_db is not None and n > 1 and not _failed(run).any():
            hops, lengths, _, rounds, passes = improve_isolation(
                self.partner,
                self.dead,
                *self._ends(order),
                hops,
                lengths,
                self.extinction_db,
                self.cell_loss_db,
                self.link_cost,
                step_db,
                not directed,
                float(self.isolation_target_db),
                self.isolation_budget // self.mesh.n_cells,
                STALL_ITERATIONS,
            )
            routed, spent = lengths, spent + passes
        isolation = isolation_db(hops, routed, self.extinction_db, step_db, not directed)
        paths, failures = [], {}
        for i, pair in enumerate(order):
            if lengths[i] < 0:
                failures[pair] = "no path: every route is blocked by dead cells or the edge"
            elif routed[i] < 0:
                failures[pair] = f"still in conflict after {run[3]} iterations of penalties"
            elif self.too_long(lengths[i]):
                failures[pair] = (
                    f"its path of {lengths[i]} cells loses {self.path_loss_db(lengths[i]):.1f} "
                    f"dB, above the limit {self.max_path_loss_db:g} dB"
                )
            else:
                paths.append(self._path(pair, hops[i, : lengths[i]], float(isolation[i])))
        return RouteResult(
            tuple(paths), self._park(paths), failures, int(spent), bool(directed), int(rounds)
        )

    def _ends(self, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        ends = self.port_end_of[np.asarray(pairs, dtype=np.int64).reshape(-1, 2)]
        return np.ascontiguousarray(ends[:, 0]), np.ascontiguousarray(ends[:, 1])

    def _negotiate(
        self, pairs: list[tuple[int, int]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Plain negotiation of ``pairs`` in this order: (hops, lengths, conflicted, passes)."""
        return negotiate(
            self.partner,
            self.dead,
            *self._ends(pairs),
            self.cell_loss_db,
            np.zeros(self.mesh.n_cells),
            self.link_cost,
            self.max_iterations,
            STALL_ITERATIONS,
        )

    def too_long(self, n_cells: int) -> bool:
        """Whether a path across ``n_cells`` cells loses more than ``max_path_loss_db``."""
        limit = self.max_path_loss_db
        return limit is not None and self.path_loss_db(n_cells) > limit

    def path_loss_db(self, n_cells: int) -> float:
        """Predicted loss of a path across ``n_cells`` cells, dB (cells and the links between)."""
        return path_loss_db(np.full(n_cells, self.cell_loss_db), self.link_loss_db)

    def _path(self, pair: tuple[int, int], hops: np.ndarray, isolation_db: float) -> Path:
        cells = hops[:, 0] // 4
        # bar joins port-end k to (k + 2) % 4 of the same cell
        states = np.where(hops[:, 1] % 4 == (hops[:, 0] % 4 + 2) % 4, BAR, CROSS)
        return Path(
            pair,
            tuple(cells.tolist()),
            tuple(states.tolist()),
            tuple(hops.ravel().tolist()),
            self.path_loss_db(len(cells)),
            isolation_db,
        )

    def _park(self, paths: list[Path]) -> np.ndarray:
        """Cell states of ``paths``; each unused cell is set to the state whose arms join fewest
        port-ends next to two different paths (light that leaks out of one path should not find
        another).

        This only matters at second order: first-order leaks arise in cells two paths share
        (see :func:`~photonics.recirculating._route_kernel.isolation_db`); light a path's cell leaks
        into its unused arm must cross a further cell's extinction to reach another path.
        """
        n = self.mesh.n_cells
        states = np.full(n, -1)
        owner = np.full(4 * n + 1, -1)  # the extra slot answers for the mesh edge (-1)
        for i, p in enumerate(paths):
            states[list(p.cells)] = p.states
            owner[list(p.port_ends)] = i
        cells = np.flatnonzero(states < 0)
        bad = np.zeros((2, cells.size), np.int64)
        for state in (BAR, CROSS):
            for k in (0, 1):
                a = 4 * cells + k
                b = 4 * cells + ((k + 2) % 4 if state == BAR else 3 - k)
                oa, ob = owner[self.partner[a]], owner[self.partner[b]]
                bad[state] += (oa >= 0) & (ob >= 0) & (oa != ob)
        states[cells] = np.where(bad[BAR] <= bad[CROSS], BAR, CROSS)
        return states


def _failed(run: tuple[np.ndarray, np.ndarray, np.ndarray, int]) -> np.ndarray:
    """Which requests of a negotiation run have no path or are still in conflict."""
    return (run[1] < 0) | run[2]


@dataclass(frozen=True)
class Verification:
    """A routed configuration checked by the scattering solve (dB): each path's measured and
    expected insertion loss, the worst port isolation (a routed output's signal over the
    strongest other routed input reaching it; for a matching both ends of every path are
    inputs and outputs) and the worst return loss (launched over returned power at any routed
    port, the light that port itself sends and the mesh sends back)."""

    measured_loss_db: tuple[float, ...]
    expected_loss_db: tuple[float, ...]
    worst_isolation_db: float
    worst_return_loss_db: float = np.inf

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
    of waveguide loss. Isolation is read in the direction(s) ``result`` was routed for
    (:attr:`RouteResult.directed`).
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
    link_db = unit_link_loss_db(mesh.unit_length_um, waveguide_loss_db_per_cm)
    measured, expected = [], []
    sends = [p.ports for p in result.paths]
    if not result.directed:
        sends += [p.ports[::-1] for p in result.paths]
    worst = np.inf
    for path in result.paths:
        a, b = path.ports
        measured.append(float(-10 * np.log10(P[b, a])))
        expected.append(path_loss_db(np.full(len(path.cells), cell_loss_db), link_db))
    for a, b in sends:
        # light b itself sends and gets back is return loss, not another port's crosstalk
        leak = max((P[b, x] for x, _ in sends if x not in (a, b)), default=0.0)
        if leak > 0:
            worst = min(worst, float(10 * np.log10(P[b, a] / leak)))
    ends = {e for pair in sends for e in pair}
    back = max((P[e, e] for e in ends), default=0.0)
    return_loss = float(-10 * np.log10(back)) if back > 0 else np.inf
    return Verification(tuple(measured), tuple(expected), worst, return_loss)
