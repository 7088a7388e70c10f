"""``pswitch route``, ``schedule``, ``calibrate`` and ``bench`` through the real entry point (a
subprocess), and the route's settings checked as a property in process (``pswitch.cli.main``)."""

import contextlib
import io
import json
import shutil
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.calibration_file import load_calibration
from photonics import ClementsMesh
from photonics.feedforward.meshes import MeshSettings
from pswitch.cli import main

PSWITCH = shutil.which("pswitch", path=str(Path(sys.executable).parent))
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    assert PSWITCH is not None, "the pswitch console script is not installed"
    return subprocess.run([PSWITCH, *args], capture_output=True, text=True, timeout=timeout)


def ok_json(*args: str) -> dict:
    done = run(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_refused(done: subprocess.CompletedProcess[str], words: str, code: int = 2) -> None:
    assert done.returncode == code, done.stdout + done.stderr
    assert words in done.stderr
    assert "Traceback" not in done.stderr


# ---- route ---------------------------------------------------------------------------------


def test_route_gives_settings_that_realise_the_matching_and_its_predicted_powers() -> None:
    r = ok_json("route", "0-5", "1-3", "2-4", "--ports", "8")
    assert r["mesh"] == "clements" and r["ports"] == 8 and len(r["cells"]) == 28
    assert {c["state"] for c in r["cells"]} == {"bar", "cross"}
    settings = MeshSettings(
        np.array([c["theta_rad"] for c in r["cells"]]),
        np.array([c["phi_rad"] for c in r["cells"]]),
        np.array(r["output_phase_rad"]),
    )
    P = np.abs(ClementsMesh(8).transfer(settings)) ** 2
    circuits = {(c["source"], c["target"]): c for c in r["circuits"]}
    assert set(circuits) == {(0, 5), (5, 0), (1, 3), (3, 1), (2, 4), (4, 2)}
    for (src, dst), c in circuits.items():
        assert P[dst, src] > 0.999  # the ideal mesh with these settings joins them
        # 0.5 dB per cell crossed at the typical figures, and 35 dB extinction leaks
        assert abs(c["loss_db"] - 0.5 * len(c["cells"])) < 0.1
        assert 30 <= c["isolation_db"] <= 36
        assert c["loss_db"] == pytest.approx(-r["powers_db"][dst][src])
    assert r["powers_db"][0][6] is None  # input 6 is dark
    assert r["worst_isolation_db"] == min(c["isolation_db"] for c in r["circuits"])


def test_route_shows_dark_outputs_and_no_isolation_where_nothing_else_is_lit() -> None:
    """One pair on a recirculating mesh: no other input is lit, so nothing can leak and the
    isolation is n/a (null), not a ratio to the model's floor; outputs no light reaches are
    dark (null), not -300 dBm."""
    r = ok_json("route", "0-1", "--mesh", "hexagonal", "--ports", "5")
    assert [c["isolation_db"] for c in r["circuits"]] == [None, None]
    assert r["worst_isolation_db"] is None and r["isolation_note"] == "no other input is lit"
    assert r["lit"] == [0, 1]
    lit_columns = [row[i] for row in r["powers_db"] for i in r["lit"]]
    assert None in lit_columns  # an output the light never reaches
    assert all(v is None or v > -160 for v in lit_columns)
    done = run("route", "0-1", "--mesh", "hexagonal", "--ports", "5")
    assert done.returncode == 0, done.stderr
    assert "-300" not in done.stdout and " dark" in done.stdout
    assert "worst isolation n/a (no other input is lit" in done.stdout
    rows = [line.split() for line in done.stdout.splitlines() if "->" in line]
    assert [row[4] for row in rows] == ["n/a", "n/a"]


def test_route_json_has_no_floored_dbm_on_a_feed_forward_mesh() -> None:
    r = ok_json("route", "0-5", "1-3", "--ports", "8")
    assert all(c["isolation_db"] is not None for c in r["circuits"])
    assert r["isolation_note"] is None
    assert all(v is None or v > -160 for row in r["powers_db"] for v in row)


def test_route_text_shows_the_cell_grid_circuits_and_power_matrix() -> None:
    done = run("route", "--perm", "3,0,-,1")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "clements switch, 4 ports, 6 cells" in out
    assert "modes   0-1" in out and "X" in out
    assert "0 -> 3" in out and "1 -> 0" in out and "3 -> 1" in out and "2 ->" not in out
    assert "power matrix" in out


@given(n=st.sampled_from([4, 6, 8, 10]), data=st.data())
def test_route_settings_realise_any_perfect_matching(n: int, data) -> None:
    order = data.draw(st.permutations(range(n)))
    pairs = [f"{order[i]}-{order[i + 1]}" for i in range(0, n, 2)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["route", *pairs, "--ports", str(n), "--json"]) == 0
    r = json.loads(out.getvalue())
    settings = MeshSettings(
        np.array([c["theta_rad"] for c in r["cells"]]),
        np.array([c["phi_rad"] for c in r["cells"]]),
        np.array(r["output_phase_rad"]),
    )
    P = np.abs(ClementsMesh(n).transfer(settings)) ** 2
    assert len(r["circuits"]) == n
    for c in r["circuits"]:
        assert P[c["target"], c["source"]] > 0.999
        assert c["isolation_db"] >= 25


def test_route_on_recirculating_meshes_reports_paths_and_isolation() -> None:
    hexagonal = ok_json("route", "0-9", "3-12", "--mesh", "hexagonal", "--ports", "16")
    assert len(hexagonal["circuits"]) == 4
    for c in hexagonal["circuits"]:
        assert len(c["cells"]) >= 3 and c["isolation_db"] >= 25
        assert 0.5 * len(c["cells"]) <= c["loss_db"] <= 0.5 * len(c["cells"]) + 3  # + waveguide
    assert len(hexagonal["edge_ports_in"]) == 16
    six = ok_json("route", "--perm", "5,4,3,2,1,0", "--mesh", "switch6x6")
    assert len(six["cells"]) == 71 and len(six["circuits"]) == 6
    assert {(c["source"], c["target"]) for c in six["circuits"]} == {(i, 5 - i) for i in range(6)}
    assert six["worst_isolation_db"] >= 25  # every 6x6 permutation is, at the typical figures


# ---- schedule ------------------------------------------------------------------------------


def test_schedule_all_to_all_joins_every_pair_once_and_times_each_step() -> None:
    r = ok_json("schedule", "all-to-all", "--ports", "8", "--dwell-ms", "5")
    steps = r["steps"]
    assert len(steps) == 7
    joined = sorted(tuple(p) for s in steps for p in s["pairs"])
    assert joined == list(combinations(range(8), 2))  # every pair exactly once
    assert all(len(s["pairs"]) == 4 and s["reconfigure_s"] > 0 for s in steps)
    assert r["period_s"] == pytest.approx(7 * 5e-3 + sum(s["reconfigure_s"] for s in steps))
    assert r["duty_cycle"] == pytest.approx(7 * 5e-3 / r["period_s"])


def test_schedule_of_a_torus_job_carries_every_neighbour_and_no_spare() -> None:
    r = ok_json("schedule", "torus", "--ports", "16", "--spares", "3,7,11,15")
    assert r["job"]["shape"] == [3, 4] and r["job"]["spares"] == [3, 7, 11, 15]
    ends = r["job"]["endpoints"]
    grid = [ends[i * 4 : (i + 1) * 4] for i in range(3)]
    want = {frozenset((g[c], g[(c + 1) % 4])) for g in grid for c in range(4)}
    want |= {frozenset((grid[i][c], grid[(i + 1) % 3][c])) for i in range(3) for c in range(4)}
    got = {frozenset(p) for s in r["steps"] for p in s["pairs"]}
    assert got == want
    assert not {3, 7, 11, 15} & {p for pair in got for p in pair}
    assert 0 < r["duty_cycle"] < 1


def test_schedule_text_reports_the_duty_cycle_on_a_hexagonal_switch() -> None:
    done = run("schedule", "ring", "--ports", "8", "--endpoints", "0,2,4,6", "--mesh", "hexagonal")
    assert done.returncode == 0, done.stderr
    assert "ring on an emulated 8-port hexagonal switch" in done.stdout
    assert "0-2 4-6" in done.stdout and "duty cycle" in done.stdout


# ---- calibrate -----------------------------------------------------------------------------


@pytest.fixture
def served_bench(tmp_path):
    """``pswitch serve`` of a 4-port bench in another process; its configuration file."""
    config = tmp_path / "bench.json"
    proc = subprocess.Popen(
        [PSWITCH, "serve", "--ports", "4", "--seed", "1", "--config", str(config)],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not config.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
        time.sleep(0.05)
    yield config, proc
    proc.terminate()
    proc.wait(timeout=30)


# a whole bench calibration over VISA in simulated time: minutes since the bench runs in time
@pytest.mark.slow
def test_calibrate_a_served_bench_over_visa_writes_a_calibration_that_routes(
    served_bench, tmp_path
) -> None:
    config, proc = served_bench
    out = tmp_path / "cal.json"
    r = ok_json("calibrate", "--bench", str(config), "-o", str(out))
    assert r["mzis"] == 6 and r["phase_fitted"] == 6
    assert load_calibration(out).chip_id == r["bench"]["chip_id"]
    assert r["rings_locked"] == [True] * 4
    assert len(r["matchings"]) == 3  # the all-to-all cover of 4 ports, measured on the meter
    assert r["worst_isolation_db"] >= 25 and r["verified"]
    assert 15 < r["p_pi_mW"][1] < 30  # the emulated heaters' median P_pi
    # the instruments gone: a bench failure (exit 1) naming the instrument, not a traceback
    proc.terminate()
    proc.wait(timeout=30)
    done = run("calibrate", "--bench", str(config), "-o", str(tmp_path / "again.json"))
    assert_refused(done, "TCPIP", code=1)
    assert not (tmp_path / "again.json").exists()


# ---- bench ---------------------------------------------------------------------------------


def test_bench_lists_every_benchmark_script_with_what_it_measures() -> None:
    done = run("bench", "--list")
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == sorted(p.stem.removeprefix("bench_") for p in BENCHMARKS.glob("bench_*.py"))
    assert "router" in names and "Router benchmark" in done.stdout


def test_bench_runs_a_benchmark_and_gathers_its_figures_as_json() -> None:
    r = ok_json("bench", "programming", "--args=--ports 4 --trials 1")
    figures = r["programming"]
    assert figures["ports"] == 4
    lossless = figures["loss_0.0_db"]
    assert lossless["infidelity_refined"] <= lossless["infidelity_naive"]


def test_bench_passes_on_the_exit_code_of_a_benchmark_that_refuses_its_options() -> None:
    assert_refused(run("bench", "programming", "--args=--bogus"), "programming failed (exit 2)")


# ---- every subcommand ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", ["demo", "route", "schedule", "serve", "calibrate", "layout", "bench"]
)
def test_every_subcommand_has_help_with_examples(command: str) -> None:
    done = run(command, "--help")
    assert done.returncode == 0, done.stderr
    assert "examples:" in done.stdout and f"pswitch {command}" in done.stdout


def test_route_predicts_isolation_over_a_band() -> None:
    r = ok_json("route", "0-5", "1-3", "2-4", "6-7", "--band", "1530:1565:8")
    assert r["band_nm"] == pytest.approx(np.linspace(1530, 1565, 8).tolist())
    for c in r["circuits"]:
        # the band contains no better wavelength than the design one, where cells are ideal
        assert c["band_isolation_db"] <= c["isolation_db"] + 1e-9
        assert c["band_loss_db"] >= c["loss_db"] - 1e-9
    assert r["band_worst_isolation_db"] == min(c["band_isolation_db"] for c in r["circuits"])
    assert r["band_worst_isolation_db"] < r["worst_isolation_db"] - 3  # couplers drift off 50:50
    # a band of the design wavelength alone is the single-wavelength prediction
    one = ok_json("route", "0-5", "1-3", "--band", "1550:1550:1")
    assert one["band_worst_isolation_db"] == pytest.approx(one["worst_isolation_db"], abs=1e-6)
    hexagonal = ok_json(
        "route", "0-9", "3-12", "--mesh", "hexagonal", "--ports", "16", "--band", "1530:1565:3"
    )
    assert hexagonal["band_worst_isolation_db"] <= hexagonal["worst_isolation_db"] + 1e-9
