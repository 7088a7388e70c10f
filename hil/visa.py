"""Instrument sessions over VISA: pyvisa with the pure-Python pyvisa-py backend by default.

:class:`Session` is the transport of :class:`firmware.sdk.Switch` for ``TCPIP...::SOCKET`` and
``ASRL...::INSTR`` resources (entry points ``pswitch.transports``, :func:`open_transport`) and
the session the instrument drivers use. It makes these facts of pyvisa-py sessions harmless
(seen with pyvisa 1.16 and pyvisa-py 0.8 on loopback; ``docs/architecture.md`` lists them and
``benchmarks/bench_hil.py`` measures what each costs):

- Nagle: pyvisa-py refuses ``VI_ATTR_TCPIP_NODELAY`` (its attribute table wires the setter to a
  method that raises), so ``TCP_NODELAY`` is set on the pyvisa-py session's own socket object
  (``visalib.sessions[session].interface``) after every (re)connect; a write followed by a
  query then takes no ~40 ms delayed-ACK stall. Other backends get the VISA attribute.
- Threads: a Session holds a re-entrant lock from the write of a command to the end of its
  reply, so threads sharing it never get each other's replies. Every Session on one serial line
  (the resource in the canonical form of :func:`pyvisa.rname.parse_resource_name`) shares one,
  as they share the line; a ``TCPIP`` Session has a connection of its own and a lock of its
  own, so two clients of one instrument in one process do not wait for each other's replies.
- Stale replies: a reply that comes after its query timed out must not become the answer to
  the next query. A socket session therefore drops its connection on a timeout and reconnects
  for the next command: the late reply dies with the old connection, whenever it comes. (An
  instrument that allows one client and is still busy on the old connection refuses the new
  one for a while; the reconnect backoff covers short cases.) A serial line cannot do that:
  the session remembers the owed reply and, before its next command, waits up to
  ``timeout_s`` for it and discards it. Before every command a session also discards anything
  received unasked. (On a serial line, a reply later than twice ``timeout_s`` still shifts
  the answers by one: the limit of a line protocol without tags.)
- Dropped connections: an EOF, ``ConnectionResetError``/``BrokenPipeError`` or a VISA I/O error
  closes the connection and reconnects with exponential backoff (``backoff_s``, doubled per
  attempt, ``retries`` attempts), re-applying timeout, terminations and ``TCP_NODELAY``. A
  command that never left (the drop was seen before or while sending it: a socket is checked
  for an EOF before each command) is then sent on the new connection. A query whose connection
  dropped after it was sent is sent once more, so a query line must not change state. A write
  that left is never sent again, so it is applied at most once; a write sent into a connection
  the peer had closed a moment before is lost unnoticed (TCP cannot tell), and the drop is seen
  by the next command. pyvisa-py also "opens" a refused TCP port (its non-blocking connect
  succeeds on ``select``), so the socket's ``SO_ERROR`` is checked after opening.
- Reading: on a pyvisa-py SOCKET session, viRead costs more than the whole rest of a query (a
  ``select`` loop with three attribute look-ups per call; a query took 2.5-2.8x a raw socket
  round trip) and spins on an EOF until its timeout. Session writes through viWrite but reads
  replies from that session's socket itself (``poll`` then ``recv``), after pyvisa-py's
  read-ahead buffer, which it keeps in step. Serial lines and other backends read with viRead.
- Traffic: every line written and every reply read is logged at DEBUG on the ``hil.visa``
  logger (``logging``), one line each naming the resource (``<resource> <- <line>``,
  ``<resource> -> <reply>``); the check costs nothing measurable when DEBUG is off.
- Errors: every failure is an :mod:`hil.errors` exception naming the resource:
  :class:`~hil.errors.InstrumentTimeoutError`, :class:`~hil.errors.ConnectionLostError`, or
  :class:`~hil.errors.InstrumentError` (never a raw pyvisa error or OSError).

Backends: ``backend=None`` or ``"@py"`` is pyvisa-py; ``"@ivi"`` is the system VISA library
(NI-VISA, Keysight IO Libraries), an :class:`~hil.errors.InstrumentError` if none is installed;
``""`` is pyvisa's own choice (the system library if there is one, else pyvisa-py). One
:class:`pyvisa.ResourceManager` per backend serves the whole process (:func:`resource_manager`);
sessions never close it, because closing the "@py" manager closes every resource.

Times are in seconds.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Self, TypeVar

import numpy as np
import pyvisa
import pyvisa.errors
from pyvisa import constants, rname

from hil.errors import ConnectionLostError, InstrumentError, InstrumentTimeoutError

DEFAULT_BACKEND = "@py"
#: Bytes asked of one viRead; a line ends at its terminator long before.
READ_COUNT = 1 << 20

#: The traffic log: a child of pyvisa's own logger, so ``pyvisa.log_to_screen()`` shows it too
#: (pyvisa-py does not see the replies, which a session reads from the socket itself).
log = logging.getLogger(f"pyvisa.{__name__}")
_T = TypeVar("_T")
_registry = threading.Lock()
_managers: dict[str, pyvisa.ResourceManager] = {}
_locks: dict[str, threading.RLock] = {}


def resource_manager(backend: str | None = None) -> pyvisa.ResourceManager:
    """The process's resource manager for ``backend`` (None: pyvisa-py), made on first use."""
    backend = DEFAULT_BACKEND if backend is None else backend
    with _registry:
        manager = _managers.get(backend)
        if manager is None:
            try:
                manager = _managers[backend] = pyvisa.ResourceManager(backend)
            except (OSError, ValueError, pyvisa.errors.Error) as e:
                raise InstrumentError(f"VISA backend {backend!r}", f"cannot load: {e}") from e
        return manager


def canonical(resource: str) -> str:
    """A resource string in canonical form (``TCPIP::h::p::SOCKET`` -> ``TCPIP0::...``)."""
    try:
        return str(rname.parse_resource_name(resource))
    except rname.InvalidResourceName as e:
        raise InstrumentError(resource, f"not a VISA resource string: {e}") from e


def resource_lock(resource: str) -> threading.RLock:
    """The lock every Session on ``resource`` (a serial line) holds for a command and its
    reply."""
    key = canonical(resource)
    with _registry:
        return _locks.setdefault(key, threading.RLock())


class _DroppedError(Exception):
    """The connection is gone (EOF or an I/O error)."""


class _TimeoutError(Exception):
    """No (complete) reply within the deadline."""


class Session:
    """A line session to one instrument (see the module docstring for the guarantees).

    ``timeout_s`` bounds the wait for a reply; ``read_termination``/``write_termination`` end
    lines from/to the instrument; ``retries`` reconnect attempts ``backoff_s``, ``2*backoff_s``,
    ... apart; ``backend`` as in :func:`resource_manager`. The session connects at once
    (raising :class:`~hil.errors.ConnectionLostError` if it cannot).

    It satisfies :class:`firmware.sdk.Transport`: :meth:`write` for lines without a query,
    :meth:`query` for lines with one. A query on a line the instrument does not answer raises
    :class:`~hil.errors.InstrumentTimeoutError` after ``timeout_s`` (it never hangs).
    """

    def __init__(
        self,
        resource: str,
        timeout_s: float = 2.0,
        read_termination: str = "\n",
        write_termination: str = "\n",
        retries: int = 3,
        backoff_s: float = 0.05,
        backend: str | None = None,
    ) -> None:
        self.resource = resource
        self._timeout_s = timeout_s
        self.read_termination = read_termination
        self.write_termination = write_termination
        self.retries = max(1, retries)
        self.backoff_s = backoff_s
        self.backend = DEFAULT_BACKEND if backend is None else backend
        self._term = read_termination.encode()
        tcpip = canonical(resource).startswith("TCPIP")  # a connection of its own
        self._lock = threading.RLock() if tcpip else resource_lock(resource)
        self._manager = resource_manager(self.backend)
        self._inst: Any = None  # the pyvisa resource while connected
        self._socket: socket.socket | None = None  # pyvisa-py TCPIP SOCKET only
        self._serial: Any = None  # pyvisa-py ASRL only (a serial.Serial)
        self._poll: select.poll | None = None  # readiness of that socket
        self._handle: Any = None  # pyvisa-py's session object (for its read-ahead buffer)
        self._owed = 0  # replies that timed out and may still arrive
        self._closed = False
        with self._lock:
            self._run(None, lambda: None)  # connect, with the retries

    # ---- public ----------------------------------------------------------------------------
    @property
    def timeout_s(self) -> float:
        """How long a reply may take, s; settable (applied to the open connection too)."""
        return self._timeout_s

    @timeout_s.setter
    def timeout_s(self, value: float) -> None:
        with self._lock:
            self._timeout_s = value
            if self._inst is not None:
                self._inst.timeout = value * 1e3

    @property
    def instrument(self) -> Any:
        """The pyvisa resource of the current connection (None while disconnected)."""
        return self._inst

    def write(self, cmd: str) -> None:
        """Send a line that has no reply."""
        self._run(cmd, None)

    def query(self, cmd: str) -> str:
        """Send a line and return its reply line (terminator stripped)."""
        return self._run(cmd, self._read_line)

    def query_lines(self, cmd: str, n: int) -> list[str]:
        """Send a line and return its reply of ``n`` lines (terminators stripped)."""
        return self._run(cmd, lambda: [self._read_line() for _ in range(n)])

    def query_each(self, cmds: Sequence[str]) -> list[str]:
        """Send the lines ``cmds`` in one write and return their replies, in order: one round
        trip for all instead of one each (an instrument answers its lines in order). After a
        dropped connection all are sent again, so they must be safe to repeat (settings)."""
        if not cmds:
            return []

        def read_all() -> list[str]:
            replies: list[str] = []
            try:
                while len(replies) < len(cmds):
                    replies.append(self._read_line())
            except _TimeoutError:
                self._owed += len(cmds) - len(replies) - 1  # _run owes the one it waits for
                raise
            return replies

        return self._run(self.write_termination.join(cmds), read_all)

    def query_binary_floats(self, cmd: str) -> np.ndarray:
        """Send a line and read its reply as an IEEE 488.2 definite-length block
        (``#<n><len><data>``) of little-endian float32."""
        return self._run(cmd, self._read_block)

    def close(self) -> None:
        """Close the connection (not the process's resource manager)."""
        with self._lock:
            self._closed = True
            self._disconnect()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Session({self.resource!r}, backend={self.backend!r})"

    # ---- the command cycle -----------------------------------------------------------------
    def _run(self, cmd: str | None, reply: Callable[[], _T] | None) -> _T | None:
        """Send ``cmd`` (if any) and read its reply (if any), reconnecting on a drop."""
        with self._lock:
            if self._closed:
                raise InstrumentError(self.resource, "the session is closed")
            failures, resent = 0, False
            while True:
                sent = False
                try:
                    if self._inst is None:
                        self._connect()
                    self._prepare()
                    if cmd is not None:
                        self._send(cmd)
                        if log.isEnabledFor(logging.DEBUG):
                            log.debug("%s <- %s", self.resource, cmd)
                    sent = True
                    if reply is None:
                        return None
                    answer = reply()
                    if log.isEnabledFor(logging.DEBUG):
                        log.debug("%s -> %s", self.resource, _shown(answer))
                    return answer
                except _TimeoutError:
                    if self._socket is not None:
                        self._disconnect()  # the late reply goes with this connection
                    elif reply is not None:
                        self._owed += 1
                    raise InstrumentTimeoutError(
                        self.resource, f"no reply to {cmd!r} within {self.timeout_s:g} s"
                    ) from None
                except (_DroppedError, OSError, pyvisa.errors.Error) as e:
                    cause = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                    self._disconnect()
                    failures += 1
                    # a query may be sent a second time; a command that never left, always
                    if sent and (cmd is None or resent):
                        again = ", also after reconnecting" if resent else ""
                        raise ConnectionLostError(
                            self.resource, f"connection lost during {cmd!r} ({cause}){again}"
                        ) from e
                    if failures > self.retries:
                        what = f" to send {cmd!r}" if cmd else ""
                        raise ConnectionLostError(
                            self.resource,
                            f"cannot reach the instrument{what} ({cause}); gave up after "
                            f"{self.retries} reconnect attempts",
                        ) from e
                    resent = resent or sent
                    time.sleep(self.backoff_s * 2 ** (failures - 1))
                except InstrumentError:
                    raise
                except Exception as e:  # anything else pyvisa raises, named for the caller
                    raise InstrumentError(self.resource, f"{type(e).__name__}: {e}") from e

    def _connect(self) -> None:
        """Open the resource and apply the settings."""
        try:
            inst = self._manager.open_resource(
                self.resource,
                read_termination=self.read_termination,
                write_termination=self.write_termination,
                timeout=self.timeout_s * 1e3,
                open_timeout=self.timeout_s * 1e3,
            )
        except (OSError, pyvisa.errors.Error):
            raise
        except Exception as e:  # pyvisa-py raises a bare Exception when it cannot connect
            raise _DroppedError(str(e)) from e
        self._inst, self._owed = inst, 0  # owed replies went with the old connection
        handle = getattr(inst.visalib, "sessions", {}).get(inst.session)  # pyvisa-py's session
        interface = getattr(handle, "interface", None)
        self._socket = interface if isinstance(interface, socket.socket) else None
        self._serial = interface if hasattr(interface, "reset_input_buffer") else None
        self._handle = handle
        if self._socket is not None:
            error = self._socket.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if error:  # pyvisa-py "connects" to a refused port
                raise ConnectionRefusedError(error, os.strerror(error))
            self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if isinstance(getattr(handle, "_pending_buffer", None), bytearray):  # pyvisa-py 0.8
                self._poll = select.poll()  # EOF seen at once, not after a timeout
                self._poll.register(self._socket, select.POLLIN)
        elif self.resource.upper().startswith("TCPIP"):
            with contextlib.suppress(pyvisa.errors.VisaIOError):  # a system VISA honours it
                inst.set_visa_attribute(constants.ResourceAttribute.tcpip_nodelay, True)

    def _disconnect(self) -> None:
        inst, self._inst = self._inst, None
        self._socket = self._serial = self._poll = self._handle = None
        if inst is not None:
            with contextlib.suppress(Exception):  # the connection is broken anyway
                inst.close()

    def _prepare(self) -> None:
        """Discard owed (late) replies and anything else received unasked; detect an EOF
        before sending, while sending again is still safe."""
        if self._owed:
            deadline = self._deadline()
            try:
                while self._owed:
                    self._read_until_term(deadline)
                    self._owed -= 1
            except _TimeoutError:
                pass  # never came: the instrument dropped it
            self._owed = 0
        if self._poll is not None:
            if self._handle._pending_buffer:
                self._handle._pending_buffer.clear()
            while self._poll.poll(0):
                if not self._socket.recv(65536):
                    raise _DroppedError("closed by the instrument")
        elif self._serial is not None:
            if self._serial.in_waiting:
                self._serial.reset_input_buffer()
        elif self._inst is not None:
            # a backend that cannot flush (pyvisa-sim) keeps no stale bytes to discard this way
            with contextlib.suppress(NotImplementedError):
                self._inst.flush(constants.BufferOperation.discard_read_buffer_no_io)

    def _send(self, cmd: str) -> None:
        try:
            self._inst.visalib.write(self._inst.session, (cmd + self.write_termination).encode())
        except pyvisa.errors.VisaIOError as e:
            if e.error_code == constants.StatusCode.error_timeout:  # a stuck serial line
                raise _TimeoutError from e
            raise

    # ---- reading ---------------------------------------------------------------------------
    def _deadline(self) -> float:
        return time.monotonic() + self.timeout_s

    def _read_line(self) -> str:
        data = self._read_until_term(self._deadline())
        return data.removesuffix(self._term).decode("utf-8", errors="replace")

    def _read_until_term(self, deadline: float) -> bytes:
        """One reply up to and including the terminator."""
        if self._poll is not None:
            return self._recv_until_term(deadline)
        inst = self._inst
        left = deadline - time.monotonic()
        slow = left < 0.9 * self.timeout_s  # keep the whole read within the deadline
        try:
            if slow:
                inst.timeout = max(left, 1e-3) * 1e3
            data, status = inst.visalib.read(inst.session, READ_COUNT)  # viRead
            while status == constants.StatusCode.success_max_count_read:  # a huge reply
                more, status = inst.visalib.read(inst.session, READ_COUNT)
                data += more
            return data
        except pyvisa.errors.VisaIOError as e:
            if e.error_code == constants.StatusCode.error_timeout:
                raise _TimeoutError from e
            raise
        finally:
            if slow and self._inst is not None:
                self._inst.timeout = self.timeout_s * 1e3

    def _recv_until_term(self, deadline: float) -> bytes:
        """Read a reply from pyvisa-py's socket itself, after what pyvisa-py read ahead:
        viRead costs more than the rest of a query and spins on an EOF until its timeout."""
        buffer, term = self._handle._pending_buffer, self._term  # its read-ahead, kept in step
        while (end := buffer.find(term)) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not self._poll.poll(left * 1e3):
                raise _TimeoutError
            chunk = self._socket.recv(65536)
            if not chunk:
                raise _DroppedError("closed by the instrument")
            buffer += chunk
        end += len(term)
        data = bytes(buffer[:end])
        del buffer[:end]
        return data

    def _read_block(self) -> np.ndarray:
        deadline = self._deadline()
        data = bytearray(self._read_until_term(deadline))
        if not data.startswith(b"#") or len(data) < 2 or not chr(data[1]).isdigit():
            text = bytes(data).removesuffix(self._term).decode("utf-8", errors="replace")
            raise InstrumentError(self.resource, f"expected a binary block, got {text[:80]!r}")
        digits = int(chr(data[1]))
        if digits == 0:
            raise InstrumentError(self.resource, "indefinite-length blocks are not supported")
        while len(data) < 2 + digits:
            data += self._read_until_term(deadline)
        start = 2 + digits
        length = int(data[2:start])
        while len(data) < start + length + len(self._term):  # data bytes may look like "\n"
            data += self._read_until_term(deadline)
        if length % 4:
            raise InstrumentError(self.resource, f"a float32 block of {length} bytes")
        return np.frombuffer(bytes(data[start : start + length]), dtype="<f4").copy()


def _shown(reply: object) -> str:
    """A reply as the traffic log shows it: text as it is, lines joined, arrays summarised."""
    if isinstance(reply, str):
        return reply
    if isinstance(reply, list):
        return " | ".join(map(str, reply))
    return f"<block of {np.size(reply)} values>"


#: The environment variable that chooses the VISA backend of :func:`open_transport`.
BACKEND_VARIABLE = "PSWITCH_VISA_BACKEND"


def open_transport(resource: str) -> Session:
    """The ``pswitch.transports`` factory: a :class:`Session` with the defaults, on the backend
    named by ``$PSWITCH_VISA_BACKEND`` (e.g. ``@ivi`` for the system's VISA library, which
    GPIB and USB instruments usually need; unset: pyvisa-py)."""
    return Session(resource, backend=os.environ.get(BACKEND_VARIABLE) or None)
