"""The timing of collectives (:mod:`firmware.fabric.collectives`): a collective compiled onto
the circuit switch (:func:`compile_collective`: each round's links split into matchings, each
matching the fabric cannot realise split again by its planner), and the alpha-beta time of its
steps on the circuit switch (:func:`circuit_timing`, with the reconfiguration before each step
whose matching changes) and on an ideal electrical switch (:func:`electrical_timing`); the
straggler-aware all-reduce's cost model (:func:`straggler_cost`, :func:`with_straggler`). Pure
logic, no I/O. Bytes are bytes, times in s, bandwidths in bytes/s.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from firmware.fabric.collectives import Collective, Transfer, _check, straggler_all_reduce
from firmware.fabric.covers import _split
from firmware.fabric.plans import try_plan
from firmware.fabric.schedules import HeaterWriteModel, ReconfigurationModel
from photonics.chips.switch import Fabric, SwitchPlan
from photonics.errors import PortError, SettingsError
from photonics.matching import Matching


@dataclass(frozen=True)
class Link:
    """A port's link: ``bandwidth_Bps`` (bytes/s, each direction) and ``alpha_s`` (s, the
    latency of one step)."""

    bandwidth_Bps: float
    alpha_s: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.bandwidth_Bps) and self.bandwidth_Bps > 0):
            raise SettingsError(f"bandwidth_Bps must be > 0, got {self.bandwidth_Bps!r}")
        if not (math.isfinite(self.alpha_s) and self.alpha_s >= 0):
            raise SettingsError(f"alpha_s must be >= 0 s, got {self.alpha_s!r}")

    def step_s(self, n_bytes: float) -> float:
        """``alpha + n_bytes / bandwidth`` (s)."""
        return self.alpha_s + n_bytes / self.bandwidth_Bps


@dataclass(frozen=True)
class CircuitStep:
    """One step on the circuit switch: ``matching`` carries ``transfers`` (from round
    ``round_index`` of the collective); ``plan`` when compiled for a fabric."""

    matching: Matching
    transfers: tuple[Transfer, ...]
    round_index: int
    label: str
    plan: SwitchPlan | None = None


@dataclass(frozen=True)
class CircuitSchedule:
    """A collective compiled into matchings of an ``n_ports`` switch."""

    collective: Collective
    steps: tuple[CircuitStep, ...]

    @property
    def n_matchings(self) -> int:
        """Distinct matchings used."""
        return len({s.matching for s in self.steps})

    @property
    def n_changes(self) -> int:
        """Steps whose matching differs from the step before (the first counts)."""
        return sum(
            1
            for i, s in enumerate(self.steps)
            if i == 0 or s.matching != self.steps[i - 1].matching
        )


def _edge_matchings(links: Sequence[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Links coloured into matchings: walking each path or cycle, colours alternate (2 for a
    path or an even cycle, 3 when a cycle is odd); a port of degree > 2 falls back to the
    first colour free at both ends."""
    colour: dict[tuple[int, int], int] = {}
    at: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for e in links:
        at[e[0]].append(e)
        at[e[1]].append(e)
    ends = [v for v in at if len(at[v]) == 1]  # paths first, from an end, then cycles
    for start in ends + list(at):
        v = start
        while True:
            e = next((x for x in at[v] if x not in colour), None)
            if e is None:
                break
            used = {colour[x] for u in e for x in at[u] if x in colour}
            colour[e] = next(c for c in range(len(links) + 1) if c not in used)
            v = e[1] if e[0] == v else e[0]
    out: list[list[tuple[int, int]]] = [[] for _ in range(max(colour.values(), default=-1) + 1)]
    for e in links:
        out[colour[e]].append(e)
    return out


def compile_collective(
    c: Collective, n_ports: int, fabric: Fabric | None = None
) -> CircuitSchedule:
    """``c`` as matchings of an ``n_ports`` switch, in order: each round's links coloured into
    matchings (each carrying the round's transfers on its pairs); with a ``fabric``, each
    matching is planned and one it cannot realise is packed into realisable ones by the planner
    (raises :class:`~photonics.errors.MatchingError` when a pair cannot be joined at all).
    """
    top = max(c.ports)
    if top >= n_ports:
        raise PortError(f"{c.name} uses port {top}; the switch has ports 0..{n_ports - 1}")
    if fabric is not None and fabric.n_ports != n_ports:
        raise PortError(f"the fabric has {fabric.n_ports} ports, not {n_ports}")
    cache: dict[Matching, list[tuple[Matching, SwitchPlan | None]]] = {}
    steps = []
    for k, r in enumerate(c.rounds):
        for pairs in _edge_matchings(r.links()):
            m = Matching(pairs, n_ports)
            if m not in cache:
                cache[m] = _realised(fabric, m)
            for part, plan in cache[m]:
                keep = {tuple(sorted(q)) for q in part.pairs}
                ts = tuple(t for t in r.transfers if (min(t.src, t.dst), max(t.src, t.dst)) in keep)
                steps.append(CircuitStep(part, ts, k, r.label, plan))
    return CircuitSchedule(c, tuple(steps))


def _realised(fabric: Fabric | None, m: Matching) -> list[tuple[Matching, SwitchPlan | None]]:
    if fabric is None:
        return [(m, None)]
    plan = try_plan(fabric, m)
    if plan is not None:
        return [(m, plan)]
    return list(_split(fabric, m.pairs))


@dataclass(frozen=True)
class StepTime:
    """One step's timing (s): from ``start_s``, the reconfiguration and the computation before
    the step at once (each 0 when there is none), then traffic to ``end_s``."""

    label: str
    start_s: float
    reconfigure_s: float
    end_s: float
    compute_s: float = 0.0

    @property
    def transfer_s(self) -> float:
        """The traffic's time, alpha included (s)."""
        return self.end_s - self.start_s - max(self.reconfigure_s, self.compute_s)


@dataclass(frozen=True)
class CollectiveTiming:
    """Each step's timing, in order; ``total_s`` is the last end (s)."""

    steps: tuple[StepTime, ...]

    @property
    def total_s(self) -> float:
        return self.steps[-1].end_s if self.steps else 0.0

    @property
    def reconfigure_s(self) -> float:
        return sum(s.reconfigure_s for s in self.steps)

    @property
    def transfer_s(self) -> float:
        """Time spent moving traffic, alpha included (s)."""
        return sum(s.transfer_s for s in self.steps)

    @property
    def duty_cycle(self) -> float:
        """Fraction of the total spent moving traffic (alpha included)."""
        return self.transfer_s / self.total_s if self.total_s else 1.0


def electrical_timing(c: Collective, link: Link, start_s: float = 0.0) -> CollectiveTiming:
    """``c`` on an ideal non-blocking electrical switch of the same port bandwidth: each round
    costs ``alpha + (most loaded port direction's bytes) / bandwidth`` after its
    ``compute_s``, no reconfiguration."""
    out, t = [], start_s
    for r in c.rounds:
        end = t + r.compute_s + link.step_s(c.round_bytes(r))
        out.append(StepTime(r.label, t, 0.0, end, r.compute_s))
        t = end
    return CollectiveTiming(tuple(out))


def circuit_timing(
    s: CircuitSchedule,
    link: Link,
    reconfigure: float | ReconfigurationModel | Sequence[float] | None = None,
    first_configured: bool = False,
) -> CollectiveTiming:
    """``s`` on the circuit switch: before each step whose matching differs from the previous
    one, a reconfiguration: ``reconfigure`` s (a constant), or a model ``(previous plan or None,
    plan) -> s`` on the steps' plans (default: the firmware's :class:`HeaterWriteModel`, which
    needs a schedule compiled with a fabric), or one time (s) per step as a switch reported it
    (:meth:`firmware.sdk.Switch.run_collective`), taken as it is. ``first_configured``: the
    first matching is set before the collective starts (no reconfiguration before step 0).
    Then the step costs ``alpha + (most loaded port direction's bytes) / bandwidth``: a port
    has one circuit per step, so that is its circuit's load; a round's ``compute_s`` comes
    before its first step, and the switch reconfigures meanwhile (its circuits are idle).
    """
    rcs = _reconfigurations(s, HeaterWriteModel() if reconfigure is None else reconfigure)
    c = s.collective
    out, t = [], 0.0
    for i, st in enumerate(s.steps):
        rc = 0.0 if i == 0 and first_configured else rcs[i]
        compute = 0.0
        if i == 0 or s.steps[i - 1].round_index != st.round_index:
            compute = c.rounds[st.round_index].compute_s
        load = c.round_bytes(c.rounds[st.round_index], st.transfers)
        end = t + max(rc, compute) + link.step_s(load)
        out.append(StepTime(st.label, t, rc, end, compute))
        t = end
    return CollectiveTiming(tuple(out))


def _reconfigurations(
    s: CircuitSchedule, reconfigure: float | ReconfigurationModel | Sequence[float]
) -> list[float]:
    """The reconfiguration time (s) before each step of ``s``: 0 where the matching stays."""
    n = len(s.steps)
    if callable(reconfigure):
        if any(st.plan is None for st in s.steps):
            raise SettingsError("a reconfiguration model needs a schedule compiled with a fabric")
        model = reconfigure
    elif isinstance(reconfigure, Sequence):
        if len(reconfigure) != n:
            got = len(reconfigure)
            raise SettingsError(f"need {n} reconfiguration times (one a step), got {got}")
        bad = [t for t in reconfigure if not (math.isfinite(t) and t >= 0)]
        if bad:
            raise SettingsError(f"reconfiguration times must be >= 0 s, got {bad[0]!r}")
        return [float(t) for t in reconfigure]
    elif not (math.isfinite(reconfigure) and reconfigure >= 0):
        raise SettingsError(f"reconfigure must be >= 0 s, got {reconfigure!r}")
    else:
        model = lambda _prev, _plan: float(reconfigure)  # noqa: E731
    out = []
    for i, st in enumerate(s.steps):
        prev = s.steps[i - 1] if i else None
        if prev is not None and prev.matching == st.matching:
            out.append(0.0)
        else:
            out.append(model(prev.plan if prev is not None else None, st.plan))  # type: ignore[arg-type]
    return out


# --- the straggler-aware all-reduce's cost model -----------------------------------------------


@dataclass(frozen=True)
class StragglerCost:
    """Times (s) of ring all-reduce and the straggler-aware all-reduce under a persistent
    straggler, counted from the moment the straggler reaches the collective (the delay itself
    is paid by both); ``speedup`` is ring over straggler-aware."""

    ring_s: float
    straggler_aware_s: float

    @property
    def speedup(self) -> float:
        return self.ring_s / self.straggler_aware_s


#: Completion rounds of the published straggler-aware all-reduce for rank counts that are not
#: powers of two, as its authors' schedule synthesizer found them (their analytical model,
#: ``code/simulation.py`` of github.com/arjundevraj/stragglar).
PUBLISHED_COMPLETION_ROUNDS = {6: 7, 12: 15, 24: 27, 48: 57, 96: 108, 192: 208}


def completion_rounds(p: int) -> tuple[int, str]:
    """Rounds of ``n / (p - 1)`` bytes a port that the straggler-aware all-reduce takes once
    the straggler arrives, and where the count comes from: ``p - 2 + log2 p`` for ``p`` a power
    of two (the published model), the published synthesizer's count where it gives one
    (:data:`PUBLISHED_COMPLETION_ROUNDS`), else the completion compiled here
    (:func:`~firmware.fabric.straggler_all_reduce`, a greedy schedule of our own)."""
    if p & (p - 1) == 0:
        return p - 2 + p.bit_length() - 1, "published: p - 2 + log2 p"
    if p in PUBLISHED_COMPLETION_ROUNDS:
        return PUBLISHED_COMPLETION_ROUNDS[p], "published synthesizer"
    rounds = straggler_all_reduce(range(p), 1.0).rounds
    return sum(r.label == "completion" for r in rounds), "compiled here (greedy)"


def straggler_cost(p: int, n_bytes: float, link: Link, delay_s: float) -> StragglerCost:
    """The alpha-beta cost model of the straggler-aware all-reduce against ring all-reduce, as
    published: "Accelerating AllReduce with a Persistent Straggler" (A. Devraj, E. Ding,
    A. Vijaya Kumar, R. Kleinberg, R. Singh; arXiv:2505.23523, 2025; the algorithm is named
    StragglAR there), whose analytical model this is. ``p`` ranks, one of them late by
    ``delay_s``; buffers of ``n_bytes``; ``alpha``, ``beta = 1 / bandwidth`` of ``link``; any
    rank reaches any other in one step (a non-blocking switch), full-duplex ports, one chunk a
    port each way a round.

    - ring all-reduce cannot start before the straggler: ``2 (p - 1) alpha + 2 (p - 1) / p n
      beta`` after it arrives;
    - the straggler-aware one runs a reduce-scatter among the ``m = p - 1`` ready ranks during
      the delay (``(m - 1) alpha + (m - 1) / m n beta``; whatever of it outlasts the delay is
      added: the published model takes it as hidden), then a completion of ``c`` rounds of
      ``n / m`` bytes (:func:`completion_rounds`; ``c = p - 2 + log2 p`` for a power of two):
      ``c alpha + c / m n beta``.

    The bandwidth term of the completion tends to ``n beta``, half of ring's ``2 n beta``: the
    speed-up tends to 2 as ``p`` grows, the published theoretical limit.
    """
    if isinstance(p, bool) or not isinstance(p, int) or p < 3:
        raise SettingsError(f"p must be an integer >= 3 ranks, got {p!r}")
    _, n = _check([0, 1], n_bytes)
    if not (math.isfinite(delay_s) and delay_s >= 0):
        raise SettingsError(f"delay_s must be >= 0 s, got {delay_s!r}")
    a, b = link.alpha_s, 1.0 / link.bandwidth_Bps
    m = p - 1
    c, _ = completion_rounds(p)
    ring = 2 * (p - 1) * a + 2 * (p - 1) / p * n * b
    ready_rs = (m - 1) * a + (m - 1) / m * n * b
    completion = c * a + c / m * n * b
    return StragglerCost(ring, max(0.0, ready_rs - delay_s) + completion)


def with_straggler(timing: CollectiveTiming, delay_s: float) -> CollectiveTiming:
    """``timing`` with a straggler late by ``delay_s`` (s): steps labelled ``"ready"`` (which
    leave it out) run from 0; every later step waits for it, so the first starts at
    ``max(delay_s, end of the ready steps)``. Times stay counted from when the ready ranks are."""
    if not (math.isfinite(delay_s) and delay_s >= 0):
        raise SettingsError(f"delay_s must be >= 0 s, got {delay_s!r}")
    out: list[StepTime] = []
    shift = None
    for st in timing.steps:
        if st.label == "ready" and shift is None:
            out.append(st)
            continue
        if shift is None:
            shift = max(0.0, delay_s - st.start_s)
        out.append(replace(st, start_s=st.start_s + shift, end_s=st.end_s + shift))
    return CollectiveTiming(tuple(out))
