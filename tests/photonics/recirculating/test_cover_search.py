import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from photonics import Matching, PortError, SettingsError
from photonics.recirculating.cover_search import (
    Scorer,
    all_matchings,
    alternating_cycles,
    exact_cover,
    search_factorisation,
    starting_factorisation,
    swap,
)
from photonics.recirculating.covers import all_to_all_cover, round_robin
from photonics.recirculating.routing import Router
from photonics.recirculating.switch_geometry import hexagonal_switch


def is_factorisation(rounds, n: int) -> bool:
    pairs = [tuple(sorted(p)) for m in rounds for p in m]
    perfect = all(sorted(x for p in m for x in p) == list(range(n)) for m in rounds)
    return (
        perfect
        and len(rounds) == n - 1
        and sorted(pairs) == list(itertools.combinations(range(n), 2))
    )


@given(st.sampled_from([4, 6, 8, 10, 16, 32]), st.integers(0, 50))
def test_every_starting_point_is_a_one_factorisation(n, restart) -> None:
    assert is_factorisation(starting_factorisation(n, restart), n)


@given(st.sampled_from([8, 16, 32]), st.integers(0, 20), st.data())
def test_a_swap_along_an_alternating_cycle_keeps_a_one_factorisation(n, restart, data) -> None:
    rounds = starting_factorisation(n, restart)
    i, j = data.draw(st.lists(st.integers(0, n - 2), min_size=2, max_size=2, unique=True))
    cycles = alternating_cycles(rounds[i], rounds[j])
    assert sum(len(c) for c in cycles) == n // 2  # every pair of rounds[i] on one cycle
    cycle = data.draw(st.sampled_from(cycles))
    rounds[i], rounds[j] = swap(rounds[i], rounds[j], cycle)
    assert is_factorisation(rounds, n)


def test_the_circle_method_at_32_is_perfect_so_the_search_starts_elsewhere() -> None:
    # 31 is prime: any two circle-method rounds form one cycle through all 32 endpoints, which
    # leaves the search no move; the xor factorisation's two rounds form eight cycles of four
    circle = [tuple(sorted(tuple(sorted(p)) for p in m.pairs)) for m in round_robin(32)]
    assert all(len(alternating_cycles(a, b)) == 1 for a, b in itertools.combinations(circle, 2))
    start = starting_factorisation(32, 0)
    assert {len(alternating_cycles(start[0], b)) for b in start[1:]} == {8}


SWITCH = hexagonal_switch(8)


def test_the_search_never_ends_worse_than_it_starts_and_returns_a_factorisation() -> None:
    mesh, ends = SWITCH
    router = Router(mesh, isolation_target_db=40.0)
    start = Scorer(router, ends)
    first = min(start(m) for m in starting_factorisation(8, 0))
    found = search_factorisation(router, ends, restarts=2, max_routes=120)
    rounds = [m.pairs for m in found.cover.matchings]
    assert is_factorisation(rounds, 8)
    assert found.worst_db >= first
    assert found.scores == tuple(r.isolation_db for r in found.cover.results)
    cover = all_to_all_cover(router, ends, rounds=found.cover.matchings)
    assert cover.size == 7 and all(r.ok for r in cover.results)


def test_exact_cover_finds_the_best_one_factorisation_of_six_endpoints() -> None:
    mesh, ends = hexagonal_switch(6)
    scorer = Scorer(Router(mesh, isolation_target_db=40.0), ends)
    perfect = all_matchings(6, perfect=True)
    assert len(perfect) == 15 and len(all_matchings(6)) == 75
    scores = {m: scorer(m) for m in all_matchings(6)}
    # brute force: the factorisations are the 5-sets of perfect matchings covering all pairs
    best = max(
        min(scores[m] for m in five)
        for five in itertools.combinations(perfect, 5)
        if len({p for m in five for p in m}) == 15
    )
    exact = exact_cover(scores, 6, best)
    assert exact.matchings is not None and len(exact.matchings) == 5
    assert min(exact.scores) >= best
    higher = exact_cover(scores, 6, np.nextafter(best, np.inf))
    assert higher.matchings is None or len(higher.matchings) > 5


def test_a_searched_factorisation_and_a_rescue_build_a_cover() -> None:
    mesh, ends = SWITCH
    router = Router(mesh, isolation_target_db=40.0)
    rounds = [Matching(m, 8) for m in starting_factorisation(8, 0)]
    asked = 80.0  # no matching is predicted there
    kept = all_to_all_cover(router, ends, isolation_db=asked, rounds=rounds, rescue=lambda r: True)
    assert [m.pairs for m in kept.matchings] == [m.pairs for m in rounds]
    dropped = all_to_all_cover(router, ends, isolation_db=asked, rounds=rounds)
    assert dropped.size > 7


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: search_factorisation(Router(SWITCH[0]), SWITCH[1][:5]), "even number"),
        (lambda: search_factorisation(Router(SWITCH[0]), SWITCH[1], restarts=0), "restarts"),
        (lambda: all_matchings(14), "2..12"),
        (
            lambda: all_to_all_cover(Router(SWITCH[0]), SWITCH[1], rounds=round_robin(8)[:3]),
            "7 perfect matchings",
        ),
    ],
)
def test_bad_searches_are_refused(call, words) -> None:
    with pytest.raises((PortError, SettingsError), match=words):
        call()
