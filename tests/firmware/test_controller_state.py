"""Random command sequences, valid and invalid, against the controller and a reference model."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from firmware.scpi_errors import QUEUE_SIZE
from firmware.sdk import Switch
from photonics.calibration.selfcal import currents_for_theta
from photonics.matching import Matching

PORTS = 4
ports = st.integers(0, PORTS - 1)
matchings = st.permutations(range(PORTS)).flatmap(
    lambda order: st.integers(0, PORTS // 2).map(
        lambda k: Matching([(order[2 * i], order[2 * i + 1]) for i in range(k)], PORTS)
    )
)


class Model:
    """What the switch should hold: plain values and the same pure physics functions."""

    def __init__(self, c) -> None:
        self.c = c  # for the pure functions below the controller: fabric, calibration, power
        self.H = c.driver.n_channels
        self.hw_limit, self.hw_budget = c.driver.limits()
        self.codes: list[int] = []
        self.schedule: list[Matching] = []
        self.reset()

    def reset(self) -> None:
        self.currents = np.zeros(self.H)
        self.matching = Matching([], PORTS)
        self.manual = self.interlock = self.running = False
        self.limit = self.hw_limit.copy()
        self.budget = self.hw_budget
        self.index = -1

    def error(self, code: int) -> None:
        if len(self.codes) < QUEUE_SIZE - 1:
            self.codes.append(code)
        elif len(self.codes) == QUEUE_SIZE - 1:
            self.codes.append(-350)

    def refused(self, new: np.ndarray) -> int | None:
        if self.interlock and np.any(new > 0):
            return -221
        if np.any(new > self.limit) or self.c.driver.power_mW(new) > self.budget:
            return -222
        return None

    def apply(self, new: np.ndarray, matching: Matching, manual: bool) -> bool:
        code = self.refused(new)
        if code is not None:
            self.error(code)
            return False
        self.currents, self.matching, self.manual = new, matching, manual
        return True

    def route(self, matching: Matching) -> bool:
        plan = self.c.fabric.plan(matching)
        new = self.currents.copy()
        K = self.c.fabric.n_cells
        new[:K] = currents_for_theta(self.c.calibration, plan.theta, self.H)[:K]
        return self.apply(new, matching, False)


class SwitchMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.sw = Switch.emulated(ports=PORTS, seed=2)
        self.c = self.sw.transport.controller
        self.m = Model(self.c)

    def send(self, line: str | bytes) -> str | None:
        return self.c.handle(line)

    # ---- routes ----------------------------------------------------------------------------
    @rule(a=ports, b=ports)
    def connect(self, a, b) -> None:
        self.send(f"ROUT:CONN {a},{b}")
        used = {p for pair in self.m.matching.pairs for p in pair}
        if a == b or a in used or b in used:
            self.m.error(-221)
        else:
            self.m.route(Matching([*self.m.matching.pairs, (a, b)], PORTS))

    @rule(a=ports)
    def disconnect(self, a) -> None:
        self.send(f"rout:disconnect {a}")
        if self.m.matching.partner(a) is None:
            self.m.error(-221)
        else:
            self.m.route(Matching([p for p in self.m.matching.pairs if a not in p], PORTS))

    @rule(m=matchings)
    def set_matching(self, m) -> None:
        self.send("ROUTe:MATChing " + ",".join(f"{a},{b}" for a, b in m.pairs))
        self.m.route(m)

    @rule()
    def clear(self) -> None:
        self.send(":ROUT:CLE")
        self.m.route(Matching([], PORTS))

    # ---- heaters and limits ----------------------------------------------------------------
    @rule(channel=st.integers(-1, 30), current=st.floats(-1, 12, allow_nan=False))
    def heater(self, channel, current) -> None:
        self.send(f"HEAT:CURR {channel},{current!r}")
        if not (0 <= channel < self.m.H and 0 <= current <= self.m.hw_limit.max()):
            self.m.error(-222)  # outside the grammar's range
            return
        new = self.m.currents.copy()
        new[channel] = current
        self.m.apply(new, self.m.matching, True)

    @rule(engaged=st.booleans())
    def interlock(self, engaged) -> None:
        self.send(f"SYST:INT {int(engaged)}")
        if engaged:
            self.m.currents, self.m.matching = np.zeros(self.m.H), Matching([], PORTS)
            self.m.manual = self.m.running = False
        self.m.interlock = engaged

    @rule(above=st.floats(-20, 80) | st.just(1e6))
    def power_limit(self, above) -> None:
        # near the power drawn now, where the next route may or may not fit (they draw
        # 100-160 mW here), or above the hardware's budget
        budget = max(float(self.c.driver.power_mW(self.m.currents)) + above, 0.0)
        self.send(f"SYST:POW:LIM {budget!r}")
        if budget > self.m.hw_budget:
            self.m.error(-222)
        elif self.c.driver.power_mW(self.m.currents) > budget:
            self.m.error(-221)
        else:
            self.m.budget = budget

    @rule(limit=st.floats(0, 10, allow_nan=False))
    def current_limit(self, limit) -> None:
        self.send(f"SYST:CURR:LIM {limit!r}")
        new = np.minimum(self.m.hw_limit, limit)
        if np.any(self.m.currents > new):
            self.m.error(-221)
        else:
            self.m.limit = new

    # ---- schedule --------------------------------------------------------------------------
    @precondition(lambda self: len(self.m.schedule) < 4)
    @rule(m=matchings, dwell_ms=st.integers(1, 5))
    def schedule_add(self, m, dwell_ms) -> None:
        self.send(f"SCH:ADD {dwell_ms}ms" + "".join(f",{a},{b}" for a, b in m.pairs))
        self.m.schedule.append(m)

    @rule()
    def schedule_start(self) -> None:
        self.send("SCH:STAR")
        if not self.m.schedule:
            self.m.error(-221)
        elif self.m.route(self.m.schedule[0]):
            self.m.running, self.m.index = True, 0

    @rule()
    def schedule_step(self) -> None:
        self.send("SCH:STEP")
        if not self.m.running:
            self.m.error(-221)
            return
        nxt = (self.m.index + 1) % len(self.m.schedule)
        if self.m.route(self.m.schedule[nxt]):
            self.m.index = nxt

    @rule()
    def schedule_clear(self) -> None:
        self.send("SCH:CLE")
        self.m.schedule, self.m.running, self.m.index = [], False, -1

    # ---- common commands and garbage -------------------------------------------------------
    @rule()
    def reset(self) -> None:
        self.send("*RST")
        self.m.reset()

    @rule()
    def clear_errors(self) -> None:
        self.send("*CLS")
        self.m.codes = []

    @rule(
        header=st.sampled_from(["ROUT:CONN", "ROUT:MATC", "HEAT:CURR", "SYST:POW:LIM", "SCH:ADD"]),
        junk=st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12),
    )
    def bad_arguments(self, header, junk) -> None:
        before = len(self.c.errors)
        self.send(f"{header} 1,{junk}@")  # '@' is never valid in an argument
        new = self.c.errors.codes()[before:]
        assert len(new) <= 1
        if new:  # a full queue turns it into -350 or drops it
            assert -199 <= new[0] <= -100 or new[0] in (-222, -224, -350), new
            self.m.error(new[0])
        else:
            assert len(self.c.errors) == QUEUE_SIZE

    @rule(data=st.binary(min_size=1, max_size=20))
    def garbage_bytes(self, data) -> None:
        self.send(b"\x80" + data)  # not ASCII: -101, whatever follows
        self.m.error(-101)

    # ---- what must always hold -------------------------------------------------------------
    @invariant()
    def agrees_with_the_model(self) -> None:
        c, m = self.c, self.m
        assert np.array_equal(c.driver.currents(), m.currents)
        assert c.matching.pairs == m.matching.pairs
        assert c.manual == m.manual and c.interlock == m.interlock
        assert c.running == m.running and c.step_index == m.index
        assert [s.plan.matching.pairs for s in c.schedule] == [s.pairs for s in m.schedule]
        assert c.errors.codes() == m.codes

    @invariant()
    def never_beyond_a_limit(self) -> None:
        current = self.c.driver.currents()
        assert np.all(current <= self.c.current_limit_mA)
        assert self.c.driver.power_mW(current) <= self.c.power_budget_mW
        if self.c.interlock:
            assert np.all(current == 0)


TestSwitchMachine = SwitchMachine.TestCase
