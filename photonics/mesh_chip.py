"""An emulated recirculating-mesh chip: a hexagonal (or any) waveguide mesh of heated 2x2 cells,
fabrication variation drawn from a seed, and photodiodes on the switch's endpoint edge ports.

The counterpart of :class:`photonics.chip.Chip` for the meshes of
:mod:`photonics.waveguide_mesh`, with the same surface where it makes sense, so the firmware's
:class:`~firmware.driver.EmulatedDriver` drives either.

Heater channels, 0-based: channel ``c`` is the heater of cell ``c``, on the cell's internal arm
(its top arm between the two couplers). Its total phase ``psi`` (own heating, thermal crosstalk,
fabrication bias and ambient drift, :func:`photonics.thermal.total_phase`) gives arm phases
``(psi, 0)``: ``2 theta = psi``, as for the internal heaters of :mod:`photonics.chip`, so
:func:`photonics.selfcal.currents_for_theta` turns cell angles into currents. The arms' mean
phase ``psi / 2`` is a phase of the whole cell (light passing it either way picks it up); it is
kept, since light circulating in the mesh's loops interferes with itself. A circuit switch sets
every cell to bar or cross, and no routed path relies on interference between cells, so the
cells have no phase heaters of their own.

Fabrication variation is drawn once from ``MeshChipSpec.seed``, in the order of
:class:`~photonics.chip.Chip`: coupler splitting errors, per-cell loss, P_pi spread, bias
phases uniform in [0, 2 pi). Same seed and mesh, same chip.

Each link (one unit length of waveguide) has the phase and loss of
:func:`photonics.mesh_scattering.link_transmission`; the ambient temperature moves its effective
index by :data:`THERMO_OPTIC_PER_K` per kelvin, as it moves the heaters' phases by their drift.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from photonics._checks import finite
from photonics.calibration import Calibration
from photonics.chip import FACTORY_DATE, REFERENCE_WAVELENGTH_NM
from photonics.errors import PortError, SettingsError, ShapeError
from photonics.mesh_scattering import (
    DEFAULT_CELL_LOSS_DB,
    DEFAULT_N_EFF,
    DEFAULT_N_G,
    DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM,
    link_transmission,
    mesh_solver,
)
from photonics.mzi import (
    DEFAULT_SPLITTER_SIGMA,
    MZIImperfections,
    from_arm_phases,
    imperfect_transfer,
)
from photonics.routing import Path
from photonics.thermal import (
    DEFAULT_DRIFT_RAD_PER_K,
    DEFAULT_P_PI_MW,
    CrosstalkModel,
    Heaters,
    crosstalk_matrix,
    total_phase,
)
from photonics.waveguide_mesh import WaveguideMesh

#: Thermo-optic coefficient of silicon, 1/K: the links' effective index change per kelvin.
THERMO_OPTIC_PER_K = 1.86e-4


@dataclass(frozen=True)
class MeshChipSpec:
    """Everything that defines an emulated mesh chip besides its mesh and endpoints (units in
    the names). ``loss_db`` is the mean insertion loss of a cell, ``loss_sigma_db`` its spread
    from cell to cell; ``waveguide_loss_db_per_cm`` the links' propagation loss;
    ``crosstalk`` the thermal crosstalk law between the cells' heaters (None: none). At the
    default 811 um unit length neighbouring cells are 702 um apart, beyond the default law's
    120 um reach; a dense mesh (small ``unit_length_um``) has crosstalk."""

    seed: int = 0
    splitter_sigma: float = DEFAULT_SPLITTER_SIGMA
    loss_db: float = DEFAULT_CELL_LOSS_DB
    loss_sigma_db: float = 0.02
    p_pi_mW: float = DEFAULT_P_PI_MW
    p_pi_spread: float = 0.05
    waveguide_loss_db_per_cm: float = DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM
    crosstalk: CrosstalkModel | None = field(default_factory=CrosstalkModel)
    noise_floor_mW: float = 1e-6
    max_current_mA: float = 10.0
    #: Limit on the total heater power, mW; None: ``2 p_pi_mW`` (a full period) per heater, so
    #: any phase setting fits and only drive far beyond any setting's need is refused.
    power_budget_mW: float | None = None

    def __post_init__(self) -> None:
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, int | np.integer)
            or self.seed < 0
        ):
            raise SettingsError(f"seed must be an integer >= 0, got {self.seed!r}")
        non_negative = (
            "splitter_sigma",
            "loss_db",
            "loss_sigma_db",
            "p_pi_spread",
            "waveguide_loss_db_per_cm",
            "noise_floor_mW",
        )
        for name in (*non_negative, "p_pi_mW", "max_current_mA", "power_budget_mW"):
            value = getattr(self, name)
            if value is None and name == "power_budget_mW":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SettingsError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise SettingsError(f"{name} must be finite, got {value!r}")
            if name in non_negative and value < 0:
                raise SettingsError(f"{name} must be >= 0, got {value}")
            if name not in non_negative and value <= 0:
                raise SettingsError(f"{name} must be > 0, got {value}")
        if self.crosstalk is not None and not isinstance(self.crosstalk, CrosstalkModel):
            raise SettingsError(
                f"crosstalk must be a CrosstalkModel or None, got {type(self.crosstalk).__name__}"
            )


class MeshChip:
    """An emulated recirculating-mesh chip whose switch endpoints are ``endpoints`` (edge ports
    of ``mesh``, in endpoint order). Stateless: every call says the currents (mA, one per
    heater, i.e. per cell; leading axes are a batch)."""

    def __init__(
        self,
        mesh: WaveguideMesh,
        endpoints: Sequence[int],
        spec: MeshChipSpec | None = None,
    ) -> None:
        if not isinstance(mesh, WaveguideMesh):
            raise SettingsError(f"mesh must be a WaveguideMesh, got {type(mesh).__name__}")
        if spec is not None and not isinstance(spec, MeshChipSpec):
            raise SettingsError(f"spec must be a MeshChipSpec or None, got {type(spec).__name__}")
        self.mesh = mesh
        self._solver = mesh_solver(mesh)
        self.endpoints = _endpoints(mesh, endpoints)
        self.spec = spec = spec or MeshChipSpec()
        n = mesh.n_cells
        rng = np.random.default_rng(spec.seed)
        split = rng.normal(0.0, spec.splitter_sigma, (2, n)).clip(-0.5, 0.5)
        loss = np.maximum(spec.loss_db + rng.normal(0.0, spec.loss_sigma_db, n), 0.0)
        self.imperfections = MZIImperfections(split[0], split[1], loss, loss)
        p_pi = spec.p_pi_mW * np.maximum(1 + rng.normal(0.0, spec.p_pi_spread, n), 0.2)
        bias = rng.uniform(0, 2 * np.pi, n)
        self.heaters = Heaters(
            n,
            p_pi_mW=p_pi,
            bias_rad=bias,
            drift_rad_per_K=DEFAULT_DRIFT_RAD_PER_K,
            max_current_mA=spec.max_current_mA,
            power_budget_mW=(
                2 * spec.p_pi_mW * n if spec.power_budget_mW is None else spec.power_budget_mW
            ),
            full_scale_mA=spec.max_current_mA,
        )

    @property
    def n_ports(self) -> int:
        """Number of switch endpoints (photodiodes)."""
        return len(self.endpoints)

    @property
    def n_heaters(self) -> int:
        return self.heaters.count

    @property
    def n_cells(self) -> int:
        return self.mesh.n_cells

    @property
    def heater_positions_um(self) -> np.ndarray:
        """(H, 2) heater centres, um: each cell's centre (its arms are microns apart)."""
        return self.mesh.cell_positions_um

    @cached_property
    def crosstalk(self) -> sp.csr_matrix | None:
        """The chip's true thermal crosstalk matrix ``K[victim, aggressor]`` (None without a
        crosstalk law)."""
        if self.spec.crosstalk is None:
            return None
        return crosstalk_matrix(self.heater_positions_um, self.spec.crosstalk)

    # ---- phases -----------------------------------------------------------------------------
    def _currents(self, current_mA: ArrayLike) -> np.ndarray:
        current = np.asarray(current_mA, dtype=float)
        if current.ndim == 0 or current.shape[-1] != self.n_heaters:
            raise ShapeError(f"expected {self.n_heaters} heater currents (mA), got {current.shape}")
        self.heaters.check_limits(current)
        return current

    def _phases(self, current_mA: ArrayLike, delta_T_K: float, wavelength_nm: float) -> np.ndarray:
        _wavelength(wavelength_nm)
        _temperature(delta_T_K)
        scale = REFERENCE_WAVELENGTH_NM / wavelength_nm
        return total_phase(
            self.heaters, self._currents(current_mA), self.crosstalk, delta_T_K, scale
        )

    def theta(
        self,
        current_mA: ArrayLike,
        delta_T_K: float = 0.0,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> np.ndarray:
        """The cell angles (rad, shape ``(..., n_cells)``) the currents really produce: half
        each heater's total phase (bias, crosstalk and drift included; heater-induced phase
        scales as ``1550 nm / wavelength``, ``delta_T_K`` is the ambient temperature above the
        reference, K)."""
        return from_arm_phases(self._phases(current_mA, delta_T_K, wavelength_nm), 0.0)[0]

    # ---- light ------------------------------------------------------------------------------
    def scattering(
        self,
        current_mA: ArrayLike,
        delta_T_K: float = 0.0,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> np.ndarray:
        """Field scattering matrix between all edge ports of the mesh, ``S[..., out, in]``
        (shape ``(..., n_edge_ports, n_edge_ports)``), loops included."""
        ports = np.arange(self.mesh.n_ports)
        return self._solve(current_mA, delta_T_K, wavelength_nm, ports, ports)

    def transfer(
        self,
        current_mA: ArrayLike,
        delta_T_K: float = 0.0,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> np.ndarray:
        """Field transfer between the endpoints, ``M[..., out, in]`` (n_ports x n_ports): the
        endpoints' rows and columns of :meth:`scattering`."""
        ends = np.asarray(self.endpoints)
        return self._solve(current_mA, delta_T_K, wavelength_nm, ends, ends)

    def _solve(
        self,
        current_mA: ArrayLike,
        delta_T_K: float,
        wavelength_nm: float,
        outputs: np.ndarray,
        inputs: np.ndarray,
    ) -> np.ndarray:
        """``S[..., outputs][..., inputs]`` at these currents."""
        psi = self._phases(current_mA, delta_T_K, wavelength_nm)
        g = link_transmission(
            self.mesh.unit_length_um,
            wavelength_nm,
            self.spec.waveguide_loss_db_per_cm,
            DEFAULT_N_EFF + THERMO_OPTIC_PER_K * delta_T_K,
            DEFAULT_N_G,
        )
        # one heater on the top arm: arm phases (psi, 0); light circulating in the loops meets a
        # cell again, so its common phase is kept
        theta, common = from_arm_phases(psi, 0.0)
        cells = imperfect_transfer(theta, 0.0, self.imperfections)
        cells = cells * np.exp(1j * common)[..., None, None]
        return self._solver.solve(cells, g, outputs, inputs)

    def detect(
        self,
        current_mA: ArrayLike,
        input_field: ArrayLike,
        rng: np.random.Generator | None = None,
        delta_T_K: float = 0.0,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> np.ndarray:
        """Power (mW) leaving every endpoint's edge port, for the fields (sqrt(mW)) entering
        them, shape ``(..., n_ports)`` (the batch axes of currents and fields broadcast). With
        ``rng``, each reading gets Gaussian noise of ``noise_floor_mW``."""
        field_in = np.asarray(input_field, dtype=complex)
        if field_in.ndim == 0 or field_in.shape[-1] != self.n_ports:
            raise ShapeError(f"expected {self.n_ports} input fields, got shape {field_in.shape}")
        if not np.all(np.isfinite(field_in)):
            raise SettingsError("input_field must be finite (sqrt(mW))")
        ends = np.asarray(self.endpoints)
        lit = np.flatnonzero(np.any(field_in.reshape(-1, self.n_ports) != 0, axis=0))
        # solve only for the lit inputs: one right-hand side per lit port
        M = self._solve(current_mA, delta_T_K, wavelength_nm, ends, ends[lit])
        power = np.abs(np.einsum("...ij,...j->...i", M, field_in[..., lit])) ** 2
        if rng is not None:
            power = power + rng.normal(0.0, self.spec.noise_floor_mW, power.shape)
        return power

    def heater_voltage(self, current_mA: ArrayLike) -> np.ndarray:
        """Voltage (V) across each heater at these currents, as a driver reads it back."""
        return self.heaters.voltage_V(self._currents(current_mA))

    def ideal_path_loss_db(self, path: Path) -> float:
        """The loss (dB) of a routed path on this chip with its couplers ideal: the true losses
        of its cells plus its links, the best any calibration can reach."""
        cells = np.asarray(path.cells, dtype=np.int64)
        if cells.size == 0 or cells.min() < 0 or cells.max() >= self.n_cells:
            raise PortError(f"path cells must be in 0..{self.n_cells - 1}, got {path.cells}")
        loss = self.imperfections.loss_bar_db
        link_db = self.spec.waveguide_loss_db_per_cm * self.mesh.unit_length_um * 1e-4
        return float(np.sum(loss[cells]) + (cells.size - 1) * link_db)

    # ---- production test --------------------------------------------------------------------
    def factory_calibration(self, chip_id: str = "mesh") -> Calibration:
        """The calibration a production test would have measured: every heater's true P_pi,
        bias, resistance ``R(I) = a I^2 + c`` and, with a crosstalk law, the crosstalk matrix;
        dated :data:`photonics.chip.FACTORY_DATE` (same seed, same file)."""
        h = self.heaters
        return Calibration(
            chip_id=chip_id,
            p_pi_mW=h.p_pi_mW,
            bias_rad=h.bias_rad,
            a_ohm_per_mA2=h.r_rise_ohm_per_mA2,
            c_ohm=h.r0_ohm,
            created=FACTORY_DATE,
            crosstalk=None if self.crosstalk is None else self.crosstalk.toarray(),
        )


def _endpoints(mesh: WaveguideMesh, endpoints: Sequence[int]) -> tuple[int, ...]:
    try:
        ends = list(endpoints)
    except TypeError:
        raise PortError(f"endpoints must be a sequence of edge ports, got {endpoints!r}") from None
    if not ends:
        raise PortError("endpoints must name at least one edge port")
    out: list[int] = []
    for e in ends:
        if isinstance(e, bool) or not isinstance(e, int | np.integer):
            raise PortError(f"endpoints must be integer edge ports, got {e!r}")
        if not 0 <= e < mesh.n_ports:
            raise PortError(f"endpoint {e} is out of range 0..{mesh.n_ports - 1}")
        if int(e) in out:
            raise PortError(f"edge port {e} is given twice as an endpoint")
        out.append(int(e))
    return tuple(out)


def _wavelength(wavelength_nm: float) -> None:
    if not (np.ndim(wavelength_nm) == 0 and 1000 <= finite("wavelength_nm", wavelength_nm) <= 2000):
        raise SettingsError(f"wavelength_nm must be in 1000..2000 nm, got {wavelength_nm!r}")


def _temperature(delta_T_K: float) -> None:
    if np.ndim(delta_T_K) != 0:
        raise SettingsError(f"delta_T_K must be one number of kelvin, got {delta_T_K!r}")
    finite("delta_T_K", delta_T_K)


__all__ = [
    "THERMO_OPTIC_PER_K",
    "MeshChip",
    "MeshChipSpec",
]
