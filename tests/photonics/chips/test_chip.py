from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.calibration_file import load_calibration, save_calibration
from photonics import LimitError, SettingsError, ShapeError
from photonics.calibration.fits import fit_ring_tuning
from photonics.calibration.selfcal import (
    SelfCalibration,
    calibrate_mesh,
    route_quality,
    self_calibrate,
)
from photonics.chips.calibration import same_calibration
from photonics.chips.chip import Chip, ChipSpec
from photonics.devices.ring import RingThermal
from photonics.devices.transients import ThermalDynamics, settle_time_s
from tests.strategies import seeds


def test_same_seed_same_chip() -> None:
    a, b, c = Chip(ChipSpec(seed=4)), Chip(ChipSpec(seed=4)), Chip(ChipSpec(seed=5))
    assert np.array_equal(a.heaters.bias_rad, b.heaters.bias_rad)
    assert np.array_equal(a.imperfections.splitter_error_in, b.imperfections.splitter_error_in)
    assert not np.array_equal(a.heaters.bias_rad, c.heaters.bias_rad)
    current = np.full(a.n_heaters, 3.0)
    assert np.array_equal(a.transfer(current), b.transfer(current))


@given(st.sampled_from(["clements", "reck"]), seeds, st.floats(0, 3))
def test_power_out_never_exceeds_power_in(mesh, seed, delta_T) -> None:
    chip = Chip(ChipSpec(n_ports=5, mesh=mesh, seed=seed % 1000))
    rng = np.random.default_rng(seed)
    current = rng.uniform(0, chip.spec.max_current_mA, chip.n_heaters)
    field = rng.normal(size=5) + 1j * rng.normal(size=5)
    out = chip.detect(current, field, delta_T_K=delta_T, wavelength_nm=rng.uniform(1500, 1600))
    assert out.sum() <= np.sum(np.abs(field) ** 2) * (1 + 1e-12)
    assert np.all(out >= 0)


@given(seeds)
def test_a_full_period_of_any_heater_changes_nothing(seed) -> None:
    # one heater on one arm: 2 pi more phase is the same state, even for light that bypasses it
    chip = Chip(ChipSpec(n_ports=4, seed=seed % 1000, crosstalk=None, max_current_mA=20))
    rng = np.random.default_rng(seed)
    power = rng.uniform(0, chip.heaters.p_pi_mW)
    lifted = power.copy()
    h = rng.integers(chip.n_heaters)
    lifted[h] += 2 * chip.heaters.p_pi_mW[h]
    a = chip.transfer(chip.heaters.current_for_power(power))
    b = chip.transfer(chip.heaters.current_for_power(lifted))
    assert np.allclose(a, b, atol=1e-12)


def test_voltage_and_wavelength() -> None:
    chip = Chip(ChipSpec(power_budget_mW=np.inf))  # every heater at full scale
    current = np.full(chip.n_heaters, 10.0)
    assert np.allclose(chip.heater_voltage(current), 5.5)  # 10 mA x 550 ohm
    hot = chip.settings(current, wavelength_nm=1550.0).phi
    longer = chip.settings(current, wavelength_nm=1600.0).phi
    heated = hot - chip.heaters.bias_rad[chip.mesh.n_mzis : 2 * chip.mesh.n_mzis]
    assert np.allclose(longer - (hot - heated), heated * 1550 / 1600)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda c: c.detect(np.full(c.n_heaters, 11.0), np.ones(8)), LimitError, "outside 0..10"),
        (lambda c: c.detect(np.zeros(3), np.ones(8)), ShapeError, "expected 64 heater currents"),
        (lambda c: c.detect(np.zeros(c.n_heaters), np.ones(3)), ShapeError, "8 input fields"),
        (
            lambda c: c.settings(np.zeros(c.n_heaters), wavelength_nm=500),
            SettingsError,
            "1000..2000",
        ),
        (lambda c: Chip(ChipSpec(mesh="hex")), SettingsError, "mesh must be one of"),
        (lambda c: Chip(ChipSpec(pitch_x_um=0)), SettingsError, "pitch_x_um must be > 0"),
    ],
)
def test_bad_input_is_refused(call, error, words) -> None:
    with pytest.raises(error, match=words):
        call(Chip())


def _measure(chip: Chip, seed: int = 5):
    rng = np.random.default_rng(seed)

    def measure(current: np.ndarray, port: int) -> np.ndarray:
        return chip.detect(current, np.eye(chip.n_ports)[port], rng)  # 1 mW laser, noisy diodes

    return measure


def _self_calibrate(chip: Chip) -> SelfCalibration:
    return calibrate_mesh(
        chip.mesh, _measure(chip), chip.heater_voltage, chip.n_heaters, chip.spec.max_current_mA
    )


def test_self_calibrated_chip_routes_permutations_and_uncalibrated_does_not(tmp_path) -> None:
    chip = Chip(ChipSpec(n_ports=8, mesh="clements", seed=0))
    # its neighbours' warmth of each MZI's other arm (-1.5 %) costs isolation: 18.3 dB without
    # calibrating it, 27.0 dB with (as CAL:RUN does, the layout predicting 0.048 rad)
    args = (chip.mesh, _measure(chip), chip.heater_voltage, chip.n_heaters, 10.0)
    mesh_only = calibrate_mesh(*args).calibration
    assert route_quality(chip, mesh_only)[1] < 20
    cal = self_calibrate(
        *args, positions_um=chip.heater_positions_um, other_arm_um=chip.other_arms_um
    ).calibration
    K = chip.mesh.n_mzis
    # P_pi within 0.5 % (measured; 1e-5 with all crosstalk on the heated arm)
    assert np.allclose(cal.p_pi_mW[:K], chip.heaters.p_pi_mW[:K], rtol=6e-3)
    assert cal.phase_fitted.tolist() == [True] * K + [False] * (chip.n_heaters - K)
    err, iso = route_quality(chip, cal)
    assert err < 0.5 and iso >= 25, (err, iso)
    # the same routing with the heaters as designed: nominal P_pi, no bias phases
    nominal = replace(
        cal, p_pi_mW=np.full(chip.n_heaters, chip.spec.p_pi_mW), bias_rad=np.zeros(chip.n_heaters)
    )
    err_u, iso_u = route_quality(chip, nominal)
    assert err_u > 3 and iso_u < 10, (err_u, iso_u)
    # the calibration file gives back exactly the same routing
    save_calibration(cal, tmp_path / "chip.json")
    assert same_calibration(load_calibration(tmp_path / "chip.json"), cal)


def test_self_calibration_stays_within_a_power_budget_below_all_heaters_at_full_scale() -> None:
    chip = Chip(ChipSpec(n_ports=6, seed=4, power_budget_mW=1000.0))
    full = chip.heaters.power_mW(np.full(chip.n_heaters, chip.spec.max_current_mA)).sum()
    assert full > 1.9 * chip.spec.power_budget_mW  # one I-V sweep of every heater would trip it
    args = (chip.mesh, _measure(chip), chip.heater_voltage, chip.n_heaters, 10.0)
    # the crosstalk sweeps too (the chip refuses any reading above its budget)
    found = self_calibrate(
        *args, positions_um=chip.heater_positions_um, other_arm_um=chip.other_arms_um
    )
    err, iso = route_quality(chip, found.calibration, trials=5)
    assert err < 0.5 and iso >= 25, (err, iso)


@pytest.mark.parametrize("mesh", ["clements", "reck"])
def test_self_calibration_learns_every_heater(mesh) -> None:
    chip = Chip(ChipSpec(n_ports=6, mesh=mesh, seed=11))
    cal = _self_calibrate(chip).calibration
    K = chip.mesh.n_mzis
    bias_err = np.angle(np.exp(1j * (cal.bias_rad[:K] - chip.heaters.bias_rad[:K])))
    assert np.abs(bias_err).max() < 0.25  # leaks of imperfect bar states shift the zeros a little
    assert np.allclose(cal.c_ohm, chip.heaters.r0_ohm)
    assert np.allclose(cal.a_ohm_per_mA2, chip.heaters.r_rise_ohm_per_mA2)


def test_crosstalk_compensation_improves_routing_on_a_dense_mesh() -> None:
    # the earlier model, all crosstalk on the heated arm
    # (tests/photonics/calibration/test_crosstalk.py: both)
    dense = ChipSpec(n_ports=6, seed=2, pitch_x_um=60.0, pitch_y_um=20.0, both_arms=False)
    chip = Chip(dense)
    args = (chip.mesh, _measure(chip), chip.heater_voltage, chip.n_heaters, dense.max_current_mA)
    before = self_calibrate(*args).calibration
    after = self_calibrate(*args, positions_um=chip.heater_positions_um).calibration
    n = chip.mesh.n_mzis
    fitted, true = after.crosstalk[:n, :n], chip.crosstalk.toarray()[:n, :n]
    assert np.abs(fitted - true).max() < 0.25 * true.max()  # the distance law is recovered
    err_before, iso_before = route_quality(chip, before)
    err_after, iso_after = route_quality(chip, after)
    print(
        f"dense: {err_before:.2f} dB, {iso_before:.1f} dB -> {err_after:.2f} dB, {iso_after:.1f} dB"
    )
    assert err_after < err_before / 2 and iso_after > iso_before + 5


def test_output_rings_filter_the_photodiodes_and_their_tuning_is_fitted() -> None:
    chip = Chip(ChipSpec(n_ports=4, seed=3, output_rings=True))
    ring, n = chip.spec.ring, chip.n_ports
    assert chip.n_heaters == 2 * chip.mesh.n_mzis + 2 * n
    j = 2  # the ring in front of photodiode 2
    channel = 2 * chip.mesh.n_mzis + n + j
    powers = np.array([0.0, 0.5, 1.0, 1.5])
    scan = np.arange(1547.0, 1555.0, 0.002)
    resonances = []
    for p in powers:
        current = np.zeros(chip.n_heaters)
        current[channel] = chip.heaters.current_for_power(np.full(chip.n_heaters, p))[channel]
        seen = [chip.detect(current, np.ones(n) / 2, wavelength_nm=w)[j] for w in scan]
        resonances.append(scan[int(np.argmax(seen))])
    fit = fit_ring_tuning(powers, resonances)
    assert fit.slope_nm_per_mW == pytest.approx(chip.spec.ring_thermal.heater_nm_per_mW, rel=0.02)
    cold = chip.ring_shift_nm(np.zeros(chip.n_heaters))[j]  # its fabrication offset
    assert fit.lambda0_nm == pytest.approx(ring.resonance_nm(1550.0) + cold, abs=0.005)
    # off resonance the photodiode sees little: the ring really filters
    off = chip.detect(np.zeros(chip.n_heaters), np.ones(n) / 2, wavelength_nm=fit.lambda0_nm + 0.9)
    on = chip.detect(np.zeros(chip.n_heaters), np.ones(n) / 2, wavelength_nm=fit.lambda0_nm)
    assert off[j] < 0.05 * on[j]


def test_an_integrated_ring_heater_brings_its_own_time_constant() -> None:
    # a doped heater in the resonator settles in 2.2 us, not the TiN heaters' 5.6 us
    ring = RingThermal.integrated()
    chip = Chip(ChipSpec(n_ports=4, output_rings=True, ring_thermal=ring))
    rings = slice(2 * chip.mesh.n_mzis + chip.n_ports, None)
    assert (ring.tau_s, RingThermal().tau_s) == (2.2e-6, 5.6e-6)
    assert np.all(chip.heaters.tau_s[rings] == ring.tau_s)
    assert np.all(chip.heaters.tau_s[: rings.start] == RingThermal().tau_s)
    # a step of one ring heater alone settles (to 1e-3) in its own 2.2 us x ln(1000)
    step = np.zeros(chip.n_heaters)
    step[rings.start] = np.pi
    settle = settle_time_s(step, chip.heaters.tau_s, None, ThermalDynamics(), 1e-3 * np.pi)
    assert settle == pytest.approx(2.2e-6 * np.log(1e3), rel=1e-3)
