import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from photonics import InvalidInputError, Matching, MatchingError, Permutation, PortError
from tests.strategies import matchings, permutations


@given(st.integers(2, 24).flatmap(matchings))
def test_matching_round_trips_through_its_involution(m: Matching) -> None:
    perm = m.to_permutation()
    assert perm.is_involution()
    assert perm.to_matching() == m
    P = m.to_matrix()
    assert np.array_equal(P, P.T)
    assert P.sum() == 2 * len(m.pairs)


@given(st.integers(1, 24).flatmap(permutations))
def test_permutation_matrix_maps_each_input_to_its_target(p: Permutation) -> None:
    P = p.to_matrix()
    for i, j in enumerate(p.targets):
        expected = np.zeros(p.n_ports)
        if j is not None:
            expected[j] = 1
        assert np.array_equal(P[:, i], expected)
    full = p.completed()
    assert full.is_complete
    assert all(full.targets[i] == j for i, j in p.pairs())
    assert full.inverse().completed() == full.inverse()
    assert np.array_equal(full.inverse().to_matrix(), full.to_matrix().T)


def test_known_values() -> None:
    m = Matching([(3, 0), (1, 2)], 4)
    assert m.pairs == ((0, 3), (1, 2))
    assert m.partner(3) == 0
    assert m.is_perfect
    assert Permutation({0: 2}, n_ports=3).targets == (2, None, None)
    assert Permutation([1, 0, None]).to_matching() == Matching([(0, 1)], 3)


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: Permutation([0, 5, 1]), PortError, "5 is out of range"),
        (lambda: Permutation([1, 1, 0]), PortError, "output 1 is used twice"),
        (lambda: Permutation([-1, 0]), PortError, "-1 is out of range"),
        (lambda: Permutation(["a", 0]), PortError, "'a'"),
        (lambda: Permutation({0: 1}), PortError, "n_ports is required"),
        (lambda: Permutation([], 0), PortError, "n_ports must be a positive integer"),
        (lambda: Matching([(0, 0)], 2), MatchingError, "port 0 is paired with itself"),
        (lambda: Matching([(0, 1), (1, 2)], 3), PortError, "port 1 is in two pairs"),
        (lambda: Matching([(0, 4)], 4), PortError, "4 is out of range: ports are 0..3"),
        (lambda: Matching([(0, 1, 2)], 4), MatchingError, "a pair has two ports"),
        (lambda: Permutation([1, 2, 0]).to_matching(), MatchingError, "not an involution"),
        (lambda: Permutation([0, 1]).to_matching(), MatchingError, "paired with itself"),
        (lambda: Matching.random(4, np.random.default_rng(0), 3), MatchingError, "n_pairs=3"),
    ],
)
def test_invalid_input_is_named(make, error, words) -> None:
    with pytest.raises(error, match=words) as info:
        make()
    assert isinstance(info.value, InvalidInputError)
    assert isinstance(info.value, ValueError)


def test_random_is_reproducible_from_the_seed() -> None:
    a = Matching.random(16, np.random.default_rng(7))
    b = Matching.random(16, np.random.default_rng(7))
    assert a == b
    assert a.is_perfect
    p = Permutation.random(10, np.random.default_rng(3), n_connected=4)
    assert len(p.pairs()) == 4
