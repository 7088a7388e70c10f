"""The emulated Keysight 8164B mainframe with its laser and 1xN switch module
(:class:`Mainframe8164B`), a laser on the world, and what the emulated lasers share
(:class:`Sweep`, :func:`thz`). Its drivers are :mod:`hil.instruments.lasers` and
:mod:`hil.instruments.switch`; the TSL-570 is :mod:`hil.emulator.instruments.tsl570`.

The lasers keep a wavelength sweep's settings and run it on the world's clock
(:class:`Sweep`: its state, count and logged wavelengths); the laser holds its set wavelength
on the bench meanwhile (the chip sees one wavelength at a time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from firmware.commands import Param, Spec
from firmware.scpi_errors import ScpiError
from hil.emulator.instruments import mainframe_modules as modules
from hil.emulator.instruments.mainframe_common import rewrite_token
from hil.emulator.instruments.scpi import (
    UNIT_CODES,
    Entry,
    ScpiInstrument,
    float32_block,
    in_unit,
    unit_param,
    wavelength_param,
)
from hil.emulator.world import BenchWorld
from hil.instruments.lasers import (
    KEYSIGHT_LASER_POWER_MW,
    KEYSIGHT_LASER_WAVELENGTH_NM,
)
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM

#: Speed of light, m/s (frequency = c / wavelength).
C_M_S = 299_792_458.0
#: The 8164B's laser-lock password as shipped.
LOCK_PASSWORD = 1234
#: ``:WAV:SWE[:STAT]`` names and their codes (the guide).
SWEEP_STATES = {"STOP": "0", "START": "1", "PAUSE": "2", "CONTINUE": "3"}
SWEEP_STATE_NAMES = ("STOP", "STARt", "PAUSe", "CONTinue", "0", "1", "2", "3")


def thz(nm: float) -> float:
    """Optical frequency of a wavelength, THz (and back: ``thz(thz(nm)) == nm``)."""
    return C_M_S * 1e-3 / nm


@dataclass
class Sweep:
    """A wavelength sweep's settings (nm, nm/s, s) and its run on the world's clock."""

    start_nm: float
    stop_nm: float
    step_nm: float = 0.1
    speed_nm_s: float = 10.0
    mode: int = 1  # TSL: 0..3 (stepped/continuous, one/two way); 8164B: 0 STEP 1 MAN 2 CONT
    two_way: bool = False
    cycles: int = 1
    dwell_s: float = 0.0
    delay_s: float = 0.0
    started_s: float | None = None
    passes: int = 1
    paused: bool = False
    logging: bool = False

    def pass_s(self) -> float:
        return abs(self.stop_nm - self.start_nm) / self.speed_nm_s + self.delay_s

    def done(self, now_s: float) -> int:
        """Sweeps completed by ``now_s``."""
        if self.started_s is None:
            return 0
        # a hair of tolerance: a clock jumped to the end of the run (start + passes * pass_s)
        # must count the last pass done despite rounding
        elapsed = (now_s - self.started_s) / max(self.pass_s(), 1e-9)
        return min(self.passes, int(elapsed + 1e-9))

    def running(self, now_s: float) -> bool:
        return self.started_s is not None and self.done(now_s) < self.passes

    def end_s(self) -> float:
        """When the run ends, s (world clock; -inf when none started)."""
        if self.started_s is None:
            return -math.inf
        return self.started_s + self.passes * max(self.pass_s(), 1e-9)

    def polled(self, world: BenchWorld) -> bool:
        """Whether the sweep runs now; a client polling a running sweep is waiting for it, so
        the world's time goes to its end (at once on a virtual clock) after this answer."""
        running = self.running(world.clock())
        if running and not self.paused:
            world.wait_until(self.end_s())
        return running

    def start(self, now_s: float, passes: int = 1) -> None:
        self.started_s, self.passes, self.paused = now_s, passes, False

    def wavelengths_nm(self) -> np.ndarray:
        """The wavelength of each step (the logged wavelengths of a sweep)."""
        n = math.floor((self.stop_nm - self.start_nm) / self.step_nm + 1e-9) + 1
        return self.start_nm + self.step_nm * np.arange(max(n, 0))


class Mainframe8164B(ScpiInstrument):
    """A Keysight 8164B mainframe: a tunable laser in ``laser_slot`` (a laser named ``laser``
    on the world) and a 1xN optical switch module (81595B class) in ``switch_slot``, its
    outputs 1..N on the chip inputs 0..N-1.

    Laser: ``:SOUR<s>[:CHAN1]:WAV[:CW]`` (bare in m, query in m; ``? MIN|MAX`` the range),
    ``:SOUR<s>[:CHAN1]:POW[:LEV][:IMM][:AMPL]`` (bare in the unit of ``:POW:UNIT``, dBm or W;
    query in it too), ``:SOUR<s>[:CHAN1]:POW:UNIT DBM|W|0|1``, ``:SOUR<s>[:CHAN1]:POW:STAT``,
    ``:LOCK <0|1>,<password>`` (a locked laser is off and cannot be switched on) and
    ``:LOCK?``, ``:TRIG<s>:OUTP DIS|STF|SWF|SWST``, ``:TRIG<s>:INP IGN|NEXT|SWS``. Sweeps:
    ``:SOUR<s>:WAV:SWE:STAR|STOP|STEP`` (m), ``:SPE`` (m/s), ``:MODE STEP|MAN|CONT``,
    ``:REP ONEW|TWOW``, ``:LLOG``, ``:CHEC?`` (``0,OK`` or the manual's code), ``:SWE 0|1|2``
    (stop, start, pause) and ``:SWE?``, ``:STEP:NEXT``/``:PREV``, ``:SOUR<s>:READ:POIN? LLOG``
    and ``:SOUR<s>:READ:DATA? LLOG`` (the logged wavelengths, m, a block of little-endian
    float64). Switch: ``:ROUT<s>[:CHAN1] A,<k>`` and its query (``A,<k>``),
    ``:ROUT<s>[:CHAN1]:CONF?`` (``A,A;1,<N>``). ``:SLOT<s>:IDN?`` names a slot's module.
    An 81636B power sensor in ``sensor_slot`` (None: none) reads chip output ``sensor_output``.
    The rest of the programming guide's table (the mainframe's SLOT, SYSTem, DISPlay and TRIGger
    commands, the laser's other settings, the sensor's commands) is
    :mod:`hil.emulator.instruments.mainframe_modules`. A slot or channel number left out is the
    lowest there is (the guide: slot 0 on the 8164B, channel 1).
    ``*RST``: laser off at 1550 nm and 0 dBm, unlocked, switch to ``A,1``. Numbers in Keysight's
    NR3.
    """

    def __init__(
        self,
        world: BenchWorld,
        laser: str = "8164B",
        laser_slot: int = 0,
        switch_slot: int = 1,
        serial: str = "DE00000001",
        sensor_slot: int | None = 2,
        sensor_output: int = 0,
    ) -> None:
        self.laser, self.laser_slot, self.sensor_slot = laser, laser_slot, sensor_slot
        world.add_laser(laser)
        self.modules = {laser_slot: "81600B", switch_slot: "81595B"}
        self.sensor = None
        if sensor_slot is not None:
            self.modules[sensor_slot] = "81636B"
            self.sensor = modules.PowerSensor(sensor_output)
        self.serial = serial
        triggered = [s for s in (laser_slot, sensor_slot) if s is not None]
        numbered = {
            "SOUR": (laser_slot,) * 2,
            "OUTP": (laser_slot,) * 2,
            "TRIG": (min(triggered), max(triggered)),
            "ROUT": (switch_slot,) * 2,
            "SLOT": (0, 4),
            "CHAN": (1, 1),
        }
        if sensor_slot is not None:
            numbered.update({k: (sensor_slot,) * 2 for k in ("SENS", "FETC", "READ", "INIT")})
        self.options = ", ".join(self.modules.get(k, "") for k in range(5))
        super().__init__(world, f"Keysight Technologies,8164B,{serial},V5.25(72637)", numbered)

    def reset(self) -> None:
        self.power_unit = 0  # 0 dBm, 1 W
        self.locked = False
        self.trigger_out, self.trigger_in = "DIS", "IGN"
        self.sweep = Sweep(1540.0, 1560.0, step_nm=0.1, speed_nm_s=40.0, mode=0)
        self.world.set_laser(
            self.laser, on=False, wavelength_nm=REFERENCE_WAVELENGTH_NM, power_mW=1.0
        )
        self.world.select_input(0)
        modules.reset(self)

    def _number(self, head: str, spec: Spec, numbers: list[int | None]) -> int:
        # a number left out is the lowest of its node's range (the guide, Slot and Channel
        # Numbers: slot 0 on the 8164B), not 1
        filled = [
            self.numbered[short][0] if n is None and short in self.numbered else n
            for n, (short, _) in zip(numbers, spec.mnemonics, strict=True)
        ]
        return super()._number(head, spec, filled)

    def _token(self, token: str, param: Param, number: int) -> str:
        return super()._token(rewrite_token(token, param), param, number)

    def bare_unit(self, number: int, param: Param) -> str:
        if param.unit == "nm":
            return "M"
        return ("DBM", "W")[self.power_unit] if param.unit == "mW" else ""

    def _lock(self, _: int, on: bool, password: int) -> None:
        if password != LOCK_PASSWORD:
            raise ScpiError(-221, "wrong lock password")
        if on:
            self.world.set_laser(self.laser, on=False)
        self.locked = on

    def _output(self, _: int, on: bool) -> None:
        if on and self.locked:
            raise ScpiError(-221, "the laser is locked: unlock it with :LOCK 0,<password>")
        self.world.set_laser(self.laser, on=on)

    def _sweep_state(self, _: int, state: str) -> None:
        """``:WAV:SWE[:STAT] 0|STOP|1|STARt|2|PAUSe|3|CONTinue``; a started sweep runs its
        cycles (0: until stopped)."""
        now, code = self.world.clock(), SWEEP_STATES.get(state, state)
        if code == "1":
            if self._check_code():
                raise ScpiError(-221, "sweep settings inconsistent: see :WAV:SWE:CHEC?")
            self.sweep.start(now, passes=self.sweep.cycles or 2**31)
        elif code == "2":
            self.sweep.paused = self.sweep.running(now)
        elif code == "3":
            self.sweep.paused = False
        else:
            self.sweep.started_s = None

    def _sweep_status(self, _: int) -> int:
        if self.sweep.paused:
            return 2
        return int(self.sweep.polled(self.world))

    def _check_code(self) -> int:
        """The manual's code for inconsistent sweep settings (0 when consistent)."""
        s = self.sweep
        if s.stop_nm <= s.start_nm:
            return 368
        if s.step_nm > s.stop_nm - s.start_nm:
            return 372
        if s.logging and s.mode != 2:
            return 376
        return 0

    def _logged(self) -> np.ndarray:
        s = self.sweep
        if not s.logging or s.started_s is None or s.running(self.world.clock()):
            raise ScpiError(-221, "no logged sweep: set :WAV:SWE:LLOG 1 and run a sweep")
        return s.wavelengths_nm() * 1e-9

    def _sweep_setter(self, name: str):
        return lambda _, value: setattr(self.sweep, name, value)

    def commands(self) -> list[Entry]:
        source = "[SOURce][:CHANnel]"
        swe = f"{source}:WAVelength:SWEep"
        world, name = self.world, self.laser
        low, high = KEYSIGHT_LASER_WAVELENGTH_NM
        limit = Param("limit", "name", choices=("MINimum", "MAXimum", "DEFault"), optional=True)
        wavelength = (wavelength_param(KEYSIGHT_LASER_WAVELENGTH_NM),)
        llog = (Param("what", "name", choices=("LLOGging",)),)
        return [
            Entry(
                f"{source}:WAVelength[:CW]",
                wavelength,
                set=lambda _, nm: world.set_laser(name, wavelength_nm=nm),
                query=lambda _, which=None: (
                    1e-9
                    * {"MINIMUM": low, "MAXIMUM": high, "DEFAULT": REFERENCE_WAVELENGTH_NM}.get(
                        which or "", world.laser(name).wavelength_nm
                    )
                ),
                query_params=(limit,),
            ),
            Entry(
                f"{source}:POWer[:LEVel][:IMMediate][:AMPLitude]",
                (Param("power", "number", *KEYSIGHT_LASER_POWER_MW, "mW", default=1.0),),
                set=lambda _, mW: world.set_laser(name, power_mW=mW),
                query=self._power,
                query_params=(limit,),
            ),
            Entry(
                f"{source}:POWer:UNIT",
                (unit_param(("DBM", "Watt", "0", "1")),),
                set=lambda _, u: setattr(self, "power_unit", UNIT_CODES[u]),
                query=lambda _: self.power_unit,
            ),
            Entry(
                f"{source}:POWer:STATe",
                (Param("state", "bool"),),
                set=self._output,
                query=lambda _: world.laser(name).on,
            ),
            Entry(
                "LOCK",
                (Param("state", "bool"), Param("password", "int", 0, 9999)),
                set=self._lock,
                query=lambda _: self.locked,
            ),
            Entry(
                f"{swe}:STARt",
                wavelength,
                set=self._sweep_setter("start_nm"),
                query=lambda _: self.sweep.start_nm * 1e-9,
            ),
            Entry(
                f"{swe}:STOP",
                wavelength,
                set=self._sweep_setter("stop_nm"),
                query=lambda _: self.sweep.stop_nm * 1e-9,
            ),
            Entry(
                f"{swe}:STEP[:WIDTh]",
                (Param("step", "number", 1e-4, high - low, "nm"),),
                set=self._sweep_setter("step_nm"),
                query=lambda _: self.sweep.step_nm * 1e-9,
            ),
            Entry(
                f"{swe}:SPEed",
                (Param("speed", "number", 0.5, 200.0, "nm"),),
                set=self._sweep_setter("speed_nm_s"),
                query=lambda _: self.sweep.speed_nm_s * 1e-9,
            ),
            Entry(
                f"{swe}:MODE",
                (Param("mode", "name", choices=("STEPped", "MANual", "CONTinuous")),),
                set=lambda _, m: setattr(
                    self.sweep, "mode", ("STEPPED", "MANUAL", "CONTINUOUS").index(m)
                ),
                query=lambda _: ("STEP", "MAN", "CONT")[self.sweep.mode],
            ),
            Entry(
                f"{swe}:REPeat",
                (Param("repeat", "name", choices=("ONEWay", "TWOWay")),),
                set=lambda _, r: setattr(self.sweep, "two_way", r == "TWOWAY"),
                query=lambda _: ("ONEW", "TWOW")[self.sweep.two_way],
            ),
            Entry(
                f"{swe}:LLOGging",
                (Param("on", "bool"),),
                set=self._sweep_setter("logging"),
                query=lambda _: self.sweep.logging,
            ),
            Entry(
                f"{swe}:CHECkparams",
                query=lambda _: [
                    self._check_code(),
                    "OK" if not self._check_code() else "inconsistent",
                ],
            ),
            Entry(
                f"{swe}[:STATe]",
                (Param("state", "name", choices=SWEEP_STATE_NAMES),),
                set=self._sweep_state,
                query=self._sweep_status,
            ),
            Entry(f"{swe}:STEP:NEXT", set=lambda _: None),
            Entry(f"{swe}:STEP:PREVious", set=lambda _: None),
            Entry(
                f"{source}:READout:POINts",
                query=lambda _, _w: len(self.sweep.wavelengths_nm()) if self.sweep.logging else 0,
                query_params=llog,
            ),
            Entry(
                f"{source}:READout:DATA",
                query=lambda _, _w: float32_block(self._logged(), "<f8"),
                query_params=llog,
            ),
            Entry(
                "ROUTe[:CHANnel]",
                (
                    Param("input", "name", choices=("A",)),
                    Param("output", "int", 1, world.n_ports),
                ),
                set=lambda _, _a, k: world.select_input(k - 1),
                query=lambda _: f"A,{world.selected_input + 1}",
            ),
            Entry("ROUTe[:CHANnel]:CONFig", query=lambda _: f"A,A;1,{world.n_ports}"),
            *modules.commands(self),
        ]

    def _power(self, _: int, which: str | None = None) -> float:
        """The laser's power in the power unit; ``MIN``/``MAX`` its range, ``DEF`` half the
        sum of the two (the guide)."""
        low, high = (in_unit(mW, self.power_unit, 1e3) for mW in KEYSIGHT_LASER_POWER_MW)
        if which is not None:
            return {"MINIMUM": low, "MAXIMUM": high, "DEFAULT": (low + high) / 2}[which]
        return in_unit(self.world.laser(self.laser).power_mW, self.power_unit, 1e3)
