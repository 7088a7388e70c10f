"""Commands declared on their handlers: the grammar, the reference, the SDK's lines and the
error drain all come from the declarations."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.commands import Bound, Param, command_line, parse_line
from firmware.controller import Controller
from firmware.declarations import bind, command, command_reference, declarations, query
from firmware.scpi_errors import ScpiError, drain_errors
from firmware.sdk import COMMANDS, Switch


class Lamp:
    """A toy device: one settable and queryable command, one query-only command."""

    @command(
        "LAMP:LEVel",
        Param("lamp", "int", 0, Bound("lamps", -1)),
        Param("level", "number", 0, 100, "mW"),
        summary="Set a lamp.",
        example="LAMP:LEV 0,5",
        errors="-221 the lamp is broken",
    )
    def set_level(self, lamp: int, level: float) -> None: ...

    @query("LAMP:LEVel", Param("lamp", "int", 0, Bound("lamps", -1)), reply="number, mW")
    def level(self, lamp: int) -> float: ...

    @query("LAMP:COUNt", reply="integer", summary="Number of lamps.", example="LAMP:COUN?")
    def count(self) -> int: ...


def test_declarations_give_one_spec_per_header_naming_its_handlers() -> None:
    level, count = declarations(Lamp)
    assert (level.header, level.settable, level.queryable) == ("LAMP:LEVel", True, True)
    assert (level.set_handler, level.query_handler) == ("set_level", "level")
    assert level.errors == "-221 the lamp is broken" and level.example == "LAMP:LEV 0,5"
    assert (count.settable, count.queryable, count.query_handler) == (False, True, "count")
    assert level.short == "LAMP:LEV" and count.short == "LAMP:COUN"


def test_bounds_are_fixed_when_the_grammar_is_bound_to_a_device() -> None:
    grammar = bind(declarations(Lamp), lamps=3)
    (cmd,) = parse_line("lamp:level 2,7.5", grammar)
    assert cmd.args == (2, 7.5) and cmd.spec.set_handler == "set_level"
    with pytest.raises(ScpiError) as err:
        parse_line("LAMP:LEV? 3", grammar)
    assert err.value.code == -222 and "0..2" in str(err.value)
    text = command_reference(grammar, "# Lamps")
    assert "## `LAMP:LEVel`" in text and "- errors: -221 the lamp is broken" in text
    assert "- `lamp`: integer 0 .. 2" in text and "Example: `LAMP:COUN?`" in text


def test_a_header_in_two_spellings_or_without_an_example_is_refused() -> None:
    class Twice:
        @command("LAMP:LEVel", summary="a", example="LAMP:LEV")
        def a(self) -> None: ...

        @query("LAMP:LEVEL", reply="b")
        def b(self) -> None: ...

    class Silent:
        @command("LAMP:OFF", summary="a")
        def a(self) -> None: ...

    with pytest.raises(TypeError, match="two spellings"):
        declarations(Twice)
    with pytest.raises(TypeError, match="without an example"):
        declarations(Silent)


def test_a_new_switch_command_is_one_declared_method() -> None:
    class Beeping(Controller):
        @query("SYSTem:BEEP", reply="integer", summary="Beep.", example="SYST:BEEP?")
        def beep(self) -> int:
            return 7

    base = Switch.emulated(ports=4, seed=1).transport.controller
    beeper = Beeping(base.driver, base.fabric, calibration=base.calibration)
    assert beeper.handle("SYST:BEEP?;SYST:PORT?") == "7;4"
    assert "SYSTem:BEEP" not in {s.header for s in Controller.DECLARED}
    assert command_reference(beeper.grammar, "# x").count("## `SYSTem:BEEP`") == 1


def test_the_sdk_writes_only_commands_the_controller_declares() -> None:
    assert {s.header: s for s in Controller.DECLARED} == COMMANDS
    grammar = Switch.emulated(ports=4).transport.controller.grammar
    line = command_line(COMMANDS["ROUTe:MATChing"], [(0, 1), (2, 3)])
    assert line == "ROUT:MATC 0,1,2,3" and parse_line(line, grammar)[0].args == ((0, 1, 2, 3),)
    assert command_line(COMMANDS["SYSTem:INTerlock"], True) == "SYST:INT ON"
    assert command_line(COMMANDS["HEATer:CURRent"], np.int64(3), np.float64(0.1)) == (
        "HEAT:CURR 3,0.1"
    )
    with pytest.raises(ValueError, match="no set form"):
        command_line(COMMANDS["SYSTem:ERRor"])


def test_a_switch_binds_every_range_and_its_sdk_the_ones_a_client_can_know() -> None:
    sw = Switch.emulated(ports=4, seed=1)
    params = [p for s in sw.transport.controller.grammar for p in (*s.params, *s.query_params)]
    params += [f for p in params for f in p.fields]
    assert not any(isinstance(x, Bound) for p in params for x in (p.low, p.high))
    assert sw.commands["ROUTe:CONNect"].params[1].high == 3
    assert sw.commands["SCHedule:LOAD"].params[0].fields[1].high == 3
    assert isinstance(sw.commands["HEATer:CURRent"].params[1].high, Bound)  # the switch checks


@given(st.lists(st.tuples(st.integers(-399, -100), st.text("abc;, '", max_size=8)), max_size=20))
def test_the_error_drain_reads_every_entry_oldest_first(entries) -> None:
    queue = [f'{code},"{text}"' for code, text in entries] + ['0,"No error"']
    asked = []

    def ask(line: str) -> str:
        asked.append(line)
        return queue.pop(0)

    assert drain_errors(ask) == [(code, text) for code, text in entries]
    assert asked == ["SYST:ERR?"] * (len(entries) + 1)


def test_an_unreadable_or_endless_queue_is_an_error_not_a_hang() -> None:
    with pytest.raises(ValueError, match="unreadable"):
        drain_errors(lambda line: "garbage")
    with pytest.raises(ValueError, match="did not empty"):
        drain_errors(lambda line: '-100,"Command error"')
