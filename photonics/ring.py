"""Microring resonators: all-pass and add-drop spectra, thermal tuning, a ring crossbar switch,
and closed-loop resonance locking.

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
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from photonics._checks import finite
from photonics.errors import SettingsError, ShapeError
from photonics.matching import Permutation
from photonics.thermal import (
    DEFAULT_TAU_S,
    CrosstalkModel,
    crosstalk_matrix,
    own_for_modular_target,
)

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
#: Waveguide loss, dB/cm (1.5-2.5 dB/cm, design notes section 4).
DEFAULT_LOSS_DB_PER_CM = 2.0
#: Self-coupling of each bus coupler (power coupling 1 - r^2 = 5.9 %). With the defaults above:
#: FSR 9.10 nm, FWHM 0.180 nm, loaded Q 8.6e3, drop loss 0.18 dB at resonance.
DEFAULT_SELF_COUPLING = 0.97
#: Heater tuning efficiency of a silicon ring, uW per GHz of resonance shift (design notes).
DEFAULT_HEATER_UW_PER_GHZ = 4.4
#: Thermal shift of a silicon ring's resonance, nm/K (~10 GHz/K, which is 0.0801 nm/K at 1550).
DEFAULT_AMBIENT_NM_PER_K = 0.08


def ghz_to_nm(delta_GHz: ArrayLike, wavelength_nm: ArrayLike = DEFAULT_WAVELENGTH_NM) -> np.ndarray:
    """A frequency interval (GHz) as a wavelength interval (nm) at ``wavelength_nm``."""
    wl = _positive("wavelength_nm", wavelength_nm)
    return finite("delta_GHz", delta_GHz) * wl**2 / C_NM_GHZ


def nm_to_ghz(delta_nm: ArrayLike, wavelength_nm: ArrayLike = DEFAULT_WAVELENGTH_NM) -> np.ndarray:
    """A wavelength interval (nm) as a frequency interval (GHz) at ``wavelength_nm``."""
    wl = _positive("wavelength_nm", wavelength_nm)
    return finite("delta_nm", delta_nm) * C_NM_GHZ / wl**2


def heater_nm_per_mW(
    uW_per_GHz: float = DEFAULT_HEATER_UW_PER_GHZ, wavelength_nm: float = DEFAULT_WAVELENGTH_NM
) -> float:
    """Resonance shift per mW of heater power, nm/mW, from an efficiency in uW/GHz.

    The default 4.4 uW/GHz is 227.3 GHz/mW, i.e. 1.821 nm/mW at 1550 nm: a 10 um ring's FSR
    (9.10 nm) costs 5.0 mW, half of it (the ring's "P_pi") 2.5 mW.
    """
    if not (math.isfinite(uW_per_GHz) and uW_per_GHz > 0):
        raise SettingsError(f"uW_per_GHz must be a finite number > 0, got {uW_per_GHz!r}")
    return float(ghz_to_nm(1e3 / uW_per_GHz, wavelength_nm))


#: Default heater efficiency, nm/mW (1.821 nm/mW; see :func:`heater_nm_per_mW`).
DEFAULT_HEATER_NM_PER_MW = 1e3 / DEFAULT_HEATER_UW_PER_GHZ * DEFAULT_WAVELENGTH_NM**2 / C_NM_GHZ


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

    def through_field(self, wavelength_nm: ArrayLike, shift_nm: ArrayLike = 0.0) -> np.ndarray:
        """Complex field at the through port for unit input field."""
        return self.scattering(wavelength_nm, shift_nm)[..., 0, 0]

    def drop_field(self, wavelength_nm: ArrayLike, shift_nm: ArrayLike = 0.0) -> np.ndarray:
        """Complex field at the drop port for unit input field (0 for an all-pass ring)."""
        return self.scattering(wavelength_nm, shift_nm)[..., 1, 0]

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

    - ``heater_nm_per_mW``: own-heater efficiency, nm/mW (default 1.821 nm/mW, from
      4.4 uW/GHz at 1550 nm);
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

    def p_pi_mW(self, ring: MicroRing) -> float:
        """Heater power that moves ``ring`` by half an FSR (a round-trip phase of pi), mW."""
        return ring.reference_fsr_nm / 2 / self.heater_nm_per_mW


def _check_crosstalk(crosstalk: sp.spmatrix | None, H: int) -> None:
    if crosstalk is not None and crosstalk.shape != (H, H):
        raise ShapeError(f"crosstalk matrix has shape {crosstalk.shape}; expected ({H}, {H})")


def resonance_shift_nm(
    heater_mW: ArrayLike,
    delta_T_K: ArrayLike = 0.0,
    tuning: RingThermal | None = None,
    crosstalk: sp.spmatrix | None = None,
) -> np.ndarray:
    """Steady-state resonance shift of each ring, nm: own heater, thermal crosstalk, ambient::

        shift[v] = eta P[v] + sum_a K[v, a] eta P[a] + kappa delta_T

    ``heater_mW``: (..., H) heater powers (>= 0), mW; ``delta_T_K``: chip temperature change, K;
    ``crosstalk``: K (H x H) from :func:`photonics.thermal.crosstalk_matrix`, where K[v, a] is the
    fraction of the shift aggressor ``a`` gives its own ring that victim ``v`` also sees.
    """
    t = RingThermal() if tuning is None else tuning
    P = finite("heater_mW", heater_mW)
    if np.any(P < 0):
        raise SettingsError(f"heater power must be >= 0 mW (heaters only heat), got {P.min()}")
    own = t.heater_nm_per_mW * P
    if crosstalk is not None:
        _check_crosstalk(crosstalk, P.shape[-1] if P.ndim else 1)
        own = own + (crosstalk @ np.atleast_1d(own).T).T.reshape(own.shape)
    return own + t.ambient_nm_per_K * finite("delta_T_K", delta_T_K)


def heater_mW_for_shift(
    shift_nm: ArrayLike,
    tuning: RingThermal | None = None,
    crosstalk: sp.spmatrix | None = None,
    delta_T_K: float = 0.0,
    period_nm: ArrayLike | None = None,
) -> np.ndarray:
    """Heater powers (mW, >= 0) whose :func:`resonance_shift_nm` equals ``shift_nm`` (H,),
    modulo ``period_nm`` (each ring's FSR) when given.

    The wanted heater-induced shift (ambient removed) is taken in [0, period) and crosstalk is
    pre-compensated by solving ``(1 + K) x = wanted`` (sparse LU, as
    :func:`photonics.thermal.own_phase_for`). A heater can only heat: a ring the solve drives
    negative (its neighbours already over-heat it) is given one more period of shift and the
    system is solved again. Without ``period_nm`` a negative solution raises SettingsError.
    """
    t = RingThermal() if tuning is None else tuning
    target = finite("shift_nm", shift_nm)
    if target.ndim != 1:
        raise ShapeError(f"shift_nm must have shape (H,), got {target.shape}")
    _check_crosstalk(crosstalk, target.size)
    want = target - t.ambient_nm_per_K * _scalar("delta_T_K", delta_T_K, -math.inf, math.inf)
    period = (
        None
        if period_nm is None
        else np.broadcast_to(_positive("period_nm", period_nm), want.shape)
    )
    if period is not None:
        want = np.mod(want, period)
    own = own_for_modular_target(want, period, crosstalk)
    return np.maximum(own, 0.0) / t.heater_nm_per_mW


# --- the crossbar switch --------------------------------------------------------------------

#: Crossbar ring pitch, um: 3 ring diameters, where the nearest neighbour's heater adds 1.5 %
#: of its shift (default :class:`~photonics.thermal.CrosstalkModel`).
DEFAULT_PITCH_UM = 60.0
#: Standard deviation of the rings' fabricated resonance offsets, nm (neighbouring rings on a
#: 220 nm SOI die typically differ by a few tenths of a nm).
DEFAULT_FAB_SIGMA_NM = 0.3
#: Laser wavelength relative to the rings' design resonance, nm: red of it, so that most
#: fabricated rings reach the laser with a small heater power (heaters only red-shift).
DEFAULT_LASER_OFFSET_NM = 1.0
#: Loss of one waveguide crossing where a row bus crosses a column bus, dB (MMI crossing).
DEFAULT_CROSSING_LOSS_DB = 0.1
#: Heater-to-heater crosstalk of the crossbar and lock scenarios (thermal.py's defaults).
DEFAULT_CROSSTALK = CrosstalkModel()


@dataclass(frozen=True, eq=False)
class CrossbarReport:
    """What light does on a crossbar for one heater setting and one permutation.

    - ``heater_mW`` (n, n): heater powers of ring (row, column), mW;
    - ``detuning_nm`` (n, n): realised resonance minus its target (laser for a routing ring,
      laser + park offset otherwise), wrapped into [-FSR/2, FSR/2), nm;
    - ``transfer`` (n, n): power fraction ``transfer[out, in]`` from input row to output column;
    - ``pairs``: the routed (input, output) pairs; ``drop_db``: ``transfer[out, in]`` of each,
      dB (<= 0);
    - ``crosstalk_db``: at each routed output, the power arriving from every *other* lit input
      relative to the wanted signal, dB.
    """

    heater_mW: np.ndarray
    detuning_nm: np.ndarray
    transfer: np.ndarray
    pairs: tuple[tuple[int, int], ...]
    drop_db: np.ndarray
    crosstalk_db: np.ndarray

    @property
    def min_drop_db(self) -> float:
        """Weakest routed signal, dB (``inf`` when nothing is routed)."""
        return float(self.drop_db.min()) if self.drop_db.size else math.inf

    @property
    def worst_crosstalk_db(self) -> float:
        """Highest crosstalk over the routed outputs, dB (``-inf`` with fewer than 2 lit inputs)."""
        return float(self.crosstalk_db.max()) if self.crosstalk_db.size else -math.inf

    @property
    def total_heater_mW(self) -> float:
        return float(self.heater_mW.sum())


@dataclass(frozen=True, eq=False)
class RingCrossbar:
    """An ``n x n`` crossbar of add-drop rings: ring (i, j) couples input row bus ``i`` to output
    column bus ``j``; it sits at ``(x, y) = (j, i) * pitch_um`` and has heater index ``i n + j``.

    Light travels along a row towards increasing column index and along a column towards
    increasing row index (the outputs are at the column ends); row ends are through ports. At
    crosspoint (i, j) a row-column waveguide crossing comes first, then the ring: the row's input
    bus and the column's drop bus. A ring drops row light into its column, couples column light
    (arriving at its add port) onto its row, and passes the rest.

    - ``fab_offset_nm`` (n, n) or scalar: fabricated resonance offsets from the design, nm;
    - ``laser_nm``: the (single) laser wavelength on every input; default design resonance
      + :data:`DEFAULT_LASER_OFFSET_NM`;
    - ``park_nm``: where a ring that does not route is parked, relative to the laser; default
      half an FSR (as far from the laser as possible);
    - ``crossing_loss_db``: loss of each waveguide crossing, dB.
    """

    n: int
    fab_offset_nm: ArrayLike = 0.0
    pitch_um: float = DEFAULT_PITCH_UM
    ring: MicroRing = MicroRing()
    tuning: RingThermal = RingThermal()
    crosstalk_model: CrosstalkModel = DEFAULT_CROSSTALK
    laser_nm: float | None = None
    park_nm: float | None = None
    crossing_loss_db: float = DEFAULT_CROSSING_LOSS_DB

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int | np.integer) or self.n < 1:
            raise ShapeError(f"n must be a positive integer, got {self.n!r}")
        if not self.ring.is_add_drop:
            raise SettingsError("a crossbar needs add-drop rings (ring.r2 is None)")
        n = int(self.n)
        off = finite("fab_offset_nm", self.fab_offset_nm)
        if off.shape not in ((), (n, n)):
            raise ShapeError(f"fab_offset_nm has shape {off.shape}; expected () or ({n}, {n})")
        off = np.broadcast_to(off, (n, n)).copy()
        off.setflags(write=False)
        object.__setattr__(self, "fab_offset_nm", off)
        _scalar("pitch_um", self.pitch_um, 0, math.inf, open_low=True)
        _scalar("crossing_loss_db", self.crossing_loss_db, 0, math.inf)
        laser = self.ring.resonance_nm() + DEFAULT_LASER_OFFSET_NM
        laser = _scalar("laser_nm", laser if self.laser_nm is None else self.laser_nm, 0, math.inf)
        object.__setattr__(self, "laser_nm", laser)
        fsr = self.ring.fsr_nm(laser)
        park = fsr / 2 if self.park_nm is None else self.park_nm
        object.__setattr__(self, "park_nm", _scalar("park_nm", park, -fsr / 2, fsr / 2))
        ij = np.indices((n, n)).reshape(2, -1).T
        object.__setattr__(
            self, "_K", crosstalk_matrix(ij[:, ::-1] * self.pitch_um, self.crosstalk_model)
        )

    @classmethod
    def sample(
        cls, n: int, rng: np.random.Generator, sigma_nm: float = DEFAULT_FAB_SIGMA_NM, **kwargs
    ) -> RingCrossbar:
        """A crossbar whose rings' resonance offsets are Gaussian with std ``sigma_nm``, nm."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ShapeError(f"n must be a positive integer, got {n!r}")
        sigma = _scalar("sigma_nm", sigma_nm, 0, math.inf)
        return cls(int(n), rng.normal(0.0, sigma, size=(int(n), int(n))), **kwargs)

    @property
    def crosstalk(self) -> sp.csr_matrix:
        """Thermal crosstalk K (n^2 x n^2) between the ring heaters (index ``i n + j``)."""
        return self._K  # type: ignore[attr-defined]

    def _check_perm(self, perm: Permutation) -> np.ndarray:
        if not isinstance(perm, Permutation):
            raise ShapeError(f"expected a photonics.matching.Permutation, got {perm!r}")
        if perm.n_ports != self.n:
            raise ShapeError(
                f"permutation has {perm.n_ports} ports; the crossbar is {self.n}x{self.n}"
            )
        routed = np.zeros((self.n, self.n), bool)
        for i, j in perm.pairs():
            routed[i, j] = True
        return routed

    def _target_detuning_nm(self, routed: np.ndarray) -> np.ndarray:
        return np.where(routed, 0.0, self.park_nm)

    def _target_shift_nm(self, routed: np.ndarray) -> np.ndarray:
        # the shift (at the ring's reference wavelength) that brings each fabricated ring's
        # nearest resonance to its target detuning from the laser; exact modulo one FSR
        have = self.ring.detuning_nm(self.laser_nm, self.fab_offset_nm)
        scale = (self.ring.reference_nm / self.laser_nm) ** 2
        return (self._target_detuning_nm(routed) - have) * scale

    def heater_settings(
        self, perm: Permutation, compensate: bool = True, delta_T_K: float = 0.0
    ) -> np.ndarray:
        """Heater powers (n, n), mW, that put the rings of ``perm``'s pairs on the laser and park
        every other ring at ``laser + park_nm`` (shifts taken modulo the FSR).

        ``compensate=True`` pre-compensates the heaters' thermal crosstalk (sparse solve, see
        :func:`heater_mW_for_shift`); ``False`` is the naive setting that ignores it. Both
        remove the ambient shift ``delta_T_K`` (K).
        """
        routed = self._check_perm(perm)
        P = heater_mW_for_shift(
            self._target_shift_nm(routed).ravel(),
            self.tuning,
            self.crosstalk if compensate else None,
            delta_T_K,
            period_nm=self.ring.reference_fsr_nm,
        )
        return P.reshape(self.n, self.n)

    def _check_heaters(self, heater_mW: ArrayLike) -> np.ndarray:
        P = finite("heater_mW", heater_mW)
        if P.shape != (self.n, self.n):
            raise ShapeError(f"heater_mW has shape {P.shape}; expected ({self.n}, {self.n})")
        return P

    def ring_shift_nm(self, heater_mW: ArrayLike, delta_T_K: float = 0.0) -> np.ndarray:
        """Realised resonance shift of every ring (n, n), nm, crosstalk and ambient included."""
        P = self._check_heaters(heater_mW)
        s = resonance_shift_nm(P.ravel(), delta_T_K, self.tuning, self.crosstalk)
        return s.reshape(self.n, self.n)

    def power_transfer(
        self, heater_mW: ArrayLike, delta_T_K: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Incoherent power flow through the crossbar at the laser wavelength.

        Returns ``(out, through)``: ``out[j, i]`` is the power fraction from input row ``i`` at
        output column ``j``; ``through[k, i]`` the fraction leaving row ``k``'s far end.

        Each ring acts on *powers* with the 2x2 matrix ``|S|^2`` of :meth:`MicroRing.scattering`
        (row in -> row out / column out, column in -> column out / row out), each crossing with
        its loss. Inputs are mutually incoherent (independent sources); the model also neglects
        interference between two paths of the *same* input (light that is dropped, coupled back
        onto another row and dropped again), back-reflections, and crossing crosstalk. Those
        multi-path terms are products of two or more parked-ring drops (< -50 dB here).
        """
        n = self.n
        shift = self.ring_shift_nm(heater_mW, delta_T_K) + self.fab_offset_nm
        T = np.abs(self.ring.scattering(self.laser_nm, shift)) ** 2  # (n, n, 2, 2)
        g = 10 ** (-self.crossing_loss_db / 10)
        col = np.zeros((n, n))  # power on column j (rows of the array), per source (columns)
        through = np.zeros((n, n))
        for i in range(n):
            row = np.zeros(n)
            row[i] = 1.0
            for j in range(n):
                row, c = g * row, g * col[j]
                t = T[i, j]
                row, col[j] = t[0, 0] * row + t[0, 1] * c, t[1, 0] * row + t[1, 1] * c
            through[i] = row
        return col, through

    def report(
        self, perm: Permutation, heater_mW: ArrayLike, delta_T_K: float = 0.0
    ) -> CrossbarReport:
        """Drop power and crosstalk of ``perm`` on this crossbar with the given heaters."""
        routed = self._check_perm(perm)
        P = self._check_heaters(heater_mW)
        out, _ = self.power_transfer(P, delta_T_K)
        fsr = self.ring.fsr_nm(self.laser_nm)
        shift = self.fab_offset_nm + self.ring_shift_nm(P, delta_T_K)
        have = self.ring.detuning_nm(self.laser_nm, shift)
        detuning = np.mod(have - self._target_detuning_nm(routed) + fsr / 2, fsr) - fsr / 2
        pairs = tuple(perm.pairs())
        lit = [i for i, _ in pairs]  # dark inputs carry no light
        with np.errstate(divide="ignore"):
            drop = np.array([10 * np.log10(out[j, i]) for i, j in pairs])
            xt = np.array(
                [10 * np.log10(sum(out[j, k] for k in lit if k != i) / out[j, i]) for i, j in pairs]
            )
        if len(lit) < 2:
            xt = np.empty(0)
        return CrossbarReport(P, detuning, out, pairs, drop, xt)

    def route(
        self, perm: Permutation, compensate: bool = True, delta_T_K: float = 0.0
    ) -> CrossbarReport:
        """Set the heaters for ``perm`` (see :meth:`heater_settings`) and report the result."""
        return self.report(perm, self.heater_settings(perm, compensate, delta_T_K), delta_T_K)


# --- closed-loop resonance locking ----------------------------------------------------------
#
# Plant (one ring, discrete time, step dt): the heater's own shift follows its command through a
# first-order lag (exact zero-order-hold discretisation, tau from thermal.py); a neighbouring
# heater's power passes the same lag and adds K * eta * P_n; the chip temperature ramps. The
# photodiode sees the drop-port power of the laser (optionally carrying NRZ data) plus Gaussian
# noise. The resonance error is (resonance - laser), the quantity a lock must hold at zero.


@dataclass(frozen=True)
class DataStream:
    """NRZ data on the laser: the fraction of ones is piecewise constant, a new level drawn
    uniformly in [ones_min, ones_max] every ``hold_s`` seconds; each photodiode sample averages
    ``bit_rate_Gbps * dt`` bits whose count of ones is binomial. A zero carries
    ``10^(-extinction_db/10)`` of a one's power."""

    bit_rate_Gbps: float = 10.0
    ones_min: float = 0.2
    ones_max: float = 0.8
    hold_s: float = 200e-6
    extinction_db: float = 10.0

    def __post_init__(self) -> None:
        _scalar("bit_rate_Gbps", self.bit_rate_Gbps, 0, math.inf, open_low=True)
        _scalar("ones_min", self.ones_min, 0, 1, open_low=True)
        _scalar("ones_max", self.ones_max, self.ones_min, 1)
        _scalar("hold_s", self.hold_s, 0, math.inf, open_low=True)
        _scalar("extinction_db", self.extinction_db, 0, math.inf, open_low=True)

    @property
    def zero_level(self) -> float:
        """Power of a zero relative to a one."""
        return 10 ** (-self.extinction_db / 10)


@dataclass(frozen=True)
class LockScenario:
    """The bench a lock controller is run against (times s, powers mW, wavelengths nm).

    - the ring starts ``initial_detuning_nm`` from the laser with its heater off (negative: blue
      of the laser, since a heater can only red-shift). Default -1 nm: 5.5 FWHM or 11 % of the
      FSR, the spread left by fabrication (sigma 0.3 nm) plus a few K of ambient;
    - the chip warms by ``ambient_ramp_K`` linearly over the run (default 1 K in 4 ms, far
      faster than any real ambient drift);
    - a neighbouring ring's heater, ``neighbour_distance_um`` away (default: the crossbar pitch,
      K = 1.5 %), swings from 0 to ``neighbour_mW`` (default its P_pi, 2.5 mW: its own ring moves
      half an FSR, this one 70 pm = 0.39 FWHM) with a raised-cosine profile of ``swing_s``
      starting at ``swing_start_s``;
    - the photodiode adds Gaussian noise of ``pd_noise_mW`` rms per sample (1e-4 mW on 1 mW:
      shot and amplifier noise of a tap detector in ~0.5 MHz);
    - ``feedforward_error``: the controller knows the neighbour's heater power (the firmware
      sets it) and subtracts its crosstalk with a calibrated K that is this fraction too low
      (default 0.2: the loop must still reject 20 % of the swing); None: feedback only;
    - ``data``: None for a CW laser, else the NRZ stream on it (``laser_mW`` is then a one's
      power).

    Lock criterion: the error enters ``lock_band_fwhm`` (0.5 % of the FWHM) and stays there
    for ``settle_s``; the residual is then judged against the 1 % acceptance separately, so the
    lock instant does not sit on the acceptance boundary by construction.
    """

    ring: MicroRing = MicroRing()
    tuning: RingThermal = RingThermal()
    laser_nm: float | None = None
    laser_mW: float = 1.0
    initial_detuning_nm: float = -1.0
    dt_s: float = 1e-6
    n_steps: int = 4000
    ambient_ramp_K: float = 1.0
    neighbour_distance_um: float = DEFAULT_PITCH_UM
    crosstalk_model: CrosstalkModel = DEFAULT_CROSSTALK
    neighbour_mW: float | None = None
    swing_start_s: float = 1.0e-3
    swing_s: float = 2.0e-3
    pd_noise_mW: float = 1e-4
    feedforward_error: float | None = 0.2
    data: DataStream | None = None
    max_heater_mW: float = 10.0
    lock_band_fwhm: float = 0.005
    settle_s: float = 20e-6

    def __post_init__(self) -> None:
        if not self.ring.is_add_drop:
            raise SettingsError("locking uses the drop port: the ring must be add-drop")
        inf = math.inf
        laser = self.ring.resonance_nm() if self.laser_nm is None else self.laser_nm
        object.__setattr__(self, "laser_nm", _scalar("laser_nm", laser, 0, inf, open_low=True))
        _scalar("laser_mW", self.laser_mW, 0, inf, open_low=True)
        fsr = self.ring.fsr_nm(self.laser_nm)
        _scalar("initial_detuning_nm", self.initial_detuning_nm, -fsr, fsr / 2)
        _scalar("dt_s", self.dt_s, 0, 1e-3, open_low=True)
        if isinstance(self.n_steps, bool) or not isinstance(self.n_steps, int) or self.n_steps < 1:
            raise SettingsError(f"n_steps must be a positive integer, got {self.n_steps!r}")
        _scalar("ambient_ramp_K", self.ambient_ramp_K, -inf, inf)
        _scalar("neighbour_distance_um", self.neighbour_distance_um, 0, inf, open_low=True)
        p_n = self.tuning.p_pi_mW(self.ring) if self.neighbour_mW is None else self.neighbour_mW
        object.__setattr__(self, "neighbour_mW", _scalar("neighbour_mW", p_n, 0, inf))
        _scalar("swing_start_s", self.swing_start_s, 0, inf)
        _scalar("swing_s", self.swing_s, 0, inf)
        _scalar("pd_noise_mW", self.pd_noise_mW, 0, inf)
        if self.feedforward_error is not None:
            _scalar("feedforward_error", self.feedforward_error, -1, 1)
        _scalar("max_heater_mW", self.max_heater_mW, 0, inf, open_low=True)
        _scalar("lock_band_fwhm", self.lock_band_fwhm, 0, 1, open_low=True)
        _scalar("settle_s", self.settle_s, 0, inf)

    @property
    def neighbour_K(self) -> float:
        """Crosstalk coefficient of the neighbouring heater onto this ring's heater."""
        pos = [[0.0, 0.0], [self.neighbour_distance_um, 0.0]]
        return float(crosstalk_matrix(pos, self.crosstalk_model)[0, 1])

    def calibration(self) -> LockCalibration:
        """What the controller's firmware knows about this bench (from calibration)."""
        return LockCalibration(
            dt_s=self.dt_s,
            nm_per_mW=self.tuning.heater_nm_per_mW,
            tau_s=self.tuning.tau_s,
            fwhm_nm=self.ring.fwhm_nm(self.laser_nm),
            fsr_nm=self.ring.reference_fsr_nm,
            peak_mW=self.laser_mW * float(self.ring.drop_power(self.ring.resonance_nm())),
            zero_level=1.0 if self.data is None else self.data.zero_level,
            max_heater_mW=self.max_heater_mW,
            feedforward_K=0.0
            if self.feedforward_error is None
            else self.neighbour_K * (1 - self.feedforward_error),
        )


class LockCalibration(NamedTuple):
    """Bench facts a controller may use: step (s), heater efficiency (nm/mW), thermal time
    constant (s), ring FWHM and FSR (nm), on-resonance drop power of a one / CW (mW), power of
    a zero relative to a one, heater limit (mW), and the calibrated crosstalk coefficient of
    the neighbouring heater used for feedforward (0: none)."""

    dt_s: float
    nm_per_mW: float
    tau_s: float
    fwhm_nm: float
    fsr_nm: float
    peak_mW: float
    zero_level: float
    max_heater_mW: float
    feedforward_K: float = 0.0


class Observation(NamedTuple):
    """One sample: time (s), drop-port power (mW, averaged over the sample), the counted
    fraction of ones among the sample's bits (1.0 for a CW laser), and the neighbouring
    heater's commanded power (mW; the firmware sets it, so it knows it)."""

    t_s: float
    drop_mW: float
    ones_fraction: float = 1.0
    neighbour_mW: float = 0.0


@dataclass(frozen=True, eq=False)
class LockTrace:
    """A lock run: per step the time (s), heater command (mW), resonance error (resonance -
    laser, pm), photodiode reading (mW) and ones fraction; the lock time (s, first time the
    error entered the scenario's lock band and stayed there for ``settle_s``; nan if never)
    and the residual (max |error| from the lock time to the end, as a fraction of the FWHM)."""

    t_s: np.ndarray
    heater_mW: np.ndarray
    error_pm: np.ndarray
    detected_mW: np.ndarray
    ones_fraction: np.ndarray
    fwhm_nm: float
    lock_time_s: float
    residual_fwhm: float

    @property
    def locked(self) -> bool:
        return math.isfinite(self.lock_time_s)


def _lock_time(err_nm: np.ndarray, tol_nm: float, settle: int) -> int | None:
    inside = np.abs(err_nm) <= tol_nm
    # index k where inside[k : k + settle] is all True, first such k
    run = np.convolve(inside.astype(int), np.ones(settle + 1, int), "valid")
    hits = np.flatnonzero(run == settle + 1)
    return int(hits[0]) if hits.size else None


def run_lock(controller: object, scenario: LockScenario, rng: np.random.Generator) -> LockTrace:
    """Simulate ``controller`` (any of :class:`DitherLock`, :class:`PIDLock`,
    :class:`BitStatsLock`) locking the ring of ``scenario`` from a cold start.

    Per step ``k``: the photodiode reads the drop power for the current resonance, the
    controller returns the heater command for the next step, the plant advances.
    """
    if not (hasattr(controller, "start") and hasattr(controller, "step")):
        raise SettingsError(f"controller must have start() and step() methods, got {controller!r}")
    if not isinstance(rng, np.random.Generator):
        raise SettingsError(f"rng must be a numpy.random.Generator, got {rng!r}")
    sc = scenario
    cal = sc.calibration()
    state = controller.start(cal)  # type: ignore[attr-defined]
    N, dt = sc.n_steps, sc.dt_s
    t = np.arange(N) * dt
    noise = rng.normal(0.0, sc.pd_noise_mW, N) if sc.pd_noise_mW > 0 else np.zeros(N)
    if sc.data is None:
        ones = np.ones(N)
        level = np.ones(N)
    else:
        d = sc.data
        n_hold = math.ceil(N * dt / d.hold_s) + 1
        p = rng.uniform(d.ones_min, d.ones_max, n_hold)[(t / d.hold_s).astype(int)]
        n_bits = max(1, round(d.bit_rate_Gbps * 1e9 * dt))
        ones = rng.binomial(n_bits, p) / n_bits
        level = ones + (1 - ones) * d.zero_level
    ambient = sc.tuning.ambient_nm_per_K * sc.ambient_ramp_K * t / (N * dt)
    x = (
        np.clip((t - sc.swing_start_s) / sc.swing_s, 0, 1)
        if sc.swing_s > 0
        else t >= sc.swing_start_s
    )
    neighbour = sc.neighbour_mW * (0.5 - 0.5 * np.cos(np.pi * x))
    ring = sc.ring
    # drop transmission vs total shift, as MicroRing.drop_power (scalar math in the loop)
    phi_laser = float(ring.phase(sc.laser_nm))
    to_phase = 2 * math.pi / ring.reference_fsr_nm
    A = (1 - ring.r1**2) * (1 - ring._r2**2) * ring.a
    B = ring._x
    # fabricated shift that puts the resonance at initial_detuning from the laser
    base = sc.initial_detuning_nm * (ring.reference_nm / sc.laser_nm) ** 2 - float(
        ring.detuning_nm(sc.laser_nm) * (ring.reference_nm / sc.laser_nm) ** 2
    )
    eta, K = sc.tuning.heater_nm_per_mW, sc.neighbour_K
    alpha = 1 - math.exp(-dt / sc.tuning.tau_s)
    own = nb = 0.0
    heater = np.empty(N)
    shift = np.empty(N)
    detected = np.empty(N)
    for k in range(N):
        s = base + own + K * eta * nb + ambient[k]
        shift[k] = s
        y = sc.laser_mW * level[k] * A / (1 - 2 * B * math.cos(phi_laser + to_phase * s) + B * B)
        y += noise[k]
        detected[k] = y
        obs = Observation(float(t[k]), y, float(ones[k]), float(neighbour[k]))
        state, u = controller.step(state, obs)  # type: ignore[attr-defined]
        u = min(max(u, 0.0), sc.max_heater_mW)
        heater[k] = u
        own += alpha * (eta * u - own)
        nb += alpha * (neighbour[k] - nb)
    err_nm = ring.detuning_nm(sc.laser_nm, shift)
    fwhm = cal.fwhm_nm
    k_lock = _lock_time(err_nm, sc.lock_band_fwhm * fwhm, round(sc.settle_s / dt))
    if k_lock is None:
        lock_time, residual = math.nan, math.nan
    else:
        lock_time = float(t[k_lock])
        residual = float(np.abs(err_nm[k_lock:]).max() / fwhm)
    return LockTrace(t, heater, err_nm * 1e3, detected, ones, fwhm, lock_time, residual)


@dataclass(frozen=True)
class SweepSearch:
    """Cold-start search shared by the controllers: ramp the heater up at ``rate_nm_per_s``
    (resonance speed; default 5 pm/us, i.e. 1 nm in 200 us, 28 pm = 0.15 FWHM of thermal lag)
    until the (normalised) drop power has exceeded ``threshold`` of the calibrated peak and
    fallen back below ``fall`` of the highest reading; then return to the heater power of that
    highest reading, corrected for the thermal lag of the ramp. After a whole FSR without a
    resonance the sweep starts again from zero."""

    rate_nm_per_s: float = 5e3
    threshold: float = 0.5
    fall: float = 0.8

    def __post_init__(self) -> None:
        _scalar("rate_nm_per_s", self.rate_nm_per_s, 0, math.inf, open_low=True)
        _scalar("threshold", self.threshold, 0, 1, open_low=True)
        _scalar("fall", self.fall, 0, 1, open_low=True)


class _Search(NamedTuple):
    u: float = 0.0  # last heater command, mW
    best_y: float = -math.inf
    best_u: float = 0.0  # lag-corrected command at the best reading


def _search_step(
    cfg: SweepSearch, cal: LockCalibration, s: _Search, y: float
) -> tuple[_Search, float, bool]:
    """One sweep step on the normalised reading ``y`` (fraction of the peak). Returns the new
    search state, the heater command, and whether the peak has been found (the command is
    then the lag-corrected peak power)."""
    r = cfg.rate_nm_per_s * cal.dt_s / cal.nm_per_mW  # mW per step
    alpha = 1 - math.exp(-cal.dt_s / cal.tau_s)
    u = s.u + r
    if u * cal.nm_per_mW > 1.05 * cal.fsr_nm or u > cal.max_heater_mW:
        return _Search(), 0.0, False
    best_y, best_u = s.best_y, s.best_u
    if y > best_y:
        # under a ramp the resonance trails the command by r / alpha (ZOH first-order lag)
        best_y, best_u = y, max(u - r / alpha, 0.0)
    if best_y >= cfg.threshold and y < cfg.fall * best_y:
        return _Search(best_u, best_y, best_u), best_u, True
    return _Search(u, best_y, best_u), u, False


def _lag_response(alpha: float, omega: float) -> complex:
    """Frequency response (per sample) from heater command to resonance of the ZOH lag:
    ``alpha z^-1 / (1 - (1 - alpha) z^-1)`` at ``z = e^{i omega}``."""
    z1 = complex(math.cos(omega), -math.sin(omega))
    return alpha * z1 / (1 - (1 - alpha) * z1)


def _square_probe(alpha: float, half: int) -> tuple[float, ...]:
    """Steady-state response of the ZOH lag to a +-1 square command (+ for the first ``half``
    samples of each period): the excursion seen by the sample at each index of the period."""
    x, seen = 0.0, []
    for k in range(200 * half):  # settle to the periodic steady state
        if k >= 198 * half:
            seen.append(x)
        x += alpha * ((1.0 if (k // half) % 2 == 0 else -1.0) - x)
    return tuple(seen)


def _compensate(
    c: float, v: float, e: float, bandwidth_Hz: float, T: float, c_max: float
) -> tuple[float, float]:
    """Double integrator on the resonance error ``e`` (nm), one step of ``T`` s::

        dc/dt = -(kp e + v),   dv/dt = ki e,   kp = w_c,  ki = w_c^2 / 4

    (crossover ``w_c = 2 pi bandwidth_Hz``, zero a quarter of it below): type 2, so a ramp
    (ambient drift, a neighbour's heat) is followed without steady error. ``c`` is the heater's
    own shift command (nm), clamped to [0, c_max]; while clamped ``v`` holds (anti-windup)."""
    wc = 2 * math.pi * bandwidth_Hz
    c_new = c - (wc * e + v) * T
    if 0.0 <= c_new <= c_max:
        return c_new, v + wc * wc / 4 * e * T
    return min(max(c_new, 0.0), c_max), v


def _detuning_estimate(slope: float, mean: float, fwhm: float) -> float:
    """Resonance - laser (nm) from the slope dP/d(resonance) (mW/nm) and the mean power near
    the peak of a Lorentzian: ``P' = -8 P delta / W^2``; clipped to +-W/2 where the linear
    estimate stops being meaningful."""
    if mean <= 0:
        return 0.0
    return min(max(-slope * fwhm**2 / (8 * mean), -fwhm / 2), fwhm / 2)


class DitherState(NamedTuple):
    cal: LockCalibration
    search: _Search
    tracking: bool = False
    k: int = 0  # samples since tracking started
    c: float = 0.0  # own-shift command, nm
    v: float = 0.0  # second integrator, nm/s
    prods: tuple[float, ...] = ()  # last period of y * reference
    ys: tuple[float, ...] = ()  # last period of y
    ref: tuple[float, ...] = ()  # demodulation reference, one period
    amp_mW: float = 0.0  # heater dither amplitude


class _Controller:
    """Shared by the lock controllers: ``start(cal)`` gives the initial state, ``step(state,
    obs)`` the new state and the heater command (mW): the controller's loop output minus the
    feedforward of the neighbour's crosstalk (``cal.feedforward_K * obs.neighbour_mW``; the
    neighbour's heat reaches this ring through the same first-order lag as this heater's own,
    so subtracting it from the command cancels it in time as well)."""

    def _loop(self, state: NamedTuple, obs: Observation) -> tuple[NamedTuple, float]:
        raise NotImplementedError  # pragma: no cover - each controller implements it

    def step(self, state: NamedTuple, obs: Observation) -> tuple[NamedTuple, float]:
        state, u = self._loop(state, obs)
        return state, u - state.cal.feedforward_K * obs.neighbour_mW  # type: ignore[attr-defined]


@dataclass(frozen=True)
class DitherLock(_Controller):
    """Dither / lock-in lock on the drop port.

    A sinusoidal dither of ``period_steps`` samples (default 10: 100 kHz at 1 us) on the heater
    moves the resonance by +-``dither_nm`` (after the heater's lag, which the controller
    inverts); the photodiode signal is multiplied by the lag-delayed reference and averaged
    over exactly one period (a sliding boxcar, which nulls DC and the 2f term). The demodulated
    slope, divided by the mean power, gives the detuning (Lorentzian near its peak), which a
    double integrator (crossover ``bandwidth_Hz``) drives to zero: no steady error on ramps.
    """

    search: SweepSearch = SweepSearch()
    period_steps: int = 10
    dither_nm: float = 0.4e-3
    bandwidth_Hz: float = 4e3

    def __post_init__(self) -> None:
        if isinstance(self.period_steps, bool) or not isinstance(self.period_steps, int):
            raise SettingsError(f"period_steps must be an integer >= 4, got {self.period_steps!r}")
        if self.period_steps < 4:
            raise SettingsError(f"period_steps must be an integer >= 4, got {self.period_steps!r}")
        _scalar("dither_nm", self.dither_nm, 0, 0.1, open_low=True)
        _scalar("bandwidth_Hz", self.bandwidth_Hz, 0, 1e6, open_low=True)

    def start(self, cal: LockCalibration) -> DitherState:
        N = self.period_steps
        w = 2 * math.pi / N
        H = _lag_response(1 - math.exp(-cal.dt_s / cal.tau_s), w)
        ph = math.atan2(H.imag, H.real)
        ref = tuple(math.sin(w * i + ph) for i in range(N))
        amp = self.dither_nm / (abs(H) * cal.nm_per_mW)
        return DitherState(cal, _Search(), ref=ref, amp_mW=amp)

    def _loop(self, state: DitherState, obs: Observation) -> tuple[DitherState, float]:
        cal = state.cal
        y = obs.drop_mW
        if not state.tracking:
            s, u, found = _search_step(self.search, cal, state.search, y / cal.peak_mW)
            if not found:
                return state._replace(search=s), u
            return state._replace(search=s, tracking=True, c=u * cal.nm_per_mW), u
        N = self.period_steps
        i = state.k % N
        prods = (*state.prods[-(N - 1) :], y * state.ref[i])
        ys = (*state.ys[-(N - 1) :], y)
        c, v = state.c, state.v
        if len(prods) == N:
            slope = 2 * sum(prods) / N / self.dither_nm  # mW per nm of resonance
            e = _detuning_estimate(slope, sum(ys) / N, cal.fwhm_nm)
            c_max = cal.max_heater_mW * cal.nm_per_mW
            c, v = _compensate(c, v, e, self.bandwidth_Hz, cal.dt_s, c_max)
        # command of sample k: its effect is what ref[k % N] expects in later samples
        u = c / cal.nm_per_mW + state.amp_mW * math.sin(2 * math.pi * i / N)
        return state._replace(k=state.k + 1, c=c, v=v, prods=prods, ys=ys), u


class ProbeState(NamedTuple):
    cal: LockCalibration
    search: _Search
    tracking: bool = False
    k: int = 0  # samples since tracking started
    c: float = 0.0  # own-shift command, nm
    v: float = 0.0  # integrator state (see the controller)
    e_prev: float = 0.0
    ys: tuple[float, ...] = ()  # last probe period of readings, mW
    ws: tuple[float, ...] = ()  # their mark densities (BitStatsLock)
    ref: tuple[float, ...] = ()  # expected resonance excursion of each sample of a period, nm
    amp_mW: float = 0.0  # heater probe amplitude


def _probe_start(cal: LockCalibration, half: int, probe_nm: float) -> tuple[float, tuple]:
    """Heater amplitude (mW) of a square probe whose peak resonance excursion is ``probe_nm``,
    and the excursion (nm) each sample of a period sees through the heater's lag."""
    shape = _square_probe(1 - math.exp(-cal.dt_s / cal.tau_s), half)
    peak = max(abs(v) for v in shape)
    return probe_nm / (peak * cal.nm_per_mW), tuple(v * probe_nm / peak for v in shape)


def _probe_sample(state: ProbeState, half: int, y: float) -> tuple[ProbeState, bool]:
    """Push one reading into the sliding period; True when a probe half has just ended."""
    ys = (*state.ys[-(2 * half - 1) :], y)
    k = state.k + 1
    return state._replace(k=k, ys=ys), len(ys) == 2 * half and k % half == 0


def _probe_slope(state: ProbeState, half: int) -> tuple[float, float]:
    """Matched-filter slope dP/d(resonance), mW/nm, over the last period, and its mean power.

    The buffer's oldest sample has period index ``k mod 2 half``: the regression of the
    readings on the expected excursion (zero mean over a period) is the derivative estimate.
    """
    n = 2 * half
    k0 = state.k % n
    ref = state.ref
    num = sum(y * ref[(k0 + j) % n] for j, y in enumerate(state.ys))
    return num / sum(r * r for r in ref), sum(state.ys) / n


def _weighted_slope(state: ProbeState, half: int) -> tuple[float, float]:
    """Least-squares fit of the last period's readings ``y_j = w_j (P0 + slope x_j)``, with
    ``w_j`` the mark density of sample j's bits and ``x_j`` its expected probe excursion: the
    ones-fraction normalisation done without amplifying the noise of dim samples. Returns
    (slope mW/nm, P0 mW) of an all-ones stream."""
    n = 2 * half
    k0 = state.k % n
    a11 = a12 = a22 = b1 = b2 = 0.0
    for j, (y, w) in enumerate(zip(state.ys, state.ws, strict=True)):
        x = state.ref[(k0 + j) % n]
        a11 += w * w
        a12 += w * w * x
        a22 += w * w * x * x
        b1 += w * y
        b2 += w * x * y
    det = a11 * a22 - a12 * a12
    return (a11 * b2 - a12 * b1) / det, (a22 * b1 - a12 * b2) / det


def _probe_command(state: ProbeState, half: int) -> float:
    sign = 1.0 if (state.k // half) % 2 == 0 else -1.0
    return state.c / state.cal.nm_per_mW + sign * state.amp_mW


@dataclass(frozen=True)
class PIDLock(_Controller):
    """PID lock on the peak of the drop port, via a derivative estimate.

    A square probe (``half_steps`` samples per half; default 5, i.e. 100 kHz) alternates the
    heater between two powers, moving the resonance by up to +-``probe_nm``. At the end of
    each half, the regression of the last period's drop power on the resonance excursion each
    sample saw through the heater's lag (a matched filter) estimates dP/d(resonance). Its set
    point is zero (the top of the resonance); near the peak it converts to the detuning
    ``-P' W^2 / (8 P)``. The PID acts on the heater's *slew rate*, once per half::

        dc/dt = -(kp e + ki int(e) dt + kd de/dt)

    so the loop is type 2 (ramps of ambient or neighbour heat are followed without steady
    error) and the D term is a proportional kick on the heater. Default gains: crossover 4 kHz.
    """

    search: SweepSearch = SweepSearch()
    half_steps: int = 5
    probe_nm: float = 0.4e-3
    kp_per_s: float = 2 * math.pi * 4e3
    ki_per_s2: float = (2 * math.pi * 4e3) ** 2 / 4
    kd: float = 0.1

    def __post_init__(self) -> None:
        if isinstance(self.half_steps, bool) or not isinstance(self.half_steps, int):
            raise SettingsError(f"half_steps must be an integer >= 2, got {self.half_steps!r}")
        if self.half_steps < 2:
            raise SettingsError(f"half_steps must be an integer >= 2, got {self.half_steps!r}")
        _scalar("probe_nm", self.probe_nm, 0, 0.1, open_low=True)
        _scalar("kp_per_s", self.kp_per_s, 0, math.inf)
        _scalar("ki_per_s2", self.ki_per_s2, 0, math.inf)
        _scalar("kd", self.kd, 0, math.inf)

    def start(self, cal: LockCalibration) -> ProbeState:
        amp, ref = _probe_start(cal, self.half_steps, self.probe_nm)
        return ProbeState(cal, _Search(), ref=ref, amp_mW=amp)

    def _loop(self, state: ProbeState, obs: Observation) -> tuple[ProbeState, float]:
        cal = state.cal
        M = self.half_steps
        if not state.tracking:
            s, u, found = _search_step(self.search, cal, state.search, obs.drop_mW / cal.peak_mW)
            if not found:
                return state._replace(search=s), u
            return state._replace(search=s, tracking=True, c=u * cal.nm_per_mW), u
        u = _probe_command(state, M)  # the command of this sample, as the reference assumes
        state, update = _probe_sample(state, M, obs.drop_mW)
        if update:
            slope, mean = _probe_slope(state, M)
            e = _detuning_estimate(slope, mean, cal.fwhm_nm)
            T = M * cal.dt_s
            integral = state.v + e * T
            rate = self.kp_per_s * e + self.ki_per_s2 * integral
            c = state.c - rate * T - self.kd * (e - state.e_prev)
            c_max = cal.max_heater_mW * cal.nm_per_mW
            if 0.0 <= c <= c_max:
                state = state._replace(c=c, v=integral, e_prev=e)
            else:  # clamped: hold the integral (anti-windup)
                state = state._replace(c=min(max(c, 0.0), c_max), e_prev=e)
            u = _probe_command(state._replace(k=state.k - 1), M)
        return state, u


@dataclass(frozen=True)
class BitStatsLock(_Controller):
    """Average-power lock normalised by the data's bit statistics.

    The laser carries NRZ data whose fraction of ones changes; the detected average power is
    proportional to ``ones + (1 - ones) * zero_level`` as much as to the ring's transmission.
    Each photodiode sample (an average over ~1e4 bits) is paired with the mark density of its
    *counted* ones fraction (known to the transmitter, or measured by a bit counter).
    Consecutive windows of ``window_steps`` samples alternate a small heater step (a square
    probe, one window per half); once per window pair a least-squares fit of the samples to
    ``density * (P0 + slope * excursion)`` normalises the average power by the bit statistics
    (weighting bright samples more than a plain division would) and gives the slope, hence the
    detuning, which a double integrator (crossover ``bandwidth_Hz``) drives to zero.
    ``normalise=False`` instead assumes a balanced stream (ones fraction ``assumed_ones``): the
    ablation that shows why the normalisation matters.
    """

    search: SweepSearch = SweepSearch()
    window_steps: int = 5
    probe_nm: float = 0.6e-3
    bandwidth_Hz: float = 2.5e3
    normalise: bool = True
    assumed_ones: float = 0.5

    def __post_init__(self) -> None:
        if isinstance(self.window_steps, bool) or not isinstance(self.window_steps, int):
            raise SettingsError(f"window_steps must be an integer >= 2, got {self.window_steps!r}")
        if self.window_steps < 2:
            raise SettingsError(f"window_steps must be an integer >= 2, got {self.window_steps!r}")
        _scalar("probe_nm", self.probe_nm, 0, 0.1, open_low=True)
        _scalar("bandwidth_Hz", self.bandwidth_Hz, 0, 1e6, open_low=True)
        _scalar("assumed_ones", self.assumed_ones, 0, 1, open_low=True)

    def start(self, cal: LockCalibration) -> ProbeState:
        amp, ref = _probe_start(cal, self.window_steps, self.probe_nm)
        return ProbeState(cal, _Search(), ref=ref, amp_mW=amp)

    def _density(self, cal: LockCalibration, ones: float) -> float:
        f = ones if self.normalise else self.assumed_ones
        return f + (1 - f) * cal.zero_level

    def _loop(self, state: ProbeState, obs: Observation) -> tuple[ProbeState, float]:
        cal = state.cal
        w = self._density(cal, obs.ones_fraction)
        if not state.tracking:
            y = obs.drop_mW / (w * cal.peak_mW)
            s, u, found = _search_step(self.search, cal, state.search, y)
            if not found:
                return state._replace(search=s), u
            return state._replace(search=s, tracking=True, c=u * cal.nm_per_mW), u
        M = self.window_steps
        u = _probe_command(state, M)
        state, update = _probe_sample(state, M, obs.drop_mW)
        state = state._replace(ws=(*state.ws[-(2 * M - 1) :], w))
        if update and state.k % (2 * M) == 0:  # once per window pair (a probe period)
            slope, mean = _weighted_slope(state, M)
            e = _detuning_estimate(slope, mean, cal.fwhm_nm)
            c_max = cal.max_heater_mW * cal.nm_per_mW
            c, v = _compensate(state.c, state.v, e, self.bandwidth_Hz, 2 * M * cal.dt_s, c_max)
            state = state._replace(c=c, v=v)
            u = _probe_command(state._replace(k=state.k - 1), M)
        return state, u
