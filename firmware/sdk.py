"""The Python SDK: :class:`Switch`, the host-side client of a switch, over any transport.

A transport moves lines of the command language (:mod:`firmware.commands`) to a controller and
replies back: :class:`InProcessTransport` calls a :class:`~firmware.controller.Controller` in
this process; instrument transports (VISA sockets, serial lines) live in :mod:`hil` and are
found by :meth:`Switch.open` through the ``pswitch.transports`` entry points, named by the
resource string's prefix (``TCPIP0::host::5025::SOCKET`` -> ``TCPIP``), so ``firmware`` never
imports ``hil``.

Every line the SDK sends is a command the controller declares (:data:`COMMANDS`), written by
:func:`~firmware.commands.command_line`, which checks every argument against its parameter
first (types: integers for ports and channels, ``bool`` for switches; ranges: the switch's own
ports, channels and rings): a bad argument raises :class:`~photonics.errors.SettingsError` (or
:class:`~photonics.errors.PortError` for a matching) before a byte is sent. Every method checks
the switch's error queue after its command; an instrument error is raised as
:class:`SwitchError` carrying the SCPI code and message, after which the state on the switch is
as it was before the command. Each connection to a switch has its own error queue, so a
client only ever reads its own errors; an overlapped command (``CAL:RUN``, ``RING:LOCK``),
which returns at once over the network: the method returns when it has completed (it polls
the operation bit of ``STAT:OPER?``, so no reply outlasts a short transport timeout), and raises
its error.
"""

from __future__ import annotations

import numbers
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol

import numpy as np

from firmware.commands import Spec, command_line
from firmware.controller import Controller, Rings
from firmware.controller.measure import UNITS, in_unit
from firmware.controller.schedule import MAX_DWELL_S, MAX_SCHEDULE_STEPS, MIN_DWELL_S
from firmware.declarations import bind
from firmware.driver import LAUNCH_MW, EmulatedDriver
from firmware.electronics import DriverClass, driver_class
from firmware.fabric import CircuitSchedule, Job, Link, circuit_timing
from firmware.scpi_errors import drain_errors
from firmware.store import Store
from photonics.chips import topologies
from photonics.chips.build import build_chip
from photonics.errors import PswitchError, SettingsError
from photonics.matching import Matching

#: The switch's commands by header, as the controller declares them: every line the SDK sends is
#: written from one of these (so the SDK cannot name a command the firmware does not have).
COMMANDS = {spec.header: spec for spec in Controller.DECLARED}
#: ``STAT:OPER?`` bit set while an overlapped operation runs, and the SDK's poll of it (s).
OPERATION_RUNNING, POLL_S = 8, 0.005


class Transport(Protocol):
    """Lines to a switch and replies back (terminators are the transport's business)."""

    def write(self, line: str) -> None:
        """Send a line that has no query."""
        ...

    def query(self, line: str) -> str:
        """Send a line with queries; return the reply line ("" when the switch gave none)."""
        ...

    def close(self) -> None: ...


class InProcessTransport:
    """A transport that hands each line to a controller in this process."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    def write(self, line: str) -> None:
        self.controller.handle(line)

    def query(self, line: str) -> str:
        return self.controller.handle(line) or ""

    def close(self) -> None:
        pass


class SwitchError(PswitchError):
    """An error the switch reported: its SCPI ``code`` and ``message``."""

    def __init__(self, code: int, message: str, command: str = "") -> None:
        self.code, self.message, self.command = code, message, command
        where = f" (after {command!r})" if command else ""
        super().__init__(f"switch error {code}: {message}{where}")


@dataclass(frozen=True)
class CircuitInfo:
    """A lit port's circuit on the switch: where its light goes, the predicted insertion loss
    (dB) and the cells it crosses."""

    source: int
    target: int
    loss_db: float
    cells: tuple[int, ...]


@dataclass(frozen=True)
class ScheduleRun:
    """What running a schedule did: steps applied, their modeled reconfiguration times (s) and
    the duty cycle (fraction of time circuits carried traffic)."""

    steps: int
    reconfiguration_s: tuple[float, ...]
    duty_cycle: float


def as_matching(matching: Matching | Iterable[tuple[int, int]], n: int) -> Matching:
    """``matching`` as a :class:`Matching` on ``n`` ports (pairs are checked)."""
    return matching if isinstance(matching, Matching) else Matching(list(matching), n)


class Switch:
    """A switch seen from Python. Times are modeled hardware seconds on the emulator, currents
    mA, powers mW, losses dB; ports and channels are 0-based."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        #: The commands, their ranges bound to this switch's sizes (ports, channels, rings).
        self.commands: Mapping[str, Spec] = COMMANDS
        self.ports = int(self._ask("SYSTem:PORTs"))
        channels, rings = (int(self._ask(h)) for h in ("HEATer:COUNt", "RING:COUNt"))
        grammar = bind(Controller.DECLARED, ports=self.ports, channels=channels, rings=rings)
        self.commands = {spec.header: spec for spec in grammar}

    # ---- opening ---------------------------------------------------------------------------
    @classmethod
    def emulated(
        cls,
        ports: int = 8,
        mesh: str = "clements",
        seed: int = 0,
        rings: bool = False,
        calibrated: bool = True,
        state_dir: str | Path | None = None,
        launch_mW: float | Sequence[float] = LAUNCH_MW,
        pitch_um: tuple[float, float] | None = None,
        driver: str | DriverClass = "bench",
    ) -> Switch:
        """A switch on an emulated chip in this process.

        ``mesh``: a registered topology whose endpoints send and receive on one port
        (:func:`photonics.chips.topologies.names`: ``clements``, ``reck``, ``hexagonal``, ...),
        built for ``ports`` endpoints; ``rings``: add-drop rings in front of the photodiodes
        (feed-forward only); ``calibrated``: start with the chip's factory calibration (else
        ``calibrate()`` first); ``state_dir``: the non-volatile store's directory (None: nothing
        survives the object); ``launch_mW``: what the endpoints send into the chip, mW (one number
        for every endpoint, or one each): the light :meth:`powers` reads, the emulated world's
        (``transport.controller.driver.launch_mW`` changes it later); ``pitch_um``: a feed-forward
        chip's (column, mode) pitch, um, e.g. ``(60, 20)`` for a dense chip whose thermal crosstalk
        ``calibrate()`` then calibrates (None: the default); ``driver``: the heater driver's
        class (:mod:`firmware.electronics`: ``bench``, ``parallel``, ``product``,
        ``integrated``), which times every reconfiguration the switch reports.
        """
        electronics = driver if isinstance(driver, DriverClass) else driver_class(driver)
        topology = topologies.topology(mesh)
        chip = build_chip(mesh, ports, seed, rings, pitch_um)
        fabric = topology.fabric(ports)
        store = None if state_dir is None else Store(state_dir)
        ring_cfg = Rings.of_chip(chip) if rings else Rings()
        model = f"EMU-{mesh.upper()}-{ports}"
        calibration = None
        if calibrated:
            calibration = chip.factory_calibration(model)
            if store is not None and store.read_calibration() is None:
                store.write_calibration(calibration)  # shipped in the device's memory
                calibration = None  # the controller loads it from the store
        hardware = EmulatedDriver(
            chip, rng=np.random.default_rng(seed), launch_mW=launch_mW, electronics=electronics
        )
        layout = chip.heater_layout
        controller = Controller(
            hardware, fabric, store, ring_cfg, calibration, model, str(seed), layout
        )
        return cls(InProcessTransport(controller))

    @classmethod
    def open(
        cls, resource: str, transports: Mapping[str, Callable[[str], Transport]] | None = None
    ) -> Switch:
        """Connect to a switch by resource string. ``transports`` maps a resource prefix
        (``TCPIP``, ``ASRL``, ...) to a factory; by default the ``pswitch.transports`` entry
        points installed with the package (the VISA transport of :mod:`hil`)."""
        prefix = re.match(r"^[A-Za-z]+", resource)
        if prefix is None:
            raise SettingsError(f"cannot read a resource prefix from {resource!r}")
        found = dict(transports or {})
        if transports is None:
            found = {ep.name: ep.load() for ep in entry_points(group="pswitch.transports")}
        factory = found.get(prefix.group(0).upper())
        if factory is None:
            raise SettingsError(
                f"no transport for {resource!r}: known prefixes {sorted(found) or 'none'}"
            )
        return cls(factory(resource))

    def __repr__(self) -> str:
        """Asks the switch its model and calibration state (says so when it cannot)."""
        try:
            model = self.idn().split(",")[1]
            state = "calibrated" if self.calibration()["calibrated"] else "not calibrated"
        except (PswitchError, OSError, IndexError) as exc:
            return f"<Switch: {self.ports} ports; state unreadable: {exc}>"
        return f"<Switch {model}: {self.ports} ports, {state}>"

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> Switch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the wire --------------------------------------------------------------------------
    def _raise_errors(self, command: str) -> None:
        """One command, one exception: the oldest error the switch queued, the rest drained."""
        try:
            queued = drain_errors(self.transport.query)
        except ValueError as exc:
            raise SwitchError(-300, str(exc), command) from None
        if queued:
            raise SwitchError(*queued[0], command)

    def _send(self, header: str, *args: object) -> float:
        """Send the set form of a declared command; return the hardware time it took (s)."""
        spec = self.commands[header]
        return self._write(command_line(spec, *args), wait=spec.execution == "overlapped")

    def _write(self, line: str, wait: bool = False) -> float:
        """Send a line of :func:`~firmware.commands.command_line`; with ``wait`` (an
        overlapped command, which returns at once over the network) poll ``STAT:OPER?`` until
        no operation runs, so no reply waits longer than a measurement batch whatever the
        transport's timeout; then read the errors and the hardware time (s)."""
        self.transport.write(line)
        while wait and int(self._ask("STATus:OPERation")) & OPERATION_RUNNING:
            time.sleep(POLL_S)
        self._raise_errors(line)
        return float(self._ask("SYSTem:TIME"))

    def _ask(self, header: str, *args: object) -> str:
        """The reply to the query form of a declared command."""
        line = command_line(self.commands[header], *args, query=True)
        reply = self.transport.query(line)
        if reply == "":
            self._raise_errors(line)
        return reply

    def _numbers(self, header: str, *args: object) -> list[float]:
        reply = self._ask(header, *args)
        return [float(x) for x in reply.split(",")] if reply else []

    # ---- routes ----------------------------------------------------------------------------
    def connect(self, matching: Matching | Iterable[tuple[int, int]]) -> float:
        """Apply a whole matching (replacing the one applied); the hardware time, s."""
        m = as_matching(matching, self.ports)
        return self._send("ROUTe:MATChing", m.pairs)

    def add(self, a: int, b: int) -> float:
        """Connect two dark ports, keeping every other circuit; the hardware time, s."""
        return self._send("ROUTe:CONNect", a, b)

    def disconnect(self, port: int | None = None) -> float:
        """Disconnect the pair holding ``port``, or every pair; the hardware time, s."""
        if port is None:
            return self._send("ROUTe:CLEar")
        return self._send("ROUTe:DISConnect", port)

    def failover(self, job: Job, failed_port: int) -> tuple[Job, float, list[int]]:
        """Splice a dark spare of ``job`` in for ``failed_port``, the one that disturbs fewest
        live circuits and then switches fewest cells: the job with the spare in place, the
        hardware time (s) and the sources of live circuits it disturbed."""
        current = self.matching()
        spares = [s for s in job.spares if current.partner(s) is None]
        if not spares:
            raise SettingsError(f"job {job.name!r} has no dark spare among {job.spares}")
        peer = current.partner(failed_port)
        if peer is None:  # dark now: nothing to re-route, the spare takes its place in the job
            return job.with_spare(failed_port, spares[0]), 0.0, []
        seconds = self._send("ROUTe:REPLace", failed_port, spares)
        spare = self.matching().partner(peer)
        disturbed = [int(p) for p in self._numbers("ROUTe:REPLace:DISTurbed")]
        return job.with_spare(failed_port, spare), seconds, disturbed

    def matching(self) -> Matching:
        ports = [int(p) for p in self._numbers("ROUTe:MATChing")]
        return Matching(zip(ports[::2], ports[1::2], strict=True), self.ports)

    def paths(self) -> dict[int, CircuitInfo]:
        """Every lit port's circuit, by source port."""
        out = {}
        for a, b in self.matching().pairs:
            for src in (a, b):
                target, loss, *cells = self._numbers("ROUTe:PATH", src)
                out[src] = CircuitInfo(src, int(target), loss, tuple(int(c) for c in cells))
        return out

    # ---- heaters ---------------------------------------------------------------------------
    def heaters(self) -> np.ndarray:
        """Every channel's current, mA."""
        return np.array(self._numbers("HEATer:ALL"))

    def set_heater(self, channel: int, current_mA: float) -> float:
        return self._send("HEATer:CURRent", channel, current_mA)

    def set_heaters(self, current_mA: Sequence[float]) -> float:
        """Set every channel at once (atomic); the hardware time, s."""
        return self._send("HEATer:ALL", current_mA)

    def power_mW(self) -> float:
        return float(self._ask("SYSTem:POWer"))

    # ---- detectors -------------------------------------------------------------------------
    def powers(self, ports: Iterable[int] | None = None, unit: str = "mW") -> np.ndarray:
        """The light arriving at the ports' monitor photodiodes now, in ``unit``: ``"mW"`` or
        ``"dBm"``. Every port (``MEAS:POW:ALL?``), or ``ports`` in their order (``MEAS:POW?``
        each), asked in mW and converted here as the switch converts (:func:`in_unit`). A
        reading below the floor, -60 dBm (1e-6 mW), reads as the floor. The arguments are
        checked before anything is sent: ports integers in 0..ports-1, unit one of the two,
        any case."""
        if not isinstance(unit, str) or unit.upper() not in UNITS:
            raise SettingsError(f"unit must be 'mW' or 'dBm', got {unit!r}")
        if ports is None:
            return in_unit(self._numbers("MEASure:POWer:ALL"), unit)
        if isinstance(ports, str) or not isinstance(ports, Iterable):
            raise SettingsError(f"ports must be a sequence of port numbers or None, got {ports!r}")
        # every line is written (and so checked) before the first is sent
        spec = self.commands["MEASure:POWer"]
        lines = [command_line(spec, p, query=True) for p in ports]
        return in_unit([float(self.transport.query(line)) for line in lines], unit)

    # ---- calibration and rings -------------------------------------------------------------
    def calibrate(self, save: bool = True) -> float:
        """Self-calibrate through the detectors and, with ``save``, store the result, all or
        nothing (with no store: -310 before anything runs); the hardware time, s."""
        return self._send("CALibration:RUN", save)

    def calibration(self) -> dict[str, object]:
        """Whether calibrated, the chip id, when, and whether the calibration is stored."""
        ok, chip_id, created, stored = self._ask("CALibration:STATus").split(",")
        return {
            "calibrated": ok == "1",
            "chip_id": chip_id.strip('"'),
            "created": created.strip('"'),
            "stored": stored == "1",
        }

    def lock_ring(self, ring: int) -> float:
        return self._send("RING:LOCK", ring)

    def unlock_ring(self, ring: int) -> float:
        return self._send("RING:UNLock", ring)

    def track_rings(self) -> float:
        """Re-centre every locked ring once (``RING:TRACk``): call it periodically to follow
        the chip's drift."""
        return self._send("RING:TRACk")

    def ring_status(self, ring: int) -> tuple[bool, float]:
        """Whether the ring is locked, and its estimated lock error, nm."""
        locked, error = self._numbers("RING:STATus", ring)
        return bool(locked), error

    # ---- schedules -------------------------------------------------------------------------
    def load_schedule(
        self, steps: Sequence[tuple[Matching | Iterable[tuple[int, int]], float]]
    ) -> None:
        """Replace the schedule, stopped, by ``(matching, dwell_s)`` steps (at most
        :data:`~firmware.controller.schedule.MAX_SCHEDULE_STEPS`) in one command
        (``SCH:LOAD``): on any error the switch keeps the schedule it had."""
        if len(steps) > MAX_SCHEDULE_STEPS:
            raise SettingsError(f"{len(steps)} schedule steps; at most {MAX_SCHEDULE_STEPS}")
        groups = [(dwell_s, as_matching(m, self.ports).pairs) for m, dwell_s in steps]
        self._send("SCHedule:LOAD", *groups)

    def run_schedule(self, steps: int | None = None) -> ScheduleRun:
        """Start the schedule and apply ``steps`` steps (an integer >= 1; default: each
        once)."""
        if steps is not None and (
            isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1
        ):
            raise SettingsError(f"steps must be an integer >= 1, got {steps!r}")
        count = int(self._ask("SCHedule:COUNt"))
        total = count if steps is None else steps
        times = [self._send("SCHedule:STARt")]
        times += [self._send("SCHedule:STEP") for _ in range(total - 1)]
        *_, duty = self._numbers("SCHedule:STATus")
        return ScheduleRun(total, tuple(times), duty)

    def stop_schedule(self) -> None:
        self._send("SCHedule:STOP")

    def run_matchings(
        self, steps: Sequence[tuple[Matching | Iterable[tuple[int, int]], float]]
    ) -> tuple[float, ...]:
        """Apply ``(matching, dwell_s)`` steps in order through the switch's schedule, as many
        as given: loaded :data:`~firmware.controller.schedule.MAX_SCHEDULE_STEPS` at a time
        (``SCH:LOAD``, replacing the schedule the switch held), each batch run once
        (``SCH:STAR``, ``SCH:STEP``), then stopped. The hardware time of each step as the switch
        reports it (s): the reconfiguration into it, from the matching applied before."""
        times: list[float] = []
        for first in range(0, len(steps), MAX_SCHEDULE_STEPS):
            batch = steps[first : first + MAX_SCHEDULE_STEPS]
            self.load_schedule(batch)
            times += self.run_schedule(len(batch)).reconfiguration_s
        self._send("SCHedule:STOP")
        return tuple(times)

    def run_collective(self, schedule: CircuitSchedule, link: Link) -> tuple[float, ...]:
        """Run a collective compiled for this switch (:func:`~firmware.fabric.compile_collective`
        with its fabric) through its schedule (:meth:`run_matchings`): each matching held for
        its steps' traffic at ``link`` (the dwell, within 1 us .. 1 h), consecutive steps of one
        matching as one. The reconfiguration time (s) before each step as the switch reports
        it, 0 where the matching stays: ``circuit_timing(schedule, link, times)`` is the
        collective's time on this switch."""
        n = schedule.steps[0].matching.n_ports if schedule.steps else self.ports
        if n != self.ports:
            raise SettingsError(f"schedule compiled for {n} ports; the switch has {self.ports}")
        traffic = circuit_timing(schedule, link, 0.0).steps
        runs: list[tuple[Matching, float]] = []  # (matching, dwell) of each change of matching
        first: list[bool] = []
        for i, (step, t) in enumerate(zip(schedule.steps, traffic, strict=True)):
            first.append(i == 0 or step.matching != schedule.steps[i - 1].matching)
            if first[-1]:
                runs.append((step.matching, 0.0))
            runs[-1] = (step.matching, runs[-1][1] + t.transfer_s)
        dwell = [(m, min(max(d, MIN_DWELL_S), MAX_DWELL_S)) for m, d in runs]
        measured = iter(self.run_matchings(dwell))
        return tuple(next(measured) if f else 0.0 for f in first)

    # ---- system ----------------------------------------------------------------------------
    def idn(self) -> str:
        return self._ask("*IDN")

    def driver_class(self) -> DriverClass:
        """The heater driver's class, as the switch reports it (``SYST:DRIV?``)."""
        name, update, channel, bus, full = self._ask("SYSTem:DRIVer").split(",")
        try:
            return DriverClass(name, float(update), float(channel), int(bus), float(full))
        except (ValueError, SettingsError) as exc:
            raise SwitchError(-300, f"bad SYST:DRIV? reply: {exc}") from None

    def reset(self) -> float:
        return self._send("*RST")

    def self_test(self) -> bool:
        return self._ask("*TST") == "0"

    def errors(self) -> list[tuple[int, str]]:
        """Drain the error queue: (code, message) pairs, oldest first."""
        try:
            return drain_errors(self.transport.query)
        except ValueError as exc:
            raise SwitchError(-300, str(exc)) from None

    def status(self) -> dict[str, bool]:
        """The operation and questionable condition bits by name."""
        op, ques = int(self._ask("STATus:OPERation")), int(self._ask("STATus:QUEStionable"))
        names = ("routed", "schedule_running", "rings_locked", "operation_running")
        flags = ("uncalibrated", "interlock", "manual_heaters", "ring_drifted", "fault")
        out = {n: bool(op >> i & 1) for i, n in enumerate(names)}
        out.update({n: bool(ques >> i & 1) for i, n in enumerate(flags)})
        return out

    def set_interlock(self, engaged: bool) -> float:
        """Engage (True) or release (False) the interlock; nothing but a ``bool``."""
        return self._send("SYSTem:INTerlock", engaged)

    def set_limits(self, current_mA: float | None = None, power_mW: float | None = None) -> None:
        """Lower the per-channel current limit (mA) and/or the total power budget (mW)."""
        limits = (("SYSTem:CURRent:LIMit", current_mA), ("SYSTem:POWer:LIMit", power_mW))
        lines = [command_line(self.commands[h], v) for h, v in limits if v is not None]
        for line in lines:  # both checked before either is sent
            self._write(line)
