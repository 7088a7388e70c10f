"""The HiSLIP server (hil.emulator.hislip) through the unmodified pyvisa-py: ``::INSTR``
resources, the status byte (``read_stb``), triggers, device clear, service requests, locks.

pyvisa-py 0.8.1's HiSLIP session has no ``assert_trigger`` and no events (``wait_on_event``):
the trigger goes through its HiSLIP client's own ``trigger()`` (the same Trigger message a later
``assert_trigger`` sends), and service requests are read off the asynchronous channel with its
protocol classes. Its ``clear()`` reads the acknowledgement off the synchronous channel without
draining a reply already sent, so the pending reply a clear discards here is one the instrument
is still computing (as IEEE 488.2's dcas discards the output queue).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyvisa.resources import MessageBasedResource
from pyvisa_py.protocols import hislip as client

from hil.emulator.clock import ManualClock
from hil.emulator.hislip import (
    ERROR,
    FATAL_ERROR,
    HEADER,
    HislipServer,
)
from hil.emulator.instruments import Mainframe8164B, PowerMeterN7744A, QontrolQ8iv
from hil.emulator.world import BenchWorld
from hil.instruments.power_meters import N7744A_CHANNELS
from hil.visa import resource_manager

ESB, MAV, RQS = 0x20, 0x10, 0x40
PRINTABLE = st.characters(min_codepoint=32, max_codepoint=126)


def eventually(condition: Callable[[], object], timeout_s: float = 5.0) -> bool:
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


class Laser(Mainframe8164B):
    """The 8164B emulation, its triggers counted."""

    triggered = 0

    def trigger(self) -> None:
        self.triggered += 1


class Scripted:
    """A line handler: ``SLOW?`` answers once released, ``BIG? n`` with n bytes, ``ECHO x``
    with x; anything else with ``SCRIPTED``."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def handle(self, line: str) -> str | None:
        if line == "SLOW?":
            self.release.wait(5.0)
            return "LATE"
        if line.startswith("BIG? "):
            return "x" * int(line[5:])
        if line.startswith("ECHO "):
            return line[5:]
        return None if line == "NOTHING" else "SCRIPTED"


@pytest.fixture
def world() -> BenchWorld:
    return BenchWorld()


@pytest.fixture
def laser(world: BenchWorld) -> Iterator[tuple[Laser, HislipServer]]:
    instrument = Laser(world)
    with HislipServer(instrument, name="laser-hislip") as server:
        yield instrument, server


def open_instr(server: HislipServer) -> MessageBasedResource:
    return resource_manager().open_resource(
        server.resource, read_termination="\n", write_termination="\n", timeout=5000
    )


def hislip_client(server: HislipServer) -> client.Instrument:
    """pyvisa-py's own HiSLIP client (its protocol layer, unmodified) on ``server``."""
    return client.Instrument(server.host, timeout=5.0, port=server.port)


def test_a_query_through_pyvisa_py(laser: tuple[Laser, HislipServer]) -> None:
    instrument, server = laser
    assert server.resource == f"TCPIP0::127.0.0.1::hislip0,{server.port}::INSTR"
    inst = open_instr(server)
    try:
        assert inst.query("*IDN?") == instrument.idn
        inst.write(":SOUR0:WAV 1520NM")  # a command without reply, then its state read back
        assert float(inst.query(":SOUR0:WAV?")) == pytest.approx(1520e-9)
        assert inst.query("SYST:ERR?") == '0,"No error"'
        assert server.clients == 1
    finally:
        inst.close()
    assert eventually(lambda: server.clients == 0)


def test_read_stb_sets_mav_while_a_reply_is_unread(laser: tuple[Laser, HislipServer]) -> None:
    instrument, server = laser
    inst = open_instr(server)
    try:
        assert inst.read_stb() == 0
        inst.write("*IDN?")
        assert eventually(lambda: inst.read_stb() & MAV)  # a serial-poll loop, as labs write
        assert inst.read() == instrument.idn
        assert inst.read_stb() & MAV == 0
        assert instrument.errors.codes() == []  # reading the status byte queued nothing
    finally:
        inst.close()


def test_read_stb_shows_an_enabled_event(laser: tuple[Laser, HislipServer]) -> None:
    _, server = laser
    inst = open_instr(server)
    try:
        inst.write("*CLS;*ESE 1;*OPC")  # the OPC event enabled into ESB; *SRE 0: no request
        assert eventually(lambda: inst.read_stb() & ESB)
        assert inst.read_stb() & (RQS | MAV) == 0
        assert int(inst.query("*ESR?")) & 1  # reading the register clears it, and ESB
        assert inst.read_stb() & ESB == 0
        inst.write("*ESE 0")
    finally:
        inst.close()


def test_a_trigger_runs_the_instruments_trg(laser: tuple[Laser, HislipServer]) -> None:
    instrument, server = laser
    inst = open_instr(server)
    try:
        session = inst.visalib.sessions[inst.session]
        try:
            inst.assert_trigger()  # pyvisa-py after 0.8.1
        except NotImplementedError:  # 0.8.1: its HiSLIP client sends the Trigger message
            session.interface.trigger()
        assert inst.query("*OPC?") == "1"  # after the trigger, in order
        assert instrument.triggered == 1
        inst.write("*TRG")  # the same through the command
        assert inst.query("*OPC?") == "1" and instrument.triggered == 2
        assert instrument.errors.codes() == []
    finally:
        inst.close()


@pytest.mark.parametrize("model", ["8164B", "N7744A"])
def test_every_model_accepts_a_trigger(world: BenchWorld, model: str) -> None:
    """A model that has nothing to trigger still accepts ``*TRG``."""
    handler = {
        "8164B": lambda: Mainframe8164B(world),
        "N7744A": lambda: PowerMeterN7744A(world, N7744A_CHANNELS["N7744A"], "MY1", "N7744A"),
    }[model]()
    with HislipServer(handler) as server:
        c = hislip_client(server)
        try:
            c.trigger()
            c.send(b"*IDN?\n")
            assert c.receive(4096).decode() == f"{handler.idn}\n"
        finally:
            c.close()
    assert handler.errors.codes() == []


def test_clear_discards_the_reply_being_computed() -> None:
    handler = Scripted()
    with HislipServer(handler) as server:
        inst = open_instr(server)
        try:
            inst.write("SLOW?")
            threading.Timer(0.3, handler.release.set).start()  # the reply comes mid-clear
            inst.clear()
            assert inst.query("ANY?") == "SCRIPTED"  # not the discarded LATE
        finally:
            inst.close()


def test_clear_cancels_a_pending_opc() -> None:
    """IEEE 488.2 dcas: the device leaves OCIS armed by ``*OPC`` (the OPC bit never comes)."""
    world = BenchWorld(clock=ManualClock())  # time stands still but for waits
    assert QontrolQ8iv(world).handle("I0=7") == "OK"  # a heater write settling in the future
    with HislipServer(Laser(world)) as server:
        _clear_cancels_a_pending_opc(world, server)


def _clear_cancels_a_pending_opc(world: BenchWorld, server: HislipServer) -> None:
    inst = open_instr(server)
    try:
        inst.write("*CLS;*OPC")
        assert inst.query("*ESR?") == "0"  # not settled yet
        inst.clear()
        world.wait_settled()
        assert inst.query("*ESR?") == "0"
        inst.write("*OPC")  # without the clear, the bit comes once settled
        assert inst.query("*ESR?") == "1"
    finally:
        inst.close()


def test_a_service_request_on_an_enabled_event(laser: tuple[Laser, HislipServer]) -> None:
    _, server = laser
    c = hislip_client(server)
    try:
        c.send(b"*CLS;*SRE 32;*ESE 1;*OPC\n")
        request = client.AsyncServiceRequest(c._async)  # unsolicited, on the async channel
        assert request.server_status & (RQS | ESB) == RQS | ESB
        assert c.async_status_query() & (RQS | ESB) == RQS | ESB  # RQS until polled
        assert c.async_status_query() & (RQS | ESB) == ESB  # still a reason, no new request
        c.send(b"*ESR?\n")
        assert c.receive(100) == b"1\n"  # the event read: the summary falls
        c.send(b"*OPC\n")  # a new reason for service: a new request
        assert client.AsyncServiceRequest(c._async).server_status & RQS
        c.send(b"*SRE 0;*ESE 0;*CLS\n")
    finally:
        c.close()


def test_the_interrupted_condition_is_counted(laser: tuple[Laser, HislipServer]) -> None:
    _, server = laser
    inst = open_instr(server)
    try:
        inst.write("*IDN?")  # its reply left unread
        inst.write("*OPT?")
        assert eventually(lambda: server.interrupted == 1)
    finally:
        inst.close()


def test_a_lock_holds_other_sessions_off(laser: tuple[Laser, HislipServer]) -> None:
    _, server = laser
    a, b = hislip_client(server), hislip_client(server)
    try:
        assert a.async_lock_request(1.0) == "success"
        assert a.async_lock_info() == 1
        assert b.async_lock_request(0.05) == "failure"  # timed out
        b.timeout = 0.3
        b.send(b"*OPC?\n")
        with pytest.raises(socket.timeout):
            b.receive(10)  # held until a releases
        assert a.async_lock_release() == "success"
        b.timeout = 5.0
        assert b.receive(10) == b"1\n"
    finally:
        a.close()
        b.close()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.integers(256, 4096),
    text=st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=3000),
)
def test_a_reply_crosses_whole_at_any_message_size(size: int, text: str) -> None:
    """A reply over the client's maximum message size comes as Data messages and a DataEnd."""
    with HislipServer(Scripted()) as server:
        c = hislip_client(server)
        try:
            c.async_maximum_message_size(size)
            c.send(f"ECHO {text}\n".encode())
            assert c.receive(8192) == f"{text}\n".encode()
        finally:
            c.close()


def raw(server: HislipServer) -> socket.socket:
    return socket.create_connection((server.host, server.port), timeout=5.0)


def message(sock: socket.socket) -> tuple[int, int, bytes]:
    """The next message's type, control code and payload."""
    _, kind, control, _, length = HEADER.unpack(sock.recv(HEADER.size, socket.MSG_WAITALL))
    return kind, control, sock.recv(length, socket.MSG_WAITALL) if length else b""


def test_a_bad_header_is_fatal_and_closes() -> None:
    with HislipServer(Scripted()) as server, raw(server) as sock:
        sock.sendall(b"XX" + bytes(14))
        kind, code, _ = message(sock)
        assert (kind, code) == (FATAL_ERROR, 1)
        assert sock.recv(1) == b""


def test_data_before_the_async_channel_is_fatal() -> None:
    with HislipServer(Scripted()) as server, raw(server) as sock:
        sock.sendall(HEADER.pack(b"HS", 0, 0, 0x0100_0000, 7) + b"hislip0")
        kind, _, _ = message(sock)
        assert kind == 1  # InitializeResponse
        sock.sendall(HEADER.pack(b"HS", 7, 0, 0xFFFF_FF00, 6) + b"*IDN?\n")
        assert message(sock)[:2] == (FATAL_ERROR, 2)


def test_an_unknown_sub_address_or_first_message_is_refused() -> None:
    with HislipServer(Scripted()) as server:
        with raw(server) as sock:
            sock.sendall(HEADER.pack(b"HS", 0, 0, 0x0100_0000, 7) + b"inst9xx")
            assert message(sock)[:2] == (FATAL_ERROR, 3)
        with raw(server) as sock:
            sock.sendall(HEADER.pack(b"HS", 7, 0, 0, 0))  # DataEnd first
            assert message(sock)[:2] == (FATAL_ERROR, 3)


def test_an_unknown_message_is_an_error_and_the_session_goes_on() -> None:
    with HislipServer(Scripted()) as server:
        c = hislip_client(server)
        try:
            c._sync.sendall(HEADER.pack(b"HS", 26, 0, 0, 0))  # GetDescriptors: revision 2.0
            c._sync.sendall(HEADER.pack(b"HS", 200, 0, 0, 0))  # vendor-specific
            assert client.Error(c._sync).error_code == "Unrecognized Message Type"
            assert client.Error(c._sync).error_code == "Unrecognized Vendor Defined Message"
            c.send(b"ANY?\n")
            assert c.receive(100) == b"SCRIPTED\n"
        finally:
            c.close()
    assert ERROR == 3 and struct.calcsize("!2sBBIQ") == HEADER.size


def test_stop_closes_every_session_and_start_serves_again(
    laser: tuple[Laser, HislipServer],
) -> None:
    instrument, server = laser
    c = hislip_client(server)
    server.stop()
    with pytest.raises((RuntimeError, OSError)):
        c.send(b"*IDN?\n")
        c.receive(100)
    c.close()
    server.start()
    inst = open_instr(server)
    try:
        assert inst.query("*IDN?") == instrument.idn
    finally:
        inst.close()
