"""The emulated Keysight N774x multichannel power meter (:class:`PowerMeterN7744A`), reading the
world's chip outputs. Its driver is :class:`hil.instruments.power_meters.N7744A`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from firmware.commands import Param
from firmware.scpi_errors import ScpiError
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
from hil.instruments.power_meters import (
    N7744A_AVERAGING_S,
    N7744A_CHANNELS,
    N7744A_MAX_LOG_POINTS,
    N7744A_WAVELENGTH_NM,
)
from photonics.chips.chip import REFERENCE_WAVELENGTH_NM
from photonics.errors import SettingsError


@dataclass
class _MeterChannel:
    """The settings of one power-meter channel and its logging run (``log_start_s`` on the
    world's clock, None when no run; ``log_data`` once read, W)."""

    wavelength_nm: float = REFERENCE_WAVELENGTH_NM
    unit: int = 0  # 0 dBm, 1 W
    averaging_s: float = 1e-4
    log_points: int = 100
    log_averaging_s: float = 1e-4
    log_start_s: float | None = None
    log_data: np.ndarray | None = None
    range_auto: bool = True
    range_dbm: float = 10.0
    continuous: bool = False
    trigger_input: str = "IGN"

    def logging(self, now_s: float) -> bool:
        """Whether a run has started and has not ended at ``now_s``."""
        if self.log_start_s is None:
            return False
        return now_s < self.log_start_s + self.log_points * self.log_averaging_s


class PowerMeterN7744A(ScpiInstrument):
    """A Keysight N774x multichannel power meter (``model``, default by ``channels``: N7747A
    2, N7744A 4, N7745A 8): channel ``n`` (``SENS<n>``, ``FETC<n>``, ``READ<n>``, each with
    ``CHAN1``) reads chip output ``outputs[n - 1]`` (default ``n - 1``).

    ``:SENS<n>[:CHAN1]:POW:WAV`` (m; query in m), ``:SENS<n>[:CHAN1]:POW:UNIT 0|1|DBM|W``,
    ``:SENS<n>[:CHAN1]:POW:ATIM`` (s), ``:FETC<n>[:CHAN1][:SCAL]:POW[:DC]?``,
    ``:READ<n>[:CHAN1][:SCAL]:POW[:DC]?`` (in the set unit; both take a reading now),
    ``:SENS<n>[:CHAN1]:FUNC:PAR:LOGG <points>,<averaging s>``,
    ``:SENS<n>[:CHAN1]:FUNC:STAT LOGG,STAR|STOP`` and its query (``LOGGING_STABILITY`` or
    ``NONE``, then ``PROGRESS`` or ``COMPLETE``), ``:SENS<n>[:CHAN1]:FUNC:RES?`` (the log as a
    binary block of little-endian float32, W). Logging runs on the world's clock: sample ``k``
    is the light averaged over ``[start + k t, start + (k + 1) t)``, the heaters' thermal
    transients included (a reconfiguration logged at 1 us shows the light moving). The
    wavelength setting is kept but the detector's response is flat.
    ``:READ:POW:ALL:CSV?`` and ``:FETC:POW:ALL:CSV?`` read every channel at once (comma-
    separated, each in its unit); ``:SENS<n>:POW:RANG[:UPP]`` (dBm) and ``:SENS<n>:POW:RANG:AUTO``,
    ``:INIT<n>:CONT``, ``:TRIG<n>:INP IGN|SME|CME|MME|PRE`` are kept; ``:SLOT<n>:IDN?`` names
    the channel's module. Numbers in Keysight's NR3 (``+1.23456789E-006``).
    """

    def __init__(
        self,
        world: BenchWorld,
        channels: int = 4,
        serial: str = "MY00000001",
        model: str | None = None,
        outputs: Sequence[int] | None = None,
    ) -> None:
        model = model or {2: "N7747A", 4: "N7744A", 8: "N7745A"}.get(channels)
        if model not in N7744A_CHANNELS or N7744A_CHANNELS[model] != channels:
            raise SettingsError(
                f"an N774x meter of {channels} channels: model {model!r} has "
                f"{N7744A_CHANNELS.get(model or '', 'no')} (models: {N7744A_CHANNELS})"
            )
        #: The chip output each channel reads (channel n: ``outputs[n - 1]``).
        self.outputs = tuple(range(channels)) if outputs is None else tuple(outputs)
        if len(self.outputs) != channels or not all(0 <= o < world.n_ports for o in self.outputs):
            raise SettingsError(
                f"outputs must give a chip output (0 to {world.n_ports - 1}) for each of the "
                f"{channels} channels, got {self.outputs}"
            )
        self.channels, self.model = channels, model
        numbered = {
            name: (1, channels) for name in ("SENS", "FETC", "READ", "INIT", "TRIG", "SLOT")
        }
        idn = f"Keysight Technologies,{model},{serial},V1.0.0"
        super().__init__(world, idn, {**numbered, "CHAN": (1, 1)})

    def reset(self) -> None:
        self.state = [_MeterChannel() for _ in range(self.channels)]

    def bare_unit(self, number: int, param: Param) -> str:
        return "M" if param.unit == "nm" else ""  # Keysight: bare wavelengths in metres

    def _setter(self, name: str) -> Callable[..., None]:
        return lambda n, value: setattr(self.state[n - 1], name, value)

    def commands(self) -> list[Entry]:
        time_s = Param("time", "number", *N7744A_AVERAGING_S, "s", default=1e-4)
        points = Param("points", "int", 1, N7744A_MAX_LOG_POINTS, default=100)
        sens = "SENSe[:CHANnel]"
        return [
            Entry(
                f"{sens}:POWer:WAVelength",
                (wavelength_param(N7744A_WAVELENGTH_NM),),
                set=self._setter("wavelength_nm"),
                query=lambda n: self.state[n - 1].wavelength_nm * 1e-9,
            ),
            Entry(
                f"{sens}:POWer:UNIT",
                (unit_param(("DBM", "Watt", "0", "1")),),
                set=lambda n, u: setattr(self.state[n - 1], "unit", UNIT_CODES[u]),
                query=lambda n: self.state[n - 1].unit,
            ),
            Entry(
                f"{sens}:POWer:ATIMe",
                (time_s,),
                set=self._setter("averaging_s"),
                query=lambda n: self.state[n - 1].averaging_s,
            ),
            Entry("FETCh[:CHANnel][:SCALar]:POWer[:DC]", query=self._reading),
            Entry("READ[:CHANnel][:SCALar]:POWer[:DC]", query=self._reading),
            Entry(
                f"{sens}:FUNCtion:PARameter:LOGGing",
                (points, time_s),
                set=self._log_setup,
                query=lambda n: [self.state[n - 1].log_points, self.state[n - 1].log_averaging_s],
            ),
            Entry(
                f"{sens}:FUNCtion:STATe",
                (
                    Param("function", "name", choices=("LOGGing",)),
                    Param("action", "name", choices=("STARt", "STOP")),
                ),
                set=self._function,
                query=self._function_state,
            ),
            Entry(f"{sens}:FUNCtion:RESult", query=self._result),
            Entry("READ:POWer:ALL:CSV", query=self._all_readings),
            Entry("FETCh:POWer:ALL:CSV", query=self._all_readings),
            Entry(
                f"{sens}:POWer:RANGe[:UPPer]",
                (Param("range", "number", -30.0, 10.0, default=10.0),),
                set=self._setter("range_dbm"),
                query=lambda n: self.state[n - 1].range_dbm,
            ),
            Entry(
                f"{sens}:POWer:RANGe:AUTO",
                (Param("auto", "bool"),),
                set=self._setter("range_auto"),
                query=lambda n: self.state[n - 1].range_auto,
            ),
            Entry(
                "INITiate[:CHANnel]:CONTinuous",
                (Param("continuous", "bool"),),
                set=self._setter("continuous"),
                query=lambda n: self.state[n - 1].continuous,
            ),
            Entry(
                "TRIGger[:CHANnel]:INPut",
                (
                    Param(
                        "response",
                        "name",
                        choices=("IGNore", "SMEasure", "CMEasure", "MMEasure", "PREtrigger"),
                    ),
                ),
                set=lambda n, r: setattr(self.state[n - 1], "trigger_input", r[:3]),
                query=lambda n: self.state[n - 1].trigger_input,
            ),
            Entry("SLOT:IDN", query=lambda n: self.idn),
        ]

    def _all_readings(self, _: int) -> list[float]:
        mW = self.world.output_power_mW()
        pairs = zip(self.outputs, self.state, strict=True)
        return [in_unit(float(mW[o]), c.unit, 1e3) for o, c in pairs]

    def _reading(self, n: int) -> float:
        mW = float(self.world.output_power_mW()[self.outputs[n - 1]])
        return in_unit(mW, self.state[n - 1].unit, 1e3)

    def _log_setup(self, n: int, points: int, averaging_s: float) -> None:
        self.state[n - 1].log_points, self.state[n - 1].log_averaging_s = points, averaging_s

    def _function(self, n: int, _function: str, action: str) -> None:
        channel = self.state[n - 1]
        channel.log_start_s = self.world.clock() if action == "START" else None
        channel.log_data = None

    def _function_state(self, n: int) -> str:
        channel = self.state[n - 1]
        if channel.log_start_s is None:
            return "NONE,COMPLETE"
        running = channel.logging(self.world.clock())
        return "LOGGING_STABILITY," + ("PROGRESS" if running else "COMPLETE")

    def _result(self, n: int) -> bytes:
        c = self.state[n - 1]
        if c.log_start_s is None:
            raise ScpiError(-221, "no logging data: start with FUNC:STAT LOGG,STAR")
        if c.logging(self.world.clock()):
            raise ScpiError(-221, "logging still in progress")
        if c.log_data is None:  # sample k averages [start + k t, start + (k + 1) t)
            ends = c.log_start_s + c.log_averaging_s * np.arange(1, c.log_points + 1)
            seen = self.world.output_power_mW(ends, averaging_s=c.log_averaging_s)
            c.log_data = 1e-3 * seen[:, self.outputs[n - 1]]
        return float32_block(c.log_data)
