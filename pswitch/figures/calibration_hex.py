"""The figures of ``docs/calibration-hex.md``: the hexagonal self-calibration's accuracy and
extinction figures, its thermal crosstalk step, the self-calibrated 32-endpoint chips' covers
against the router's prediction (and their picture), and the ideas tried for 25 dB at 32
endpoints. Every figure but the search budget is slow: they share one run of each benchmark
and study (``pswitch/figures/_hex_studies.py``)."""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from photonics.recirculating.switch_geometry import SWITCH_32_MARGIN
from pswitch.figures import _hex_studies as hs
from pswitch.figures._make import ALL, Figure, machine, table

PAGE = "docs/calibration-hex.md"
#: The dense chips of the crosstalk step (unit length, um) and the switch's own.
DENSE, DENSER, SPARSE = 100.0, 80.0, 811.0
#: Endpoint margins of the placement study.
MARGINS = (0.15, 0.25, 0.3, 0.35)
WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


# --- formats ---------------------------------------------------------------------------------


def stamped(text: str) -> str:
    """A timing in prose with where and when it was measured (its Figure: ``timings=ALL``)."""
    today = datetime.date.today()
    return f"{text} on a {machine()}, load {os.getloadavg()[0]:.1f}, {today:%Y-%m-%d}"


def db(v: float, digits: int = 1, sign: bool = False) -> str:
    """A figure in dB: ``25.6 dB``, ``+0.38 dB`` (``sign``)."""
    return f"{v:{'+' if sign else ''}.{digits}f} dB"


def count(n: int) -> str:
    """A count as prose writes it: ``7 140``."""
    return f"{n:,}".replace(",", " ")


def word(n: int) -> str:
    """A small count in words (``five``), a larger one in digits."""
    return WORDS[n] if n < len(WORDS) else str(n)


def span(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    """The range of ``values`` as prose quotes it: ``a to b``, or ``a`` when both read alike."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def cells(dead: Sequence[int]) -> str:
    """A list of cells: ``172, 231, 250, 260, 261``."""
    return ", ".join(str(c) for c in dead)


def dead_cells(rows: list[dict[str, Any]]) -> str:
    """The chips' dead cells: ``five (172, ...)`` when every chip has the same, else a list a
    chip."""
    lists = [tuple(r["dead"]) for r in rows]
    if len(set(lists)) == 1:
        return f"{word(len(lists[0]))} ({cells(lists[0])})"
    return "; ".join(f"chip {i}: {cells(d)}" for i, d in enumerate(lists))


# --- the benchmarks' tables ------------------------------------------------------------------


def _chip(row: dict[str, Any]) -> str:
    return row["chip"].replace(" seed", ", seed")


def accuracy_rows() -> list[list[object]]:
    """Each chip of the extinction benchmark: cells fitted, dead, worst bias and P_pi error."""
    return [
        [_chip(r), f"{r['fitted']} of {r['cells']}", len(r["dead"]),
         f"{r['bias_error_max_rad']:.3f} rad", f"{r['p_pi_error_max_pct']:.3f} %"]
        for r in hs.extinction()["chips"]
    ]  # fmt: skip


def extinction_rows() -> list[list[object]]:
    """Each chip: clean readings, their errors, the stored figures' errors, the default and the
    flat 35 dB baseline (read or stored minus true)."""
    return [
        [_chip(r), f"{r['clean']} of {r['states']}",
         f"{r['clean_median_db']:+.2f}, {db(r['clean_worst_db'], 2, True)}, {r['clean_above']}, "
         f"{r['clean_above_margin']}",
         f"{r['median_db']:+.2f}, {db(r['worst_db'], 2, True)}, {r['above_margin']}",
         db(r["default_db"]),
         f"{db(r['baseline_worst_db'], 1, True)}, {r['baseline_above_margin']}"]
        for r in hs.extinction()["chips"]
    ]  # fmt: skip


def router_rows() -> list[list[object]]:
    """Each self-calibrated 32-endpoint chip of the router benchmark."""
    return [
        [r["seed"], len(r["dead"]), f"{r['plain_cover_size']} matchings",
         f"{r['selfcal_isolation_db']:.2f} / {db(r['factory_isolation_db'], 2)}",
         f"{r['cover_25db_size']}, {db(r['cover_25db_worst_db'], 2)}, {r['cover_25db_below_goal']}",
         f"{db(r['prediction_error_db_min'], 2, True)}, "
         f"{db(r['prediction_error_db_median'], 2, True)}"]
        for r in hs.router()["hex_selfcal_chips"]
    ]  # fmt: skip


def router_json_rows() -> list[list[object]]:
    """The router benchmark's keys of its self-calibrated chips."""
    r = hs.router()
    isolation = ("hex_selfcal_isolation_db", "hex_factory_isolation_db")
    error = ("prediction_error_db_max", "prediction_error_db_median")
    return [
        ["`hex_selfcal_s` (the median)", f"{r['hex_selfcal_s']:.1f} s"],
        *([f"`{k}`", db(r[k], 2)] for k in isolation),
        ["`cover_25db_measured_size`", r["cover_25db_measured_size"]],
        ["`cover_25db_measured_worst_db`", db(r["cover_25db_measured_worst_db"], 2)],
        ["`cover_25db_measured_below_goal`", r["cover_25db_measured_below_goal"]],
        *([f"`{k}`", db(r[k], 2, True)] for k in error),
        ["`cover_25db_return_loss_db`", db(r["cover_25db_return_loss_db"])],
        ["`lost_endpoints`", r["lost_endpoints"]],
        ["`unroutable_pairs`", r["unroutable_pairs"]],
        ["`cover_optimal_size`", r["cover_optimal_size"]],
        ["`cover_optimal_predicted_db`", db(r["cover_optimal_predicted_db"], 2)],
        ["`cover_optimal_worst_db_plain`", db(r["cover_optimal_worst_db_plain"], 2)],
        ["`cover_optimal_worst_db_measured`", db(r["cover_optimal_worst_db_measured"], 2)],
        ["`cover_search_s` (the median)", f"{r['cover_search_s']:.0f} s"],
        ["`cancel_gain_db_median`", db(r["cancel_gain_db_median"], 2, True)],
        ["`cancel_gain_db_max`", db(r["cancel_gain_db_max"], 2, True)],
        ["`cancel_gain_circle_db_median`", db(r["cancel_gain_circle_db_median"], 2, True)],
        ["`cancel_readings_median`", count(int(r["cancel_readings_median"]))],
        ["`cover_25db_rescued`", r["cover_25db_rescued"]],
        ["`design_curve_points`", r["design_curve_points"]],
    ]


def optimal_rows() -> list[list[object]]:
    """Each chip's searched cover, its leaks cancelled, and the cover at the goal built on it."""
    out = []
    for r in hs.router()["hex_selfcal_chips"]:
        gains, circle = r["cancel_gains_db"], r["cancel_gains_circle_db"]
        out.append([
            r["seed"], f"{r['cover_optimal_size']} matchings, {count(r['search_routes'])} routed",
            f"{db(r['cover_optimal_predicted_db'], 2)} / {db(r['cover_optimal_worst_db_plain'], 2)}"
            f" / {db(r['cover_optimal_worst_db_measured'], 2)}",
            f"{db(float(np.median(gains)), 2, True)}, {db(max(gains), 2, True)}",
            f"{db(float(np.median(circle)), 2, True)}, {db(max(circle), 2, True)}",
            f"{r['cover_25db_size']} ({r['cover_25db_rescued']} kept whole), "
            f"{db(r['cover_25db_worst_db'], 2)}",
        ])  # fmt: skip
    return out


def design_rows() -> list[list[object]]:
    """The design points of the geometry study."""
    return [
        [f"{p['mesh_size']}x{p['mesh_size']}", p["endpoint_margin"], p["cells"],
         f"{p['calibrated']} of {p['chips']}",
         f"{db(p['optimal_worst_db_median'])} ({db(p['optimal_worst_db_min'])})",
         f"{p['cover_size_median']:g} ({p['cover_size_max']})", f"{p['yield']:.2f}"]
        for p in hs.router()["design_points"]
    ]  # fmt: skip


# --- the studies' tables and values ----------------------------------------------------------


def crosstalk_rows() -> list[list[object]]:
    """The dense chip's calibrations, and the sparse chip's self-calibration for scale: bias
    error (median / worst, rad), matchings routed, their worst isolation (worst / median)."""
    dense, sparse = hs.crosstalk_chip(DENSE), hs.crosstalk_chip(SPARSE)

    def row(name: str, r: dict[str, Any]) -> list[object]:
        bias = f"{r['bias_median_rad']:.3f} / {r['bias_worst_rad']:.3f} rad"
        iso = f"{r['worst_db']:.1f} / {db(r['median_db'])}"
        return [name, "0" if r["bias_worst_rad"] == 0 else bias, r["routed"], iso]

    return [
        row("self-calibration alone", dense["selfcal"]),
        row(f"with the crosstalk step (`K` within {100 * dense['k_error']:.0f} %)",
            dense["crosstalk"]),
        row("factory calibration (the true parameters)", dense["factory"]),
        row("the sparse chip's self-calibration (811 um), for scale", sparse["selfcal"]),
        row("the sparse chip's factory calibration", sparse["factory"]),
    ]  # fmt: skip


def geometry(r: dict[str, Any]) -> str:
    """``neighbours 87 um apart, `K` = 0.0041``."""
    return f"neighbours {r['apart_um']:.0f} um apart, `K` = {r['k']:.4f}"


def denser() -> str:
    """What the crosstalk step does on the denser chip."""
    r = hs.crosstalk_chip(DENSER)
    before, after = r["selfcal"], r["crosstalk"]
    return (
        f"{len(r['dead'])} of its {r['cells']} cells dead, {lost(r['lost_endpoints'])}; "
        f"the crosstalk step brings the biases from "
        f"{before['bias_median_rad']:.3f} / {before['bias_worst_rad']:.3f} rad to "
        f"{after['bias_median_rad']:.3f} / {after['bias_worst_rad']:.3f} rad (median / worst), "
        f"but {after['routed']} of {hs.CROSSTALK_MATCHINGS} random perfect matchings route"
    )


def lost(n: int) -> str:
    """The endpoints lost with their own cell, in words."""
    return (
        "no endpoint lost" if n == 0 else f"{n} endpoint{'s' if n > 1 else ''} lost with its cell"
    )


def below_goal() -> str:
    """How many matchings of the router benchmark's isolation covers measure below 25 dB."""
    n = hs.router()["cover_25db_measured_below_goal"]
    return f"{'no matching' if n == 0 else f'{n} matchings'} of the isolation covers measure" + (
        "s below 25 dB" if n == 0 else " below 25 dB"
    )


def bound() -> str:
    """The prediction as a bound, with the router told the true extinctions per state."""
    b = hs.prediction_bound()["per_state"]
    n32 = b["32"]["circuits"]
    return (
        f"{-b['32']['bound_db']:.2f} dB ({count(n32)} circuits of {n32 // 32} routed random "
        f"32-endpoint matchings, 3 chips, the floor at least {db(b['32']['floor_db'])}; "
        f"{-b['6x6']['bound_db']:.2f} dB over {count(b['6x6']['circuits'])} circuits of 6x6 "
        f"permutations)"
    )


def flat() -> str:
    """The same with a flat 35 dB: the worst miss and the circuits beyond the margin."""
    b = hs.prediction_bound()["flat"]["32"]
    return f"{-b['bound_db']:.1f} dB ({b['beyond_margin']} circuits beyond the margin)"


def spread() -> str:
    """The chip's cell whose two states differ most, its lowest and its median cells."""
    s = hs.extinction_spread()
    bar, cross = s["lowest_db"]
    return (
        f"cell {s['cell']} of chip 0: {db(s['bar_db'])} in bar, {db(s['cross_db'])} in cross; "
        f"the chip's lowest cells {bar:.1f} and {db(cross)}, median {db(s['median_db'], 0)}"
    )


def margin_rows() -> list[list[object]]:
    """The covers' sizes by endpoint margin and chip (all measuring >= 25 dB, or said)."""
    rows = []
    for m in MARGINS:
        sizes = [hs.cover(seed, m) for seed in range(3)]
        cell = [f"{c['size']}" + (f" ({c['below_goal']} below 25 dB)" if c["below_goal"] else "")
                for c in sizes]  # fmt: skip
        rows.append([f"{m:g}" + (" (the default)" if m == SWITCH_32_MARGIN else ""), *cell])
    return rows


def best_margin() -> str:
    """The margin whose covers are smallest (their total over the chips)."""
    return f"{min(MARGINS, key=lambda m: sum(hs.cover(s, m)['size'] for s in range(3))):g}"


def routable() -> str:
    """How many random perfect matchings route at the margins around the default."""
    low = hs.routable(0.05, 12)
    return (
        f"Margin 0.05 leaves {12 - low} of 12 random matchings unroutable; at 0.15, "
        f"{hs.routable(0.15, 100)} of 100 random perfect matchings route, at 0.25, "
        f"{hs.routable(0.25, 100)}"
    )


def relabel() -> str:
    """One circle-method relabeling against four, on chip 0 at the default margin."""
    one, four = hs.cover(0, SWITCH_32_MARGIN), hs.cover(0, SWITCH_32_MARGIN, 4)
    ratio = four["seconds"] / one["seconds"]
    return f"{one['size']} -> {four['size']} matchings on chip 0 at {ratio:.1f} times the time"


def budget() -> str:
    """The median predicted worst isolation, default budget -> the cover's."""
    b = hs.budget()
    return f"{b['default']['median_db']:.1f} to {db(b['cover']['median_db'])}"


def budget_time() -> str:
    """A matching's routing time with the cover's budget: its range."""
    return stamped(span(hs.budget()["cover"]["seconds"], lambda s: f"{s:.2g} s") + " a matching")


# --- the figures -----------------------------------------------------------------------------


def _v(make: Callable[[], str], timings: tuple[str, ...] = ()) -> Figure:
    return Figure(PAGE, make, timings, slow=True)


def _t(make: Callable[[], str]) -> Figure:
    return Figure(PAGE, make, ALL, slow=True)


def _ext(f: Callable[[list[dict[str, Any]]], str], kind: str) -> Callable[[], str]:
    return lambda: f(hs.chips(kind))


_ROUTER = hs.router
_STATE = r"`hex_selfcal_s` \(the median\) \| ([\d.]+) s"

FIGURES: dict[str, Figure] = {
    "hex-accuracy-32": _v(_ext(lambda rows: (
        f"{max(r['p_pi_error_max_pct'] for r in rows):.3f} % (P_pi) and "
        f"{max(r['bias_error_max_rad'] for r in rows):.3f} rad (bias)"), "32")),
    "hex-dead": _v(lambda: (
        f"{dead_cells(hs.chips('8'))} of an 8-endpoint chip, its corner cells, and "
        f"{dead_cells(hs.chips('32'))} of the 32-endpoint switch")),
    "hex-xt-sparse": _v(lambda: f"{hs.crosstalk_chip(SPARSE)['apart_um']:.0f} um"),
    "hex-xt-dense": _v(lambda: f"{hs.crosstalk_chip(DENSE)['cells']} cells, "
                       + geometry(hs.crosstalk_chip(DENSE))),
    "hex-crosstalk": _v(table(("", "bias error, median / worst", "matchings routed (of 10)",
                               "their worst isolation: worst / median"), crosstalk_rows)),
    "hex-xt-gap": _v(lambda: db(hs.crosstalk_chip(DENSE)["factory"]["worst_db"]
                                - hs.crosstalk_chip(DENSE)["crosstalk"]["worst_db"], 2)),
    "hex-xt-denser": _v(lambda: geometry(hs.crosstalk_chip(DENSER))),
    "hex-xt-denser-result": _v(denser),
    "hex-xt-readings": _v(lambda: (
        f"{count(hs.crosstalk_chip(DENSE)['crosstalk_readings'])} on the dense chip, against "
        f"{count(hs.crosstalk_chip(DENSE)['selfcal_readings'])} for its self-calibration")),
    "hex-xt-time": _t(lambda: stamped(f"{hs.crosstalk_chip(DENSE)['crosstalk_s']:.2g} s")),
    "hex-accuracy": _v(table(("chip", "cells fitted", "dead", "worst bias error",
                              "worst P_pi error"), accuracy_rows)),
    "hex-selfcal-readings": _v(lambda: (
        f"{span([r['readings'] for r in hs.chips('8')], count)} readings an 8-endpoint chip, "
        f"{span([r['readings'] for r in hs.chips('32')], count)} a 32-endpoint one")),
    "hex-selfcal-time": _t(lambda: stamped(
        f"{np.median([r['selfcal_s'] for r in hs.chips('8')]):.1f} s and "
        f"{np.median([r['selfcal_s'] for r in hs.chips('32')]):.0f} s")),
    "hex-extinction": _v(table(
        ("chip", "clean readings (cell states)",
         "clean: median error, worst, above truth, > 1 dB above",
         "stored: median error, worst, > 1 dB above", "default",
         "35 dB everywhere: worst, > 1 dB above"), extinction_rows)),
    "hex-ext-worst": _v(lambda: db(hs.extinction()["extinction_optimistic_db_max"], 2)),
    "hex-ext-clean": _v(lambda: db(-hs.extinction()["extinction_clean_error_db_median"])),
    "hex-ext-default": _v(lambda: span(
        [r["true_median_db"] - r["default_db"] for r in hs.extinction()["chips"]],
        lambda v: f"{v:.0f}") + " dB"),
    "hex-ext-readings": _v(lambda: (
        f"{span([r['extinction_readings'] for r in hs.chips('32')], count)} of a 32-endpoint "
        f"chip's {span([r['readings'] for r in hs.chips('32')], count)}")),
    "hex-stored-32": _v(lambda: span([-r["median_db"] for r in hs.chips("32")],
                                     lambda v: f"{v:.1f}") + " dB"),
    "hex-router-readings": _v(lambda: span([r["readings"] for r in _ROUTER()["hex_selfcal_chips"]],
                                           count)),
    "hex-router-time": _t(lambda: stamped(span(
        [r["selfcal_s"] for r in _ROUTER()["hex_selfcal_chips"]], lambda s: f"{s:.0f} s"))),
    "hex-router-json": Figure(PAGE, table(("key", "value"), router_json_rows, timed=True),
                              (_STATE,), files={"docs/hex-isolation.png": "hex-isolation.png"},
                              folder=hs.folder, slow=True),
    "hex-router-chips": _v(table(
        ("chip", "dead cells", "optimal cover", "its worst isolation, self-cal / factory",
         "cover asking 25.5 dB: size, worst measured, matchings below 25 dB",
         "measured minus predicted: worst, median"), router_rows)),
    "hex-optimal": _v(table(
        ("chip", "searched cover", "its worst isolation: predicted / measured / cancelled",
         "cancelling its matchings: median, best gain",
         "cancelling the circle method's 6 worst: median, best gain",
         "cover at 25 dB: matchings, worst measured"), optimal_rows)),
    "hex-design": Figure(PAGE, table(
        ("mesh", "endpoint margin", "cells", "chips calibrated",
         "optimal cover's worst isolation: median (worst)", "cover at 25 dB: median (most)",
         "yield at 25 dB"), design_rows), files={"docs/hex-design.png": "hex-design.png"},
        folder=hs.folder, slow=True),
    "hex-opt-worst": _v(lambda: span(
        [r["cover_optimal_worst_db_measured"] for r in _ROUTER()["hex_selfcal_chips"]],
        lambda v: f"{v:.2f}") + " dB"),
    "hex-opt-25": _v(lambda: (
        span([r["cover_25db_size"] for r in _ROUTER()["hex_selfcal_chips"]], str)
        + f" matchings ({_ROUTER()['cover_25db_rescued']} kept whole by cancelling over the "
        f"three chips; {_ROUTER()['cover_25db_measured_below_goal']} below 25 dB measured)")),
    "hex-cancel-searched": _v(lambda: db(_ROUTER()["cancel_gain_db_median"], 2, True)
                              + f" (best {db(_ROUTER()['cancel_gain_db_max'], 2, True)})"),
    "hex-cancel-circle": _v(lambda: db(_ROUTER()["cancel_gain_circle_db_median"], 2, True)),
    "hex-cancel-readings": _v(lambda: count(int(_ROUTER()["cancel_readings_median"]))),
    "hex-true-cancel": _v(lambda: (
        f"{span(hs.true_cancel()['shared'], lambda v: db(v, 2, True))} with trims of the shared "
        f"cells alone, {span(hs.true_cancel()['path'], lambda v: db(v, 1, True))} with trims of "
        "every cell on the paths")),
    "hex-circle-worst": _v(lambda: span(
        [r["selfcal_isolation_db"] for r in _ROUTER()["hex_selfcal_chips"]],
        lambda v: f"{v:.1f}") + " dB"),
    "hex-router-dead": _v(lambda: dead_cells(_ROUTER()["hex_selfcal_chips"])),
    "hex-router-optimal": _v(lambda: span(
        [r["plain_cover_size"] for r in _ROUTER()["hex_selfcal_chips"]], str) + " matchings"),
    "hex-router-below": _v(below_goal),
    "hex-router-miss": _v(lambda: db(-_ROUTER()["prediction_error_db_max"], 2)),
    "hex-router-pessimism": _v(lambda: span(
        [r["prediction_error_db_median"] for r in _ROUTER()["hex_selfcal_chips"]],
        lambda v: f"{v:.1f}") + " dB"),
    "hex-router-gap": _v(lambda: db(max(
        r["factory_isolation_db"] - r["selfcal_isolation_db"]
        for r in _ROUTER()["hex_selfcal_chips"]), 2)),
    "hex-spread": _v(spread),
    "hex-bound": _v(bound),
    "hex-bound-flat": _v(flat),
    "hex-parking": _v(lambda: (
        f"{hs.parking()['matchings']} matchings (3 chips) by at most "
        f"{db(hs.parking()['moved_db'], 2)}")),
    "hex-cover-budget": Figure(PAGE, lambda: f"{count(hs.COVER_BUDGET)} cells"),
    "hex-budget": _v(budget),
    "hex-budget-time": _t(budget_time),
    "hex-margins": _v(table(("margin", "chip 0", "chip 1", "chip 2"), margin_rows)),
    "hex-routable": _v(routable),
    "hex-margin-best": _v(best_margin),
    "hex-relabel": _v(relabel, (r"at ([\d.]+) times the time",)),
}  # fmt: skip
