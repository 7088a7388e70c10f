"""Every emulated model accepts its programming manual's command list (hil.emulator.manuals)."""

from __future__ import annotations

import pytest

from hil.emulator.manuals import ManualCommand, check, manuals

MANUALS = manuals()


@pytest.mark.parametrize("manual", MANUALS, ids=[m.model for m in MANUALS])
def test_every_manual_command_is_accepted(manual) -> None:
    refused = [f"{r.command.syntax}: {r.problems[0]}" for r in check(manual) if not r.accepted]
    assert refused == []


@pytest.mark.parametrize("manual", MANUALS, ids=[m.model for m in MANUALS])
def test_each_entry_names_its_manual_section_and_lines(manual) -> None:
    assert manual.commands, f"{manual.model}: no commands listed"
    for c in manual.commands:
        assert isinstance(c, ManualCommand) and c.lines and c.section.strip(), c.syntax
    syntaxes = [c.syntax for c in manual.commands]
    assert len(set(syntaxes)) == len(syntaxes), "a command listed twice"


def test_the_check_counts_a_refused_command() -> None:
    from hil.emulator.instruments import PowerMeterPM100D
    from hil.emulator.manuals import Manual

    bogus = ManualCommand("BOGus:NODE", ("BOG:NODE 1",), False, "nowhere")
    real = ManualCommand("*IDN?", ("*IDN?",), True, "IEEE 488.2")
    manual = Manual("PM100D", "t", lambda w: PowerMeterPM100D(w, 0), (real, bogus))
    accepted = [r.accepted for r in check(manual)]
    assert accepted == [True, False]
