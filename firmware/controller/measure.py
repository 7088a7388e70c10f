"""The switch's ``MEASure`` commands: its monitor photodiodes, one per endpoint, on the wire.

A photodiode reads the light arriving at its endpoint now, through the applied configuration:
the light from outside the chip (:meth:`~firmware.driver.ChipDriver.monitor`), never a test
source of the switch's own. On the emulator every endpoint sends ``launch_mW``
(:data:`~firmware.driver.LAUNCH_MW`, 1 mW = 0 dBm, unless
:meth:`~firmware.sdk.Switch.emulated` is told otherwise), so a port of a circuit reads its
partner's light less the circuit's loss, plus crosstalk; on a bench, what its laser sends
through the fibre switch, as the power meter reads it.

A reading below :data:`FLOOR_DBM` (dark, or the photodiode's noise, which can read below
zero) is reported as the floor in either unit: a dark port reads ``1e-06`` mW or ``-60``
dBm, never a negative power or ``-inf``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from firmware.commands import Param
from firmware.controller.core import PORT, Core
from firmware.declarations import query

#: The photodiodes' reporting floor, dBm: the emulated photodiodes' noise (1e-6 mW,
#: ``FabricationSpec.noise_floor_mW``); readings below it are reported as it.
FLOOR_DBM = -60.0
#: :data:`FLOOR_DBM` in mW.
FLOOR_MW = 10 ** (FLOOR_DBM / 10)
#: The units a reading can be asked in (any case): mW, or dBm (dB above 1 mW).
UNITS = ("MW", "DBM")
UNIT = Param("unit", "name", choices=UNITS, default="MW", optional=True)


def in_unit(power_mW: Sequence[float] | np.ndarray, unit: str) -> np.ndarray:
    """Readings (mW) at least :data:`FLOOR_MW`, in ``unit`` (one of :data:`UNITS`, any case):
    mW, or dBm."""
    floored = np.maximum(np.asarray(power_mW, dtype=float), FLOOR_MW)
    return 10 * np.log10(floored) if unit.upper() == "DBM" else floored


class MeasureCommands(Core):
    """``MEASure:...``: the light arriving at the endpoints."""

    @query(
        "MEASure:POWer",
        PORT,
        UNIT,
        reply="number, mW or dBm",
        summary="Power arriving at one port's monitor photodiode now, mW or dBm: the light the "
        "endpoints send (on the emulator 1 mW each), through the applied circuits. A reading "
        "below -60 dBm (1e-6 mW: dark, or the photodiode's noise) reads as -60 dBm.",
        example="MEAS:POW? 3,DBM",
        errors="-240 the detectors failed",
    )
    def port_power(self, port: int, unit: str) -> float:
        return float(in_unit(self.driver.monitor([port]), unit)[0])

    @query(
        "MEASure:POWer:ALL",
        UNIT,
        reply="comma-separated numbers, one per port in port order, mW or dBm",
        summary="Every port's monitor photodiode, read together (as MEAS:POW?).",
        example="MEAS:POW:ALL? DBM",
        errors="-240 the detectors failed",
    )
    def all_powers(self, unit: str) -> list[float]:
        return in_unit(self.driver.monitor(), unit).tolist()
