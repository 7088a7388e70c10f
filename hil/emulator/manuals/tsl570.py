"""The TSL-570's programming manual as :mod:`hil.emulator.manuals` checks it (to be filled from
the manual)."""

from __future__ import annotations

from hil.emulator.instruments.tsl570 import LaserTSL570
from hil.emulator.manual import Manual

MANUAL = Manual("TSL-570", "", LaserTSL570, ())
