"""``pswitch yield``: what fraction of fabricated chips meets spec, by emulating many of them.

Each chip is drawn from the study's seed and its index, self-calibrated through its own
photodiodes, set to every matching of the workload (the all-to-all cover, or a training job's
ring or torus over every port) and measured on its detectors; it passes when every circuit's
isolation and insertion loss and every matching's heater power meet the spec. A sweep (--sweep,
once or twice) runs the study at every point of a grid of its numbers. The chips run as tasks
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

from photonics.errors import SettingsError
from photonics.fabrication.study import ALL_TO_ALL, MESHES, SWEEPABLE, YieldStudy
from pswitch import args as types
from pswitch.progress import progress_bar
from pswitch.verification import VERIFY_ISOLATION_DB

#: Default pass criterion on the worst insertion loss of a circuit, dB.
MAX_LOSS_DB = 12.0
#: The study's numbers that are pass criteria.
SPEC = {"min_isolation_db", "max_loss_db", "max_power_mW"}
#: Most chips one study draws.
MAX_CHIPS = 10_000_000
#: The workloads: the all-to-all cover, a training job's ring or torus over every port.
WORKLOADS = (ALL_TO_ALL, "ring", "torus")

EXAMPLES = """examples:
  pswitch yield --chips 200 --coupler-sigma 0.02      how many 16-port chips pass at 2 % spread
  pswitch yield --chips 50 --ports 8 --workers 2 --output rows.parquet
  pswitch yield --chips 1000 --scheduler tcp://10.0.0.5:8786   on an existing Dask cluster
  pswitch yield --chips 40 --sweep coupler_sigma=0.005,0.01,0.02 --sweep pitch_y_um=20,60
                --output sweep.parquet --plot sweep.png   a grid of 6 points, 40 chips each
  pswitch yield --workload torus --max-power-mw 3000   a training job's circuits, a power cap
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


def sweep_axis(text: str) -> tuple[str, list[float]]:
    """An argument type: ``NAME=V1,V2,...``, a study number and its values."""
    name, _, values = text.partition("=")
    name = name.strip().replace("-", "_")
    try:
        numbers = [float(v) for v in values.split(",")]
    except ValueError:
        numbers = []
    if name not in SWEEPABLE or not numbers or not all(map(math.isfinite, numbers)):
        raise argparse.ArgumentTypeError(
            f"needs NAME=V1,V2,... with NAME one of {', '.join(SWEEPABLE)} and numbers, "
            f"got {text!r}"
        )
    return name, numbers


def workload_matchings(name: str, ports: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The matchings of a workload of :data:`WORKLOADS` on ``ports`` ports, as pairs: none for
    the all-to-all cover (the study's default), else a training job's (:mod:`firmware.fabric.
    jobs`) over every port: a ring in port order, or a torus of rows x columns, as square as
    ``ports`` allows."""
    from firmware.fabric.jobs import Job, job_matchings

    if name == ALL_TO_ALL:
        return ()
    shape: tuple[int, ...] = ()
    if name == "torus":
        rows = max(r for r in range(1, math.isqrt(ports) + 1) if ports % r == 0)
        shape = (rows, ports // rows)
    job = Job(name, name, tuple(range(ports)), shape=shape)  # type: ignore[arg-type]
    return tuple(m.pairs for m in job_matchings(job, ports))


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
    parser.add_argument(
        "--mesh",
        choices=MESHES,
        default="clements",
        help="the design: a feed-forward mesh, or the hexagonal recirculating switch",
    )
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
        "--pitch-x-um",
        metavar="UM",
        type=types.number(10_000.0, "um"),
        default=None,
        help="distance of the MZI columns, um, on a plain grid (default: the heaters where the "
        "wired layout draws them, e.g. 820 x 60 um at 16 ports); closer: more thermal crosstalk",
    )
    parser.add_argument(
        "--pitch-y-um",
        metavar="UM",
        type=types.number(10_000.0, "um"),
        default=None,
        help="distance of the waveguides, um, on a plain grid (default: as the layout draws "
        "them, 60 um; with only --pitch-x-um given, 60 um)",
    )
    parser.add_argument(
        "--output-rings",
        action="store_true",
        help="an add-drop ring before each photodiode, locked to the laser on each chip",
    )
    parser.add_argument(
        "--ring-sigma-nm",
        metavar="NM",
        type=spread(10.0, "nm"),
        default=0.3,
        help="std of each ring's resonance offset from its design, nm (default 0.3; with "
        "--output-rings)",
    )
    parser.add_argument(
        "--workload",
        choices=WORKLOADS,
        default=ALL_TO_ALL,
        help="the matchings each chip routes and is measured in: the all-to-all cover "
        "(default), or a training job's ring or torus over every port",
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
    parser.add_argument(
        "--max-power-mw",
        metavar="MW",
        type=types.number(1e6, "mW"),
        default=YieldStudy.max_power_mW,
        help=f"pass: no matching's heaters draw more than this in all, mW (default "
        f"{YieldStudy.max_power_mW:g}; a 16-port Clements chip draws about 2.8 W)",
    )
    parser.add_argument(
        "--sweep",
        metavar="NAME=V1,V2,...",
        type=sweep_axis,
        action="append",
        default=[],
        help=f"run the study at each value of NAME (once or twice: a grid), --chips chips at "
        f"each point; NAME one of {', '.join(SWEEPABLE)}",
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
        type=types.scheduler,
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
    parser.add_argument(
        "--plot",
        type=types.output_file,
        default=None,
        help="write the figure to this PNG: yield against the swept numbers, the worst "
        "isolation's distribution with the spec, what moves the yield",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """``pswitch yield``: the study is checked before any file is written or worker started."""
    from photonics.fabrication.study import YieldStudy
    from photonics.fabrication.yield_stats import summarize, summarize_sweep, sweep_points
    from pswitch.yield_plots import write_plot
    from pswitch.yield_study import prepare, prepare_sweep, reach, run_study, run_sweep

    if args.plot is not None and args.plot.suffix.lower() != ".png":
        raise SettingsError(f"--plot writes a PNG; give a file name ending .png, got {args.plot}")
    study = YieldStudy(
        ports=args.ports,
        mesh=args.mesh,
        chips=args.chips,
        seed=args.seed,
        coupler_sigma=args.coupler_sigma,
        heater_spread=args.heater_spread,
        loss_db=args.loss_db,
        pitch_x_um=args.pitch_x_um,
        pitch_y_um=args.pitch_y_um,
        output_rings=args.output_rings,
        ring_sigma_nm=args.ring_sigma_nm,
        min_isolation_db=args.min_isolation_db,
        max_loss_db=args.max_loss_db,
        max_power_mW=args.max_power_mw,
        workload=args.workload,
        matchings=workload_matchings(args.workload, args.ports),
    )
    axes = args.sweep
    if axes:
        sweep_points(study, axes)  # every point checked before a folder is made
    if args.scheduler is not None:
        reach(args.scheduler)  # before a folder is made, too
    if axes:
        before = sum(len(prepare(s, f)) for s, f in prepare_sweep(study, axes, args.output))
        points, rows = run_sweep(
            study, axes, args.output, args.workers, args.scheduler, progress_bar()
        )
        result = summarize_sweep(points, rows, axes)
    else:
        before = len(prepare(study, args.output))
        rows = [run_study(study, args.output, args.workers, args.scheduler, progress_bar())]
        result = summarize(study, rows[0])
    result |= {"output": str(args.output), "chips_run_now": sum(map(len, rows)) - before}
    if args.plot is not None:
        write_plot(result, rows, args.plot)
        result["plot"] = str(args.plot)
    if args.json:
        print(json.dumps(result, indent=2))
    elif axes:
        _print_sweep(result)
    else:
        _print(result)
    return 0


def _spec(s: dict[str, Any]) -> str:
    return (
        f"isolation >= {s['min_isolation_db']:g} dB, loss <= {s['max_loss_db']:g} dB, "
        f"heater power <= {s['max_power_mW']:g} mW"
    )


def _design(s: dict[str, Any], swept: tuple[str, ...] = ()) -> str:
    """The design and fabrication of study ``s`` in words, the ``swept`` numbers as such."""

    def value(name: str, unit: str = "") -> str:
        return "swept" if name in swept else f"{s[name]:g}{unit}"

    def layout() -> str:
        if s["mesh"] == "hexagonal":
            return "cells on the honeycomb of the hexagonal switch"
        if s["pitch_x_um"] is None and not set(swept) & {"pitch_x_um", "pitch_y_um"}:
            pitch = "pitch as the layout draws it"
        else:
            pitch = f"pitch {value('pitch_x_um')} x {value('pitch_y_um', ' um')}"
        if s["output_rings"]:
            pitch += f", output rings off by {value('ring_sigma_nm', ' nm')} (std)"
        return pitch

    return (
        f"{s['ports']}-port {s['mesh']} chips (seed {s['seed']}; coupler sigma "
        f"{value('coupler_sigma')}, heater spread {value('heater_spread')}, MZI loss "
        f"{value('loss_db', ' dB')}, {layout()}; workload {s['workload']})"
    )


def _print_sweep(r: dict[str, Any]) -> None:
    first = r["points"][0]
    names = [name for name, _ in r["sweep"]]
    print(
        f"Yield sweep over {' x '.join(names)}: {first['chips']} emulated "
        f"{_design(first['study'], tuple(names))} at each point"
    )
    print(f"  pass: {_spec(first['study'])}" + (" (swept)" if set(names) & SPEC else ""))
    head = "".join(f"{name:>18}" for name in names)
    print(f"  {head}{'passed':>10}{'yield':>9}{'95 % interval':>16}{'p50 iso dB':>12}{'p50 mW':>9}")
    for p in r["points"]:
        cells = "".join(f"{p['point'][name]:>18g}" for name in names)
        low, high = p["yield_95"]
        iso = p["percentiles"]["worst_isolation_db"]["p50"]
        power = p["percentiles"]["worst_power_mW"]["p50"]
        print(
            f"  {cells}{p['passed']:>5} / {p['chips']:<3}{100 * p['yield']:>7.1f} %"
            f"{f'{100 * low:.1f}-{100 * high:.1f} %':>16}"
            f"{'n/a' if iso is None else format(iso, '.2f'):>12}"
            f"{'n/a' if power is None else format(power, '.0f'):>9}"
        )
    ranking = ", ".join(
        f"{e['parameter']} {100 * e['yield_spread']:.0f} points" for e in r["parameter_effects"]
    )
    print(f"  what moves the yield (its spread over the swept values): {ranking}")
    _print_tail(r)


def _print(r: dict[str, Any]) -> None:
    s = r["study"]
    low, high = r["yield_95"]
    print(f"Yield of {r['chips']} emulated {_design(s)}")
    print(
        f"  passed {r['passed']} of {r['chips']}: yield {100 * r['yield']:.1f} % "
        f"(95 % interval {100 * low:.1f}-{100 * high:.1f} %) at {_spec(s)}"
    )
    if r["calibration_failures"]:
        print(f"  {r['calibration_failures']} chips failed to calibrate (counted as failed)")
    print(f"  {'figure':<26}{'p5':>9}{'p50':>9}{'p95':>9}")
    for name, label in (
        ("worst_isolation_db", "worst isolation (dB)"),
        ("worst_loss_db", "worst loss (dB)"),
        ("worst_excess_loss_db", "worst excess loss (dB)"),
        ("worst_power_mW", "worst heater power (mW)"),
    ):
        p = r["percentiles"][name]
        cells = "".join(f"{'n/a' if p[q] is None else format(p[q], '.2f'):>9}" for q in p)
        print(f"  {label:<26}{cells}")
    _print_tail(r)


def _print_tail(r: dict[str, Any]) -> None:
    if r["sensitivity"]:
        print("  what was drawn, by its rank correlation with worst isolation:")
        for s in r["sensitivity"]:
            high = "n/a" if s["yield_high_half"] is None else f"{100 * s['yield_high_half']:.0f} %"
            print(
                f"    {s['drawn']:<24}{s['spearman_vs_worst_isolation']:+.2f}   yield "
                f"{100 * s['yield_low_half']:.0f} % at or below its median, {high} above"
            )
    if "plot" in r:
        print(f"  figure: {r['plot']}")
    print(f"  rows: {r['output']} ({r['chips_run_now']} chips run now)")
