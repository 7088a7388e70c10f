"""The emulated Thorlabs PM100D power meter (:class:`PowerMeterPM100D`), on one chip output, as
the *Thorlabs PM100D Operation Manual*, chapter 6.4 "PM100D SCPI Commands" (section 6.4.2, the
command reference; pages of the edition reproduced at easymanua.ls/thorlabs/pm100d) defines
it. The command table is :mod:`hil.emulator.instruments.pm100d_commands`. Its driver here is
:class:`hil.instruments.power_meters.PM100D`.

What the emulation models, on the light the world puts on its chip output:

- power: the world's power (W; ``POW:UNIT DBM``: dBm), averaged over ``AVER:COUN`` samples of
  3 ms each (the manual: "1 sample takes approx. 3 ms"); the light is taken to be at the
  corrected wavelength, so the power reads true whatever ``CORR:WAV`` says;
- the photocurrent (``MEAS:CURR?``, A): power x the sensor's responsivity at ``CORR:WAV``
  (:func:`responsivity`, an InGaAs curve over 800..1700 nm, the emulation's); a responsivity
  set with ``CORR:POW:PDI:RESP`` replaces it in the power computed from the current (a wrong
  one mis-reads the power, as on the console), until ``*RST`` or a new wavelength;
- attenuation (``CORR:LOSS:INP:MAGN``, dB): the power reading is divided by the attenuator's
  transmission, 10^(-dB/10) (the power before it); the current is not;
- the zero (``CORR:COLL:ZERO``): the photocurrent now is the dark offset (A, ``ZERO:MAGN?``),
  subtracted from every later current and power (on a lit input it takes the light too);
- delta mode (``POW:REF``/``POW:REF:STAT``, ``CURR:REF``/``CURR:REF:STAT``): the reading less
  the reference (in dBm, the ratio to it in dB);
- power density (``MEAS:PDEN?``, W/cm^2): power over the beam's area (``CORR:BEAM``, mm);
- ranges: the photodiode's six current ranges (50 nA .. 5 mA, decades), the power range each
  divided by the responsivity; ``RANG:AUTO`` on picks the smallest range the last reading fits,
  a range set switches auto off; a reading over a manual range is still returned and sets the
  questionable condition (bit 3 power, bit 1 current: SCPI's);
- status: OPERation bit 8 (sensor connected: always) and bit 9 (data ready for ``FETC?``:
  after ``INIT`` or ``MEAS`` written without ``?``, until ``ABOR``, ``CONF`` or ``*RST``); the
  Thorlabs MEASurement and AUXillary registers (status byte bits 1 and 0, the driver header
  PM100D.h) with no condition bits (their bits are reserved, or report hardware this bench
  has not: NTC, external supply, battery).

Everything else is accepted, range-checked and kept: line frequency, date and time, beeper,
display, voltage, energy and frequency settings of thermal and pyroelectric sensors, the
thermopile accelerator, the adapter type, the photodiode filter, the peak detector. Their
defaults and ranges, where the manual gives none, are the emulation's (stated in the table).
Numbers are written as Thorlabs writes them, ``1.234568E-06``.
"""

from __future__ import annotations

import math

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments.pm100d_commands import CURRENT_RANGES_A
from hil.emulator.instruments.scpi import Entry, ScpiInstrument, dbm
from hil.emulator.world import BenchWorld
from hil.instruments.power_meters import PM100D_WAVELENGTH_NM
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM
from photonics.errors import SettingsError

#: One averaged sample, s (the manual: "1 sample takes approx. 3 ms").
SAMPLE_S = 3e-3
#: OPERation condition bits (Thorlabs PM100D.h): sensor connected, data ready for fetch.
OPER_SENSOR, OPER_DATA = 1 << 8, 1 << 9
#: QUEStionable condition bits (SCPI 1999 Vol. 1, 9.5; PM100D.h): current, power.
QUES_CURRENT, QUES_POWER = 1 << 1, 1 << 3
#: The status byte bits of the Thorlabs registers (PM100D.h): auxiliary 0, measurement 1.
STB_AUX, STB_MEAS = 1, 2
#: The kept settings ``*RST`` leaves (keys of ``kept``).
SYSTEM_SETTINGS = ("date", "time", "SYSTem:LFRequency")


def responsivity(nm: float) -> float:
    """The emulated InGaAs sensor's responsivity at ``nm``, A/W: quantum efficiency 0.8 at
    1300 nm rolling off to the ends of 800..1700 nm, times lambda/1239.84 (about 0.98 A/W at
    1550 nm, 0.38 at 800)."""
    efficiency = 0.8 * (1 - ((nm - 1300.0) / 700.0) ** 4)
    return efficiency * nm / 1239.84


class PowerMeterPM100D(ScpiInstrument):
    """A Thorlabs PM100D with a photodiode sensor (the S122C of ``SYST:SENS:IDN?``) on chip
    output ``port`` (0-based). See the module docstring; ``*RST``: 1550 nm, W, one sample, no
    attenuation, zero or reference, auto range, power measurement."""

    #: ``SYST:SENS:IDN?``: name, serial, calibration date, type (1 photodiode), subtype (18:
    #: with temperature sensor), flags (power sensor 1 + wavelength settable 32 + temperature
    #: sensor 256), the manual p. 49.
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
        self.attenuation_db = 0.0
        self.zero_A = 0.0
        self.user_responsivity: float | None = None
        self.range_index, self.auto_range = len(CURRENT_RANGES_A) - 1, True
        self.over_range = False  # the last reading exceeded a manual range
        self.power_reference_W, self.power_delta = 0.0, False
        self.current_reference_A, self.current_delta = 0.0, False
        self.beam_mm = 9.5
        self.function = "POW"
        self.last: float | None = None
        # settings kept and read back (pm100d_commands); date, time and line frequency are the
        # system's, kept over *RST (SCPI 1999 Vol. 2, 21: *RST leaves them)
        kept = getattr(self, "kept", {})
        self.kept: dict[str, object] = {k: kept[k] for k in SYSTEM_SETTINGS if k in kept}

    def number(self, x: float) -> str:
        return f"{x:.6E}"

    def bare_unit(self, number: int, param: Param) -> str:
        """A bare power is in W, a current in A (the manual's units)."""
        return {"mW": "W", "mA": "A"}.get(param.unit, "")

    def commands(self) -> list[Entry]:
        from hil.emulator.instruments.pm100d_commands import entries

        return entries(self)

    # ---- status (the base's registers, and Thorlabs' two) ----------------------------------------
    def status_nodes(self) -> dict:
        return {
            **super().status_nodes(),
            "MEASurement": (lambda: 0, STB_MEAS),
            "AUXillary": (lambda: 0, STB_AUX),
        }

    def operation_condition(self) -> int:
        return OPER_SENSOR | OPER_DATA * (self.last is not None)

    def questionable_condition(self) -> int:
        return (QUES_POWER | QUES_CURRENT) * self.over_range

    # ---- the sensor ------------------------------------------------------------------------------
    def responsivity_AW(self) -> float:
        """The responsivity the console computes power with, A/W (set, or the sensor's)."""
        if self.user_responsivity is not None:
            return self.user_responsivity
        return responsivity(self.wavelength_nm)

    def set_wavelength(self, nm: float) -> None:
        self.wavelength_nm, self.user_responsivity = nm, None

    def wavelength(self, limit: str | None) -> float:
        low, high = PM100D_WAVELENGTH_NM
        ends = {"MINIMUM": low, "MAXIMUM": high, "DEFAULT": REFERENCE_WAVELENGTH_NM}
        return ends.get(limit or "", self.wavelength_nm)

    def photocurrent_A(self) -> float:
        """The photocurrent now, less the zero, A (averaged over the samples)."""
        averaging_s = self.averages * SAMPLE_S
        mW = float(self.world.reading_mW(averaging_s)[self.port])  # the samples after now
        current = 1e-3 * mW * responsivity(self.wavelength_nm) - self.zero_A
        self._track_range(abs(current))
        return current

    def _track_range(self, current_A: float) -> None:
        """Auto range: the smallest range the current fits; manual: note an overflow."""
        if self.auto_range:
            fits = [k for k, top in enumerate(CURRENT_RANGES_A) if current_A <= top]
            self.range_index = fits[0] if fits else len(CURRENT_RANGES_A) - 1
        self.over_range = current_A > CURRENT_RANGES_A[self.range_index]

    def zero(self) -> None:
        """``CORR:COLL:ZERO``: the photocurrent now becomes the dark offset."""
        self.zero_A = 0.0
        self.zero_A = self.photocurrent_A()

    # ---- readings --------------------------------------------------------------------------------
    def power_W(self) -> float:
        """The power reading, W: the current over the responsivity, the attenuation undone."""
        return self.photocurrent_A() / self.responsivity_AW() * 10 ** (self.attenuation_db / 10)

    def reading(self, function: str | None = None) -> float:
        """A new reading of ``function`` (default the configured one) in its unit."""
        function = function or self.function
        if function == "POW":
            return self._power_in_unit(self.power_W())
        if function == "CURR":
            current = self.photocurrent_A()
            return current - self.current_reference_A if self.current_delta else current
        if function == "PDEN":
            return self.power_W() / (math.pi * (0.05 * self.beam_mm) ** 2)  # W/cm^2
        return {"RES": 1.0e4, "TEMP": 25.0}.get(function, 0.0)  # no such sensor, no pulses

    def _power_in_unit(self, watts: float) -> float:
        if self.unit == 0:
            level = dbm(1e3 * watts)
            return level - dbm(1e3 * self.power_reference_W) if self.power_delta else level
        return watts - self.power_reference_W if self.power_delta else watts

    def configure(self, function: str) -> None:
        self.function, self.last = function, None

    def initiate(self) -> None:
        self.last = self.reading()

    def abort(self) -> None:
        self.last = None

    def fetch(self) -> float:
        if self.last is None:
            raise ScpiError(-221, "no reading: send INIT (or MEAS) first")
        return self.last

    def measure_later(self, function: str) -> None:
        """``MEAS:<function>`` written without ``?``: configure it and take a reading for
        ``FETC?``."""
        self.configure(function)
        self.initiate()

    def measure(self, function: str) -> float:
        """``MEAS:<function>?``: configure it, then a reading."""
        self.configure(function)
        return self.reading()

    # ---- ranges ----------------------------------------------------------------------------------
    def set_current_range(self, amps: float) -> None:
        """A current range (A): the smallest one ``amps`` fits; auto range off."""
        self.range_index = next(k for k, top in enumerate(CURRENT_RANGES_A) if amps <= top)
        self.auto_range = False

    def set_power_range(self, watts: float) -> None:
        """A power range (W), as the current range it means at this responsivity."""
        amps = watts * self.responsivity_AW()
        if amps > CURRENT_RANGES_A[-1] * (1 + 1e-9):
            top = CURRENT_RANGES_A[-1] / self.responsivity_AW()
            raise ScpiError(-222, f"power range {watts:g} W above {top:g} W")
        self.set_current_range(min(amps, CURRENT_RANGES_A[-1]))

    def current_range(self, limit: str | None) -> float:
        index = {"MINIMUM": 0, "MAXIMUM": -1}.get(limit or "", self.range_index)
        return CURRENT_RANGES_A[index]

    def power_range(self, limit: str | None) -> float:
        return self.current_range(limit) / self.responsivity_AW()
