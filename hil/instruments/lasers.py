"""Tunable lasers: a Keysight 8164B mainframe's laser module and a Santec TSL-570, behind one
:class:`Laser` protocol. Wavelengths in nm, powers in mW."""

from __future__ import annotations

import math
from typing import Protocol

from hil.errors import InstrumentError
from hil.instruments.base import MAINFRAME_SLOTS, Connection, ScpiDriver, check_index, check_range

#: 8164B tunable laser module (81600B class): wavelength range, nm, and output power, mW
#: (-20 .. +10 dBm).
KEYSIGHT_LASER_WAVELENGTH_NM = (1460.0, 1640.0)
KEYSIGHT_LASER_POWER_MW = (0.01, 10.0)
#: Santec TSL-570: wavelength range, nm, and output power, mW (-15 .. +13 dBm).
TSL570_WAVELENGTH_NM = (1480.0, 1640.0)
TSL570_POWER_MW = (10**-1.5, 10**1.3)


class Laser(Protocol):
    """What a bench routine needs from a tunable laser."""

    def set_wavelength_nm(self, nm: float) -> None: ...

    def wavelength_nm(self) -> float: ...

    def set_power_mW(self, mW: float) -> None: ...

    def power_mW(self) -> float:
        """The set output power, mW."""
        ...

    def on(self) -> None: ...

    def off(self) -> None: ...

    def is_on(self) -> bool: ...


def _to_mW(resource: str, value: str, unit: str, linear_mW: float) -> float:
    """A power reply in the instrument's unit (``unit`` reply ``0``: dBm, ``1``: linear, where
    one linear unit is ``linear_mW``) in mW."""
    code = int(float(unit))
    if code not in (0, 1):
        raise InstrumentError(resource, f"unknown power unit {unit!r}")
    x = float(value)
    return 10 ** (x / 10) if code == 0 else x * linear_mW


class Laser8164B(ScpiDriver):
    """The tunable laser in slot ``slot`` of a Keysight 8164B mainframe. The wire speaks
    metres and W or dBm (``:SOUR<n>:POW:UNIT``); this driver speaks nm and mW."""

    def __init__(self, conn: Connection, slot: int = 0) -> None:
        super().__init__(conn)
        self.slot = check_index(conn.resource, "slot", slot, MAINFRAME_SLOTS)

    def set_wavelength_nm(self, nm: float) -> None:
        nm = check_range(self.resource, "wavelength", nm, *KEYSIGHT_LASER_WAVELENGTH_NM, "nm")
        self._set(f":SOUR{self.slot}:WAV {nm!r}NM")

    def wavelength_nm(self) -> float:
        return 1e9 * float(self._query(f":SOUR{self.slot}:WAV?"))

    def set_power_mW(self, mW: float) -> None:
        mW = check_range(self.resource, "power", mW, *KEYSIGHT_LASER_POWER_MW, "mW")
        self._set(f":SOUR{self.slot}:POW {mW!r}MW")

    def power_mW(self) -> float:
        s = self.slot
        unit, value = self._query(f":SOUR{s}:POW:UNIT?;:SOUR{s}:POW?").split(";")
        return _to_mW(self.resource, value, unit, 1e3)

    def on(self) -> None:
        self._set(f":SOUR{self.slot}:POW:STAT 1")

    def off(self) -> None:
        self._set(f":SOUR{self.slot}:POW:STAT 0")

    def is_on(self) -> bool:
        return float(self._query(f":SOUR{self.slot}:POW:STAT?")) == 1


class TSL570(ScpiDriver):
    """A Santec TSL-570 tunable laser. Its ``:POW`` value is in the unit chosen by
    ``:POW:UNIT`` (0 dBm, 1 mW); this driver reads the unit and converts, both ways."""

    def set_wavelength_nm(self, nm: float) -> None:
        nm = check_range(self.resource, "wavelength", nm, *TSL570_WAVELENGTH_NM, "nm")
        self._set(f":WAV {nm!r}")

    def wavelength_nm(self) -> float:
        return float(self._query(":WAV?"))

    def set_power_mW(self, mW: float) -> None:
        mW = check_range(self.resource, "power", mW, *TSL570_POWER_MW, "mW")
        dbm = int(float(self._query(":POW:UNIT?"))) == 0
        self._set(f":POW {10 * math.log10(mW)!r}" if dbm else f":POW {mW!r}")

    def power_mW(self) -> float:
        unit, value = self._query(":POW:UNIT?;:POW?").split(";")
        return _to_mW(self.resource, value, unit, 1.0)

    def actual_power_mW(self) -> float:
        """The output power the laser monitors now, mW (about 0 when off)."""
        unit, value = self._query(":POW:UNIT?;:POW:ACT?").split(";")
        return _to_mW(self.resource, value, unit, 1.0)

    def on(self) -> None:
        self._set(":POW:STAT 1")

    def off(self) -> None:
        self._set(":POW:STAT 0")

    def is_on(self) -> bool:
        return float(self._query(":POW:STAT?")) == 1
