"""``pswitch collective``: its JSON's totals are the library's timing for the same arguments,
its plot is a PNG, and the comparison names the all-reduce that is fastest on the switch."""

from __future__ import annotations

import json

import pytest

from firmware.fabric import (
    HeaterWriteModel,
    Link,
    circuit_timing,
    compile_collective,
    electrical_timing,
    halving_doubling_all_reduce,
    ring_all_reduce,
    straggler_all_reduce,
    with_straggler,
)
from photonics import topologies
from pswitch.cli import main


def run_json(capsys, *argv: str) -> dict:
    assert main(["collective", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("name", "make", "ranks", "ports", "straggler_ms"),
    [
        ("ring-all-reduce", ring_all_reduce, 8, 8, None),
        ("halving-doubling", halving_doubling_all_reduce, 6, 8, None),
        ("straggler-all-reduce", straggler_all_reduce, 8, 8, 20.0),
    ],
)
def test_the_totals_are_the_library_s_timing(capsys, name, make, ranks, ports, straggler_ms):
    argv = [name, "--ranks", str(ranks), "--ports", str(ports), "--bytes", "64MiB"]
    argv += ["--bandwidth-gbps", "200", "--alpha-us", "3"]
    if straggler_ms is not None:
        argv += ["--straggler-ms", str(straggler_ms)]
    r = run_json(capsys, *argv)
    link = Link(bandwidth_Bps=200e9 / 8, alpha_s=3e-6)
    delay = (straggler_ms or 0.0) * 1e-3
    c = make(range(ranks), 64 * 2.0**20)
    fabric = topologies.topology("clements").fabric(ports)
    schedule = compile_collective(c, ports, fabric)
    optical = with_straggler(circuit_timing(schedule, link, HeaterWriteModel()), delay)
    electrical = with_straggler(electrical_timing(c, link), delay)
    assert r["optical_total_s"] == optical.total_s
    assert r["electrical_total_s"] == electrical.total_s
    assert r["reconfigure_s"] == optical.reconfigure_s
    assert len(r["steps"]) == len(schedule.steps)
    assert [s["end_s"] for s in r["steps"]] == [t.end_s for t in optical.steps]
    transfer = sum(t.end_s - t.start_s - t.reconfigure_s for t in optical.steps)
    assert r["duty_cycle"] == pytest.approx(transfer / optical.total_s)
    row = next(x for x in r["all_reduce_compare"] if x["algorithm"] == name)
    assert row["optical_s"] == optical.total_s and row["electrical_s"] == electrical.total_s


def test_the_comparison_lists_every_all_reduce_and_names_the_fastest(capsys) -> None:
    r = run_json(capsys, "all-to-all-cover", "--ranks", "8", "--bytes", "1GiB")
    rows = {x["algorithm"]: x["optical_s"] for x in r["all_reduce_compare"]}
    assert set(rows) == {"ring-all-reduce", "halving-doubling", "straggler-all-reduce"}
    assert r["best_optical_all_reduce"] == min(rows, key=rows.__getitem__)
    assert r["kind"] == "all-to-all"


def test_every_step_carries_its_matching_and_bytes(capsys) -> None:
    r = run_json(capsys, "halving-doubling", "--ranks", "8", "--bytes", "8MiB")
    # halving/doubling: 6 rounds, each a perfect matching; n/2, n/4, n/8, then back
    mib = 2.0**20
    loads = [s["bytes_per_circuit"] for s in r["steps"]]
    assert loads == [4 * mib, 2 * mib, mib, mib, 2 * mib, 4 * mib]
    assert all(len(s["pairs"]) == 4 for s in r["steps"])
    # the last halving and the first doubling share a matching: no reconfiguration between
    assert r["steps"][3]["reconfigure_s"] == 0 and r["reconfigurations"] == 5


def test_the_text_output_shows_steps_totals_and_comparison(capsys) -> None:
    assert main(["collective", "ring-all-reduce", "--ranks", "4", "--bytes", "1MB"]) == 0
    out = capsys.readouterr().out
    assert "ideal electrical" in out and "duty cycle" in out
    assert "halving-doubling" in out and "fastest on the optical switch" in out


def test_the_plot_is_a_png(tmp_path, capsys) -> None:
    path = tmp_path / "gantt.png"
    argv = ["straggler-all-reduce", "--ranks", "6", "--bytes", "16MiB", "--straggler-ms", "5"]
    r = run_json(capsys, *argv, "--plot", str(path))
    assert r["plot"] == str(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
