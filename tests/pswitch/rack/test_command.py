"""``pswitch rack``: each study end to end through the command line, its JSON, its picture,
and the sweep on a real local Dask cluster, resumed."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from pswitch.cli import main
from pswitch.rack import studies


def run_json(capsys, *argv: str) -> dict:
    assert main(["rack", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_failover_reproduces_the_prototype_and_verifies_its_circuits(capsys, tmp_path):
    png = tmp_path / "failover.png"
    r = run_json(capsys, "failover", "--plot", str(png))
    runs = r["runs"]
    # the spare keeps both optical ports: the step time stays; the torus gives one port
    assert runs["photonic, spare"]["step_s"][0] == runs["photonic, spare"]["step_s"][-1]
    assert 1.6 < r["throughput_ratio"] < 2.0
    swap = r["swap"]
    assert swap["total_s"] == pytest.approx(
        swap["detect_s"] + swap["reconfigure_s"] + swap["restart_s"]
    )
    assert 15e-3 <= swap["reconfigure_s"] <= 90.1e-3  # the product class
    v = r["verification"]
    assert v["applied"] >= 1 and v["verified"] == v["applied"]
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_the_failover_holds_at_every_driver_class(capsys):
    ratio = {
        d: run_json(capsys, "failover", "--driver", d, "--verify", "0")
        for d in ("product", "integrated")
    }
    # the swap's reconfiguration is all that differs: per job, not per step
    assert ratio["integrated"]["swap"]["reconfigure_s"] < 1e-4
    assert ratio["product"]["throughput_ratio"] == pytest.approx(
        ratio["integrated"]["throughput_ratio"], rel=1e-4
    )


def test_slicing_fragments_only_the_torus(capsys, tmp_path):
    r = run_json(
        capsys, "slicing", "--jobs", "12", "--verify", "4", "--plot", str(tmp_path / "m.png")
    )
    f = r["fabrics"]
    assert f["photonic"]["fragmentation"] == 0.0 < f["torus"]["fragmentation"]
    assert f["photonic"]["jct_s"] < f["torus"]["jct_s"]
    assert r["prototype"]["collective_speedup"] == pytest.approx(2.0, rel=1e-3)
    assert r["verification"]["applied"] == 4
    # every job of the photonic run holds what it asked for in the allocation map
    held = [a for accs in r["allocation"]["photonic"].values() for a in accs]
    assert len(held) == len(set(held))


def test_rails_break_even_is_where_per_phase_meets_static(capsys):
    r = run_json(capsys, "rails")
    even = r["breakeven_reconfig_s"]
    assert r["electrical_s"] <= r["per_phase_s"] < r["static_s"]
    slow = studies.rails(ports=2)
    assert slow["breakeven_reconfig_s"] == pytest.approx(even)
    ours = [p["ours"] for p in r["opus"]]
    assert ours == sorted(ours) and ours[0] == pytest.approx(1.0)


def test_straggler_matches_the_published_model(capsys):
    r = run_json(capsys, "straggler")
    # the published analytical model for 8 ranks: (2 * 7 / 8) / (9 / 7), 1.363 with alpha
    assert r["model_8"] == pytest.approx(1.75 / (9 / 7), rel=5e-3)  # alpha aside
    assert r["speedup_8"] == pytest.approx(r["model_8"], rel=1e-6)


def test_a_sweep_runs_on_dask_and_resumes(capsys, tmp_path):
    out = tmp_path / "sweep.parquet"
    argv = ["sweep", "--study", "rails", "--seeds", "1", "--drivers", "bench,parallel"]
    first = run_json(capsys, *argv, "--output", str(out), "--workers", "1")
    assert [row["driver"] for row in first["rows"]] == ["bench", "parallel"]
    parts = sorted(out.glob("part-*.parquet"))
    assert len(parts) == 2
    again = run_json(capsys, *argv, "--output", str(out), "--workers", "2")
    assert again["rows"] == first["rows"]  # nothing ran again
    assert sorted(out.glob("part-*.parquet")) == parts
    rows = pq.read_table(parts[0]).to_pylist()
    assert rows[0]["study"] == "rails"
