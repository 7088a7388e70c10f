"""How a figure is made: the runs it is made from (pswitch commands in process, benchmarks as
scripts), the makers of a transcript, a value and a table, and the stamp of a timing."""

from __future__ import annotations

import atexit
import contextlib
import datetime
import functools
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: The checkout whose pages are written (``pswitch/figures/_make.py`` -> the repository).
ROOT = Path(__file__).resolve().parents[2]
#: A stamp's line, and the placeholder a timing is checked as.
STAMP = re.compile(r"^\*Timings measured on .*\*$", re.MULTILINE)
TIMING = "<timing>"
#: The ``timings`` of a figure that is a timing alone: it is written, never checked.
ALL = (r"(?s)\A.+\Z",)


@dataclass(frozen=True)
class Figure:
    """How to make one marked region of ``page`` (a block or a value, by how it is marked):
    ``make()`` returns its text; ``timings`` are patterns of the machine-dependent parts of that
    text (each group, or the whole match, is a timing); ``files`` are pictures a run wrote,
    ``{destination: source}`` (from the repository, and from ``folder()``, the run's folder).
    A ``slow`` figure (a Monte Carlo study, a whole benchmark) is checked by ``make test-all``
    only."""

    page: str
    make: Callable[[], str]
    timings: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)
    folder: Callable[[], str] | None = None
    slow: bool = False

    def masked(self, text: str) -> str:
        """``text`` with its timings and stamp replaced by :data:`TIMING`."""
        text = STAMP.sub(TIMING, text)
        for pattern in self.timings:
            text = re.sub(pattern, _timing, text, flags=re.MULTILINE)
        return text


def _timing(match: re.Match[str]) -> str:
    if not match.re.groups:
        return TIMING
    out, at = [], match.start()
    for i in range(1, match.re.groups + 1):
        out += [match.string[at : match.start(i)], TIMING]
        at = match.end(i)
    return "".join([*out, match.string[at : match.end()]])


# --- runs ------------------------------------------------------------------------------------


def scratch(prefix: str = "pswitch-figures-") -> str:
    """A new temporary folder for a run's files, removed when the process ends."""
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@functools.cache
def pswitch(*argv: str) -> tuple[str, str]:
    """``pswitch *argv`` run in process in a folder of its own: (what it printed, the folder,
    kept until the process ends so that figures can copy the files it wrote)."""
    from pswitch.cli import main

    folder = scratch()
    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        os.chdir(here)
    if code != 0:
        raise RuntimeError(f"pswitch {' '.join(argv)} exited {code}: {err.getvalue()[-2000:]}")
    return out.getvalue(), folder


@functools.cache
def benchmark(name: str, *argv: str) -> dict:
    """``benchmarks/bench_NAME.py *argv --json`` run as a script: the object it prints."""
    script = ROOT / "benchmarks" / f"bench_{name}.py"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, str(script), *argv, "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} {' '.join(argv)} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def machine() -> str:
    """This machine as a stamp names it: cores, CPU architecture, system, memory."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    cpu = f"{os.cpu_count()}-core {platform.machine()} {platform.system()}"
    return f"{cpu} machine with {memory:.0f} GiB"


def stamp() -> str:
    """Where and when timings were measured: this machine, its load (the 1-minute average) and
    today's date."""
    load, today = os.getloadavg()[0], datetime.date.today()
    return f"*Timings measured on a {machine()}, load {load:.1f}, on {today:%Y-%m-%d}.*"


def duration(seconds: float) -> str:
    """A duration as prose quotes it: ``45 s``, ``4 min 15 s``."""
    if seconds < 100:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def timed(seconds: Callable[[], float]) -> Callable[[], str]:
    """A value's maker for a timing in prose: the duration ``seconds()`` measures, with the
    machine, its load and the date (give its Figure ``timings=ALL``)."""

    def make() -> str:
        took = seconds()
        load = os.getloadavg()[0]
        return (
            f"{duration(took)} on a {machine()}, load {load:.1f}, {datetime.date.today():%Y-%m-%d}"
        )

    return make


# --- makers ----------------------------------------------------------------------------------


def transcript(
    argv: tuple[str, ...],
    keep: Callable[[list[str]], list[str]] | None = None,
    prompt: bool = True,
    timed: bool = False,
) -> Callable[[], str]:
    """A block's maker: ``pswitch *argv``'s output in a text block (the lines ``keep`` keeps),
    after a ``$ pswitch ...`` line when ``prompt``, with a stamp under it when the output holds
    timings (``timed``)."""

    def make() -> str:
        lines = pswitch(*argv)[0].splitlines()
        shown = keep(lines) if keep is not None else lines
        head = [f"$ pswitch {' '.join(argv)}"] if prompt else []
        text = "```text\n" + "\n".join([*head, *shown]) + "\n```\n"
        return text + (f"\n{stamp()}\n" if timed else "")

    return make


def value(
    argv: tuple[str, ...], pattern: str, fmt: str | Callable[[str], str] = "{}"
) -> Callable[[], str]:
    """A value's maker: the first group of ``pattern`` in ``pswitch *argv``'s output, formatted
    with ``fmt`` (a format string of the groups, or a function of the first group's text)."""

    def make() -> str:
        found = re.search(pattern, pswitch(*argv)[0], re.MULTILINE)
        if found is None:
            raise RuntimeError(f"{pattern!r} is not in the output of pswitch {' '.join(argv)}")
        return fmt(found.group(1)) if callable(fmt) else fmt.format(*found.groups())

    return make


def table(head: Sequence[str], rows: Callable[[], list[Sequence[object]]], timed: bool = False):
    """A block's maker: a Markdown table of ``head`` and ``rows()``, right-aligned but for the
    first column, with a stamp under it when it holds timings (``timed``)."""

    def make() -> str:
        lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows()]
        return "\n".join(lines) + "\n" + (f"\n{stamp()}\n" if timed else "")

    return make


def tail(n: int) -> Callable[[list[str]], list[str]]:
    """A transcript's ``keep``: ``...`` then the last ``n`` lines."""
    return lambda lines: ["...", *lines[-n:]]


def ms(text: str) -> str:
    """Milliseconds as prose quotes them: ``56 ms``."""
    return f"{float(text):.0f} ms"
