"""Self-calibration of a recirculating (e.g. hexagonal) mesh through the photodiodes at its
switch endpoints.

Runs against the two callables of :mod:`photonics.calibration.selfcal`, so the same procedure serves
the emulated :class:`~photonics.chips.mesh_chip.MeshChip` and a bench:

- ``measure(currents_mA, endpoint) -> powers``: currents of all heaters ``(B, H)``, the laser
  on one endpoint; the powers ``(B, n_endpoints)`` on every endpoint's photodiode;
- ``voltage(currents_mA) -> volts``: the heater driver's read-back ``(B, H)``.

Heater channel ``c`` is cell ``c``'s heater; its phase ``psi = pi P / P_pi + bias`` sets the
cell's ``2 theta = psi`` (bar at ``psi = 0``), as :mod:`photonics.chips.mesh_chip` models it.

Method: the unit-by-unit characterisation of hexagonal meshes through light paths (Perez-Lopez
et al., Nat. Commun. 11, 2020 "Multipurpose self-configuration of programmable photonic
circuits" and Nat. Commun. 15, 1563 (2024); docs/calibration-hex.md), worked out here for
detectors at the endpoints only:

1. every heater's resistance from I-V sweeps
   (:func:`~photonics.calibration.selfcal.fit_resistances`);
2. a region ``R`` of calibrated cells grows from the mesh's edge. A cell ``c`` can be measured
   once light from an endpoint reaches one of its port-ends through ``R`` (the *input route*)
   and one of its two exits leads out of the chip through ``R`` (the *dark route*, to any edge
   port). Setting the routes' cells with their calibration, the uncalibrated cells cold and
   the rest of ``R`` at bar, ``c``'s heater is swept over a full period: in the state that
   sends the light down the dark route nothing enters the rest of the mesh, so the detectors
   (all but the dark route's end) see a fringe whose zero is that state. When the other exit
   reaches another endpoint through ``R`` too (the *on route*), that detector alone is read:
   the cleanest fringe, and its on/off ratio is the cell's extinction in the dark state. The
   fringe's period gives P_pi, its phase the bias. The first cells are those whose dark exit is
   an edge port itself (the outer arm of a boundary cell).
3. refinement passes measure every cell again with all the others calibrated, so no fringe
   carries light scattered by cold cells; each fit is confirmed through a second way (a route
   through a cell set wrong can give a clean fringe with the bias off by pi), and every
   fringe is fitted with its second harmonic (light crossing the cell twice around a loop).
4. each trusted cell's extinction in each state (bar, cross): light routed through it onto a
   detector at the exit that state darkens, read with the cell set to the state (the leak,
   averaged) and to the other one, on a detector no other lit cell's first-order leak reaches
   (:mod:`photonics.calibration.hex_extinction`), so no background can cancel part of the leak. The
   leak is raised by :data:`NOISE_SIGMAS` of the detectors' noise; a state without such a reading
   takes the chip's default (:func:`~photonics.calibration.hex_extinction.conservative`).

A cell no route reaches, whose fringe has no contrast, or whose extinction reading shows that
it does not switch as calibrated (:data:`BROKEN_READING_DB`) is reported dead (its heater keeps
the nominal P_pi, ``phase_fitted`` False), and the router must not use it.

Over 500 lines on purpose: the steps of one procedure share its bench (:class:`CellBench`)
and what is known so far; the pure parts are in :mod:`photonics.calibration.hex_routes` and
:mod:`photonics.calibration.hex_extinction`, the crosstalk step in
:mod:`photonics.calibration.hex_crosstalk`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import product

import numpy as np

from photonics.calibration.fits import Fringe, fit_fringe
from photonics.calibration.hex_extinction import (
    UNKNOWN,
    conservative,
    exit_of,
    leak_exits,
    lit_hops,
)
from photonics.calibration.hex_routes import CellMeasurement, RoutePlanner, Way
from photonics.calibration.selfcal import (
    IV_GROUP,
    Measure,
    Voltage,
    fit_resistances,
    full_scale_power_mW,
)
from photonics.chips.calibration import MAX_EXTINCTION_DB, Calibration
from photonics.devices.thermal import DEFAULT_P_PI_MW, current_for_power, power_for_current
from photonics.errors import FitError
from photonics.progress import Progress
from photonics.recirculating.waveguide_mesh import BAR, CROSS, WaveguideMesh

#: A fringe counts only if its amplitude is this many times its rms residual.
MIN_CONTRAST = 10.0
#: A cell's fringe is trusted when its detector's on/off ratio reaches this, dB.
TRUSTED_ON_OFF_DB = 20.0
#: Share of the power budget a sweep plans to draw: the rest covers the fitted resistances'
#: error and a driver whose power model differs a little.
BUDGET_SHARE = 0.98
#: Refinement passes stop once no bias moves by more than this, rad.
REFINED_RAD = 0.02
#: Two ways agree on a cell when their biases differ by less than this (rad) and their P_pi
#: by less than :data:`AGREE_P_PI` (relative): noise and the ways' own errors stay well under
#: both; a route through a cell set wrong moves a bias by about pi.
AGREE_RAD = 0.2
AGREE_P_PI = 0.05
#: Other ways a refined cell is measured to confirm its fit, at most.
CHECKS = 2
#: Points of a re-measured cell's sweep over one period.
REFINE_POINTS = 8
#: Harmonics of a cell's fringe fitted: light that crosses the cell twice around a loop adds
#: the second, which a cosine alone turns into P_pi errors of up to 1.7 %.
FRINGE_HARMONICS = 2
#: Readings of a cell's leak averaged for its extinction in one state.
LEAK_READS = 4
#: The leak taken as its mean reading plus this many standard errors of the detectors' noise,
#: so that noise does not make a cell read better than it is.
NOISE_SIGMAS = 3.0
#: A clean extinction reading below this, dB, says the cell does not switch as calibrated (a
#: bias error): it is dead. Couplers leak that much only 8 sigma out (published: 25-50 dB).
BROKEN_READING_DB = TRUSTED_ON_OFF_DB


@dataclass(frozen=True)
class HexSelfCalibration:
    """Result of :func:`calibrate_recirculating`: the :class:`Calibration` (cells' heaters;
    ``phase_fitted`` False for dead cells; its ``extinction_db``, also :attr:`extinction_db`
    here), the cells' clean extinction readings per state ``(2, n_cells)`` [bar, cross] (dB,
    NaN where none), the dead cells, the order the cells were first calibrated in, how each was
    measured last, and how many detector readings it took."""

    calibration: Calibration
    measured_extinction_db: np.ndarray
    dead: tuple[int, ...]
    order: tuple[int, ...]
    how: tuple[CellMeasurement | None, ...]
    measurements: int
    fringe_base_mA: np.ndarray

    @property
    def extinction_db(self) -> np.ndarray:
        """Each cell's extinction per state ``(2, n_cells)`` [bar, cross], dB, a lower bound:
        its clean reading, else the chip's default; NaN for dead cells."""
        return self.calibration.extinction_db  # type: ignore[return-value]

    def __repr__(self) -> str:
        return (
            f"<HexSelfCalibration: {len(self.order)} cells fitted, {len(self.dead)} dead, "
            f"{self.measurements} detector readings>"
        )


@dataclass
class CellBench:
    """The instruments and what is known so far: fitted resistances, P_pi and bias per cell."""

    measure: Measure
    n_heaters: int
    n_ports: int
    a: np.ndarray
    c: np.ndarray
    p_max: float
    max_current_mA: float
    p_pi: np.ndarray
    bias: np.ndarray
    sweep_points: int
    budget_mW: float
    readings: int = 0
    #: The other heaters' currents (mA) while each cell's last fringe was read.
    fringe_base: dict[int, np.ndarray] = field(default_factory=dict)

    def current(self, cell: int | np.ndarray, power_mW: np.ndarray | float) -> np.ndarray:
        # the fitted R(I) inverted at p_max can land a rounding above the limit
        found = current_for_power(power_mW, self.c[cell], self.a[cell])
        return np.minimum(found, self.max_current_mA)

    def power(self, currents_mA: np.ndarray) -> np.ndarray:
        """Each heater's power (mW) at ``currents_mA`` (``(..., H)``) by the fitted resistances."""
        return power_for_current(currents_mA, self.c, self.a)

    def state_power(self, cells: np.ndarray, states: np.ndarray) -> np.ndarray:
        """Power (mW, in [0, 2 P_pi)) that sets ``cells`` to ``states`` (0 bar, 1 cross)."""
        return np.mod(np.pi * states - self.bias[cells], 2 * np.pi) * self.p_pi[cells] / np.pi

    def within_budget(self, base: np.ndarray, needed: list[int]) -> np.ndarray:
        """``base`` with parked cells (not ``needed``, the swept cell first) turned off, the
        warmest first, until it and the swept cell at ``p_max`` fit the power budget;
        :class:`FitError` if the ``needed`` cells alone do not."""
        power = self.power(base)
        power[needed[0]] = self.p_max
        spare = np.setdiff1d(np.flatnonzero(base), needed)
        spare = spare[np.argsort(-power[spare], kind="stable")]
        over = power.sum() - BUDGET_SHARE * self.budget_mW
        cut = np.searchsorted(np.cumsum(power[spare]), over) + 1 if over > 0 else 0
        if cut > spare.size:
            raise FitError(
                f"cell {needed[0]}: its routes and sweep draw {power[needed].sum():.4g} mW, "
                f"above the power budget {self.budget_mW:.4g} mW"
            )
        base = base.copy()
        base[spare[:cut]] = 0.0
        return base

    def base(self, how: CellMeasurement, known: np.ndarray, parked_state: int = BAR) -> np.ndarray:
        """Currents (mA) of the other cells while ``how.cell`` is measured: the route's cells
        set, the ``known`` ones parked at ``parked_state`` within the power budget, the rest
        off."""
        base = np.zeros(self.n_heaters)
        parked = np.flatnonzero(known)
        at = np.full(parked.size, parked_state)
        base[parked] = self.current(parked, self.state_power(parked, at))
        if how.route:
            cells, states = np.array(how.route).T
            base[cells] = self.current(cells, self.state_power(cells, states))
        return self.within_budget(base, [how.cell, *(c for c, _ in how.route)])

    def read(self, rows: np.ndarray, source: int) -> np.ndarray:
        self.readings += len(rows)
        return np.asarray(self.measure(rows, source), dtype=float)

    def sweep(
        self,
        how: CellMeasurement,
        base: np.ndarray,
        powers: np.ndarray,
        span: tuple[float, float] | None = None,
        dark_end: int = -1,
    ) -> Fringe:
        """The fringe of ``how.cell`` swept over ``powers`` (mW), the other heaters at ``base``
        (mA), read on its detector (else on all but ``dark_end``); ``span``: P_pi bounds, mW."""
        k = how.cell
        rows = np.repeat(base[None], powers.size, axis=0)
        rows[:, k] = self.current(k, powers)
        seen = self.read(rows, how.source)
        if how.detector >= 0:
            signal = seen[:, how.detector]
        else:
            keep = np.ones(self.n_ports, bool)
            if dark_end >= 0:
                keep[dark_end] = False
            signal = seen[:, keep].sum(axis=1)
        return fit_fringe(powers, signal, p_pi_range_mW=span, harmonics=FRINGE_HARMONICS)

    @staticmethod
    def bias_of(fringe: Fringe, how: CellMeasurement) -> float:
        """The cell's bias (rad, in [0, 2 pi)) from its fringe: the signal is the on exit's
        power, ~ (1 + cos psi) / 2 when on is bar, (1 - cos psi) / 2 when on is cross, so its
        phase is the bias, or the bias + pi."""
        return float(np.mod(fringe.bias_rad - (np.pi if how.dark_state == BAR else 0.0), 2 * np.pi))

    def fit_cell(
        self, how: CellMeasurement, dark_end: int, known: np.ndarray, again: bool
    ) -> tuple[float, float, float]:
        """(P_pi mW, bias rad, on/off ratio dB or NaN) of ``how.cell``: the ratio of its
        detector set on and dark, which tells whether the routes worked. :class:`FitError` when
        its fringe has no contrast or needs more than ``p_max`` for a period. A cell measured
        ``again`` is swept over one period of its known P_pi, in :data:`REFINE_POINTS`."""
        base = self.base(how, known)
        k = how.cell
        powers = np.linspace(0, self.p_max, self.sweep_points)
        span = None
        if again:
            powers = np.linspace(0, 2 * self.p_pi[k], REFINE_POINTS + 1)[:-1]
            span = (0.8 * self.p_pi[k], 1.25 * self.p_pi[k])
        fringe = self.sweep(how, base, powers, span, dark_end)
        if fringe.amplitude < MIN_CONTRAST * fringe.rms_residual:
            raise FitError(
                f"cell {k}: fringe amplitude {fringe.amplitude:.3g} is under {MIN_CONTRAST:g} "
                f"times its rms residual {fringe.rms_residual:.3g}"
            )
        p_pi = fringe.p_pi_mW
        if 2 * p_pi > self.p_max:
            raise FitError(f"cell {k}: P_pi = {p_pi:.3g} mW needs more than {self.p_max:.3g} mW")
        bias = self.bias_of(fringe, how)
        on_off = np.nan
        if how.detector >= 0:
            self.p_pi[k], self.bias[k] = p_pi, bias
            both = np.repeat(base[None], 2, axis=0)
            on = self.state_power(np.array([k, k]), np.array([how.dark_state, 1 - how.dark_state]))
            both[:, k] = self.current(k, on)
            dark, lit = self.read(both, how.source)[:, how.detector]
            ratio = lit / max(dark, lit * 10 ** (-MAX_EXTINCTION_DB / 10), 1e-300)
            on_off = float(10 * np.log10(max(ratio, 1.0)))
        self.fringe_base[k] = base
        return p_pi, bias, on_off


def _state_extinction(
    mesh: WaveguideMesh,
    endpoints: Sequence[int],
    bench: CellBench,
    trusted: np.ndarray,
    progress: Progress | None,
) -> np.ndarray:
    """Each trusted cell's extinction in each state, dB, ``(2, n)`` (NaN where no clean way
    was found): light routed through the cell (the others trusted, parked at bar or cross)
    onto a detector at its other exit, read with the cell set to the state and to the other
    one (as the calibration sets them); the first way whose detector no other lit cell's
    first-order leak reaches (:func:`~photonics.calibration.hex_extinction.leak_exits`)."""
    n = mesh.n_cells
    partner = mesh.partner()
    ends = mesh.edge_ports[np.asarray(endpoints, dtype=np.int64)]
    out = np.full((2, n), np.nan)
    readings: list[np.ndarray] = []
    found: list[tuple[int, int, float, float]] = []  # state, cell, mean leak, lit (mW)
    cells = np.flatnonzero(trusted)
    for i, k in enumerate(cells):
        if progress is not None:
            progress("cell extinction", i, cells.size)
        others = trusted.copy()
        others[k] = False
        planner = RoutePlanner(mesh, endpoints, others)
        for state in (BAR, CROSS):
            ways = [w.measurement for w in planner.ways(int(k), (state,), every_turn=True)]
            for parked, how in product((BAR, CROSS), [w for w in ways if w.detector >= 0]):
                try:
                    base = bench.base(how, trusted, parked)
                except FitError:  # its routes alone do not fit the power budget
                    continue
                states = np.full(n, UNKNOWN)
                states[trusted & (base[:n] > 0)] = parked
                for c, s in how.route:
                    states[c] = s
                states[k] = state
                detector = int(ends[how.detector])
                dark = lit_hops(partner, states, int(ends[how.source]))
                if dark is None or detector in leak_exits(partner, states, dark, int(k)):
                    continue
                states[k] = 1 - state
                lit = lit_hops(partner, states, int(ends[how.source]))
                if lit is None or exit_of(partner, lit) != detector:
                    continue
                rows = np.repeat(base[None], LEAK_READS + 1, axis=0)
                set_to = np.array([state] * LEAK_READS + [1 - state])
                power = bench.state_power(np.full(LEAK_READS + 1, k), set_to)
                rows[:, k] = bench.current(k, power)
                seen = bench.read(rows, how.source)
                readings.append(seen.ravel())
                at = seen[:, how.detector]
                found.append((state, int(k), float(at[:-1].mean()), float(at[-1])))
                break
    if progress is not None:
        progress("cell extinction", cells.size, cells.size)
    # the detectors' noise: most detectors of every reading are dark, so the median of the
    # readings' size is the noise's (of a Gaussian: 0.6745 sigma)
    sigma = float(np.median(np.abs(np.concatenate(readings)))) / 0.6745 if readings else 0.0
    for state, k, leak, on in found:
        bound = leak + NOISE_SIGMAS * sigma / np.sqrt(LEAK_READS)
        floor = on * 10 ** (-MAX_EXTINCTION_DB / 10)
        out[state, k] = 10 * np.log10(max(on / max(bound, floor, 1e-300), 1.0))
    return out


def _shortest_first(way: Way) -> tuple[int, int, int]:
    """Sort key of the ways to measure a cell: fewest route cells first (ties: the lit
    endpoint, then the entry port-end)."""
    m = way.measurement
    return len(m.route), m.source, m.entry


def _by_distance(mesh: WaveguideMesh, known: np.ndarray) -> list[int]:
    """The cells not ``known``, nearest to a known cell first (in cells crossed; ties by
    index); cells no known cell connects to last."""
    n = mesh.n_cells
    pairs = mesh.cell_adjacency()
    distance = np.where(known, 0, n + 1)
    for _ in range(n):
        near = np.minimum(distance[pairs[:, 0]], distance[pairs[:, 1]]) + 1
        new = distance.copy()
        np.minimum.at(new, pairs[:, 0], near)
        np.minimum.at(new, pairs[:, 1], near)
        if np.array_equal(new, distance):
            break
        distance = new
    todo = np.flatnonzero(~known)
    return [int(k) for k in todo[np.argsort(distance[todo], kind="stable")]]


def calibrate_recirculating(
    mesh: WaveguideMesh,
    endpoints: Sequence[int],
    measure: Measure,
    voltage: Voltage,
    n_heaters: int,
    max_current_mA: float,
    chip_id: str = "chip",
    nominal_p_pi_mW: float = DEFAULT_P_PI_MW,
    sweep_points: int = 17,
    refine: int = 6,
    progress: Progress | None = None,
    iv_group: int = IV_GROUP,
    power_budget_mW: float = np.inf,
) -> HexSelfCalibration:
    """Calibrate every cell of ``mesh`` (heater channels ``0 .. n_cells - 1``) through the
    photodiodes at ``endpoints`` (edge ports, in endpoint order), see the module docstring.

    ``max_current_mA`` bounds every current; the I-V sweeps drive ``iv_group`` heaters at a
    time, and a fringe sweep draws the swept cell up to the power that current gives plus its
    routes' cells and the parked calibrated cells within a full period (``2 P_pi``) each, by the
    fitted resistances at most ``power_budget_mW``: parked cells are turned off, the warmest
    first, until it fits (a cell whose routes alone do not fit is not measured).
    Up to ``refine`` passes re-measure every cell with all others calibrated, until no bias
    moves by more than :data:`REFINED_RAD`. Then each trusted cell's extinction per state
    (:attr:`HexSelfCalibration.extinction_db`, also in the calibration). ``progress`` follows
    the I-V sweeps and the cells (stages ``"cell fringes"``, ``"refine cells"``, then
    ``"cell extinction"``).
    """
    a, c = fit_resistances(voltage, n_heaters, max_current_mA, iv_group, progress)
    p_max = full_scale_power_mW(a, c, max_current_mA)
    n = mesh.n_cells
    bench = CellBench(
        measure,
        n_heaters,
        len(endpoints),
        a,
        c,
        p_max,
        max_current_mA,
        np.full(n_heaters, float(nominal_p_pi_mW)),
        np.zeros(n_heaters),
        sweep_points,
        power_budget_mW,
    )
    entry_cells = set((mesh.edge_ports[np.asarray(endpoints, dtype=np.int64)] // 4).tolist())
    known = np.zeros(n, bool)
    trusted = np.zeros(n, bool)  # last fringe clean (see clean())
    failed: dict[int, set[CellMeasurement]] = {}  # the ways each cell's fit failed, this pass
    on_off_db = np.full(n, np.nan)
    how: list[CellMeasurement | None] = [None] * n
    order: list[int] = []

    def clean(k: int) -> bool:
        """Whether cell ``k``'s last fringe is to be trusted: read on one detector (a sum of
        detectors also sees light that leaves the routes) with an on/off ratio of at least
        :data:`TRUSTED_ON_OFF_DB`, which the routes' cells reach only when set as planned."""
        return how[k].detector >= 0 and on_off_db[k] >= TRUSTED_ON_OFF_DB  # type: ignore[union-attr]

    def through(k: int, *regions: np.ndarray) -> Iterator[RoutePlanner]:
        """Planners through each of ``regions`` (cell masks) without cell ``k``, made as
        asked for."""
        for region in regions:
            others = region.copy()
            others[k] = False
            yield RoutePlanner(mesh, endpoints, others)

    def measure_cell(k: int, planners: Iterable[RoutePlanner]) -> list[RoutePlanner]:
        """Measure cell ``k`` each planner's way in turn, those that read one detector, until
        one fits; when no planner has one, the first way found at all; an endpoint's own cell,
        without which the endpoint is lost, then every other way that reads one detector,
        shortest first, until one fits. The planners looked at when a way fitted, else none."""
        planners = iter(planners)
        seen: list[RoutePlanner] = []
        tried: list[Way] = []
        summed = None

        def fits(way: Way) -> bool:
            if way.measurement in failed.get(k, ()):
                return False  # the way that failed before
            try:
                p_pi, bias, ratio = bench.fit_cell(way.measurement, way.dark_end, known, known[k])
            except FitError:
                failed.setdefault(k, set()).add(way.measurement)
                return False
            bench.p_pi[k], bench.bias[k] = p_pi, bias
            on_off_db[k] = ratio
            how[k] = way.measurement
            return True

        for planner in planners:
            seen.append(planner)
            found = planner.plan(k)
            if found is None or found in tried:
                continue
            if found.measurement.detector < 0:
                summed = summed or found
                continue
            tried.append(found)
            if fits(found):
                return seen
        if not tried and summed is not None and fits(summed):
            return seen
        if k not in entry_cells:
            return []
        more = {w for p in seen for w in p.ways(k, every_turn=True)}
        rest = (w for w in more if w.measurement.detector >= 0 and w not in tried)
        return seen if any(fits(w) for w in sorted(rest, key=_shortest_first)) else []

    def confirmed(k: int, planners: list[RoutePlanner]) -> bool:
        """Whether cell ``k``'s fit just made agrees with another way's (:data:`AGREE_RAD`,
        :data:`AGREE_P_PI`), up to :data:`CHECKS` other clean ways through ``planners``' cells,
        fewest shared route cells first: the first two fits that agree are averaged. A route
        through a cell set wrong can give a clean fringe with the bias off by pi; two routes
        rarely share that error. A fit alone counts when no other way gives a clean one and its
        routes crossed only calibrated cells."""
        first = how[k]
        route = {c for c, _ in first.route}  # type: ignore[union-attr]
        seen = [(bench.p_pi[k], bench.bias[k], bench.fringe_base[k])]
        ways = {w for p in planners for w in p.ways(k)}
        others = [w for w in ways if w.measurement.detector >= 0 and w.measurement != first]
        others.sort(
            key=lambda w: (len(route & {c for c, _ in w.measurement.route}), *_shortest_first(w))
        )
        for way in others[:CHECKS]:
            try:
                p_pi, bias, ratio = bench.fit_cell(way.measurement, way.dark_end, known, True)
            except FitError:
                continue
            if not ratio >= TRUSTED_ON_OFF_DB:
                continue
            new = (p_pi, bias, bench.fringe_base[k])
            for old in seen:
                if (
                    abs(np.angle(np.exp(1j * (new[1] - old[1])))) < AGREE_RAD
                    and abs(new[0] / old[0] - 1) < AGREE_P_PI
                ):
                    bench.p_pi[k] = (new[0] + old[0]) / 2
                    bench.bias[k] = np.mod(
                        np.angle(np.exp(1j * new[1]) + np.exp(1j * old[1])), 2 * np.pi
                    )
                    # the mean of the two fringes' neighbours' powers, for the crosstalk step
                    heaters = np.arange(bench.n_heaters)
                    bench.fringe_base[k] = bench.current(
                        heaters, (bench.power(new[2]) + bench.power(old[2])) / 2
                    )
                    return True
            seen.append(new)
        bench.p_pi[k], bench.bias[k], bench.fringe_base[k] = seen[0]
        return len(seen) == 1 and all(known[c] for c in route)

    # growth: each round measures the cells the calibrated region reaches, then adds them
    while True:
        planner = RoutePlanner(mesh, endpoints, known)
        grown = []
        for k in np.flatnonzero(~known):
            if progress is not None:
                progress("cell fringes", int(known.sum()), n)
            if measure_cell(int(k), [planner]):
                grown.append(int(k))
        if not grown:
            break
        known[grown] = True
        trusted[grown] = [clean(k) for k in grown]
        order += grown
    if progress is not None:
        progress("cell fringes", n, n)
    # then passes over every cell with all the others set: the calibrated ones again (their
    # first fringes had cold cells around them), and the ones no route through calibrated
    # cells reached, nearest first, routed through cells whose state is still a guess
    for _ in range(refine):
        failed.clear()  # the cells around have moved since: a way that failed may work now
        before, count = bench.bias.copy(), len(order)
        cells = order + _by_distance(mesh, known)
        for i, k in enumerate(cells):
            if progress is not None:
                progress("refine cells", i, len(cells))
            # a calibrated cell is measured through trusted cells, else through calibrated
            # ones, else through any (a cell first calibrated through guesses may have no
            # other way); one not yet calibrated through calibrated cells (the ones around
            # have moved since its last try), else through any, guesses being all there is.
            # Either way it is trusted only when a second way confirms it (see confirmed())
            every = np.ones(n, bool)
            regions = (trusted, known, every) if known[k] else (known, every)
            used = measure_cell(k, through(k, *regions))
            if used:
                trusted[k] = known[k] and clean(k) and confirmed(k, used)
                if not known[k]:
                    known[k] = True
                    order.append(k)
            else:  # its estimate stays, as the best guess of its state, but is not trusted
                trusted[k] = False
        if progress is not None:
            progress("refine cells", len(cells), len(cells))
        change = np.abs(np.angle(np.exp(1j * (bench.bias - before))))[known]
        if len(order) == count and trusted[known].all() and change.max() < REFINED_RAD:
            break
    measured = _state_extinction(mesh, endpoints, bench, trusted, progress)
    broken = np.any(measured < BROKEN_READING_DB, axis=0)
    trusted &= ~broken
    measured[:, broken] = np.nan
    dead = ~trusted
    fitted = np.zeros(n_heaters, bool)
    fitted[:n] = trusted
    calibration = Calibration(
        chip_id=chip_id,
        p_pi_mW=np.where(fitted, bench.p_pi, nominal_p_pi_mW),
        bias_rad=np.where(fitted, bench.bias, 0.0),
        a_ohm_per_mA2=a,
        c_ohm=c,
        created=datetime.now(UTC).isoformat(),
        phase_fitted=fitted,
        extinction_db=conservative(measured, trusted),
    )
    return HexSelfCalibration(
        calibration,
        measured,
        tuple(np.flatnonzero(dead).tolist()),
        tuple(k for k in order if trusted[k]),
        tuple(how),
        bench.readings,
        np.array([bench.fringe_base.get(k, np.full(n_heaters, np.nan)) for k in range(n)]),
    )


__all__ = [
    "CellMeasurement",
    "HexSelfCalibration",
    "calibrate_recirculating",
]
