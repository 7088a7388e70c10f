"""The emulated Thorlabs PM100D power meter (:class:`PowerMeterPM100D`), on one chip output. Its
driver is :class:`hil.instruments.power_meters.PM100D`."""

from __future__ import annotations

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments.scpi import (
    Entry,
    ScpiInstrument,
    in_unit,
    unit_param,
    wavelength_param,
)
from hil.emulator.world import BenchWorld
from hil.instruments.power_meters import PM100D_WAVELENGTH_NM
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM
from photonics.errors import SettingsError


class PowerMeterPM100D(ScpiInstrument):
    """A Thorlabs PM100D power meter with a photodiode sensor (an S122C) on chip output ``port``
    (0-based). The ``SENSe`` root is optional, as the manual writes it (``[SENSe:]...``).

    ``MEAS[:SCAL][:POW]?`` and ``READ?`` (a reading now), ``CONF[:SCAL][:POW]`` (power is all
    it measures here), ``INIT[:IMM]`` then ``FETC?`` (the reading taken by INIT), each in the
    unit of ``[SENS:]POW[:DC]:UNIT W|DBM``; ``[SENS:]CORR:WAV`` (nm, kept: the response is
    flat; ``MIN``/``MAX`` ask the sensor's range), ``[SENS:]AVER[:COUN]`` (samples, kept),
    ``SYST:SENS:IDN?`` (name, serial, calibration date, type, subtype, flags: 289 = a power
    sensor, wavelength settable, temperature sensor), ``SYST:VERS?``. Numbers as Thorlabs writes
    them, ``1.234568E-06``. ``*RST``: 1550 nm, W, 1 sample, no reading.
    """

    #: ``SYST:SENS:IDN?``: the sensor's name, serial, calibration date, type (1 photodiode),
    #: subtype, flags (power sensor 1 + wavelength settable 32 + temperature sensor 256).
    SENSOR_IDN = "S122C,00000001,01-Jan-2025,1,18,289"

    def __init__(self, world: BenchWorld, port: int, serial: str = "P0000001") -> None:
        if not 0 <= port < world.n_ports:
            raise SettingsError(f"port must be in 0..{world.n_ports - 1}, got {port}")
        self.port = port
        super().__init__(world, f"Thorlabs,PM100D,{serial},2.8.0")

    def reset(self) -> None:
        self.wavelength_nm = REFERENCE_WAVELENGTH_NM
        self.unit = 1  # 0 dBm, 1 W
        self.averages = 1
        self.last: float | None = None

    def number(self, x: float) -> str:
        return f"{x:.6E}"

    def _reading(self, _: int = 0) -> float:
        return in_unit(float(self.world.output_power_mW()[self.port]), self.unit, 1e3)

    def _initiate(self, _: int) -> None:
        self.last = self._reading()

    def _fetch(self, _: int) -> float:
        if self.last is None:
            raise ScpiError(-221, "no reading: send INIT first")
        return self.last

    def _wavelength(self, _: int, limit: str | None = None) -> float:
        low, high = PM100D_WAVELENGTH_NM
        return {"MINIMUM": low, "MAXIMUM": high}.get(limit or "", self.wavelength_nm)

    def commands(self) -> list[Entry]:
        limit = Param("limit", "name", choices=("MINimum", "MAXimum"), optional=True)
        return [
            Entry("MEASure[:SCALar][:POWer]", query=self._reading),
            Entry("READ", query=self._reading),
            Entry("CONFigure[:SCALar][:POWer]", set=lambda _: None, query=lambda _: "POW"),
            Entry("INITiate[:IMMediate]", set=self._initiate),
            Entry("FETCh", query=self._fetch),
            Entry(
                "[SENSe:]CORRection:WAVelength",
                (wavelength_param(PM100D_WAVELENGTH_NM),),
                set=lambda _, nm: setattr(self, "wavelength_nm", nm),
                query=self._wavelength,
                query_params=(limit,),
            ),
            Entry(
                "[SENSe:]POWer[:DC]:UNIT",
                (unit_param(("DBM", "W")),),
                set=lambda _, u: setattr(self, "unit", 0 if u == "DBM" else 1),
                query=lambda _: ("DBM", "W")[self.unit],
            ),
            Entry(
                "[SENSe:]AVERage[:COUNt]",
                (Param("count", "int", 1, 10_000),),
                set=lambda _, n: setattr(self, "averages", n),
                query=lambda _: self.averages,
            ),
            Entry("SYSTem:SENSor:IDN", query=lambda _: self.SENSOR_IDN),
            Entry("SYSTem:VERSion", query=lambda _: "1999.0"),
        ]
