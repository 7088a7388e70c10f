"""All-to-all covers on a recirculating mesh: fewest routable matchings that together join every
pair of a switch's endpoints (the circle method's ``n - 1`` perfect matchings when they route,
more when some do not, or fall short of an isolation target).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from photonics.errors import PortError, SettingsError
from photonics.matching import Matching
from photonics.progress import Progress
from photonics.recirculating.routing import Router, RouteResult, requests_for


def round_robin(n: int, shift: int = 0) -> list[Matching]:
    """The circle method: ``n - 1`` perfect matchings of ``n`` (even) endpoints that together
    join every pair exactly once. ``shift`` relabels the endpoints (another 1-factorisation)."""
    if n < 2 or n % 2:
        raise PortError(f"round_robin needs an even number of endpoints >= 2, got {n}")
    label = [(i + shift) % n for i in range(n)]
    rounds = []
    for r in range(n - 1):
        ring = [n - 1] + [(r + i) % (n - 1) for i in range(n - 1)]
        pairs = [(label[ring[i]], label[ring[n - 1 - i]]) for i in range(n // 2)]
        rounds.append(Matching(pairs, n))
    return rounds


@dataclass(frozen=True)
class Cover:
    """A set of routable matchings that together join every pair of endpoints."""

    matchings: tuple[Matching, ...]
    results: tuple[RouteResult, ...]
    note: str
    unroutable: tuple[tuple[int, int], ...] = ()  # endpoint pairs no path joins, even alone

    @property
    def size(self) -> int:
        return len(self.matchings)


def all_to_all_cover(
    router: Router,
    endpoints: Sequence[int],
    attempts: int = 8,
    isolation_db: float | None = None,
    progress: Progress | None = None,
    rounds: Sequence[Matching] | None = None,
    rescue: Callable[[RouteResult], bool] | None = None,
) -> Cover:
    """Fewest routable matchings (as found) joining every pair of ``endpoints`` (edge ports).

    Tries the circle method's ``n - 1`` perfect matchings (the optimum) under ``attempts``
    relabelings, or the 1-factorisation ``rounds`` when given (e.g. one searched for isolation,
    :mod:`photonics.recirculating.cover_search`), and keeps the one that leaves fewest pairs
    out; each pair left out is
    then added to the first of those matchings where both its endpoints are free and it still
    routes (fits), and the rest are packed greedily into further matchings. Above the optimum,
    each matching, fewest pairs first, whose pairs can all join other matchings (each where it
    fits) is dropped.

    ``isolation_db`` (dB; None: any): a matching counts only when its predicted worst isolation
    (:attr:`RouteResult.isolation_db`) reaches it. A round that routes but falls short drops
    its worst-isolated path's pair until it reaches it; the dropped pairs are packed as above.

    ``rescue``: asked of a perfect matching that routes but is predicted short of
    ``isolation_db``, before any pair is dropped; True keeps it whole (e.g. it measures at the
    goal once its leaks are cancelled on the chip, :mod:`photonics.calibration.hex_leaks`).

    ``progress`` (:mod:`photonics.progress`) follows the rounds tried (all ``attempts`` of
    them, done early when a relabeling leaves no pair out) and the packing.
    """
    if isolation_db is not None and not np.isfinite(isolation_db):
        raise SettingsError(f"isolation_db must be finite or None, got {isolation_db!r}")
    n = len(endpoints)

    def fits(result: RouteResult) -> bool:
        return result.ok and (isolation_db is None or result.isolation_db >= isolation_db)

    best: tuple[list[tuple[Matching, RouteResult]], list[tuple[int, int]], int] | None = None
    starts = [round_robin(n, shift) for shift in range(attempts)] if rounds is None else [rounds]
    total = len(starts) * (n - 1)
    for shift, start in enumerate(starts):
        if len(start) != n - 1 or any(len(m.pairs) != n // 2 for m in start):
            raise SettingsError(f"rounds must be {n - 1} perfect matchings of {n} endpoints")
        good, left, short = [], [], 0
        for r, m in enumerate(start):
            if progress is not None:
                progress("all-to-all cover: circle-method rounds", shift * (n - 1) + r, total)
            pairs, result = list(m.pairs), router.route(requests_for(m, endpoints))
            if result.ok:
                kept = rescue is not None and not fits(result) and rescue(result)
                while pairs and not kept and not fits(result):  # only isolation can fall short here
                    worst = min(result.paths, key=lambda p: p.isolation_db).ports
                    pair = next(q for q in pairs if {endpoints[i] for i in q} == set(worst))
                    pairs.remove(pair)
                    left.append(pair)
                    result = router.route(requests_for(Matching(pairs, n), endpoints))
            else:
                left += pairs
                pairs = []
            short += len(pairs) < len(m.pairs)
            if pairs:
                good.append((Matching(pairs, n), result))
        if best is None or len(left) < len(best[1]):
            best = (good, left, short)
        if not left:
            break
    assert best is not None
    if progress is not None:
        progress("all-to-all cover: circle-method rounds", total, total)
    good, left, short = best
    left = _fill(router, endpoints, good, left, n, fits)
    extra, unroutable = _pack(router, endpoints, left, n, fits, progress)
    why = "did not route" if isolation_db is None else f"did not route at >= {isolation_db} dB"
    note = (
        f"optimal: {n - 1} perfect matchings"
        if not left
        else f"{short} of the {n - 1} perfect matchings {why}; {len(left)} of their pairs took "
        f"{len(extra)} more matchings"
    )
    if unroutable:
        note += f"; {len(unroutable)} pairs cannot be routed even alone"
    chosen = good + extra
    if len(chosen) > n - 1:  # above the optimum: try to spread the smallest matchings out
        before = len(chosen)
        chosen = _dissolve(router, endpoints, chosen, n, fits, progress)
        if len(chosen) < before:
            note += f"; {before - len(chosen)} matchings spread over the others"
    return Cover(tuple(m for m, _ in chosen), tuple(r for _, r in chosen), note, tuple(unroutable))


def _place(router: Router, endpoints: Sequence[int], slots: dict, pair, n: int, fits) -> bool:
    """Add ``pair`` to the first matching of ``slots`` (key: (Matching, RouteResult), updated
    in place) that leaves both its endpoints free and still ``fits`` with it; whether one
    did."""
    for key, (m, _) in slots.items():
        if {*pair} & {e for q in m.pairs for e in q}:
            continue
        grown = Matching([*m.pairs, pair], n)
        result = router.route(requests_for(grown, endpoints))
        if fits(result):
            slots[key] = (grown, result)
            return True
    return False


def _fill(router: Router, endpoints: Sequence[int], good: list, pairs: list, n: int, fits) -> list:
    """Add each of ``pairs`` to the first matching of ``good`` (a list of (Matching,
    RouteResult), updated in place) where it fits (:func:`_place`); returns the pairs that went
    nowhere."""
    slots = dict(enumerate(good))
    left = [pair for pair in pairs if not _place(router, endpoints, slots, pair, n, fits)]
    good[:] = slots.values()
    return left


def _dissolve(
    router: Router, endpoints: Sequence[int], chosen: list, n: int, fits, progress
) -> list:
    """``chosen`` (a list of (Matching, RouteResult)) without each matching, fewest pairs
    first, whose every pair joins another matching (:func:`_place`); a matching whose pairs do
    not all find one is kept as it was."""
    chosen = list(chosen)
    order = sorted(range(len(chosen)), key=lambda i: (len(chosen[i][0].pairs), i))
    gone: set[int] = set()
    for done, i in enumerate(order):
        if progress is not None:
            progress("all-to-all cover: spreading small matchings", done, len(order))
        trial = {j: chosen[j] for j in range(len(chosen)) if j != i and j not in gone}
        if all(_place(router, endpoints, trial, pair, n, fits) for pair in chosen[i][0].pairs):
            chosen = [trial.get(j, chosen[j]) for j in range(len(chosen))]
            gone.add(i)
    if progress is not None:
        progress("all-to-all cover: spreading small matchings", len(order), len(order))
    return [c for j, c in enumerate(chosen) if j not in gone]


def _pack(router: Router, endpoints: Sequence[int], pairs: list, n: int, fits, progress):
    """Greedy: fill a matching with pairs that still route with it (``fits`` its result);
    repeat. Returns the matchings and the pairs that route with nothing."""
    out, unroutable = [], []
    pending = list(pairs)
    while pending:
        if progress is not None:
            progress(
                "all-to-all cover: packing left-out pairs", len(pairs) - len(pending), len(pairs)
            )
        taken: list[tuple[int, int]] = []
        used: set[int] = set()
        result = None
        for pair in list(pending):
            if pair[0] in used or pair[1] in used:
                continue
            trial = router.route(requests_for(Matching([*taken, pair], n), endpoints))
            if fits(trial):
                taken.append(pair)
                used.update(pair)
                result = trial
                pending.remove(pair)
        if not taken:  # the first pending pair cannot route even alone
            unroutable.append(pending.pop(0))
            continue
        out.append((Matching(taken, n), result))
    if progress is not None and pairs:
        progress("all-to-all cover: packing left-out pairs", len(pairs), len(pairs))
    return out, unroutable
