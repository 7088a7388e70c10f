"""The Q8iv's programming manual as :mod:`hil.emulator.manuals` checks it (to be filled from
the manual)."""

from __future__ import annotations

from hil.emulator.instruments.qontrol import QontrolQ8iv
from hil.emulator.manual import Manual

MANUAL = Manual("Q8iv", "", QontrolQ8iv, ())
