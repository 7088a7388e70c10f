"""``pswitch yield``: what fraction of fabricated chips meets spec, by emulating many of them.

Each chip is drawn from the study's seed and its index, self-calibrated through its own
photodiodes, set to every matching of the all-to-all cover and measured on its detectors; it
passes when every circuit's isolation and insertion loss meet the spec. The chips run as tasks
on Dask: a local cluster of one worker process per core, or an existing cluster (--scheduler,
started with `dask scheduler` and `dask worker ADDRESS`). Rows are written to a Parquet folder
as they arrive; run the same command again to resume a study that stopped: the chips already
there are skipped. Results are identical whatever the number of workers.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from typing import Any

from pswitch import args as types
from pswitch.progress import progress_bar
from pswitch.verification import VERIFY_ISOLATION_DB

#: Default pass criterion on the worst insertion loss of a circuit, dB.
MAX_LOSS_DB = 12.0
#: Most chips one study draws.
MAX_CHIPS = 10_000_000

EXAMPLES = """examples:
  pswitch yield --chips 200 --coupler-sigma 0.02      how many 16-port chips pass at 2 % spread
  pswitch yield --chips 50 --ports 8 --workers 2 --output rows.parquet
  pswitch yield --chips 1000 --scheduler tcp://10.0.0.5:8786   on an existing Dask cluster
  pswitch yield --json                                 the summary as JSON
"""


def spread(high: float, unit: str) -> Callable[[str], float]:
    """An argument type: a number >= 0 and <= ``high`` (in ``unit``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0 <= value <= high:  # NaN fails too
            raise argparse.ArgumentTypeError(
                f"needs a number of {unit} >= 0 and <= {high:g}, got {text!r}"
            )
        return value

    return parse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``yield`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "yield",
        help="fabrication yield: many emulated chips calibrated and measured, on Dask",
        description=types.plain(__doc__),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--chips", type=types.integer(1, MAX_CHIPS), default=100, help="chips (default 100)"
    )
    parser.add_argument(
        "--ports", type=types.integer(4, 32), default=16, help="switch ports, even (default 16)"
    )
    parser.add_argument("--mesh", choices=("clements", "reck"), default="clements", help="the mesh")
    parser.add_argument("--seed", type=types.seed, default=0, help="seed of the study")
    parser.add_argument(
        "--coupler-sigma",
        metavar="SIGMA",
        type=spread(0.5, "splitting ratio"),
        default=0.009,
        help="std of each coupler's splitting error (0.02: 2 %%; default 0.009)",
    )
    parser.add_argument(
        "--heater-spread",
        metavar="SPREAD",
        type=spread(0.5, "P_pi"),
        default=0.05,
        help="relative std of the heaters' efficiency, P_pi (default 0.05)",
    )
    parser.add_argument(
        "--loss-db",
        metavar="DB",
        type=spread(10.0, "dB"),
        default=0.5,
        help="mean insertion loss of an MZI, dB (default 0.5)",
    )
    parser.add_argument(
        "--min-isolation-db",
        metavar="DB",
        type=types.number(100.0, "dB"),
        default=VERIFY_ISOLATION_DB,
        help=f"pass: every circuit's isolation at least this, dB (default {VERIFY_ISOLATION_DB:g})",
    )
    parser.add_argument(
        "--max-loss-db",
        metavar="DB",
        type=types.number(100.0, "dB"),
        default=MAX_LOSS_DB,
        help=f"pass: every circuit's insertion loss at most this, dB (default {MAX_LOSS_DB:g})",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=types.integer(1, 1024),
        default=None,
        help="worker processes of the local Dask cluster (default: one per core)",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run on the Dask cluster of this scheduler, e.g. tcp://10.0.0.5:8786",
    )
    parser.add_argument(
        "--output",
        type=types.output_folder,
        default="pswitch-yield.parquet",
        help="Parquet folder of the rows, one per chip; resumed when it holds this study's "
        "(default pswitch-yield.parquet)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """``pswitch yield``: the study is checked before any file is written or worker started."""
    from photonics.chip_yield import YieldStudy, summarize
    from pswitch.yield_study import prepare, run_study

    study = YieldStudy(
        ports=args.ports,
        mesh=args.mesh,
        chips=args.chips,
        seed=args.seed,
        coupler_sigma=args.coupler_sigma,
        heater_spread=args.heater_spread,
        loss_db=args.loss_db,
        min_isolation_db=args.min_isolation_db,
        max_loss_db=args.max_loss_db,
    )
    before = len(prepare(study, args.output))
    rows = run_study(study, args.output, args.workers, args.scheduler, progress_bar())
    result = summarize(study, rows) | {
        "output": str(args.output),
        "chips_run_now": len(rows) - before,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0


def _print(r: dict[str, Any]) -> None:
    s = r["study"]
    low, high = r["yield_95"]
    print(
        f"Yield of {r['chips']} emulated {s['ports']}-port {s['mesh']} chips (seed {s['seed']}; "
        f"coupler sigma {s['coupler_sigma']:g}, heater spread {s['heater_spread']:g}, "
        f"MZI loss {s['loss_db']:g} dB)"
    )
    print(
        f"  passed {r['passed']} of {r['chips']}: yield {100 * r['yield']:.1f} % "
        f"(95 % interval {100 * low:.1f}-{100 * high:.1f} %) at isolation >= "
        f"{s['min_isolation_db']:g} dB and loss <= {s['max_loss_db']:g} dB"
    )
    if r["calibration_failures"]:
        print(f"  {r['calibration_failures']} chips failed to calibrate (counted as failed)")
    print(f"  {'figure':<26}{'p5':>9}{'p50':>9}{'p95':>9}")
    for name, label in (
        ("worst_isolation_db", "worst isolation (dB)"),
        ("worst_loss_db", "worst loss (dB)"),
        ("worst_excess_loss_db", "worst excess loss (dB)"),
    ):
        p = r["percentiles"][name]
        cells = "".join(f"{'n/a' if p[q] is None else format(p[q], '.2f'):>9}" for q in p)
        print(f"  {label:<26}{cells}")
    if r["sensitivity"]:
        ranking = ", ".join(
            f"{s['drawn']} {s['spearman_vs_worst_isolation']:+.2f}" for s in r["sensitivity"]
        )
        print(f"  worst isolation's rank correlation with what was drawn: {ranking}")
    print(f"  rows: {r['output']} ({r['chips_run_now']} chips run now)")
