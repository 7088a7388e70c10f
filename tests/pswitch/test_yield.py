"""``pswitch yield`` on real Dask clusters and real Parquet files: the rows are the same chip by
chip whatever the number of workers, the order they finish in or a worker killed mid-study; a
study resumed on its folder runs only the chips missing from it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from distributed import Client

from firmware.fabric.jobs import Job, job_matchings
from photonics.fabrication.chip_yield import run_chip
from photonics.fabrication.study import YieldStudy
from pswitch import yield_study
from pswitch.cli import main
from pswitch.yield_command import workload_matchings
from pswitch.yield_study import prepare, read_rows, run_study, write_part

STUDY = YieldStudy(ports=4, chips=6, seed=5)
DASK = Path(sys.executable).with_name("dask")


@pytest.fixture(scope="module")
def serial() -> list[dict]:
    """The study's rows from a plain loop in this process: what every run must give."""
    return [run_chip(STUDY, i) for i in range(STUDY.chips)]


@pytest.mark.parametrize("workers", [1, 2])
def test_rows_are_the_same_with_any_number_of_workers(
    workers: int, serial: list[dict], tmp_path: Path
) -> None:
    ticks: list[int] = []
    rows = run_study(STUDY, tmp_path / "rows", workers, progress=lambda s, d, t: ticks.append(d))
    assert rows == serial
    assert read_rows(tmp_path / "rows") == serial
    assert ticks == list(range(STUDY.chips + 1))  # the bar counts every chip once


def test_a_resumed_study_runs_only_the_missing_chips(serial: list[dict], tmp_path: Path) -> None:
    folder = tmp_path / "rows"
    prepare(STUDY, folder)
    marked = [serial[0] | {"readings": -1}, serial[2] | {"readings": -2}]  # told apart below
    write_part(folder, marked)
    ticks: list[int] = []
    rows = run_study(STUDY, folder, 2, progress=lambda s, d, t: ticks.append(d))
    assert rows == [marked[0], serial[1], marked[1], *serial[3:]]  # kept, not run again
    assert ticks[0] == 2 and ticks[-1] == STUDY.chips
    new = pq.read_table(folder / "part-00001.parquet").column("index").to_pylist()
    assert sorted(new) == [1, 3, 4, 5]
    # more chips of the same study: only the new ones run; nothing left to run: no cluster
    bigger = YieldStudy(ports=4, chips=7, seed=5)
    assert run_study(bigger, folder, 1)[-1] == run_chip(bigger, 6)
    assert len(list(folder.glob("part-*.parquet"))) == 3
    assert run_study(bigger, folder, workers=1, scheduler="tcp://127.0.0.1:1") == read_rows(folder)


def test_a_run_that_leaves_many_parts_compacts_them_into_one(
    serial: list[dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "rows"
    prepare(STUDY, folder)
    for row in serial[:3]:  # three earlier runs of a chip each
        write_part(folder, [row])
    monkeypatch.setattr(yield_study, "FLUSH_ROWS", 1)  # a part per chip from here on
    monkeypatch.setattr(yield_study, "COMPACT_PARTS", 4)
    assert run_study(STUDY, folder, 1) == serial
    parts = list(folder.glob("part-*.parquet"))
    assert [p.name for p in parts] == ["part-00006.parquet"]  # after 0..5, one file
    assert pq.read_table(parts[0]).to_pylist() == serial
    # killed between writing the compacted file and removing the old ones: nothing doubles
    write_part(folder, serial[4:])
    yield_study.compact(folder)
    assert read_rows(folder) == serial
    assert [p.name for p in folder.glob("part-*.parquet")] == ["part-00008.parquet"]


def test_a_folder_of_another_study_or_other_files_is_refused(tmp_path: Path) -> None:
    prepare(STUDY, tmp_path / "rows")
    before = sorted(p.name for p in (tmp_path / "rows").iterdir())
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["yield", "--ports", "4", "--seed", "6", "--output", str(tmp_path / "rows")])
    assert code == 2
    assert "holds the rows of another study (differs in seed)" in err.getvalue()
    assert sorted(p.name for p in (tmp_path / "rows").iterdir()) == before
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with contextlib.redirect_stderr(err):
        assert main(["yield", "--output", str(tmp_path / "other")]) == 2
    assert "is a folder of other files" in err.getvalue()
    assert [p.name for p in (tmp_path / "other").iterdir()] == ["notes.txt"]


def test_the_command_prints_the_summary(serial: list[dict], tmp_path: Path) -> None:
    out = io.StringIO()
    argv = ["yield", "--chips", "6", "--ports", "4", "--seed", "5", "--workers", "2"]
    with contextlib.redirect_stdout(out):
        code = main([*argv, "--output", str(tmp_path / "rows"), "--json"])
    assert code == 0
    result = json.loads(out.getvalue())
    passed = sum(r["passed"] for r in serial)
    assert (result["chips"], result["passed"], result["chips_run_now"]) == (6, passed, 6)
    low, high = result["yield_95"]
    assert low <= result["yield"] == passed / 6 <= high
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main([*argv, "--output", str(tmp_path / "rows")]) == 0
    assert f"passed {passed} of 6" in text.getvalue()
    assert "(0 chips run now)" in text.getvalue()
    assert "pitch as the layout draws it;" in text.getvalue()


def test_an_unreachable_scheduler_is_one_line_and_exit_1(tmp_path: Path) -> None:
    err = io.StringIO()
    argv = ["yield", "--ports", "4", "--chips", "2", "--output", str(tmp_path / "rows")]
    with contextlib.redirect_stderr(err):  # checked before the study's folder is made
        code = main([*argv, "--scheduler", "tcp://127.0.0.1:1"])
    assert code == 1
    line = err.getvalue()
    assert line.count("\n") == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in line and "bug" not in line
    assert not (tmp_path / "rows").exists()  # it wrote the study's folder before


@contextlib.contextmanager
def dask_cluster(folder: Path, workers: int) -> Iterator[tuple[str, list[subprocess.Popen]]]:
    """A scheduler and ``workers`` single-threaded workers (no nanny: killing one is final) as
    subprocesses on loopback, started with the standard ``dask`` commands; the address."""
    info = folder / "scheduler.json"
    common = {"cwd": folder, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    loopback = ["--host", "127.0.0.1", "--no-dashboard"]
    scheduler = subprocess.Popen(
        [DASK, "scheduler", *loopback, "--port", "0", "--scheduler-file", str(info)], **common
    )
    procs = [scheduler]
    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        for _ in range(workers):
            procs.append(
                subprocess.Popen(
                    [DASK, "worker", address, *loopback, "--nthreads", "1", "--no-nanny"], **common
                )
            )
        with Client(address) as client:  # every worker in before the study starts
            client.wait_for_workers(workers, timeout=60)
        yield address, procs[1:]
    finally:
        for p in reversed(procs):
            p.kill()
            p.wait(timeout=30)


def test_a_study_on_an_existing_cluster_survives_a_killed_worker(tmp_path: Path) -> None:
    study = YieldStudy(ports=4, chips=10, seed=1)
    with dask_cluster(tmp_path, 2) as (address, workers):
        killed: list[int] = []

        def kill_one(stage: str, done: int, total: int) -> None:
            if done >= 1 and not killed:  # the first row is in: the study is under way
                workers[0].send_signal(signal.SIGKILL)
                killed.append(done)

        rows = run_study(study, tmp_path / "rows", scheduler=address, progress=kill_one)
        assert workers[0].wait(timeout=30) == -signal.SIGKILL and workers[1].poll() is None
    assert killed and killed[0] < study.chips
    assert rows == [run_chip(study, i) for i in range(study.chips)]


@pytest.mark.parametrize(
    ("workload", "ports", "rounds"), [("ring", 8, 2), ("torus", 16, 4), ("torus", 6, 4)]
)
def test_a_training_job_s_workload_is_its_matchings(workload: str, ports: int, rounds: int) -> None:
    pairs = workload_matchings(workload, ports)
    assert len(pairs) == rounds  # torus 2 x 3: rows 1 round, columns of 3: 3 rounds
    shape = {"ring": (), "torus": (4, 4) if ports == 16 else (2, 3)}[workload]
    job = Job(workload, workload, tuple(range(ports)), shape=shape)
    assert pairs == tuple(m.pairs for m in job_matchings(job, ports))
    assert workload_matchings("all-to-all", ports) == ()


def test_the_command_routes_a_training_job_under_a_power_cap(tmp_path: Path) -> None:
    argv = ["yield", "--ports", "4", "--chips", "3", "--workers", "1", "--workload", "ring"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--output", str(tmp_path / "a"), "--json"]) == 0
    result = json.loads(out.getvalue())
    assert result["study"]["matchings"] == [[[0, 1], [2, 3]], [[0, 3], [1, 2]]]
    study = YieldStudy(
        ports=4, chips=3, workload="ring", matchings=(((0, 1), (2, 3)), ((0, 3), (1, 2)))
    )
    rows = [run_chip(study, i) for i in range(3)]
    assert result["passed"] == sum(r["passed"] for r in rows)
    cap = min(r["worst_power_mW"] for r in rows) * 0.999  # below every chip's worst matching
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*argv, "--max-power-mw", f"{cap}", "--output", str(tmp_path / "b"), "--json"])
    assert code == 0 and json.loads(out.getvalue())["passed"] == 0


def wait_for_rows(folder: Path, more_than: int, run: subprocess.Popen) -> int:
    """Wait until ``folder`` holds more than ``more_than`` rows (the command still running);
    how many."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and run.poll() is None:
        held = len(read_rows(folder))
        if held > more_than:
            return held
        time.sleep(0.05)
    raise AssertionError(f"no more than {more_than} rows came (exit {run.poll()})")


@pytest.mark.slow
def test_the_command_interrupted_then_killed_then_resumed_loses_no_chip(tmp_path: Path) -> None:
    study = YieldStudy(ports=4, chips=200, seed=3)
    folder = tmp_path / "rows"
    argv = [sys.executable, "-m", "pswitch", "yield", "--ports", "4", "--chips", "200"]
    argv += ["--seed", "3", "--workers", "2", "--output", str(folder), "--json"]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    # Ctrl-C reaches the command and its workers (one process group): exit 130, rows kept
    run = subprocess.Popen(argv, start_new_session=True, **pipes)
    wait_for_rows(folder, 0, run)
    os.killpg(run.pid, signal.SIGINT)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 130 and err.endswith("pswitch yield: interrupted\n")
    assert "Traceback" not in err and out == ""
    interrupted = len(read_rows(folder))
    assert 0 < interrupted < study.chips
    # killed outright, the command and its workers: the rows written so far are whole
    run = subprocess.Popen(argv, start_new_session=True, **pipes)
    held = wait_for_rows(folder, interrupted, run)
    os.killpg(run.pid, signal.SIGKILL)
    run.communicate(timeout=120)
    assert held <= len(read_rows(folder)) < study.chips
    before = len(read_rows(folder))
    done = subprocess.run(argv, timeout=600, check=True, **pipes)
    assert json.loads(done.stdout)["chips_run_now"] == study.chips - before
    # every chip once, as an uninterrupted run has it
    indices = [
        i for p in folder.glob("part-*.parquet") for i in pq.read_table(p)["index"].to_pylist()
    ]
    assert sorted(indices) == list(range(study.chips))
    assert read_rows(folder) == [run_chip(study, i) for i in range(study.chips)]
