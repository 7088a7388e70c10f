"""Tests of photonics.chips.calibration: RingTuning and Calibration check and freeze their values;
same_calibration compares bits."""

import math

import numpy as np
import pytest

from photonics.chips.calibration import RingTuning, same_calibration
from photonics.errors import SettingsError, ShapeError
from tests.strategies import small_calibration


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1550.0, math.inf), "slope_nm_per_mW must be finite, got inf"),
        ((1550.0, 0.01, -1.0), "rms_residual_nm must be >= 0, got -1.0"),
        (("1550", 0.01), "lambda0_nm must be a number, got '1550'"),
    ],
)
def test_ring_tuning_rejects_bad_values(args, match) -> None:
    with pytest.raises(SettingsError, match=match):
        RingTuning(*args)


# ------------------------------------------------------------------------------------------------
# the Calibration object


def test_calibration_copies_and_freezes_its_arrays() -> None:
    p_pi = np.array([21.4, 22.8])
    cal = small_calibration(
        p_pi_mW=p_pi, bias_rad=[0, 1], a_ohm_per_mA2=[0.5, 0.5], c_ohm=[500, 500], crosstalk=None
    )
    p_pi[0] = 99.0
    assert cal.p_pi_mW[0] == 21.4
    assert cal.n_heaters == 2
    with pytest.raises(ValueError, match="read-only"):
        cal.bias_rad[0] = 1.0
    assert cal.crosstalk is None


@pytest.mark.parametrize(
    ("overrides", "error", "match"),
    [
        ({"p_pi_mW": [21.4, 22.8]}, ShapeError, "bias_rad has 3 values but p_pi_mW has 2"),
        ({"c_ohm": [500.0, 510.0]}, ShapeError, "c_ohm has 2 values but p_pi_mW has 3"),
        ({"bias_rad": [[0.0, 1.0, 2.0]]}, ShapeError, r"bias_rad must be 1-D .*\(1, 3\)"),
        ({"p_pi_mW": [21.4, -1.0, 1.0]}, SettingsError, r"p_pi_mW\[1\] must be > 0, got -1.0"),
        ({"c_ohm": [500.0, 0.0, 1.0]}, SettingsError, r"c_ohm\[1\] must be > 0, got 0.0"),
        ({"bias_rad": [0.0, 1.0, math.nan]}, SettingsError, r"bias_rad\[2\] must be finite"),
        ({"crosstalk": np.eye(3)}, SettingsError, r"crosstalk\[0, 0\] must be 0"),
        ({"crosstalk": np.zeros((3, 2))}, ShapeError, r"shape \(3, 3\), got \(3, 2\)"),
        ({"c_ohm": ["a", "b", "c"]}, ShapeError, "c_ohm must be a rectangular array"),
        ({"chip_id": ""}, SettingsError, "chip_id must be a non-empty string"),
        ({"created": "yesterday"}, SettingsError, "ISO 8601 time, got 'yesterday'"),
        ({"rings": ((1550.0, 0.01, 0.0),)}, SettingsError, r"rings\[0\] must be a RingTuning"),
        ({"phase_fitted": np.array([True])}, ShapeError, "phase_fitted must be 3 booleans"),
    ],
)
def test_calibration_rejects_bad_values(overrides, error, match) -> None:
    with pytest.raises(error, match=match):
        small_calibration(**overrides)


def test_same_calibration_compares_bits() -> None:
    a = small_calibration()
    assert same_calibration(a, small_calibration())
    assert not same_calibration(a, small_calibration(bias_rad=[-0.0, 3.1, 6.2]))
    assert not same_calibration(a, small_calibration(bias_rad=[0.0, 3.1, np.nextafter(6.2, 7)]))
    assert not same_calibration(a, small_calibration(crosstalk=None))
    assert not same_calibration(a, small_calibration(rings=(RingTuning(1550.12, 0.0184, 1e-4),)))
    assert not same_calibration(a, small_calibration(rings=(a.rings[1], a.rings[0])))
    assert not same_calibration(a, small_calibration(chip_id="other"))
