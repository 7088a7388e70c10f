"""Ambient drift: a seeded Ornstein-Uhlenbeck temperature through the package's low-pass."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from photonics import SettingsError
from photonics.devices.drift import AmbientDrift


@given(st.integers(0, 2**31), st.floats(1, 5000))
@settings(max_examples=20)
def test_same_seed_same_path_and_a_longer_path_extends_a_shorter(seed, duration) -> None:
    d = AmbientDrift(seed=seed)
    short, long = d.path(duration), d.path(2 * duration)
    assert np.array_equal(long[: short.size], short)
    assert np.array_equal(AmbientDrift(seed=seed).path(duration), short)
    assert not np.array_equal(AmbientDrift(seed=seed + 1).path(duration), short)
    times = np.linspace(0, duration, 7)
    on_grid = np.interp(times / d.step_s, np.arange(long.size), long)
    assert np.allclose(d.temperature_K(times), on_grid)


def test_the_air_is_stationary_with_its_std_and_the_package_smooths_it() -> None:
    fast = AmbientDrift(seed=4, sigma_K=0.5, correlation_s=20.0, package_tau_s=0.1)
    path = fast.path(40_000.0)
    # an OU process of std sigma; the 0.1 s low-pass barely changes it
    assert path.std() == pytest.approx(0.5, rel=0.1)
    lag = int(20.0 / fast.step_s)  # correlation e^-1 one correlation time apart
    c = np.corrcoef(path[:-lag], path[lag:])[0, 1]
    assert c == pytest.approx(np.exp(-1), abs=0.05)
    # through a 60 s package the chip's temperature moves far less from one second to the next
    slow = AmbientDrift(seed=4, sigma_K=0.5, correlation_s=20.0, package_tau_s=60.0).path(4000.0)
    step = int(1.0 / fast.step_s)
    assert (
        np.abs(np.diff(slow[::step])).max() < 0.2 * np.abs(np.diff(path[: slow.size : step])).max()
    )


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: AmbientDrift(seed=-1), "seed must be an integer >= 0"),
        (lambda: AmbientDrift(sigma_K=-0.1), "sigma_K must be a finite number >= 0"),
        (lambda: AmbientDrift(correlation_s=0.0), "correlation_s must be a finite number > 0"),
        (lambda: AmbientDrift(step_s=float("inf")), "step_s"),
        (lambda: AmbientDrift().temperature_K([-1.0]), "times must be >= 0"),
        (lambda: AmbientDrift().path(float("nan")), "duration_s"),
    ],
)
def test_bad_settings_are_refused(make, match) -> None:
    with pytest.raises(SettingsError, match=match):
        make()
