"""The figure of a yield study or sweep (``pswitch yield --plot``), from its summary and rows.

Panels, left to right: for a sweep, the yield against the swept number with its Wilson 95 %
interval as error bars (one line per value of a second swept number), or a heatmap of the yield
over a grid of two; the distribution of the chips' worst isolation with the spec as a vertical
line; and what moves the yield: for a sweep, the swept numbers ranked by how far the yield
moves over each, for a single study what was drawn on each chip ranked by its rank correlation
with the chip's worst isolation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def yield_figure(result: dict[str, Any], rows: list[list[dict[str, Any]]]) -> Any:
    """The matplotlib Figure of ``result`` (:func:`~photonics.fabrication.yield_stats.summarize` of
    one study, or :func:`~photonics.fabrication.yield_stats.summarize_sweep`) and its ``rows``, one
    list per point (one list for a single study)."""
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    sweep = "sweep" in result
    summaries = result["points"] if sweep else [result]
    fig, axes = plt.subplots(1, 3 if sweep else 2, figsize=(15 if sweep else 10, 4.2))
    if sweep:
        _yield_panel(axes[0], result)
    _isolation_panel(axes[-2], summaries, rows)
    _ranking_panel(axes[-1], result)
    fig.tight_layout()
    return fig


def write_plot(result: dict[str, Any], rows: list[list[dict[str, Any]]], path: Path) -> None:
    """:func:`yield_figure` into the PNG ``path``."""
    import matplotlib.pyplot as plt

    fig = yield_figure(result, rows)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _label(name: str) -> str:
    return name.replace("_", " ")


def _yield_panel(ax: Any, result: dict[str, Any]) -> None:
    (first, xs), *rest = result["sweep"]
    points = result["points"]
    yields = np.array([p["yield"] for p in points])
    low = np.array([p["yield_95"][0] for p in points])
    high = np.array([p["yield_95"][1] for p in points])
    if not rest:
        ax.errorbar(xs, yields, yerr=[yields - low, high - yields], marker="o", capsize=3)
        ax.set_xlabel(_label(first))
        ax.set_ylim(-0.03, 1.03)
    else:
        (second, ys), shape = rest[0], (len(xs), len(rest[0][1]))
        image = ax.imshow(yields.reshape(shape).T, origin="lower", vmin=0, vmax=1, cmap="viridis")
        for (i, j), y in np.ndenumerate(yields.reshape(shape)):
            lo, hi = low.reshape(shape)[i, j], high.reshape(shape)[i, j]
            text = f"{100 * y:.0f} %\n{100 * lo:.0f}-{100 * hi:.0f}"
            ax.text(i, j, text, ha="center", va="center", fontsize=7, color="w" if y < 0.6 else "k")
        ax.set_xticks(range(len(xs)), [f"{x:g}" for x in xs])
        ax.set_yticks(range(len(ys)), [f"{y:g}" for y in ys])
        ax.set_xlabel(_label(first))
        ax.set_ylabel(_label(second))
        ax.figure.colorbar(image, ax=ax, label="yield")
    ax.set_title(f"yield (95 % interval), {points[0]['chips']} chips a point")


def _isolation_panel(ax: Any, summaries: list[dict[str, Any]], rows: list[list[dict]]) -> None:
    spec = summaries[0]["study"]["min_isolation_db"]
    values = [[r["worst_isolation_db"] for r in chips if r["calibrated"]] for chips in rows]
    every = [v for chips in values for v in chips]
    span = [*every, spec]  # the spec line always in view
    bins = np.linspace(min(span) - 1, max(span) + 1, 30) if every else 10
    if len(rows) == 1 or len(rows) > 6:
        ax.hist(every, bins=bins, color="C0")
    else:  # a few points: one outline each
        for s, chips in zip(summaries, values, strict=True):
            label = ", ".join(f"{_label(k)} {v:g}" for k, v in s["point"].items())
            ax.hist(chips, bins=bins, histtype="step", lw=1.5, label=label)
        ax.legend(fontsize=7)
    ax.axvline(spec, color="k", ls="--", label=f"spec {spec:g} dB")
    ax.set_xlabel("worst isolation of a chip (dB)")
    ax.set_ylabel("chips")
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # chips are whole
    ax.set_title(f"worst isolation; pass >= {spec:g} dB (dashed)")


def _ranking_panel(ax: Any, result: dict[str, Any]) -> None:
    if "parameter_effects" in result:
        names = [_label(e["parameter"]) for e in result["parameter_effects"]]
        values = [e["yield_spread"] for e in result["parameter_effects"]]
        ax.set_xlabel("yield spread over the swept values")
        ax.set_title("what moves the yield")
    else:
        names = [_label(s["drawn"]) for s in result["sensitivity"]]
        values = [s["spearman_vs_worst_isolation"] for s in result["sensitivity"]]
        ax.set_xlabel("Spearman correlation with worst isolation")
        ax.set_title("what goes with a chip's worst isolation")
        ax.axvline(0, color="k", lw=0.8)
    ax.barh(names[::-1], values[::-1], color="C1")
