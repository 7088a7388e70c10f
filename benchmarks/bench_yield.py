"""Yield at scale: chips per second per core of ``pswitch yield``, and how it scales on Dask.

Each chip is one task: drawn from the study's seed and its index, self-calibrated through its
photodiodes, set to every matching of the all-to-all cover and measured (16-port Clements by
default). Figures:

- ``chips_per_s_per_core``: a plain loop of :func:`photonics.chip_yield.run_chip` in this
  process, with one BLAS thread (as in a Dask worker: numpy's default of one thread per core
  makes the loop slower, 28 s against 20 s for 8 chips on 2 cores);
- ``scaling_2_workers``: throughput with a local Dask cluster of 2 worker processes over that
  with 1 (each from start-up to the last row on disk; 2 on a 2-core machine is the most);
- ``overhead_vs_serial``: wall time of 1 worker through Dask (cluster start-up and Parquet
  writes included) over the plain loop;
- ``identical_across_workers``: the rows of the loop, of 1 worker and of 2 are equal;
- ``resume_lost_chips``: ``pswitch yield`` killed (SIGKILL, its workers too) once its first
  rows are on disk, then resumed on the same folder: chips missing or different from the
  loop's rows at the end (0 is the goal).

Run::

    python benchmarks/bench_yield.py                  # a table
    python benchmarks/bench_yield.py --json           # one JSON object
    python benchmarks/bench_yield.py --ports 8 --chips 16
"""

from __future__ import annotations

import os

# One BLAS thread in this process, as in Dask's worker processes (distributed sets the same
# variables before it starts them): the plain loop is then one core's work, like a worker's.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from photonics.chip_yield import YieldStudy, run_chip  # noqa: E402
from pswitch.yield_study import read_rows, run_study  # noqa: E402


def timed_study(study: YieldStudy, folder: Path, workers: int) -> tuple[float, list[dict]]:
    t0 = time.perf_counter()
    rows = run_study(study, folder, workers)
    return time.perf_counter() - t0, rows


def resume_lost(study: YieldStudy, reference: list[dict], folder: Path) -> dict[str, Any]:
    """Kill ``pswitch yield`` once a part file is on disk, resume it; what was lost."""
    command = [sys.executable, "-m", "pswitch", "yield", "--ports", str(study.ports)]
    command += ["--chips", str(study.chips), "--seed", str(study.seed), "--workers", "2"]
    command += ["--output", str(folder), "--json"]
    run = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 600
    while not list(folder.glob("part-*.parquet")) and time.monotonic() < deadline:
        if run.poll() is not None:
            break
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)  # the command and its cluster's worker processes
    run.wait()
    on_disk = len(read_rows(folder))
    rows = run_study(study, folder, 2)
    lost = sum(a != b for a, b in zip(rows, reference, strict=False))
    return {
        "rows_on_disk_at_kill": on_disk,
        "lost_chips": lost + abs(len(rows) - len(reference)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", type=int, default=16)
    parser.add_argument("--chips", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    study = YieldStudy(ports=args.ports, chips=args.chips, seed=args.seed)
    run_chip(study, 0)  # numba's kernels loaded before anything is timed
    t0 = time.perf_counter()
    serial = [run_chip(study, i) for i in range(study.chips)]
    serial_s = time.perf_counter() - t0
    print(f"  plain loop: {serial_s:.1f} s", file=sys.stderr)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        one_s, one = timed_study(study, tmp / "one", 1)
        print(f"  1 worker: {one_s:.1f} s", file=sys.stderr)
        two_s, two = timed_study(study, tmp / "two", 2)
        print(f"  2 workers: {two_s:.1f} s", file=sys.stderr)
        resume = resume_lost(study, serial, tmp / "resume")
    figures = {
        "ports": study.ports,
        "chips": study.chips,
        "cores": os.cpu_count(),
        "chips_per_s_per_core": study.chips / serial_s,
        "scaling_2_workers": one_s / two_s,
        "overhead_vs_serial": one_s / serial_s,
        "identical_across_workers": serial == one == two,
        "resume_lost_chips": resume["lost_chips"],
        "resume_rows_on_disk_at_kill": resume["rows_on_disk_at_kill"],
        "serial_s": serial_s,
        "one_worker_s": one_s,
        "two_workers_s": two_s,
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"Yield study, {study.ports}-port Clements, {study.chips} chips, {os.cpu_count()} cores")
    print(f"  chips per second per core      {figures['chips_per_s_per_core']:.3f}")
    print(f"  scaling, 2 workers / 1         {figures['scaling_2_workers']:.2f}   (goal >= 1.7)")
    print(f"  overhead, 1 worker / loop      {figures['overhead_vs_serial']:.2f}   (goal <= 1.15)")
    print(f"  identical across workers       {figures['identical_across_workers']}")
    print(
        f"  chips lost after kill + resume {figures['resume_lost_chips']}   "
        f"({resume['rows_on_disk_at_kill']} rows on disk at the kill)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
