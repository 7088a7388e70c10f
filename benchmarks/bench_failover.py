"""Accelerator failover and all-to-all schedules on a 32-port emulated switch.

1. Failover: a ring job of 28 accelerators with 4 spares runs one of its matchings on a
   32-port switch; for each failed accelerator in turn, the controller gets ``ROUT:REPL`` with
   the job's spares (the detection event), chooses the spare and the plan that disturb fewest
   live circuits and switch fewest cells, and applies it atomically. Measured: the wall time
   of that (compute, in process) beside the modeled hardware time (heater writes and
   settling), the cells switched against a re-route from scratch, and the live circuits
   disturbed. Then every live circuit is measured as the demo does (``check_circuits``): the
   new circuit must carry its light where planned, with the predicted loss (within
   ``VERIFY_LOSS_DB``), or the benchmark fails; its worst isolation is reported. Published
   prototypes swap a failed accelerator and restart the job in about 1 s (LUMION ~1 s,
   Morphlux 1.2 s).

   Two spare placements: the 4 spares on the last ports, and one spare after every 7 job
   ports. A feed-forward mesh is planar: the new circuit must cross every live circuit whose
   ports lie between the peer and the spare, and each crossing switches a cell of that
   circuit, so spares at the end disturb many circuits and interleaved spares few. A
   recirculating mesh routes around live circuits.
2. All-to-all: compute the matchings of a 1-factorization of 32 endpoints and apply each
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

from firmware.fabric import Job, all_to_all, failover, job_matchings
from firmware.sdk import Switch
from photonics.errors import MatchingError
from pswitch.demo import check_circuits
from pswitch.verification import VERIFY_LOSS_DB

PUBLISHED_FAILOVER_S = 1.0  # LUMION swap + restart; Morphlux reports 1.2 s
PORTS = 32
SPARES = {"end": (28, 29, 30, 31), "interleaved": (7, 15, 23, 31)}


def failover_figures(mesh: str, placement: str) -> dict[str, float]:
    sw = Switch.emulated(ports=PORTS, mesh=mesh, seed=0)
    c = sw.transport.controller
    spares = SPARES[placement]
    job = Job("train", "ring", tuple(p for p in range(PORTS) if p not in spares), spares)
    for active in job_matchings(job, PORTS):  # the first of the job's steps the mesh realizes
        try:
            c.apply_matching(active)
            break
        except MatchingError:
            continue
    base = c.plan
    failover(c.fabric, job, base, job.endpoints[0])  # compile the kernels once
    compute, modeled, changed, naive, disturbed = [], [], [], [], []
    isolation, loss_error = [], []
    for failed in job.endpoints[1::3]:
        c.apply_plan(base)
        peer = c.matching.partner(failed)
        found = failover(c.fabric, job, base, failed, compare_naive=True)  # for the table
        t0 = time.perf_counter()
        c.handle(f"ROUT:REPL {failed},{','.join(map(str, spares))}")
        spare = c.matching.partner(peer)
        compute.append(time.perf_counter() - t0)
        P, rows = check_circuits(sw)  # measure every live circuit, as the demo does
        assert c.errors.codes() == [] and spare == found.spare
        new = [r for r in rows if {r["source"], r["target"]} == {peer, spare}]
        # the new circuit works: its light goes where planned, with the loss predicted
        if not all(
            P[:, r["source"]].argmax() == r["target"]
            and abs(r["loss_db"] - r["predicted_loss_db"]) <= VERIFY_LOSS_DB
            for r in new
        ):
            raise SystemExit(
                f"bench_failover: {mesh}/{placement}: the circuit {peer}-{spare} spliced in "
                f"for {failed} does not carry its light as planned: {new}"
            )
        isolation.append(min(r["isolation_db"] for r in new))
        loss_error.append(max(abs(r["loss_db"] - r["predicted_loss_db"]) for r in new))
        modeled.append(c.session.last_time_s)
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
        "disturbed_circuits_max": max(disturbed),
        "new_circuit_worst_isolation_db": min(isolation),
        "new_circuit_worst_loss_error_db": max(loss_error),
        "trials": len(compute),
    }


def all_to_all_figures(mesh: str) -> dict[str, float]:
    c = Switch.emulated(ports=PORTS, mesh=mesh, seed=0).transport.controller
    t0 = time.perf_counter()
    result = all_to_all(c.fabric)
    start = c.driver.elapsed_s
    for plan in result.plans:
        c.apply_plan(plan)
    return {
        "all_to_all_apply_s": time.perf_counter() - t0,
        "all_to_all_modeled_s": c.driver.elapsed_s - start,
        "all_to_all_size": result.size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--quick", action="store_true", help="the same run (it takes seconds already)"
    )
    args = parser.parse_args()
    meshes = ("clements", "hexagonal")
    rows = {(m, p): failover_figures(m, p) for m in meshes for p in SPARES}
    spread = {m: all_to_all_figures(m) for m in meshes}
    head, worst = rows["clements", "interleaved"], rows["clements", "end"]
    figures = {
        "failover_compute_s": head["failover_compute_s"],
        "failover_modeled_s": head["failover_modeled_s"],
        "all_to_all_apply_s": spread["clements"]["all_to_all_apply_s"],
        "disturbed_circuits": head["disturbed_circuits"],
        "disturbed_circuits_spares_at_end": worst["disturbed_circuits"],
        "speedup_vs_published": PUBLISHED_FAILOVER_S
        / (head["failover_compute_s"] + head["failover_modeled_s"]),
        "failover": {f"{m}/{p}": r for (m, p), r in rows.items()},
        "all_to_all": spread,
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"Failover on a {PORTS}-port switch (ring of 28, 4 spares), medians over failed ports")
    print(
        f"{'mesh':<10} {'spares':<12} {'compute ms':>10} {'max ms':>7} {'modeled ms':>10} "
        f"{'cells':>6} {'naive':>6} {'disturbed':>9} {'max':>4} {'vs 1 s':>7} {'new iso dB':>10}"
    )
    for (mesh, placement), r in rows.items():
        total = r["failover_compute_s"] + r["failover_modeled_s"]
        naive = r["naive_changed_cells"]
        print(
            f"{mesh:<10} {placement:<12} {1e3 * r['failover_compute_s']:>10.2f} "
            f"{1e3 * r['failover_compute_max_s']:>7.2f} {1e3 * r['failover_modeled_s']:>10.1f} "
            f"{r['changed_cells']:>6.0f} {'-' if naive is None else f'{naive:.0f}':>6} "
            f"{r['disturbed_circuits']:>9.0f} {r['disturbed_circuits_max']:>4} "
            f"{PUBLISHED_FAILOVER_S / total:>6.1f}x {r['new_circuit_worst_isolation_db']:>10.1f}"
        )
    print(
        "(disturbed: live circuits, one per direction, with a switched cell on their path; "
        "new iso: the worst measured isolation of the new circuit, either direction)"
    )
    print(f"\nAll-to-all schedule for {PORTS} endpoints: compute and apply every matching")
    for mesh, r in spread.items():
        print(
            f"{mesh:<10} {r['all_to_all_size']} matchings, {r['all_to_all_apply_s']:.2f} s wall, "
            f"{r['all_to_all_modeled_s']:.2f} s modeled hardware"
        )


if __name__ == "__main__":
    main()
