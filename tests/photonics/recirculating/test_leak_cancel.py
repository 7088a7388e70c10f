import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from photonics import SettingsError
from photonics.calibration.selfcal import CellDrive
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.recirculating.covers import all_to_all_cover
from photonics.recirculating.leak_cancel import (
    CellModel,
    Circuits,
    cancel_leaks,
    isolation_gradient,
)
from photonics.recirculating.mesh_scattering import link_transmission
from photonics.recirculating.routing import Router, RouteResult
from photonics.recirculating.switch_geometry import hexagonal_switch
from tests.strategies import seeds

MESH, ENDS = hexagonal_switch(8)


def chip_and_model(seed: int, sigma: float = 0.02) -> tuple[MeshChip, CellModel, CellDrive]:
    """A chip of leaky couplers, the model of its true couplers, and its true drive."""
    chip = MeshChip(MESH, ENDS, MeshChipSpec(seed=seed, splitter_sigma=sigma, loss_sigma_db=0.0))
    g = link_transmission(MESH.unit_length_um, 1550.0, chip.spec.waveguide_loss_db_per_cm)
    model = CellModel(MESH, tuple(ENDS), chip.imperfections, g)
    return chip, model, CellDrive.of(chip.factory_calibration(), chip.n_cells)


def chip_powers(chip: MeshChip, drive: CellDrive, theta: np.ndarray) -> np.ndarray:
    current = np.zeros(chip.n_heaters)
    current[: chip.n_cells] = drive.currents(theta)
    return np.abs(chip.transfer(current)) ** 2


COVER = all_to_all_cover(Router(MESH), ENDS)


@settings(max_examples=5, deadline=None)
@given(seeds, st.floats(-0.3, 0.3))
def test_the_model_of_a_chips_true_couplers_is_the_chip_at_any_angles(seed, trim) -> None:
    # one heater a cell: 2 pi more heater phase (the drive's wrap) leaves the cell as it was
    chip, model, drive = chip_and_model(seed)
    theta = COVER.results[seed % COVER.size].theta() + trim * np.sin(np.arange(MESH.n_cells))
    P = chip_powers(chip, drive, theta)
    np.testing.assert_allclose(np.abs(model.transfer(theta)) ** 2, P, atol=1e-12)


@settings(max_examples=5, deadline=None)
@given(seeds)
def test_the_adjoint_gradient_is_the_objectives_derivative(seed) -> None:
    _, model, _ = chip_and_model(seed)
    result = COVER.results[seed % COVER.size]
    circuits = Circuits.of_matching(result, ENDS)
    theta = result.theta() + 0.05 * np.cos(np.arange(MESH.n_cells))
    _, grad, _ = isolation_gradient(model, theta, circuits)
    for c in np.random.default_rng(seed).choice(MESH.n_cells, 4, replace=False):
        step = np.zeros(MESH.n_cells)
        step[c] = 1e-6
        up = isolation_gradient(model, theta + step, circuits)[0]
        down = isolation_gradient(model, theta - step, circuits)[0]
        assert grad[c] == pytest.approx((up - down) / 2e-6, rel=1e-3, abs=1e-6)


def test_trims_found_on_a_true_model_lift_the_chips_isolation() -> None:
    chip, model, drive = chip_and_model(3)
    gains = []
    worst = sorted(COVER.results, key=lambda r: r.isolation_db)[:3]
    for result in worst:
        circuits = Circuits.of_matching(result, ENDS)
        found = cancel_leaks(model, result, max_iterations=60)
        before = circuits.isolation_db(chip_powers(chip, drive, result.theta()))
        after = circuits.isolation_db(chip_powers(chip, drive, result.theta() + found.trims))
        assert after == pytest.approx(found.model_after_db, abs=1e-6)
        assert after >= before - 1e-9  # never worse: the start is kept otherwise
        assert np.abs(found.trims).max() <= 0.15
        gains.append(after - before)
    assert np.median(gains) > 3.0


def test_bad_cancellations_are_refused() -> None:
    _, model, _ = chip_and_model(0)
    with pytest.raises(SettingsError, match="max_trim_rad"):
        cancel_leaks(model, COVER.results[0], max_trim_rad=2.0)
    with pytest.raises(SettingsError, match="start"):
        cancel_leaks(model, COVER.results[0], start=np.ones(3))
    failed = RouteResult((), COVER.results[0].states, {(ENDS[0], ENDS[5]): "no path"})
    with pytest.raises(SettingsError, match="did not route"):
        cancel_leaks(model, failed)
