"""The studies of ``pswitch rack``, each from a published work's stated setup
(:mod:`pswitch.rack.setups`) on the rack model (:mod:`pswitch.rack.model`) and the event engine
(:mod:`pswitch.rack.engine`). Each returns plain data (times s, bandwidths Gb/s) and says at
which reconfiguration time it holds (the rack's driver class). ``docs/rack.md`` explains them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from firmware import fabric as ff
from firmware.driver import DEFAULT_READ_S
from firmware.electronics import driver_class
from pswitch.rack import engine, model, setups, verify
from pswitch.rack.engine import Failures
from pswitch.rack.jobs import JobSpec


def checked(rack: model.Rack, matchings: list, count: int, seed: int) -> dict[str, Any] | None:
    """``count`` of ``matchings`` (drawn with ``seed``) applied to the emulated switch and
    verified (:func:`pswitch.rack.verify.verify`); None when ``count`` is 0."""
    if not count:
        return None
    rng = np.random.default_rng(seed)
    distinct = list(dict.fromkeys(matchings))
    picked = sorted(rng.choice(len(distinct), size=min(count, len(distinct)), replace=False))
    return verify.verify(rack, [distinct[i] for i in picked], seed)


def failover(
    driver: str = "product",
    mfu: float = setups.LLAMA_1B.mfu,
    steps: int = 20000,
    fail_at_s: tuple[float, ...] = (3600.0,),
    mtbf_s: float | None = None,
    restart_s: float = 1.0,
    seed: int = 0,
    check: int = 0,
) -> dict[str, Any]:
    """[L], [M]: one fine-tuning job (Llama-3.2-1B, 2-GPU DDP) on the prototype rack with
    spares, an accelerator of the job failing at each of ``fail_at_s`` (s), and with ``mtbf_s``
    others at random (None: none; repaired after an hour). Photonic: the spare
    is spliced in with both optical ports; electrical as built: the static torus, the spare
    spliced in over it, or the job migrated to a fresh rack (10 min). The job's throughput
    over the trace, each, and the swap: detection, the chips' reconfiguration, the restart;
    ``check`` of the photonic run's configurations verified on the emulated switch."""
    rack = replace(setups.PROTOTYPE, driver=driver)
    ft = replace(setups.LLAMA_1B, mfu=mfu)
    job = JobSpec("fine-tune", 2, steps, ft.compute_s(), ft.gradient_bytes())
    fail = Failures(mtbf_s, 3600.0, restart_s, 600.0, fail_at_s)
    runs = {
        "photonic, spare": engine.simulate(rack, "photonic", [job], fail, "spare", seed=seed),
        "torus, spare": engine.simulate(rack, "torus", [job], fail, "spare", seed=seed),
        "torus, migrate": engine.simulate(rack, "torus", [job], fail, "migrate", seed=seed),
    }
    rows = {}
    for name, r in runs.items():
        rows[name] = {
            "steps_per_s": steps / r.completion_s["fine-tune"],
            "step_s": r.step_s["fine-tune"],
            "failures": len(r.failures),
            "completion_s": r.completion_s["fine-tune"],
            **r.metrics(),
        }
    swap = DEFAULT_READ_S + model.reconfigure_s(rack)
    best_electrical = max(
        rows["torus, spare"]["steps_per_s"], rows["torus, migrate"]["steps_per_s"]
    )
    return {
        "study": "failover",
        "driver": driver,
        "mfu": mfu,
        "runs": rows,
        "timeline": {k: r.rate for k, r in runs.items()},
        "failure_times_s": runs["photonic, spare"].failures,
        "throughput_ratio": rows["photonic, spare"]["steps_per_s"] / best_electrical,
        # [L]/[M] leave the utilisation and the gradients' precision open: the steady ratio
        "open": {
            "mfu": {u: prototype_slice(u)["training_speedup"] for u in (0.15, 0.45, 0.6)},
            "fp32 gradients": prototype_slice(mfu, grad_bytes=4.0)["training_speedup"],
        },
        "swap": {
            "detect_s": DEFAULT_READ_S,
            "reconfigure_s": model.reconfigure_s(rack),
            "restart_s": restart_s,
            "total_s": swap + restart_s,
        },
        "verification": checked(rack, _rings(rack, runs["photonic, spare"]), check, seed),
    }


def _rings(rack: model.Rack, run: engine.Result) -> list:
    return [m for p in run.placements for m in verify.ring_matchings(p, rack.accelerators)]


def tenant_trace(
    jobs: int,
    seed: int,
    sizes: tuple[int, ...] = (1, 2, 4, 8, 16, 32),
    mean_gap_s: float = 60.0,
    stragglers: float = 0.0,
    collective: str = "ring",
) -> list[JobSpec]:
    """A tenant trace on [M]'s rack: Poisson arrivals ``mean_gap_s`` apart, slice sizes drawn
    uniformly from ``sizes`` (assumed: the TPUv4 slice-size distribution [M] samples is not
    public), each fine-tuning Llama-3.2-1B with DDP for 200 to 2000 steps; a fraction
    ``stragglers`` of the jobs has a persistent straggler, late by 0 to 30 ms a step ([S]'s
    measured delays reach about 30 ms), and uses the ``collective`` all-reduce (the others,
    ring: [S] profiles its straggler before choosing)."""
    rng = np.random.default_rng(seed)
    t, out, m = 0.0, [], setups.LLAMA_1B
    for i in range(jobs):
        t += rng.exponential(mean_gap_s)
        size = int(rng.choice(sizes))
        steps = int(rng.integers(200, 2001))
        late = float(rng.uniform(0, 0.03)) if rng.random() < stragglers else 0.0
        out.append(
            JobSpec(
                f"t{i}",
                size,
                steps,
                m.compute_s(),
                m.gradient_bytes(),
                t,
                collective,
                straggler_s=late,
            )
        )
    return out


def slicing(
    jobs: int = 60, seed: int = 0, driver: str = "parallel", check: int = 0
) -> dict[str, Any]:
    """[M]: the prototype's slice (:func:`prototype_slice`, the published 1.72x's setup), and a
    tenant trace on the 64-accelerator 4 x 4 x 4 rack, sliced on the static torus (contiguous
    blocks, each ring on the links of the dimensions it spans) and photonically (any
    accelerators, each ring on all 6 ports): per fabric the metrics, and each job's all-reduce
    and step time, torus over photonic, at the placement each fabric gave it (geometric
    means)."""
    rack = replace(setups.TORUS_RACK, driver=driver)
    trace = tenant_trace(jobs, seed)
    runs = {f: engine.simulate(rack, f, trace) for f in ("torus", "photonic", "server")}
    per_step = engine.simulate(rack, "photonic", trace, reconfigure="step")
    comm, step = [], []
    for j in trace:
        torus_step, photonic_step = (
            runs["torus"].step_s[j.name][0],
            runs["photonic"].step_s[j.name][0],
        )
        if j.size > 1:
            comm.append((torus_step - j.compute_s) / (photonic_step - j.compute_s))
            step.append(torus_step / photonic_step)
    return {
        "study": "slicing",
        "driver": driver,
        "jobs": jobs,
        "prototype": prototype_slice(),
        "fabrics": {f: r.metrics() for f, r in runs.items()},
        "per_step": per_step.metrics(),
        "trace_collective_speedup": float(np.exp(np.mean(np.log(comm)))),
        "trace_training_speedup": float(np.exp(np.mean(np.log(step)))),
        "allocation": {f: {k: list(v) for k, v in r.busiest.items()} for f, r in runs.items()},
        "torus": list(rack.torus_shape),
        "verification": checked(rack, _rings(rack, runs["photonic"]), check, seed),
        "hexagonal": _hexagonal(driver, jobs, seed, check),
    }


def _hexagonal(driver: str, jobs: int, seed: int, check: int) -> dict[str, Any]:
    """The same kind of trace on the largest rack the 32-endpoint hexagonal chip joins
    (:data:`~pswitch.rack.setups.HEX_RACK`): the torus and the photonic fabric, and a sample of
    the photonic run's configurations verified on that chip."""
    rack = replace(setups.HEX_RACK, driver=driver)
    trace = tenant_trace(jobs, seed, sizes=(1, 2, 4, 8, 16))
    runs = {f: engine.simulate(rack, f, trace) for f in ("torus", "photonic")}
    return {
        "fabrics": {f: r.metrics() for f, r in runs.items()},
        "verification": checked(rack, _rings(rack, runs["photonic"]), check, seed),
    }


def prototype_slice(
    mfu: float = setups.LLAMA_1B.mfu, grad_bytes: float = setups.LLAMA_1B.grad_bytes
) -> dict[str, float]:
    """[M]'s prototype: a 2 x 1 slice fine-tuning Llama-3.2-1B with DDP, given both optical
    ports of each server photonically against the one port the static torus gives its
    dimension: the all-reduce's and the step's speed-ups."""
    rack, m = setups.PROTOTYPE, replace(setups.LLAMA_1B, mfu=mfu, grad_bytes=grad_bytes)
    n = m.gradient_bytes()
    photonic = model.photonic_s(rack, "ring", 2, n, "job")
    torus = model.torus_s(rack, "ring", 2, n, 1)
    compute = m.compute_s()
    return {
        "collective_speedup": torus / photonic,
        "training_speedup": (torus + compute) / (photonic + compute),
        "step_s_photonic": photonic + compute,
        "step_s_torus": torus + compute,
    }


def _opus_step(rack: model.Rack, m: setups.Model) -> tuple[ff.Collective, float]:
    """[O]'s training step on the rail: DP2 x PP2 x TP4, the tensor-parallel all-reduces over
    NVLink inside a node (computation as far as the rail is concerned), the pipeline sends and
    the data-parallel all-reduce over the rail. Returns the rail's part and the TP time (s)."""
    job = ff.HybridJob(dp=2, tp=4, pp=2, ports=tuple(range(16)))
    share = 1 / (job.tp * job.pp)
    layers, hidden = 32, 4096
    activation = m.tokens * hidden * 2  # a micro-batch's activations, BF16
    tp_bytes = 2 * layers / job.pp * activation
    tp_s = ff.electrical_timing(
        ff.ring_all_reduce(range(job.tp), tp_bytes), rack.link(rack.scale_up_gbps)
    ).total_s
    compute = m.compute_s(share)
    step = ff.StepSettings(
        compute / 3 + tp_s, 2 * compute / 3, 0.0, m.gradient_bytes(share), activation
    )
    return ff.training_step(job, step), tp_s


def rails(
    driver: str = "parallel", ports: int = 2, check: int = 0, m: setups.Model = setups.LLAMA_8B
) -> dict[str, Any]:
    """[O]: Llama-3 8B (``m``), DP2 x PP2 x TP4 on 4 nodes. The rail's step time: electrical (a
    rail-optimized switch at the NIC's rate), optical reconfigured per phase (every port to the
    phase's peers, the driver's reconfiguration before each phase's matchings) and optical
    static (the ``ports`` ports split between the data-parallel peer and the pipeline peers,
    set once); the per-phase ratio at each of [O]'s injected latencies beside its measured
    slowdown, the reconfiguration time at which per-phase stops beating static, and that
    time over the tokens a step and the MFU [O] leaves open."""
    rack = replace(setups.PERLMUTTER, driver=driver, ports=ports)
    step = _RailStep(rack, m)
    with_driver = step.per_phase(ff.HeaterWriteModel(driver_class(driver)))
    open_ = {
        "tokens": {t: _RailStep(rack, replace(m, tokens=t)).breakeven() for t in (4096, 16384)},
        "mfu": {u: _RailStep(rack, replace(m, mfu=u)).breakeven() for u in (0.2, 0.45)},
    }
    return {
        "study": "rails",
        "driver": driver,
        "ports": ports,
        "reconfigurations": step.schedule.n_changes,
        "tp_s": step.tp_s,
        "electrical_s": step.electrical,
        "per_phase_s": with_driver,
        "static_s": step.static,
        "iteration_ratio": with_driver / step.electrical,
        "breakeven_reconfig_s": step.breakeven(),
        "open": open_,
        "opus": [
            {"latency_s": t, "ours": step.per_phase(t) / step.electrical, "published": p}
            for t, p in zip(setups.OPUS_LATENCY_S, setups.OPUS_SLOWDOWN, strict=True)
        ],
        "verification": checked(rack, [st.matching for st in step.schedule.steps], check, 0),
    }


class _RailStep:
    """[O]'s step on a rack's rail: compiled for its chips, timed three ways (s)."""

    def __init__(self, rack: model.Rack, m: setups.Model) -> None:
        c, self.tp_s = _opus_step(rack, m)
        fabric = model._fabric(rack.mesh, rack.accelerators)
        self.schedule = ff.compile_collective(c, rack.accelerators, fabric)
        self.full = rack.link(rack.ports * rack.port_gbps)
        self.electrical = ff.electrical_timing(
            c, rack.link(rack.scale_out_gbps * rack.ports)
        ).total_s
        self.static = ff.electrical_timing(c, rack.link(rack.ports * rack.port_gbps / 2)).total_s

    def per_phase(self, reconfigure: Any) -> float:
        """The per-phase step with ``reconfigure`` (s, or a model) before each change."""
        return ff.circuit_timing(self.schedule, self.full, reconfigure).total_s

    def breakeven(self, longest: float = 10.0) -> float | None:
        """The reconfiguration time (s) at which per-phase meets static (None: beyond
        ``longest``), by bisection: the step grows with it."""
        if self.per_phase(longest) < self.static:
            return None
        lo, hi = 0.0, longest
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.per_phase(mid) < self.static else (lo, mid)
        return (lo + hi) / 2


def straggler(delays_ms: tuple[float, ...] = (0, 1, 2, 4, 8, 16, 30)) -> dict[str, Any]:
    """[S]: the straggler-aware all-reduce against ring on 8 ranks, 1 GiB, alpha 3 us, 450 GiB/s:
    the published analytical model and the schedule compiled here, at each delay; and a tenant
    trace on the photonic rack whose jobs with a persistent straggler (half of them) use it
    against ring: the throughput ratio."""
    link = ff.Link(setups.STRAGGLAR_GBPS * 1e9 / 8, setups.STRAGGLAR_ALPHA_S)
    points = ff.straggler_sweep([8], [d * 1e-3 for d in delays_ms], setups.STRAGGLAR_BYTES, link)
    runs = {
        c: engine.simulate(
            setups.TORUS_RACK, "photonic", tenant_trace(60, 0, stragglers=0.5, collective=c)
        )
        for c in ("ring", "straggler")
    }
    return {
        "study": "straggler",
        "ranks": 8,
        "trace_throughput_ratio": runs["straggler"].metrics()["throughput"]
        / runs["ring"].metrics()["throughput"],
        "points": [
            {"delay_ms": p.delay_s * 1e3, "model": p.model_speedup, "compiled": p.compiled_speedup}
            for p in points
        ],
        "speedup_8": max(p.compiled_speedup for p in points),
        "model_8": max(p.model_speedup for p in points),
    }
