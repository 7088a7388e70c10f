from dataclasses import replace
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.driver import (
    DEFAULT_CHANNEL_WRITE_S,
    DEFAULT_READ_S,
    LAUNCH_MW,
    DriverError,
    EmulatedDriver,
)
from photonics.chips.chip import Chip, ChipSpec
from photonics.devices.thermal import Heaters, settling_time_s
from photonics.devices.transients import settle_time_s
from photonics.errors import LimitError, PortError, SettingsError, ShapeError

CHIP = Chip(ChipSpec(n_ports=4, seed=1))


def test_writes_reach_the_chip_and_report_modeled_time() -> None:
    driver = EmulatedDriver(CHIP)
    seconds = driver.write([0, 3], [2.0, 5.0])
    tau = np.broadcast_to(CHIP.heaters.tau_s, (CHIP.n_heaters,))
    assert seconds == pytest.approx(2 * DEFAULT_CHANNEL_WRITE_S + settling_time_s(tau[[0, 3]]))
    assert driver.currents()[[0, 3]].tolist() == [2.0, 5.0]
    field = np.zeros(4, complex)
    field[0] = 1.0
    # through the 16-bit DAC
    assert np.allclose(
        driver.detect(field), CHIP.detect(CHIP.heaters.quantise(driver.currents()), field)
    )
    assert driver.write([0], [2.0]) == 0.0  # nothing changes: no hardware time
    assert driver.elapsed_s == pytest.approx(seconds + DEFAULT_READ_S)  # one detector read


@given(
    st.lists(st.integers(-2, CHIP.n_heaters + 2), min_size=1, max_size=4),
    st.lists(st.one_of(st.floats(-5, 50), st.just(float("nan"))), min_size=1, max_size=4),
)
def test_a_refused_write_changes_nothing(channels, currents) -> None:
    driver = EmulatedDriver(CHIP)
    driver.write([1, 2], [3.0, 4.0])
    before = driver.currents()
    try:
        driver.write(channels, currents)
    except (LimitError, PortError, ShapeError):
        assert np.array_equal(driver.currents(), before)
    else:  # accepted: in range, within limits, and applied
        assert len(channels) == len(currents)
        assert all(0 <= c < CHIP.n_heaters for c in channels)
        CHIP.heaters.check_limits(driver.currents())
        for c, i in dict(zip(channels, currents, strict=True)).items():  # the last write wins
            assert driver.currents()[c] == i


def test_measure_reads_each_row_and_restores_the_applied_currents() -> None:
    driver = EmulatedDriver(CHIP)
    driver.write([0], [3.0])
    rows = np.zeros((3, CHIP.n_heaters))
    rows[:, 1] = [0.0, 4.0, 8.0]
    field = np.eye(4)[2]
    seen = driver.measure(rows, field)
    assert np.allclose(seen, [CHIP.detect(r, field) for r in rows])
    assert np.array_equal(driver.measure(rows, field, [3, 1]), seen[:, [3, 1]])  # a subset
    assert np.array_equal(driver.detect(field, [2]), driver.detect(field)[[2]])
    assert driver.currents()[[0, 1]].tolist() == [3.0, 0.0]
    # four changes of state (to row 0, 1, 2 and back), each written and settled, and 3 reads
    assert driver.elapsed_s > 4 * DEFAULT_CHANNEL_WRITE_S + 3 * DEFAULT_READ_S
    with pytest.raises(LimitError):
        driver.measure(np.full((1, CHIP.n_heaters), 11.0), field)


@pytest.mark.parametrize("call", ["write", "detect", "measure"])
def test_each_path_checks_the_heater_limits_once(call) -> None:
    driver = EmulatedDriver(CHIP)
    rows, field = np.full((2, CHIP.n_heaters), 1.0), np.eye(4)[0]
    run = {
        "write": lambda: driver.write(range(CHIP.n_heaters), rows[0]),
        "detect": lambda: driver.detect(field),
        "measure": lambda: driver.measure(rows, field),
    }[call]
    with mock.patch.object(Heaters, "check_limits", autospec=True) as check:
        run()
    assert check.call_count == 1
    # a refused measurement says why, as the chip does, and spends no hardware time
    spent = driver.elapsed_s
    with pytest.raises(LimitError, match=r"^channel 0: 11 mA is outside 0\.\.10 mA$"):
        driver.measure(np.full((1, CHIP.n_heaters), 11.0), field)
    assert driver.elapsed_s == spent


def test_an_injected_link_failure_leaves_a_partial_write_and_says_so() -> None:
    driver = EmulatedDriver(CHIP)
    driver.fail_after = 2
    with pytest.raises(DriverError, match="2 of 3"):
        driver.write([4, 5, 6], [1.0, 2.0, 3.0])
    assert driver.currents()[[4, 5, 6]].tolist() == [1.0, 2.0, 0.0]
    assert driver.write([6], [3.0]) > 0  # one failure only: the next write goes through


def test_monitor_adds_each_endpoints_light_and_reads_the_noise_once() -> None:
    driver = EmulatedDriver(CHIP, launch_mW=[1.0, 0.0, 2.0, 0.5])
    driver.write([0, 3, 9], [2.0, 5.0, 4.0])
    alone = [
        CHIP.detect(CHIP.heaters.quantise(driver.currents()), np.sqrt(p) * np.eye(4)[k])
        for k, p in [(0, 1.0), (2, 2.0), (3, 0.5)]
    ]
    assert np.allclose(driver.monitor(), np.sum(alone, axis=0))  # independent lasers: no fringes
    assert np.array_equal(driver.monitor([3, 1]), driver.monitor()[[3, 1]])
    spent = driver.elapsed_s
    driver.monitor()
    assert driver.elapsed_s == pytest.approx(spent + DEFAULT_READ_S)  # one detector read
    noisy = EmulatedDriver(CHIP, rng=np.random.default_rng(0), launch_mW=0.0)
    assert np.std(noisy.monitor()) < 5 * CHIP.spec.noise_floor_mW  # one draw, not one per input
    assert np.array_equal(EmulatedDriver(CHIP).launch_mW, np.full(4, LAUNCH_MW))


@pytest.mark.parametrize(
    "launch", [-1.0, float("nan"), float("inf"), [1.0, 2.0], [[1.0] * 4], True, "1", None]
)
def test_a_bad_launch_power_is_refused_and_the_old_one_kept(launch) -> None:
    driver = EmulatedDriver(CHIP)
    with pytest.raises(SettingsError, match="launch_mW must be"):
        driver.launch_mW = launch
    assert np.array_equal(driver.launch_mW, np.full(4, LAUNCH_MW))


def test_the_chip_sees_each_current_at_the_nearest_dac_code() -> None:
    chip = Chip(ChipSpec(n_ports=4, seed=1))
    chip.heaters = replace(chip.heaters, dac_bits=3)  # codes 10/7 mA apart: coarse on purpose
    driver = EmulatedDriver(chip)
    driver.write([0, 1], [2.0, 9.9])
    assert np.array_equal(driver.currents()[:2], [2.0, 9.9])  # the set points read back
    seen = np.zeros(chip.n_heaters)
    seen[:2] = [10 / 7, 10.0]
    light = np.eye(4)[0]
    assert np.allclose(driver.detect(light), chip.detect(seen, light))
    assert not np.allclose(driver.detect(light), chip.detect(driver.currents(), light))
    assert np.allclose(driver.voltage(driver.currents()[None]), chip.heater_voltage(seen[None]))
    with pytest.raises(LimitError, match=r"outside 0\.\.10"):
        driver.measure(np.full((1, chip.n_heaters), 10.5), light)


def test_one_heaters_settling_does_not_depend_on_the_size_of_its_step() -> None:
    # the driver memoises a lone heater's settling: the tolerance and its crosstalk scale
    # with the step, so a small and a large step of the same heater settle together
    chip = Chip(ChipSpec(n_ports=4))
    driver, zero = EmulatedDriver(chip), np.zeros(chip.n_heaters)
    h, K = chip.heaters, chip.crosstalk.toarray()
    times = []
    for current in (1.0, 9.0):
        new = zero.copy()
        new[2] = current
        step = np.pi * (h.power_mW(new) - h.power_mW(zero)) / h.p_pi_mW
        alone = settle_time_s(step, h.tau_s, K, driver.dynamics, 1e-3 * np.abs(step).max())
        times.append((alone, driver.settle_s(zero, new)))
    (small, memo_small), (large, memo_large) = times
    assert small == pytest.approx(large, rel=1e-9) and memo_small == memo_large == small
    assert small > settling_time_s(h.tau_s[2])  # its crosstalk to a neighbour settles later
