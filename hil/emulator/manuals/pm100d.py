"""The PM100D's programming manual as :mod:`hil.emulator.manuals` checks it (to be filled from
the manual)."""

from __future__ import annotations

from hil.emulator.instruments.pm100d import PowerMeterPM100D
from hil.emulator.manuals import Manual

MANUAL = Manual("PM100D", "", lambda world: PowerMeterPM100D(world, port=0), ())
