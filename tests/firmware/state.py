"""Test helpers: the whole state of a switch controller, and a watch on its limits.

:func:`capture` takes everything a command could change (the applied matching, every heater
current, the ring locks, the calibration, the schedule, the limits and the interlock, and the
bytes of every file in the store's directory) as a :class:`SwitchState` of plain values, so
``==`` compares it all and pytest names the fields that differ::

    before = capture(controller)
    controller.handle("ROUT:MATC 0,1,2")  # fails: -109
    assert capture(controller) == before

:func:`watch_limits` wraps a controller's driver so that every row of currents sent to it
(``write``, every row of ``measure`` and ``voltage``) is checked against the controller's own
limits at that moment (per-channel current limit, power budget, interlock); the rows over them
are counted, none should ever be.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from firmware.controller import Controller
from photonics.calibration import Calibration


def _key(cal: Calibration | None) -> tuple[object, ...] | None:
    """A calibration as plain values (arrays as bytes): equal when every field is."""
    if cal is None:
        return None
    values = (getattr(cal, f.name) for f in fields(cal))
    return tuple(v.tobytes() if isinstance(v, np.ndarray) else v for v in values)


@dataclass(frozen=True)
class SwitchState:
    """Everything a command could change on a controller (see :func:`capture`); currents mA,
    powers mW, times s."""

    pairs: tuple[tuple[int, int], ...]  # the applied matching
    manual: bool  # heaters set by hand
    currents_mA: tuple[float, ...]  # every channel, as the driver holds them
    ring_locks: tuple[tuple[int, float], ...]  # locked ring, its fit step (mW)
    ring_sweeps: tuple[tuple[int, bytes, bytes], ...]  # ring, its last sweep's powers, readings
    calibration: tuple[object, ...] | None
    calibration_stored: bool
    schedule: tuple[tuple[float, tuple[tuple[int, int], ...]], ...]  # dwell, matching per step
    running: bool
    step_index: int
    step_times: tuple[tuple[float, float], ...]
    disturbed: tuple[int, ...]
    current_limit_mA: tuple[float, ...]
    power_budget_mW: float
    interlock: bool
    fault: bool
    store_files: tuple[tuple[str, bytes], ...]  # every file in the store's directory, sorted


#: The controller's state attributes (:data:`firmware.controller.core.MACHINERY` aside) that
#: :func:`capture` reads: a test checks they are all of them, so a new one is not forgotten.
ATTRIBUTES = frozenset(
    {
        "plan",
        "manual",
        "ring_step",
        "ring_sweeps",
        "calibration",
        "calibration_stored",
        "schedule",
        "running",
        "step_index",
        "step_times",
        "disturbed",
        "current_limit_mA",
        "power_budget_mW",
        "interlock",
        "fault",
    }
)


def capture(c: Controller) -> SwitchState:
    """The whole state of ``c`` now (see the module docstring)."""
    store: dict[str, bytes] = {}
    if c.store is not None:
        store = {p.name: p.read_bytes() for p in Path(c.store.directory).iterdir()}
    return SwitchState(
        pairs=c.matching.pairs,
        manual=c.manual,
        currents_mA=tuple(c.driver.currents().tolist()),
        ring_locks=tuple(sorted(c.ring_step.items())),
        ring_sweeps=tuple(
            (r, p.tobytes(), s.tobytes()) for r, (p, s) in sorted(c.ring_sweeps.items())
        ),
        calibration=_key(c.calibration),
        calibration_stored=c.calibration_stored,
        schedule=tuple((s.dwell_s, s.plan.matching.pairs) for s in c.schedule),
        running=c.running,
        step_index=c.step_index,
        step_times=tuple(c.step_times),
        disturbed=tuple(c.disturbed),
        current_limit_mA=tuple(c.current_limit_mA.tolist()),
        power_budget_mW=float(c.power_budget_mW),
        interlock=c.interlock,
        fault=c.fault,
        store_files=tuple(sorted(store.items())),
    )


@dataclass
class LimitWatch:
    """What :func:`watch_limits` saw: rows of currents sent to the driver, and those among
    them that broke the controller's limits (each with the reason)."""

    rows: int = 0
    over: list[str] = field(default_factory=list)


def watch_limits(c: Controller) -> LimitWatch:
    """Wrap ``c``'s driver (its ``write``, ``measure`` and ``voltage``) so that every row of
    currents it is sent is checked against ``c``'s limits at that moment; returns the tally."""
    watch, driver = LimitWatch(), c.driver
    write, measure, voltage = driver.write, driver.measure, driver.voltage

    def check(rows: np.ndarray) -> None:
        rows = np.atleast_2d(np.asarray(rows, dtype=float))
        watch.rows += len(rows)
        power = driver.power_mW(rows)
        for row, p in zip(rows, power, strict=True):
            if np.any(row > c.current_limit_mA) or np.any(row < 0):
                watch.over.append(f"current: {row.max():.6g} mA")
            elif p > c.power_budget_mW:
                watch.over.append(f"power: {p:.6g} mW > {c.power_budget_mW:.6g} mW")
            elif c.interlock and np.any(row > 0):
                watch.over.append("interlock engaged")

    def watched_write(channels, current_mA):
        new = driver.currents()
        new[np.asarray(channels, dtype=int)] = current_mA
        check(new)
        return write(channels, current_mA)

    def watched_measure(rows_mA, *args, **kwargs):
        check(rows_mA)
        return measure(rows_mA, *args, **kwargs)

    def watched_voltage(rows_mA):
        check(rows_mA)
        return voltage(rows_mA)

    driver.write, driver.measure, driver.voltage = watched_write, watched_measure, watched_voltage
    return watch
