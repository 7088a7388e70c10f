"""The switch's IEEE 488.2 common commands, ``SYSTem`` and ``STATus``: identity, reset, the
error queue, limits, the interlock, time and the status bits."""

from __future__ import annotations

import numpy as np

from firmware.commands import Bound, Param, ScpiError
from firmware.controller.core import Core
from firmware.declarations import command, query


class SystemCommands(Core):
    """``*IDN``, ``*RST``, ``*CLS``, ``*OPC``, ``*WAI``, ``*TST``, ``SYSTem:...`` and
    ``STATus:...``."""

    @query(
        "*IDN",
        reply='"maker,model,serial,version"',
        summary="Identify the switch.",
        example="*IDN?",
    )
    def identify(self) -> str:
        return self.idn

    @command(
        "*RST",
        summary="Reset: routes cleared, heaters off, schedule stopped, rings unlocked, limits to "
        "the hardware's, interlock released. Calibration, the stored schedule and the error "
        "queue are kept.",
        example="*RST",
        errors="-240 the hardware failed (state rolled back)",
    )
    def reset(self) -> None:
        self.fault = self.interlock = False  # the zero state passes every check
        self._apply(np.zeros(self.driver.n_channels), None)
        self._reset_state()

    @command(
        "*CLS",
        summary="Clear the error queue (this client's).",
        example="*CLS",
        execution="session",
    )
    def clear_status(self) -> None:
        self.errors.clear()

    @query(
        "*OPC",
        reply="1",
        summary="Operation complete: 1 once the overlapped operation this client started "
        "(CAL:RUN, RING:LOCK) has completed, at once when there is none. Its errors are in "
        "the queue by then.",
        example="RING:LOCK 0;*OPC?",
        execution="session",
    )
    def operation_complete(self) -> int:
        self.session.wait()
        return 1

    @command(
        "*WAI",
        summary="Wait to run the rest of the line, and the next lines, until the overlapped "
        "operation this client started (CAL:RUN, RING:LOCK) has completed.",
        example="RING:LOCK 0;*WAI;RING:UNL 0",
        execution="session",
    )
    def wait_to_continue(self) -> None:
        self.session.wait()

    @query(
        "*TST",
        reply="0 | 1",
        summary="Self-test: heater read-back and detectors; 0 when it passes (else 1 and -330 "
        "in the queue).",
        example="*TST?",
    )
    def self_test(self) -> int:
        seen = self.driver.detect(np.zeros(self.driver.n_detectors))
        ok = np.all(np.isfinite(seen)) and seen.shape == (self.driver.n_detectors,)
        if self.calibration is not None:
            ok = ok and self.calibration.n_heaters == self.driver.n_channels
        if not ok:
            self.errors.push(ScpiError(-330, "detector or calibration check failed"))
        return 0 if ok else 1

    @query(
        "SYSTem:ERRor",
        reply='code,"message;detail"',
        summary="Oldest error in the queue (this client's), removing it.",
        example="SYST:ERR?",
        execution="session",
    )
    def next_error(self) -> str:
        e = self.errors.pop()
        return f"{e.code},{e.text}"

    @query(
        "SYSTem:ERRor:COUNt",
        reply="integer",
        summary="Number of errors in the queue (this client's).",
        example="SYST:ERR:COUN?",
        execution="session",
    )
    def error_count(self) -> int:
        return len(self.errors)

    @query(
        "SYSTem:PORTs",
        reply="integer",
        summary="Number of endpoints (ports) of the switch.",
        example="SYST:PORT?",
    )
    def port_count(self) -> int:
        return self.fabric.n_ports

    @command(
        "SYSTem:INTerlock",
        Param("engaged", "bool"),
        summary="Engage (ON) or release (OFF) the interlock. Engaging turns every heater off and "
        "clears the routes; while engaged, any command that would drive a heater fails with "
        "-221.",
        example="SYST:INT OFF",
    )
    def set_interlock(self, engaged: bool) -> None:
        if engaged:
            self._apply(np.zeros(self.driver.n_channels), None)  # zero passes the interlock
            self._reset_rings()
            self.running = False
        self.interlock = engaged

    @query("SYSTem:INTerlock", reply="0 | 1")
    def interlock_engaged(self) -> bool:
        return self.interlock

    @command(
        "SYSTem:POWer:LIMit",
        Param("budget", "number", 0, 1e7, "mW"),
        summary="Total heater power budget, at most the hardware's. A configuration above it "
        "is refused before any heater is written.",
        example="SYST:POW:LIM 2000 mW",
        errors="-222 above the hardware's budget; -221 the heaters draw more now",
    )
    def set_power_limit(self, budget: float) -> None:
        if budget > self._hw_budget_mW:
            raise ScpiError(-222, f"budget above the hardware's {self._hw_budget_mW:.6g} mW")
        if self.driver.power_mW(self.driver.currents()) > budget:
            raise ScpiError(-221, "the heaters now draw more than that: lower them first")
        self.power_budget_mW = budget

    @query("SYSTem:POWer:LIMit", reply="number, mW")
    def power_limit(self) -> float:
        return float(self.power_budget_mW)

    @query(
        "SYSTem:POWer",
        reply="number, mW",
        summary="Total heater power now, mW.",
        example="SYST:POW?",
    )
    def power(self) -> float:
        return float(self.driver.power_mW(self.driver.currents()))

    @command(
        "SYSTem:CURRent:LIMit",
        Param("limit", "number", 0, Bound("max_current_mA"), "mA"),
        summary="Per-channel current limit, at most the hardware's.",
        example="SYST:CURR:LIM MAX",
        errors="-221 a heater carries more now",
    )
    def set_current_limit(self, limit: float) -> None:
        new = np.minimum(self._hw_limit_mA, limit)
        if np.any(self.driver.currents() > new):
            raise ScpiError(-221, "a heater now carries more than that: lower it first")
        self.current_limit_mA = new

    @query("SYSTem:CURRent:LIMit", reply="number, mA")
    def current_limit(self) -> float:
        return float(self.current_limit_mA.max())

    @query(
        "SYSTem:TEMPerature",
        reply="number, C",
        summary="Chip temperature, C.",
        example="SYST:TEMP?",
    )
    def temperature(self) -> float:
        return self.driver.temperature_C()

    @query(
        "SYSTem:TIME",
        reply="number, s",
        summary="Hardware time (modeled on the emulator) of this client's last command (not "
        "query): heater writes, settling and detector reads; 0 when it touched no hardware, s. "
        "An overlapped operation's counts once it has completed, with whatever other clients' "
        "commands measured between its steps.",
        example="SYST:TIME?",
        execution="session",
    )
    def last_time(self) -> float:
        return self.session.last_time_s

    @query(
        "SYSTem:TIME:TOTal",
        reply="number, s",
        summary="Hardware time spent since power-on, s.",
        example="SYST:TIME:TOT?",
    )
    def total_time(self) -> float:
        return self.driver.elapsed_s

    @query(
        "STATus:OPERation",
        reply="integer",
        summary="Operation condition bits: 1 a matching is applied, 2 a schedule is running, 4 "
        "every requested ring is locked (and at least one is), 8 an overlapped operation "
        "(CAL:RUN, RING:LOCK: any client's) is running.",
        example="STAT:OPER?",
    )
    def operation_status(self) -> int:
        bits = (self.plan is not None, self.running, self.rings_locked(), bool(self.busy))
        return sum(int(b) << i for i, b in enumerate(bits))

    @query(
        "STATus:QUEStionable",
        reply="integer",
        summary="Questionable condition bits: 1 not calibrated, 2 interlock engaged, 4 heaters "
        "set by hand (routes not guaranteed), 8 a locked ring has drifted off lock, 16 a "
        "hardware fault could not be rolled back.",
        example="STAT:QUES?",
    )
    def questionable_status(self) -> int:
        flags = (
            self.calibration is None,
            self.interlock,
            self.manual,
            self.ring_drifted(),
            self.fault,
        )
        return sum(int(f) << i for i, f in enumerate(flags))
