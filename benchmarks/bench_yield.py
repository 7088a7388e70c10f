"""Yield at scale: chips per second per core of ``pswitch yield``, and how it scales on Dask.

Each chip is one task: drawn from the study's seed and its index, self-calibrated through its
photodiodes, set to every matching of the all-to-all cover and measured (16-port Clements by
default). Every time is steady state: numba's kernels loaded (never compiled: ``make lint``
warms its cache) and the Dask workers started and warmed by a first small chip before the
clock starts; the start-up is reported on its own. Each run is timed ``--repeats`` times and
the fastest kept (the machine may be shared: the slower runs measure the other load).

- ``chips_per_s_per_core``: a plain loop of :func:`photonics.fabrication.chip_yield.run_chip` in
  this process, with one BLAS thread (as in a Dask worker: numpy's default of one thread per core
  makes the loop slower);
- ``scaling_2_workers``: throughput of a local Dask cluster of 2 single-threaded worker
  processes over that of 1 (:func:`pswitch.yield_study.run_study` on a warmed cluster, from
  submission to the last row on disk; 2 on a 2-core machine is the most);
- ``overhead_vs_serial``: the same with 1 worker over the plain loop (scheduling, moving
  rows back, Parquet writes); ``overhead_vs_serial_cpu`` the same in CPU time (the workers'
  and this process's), which other work on the machine does not move;
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
from contextlib import ExitStack  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from photonics.fabrication.chip_yield import run_chip  # noqa: E402
from photonics.fabrication.study import YieldStudy  # noqa: E402
from pswitch.yield_study import cluster, read_rows, run_study  # noqa: E402


def warm_up() -> None:
    """A small chip: imports done and numba's kernels loaded in the process that runs it."""
    run_chip(YieldStudy(ports=4, chips=1), 0)


def serial_loop(study: YieldStudy, repeats: int) -> tuple[float, float, list[dict]]:
    """The fastest of ``repeats`` plain loops over the study's chips: wall and CPU time, s;
    the rows."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        rows = [run_chip(study, i) for i in range(study.chips)]
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu, rows


def on_dask(
    study: YieldStudy, folder: Path, workers: int, repeats: int
) -> tuple[float, float, float, list[dict]]:
    """Start-up of a local cluster of ``workers`` (warmed, s), then the fastest of ``repeats``
    runs of the study on it (each into a new folder): wall time and CPU time (the workers' and
    this process's, where the scheduler runs), s; the rows."""
    with ExitStack() as stack:
        t0 = time.perf_counter()
        client = cluster(workers, None, stack)
        client.run(warm_up)  # on every worker
        startup = time.perf_counter() - t0
        wall = cpu = float("inf")
        for r in range(repeats):
            before, c0 = client.run(time.process_time), time.process_time()
            t0 = time.perf_counter()
            rows = run_study(study, folder / f"run{r}", client=client)
            wall = min(wall, time.perf_counter() - t0)
            after = client.run(time.process_time)
            used = sum(after[w] - before[w] for w in after) + time.process_time() - c0
            cpu = min(cpu, used)
    return startup, wall, cpu, rows


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
    parser.add_argument("--chips", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 4 chips of 8 ports, once"
    )
    args = parser.parse_args()
    if args.quick:
        args.ports, args.chips, args.repeats = 8, 4, 1
    study = YieldStudy(ports=args.ports, chips=args.chips, seed=args.seed)
    warm_up()
    serial_s, serial_cpu, serial = serial_loop(study, args.repeats)
    print(f"  plain loop: {serial_s:.1f} s", file=sys.stderr)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        start1, one_s, one_cpu, one = on_dask(study, tmp / "one", 1, args.repeats)
        print(f"  1 worker: {one_s:.1f} s (start-up {start1:.1f} s)", file=sys.stderr)
        start2, two_s, two_cpu, two = on_dask(study, tmp / "two", 2, args.repeats)
        print(f"  2 workers: {two_s:.1f} s (start-up {start2:.1f} s)", file=sys.stderr)
        resume = resume_lost(study, serial, tmp / "resume")
    figures = {
        "ports": study.ports,
        "chips": study.chips,
        "cores": os.cpu_count(),
        "repeats": args.repeats,
        "chips_per_s_per_core": study.chips / serial_s,
        "scaling_2_workers": one_s / two_s,
        "overhead_vs_serial": one_s / serial_s,
        "overhead_vs_serial_cpu": one_cpu / serial_cpu,
        "cpu_2_workers_vs_serial": two_cpu / serial_cpu,
        "identical_across_workers": serial == one == two,
        "resume_lost_chips": resume["lost_chips"],
        "resume_rows_on_disk_at_kill": resume["rows_on_disk_at_kill"],
        "serial_s": serial_s,
        "one_worker_s": one_s,
        "two_workers_s": two_s,
        "serial_cpu_s": serial_cpu,
        "one_worker_cpu_s": one_cpu,
        "two_workers_cpu_s": two_cpu,
        "startup_1_worker_s": start1,
        "startup_2_workers_s": start2,
        "load_average_1min": os.getloadavg()[0],
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(
        f"Yield study, {study.ports}-port Clements, {study.chips} chips, {os.cpu_count()} cores "
        f"(fastest of {args.repeats}; load average {figures['load_average_1min']:.2f})"
    )
    print(f"  {'':<32}{'measured':>10}   baseline")
    print(f"  {'chips per second per core':<32}{figures['chips_per_s_per_core']:>10.3f}")
    print(
        f"  {'seconds, plain loop / 1 / 2':<32}{serial_s:>10.1f}   {one_s:.1f} / {two_s:.1f} "
        f"(start-up {start1:.1f} / {start2:.1f} s, not counted)"
    )
    print(f"  {'scaling, 2 workers / 1':<32}{figures['scaling_2_workers']:>10.2f}   goal >= 1.7")
    over, over_cpu = figures["overhead_vs_serial"], figures["overhead_vs_serial_cpu"]
    print(f"  {'overhead, 1 worker / loop':<32}{over:>10.2f}   goal <= 1.15 (wall time)")
    print(
        f"  {'  the same in CPU time':<32}{over_cpu:>10.2f}   2 workers: {two_cpu / serial_cpu:.2f}"
    )
    print(f"  {'identical across workers':<32}{figures['identical_across_workers']!s:>10}")
    print(
        f"  {'chips lost after kill + resume':<32}{figures['resume_lost_chips']:>10}   goal 0 "
        f"({resume['rows_on_disk_at_kill']} rows on disk at the kill)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
