"""Yield sweeps on a real local Dask cluster and real Parquet folders (a point's rows are its
study's chips, each point resumes on its own), from Python and ``pswitch yield --sweep``, and
the figure of a study or sweep, checked through the data its axes hold."""

from __future__ import annotations

import contextlib
import io
import json
from contextlib import ExitStack
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from distributed import get_task_stream

from photonics.fabrication.chip_yield import run_chip
from photonics.fabrication.study import YieldStudy
from photonics.fabrication.yield_stats import summarize, summarize_sweep, sweep_points
from pswitch.cli import main
from pswitch.yield_plots import yield_figure
from pswitch.yield_study import cluster, run_sweep

BASE = YieldStudy(ports=4, chips=3, seed=7)
AXES = [("coupler_sigma", [0.0, 0.03]), ("pitch_y_um", [15.0, 60.0])]


def expected(axes: list) -> list[list[dict]]:
    """Every point's rows from a plain loop, with the point's swept numbers."""
    return [
        [run_chip(p, i) | {name: getattr(p, name) for name, _ in axes} for i in range(p.chips)]
        for p in sweep_points(BASE, axes)
    ]


def test_a_sweep_runs_every_point_and_resumes_each_on_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "sweep"
    points, rows = run_sweep(BASE, AXES, folder, workers=2)
    assert points == sweep_points(BASE, AXES)
    assert rows == expected(AXES)
    # the folder read whole: the swept numbers are columns (Hive-style point folders)
    part = ds.partitioning(pa.schema([(n, pa.float64()) for n, _ in AXES]), flavor="hive")
    table = pq.read_table(folder, partitioning=part).to_pylist()
    key = [(r["coupler_sigma"], r["pitch_y_um"], r["index"]) for r in table]
    assert sorted(key) == sorted(
        (p.coupler_sigma, p.pitch_y_um, i) for p in points for i in range(3)
    )
    assert pq.read_table(folder).num_rows == 12  # the hidden _sweep.json, _study.json left out
    # one point lost its rows: only its chips run again
    lost = folder / "coupler_sigma=0.03" / "pitch_y_um=15.0"
    for path in lost.glob("part-*.parquet"):
        path.unlink()
    kept = {p: p.stat().st_mtime_ns for p in folder.rglob("part-*.parquet")}
    ticks: list[int] = []
    again = run_sweep(BASE, AXES, folder, workers=1, progress=lambda s, d, t: ticks.append(d))
    assert again == (points, rows)
    assert ticks[0] == 9 and ticks[-1] == 12
    assert {p: p.stat().st_mtime_ns for p in kept} == kept
    assert len(list(lost.glob("part-*.parquet"))) == 1
    # another sweep on the same folder is refused before anything runs
    with pytest.raises(Exception, match=r"another sweep \(differs in axes\)"):
        run_sweep(BASE, [("coupler_sigma", [0.0, 0.01])], folder, workers=1)


def test_the_command_sweeps_prints_json_and_plots(tmp_path: Path) -> None:
    out = io.StringIO()
    argv = ["yield", "--ports", "4", "--chips", "3", "--seed", "7", "--workers", "2"]
    argv += ["--sweep", "coupler-sigma=0,0.03", "--sweep", "pitch_y_um=15,60"]
    argv += ["--output", str(tmp_path / "rows"), "--plot", str(tmp_path / "sweep.png")]
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--json"]) == 0
    result = json.loads(out.getvalue())
    rows = expected(AXES)
    assert [p["point"] for p in result["points"]] == [
        {"coupler_sigma": c, "pitch_y_um": y} for c in (0.0, 0.03) for y in (15.0, 60.0)
    ]
    assert [p["passed"] for p in result["points"]] == [sum(r["passed"] for r in c) for c in rows]
    assert result["chips_run_now"] == 12
    assert {e["parameter"] for e in result["parameter_effects"]} == {"coupler_sigma", "pitch_y_um"}
    png = (tmp_path / "sweep.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(argv) == 0
    assert "Yield sweep over coupler_sigma x pitch_y_um" in text.getvalue()
    assert "(0 chips run now)" in text.getvalue()


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--sweep", "coupler_sigma"], "needs NAME=V1,V2,... with NAME one of coupler_sigma"),
        (["--sweep", "seed=1,2"], "got 'seed=1,2'"),
        (["--sweep", "loss_db=0.5,x"], "got 'loss_db=0.5,x'"),
        (["--sweep", "loss_db=1", "--sweep", "loss_db=2"], "loss_db is swept twice"),
        (["--sweep", "coupler_sigma=0.01,-0.01"], "splitter_sigma must be >= 0"),
        (["--plot", "yield.svg"], "--plot writes a PNG"),
    ],
)
def test_a_bad_sweep_or_plot_is_one_line_and_exit_2(
    extra: list[str], words: str, tmp_path: Path
) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["yield", "--ports", "4", "--output", str(tmp_path / "rows"), *extra])
    assert code == 2
    assert words in err.getvalue() and err.getvalue().count("\n") == 1
    assert not (tmp_path / "rows").exists()


@pytest.fixture(scope="module")
def swept() -> tuple[list[YieldStudy], list[list[dict]]]:
    axes = [("coupler_sigma", [0.0, 0.03, 0.06])]
    points = sweep_points(BASE, axes)
    return points, [[run_chip(p, i) for i in range(p.chips)] for p in points]


def test_the_figure_of_a_sweep_holds_its_yields_the_spec_and_the_ranking(swept: tuple) -> None:
    points, rows = swept
    result = summarize_sweep(points, rows, [("coupler_sigma", [0.0, 0.03, 0.06])])
    fig = yield_figure(result, rows)
    yields, histogram, ranking = fig.axes
    line = yields.lines[0]
    assert line.get_xdata().tolist() == [0.0, 0.03, 0.06]
    assert line.get_ydata().tolist() == [p["yield"] for p in result["points"]]
    spec = [ln for ln in histogram.lines if ln.get_linestyle() == "--"]
    assert [ln.get_xdata()[0] for ln in spec] == [BASE.min_isolation_db]
    assert len(histogram.patches) == 3  # a step outline per point
    bars = [bar.get_width() for bar in ranking.patches]
    assert bars == [result["parameter_effects"][0]["yield_spread"]]
    plt.close(fig)


def test_the_figure_of_a_grid_is_a_heatmap_of_its_yields(swept: tuple) -> None:
    axes = [("coupler_sigma", [0.0, 0.06]), ("loss_db", [0.4, 0.6])]
    points = sweep_points(BASE, axes)
    # 4 chips a point, none calibrated (no figures): only the yields matter here
    rows = [[{"passed": i < k, "calibrated": False} for i in range(4)] for k in (4, 3, 1, 0)]
    fig = yield_figure(summarize_sweep(points, rows, axes), rows)
    image = fig.axes[0].images[0].get_array()
    # rows of the image: loss_db; columns: coupler_sigma
    assert np.asarray(image).tolist() == [[1.0, 0.25], [0.75, 0.0]]
    plt.close(fig)


def test_the_figure_of_one_study_ranks_what_was_drawn(swept: tuple) -> None:
    points, rows = swept
    result = summarize(points[2], rows[2])
    fig = yield_figure(result, [rows[2]])
    histogram, ranking = fig.axes
    drawn = [r["worst_isolation_db"] for r in rows[2] if r["calibrated"]]
    assert sum(p.get_height() for p in histogram.patches) == len(drawn)
    histogram.figure.canvas.draw()  # chips are whole: no tick between two counts
    assert all(float(tick).is_integer() for tick in histogram.get_yticks())
    widths = [bar.get_width() for bar in ranking.patches][::-1]  # drawn top down
    assert widths == [s["spearman_vs_worst_isolation"] for s in result["sensitivity"]]
    plt.close(fig)


def test_a_sweep_over_the_spec_runs_each_chip_once(tmp_path: Path) -> None:
    axes = [("min_isolation_db", [10.0, 30.0, 50.0])]
    with ExitStack() as stack:
        client = cluster(1, None, stack)
        with get_task_stream(client) as stream:
            _, rows = run_sweep(BASE, axes, tmp_path / "spec", client=client)
    assert len(stream.data) == BASE.chips  # 3 chips, not 9: the figures do not depend on the spec
    assert rows == expected(axes)  # and each point judged them by its own spec
    assert [sum(r["passed"] for r in chips) for chips in rows] != [0, 0, 0]
    assert [[r["passed"] for r in chips] for chips in rows][-1] == [False] * BASE.chips
