"""A yield study on Dask: every chip of a :class:`~photonics.chip_yield.YieldStudy` is one task
(:func:`photonics.chip_yield.run_chip`) on ``dask.distributed``, and its row is written to
Parquet as it arrives.

The cluster is a :class:`distributed.LocalCluster` of one single-threaded worker process per
core unless a scheduler's address is given (an existing cluster: ``dask scheduler`` and
``dask worker ADDRESS`` on each machine). Dask schedules the tasks and retries those of a
worker that dies; nothing here does.

The output is a folder of Parquet files, one dataset (``pyarrow.parquet.read_table`` reads it
whole): each batch of rows is one ``part-NNNNN.parquet``, written to a hidden file then renamed,
so a study killed at any moment leaves only whole files. ``_study.json`` holds the study the
rows belong to (:meth:`~photonics.chip_yield.YieldStudy.identity`: all but the number of
chips) and their columns. Run the same study on the same folder again, with as many chips or
more, and it submits only the chips not in it yet; a folder of another study is refused before
anything runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from photonics.chip_yield import YieldStudy, run_chip
from photonics.errors import PswitchError, SettingsError

Progress = Callable[[str, int, int], None]

#: The study a folder's rows belong to.
STUDY_FILE = "_study.json"
#: The columns of a part file: a row of :func:`~photonics.chip_yield.run_chip`.
SCHEMA = pa.schema(
    [
        ("index", pa.int64()),
        ("chip_seed", pa.uint64()),
        ("calibrated", pa.bool_()),
        ("readings", pa.int64()),
        ("matchings", pa.int64()),
        ("worst_isolation_db", pa.float64()),
        ("worst_loss_db", pa.float64()),
        ("worst_excess_loss_db", pa.float64()),
        ("max_coupler_error", pa.float64()),
        ("heater_efficiency_rms", pa.float64()),
        ("max_mzi_loss_db", pa.float64()),
        ("passed", pa.bool_()),
    ]
)
#: A batch is written once it holds this many rows ...
FLUSH_ROWS = 32
#: ... or this many seconds after its first row arrived.
FLUSH_S = 5.0


def read_rows(folder: Path) -> list[dict[str, Any]]:
    """The rows already in ``folder`` (none when it holds no part), by chip index, each once."""
    parts = sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []
    seen: dict[int, dict[str, Any]] = {}
    for part in parts:
        for row in pq.read_table(part).to_pylist():
            seen.setdefault(int(row["index"]), row)
    return [seen[i] for i in sorted(seen)]


def prepare(study: YieldStudy, folder: Path) -> list[dict[str, Any]]:
    """Make ``folder`` hold ``study`` (its ``_study.json``); the rows already there. A folder of
    another study is refused (SettingsError): its rows would not belong to this one."""
    wanted = study.identity() | {"columns": SCHEMA.names}
    marker = folder / STUDY_FILE
    if marker.exists():
        held = json.loads(marker.read_text())
        if held != wanted:
            changed = sorted(k for k in wanted.keys() | held.keys() if held.get(k) != wanted.get(k))
            raise SettingsError(
                f"{folder} holds the rows of another study (differs in {', '.join(changed)}); "
                f"give another --output, or the same settings to resume it"
            )
    else:
        if folder.exists() and any(folder.iterdir()):
            raise SettingsError(f"{folder} is a folder of other files; give a new or empty one")
        folder.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps(wanted, indent=2) + "\n")
    return [r for r in read_rows(folder) if r["index"] < study.chips]


def write_part(folder: Path, rows: list[dict[str, Any]]) -> Path:
    """Write ``rows`` as the folder's next part file, whole or not at all; its path."""
    numbers = [int(p.stem.split("-")[1]) for p in folder.glob("part-*.parquet")]
    path = folder / f"part-{max(numbers, default=-1) + 1:05d}.parquet"
    hidden = folder / f".{path.name}.tmp"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), hidden)
    os.replace(hidden, path)
    return path


def cluster(workers: int | None, scheduler: str | None, stack: ExitStack) -> Any:
    """A ``distributed.Client``, closed with ``stack``: of the scheduler at ``scheduler``, else
    of a new local cluster of ``workers`` single-threaded worker processes (None: one per
    core)."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            return stack.enter_context(Client(scheduler))
        except OSError as exc:  # refused or timed out (distributed.comm.timeouts.connect)
            raise PswitchError(
                f"cannot reach the Dask scheduler at {scheduler} ({exc}); start one with "
                f"`dask scheduler` and its workers with `dask worker ADDRESS`, or leave out "
                f"--scheduler for a local cluster"
            ) from None
    local = LocalCluster(
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    )
    stack.enter_context(local)
    return stack.enter_context(Client(local))


def task_keys(study: YieldStudy, indices: list[int]) -> list[str]:
    """Dask keys of the chips ``indices`` of ``study``: unique to the study, so that studies
    sharing a cluster never share a result."""
    token = hashlib.sha256(json.dumps(study.identity(), sort_keys=True).encode()).hexdigest()
    return [f"chip-{token[:16]}-{i}" for i in indices]


def run_study(
    study: YieldStudy,
    folder: Path,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Run the chips of ``study`` not yet in ``folder`` on Dask (see the module docstring);
    every row of the study, by chip index. Rows are written as they arrive; an interrupted
    run keeps those that arrived (the batch in hand is written before it stops)."""
    from distributed import as_completed

    tick = progress or (lambda stage, done, total: None)
    done = prepare(study, folder)
    missing = sorted(set(range(study.chips)) - {r["index"] for r in done})
    count = len(done)
    tick("chips", count, study.chips)
    if not missing:
        return done
    batch: list[dict[str, Any]] = []
    started = time.monotonic()
    with ExitStack() as stack:
        try:
            client = cluster(workers, scheduler, stack)
            futures = client.map(
                run_chip, [study] * len(missing), missing, key=task_keys(study, missing)
            )
            for future in as_completed(futures):
                if not batch:
                    started = time.monotonic()
                batch.append(future.result())
                future.release()
                count += 1
                tick("chips", count, study.chips)
                if len(batch) >= FLUSH_ROWS or time.monotonic() - started >= FLUSH_S:
                    write_part(folder, batch)
                    batch = []
        finally:
            if batch:  # before the cluster closes: what arrived is kept
                write_part(folder, batch)
    return [r for r in read_rows(folder) if r["index"] < study.chips]
