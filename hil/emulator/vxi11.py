"""An emulated instrument served over VXI-11 (VXI-11 rev. 1.0, 1995: the core channel, B.6) as a
``TCPIP0::<host>,<port>::inst0::INSTR`` resource, which pyvisa-py opens without a portmapper.

Written by hand: no maintained server-side VXI-11 library exists on PyPI. The wire: ONC RPC
version 2 (RFC 5531) calls over TCP with record marking, arguments in XDR (RFC 4506). The core
channel's procedures: ``create_link`` (the link's ``max_recv_size`` is :data:`MAX_RECV`; no
abort channel), ``device_write`` (a message ends with the END flag: its lines then run),
``device_read`` (the replies the message left; ``io_timeout`` when there are none),
``device_readstb`` (the status byte, MAV while a reply is unread:
:class:`~hil.emulator.ieee488.Device`),
``device_trigger``, ``device_clear``, ``device_remote``/``device_local`` (accepted),
``device_lock``/``device_unlock`` (one link holds the lock; the others' operations wait up to
their ``lock_timeout``, then error 11), ``destroy_link``. The interrupt channel
(``create_intr_chan``, service requests) and ``device_docmd`` answer 8, operation not
supported: pyvisa-py 0.8.1 opens no interrupt channel (it has no events), which is why the
HiSLIP server (:mod:`hil.emulator.hislip`) serves service requests instead.
"""

from __future__ import annotations

import itertools
import os
import socket
import struct
import threading
import time

from hil.emulator.ieee488 import Device
from hil.emulator.server import MAX_LINE, LineHandler, Served, accepted, listening

#: The core channel's RPC program and version (VXI-11 B.6).
CORE_PROG, CORE_VERS = 0x0607AF, 1
#: Largest data a ``device_write`` takes at once, bytes (the link's ``maxRecvSize``).
MAX_RECV = 1 << 20
#: Device error codes (VXI-11 B.5.2).
OK, SYNTAX, INVALID_LINK, NOT_SUPPORTED, LOCKED, NO_LOCK, IO_TIMEOUT = 0, 1, 4, 8, 11, 12, 15
#: ``device_write`` flag: this data ends the message; ``device_lock`` flag: wait for the lock.
END_FLAG, WAIT_LOCK = 8, 1
#: ``device_read`` reason: the reply is complete.
REASON_END = 4


class _Xdr:
    """XDR decoding of one call's arguments (RFC 4506: big-endian 4-byte units)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def uint(self) -> int:
        (value,) = struct.unpack_from(">I", self.data, self.at)
        self.at += 4
        return value

    def int(self) -> int:
        (value,) = struct.unpack_from(">i", self.data, self.at)
        self.at += 4
        return value

    def opaque(self) -> bytes:
        n = self.uint()
        value = self.data[self.at : self.at + n]
        if len(value) != n:
            raise EOFError("opaque data cut short")
        self.at += (n + 3) & ~3
        return value


def _opaque(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data + b"\0" * (-len(data) % 4)


class _Link:
    def __init__(self) -> None:
        self.message = bytearray()  # what device_write sent, until its END
        self.reply = bytearray()  # what device_read has not taken yet


class Vxi11Server(Served):
    """``handler`` served over VXI-11 on ``host`` (see the module docstring). ``lock``: the
    instrument's lock, shared with its other servers. ``port=0`` picks a free port."""

    def __init__(
        self,
        handler: LineHandler,
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "",
        lock: threading.Lock | None = None,
    ) -> None:
        self.name = name or f"{type(handler).__name__}-vxi11"
        self.device = Device(handler, lock, self.name)
        self.host, self.port = host, port
        self._links: dict[int, _Link] = {}
        self._ids = itertools.count(1)
        self._owner: int | None = None  # the link that holds the device lock
        self._state = threading.Condition()
        self._listener: socket.socket | None = None
        self._wake_r = self._wake_w = -1
        self._threads: list[threading.Thread] = []

    @property
    def handler(self) -> LineHandler:
        return self.device.handler

    @property
    def resource(self) -> str:
        """The VISA resource string of this instrument."""
        return f"TCPIP0::{self.host},{self.port}::inst0::INSTR"

    def start(self) -> None:
        if self._listener is not None:
            return
        listener = listening(self.host, self.port)
        self.port, self._listener = listener.getsockname()[1], listener
        self._wake_r, self._wake_w = os.pipe()
        self._spawn(self._accept_loop, listener, self._wake_r)

    def stop(self) -> None:
        if self._listener is None:
            return
        os.write(self._wake_w, b"x")
        self._listener.close()
        for thread in self._threads:
            thread.join(timeout=2.0)
        os.close(self._wake_r)
        os.close(self._wake_w)
        self._listener, self._threads = None, []
        with self._state:
            self._links.clear()
            self._owner = None
            self._state.notify_all()

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=self.name, daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _accept_loop(self, listener: socket.socket, wake: int) -> None:
        for sock in accepted(listener, wake):
            self._spawn(self._serve, sock)

    # ---- one connection: RPC records in, replies out ----------------------------------------
    def _serve(self, sock: socket.socket) -> None:
        mine: set[int] = set()
        try:
            with sock:
                while (record := _receive(sock)) is not None:
                    sock.sendall(_record(self._call(record, mine)))
        except (OSError, EOFError, struct.error):
            pass  # the client went away or sent garbage: drop the connection
        finally:
            with self._state:
                for lid in mine:
                    self._links.pop(lid, None)
                    if self._owner == lid:
                        self._owner = None
                self._state.notify_all()

    def _call(self, record: bytes, mine: set[int]) -> bytes:
        args = _Xdr(record)
        xid, kind, rpc_version = args.uint(), args.uint(), args.uint()
        prog, vers, proc = args.uint(), args.uint(), args.uint()
        for _ in range(2):  # credentials and verifier: flavour and body, not checked
            args.uint()
            args.opaque()
        head = struct.pack(">IIII", xid, 1, 0, 0) + _opaque(b"")  # a reply, accepted, no auth
        if kind != 0 or rpc_version != 2:
            return struct.pack(">IIIIII", xid, 1, 1, 0, 2, 2)  # denied: RPC version mismatch
        if (prog, vers) != (CORE_PROG, CORE_VERS):
            return head + struct.pack(">I", 1)  # program unavailable
        procedure = _PROCEDURES.get(proc)
        if procedure is None:
            return head + struct.pack(">I", 3)  # procedure unavailable
        return head + struct.pack(">I", 0) + procedure(self, args, mine)

    # ---- the core channel's procedures (B.6) --------------------------------------------------
    def _create_link(self, args: _Xdr, mine: set[int]) -> bytes:
        args.int()  # the client's id
        lock_device, lock_timeout_ms = args.uint(), args.uint()
        args.opaque()  # the device name: one device here
        lid = next(self._ids)
        with self._state:
            self._links[lid] = _Link()
        mine.add(lid)
        error = self._take_lock(lid, lock_timeout_ms) if lock_device else OK
        return struct.pack(">iiII", error, lid, 0, MAX_RECV)

    def _write(self, args: _Xdr, mine: set[int]) -> bytes:
        lid = args.int()
        args.uint()  # io_timeout: a write never waits for the device
        lock_timeout_ms, flags, data = args.uint(), args.int(), args.opaque()
        error = self._access(lid, mine, lock_timeout_ms)
        if error:
            return struct.pack(">iI", error, 0)
        link = self._links[lid]
        link.message += data
        if len(link.message) > MAX_LINE:
            link.message.clear()
            return struct.pack(">iI", 17, 0)  # I/O error: a message longer than any line
        if flags & END_FLAG:
            message, link.message = bytes(link.message), bytearray()
            text = message.decode("utf-8", errors="replace")
            for line in text.replace("\r\n", "\n").split("\n"):
                if line.strip():
                    reply = self.device.handle(line)
                    if reply is not None:
                        link.reply += reply if isinstance(reply, bytes) else (reply + "\n").encode()
        return struct.pack(">iI", OK, len(data))

    def _read(self, args: _Xdr, mine: set[int]) -> bytes:
        lid, size, io_timeout_ms, lock_timeout_ms = (
            args.int(),
            args.uint(),
            args.uint(),
            args.uint(),
        )
        args.int()  # flags: the reply ends at its END, whatever the termination character
        args.int()
        error = self._access(lid, mine, lock_timeout_ms)
        if error:
            return struct.pack(">ii", error, 0) + _opaque(b"")
        link = self._links[lid]
        if not link.reply:  # every line has run: nothing more will come
            time.sleep(min(io_timeout_ms, 1000) / 1e3)
            return struct.pack(">ii", IO_TIMEOUT, 0) + _opaque(b"")
        data, link.reply = bytes(link.reply[:size]), link.reply[size:]
        return struct.pack(">ii", OK, 0 if link.reply else REASON_END) + _opaque(data)

    def _generic(self, args: _Xdr, mine: set[int]) -> tuple[int, int]:
        """(link, error) of a call with Device_GenericParms (link, flags, lock and io timeout)."""
        lid, _, lock_timeout_ms = args.int(), args.int(), args.uint()
        args.uint()
        return lid, self._access(lid, mine, lock_timeout_ms)

    def _readstb(self, args: _Xdr, mine: set[int]) -> bytes:
        lid, error = self._generic(args, mine)
        stb = 0 if error else self.device.status_byte(bool(self._links[lid].reply))
        return struct.pack(">iI", error, stb)

    def _trigger(self, args: _Xdr, mine: set[int]) -> bytes:
        _, error = self._generic(args, mine)
        if not error:
            self.device.trigger()
        return struct.pack(">i", error)

    def _clear(self, args: _Xdr, mine: set[int]) -> bytes:
        lid, error = self._generic(args, mine)
        if not error:
            self._links[lid] = _Link()
            self.device.clear()
        return struct.pack(">i", error)

    def _remote_local(self, args: _Xdr, mine: set[int]) -> bytes:
        return struct.pack(">i", self._generic(args, mine)[1])

    def _lock(self, args: _Xdr, mine: set[int]) -> bytes:
        lid, flags, lock_timeout_ms = args.int(), args.int(), args.uint()
        if lid not in mine:
            return struct.pack(">i", INVALID_LINK)
        return struct.pack(">i", self._take_lock(lid, lock_timeout_ms if flags & WAIT_LOCK else 0))

    def _unlock(self, args: _Xdr, mine: set[int]) -> bytes:
        lid = args.int()
        with self._state:
            if lid not in mine:
                return struct.pack(">i", INVALID_LINK)
            if self._owner != lid:
                return struct.pack(">i", NO_LOCK)
            self._owner = None
            self._state.notify_all()
        return struct.pack(">i", OK)

    def _destroy_link(self, args: _Xdr, mine: set[int]) -> bytes:
        lid = args.int()
        with self._state:
            if lid not in mine:
                return struct.pack(">i", INVALID_LINK)
            mine.discard(lid)
            self._links.pop(lid, None)
            if self._owner == lid:
                self._owner = None
                self._state.notify_all()
        return struct.pack(">i", OK)

    def _not_supported(self, args: _Xdr, mine: set[int]) -> bytes:
        return struct.pack(">i", NOT_SUPPORTED)

    # ---- the lock --------------------------------------------------------------------------
    def _take_lock(self, lid: int, timeout_ms: int) -> int:
        with self._state:
            free = self._state.wait_for(lambda: self._owner in (None, lid), timeout_ms / 1e3)
            if not free:
                return LOCKED
            self._owner = lid
            return OK

    def _access(self, lid: int, mine: set[int], timeout_ms: int) -> int:
        """OK when link ``lid`` (of this connection) may use the device now or within
        ``timeout_ms``; else the error."""
        with self._state:
            if lid not in mine or lid not in self._links:
                return INVALID_LINK
            free = self._state.wait_for(lambda: self._owner in (None, lid), timeout_ms / 1e3)
            return OK if free else LOCKED


_PROCEDURES = {
    10: Vxi11Server._create_link,
    11: Vxi11Server._write,
    12: Vxi11Server._read,
    13: Vxi11Server._readstb,
    14: Vxi11Server._trigger,
    15: Vxi11Server._clear,
    16: Vxi11Server._remote_local,
    17: Vxi11Server._remote_local,
    18: Vxi11Server._lock,
    19: Vxi11Server._unlock,
    20: Vxi11Server._not_supported,  # device_enable_srq: no interrupt channel
    22: Vxi11Server._not_supported,  # device_docmd
    23: Vxi11Server._destroy_link,
    25: Vxi11Server._not_supported,  # create_intr_chan
    26: Vxi11Server._not_supported,  # destroy_intr_chan
}


def _receive(sock: socket.socket) -> bytes | None:
    """One RPC record (its fragments joined; RFC 5531 11), None at a clean end of stream."""
    data = bytearray()
    while True:
        head = _exact(sock, 4, allow_end=not data)
        if head is None:
            return None
        (mark,) = struct.unpack(">I", head)
        size = mark & 0x7FFFFFFF
        if len(data) + size > MAX_RECV + 4096:
            raise EOFError("record too long")
        data += _exact(sock, size) or b""
        if mark & 0x80000000:
            return bytes(data)


def _exact(sock: socket.socket, n: int, allow_end: bool = False) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            if allow_end and not buf:
                return None
            raise EOFError("connection closed mid-record")
        buf += chunk
    return bytes(buf)


def _record(reply: bytes) -> bytes:
    return struct.pack(">I", 0x80000000 | len(reply)) + reply
