"""Time-multiplexed schedules: steps of matchings held for a dwell each, and their timing
(reconfiguration before each step, period, duty cycle). Times are in s."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from firmware.driver import DEFAULT_SETTLE_TOLERANCE
from firmware.electronics import BENCH, DriverClass
from photonics.chips.switch import Fabric, SwitchPlan
from photonics.devices.thermal import DEFAULT_TAU_S
from photonics.devices.transients import ThermalDynamics, settle_time_s
from photonics.errors import MatchingError, SettingsError, ShapeError
from photonics.matching import Matching

#: A model of the time (s) to go from one plan (None: unknown, every cell is written) to another.
ReconfigurationModel = Callable[[SwitchPlan | None, SwitchPlan], float]


def _positive_time(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise SettingsError(f"{name} must be a number of seconds, got {value!r}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise SettingsError(f"{name} must be a finite time > 0 s, got {value!r}")
    return v


@dataclass(frozen=True)
class Step:
    """One step of a schedule: hold ``matching`` for ``dwell_s`` (s, > 0) of traffic."""

    matching: Matching
    dwell_s: float
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.matching, Matching):
            raise MatchingError(f"a step needs a Matching, got {self.matching!r}")
        object.__setattr__(self, "dwell_s", _positive_time("dwell_s", self.dwell_s))


@dataclass(frozen=True)
class Schedule:
    """Steps applied in order, then repeated (a training step's phases, an all-to-all cycle).

    Needs at least one step, all on the same number of ports; ``(matching, dwell_s)`` tuples
    are accepted for steps.
    """

    steps: tuple[Step, ...]

    def __init__(self, steps: Iterable[Step | tuple[Matching, float]]) -> None:
        out = [s if isinstance(s, Step) else Step(*s) for s in steps]
        if not out:
            raise SettingsError("a schedule needs at least one step, got none")
        sizes = {s.matching.n_ports for s in out}
        if len(sizes) > 1:
            raise ShapeError(f"schedule steps are on different port counts: {sorted(sizes)}")
        object.__setattr__(self, "steps", tuple(out))

    @property
    def n_ports(self) -> int:
        return self.steps[0].matching.n_ports

    @property
    def dwell_s(self) -> float:
        """Total dwell per period, s."""
        return sum(s.dwell_s for s in self.steps)


def phases_schedule(
    phases: Mapping[str, Matching], dwell_s: Mapping[str, float] | float
) -> Schedule:
    """A training-step schedule: one step per parallelism phase, in the mapping's order.

    ``phases``: e.g. ``{"tp": m1, "dp": m2, "pp": m3}``; ``dwell_s``: one dwell (s) for every
    phase, or one per phase name (exactly the same names).
    """
    if not phases:
        raise SettingsError("phases_schedule needs at least one phase, got none")
    if isinstance(dwell_s, Mapping):
        missing = [p for p in phases if p not in dwell_s]
        extra = [p for p in dwell_s if p not in phases]
        if missing or extra:
            raise SettingsError(
                f"dwell_s must name exactly the phases {list(phases)}: "
                f"missing {missing}, unknown {extra}"
            )
        return Schedule(Step(m, dwell_s[p], p) for p, m in phases.items())
    return Schedule(Step(m, dwell_s, p) for p, m in phases.items())


@dataclass(frozen=True)
class HeaterWriteModel:
    """Reconfiguration time of a plan change as the emulated driver models it (s): the
    ``driver`` class's electronics for the changed channels (:mod:`firmware.electronics`; the
    lab bench's by default, 0.5 ms a channel) plus the thermal settling of a heater's full
    step to within ``settle_tolerance`` (:func:`photonics.devices.transients.settle_time_s`
    with ``tau_s`` and ``dynamics``, as the driver computes it: ~39 us for 5.6 us, first
    order), 0 when nothing changes.

    ``channels = changed cells x channels_per_cell``; from an unknown state (previous plan
    ``None``) every cell is written.
    """

    driver: DriverClass = BENCH
    tau_s: float = DEFAULT_TAU_S
    settle_tolerance: float = DEFAULT_SETTLE_TOLERANCE
    channels_per_cell: int = 1
    dynamics: ThermalDynamics = field(default_factory=ThermalDynamics)

    def __post_init__(self) -> None:
        if not isinstance(self.driver, DriverClass):
            raise SettingsError(f"driver must be a DriverClass, got {self.driver!r}")
        _positive_time("tau_s", self.tau_s)
        if not 0 < self.settle_tolerance < 1:
            raise SettingsError(f"settle_tolerance must be in (0, 1), got {self.settle_tolerance}")
        if isinstance(self.channels_per_cell, bool) or self.channels_per_cell < 1:
            raise SettingsError(f"channels_per_cell must be >= 1, got {self.channels_per_cell!r}")

    def seconds(self, n_changed_cells: int, n_cells: int | None = None) -> float:
        """Time to write ``n_changed_cells`` of the chip's ``n_cells`` cells (None: as many as
        changed) and let them settle, s."""
        total = n_changed_cells if n_cells is None else n_cells
        if not 0 <= n_changed_cells <= total:
            raise SettingsError(f"n_changed_cells must be in 0..{total}, got {n_changed_cells}")
        if n_changed_cells == 0:
            return 0.0
        per = self.channels_per_cell
        electronics = self.driver.electronics_s(n_changed_cells * per, total * per)
        # the emulated driver's physics for one heater's full step (pi), within the tolerance
        settle = settle_time_s(
            [np.pi], [self.tau_s], None, self.dynamics, self.settle_tolerance * np.pi
        )
        return electronics + settle

    def __call__(self, previous: SwitchPlan | None, new: SwitchPlan) -> float:
        n = new.theta.size if previous is None else int(new.changed_cells(previous).size)
        return self.seconds(n, new.theta.size)


@dataclass(frozen=True)
class ScheduleTiming:
    """Timing of one period of a schedule (s): the reconfiguration before each step, the dwell
    of each step, the period and the duty cycle (fraction of the period that carries traffic)."""

    reconfigure_s: tuple[float, ...]
    dwell_s: tuple[float, ...]

    @property
    def period_s(self) -> float:
        return sum(self.dwell_s) + sum(self.reconfigure_s)

    @property
    def duty_cycle(self) -> float:
        """``sum(dwell) / (sum(dwell) + sum(reconfiguration))``."""
        return sum(self.dwell_s) / self.period_s


def plan_schedule(fabric: Fabric, schedule: Schedule) -> tuple[SwitchPlan, ...]:
    """The plan of each step (raises :class:`MatchingError` when one is not realizable)."""
    if schedule.n_ports != fabric.n_ports:
        raise ShapeError(f"schedule on {schedule.n_ports} ports for a {fabric.n_ports}-port fabric")
    return tuple(fabric.plan(s.matching) for s in schedule.steps)


def schedule_timing(
    schedule: Schedule,
    reconfigure_s: ReconfigurationModel | Sequence[float],
    plans: Sequence[SwitchPlan] | None = None,
    cyclic: bool = True,
) -> ScheduleTiming:
    """Per-step reconfiguration time, period and duty cycle of ``schedule``.

    ``reconfigure_s``: the time (s, >= 0) to switch into each step, one per step; or a model
    ``(previous plan or None, plan) -> s`` such as :class:`HeaterWriteModel`, which then needs
    ``plans`` (one per step, e.g. from :func:`plan_schedule`). ``cyclic``: the schedule repeats,
    so step 0 is reached from the last step's plan (a one-step schedule then never
    reconfigures); otherwise step 0 starts from an unknown state (``None``).
    """
    n = len(schedule.steps)
    if callable(reconfigure_s):
        if plans is None or len(plans) != n:
            got = "none" if plans is None else len(plans)
            raise SettingsError(
                f"a reconfiguration model needs {n} plans (one per step), got {got}"
            )
        for i, (step, plan) in enumerate(zip(schedule.steps, plans, strict=True)):
            if plan.matching != step.matching:
                raise MatchingError(
                    f"plan {i} is for {plan.matching.pairs}, step {i} needs {step.matching.pairs}"
                )
        times = [reconfigure_s(plans[i - 1] if (i or cyclic) else None, plans[i]) for i in range(n)]
    else:
        times = list(reconfigure_s)
        if len(times) != n:
            raise SettingsError(f"need {n} reconfiguration times (one per step), got {len(times)}")
    for i, t in enumerate(times):
        number = isinstance(t, int | float | np.integer | np.floating) and not isinstance(t, bool)
        if not number or not math.isfinite(t) or t < 0:
            raise SettingsError(f"reconfiguration time of step {i} must be >= 0 s, got {t!r}")
    return ScheduleTiming(tuple(float(t) for t in times), tuple(s.dwell_s for s in schedule.steps))
