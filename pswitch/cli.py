"""The ``pswitch`` command line.

``pswitch demo`` runs the headline scenario (:mod:`pswitch.demo`) on the built-in emulator;
``serve``, ``switch``, ``route``, ``schedule``, ``collective``, ``calibrate``, ``layout``,
``yield`` and ``bench`` have a module each, whose ``register(sub)`` adds its parser and sets its
``run``. Every argument is checked while the command line is parsed (:mod:`pswitch.args`),
before any work.

:func:`main` is the one error boundary. Exit codes: 0 done; 1 a failure of the work (a check
below its figure, an instrument that fails, a file that cannot be written); 2 a bad command
line or input, refused before anything is done or written; 130 interrupted (Ctrl-C), after the
same clean-up as a normal exit. Each failure is one line on stderr; ``pswitch --debug ...``
shows its traceback instead.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from photonics import levels
from photonics.chips import topologies
from photonics.errors import InvalidInputError, PswitchError
from pswitch import (
    __version__,
    benchmarks,
    calibrate,
    collective,
    layout,
    route,
    schedule,
    serve,
    switch,
    yield_command,
)
from pswitch import args as types
from pswitch.progress import progress_bar
from pswitch.rack import command as rack
from pswitch.verification import VERIFY_ISOLATION_DB, VERIFY_LOSS_DB

#: Subcommands with their own module: each has ``register(sub)``, which sets ``run``.
SUBCOMMANDS = (
    serve,
    switch,
    route,
    schedule,
    collective,
    calibrate,
    layout,
    yield_command,
    rack,
    benchmarks,
)

DEMO_EXAMPLES = """examples:
  pswitch demo                       16-port Clements switch; plots into ./pswitch-demo
  pswitch demo --ports 32 --seed 7   the PipSwitch scale, another chip
  pswitch demo --mesh hexagonal      the same scenario on a recirculating hexagonal mesh
  pswitch demo --json --no-plots     machine-readable results
"""

EXAMPLES = """examples:
  pswitch demo                          the headline scenario on the built-in emulator
  pswitch route 0-5 1-3 2-4 --ports 8   settings and predicted powers of a matching
  pswitch schedule torus --ports 16 --spares 3,7,11,15
  pswitch serve                         the emulated bench on loopback; writes bench.json
  pswitch switch --resource R connect 0-5 1-2   a switch over VISA (or `pswitch serve`'s)
  pswitch collective ring-all-reduce --ranks 16 --bytes 1GiB   optical against electrical
  pswitch calibrate --bench bench.json  calibrate the chip on a bench (or `pswitch serve`'s)
  pswitch layout --mesh clements --ports 8 -o mesh.gds --png mesh.png
  pswitch yield --chips 200 --coupler-sigma 0.02   how many chips pass, on a local Dask cluster
  pswitch bench --list                  the benchmarks against peers
"""


def _print_demo(r: dict[str, Any]) -> None:
    a, t, f = r["all_to_all"], r["training_step"], r["failover"]
    feed_forward = topologies.topology(r["mesh"]).kind == "feedforward"
    cells = "MZIs" if feed_forward else "cells"
    mesh = r["mesh"].capitalize() if feed_forward else r["mesh"]
    print(f"Emulated {r['ports']}-port switch ({mesh} mesh, {r['mzis']} {cells}, seed {r['seed']})")
    c = r["calibration"]
    dead = "" if feed_forward else f" ({c['dead_cells']} cells dead, left out by the router)"
    print(f"1. calibrated through the detectors: {r['calibrated']}{dead}")
    worst = a["worst_isolation_db"]
    print(
        f"2. all-to-all: {a['matchings']} matchings applied, {a['verified']} verified by "
        f"measured powers at >= {a['verify_isolation_db']:.0f} dB isolation (worst "
        + (f"n/a: {levels.NO_OTHER_LIGHT}" if worst is None else f"{worst:.1f} dB")
        + f"; loss within {a['worst_loss_error_db']:.2f} dB of predicted)"
    )
    for u in a["unverified_circuits"]:
        iso = levels.shown(u["isolation_db"], ".1f", "n/a")
        print(
            f"   not verified: matching {u['matching']}, circuit {u['source']} -> {u['target']}: "
            f"isolation {iso} dB, loss {u['loss_db']:.1f} dB (predicted "
            f"{u['predicted_loss_db']:.1f} dB)"
        )
    print(
        f"3. training step, {t['topology']} job: {t['phases']} phases of "
        f"{t['phase_dwell_s'] * 1e3:.0f} ms, duty cycle {100 * t['duty_cycle']:.1f} %"
    )
    print(
        f"4. accelerator on port {f['failed_port']} failed: spare {f['spare']} spliced to "
        f"{f['peer']}; new circuit verified: {f['new_circuits_verified']}; "
        f"{f['untouched_circuits']} untouched circuits verified: {f['untouched_verified']} "
        f"(moved <= {f['untouched_max_change_db']:.3f} dB), {f['disturbed_circuits']} disturbed"
    )
    print("5. timeline            compute (measured)   modeled hardware")
    for step in r["timeline"]:
        print(f"   {step['step']:<18} {step['compute_s']:12.4f} s {step['modeled_s']:16.4f} s")
    print(f"   {'published failover':<18} {'':>14} {r['published_failover_s']:16.4f} s")
    print(
        "   compute: measured on this machine (the firmware's work and the emulated chip's physics)"
    )
    print("   modeled hardware: the emulated heaters' writes and settling and the detectors' reads")
    compiled = r["compiled_on_first_use"]
    if compiled["kernels"]:
        print(
            f"   compiled on first use, before step 1 and not counted above: "
            f"{compiled['kernels']} kernel signatures in {compiled['seconds']:.1f} s (numba's "
            f"cache was cold; the install step warms it: python -m pswitch.warm)"
        )
    else:
        print("   compiled on first use: 0 s (every kernel came from numba's on-disk cache)")
    if r["plots"]:
        print("6. plots: " + ", ".join(r["plots"].values()))


def demo_doc() -> str:
    """The demo's description for its help: :mod:`pswitch.demo`'s docstring as plain text, read
    from its source (importing it would import the numerics, and the help would be slow)."""
    source = Path(__file__).with_name("demo.py").read_text()
    return types.plain(
        ast.get_docstring(ast.parse(source)) or "",
        VERIFY_ISOLATION_DB=f"{VERIFY_ISOLATION_DB:g} dB",
        VERIFY_LOSS_DB=f"{VERIFY_LOSS_DB:g} dB",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = types.Parser(
        prog="pswitch",
        description="Emulator and firmware SDK for programmable photonic circuit switches.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pswitch {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="on a failure, show the traceback (for bug reports)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="the headline scenario: calibrate, all-to-all, training step, failover",
        description=demo_doc(),
        epilog=DEMO_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--ports", type=types.integer(2), default=16, help="switch ports, even, 4-32 (default 16)"
    )
    demo.add_argument("--seed", type=types.seed, default=0, help="seed of the emulated chip")
    demo.add_argument(
        "--mesh",
        choices=topologies.names(directed=False),
        default="clements",
        help="the switch's mesh (default clements); either kind calibrates through its detectors",
    )
    plots = demo.add_mutually_exclusive_group()
    plots.add_argument(
        "--plots",
        type=types.output_folder,
        default="pswitch-demo",
        help="folder for the PNG plots, created if missing (default pswitch-demo)",
    )
    plots.add_argument(
        "--no-plots", action="store_const", dest="plots", const=None, help="write no plots"
    )
    demo.add_argument("--json", action="store_true", help="print the results as JSON")
    demo.set_defaults(run=run_demo)
    for command in SUBCOMMANDS:
        command.register(sub)
    return parser


def run_demo(args: argparse.Namespace) -> int:
    """``pswitch demo``: the settings are checked before the scenario runs."""
    from pswitch.demo import DemoSettings, run_demo

    result = run_demo(DemoSettings(args.ports, args.seed, args.plots, args.mesh), progress_bar())
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_demo(result)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The ``pswitch`` command; its exit code (see the module docstring)."""
    prog, debug = "pswitch", False
    if not (sys.argv[1:] if argv is None else argv):  # bare: what it can do, and no command ran
        print(build_parser().format_help(), end="", file=sys.stderr)
        return 2
    try:
        with _interrupts() as interrupted:
            try:
                args = build_parser().parse_args(argv)
                prog, debug = f"pswitch {args.command}", args.debug
                code = args.run(args)
                if interrupted and not debug:  # a Ctrl-C lost in a callback: still one
                    raise KeyboardInterrupt
                return code
            except Exception:
                if interrupted and not debug:  # the Ctrl-C was lost in a callback: see below
                    raise KeyboardInterrupt from None
                raise
    except KeyboardInterrupt:  # Ctrl-C, after the finally-blocks and context managers ran
        if debug:
            raise
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader left early (`pswitch ... | head`): no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:
        if debug:
            raise
        code, message = failure(exc)
        print(f"{getattr(exc, 'prog', prog)}: error: {message}", file=sys.stderr)
        return code


@contextlib.contextmanager
def _interrupts() -> Iterator[list[bool]]:
    """Note every Ctrl-C or SIGTERM (the list holds True once one came), each raising
    KeyboardInterrupt. Python raises KeyboardInterrupt
    where the main thread is; inside a callback from C (numba's compiler calls back into Python
    while it compiles) it is printed as "Exception ignored" and lost, and the compiler then
    fails with an unrelated error. The command is still interrupted: :func:`main` reports it
    so, and the lost one prints nothing."""
    seen: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def on_sigint(signum: int, frame: object) -> None:
        seen.append(True)
        raise KeyboardInterrupt

    def unraisable(hook: Any) -> None:
        if not issubclass(hook.exc_type, KeyboardInterrupt):
            previous_hook(hook)

    # SIGTERM (a service manager, `kill`) stops the command as Ctrl-C does: instruments safe
    previous = {sig: signal.signal(sig, on_sigint) for sig in (signal.SIGINT, signal.SIGTERM)}
    previous_hook, sys.unraisablehook = sys.unraisablehook, unraisable
    try:
        yield seen
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sys.unraisablehook = previous_hook


def failure(exc: Exception) -> tuple[int, str]:
    """The exit code and one-line message of a failure: 2 for bad input; 1 for a run that
    failed (an instrument, a fit, a file that could not be written) and for a bug."""
    if isinstance(exc, InvalidInputError):
        return 2, str(exc)
    if isinstance(exc, PswitchError):
        return 1, str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return 1, f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return 1, (
        f"unexpected {type(exc).__name__}: {exc} (a bug: run it again as `pswitch --debug ...` "
        f"and report the traceback)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
