"""A yield study's chips: each drawn from the study's seed and its index alone, calibrated,
routed and measured; the Wilson interval and the summary of many rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from photonics.chip_yield import (
    YieldStudy,
    chip_seeds,
    ranks,
    run_chip,
    sensitivity,
    summarize,
    wilson_interval,
)
from photonics.errors import SettingsError


def test_a_chip_s_seed_is_the_study_seed_s_spawned_child() -> None:
    study = YieldStudy(ports=4, chips=5, seed=9)
    child = np.random.SeedSequence(9).spawn(5)[3].spawn(2)[0]
    assert chip_seeds(study, 3)[0] == int(child.generate_state(1, np.uint64)[0])
    assert len({chip_seeds(study, i)[0] for i in range(5)}) == 5


def test_a_chip_s_row_depends_on_its_index_only() -> None:
    row = run_chip(YieldStudy(ports=4, chips=3, seed=2), 2)
    assert run_chip(YieldStudy(ports=4, chips=50, seed=2), 2) == row
    assert row["index"] == 2 and row["calibrated"] and row["matchings"] == 3
    assert row["passed"] == (row["worst_isolation_db"] >= 20.0 and row["worst_loss_db"] <= 12.0)
    # 4 ports: a path crosses at most the 4 columns' MZIs of 0.5 +- 0.02 dB
    assert 1.0 < row["worst_loss_db"] < 4 * (0.5 + 3 * 0.02) + row["worst_excess_loss_db"]


def test_a_wider_coupler_spread_costs_isolation() -> None:
    tight = run_chip(YieldStudy(ports=4, chips=1, coupler_sigma=0.0), 0)
    loose = run_chip(YieldStudy(ports=4, chips=1, coupler_sigma=0.08), 0)
    assert tight["max_coupler_error"] == 0.0 < loose["max_coupler_error"]
    assert loose["worst_isolation_db"] < tight["worst_isolation_db"] - 10


def test_a_strict_spec_fails_a_chip_a_loose_one_passes() -> None:
    strict = run_chip(YieldStudy(ports=4, chips=1, max_loss_db=0.5), 0)
    loose = run_chip(YieldStudy(ports=4, chips=1, max_loss_db=50.0), 0)
    assert not strict["passed"] and loose["passed"]


@pytest.mark.parametrize(
    ("passed", "total", "low", "high"),
    [(0, 10, 0.0, 0.27753), (10, 10, 0.72247, 1.0), (5, 10, 0.23659, 0.76341)],
)
def test_wilson_interval(passed: int, total: int, low: float, high: float) -> None:
    got = wilson_interval(passed, total)
    assert got == pytest.approx((low, high), abs=1e-5)


def drawn(coupler: float, heater: float, loss: float) -> dict[str, float]:
    return {"max_coupler_error": coupler, "heater_efficiency_rms": heater, "max_mzi_loss_db": loss}


def test_summary() -> None:
    study = YieldStudy(ports=4, chips=4)
    rows = [
        {"passed": True, "calibrated": True, "worst_isolation_db": 30.0 + i}
        | {"worst_loss_db": 2.0, "worst_excess_loss_db": 0.01}
        | drawn(0.03 - 0.01 * i, 0.05, 0.5)
        for i in range(3)
    ] + [
        {"passed": False, "calibrated": False, "worst_isolation_db": math.nan}
        | {"worst_loss_db": math.nan, "worst_excess_loss_db": math.nan}
        | drawn(0.5, 0.5, 0.5)
    ]
    s = summarize(study, rows)
    assert (s["chips"], s["passed"], s["calibration_failures"], s["yield"]) == (4, 3, 1, 0.75)
    assert s["yield_95"] == list(wilson_interval(3, 4))
    assert s["percentiles"]["worst_isolation_db"]["p50"] == 31.0
    assert s["sensitivity"][0] == {
        "drawn": "max_coupler_error",
        "spearman_vs_worst_isolation": pytest.approx(-1.0),
    }


def test_sensitivity_ranks_what_goes_with_isolation_first() -> None:
    rng = np.random.default_rng(0)
    coupler, heater, loss = rng.uniform(0, 0.05, (3, 20))
    rows = [
        {"calibrated": True, "worst_isolation_db": 40 - 300 * c + 20 * h} | drawn(c, h, x)
        for c, h, x in zip(coupler, heater, loss, strict=True)
    ]
    ranking = sensitivity(rows)
    assert ranking[0]["drawn"] == "max_coupler_error"
    assert ranking[0]["spearman_vs_worst_isolation"] < -0.8
    assert all(-1 <= r["spearman_vs_worst_isolation"] <= 1 for r in ranking)
    assert sensitivity(rows[:2]) == []


def test_ranks_share_ties() -> None:
    assert ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [2.5, 0.0, 2.5, 1.0]


def test_a_chip_s_drawn_figures_follow_the_study_s_spreads() -> None:
    tight = run_chip(YieldStudy(ports=4, chips=1, heater_spread=0.0, loss_sigma_db=0.0), 0)
    assert tight["heater_efficiency_rms"] == 0.0 and tight["max_mzi_loss_db"] == 0.5
    loose = run_chip(YieldStudy(ports=4, chips=1, heater_spread=0.2), 0)
    assert 0.05 < loose["heater_efficiency_rms"] < 0.5


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("ports", 5, "ports must be even"),
        ("ports", 34, "ports must be even"),
        ("chips", 0, "chips must be >= 1"),
        ("seed", -1, "seed must be >= 0"),
        ("coupler_sigma", -0.1, "splitter_sigma must be >= 0"),
        ("max_loss_db", math.inf, "max_loss_db must be a finite number"),
        ("mesh", "hexagonal", "mesh must be one of"),
        ("chips", True, "chips must be an integer"),
    ],
)
def test_a_bad_study_is_refused(field: str, value: object, words: str) -> None:
    with pytest.raises(SettingsError, match=words):
        YieldStudy(**{field: value})  # type: ignore[arg-type]


def test_an_index_outside_the_study_is_refused() -> None:
    with pytest.raises(SettingsError, match=r"chip index must be in 0\.\.2"):
        run_chip(YieldStudy(ports=4, chips=3), 3)
