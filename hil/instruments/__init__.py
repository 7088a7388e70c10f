"""Typed drivers of the bench instruments, over a session (:mod:`hil.visa`) or any
:class:`~hil.instruments.base.Connection` (:class:`~hil.instruments.base.Loopback` reaches an
emulated instrument in this process). Units: wavelength nm, power mW, current mA, voltage V,
time s; channels and ports 0-based.

- :class:`N7744A`: Keysight N7744A/N7745A multichannel power meter (readings, logging);
- :class:`PM100D`: Thorlabs PM100D power meter;
- :class:`Laser8164B` and :class:`TSL570`: tunable lasers, both a :class:`Laser`;
- :class:`OpticalSwitch`: the 1xN fibre switch module of an 8164B mainframe;
- :class:`Qontrol`: Qontrol heater driver, also a firmware :class:`~firmware.driver.ChipDriver`
  (with :class:`~hil.instruments.base.Detectors`, the firmware controller runs on the host);
- the switch controller's driver is the SDK's :class:`firmware.sdk.Switch`
  (``Switch.open(resource)``), nothing more here.

Every set command is followed by a check of the instrument's error queue (``SYST:ERR?``, or
the Qontrol's ``E<code>`` reply); an error is raised as
:class:`~hil.errors.InstrumentReportedError` with its code. Arguments are checked before anything
is sent (:class:`~photonics.errors.SettingsError` naming the value and the range).
"""

from hil.instruments.base import Connection, Detectors, Loopback, ScpiDriver
from hil.instruments.lasers import TSL570, Laser, Laser8164B
from hil.instruments.power_meters import N7744A, PM100D
from hil.instruments.qontrol import QONTROL_ERRORS, Qontrol
from hil.instruments.switch import OpticalSwitch

__all__ = [
    "N7744A",
    "PM100D",
    "QONTROL_ERRORS",
    "TSL570",
    "Connection",
    "Detectors",
    "Laser",
    "Laser8164B",
    "Loopback",
    "OpticalSwitch",
    "Qontrol",
    "ScpiDriver",
]
