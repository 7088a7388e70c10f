"""Heater driver classes (:mod:`firmware.electronics`): their electronics' time, and the
emulated driver and the heater write model timed by them."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.driver import EmulatedDriver
from firmware.electronics import (
    BENCH,
    DRIVER_CLASSES,
    INTEGRATED,
    PARALLEL,
    PRODUCT,
    DriverClass,
    driver_class,
)
from firmware.fabric import HeaterWriteModel
from photonics import SettingsError
from photonics.chips.chip import Chip, ChipSpec


def test_the_bench_writes_channels_one_after_another():
    assert BENCH.electronics_s(0, 64) == 0.0
    assert BENCH.electronics_s(1, 64) == pytest.approx(0.5e-3)
    assert BENCH.electronics_s(64, 64) == pytest.approx(32e-3)


def test_parallel_dacs_load_their_buses_at_once_then_update_together():
    # 24-bit words at 50 MHz: 0.48 us a channel on a bus of 40, then 20 us of DAC settling
    assert PARALLEL.electronics_s(1, 600) == pytest.approx(20e-6 + 0.48e-6)
    assert PARALLEL.electronics_s(40, 600) == pytest.approx(20e-6 + 40 * 0.48e-6)
    assert PARALLEL.electronics_s(600, 600) == PARALLEL.electronics_s(40, 600)


def test_the_product_spans_its_published_range():
    assert PRODUCT.electronics_s(1, 1000) == pytest.approx(15e-3, rel=1e-2)
    assert PRODUCT.electronics_s(1000, 1000) == pytest.approx(90e-3)


@given(st.integers(1, 2000), st.integers(0, 2000))
def test_the_classes_keep_their_order_whatever_is_written(n: int, k: int):
    k = min(k, n)
    times = [d.electronics_s(k, n) for d in (PRODUCT, PARALLEL, INTEGRATED)]
    if k == 0:
        assert times == [0.0, 0.0, 0.0]
    else:
        assert times[0] > times[1] > times[2] > 0
        assert BENCH.electronics_s(k, n) > times[1]


def test_classes_by_name_and_bad_ones():
    assert list(DRIVER_CLASSES) == ["product", "bench", "parallel", "integrated"]
    assert driver_class("parallel") is PARALLEL
    with pytest.raises(SettingsError, match="unknown driver class 'fast'; the classes are"):
        driver_class("fast")
    with pytest.raises(SettingsError, match="update_s must be a time >= 0 s"):
        DriverClass("x", update_s=float("nan"))
    with pytest.raises(SettingsError, match="bus_channels"):
        DriverClass("x", bus_channels=-1)
    with pytest.raises(SettingsError, match=r"channels must be in 0\.\.4, got 5"):
        BENCH.electronics_s(5, 4)


def test_the_emulated_driver_takes_its_class_electronics_then_settles():
    chip = Chip(ChipSpec(n_ports=4, seed=0))
    times = {}
    for name, cls in DRIVER_CLASSES.items():
        driver = EmulatedDriver(chip, electronics=cls)
        settle = driver.settle_s(np.zeros(chip.n_heaters), np.r_[1.0, np.zeros(chip.n_heaters - 1)])
        times[name] = driver.write([0], [1.0])
        assert times[name] == pytest.approx(cls.electronics_s(1, chip.n_heaters) + settle)
        assert driver.elapsed_s == times[name]
    assert times["product"] > times["bench"] > times["parallel"] > times["integrated"]
    # without a class, the bench's with the driver's own channel time
    assert EmulatedDriver(chip, channel_write_s=1e-3).electronics == DriverClass(
        "bench", channel_s=1e-3
    )


def test_the_heater_write_model_prices_a_change_by_class():
    settle = HeaterWriteModel(DriverClass("instant")).seconds(3, 10)
    assert 0 < settle < 1e-4
    for cls in DRIVER_CLASSES.values():
        model = HeaterWriteModel(cls)
        assert model.seconds(3, 10) == pytest.approx(cls.electronics_s(3, 10) + settle)
        assert model.seconds(0, 10) == 0.0
    with pytest.raises(SettingsError, match=r"n_changed_cells must be in 0\.\.10, got 11"):
        HeaterWriteModel().seconds(11, 10)


def test_an_emulated_switch_reports_its_class_and_times_its_steps_by_it():
    from firmware.sdk import Switch
    from photonics.matching import Matching

    a, b = Matching([(0, 1), (2, 3)], 4), Matching([(0, 2), (1, 3)], 4)
    steps = {}
    for name, cls in DRIVER_CLASSES.items():
        with Switch.emulated(ports=4, driver=name) as sw:
            assert sw.driver_class() == cls
            steps[name] = sw.run_matchings([(a, 1e-3), (b, 1e-3)])
            n = sw.transport.controller.driver.n_channels
        # each step: the class's electronics for the channels it wrote, then the settling
        assert all(t > cls.electronics_s(1, n) for t in steps[name])
    # same chip, same steps: only the electronics differ
    for i in range(2):
        order = [steps[k][i] for k in ("product", "bench", "parallel", "integrated")]
        assert order == sorted(order, reverse=True)
    assert steps["parallel"][1] < 1e-4 < steps["bench"][1]


def test_an_unknown_class_builds_no_switch():
    from firmware.sdk import Switch

    with pytest.raises(SettingsError, match="unknown driver class 'warp'"):
        Switch.emulated(ports=4, driver="warp")
