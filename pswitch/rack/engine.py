"""Jobs over time on a rack: a SimPy discrete-event run of a trace of jobs (arrivals, sizes,
steps) and accelerator failures, on one fabric with one failure policy, measuring throughput,
job completion, utilization, fragmentation and the time lost to failures and reconfiguration.
Times in s.

A job (:class:`pswitch.rack.jobs.JobSpec`) runs ``steps`` training steps, each its
computation then its parallelism groups' collectives, priced on the accelerators it holds
(:func:`pswitch.rack.jobs.step_s`). Placement, by fabric:

- ``photonic``: any free accelerators (the switch gives any subset a ring at full bandwidth);
  its circuits are set when the job starts (one reconfiguration of the chips);
- ``ideal``: any free accelerators, the ideal non-blocking switch;
- ``server``: the fewest servers that hold the job, fullest first; a job spanning servers
  all-reduces hierarchically over their NICs;
- ``torus``: a contiguous block of the rack's fixed torus (with wrap-around), or the job
  waits; its collective uses the links of the dimensions the block spans.

When an accelerator of a running job fails, the job loses its step in progress and, by
policy: ``spare`` splices a free accelerator in (photonic: the chips reconfigure, then the job
restarts; electrical: the spare may sit in another server); ``migrate`` moves the job to a
fresh rack (``migrate_s``); with no free accelerator, the job waits for the repair. A failed
accelerator is repaired after ``repair_s``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import simpy

from photonics.errors import SettingsError
from pswitch.rack import model
from pswitch.rack.jobs import JobSpec
from pswitch.rack.jobs import step_s as job_step_s

Fabric = Literal["photonic", "ideal", "server", "torus"]
Policy = Literal["spare", "migrate"]
FABRICS: tuple[Fabric, ...] = ("photonic", "ideal", "server", "torus")


@dataclass(frozen=True)
class Failures:
    """Accelerator failures: each fails after an exponential time of mean ``mtbf_s`` (None:
    never), is repaired ``repair_s`` later; ``restart_s`` a job takes to restart after a
    swap (reload its state), ``migrate_s`` to move to a fresh rack; ``at_s``: failures at these
    times instead (each on a random busy accelerator), for a study's stated scenario."""

    mtbf_s: float | None = None
    repair_s: float = 3600.0
    restart_s: float = 1.0
    migrate_s: float = 600.0
    at_s: tuple[float, ...] = ()


@dataclass
class Result:
    """A run's record: ``rate`` (t, total steps/s of every running job, weighted by job size:
    accelerator-steps/s), the failures' times, per job its completion time and its step time
    at each (re)start, every placement a job was given (at its start and after each swap), the
    allocation when the most accelerators were held, and the totals (accelerator-s)."""

    fabric: str
    policy: str
    horizon_s: float
    accelerators: int
    rate: list[tuple[float, float]] = field(default_factory=list)
    failures: list[float] = field(default_factory=list)
    completion_s: dict[str, float] = field(default_factory=dict)
    step_s: dict[str, list[float]] = field(default_factory=dict)
    busy: float = 0.0
    fragmented: float = 0.0
    lost_failures: float = 0.0
    lost_reconfiguration: float = 0.0
    allocation: dict[str, tuple[int, ...]] = field(default_factory=dict)
    placements: list[tuple[int, ...]] = field(default_factory=list)
    busiest: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def metrics(self) -> dict[str, float]:
        """Throughput (accelerator-steps/s averaged over the horizon), mean job completion
        time, utilization, fragmentation (free accelerators no waiting job could use, as a
        fraction of the rack's time) and the time lost to failures and reconfiguration
        (accelerator-s, as fractions of the rack's time)."""
        total = self.accelerators * self.horizon_s
        done = list(self.completion_s.values())
        return {
            "throughput": _integral(self.rate, self.horizon_s) / self.horizon_s,
            "jct_s": float(np.mean(done)) if done else math.nan,
            "jobs_done": len(done),
            "utilization": self.busy / total,
            "fragmentation": self.fragmented / total,
            "lost_failures": self.lost_failures / total,
            "lost_reconfiguration": self.lost_reconfiguration / total,
        }


def _integral(steps: Sequence[tuple[float, float]], end: float) -> float:
    """The integral of a step function given as (time, value) changes, from 0 to ``end``."""
    total = 0.0
    for (t0, v), (t1, _) in zip(steps, [*steps[1:], (end, 0.0)], strict=True):
        total += v * (min(t1, end) - min(t0, end))
    return total


class Rack:
    """The rack's accelerators in time: free, busy, failed; placement by fabric."""

    def __init__(self, rack: model.Rack, fabric: Fabric, how: model.Reconfigure = "job") -> None:
        self.spec, self.fabric, self.how = rack, fabric, how
        self.free = set(range(rack.accelerators))
        self.failed: set[int] = set()

    def place(self, size: int) -> tuple[int, ...] | None:
        """Accelerators for a job of ``size`` now, or None."""
        if size > len(self.free):
            return None
        if self.fabric == "torus":
            return self._block(size)
        if self.fabric == "server":
            return self._fewest_servers(size)
        return tuple(sorted(self.free)[:size])

    def _fewest_servers(self, size: int) -> tuple[int, ...]:
        by = {}
        for a in sorted(self.free):
            by.setdefault(self.spec.server_of(a), []).append(a)
        out: list[int] = []
        for _, members in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            out += members[: size - len(out)]
            if len(out) == size:
                break
        return tuple(out)

    def _block(self, size: int) -> tuple[int, ...] | None:
        """The first free block of ``size`` accelerators on the torus (shapes with the fewest
        dimensions first: a ring, then a plane), with wrap-around."""
        dims = self.spec.torus_shape
        for shape in sorted(_shapes(size, dims), key=lambda s: (sum(x > 1 for x in s), s)):
            for origin in np.ndindex(*dims):
                cells = tuple(
                    int(
                        np.ravel_multi_index(
                            tuple((o + k) % d for o, k, d in zip(origin, at, dims, strict=True)),
                            dims,
                        )
                    )
                    for at in np.ndindex(*shape)
                )
                if all(c in self.free for c in cells):
                    return cells
        return None

    def dims(self, accelerators: Sequence[int]) -> int:
        """The torus dimensions a block of ``accelerators`` spans; 1 when they are no block
        (a spare spliced in far away): their ring then shares one link's path."""
        shape = self.spec.torus_shape
        coords = np.array(np.unravel_index(list(accelerators), shape))
        spans = [sorted(set(row.tolist())) for row in coords]
        runs = all(_cyclic_run(v, d) for v, d in zip(spans, shape, strict=True))
        if not runs or math.prod(len(v) for v in spans) != len(set(accelerators)):
            return 1
        return int(sum(len(v) > 1 for v in spans))

    def step_s(self, job: JobSpec, accelerators: Sequence[int]) -> float:
        """One step of ``job`` on ``accelerators``, s (:func:`pswitch.rack.jobs.step_s`)."""
        return job_step_s(self.spec, self.fabric, self.how, job, accelerators, self.dims)


class _Run:
    """A running job's state: its accelerators and its rate (accelerator-steps/s)."""

    def __init__(self, job: JobSpec, accelerators: tuple[int, ...]) -> None:
        self.job, self.accelerators, self.rate = job, accelerators, 0.0
        self.process: simpy.Process | None = None


def simulate(
    rack: model.Rack,
    fabric: Fabric,
    jobs: Sequence[JobSpec],
    failures: Failures = Failures(),
    policy: Policy = "spare",
    horizon_s: float | None = None,
    seed: int = 0,
    reconfigure: model.Reconfigure = "job",
) -> Result:
    """Run ``jobs`` on ``rack`` over ``fabric`` until they are done (or ``horizon_s``); a
    photonic job's circuits change per ``reconfigure``: once when it starts (``job``), or at
    every step of its all-reduce (``step``: compiled into the chips' matchings, each change
    timed by the rack's driver class)."""
    if fabric not in FABRICS:
        raise SettingsError(f"fabric must be one of {', '.join(FABRICS)}, got {fabric!r}")
    if policy not in ("spare", "migrate"):
        raise SettingsError(f"policy must be spare or migrate, got {policy!r}")
    too_big = [j.name for j in jobs if j.size > rack.accelerators]
    if too_big:
        raise SettingsError(f"jobs {too_big} need more than the rack's {rack.accelerators}")
    if reconfigure not in ("job", "phase", "step"):
        raise SettingsError(f"reconfigure must be job, phase or step, got {reconfigure!r}")
    env, rng = simpy.Environment(), np.random.default_rng(seed)
    pool = Rack(rack, fabric, reconfigure)
    out = Result(fabric, policy, 0.0, rack.accelerators, rate=[(0.0, 0.0)])
    queue: list[JobSpec] = []
    running: dict[str, _Run] = {}
    changed: list[simpy.Event] = [env.event()]  # fires when accelerators come free
    level = {"busy": [(0.0, 0.0)], "fragmented": [(0.0, 0.0)]}

    def record() -> None:
        out.rate.append((env.now, sum(r.rate for r in running.values())))
        held = sum(len(r.accelerators) for r in running.values())
        level["busy"].append((env.now, held))
        if held > sum(len(v) for v in out.busiest.values()):  # the allocation map's moment
            out.busiest = {name: r.accelerators for name, r in running.items()}
        # free accelerators enough in number for the waiting job, but not in shape
        blocked = bool(queue) and queue[0].size <= len(pool.free)
        blocked = blocked and pool.place(queue[0].size) is None
        level["fragmented"].append((env.now, len(pool.free) if blocked else 0))

    def freed() -> None:
        """Accelerators came free: jobs waiting to recover take them first, then the queue."""
        changed[0].succeed()
        changed[0] = env.event()
        env.process(later())

    def later():
        yield env.timeout(0)
        schedule()

    def schedule() -> None:
        while queue:
            got = pool.place(queue[0].size)
            if got is None:
                break
            job = queue.pop(0)
            pool.free -= set(got)
            run = running[job.name] = _Run(job, got)
            out.placements.append(got)
            run.process = env.process(life(run))
        record()

    def arrive(job: JobSpec):
        yield env.timeout(job.arrival_s)
        queue.append(job)
        schedule()

    def life(run: _Run):
        job, remaining = run.job, run.job.steps
        if fabric == "photonic":  # the job's circuits are set when it starts
            setup = model.reconfigure_s(rack)
            out.lost_reconfiguration += setup * job.size
            yield env.timeout(setup)
        step = pool.step_s(job, run.accelerators)
        out.step_s[job.name] = [step]
        while remaining:
            dead = [a for a in run.accelerators if a in pool.failed]
            if dead:  # one failed while the job was not running
                step = yield from recover(run, dead[0])
                out.step_s[job.name].append(step)
                continue
            run.rate = job.size / step
            record()
            start = env.now
            try:
                yield env.timeout(remaining * step)
                remaining = 0
            except simpy.Interrupt as failure:
                remaining -= int((env.now - start) // step)
                run.rate = 0.0
                record()
                down = env.now
                step = yield from recover(run, int(failure.cause))
                out.step_s[job.name].append(step)
                out.lost_failures += (env.now - down) * job.size
        out.completion_s[job.name] = env.now - job.arrival_s
        pool.free |= set(run.accelerators) - pool.failed
        del running[job.name]
        run.rate = 0.0
        freed()

    def recover(run: _Run, failed: int):
        """Bring ``run`` back after ``failed`` died; returns its new step time (s)."""
        job = run.job
        keep = run.accelerators = tuple(a for a in run.accelerators if a != failed)
        if policy == "migrate":  # to a fresh rack: this one's accelerators come free
            run.accelerators = ()
            pool.free |= set(keep) - pool.failed
            freed()
            yield env.timeout(failures.migrate_s)
            return pool.step_s(job, (*keep, failed))
        while True:
            spare = _spare(pool, keep)
            if spare is not None:
                break
            yield changed[0]
        pool.free.discard(spare)
        run.accelerators = (*keep, spare)
        out.placements.append(run.accelerators)
        wait = failures.restart_s
        if fabric == "photonic":
            swap = model.reconfigure_s(rack)
            out.lost_reconfiguration += swap * job.size
            wait += swap
        yield env.timeout(wait)
        return pool.step_s(job, run.accelerators)

    def fail(acc: int) -> None:
        pool.failed.add(acc)
        pool.free.discard(acc)
        out.failures.append(env.now)
        for run in running.values():
            if acc in run.accelerators and run.process is not None and run.rate > 0:
                run.process.interrupt(acc)
        env.process(repair(acc))
        record()

    def repair(acc: int):
        yield env.timeout(failures.repair_s)
        pool.failed.discard(acc)
        if not any(acc in r.accelerators for r in running.values()):
            pool.free.add(acc)
        freed()

    def random_failures():
        while failures.mtbf_s is not None:
            healthy = rack.accelerators - len(pool.failed)
            yield env.timeout(rng.exponential(failures.mtbf_s / max(healthy, 1)))
            alive = sorted(set(range(rack.accelerators)) - pool.failed)
            fail(int(rng.choice(alive)))

    def scripted_failures():
        for t in sorted(failures.at_s):
            yield env.timeout(t - env.now)
            busy = sorted(a for r in running.values() if r.rate > 0 for a in r.accelerators)
            if busy:
                fail(int(rng.choice(busy)))

    for job in jobs:
        env.process(arrive(job))
    env.process(random_failures())
    env.process(scripted_failures())
    if horizon_s is None:  # until every job is done
        while len(out.completion_s) < len(jobs) and env.peek() < math.inf:
            env.step()
        horizon_s = env.now
    else:
        env.run(until=horizon_s)
    record()  # the state at the end
    out.horizon_s = horizon_s
    out.busy = _integral(level["busy"], horizon_s)
    out.fragmented = _integral(level["fragmented"], horizon_s)
    out.allocation = {name: r.accelerators for name, r in running.items()}
    return out


def _cyclic_run(values: list[int], n: int) -> bool:
    """Whether ``values`` (sorted, distinct, in 0..n-1) are consecutive on a cycle of ``n``."""
    gaps = sum((b - a) % n != 1 for a, b in zip(values, [*values[1:], values[0]], strict=True))
    return len(values) in (1, n) or gaps == 1


def _shapes(size: int, dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every block shape of ``size`` accelerators that fits the torus ``dims``."""
    if not dims:
        return [()] if size == 1 else []
    return [
        (a, *rest)
        for a in range(1, dims[0] + 1)
        if size % a == 0
        for rest in _shapes(size // a, dims[1:])
    ]


def _spare(pool: Rack, keep: tuple[int, ...]) -> int | None:
    """The free accelerator that replaces ``failed`` (None: none yet): in a server rack one in
    the job's own servers first, else the lowest free one."""
    if not pool.free:
        return None
    if pool.fabric == "server":
        mine = {pool.spec.server_of(a) for a in keep}
        near = sorted(a for a in pool.free if pool.spec.server_of(a) in mine)
        if near:
            return near[0]
    return min(pool.free)
