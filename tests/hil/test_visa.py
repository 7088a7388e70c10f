"""The VISA session (hil.visa) against the line servers (hil.emulator.server).

Everything goes through real pyvisa + pyvisa-py over real loopback TCP sockets and a real pty;
each server fault is exercised against a Session.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from importlib.metadata import entry_points

import numpy as np
import pytest

from firmware.sdk import Switch, SwitchError
from hil.emulator.bench import SwitchFirmware
from hil.emulator.server import MAX_LINE, Faults, PtyServer, TcpServer
from hil.errors import ConnectionLostError, InstrumentError, InstrumentTimeoutError
from hil.visa import Session, open_transport, resource_lock

BLOCK = np.array([1.5, -2.25, 3e-3, np.frombuffer(b"\n\n\n\n", "<f4")[0]], dtype="<f4")


class Echo:
    """Answers every line with a ``?`` by naming it; records every line it gets."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def handle(self, line: str) -> str | bytes | None:
        self.lines.append(line)
        if line == "BLOCK?":  # its data holds "\n" bytes
            data = BLOCK.tobytes()
            return b"#2%02d" % len(data) + data
        if line == "SLOW?":
            time.sleep(0.3)
        if line == "BOOM?":
            raise RuntimeError("emulation bug")
        return f"R:{line}" if "?" in line else None


@pytest.fixture
def echo() -> Echo:
    return Echo()


@pytest.fixture
def server(echo: Echo):
    with TcpServer(echo, name="echo") as srv:
        yield srv


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _in_threads(work: Callable[[int], None], n: int) -> list[BaseException]:
    """Run ``work(k)`` for k < n in threads; the exceptions they raised."""
    errors: list[BaseException] = []

    def guarded(k: int) -> None:
        try:
            work(k)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _socket_of(session: Session) -> socket.socket:
    inst = session.instrument
    return inst.visalib.sessions[inst.session].interface


# ---- settings, NODELAY, terminations ---------------------------------------------------------
def test_query_applies_settings_and_nodelay(server: TcpServer) -> None:
    with Session(server.resource, timeout_s=0.7) as s:
        assert s.query("*IDN?") == "R:*IDN?"
        assert s.instrument.timeout == pytest.approx(700)
        assert s.instrument.read_termination == "\n"
        assert _socket_of(s).getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        s.write("SET 1")
        assert s.query("A?") == "R:A?"


def test_write_then_query_has_no_nagle_stall(server: TcpServer) -> None:
    # With Nagle on, the query after an unanswered write waits for a delayed ACK (~40 ms).
    with Session(server.resource) as s:
        s.query("warm?")
        t0 = time.perf_counter()
        for i in range(10):
            s.write(f"SET {i}")
            assert s.query(f"Q{i}?") == f"R:Q{i}?"
        assert time.perf_counter() - t0 < 0.15


def test_other_terminations(echo: Echo) -> None:
    with (
        TcpServer(echo, read_termination="\r", write_termination="\r\n") as srv,
        Session(srv.resource, read_termination="\r\n", write_termination="\r") as s,
    ):
        assert s.query("X?") == "R:X?"
        assert s.query("Y?") == "R:Y?"  # nothing of the first reply was left behind


# ---- threads ---------------------------------------------------------------------------------
def test_threads_never_get_each_others_replies(server: TcpServer) -> None:
    shared = Session(server.resource)
    own = Session(server.resource.replace("TCPIP0::", "TCPIP::"))  # same resource, other form
    # sessions on one serial line share a lock (one per resource, in canonical form); a
    # socket session has a connection and a lock of its own
    assert resource_lock(shared.resource) is resource_lock(own.resource)
    assert shared._lock is not own._lock
    wrong: list[tuple[str, str]] = []

    def work(k: int) -> None:
        s = own if k == 7 else shared
        for i in range(250):
            q = f"T{k}:{i}?"
            if (reply := s.query(q)) != f"R:{q}":
                wrong.append((q, reply))

    assert _in_threads(work, 8) == []
    shared.close()
    own.close()
    assert wrong == []
    assert sum(line.startswith("T") for line in server.handler.lines) == 8 * 250


# ---- binary blocks ---------------------------------------------------------------------------
def test_binary_block_of_float32(server: TcpServer) -> None:
    with Session(server.resource) as s:
        values = s.query_binary_floats("BLOCK?")
        np.testing.assert_array_equal(values, BLOCK)
        assert s.query("after?") == "R:after?"  # the block's terminator was consumed
        with pytest.raises(InstrumentError, match="expected a binary block"):
            s.query_binary_floats("TEXT?")


# ---- timeouts and stale replies --------------------------------------------------------------
def test_late_reply_is_not_taken_for_the_next_answer(server: TcpServer) -> None:
    server.faults = Faults(no_reply=1, late_reply_s=0.3)
    with Session(server.resource, timeout_s=0.2) as s:
        with pytest.raises(InstrumentTimeoutError, match=server.resource):
            s.query("A?")
        assert s.query("B?") == "R:B?"  # "R:A?" is sent at 0.3 s, after B was sent
        assert s.query("C?") == "R:C?"
        server.faults = Faults(latency_s=0.3)  # a slow reply rather than a swallowed one
        with pytest.raises(InstrumentTimeoutError):
            s.query("D?")
        time.sleep(0.15)  # "R:D?" has been sent before the next query
        server.faults = Faults()
        assert s.query("E?") == "R:E?"
        server.faults = Faults(no_reply=1)  # never sent at all
        with pytest.raises(InstrumentTimeoutError):
            s.query("F?")
        assert s.query("G?") == "R:G?"


def test_latency_fault(server: TcpServer) -> None:
    server.faults = Faults(latency_s=0.06)
    with Session(server.resource, timeout_s=0.5) as s:
        t0 = time.perf_counter()
        assert s.query("L?") == "R:L?"
        assert time.perf_counter() - t0 >= 0.06
    with Session(server.resource, timeout_s=0.03) as s:
        with pytest.raises(InstrumentTimeoutError):
            s.query("L1?")
        server.faults = Faults()
        assert s.query("L2?") == "R:L2?"


def test_split_and_slow_replies_are_reassembled(server: TcpServer) -> None:
    server.faults = Faults(split_reply=True, slow_reply_s=0.02)
    with Session(server.resource, timeout_s=0.5) as s:
        assert s.query("SPLIT?") == "R:SPLIT?"
        np.testing.assert_array_equal(s.query_binary_floats("BLOCK?"), BLOCK)
        server.faults = Faults(slow_reply_s=0.002)  # trickles out 4 bytes at a time
        assert s.query("TRICKLE-A-LONGER-LINE?") == "R:TRICKLE-A-LONGER-LINE?"
        server.faults = Faults(slow_reply_s=0.05)  # 3 pieces over 0.1 s: past the timeout
        s.timeout_s = 0.08
        with pytest.raises(InstrumentTimeoutError):
            s.query("TOO-SLOW?")  # part of it arrived: the rest must not shift B
        server.faults = Faults()
        s.timeout_s = 0.5
        assert s.query("B?") == "R:B?"


# ---- dropped connections ---------------------------------------------------------------------
def test_drop_after_recovers_transparently(server: TcpServer, echo: Echo) -> None:
    server.faults = Faults(drop_after=3)
    with Session(server.resource, backoff_s=0.01) as s:
        for i in range(8):
            assert s.query(f"D{i}?") == f"R:D{i}?"
        assert server.accepted == 2  # dropped once, reconnected once
        assert _socket_of(s).getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    assert [line for line in echo.lines if line.startswith("D")] == [f"D{i}?" for i in range(8)]


def test_server_stopped_mid_query_is_a_clear_error(server: TcpServer) -> None:
    s = Session(server.resource, timeout_s=2.0, retries=2, backoff_s=0.02)
    killer = threading.Timer(0.1, server.stop)
    killer.start()
    t0 = time.perf_counter()
    with pytest.raises(ConnectionLostError, match=server.resource) as err:
        s.query("SLOW?")  # the handler takes 0.3 s
    assert time.perf_counter() - t0 < 1.0  # seen as EOF at once, not as a 2 s timeout
    assert "SLOW?" in str(err.value)
    s.close()
    killer.join()


def test_query_cut_off_by_a_restart_is_sent_again(server: TcpServer, echo: Echo) -> None:
    s = Session(server.resource, timeout_s=2.0, retries=4, backoff_s=0.05)
    restart = threading.Timer(0.1, lambda: (server.stop(), server.start()))
    restart.start()  # the server is down from 0.1 s until SLOW? finishes at 0.3 s
    assert s.query("SLOW?") == "R:SLOW?"
    assert echo.lines.count("SLOW?") == 2  # a query is safe to send again
    restart.join()
    s.close()


def test_session_recovers_when_the_server_comes_back(server: TcpServer, echo: Echo) -> None:
    s = Session(server.resource, retries=2, backoff_s=0.01)
    assert s.query("A?") == "R:A?"
    port = server.port
    server.stop()
    with pytest.raises(ConnectionLostError, match="gave up after 2 reconnect attempts"):
        s.query("B?")
    server.start()
    assert server.port == port
    assert s.query("C?") == "R:C?"
    server.stop()
    server.start()  # killed and back between two commands: the write is sent once, anyway
    s.write("SET 5")
    assert s.query("D?") == "R:D?"
    assert echo.lines.count("SET 5") == 1
    assert "B?" not in echo.lines
    s.close()


def test_max_clients_refuses_a_second_session(server: TcpServer) -> None:
    server.faults = Faults(max_clients=1)
    first = Session(server.resource)
    assert first.query("one?") == "R:one?"
    with pytest.raises(ConnectionLostError, match=server.resource):  # TCP connects, then EOF
        Session(server.resource, retries=2, backoff_s=0.01).query("two?")
    assert server.clients == 1
    assert first.query("one again?") == "R:one again?"
    first.close()
    with Session(server.resource, backoff_s=0.01) as second:  # the slot is free
        assert second.query("two?") == "R:two?"


def test_every_failure_is_an_instrument_error(echo: Echo) -> None:
    resource = f"TCPIP0::127.0.0.1::{_free_port()}::SOCKET"  # nothing listens there
    with pytest.raises(ConnectionLostError, match=resource):
        Session(resource, retries=2, backoff_s=0.01)
    with pytest.raises(InstrumentError, match="not a VISA resource"):
        Session("NOPE::1")
    with pytest.raises(InstrumentError, match="nosuch"):
        Session(resource, backend="@nosuch")
    with TcpServer(echo) as srv:
        s = Session(srv.resource, timeout_s=0.1)
        with pytest.raises(InstrumentTimeoutError, match=r"within 0\.1 s"):
            s.query("no reply")  # a line the instrument does not answer: no hang
        s.close()
        with pytest.raises(InstrumentError, match="closed"):
            s.query("A?")


# ---- the server itself -----------------------------------------------------------------------
def test_server_survives_garbage_long_lines_and_handler_bugs(server: TcpServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=2) as raw:
        raw.sendall(b"\xff\xfeX?\n")
        assert raw.recv(100) == "R:\ufffd\ufffdX?\n".encode()
        raw.sendall(b"BOOM?\nQ?" + b"L" * (3 * MAX_LINE) + b"\nOK?\n")
        got = b""
        while not got.endswith(b"R:OK?\n"):
            got += raw.recv(1 << 20)
    assert got == b"R:Q?" + b"L" * (MAX_LINE - 2) + b"\nR:OK?\n"  # truncated; no BOOM? reply
    with Session(server.resource) as s:
        assert s.query("still?") == "R:still?"


# ---- the switch firmware end to end ----------------------------------------------------------
def test_switch_open_over_tcp_end_to_end() -> None:
    assert {"TCPIP", "ASRL"} <= {ep.name for ep in entry_points(group="pswitch.transports")}
    emulated = Switch.emulated(ports=8, seed=0)
    with TcpServer(SwitchFirmware(emulated.transport.controller), name="switch") as srv:
        with Switch.open(srv.resource) as sw:
            assert isinstance(sw.transport, Session)
            assert sw.ports == 8
            sw.connect([(0, 3), (1, 2)])
            assert sw.matching().pairs == ((0, 3), (1, 2))
            with pytest.raises(SwitchError) as err:
                sw.add(4, 3)  # 3 is lit
            assert err.value.code == -221
            with pytest.raises(SwitchError) as err:
                sw.ring_status(0)  # a failed query (no rings): an empty reply, then the queue
            assert err.value.code == -222
            assert sw.errors() == []
            heaters = sw.heaters().tolist()
        wrong: list[str] = []

        def work(k: int) -> None:
            with Switch.open(srv.resource) as mine:
                for _ in range(40):
                    if mine.matching().pairs != ((0, 3), (1, 2)):
                        wrong.append("matching")
                    if not mine.idn().startswith("PSWITCH,EMU-CLEMENTS-8"):
                        wrong.append("idn")
                    if mine.heaters().tolist() != heaters:
                        wrong.append("heaters")

        assert _in_threads(work, 4) == []
        assert wrong == []


def test_open_transport_is_a_session(server: TcpServer) -> None:
    s = open_transport(server.resource)
    assert (s.resource, s.timeout_s, s.backend) == (server.resource, 2.0, "@py")
    assert s.query("A?") == "R:A?"
    s.close()


# ---- the serial line -------------------------------------------------------------------------
class Heaters:
    """A tiny Qontrol-like driver: ``V<n>=<v>`` sets, ``V<n>?`` reads."""

    def __init__(self) -> None:
        self.volts: dict[str, str] = {}

    def handle(self, line: str) -> str | None:
        if "=" in line:
            name, value = line.split("=")
            self.volts[name] = value
            return "OK"
        return self.volts.get(line.rstrip("?"), "E01:0") if line.endswith("?") else None


def test_pty_round_trip_and_stale_reply() -> None:
    with PtyServer(Heaters(), name="qontrol") as srv:
        assert srv.resource == f"ASRL{srv.path}::INSTR"
        with Session(srv.resource, timeout_s=0.15) as s:
            assert s.query("V3=1.2") == "OK"
            assert s.query("V3?") == "1.2"
            srv.faults = Faults(no_reply=1, late_reply_s=0.2)
            with pytest.raises(InstrumentTimeoutError, match=srv.path):
                s.query("V3=2.5")
            srv.faults = Faults(latency_s=0.1)  # the late "OK" (0.2 s) would beat this reply
            assert s.query("V3?") == "2.5"
            srv.faults = Faults()
            assert s.query("V2=0.5") == "OK"
            assert s.query("V2?") == "0.5"
    with pytest.raises(ConnectionLostError, match="no-such-tty"):  # an unplugged adapter
        Session("ASRL/dev/no-such-tty::INSTR", retries=1)


def test_traffic_is_logged_at_debug_naming_the_resource(server, caplog) -> None:
    # on pyvisa's own logger (a child of it), where pyvisa.log_to_screen() looks
    with Session(server.resource) as s, caplog.at_level(logging.DEBUG, logger="pyvisa"):
        s.write("SET 1")
        reply = s.query("*IDN?")
    lines = [r.getMessage() for r in caplog.records if r.name == "pyvisa.hil.visa"]
    assert lines == [
        f"{server.resource} <- SET 1",
        f"{server.resource} <- *IDN?",
        f"{server.resource} -> {reply}",
    ]


def test_no_traffic_is_logged_above_debug(server, caplog) -> None:
    with Session(server.resource) as s, caplog.at_level(logging.INFO, logger="pyvisa"):
        s.query("*IDN?")
    assert [r for r in caplog.records if r.name == "pyvisa.hil.visa"] == []
