"""All-to-all covers: realizable matchings that together join every pair of endpoints once
(a 1-factorization of the complete graph, by the circle method), with their plans."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from firmware.fabric.plans import try_plan
from photonics.chips.switch import Fabric, SwitchPlan
from photonics.errors import MatchingError, SettingsError
from photonics.matching import Matching
from photonics.progress import Progress, steps
from photonics.recirculating.covers import Cover, round_robin


@dataclass(frozen=True)
class AllToAll:
    """Realizable matchings that together join every pair of endpoints exactly once, with the
    plan of each (apply them without re-planning) and how the cover was found."""

    matchings: tuple[Matching, ...]
    plans: tuple[SwitchPlan, ...]
    note: str

    @property
    def size(self) -> int:
        return len(self.matchings)

    @property
    def optimal(self) -> bool:
        """True when the cover has the fewest matchings possible: n - 1 (even n) or n (odd n)."""
        n = self.matchings[0].n_ports if self.matchings else 1
        return self.size <= _min_rounds(n)


def _min_rounds(n: int) -> int:
    """Chromatic index of the complete graph on n vertices."""
    return n - 1 if n % 2 == 0 else n if n > 1 else 0


def circle_rounds(n: int, shift: int) -> list[Matching]:
    """The circle method for any n: for odd n, the rounds of n + 1 endpoints without the
    phantom endpoint n (each round leaves one endpoint dark)."""
    if n % 2 == 0:
        return round_robin(n, shift)
    return [Matching([p for p in m.pairs if n not in p], n) for m in round_robin(n + 1, shift)]


def _split(fabric: Fabric, pairs: Iterable[tuple[int, int]]) -> list[tuple[Matching, SwitchPlan]]:
    """Greedy: pack pairs into matchings that stay realizable, one pair at a time."""
    n = fabric.n_ports
    out: list[tuple[Matching, SwitchPlan]] = []
    pending = list(pairs)
    while pending:
        taken: list[tuple[int, int]] = []
        plan = None
        for pair in list(pending):
            if any(p in q for q in taken for p in pair):
                continue
            trial = try_plan(fabric, Matching([*taken, pair], n))
            if trial is not None:
                taken.append(pair)
                plan = trial
                pending.remove(pair)
        if plan is None:
            raise MatchingError(
                f"endpoints {pending[0]} cannot be joined on this fabric, even alone"
            )
        out.append((Matching(taken, n), plan))
    return out


def all_to_all(
    fabric: Fabric,
    attempts: int = 8,
    isolation_db: float | None = None,
    progress: Progress | None = None,
) -> AllToAll:
    """A 1-factorization of the complete graph on ``fabric.n_ports`` endpoints, realizable.

    The circle method gives ``n - 1`` perfect matchings (even ``n``) or ``n`` near-perfect ones
    (odd ``n``), each checked by planning it. A feed-forward mesh realizes them all. The first
    round that does not plan hands over to the fabric's own cover search when it has one
    (:meth:`~photonics.chips.switch.Fabric.all_to_all_cover`; a recirculating mesh of even ``n``:
    the router's cover, other relabelings, then the pairs of unroutable rounds packed into more
    matchings); otherwise the circle method is relabeled up to ``attempts`` times and the pairs of
    rounds that never plan are packed greedily. ``isolation_db`` (a recirculating mesh of even ``n``
    only): keep only matchings whose predicted isolation reaches it (dB), the router's cover with
    that requirement. ``AllToAll.note`` says when the cover is larger than optimal. Raises
    :class:`MatchingError` when some pair cannot be joined at all. ``progress``
    (:mod:`photonics.progress`) follows the fabric's cover search and the plans.
    """
    n = fabric.n_ports
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise SettingsError(f"attempts must be an integer >= 1, got {attempts!r}")
    if n < 2:
        return AllToAll((), (), "fewer than 2 endpoints: nothing to join")
    if isolation_db is not None:
        cover = fabric.all_to_all_cover(attempts, isolation_db, progress)
        if cover is None:
            raise SettingsError("an isolation requirement needs a recirculating mesh of even ports")
        return _covered(fabric, cover, progress)
    best: tuple[list[tuple[Matching, SwitchPlan]], list[Matching]] | None = None
    for shift in range(attempts):
        good, bad = [], []
        for m in circle_rounds(n, shift):
            plan = try_plan(fabric, m)
            if plan is not None:
                good.append((m, plan))
                continue
            if best is None and not bad:  # the fabric's own search, if it has one, takes over
                cover = fabric.all_to_all_cover(attempts, progress=progress)
                if cover is not None:
                    return _covered(fabric, cover, progress)
            bad.append(m)
        if not bad:
            kind = "perfect" if n % 2 == 0 else "near-perfect"
            return _cover_of(n, good, f"optimal: {len(good)} {kind} matchings")
        if best is None or len(bad) < len(best[1]):
            best = (good, bad)
    assert best is not None
    good, bad = best
    extra = _split(fabric, [pair for m in bad for pair in m.pairs])
    note = (
        f"{len(bad)} of the {_min_rounds(n)} circle-method rounds are not realizable; "
        f"their pairs took {len(extra)} matchings"
    )
    return _cover_of(n, good + extra, note)


def _covered(fabric: Fabric, cover: Cover, progress: Progress | None = None) -> AllToAll:
    """The fabric's own cover (:meth:`~photonics.chips.switch.Fabric.all_to_all_cover`) with the
    plan of each matching."""
    if cover.unroutable:
        raise MatchingError(
            f"no all-to-all cover: endpoint pairs {list(cover.unroutable)} cannot be routed"
        )
    # the router is deterministic, so re-planning each cover matching gives its routes back
    chosen = [(m, fabric.plan(m)) for m in steps("all-to-all plans", cover.matchings, progress)]
    return _cover_of(fabric.n_ports, chosen, cover.note)


def _cover_of(n: int, chosen: list[tuple[Matching, SwitchPlan]], note: str) -> AllToAll:
    """The cover of ``chosen`` matchings and plans on ``n`` endpoints; the note says how far
    above optimal it is."""
    if len(chosen) > _min_rounds(n):
        note += f" (cover of {len(chosen)} matchings, {len(chosen) - _min_rounds(n)} above optimal)"
    return AllToAll(tuple(m for m, _ in chosen), tuple(p for _, p in chosen), note)
