"""Imperfection-aware programming: how much closer to the target than the ideal decomposition.

For random (Haar unitary, chip) pairs on a 16-port Clements mesh whose couplers have Gaussian
splitting errors (default sigma 2 %), it compares the fidelity of

- the naive settings (ideal decomposition, ignoring the imperfections),
- the local MZI-by-MZI correction (``program(..., max_evaluations=0)``),
- the full programming (local correction + least-squares refinement),

once on a lossless mesh (splitter error alone) and once with 0.5 dB per MZI, whose path-dependent
loss no passive setting can undo. Run::

    python benchmarks/bench_programming.py            # table
    python benchmarks/bench_programming.py --json     # one JSON object
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from scipy.stats import unitary_group

from photonics import ClementsMesh, MZIImperfections

#: Infidelities below this are rounding (the fidelity of a perfectly programmed mesh, computed
#: in float64); an improvement is counted against it at most.
ROUNDING_FLOOR = 1e-14


def run(ports: int, trials: int, sigma: float, loss_db: float, seed: int) -> dict[str, float]:
    mesh = ClementsMesh(ports)
    naive, local, refined, seconds = [], [], [], []
    for trial in range(trials):
        rng = np.random.default_rng(seed + trial)
        U = unitary_group.rvs(ports, random_state=rng)
        chip = MZIImperfections.sample(mesh.n_mzis, rng, splitter_sigma=sigma, loss_db=loss_db)
        t0 = time.perf_counter()
        full = mesh.program(U, chip, max_evaluations=20)
        seconds.append(time.perf_counter() - t0)
        naive.append(1 - full.naive_fidelity)
        refined.append(1 - full.fidelity)
        local.append(1 - mesh.program(U, chip, max_evaluations=0).fidelity)
        print(f"  trial {trial + 1}/{trials}", file=sys.stderr, end="\r", flush=True)
    print(" " * 24, file=sys.stderr, end="\r")  # clear the progress line
    med = {
        k: float(np.median(v))
        for k, v in (("naive", naive), ("local", local), ("refined", refined))
    }
    return {
        "infidelity_naive": med["naive"],
        "infidelity_local": med["local"],
        "infidelity_refined": med["refined"],
        # below ROUNDING_FLOOR an infidelity is the arithmetic's, not the programming's
        "improvement": med["naive"] / max(med["refined"], ROUNDING_FLOOR),
        "at_rounding_floor": med["refined"] <= ROUNDING_FLOOR,
        "program_s": float(np.median(seconds)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", type=int, default=16)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--sigma", type=float, default=0.02, help="coupler error std (0.02 = 2 %%)")
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 8 ports, 2 trials")
    args = parser.parse_args()
    if args.quick:
        args.ports, args.trials = 8, 2
    ClementsMesh(2).decompose(np.eye(2))  # load the compiled kernels before timing
    results = {
        f"loss_{loss}_db": run(args.ports, args.trials, args.sigma, loss, args.seed)
        for loss in (0.0, 0.5)
    }
    if args.json:
        print(json.dumps({"ports": args.ports, "sigma": args.sigma, **results}))
        return 0
    print(
        f"{args.ports}-port Clements mesh, coupler error sigma {args.sigma:.3f}, "
        f"median of {args.trials} random (unitary, chip) pairs"
    )
    print("loss/MZI   1-F naive   1-F local   1-F programmed   improvement   time")
    for key, r in results.items():
        loss = key.split("_")[1]
        floor = ">" if r["at_rounding_floor"] else " "  # at the arithmetic's precision
        print(
            f"{loss:>4} dB  {r['infidelity_naive']:10.2e}  {r['infidelity_local']:10.2e}  "
            f"{r['infidelity_refined']:15.2e}  {floor}{r['improvement']:10.3g}x  "
            f"{r['program_s']:5.2f} s"
        )
    print(f"(>: the programmed infidelity is at rounding, below {ROUNDING_FLOOR:g})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
