"""Fabrication and drive details of the emulated chips: spatially correlated variation and
heater-induced loss."""

from dataclasses import replace

import numpy as np
import pytest

from photonics import SettingsError
from photonics.chips.chip import Chip, ChipSpec
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.feedforward.chip_geometry import FeedForwardGeometry
from photonics.recirculating.switch_geometry import switch_6x6


def test_without_a_correlation_length_each_cell_is_drawn_alone_as_before() -> None:
    spec = ChipSpec(n_ports=6, seed=9)
    chip = Chip(spec)
    draw = np.random.default_rng(9).normal(0.0, spec.splitter_sigma, (2, chip.mesh.n_mzis))
    assert np.array_equal(chip.imperfections.splitter_error_in, draw[0])  # a seed's meaning
    assert np.array_equal(chip.imperfections.splitter_error_out, draw[1])


def test_correlated_variation_keeps_each_cells_spread_and_makes_near_cells_alike() -> None:
    # 6-port Clements on the layout's geometry (column pitch 660 um, modes 60 um apart): cells
    # 0 (column 0, mode 0) and 1 (column 0, mode 2) are 120 um apart, cell 14 (column 5) 3.3 mm
    # from cell 0
    spec = ChipSpec(n_ports=6, correlation_length_um=200.0)
    errors = np.array(
        [Chip(replace(spec, seed=s)).imperfections.splitter_error_in for s in range(400)]
    )
    sigma = spec.splitter_sigma
    assert np.allclose(errors.std(axis=0), sigma, rtol=0.15)
    near = np.corrcoef(errors[:, 0], errors[:, 1])[0, 1]
    far = np.corrcoef(errors[:, 0], errors[:, 14])[0, 1]
    expected = np.exp(-(120.0**2) / (2 * 200.0**2))  # the covariance at 120 um: 0.84
    assert abs(near - expected) < 0.08 and abs(far) < 0.15
    # a length far beyond the chip: one wafer-scale error shared by every cell
    one = Chip(ChipSpec(n_ports=6, seed=1, correlation_length_um=1e7)).imperfections
    assert np.ptp(one.splitter_error_in) < 1e-3 * sigma


def test_correlated_variation_also_draws_a_recirculating_mesh() -> None:
    mesh, inputs, _ = switch_6x6()
    alone = MeshChip(mesh, inputs, MeshChipSpec(seed=3)).imperfections.splitter_error_in
    wide = MeshChip(mesh, inputs, MeshChipSpec(seed=3, correlation_length_um=1e7))
    assert np.ptp(wide.imperfections.splitter_error_in) < 1e-3 * np.ptp(alone)


def test_a_heater_adds_loss_in_proportion_to_its_phase() -> None:
    rate = 0.01
    spec = ChipSpec(
        n_ports=2,
        splitter_sigma=0.0,
        loss_db=0.0,
        loss_sigma_db=0.0,
        crosstalk=None,
        heater_loss_db_per_rad=rate,
    )
    chip = Chip(spec)
    for current in (0.0, 4.0, 8.0):
        drive = np.array([current, 0.0, 0.0, 0.0])
        own = chip.heaters.own_phase(drive)[0]
        out = np.sum(np.abs(chip.transfer(drive)[:, 0]) ** 2)
        assert out == pytest.approx(10 ** (-rate * own / 10), rel=1e-12)
    # the other heaters (input and output phase shifters) add none here
    assert np.sum(np.abs(chip.transfer(np.array([0.0, 5.0, 5.0, 5.0]))) ** 2) == pytest.approx(2)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: ChipSpec(correlation_length_um=0.0), "correlation_length_um must be a number > 0"),
        (lambda: ChipSpec(correlation_length_um=True), "correlation_length_um must be a number"),
        (lambda: ChipSpec(heater_loss_db_per_rad=-1.0), "heater_loss_db_per_rad must be >= 0"),
        (lambda: ChipSpec(geometry=(560.0, 60.0)), "geometry must be a FeedForwardGeometry"),
        (lambda: FeedForwardGeometry(400.0, 60.0, 420.0), "must be below column_pitch_um"),
        (lambda: FeedForwardGeometry(560.0, 0.0, 420.0), "mode_pitch_um must be a number > 0"),
        (
            lambda: Chip(ChipSpec(n_ports=128, correlation_length_um=100.0)),
            "up to 4096 cells, this chip has 8128",
        ),
    ],
)
def test_bad_fabrication_settings_are_refused(make, words) -> None:
    with pytest.raises(SettingsError, match=words):
        make()


def test_a_chip_with_a_geometry_puts_every_heater_where_it_says() -> None:
    geometry = FeedForwardGeometry(560.0, 60.0, 420.0)
    chip = Chip(ChipSpec(n_ports=4, geometry=geometry, both_arms=True))
    assert (chip.spec.pitch_x_um, chip.spec.pitch_y_um) == (560.0, 60.0)
    pos, K = chip.heater_positions_um, chip.mesh.n_mzis
    # MZI (column 1, mode 1): heater mid-cell on mode 1's line, other arm on mode 2's
    k = int(np.flatnonzero((chip.mesh.columns == 1) & (chip.mesh.modes == 1))[0])
    assert pos[k].tolist() == [560.0 + 210.0, 60.0]
    assert chip.other_arms_um[k].tolist() == [770.0, 120.0]
    assert pos[K + k].tolist() == [560.0 - 70.0, 60.0]  # its input phase shifter, mid-gap
    assert pos[2 * K :, 0].tolist() == [3 * 560.0 + 420.0 + 70.0] * 4  # the output screen
