"""``pswitch schedule``: a time-multiplexed schedule of matchings, run on the emulated switch.

An all-to-all cover (every pair of endpoints joined once; on a hexagonal mesh only matchings
predicted at the router's 25 dB isolation target), or the circuits of a training job
(a ring, or a torus whose every row and column is a ring), one matching per step. The schedule
is loaded into an emulated switch's firmware (``SCH:LOAD``) and run for one period after the
first step; each step's reconfiguration time is what the emulated heater driver models (every
channel written, then the heaters' thermal settling), and the duty cycle is the steady
period's: ``sum(dwell) / (sum(dwell) + sum(reconfiguration))``.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

from photonics.chips import topologies
from photonics.errors import SettingsError, ShapeError
from pswitch import args as types
from pswitch.progress import progress_bar

if TYPE_CHECKING:  # the switch is imported when the command runs, not with its parser
    from firmware.fabric import Job

KINDS = ("all-to-all", "ring", "torus")
#: Largest emulated feed-forward chip (its heater crosstalk is held as a dense matrix).
MAX_PORTS = 64
#: Pairs are listed in the text output up to this many ports (always in ``--json``).
LIST_PORTS = 16
#: Longest ``--dwell-ms`` (an hour).
MAX_DWELL_MS = 3.6e6

EXAMPLES = """examples:
  pswitch schedule all-to-all --ports 16                 15 perfect matchings
  pswitch schedule all-to-all --ports 16 --mesh hexagonal --dwell-ms 50
  pswitch schedule ring --ports 8                       a ring of all 8 ports
  pswitch schedule ring --ports 8 --endpoints 0,2,4,6
  pswitch schedule torus --ports 16 --shape 4x4
  pswitch schedule torus --ports 16 --spares 3,7,11,15 --shape 3x4 --json
"""


def _ports_list(text: str) -> list[int]:
    items = [item.strip() for item in text.split(",")]
    if not all(item.isdigit() for item in items):
        raise argparse.ArgumentTypeError(f"ports separated by commas, e.g. 0,2,4; got {text!r}")
    return [int(item) for item in items]


def _shape(text: str) -> tuple[int, int]:
    rows, _, cols = text.partition("x")
    if not (rows.isdigit() and cols.isdigit()):
        raise argparse.ArgumentTypeError(f"a torus shape is ROWSxCOLS, e.g. 4x4; got {text!r}")
    return int(rows), int(cols)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``schedule`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "schedule",
        help="an all-to-all or training-job schedule, run on the emulated switch",
        description=types.plain(__doc__),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("kind", choices=KINDS, help="what the schedule connects")
    parser.add_argument(
        "--ports", type=types.integer(2), default=16, help="switch ports (default 16)"
    )
    parser.add_argument(
        "--mesh",
        choices=topologies.names(directed=False),
        default="clements",
        help="the switch's mesh",
    )
    parser.add_argument(
        "--endpoints",
        type=_ports_list,
        default=None,
        help="ring/torus: the accelerators' ports, in ring or row-major order (default: "
        "every port that is not a spare)",
    )
    parser.add_argument(
        "--spares", type=_ports_list, default=[], help="ring/torus: ports kept for failover"
    )
    parser.add_argument(
        "--shape", type=_shape, default=None, help="torus: ROWSxCOLS (default: most square)"
    )
    parser.add_argument(
        "--dwell-ms",
        type=types.number(MAX_DWELL_MS, "ms"),
        default=10.0,
        help="traffic time of each step, ms (default 10)",
    )
    parser.add_argument("--seed", type=types.seed, default=0, help="seed of the emulated chip")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(run=run)


def _square(k: int) -> tuple[int, int]:
    """The most square ``rows x cols = k`` with ``rows <= cols``."""
    rows = max(r for r in range(1, math.isqrt(k) + 1) if k % r == 0)
    return rows, k // rows


def job_of(args: argparse.Namespace) -> Job | None:
    """The ring or torus job the command line names (None for all-to-all), every option
    checked against the kind."""
    from firmware.fabric import Job

    if args.kind == "all-to-all":
        options = {"--endpoints": args.endpoints, "--spares": args.spares, "--shape": args.shape}
        given = [name for name, value in options.items() if value]
        if given:
            raise SettingsError(
                f"{given[0]} is for a ring or torus; all-to-all joins every pair of the ports"
            )
        return None
    ends = args.endpoints
    if ends is None:
        ends = [p for p in range(args.ports) if p not in args.spares]
    if args.kind == "ring":
        if args.shape is not None:
            raise SettingsError("--shape is for a torus; a ring is its endpoints in order")
        return Job("ring", "ring", tuple(ends), tuple(args.spares))
    shape = args.shape or _square(len(ends))
    if min(shape) < 2:
        raise ShapeError(
            f"a torus of {len(ends)} accelerators needs rows and columns >= 2, got "
            f"{shape[0]}x{shape[1]}: give --shape, or other --endpoints"
        )
    return Job("torus", "torus", tuple(ends), tuple(args.spares), shape)


def schedule(args: argparse.Namespace) -> dict[str, Any]:
    """Build the schedule, run it on an emulated switch; the steps and timing as data (s)."""
    from firmware.fabric import all_to_all, job_matchings
    from firmware.sdk import Switch
    from photonics.matching import Matching
    from photonics.recirculating.routing import DEFAULT_ISOLATION_TARGET_DB

    dwell_s = args.dwell_ms * 1e-3
    topology = topologies.topology(args.mesh)
    if topology.kind == "feedforward" and not 2 <= args.ports <= MAX_PORTS:
        raise SettingsError(f"a {args.mesh} switch here has 2..{MAX_PORTS} ports, got {args.ports}")
    topology.check_ports(args.ports)
    job = job_of(args)
    switch = Switch.emulated(ports=args.ports, mesh=args.mesh, seed=args.seed)
    fabric = switch.transport.controller.fabric
    if job is None:
        # on a recirculating mesh, only matchings predicted at the router's isolation target
        floor = DEFAULT_ISOLATION_TARGET_DB if topology.kind == "recirculating" else None
        cover = all_to_all(fabric, isolation_db=floor, progress=progress_bar())
        matchings: list[Matching] = list(cover.matchings)
        note = cover.note
    else:
        matchings = job_matchings(job, args.ports)
        note = f"{job.topology} {'x'.join(map(str, job.shape))}: {len(matchings)} matchings"
    switch.load_schedule([(m, dwell_s) for m in matchings])
    # the first step starts from the idle chip; the steady period is the next k steps, the
    # last of which wraps around to step 0
    run = switch.run_schedule(len(matchings) + 1)
    switch.stop_schedule()
    k = len(matchings)
    reconfigure = list(run.reconfiguration_s[1:])
    steady = reconfigure[-1:] + reconfigure[:-1]  # time to switch into step i, i = 0..k-1
    period = k * dwell_s + sum(steady)
    return {
        "kind": args.kind,
        "mesh": args.mesh,
        "ports": args.ports,
        "note": note,
        "job": None
        if job is None
        else {"endpoints": list(job.endpoints), "spares": list(job.spares), "shape": job.shape},
        "steps": [
            {"pairs": [list(p) for p in m.pairs], "reconfigure_s": t, "dwell_s": dwell_s}
            for m, t in zip(matchings, steady, strict=True)
        ],
        "first_step_from_idle_s": run.reconfiguration_s[0],
        "period_s": period,
        "duty_cycle": k * dwell_s / period,
    }


def _print(r: dict[str, Any]) -> None:
    print(f"{r['kind']} on an emulated {r['ports']}-port {r['mesh']} switch: {r['note']}")
    show = r["ports"] <= LIST_PORTS
    print("  step  reconfigure ms  dwell ms" + ("  pairs" if show else "  circuits"))
    for i, s in enumerate(r["steps"]):
        pairs = " ".join(f"{a}-{b}" for a, b in s["pairs"]) if show else len(s["pairs"])
        print(f"  {i:>4} {s['reconfigure_s'] * 1e3:15.2f} {s['dwell_s'] * 1e3:9.1f}  {pairs}")
    print(
        f"period {r['period_s'] * 1e3:.1f} ms, duty cycle {100 * r['duty_cycle']:.1f} % "
        f"(first step from the idle chip: {r['first_step_from_idle_s'] * 1e3:.1f} ms); "
        f"reconfiguration as the emulated heater driver models it"
    )


def run(args: argparse.Namespace) -> int:
    result = schedule(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0
