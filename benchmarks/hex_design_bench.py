"""The hexagonal switch's geometry as a design variable, for ``bench_router.py``: a yield study
(:mod:`pswitch.yield_study`, every chip a task on Dask, rows in Parquet) swept over the mesh's
size (hexagons a side) and where the 32 endpoints sit on its edge (the share of each side left
out at both ends, ``endpoint_margin``), each chip self-calibrated, its all-to-all cover searched
for isolation (``search_routes``) and the cover whose every matching is predicted at
``min_isolation_db`` (plus the prediction's margin) built from it
(:func:`photonics.fabrication.mesh_yield.run_mesh_chip`).

Each design point's figures over its chips: the cell count (what the design costs in area and
heaters), the median worst measured isolation of the optimal 31-matching cover, the median size
of the cover at the goal, and the share of chips whose every circuit measures at the goal. The
design curve (:func:`plot_design`) draws isolation against cover size, one marker a point,
sized by its cells.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from photonics.fabrication.study import HEXAGONAL, YieldStudy
from photonics.recirculating.routing import DEFAULT_MAX_PATH_LOSS_DB
from pswitch.yield_study import run_sweep

#: The goal each matching of the isolation cover must measure, dB.
GOAL_DB = 25.0
#: Heater power a chip may draw for a matching, mW.
DESIGN_POWER_MW = 20_000.0
#: The full study: 32 endpoints on the 9x9 and 10x10 meshes, two endpoint placements.
FULL = {"ports": 32, "sizes": [9.0, 10.0], "margins": [0.15, 0.25], "search_routes": 600}
#: The quick study (a smoke run): 4 endpoints on the 3x3 mesh.
QUICK = {"ports": 4, "sizes": [3.0], "margins": [0.15], "search_routes": 20}


def bench_design(
    chips: int, quick: bool = False, folder: str | None = None, workers: int | None = None
) -> dict[str, Any]:
    """The sweep's figures (module docstring) over ``chips`` chips a design point, run on a
    local Dask cluster of ``workers`` processes; rows kept in ``folder`` (a later run with the
    same settings resumes it), else in a temporary one."""
    plan = QUICK if quick else FULL
    base = YieldStudy(
        ports=plan["ports"],
        mesh=HEXAGONAL,
        chips=chips,
        min_isolation_db=GOAL_DB,
        # the router's own loss limit and a 32-endpoint mesh's heaters (278 cells near half
        # their P_pi: about 5 W): the yield here is isolation's
        max_loss_db=DEFAULT_MAX_PATH_LOSS_DB,
        max_power_mW=DESIGN_POWER_MW,
        search_routes=plan["search_routes"],
    )
    axes = [("mesh_size", plan["sizes"]), ("endpoint_margin", plan["margins"])]
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(folder or scratch)
        studies, rows_of = run_sweep(base, axes, out, workers)
    points = []
    for study, rows in zip(studies, rows_of, strict=True):
        measured = [r for r in rows if r["calibrated"]]
        points.append(
            {
                "mesh_size": study.mesh_size,
                "endpoint_margin": study.endpoint_margin,
                "cells": int(rows[0]["cells"]),
                "chips": len(rows),
                "calibrated": len(measured),
                "optimal_worst_db_median": _median(
                    r["optimal_worst_isolation_db"] for r in measured
                ),
                "optimal_worst_db_min": _min(r["optimal_worst_isolation_db"] for r in measured),
                "cover_size_median": _median(r["matchings"] for r in measured),
                "cover_size_max": max((int(r["matchings"]) for r in measured), default=0),
                "cover_worst_db_min": _min(r["worst_isolation_db"] for r in measured),
                "yield": float(np.mean([r["passed"] for r in rows])),
            }
        )
    return {
        "design_curve_points": len(points),
        "design_chips_per_point": chips,
        "design_ports": plan["ports"],
        "design_search_routes": plan["search_routes"],
        "design_points": points,
    }


def _median(values) -> float:
    v = [float(x) for x in values if x is not None and np.isfinite(x)]
    return float(np.median(v)) if v else float("nan")


def _min(values) -> float:
    v = [float(x) for x in values if x is not None and np.isfinite(x)]
    return min(v) if v else float("nan")


def print_design(figures: dict[str, Any]) -> None:
    """The design points, one line each."""
    print(
        f"\ndesign curve: {figures['design_ports']} endpoints, "
        f"{figures['design_chips_per_point']} chips a point (goal {GOAL_DB:g} dB measured)"
    )
    print(f"{'mesh':>6} {'margin':>6} {'cells':>5} {'opt worst dB':>12} {'cover':>5} {'yield':>5}")
    for p in figures["design_points"]:
        print(
            f"{p['mesh_size']:>4}x{p['mesh_size']:<1} {p['endpoint_margin']:>6.2f} {p['cells']:>5} "
            f"{p['optimal_worst_db_median']:>12.1f} {p['cover_size_median']:>5.1f} "
            f"{p['yield']:>5.2f}"
        )


def plot_design(figures: dict[str, Any], path: str) -> None:
    """Isolation of the optimal cover against the size of the cover at the goal, a marker a
    design point (its area the cell count), as a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    points = figures["design_points"]
    cells = np.array([p["cells"] for p in points], dtype=float)
    for p, size in zip(points, 40 * (cells / cells.min()) ** 2, strict=True):
        x, y = p["cover_size_median"], p["optimal_worst_db_median"]
        # down to the worst chip's
        ax.plot([x, x], [p["optimal_worst_db_min"], y], color="0.6", lw=1)
        ax.scatter(x, y, s=size, alpha=0.6)
        ax.annotate(
            f"{p['mesh_size']}x{p['mesh_size']}, margin {p['endpoint_margin']:g}\n"
            f"{p['cells']} cells",
            (p["cover_size_median"], p["optimal_worst_db_median"]),
            textcoords="offset points",
            xytext=(8, 4),
            fontsize=7,
        )
    n = figures["design_ports"]
    ax.axvline(n - 1, color="k", lw=0.8, ls=":", label=f"optimum ({n - 1} matchings)")
    ax.set_xlabel(f"matchings of the cover with each at >= {GOAL_DB:g} dB (median over chips)")
    ax.set_ylabel("optimal cover's worst isolation, dB\n(median; line: down to the worst chip)")
    ax.set_title(
        f"{n}-endpoint hexagonal switch: the design curve\n"
        f"({figures['design_chips_per_point']} self-calibrated chips a point; marker area: cells)",
        fontsize=10,
    )
    ax.margins(x=0.25, y=0.1)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
