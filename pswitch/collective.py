"""``pswitch collective``: a collective of distributed training compiled into the switch's
matchings, run on the switch, and timed against an ideal electrical switch.

The collective (ring or halving/doubling all-reduce, reduce-scatter, all-gather, an all-to-all,
the straggler-aware all-reduce) runs on ranks 0..N-1, rank i on port i of a P-port switch.
Each round's links are coloured into matchings; each matching is planned on the mesh (one the
mesh cannot realise is split into realisable ones by its planner, the router on a hexagonal
mesh). The schedule is then loaded into the switch through the SDK (SCH:LOAD, then SCH:STAR
and SCH:STEP, 64 steps at a time) and each reconfiguration takes the time the switch reports
for it: by default a built-in emulated switch (its heater driver: every changed channel
written, then the heaters' settling); --switch RESOURCE a switch over VISA (a real one or
``pswitch serve``'s); --switch model the firmware's heater write model without a switch. A
step costs ``alpha + bytes / bandwidth`` for its most loaded circuit after its
reconfiguration; the ideal electrical switch runs each round at once, with no
reconfiguration. The duty cycle is the transfer time over the total. With a straggler late by
D ms, every step waits for it except the straggler-aware all-reduce's first phase, which the
other ranks run meanwhile.

``sweep`` answers across sizes and rank counts (which all-reduce wins, where reconfiguring
pays, the straggler-aware speed-up by ranks and delay); ``training-step`` times a
hybrid-parallel training step (data, tensor and pipeline groups, one phase after another).
"""

from __future__ import annotations

import argparse
import json

from firmware.electronics import DRIVER_CLASSES
from photonics.chips import topologies
from photonics.errors import SettingsError
from pswitch import args as types
from pswitch import collective_answers, collective_plots
from pswitch.collective_run import (
    ALGORITHMS,
    MAX_EMULATED_PORTS,
    MAX_PORTS,
    MAX_STRAGGLER_MS,
    alpha,
    check_switch,
    collective,
    print_collective,
    size,
)

#: What the command does besides one collective (:mod:`pswitch.collective_answers`).
MODES = ("sweep", "training-step")

EXAMPLES = """examples:
  pswitch collective ring-all-reduce --ranks 16 --bytes 1GiB
  pswitch collective halving-doubling --ranks 16 --bytes 64MiB --plot hd.png
  pswitch collective halving-doubling --ranks 32 --bytes 1GiB --mesh hexagonal
  pswitch collective straggler-all-reduce --ranks 8 --bytes 1GiB --straggler-ms 50
  pswitch collective all-to-all-cover --ranks 16 --bytes 256MiB --json
  pswitch collective halving-doubling --ranks 256 --bytes 1GiB --switch model
  pswitch collective ring-all-reduce --ranks 8 --bytes 1GiB --switch TCPIP0::host::5025::SOCKET
  pswitch collective sweep --ranks 16 --bytes 16GiB --plot sweep.png
  pswitch collective training-step --dp 2 --tp 4 --pp 2 --tp-bytes 64MiB --dp-bytes 1GiB \\
      --pp-bytes 16MiB --forward-ms 20 --backward-ms 40
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``collective`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "collective",
        help="a training collective compiled into matchings, run on the switch, timed against "
        "an electrical switch",
        description=types.plain(__doc__),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "algorithm", choices=(*ALGORITHMS, *MODES), help="the collective, or sweep, training-step"
    )
    parser.add_argument(
        "--ranks",
        type=types.integer(2, MAX_PORTS),
        default=None,
        help="ranks, one per port (sweep: the most ranks, from 4 by doubling)",
    )
    parser.add_argument(
        "--bytes",
        type=size,
        default=None,
        dest="n_bytes",
        metavar="SIZE",
        help="buffer per rank: bytes, or with a unit, e.g. 64MiB, 1GB (sweep: the largest, "
        "from 1 KiB by factors of 32)",
    )
    parser.add_argument(
        "--ports",
        type=types.integer(2, MAX_PORTS),
        default=None,
        help="switch ports, >= --ranks (default: --ranks; on a --switch resource, its ports)",
    )
    parser.add_argument(
        "--mesh",
        choices=topologies.names(directed=False),
        default="clements",
        help="the switch's mesh (default clements; hexagonal: 4..32 ports)",
    )
    parser.add_argument(
        "--switch",
        default="emulator",
        metavar="RESOURCE",
        help="where the reconfiguration times come from: emulator (default: a built-in emulated "
        f"switch, up to {MAX_EMULATED_PORTS} ports), model (the heater write model, no "
        "switch), or a switch's VISA resource",
    )
    parser.add_argument(
        "--driver",
        choices=list(DRIVER_CLASSES),
        default=None,
        help="the heater driver's class, which times each reconfiguration on the emulator and "
        "the model: bench (default: 0.5 ms a channel, one after another), parallel (DACs "
        "updated at once), product (15-90 ms), integrated (co-packaged); a switch's resource "
        "reports its own",
    )
    parser.add_argument("--seed", type=types.seed, default=0, help="seed of the emulated chip")
    parser.add_argument(
        "--straggler-ms",
        type=types.number(MAX_STRAGGLER_MS, "ms"),
        default=None,
        help="the last rank is late by this many ms (default: none late)",
    )
    parser.add_argument(
        "--bandwidth-gbps",
        type=types.number(1e6, "Gb/s"),
        default=400.0,
        help="port bandwidth each way, Gb/s (default 400)",
    )
    parser.add_argument(
        "--alpha-us",
        type=alpha,
        default=5.0,
        help="latency of each step, us (default 5)",
    )
    collective_answers.add_training_arguments(parser)
    parser.add_argument(
        "--plot", type=types.output_file, default=None, help="write a Gantt chart to this PNG"
    )
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.set_defaults(run=run)


def check(args: argparse.Namespace) -> int:
    """The switch's port count; raises :class:`SettingsError` on options that do not fit, before
    anything runs."""
    if args.algorithm == "training-step":
        args.ranks = collective_answers.check_training(args)
    else:
        for option, value in (("--ranks", args.ranks), ("--bytes", args.n_bytes)):
            if value is None:
                raise SettingsError(f"{args.algorithm} needs {option}")
        collective_answers.refuse_training_options(args)
    if args.algorithm == "straggler-all-reduce" and args.ranks < 3:
        raise SettingsError("straggler-all-reduce needs --ranks >= 3 (one late, two ready)")
    if args.algorithm == "sweep":
        if args.ranks < 4:
            raise SettingsError("sweep needs --ranks >= 4 (rank counts from 4 by doubling)")
        if args.straggler_ms is not None:
            raise SettingsError(
                "sweep chooses the straggler's delays itself; leave --straggler-ms out"
            )
    if args.driver is not None and args.switch not in ("emulator", "model"):
        raise SettingsError(
            "--driver sets the emulator's or the model's driver; a switch's resource reports "
            "its own (SYST:DRIV?): leave --driver out"
        )
    if args.plot is not None and args.plot.suffix.lower() != ".png":
        raise SettingsError(f"--plot writes a PNG; give a file name ending .png, got {args.plot}")
    return check_switch(args)


def run(args: argparse.Namespace) -> int:
    ports = check(args)
    if args.algorithm == "sweep":
        result = collective_answers.sweep(args)
        write, show = collective_plots.write_sweep_plot, collective_answers.print_sweep
    elif args.algorithm == "training-step":
        result = collective_answers.training(args, ports)
        write, show = collective_plots.write_plot, collective_answers.print_training
    else:
        result = collective(args, ports)
        write, show = collective_plots.write_plot, print_collective
    if args.plot is not None:
        write(result, args.plot)
        result["plot"] = str(args.plot)
    if args.json:
        print(json.dumps(result))
    else:
        show(result)
        if args.plot is not None:
            print(f"plot: {args.plot}")
    return 0
