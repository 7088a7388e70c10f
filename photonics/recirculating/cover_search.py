"""Searching all-to-all covers for isolation: among the 1-factorisations of the complete graph on a
switch's endpoints (``n - 1`` perfect matchings that together join every pair once, the fewest
possible), the one whose worst matching isolates best.

Heuristic at 32 endpoints (:func:`search_factorisation`): local search from the circle method's
factorisations, each move swapping the pairs of two matchings along one alternating cycle of
their union (both stay perfect matchings and the pairs stay covered once), accepted when the
two new matchings both beat the worse of the old ones; restarts from relabelings. Exact on small
switches (:func:`exact_cover`): every matching of the endpoints routed, then a 0/1 program
(scipy's HiGHS MILP) for the fewest matchings at a required isolation covering every pair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from photonics.errors import PortError, SettingsError
from photonics.matching import Matching
from photonics.progress import Progress
from photonics.recirculating.covers import Cover, round_robin
from photonics.recirculating.routing import Router, RouteResult, requests_for

Pairs = tuple[tuple[int, int], ...]

#: The search's objective is the sum over matchings of ``exp(-score / SOFTNESS_DB)``: the worst
#: matchings weigh most, and a move that lifts a nearly-worst one without lowering the worst
#: counts, which lets the worst rise over several moves.
SOFTNESS_DB = 1.0
#: Picks of two matchings without a move (their union one cycle) allowed per routing budgeted.
STALE_PICKS = 20
#: A move picks its first matching by rank among the worst, exponentially (mean rank).
WORST_RANKS = 3.0


def _key(pairs) -> Pairs:
    return tuple(sorted((min(a, b), max(a, b)) for a, b in pairs))


class Scorer:
    """Routes matchings once each (cached by their pairs) and scores them: the predicted worst
    isolation of the routing (dB; ``-inf`` when it does not route). ``routes`` counts the
    routings run."""

    def __init__(self, router: Router, endpoints: Sequence[int]) -> None:
        self.router, self.endpoints = router, list(endpoints)
        self.n = len(self.endpoints)
        self._done: dict[Pairs, RouteResult] = {}

    def result(self, pairs) -> RouteResult:
        key = _key(pairs)
        if key not in self._done:
            self._done[key] = self.router.route(requests_for(Matching(key, self.n), self.endpoints))
        return self._done[key]

    def __call__(self, pairs) -> float:
        result = self.result(pairs)
        return result.isolation_db if result.ok else -np.inf

    @property
    def routes(self) -> int:
        return len(self._done)


def starting_factorisation(n: int, restart: int) -> list[Pairs]:
    """A 1-factorisation of ``n`` endpoints to search from. The circle method's is perfect
    when ``n - 1`` is prime (any two of its matchings form one cycle through every endpoint), so
    no move of :func:`search_factorisation` changes it; for ``n`` a power of two the matchings
    ``{(i, i xor d)}`` (any two form ``n / 4`` cycles of four), endpoints relabeled at random
    per restart (restart 0 as is), else the circle method relabeled by shift ``restart``."""
    if n & (n - 1) == 0:
        label = np.arange(n) if restart == 0 else np.random.default_rng(restart).permutation(n)
        return [
            _key((int(label[i]), int(label[i ^ d])) for i in range(n) if i < i ^ d)
            for d in range(1, n)
        ]
    return [_key(m.pairs) for m in round_robin(n, restart)]


def alternating_cycles(a: Pairs, b: Pairs) -> list[Pairs]:
    """The cycles of the union of two edge-disjoint perfect matchings, each as its pairs of
    ``a`` (a cycle alternates between the two)."""
    partner_a = {x: y for p in a for x, y in (p, p[::-1])}
    partner_b = {x: y for p in b for x, y in (p, p[::-1])}
    seen: set[int] = set()
    cycles = []
    for start in sorted(partner_a):
        if start in seen:
            continue
        cycle, x = [], start
        while x not in seen:
            y = partner_a[x]
            seen.update((x, y))
            cycle.append((min(x, y), max(x, y)))
            x = partner_b[y]
        cycles.append(tuple(cycle))
    return cycles


def swap(a: Pairs, b: Pairs, cycle: Pairs) -> tuple[Pairs, Pairs]:
    """``a`` and ``b`` with their pairs on ``cycle`` (an alternating cycle, as ``a``'s pairs)
    exchanged."""
    ends = {x for p in cycle for x in p}
    inside_b = tuple(p for p in b if p[0] in ends)
    return (
        _key([p for p in a if p not in cycle] + list(inside_b)),
        _key([p for p in b if p not in inside_b] + list(cycle)),
    )


@dataclass(frozen=True)
class SearchResult:
    """The best factorisation found, its matchings' scores (dB) and the routings run."""

    cover: Cover
    scores: tuple[float, ...]
    routes: int

    @property
    def worst_db(self) -> float:
        return min(self.scores)


def search_factorisation(
    router: Router,
    endpoints: Sequence[int],
    restarts: int = 4,
    max_routes: int = 2000,
    seed: int = 0,
    score: Callable[[Pairs], float] | None = None,
    progress: Progress | None = None,
) -> SearchResult:
    """The 1-factorisation of ``endpoints`` (even count) whose worst matching's predicted
    isolation is highest, as found (see the module docstring): ``restarts`` starts (the circle
    method relabeled by shifts 0, 1, ...), each improved until no move lifts its worst matching
    or ``max_routes`` routings in all are spent. ``score`` (default: the router's prediction)
    may replace the objective of a matching's pairs."""
    n = len(endpoints)
    if n < 4 or n % 2:
        raise PortError(f"a factorisation needs an even number >= 4 of endpoints, got {n}")
    if restarts < 1 or max_routes < 1:
        raise SettingsError(f"restarts and max_routes must be >= 1, got {restarts}, {max_routes}")
    scorer = Scorer(router, endpoints)
    value = score or scorer
    rng = np.random.default_rng(seed)
    best: tuple[list[Pairs], list[float]] | None = None
    spent, per_start = 0, max_routes // restarts
    for restart in range(restarts):
        rounds = starting_factorisation(n, restart)
        scores = np.array([value(m) for m in rounds])
        spent += n - 1
        stop = min(max_routes, spent + per_start)
        for _ in range(STALE_PICKS * max_routes):  # picks with no move do not spend routings
            if spent >= stop:
                break
            if progress is not None:
                progress("cover search: routings", spent, max_routes)
            # one matching among the worst (by rank), one at random
            w = int(np.argsort(scores)[min(int(rng.exponential(WORST_RANKS)), n - 2)])
            j = int(rng.integers(n - 2))
            j += j >= w
            cycles = alternating_cycles(rounds[w], rounds[j])
            if len(cycles) < 2:  # one cycle: swapping it swaps the matchings whole
                continue
            new_w, new_j = swap(rounds[w], rounds[j], cycles[int(rng.integers(len(cycles)))])
            s_w, s_j = value(new_w), value(new_j)
            spent += 2
            old = _penalty(scores[[w, j]])
            if _penalty(np.array([s_w, s_j])) < old:
                rounds[w], rounds[j] = new_w, new_j
                scores[w], scores[j] = s_w, s_j
        if best is None or scores.min() > min(best[1]):
            best = (list(rounds), scores.tolist())
    if progress is not None:
        progress("cover search: routings", max_routes, max_routes)
    assert best is not None
    rounds, scores = best
    results = tuple(scorer.result(m) for m in rounds)
    note = f"searched: {n - 1} perfect matchings, worst predicted {min(scores):.1f} dB"
    cover = Cover(tuple(Matching(m, n) for m in rounds), results, note)
    return SearchResult(cover, tuple(scores), scorer.routes)


def _penalty(scores: np.ndarray) -> float:
    return float(np.sum(np.exp(-np.clip(scores, -100, 100) / SOFTNESS_DB)))


def all_matchings(n: int, perfect: bool = False) -> list[Pairs]:
    """Every matching (at least one pair) of ``n`` endpoints, or only the perfect ones."""
    if n < 2 or n > 12:
        raise PortError(f"all_matchings enumerates 2..12 endpoints, got {n}")
    out: list[Pairs] = []

    def grow(free: tuple[int, ...], taken: Pairs) -> None:
        if not free:
            if taken:
                out.append(taken)
            return
        first, rest = free[0], free[1:]
        if not perfect:
            grow(rest, taken)  # ``first`` left unmatched
        for k, other in enumerate(rest):
            grow(rest[:k] + rest[k + 1 :], (*taken, (first, other)))

    grow(tuple(range(n)), ())
    return out


@dataclass(frozen=True)
class ExactCover:
    """The fewest matchings covering every pair with each at the required isolation (None when
    no such cover exists), from ``candidates`` routed matchings."""

    matchings: tuple[Pairs, ...] | None
    scores: tuple[float, ...]
    candidates: int


def exact_cover(scores: dict[Pairs, float], n: int, isolation_db: float) -> ExactCover:
    """Fewest matchings of ``scores`` (a matching's pairs -> its isolation, dB) at
    ``isolation_db`` or more that cover all pairs of ``n`` endpoints: a set-cover 0/1 program
    solved by HiGHS (``scipy.optimize.milp``)."""
    usable = [m for m, s in scores.items() if s >= isolation_db]
    pairs = list(combinations(range(n), 2))
    if not usable:
        return ExactCover(None, (), 0)
    row = {p: i for i, p in enumerate(pairs)}
    A = np.zeros((len(pairs), len(usable)))
    for j, m in enumerate(usable):
        for p in m:
            A[row[p], j] = 1
    if np.any(A.sum(axis=1) == 0):
        return ExactCover(None, (), len(usable))
    res = milp(
        np.ones(len(usable)),
        constraints=LinearConstraint(A, lb=1, ub=np.inf),
        integrality=np.ones(len(usable)),
        bounds=Bounds(0, 1),
    )
    if res.status != 0:
        return ExactCover(None, (), len(usable))
    chosen = tuple(usable[j] for j in np.flatnonzero(res.x > 0.5))
    return ExactCover(chosen, tuple(scores[m] for m in chosen), len(usable))


__all__ = [
    "ExactCover",
    "Scorer",
    "SearchResult",
    "all_matchings",
    "alternating_cycles",
    "exact_cover",
    "search_factorisation",
    "swap",
]
