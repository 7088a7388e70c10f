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

:func:`inject` makes one fault happen once inside a ``with`` block: the store's fsync fails as
on a full disk, a heater write fails part-way, or a detector read fails.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal
from unittest import mock

import numpy as np

from firmware.controller import Controller
from firmware.driver import DriverError
from photonics.chips.calibration import Calibration


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
    ring_sources: tuple[tuple[int, int], ...]  # ring, the input its lock reads (one-laser bench)
    calibration: tuple[object, ...] | None
    calibration_stored: bool
    schedule: tuple[tuple[float, tuple[tuple[int, int], ...]], ...]  # dwell, matching per step
    running: bool
    step_index: int
    step_times: tuple[tuple[float, float], ...]
    disturbed: tuple[int, ...]
    current_limit_mA: tuple[float, ...]
    written_mA: tuple[float, ...]
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
        "ring_source",
        "calibration",
        "calibration_stored",
        "schedule",
        "running",
        "step_index",
        "step_times",
        "disturbed",
        "current_limit_mA",
        "written_mA",
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
        ring_sources=tuple(sorted(c.ring_source.items())),
        calibration=_key(c.calibration),
        calibration_stored=c.calibration_stored,
        schedule=tuple((s.dwell_s, s.plan.matching.pairs) for s in c.schedule),
        running=c.running,
        step_index=c.step_index,
        step_times=tuple(c.step_times),
        disturbed=tuple(c.disturbed),
        current_limit_mA=tuple(c.current_limit_mA.tolist()),
        written_mA=tuple(c.written_mA.tolist()),
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


Fault = Literal["store", "driver", "measurement"]
#: The faults :func:`inject` makes, and the code a command that meets one fails with.
FAULT_CODES: dict[Fault, int] = {"store": -310, "driver": -240, "measurement": -240}


@dataclass
class Injected:
    """Whether the fault :func:`inject` armed has happened."""

    fired: bool = False


@contextlib.contextmanager
def inject(c: Controller, fault: Fault | None, after: int = 0) -> Iterator[Injected]:
    """``fault`` once in the body, at its ``after``-th chance (0: the first): ``store``, the
    ``after``-th ``os.fsync`` fails with ENOSPC (0: the new file's, so the old one stays; 1: the
    directory's, after the new file was renamed into place); ``driver``, the next heater write
    applies its first ``after`` channels and fails (:attr:`EmulatedDriver.fail_after
    <firmware.driver.EmulatedDriver>`); ``measurement``, the ``after``-th call of the driver's
    ``measure`` raises :class:`DriverError`. None: no fault."""
    injected, calls, driver = Injected(), [0], c.driver

    def armed(real):
        def call(*args, **kwargs):
            calls[0] += 1
            if not injected.fired and calls[0] > after:
                injected.fired = True
                if fault == "store":
                    raise OSError(errno.ENOSPC, "No space left on device")
                raise DriverError("detector read failed")
            return real(*args, **kwargs)

        return call

    if fault == "store":
        with mock.patch("os.fsync", armed(os.fsync)):
            yield injected
    elif fault == "measurement":
        driver.measure = armed(measure := driver.measure)
        try:
            yield injected
        finally:
            driver.measure = measure
    elif fault == "driver":
        driver.fail_after = after
        try:
            yield injected
        finally:
            injected.fired, driver.fail_after = driver.fail_after is None, None
    else:
        yield injected
