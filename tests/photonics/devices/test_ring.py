import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from photonics import SettingsError, ShapeError
from photonics.devices.ring import (
    DEFAULT_HEATER_NM_PER_MW,
    MicroRing,
    RingThermal,
    ghz_to_nm,
    heater_nm_per_mW,
    lorentzian_peak,
)

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
    assert RingThermal.integrated().heater_nm_per_mW == pytest.approx(1.8213, abs=1e-4)
    # the default, a TiN top heater: one FSR of round trip (2 pi) for 2 P_pi of the MZI heater
    assert pytest.approx(MicroRing().fsr_nm() / (2 * 21.4)) == DEFAULT_HEATER_NM_PER_MW
    assert 0.1 <= DEFAULT_HEATER_NM_PER_MW <= 0.3  # the published range for top heaters
    # ~10 GHz/K and the 0.08 nm/K default agree within 0.2 %
    assert float(ghz_to_nm(10.0)) == pytest.approx(RingThermal().ambient_nm_per_K, rel=2e-3)
    # P_pi of a ring heater: half an FSR, the MZI heater's 21.4 mW (integrated: 2.5 mW)
    assert RingThermal().p_pi_mW(MicroRing()) == pytest.approx(21.4)
    assert RingThermal.integrated().p_pi_mW(MicroRing()) == pytest.approx(2.499, abs=1e-3)


@given(st.floats(0, 5), st.floats(-20, 20))
def test_a_heater_and_the_ambient_move_the_drop_peak_by_their_shift(P: float, dT: float) -> None:
    t = RingThermal()
    s = t.heater_nm_per_mW * P + t.ambient_nm_per_K * dT
    ring = MicroRing()
    # a phase 2 pi s / FSR moves the 1550 nm resonance to 1550 / (1 - s / 1550) = 1550 + s + ...
    expected = 1550 / (1 - s / 1550)
    wl = expected + np.linspace(-0.05, 0.05, 100_001)
    drop = ring.drop_power(wl, s)
    peak = wl[np.argmax(drop)]
    assert peak == pytest.approx(expected, abs=2e-6)
    assert drop.max() > 0.95
    assert abs(peak - 1550 - s) < 1e-5 + 2 * s**2 / 1550


# --- the lock's fit ---------------------------------------------------------------------------


@given(
    st.floats(-5, 5),
    st.floats(0.01, 2),
    st.floats(1e-3, 10),
    st.floats(-3, 3),
    st.floats(0.05, 1),
)
def test_three_readings_of_a_lorentzian_give_its_centre_and_width(
    centre: float, half_width: float, peak: float, start: float, step: float
) -> None:
    x = centre + half_width * (start + step * np.arange(3))
    reading = peak / (1 + ((x - centre) / half_width) ** 2)
    found = lorentzian_peak(x, reading)
    assert found is not None
    assert found[0] == pytest.approx(centre, abs=1e-6 * half_width)
    assert found[1] == pytest.approx(half_width, rel=1e-6)


def test_readings_that_do_not_bracket_a_resonance_give_none() -> None:
    assert lorentzian_peak([0.0, 1.0, 2.0], [1.0, 0.5, 1.0]) is None  # a dip, not a peak
    assert lorentzian_peak([0.0, 1.0, 2.0], [1.0, 1.0, 1.0]) is None  # no resonance at all


# --- bad inputs -----------------------------------------------------------------------------


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
        (lambda: lorentzian_peak([0.0, 1.0], [1.0, 2.0]), ShapeError, r"length >= 3"),
    ],
)
def test_bad_inputs_raise_the_specific_error(make, error, match) -> None:
    with pytest.raises(error, match=match):
        make()
