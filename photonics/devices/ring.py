"""Microring resonators: all-pass and add-drop spectra, thermal tuning, and the resonance fit of
the firmware's ring lock.

Units: wavelength nm, radius um, loss dB/cm, power mW (optical and electrical), temperature K,
time s. Fields are complex amplitudes normalised so that ``|field|^2`` is a power fraction.

Ring model (Bogaerts et al., "Silicon microring resonators", Laser Photonics Rev. 6, 47 (2012)).
A ring of round-trip length ``L = 2 pi R``, round-trip amplitude transmission ``a``
(``a^2 = exp(-alpha L)``) and self-coupling coefficients ``r1`` (input bus) and ``r2`` (drop
bus; ``r2 = 1`` for an all-pass ring) has, with ``phi = 2 pi n_eff L / lambda``::

    through = (r1 - r2 a e^{i phi}) / (1 - r1 r2 a e^{i phi})
    drop    = -sqrt((1 - r1^2)(1 - r2^2) a) e^{i phi / 2} / (1 - r1 r2 a e^{i phi})
    FSR     = lambda^2 / (n_g L)
    FWHM    = (1 - r1 r2 a) lambda^2 / (pi n_g L sqrt(r1 r2 a))
    Q       = lambda / FWHM,   finesse = FSR / FWHM

The effective index is linear in wavelength about ``reference_nm`` with slope set by the group
index (``n_g = n_eff - lambda dn_eff/dlambda``), so the resonance spacing is exactly governed by
``n_g``. Critical coupling is ``r1 = a`` (all-pass) or ``r1 = r2 a`` (add-drop).

Thermal tuning is an index change, i.e. a round-trip phase: a resonance shift ``s`` (nm, red
positive, measured at ``reference_nm``) adds ``2 pi s / FSR(reference_nm)`` to ``phi``. A shift of
one reference FSR is then exactly one order; the resonance at ``reference_nm`` moves to
``reference / (1 - s / reference)`` (``+ s`` to first order), one at ``lambda`` by
``s (lambda / reference)^2`` to first order (0.13 % more per nm of distance). The index's own
dispersion with temperature and the change of loss with heating are neglected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from photonics._checks import finite
from photonics.devices.thermal import DEFAULT_P_PI_MW, DEFAULT_TAU_S
from photonics.errors import SettingsError, ShapeError

# --- defaults ------------------------------------------------------------------------------

#: Speed of light in nm * GHz (so that d_lambda[nm] = lambda[nm]^2 * d_f[GHz] / C_NM_GHZ).
C_NM_GHZ = 299_792_458.0
#: Design wavelength of the defaults, nm.
DEFAULT_WAVELENGTH_NM = 1550.0
#: Ring radius, um: a common compact silicon ring.
DEFAULT_RADIUS_UM = 10.0
#: Group index of a 500 x 220 nm silicon wire at 1550 nm.
DEFAULT_N_G = 4.2
#: Resonance order of the default ring at the design wavelength.
DEFAULT_ORDER = 97
#: Effective index: the value near 2.4 (500 x 220 nm wire) that puts resonance order 97 of the
#: default 10 um ring exactly at 1550 nm (2.3929).
DEFAULT_N_EFF = DEFAULT_ORDER * DEFAULT_WAVELENGTH_NM / (2e3 * math.pi * DEFAULT_RADIUS_UM)
#: Waveguide loss, dB/cm (published 1.5-2.5 dB/cm: ``docs/physics.md`` [1]).
DEFAULT_LOSS_DB_PER_CM = 2.0
#: Self-coupling of each bus coupler (power coupling 1 - r^2 = 5.9 %). With the defaults above:
#: FSR 9.10 nm, FWHM 0.180 nm, loaded Q 8.6e3, drop loss 0.18 dB at resonance.
DEFAULT_SELF_COUPLING = 0.97
#: Tuning efficiency of a heater integrated in the resonator (doped silicon), uW per GHz of
#: resonance shift (``docs/physics.md`` [9], Watts et al.): the option
#: :meth:`RingThermal.integrated`, 1.821 nm/mW at 1550 nm.
INTEGRATED_HEATER_UW_PER_GHZ = 4.4
#: Thermal shift of a silicon ring's resonance, nm/K (~10 GHz/K, which is 0.0801 nm/K at 1550).
DEFAULT_AMBIENT_NM_PER_K = 0.08


def ghz_to_nm(delta_GHz: ArrayLike, wavelength_nm: ArrayLike = DEFAULT_WAVELENGTH_NM) -> np.ndarray:
    """A frequency interval (GHz) as a wavelength interval (nm) at ``wavelength_nm``."""
    wl = _positive("wavelength_nm", wavelength_nm)
    return finite("delta_GHz", delta_GHz) * wl**2 / C_NM_GHZ


def heater_nm_per_mW(
    uW_per_GHz: float = INTEGRATED_HEATER_UW_PER_GHZ, wavelength_nm: float = DEFAULT_WAVELENGTH_NM
) -> float:
    """Resonance shift per mW of heater power, nm/mW, from an efficiency in uW/GHz.

    4.4 uW/GHz (an integrated heater) is 227.3 GHz/mW, i.e. 1.821 nm/mW at 1550 nm: a 10 um
    ring's FSR (9.10 nm) costs 5.0 mW, half of it (the ring's "P_pi") 2.5 mW.
    """
    if not (math.isfinite(uW_per_GHz) and uW_per_GHz > 0):
        raise SettingsError(f"uW_per_GHz must be a finite number > 0, got {uW_per_GHz!r}")
    return float(ghz_to_nm(1e3 / uW_per_GHz, wavelength_nm))


#: Default heater efficiency, nm/mW: the TiN top heater the MZIs use (P_pi 21.4 mW,
#: ``docs/physics.md`` [2]) drawn over the default ring. A thermo-optic heater's phase per mW
#: does not depend on its length (phase and power both grow with the heated length), so 2 pi of
#: round trip, one FSR (9.104 nm), costs 2 P_pi: 0.2127 nm/mW (37.7 uW/GHz),
#: inside the 0.1-0.3 nm/mW published for top heaters on ~10 um rings ([9]).
DEFAULT_HEATER_NM_PER_MW = (
    DEFAULT_WAVELENGTH_NM**2
    / (DEFAULT_N_G * 2e3 * math.pi * DEFAULT_RADIUS_UM)
    / (2 * DEFAULT_P_PI_MW)
)
#: Thermal time constant of a doped-silicon heater, s ([2]): the integrated heater's.
DOPED_TAU_S = 2.2e-6


def _positive(name: str, value: ArrayLike) -> np.ndarray:
    arr = finite(name, value)
    if np.any(arr <= 0):
        raise SettingsError(f"{name} must be > 0, got {value!r}")
    return arr


def _scalar(name: str, value: object, low: float, high: float, *, open_low: bool = False) -> float:
    """A finite float in [low, high] (or (low, high] with ``open_low``), else SettingsError."""
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be a number, got {value!r}") from None
    bad = not math.isfinite(x) or x > high or (x <= low if open_low else x < low)
    if bad:
        bracket = "(" if open_low else "["
        raise SettingsError(f"{name} must be in {bracket}{low:g}, {high:g}], got {value!r}")
    return x


# --- the ring -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MicroRing:
    """A microring resonator: add-drop when ``r2`` is a number, all-pass when ``r2`` is None.

    - ``radius_um``: ring radius, um (round trip ``L = 2 pi R``);
    - ``n_eff``: effective index at ``reference_nm``; ``n_g``: group index;
    - ``loss_dB_per_cm``: propagation loss (>= 0), dB/cm, which sets ``a``;
    - ``r1``, ``r2``: self-coupling (field) coefficients of the input and drop couplers, in
      [0, 1) (``1 - r^2`` is the power coupled into the ring);
    - ``reference_nm``: wavelength at which ``n_eff`` is given, nm.
    """

    radius_um: float = DEFAULT_RADIUS_UM
    n_eff: float = DEFAULT_N_EFF
    n_g: float = DEFAULT_N_G
    loss_dB_per_cm: float = DEFAULT_LOSS_DB_PER_CM
    r1: float = DEFAULT_SELF_COUPLING
    r2: float | None = DEFAULT_SELF_COUPLING
    reference_nm: float = DEFAULT_WAVELENGTH_NM

    def __post_init__(self) -> None:
        inf = math.inf
        _scalar("radius_um", self.radius_um, 0, inf, open_low=True)
        _scalar("n_eff", self.n_eff, 0, inf, open_low=True)
        _scalar("n_g", self.n_g, 0, inf, open_low=True)
        _scalar("loss_dB_per_cm", self.loss_dB_per_cm, 0, inf)
        _scalar("reference_nm", self.reference_nm, 0, inf, open_low=True)
        for name in ("r1", "r2"):
            r = getattr(self, name)
            if r is None and name == "r2":
                continue
            # r = 1 would decouple the ring entirely (and make a lossless ring singular)
            number = isinstance(r, int | float | np.floating) and not isinstance(r, bool)
            if not (number and 0 <= r < 1):
                raise SettingsError(f"{name} must be a self-coupling in [0, 1), got {r!r}")
            object.__setattr__(self, name, float(r))

    # geometry and loss
    @property
    def is_add_drop(self) -> bool:
        return self.r2 is not None

    @property
    def length_um(self) -> float:
        """Round-trip length ``2 pi R``, um."""
        return 2 * math.pi * self.radius_um

    @property
    def a(self) -> float:
        """Round-trip amplitude transmission: ``10^(-loss_dB / 20)`` of one round trip."""
        return 10 ** (-self.loss_dB_per_cm * self.length_um * 1e-4 / 20)

    @property
    def reference_fsr_nm(self) -> float:
        """FSR at ``reference_nm``, nm: the shift that moves the spectrum by exactly one order."""
        return self.reference_nm**2 / (self.n_g * self.length_um * 1e3)

    @property
    def _r2(self) -> float:
        return 1.0 if self.r2 is None else self.r2

    @property
    def _x(self) -> float:
        # r1 r2 a: the round-trip feedback amplitude that sets the linewidth
        return self.r1 * self._r2 * self.a

    # spectra
    def phase(self, wavelength_nm: ArrayLike, shift_nm: ArrayLike = 0.0) -> np.ndarray:
        """Round-trip phase ``2 pi n_eff(lambda) L / lambda``, rad, of a ring whose resonances
        are red-shifted by ``shift_nm``."""
        wl = _positive("wavelength_nm", wavelength_nm)
        L_nm = self.length_um * 1e3
        # n_eff(l) = n_eff + (n_eff - n_g)(l - ref)/ref  =>  phi = 2 pi L (n_g / l + const)
        phi = 2 * np.pi * L_nm * (self.n_g / wl + (self.n_eff - self.n_g) / self.reference_nm)
        return phi + 2 * np.pi * finite("shift_nm", shift_nm) / self.reference_fsr_nm

    def scattering(self, wavelength_nm: ArrayLike, shift_nm: ArrayLike = 0.0) -> np.ndarray:
        """Field transfer ``S[..., out, in]`` with ports (0: input bus, 1: drop bus):
        ``[[through, add->through], [drop, add->drop]]``; shape ``(..., 2, 2)``.

        ``add->drop`` is the through response seen from the drop bus (``r1`` and ``r2`` swapped);
        the ring is reciprocal, so ``add->through = drop``. All-pass rings have a dark drop bus.
        """
        phi = self.phase(wavelength_nm, shift_nm)
        e = np.exp(1j * phi)
        den = 1 - self._x * e
        r1, r2, a = self.r1, self._r2, self.a
        drop = -np.sqrt((1 - r1**2) * (1 - r2**2) * a) * np.exp(0.5j * phi) / den
        S = np.empty((*phi.shape, 2, 2), complex)
        S[..., 0, 0] = (r1 - r2 * a * e) / den
        S[..., 1, 0] = S[..., 0, 1] = drop
        S[..., 1, 1] = (r2 - r1 * a * e) / den if self.is_add_drop else 0.0
        return S

    def through_power(self, wavelength_nm: ArrayLike, shift_nm: ArrayLike = 0.0) -> np.ndarray:
        """Through-port power fraction ``(r2^2 a^2 - 2 r1 r2 a cos phi + r1^2) / D``,
        ``D = 1 - 2 r1 r2 a cos phi + (r1 r2 a)^2``."""
        c = np.cos(self.phase(wavelength_nm, shift_nm))
        r1, r2, a, x = self.r1, self._r2, self.a, self._x
        return (r2**2 * a**2 - 2 * x * c + r1**2) / (1 - 2 * x * c + x**2)

    def drop_power(self, wavelength_nm: ArrayLike, shift_nm: ArrayLike = 0.0) -> np.ndarray:
        """Drop-port power fraction ``(1 - r1^2)(1 - r2^2) a / D`` (0 for an all-pass ring)."""
        c = np.cos(self.phase(wavelength_nm, shift_nm))
        r1, r2, a, x = self.r1, self._r2, self.a, self._x
        return (1 - r1**2) * (1 - r2**2) * a / (1 - 2 * x * c + x**2)

    def detuning_nm(self, wavelength_nm: ArrayLike, shift_nm: ArrayLike = 0.0) -> np.ndarray:
        """Nearest resonance minus ``wavelength_nm``, nm, in [-FSR/2, FSR/2): the round-trip
        phase wrapped to [-pi, pi) times ``FSR / 2 pi`` (first order in the detuning)."""
        wl = _positive("wavelength_nm", wavelength_nm)
        psi = np.mod(self.phase(wl, shift_nm) + np.pi, 2 * np.pi) - np.pi
        return psi * wl**2 / (self.n_g * self.length_um * 1e3) / (2 * np.pi)

    # resonances and derived figures
    def resonance_nm(self, near_nm: float | None = None) -> float:
        """The (unshifted) resonance wavelength nearest ``near_nm`` (default ``reference_nm``),
        nm: ``lambda_m = L n_g / (m + L (n_g - n_eff) / ref)`` for the nearest order ``m``."""
        near = self.reference_nm if near_nm is None else _scalar("near_nm", near_nm, 0, math.inf)
        L_nm = self.length_um * 1e3
        offset = L_nm * (self.n_g - self.n_eff) / self.reference_nm
        m = round(L_nm * self.n_g / near - offset)
        if m < 1:
            raise SettingsError(f"no resonance order >= 1 near {near} nm for this ring")
        # the nearest order in phase need not be the nearest in wavelength: check both sides
        cands = [L_nm * self.n_g / (k + offset) for k in (m - 1, m, m + 1) if k + offset > 0]
        return float(min(cands, key=lambda w: abs(w - near)))

    def _at(self, wavelength_nm: float | None) -> float:
        if wavelength_nm is None:
            return self.resonance_nm()
        return _scalar("wavelength_nm", wavelength_nm, 0, math.inf, open_low=True)

    def fsr_nm(self, wavelength_nm: float | None = None) -> float:
        """Free spectral range ``lambda^2 / (n_g L)``, nm (default: at the reference resonance)."""
        wl = self._at(wavelength_nm)
        return wl**2 / (self.n_g * self.length_um * 1e3)

    def fwhm_nm(self, wavelength_nm: float | None = None) -> float:
        """Resonance full width at half maximum, nm (high-finesse formula of Bogaerts Eq. 6)."""
        wl = self._at(wavelength_nm)
        x = self._x
        return (1 - x) * wl**2 / (math.pi * self.n_g * self.length_um * 1e3 * math.sqrt(x))

    def loaded_q(self, wavelength_nm: float | None = None) -> float:
        """Loaded quality factor ``lambda / FWHM``."""
        wl = self._at(wavelength_nm)
        return wl / self.fwhm_nm(wl)

    def intrinsic_q(self, wavelength_nm: float | None = None) -> float:
        """Intrinsic (unloaded) quality factor ``2 pi n_g / (lambda alpha)``; inf without loss."""
        wl = self._at(wavelength_nm)
        alpha_per_nm = self.loss_dB_per_cm * math.log(10) / 10 * 1e-7
        return math.inf if alpha_per_nm == 0 else 2 * math.pi * self.n_g / (wl * alpha_per_nm)

    @property
    def finesse(self) -> float:
        """``FSR / FWHM = pi sqrt(r1 r2 a) / (1 - r1 r2 a)``."""
        x = self._x
        return math.pi * math.sqrt(x) / (1 - x)

    @property
    def critical_r1(self) -> float:
        """The input self-coupling of critical coupling: ``a`` (all-pass) or ``r2 a``
        (add-drop). At it the through port has a null at resonance."""
        return self._r2 * self.a

    @property
    def coupling_regime(self) -> str:
        """``"under"`` (r1 > critical), ``"critical"`` (within 1e-9) or ``"over"``."""
        d = self.r1 - self.critical_r1
        return "critical" if abs(d) <= 1e-9 else ("under" if d > 0 else "over")

    def critically_coupled(self) -> MicroRing:
        """This ring with ``r1`` set to critical coupling."""
        return MicroRing(
            self.radius_um,
            self.n_eff,
            self.n_g,
            self.loss_dB_per_cm,
            self.critical_r1,
            self.r2,
            self.reference_nm,
        )


# --- thermal tuning -------------------------------------------------------------------------


@dataclass(frozen=True)
class RingThermal:
    """Thermal tuning of ring resonances (red shift positive).

    - ``heater_nm_per_mW``: own-heater efficiency, nm/mW (default 0.2127 nm/mW, a TiN top
      heater; :meth:`integrated` for a doped heater in the resonator, 1.821 nm/mW);
    - ``ambient_nm_per_K``: shift with chip temperature, nm/K (default 0.08, ~10 GHz/K);
    - ``tau_s``: first-order thermal time constant of the heater, s (TiN, 5.6 us).
    """

    heater_nm_per_mW: float = DEFAULT_HEATER_NM_PER_MW
    ambient_nm_per_K: float = DEFAULT_AMBIENT_NM_PER_K
    tau_s: float = DEFAULT_TAU_S

    def __post_init__(self) -> None:
        _scalar("heater_nm_per_mW", self.heater_nm_per_mW, 0, math.inf, open_low=True)
        _scalar("ambient_nm_per_K", self.ambient_nm_per_K, -math.inf, math.inf)
        _scalar("tau_s", self.tau_s, 0, math.inf, open_low=True)

    @classmethod
    def integrated(cls) -> RingThermal:
        """A heater integrated in the resonator (doped silicon): 4.4 uW/GHz (1.821 nm/mW) and
        the doped heater's 2.2 us time constant (``docs/physics.md`` [2], [9])."""
        return cls(
            heater_nm_per_mW=heater_nm_per_mW(INTEGRATED_HEATER_UW_PER_GHZ), tau_s=DOPED_TAU_S
        )

    def p_pi_mW(self, ring: MicroRing) -> float:
        """Heater power that moves ``ring`` by half an FSR (a round-trip phase of pi), mW."""
        return ring.reference_fsr_nm / 2 / self.heater_nm_per_mW


# --- locking --------------------------------------------------------------------------------


def lorentzian_peak(x: ArrayLike, reading: ArrayLike) -> tuple[float, float] | None:
    """The centre of a Lorentzian resonance and its half width at half maximum, both in the
    units of ``x`` (e.g. heater power, mW), from readings (any power unit) at three or more
    ``x`` near it: the inverse of a Lorentzian is a parabola in ``x``, so a least-squares
    parabola through ``1 / reading`` gives both, whatever the light's power. None when the
    readings do not bracket a resonance (no parabola opening upwards with a positive minimum).

    The firmware's ring lock (``RING:LOCK``) refines its sweep and tracks each locked ring with
    this fit."""
    xs, ys = finite("x", x), finite("reading", reading)
    if xs.ndim != 1 or xs.shape != ys.shape or xs.size < 3:
        raise ShapeError(
            f"x and reading must be 1-D of equal length >= 3, got {xs.shape}, {ys.shape}"
        )
    inverse = 1 / np.maximum(ys, 1e-12)
    a, b, c = np.polyfit(xs, inverse, 2)
    # a curvature at rounding level is flat readings, not a resonance
    if a * np.ptp(xs) ** 2 <= 1e-9 * np.abs(inverse).max() or c - b * b / (4 * a) <= 0:
        return None
    return float(-b / (2 * a)), float(np.sqrt((c - b * b / (4 * a)) / a))
