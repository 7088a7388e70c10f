"""The report of the router benchmark (``bench_router.py``): its summary figures and tables.

``summarize`` reduces the workloads' figures (keyed as in the JSON object: ``perms_6x6``,
``matching_32``, ``cover``, ``cover_25db``, ``isolation``, ...) to the headline figures the JSON
object starts with; ``print_tables`` prints them as tables, one section per workload, with the
project's targets (``TARGET_*``).
"""

from __future__ import annotations

import argparse
from typing import Any

#: The project's targets, seconds.
TARGET_MATCHING_32_S = 0.050
TARGET_COVER_S = 5.0
TARGET_PERMS_6X6_S = 10.0

#: Figures by name, as in the JSON object.
Figures = dict[str, Any]


def _ratio(base: float, ours: float) -> float:
    return base / ours if ours > 0 else float("inf")


def _mark(seconds: float, target: float) -> str:
    return "met" if seconds < target else "MISSED"


def summarize(figures: Figures) -> Figures:
    """The headline figures, from the workloads' figures."""
    six, m32 = figures["perms_6x6"], figures["matching_32"]
    cover, cover_25 = figures["cover"], figures["cover_25db"]
    summary = {
        "route_matching_32_s": m32["ours_median_s"],
        "all_to_all_cover_s": cover["seconds"],
        "all_to_all_cover_size": cover["size"],
        "perms_6x6_routed": six["ours_routed"],
        "perms_6x6_total": six["n"],
        "perms_6x6_s": six["ours_s"],
        "speedup_vs_baseline": _ratio(six["baseline_s"], six["ours_s"]),
        "speedup_workload": "720 permutations of the 6x6 switch (baseline s / our s)",
        "speedup_matching_32": _ratio(m32["baseline_median_s"], m32["ours_median_s"]),
        "all_to_all_cover_verified_worst_isolation_db": cover["verified_worst_isolation_db"],
        "all_to_all_cover_25db_size": cover_25["size"],
        "all_to_all_cover_25db_s": cover_25["seconds"],
        "all_to_all_cover_25db_verified_worst_isolation_db": cover_25[
            "verified_worst_isolation_db"
        ],
    }
    # the 25 dB criterion under the default imperfections (every cell at the typical figures)
    typical = figures["isolation"]["typical_35_db"]["aware_typical"]
    for key in ("6x6", "32"):
        summary[f"isolation_{key}_typical_ge_25_db_fraction"] = typical[key]["ge_25_db_fraction"]
        summary[f"isolation_{key}_typical_worst_db"] = typical[key]["worst_db"]
    # the 25 dB criterion on cells of the published range, before / after isolation-aware
    # routing (the router knowing each cell's extinction)
    published = figures["isolation"]["published_32_44_db"]
    for when, router in (("before", "plain"), ("after", "aware_per_cell")):
        for label, key in (("6x6", "6x6"), ("32", "32")):
            r = published[router][label]
            summary[f"isolation_{key}_ge_25_db_fraction_{when}"] = r["ge_25_db_fraction"]
            summary[f"isolation_{key}_median_db_{when}"] = r["median_db"]
            summary[f"isolation_{key}_worst_db_{when}"] = r["worst_db"]
    return summary


def print_tables(figures: Figures, summary: Figures, args: argparse.Namespace) -> None:
    """The tables on stdout, one section per workload."""
    print(f"32 endpoints on mesh_9x9 (278 cells, 140 edge ports): {figures['endpoints_32']}")
    for section in (_speed, _targets, _covers, _switch_6x6, _isolation, _dead_cells):
        print()
        section(figures, summary, args)


def _speed(figures: Figures, summary: Figures, args: argparse.Namespace) -> None:
    """Ours against the baseline: routed counts and times."""
    six, m32 = figures["perms_6x6"], figures["matching_32"]
    print("workload                          ours                baseline            ratio")
    print(
        f"6x6, 720 permutations   routed  {six['ours_routed']:>4}/{six['n']:<14}"
        f"{six['baseline_routed']:>4}/{six['n']:<14}"
    )
    print(
        f"                        time    {six['ours_s']:>8.2f} s          "
        f"{six['baseline_s']:>8.2f} s          {summary['speedup_vs_baseline']:5.2f}x"
    )
    print(
        f"                        cells   {six['path_cells_mean']:>8.2f} mean       "
        f"{six['baseline_path_cells_mean']:>8.2f} mean"
    )
    print(
        f"9x9, 32-port matchings  routed  {m32['ours_routed']:>4}/{m32['n']:<14}"
        f"{m32['baseline_routed']:>4}/{m32['n']:<14}"
    )
    print(
        f"                        median  {m32['ours_median_s'] * 1e3:>8.1f} ms         "
        f"{m32['baseline_median_s'] * 1e3:>8.1f} ms         "
        f"{summary['speedup_matching_32']:5.2f}x"
    )
    print(
        f"                        total   {m32['ours_total_s']:>8.2f} s          "
        f"{m32['baseline_total_s']:>8.2f} s          "
        f"{_ratio(m32['baseline_total_s'], m32['ours_total_s']):5.2f}x"
    )
    print("(ratio = baseline time / our time; > 1 means ours is faster)")
    if args.exact:
        print(
            f"32-port matchings our router failed that an exact MILP routes: "
            f"{m32['ours_failed_but_routable']} (time limit hit: {m32['exact_time_limit_hit']})"
        )


def _targets(figures: Figures, summary: Figures, args: argparse.Namespace) -> None:
    """Our times against the project's targets."""
    six, m32, cover = figures["perms_6x6"], figures["matching_32"], figures["cover"]
    print("targets                                   measured     target     ")
    print(
        f"one 32-port matching (median)          {m32['ours_median_s'] * 1e3:9.1f} ms  "
        f"{TARGET_MATCHING_32_S * 1e3:6.0f} ms   "
        f"{_mark(m32['ours_median_s'], TARGET_MATCHING_32_S)}"
    )
    print(
        f"all-to-all cover                       {cover['seconds']:9.2f} s   "
        f"{TARGET_COVER_S:6.0f} s    {_mark(cover['seconds'], TARGET_COVER_S)}"
    )
    print(
        f"720 permutations of the 6x6 switch     {six['ours_s']:9.2f} s   "
        f"{TARGET_PERMS_6X6_S:6.0f} s    {_mark(six['ours_s'], TARGET_PERMS_6X6_S)}"
        f"   ({six['ours_per_config_ms']:.1f} ms per configuration)"
    )


def _covers(figures: Figures, summary: Figures, args: argparse.Namespace) -> None:
    """The two all-to-all covers, each verified on typical cells."""
    for c in (figures["cover"], figures["cover_25db"]):
        ask = "any isolation" if c["isolation_db"] is None else f">= {c['isolation_db']} dB"
        print(
            f"all-to-all cover ({ask} predicted): {c['size']} matchings (optimum "
            f"{c['optimum']}) in {c['seconds']:.2f} s, {c['pairs_joined']}/{c['pairs_total']} "
            f"pairs joined; {c['note']}; verified on typical cells: worst isolation "
            f"{c['verified_worst_isolation_db']:.1f} dB, return loss "
            f"{c['verified_worst_return_loss_db']:.1f} dB"
        )


def _switch_6x6(figures: Figures, summary: Figures, args: argparse.Namespace) -> None:
    """Path lengths and verified loss of the 6x6 switch; the 32-port matchings on a sampled chip."""
    six, m32 = figures["perms_6x6"], figures["matching_32"]
    imp = six["imperfect_chip"]
    print(
        f"6x6 switch: routed {six['ours_routed']}/{six['n']}; path length "
        f"{six['path_cells_min']}/{six['path_cells_mean']:.2f}/{six['path_cells_max']} cells "
        f"(min/mean/max)"
    )
    print(
        f"  {six['verified_configs']} configurations verified (every {args.stride}th): ideal "
        f"loss error max {six['ideal_max_loss_error_db']:.2e} dB"
    )
    if imp:
        print(
            f"  with imperfections (sigma 0.009, 0.5 dB/cell; default router): loss "
            f"{imp['loss_min_db']:.2f}.."
            f"{imp['loss_max_db']:.2f} dB (spread {imp['loss_spread_db']:.2f} dB, "
            f"{imp['max_spread_in_one_config_db']:.2f} dB within one configuration); isolation "
            f"worst {imp['worst_isolation_db']:.1f} dB, median "
            f"{imp['median_isolation_db']:.1f} dB, >= 25 dB in "
            f"{100 * imp['isolation_ge_25_db_fraction']:.0f} %"
        )
    if "imperfect_chip" in m32:
        c = m32["imperfect_chip"]
        print(
            f"9x9, {c['configs']} routed 32-port matchings with imperfections: loss "
            f"{c['loss_min_db']:.2f}..{c['loss_max_db']:.2f} dB, isolation worst "
            f"{c['worst_isolation_db']:.1f} dB, median {c['median_isolation_db']:.1f} dB, "
            f">= 25 dB in {100 * c['isolation_ge_25_db_fraction']:.0f} %"
        )


def _isolation(figures: Figures, summary: Figures, args: argparse.Namespace) -> None:
    """Worst port isolation per chip model and router."""
    print(
        f"worst port isolation per configuration (scattering solve, 1550 nm), {args.chips} "
        f"chip(s) per model; 6x6: 720 permutations, 9x9: {args.matchings} 32-port matchings"
    )
    print(
        "chip cells                 router            6x6: >= 25 dB  median  worst"
        "    32: >= 25 dB  median  worst"
    )
    for model, rows in figures["isolation"].items():
        for name, row in rows.items():
            six_r, m_r = row["6x6"], row["32"]
            print(
                f"{model:<26} {name:<16} {100 * six_r['ge_25_db_fraction']:12.1f} % "
                f"{six_r['median_db']:6.1f} {six_r['worst_db']:6.1f}    "
                f"{100 * m_r['ge_25_db_fraction']:11.0f} % {m_r['median_db']:6.1f} "
                f"{m_r['worst_db']:6.1f}"
            )
    print(
        "(plain: isolation_target_db=None; aware_typical: the router assumes 35 dB in every "
        "cell; aware_per_cell: it knows each cell's extinction)"
    )


def _dead_cells(figures: Figures, summary: Figures, args: argparse.Namespace) -> None:
    """The fraction still routable with k dead cells."""
    print(
        f"dead cells on mesh_9x9: {args.dead_sets} random dead-cell sets x "
        f"{args.dead_matchings} random 32-port matchings per k (fraction routable)"
    )
    head = "   k   ours   baseline   ours median time"
    if args.exact:
        head += "   ours missed (MILP routable)   proved unroutable"
    print(head)
    for row in figures["dead_cells"]:
        line = (
            f"{row['k']:>4}   {row['ours_fraction']:4.2f}   {row['baseline_fraction']:8.2f}   "
            f"{row['ours_median_s'] * 1e3:13.1f} ms"
        )
        if args.exact:
            line += f"   {row['ours_failed_but_routable']:>27}   {row['proved_unroutable']:>17}"
        print(line)
