"""Instrument transport on loopback: what :class:`hil.visa.Session` costs and what it avoids.

A :class:`hil.emulator.server.TcpServer` with a trivial handler (it answers ``0`` to every
query) runs in a thread of this process; the clients are

- a raw socket with ``TCP_NODELAY``: ``sendall`` the line, ``recv`` to the terminator (the
  floor);
- :class:`hil.visa.Session` over pyvisa + pyvisa-py (the resource lock, the check for stale
  bytes and EOF, ``TCP_NODELAY``; writes through viWrite, replies read from pyvisa-py's socket,
  see :mod:`hil.visa`);
- a plain pyvisa-py resource on the same server (``open_resource`` + ``query``), which leaves
  Nagle's algorithm on: the peer for the write-then-query figure, where the small query
  segment waits for the ACK of the unanswered write (a delayed ACK, ~40 ms on Linux).

Measured: medians over ``--n`` round trips after a warm-up, the clients taking turns so that
load from other processes hits them alike. Figures (seconds unless named otherwise):
``raw_query_s``, ``session_query_s``, ``pyvisa_query_s``, ``query_latency_ratio`` (session
over raw, target <= 2), ``write_then_query_s`` (a write and a query through Session) and
``write_then_query_nagle_s`` (the same through the plain pyvisa-py resource), and
``bench_calibration_s_8`` (also ``bench_calibration_s``, its earlier name): a full calibration
of an 8-port chip on the emulated bench (:class:`hil.emulator.bench.EmulatedBench`) through
:class:`hil.bench.Bench`, beside the same chip calibrated in process
(``in_process_calibration_s_8``), with how well the calibration routes
(``bench_calibration_error_db``, ``bench_calibration_isolation_db``); and
``client_checks_passed`` of ``client_checks_total``: the conformance checks of unmodified
clients (pymeasure's driver classes, the qontrol library, manual transcripts) against the served
emulated bench, counted by running them (``tests/hil/clients.py``; needs the dev extra).
The switch's side: ``idn_during_cal_run_median_s``, the median ``*IDN?`` round trip of a
second client (a :class:`hil.visa.Session`) while an SDK client runs ``CAL:RUN`` on the
emulated bench's switch over TCP (the chip of the bench calibration), beside that
``CAL:RUN``'s wall time (``cal_run_over_tcp_s``); and, in process on an 8-port switch, the
median wall time of an empty ``Core.transaction`` (``transaction_s``, what every command but a
query pays for its all-or-nothing promise) and of a ``ROUT:MATC`` of four pairs
(``route_matching_8_s``).

The emulated instruments against their manuals and the bench's safety:
``bench_calibration_worst_db_min``, the worst isolation over :data:`CALIBRATION_SEEDS` chips
calibrated over VISA (each seed's in ``bench_calibration_worst_db_seeds``);
``manual_coverage_min``, the smallest fraction of a model's programming-manual commands its
emulation accepts (:mod:`hil.emulator.manuals`; each model's in ``manual_coverage``);
``instr_resources``, the ``::INSTR`` (HiSLIP, VXI-11) resources the emulated bench serves; and
``unsafe_after_failure`` of ``failure_cases``: the cases of an instrument gone or another model
at its address (``tests/hil/failures.py``) that left a heater above its safe current or the
laser on.

To add a figure: write a function ``(server, n) -> dict`` of figures, append it to
:data:`SECTIONS` and describe its keys in :data:`ROWS`.

``--quick`` (the test suite runs it): 50 round trips, the calibration on a 4-port bench (its
figures then end in ``_4``), one seed, the first client check of each instrument.

Run::

    python benchmarks/bench_hil.py          # table
    python benchmarks/bench_hil.py --json   # one JSON object
"""

from __future__ import annotations

import argparse
import itertools
import json
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from firmware.sdk import Switch
from hil.bench import Bench
from hil.emulator.bench import EmulatedBench
from hil.emulator.server import TcpServer
from hil.visa import Session, resource_manager
from photonics.calibration.selfcal import route_quality

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.hil.clients
from hil.emulator.manuals import coverage, manuals
from tests.hil.clients import CHECKS, tally
from tests.hil.failures import unsafe_after_failure

WARMUP = 200
NAGLE_PAIRS = 20  # each may stall ~40 ms: few are enough to show it


class Trivial:
    """Answers ``0`` to a query line, nothing to a setting."""

    def handle(self, line: str) -> str | None:
        return "0" if "?" in line else None


def _medians(clients: dict[str, Callable[[], object]], n: int) -> dict[str, float]:
    """Median wall time (s) of each client's call, the clients taking turns."""
    times: dict[str, list[float]] = {name: [] for name in clients}
    for i in range(WARMUP + n):
        for name, call in clients.items():
            t0 = time.perf_counter()
            call()
            if i >= WARMUP:
                times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def latency_figures(server: TcpServer, n: int) -> dict[str, float]:
    raw = socket.create_connection((server.host, server.port))
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def raw_query() -> bytes:
        raw.sendall(b"Q?\n")
        reply = raw.recv(4096)
        while not reply.endswith(b"\n"):
            reply += raw.recv(4096)
        return reply

    plain = resource_manager().open_resource(
        server.resource, read_termination="\n", write_termination="\n", timeout=2000
    )
    with Session(server.resource) as session:
        m = _medians(
            {
                "raw": raw_query,
                "session": lambda: session.query("Q?"),
                "pyvisa": lambda: plain.query("Q?"),
            },
            n,
        )
    plain.close()  # the resource, never the process's resource manager
    raw.close()
    return {
        "raw_query_s": m["raw"],
        "session_query_s": m["session"],
        "pyvisa_query_s": m["pyvisa"],
        "query_latency_ratio": m["session"] / m["raw"],
    }


def nagle_figures(server: TcpServer, n: int) -> dict[str, float]:
    plain = resource_manager().open_resource(
        server.resource, read_termination="\n", write_termination="\n", timeout=2000
    )

    def plain_pair() -> None:
        plain.write("SET 1")
        plain.query("Q?")

    with Session(server.resource) as session:

        def session_pair() -> None:
            session.write("SET 1")
            session.query("Q?")

        fast = _medians({"session": session_pair}, n)["session"]
    pairs = [0.0] * NAGLE_PAIRS
    for i in range(NAGLE_PAIRS):
        t0 = time.perf_counter()
        plain_pair()
        pairs[i] = time.perf_counter() - t0
    plain.close()
    return {"write_then_query_s": fast, "write_then_query_nagle_s": statistics.median(pairs)}


def calibration_figures(server: TcpServer, n: int) -> dict[str, float]:
    """A full bench calibration of an emulated chip of :data:`CALIBRATION_PORTS` ports over
    VISA (the Qontrol on a pty, the laser, fibre switch and power meter on TCP; ring locks
    included), and how well the file routes: worst routed-power error (dB) and worst isolation
    (dB) over 20 permutations."""
    p = CALIBRATION_PORTS
    with EmulatedBench(ports=p, seed=0) as emulated, Bench(emulated.config()) as bench:
        t0 = time.perf_counter()
        cal = bench.calibrate()
        seconds = time.perf_counter() - t0
        error_db, isolation_db = route_quality(emulated.world.chip, cal)
    # the same chip and firmware with no instruments between them: what the wire costs
    local = Switch.emulated(ports=p, seed=0, rings=True)
    t0 = time.perf_counter()
    local.calibrate(save=False)
    in_process_s = time.perf_counter() - t0
    return {
        f"bench_calibration_s_{p}": seconds,
        "bench_calibration_s": seconds,  # the earlier name of the same figure
        f"in_process_calibration_s_{p}": in_process_s,
        "bench_calibration_error_db": error_db,
        "bench_calibration_isolation_db": isolation_db,
    }


def seed_figures(server: TcpServer, n: int) -> dict[str, float]:
    """The worst isolation over :data:`CALIBRATION_SEEDS` chips calibrated over VISA (the
    chip of seed 0 is :func:`calibration_figures`' own)."""
    worst = []
    for seed in range(1, CALIBRATION_SEEDS):
        with EmulatedBench(ports=CALIBRATION_PORTS, seed=seed) as emulated:
            with Bench(emulated.config()) as bench:
                cal = bench.calibrate()
            worst.append(route_quality(emulated.world.chip, cal)[1])
    return {"bench_calibration_worst_db_seeds": worst}


def manual_figures(server: TcpServer, n: int) -> dict[str, float]:
    """Each model's programming-manual command list against its emulation: the smallest
    fraction accepted (``manual_coverage_min``) and each model's."""
    found = {m.model: coverage(m) for m in manuals()}
    return {"manual_coverage_min": min(found.values()), "manual_coverage": found}


def safety_figures(server: TcpServer, n: int) -> dict[str, float]:
    """Instruments served as ``::INSTR`` (HiSLIP, VXI-11) by the emulated bench, and the failure
    cases (an instrument gone or another model at its address) that leave the heaters above
    their safe current or the laser on."""
    with EmulatedBench(ports=4, seed=1) as emulated:
        served = emulated.resources.values()
        instr = sum(r.startswith("TCPIP") and r.endswith("::INSTR") for r in served)
        unsafe, cases = unsafe_after_failure(emulated)
    return {"instr_resources": instr, "unsafe_after_failure": unsafe, "failure_cases": cases}


def client_figures(server: TcpServer, n: int) -> dict[str, float]:
    """The unmodified-client conformance checks on a served 4-port bench: how many pass
    (``--quick``: the first of each instrument's; the suite runs every one as a test)."""
    checks = list({c.instrument: c for c in reversed(CHECKS)}.values()) if QUICK else CHECKS
    with EmulatedBench(ports=4, seed=0) as emulated:
        passed, total = tally(emulated, checks)
    return {"client_checks_passed": passed, "client_checks_total": total}


def overlap_figures(server: TcpServer, n: int) -> dict[str, float]:
    """While an SDK client runs ``CAL:RUN`` over TCP on the emulated bench's switch (a chip of
    :data:`CALIBRATION_PORTS` ports), the median ``*IDN?`` round trip of a second client, s,
    from the ``CAL:RUN`` line on; and that ``CAL:RUN``'s wall time, s."""
    with EmulatedBench(ports=CALIBRATION_PORTS, seed=0) as emulated:
        resource = emulated.resources["switch"]
        with Switch.open(resource) as first, Session(resource) as probe:
            sent, done, took = threading.Event(), threading.Event(), [0.0]
            write = first.transport.write

            def write_and_tell(line: str) -> None:
                write(line)
                if line.startswith("CAL"):
                    sent.set()  # probes from here on wait for the calibration, or not

            first.transport.write = write_and_tell

            def calibrate() -> None:
                t0 = time.perf_counter()
                try:
                    first.calibrate(save=False)
                finally:
                    took[0] = time.perf_counter() - t0
                    done.set()

            worker = threading.Thread(target=calibrate)
            worker.start()
            sent.wait()
            latencies = []
            while not done.is_set():
                t0 = time.perf_counter()
                probe.query("*IDN?")
                latencies.append(time.perf_counter() - t0)
            worker.join()
    return {
        "idn_during_cal_run_median_s": statistics.median(latencies),
        "cal_run_over_tcp_s": took[0],
    }


def transaction_figures(server: TcpServer, n: int) -> dict[str, float]:
    """In process on an emulated 8-port switch: the median wall time (s) of an empty
    transaction and of a ``ROUT:MATC`` of four pairs (two matchings in turn), ``n`` each."""
    controller = Switch.emulated(ports=8, seed=0).transport.controller

    def empty() -> None:
        with controller.transaction():
            pass

    lines = itertools.cycle(["ROUT:MATC 0,5,1,2,3,7,4,6", "ROUT:MATC 0,1,2,3,4,5,6,7"])
    m = _medians({"transaction": empty, "matc": lambda: controller.handle(next(lines))}, n)
    return {"transaction_s": m["transaction"], "route_matching_8_s": m["matc"]}


#: Ports of the chip calibrated over the bench (``--quick``: 4).
CALIBRATION_PORTS = 8
#: A smoke run (``--quick``).
QUICK = False
#: Chips (seeds 0..) whose worst isolation ``bench_calibration_worst_db_min`` is over
#: (``--quick``: 1, the calibration's own).
CALIBRATION_SEEDS = 10
#: Each section measures some figures against a running server.
SECTIONS: list[Callable[[TcpServer, int], dict[str, float]]] = [
    latency_figures,
    nagle_figures,
    calibration_figures,
    seed_figures,
    manual_figures,
    safety_figures,
    client_figures,
    overlap_figures,
    transaction_figures,
]
#: key -> (what it is, unit to print in, target or "")
ROWS: dict[str, tuple[str, str, str]] = {
    "raw_query_s": ("raw socket round trip (NODELAY)", "us", ""),
    "session_query_s": ("Session.query (pyvisa-py)", "us", ""),
    "pyvisa_query_s": ("plain pyvisa-py query", "us", ""),
    "query_latency_ratio": ("Session / raw", "x", "<= 2"),
    "write_then_query_s": ("write + query, Session (NODELAY)", "us", "no ~40 ms stall"),
    "write_then_query_nagle_s": ("write + query, plain pyvisa-py (Nagle)", "ms", "peer"),
    "bench_calibration_s_8": ("8-port bench calibration over VISA", "s", "<= 30"),
    "bench_calibration_s": ("  (the same, its earlier name)", "s", ""),
    "in_process_calibration_s_8": ("  the same chip in process (no wire)", "s", "peer"),
    "bench_calibration_error_db": ("  its worst routed-power error", "dB", "< 0.5"),
    "bench_calibration_isolation_db": ("  its worst isolation", "dB", ">= 25"),
    "bench_calibration_worst_db_min": ("  worst isolation over the seeds", "dB", ">= 20"),
    "manual_coverage_min": ("manual commands accepted, worst model", "%", ">= 95"),
    "instr_resources": ("::INSTR (HiSLIP, VXI-11) resources served", "n", ">= 1"),
    "unsafe_after_failure": ("failure cases leaving heaters unsafe", "n", "0"),
    "failure_cases": ("  of", "n", ""),
    "client_checks_passed": ("unmodified-client checks passed", "n", "= total"),
    "client_checks_total": ("  of", "n", ""),
    "idn_during_cal_run_median_s": ("*IDN? while another client's CAL:RUN runs", "ms", ""),
    "cal_run_over_tcp_s": ("  that CAL:RUN (SDK over TCP)", "s", ""),
    "transaction_s": ("an empty transaction (in process)", "us", ""),
    "route_matching_8_s": ("an 8-port ROUT:MATC (in process)", "ms", ""),
}
_SCALE = {"us": 1e6, "ms": 1e3, "x": 1.0, "s": 1.0, "dB": 1.0, "n": 1.0, "%": 100.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--n", type=int, default=2000, help="round trips per median")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 50 round trips, a 4-port bench"
    )
    args = parser.parse_args()
    if args.quick:
        global CALIBRATION_PORTS, CALIBRATION_SEEDS, QUICK
        args.n, CALIBRATION_PORTS, CALIBRATION_SEEDS, QUICK = 50, 4, 1, True
    figures: dict[str, float] = {}
    with TcpServer(Trivial(), name="bench") as server:
        for section in SECTIONS:
            figures.update(section(server, args.n))
    seeds = [
        figures["bench_calibration_isolation_db"],
        *figures["bench_calibration_worst_db_seeds"],
    ]
    figures["bench_calibration_worst_db_seeds"] = seeds  # seed 0 is the calibration's own
    figures["bench_calibration_worst_db_min"] = min(seeds)
    if args.json:
        print(json.dumps(figures))
        return
    print(
        f"Instrument transport on loopback, medians of {args.n} (write+query with Nagle: "
        f"{NAGLE_PAIRS})"
    )
    print(f"{'figure':<42} {'value':>10} {'unit':<4} {'target':<16}")
    for key, value in figures.items():
        if not isinstance(value, (int, float)):  # per-seed and per-model lists: --json
            continue
        label, unit, target = ROWS.get(key, (key, "x", ""))
        print(f"{label:<42} {value * _SCALE[unit]:>10.1f} {unit:<4} {target:<16}")


if __name__ == "__main__":
    main()
