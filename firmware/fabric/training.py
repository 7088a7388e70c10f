"""A hybrid-parallel training step on the switch: data-, tensor- and pipeline-parallel groups on
its ports, their computation and communication phases, one after the other, as one
:class:`~firmware.fabric.collectives.Collective` that compiles, times and runs on the switch as
any other. Pure logic, no I/O. Bytes, s.

The step, as modelled here (the phases of a training step that one circuit configuration per
parallelism phase serves; no micro-batch pipelining, so no pipeline bubble):

1. the forward pass (``forward_s`` of computation), then an all-reduce of ``tp_bytes`` in every
   tensor-parallel group (the activations of its sharded layers), all groups at once;
2. ``pp_bytes`` of activations sent from each pipeline stage to the next, every stage at once;
3. the backward pass (``backward_s``), then an all-reduce of ``dp_bytes`` in every
   data-parallel group (the gradients).

The switch reconfigures between phases; while the ranks compute, its circuits are idle, so a
reconfiguration before a phase that follows computation overlaps it
(:func:`~firmware.fabric.circuit_timing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from firmware.fabric.collective_sweep import ALL_REDUCES
from firmware.fabric.collectives import Collective, Round, Transfer, _check
from firmware.fabric.jobs import check_ports
from photonics.errors import PortError, SettingsError

Kind = Literal["tp", "dp", "pp"]


@dataclass(frozen=True)
class HybridJob:
    """``dp x tp x pp`` ranks on switch ``ports``: rank ``r = (stage * dp + replica) * tp +
    shard`` on ``ports[r]`` (tensor groups innermost, pipeline stages outermost, as Megatron-LM
    orders them)."""

    dp: int
    tp: int
    pp: int
    ports: tuple[int, ...]

    def __post_init__(self) -> None:
        for name in ("dp", "tp", "pp"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise SettingsError(f"{name} must be an integer >= 1, got {v!r}")
        ports = check_ports("ports", self.ports)
        if len(ports) != self.dp * self.tp * self.pp:
            raise PortError(
                f"dp x tp x pp = {self.dp * self.tp * self.pp} ranks need as many ports, "
                f"got {len(ports)}"
            )
        object.__setattr__(self, "ports", ports)

    def port(self, stage: int, replica: int, shard: int) -> int:
        return self.ports[(stage * self.dp + replica) * self.tp + shard]

    def groups(self, kind: Kind) -> list[tuple[int, ...]]:
        """The port groups of one kind: ``"tp"`` (a group per stage and replica, its shards),
        ``"dp"`` (per stage and shard, its replicas), ``"pp"`` (per replica and shard, its
        stages in order)."""
        s, d, t = range(self.pp), range(self.dp), range(self.tp)
        if kind == "tp":
            return [tuple(self.port(i, j, k) for k in t) for i in s for j in d]
        if kind == "dp":
            return [tuple(self.port(i, j, k) for j in d) for i in s for k in t]
        if kind == "pp":
            return [tuple(self.port(i, j, k) for i in s) for j in d for k in t]
        raise SettingsError(f"a group kind is 'tp', 'dp' or 'pp', got {kind!r}")


@dataclass(frozen=True)
class StepSettings:
    """One training step's computation (s, per rank) and traffic (bytes per rank): see the
    module's text; ``all_reduce``: the algorithm of the tensor and data phases (a key of
    :data:`~firmware.fabric.collective_sweep.ALL_REDUCES`)."""

    forward_s: float
    backward_s: float
    tp_bytes: float
    dp_bytes: float
    pp_bytes: float
    all_reduce: str = "ring"

    def __post_init__(self) -> None:
        for name in ("forward_s", "backward_s", "tp_bytes", "dp_bytes", "pp_bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < float("inf"):
                raise SettingsError(f"{name} must be a finite number >= 0, got {v!r}")
        if self.all_reduce not in ALL_REDUCES:
            known = list(ALL_REDUCES)
            raise SettingsError(f"all_reduce must be one of {known}, got {self.all_reduce!r}")


def in_parallel(cs: Sequence[Collective], name: str) -> Collective:
    """Collectives of one kind on disjoint ports at once: round ``k`` of the result is every
    collective's round ``k`` (they have the same rounds when their groups have one size)."""
    ports = [q for c in cs for q in c.ports]
    check_ports("ports", ports)
    n_rounds = {len(c.rounds) for c in cs}
    if len(n_rounds) != 1:
        raise SettingsError(f"collectives run in parallel need as many rounds, got {n_rounds}")
    rounds = tuple(
        Round(tuple(t for c in cs for t in c.rounds[k].transfers), cs[0].rounds[k].label)
        for k in range(n_rounds.pop())
    )
    first = cs[0]
    return Collective(name, first.kind, tuple(ports), first.n_bytes, first.segment_bytes, rounds)


def in_sequence(phases: Sequence[tuple[str, Collective, float]], name: str) -> Collective:
    """``(label, collective, compute_s)`` phases one after the other: each collective's rounds,
    labelled ``label``, with their own segment size, ``compute_s`` (s) before the first."""
    rounds: list[Round] = []
    for label, c, compute_s in phases:
        for k, r in enumerate(c.rounds):
            rounds.append(
                replace(
                    r,
                    label=label,
                    compute_s=compute_s if k == 0 else 0.0,
                    segment_bytes=c.segment_bytes if r.segment_bytes is None else r.segment_bytes,
                )
            )
    ports = tuple(dict.fromkeys(q for _, c, _ in phases for q in c.ports))
    n = max(c.n_bytes for _, c, _ in phases)
    return Collective(name, "training step", ports, n, n, tuple(rounds))


def sends(chains: Sequence[Sequence[int]], n_bytes: float) -> Collective:
    """Every port of each chain sends ``n_bytes`` to the next port of its chain, all at once:
    one round (a pipeline's activations, stage to stage)."""
    transfers = [
        Transfer(chain[i], chain[i + 1], (0,), False)
        for chain in chains
        for i in range(len(chain) - 1)
    ]
    ports, n = _check([q for chain in chains for q in chain], n_bytes, at_least=1)
    return Collective("pipeline sends", "send", ports, n, n, (Round(tuple(transfers)),))


def training_step(job: HybridJob, step: StepSettings) -> Collective:
    """One training step of ``job`` (see the module's text) as one collective, its rounds
    labelled ``"tp"``, ``"pp"`` and ``"dp"``; a phase of groups of one rank, or of no bytes,
    has no rounds and its computation moves to the next phase (after the last: to the first,
    as the next step's)."""
    make = ALL_REDUCES[step.all_reduce]
    phases: list[tuple[str, Collective, float]] = []
    carry = step.forward_s
    plan: list[tuple[Kind, float, float]] = [
        ("tp", step.tp_bytes, 0.0),
        ("pp", step.pp_bytes, step.backward_s),
        ("dp", step.dp_bytes, 0.0),
    ]
    for kind, n, compute_after in plan:
        size = {"tp": job.tp, "dp": job.dp, "pp": job.pp}[kind]
        if size > 1 and n > 0:
            groups = job.groups(kind)
            if kind == "pp":
                c = sends(groups, n)
            else:
                c = in_parallel([make(g, n) for g in groups], f"{kind} {step.all_reduce}")
            phases.append((kind, c, carry))
            carry = 0.0
        carry += compute_after
    if not phases:
        raise SettingsError("the step moves no bytes: every group has one rank or no traffic")
    label, c, before = phases[0]
    phases[0] = (label, c, before + carry)  # steps repeat: what is left precedes the next's
    return in_sequence(phases, f"training step dp{job.dp} tp{job.tp} pp{job.pp}")
