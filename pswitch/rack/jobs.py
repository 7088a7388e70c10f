"""A training job on the rack and the time of its step on each fabric: its computation, then
its parallelism groups' collectives one phase after the other (tensor-parallel all-reduces,
pipeline sends, data-parallel all-reduces), as :func:`firmware.fabric.training_step` orders
them. Times in s, bytes in bytes.

Ranks are ordered as Megatron-LM orders them (tensor groups innermost, pipeline stages
outermost): rank ``r = (stage * dp + replica) * tp + shard`` on the job's ``r``-th accelerator.
Each fabric prices a phase on the accelerators of one of its groups (all groups of a phase run
at once, alike):

- photonic, circuits set per job: an accelerator's ports are split between the rings it is in,
  one share a phase (the rest to the data-parallel ring); per phase or per step: every phase
  has every port, and the chips reconfigure before it (the first phase's reconfiguration hides
  behind the computation when per phase);
- ideal: every phase at the photonic rack's full bandwidth, no reconfiguration;
- server domain: each group over the scale-up domain inside a server, hierarchically across;
- torus: each phase on its share of the dimensions the job's block spans.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from firmware import fabric as ff
from photonics.errors import SettingsError
from pswitch.rack import model


@dataclass(frozen=True)
class JobSpec:
    """A job: ``size`` accelerators arriving at ``arrival_s`` for ``steps`` steps of
    ``compute_s`` (s) then its collectives: ``tp`` x ``pp`` x data-parallel replicas
    (``size / (tp pp)``), all-reducing ``tp_bytes`` in each tensor group and ``dp_bytes`` in each
    data-parallel group (with the ``collective`` of :data:`pswitch.rack.model.COLLECTIVES`),
    each pipeline stage sending ``pp_bytes`` to the next. ``straggler_s``: one accelerator
    reaches each data-parallel all-reduce that late (a persistent straggler): ring and
    halving-doubling wait for it; the straggler-aware all-reduce (``"straggler"``) works
    meanwhile (:func:`firmware.fabric.straggler_cost`, at the phase's bandwidth)."""

    name: str
    size: int
    steps: int
    compute_s: float
    dp_bytes: float
    arrival_s: float = 0.0
    collective: str = "ring"
    tp: int = 1
    pp: int = 1
    tp_bytes: float = 0.0
    pp_bytes: float = 0.0
    straggler_s: float = 0.0

    def __post_init__(self) -> None:
        for key in ("size", "steps", "tp", "pp"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SettingsError(
                    f"job {self.name}: {key} must be an integer >= 1, got {value!r}"
                )
        if self.size % (self.tp * self.pp):
            raise SettingsError(
                f"job {self.name}: size {self.size} is no multiple of tp x pp = {self.tp * self.pp}"
            )
        if self.collective not in model.COLLECTIVES or self.collective == "chain":
            raise SettingsError(f"job {self.name}: unknown all-reduce {self.collective!r}")
        for key in ("compute_s", "dp_bytes", "tp_bytes", "pp_bytes", "arrival_s", "straggler_s"):
            value = getattr(self, key)
            if not (isinstance(value, int | float) and np.isfinite(value) and value >= 0):
                raise SettingsError(f"job {self.name}: {key} must be >= 0, got {value!r}")

    @property
    def dp(self) -> int:
        return self.size // (self.tp * self.pp)

    def phases(self) -> list[tuple[str, str, int, float]]:
        """The step's phases that move bytes, in order: (kind, collective, group size,
        bytes)."""
        plan = [
            ("tp", self.collective, self.tp, self.tp_bytes),
            ("pp", "chain", self.pp, self.pp_bytes),
            ("dp", self.collective, self.dp, self.dp_bytes),
        ]
        return [p for p in plan if p[2] > 1 and p[3] > 0]

    def group(self, kind: str, accelerators: Sequence[int]) -> tuple[int, ...]:
        """The first group of ``kind`` (``tp``, ``pp``, ``dp``) on ``accelerators``."""
        at = list(accelerators)
        if kind == "tp":
            return tuple(at[: self.tp])
        if kind == "dp":
            return tuple(at[r * self.tp] for r in range(self.dp))
        return tuple(at[s * self.dp * self.tp] for s in range(self.pp))


def step_s(
    rack: model.Rack,
    fabric: str,
    how: model.Reconfigure,
    job: JobSpec,
    accelerators: Sequence[int],
    dims: Callable[[Sequence[int]], int],
) -> float:
    """One step of ``job`` on ``accelerators`` over ``fabric``, s (see the module's text);
    ``dims`` gives the torus dimensions a set of accelerators spans."""
    phases = job.phases()
    total = job.compute_s
    if fabric == "photonic" and how == "job":
        share = rack.ports // max(len(phases), 1)
        if phases and share < 1:
            raise SettingsError(
                f"job {job.name}: {len(phases)} rings on {rack.ports} ports; reconfigure per "
                f"phase or per step"
            )
        shares = [share] * len(phases)
        if shares:
            shares[-1] += rack.ports - share * len(phases)  # the rest to the last (data) ring
    for i, (kind, collective, k, n) in enumerate(phases):
        members = job.group(kind, accelerators)
        # a straggler-aware all-reduce is priced from ring's time on the same links
        priced = "ring" if collective == "straggler" else collective
        if fabric == "photonic":
            mode = how if how == "job" or i == 0 else "step"
            held = shares[i] if how == "job" else None
            t = model.photonic_s(rack, priced, k, n, mode, held)
        elif fabric == "ideal":
            t = model.ideal_s(rack, priced, k, n)
        elif fabric == "server":
            counts = np.bincount([rack.server_of(a) for a in members], minlength=1)
            t = model.server_domain_s(rack, priced, tuple(int(c) for c in counts), n)
        else:
            spans = max(1, dims(accelerators) // len(phases))
            t = model.torus_s(rack, priced, k, n, spans)
        if kind == "dp" and (job.straggler_s > 0 or collective == "straggler"):
            t = job.straggler_s + _late(rack, collective, k, n, t, job.straggler_s)
        total += t
    return total


def _late(
    rack: model.Rack, collective: str, k: int, n: float, ring_s: float, delay: float
) -> float:
    """A data-parallel all-reduce's time from the straggler's arrival (s): as priced
    (``ring_s``) for ring and halving-doubling; for the straggler-aware one the published cost
    model at the bandwidth that gives ring its time on these links."""
    if collective != "straggler" or k < 3:
        return ring_s
    alpha = rack.alpha_us * 1e-6
    beta = (ring_s - 2 * (k - 1) * alpha) / (2 * (k - 1) / k * n)
    link = ff.Link(bandwidth_Bps=1 / beta, alpha_s=alpha)
    return ff.straggler_cost(k, n, link, delay).straggler_aware_s
