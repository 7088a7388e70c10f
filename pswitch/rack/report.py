"""The text ``pswitch rack`` prints for each study: its figures beside the published ones."""

from __future__ import annotations

from typing import Any

from pswitch.rack.setups import PUBLISHED


def _verification(v: dict[str, Any] | None) -> list[str]:
    if not v:
        return []
    worst = v["worst_isolation_db"]
    iso = "n/a" if worst is None else f"{worst:.1f} dB"
    return [
        f"  on the emulated switch: {v['verified']} of {v['applied']} configurations verified "
        f"(worst isolation {iso}, reconfiguration up to {v['reconfigure_s_max'] * 1e3:.3f} ms)"
    ]


def failover(r: dict[str, Any]) -> list[str]:
    swap = r["swap"]
    lines = [
        f"failover: Llama-3.2-1B fine-tuned on 2 of 4 accelerators, {r['driver']} driver, "
        f"MFU {r['mfu']:.2f}",
        f"  {'fabric, policy':<18} {'steps/s':>9} {'step s':>8} {'failures':>9} {'lost %':>7}",
    ]
    for name, row in r["runs"].items():
        lines.append(
            f"  {name:<18} {row['steps_per_s']:9.4f} {row['step_s'][0]:8.3f} "
            f"{row['failures']:9d} {100 * row['lost_failures']:7.2f}"
        )
    lines += [
        f"  throughput, photonic over the best electrical: {r['throughput_ratio']:.2f}x "
        f"(published: nearly {PUBLISHED['failover_throughput_ratio']:.0f}x)",
        f"  swap and restart: {swap['total_s']:.3f} s = detection {swap['detect_s'] * 1e3:.1f} "
        f"ms + reconfiguration {swap['reconfigure_s'] * 1e3:.3f} ms + restart "
        f"{swap['restart_s']:.1f} s (published: about "
        f"{PUBLISHED['failover_swap_restart_s']:.0f} s)",
        "  left open by the papers: the steady ratio at MFU "
        + ", ".join(f"{u:g}: {x:.2f}x" for u, x in r["open"]["mfu"].items())
        + f"; with FP32 gradients {r['open']['fp32 gradients']:.2f}x",
    ]
    return lines + _verification(r.get("verification"))


def slicing(r: dict[str, Any]) -> list[str]:
    lines = [
        f"slicing: {r['jobs']} tenant jobs on a 64-accelerator 4x4x4 rack, {r['driver']} driver",
        f"  {'fabric':<10} {'throughput':>11} {'JCT s':>9} {'utilization':>12} {'fragmented':>11}",
    ]
    for name, m in r["fabrics"].items():
        lines.append(
            f"  {name:<10} {m['throughput']:11.1f} {m['jct_s']:9.1f} "
            f"{100 * m['utilization']:11.1f}% {100 * m['fragmentation']:10.2f}%"
        )
    p, step = r["prototype"], r["per_step"]
    lines += [
        f"  photonic reconfigured at every step of each all-reduce instead of per job: "
        f"throughput {step['throughput']:.1f}, JCT {step['jct_s']:.1f} s",
        f"  over the trace, photonic slices over the torus: all-reduce "
        f"{r['trace_collective_speedup']:.2f}x, step {r['trace_training_speedup']:.2f}x",
        f"  the prototype's 2-GPU slice, 2 ports against 1: all-reduce "
        f"{p['collective_speedup']:.2f}x (published: "
        f"{PUBLISHED['slicing_collective_speedup']:.2f}x), training "
        f"{p['training_speedup']:.2f}x (published: {PUBLISHED['slicing_training_speedup']:.2f}x)",
    ]
    lines += _verification(r.get("verification"))
    hexagonal = r["hexagonal"]
    frag = hexagonal["fabrics"]["torus"]["fragmentation"]
    lines.append(
        f"  32 accelerators on the 32-endpoint hexagonal chips (2x4x4 torus): torus fragmented "
        f"{100 * frag:.2f}%, photonic 0%"
    )
    return lines + _verification(hexagonal.get("verification"))


def rails(r: dict[str, Any]) -> list[str]:
    lines = [
        f"rails: Llama-3 8B, DP2 x PP2 x TP4 on 4 nodes, {r['ports']} rail ports a GPU, "
        f"{r['driver']} driver ({r['reconfigurations']} reconfigurations a step)",
        f"  step: electrical rail {r['electrical_s'] * 1e3:.2f} ms, optical per phase "
        f"{r['per_phase_s'] * 1e3:.2f} ms ({r['iteration_ratio']:.3f}x), optical static "
        f"{r['static_s'] * 1e3:.2f} ms",
    ]
    even = r["breakeven_reconfig_s"]
    lines.append(
        "  per-phase rails beat the static ones below a reconfiguration of "
        + ("any length" if even is None else f"{even * 1e3:.1f} ms")
    )
    lines.append(
        "  left open by the paper: break-even at "
        + ", ".join(f"{t:g} tokens {_even(x)}" for t, x in r["open"]["tokens"].items())
        + "; at MFU "
        + ", ".join(f"{u:g} {_even(x)}" for u, x in r["open"]["mfu"].items())
    )
    lines.append("  reconfiguration s   ours    published (Opus, measured)")
    lines += [f"  {p['latency_s']:17g} {p['ours']:6.3f}x {p['published']:8.3f}x" for p in r["opus"]]
    return lines + _verification(r.get("verification"))


def _even(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds * 1e3:.0f} ms"


def straggler(r: dict[str, Any]) -> list[str]:
    lines = ["straggler: 8 ranks, 1 GiB, alpha 3 us, 450 GiB/s", "  delay ms   model   compiled"]
    lines += [f"  {p['delay_ms']:8g} {p['model']:7.3f} {p['compiled']:9.3f}" for p in r["points"]]
    lines.append(
        f"  speed-up over ring: {r['speedup_8']:.3f}x (published: "
        f"{PUBLISHED['straggler_speedup_8']:.2f}x measured)"
    )
    lines.append(
        f"  a tenant trace, half its jobs with a persistent straggler using it: throughput "
        f"{r['trace_throughput_ratio']:.3f}x ring's"
    )
    return lines


def sweep(r: dict[str, Any]) -> list[str]:
    lines = [f"sweep of {r['swept']}: {len(r['rows'])} points, rows in {r['output']}"]
    lines.append(f"  {'driver':<11} {'reconfigure s':>13} {'figure (mean of seeds)':>22}")
    by: dict[str, list[dict[str, Any]]] = {}
    for row in r["rows"]:
        by.setdefault(row["driver"], []).append(row)
    for driver, rows in by.items():
        mean = sum(x["figure"] for x in rows) / len(rows)
        lines.append(f"  {driver:<11} {rows[0]['reconfigure_s']:13.6f} {mean:22.3f}")
    return lines


#: What a study's figure at each class is.
FIGURE = {
    "failover": "throughput ratio",
    "slicing": "trace training speed-up",
    "rails": "per-phase step over the electrical rail",
}


def classes(r: dict[str, Any]) -> list[str]:
    """The study's figure at every driver class, with the class's reconfiguration time."""
    if "classes" not in r:
        return []
    cells = [f"{c['driver']} ({_time(c['reconfigure_s'])}) {c['figure']:.3f}" for c in r["classes"]]
    return [f"  {FIGURE[r['study']]} at each driver class: " + ", ".join(cells)]


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def text(r: dict[str, Any]) -> str:
    lines = {"failover": failover, "slicing": slicing, "rails": rails, "straggler": straggler}
    out = lines.get(r["study"], sweep)(r) + classes(r)
    if "plot" in r:
        out.append(f"plot: {r['plot']}")
    return "\n".join(out)
