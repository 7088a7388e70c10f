"""Line servers that impersonate instruments: a raw TCP socket and a pseudo-terminal.

A :class:`LineHandler` (an instrument emulation) gets each received line without its terminator
and returns the reply without its terminator (``bytes`` for binary blocks such as
``#18<8 bytes>``), or None when the line has no reply. A server calls its handler under one lock:
an instrument processes one command at a time, and its clients share its state and error queue.
A handler that keeps a session per client (:class:`Sessions`, as the switch firmware does: its
own error queue and operations) gets one for each connection, and each session's lines are
handled without that lock (the device locks itself), so one client's long command does not
hold the others up.

:class:`TcpServer` listens on loopback (``TCPIP0::127.0.0.1::<port>::SOCKET``), a thread per
client; :class:`PtyServer` serves the master side of a pseudo-terminal whose slave is the
"serial port" (``ASRL/dev/pts/<n>::INSTR``). Each reply goes out, terminator included, in one
write (no Nagle split), unless :class:`Faults` asks otherwise. Faults can be changed on a running
server (``server.faults = Faults(...)``); their counters start from that moment.

Line framing is each instrument's own (:mod:`hil.emulator.framing`): the terminators that end a
received line and the one that ends each reply, from the handler's ``framing`` (read at every
reply: the TSL-570's delimiter setting changes the next reply's) or its model's entry in
:data:`~hil.emulator.framing.FRAMINGS`; a server given ``read_termination`` and
``write_termination`` uses those instead. Received bytes are decoded as UTF-8 with
``errors="replace"``, so a garbage byte reaches the handler (which reports it, e.g. SCPI -101)
instead of killing the server; lines longer than :data:`MAX_LINE` bytes are truncated to it, so a
client cannot exhaust memory.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import socket
import threading
import time
import tty
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, Self

from hil.emulator.framing import Framing, LineSplitter, framing_of

log = logging.getLogger(__name__)

#: Longest line handed to a handler, bytes; the rest of a longer line is dropped.
MAX_LINE = 64 * 1024
#: Pause between the two halves of a split reply when ``Faults.slow_reply_s`` is 0, s.
SPLIT_PAUSE_S = 0.002
#: Size of the pieces a slow reply trickles out in (without ``split_reply``), bytes.
SLOW_CHUNK = 4


class LineHandler(Protocol):
    """An instrument emulation: one line in, its reply out."""

    def handle(self, line: str) -> str | bytes | None:
        """The reply to ``line`` without terminator (bytes for binary blocks), None for none."""
        ...


class Sessions(Protocol):
    """A device that keeps a session per client: a line handler of its own for each
    connection, called without the server's lock."""

    def session(self) -> LineHandler:
        """A new client's handler."""
        ...


@dataclass(frozen=True)
class Faults:
    """Misbehaviour injected by a server (times in s, counts in commands).

    ``latency_s``: added before each reply. ``drop_after``: close the client's connection right
    after the reply to the N-th next command (once). ``split_reply``: send each reply in two
    writes, ``slow_reply_s`` apart (default :data:`SPLIT_PAUSE_S`); ``slow_reply_s`` alone
    trickles each reply out in :data:`SLOW_CHUNK`-byte pieces that far apart. ``max_clients``:
    connections beyond N are accepted and closed at once. ``no_reply``: swallow the next N
    replies; with ``late_reply_s`` each is sent that long after it was due (the stale reply a
    client must not take for the answer to its next query), else never.
    """

    latency_s: float = 0.0
    drop_after: int | None = None
    split_reply: bool = False
    slow_reply_s: float = 0.0
    max_clients: int | None = None
    no_reply: int = 0
    late_reply_s: float | None = None


class _Channel(Protocol):
    """Where a reply goes: a client socket or a pty master."""

    def send(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class Served:
    """A server used as a context: started on entering, stopped on leaving."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _LineServer(Served):
    """The parts both servers share: framing, handler lock, faults, late-reply timers."""

    _can_drop = True  # whether the channel can be closed on the client (not a serial line)

    def __init__(
        self,
        handler: LineHandler | Sessions,
        read_termination: str | None,
        write_termination: str | None,
        faults: Faults,
        name: str,
    ) -> None:
        self.handler = handler
        given = read_termination is not None or write_termination is not None
        self._fixed = (
            Framing.of(read_termination or "\n", write_termination or "\n") if given else None
        )
        self.name = name or type(handler).__name__
        self._lock = threading.Lock()  # one command at a time, shared state
        self._timers: list[threading.Timer] = []
        self._timers_lock = threading.Lock()  # client threads add, stop() cancels
        self._life = threading.Lock()  # start() and stop() one at a time (stop from a timer)
        self.faults = faults

    @property
    def framing(self) -> Framing:
        """The line framing now: the one given, else the handler's (its manual's)."""
        return self._fixed or framing_of(self.handler)

    @property
    def faults(self) -> Faults:
        return self._faults

    @faults.setter
    def faults(self, faults: Faults) -> None:
        with self._lock:
            self._faults = faults
            self._drop_left = faults.drop_after  # counters start now
            self._swallow_left = faults.no_reply

    def start(self) -> None:
        """Start serving (again, after :meth:`stop`)."""
        with self._life:
            self._start()

    def stop(self) -> None:
        """Stop serving; a no-op when stopped."""
        with self._life:
            self._stop()

    def _start(self) -> None:
        raise NotImplementedError

    def _stop(self) -> None:
        raise NotImplementedError

    def _client_handler(self) -> LineHandler | None:
        """A new client's own session of the handler, or None when the clients share it."""
        session = getattr(self.handler, "session", None)
        return session() if callable(session) else None

    def _splitter(self) -> LineSplitter:
        """A new client's line splitter, at the terminators the instrument accepts."""
        return LineSplitter(self.framing.accepts, MAX_LINE)

    def _serve_bytes(
        self, lines: LineSplitter, data: bytes, channel: _Channel, own: LineHandler | None
    ) -> bool:
        """Cut received bytes into lines (the client's own ``lines``), answer each through the
        client's ``own`` session or the shared handler; False when the channel must close
        (``drop_after`` fired)."""
        for raw in lines.feed(data):
            if not self._answer(raw.decode("utf-8", errors="replace"), channel, own):
                return False
        return True

    def _answer(self, line: str, channel: _Channel, own: LineHandler | None) -> bool:
        with self._lock if own is None else contextlib.nullcontext():
            handler = self.handler if own is None else own
            try:
                reply = handler.handle(line)
            except Exception:  # a broken emulation must not kill the instrument
                log.exception("%s: handler failed on %r", self.name, line)
                reply = None
            # the framing after the line: a delimiter it set ends this reply already
            ending = self.framing.ending(reply) if reply is not None else ""
        with self._lock:
            faults = self._faults
            swallow = reply is not None and self._swallow_left > 0
            if swallow:
                self._swallow_left -= 1
            drop = False
            if self._drop_left is not None and self._can_drop:
                self._drop_left -= 1
                drop = self._drop_left <= 0
                if drop:
                    self._drop_left = None  # once
        if reply is not None:
            data = reply if isinstance(reply, bytes) else str(reply).encode()
            data += ending.encode()
            if faults.latency_s > 0:
                time.sleep(faults.latency_s)
            if swallow:
                if faults.late_reply_s is not None:
                    self._send_late(channel, data, faults)
            else:
                self._send(channel, data, faults)
        return not drop

    def _send(self, channel: _Channel, data: bytes, faults: Faults) -> None:
        if faults.split_reply:
            half = max(1, len(data) // 2)
            pieces = [data[:half], data[half:]]
            pause = faults.slow_reply_s or SPLIT_PAUSE_S
        elif faults.slow_reply_s > 0:
            pieces = [data[i : i + SLOW_CHUNK] for i in range(0, len(data), SLOW_CHUNK)]
            pause = faults.slow_reply_s
        else:
            channel.send(data)  # one write: reply and terminator together
            return
        for i, piece in enumerate(pieces):
            if i:
                time.sleep(pause)
            channel.send(piece)

    def _send_late(self, channel: _Channel, data: bytes, faults: Faults) -> None:
        def late() -> None:
            with contextlib.suppress(OSError):  # the client may have gone meanwhile
                self._send(channel, data, Faults())

        timer = threading.Timer(faults.late_reply_s or 0.0, late)
        timer.daemon = True
        with self._timers_lock:
            self._timers = [t for t in self._timers if t.is_alive()] + [timer]
        timer.start()

    def _cancel_timers(self) -> None:
        with self._timers_lock:
            timers, self._timers = self._timers, []
        for timer in timers:
            timer.cancel()


#: accept() failures that last while descriptors are short: back off instead of spinning.
OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
#: How long the acceptor waits before it tries again, s.
ACCEPT_BACKOFF_S = 0.1


class _Client:
    """One accepted TCP connection; sends are serialized (late replies come from timers)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._send_lock = threading.Lock()

    def send(self, data: bytes) -> None:
        with self._send_lock:
            self.sock.sendall(data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in recv
        self.sock.close()


def listening(host: str, port: int) -> socket.socket:
    """A TCP listener on ``host``:``port`` (0: a free port), reusable at once after a restart
    on the same port, with the system's backlog (a burst of clients waits)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(socket.SOMAXCONN)
    return listener


def accepted(listener: socket.socket, wake: int) -> Iterator[socket.socket]:
    """Each connection ``listener`` accepts (TCP_NODELAY set), until ``wake`` is readable. Out
    of file descriptors, it waits :data:`ACCEPT_BACKOFF_S` instead of spinning (the pending
    client stays ready)."""
    while True:
        ready, _, _ = select.select([listener, wake], [], [])
        if wake in ready:
            return
        try:
            sock, _ = listener.accept()
        except OSError as exc:
            if exc.errno in OUT_OF_DESCRIPTORS:
                select.select([wake], [], [], ACCEPT_BACKOFF_S)
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        yield sock


class TcpServer(_LineServer):
    """A raw TCP socket instrument (like port 5025 of a SCPI instrument) on ``host``.

    ``port=0`` picks a free port on the first :meth:`start`; later starts reuse it, so a test
    can kill the instrument (:meth:`stop` closes the listener and every connection) and bring
    it back at the same resource string.
    """

    def __init__(
        self,
        handler: LineHandler | Sessions,
        host: str = "127.0.0.1",
        port: int = 0,
        read_termination: str | None = None,
        write_termination: str | None = None,
        faults: Faults = Faults(),  # frozen: safe to share
        name: str = "",
    ) -> None:
        super().__init__(handler, read_termination, write_termination, faults, name)
        self.host, self.port = host, port
        self.accepted = 0  # connections accepted so far (refused ones included)
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self._wake_r = self._wake_w = -1
        self._clients: set[_Client] = set()
        self._threads: list[threading.Thread] = []
        self._state = threading.Lock()  # guards accepted, _clients and _threads

    @property
    def resource(self) -> str:
        """The VISA resource string of this instrument."""
        return f"TCPIP0::{self.host}::{self.port}::SOCKET"

    @property
    def clients(self) -> int:
        """Connections open now."""
        with self._state:
            return len(self._clients)

    def _start(self) -> None:
        if self._listener is not None:
            return
        listener = listening(self.host, self.port)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._wake_r, self._wake_w = os.pipe()
        self._acceptor = threading.Thread(
            target=self._accept_loop, args=(listener, self._wake_r), name=f"{self.name}-accept"
        )
        self._acceptor.daemon = True
        self._acceptor.start()

    def _stop(self) -> None:
        """Close the listener and every connection at once, like a killed instrument."""
        if self._listener is None or self._acceptor is None:
            return
        os.write(self._wake_w, b"x")
        self._acceptor.join(timeout=2.0)
        self._listener.close()  # refused from now on
        self._cancel_timers()
        with self._state:
            clients, self._clients = list(self._clients), set()
            threads, self._threads = self._threads, []
        for client in clients:
            client.close()
        for thread in threads:  # a thread inside the handler finishes its command first
            thread.join(timeout=2.0)
        os.close(self._wake_r)
        os.close(self._wake_w)
        self._listener = self._acceptor = None

    def _accept_loop(self, listener: socket.socket, wake: int) -> None:
        for sock in accepted(listener, wake):
            client = _Client(sock)
            limit = self.faults.max_clients
            with self._state:
                self.accepted += 1
                refused = limit is not None and len(self._clients) >= limit
                if not refused:
                    self._clients.add(client)
                    thread = threading.Thread(
                        target=self._client_loop, args=(client,), name=f"{self.name}-client"
                    )
                    thread.daemon = True
                    self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            if refused:  # accepted by the kernel already: close at once, as instruments do
                client.close()
                continue
            thread.start()

    def _client_loop(self, client: _Client) -> None:
        lines, own = self._splitter(), self._client_handler()
        try:
            while data := client.sock.recv(65536):
                if not self._serve_bytes(lines, data, client, own):
                    break
        except OSError:
            pass  # reset by the peer, or closed by stop()
        finally:
            with self._state:
                self._clients.discard(client)
            client.close()


class _PtyMaster:
    """The master side as a reply channel; closed under its lock, so that a late-reply timer
    never writes to a closed (and perhaps reused) file descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._send_lock = threading.Lock()

    def send(self, data: bytes) -> None:
        with self._send_lock:
            if self.fd < 0:
                raise OSError(errno.EBADF, "the pty is closed")
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]

    def close(self) -> None:
        with self._send_lock:
            if self.fd >= 0:
                os.close(self.fd)
            self.fd = -1


class PtyServer(_LineServer):
    """An instrument on a serial line: the master side of a pseudo-terminal in raw mode.

    ``path`` is the slave device (e.g. ``/dev/pts/5``) a client opens as its serial port;
    :meth:`stop` closes both sides (the client then reads EOF/EIO, like an unplugged adapter),
    and a new :meth:`start` makes a new pty, usually at a different path. ``drop_after`` and
    ``max_clients`` do not apply to a serial line.
    """

    def __init__(
        self,
        handler: LineHandler | Sessions,
        read_termination: str | None = None,
        write_termination: str | None = None,
        faults: Faults = Faults(),  # frozen: safe to share
        name: str = "",
    ) -> None:
        super().__init__(handler, read_termination, write_termination, faults, name)
        self._can_drop = False
        self.path = ""
        self._master: _PtyMaster | None = None
        self._slave = self._wake_r = self._wake_w = -1
        self._thread: threading.Thread | None = None

    @property
    def resource(self) -> str:
        """The VISA resource string of this serial port."""
        return f"ASRL{self.path}::INSTR"

    def _start(self) -> None:
        if self._thread is not None:
            return
        master, self._slave = os.openpty()
        self._master = _PtyMaster(master)
        tty.setraw(self._slave)  # no echo, no line editing, no CR/LF translation
        self.path = os.ttyname(self._slave)
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._loop, name=f"{self.name}-pty", daemon=True)
        self._thread.start()

    def _stop(self) -> None:
        if self._thread is None:
            return
        self._cancel_timers()
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=2.0)
        self._thread = None
        if self._master is not None:
            self._master.close()
        for fd in (self._slave, self._wake_r, self._wake_w):
            os.close(fd)
        self._master, self._slave, self._wake_r, self._wake_w = None, -1, -1, -1

    def _loop(self) -> None:
        master, wake, lines = self._master, self._wake_r, self._splitter()
        own = self._client_handler()  # the serial line is one client
        assert master is not None
        while True:
            ready, _, _ = select.select([master.fd, wake], [], [])
            if wake in ready:
                return
            try:
                data = os.read(master.fd, 65536)
            except OSError:  # EIO: no slave open right now
                time.sleep(0.01)
                continue
            try:
                self._serve_bytes(lines, data, master, own)
            except OSError:
                log.exception("%s: cannot write to the pty", self.name)
