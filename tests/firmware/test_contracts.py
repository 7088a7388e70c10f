"""The switch keeps its promises under generated lines, injected faults and restarts
(tests/firmware/contracts.py says which): a bounded run in every suite, a long one marked slow."""

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
