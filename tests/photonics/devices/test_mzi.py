import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from photonics import MZIImperfections, SettingsError
from photonics.devices.mzi import (
    DEFAULT_SPLITTER_SIGMA,
    arm_phases,
    coupling,
    extinction_ratio_db,
    from_arm_phases,
    imperfect_transfer,
    state_extinction_db,
    theta_for_coupling,
    theta_from_coupling,
    transfer,
)

angles = st.floats(-10, 10, allow_nan=False)
errors = st.floats(-0.2, 0.2)


def test_bar_and_cross_are_the_convention() -> None:
    assert np.allclose(transfer(0.0, 0.0), np.eye(2))
    assert np.allclose(transfer(np.pi / 2, 0.0), [[0, -1], [1, 0]])
    phi = 0.7
    assert np.allclose(
        transfer(0.3, phi)[:, 0], np.exp(1j * phi) * np.array([np.cos(0.3), np.sin(0.3)])
    )


@given(angles, angles)
def test_ideal_mzi_is_unitary_and_equals_the_physical_model(theta: float, phi: float) -> None:
    T = transfer(theta, phi)
    assert np.allclose(T @ T.conj().T, np.eye(2), atol=1e-14)
    assert np.allclose(imperfect_transfer(theta, phi, MZIImperfections()), T, atol=1e-14)
    assert np.isclose(abs(T[1, 0]) ** 2, coupling(theta))


@given(st.floats(0, 1))
def test_coupling_round_trip(k: float) -> None:
    theta = theta_from_coupling(k)
    assert 0 <= theta <= np.pi / 2
    assert np.isclose(coupling(theta), k, atol=1e-12)


@given(angles)
def test_arm_phases_round_trip(theta: float) -> None:
    top, bottom = arm_phases(theta)
    assert top >= 0 and bottom >= 0
    back, sigma = from_arm_phases(top, bottom)
    assert np.isclose(sigma + back, top) and np.isclose(sigma - back, bottom)
    # theta and theta + pi differ by a global sign only
    assert np.allclose(np.abs(transfer(back, 0.0)), np.abs(transfer(theta, 0.0)), atol=1e-12)
    assert np.isclose(np.cos(2 * back), np.cos(2 * theta), atol=1e-9)


@given(angles, angles, st.integers(-3, 3), st.booleans(), errors, errors)
def test_an_element_is_periodic_in_each_arm_phase_with_its_common_phase(
    top, bottom, turns, on_top, e1, e2
) -> None:
    # e^{i sigma} T(theta): 2 pi more on one arm turns theta and sigma by pi each, and
    # T(theta + pi) = -T(theta); the common phase restores the sign a loop would see
    imp = MZIImperfections(e1, e2, 0.3, 0.3)
    shift = 2 * np.pi * turns
    moved = (top + shift, bottom) if on_top else (top, bottom + shift)

    def element(t: float, b: float) -> np.ndarray:
        theta, sigma = from_arm_phases(t, b)
        return np.exp(1j * sigma) * imperfect_transfer(theta, 0.0, imp)

    assert np.allclose(element(*moved), element(top, bottom), atol=1e-9)
    theta, _ = from_arm_phases(*moved)
    if turns % 2:  # without the common phase the sign flips
        assert np.allclose(transfer(theta, 0.0), -transfer(from_arm_phases(top, bottom)[0], 0.0))


@given(angles, angles, errors, errors, st.floats(0, 3), st.floats(0, 3))
def test_imperfect_mzi_is_passive(theta, phi, e1, e2, loss_bar, loss_cross) -> None:
    imp = MZIImperfections(e1, e2, loss_bar, loss_cross)
    M = imperfect_transfer(theta, phi, imp)
    sv = np.linalg.svd(M, compute_uv=False)
    assert sv.max() <= 1 + 1e-12
    # the couplers are lossless: the singular values are the state's loss
    k = coupling(theta)
    assert np.allclose(sv, 10 ** (-(loss_bar * (1 - k) + loss_cross * k) / 20))


@given(errors, errors)
def test_each_state_leaks_as_its_extinction_says(e1: float, e2: float) -> None:
    M = imperfect_transfer(np.array([0.0, np.pi / 2]), 0.0, MZIImperfections(e1, e2))
    bar, cross = np.abs(M[0]) ** 2, np.abs(M[1]) ** 2  # [out, in]
    # the figure is the leak port's fringe (max over min): its bright side is the passed power
    # to second order in the errors, so leaked over passed power within that order
    leak = 10 ** (-state_extinction_db(e1, e2) / 10)
    assert np.isclose(bar[1, 0], leak[0] * bar[0, 0], rtol=4 * (e1**2 + e2**2) + 1e-9, atol=1e-15)
    assert np.isclose(
        cross[0, 0], leak[1] * cross[1, 0], rtol=4 * (e1**2 + e2**2) + 1e-9, atol=1e-15
    )


def test_opposite_coupler_errors_leak_in_bar_only() -> None:
    bar, cross = state_extinction_db(0.01, -0.01)
    assert bar < 35 < 60 < cross


@given(errors, errors)
def test_extinction_follows_from_splitter_error(e1: float, e2: float) -> None:
    theta = np.linspace(0, np.pi, 40001)
    M = imperfect_transfer(theta, 0.0, MZIImperfections(e1, e2))
    cross, bar = np.abs(M[:, 1, 0]) ** 2, np.abs(M[:, 0, 0]) ** 2
    with np.errstate(divide="ignore"):  # an ideal splitter reaches exactly zero: infinite
        swept = min(10 * np.log10(cross.max() / cross.min()), 10 * np.log10(bar.max() / bar.min()))
    closed = extinction_ratio_db(e1, e2)
    if np.isfinite(closed) and closed < 60:
        assert np.isclose(swept, closed, atol=0.05)
    else:
        assert swept > 55


def test_default_splitter_sigma_gives_the_typical_35_db() -> None:
    # both couplers off by sigma: the bar port can no longer be nulled, 20 log10(1 / 2 sigma) dB
    sigma = DEFAULT_SPLITTER_SIGMA
    assert 34.5 < extinction_ratio_db(sigma, sigma) < 35.5


@given(st.floats(0, 1), errors, errors)
def test_theta_for_coupling_reaches_k_when_reachable(k: float, e1: float, e2: float) -> None:
    imp = MZIImperfections(e1, e2)
    theta = theta_for_coupling(k, imp)
    reached = abs(imperfect_transfer(theta, 0.0, imp)[1, 0]) ** 2
    k1, k2 = 0.5 + e1, 0.5 + e2
    t1, s1, t2, s2 = np.sqrt(1 - k1), np.sqrt(k1), np.sqrt(1 - k2), np.sqrt(k2)
    lo, hi = (t1 * s2 - s1 * t2) ** 2, (t1 * s2 + s1 * t2) ** 2
    assert np.isclose(reached, np.clip(k, lo, hi), atol=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"splitter_error_in": 0.6}, "splitter_error_in must be in"),
        ({"loss_bar_db": -1}, "loss_bar_db must be >= 0 dB"),
        ({"loss_cross_db": float("nan")}, "loss_cross_db must be finite"),
    ],
)
def test_bad_imperfections_are_refused(kwargs, words) -> None:
    with pytest.raises(SettingsError, match=words):
        MZIImperfections(**kwargs)


def test_bad_phases_are_refused() -> None:
    with pytest.raises(SettingsError, match="theta must be finite"):
        transfer(np.inf, 0.0)
    with pytest.raises(SettingsError, match=r"coupling k must be in \[0, 1\]"):
        theta_from_coupling(1.5)


@given(st.floats(-0.2, 0.2), st.floats(-0.2, 0.2))
def test_each_state_leaks_into_the_other_port_as_state_extinction_says(e1, e2) -> None:
    # bar (theta 0) leaks into the cross port, cross (pi/2) into the bar port; near-ideal
    # couplers' nulls are below cos(pi/2)'s rounding
    assume(min(abs(e1 - e2), abs(e1 + e2)) > 1e-4)
    imp = MZIImperfections(e1, e2)
    bar, cross = (np.abs(imperfect_transfer(t, 0.0, imp)) ** 2 for t in (0.0, np.pi / 2))
    expected = 10 * np.log10([cross[1, 0] / bar[1, 0], bar[0, 0] / cross[0, 0]])
    np.testing.assert_allclose(state_extinction_db(e1, e2), expected, rtol=1e-6)
    assert extinction_ratio_db(e1, e2) == state_extinction_db(e1, e2).min()
