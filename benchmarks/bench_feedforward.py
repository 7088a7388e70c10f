"""Benchmark of the feed-forward MZI meshes (ClementsMesh, ReckMesh) against public peers.

What it measures, for Haar-random unitaries (``scipy.stats.unitary_group``, fixed seed) and
random permutations (``Permutation.random``, fixed seed) at n = 8 ... 256 (and n = 512 for ours
only):

1. decomposition: time of ``mesh.decompose(U)`` vs each peer's decomposition of the same ``U``,
   and the max element error ``max |M - U|`` of the matrix ``M`` rebuilt from the settings
   (ours with ``mesh.transfer``, a peer with its own reconstruction);
2. permutation routing: time of ``mesh.route(perm)`` vs each peer's decomposition of the same
   permutation matrix (time + error of the rebuilt matrix);
3. forward transfer: settings -> matrix, ``mesh.transfer(random settings)`` vs each peer's own
   way to build the matrix (Strawberry Fields: products of its ``T``/``Ti``/``M``/``P`` matrices
   as in its tests; interferometer: ``Interferometer.calculate_transformation``; neurophox:
   ``RMNumpy`` / ``TMNumpy(...).matrix`` from random phases).

Times are the best of a few repeats (more repeats for fast calls, about 0.5 s of repeats per
measurement); numba is warmed up first. Peers run in worker processes (one per library): a peer
call exceeding ``--timeout`` seconds is killed, reported as ">T s (timeout)" and that peer is
not run again at larger sizes. A peer that is not installed or fails to import is reported and
skipped. Speed-up ratios are peer time / our time.

Peers (the ``bench`` extra): Strawberry Fields 0.23 (``strawberryfields/decompositions.py`` is
loaded as a standalone file, since ``import strawberryfields`` fails with current scipy),
interferometer and neurophox.

Run (a full run takes about 20 min on 2 CPUs: the peers multiply dense n x n matrices per MZI,
O(n^5), and hit the timeout at n = 256)::

    python benchmarks/bench_feedforward.py                          # tables on stdout
    python benchmarks/bench_feedforward.py --json > result.json     # one JSON object on stdout
    python benchmarks/bench_feedforward.py --sizes 8 16 --timeout 5 # quick run

Progress goes to stderr. The peers and their worker processes are in ``feedforward_peers.py``,
the tables, summary and JSON object in ``feedforward_report.py`` (both next to this script).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import signal
import sys
import time
from typing import Any

import numpy as np
from feedforward_peers import (
    LIB_DIST,
    NOTE_NO_RECONSTRUCTION,
    PEER_LIBS,
    PEER_METHODS,
    PeerMethod,
    PeerWorker,
    Result,
    best_time,
    max_err,
    unitarity_err,
    version_of,
)
from feedforward_report import (
    MEASUREMENTS,
    OURS_CLEMENTS,
    OURS_RECK,
    Table,
    describe,
    fmt_ms,
    new_table,
    render,
    render_targets,
    summarize,
    to_json,
)
from scipy.stats import unitary_group

DEFAULT_SIZES = (8, 16, 32, 64, 128, 256)
DEFAULT_OURS_ONLY_SIZES = (512,)
DEFAULT_TIMEOUT_S = 60.0
SEED = 20240617


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def calibrate() -> float:
    """Best time (s) of a 256 x 256 complex matmul: a yardstick for machine load."""
    A = np.random.default_rng(0).standard_normal((256, 256)) + 0j
    return best_time(lambda: A @ A)[0]


def haar_unitary(n: int) -> np.ndarray:
    return np.asarray(unitary_group.rvs(n, random_state=SEED + n), dtype=np.complex128)


def measure_ours(sizes: list[int], table: Table) -> None:
    from photonics.feedforward.meshes import ClementsMesh, ReckMesh
    from photonics.matching import Permutation

    meshes = ((OURS_CLEMENTS, ClementsMesh), (OURS_RECK, ReckMesh))
    log("[ours] warming up numba ...")
    for _, cls in meshes:
        warm = cls(4)
        warm.transfer(warm.decompose(haar_unitary(4)))
        warm.transfer(warm.random_settings(np.random.default_rng(0)))
        warm.route(Permutation.random(4, np.random.default_rng(0)))
    for n in sizes:
        U = haar_unitary(n)
        perm = random_permutation(n)
        P = perm.to_matrix()
        for name, cls in meshes:
            mesh = cls(n)
            t, s, calls = best_time(lambda mesh=mesh, U=U: mesh.decompose(U))
            res = Result("ok", t, max_err(mesh.transfer(s), U), calls=calls)
            table["decompose"].setdefault(name, {})[n] = res
            t, s, calls = best_time(lambda mesh=mesh, perm=perm: mesh.route(perm))
            table["route"].setdefault(name, {})[n] = Result(
                "ok", t, max_err(mesh.transfer(s), P), calls=calls
            )
            settings = mesh.random_settings(np.random.default_rng(SEED + 3 * n))
            t, M, calls = best_time(lambda mesh=mesh, settings=settings: mesh.transfer(settings))
            table["transfer"].setdefault(name, {})[n] = Result(
                "ok", t, unitarity_err(M), calls=calls
            )
            log(
                f"[{name}] n={n}: decompose {fmt_ms(res.time_s)} ms (err {res.err:.1e}), "
                f"route {fmt_ms(table['route'][name][n].time_s)} ms, "
                f"transfer {fmt_ms(t)} ms"
            )


def random_permutation(n: int) -> Any:
    from photonics.matching import Permutation

    return Permutation.random(n, np.random.default_rng(SEED + 7 * n))


def measure_peers(
    sizes: list[int], libs: list[str], timeout: float, table: Table
) -> dict[str, Any]:
    """Runs the peers; returns per-library availability info."""
    ctx = mp.get_context("spawn")
    info: dict[str, Any] = {}
    for lib in [lib for lib in PEER_LIBS if lib in libs]:
        worker = PeerWorker(lib, ctx)
        methods = [m for m in PEER_METHODS if m.lib == lib]
        log(f"[{lib}] starting worker (import) ...")
        try:
            for method in methods:
                measure_peer_method(method, worker, sizes, timeout, table)
        except BaseException:
            worker.kill()
            raise
        worker.stop()
        info[lib] = {"version": worker.version, "unavailable": worker.unavailable}
        if worker.unavailable:
            log(f"[{lib}] unavailable: {worker.unavailable}")
    return info


def _skipped(stream_timeouts: dict[str, int], stream: str, timeout: float) -> Result | None:
    if stream in stream_timeouts:
        return Result("skipped", note=f">{timeout:g} s at n={stream_timeouts[stream]}")
    return None


def measure_peer_method(
    method: PeerMethod, worker: PeerWorker, sizes: list[int], timeout: float, table: Table
) -> None:
    name = method.name
    timed_out: dict[str, int] = {}  # stream -> smallest n at which it timed out

    def note_timeouts(n: int, results: dict[str, Result], streams: dict[str, str]) -> None:
        for stage, stream in streams.items():
            if stage in results and results[stage].status == "timeout":
                timed_out.setdefault(stream, n)

    for n in sizes:
        if worker.unavailable:
            break
        if method.kind == "transfer":
            res = _skipped(timed_out, "transfer", timeout)
            if res is None:
                req = {"method": name, "n": n, "seed": SEED + 5 * n}
                res = worker.run(req, ["transfer"], timeout).get("transfer") or Result("failed")
                note_timeouts(n, {"transfer": res}, {"transfer": "transfer"})
            table["transfer"].setdefault(name, {})[n] = res
            log(f"[{name}] n={n}: transfer {describe(res, timeout)}")
            continue

        # unitary: decomposition, then (if possible) the peer's reconstruction = its transfer
        U = haar_unitary(n)
        dec = _skipped(timed_out, "haar_dec", timeout)
        rec: Result | None = None
        if dec is None:
            do_rec = method.reconstructs and "haar_rec" not in timed_out
            stages = ["decompose", "reconstruct"] if do_rec else ["decompose"]
            req = {"method": name, "n": n, "matrix": U, "reconstruct": do_rec}
            results = worker.run(req, stages, timeout)
            note_timeouts(n, results, {"decompose": "haar_dec", "reconstruct": "haar_rec"})
            dec = results.get("decompose") or Result("failed", note="no result")
            if do_rec and dec.status == "ok":
                rec = results.get("reconstruct") or Result("failed", note="no result")
                dec.err = rec.err if rec.status == "ok" else None
                if rec.status != "ok":
                    dec.note = f"reconstruction {describe(rec, timeout)}"
            elif method.reconstructs and dec.status == "ok":
                rec = _skipped(timed_out, "haar_rec", timeout)
                dec.note = "reconstruction skipped"
            elif not method.reconstructs and dec.status == "ok":
                dec.note = NOTE_NO_RECONSTRUCTION
        elif method.reconstructs:
            rec = Result("skipped", note=f"decomposition {dec.note}")
        table["decompose"].setdefault(name, {})[n] = dec
        if method.reconstructs:
            if rec is None:
                status = dec.status if dec.status in ("unavailable", "failed") else "skipped"
                why = "timed out" if dec.status == "timeout" else dec.note or dec.status
                rec = Result(status, note=f"decomposition {why}")
            if rec.status == "ok":  # the transfer table shows unitarity, like ours
                rec = Result("ok", rec.time_s, rec.unitarity, calls=rec.calls)
            table["transfer"].setdefault(name, {})[n] = rec
        log(f"[{name}] n={n}: decompose {describe(dec, timeout)}")

        # permutation matrix: decomposition (= the peer's way to route it) + error
        P = random_permutation(n).to_matrix().astype(np.complex128)
        pres = _skipped(timed_out, "perm_dec", timeout)
        if pres is None:
            do_rec = method.reconstructs and "perm_rec" not in timed_out
            stages = ["decompose", "reconstruct"] if do_rec else ["decompose"]
            req = {"method": name, "n": n, "matrix": P, "reconstruct": do_rec}
            results = worker.run(req, stages, timeout)
            note_timeouts(n, results, {"decompose": "perm_dec", "reconstruct": "perm_rec"})
            pres = results.get("decompose") or Result("failed", note="no result")
            if pres.status == "ok":
                prec = results.get("reconstruct")
                if prec is not None and prec.status == "ok":
                    pres.err = prec.err
                elif not method.reconstructs:
                    pres.note = NOTE_NO_RECONSTRUCTION
                elif prec is None:
                    pres.note = "reconstruction skipped"
                else:
                    pres.note = f"reconstruction {describe(prec, timeout)}"
        table["route"].setdefault(name, {})[n] = pres
        log(f"[{name}] n={n}: decompose permutation {describe(pres, timeout)}")
    if worker.unavailable:
        for n in sizes:
            res = Result("unavailable", note=worker.unavailable)
            for m in MEASUREMENTS:
                if m == "transfer" and method.kind == "decompose" and not method.reconstructs:
                    continue
                if m != "transfer" and method.kind == "transfer":
                    continue
                table[m].setdefault(name, {}).setdefault(n, res)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="mesh sizes n"
    )
    parser.add_argument(
        "--ours-only-sizes",
        type=int,
        nargs="*",
        default=list(DEFAULT_OURS_ONLY_SIZES),
        help="extra sizes measured for ours only (default 512; pass nothing to disable)",
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="per-call peer timeout, s"
    )
    parser.add_argument(
        "--peers",
        nargs="*",
        choices=PEER_LIBS,
        default=list(PEER_LIBS),
        help="peer libraries to run (default: all)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: sizes 8 and 16, 10 s peer timeout"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.ours_only_sizes, args.timeout = [8, 16], [], 10.0
    if any(n < 2 for n in args.sizes + args.ours_only_sizes):
        parser.error("sizes must be >= 2")
    args.sizes = sorted(set(args.sizes))
    args.ours_only_sizes = sorted(set(args.ours_only_sizes) - set(args.sizes))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # On SIGTERM exit normally, so that multiprocessing kills the (daemon) peer workers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.perf_counter()
    calib = [calibrate()]
    table = new_table()
    measure_ours(sorted(args.sizes + args.ours_only_sizes), table)
    peer_info = measure_peers(args.sizes, args.peers, args.timeout, table)
    all_sizes = sorted(args.sizes + args.ours_only_sizes)
    summary = summarize(table, args.timeout)
    calib.append(calibrate())
    summary["calibration_matmul256_s"] = calib

    header = [
        "Feed-forward mesh benchmark: ours (pswitch photonics) vs public peers",
        f"python {platform.python_version()}, numpy {np.__version__}, scipy "
        f"{version_of('scipy')}, numba {version_of('numba')}, {os.cpu_count()} CPUs; "
        f"peer timeout {args.timeout:g} s; seed {SEED}",
        f"load yardstick (256x256 complex matmul, start / end): {fmt_ms(calib[0])} / "
        f"{fmt_ms(calib[1])} ms"
        + (
            "  ** WARNING: the machine load changed during the run **"
            if max(calib) > 2 * min(calib)
            else ""
        ),
    ]
    for lib in PEER_LIBS:
        info = peer_info.get(lib)
        if info is None:
            header.append(f"  peer {LIB_DIST[lib]}: not run")
        elif info["unavailable"]:
            header.append(f"  peer {LIB_DIST[lib]}: NOT AVAILABLE ({info['unavailable']})")
        else:
            header.append(f"  peer {LIB_DIST[lib]} {info['version']}: ok")
    text = (
        "\n".join(header) + "\n" + render(table, all_sizes, args.timeout) + render_targets(summary)
    )
    text += f"\n\n(total benchmark wall time {time.perf_counter() - started:.0f} s)"
    if args.json:
        log(text)
        print(json.dumps(to_json(table, summary, peer_info, args, SEED), indent=2))
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
