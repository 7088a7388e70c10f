"""Sessions: the clients of one switch, each with its own error queue, ``*OPC`` and time of
its last command, and the lock that lets them share the device.

A :class:`Session` runs the lines of one client: a network connection (one session each,
``hil.emulator.bench.SwitchFirmware``) or the controller's default session, which
:meth:`Core.handle <firmware.controller.core.Core.handle>` uses in process. The commands
declared ``execution="session"`` (``*CLS``, ``*OPC?``, ``*WAI``, ``SYST:ERR?``,
``SYST:ERR:COUN?``, ``SYST:TIME?``) act on the calling session alone, which their handlers
reach as ``controller.session``. Every other command runs under the controller's
:class:`DeviceLock`: one at a time, whoever sent it, in the order they came; a line holds it
from its first command to its last, so no other client's command runs in between (but where
the line waits for an overlapped operation).

Overlapped operations (declared ``execution="overlapped"``: ``CAL:RUN``, ``RING:LOCK``) take
from tens of milliseconds to seconds, and do not hold the lock all that time: before each of
their measurement batches (``Core._measure``, ``Core._voltage``) they let the commands that
came meanwhile run (:meth:`DeviceLock.step`), so another client waits about one batch (a
millisecond on the emulator). While one runs (``controller.busy`` names it):

- every session's queries answer, reading the state as the operation left it at its last
  step: the rings it has locked so far, the heaters it has written; the new calibration once it
  has completed. If it fails, everything goes back at once, under the lock (its transaction);
- the other sessions' set commands fail with -221 naming it (``CAL:RUN in progress``); the
  session's own wait for it, as if ``*WAI`` came first, so a client's ``RING:LOCK 0`` then
  ``RING:LOCK 1`` run in order;
- on a network session it runs in a thread of its own and the line goes on at once (an
  overlapped command of IEEE 488.2): ``*WAI`` and ``*OPC?`` wait for it, and its errors and
  its hardware time are its session's when it completes. The in-process default session runs
  it to completion before the next command, as if ``*WAI`` followed it (an interrupt then
  rolls it back like any failure);
- a line holds at most one overlapped command (-223 before anything on it runs), so no line
  queues a series of them.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from firmware.calibration_file import CalibrationFileError
from firmware.commands import Command, Spec, format_reply, parse_line
from firmware.driver import ChipDriver, DriverError
from firmware.scpi_errors import ESR_OPC, ESR_PON, ErrorQueue, ScpiError
from firmware.store import StoreError
from photonics.errors import FitError, LimitError, MatchingError, PortError, PswitchError

log = logging.getLogger(__name__)
_running = threading.local()  # .session: the session whose line this thread runs


class Device(Protocol):
    """What a session needs of the switch it serves (the controller,
    :class:`firmware.controller.core.Core`): its grammar, its lock, the overlapped command
    running now (``busy``, "" when none; ``stepping``, the thread that runs it), its default
    session, its driver (for the hardware time), transactions and the handlers the grammar
    names (looked up by name)."""

    grammar: tuple[Spec, ...]
    lock: DeviceLock
    busy: str
    stepping: int | None
    default_session: Session
    driver: ChipDriver

    def transaction(self) -> AbstractContextManager[None]: ...


def current(controller: Device) -> Session:
    """The session whose command this thread runs on ``controller``; else its default one."""
    session = getattr(_running, "session", None)
    return (
        session
        if session is not None and session.controller is controller
        else (controller.default_session)
    )


class DeviceLock:
    """One holder at a time, first come first served. The holder may :meth:`step` aside:
    those who came meanwhile run, then it has the lock back. Re-entrant: a line holds it, and
    each of its commands takes it again; :meth:`released` lets go of it while its holder waits
    on another thread."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[int] = deque()  # threads: the holder, then those waiting in order
        self._depth = 0  # how many times the holder holds it

    def __enter__(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._queue and self._queue[0] == me:
                self._depth += 1
                return
            self._queue.append(me)
            try:
                self._cond.wait_for(lambda: self._queue[0] == me)
            except BaseException:  # interrupted while waiting: out of the queue
                self._queue.remove(me)
                self._cond.notify_all()
                raise
            self._depth = 1

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._depth -= 1
            if not self._depth:
                self._queue.popleft()
                self._cond.notify_all()

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """Let go of the lock (wholly) while the body runs, if this thread holds it, and take
        it back after, behind those who came meanwhile."""
        me = threading.get_ident()
        with self._cond:
            held = bool(self._queue) and self._queue[0] == me
            depth = self._depth
            if held:
                self._queue.popleft()
                self._depth = 0
                self._cond.notify_all()
        try:
            yield
        finally:
            if held:
                self.__enter__()
                with self._cond:
                    self._depth = depth

    def step(self) -> None:
        """Let those waiting run, then take the lock back (the holder; a no-op for others)."""
        me = threading.get_ident()
        with self._cond:
            if len(self._queue) < 2 or self._queue[0] != me:
                return
            depth = self._depth
            self._queue.rotate(-1)  # the holder to the back of the queue
            self._cond.notify_all()
            interrupted: BaseException | None = None
            while self._queue[0] != me:  # interrupted or not, the holder goes on with the lock
                try:
                    self._cond.wait()
                except BaseException as exc:
                    interrupted = exc
            self._depth = depth
            if interrupted is not None:
                raise interrupted


class Session:
    """One client of ``controller`` (see the module docstring): its own :attr:`errors`, the
    hardware time of its last command (:attr:`last_time_s`, s) and the overlapped operation it
    started. ``overlapped``: such an operation runs in a thread of its own while the session
    goes on (a network client), else to completion in the calling thread (in process)."""

    def __init__(self, controller: Device, overlapped: bool = True) -> None:
        self.controller = controller
        self.overlapped = overlapped
        #: Its error queue; ``errors.events`` is its IEEE 488.2 event status register.
        self.errors = ErrorQueue(events=ESR_PON)
        #: Its event status enable and service request enable masks (``*ESE``, ``*SRE``).
        self.ese = self.sre = 0
        self.last_time_s = 0.0
        self._operation: threading.Thread | None = None
        self._pending = False  # an operation it started has not completed (under the lock)
        self._opc_armed = False  # ``*OPC`` came while one ran: set OPC when it completes

    def handle(self, line: str | bytes) -> str | None:
        """Run one line; return its query replies joined by ``;`` (None without queries).
        The whole line is parsed first; a command that fails puts its error in this session's
        queue and stops the rest of the line. Every error goes to the queue, a firmware bug too
        (-300 naming the exception, and logged); only an interrupt (``KeyboardInterrupt``,
        ``SystemExit``) goes through."""
        replies: list[str] = []
        with self._serving(line):
            commands = parse_line(line, self.controller.grammar)  # before anything runs
            overlapped = [c.spec.short for c in commands if c.spec.execution == "overlapped"]
            if len(overlapped) > 1:
                raise ScpiError(
                    -223, f"{', '.join(overlapped)}: at most one overlapped command a line"
                )
            device = any(c.spec.execution != "session" for c in commands)
            # the whole line under the device lock: no other client's command runs inside it,
            # but where it waits for an operation (*WAI, *OPC?, its own next write)
            with self.controller.lock if device else contextlib.nullcontext():
                for cmd in commands:
                    reply = self._run(cmd)
                    if cmd.query:
                        replies.append(format_reply(reply))
        return ";".join(replies) if replies else None

    def wait(self) -> None:
        """Return when the overlapped operation this session started (if any) has completed
        (``*WAI``, ``*OPC?``)."""
        if self._operation is not None:
            with self.controller.lock.released():  # the operation needs it to go on
                self._operation.join()

    def arm_opc(self) -> None:
        """``*OPC``: set the OPC bit of the event status register once the operation this
        session started has completed (at once when none runs)."""
        with self.controller.lock:  # an operation completes under the lock
            self._opc_armed = self._pending
            if not self._pending:
                self.errors.events |= ESR_OPC

    @contextlib.contextmanager
    def _serving(self, what: object) -> Iterator[None]:
        """Run the body as this session (``controller.session`` in this thread), its errors
        into this session's queue."""
        previous = getattr(_running, "session", None)
        _running.session = self
        try:
            yield
        except ScpiError as exc:
            self.errors.push(exc)
        except Exception as exc:  # a bug: the caller still gets its replies and the queue
            log.exception("internal error on %r", what)
            self.errors.push(ScpiError(-300, f"internal error: {type(exc).__name__}: {exc}"))
        finally:
            _running.session = previous

    def _run(self, cmd: Command) -> object:
        c, spec = self.controller, cmd.spec
        handler = getattr(c, spec.query_handler if cmd.query else spec.set_handler)
        if spec.execution == "session":
            return call(handler, cmd.args)
        if cmd.query:  # queries change nothing
            with c.lock:
                return call(handler, cmd.args)
        if self._pending:  # this client's own operation first, as *WAI would
            self.wait()
        with c.lock:
            if c.busy:
                raise ScpiError(
                    -221, f"{c.busy} in progress: nothing else changes until it completes"
                )
            if spec.execution == "device":
                return self._execute(handler, cmd.args)
            c.busy = spec.short  # reserved, before the rest of the line runs
            self._pending = True
        if not self.overlapped:
            return self._operate(handler, cmd.args)
        self._operation = threading.Thread(
            target=self._in_background, args=(handler, cmd.args), name=spec.short, daemon=True
        )
        try:
            self._operation.start()
        except BaseException:  # no thread: the reservation must not outlive it
            c.busy, self._pending = "", False
            raise
        return None

    def _in_background(self, handler: Callable[..., object], args: Sequence[object]) -> None:
        with self._serving(handler.__name__):
            self._operate(handler, args)

    def _operate(self, handler: Callable[..., object], args: Sequence[object]) -> object:
        """Run the overlapped command reserved in ``controller.busy``: under the lock, stepping
        aside before each measurement batch."""
        c = self.controller
        try:
            with c.lock:
                c.stepping = threading.get_ident()
                try:
                    return self._execute(handler, args)
                finally:
                    self._pending = False
                    if self._opc_armed:
                        self._opc_armed = False
                        self.errors.events |= ESR_OPC
        finally:
            c.stepping, c.busy = None, ""

    def _execute(self, handler: Callable[..., object], args: Sequence[object]) -> object:
        """A set command's handler in a transaction (all or nothing), its hardware time kept
        for ``SYST:TIME?``."""
        c = self.controller
        before = c.driver.elapsed_s
        try:
            with c.transaction():
                return call(handler, args)
        finally:
            self.last_time_s = c.driver.elapsed_s - before


def call(handler: Callable[..., object], args: Sequence[object]) -> object:
    """``handler(*args)``, its failures as :class:`ScpiError`."""
    try:
        return handler(*args)
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
