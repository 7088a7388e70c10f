"""The switch controller: the device-side state machine that runs the command language.

:class:`Controller` joins the subsystems, each a module of this package that declares and
handles its commands (:mod:`firmware.declarations`): :mod:`~firmware.controller.system`
(``*IDN``, ``*RST``, ``SYSTem``, ``STATus``), :mod:`~firmware.controller.routes` (``ROUTe``,
``HEATer``), :mod:`~firmware.controller.measure` (``MEASure``),
:mod:`~firmware.controller.calibration` (``CALibration``),
:mod:`~firmware.controller.rings` (``RING``) and :mod:`~firmware.controller.schedule`
(``SCHedule``), on :mod:`~firmware.controller.core` (the line protocol, the state, atomic
application of heater currents, persistence). The command reference lists the commands in
the order of the subsystems below. :mod:`~firmware.controller.session` keeps the clients
apart: a :class:`Session` each (error queue, ``*OPC``, overlapped operations), one device lock.
"""

from __future__ import annotations

from firmware.controller.calibration import CalibrationCommands
from firmware.controller.core import Core
from firmware.controller.measure import MeasureCommands
from firmware.controller.rings import RingCommands, Rings
from firmware.controller.routes import HeaterCommands, RouteCommands
from firmware.controller.schedule import ScheduleCommands
from firmware.controller.session import Session
from firmware.controller.system import SystemCommands
from firmware.driver import ChipDriver
from firmware.store import Store
from photonics.chips.calibration import Calibration
from photonics.chips.switch import Fabric
from photonics.devices.thermal import HeaterLayout


class Controller(
    SystemCommands,
    RouteCommands,
    HeaterCommands,
    MeasureCommands,
    CalibrationCommands,
    RingCommands,
    ScheduleCommands,
):
    """The firmware of one switch: ``driver`` (the heaters and detectors), ``fabric`` (how a
    matching becomes cell states), optionally ``store`` (non-volatile memory), ``rings``, the
    factory calibration (a calibration in the store wins over it), the identity strings for
    ``*IDN?`` and, when known, the chip's ``heater_layout`` (its design: with it CAL:RUN
    calibrates thermal crosstalk where the layout makes it matter)."""

    def __init__(
        self,
        driver: ChipDriver,
        fabric: Fabric,
        store: Store | None = None,
        rings: Rings | None = None,
        calibration: Calibration | None = None,
        model: str = "EMULATED",
        serial: str = "0",
        heater_layout: HeaterLayout | None = None,
    ) -> None:
        self.rings = rings or Rings()
        self.heater_layout = heater_layout
        self._curves = {}
        n_rings = len(self.rings.channels)
        super().__init__(driver, fabric, store, calibration, n_rings, model, serial)


__all__ = ["Controller", "Core", "Rings", "Session"]
