"""Self-calibration of a feed-forward mesh through its own output photodiodes.

Runs against two callables, so the same procedure serves the emulated chip and a bench:

- ``measure(currents_mA, input_port) -> powers``: currents of all heaters, shape ``(B, H)``; the
  laser on one input port; returns the output photodiode powers ``(B, n)`` (any linear unit);
- ``voltage(currents_mA) -> volts``: the heater driver's voltage read-back, ``(B, H)``.

Heater channels follow :mod:`photonics.chips.chip` (internal heater of MZI ``k`` is channel ``k``).

Procedure, MZI by MZI in slot order (column by column from the inputs):

1. resistance ``R(I) = a I^2 + c`` of every heater from an I-V sweep;
2. the MZI's internal heater is swept while the laser enters its top input alone (every MZI
   upstream is already calibrated and set to bar, the laser on the input of the same mode); the
   fringe's period on any detector gives P_pi;
3. its phase offset cannot come from the same fringe (the uncalibrated mesh downstream mixes its
   two outputs with unknown phases), so it comes from a *probe*: the next MZI that one output
   enters alone. When the MZI is at bar, nothing reaches a probe below it, so sweeping the
   probe's heater changes no detector; the zero of that sensitivity is the bar point, found by a
   grid and a bounded scalar minimisation (a probe above it is dark at cross instead). An output
   that meets no further MZI is read directly from its photodiode instead.

Over 500 lines on purpose: the steps (resistances, fringes, probes, crosstalk pairs, the
drive that compensates crosstalk) share one measurement rig and its calibration state, and
the recirculating procedure (:mod:`photonics.calibration.hex_selfcal`) reuses its public pieces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

from photonics.calibration.fits import (
    fit_crosstalk,
    fit_crosstalk_model,
    fit_fringe,
    fit_heater_resistance,
)
from photonics.chips.calibration import Calibration
from photonics.chips.chip import Chip
from photonics.devices.mzi import arm_phases
from photonics.devices.thermal import (
    DEFAULT_P_PI_MW,
    HeaterLayout,
    Heaters,
    current_for_power,
    currents_for_phase,
    differential_crosstalk,
    power_for_current,
)
from photonics.errors import FitError
from photonics.feedforward.meshes import FeedForwardMesh
from photonics.matching import Permutation
from photonics.progress import Progress, steps

Measure = Callable[[np.ndarray, int], np.ndarray]
#: Heaters driven at once in the I-V sweep (16 x 55 mW at 10 mA stays under any power budget).
IV_GROUP = 16
#: Share of the power budget an I-V sweep sized by :func:`iv_group` draws at once: a heater's
#: resistance rises with its current, which a driver that models power from its read-back
#: (hil's Qontrol) learns as the sweep goes.
IV_MARGIN = 0.9
Voltage = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SelfCalibration:
    """Result of :func:`calibrate_mesh`: the chip's :class:`Calibration` (every heater's
    resistance; P_pi and bias of every MZI's internal heater, ``2 theta = pi P / P_pi + bias``),
    how each MZI's bias was found, and how many detector readings it took."""

    calibration: Calibration
    methods: tuple[str, ...]  # "probe-below", "probe-above", "direct-top" or "direct-bottom"
    measurements: int

    def __repr__(self) -> str:
        return (
            f"<SelfCalibration: {len(self.methods)} MZIs fitted from {self.measurements} "
            f"detector readings; {self.calibration!r}>"
        )


def internal_heaters(cal: Calibration, n_mzis: int) -> Heaters:
    """The MZIs' internal heaters (channels 0 .. n_mzis - 1) as the calibration describes them."""
    k = slice(0, n_mzis)
    return Heaters(
        n_mzis,
        p_pi_mW=cal.p_pi_mW[k],
        bias_rad=cal.bias_rad[k],
        r0_ohm=cal.c_ohm[k],
        r_rise_ohm_per_mA2=cal.a_ohm_per_mA2[k],
        drift_rad_per_K=0.0,
    )


@dataclass(frozen=True, eq=False)
class CellDrive:
    """How a calibration drives the cells' heaters (channels ``0 .. n_cells - 1``): the heaters
    as it describes them and, when compensating, their mutual thermal crosstalk. Built once per
    calibration (:meth:`of`), used for every setting."""

    heaters: Heaters
    crosstalk: sp.csr_matrix | None

    @classmethod
    def of(cls, cal: Calibration, n_cells: int, compensate: bool = True) -> CellDrive:
        """The drive of ``cal``'s first ``n_cells`` heaters; with ``compensate`` and a crosstalk
        matrix in ``cal``, their mutual crosstalk is pre-compensated."""
        K = None
        if compensate and cal.crosstalk is not None:
            K = sp.csr_matrix(cal.crosstalk[:n_cells, :n_cells])
        return cls(internal_heaters(cal, n_cells), K)

    def currents(self, theta_rad: np.ndarray) -> np.ndarray:
        """The cells' heater currents (mA) that set them to ``theta`` (rad)."""
        return currents_for_phase(self.heaters, arm_phases(theta_rad)[0], self.crosstalk)


def currents_for_theta(
    cal: Calibration, theta_rad: np.ndarray, n_heaters: int, compensate: bool = True
) -> np.ndarray:
    """Heater currents (mA) that set the MZIs to ``theta`` (rad) per ``cal`` (see
    :class:`CellDrive`); the other heaters of ``n_heaters`` at 0."""
    current = np.zeros(n_heaters)
    current[: len(theta_rad)] = CellDrive.of(cal, len(theta_rad), compensate).currents(theta_rad)
    return current


def _downstream(mesh: FeedForwardMesh, k: int, mode: int) -> int | None:
    """Index of the first MZI after ``k`` on ``mode``, or None."""
    later = np.flatnonzero(
        (mesh.columns > mesh.columns[k]) & ((mesh.modes == mode) | (mesh.modes + 1 == mode))
    )
    return int(later[0]) if later.size else None


def _probe(mesh: FeedForwardMesh, k: int) -> tuple[str, int | None]:
    """How to find MZI ``k``'s bar point, and the probe MZI if one is used."""
    m = int(mesh.modes[k])
    below, above = _downstream(mesh, k, m + 1), _downstream(mesh, k, m)
    if below is None:
        return "direct-bottom", None
    if above is None:
        return "direct-top", None
    # a probe must meet only one of MZI k's outputs at its first column after k
    if mesh.modes[below] == m + 1 and mesh.columns[below] == mesh.columns[k] + 1:
        return "probe-below", below
    if mesh.modes[above] == m - 1 and mesh.columns[above] == mesh.columns[k] + 1:
        return "probe-above", above
    raise FitError(f"MZI {k} has no probe: neither output meets a lone MZI in the next column")


def _rows(start: np.ndarray, channel: int, currents: np.ndarray) -> np.ndarray:
    """Copies of the current vector ``start``, one per value of ``channel``'s ``currents``."""
    rows = np.repeat(start[None, :], len(currents), axis=0)
    rows[:, channel] = currents
    return rows


def _zero_of(
    f: Callable[[np.ndarray], np.ndarray], p_pi: float, p_max: float, floor: float
) -> float:
    """Where the non-negative ``f`` (of an array of powers, mW) vanishes over one period from
    ``floor`` (mW): a 24-point grid, measured in one batch, then a bounded scalar search around
    the grid's minimum (mW)."""
    grid = floor + np.linspace(0, 2 * p_pi, 25)[:-1]
    i = int(np.argmin(f(grid)))
    step = grid[1] - grid[0]
    bounds = (max(grid[i] - step, floor), min(grid[i] + step, p_max))
    return float(
        minimize_scalar(
            lambda p: float(f(np.array([p]))[0]),
            bounds=bounds,
            method="bounded",
            options={"xatol": 1e-3 * p_pi},
        ).x
    )


@dataclass(frozen=True)
class _Rig:
    """What the procedures share: the mesh, the instruments, fitted resistances (a, c)."""

    mesh: FeedForwardMesh
    measure: Measure
    a: np.ndarray
    c: np.ndarray
    p_max: float
    sweep_points: int
    prior: Calibration | None = None  # with crosstalk: measure with it compensated
    max_current_mA: float = np.inf

    @property
    def floor(self) -> float:
        """Lowest power a sweep uses, mW: with compensation, a heater needs room to be turned
        down for its neighbours' warmth (a heater can only heat)."""
        compensating = self.prior is not None and self.prior.crosstalk is not None
        return 0.15 * self.p_max if compensating else 0.0

    def current(self, channel: int, power_mW: np.ndarray | float) -> np.ndarray:
        # the fitted resistance is off by the DAC's rounding: never ask beyond the limit
        found = current_for_power(power_mW, self.c[channel], self.a[channel])
        return np.minimum(found, self.max_current_mA)

    def read(self, rows: np.ndarray, port: int) -> np.ndarray:
        """Measure, first undoing the known crosstalk among the MZIs' internal heaters: each
        row's heaters are driven so that their phases are what the row asks for alone."""
        if self.prior is not None and self.prior.crosstalk is not None:
            n = self.mesh.n_mzis
            p_pi = self.prior.p_pi_mW[:n]
            drive = rows[:, :n]
            wanted = np.pi * power_for_current(drive, self.c[:n], self.a[:n]) / p_pi
            own = np.linalg.solve(np.eye(n) + self.prior.crosstalk[:n, :n], wanted.T).T
            power = np.clip(own * p_pi / np.pi, 0, self.p_max)  # heaters only heat, within limits
            rows = rows.copy()
            rows[:, :n] = np.minimum(
                current_for_power(power, self.c[:n], self.a[:n]), self.max_current_mA
            )
        return np.asarray(self.measure(rows, port), dtype=float)

    def sweep(self, base: np.ndarray, channel: int, powers: np.ndarray, port: int) -> np.ndarray:
        return self.read(_rows(base, channel, self.current(channel, powers)), port)

    def bias(
        self, k: int, base: np.ndarray, p_pi: float, probe_offset_mW: float = 0.0
    ) -> tuple[float, str]:
        """Bias (rad) of MZI ``k``'s internal heater with the other heaters at ``base``, and the
        method used (see the module docstring). The probe's steps start at ``probe_offset_mW``."""
        m = int(self.mesh.modes[k])
        method, probe = _probe(self.mesh, k)
        if probe is None:
            powers = self.floor + np.linspace(0, 2 * p_pi, self.sweep_points)
            out = m + 1 if method == "direct-bottom" else m
            seen = self.sweep(base, k, powers, m)[:, out]
            fringe = fit_fringe(powers, seen, p_pi_range_mW=(0.8 * p_pi, 1.25 * p_pi))
            # bottom output ~ sin^2(theta) = (1 - cos 2 theta) / 2; top ~ (1 + cos 2 theta) / 2
            return fringe.bias_rad - (np.pi if method == "direct-bottom" else 0.0), method
        # three probe states over a third of the range: contrast, yet little heat on MZI k
        steps = self.current(probe, probe_offset_mW + np.array([0, self.p_max / 6, self.p_max / 3]))

        def sensitivity(powers: np.ndarray) -> np.ndarray:
            """Summed spread of the detectors while the probe's heater is stepped, at each of
            MZI k's ``powers``: one batch of readings, three per power."""
            starts = _rows(base, k, self.current(k, powers))
            rows = np.repeat(starts, len(steps), axis=0)
            rows[:, probe] = np.tile(steps, len(powers))
            seen = self.read(rows, m).reshape(len(powers), len(steps), -1)
            return np.std(seen, axis=1).sum(axis=-1)

        zero = _zero_of(sensitivity, p_pi, self.p_max, self.floor)
        # below: dark at bar (2 theta = 0); above: dark at cross (2 theta = pi)
        return (0.0 if method == "probe-below" else np.pi) - np.pi * zero / p_pi, method


def _park(bias_rad: float, p_pi_mW: float, p_max_mW: float) -> float:
    """Power (mW) that holds an MZI at bar; lifted by a full period (2 P_pi, the same state)
    when that leaves crosstalk compensation more room both ways, down (its neighbours warm it)
    and up (a neighbour nearer its other arm cools its difference, section 5.1 of
    docs/physics.md): the larger of the two powers' smaller margins."""
    power = float(np.mod(-bias_rad, 2 * np.pi) * p_pi_mW / np.pi)
    lifted = power + 2 * p_pi_mW
    room = min(power, p_max_mW - power)
    return lifted if lifted <= p_max_mW and min(lifted, p_max_mW - lifted) > room else power


def peak_power_mW(prior: Calibration, n_mzis: int, p_max_mW: float) -> float:
    """The most heater power :func:`calibrate_mesh` draws at once, mW, by ``prior``'s account
    of the chip (e.g. its factory calibration): every MZI parked at bar as the procedure parks
    it, and one heater at ``p_max_mW``, the top of its sweeps. An estimate, a few per cent
    above what the sweeps draw when ``prior`` is close to the chip."""
    parked = sum(_park(prior.bias_rad[k], prior.p_pi_mW[k], p_max_mW) for k in range(n_mzis))
    return parked + p_max_mW


def _counting(measure: Measure) -> tuple[Measure, list[int]]:
    count = [0]

    def counted(currents: np.ndarray, port: int) -> np.ndarray:
        count[0] += len(currents)
        return np.asarray(measure(currents, port), dtype=float)

    return counted, count


def iv_group(alone_mW: np.ndarray, budget_mW: float) -> int:
    """How many heaters an I-V sweep drives at once within ``budget_mW`` (mW): as many as fill
    :data:`IV_MARGIN` of it when each draws the most any heater draws alone at the top of the
    sweep (``alone_mW``, one per heater); at least one, at most all."""
    alone_mW = np.asarray(alone_mW, dtype=float)
    return max(1, int(min(alone_mW.size, IV_MARGIN * budget_mW // alone_mW.max())))


def fit_resistances(
    voltage: Voltage,
    n_heaters: int,
    max_current_mA: float,
    iv_group: int = IV_GROUP,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Every heater's ``R(I) = a I^2 + c`` from I-V sweeps up to ``max_current_mA``, ``iv_group``
    heaters at a time (so the chip's power budget is never exceeded): ``(a, c)``, ohm/mA^2 and
    ohm, one per heater."""
    sweep = np.linspace(0, max_current_mA, 9)
    volts = np.empty((sweep.size, n_heaters))
    for start in steps("heater I-V sweeps", range(0, n_heaters, iv_group), progress):
        group = slice(start, min(start + iv_group, n_heaters))
        rows = np.zeros((sweep.size, n_heaters))
        rows[:, group] = sweep[:, None]
        volts[:, group] = np.asarray(voltage(rows), dtype=float)[:, group]
    fits = [fit_heater_resistance(sweep, volts[:, h]) for h in range(n_heaters)]
    return np.array([f.a_ohm_per_mA2 for f in fits]), np.array([f.c_ohm for f in fits])


def full_scale_power_mW(a: np.ndarray, c: np.ndarray, max_current_mA: float) -> float:
    """The least power (mW) any heater reaches at ``max_current_mA`` by its fitted
    ``R(I) = a I^2 + c`` (ohm/mA^2, ohm): what every heater can be driven to."""
    return float(np.min(power_for_current(max_current_mA, c, a)))


def calibrate_mesh(
    mesh: FeedForwardMesh,
    measure: Measure,
    voltage: Voltage,
    n_heaters: int,
    max_current_mA: float,
    chip_id: str = "chip",
    nominal_p_pi_mW: float = DEFAULT_P_PI_MW,
    sweep_points: int = 41,
    progress: Progress | None = None,
    prior: Calibration | None = None,
    iv_group: int = IV_GROUP,
) -> SelfCalibration:
    """Calibrate every heater's resistance and every MZI's internal heater (see module doc).

    ``max_current_mA`` bounds every current used; the I-V sweep drives ``iv_group`` heaters at
    a time (fewer under a tight power budget). Heaters whose phase no photodiode can see
    here (input and output phase shifters) keep ``nominal_p_pi_mW`` and bias 0, flagged in
    ``phase_fitted``. ``progress`` (:mod:`photonics.progress`) follows the heater I-V sweeps
    and the MZI fringes. Raises
    :class:`FitError` when a fringe has no contrast or the heater cannot reach a full period
    (P_pi more than half the power at ``max_current_mA``).

    With a ``prior`` calibration that holds a crosstalk matrix (from
    :func:`calibrate_crosstalk`), every measurement is made with that crosstalk compensated,
    so the biases found are the heaters' own and the result keeps the crosstalk matrix.
    """
    counted, count = _counting(measure)
    a, c = fit_resistances(voltage, n_heaters, max_current_mA, iv_group, progress)
    p_max = full_scale_power_mW(a, c, max_current_mA)
    rig = _Rig(mesh, counted, a, c, p_max, sweep_points, prior, max_current_mA)

    base = np.zeros(n_heaters)
    if prior is not None:  # park every MZI at its bar, with headroom for the compensation
        for k in range(mesh.n_mzis):
            base[k] = rig.current(k, _park(prior.bias_rad[k], prior.p_pi_mW[k], p_max))
    p_pi_fit = np.full(n_heaters, nominal_p_pi_mW)
    bias_fit = np.zeros(n_heaters)
    methods = []
    for k in steps("MZI fringes", range(mesh.n_mzis), progress):
        powers = np.linspace(rig.floor, p_max, sweep_points)
        seen = rig.sweep(base, k, powers, int(mesh.modes[k]))
        loudest = int(np.argmax(np.ptp(seen, axis=0)))
        p_pi = fit_fringe(powers, seen[:, loudest]).p_pi_mW
        if 2 * p_pi > p_max:
            raise FitError(
                f"MZI {k}: P_pi = {p_pi:.3g} mW needs more than the {p_max:.3g} mW that "
                f"{max_current_mA} mA gives for a full period"
            )
        bias, method = rig.bias(k, base, p_pi)
        p_pi_fit[k], bias_fit[k] = p_pi, np.mod(bias, 2 * np.pi)
        methods.append(method)
        base[k] = rig.current(k, _park(bias, p_pi, p_max))
    calibration = Calibration(
        chip_id=chip_id,
        p_pi_mW=p_pi_fit,
        bias_rad=bias_fit,
        a_ohm_per_mA2=a,
        c_ohm=c,
        created=datetime.now(UTC).isoformat(),
        phase_fitted=np.arange(n_heaters) < mesh.n_mzis,
        crosstalk=None if prior is None else prior.crosstalk,
    )
    return SelfCalibration(calibration, tuple(methods), count[0])


def probe_of(mesh: FeedForwardMesh, k: int) -> int | None:
    """The probe MZI used to find MZI ``k``'s bias, or None when it is read directly."""
    return _probe(mesh, k)[1]


#: Pairs measured per configuration (the aggressor's distances to the victim's two arms) by
#: :func:`calibrate_crosstalk`: the law is one for the chip, so a few pairs of each shape fix it
#: and a spoiled pair is outvoted (the default 8-port chip has 2 shapes among 40 pairs).
PAIRS_PER_CONFIGURATION = 3


def pairs_of_each_configuration(
    candidates: list[tuple[int, int, float]],
    distance: np.ndarray,
    d_other: np.ndarray,
    per_configuration: int | None,
) -> list[tuple[int, int, float]]:
    """At most ``per_configuration`` of the ``(victim, aggressor, ...)`` pairs with the same
    distances to the victim's two arms (um, to 0.1 um), spread over the list (None: all)."""
    if per_configuration is None:
        return candidates
    groups: dict[tuple[float, float], list[int]] = {}
    for i, (v, a, _) in enumerate(candidates):
        key = (round(float(distance[v, a]), 1), round(float(d_other[v, a]), 1))
        groups.setdefault(key, []).append(i)
    keep = set()
    for members in groups.values():
        spread = np.linspace(0, len(members) - 1, min(per_configuration, len(members)))
        keep.update(members[j] for j in np.rint(spread).astype(int))
    return [candidates[i] for i in sorted(keep)]


def calibrate_crosstalk(
    mesh: FeedForwardMesh,
    measure: Measure,
    calibration: Calibration,
    positions_um: np.ndarray,
    max_current_mA: float,
    radius_um: float = 120.0,
    sweep_points: int = 41,
    progress: Progress | None = None,
    other_arm_um: np.ndarray | None = None,
    pairs_per_configuration: int | None = PAIRS_PER_CONFIGURATION,
) -> Calibration:
    """Thermal crosstalk among the MZIs' internal heaters, by pairwise aggressor/victim sweeps.

    With the mesh at bar, the victim's bias is found as in :func:`calibrate_mesh` with the
    aggressor at its bar power and again heated. The bias methods do not depend on the mesh
    after the victim, so the aggressor's optical state matters only if it carries the victim's
    light: such an aggressor is heated by exactly 2 P_pi (same state) when its current limit
    allows, else the pair is skipped; an aggressor that is the victim's probe has its steps
    raised instead. Of the pairs of internal heaters closer than ``radius_um`` (per the
    layout's ``positions_um``, (H, 2) um), ``pairs_per_configuration`` of each configuration
    (the aggressor's distances to the victim's two arms; None: every pair) are measured, the
    per-pair couplings come from :func:`fit_crosstalk`, and the published distance law fitted
    to them robustly (:func:`fit_crosstalk_model`) gives ``K`` for every pair: heat also leaks
    the victim's light through the warmed mesh around it, which spoils a few pairs. With
    ``other_arm_um`` ((n_mzis, 2) um, each MZI's unheated arm) the law is fitted, and applied,
    to both arms (:func:`~photonics.devices.thermal.differential_crosstalk`). Returns
    ``calibration`` with ``crosstalk`` set (internal heaters only). ``progress``
    (:mod:`photonics.progress`) follows the victims.
    """
    n_mzis, H = mesh.n_mzis, calibration.n_heaters
    a_fit, c_fit = calibration.a_ohm_per_mA2, calibration.c_ohm
    p_max = full_scale_power_mW(a_fit, c_fit, max_current_mA)
    bar_power = (
        np.mod(-calibration.bias_rad[:n_mzis], 2 * np.pi) * calibration.p_pi_mW[:n_mzis] / np.pi
    )
    base = np.zeros(H)
    base[:n_mzis] = current_for_power(bar_power, c_fit[:n_mzis], a_fit[:n_mzis])
    shift = np.zeros((H, H, 1))  # victim phase shift per rad of aggressor phase
    pos = np.asarray(positions_um, dtype=float)[:n_mzis]
    distance = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=-1)
    other = np.zeros((0, 2)) if other_arm_um is None else np.asarray(other_arm_um, float)
    layout = HeaterLayout(pos, other[:n_mzis])
    d_other = np.full(distance.shape, np.inf)
    if len(other):
        d_other = np.linalg.norm(other[:n_mzis, None, :] - pos[None, :, :], axis=-1)
    candidates = []  # (victim, aggressor, aggressor's power step mW): the pairs one can measure
    for v in range(n_mzis):
        m = int(mesh.modes[v])
        on_path = (mesh.columns < mesh.columns[v]) & ((mesh.modes == m) | (mesh.modes + 1 == m))
        probe = probe_of(mesh, v)
        for a in np.flatnonzero((distance[v] <= radius_um) & (np.arange(n_mzis) != v)):
            if on_path[a]:
                swing = 2 * calibration.p_pi_mW[a]
            elif a == probe:
                swing = p_max / 3
            else:
                swing = p_max - bar_power[a]
            if bar_power[a] * (a != probe) + swing <= p_max * (1 + 1e-9):
                candidates.append((v, int(a), float(swing)))
    chosen = pairs_of_each_configuration(candidates, distance, d_other, pairs_per_configuration)
    measured = np.zeros((n_mzis, n_mzis), bool)
    rig = _Rig(mesh, measure, a_fit, c_fit, p_max, sweep_points, None, max_current_mA)
    for v in steps("crosstalk sweeps", sorted({v for v, _, _ in chosen}), progress):
        p_pi, probe = calibration.p_pi_mW[v], probe_of(mesh, v)
        cold, _ = rig.bias(v, base, p_pi)
        for a, swing in ((a, swing) for victim, a, swing in chosen if victim == v):
            if a == probe:
                heated, _ = rig.bias(v, base, p_pi, probe_offset_mW=swing)
            else:
                hot = base.copy()
                hot[a] = rig.current(a, bar_power[a] + swing)
                heated, _ = rig.bias(v, hot, p_pi)
            own_change = np.pi * swing / calibration.p_pi_mW[a]
            shift[v, a, 0] = np.angle(np.exp(1j * (heated - cold))) / own_change
            measured[v, a] = True
    pairs = fit_crosstalk(np.array([1.0]), shift)[:n_mzis, :n_mzis]
    law = fit_crosstalk_model(distance[measured], pairs[measured], radius_um, d_other[measured])
    K = np.zeros((H, H))
    K[:n_mzis, :n_mzis] = differential_crosstalk(layout, law).toarray()
    return replace(calibration, crosstalk=K)


def self_calibrate(
    mesh: FeedForwardMesh,
    measure: Measure,
    voltage: Voltage,
    n_heaters: int,
    max_current_mA: float,
    positions_um: np.ndarray | None = None,
    chip_id: str = "chip",
    progress: Progress | None = None,
    other_arm_um: np.ndarray | None = None,
    iv_group: int = IV_GROUP,
) -> SelfCalibration:
    """The whole procedure: :func:`calibrate_mesh`; then, given the heaters' layout
    ``positions_um`` ((H, 2) um; with ``other_arm_um``, the MZIs' unheated arms),
    :func:`calibrate_crosstalk` and a second :func:`calibrate_mesh` with that crosstalk
    compensated (whose biases no longer carry the neighbours' warmth). ``progress`` follows
    each of them; ``iv_group`` as in :func:`calibrate_mesh`."""

    def mesh_calibration(prior: Calibration | None = None) -> SelfCalibration:
        return calibrate_mesh(
            mesh,
            measure,
            voltage,
            n_heaters,
            max_current_mA,
            chip_id,
            progress=progress,
            prior=prior,
            iv_group=iv_group,
        )

    first = mesh_calibration()
    if positions_um is None:
        return first
    coupled = calibrate_crosstalk(
        mesh,
        measure,
        first.calibration,
        positions_um,
        max_current_mA,
        progress=progress,
        other_arm_um=other_arm_um,
    )
    second = mesh_calibration(coupled)
    return replace(second, measurements=first.measurements + second.measurements)


def route_quality(
    chip: Chip, calibration: Calibration, trials: int = 20, compensate: bool = True
) -> tuple[float, float]:
    """How well ``calibration`` lets ``chip`` route ``trials`` random permutations (seeds
    0 .. trials-1): the worst |routed power - loss-only power| (dB) over all routed outputs, and
    the worst port isolation (dB): an output's signal over the strongest other input reaching it.
    """
    worst_err, worst_iso = 0.0, np.inf
    n = chip.n_ports
    for trial in range(trials):
        perm = Permutation.random(n, np.random.default_rng(trial))
        theta = chip.mesh.route(perm).theta
        current = currents_for_theta(calibration, theta, chip.n_heaters, compensate)
        P = np.abs(chip.transfer(current)) ** 2  # [out, in]
        out = np.array(perm.targets)
        signal = P[out, np.arange(n)]
        error = np.abs(10 * np.log10(signal / chip.ideal_path_power(perm)))
        worst_err = max(worst_err, float(error.max()))
        worst_iso = min(worst_iso, worst_isolation_db(P, perm))
    return worst_err, worst_iso


def worst_isolation_db(power: np.ndarray, perm: Permutation) -> float:
    """Worst port isolation (dB) of a routed permutation, from the power transfer ``power``
    ([..., out, in], e.g. ``|M|^2``; leading axes, e.g. wavelengths, are searched too): each
    routed output's signal over the strongest other input reaching it."""
    n = len(perm.targets)
    rows = np.asarray(power)[..., np.array(perm.targets), :]  # row i: input i's output
    signal = np.diagonal(rows, axis1=-2, axis2=-1)
    leak = np.where(np.eye(n, dtype=bool), 0.0, rows).max(axis=-1)
    return float(np.min(10 * np.log10(signal / leak)))
