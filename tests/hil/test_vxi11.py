"""The VXI-11 server (:mod:`hil.emulator.vxi11`) on the wire: bad calls get the RPC or device
error the specifications give and leave the server serving; pyvisa-py's own checks are in
tests/hil/clients_hislip.py."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

import pytest

from hil.emulator.instruments import Mainframe8164B
from hil.emulator.vxi11 import CORE_PROG, INVALID_LINK, OK, Vxi11Server
from hil.emulator.world import BenchWorld


@pytest.fixture(scope="module")
def server() -> Iterator[Vxi11Server]:
    with Vxi11Server(Mainframe8164B(BenchWorld(seed=3))) as s:
        yield s


def _call(sock: socket.socket, proc: int, args: bytes, prog: int = CORE_PROG) -> bytes:
    """One RPC call (xid 7, null credentials); the reply's body after its accept status."""
    body = struct.pack(">IIIIIIIIII", 7, 0, 2, prog, 1, proc, 0, 0, 0, 0) + args
    sock.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
    (mark,) = struct.unpack(">I", sock.recv(4))
    reply = b""
    while len(reply) < mark & 0x7FFFFFFF:
        reply += sock.recv(65536)
    xid, kind, accepted = struct.unpack_from(">III", reply)
    assert (xid, kind, accepted) == (7, 1, 0)
    return reply[20:]  # verifier (flavour, empty body) skipped: accept status, results


def _connect(server: Vxi11Server) -> socket.socket:
    return socket.create_connection((server.host, server.port), timeout=5)


def test_an_unknown_program_or_link_is_refused_and_the_connection_serves_on(server) -> None:
    with _connect(server) as sock:
        assert struct.unpack(">I", _call(sock, 10, b"", prog=0x123456)) == (1,)  # unavailable
        assert struct.unpack(">I", _call(sock, 99, b"")) == (3,)  # no such procedure
        readstb = struct.pack(">iiII", 42, 0, 0, 0)  # link 42 was never created
        assert struct.unpack(">Iii", _call(sock, 13, readstb))[1] == INVALID_LINK
        link = _call(sock, 10, struct.pack(">iII", 1, 0, 0) + struct.pack(">I", 5) + b"inst0\0\0\0")
        status, error, lid = struct.unpack_from(">Iii", link)
        assert (status, error) == (0, OK) and lid > 0
        write = struct.pack(">iIIi", lid, 1000, 0, 8) + struct.pack(">I", 6) + b"*IDN?\n\0\0"
        assert struct.unpack(">IiI", _call(sock, 11, write)) == (0, OK, 6)


def test_garbage_drops_only_its_own_connection(server) -> None:
    with _connect(server) as sock:
        sock.sendall(struct.pack(">I", 0x80000000 | 3) + b"abc")  # not even an RPC header
        assert sock.recv(4) == b""  # closed
    with _connect(server) as sock:  # the server serves the next one
        readstb = struct.pack(">iiII", 42, 0, 0, 0)
        assert struct.unpack(">Iii", _call(sock, 13, readstb))[:2] == (0, INVALID_LINK)
