"""The results table of the feed-forward benchmark (``bench_feedforward.py``) and its report.

``Table`` maps measurement -> implementation -> n -> ``Result``. This module renders it as the
printed tables (``render``, ``describe``, ``fmt_ms``, ``fmt_ratio``), reduces it to the summary
figures (``summarize``: the speed-ups against the fastest peer, our times at n = 256 and 512),
judges them against the targets (``targets``, ``render_targets``) and writes the JSON object
(``to_json``).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
from typing import Any

import numpy as np
from feedforward_peers import LIB_DIST, PEER_METHODS, Result, version_of

OURS_CLEMENTS = "ours ClementsMesh"
OURS_RECK = "ours ReckMesh"
MEASUREMENTS = ("decompose", "route", "transfer")


Table = dict[str, dict[str, dict[int, Result]]]  # measurement -> implementation -> n -> result


def new_table() -> Table:
    return {m: {} for m in MEASUREMENTS}


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
    seed: int,
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
        "seed": seed,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": version_of("scipy"),
        "numba": version_of("numba"),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
    }
    return _finite_or_none(result)
