"""The N7744C's programming manual as :mod:`hil.emulator.manuals` checks it (to be filled from
the manual)."""

from __future__ import annotations

from hil.emulator.instruments.power_meters import PowerMeterN7744A
from hil.emulator.manuals import Manual

MANUAL = Manual(
    "N7744C", "", lambda world: PowerMeterN7744A(world, 4, "MY00000001", "N7744C", range(4)), ()
)
