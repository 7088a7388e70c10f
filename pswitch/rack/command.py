"""``pswitch rack``: rack-scale studies of accelerators joined by emulated photonic switch chips
against electrical racks as built, each from a published work's stated setup (docs/rack.md).

failover: a fine-tuning job whose accelerators fail; a spare spliced in through the switch
against the static torus and migration. slicing: a tenant trace on a 64-accelerator rack,
sliced photonically against contiguous blocks of a fixed torus. rails: a training step's
phases on optical rails reconfigured per phase against an electrical rail and a static optical
one. straggler: the straggler-aware all-reduce against ring on 8 ranks. sweep: one of the
first three over driver classes and seeds on Dask, rows to Parquet, resumable. Every answer
names the driver class, and so the reconfiguration time, it holds at.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from firmware.electronics import DRIVER_CLASSES
from photonics.errors import SettingsError
from pswitch import args as types
from pswitch.progress import progress_bar

STUDIES = ("failover", "slicing", "rails", "straggler", "sweep")
#: The driver class each study assumes unless told: the prototype's product class for the
#: failover, parallel DACs elsewhere.
DEFAULT_DRIVER = {"failover": "product", "slicing": "parallel", "rails": "parallel"}
#: Configurations a study applies to the emulated switch and verifies, by default.
VERIFY = 8

EXAMPLES = """examples:
  pswitch rack failover                      the fine-tuning job through failures
  pswitch rack slicing --jobs 100 --plot map.png   a tenant trace, the rack's allocation
  pswitch rack rails --driver product        optical rails at the product's reconfiguration
  pswitch rack straggler --json
  pswitch rack sweep --study slicing --seeds 8 --output sweep.parquet --plot sweep.png
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``rack`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "rack",
        help="rack-scale studies: failover, slicing, rails, straggler, sweep",
        description=types.plain(__doc__),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("study", choices=STUDIES, help="the study")
    parser.add_argument(
        "--driver",
        choices=list(DRIVER_CLASSES),
        default=None,
        help="the switch's heater driver class (default: product for failover, else parallel)",
    )
    parser.add_argument("--seed", type=types.seed, default=0, help="seed of the trace")
    parser.add_argument(
        "--jobs", type=types.integer(1, 100_000), default=60, help="slicing: tenant jobs (60)"
    )
    parser.add_argument(
        "--verify",
        type=types.integer(0, 1000),
        default=VERIFY,
        help=f"configurations applied to the emulated switch and verified ({VERIFY}; 0: none)",
    )
    parser.add_argument(
        "--study",
        dest="swept",
        choices=("failover", "slicing", "rails"),
        default="slicing",
        help="sweep: the study swept (slicing)",
    )
    parser.add_argument(
        "--drivers",
        default=",".join(DRIVER_CLASSES),
        help="sweep: the driver classes, comma-separated (all)",
    )
    parser.add_argument(
        "--seeds", type=types.integer(1, 100_000), default=4, help="sweep: seeds a class (4)"
    )
    parser.add_argument(
        "--output",
        type=types.output_folder,
        default=None,
        help="sweep: the Parquet folder of its rows (default rack-sweep.parquet); resumable",
    )
    parser.add_argument(
        "--workers",
        type=types.integer(1, 1024),
        default=None,
        help="sweep: local Dask workers (default: one a core)",
    )
    parser.add_argument(
        "--scheduler",
        type=types.scheduler,
        default=None,
        help="sweep: run on the Dask cluster of this scheduler, e.g. tcp://10.0.0.5:8786",
    )
    parser.add_argument("--plot", type=types.output_file, default=None, help="a PNG of the study")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.set_defaults(run=run)


def check(args: argparse.Namespace) -> None:
    """Refuse options that do not fit, before anything runs."""
    if args.plot is not None and args.plot.suffix.lower() != ".png":
        raise SettingsError(f"--plot writes a PNG; give a file name ending .png, got {args.plot}")
    if args.study == "straggler" and args.driver is not None:
        raise SettingsError(
            "straggler runs on the electrical server of its paper; leave out --driver"
        )
    if args.study != "sweep":
        given = [o for o, v in (("--output", args.output), ("--scheduler", args.scheduler)) if v]
        if given:
            raise SettingsError(f"{', '.join(given)} belong to sweep, not {args.study}")
        return
    drivers = [d.strip() for d in args.drivers.split(",") if d.strip()]
    bad = [d for d in drivers if d not in DRIVER_CLASSES]
    if bad or not drivers:
        raise SettingsError(
            f"--drivers takes classes among {', '.join(DRIVER_CLASSES)}, got {args.drivers!r}"
        )
    args.drivers = drivers


def result(args: argparse.Namespace) -> dict[str, Any]:
    """The study's result, as data."""
    from pswitch.rack import studies, sweep

    driver = args.driver or DEFAULT_DRIVER.get(args.study, "parallel")
    r: dict[str, Any] | None = None
    if args.study == "failover":
        r = studies.failover(driver=driver, seed=args.seed, check=args.verify)
    elif args.study == "slicing":
        r = studies.slicing(args.jobs, args.seed, driver, check=args.verify)
    elif args.study == "rails":
        r = studies.rails(driver=driver, check=args.verify)
    if r is not None:  # the study's figure at every class: where it holds
        r["classes"] = [sweep.point(args.study, d, args.seed, args.jobs) for d in DRIVER_CLASSES]
        return r
    if args.study == "straggler":
        return studies.straggler()
    from pathlib import Path

    folder = args.output or Path("rack-sweep.parquet")
    if args.scheduler is not None:
        from pswitch.yield_study import reach

        reach(args.scheduler)
    rows = sweep.run(
        args.swept, args.drivers, args.seeds, folder, args.workers, args.scheduler, progress_bar()
    )
    return {"study": "sweep", "swept": args.swept, "output": str(folder), "rows": rows}


def run(args: argparse.Namespace) -> int:
    check(args)
    r = result(args)
    if args.plot is not None:
        from pswitch.rack import plots

        plots.write(r, args.plot)
        r["plot"] = str(args.plot)
    if args.json:
        print(json.dumps(r, default=float))
    else:
        from pswitch.rack import report

        print(report.text(r))
    return 0
