"""The pictures of ``pswitch rack``: throughput over time with the failures marked (failover),
the rack's allocation map on the torus and on photonic slices (slicing), the per-phase
slowdown against the reconfiguration time beside the published one (rails), the speed-up
against the straggler's delay (straggler), and a sweep's figure against the driver classes'
reconfiguration times with the published point (sweep)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pswitch.rack.setups import PUBLISHED


def _figure(width: float = 9.0, height: float = 4.5):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height), constrained_layout=True)


def failover(r: dict[str, Any], ax: Any) -> None:
    for name, rate in r["timeline"].items():
        t, v = zip(*rate, strict=True)
        ax.step(np.array(t) / 3600, v, where="post", label=name)
    for t in r["failure_times_s"]:
        ax.axvline(t / 3600, color="black", lw=0.8, ls=":")
    ax.set_xlabel("time (h); dotted: failures in the photonic run")
    ax.set_ylabel("accelerator-steps / s")
    ax.set_title(f"fine-tuning through failures ({r['driver']} driver)")
    ax.legend()


def slicing(r: dict[str, Any], fig: Any) -> None:
    shape = r["torus"]
    fig.clear()
    axes = fig.subplots(1, 2)
    for ax, fabric in zip(axes, ("torus", "photonic"), strict=True):
        grid = np.full(int(np.prod(shape)), -1)
        for k, (_, accs) in enumerate(sorted(r["allocation"][fabric].items())):
            grid[list(accs)] = k
        flat = grid.reshape(shape[0], -1)  # planes side by side
        shown = np.ma.masked_less(flat, 0)
        ax.imshow(shown, cmap="tab20", interpolation="nearest", aspect="auto")
        ax.set_title(f"{fabric}: {100 * r['fabrics'][fabric]['fragmentation']:.1f} % fragmented")
        ax.set_xlabel("accelerator: y * 4 + z")
        ax.set_ylabel("x")
        ax.set_yticks(range(shape[0]))
    fig.suptitle("the rack at its fullest: one colour a job, white free")


def rails(r: dict[str, Any], ax: Any) -> None:
    t = [p["latency_s"] for p in r["opus"]]
    ax.plot(t, [p["ours"] for p in r["opus"]], "o-", label="ours (model of the paper's setup)")
    ax.plot(t, [p["published"] for p in r["opus"]], "s--", label="Opus, measured")
    ax.set_xlabel("reconfiguration time (s)")
    ax.set_ylabel("step time over the electrical rail")
    ax.set_title("optical rails reconfigured per phase")
    ax.legend()


def straggler(r: dict[str, Any], ax: Any) -> None:
    d = [p["delay_ms"] for p in r["points"]]
    ax.plot(d, [p["compiled"] for p in r["points"]], "o-", label="compiled here")
    ax.axhline(PUBLISHED["straggler_speedup_8"], color="red", ls=":", label="published, measured")
    ax.set_xlabel("straggler delay (ms)")
    ax.set_ylabel("speed-up over ring")
    ax.legend()


def sweep(r: dict[str, Any], ax: Any) -> None:
    figure = {"failover": "failover_throughput_ratio", "slicing": "slicing_training_speedup"}
    by: dict[str, list[dict[str, Any]]] = {}
    for row in r["rows"]:
        by.setdefault(row["driver"], []).append(row)
    for driver, rows in by.items():
        x = rows[0]["reconfigure_s"]
        ys = [row["figure"] for row in rows]
        ax.scatter([x] * len(ys), ys, label=driver)
    published = PUBLISHED.get(figure.get(r["swept"], ""))
    if published is not None:
        ax.axhline(published, color="red", ls=":", label="published")
    ax.set_xscale("log")
    ax.set_xlabel("one reconfiguration of the rack's chips (s)")
    ax.set_ylabel(f"{r['swept']} figure")
    ax.legend()


def write(r: dict[str, Any], path: Path) -> None:
    """Draw the study ``r`` into the PNG ``path``."""
    fig, ax = _figure()
    study = r["study"]
    if study == "slicing":
        slicing(r, fig)
    else:
        {"failover": failover, "rails": rails, "straggler": straggler, "sweep": sweep}[study](r, ax)
    fig.savefig(path, dpi=110)
