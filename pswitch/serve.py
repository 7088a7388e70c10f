"""``pswitch serve``: the emulated bench, served until interrupted (or for ``--seconds``)."""

from __future__ import annotations

import argparse
import time

from pswitch import args as types

#: The longest ``--seconds`` (about 30 years; also how long "until interrupted" waits).
FOREVER_S = 1e9

EXAMPLES = """examples:
  pswitch serve                      8-port bench on loopback; writes bench.json
  pswitch serve --ports 4 --config /tmp/bench.json --seconds 600
  pswitch serve --clock real         every settle slept on the wall clock
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``serve`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "serve",
        help="run the emulated bench (lasers, power meters, heater driver, switch)",
        description=(
            "Serve every instrument of the emulated bench, all on one emulated chip: SCPI "
            "instruments and the switch on TCP sockets, the heater driver on a pseudo-"
            "terminal. Prints the resource map and writes it as a bench configuration "
            "(pswitch.bench JSON) that hil.bench.Bench and `pswitch calibrate` read. Runs "
            "until interrupted (Ctrl-C), which stops it normally (exit 0)."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--ports", type=types.integer(2), default=8, help="chip ports, 4 or 8")
    parser.add_argument("--seed", type=types.seed, default=0, help="seed of the emulated chip")
    parser.add_argument(
        "--host",
        type=types.host,
        default="127.0.0.1",
        help="address to bind (default loopback only; 0.0.0.0 exposes the bench)",
    )
    parser.add_argument(
        "--config",
        type=types.output_file,
        default="bench.json",
        help="bench configuration to write (bench.json)",
    )
    parser.add_argument(
        "--clock",
        choices=("virtual", "real"),
        default="virtual",
        help="virtual (default): the bench's time jumps over every wait (settling, *OPC?, "
        "logging) instead of sleeping it; real: wall-clock pacing, for lab code that is "
        "sensitive to timing",
    )
    parser.add_argument(
        "--seconds",
        type=types.number(FOREVER_S, "seconds"),
        default=None,
        help="stop after this long (default: never)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the emulated bench until interrupted (or for ``--seconds``)."""
    from hil.emulator.bench import EmulatedBench

    with EmulatedBench(args.ports, args.seed, args.host, clock=args.clock) as bench:
        bench.config().save(args.config)
        width = max(map(len, bench.resources))
        for name, resource in bench.resources.items():
            print(f"{name:<{width}}  {resource}")
        print(
            f"bench configuration written to {args.config} ({args.clock} clock); Ctrl-C stops",
            flush=True,
        )
        # Ctrl-C (or SIGTERM) ends the sleep: the bench closes its instruments on the way out,
        # and the command reports the interrupt as every command does (130)
        time.sleep(FOREVER_S if args.seconds is None else args.seconds)
    return 0
