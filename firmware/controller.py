"""The switch controller: the device-side state machine that runs the command language.

:meth:`Controller.handle` takes one line (see :mod:`firmware.commands` and
:func:`~firmware.commands.switch_grammar`) and returns the replies of its queries joined by
``;`` (None when it has none). The whole line is parsed first; a syntax error runs nothing.
Commands then run in order; a command that fails leaves the state exactly as it was, puts its
error in the queue and stops the rest of the line (later commands may rely on it).

State: the applied configuration (a :class:`~photonics.switch.SwitchPlan` and the heater
currents), the calibration, limits, interlock, rings, schedule and error queue. Every change of
heater currents goes through :meth:`Controller._apply`: the whole new state is checked
(channels, per-channel limit, power budget, interlock) before the first heater is written, and
a driver failure part-way is rolled back to the exact previous currents. With a
:class:`~firmware.store.Store`, the calibration (``CAL:SAVE``), the applied configuration and the
schedule survive a restart: a new controller on the same store re-applies them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import scipy.sparse as sp

from firmware.commands import Command, ErrorQueue, ScpiError, format_reply, parse_line
from firmware.commands import switch_grammar as _grammar
from firmware.driver import ChipDriver, DriverError
from firmware.fabric import Job, failover
from firmware.store import Store, StoreError
from photonics.calibration import Calibration
from photonics.chip import Chip
from photonics.errors import (
    CalibrationFileError,
    FitError,
    LimitError,
    MatchingError,
    PortError,
    PswitchError,
)
from photonics.feedforward import FeedForwardMesh
from photonics.matching import Matching
from photonics.selfcal import calibrate_mesh, internal_heaters
from photonics.switch import Fabric, FeedForwardFabric, SwitchPlan
from photonics.thermal import currents_for_phase

#: Three-point fits that refine a ring lock after the sweep.
RING_FIT_ITERATIONS = 4
#: Rounds of re-centring every locked ring after a change.
RING_TRACK_ROUNDS = 6
#: A locked ring whose estimated error exceeds this fraction of its FWHM is reported unlocked.
RING_LOCK_TOLERANCE = 0.25

try:
    _VERSION = version("pswitch-photonics")
except PackageNotFoundError:  # running from a source tree
    _VERSION = "0"


@dataclass(frozen=True)
class Rings:
    """The rings the controller can lock: the heater channel of each, the detector behind each
    (its drop port), and the rings' design FWHM and FSR (nm) and heater efficiency (nm/mW),
    which size the lock sweep (one FSR and a quarter, in steps of a quarter FWHM)."""

    channels: tuple[int, ...] = ()
    detectors: tuple[int, ...] = ()
    fwhm_nm: float = 0.18
    fsr_nm: float = 9.1
    nm_per_mW: float = 1.82

    @classmethod
    def of_chip(cls, chip: Chip) -> Rings:
        """The output rings of an emulated feed-forward chip: ring k's heater follows the
        mesh's heaters, its drop port is detector k (none without ``output_rings``)."""
        if not chip.spec.output_rings:
            return cls()
        n, spec = chip.n_ports, chip.spec
        first = 2 * chip.mesh.n_mzis + n
        return cls(
            tuple(range(first, first + n)),
            tuple(range(n)),
            spec.ring.fwhm_nm(),
            spec.ring.fsr_nm(),
            spec.ring_thermal.heater_nm_per_mW,
        )


@dataclass
class _Step:
    dwell_s: float
    plan: SwitchPlan


def _pairs(ports: Sequence[int], n: int) -> Matching:
    if len(ports) % 2:
        raise ScpiError(-109, f"ports come in pairs; got {len(ports)} ports")
    try:
        return Matching(zip(ports[::2], ports[1::2], strict=True), n)
    except (MatchingError, PortError) as exc:
        raise ScpiError(-224, str(exc)) from None


def _flat(matching: Matching) -> list[int]:
    return [p for pair in matching.pairs for p in pair]


class Controller:
    """The firmware of one switch: ``driver`` (the heaters and detectors), ``fabric`` (how a
    matching becomes cell states), optionally ``store`` (non-volatile memory), ``rings``, the
    calibration to start with (else the stored one) and the identity strings for ``*IDN?``."""

    def __init__(
        self,
        driver: ChipDriver,
        fabric: Fabric,
        store: Store | None = None,
        rings: Rings = Rings(),
        calibration: Calibration | None = None,
        model: str = "EMULATED",
        serial: str = "0",
    ) -> None:
        self.driver, self.fabric, self.store, self.rings = driver, fabric, store, rings
        self.idn = f"PSWITCH,{model},{serial},{_VERSION}"
        hw_limit, hw_budget = driver.limits()
        self._hw_limit_mA, self._hw_budget_mW = hw_limit, hw_budget
        self.grammar = _grammar(
            fabric.n_ports, driver.n_channels, len(rings.channels), float(hw_limit.max())
        )
        self.errors = ErrorQueue()
        self.calibration = calibration
        self.calibration_stored = False
        self._curves: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._cells_cal: tuple | None = None
        if calibration is None and store is not None:
            self.calibration = store.read_calibration()
            self.calibration_stored = self.calibration is not None
        self._reset_state()
        self.schedule: list[_Step] = []
        self.last_time_s = 0.0
        #: Called as ``progress(done, total)`` after each MZI during CAL:RUN (a progress bar).
        self.progress: Callable[[int, int], None] | None = None
        if store is not None:
            self._restore(store)

    def _reset_state(self) -> None:
        self.plan: SwitchPlan | None = None
        self.manual = False  # heaters set by hand
        self.fault = False  # a failed write could not be rolled back
        self.interlock = False
        self.current_limit_mA = self._hw_limit_mA.copy()
        self.power_budget_mW = self._hw_budget_mW
        self.ring_step: dict[int, float] = {}  # locked ring -> its fit step, mW
        #: Each ring's last lock sweep: heater power (mW) and its detector's reading (mW).
        self.ring_sweeps: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.running = False
        self.step_index = -1
        self.step_times: list[tuple[float, float]] = []  # (dwell, reconfiguration) per step
        self.disturbed: list[int] = []  # by the last ROUT:REPL

    # ---- the line protocol -----------------------------------------------------------------
    def handle(self, line: str | bytes) -> str | None:
        """Run one line; return its query replies joined by ``;`` (None without queries)."""
        try:
            commands = parse_line(line, self.grammar)
        except ScpiError as exc:
            self.errors.push(exc)
            return None
        replies = []
        for cmd in commands:
            try:
                reply = self._run(cmd)
            except ScpiError as exc:
                self.errors.push(exc)
                break
            if cmd.query:
                replies.append(format_reply(reply))
        return ";".join(replies) if replies else None

    def _run(self, cmd: Command) -> object:
        name = cmd.spec.header.lstrip("*").replace(":", "_").lower()
        handler: Callable[..., object] = getattr(self, ("q_" if cmd.query else "c_") + name)
        before = self.driver.elapsed_s
        try:
            return handler(*cmd.args)
        except ScpiError:
            raise
        except DriverError as exc:
            raise ScpiError(-240, str(exc)) from None
        except LimitError as exc:
            raise ScpiError(-222, str(exc)) from None
        except (MatchingError, PortError) as exc:
            raise ScpiError(-221, str(exc)) from None
        except FitError as exc:
            raise ScpiError(-200, f"calibration failed: {exc}") from None
        except (StoreError, CalibrationFileError, OSError) as exc:
            raise ScpiError(-310, f"non-volatile store: {exc}") from None
        except PswitchError as exc:
            raise ScpiError(-200, str(exc)) from None
        finally:
            if not cmd.query:
                self.last_time_s = self.driver.elapsed_s - before

    # ---- applying heater currents, atomically --------------------------------------------------
    def _check(self, new: np.ndarray) -> None:
        """Every limit of a whole new state, before anything is written."""
        if self.fault:
            raise ScpiError(-240, "a hardware fault left the heaters unknown: send *RST")
        if not np.all(np.isfinite(new)):
            raise ScpiError(-222, "currents must be finite")
        if self.interlock and np.any(new > 0):
            raise ScpiError(-221, "interlock engaged: release it with SYST:INT OFF")
        over = np.flatnonzero((new < 0) | (new > self.current_limit_mA))
        if over.size:
            c = int(over[0])
            raise ScpiError(
                -222, f"channel {c}: {new[c]:.6g} mA outside 0..{self.current_limit_mA[c]:.6g} mA"
            )
        power = float(self.driver.power_mW(new))
        if power > self.power_budget_mW:
            raise ScpiError(
                -222,
                f"total heater power {power:.6g} mW exceeds the budget "
                f"{self.power_budget_mW:.6g} mW",
            )

    def _apply(self, new: np.ndarray, plan: SwitchPlan | None, manual: bool = False) -> None:
        """Write ``new`` currents (all channels) and make ``plan`` the applied configuration."""
        new = np.asarray(new, dtype=float)
        self._check(new)
        old = self.driver.currents()
        changed = np.flatnonzero(new != old)
        try:
            self.driver.write(changed.tolist(), new[changed].tolist())
        except DriverError as exc:
            self._roll_back(old)
            raise ScpiError(-240, f"{exc}; the previous state is restored") from None
        self.plan, self.manual = plan, manual
        self._save_configuration()

    def _roll_back(self, old: np.ndarray) -> None:
        now = self.driver.currents()
        undo = np.flatnonzero(now != old)
        try:
            self.driver.write(undo.tolist(), old[undo].tolist())
        except DriverError as exc:
            self.fault = True
            raise ScpiError(-240, f"roll-back failed ({exc}): heaters unknown") from None

    def _currents_for(self, plan: SwitchPlan) -> np.ndarray:
        """Currents that set the fabric's cells to ``plan`` (other channels kept)."""
        if self.calibration is None:
            raise ScpiError(-221, "not calibrated: run CAL:RUN or CAL:LOAD first")
        cells = self.fabric.n_cells
        if self._cells_cal is None or self._cells_cal[0] is not self.calibration:
            # the cells' heaters and their mutual crosstalk, once per calibration
            cal = self.calibration
            K = None if cal.crosstalk is None else sp.csr_matrix(cal.crosstalk[:cells, :cells])
            self._cells_cal = (cal, internal_heaters(cal, cells), K)
        _, heaters, K = self._cells_cal
        new = self.driver.currents()
        new[:cells] = currents_for_phase(heaters, 2 * plan.theta, K)
        return new

    def apply_matching(self, matching: Matching) -> SwitchPlan:
        """Plan and apply ``matching`` (raises :class:`ScpiError`); the plan applied."""
        return self.apply_plan(self.fabric.plan(matching))

    def apply_plan(self, plan: SwitchPlan) -> SwitchPlan:
        """Apply a plan of this fabric (e.g. from :func:`~firmware.fabric.all_to_all`)
        atomically, then re-centre locked rings; raises :class:`ScpiError`."""
        self._apply(self._currents_for(plan), plan)
        self._track_rings()
        return plan

    @property
    def matching(self) -> Matching:
        return self.plan.matching if self.plan else Matching([], self.fabric.n_ports)

    # ---- persistence -----------------------------------------------------------------------
    def _save_configuration(self) -> None:
        if self.store is not None:
            self.store.write(
                "configuration",
                {
                    "pairs": [list(p) for p in self.matching.pairs],
                    "currents_mA": self.driver.currents().tolist(),
                    "manual": self.manual,
                },
            )

    def _save_schedule(self) -> None:
        if self.store is not None:
            steps = [[s.dwell_s, _flat(s.plan.matching)] for s in self.schedule]
            self.store.write("schedule", {"steps": steps})

    def _restore(self, store: Store) -> None:
        """Re-apply the stored configuration and reload the stored schedule (at power-on)."""
        n = self.fabric.n_ports
        for dwell, ports in (store.read("schedule") or {}).get("steps", []):
            self.schedule.append(_Step(float(dwell), self.fabric.plan(_pairs(ports, n))))
        config = store.read("configuration")
        if config:
            matching = Matching([tuple(p) for p in config["pairs"]], n)
            plan = None if config["manual"] else self.fabric.plan(matching)
            self._apply(np.asarray(config["currents_mA"], float), plan, config["manual"])

    # ---- common commands -------------------------------------------------------------------
    def q_idn(self) -> str:
        return self.idn

    def c_rst(self) -> None:
        zero = np.zeros(self.driver.n_channels)
        fault, self.fault = self.fault, False
        try:
            self.interlock = False
            self._apply(zero, None)
        except ScpiError:
            self.fault = fault
            raise
        self._reset_state()

    def c_cls(self) -> None:
        self.errors.clear()

    def q_opc(self) -> int:
        return 1

    def q_tst(self) -> int:
        seen = self.driver.detect(np.zeros(self.driver.n_detectors))
        ok = np.all(np.isfinite(seen)) and seen.shape == (self.driver.n_detectors,)
        if self.calibration is not None:
            ok = ok and self.calibration.n_heaters == self.driver.n_channels
        if not ok:
            self.errors.push(ScpiError(-330, "detector or calibration check failed"))
        return 0 if ok else 1

    # ---- SYSTem ----------------------------------------------------------------------------
    def q_system_error(self) -> str:
        e = self.errors.pop()
        return f"{e.code},{e.text}"

    def q_system_error_count(self) -> int:
        return len(self.errors)

    def q_system_ports(self) -> int:
        return self.fabric.n_ports

    def c_system_interlock(self, engaged: bool) -> None:
        if engaged:
            self.interlock = False  # the zero state passes every check
            try:
                self._apply(np.zeros(self.driver.n_channels), None)
            finally:
                self.interlock = True
            self.ring_step.clear()
            self.running = False
        else:
            self.interlock = False

    def q_system_interlock(self) -> bool:
        return self.interlock

    def c_system_power_limit(self, budget: float) -> None:
        if budget > self._hw_budget_mW:
            raise ScpiError(-222, f"budget above the hardware's {self._hw_budget_mW:.6g} mW")
        if self.driver.power_mW(self.driver.currents()) > budget:
            raise ScpiError(-221, "the heaters now draw more than that: lower them first")
        self.power_budget_mW = budget

    def q_system_power_limit(self) -> float:
        return float(self.power_budget_mW)

    def q_system_power(self) -> float:
        return float(self.driver.power_mW(self.driver.currents()))

    def c_system_current_limit(self, limit: float) -> None:
        new = np.minimum(self._hw_limit_mA, limit)
        if np.any(self.driver.currents() > new):
            raise ScpiError(-221, "a heater now carries more than that: lower it first")
        self.current_limit_mA = new

    def q_system_current_limit(self) -> float:
        return float(self.current_limit_mA.max())

    def q_system_temperature(self) -> float:
        return self.driver.temperature_C()

    def q_system_time(self) -> float:
        return self.last_time_s

    def q_system_time_total(self) -> float:
        return self.driver.elapsed_s

    # ---- STATus ----------------------------------------------------------------------------
    def q_status_operation(self) -> int:
        locked = bool(self.ring_step) and all(
            self._ring_error_nm(r) <= RING_LOCK_TOLERANCE * self.rings.fwhm_nm
            for r in self.ring_step
        )
        return (self.plan is not None) | (self.running << 1) | (locked << 2)

    def q_status_questionable(self) -> int:
        drifted = any(
            self._ring_error_nm(r) > RING_LOCK_TOLERANCE * self.rings.fwhm_nm
            for r in self.ring_step
        )
        flags = (self.calibration is None, self.interlock, self.manual, drifted, self.fault)
        return sum(int(f) << i for i, f in enumerate(flags))

    # ---- ROUTe -----------------------------------------------------------------------------
    def c_route_connect(self, port: int, peer: int) -> None:
        pairs = [*self.matching.pairs, (port, peer)]
        self.apply_matching(Matching(pairs, self.fabric.n_ports))

    def c_route_disconnect(self, port: int) -> None:
        if self.matching.partner(port) is None:
            raise ScpiError(-221, f"port {port} is not connected")
        pairs = [p for p in self.matching.pairs if port not in p]
        self.apply_matching(Matching(pairs, self.fabric.n_ports))

    def c_route_clear(self) -> None:
        self.apply_matching(Matching([], self.fabric.n_ports))

    def c_route_matching(self, ports: tuple[int, ...]) -> None:
        self.apply_matching(_pairs(ports, self.fabric.n_ports))

    def q_route_matching(self) -> list[int]:
        return _flat(self.matching)

    def c_route_replace(self, port: int, spares: tuple[int, ...]) -> None:
        peer = self.matching.partner(port)
        if peer is None or self.plan is None:
            raise ScpiError(-221, f"port {port} is dark: nothing to replace")
        lit = [s for s in spares if self.matching.partner(s) is not None or s == port]
        if lit:
            raise ScpiError(-221, f"spare {lit[0]} is not dark")
        if len(set(spares)) < len(spares):
            raise ScpiError(-224, f"a spare is listed twice: {list(spares)}")
        job = Job("replace", "ring", (port, peer), spares)
        found = failover(self.fabric, job, self.plan, port)
        self.apply_plan(found.plan)
        self.disturbed = sorted({src for src, _ in found.disturbed})

    def q_route_replace_disturbed(self) -> list[int]:
        return self.disturbed

    def q_route_path(self, port: int) -> list[object]:
        circuit = self.plan.circuit_from(port) if self.plan else None
        if circuit is None:
            raise ScpiError(-221, f"port {port} is dark")
        return [circuit.target, round(circuit.loss_db, 6), *circuit.cells]

    # ---- HEATer ----------------------------------------------------------------------------
    def c_heater_current(self, channel: int, current: float) -> None:
        new = self.driver.currents()
        new[channel] = current
        self._apply(new, self.plan, manual=True)

    def q_heater_current(self, channel: int) -> float:
        return float(self.driver.currents()[channel])

    def c_heater_all(self, currents: tuple[float, ...]) -> None:
        if len(currents) != self.driver.n_channels:
            raise ScpiError(
                -109 if len(currents) < self.driver.n_channels else -108,
                f"{self.driver.n_channels} currents needed, got {len(currents)}",
            )
        self._apply(np.asarray(currents, float), self.plan, manual=True)

    def q_heater_all(self) -> list[float]:
        return self.driver.currents().tolist()

    def q_heater_count(self) -> int:
        return self.driver.n_channels

    # ---- CALibration -----------------------------------------------------------------------
    def c_calibration_run(self) -> None:
        mesh = self.fabric.mesh if isinstance(self.fabric, FeedForwardFabric) else None
        if not isinstance(mesh, FeedForwardMesh):
            raise ScpiError(
                -221, "self-calibration runs on feed-forward meshes; load a calibration instead"
            )
        if self.interlock:
            raise ScpiError(-221, "interlock engaged: release it with SYST:INT OFF")
        for r in range(len(self.rings.channels)):
            if r not in self.ring_step:
                self.c_ring_lock(r)
        held = self.driver.currents()
        keep = list(self.rings.channels)

        def measure(rows: np.ndarray, port: int) -> np.ndarray:
            rows = np.array(rows, dtype=float)
            rows[:, keep] = held[keep]  # the rings stay locked
            return self.driver.measure(rows, np.eye(self.driver.n_detectors)[port])

        limit = float(self.current_limit_mA.min())
        one = np.zeros(self.driver.n_channels)
        one[0] = limit
        group = int(0.9 * self.power_budget_mW // max(self.driver.power_mW(one), 1e-9))
        found = calibrate_mesh(
            mesh,
            measure,
            self.driver.voltage,
            self.driver.n_channels,
            limit,
            chip_id=self.idn.split(",")[1],
            progress=self.progress,
            iv_group=max(group, 1),
        )
        self.use_calibration(found.calibration, stored=False)

    def use_calibration(self, cal: Calibration, stored: bool) -> None:
        """Switch to ``cal``, re-applying the matching with it; unchanged if that fails."""
        previous, self.calibration = self.calibration, cal
        try:
            if self.plan is not None:
                self._apply(self._currents_for(self.plan), self.plan)
        except ScpiError:
            self.calibration = previous
            raise
        self.calibration_stored = stored

    def c_calibration_save(self) -> None:
        if self.calibration is None:
            raise ScpiError(-221, "no calibration to save: run CAL:RUN first")
        if self.store is None:
            raise ScpiError(-310, "this switch has no non-volatile store")
        self.store.write_calibration(self.calibration)
        self.calibration_stored = True

    def c_calibration_load(self) -> None:
        if self.store is None:
            raise ScpiError(-310, "this switch has no non-volatile store")
        stored = self.store.read_calibration()
        if stored is None:
            raise ScpiError(-221, "no calibration is stored")
        if stored.n_heaters != self.driver.n_channels:
            raise ScpiError(
                -221,
                f"stored calibration has {stored.n_heaters} heaters, the chip "
                f"{self.driver.n_channels}",
            )
        self.use_calibration(stored, stored=True)

    def q_calibration_status(self) -> str:
        cal = self.calibration
        if cal is None:
            return '0,"","",0'
        return f'1,"{cal.chip_id}","{cal.created}",{int(self.calibration_stored)}'

    # ---- RING ------------------------------------------------------------------------------
    def _ring(self, ring: int) -> tuple[int, int]:
        if ring >= len(self.rings.channels):
            raise ScpiError(-222, f"ring {ring}: this switch has {len(self.rings.channels)} rings")
        return self.rings.channels[ring], self.rings.detectors[ring]

    def _ring_light(self, detector: int) -> np.ndarray:
        """Input light for a ring's detector: the source routed to it, else every input."""
        n = self.driver.n_detectors
        source = self.matching.partner(detector) if self.plan else None
        return np.eye(n)[source] if source is not None else np.ones(n) / np.sqrt(n)

    def _heater_power(self, channel: int, value: np.ndarray, inverse: bool = False) -> np.ndarray:
        """One heater's power (mW) at currents ``value`` (mA), or with ``inverse`` the current
        for powers ``value``: resonances move linearly in power, not in current."""
        if channel not in self._curves:
            current = np.linspace(0.0, float(self._hw_limit_mA[channel]), 4001)
            rows = np.zeros((current.size, self.driver.n_channels))
            rows[:, channel] = current
            power = self.driver.power_mW(rows) - self.driver.power_mW(rows[0])
            self._curves[channel] = (current, power)
        current, power = self._curves[channel]
        return np.interp(value, power, current) if inverse else np.interp(value, current, power)

    def _ring_fit(self, ring: int, center: float, step: float) -> tuple[float, float] | None:
        """Where the ring's resonance is, in heater power (mW), and its half width (mW), from
        three drop readings around ``center`` (mW): ``1 / P`` of a Lorentzian is a parabola.
        None when the readings do not bracket a resonance. Independent of the light's power."""
        channel, detector = self._ring(ring)
        top = float(self._heater_power(channel, self.current_limit_mA[channel]))
        step = min(step, top / 2)
        ps = np.clip(center, step, top - step) + np.array([-step, 0.0, step])
        rows = np.repeat(self.driver.currents()[None], 3, axis=0)
        rows[:, channel] = self._heater_power(channel, ps, inverse=True)
        seen = self.driver.measure(rows, self._ring_light(detector), [detector])[:, 0]
        a, b, c = np.polyfit(ps, 1 / np.maximum(seen, 1e-12), 2)
        if a <= 0 or c - b * b / (4 * a) <= 0:
            return None
        return float(-b / (2 * a)), float(np.sqrt((c - b * b / (4 * a)) / a))

    def _ring_power(self, ring: int) -> float:
        channel, _ = self._ring(ring)
        return float(self._heater_power(channel, self.driver.currents()[channel]))

    def _ring_set(self, ring: int, power_mW: float) -> None:
        channel, _ = self._ring(ring)
        new = self.driver.currents()
        new[channel] = self._heater_power(channel, power_mW, inverse=True)
        self._apply(new, self.plan, self.manual)

    def c_ring_lock(self, ring: int) -> None:
        self._lock(ring)
        self._track(list(self.ring_step))

    def _lock(self, ring: int) -> None:
        channel, detector = self._ring(ring)
        rings = self.rings
        held = self.driver.currents()
        top = float(self._heater_power(channel, self.current_limit_mA[channel]))
        step = rings.fwhm_nm / rings.nm_per_mW / 4
        powers = np.arange(0.0, min(top, 1.25 * rings.fsr_nm / rings.nm_per_mW), step)
        rows = np.repeat(held[None], powers.size, axis=0)
        rows[:, channel] = self._heater_power(channel, powers, inverse=True)
        ok = self.driver.power_mW(rows) <= self.power_budget_mW
        seen = self.driver.measure(rows[ok], self._ring_light(detector), [detector])[:, 0]
        self.ring_sweeps[ring] = (powers[ok], seen)
        if seen.size == 0 or np.ptp(seen) <= 0:
            raise ScpiError(-240, f"ring {ring}: no resonance seen on detector {detector}")
        x = float(powers[ok][int(np.argmax(seen))])
        for _ in range(RING_FIT_ITERATIONS):  # Newton-like: each fit centres the next
            fit = self._ring_fit(ring, x, step)
            if fit is None or abs(fit[0] - x) > 3 * step:
                break
            x, step = min(max(fit[0], 0.0), top), max(fit[1] / 2, 1e-9)
        self._ring_set(ring, x)
        self.ring_step[ring] = step

    def _track_rings(self) -> None:
        """After a reconfiguration, pull every locked ring back onto its resonance (heater
        crosstalk moves them): one three-point fit and one write each; a full re-lock when the
        resonance has moved out of reach. A ring that cannot be found again stays flagged by
        STAT:QUES? (the reconfiguration itself has succeeded)."""
        with contextlib.suppress(ScpiError):
            self._track(list(self.ring_step))

    def _track(self, rings: list[int]) -> None:
        # ring heaters warm each other: sweep over the rings until none has to move
        for _ in range(RING_TRACK_ROUNDS):
            moved = False
            for ring in rings:
                x = self._ring_power(ring)
                fit = self._ring_fit(ring, x, self.ring_step[ring])
                if fit is None or abs(fit[0] - x) >= 3 * fit[1]:
                    self._lock(ring)
                    moved = True
                elif abs(fit[0] - x) > 0.05 * fit[1]:
                    self._ring_set(ring, fit[0])
                    moved = True
            if not moved:
                return

    def c_ring_unlock(self, ring: int) -> None:
        self._ring_set(ring, 0.0)
        self.ring_step.pop(ring, None)

    def _ring_error_nm(self, ring: int) -> float:
        """Detuning of a locked ring from the laser, nm: the fitted resonance's distance from
        the heater setting, in half widths, times half the design FWHM."""
        x = self._ring_power(ring)
        fit = self._ring_fit(ring, x, self.ring_step[ring])
        if fit is None:
            return float("inf")
        return abs(fit[0] - x) / fit[1] * self.rings.fwhm_nm / 2

    def q_ring_status(self, ring: int) -> list[object]:
        self._ring(ring)
        if ring not in self.ring_step:
            return [0, 0.0]
        error = self._ring_error_nm(ring)
        return [int(error <= RING_LOCK_TOLERANCE * self.rings.fwhm_nm), error]

    def q_ring_count(self) -> int:
        return len(self.rings.channels)

    # ---- SCHedule --------------------------------------------------------------------------
    def c_schedule_add(self, dwell: float, ports: tuple[int, ...]) -> None:
        plan = self.fabric.plan(_pairs(ports, self.fabric.n_ports))
        self.schedule.append(_Step(dwell, plan))
        try:
            self._save_schedule()
        except BaseException:
            self.schedule.pop()
            raise

    def c_schedule_clear(self) -> None:
        old = self.schedule
        self.schedule = []
        try:
            self._save_schedule()
        except BaseException:
            self.schedule = old
            raise
        self.running, self.step_index, self.step_times = False, -1, []

    def q_schedule_count(self) -> int:
        return len(self.schedule)

    def _go_to(self, index: int) -> None:
        step = self.schedule[index]
        before = self.driver.elapsed_s
        self.apply_plan(step.plan)
        self.step_index = index
        self.step_times.append((step.dwell_s, self.driver.elapsed_s - before))

    def c_schedule_start(self) -> None:
        if not self.schedule:
            raise ScpiError(-221, "the schedule is empty: add steps with SCH:ADD")
        times = self.step_times
        self.step_times = []
        try:
            self._go_to(0)
        except ScpiError:
            self.step_times = times
            raise
        self.running = True

    def c_schedule_step(self) -> None:
        if not self.running:
            raise ScpiError(-221, "the schedule is not running: SCH:STAR first")
        self._go_to((self.step_index + 1) % len(self.schedule))

    def c_schedule_stop(self) -> None:
        self.running = False

    def q_schedule_status(self) -> list[object]:
        dwell = sum(d for d, _ in self.step_times)
        busy = sum(t for _, t in self.step_times)
        duty = dwell / (dwell + busy) if self.step_times else 0.0
        return [int(self.running), self.step_index, len(self.schedule), duty]
