"""The ``pswitch`` command through its real entry point, in a subprocess."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PSWITCH = shutil.which("pswitch", path=str(Path(sys.executable).parent))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    assert PSWITCH is not None, "the pswitch console script is not installed"
    return subprocess.run([PSWITCH, *args], capture_output=True, text=True, timeout=300)


def test_demo_json_reports_a_routed_matching_and_a_programmed_unitary() -> None:
    done = run("demo", "--ports", "8", "--seed", "3", "--json")
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert r["ports"] == 8 and r["mzis"] == 28
    assert len(r["outputs"]) == 8
    pairs = {tuple(p) for p in r["matching"]}
    for o in r["outputs"]:
        a, b = sorted((o["output"], o["from_input"]))
        assert (a, b) in pairs
        # at most 8 MZIs of 0.5 dB each on a path, and no gain
        assert -4.5 <= o["power_dbm"] <= 0
    assert r["worst_crosstalk_db"] < -15
    assert 0.9 < r["unitary_fidelity_naive"] <= r["unitary_fidelity_programmed"] <= 1


def test_demo_text_names_what_it_shows() -> None:
    done = run("demo", "--ports", "4")
    assert done.returncode == 0, done.stderr
    assert "worst crosstalk" in done.stdout
    assert "imperfection-aware program" in done.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["demo", "--ports", "1"], "--ports: needs an integer >= 2, got 1"),
        (["demo", "--splitter-sigma", "-1"], "splitter_sigma must be >= 0"),
        (["demo", "--loss-db", "-2"], "loss_bar_db must be >= 0 dB"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_input_exits_non_zero_with_a_message_and_no_traceback(args, words) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert words in done.stderr
    assert "Traceback" not in done.stderr


def test_help_has_examples() -> None:
    done = run("demo", "--help")
    assert done.returncode == 0
    assert "pswitch demo --ports 32" in done.stdout
