"""(Over 500 lines: one protocol, its message handling kept together in the specification's
order.)

A HiSLIP server: an emulated instrument as a VISA ``::INSTR`` resource
(``TCPIP0::127.0.0.1::hislip0,<port>::INSTR``), so a lab's code that reads the status byte
(``read_stb``), triggers (``assert_trigger``), clears (``clear``) or waits for service requests
runs against it as against the real instrument's LAN port.

Written from IVI-6.1, *High-Speed LAN Instrument Protocol (HiSLIP)*, revision 1.1 (IVI
Foundation, 2011), which no maintained Python server library implements (docs/instruments.md
says which were looked at). What this server does, by the specification's sections:

- messages (2.3): a 16-byte header (``HS``, message type, control code, 32-bit message
  parameter, 64-bit payload length) and the payload; a bad prologue is fatal error 1 (the
  connection closes), an unknown message type error 1, a vendor-specific one error 3, a payload
  over :data:`MAX_MESSAGE` bytes error 4 (the payload is read and dropped);
- connection (6.1): the synchronous channel opens with Initialize (sub-address ``hislip0``;
  versions 1.0 and 1.1: the lower of the client's and 1.1; synchronized mode preferred), the
  asynchronous one with AsyncInitialize naming the session; anything else first is fatal error
  3, a synchronous message before the asynchronous channel is open fatal error 2;
- data (6.2-6.3): Data messages gather until DataEnd; the program message (its terminator
  dropped; each line of it, at most :data:`~hil.emulator.server.MAX_LINE` bytes) goes to the
  instrument, and each reply goes back, newline-terminated, as a DataEnd (Data messages first
  when it exceeds the client's maximum message size, 6.4) carrying the MessageID of the message
  that asked for it;
- synchronized mode (3.1.1): a DataEnd sent sets RMT-expected; the client's RMT-delivered flag
  (on Data, DataEnd, Trigger, AsyncStatusQuery) clears it; a message arriving without it while
  a reply is unread is the interrupted condition, counted in :attr:`HislipServer.interrupted`;
- Trigger (6.6): the instrument runs ``*TRG``;
- device clear (6.12): AsyncDeviceClear is acknowledged (synchronized mode) and the instrument's
  pending ``*OPC`` dropped; a reply still being computed is discarded, and every synchronous
  message up to DeviceClearComplete, which is acknowledged and restarts the session's state;
- status (6.14): AsyncStatusQuery answers the status byte of :mod:`hil.emulator.ieee488` (the
  instrument's, MAV set while a reply has gone out unread and no later message is on its way:
  the query's MessageID is the last one received, or, as pyvisa-py 0.8 sends it, the next);
- service requests (6.13): each client whose master summary (an ``*SRE``-enabled status bit)
  rises gets AsyncServiceRequest with the status byte, bit 6 set, on its asynchronous channel;
  the instrument is watched every :data:`SRQ_POLL_S` and after each command;
- locks (6.7): AsyncLock requests (exclusive, or shared under a key) wait up to their timeout;
  while a lock is held, other sessions' synchronous messages wait for it; AsyncLockInfo;
  AsyncRemoteLocalControl is acknowledged (no local front panel to lock out);
- AsyncMaximumMessageSize (6.4): the client's size bounds the replies; ours is
  :data:`MAX_MESSAGE`.

Overlapped mode, the encrypted connections and the authentication of revision 2.0 are not
served (their messages are answered with error 1); a reply is sent as soon as the instrument
has it, so a client's unread reply is never held back (the interrupted condition above is only
counted).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import socket
import struct
import threading

from hil.emulator.ieee488 import STB_RQS, Device, ServiceRequest
from hil.emulator.server import MAX_LINE, LineHandler, Served, accepted, listening

log = logging.getLogger(__name__)

#: The HiSLIP port an instrument listens on unless told otherwise (IVI-6.1 2.1).
HISLIP_PORT = 4880
#: The message header: prologue, type, control code, message parameter, payload length.
HEADER = struct.Struct("!2sBBIQ")
#: The largest message this server takes (header included), bytes; replies are cut to the
#: client's own size.
MAX_MESSAGE = 1 << 20
#: How often the instrument's status byte is read for service requests, s.
SRQ_POLL_S = 0.02
#: The highest protocol version served: 1.1, as major << 8 | minor.
VERSION = 0x0101
#: The server's vendor ID (two characters), in AsyncInitializeResponse.
VENDOR_ID = b"PS"
#: The MessageID a session starts from, and starts again from at a device clear (3.1.2).
FIRST_MESSAGE_ID = 0xFFFF_FF00

# message types (IVI-6.1 table 4)
INITIALIZE, INITIALIZE_RESPONSE, FATAL_ERROR, ERROR = 0, 1, 2, 3
ASYNC_LOCK, ASYNC_LOCK_RESPONSE, DATA, DATA_END = 4, 5, 6, 7
DEVICE_CLEAR_COMPLETE, DEVICE_CLEAR_ACKNOWLEDGE = 8, 9
ASYNC_REMOTE_LOCAL_CONTROL, ASYNC_REMOTE_LOCAL_RESPONSE, TRIGGER = 10, 11, 12
INTERRUPTED, ASYNC_INTERRUPTED, ASYNC_MAX_MSG_SIZE, ASYNC_MAX_MSG_SIZE_RESPONSE = 13, 14, 15, 16
ASYNC_INITIALIZE, ASYNC_INITIALIZE_RESPONSE, ASYNC_DEVICE_CLEAR = 17, 18, 19
ASYNC_SERVICE_REQUEST, ASYNC_STATUS_QUERY, ASYNC_STATUS_RESPONSE = 20, 21, 22
ASYNC_DEVICE_CLEAR_ACKNOWLEDGE, ASYNC_LOCK_INFO, ASYNC_LOCK_INFO_RESPONSE = 23, 24, 25
#: Message types from here on are vendor-specific.
VENDOR_SPECIFIC = 128

# fatal error codes (table 5) and error codes (table 6)
FATAL_BAD_HEADER, FATAL_NO_ASYNC, FATAL_INIT_SEQUENCE, FATAL_TOO_MANY = 1, 2, 3, 4
ERROR_MESSAGE_TYPE, ERROR_CONTROL_CODE, ERROR_VENDOR, ERROR_TOO_LARGE = 1, 2, 3, 4
# AsyncLockResponse control codes (6.7)
LOCK_FAILURE, LOCK_SUCCESS, LOCK_SHARED, LOCK_ERROR = 0, 1, 2, 3


class HislipError(Exception):
    """The peer broke the protocol: ``fatal`` closes the session, else an Error message."""

    def __init__(self, code: int, text: str, fatal: bool = True) -> None:
        super().__init__(text)
        self.code, self.fatal = code, fatal


class _Connection:
    """One TCP connection (a channel): whole messages in, whole messages out, sends serialized
    (the service-request watcher and the channel's own thread both send)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._send_lock = threading.Lock()

    def receive(self) -> tuple[int, int, int, bytes]:
        """The next message: type, control code, parameter, payload (EOFError when closed)."""
        prologue, kind, control, parameter, length = HEADER.unpack(self._exact(HEADER.size))
        if prologue != b"HS":
            raise HislipError(FATAL_BAD_HEADER, f"bad prologue {prologue!r}")
        if length > MAX_MESSAGE - HEADER.size:
            while length > 0:  # read and drop, so the next header is found
                length -= len(self._exact(min(length, 65536)))
            raise HislipError(ERROR_TOO_LARGE, f"payload over {MAX_MESSAGE} bytes", fatal=False)
        return kind, control, parameter, self._exact(length)

    def _exact(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return bytes(data)

    def send(self, kind: int, control: int = 0, parameter: int = 0, payload: bytes = b"") -> None:
        header = HEADER.pack(b"HS", kind, control, parameter & 0xFFFF_FFFF, len(payload))
        with self._send_lock:
            self.sock.sendall(header + payload)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in recv
        self.sock.close()


class _Session:
    """One client: its two channels and its synchronized-mode state (guarded by ``lock``)."""

    def __init__(self, number: int, sync: _Connection, version: int) -> None:
        self.id, self.sync, self.version = number, sync, version
        self.async_: _Connection | None = None
        self.lock = threading.Lock()
        self.rmt_expected = False  # a DataEnd went out and RMT-delivered has not come back
        self.last_id = FIRST_MESSAGE_ID - 2  # MessageID of the last Data/DataEnd/Trigger
        self.clearing = False  # between AsyncDeviceClear and DeviceClearComplete
        self.max_send = MAX_MESSAGE  # the client's maximum message size
        self.srq = ServiceRequest()

    def delivered(self, control: int) -> bool:
        """Note a synchronous message's RMT-delivered flag; True when it interrupts an unread
        reply (3.1.1)."""
        with self.lock:
            interrupted = self.rmt_expected and not control & 1
            self.rmt_expected = False
            return interrupted

    def mav(self, message_id: int | None = None, rmt_delivered: bool = False) -> bool:
        """A reply has gone out unread, and (``message_id``) nothing newer is on its way."""
        with self.lock:
            if rmt_delivered:
                self.rmt_expected = False
            newest = message_id is None or message_id in (
                self.last_id,
                (self.last_id + 2) & 0xFFFF_FFFF,  # pyvisa-py 0.8 quotes its next MessageID
            )
            return self.rmt_expected and newest

    def close(self) -> None:
        for channel in (self.sync, self.async_):
            if channel is not None:
                channel.close()


class _Locks:
    """The instrument's lock (6.7): one exclusive holder, or shared holders under one key."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.exclusive: int | None = None
        self.shared: dict[int, str] = {}

    def _free_for(self, session: int, key: str | None) -> bool:
        if self.exclusive not in (None, session):
            return False
        others = {k for s, k in self.shared.items() if s != session}
        return not others if key is None else others <= {key}

    def request(self, session: int, key: str, timeout_s: float) -> int:
        """Lock for ``session`` (``key`` empty: exclusively), waiting up to ``timeout_s``."""
        exclusive = not key
        with self._changed:
            if not self._changed.wait_for(
                lambda: self._free_for(session, None if exclusive else key), timeout_s
            ):
                return LOCK_FAILURE
            if exclusive:
                self.exclusive = session
                return LOCK_SUCCESS
            self.shared[session] = key
            return LOCK_SHARED

    def release(self, session: int) -> int:
        """Release ``session``'s lock, its exclusive one first."""
        with self._changed:
            self._changed.notify_all()
            if self.exclusive == session:
                self.exclusive = None
                return LOCK_SUCCESS
            if self.shared.pop(session, None) is not None:
                return LOCK_SHARED
            return LOCK_ERROR

    def drop(self, session: int) -> None:
        """Every lock of a session that has gone."""
        with self._changed:
            if self.exclusive == session:
                self.exclusive = None
            self.shared.pop(session, None)
            self._changed.notify_all()

    def info(self) -> tuple[bool, int]:
        with self._changed:
            return self.exclusive is not None, len(self.shared) + (self.exclusive is not None)

    def wait_access(self, session: int, running: threading.Event) -> None:
        """Return when ``session`` may use the instrument (no other session's lock bars it)."""
        with self._changed:
            while running.is_set() and not self._accessible(session):
                self._changed.wait(0.1)

    def _accessible(self, session: int) -> bool:
        if self.exclusive is not None:
            return self.exclusive == session
        return not self.shared or session in self.shared


class HislipServer(Served):
    """``handler`` served over HiSLIP on ``host`` (see the module docstring). ``lock``: the
    instrument's lock, shared with its raw-socket server (:class:`~hil.emulator.server.TcpServer`
    ``._lock``) so both transports run one command at a time. ``port=0`` picks a free port on
    the first :meth:`start`; later starts reuse it."""

    def __init__(
        self,
        handler: LineHandler,
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "",
        lock: threading.Lock | None = None,
        sub_address: str = "hislip0",
    ) -> None:
        self.name = name or f"{type(handler).__name__}-hislip"
        self.device = Device(handler, lock, self.name)
        self.host, self.port, self.sub_address = host, port, sub_address
        #: Interrupted conditions seen (a message sent over an unread reply, 3.1.1).
        self.interrupted = 0
        self._sessions: dict[int, _Session] = {}
        self._connections: set[_Connection] = set()
        self._threads: list[threading.Thread] = []
        self._state = threading.Lock()  # guards the three above
        self._ids = itertools.count(1)
        self._locks = _Locks()
        self._running = threading.Event()
        self._stopping = threading.Event()
        self._srq_lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._wake_r = self._wake_w = -1
        self._life = threading.Lock()

    @property
    def handler(self) -> LineHandler:
        return self.device.handler

    @property
    def resource(self) -> str:
        """The VISA resource string of this instrument."""
        return f"TCPIP0::{self.host}::{self.sub_address},{self.port}::INSTR"

    @property
    def clients(self) -> int:
        """Sessions open now (both channels)."""
        with self._state:
            return sum(s.async_ is not None for s in self._sessions.values())

    def start(self) -> None:
        """Start serving (again, after :meth:`stop`)."""
        with self._life:
            if self._listener is not None:
                return
            listener = listening(self.host, self.port)
            self.port = listener.getsockname()[1]
            self._listener = listener
            self._wake_r, self._wake_w = os.pipe()
            self._running.set()
            self._stopping.clear()
            self._spawn(self._accept_loop, "accept", listener, self._wake_r)
            self._spawn(self._watch_loop, "srq")

    def stop(self) -> None:
        """Close the listener and every session at once, like a switched-off instrument."""
        with self._life:
            if self._listener is None:
                return
            self._running.clear()
            self._stopping.set()
            os.write(self._wake_w, b"x")
            with self._state:
                connections, self._connections = list(self._connections), set()
                threads, self._threads = self._threads, []
                self._sessions.clear()
            for connection in connections:
                connection.close()
            for thread in threads:
                thread.join(timeout=2.0)
            self._listener.close()
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._listener = None

    def _spawn(self, target: object, role: str, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=f"{self.name}-{role}")
        thread.daemon = True
        with self._state:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _accept_loop(self, listener: socket.socket, wake: int) -> None:
        for sock in accepted(listener, wake):
            connection = _Connection(sock)
            with self._state:
                self._connections.add(connection)
            self._spawn(self._serve, "client", connection)

    # ---- a connection: which channel it is, then its loop ------------------------------------
    def _serve(self, connection: _Connection) -> None:
        session: _Session | None = None
        try:
            kind, _, parameter, payload = connection.receive()
            if kind == INITIALIZE:
                session = self._initialize(connection, parameter, payload)
                self._sync_loop(session)
            elif kind == ASYNC_INITIALIZE:
                session = self._attach(connection, parameter)
                self._async_loop(session)
            else:
                raise HislipError(FATAL_INIT_SEQUENCE, f"message type {kind} before Initialize")
        except HislipError as exc:
            with contextlib.suppress(OSError):
                connection.send(FATAL_ERROR, exc.code, 0, str(exc).encode("ascii", "replace"))
        except (EOFError, OSError):
            pass  # the client went, or stop() closed the socket
        finally:
            self._close(connection, session)

    def _close(self, connection: _Connection, session: _Session | None) -> None:
        with self._state:
            self._connections.discard(connection)
            gone = session is not None and self._sessions.pop(session.id, None) is not None
        connection.close()
        if session is not None and gone:  # the other channel goes with it
            session.close()
            self._locks.drop(session.id)

    def _initialize(self, sync: _Connection, parameter: int, payload: bytes) -> _Session:
        address = payload.decode("ascii", "replace")
        if address and address.lower() != self.sub_address.lower():
            raise HislipError(FATAL_INIT_SEQUENCE, f"no instrument {address!r} here")
        version = min(parameter >> 16, VERSION)
        with self._state:
            free = (n & 0xFFFF for n in self._ids)  # 16-bit session IDs, 0 left out
            number = next(n for n in free if n and n not in self._sessions)
            session = _Session(number, sync, version)
            self._sessions[session.id] = session
        sync.send(INITIALIZE_RESPONSE, 0, version << 16 | session.id)  # 0: synchronized mode
        return session

    def _attach(self, channel: _Connection, parameter: int) -> _Session:
        with self._state:
            session = self._sessions.get(parameter & 0xFFFF)
            if session is None or session.async_ is not None:
                raise HislipError(FATAL_INIT_SEQUENCE, f"no session {parameter & 0xFFFF} to join")
            session.async_ = channel
        channel.send(ASYNC_INITIALIZE_RESPONSE, 0, int.from_bytes(VENDOR_ID, "big"))
        return session

    # ---- the synchronous channel -------------------------------------------------------------
    def _sync_loop(self, session: _Session) -> None:
        message = bytearray()
        while True:
            try:
                kind, control, parameter, payload = session.sync.receive()
            except HislipError as exc:
                if exc.fatal:
                    raise
                session.sync.send(ERROR, exc.code, 0, str(exc).encode())
                continue
            if session.async_ is None and kind != FATAL_ERROR:
                raise HislipError(FATAL_NO_ASYNC, "open the asynchronous channel first")
            if kind in (DATA, DATA_END, TRIGGER):
                self._locks.wait_access(session.id, self._running)
                with session.lock:
                    clearing = session.clearing
                    if not clearing:
                        session.last_id = parameter
                if clearing:  # a device clear drops everything up to DeviceClearComplete
                    message.clear()
                    continue
                if session.delivered(control):
                    self.interrupted += 1
                    log.info("%s: session %d: interrupted (a reply unread)", self.name, session.id)
                if kind == TRIGGER:
                    self.device.trigger()
                    self._requests()
                    continue
                message += payload[: max(0, MAX_LINE - len(message))]
                if kind == DATA_END:
                    self._run(session, bytes(message), parameter)
                    message.clear()
            elif kind == DEVICE_CLEAR_COMPLETE:
                with session.lock:
                    session.clearing, session.rmt_expected = False, False
                    session.last_id = FIRST_MESSAGE_ID - 2
                message.clear()
                session.sync.send(DEVICE_CLEAR_ACKNOWLEDGE, 0)  # 0: synchronized mode
            elif kind == FATAL_ERROR:
                log.info("%s: session %d: client fatal error %d", self.name, session.id, control)
                return
            elif kind != ERROR:  # an Error from the client is only logged
                self._unknown(session.sync, kind)

    def _run(self, session: _Session, message: bytes, message_id: int) -> None:
        """Each line of a program message to the instrument, each reply back as DataEnd."""
        text = message.decode("utf-8", errors="replace")
        for line in text.removesuffix("\n").split("\n"):
            reply = self.device.handle(line.removesuffix("\r"))
            if reply is not None:
                data = reply if isinstance(reply, bytes) else str(reply).encode()
                self._reply(session, data + b"\n", message_id)
            self._requests()  # each command may end or raise a reason for service

    def _reply(self, session: _Session, data: bytes, message_id: int) -> None:
        with session.lock:  # held while sending: a device clear waits for the reply or drops it
            if session.clearing:
                return
            size = max(1, session.max_send - HEADER.size)
            while len(data) > size:
                session.sync.send(DATA, 0, message_id, data[:size])
                data = data[size:]
            session.sync.send(DATA_END, 0, message_id, data)
            session.rmt_expected = True

    def _unknown(self, channel: _Connection, kind: int) -> None:
        code = ERROR_VENDOR if kind >= VENDOR_SPECIFIC else ERROR_MESSAGE_TYPE
        channel.send(ERROR, code, 0, f"message type {kind} not served".encode())

    # ---- the asynchronous channel ------------------------------------------------------------
    def _async_loop(self, session: _Session) -> None:
        channel = session.async_
        assert channel is not None
        while True:
            try:
                kind, control, parameter, payload = channel.receive()
            except HislipError as exc:
                if exc.fatal:
                    raise
                channel.send(ERROR, exc.code, 0, str(exc).encode())
                continue
            if kind == ASYNC_STATUS_QUERY:
                mav = session.mav(parameter, rmt_delivered=bool(control & 1))
                with self._srq_lock:
                    stb = session.srq.poll(self.device.status_byte(mav))
                channel.send(ASYNC_STATUS_RESPONSE, stb)
            elif kind == ASYNC_DEVICE_CLEAR:
                with session.lock:
                    session.clearing = True
                self.device.clear()
                channel.send(ASYNC_DEVICE_CLEAR_ACKNOWLEDGE, 0)  # 0: synchronized mode
            elif kind == ASYNC_MAX_MSG_SIZE and len(payload) == 8:
                size = struct.unpack("!Q", payload)[0]
                with session.lock:
                    session.max_send = max(HEADER.size + 256, min(size, MAX_MESSAGE))
                channel.send(ASYNC_MAX_MSG_SIZE_RESPONSE, 0, 0, struct.pack("!Q", MAX_MESSAGE))
            elif kind == ASYNC_LOCK:
                channel.send(ASYNC_LOCK_RESPONSE, self._lock(session, control, parameter, payload))
            elif kind == ASYNC_LOCK_INFO:
                exclusive, holders = self._locks.info()
                channel.send(ASYNC_LOCK_INFO_RESPONSE, int(exclusive), holders)
            elif kind == ASYNC_REMOTE_LOCAL_CONTROL and control <= 6:  # VISA's seven operations
                channel.send(ASYNC_REMOTE_LOCAL_RESPONSE)
            elif kind == ASYNC_REMOTE_LOCAL_CONTROL:
                channel.send(ERROR, ERROR_CONTROL_CODE, 0, b"remote/local code over 6")
            elif kind == FATAL_ERROR:
                return
            elif kind != ERROR:
                self._unknown(channel, kind)

    def _lock(self, session: _Session, control: int, parameter: int, payload: bytes) -> int:
        if control == 0:
            return self._locks.release(session.id)
        if control != 1:
            return LOCK_ERROR
        key = payload.decode("ascii", "replace")
        return self._locks.request(session.id, key, parameter / 1000)

    # ---- service requests --------------------------------------------------------------------
    def _watch_loop(self) -> None:
        """Watch the instrument for what other transports and time change (``*OPC`` done)."""
        while not self._stopping.wait(SRQ_POLL_S):
            self._requests()

    def _requests(self) -> None:
        """Send AsyncServiceRequest to each session whose master summary has risen."""
        with self._state:
            sessions = [s for s in self._sessions.values() if s.async_ is not None]
        with self._srq_lock:  # one edge seen once, by the watcher or a command's thread
            for session in sessions:
                stb = self.device.status_byte(session.mav())
                if session.srq.update(stb) and session.async_ is not None:
                    with contextlib.suppress(OSError):
                        session.async_.send(ASYNC_SERVICE_REQUEST, stb | STB_RQS)
