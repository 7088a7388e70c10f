"""An emulated recirculating-mesh chip: a hexagonal (or any) waveguide mesh of heated 2x2 cells,
fabrication variation drawn from a seed, and photodiodes on the switch's endpoint edge ports.

The counterpart of :class:`photonics.chips.chip.Chip` for the meshes of
:mod:`photonics.recirculating.waveguide_mesh`, with the same surface where it makes sense, so the
firmware's
:class:`~firmware.driver.EmulatedDriver` drives either.

Heater channels, 0-based: channel ``c`` is the heater of cell ``c``, on the cell's internal arm
(its top arm between the two couplers). Its total phase ``psi`` (own heating, thermal crosstalk,
fabrication bias and ambient drift, :func:`photonics.devices.thermal.total_phase`) gives arm phases
``(psi, 0)``: ``2 theta = psi``, as for the internal heaters of :mod:`photonics.chips.chip`, so
:func:`photonics.calibration.selfcal.currents_for_theta` turns cell angles into currents. The arms'
mean phase ``psi / 2`` is a phase of the whole cell (light passing it either way picks it up); it is
kept, since light circulating in the mesh's loops interferes with itself. A circuit switch sets
every cell to bar or cross, and no routed path relies on interference between cells, so the cells
have no phase heaters of their own.

Fabrication variation is drawn once from ``MeshChipSpec.seed`` as for every emulated chip
(:mod:`photonics.chips.emulated_chip`): coupler splitting errors, per-cell loss, P_pi spread, bias
phases uniform in [0, 2 pi). Same seed and mesh, same chip.

Each link (one unit length of waveguide) has the phase and loss of
:func:`photonics.recirculating.mesh_scattering.link_transmission`; the ambient temperature moves its
effective index by :data:`THERMO_OPTIC_PER_K` per kelvin, as it moves the heaters' phases by their
drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from photonics.chips.calibration import MAX_EXTINCTION_DB, Calibration
from photonics.chips.emulated_chip import (
    REFERENCE_WAVELENGTH_NM,
    EmulatedChip,
    FabricationSpec,
    check_conditions,
)
from photonics.devices.mzi import from_arm_phases, imperfect_transfer, state_extinction_db
from photonics.errors import PortError, SettingsError
from photonics.recirculating.mesh_scattering import (
    DEFAULT_N_EFF,
    DEFAULT_N_G,
    DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM,
    link_transmission,
    mesh_solver,
    path_loss_db,
    unit_link_loss_db,
)
from photonics.recirculating.routing import Path
from photonics.recirculating.waveguide_mesh import WaveguideMesh

#: Thermo-optic coefficient of silicon, 1/K: the links' effective index change per kelvin.
THERMO_OPTIC_PER_K = 1.86e-4


@dataclass(frozen=True, kw_only=True)
class MeshChipSpec(FabricationSpec):
    """Everything that defines an emulated mesh chip besides its mesh and endpoints (units in
    the names): the fabrication settings of :class:`~photonics.chips.emulated_chip.FabricationSpec`
    (``loss_db`` is the mean insertion loss of a cell) and ``waveguide_loss_db_per_cm``, the
    links' propagation loss. At the default 811 um unit length neighbouring cells are 702 um
    apart, beyond the default crosstalk law's 132 um reach; a dense mesh (small
    ``unit_length_um``) has crosstalk."""

    waveguide_loss_db_per_cm: float = DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM

    NON_NEGATIVE: ClassVar[tuple[str, ...]] = (
        *FabricationSpec.NON_NEGATIVE,
        "waveguide_loss_db_per_cm",
    )


class MeshChip(EmulatedChip):
    """An emulated recirculating-mesh chip whose switch endpoints are ``endpoints`` (edge ports
    of ``mesh``, in endpoint order). Stateless: every call says the currents (mA, one per
    heater, i.e. per cell; leading axes are a batch)."""

    FACTORY_ID = "mesh"

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
        super().__init__(spec or MeshChipSpec(), mesh.n_cells, mesh.n_cells)

    def __repr__(self) -> str:
        return (
            f"<MeshChip {self.mesh.kind}: {self.n_ports} endpoints, {self.mesh.n_cells} cells, "
            f"seed {self.spec.seed}>"
        )

    @property
    def n_ports(self) -> int:
        """Number of switch endpoints (photodiodes)."""
        return len(self.endpoints)

    @property
    def n_cells(self) -> int:
        return self.mesh.n_cells

    @property
    def heater_positions_um(self) -> np.ndarray:
        """(H, 2) heater centres, um: each cell's centre (its arms are microns apart)."""
        return self.mesh.cell_positions_um

    def factory_calibration(self, chip_id: str | None = None) -> Calibration:
        """The heaters' true parameters (:meth:`EmulatedChip.factory_calibration`) and each
        cell's extinction in each state from its couplers (dB, ``(2, n_cells)`` [bar, cross],
        :func:`~photonics.devices.mzi.state_extinction_db`, capped at :data:`MAX_EXTINCTION_DB` as
        photodiode readings are): what a production test measures, and the router uses."""
        imp = self.imperfections
        ext = state_extinction_db(imp.splitter_error_in, imp.splitter_error_out)
        calibration = super().factory_calibration(chip_id)
        return replace(calibration, extinction_db=np.minimum(ext, MAX_EXTINCTION_DB))

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
        check_conditions(delta_T_K, wavelength_nm)
        current = self._currents(current_mA)
        psi = self._phase(current, delta_T_K, wavelength_nm)
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
        cells = imperfect_transfer(
            theta, 0.0, self._cell_imperfections(self.heaters.own_phase(current), wavelength_nm)
        )
        cells = cells * np.exp(1j * common)[..., None, None]
        return self._solver.solve(cells, g, outputs, inputs)

    def _power(
        self, current_mA: ArrayLike, field_in: np.ndarray, delta_T_K: float, wavelength_nm: float
    ) -> np.ndarray:
        """Power (mW) leaving every endpoint's edge port, solved only for the lit inputs (one
        right-hand side per lit endpoint)."""
        ends = np.asarray(self.endpoints)
        lit = np.flatnonzero(np.any(field_in.reshape(-1, self.n_ports) != 0, axis=0))
        M = self._solve(current_mA, delta_T_K, wavelength_nm, ends, ends[lit])
        return np.abs(np.einsum("...ij,...j->...i", M, field_in[..., lit])) ** 2

    def ideal_path_loss_db(self, path: Path) -> float:
        """The loss (dB) of a routed path on this chip with its couplers ideal: the true losses
        of its cells plus its links, the best any calibration can reach."""
        cells = np.asarray(path.cells, dtype=np.int64)
        if cells.size == 0 or cells.min() < 0 or cells.max() >= self.n_cells:
            raise PortError(f"path cells must be in 0..{self.n_cells - 1}, got {path.cells}")
        link_db = unit_link_loss_db(self.mesh.unit_length_um, self.spec.waveguide_loss_db_per_cm)
        return path_loss_db(self.imperfections.loss_bar_db[cells], link_db)


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


__all__ = [
    "THERMO_OPTIC_PER_K",
    "MeshChip",
    "MeshChipSpec",
]
