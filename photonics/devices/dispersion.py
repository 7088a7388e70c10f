"""Wavelength dependence of the MZI cells: directional-coupler splitting and insertion loss
across a band, evaluated for a whole grid of wavelengths at once (a leading wavelength axis).

Coupler (coupled-mode theory; Chrostowski and Hochberg, *Silicon Photonics Design*, Cambridge
University Press (2015), section 4.1): a directional coupler of length ``L`` crosses
``k = sin^2(kappa L)`` of the power, and its coupling coefficient ``kappa`` grows with the
wavelength as the modes spread into the gap, close to exponentially over a band::

    kappa(lambda) L = kappa(lambda0) L * exp((lambda - lambda0) / COUPLING_SCALE_NM)

so a coupler that splits ``k0`` at ``lambda0`` = 1550 nm splits
``sin^2(arcsin(sqrt(k0)) exp((lambda - lambda0) / scale))`` at ``lambda``. The default scale,
600 nm, makes a 50:50 coupler cross 47 % at 1530 nm and 54 % at 1580 nm: the order of the
strip couplers simulated in the same source (an assumption: fit a real coupler's scale).

Loss: an MZI's insertion loss is taken to scale as ``(lambda0 / lambda)^LOSS_EXPONENT``
(sidewall scattering grows toward shorter wavelengths, Payne and Lacey, Opt. Quantum Electron.
26, 977 (1994)); the exponent 2 is a labelled assumption, a few per cent across the C band.

Waveguides: the group index (4.2 for a silicon wire) sets each link's phase on a recirculating
mesh (:func:`photonics.recirculating.mesh_scattering.link_transmission`). On a feed-forward mesh
every path crosses the same waveguide lengths, so that dispersion is a global phase and changes no
power; what changes across the band there is the couplers, the losses and the heater phases, which
scale as ``lambda0 / lambda`` (:mod:`photonics.chips.emulated_chip`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from photonics._checks import finite
from photonics.devices.mzi import MZIImperfections, extinction_ratio_db
from photonics.errors import SettingsError

#: Wavelength at which couplers, losses and heater phases are specified, nm.
DESIGN_WAVELENGTH_NM = 1550.0
#: ``kappa L`` grows by a factor e every this many nm (see the module docstring).
COUPLING_SCALE_NM = 600.0
#: Insertion loss scales as ``(lambda0 / lambda)`` to this power (a labelled assumption).
LOSS_EXPONENT = 2.0
#: Wavelengths this model is used for, nm.
BAND_LIMITS_NM = (1000.0, 2000.0)


def wavelengths(value: ArrayLike) -> np.ndarray:
    """``value`` (nm) as a float array, each in :data:`BAND_LIMITS_NM`; else SettingsError."""
    lam = finite("wavelength_nm", value)
    low, high = BAND_LIMITS_NM
    if lam.size == 0 or np.any((lam < low) | (lam > high)):
        raise SettingsError(f"wavelengths must be in {low:g}..{high:g} nm, got {value!r}")
    return lam


def band(start_nm: float, stop_nm: float, points: int) -> np.ndarray:
    """``points`` wavelengths (nm) evenly from ``start_nm`` to ``stop_nm``, both included."""
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise SettingsError(f"a band needs an integer number of points >= 1, got {points!r}")
    if not start_nm <= stop_nm:
        raise SettingsError(f"a band runs from low to high, got {start_nm:g}..{stop_nm:g} nm")
    return wavelengths(np.linspace(start_nm, stop_nm, points))


def coupler_splitting(
    k_design: ArrayLike, wavelength_nm: ArrayLike, scale_nm: float = COUPLING_SCALE_NM
) -> np.ndarray:
    """Cross power fraction at ``wavelength_nm`` of couplers that cross ``k_design`` (in [0, 1])
    at :data:`DESIGN_WAVELENGTH_NM`; arrays broadcast."""
    k = finite("k_design", k_design)
    if np.any((k < 0) | (k > 1)):
        raise SettingsError(f"k_design must be in [0, 1], got {k_design!r}")
    lam = wavelengths(wavelength_nm)
    stretch = np.exp((lam - DESIGN_WAVELENGTH_NM) / scale_nm)
    return np.sin(np.arcsin(np.sqrt(k)) * stretch) ** 2


def loss_factor(wavelength_nm: ArrayLike) -> np.ndarray:
    """Insertion loss (dB) at ``wavelength_nm`` over the loss at the design wavelength."""
    return (DESIGN_WAVELENGTH_NM / wavelengths(wavelength_nm)) ** LOSS_EXPONENT


def imperfections_at(imperfections: MZIImperfections, wavelength_nm: ArrayLike) -> MZIImperfections:
    """``imperfections`` (given at the design wavelength) at ``wavelength_nm``: one wavelength,
    or a column of them shaped ``(W, 1)`` (each field then ``(W, n_mzi)`` or ``(W, 1)``, for a
    batched transfer over the band). Exactly ``imperfections`` at the design wavelength."""
    lam = wavelengths(wavelength_nm)
    if lam.ndim == 0 and float(lam) == DESIGN_WAVELENGTH_NM:
        return imperfections
    k_in = coupler_splitting(0.5 + np.asarray(imperfections.splitter_error_in), lam)
    k_out = coupler_splitting(0.5 + np.asarray(imperfections.splitter_error_out), lam)
    f = loss_factor(lam)
    return MZIImperfections(
        k_in - 0.5,
        k_out - 0.5,
        np.asarray(imperfections.loss_bar_db) * f,
        np.asarray(imperfections.loss_cross_db) * f,
    )


def band_extinction_db(
    imperfections: MZIImperfections, wavelengths_nm: ArrayLike
) -> float | np.ndarray:
    """Each cell's worst extinction ratio (dB) over ``wavelengths_nm`` (1-D, nm): what a
    :class:`~photonics.recirculating.routing.Router` given it as ``extinction_db`` predicts
    isolation with, to route for a band rather than one wavelength. A scalar for scalar
    imperfections."""
    lam = wavelengths(wavelengths_nm)
    if lam.ndim != 1:
        raise SettingsError(f"wavelengths_nm must be 1-D, got shape {lam.shape}")
    at = imperfections_at(imperfections, lam[:, None])
    worst = np.min(extinction_ratio_db(at.splitter_error_in, at.splitter_error_out), axis=0)
    return float(worst[0]) if np.ndim(imperfections.splitter_error_in) == 0 else worst
