"""The ``pswitch`` command line.

``pswitch demo`` routes a random matching on an imperfect Clements mesh, simulates the light, and
programs a Haar-random unitary with and without knowledge of the imperfections.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import unitary_group

from photonics import ClementsMesh, Matching, MZIImperfections, PswitchError
from photonics.mzi import DEFAULT_LOSS_DB, DEFAULT_SPLITTER_SIGMA

EXAMPLES = """examples:
  pswitch demo                 16-port Clements mesh, default imperfections
  pswitch demo --ports 32 --seed 7
  pswitch demo --json          machine-readable results
  pswitch serve                the emulated bench on loopback; writes bench.json
  pswitch serve --ports 4 --config /tmp/bench.json
"""


def _db(x: np.ndarray | float) -> np.ndarray:
    return 10 * np.log10(np.maximum(x, 1e-30))


def run_demo(ports: int, seed: int, splitter_sigma: float, loss_db: float) -> dict[str, Any]:
    """Route, simulate and program an imperfect Clements mesh; return the results as data.

    Each used input carries 1 mW (0 dBm); powers in dBm, crosstalk in dB relative to the signal.
    """
    rng = np.random.default_rng(seed)
    mesh = ClementsMesh(ports)
    imp = MZIImperfections.sample(mesh.n_mzis, rng, splitter_sigma, loss_db)

    matching = Matching.random(ports, rng)
    ClementsMesh(2).route(Matching([(0, 1)], 2))  # load the compiled kernels before timing
    t0 = time.perf_counter()
    settings = mesh.route(matching)
    route_s = time.perf_counter() - t0
    power = np.abs(mesh.transfer(settings, imp)) ** 2  # mW out per mW in, [out, in]
    perm = matching.to_permutation()
    lit = [i for i, _ in perm.pairs()]
    outputs = []
    for i, j in perm.pairs():
        leak = power[j, lit].sum() - power[j, i]
        outputs.append(
            {
                "output": j,
                "from_input": i,
                "power_dbm": float(_db(power[j, i])),
                "crosstalk_db": float(_db(leak) - _db(power[j, i])),
            }
        )
    outputs.sort(key=lambda o: o["output"])

    U = unitary_group.rvs(ports, random_state=rng)
    t0 = time.perf_counter()
    programmed = mesh.program(U, imp)
    program_s = time.perf_counter() - t0
    return {
        "ports": ports,
        "seed": seed,
        "mzis": mesh.n_mzis,
        "splitter_sigma": splitter_sigma,
        "loss_db_per_mzi": loss_db,
        "matching": [list(p) for p in matching.pairs],
        "route_s": route_s,
        "outputs": outputs,
        "worst_crosstalk_db": max(o["crosstalk_db"] for o in outputs),
        "power_spread_db": max(o["power_dbm"] for o in outputs)
        - min(o["power_dbm"] for o in outputs),
        "unitary_fidelity_naive": programmed.naive_fidelity,
        "unitary_fidelity_programmed": programmed.fidelity,
        "program_s": program_s,
    }


def _print_demo(r: dict[str, Any]) -> None:
    print(
        f"Clements mesh, {r['ports']} ports, {r['mzis']} MZIs; each MZI {r['loss_db_per_mzi']} dB "
        f"loss, coupler error sigma {r['splitter_sigma']:.3f} (seed {r['seed']})"
    )
    print(f"\n1. Route a random matching ({r['route_s'] * 1e3:.2f} ms, bar/cross only)")
    print("   out <- in   power (dBm)   crosstalk (dB)")
    for o in r["outputs"]:
        print(
            f"   {o['output']:3d} <- {o['from_input']:<3d} {o['power_dbm']:10.2f} "
            f"{o['crosstalk_db']:14.1f}"
        )
    print(
        f"   worst crosstalk {r['worst_crosstalk_db']:.1f} dB, "
        f"output power spread {r['power_spread_db']:.2f} dB (0 dBm per input)"
    )
    print(f"\n2. Program a Haar-random {r['ports']}x{r['ports']} unitary")
    print(f"   fidelity, ideal decomposition:        {r['unitary_fidelity_naive']:.6f}")
    print(
        f"   fidelity, imperfection-aware program: {r['unitary_fidelity_programmed']:.6f} "
        f"({r['program_s']:.2f} s)"
    )


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
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="route, simulate and program an imperfect mesh",
        description=run_demo.__doc__,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("--ports", type=_positive_int, default=16, help="mesh size (default 16)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the chip and requests")
    demo.add_argument(
        "--splitter-sigma",
        type=float,
        default=DEFAULT_SPLITTER_SIGMA,
        help=f"std of each coupler's splitting error (default {DEFAULT_SPLITTER_SIGMA})",
    )
    demo.add_argument(
        "--loss-db",
        type=float,
        default=DEFAULT_LOSS_DB,
        help=f"insertion loss per MZI, dB (default {DEFAULT_LOSS_DB})",
    )
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
        epilog=EXAMPLES,
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
            result = run_demo(args.ports, args.seed, args.splitter_sigma, args.loss_db)
            if args.json:
                print(json.dumps(result, indent=2))
            else:
                _print_demo(result)
        elif args.command == "serve":
            serve(args.ports, args.seed, args.host, args.config, args.seconds)
    except PswitchError as exc:
        print(f"pswitch {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
