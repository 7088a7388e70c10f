"""The self-calibration's shared sizing: how many heaters an I-V sweep drives at once."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from photonics.calibration.selfcal import IV_MARGIN, iv_group


@given(
    alone=st.lists(st.floats(0.1, 500.0), min_size=1, max_size=300),
    budget=st.floats(1.0, 1e5),
)
def test_an_iv_sweep_drives_as_many_heaters_as_fit_the_budget_at_least_one(alone, budget):
    group = iv_group(np.array(alone), budget)
    assert 1 <= group <= len(alone)
    if group > 1:  # that many heaters at the largest single draw stay inside the margin
        assert group * max(alone) <= IV_MARGIN * budget
    if group < len(alone):  # and one more would not
        assert (group + 1) * max(alone) > IV_MARGIN * budget
