"""The emulated Qontrol Q8iv's command set beyond currents and voltages (hil.emulator.instruments
.qontrol): vector and every-channel forms, VIP readings, limits in vectors, the kept
settings, the non-volatile memory, the error log, HELP, and the Q8iv manual's error check."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hil.emulator.clock import ManualClock
from hil.emulator.instruments import QontrolQ8iv
from hil.emulator.instruments.qontrol import (
    LOG_SIZE,
    NVM_WORDS,
    WORD_MAX,
    _ago,
)
from hil.emulator.manuals.q8iv import MANUAL, reply_errors
from hil.emulator.world import BenchWorld
from hil.instruments.qontrol import MODULE_CHANNELS, QONTROL_ERRORS

SEED = 3
_VIP = re.compile(
    r"^(\d+),(\d+): ([+-]\d+\.\d{4}) V, ([+-]\d+\.\d{4}) mA(?:, +(\S+) mW, +(\d+) Ohm)?$"
)


@pytest.fixture(scope="module")
def chip():
    return BenchWorld(seed=SEED).chip


@pytest.fixture
def q(chip) -> QontrolQ8iv:
    return QontrolQ8iv(BenchWorld(chip, seed=SEED, clock=ManualClock(100.0)))


def _lines(reply: str) -> list[str]:
    return reply.split("\n")


# ---- VIP: voltage, current, power and resistance -------------------------------------------------
def test_vip_reads_voltage_current_and_above_half_a_milliamp_power_and_resistance(q) -> None:
    assert q.handle("I2=5") == "OK" and q.handle("I3=0.2") == "OK"
    m = _VIP.match(q.handle("VIP2?"))
    assert m and (m.group(1), m.group(2)) == ("0", "2")
    volts, mA = float(m.group(3)), float(m.group(4))
    assert mA == 5.0 and volts == pytest.approx(float(q.handle("V2?")), abs=1e-4)
    assert float(m.group(5)) == pytest.approx(volts * mA, rel=1e-4)  # mW
    assert int(m.group(6)) == round(1e3 * volts / mA)  # ohm
    low = _VIP.match(q.handle("VIP3?"))
    assert low and low.group(5) is None  # 0.2 mA: no power, no resistance


def test_vipall_is_a_line_per_channel_named_by_module_and_channel(q) -> None:
    q.handle("I9=4")
    lines = _lines(q.handle("VIPALL?"))
    assert len(lines) == q.chain
    named = [(int(m.group(1)), int(m.group(2))) for m in map(_VIP.match, lines) if m]
    assert named == [divmod(ch, MODULE_CHANNELS) for ch in range(q.chain)]
    assert float(_VIP.match(lines[9]).group(4)) == 4.0


def test_vip_is_a_reading(q) -> None:
    assert q.handle("VIP3=1") == "E13:03"


# ---- every channel, every module -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["V", "I", "VMAX", "IMAX", "VCAL", "ICAL", "VERR", "SR", "GAIN"])
def test_an_all_query_of_a_channel_command_is_its_queries_in_channel_order(q, name) -> None:
    q.handle(f"{name}5=1" if "CAL" not in name else f"{name}5=2,3,-4,5")
    assert _lines(q.handle(f"{name}ALL?")) == [q.handle(f"{name}{ch}?") for ch in range(q.chain)]


@pytest.mark.parametrize("name", ["ID", "FIRMWARE", "LIFETIME", "VFULL", "IFULL", "LED", "OK"])
def test_an_all_query_of_a_module_command_is_a_line_per_module(q, name) -> None:
    lines = _lines(q.handle(f"{name}ALL?"))
    assert len(lines) == q.modules and lines[0] == q.handle(f"{name}?")


def test_each_module_has_its_own_id_and_nchanall_sums_to_the_heaters(q) -> None:
    assert _lines(q.handle("IDALL?")) == q.ids and len(set(q.ids)) == q.modules
    per_module = [int(x) for x in _lines(q.handle("NCHANALL?"))]
    assert sum(per_module) == int(q.handle("NCHAN?")) == q.n
    assert all(0 < k <= MODULE_CHANNELS for k in per_module)


@pytest.mark.parametrize(
    ("line", "reply"),
    [("VALL3?", "E10:00"), ("IDALL=1", "E13:00"), ("VMAXALL=3", "E13:00"), ("IALL?1", "E11:00")],
)
def test_all_forms_take_no_channel_no_value_and_set_nothing(q, line, reply) -> None:
    before = q.vmax.copy()
    assert q.handle(line) == reply
    assert np.array_equal(q.vmax, before)


# ---- vectors of limits, currents and voltages ----------------------------------------------------
def test_limit_vectors_set_consecutive_channels(q) -> None:
    assert q.handle("VMAXVEC8=5,6.5,7") == "OK"
    assert q.vmax[8:11].tolist() == [5.0, 6.5, 7.0] and q.vmax[11] == 12.0
    assert q.handle("IMAXVEC0=1,2") == "OK"
    assert q.handle("IMAX1?") == "2.0000"


@pytest.mark.parametrize(
    ("line", "reply"),
    [("VMAXVEC0=5,13", "E11:01"), ("IMAXVEC0=1,x", "E11:01"), ("VMAXVEC0=", "E11:00")],
)
def test_a_limit_vector_with_one_bad_value_changes_no_limit(q, line, reply) -> None:
    before = q.vmax.copy(), q.imax.copy()
    assert q.handle(line) == reply
    assert np.array_equal(q.vmax, before[0]) and np.array_equal(q.imax, before[1])


def test_a_vector_past_the_chain_is_refused(q) -> None:
    assert q.handle(f"IMAXVEC{q.chain - 1}=1,2") == f"E12:{q.chain - 1:02d}"
    assert q.handle("IVEC0?") == "E13:00"


def test_a_voltage_vector_writes_the_currents_that_give_those_voltages(q) -> None:
    assert q.handle("VVEC0=0.5,1") == "OK"
    assert float(q.handle("V0?")) == pytest.approx(0.5, abs=1e-4)
    assert float(q.handle("V1?")) == pytest.approx(1.0, abs=1e-4)


# ---- settings kept and read back -----------------------------------------------------------------
def test_calibration_is_four_signed_integers_per_channel(q) -> None:
    assert q.handle("VCAL4?") == "+1,+0,+0,+0"
    assert q.handle("VCAL4=2, -3,0,7") == "OK" and q.handle("VCAL4?") == "+2,-3,+0,+7"
    assert q.handle("ICAL4?") == "+1,+0,+0,+0"  # a channel of its own


@pytest.mark.parametrize("value", ["1,2,3", "1,2,3,4,5", "1,2,3,40000", "1,2.5,3,4", ""])
def test_bad_calibration_changes_nothing(q, value) -> None:
    assert q.handle(f"ICAL2={value}") == "E11:02"
    assert q.handle("ICAL2?") == "+1,+0,+0,+0"


@pytest.mark.parametrize(("name", "high"), [("VERR", 12.0), ("IERR", 24.0), ("PDR", WORD_MAX)])
def test_a_kept_channel_setting_takes_zero_to_its_highest_value(q, name, high) -> None:
    assert q.handle(f"{name}6?") == "0.0000"
    assert q.handle(f"{name}6={high}") == "OK" and float(q.handle(f"{name}6?")) == high
    assert q.handle(f"{name}6={high * 1.01}") == "E11:06"
    assert q.handle(f"{name}6=-1") == "E11:06"
    assert float(q.handle(f"{name}6?")) == high


@pytest.mark.parametrize(
    ("name", "default", "high"),
    [
        ("LED", 1, 1),
        ("SAFE", 1, 1),
        ("QUIET", 0, 1),
        ("ROCOM", 0, 1),
        ("ADCT", 5, WORD_MAX),
        ("ADCN", 2, WORD_MAX),
        ("CCFN", 0, WORD_MAX),
        ("INTEST", 0, WORD_MAX),
        ("DIGSUP", 0, WORD_MAX),
    ],
)
def test_module_settings_start_at_their_default_and_read_back(q, name, default, high) -> None:
    assert q.handle(f"{name}?") == str(default)
    assert q.handle(f"{name}={high}") == "OK" and q.handle(f"{name}?") == str(high)
    assert _lines(q.handle(f"{name}ALL?")) == [str(high)] * q.modules  # the whole chain
    assert q.handle(f"{name}={high + 1}") == "E11:00"
    assert q.handle(f"{name}3=0") == "E10:00"  # a module setting takes no channel
    assert q.handle(f"{name}?") == str(high)


@given(
    name=st.sampled_from(["LED", "ADCT", "ADCN", "SAFE"]),
    value=st.one_of(
        st.integers(-5, 70000).map(str),
        st.integers(0, 70000).map(hex),
        st.sampled_from(["", "1.5", "x", "0x", "1e3"]),
    ),
)
def test_a_module_setting_is_kept_exactly_when_in_range(chip, name, value) -> None:
    q = QontrolQ8iv(BenchWorld(chip, seed=SEED, clock=ManualClock()))
    before = q.handle(f"{name}?")
    reply = q.handle(f"{name}={value}")
    high = 1 if name in ("LED", "SAFE") else WORD_MAX
    try:
        number = int(value, 0) if value.startswith("0x") else int(value)
    except ValueError:
        number = None
    if number is not None and 0 <= number <= high:
        assert reply == "OK" and q.handle(f"{name}?") == str(number)
    else:
        assert reply == "E11:00" and q.handle(f"{name}?") == before


@pytest.mark.parametrize(
    "line",
    [
        "VFULL=1",
        "IFULL=1",
        "ID=x",
        "FIRMWARE=1",
        "LIFETIME=0",
        "LOG=0",
        "OK=0",
        "HELP=1",
        "NCHAN=4",
    ],
)
def test_readings_and_identities_are_read_only(q, line) -> None:
    assert q.handle(line) == "E13:00"


# ---- non-volatile memory ------------------------------------------------------------------------
def test_nvm_words_are_written_and_read_back_in_hex(q) -> None:
    assert q.handle("NVM16?") == "0xFFFF"  # erased
    assert q.handle("NVM16=0x1234") == "OK" and q.handle("NVM16?") == "0x1234"
    assert q.handle("NVM17=255") == "OK" and q.handle("NVM17?") == "0x00FF"
    dump = _lines(q.handle("NVMALL?"))
    assert len(dump) == q.modules * NVM_WORDS // 2
    assert dump[8] == "10 : 0x1234,  11 : 0x00FF"


@pytest.mark.parametrize(
    ("line", "reply"),
    [
        ("NVM?", "E12:00"),
        ("NVM256?", "E12:256"),
        ("NVM3=65536", "E11:03"),
        ("NVM3=-1", "E11:03"),
        ("NVM3=0xG", "E11:03"),
        ("NVMALL=1", "E13:00"),
    ],
)
def test_bad_nvm_lines_change_no_word(q, line, reply) -> None:
    assert q.handle(line) == reply
    assert q.handle("NVM3?") == "0xFFFF"


# ---- the error log ------------------------------------------------------------------------------
def test_the_log_lists_each_error_with_its_age(q) -> None:
    assert q.handle("LOG?") == "#  0, none"
    assert q.handle("I2=50") == "E02:02"
    q.world.clock.advance(200)
    assert q.handle("hello") == "E10:00"
    q.world.clock.advance(30)
    assert _lines(q.handle("LOG?")) == ["#  0, E02:02, 4 m ago", "#  1, E10:00, 30 s ago"]
    assert q.errors.codes() == [2, 10]


def test_an_error_goes_to_the_log_of_its_channels_module(q) -> None:
    assert q.handle("VMAX9=13") == "E11:09"
    assert q.handle("LOG?") == "#  0, none"  # the first module's
    logs = _lines(q.handle("LOGALL?"))
    assert logs[1] == "#  0, E11:09, 0 s ago" and len(logs) == q.modules


def test_the_log_is_a_ring_of_64(q) -> None:
    for _ in range(LOG_SIZE):
        q.handle("X=1")
    for _ in range(3):
        q.handle("IMAX3=99")
    log = _lines(q.handle("LOG?"))
    assert len(log) == LOG_SIZE
    assert [x[:12] for x in log[:4]] == [
        "#  0, E11:03",
        "#  1, E11:03",
        "#  2, E11:03",
        "#  3, E10:00",
    ]
    assert len(q.errors) == LOG_SIZE + 3


def test_clearing_the_errors_empties_the_log(q) -> None:
    q.handle("X=1")
    q.errors.clear()
    assert q.errors.codes() == [] and q.handle("LOG?") == "#  0, none"


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0 s"), (119, "119 s"), (150, "2 m"), (7199, "120 m"), (7200, "2 h")]
)
def test_ages_read_as_the_module_writes_them(seconds, text) -> None:
    assert _ago(seconds) == text


@given(st.text(max_size=16))
def test_every_error_reply_is_logged_once_and_nothing_else_is(chip, line: str) -> None:
    q = QontrolQ8iv(BenchWorld(chip, seed=SEED, clock=ManualClock()))
    reply = q.handle(line)
    if re.fullmatch(r"E\d\d:\d\d+", reply):
        assert q.errors.codes() == [int(reply[1:3])] and int(reply[1:3]) in QONTROL_ERRORS
    else:
        assert q.errors.codes() == []


def test_a_channel_in_digits_of_another_script_is_refused(q) -> None:
    assert q.handle("I\u0663=1") == "E10:00"  # an Arabic-Indic three
    assert not q.world.driver.currents().any()


# ---- HELP, NUP ----------------------------------------------------------------------------------
def test_help_lists_the_core_commands_and_every_error_code(q) -> None:
    text = q.handle("HELP")
    assert q.handle("help?") == text
    for code in QONTROL_ERRORS:
        assert f" {code:02d} " in text
    for core in ("V<ch>=", "I<ch>=", "VIPALL?", "VMAX<ch>=", "IMAX<ch>="):
        assert core in text


def test_nup_re_enumerates_and_names_the_chain(q) -> None:
    assert q.handle("NUP=5") == "OK"
    assert q.handle("NUP?") == q.handle("NUPALL?")
    assert _lines(q.handle("NUPALL?")) == [f"{d}: {k}" for k, d in enumerate(q.ids)]
    assert q.handle("NUP=-1") == "E11:00" and q.handle("NUP=") == "E11:00"


# ---- the manual's error check -------------------------------------------------------------------
def test_the_manual_counts_error_lines_not_log_entries() -> None:
    assert reply_errors(None, "I3=99", "E02:03") == ["E02:03"]
    assert reply_errors(None, "IVEC0=1,99", "OK\nE02:01") == ["E02:01"]
    assert reply_errors(None, "LOG?", "#  0, E02:02, 0 s ago") == []
    assert reply_errors(None, "HELP", None) == []
    assert MANUAL.errors is reply_errors and len(MANUAL.commands) >= 38
