"""Collectives on the switch: ring and halving/doubling all-reduce, reduce-scatter, all-gather,
all-to-all and a straggler-aware all-reduce, compiled into matchings, and their timing against
an ideal electrical switch. Pure logic, no I/O. Bytes are bytes, times are in s, bandwidths in
bytes/s.

Two levels:

- a :class:`Collective` is a sequence of *rounds*, each a set of directed :class:`Transfer` s
  that may run at once on a non-blocking electrical switch (each rank sends to and receives
  from at most a few peers per round). A transfer names the *segments* of the buffer it moves
  (the buffer is cut into equal segments of ``segment_bytes``) and whether the receiver reduces
  them into its own copy or overwrites it, so :func:`holdings` can replay the data and check the
  result;
- a :class:`CircuitSchedule` is the same collective on the circuit switch: each round's links
  split into matchings (a port joins one partner at a time; a ring's cycle needs 2 matchings,
  3 when odd, as :func:`firmware.fabric.jobs.job_matchings` does), and each matching the fabric
  cannot realise split again into realisable ones by its planner, as the all-to-all cover does.
  A pair ``(a, b)`` of a matching carries both ``a -> b`` and ``b -> a`` at the link bandwidth.

Timing (:func:`electrical_timing`, :func:`circuit_timing`) is the alpha-beta model: a round or
step costs ``alpha + bytes / bandwidth`` for the most loaded port direction, plus on the circuit
switch the reconfiguration before each step whose matching differs from the previous step's.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from firmware.fabric.covers import _split, circle_rounds
from firmware.fabric.jobs import check_ports
from firmware.fabric.plans import try_plan
from firmware.fabric.schedules import HeaterWriteModel, ReconfigurationModel
from photonics.errors import PortError, SettingsError
from photonics.matching import Matching
from photonics.switch import Fabric, SwitchPlan


@dataclass(frozen=True)
class Transfer:
    """``segments`` of the buffer sent from port ``src`` to port ``dst``; ``reduce``: the
    receiver adds them into its copy (else it overwrites its copy with them)."""

    src: int
    dst: int
    segments: tuple[int, ...]
    reduce: bool


@dataclass(frozen=True)
class Round:
    """Transfers that run at the same time; ``label`` says which phase they belong to."""

    transfers: tuple[Transfer, ...]
    label: str = ""

    def links(self) -> list[tuple[int, int]]:
        """The undirected port pairs the round uses, each once, in first-use order."""
        seen: dict[tuple[int, int], None] = {}
        for t in self.transfers:
            seen.setdefault((min(t.src, t.dst), max(t.src, t.dst)), None)
        return list(seen)


@dataclass(frozen=True)
class Collective:
    """A collective of ``ports`` (rank ``i`` on port ``ports[i]``) on a buffer of ``n_bytes``
    per rank, cut into segments of ``segment_bytes``; ``kind`` is what it computes
    (``"all-reduce"``, ``"reduce-scatter"``, ``"all-gather"`` or ``"all-to-all"``)."""

    name: str
    kind: str
    ports: tuple[int, ...]
    n_bytes: float
    segment_bytes: float
    rounds: tuple[Round, ...]

    def round_bytes(self, r: Round) -> float:
        """Bytes of the most loaded port direction of round ``r`` (sent or received)."""
        return _load(r.transfers, self.segment_bytes)


def _load(transfers: Sequence[Transfer], segment_bytes: float) -> float:
    """Bytes of the most loaded port direction (sent or received) of ``transfers``."""
    load: dict[tuple[str, int], float] = defaultdict(float)
    for t in transfers:
        b = len(t.segments) * segment_bytes
        load["out", t.src] += b
        load["in", t.dst] += b
    return max(load.values(), default=0.0)


def _check(
    ports: Sequence[int], n_bytes: float, at_least: int = 2
) -> tuple[tuple[int, ...], float]:
    out = check_ports("ports", ports)
    if len(out) < at_least:
        raise PortError(f"a collective needs at least {at_least} ranks, got {len(out)}")
    ok = isinstance(n_bytes, int | float) and not isinstance(n_bytes, bool)
    if not ok or not math.isfinite(n_bytes) or n_bytes <= 0:
        raise SettingsError(f"n_bytes must be a finite size > 0 bytes, got {n_bytes!r}")
    return out, float(n_bytes)


def _ring_phase(
    ports: Sequence[int], first: int, reduce: bool, label: str, offset: int = 0
) -> list[Round]:
    """``len(ports) - 1`` rounds of a bidirectional ring: a clockwise ring on segments
    ``offset .. offset + p - 1`` and a counter-clockwise one on the next ``p``; ``first`` is the
    step index the ring starts from (0 for a reduce-scatter, p - 1 to gather its result)."""
    p = len(ports)
    rounds = []
    for s in range(first, first + p - 1):
        ts = []
        for i in range(p):
            cw = offset + (i - s) % p  # clockwise: rank i sends segment i - s to rank i + 1
            ccw = offset + p + (i + s) % p  # counter-clockwise: segment i + s to rank i - 1
            ts.append(Transfer(ports[i], ports[(i + 1) % p], (cw,), reduce))
            ts.append(Transfer(ports[i], ports[(i - 1) % p], (ccw,), reduce))
        rounds.append(Round(_merged(ts), label))
    return rounds


def _merged(ts: list[Transfer]) -> tuple[Transfer, ...]:
    """Transfers with the same source, destination and mode merged into one."""
    by: dict[tuple[int, int, bool], list[int]] = {}
    for t in ts:
        by.setdefault((t.src, t.dst, t.reduce), []).extend(t.segments)
    return tuple(Transfer(s, d, tuple(seg), r) for (s, d, r), seg in by.items())


def ring_reduce_scatter(ports: Sequence[int], n_bytes: float) -> Collective:
    """Bidirectional ring reduce-scatter: two counter-rotating rings, each on half the buffer;
    ``p - 1`` rounds of ``n / p`` bytes per port direction."""
    ports, n = _check(ports, n_bytes)
    p = len(ports)
    rounds = _ring_phase(ports, 0, True, "reduce-scatter")
    return Collective("ring reduce-scatter", "reduce-scatter", ports, n, n / (2 * p), tuple(rounds))


def ring_all_gather(ports: Sequence[int], n_bytes: float) -> Collective:
    """Bidirectional ring all-gather of a buffer of ``n_bytes`` (each rank starts with its
    ``n / p``): ``p - 1`` rounds of ``n / p`` bytes per port direction."""
    ports, n = _check(ports, n_bytes)
    p = len(ports)
    rounds = _ring_phase(ports, p - 1, False, "all-gather")
    return Collective("ring all-gather", "all-gather", ports, n, n / (2 * p), tuple(rounds))


def ring_all_reduce(ports: Sequence[int], n_bytes: float) -> Collective:
    """Bidirectional ring all-reduce (reduce-scatter then all-gather): ``2 (p - 1)`` rounds of
    ``n / p`` bytes; on an electrical switch ``2 (p - 1) alpha + 2 (p - 1) / p n beta``."""
    ports, n = _check(ports, n_bytes)
    p = len(ports)
    rs = _ring_phase(ports, 0, True, "reduce-scatter")
    ag = _ring_phase(ports, p - 1, False, "all-gather")
    return Collective("ring all-reduce", "all-reduce", ports, n, n / (2 * p), tuple(rs + ag))


def halving_doubling_all_reduce(ports: Sequence[int], n_bytes: float) -> Collective:
    """Recursive halving (reduce-scatter) then recursive doubling (all-gather), each round a
    perfect matching of pairwise exchanges: ``2 log2 p`` rounds, on an electrical switch
    ``2 log2(p) alpha + 2 (p - 1) / p n beta`` for ``p`` a power of two.

    Otherwise (Rabenseifner's fold) with ``q`` the largest power of two below ``p`` and
    ``r = p - q``: ranks ``1, 3, .., 2r - 1`` first send their whole buffer to the rank before
    them, the ``q`` remaining ranks run halving/doubling, and the folded ranks get the result
    back: 2 more rounds of ``n`` bytes.
    """
    ports, n = _check(ports, n_bytes)
    p = len(ports)
    q = 1 << (p.bit_length() - 1)
    r = p - q
    everything = tuple(range(q))
    rounds: list[Round] = []
    if r:
        fold = [Transfer(ports[2 * i + 1], ports[2 * i], everything, True) for i in range(r)]
        rounds.append(Round(tuple(fold), "fold"))
    core = [ports[2 * i] for i in range(r)] + list(ports[2 * r :])
    own = [everything] * q  # the segments each core rank is still responsible for
    for d in (q >> (k + 1) for k in range(q.bit_length() - 1)):
        ts = []
        nxt = list(own)
        for i in range(q):
            j = i ^ d
            lo, hi = own[i][: len(own[i]) // 2], own[i][len(own[i]) // 2 :]
            keep, give = (lo, hi) if i < j else (hi, lo)
            ts.append(Transfer(core[i], core[j], give, True))
            nxt[i] = keep
        rounds.append(Round(tuple(ts), "reduce-scatter"))
        own = nxt
    for d in (q >> (k + 1) for k in reversed(range(q.bit_length() - 1))):
        ts = [Transfer(core[i], core[i ^ d], own[i], False) for i in range(q)]
        own = [tuple(sorted(own[i] + own[i ^ d])) for i in range(q)]
        rounds.append(Round(tuple(ts), "all-gather"))
    if r:
        back = [Transfer(ports[2 * i], ports[2 * i + 1], everything, False) for i in range(r)]
        rounds.append(Round(tuple(back), "unfold"))
    return Collective("halving/doubling all-reduce", "all-reduce", ports, n, n / q, tuple(rounds))


def all_to_all_shift(ports: Sequence[int], n_bytes: float) -> Collective:
    """Direct all-to-all, one round per shift ``s = 1 .. p - 1``: rank ``i`` sends its
    ``n / p`` for rank ``i + s``. Segment ``src * p + dst`` is what rank ``src`` has for ``dst``."""
    ports, n = _check(ports, n_bytes)
    p = len(ports)
    rounds = [
        Round(
            tuple(
                Transfer(ports[i], ports[(i + s) % p], (i * p + (i + s) % p,), False)
                for i in range(p)
            ),
            f"shift {s}",
        )
        for s in range(1, p)
    ]
    return Collective("all-to-all (shifts)", "all-to-all", ports, n, n / p, tuple(rounds))


def all_to_all_ring(ports: Sequence[int], n_bytes: float) -> Collective:
    """All-to-all relayed along a fixed one-way ring ``i -> i + 1``: what rank ``i`` has for
    rank ``i + d`` travels ``d`` hops; round ``r = 1 .. p - 1`` carries ``p - r`` pieces of
    ``n / p`` per port, ``(p - 1) / 2 n`` bytes in all. Its links are one directed cycle, which
    a matching cannot hold (a feed-forward mesh can, as one permutation): the static baseline
    of the reconfiguring all-to-alls."""
    ports, n = _check(ports, n_bytes)
    p = len(ports)
    rounds = []
    for r in range(1, p):
        ts = []
        for i in range(p):
            src = (i - r + 1) % p
            segs = tuple(src * p + (src + d) % p for d in range(r, p))
            ts.append(Transfer(ports[i], ports[(i + 1) % p], segs, False))
        rounds.append(Round(tuple(ts), f"relay {r}"))
    return Collective("all-to-all (static ring)", "all-to-all", ports, n, n / p, tuple(rounds))


def all_to_all_pairs(ports: Sequence[int], n_bytes: float) -> Collective:
    """All-to-all through the all-to-all cover: one round per matching of the circle method
    (``p - 1`` perfect matchings for even ``p``, ``p`` for odd), each pair exchanging its
    ``n / p`` both ways, so every round is a single matching."""
    ports, n = _check(ports, n_bytes)
    p = len(ports)
    rounds = []
    for m in circle_rounds(p, 0):
        ts = []
        for a, b in m.pairs:
            ts.append(Transfer(ports[a], ports[b], (a * p + b,), False))
            ts.append(Transfer(ports[b], ports[a], (b * p + a,), False))
        rounds.append(Round(tuple(ts), "cover matching"))
    return Collective("all-to-all (cover)", "all-to-all", ports, n, n / p, tuple(rounds))


def straggler_all_reduce(ports: Sequence[int], n_bytes: float, straggler: int = -1) -> Collective:
    """Straggler-aware all-reduce: while rank ``straggler`` is late, the ``m = p - 1`` ready
    ranks run a ring reduce-scatter among themselves (rounds labelled ``"ready"``: ready rank
    ``k`` ends with chunk ``k``, ``n / m`` bytes, reduced over the ready ranks). Once the
    straggler arrives, the completion (rounds labelled ``"completion"``), one chunk per port
    direction per round: in round ``k < m`` the straggler and ready rank ``k`` swap chunk ``k``
    (each reduces what it gets, so both hold it finished); meanwhile, and afterwards (the
    straggler joining in once its swaps are done), ranks are paired greedily, neediest first, to
    pass on finished chunks, the rarest first, until every rank holds every chunk.

    The completion is this greedy schedule of our own, at least ``p`` rounds (see
    :func:`straggler_cost` for the bound and the published cost model); it takes e.g. 10 rounds
    for 8 ranks and 76 for 64.
    """
    ports, n = _check(ports, n_bytes, at_least=3)
    s_port = ports[straggler]
    ready = [q for q in ports if q != s_port]
    m = len(ready)
    pre = [Round(r.transfers, "ready") for r in _ring_phase(ready, 0, True, "ready")]
    chunk = [_owned_after_ring(ready, k) for k in range(m)]
    rounds = tuple(pre + _completion(s_port, ready, chunk))
    return Collective("straggler-aware all-reduce", "all-reduce", ports, n, n / (2 * m), rounds)


def _completion(s_port: int, ready: Sequence[int], chunk: Sequence[tuple[int, ...]]) -> list[Round]:
    """The straggler-aware all-reduce's completion rounds (see :func:`straggler_all_reduce`)."""
    m = len(ready)
    have: dict[int, set[int]] = {q: set() for q in ready}  # finished chunks held
    have[s_port] = set()
    rounds = []
    t = 0
    while t < m or any(len(h) < m for h in have.values()):
        ts: list[Transfer] = []
        nxt = {q: set(h) for q, h in have.items()}
        busy = set()
        if t < m:
            q = ready[t]
            ts += [Transfer(s_port, q, chunk[t], True), Transfer(q, s_port, chunk[t], True)]
            nxt[q].add(t)
            nxt[s_port].add(t)
            busy = {q, s_port}
        count = {c: sum(c in h for h in have.values()) for c in range(m)}
        free = sorted((q for q in have if q not in busy), key=lambda q: len(have[q]))
        paired: set[int] = set()
        for a in free:
            if a in paired:
                continue
            best: tuple[tuple[int, int], int] | None = None
            for b in free:
                if b == a or b in paired:
                    continue
                useful = bool(have[b] - have[a]) + bool(have[a] - have[b])
                if useful and (best is None or (useful, -len(have[b])) > best[0]):
                    best = ((useful, -len(have[b])), b)
            if best is None:
                continue
            b = best[1]
            paired |= {a, b}
            for x, y in ((a, b), (b, a)):
                gift = have[y] - have[x]
                if gift:
                    c = min(gift, key=lambda c: (count[c], c))
                    ts.append(Transfer(y, x, chunk[c], False))
                    nxt[x].add(c)
        rounds.append(Round(tuple(ts), "completion"))
        have = nxt
        t += 1
    return rounds


def _owned_after_ring(ports: Sequence[int], i: int) -> tuple[int, ...]:
    """The segments rank ``i`` holds fully reduced after :func:`_ring_phase` reduce-scatter."""
    p = len(ports)
    return ((i + 1) % p, p + (i - 1) % p)


def holdings(c: Collective) -> dict[int, dict[int, frozenset[int]]]:
    """Replay ``c``: for each port, each segment it holds and the ranks whose data it sums.

    Start: every rank holds every segment of its own data (all-to-all: only the segments
    ``i * p + j`` it owns; all-gather: only its own share). Raises :class:`SettingsError` when a
    reduction would count a rank's data twice.
    """
    p = len(c.ports)
    n_seg = round(c.n_bytes / c.segment_bytes) if c.kind != "all-to-all" else p * p
    state: dict[int, dict[int, frozenset[int]]] = {}
    for i, port in enumerate(c.ports):
        if c.kind == "all-to-all":
            segs = range(i * p, (i + 1) * p)
        elif c.kind == "all-gather":
            segs = _owned_after_ring(c.ports, i)
        else:
            segs = range(n_seg)
        state[port] = {s: frozenset({i}) for s in segs}
    for k, r in enumerate(c.rounds):
        before = {q: dict(h) for q, h in state.items()}
        for t in r.transfers:
            for s in t.segments:
                if s not in before[t.src]:
                    raise SettingsError(f"round {k}: port {t.src} sends segment {s} it lacks")
                got = before[t.src][s]
                mine = state[t.dst].get(s, frozenset())
                if t.reduce and mine & got:
                    raise SettingsError(f"round {k}: segment {s} reduced twice at {t.dst}")
                state[t.dst][s] = mine | got if t.reduce else got
    return state


# --- timing -----------------------------------------------------------------------------------


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
    """One step's timing (s): reconfiguration from ``start_s``, then traffic to ``end_s``."""

    label: str
    start_s: float
    reconfigure_s: float
    end_s: float


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
    def duty_cycle(self) -> float:
        """Fraction of the total spent moving traffic (alpha included), not reconfiguring."""
        return 1.0 - self.reconfigure_s / self.total_s if self.total_s else 1.0


def electrical_timing(c: Collective, link: Link, start_s: float = 0.0) -> CollectiveTiming:
    """``c`` on an ideal non-blocking electrical switch of the same port bandwidth: each round
    costs ``alpha + (most loaded port direction's bytes) / bandwidth``, no reconfiguration."""
    out, t = [], start_s
    for r in c.rounds:
        end = t + link.step_s(c.round_bytes(r))
        out.append(StepTime(r.label, t, 0.0, end))
        t = end
    return CollectiveTiming(tuple(out))


def circuit_timing(
    s: CircuitSchedule,
    link: Link,
    reconfigure: float | ReconfigurationModel | None = None,
    first_configured: bool = False,
) -> CollectiveTiming:
    """``s`` on the circuit switch: before each step whose matching differs from the previous
    one, a reconfiguration: ``reconfigure`` s (a constant), or a model ``(previous plan or None,
    plan) -> s`` on the steps' plans (default: the firmware's :class:`HeaterWriteModel`, which
    needs a schedule compiled with a fabric). ``first_configured``: the first matching is set
    before the collective starts (no reconfiguration before step 0). Then the step costs
    ``alpha + (most loaded port direction's bytes) / bandwidth``: a port has one circuit per
    step, so that is its circuit's load.
    """
    model: Callable[[SwitchPlan | None, SwitchPlan], float] | None = None
    if reconfigure is None:
        reconfigure = HeaterWriteModel()
    if callable(reconfigure):
        model = reconfigure
        if any(st.plan is None for st in s.steps):
            raise SettingsError("a reconfiguration model needs a schedule compiled with a fabric")
    elif not (math.isfinite(reconfigure) and reconfigure >= 0):
        raise SettingsError(f"reconfigure must be >= 0 s, got {reconfigure!r}")
    seg = s.collective.segment_bytes
    out, t = [], 0.0
    for i, st in enumerate(s.steps):
        prev = s.steps[i - 1] if i else None
        if (prev is not None and prev.matching == st.matching) or (i == 0 and first_configured):
            rc = 0.0
        elif model is not None:
            assert st.plan is not None
            rc = model(prev.plan if prev is not None else None, st.plan)
        else:
            rc = float(reconfigure)  # type: ignore[arg-type]
        end = t + rc + link.step_s(_load(st.transfers, seg))
        out.append(StepTime(st.label, t, rc, end))
        t = end
    return CollectiveTiming(tuple(out))


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


def straggler_cost(p: int, n_bytes: float, link: Link, delay_s: float) -> StragglerCost:
    """The alpha-beta cost model of the straggler-aware all-reduce against ring all-reduce.

    Method: "Accelerating AllReduce with a Persistent Straggler" (A. Devraj, E. Ding,
    A. Vijaya Kumar, R. Kleinberg, R. Singh; published as StragglAR). ``p`` ranks, one of them
    late by ``delay_s``; buffers of ``n_bytes``; ``alpha``, ``beta = 1 / bandwidth`` of ``link``;
    any rank reaches any other in one step (a non-blocking switch), full-duplex ports.

    - ring all-reduce cannot start before the straggler: ``2 (p - 1) alpha + 2 (p - 1) / p n beta``
      after it arrives;
    - the straggler-aware one runs a reduce-scatter among the ``m = p - 1`` ready ranks during
      the delay (``(m - 1) alpha + (m - 1) / m n beta``; whatever of it outlasts the delay is
      added), then a completion of ``p`` rounds of ``n / m`` bytes:
      ``p alpha + p / (p - 1) n beta``.

    Assumed here (the paper's completion schedule itself is not reproduced): ``p`` rounds of
    one chunk per port is the least a completion can take when a port exchanges one chunk per
    round: every ready rank must receive the straggler's part of its own chunk and the ``m - 1``
    finished chunks of the others, and no chunk is finished before the first round. The
    bandwidth term then tends to ``n beta`` (the straggler must send and receive its whole
    buffer), half of ring's ``2 n beta``: the speed-up tends to 2 as ``p`` grows, the published
    theoretical limit.
    """
    if isinstance(p, bool) or not isinstance(p, int) or p < 3:
        raise SettingsError(f"p must be an integer >= 3 ranks, got {p!r}")
    _, n = _check([0, 1], n_bytes)
    if not (math.isfinite(delay_s) and delay_s >= 0):
        raise SettingsError(f"delay_s must be >= 0 s, got {delay_s!r}")
    a, b = link.alpha_s, 1.0 / link.bandwidth_Bps
    m = p - 1
    ring = 2 * (p - 1) * a + 2 * (p - 1) / p * n * b
    ready_rs = (m - 1) * a + (m - 1) / m * n * b
    completion = p * a + p / m * n * b
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
        out.append(StepTime(st.label, st.start_s + shift, st.reconfigure_s, st.end_s + shift))
    return CollectiveTiming(tuple(out))
