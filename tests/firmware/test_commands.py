import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.commands import (
    MAX_LINE,
    MESSAGES,
    QUEUE_SIZE,
    ErrorQueue,
    Param,
    ScpiError,
    Spec,
    format_reply,
    parse_line,
)

GRAMMAR = (
    Spec("*IDN", settable=False, queryable=True),
    Spec("ROUTe:CONNect", (Param("a", "int", 0, 15), Param("b", "int", 0, 15))),
    Spec(
        "HEATer:CURRent",
        (Param("channel", "int", 0, 63), Param("current", "number", 0, 20, "mA")),
        queryable=True,
        query_params=(Param("channel", "int", 0, 63),),
    ),
    Spec("ROUTe:MATChing", (Param("ports", "list", 0, 15),), queryable=True),
    Spec("RING:LOCK", (Param("ring", "int", 0, 7), Param("on", "bool"))),
    Spec("CALibration:SAVE", (Param("name", "string", optional=True, default="default"),)),
    Spec("SCHedule:MODE", (Param("mode", "name", choices=("ONCE", "LOOP")),)),
)


def _code(line) -> int:
    with pytest.raises(ScpiError) as err:
        parse_line(line, GRAMMAR)
    return err.value.code


def _case_mix(word: str, flags: list[bool]) -> str:
    flags = (flags + [False] * len(word))[: len(word)]
    return "".join(c.lower() if f else c for c, f in zip(word, flags, strict=True))


@given(st.booleans(), st.booleans(), st.lists(st.booleans(), max_size=12), st.booleans())
def test_short_long_and_mixed_case_headers_name_one_command(long1, long2, flags, colon) -> None:
    words = ("ROUTE" if long1 else "ROUT") + ":" + ("CONNECT" if long2 else "CONN")
    line = (":" if colon else "") + _case_mix(words, flags) + " 3,4"
    (cmd,) = parse_line(line, GRAMMAR)
    assert cmd.spec.header == "ROUTe:CONNect" and cmd.args == (3, 4) and not cmd.query


@pytest.mark.parametrize(
    ("token", "mA"),
    [("12.5", 12.5), ("12.5mA", 12.5), ("0.01 A", 10.0), ("500uA", 0.5), ("1.5e1", 15.0)],
)
def test_numbers_take_unit_suffixes(token, mA) -> None:
    (cmd,) = parse_line(f"HEAT:CURR 3,{token}", GRAMMAR)
    assert cmd.args == (3, pytest.approx(mA))


def test_min_max_default_lists_bools_names_and_strings() -> None:
    cmds = parse_line(
        "HEAT:CURR MAX,MIN; rout:matc 0,5,1,4; RING:LOCK 2,ON; CAL:SAVE 'a;b'; SCH:MODE loop",
        GRAMMAR,
    )
    assert [c.args for c in cmds] == [
        (63, 0.0),
        ((0, 5, 1, 4),),
        (2, True),
        ("a;b",),  # a ';' inside quotes does not split the line
        ("LOOP",),
    ]
    assert parse_line("CAL:SAVE", GRAMMAR)[0].args == ("default",)
    (query,) = parse_line("HEAT:CURR? 7", GRAMMAR)
    assert query.query and query.args == (7,)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("FOO:BAR 1", -113),
        ("ROUT:CONN? 1,2", -113),  # no query form
        ("*IDN", -113),  # query only
        ("ROUT:CONN 1", -109),
        ("ROUT:CONN 1,2,3", -108),
        ("ROUT:CONN 1,x", -104),
        ("ROUT:CONN 1,2.5", -104),
        ("ROUT:CONN 1,,2", -103),
        ("ROUT:CONN 1,16", -222),
        ("HEAT:CURR 1,25mA", -222),
        ("HEAT:CURR 1,5 V", -131),
        ("ROUT:CONN 1mA,2", -131),
        ("RING:LOCK 1,maybe", -104),
        ("SCH:MODE twice", -141),
        ("CAL:SAVE unquoted", -104),
        ('CAL:SAVE "open', -150),
        ("ROUT:CONN 1,2\x00", -101),
        (b"ROUT:CONN 1,2\xff", -101),
        ("ROUT::CONN 1,2", -102),
        ("ROUT:MATC", -109),
        ("ROUT:CONN " + "1" * MAX_LINE, -363),
    ],
)
def test_bad_commands_get_their_standard_code(line, code) -> None:
    assert _code(line) == code
    assert code in MESSAGES


def test_a_bad_command_anywhere_on_a_line_rejects_the_line() -> None:
    assert _code("ROUT:CONN 1,2; BOGUS; ROUT:CONN 3,4") == -113


@given(st.binary(max_size=80))
def test_any_bytes_either_parse_or_raise_a_standard_error(data) -> None:
    try:
        commands = parse_line(data, GRAMMAR)
    except ScpiError as err:
        assert err.code in MESSAGES and err.code < 0
    else:
        assert all(c.spec in GRAMMAR for c in commands)


def test_error_queue_is_fifo_and_marks_overflow() -> None:
    q = ErrorQueue()
    assert q.pop().code == 0
    for i in range(QUEUE_SIZE + 5):
        q.push(ScpiError(-222, str(i)))
    assert len(q) == QUEUE_SIZE and q.codes()[-1] == -350
    assert q.pop().detail == "0" and q.pop().detail == "1"
    q.clear()
    assert q.pop().text == '"No error"'


def test_replies_and_error_texts() -> None:
    assert format_reply([1, 2.5, True]) == "1,2.5,1"
    err = ScpiError(-222, 'port "9" outside 0..7')
    assert str(err) == "-222,\"Data out of range;port '9' outside 0..7\""
