"""The measured figures of ``docs/architecture.md`` (what a command's transaction costs, and how
long a query waits while another client's ``CAL:RUN`` runs: ``benchmarks/bench_hil.py``, the run
the README quotes) and of ``docs/instruments.md`` (the VISA session's traffic log of one
reading, from a seeded emulated bench)."""

from __future__ import annotations

import datetime
import io
import logging
import os

from pswitch.figures._make import ALL, Figure, benchmark, machine

ARCHITECTURE, INSTRUMENTS = "docs/architecture.md", "docs/instruments.md"
#: The loopback port a server listens on is the system's choice: not compared.
PORT = (r"::(\d+)::SOCKET",)


def _stamped(text: str) -> str:
    """A timing in prose with where and when it was measured."""
    today = datetime.date.today()
    return f"{text} on a {machine()}, load {os.getloadavg()[0]:.1f}, {today:%Y-%m-%d}"


def _t(seconds: float) -> str:
    """A short time: ``9 us``, ``0.47 ms``, ``1.2 s``."""
    if seconds < 1e-4:
        return f"{seconds * 1e6:.0f} us"
    return f"{seconds * 1e3:.2g} ms" if seconds < 1 else f"{seconds:.2g} s"


def transaction() -> str:
    """An empty transaction's cost and an 8-port ``ROUT:MATC``'s time, in process (medians)."""
    h = benchmark("hil")
    matc = _t(h["route_matching_8_s"])
    text = f"{_t(h['transaction_s'])} a command (an 8-port `ROUT:MATC` takes {matc}; medians"
    return _stamped(text + " in process") + ")"


def overlap() -> str:
    """The median ``*IDN?`` while another client's ``CAL:RUN`` runs, and that calibration's
    time."""
    h = benchmark("hil")
    return _stamped(
        f"a median of {_t(h['idn_during_cal_run_median_s'])} for `*IDN?` while `CAL:RUN` runs, "
        f"against {_t(h['cal_run_over_tcp_s'])} for the whole calibration"
    )


def traffic() -> str:
    """The traffic log of ``:READ1:POW?`` on the power meter of a seeded emulated bench."""
    from hil.emulator.bench import EmulatedBench
    from hil.visa import Session

    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("pyvisa.hil.visa")
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        with EmulatedBench(ports=4, seed=0) as bench, Session(bench.resources["power_meter"]) as pm:
            start = len(lines.getvalue())  # what opening the session logged is not shown
            pm.query(":READ1:POW?")
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    return "```\n" + lines.getvalue()[start:] + "```\n"


FIGURES: dict[str, Figure] = {
    "architecture-transaction": Figure(ARCHITECTURE, transaction, ALL, slow=True),
    "architecture-overlap": Figure(ARCHITECTURE, overlap, ALL, slow=True),
    "instruments-traffic": Figure(INSTRUMENTS, traffic, PORT),
}
