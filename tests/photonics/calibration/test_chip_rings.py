"""The production test's lock of a feed-forward chip's output rings
(photonics.calibration.chip_rings)."""

from __future__ import annotations

import numpy as np
import pytest

from photonics.calibration.chip_rings import RingLock
from photonics.chips.chip import Chip, ChipSpec
from photonics.chips.emulated_chip import REFERENCE_WAVELENGTH_NM
from photonics.devices.ring import MicroRing
from photonics.errors import FitError


def detuning_pm(chip: Chip, current: np.ndarray) -> np.ndarray:
    shift = chip.ring_shift_nm(current)
    return 1e3 * chip.spec.ring.detuning_nm(REFERENCE_WAVELENGTH_NM, shift)


@pytest.mark.parametrize("sigma_nm", [0.3, 3.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_ring_ends_on_the_laser_whatever_its_fabrication_offset(
    seed: int, sigma_nm: float
) -> None:
    chip = Chip(ChipSpec(n_ports=8, seed=seed, output_rings=True, ring_fab_sigma_nm=sigma_nm))
    rings = chip.ring_channels
    lock = RingLock(chip, np.random.default_rng(seed))
    start = np.zeros(chip.n_heaters)
    current = lock.lock(start)
    # the FWHM is 181 pm: a ring off by more than a few pm loses light; unlocked, they are
    # off by up to several nm (0.3 nm is more than one FWHM)
    assert np.abs(detuning_pm(chip, start)).max() > 100
    assert np.abs(detuning_pm(chip, current)).max() < 1.0
    assert np.array_equal(current[: rings[0]], start[: rings[0]])  # the mesh is left alone
    # a heater only heats: each ring sits on a resonance with room to fall back
    assert np.all(lock.powers(current) >= 0.2 * lock.fsr_mW)
    # moved off (as warmth from elsewhere would move them), re-centring brings them back
    moved = current.copy()
    moved[rings] *= 1.02  # about 4 % more power each: 0.4 nm, two FWHM
    assert np.abs(detuning_pm(chip, moved)).min() > 100
    assert np.abs(detuning_pm(chip, lock.centre(moved))).max() < 1.0


def test_a_chip_without_rings_has_no_ring_channels() -> None:
    assert Chip(ChipSpec(n_ports=4)).ring_channels.size == 0
    with_rings = Chip(ChipSpec(n_ports=4, output_rings=True))
    assert with_rings.ring_channels.tolist() == list(
        range(with_rings.n_heaters - 4, with_rings.n_heaters)
    )


def test_rings_whose_drop_port_stays_dark_fail_the_lock() -> None:
    chip = Chip(ChipSpec(n_ports=4, output_rings=True, ring=MicroRing(r2=None)))  # all-pass
    with pytest.raises(FitError, match="ring 0, 1, 2, 3: no resonance seen"):
        RingLock(chip, rng=None).lock(np.zeros(chip.n_heaters))
