"""Shared hypothesis strategies and example objects for the tests."""

import numpy as np
from hypothesis import strategies as st
from scipy.stats import unitary_group

from photonics import Matching, Permutation
from photonics.calibration import Calibration, RingTuning

seeds = st.integers(0, 2**32 - 1)

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
#: Any value JSON holds exactly (floats finite).
json_values = st.recursive(
    _json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


def same_json(a, b) -> bool:
    """Equal with types and float bits: ``1 != 1.0``, ``True != 1``, ``-0.0 != 0.0``."""
    # repr of a float round-trips exactly and shows the sign of zero; json keeps key order
    return a == b and repr(a) == repr(b)


def haar_unitaries(n: int) -> st.SearchStrategy[np.ndarray]:
    return seeds.map(lambda s: unitary_group.rvs(n, random_state=s))


@st.composite
def permutations(draw: st.DrawFn, n: int, partial: bool = True) -> Permutation:
    targets = draw(st.permutations(range(n)))
    if partial:
        dark = draw(st.sets(st.integers(0, n - 1), max_size=n))
        return Permutation([None if i in dark else j for i, j in enumerate(targets)])
    return Permutation(list(targets))


@st.composite
def matchings(draw: st.DrawFn, n: int) -> Matching:
    order = draw(st.permutations(range(n)))
    k = draw(st.integers(0, n // 2))
    return Matching([(order[2 * i], order[2 * i + 1]) for i in range(k)], n)


#: The ``created`` time of the example calibrations.
CREATED = "2026-01-02T03:04:05.123456+00:00"


def small_calibration(**overrides) -> Calibration:
    """A 3-heater, 2-ring calibration with crosstalk; ``overrides`` replace its arguments."""
    kwargs = dict(
        chip_id="hex6-0042",
        p_pi_mW=[21.4, 22.8, 1.34],
        bias_rad=[0.0, 3.1, 6.2],
        a_ohm_per_mA2=[0.5, 0.45, 0.55],
        c_ohm=[500.0, 512.5, 488.25],
        created=CREATED,
        crosstalk=[[0.0, 0.11, 0.002], [0.1, 0.0, 0.025], [0.0, 0.03, 0.0]],
        rings=(RingTuning(1550.12, 0.0184, 1e-4), RingTuning(1551.0, 0.02)),
    )
    kwargs.update(overrides)
    return Calibration(**kwargs)
