"""Optical power meters: the Keysight N774x family (2, 4 or 8 channels) and Thorlabs PM100D.

Channels are 0-based here; on the wire the N7744A's channel ``c`` is slot ``c + 1``
(``:READ<c+1>:CHAN1:POW?``), reading chip output ``c``. Powers in mW.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from hil.errors import InstrumentError, InstrumentTimeoutError
from hil.instruments.base import Connection, ScpiDriver, check_index, check_range

#: N7744A/N7745A wavelength calibration range, nm.
N7744A_WAVELENGTH_NM = (1250.0, 1650.0)
#: N7744A/N7745A averaging time range, s.
N7744A_AVERAGING_S = (1e-6, 10.0)
#: Most points one logging run holds.
N7744A_MAX_LOG_POINTS = 1_000_000
#: Channels by model: the N774x family shares the command set (N7744A/C and N7748A/C 4,
#: N7745A/C 8, N7747A/C 2).
N7744A_CHANNELS = {
    "N7744A": 4,
    "N7744C": 4,
    "N7745A": 8,
    "N7745C": 8,
    "N7747A": 2,
    "N7747C": 2,
    "N7748A": 4,
    "N7748C": 4,
}
#: PM100D with an InGaAs photodiode sensor: wavelength correction range, nm.
PM100D_WAVELENGTH_NM = (800.0, 1700.0)


class N7744A(ScpiDriver):
    """A Keysight N7744A/N7745A multichannel power meter. ``channels``: how many to use
    (default: the model's, from ``*IDN?``). Every channel is kept in linear units (W on the
    wire) so that dark readings, which may be slightly negative, stay meaningful."""

    def __init__(self, conn: Connection, channels: int | None = None) -> None:
        super().__init__(conn)
        if channels is None:
            model = [*self.idn().split(","), "", ""][1].strip()
            if model not in N7744A_CHANNELS:
                raise InstrumentError(self.resource, f"unknown model {model!r}: give channels=")
            channels = N7744A_CHANNELS[model]
        self.n_channels = int(check_range(self.resource, "channels", channels, 1, 8, ""))
        self._set(";".join(f":SENS{c + 1}:POW:UNIT 1" for c in range(self.n_channels)))

    def _channel(self, channel: int) -> int:
        """The slot number (1-based) of a 0-based channel."""
        return check_index(self.resource, "channel", channel, self.n_channels) + 1

    def set_wavelength_nm(self, nm: float, channel: int | None = None) -> None:
        """Wavelength the readings are calibrated for, nm: one channel or all."""
        nm = check_range(self.resource, "wavelength", nm, *N7744A_WAVELENGTH_NM, "nm")
        slots = range(1, self.n_channels + 1) if channel is None else [self._channel(channel)]
        self._set(";".join(f":SENS{s}:CHAN1:POW:WAV {nm!r}NM" for s in slots))

    def set_averaging_s(self, seconds: float) -> None:
        """Averaging time of every channel, s."""
        s = check_range(self.resource, "averaging time", seconds, *N7744A_AVERAGING_S, "s")
        self._set(";".join(f":SENS{c + 1}:POW:ATIM {s!r}S" for c in range(self.n_channels)))

    def read_mW(self, channel: int) -> float:
        """A new reading of one channel, mW."""
        return 1e3 * float(self._query(f":READ{self._channel(channel)}:CHAN1:POW?"))

    def read_all_mW(self, channels: Sequence[int] | None = None, wait: bool = False) -> np.ndarray:
        """A new reading of every channel, or of ``channels`` in that order (one compound
        query), mW; with ``wait``, the line asks the meter to let pending operations end
        first (``*WAI``)."""
        chosen = range(self.n_channels) if channels is None else channels
        line = ";".join(["*WAI"] * wait + [f":READ{self._channel(c)}:CHAN1:POW?" for c in chosen])
        return 1e3 * np.array([float(x) for x in self._query(line).split(";")])

    def log_mW(
        self, channel: int, points: int, averaging_s: float, timeout_s: float | None = None
    ) -> np.ndarray:
        """Log ``points`` readings of one channel, each averaged over ``averaging_s``, s
        (:meth:`start_log`, then :meth:`fetch_log`). Powers in mW."""
        self.start_log(channel, points, averaging_s)
        return self.fetch_log(channel, points, averaging_s, timeout_s)

    def start_log(self, channel: int, points: int, averaging_s: float) -> None:
        """Start logging ``points`` readings of one channel, ``averaging_s`` each (sample k
        covers ``[k, k + 1) x averaging_s`` after this call)."""
        slot = self._channel(channel)
        points = int(check_range(self.resource, "points", points, 1, N7744A_MAX_LOG_POINTS, ""))
        s = check_range(self.resource, "averaging time", averaging_s, *N7744A_AVERAGING_S, "s")
        self._set(f":SENS{slot}:FUNC:PAR:LOGG {points},{s!r}S;:SENS{slot}:FUNC:STAT LOGG,STAR")

    def fetch_log(
        self, channel: int, points: int, averaging_s: float, timeout_s: float | None = None
    ) -> np.ndarray:
        """Poll until the logging started by :meth:`start_log` completes (``timeout_s``,
        default twice the run plus 1 s) and read its block. Powers in mW."""
        slot = self._channel(channel)
        run_s = points * averaging_s
        deadline = time.monotonic() + (2 * run_s + 1.0 if timeout_s is None else timeout_s)
        while not self._query(f":SENS{slot}:FUNC:STAT?").endswith("COMPLETE"):
            if time.monotonic() > deadline:
                raise InstrumentTimeoutError(
                    self.resource, f"logging of {points} points not complete"
                )
            time.sleep(min(run_s / 10, 0.05))
        values = self.conn.query_binary_floats(f":SENS{slot}:FUNC:RES?")
        if values.size != points:
            raise InstrumentError(self.resource, f"logged {values.size} points, asked {points}")
        return 1e3 * values


class PM100D(ScpiDriver):
    """A Thorlabs PM100D power meter with one sensor: a one-channel meter."""

    n_channels = 1

    def set_wavelength_nm(self, nm: float) -> None:
        """Wavelength the sensor's responsivity is corrected for, nm."""
        nm = check_range(self.resource, "wavelength", nm, *PM100D_WAVELENGTH_NM, "nm")
        self._set(f"SENS:CORR:WAV {nm!r}")

    def read_mW(self, wait: bool = False) -> float:
        """A new power reading, mW (with ``wait``: after pending operations, ``*WAI``)."""
        return 1e3 * float(self._query("*WAI;MEAS:POW?" if wait else "MEAS:POW?"))

    def read_all_mW(self, channels: Sequence[int] | None = None, wait: bool = False) -> np.ndarray:
        """A new reading of the one channel (``channels`` ``[0]`` or None), mW; ``wait`` as
        :meth:`N7744A.read_all_mW`."""
        for c in [0] if channels is None else channels:
            check_index(self.resource, "channel", c, 1)
        reading = self.read_mW(wait)
        return np.full(1 if channels is None else len(channels), reading)
