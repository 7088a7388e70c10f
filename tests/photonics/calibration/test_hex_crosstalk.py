"""Thermal crosstalk of a recirculating mesh calibrated through the endpoints' photodiodes
(photonics.calibration.hex_crosstalk), on a dense emulated hexagonal chip (100 um unit length:
neighbouring cells 87 um apart, 0.4 % of a neighbour's phase each, 0.05 rad predicted)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from photonics.calibration.hex_crosstalk import calibrate_recirculating_crosstalk
from photonics.chips.calibration import same_calibration
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.errors import FitError
from photonics.recirculating.lattices import hexagonal_mesh
from photonics.recirculating.switch_geometry import hexagonal_switch, spread_endpoints
from tests.photonics.calibration.test_hex_selfcal import BIAS_TOL_RAD, _measure, _run


def _chip(unit_length_um: float = 100.0, seed: int = 0) -> MeshChip:
    mesh = hexagonal_mesh(4, 4, unit_length_um=unit_length_um)
    return MeshChip(mesh, spread_endpoints(mesh, 2), MeshChipSpec(seed=seed))


def _calibrate(chip: MeshChip, log: list[float] | None = None, budget: float = np.inf):
    measure = _measure(chip, log=log)
    return _run(chip, measure=measure, power_budget_mW=budget), measure


def _crosstalk(chip: MeshChip, found, measure, **kw):
    return calibrate_recirculating_crosstalk(
        found, chip.n_ports, measure, chip.heater_layout, chip.spec.max_current_mA, **kw
    )


def _bias_error(chip: MeshChip, cal) -> np.ndarray:
    n = chip.n_cells
    fit = cal.phase_fitted[:n]
    return np.abs(np.angle(np.exp(1j * (cal.bias_rad - chip.heaters.bias_rad))))[:n][fit]


@pytest.fixture(scope="module")
def dense():
    chip = _chip()
    stages: list[str] = []
    found, measure = _calibrate(chip)
    cal = _crosstalk(chip, found, measure, progress=lambda stage, done, total: stages.append(stage))
    return chip, found, cal, stages


def test_the_coupling_of_neighbouring_cells_is_found_within_5_percent(dense) -> None:
    chip, _, cal, stages = dense
    true = chip.crosstalk.toarray()
    near = true > 1e-3
    assert near.sum() >= 100  # every pair of neighbouring cells
    np.testing.assert_allclose(cal.crosstalk[near], true[near], rtol=0.05)
    assert np.all(cal.crosstalk[~near] < 1e-4)
    assert set(stages) == {"crosstalk sweeps"}


def test_the_biases_lose_their_neighbours_warmth(dense) -> None:
    # measured: median error 0.037 rad before, 0.005 after (0.001 on a sparse chip); worst
    # 0.095 and 0.049 rad
    chip, found, cal, _ = dense
    before, after = _bias_error(chip, found.calibration), _bias_error(chip, cal)
    assert np.median(before) > 0.02
    assert np.median(after) < np.median(before) / 4
    assert after.max() <= BIAS_TOL_RAD
    # all else is the self-calibration's
    assert same_calibration(
        replace(cal, crosstalk=None, bias_rad=found.calibration.bias_rad), found.calibration
    )


def test_the_crosstalk_sweeps_keep_the_power_budget() -> None:
    # measured: the sweeps draw up to 1180 mW without a budget, 443 mW within 472 mW
    chip = _chip(seed=1)
    log: list[float] = []
    budget = 0.35 * chip.n_cells * chip.spec.p_pi_mW
    found, measure = _calibrate(chip, log, budget)
    drawn = {}
    for limit in (np.inf, budget):
        log.clear()
        cal = _crosstalk(chip, found, measure, power_budget_mW=limit)
        drawn[limit] = max(log)
        assert cal.crosstalk is not None and cal.crosstalk.max() > 1e-3
    assert drawn[np.inf] > budget >= drawn[budget]


def test_a_sparse_chip_has_no_pairs_to_measure() -> None:
    mesh, ends = hexagonal_switch(8)  # 811 um: cells 702 um apart
    chip = MeshChip(mesh, ends, MeshChipSpec(seed=0))
    found, measure = _calibrate(chip)
    with pytest.raises(FitError, match="0 cell pairs could be measured"):
        _crosstalk(chip, found, measure)
