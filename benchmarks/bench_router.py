"""Router benchmark: negotiated-congestion routing on recirculating hexagonal meshes.

What it measures (``photonics.recirculating.routing``), each side by side with a plain baseline
(``router_baseline.py``, next to this script):

1. 32-port matchings on :func:`~photonics.recirculating.switch_geometry.switch_32` (mesh_9x9: 278
   cells, 140 edge ports, 32 chosen as endpoints): ``Router(mesh).route`` of random perfect
   matchings (``Matching.random``, fixed seeds); success count, median time of one matching
   (``route_matching_32_s``), the longest routed path (``ours_path_cells_max``, cells), and for
   every routed one the scattering check with sampled imperfections (loss, worst isolation);
2. the all-to-all cover: one timed call of ``all_to_all_cover(Router(mesh), endpoints)`` with
   its defaults (the optimum is 31 perfect matchings), and one asking each matching for a
   predicted isolation of ``COVER_ISOLATION_DB`` (25.5 dB: 25 plus a margin for second-order
   leaks); each cover's matchings verified on cells at the typical figures
   (``MZIImperfections.typical()``: 35 dB, 0.5 dB), worst isolation and return loss;
3. the 6x6 switch (:func:`~photonics.recirculating.switch_geometry.switch_6x6`): all 720
   permutations, routed count, total time, path lengths (cells), and for every permutation
   (``--stride``) ``verify`` with no imperfections (max error of the path loss against cells x 0.5
   dB + links) and with ``MZIImperfections.sample(mesh.n_cells, np.random.default_rng(0),
   loss_db=0.5)`` (loss spread, worst isolation);
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
light with :func:`~photonics.recirculating.waveguide_mesh.trace` through the cell states: it must
leave at the requested port without touching a dead cell.

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
    python benchmarks/bench_router.py --dead-sets 20 --dead-matchings 5  # the dead-cell table
    python benchmarks/bench_router.py --chips 4                          # isolation, 4 chips
    python benchmarks/bench_router.py --quick                            # smoke run (1 min)

6. self-calibrated chips (``--selfcal-chips``, default 3; ``hex_selfcal_bench.py``): sampled
   32-endpoint chips calibrated through their endpoints' photodiodes, the optimal cover measured
   on that calibration side by side with the factory one, and the cover at
   ``COVER_ISOLATION_DB`` (25 dB plus the prediction's margin) routed on the calibration's
   per-state extinctions, measured against its prediction (``--isolation-plot`` draws it);
   ``--cache DIR`` takes the self-calibrations from ``DIR/seedN.npz`` instead of running them
   (about 20 s a chip), and writes those it runs there. Per chip also: the 1-factorisation
   searched for isolation (``cover_search``: the optimal cover, ``cover_optimal_*``), its
   matchings' leaks cancelled on the chip (``hex_leaks``: ``cancel_gain_db_median``), and the
   cover at the goal built from it, a matching predicted short kept whole when it measures at
   the goal once cancelled (``cover_25db_rescued``).
7. geometry (``--design-chips``, default 3 a point; ``hex_design_bench.py``): a yield study on
   Dask over mesh size and endpoint placement, the design curve (``--design-plot``).

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

import numpy as np
from hex_design_bench import bench_design, plot_design, print_design
from hex_selfcal_bench import COVER_ISOLATION_DB, bench_selfcal, plot_isolation, print_selfcal
from router_baseline import BaselineRouter, baseline_states, exactly_routable, traced_ok
from router_report import print_tables, summarize

from photonics.devices.mzi import MZIImperfections, extinction_ratio_db
from photonics.matching import Matching, Permutation
from photonics.recirculating.covers import all_to_all_cover
from photonics.recirculating.routing import Router, requests_for, verify
from photonics.recirculating.switch_geometry import switch_6x6, switch_32
from photonics.recirculating.waveguide_mesh import WaveguideMesh, forced_entry


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- workloads -------------------------------------------------------------------------------


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


def bench_matchings(
    mesh: WaveguideMesh, ends: list[int], n: int, seed: int, tries: int, exact: bool
) -> dict[str, Any]:
    router, base = Router(mesh), BaselineRouter(mesh, tries=tries)
    ours_s, base_s, ours_ok, base_ok, misses, unknown, verified = [], [], 0, 0, 0, 0, []
    iterations, bad_claims, lengths = [], 0, []
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
                lengths += [len(p.cells) for p in result.paths]
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
        "ours_path_cells_max": int(max(lengths, default=0)),
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


def parse_args() -> argparse.Namespace:
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
    parser.add_argument(
        "--selfcal-chips", type=int, default=3, help="self-calibrated 32-endpoint chips (0: none)"
    )
    parser.add_argument(
        "--cache",
        default=None,
        help="directory of cached self-calibrations (seedN.npz) used instead of running them",
    )
    parser.add_argument("--isolation-plot", default=None, help="PNG: measured vs predicted")
    parser.add_argument(
        "--design-chips", type=int, default=3, help="chips a design point of the geometry study"
    )
    parser.add_argument("--design-folder", default=None, help="keep the study's Parquet rows")
    parser.add_argument("--design-plot", default=None, help="PNG: the design curve")
    parser.add_argument("--quick", action="store_true", help="shrink everything (smoke run)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.matchings, args.dead_k, args.dead_sets, args.dead_matchings = 3, [1, 8], 2, 2
        args.cover_attempts = args.cover_attempts or 1
        args.selfcal_chips = min(args.selfcal_chips, 1)
        args.design_chips = min(args.design_chips, 1)
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The workloads, in the order they run; their figures keyed as in the JSON object."""
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
    if args.quick:  # a spread of the permutations, not all 720
        perms = perms[:: max(args.stride, 24)]
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
    selfcal: dict[str, Any] = {}
    if args.selfcal_chips:
        log(f"self-calibrated chips: {args.selfcal_chips}")
        selfcal = bench_selfcal(args.selfcal_chips, args.cache, args.quick)
        pairs = selfcal.pop("isolation_pairs")
        if args.isolation_plot:
            plot_isolation(pairs, args.isolation_plot)
    design: dict[str, Any] = {}
    if args.design_chips:
        log(f"geometry: design points on Dask, {args.design_chips} chips each")
        design = bench_design(args.design_chips, args.quick, args.design_folder, args.jobs)
        if args.design_plot:
            plot_design(design, args.design_plot)
    return {
        **selfcal,
        **design,
        "endpoints_32": ends,
        "matching_32": m32,
        "cover": cover,
        "cover_25db": cover_25,
        "perms_6x6": six,
        "dead_cells": dead,
        "isolation": isolation,
    }


def main() -> int:
    args = parse_args()
    figures = run(args)
    summary = summarize(figures)
    if args.json:
        settings = {k: v for k, v in vars(args).items() if k not in ("json",)}
        print(json.dumps(summary | figures | {"settings": settings}))
        return 0
    print_tables(figures, summary, args)
    if "hex_selfcal_s" in figures:
        print_selfcal(figures)
    if "design_points" in figures:
        print_design(figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
