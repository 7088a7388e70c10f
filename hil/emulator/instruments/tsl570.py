"""The emulated Santec TSL-570 tunable laser (:class:`LaserTSL570`), a laser on the world. Its
driver is :class:`hil.instruments.lasers.TSL570`; its command table is
:mod:`hil.emulator.instruments.tsl570_commands`, its manual's list
:mod:`hil.emulator.manuals.tsl570`.

From the *Santec TSL-570 Tunable Semiconductor Laser Instruction Manual*, chapter "Remote
interface", its command list (IEEE 488.2 common commands; optical output, input/output and
system related commands, pp. 69-99 of the edition the lab drivers cite) and its error and alert
lists (p. 100). The PDF itself was not at hand: its list and pages are read where lab drivers
reproduce it (the ``instrumental`` TSL-570 driver cites a page per command; QMI's
``Santec_Tsl570``, Santec's own ``TSL`` class and QCoDeS contrib's ``SantecTSL570`` give the
syntax, ranges and replies), see :mod:`hil.emulator.manuals.tsl570`.

What acts on the bench: the wavelength (``:WAV``, ``[:WAV]:FREQ``, in nm or THz in the Legacy
command set, m or Hz in the SCPI one, ``:SYST:COMM:COD``), the power (``:POW``, in the unit of
``:POW:UNIT``), the output (``:POW:STAT``, and ``:POW:SHUT``, the same state reversed), the
monitored power (``:POW:ACT?``), the sweep's timing on the world's clock (start, stop, speed,
step and dwell in step modes, two-way, delay, cycles; a sweep started with the external or
standby trigger on waits, state 3, for ``:TRIG:INP:SOFT`` or ``*TRG``), and the logging data
of the last sweep (``:READ:POIN?``, ``:READ:DAT?`` the wavelength of each trigger point as
little-endian int32 in 0.1 pm, ``:READ:DAT:POW?`` the power as float32 dBm, binary blocks sent
without a delimiter). The rest (fine tuning, offset, coherence control, attenuator, modulation,
trigger settings, interface and display settings) is kept and read back, with the manual's
ranges (-222 outside). ``*RST`` does what the manual says: stops a sweep or a trigger standby
and clears the error queue; settings are kept (``:SPEC:REB`` restarts to the power-on state:
output off, 1550 nm, 0 dBm). The error queue holds only the manual's codes (-102, -103, -108,
-109, -113, -148, -200, -222, -410: a standard SCPI error is reported as its nearest one,
:data:`MANUAL_CODE`). ``:SYST:ALER?`` reads ``No alerts.`` (no alert is raised by the bench).

Framing: commands end in CR, LF or CR LF; replies end in the delimiter of
``:SYST:COMM:GPIB:DEL`` (0 CR at power-on, 1 LF, 2 CR LF, 3 none), from the next reply on
(:attr:`LaserTSL570.framing`, :mod:`hil.emulator.framing`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from firmware.commands import Param
from firmware.scpi_errors import ESR_PON, ErrorQueue, ScpiError
from hil.emulator.framing import CR, CRLF, LF, Framing
from hil.emulator.instruments.lasers import Sweep, thz
from hil.emulator.instruments.scpi import DBM_FLOOR, Entry, ScpiInstrument, dbm
from hil.emulator.instruments.tsl570_commands import DELIMITERS, FIRMWARE, entries, kept_defaults
from hil.emulator.world import BenchWorld
from hil.instruments.lasers import TSL570_WAVELENGTH_NM
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM

#: Most logging points a sweep keeps (``:READ:POIN?`` reads 0 to 500,000).
MAX_LOG_POINTS = 500_000

#: The manual's error list (p. 100), code: message.
MANUAL_ERRORS = {
    0: "No error",
    -102: "Syntax error",
    -103: "Invalid separator",
    -108: "Parameter not allowed",
    -109: "Missing parameter",
    -113: "Undefined header",
    -148: "Character data not allowed",
    -200: "Execution error",
    -222: "Data out of range",
    -410: "Query INTERRUPTED",
}
#: A standard SCPI error the SCPI base raises, as the manual's nearest code.
MANUAL_CODE = {
    -100: -102,
    -101: -102,
    -104: -148,
    -120: -102,
    -123: -222,
    -124: -102,
    -131: -102,
    -141: -148,
    -150: -102,
    -221: -200,
    -223: -108,
    -224: -222,
    -240: -200,
    -300: -200,
    -310: -200,
    -330: -200,
    -363: -102,
}


class ManualError(ScpiError):
    """An error of the TSL-570's own list (:data:`MANUAL_ERRORS`; -148 and -410 are not among
    the standard messages the SCPI base knows)."""

    def __init__(self, code: int, detail: str = "") -> None:
        if code not in MANUAL_ERRORS:
            raise ValueError(f"not an error of the TSL-570's list: {code}")
        self.code, self.detail = code, detail[:200]
        Exception.__init__(self, f"{code},{self.text}")

    @property
    def text(self) -> str:
        message = MANUAL_ERRORS[self.code] + (f";{self.detail}" if self.detail else "")
        return '"' + message.encode("ascii", "backslashreplace").decode().replace('"', "'") + '"'


class ManualErrorQueue(ErrorQueue):
    """The error queue in the manual's codes: a standard error is queued as its nearest one."""

    def push(self, error: ScpiError) -> None:
        if error.code in MANUAL_CODE:
            error = ManualError(MANUAL_CODE[error.code], error.detail)
        super().push(error)


@dataclass
class TslSweep(Sweep):
    """A TSL-570 sweep (mode 0 step one-way, 1 continuous one-way, 2 step two-way, 3 continuous
    two-way): a pass tunes over the span at the sweep speed, a step mode also dwells at each
    step, a two-way pass comes back the same way, then the delay."""

    def pass_s(self) -> float:
        one_way = abs(self.stop_nm - self.start_nm) / self.speed_nm_s
        if self.mode in (0, 2):
            one_way += len(self.wavelengths_nm()) * self.dwell_s
        return one_way * (2 if self.mode >= 2 else 1) + self.delay_s


class LaserTSL570(ScpiInstrument):
    """A Santec TSL-570 tunable laser (a laser named ``laser`` on the world); see the module
    docstring. ``code``: the command set (0 Legacy: nm, THz, fixed point ``1550.0000``; 1 SCPI:
    m, Hz, ``1.550000E-06``); interface settings survive ``*RST`` as on the instrument."""

    def __init__(self, world: BenchWorld, laser: str = "TSL-570", serial: str = "25010001") -> None:
        self.laser = laser
        world.add_laser(laser)
        self.code = 0  # command set: 0 Legacy, 1 SCPI
        self.delimiter = 0  # :SYST:COMM:GPIB:DEL: CR
        self.power_unit, self.display_unit = 0, 0  # dBm, nm
        self.kept = kept_defaults()  # the settings only kept, by header
        self.sweep = TslSweep(1500.0, 1600.0, step_nm=1.0, speed_nm_s=50.0)
        self.pending = False  # a sweep started, standing by for its trigger
        self._power_on_light(world)
        super().__init__(world, f"SANTEC,TSL-570,{serial},{FIRMWARE}")
        self.errors = ManualErrorQueue(events=ESR_PON)

    def _power_on_light(self, world: BenchWorld) -> None:
        """The light at power-on: output off at 1550 nm and 0 dBm."""
        world.set_laser(self.laser, on=False, wavelength_nm=REFERENCE_WAVELENGTH_NM, power_mW=1.0)

    def reset(self) -> None:
        """``*RST`` (the manual): stop a sweep or a trigger standby, clear the error queue."""
        self.stop_sweep()
        self.errors.clear()

    def reboot(self) -> None:
        """``:SPEC:REB``: a restart (its minute is not waited): the light as at power-on, no
        sweep, an empty error queue; the settings are the instrument's saved ones (kept)."""
        self._power_on_light(self.world)
        self.reset()

    def shutdown(self) -> None:
        """``:SPEC:SHUT``: the laser goes dark (the emulation stays reachable)."""
        self.stop_sweep()
        self.world.set_laser(self.laser, on=False)

    @property
    def framing(self) -> Framing:
        """CR, LF or CR LF end a command; the delimiter setting ends a reply, none a block."""
        return Framing((CR, LF, CRLF), DELIMITERS[self.delimiter], block="")

    def commands(self) -> list[Entry]:
        return entries(self)

    def trigger(self) -> None:
        """``*TRG``: as ``:TRIG:INP:SOFT``."""
        self.soft_trigger()

    # ---- units and numbers -------------------------------------------------------------------
    def number(self, x: float) -> str:
        return f"{x:.6E}" if self.code else f"{x:.4f}"

    def bare_unit(self, number: int, param: Param) -> str:
        if param.unit == "nm":
            return "M" if self.code else "NM"
        return ("DBM", "MW")[self.power_unit] if param.unit == "mW" else ""

    def _token(self, token: str, param: Param, number: int) -> str:
        """An address (``:SYST:COMM:ETH:IPAD 192.168.1.10``) is written without quotes."""
        if param.kind == "string" and not token.startswith(('"', "'")):
            token = f'"{token}"'
        return super()._token(token, param, number)

    def out_nm(self, nm: float) -> float:
        """A wavelength in the command set's unit (nm or m)."""
        return nm * 1e-9 if self.code else nm

    def out_freq(self, nm: float) -> float | str:
        """The frequency of a wavelength in the command set's unit: Hz (exponent form), or THz
        to the manual's 10 MHz step (five decimals)."""
        return thz(nm) * 1e12 if self.code else f"{thz(nm):.5f}"

    def out_freq_step(self, start_nm: float, step_nm: float) -> float | str:
        """The frequency step of a wavelength step at ``start_nm``, as :meth:`out_freq`."""
        f_thz = thz(start_nm) - thz(start_nm + step_nm)
        return f_thz * 1e12 if self.code else f"{f_thz:.5f}"

    def in_thz(self, value: float) -> float:
        """A frequency in the command set's unit, in THz."""
        return value / (1e12 if self.code else 1.0)

    def in_freq(self, value: float) -> float:
        """The wavelength (nm) of a frequency in the command set's unit, checked in range, on
        the manual's 10 MHz setting step."""
        f_thz = round(self.in_thz(value), 5)
        low, high = (thz(nm) for nm in reversed(TSL570_WAVELENGTH_NM))
        if not low - 1e-9 <= f_thz <= high + 1e-9:
            raise ScpiError(-222, f"frequency {value:g} outside {low:.4f}..{high:.4f} THz")
        return min(max(thz(f_thz), TSL570_WAVELENGTH_NM[0]), TSL570_WAVELENGTH_NM[1])

    def power(self, mW: float) -> float:
        """A power in the unit of ``:POW:UNIT`` (dBm, or mW)."""
        return dbm(mW) if self.power_unit == 0 else mW

    # ---- the light ---------------------------------------------------------------------------
    def actual_mW(self) -> float:
        """The output power now, mW: the set power when on, none when off."""
        laser = self.world.laser(self.laser)
        return laser.power_mW if laser.on else 0.0

    # ---- the sweep ---------------------------------------------------------------------------
    def start_sweep(self, passes: int) -> None:
        """``:WAV:SWE 1`` (``passes`` 1) or ``:WAV:SWE:REP``: run now, or stand by for the
        trigger when the external trigger input or the trigger standby is on."""
        self.sweep.passes = passes
        if self.kept.get("TRIGger:INPut:EXTernal") or self.kept.get("TRIGger:INPut:STANdby"):
            self.sweep.started_s, self.pending = None, True
            return
        self.sweep.start(self.world.clock(), passes)

    def stop_sweep(self) -> None:
        self.sweep.started_s, self.pending = None, False

    def soft_trigger(self) -> None:
        """``:TRIG:INP:SOFT``: a sweep standing by starts (else nothing happens)."""
        if self.pending:
            self.pending = False
            self.kept["TRIGger:INPut:STANdby"] = False
            self.sweep.start(self.world.clock(), self.sweep.passes)

    def sweep_state(self) -> int:
        """``:WAV:SWE?``: 0 stopped, 1 running (polling it waits for the end), 3 standing by
        for a trigger."""
        if self.pending:
            return 3
        return int(self.sweep.polled(self.world))

    def log_points_nm(self) -> np.ndarray:
        """The wavelengths logged by the last sweep, nm: none until its first pass is done; a
        trigger point per step (step modes) or per trigger output step (continuous modes)."""
        if self.sweep.done(self.world.clock()) < 1:
            return np.zeros(0)
        if self.sweep.mode in (0, 2):
            points = self.sweep.wavelengths_nm()
        else:
            step = float(self.kept["TRIGger:OUTPut:STEP[:WIDTh]"])  # type: ignore[arg-type]
            low, high = sorted((self.sweep.start_nm, self.sweep.stop_nm))
            n = min(math.floor((high - low) / step + 1e-9) + 1, MAX_LOG_POINTS)
            points = low + step * np.arange(n)
        return points[:MAX_LOG_POINTS]

    def log_power_dbm(self) -> np.ndarray:
        """The power logged at each point, dBm (the output's: :data:`DBM_FLOOR` when off)."""
        mW = self.actual_mW()
        return np.full(len(self.log_points_nm()), dbm(mW) if mW > 0 else DBM_FLOOR)
