"""benchmarks/bench_cli.py --quick: a user's first run measured through the real command."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_cli.py"


def test_the_quick_first_run_benchmark_prints_its_figures_and_finds_no_traceback() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout)
    assert set(figures) == {
        "help_s",
        "first_demo_compile_s",
        "bad_input_cases",
        "tracebacks",
        "longest_silence_s",
        "warm_s",
        "demo_calibrate_compute_s",
        "make_install_s",
        "make_test_s",
        "longest_test_silence_s",
        "stale_doc_figures",
    }
    assert figures["tracebacks"] == 0
    # the first bad command line of each subcommand and of the bare command
    assert figures["bad_input_cases"] >= 8
    # the warm-up into an empty cache leaves the demo nothing to compile
    assert figures["first_demo_compile_s"] == 0
    assert figures["help_s"] > 0 and figures["longest_silence_s"] > 0
    assert figures["demo_calibrate_compute_s"] > 0
    # the suite cannot run itself: no make test in the quick run
    assert figures["make_test_s"] is None and figures["longest_test_silence_s"] is None
    assert figures["stale_doc_figures"] == 0
    assert figures["warm_s"] is None  # the quick run demos on the installed cache
