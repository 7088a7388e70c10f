"""The switch firmware on a TCP line server, reached by SDK clients through pyvisa: every
connection is a session of its own (error queue, *OPC, overlapped operations), so clients
never get each other's errors and a calibration does not hold the others up."""

from __future__ import annotations

import errno
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from firmware.controller import Controller
from firmware.sdk import Switch, SwitchError
from hil.emulator.bench import SwitchFirmware
from hil.emulator.server import TcpServer

#: Long enough for a calibration of an 8-port chip on a busy machine, s.
PATIENT_S = 120.0


@pytest.fixture
def served() -> Iterator[tuple[TcpServer, Controller]]:
    controller = Switch.emulated(ports=8, seed=0).transport.controller
    with TcpServer(SwitchFirmware(controller), name="switch") as server:
        yield server, controller


def _open(server: TcpServer) -> Switch:
    sw = Switch.open(server.resource)
    sw.transport.timeout_s = PATIENT_S
    return sw


def _in_thread(work: Callable[[], object]) -> tuple[threading.Thread, list[BaseException]]:
    failures: list[BaseException] = []

    def guarded() -> None:
        try:
            work()
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=guarded)
    thread.start()
    return thread, failures


def _while_running(c: Controller, name: str) -> None:
    deadline = time.monotonic() + PATIENT_S
    while c.busy != name:
        assert time.monotonic() < deadline, f"{name} never started"
        time.sleep(1e-3)


def test_two_sdk_clients_never_get_each_others_errors(served) -> None:
    # once: 6 of 300 good calls raised the other client's -222, 6 of 300 bad calls passed
    server, _ = served
    wrong: list[str] = []

    def client(channel: int) -> None:
        with _open(server) as sw:
            for i in range(300):
                good = i % 2 == 0
                try:
                    sw.set_heater(channel, 1.0 if good else 11.0)  # the chip allows 10 mA
                except SwitchError as err:
                    if good or err.code != -222 or f"HEAT:CURR {channel}," not in err.command:
                        wrong.append(f"{channel}: {err}")
                else:
                    if not good:
                        wrong.append(f"{channel}: 11 mA passed silently")

    threads = [_in_thread(lambda ch=ch: client(ch)) for ch in (20, 21)]
    for thread, failures in threads:
        thread.join()
        assert failures == []
    assert wrong == []


def test_another_clients_queries_answer_while_a_calibration_runs(served) -> None:
    server, c = served
    with _open(server) as owner, _open(server) as other:
        owner.connect([(0, 5)])
        calibrating, failures = _in_thread(lambda: owner.calibrate(save=False))
        _while_running(c, "CAL:RUN")
        assert other.idn().startswith("PSWITCH,EMU-CLEMENTS-8")
        assert other.matching().pairs == ((0, 5),)
        assert c.busy == "CAL:RUN" and calibrating.is_alive()  # answered before it completed
        with pytest.raises(SwitchError) as err:
            other.connect([(1, 2)])
        assert err.value.code == -221 and "CAL:RUN in progress" in err.value.message
        calibrating.join()
        assert failures == []
        assert owner.matching().pairs == other.matching().pairs == ((0, 5),)
        assert owner.calibration()["calibrated"] and other.errors() == owner.errors() == []


def test_the_sdk_waits_for_an_operation_and_raises_its_errors(served) -> None:
    server, c = served
    with _open(server) as owner, _open(server) as other:
        with pytest.raises(SwitchError) as err:
            owner.calibrate()  # save=True, and there is no store: -310 from the operation
        assert err.value.code == -310 and c.busy == ""
        assert other.errors() == [] and owner.errors() == []


def test_a_line_with_two_calibrations_runs_neither(served) -> None:
    server, c = served
    with _open(server) as sw:
        before = sw.calibration()
        sw.transport.write(";".join(["CAL:RUN"] * 60))
        assert [code for code, _ in sw.errors()] == [-223]
        assert sw.calibration() == before and c.busy == ""


def test_only_a_line_that_asks_gets_a_reply(served) -> None:
    server, c = served
    with socket.create_connection((server.host, server.port), timeout=PATIENT_S) as raw:
        raw.sendall(b'SYST:INT "?";ROUT:CLE\nROUT:MATC 0,1;SYST:ERR?\n*IDN?\n')
        got = b""
        while got.count(b"\n") < 2:
            got += raw.recv(65536)
    first, second = got.decode().splitlines()
    assert first.startswith('-104,"Data type error')  # the quoted "?" asked nothing
    assert second == c.idn


def test_an_operation_longer_than_the_visa_timeout_completes_through_the_sdk(served) -> None:
    server, c = served
    with Switch.open(server.resource) as sw:
        # about half the calibration's time (0.5 s here): a reply that waited for the whole
        # calibration would time out; each poll answers within a measurement batch
        sw.transport.timeout_s = 0.25
        sw.calibrate(save=False)
        assert sw.calibration()["calibrated"] and sw.errors() == [] and c.busy == ""


def test_a_burst_of_connections_waits_in_the_backlog_not_in_syn_retries(served) -> None:
    """300 clients connect while the acceptor is held up, then it goes on: with the system's
    listen backlog every connection is queued and answered at once. With a backlog of 16 the
    rest are dropped, and their clients retry after 1, 3, 7 s (15 s for some): unanswered."""
    server, _ = served
    socks = []
    with server._state:  # the acceptor stops after its next accept
        for _ in range(300):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", server.port))
            socks.append(s)
        time.sleep(0.2)  # the handshakes the kernel completes, it completes now
    try:
        for s in socks:
            s.setblocking(True)
            s.settimeout(30)
            s.sendall(b"*IDN?\n")
        start = time.monotonic()
        replies = [s.makefile("rb").readline() for s in socks]
        waited = time.monotonic() - start
    finally:
        for s in socks:
            s.close()
    assert all(r.startswith(b"PSWITCH,") for r in replies)
    assert waited < 5.0  # a dropped client waits out SYN retries (1, 3, 7, 15 s) in waves


class _ShortOfDescriptors:
    """A listener whose accept() fails as when the process has no descriptor left (EMFILE):
    its pending client stays ready, so a loop that retries at once spins."""

    def __init__(self) -> None:
        self._ready_r, self._ready_w = os.pipe()
        os.write(self._ready_w, b"x")  # always readable
        self.calls = 0

    def fileno(self) -> int:
        return self._ready_r

    def accept(self) -> tuple[socket.socket, object]:
        self.calls += 1
        raise OSError(errno.EMFILE, "Too many open files")


def test_out_of_descriptors_the_acceptor_backs_off() -> None:
    server = TcpServer(SwitchFirmware(Switch.emulated(ports=4).transport.controller))
    listener = _ShortOfDescriptors()
    wake_r, wake_w = os.pipe()
    loop = threading.Thread(target=server._accept_loop, args=(listener, wake_r))
    loop.start()
    time.sleep(0.5)
    os.write(wake_w, b"x")
    loop.join(timeout=5)
    assert not loop.is_alive()
    # a retry every ACCEPT_BACKOFF_S (0.1 s): a handful in half a second, not a spin
    assert 1 <= listener.calls <= 10
