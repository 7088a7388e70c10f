"""The switch's ``SCHedule`` commands: a time-multiplexed sequence of matchings, stored, run
step by step, with its duty cycle.

A schedule holds at most :data:`MAX_SCHEDULE_STEPS` steps. With a store, every change writes
the whole schedule document (atomically): at most that many steps of a dwell time and the
ports of one matching, under 20 kB on a 64-port switch. ``SCH:LOAD`` replaces the schedule
with one write; ``SCH:ADD`` writes it again for each step added.
"""

from __future__ import annotations

from dataclasses import replace

from firmware.commands import Param
from firmware.controller.core import (
    PORT,
    PORTS,
    RECONFIGURE_ERRORS,
    Core,
    Step,
    pairs_of,
)
from firmware.declarations import command, query
from firmware.scpi_errors import ScpiError

#: Shortest and longest dwell time of a schedule step, s.
MIN_DWELL_S, MAX_DWELL_S = 1e-6, 3600.0
#: Most steps of a schedule (-223 beyond).
MAX_SCHEDULE_STEPS = 64
#: A step's dwell time, and what a step's matching can queue.
DWELL = Param("dwell", "number", MIN_DWELL_S, MAX_DWELL_S, "s")
STEP_ERRORS = "-109 an odd number of ports; -224 a port twice; -221 not realizable"


class ScheduleCommands(Core):
    """``SCHedule:...``."""

    @command(
        "SCHedule:ADD",
        DWELL,
        replace(PORTS, optional=True, default=()),
        summary="Append a step: dwell time, then the matching's port pairs. The matching must "
        "be realizable. The schedule is stored (the whole schedule is written again).",
        example="SCH:ADD 2ms,0,1,2,3",
        errors=f"{STEP_ERRORS}; -223 the schedule has {MAX_SCHEDULE_STEPS} steps already; -310 "
        "the store failed",
    )
    def add_step(self, dwell: float, ports: tuple[int, ...]) -> None:
        if len(self.schedule) >= MAX_SCHEDULE_STEPS:
            raise ScpiError(-223, f"the schedule has {MAX_SCHEDULE_STEPS} steps, the most it can")
        self.schedule.append(self._step(dwell, ports))
        self._persist("schedule")

    @command(
        "SCHedule:LOAD",
        Param("steps", "groups", optional=True, default=(), fields=(DWELL, PORT)),
        summary="Replace the whole schedule, stopped: per step its dwell time, the number of "
        "ports, then the matching's port pairs. Every step is checked and planned first: on "
        "any error the schedule, and its stored copy, stay as they were. Nothing: an empty "
        "schedule. The schedule is stored in one write.",
        example="SCH:LOAD 2ms,4,0,1,2,3,1ms,2,0,2",
        errors=f"{STEP_ERRORS} (in a step); -223 more than {MAX_SCHEDULE_STEPS} steps; -310 "
        "the store failed",
    )
    def load_schedule(self, steps: tuple[tuple[float, tuple[int, ...]], ...]) -> None:
        if len(steps) > MAX_SCHEDULE_STEPS:
            raise ScpiError(-223, f"{len(steps)} steps; at most {MAX_SCHEDULE_STEPS}")
        self.schedule = [self._step(dwell, ports) for dwell, ports in steps]
        self._persist("schedule")
        self.running, self.step_index, self.step_times = False, -1, []

    def _step(self, dwell: float, ports: tuple[int, ...]) -> Step:
        return Step(dwell, self.fabric.plan(pairs_of(ports, self.fabric.n_ports)))

    @query("SCHedule:COUNt", reply="integer", summary="Number of steps.", example="SCH:COUN?")
    def step_count(self) -> int:
        return len(self.schedule)

    @command(
        "SCHedule:STARt",
        summary="Apply the first step and run.",
        example="SCH:STAR",
        errors="-221 the schedule is empty; " + RECONFIGURE_ERRORS,
    )
    def start_schedule(self) -> None:
        if not self.schedule:
            raise ScpiError(-221, "the schedule is empty: add steps with SCH:ADD")
        self.step_times = []
        self._go_to(0)
        self.running = True

    @command(
        "SCHedule:STEP",
        summary="Apply the next step (the first after SCH:STAR); wraps around.",
        example="SCH:STEP",
        errors="-221 not running; " + RECONFIGURE_ERRORS,
    )
    def next_step(self) -> None:
        if not self.running:
            raise ScpiError(-221, "the schedule is not running: SCH:STAR first")
        self._go_to((self.step_index + 1) % len(self.schedule))

    def _go_to(self, index: int) -> None:
        step = self.schedule[index]
        before = self.driver.elapsed_s
        self.apply_plan(step.plan)
        self.step_index = index
        self.step_times.append((step.dwell_s, self.driver.elapsed_s - before))

    @command("SCHedule:STOP", summary="Stop; the applied matching stays.", example="SCH:STOP")
    def stop_schedule(self) -> None:
        self.running = False

    @query(
        "SCHedule:STATus",
        reply="0|1,index,steps,duty",
        summary="Running, index of the applied step, number of steps, duty cycle so far "
        "(dwell / (dwell + reconfiguration) over the steps applied since SCH:STAR).",
        example="SCH:STAT?",
    )
    def schedule_status(self) -> list[object]:
        dwell = sum(d for d, _ in self.step_times)
        busy = sum(t for _, t in self.step_times)
        duty = dwell / (dwell + busy) if self.step_times else 0.0
        return [int(self.running), self.step_index, len(self.schedule), duty]

    @command("SCHedule:CLEar", summary="Stop and empty the schedule.", example="SCH:CLE")
    def clear_schedule(self) -> None:
        self.schedule = []
        self._persist("schedule")
        self.running, self.step_index, self.step_times = False, -1, []
