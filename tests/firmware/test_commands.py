import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.commands import (
    MAX_ARGUMENTS,
    MAX_COMMANDS,
    MAX_LINE,
    Param,
    Spec,
    command_line,
    format_reply,
    is_query,
    parse_line,
)
from firmware.scpi_errors import MESSAGES, QUEUE_SIZE, ErrorQueue, ScpiError
from photonics.errors import InvalidInputError

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
    Spec(
        "SCHedule:ADD",
        (
            Param("dwell", "number", 1e-6, 10, "s"),
            Param("ports", "list", 0, 15, optional=True, default=()),
        ),
    ),
    Spec("HEATer:ALL", (Param("currents", "numbers", 0, 20, "mA"),)),
    Spec(
        "SCHedule:LOAD",
        (
            Param(
                "steps",
                "groups",
                optional=True,
                default=(),
                fields=(Param("dwell", "number", 1e-6, 10, "s"), Param("port", "int", 0, 15)),
            ),
        ),
    ),
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
        # MIN / MAX / DEF where a parameter has no such value, in every kind and position
        ("ROUT:MATC DEF", -224),
        ("ROUT:MATC 0,1,DEF", -224),
        ("SCH:ADD 1,DEF", -224),  # an optional list: DEF is no element
        ("SCH:ADD 1,0,1,def", -224),
        ("SCH:ADD DEF", -224),
        ("HEAT:ALL 1,DEF", -224),
        ("SCH:LOAD 1,DEF,0,1", -224),
        ("SCH:LOAD DEF", -224),
        ("RING:LOCK 1,MAX", -104),
        ("SCH:MODE DEF", -141),
        ("CAL:SAVE MIN", -104),
        # integers are exact: never rounded
        ("ROUT:CONN 0.99999999999999999,2", -104),
        ("ROUT:CONN 2.5e0,3", -104),
        ("ROUT:CONN 1e-400,2", -104),
        ("ROUT:CONN 1e400,2", -222),
        ("HEAT:CURR 1,1e400", -222),
        ("HEAT:CURR 1,inf", -104),
        ("HEAT:CURR 1,nan", -104),
        ("HEAT:CURR 1,.", -104),
        ("ROUT:CONN " + "1" * 256 + ",2", -124),
        ("HEAT:CURR 1,1e32001", -123),
        ("HEAT:CURR 1,1e-32001", -123),
        ("HEAT:CURR 1,1e" + "0" * 40 + "9", -222),  # leading zeros of an exponent
        # groups
        ("SCH:LOAD 1", -109),
        ("SCH:LOAD 1,2,0", -109),
        ("SCH:LOAD 1,2,0,1.5", -104),
        ("SCH:LOAD 1,x", -104),
        ("SCH:LOAD 1,-1", -222),
        ("SCH:LOAD 1,0,1", -109),  # a second group cut short
        # bounded: commands per line, arguments per command
        (";".join(["*IDN?"] * (MAX_COMMANDS + 1)), -223),
        ("HEAT:ALL " + ",".join(["1"] * (MAX_ARGUMENTS + 1)), -223),
    ],
)
def test_bad_commands_get_their_standard_code(line, code) -> None:
    assert _code(line) == code
    assert code in MESSAGES


@pytest.mark.parametrize(
    ("line", "args"),
    [
        ("ROUT:MATC MIN,MAX", ((0, 15),)),  # in a list, MIN and MAX are the element's range ends
        ("SCH:ADD MIN", (1e-6, ())),
        ("SCH:ADD MAX,MIN,MAX", (10.0, (0, 15))),
        ("ROUT:CONN 2.0,+3", (2, 3)),  # an exact integer in any decimal form
        ("ROUT:CONN 20e-1,0.3E1", (2, 3)),
        ("ROUT:CONN " + "0" * 300 + "1,2", (1, 2)),  # leading zeros are not digits that count
        ("HEAT:CURR 1,-0", (1, 0.0)),
        ("HEAT:CURR 1,1e-400", (1, 0.0)),
        ("HEAT:CURR 1,MIN", (1, 0.0)),
        ("SCH:LOAD 2ms,4,0,1,2,3,MAX,0", (((0.002, (0, 1, 2, 3)), (10.0, ())),)),
        ("SCH:LOAD", ((),)),
    ],
)
def test_numbers_min_max_and_groups_read_exactly(line, args) -> None:
    (cmd,) = parse_line(line, GRAMMAR)
    assert cmd.args == args


@pytest.mark.parametrize(
    ("argument", "code"),
    [
        ("1" * MAX_LINE, -124),
        ("1" * MAX_LINE + "@", -104),  # the shape that backtracked: digits, then a stray char
        ("1." + "1" * MAX_LINE + "@", -104),
        ("1e" + "1" * MAX_LINE + "@", -104),
        ("1" + " " * MAX_LINE + "@", -104),
        ("1 " + "m" * MAX_LINE + "@", -104),
        ("'" + "a" * MAX_LINE + "'", -104),
    ],
)
def test_a_longest_argument_of_any_shape_is_rejected_in_one_pass(argument, code) -> None:
    # a regular expression that backtracks took seconds on such lines; this one is linear
    line = ("ROUT:CONN " + argument)[: MAX_LINE - 1] + argument[-1]
    assert _code(line) == code
    header = "A" * (MAX_LINE - 1) + "@"
    assert _code(header) == -102


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


@pytest.mark.parametrize(
    ("line", "asks"),
    [
        ("*IDN?", True),
        (" :syst:err? ", True),
        (b"ROUT:CLE;SYST:ERR?", True),
        ("ROUT:MATC 0,1", False),
        ('CAL:SAVE "what?"', False),  # a '?' inside quotes asks nothing
        ("CAL:SAVE 'x;SYST:ERR?'", False),
        ('CAL:SAVE "open?', False),
        ('ROUT:MATC? "open', True),
        ("", False),
        ("SYST:ERR?x", False),
    ],
)
def test_a_line_is_a_query_when_a_header_ends_in_a_question_mark(line, asks) -> None:
    assert is_query(line) is asks


CONN, CURR, MATC, LOCK, SAVE, MODE, ALL, LOAD = (
    next(s for s in GRAMMAR if s.header == h)
    for h in (
        "ROUTe:CONNect",
        "HEATer:CURRent",
        "ROUTe:MATChing",
        "RING:LOCK",
        "CALibration:SAVE",
        "SCHedule:MODE",
        "HEATer:ALL",
        "SCHedule:LOAD",
    )
)


@pytest.mark.parametrize(
    ("spec", "args"),
    [
        (CONN, ("4,5;ROUT:DISC 0;ROUT:CONN 6", 7)),  # a string where an integer goes
        (CONN, (4.0, 5)),  # a float, even a whole one
        (CONN, (True, 1)),  # a bool is no integer
        (CONN, (1,)),
        (CONN, (1, 2, 3)),
        (CONN, (1, 16)),  # outside the range
        (CURR, (1, float("nan"))),
        (CURR, (1, "1")),
        (CURR, (1, 25)),
        (LOCK, (1, None)),
        (LOCK, (1, 0)),  # booleans only
        (LOCK, (1, "")),
        (SAVE, ('a"b',)),
        (SAVE, ("a\nb",)),
        (SAVE, ("caf\u00e9",)),
        (MODE, ("twice",)),
        (MODE, ("LOOP;*RST",)),
        (MATC, ([(0, 1.0)],)),
        (MATC, (["0,1"],)),
        (ALL, ([1.0, float("inf")],)),
        (LOAD, ((1e-3, [(0, 1)]), (0.0, []))),  # a dwell out of range
        (LOAD, ((1e-3, "0,1"),)),
        (LOAD, ((1e-3,),)),
        (LOAD, ((1e-3, [(0, 1)], 7),)),
        (ALL, ([1.0] * MAX_LINE,)),  # the line would be too long
    ],
)
def test_command_line_refuses_what_the_command_cannot_take(spec, args) -> None:
    with pytest.raises(InvalidInputError):
        command_line(spec, *args)


@given(st.text(max_size=30))
def test_a_string_is_sent_quoted_and_read_back_whole_or_refused(text) -> None:
    try:
        line = command_line(SAVE, text)
    except InvalidInputError:
        assert any(c in "\"'" or not (c.isascii() and c.isprintable()) for c in text)
        return
    (cmd,) = parse_line(line, GRAMMAR)
    assert cmd.args == (text,)


@given(
    st.integers(0, 63),
    st.floats(0, 20),
    st.lists(st.tuples(st.floats(1e-6, 10), st.lists(st.integers(0, 15), max_size=4)), max_size=4),
)
def test_numbers_and_groups_read_back_exactly(channel, current, steps) -> None:
    (cmd,) = parse_line(command_line(CURR, channel, current), GRAMMAR)
    assert cmd.args == (channel, current)
    (cmd,) = parse_line(command_line(LOAD, *steps), GRAMMAR)
    assert cmd.args == (tuple((d, tuple(p)) for d, p in steps),)
