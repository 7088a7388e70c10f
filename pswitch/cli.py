"""The ``pswitch`` command line.

``pswitch demo`` runs the headline scenario (:mod:`pswitch.demo`) on the built-in emulator;
``pswitch serve`` serves the emulated bench; ``route``, ``schedule``, ``calibrate`` and
``bench`` have a module each (``pswitch.cli_*``); packages above hil add their own subcommands
through the ``pswitch.commands`` entry points (``pswitch layout``).

Exit codes: 0 done, 1 a failure of the work (a check below its figure, an instrument that
fails), 2 a bad command line or input (nothing is changed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hil.errors import InstrumentError
from photonics import PswitchError, topologies
from pswitch import __version__, benchmarks, calibrate, layout, route, schedule
from pswitch.demo import DemoSettings, run_demo
from pswitch.progress import progress_bar

#: Subcommands with their own module: each has ``register(sub)``, which sets ``run``.
SUBCOMMANDS = (route, schedule, calibrate, layout, benchmarks)

DEMO_EXAMPLES = """examples:
  pswitch demo                       16-port Clements switch; plots into ./pswitch-demo
  pswitch demo --ports 32 --seed 7   the PipSwitch scale, another chip
  pswitch demo --mesh hexagonal      the same scenario on a recirculating hexagonal mesh
  pswitch demo --json --no-plots     machine-readable results
"""

SERVE_EXAMPLES = """examples:
  pswitch serve                      8-port bench on loopback; writes bench.json
  pswitch serve --ports 4 --config /tmp/bench.json --seconds 600
"""

EXAMPLES = """examples:
  pswitch demo                          the headline scenario on the built-in emulator
  pswitch route 0-5 1-3 2-4 --ports 8   settings and predicted powers of a matching
  pswitch schedule torus --ports 16 --spares 3,7,11,15
  pswitch serve                         the emulated bench on loopback; writes bench.json
  pswitch calibrate --bench bench.json  calibrate the chip on a bench (or `pswitch serve`'s)
  pswitch layout --mesh clements --ports 8 -o mesh.gds --png mesh.png
  pswitch bench --list                  the benchmarks against peers
"""


def _print_demo(r: dict[str, Any]) -> None:
    a, t, f = r["all_to_all"], r["training_step"], r["failover"]
    feed_forward = topologies.topology(r["mesh"]).kind == "feedforward"
    cells = "MZIs" if feed_forward else "cells"
    mesh = r["mesh"].capitalize() if feed_forward else r["mesh"]
    print(f"Emulated {r['ports']}-port switch ({mesh} mesh, {r['mzis']} {cells}, seed {r['seed']})")
    c = r["calibration"]
    if c["through_detectors"]:
        print(f"1. calibrated through the detectors: {r['calibrated']}")
    else:
        print(
            f"1. calibrated through the detectors: False (CAL:RUN refused: {c['cal_run_error']}); "
            f"running on the factory calibration of {c['chip_id']} ({c['created']})"
        )
    print(
        f"2. all-to-all: {a['matchings']} matchings applied, {a['verified']} verified by "
        f"measured powers at >= {a['verify_isolation_db']:.0f} dB isolation (worst "
        f"{a['worst_isolation_db']:.1f} dB; loss within {a['worst_loss_error_db']:.2f} dB of "
        f"predicted)"
    )
    for u in a["unverified_circuits"]:
        print(
            f"   not verified: matching {u['matching']}, circuit {u['source']} -> {u['target']}: "
            f"isolation {u['isolation_db']:.1f} dB, loss {u['loss_db']:.1f} dB (predicted "
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
    import pswitch.demo

    return pswitch.demo.__doc__ or ""


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"needs an integer >= 2, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pswitch",
        description="Emulator and firmware SDK for programmable photonic circuit switches.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pswitch {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="the headline scenario: calibrate, all-to-all, training step, failover",
        description=demo_doc(),
        epilog=DEMO_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--ports", type=_positive_int, default=16, help="switch ports, even, 4-32 (default 16)"
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the emulated chip")
    demo.add_argument(
        "--mesh",
        choices=topologies.names(directed=False),
        default="clements",
        help="the switch's mesh (default clements); a feed-forward mesh calibrates through its "
        "detectors, a recirculating one runs on its factory calibration",
    )
    demo.add_argument(
        "--plots", default="pswitch-demo", help="folder for the PNG plots (default pswitch-demo)"
    )
    demo.add_argument("--no-plots", action="store_true", help="write no plots")
    demo.add_argument("--json", action="store_true", help="print the results as JSON")
    serve = sub.add_parser(
        "serve",
        help="run the emulated bench (lasers, power meters, heater driver, switch)",
        description=(
            "Serve every instrument of the emulated bench, all on one emulated chip: SCPI "
            "instruments and the switch on TCP sockets, the heater driver on a pseudo-"
            "terminal. Prints the resource map and writes it as a bench configuration "
            "(pswitch.bench JSON) that hil.bench.Bench and `pswitch calibrate` read. Runs "
            "until interrupted (Ctrl-C)."
        ),
        epilog=SERVE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--ports", type=_positive_int, default=8, help="chip ports, 4 or 8")
    serve.add_argument("--seed", type=int, default=0, help="seed of the emulated chip")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default loopback only; 0.0.0.0 exposes the bench)",
    )
    serve.add_argument(
        "--config", default="bench.json", help="bench configuration to write (bench.json)"
    )
    serve.add_argument(
        "--seconds", type=float, default=None, help="stop after this long (default: never)"
    )
    for command in SUBCOMMANDS:
        command.register(sub)
    return parser


def serve(ports: int, seed: int, host: str, config: str, seconds: float | None) -> None:
    """Run the emulated bench until interrupted (or for ``seconds``)."""
    from hil.emulator.bench import EmulatedBench

    with EmulatedBench(ports, seed, host) as bench:
        bench.config().save(config)
        width = max(map(len, bench.resources))
        for name, resource in bench.resources.items():
            print(f"{name:<{width}}  {resource}")
        print(f"bench configuration written to {config}; Ctrl-C stops", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            time.sleep(1e9 if seconds is None else seconds)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            plots = None if args.no_plots else Path(args.plots)
            settings = DemoSettings(args.ports, args.seed, plots, args.mesh)
            result = run_demo(settings, progress_bar())
            if args.json:
                print(json.dumps(result, indent=2))
            else:
                _print_demo(result)
        elif args.command == "serve":
            serve(args.ports, args.seed, args.host, args.config, args.seconds)
        elif hasattr(args, "run"):
            return args.run(args)
    except BrokenPipeError:  # the reader left early (`pswitch ... | head`): no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except InstrumentError as exc:  # the bench failed, not the command line
        print(f"pswitch {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except PswitchError as exc:
        print(f"pswitch {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
