"""Bench routines: calibrate a chip, verify a matching, measure reconfiguration latency and lock
a ring, with a laser, an input fibre switch, a multichannel power meter and a heater driver.

A :class:`Bench` is built from a :class:`~hil.bench_config.BenchConfig` of resource strings and
is the same for the emulated bench (``pswitch serve``) and a real one. The switch firmware runs
on this host (:class:`~firmware.controller.Controller`) over the heater driver
(:class:`~hil.instruments.qontrol.Qontrol`, a :class:`~firmware.driver.ChipDriver`), and sees
light through :class:`BenchDetectors`: the laser into one chip input at a time through the
fibre switch, every chip output on the power meter. So the routines are the firmware's own
(``CAL:RUN``, ``ROUT:MATC``, ``RING:LOCK``) with the bench's light.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from firmware.calibration_file import save_calibration
from firmware.controller import Controller, Rings
from firmware.driver import DriverError
from firmware.sdk import InProcessTransport, Switch, as_matching
from hil import wiring
from hil.bench_config import BenchConfig
from hil.errors import InstrumentError
from hil.instruments.base import Connection
from hil.instruments.lasers import Laser
from hil.instruments.power_meters import N7744A, N7744A_MAX_LOG_POINTS
from hil.instruments.qontrol import Qontrol
from hil.instruments.registry import PowerMeter, open_instrument
from hil.instruments.switch import OpticalSwitch
from photonics import levels
from photonics.chips.calibration import Calibration
from photonics.chips.topologies import topology
from photonics.errors import PswitchError, SettingsError
from photonics.feedforward.chip_geometry import drawn_layout
from photonics.feedforward.meshes import FeedForwardMesh
from photonics.matching import Matching

log = logging.getLogger(__name__)

#: Averaging time of each logged point of a latency measurement, s.
LATENCY_AVERAGING_S = 1e-4


class Readout:
    """The chip's outputs on the bench's power meters: output k on ``(meter, channel)`` of
    ``wiring`` (:meth:`BenchConfig.meter_ports <hil.bench_config.BenchConfig.meter_ports>`),
    each meter read once per reading, in one request. ``wait``: that request first tells the
    meter to wait for the optics to settle (``*WAI``: a bench on a virtual clock, where the
    host does not sleep through the settling itself)."""

    def __init__(
        self,
        meters: Sequence[PowerMeter],
        wiring: Sequence[tuple[int, int, int]],
        wait: bool = False,
    ):
        self.meters, self.wait = list(meters), wait
        self.where = {output: (i, channel) for output, i, channel in wiring}
        for output, (i, channel) in self.where.items():
            if channel >= self.meters[i].n_channels:
                raise SettingsError(
                    f"chip output {output} is wired to channel {channel} of "
                    f"{self.meters[i].resource}, which has {self.meters[i].n_channels}"
                )

    def read_mW(self, outputs: Sequence[int]) -> np.ndarray:
        """A new reading of ``outputs``, mW, in that order."""
        out = np.empty(len(outputs))
        by_meter: dict[int, list[tuple[int, int]]] = {}
        for k, output in enumerate(outputs):
            i, channel = self.where[output]
            by_meter.setdefault(i, []).append((k, channel))
        for i, reads in by_meter.items():
            seen = self.meters[i].read_all_mW([channel for _, channel in reads], self.wait)
            out[[k for k, _ in reads]] = seen
        return out


class BenchDetectors:
    """The chip's outputs as the bench sees them (a :class:`~hil.instruments.base.Detectors`):
    the laser into each lit input of the field in turn through the fibre switch (chip input
    ``k`` on its output ``inputs[k]``), every output on the meters (:class:`Readout`), in mW
    on the meter per mW the laser emits, scaled to each input's power. One laser cannot make a
    coherent superposition: the powers of several lit inputs add (incoherent light), which is
    what a ring lock with every input lit needs."""

    def __init__(
        self,
        laser: Laser,
        selector: OpticalSwitch,
        readout: Readout,
        inputs: Mapping[int, int],
        ports: int,
    ) -> None:
        if any(out >= selector.n_ports for out in inputs.values()):
            raise SettingsError(
                f"a {ports}-port chip needs the input switch's outputs {sorted(inputs.values())};"
                f" it has {selector.n_ports}"
            )
        self.laser, self.selector, self.readout, self.ports = laser, selector, readout, ports
        self.inputs = dict(inputs)
        self._selected = -1
        self.emitted_mW = laser.power_mW()

    @property
    def n_detectors(self) -> int:
        return self.ports

    @property
    def inputs_per_reading(self) -> int:
        return 1  # one laser, one input at a time

    def detect(
        self, input_field: Sequence[complex], outputs: Sequence[int] | None = None
    ) -> np.ndarray:
        power = np.abs(np.asarray(input_field, dtype=complex)) ** 2
        if power.shape != (self.ports,):
            raise DriverError(f"expected {self.ports} input fields, got shape {power.shape}")
        chosen = list(range(self.ports) if outputs is None else outputs)
        total = np.zeros(len(chosen))
        lit = np.flatnonzero(power)
        # the input selected now first: a single-input reading needs no switching
        for port in sorted(lit, key=lambda p: p != self._selected):
            if port != self._selected:
                self.selector.select(self.inputs[int(port)])
                self._selected = int(port)
            total += self.readout.read_mW(chosen) * power[port] / self.emitted_mW
        return total

    def monitor(self, outputs: Sequence[int] | None = None) -> np.ndarray:
        """Every output (or only ``outputs``) on the meters, mW, with the laser where it
        is: no input switched, no rescaling."""
        return self.readout.read_mW(list(range(self.ports) if outputs is None else outputs))


@dataclass(frozen=True)
class MatchingCheck:
    """A matching measured on the bench: ``power_dBm[out, in]`` on the meter with the laser
    into each lit input, and each circuit's isolation (dB): the power its output receives
    from its own input over the most it receives from any other lit input (None when no other
    input is lit, :func:`photonics.levels.isolation_db`)."""

    matching: Matching
    power_dBm: np.ndarray
    isolation_db: dict[tuple[int, int], float | None]

    @property
    def worst_isolation_db(self) -> float | None:
        """The lowest isolation, dB; None when no circuit has one (no other input lit)."""
        return levels.worst(self.isolation_db.values())


@dataclass(frozen=True)
class Latency:
    """A reconfiguration seen by the power meter: the time from the start of the command to
    the logged power crossing halfway to its new level, s (an upper bound by one round trip
    to the meter); the hardware time the switch reported for the whole command (heater writes
    and re-centring its locked rings), s; how long the
    command took on the host, s; the logged trace (mW, one point every ``averaging_s``,
    starting with the command)."""

    latency_s: float
    reported_s: float
    command_s: float
    trace_mW: np.ndarray
    averaging_s: float


def _terminations(config: BenchConfig) -> dict[str, tuple[str, str]]:
    """Each configured resource's (read, write) terminations, as its instrument gives them (a
    resource named twice: the routines' instrument's, not a spare's)."""
    instruments = [i for _, i in config.spare] + [config.heater_driver, *config.meters]
    instruments += [config.laser] + ([config.input_switch] if config.input_switch else [])
    return {i.resource: (i.read_termination, i.write_termination) for i in instruments}


class Bench:
    """A bench opened from ``config`` (``connect(resource)`` opens a session: default
    :class:`hil.visa.Session` on ``config.visa_backend``, with the instrument's terminations).
    Close it, or use it as a context manager: closing leaves the bench in its safe state (the
    laser off, every heater at ``config.safe_current_mA``) unless ``keep`` (then as the last
    routine left it)."""

    def __init__(
        self,
        config: BenchConfig,
        connect: Callable[[str], Connection] | None = None,
        keep: bool = False,
    ) -> None:
        if connect is None:
            from hil.visa import Session

            terminations = _terminations(config)

            def connect(resource: str) -> Connection:
                read, write = terminations.get(resource, ("\n", "\n"))
                return Session(
                    resource,
                    timeout_s=config.timeout_s,
                    read_termination=read,
                    write_termination=write,
                    backend=config.visa_backend,
                )

        self.config, self.keep = config, keep
        self._conns: dict[str, Connection] = {}

        def opened(resource: str) -> Connection:
            if resource not in self._conns:  # one session per instrument
                self._conns[resource] = connect(resource)
            return self._conns[resource]

        try:
            # the heater driver first: whatever fails to open after it, close() puts its
            # heaters at the safe current (and the laser off, if it opened)
            self.heaters = Qontrol(
                opened(config.heater_driver.resource),
                max_current_mA=config.max_current_mA,
                power_budget_mW=config.power_budget_mW,
                channel_write_s=config.channel_write_s,
                settle_s=config.settle_s,
                paced=config.clock == "real",
            )
            self.meters: list[PowerMeter] = [
                open_instrument(m.model, "power_meter", opened(m.resource), m.channels)
                for m in config.meters
            ]
            self.laser: Laser = open_instrument(
                config.laser.model, "laser", opened(config.laser.resource)
            )
            switch = config.input_switch
            self.selector = OpticalSwitch(
                opened(config.laser.resource if switch is None else switch.resource)
            )
            for meter in self.meters:
                meter.set_wavelength_nm(config.wavelength_nm)
            self.laser.set_wavelength_nm(config.wavelength_nm)
            self.laser.set_power_mW(config.laser_power_mW)
            self.laser.on()
            readout = Readout(self.meters, config.meter_ports(), wait=config.clock == "virtual")
            self.detectors = BenchDetectors(
                self.laser, self.selector, readout, config.input_ports(), config.ports
            )
            self.heaters.detectors = self.detectors  # the firmware's light, through the bench
            fabric = topology(config.mesh).fabric(config.ports)
            rings = Rings(config.ring_channels, tuple(range(len(config.ring_channels))))
            mesh = getattr(fabric, "mesh", None)
            layout = None
            if config.heater_layout == "drawn" and isinstance(mesh, FeedForwardMesh):
                layout = drawn_layout(mesh)
            self.controller = Controller(
                self.heaters, fabric, rings=rings, model=config.chip_id, heater_layout=layout
            )
            self.firmware = Switch(InProcessTransport(self.controller))
            self.switch = Switch.open(config.switch) if config.switch else None
        except BaseException:
            self.close()
            raise

    def safe_state(self) -> list[str]:
        """Put the bench in its safe state: the laser off, every heater channel at
        ``config.safe_current_mA``. Every step is tried; what failed is returned, one line
        each (an empty list: safe)."""
        failed = []
        laser = getattr(self, "laser", None)
        heaters = getattr(self, "heaters", None)
        if laser is not None:
            try:
                laser.off()
            except (InstrumentError, OSError) as exc:
                failed.append(f"laser off: {exc}")
        if heaters is not None:
            n = heaters.n_channels
            try:
                heaters.write(range(n), np.full(n, self.config.safe_current_mA))
            except (InstrumentError, DriverError, PswitchError, OSError) as exc:
                failed.append(f"heaters to {self.config.safe_current_mA} mA: {exc}")
        return failed

    def close(self) -> None:
        """Leave the safe state (unless ``keep``; a failure is logged) and close every
        session."""
        try:
            if not self.keep:
                for failure in self.safe_state():
                    log.warning("bench not left safe: %s", failure)
        finally:
            if getattr(self, "switch", None) is not None:
                self.switch.close()
            for conn in self._conns.values():
                close = getattr(conn, "close", None)
                if close is not None:
                    close()
            self._conns.clear()

    def __enter__(self) -> Bench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- routines ---------------------------------------------------------------------------
    def calibrate(
        self,
        path: str | os.PathLike[str] | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        check_wiring: bool = True,
    ) -> Calibration:
        """Self-calibrate the chip through the bench (the firmware's ``CAL:RUN``: heater I-V
        read-back, then each MZI's fringe on the power meter), write it to ``path``
        atomically when given, and keep it for the other routines. ``progress(stage, done,
        total)`` as it advances (:attr:`~firmware.controller.Controller.progress`). First,
        when the chip has a ring on every output, :meth:`check_wiring` (``check_wiring``)."""
        if check_wiring and len(self.config.ring_channels) == self.config.ports:
            self.check_wiring()
        self.controller.progress = progress
        try:
            self.firmware.calibrate(save=False)
        finally:
            self.controller.progress = None
        cal = self.controller.calibration
        assert cal is not None  # CAL:RUN raised otherwise
        if path is not None:
            save_calibration(cal, path)
        return cal

    def use_calibration(self, calibration: Calibration) -> None:
        """Program the chip with ``calibration`` from now on (e.g. one loaded from a file)."""
        self.controller.use_calibration(calibration, stored=False)

    def verify(self, matching: Matching | Sequence[tuple[int, int]]) -> MatchingCheck:
        """Apply ``matching`` with the calibration and measure it: the power map with the
        laser into each lit input, and every circuit's isolation."""
        self.firmware.connect(matching)
        m = self.firmware.matching()
        n = self.config.ports
        power = np.full((n, n), np.nan)
        lit = sorted(p for pair in m.pairs for p in pair)
        laser = np.sqrt(self.detectors.emitted_mW)
        for i in lit:
            power[:, i] = self.detectors.detect(laser * np.eye(n)[i])  # mW on the meter
        isolation = {}
        for a, b in m.pairs:
            for src, dst in ((a, b), (b, a)):
                others = [power[dst, j] for j in lit if j != src]
                isolation[(src, dst)] = levels.isolation_db(power[dst, src], others)
        dbm = 10 * np.log10(np.maximum(power, 1e-15))
        return MatchingCheck(m, dbm, isolation)

    def latency(
        self,
        before: Matching | Sequence[tuple[int, int]],
        after: Matching | Sequence[tuple[int, int]],
        source: int,
        averaging_s: float = LATENCY_AVERAGING_S,
    ) -> Latency:
        """Reconfigure the switch (``config.switch``, its own firmware and calibration) from
        ``before`` to ``after`` and watch it on the meter: the laser into ``source``, the meter
        logging ``source``'s output in ``after`` while the switch applies it. The latency is
        the command's start to the halfway crossing of the logged power (heater writes,
        settling and the optics; the meter's averaging is the resolution). The log spans
        twice the time to write every heater channel, plus 10 ms."""
        if self.switch is None:
            raise SettingsError("measuring reconfiguration latency needs a switch resource")
        settle_s = self.switch.connect(before)
        if self.config.clock == "real":  # until the switch has settled in `before` (virtual:
            time.sleep(settle_s)  # the reading below waits on the bench, *WAI)
        target = as_matching(after, self.config.ports).partner(source)
        if target is None:
            raise SettingsError(f"port {source} is dark in the matching after")
        self.detectors.detect(np.eye(self.config.ports)[source])  # the laser into source
        cfg = self.config
        window_s = 2 * self.heaters.n_channels * (cfg.channel_write_s + cfg.settle_s) + 0.01
        points = min(int(np.ceil(window_s / averaging_s)), N7744A_MAX_LOG_POINTS)
        i, channel = self.detectors.readout.where[target]
        meter = self.meters[i]
        if not isinstance(meter, N7744A):
            raise SettingsError(
                f"output {target} is on a {type(meter).__name__}, which cannot log: measuring "
                "latency needs an N774x meter on the output"
            )
        meter.start_log(channel, points, averaging_s)
        logging = time.monotonic()  # the log started one round trip before: latency <= this
        modeled_s = self.switch.connect(after)
        command_s = time.monotonic() - logging
        trace = meter.fetch_log(channel, points, averaging_s)
        low, high = float(trace[0]), float(np.median(trace[-points // 10 :]))
        if not high > 2 * max(low, 1e-12):
            raise InstrumentError(
                meter.resource,
                f"the light at output {target} did not rise ({low:.3g} -> {high:.3g} mW): "
                f"log longer (points x averaging_s) than the reconfiguration",
            )
        crossed = int(np.argmax(trace >= (low + high) / 2))
        return Latency((crossed + 0.5) * averaging_s, modeled_s, command_s, trace, averaging_s)

    def check_wiring(self, points: int | None = None) -> dict[int, int | None]:
        """Which chip output each meter channel sees (:mod:`hil.wiring`): the laser, into the
        input that lights each output best, scanned over one ring FSR in ``points`` steps
        (default two per ring linewidth) before and after heating ring ``k`` by its own
        amount. Returns
        ``{output as configured: output seen}`` (None: too dark to tell) and leaves the
        heaters and the wavelength as they were; raises :class:`InstrumentError` naming every
        channel that sees another output than the configuration says."""
        cfg, rings, n = self.config, self.controller.rings, self.config.ports
        if len(cfg.ring_channels) != n:
            raise SettingsError("checking the wiring needs a ring on every output (ring_channels)")
        points = points or int(np.ceil(2 * rings.fsr_nm / rings.fwhm_nm))
        scan = cfg.wavelength_nm + rings.fsr_nm * (np.arange(points) / points - 0.5)
        held = self.heaters.currents()
        channels = list(cfg.ring_channels)
        # ring k by (k + 1) / (n + 1) of half an FSR more than it has (a locked ring already
        # has some): distinct shifts, a modest total power
        target_mW = rings.fsr_mW * 0.5 * (np.arange(1, n + 1) / (n + 1))
        ohm = 1e3 * self.heaters.power_mW(np.eye(self.heaters.n_channels))[channels]
        had_mW = self.heaters.voltages()[channels] * held[channels]  # V x mA = mW
        heated = held.copy()
        heated[channels] = np.minimum(np.sqrt(1e3 * (had_mW + target_mW) / ohm), cfg.max_current_mA)
        # each output read from the input that lights it best (one reading per input first)
        best = wiring.sources(np.array([self.detectors.detect(np.eye(n)[k]) for k in range(n)]))
        inputs = sorted(set(best.tolist()))
        before, after = np.zeros((points, n)), np.zeros((points, n))
        try:
            for k in inputs:
                before[:, best == k] = self._scan(scan, k)[:, best == k]
            self.heaters.write(range(held.size), heated)
            added_mW = self.heaters.voltages()[channels] * heated[channels] - had_mW
            for k in inputs:
                after[:, best == k] = self._scan(scan, k)[:, best == k]
        finally:
            self.heaters.write(range(held.size), held)
            self.laser.set_wavelength_nm(cfg.wavelength_nm)
        shifts = wiring.notch_shifts(before, after)
        seen = wiring.match_rings(shifts, added_mW * rings.nm_per_mW / rings.fsr_nm)
        if not seen:
            raise InstrumentError(
                self.laser.resource, "wiring: no output shows a ring notch: is the light on?"
            )
        found = {output: seen.get(output) for output in range(n)}
        wrong: dict[int, list[str]] = {}
        for o, (i, c) in sorted(self.detectors.readout.where.items()):
            if found[o] is not None and found[o] != o:
                wrong.setdefault(i, []).append(
                    f"channel {c} sees output {found[o]} (configured {o})"
                )
        if wrong:
            i = min(wrong)
            raise InstrumentError(
                self.meters[i].resource,
                "wiring: " + ", ".join(wrong[i]) + ": fix the meters' ports in the configuration",
            )
        return found

    def _scan(self, wavelengths_nm: np.ndarray, source: int) -> np.ndarray:
        """Every output's power (mW) at each wavelength with the laser into input ``source``,
        ``(wavelengths, ports)``."""
        self.detectors.detect(np.eye(self.config.ports)[source])  # the laser into source
        out = []
        for nm in wavelengths_nm:
            self.laser.set_wavelength_nm(float(nm))
            out.append(self.detectors.monitor())
        return np.array(out)

    def lock_ring(self, ring: int) -> tuple[bool, float]:
        """Lock output ring ``ring`` on the laser with power-meter feedback (the firmware's
        ``RING:LOCK``): whether it is locked and its lock error, nm."""
        self.firmware.lock_ring(ring)
        return self.firmware.ring_status(ring)
