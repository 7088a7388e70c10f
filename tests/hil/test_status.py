"""The SCPI status system of every emulated SCPI instrument (the base,
:class:`hil.emulator.instruments.scpi.ScpiInstrument`): ``:STATus:OPERation`` and
``:STATus:QUEStionable`` with CONDition, PTRansition/NTRansition, EVENt and ENABle, and
``:STATus:PRESet``, as SCPI 1999.0 (Vol. 1, 9; Vol. 2, 20) and IEEE 488.2 (11) define them:
the transitions the filters pass latch into the event register, reading it clears it, the
enabled events summarise into the status byte (bit 7 operation, bit 3 questionable)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil.emulator.instruments import (
    LaserTSL570,
    Mainframe8164B,
    PowerMeterN7744A,
    PowerMeterPM100D,
)
from hil.emulator.instruments.scpi import QUES_DEVICE, STATUS_MASK, ScpiInstrument
from hil.emulator.world import BenchWorld

NO_ERROR = '0,"No error"'
REGISTERS = ("OPER", "QUES")
#: The status byte's summary bit of each register: OSB (bit 7), QSB (bit 3).
SUMMARY = {"OPER": 128, "QUES": 8}
bits = st.integers(0, STATUS_MASK)


class Toy(ScpiInstrument):
    """An instrument without commands of its own whose conditions a test sets."""

    def __init__(self, world: BenchWorld) -> None:
        self.conditions = {"OPER": 0, "QUES": 0}
        self.flag = False
        super().__init__(world, "Test,Toy,0,1")

    def commands(self) -> list:
        return []

    def operation_condition(self) -> int:
        return self.conditions["OPER"]

    def questionable_condition(self) -> int:
        return self.conditions["QUES"]


class Legacy(ScpiInstrument):
    """A model that only overrides the base's older ``questionable()``."""

    flag = False

    def commands(self) -> list:
        return []

    def questionable(self) -> bool:
        return self.flag


@pytest.fixture(scope="module")
def world() -> BenchWorld:
    return BenchWorld(seed=0)


def errors(inst: ScpiInstrument) -> list[int]:
    codes = []
    while (reply := inst.handle("SYST:ERR?")) != NO_ERROR:
        codes.append(int(reply.split(",")[0]))
    return codes


def expected_event(history: list[int], ptr: int, ntr: int) -> int:
    """The event register after the conditions ``history`` (the first the power-on one)."""
    event = 0
    for before, after in itertools.pairwise(history):
        event |= (after & ~before & ptr) | (before & ~after & ntr)
    return event


# ---- the register algebra ------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    reg=st.sampled_from(REGISTERS),
    history=st.lists(bits, min_size=1, max_size=6),
    ptr=bits,
    ntr=bits,
)
def test_events_latch_the_transitions_the_filters_pass(world, reg, history, ptr, ntr) -> None:
    toy = Toy(world)
    toy.conditions[reg] = history[0]
    toy.handle(f"STAT:{reg}:PTR {ptr};:STAT:{reg}:NTR {ntr}")
    for condition in history[1:]:
        toy.conditions[reg] = condition
        toy.handle("*OPC")  # any line samples the conditions
    assert toy.handle(f"STAT:{reg}:COND?") == str(history[-1])
    assert toy.handle(f"STAT:{reg}?") == str(expected_event(history, ptr, ntr))
    assert toy.handle(f"STAT:{reg}:EVEN?") == "0"  # reading cleared it
    assert toy.handle(f"STAT:{reg}:COND?") == str(history[-1])  # the condition stays
    assert errors(toy) == []


@settings(max_examples=60, deadline=None)
@given(reg=st.sampled_from(REGISTERS), condition=bits, enable=bits)
def test_enabled_events_summarise_into_the_status_byte(world, reg, condition, enable) -> None:
    toy = Toy(world)
    toy.handle(f"STAT:{reg}:ENAB {enable}")
    toy.conditions[reg] = condition  # rises from 0: PTR all ones latches every bit
    summary = bool(condition & enable)
    assert int(toy.handle("*STB?")) == SUMMARY[reg] * summary
    assert toy.status_byte() == SUMMARY[reg] * summary  # a serial poll reads the same
    toy.handle("*SRE 136")  # the summaries enabled: MSS (bit 6) follows
    assert int(toy.handle("*STB?")) == (SUMMARY[reg] | 64) * summary
    assert toy.handle(f"STAT:{reg}?") == str(condition)
    assert int(toy.handle("*STB?")) == 0  # the event read: no summary left
    toy.conditions[reg] = 0  # falling edges: NTR 0 latches nothing
    assert toy.handle(f"STAT:{reg}?") == "0"


def test_the_registers_are_independent(world) -> None:
    toy = Toy(world)
    toy.handle("STAT:OPER:ENAB 1;:STAT:QUES:ENAB 2")
    toy.conditions["OPER"] = 1
    assert toy.handle("*STB?;:STAT:QUES?;:STAT:QUES:ENAB?") == "128;0;2"
    assert toy.handle("STAT:OPER?;:STAT:OPER:COND?") == "1;1"


def test_the_ntr_filter_latches_falling_bits(world) -> None:
    toy = Toy(world)
    toy.conditions["OPER"] = 0b1010
    toy.handle("STAT:OPER:PTR 0;:STAT:OPER:NTR 2")
    assert toy.handle("STAT:OPER?") == "0"  # the rise before it latched (PTR was all ones)
    toy.handle("STAT:OPER?")
    toy.conditions["OPER"] = 0
    assert toy.handle("STAT:OPER?") == "2"  # only bit 1's fall passes NTR 2


# ---- preset, *CLS, *RST, power-on ----------------------------------------------------------------
def test_power_on_values_are_the_preset_ones(world) -> None:
    toy = Toy(world)
    for reg in REGISTERS:
        line = f"STAT:{reg}:ENAB?;:STAT:{reg}:PTR?;:STAT:{reg}:NTR?;:STAT:{reg}?"
        assert toy.handle(line) == "0;32767;0;0"


def test_a_condition_present_at_power_on_is_no_event(world) -> None:
    toy = Toy(world)
    toy.conditions["QUES"] = 5
    assert toy.handle("STAT:QUES:COND?;:STAT:QUES?") == "5;0"


def test_preset_sets_enable_and_filters_and_keeps_the_events(world) -> None:
    toy = Toy(world)
    toy.handle("STAT:OPER:ENAB 3;:STAT:OPER:PTR 1;:STAT:OPER:NTR 9;:STAT:QUES:ENAB 4")
    toy.conditions["OPER"] = 1
    toy.handle("STAT:PRES")
    assert toy.handle("STAT:OPER:ENAB?;:STAT:OPER:PTR?;:STAT:OPER:NTR?") == "0;32767;0"
    assert toy.handle("STAT:QUES:ENAB?;:STATUS:QUESTIONABLE:PTRANSITION?") == "0;32767"
    assert toy.handle("STAT:OPER?") == "1"  # SCPI Vol. 2, 20.7: no event register is cleared


def test_cls_clears_the_events_and_keeps_enable_and_filters(world) -> None:
    toy = Toy(world)
    toy.handle("STAT:OPER:ENAB 1;:STAT:QUES:ENAB 1;:STAT:QUES:NTR 1")
    toy.conditions.update(OPER=1, QUES=1)
    assert int(toy.handle("*STB?")) == 128 | 8
    toy.handle("*CLS")
    assert toy.handle("*STB?;:STAT:OPER?;:STAT:QUES?") == "0;0;0"
    assert toy.handle("STAT:OPER:ENAB?;:STAT:QUES:ENAB?;:STAT:QUES:NTR?") == "1;1;1"
    assert toy.handle("STAT:OPER:COND?;:STAT:QUES:COND?") == "1;1"  # the conditions stay


def test_rst_keeps_the_status_registers(world) -> None:
    toy = Toy(world)
    toy.handle("STAT:OPER:ENAB 6;:STAT:QUES:PTR 7")
    toy.conditions["OPER"] = 2
    toy.handle("*RST")
    assert toy.handle("STAT:OPER:ENAB?;:STAT:QUES:PTR?;:STAT:OPER?") == "6;7;2"


# ---- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("node", ["ENAB", "PTR", "NTR"])
@pytest.mark.parametrize("reg", REGISTERS)
@pytest.mark.parametrize("value", ["32768", "-1", "1e6"])
def test_values_outside_0_to_32767_are_refused(world, reg, node, value) -> None:
    toy = Toy(world)
    toy.handle(f"STAT:{reg}:{node} 100")
    toy.handle(f"STAT:{reg}:{node} {value}")
    assert errors(toy) == [-222]
    assert toy.handle(f"STAT:{reg}:{node}?") == "100"


def test_malformed_status_commands_are_command_errors(world) -> None:
    toy = Toy(world)
    for line in ("STAT:OPER 1", "STAT:OPER:COND 1", "STAT:PRES?", "STAT:OPER:ENAB 1.5"):
        toy.handle(line)
    toy.handle("STAT:OPER:ENAB")  # its value missing
    assert errors(toy) == [-113, -113, -113, -104, -109]
    assert toy.handle("STAT:OPER:ENAB?") == "0"


# ---- the hooks ----------------------------------------------------------------------------------
def test_the_older_questionable_hook_sets_the_device_bit(world) -> None:
    legacy = Legacy(world, "Test,Legacy,0,1")
    legacy.handle(f"STAT:QUES:ENAB {QUES_DEVICE}")
    legacy.flag = True
    assert legacy.handle("STAT:QUES:COND?") == str(QUES_DEVICE)
    assert int(legacy.handle("*STB?")) == 8


def test_condition_bits_above_14_are_dropped(world) -> None:
    toy = Toy(world)
    toy.handle("*CLS")  # the power-on sample
    toy.conditions["OPER"] = 0x18001  # bit 15 is never used; beyond 16 bits neither
    assert toy.handle("STAT:OPER:COND?;:STAT:OPER?") == "1;1"


def test_a_failed_zeroing_latches_in_the_n774x_questionable_register() -> None:
    world = BenchWorld(seed=0)
    meter = PowerMeterN7744A(world, 4, "MY0001", "N7744A")
    Mainframe8164B(world).handle(":SOUR0:POW:STAT 1")  # light on every output
    meter.handle("STAT:QUES:ENAB 2")
    meter.handle("SENS1:CORR:COLL:ZERO")  # fails on a lit channel (PG p. 121)
    assert meter.handle("STAT:QUES:COND?") == "2"  # PG p. 47: slot 1's bit
    assert int(meter.handle("*STB?")) & 8
    assert meter.handle("STAT:QUES?;:STAT:QUES?") == "2;0"
    assert errors(meter) == []


@pytest.mark.parametrize(
    "build",
    [
        lambda w: PowerMeterN7744A(w, 4, "MY0001", "N7744A"),
        lambda w: Mainframe8164B(w),
        lambda w: LaserTSL570(w),
        lambda w: PowerMeterPM100D(w, 0),
    ],
    ids=["n774x", "8164b", "tsl570", "pm100d"],
)
def test_every_scpi_model_has_the_status_system(build) -> None:
    inst = build(BenchWorld(seed=0))  # a world of its own: a model adds its laser to it
    line = (
        "STATUS:OPERATION:ENABLE 16;:STAT:OPER:PTR 3;:STAT:OPER:NTR 4;:STAT:QUES:ENAB 8;"
        ":STAT:OPER:ENAB?;:STAT:OPER:PTR?;:STAT:OPER:NTR?;:STAT:QUES:ENAB?;"
        ":STAT:OPER:EVEN?;:STAT:QUES:COND?;:STAT:PRES;:STAT:OPER:PTR?"
    )
    replies = inst.handle(line).split(";")
    assert replies[:4] + replies[-1:] == ["16", "3", "4", "8", "32767"]
    assert errors(inst) == []


class Extended(Toy):
    """A model with a register of its own (as the PM100D's MEASurement), summarised in bit 1."""

    def status_nodes(self) -> dict:
        return {**super().status_nodes(), "MEASurement": (lambda: self.conditions["MEAS"], 2)}


def test_a_model_adds_a_register_of_its_own(world) -> None:
    toy = Extended(world)
    toy.conditions["MEAS"] = 0
    toy.handle("STAT:MEAS:ENAB 4;:STAT:MEAS:NTR 4")
    toy.conditions["MEAS"] = 4
    assert toy.handle("STAT:MEAS:COND?") == "4" and toy.handle("*STB?") == "2"
    toy.handle("*CLS")
    toy.conditions["MEAS"] = 0  # the fall: NTR 4 latches it
    assert toy.handle("*STB?") == "2"
    assert toy.handle("STAT:MEAS?;:STAT:MEAS?") == "4;0"
    toy.handle("STAT:PRES")
    assert toy.handle("STAT:MEAS:ENAB?;:STAT:MEAS:PTR?;:STAT:MEAS:NTR?") == "0;32767;0"
