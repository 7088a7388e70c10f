"""Thermal crosstalk on both arms of an MZI, calibrated through the detectors."""

import numpy as np

from photonics.calibration.fits import fit_crosstalk_model
from photonics.calibration.selfcal import (
    calibrate_crosstalk,
    calibrate_mesh,
    route_quality,
    self_calibrate,
)
from photonics.chips.chip import Chip, ChipSpec
from photonics.devices.thermal import HeaterLayout, differential_crosstalk


def test_crosstalk_on_both_arms_is_learnt_and_compensated_on_a_dense_mesh() -> None:
    spec = ChipSpec(n_ports=6, seed=2, pitch_x_um=60.0, pitch_y_um=20.0, both_arms=True)
    chip = Chip(spec)
    n = chip.mesh.n_mzis
    true = chip.crosstalk.toarray()[:n, :n]
    assert true.min() < -0.02  # a neighbour beside the other arm: a negative coupling
    rng = np.random.default_rng(5)

    def measure(current: np.ndarray, port: int) -> np.ndarray:
        return chip.detect(current, np.eye(chip.n_ports)[port], rng)

    args = (chip.mesh, measure, chip.heater_voltage, chip.n_heaters, spec.max_current_mA)
    blind = self_calibrate(*args).calibration
    both = self_calibrate(
        *args, positions_um=chip.heater_positions_um, other_arm_um=chip.other_arms_um
    ).calibration
    fitted = both.crosstalk[:n, :n]
    assert np.abs(fitted - true).max() < 0.15 * np.abs(true).max()  # the law, fitted to both arms
    _, iso_blind = route_quality(chip, blind)
    _, iso_both = route_quality(chip, both)
    print(f"dense, both arms: {iso_blind:.1f} dB -> {iso_both:.1f} dB")
    assert iso_both > 19.0 and iso_both > iso_blind + 8


def test_the_law_is_fitted_with_the_cutoff_it_is_applied_with() -> None:
    # the default chip's near pairs are all 120 um apart, their other arms 60 or 180 um away:
    # beyond the 120 um cutoff the fitted law sees nothing at 180 um, in the fit as in use
    chip = Chip(ChipSpec(both_arms=True))
    n = chip.mesh.n_mzis
    true = chip.crosstalk.toarray()[:n, :n]
    pos, other = chip.heater_positions_um[:n], chip.other_arms_um
    distance = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    d_other = np.linalg.norm(other[:, None] - pos[None], axis=-1)
    near = (distance <= 120.0) & ~np.eye(n, dtype=bool)
    assert set(np.unique(d_other[near])) == {60.0, 180.0}
    law = fit_crosstalk_model(distance[near], true[near], 120.0, d_other[near])
    fitted = differential_crosstalk(HeaterLayout(pos, other), law).toarray()
    assert np.abs(fitted - true).max() < 1e-4 * np.abs(true).max() + 1e-9


def test_a_few_pairs_of_each_configuration_fix_the_law() -> None:
    # the default chip's 40 near pairs have two configurations (other arm 60 or 180 um away):
    # three pairs of each give the same law from a sixth of the readings
    chip = Chip(ChipSpec(seed=1))
    n, rng = chip.mesh.n_mzis, np.random.default_rng(5)
    readings = [0]

    def measure(current: np.ndarray, port: int) -> np.ndarray:
        readings[0] += len(current)
        return chip.detect(current, np.eye(chip.n_ports)[port], rng)

    first = calibrate_mesh(chip.mesh, measure, chip.heater_voltage, chip.n_heaters, 10.0)
    true, used, found = chip.crosstalk.toarray()[:n, :n], [], []
    for per_configuration in (None, 3):
        readings[0] = 0
        cal = calibrate_crosstalk(
            chip.mesh,
            measure,
            first.calibration,
            chip.heater_positions_um,
            10.0,
            other_arm_um=chip.other_arms_um,
            pairs_per_configuration=per_configuration,
        )
        used.append(readings[0])
        found.append(np.abs(cal.crosstalk[:n, :n] - true).max())
    assert used[1] < used[0] / 5
    assert max(found) < 0.05 * np.abs(true).max()
