"""The wiring check: which meter channel sees which chip output, from the rings' notches."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil import wiring
from hil.bench import Bench
from hil.emulator.bench import EmulatedBench
from hil.errors import InstrumentError


def _notch(points: int, at: float, width: float = 0.01) -> np.ndarray:
    """A flat spectrum over one FSR with a Lorentzian notch at ``at`` (FSR fraction)."""
    x = np.arange(points) / points
    d = (x - at + 0.5) % 1.0 - 0.5
    return 1.0 - 0.9 / (1 + (d / width) ** 2)


@settings(max_examples=30, deadline=None)
@given(
    st.permutations(range(6)),
    st.lists(st.floats(0, 1, exclude_max=True), min_size=6, max_size=6),
    st.floats(0.8, 1.25),
)
def test_the_rings_shifts_identify_each_channel(perm, starts, efficiency) -> None:
    points, n = 200, 6
    expected = 0.5 * np.arange(1, n + 1) / (n + 1)  # what each ring's heating should move it
    # channel c sees ring perm[c]; the real tuning efficiency is off the nominal one
    before = np.stack([_notch(points, starts[perm[c]]) for c in range(n)], axis=1)
    after = np.stack(
        [_notch(points, starts[perm[c]] + efficiency * expected[perm[c]]) for c in range(n)],
        axis=1,
    )
    shifts = wiring.notch_shifts(before, after)
    assert wiring.match_rings(shifts, expected) == dict(enumerate(perm))


def test_a_dark_output_is_not_identified_and_sources_light_every_output() -> None:
    before = np.stack([_notch(100, 0.2), 1e-6 * _notch(100, 0.7)], axis=1)
    assert wiring.notch_shifts(before, before)[1] is None
    lit = np.array([[1.0, 1e-4, 0.5], [1e-4, 1.0, 1e-4]])  # input 0 lights outputs 0 and 2
    assert wiring.sources(lit).tolist() == [0, 1, 0]


def _bench(emulated: EmulatedBench) -> Bench:
    """A bench whose configuration says meter channel k reads output k, however it is wired."""
    cfg = emulated.config()
    return Bench(replace(cfg, meters=(replace(cfg.meters[0], ports=()),)))


def test_the_wiring_check_finds_swapped_meter_channels_and_leaves_the_bench_as_it_was() -> None:
    with EmulatedBench(ports=4, seed=0) as emulated, _bench(emulated) as bench:
        held, nm = bench.heaters.currents(), bench.laser.wavelength_nm()
        assert bench.check_wiring() == {0: 0, 1: 1, 2: 2, 3: 3}
        assert np.array_equal(bench.heaters.currents(), held)
        assert bench.laser.wavelength_nm() == pytest.approx(nm)
    swapped = [("N7744A", (1, 0, 2, 3))]  # outputs 0 and 1 on each other's channel
    with EmulatedBench(ports=4, seed=0, meters=swapped) as emulated, _bench(emulated) as bench:
        with pytest.raises(InstrumentError) as info:
            bench.calibrate()  # before: "ring 0: not on resonance" from deep in CAL:RUN
        message = str(info.value)
        assert "channel 0 sees output 1 (configured 0)" in message
        assert "channel 1 sees output 0 (configured 1)" in message
        assert "channel 2" not in message and bench.controller.calibration is None  # not run


def test_the_wiring_check_holds_with_the_rings_locked() -> None:
    # after a calibration each ring heater holds a lock; the check heated the rings to its own
    # absolute powers instead of by them, and reported channels 1 and 2 of 8 swapped
    with EmulatedBench(ports=8, seed=0) as emulated, _bench(emulated) as bench:
        for r in range(8):
            assert bench.lock_ring(r)[0]
        assert bench.check_wiring() == {k: k for k in range(8)}
