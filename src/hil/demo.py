"""The headline scenario of ``pswitch demo``: a rack of accelerators on an emulated switch.

1. calibrate the chip through its detectors (CAL:RUN);
2. compute an all-to-all schedule of matchings and apply each, verified by measured powers;
3. run a training step as a schedule, one matching per parallelism phase, and its duty cycle;
4. fail an accelerator, splice in a spare, verify the new circuit and the untouched ones;
5. a timeline of compute time (measured here) and modeled hardware time for each step;
6. plots (PNG): the mesh's cell states, the measured power matrix, a ring lock trace and the
   failover timeline.

Powers are measured on the emulated detectors, one input lit at a time with 1 mW; a circuit is
verified when its output gets the light of its source with >= ``VERIFY_ISOLATION_DB`` over the
strongest other lit input (and its own light sent back) and within ``VERIFY_LOSS_DB`` of the
predicted insertion loss.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from firmware.fabric import Job, all_to_all, job_matchings
from firmware.sdk import Switch
from photonics.errors import SettingsError
from photonics.matching import Matching

#: Published swap of a failed accelerator and job restart, s (LUMION ~1 s, Morphlux 1.2 s).
PUBLISHED_FAILOVER_S = 1.0
#: A circuit counts as verified at this measured isolation (dB) ...
VERIFY_ISOLATION_DB = 20.0
#: ... and this distance of measured from predicted insertion loss (dB).
VERIFY_LOSS_DB = 1.0
#: An untouched circuit's measured power may move this much across a failover (dB).
UNTOUCHED_DB = 0.1
#: Communication time of each parallelism phase of the training step, s.
PHASE_DWELL_S = 0.010

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class DemoSettings:
    """``ports`` (endpoints, even, 4-32), the emulated chip's ``seed``, and where the plots go
    (``plots_dir``; None: no plots)."""

    ports: int = 16
    seed: int = 0
    plots_dir: Path | None = Path("pswitch-demo")

    def __post_init__(self) -> None:
        if isinstance(self.ports, bool) or not isinstance(self.ports, int):
            raise SettingsError(f"ports must be an integer, got {self.ports!r}")
        if not 4 <= self.ports <= 32 or self.ports % 2:
            raise SettingsError(f"ports must be even and in 4..32, got {self.ports}")


def job_for(ports: int) -> Job:
    """A torus job on ``ports`` switch ports with one spare in every four ports (interleaved:
    a spare's circuit then crosses few live ones). Accelerators ``rows x cols``."""
    spares = tuple(range(3, ports, 4))
    ends = tuple(p for p in range(ports) if p not in spares)
    cols = next(c for c in (4, 3, 7, 5, 2) if len(ends) % c == 0)
    return Job("train", "torus", ends, spares, (len(ends) // cols, cols))


def measured_powers(switch: Switch, ports: list[int]) -> np.ndarray:
    """Detected power, mW, ``[output, input]``, lighting each of ``ports`` alone with 1 mW
    (other columns zero)."""
    driver = switch.transport.controller.driver
    n = switch.ports
    P = np.zeros((n, n))
    for a in ports:
        P[:, a] = driver.detect(np.eye(n)[a])
    return P


def check_circuits(switch: Switch) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Measure the applied matching (:func:`measured_powers`, every lit port) and check each
    lit circuit (both directions): the power matrix, and each circuit's measured loss and
    isolation, dB."""
    rows = []
    lit = [p for pair in switch.matching().pairs for p in pair]
    P = measured_powers(switch, lit)
    for src, info in sorted(switch.paths().items()):
        out = info.target
        others = [P[out, x] for x in lit if x != src]
        loss = float(-10 * np.log10(P[out, src]))
        iso = float(10 * np.log10(P[out, src] / max(max(others, default=0.0), 1e-15)))
        ok = iso >= VERIFY_ISOLATION_DB and abs(loss - info.loss_db) <= VERIFY_LOSS_DB
        rows.append(
            {
                "source": src,
                "target": out,
                "loss_db": loss,
                "predicted_loss_db": info.loss_db,
                "isolation_db": iso,
                "verified": bool(ok),
            }
        )
    return P, rows


def run_demo(settings: DemoSettings, progress: Progress | None = None) -> dict[str, Any]:
    """Run the scenario; the results as data (times s, powers dB). ``progress(stage, done,
    total)`` is called as each stage advances."""
    tick = progress or (lambda stage, done, total: None)
    n = settings.ports
    switch = Switch.emulated(ports=n, seed=settings.seed, calibrated=False)
    controller = switch.transport.controller
    steps: list[dict[str, Any]] = []

    # 1. calibration through the detectors
    controller.progress = lambda done, total: tick("calibrate", done, total)
    t0 = time.perf_counter()
    hw = switch.calibrate(save=False)
    controller.progress = None
    steps.append({"step": "calibrate", "compute_s": time.perf_counter() - t0, "modeled_s": hw})

    # 2. all-to-all: compute, apply and verify every matching
    t0 = time.perf_counter()
    schedule = all_to_all(controller.fabric)
    compute = time.perf_counter() - t0
    hw, verified, worst_iso, worst_loss_error, first_P = 0.0, 0, np.inf, 0.0, None
    for k, plan in enumerate(schedule.plans):
        t0, start = time.perf_counter(), controller.driver.elapsed_s
        controller.apply_plan(plan)
        compute += time.perf_counter() - t0
        hw += controller.driver.elapsed_s - start
        P, rows = check_circuits(switch)
        first_P = P if first_P is None else first_P
        verified += all(r["verified"] for r in rows)
        worst_iso = min(worst_iso, *(r["isolation_db"] for r in rows))
        worst_loss_error = max(
            worst_loss_error, *(abs(r["loss_db"] - r["predicted_loss_db"]) for r in rows)
        )
        tick("all-to-all", k + 1, schedule.size)
    all_to_all_result = {
        "matchings": schedule.size,
        "verified": verified,
        "verify_isolation_db": VERIFY_ISOLATION_DB,
        "worst_isolation_db": worst_iso,
        "worst_loss_error_db": worst_loss_error,
    }
    steps.append({"step": "all-to-all", "compute_s": compute, "modeled_s": hw})

    # 3. a training step: one matching per parallelism phase, run as a schedule
    job = job_for(n)
    phases = job_matchings(job, n)
    t0 = time.perf_counter()
    switch.load_schedule([(m, PHASE_DWELL_S) for m in phases])
    run = switch.run_schedule()
    steps.append(
        {
            "step": "training step",
            "compute_s": time.perf_counter() - t0,
            "modeled_s": sum(run.reconfiguration_s),
        }
    )
    switch.stop_schedule()
    tick("training step", 1, 1)

    # 4. an accelerator fails: splice in a spare, verify new and untouched circuits
    switch.connect(phases[0])
    before = {r["source"]: r for r in check_circuits(switch)[1]}
    failed = job.endpoints[len(job.endpoints) // 2]
    peer = phases[0].partner(failed)
    t0 = time.perf_counter()
    new_job, hw, disturbed = switch.failover(job, failed)
    compute = time.perf_counter() - t0
    spare = switch.matching().partner(peer)
    after = {r["source"]: r for r in check_circuits(switch)[1]}
    new = [after[peer], after[spare]]
    kept = [
        after[s] for s in after if s not in (peer, spare) and s not in disturbed and s in before
    ]
    moved = max(
        (abs(after[s["source"]]["loss_db"] - before[s["source"]]["loss_db"]) for s in kept),
        default=0.0,
    )
    failover_result = {
        "failed_port": failed,
        "peer": peer,
        "spare": spare,
        "new_circuits_verified": all(r["verified"] for r in new),
        "disturbed_circuits": len(disturbed) // 2,
        "untouched_circuits": len(kept) // 2,
        "untouched_max_change_db": moved,
        "untouched_verified": moved <= UNTOUCHED_DB and all(r["verified"] for r in kept),
        "job_endpoints_after": list(new_job.endpoints),
    }
    steps.append({"step": "failover", "compute_s": compute, "modeled_s": hw})
    tick("failover", 1, 1)

    result = {
        "ports": n,
        "seed": settings.seed,
        "mzis": int(controller.fabric.mesh.n_mzis),
        "calibrated": switch.calibration()["calibrated"],
        "all_to_all": all_to_all_result,
        "training_step": {
            "topology": f"torus {job.shape[0]}x{job.shape[1]}",
            "accelerators": len(job.endpoints),
            "spares": list(job.spares),
            "phases": len(phases),
            "phase_dwell_s": PHASE_DWELL_S,
            "duty_cycle": run.duty_cycle,
        },
        "failover": failover_result,
        "timeline": steps,
        "published_failover_s": PUBLISHED_FAILOVER_S,
        "plots": {},
    }
    lock = _lock_trace(settings.seed)
    result["ring_lock"] = {"locked": lock["locked"], "error_nm": lock["error_nm"]}
    if settings.plots_dir is not None:
        result["plots"] = write_plots(
            settings.plots_dir, controller, first_P, schedule.plans[0].matching, lock, steps
        )
    return result


def _lock_trace(seed: int, ring: int = 0) -> dict[str, Any]:
    """Lock ``ring`` of a 4-port emulated switch with add-drop rings in front of its
    photodiodes: the lock sweep (heater power against drop power, mW) and the result."""
    switch = Switch.emulated(ports=4, seed=seed, rings=True)
    switch.connect([(0, 1), (2, 3)])
    switch.lock_ring(ring)
    locked, error_nm = switch.ring_status(ring)
    heater_mW, drop_mW = switch.transport.controller.ring_sweeps[ring]
    return {
        "ring": ring,
        "heater_mW": heater_mW,
        "drop_mW": drop_mW,
        "locked": locked,
        "error_nm": error_nm,
    }


def write_plots(
    folder: Path,
    controller: Any,
    P: np.ndarray,
    matching: Matching,
    lock: dict[str, Any],
    steps: list[dict[str, Any]],
) -> dict[str, str]:
    """Write the four PNGs into ``folder`` (created); their paths by name."""
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: str(folder / f"{name}.png") for name in ("mesh", "powers", "ring", "timeline")}
    mesh = controller.fabric.mesh
    theta = controller.plan.theta if controller.plan is not None else np.zeros(mesh.n_mzis)

    fig, ax = plt.subplots(figsize=(8, 4))
    dots = ax.scatter(
        mesh.columns,
        mesh.modes + 0.5,
        c=np.degrees(theta),
        cmap="viridis",
        vmin=0,
        vmax=90,
        s=120,
        marker="s",
    )
    fig.colorbar(dots, label="cell angle theta (deg): 0 bar, 90 cross")
    ax.set(xlabel="column", ylabel="mode", title=f"Clements mesh, {mesh.n} ports: cell states")
    ax.invert_yaxis()
    fig.savefig(paths["mesh"], dpi=120, bbox_inches="tight")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(10 * np.log10(np.maximum(P, 1e-9)), cmap="magma", vmin=-90, vmax=0)
    fig.colorbar(image, label="detected power, dBm (1 mW in)")
    ax.set(
        xlabel="input (lit alone)",
        ylabel="output",
        title=f"measured powers: {len(matching.pairs)} circuits",
    )
    fig.savefig(paths["powers"], dpi=120, bbox_inches="tight")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(lock["heater_mW"], 10 * np.log10(np.maximum(lock["drop_mW"], 1e-12)), ".-")
    ax.set(
        xlabel="ring heater power, mW",
        ylabel="drop-port power, dBm",
        title=f"ring {lock['ring']} lock sweep (locked: {lock['locked']}, "
        f"error {lock['error_nm'] * 1e3:.1f} pm)",
    )
    fig.savefig(paths["ring"], dpi=120, bbox_inches="tight")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 3))
    names = [s["step"] for s in steps] + ["published failover"]
    modeled = [s["modeled_s"] for s in steps] + [PUBLISHED_FAILOVER_S]
    computed = [s["compute_s"] for s in steps] + [0.0]
    y = np.arange(len(names))
    ax.barh(y - 0.2, modeled, 0.4, label="modeled hardware time")
    ax.barh(y + 0.2, computed, 0.4, label="compute time (measured)")
    ax.set_yticks(y, names)
    ax.set_xscale("log")
    ax.set(xlabel="seconds (log)", title="timeline")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.savefig(paths["timeline"], dpi=120, bbox_inches="tight")
    plt.close(fig)
    return paths
