"""Robustness benchmark: the switch's promises under generated lines, injected faults, limits,
two network clients and hostile SDK arguments, beside the figures reported before the
contracts held.

1. Fuzz: the contract machine of ``tests/firmware/contracts.py`` (hypothesis, seeded) sends
   ``--lines`` lines, valid and invalid, with injected faults (store, heater write, detector
   read) and restarts, to an emulated 4-port switch with rings and a store. Counted: exceptions
   out of ``handle`` (and -300, the firmware's net for its own bugs), and failing commands that
   changed the state (for a one-command line: the state before the line; for a ``;``-joined
   line, the state before its failing command, as each command is its own transaction).
2. Limits: a random walk of ``--walk`` commands (``CAL:RUN``, ``RING:LOCK``, ``*TST?``, routes,
   heaters) between random current limits, power budgets and the interlock. Counted: rows of
   currents over the limits of that instant that reached the driver (writes and every row
   measured or read back during self-calibration and ring locks).
3. Two SDK clients over TCP (``Switch.open`` on the emulated bench's switch server, what
   ``pswitch serve`` runs), each from its own thread, interleave ``--calls`` good calls
   (``set_interlock(False)``) and bad ones (``disconnect`` of a dark port of its own). Counted:
   errors a client saw that were the other's, bad calls that passed silently, and timeouts
   (``--timeout``; each counts as a cross-client error).
4. While one client runs ``CAL:RUN`` over TCP, the worst ``*IDN?`` round trip of another client
   (a raw socket, so the server's latency, with no client-side lock); a probe that times out
   counts as ``--timeout``.
5. SDK injection: string, float, quoted and None arguments that carry extra commands
   (``sw.add("4,5;ROUT:DISC 0;ROUT:CONN 6", 7)``, ...). Counted: attempts the SDK accepted or
   that changed the switch.

Progress goes to stderr. Run::

    python benchmarks/bench_robustness.py                   # the table
    python benchmarks/bench_robustness.py --json            # one JSON object
    python benchmarks/bench_robustness.py --lines 500 --walk 50 --calls 20   # quick
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from firmware.sdk import Switch, SwitchError
from hil.emulator.bench import EmulatedBench
from hil.errors import InstrumentError
from photonics.errors import PswitchError

# the suite's contract machine and state helpers live in tests/ (a source checkout)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.firmware.contracts import STEPS, ContractMachine, Tally
from tests.firmware.state import capture, watch_limits

#: The SDK calls that try to slip extra commands (or wrong types) through their arguments, each
#: on a switch in the state its setup line leaves (8 ports: 0-1 and 2-3 routed, a schedule).
ROUTED = "SYST:INT OFF;SCH:STOP;ROUT:MATC 0,1,2,3"
ENGAGED = "SYST:INT ON"
ATTEMPTS = (
    (ROUTED, 'sw.add("4,5;ROUT:DISC 0;ROUT:CONN 6", 7)'),
    (ROUTED, "sw.add(4.0, 5.0)"),
    (ROUTED, 'sw.add("4", 5)'),
    (ROUTED, "sw.add('\"4\"', 5)"),
    (ROUTED, "sw.add(True, 5)"),
    (ROUTED, 'sw.disconnect("0;ROUT:CLE")'),
    (ROUTED, "sw.disconnect(\"'0'\")"),
    (ROUTED, "sw.disconnect(0.0)"),
    (ROUTED, 'sw.connect([("4;ROUT:CLE", 5)])'),
    (ROUTED, "sw.connect([(4.0, 5.0)])"),
    (ROUTED, 'sw.set_heater("3;ROUT:CLE", 1.0)'),
    (ROUTED, 'sw.set_heater(3, "1;ROUT:CLE")'),
    (ROUTED, "sw.set_heater(3.0, 1.0)"),
    (ROUTED, 'sw.set_heaters(["0;ROUT:CLE"] * len(sw.heaters()))'),
    (ROUTED, 'sw.lock_ring("0;ROUT:CLE")'),
    (ROUTED, 'sw.unlock_ring("0;ROUT:CLE")'),
    (ROUTED, 'sw.ring_status("0;ROUT:CLE")'),
    (ROUTED, 'sw.powers(["0;ROUT:CLE"])'),
    (ROUTED, 'sw.powers(unit="mW;ROUT:CLE")'),
    (ROUTED, 'sw.set_limits(current_mA="3;SYST:INT ON")'),
    (ROUTED, 'sw.set_limits(power_mW="1e3;ROUT:CLE")'),
    (ROUTED, 'sw.calibrate(save="1;ROUT:CLE")'),
    (ROUTED, 'sw.load_schedule([([(4, 5)], "1ms;ROUT:CLE")])'),
    (ROUTED, 'sw.load_schedule([([("4;ROUT:CLE", 5)], 1e-3)])'),
    (ROUTED, 'sw.run_schedule("2")'),
    (ROUTED, "sw.run_schedule(0)"),
    (ROUTED, "sw.run_schedule(-3)"),
    (ROUTED, "sw.run_schedule(2.0)"),
    (ENGAGED, "sw.set_interlock(None)"),
    (ENGAGED, 'sw.set_interlock("")'),
    (ENGAGED, 'sw.set_interlock("OFF")'),
    (ENGAGED, "sw.set_interlock(0)"),
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---- 1. fuzz ---------------------------------------------------------------------------------
def fuzz(lines: int, rng_seed: int) -> Tally:
    """Run the contract machine, counting, until it has sent ``lines`` lines."""
    tally = Tally(limit=lines)
    machine = seed(rng_seed)(type("Counted", (ContractMachine,), {"tally": tally}))
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=lines // (STEPS // 2) + 1,  # a run sends some 80 lines of its STEPS
            stateful_step_count=STEPS,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        ),
    )
    return tally


# ---- 2. limits at every instant -------------------------------------------------------------
def walk_line(rng: random.Random, ports: int, rings: int) -> str:
    """A random command: half of them a new limit or the interlock."""
    if rng.random() < 0.5:
        return rng.choice(
            [
                f"SYST:POW:LIM {rng.uniform(0, 900):.0f}",
                f"SYST:CURR:LIM {rng.uniform(2, 10):.1f}",
                f"SYST:INT {rng.choice(['ON', 'OFF', 'OFF'])}",
            ]
        )
    order = rng.sample(range(ports), ports)
    return rng.choice(
        [
            "CAL:RUN",
            f"RING:LOCK {rng.randrange(rings)}",
            f"RING:UNL {rng.randrange(rings)}",
            "*TST?",
            "ROUT:MATC " + ",".join(map(str, order[: 2 * rng.randrange(ports // 2 + 1)])),
            f"HEAT:CURR {rng.randrange(4)},{rng.uniform(0, 8):.2f}",
            "*RST",
        ]
    )


def limit_walk(steps: int, rng_seed: int) -> dict[str, int]:
    rng = random.Random(rng_seed)
    c = Switch.emulated(ports=4, seed=1, rings=True).transport.controller
    watch = watch_limits(c)
    done = {"CAL:RUN": 0, "RING:LOCK": 0}
    for i in range(steps):
        line = walk_line(rng, 4, len(c.rings.channels))
        c.handle(line)
        head = line.split()[0]
        if head in done and not c.errors.codes():
            done[head] += 1
        c.errors.clear()
        if i % 200 == 199:
            log(f"  limits: {i + 1}/{steps} commands")
    return {
        "violations": len(watch.over),
        "rows": watch.rows,
        "calibrations": done["CAL:RUN"],
        "locks": done["RING:LOCK"],
    }


# ---- 3. and 4. two clients over TCP -----------------------------------------------------------
def two_clients(resource: str, calls: int, timeout_s: float, rng_seed: int) -> dict[str, int]:
    """Each client ``k`` interleaves good calls and bad ones (``disconnect(k)``, port k dark)."""
    seen = {"others": 0, "silent": 0, "timeout": 0, "calls": 0}
    lock = threading.Lock()

    def tell(kind: str) -> None:
        with lock:
            seen[kind] += 1

    def client(k: int) -> None:
        rng = random.Random(rng_seed + k)
        with Switch.open(resource) as sw:
            sw.transport.timeout_s = timeout_s
            for _ in range(calls):
                tell("calls")
                bad = rng.random() < 0.5
                try:
                    if bad:
                        sw.disconnect(k)
                        tell("silent")
                    else:
                        sw.set_interlock(False)
                except SwitchError as exc:
                    if not (bad and f"port {k} is not connected" in exc.message):
                        tell("others")
                except InstrumentError:
                    tell("timeout")

    threads = [threading.Thread(target=client, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return seen


def ask_idn(probe: socket.socket, timeout_s: float) -> float:
    """One ``*IDN?`` round trip on a raw socket, s (``timeout_s`` when no reply came)."""
    probe.settimeout(timeout_s)
    t0 = time.perf_counter()
    probe.sendall(b"*IDN?\n")
    reply = b""
    try:
        while not reply.endswith(b"\n"):
            chunk = probe.recv(4096)
            if not chunk:
                return timeout_s
            reply += chunk
    except TimeoutError:
        return timeout_s
    return time.perf_counter() - t0


def idn_during_calibration(server, timeout_s: float) -> dict[str, float]:
    """The worst ``*IDN?`` of a second client while the first runs ``CAL:RUN`` (s)."""
    first = Switch.open(server.resource)
    first.transport.timeout_s = 120.0
    sent, done = threading.Event(), threading.Event()
    write = first.transport.write

    def write_and_tell(line: str) -> None:
        write(line)
        if line.startswith("CAL"):
            sent.set()

    first.transport.write = write_and_tell

    def calibrate() -> None:
        t0 = time.perf_counter()
        try:
            first.calibrate(save=False)
        finally:
            took["cal_run_s"] = time.perf_counter() - t0
            done.set()

    took: dict[str, float] = {}
    with socket.create_connection((server.host, server.port)) as probe:
        idle = ask_idn(probe, timeout_s)
        worker = threading.Thread(target=calibrate)
        worker.start()
        sent.wait()
        time.sleep(0.01)  # the server has the line
        latencies = [ask_idn(probe, timeout_s)]
        while not done.is_set() and latencies[-1] < timeout_s:
            latencies.append(ask_idn(probe, timeout_s))
        worker.join()
    first.close()
    return {"idn_s": max(latencies), "idle_s": idle, "probes": len(latencies), **took}


# ---- 5. SDK injection -----------------------------------------------------------------------
def sdk_injection() -> list[tuple[str, str]]:
    """Each attempt and what became of it: refused (the exception), accepted, or changed."""
    with tempfile.TemporaryDirectory() as folder:
        sw = Switch.emulated(ports=8, seed=0, rings=True, state_dir=folder)
        c = sw.transport.controller
        c.handle("SCH:LOAD 1ms,2,0,1,1ms,2,2,3")
        outcome = []
        for setup, attempt in ATTEMPTS:
            c.handle(setup)
            c.errors.clear()
            before = capture(c)
            try:
                eval(attempt, {"sw": sw})  # a fixed call of the list above
                result = "accepted"
            except (PswitchError, TypeError, ValueError) as exc:
                result = f"refused ({type(exc).__name__})"
            if capture(c) != before:
                result = "changed the switch" + ("" if result == "accepted" else f", {result}")
            outcome.append((attempt, result))
    return outcome


#: The same figures as reported before the contracts held.
BEFORE = {
    "fuzz_lines": "-",
    "fuzz_escaped": "ROUT:MATC DEF and 2 more raised TypeError",
    "fuzz_state_changed_on_error": "4 reproducers (store, ring lock, CAL:RUN, calibrate)",
    "limit_violations_during_measurement": "155 of a 3,000-command walk",
    "cross_client_errors": "12 of 600 calls",
    "idn_during_cal_run_s": "5 s (two CAL:RUNs: 20 s)",
    "sdk_injection_accepted": "add, disconnect, set_heater, lock/unlock_ring, ...",
}


# ---- the run ---------------------------------------------------------------------------------
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--lines", type=int, default=20000, help="lines of the fuzz run")
    parser.add_argument("--walk", type=int, default=1000, help="commands of the limit walk")
    parser.add_argument("--calls", type=int, default=300, help="calls of each TCP client")
    parser.add_argument("--timeout", type=float, default=10.0, help="a TCP client's timeout, s")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 300 lines, 20 steps, 10 calls"
    )
    args = parser.parse_args()
    if args.quick:
        args.lines, args.walk, args.calls = 300, 20, 10
    return args


def main() -> None:
    args = parse_args()
    log(f"fuzz: {args.lines} lines")
    t0 = time.perf_counter()
    tally = fuzz(args.lines, args.seed)
    fuzz_s = time.perf_counter() - t0
    log(f"limits: a walk of {args.walk} commands")
    walk = limit_walk(args.walk, args.seed)
    log(f"two clients over TCP: {args.calls} calls each; *IDN? during CAL:RUN")
    with EmulatedBench(ports=8, seed=args.seed) as bench:
        clients = two_clients(bench.resources["switch"], args.calls, args.timeout, args.seed)
        idn = idn_during_calibration(bench.servers["switch"], args.timeout)
    log("SDK injection")
    attempts = sdk_injection()
    figures = {
        "fuzz_lines": tally.lines,
        "fuzz_escaped": tally.broken["escaped"],
        "fuzz_state_changed_on_error": tally.broken["state changed on error"],
        "limit_violations_during_measurement": walk["violations"],
        "cross_client_errors": clients["others"] + clients["silent"] + clients["timeout"],
        "idn_during_cal_run_s": idn["idn_s"],
        "sdk_injection_accepted": sum(not r.startswith("refused") for _, r in attempts),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print_tables(args, figures, tally, fuzz_s, walk, clients, idn, attempts)


def print_tables(args, figures, tally, fuzz_s, walk, clients, idn, attempts) -> None:
    print(f"Fuzz: {tally.lines} lines in {fuzz_s:.0f} s (seed {args.seed})")
    print(f"  escaped handle (exception or -300)      {figures['fuzz_escaped']:>6}")
    print(f"  failing command that changed the state  {figures['fuzz_state_changed_on_error']:>6}")
    for kind, count in sorted(tally.broken.items()):
        print(f"  broken: {kind:<31} {count:>6}  first: {tally.first[kind][:120]}")
    print(f"\nLimits: a walk of {args.walk} commands, {walk['rows']} rows sent to the driver")
    print(f"  CAL:RUN done {walk['calibrations']}, RING:LOCK done {walk['locks']}")
    print(f"  rows over the limits of their instant   {walk['violations']:>6}")
    print(f"\nTwo SDK clients over TCP, {clients['calls']} calls in all")
    print(f"  errors that were the other client's     {clients['others']:>6}")
    print(f"  bad calls that passed silently          {clients['silent']:>6}")
    print(f"  timeouts ({args.timeout:g} s; counted as errors)    {clients['timeout']:>6}")
    print(f"  cross_client_errors                     {figures['cross_client_errors']:>6}")
    print(f"\n*IDN? of another client while CAL:RUN runs ({idn.get('cal_run_s', 0):.2f} s)")
    print(f"  worst of {idn['probes']} probes: {idn['idn_s']:.3f} s (idle {idn['idle_s']:.4f} s;")
    print(f"  a probe that timed out counts as the timeout, {args.timeout:g} s; goal < 0.05 s)")
    print("\nSDK arguments that try to inject commands")
    for attempt, result in attempts:
        print(f"  {attempt:<58} {result}")
    print(f"  sdk_injection_accepted                  {figures['sdk_injection_accepted']:>6}")
    print("\nSummary: now, and as reported before the contracts held")
    print(f"  {'figure':<37} {'now':>9}  before")
    for key, value in figures.items():
        print(f"  {key:<37} {value:>9.4g}  {BEFORE[key]}")


if __name__ == "__main__":
    main()
