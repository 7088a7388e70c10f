"""A yield study on Dask: every chip of a :class:`~photonics.fabrication.study.YieldStudy` is one
task (:func:`photonics.fabrication.chip_yield.run_chip`) on ``dask.distributed``, and its row is
written to Parquet as it arrives.

The cluster is a :class:`distributed.LocalCluster` of one single-threaded worker process per
core unless a scheduler's address is given (an existing cluster: ``dask scheduler`` and
``dask worker ADDRESS`` on each machine). Dask schedules the tasks and retries those of a
worker that dies; nothing here does.

The output is a folder of Parquet files, one dataset (``pyarrow.parquet.read_table`` reads it
whole): each batch of rows is one ``part-NNNNN.parquet``, written to a hidden file then renamed,
so a study killed at any moment leaves only whole files; a run that leaves more than
:data:`COMPACT_PARTS` of them compacts them into one. ``_study.json`` holds the study the
rows belong to (:meth:`~photonics.fabrication.study.YieldStudy.identity`: all but the number of
chips) and their columns. Run the same study on the same folder again, with as many chips or
more, and it submits only the chips not in it yet; a folder of another study is refused before
anything runs.

A sweep's folder holds one such folder per point, named Hive-style after the point
(``coupler_sigma=0.02/pitch_y_um=30.0``, so that ``pyarrow.parquet.read_table`` of the whole
folder has the swept numbers as columns), and ``_sweep.json``, what is swept. Every point's
missing chips are submitted at once, so a sweep keeps every worker busy, and each point resumes
on its own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from photonics.errors import PswitchError, SettingsError
from photonics.fabrication.chip_yield import run_chip
from photonics.fabrication.study import YieldStudy, passes
from photonics.fabrication.yield_stats import sweep_points

Progress = Callable[[str, int, int], None]
#: A sweep's axes: (name of a study number, its values), one or two.
Axes = list[tuple[str, list[float]]]

#: The study a folder's rows belong to.
STUDY_FILE = "_study.json"
#: What a sweep's folder sweeps.
SWEEP_FILE = "_sweep.json"
#: The columns of a part file: a row of :func:`~photonics.fabrication.chip_yield.run_chip`.
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
        ("worst_power_mW", pa.float64()),
        ("optimal_worst_isolation_db", pa.float64()),
        ("cells", pa.int64()),
        ("max_coupler_error", pa.float64()),
        ("heater_efficiency_rms", pa.float64()),
        ("max_mzi_loss_db", pa.float64()),
        ("max_ring_offset_nm", pa.float64()),
        ("passed", pa.bool_()),
    ]
)
#: Dask settings of the local cluster's workers. A chip's numerics make and drop many arrays of
#: a few hundred kB: glibc's default (a trim threshold that adapts) serves them, where Dask's
#: fixed 64 kB trim threshold (returning memory to the system sooner) costs 7 % more CPU time
#: in page faults; no statistical profiler sampling the task every 10 ms; the idle machinery's
#: periodic callbacks less often (an idle 1-worker cluster drew 3 % of a core, now 1 %); and
#: this module preloaded (:func:`dask_setup`).
LOCAL_WORKERS = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "200ms",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.worker.preload": [__name__],
}
#: A batch is written once it holds this many rows ...
FLUSH_ROWS = 32
#: ... or this many seconds after its first row arrived.
FLUSH_S = 5.0
#: A folder left with more part files than this after a run is compacted into one
#: (:func:`compact`): a study of thousands of chips would otherwise leave hundreds of small
#: files, each a read and a schema to merge for whoever opens the dataset.
COMPACT_PARTS = 8


def dask_setup(worker: Any) -> None:
    """Preloaded in each local worker process: Ctrl-C is the command's, which closes the
    cluster in order (the workers share its terminal's process group, and a worker's own
    KeyboardInterrupt would print Dask's tracebacks); only Dask's errors are logged."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger("distributed").setLevel(logging.ERROR)


def read_rows(folder: Path) -> list[dict[str, Any]]:
    """The rows already in ``folder`` (none when it holds no part), by chip index, each once."""
    parts = sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []
    seen: dict[int, dict[str, Any]] = {}
    for part in parts:
        for row in pq.read_table(part).to_pylist():
            seen.setdefault(int(row["index"]), row)
    return [seen[i] for i in sorted(seen)]


def claim(folder: Path, marker: str, wanted: dict[str, Any], what: str) -> None:
    """Make ``folder`` hold ``wanted`` in its file ``marker``; a folder that holds another
    (SettingsError, naming the keys that differ) or other files is refused."""
    path = folder / marker
    if path.exists():
        held = json.loads(path.read_text())
        if held != wanted:
            changed = sorted(k for k in wanted.keys() | held.keys() if held.get(k) != wanted.get(k))
            raise SettingsError(
                f"{folder} holds the rows of another {what} (differs in {', '.join(changed)}); "
                f"give another --output, or the same settings to resume it"
            )
        return
    if folder.exists() and any(folder.iterdir()):
        raise SettingsError(f"{folder} is a folder of other files; give a new or empty one")
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(wanted, indent=2) + "\n")


def prepare(study: YieldStudy, folder: Path) -> list[dict[str, Any]]:
    """Make ``folder`` hold ``study`` (its ``_study.json``); the rows already there. A folder of
    another study is refused (SettingsError): its rows would not belong to this one."""
    claim(folder, STUDY_FILE, study.identity() | {"columns": SCHEMA.names}, "study")
    return [r for r in read_rows(folder) if r["index"] < study.chips]


def point_folder(folder: Path, study: YieldStudy, axes: Axes) -> Path:
    """The folder of a sweep's point ``study``: ``name=value`` for each swept number."""
    return folder.joinpath(*(f"{name}={getattr(study, name)!r}" for name, _ in axes))


def prepare_sweep(base: YieldStudy, axes: Axes, folder: Path) -> list[tuple[YieldStudy, Path]]:
    """The points of the sweep of ``base`` over ``axes`` (SettingsError when a point is no
    study), each with its folder, once ``folder`` holds the sweep (its ``_sweep.json``; a
    folder of another sweep or of other files is refused) and each point's folder its study."""
    points = sweep_points(base, axes)
    wanted = {"base": base.identity(), "axes": [[name, list(values)] for name, values in axes]}
    claim(folder, SWEEP_FILE, json.loads(json.dumps(wanted)), "sweep")
    out = [(study, point_folder(folder, study, axes)) for study in points]
    for study, where in out:
        prepare(study, where)
    return out


def write_part(folder: Path, rows: list[dict[str, Any]], schema: pa.Schema | None = SCHEMA) -> Path:
    """Write ``rows`` as the folder's next part file, whole or not at all (columns: ``schema``,
    a chip's by default; None: as the rows have them); its path."""
    numbers = [int(p.stem.split("-")[1]) for p in folder.glob("part-*.parquet")]
    path = folder / f"part-{max(numbers, default=-1) + 1:05d}.parquet"
    hidden = folder / f".{path.name}.tmp"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), hidden)
    os.replace(hidden, path)
    return path


def compact(folder: Path) -> None:
    """Rewrite ``folder``'s part files as one (the next part number, written whole, then the
    old parts removed). Safe at any instant: until the old parts are gone, each chip's row is
    in two files, and :func:`read_rows` keeps one."""
    parts = list(folder.glob("part-*.parquet"))
    if len(parts) > 1:
        write_part(folder, read_rows(folder))
        for part in parts:
            part.unlink()


#: How long a Dask scheduler may take to answer a connection, s.
SCHEDULER_TIMEOUT_S = 3.0


def _unreachable(scheduler: str, why: object) -> PswitchError:
    return PswitchError(
        f"cannot reach the Dask scheduler at {scheduler} ({why}); start one with "
        f"`dask scheduler` and its workers with `dask worker ADDRESS`, or leave out "
        f"--scheduler for a local cluster"
    )


def reach(scheduler: str) -> None:
    """Raise :class:`PswitchError` unless a scheduler answers a connection at ``scheduler``
    (``SCHEME://HOST:PORT``) within :data:`SCHEDULER_TIMEOUT_S`: before a study writes its
    folder."""
    host, _, port = scheduler.partition("://")[2].rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), SCHEDULER_TIMEOUT_S).close()
    except OSError as exc:
        raise _unreachable(scheduler, exc.strerror or exc) from None


def cluster(workers: int | None, scheduler: str | None, stack: ExitStack) -> Any:
    """A ``distributed.Client``, closed with ``stack``: of the scheduler at ``scheduler``, else
    of a new local cluster of ``workers`` single-threaded worker processes (None: one per
    core)."""
    import dask
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            return stack.enter_context(Client(scheduler, timeout=f"{SCHEDULER_TIMEOUT_S}s"))
        except OSError as exc:  # refused or timed out (distributed.comm.timeouts.connect)
            raise _unreachable(scheduler, exc) from None
    # the cluster is this process's own: what its scheduler logs as it closes (e.g. tasks
    # lost with the workers after a Ctrl-C) is no news; its errors still are
    quiet = logging.getLogger("distributed")
    stack.callback(quiet.setLevel, quiet.level)
    quiet.setLevel(logging.ERROR)
    with dask.config.set(LOCAL_WORKERS):
        local = LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            # its scheduler's HTTP server on a free port: the default 8787 warns when taken
            dashboard_address=":0",
        )
    stack.enter_context(local)
    return stack.enter_context(Client(local))


def task_keys(study: YieldStudy, indices: list[int] | range) -> list[str]:
    """Dask keys of the chips ``indices`` of ``study``: unique to the chip (its study's
    :meth:`~photonics.fabrication.study.YieldStudy.chip_identity` and its index), so that studies
    sharing a cluster share only the same chips, and a sweep over the spec runs each chip once."""
    identity = json.dumps(study.chip_identity(), sort_keys=True).encode()
    token = hashlib.sha256(identity).hexdigest()
    return [f"chip-{token[:16]}-{i}" for i in indices]


def run_points(
    points: list[tuple[YieldStudy, Path]],
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
    client: Any = None,
) -> list[list[dict[str, Any]]]:
    """Run the chips of every study of ``points`` not yet in its folder, all at once on Dask
    (``client``, else a cluster of :func:`cluster`, only when a chip is missing); every row
    of each study, by chip index. Rows are written as they arrive, to their study's folder;
    an interrupted run keeps those that arrived (the batches in hand are written before it
    stops)."""
    from distributed import as_completed

    tick = progress or (lambda stage, done, total: None)
    total = sum(study.chips for study, _ in points)
    owners: dict[str, list[int]] = {}  # task key -> the points that want its chip
    tasks: list[tuple[YieldStudy, int, str]] = []
    count = 0
    for i, (study, folder) in enumerate(points):
        done = {r["index"] for r in prepare(study, folder)}
        count += len(done)
        missing = sorted(set(range(study.chips)) - done)
        for index, key in zip(missing, task_keys(study, missing), strict=True):
            if key not in owners:  # the same chip at points that differ only in the spec
                tasks.append((study, index, key))
            owners.setdefault(key, []).append(i)
    tick("chips", count, total)
    batches: dict[int, list[dict[str, Any]]] = {}
    started = time.monotonic()

    def flush() -> None:
        for i, rows in batches.items():
            if rows:
                write_part(points[i][1], rows)
        batches.clear()

    with ExitStack() as stack:
        try:
            if tasks:
                client = client if client is not None else cluster(workers, scheduler, stack)
                studies, indices, keys = (list(column) for column in zip(*tasks, strict=True))
                futures = client.map(run_chip, studies, indices, key=keys)
                for future in as_completed(futures):
                    if not batches:
                        started = time.monotonic()
                    row = future.result()
                    for i in owners[future.key]:  # each point judges the chip by its spec
                        mine = row | {"passed": passes(points[i][0], row)}
                        batches.setdefault(i, []).append(mine)
                    future.release()
                    count += len(owners[future.key])
                    tick("chips", count, total)
                    waiting = sum(len(rows) for rows in batches.values())
                    if waiting >= FLUSH_ROWS or time.monotonic() - started >= FLUSH_S:
                        flush()
        finally:
            flush()  # before the cluster closes: what arrived is kept
    for _, folder in points:
        if len(list(folder.glob("part-*.parquet"))) > COMPACT_PARTS:
            compact(folder)
    return [[r for r in read_rows(folder) if r["index"] < s.chips] for s, folder in points]


def run_study(
    study: YieldStudy,
    folder: Path,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
    client: Any = None,
) -> list[dict[str, Any]]:
    """Run the chips of ``study`` not yet in ``folder`` on Dask (see the module docstring and
    :func:`run_points`); every row of the study, by chip index."""
    return run_points([(study, folder)], workers, scheduler, progress, client)[0]


def run_sweep(
    base: YieldStudy,
    axes: Axes,
    folder: Path,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
    client: Any = None,
) -> tuple[list[YieldStudy], list[list[dict[str, Any]]]]:
    """Run the sweep of ``base`` over ``axes``
    (:func:`photonics.fabrication.yield_stats.sweep_points`, ``base.chips`` chips at each point) in
    ``folder``, resuming each point: its studies and the rows of each, every row with its point's
    swept numbers."""
    points = prepare_sweep(base, axes, folder)
    rows = run_points(points, workers, scheduler, progress, client)
    studies = [study for study, _ in points]
    return studies, [
        [r | {name: getattr(study, name) for name, _ in axes} for r in chips]
        for study, chips in zip(studies, rows, strict=True)
    ]
