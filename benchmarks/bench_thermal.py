"""The electro-thermal layer's figures: self-calibration, crosstalk compensation, ring locking.

1. Self-calibration of the default seeded 8-port Clements chip through its own photodiodes,
   its thermal crosstalk included as ``CAL:RUN`` does it (measured wall time), then 20 random
   permutations routed with the calibration and with the heaters as designed (nominal P_pi, no
   bias): worst routed-power error against the loss-only power, worst port isolation. The
   same for a few more seeds, beside the isolation that perfect knowledge of the chip would
   give, since the couplers' finite extinction bounds it.
2. A dense 6-port mesh (60 x 20 um pitch): routing before and after crosstalk calibration and
   compensation.
3. The firmware's ring lock (``RING:LOCK``) on the emulated 8-port chip's output rings: lock
   time (modeled hardware s) and residual error (the chip's true resonance minus the laser, as
   a fraction of the ring's FWHM) after locking, and after the chip warms by 1 K and the mesh
   is reconfigured (its heaters' crosstalk moves the rings), which the firmware tracks.

No public tool self-calibrates an emulated chip, so the comparison is with the chip's own truth.
Run::

    python benchmarks/bench_thermal.py          # tables
    python benchmarks/bench_thermal.py --json   # one JSON object
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

import numpy as np

from firmware.sdk import Switch
from photonics.calibration.selfcal import route_quality, self_calibrate
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM, Chip, ChipSpec
from photonics.matching import Matching


def _measure(chip: Chip, seed: int):
    rng = np.random.default_rng(seed)
    return lambda current, port: chip.detect(current, np.eye(chip.n_ports)[port], rng)


def calibration_figures(seeds: list[int]) -> dict[str, object]:
    rows = []
    for seed in seeds:
        chip = Chip(ChipSpec(n_ports=8, mesh="clements", seed=seed))
        t0 = time.perf_counter()
        found = self_calibrate(  # with the layout, as CAL:RUN: its crosstalk matters
            chip.mesh,
            _measure(chip, seed),
            chip.heater_voltage,
            chip.n_heaters,
            10.0,
            positions_um=chip.heater_positions_um,
            other_arm_um=chip.other_arms_um,
        )
        wall = time.perf_counter() - t0
        cal = found.calibration
        H = chip.n_heaters
        nominal = replace(cal, p_pi_mW=np.full(H, chip.spec.p_pi_mW), bias_rad=np.zeros(H))
        truth = replace(cal, p_pi_mW=chip.heaters.p_pi_mW, bias_rad=chip.heaters.bias_rad)
        err, iso = route_quality(chip, cal)
        err_u, iso_u = route_quality(chip, nominal)
        _, iso_t = route_quality(chip, truth)
        rows.append(
            {
                "seed": seed,
                "wall_s": wall,
                "readings": found.measurements,
                "err_db": err,
                "iso_db": iso,
                "uncal_err_db": err_u,
                "uncal_iso_db": iso_u,
                "truth_iso_db": iso_t,
            }
        )
        print(f"  calibrated seed {seed}", file=sys.stderr)
    return {"rows": rows}


def crosstalk_figures() -> dict[str, float]:
    spec = ChipSpec(n_ports=6, seed=2, pitch_x_um=60.0, pitch_y_um=20.0)
    chip = Chip(spec)
    args = (chip.mesh, _measure(chip, 2), chip.heater_voltage, chip.n_heaters, 10.0)
    before = self_calibrate(*args).calibration
    after = self_calibrate(
        *args, positions_um=chip.heater_positions_um, other_arm_um=chip.other_arms_um
    ).calibration
    err_b, iso_b = route_quality(chip, before)
    err_a, iso_a = route_quality(chip, after)
    return {
        "err_before_db": err_b,
        "iso_before_db": iso_b,
        "err_after_db": err_a,
        "iso_after_db": iso_a,
    }


def _ring_errors_fwhm(switch: Switch) -> np.ndarray:
    """Each output ring's true detuning from the laser, as a fraction of its FWHM."""
    driver = switch.transport.controller.driver
    chip = driver.chip
    shift = chip.ring_shift_nm(driver.currents(), driver.delta_T_K)
    ring = chip.spec.ring
    return np.abs(ring.detuning_nm(REFERENCE_WAVELENGTH_NM, shift)) / ring.fwhm_nm()


def ring_figures(seeds: int = 4) -> dict[str, dict[str, float]]:
    """Worst lock time and residual of the firmware's lock over ``seeds`` chips: every ring
    locked in turn, then the chip 1 K warmer and a perfect matching applied (tracking)."""
    lock_s, locked_err, tracked_err, locked = [], [], [], True
    for seed in range(seeds):
        switch = Switch.emulated(ports=8, seed=seed, rings=True)
        lock_s += [switch.lock_ring(r) for r in range(8)]
        locked_err.append(_ring_errors_fwhm(switch).max())
        switch.transport.controller.driver.delta_T_K = 1.0
        switch.connect(Matching([(0, 5), (1, 4), (2, 7), (3, 6)], 8))
        tracked_err.append(_ring_errors_fwhm(switch).max())
        locked &= all(switch.ring_status(r)[0] for r in range(8))
    return {
        "sweep_fit": {
            "lock_time_s": max(lock_s),
            "residual_fwhm": max(tracked_err),
            "residual_after_lock_fwhm": max(locked_err),
            "locked": locked,
        }
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="a smoke run: one seed")
    args = parser.parse_args()
    if args.quick:
        args.seeds = args.seeds[:1]
    cal = calibration_figures(args.seeds)
    xt = crosstalk_figures()
    rings = ring_figures()
    main_row = cal["rows"][0]
    summary = {
        "calibrated_worst_isolation_db": main_row["iso_db"],
        "uncalibrated_worst_isolation_db": main_row["uncal_iso_db"],
        "calibrated_max_power_error_db": main_row["err_db"],
        "uncalibrated_max_power_error_db": main_row["uncal_err_db"],
        "calibration_wall_s": main_row["wall_s"],
        "ring_lock_time_s": max(r["lock_time_s"] for r in rings.values()),
        "ring_residual_fwhm_fraction": max(r["residual_fwhm"] for r in rings.values()),
        "crosstalk": xt,
        "seeds": cal["rows"],
        "rings": rings,
    }
    if args.json:
        print(json.dumps(summary))
        return 0
    print("1. Self-calibration, 8-port Clements chip, 20 random permutations per seed")
    print(
        "seed  wall (s)  readings  power err (dB)  isolation (dB)  | designed heaters:"
        " err / iso (dB) | perfect knowledge iso (dB)"
    )
    for r in cal["rows"]:
        print(
            f"{r['seed']:4d}  {r['wall_s']:8.2f}  {r['readings']:8d}  {r['err_db']:14.3f}  "
            f"{r['iso_db']:14.1f}  | {r['uncal_err_db']:16.1f} / {r['uncal_iso_db']:5.1f} "
            f"| {r['truth_iso_db']:10.1f}"
        )
    print("\n2. Dense 6-port mesh (60 x 20 um): routing without / with crosstalk compensation")
    print(
        f"   power error {xt['err_before_db']:.2f} dB -> {xt['err_after_db']:.2f} dB, "
        f"isolation {xt['iso_before_db']:.1f} dB -> {xt['iso_after_db']:.1f} dB"
    )
    print(
        "\n3. Ring lock of the firmware (modeled hardware time; residual = max |resonance - "
        "laser| / FWHM)"
    )
    for name, r in rings.items():
        print(
            f"   {name:10s} lock {r['lock_time_s'] * 1e3:8.1f} ms   residual after lock "
            f"{r['residual_after_lock_fwhm']:.4f}, after +1 K and a reconfiguration "
            f"{r['residual_fwhm']:.4f} of the FWHM"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
