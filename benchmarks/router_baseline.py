"""The baseline router of the router benchmark (``bench_router.py``) and its independent checks.

- ``BaselineRouter``: networkx shortest paths over entry port-ends, one request at a time, the
  whole set retried in rotated orders (the "Baseline" paragraph of ``bench_router.py``);
  ``baseline_states`` turns its paths into cell states;
- ``traced_ok``: light traced through the cell states leaves every request at its port without
  touching a dead cell (the check of every configuration claimed routed, ours or the baseline's);
- ``exactly_routable``: whether any routing exists at all, as a 0/1 program (scipy's HiGHS MILP;
  ``--exact``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from photonics.recirculating.mesh_scattering import DEFAULT_CELL_LOSS_DB
from photonics.recirculating.waveguide_mesh import BAR, CROSS, WaveguideMesh, through, trace

# --- baseline --------------------------------------------------------------------------------


class BaselineRouter:
    """networkx shortest paths, one request at a time, with rotated retries (bench_router.py)."""

    def __init__(
        self,
        mesh: WaveguideMesh,
        dead_cells: Sequence[int] = (),
        cell_loss_db: float = DEFAULT_CELL_LOSS_DB,
        tries: int = 6,
    ) -> None:
        self.edge_ports = [int(e) for e in mesh.edge_ports]
        self.tries = tries
        dead = {int(c) for c in dead_cells}
        partner = mesh.partner()
        g = nx.DiGraph()
        for entry in range(4 * mesh.n_cells):
            if entry // 4 in dead:
                continue
            for state in (BAR, CROSS):
                out = through(entry, state)
                nxt = int(partner[out])
                if nxt >= 0 and nxt // 4 in dead:
                    continue
                node = ("exit", out) if nxt < 0 else nxt
                g.add_edge(entry, node, cell=entry // 4, state=state, out=out, weight=cell_loss_db)
        self.graph = g

    def route(self, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], list] | None:
        """The (entry, exit) port-ends of each request's path, or None when no order worked."""
        pairs = list(pairs)
        for shift in range(max(1, min(self.tries, len(pairs)))):
            paths = self._once(pairs[shift:] + pairs[:shift])
            if paths is not None:
                return paths
        return None

    def _once(self, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], list] | None:
        g = self.graph
        state: dict[int, int] = {}
        used: set[int] = set()

        def weight(u: int, v: Any, d: dict) -> float | None:
            if state.get(d["cell"], d["state"]) != d["state"] or u in used or d["out"] in used:
                return None  # hidden edge
            return d["weight"]

        paths: dict[tuple[int, int], list] = {}
        for a, b in pairs:
            src, dst = self.edge_ports[a], ("exit", self.edge_ports[b])
            if src not in g or dst not in g or src in used:
                return None
            try:
                nodes = nx.shortest_path(g, src, dst, weight=weight)
            except nx.NetworkXNoPath:
                return None
            mine: dict[int, int] = {}
            hops = []
            for u, v in itertools.pairwise(nodes):
                d = g.edges[u, v]
                if mine.setdefault(d["cell"], d["state"]) != d["state"]:
                    return None  # the path itself needs a cell in both states
                hops.append((u, d["out"]))
            used.update(e for hop in hops for e in hop)
            state.update(mine)
            paths[(a, b)] = hops
        return paths


def baseline_states(n_cells: int, paths: dict[tuple[int, int], list]) -> np.ndarray:
    states = np.full(n_cells, BAR)
    for hops in paths.values():
        for entry, out in hops:
            states[entry // 4] = BAR if (entry % 4 + 2) % 4 == out % 4 else CROSS
    return states


# --- checks ----------------------------------------------------------------------------------


def traced_ok(
    mesh: WaveguideMesh,
    states: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    dead: Sequence[int] = (),
) -> bool:
    """Light from each request's first port leaves at its second without crossing a dead cell."""
    dead_set = set(int(c) for c in dead)
    for a, b in pairs:
        path = trace(mesh, states, int(a))
        if path.exit_port != b or dead_set.intersection(path.cells):
            return False
    return True


def exactly_routable(
    mesh: WaveguideMesh,
    pairs: Sequence[tuple[int, int]],
    dead: Sequence[int] = (),
    time_limit: float = 60.0,
) -> bool | None:
    """Whether any routing exists (MILP), None when the solver hits ``time_limit`` seconds.

    Variables ``x[k, entry, state]``: request k enters a cell at ``entry`` and crosses it in
    ``state``; ``y[cell]``: the cell is in cross. Flow is conserved through links, starts at the
    request's first port and leaves only at its second; every port-end carries at most one path;
    a cell carries bar paths only if ``y = 0`` and cross paths only if ``y = 1``. A solution is a
    path per request plus possibly closed loops, which only take resources, so the program is
    feasible exactly when the requests are routable.
    """
    n_ends, k_req = 4 * mesh.n_cells, len(pairs)
    partner = mesh.partner()
    ends = np.arange(n_ends)
    outs = np.stack([[through(int(e), s) for s in (BAR, CROSS)] for e in ends])
    exits: dict[int, list[int]] = {}  # port-end -> flat (entry, state) indices leaving there
    for e in range(n_ends):
        for s in (BAR, CROSS):
            exits.setdefault(int(outs[e, s]), []).append(2 * e + s)
    n_x = 2 * n_ends
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lo: list[float] = []
    hi: list[float] = []

    def add(idx: Sequence[int], coef: Sequence[float], low: float, high: float) -> None:
        r = len(lo)
        rows.extend([r] * len(idx))
        cols.extend(idx)
        vals.extend(coef)
        lo.append(low)
        hi.append(high)

    edge_port_ends = {int(e) for e in mesh.edge_ports}
    for k, (a, b) in enumerate(pairs):
        src, dst, off = int(mesh.edge_ports[a]), int(mesh.edge_ports[b]), k * n_x
        for p in range(n_ends):
            leave = [off + 2 * p, off + 2 * p + 1]
            if p in edge_port_ends:
                start = 1.0 if p == src else 0.0
                add(leave, [1.0, 1.0], start, start)
                arrive = [off + i for i in exits[p]]
                end = 1.0 if p == dst else 0.0
                add(arrive, [1.0] * len(arrive), end, end)
            else:
                come = [off + i for i in exits[int(partner[p])]]
                add(leave + come, [1.0, 1.0] + [-1.0] * len(come), 0.0, 0.0)
    for p in range(n_ends):
        idx = [k * n_x + i for k in range(k_req) for i in (2 * p, 2 * p + 1, *exits[p])]
        add(idx, [1.0] * len(idx), 0.0, 1.0)
    y0 = k_req * n_x
    for c in range(mesh.n_cells):
        for s, (coef, high) in ((BAR, (2.0, 2.0)), (CROSS, (-2.0, 0.0))):
            idx = [k * n_x + 2 * (4 * c + j) + s for k in range(k_req) for j in range(4)]
            add([*idx, y0 + c], [1.0] * len(idx) + [coef], -np.inf, high)
    n_var = y0 + mesh.n_cells
    upper = np.ones(n_var)
    for c in dead:
        for k in range(k_req):
            upper[k * n_x + 8 * c : k * n_x + 8 * c + 8] = 0.0
    A = sp.csr_matrix((vals, (rows, cols)), shape=(len(lo), n_var))
    cost = np.r_[np.ones(y0), np.zeros(mesh.n_cells)]
    res = milp(
        cost,
        constraints=LinearConstraint(A, lo, hi),
        integrality=np.ones(n_var),
        bounds=Bounds(0, upper),
        options={"time_limit": time_limit},
    )
    if res.status == 0:
        return True
    if res.status == 2:
        return False
    return None
