"""``pswitch collective``: its JSON's totals are the library's timing for the same arguments
on the switch it runs on (the built-in emulated one, one over a socket, or the heater write
model), its plot is a PNG, the comparison names the all-reduce that is fastest on the switch;
``sweep`` and ``training-step`` are the library's answers."""

from __future__ import annotations

import json

import pytest

from firmware.fabric import (
    HeaterWriteModel,
    HybridJob,
    Link,
    StepSettings,
    all_reduce_lines,
    all_to_all_crossover,
    circuit_timing,
    compile_collective,
    electrical_timing,
    halving_doubling_all_reduce,
    ring_all_reduce,
    straggler_all_reduce,
    straggler_sweep,
    training_step,
    with_straggler,
)
from firmware.sdk import Switch
from hil.emulator.bench import SwitchFirmware
from hil.emulator.server import TcpServer
from photonics.chips import topologies
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
    argv += ["--bandwidth-gbps", "200", "--alpha-us", "3", "--switch", "model"]
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
    assert r["reconfiguration_source"] == "the heater write model (bench driver)"
    row = next(x for x in r["all_reduce_compare"] if x["algorithm"] == name)
    assert row["optical_s"] == optical.total_s and row["electrical_s"] == electrical.total_s


def test_the_comparison_lists_every_all_reduce_and_names_the_fastest(capsys) -> None:
    r = run_json(capsys, "all-to-all-cover", "--ranks", "8", "--bytes", "1GiB")
    rows = {x["algorithm"]: x["optical_s"] for x in r["all_reduce_compare"]}
    assert set(rows) == {"ring-all-reduce", "halving-doubling", "straggler-all-reduce"}
    assert r["best_optical_all_reduce"] == min(rows, key=rows.__getitem__)
    assert r["kind"] == "all-to-all"


def test_every_step_carries_its_matching_and_bytes(capsys) -> None:
    r = run_json(capsys, "halving-doubling", "--ranks", "8", "--bytes", "8MiB", "--switch", "model")
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


def on_the_emulator(make, ranks: int, ports: int, n: float, mesh: str = "clements") -> float:
    """The total of ``make`` run through the SDK on an emulated switch (seed 0), cleared."""
    sw = Switch.emulated(ports=ports, mesh=mesh, seed=0)
    fabric = sw.transport.controller.fabric
    s = compile_collective(make(range(ranks), n), ports, fabric)
    sw.disconnect()
    return circuit_timing(s, LINK, sw.run_collective(s, LINK)).total_s


LINK = Link(bandwidth_Bps=400e9 / 8, alpha_s=5e-6)


def test_by_default_the_collective_runs_on_the_built_in_emulated_switch(capsys):
    r = run_json(capsys, "ring-all-reduce", "--ranks", "8", "--bytes", "1GiB")
    assert r["reconfiguration_source"].startswith(
        "switch EMU-CLEMENTS-8 (bench driver), its own times"
    )
    assert r["optical_total_s"] == on_the_emulator(ring_all_reduce, 8, 8, 2.0**30)
    # the firmware writes every heater whose current changes: more than the model's cells
    model = run_json(
        capsys, "ring-all-reduce", "--ranks", "8", "--bytes", "1GiB", "--switch", "model"
    )
    assert r["reconfigure_s"] > model["reconfigure_s"] > 0
    assert r["electrical_total_s"] == model["electrical_total_s"]


def test_a_switch_over_a_socket_gives_what_the_same_switch_gives_in_process(capsys):
    controller = Switch.emulated(ports=8, seed=0).transport.controller
    with TcpServer(SwitchFirmware(controller), name="switch") as server:
        remote = run_json(
            capsys,
            "halving-doubling",
            "--ranks",
            "8",
            "--bytes",
            "64MiB",
            "--switch",
            server.resource,
        )
    local = run_json(capsys, "halving-doubling", "--ranks", "8", "--bytes", "64MiB")
    assert remote["optical_total_s"] == local["optical_total_s"]
    assert [s["reconfigure_s"] for s in remote["steps"]] == [
        s["reconfigure_s"] for s in local["steps"]
    ]
    # the switch ran every all-reduce of the comparison, the straggler-aware one last
    last = compile_collective(straggler_all_reduce(range(8), 1.0), 8).steps[-1].matching
    assert controller.matching == last


def test_on_the_hexagonal_mesh_the_collective_runs_on_the_emulated_hexagonal_switch(capsys):
    # (the router splitting what the mesh cannot hold: tests/hil/test_collective_on_switch.py)
    argv = ["halving-doubling", "--ranks", "16", "--bytes", "1GiB"]
    r = run_json(capsys, *argv, "--mesh", "hexagonal")
    assert r["reconfiguration_source"].startswith("switch EMU-HEXAGONAL-16")
    want = on_the_emulator(halving_doubling_all_reduce, 16, 16, 2.0**30, "hexagonal")
    assert r["optical_total_s"] == pytest.approx(want, rel=1e-12)
    clements = run_json(capsys, *argv)
    assert r["optical_total_s"] != clements["optical_total_s"]  # another mesh, other heaters


def test_the_sweep_is_the_library_s_answers(capsys):
    r = run_json(capsys, "sweep", "--ranks", "8", "--bytes", "1GiB", "--switch", "model")
    assert [w["ranks"] for w in r["winners"]] == [4, 8]
    assert [row["bytes"] for row in r["winners"][0]["sizes"]] == [
        2.0**10,
        2.0**15,
        2.0**20,
        2.0**25,
        2.0**30,
    ]
    for w in r["winners"]:
        p = w["ranks"]
        fabric = topologies.topology("clements").fabric(p)
        lines = all_reduce_lines(p, fabric, LINK, lambda _: HeaterWriteModel())
        for row in w["sizes"]:
            n = row["bytes"]
            assert row["optical_s"] == {k: v.at(n) for k, v in lines.optical.items()}
            assert row["best_optical"] == lines.best(n)[0]
            assert row["static_ring_s"] == lines.static_ring.at(n)
        cross = all_to_all_crossover(p, fabric, LINK, lambda _: HeaterWriteModel())
        assert w["all_to_all_cover_beats_static_ring_above_bytes"] == cross.crossover_bytes
        # all-reduce: the same bytes a port either way, so size never makes reconfiguring pay
        assert w["all_reduce_reconfiguring_beats_static_ring_above_bytes"] is None
    ring = electrical_timing(ring_all_reduce(range(8), 2.0**30), LINK).total_s
    delays = sorted({x["delay_s"] for x in r["straggler"]})
    assert delays == pytest.approx([f * ring for f in (0.0, 0.03, 0.1, 0.3, 1.0, 3.0)])
    want = straggler_sweep([4, 8], delays, 2.0**30, LINK)
    assert [x["model_speedup"] for x in r["straggler"]] == [x.model_speedup for x in want]


def test_the_sweep_plot_and_text(tmp_path, capsys):
    path = tmp_path / "sweep.png"
    argv = ["collective", "sweep", "--ranks", "4", "--bytes", "1MiB", "--switch", "model"]
    assert main([*argv, "--plot", str(path)]) == 0
    out = capsys.readouterr().out
    assert "beats the static ring: all-reduce above never" in out and "straggler" in out
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_training_step_is_the_library_s_on_the_switch(capsys, tmp_path):
    argv = [
        "training-step",
        "--dp",
        "2",
        "--tp",
        "2",
        "--pp",
        "2",
        "--tp-bytes",
        "1MiB",
        "--dp-bytes",
        "64MiB",
        "--pp-bytes",
        "4MiB",
        "--forward-ms",
        "10",
        "--backward-ms",
        "20",
        "--switch",
        "model",
        "--plot",
        str(tmp_path / "step.png"),
    ]
    r = run_json(capsys, *argv)
    c = training_step(
        HybridJob(2, 2, 2, tuple(range(8))), StepSettings(0.01, 0.02, 2.0**20, 2.0**26, 2.0**22)
    )
    s = compile_collective(c, 8, topologies.topology("clements").fabric(8))
    assert r["optical_total_s"] == circuit_timing(s, LINK, HeaterWriteModel()).total_s
    assert r["electrical_total_s"] == electrical_timing(c, LINK).total_s
    assert [p["phase"] for p in r["phases"]] == ["tp", "pp", "dp"]
    assert [p["matchings"] for p in r["phases"]] == [1, 1, 1]  # one matching a phase
    assert sum(p["optical_s"] for p in r["phases"]) == pytest.approx(r["optical_total_s"])
    assert [p["compute_s"] for p in r["phases"]] == [0.01, 0.0, 0.02]
    assert (tmp_path / "step.png").read_bytes()[:4] == b"\x89PNG"


def test_the_driver_class_times_the_reconfigurations(capsys) -> None:
    """Same collective, same chip: only the electronics differ, so the transfers stay and the
    reconfigurations order as the classes do; the emulator and the model name the class."""
    argv = ["halving-doubling", "--ranks", "8", "--bytes", "64MiB"]
    totals = {}
    for name in ("product", "bench", "parallel", "integrated"):
        r = run_json(capsys, *argv, "--driver", name)
        assert f"({name} driver)" in r["reconfiguration_source"]
        model = run_json(capsys, *argv, "--driver", name, "--switch", "model")
        assert model["reconfiguration_source"] == f"the heater write model ({name} driver)"
        totals[name] = r["optical_total_s"]
        assert r["electrical_total_s"] == model["electrical_total_s"]
    assert list(totals.values()) == sorted(totals.values(), reverse=True)
    assert totals["parallel"] < 1.2 * r["electrical_total_s"] < totals["bench"] / 2
