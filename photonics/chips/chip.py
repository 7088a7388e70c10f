"""A whole emulated chip: a feed-forward mesh, its heaters, thermal crosstalk and output detectors.

Heater channels, 0-based, in the order of
:meth:`photonics.feedforward.meshes.MeshSettings.to_vector`:

- ``k`` (0 <= k < K): the internal heater of MZI ``k`` (slot order), on its top arm; its phase
  is the arm difference ``2 theta``;
- ``K + k``: the input phase shifter ``phi`` of MZI ``k``, on its top input;
- ``2K + j``: the output phase shifter of mode ``j``;
- ``2K + n + j``: with ``ChipSpec.output_rings``, the heater of the add-drop ring that filters
  output ``j`` onto its photodiode (drop port). A ring heater's "phase" is its round-trip
  phase: ``2 pi`` moves the resonance by one FSR.

Fabrication variation is drawn once from ``ChipSpec.seed`` as for every emulated chip
(:mod:`photonics.chips.emulated_chip`: coupler splitting errors and loss per MZI, P_pi spread and
bias phases uniform in [0, 2 pi) of the MZI and output heaters), then, with rings, each ring's
resonance offset. Same seed, same chip.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from photonics.chips import topologies
from photonics.chips.emulated_chip import (
    REFERENCE_WAVELENGTH_NM,
    EmulatedChip,
    FabricationSpec,
    check_conditions,
)
from photonics.devices.dispersion import wavelengths
from photonics.devices.mzi import MZIImperfections, from_arm_phases
from photonics.devices.ring import MicroRing, RingThermal
from photonics.devices.thermal import phase_of_heat
from photonics.errors import SettingsError, ShapeError
from photonics.feedforward.chip_geometry import FeedForwardGeometry, drawn_geometry
from photonics.feedforward.meshes import FeedForwardMesh, MeshSettings
from photonics.matching import Permutation


@dataclass(frozen=True, kw_only=True)
class ChipSpec(FabricationSpec):
    """Everything that defines an emulated feed-forward chip (units in the names): the mesh
    (``n_ports`` modes, ``mesh`` a feed-forward topology of :mod:`photonics.chips.topologies`), the
    fabrication settings of :class:`~photonics.chips.emulated_chip.FabricationSpec` and, with
    ``output_rings``, an add-drop ``ring`` before each photodiode whose resonance is off by
    ``ring_fab_sigma_nm`` (std).

    Geometry: by default (no pitches, no ``geometry``) every heater is where the project's
    wired layout draws it (:func:`photonics.feedforward.chip_geometry.drawn_geometry`, the geometry
    :func:`layouts.meshes.feedforward_layout` draws with: 700 um column pitch, 60 um mode pitch
    at 8 Clements ports). With ``geometry`` (a
    :class:`~photonics.feedforward.chip_geometry.FeedForwardGeometry`, e.g. a layout's with other
    settings, :func:`layouts.meshes.feedforward_geometry`) they are where that geometry puts them
    (its pitches become ``pitch_x_um`` and ``pitch_y_um``). Giving ``pitch_x_um`` or ``pitch_y_um``
    instead puts them on a plain grid of MZI columns ``pitch_x_um`` apart and modes ``pitch_y_um``
    apart (the other pitch 300 um / 60 um unless given): a dense mesh has pitches of a few tens of
    um. Rings stay after the outputs. Thermal crosstalk warms both arms of every MZI (the heater on
    the top arm's line, the other arm a mode pitch below:
    :func:`~photonics.devices.thermal.differential_crosstalk`); with ``both_arms=False`` all of it
    lands on the heated arm instead (the earlier model, which overstates a distant heater's effect).
    """

    n_ports: int = 8
    mesh: str = "clements"
    pitch_x_um: float | None = None
    pitch_y_um: float | None = None
    both_arms: bool = True
    geometry: FeedForwardGeometry | None = None
    output_rings: bool = False
    ring: MicroRing = field(default_factory=MicroRing)
    ring_thermal: RingThermal = field(default_factory=RingThermal)
    ring_fab_sigma_nm: float = 0.3

    NON_NEGATIVE: ClassVar[tuple[str, ...]] = (
        *FabricationSpec.NON_NEGATIVE,
        "ring_fab_sigma_nm",
    )
    #: A plain grid's pitches (um) when only the other one is given.
    GRID_PITCH_UM: ClassVar[dict[str, float]] = {"pitch_x_um": 300.0, "pitch_y_um": 60.0}

    def __post_init__(self) -> None:
        if self.geometry is not None:
            if not isinstance(self.geometry, FeedForwardGeometry):
                raise SettingsError(
                    f"geometry must be a FeedForwardGeometry or None, got {self.geometry!r}"
                )
            object.__setattr__(self, "pitch_x_um", float(self.geometry.column_pitch_um))
            object.__setattr__(self, "pitch_y_um", float(self.geometry.mode_pitch_um))
        elif self.pitch_x_um is not None or self.pitch_y_um is not None:  # a plain grid
            for name, value in self.GRID_PITCH_UM.items():
                if getattr(self, name) is None:
                    object.__setattr__(self, name, value)
            for name in self.GRID_PITCH_UM:
                value = getattr(self, name)
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise SettingsError(f"{name} must be a number, got {value!r}")
                if not math.isfinite(value):
                    raise SettingsError(f"{name} must be finite, got {value!r}")
                if not value > 0:
                    raise SettingsError(f"{name} must be > 0, got {value!r}")
        choices = topologies.names(kind="feedforward")
        if self.mesh not in choices:
            raise SettingsError(f"mesh must be one of {', '.join(choices)}; got {self.mesh!r}")
        super().__post_init__()


class Chip(EmulatedChip):
    """An emulated chip built from a :class:`ChipSpec`. Stateless: every call says the currents."""

    def __init__(self, spec: ChipSpec | None = None) -> None:
        spec = spec or ChipSpec()
        mesh = topologies.topology(spec.mesh).geometry(spec.n_ports).mesh
        assert isinstance(mesh, FeedForwardMesh)  # ChipSpec admits feed-forward topologies only
        self.mesh: FeedForwardMesh = mesh
        K, n = self.mesh.n_mzis, self.mesh.n
        super().__init__(spec, K, 2 * K + n)

    def __repr__(self) -> str:
        rings = ", output rings" if self.spec.output_rings else ""
        return (
            f"<Chip {self.mesh.kind}: {self.n_ports} ports, {self.mesh.n_mzis} MZIs, "
            f"{self.n_heaters} heaters{rings}, seed {self.spec.seed}>"
        )

    def _more_heaters(
        self, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The output rings' heaters, in the same phase terms (2 pi per FSR of resonance
        shift), with their own time constant (``RingThermal.tau_s``)."""
        spec = self.spec
        if not spec.output_rings:
            return None
        n, fsr = self.mesh.n, spec.ring.reference_fsr_nm
        offset_nm = rng.normal(0.0, spec.ring_fab_sigma_nm, n)
        return (
            np.full(n, spec.ring_thermal.p_pi_mW(spec.ring)),
            2 * np.pi * offset_nm / fsr,
            np.full(n, 2 * np.pi * spec.ring_thermal.ambient_nm_per_K / fsr),
            np.full(n, spec.ring_thermal.tau_s),
        )

    @property
    def n_ports(self) -> int:
        return self.mesh.n

    @property
    def ring_channels(self) -> np.ndarray:
        """The heater channels of the output rings (``ChipSpec.output_rings``), ring ``j``
        (before output ``j``) at ``2K + n + j``; none without rings."""
        if not self.spec.output_rings:
            return np.zeros(0, dtype=int)
        return np.arange(self.n_heaters - self.n_ports, self.n_heaters)

    @cached_property
    def geometry(self) -> FeedForwardGeometry | None:
        """Where the heaters are: ``ChipSpec.geometry``, else the wired layout's
        (:func:`~photonics.feedforward.chip_geometry.drawn_geometry`) unless pitches were given;
        None: a plain grid of ``ChipSpec.pitch_x_um`` by ``pitch_y_um``."""
        s = self.spec
        if s.geometry is None and s.pitch_x_um is None and s.pitch_y_um is None:
            return drawn_geometry(self.mesh)
        return s.geometry

    @cached_property
    def heater_positions_um(self) -> np.ndarray:
        """(H, 2) heater centres, um: see the module docstring for the channel order."""
        s, mesh, geometry = self.spec, self.mesh, self.geometry
        pitch_x, pitch_y = (
            (s.pitch_x_um, s.pitch_y_um)
            if geometry is None
            else (geometry.column_pitch_um, geometry.mode_pitch_um)
        )
        rings = np.c_[
            np.full(mesh.n, (mesh.n_columns + 1.5) * pitch_x), np.arange(mesh.n) * pitch_y
        ]
        if not s.output_rings:
            rings = rings[:0]
        if geometry is not None:  # where the layout draws them
            return np.concatenate([geometry.heaters_um(mesh), rings])
        x0 = mesh.columns * s.pitch_x_um
        # on the top arm's line with both arms modelled, else a quarter pitch below it
        top = mesh.modes + (0.0 if s.both_arms else 0.25)
        theta = np.c_[x0 + 0.5 * s.pitch_x_um, top * s.pitch_y_um]
        phi = np.c_[x0 + 0.15 * s.pitch_x_um, mesh.modes * s.pitch_y_um]
        out = np.c_[
            np.full(mesh.n, (mesh.n_columns + 0.5) * s.pitch_x_um), np.arange(mesh.n) * s.pitch_y_um
        ]
        return np.concatenate([theta, phi, out, rings])

    @property
    def other_arms_um(self) -> np.ndarray:
        """(K, 2) centres of the MZIs' bottom (unheated) arms, um: a mode pitch below the
        heated top arm; none unless ``ChipSpec.both_arms``."""
        s, mesh = self.spec, self.mesh
        if not s.both_arms:
            return np.zeros((0, 2))
        if self.geometry is not None:
            return self.geometry.other_arms_um(mesh)
        return np.c_[(mesh.columns + 0.5) * s.pitch_x_um, (mesh.modes + 1) * s.pitch_y_um]

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
        check_conditions(delta_T_K, wavelength_nm)
        current = self._currents(current_mA)
        own = self.heaters.own_phase(current)
        return self._settings(own, self._phase(current, delta_T_K, wavelength_nm), wavelength_nm)

    def _settings(
        self, seen: np.ndarray, phase: np.ndarray, wavelength_nm: float | np.ndarray
    ) -> MeshSettings:
        """Mesh phases from the heaters' total phases: an MZI's heater sets the difference of its
        arms (``phase``, crosstalk included), its other arm carries the others' warmth (``seen``:
        the heaters' own phases, rad, as their neighbours feel them)."""
        K, n = self.mesh.n_mzis, self.mesh.n
        bottom = self._other_arm_phase(seen, wavelength_nm)
        if bottom.shape[-1] == 0:  # one arm modelled
            bottom = np.zeros_like(phase[..., :K])
        theta, common = from_arm_phases(phase[..., :K] + bottom, bottom)
        return MeshSettings(theta, phase[..., K : 2 * K], phase[..., 2 * K : 2 * K + n], common)

    def ring_shift_nm(self, current_mA: ArrayLike, delta_T_K: float = 0.0) -> np.ndarray:
        """Resonance shift (nm) of each output ring from its design resonance: fabrication,
        own heater, crosstalk and ambient. Shape ``(..., n)``; needs ``output_rings``."""
        if not self.spec.output_rings:
            raise SettingsError("this chip has no output rings (ChipSpec.output_rings=False)")
        return self._ring_shift(self._phases(current_mA, delta_T_K, REFERENCE_WAVELENGTH_NM))

    def _ring_shift(self, phase: np.ndarray) -> np.ndarray:
        rings = phase[..., 2 * self.mesh.n_mzis + self.mesh.n :]
        return rings * self.spec.ring.reference_fsr_nm / (2 * np.pi)

    def transfer(
        self,
        current_mA: ArrayLike,
        delta_T_K: float = 0.0,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> np.ndarray:
        """Field transfer matrix (n x n, ``out = M @ in``) of the chip at these currents."""
        check_conditions(delta_T_K, wavelength_nm)
        current = self._currents(current_mA)
        own = self.heaters.own_phase(current)
        return self._transfer(
            own, own, self._phase(current, delta_T_K, wavelength_nm), wavelength_nm
        )

    def transfer_band(
        self, current_mA: ArrayLike, wavelengths_nm: ArrayLike, delta_T_K: float = 0.0
    ) -> np.ndarray:
        """Field transfer matrices ``(W, n, n)`` at one setting of currents (mA, shape (H,)) for
        each of ``W`` wavelengths (nm, 1-D), in one batched evaluation: couplers and losses
        from :mod:`photonics.devices.dispersion`, heater phases scaling as ``1550 nm /
        wavelength``."""
        lam = wavelengths(wavelengths_nm)
        if lam.ndim != 1:
            raise ShapeError(f"wavelengths_nm must be 1-D, got shape {lam.shape}")
        check_conditions(delta_T_K, REFERENCE_WAVELENGTH_NM)
        current = self._currents(current_mA)
        if current.ndim != 1:
            raise ShapeError(f"transfer_band takes one setting of currents, got {current.shape}")
        column, own = lam[:, None], self.heaters.own_phase(current)
        return self._transfer(own, own, self._phase(current, delta_T_K, column), column)

    def _transfer(
        self,
        own: np.ndarray,
        seen: np.ndarray,
        phase: np.ndarray,
        wavelength_nm: float | np.ndarray,
    ) -> np.ndarray:
        """Transfer at one wavelength, or at a column ``(W, 1)`` of them (batched), from the
        heaters' own phases (rad) on their waveguides (``own``) and as their neighbours feel
        them (``seen``) and their total phases (``phase``)."""
        settings = self._settings(seen, phase, wavelength_nm)
        return self.mesh.transfer(settings, self._cell_imperfections(own, wavelength_nm))

    def _power(
        self, current_mA: ArrayLike, field_in: np.ndarray, delta_T_K: float, wavelength_nm: float
    ) -> np.ndarray:
        """``|M @ field_in|^2`` (mW), times each output ring's drop transmission."""
        check_conditions(delta_T_K, wavelength_nm)
        current = self._currents(current_mA)
        power = self.heaters.power_mW(current)
        return self.power_of_heat(power, power, delta_T_K, field_in, wavelength_nm)

    def power_of_heat(
        self,
        own_mW: np.ndarray,
        crosstalk_mW: np.ndarray,
        delta_T_K: ArrayLike,
        field_in: np.ndarray,
        wavelength_nm: float = REFERENCE_WAVELENGTH_NM,
    ) -> np.ndarray:
        """Noiseless photodiode powers (mW) with the heater powers as they act, ``(..., H)``
        mW on their own waveguides and as their neighbours feel them (they differ while heat
        spreads, :mod:`photonics.devices.transients`), at ambient ``delta_T_K`` (K, scalar or
        ``(...)``): the optics along a transient."""
        h, K = self.heaters, self.crosstalk
        scale = REFERENCE_WAVELENGTH_NM / wavelength_nm
        phase = phase_of_heat(h, own_mW, crosstalk_mW, K, delta_T_K, scale)
        own = np.pi * np.asarray(own_mW, dtype=float) / h.p_pi_mW
        seen = np.pi * np.asarray(crosstalk_mW, dtype=float) / h.p_pi_mW
        M = self._transfer(own, seen, phase, wavelength_nm)
        power = np.abs(np.einsum("...ij,...j->...i", M, field_in)) ** 2
        if self.spec.output_rings:
            # ring phases are specified at the reference wavelength (their shift is in nm)
            ring_phase = phase_of_heat(h, own_mW, crosstalk_mW, K, delta_T_K)
            power = power * self.spec.ring.drop_power(wavelength_nm, self._ring_shift(ring_phase))
        return power

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
