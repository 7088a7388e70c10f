"""A whole emulated chip: a feed-forward mesh, its heaters, thermal crosstalk and output detectors.

Heater channels, 0-based, in the order of :meth:`photonics.feedforward.MeshSettings.to_vector`:

- ``k`` (0 <= k < K): the internal heater of MZI ``k`` (slot order), on its top arm; its phase
  is the arm difference ``2 theta``;
- ``K + k``: the input phase shifter ``phi`` of MZI ``k``, on its top input;
- ``2K + j``: the output phase shifter of mode ``j``;
- ``2K + n + j``: with ``ChipSpec.output_rings``, the heater of the add-drop ring that filters
  output ``j`` onto its photodiode (drop port). A ring heater's "phase" is its round-trip
  phase: ``2 pi`` moves the resonance by one FSR.

Fabrication variation is drawn once from ``ChipSpec.seed``: heater bias phases uniform in
[0, 2 pi), P_pi spread, coupler splitting errors and per-MZI loss. Same seed, same chip.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from photonics.calibration import Calibration
from photonics.errors import SettingsError, ShapeError
from photonics.feedforward import ClementsMesh, FeedForwardMesh, MeshSettings, ReckMesh
from photonics.matching import Permutation
from photonics.mzi import (
    DEFAULT_LOSS_DB,
    DEFAULT_SPLITTER_SIGMA,
    MZIImperfections,
    from_arm_phases,
)
from photonics.ring import MicroRing, RingThermal
from photonics.thermal import (
    DEFAULT_DRIFT_RAD_PER_K,
    DEFAULT_P_PI_MW,
    CrosstalkModel,
    Heaters,
    crosstalk_matrix,
    total_phase,
)

MESHES: dict[str, type[FeedForwardMesh]] = {"clements": ClementsMesh, "reck": ReckMesh}
#: Creation time written into a factory calibration (fixed: same seed, same file).
FACTORY_DATE = "2026-01-01T00:00:00+00:00"
#: Wavelength at which heater phases are specified, nm.
REFERENCE_WAVELENGTH_NM = 1550.0


@dataclass(frozen=True)
class ChipSpec:
    """Everything that defines an emulated chip (units in the names).

    Geometry: MZI columns ``pitch_x_um`` apart, modes ``pitch_y_um`` apart; the defaults give
    heaters about 100 um or more from each other, a dense mesh has pitches of a few tens of um.
    """

    n_ports: int = 8
    mesh: str = "clements"
    seed: int = 0
    splitter_sigma: float = DEFAULT_SPLITTER_SIGMA
    loss_db: float = DEFAULT_LOSS_DB
    loss_sigma_db: float = 0.02
    p_pi_mW: float = DEFAULT_P_PI_MW
    p_pi_spread: float = 0.05
    pitch_x_um: float = 300.0
    pitch_y_um: float = 60.0
    crosstalk: CrosstalkModel | None = field(default_factory=CrosstalkModel)
    noise_floor_mW: float = 1e-6
    output_rings: bool = False
    ring: MicroRing = field(default_factory=MicroRing)
    ring_thermal: RingThermal = field(default_factory=RingThermal)
    ring_fab_sigma_nm: float = 0.3
    max_current_mA: float = 10.0
    #: Limit on the total heater power, mW; None: ``2 p_pi_mW`` (a full period) per heater, so
    #: any phase setting fits and only drive far beyond any setting's need is refused.
    power_budget_mW: float | None = None

    def __post_init__(self) -> None:
        if self.mesh not in MESHES:
            raise SettingsError(f"mesh must be one of {sorted(MESHES)}, got {self.mesh!r}")
        for name in ("splitter_sigma", "loss_db", "loss_sigma_db", "p_pi_spread", "noise_floor_mW"):
            if not getattr(self, name) >= 0:
                raise SettingsError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("p_pi_mW", "pitch_x_um", "pitch_y_um", "max_current_mA"):
            if not getattr(self, name) > 0:
                raise SettingsError(f"{name} must be > 0, got {getattr(self, name)}")


class Chip:
    """An emulated chip built from a :class:`ChipSpec`. Stateless: every call says the currents."""

    def __init__(self, spec: ChipSpec | None = None) -> None:
        self.spec = spec = spec or ChipSpec()
        self.mesh: FeedForwardMesh = MESHES[spec.mesh](spec.n_ports)
        K, n = self.mesh.n_mzis, self.mesh.n
        rng = np.random.default_rng(spec.seed)
        split = rng.normal(0.0, spec.splitter_sigma, (2, K)).clip(-0.5, 0.5)
        loss = np.maximum(spec.loss_db + rng.normal(0.0, spec.loss_sigma_db, K), 0.0)
        self.imperfections = MZIImperfections(split[0], split[1], loss, loss)
        H = 2 * K + n
        p_pi = spec.p_pi_mW * np.maximum(1 + rng.normal(0.0, spec.p_pi_spread, H), 0.2)
        bias = rng.uniform(0, 2 * np.pi, H)
        drift = np.full(H, DEFAULT_DRIFT_RAD_PER_K)
        if spec.output_rings:
            # the ring heaters in the same phase terms: 2 pi per FSR of resonance shift
            fsr = spec.ring.reference_fsr_nm
            offset_nm = rng.normal(0.0, spec.ring_fab_sigma_nm, n)
            p_pi = np.concatenate([p_pi, np.full(n, spec.ring_thermal.p_pi_mW(spec.ring))])
            bias = np.concatenate([bias, 2 * np.pi * offset_nm / fsr])
            ambient = 2 * np.pi * spec.ring_thermal.ambient_nm_per_K / fsr
            drift = np.concatenate([drift, np.full(n, ambient)])
            H += n
        self.heaters = Heaters(
            H,
            p_pi_mW=p_pi,
            bias_rad=bias,
            drift_rad_per_K=drift,
            max_current_mA=spec.max_current_mA,
            power_budget_mW=(
                2 * spec.p_pi_mW * H if spec.power_budget_mW is None else spec.power_budget_mW
            ),
            full_scale_mA=spec.max_current_mA,
        )

    @property
    def n_ports(self) -> int:
        return self.mesh.n

    @property
    def n_heaters(self) -> int:
        return self.heaters.count

    @cached_property
    def heater_positions_um(self) -> np.ndarray:
        """(H, 2) heater centres, um: see the module docstring for the channel order."""
        s, mesh = self.spec, self.mesh
        x0 = mesh.columns * s.pitch_x_um
        theta = np.c_[x0 + 0.5 * s.pitch_x_um, (mesh.modes + 0.25) * s.pitch_y_um]
        phi = np.c_[x0 + 0.15 * s.pitch_x_um, mesh.modes * s.pitch_y_um]
        out = np.c_[
            np.full(mesh.n, (mesh.n_columns + 0.5) * s.pitch_x_um), np.arange(mesh.n) * s.pitch_y_um
        ]
        rings = np.c_[
            np.full(mesh.n, (mesh.n_columns + 1.5) * s.pitch_x_um), np.arange(mesh.n) * s.pitch_y_um
        ]
        if not s.output_rings:
            rings = rings[:0]
        return np.concatenate([theta, phi, out, rings])

    @cached_property
    def crosstalk(self) -> sp.csr_matrix | None:
        """The chip's true thermal crosstalk matrix (what calibration tries to learn)."""
        if self.spec.crosstalk is None:
            return None
        return crosstalk_matrix(self.heater_positions_um, self.spec.crosstalk)

    def _currents(self, current_mA: ArrayLike) -> np.ndarray:
        current = np.asarray(current_mA, dtype=float)
        if current.shape[-1:] != (self.n_heaters,):
            raise ShapeError(f"expected {self.n_heaters} heater currents (mA), got {current.shape}")
        self.heaters.check_limits(current)
        return current

    def settings(
        self,
        current_mA: ArrayLike,
        delta_T_K: float = 0.0,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> MeshSettings:
        """The mesh phases the currents really produce (bias, crosstalk and drift included).

        Heater-induced phases scale as ``1550 nm / wavelength``; ``delta_T_K`` is the ambient
        temperature above the reference, K.
        """
        phase = self._phases(current_mA, delta_T_K, wavelength_nm)
        K, n = self.mesh.n_mzis, self.mesh.n
        # one heater on the top arm: arm phases (psi, 0)
        theta, common = from_arm_phases(phase[..., :K], 0.0)
        return MeshSettings(theta, phase[..., K : 2 * K], phase[..., 2 * K : 2 * K + n], common)

    def _phases(self, current_mA: ArrayLike, delta_T_K: float, wavelength_nm: float) -> np.ndarray:
        if not 1000 <= wavelength_nm <= 2000:
            raise SettingsError(f"wavelength_nm must be in 1000..2000 nm, got {wavelength_nm}")
        scale = REFERENCE_WAVELENGTH_NM / wavelength_nm
        return total_phase(
            self.heaters, self._currents(current_mA), self.crosstalk, delta_T_K, scale
        )

    def ring_shift_nm(self, current_mA: ArrayLike, delta_T_K: float = 0.0) -> np.ndarray:
        """Resonance shift (nm) of each output ring from its design resonance: fabrication,
        own heater, crosstalk and ambient. Shape ``(..., n)``; needs ``output_rings``."""
        if not self.spec.output_rings:
            raise SettingsError("this chip has no output rings (ChipSpec.output_rings=False)")
        phase = self._phases(current_mA, delta_T_K, REFERENCE_WAVELENGTH_NM)
        return (
            phase[..., 2 * self.mesh.n_mzis + self.mesh.n :]
            * self.spec.ring.reference_fsr_nm
            / (2 * np.pi)
        )

    def transfer(
        self,
        current_mA: ArrayLike,
        delta_T_K: float = 0.0,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> np.ndarray:
        """Field transfer matrix (n x n, ``out = M @ in``) of the chip at these currents."""
        return self.mesh.transfer(
            self.settings(current_mA, delta_T_K, wavelength_nm), self.imperfections
        )

    def detect(
        self,
        current_mA: ArrayLike,
        input_field: ArrayLike,
        rng: np.random.Generator | None = None,
        delta_T_K: float = 0.0,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> np.ndarray:
        """Power (mW) on the photodiode of every output for input fields in sqrt(mW), shape
        ``(..., n)``. With ``rng``, each reading gets Gaussian noise of ``noise_floor_mW``."""
        field_in = np.asarray(input_field, dtype=complex)
        if field_in.shape[-1:] != (self.n_ports,):
            raise ShapeError(f"expected {self.n_ports} input fields, got shape {field_in.shape}")
        M = self.transfer(current_mA, delta_T_K, wavelength_nm)
        power = np.abs(np.einsum("...ij,...j->...i", M, field_in)) ** 2
        if self.spec.output_rings:
            power = power * self.spec.ring.drop_power(
                wavelength_nm, self.ring_shift_nm(current_mA, delta_T_K)
            )
        if rng is not None:
            power = power + rng.normal(0.0, self.spec.noise_floor_mW, power.shape)
        return power

    def heater_voltage(self, current_mA: ArrayLike) -> np.ndarray:
        """Voltage (V) across each heater at these currents, as a driver reads it back."""
        return self.heaters.voltage_V(self._currents(current_mA))

    def factory_calibration(self, chip_id: str = "chip") -> Calibration:
        """The chip's true heater parameters as a calibration: what a production test of this
        chip would have measured (resistance, P_pi, bias, crosstalk), so an emulated switch
        can start calibrated, as a shipped device does."""
        h = self.heaters
        H = self.n_heaters
        return Calibration(
            chip_id=chip_id,
            p_pi_mW=h.p_pi_mW,
            bias_rad=np.asarray(h.bias_rad),
            a_ohm_per_mA2=np.broadcast_to(h.r_rise_ohm_per_mA2, (H,)),
            c_ohm=np.broadcast_to(h.r0_ohm, (H,)),
            created=FACTORY_DATE,
            crosstalk=None if self.crosstalk is None else self.crosstalk.toarray(),
        )

    def ideal_path_power(self, request: Permutation) -> np.ndarray:
        """Loss-only power (mW per mW in) each input of ``request`` would deliver through
        bar/cross routing, in input order: the product of the MZI losses on its path, the best
        any calibration can reach."""
        loss_only = MZIImperfections(
            loss_bar_db=self.imperfections.loss_bar_db,
            loss_cross_db=self.imperfections.loss_cross_db,
        )
        M = self.mesh.transfer(self.mesh.route(request), loss_only)
        full = request.completed().targets
        return np.abs(M[list(full), np.arange(self.n_ports)]) ** 2
