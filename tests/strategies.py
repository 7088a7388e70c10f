"""Shared hypothesis strategies for photonics objects."""

import numpy as np
from hypothesis import strategies as st
from scipy.stats import unitary_group

from photonics import Matching, Permutation

seeds = st.integers(0, 2**32 - 1)


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
