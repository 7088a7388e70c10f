"""The 8164B's programming manual as :mod:`hil.emulator.manuals` checks it (to be filled from
the manual)."""

from __future__ import annotations

from hil.emulator.instruments.lasers import Mainframe8164B
from hil.emulator.manuals import Manual

MANUAL = Manual("8164B", "", Mainframe8164B, ())
