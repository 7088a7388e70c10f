"""The headline scenario of ``pswitch demo``: a rack of accelerators on an emulated switch,
a feed-forward mesh (Clements by default) or a recirculating one (``--mesh hexagonal``); any
registered topology whose endpoints send and receive on one port.

1. calibrate the chip through its detectors (CAL:RUN): a feed-forward mesh column by column,
   a recirculating one cell by cell on light paths routed through calibrated cells (cells it
   cannot fit are dead, and the router leaves them out);
2. compute an all-to-all schedule of matchings and apply each, verified by measured powers;
3. run a training step as a schedule, one matching per parallelism phase, and its duty cycle;
4. fail an accelerator, splice in a spare, verify the new circuit and the untouched ones;
5. a timeline of each step: its compute time, measured on this machine (the firmware's work
   and the emulated chip's physics, in this process; never numba's compilation, which is done
   before the first step and reported apart), and its modeled hardware time (what the
   emulated heater driver, thermal settling and detectors take: a real switch's time);
6. plots (PNG): the mesh's cell states, the measured power matrix, a ring lock trace (rings
   exist on feed-forward chips only: a separate 4-port Clements switch) and the failover
   timeline.

Powers are read on the switch's photodiodes (``MEAS:POW:ALL?``, ``Switch.powers()``), one
accelerator at a time sending 1 mW (the emulated world's light, not the switch's); a circuit is
verified when its output gets the light of its source with >= ``VERIFY_ISOLATION_DB`` over the
strongest other lit input (and its own light sent back) and within ``VERIFY_LOSS_DB`` of the
predicted insertion loss.
"""

# Over 500 lines on purpose: one scenario whose steps share the switch, the schedule and the
# timeline they print; split, each step would pass them all along.

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from firmware.driver import LAUNCH_MW
from firmware.fabric import Job, all_to_all, job_matchings
from firmware.sdk import Switch
from photonics import levels
from photonics.chips import topologies
from photonics.chips.switch import MeshFabric
from photonics.errors import SettingsError
from photonics.recirculating.routing import DEFAULT_ISOLATION_TARGET_DB
from pswitch.progress import Progress, within
from pswitch.verification import VERIFY_ISOLATION_DB, VERIFY_LOSS_DB
from pswitch.warm import compiling, warm

#: Published swap of a failed accelerator and job restart, s (LUMION ~1 s, Morphlux 1.2 s).
PUBLISHED_FAILOVER_S = 1.0
#: An untouched circuit's measured power may move this much across a failover (dB).
UNTOUCHED_DB = 0.1
#: Communication time of each parallelism phase of the training step, s.
PHASE_DWELL_S = 0.010


@dataclass(frozen=True)
class DemoSettings:
    """``ports`` (endpoints, even, 4-32), the emulated chip's ``seed``, where the plots go
    (``plots_dir``; None: no plots) and the switch's ``mesh`` (a registered topology whose
    endpoints send and receive)."""

    ports: int = 16
    seed: int = 0
    plots_dir: Path | None = Path("pswitch-demo")
    mesh: str = "clements"

    def __post_init__(self) -> None:
        if isinstance(self.ports, bool) or not isinstance(self.ports, int):
            raise SettingsError(f"ports must be an integer, got {self.ports!r}")
        if not 4 <= self.ports <= 32 or self.ports % 2:
            raise SettingsError(f"ports must be even and in 4..32, got {self.ports}")
        meshes = topologies.names(directed=False)  # endpoints that send and receive
        if self.mesh not in meshes:
            raise SettingsError(f"mesh must be one of {', '.join(meshes)}; got {self.mesh!r}")
        topologies.topology(self.mesh).check_ports(self.ports)


def job_for(ports: int) -> Job:
    """A torus job on ``ports`` switch ports with one spare in every four ports (interleaved:
    a spare's circuit then crosses few live ones). Accelerators ``rows x cols``."""
    spares = tuple(range(3, ports, 4))
    ends = tuple(p for p in range(ports) if p not in spares)
    cols = next(c for c in (4, 3, 7, 5, 2) if len(ends) % c == 0)
    return Job("train", "torus", ends, spares, (len(ends) // cols, cols))


def measured_powers(switch: Switch, ports: list[int]) -> np.ndarray:
    """Detected power, mW per mW sent, ``[output, input]``: the switch's photodiodes
    (:meth:`Switch.powers`) with the accelerator on each of ``ports`` alone sending
    :data:`LAUNCH_MW` (other columns zero); a reading below the switch's floor (1e-6 mW) reads
    as the floor."""
    world = switch.transport.controller.driver  # the emulated accelerators' transmitters
    n, before = switch.ports, world.launch_mW
    P = np.zeros((n, n))
    try:
        for a in ports:
            world.launch_mW = LAUNCH_MW * np.eye(n)[a]
            P[:, a] = switch.powers() / LAUNCH_MW
    finally:
        world.launch_mW = before
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
        iso = levels.isolation_db(P[out, src], others)  # None: nothing else lit, no leak
        isolated = iso is None or iso >= VERIFY_ISOLATION_DB
        ok = isolated and abs(loss - info.loss_db) <= VERIFY_LOSS_DB
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

    # numba's kernels before any step is timed: loaded from the on-disk cache the install
    # filled, else compiled here (and reported apart)
    tick("loading compiled kernels", 0, 1)
    with compiling() as compiled:
        warm()
    tick("loading compiled kernels", 1, 1)
    n = settings.ports
    feed_forward = topologies.topology(settings.mesh).kind == "feedforward"
    switch = Switch.emulated(ports=n, mesh=settings.mesh, seed=settings.seed, calibrated=False)
    controller = switch.transport.controller
    steps: list[dict[str, Any]] = []

    # 1. calibration through the detectors (feed-forward: photonics.calibration.selfcal;
    #    recirculating:
    # photonics.calibration.hex_selfcal, whose cells it cannot fit the router then leaves out)
    controller.progress = within("calibrate", tick)
    t0 = time.perf_counter()
    hw = switch.calibrate(save=False)
    controller.progress = None
    steps.append({"step": "calibrate", "compute_s": time.perf_counter() - t0, "modeled_s": hw})

    # 2. all-to-all: compute, apply and verify every matching
    t0 = time.perf_counter()
    # on a recirculating mesh keep only matchings predicted at the router's isolation target:
    # a plain cover accepts detours that leak (down to 18 dB measured at 16 ports)
    floor = None if feed_forward else DEFAULT_ISOLATION_TARGET_DB
    schedule = all_to_all(
        controller.fabric, isolation_db=floor, progress=within("all-to-all", tick)
    )
    compute = time.perf_counter() - t0
    hw, verified, worst_iso, worst_loss_error, first_P = 0.0, 0, None, 0.0, None
    unverified: list[dict[str, Any]] = []
    for k, plan in enumerate(schedule.plans):
        tick("all-to-all: apply and verify", k, schedule.size)
        t0, start = time.perf_counter(), controller.driver.elapsed_s
        controller.apply_plan(plan)
        compute += time.perf_counter() - t0
        hw += controller.driver.elapsed_s - start
        P, rows = check_circuits(switch)
        first_P = P if first_P is None else first_P
        verified += all(r["verified"] for r in rows)
        unverified += [{"matching": k, **r} for r in rows if not r["verified"]]
        worst_iso = levels.worst([worst_iso, *(r["isolation_db"] for r in rows)])
        worst_loss_error = max(
            worst_loss_error, *(abs(r["loss_db"] - r["predicted_loss_db"]) for r in rows)
        )
        tick("all-to-all: apply and verify", k + 1, schedule.size)
    all_to_all_result = {
        "matchings": schedule.size,
        "verified": verified,
        "verify_isolation_db": VERIFY_ISOLATION_DB,
        "worst_isolation_db": worst_iso,
        "worst_loss_error_db": worst_loss_error,
        "note": schedule.note,
        "unverified_circuits": unverified,
    }
    steps.append({"step": "all-to-all", "compute_s": compute, "modeled_s": hw})

    # 3. a training step: one matching per parallelism phase, run as a schedule
    tick("training step", 0, 1)
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
    tick("failover", 0, 1)
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

    calibration = switch.calibration()
    result_cells = controller.fabric.n_cells
    result = {
        "ports": n,
        "seed": settings.seed,
        "mesh": settings.mesh,
        "mzis": int(controller.fabric.n_cells),
        "calibrated": calibration["calibrated"],
        "calibration": {
            "through_detectors": True,
            "chip_id": calibration["chip_id"],
            "created": calibration["created"],
            "dead_cells": int(np.sum(~controller.calibration.phase_fitted[:result_cells])),
        },
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
        "compiled_on_first_use": {"kernels": compiled.kernels, "seconds": compiled.seconds},
        "plots": {},
    }
    tick("ring lock sweep", 0, 1)
    lock = _lock_trace(settings.seed)
    tick("ring lock sweep", 1, 1)
    result["ring_lock"] = {"locked": lock["locked"], "error_nm": lock["error_nm"]}
    if settings.plots_dir is not None:
        from pswitch.demo_plots import write_plots

        dead = None
        if isinstance(controller.fabric, MeshFabric):  # cells the calibration could not fit
            dead = ~controller.calibration.phase_fitted[: controller.fabric.n_cells]
        result["plots"] = write_plots(
            settings.plots_dir,
            controller.fabric,
            first_P,
            schedule.plans[0],
            lock,
            steps,
            PUBLISHED_FAILOVER_S,
            dead,
            tick,
        )
    return result


def _lock_trace(seed: int, ring: int = 0) -> dict[str, Any]:
    """Lock ``ring`` of a 4-port emulated switch with add-drop rings in front of its
    photodiodes: the lock sweep (heater power against drop power, mW), the heater power it
    locked at (mW), the rings' tuning (nm/mW) and width (nm), and the result."""
    switch = Switch.emulated(ports=4, seed=seed, rings=True)
    switch.connect([(0, 1), (2, 3)])
    switch.lock_ring(ring)
    locked, error_nm = switch.ring_status(ring)
    controller = switch.transport.controller
    heater_mW, drop_mW = controller.ring_sweeps[ring]
    channel, heaters = controller.rings.channels[ring], controller.driver.chip.heaters
    return {
        "ring": ring,
        "heater_mW": heater_mW,
        "drop_mW": drop_mW,
        "lock_mW": float(heaters.power_mW(controller.driver.currents())[channel]),
        "nm_per_mW": controller.rings.nm_per_mW,
        "fwhm_nm": controller.rings.fwhm_nm,
        "locked": locked,
        "error_nm": error_nm,
    }
