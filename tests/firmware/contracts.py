"""The switch's promises as a hypothesis state machine, run by tests/firmware/test_contracts.py
and counted by benchmarks/bench_robustness.py.

:class:`ContractMachine` sends lines, valid and invalid (:func:`tests.strategies.scpi_lines`:
MIN/MAX/DEF in every position, unit suffixes, huge, negative and non-finite numbers, quotes,
``;``-joined mixtures, non-UTF-8 bytes; long lines at the bounds; the reported defects),
to an emulated 4-port switch with rings and a store, injects faults (:func:`inject`: the
store's fsync, a heater write part-way, a detector read), restarts it on its store, and checks
after every line:

- nothing escapes ``handle``: no exception, and no -300 (the last-resort net catches bugs only);
- every queued code is a standard SCPI one (:data:`~firmware.scpi_errors.MESSAGES`), one a line;
- a reply only to a line with a query (:func:`~firmware.commands.is_query`);
- a line that queues an error leaves the whole state (:func:`capture`: routes, heaters, rings,
  calibration, schedule, limits, the store's bytes) as it was before its failing command. Each
  command is its own transaction and a line stops at its first error, so the commands before
  it stay done; a line that does not parse runs nothing. The state before each command is
  captured by wrapping the default session's ``_run`` (its one call per command);
- no row of currents over the limits reaches the driver (:func:`watch_limits`), and the applied
  currents are within them;
- a command that met an injected fault fails with its code (-310 store, -240 hardware);
- a restart on the store comes back to the applied routes, heaters and schedule, and to the
  stored calibration.

With a :class:`Tally` (a benchmark) the machine counts what it finds instead of failing at the
first, and sends at most ``Tally.limit`` lines.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field, fields

import numpy as np
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from firmware.commands import MAX_ARGUMENTS, MAX_COMMANDS, MAX_DIGITS, MAX_LINE, is_query
from firmware.controller import Controller
from firmware.controller.schedule import MAX_SCHEDULE_STEPS
from firmware.scpi_errors import MESSAGES
from firmware.sdk import Switch
from tests.firmware.state import FAULT_CODES, SwitchState, capture, inject, watch_limits
from tests.strategies import scpi_headers, scpi_lines

PORTS = 4
#: Steps of one run of the machine (about 80 of them send a line).
STEPS = 100
HEADERS = scpi_headers(Controller.DECLARED)
#: Well-formed commands that change the state (each can fail: limits, interlock, faults).
ACTIONS = (
    "ROUT:MATC 0,1",
    "ROUT:MATC 0,2,1,3",
    "ROUT:CONN 2,3",
    "ROUT:DISC 0",
    "ROUT:CLE",
    "ROUT:REPL 0,2,3",
    "HEAT:CURR 3,2.5",
    "HEAT:CURR 17,9",
    "SYST:POW:LIM 60",
    "SYST:POW:LIM 250",
    "SYST:CURR:LIM 3",
    "SYST:CURR:LIM 10",
    "SYST:INT ON",
    "SYST:INT OFF",
    "RING:LOCK 0",
    "RING:LOCK 1",
    "RING:UNL 0",
    "RING:TRAC",
    "CAL:RUN",
    "CAL:RUN ON",
    "CAL:SAVE",
    "CAL:LOAD",
    "SCH:ADD 1ms,0,1",
    "SCH:LOAD 1ms,2,0,3,1,2,2ms,2,0,1",
    "SCH:STAR",
    "SCH:STEP",
    "SCH:CLE",
    "*RST",
)
#: The lines of the reported defects (on this 4-port switch).
REPRODUCERS = (
    "ROUT:MATC DEF",
    "SCH:ADD 1,DEF",
    "ROUT:MATC 0,1,DEF",
    "ROUT:MATC DEF;*OPC?",
    "SYST:CURR:LIM 3;RING:LOCK 0",
    "RING:LOCK 1",
    "SYST:CURR:LIM 4;CAL:RUN",
    "SYST:POW:LIM 0;CAL:RUN",
    "SYST:INT ON;RING:LOCK 0",
    "RING:LOCK 0;RING:LOCK 1;RING:LOCK 2;RING:LOCK 3",
    "ROUT:CONN 0.99999999999999999,2",
    "ROUT:CONN 0," + "9" * 4093,
    "SCH:LOAD 1ms,2,0,1,1ms,2,0,0",
    'SCH:ADD "?"',
    ";".join(["CAL:RUN"] * 512),
)
#: Lines at the bounds (commands a line, arguments, schedule steps, digits, characters), one
#: under, at and over each.
LONG_LINES = st.integers(-1, 1).flatmap(
    lambda k: st.sampled_from(
        [
            ";".join(["SYST:ERR:COUN?"] * (MAX_COMMANDS + k)),
            "ROUT:MATC " + ",".join(["0"] * (MAX_ARGUMENTS + k)),
            "SCH:LOAD " + ",".join(["1ms,2,0,1"] * (MAX_SCHEDULE_STEPS + k)),
            "SYST:POW:LIM " + "1" * (MAX_DIGITS + k),
            'SCH:ADD "' + "x" * (MAX_LINE - 10 + k) + '"',
        ]
    )
)
#: A directory in memory when there is one: the store's fsyncs cost little there.
_FAST = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


@dataclass
class Tally:
    """What the machine found, counted (it does not fail): lines sent (at most ``limit``),
    broken promises by kind, the first of each kind."""

    limit: int
    lines: int = 0
    broken: Counter[str] = field(default_factory=Counter)
    first: dict[str, str] = field(default_factory=dict)


def _differ(a: SwitchState, b: SwitchState) -> list[str]:
    return [f.name for f in fields(SwitchState) if getattr(a, f.name) != getattr(b, f.name)]


class ContractMachine(RuleBasedStateMachine):
    """See the module docstring."""

    #: Count instead of failing (the benchmark sets it on a subclass).
    tally: Tally | None = None

    def __init__(self) -> None:
        super().__init__()
        self.folder = tempfile.TemporaryDirectory(dir=_FAST)

    def teardown(self) -> None:
        self.folder.cleanup()

    @initialize(seed=st.sampled_from([0, 1]))
    def power_on(self, seed: int) -> None:
        if self.full():
            return
        self.seed = seed
        self._attach(self._power_on())

    def _power_on(self) -> Controller:
        sw = Switch.emulated(ports=PORTS, seed=self.seed, rings=True, state_dir=self.folder.name)
        return sw.transport.controller

    def _attach(self, c: Controller) -> None:
        self.c, self.watch, self.before_each = c, watch_limits(c), []
        session = c.default_session
        run = session._run

        def recorded(*args: object) -> object:
            self.before_each.append(capture(c))
            return run(*args)

        session._run = recorded

    def broken(self, kind: str, line: str | bytes, detail: object) -> None:
        if self.tally is None:
            raise AssertionError(f"{kind}: {line!r}: {detail}")
        self.tally.broken[kind] += 1
        self.tally.first.setdefault(kind, f"{line!r:.300}: {detail}")

    def full(self) -> bool:
        return self.tally is not None and self.tally.lines >= self.tally.limit

    def send(self, line: str | bytes, fault=None, after: int = 0) -> None:
        """Send ``line`` (meeting ``fault``, see :func:`inject`) and check every promise."""
        if self.full():
            return
        c = self.c
        before, over = capture(c), len(self.watch.over)
        self.before_each = []
        try:
            with inject(c, fault, after) as injected:
                reply = c.handle(line)
        except Exception as exc:
            self.broken("escaped", line, f"{type(exc).__name__}: {exc}")
            return
        finally:
            if self.tally is not None:
                self.tally.lines += 1
        errors = [c.errors.pop() for _ in range(len(c.errors))]
        codes = [e.code for e in errors]
        if -300 in codes:
            self.broken("escaped", line, errors[codes.index(-300)])
        elif len(codes) > 1 or any(code not in MESSAGES or code >= 0 for code in codes):
            self.broken("codes", line, codes)
        if reply is not None and not (isinstance(reply, str) and is_query(line)):
            self.broken("reply", line, reply)
        if codes:
            expected = self.before_each[-1] if self.before_each else before
            now = capture(c)
            if now != expected:
                self.broken("state changed on error", line, (codes, _differ(expected, now)))
        if len(self.watch.over) > over:
            self.broken("limits", line, self.watch.over[over])
        current = c.driver.currents()
        if (
            np.any(current > c.current_limit_mA)
            or c.driver.power_mW(current) > c.power_budget_mW
            or (c.interlock and np.any(current > 0))
        ):
            self.broken("limits", line, "applied currents beyond the limits")
        if injected.fired and codes != [FAULT_CODES[fault]]:
            self.broken("fault", line, (fault, after, codes))

    @rule(line=scpi_lines(HEADERS))
    def any_line(self, line: str | bytes) -> None:
        self.send(line)

    @rule(line=st.sampled_from(ACTIONS))
    def action(self, line: str) -> None:
        self.send(line)

    @rule(line=st.sampled_from(REPRODUCERS))
    def reproducer(self, line: str) -> None:
        self.send(line)

    @rule(line=LONG_LINES)
    def long_line(self, line: str) -> None:
        self.send(line)

    @rule(
        line=st.sampled_from(ACTIONS),
        fault=st.sampled_from(list(FAULT_CODES)),
        after=st.integers(0, 3),
    )
    def fault(self, line: str, fault, after: int) -> None:
        self.send(line, fault, after)

    @rule()
    def restart(self) -> None:
        if self.full():
            return
        was = capture(self.c)
        self._attach(self._power_on())
        now = capture(self.c)
        kept = ["pairs", "manual", "currents_mA", "schedule", "store_files"]
        if was.calibration_stored:
            kept.append("calibration")
        lost = [name for name in kept if getattr(was, name) != getattr(now, name)]
        if lost:
            self.broken("restart", "(restart)", lost)
