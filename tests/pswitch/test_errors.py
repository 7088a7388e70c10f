"""The command line's error boundary (``pswitch.cli.main``): a bad input is one line and exit 2
before anything is done or written, a failed run exit 1, Ctrl-C exit 130 with one line, and
``--debug`` shows the traceback. Through the real entry point (a subprocess) and in process."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hil.bench_config import BenchConfig
from hil.instruments import Laser8164B, Qontrol
from hil.visa import Session
from photonics.errors import PswitchError, SettingsError
from pswitch import cli

PSWITCH = shutil.which("pswitch", path=str(Path(sys.executable).parent))


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    assert PSWITCH is not None, "the pswitch console script is not installed"
    return subprocess.run(
        [PSWITCH, *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env
    )


def assert_one_line(done: subprocess.CompletedProcess, code: int, *words: str) -> str:
    """``done`` exited ``code`` with one line on stderr holding ``words``, nothing on stdout."""
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0]
    assert done.stdout == ""
    return lines[0]


# ---- the reproducers: each refused up front, nothing written -------------------------------


def test_demo_refuses_a_negative_seed_naming_the_option(tmp_path) -> None:
    assert_one_line(run("demo", "--seed", "-1", cwd=tmp_path), 2, "--seed", "-1", ">= 0")
    assert list(tmp_path.iterdir()) == []


def test_demo_refuses_a_plots_folder_that_is_a_file_before_the_run(tmp_path) -> None:
    existing = tmp_path / "plots"
    existing.write_text("mine")
    line = assert_one_line(run("demo", "--plots", str(existing), cwd=tmp_path), 2, "--plots")
    assert str(existing) in line and "folder" in line
    assert existing.read_text() == "mine"


def test_serve_refuses_a_negative_time_before_writing_its_config(tmp_path) -> None:
    done = run("serve", "--seconds", "-5", "--config", "b.json", cwd=tmp_path)
    assert_one_line(done, 2, "--seconds", "-5")
    assert list(tmp_path.iterdir()) == []


def test_serve_refuses_a_config_in_a_folder_that_does_not_exist(tmp_path) -> None:
    done = run("serve", "--config", "/nonexistent/dir/b.json", "--seconds", "1", cwd=tmp_path)
    assert_one_line(done, 2, "--config", "/nonexistent/dir", "does not exist")


def test_serve_refuses_a_host_it_cannot_bind(tmp_path) -> None:
    done = run("serve", "--host", "999.1.1.1", "--seconds", "1", cwd=tmp_path)
    assert_one_line(done, 2, "--host", "999.1.1.1")
    assert list(tmp_path.iterdir()) == []


def test_layout_refuses_a_picture_in_a_folder_that_does_not_exist(tmp_path) -> None:
    done = run("layout", "-o", "mesh.gds", "--png", "/nonexistent/dir/x.png", cwd=tmp_path)
    assert_one_line(done, 2, "--png", "/nonexistent/dir", "does not exist")
    assert list(tmp_path.iterdir()) == []  # not even the GDS


def test_calibrate_names_the_fields_a_bench_config_lacks(tmp_path) -> None:
    (tmp_path / "partial.json").write_text('{"schema": "pswitch.bench", "version": 1, "ports": 4}')
    done = run("calibrate", "--bench", "partial.json", cwd=tmp_path)
    assert_one_line(done, 2, "partial.json", "missing field(s) heater_driver, meters, laser")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["partial.json"]


# ---- Ctrl-C --------------------------------------------------------------------------------


def interrupt(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``pswitch *args``, send SIGINT (Ctrl-C) once it is at work; its exit code and
    stderr."""
    assert PSWITCH is not None
    proc = subprocess.Popen(
        [PSWITCH, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
    )
    time.sleep(3)  # start-up is a fraction of a second; each command below runs far longer
    assert proc.poll() is None, "finished before the interrupt: " + proc.communicate()[1]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def assert_interrupted(code: int, err: str, command: str) -> None:
    assert code == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines() == [f"pswitch {command}: interrupted"]


def test_ctrl_c_stops_the_demo_with_one_line_and_writes_no_plots(tmp_path) -> None:
    code, err = interrupt(["demo", "--ports", "32", "--plots", "plots"], tmp_path)
    assert_interrupted(code, err, "demo")
    assert not (tmp_path / "plots").exists()


def test_ctrl_c_stops_a_route_while_its_kernels_compile(tmp_path) -> None:
    # an empty kernel cache: the first route compiles for seconds, as on a fresh install
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    args = ["route", "0-9", "3-12", "--mesh", "hexagonal", "--ports", "16"]
    assert_interrupted(*interrupt(args, tmp_path, env), "route")


# a whole bench calibration over VISA in simulated time: minutes since the bench runs in time
@pytest.mark.slow
def test_ctrl_c_stops_calibrate_and_leaves_no_partial_file(tmp_path) -> None:
    config = tmp_path / "bench.json"
    server = subprocess.Popen(
        [PSWITCH, "serve", "--ports", "4", "--seed", "1", "--config", str(config)],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not config.exists():
            assert server.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.05)
        out = tmp_path / "out"
        out.mkdir()
        code, err = interrupt(["calibrate", "--bench", str(config), "-o", "out/cal.json"], tmp_path)
        assert_interrupted(code, err, "calibrate")
        assert list(out.iterdir()) == []  # no calibration, no temp file
        cfg = BenchConfig.load(config)  # and the bench left safe: laser off, heaters at 0
        with Session(cfg.laser.resource) as laser, Session(cfg.heater_driver.resource) as q:
            assert not Laser8164B(laser).is_on()
            assert np.all(Qontrol(q).currents() == cfg.safe_current_mA)
        # the bench is still usable: the interrupted session was closed
        done = run(
            "calibrate", "--bench", str(config), "-o", "out/cal.json", "--json", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["verified"]
    finally:
        server.terminate()
        server.wait(timeout=30)


# ---- --debug and the boundary in process -----------------------------------------------------


def test_debug_shows_the_traceback_of_a_refusal(tmp_path) -> None:
    (tmp_path / "partial.json").write_text('{"schema": "pswitch.bench", "version": 1}')
    quiet = run("calibrate", "--bench", "partial.json", cwd=tmp_path)
    assert_one_line(quiet, 2, "missing field(s)")
    loud = run("--debug", "calibrate", "--bench", "partial.json", cwd=tmp_path)
    assert loud.returncode != 0 and "Traceback" in loud.stderr and "SettingsError" in loud.stderr


def _fails(exc: BaseException):
    def run(args) -> int:
        raise exc

    return run


@pytest.mark.parametrize(
    ("exc", "code", "words"),
    [
        (SettingsError("ports must be even"), 2, "ports must be even"),
        (PswitchError("the fit did not converge"), 1, "the fit did not converge"),
        (FileNotFoundError(2, "No such file or directory", "x.json"), 1, "x.json"),
        (RuntimeError("boom"), 1, "--debug"),
        (KeyboardInterrupt(), 130, "interrupted"),
    ],
)
def test_every_failure_is_one_line_with_its_exit_code(monkeypatch, capsys, exc, code, words):
    monkeypatch.setattr("pswitch.route.run", _fails(exc))
    assert cli.main(["route", "0-1"]) == code
    err = capsys.readouterr().err
    assert err.startswith("pswitch route: ") and words in err and len(err.splitlines()) == 1


def test_debug_lets_an_unexpected_error_through(monkeypatch) -> None:
    monkeypatch.setattr("pswitch.route.run", _fails(RuntimeError("boom")))
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["--debug", "route", "0-1"])


def test_sigterm_stops_a_command_as_ctrl_c_does(tmp_path) -> None:
    assert PSWITCH is not None
    proc = subprocess.Popen(
        [PSWITCH, "demo", "--ports", "32", "--plots", "plots"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    time.sleep(3)
    assert proc.poll() is None, "finished before the signal: " + proc.communicate()[1]
    proc.terminate()  # SIGTERM, as a service manager stops it
    _, err = proc.communicate(timeout=120)
    assert_interrupted(proc.returncode, err, "demo")
    assert not (tmp_path / "plots").exists()


def test_sigterm_stops_serve_and_closes_its_instruments(tmp_path) -> None:
    config = tmp_path / "bench.json"
    assert PSWITCH is not None
    server = subprocess.Popen(
        [PSWITCH, "serve", "--ports", "4", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not config.exists():
        assert server.poll() is None and time.monotonic() < deadline, "serve did not start"
        time.sleep(0.05)
    port = int(BenchConfig.load(config).laser.resource.split("::")[2])
    server.terminate()
    _, err = server.communicate(timeout=30)
    assert_interrupted(server.returncode, err, "serve")
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)
