import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from photonics import Permutation, SettingsError, ShapeError
from photonics.ring import (
    DEFAULT_HEATER_NM_PER_MW,
    BitStatsLock,
    DataStream,
    DitherLock,
    LockScenario,
    MicroRing,
    PIDLock,
    RingCrossbar,
    RingThermal,
    SweepSearch,
    ghz_to_nm,
    heater_mW_for_shift,
    heater_nm_per_mW,
    resonance_shift_nm,
    run_lock,
)
from photonics.thermal import CrosstalkModel, crosstalk_matrix
from tests.strategies import permutations

# --- ring spectra ---------------------------------------------------------------------------

rings = st.builds(
    MicroRing,
    radius_um=st.floats(1, 200),
    n_eff=st.floats(1.5, 3.5),
    n_g=st.floats(1.5, 5.0),
    loss_dB_per_cm=st.floats(0, 100),
    r1=st.floats(0, 0.999),
    r2=st.none() | st.floats(0, 0.999),
)
wavelengths = st.lists(st.floats(1260, 1650), min_size=1, max_size=20).map(np.array)


def test_default_ring_known_values() -> None:
    ring = MicroRing()
    L_nm = 2 * math.pi * 10e3
    # the defaults put resonance order 97 exactly at 1550 nm
    assert ring.resonance_nm() == pytest.approx(1550.0, abs=1e-9)
    assert ring.phase(1550.0) == pytest.approx(2 * math.pi * 97, abs=1e-9)
    # textbook formulas (Bogaerts 2012) evaluated by hand for R = 10 um, n_g = 4.2, 2 dB/cm
    a = 10 ** (-2.0 * L_nm * 1e-7 / 20)
    x = 0.97 * 0.97 * a
    assert ring.a == pytest.approx(a, rel=1e-12)
    assert ring.fsr_nm() == pytest.approx(1550**2 / (4.2 * L_nm), rel=1e-12)
    assert ring.fsr_nm() == pytest.approx(9.1040, abs=1e-4)
    fwhm = (1 - x) * 1550**2 / (math.pi * 4.2 * L_nm * math.sqrt(x))
    assert ring.fwhm_nm() == pytest.approx(fwhm, rel=1e-12)
    assert ring.fwhm_nm() == pytest.approx(0.18076, abs=1e-5)
    assert ring.loaded_q() == pytest.approx(1550 / fwhm, rel=1e-12)
    assert ring.finesse == pytest.approx(ring.fsr_nm() / fwhm, rel=1e-12)
    assert ring.intrinsic_q() == pytest.approx(2 * math.pi * 4.2 / (1550e-9 * 46.0517), rel=1e-4)
    # the spectrum itself agrees: measured half-maximum width and mean order spacing
    wl = np.linspace(1549.7, 1550.3, 600_001)
    drop = ring.drop_power(wl)
    above = wl[drop >= drop.max() / 2]
    assert above[-1] - above[0] == pytest.approx(fwhm, rel=1e-3)
    red, blue = ring.resonance_nm(1559.2), ring.resonance_nm(1540.9)
    assert (red - blue) / 2 == pytest.approx(ring.fsr_nm(), rel=1e-4)
    assert ring.detuning_nm(1550.05) == pytest.approx(-0.05, rel=1e-3)


@given(rings, wavelengths, st.floats(-10, 10))
def test_power_out_never_exceeds_power_in(ring: MicroRing, wl: np.ndarray, shift: float) -> None:
    through = ring.through_power(wl, shift)
    drop = ring.drop_power(wl, shift) if ring.is_add_drop else 0.0
    assert np.all(through >= -1e-15)
    assert np.all(drop >= -1e-15)
    assert np.all(through + drop <= 1 + 1e-12)
    S = ring.scattering(wl, shift)
    assert np.allclose(np.abs(S[..., 0, 0]) ** 2, through, atol=1e-12)
    if ring.is_add_drop:
        assert np.allclose(np.abs(S[..., 1, 0]) ** 2, drop, atol=1e-12)


@given(st.floats(0, 0.999), st.floats(0, 0.999), wavelengths)
def test_lossless_add_drop_ring_is_unitary(r1: float, r2: float, wl: np.ndarray) -> None:
    ring = MicroRing(loss_dB_per_cm=0.0, r1=r1, r2=r2)
    S = ring.scattering(wl)
    eye = np.eye(2)
    assert np.allclose(S @ np.conj(np.swapaxes(S, -1, -2)), eye, atol=1e-9)
    assert np.allclose(S[..., 0, 1], S[..., 1, 0])  # reciprocal


@given(st.floats(0.5, 50), st.none() | st.floats(0.5, 0.999), st.floats(3, 50))
def test_critical_coupling_has_a_through_null(loss: float, r2: float | None, R: float) -> None:
    ring = MicroRing(radius_um=R, loss_dB_per_cm=loss, r1=0.9, r2=r2).critically_coupled()
    assert ring.coupling_regime == "critical"
    assert ring.r1 == pytest.approx(ring.a if r2 is None else r2 * ring.a)
    res = ring.resonance_nm()
    assert ring.through_power(res) < 1e-9  # float rounding of phi, amplified by the finesse
    # away from critical coupling the null fills in
    for r1, regime in ((0.8 * ring.r1, "over"), (ring.r1 + 0.5 * (1 - ring.r1), "under")):
        other = MicroRing(R, ring.n_eff, ring.n_g, loss, r1, r2)
        assert other.coupling_regime == regime
        assert other.through_power(res) > 1e-4


# --- thermal tuning -------------------------------------------------------------------------


def test_tuning_coefficients() -> None:
    # 4.4 uW/GHz is 227.3 GHz/mW, i.e. 1.821 nm/mW at 1550 nm
    assert heater_nm_per_mW(4.4) == pytest.approx(1550**2 * (1e3 / 4.4) / 299_792_458.0)
    assert abs(DEFAULT_HEATER_NM_PER_MW - 1.8213) < 1e-4
    # ~10 GHz/K and the 0.08 nm/K default agree within 0.2 %
    assert float(ghz_to_nm(10.0)) == pytest.approx(RingThermal().ambient_nm_per_K, rel=2e-3)
    # P_pi of a ring heater: half an FSR, 2.5 mW
    assert RingThermal().p_pi_mW(MicroRing()) == pytest.approx(2.499, abs=1e-3)


@given(st.floats(0, 5), st.floats(-20, 20))
def test_shift_is_linear_in_heater_power_and_temperature(P: float, dT: float) -> None:
    t = RingThermal()
    shift = resonance_shift_nm(P, dT, t)
    assert shift == pytest.approx(DEFAULT_HEATER_NM_PER_MW * P + 0.08 * dT, rel=1e-12, abs=1e-12)
    assert resonance_shift_nm(2 * P, 2 * dT, t) == pytest.approx(2 * shift, abs=1e-12)
    # the spectrum really moves by that much: the drop peak near 1550 nm follows the shift
    ring = MicroRing()
    s = float(shift)
    # a phase 2 pi s / FSR moves the 1550 nm resonance to 1550 / (1 - s / 1550) = 1550 + s + ...
    expected = 1550 / (1 - s / 1550)
    wl = expected + np.linspace(-0.05, 0.05, 100_001)
    drop = ring.drop_power(wl, s)
    peak = wl[np.argmax(drop)]
    assert peak == pytest.approx(expected, abs=2e-6)
    assert drop.max() > 0.95
    assert abs(peak - 1550 - s) < 1e-5 + 2 * s**2 / 1550


def test_crosstalk_adds_the_neighbours_shift() -> None:
    K = crosstalk_matrix([[0, 0], [30, 0], [500, 0]], CrosstalkModel())
    k = K[0, 1]
    assert 0.05 < k < 0.1
    shift = resonance_shift_nm([0.0, 1.0, 2.0], 0.0, RingThermal(), K)
    eta = DEFAULT_HEATER_NM_PER_MW
    assert shift == pytest.approx([k * eta, eta, 2 * eta])


@given(st.lists(st.floats(0, 9), min_size=9, max_size=9), st.floats(-3, 3))
def test_compensated_heaters_reach_every_target(target: list[float], dT: float) -> None:
    pos = np.array([[x, y] for x in range(3) for y in range(3)], float) * 25.0
    K = crosstalk_matrix(pos, CrosstalkModel())
    period = MicroRing().reference_fsr_nm
    P = heater_mW_for_shift(np.array(target), RingThermal(), K, dT, period_nm=period)
    assert np.all(P >= 0)
    got = resonance_shift_nm(P, dT, RingThermal(), K)
    err = np.mod(got - np.array(target) + period / 2, period) - period / 2
    assert np.abs(err).max() < 1e-9


# --- the crossbar ---------------------------------------------------------------------------

XBAR_SEED = 7


def _expected_drop_db(xb: RingCrossbar, i: int, j: int) -> float:
    # on-resonance ring drop, one crossing per crosspoint passed (row 0..j, column i+1..n-1)
    ring = xb.ring
    return 10 * math.log10(ring.drop_power(ring.resonance_nm())) - xb.crossing_loss_db * (
        j + xb.n - i
    )


def _check_routing(xb: RingCrossbar, perm: Permutation, margin_db: float, xt_db: float) -> None:
    rep = xb.route(perm)
    assert np.abs(rep.detuning_nm).max() < 1e-9
    assert len(rep.drop_db) == len(perm.pairs())
    for (i, j), d in zip(rep.pairs, rep.drop_db, strict=True):
        # parked rings only take a little on the way: the drop is the analytic one within margin
        assert _expected_drop_db(xb, i, j) - margin_db <= d <= _expected_drop_db(xb, i, j) + 1e-9
    assert rep.worst_crosstalk_db < xt_db
    out, through = xb.power_transfer(rep.heater_mW)
    assert np.all(out.sum(axis=0) + through.sum(axis=0) <= 1 + 1e-12)


def test_4x4_crossbar_routes_every_permutation() -> None:
    xb = RingCrossbar.sample(4, np.random.default_rng(XBAR_SEED))
    for targets in itertools.permutations(range(4)):
        _check_routing(xb, Permutation(list(targets)), margin_db=0.1, xt_db=-24.0)


XBAR8 = RingCrossbar.sample(8, np.random.default_rng(XBAR_SEED))


@given(permutations(8))
def test_8x8_crossbar_routes_any_permutation(perm: Permutation) -> None:
    _check_routing(XBAR8, perm, margin_db=0.15, xt_db=-20.0)


def test_crossbar_removes_ambient_temperature() -> None:
    xb = RingCrossbar.sample(4, np.random.default_rng(XBAR_SEED))
    perm = Permutation([2, 0, 3, 1])
    warm = xb.route(perm, delta_T_K=3.0)
    assert np.abs(warm.detuning_nm).max() < 1e-9
    # settings made for 25 C but run at +3 K are 0.24 nm off: the routed drop collapses
    stale = xb.report(perm, xb.heater_settings(perm), delta_T_K=3.0)
    assert stale.min_drop_db < warm.min_drop_db - 3


def test_compensation_beats_naive_settings_on_a_dense_crossbar() -> None:
    xb = RingCrossbar.sample(8, np.random.default_rng(XBAR_SEED), pitch_um=30.0)
    for seed in range(3):
        perm = Permutation.random(8, np.random.default_rng(seed))
        comp = xb.route(perm, compensate=True)
        naive = xb.route(perm, compensate=False)
        # naive settings leave rings nm away (neighbours' heat adds up to ~60 % of a shift)
        assert np.abs(naive.detuning_nm).max() > 1.0
        assert np.abs(comp.detuning_nm).max() < 1e-9
        assert comp.min_drop_db > -2.0 and naive.min_drop_db < -20.0
        assert comp.worst_crosstalk_db < -20.0 and naive.worst_crosstalk_db > 0.0


# --- locking --------------------------------------------------------------------------------

CONTROLLERS = {
    "dither": (DitherLock(), LockScenario()),
    "pid": (PIDLock(), LockScenario()),
    # a one's power of 2 mW: 1.1 mW average at half ones, the CW runs' detected power
    "bitstats": (BitStatsLock(), LockScenario(data=DataStream(), laser_mW=2.0)),
}


@pytest.mark.parametrize("name", CONTROLLERS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_controller_locks_from_cold_and_holds_within_1pct_fwhm(name: str, seed: int) -> None:
    ctrl, sc = CONTROLLERS[name]
    tr = run_lock(ctrl, sc, np.random.default_rng(seed))
    fwhm_pm = sc.ring.fwhm_nm() * 1e3
    # a cold start: 1 nm (5.5 FWHM) blue, the drop port dark
    assert tr.error_pm[0] == pytest.approx(-1000.0, abs=1e-6)
    assert tr.detected_mW[0] < 0.05 * sc.laser_mW
    assert tr.locked and tr.lock_time_s < 0.7e-3
    assert tr.residual_fwhm < 0.01
    k = round(tr.lock_time_s / sc.dt_s)
    assert np.abs(tr.error_pm[k:]).max() < 0.01 * fwhm_pm
    # the disturbances were real: ~70 pm of ambient after lock and 70 pm from the neighbour
    # (0.77 FWHM, 77 times the tolerance) had to be taken off the heater
    drift_nm = sc.tuning.ambient_nm_per_K * sc.ambient_ramp_K * (1 - k / sc.n_steps)
    drift_nm += sc.neighbour_K * sc.tuning.heater_nm_per_mW * sc.neighbour_mW
    assert drift_nm > 0.7 * sc.ring.fwhm_nm()
    assert tr.heater_mW[-1] - tr.heater_mW[k] == pytest.approx(
        -drift_nm / sc.tuning.heater_nm_per_mW, abs=0.01
    )


@pytest.mark.parametrize("ctrl", [DitherLock(), PIDLock()], ids=["dither", "pid"])
def test_cw_controllers_hold_without_crosstalk_feedforward(ctrl: object) -> None:
    sc = LockScenario(feedforward_error=None)
    for seed in (0, 1):
        tr = run_lock(ctrl, sc, np.random.default_rng(seed))
        assert tr.locked and tr.lock_time_s < 0.7e-3
        assert tr.residual_fwhm < 0.01


def test_bit_statistics_normalisation_is_what_makes_average_power_locking_work() -> None:
    sc = LockScenario(data=DataStream(), laser_mW=2.0)
    assert np.ptp(run_lock(BitStatsLock(), sc, np.random.default_rng(0)).ones_fraction) > 0.3
    for seed in (0, 1):
        tr = run_lock(BitStatsLock(normalise=False), sc, np.random.default_rng(seed))
        assert not (tr.locked and tr.residual_fwhm < 0.01)


def test_search_finds_a_resonance_anywhere_in_the_fsr() -> None:
    # 5 nm blue: more than half an FSR of heating before the resonance is reached
    sc = LockScenario(initial_detuning_nm=-5.0, n_steps=1600, neighbour_mW=0.0)
    tr = run_lock(DitherLock(search=SweepSearch(rate_nm_per_s=1e4)), sc, np.random.default_rng(0))
    assert tr.locked and tr.residual_fwhm < 0.01
    assert tr.heater_mW[-1] == pytest.approx(
        (5.0 - 0.08 * 1.0) / DEFAULT_HEATER_NM_PER_MW, abs=0.01
    )


# --- bad inputs -----------------------------------------------------------------------------


def _xbar() -> RingCrossbar:
    return RingCrossbar(4)


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: MicroRing(radius_um=-1.0), SettingsError, r"radius_um .*-1"),
        (lambda: MicroRing(r1=1.0), SettingsError, r"r1 .*\[0, 1\).*1\.0"),
        (lambda: MicroRing(r2=1.5), SettingsError, r"r2 .*1\.5"),
        (lambda: MicroRing(loss_dB_per_cm=-2.0), SettingsError, r"loss_dB_per_cm .*-2"),
        (lambda: MicroRing(n_g=float("nan")), SettingsError, r"n_g .*nan"),
        (lambda: MicroRing().drop_power(-1.0), SettingsError, r"wavelength_nm .*-1"),
        (lambda: MicroRing().fsr_nm(0.0), SettingsError, r"wavelength_nm .*0"),
        (lambda: heater_nm_per_mW(0.0), SettingsError, r"uW_per_GHz .*0"),
        (lambda: resonance_shift_nm([1.0, -0.5]), SettingsError, r"-0\.5"),
        (
            lambda: resonance_shift_nm(
                [1.0, 2.0], crosstalk=crosstalk_matrix([[0, 0]], CrosstalkModel())
            ),
            ShapeError,
            r"\(1, 1\).*\(2, 2\)",
        ),
        (
            lambda: heater_mW_for_shift(
                np.array([0.0, 1.0]),
                crosstalk=crosstalk_matrix([[0, 0], [10, 0]], CrosstalkModel()),
            ),
            SettingsError,
            r"heater 0 .*< 0",
        ),
        (lambda: RingCrossbar(0), ShapeError, r"n .*0"),
        (lambda: RingCrossbar(4, np.zeros((3, 3))), ShapeError, r"\(3, 3\).*\(4, 4\)"),
        (lambda: RingCrossbar(4, ring=MicroRing(r2=None)), SettingsError, r"add-drop"),
        (lambda: RingCrossbar(4, pitch_um=0.0), SettingsError, r"pitch_um .*0"),
        (lambda: _xbar().route(Permutation([0, 1, 2])), ShapeError, r"3 ports.*4x4"),
        (lambda: _xbar().report(Permutation([0, 1, 2, 3]), np.zeros(4)), ShapeError, r"\(4,\)"),
        (
            lambda: LockScenario(initial_detuning_nm=20.0),
            SettingsError,
            r"initial_detuning_nm .*20",
        ),
        (lambda: LockScenario(n_steps=0), SettingsError, r"n_steps .*0"),
        (lambda: DataStream(ones_min=0.0), SettingsError, r"ones_min .*0"),
        (lambda: DataStream(ones_min=0.6, ones_max=0.4), SettingsError, r"ones_max .*0\.4"),
        (lambda: DitherLock(period_steps=2), SettingsError, r"period_steps .*2"),
        (lambda: PIDLock(kd=-1.0), SettingsError, r"kd .*-1"),
        (lambda: BitStatsLock(window_steps=1), SettingsError, r"window_steps .*1"),
        (lambda: SweepSearch(threshold=1.5), SettingsError, r"threshold .*1\.5"),
        (
            lambda: run_lock(object(), LockScenario(), np.random.default_rng(0)),
            SettingsError,
            r"start",
        ),
        (lambda: run_lock(DitherLock(), LockScenario(), 0), SettingsError, r"Generator.*0"),
    ],
)
def test_bad_inputs_raise_the_specific_error(make, error, match) -> None:
    with pytest.raises(error, match=match):
        make()
