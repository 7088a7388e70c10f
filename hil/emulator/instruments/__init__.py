"""Emulated bench instruments over one :class:`~hil.emulator.world.BenchWorld`: each has
``handle(line) -> str | bytes | None`` (the reply without terminator; bytes for a binary block;
None when there is no reply), as the servers of :mod:`hil.emulator.server` call it. One module
per family, as the drivers in :mod:`hil.instruments`:

- :mod:`~hil.emulator.instruments.scpi`: :class:`ScpiInstrument`, the base of the SCPI ones
  (the parsing, the IEEE 488.2 commands, the error queue), and :class:`Entry`;
- :mod:`~hil.emulator.instruments.power_meters`: :class:`PowerMeterN7744A`;
- :mod:`~hil.emulator.instruments.pm100d`: :class:`PowerMeterPM100D`;
- :mod:`~hil.emulator.instruments.lasers`: :class:`Mainframe8164B` (laser and 1xN switch);
- :mod:`~hil.emulator.instruments.tsl570`: :class:`LaserTSL570`;
- :mod:`~hil.emulator.instruments.qontrol`: :class:`QontrolQ8iv`, on Qontrol's own line protocol.

The pswitch switch controller is ``world.controller`` itself, served with a session per
connection by :class:`hil.emulator.bench.SwitchFirmware`.
"""

from hil.emulator.instruments.lasers import Mainframe8164B
from hil.emulator.instruments.pm100d import PowerMeterPM100D
from hil.emulator.instruments.power_meters import PowerMeterN7744A
from hil.emulator.instruments.qontrol import QontrolQ8iv
from hil.emulator.instruments.scpi import DBM_FLOOR, Entry, ScpiInstrument, dbm, float32_block
from hil.emulator.instruments.tsl570 import LaserTSL570

__all__ = [
    "DBM_FLOOR",
    "Entry",
    "LaserTSL570",
    "Mainframe8164B",
    "PowerMeterN7744A",
    "PowerMeterPM100D",
    "QontrolQ8iv",
    "ScpiInstrument",
    "dbm",
    "float32_block",
]
