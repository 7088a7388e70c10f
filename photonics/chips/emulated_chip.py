"""What the emulated chips share: the fabrication spec, the chip drawn from its seed, the heaters
with their limits and thermal crosstalk, the phases that currents produce, photodiode noise and
the factory calibration.

:class:`photonics.chips.chip.Chip` (a feed-forward mesh) and
:class:`photonics.chips.mesh_chip.MeshChip` (a recirculating mesh) are thin topology-specific
wrappers of :class:`EmulatedChip`: they say where the heaters are and how the phases turn into
light.

Fabrication variation is drawn once from ``FabricationSpec.seed``, in this order: coupler
splitting errors (2, cells), loss per cell (cells), P_pi per phase heater, bias phases per
phase heater uniform in [0, 2 pi), then whatever a chip draws after them (the output rings'
resonance offsets of :class:`~photonics.chips.chip.Chip`). Same seed, same chip: the order is part
of what a seed means.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from photonics.chips.calibration import Calibration
from photonics.devices.dispersion import imperfections_at
from photonics.devices.mzi import DEFAULT_LOSS_DB, DEFAULT_SPLITTER_SIGMA, MZIImperfections
from photonics.devices.thermal import (
    DEFAULT_DRIFT_RAD_PER_K,
    DEFAULT_P_PI_MW,
    DEFAULT_TAU_S,
    CrosstalkModel,
    HeaterLayout,
    Heaters,
    differential_crosstalk,
    total_phase,
)
from photonics.errors import SettingsError, ShapeError

#: A typical heater-induced loss of a cell, dB per rad of its heater's own phase: 0.03 dB over
#: a full 2 pi swing. A labelled assumption: thermo-optic phase shifters add well under 0.1 dB
#: over their range (Harris et al., Opt. Express 22, 10487 (2014)). Off by default
#: (``FabricationSpec.heater_loss_db_per_rad`` = 0), which keeps a heater's full period the
#: same state, as the calibration's parking assumes.
TYPICAL_HEATER_LOSS_DB_PER_RAD = 0.005
#: Most cells a spatially correlated variation is drawn for (a dense Cholesky factor).
MAX_CORRELATED_CELLS = 4096

#: Creation time written into a factory calibration (fixed: same seed, same file).
FACTORY_DATE = "2026-01-01T00:00:00+00:00"
#: Wavelength at which heater phases are specified, nm.
REFERENCE_WAVELENGTH_NM = 1550.0


@dataclass(frozen=True, kw_only=True)
class FabricationSpec:
    """The fabrication and drive settings every emulated chip has (units in the names).

    ``loss_db`` is the mean insertion loss of a cell (an MZI), ``loss_sigma_db`` its spread
    from cell to cell, ``p_pi_spread`` the relative spread of the heaters' P_pi;
    ``crosstalk`` the thermal crosstalk law between heaters (None: none);
    ``heater_loss_db_per_rad`` a cell's extra loss per rad of its heater's own phase (0: none;
    :data:`TYPICAL_HEATER_LOSS_DB_PER_RAD` is typical);
    ``correlation_length_um`` (None: independent cells) makes the cells' splitter errors and
    losses a Gaussian random field over the chip with that length scale; ``noise_floor_mW``
    the photodiodes' Gaussian noise; ``power_budget_mW`` the limit on the total heater power
    (None: ``2 p_pi_mW``, a full period, per heater, so any phase setting fits and only drive
    far beyond any setting's need is refused; inf: no limit). Every other number must be
    finite, and none may be a bool.
    """

    seed: int = 0
    splitter_sigma: float = DEFAULT_SPLITTER_SIGMA
    loss_db: float = DEFAULT_LOSS_DB
    loss_sigma_db: float = 0.02
    p_pi_mW: float = DEFAULT_P_PI_MW
    p_pi_spread: float = 0.05
    crosstalk: CrosstalkModel | None = field(default_factory=CrosstalkModel)
    noise_floor_mW: float = 1e-6
    max_current_mA: float = 10.0
    power_budget_mW: float | None = None
    heater_loss_db_per_rad: float = 0.0
    correlation_length_um: float | None = None

    #: Fields that must be numbers >= 0, and > 0; a spec that adds fields adds their names.
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = (
        "splitter_sigma",
        "loss_db",
        "loss_sigma_db",
        "p_pi_spread",
        "noise_floor_mW",
        "heater_loss_db_per_rad",
    )
    POSITIVE: ClassVar[tuple[str, ...]] = ("p_pi_mW", "max_current_mA")

    def __post_init__(self) -> None:
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
            raise SettingsError(f"seed must be an integer >= 0, got {seed!r}")
        for name in (*self.NON_NEGATIVE, *self.POSITIVE):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Real):
                raise SettingsError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise SettingsError(f"{name} must be finite, got {value!r}")
            if name in self.POSITIVE and not value > 0:
                raise SettingsError(f"{name} must be > 0, got {value!r}")
            if not value >= 0:
                raise SettingsError(f"{name} must be >= 0, got {value!r}")
        budget = self.power_budget_mW
        if budget is not None and (
            isinstance(budget, bool) or not isinstance(budget, Real) or not budget > 0
        ):
            raise SettingsError(
                f"power_budget_mW must be a number > 0, inf or None, got {budget!r}"
            )
        length = self.correlation_length_um
        if length is not None and (
            isinstance(length, bool) or not isinstance(length, Real) or not 0 < length < math.inf
        ):
            raise SettingsError(
                f"correlation_length_um must be a number > 0 um or None, got {length!r}"
            )
        if self.crosstalk is not None and not isinstance(self.crosstalk, CrosstalkModel):
            raise SettingsError(
                f"crosstalk must be a CrosstalkModel or None, got {type(self.crosstalk).__name__}"
            )


class EmulatedChip:
    """An emulated chip of ``n_cells`` MZI cells and ``n_phase_heaters`` heaters drawn from
    ``spec`` (see the module docstring); a subclass draws further heaters in
    :meth:`_more_heaters`. Stateless: every call says the currents (mA, one per heater; leading
    axes are a batch)."""

    #: The ``chip_id`` of :meth:`factory_calibration` unless one is given.
    FACTORY_ID: ClassVar[str] = "chip"

    def __init__(self, spec: FabricationSpec, n_cells: int, n_phase_heaters: int) -> None:
        self.spec = spec
        self._n_cells = n_cells
        rng = np.random.default_rng(spec.seed)
        # the same draws as independent cells, correlated over the chip when asked
        split = self._correlated(rng.normal(0.0, 1.0, (2, n_cells)))
        split = (spec.splitter_sigma * split).clip(-0.5, 0.5)
        loss_z = self._correlated(rng.normal(0.0, 1.0, n_cells))
        loss = np.maximum(spec.loss_db + spec.loss_sigma_db * loss_z, 0.0)
        self.imperfections = MZIImperfections(split[0], split[1], loss, loss)
        H = n_phase_heaters
        p_pi = spec.p_pi_mW * np.maximum(1 + rng.normal(0.0, spec.p_pi_spread, H), 0.2)
        bias = rng.uniform(0, 2 * np.pi, H)
        drift = np.full(H, DEFAULT_DRIFT_RAD_PER_K)
        tau = np.full(H, DEFAULT_TAU_S)
        more = self._more_heaters(rng)
        if more is not None:
            p_pi, bias, drift, tau = (
                np.concatenate(p) for p in zip((p_pi, bias, drift, tau), more, strict=True)
            )
        H = len(p_pi)
        self.heaters = Heaters(
            H,
            p_pi_mW=p_pi,
            bias_rad=bias,
            drift_rad_per_K=drift,
            tau_s=tau,
            max_current_mA=spec.max_current_mA,
            power_budget_mW=(
                2 * spec.p_pi_mW * H if spec.power_budget_mW is None else spec.power_budget_mW
            ),
            full_scale_mA=spec.max_current_mA,
        )

    def _more_heaters(
        self, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """(P_pi mW, bias rad, drift rad/K, time constant s) of heaters after the phase
        heaters, drawn from ``rng`` after them; None: none."""
        return None

    def _correlated(self, z: np.ndarray) -> np.ndarray:
        """Standard normal draws ``(..., n_cells)``, spatially correlated over the cells' heater
        positions when the spec has a ``correlation_length_um``: ``L z`` with ``L`` the Cholesky
        factor of the squared-exponential covariance ``exp(-d^2 / (2 l^2))``, so each cell's
        spread is unchanged and near cells deviate alike (Lu et al., Opt. Express 25, 9712
        (2017))."""
        length = self.spec.correlation_length_um
        if length is None:
            return z
        if self._n_cells > MAX_CORRELATED_CELLS:
            raise SettingsError(
                f"correlated variation is drawn for up to {MAX_CORRELATED_CELLS} cells, "
                f"this chip has {self._n_cells}"
            )
        pos = np.asarray(self.heater_positions_um, dtype=float)[: self._n_cells]
        d2 = ((pos[:, None, :] - pos[None, :, :]) ** 2).sum(axis=-1)
        cov = np.exp(-d2 / (2 * length**2)) + 1e-9 * np.eye(self._n_cells)  # jitter: PD
        return z @ np.linalg.cholesky(cov).T

    def _cell_imperfections(
        self, own: np.ndarray, wavelength_nm: float | np.ndarray
    ) -> MZIImperfections:
        """The cells' imperfections at the heaters' own phases (rad, ``(..., H)``) and a
        wavelength (or a column ``(W, 1)`` of them): the heater-induced loss
        (``heater_loss_db_per_rad`` times each cell heater's own phase) on top of the fabricated
        loss, then across the band (:func:`photonics.devices.dispersion.imperfections_at`)."""
        imp, rate = self.imperfections, self.spec.heater_loss_db_per_rad
        if rate:
            extra = rate * own[..., : self._n_cells]
            imp = MZIImperfections(
                imp.splitter_error_in,
                imp.splitter_error_out,
                imp.loss_bar_db + extra,
                imp.loss_cross_db + extra,
            )
        return imperfections_at(imp, wavelength_nm)

    @property
    def n_ports(self) -> int:
        """Number of photodiodes (switch endpoints)."""
        raise NotImplementedError

    @property
    def n_heaters(self) -> int:
        return self.heaters.count

    @property
    def heater_positions_um(self) -> np.ndarray:
        """(H, 2) heater centres, um."""
        raise NotImplementedError

    @property
    def ring_channels(self) -> np.ndarray:
        """The heater channels of rings before the photodiodes, ring ``j`` before output ``j``
        (none here)."""
        return np.zeros(0, dtype=int)

    @property
    def other_arms_um(self) -> np.ndarray:
        """(M, 2) centres of the unheated arms of heaters ``0 .. M-1``, um (none here)."""
        return np.zeros((0, 2))

    @cached_property
    def heater_layout(self) -> HeaterLayout:
        """Where the heaters and the MZIs' other arms are (what crosstalk depends on)."""
        return HeaterLayout(self.heater_positions_um, self.other_arms_um)

    @cached_property
    def crosstalk(self) -> sp.csr_matrix | None:
        """The chip's true thermal crosstalk matrix ``K[victim, aggressor]``: the change of what
        each heater sets, both arms' warming counted (what calibration tries to learn; None
        without a crosstalk law)."""
        if self.spec.crosstalk is None:
            return None
        return differential_crosstalk(self.heater_layout, self.spec.crosstalk)

    def _other_arm_phase(self, own: np.ndarray, wavelength_nm: float | np.ndarray) -> np.ndarray:
        """Phase (rad, ``(..., M)``) the heaters' warmth (their own phases, rad, ``(..., H)``)
        puts on the MZIs' unheated arms, at one wavelength (nm) or a column ``(W, 1)`` of them."""
        M, A = len(self.other_arms_um), self._arm_kernel
        if A is None:
            return np.zeros((*np.shape(own)[:-1], M))
        flat = (A @ own.reshape(-1, own.shape[-1]).T).T
        return REFERENCE_WAVELENGTH_NM / wavelength_nm * flat.reshape((*own.shape[:-1], M))

    @cached_property
    def _arm_kernel(self) -> sp.csr_matrix | None:
        if self.spec.crosstalk is None or len(self.other_arms_um) == 0:
            return None
        return self.heater_layout.arm_crosstalk(self.spec.crosstalk)

    # ---- heaters ----------------------------------------------------------------------------
    def _currents(self, current_mA: ArrayLike) -> np.ndarray:
        """``current_mA`` as floats, after the heaters' limits (the one check of a call)."""
        current = np.asarray(current_mA, dtype=float)
        if current.shape[-1:] != (self.n_heaters,):
            raise ShapeError(f"expected {self.n_heaters} heater currents (mA), got {current.shape}")
        self.heaters.check_limits(current)
        return current

    def _phase(
        self, current: np.ndarray, delta_T_K: float, wavelength_nm: float | np.ndarray
    ) -> np.ndarray:
        """Every heater's total phase (rad) at checked currents: own heat and crosstalk (both
        scaling as ``1550 nm / wavelength``), bias and ambient drift (``delta_T_K`` above the
        reference, K). A column ``(W, 1)`` of wavelengths gives one row per wavelength."""
        scale = REFERENCE_WAVELENGTH_NM / wavelength_nm
        return total_phase(self.heaters, current, self.crosstalk, delta_T_K, scale)

    def _phases(self, current_mA: ArrayLike, delta_T_K: float, wavelength_nm: float) -> np.ndarray:
        """:meth:`_phase` of currents and conditions checked here."""
        check_conditions(delta_T_K, wavelength_nm)
        return self._phase(self._currents(current_mA), delta_T_K, wavelength_nm)

    def heater_voltage(self, current_mA: ArrayLike) -> np.ndarray:
        """Voltage (V) across each heater at these currents, as a driver reads it back."""
        return self.heaters.voltage_V(self._currents(current_mA))

    # ---- light ------------------------------------------------------------------------------
    def detect(
        self,
        current_mA: ArrayLike,
        input_field: ArrayLike,
        rng: np.random.Generator | None = None,
        delta_T_K: float = 0.0,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> np.ndarray:
        """Power (mW) on every photodiode for the fields (sqrt(mW)) entering the endpoints,
        shape ``(..., n_ports)`` (the batch axes of currents and fields broadcast). With
        ``rng``, each reading gets Gaussian noise of ``noise_floor_mW``."""
        field_in = np.asarray(input_field, dtype=complex)
        if field_in.ndim == 0 or field_in.shape[-1] != self.n_ports:
            raise ShapeError(f"expected {self.n_ports} input fields, got shape {field_in.shape}")
        if not np.all(np.isfinite(field_in)):
            raise SettingsError("input_field must be finite (sqrt(mW))")
        power = self._power(current_mA, field_in, delta_T_K, wavelength_nm)
        if rng is not None:
            power = power + rng.normal(0.0, self.spec.noise_floor_mW, power.shape)
        return power

    def _power(
        self, current_mA: ArrayLike, field_in: np.ndarray, delta_T_K: float, wavelength_nm: float
    ) -> np.ndarray:
        """Noiseless photodiode powers (mW) for checked input fields."""
        raise NotImplementedError

    # ---- production test --------------------------------------------------------------------
    def factory_calibration(self, chip_id: str | None = None) -> Calibration:
        """The chip's true heater parameters as a calibration: what a production test of this
        chip would have measured (resistance ``R(I) = a I^2 + c``, P_pi, bias and, with a
        crosstalk law, the crosstalk matrix), so an emulated switch can start calibrated, as a
        shipped device does. Dated :data:`FACTORY_DATE`: same seed, same file."""
        h = self.heaters
        return Calibration(
            chip_id=self.FACTORY_ID if chip_id is None else chip_id,
            p_pi_mW=h.p_pi_mW,
            bias_rad=h.bias_rad,
            a_ohm_per_mA2=h.r_rise_ohm_per_mA2,
            c_ohm=h.r0_ohm,
            created=FACTORY_DATE,
            crosstalk=None if self.crosstalk is None else self.crosstalk.toarray(),
        )


def check_conditions(delta_T_K: float, wavelength_nm: float) -> None:
    """:class:`SettingsError` unless ``delta_T_K`` (K) is one finite number and
    ``wavelength_nm`` one number in 1000..2000 nm."""
    if np.ndim(delta_T_K) != 0:
        raise SettingsError(f"delta_T_K must be one number of kelvin, got {delta_T_K!r}")
    if not math.isfinite(delta_T_K):
        raise SettingsError(f"delta_T_K must be finite, got {delta_T_K!r}")
    if np.ndim(wavelength_nm) != 0 or not 1000 <= wavelength_nm <= 2000:
        raise SettingsError(f"wavelength_nm must be in 1000..2000 nm, got {wavelength_nm!r}")
