"""The emulator across the band, in one geometry, with its crosstalk calibrated by the firmware.

1. The band: the demo's switch (16-port Clements, seed 0) self-calibrates (``CAL:RUN``), then
   applies every matching of its all-to-all schedule; each applied state's worst port
   isolation by the chip's own transfer at 1550 nm beside the worst over 1530-1565 nm (8
   wavelengths, one batched transfer each: couplers, losses and heater phases at each).
2. One geometry: the default 8-port Clements layout (every heater drawn and wired to pads)
   against the default chip model (``ChipSpec(n_ports=8)``): heater count and positions, the
   layout's metal and graph checks; beside them the chip on the plain 300 x 60 um grid the
   default model used before (pitches given), which the layout does not match.
3. Crosstalk through the firmware: a dense 6-port chip (60 x 20 um pitch, seed 2)
   self-calibrated by ``Switch.calibrate()``; worst isolation of 20 random perfect matchings
   with the crosstalk it calibrated compensated, beside the same calibration with its
   crosstalk matrix dropped and beside the firmware without the chip's layout (no crosstalk
   calibrated: CAL:RUN as before).

No public tool emulates these chips, so the comparisons are with the chip's own truth.
``benchmarks/bench_physics.py`` runs these beside the figures in time and prints them.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

import numpy as np

from firmware.fabric import all_to_all
from firmware.sdk import Switch
from photonics.calibration.selfcal import worst_isolation_db
from photonics.devices.dispersion import DESIGN_WAVELENGTH_NM, band
from photonics.matching import Matching

C_BAND = (1530.0, 1565.0, 8)


def _isolation_db(switch: Switch, wavelengths_nm: np.ndarray) -> float:
    """Worst isolation (dB) of the applied matching over ``wavelengths_nm``, by the chip's
    transfer at the currents its DAC puts out."""
    controller = switch.transport.controller
    chip = controller.driver.chip
    current = chip.heaters.quantise(controller.driver.currents())
    P = np.abs(chip.transfer_band(current, wavelengths_nm)) ** 2
    return worst_isolation_db(P, controller.matching.to_permutation())


def band_figures() -> dict[str, float]:
    switch = Switch.emulated(ports=16, seed=0, calibrated=False)
    t0 = time.perf_counter()
    switch.calibrate(save=False)
    calibrate_s = time.perf_counter() - t0
    controller = switch.transport.controller
    grid = band(*C_BAND)
    at_design, over_band = np.inf, np.inf
    for plan in all_to_all(controller.fabric).plans:
        controller.apply_plan(plan)
        at_design = min(at_design, _isolation_db(switch, np.array([DESIGN_WAVELENGTH_NM])))
        over_band = min(over_band, _isolation_db(switch, grid))
    print("  band done", file=sys.stderr)
    return {
        "worst_at_1550_db": at_design,
        "worst_over_band_db": over_band,
        "calibrate_wall_s": calibrate_s,
    }


def layout_figures() -> dict[str, object]:
    from layouts.check import check_layout
    from layouts.meshes import feedforward_layout
    from photonics.chips.chip import Chip, ChipSpec

    chip = Chip(ChipSpec(n_ports=8))
    layout = feedforward_layout(chip.mesh)
    check = check_layout(layout, chip.heater_positions_um)
    grid = check_layout(layout, Chip(ChipSpec(n_ports=8, pitch_x_um=300.0)).heater_positions_um)
    assert check.heaters is not None and grid.heaters is not None
    print("  layout done", file=sys.stderr)
    return {
        "model_heaters": chip.n_heaters,
        "drawn_heaters": check.heaters.drawn,
        "pads": layout.n_pads,
        "column_pitch_um": chip.geometry.column_pitch_um if chip.geometry else None,
        "max_position_error_um": check.heaters.max_error_um,
        "layout_check_ok": check.ok,
        "match": check.heaters.ok,
        "grid_chip_300um": {
            "model_heaters": grid.heaters.expected,
            "drawn_heaters": grid.heaters.drawn,
            "max_position_error_um": grid.heaters.max_error_um,
            "match": grid.heaters.ok,
        },
    }


def _matchings_isolation_db(switch: Switch, trials: int = 20) -> float:
    worst = np.inf
    for trial in range(trials):
        switch.connect(Matching.random(switch.ports, np.random.default_rng(trial)))
        worst = min(worst, _isolation_db(switch, np.array([DESIGN_WAVELENGTH_NM])))
    return worst


def dense_figures() -> dict[str, float]:
    # the firmware without the chip's heater layout: CAL:RUN as it was, no crosstalk
    blind = Switch.emulated(ports=6, seed=2, pitch_um=(60.0, 20.0), calibrated=False)
    blind.transport.controller.heater_layout = None
    blind.calibrate(save=False)
    before = _matchings_isolation_db(blind)
    switch = Switch.emulated(ports=6, seed=2, pitch_um=(60.0, 20.0), calibrated=False)
    t0 = time.perf_counter()
    switch.calibrate(save=False)
    calibrate_s = time.perf_counter() - t0
    controller = switch.transport.controller
    with_crosstalk = controller.calibration
    after = _matchings_isolation_db(switch)
    controller.use_calibration(replace(with_crosstalk, crosstalk=None), stored=False)
    without = _matchings_isolation_db(switch)
    print("  dense chip done", file=sys.stderr)
    return {
        "isolation_no_layout_db": before,
        "isolation_without_crosstalk_db": without,
        "isolation_after_calibrate_db": after,
        "calibrate_wall_s": calibrate_s,
    }


def figures() -> dict[str, object]:
    """The band, layout and dense-chip figures, the issue's three keys first."""
    band_result = band_figures()
    layout = layout_figures()
    dense = dense_figures()
    return {
        "isolation_band_worst_db": band_result["worst_over_band_db"],
        "layout_heaters_match": layout["match"],
        "dense_chip_isolation_db_sdk": dense["isolation_after_calibrate_db"],
        "band": band_result,
        "layout": layout,
        "dense": dense,
    }


def print_tables(summary: dict) -> None:
    band_result, layout, dense = summary["band"], summary["layout"], summary["dense"]
    print("1. demo switch (16-port Clements), all-to-all matchings after CAL:RUN")
    print(f"   {'':28}{'1550 nm':>12}{'1530-1565 nm':>16}")
    print(
        f"   {'worst isolation, dB':28}{band_result['worst_at_1550_db']:12.1f}"
        f"{band_result['worst_over_band_db']:16.1f}"
    )
    old = layout["grid_chip_300um"]
    print("2. layout against model (8-port Clements), heaters")
    print(f"   {'':28}{'model':>12}{'layout':>16}{'match':>8}")
    print(
        f"   {'default chip, default layout':28}{layout['model_heaters']:12d}"
        f"{layout['drawn_heaters']:16d}{layout['match']!s:>8}"
    )
    print(
        f"   {'300 x 60 um grid chip':28}{old['model_heaters']:12d}"
        f"{old['drawn_heaters']:16d}{old['match']!s:>8}"
    )
    print("3. dense 6-port chip (60 x 20 um), after Switch.calibrate()")
    print(f"   {'':28}{'no layout':>12}{'K dropped':>12}{'crosstalk cal.':>16}")
    print(
        f"   {'worst isolation, dB':28}{dense['isolation_no_layout_db']:12.1f}"
        f"{dense['isolation_without_crosstalk_db']:12.1f}"
        f"{dense['isolation_after_calibrate_db']:16.1f}"
    )
