"""The ``pswitch`` command through its real entry point, in a subprocess."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from photonics.errors import SettingsError
from pswitch.demo import DemoSettings

PSWITCH = shutil.which("pswitch", path=str(Path(sys.executable).parent))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    assert PSWITCH is not None, "the pswitch console script is not installed"
    return subprocess.run([PSWITCH, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("mesh", "cells"), [("clements", 28), ("hexagonal", 63)])
def test_demo_json_reports_every_step_verified_and_writes_the_plots(tmp_path, mesh, cells) -> None:
    args = ("--mesh", mesh, "--ports", "8", "--seed", "3", "--json", "--plots", str(tmp_path))
    done = run("demo", *args)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert r["mesh"] == mesh and r["ports"] == 8 and r["mzis"] == cells and r["calibrated"]
    steps = {s["step"]: s for s in r["timeline"]}
    assert list(steps) == ["calibrate", "all-to-all", "training step", "failover"]
    c = r["calibration"]
    assert c["through_detectors"] and steps["calibrate"]["modeled_s"] > 0
    if mesh == "hexagonal":  # self-calibrated cell by cell; the few it cannot fit are dead
        assert c["chip_id"] == "EMU-HEXAGONAL-8" and 0 <= c["dead_cells"] <= cells // 6
    a = r["all_to_all"]
    assert a["matchings"] == 7 and a["verified"] == 7  # 1-factorization of 8, all measured
    assert a["unverified_circuits"] == []
    assert a["worst_isolation_db"] >= 20 and a["worst_loss_error_db"] <= 1
    t = r["training_step"]
    assert t["accelerators"] == 6 and t["phases"] >= 2 and 0 < t["duty_cycle"] < 1
    f = r["failover"]
    assert f["spare"] in t["spares"] and f["failed_port"] not in f["job_endpoints_after"]
    assert f["new_circuits_verified"] and f["untouched_verified"]
    assert f["untouched_circuits"] >= 1 and f["untouched_max_change_db"] <= 0.1
    assert all(steps[s]["compute_s"] > 0 for s in steps)
    assert all(steps[s]["modeled_s"] > 0 for s in ("all-to-all", "training step", "failover"))
    assert r["ring_lock"]["locked"]
    assert sorted(r["plots"]) == ["mesh", "powers", "ring", "timeline"]
    for path in r["plots"].values():
        png = Path(path).read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 5000


def test_demo_text_names_the_hexagonal_mesh_and_its_self_calibration() -> None:
    done = run("demo", "--mesh", "hexagonal", "--ports", "8", "--seed", "3", "--no-plots")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Emulated 8-port switch (hexagonal mesh, 63 cells, seed 3)"
    assert lines[1].startswith("1. calibrated through the detectors: True (")
    assert "cells dead, left out by the router)" in lines[1]
    assert "7 matchings applied, 7 verified by measured powers" in done.stdout


def test_demo_settings_refuse_an_unknown_mesh_naming_the_allowed_ones() -> None:
    with pytest.raises(
        SettingsError, match="mesh must be one of clements, reck, hexagonal, switch32; got 'torus'"
    ):
        DemoSettings(mesh="torus")


def test_demo_text_names_what_it_shows() -> None:
    done = run("demo", "--ports", "4", "--no-plots")
    assert done.returncode == 0, done.stderr
    for words in (
        "calibrated through the detectors",
        "verified by measured powers",
        "duty cycle",
        "spliced",
        "published failover",
    ):
        assert words in done.stdout


def test_help_has_examples() -> None:
    done = run("demo", "--help")
    assert done.returncode == 0
    assert "pswitch demo --ports 32" in done.stdout
    assert "pswitch demo --mesh hexagonal" in done.stdout
    assert "--mesh {clements,reck,hexagonal,switch32}" in done.stdout


def test_version_and_python_dash_m_reach_the_same_command() -> None:
    from importlib.metadata import version

    done = run("--version")
    assert done.returncode == 0 and done.stdout == f"pswitch {version('pswitch-photonics')}\n"
    module = subprocess.run(
        [sys.executable, "-m", "pswitch", "--help"], capture_output=True, text=True, timeout=60
    )
    assert module.returncode == 0, module.stderr
    assert module.stdout == run("--help").stdout
    assert "layout" in module.stdout and "demo" in module.stdout


def test_a_topology_registered_once_is_a_choice_of_every_command() -> None:
    import argparse

    from photonics.chips import topologies
    from photonics.feedforward.meshes import ReckMesh
    from pswitch.cli import build_parser

    topologies.register(topologies.feedforward("toy", "a toy mesh", ReckMesh))
    try:
        sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
        for command in ("route", "schedule", "demo", "layout"):
            mesh = next(a for a in sub.choices[command]._actions if a.dest == "mesh")
            assert "toy" in mesh.choices, command
    finally:
        topologies.unregister("toy")
