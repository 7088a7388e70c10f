"""The switch's ``SCHedule`` commands: a time-multiplexed sequence of matchings, stored, run
step by step, with its duty cycle."""

from __future__ import annotations

from dataclasses import replace

from firmware.commands import Param, ScpiError
from firmware.controller.core import PORTS, RECONFIGURE_ERRORS, Core, Step, pairs_of
from firmware.declarations import command, query

#: Longest dwell time of a schedule step, s.
MAX_DWELL_S = 3600.0


class ScheduleCommands(Core):
    """``SCHedule:...``."""

    @command(
        "SCHedule:ADD",
        Param("dwell", "number", 1e-6, MAX_DWELL_S, "s"),
        replace(PORTS, optional=True, default=()),
        summary="Append a step: dwell time, then the matching's port pairs. The matching must "
        "be realizable. The schedule is stored.",
        example="SCH:ADD 2ms,0,1,2,3",
        errors="-109 an odd number of ports; -224 a port twice; -221 not realizable; -310 the "
        "store failed",
    )
    def add_step(self, dwell: float, ports: tuple[int, ...]) -> None:
        plan = self.fabric.plan(pairs_of(ports, self.fabric.n_ports))
        self.schedule.append(Step(dwell, plan))
        self._persist("schedule")

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
