"""The emulated Santec TSL-570 tunable laser (:class:`LaserTSL570`), a laser on the world. Its
driver is :class:`hil.instruments.lasers.TSL570`."""

from __future__ import annotations

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments.lasers import C_M_S, Sweep, thz
from hil.emulator.instruments.scpi import (
    UNIT_CODES,
    Entry,
    ScpiInstrument,
    in_unit,
    unit_param,
    wavelength_param,
)
from hil.emulator.world import BenchWorld
from hil.instruments.lasers import TSL570_POWER_MW, TSL570_WAVELENGTH_NM
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM

#: Sweep speeds of the TSL-570, nm/s.
TSL570_SPEEDS_NM_S = (1, 2, 5, 10, 20, 50, 100, 200)


class LaserTSL570(ScpiInstrument):
    """A Santec TSL-570 tunable laser (a laser named ``laser`` on the world).

    ``:SYST:COMM:COD 0|1`` picks the command set: 0 Legacy (wavelengths in nm, frequencies in
    THz: the power-on one), 1 SCPI (m and Hz). ``:WAV`` and ``:FREQ`` (bare and query in the
    command set's unit), ``:WAV:UNIT 0|1`` (display nm or THz, kept), ``:POW[:LEV]`` (bare in
    the unit of ``:POW:UNIT``: 0 dBm, 1 mW; query in it too), ``:POW:UNIT``, ``:POW:STAT``,
    ``:POW:ACT[:LEV]?`` (the power out now: the set power when on, none when off),
    ``:POW:ATT`` (dB) and ``:POW:ATT:AUTO`` (kept). Sweeps: ``:WAV:SWE:STAR|STOP|STEP`` and
    ``:FREQ:SWE:STAR|STOP|STEP``, ``:WAV:SWE:SPE`` (nm/s, one of 1..200), ``:WAV:SWE:MOD 0..3``,
    ``:DWEL``, ``:DEL`` (s), ``:CYCL``, ``:COUN?``, ``:WAV:SWE 0|1`` and ``?`` (0 stopped, 1
    running), ``:WAV:SWE:REP`` (``CYCL`` sweeps), ``:WAV|FREQ:SWE:RANG:MIN|MAX?``. Numbers in
    fixed point (Legacy, ``1550.0000``) or exponent form (SCPI, ``1.550000E-06``). ``*RST``: off
    at 1550 nm and 0 dBm.
    """

    def __init__(self, world: BenchWorld, laser: str = "TSL-570", serial: str = "25010001") -> None:
        self.laser = laser
        world.add_laser(laser)
        self.code = 0  # command set: 0 Legacy, 1 SCPI (kept over *RST, as the instrument does)
        super().__init__(world, f"SANTEC,TSL-570,{serial},0001.0000")

    def reset(self) -> None:
        self.power_unit = 0  # 0 dBm, 1 mW
        self.display_unit = 0  # 0 nm, 1 THz
        self.attenuation_db, self.attenuation_auto = 0.0, True
        self.sweep = Sweep(1500.0, 1600.0, step_nm=1.0, speed_nm_s=50.0)
        self.world.set_laser(
            self.laser, on=False, wavelength_nm=REFERENCE_WAVELENGTH_NM, power_mW=1.0
        )

    def number(self, x: float) -> str:
        return f"{x:.6E}" if self.code else f"{x:.4f}"

    def bare_unit(self, number: int, param: Param) -> str:
        if param.unit == "nm":
            return "M" if self.code else "NM"
        return ("DBM", "MW")[self.power_unit] if param.unit == "mW" else ""

    def _actual_mW(self) -> float:
        laser = self.world.laser(self.laser)
        return laser.power_mW if laser.on else 0.0

    # wavelengths and frequencies in the command set's units
    def _out_nm(self, nm: float) -> float:
        return nm * 1e-9 if self.code else nm

    def _out_freq(self, nm: float) -> float:
        return thz(nm) * (1e12 if self.code else 1.0)

    def _in_freq(self, value: float) -> float:
        """The wavelength (nm) of a frequency in the command set's unit, checked in range."""
        f_thz = value / (1e12 if self.code else 1.0)
        low, high = (thz(nm) for nm in reversed(TSL570_WAVELENGTH_NM))
        if not low <= f_thz <= high:
            raise ScpiError(-222, f"frequency {value:g} outside {low:.4f}..{high:.4f} THz")
        return thz(f_thz)

    def _freq_step(self, value: float) -> None:
        """A frequency step, as the wavelength step it is at the sweep's centre."""
        centre = (self.sweep.start_nm + self.sweep.stop_nm) / 2
        self.sweep.step_nm = centre**2 * value / (1e12 if self.code else 1.0) / (C_M_S * 1e-3)

    def _sweep(self, _: int, state: int) -> None:
        if state:
            self.sweep.start(self.world.clock())
        else:
            self.sweep.started_s = None

    def commands(self) -> list[Entry]:
        world, name, sweep = self.world, self.laser, self.sweep_entries()
        wavelength = (wavelength_param(TSL570_WAVELENGTH_NM),)
        frequency = (Param("frequency", "number", 0, 1e16),)
        return [
            Entry(
                "SYSTem:COMMunicate:CODe",
                (Param("code", "int", 0, 1),),
                set=lambda _, c: setattr(self, "code", c),
                query=lambda _: self.code,
            ),
            Entry(
                "WAVelength[:CW]",
                wavelength,
                set=lambda _, nm: world.set_laser(name, wavelength_nm=nm),
                query=lambda _: self._out_nm(world.laser(name).wavelength_nm),
            ),
            Entry(
                "WAVelength:UNIT",
                (Param("unit", "int", 0, 1),),
                set=lambda _, u: setattr(self, "display_unit", u),
                query=lambda _: self.display_unit,
            ),
            Entry(
                "FREQuency[:CW]",
                frequency,
                set=lambda _, f: world.set_laser(name, wavelength_nm=self._in_freq(f)),
                query=lambda _: self._out_freq(world.laser(name).wavelength_nm),
            ),
            Entry(
                "POWer[:LEVel]",
                (Param("power", "number", *TSL570_POWER_MW, "mW", default=1.0),),
                set=lambda _, mW: world.set_laser(name, power_mW=mW),
                query=lambda _: in_unit(world.laser(name).power_mW, self.power_unit, 1.0),
            ),
            Entry(
                "POWer:UNIT",
                (unit_param(("DBM", "MW", "0", "1")),),
                set=lambda _, u: setattr(self, "power_unit", UNIT_CODES[u]),
                query=lambda _: self.power_unit,
            ),
            Entry(
                "POWer:STATe",
                (Param("state", "bool"),),
                set=lambda _, on: world.set_laser(name, on=on),
                query=lambda _: world.laser(name).on,
            ),
            Entry(
                "POWer:ACTual[:LEVel]",
                query=lambda _: in_unit(self._actual_mW(), self.power_unit, 1.0),
            ),
            Entry(
                "POWer:ATTenuation",
                (Param("attenuation", "number", 0.0, 30.0, "dB"),),
                set=lambda _, db: setattr(self, "attenuation_db", db),
                query=lambda _: self.attenuation_db,
            ),
            Entry(
                "POWer:ATTenuation:AUTO",
                (Param("auto", "bool"),),
                set=lambda _, on: setattr(self, "attenuation_auto", on),
                query=lambda _: self.attenuation_auto,
            ),
            *sweep,
        ]

    def sweep_entries(self) -> list[Entry]:
        """The ``:WAV:SWE`` and ``:FREQ:SWE`` subsystem."""
        low, high = TSL570_WAVELENGTH_NM
        wavelength = (wavelength_param(TSL570_WAVELENGTH_NM),)
        frequency = (Param("frequency", "number", 0, 1e16),)
        step = (Param("step", "number", 1e-4, high - low, "nm"),)

        def keep(attr: str):
            return lambda _, v: setattr(self.sweep, attr, v)

        return [
            Entry(
                "WAVelength:SWEep:STARt",
                wavelength,
                set=keep("start_nm"),
                query=lambda _: self._out_nm(self.sweep.start_nm),
            ),
            Entry(
                "WAVelength:SWEep:STOP",
                wavelength,
                set=keep("stop_nm"),
                query=lambda _: self._out_nm(self.sweep.stop_nm),
            ),
            Entry(
                "WAVelength:SWEep:STEP",
                step,
                set=keep("step_nm"),
                query=lambda _: self._out_nm(self.sweep.step_nm),
            ),
            Entry(
                "FREQuency:SWEep:STARt",
                frequency,
                set=lambda _, f: setattr(self.sweep, "start_nm", self._in_freq(f)),
                query=lambda _: self._out_freq(self.sweep.start_nm),
            ),
            Entry(
                "FREQuency:SWEep:STOP",
                frequency,
                set=lambda _, f: setattr(self.sweep, "stop_nm", self._in_freq(f)),
                query=lambda _: self._out_freq(self.sweep.stop_nm),
            ),
            Entry(
                "FREQuency:SWEep:STEP",
                frequency,
                set=lambda _, f: self._freq_step(f),
                query=lambda _: (
                    self._out_freq(self.sweep.start_nm)
                    - self._out_freq(self.sweep.start_nm + self.sweep.step_nm)
                ),
            ),
            Entry(
                "WAVelength:SWEep:SPEed",
                (Param("speed", "number", 1, 200),),
                set=self._speed,
                query=lambda _: self.sweep.speed_nm_s,
            ),
            Entry(
                "WAVelength:SWEep:MODe",
                (Param("mode", "int", 0, 3),),
                set=keep("mode"),
                query=lambda _: self.sweep.mode,
            ),
            Entry(
                "WAVelength:SWEep:DWELl",
                (Param("dwell", "number", 0, 999.9, "s"),),
                set=keep("dwell_s"),
                query=lambda _: self.sweep.dwell_s,
            ),
            Entry(
                "WAVelength:SWEep:DELay",
                (Param("delay", "number", 0, 999.9, "s"),),
                set=keep("delay_s"),
                query=lambda _: self.sweep.delay_s,
            ),
            Entry(
                "WAVelength:SWEep:CYCLes",
                (Param("cycles", "int", 0, 999),),
                set=keep("cycles"),
                query=lambda _: self.sweep.cycles,
            ),
            Entry("WAVelength:SWEep:COUNt", query=lambda _: self.sweep.done(self.world.clock())),
            Entry(
                "WAVelength:SWEep[:STATe]",
                (Param("state", "int", 0, 1),),
                set=self._sweep,
                query=lambda _: int(self.sweep.polled(self.world)),
            ),
            Entry(
                "WAVelength:SWEep:REPeat",
                set=lambda _: self.sweep.start(self.world.clock(), max(self.sweep.cycles, 1)),
            ),
            Entry("WAVelength:SWEep:RANGe:MINimum", query=lambda _: self._out_nm(low)),
            Entry("WAVelength:SWEep:RANGe:MAXimum", query=lambda _: self._out_nm(high)),
            Entry("FREQuency:SWEep:RANGe:MINimum", query=lambda _: self._out_freq(high)),
            Entry("FREQuency:SWEep:RANGe:MAXimum", query=lambda _: self._out_freq(low)),
        ]

    def _speed(self, _: int, speed: float) -> None:
        if speed not in TSL570_SPEEDS_NM_S:
            raise ScpiError(-224, f"sweep speed {speed:g} nm/s: one of {TSL570_SPEEDS_NM_S}")
        self.sweep.speed_nm_s = speed
