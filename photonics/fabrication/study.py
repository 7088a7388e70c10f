"""A fabrication yield study of a switch design, and the rows its chips give.

A :class:`YieldStudy` says what is fabricated (a feed-forward mesh of ``ports`` ports, its
heater pitch and output rings, or the hexagonal switch), how its fabrication spreads (coupler
splitting error, heater efficiency, loss), the workload it must route, what a chip must reach to
pass (worst isolation, worst insertion loss, heater power) and how many chips are drawn. One
chip is emulated end to end by :func:`photonics.fabrication.chip_yield.run_chip`; the
statistics of many are :mod:`photonics.fabrication.yield_stats`.

Chip ``index`` draws everything from ``SeedSequence(study.seed, spawn_key=(index,))``, the
same as ``SeedSequence(study.seed).spawn(chips)[index]``: a row depends on the study and the
index only, never on which process runs it or in which order.

A sweep (:func:`photonics.fabrication.yield_stats.sweep_points`) is a grid of studies over one
or two of the study's numbers (:data:`SWEEPABLE`), each point a study of its own.

No numerics beyond numpy: a command line parser that names the study's numbers loads no chip.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np

from photonics.devices.mzi import DEFAULT_LOSS_DB, DEFAULT_SPLITTER_SIGMA
from photonics.errors import SettingsError
from photonics.matching import Matching

if TYPE_CHECKING:
    from photonics.chips.chip import ChipSpec
    from photonics.chips.emulated_chip import EmulatedChip
    from photonics.chips.mesh_chip import MeshChipSpec

#: Power each input sends while a matching is measured, mW.
PROBE_MW = 1.0
#: The figures of a row that are numbers measured on the chip (dB), for summaries.
FIGURES = ("worst_isolation_db", "worst_loss_db", "worst_excess_loss_db", "worst_power_mW")
#: What a row says of the chip as drawn (its fabrication, before any measurement).
DRAWN = ("max_coupler_error", "heater_efficiency_rms", "max_mzi_loss_db", "max_ring_offset_nm")
#: The study's numbers a sweep may vary: design, fabrication spreads and pass criteria.
SWEEPABLE = (
    "coupler_sigma",
    "heater_spread",
    "loss_db",
    "loss_sigma_db",
    "pitch_x_um",
    "pitch_y_um",
    "ring_sigma_nm",
    "min_isolation_db",
    "max_loss_db",
    "max_power_mW",
    "mesh_size",
    "endpoint_margin",
)
#: The hexagonal switch's geometry: None (the default) is :func:`~photonics.recirculating.
#: switch_geometry.hexagonal_switch`'s mesh size and endpoint margin for the ports.
GEOMETRY = ("mesh_size", "endpoint_margin")
#: Numbers added to the study after its first rows were written: left out of its identity at
#: their defaults, so that earlier studies keep their identity (and their chips' task keys).
LATER = {"mesh_size": None, "endpoint_margin": None, "search_routes": 0}
#: The study's pitches: None (the default) puts the heaters where the wired layout draws them.
PITCHES = ("pitch_x_um", "pitch_y_um")
#: The study's numbers that are pass criteria: they decide ``passed``, not the figures.
CRITERIA = ("min_isolation_db", "max_loss_db", "max_power_mW")
#: The recirculating design (:mod:`photonics.fabrication.mesh_yield`); the others are feed-forward.
HEXAGONAL = "hexagonal"
#: The designs a study can fabricate.
MESHES = ("clements", "reck", HEXAGONAL)
#: The workload of a study without matchings of its own.
ALL_TO_ALL = "all-to-all"


@dataclass(frozen=True)
class YieldStudy:
    """A fabrication Monte Carlo (units in the names).

    Design: a feed-forward ``mesh`` (``clements`` or ``reck``) of ``ports`` ports (even, 4-32),
    or ``hexagonal``, the recirculating switch of ``ports`` endpoints
    (:mod:`photonics.fabrication.mesh_yield`: no pitches or rings there);
    its heaters where the project's wired layout draws them
    (:func:`photonics.feedforward.chip_geometry.drawn_geometry`, the default chip's), or, given
    ``pitch_x_um`` or ``pitch_y_um``, on a plain grid of MZI columns ``pitch_x_um`` and modes
    ``pitch_y_um`` apart (the other 300 um / 60 um unless given, as in :class:`ChipSpec`;
    the heaters' thermal crosstalk grows as the pitch shrinks,
    :class:`photonics.devices.thermal.CrosstalkModel`; the calibration does not compensate it).
    Fabrication: each coupler's splitting error is normal
    with std ``coupler_sigma`` (0.01 is a 1 % spread of the 50:50 ratio, which also bounds each
    MZI's extinction), each heater's P_pi (its efficiency) with relative std
    ``heater_spread``, each MZI's loss ``loss_db`` +- ``loss_sigma_db``; with
    ``output_rings``, an add-drop ring before each photodiode (:class:`ChipSpec`'s) whose
    resonance is off by ``ring_sigma_nm`` (std): its lock costs heater power and, off
    resonance, light. Workload: the
    matchings routed on each chip, ``matchings`` (each a tuple of port pairs) named
    ``workload``; none: the all-to-all cover. Pass: every measured circuit's isolation >=
    ``min_isolation_db``, insertion loss <= ``max_loss_db``, and no matching's heaters draw
    more than ``max_power_mW`` in all. ``chips`` chips are drawn from ``seed``.
    """

    ports: int = 16
    mesh: str = "clements"
    chips: int = 100
    seed: int = 0
    coupler_sigma: float = DEFAULT_SPLITTER_SIGMA
    heater_spread: float = 0.05
    loss_db: float = DEFAULT_LOSS_DB
    loss_sigma_db: float = 0.02
    pitch_x_um: float | None = None
    pitch_y_um: float | None = None
    output_rings: bool = False
    ring_sigma_nm: float = 0.3
    min_isolation_db: float = 20.0
    max_loss_db: float = 12.0
    max_power_mW: float = 4000.0
    workload: str = ALL_TO_ALL
    matchings: tuple[tuple[tuple[int, int], ...], ...] = ()
    mesh_size: int | None = None
    endpoint_margin: float | None = None
    search_routes: int = 0

    def __post_init__(self) -> None:
        for name in ("ports", "chips", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Integral):
                raise SettingsError(f"{name} must be an integer, got {value!r}")
        if not 4 <= self.ports <= 32 or self.ports % 2:
            raise SettingsError(f"ports must be even and in 4..32, got {self.ports}")
        if not isinstance(self.output_rings, bool):
            raise SettingsError(f"output_rings must be True or False, got {self.output_rings!r}")
        if self.chips < 1:
            raise SettingsError(f"chips must be >= 1, got {self.chips}")
        if self.seed < 0:
            raise SettingsError(f"seed must be >= 0, got {self.seed}")
        for name in SWEEPABLE:
            value = getattr(self, name)
            if value is None and name in PITCHES + GEOMETRY:  # the default geometry
                continue
            if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
                raise SettingsError(f"{name} must be a finite number, got {value!r}")
        if not self.max_power_mW > 0:
            raise SettingsError(f"max_power_mW must be > 0, got {self.max_power_mW!r}")
        if not isinstance(self.workload, str) or not self.workload:
            raise SettingsError(f"workload must be a non-empty name, got {self.workload!r}")
        if self.workload == ALL_TO_ALL and self.matchings:
            raise SettingsError("the all-to-all workload takes no matchings of its own")
        if self.workload != ALL_TO_ALL and not self.matchings:
            raise SettingsError(f"workload {self.workload!r} needs its matchings")
        # checked, and as plain tuples, so that equal studies compare and hash equal
        pairs = tuple(Matching(m, self.ports).pairs for m in self.matchings)
        object.__setattr__(self, "matchings", pairs)
        if self.mesh not in MESHES:
            raise SettingsError(f"mesh must be one of {', '.join(MESHES)}; got {self.mesh!r}")
        self._check_geometry()
        if self.mesh == HEXAGONAL:
            given = [name for name in PITCHES if getattr(self, name) is not None]
            if given or self.output_rings:
                what = ", ".join(given) if given else "output_rings"
                raise SettingsError(
                    f"a hexagonal study takes no {what}: its cells are where the mesh puts "
                    "them, and it has no rings"
                )
        spec = self.spec(0)  # the chip settings are checked by its spec (mesh, spreads)
        if self.mesh == HEXAGONAL:
            return
        if spec.geometry is None and spec.pitch_x_um is not None:  # a grid: both pitches said
            object.__setattr__(self, "pitch_x_um", spec.pitch_x_um)
            object.__setattr__(self, "pitch_y_um", spec.pitch_y_um)

    def _check_geometry(self) -> None:
        """The hexagonal switch's mesh size (a whole number, held as an int), endpoint margin
        and cover search budget."""
        given = [n for n in GEOMETRY if getattr(self, n) is not None]
        search = self.search_routes
        if isinstance(search, bool) or not isinstance(search, Integral) or search < 0:
            raise SettingsError(f"search_routes must be an integer >= 0, got {search!r}")
        if self.mesh != HEXAGONAL and (given or search):
            what = ", ".join(given) or "search_routes"
            raise SettingsError(f"{what} belongs to the hexagonal switch, not to {self.mesh!r}")
        size = self.mesh_size
        if size is not None:
            if float(size) != int(size) or not 3 <= size <= 15:
                raise SettingsError(f"mesh_size must be a whole number in 3..15, got {size!r}")
            object.__setattr__(self, "mesh_size", int(size))
        margin = self.endpoint_margin
        if margin is not None and not 0 <= margin < 0.5:
            raise SettingsError(f"endpoint_margin must be in [0, 0.5), got {margin!r}")
        if search and self.matchings:
            raise SettingsError("search_routes searches the all-to-all cover; give no matchings")

    def workload_matchings(self) -> list[Matching]:
        """The matchings each chip routes: the study's own, else the all-to-all cover."""
        if not self.matchings:
            from photonics.recirculating.covers import round_robin

            return round_robin(self.ports)
        return [Matching(pairs, self.ports) for pairs in self.matchings]

    def spec(self, chip_seed: int) -> ChipSpec | MeshChipSpec:
        """The spec of a chip of this study drawn from ``chip_seed``: a :class:`ChipSpec`, or
        a :class:`~photonics.chips.mesh_chip.MeshChipSpec` for the hexagonal switch."""
        from photonics.chips.chip import ChipSpec

        if self.mesh == HEXAGONAL:
            from photonics.chips.mesh_chip import MeshChipSpec

            return MeshChipSpec(
                seed=chip_seed,
                splitter_sigma=self.coupler_sigma,
                p_pi_spread=self.heater_spread,
                loss_db=self.loss_db,
                loss_sigma_db=self.loss_sigma_db,
            )

        return ChipSpec(
            n_ports=self.ports,
            mesh=self.mesh,
            seed=chip_seed,
            splitter_sigma=self.coupler_sigma,
            p_pi_spread=self.heater_spread,
            loss_db=self.loss_db,
            loss_sigma_db=self.loss_sigma_db,
            pitch_x_um=self.pitch_x_um,
            pitch_y_um=self.pitch_y_um,
            output_rings=self.output_rings,
            ring_fab_sigma_nm=self.ring_sigma_nm,
        )

    def as_dict(self) -> dict[str, Any]:
        """The study as plain JSON-ready values (the matchings as lists of pairs)."""
        plain = asdict(self) | {"matchings": [[list(p) for p in m] for m in self.matchings]}
        return {k: v for k, v in plain.items() if k not in LATER or v != LATER[k]}

    def identity(self) -> dict[str, Any]:
        """What a chip's row depends on: the study without its number of chips (chip ``i`` is
        the same chip in a study of 10 chips and in one of 1000)."""
        return {k: v for k, v in self.as_dict().items() if k != "chips"}

    def chip_identity(self) -> dict[str, Any]:
        """What a chip's figures depend on: the :meth:`identity` without the pass criteria
        (:data:`CRITERIA`), so points of a sweep over the spec share their chips."""
        return {k: v for k, v in self.identity().items() if k not in CRITERIA}


def chip_seeds(study: YieldStudy, index: int) -> tuple[int, np.random.Generator]:
    """Chip ``index``'s fabrication seed (an integer for :class:`ChipSpec`) and the generator
    of its photodiodes' noise, both from ``SeedSequence(study.seed, spawn_key=(index,))``."""
    if not 0 <= index < study.chips:
        raise SettingsError(f"chip index must be in 0..{study.chips - 1}, got {index}")
    fabrication, noise = np.random.SeedSequence(study.seed, spawn_key=(index,)).spawn(2)
    return int(fabrication.generate_state(1, np.uint64)[0]), np.random.default_rng(noise)


def unmeasured(index: int, chip_seed: int) -> dict[str, Any]:
    """The row of chip ``index`` before anything is measured on it: not calibrated, figures
    NaN, not passed (what :func:`run_chip` returns for a chip whose calibration fails)."""
    return {
        "index": index,
        "chip_seed": chip_seed,
        "calibrated": False,
        "readings": 0,
        "matchings": 0,
        "worst_isolation_db": math.nan,
        "worst_loss_db": math.nan,
        "worst_excess_loss_db": math.nan,
        "worst_power_mW": math.nan,
        "optimal_worst_isolation_db": None,  # searched covers only (None: Parquet's null)
        "passed": False,
    }


def drawn_figures(chip: EmulatedChip) -> dict[str, float | None]:
    """What was drawn on ``chip`` (:data:`DRAWN`): the largest |splitting error| of its
    couplers, the rms relative deviation of its cells' and phase shifters' P_pi, its lossiest
    cell (dB) and, with output rings, the largest |resonance offset| of a ring (nm; None
    without)."""
    imp = chip.imperfections
    rings = chip.ring_channels
    p_pi = chip.heaters.p_pi_mW[: chip.n_heaters - rings.size]  # the rings' differ
    offset = None
    if rings.size:
        fsr = chip.spec.ring.reference_fsr_nm  # a ring's bias phase is 2 pi per FSR of offset
        offset = float(np.abs(chip.heaters.bias_rad[rings]).max() * fsr / 2 / np.pi)
    return {
        "cells": int(chip.n_cells if hasattr(chip, "n_cells") else chip.mesh.n_mzis),
        "max_coupler_error": float(
            max(np.abs(imp.splitter_error_in).max(), np.abs(imp.splitter_error_out).max())
        ),
        "heater_efficiency_rms": float(np.sqrt(np.mean((p_pi / chip.spec.p_pi_mW - 1) ** 2))),
        "max_mzi_loss_db": float(np.max(imp.loss_bar_db)),
        "max_ring_offset_nm": offset,
    }


def passes(study: YieldStudy, row: dict[str, Any]) -> bool:
    """Whether the chip of ``row`` meets ``study``'s spec (:data:`CRITERIA`); a chip that did
    not calibrate never does."""
    return bool(
        row["calibrated"]
        and row["worst_isolation_db"] >= study.min_isolation_db
        and row["worst_loss_db"] <= study.max_loss_db
        and row["worst_power_mW"] <= study.max_power_mW
    )
