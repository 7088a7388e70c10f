"""The figures of ``pswitch collective``: a Gantt chart of one collective's steps on the switch,
and the sweep's two panels (which all-reduce wins by size; the straggler-aware speed-up by
delay). Headless matplotlib, PNG files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    return plt


#: Steps a Gantt chart shows whole; a longer collective gets a chart of every step's time and
#: its Gantt chart zoomed onto its first :data:`ZOOM_STEPS` steps.
WHOLE_STEPS = 24
ZOOM_STEPS = 4


def write_plot(r: dict[str, Any], path: Path) -> None:
    """A Gantt chart of ``r`` (:func:`~pswitch.collective_run.collective`'s result) into the PNG
    ``path``: one row per rank, a bar for each step it sends in (coloured by phase), the
    reconfigurations shaded, the straggler's wait hatched, the electrical switch's total marked.
    Beyond :data:`WHOLE_STEPS` steps, a chart of every step's reconfiguration, computation and
    transfer comes first, and the Gantt chart shows the first :data:`ZOOM_STEPS` steps."""
    from pswitch.collective_run import human

    plt = _pyplot()
    steps = r["steps"]
    labels = list(dict.fromkeys(s["label"] for s in steps))
    colours = {lab: plt.get_cmap("tab10")(i % 10) for i, lab in enumerate(labels)}
    height = max(3.0, min(12.0, 1.5 + 0.25 * r["ranks"]))
    if len(steps) > WHOLE_STEPS:
        fig, (top, gantt) = plt.subplots(
            2, 1, figsize=(10, height + 3), gridspec_kw={"height_ratios": [1, 2]}
        )
        _steps_chart(top, steps, colours)
        zoom = steps[ZOOM_STEPS - 1]["end_s"] * 1e3
        _gantt(gantt, r, colours, zoom)
        gantt.set_title(f"the first {ZOOM_STEPS} of {len(steps)} steps", fontsize=9)
        top_axes = top
    else:
        fig, gantt = plt.subplots(figsize=(10, height))
        _gantt(gantt, r, colours, max(r["optical_total_s"], r["electrical_total_s"]) * 1e3 * 1.02)
        top_axes = gantt
    size = f"{human(r['bytes'])} each, " if r["kind"] != "training step" else ""
    top_axes.figure.suptitle(
        f"{r['name']}, {r['ranks']} ranks, {size}{r['ports']}-port {r['mesh']} switch; "
        f"{len(steps)} steps, duty cycle {100 * r['duty_cycle']:.1f} %",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _steps_chart(ax: Any, steps: list[dict[str, Any]], colours: dict[str, Any]) -> None:
    """Every step's times, ms, on a log scale (they differ by orders of magnitude): its
    reconfiguration, its computation and its transfer (coloured by phase)."""
    x = np.arange(len(steps))
    reconfigure = np.array([s["reconfigure_s"] for s in steps]) * 1e3
    compute = np.array([s["compute_s"] for s in steps]) * 1e3
    overlap = np.maximum(reconfigure, compute)  # a reconfiguration hides behind a computation
    transfer = np.array([s["end_s"] - s["start_s"] for s in steps]) * 1e3 - overlap
    shown = reconfigure > 0
    ax.semilogy(x[shown], reconfigure[shown], "s", ms=3, color="0.55", label="reconfiguration")
    if compute.any():
        ax.semilogy(
            x[compute > 0], compute[compute > 0], "^", ms=3, color="tab:green", label="computation"
        )
    for label, colour in colours.items():
        mine = np.array([s["label"] == label for s in steps])
        ax.semilogy(x[mine], transfer[mine], "o", ms=3, color=colour, label=f"{label}: transfer")
    ax.set(xlabel="step", ylabel="time, ms (log)")
    ax.set_xlim(-1, len(steps))
    ax.grid(True, which="major", axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)


def _gantt(ax: Any, r: dict[str, Any], colours: dict[str, Any], until_ms: float) -> None:
    """The ranks' Gantt chart of ``r`` from 0 to ``until_ms``."""
    from matplotlib.patches import Patch

    from pswitch.collective_run import ms

    plt = _pyplot()
    ranks = r["ranks"]
    bars: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for s in r["steps"]:
        begin = (s["start_s"] + max(s["reconfigure_s"], s["compute_s"])) * 1e3
        width = (s["end_s"] * 1e3) - begin
        for rank in {src for src, _ in s["transfers"]}:
            bars.setdefault((rank, s["label"]), []).append((begin, width))
        if s["compute_s"] > 0:
            end = (s["start_s"] + s["compute_s"]) * 1e3
            ax.axvspan(s["start_s"] * 1e3, end, color="#cfe8cf", zorder=0, lw=0)
        if s["reconfigure_s"] > 0:
            end = (s["start_s"] + s["reconfigure_s"]) * 1e3
            ax.axvspan(s["start_s"] * 1e3, end, color="0.75", zorder=1, lw=0, alpha=0.6)
    for (rank, label), spans in bars.items():
        ax.broken_barh(spans, (rank - 0.4, 0.8), facecolors=colours[label], edgecolor="none")
    if r.get("straggler_s"):
        ax.broken_barh(
            [(0.0, r.get("straggler_s") * 1e3)],
            (ranks - 1 - 0.4, 0.8),
            facecolors="none",
            edgecolor="0.4",
            hatch="//",
        )
    ax.axvline(r["electrical_total_s"] * 1e3, color="k", ls="--", lw=1.2)
    ax.axvline(r["optical_total_s"] * 1e3, color="C3", ls="-", lw=1.2)
    handles = [Patch(color=colours[lab], label=lab) for lab in colours]
    handles.append(Patch(color="0.75", alpha=0.6, label="reconfiguration"))
    if any(s["compute_s"] > 0 for s in r["steps"]):
        handles.append(Patch(color="#cfe8cf", label="computation"))
    if r.get("straggler_s"):
        handles.append(Patch(facecolor="none", edgecolor="0.4", hatch="//", label="straggler late"))
    handles += [
        plt.Line2D(
            [], [], color="k", ls="--", label=f"electrical total {ms(r['electrical_total_s'])} ms"
        ),
        plt.Line2D([], [], color="C3", label=f"optical total {ms(r['optical_total_s'])} ms"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set_ylim(ranks - 0.5, -0.5)
    if ranks <= 32:
        ax.set_yticks(range(ranks))
    ax.set_ylabel("rank (bars: sending)")
    ax.set_xlabel("time (ms)")
    ax.set_xlim(0, until_ms)


def write_sweep_plot(r: dict[str, Any], path: Path) -> None:
    """The sweep (:func:`pswitch.collective_answers.sweep`'s result) into the PNG ``path``:
    left, every all-reduce's time by message size for the largest rank count, on the switch
    and on the electrical one; right, the straggler-aware all-reduce's speed-up over ring by
    the straggler's delay, one line a rank count (the published cost model solid, the
    schedule compiled here dashed)."""
    from pswitch.collective_run import human

    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    last = r["winners"][-1]
    sizes = [row["bytes"] for row in last["sizes"]]
    for i, name in enumerate(last["sizes"][0]["optical_s"]):
        colour = f"C{i}"
        optical = [row["optical_s"][name] for row in last["sizes"]]
        electrical = [row["electrical_s"][name] for row in last["sizes"]]
        left.loglog(sizes, optical, color=colour, marker="o", label=f"{name}, this switch")
        left.loglog(sizes, electrical, color=colour, ls="--", label=f"{name}, electrical")
    left.set_xlabel("message size per rank")
    left.set_xticks(sizes, [human(s) for s in sizes])
    left.minorticks_off()
    left.set_ylabel("all-reduce time (s)")
    left.set_title(f"{last['ranks']} ranks on the {r['ports_of'][str(last['ranks'])]}-port switch")
    left.legend(fontsize=8)
    left.grid(True, which="both", alpha=0.3)
    for k, p in enumerate(sorted({x["ranks"] for x in r["straggler"]})):
        pts = [x for x in r["straggler"] if x["ranks"] == p]
        delays = [max(x["delay_s"], 1e-6) * 1e3 for x in pts]
        right.semilogx(delays, [x["model_speedup"] for x in pts], color=f"C{k}", label=f"{p} ranks")
        right.semilogx(delays, [x["compiled_speedup"] for x in pts], color=f"C{k}", ls="--")
    right.axhline(2.0, color="k", lw=0.8, ls=":")
    right.set_xlabel("straggler delay (ms)")
    right.set_ylabel("speed-up over ring (from the straggler's arrival)")
    right.set_title(f"straggler-aware all-reduce, {human(r['straggler_bytes'])} (dashed: compiled)")
    right.legend(fontsize=8)
    right.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
