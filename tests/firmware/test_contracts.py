"""The switch keeps its promises under generated lines, injected faults and restarts
(tests/firmware/contracts.py says which): a bounded run in every suite, a long one marked slow."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from tests.firmware.contracts import STEPS, ContractMachine

# the ci profile's 40 runs send about 3,200 lines; the slow test 300 runs, about 24,000
TestContracts = ContractMachine.TestCase
TestContracts.settings = settings(stateful_step_count=STEPS)


@pytest.mark.slow
def test_the_contracts_hold_over_tens_of_thousands_of_lines() -> None:
    run_state_machine_as_test(
        ContractMachine, settings=settings(max_examples=300, stateful_step_count=STEPS)
    )


def test_the_robustness_benchmark_counts_no_broken_promise() -> None:
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_robustness.py"
    quick = ["--json", "--quick"]
    out = subprocess.run(
        [sys.executable, str(script), *quick], capture_output=True, text=True, check=True
    )
    figures = json.loads(out.stdout)
    assert figures.pop("fuzz_lines") > 100 and figures.pop("idn_during_cal_run_s") > 0
    assert figures == dict.fromkeys(
        [
            "fuzz_escaped",
            "fuzz_state_changed_on_error",
            "limit_violations_during_measurement",
            "cross_client_errors",
            "sdk_injection_accepted",
        ],
        0,
    )
