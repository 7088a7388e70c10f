"""A yield study's chips: each drawn from the study's seed and its index alone, calibrated,
routed and measured; the Wilson interval and the summary of many rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from photonics.devices.thermal import CrosstalkModel
from photonics.errors import PortError, SettingsError
from photonics.fabrication.chip_yield import run_chip
from photonics.fabrication.study import YieldStudy, chip_seeds, passes
from photonics.fabrication.yield_stats import (
    parameter_effects,
    ranks,
    sensitivity,
    summarize,
    sweep_points,
    wilson_interval,
)


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


def drawn(coupler: float, heater: float, loss: float) -> dict[str, float | None]:
    ring = None  # a design without rings
    return {
        "max_coupler_error": coupler,
        "heater_efficiency_rms": heater,
        "max_mzi_loss_db": loss,
        "max_ring_offset_nm": ring,
    }


def test_summary() -> None:
    study = YieldStudy(ports=4, chips=4)
    rows = [
        {"passed": True, "calibrated": True, "worst_isolation_db": 30.0 + i}
        | {"worst_loss_db": 2.0, "worst_excess_loss_db": 0.01, "worst_power_mW": 100.0}
        | drawn(0.03 - 0.01 * i, 0.05, 0.5)
        for i in range(3)
    ] + [
        {"passed": False, "calibrated": False, "worst_isolation_db": math.nan}
        | {"worst_loss_db": math.nan, "worst_excess_loss_db": math.nan, "worst_power_mW": math.nan}
        | drawn(0.5, 0.5, 0.5)
    ]
    s = summarize(study, rows)
    assert (s["chips"], s["passed"], s["calibration_failures"], s["yield"]) == (4, 3, 1, 0.75)
    assert s["yield_95"] == list(wilson_interval(3, 4))
    assert s["percentiles"]["worst_isolation_db"]["p50"] == 31.0
    # the coupler error falls as isolation rises; the chips of low error all pass, the failed
    # chip (0.5) is in the high half
    assert s["sensitivity"][0] == {
        "drawn": "max_coupler_error",
        "spearman_vs_worst_isolation": pytest.approx(-1.0),
        "yield_low_half": 1.0,
        "yield_high_half": 0.5,
    }


def test_sensitivity_ranks_what_goes_with_isolation_first() -> None:
    rng = np.random.default_rng(0)
    coupler, heater, loss = rng.uniform(0, 0.05, (3, 20))
    rows = [
        {"calibrated": True, "worst_isolation_db": 40 - 300 * c + 20 * h} | drawn(c, h, x)
        for c, h, x in zip(coupler, heater, loss, strict=True)
    ]
    for r in rows:
        r["passed"] = r["worst_isolation_db"] >= 35
    ranking = sensitivity(rows)
    assert ranking[0]["drawn"] == "max_coupler_error"
    assert ranking[0]["spearman_vs_worst_isolation"] < -0.8
    # the chips of small coupler error pass more often than those of large
    assert ranking[0]["yield_low_half"] > ranking[0]["yield_high_half"]
    assert all(-1 <= r["spearman_vs_worst_isolation"] <= 1 for r in ranking)
    assert len(ranking) == 3  # no rings drawn: their offset is not ranked
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
        ("mesh", "torus", "mesh must be one of clements, reck, hexagonal"),
        ("chips", True, "chips must be an integer"),
        ("max_power_mW", 0.0, "max_power_mW must be > 0"),
        ("pitch_y_um", 0.0, "pitch_y_um must be"),
        ("output_rings", 1, "output_rings must be True or False"),
        ("ring_sigma_nm", -0.1, "ring_fab_sigma_nm must be >= 0"),
        ("workload", "ring", "workload 'ring' needs its matchings"),
        ("matchings", (((0, 1),),), "the all-to-all workload takes no matchings"),
    ],
)
def test_a_bad_study_is_refused(field: str, value: object, words: str) -> None:
    with pytest.raises(SettingsError, match=words):
        YieldStudy(**{field: value})  # type: ignore[arg-type]


def test_an_index_outside_the_study_is_refused() -> None:
    with pytest.raises(SettingsError, match=r"chip index must be in 0\.\.2"):
        run_chip(YieldStudy(ports=4, chips=3), 3)


def test_the_power_budget_fails_a_chip_whose_matchings_draw_more() -> None:
    row = run_chip(YieldStudy(ports=4, chips=1), 0)
    # 4 ports: 6 MZIs and 16 heaters, each well under 2 P_pi = 43 mW in any matching
    assert row["passed"] and 0 < row["worst_power_mW"] < 16 * 43
    tight = YieldStudy(ports=4, chips=1, max_power_mW=0.99 * row["worst_power_mW"])
    assert run_chip(tight, 0) == row | {"passed": False}


def test_a_tighter_pitch_brings_crosstalk_that_costs_isolation() -> None:
    # the calibration does not compensate crosstalk: MZI heaters 30 um apart (7 % of a
    # neighbour's phase, against 0.1 % at 120 um by default) leave the routed states off
    wide = run_chip(YieldStudy(ports=4, chips=1), 0)
    dense = run_chip(YieldStudy(ports=4, chips=1, pitch_x_um=40.0, pitch_y_um=15.0), 0)
    assert CrosstalkModel().coupling(30.0) > 0.05 > 0.002 > CrosstalkModel().coupling(120.0)
    assert dense["worst_isolation_db"] < wide["worst_isolation_db"] - 10


def test_a_study_s_chip_has_its_heaters_where_the_layout_draws_them_unless_given_a_grid() -> None:
    from photonics.chips.chip import Chip
    from photonics.feedforward.chip_geometry import drawn_geometry

    chip = Chip(YieldStudy(ports=16, chips=1).spec(0))
    assert chip.geometry == drawn_geometry(chip.mesh)  # 820 x 60 um at 16 ports
    assert chip.geometry.column_pitch_um == 820.0
    grid = YieldStudy(ports=16, chips=1, pitch_y_um=20.0)  # one pitch said: a plain grid
    assert (grid.pitch_x_um, grid.pitch_y_um) == (300.0, 20.0)
    assert Chip(grid.spec(0)).geometry is None


def test_output_rings_are_locked_on_each_chip_and_cost_heater_power_not_isolation() -> None:
    plain = run_chip(YieldStudy(ports=4, chips=1), 0)
    rows = {
        sigma: run_chip(YieldStudy(ports=4, chips=1, output_rings=True, ring_sigma_nm=sigma), 0)
        for sigma in (0.3, 3.0)
    }
    assert plain["max_ring_offset_nm"] is None
    assert 0.05 < rows[0.3]["max_ring_offset_nm"] < 1.5 < rows[3.0]["max_ring_offset_nm"]
    for row in rows.values():
        assert row["passed"]
        # each ring's lock holds a heater near an FSR of power (43 mW): 4 of them
        assert row["worst_power_mW"] > plain["worst_power_mW"] + 4 * 20
        # locked rings add their drop loss only (a ring off by a FWHM would cost 3 dB)
        assert 0 < row["worst_loss_db"] - plain["worst_loss_db"] < 0.5
        assert row["worst_isolation_db"] == pytest.approx(plain["worst_isolation_db"], abs=1.0)


def test_a_hexagonal_study_calibrates_routes_and_measures_each_recirculating_chip() -> None:
    study = YieldStudy(ports=4, chips=4, mesh="hexagonal", seed=3)
    rows = [run_chip(study, i) for i in (1, 2)]
    assert rows == [run_chip(study, i) for i in (1, 2)]  # the chip's seed decides
    for row in rows:
        assert row["calibrated"] and row["readings"] > 1000  # through its 4 photodiodes
        assert row["matchings"] == 3  # the all-to-all of 4 endpoints
        assert 20 < row["worst_isolation_db"] < 80
        # a path crosses several 0.5 dB cells and their links; calibration costs little
        assert 2 < row["worst_loss_db"] < 12 and 0 <= row["worst_excess_loss_db"] < 1.5
        assert row["max_ring_offset_nm"] is None and row["passed"] == passes(study, row)
        assert row["cells"] == 38 and row["optimal_worst_isolation_db"] is None  # not searched
    ring = (((0, 1), (2, 3)), ((1, 2), (0, 3)))  # a training job's ring: its 2 matchings
    job = YieldStudy(ports=4, chips=3, mesh="hexagonal", seed=3, workload="ring", matchings=ring)
    on_ring = run_chip(job, 1)
    assert on_ring["matchings"] == 2 and on_ring["readings"] == rows[0]["readings"]
    assert on_ring["worst_isolation_db"] >= rows[0]["worst_isolation_db"] - 3
    # wider couplers leak more: the same chips (errors drawn 3.3 times larger) isolate worse
    wide = YieldStudy(ports=4, chips=3, mesh="hexagonal", seed=3, coupler_sigma=0.03)
    worst = run_chip(wide, 2)["worst_isolation_db"]
    assert worst < rows[1]["worst_isolation_db"] - 3
    # and wide chip 1's calibration cannot fit an endpoint's own cell any way: that port is
    # lost (none of the first 40 chips at the default spread loses one)
    lost = run_chip(wide, 1)
    assert not lost["calibrated"] and not lost["passed"] and lost["readings"] > 1000
    assert math.isnan(lost["worst_isolation_db"])


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("pitch_x_um", 300.0, "a hexagonal study takes no pitch_x_um"),
        ("output_rings", True, "a hexagonal study takes no output_rings"),
        ("coupler_sigma", -0.1, "splitter_sigma must be >= 0"),
        ("mesh_size", 9.5, "mesh_size must be a whole number"),
        ("mesh_size", 2, "mesh_size must be a whole number"),
        ("endpoint_margin", 0.5, "endpoint_margin must be in"),
        ("search_routes", -1, "search_routes must be an integer"),
    ],
)
def test_a_bad_hexagonal_study_is_refused(field: str, value: object, words: str) -> None:
    with pytest.raises(SettingsError, match=words):
        YieldStudy(mesh="hexagonal", **{field: value})  # type: ignore[arg-type]


def test_the_hexagonal_geometry_is_a_design_variable_of_the_study() -> None:
    # an earlier study keeps its identity (and its chips' task keys) at the default geometry
    plain = YieldStudy(ports=4, mesh="hexagonal", chips=1)
    assert not {"mesh_size", "endpoint_margin", "search_routes"} & set(plain.identity())
    with pytest.raises(SettingsError, match="belongs to the hexagonal switch"):
        YieldStudy(mesh="clements", mesh_size=5)
    searched = YieldStudy(
        ports=4, mesh="hexagonal", chips=1, mesh_size=3.0, search_routes=30, min_isolation_db=15.0
    )
    assert searched.mesh_size == 3 and isinstance(searched.mesh_size, int)  # a sweep: floats
    row = run_chip(searched, 0)
    assert row["cells"] == 38  # the 3x3 honeycomb, as hexagonal_switch chooses for 4 endpoints
    # the searched cover: the optimal 3 matchings, measured; the cover at the goal built on it
    assert 20 < row["optimal_worst_isolation_db"] < 80 and row["matchings"] >= 3
    assert row["passed"] == passes(searched, row)


def test_a_workload_of_its_own_is_routed_and_measured_on_its_pairs_only() -> None:
    ring = (((0, 1), (2, 3)), ((1, 2), (0, 3)))
    one_pair = (((1, 2),),)  # ports 0 and 3 dark: their light is not a circuit
    both = run_chip(YieldStudy(ports=4, chips=1, workload="ring", matchings=ring), 0)
    alone = run_chip(YieldStudy(ports=4, chips=1, workload="pair", matchings=one_pair), 0)
    assert (both["matchings"], alone["matchings"]) == (2, 1)
    assert both["calibrated"] and alone["calibrated"]
    # the same chip, the same calibration: one circuit can be no worse than four
    assert alone["worst_isolation_db"] >= both["worst_isolation_db"] - 0.5
    assert YieldStudy(ports=4, workload="ring", matchings=[[[1, 0], [3, 2]]]).matchings == (
        ((0, 1), (2, 3)),
    )
    with pytest.raises(PortError, match="port 4"):
        YieldStudy(ports=4, workload="bad", matchings=(((0, 4),),))


def test_sweep_points_are_the_grid_first_axis_slowest() -> None:
    base = YieldStudy(ports=4, chips=2, seed=3)
    points = sweep_points(base, [("coupler_sigma", [0.01, 0.02]), ("pitch_y_um", [30, 60, 90])])
    assert [(p.coupler_sigma, p.pitch_y_um) for p in points] == [
        (c, y) for c in (0.01, 0.02) for y in (30.0, 60.0, 90.0)
    ]
    assert all(p.chips == 2 and p.seed == 3 for p in points)


@pytest.mark.parametrize(
    ("axes", "words"),
    [
        ([], "1 or 2 parameters"),
        ([("seed", [1, 2])], "cannot sweep 'seed'; sweepable: coupler_sigma"),
        ([("coupler_sigma", [])], "needs distinct values"),
        ([("coupler_sigma", [0.1, 0.1])], "needs distinct values"),
        ([("loss_db", [1.0]), ("loss_db", [2.0])], "loss_db is swept twice"),
        ([("coupler_sigma", [0.01, -0.01])], "splitter_sigma must be >= 0"),
        ([("ring_sigma_nm", [0.1, 1.0])], "ring_sigma_nm is swept on a design without output"),
    ],
)
def test_a_bad_sweep_is_refused(axes: list, words: str) -> None:
    with pytest.raises(SettingsError, match=words):
        sweep_points(YieldStudy(ports=4), axes)


def test_parameter_effects_rank_what_moves_the_yield() -> None:
    points = sweep_points(
        YieldStudy(ports=4, chips=4), [("coupler_sigma", [0.01, 0.05]), ("loss_db", [0.4, 0.6])]
    )
    # the yield falls with the coupler spread (8/8 -> 2/8), less with the loss (6/8 -> 4/8)
    passes = {(0.01, 0.4): 4, (0.01, 0.6): 4, (0.05, 0.4): 2, (0.05, 0.6): 0}
    rows = [
        [{"passed": i < passes[(p.coupler_sigma, p.loss_db)]} for i in range(4)] for p in points
    ]
    effects = parameter_effects(points, rows, ["loss_db", "coupler_sigma"])
    assert [e["parameter"] for e in effects] == ["coupler_sigma", "loss_db"]
    assert effects[0]["yield_by_value"] == {0.01: 1.0, 0.05: 0.25}
    assert effects[0]["yield_spread"] == 0.75 and effects[1]["yield_spread"] == 0.25
