"""Tests of photonics.calibration.fits: each fit recovers known parameters, stays within its stated
tolerance under noise, and refuses bad input naming it."""

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from photonics.calibration.fits import (
    fit_crosstalk,
    fit_fringe,
    fit_heater_resistance,
    fit_ring_tuning,
)
from photonics.errors import FitError, SettingsError, ShapeError

TWO_PI = 2 * np.pi


def phase_error(a: float, b: float) -> float:
    """|a - b| wrapped to [0, pi]."""
    return abs(math.remainder(a - b, TWO_PI))


def fringe(p: np.ndarray, p_pi: float, bias: float, amplitude: float, offset: float) -> np.ndarray:
    return offset + amplitude * np.cos(np.pi * p / p_pi + bias)


# ------------------------------------------------------------------------------------------------
# heater resistance


def test_resistance_recovers_known_values_on_noiseless_data() -> None:
    a, c = 0.5, 500.0
    current = np.linspace(-10, 10, 21)  # includes I = 0, which must be ignored
    voltage = current * 1e-3 * (a * current**2 + c)
    fit = fit_heater_resistance(current, voltage)
    assert fit.a_ohm_per_mA2 == pytest.approx(a, rel=1e-12)
    assert fit.c_ohm == pytest.approx(c, rel=1e-13)
    assert fit.rms_residual_ohm < 1e-10


@given(st.floats(0, 2), st.floats(50, 5000), st.floats(1, 20), st.integers(3, 40))
def test_resistance_fit_is_exact_for_any_parameters(a, c, i_max, n) -> None:
    current = np.linspace(0, i_max, n + 1)[1:]
    voltage = current * 1e-3 * (a * current**2 + c)
    fit = fit_heater_resistance(current, voltage)
    assert fit.a_ohm_per_mA2 == pytest.approx(a, rel=1e-9, abs=1e-9)
    assert fit.c_ohm == pytest.approx(c, rel=1e-12)


def test_resistance_with_noise_reports_the_residual() -> None:
    rng = np.random.default_rng(7)
    current = np.linspace(0.5, 10, 40)
    r = 0.5 * current**2 + 500 + rng.normal(0, 0.2, current.size)
    fit = fit_heater_resistance(current, current * 1e-3 * r)
    assert fit.a_ohm_per_mA2 == pytest.approx(0.5, abs=0.01)
    assert fit.c_ohm == pytest.approx(500, abs=0.2)
    assert 0.1 < fit.rms_residual_ohm < 0.3


@pytest.mark.parametrize(
    ("current", "voltage", "error", "match"),
    [
        ([1, 2, 3], [1, 2], ShapeError, r"current_mA has shape \(3,\) but voltage_V has shape"),
        ([[1, 2, 3]], [[1, 2, 3]], ShapeError, "must be 1-D"),
        (["a", "b", "c"], [1, 2, 3], ShapeError, "current_mA must be a rectangular array"),
        ([1, 2, 3], [0.5, np.nan, 1.5], FitError, "voltage_V must be finite; sample 1 is nan"),
        ([1, np.inf, 3], [0.5, 1.0, 1.5], FitError, "current_mA must be finite; sample 1 is inf"),
        ([0, 1, 2], [0, 0.5, 1.0], FitError, "at least 3 points with current_mA != 0, got 2"),
        ([2, -2, 2], [1, -1, 1], FitError, r"two distinct \|I\| values, got \|I\| = 2.0"),
    ],
)
def test_resistance_rejects_bad_input(current, voltage, error, match) -> None:
    with pytest.raises(error, match=match):
        fit_heater_resistance(current, voltage)


# ------------------------------------------------------------------------------------------------
# fringes


def test_fringe_recovers_known_values_on_noiseless_data() -> None:
    p = np.linspace(0, 100, 201)
    fit = fit_fringe(p, fringe(p, 21.4, 2.0, 0.8, 1.0))
    assert fit.p_pi_mW == pytest.approx(21.4, rel=1e-10)
    assert phase_error(fit.bias_rad, 2.0) < 1e-9
    assert fit.amplitude == pytest.approx(0.8, rel=1e-10)
    assert fit.offset == pytest.approx(1.0, rel=1e-10)
    assert fit.rms_residual < 1e-10


@pytest.mark.parametrize("seed", range(5))
def test_fringe_with_one_percent_noise_is_within_stated_tolerance(seed: int) -> None:
    # measured over 500 draws: std of the P_pi error 1.8e-4 relative, of the bias 2.0e-3 rad;
    # the tolerances below are about ten standard deviations
    rng = np.random.default_rng(seed)
    p_pi, bias, amplitude, offset = 21.4, rng.uniform(0, TWO_PI), 1.0, 1.2
    p = np.linspace(0, 6 * p_pi, 201)  # three fringes
    y = fringe(p, p_pi, bias, amplitude, offset) + rng.normal(0, 0.01 * amplitude, p.size)
    fit = fit_fringe(p, y)
    assert fit.p_pi_mW == pytest.approx(p_pi, rel=2e-3)
    assert phase_error(fit.bias_rad, bias) < 0.02
    assert fit.amplitude == pytest.approx(amplitude, rel=0.01)
    assert fit.offset == pytest.approx(offset, abs=0.01)
    assert fit.rms_residual == pytest.approx(0.01 * amplitude, rel=0.2)


@given(
    p_pi=st.floats(1, 30),
    bias=st.floats(0, TWO_PI, exclude_max=True),
    amplitude=st.floats(0.01, 10),
    offset=st.floats(-10, 10),
    fringes=st.floats(1, 4),  # the sweep covers 2 P_pi to 8 P_pi
    n=st.integers(60, 300),
)
def test_fringe_recovers_p_pi_and_bias_for_any_parameters(
    p_pi, bias, amplitude, offset, fringes, n
) -> None:
    p = np.linspace(0, 2 * p_pi * fringes, n)
    fit = fit_fringe(p, fringe(p, p_pi, bias, amplitude, offset))
    assert fit.p_pi_mW == pytest.approx(p_pi, rel=1e-6)
    assert phase_error(fit.bias_rad, bias) < 1e-6
    assert 0 <= fit.bias_rad < TWO_PI
    assert fit.amplitude >= 0
    assert fit.amplitude == pytest.approx(amplitude, rel=1e-6)


@pytest.mark.parametrize("bias", [0.0, 1e-13, TWO_PI - 1e-13, np.pi])
def test_fringe_bias_is_wrapped_into_zero_two_pi(bias: float) -> None:
    p = np.linspace(0, 40, 101)
    fit = fit_fringe(p, fringe(p, 10.0, bias, 1.0, 0.0))
    assert 0 <= fit.bias_rad < TWO_PI
    assert phase_error(fit.bias_rad, bias) < 1e-9


def test_fringe_bias_refers_to_zero_power_for_shuffled_sweeps_away_from_zero() -> None:
    rng = np.random.default_rng(3)
    p = rng.permutation(np.linspace(30, 80, 151))
    fit = fit_fringe(p, fringe(p, 13.0, 4.0, 2.0, 3.0))
    assert fit.p_pi_mW == pytest.approx(13.0, rel=1e-9)
    assert phase_error(fit.bias_rad, 4.0) < 1e-8


def test_fringe_of_an_under_etched_heater() -> None:
    p = np.linspace(0, 6, 241)  # P_pi = 1.34 mW, about 2.2 fringes
    fit = fit_fringe(p, fringe(p, 1.34, 5.5, 0.3, 0.31))
    assert fit.p_pi_mW == pytest.approx(1.34, rel=1e-9)
    assert phase_error(fit.bias_rad, 5.5) < 1e-9


def test_fringe_scan_range_selects_among_the_allowed_p_pi() -> None:
    p = np.linspace(0, 100, 201)
    y = fringe(p, 21.4, 1.0, 1.0, 1.0)
    assert fit_fringe(p, y, p_pi_range_mW=(10, 40)).p_pi_mW == pytest.approx(21.4, rel=1e-10)
    # a range that excludes the truth cannot find it: the refinement may only step a little out
    with pytest.raises(FitError, match="contrast"):
        fit_fringe(p, y, p_pi_range_mW=(1, 2))


@pytest.mark.parametrize(
    ("p_pi_range", "match"),
    [
        ((5, 1), r"0 < lo < hi .* got \(5, 1\)"),
        ((-1, 10), r"0 < lo < hi .* got \(-1, 10\)"),
        ((0, 10), r"got \(0, 10\)"),
        ((1, math.nan), r"got \(1, nan\)"),
        ((1,), r"p_pi_range_mW must be \(lo, hi\) in mW, got \(1,\)"),
        ((1e-9, 10), "scan points"),
    ],
)
def test_fringe_rejects_a_bad_scan_range(p_pi_range, match) -> None:
    p = np.linspace(0, 100, 201)
    with pytest.raises(SettingsError, match=match):
        fit_fringe(p, fringe(p, 21.4, 1.0, 1.0, 1.0), p_pi_range_mW=p_pi_range)


def test_fringe_refuses_flat_data() -> None:
    p = np.linspace(0, 100, 201)
    with pytest.raises(FitError, match=r"detected has no contrast: every sample is 0\.7"):
        fit_fringe(p, np.full(p.size, 0.7))


def test_fringe_refuses_noise_without_a_fringe() -> None:
    rng = np.random.default_rng(11)
    p = np.linspace(0, 100, 201)
    with pytest.raises(FitError, match=r"no usable contrast: the best fringe explains only"):
        fit_fringe(p, 1.0 + rng.normal(0, 0.01, p.size))


@given(
    p_pi=st.floats(1, 30),
    bias=st.floats(0, TWO_PI, exclude_max=True),
    overtone=st.floats(0, 0.3),
    overtone_phase=st.floats(0, TWO_PI),
    points=st.integers(8, 16),
)
# a strong overtone on 8 points: the cosine's fit lands at 3.8 P_pi, far outside the range,
# or the overtones' refinement from it stops at a local optimum
@example(p_pi=1.0, bias=0.5, overtone=0.25, overtone_phase=0.0, points=8)
@example(p_pi=1.0, bias=4.0, overtone=0.25, overtone_phase=0.0, points=8)
def test_fringe_with_harmonics_recovers_p_pi_from_one_period_with_an_overtone(
    p_pi, bias, overtone, overtone_phase, points
) -> None:
    # light crossing a cell twice (a loop of a recirculating mesh) adds cos(2 phase): a
    # cosine alone then misreads P_pi (up to 1.7 % on 32-endpoint mesh chips)
    p = np.linspace(0, 2 * p_pi, points + 1)[:-1]
    phase = np.pi * p / p_pi + bias
    y = 1.0 + np.cos(phase) + overtone * np.cos(2 * phase + overtone_phase)
    fit = fit_fringe(p, y, p_pi_range_mW=(0.8 * p_pi, 1.25 * p_pi), harmonics=2)
    assert fit.p_pi_mW == pytest.approx(p_pi, rel=1e-6)
    assert phase_error(fit.bias_rad, bias) < 1e-6
    assert fit.amplitude == pytest.approx(1.0, rel=1e-6)
    assert fit.rms_residual < 1e-6


def test_a_cosine_alone_misreads_p_pi_when_the_fringe_has_an_overtone() -> None:
    p = np.linspace(0, 2 * 21.4, 9)[:-1]
    phase = np.pi * p / 21.4 + 1.0
    y = 1.0 + np.cos(phase) + 0.05 * np.cos(2 * phase + 0.5)
    assert abs(fit_fringe(p, y).p_pi_mW / 21.4 - 1) > 1e-3
    assert fit_fringe(p, y, harmonics=2).p_pi_mW == pytest.approx(21.4, rel=1e-9)


@pytest.mark.parametrize(
    ("harmonics", "points", "error", "match"),
    [
        (0, 20, SettingsError, "harmonics must be an integer >= 1, got 0"),
        (1.5, 20, SettingsError, "harmonics must be an integer >= 1, got 1.5"),
        (2, 6, FitError, "with 2 harmonics needs at least 7 points, got 6"),
    ],
)
def test_fringe_rejects_bad_harmonics(harmonics, points, error, match) -> None:
    p = np.linspace(0, 40, points)
    with pytest.raises(error, match=match):
        fit_fringe(p, fringe(p, 21.4, 1.0, 1.0, 1.0), harmonics=harmonics)


@pytest.mark.parametrize(
    ("power", "detected", "error", "match"),
    [
        (np.arange(4.0), np.arange(4.0), FitError, "at least 5 points, got 4"),
        (np.full(10, 3.0), np.arange(10.0), FitError, r"power_mW does not vary \(all 3.0 mW\)"),
        (np.arange(10.0), np.arange(9.0), ShapeError, r"\(10,\) but detected has shape \(9,\)"),
        (np.arange(10.0), [*range(9), math.nan], FitError, "detected must be finite; sample 9"),
    ],
)
def test_fringe_rejects_bad_input(power, detected, error, match) -> None:
    with pytest.raises(error, match=match):
        fit_fringe(power, detected)


# ------------------------------------------------------------------------------------------------
# crosstalk


def random_coupling(rng: np.random.Generator, n: int) -> np.ndarray:
    K = rng.uniform(-0.05, 0.2, (n, n))
    np.fill_diagonal(K, 0)
    return K


def test_crosstalk_recovers_the_coupling_matrix() -> None:
    rng = np.random.default_rng(1)
    K = random_coupling(rng, 5)
    phase = np.linspace(0, TWO_PI, 9)
    shifts = K[:, :, None] * phase
    shifts[np.arange(5), np.arange(5)] = np.nan  # the diagonal is ignored
    fit = fit_crosstalk(phase, shifts)
    assert fit.shape == (5, 5)
    assert np.array_equal(np.diag(fit), np.zeros(5))
    np.testing.assert_allclose(fit, K, rtol=1e-12, atol=1e-15)


def test_crosstalk_accepts_one_sweep_per_aggressor() -> None:
    rng = np.random.default_rng(2)
    K = random_coupling(rng, 3)
    phase = rng.uniform(0, TWO_PI, (3, 7))  # [aggressor, sample]
    shifts = K[:, :, None] * phase[None, :, :]
    np.testing.assert_allclose(fit_crosstalk(phase, shifts), K, rtol=1e-12, atol=1e-15)


def test_crosstalk_with_noise_is_close() -> None:
    rng = np.random.default_rng(4)
    K = random_coupling(rng, 4)
    phase = np.linspace(0, TWO_PI, 50)
    shifts = K[:, :, None] * phase + rng.normal(0, 1e-3, (4, 4, 50))
    # slope std = 1e-3 / sqrt(sum phase^2) ~ 5e-5
    np.testing.assert_allclose(fit_crosstalk(phase, shifts), K, atol=3e-4)


def test_crosstalk_of_a_single_heater_is_zero() -> None:
    assert np.array_equal(fit_crosstalk([1.0, 2.0], [[[np.nan, np.nan]]]), np.zeros((1, 1)))


@pytest.mark.parametrize(
    ("phase", "shifts", "error", "match"),
    [
        (np.ones(4), np.zeros((3, 2, 4)), ShapeError, r"\(H, H, S\).* got \(3, 2, 4\)"),
        (np.ones(4), np.zeros((3, 4)), ShapeError, r"got \(3, 4\)"),
        (np.ones(5), np.zeros((3, 3, 4)), ShapeError, r"\(4,\) or \(3, 4\).* got \(5,\)"),
        (np.zeros(4), np.zeros((3, 3, 4)), FitError, "aggressor 0's phase sweep is all zero"),
        ([1, 2, np.nan], np.zeros((2, 2, 3)), FitError, r"aggressor_phase_rad\[2\] .*got nan"),
        (np.ones(2), [[[0, 0], [0]], [[0, 0], [0, 0]]], ShapeError, "victim_shift_rad must be"),
    ],
)
def test_crosstalk_rejects_bad_input(phase, shifts, error, match) -> None:
    with pytest.raises(error, match=match):
        fit_crosstalk(phase, shifts)


def test_crosstalk_names_a_non_finite_off_diagonal_sample() -> None:
    shifts = np.zeros((3, 3, 4))
    shifts[2, 0, 1] = np.inf
    with pytest.raises(FitError, match=r"victim_shift_rad\[2, 0, 1\] .*victim 2, aggressor 0"):
        fit_crosstalk(np.arange(1.0, 5.0), shifts)


# ------------------------------------------------------------------------------------------------
# rings


def test_ring_tuning_recovers_known_values() -> None:
    p = np.linspace(0, 20, 11)
    fit = fit_ring_tuning(p, 1550.12 + 0.0184 * p)
    assert fit.lambda0_nm == pytest.approx(1550.12, rel=1e-15)
    assert fit.slope_nm_per_mW == pytest.approx(0.0184, rel=1e-10)
    assert fit.rms_residual_nm < 1e-10


def test_ring_tuning_with_noise() -> None:
    rng = np.random.default_rng(5)
    p = np.linspace(0, 20, 41)
    fit = fit_ring_tuning(p, 1550.12 + 0.0184 * p + rng.normal(0, 1e-4, p.size))
    assert fit.slope_nm_per_mW == pytest.approx(0.0184, abs=3e-5)
    assert fit.lambda0_nm == pytest.approx(1550.12, abs=2e-4)
    assert 5e-5 < fit.rms_residual_nm < 2e-4


@pytest.mark.parametrize(
    ("power", "resonance", "error", "match"),
    [
        ([0, 1], [1550, 1550.1], FitError, "at least 3 points, got 2"),
        ([2, 2, 2], [1550, 1550.1, 1550.2], FitError, r"heater_power_mW does not vary \(all 2.0"),
        ([0, 1, 2], [1550, np.nan, 1550.2], FitError, "resonance_nm must be finite; sample 1"),
        ([0, 1, 2], [1550, 1550.1], ShapeError, r"heater_power_mW has shape \(3,\)"),
    ],
)
def test_ring_tuning_rejects_bad_input(power, resonance, error, match) -> None:
    with pytest.raises(error, match=match):
        fit_ring_tuning(power, resonance)
