"""``pswitch calibrate --bench CONFIG``: self-calibrate the chip on a bench and check it.

Opens every instrument of the bench configuration (VISA sessions: the heater driver, laser,
input switch and power meter), runs the firmware's self-calibration through them (each
heater's I-V read back, then each MZI's fringe on the power meter), writes the calibration file
atomically, locks each output ring on the laser, then applies every matching of an all-to-all
cover with the calibration and measures each circuit's isolation on the meter. Then, and after
an error or Ctrl-C, it leaves the bench safe: laser off, heaters at the configuration's
safe_current_mA (--keep leaves them). Exits 1 when a circuit is below the isolation it needs, a
ring does not lock or an instrument fails; 2 on a bad command line or configuration; 130 on
Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any

from photonics import levels
from pswitch import args as types
from pswitch.progress import progress_bar, within
from pswitch.verification import VERIFY_ISOLATION_DB

if TYPE_CHECKING:  # the bench is imported when the command runs, not with its parser
    from hil.bench_config import BenchConfig

EXAMPLES = """examples:
  pswitch serve --config bench.json &          an emulated bench to try it on
  pswitch calibrate --bench bench.json         writes calibration.json
  pswitch calibrate --bench bench.json -o chip7.json --no-verify
  pswitch calibrate --bench bench.json --json
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``calibrate`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "calibrate",
        help="self-calibrate the chip on a bench and check it on the meter",
        description=types.plain(__doc__),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--bench", required=True, metavar="CONFIG", help="bench configuration (pswitch serve)"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=types.output_file,
        default="calibration.json",
        help="calibration file to write",
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="skip the all-to-all check on the meter"
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="leave the laser on and the heaters as calibrated when done (default: the bench's "
        "safe state, laser off and heaters at the configuration's safe_current_mA, also after "
        "an error or Ctrl-C)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(run=run)


def calibrate(config: BenchConfig, output: str, verify: bool, keep: bool = False) -> dict[str, Any]:
    """Calibrate the bench's chip into ``output`` and check it; the results as data (s, mW,
    dB). The bench is left in its safe state unless ``keep``."""
    import numpy as np

    from firmware.fabric import all_to_all
    from hil.bench import Bench
    from photonics.progress import steps

    with Bench(config, keep=keep) as bench:
        update = progress_bar()
        t0 = time.perf_counter()
        cal = bench.calibrate(output, progress=within("calibrate", update))
        fitted = cal.p_pi_mW if cal.phase_fitted is None else cal.p_pi_mW[cal.phase_fitted]
        result: dict[str, Any] = {
            "bench": {"ports": config.ports, "mesh": config.mesh, "chip_id": config.chip_id},
            "calibration": output,
            "calibrate_s": time.perf_counter() - t0,
            "mzis": int(bench.controller.fabric.n_cells),
            "heaters": int(cal.p_pi_mW.size),
            "phase_fitted": int(fitted.size),
            "p_pi_mW": [float(np.min(fitted)), float(np.median(fitted)), float(np.max(fitted))],
            "rings_locked": [
                bench.lock_ring(r)[0]
                for r in steps("ring locks", range(len(config.ring_channels)), update)
            ],
            "verify_isolation_db": VERIFY_ISOLATION_DB,
            "matchings": [],
        }
        if verify:
            t0 = time.perf_counter()
            cover = all_to_all(bench.controller.fabric, progress=update)
            for m in steps("all-to-all on the meter", cover.matchings, update):
                check = bench.verify(m)
                result["matchings"].append(
                    {
                        "pairs": [list(p) for p in m.pairs],
                        "worst_isolation_db": check.worst_isolation_db,
                    }
                )
            result["verify_s"] = time.perf_counter() - t0
    worst = [m["worst_isolation_db"] for m in result["matchings"]]
    result["worst_isolation_db"] = levels.worst(worst)  # None: not checked, or nothing to leak
    result["verified"] = all(w is None or w >= VERIFY_ISOLATION_DB for w in worst) and all(
        result["rings_locked"]
    )
    return result


def _print(r: dict[str, Any]) -> None:
    b = r["bench"]
    low, mid, high = r["p_pi_mW"]
    print(
        f"calibrated {b['chip_id']} ({b['ports']}-port {b['mesh']}, {r['mzis']} MZIs) in "
        f"{r['calibrate_s']:.1f} s: phase fitted for {r['phase_fitted']} of {r['heaters']} "
        f"heaters (the detectors see no others), P_pi {low:.1f} / {mid:.1f} / {high:.1f} mW "
        f"(min / median / max)"
    )
    if r["rings_locked"]:
        print(f"rings locked on the laser: {sum(r['rings_locked'])} of {len(r['rings_locked'])}")
    print(f"calibration written to {r['calibration']}")
    if r["matchings"]:
        floor = r["verify_isolation_db"]
        bad = [
            m
            for m in r["matchings"]
            if m["worst_isolation_db"] is not None and m["worst_isolation_db"] < floor
        ]
        worst = r["worst_isolation_db"]
        worst = f"n/a: {levels.NO_OTHER_LIGHT}" if worst is None else f"{worst:.1f} dB"
        print(
            f"all-to-all on the meter: {len(r['matchings']) - len(bad)} of "
            f"{len(r['matchings'])} matchings at >= {floor:.0f} dB isolation "
            f"(worst {worst}) in {r['verify_s']:.1f} s"
        )
        for m in bad:
            print(f"  below: {m['pairs']} at {m['worst_isolation_db']:.1f} dB")


def run(args: argparse.Namespace) -> int:
    from hil.bench_config import BenchConfig

    config = BenchConfig.load(args.bench)
    result = calibrate(config, str(args.output), not args.no_verify, args.keep)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0 if result["verified"] else 1
