"""The peers of the feed-forward benchmark (``bench_feedforward.py``) and the worker processes
that run them.

It holds:

- the measures both sides take: ``best_time`` (best of repeats within ``REPEAT_BUDGET_S``),
  ``max_err``, ``unitarity_err``, ``version_of``;
- the peer adapters, as the parent names them (``PeerMethod``, ``PEER_METHODS``) and as a worker
  loads them (``LOADERS``: Strawberry Fields' ``decompositions.py`` as a standalone file,
  interferometer, neurophox; each gives a ``PeerApi`` of ``Decomposer`` and ``Builder``);
- the worker-process protocol: ``_worker_main`` (the child: load one library, then answer
  requests with ``_serve``, one message per finished stage) and ``PeerWorker`` (the parent: start,
  time out, kill and restart a worker), whose answers are ``Result`` records.

The workers are started with the ``spawn`` method: a child finds ``_worker_main`` by importing
this module by name, from the ``sys.path`` its parent hands it (``benchmarks/`` first, as for
``python benchmarks/bench_feedforward.py`` and ``pswitch bench``).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.util
import os
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

#: Repeats of a timed call continue while the expected total stays below this budget.
REPEAT_BUDGET_S = 0.5
MAX_REPEATS = 200
#: Extra wait, beyond the timeout, for one measurement stage (repeats, pickling, checks).
STAGE_SLACK_S = 3.0
#: Wait for a worker to import its library (tensorflow is slow); not part of any timing.
LOAD_TIMEOUT_S = 300.0


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
