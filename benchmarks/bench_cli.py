"""A user's first run of the command line: start-up, compilation, bad input, silences.

Every figure runs the installed ``pswitch`` command in a subprocess, as a user would:

- ``help_s``: the slowest ``--help`` start-up over ``pswitch`` and each subcommand, each the
  median of ``--repeat`` runs (goal < 0.3 s);
- ``first_demo_compile_s``: what numba still compiles in a first ``pswitch demo`` after the
  install step: the install's warm-up (``python -m pswitch.warm``, ``warm_s``) into a fresh,
  empty ``NUMBA_CACHE_DIR``, then the demo with that cache, which reports what it compiled
  (goal 0);
- ``bad_input_cases`` and ``tracebacks``: the bad command lines of
  ``tests/pswitch/bad_inputs.py``, each run in a folder holding its files; how many ran and how
  many printed a traceback (goal 0);
- ``longest_silence_s``: the longest stretch with nothing new on stdout or stderr (output or a
  progress update) during ``pswitch calibrate --bench`` on an emulated 8-port bench started with
  ``pswitch serve``, and during ``pswitch schedule all-to-all --ports 32 --mesh hexagonal``,
  start-up included (goal < 2 s). stderr is a pseudo-terminal, as a user's is (progress bars
  show on terminals only), stdout a pipe; both are read unbuffered and each chunk timed.
- ``demo_calibrate_compute_s``: the compute time of the calibration step of that first
  ``pswitch demo`` (16 ports), from its ``--json`` timeline (goal <= 5 s);
- ``make_test_s`` and ``longest_test_silence_s``: ``make test`` in a clean clone of the
  checkout's last commit, timed after the clone's one-time install (``make
  .venv/.pswitch-warm``: the venv, the packages from the registry, numba's warm-up; reported
  apart as ``make_install_s``), and the longest silence of its output from pytest's start
  (goals <= 300 s and <= 30 s);
- ``stale_doc_figures``: how many of the README's and the docs' generated figures differ from
  what the code prints, slow ones included (``python -m pswitch.figures --check``; goal 0).

``--quick`` (the test suite runs it): one run per ``--help``, the first bad command line of each
subcommand, a 4-port demo on the installed cache (the warm-up's own test covers a fresh one), a
4-port bench and a 16-endpoint schedule, the README's fast figures only, and no ``make test``
(the suite cannot run itself: ``make_test_s`` and its silence are null). The silences are
measured on this machine, which may be busy: they are upper bounds.

Run::

    python benchmarks/bench_cli.py          # table
    python benchmarks/bench_cli.py --json   # one JSON object
    python benchmarks/bench_cli.py --only make_test_s,warm_s   # some figures alone
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import selectors
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the bad command lines live with the tests

from tests.pswitch.bad_inputs import CASES, prepare  # noqa: E402

#: The installed console script next to this interpreter, as a user runs it.
SCRIPT = Path(sys.executable).parent / "pswitch"
PSWITCH = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "pswitch"]

#: (figure, goal as text, is the goal met)
GOALS = {
    "help_s": ("< 0.3 s", lambda v: v < 0.3),
    "first_demo_compile_s": ("0 s", lambda v: v == 0),
    "bad_input_cases": ("all run", lambda v: v > 0),
    "tracebacks": ("0", lambda v: v == 0),
    "longest_silence_s": ("< 2 s", lambda v: v < 2),
    "warm_s": ("", lambda v: True),
    "demo_calibrate_compute_s": ("<= 5 s", lambda v: v <= 5),
    "make_install_s": ("", lambda v: True),
    "make_test_s": ("<= 300 s", lambda v: v <= 300),
    "longest_test_silence_s": ("<= 30 s", lambda v: v <= 30),
    "stale_doc_figures": ("0", lambda v: v == 0),
}


def subcommands() -> list[str]:
    """The names of ``pswitch``'s subcommands, from its parser."""
    from pswitch.cli import build_parser

    found = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return list(found[0].choices)


def help_s(repeat: int) -> float:
    """The slowest ``--help``, each command's median of ``repeat`` runs, s."""
    worst = 0.0
    for command in [[], *([name] for name in subcommands())]:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            done = subprocess.run([*PSWITCH, *command, "--help"], capture_output=True)
            times.append(time.perf_counter() - t0)
            assert done.returncode == 0, done.stderr
        worst = max(worst, statistics.median(times))
    return worst


def first_demo(ports: int, fresh: bool = True) -> tuple[float | None, float, float]:
    """A first demo after the install's warm-up, both on a fresh empty numba cache (``fresh``;
    else on the cache as it is, warmed by the install): (seconds the warm-up took, None when not
    run; seconds of compilation the demo reports; seconds of compute its calibration took)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache} if fresh else dict(os.environ)
        warm_s = None
        if fresh:  # the install step's warm-up, into the empty cache
            t0 = time.perf_counter()
            warm = subprocess.run(
                [sys.executable, "-m", "pswitch.warm"], env=env, capture_output=True, text=True
            )
            warm_s = time.perf_counter() - t0
            assert warm.returncode == 0, warm.stderr
        demo = subprocess.run(
            [*PSWITCH, "demo", "--ports", str(ports), "--no-plots", "--json"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert demo.returncode == 0, demo.stderr
        report = json.loads(demo.stdout)
        calibrate = next(s for s in report["timeline"] if s["step"] == "calibrate")
        compiled = float(report["compiled_on_first_use"]["seconds"])
        return warm_s, compiled, float(calibrate["compute_s"])


def bad_inputs(quick: bool) -> tuple[int, int]:
    """(cases run, outputs holding a traceback) over the bad command lines."""
    cases = [args for args, _ in CASES]
    if quick:  # the first case of each command
        firsts: dict[str, list[str]] = {}
        for args in cases:
            firsts.setdefault(args[0] if args else "", args)
        cases = list(firsts.values())
    tracebacks = 0
    for args in cases:
        with tempfile.TemporaryDirectory() as folder:
            prepare(Path(folder))
            done = subprocess.run(
                [*PSWITCH, *args], cwd=folder, capture_output=True, text=True, timeout=120
            )
        tracebacks += "Traceback" in done.stdout + done.stderr
    return len(cases), tracebacks


def longest_silence(command: list[str], cwd: str | None = None, after: bytes = b"") -> float:
    """Run ``command`` (stdout a pipe, stderr a pseudo-terminal) and return the longest time,
    s, from its start to its first byte, between two chunks of output, or from the last chunk
    to its exit; with ``after``, counted from the chunk that holds it (a line of the output)."""
    main, terminal = pty.openpty()
    # a terminal 100 columns wide (a new pseudo-terminal has 0, which leaves a bar no room)
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    t0 = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout.fileno(), selectors.EVENT_READ)
    selector.register(main, selectors.EVENT_READ)
    last, longest, open_, seen = t0, 0.0, 2, b""
    while open_:
        for key, _ in selector.select():
            try:
                chunk = os.read(key.fd, 65536)
            except OSError:  # the terminal's end closed (EIO)
                chunk = b""
            now = time.perf_counter()
            if not chunk:
                selector.unregister(key.fd)
                open_ -= 1
                continue
            if after and after not in seen:  # not started yet: keep the tail to match across chunks
                seen = (seen + chunk)[-4 * len(after) :]
                if after in seen:
                    last = now
                continue
            longest, last = max(longest, now - last), now
    code = process.wait()
    os.close(main)
    assert code == 0, f"{command} exited {code}"
    return max(longest, time.perf_counter() - last)


def silences(quick: bool) -> dict[str, float]:
    """The longest silence of a bench calibration and of a large schedule, s."""
    ports, endpoints = (4, 16) if quick else (8, 32)
    found = {}
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "bench.json"
        server = subprocess.Popen(
            [*PSWITCH, "serve", "--ports", str(ports), "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while not config.exists():
                assert server.poll() is None and time.monotonic() < deadline, "serve failed"
                time.sleep(0.1)
            found["calibrate"] = longest_silence(
                [*PSWITCH, "calibrate", "--bench", str(config), "-o", "cal.json"], cwd=folder
            )
        finally:
            server.terminate()
            server.wait()
    found["schedule"] = longest_silence(
        [*PSWITCH, "schedule", "all-to-all", "--ports", str(endpoints), "--mesh", "hexagonal"]
    )
    return found


def make_test() -> tuple[float, float, float]:
    """``make test`` in a clean clone of the checkout's last commit: (its install's seconds, its
    seconds, its longest silence from pytest's start, s)."""
    with tempfile.TemporaryDirectory() as folder:
        clone = Path(folder) / "pswitch"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        t0 = time.perf_counter()
        install = subprocess.run(
            ["make", ".venv/.pswitch-warm"], cwd=clone, env=env, capture_output=True, text=True
        )
        assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
        t1 = time.perf_counter()
        silence = longest_silence(["make", "test"], cwd=str(clone), after=b"pytest -q")
        return t1 - t0, time.perf_counter() - t1, silence


def stale_doc_figures(quick: bool) -> int:
    """How many generated figures are stale (``--quick``: the README's fast ones)."""
    names = []
    if quick:
        from pswitch.figures import FIGURES

        names = [n for n, f in FIGURES.items() if f.page == "README.md" and not f.slow]
    done = subprocess.run(
        [sys.executable, "-m", "pswitch.figures", "--check", *names],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    last = done.stdout.strip().splitlines()[-1]
    assert last.endswith(" stale figures"), done.stdout[-2000:] + done.stderr[-2000:]
    return int(last.split()[0])


def measure(quick: bool, repeat: int, only: set[str]) -> tuple[dict[str, Any], dict[str, float]]:
    """The figures (those in ``only``, when it is not empty), and the silence of each command
    measured."""
    quiet: dict[str, float] = {}

    def demo() -> dict[str, Any]:
        warm, compiled, calibrate = first_demo(4 if quick else 16, fresh=not quick)
        return {
            "warm_s": warm,
            "first_demo_compile_s": compiled,
            "demo_calibrate_compute_s": calibrate,
        }

    def bad() -> dict[str, Any]:
        cases, tracebacks = bad_inputs(quick)
        return {"bad_input_cases": cases, "tracebacks": tracebacks}

    def silence() -> dict[str, Any]:
        quiet.update(silences(quick))
        return {"longest_silence_s": max(quiet.values())}

    def suite() -> dict[str, Any]:
        install, seconds, longest = (None, None, None) if quick else make_test()
        return {
            "make_install_s": install,
            "make_test_s": seconds,
            "longest_test_silence_s": longest,
        }

    groups = {
        ("help_s",): lambda: {"help_s": help_s(1 if quick else repeat)},
        ("warm_s", "first_demo_compile_s", "demo_calibrate_compute_s"): demo,
        ("bad_input_cases", "tracebacks"): bad,
        ("longest_silence_s",): silence,
        ("make_install_s", "make_test_s", "longest_test_silence_s"): suite,
        ("stale_doc_figures",): lambda: {"stale_doc_figures": stale_doc_figures(quick)},
    }
    unknown = only - {key for keys in groups for key in keys}
    if unknown:
        raise SystemExit(
            f"bench_cli.py: no figure {sorted(unknown)[0]!r}; figures: {', '.join(GOALS)}"
        )
    figures: dict[str, Any] = {}
    for keys, run in groups.items():
        if not only or only & set(keys):
            figures |= {k: v for k, v in run().items() if not only or k in only}
    return figures, quiet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fast, smaller run")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each --help (median)")
    parser.add_argument("--json", action="store_true", help="one JSON object of the figures")
    parser.add_argument(
        "--only", default="", help="comma-separated figures to measure (default: all)"
    )
    args = parser.parse_args()
    figures, quiet = measure(args.quick, args.repeat, {k for k in args.only.split(",") if k})
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{'figure':<26} {'measured':>10}  {'goal':<8} met")
    for name, value in figures.items():
        goal, met = GOALS[name]
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        verdict = "-" if value is None else "yes" if met(value) else "NO"
        print(f"{name:<26} {shown:>10}  {goal:<8} {verdict}")
    if quiet:
        print(
            "longest silence by command: " + ", ".join(f"{k} {v:.2f} s" for k, v in quiet.items())
        )


if __name__ == "__main__":
    main()
