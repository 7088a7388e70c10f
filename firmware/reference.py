"""Writes ``docs/commands.md``, the command reference, from the grammar of the default switch:
``python -m firmware.reference docs/commands.md`` (``make docs``); a test checks it is current."""

from __future__ import annotations

import sys
from pathlib import Path

from firmware.commands import command_reference, switch_grammar

#: The switch the reference shows ranges for: 8-port Clements chip with output rings.
PORTS, CHANNELS, RINGS, MAX_CURRENT_MA = 8, 72, 8, 10.0

INTRO = f"""# Command reference

Generated from `firmware.commands.switch_grammar` by `python -m firmware.reference` (`make
docs`); a test runs every example below against the controller, so it cannot drift.

A line holds commands joined by `;`; long (`ROUTe`) or short (`ROUT`) mnemonics, any case;
`?` makes a query; arguments after a space, separated by commas; numbers may carry a unit
suffix (`1.5mA`, `2 ms`) or be `MIN`, `MAX`, `DEF`. Ports, channels and rings are 0-based.
The whole line is parsed before anything runs; a command that fails changes nothing, puts its
error in the queue (`SYST:ERR?`) and stops the rest of the line.

Ranges are those of the default emulated switch: {PORTS} ports, {CHANNELS} heater channels
({RINGS} rings), {MAX_CURRENT_MA:g} mA per channel; `SYST:PORT?`, `HEAT:COUN?` and `RING:COUN?`
give a switch's own.
"""


def reference() -> str:
    return command_reference(switch_grammar(PORTS, CHANNELS, RINGS, MAX_CURRENT_MA), INTRO)


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(reference())
