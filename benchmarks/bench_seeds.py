"""The published rack-scale figures, each reproduced from its paper's stated setup on the
emulated switch (``pswitch rack``, docs/rack.md), side by side with the published value.

Figures (``--json``): ``reconfig_s_parallel_32`` (the 32-endpoint hexagonal switch's
reconfiguration with the parallel driver class, as its firmware reports it, median over random
matchings), ``failover_throughput_ratio`` and ``failover_swap_restart_s`` (LUMION's fine-tuning
through a failure), ``slicing_collective_speedup`` and ``slicing_training_speedup`` (Morphlux's
prototype slice), ``slicing_fragmentation_electrical`` and ``slicing_fragmentation_photonic``
(a tenant trace on its 64-accelerator torus rack), ``rails_iteration_ratio`` and
``rails_breakeven_reconfig_s`` (Opus's Llama-3 8B step on optical rails),
``straggler_speedup_8`` (StragglAR on 8 ranks), ``verified_configs`` and
``verified_worst_isolation_db`` (the studies' configurations applied to the emulated switch
and verified on its photodiodes), ``sweep_scaling_2_workers`` (a sweep's time on one local Dask
worker over its time on two) and ``published`` (the published figures by key).

Run::

    python benchmarks/bench_seeds.py            # the table
    python benchmarks/bench_seeds.py --json     # one JSON object
    python benchmarks/bench_seeds.py --quick    # fewer jobs and configurations, no sweep
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from firmware.sdk import Switch
from photonics import levels
from photonics.matching import Matching
from pswitch.rack import studies, sweep
from pswitch.rack.setups import PUBLISHED
from pswitch.yield_study import cluster


def reconfig_32(matchings: int) -> float:
    """The median reconfiguration (s) the 32-endpoint switch reports with parallel DACs."""
    with Switch.emulated(ports=32, mesh="switch32", driver="parallel") as sw:
        steps = [(Matching.random(32, np.random.default_rng(s)), 1e-3) for s in range(matchings)]
        return statistics.median(sw.run_matchings(steps)[1:])  # after the first, from idle


def sweep_scaling(points: int) -> float:
    """A sweep's time on one local worker over its time on two (fresh folders, same points),
    each once its cluster is up and has run one point (its workers' imports: a one-time cost)."""
    seconds = []
    for workers in (1, 2):
        folder = Path(tempfile.mkdtemp(prefix="rack-sweep-"))
        try:
            with ExitStack() as stack:
                client = cluster(workers, None, stack)
                client.run(_warm)
                t0 = time.perf_counter()
                sweep.run("slicing", ["parallel"], points, folder / "rows", client=client)
                seconds.append(time.perf_counter() - t0)
        finally:
            shutil.rmtree(folder)
    return seconds[0] / seconds[1]


def _warm() -> None:
    """A worker's first point imports the studies and compiles the mesh kernels: done here."""
    studies.slicing(jobs=2)


def measure(quick: bool) -> dict[str, Any]:
    check = 4 if quick else 16
    failover = studies.failover(check=check)
    slicing = studies.slicing(jobs=20 if quick else 60, check=check)
    rails = studies.rails(check=check)
    straggler = studies.straggler()
    checks = [s["verification"] for s in (failover, slicing, slicing["hexagonal"], rails)]
    return {
        "reconfig_s_parallel_32": reconfig_32(4 if quick else 12),
        "failover_throughput_ratio": failover["throughput_ratio"],
        "failover_swap_restart_s": failover["swap"]["total_s"],
        "slicing_collective_speedup": slicing["prototype"]["collective_speedup"],
        "slicing_training_speedup": slicing["prototype"]["training_speedup"],
        "slicing_fragmentation_electrical": slicing["fabrics"]["torus"]["fragmentation"],
        "slicing_fragmentation_photonic": slicing["fabrics"]["photonic"]["fragmentation"],
        "rails_iteration_ratio": rails["iteration_ratio"],
        "rails_breakeven_reconfig_s": rails["breakeven_reconfig_s"],
        "straggler_speedup_8": straggler["speedup_8"],
        "verified_configs": sum(c["verified"] for c in checks),
        "applied_configs": sum(c["applied"] for c in checks),
        "verified_worst_isolation_db": levels.worst(
            r["isolation_db"] for c in checks for r in c["configurations"] if r["verified"]
        ),
        # quick: no second cluster (the suite runs a sweep on Dask in tests/pswitch/rack)
        "sweep_scaling_2_workers": None if quick else sweep_scaling(12),
        "published": PUBLISHED,
    }


def table(f: dict[str, Any]) -> str:
    published = f["published"]
    lines = [f"{'figure':<36} {'here':>12} {'published':>10}"]
    for key, value in f.items():
        if key == "published":
            continue
        shown = "n/a" if value is None else f"{value:.4g}"
        lines.append(f"{key:<36} {shown:>12} {published.get(key, ''):>10}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer jobs, checks and points")
    args = parser.parse_args()
    figures = measure(args.quick)
    # the model's own checks: the photonic slices never fragment, the parallel driver meets
    # its goal, and every configuration a study applied is counted
    assert figures["slicing_fragmentation_photonic"] == 0.0
    assert figures["reconfig_s_parallel_32"] <= 1e-4
    assert 0 < figures["verified_configs"] <= figures["applied_configs"]
    print(json.dumps(figures) if args.json else table(figures))


if __name__ == "__main__":
    main()
