"""The switch's ``RING`` commands: lock each output ring to the laser, hold it there across
reconfigurations, report its lock error.

The lock, the project's one: a sweep of the ring heater's power over
:data:`RING_SWEEP_FSR` FSR in steps of a quarter FWHM (refused before it starts when it does
not fit the limits) finds the brightest drop reading (one order up when it leaves the heater
less than :data:`RING_HEADROOM` of an FSR to fall back on); up to :data:`RING_FIT_ITERATIONS`
three-point fits of the resonance (:func:`~photonics.devices.ring.lorentzian_peak`) centre the
heater on it. A heater only heats: a fit that asks for negative power takes the same resonance one
order (one FSR) up, one beyond the current limit one order down.

Every locked ring is then re-centred by the same fit, after each lock, unlock and
reconfiguration (thermal crosstalk from the new heater state moves it) and on ``RING:TRACk``
(sent periodically, it follows the chip's drift), until within :data:`RING_TRACK_DEADBAND`;
re-locked from a sweep when it has moved out of the fit's reach, for up to
:data:`RING_TRACK_ROUNDS` rounds (ring heaters warm each other). A lock succeeds only if
every locked ring ends on resonance within :data:`RING_LOCK_TOLERANCE` by its fit;
otherwise the command fails (-200, or -240 when a ring shows no resonance), naming the ring,
and changes nothing: a later lock or reconfiguration never silently unlocks an earlier ring.
Before a ring is routed, its lock lights every input when one reading takes them all in (a
chip with its own sources); a bench's one laser reaches one input per reading, so there the
lock reads the one input that feeds the ring's detector most (one probe reading per input),
n times fewer readings, and every input only when that input's sweep shows no resonance.
All readings go through the driver's detectors (the emulated chip's photodiodes, or a bench's
power meter), each checked against the limits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from firmware.controller.core import RECONFIGURE_ERRORS, RING, Core
from firmware.declarations import command, query
from firmware.scpi_errors import ScpiError
from photonics.chips.chip import Chip
from photonics.devices.ring import DEFAULT_HEATER_NM_PER_MW, lorentzian_peak
from photonics.progress import steps

#: Three-point fits that refine a ring lock after the sweep.
RING_FIT_ITERATIONS = 4
#: Rounds of re-centring every locked ring after a change.
RING_TRACK_ROUNDS = 6
#: A locked ring whose fit is further than this many half widths from its heater is moved onto
#: it when tracking: 0.002 half widths is 0.18 pm for the default ring (FWHM 181 pm).
RING_TRACK_DEADBAND = 0.002
#: The lock sweeps its ring's heater from 0 mW over this many FSRs of power; a lock whose
#: sweep does not fit the limits is refused before it starts.
RING_SWEEP_FSR = 1.25
#: A resonance found below this fraction of an FSR of heater power is locked one order up
#: (the sweep spans 1 + RING_HEADROOM FSR, so that order is in it).
RING_HEADROOM = RING_SWEEP_FSR - 1
#: A locked ring whose estimated error exceeds this fraction of its FWHM is reported unlocked.
RING_LOCK_TOLERANCE = 0.25
#: A lock sweep through one input shows its ring's resonance when its brightest reading is more
#: than this many times its median (a drop port half an FSR off resonance passes 4e-4 of its
#: peak; noise alone peaks at a few times its median); else it sweeps with every input lit.
RING_CONTRAST = 10.0
#: A fit of a ring's resonance whose width is outside this range of the ring's design width
#: (in heater power) is not its resonance (fits of the ring's resonances come within 0.2 %).
RING_WIDTH_RANGE = (0.5, 2.0)


@dataclass(frozen=True)
class Rings:
    """The rings the controller can lock: the heater channel of each, the detector behind each
    (its drop port), and the rings' design FWHM and FSR (nm) and heater efficiency (nm/mW),
    which size the lock sweep (one FSR and a quarter, in steps of a quarter FWHM)."""

    channels: tuple[int, ...] = ()
    detectors: tuple[int, ...] = ()
    fwhm_nm: float = 0.18
    fsr_nm: float = 9.1
    nm_per_mW: float = DEFAULT_HEATER_NM_PER_MW

    @property
    def fsr_mW(self) -> float:
        """Heater power that moves a resonance by one FSR, mW."""
        return self.fsr_nm / self.nm_per_mW

    @classmethod
    def of_chip(cls, chip: Chip) -> Rings:
        """The output rings of an emulated feed-forward chip: ring k's heater follows the
        mesh's heaters, its drop port is detector k (none without ``output_rings``)."""
        if not chip.spec.output_rings:
            return cls()
        spec = chip.spec
        return cls(
            tuple(int(c) for c in chip.ring_channels),
            tuple(range(chip.n_ports)),
            spec.ring.fwhm_nm(),
            spec.ring.fsr_nm(),
            spec.ring_thermal.heater_nm_per_mW,
        )


class RingCommands(Core):
    """``RING:...`` and the ring hooks of :class:`~firmware.controller.core.Core`."""

    rings: Rings
    #: Per heater channel: currents (mA) and the powers (mW) they draw, for the conversions.
    _curves: dict[int, tuple[np.ndarray, np.ndarray]]

    def _reset_rings(self) -> None:
        self.ring_step: dict[int, float] = {}  # locked ring -> its fit step, mW
        #: Ring -> the input its lock reads, on a driver that reads one input at a time.
        self.ring_source: dict[int, int] = {}
        #: Each ring's last lock sweep: heater power (mW) and its detector's reading (mW).
        self.ring_sweeps: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _ring(self, ring: int) -> tuple[int, int]:
        if ring >= len(self.rings.channels):
            raise ScpiError(-222, f"ring {ring}: this switch has {len(self.rings.channels)} rings")
        return self.rings.channels[ring], self.rings.detectors[ring]

    def _ring_light(self, ring: int) -> np.ndarray:
        """Input light for a ring's detector: the source routed to it; else every input, when
        one reading takes them all in, or else the one input that fed the detector most when
        the ring was locked (:meth:`_brightest_input`)."""
        _, detector = self._ring(ring)
        n = self.driver.n_detectors
        source = self.matching.partner(detector) if self.plan else None
        if source is None and self.driver.inputs_per_reading < n:
            source = self.ring_source.get(ring)
        return np.eye(n)[source] if source is not None else np.ones(n) / np.sqrt(n)

    def _brightest_input(self, ring: int) -> None:
        """Find the input that feeds the ring's detector most, by one reading per input, on a
        driver that reads one lit input at a time (a bench's laser behind its fibre switch):
        the lock then reads that one input instead of every input, n times fewer readings.
        Of n inputs of a lossless mesh one carries at least 1/n of the detector's light, as
        much as all n lit at 1/n each would."""
        n = self.driver.n_detectors
        if self.plan or self.driver.inputs_per_reading >= n:
            return
        _, detector = self._ring(ring)
        here = self.driver.currents()[None]
        seen = [float(self._measure(here, np.eye(n)[k], [detector])[0, 0]) for k in range(n)]
        self.ring_source[ring] = int(np.argmax(seen))

    def _heater_power(self, channel: int, value: np.ndarray, inverse: bool = False) -> np.ndarray:
        """One heater's power (mW) at currents ``value`` (mA), or with ``inverse`` the current
        for powers ``value``: resonances move linearly in power, not in current."""
        curves = self._curves
        if channel not in curves:
            current = np.linspace(0.0, float(self._hw_limit_mA[channel]), 4001)
            rows = np.zeros((current.size, self.driver.n_channels))
            rows[:, channel] = current
            power = self.driver.power_mW(rows) - self.driver.power_mW(rows[0])
            curves[channel] = (current, power)
        current, power = curves[channel]
        return np.interp(value, power, current) if inverse else np.interp(value, current, power)

    def _ring_fit(
        self, ring: int, center: float, step: float, base: np.ndarray | None = None
    ) -> tuple[float, float] | None:
        """Where the ring's resonance is, in heater power (mW), and its half width (mW), from
        three drop readings ``step`` apart around ``center`` (mW)
        (:func:`~photonics.devices.ring.lorentzian_peak`); None when they do not bracket it, or when
        the fit's width is not the ring's (within :data:`RING_WIDTH_RANGE`): three readings
        far off resonance, at the photodiode's noise, can fit a peak too. The other heaters at
        ``base`` (mA; default as they are)."""
        channel, detector = self._ring(ring)
        top = float(self._heater_power(channel, self.current_limit_mA[channel]))
        step = min(step, top / 2)
        ps = np.clip(center, step, top - step) + np.array([-step, 0.0, step])
        base = self.driver.currents() if base is None else base
        rows = np.repeat(base[None], 3, axis=0)
        rows[:, channel] = self._heater_power(channel, ps, inverse=True)
        seen = self._measure(rows, self._ring_light(ring), [detector])[:, 0]
        fit = lorentzian_peak(ps, seen)
        half_width = self.rings.fwhm_nm / self.rings.nm_per_mW / 2
        low, high = RING_WIDTH_RANGE
        return fit if fit is not None and low <= fit[1] / half_width <= high else None

    def _ring_power(self, ring: int) -> float:
        channel, _ = self._ring(ring)
        return float(self._heater_power(channel, self.driver.currents()[channel]))

    def _on_heater(self, ring: int, x: float) -> float:
        """The heater power (mW) that holds the resonance fitted at ``x`` (mW): the same
        resonance one order up when ``x`` is below 0 mW (a heater only heats), one order down
        when it is beyond the current limit."""
        channel, _ = self._ring(ring)
        fsr = self.rings.fsr_mW
        if x < 0:
            return x + fsr
        top = float(self._heater_power(channel, self.current_limit_mA[channel]))
        return x - fsr if x > top and x >= fsr else x

    def _ring_set(self, ring: int, power_mW: float) -> None:
        channel, _ = self._ring(ring)
        new = self.driver.currents()
        new[channel] = self._heater_power(channel, power_mW, inverse=True)
        self._apply(new, self.plan, self.manual)

    @command(
        "RING:LOCK",
        RING,
        summary="Lock a ring to the laser: sweep its heater, hold the drop peak; every locked "
        "ring is then re-centred and must end on resonance.",
        example="RING:LOCK 0",
        errors="-222 no such ring, or its sweep does not fit the limits (refused before it "
        "starts); -240 no resonance seen; " + RECONFIGURE_ERRORS,
        execution="overlapped",
    )
    def lock_ring(self, ring: int) -> None:
        self._lock(ring)
        self._track(list(self.ring_step))

    def lock_all_rings(self) -> list[int]:
        todo = [r for r in range(len(self.rings.channels)) if r not in self.ring_step]
        for r in steps("ring locks", todo, self.progress):
            self.lock_ring(r)
        return list(self.rings.channels)

    def _lock(self, ring: int) -> None:
        channel, detector = self._ring(ring)
        rings = self.rings
        held = self.driver.currents()
        step = rings.fwhm_nm / rings.nm_per_mW / 4
        span = RING_SWEEP_FSR * rings.fsr_mW
        powers = np.arange(0.0, span, step)
        rows = np.repeat(held[None], powers.size, axis=0)
        rows[:, channel] = self._heater_power(channel, powers, inverse=True)
        self._brightest_input(ring)
        try:  # the whole sweep is checked before its first row is sent
            seen = self._measure(rows, self._ring_light(ring), [detector])[:, 0]
            if ring in self.ring_source and not seen.max() > RING_CONTRAST * np.median(seen):
                # the one input shows no resonance (its probe saw noise): every input, as
                # one reading of a chip that lights them all would
                del self.ring_source[ring]
                seen = self._measure(rows, self._ring_light(ring), [detector])[:, 0]
        except ScpiError as exc:
            raise ScpiError(
                exc.code, f"ring {ring}: its lock sweeps 0..{span:.3g} mW: {exc.detail}"
            ) from None
        self.ring_sweeps[ring] = (powers, seen)
        if np.ptp(seen) <= 0:
            raise ScpiError(-240, f"ring {ring}: no resonance seen on detector {detector}")
        x = float(powers[int(np.argmax(seen))])
        if x < RING_HEADROOM * rings.fsr_mW:
            # a heater only heats: a ring parked near 0 mW cannot follow when its neighbours or
            # the chip warm it. The same resonance one order up has headroom: take its peak as
            # the sweep saw it, not x + one modelled FSR (an uncalibrated driver's power scale
            # can be off by several % of an FSR, many linewidths)
            up = powers >= x + rings.fsr_mW / 2
            x = float(powers[up][int(np.argmax(seen[up]))]) if up.any() else x + rings.fsr_mW
        for _ in range(RING_FIT_ITERATIONS):  # Newton-like: each fit centres the next
            fit = self._ring_fit(ring, x, step)
            if fit is None or abs(fit[0] - x) > 3 * step:
                break
            x, step = self._on_heater(ring, fit[0]), max(fit[1] / 2, 1e-9)
        self._ring_set(ring, x)
        self.ring_step[ring] = step

    def _recentred(self, base: np.ndarray) -> np.ndarray:
        """``base`` (mA) with every locked ring's heater moved onto its resonance as the rest
        of ``base`` warms it: one three-point fit each, nothing written (a ring the fit cannot
        place keeps its heater)."""
        out = base.copy()
        for ring, step in self.ring_step.items():
            channel, _ = self._ring(ring)
            x = float(self._heater_power(channel, out[channel]))
            fit = self._ring_fit(ring, x, step, out)
            if fit is not None and abs(fit[0] - x) < 3 * fit[1]:
                out[channel] = self._heater_power(channel, self._on_heater(ring, fit[0]), True)
        return out

    def _track_rings(self) -> None:
        """After a reconfiguration, pull every locked ring back onto its resonance (heater
        crosstalk moves them); a ring that cannot be held fails the reconfiguration."""
        self._track(list(self.ring_step))

    def _track(self, rings: list[int]) -> None:
        """Re-centre ``rings`` (locked) until none has to move: one three-point fit and, when
        it has moved, one write each per round; a full re-lock when the resonance is out of the
        fit's reach. Raises -200 naming the rings still off resonance after
        :data:`RING_TRACK_ROUNDS` rounds (ring heaters warm each other)."""
        for _ in range(RING_TRACK_ROUNDS):
            moved = False
            for ring in rings:
                x = self._ring_power(ring)
                fit = self._ring_fit(ring, x, self.ring_step[ring])
                if fit is None or abs(fit[0] - x) >= 3 * fit[1]:
                    self._lock(ring)
                    moved = True
                elif abs(fit[0] - x) > RING_TRACK_DEADBAND * fit[1]:
                    self._ring_set(ring, self._on_heater(ring, fit[0]))
                    moved = True
            if not moved:
                return  # every ring's fit is within the dead band of its heater
        tolerance = RING_LOCK_TOLERANCE * self.rings.fwhm_nm
        off = [r for r in rings if self._ring_error_nm(r) > tolerance]
        if off:
            raise ScpiError(
                -200,
                f"ring {', '.join(map(str, off))}: not on resonance after {RING_TRACK_ROUNDS} "
                "rounds of re-centring",
            )

    @command(
        "RING:TRACk",
        summary="Re-centre every locked ring on its resonance, once: send it periodically (a "
        "host's timer) to follow the chip's temperature drift between reconfigurations.",
        example="RING:TRAC",
        errors="-200 a ring still off resonance after the rounds of re-centring; "
        + RECONFIGURE_ERRORS,
    )
    def track_rings(self) -> None:
        self._track(list(self.ring_step))

    @command(
        "RING:UNLock",
        RING,
        summary="Release a ring (its heater to 0 mA); the other locked rings are re-centred.",
        example="RING:UNL 0",
        errors="-222 no such ring; " + RECONFIGURE_ERRORS,
    )
    def unlock_ring(self, ring: int) -> None:
        self._ring_set(ring, 0.0)
        self.ring_step.pop(ring, None)
        self._track(list(self.ring_step))  # its heater warmed its neighbours

    def _ring_error_nm(self, ring: int) -> float:
        """Detuning of a locked ring from the laser, nm: the fitted resonance's distance from
        the heater setting, in half widths, times half the design FWHM; inf when the fit's
        readings do not bracket a resonance or cannot be taken inside the limits."""
        x = self._ring_power(ring)
        try:
            fit = self._ring_fit(ring, x, self.ring_step[ring])
        except ScpiError:  # a limit lowered since the lock
            fit = None
        if fit is None:
            return float("inf")
        return abs(fit[0] - x) / fit[1] * self.rings.fwhm_nm / 2

    def rings_locked(self) -> bool:
        return bool(self.ring_step) and all(
            self._ring_error_nm(r) <= RING_LOCK_TOLERANCE * self.rings.fwhm_nm
            for r in self.ring_step
        )

    def ring_drifted(self) -> bool:
        return any(
            self._ring_error_nm(r) > RING_LOCK_TOLERANCE * self.rings.fwhm_nm
            for r in self.ring_step
        )

    @query(
        "RING:STATus",
        RING,
        reply="0|1,error_nm",
        summary="Whether a ring is locked, and its lock error estimated from the drop power "
        "now against the peak found when locking, nm.",
        example="RING:STAT? 0",
        errors="-222 no such ring",
    )
    def ring_status(self, ring: int) -> list[object]:
        self._ring(ring)
        if ring not in self.ring_step:
            return [0, 0.0]
        error = self._ring_error_nm(ring)
        return [int(error <= RING_LOCK_TOLERANCE * self.rings.fwhm_nm), error]

    @query("RING:COUNt", reply="integer", summary="Number of lockable rings.", example="RING:COUN?")
    def ring_count(self) -> int:
        return len(self.rings.channels)
