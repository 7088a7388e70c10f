"""Rack studies swept over driver classes and seeds as tasks on ``dask.distributed``, as
``pswitch yield`` runs its chips: a local cluster by default, or a scheduler's; every finished
point a row in a Parquet folder, so that a sweep interrupted resumes where it stopped.

A point is one study at one driver class and one seed; its row holds the study's figures and
the reconfiguration time of its driver class (one full reconfiguration of the rack's chips), so
each answer says at which reconfiguration time it holds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from firmware.electronics import DRIVER_CLASSES
from photonics.errors import SettingsError
from pswitch.rack import model, setups, studies
from pswitch.yield_study import claim, cluster, write_part

#: The file naming the sweep a folder holds.
SWEEP_FILE = "_rack_sweep.json"
#: The studies a sweep runs, and the rack each prices its reconfiguration on.
STUDIES: dict[str, Any] = {
    "failover": setups.PROTOTYPE,
    "slicing": setups.TORUS_RACK,
    "rails": setups.PERLMUTTER,
}
Progress = Callable[[str, int, int], None]


def point(study: str, driver: str, seed: int, jobs: int = 60) -> dict[str, Any]:
    """One point of a sweep: ``study`` at ``driver`` and ``seed`` (slicing: of ``jobs``
    jobs), as a flat row."""
    from dataclasses import replace

    rack = replace(STUDIES[study], driver=driver)
    row: dict[str, Any] = {
        "key": key(study, driver, seed),
        "study": study,
        "driver": driver,
        "seed": seed,
        "reconfigure_s": model.reconfigure_s(rack),
    }
    if study == "failover":
        r = studies.failover(driver=driver, seed=seed)
        row |= {"figure": r["throughput_ratio"], "swap_s": r["swap"]["total_s"]}
    elif study == "slicing":
        r = studies.slicing(jobs=jobs, seed=seed, driver=driver)
        row |= {
            "figure": r["trace_training_speedup"],
            "collective_speedup": r["trace_collective_speedup"],
            "fragmentation_torus": r["fabrics"]["torus"]["fragmentation"],
            "fragmentation_photonic": r["fabrics"]["photonic"]["fragmentation"],
            "per_step_over_per_job": r["per_step"]["throughput"]
            / r["fabrics"]["photonic"]["throughput"],
        }
    else:
        r = studies.rails(driver=driver)
        row |= {"figure": r["iteration_ratio"], "breakeven_s": r["breakeven_reconfig_s"]}
    return row


def key(study: str, driver: str, seed: int) -> str:
    token = hashlib.sha256(json.dumps([study, driver, seed]).encode()).hexdigest()[:16]
    return f"rack-{study}-{driver}-{seed}-{token}"


def read_rows(folder: Path) -> list[dict[str, Any]]:
    """The rows already in ``folder``, each point once."""
    seen: dict[str, dict[str, Any]] = {}
    for part in sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []:
        for row in pq.read_table(part).to_pylist():
            seen.setdefault(row["key"], row)
    return list(seen.values())


def run(
    study: str,
    drivers: list[str],
    seeds: int,
    folder: Path,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
    client: Any = None,
) -> list[dict[str, Any]]:
    """Every point of ``study`` x ``drivers`` x seeds 0..``seeds``-1 not yet in ``folder``, on
    Dask (``client``, else a local cluster of ``workers`` or the one of ``scheduler``); every
    row of the sweep, in (driver, seed) order. A folder of another sweep is refused."""
    from distributed import as_completed

    if study not in STUDIES:
        raise SettingsError(f"study must be one of {', '.join(STUDIES)}, got {study!r}")
    bad = [d for d in drivers if d not in DRIVER_CLASSES]
    if bad or not drivers:
        raise SettingsError(f"drivers must be among {', '.join(DRIVER_CLASSES)}, got {drivers}")
    claim(folder, SWEEP_FILE, {"study": study}, "rack sweep")
    wanted = [(d, s) for d in drivers for s in range(seeds)]
    done = {r["key"] for r in read_rows(folder)}
    missing = [(d, s) for d, s in wanted if key(study, d, s) not in done]
    tick = progress or (lambda stage, n, total: None)
    tick("points", len(wanted) - len(missing), len(wanted))
    if missing:
        with ExitStack() as stack:
            client = client if client is not None else cluster(workers, scheduler, stack)
            futures = client.map(
                point,
                [study] * len(missing),
                [d for d, _ in missing],
                [s for _, s in missing],
                key=[key(study, d, s) for d, s in missing],
            )
            count = len(wanted) - len(missing)
            for future in as_completed(futures):
                write_part(folder, [future.result()], schema=None)  # each point kept as it arrives
                future.release()
                count += 1
                tick("points", count, len(wanted))
    order = {key(study, d, s): i for i, (d, s) in enumerate(wanted)}
    rows = [r for r in read_rows(folder) if r["key"] in order]
    return sorted(rows, key=lambda r: order[r["key"]])
