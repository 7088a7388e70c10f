"""The band: couplers, losses and heater phases across wavelengths, batched over a grid."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from photonics import SettingsError, ShapeError
from photonics.calibration.selfcal import currents_for_theta, worst_isolation_db
from photonics.chips.chip import Chip, ChipSpec
from photonics.devices.dispersion import (
    DESIGN_WAVELENGTH_NM,
    band,
    band_extinction_db,
    coupler_splitting,
    imperfections_at,
    loss_factor,
)
from photonics.devices.mzi import MZIImperfections, extinction_ratio_db
from photonics.matching import Permutation
from photonics.recirculating.routing import Router
from photonics.recirculating.switch_geometry import hexagonal_switch
from tests.strategies import seeds

C_BAND = band(1530.0, 1565.0, 8)


def _routed(chip: Chip, seed: int) -> tuple[np.ndarray, Permutation]:
    """Currents that route a random permutation by the chip's own (factory) calibration."""
    perm = Permutation.random(chip.n_ports, np.random.default_rng(seed))
    theta = chip.mesh.route(perm).theta
    return currents_for_theta(chip.factory_calibration(), theta, chip.n_heaters), perm


def test_at_the_design_wavelength_the_band_is_the_single_wavelength_model() -> None:
    chip = Chip(ChipSpec(n_ports=6, seed=3))
    current, _ = _routed(chip, 0)
    assert imperfections_at(chip.imperfections, DESIGN_WAVELENGTH_NM) is chip.imperfections
    M = chip.transfer_band(current, [DESIGN_WAVELENGTH_NM, 1530.0])
    assert np.allclose(M[0], chip.transfer(current), atol=1e-14)
    # one batched evaluation gives what each wavelength alone gives
    assert np.allclose(M[1], chip.transfer(current, wavelength_nm=1530.0), atol=1e-14)
    assert coupler_splitting(0.3, DESIGN_WAVELENGTH_NM) == pytest.approx(0.3, abs=1e-15)
    assert loss_factor(DESIGN_WAVELENGTH_NM) == 1.0


@settings(max_examples=25)
@given(seeds, st.lists(st.floats(1260, 1675), min_size=1, max_size=6))
def test_a_lossless_chip_is_unitary_at_every_wavelength(seed, lam) -> None:
    chip = Chip(ChipSpec(n_ports=5, seed=seed % 1000, loss_db=0.0, loss_sigma_db=0.0))
    rng = np.random.default_rng(seed)
    current = rng.uniform(0, 0.6 * chip.spec.max_current_mA, chip.n_heaters)
    M = chip.transfer_band(current, lam)
    eye = np.broadcast_to(np.eye(5), M.shape)
    assert np.allclose(M @ np.conj(np.swapaxes(M, -1, -2)), eye, atol=1e-12)


@given(st.floats(0, 1), st.floats(1000, 2000))
def test_coupler_splitting_is_a_power_fraction_that_grows_with_wavelength(k0, lam) -> None:
    k = coupler_splitting(k0, lam)
    assert 0 <= k <= 1
    if 0.05 < k0 < 0.45 and lam > DESIGN_WAVELENGTH_NM:  # kappa L grows with wavelength
        assert k > k0


def test_couplers_off_the_design_wavelength_lose_extinction_and_isolation() -> None:
    # a 50:50 coupler crosses 47 % at 1530 nm and 54 % at 1580 nm (docs/physics.md)
    assert coupler_splitting(0.5, [1530.0, 1580.0]) == pytest.approx([0.474, 0.540], abs=1e-3)
    ideal = MZIImperfections()
    at = imperfections_at(ideal, np.array([[1530.0], [1550.0], [1565.0]]))
    er = extinction_ratio_db(at.splitter_error_in, at.splitter_error_out)[:, 0]
    assert er[1] > 200 and er[0] < 30 and er[2] < 35  # ideal (to rounding) only at 1550 nm
    chip = Chip(ChipSpec(n_ports=8, seed=0))
    current, perm = _routed(chip, 1)
    P = np.abs(chip.transfer_band(current, C_BAND)) ** 2
    at_design = worst_isolation_db(np.abs(chip.transfer(current)) ** 2, perm)
    over_band = worst_isolation_db(P, perm)
    per_wavelength = [worst_isolation_db(p, perm) for p in P]
    assert over_band == min(per_wavelength) < at_design - 3


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda c: c.transfer_band(np.zeros(c.n_heaters), [900.0]), SettingsError, "1000..2000"),
        (lambda c: c.transfer_band(np.zeros(c.n_heaters), []), SettingsError, "1000..2000"),
        (lambda c: c.transfer_band(np.zeros((2, c.n_heaters)), [1550.0]), ShapeError, "one set"),
        (lambda c: c.transfer_band(np.zeros(c.n_heaters), [[1550.0]]), ShapeError, "1-D"),
        (lambda c: band(1565.0, 1530.0, 4), SettingsError, "from low to high"),
        (lambda c: band(1530.0, 1565.0, 0), SettingsError, "points >= 1"),
        (lambda c: coupler_splitting(1.5, 1550.0), SettingsError, r"k_design must be in \[0, 1\]"),
    ],
)
def test_bad_input_is_refused(call, error, words) -> None:
    with pytest.raises(error, match=words):
        call(Chip(ChipSpec(n_ports=4)))


def test_the_router_can_predict_isolation_over_a_band() -> None:
    typical = MZIImperfections.typical()
    assert band_extinction_db(typical, [DESIGN_WAVELENGTH_NM]) == pytest.approx(35.0, abs=1e-6)
    over = band_extinction_db(typical, C_BAND)
    assert 20 < over < 30  # the couplers drift off 50:50 at the band's edges
    chip = Chip(ChipSpec(n_ports=4, seed=2))
    per_cell = band_extinction_db(chip.imperfections, C_BAND)
    at_design = extinction_ratio_db(
        chip.imperfections.splitter_error_in, chip.imperfections.splitter_error_out
    )
    assert per_cell.shape == (chip.mesh.n_mzis,) and np.all(per_cell <= at_design + 1e-9)
    mesh, ends = hexagonal_switch(8)
    requests = [(ends[0], ends[4]), (ends[1], ends[5]), (ends[2], ends[6])]
    one = Router(mesh).route(requests)
    band_wide = Router(mesh, extinction_db=over).route(requests)
    assert one.ok and band_wide.ok
    assert band_wide.isolation_db < one.isolation_db  # the same leaks, less extinction
