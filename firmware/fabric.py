"""Sequences of matchings on a switch fabric: all-to-all covers, time-multiplexed schedules,
accelerator failover onto spare ports, and tenant slices.

Pure logic on :mod:`photonics.switch` fabrics (no I/O). Terms:

- a *plan* (:class:`~photonics.switch.SwitchPlan`) is every cell's angle plus the directed
  circuits it carries; a *changed cell* is one whose bar/cross state differs between two plans.
  On the emulated feed-forward chip each cell is one heater channel (channel ``k`` is the internal
  heater of MZI ``k``), so reconfiguration time grows with the changed cells
  (:class:`HeaterWriteModel`);
- a live circuit is *disturbed* by a reconfiguration when a cell on its path changes state (its
  light is interrupted while the heaters move), even if it joins the same endpoints afterwards;
- a job's topology is a list of matchings applied one at a time (:func:`job_matchings`): a port
  is in at most one pair of a matching, and each pair ``(a, b)`` is two circuits,
  ``a -> b`` and ``b -> a``, so one matching carries both directions of its links.

Times are in s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numba import njit

from firmware.driver import DEFAULT_CHANNEL_WRITE_S, DEFAULT_SETTLE_TOLERANCE
from photonics.errors import MatchingError, PortError, SettingsError, ShapeError
from photonics.matching import Matching, Permutation
from photonics.routing import Router, all_to_all_cover, round_robin
from photonics.switch import Circuit, Fabric, FeedForwardFabric, MeshFabric, SwitchPlan
from photonics.thermal import DEFAULT_TAU_S, settling_time_s
from photonics.waveguide_mesh import BAR, CROSS, state_between, through
from photonics.waveguide_mesh import trace as trace_mesh

#: A model of the time (s) to go from one plan (None: unknown, every cell is written) to another.
ReconfigurationModel = Callable[[SwitchPlan | None, SwitchPlan], float]


# ---- plans ---------------------------------------------------------------------------------


def _cross(theta: np.ndarray) -> np.ndarray:
    """Bar/cross state of each cell (True: cross), as SwitchPlan angles are 0 or pi/2."""
    return np.sin(np.asarray(theta, dtype=float)) ** 2 > 0.5


def _theta(cross: np.ndarray) -> np.ndarray:
    theta = np.where(cross, np.pi / 2, 0.0)
    theta.setflags(write=False)
    return theta


def _ff_plan(fabric: FeedForwardFabric, matching: Matching, cross: np.ndarray) -> SwitchPlan:
    """The plan of ``matching`` with these cell states (as ``fabric.plan`` builds it); raises
    when the states do not join a pair."""
    theta = _theta(cross)
    out = _ff_pins(_modes(fabric), cross, np.zeros(fabric.n_ports, dtype=np.bool_))[2]
    cells = fabric.trace(theta)
    circuits = []
    for a, b in matching.pairs:
        for src, dst in ((a, b), (b, a)):
            if out[src] != dst:
                raise MatchingError(f"cell states send input {src} to output {out[src]}, not {dst}")
            circuits.append(Circuit(src, dst, cells[src], len(cells[src]) * fabric.cell_loss_db))
    return SwitchPlan(matching, theta, tuple(circuits))


def _modes(fabric: FeedForwardFabric) -> np.ndarray:
    return np.ascontiguousarray(fabric.mesh.modes, dtype=np.int64)


def _try_plan(fabric: Fabric, matching: Matching) -> SwitchPlan | None:
    try:
        return fabric.plan(matching)
    except MatchingError:
        return None


# ---- all-to-all ----------------------------------------------------------------------------


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


def _rounds(n: int, shift: int) -> list[Matching]:
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
            trial = _try_plan(fabric, Matching([*taken, pair], n))
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


def all_to_all(fabric: Fabric, attempts: int = 8, isolation_db: float | None = None) -> AllToAll:
    """A 1-factorization of the complete graph on ``fabric.n_ports`` endpoints, realizable.

    The circle method gives ``n - 1`` perfect matchings (even ``n``) or ``n`` near-perfect ones
    (odd ``n``), each checked by planning it. A feed-forward mesh realizes them all. On a
    recirculating mesh (:class:`MeshFabric`, even ``n``) a round that does not route switches to
    the router's cover (:func:`~photonics.routing.all_to_all_cover`: other relabelings, then the
    pairs of unroutable rounds packed into more matchings); otherwise (odd ``n`` or another
    fabric) the circle method is relabeled up to ``attempts`` times and the pairs of rounds that
    never plan are packed greedily. ``isolation_db`` (a recirculating mesh only): keep only
    matchings whose predicted isolation reaches it (dB), the router's cover with that
    requirement. ``AllToAll.note`` says when the cover is larger than optimal.
    Raises :class:`MatchingError` when some pair cannot be joined at all.
    """
    n = fabric.n_ports
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise SettingsError(f"attempts must be an integer >= 1, got {attempts!r}")
    if n < 2:
        return AllToAll((), (), "fewer than 2 endpoints: nothing to join")
    recirculating = isinstance(fabric, MeshFabric) and n % 2 == 0
    if isolation_db is not None and not recirculating:
        raise SettingsError("an isolation requirement needs a recirculating mesh of even ports")
    best: tuple[list[tuple[Matching, SwitchPlan]], list[Matching]] | None = None
    for shift in range(attempts if isolation_db is None else 0):
        good, bad = [], []
        for m in _rounds(n, shift):
            plan = _try_plan(fabric, m)
            if plan is None:
                bad.append(m)
                if recirculating:
                    break  # the router's cover takes over from here
            else:
                good.append((m, plan))
        if not bad:
            return AllToAll(
                tuple(m for m, _ in good),
                tuple(p for _, p in good),
                f"optimal: {len(good)} {'perfect' if n % 2 == 0 else 'near-perfect'} matchings",
            )
        if recirculating:
            break
        if best is None or len(bad) < len(best[1]):
            best = (good, bad)
    if recirculating:
        assert isinstance(fabric, MeshFabric)
        cover = all_to_all_cover(fabric.router, fabric.endpoints, attempts, isolation_db)
        if cover.unroutable:
            raise MatchingError(
                f"no all-to-all cover: endpoint pairs {list(cover.unroutable)} cannot be routed"
            )
        # the router is deterministic, so re-planning each cover matching gives its routes back
        chosen = [(m, fabric.plan(m)) for m in cover.matchings]
        note = cover.note
    else:
        assert best is not None
        good, bad = best
        extra = _split(fabric, [pair for m in bad for pair in m.pairs])
        chosen = good + extra
        note = (
            f"{len(bad)} of the {_min_rounds(n)} circle-method rounds are not realizable; "
            f"their pairs took {len(extra)} matchings"
        )
    if len(chosen) > _min_rounds(n):
        note += f" (cover of {len(chosen)} matchings, {len(chosen) - _min_rounds(n)} above optimal)"
    return AllToAll(tuple(m for m, _ in chosen), tuple(p for _, p in chosen), note)


# ---- schedules -----------------------------------------------------------------------------


def _positive_time(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise SettingsError(f"{name} must be a number of seconds, got {value!r}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise SettingsError(f"{name} must be a finite time > 0 s, got {value!r}")
    return v


@dataclass(frozen=True)
class Step:
    """One step of a schedule: hold ``matching`` for ``dwell_s`` (s, > 0) of traffic."""

    matching: Matching
    dwell_s: float
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.matching, Matching):
            raise MatchingError(f"a step needs a Matching, got {self.matching!r}")
        object.__setattr__(self, "dwell_s", _positive_time("dwell_s", self.dwell_s))


@dataclass(frozen=True)
class Schedule:
    """Steps applied in order, then repeated (a training step's phases, an all-to-all cycle).

    Needs at least one step, all on the same number of ports; ``(matching, dwell_s)`` tuples
    are accepted for steps.
    """

    steps: tuple[Step, ...]

    def __init__(self, steps: Iterable[Step | tuple[Matching, float]]) -> None:
        out = [s if isinstance(s, Step) else Step(*s) for s in steps]
        if not out:
            raise SettingsError("a schedule needs at least one step, got none")
        sizes = {s.matching.n_ports for s in out}
        if len(sizes) > 1:
            raise ShapeError(f"schedule steps are on different port counts: {sorted(sizes)}")
        object.__setattr__(self, "steps", tuple(out))

    @property
    def n_ports(self) -> int:
        return self.steps[0].matching.n_ports

    @property
    def dwell_s(self) -> float:
        """Total dwell per period, s."""
        return sum(s.dwell_s for s in self.steps)


def phases_schedule(
    phases: Mapping[str, Matching], dwell_s: Mapping[str, float] | float
) -> Schedule:
    """A training-step schedule: one step per parallelism phase, in the mapping's order.

    ``phases``: e.g. ``{"tp": m1, "dp": m2, "pp": m3}``; ``dwell_s``: one dwell (s) for every
    phase, or one per phase name (exactly the same names).
    """
    if not phases:
        raise SettingsError("phases_schedule needs at least one phase, got none")
    if isinstance(dwell_s, Mapping):
        missing = [p for p in phases if p not in dwell_s]
        extra = [p for p in dwell_s if p not in phases]
        if missing or extra:
            raise SettingsError(
                f"dwell_s must name exactly the phases {list(phases)}: "
                f"missing {missing}, unknown {extra}"
            )
        return Schedule(Step(m, dwell_s[p], p) for p, m in phases.items())
    return Schedule(Step(m, dwell_s, p) for p, m in phases.items())


@dataclass(frozen=True)
class HeaterWriteModel:
    """Reconfiguration time of a plan change as the emulated driver models it (s):
    ``channels x channel_write_s`` plus the thermal settling of the heaters (``tau_s`` to within
    ``settle_tolerance``, ~39 us for 5.6 us), 0 when nothing changes.

    ``channels = changed cells x channels_per_cell``; from an unknown state (previous plan
    ``None``) every cell is written.
    """

    channel_write_s: float = DEFAULT_CHANNEL_WRITE_S
    tau_s: float = DEFAULT_TAU_S
    settle_tolerance: float = DEFAULT_SETTLE_TOLERANCE
    channels_per_cell: int = 1

    def __post_init__(self) -> None:
        if not (math.isfinite(self.channel_write_s) and self.channel_write_s >= 0):
            raise SettingsError(f"channel_write_s must be >= 0 s, got {self.channel_write_s!r}")
        _positive_time("tau_s", self.tau_s)
        if not 0 < self.settle_tolerance < 1:
            raise SettingsError(f"settle_tolerance must be in (0, 1), got {self.settle_tolerance}")
        if isinstance(self.channels_per_cell, bool) or self.channels_per_cell < 1:
            raise SettingsError(f"channels_per_cell must be >= 1, got {self.channels_per_cell!r}")

    def seconds(self, n_changed_cells: int) -> float:
        """Time to write ``n_changed_cells`` cells and let them settle, s."""
        if n_changed_cells < 0:
            raise SettingsError(f"n_changed_cells must be >= 0, got {n_changed_cells}")
        if n_changed_cells == 0:
            return 0.0
        channels = n_changed_cells * self.channels_per_cell
        return channels * self.channel_write_s + settling_time_s(self.tau_s, self.settle_tolerance)

    def __call__(self, previous: SwitchPlan | None, new: SwitchPlan) -> float:
        n = new.theta.size if previous is None else int(new.changed_cells(previous).size)
        return self.seconds(n)


@dataclass(frozen=True)
class ScheduleTiming:
    """Timing of one period of a schedule (s): the reconfiguration before each step, the dwell
    of each step, the period and the duty cycle (fraction of the period that carries traffic)."""

    reconfigure_s: tuple[float, ...]
    dwell_s: tuple[float, ...]

    @property
    def period_s(self) -> float:
        return sum(self.dwell_s) + sum(self.reconfigure_s)

    @property
    def duty_cycle(self) -> float:
        """``sum(dwell) / (sum(dwell) + sum(reconfiguration))``."""
        return sum(self.dwell_s) / self.period_s


def plan_schedule(fabric: Fabric, schedule: Schedule) -> tuple[SwitchPlan, ...]:
    """The plan of each step (raises :class:`MatchingError` when one is not realizable)."""
    if schedule.n_ports != fabric.n_ports:
        raise ShapeError(f"schedule on {schedule.n_ports} ports for a {fabric.n_ports}-port fabric")
    return tuple(fabric.plan(s.matching) for s in schedule.steps)


def schedule_timing(
    schedule: Schedule,
    reconfigure_s: ReconfigurationModel | Sequence[float],
    plans: Sequence[SwitchPlan] | None = None,
    cyclic: bool = True,
) -> ScheduleTiming:
    """Per-step reconfiguration time, period and duty cycle of ``schedule``.

    ``reconfigure_s``: the time (s, >= 0) to switch into each step, one per step; or a model
    ``(previous plan or None, plan) -> s`` such as :class:`HeaterWriteModel`, which then needs
    ``plans`` (one per step, e.g. from :func:`plan_schedule`). ``cyclic``: the schedule repeats,
    so step 0 is reached from the last step's plan (a one-step schedule then never
    reconfigures); otherwise step 0 starts from an unknown state (``None``).
    """
    n = len(schedule.steps)
    if callable(reconfigure_s):
        if plans is None or len(plans) != n:
            got = "none" if plans is None else len(plans)
            raise SettingsError(
                f"a reconfiguration model needs {n} plans (one per step), got {got}"
            )
        for i, (step, plan) in enumerate(zip(schedule.steps, plans, strict=True)):
            if plan.matching != step.matching:
                raise MatchingError(
                    f"plan {i} is for {plan.matching.pairs}, step {i} needs {step.matching.pairs}"
                )
        times = [reconfigure_s(plans[i - 1] if (i or cyclic) else None, plans[i]) for i in range(n)]
    else:
        times = list(reconfigure_s)
        if len(times) != n:
            raise SettingsError(f"need {n} reconfiguration times (one per step), got {len(times)}")
    for i, t in enumerate(times):
        number = isinstance(t, int | float | np.integer | np.floating) and not isinstance(t, bool)
        if not number or not math.isfinite(t) or t < 0:
            raise SettingsError(f"reconfiguration time of step {i} must be >= 0 s, got {t!r}")
    return ScheduleTiming(tuple(float(t) for t in times), tuple(s.dwell_s for s in schedule.steps))


# ---- jobs ----------------------------------------------------------------------------------


def _ports(name: str, values: Iterable[object]) -> tuple[int, ...]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
            raise PortError(f"{name} must be switch ports (integers >= 0), got {v!r}")
        out.append(int(v))
    if len(set(out)) != len(out):
        dup = next(p for p in out if out.count(p) > 1)
        raise PortError(f"port {dup} appears twice in {name} {out}")
    return tuple(out)


@dataclass(frozen=True)
class Job:
    """A training job on the switch: accelerator ``i`` sits on switch port ``endpoints[i]``.

    ``topology``: ``"ring"`` (accelerators in ``endpoints`` order, the last joined to the first)
    or ``"torus"`` (``shape = (rows, cols)``, accelerator ``(r, c)`` is ``r * cols + c``; every
    row and every column is a ring). ``spares``: idle ports reserved for failover; on a
    feed-forward mesh put them among the job's ports (e.g. one after every few), since a
    spare's new circuit switches a cell of every live circuit it must cross.
    """

    name: str
    topology: Literal["ring", "torus"]
    endpoints: tuple[int, ...]
    spares: tuple[int, ...] = ()
    shape: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SettingsError(f"a job needs a non-empty name, got {self.name!r}")
        if self.topology not in ("ring", "torus"):
            raise SettingsError(f"topology must be 'ring' or 'torus', got {self.topology!r}")
        ends = _ports("endpoints", self.endpoints)
        spares = _ports("spares", self.spares)
        if len(ends) < 2:
            raise PortError(f"job {self.name!r} needs at least 2 accelerators, got {len(ends)}")
        both = sorted(set(ends) & set(spares))
        if both:
            raise PortError(f"ports {both} of job {self.name!r} are both endpoints and spares")
        shape = tuple(int(s) for s in self.shape)
        if self.topology == "ring":
            if shape not in ((), (len(ends),)):
                raise ShapeError(f"a ring of {len(ends)} has shape ({len(ends)},), got {shape}")
            shape = (len(ends),)
        elif len(shape) != 2 or min(shape) < 1 or shape[0] * shape[1] != len(ends):
            raise ShapeError(
                f"a torus needs shape (rows, cols) with rows x cols = {len(ends)} accelerators, "
                f"got {self.shape!r}"
            )
        object.__setattr__(self, "endpoints", ends)
        object.__setattr__(self, "spares", spares)
        object.__setattr__(self, "shape", shape)

    def with_spare(self, failed_port: int, spare: int) -> Job:
        """This job with ``spare`` in place of ``failed_port`` (which leaves the job)."""
        if failed_port not in self.endpoints:
            raise PortError(f"port {failed_port} is not an endpoint of job {self.name!r}")
        if spare not in self.spares:
            raise PortError(f"port {spare} is not a spare of job {self.name!r}: {self.spares}")
        ends = tuple(spare if p == failed_port else p for p in self.endpoints)
        spares = tuple(p for p in self.spares if p != spare)
        return Job(self.name, self.topology, ends, spares, self.shape)


def _ring_rounds(cycle: Sequence[int]) -> list[list[tuple[int, int]]]:
    """Edges of a ring in as few matchings as possible: 1 (k = 2), 2 (even k), 3 (odd k)."""
    k = len(cycle)
    if k < 2:
        return []
    if k == 2:
        return [[(cycle[0], cycle[1])]]
    edges = [(cycle[i], cycle[(i + 1) % k]) for i in range(k)]
    if k % 2 == 0:
        return [edges[0::2], edges[1::2]]
    # odd: the closing edge meets edge 0 and edge k-2, one of each parity
    return [edges[0 : k - 1 : 2], edges[1 : k - 1 : 2], [edges[-1]]]


def job_matchings(job: Job, n_ports: int) -> list[Matching]:
    """The circuits of ``job`` on an ``n_ports`` switch, as matchings applied one at a time.

    A ring of k: its edges by parity of their position, 2 matchings for even k, 3 for odd k
    (1 for k = 2). A torus: the row rings' matchings (rows combined, as they share no port),
    then the column rings'. Each pair carries both directions.
    """
    top = max(job.endpoints + job.spares)
    if top >= n_ports:
        raise PortError(f"job {job.name!r} uses port {top}; the switch has ports 0..{n_ports - 1}")
    if job.topology == "ring":
        groups = [_ring_rounds(job.endpoints)]
    else:
        rows, cols = job.shape
        grid = [job.endpoints[r * cols : (r + 1) * cols] for r in range(rows)]
        rings = [[_ring_rounds(row) for row in grid]]
        rings.append([_ring_rounds([grid[r][c] for r in range(rows)]) for c in range(cols)])
        # rings of one kind have the same length, hence the same rounds: merge round by round
        groups = [
            [[p for r in rounds for p in r] for rounds in zip(*kind, strict=True)] for kind in rings
        ]
    return [Matching(pairs, n_ports) for g in groups for pairs in g]


# ---- failover ------------------------------------------------------------------------------


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


@dataclass
class _Candidate:
    spare: int
    matching: Matching
    cross: np.ndarray | None  # cell states (feed-forward); None when plan is set
    method: str
    n_changed: int
    n_disturbed: int
    plan: SwitchPlan | None = None
    key: tuple = field(default=())


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


@njit(cache=True)
def _ff_pins(modes, cross, kept):  # pragma: no cover - compiled
    """One pass over a feed-forward mesh's cells (slot order) at states ``cross``.

    Returns, per cell, the state it must keep (``fixed``: -1 free, else 0 bar / 1 cross) and
    the ``kept`` input whose light enters its top and bottom input (``owner``, -1: none); and
    the output each input reaches."""
    n = kept.size
    at = np.arange(n)
    fixed = np.full(modes.size, -1, np.int64)
    owner = np.full((modes.size, 2), -1, np.int64)
    for k in range(modes.size):
        m = modes[k]
        a, b = at[m], at[m + 1]
        if kept[a] or kept[b]:
            fixed[k] = 1 if cross[k] else 0
            owner[k, 0] = a if kept[a] else -1
            owner[k, 1] = b if kept[b] else -1
        if cross[k]:
            at[m], at[m + 1] = b, a
    out = np.empty(n, np.int64)
    for mode in range(n):
        out[at[mode]] = mode
    return fixed, owner, out


_INF = 1 << 40
#: Cost of pushing a pinned circuit aside in the blocker search, against 1 per switched cell.
_RIP_COST = 1000


@njit(cache=True)
def _ff_path(modes, n, cur, fixed, owner, src, dst, soft, back, dist):  # pragma: no cover
    """Cheapest path input ``src`` -> output ``dst`` (cost: cells switched from ``cur``) by
    dynamic programming over the cells in slot order (the mesh is a DAG). Hard (``soft``
    False): no fixed cell changes and no input that carries other light is entered; soft: both
    are allowed at ``_RIP_COST`` each. Fills ``back`` (per cell: input side and state that
    reach its top and bottom output); returns the cost (``_INF``: no path)."""
    dist[:] = _INF
    dist[src] = 0
    for k in range(modes.size):
        m = modes[k]
        if dist[m] >= _INF and dist[m + 1] >= _INF:
            continue
        best0, best1 = _INF, _INF
        for s in range(2):
            for side in range(2):
                d = dist[m + side]
                if d >= _INF:
                    continue
                # a switched cell costs 1, once: a fixed cell is already in its new state
                c = 1 if fixed[k] < 0 and (s == 1) != cur[k] else 0
                if owner[k, side] >= 0:
                    if not soft:
                        continue
                    c += _RIP_COST
                if fixed[k] >= 0 and fixed[k] != s:
                    if not soft:
                        continue
                    c += _RIP_COST + ((s == 1) != cur[k])
                out = side ^ s  # bar keeps the side, cross swaps it
                if out == 0 and d + c < best0:
                    best0 = d + c
                    back[k, 0], back[k, 1] = side, s
                elif out == 1 and d + c < best1:
                    best1 = d + c
                    back[k, 2], back[k, 3] = side, s
        dist[m], dist[m + 1] = best0, best1
    return dist[dst]


@njit(cache=True)
def _ff_route(modes, n, cur, fixed, owner, sources, targets):  # pragma: no cover - compiled
    """Route directed circuits ``sources[i] -> targets[i]`` one after the other through a
    feed-forward mesh, each switching fewest cells, with no fixed cell changed and no input
    carrying other light entered (see :func:`_ff_pins`); each routed circuit is pinned for the
    next. Returns (index of the circuit that found no path or -1, cell states, blockers): for
    a failure, ``blockers[i]`` says input ``i``'s light stands in the way of the cheapest path
    that may push pinned light aside."""
    K = modes.size
    fixed = fixed.copy()
    owner = owner.copy()
    cross = cur.copy()
    dist = np.empty(n, np.int64)
    back = np.zeros((K, 4), np.int64)
    blockers = np.zeros(n, np.bool_)
    for i in range(sources.size):
        src, dst = sources[i], targets[i]
        soft = _ff_path(modes, n, cur, fixed, owner, src, dst, False, back, dist) >= _INF
        if soft:
            _ff_path(modes, n, cur, fixed, owner, src, dst, True, back, dist)
        mode = dst
        for k in range(K - 1, -1, -1):  # walk back along the path
            m = modes[k]
            if mode != m and mode != m + 1:
                continue
            j = 0 if mode == m else 2
            side, s = back[k, j], back[k, j + 1]
            if soft:
                if owner[k, side] >= 0:
                    blockers[owner[k, side]] = True
                if fixed[k] >= 0 and fixed[k] != s:  # the other input's light turns too
                    for o in range(2):
                        if owner[k, o] >= 0:
                            blockers[owner[k, o]] = True
            else:
                fixed[k] = s
                owner[k, side] = src
                cross[k] = s == 1
            mode = m + side
        if soft:
            return i, cross, blockers
    return -1, cross, blockers


class _MeshPins:
    """The paths of a plan on a recirculating mesh, traced once, for routing new pairs around
    the pairs that keep their paths (every cell and port-end they use stays as it is)."""

    def __init__(self, fabric: MeshFabric, base: SwitchPlan) -> None:
        self.fabric, self.base = fabric, base
        self.states = np.where(_cross(base.theta), CROSS, BAR).astype(np.int64)
        self.paths = {}
        for a, b in base.matching.pairs:
            path = trace_mesh(fabric.router.mesh, self.states, fabric.endpoints[a])
            if path.exit_port != fabric.endpoints[b]:
                raise MatchingError(f"the plan's cell states do not join endpoints {a} and {b}")
            self.paths[(a, b)] = path

    def route(
        self,
        keep: Sequence[tuple[int, int]],
        new_pairs: Sequence[tuple[int, int]],
        history: Mapping[int, float] | None = None,
    ) -> tuple[SwitchPlan | None, int, set[tuple[int, int]], set[int]]:
        """The plan of ``keep + new_pairs`` with the kept pairs' paths pinned, each new pair
        routed in turn (switching fewest cells, then crossing fewest, plus ``history`` per cell
        crossed) and pinned. On failure: None, the index of the new pair that found no path,
        and, on its cheapest path when pinned paths may be pushed aside, the kept pairs in its
        way and the cells where it meets new pairs routed before it."""
        history = history or {}
        fabric, router = self.fabric, self.fabric.router
        states = self.states.copy()
        fixed = np.full(states.size, -1, dtype=np.int64)
        end_owner: dict[int, tuple[int, int]] = {}
        cell_owners: dict[int, set[tuple[int, int]]] = {}
        for pair in keep:
            path = self.paths[pair]
            for cell in path.cells:
                fixed[cell] = states[cell]
                cell_owners.setdefault(cell, set()).add(pair)
            end_owner.update(dict.fromkeys(path.port_ends, pair))
        cur = states.tolist()
        new_circuits: dict[tuple[int, int], Circuit] = {}
        for i, (a, b) in enumerate(new_pairs):
            start = int(router.port_end_of[fabric.endpoints[a]])
            goal = int(router.port_end_of[fabric.endpoints[b]])
            hops = self._search(cur, fixed, end_owner, start, goal, history)
            if hops is None:
                args = (router, cur, fixed, end_owner, start, goal, {})
                kept = set(keep)
                # pinned paths that may be pushed aside: first only the kept ones, else all
                soft_kept = (
                    {c for c, o in cell_owners.items() if o <= kept},
                    {e for e, o in end_owner.items() if o in kept},
                )
                soft_all = (set(cell_owners), set(end_owner))
                path = _mesh_search(*args, soft=soft_kept) or _mesh_search(*args, soft=soft_all)
                blockers: set[tuple[int, int] | None] = set()
                contested: set[int] = set()
                for e, st in path or []:
                    owners = {end_owner.get(end) for end in (e, through(e, st))}
                    if fixed[e // 4] >= 0 and fixed[e // 4] != st:
                        owners |= cell_owners.get(e // 4, set())
                    blockers |= owners
                    if owners & set(new_pairs):
                        contested.add(e // 4)
                return None, i, {p for p in blockers if p in kept}, contested
            cells = tuple(e // 4 for e, _ in hops)
            port_ends = [e for h in hops for e in (h[0], through(*h))]
            for e, st in hops:
                states[e // 4] = fixed[e // 4] = cur[e // 4] = st
                cell_owners.setdefault(e // 4, set()).add((a, b))
            end_owner.update(dict.fromkeys(port_ends, (a, b)))
            loss = len(cells) * router.cell_loss_db + (len(cells) - 1) * router.link_loss_db
            new_circuits[(a, b)] = Circuit(a, b, cells, loss)
            new_circuits[(b, a)] = Circuit(b, a, cells[::-1], loss)
        matching = Matching([*keep, *new_pairs], fabric.n_ports)
        old = {(c.source, c.target): c for c in self.base.circuits}
        circuits = tuple(
            new_circuits.get(c) or old[c] for a, b in matching.pairs for c in ((a, b), (b, a))
        )
        return SwitchPlan(matching, _theta(states == CROSS), circuits), -1, set(), set()

    def _search(
        self,
        cur: list[int],
        fixed: np.ndarray,
        used: dict[int, object],
        start: int,
        goal: int,
        history: Mapping[int, float],
    ) -> list[tuple[int, int]] | None:
        """Hard search for one path; a cheapest path may cross one cell twice in two states,
        or one port-end twice (Dijkstra does not see its own path): then that cell is held in
        its first state, or that port-end barred, and the search runs again (a few times)."""
        router = self.fabric.router
        fixed = fixed.copy()
        used = dict(used)
        for _ in range(8):
            args = (router, cur, fixed, used, start, goal, history)
            hops = _mesh_search(*args)
            if hops is None:
                return None
            states: dict[int, int] = {}
            ends: set[int] = set()
            for e, st in hops:
                if states.setdefault(e // 4, st) != st:
                    fixed[e // 4] = states[e // 4]
                    break
                clash = {e, through(e, st)} & ends
                if clash:
                    used[clash.pop()] = None
                    break
                ends |= {e, through(e, st)}
            else:
                return hops
        return None


#: Cost of one cell crossed, against 1 per switched cell: among paths that switch equally
#: many cells the shortest (least loss) wins.
_LENGTH_COST = 1e-3


def _mesh_search(
    router: Router,
    cur: list[int],
    fixed: np.ndarray,
    used: Mapping[int, object],
    start: int,
    goal: int,
    history: Mapping[int, float],
    soft: tuple[Collection[int], Collection[int]] = ((), ()),
) -> list[tuple[int, int]] | None:
    """Cheapest path from entry port-end ``start`` to exit port-end ``goal`` that switches
    fewest cells; returns the (entry, state) of each cell crossed. ``used`` port-ends and
    another state of a ``fixed`` cell are out of bounds, except the cells and port-ends in
    ``soft``, which cost ``_RIP_COST`` each; ``history`` adds a cost per cell crossed."""
    n = fixed.size
    step = np.full((n, 2), _LENGTH_COST)
    if history:
        step[list(history)] += np.fromiter(history.values(), float)[:, None]
    free = fixed < 0
    step[free] += np.arange(2)[None, :] != np.asarray(cur)[free, None]
    pinned = np.flatnonzero(~free)
    bar = np.full(pinned.size, np.inf)
    bar[np.isin(pinned, list(soft[0]))] = _RIP_COST
    step[pinned, 1 - fixed[pinned]] += bar
    ends = np.zeros(4 * n)
    if used:
        ends[list(used)] = np.inf
    if soft[1]:
        ends[list(soft[1])] = _RIP_COST
    hops = router.cheapest_path(start, goal, step, ends, link_cost=0.0)
    if hops is None:
        return None
    return [(int(a), state_between(int(a), int(b))) for a, b in hops]


def _check_plan(fabric: Fabric, plan: SwitchPlan, name: str) -> None:
    if not isinstance(plan, SwitchPlan):
        raise SettingsError(f"{name} must be a SwitchPlan, got {type(plan).__name__}")
    if plan.theta.shape != (fabric.n_cells,) or plan.matching.n_ports != fabric.n_ports:
        raise ShapeError(
            f"{name} is for {plan.matching.n_ports} ports and {plan.theta.size} cells; the "
            f"fabric has {fabric.n_ports} ports and {fabric.n_cells} cells"
        )


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
      kept, switching fewest cells (feed-forward: a directed path each way by dynamic
      programming over the cells, in both orders; recirculating: one reciprocal path by
      Dijkstra over the port-ends);
    - ``"released"`` (when no spare can be pinned): rip up and re-route: the pairs whose
      light stands in the way are re-routed too (at most ``max_released`` pairs; on a
      recirculating mesh with a growing cost on contested cells), every other cell kept. A
      feed-forward mesh is planar: a new path that must cross a live circuit's path can only
      do so in a cell whose state that circuit needs, so some circuits may have to move;
    - ``"sorting"`` (feed-forward): the mesh's sorting network with the default completion of
      the dark ports (the naive re-route), with the completion inherited from the current
      states, and, when nothing above worked, a hill climb over swaps of two dark ports'
      completions (at most ``max_completions`` routes per spare);
    - ``"replanned"`` (recirculating when no spare can be pinned, or ``compare_naive``; any
      other fabric): ``fabric.plan`` of the new matching.

    The chosen plan switches no more cells than the naive re-route of the best spare (when it
    was computed) and, within that, disturbs fewest live circuits, then switches fewest cells
    (then lowest spare). Compute: ~1 ms (median) on a 32-port Clements mesh, ~3.5 ms on
    :func:`~photonics.switch_geometry.switch_32` when a pinned path exists; the feed-forward kernels
    are compiled by numba on first use (cached on disk).

    A failed port that is dark in ``current`` needs no change: the first spare takes its place
    in ``job``. Raises :class:`PortError` when ``failed_port`` is not in the job or no spare is
    free, :class:`MatchingError` when no spare gives a realizable matching.
    """
    _check_plan(fabric, current, "current")
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
    cur_cross = _cross(current.theta)
    ff = fabric if type(fabric) is FeedForwardFabric else None
    candidates: list[_Candidate] = []

    def add(spare: int, m: Matching, method: str, cross=None, plan=None) -> _Candidate:
        states = cross if cross is not None else _cross(plan.theta)
        changed = states != cur_cross
        cand = _Candidate(
            spare,
            m,
            cross,
            method,
            int(changed.sum()),
            int(kept.disturbed_mask(changed).sum()),
            plan,
        )
        cand.key = (cand.n_disturbed, cand.n_changed, spare)
        candidates.append(cand)
        return cand

    matchings = {s: Matching([*keep, (q, s)], n) for s in spares}
    naive: dict[int, int] = {}
    if ff is not None:
        _ff_failover(
            ff, cur_cross, kept, keep, q, matchings, max_completions, max_released, add, naive
        )
    else:
        pinned_found = False
        if isinstance(fabric, MeshFabric):
            pins = _MeshPins(fabric, current)
            for s, m in matchings.items():
                plan = pins.route(keep, [(q, s)])[0]
                if plan is not None:
                    add(s, m, "pinned", plan=plan)
                    pinned_found = True
            if not pinned_found:  # rip up the pairs in the way and re-route them too
                for s, m in matchings.items():
                    plan = _released(
                        lambda released, order, history: pins.route(
                            [p for p in keep if p not in released], order, history
                        ),
                        [(q, s)],
                        max_released,
                    )
                    if plan is not None:
                        add(s, m, "released", plan=plan)
                        pinned_found = True
        if compare_naive or not pinned_found:  # a re-plan routes every pair again: slow
            for s, m in matchings.items():
                plan = _try_plan(fabric, m)
                if plan is not None:
                    naive[s] = add(s, m, "replanned", plan=plan).n_changed
    if not candidates:
        raise MatchingError(
            f"no spare of job {job.name!r} ({spares}) can replace port {failed_port}: the "
            f"matching with ({q}, spare) is not realizable"
        )
    # never switch more cells (longer downtime) than the re-route from scratch would
    budget = min(naive.values(), default=math.inf)
    best = min(candidates, key=lambda c: (c.n_changed > budget, *c.key))
    plan = best.plan if best.plan is not None else _ff_plan(ff, best.matching, best.cross)
    changed = _cross(plan.theta) != cur_cross
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


def _ff_failover(
    ff: FeedForwardFabric,
    cur_cross: np.ndarray,
    kept: _Kept,
    keep: Sequence[tuple[int, int]],
    q: int,
    matchings: Mapping[int, Matching],
    max_completions: int,
    max_released: int,
    add: Callable[..., _Candidate],
    naive: dict[int, int],
) -> None:
    """Feed-forward failover candidates for each spare (see :func:`failover`)."""
    n = ff.n_ports
    modes = _modes(ff)
    kept_in = np.zeros(n, dtype=np.bool_)
    kept_in[[c.source for c in kept.circuits]] = True
    pair_of = {p: pair for pair in keep for p in pair}
    cur_out = _ff_pins(modes, cur_cross, kept_in)[2]

    def route(order: list[tuple[int, int]], released: set[tuple[int, int]]):
        pinned = kept_in.copy()
        for a, b in released:
            pinned[[a, b]] = False
        fixed, owner, _ = _ff_pins(modes, cur_cross, pinned)
        src, dst = np.array(order, dtype=np.int64).T.copy()
        return _ff_route(modes, n, cur_cross, fixed, owner, src, dst)

    pinned_found = False
    for s, m in matchings.items():
        new = [(q, s), (s, q)]
        for order in (new, new[::-1]):  # only the two new circuits move
            failed, cross, _ = route(order, set())
            if failed < 0:
                add(s, m, "pinned", cross)
                pinned_found = True
    routed = pinned_found
    if not pinned_found:
        # rip up and re-route: release the pairs whose light blocks the cheapest path, re-route
        # them after (then before) the new circuits, every other cell kept
        for s, m in matchings.items():
            released: set[tuple[int, int]] = set()
            order = [(q, s), (s, q)]
            for _ in range(2 * max_released + 2):
                failed, cross, blockers = route(order, released)
                if failed < 0:
                    add(s, m, "released", cross)
                    routed = True
                    break
                more = {pair_of[int(i)] for i in np.flatnonzero(blockers) if int(i) in pair_of}
                if len(released | more) > max_released:
                    break
                order.insert(0, order.pop(failed))  # the blocked circuit goes first next time
                order += [c for a, b in sorted(more - released) for c in ((a, b), (b, a))]
                released |= more
    for s, m in matchings.items():
        default = add(s, m, "sorting", _cross(ff.mesh.route(m).theta))
        naive[s] = default.n_changed
        budget = 0 if routed else max_completions  # the costly search is the last resort
        _ff_completions(ff, m, cur_out.tolist(), cur_cross, default, budget, add)


def _ff_completions(
    ff: FeedForwardFabric,
    m: Matching,
    cur_out: list[int],
    cur_cross: np.ndarray,
    naive: _Candidate,
    budget: int,
    add: Callable[..., _Candidate],
) -> None:
    """Sorting-network candidates: the dark ports' completion inherited from the current cell
    states, then (``budget`` > 0) first-improvement swaps of two dark ports' outputs."""
    targets: list[int | None] = list(m.to_permutation().targets)
    dark = [i for i, t in enumerate(targets) if t is None]
    if len(dark) < 2:
        return  # one completion only: the naive one
    dark_set = set(dark)
    taken = set()
    for d in dark:  # keep where the current states send each dark input, when still dark
        if cur_out[d] in dark_set:
            targets[d] = cur_out[d]
            taken.add(cur_out[d])
    free = iter(sorted(dark_set - taken))
    for d in dark:
        if targets[d] is None:
            targets[d] = next(free)

    def route(t: list[int | None]) -> _Candidate:
        return add(naive.spare, m, "sorting", _cross(ff.mesh.route(Permutation(t)).theta))

    best, best_t = naive, [d if t is None else t for d, t in enumerate(m.to_permutation().targets)]
    inherited = route(targets)
    if inherited.key < best.key:
        best, best_t = inherited, targets
    spent = 0
    improved = True
    while improved and spent < budget:
        improved = False
        for i in range(len(dark)):
            for j in range(i + 1, len(dark)):
                if spent >= budget:
                    return
                t = list(best_t)
                a, b = dark[i], dark[j]
                t[a], t[b] = t[b], t[a]
                cand = route(t)
                spent += 1
                if cand.key < best.key:
                    best, best_t, improved = cand, t, True


# ---- tenant slices -------------------------------------------------------------------------


@dataclass(frozen=True)
class TenantSlice:
    """A tenant's ports (consecutive endpoints) and its matchings on the whole switch."""

    name: str
    ports: tuple[int, ...]
    matchings: tuple[Matching, ...]


@dataclass(frozen=True)
class Slicing:
    """Disjoint port sets of tenants, checked for isolation (see :func:`slice_tenants`).

    ``baseline``: the plan with every tenant in its first matching.
    """

    n_ports: int
    slices: tuple[TenantSlice, ...]
    reserved: tuple[int, ...]
    baseline: SwitchPlan

    def tenant(self, name: str) -> TenantSlice:
        for t in self.slices:
            if t.name == name:
                return t
        raise SettingsError(f"no tenant {name!r}; tenants are {[t.name for t in self.slices]}")

    @property
    def free_ports(self) -> tuple[int, ...]:
        used = {p for t in self.slices for p in t.ports} | set(self.reserved)
        return tuple(p for p in range(self.n_ports) if p not in used)

    def free_runs(self) -> list[tuple[int, int]]:
        """Maximal runs of consecutive free ports, as (first port, length)."""
        return _runs(self.free_ports)

    def fragmentation(self, size: int) -> float:
        """Share of the free ports that cannot host a new tenant of ``size`` ports.

        A tenant needs ``size`` consecutive free ports, so a run of ``L`` free ports hosts
        ``floor(L / size) * size`` of them; the rest of the run is stranded. 0 when no port is
        free (nothing is wasted) or when every free port is usable.
        """
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise SettingsError(f"size must be an integer >= 1, got {size!r}")
        free = len(self.free_ports)
        if not free:
            return 0.0
        usable = sum(length // size * size for _, length in self.free_runs())
        return (free - usable) / free


def _runs(ports: Sequence[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for p in ports:
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((p, 1))
    return runs


def _tenant_matchings(ports: Sequence[int], topology: str, n: int) -> list[Matching]:
    if topology == "ring":
        return job_matchings(Job("tenant", "ring", ports), n)
    local = _rounds(len(ports), 0) if len(ports) > 1 else []
    return [Matching([(ports[a], ports[b]) for a, b in m.pairs], n) for m in local]


def slice_tenants(
    fabric: Fabric,
    requests: Sequence[tuple[str, int]],
    topology: Literal["all_to_all", "ring"] = "all_to_all",
    reserved: Iterable[int] = (),
) -> Slicing:
    """Give each tenant ``(name, n_ports)`` its own consecutive ports, isolated from the others.

    Ports are consecutive endpoint indices: on a feed-forward mesh, adjacent modes; with the
    endpoints of :func:`~photonics.switch_geometry.switch_32`, neighbours on one side of the mesh.
    Tenants are placed largest first, each in the smallest run of free ports (not
    ``reserved``) that fits it (best fit, which keeps large runs whole).

    Isolation is checked, not assumed: from the baseline (every tenant in its first matching),
    each tenant's every matching (``topology``: its all-to-all rounds or a ring in port order)
    must be realizable without changing a cell that another tenant's circuits cross. A
    feed-forward mesh routes each tenant inside its own band of modes (its sorting network
    never swaps across a band edge), so any other tenants' states give the same cells; a
    recirculating mesh re-routes only the tenant's own pairs, every other path pinned, and
    the check holds against the others' first matchings.

    Raises :class:`PortError` when the tenants need more ports than are free, or a tenant finds
    no run of free ports long enough; :class:`MatchingError` when isolation fails.
    """
    n = fabric.n_ports
    if topology not in ("all_to_all", "ring"):
        raise SettingsError(f"topology must be 'all_to_all' or 'ring', got {topology!r}")
    blocked = set(_ports("reserved", reserved))
    if blocked and max(blocked) >= n:
        raise PortError(f"reserved port {max(blocked)} is out of range 0..{n - 1}")
    names: set[str] = set()
    for req in requests:
        if len(req) != 2:
            raise SettingsError(f"a request is (name, n_ports), got {req!r}")
        name, size = req
        if not isinstance(name, str) or not name or name in names:
            raise SettingsError(f"tenant names must be distinct non-empty strings, got {name!r}")
        names.add(name)
        if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 2:
            raise PortError(f"tenant {name!r} needs an integer >= 2 ports, got {size!r}")
    free = [p for p in range(n) if p not in blocked]
    need = sum(int(size) for _, size in requests)
    if need > len(free):
        raise PortError(
            f"tenants need {need} ports in all but only {len(free)} of the {n} ports are free"
        )
    runs = _runs(free)
    ports: dict[str, tuple[int, ...]] = {}
    for name, size in sorted(requests, key=lambda r: -int(r[1])):  # stable: ties keep order
        fits = [i for i, (_, length) in enumerate(runs) if length >= size]
        if not fits:
            longest = max((length for _, length in runs), default=0)
            raise PortError(
                f"tenant {name!r} needs {size} consecutive free ports; the longest free run "
                f"has {longest} ({sum(r[1] for r in runs)} ports free in {len(runs)} runs)"
            )
        i = min(fits, key=lambda i: (runs[i][1], runs[i][0]))
        start, length = runs[i]
        ports[name] = tuple(range(start, start + int(size)))
        runs[i] = (start + int(size), length - int(size))
    slices = tuple(
        TenantSlice(name, ports[name], tuple(_tenant_matchings(ports[name], topology, n)))
        for name, _ in requests
    )
    baseline = _check_isolation(fabric, slices)
    return Slicing(n, slices, tuple(sorted(blocked)), baseline)


def _check_isolation(fabric: Fabric, slices: Sequence[TenantSlice]) -> SwitchPlan:
    """The baseline plan; raises MatchingError when a tenant's matching touches another's."""
    n = fabric.n_ports
    first = {t.name: list(t.matchings[0].pairs) if t.matchings else [] for t in slices}
    try:
        baseline = fabric.plan(Matching([p for pairs in first.values() for p in pairs], n))
    except MatchingError as err:
        raise MatchingError(
            f"the tenants' first matchings are not realizable together: {err}"
        ) from err
    owner = {p: t.name for t in slices for p in t.ports}
    pins: _MeshPins | None = None
    for t in slices:
        others = [p for name, pairs in first.items() if name != t.name for p in pairs]
        theirs = np.zeros(fabric.n_cells, dtype=bool)
        for c in baseline.circuits:
            if owner[c.source] != t.name:
                theirs[list(c.cells)] = True
        for i, m in enumerate(t.matchings[1:], start=1):
            if isinstance(fabric, MeshFabric):
                pins = pins or _MeshPins(fabric, baseline)
                pairs = list(m.pairs)
                orders = [pairs[r:] + pairs[:r] for r in range(len(pairs))]
                orders += [o[::-1] for o in orders]
                plan = None
                for order in orders:  # sequential routing depends on the order: try a few
                    plan = pins.route(others, order)[0]
                    if plan is not None:
                        break
                if plan is None:
                    raise MatchingError(
                        f"tenant {t.name!r}: matching {i} {m.pairs} does not route around the "
                        f"other tenants' paths"
                    )
            else:
                plan = fabric.plan(Matching([*others, *m.pairs], n))
            touched = np.flatnonzero(theirs[plan.changed_cells(baseline)])
            if touched.size:
                cells = plan.changed_cells(baseline)[touched].tolist()
                raise MatchingError(
                    f"tenant {t.name!r}: matching {i} changes cells {cells} that other tenants' "
                    f"circuits cross"
                )
    return baseline


def _released(
    route: Callable[..., tuple[SwitchPlan | None, int, set[tuple[int, int]], set[int]]],
    order: Sequence[tuple[int, int]],
    max_released: int,
) -> SwitchPlan | None:
    """Rip up and re-route on a recirculating mesh. ``route(released, order, history)`` routes
    ``order`` with every kept pair not ``released`` pinned. The kept pairs in the way of a pair
    that finds no path are released and routed after it (at most ``max_released``); where the
    routed pairs block each other, the contested cells get a growing cost and the blocked pair
    goes first (negotiated congestion), for a bounded number of rounds."""
    released: set[tuple[int, int]] = set()
    history: dict[int, float] = {}
    order = list(order)
    for _ in range(4 * max_released + 4):
        plan, failed, blockers, contested = route(released, order, history)
        if plan is not None:
            return plan
        if len(released | blockers) > max_released or not (blockers - released or contested):
            return None
        for cell in contested:
            history[cell] = history.get(cell, 0.0) + 1.0
        order.insert(0, order.pop(failed))
        order += sorted(blockers - released)
        released |= blockers
    return None
