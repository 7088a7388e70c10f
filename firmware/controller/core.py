"""The controller's core: the line protocol, the state, the atomic application of heater
currents and persistence. The commands are declared and handled in the subsystem modules of
this package (:mod:`firmware.controller.system`, ``routes``, ``calibration``, ``rings``,
``schedule``) and joined into :class:`~firmware.controller.Controller`.

:meth:`Core.handle` takes one line and returns the replies of its queries joined by ``;``
(None when it has none). The whole line is parsed first; a syntax error runs nothing. Commands
then run in order; a command that fails puts its error in the queue and stops the rest of the
line (later commands may rely on it). A line runs in a client's session
(:mod:`firmware.controller.session`: its error queue, ``*OPC``, the time of its last command),
:meth:`Core.handle` in the default one; every command runs under the device lock, one at a time,
but an overlapped operation (``CAL:RUN``, ``RING:LOCK``) lets the others run between its
measurement batches.

Every command that can change something runs in a :meth:`Core.transaction`: a command that
fails, whatever failed (an argument, a limit, the hardware part-way, a measurement, a fit, the
store), leaves everything exactly as it was. The transaction keeps a copy of the state (every
attribute but the :data:`MACHINERY`) and of the heater currents; on failure it puts the
attributes back and writes the heaters back through the driver. Documents for the store are
only marked by the command (:meth:`Core._persist`) and written once, when it has succeeded;
if one of those writes fails, the documents it already wrote get their previous bytes back, the
state is rolled back and the command reports -310, so the store and the applied state agree.

Every change of heater currents goes through :meth:`Core._apply`: the whole new state is
checked (channels, per-channel limit, power budget, interlock) before the first heater is
written. With a :class:`~firmware.store.Store`, the calibration (``CAL:SAVE``), the applied
configuration and the schedule survive a restart: a new controller on the same store uses the
stored calibration (over any factory one) and re-applies them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

import numpy as np

from firmware.calibration_file import CalibrationFileError
from firmware.commands import Bound, Param, Spec
from firmware.controller.session import DeviceLock, Session, current
from firmware.declarations import bind, declarations
from firmware.driver import ChipDriver, DriverError
from firmware.scpi_errors import ErrorQueue, ScpiError
from firmware.store import Store, StoreError
from photonics.calibration.selfcal import CellDrive
from photonics.chips.calibration import Calibration
from photonics.chips.switch import Fabric, MeshFabric, SwitchPlan
from photonics.errors import MatchingError, PortError
from photonics.matching import Matching
from photonics.recirculating.routing import DEFAULT_EXTINCTION_DB

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
#: A controller's attributes that are machinery, not state: a transaction neither copies nor
#: restores them. Every other attribute is state.
#: Rows an overlapped operation measures between two chances for other clients' commands.
STEP_ROWS = 32

MACHINERY = frozenset(
    {
        "driver",
        "fabric",
        "store",
        "rings",
        "idn",
        "heater_layout",
        "grammar",
        "lock",
        "default_session",
        "busy",
        "stepping",
        "progress",
        "_hw_limit_mA",
        "_hw_budget_mW",
        "_cells_cal",
        "_curves",
        "_unsaved",
        "_in_transaction",
    }
)
#: The store's documents, in the order a transaction writes them.
DOCUMENTS = ("calibration", "configuration", "schedule")
#: What a command that writes heaters can queue besides its own errors.
APPLY_ERRORS = (
    "-221 not calibrated, or interlock engaged; -222 a current or the power budget would be "
    "exceeded (nothing written); -240 the hardware failed part-way (rolled back)"
)
#: What a command that reconfigures the heaters can queue: the locked rings are re-centred.
RECONFIGURE_ERRORS = APPLY_ERRORS + (
    "; -200 (-240 when it shows no resonance) a locked ring could not be kept on resonance (named)"
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


def fabric_for(fabric: Fabric, cal: Calibration | None) -> Fabric:
    """``fabric`` as ``cal`` describes the chip: a recirculating mesh's router leaves out the
    cells ``cal`` did not fit (``phase_fitted`` False) and predicts isolation from its measured
    extinction (``extinction_db``; without it, the typical figure); others unchanged."""
    if cal is None or not isinstance(fabric, MeshFabric):
        return fabric
    n = fabric.n_cells
    ext = cal.extinction_db
    if ext is None or ext.shape[1] != n:
        ext = np.full((2, n), DEFAULT_EXTINCTION_DB)
    return fabric.with_dead_cells(np.flatnonzero(~cal.phase_fitted[:n]), ext)


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
        #: The currents the switch last wrote, mA: a read-back that differs was written by
        #: someone else (:meth:`heaters_moved`).
        self.written_mA = np.asarray(driver.currents(), dtype=float).copy()
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
        self.lock = DeviceLock()
        #: The session of :meth:`handle` (in process): an overlapped operation runs to the end.
        self.default_session = Session(self, overlapped=False)
        #: The overlapped command running now (``"CAL:RUN"``), "" when none; and its thread.
        self.busy = ""
        self.stepping: int | None = None
        self._unsaved: set[str] = set()  # documents the running command changed
        self._in_transaction = False
        # a stored calibration wins over the one given (the factory's)
        stored = None if store is None else store.read_calibration()
        self.calibration = calibration if stored is None else stored
        self.calibration_stored = stored is not None
        self.fabric = fabric_for(self.fabric, self.calibration)
        self._cells_cal: tuple[Calibration, CellDrive] | None = None  # once per calibration
        self._reset_state()
        self.schedule: list[Step] = []
        #: Called as ``progress(stage, done, total)`` as CAL:RUN advances (a progress bar): its
        #: ring locks, heater I-V sweeps and MZI fringes, each from ``done = 0``.
        self.progress: Callable[[str, int, int], None] | None = None
        if store is not None:
            with self.transaction():
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
        """Run one line in the default session (:meth:`Session.handle
        <firmware.controller.session.Session.handle>`); its query replies joined by ``;``, None
        without queries."""
        return self.default_session.handle(line)

    @property
    def session(self) -> Session:
        """The session whose command runs now (in this thread), else the default one."""
        return current(self)

    @property
    def errors(self) -> ErrorQueue:
        """The error queue of :attr:`session`."""
        return self.session.errors

    # ---- transactions ----------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the body all or nothing (see the module docstring): on any exception the state
        and the heaters are put back and the exception propagates; on success the documents the
        body marked (:meth:`_persist`) are written. Inside a transaction, a nested one is part
        of it. Costs a copy of the state's containers and of the currents."""
        if self._in_transaction:
            yield
            return
        self._in_transaction = True
        state = {k: _copied(v) for k, v in vars(self).items() if k not in MACHINERY}
        currents = self.driver.currents()
        try:
            yield
            self.driver.release()  # the currents a measurement left, back before the command ends
            self._write_unsaved()
        except BaseException:
            self._unsaved.clear()
            vars(self).update(state)
            self._roll_back(currents)
            raise
        finally:
            self._in_transaction = False

    def _persist(self, name: str) -> None:
        """Mark document ``name`` (one of :data:`DOCUMENTS`) to be stored when the running
        transaction succeeds."""
        self._unsaved.add(name)

    def _write_unsaved(self) -> None:
        """Store the marked documents; if one fails, give those written their previous bytes
        back and raise -310."""
        names = [name for name in DOCUMENTS if name in self._unsaved]
        self._unsaved.clear()
        if self.store is None:
            return
        written: list[tuple[str, bytes | None]] = []
        try:
            for name in names:
                written.append((name, self.store.read_bytes(name)))
                self._write_document(name)
        except (StoreError, CalibrationFileError, OSError) as exc:
            try:
                for name, previous in reversed(written):  # the failed one may be in place
                    self.store.restore_bytes(name, previous)
            except (StoreError, OSError) as again:
                raise ScpiError(
                    -310, f"non-volatile store: {exc}; restoring it failed too: {again}"
                ) from None
            raise ScpiError(-310, f"non-volatile store: {exc}; nothing stored") from None

    def _write_document(self, name: str) -> None:
        store = self.store
        assert store is not None
        if name == "calibration":
            assert self.calibration is not None  # CAL:SAVE checks
            store.write_calibration(self.calibration)
        elif name == "configuration":
            pairs = [list(p) for p in self.matching.pairs]
            currents = self.driver.currents().tolist()
            store.write(name, {"pairs": pairs, "currents_mA": currents, "manual": self.manual})
        else:
            steps = [[s.dwell_s, flat(s.plan.matching)] for s in self.schedule]
            store.write(name, {"steps": steps})

    # ---- applying heater currents, atomically --------------------------------------------------
    def _check(self, rows: np.ndarray) -> None:
        """Every limit (fault, interlock, per-channel limit, power budget) of a whole new state
        of currents (mA, one per channel), or of every row of a batch ``(B, channels)``, before
        anything is written or measured: the one check of every current the firmware sends."""
        if self.fault:
            raise ScpiError(-240, "a hardware fault left the heaters unknown: send *RST")
        rows = np.atleast_2d(rows)
        if not np.all(np.isfinite(rows)):
            raise ScpiError(-222, "currents must be finite")
        if self.interlock and np.any(rows > 0):
            raise ScpiError(-221, "interlock engaged: release it with SYST:INT OFF")
        over = np.argwhere((rows < 0) | (rows > self.current_limit_mA))
        if over.size:
            r, c = over[0]
            raise ScpiError(
                -222,
                f"channel {c}: {rows[r, c]:.6g} mA outside 0..{self.current_limit_mA[c]:.6g} mA",
            )
        power = float(np.max(self.driver.power_mW(rows)))
        if power > self.power_budget_mW:
            raise ScpiError(
                -222,
                f"total heater power {power:.6g} mW exceeds the budget "
                f"{self.power_budget_mW:.6g} mW",
            )

    def _measure(
        self, rows_mA: np.ndarray, input_field: np.ndarray, outputs: Sequence[int] | None = None
    ) -> np.ndarray:
        """:meth:`ChipDriver.measure <firmware.driver.ChipDriver.measure>` with every row
        checked first (:meth:`_check`: -221/-222 before a row is sent): how self-calibration,
        ring locks and tracking measure. Readings in mW."""
        return self._batched(rows_mA, lambda rows: self.driver.measure(rows, input_field, outputs))

    def _voltage(self, rows_mA: np.ndarray) -> np.ndarray:
        """The heaters' voltage read-back (V) at each row of currents, every row checked first
        as in :meth:`_measure`."""
        return self._batched(rows_mA, self.driver.voltage)

    def _batched(self, rows_mA: np.ndarray, read: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``read(rows)`` with every row checked first; in an overlapped operation (in its
        thread), in chunks of :data:`STEP_ROWS` rows with the other sessions' commands let
        through before each (:meth:`DeviceLock.step
        <firmware.controller.session.DeviceLock.step>`), so none waits longer than a chunk."""
        rows = np.asarray(rows_mA, dtype=float)
        self._check(rows)
        if self.stepping != threading.get_ident():
            return read(rows)
        parts = []
        for start in range(0, max(len(rows), 1), STEP_ROWS):
            self.lock.step()
            parts.append(read(rows[start : start + STEP_ROWS]))
        return np.concatenate(parts)

    def _apply(self, new: np.ndarray, plan: SwitchPlan | None, manual: bool = False) -> None:
        """Write ``new`` currents (all channels) and make ``plan`` the applied configuration."""
        new = np.asarray(new, dtype=float)
        self._check(new)
        old = self.driver.currents()
        changed = np.flatnonzero(new != old)
        try:
            self.driver.write(changed.tolist(), new[changed].tolist())
        except DriverError as exc:  # the transaction writes the previous currents back
            raise ScpiError(-240, f"{exc}; the previous state is restored") from None
        self.written_mA = new.copy()
        self.plan, self.manual = plan, manual
        self._persist("configuration")

    def _roll_back(self, old: np.ndarray) -> None:
        """Write the currents ``old`` back (only the channels that differ); a failure leaves
        the heaters unknown: :attr:`fault` is set and -240 raised."""
        undo = np.flatnonzero(self.driver.currents() != old)
        if not undo.size:
            return
        try:
            self.driver.write(undo.tolist(), old[undo].tolist())
        except DriverError as exc:
            self.fault = True
            raise ScpiError(-240, f"roll-back failed ({exc}): heaters unknown") from None
        self.written_mA = old.copy()

    def heaters_moved(self) -> np.ndarray:
        """The channels whose read-back differs from what the switch wrote (a write behind
        its back, e.g. by another client of the heater driver)."""
        return np.flatnonzero(self.driver.currents() != self.written_mA)

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
        and re-centre the locked rings, all or nothing; raises :class:`ScpiError`."""
        with self.transaction():
            self._apply(self._currents_for(plan), plan)
            self._track_rings()
        return plan

    @property
    def matching(self) -> Matching:
        return self.plan.matching if self.plan else Matching([], self.fabric.n_ports)

    # ---- persistence -----------------------------------------------------------------------
    def _restore(self, store: Store) -> None:
        """Re-apply the stored configuration and reload the stored schedule (at power-on)."""
        n = self.fabric.n_ports
        for dwell, ports in (store.read("schedule") or {}).get("steps", []):
            self.schedule.append(Step(float(dwell), self.fabric.plan(pairs_of(ports, n))))
        config = store.read("configuration")
        if config:
            matching = Matching([tuple(p) for p in config["pairs"]], n)
            # heaters set by hand keep the matching they were set on, as before the restart
            plan = self.fabric.plan(matching)
            self._apply(np.asarray(config["currents_mA"], float), plan, config["manual"])
        self._unsaved.clear()  # what was read is stored already


def _copied(value: object) -> object:
    """A copy of a container of the state (the transaction's snapshot); other values as they
    are: the controller replaces them rather than changing them in place."""
    return value.copy() if isinstance(value, list | dict | set | np.ndarray) else value
