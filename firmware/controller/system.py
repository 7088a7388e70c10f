"""The switch's IEEE 488.2 common commands, ``SYSTem`` and ``STATus``: identity, reset, the
error queue, limits, the interlock, time and the status bits."""

from __future__ import annotations

import numpy as np

from firmware.commands import Bound, Param
from firmware.controller.core import Core
from firmware.declarations import command, query
from firmware.scpi_errors import STB_EAV, STB_ESB, STB_MSS, STB_OPER, STB_QUES, ScpiError


class SystemCommands(Core):
    """The IEEE 488.2 common commands (``*IDN``, ``*RST``, ``*CLS``, ``*OPC``, ``*WAI``,
    ``*TST``, ``*ESR``, ``*ESE``, ``*SRE``, ``*STB``, ``*OPT``), ``SYSTem:...`` and
    ``STATus:...``."""

    @query(
        "*IDN",
        reply='"maker,model,serial,version"',
        summary="Identify the switch.",
        example="*IDN?",
    )
    def identify(self) -> str:
        return self.idn

    @query(
        "SYSTem:DRIVer",
        reply="class,update,channel,bus,full",
        summary="The heater driver's class and its electronics' timing: the time of an update "
        "(s), of each channel loaded one after another (s) on buses of that many channels (0: "
        "one bus), and the time added pro rata of the channels written (s). A reconfiguration "
        "takes that, then the heaters' settling (docs/physics.md, section 7.4).",
        example="SYST:DRIV?",
    )
    def driver_class(self) -> list[object]:
        d = self.driver.electronics
        return [d.name, d.update_s, d.channel_s, d.bus_channels, d.full_s]

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
        summary="Clear the error queue and the event status register (this client's).",
        example="*CLS",
        execution="session",
    )
    def clear_status(self) -> None:
        self.errors.clear()
        self.errors.events = 0

    @command(
        "*OPC",
        summary="Set the operation-complete bit (1) of this client's event status register "
        "once the overlapped operation it started (CAL:RUN, RING:LOCK) has completed; at once "
        "when none runs. The line goes on at once (*OPC? and *WAI wait instead).",
        example="CAL:RUN;*OPC",
        execution="session",
    )
    def arm_operation_complete(self) -> None:
        self.session.arm_opc()

    @query(
        "*OPC",
        reply="1",
        summary="Operation complete: 1 once the overlapped operation this client started "
        "(CAL:RUN, RING:LOCK) has completed and the heaters written last have settled on the "
        "chip (a reading after it sees the new state). Its errors are in the queue by then.",
        example="RING:LOCK 0;*OPC?",
        execution="session",
    )
    def operation_complete(self) -> int:
        self.session.wait()
        self.driver.wait_settled()
        return 1

    @command(
        "*WAI",
        summary="Wait to run the rest of the line, and the next lines, until the overlapped "
        "operation this client started (CAL:RUN, RING:LOCK) has completed and the heaters "
        "written last have settled on the chip.",
        example="RING:LOCK 0;*WAI;RING:UNL 0",
        execution="session",
    )
    def wait_to_continue(self) -> None:
        self.session.wait()
        self.driver.wait_settled()

    @query(
        "*TST",
        reply="0 | 1",
        summary="Self-test: detectors, calibration, and the heater read-back against what the "
        "switch wrote (a write behind its back fails it); 0 when it passes (else 1 and -330 in "
        "the queue, naming the check).",
        example="*TST?",
    )
    def self_test(self) -> int:
        seen = self.driver.detect(np.zeros(self.driver.n_detectors))
        problems = []
        if not (np.all(np.isfinite(seen)) and seen.shape == (self.driver.n_detectors,)):
            problems.append("detector check failed")
        if self.calibration is not None and self.calibration.n_heaters != self.driver.n_channels:
            problems.append("calibration does not fit the heaters")
        if (moved := self.heaters_moved()).size:
            c = int(moved[0])
            problems.append(
                f"heater read-back: channel {c} reads {self.driver.currents()[c]:.6g} mA, "
                f"the switch wrote {self.written_mA[c]:.6g} mA ({moved.size} channel(s) differ)"
            )
        for problem in problems:
            self.errors.push(ScpiError(-330, problem))
        return 1 if problems else 0

    @query(
        "*ESR",
        reply="integer 0-255",
        summary="This client's event status register, cleared by reading it: 1 operation "
        "complete (*OPC), 4 query error, 8 device-dependent error, 16 execution error, 32 "
        "command error, 128 power on (set when the client connected).",
        example="*ESR?",
        execution="session",
    )
    def event_status(self) -> int:
        errors = self.errors
        value, errors.events = errors.events, 0
        return value

    @command(
        "*ESE",
        Param("mask", "int", 0, 255),
        summary="Which event status bits set the status byte's ESB bit (32), this client's.",
        example="*ESE 60",
        execution="session",
    )
    def set_event_enable(self, mask: int) -> None:
        self.session.ese = mask

    @query("*ESE", reply="integer 0-255", example="*ESE?", execution="session")
    def event_enable(self) -> int:
        return self.session.ese

    @command(
        "*SRE",
        Param("mask", "int", 0, 255),
        summary="Which status byte bits set its master summary bit (64), this client's.",
        example="*SRE 4",
        execution="session",
    )
    def set_service_enable(self, mask: int) -> None:
        self.session.sre = mask & ~STB_MSS  # bit 6 cannot enable itself

    @query("*SRE", reply="integer 0-255", example="*SRE?", execution="session")
    def service_enable(self) -> int:
        return self.session.sre

    @query(
        "*STB",
        reply="integer 0-255",
        summary="Status byte: 4 this client's error queue is not empty, 8 a questionable bit "
        "is set (STAT:QUES?), 32 an enabled event (*ESR & *ESE), 64 an enabled bit (*SRE), "
        "128 an operation bit is set (STAT:OPER?). Reading it clears nothing.",
        example="*STB?",
        execution="session",
    )
    def status_byte(self) -> int:
        session = self.session
        with self.lock:  # the condition bits are the device's
            oper, ques = self.operation_status(), self.questionable_status()
        stb = (
            STB_EAV * bool(len(session.errors))
            | STB_QUES * bool(ques)
            | STB_ESB * bool(session.errors.events & session.ese)
            | STB_OPER * bool(oper)
        )
        return stb | STB_MSS * bool(stb & session.sre)

    @query(
        "*OPT",
        reply='"0" or the options, comma-separated',
        summary="Installed options: 0 (none).",
        example="*OPT?",
        execution="session",
    )
    def options(self) -> str:
        return "0"

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
        "hardware fault could not be rolled back, 32 the heater read-back differs from what the "
        "switch wrote (written behind its back: routes not guaranteed).",
        example="STAT:QUES?",
    )
    def questionable_status(self) -> int:
        flags = (
            self.calibration is None,
            self.interlock,
            self.manual,
            self.ring_drifted(),
            self.fault,
            self.heaters_moved().size > 0,
        )
        return sum(int(f) << i for i, f in enumerate(flags))
