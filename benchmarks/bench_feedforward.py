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

Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import importlib.util
import json
import math
import multiprocessing as mp
import os
import platform
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
from scipy.stats import unitary_group

DEFAULT_SIZES = (8, 16, 32, 64, 128, 256)
DEFAULT_OURS_ONLY_SIZES = (512,)
DEFAULT_TIMEOUT_S = 60.0
SEED = 20240617
#: Repeats of a timed call continue while the expected total stays below this budget.
REPEAT_BUDGET_S = 0.5
MAX_REPEATS = 200
#: Extra wait, beyond the timeout, for one measurement stage (repeats, pickling, checks).
STAGE_SLACK_S = 3.0
#: Wait for a worker to import its library (tensorflow is slow); not part of any timing.
LOAD_TIMEOUT_S = 300.0

OURS_CLEMENTS = "ours ClementsMesh"
OURS_RECK = "ours ReckMesh"
MEASUREMENTS = ("decompose", "route", "transfer")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def best_time(fn: Callable[[], Any]) -> tuple[float, Any, int]:
    """(best time in s, result of the last call, number of calls) of ``fn()``.

    A call slower than half the repeat budget runs once; faster ones repeat until the budget
    (or ``MAX_REPEATS``) is used up.
    """
    start = time.perf_counter()
    result = fn()
    best = total = time.perf_counter() - start
    calls = 1
    while calls < MAX_REPEATS and total + best < REPEAT_BUDGET_S:
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        total += elapsed
        calls += 1
    return best, result, calls


def calibrate() -> float:
    """Best time (s) of a 256 x 256 complex matmul: a yardstick for machine load."""
    A = np.random.default_rng(0).standard_normal((256, 256)) + 0j
    return best_time(lambda: A @ A)[0]


def haar_unitary(n: int) -> np.ndarray:
    return np.asarray(unitary_group.rvs(n, random_state=SEED + n), dtype=np.complex128)


def max_err(M: np.ndarray, target: np.ndarray) -> float:
    return float(np.abs(np.asarray(M) - target).max())


def unitarity_err(M: np.ndarray) -> float:
    M = np.asarray(M)
    return float(np.abs(M @ M.conj().T - np.eye(M.shape[0])).max())


def version_of(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


# ==== peers (run inside worker processes) ==================================================


@dataclass(frozen=True)
class PeerMethod:
    """One peer function, as the parent knows it (names only, no import)."""

    name: str
    lib: str  # "sf" | "interferometer" | "neurophox"
    kind: str  # "decompose" (unitary -> settings) or "transfer" (random settings -> matrix)
    topology: str  # "rect" (compare with ClementsMesh) or "tri" (ReckMesh)
    reconstructs: bool = True  # decompose kind: the peer can rebuild the matrix itself


PEER_METHODS = (
    PeerMethod("SF rectangular", "sf", "decompose", "rect"),
    PeerMethod("SF rectangular_compact", "sf", "decompose", "rect"),
    PeerMethod("SF triangular", "sf", "decompose", "tri"),
    PeerMethod("interferometer square", "interferometer", "decompose", "rect"),
    PeerMethod("interferometer triangle", "interferometer", "decompose", "tri"),
    PeerMethod("neurophox clements", "neurophox", "decompose", "rect", reconstructs=False),
    PeerMethod("neurophox RMNumpy", "neurophox", "transfer", "rect"),
    PeerMethod("neurophox TMNumpy", "neurophox", "transfer", "tri"),
)
PEER_LIBS = ("sf", "interferometer", "neurophox")
LIB_DIST = {"sf": "strawberryfields", "interferometer": "interferometer", "neurophox": "neurophox"}
NOTE_NO_RECONSTRUCTION = "no reconstruction: neurophox 0.1.0a4 returns raw nulling phases"


@dataclass(frozen=True)
class Decomposer:
    decompose: Callable[[np.ndarray], Any]
    reconstruct: Callable[[Any], np.ndarray] | None
    phases: Callable[[Any], list[Any]]  # every real phase of the result, to check finiteness


@dataclass(frozen=True)
class Builder:
    random_settings: Callable[[int, np.random.Generator], Any]
    build: Callable[[Any], np.ndarray]


PeerApi = dict[str, Decomposer | Builder]


def _load_sf() -> PeerApi:
    spec = importlib.util.find_spec("strawberryfields")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("strawberryfields is not installed")
    path = os.path.join(next(iter(spec.submodule_search_locations)), "decompositions.py")
    mod_spec = importlib.util.spec_from_file_location("_sf_decompositions", path)
    if mod_spec is None or mod_spec.loader is None:
        raise ImportError(f"cannot load {path}")
    dec = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(dec)

    def rect_rebuild(res: Any) -> np.ndarray:  # as in SF's tests of `rectangular`
        tilist, diags, tlist = res
        q = np.identity(len(diags), dtype=np.complex128)
        for t in tilist:
            q = dec.T(*t) @ q
        q = np.diag(diags) @ q
        for t in reversed(tlist):
            q = dec.Ti(*t) @ q
        return q

    def rect_phases(res: Any) -> list[Any]:
        tilist, diags, tlist = res
        return [t[2:4] for t in tilist + tlist] + [np.angle(diags)]

    def tri_rebuild(res: Any) -> np.ndarray:  # as in SF's tests of `triangular`
        tlist, diags, _ = res
        q = np.diag(diags)
        for t in tlist:
            q = dec.Ti(*t) @ q
        return q

    def tri_phases(res: Any) -> list[Any]:
        tlist, diags, _ = res
        return [t[2:4] for t in tlist] + [np.angle(diags)]

    def compact_rebuild(ph: dict[str, Any]) -> np.ndarray:  # SF's _rectangular_compact_recompose
        m = ph["m"]
        q = np.eye(m, dtype=np.complex128)
        for j in range(0, m - 1, 2):
            q = dec.P(j, ph["phi_ins"][j], m) @ q
        for layer in range(m):
            if (layer + m + 1) % 2 == 0:
                q = dec.P(m - 1, ph["phi_edges"][m - 1, layer], m) @ q
            for mode in range(layer % 2, m - 1, 2):
                q = dec.M(mode, ph["sigmas"][mode, layer], ph["deltas"][mode, layer], m) @ q
        for j, phi in ph["phi_outs"].items():
            q = dec.P(j, phi, m) @ q
        return q

    def compact_phases(ph: dict[str, Any]) -> list[Any]:
        keys = ("phi_ins", "sigmas", "deltas", "phi_edges", "phi_outs")
        return [v for k in keys for v in ph[k].values()]

    return {
        "SF rectangular": Decomposer(dec.rectangular, rect_rebuild, rect_phases),
        "SF rectangular_compact": Decomposer(
            dec.rectangular_compact, compact_rebuild, compact_phases
        ),
        "SF triangular": Decomposer(dec.triangular, tri_rebuild, tri_phases),
    }


def _load_interferometer() -> PeerApi:
    itf = importlib.import_module("interferometer")
    if not hasattr(itf, "square_decomposition"):  # 1.1.x: everything lives in interferometer.main
        itf = importlib.import_module("interferometer.main")

    def phases(res: Any) -> list[Any]:
        return [(bs.theta, bs.phi) for bs in res.BS_list] + list(res.output_phases)

    def rebuild(res: Any) -> np.ndarray:
        return res.calculate_transformation()

    return {
        "interferometer square": Decomposer(itf.square_decomposition, rebuild, phases),
        "interferometer triangle": Decomposer(itf.triangle_decomposition, rebuild, phases),
    }


def _load_neurophox() -> PeerApi:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    # tensorflow writes absl/oneDNN chatter straight to fd 2 while importing: mute it.
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        helpers = importlib.import_module("neurophox.helpers")
        nnp = importlib.import_module("neurophox.numpy")
        generic = importlib.import_module("neurophox.numpy.generic")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)

    def decompose(U: np.ndarray) -> Any:
        with np.errstate(all="ignore"):
            return helpers.clements_decomposition(U)

    def phases(res: Any) -> list[Any]:
        theta, phi, diag = res
        return [theta, phi, np.angle(diag)]

    def builder(cls: Any, n_layers: Callable[[int], int]) -> Builder:
        def settings(n: int, rng: np.random.Generator) -> Any:
            shape = (n_layers(n), n // 2)
            return (
                n,
                rng.uniform(0, np.pi, shape),
                rng.uniform(0, 2 * np.pi, shape),
                rng.uniform(0, 2 * np.pi, n),
            )

        def build(s: Any) -> np.ndarray:
            n, theta, phi, gamma = s
            return cls(n, phases=generic.MeshPhases(theta, phi, gamma)).matrix

        return Builder(settings, build)

    return {
        "neurophox clements": Decomposer(decompose, None, phases),
        "neurophox RMNumpy": builder(nnp.RMNumpy, lambda n: n),
        "neurophox TMNumpy": builder(nnp.TMNumpy, lambda n: 2 * n - 3),
    }


LOADERS: dict[str, Callable[[], PeerApi]] = {
    "sf": _load_sf,
    "interferometer": _load_interferometer,
    "neurophox": _load_neurophox,
}


def _all_finite(parts: list[Any]) -> bool:
    try:
        return all(bool(np.all(np.isfinite(np.asarray(p, dtype=float)))) for p in parts)
    except (TypeError, ValueError):
        return False


def _serve(api: PeerApi, req: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Run one request; yields one message per finished stage."""
    impl = api[req["method"]]
    if isinstance(impl, Decomposer):
        U = req["matrix"]
        t, res, calls = best_time(lambda: impl.decompose(U))
        valid = _all_finite(impl.phases(res))
        note = "" if valid else "non-finite phases (NaN)"
        yield {"stage": "decompose", "time_s": t, "calls": calls, "valid": valid, "note": note}
        if req["reconstruct"] and impl.reconstruct is not None and valid:
            rebuild = impl.reconstruct
            t, M, calls = best_time(lambda: rebuild(res))
            yield {
                "stage": "reconstruct",
                "time_s": t,
                "calls": calls,
                "err": max_err(M, U),
                "unitarity": unitarity_err(M),
            }
    else:
        settings = impl.random_settings(req["n"], np.random.default_rng(req["seed"]))
        t, M, calls = best_time(lambda: impl.build(settings))
        yield {"stage": "transfer", "time_s": t, "calls": calls, "unitarity": unitarity_err(M)}


def _worker_main(conn: Connection, lib: str) -> None:
    warnings.simplefilter("ignore")
    try:
        api = LOADERS[lib]()
    except Exception as exc:
        conn.send(("unavailable", f"{type(exc).__name__}: {exc}"))
        conn.close()
        return
    conn.send(("ready", {"version": version_of(LIB_DIST[lib])}))
    while True:
        try:
            req = conn.recv()
        except EOFError:
            return
        if req is None:
            return
        try:
            for message in _serve(api, req):
                conn.send(("stage", message))
        except Exception as exc:
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
        else:
            conn.send(("done", None))


# ==== parent side ================================================================================


@dataclass
class Result:
    status: str  # ok | timeout | failed | skipped | unavailable
    time_s: float | None = None
    err: float | None = None
    note: str = ""
    calls: int = 0
    unitarity: float | None = None  # max |M M^dag - I| of a rebuilt matrix, when known

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "time_s": self.time_s,
            "err": self.err,
            "note": self.note or None,
            "calls": self.calls,
        }


class PeerWorker:
    """A worker process holding one peer library; killed (and restarted later) on timeout."""

    def __init__(self, lib: str, ctx: Any) -> None:
        self.lib = lib
        self.ctx = ctx
        self.proc: Any = None
        self.conn: Connection | None = None
        self.unavailable: str | None = None
        self.version: str | None = version_of(LIB_DIST[lib])

    def _start(self) -> bool:
        if self.unavailable is not None:
            return False
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker_main, args=(child, self.lib), daemon=True)
        proc.start()
        child.close()
        reason = None
        if not parent.poll(LOAD_TIMEOUT_S):
            reason = f"import took more than {LOAD_TIMEOUT_S:g} s"
        else:
            try:
                kind, payload = parent.recv()
            except EOFError:
                kind, payload = "unavailable", "worker process died while importing"
            if kind == "ready":
                self.proc, self.conn = proc, parent
                self.version = payload["version"]
                return True
            reason = payload
        if proc.is_alive():
            proc.kill()
        proc.join()
        parent.close()
        self.unavailable = reason
        return False

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None

    def stop(self) -> None:
        if self.proc is None or self.conn is None:
            return
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()
        self.proc = self.conn = None

    def run(self, req: dict[str, Any], stages: list[str], timeout: float) -> dict[str, Result]:
        """Results of the finished stages; a stage that timed out or failed ends the request."""
        if self.proc is None and not self._start():
            note = self.unavailable or "unavailable"
            return {s: Result("unavailable", note=note) for s in stages}
        assert self.conn is not None
        self.conn.send(req)
        out: dict[str, Result] = {}
        for stage in stages:
            if not self.conn.poll(timeout + STAGE_SLACK_S):
                self.kill()
                out[stage] = Result("timeout", note=f"killed after {timeout + STAGE_SLACK_S:g} s")
                return out
            try:
                kind, payload = self.conn.recv()
            except EOFError:
                self.kill()
                out[stage] = Result("failed", note="worker process died")
                return out
            if kind == "done":
                return out
            if kind == "error":
                out[stage] = Result("failed", note=payload)
                return out
            t = float(payload["time_s"])
            if t > timeout:
                self.kill()
                out[stage] = Result("timeout", time_s=t, note=f"one call took {t:.1f} s")
                return out
            valid = payload.get("valid", True)
            out[stage] = Result(
                "ok" if valid else "failed",
                time_s=t,
                err=payload.get("err", payload.get("unitarity")),
                note=payload.get("note", ""),
                calls=int(payload["calls"]),
                unitarity=payload.get("unitarity"),
            )
            if not valid:
                break
        if self.conn.poll(timeout + STAGE_SLACK_S):
            kind, _ = self.conn.recv()
            if kind != "done":  # the worker went on with a stage nobody asked for
                self.kill()
        else:
            self.kill()
        return out


Table = dict[str, dict[str, dict[int, Result]]]  # measurement -> implementation -> n -> result


def new_table() -> Table:
    return {m: {} for m in MEASUREMENTS}


def measure_ours(sizes: list[int], table: Table) -> None:
    from photonics.feedforward import ClementsMesh, ReckMesh
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


# ==== report ======================================================================================


def fmt_ms(t: float | None) -> str:
    if t is None:
        return "-"
    ms = t * 1e3
    if ms < 0.1:
        return f"{ms:.4f}"
    if ms < 1000:
        return f"{ms:.3f}"
    return f"{ms:.0f}"


def describe(res: Result, timeout: float) -> str:
    if res.status == "ok":
        err = "" if res.err is None else f" (err {res.err:.1e})"
        return f"{fmt_ms(res.time_s)} ms{err}" + (f" [{res.note}]" if res.note else "")
    if res.status == "timeout":
        return f">{timeout:g} s (timeout)"
    if res.status == "skipped":
        return f"skipped ({res.note})"
    if res.status == "unavailable":
        return "not available"
    return f"failed: {res.note}"


def fastest_peer(table: Table, measurement: str, n: int) -> tuple[str | None, float | None, bool]:
    """(name, time, is_lower_bound) of the fastest peer with a valid result at ``n``.

    When no peer finished but some timed out, the time is the timeout (a lower bound).
    """
    best: tuple[str | None, float | None] = (None, None)
    timeouts: list[str] = []
    for name, per_n in table[measurement].items():
        if name.startswith("ours"):
            continue
        res = per_n.get(n)
        if res is None:
            continue
        if res.status == "ok" and res.time_s is not None:
            if best[1] is None or res.time_s < best[1]:
                best = (name, res.time_s)
        elif res.status in ("timeout", "skipped"):  # skipped = timed out at a smaller n
            timeouts.append(name)
    if best[0] is not None:
        return best[0], best[1], False
    if timeouts:
        return "all peers timed out", None, True
    return None, None, False


def speedup(
    table: Table, measurement: str, n: int, ours: str, timeout: float
) -> tuple[float | None, bool, str | None]:
    """(fastest peer time / ours, is_lower_bound, peer name)."""
    our = table[measurement].get(ours, {}).get(n)
    if our is None or our.status != "ok" or not our.time_s:
        return None, False, None
    name, t, lower = fastest_peer(table, measurement, n)
    if name is None:
        return None, False, None
    if lower:
        return timeout / our.time_s, True, name
    assert t is not None
    return t / our.time_s, False, name


def fmt_ratio(value: float | None, lower: bool) -> str:
    if value is None:
        return ""
    return (">" if lower else "") + (f"{value:.0f}x" if value >= 10 else f"{value:.2f}x")


TITLES = {
    "decompose": "1. Decomposition of a Haar-random unitary U (err = max |M - U|, M rebuilt "
    "from the settings)",
    "route": "2. Permutation routing: ours .route(perm) vs peer decomposition of the "
    "permutation matrix P (err = max |M - P|)",
    "transfer": "3. Forward transfer, settings -> matrix (err = max |M M^dag - I|; SF / "
    "interferometer rebuild their decomposition of U)",
}


def render(table: Table, sizes: list[int], timeout: float) -> str:
    lines: list[str] = []
    for measurement in MEASUREMENTS:
        lines += ["", "=" * 100, TITLES[measurement], "=" * 100]
        lines.append(
            f"{'n':>5}  {'implementation':<26}{'time [ms]':>14}{'err':>10}  {'peer/ours':>10}  note"
        )
        order = [OURS_CLEMENTS, OURS_RECK] + [m.name for m in PEER_METHODS]
        names = [name for name in order if name in table[measurement]]
        topology = {m.name: m.topology for m in PEER_METHODS}
        for n in sizes:
            rows = [(name, table[measurement][name].get(n)) for name in names]
            rows = [(name, res) for name, res in rows if res is not None]
            if not rows:
                continue
            lines.append("-" * 100)
            for name, res in rows:
                assert res is not None
                ours_name = OURS_RECK if topology.get(name) == "tri" else OURS_CLEMENTS
                our = table[measurement].get(ours_name, {}).get(n)
                ratio = ""
                if not name.startswith("ours") and our is not None and our.time_s:
                    if res.status == "ok" and res.time_s is not None:
                        ratio = fmt_ratio(res.time_s / our.time_s, False)
                    elif res.status == "timeout":
                        ratio = fmt_ratio(timeout / our.time_s, True)
                if res.status == "ok":
                    time_s = fmt_ms(res.time_s)
                    note = res.note
                elif res.status == "timeout":
                    time_s, note = f">{timeout:g} s", "timeout"
                elif res.status == "skipped":
                    time_s, note = "skipped", res.note
                elif res.status == "unavailable":
                    time_s, note = "n/a", f"not available: {res.note}"
                else:
                    time_s, note = "failed", res.note
                err = "-" if res.err is None else f"{res.err:.1e}"
                lines.append(f"{n:>5}  {name:<26}{time_s:>14}{err:>10}  {ratio:>10}  {note[:72]}")
            value, lower, peer = speedup(table, measurement, n, OURS_CLEMENTS, timeout)
            if peer is not None:
                lines.append(
                    f"{'':>5}  -> fastest peer: {peer}; speed-up vs {OURS_CLEMENTS}: "
                    f"{fmt_ratio(value, lower)}"
                )
    lines.append("")
    lines.append(
        "peer/ours = peer time / ours of the same topology (rectangular peers vs ClementsMesh, "
        "triangular vs ReckMesh);"
    )
    lines.append("'>' marks a lower bound (the peer hit the timeout).")
    return "\n".join(lines)


def ours_time(table: Table, measurement: str, name: str, n: int) -> float | None:
    res = table[measurement].get(name, {}).get(n)
    return res.time_s if res is not None and res.status == "ok" else None


def summarize(table: Table, timeout: float) -> dict[str, Any]:
    errs = [
        r.err
        for name in (OURS_CLEMENTS, OURS_RECK)
        for r in table["decompose"].get(name, {}).values()
        if r.err is not None
    ]
    sp_dec, lb_dec, peer_dec = speedup(table, "decompose", 128, OURS_CLEMENTS, timeout)
    sp_route, lb_route, peer_route = speedup(table, "route", 128, OURS_CLEMENTS, timeout)
    sp_tr, lb_tr, peer_tr = speedup(table, "transfer", 128, OURS_CLEMENTS, timeout)
    out = {
        "decompose_speedup_128": sp_dec,
        "decompose_speedup_128_lower_bound": lb_dec,
        "decompose_speedup_128_peer": peer_dec,
        "decompose_err_max": max(errs) if errs else None,
        "decompose_s_256": ours_time(table, "decompose", OURS_CLEMENTS, 256),
        "decompose_s_512": ours_time(table, "decompose", OURS_CLEMENTS, 512),
        "decompose_s_256_reck": ours_time(table, "decompose", OURS_RECK, 256),
        "decompose_s_512_reck": ours_time(table, "decompose", OURS_RECK, 512),
        "route_s_256": ours_time(table, "route", OURS_CLEMENTS, 256),
        "route_s_256_reck": ours_time(table, "route", OURS_RECK, 256),
        "route_speedup_128": sp_route,
        "route_speedup_128_lower_bound": lb_route,
        "route_speedup_128_peer": peer_route,
        "transfer_speedup_128": sp_tr,
        "transfer_speedup_128_lower_bound": lb_tr,
        "transfer_speedup_128_peer": peer_tr,
        "transfer_s_256": ours_time(table, "transfer", OURS_CLEMENTS, 256),
        "transfer_s_256_reck": ours_time(table, "transfer", OURS_RECK, 256),
    }
    return out


def targets(summary: dict[str, Any]) -> list[tuple[str, str, float | None, bool]]:
    """(description, verdict, value, is_lower_bound) for each target."""

    def at_least(key: str, target: float) -> tuple[str, float | None, bool]:
        value, lower = summary[key], bool(summary.get(f"{key}_lower_bound"))
        if value is None:
            return "N/A", None, False
        if value >= target:
            return "PASS", value, lower
        return ("UNKNOWN" if lower else "FAIL"), value, lower

    def below(key: str, target: float) -> tuple[str, float | None, bool]:
        value = summary[key]
        if value is None:
            return "N/A", None, False
        return ("PASS" if value < target else "FAIL"), value, False

    def err_target() -> tuple[str, float | None, bool]:
        value = summary["decompose_err_max"]
        if value is None:
            return "N/A", None, False
        return ("PASS" if value <= 1e-12 else "FAIL"), value, False

    rows = [
        (
            "decomposition n=128 >= 100x faster than fastest peer",
            *at_least("decompose_speedup_128", 100),
        ),
        ("decomposition max error <= 1e-12 (all n, both meshes)", *err_target()),
        ("decomposition n=256 < 0.1 s", *below("decompose_s_256", 0.1)),
        ("decomposition n=512 < 1 s", *below("decompose_s_512", 1.0)),
        ("routing n=256 < 5 ms", *below("route_s_256", 5e-3)),
        ("routing n=128 >= 1000x faster than fastest peer", *at_least("route_speedup_128", 1000)),
        ("transfer n=128 >= 20x faster than fastest peer", *at_least("transfer_speedup_128", 20)),
        ("transfer n=256 < 50 ms", *below("transfer_s_256", 50e-3)),
    ]
    return rows


def render_targets(summary: dict[str, Any]) -> str:
    lines = ["", "=" * 100, "Targets (ours = ClementsMesh)", "=" * 100]
    for desc, verdict, value, lower in targets(summary):
        if value is None:
            shown = "not measured"
        elif "speed-up" in desc or "faster" in desc:
            shown = fmt_ratio(value, lower)
        elif "error" in desc:
            shown = f"{value:.2e}"
        else:
            shown = f"{value * 1e3:.3f} ms"
        lines.append(f"  [{verdict:^7}] {desc:<58} {shown}")
    reck = [
        ("decompose n=256", summary["decompose_s_256_reck"]),
        ("decompose n=512", summary["decompose_s_512_reck"]),
        ("route n=256", summary["route_s_256_reck"]),
        ("transfer n=256", summary["transfer_s_256_reck"]),
    ]
    lines.append(
        "  ReckMesh for reference: "
        + ", ".join(f"{k} {fmt_ms(v)} ms" for k, v in reck if v is not None)
    )
    return "\n".join(lines)


def _finite_or_none(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite_or_none(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite_or_none(v) for v in obj]
    return obj


def to_json(
    table: Table,
    summary: dict[str, Any],
    peer_info: dict[str, Any],
    args: argparse.Namespace,
) -> dict[str, Any]:
    def per_impl(name: str) -> dict[str, Any]:
        return {
            m: {str(n): r.to_json() for n, r in sorted(table[m][name].items())}
            for m in MEASUREMENTS
            if name in table[m]
        }

    peers: dict[str, Any] = {}
    for method in PEER_METHODS:
        info = peer_info.get(method.lib)
        entry: dict[str, Any] = {
            "library": LIB_DIST[method.lib],
            "version": None if info is None else info["version"],
            "available": info is not None and info["unavailable"] is None,
            "unavailable_reason": "not run" if info is None else info["unavailable"],
            "topology": method.topology,
        }
        entry.update(per_impl(method.name))
        peers[method.name] = entry
    result = dict(summary)
    result["targets"] = {
        desc: {"verdict": verdict, "value": value, "lower_bound": lower}
        for desc, verdict, value, lower in targets(summary)
    }
    result["ours"] = {name: per_impl(name) for name in (OURS_CLEMENTS, OURS_RECK)}
    result["peers"] = peers
    result["config"] = {
        "sizes": args.sizes,
        "ours_only_sizes": args.ours_only_sizes,
        "timeout_s": args.timeout,
        "seed": SEED,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": version_of("scipy"),
        "numba": version_of("numba"),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
    }
    return _finite_or_none(result)


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
    args = parser.parse_args(argv)
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
        print(json.dumps(to_json(table, summary, peer_info, args), indent=2))
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
