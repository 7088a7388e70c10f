from dataclasses import replace

import numpy as np
import pytest

from photonics import SettingsError
from photonics.calibration.hex_leaks import (
    cancel_measured,
    chip_model,
    fit_leaks,
    shared_cells,
)
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.devices.mzi import state_extinction_db
from photonics.recirculating.covers import all_to_all_cover
from photonics.recirculating.leak_cancel import CellModel, Circuits
from photonics.recirculating.mesh_scattering import link_transmission
from photonics.recirculating.routing import Router
from photonics.recirculating.switch_geometry import hexagonal_switch

MESH, ENDS = hexagonal_switch(8)
COVER = all_to_all_cover(Router(MESH), ENDS)
NOISE = 1e-6


def true_chip(seed: int) -> CellModel:
    chip = MeshChip(MESH, ENDS, MeshChipSpec(seed=seed, splitter_sigma=0.02, loss_sigma_db=0.0))
    g = link_transmission(MESH.unit_length_um, 1550.0, chip.spec.waveguide_loss_db_per_cm)
    return CellModel(MESH, tuple(ENDS), chip.imperfections, g)


def reader(truth: CellModel, seed: int):
    rng = np.random.default_rng(seed)
    count = [0]

    def measure(theta: np.ndarray) -> np.ndarray:
        count[0] += 2 * len(COVER.results[0].paths)  # every endpoint lit in turn
        P = np.abs(truth.transfer(theta)) ** 2
        return P + rng.normal(0, NOISE, P.shape)

    return measure, count


def calibrated(truth: CellModel) -> CellModel:
    """What a calibration knows of ``truth``: each cell's extinction per state."""
    imp = truth.imperfections
    ext = state_extinction_db(imp.splitter_error_in, imp.splitter_error_out)
    return chip_model(MESH, ENDS, ext, 0.5, truth.link)


def test_the_fit_finds_the_angle_errors_the_calibration_left() -> None:
    truth = true_chip(1)
    result = sorted(COVER.results, key=lambda r: r.isolation_db)[0]
    cells = shared_cells(result)
    errors = np.zeros(MESH.n_cells)
    errors[cells] = np.random.default_rng(0).normal(0, 0.02, cells.size)
    measure, count = reader(replace(truth, angle_error=errors), 0)
    fit = fit_leaks(calibrated(truth), result, measure, NOISE)
    found = np.broadcast_to(fit.model.angle_error, (MESH.n_cells,))[cells]
    assert np.abs(found - errors[cells]).max() < 0.005
    assert fit.readings == count[0] == (2 * cells.size + 1) * 2 * len(result.paths)
    assert fit.misfit_after < fit.misfit_before


def test_cancelling_on_the_chip_never_leaves_a_matching_worse_and_lifts_most() -> None:
    truth = true_chip(3)
    gains = []
    for result in sorted(COVER.results, key=lambda r: r.isolation_db)[:3]:
        measure, count = reader(truth, 1)
        done = cancel_measured(calibrated(truth), result, measure, NOISE, loops=2)
        circuits = Circuits.of_matching(result, ENDS)
        plain = circuits.isolation_db(np.abs(truth.transfer(result.theta())) ** 2)
        kept = circuits.isolation_db(np.abs(truth.transfer(result.theta() + done.trims)) ** 2)
        assert kept >= plain - 0.05  # what measured best is kept (the readings' noise aside)
        assert done.after_db == pytest.approx(kept, abs=0.05)
        assert done.readings == count[0]
        gains.append(done.gain_db)
    assert max(gains) > 1.0


def test_bad_fits_are_refused() -> None:
    truth = true_chip(0)
    measure, _ = reader(truth, 0)
    with pytest.raises(SettingsError, match="dither_rad"):
        fit_leaks(calibrated(truth), COVER.results[0], measure, NOISE, dither_rad=0.5)
    with pytest.raises(SettingsError, match="extinction_db"):
        chip_model(MESH, ENDS, np.zeros((3, 2)), 0.5, truth.link)
