"""Answers across message sizes, rank counts and straggler delays: which all-reduce wins on the
circuit switch, where reconfiguring per step starts to pay against a static ring, and how much
the straggler-aware all-reduce gains over ring. Pure logic, no I/O: the reconfiguration times
come from a callable (a model, or a switch's own figures through
:meth:`firmware.sdk.Switch.run_collective`). Bytes, s, bytes/s.

Under the alpha-beta model a collective's time is affine in the message size ``n``: its
matchings, hence its reconfigurations, do not depend on ``n``, and each step costs
``alpha + bytes / bandwidth``. So each (algorithm, ranks) is compiled and run once, at two
sizes, and every other size and every crossover follows exactly (:class:`Affine`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from firmware.electronics import BENCH, DriverClass
from firmware.fabric.collective_timing import (
    CircuitSchedule,
    Link,
    circuit_timing,
    compile_collective,
    electrical_timing,
    straggler_cost,
    with_straggler,
)
from firmware.fabric.collectives import (
    Collective,
    all_to_all_pairs,
    all_to_all_ring,
    halving_doubling_all_reduce,
    ring_all_reduce,
    straggler_all_reduce,
)
from firmware.fabric.schedules import HeaterWriteModel, ReconfigurationModel
from photonics.chips.switch import Fabric, FeedForwardFabric
from photonics.matching import Permutation

#: What a step's reconfigurations are: a constant (s), a model, or one time per step (s).
Reconfigurations = float | ReconfigurationModel | Sequence[float]
#: The reconfiguration times of a compiled schedule (e.g. ``switch.run_collective(s, link)``).
Reconfigure = Callable[[CircuitSchedule], Reconfigurations]
#: The all-reduces compared, by name.
ALL_REDUCES: dict[str, Callable[[Sequence[int], float], Collective]] = {
    "ring": ring_all_reduce,
    "halving-doubling": halving_doubling_all_reduce,
}


@dataclass(frozen=True)
class Affine:
    """A time affine in the message size: ``fixed_s + per_byte_s * n_bytes`` (s)."""

    fixed_s: float
    per_byte_s: float

    def at(self, n_bytes: float) -> float:
        return self.fixed_s + self.per_byte_s * n_bytes


#: The sizes (bytes) a line is measured at: far apart, so its slope keeps its precision.
_SMALL, _LARGE = 1.0, 2.0**40


def affine(time_at: Callable[[float], float]) -> Affine:
    """The line through ``time_at`` at 1 byte and 1 TiB (s)."""
    small, large = time_at(_SMALL), time_at(_LARGE)
    slope = (large - small) / (_LARGE - _SMALL)
    return Affine(small - slope * _SMALL, slope)


def crossover(a: Affine, b: Affine) -> float | None:
    """The size (bytes) above which ``a`` is faster than ``b``: None when ``a`` never gets
    ahead (its per-byte cost is not smaller, to 1e-9), 0 when it is ahead at every size."""
    if a.per_byte_s >= b.per_byte_s * (1 - 1e-9):
        return None
    return max(0.0, (a.fixed_s - b.fixed_s) / (b.per_byte_s - a.per_byte_s))


def optical_line(
    make: Callable[[Sequence[int], float], Collective],
    p: int,
    fabric: Fabric,
    link: Link,
    reconfigure: Reconfigure,
) -> tuple[Affine, float]:
    """``make`` for ranks on ports 0..p-1 of ``fabric``, compiled once (its matchings do not
    depend on the size) and reconfigured as ``reconfigure`` says (asked once): its time on the
    circuit switch as a line in the size, and the time it spends reconfiguring (s)."""
    s = compile_collective(make(range(p), 1.0), fabric.n_ports, fabric)
    times = reconfigure(s)

    def at(n: float) -> float:
        sized = compile_collective(make(range(p), n), fabric.n_ports, fabric)
        return circuit_timing(sized, link, times).total_s

    return affine(at), circuit_timing(s, link, times).reconfigure_s


def electrical_line(
    make: Callable[[Sequence[int], float], Collective], p: int, link: Link
) -> Affine:
    """``make`` of ``p`` ranks on the ideal electrical switch, a line in the size."""
    return affine(lambda n: electrical_timing(make(range(p), n), link).total_s)


@dataclass(frozen=True)
class AllReduceLines:
    """Every all-reduce of :data:`ALL_REDUCES` for ``ranks`` ranks as lines in the size: on
    the circuit switch (``optical``, reconfiguring per step, ``reconfigure_s`` in all), on the
    electrical one, and on the *static ring* (:func:`static_ring`; feed-forward meshes only,
    else None)."""

    ranks: int
    optical: dict[str, Affine]
    reconfigure_s: dict[str, float]
    electrical: dict[str, Affine]
    static_ring: Affine | None

    def best(self, n_bytes: float) -> tuple[str, str]:
        """The fastest all-reduce at ``n_bytes`` on the circuit switch, and on the electrical."""
        o = min(self.optical, key=lambda k: self.optical[k].at(n_bytes))
        e = min(self.electrical, key=lambda k: self.electrical[k].at(n_bytes))
        return o, e

    def duty_cycle(self, name: str, n_bytes: float) -> float:
        """Traffic time over the total of all-reduce ``name`` at ``n_bytes`` on the switch."""
        return 1.0 - self.reconfigure_s[name] / self.optical[name].at(n_bytes)


def all_reduce_lines(
    p: int, fabric: Fabric, link: Link, reconfigure: Reconfigure, driver: DriverClass = BENCH
) -> AllReduceLines:
    """:class:`AllReduceLines` of ``p`` ranks on ports 0..p-1 of ``fabric`` (the static ring
    set by the ``driver`` class)."""
    optical, spent, electrical = {}, {}, {}
    for k, make in ALL_REDUCES.items():
        optical[k], spent[k] = optical_line(make, p, fabric, link, reconfigure)
        electrical[k] = electrical_line(make, p, link)
    static = None
    if isinstance(fabric, FeedForwardFabric):
        static = static_ring(ring_all_reduce, p, fabric, link, driver)
    return AllReduceLines(p, optical, spent, electrical, static)


def static_ring(
    make: Callable[[Sequence[int], float], Collective],
    p: int,
    fabric: FeedForwardFabric,
    link: Link,
    driver: DriverClass = BENCH,
) -> Affine:
    """``make`` of ``p`` ranks on the *static ring*: the one-way ring ``i -> i + 1``, which a
    feed-forward mesh holds as one permutation, set once from the idle chip (the heater write
    model of the ``driver`` class: every cell written, then settling; the firmware's matching
    commands cannot hold a one-way cycle, so no switch reports it), then ``make``'s rounds as on
    the electrical switch. For :func:`~firmware.fabric.all_to_all_ring` that is exactly its relay;
    for :func:`~firmware.fabric.ring_all_reduce` it is the textbook one-way ring all-reduce
    (``2 (p - 1)`` rounds of ``n / p`` a port, as the bidirectional ring's per direction)."""
    fabric.mesh.route(Permutation([(i + 1) % p if i < p else None for i in range(fabric.n_ports)]))
    once = HeaterWriteModel(driver).seconds(fabric.n_cells)
    return affine(lambda n: once + electrical_timing(make(range(p), n), link).total_s)


@dataclass(frozen=True)
class AllToAllCrossover:
    """The direct all-to-all through the cover (one reconfiguration a matching) against the
    static ring relay, ``ranks`` ranks: both as lines in the size, and the size (bytes) above
    which the cover is faster (None: never)."""

    ranks: int
    cover: Affine
    static_ring: Affine

    @property
    def crossover_bytes(self) -> float | None:
        return crossover(self.cover, self.static_ring)


def all_to_all_crossover(
    p: int,
    fabric: FeedForwardFabric,
    link: Link,
    reconfigure: Reconfigure,
    driver: DriverClass = BENCH,
) -> AllToAllCrossover:
    """:class:`AllToAllCrossover` of ``p`` ranks on ports 0..p-1 of ``fabric`` (the static ring
    set by the ``driver`` class)."""
    cover, _ = optical_line(all_to_all_pairs, p, fabric, link, reconfigure)
    return AllToAllCrossover(p, cover, static_ring(all_to_all_ring, p, fabric, link, driver))


@dataclass(frozen=True)
class StragglerPoint:
    """The straggler-aware all-reduce against ring for ``ranks`` ranks, one late by
    ``delay_s``, on the electrical switch, counted from the straggler's arrival as published
    (the delay itself is paid by both): the speed-up of the published cost model
    (:func:`~firmware.fabric.straggler_cost`) and of the schedule compiled here, ring's time
    over the straggler-aware one's."""

    ranks: int
    delay_s: float
    model_speedup: float
    compiled_speedup: float


def straggler_sweep(
    ranks: Sequence[int], delays_s: Sequence[float], n_bytes: float, link: Link
) -> list[StragglerPoint]:
    """:class:`StragglerPoint` for every rank count (>= 3) and delay (s): the speed-up grows
    with the delay until it hides the ready ranks' reduce-scatter, then stays."""
    out = []
    for p in ranks:
        ours = electrical_timing(straggler_all_reduce(range(p), n_bytes), link)
        ring = electrical_timing(ring_all_reduce(range(p), n_bytes), link).total_s
        for d in delays_s:
            model = straggler_cost(p, n_bytes, link, d).speedup
            out.append(StragglerPoint(p, d, model, ring / (with_straggler(ours, d).total_s - d)))
    return out
