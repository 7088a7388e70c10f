"""Every benchmark of ``benchmarks/`` runs in its ``--quick`` mode and prints one JSON object of
its figures: a benchmark that crashes, or whose own checks fail, fails the suite. (``bench_cli``
and ``bench_robustness`` have tests of their own, which also check their figures.)"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
OWN_TESTS = {"cli", "robustness"}
SCRIPTS = sorted(
    p for p in BENCHMARKS.glob("bench_*.py") if p.stem.removeprefix("bench_") not in OWN_TESTS
)
#: Figures a quick run must report, by benchmark (the rest: a non-empty object).
KEYS = {
    "failover": {"failover_compute_s", "disturbed_circuits", "failover"},
    "hil": {"session_query_s", "bench_calibration_s_4", "client_checks_passed"},
    "router": {"hex_selfcal_s_32", "all_to_all_cover_size", "perms_6x6_routed"},
    "programming": {"loss_0.0_db", "loss_0.5_db"},
    "seeds": {"reconfig_s_parallel_32", "failover_throughput_ratio", "verified_configs"},
    "yield": {"chips_per_s_per_core"},
}


def test_every_benchmark_is_run_here_or_by_its_own_test() -> None:
    names = {p.stem.removeprefix("bench_") for p in BENCHMARKS.glob("bench_*.py")}
    assert names == {p.stem.removeprefix("bench_") for p in SCRIPTS} | OWN_TESTS


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_the_quick_run_of_a_benchmark_prints_its_figures(script: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout)
    assert isinstance(figures, dict) and figures
    assert KEYS.get(script.stem.removeprefix("bench_"), set()) <= set(figures)
