"""A production test's lock of an emulated feed-forward chip's output rings to the laser.

Each output ``j`` of a :class:`~photonics.chips.chip.Chip` built with ``output_rings`` reaches its
photodiode through the drop port of an add-drop ring whose resonance fabrication puts
``ring_fab_sigma_nm`` (std) off its design. Before the mesh can be measured through them, every
ring is brought onto the laser by its heater; a yield study
(:mod:`photonics.fabrication.chip_yield`) does it for each chip, so the rings' spread costs what it
costs a real chip: heater power, light lost where a lock is off, and a chip whose ring shows no
resonance.

The method is the firmware's ``RING:LOCK`` (``firmware.controller.rings``: a sweep of the ring
heater's power over :data:`SWEEP_FSR` FSR in steps of a quarter FWHM, the brightest drop reading
taken one order up when it leaves less than a quarter FSR of headroom, then three-point fits of
:func:`~photonics.devices.ring.lorentzian_peak`), run on every ring at once: each ring has its own
photodiode, so one sweep of all the ring heaters together reads every ring (the firmware locks
one ring per command, through SCPI). Powers are turned into currents through the heaters'
read-back voltages (``P = I V(I)``, what a driver measures), not the chip's hidden resistances.
"""

from __future__ import annotations

import numpy as np

from photonics.chips.chip import Chip
from photonics.devices.ring import lorentzian_peak
from photonics.errors import FitError

#: The lock sweeps each ring heater from 0 mW over this many FSRs of power.
SWEEP_FSR = 1.25
#: Three-point fits that centre each ring after the sweep (and re-centre it after a change).
FITS = 4
#: Half width of the windows swept around each ring's resonance once every ring has one, FSR:
#: the rings warm each other (60 um apart), so where the first sweep (every ring heater at the
#: same power) saw a resonance moves when the others settle on theirs.
WINDOW_FSR = 0.15
#: Window sweeps before a ring whose brightest reading still moves is given up on.
WINDOWS = 4
#: Current steps of the tabulated power law each heater's power is inverted on.
_CURVE_POINTS = 4001


class RingLock:
    """Locks ``chip``'s output rings through its photodiodes (see the module docstring).

    ``rng`` gives the photodiodes' noise. Every input is lit alone with ``probe_mW`` and the
    readings summed: each output then sees the same light whatever the mesh's state.
    """

    def __init__(self, chip: Chip, rng: np.random.Generator | None, probe_mW: float = 1.0):
        spec = chip.spec
        self.chip, self.rng = chip, rng
        self.channels = chip.ring_channels
        self.fsr_mW = 2 * spec.ring_thermal.p_pi_mW(spec.ring)
        self.step_mW = spec.ring.fwhm_nm() / spec.ring_thermal.heater_nm_per_mW / 4
        self.probe = np.sqrt(probe_mW) * np.eye(chip.n_ports)
        current = np.linspace(0.0, spec.max_current_mA, _CURVE_POINTS)
        rows = np.zeros((current.size, chip.n_heaters))
        rows[:, self.channels] = current[:, None]
        power = rows[:, self.channels] * chip.heater_voltage(rows)[:, self.channels]  # mW
        self._curve = (current, power)  # per ring: read-back power at each current

    def _currents(self, power_mW: np.ndarray) -> np.ndarray:
        current, power = self._curve
        return np.stack(
            [
                np.interp(p, power[:, j], current)
                for j, p in enumerate(np.moveaxis(power_mW, -1, 0))
            ],
            axis=-1,
        )

    def _drop(self, base_mA: np.ndarray, power_mW: np.ndarray) -> np.ndarray:
        """Readings (mW) of the rings' photodiodes with ring heaters at ``power_mW`` (rows,
        rings) and the other heaters at ``base_mA``."""
        rows = np.repeat(base_mA[None], len(power_mW), axis=0)
        rows[:, self.channels] = self._currents(power_mW)
        return sum(self.chip.detect(rows, field, self.rng) for field in self.probe)

    def lock(self, base_mA: np.ndarray) -> np.ndarray:
        """``base_mA`` with every ring heater set on its resonance (mA). Raises
        :class:`FitError` naming the rings whose sweep shows no resonance."""
        powers = np.arange(0.0, SWEEP_FSR * self.fsr_mW, self.step_mW)
        seen = self._drop(base_mA, np.repeat(powers[:, None], self.channels.size, axis=1))
        dark = np.flatnonzero(np.ptp(seen, axis=0) <= 0)
        if dark.size:
            raise FitError(f"ring {', '.join(map(str, dark))}: no resonance seen")
        x = powers[np.argmax(seen, axis=0)]
        for j in np.flatnonzero(x < (SWEEP_FSR - 1) * self.fsr_mW):  # a heater only heats
            up = powers >= x[j] + self.fsr_mW / 2
            x[j] = powers[up][np.argmax(seen[up, j])]
        return self.centre(base_mA, self._window(base_mA, x))

    def _window(self, base_mA: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Ring powers (mW) at the brightest reading of windows swept around ``x``, every ring
        at once, again from there until no ring moves by more than a step."""
        offsets = np.arange(-WINDOW_FSR * self.fsr_mW, WINDOW_FSR * self.fsr_mW, self.step_mW)
        top = float(self._curve[1].max(axis=0).min())  # the weakest heater's reach
        for _ in range(WINDOWS):
            at = np.clip(x[None] + offsets[:, None], 0.0, top)
            seen = self._drop(base_mA, at)
            new = at[np.argmax(seen, axis=0), np.arange(x.size)]
            if np.all(np.abs(new - x) <= self.step_mW):
                return new
            x = new
        return x

    def powers(self, current_mA: np.ndarray) -> np.ndarray:
        """The ring heaters' read-back powers (mW) at ``current_mA``."""
        current, power = self._curve
        return np.array(
            [np.interp(current_mA[c], current, power[:, j]) for j, c in enumerate(self.channels)]
        )

    def centre(self, current_mA: np.ndarray, x: np.ndarray | None = None) -> np.ndarray:
        """``current_mA`` with each ring re-centred on its resonance by up to :data:`FITS`
        three-point fits from ring powers ``x`` (mW; None: where they are), all rings at
        once; a ring whose fit fails or jumps stays where it is."""
        x = self.powers(current_mA) if x is None else np.array(x, dtype=float)
        step = np.full(x.size, self.step_mW)
        top = float(self._curve[1].max(initial=0.0))
        for _ in range(FITS):
            offsets = np.array([-1.0, 0.0, 1.0])[:, None] * step
            at = np.clip(x, step, top - step) + offsets
            seen = self._drop(current_mA, at)
            moved = False
            fresh = np.zeros(x.size, bool)
            for j in range(x.size):
                fit = lorentzian_peak(at[:, j], seen[:, j])
                if fit is None or abs(fit[0] - x[j]) > 3 * step[j]:
                    fresh[j] = True
                    continue
                centre = fit[0] + self.fsr_mW if fit[0] < 0 else fit[0]
                moved |= bool(abs(centre - x[j]) > 1e-6 * self.fsr_mW)
                x[j], step[j] = centre, max(fit[1] / 2, 1e-9)
            if fresh.any():  # out of the fits' reach: find it again
                x[fresh] = self._window(current_mA, x)[fresh]
                step[fresh] = self.step_mW
                moved = True
            if not moved:
                break
        out = np.array(current_mA, dtype=float)
        out[self.channels] = self._currents(x[None])[0]
        return out
