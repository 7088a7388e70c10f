"""Accelerator failover and all-to-all schedules on a 32-port emulated switch.

1. Failover: a ring job of 28 accelerators with 4 spares runs one of its matchings on a
   32-port switch; for each failed accelerator in turn, the controller gets ``ROUT:REPL`` (the
   detection event), computes the plan that splices in a spare switching the fewest cells,
   applies it atomically, and the new circuit is verified through the detectors. Measured: the
   wall time of all of that (compute, in process) beside the modeled hardware time (heater
   writes and settling), the cells switched against a re-route from scratch, and the live
   circuits disturbed. Published prototypes swap a failed accelerator and restart the job in
   about 1 s (LUMION ~1 s, Morphlux 1.2 s).
2. All-to-all: compute the 31 matchings of a 1-factorization of 32 endpoints and apply each
   (wall time, and modeled hardware time of the applies).

Run::

    python benchmarks/bench_failover.py          # tables
    python benchmarks/bench_failover.py --json   # one JSON object
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from firmware.fabric import Job, all_to_all, failover, job_matchings
from firmware.sdk import Switch

PUBLISHED_FAILOVER_S = 1.0  # LUMION swap + restart; Morphlux reports 1.2 s


def failover_figures(mesh: str, ports: int = 32) -> dict[str, float]:
    sw = Switch.emulated(ports=ports, mesh=mesh, seed=0)
    c = sw.transport.controller
    job = Job("train", "ring", tuple(range(ports - 4)), spares=tuple(range(ports - 4, ports)))
    active = job_matchings(job, ports)[0]
    c.apply_matching(active)
    c.handle("ROUT:REPL 0,28")  # warm the compiled kernels once
    compute, modeled, changed, naive, disturbed = [], [], [], [], []
    for failed in range(2, ports - 4, 3):
        c.apply_matching(active)
        peer = active.partner(failed)
        spare = ports - 4
        found = failover(c.fabric, Job("j", "ring", (failed, peer), (spare,)), c.plan, failed)
        t0 = time.perf_counter()
        c.handle(f"ROUT:REPL {failed},{spare}")
        seen = c.driver.detect(np.eye(ports)[peer])  # verify the new circuit
        compute.append(time.perf_counter() - t0)
        assert c.errors.codes() == [] and c.matching.partner(peer) == spare
        assert seen[spare] > 10 * np.delete(seen, spare).max(), "new circuit not verified"
        modeled.append(c.last_time_s)
        changed.append(found.n_changed)
        naive.append(found.naive_changed)
        disturbed.append(len(c.disturbed))
    return {
        "failover_compute_s": statistics.median(compute),
        "failover_compute_max_s": max(compute),
        "failover_modeled_s": statistics.median(modeled),
        "changed_cells": statistics.median(changed),
        "naive_changed_cells": statistics.median(naive),
        "disturbed_circuits": statistics.median(disturbed),
        "trials": len(compute),
    }


def all_to_all_figures(mesh: str, ports: int = 32) -> dict[str, float]:
    sw = Switch.emulated(ports=ports, mesh=mesh, seed=0)
    c = sw.transport.controller
    t0 = time.perf_counter()
    result = all_to_all(c.fabric)
    start = c.driver.elapsed_s
    for plan in result.plans:
        c._apply(c._currents_for(plan), plan)
    modeled = c.driver.elapsed_s - start
    return {
        "all_to_all_apply_s": time.perf_counter() - t0,
        "all_to_all_modeled_s": modeled,
        "all_to_all_size": result.size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    rows = {mesh: failover_figures(mesh) | all_to_all_figures(mesh) for mesh in ("clements",)}
    head = rows["clements"]
    figures = {
        "failover_compute_s": head["failover_compute_s"],
        "failover_modeled_s": head["failover_modeled_s"],
        "all_to_all_apply_s": head["all_to_all_apply_s"],
        "disturbed_circuits": head["disturbed_circuits"],
        "speedup_vs_published": PUBLISHED_FAILOVER_S
        / (head["failover_compute_s"] + head["failover_modeled_s"]),
        "meshes": rows,
    }
    if args.json:
        print(json.dumps(figures))
        return
    print("Failover on a 32-port switch (ring of 28, 4 spares), medians over failed ports")
    print(
        f"{'mesh':<10} {'compute ms':>10} {'modeled ms':>10} {'cells':>6} {'naive':>6} "
        f"{'disturbed':>9} {'vs 1 s':>7}"
    )
    for mesh, r in rows.items():
        total = r["failover_compute_s"] + r["failover_modeled_s"]
        print(
            f"{mesh:<10} {1e3 * r['failover_compute_s']:>10.2f} "
            f"{1e3 * r['failover_modeled_s']:>10.1f} {r['changed_cells']:>6.0f} "
            f"{r['naive_changed_cells']:>6.0f} {r['disturbed_circuits']:>9.0f} "
            f"{PUBLISHED_FAILOVER_S / total:>6.1f}x"
        )
    print("\nAll-to-all schedule for 32 endpoints: compute and apply every matching")
    for mesh, r in rows.items():
        print(
            f"{mesh:<10} {r['all_to_all_size']} matchings, {r['all_to_all_apply_s']:.2f} s wall, "
            f"{r['all_to_all_modeled_s']:.2f} s modeled hardware"
        )


if __name__ == "__main__":
    main()
