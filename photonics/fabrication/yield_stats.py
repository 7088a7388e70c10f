"""The statistics of a yield study's rows (:mod:`photonics.fabrication.chip_yield`): the yield with
its Wilson interval, percentiles of each figure, which drawn imperfection goes with failing chips,
and sweeps: a grid of studies over one or two of a study's numbers and which of them moves the yield
most."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from photonics.errors import SettingsError
from photonics.fabrication.study import DRAWN, FIGURES, SWEEPABLE, YieldStudy

#: Two-sided 95 % normal quantile, for the Wilson interval of a yield.
Z_95 = 1.959963984540054


def wilson_interval(passed: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a yield of ``passed`` chips out of ``total`` (95 % by
    default): (low, high), fractions in [0, 1]."""
    if total < 1 or not 0 <= passed <= total:
        raise SettingsError(f"need 0 <= passed <= total and total >= 1, got {passed}/{total}")
    p = passed / total
    scale = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / scale
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / scale
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == total else min(1.0, centre + half)
    return low, high


def ranks(values: np.ndarray) -> np.ndarray:
    """The rank of each value (0-based; ties take their mean rank)."""
    order = np.argsort(values, kind="stable")
    rank = np.empty(len(values))
    rank[order] = np.arange(len(values))
    for value in np.unique(values):
        tied = values == value
        rank[tied] = rank[tied].mean()
    return rank


def sensitivity(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Which drawn imperfection (:data:`DRAWN`) goes with a chip's worst isolation: for each,
    Spearman's rank correlation with ``worst_isolation_db`` over the calibrated chips, the
    strongest (largest magnitude) first, and the yield of the chips at or below the median of
    that imperfection and of those above it (all chips: one that did not calibrate failed;
    an imperfection the design has not, None on every chip, is left out);
    empty with fewer than 3 calibrated chips. From the rows alone: a sweep says more of what
    moves the yield."""
    chips = [r for r in rows if r["calibrated"]]
    if len(chips) < 3:
        return []
    isolation = ranks(np.array([r["worst_isolation_db"] for r in chips], dtype=float))
    passed = np.array([bool(r["passed"]) for r in rows])
    out = []
    for name in DRAWN:
        if all(r[name] is None for r in rows):  # not drawn on this design (no rings)
            continue
        drawn = ranks(np.array([r[name] for r in chips], dtype=float))
        spread = drawn.std() * isolation.std()  # 0 when either is the same on every chip
        covariance = np.mean((drawn - drawn.mean()) * (isolation - isolation.mean()))
        rho = float(covariance / spread) if spread > 0 else 0.0
        values = np.array([r[name] for r in rows], dtype=float)
        low = values <= np.median(values)
        out.append(
            {
                "drawn": name,
                "spearman_vs_worst_isolation": rho,
                "yield_low_half": float(passed[low].mean()),
                "yield_high_half": float(passed[~low].mean()) if np.any(~low) else None,
            }
        )
    return sorted(out, key=lambda s: -abs(s["spearman_vs_worst_isolation"]))


def summarize(study: YieldStudy, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Yield of ``rows`` (chips of ``study``) with its Wilson 95 % interval, the 5th, 50th
    and 95th percentiles of each figure of :data:`FIGURES` over the calibrated chips (None when
    no chip calibrated) and the :func:`sensitivity` ranking."""
    passed = sum(bool(r["passed"]) for r in rows)
    low, high = wilson_interval(passed, len(rows)) if rows else (0.0, 1.0)
    percentiles: dict[str, dict[str, float | None]] = {}
    for name in FIGURES:
        values = np.array([r[name] for r in rows if r["calibrated"]], dtype=float)
        percentiles[name] = {
            f"p{q}": (float(np.percentile(values, q)) if values.size else None) for q in (5, 50, 95)
        }
    return {
        "study": study.as_dict(),
        "chips": len(rows),
        "passed": passed,
        "calibration_failures": sum(not r["calibrated"] for r in rows),
        "yield": passed / len(rows) if rows else None,
        "yield_95": [low, high],
        "percentiles": percentiles,
        "sensitivity": sensitivity(rows),
    }


def sweep_points(base: YieldStudy, axes: Sequence[tuple[str, Sequence[float]]]) -> list[YieldStudy]:
    """The studies of a grid over one or two of ``base``'s numbers (:data:`SWEEPABLE`), each
    ``(name, values)``: ``base`` with every combination of the values, the first axis slowest.
    Each point is checked as a study; a bad name, axis or value raises SettingsError."""
    if not 1 <= len(axes) <= 2:
        raise SettingsError(f"a sweep has 1 or 2 parameters, got {len(axes)}")
    names = [name for name, _ in axes]
    for name, values in axes:
        if name not in SWEEPABLE:
            raise SettingsError(f"cannot sweep {name!r}; sweepable: {', '.join(SWEEPABLE)}")
        if not values or len(set(values)) != len(values):
            raise SettingsError(f"sweep {name} needs distinct values, got {list(values)}")
    if len(set(names)) != len(names):
        raise SettingsError(f"{names[0]} is swept twice")
    if "ring_sigma_nm" in names and not base.output_rings:
        raise SettingsError("ring_sigma_nm is swept on a design without output rings")
    grid = itertools.product(*(values for _, values in axes))
    return [replace(base, **dict(zip(names, map(float, point), strict=True))) for point in grid]


def parameter_effects(
    points: Sequence[YieldStudy], rows: Sequence[Sequence[dict[str, Any]]], swept: Sequence[str]
) -> list[dict[str, Any]]:
    """Which swept number moves the yield most: for each name of ``swept``, the yield of the
    chips at each of its values (``rows[i]`` are the chips of ``points[i]``, pooled over the
    other axis) and the spread, the largest yield less the smallest; largest spread first."""
    out = []
    for name in swept:
        passed: dict[float, list[int]] = {}
        for study, chips in zip(points, rows, strict=True):
            tally = passed.setdefault(getattr(study, name), [0, 0])
            tally[0] += sum(bool(r["passed"]) for r in chips)
            tally[1] += len(chips)
        yields = {value: p / t for value, (p, t) in passed.items() if t}
        spread = max(yields.values()) - min(yields.values()) if yields else 0.0
        out.append({"parameter": name, "yield_by_value": yields, "yield_spread": spread})
    return sorted(out, key=lambda e: -e["yield_spread"])


def summarize_sweep(
    points: Sequence[YieldStudy],
    rows: Sequence[Sequence[dict[str, Any]]],
    axes: Sequence[tuple[str, Sequence[float]]],
) -> dict[str, Any]:
    """A sweep's summary: its ``axes`` (as lists), each point's :func:`summarize` with its
    swept numbers (``point``), the :func:`parameter_effects` of the swept numbers and the
    :func:`sensitivity` of the chips of all points together."""
    names = [name for name, _ in axes]
    return {
        "sweep": [[name, [float(v) for v in values]] for name, values in axes],
        "points": [
            summarize(study, chips) | {"point": {name: getattr(study, name) for name in names}}
            for study, chips in zip(points, rows, strict=True)
        ],
        "parameter_effects": parameter_effects(points, rows, names),
        "sensitivity": sensitivity([r for chips in rows for r in chips]),
    }
