"""Schedules and their timing (:mod:`firmware.fabric.schedules`)."""

import math

import numpy as np
import pytest

from firmware.electronics import BENCH, DriverClass
from firmware.fabric import (
    HeaterWriteModel,
    Schedule,
    Step,
    phases_schedule,
    plan_schedule,
    schedule_timing,
)
from photonics import Matching, MatchingError, SettingsError, ShapeError
from photonics.devices.transients import ThermalDynamics, settle_time_s
from tests.firmware.fabric.fabrics import clements


def test_duty_cycle_of_a_hand_made_schedule():
    m = Matching([(0, 1), (2, 3)], 4)
    schedule = Schedule([(m, 1e-3), (m, 2e-3), Step(m, 3e-3)])
    timing = schedule_timing(schedule, [0.5e-3, 0.5e-3, 1e-3])
    assert timing.period_s == pytest.approx(8e-3)
    assert timing.duty_cycle == pytest.approx(0.75)
    assert timing.reconfigure_s == (0.5e-3, 0.5e-3, 1e-3)
    assert schedule_timing(schedule, [0, 0, 0]).duty_cycle == 1.0


def test_heater_write_model_gives_the_drivers_time_per_changed_cell():
    fabric = clements(4)
    m1, m2 = Matching([(0, 1), (2, 3)], 4), Matching([(0, 3), (1, 2)], 4)
    schedule = phases_schedule({"tp": m1, "dp": m2}, dwell_s={"tp": 4e-3, "dp": 6e-3})
    plans = plan_schedule(fabric, schedule)
    model = HeaterWriteModel(BENCH, tau_s=5.6e-6, settle_tolerance=1e-3)
    changed = int(np.sum(~np.isclose(plans[0].theta, plans[1].theta)))
    assert changed > 0
    one_way = changed * 0.5e-3 + 5.6e-6 * math.log(1e3)  # ~39 us to settle to 1e-3
    timing = schedule_timing(schedule, model, plans)
    assert timing.reconfigure_s == pytest.approx((one_way, one_way))
    assert timing.duty_cycle == pytest.approx(10e-3 / (10e-3 + 2 * one_way))
    cold = schedule_timing(schedule, model, plans, cyclic=False)
    assert cold.reconfigure_s[0] == pytest.approx(fabric.n_cells * 0.5e-3 + 5.6e-6 * math.log(1e3))
    single = Schedule([(m1, 1e-3)])
    assert schedule_timing(single, model, plan_schedule(fabric, single)).duty_cycle == 1.0
    assert model.seconds(0) == 0.0
    # a measured two-pole heater settles later, by the same physics as the driver's
    two_pole = HeaterWriteModel(DriverClass("instant"), dynamics=ThermalDynamics(tau2_s=3e-6))
    assert two_pole.seconds(1) > 5.6e-6 * math.log(1e3)
    assert two_pole.seconds(1) == pytest.approx(
        settle_time_s([np.pi], [5.6e-6], None, ThermalDynamics(tau2_s=3e-6), 1e-3 * np.pi)
    )


def test_phases_schedule_keeps_the_phase_order_and_dwells():
    tp, dp, pp = (Matching([(0, 1)], 4), Matching([(0, 2)], 4), Matching([(1, 3)], 4))
    s = phases_schedule({"tp": tp, "dp": dp, "pp": pp}, {"pp": 3.0, "tp": 1.0, "dp": 2.0})
    assert [(x.label, x.matching, x.dwell_s) for x in s.steps] == [
        ("tp", tp, 1.0),
        ("dp", dp, 2.0),
        ("pp", pp, 3.0),
    ]
    assert s.dwell_s == 6.0
    assert [x.dwell_s for x in phases_schedule({"a": tp, "b": dp}, 0.25).steps] == [0.25, 0.25]


@pytest.mark.parametrize("dwell", [0, -1e-3, math.nan, math.inf, True, "1ms"])
def test_steps_refuse_a_dwell_that_is_not_a_positive_time(dwell):
    with pytest.raises(SettingsError, match="dwell_s"):
        Step(Matching([(0, 1)], 2), dwell)


def test_schedule_validation():
    m2, m4 = Matching([(0, 1)], 2), Matching([(0, 1)], 4)
    with pytest.raises(SettingsError, match="at least one step"):
        Schedule([])
    with pytest.raises(ShapeError, match=r"\[2, 4\]"):
        Schedule([(m2, 1.0), (m4, 1.0)])
    with pytest.raises(MatchingError, match="Matching"):
        Step([(0, 1)], 1.0)
    with pytest.raises(SettingsError, match=r"missing \['dp'\], unknown \['pp'\]"):
        phases_schedule({"tp": m4, "dp": m4}, {"tp": 1.0, "pp": 1.0})
    with pytest.raises(SettingsError, match="at least one phase"):
        phases_schedule({}, 1.0)
    schedule = Schedule([(m4, 1.0), (m4, 1.0)])
    with pytest.raises(SettingsError, match="need 2 reconfiguration times"):
        schedule_timing(schedule, [0.1])
    with pytest.raises(SettingsError, match="step 1 must be >= 0"):
        schedule_timing(schedule, [0.1, -0.1])
    with pytest.raises(SettingsError, match="needs 2 plans"):
        schedule_timing(schedule, HeaterWriteModel())
    plans = plan_schedule(clements(4), Schedule([(Matching([(0, 2)], 4), 1.0)]))
    with pytest.raises(MatchingError, match="plan 0"):
        schedule_timing(Schedule([(m4, 1.0)]), HeaterWriteModel(), plans)
    with pytest.raises(ShapeError, match="2 ports for a 4-port"):
        plan_schedule(clements(4), Schedule([(m2, 1.0)]))
    with pytest.raises(SettingsError, match="channel_s"):
        HeaterWriteModel(DriverClass("broken", channel_s=-1.0))
    with pytest.raises(SettingsError, match="DriverClass"):
        HeaterWriteModel("bench")  # type: ignore[arg-type]
    with pytest.raises(SettingsError, match="settle_tolerance"):
        HeaterWriteModel(settle_tolerance=1.0)
