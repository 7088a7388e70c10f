import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from photonics import LimitError, SettingsError, ShapeError
from photonics.devices.thermal import (
    NEGLIGIBLE_CROSSTALK,
    CrosstalkModel,
    HeaterLayout,
    Heaters,
    crosstalk_matrix,
    currents_for_phase,
    differential_crosstalk,
    settling_time_s,
    step_response,
    total_phase,
)

currents = st.floats(0, 10)


def test_known_values() -> None:
    h = Heaters(1)
    assert np.isclose(h.power_mW([10.0]), 55.0)  # R = 0.5 * 100 + 500 = 550 ohm
    assert np.isclose(h.voltage_V([10.0]), 5.5)
    assert np.isclose(h.own_phase(h.current_for_power([21.4])), np.pi)
    assert np.isclose(CrosstalkModel().coupling(20.0), 0.3 * np.exp(-1) - 2e-4 + 1e-3)
    law = CrosstalkModel()
    # no hard cut-off: the law ends where it falls below the negligible level
    assert law.coupling(0.0) == 0 and law.coupling(121.0) > 0
    reach = law.reach_um
    assert law.law(reach) >= NEGLIGIBLE_CROSSTALK > law.law(reach + 0.5)
    assert law.coupling(reach + 0.5) == 0 and np.all(law.law(np.arange(reach + 1, 2e3)) < 1e-4)
    assert CrosstalkModel(cutoff_um=50.0).coupling(60.0) == 0


def test_a_distant_heater_warms_both_arms_of_an_mzi_alike() -> None:
    # MZI heater 0 on its top arm at (0, 0), its bottom arm at (0, 20); aggressors far along x
    law = CrosstalkModel()
    for x, sign in ((30.0, 1), (100.0, 1)):
        layout = HeaterLayout(np.array([[0.0, 0.0], [x, 0.0]]), np.array([[0.0, 20.0]]))
        K = differential_crosstalk(layout, law).toarray()
        top, bottom = law.coupling(x), law.coupling(np.hypot(x, 20.0))
        assert np.isclose(K[0, 1], top - bottom) and 0 < K[0, 1] < top
        assert np.isclose(K[1, 0], top)  # heater 1 heats a lone waveguide
        assert sign * K[0, 1] > 0
    # an aggressor beside the other arm makes the difference negative
    layout = HeaterLayout(np.array([[0.0, 0.0], [0.0, 40.0]]), np.array([[0.0, 20.0]]))
    K = differential_crosstalk(layout, law).toarray()
    assert np.isclose(K[0, 1], law.coupling(40.0) - law.coupling(20.0)) and K[0, 1] < 0
    assert K[0, 0] == 0 and K[1, 1] == 0


@given(st.integers(0, 2**32 - 1), st.floats(10, 80))
def test_differential_crosstalk_is_smaller_than_one_arm(seed, pitch) -> None:
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0, 300, (8, 2))
    other = pos[:5] + np.array([0.0, pitch])
    one = crosstalk_matrix(pos, CrosstalkModel()).toarray()
    both = differential_crosstalk(HeaterLayout(pos, other), CrosstalkModel()).toarray()
    assert np.array_equal(both[5:], one[5:])  # lone waveguides: the kernel alone
    assert np.all(both[:5] <= one[:5] + 1e-15)  # the other arm's warmth only subtracts


@given(hnp.arrays(float, st.integers(1, 6), elements=currents))
def test_power_current_round_trip(current: np.ndarray) -> None:
    h = Heaters(len(current), r_rise_ohm_per_mA2=np.linspace(0, 1, len(current)))
    power = h.power_mW(current)
    assert np.all(power >= 0)
    assert np.allclose(h.current_for_power(power), current, atol=1e-9)
    assert np.allclose(power, current * h.voltage_V(current))


@given(st.integers(2, 12), st.integers(0, 2**32 - 1), st.floats(15, 60))
def test_crosstalk_compensated_currents_reach_the_target_phase(count, seed, pitch) -> None:
    rng = np.random.default_rng(seed)
    pos = np.c_[np.arange(count) * pitch, rng.uniform(0, 5, count)]
    K = crosstalk_matrix(pos, CrosstalkModel())
    assert np.allclose(K.toarray(), K.toarray().T) and np.all(K.diagonal() == 0)
    h = Heaters(
        count, bias_rad=rng.uniform(0, 2 * np.pi, count), p_pi_mW=rng.uniform(10, 30, count)
    )
    target = rng.uniform(-10, 10, count)
    current = currents_for_phase(h, target, K, delta_T_K=0.5)
    assert np.all(current >= 0)
    reached = total_phase(h, current, K, delta_T_K=0.5)
    assert np.allclose(np.angle(np.exp(1j * (reached - target))), 0, atol=1e-9)
    naive = total_phase(h, currents_for_phase(h, target), K, delta_T_K=0.5)
    assert np.abs(np.angle(np.exp(1j * (naive - target)))).max() > 1e-3  # crosstalk matters


@given(hnp.arrays(float, 4, elements=st.floats(-5, 20)), st.floats(1, 500))
def test_limits_are_never_passed(current: np.ndarray, budget: float) -> None:
    h = Heaters(4, max_current_mA=[10, 10, 5, 8], power_budget_mW=budget)
    try:
        h.check_limits(current)
    except LimitError:
        return
    assert np.all((current >= 0) & (current <= h.max_current_mA))
    assert h.power_mW(current).sum() <= budget


def test_limit_messages_name_the_channel_and_the_limit() -> None:
    h = Heaters(3, max_current_mA=[10, 4, 10], power_budget_mW=20)
    with pytest.raises(LimitError, match=r"channel 1: 5 mA is outside 0\.\.4 mA"):
        h.check_limits([0, 5, 0])
    with pytest.raises(LimitError, match=r"total heater power 26\.25 mW exceeds the budget 20 mW"):
        h.check_limits([0, 0, 7.0710678118654755])


@given(hnp.arrays(float, 3, elements=currents), st.integers(4, 20))
def test_dac_quantisation_is_within_half_a_step_and_idempotent(current, bits) -> None:
    h = Heaters(3, dac_bits=bits)
    q = h.quantise(current)
    lsb = h.full_scale_mA / (2**bits - 1)
    assert np.all(np.abs(q - current) <= lsb / 2 + 1e-12)
    assert np.array_equal(h.quantise(q), q)


def test_first_order_step_response() -> None:
    tau = np.array([5.6e-6, 2.2e-6])
    t = np.array([0.0, 5.6e-6, 1.0])
    phase = step_response([0.0, 1.0], [1.0, 0.0], tau, t)
    assert np.allclose(phase[0], [0, 1])
    assert np.isclose(phase[1, 0], 1 - np.exp(-1))
    assert np.allclose(phase[2], [1, 0])
    assert np.isclose(settling_time_s(tau, 1e-3), 5.6e-6 * np.log(1e3))


def test_ambient_drift_adds_its_coefficient_per_kelvin() -> None:
    h = Heaters(2, drift_rad_per_K=[0.01, -0.02])
    assert np.allclose(total_phase(h, [1, 1], delta_T_K=2) - total_phase(h, [1, 1]), [0.02, -0.04])


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: Heaters(2, p_pi_mW=[1, 0]), SettingsError, "p_pi_mW must be > 0"),
        (lambda: Heaters(2, max_current_mA=-1), SettingsError, "max_current_mA must be >= 0"),
        (lambda: Heaters(2, dac_bits=0), SettingsError, "dac_bits must be an integer in 1..32"),
        (lambda: Heaters(-1), ShapeError, "count must be a non-negative integer"),
        (lambda: Heaters(2).power_mW([1.0]), ShapeError, "expected 2 currents"),
        (lambda: Heaters(1).current_for_power([-1.0]), SettingsError, "negative power"),
        (lambda: crosstalk_matrix(np.zeros((3, 3)), CrosstalkModel()), ShapeError, r"\(H, 2\)"),
        (lambda: CrosstalkModel(cutoff_um=-1), SettingsError, "cutoff_um must be >= 0"),
        (lambda: CrosstalkModel(p3_per_um=1e-5), SettingsError, "give it a cutoff_um"),
        (lambda: HeaterLayout(np.zeros((2, 2)), np.zeros((3, 2))), ShapeError, "3 other arms"),
        (lambda: step_response([0], [1], [0.0], [0.0]), SettingsError, "time constants > 0"),
    ],
)
def test_bad_input_is_refused(call, error, words) -> None:
    with pytest.raises(error, match=words):
        call()


def test_limit_message_names_the_channel_of_a_batch() -> None:
    h = Heaters(3, max_current_mA=[10, 10, 4])
    with pytest.raises(LimitError, match="channel 2: 5 mA"):
        h.check_limits([[0, 0, 0], [1, 1, 5]])
