"""The controller's core: the line protocol, the state, the atomic application of heater
currents and persistence. The commands are declared and handled in the subsystem modules of
this package (:mod:`firmware.controller.system`, ``routes``, ``calibration``, ``rings``,
``schedule``) and joined into :class:`~firmware.controller.Controller`.

:meth:`Core.handle` takes one line and returns the replies of its queries joined by ``;``
(None when it has none). The whole line is parsed first; a syntax error runs nothing. Commands
then run in order; a command that fails leaves the state exactly as it was, puts its error in
the queue and stops the rest of the line (later commands may rely on it).

Every change of heater currents goes through :meth:`Core._apply`: the whole new state is
checked (channels, per-channel limit, power budget, interlock) before the first heater is
written, and a driver failure part-way is rolled back to the exact previous currents. With a
:class:`~firmware.store.Store`, the calibration (``CAL:SAVE``), the applied configuration and
the schedule survive a restart: a new controller on the same store re-applies them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

import numpy as np

from firmware.calibration_file import CalibrationFileError
from firmware.commands import (
    Bound,
    Command,
    ErrorQueue,
    Param,
    ScpiError,
    Spec,
    format_reply,
    parse_line,
)
from firmware.declarations import bind, declarations
from firmware.driver import ChipDriver, DriverError
from firmware.store import Store, StoreError
from photonics.calibration import Calibration
from photonics.errors import (
    FitError,
    LimitError,
    MatchingError,
    PortError,
    PswitchError,
)
from photonics.matching import Matching
from photonics.selfcal import CellDrive
from photonics.switch import Fabric, SwitchPlan

log = logging.getLogger(__name__)

try:
    _VERSION = version("pswitch-photonics")
except PackageNotFoundError:  # running from a source tree
    _VERSION = "0"

# Parameters shared by the subsystems' declarations; their ranges are the switch's own.
PORT = Param("port", "int", 0, Bound("ports", -1))
PORTS = Param("ports", "list", 0, Bound("ports", -1))
CHANNEL = Param("channel", "int", 0, Bound("channels", -1))
CURRENT = Param("current", "number", 0, Bound("max_current_mA"), "mA", default=0.0)
RING = Param("ring", "int", 0, Bound("rings", -1, floor=0))
#: What a command that writes heaters can queue besides its own errors.
APPLY_ERRORS = (
    "-221 not calibrated, or interlock engaged; -222 a current or the power budget would be "
    "exceeded (nothing written); -240 the hardware failed part-way (rolled back)"
)


@dataclass
class Step:
    """A schedule step on the switch: dwell time (s) and the plan of its matching."""

    dwell_s: float
    plan: SwitchPlan


def pairs_of(ports: Sequence[int], n: int) -> Matching:
    """Ports ``a,b,c,d,...`` as the matching of pairs (a, b), (c, d); -109 for an odd count,
    -224 for a port twice or out of range."""
    if len(ports) % 2:
        raise ScpiError(-109, f"ports come in pairs; got {len(ports)} ports")
    try:
        return Matching(zip(ports[::2], ports[1::2], strict=True), n)
    except (MatchingError, PortError) as exc:
        raise ScpiError(-224, str(exc)) from None


def flat(matching: Matching) -> list[int]:
    return [p for pair in matching.pairs for p in pair]


class Core:
    """The state and the machinery every subsystem uses (see the module docstring).

    ``grammar`` is bound to this switch's sizes from the commands declared on the class
    (``DECLARED``, gathered for every subclass); the subsystems supply the
    ring hooks (``_reset_rings``, ``_track_rings``, ``lock_all_rings``, ``rings_locked``,
    ``ring_drifted``), which are defined here, lowest in the MRO, so that the ring subsystem's
    override them whatever the order of the subsystems."""

    #: The commands declared on this class's handlers (every subclass gathers its own).
    DECLARED: tuple[Spec, ...] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.DECLARED = declarations(cls)

    def __init__(
        self,
        driver: ChipDriver,
        fabric: Fabric,
        store: Store | None,
        calibration: Calibration | None,
        rings: int,
        model: str,
        serial: str,
    ) -> None:
        self.driver, self.fabric, self.store = driver, fabric, store
        self.idn = f"PSWITCH,{model},{serial},{_VERSION}"
        hw_limit, hw_budget = driver.limits()
        self._hw_limit_mA, self._hw_budget_mW = hw_limit, hw_budget
        self.grammar = bind(
            self.DECLARED,
            ports=fabric.n_ports,
            channels=driver.n_channels,
            rings=rings,
            max_current_mA=float(hw_limit.max()),
        )
        self.errors = ErrorQueue()
        self.calibration = calibration
        self.calibration_stored = False
        self._cells_cal: tuple[Calibration, CellDrive] | None = None  # once per calibration
        if calibration is None and store is not None:
            self.calibration = store.read_calibration()
            self.calibration_stored = self.calibration is not None
        self._reset_state()
        self.schedule: list[Step] = []
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
        self._reset_rings()
        self.running = False
        self.step_index = -1
        self.step_times: list[tuple[float, float]] = []  # (dwell, reconfiguration) per step
        self.disturbed: list[int] = []  # by the last ROUT:REPL

    def _reset_rings(self) -> None:
        """Forget every ring lock (the ring subsystem's state)."""

    def _track_rings(self) -> None:
        """Re-centre the locked rings after a reconfiguration (the ring subsystem)."""

    def lock_all_rings(self) -> list[int]:
        """Lock every ring not locked yet; the rings' heater channels (the ring subsystem)."""
        return []

    def rings_locked(self) -> bool:
        """Every requested ring is locked, and at least one is (the ring subsystem)."""
        return False

    def ring_drifted(self) -> bool:
        """A locked ring has drifted off lock (the ring subsystem)."""
        return False

    # ---- the line protocol -----------------------------------------------------------------
    def handle(self, line: str | bytes) -> str | None:
        """Run one line; return its query replies joined by ``;`` (None without queries).
        Every error goes to the queue, a firmware bug too (-300 naming the exception, and
        logged); only an interrupt (``KeyboardInterrupt``, ``SystemExit``) goes through."""
        replies = []
        try:
            for cmd in parse_line(line, self.grammar):  # the whole line, before anything runs
                reply = self._run(cmd)
                if cmd.query:
                    replies.append(format_reply(reply))
        except ScpiError as exc:
            self.errors.push(exc)
        except Exception as exc:  # a bug: the caller still gets its replies and the queue
            log.exception("internal error on %r", line)
            self.errors.push(ScpiError(-300, f"internal error: {type(exc).__name__}: {exc}"))
        return ";".join(replies) if replies else None

    def _run(self, cmd: Command) -> object:
        handler = getattr(self, cmd.spec.query_handler if cmd.query else cmd.spec.set_handler)
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
        if self._cells_cal is None or self._cells_cal[0] is not self.calibration:
            self._cells_cal = (
                self.calibration,
                CellDrive.of(self.calibration, self.fabric.n_cells),
            )
        new = self.driver.currents()
        new[: self.fabric.n_cells] = self._cells_cal[1].currents(plan.theta)
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
            steps = [[s.dwell_s, flat(s.plan.matching)] for s in self.schedule]
            self.store.write("schedule", {"steps": steps})

    def _restore(self, store: Store) -> None:
        """Re-apply the stored configuration and reload the stored schedule (at power-on)."""
        n = self.fabric.n_ports
        for dwell, ports in (store.read("schedule") or {}).get("steps", []):
            self.schedule.append(Step(float(dwell), self.fabric.plan(pairs_of(ports, n))))
        config = store.read("configuration")
        if config:
            matching = Matching([tuple(p) for p in config["pairs"]], n)
            plan = None if config["manual"] else self.fabric.plan(matching)
            self._apply(np.asarray(config["currents_mA"], float), plan, config["manual"])
