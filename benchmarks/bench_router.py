"""Router benchmark: negotiated-congestion routing on recirculating hexagonal meshes.

What it measures (``photonics.routing``), each side by side with a plain baseline written here:

1. 32-port matchings on :func:`~photonics.switch_geometry.switch_32` (mesh_9x9: 278 cells, 140
   edge ports, 32 chosen as endpoints): ``Router(mesh).route`` of random perfect matchings
   (``Matching.random``, fixed seeds); success count, median time of one matching
   (``route_matching_32_s``), and for every routed one the scattering check with sampled
   imperfections (loss, worst isolation);
2. the all-to-all cover: one timed call of ``all_to_all_cover(Router(mesh), endpoints)`` with
   its defaults (the optimum is 31 perfect matchings), and one asking each matching for a
   predicted isolation of ``COVER_ISOLATION_DB`` (25.5 dB: 25 plus a margin for second-order
   leaks); each cover's matchings verified on cells at the typical figures
   (``MZIImperfections.typical()``: 35 dB, 0.5 dB), worst isolation and return loss;
3. the 6x6 switch (:func:`~photonics.switch_geometry.switch_6x6`): all 720 permutations, routed
   count, total time, path lengths (cells), and for every permutation (``--stride``) ``verify``
   with no imperfections (max error of the path loss against cells x 0.5 dB + links) and with
   ``MZIImperfections.sample(mesh.n_cells, np.random.default_rng(0), loss_db=0.5)`` (loss
   spread, worst isolation);
4. dead-cell tolerance: for k = 1, 2, 4, 8 random dead cells (never an endpoint's cell nor a
   cell of its forced entry), ``--dead-sets`` dead-cell sets x ``--dead-matchings``
   random 32-port matchings (the same matchings for every k); the fraction still routable;
5. port isolation before and after isolation-aware routing: the 720 permutations of the 6x6
   switch and the 32-port matchings of item 1, each verified by the scattering solve (1550 nm;
   a matching in both directions) on the default imperfections (``MZIImperfections.typical``,
   every cell at 35 dB) and on ``--chips`` sampled chips (seeds 0, 1, ...) of two
   kinds: ``MZIImperfections.sample`` (Gaussian couplers, sigma 0.009: cell extinction with a
   median of 37.5 dB and 9 % of the cells below 32 dB) and ``MZIImperfections.sample_extinction``
   (cells spread over the published 32-44 dB, median 35 dB: ``docs/physics.md`` [1]), both at
   0.5 dB per cell. Three routers: plain (``isolation_target_db=None``), isolation-aware
   knowing only the typical 35 dB, and isolation-aware knowing each cell's extinction (as a
   calibration measures it). Reported: the fraction of configurations with worst port
   isolation >= 25 dB, its median and worst, and the routing time.

Every configuration claimed routed (ours or the baseline's) is checked independently by tracing
light with :func:`~photonics.waveguide_mesh.trace` through the cell states: it must leave at the
requested port without touching a dead cell.

Baseline: a ``networkx.DiGraph`` over entry port-ends (entry -> next cell's entry through each
state, weight = cell loss). Requests are routed one by one with ``nx.shortest_path`` while the
cells used in the other state and the port-ends already used are hidden; when a request finds no
path (or its path would need one cell in both states), the whole set is retried in a rotated
order, up to ``--baseline-tries`` orders. ``speedup_vs_baseline`` is baseline time / our time
for the 720 permutations of the 6x6 switch (both routers see the same requests; times exclude
building the routers).

``--exact`` also solves every request that our router fails as a 0/1 program (a multi-commodity
flow over port-ends with one state per cell; scipy's HiGHS MILP) to tell instances that no
router can route from the router's misses.

Run (on 2 CPUs the default run takes under a minute; the dead cells run
in ``--jobs`` worker processes)::

    python benchmarks/bench_router.py                                    # tables on stdout
    python benchmarks/bench_router.py --json                             # one JSON object
    python benchmarks/bench_router.py --dead-sets 20 --dead-matchings 5  # the issue's table
    python benchmarks/bench_router.py --chips 4                          # isolation, 4 chips
    python benchmarks/bench_router.py --quick                            # smoke run (1 min)

Progress goes to stderr. Needs networkx.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from photonics.covers import all_to_all_cover
from photonics.matching import Matching, Permutation
from photonics.mesh_scattering import DEFAULT_CELL_LOSS_DB
from photonics.mzi import MZIImperfections, extinction_ratio_db
from photonics.routing import Router, requests_for, verify
from photonics.switch_geometry import switch_6x6, switch_32
from photonics.waveguide_mesh import BAR, CROSS, WaveguideMesh, forced_entry, through, trace

#: Targets from the issue, seconds.
TARGET_MATCHING_32_S = 0.050
TARGET_COVER_S = 5.0
TARGET_PERMS_6X6_S = 10.0


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- endpoints -------------------------------------------------------------------------------


# --- baseline --------------------------------------------------------------------------------


class BaselineRouter:
    """networkx shortest paths, one request at a time, with rotated retries (module docstring)."""

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


def _loss_summary(verifications: list) -> dict[str, float]:
    losses = np.concatenate([v.measured_loss_db for v in verifications])
    spreads = [max(v.measured_loss_db) - min(v.measured_loss_db) for v in verifications]
    isolation = [v.worst_isolation_db for v in verifications]
    return {
        "loss_min_db": float(losses.min()),
        "loss_max_db": float(losses.max()),
        "loss_spread_db": float(losses.max() - losses.min()),
        "max_spread_in_one_config_db": float(max(spreads)),
        "max_loss_error_db": float(max(v.max_loss_error_db for v in verifications)),
        "worst_isolation_db": float(min(isolation)),
        "median_isolation_db": float(np.median(isolation)),
        "isolation_ge_25_db_fraction": float(np.mean(np.asarray(isolation) >= 25.0)),
    }


# --- workloads -------------------------------------------------------------------------------


def bench_matchings(
    mesh: WaveguideMesh, ends: list[int], n: int, seed: int, tries: int, exact: bool
) -> dict[str, Any]:
    router, base = Router(mesh), BaselineRouter(mesh, tries=tries)
    ours_s, base_s, ours_ok, base_ok, misses, unknown, verified = [], [], 0, 0, 0, 0, []
    iterations, bad_claims = [], 0
    chip = MZIImperfections.sample(mesh.n_cells, np.random.default_rng(0), loss_db=0.5)
    for i in range(n):
        pairs = requests_for(Matching.random(32, np.random.default_rng(seed + i)), ends)
        t0 = time.perf_counter()
        result = router.route(pairs)
        ours_s.append(time.perf_counter() - t0)
        iterations.append(result.iterations)
        t0 = time.perf_counter()
        paths = base.route(pairs)
        base_s.append(time.perf_counter() - t0)
        if result.ok:
            if traced_ok(mesh, result.states, pairs):
                ours_ok += 1
                verified.append(verify(mesh, result, chip))
            else:
                bad_claims += 1
        elif exact:
            feasible = exactly_routable(mesh, pairs)
            misses += feasible is True
            unknown += feasible is None
        if paths is not None:
            if traced_ok(mesh, baseline_states(mesh.n_cells, paths), pairs):
                base_ok += 1
            else:
                bad_claims += 1
        log(f"  32-port matching {i + 1}/{n}: ours {result.ok} ({ours_s[-1]:.3f} s)")
    out: dict[str, Any] = {
        "n": n,
        "ours_routed": ours_ok,
        "ours_median_s": float(np.median(ours_s)),
        "ours_max_s": float(np.max(ours_s)),
        "ours_total_s": float(np.sum(ours_s)),
        "ours_median_iterations": float(np.median(iterations)),
        "baseline_routed": base_ok,
        "baseline_median_s": float(np.median(base_s)),
        "baseline_total_s": float(np.sum(base_s)),
        "claimed_routed_but_trace_failed": bad_claims,
    }
    if verified:
        out["imperfect_chip"] = _loss_summary(verified) | {"configs": len(verified)}
    if exact:
        out["ours_failed_but_routable"] = misses
        out["exact_time_limit_hit"] = unknown
    return out


#: Predicted isolation the guaranteed cover asks of each matching, dB: the target plus a
#: margin for the second-order leaks the first-order prediction leaves out.
COVER_ISOLATION_DB = 25.5


def bench_cover(
    mesh: WaveguideMesh, ends: list[int], attempts: int | None, isolation_db: float | None = None
) -> dict[str, Any]:
    kwargs = {} if attempts is None else {"attempts": attempts}
    t0 = time.perf_counter()
    cover = all_to_all_cover(Router(mesh), ends, isolation_db=isolation_db, **kwargs)
    seconds = time.perf_counter() - t0
    joined = {tuple(sorted(p)) for m in cover.matchings for p in m.pairs}
    n = len(ends)
    typical = [verify(mesh, r, MZIImperfections.typical()) for r in cover.results]
    return {
        "isolation_db": isolation_db,
        "verified_worst_isolation_db": min(v.worst_isolation_db for v in typical),
        "verified_worst_return_loss_db": min(v.worst_return_loss_db for v in typical),
        "seconds": seconds,
        "size": cover.size,
        "optimum": n - 1,
        "note": cover.note,
        "unroutable": [list(p) for p in getattr(cover, "unroutable", ())],
        "pairs_joined": len(joined),
        "pairs_total": n * (n - 1) // 2,
        "all_results_ok": all(r.ok for r in cover.results),
        "attempts": attempts if attempts is not None else "default",
    }


def bench_6x6(tries: int, stride: int) -> dict[str, Any]:
    mesh, inputs, outputs = switch_6x6()
    requests = [
        requests_for(Permutation(list(p)), (inputs, outputs))
        for p in itertools.permutations(range(6))
    ]
    router, base = Router(mesh), BaselineRouter(mesh, tries=tries)
    t0 = time.perf_counter()
    results = [router.route(pairs, directed=True) for pairs in requests]
    ours_s = time.perf_counter() - t0
    log(f"  6x6: ours {ours_s:.2f} s for {len(requests)} permutations")
    t0 = time.perf_counter()
    base_paths = [base.route(pairs) for pairs in requests]
    base_s = time.perf_counter() - t0
    log(f"  6x6: baseline {base_s:.2f} s")
    ours_ok = [
        r.ok and traced_ok(mesh, r.states, pairs)
        for r, pairs in zip(results, requests, strict=True)
    ]
    base_ok = [
        p is not None and traced_ok(mesh, baseline_states(mesh.n_cells, p), pairs)
        for p, pairs in zip(base_paths, requests, strict=True)
    ]
    lengths = [len(p.cells) for r, ok in zip(results, ours_ok, strict=True) if ok for p in r.paths]
    base_lengths = [
        len(h) for p, ok in zip(base_paths, base_ok, strict=True) if ok for h in p.values()
    ]
    chip = MZIImperfections.sample(mesh.n_cells, np.random.default_rng(0), loss_db=0.5)
    sample = [r for i, r in enumerate(results) if i % stride == 0 and ours_ok[i]]
    ideal = [verify(mesh, r) for r in sample]
    imperfect = [verify(mesh, r, chip) for r in sample]
    failed = [list(itertools.permutations(range(6)))[i] for i, ok in enumerate(ours_ok) if not ok]
    return {
        "n": len(requests),
        "ours_routed": int(sum(ours_ok)),
        "ours_s": ours_s,
        "ours_per_config_ms": 1e3 * ours_s / len(requests),
        "ours_claimed_ok_but_trace_failed": int(
            sum(r.ok and not ok for r, ok in zip(results, ours_ok, strict=True))
        ),
        "ours_max_iterations": int(max(r.iterations for r in results)),
        "path_cells_min": int(min(lengths, default=0)),
        "path_cells_mean": float(np.mean(lengths)) if lengths else 0.0,
        "path_cells_max": int(max(lengths, default=0)),
        "baseline_routed": int(sum(base_ok)),
        "baseline_s": base_s,
        "baseline_path_cells_mean": float(np.mean(base_lengths)) if base_lengths else 0.0,
        "baseline_path_cells_max": int(max(base_lengths, default=0)),
        "verified_configs": len(sample),
        "ideal_max_loss_error_db": float(max((v.max_loss_error_db for v in ideal), default=0.0)),
        "imperfect_chip": _loss_summary(imperfect) if imperfect else {},
        "failed_permutations": [list(p) for p in failed[:10]],
    }


#: Chip models of the isolation workload: name -> sampler (n_cells, rng) of imperfections.
CHIPS = {
    "typical_35_db": lambda n, rng: MZIImperfections.typical(),
    "gaussian_sigma_0.009": lambda n, rng: MZIImperfections.sample(n, rng, loss_db=0.5),
    "published_32_44_db": lambda n, rng: MZIImperfections.sample_extinction(n, rng, loss_db=0.5),
}
#: Routers of the isolation workload: name -> (isolation-aware, knows each cell's extinction).
ROUTERS = {"plain": (False, False), "aware_typical": (True, False), "aware_per_cell": (True, True)}


def bench_isolation(
    mesh6: WaveguideMesh,
    perms: list[list[tuple[int, int]]],
    mesh32: WaveguideMesh,
    matchings: list[list[tuple[int, int]]],
    chips: int,
) -> dict[str, Any]:
    """Worst port isolation of every routed configuration, per chip model and router."""
    out: dict[str, Any] = {}
    for model, sample in CHIPS.items():
        out[model] = {}
        for name, (aware, known) in ROUTERS.items():
            row = {}
            for label, mesh, requests, directed in (
                ("6x6", mesh6, perms, True),
                ("32", mesh32, matchings, False),
            ):
                isolation, seconds = [], 0.0
                for seed in range(chips):
                    chip = sample(mesh.n_cells, np.random.default_rng(seed))
                    ext = extinction_ratio_db(chip.splitter_error_in, chip.splitter_error_out)
                    router = Router(
                        mesh,
                        extinction_db=ext if known else 35.0,
                        isolation_target_db=25.0 if aware else None,
                    )
                    for pairs in requests:
                        t0 = time.perf_counter()
                        result = router.route(pairs, directed=directed)
                        seconds += time.perf_counter() - t0
                        if result.ok:
                            isolation.append(verify(mesh, result, chip).worst_isolation_db)
                iso = np.asarray(isolation)
                row[label] = {
                    "configs": int(iso.size),
                    "ge_25_db_fraction": float(np.mean(iso >= 25.0)),
                    "median_db": float(np.median(iso)),
                    "worst_db": float(iso.min()),
                    "route_s_per_config": seconds / max(1, chips * len(requests)),
                }
            out[model][name] = row
            log(
                f"  isolation {model} {name}: 6x6 {row['6x6']['ge_25_db_fraction']:.3f} >= 25 dB,"
                f" 32 {row['32']['ge_25_db_fraction']:.2f}"
            )
    return out


def _dead_task(args: tuple) -> dict[str, Any]:
    """One dead-cell set: route its matchings with both routers (runs in a worker process)."""
    k, j, seed, ends, n_matchings, tries, exact = args
    mesh, _ = switch_32()
    # an endpoint whose cell, or a cell of its only way in, is dead is lost to any router
    access = {c for p in ends for c, _, _, _ in forced_entry(mesh, p)}
    allowed = [c for c in range(mesh.n_cells) if c not in access]
    dead = sorted(int(c) for c in np.random.default_rng([seed, k, j]).choice(allowed, k, False))
    router, base = Router(mesh, dead), BaselineRouter(mesh, dead, tries=tries)
    out = {"ours": 0, "baseline": 0, "n": 0, "ours_s": [], "misses": 0, "infeasible": 0}
    for i in range(n_matchings):
        # the same matchings for every k: only the dead cells change
        rng = np.random.default_rng([seed, 1000 + j * n_matchings + i])
        pairs = requests_for(Matching.random(32, rng), ends)
        t0 = time.perf_counter()
        result = router.route(pairs)
        out["ours_s"].append(time.perf_counter() - t0)
        paths = base.route(pairs)
        out["n"] += 1
        out["ours"] += bool(result.ok and traced_ok(mesh, result.states, pairs, dead))
        out["baseline"] += bool(
            paths is not None and traced_ok(mesh, baseline_states(mesh.n_cells, paths), pairs, dead)
        )
        if exact and not result.ok:
            feasible = exactly_routable(mesh, pairs, dead)
            out["misses"] += feasible is True
            out["infeasible"] += feasible is False
    return out


def bench_dead(
    ends: list[int],
    ks: Sequence[int],
    n_sets: int,
    n_matchings: int,
    seed: int,
    tries: int,
    exact: bool,
    jobs: int,
) -> list[dict[str, Any]]:
    tasks = [(k, j, seed, ends, n_matchings, tries, exact) for k in ks for j in range(n_sets)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            done = []
            for i, r in enumerate(pool.map(_dead_task, tasks)):
                done.append(r)
                log(f"  dead-cell set {i + 1}/{len(tasks)}")
    else:
        done = []
        for i, t in enumerate(tasks):
            done.append(_dead_task(t))
            log(f"  dead-cell set {i + 1}/{len(tasks)}")
    rows = []
    for k in ks:
        mine = [r for t, r in zip(tasks, done, strict=True) if t[0] == k]
        n = sum(r["n"] for r in mine)
        row = {
            "k": k,
            "matchings": n,
            "ours_fraction": sum(r["ours"] for r in mine) / n,
            "baseline_fraction": sum(r["baseline"] for r in mine) / n,
            "ours_median_s": float(np.median([s for r in mine for s in r["ours_s"]])),
        }
        if exact:
            row["ours_failed_but_routable"] = sum(r["misses"] for r in mine)
            row["proved_unroutable"] = sum(r["infeasible"] for r in mine)
        rows.append(row)
    return rows


# --- main ------------------------------------------------------------------------------------


def _ratio(base: float, ours: float) -> float:
    return base / ours if ours > 0 else float("inf")


def _mark(seconds: float, target: float) -> str:
    return "met" if seconds < target else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matchings", type=int, default=20, help="random 32-port matchings")
    parser.add_argument("--dead-k", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--dead-sets", type=int, default=10, help="dead-cell sets per k")
    parser.add_argument("--dead-matchings", type=int, default=3, help="matchings per dead set")
    parser.add_argument(
        "--cover-attempts", type=int, default=None, help="all_to_all_cover attempts (its default)"
    )
    parser.add_argument("--baseline-tries", type=int, default=6, help="rotated orders")
    parser.add_argument("--stride", type=int, default=1, help="verify every n-th 6x6 config")
    parser.add_argument("--exact", action="store_true", help="MILP check of our failures")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--chips", type=int, default=1, help="sampled chips per chip model")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--quick", action="store_true", help="shrink everything (smoke run)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.matchings, args.dead_k, args.dead_sets, args.dead_matchings = 3, [1, 8], 2, 2
        args.cover_attempts = args.cover_attempts or 1

    mesh, ends = switch_32()
    log(f"32 endpoints on mesh_9x9: {ends}")
    log("6x6 switch: 720 permutations")
    six = bench_6x6(args.baseline_tries, args.stride)
    log("32-port matchings")
    m32 = bench_matchings(mesh, ends, args.matchings, args.seed, args.baseline_tries, args.exact)
    log("all-to-all cover")
    cover = bench_cover(mesh, ends, args.cover_attempts)
    log(f"  cover: {cover['size']} matchings in {cover['seconds']:.1f} s")
    cover_25 = bench_cover(mesh, ends, 1, COVER_ISOLATION_DB)
    log(f"  cover at >= {COVER_ISOLATION_DB} dB: {cover_25['size']} matchings")
    log("port isolation")
    mesh6, inputs, outputs = switch_6x6()
    perms = [
        requests_for(Permutation(list(p)), (inputs, outputs))
        for p in itertools.permutations(range(6))
    ]
    matchings = [
        requests_for(Matching.random(32, np.random.default_rng(args.seed + i)), ends)
        for i in range(args.matchings)
    ]
    isolation = bench_isolation(mesh6, perms, mesh, matchings, args.chips)
    log("dead cells")
    dead = bench_dead(
        ends,
        args.dead_k,
        args.dead_sets,
        args.dead_matchings,
        args.seed,
        args.baseline_tries,
        args.exact,
        args.jobs,
    )
    speedup = _ratio(six["baseline_s"], six["ours_s"])
    summary = {
        "route_matching_32_s": m32["ours_median_s"],
        "all_to_all_cover_s": cover["seconds"],
        "all_to_all_cover_size": cover["size"],
        "perms_6x6_routed": six["ours_routed"],
        "perms_6x6_total": six["n"],
        "perms_6x6_s": six["ours_s"],
        "speedup_vs_baseline": speedup,
        "speedup_workload": "720 permutations of the 6x6 switch (baseline s / our s)",
        "speedup_matching_32": _ratio(m32["baseline_median_s"], m32["ours_median_s"]),
        "all_to_all_cover_verified_worst_isolation_db": cover["verified_worst_isolation_db"],
        "all_to_all_cover_25db_size": cover_25["size"],
        "all_to_all_cover_25db_s": cover_25["seconds"],
        "all_to_all_cover_25db_verified_worst_isolation_db": cover_25[
            "verified_worst_isolation_db"
        ],
    }
    # the criterion under the default imperfections (every cell at the typical figures)
    typical = isolation["typical_35_db"]["aware_typical"]
    for key in ("6x6", "32"):
        summary[f"isolation_{key}_typical_ge_25_db_fraction"] = typical[key]["ge_25_db_fraction"]
        summary[f"isolation_{key}_typical_worst_db"] = typical[key]["worst_db"]
    # the criterion on cells of the published range, before / after isolation-aware
    # routing (the router knowing each cell's extinction)
    published = isolation["published_32_44_db"]
    for when, router in (("before", "plain"), ("after", "aware_per_cell")):
        for label, key in (("6x6", "6x6"), ("32", "32")):
            r = published[router][label]
            summary[f"isolation_{key}_ge_25_db_fraction_{when}"] = r["ge_25_db_fraction"]
            summary[f"isolation_{key}_median_db_{when}"] = r["median_db"]
            summary[f"isolation_{key}_worst_db_{when}"] = r["worst_db"]
    if args.json:
        print(
            json.dumps(
                summary
                | {
                    "endpoints_32": ends,
                    "matching_32": m32,
                    "cover": cover,
                    "cover_25db": cover_25,
                    "perms_6x6": six,
                    "dead_cells": dead,
                    "isolation": isolation,
                    "settings": {k: v for k, v in vars(args).items() if k not in ("json",)},
                }
            )
        )
        return 0

    print(f"32 endpoints on mesh_9x9 (278 cells, 140 edge ports): {ends}")
    print()
    print("workload                          ours                baseline            ratio")
    print(
        f"6x6, 720 permutations   routed  {six['ours_routed']:>4}/{six['n']:<14}"
        f"{six['baseline_routed']:>4}/{six['n']:<14}"
    )
    print(
        f"                        time    {six['ours_s']:>8.2f} s          "
        f"{six['baseline_s']:>8.2f} s          {speedup:5.2f}x"
    )
    print(
        f"                        cells   {six['path_cells_mean']:>8.2f} mean       "
        f"{six['baseline_path_cells_mean']:>8.2f} mean"
    )
    print(
        f"9x9, 32-port matchings  routed  {m32['ours_routed']:>4}/{m32['n']:<14}"
        f"{m32['baseline_routed']:>4}/{m32['n']:<14}"
    )
    print(
        f"                        median  {m32['ours_median_s'] * 1e3:>8.1f} ms         "
        f"{m32['baseline_median_s'] * 1e3:>8.1f} ms         "
        f"{summary['speedup_matching_32']:5.2f}x"
    )
    print(
        f"                        total   {m32['ours_total_s']:>8.2f} s          "
        f"{m32['baseline_total_s']:>8.2f} s          "
        f"{_ratio(m32['baseline_total_s'], m32['ours_total_s']):5.2f}x"
    )
    print("(ratio = baseline time / our time; > 1 means ours is faster)")
    if args.exact:
        print(
            f"32-port matchings our router failed that an exact MILP routes: "
            f"{m32['ours_failed_but_routable']} (time limit hit: {m32['exact_time_limit_hit']})"
        )
    print()
    print("targets                                   measured     target     ")
    print(
        f"one 32-port matching (median)          {m32['ours_median_s'] * 1e3:9.1f} ms  "
        f"{TARGET_MATCHING_32_S * 1e3:6.0f} ms   "
        f"{_mark(m32['ours_median_s'], TARGET_MATCHING_32_S)}"
    )
    print(
        f"all-to-all cover                       {cover['seconds']:9.2f} s   "
        f"{TARGET_COVER_S:6.0f} s    {_mark(cover['seconds'], TARGET_COVER_S)}"
    )
    print(
        f"720 permutations of the 6x6 switch     {six['ours_s']:9.2f} s   "
        f"{TARGET_PERMS_6X6_S:6.0f} s    {_mark(six['ours_s'], TARGET_PERMS_6X6_S)}"
        f"   ({six['ours_per_config_ms']:.1f} ms per configuration)"
    )
    print()
    for c in (cover, cover_25):
        ask = "any isolation" if c["isolation_db"] is None else f">= {c['isolation_db']} dB"
        print(
            f"all-to-all cover ({ask} predicted): {c['size']} matchings (optimum "
            f"{c['optimum']}) in {c['seconds']:.2f} s, {c['pairs_joined']}/{c['pairs_total']} "
            f"pairs joined; {c['note']}; verified on typical cells: worst isolation "
            f"{c['verified_worst_isolation_db']:.1f} dB, return loss "
            f"{c['verified_worst_return_loss_db']:.1f} dB"
        )
    print()
    imp = six["imperfect_chip"]
    print(
        f"6x6 switch: routed {six['ours_routed']}/{six['n']}; path length "
        f"{six['path_cells_min']}/{six['path_cells_mean']:.2f}/{six['path_cells_max']} cells "
        f"(min/mean/max)"
    )
    print(
        f"  {six['verified_configs']} configurations verified (every {args.stride}th): ideal "
        f"loss error max {six['ideal_max_loss_error_db']:.2e} dB"
    )
    if imp:
        print(
            f"  with imperfections (sigma 0.009, 0.5 dB/cell; default router): loss "
            f"{imp['loss_min_db']:.2f}.."
            f"{imp['loss_max_db']:.2f} dB (spread {imp['loss_spread_db']:.2f} dB, "
            f"{imp['max_spread_in_one_config_db']:.2f} dB within one configuration); isolation "
            f"worst {imp['worst_isolation_db']:.1f} dB, median "
            f"{imp['median_isolation_db']:.1f} dB, >= 25 dB in "
            f"{100 * imp['isolation_ge_25_db_fraction']:.0f} %"
        )
    if "imperfect_chip" in m32:
        c = m32["imperfect_chip"]
        print(
            f"9x9, {c['configs']} routed 32-port matchings with imperfections: loss "
            f"{c['loss_min_db']:.2f}..{c['loss_max_db']:.2f} dB, isolation worst "
            f"{c['worst_isolation_db']:.1f} dB, median {c['median_isolation_db']:.1f} dB, "
            f">= 25 dB in {100 * c['isolation_ge_25_db_fraction']:.0f} %"
        )
    print()
    print(
        f"worst port isolation per configuration (scattering solve, 1550 nm), {args.chips} "
        f"chip(s) per model; 6x6: 720 permutations, 9x9: {args.matchings} 32-port matchings"
    )
    print(
        "chip cells                 router            6x6: >= 25 dB  median  worst"
        "    32: >= 25 dB  median  worst"
    )
    for model, rows in isolation.items():
        for name, row in rows.items():
            six_r, m_r = row["6x6"], row["32"]
            print(
                f"{model:<26} {name:<16} {100 * six_r['ge_25_db_fraction']:12.1f} % "
                f"{six_r['median_db']:6.1f} {six_r['worst_db']:6.1f}    "
                f"{100 * m_r['ge_25_db_fraction']:11.0f} % {m_r['median_db']:6.1f} "
                f"{m_r['worst_db']:6.1f}"
            )
    print(
        "(plain: isolation_target_db=None; aware_typical: the router assumes 35 dB in every "
        "cell; aware_per_cell: it knows each cell's extinction)"
    )
    print()
    print(
        f"dead cells on mesh_9x9: {args.dead_sets} random dead-cell sets x "
        f"{args.dead_matchings} random 32-port matchings per k (fraction routable)"
    )
    head = "   k   ours   baseline   ours median time"
    if args.exact:
        head += "   ours missed (MILP routable)   proved unroutable"
    print(head)
    for row in dead:
        line = (
            f"{row['k']:>4}   {row['ours_fraction']:4.2f}   {row['baseline_fraction']:8.2f}   "
            f"{row['ours_median_s'] * 1e3:13.1f} ms"
        )
        if args.exact:
            line += f"   {row['ours_failed_but_routable']:>27}   {row['proved_unroutable']:>17}"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
