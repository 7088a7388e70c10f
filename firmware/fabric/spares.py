"""Accelerator failover: splice a spare port of a job into the running configuration in place
of a failed accelerator, re-routing as little as the fabric allows.

The fabric's rerouter (:meth:`~photonics.chips.switch.Fabric.rerouter`) routes the new circuits
around the live ones; this module chooses the spare and the plan (fewest live circuits
disturbed, then fewest cells switched, never more cells than a re-route from scratch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from firmware.fabric.jobs import Job, job_matchings
from firmware.fabric.plans import check_plan, try_plan
from photonics.chips.switch import Fabric, SwitchPlan
from photonics.errors import MatchingError, PortError, SettingsError
from photonics.matching import Matching


@dataclass(frozen=True)
class FailoverResult:
    """A spare spliced in for a failed accelerator.

    - ``spare``: the port that replaces ``failed_port``; ``partner``: the failed port's partner
      in the active matching (None when the failed port was dark: nothing to re-route);
    - ``job``: the job with the spare in place (its later matchings use the spare);
    - ``plan``: the new plan (the current matching with ``(partner, spare)`` in place of
      ``(partner, failed_port)``);
    - ``changed_cells``: cells whose state differs from the current plan: the heater channels
      to write (one per cell on the emulated chip), for the firmware's downtime model;
    - ``disturbed``: live directed circuits ``(source, target)``, other than the replaced ones,
      that cross a changed cell;
    - ``method``: how the plan was made (see :func:`failover`): ``"pinned"``, ``"released"``,
      ``"sorting"``, ``"replanned"`` or ``"none"`` (nothing to re-route);
    - ``naive_changed``: changed cells of ``fabric.plan`` of the new matching with the same
      spare (the re-route from scratch), for comparison; None when not computed (a
      recirculating mesh skips that slow re-plan when a pinned path exists, unless asked);
    - ``candidates``: how many plans were compared.
    """

    spare: int
    failed_port: int
    partner: int | None
    job: Job
    plan: SwitchPlan
    changed_cells: tuple[int, ...]
    disturbed: tuple[tuple[int, int], ...]
    method: str
    naive_changed: int | None
    candidates: int

    @property
    def n_changed(self) -> int:
        return len(self.changed_cells)


@dataclass(frozen=True, eq=False)
class _Candidate:
    """A plan found for one spare: its cell states, and the plan itself when the fabric made
    one (a re-plan); otherwise the rerouter builds it for the chosen candidate only."""

    spare: int
    matching: Matching
    cross: np.ndarray
    method: str
    n_changed: int
    n_disturbed: int
    plan: SwitchPlan | None = None

    @property
    def key(self) -> tuple[int, int, int]:
        """Fewest live circuits disturbed, then fewest cells switched, then lowest spare."""
        return (self.n_disturbed, self.n_changed, self.spare)


class _Kept:
    """The live circuits a failover keeps, with their cells flattened for fast checks."""

    def __init__(self, current: SwitchPlan, dropped: set[int]) -> None:
        self.circuits = [
            c for c in current.circuits if c.source not in dropped and c.target not in dropped
        ]
        lengths = [len(c.cells) for c in self.circuits]
        self.cells = np.array([k for c in self.circuits for k in c.cells], dtype=np.int64)
        self.bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)

    def disturbed_mask(self, changed: np.ndarray) -> np.ndarray:
        """Which kept circuits cross a changed cell (``changed``: bool per cell)."""
        hits = np.concatenate([[0], np.cumsum(changed[self.cells])])
        return hits[self.bounds[1:]] > hits[self.bounds[:-1]]


def failover(
    fabric: Fabric,
    job: Job,
    current: SwitchPlan,
    failed_port: int,
    max_completions: int = 16,
    max_released: int = 8,
    compare_naive: bool = False,
) -> FailoverResult:
    """Splice a spare of ``job`` into the running configuration in place of ``failed_port``.

    For every spare that is dark in ``current``, the new matching is ``current.matching`` with
    ``(partner, spare)`` for ``(partner, failed_port)``; every other circuit keeps its endpoints.
    Candidate plans, per spare:

    - ``"pinned"``: route only the two new circuits, every cell of every other live circuit
      kept, switching fewest cells (:meth:`Rerouter.pinned
      <photonics.chips.switch.Rerouter.pinned>`; feed-forward: a directed path each way by dynamic
      programming over the cells, in both orders; recirculating: one reciprocal path by Dijkstra
      over the port-ends);
    - ``"released"`` (when no spare can be pinned): rip up and re-route: the pairs whose
      light stands in the way are re-routed too (at most ``max_released`` pairs; on a
      recirculating mesh with a growing cost on contested cells), every other cell kept. A
      feed-forward mesh is planar: a new path that must cross a live circuit's path can only
      do so in a cell whose state that circuit needs, so some circuits may have to move;
    - ``"sorting"`` (feed-forward, :meth:`Rerouter.completions
      <photonics.chips.switch.Rerouter.completions>`): the mesh's sorting network with the default
      completion of the dark ports (the naive re-route), with the completion inherited from the
      current states, and, when nothing above worked, a hill climb over swaps of two dark
      ports' completions (at most ``max_completions`` routes per spare);
    - ``"replanned"`` (recirculating when no spare can be pinned, or ``compare_naive``):
      ``fabric.plan`` of the new matching.

    The chosen plan switches no more cells than the naive re-route of the best spare (when it
    was computed) and, within that, disturbs fewest live circuits, then switches fewest cells
    (then lowest spare). Compute: ~1 ms (median) on a 32-port Clements mesh, ~3.5 ms on
    :func:`~photonics.recirculating.switch_geometry.switch_32` when a pinned path exists; the
    feed-forward kernels are compiled by numba on first use (cached on disk).

    A failed port that is dark in ``current`` needs no change: the first spare takes its place
    in ``job``. Raises :class:`PortError` when ``failed_port`` is not in the job or no spare is
    free, :class:`MatchingError` when no spare gives a realizable matching.
    """
    check_plan(fabric, current, "current")
    n = fabric.n_ports
    job_matchings(job, n)  # checks the job's ports against the switch
    if isinstance(max_completions, bool) or not isinstance(max_completions, int):
        raise SettingsError(f"max_completions must be an integer >= 0, got {max_completions!r}")
    if max_completions < 0:
        raise SettingsError(f"max_completions must be >= 0, got {max_completions}")
    if isinstance(max_released, bool) or not isinstance(max_released, int) or max_released < 0:
        raise SettingsError(f"max_released must be an integer >= 0, got {max_released!r}")
    if failed_port not in job.endpoints:
        raise PortError(
            f"failed port {failed_port!r} is not an endpoint of job {job.name!r}: {job.endpoints}"
        )
    partner_of = {a: b for a, b in current.matching.pairs} | {
        b: a for a, b in current.matching.pairs
    }
    spares = [s for s in job.spares if s not in partner_of]
    if not spares:
        raise PortError(
            f"job {job.name!r} has no free spare for port {failed_port}: spares {job.spares} "
            f"are {'all in use' if job.spares else 'none'}"
        )
    q = partner_of.get(failed_port)
    if q is None:  # dark in this step: only the job's later matchings change
        return FailoverResult(
            spares[0],
            failed_port,
            None,
            job.with_spare(failed_port, spares[0]),
            current,
            (),
            (),
            "none",
            0,
            0,
        )
    keep = [p for p in current.matching.pairs if failed_port not in p]
    kept = _Kept(current, {failed_port})
    cur_cross = current.cross
    rerouter = fabric.rerouter(current)
    candidates: list[_Candidate] = []

    def add(spare: int, m: Matching, method: str, cross: np.ndarray, plan=None) -> _Candidate:
        changed = cross != cur_cross
        n_disturbed = int(kept.disturbed_mask(changed).sum())
        cand = _Candidate(spare, m, cross, method, int(changed.sum()), n_disturbed, plan)
        candidates.append(cand)
        return cand

    matchings = {s: Matching([*keep, (q, s)], n) for s in spares}
    for s, m in matchings.items():  # only the two new circuits move
        for cross in rerouter.pinned(keep, [(q, s)]):
            add(s, m, "pinned", cross)
    routed = bool(candidates)
    if not routed:  # rip up the pairs in the way and re-route them too
        for s, m in matchings.items():
            cross = rerouter.released(keep, [(q, s)], max_released)
            if cross is not None:
                add(s, m, "released", cross)
                routed = True
    naive: dict[int, int] = {}  # changed cells of the re-route from scratch, per spare
    for s, m in matchings.items():

        def score(cross: np.ndarray, s: int = s, m: Matching = m) -> tuple[int, int, int]:
            cand = add(s, m, "sorting", cross)
            naive.setdefault(s, cand.n_changed)  # the fabric's own plan comes first
            return cand.key

        budget = 0 if routed else max_completions  # the costly search is the last resort
        rerouter.completions(m, budget, score)
    if compare_naive or not routed:  # a re-plan routes every pair again: slow
        for s, m in matchings.items():
            plan = None if s in naive else try_plan(fabric, m)
            if plan is not None:
                naive[s] = add(s, m, "replanned", plan.cross, plan).n_changed
    if not candidates:
        raise MatchingError(
            f"no spare of job {job.name!r} ({spares}) can replace port {failed_port}: the "
            f"matching with ({q}, spare) is not realizable"
        )
    # never switch more cells (longer downtime) than the re-route from scratch would
    budget = min(naive.values(), default=math.inf)
    best = min(candidates, key=lambda c: (c.n_changed > budget, *c.key))
    plan = best.plan if best.plan is not None else rerouter.plan(best.matching, best.cross)
    changed = plan.cross != cur_cross
    disturbed = tuple(
        (c.source, c.target)
        for c, hit in zip(kept.circuits, kept.disturbed_mask(changed), strict=True)
        if hit
    )
    return FailoverResult(
        best.spare,
        failed_port,
        q,
        job.with_spare(failed_port, best.spare),
        plan,
        tuple(int(k) for k in np.flatnonzero(changed)),
        disturbed,
        best.method,
        naive.get(best.spare),
        len(candidates),
    )
