"""Sessions: each client of one switch has its own error queue, its own *OPC and SYST:TIME?,
and an overlapped operation (CAL:RUN, RING:LOCK) lets the other sessions' commands run
between its steps: their queries answer, their set commands are refused (-221), naming it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.controller import Controller
from firmware.controller.session import Session
from firmware.driver import DriverError
from firmware.reference import SIZES
from firmware.scpi_errors import QUEUE_SIZE
from firmware.sdk import COMMANDS, Switch
from tests.firmware.state import capture

#: Lines whose outcome does not depend on the switch's state: the error each queues (None: it
#: succeeds), so a model of each session's queue knows what it must hold.
LINES: dict[str | bytes, int | None] = {
    "ROUT:MATC 0,1": None,
    "ROUT:MATC 0,3,1,2": None,
    "ROUT:CLE": None,
    "HEAT:CURR 10,1.0": None,
    "SYST:INT OFF": None,
    "*RST": None,
    "*IDN?": None,
    "ROUT:MATC?": None,
    "HEAT:CURR 10,11": -222,  # the chip allows 10 mA
    "ROUT:MATC 0,1,2": -109,
    "ROUT:MATC 0,0": -224,
    "NO:SUCH:THING": -113,
    "SYST:ERR? 5": -108,
    "RING:LOCK 9": -222,  # there are no rings
    b"ROUT:CLE\xff": -101,
}


def _controller(**kw) -> Controller:
    return Switch.emulated(**{"ports": 4, "seed": 0, **kw}).transport.controller


class Client:
    """A session and the model of its error queue."""

    def __init__(self, controller: Controller) -> None:
        self.session = Session(controller)
        self.queue: list[int] = []

    def send(self, line: str | bytes) -> None:
        self.session.handle(line)
        code = LINES[line]
        if code is not None and len(self.queue) < QUEUE_SIZE - 1:
            self.queue.append(code)
        elif code is not None and len(self.queue) == QUEUE_SIZE - 1:
            self.queue.append(-350)

    def check_and_clear(self) -> None:
        """Its queue holds exactly the errors of its own lines: SYST:ERR? reads them in order."""
        assert self.session.handle("SYST:ERR:COUN?") == str(len(self.queue))
        for code in self.queue:
            assert self.session.handle("SYST:ERR?").startswith(f"{code},")
        assert self.session.handle("SYST:ERR?") == '0,"No error"'
        self.queue = []


@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from(sorted(LINES, key=str)), st.booleans()),
        max_size=40,
    )
)
def test_interleaved_sessions_never_get_each_others_errors(steps) -> None:
    c = _controller()
    clients = [Client(c), Client(c)]
    for who, line, check in steps:
        clients[who].send(line)
        if check:
            clients[who].check_and_clear()
    for client in clients:
        client.check_and_clear()
    assert c.errors.codes() == []  # the in-process default session saw none of it


def test_sessions_in_threads_keep_their_own_queues() -> None:
    c = _controller()
    lines = sorted(LINES, key=str)
    failures: list[BaseException] = []

    def work(k: int) -> None:
        client = Client(c)
        try:
            for i in range(300):
                client.send(lines[(7 * i + k) % len(lines)])
                client.check_and_clear()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_clear_status_and_the_time_of_the_last_command_are_a_sessions_own() -> None:
    c = _controller()
    a, b = Session(c), Session(c)
    a.handle("HEAT:CURR 10,11")
    b.handle("HEAT:CURR 10,11")
    b.handle("*CLS")
    assert (a.handle("SYST:ERR:COUN?"), b.handle("SYST:ERR:COUN?")) == ("1", "0")
    a.handle("ROUT:MATC 0,3,1,2")
    b.handle("SYST:INT OFF")  # touches no heater
    assert float(a.handle("SYST:TIME?")) > 0
    assert b.handle("SYST:TIME?") == "0"
    assert c.handle("SYST:TIME?") == "0"  # the in-process default session's own


# ---- overlapped operations ------------------------------------------------------------------


def _while_running(c: Controller, name: str) -> None:
    """Wait until the overlapped operation ``name`` runs on ``c`` (it is started elsewhere)."""
    deadline = time.monotonic() + 60
    while c.busy != name:
        assert time.monotonic() < deadline, f"{name} never started"
        time.sleep(1e-3)


def _in_thread(work: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=work)
    thread.start()
    return thread


def test_a_calibration_in_one_session_lets_the_others_query_and_refuses_their_writes() -> None:
    c = _controller(ports=8, rings=True)
    owner, other = Session(c), Session(c)
    c.handle("ROUT:MATC 0,5")
    before = capture(c)
    assert owner.handle("CAL:RUN") is None  # overlapped: the line returns at once
    _while_running(c, "CAL:RUN")
    assert other.handle("*IDN?").startswith("PSWITCH,")
    assert other.handle("ROUT:MATC?") == "0,5"
    assert c.busy == "CAL:RUN"  # those answered while it runs
    assert other.handle("ROUT:MATC 1,2;*RST") is None  # refused: the line stops
    assert other.handle("SYST:ERR?").startswith('-221,"Settings conflict;CAL:RUN in progress')
    assert owner.handle("*OPC?") == "1"  # waits for it
    assert c.busy == ""
    assert owner.handle("SYST:ERR?") == '0,"No error"'
    assert float(owner.handle("SYST:TIME?")) > 0  # the calibration's hardware time, s
    after = capture(c)
    assert after.pairs == before.pairs and after.calibration != before.calibration
    assert other.handle("SYST:ERR?") == '0,"No error"'


def test_a_clients_own_writes_wait_for_its_operation_in_order() -> None:
    """Lab scripts write RING:LOCK 0 ... RING:LOCK 7 back to back: each waits for the one
    before, as *WAI would, where another client's write is refused meanwhile."""
    c = _controller(ports=4, rings=True)
    owner = Session(c)
    for ring in range(4):
        assert owner.handle(f"RING:LOCK {ring}") is None
    assert owner.handle("HEAT:CURR 0,1") is None  # after the last lock, not refused
    assert owner.handle("*OPC?") == "1"
    assert owner.handle("SYST:ERR?") == '0,"No error"'
    assert sorted(c.ring_step) == [0, 1, 2, 3]


def test_a_line_runs_whole_before_another_clients_line() -> None:
    """ROUT:MATC m;ROUT:MATC? from two clients at once: each reads back its own matching."""
    c = _controller(ports=8)
    wrong: list[tuple[str, str]] = []

    def client(pairs: str) -> None:
        s = Session(c)
        for _ in range(150):
            reply = s.handle(f"ROUT:MATC {pairs};ROUT:MATC?")
            if reply != pairs:
                wrong.append((pairs, str(reply)))

    threads = [_in_thread(lambda p=p: client(p)) for p in ("0,1,2,3", "0,7,1,6")]
    for t in threads:
        t.join()
    assert wrong == []


def test_wai_waits_for_the_sessions_operation_and_the_next_command_runs_after_it() -> None:
    c = _controller(ports=4, rings=True)
    s = Session(c)
    assert s.handle("RING:LOCK 0;*WAI;ROUT:MATC 0,1") is None  # not refused: it runs after
    assert s.handle("*OPC?") == "1"
    assert s.handle("SYST:ERR?") == '0,"No error"'
    assert list(c.ring_step) == [0] and c.matching.pairs == ((0, 1),)


def test_a_failed_operation_in_the_background_rolls_back_and_reports_to_its_session() -> None:
    c = _controller(ports=8, rings=True)
    owner, other = Session(c), Session(c)
    c.handle("ROUT:MATC 0,5")
    before = capture(c)
    measure, calls = c.driver.measure, [0]

    def failing(*args, **kwargs):  # the 60th measurement fails: the rings are locked by then
        calls[0] += 1
        if calls[0] == 60:
            raise DriverError("detector read failed")
        return measure(*args, **kwargs)

    c.driver.measure = failing
    owner.handle("CAL:RUN")
    assert owner.handle("*OPC?") == "1"
    assert calls[0] == 60
    assert capture(c) == before  # rings unlocked again, heaters and calibration as they were
    assert owner.handle("SYST:ERR?").startswith('-240,"Hardware error;detector read failed')
    assert other.handle("SYST:ERR:COUN?") == "0"
    assert c.handle("SYST:ERR:COUN?") == "0"
    c.driver.measure = measure


@pytest.mark.parametrize("line", ["CAL:RUN;CAL:RUN", "RING:LOCK 0;*WAI;RING:LOCK 1;*OPC?"])
def test_a_line_holds_at_most_one_overlapped_operation(line) -> None:
    c = _controller(ports=4, rings=True)
    for session in (Session(c), c.default_session):
        before = capture(c)
        assert session.handle(line) is None  # nothing on it runs, *OPC? included
        assert session.handle("SYST:ERR?").startswith('-223,"Too much data;')
        assert capture(c) == before and c.busy == ""


def test_in_process_an_operation_completes_before_the_next_command_on_its_line() -> None:
    c = _controller(ports=4, rings=True)
    assert c.handle("RING:LOCK 0;ROUT:MATC 0,1;*OPC?") == "1"
    assert c.errors.codes() == []
    assert list(c.ring_step) == [0] and c.matching.pairs == ((0, 1),)


def test_every_query_answers_sensibly_between_the_steps_of_an_operation() -> None:
    # what a query reads mid-operation is the state as the operation left it at its last step;
    # it must never break the query (-300) or the operation
    c = _controller(ports=SIZES["ports"], rings=True)
    c.handle("ROUT:MATC 0,5,1,4")
    queries = [
        spec.example if spec.example.split()[0].endswith("?") else f"{spec.short}?"
        for spec in COMMANDS.values()
        if spec.queryable and spec.short not in ("*OPC", "SYST:ERR")
    ]
    owner, other = Session(c), Session(c)
    for operation in ("CAL:RUN", "RING:LOCK 3"):
        owner.handle(operation)  # reserved before it returns: busy, or already done
        rounds = 0
        while c.busy and rounds < 50:
            for line in queries:
                other.handle(line)
            rounds += 1
        codes = []
        while (reply := other.handle("SYST:ERR?")) != '0,"No error"':
            codes.append(int(reply.split(",")[0]))
        assert -300 not in codes, codes
        assert owner.handle("*OPC?") == "1"
        assert owner.handle("SYST:ERR?") == '0,"No error"'


def test_an_operation_that_is_refused_up_front_queues_its_error_at_once() -> None:
    c = _controller(ports=4, rings=True)
    s = Session(c)
    s.handle("SYST:CURR:LIM 4")
    before = capture(c)
    assert s.handle("CAL:RUN;*OPC?") == "1"
    assert s.handle("SYST:ERR?").startswith("-222,")
    assert capture(c) == before


def test_an_operation_started_while_another_runs_is_refused() -> None:
    c = _controller(ports=8, rings=True)
    a, b = Session(c), Session(c)
    a.handle("CAL:RUN")
    _while_running(c, "CAL:RUN")
    waiting = _in_thread(lambda: c.handle("RING:LOCK 0"))  # in process, from another thread
    waiting.join()
    assert b.handle("RING:LOCK 0") is None
    assert b.handle("SYST:ERR?").startswith('-221,"Settings conflict;CAL:RUN in progress')
    assert c.errors.codes() == [-221]
    assert a.handle("*OPC?") == "1" and a.handle("SYST:ERR:COUN?") == "0"
