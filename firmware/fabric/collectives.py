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

Compiling and timing live in :mod:`firmware.fabric.collective_timing`: the alpha-beta model,
where a round or step costs ``alpha + bytes / bandwidth`` for the most loaded port direction,
plus on the circuit switch the reconfiguration before each step whose matching differs from the
previous step's.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from firmware.fabric.covers import circle_rounds
from firmware.fabric.jobs import check_ports
from photonics.errors import PortError, SettingsError


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
    """Transfers that run at the same time; ``label`` says which phase they belong to;
    ``compute_s``: computation before them (s); ``segment_bytes``: the size of their
    segments when not the collective's (a training step joins collectives of different
    buffers, :mod:`firmware.fabric.training`)."""

    transfers: tuple[Transfer, ...]
    label: str = ""
    compute_s: float = 0.0
    segment_bytes: float | None = None

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

    def round_bytes(self, r: Round, transfers: Sequence[Transfer] | None = None) -> float:
        """Bytes of the most loaded port direction (sent or received) of round ``r``, or of
        some of its ``transfers``."""
        seg = self.segment_bytes if r.segment_bytes is None else r.segment_bytes
        return _load(r.transfers if transfers is None else transfers, seg)


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
    straggler joining in once its swaps are done), ranks are paired greedily to pass on
    finished chunks, the rarest first, until every rank holds every chunk.

    The completion is this greedy schedule of our own (the published one is not reproduced):
    ranks are paired neediest first, or in a few seeded random orders (:data:`ORDERS`, fewer
    for many ranks), and the shortest completion is kept. Against the published
    ``p - 2 + log2 p`` rounds (:func:`~firmware.fabric.collective_timing.completion_rounds`) it
    takes e.g. 9 for 8 ranks, 20 for 16 and 70 for 64.
    """
    ports, n = _check(ports, n_bytes, at_least=3)
    s_port = ports[straggler]
    ready = [q for q in ports if q != s_port]
    m = len(ready)
    pre = [Round(r.transfers, "ready") for r in _ring_phase(ready, 0, True, "ready")]
    chunk = [_owned_after_ring(ready, k) for k in range(m)]
    tries = max(1, ORDERS * 8 // (m + 1)) if m < 64 else 1  # beyond 64 ranks one try is slow
    best = min((_completion(s_port, ready, chunk, seed) for seed in range(tries)), key=len)
    rounds = tuple(pre + best)
    return Collective("straggler-aware all-reduce", "all-reduce", ports, n, n / (2 * m), rounds)


#: Orders of pairing the straggler-aware all-reduce's completion tries for 8 ranks: the
#: neediest rank first, then seeded random orders (in proportion fewer for more ranks).
ORDERS = 32


def _completion(
    s_port: int, ready: Sequence[int], chunk: Sequence[tuple[int, ...]], seed: int = 0
) -> list[Round]:
    """The straggler-aware all-reduce's completion rounds (see :func:`straggler_all_reduce`);
    ``seed`` 0 pairs the neediest rank first, another a random order drawn from it."""
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
        if seed:
            random.Random(seed * 100_003 + t).shuffle(free)
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
