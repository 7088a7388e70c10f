"""Heaters in time: step responses, the heat of a sequence of writes, settling."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from photonics import SettingsError, ShapeError
from photonics.devices.thermal import (
    CrosstalkModel,
    Heaters,
    crosstalk_matrix,
    phase_of_heat,
    settling_time_s,
    step_response,
)
from photonics.devices.transients import (
    ThermalDynamics,
    chip_heat_K,
    chip_lag_mW,
    heat_at,
    rise,
    settle_time_s,
)

taus = st.floats(1e-7, 1e-4)


@given(taus, taus, st.floats(0, 20))
def test_two_poles_rise_monotonically_and_later_than_either(tau, tau2, t_in_tau) -> None:
    t = t_in_tau * tau
    one, two = float(rise(t, tau)), float(rise(t, tau, tau2))
    assert 0 <= two <= one <= 1
    assert two <= float(rise(t, tau2)) + 1e-12
    assert float(rise(t * 1.1 + 1e-9, tau, tau2)) >= two - 1e-12  # never falls back
    # equal poles are the limit of nearly equal ones
    assert float(rise(t, tau, tau * (1 + 1e-7))) == pytest.approx(
        float(rise(t, tau, tau)), abs=1e-6
    )


def test_one_pole_is_the_first_order_step_response() -> None:
    t = np.linspace(0, 5e-5, 11)
    assert np.allclose(step_response([0.0], [2.0], [5.6e-6], t)[:, 0], 2 * rise(t, 5.6e-6))
    assert float(rise(-1.0, 5.6e-6)) == 0.0  # nothing before the step
    assert float(rise(5.6e-6, 5.6e-6)) == pytest.approx(1 - np.exp(-1))


def test_the_heat_of_writes_adds_their_step_responses() -> None:
    d = ThermalDynamics()
    tau = np.array([5.6e-6, 2.2e-6])
    applied = np.array([[0.0, 0.0], [1e-5, 2e-5], [5e-5, 5e-5]])
    power = np.array([[1.0, 0.0], [3.0, 2.0], [1.0, 0.0]])  # up, then back
    t = np.linspace(0, 1e-4, 50)
    heat = heat_at(t, applied, power, tau, d)
    own0 = 1 + 2 * rise(t - 1e-5, tau[0]) - 2 * rise(t - 5e-5, tau[0])
    assert np.allclose(heat.own[:, 0], own0)
    xt1 = 2 * rise(t - 2e-5, tau[1], d.crosstalk_tau_s) - 2 * rise(
        t - 5e-5, tau[1], d.crosstalk_tau_s
    )
    assert np.allclose(heat.crosstalk[:, 1], xt1)
    assert np.all(heat.crosstalk[t < 5e-5, 1] <= heat.own[t < 5e-5, 1] + 1e-12)  # spreads later
    # long after: everything back where it started, the chip at its first state's heating
    late = heat_at([1.0], applied, power, tau, d)
    assert np.allclose(late.own, power[0]) and np.allclose(late.crosstalk, power[0])
    assert late.chip_K[0] == pytest.approx(1e-3 * d.chip_K_per_W * power[0].sum())
    with pytest.raises(ShapeError, match="applied_s and power_mW"):
        heat_at(t, applied[:, :1], power, tau, d)


def _chip(pitch_um: float, count: int = 5) -> tuple[Heaters, object]:
    h = Heaters(count, tau_s=np.linspace(2.2e-6, 5.6e-6, count))
    positions = np.c_[np.arange(count) * pitch_um, np.zeros(count)]
    return h, crosstalk_matrix(positions, CrosstalkModel())


@given(
    st.lists(st.floats(0, 30), min_size=5, max_size=5),
    st.floats(15, 80),
    st.floats(1e-4, 1e-1),
    st.floats(0, 8e-6),
)
def test_every_phase_is_within_tolerance_once_settled(powers, pitch, tolerance, tau2) -> None:
    h, K = _chip(pitch)
    d = ThermalDynamics(tau2_s=tau2)
    new = np.array(powers)
    step = np.pi * new / h.p_pi_mW
    settle = settle_time_s(step, h.tau_s, K, d, tolerance)
    applied = np.zeros((2, 5))
    heat = heat_at([settle, 10.0], applied, np.array([np.zeros(5), new]), h.tau_s, d)
    phase = phase_of_heat(h, heat.own, heat.crosstalk, K)
    assert np.abs(phase[0] - phase[1]).max() <= tolerance + 1e-12
    if np.abs(step).max() > tolerance:  # and no sooner than the slowest own step needs
        worst = np.argmax(np.abs(step) * 1.0)
        assert settle >= h.tau_s[worst] * np.log(np.abs(step[worst]) / tolerance) * (1 - 1e-9)


def test_settling_without_crosstalk_is_the_first_order_figure() -> None:
    d = ThermalDynamics()
    assert settle_time_s([np.pi], [5.6e-6], None, d, 1e-3 * np.pi) == pytest.approx(
        settling_time_s(5.6e-6), rel=1e-4
    )
    # the crosstalk's diffusion pole makes a neighbour settle later
    _, K = _chip(30.0, 2)
    assert settle_time_s([np.pi, 0.0], [5.6e-6] * 2, K, d, 1e-3 * np.pi) > settling_time_s(5.6e-6)
    assert settle_time_s([1e-4], [5.6e-6], None, d, 1e-3) == 0.0  # within tolerance already


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ThermalDynamics(tau2_s=-1.0), "tau2_s must be a finite number >= 0"),
        (lambda: ThermalDynamics(chip_tau_s=0.0), "chip_tau_s must be > 0"),
        (lambda: ThermalDynamics(chip_K_per_W=float("nan")), "chip_K_per_W"),
        (lambda: ThermalDynamics(crosstalk_tau_s=True), "crosstalk_tau_s must be a number"),
        (lambda: settle_time_s([1.0], [1e-6], None, ThermalDynamics(), 0.0), "tolerance_rad"),
    ],
)
def test_bad_settings_are_refused(make, match) -> None:
    with pytest.raises(SettingsError, match=match):
        make()


def _settle_reference(step, tau, K, d, tolerance):
    """The settling search written plainly in numpy: the bound on a grid of times, refined."""
    from photonics.devices.transients import SETTLED_AFTER_TAU

    s, tau = np.abs(step), np.broadcast_to(tau, np.shape(step))
    K = np.zeros((s.size, s.size)) if K is None else np.abs(K.toarray())

    def error(t):
        own = s * (1 - rise(t[:, None], tau, d.tau2_s))
        return (own + (s * (1 - rise(t[:, None], tau, d.crosstalk_tau_s))) @ K.T).max(axis=1)

    changed = s > 0
    if not changed.any() or error(np.zeros(1))[0] <= tolerance:
        return 0.0
    slowest = SETTLED_AFTER_TAU * max(tau[changed].max(), d.tau2_s, d.crosstalk_tau_s)
    grid = np.geomspace(1e-3 * tau[changed].min(), slowest, 96)
    for _ in range(3):
        k = int(np.argmax(error(grid) <= tolerance))
        grid = np.linspace(grid[k - 1] if k else 0.0, grid[k], 64)
    return grid[-1]


@given(
    st.lists(st.floats(-30, 30), min_size=5, max_size=5),
    st.floats(15, 80),
    st.floats(1e-4, 1e-1),
    st.floats(0, 8e-6),
    st.booleans(),
    st.booleans(),
)
def test_the_compiled_settling_search_finds_what_the_plain_one_does(
    powers, pitch, tolerance, tau2, crosstalk, same_tau
) -> None:
    h, K = _chip(pitch)
    tau = np.full(5, 5.6e-6) if same_tau else h.tau_s
    step = np.pi * np.array(powers) / h.p_pi_mW
    d = ThermalDynamics(tau2_s=tau2)
    K = K if crosstalk else None
    found, plain = (
        settle_time_s(step, tau, K, d, tolerance),
        _settle_reference(step, tau, K, d, tolerance),
    )
    # the same grid; rounding may pick the neighbour of its finest step (under 1e-4 of it)
    assert found == pytest.approx(plain, rel=2e-4, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(1e-4, 0.05), st.lists(st.floats(0, 40), min_size=3, max_size=3)),
        min_size=1,
        max_size=12,
    ),
    st.integers(1, 12),
    st.floats(0, 0.1),
)
def test_the_dies_lag_carried_per_write_gives_the_self_heating_of_the_whole_history(
    writes, ended, after
) -> None:
    # the bench world summed every write of the die's 1.2 s horizon for each reading (half
    # its time on the 8-port calibration); the lag kept per write gives the same heat
    d = ThermalDynamics(chip_tau_s=0.03, chip_K_per_W=1.0)
    power = [np.array([5.0, 0.0, 12.0])]
    applied, t = [np.full(3, -np.inf)], 0.0
    for gap, row in writes:
        t += gap
        applied.append(t + 1e-3 * np.arange(3))  # channels one after another
        power.append(np.array(row))
    A, P = np.array(applied), np.array(power)
    b = min(ended, len(writes))  # heat wanted after write b has ended
    lag = 0.0
    for k in range(1, b + 1):
        lag = chip_lag_mW(lag, A[k - 1].max(), A[k], P[k] - P[k - 1], A[k].max(), d.chip_tau_s)
    times = A[b].max() + np.array([0.0, after, 3 * after])
    whole = chip_heat_K(times, A, P, d)
    carried = chip_heat_K(times, A[b:], P[b:], d, lag, A[b].max())
    assert np.allclose(carried, whole, rtol=1e-9, atol=1e-12)
