"""CAL:RUN on a recirculating (hexagonal) chip: self-calibration through the endpoints'
photodiodes (photonics.calibration.hex_selfcal) through the firmware, within its limits, stored as a
versioned calibration file, and routing that leaves the dead cells out."""

import contextlib
from dataclasses import replace

import numpy as np
import pytest

from firmware.calibration_file import load_calibration
from firmware.controller import Controller
from firmware.driver import EmulatedDriver
from firmware.sdk import InProcessTransport, Switch
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.chips.switch import MeshFabric
from photonics.devices.thermal import crosstalk_matters
from photonics.errors import MatchingError
from photonics.matching import Matching
from photonics.recirculating.lattices import hexagonal_mesh
from photonics.recirculating.routing import DEFAULT_EXTINCTION_DB, Router
from photonics.recirculating.switch_geometry import spread_endpoints
from tests.firmware.state import watch_limits


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """An uncalibrated 8-endpoint hexagonal switch calibrated by CAL:RUN ON with a power
    budget of 60 % of the default, every row it sent watched, and its progress reports."""
    state = tmp_path_factory.mktemp("hexcal")
    sw = Switch.emulated(ports=8, mesh="hexagonal", seed=3, calibrated=False, state_dir=state)
    c = sw.transport.controller
    c.handle(f"SYST:POW:LIM {0.6 * c.power_budget_mW:.6g}")
    assert c.errors.codes() == []
    stages: list[str] = []
    c.progress = lambda stage, done, total: stages.append(stage)
    watch = watch_limits(c)
    seconds = sw.calibrate(save=True)
    c.progress = None
    return sw, state, watch, stages, seconds


def test_cal_run_calibrates_a_hexagonal_chip_within_its_limits(calibrated) -> None:
    sw, _, watch, stages, seconds = calibrated
    status = sw.calibration()
    assert status["calibrated"] and status["stored"] and status["chip_id"] == "EMU-HEXAGONAL-8"
    assert seconds > 0 and watch.rows > 1000 and watch.over == []
    assert {"heater I-V sweeps", "cell fringes", "refine cells", "cell extinction"} <= set(stages)


def test_the_stored_file_marks_the_dead_cells_and_the_router_leaves_them_out(calibrated) -> None:
    sw, state, _, _, _ = calibrated
    c = sw.transport.controller
    stored = load_calibration(state / "calibration.json")
    n = c.fabric.n_cells
    dead = np.flatnonzero(~stored.phase_fitted[:n])
    assert np.array_equal(stored.phase_fitted, c.calibration.phase_fitted)
    assert stored.phase_fitted[:n].sum() > 0 and dead.size <= n // 3
    assert np.array_equal(np.flatnonzero(c.fabric.router.dead), dead)


def test_matchings_on_the_self_calibrated_chip_are_isolated_by_20_db(calibrated) -> None:
    sw, *_ = calibrated
    c = sw.transport.controller
    for seed in range(3):
        matching = Matching.random(8, np.random.default_rng(seed))
        plan = c.apply_matching(matching)
        assert not set(np.flatnonzero(c.fabric.router.dead)) & {
            cell for circuit in plan.circuits for cell in circuit.cells
        }
        P = np.abs(c.driver.chip.transfer(c.driver.currents())) ** 2  # [out, in], the chip's
        for a, b in matching.pairs:
            for src, out in ((a, b), (b, a)):
                leak = np.delete(P[out], [src, out]).max()
                assert 10 * np.log10(P[out, src] / leak) >= 20


def test_the_router_predicts_isolation_from_the_measured_extinction(calibrated) -> None:
    sw, state, _, _, _ = calibrated
    c = sw.transport.controller
    stored = load_calibration(state / "calibration.json")
    n = c.fabric.n_cells
    ext = c.calibration.extinction_db
    assert ext.shape == (2, n)
    np.testing.assert_array_equal(stored.extinction_db, ext)
    live = c.calibration.phase_fitted[:n]
    assert np.isnan(ext[:, ~live]).all() and (ext[:, live] > 0).all()
    # the router predicts with each cell's figure in the state its paths set
    np.testing.assert_array_equal(c.fabric.router.extinction_db[:, live], ext[:, live])
    assert not np.all(c.fabric.router.extinction_db[:, live] == DEFAULT_EXTINCTION_DB)


def test_a_calibration_without_extinction_routes_on_the_typical_figure(calibrated) -> None:
    sw, _, _, _, _ = calibrated
    c = sw.transport.controller
    cal = c.calibration
    try:
        c.use_calibration(replace(cal, extinction_db=None), stored=False)
        assert np.all(c.fabric.router.extinction_db == DEFAULT_EXTINCTION_DB)
    finally:
        c.use_calibration(cal, stored=False)
    live = cal.phase_fitted[: c.fabric.n_cells]
    assert np.array_equal(c.fabric.router.extinction_db[:, live], cal.extinction_db[:, live])


def test_a_factory_calibrated_switch_routes_on_its_cells_extinction() -> None:
    # the router predicts with the factory calibration's per-state figures, not a flat 35 dB
    sw = Switch.emulated(ports=8, mesh="hexagonal", seed=5)
    c = sw.transport.controller
    expected = c.driver.chip.factory_calibration().extinction_db
    np.testing.assert_array_equal(c.fabric.router.extinction_db, expected)
    assert expected.min() < DEFAULT_EXTINCTION_DB - 5


def test_cal_run_calibrates_a_dense_meshs_crosstalk_and_routes_compensating_it() -> None:
    # cells 87 um apart (100 um unit length): CAL:RUN measures the crosstalk the chip's layout
    # predicts, stores it with the calibration, and the routes compensate it
    mesh = hexagonal_mesh(4, 4, unit_length_um=100.0)
    ends = spread_endpoints(mesh, 2)
    chip = MeshChip(mesh, ends, MeshChipSpec(seed=0))
    assert crosstalk_matters(chip.heater_layout, chip.n_cells)
    c = Controller(
        EmulatedDriver(chip, rng=np.random.default_rng(0)),
        MeshFabric(Router(mesh), ends),
        heater_layout=chip.heater_layout,
    )
    stages: list[str] = []
    c.progress = lambda stage, done, total: stages.append(stage)
    Switch(InProcessTransport(c)).calibrate(save=False)
    assert "crosstalk sweeps" in stages
    true = chip.crosstalk.toarray()
    near = true > 1e-3
    np.testing.assert_allclose(c.calibration.crosstalk[near], true[near], rtol=0.05)
    routable = []  # dead cells leave some matchings unrealizable
    for seed in range(10):
        with contextlib.suppress(MatchingError):
            routable.append(c.apply_matching(Matching.random(8, np.random.default_rng(seed))))
    assert len(routable) >= 5
    plan = routable[-1]
    wanted = plan.theta[: chip.n_cells]
    got = chip.theta(c.driver.currents())
    live = c.calibration.phase_fitted[: chip.n_cells]
    miss = np.abs(np.angle(np.exp(2j * (got - wanted))))[live]
    assert np.median(miss) < 0.01  # the cells' neighbours' warmth compensated
