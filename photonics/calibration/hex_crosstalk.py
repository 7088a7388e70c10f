"""Thermal crosstalk between the cells of a recirculating mesh, calibrated through the
photodiodes at its switch endpoints after
:func:`~photonics.calibration.hex_selfcal.calibrate_recirculating`.

Method: the pairwise aggressor/victim sweeps of the feed-forward procedure
(:func:`photonics.calibration.selfcal.calibrate_crosstalk`) on routed paths. A victim cell is
measured the way its phase was last measured
(:class:`~photonics.calibration.hex_routes.CellMeasurement`: light routed through it onto one
photodiode, the other calibrated cells parked at bar): its heater is swept over one period with a
neighbouring aggressor cell at its own power and again heated, and the fringe's phase moves by the
pair's coupling times the aggressor's extra phase. An aggressor on the victim's routes is heated by
exactly 2 P_pi, so its state stays; a parked one as far as its current allows (it carries only stray
light). A few pairs of each configuration (distance) fix the chip's distance law
(:func:`~photonics.calibration.fits.fit_crosstalk_model`), which gives ``K`` for every pair
(:func:`~photonics.devices.thermal.differential_crosstalk`).

The self-calibration's biases hold the warmth its neighbours gave each cell while its last
fringe was read (their currents are recorded, :attr:`HexSelfCalibration.fringe_base_mA`); with
``K`` known that warmth is taken out of them, so that a drive which compensates the crosstalk
(:class:`~photonics.calibration.selfcal.CellDrive`) sets every cell as asked.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from photonics.calibration.fits import fit_crosstalk, fit_crosstalk_model
from photonics.calibration.hex_routes import CellMeasurement
from photonics.calibration.hex_selfcal import CellBench, HexSelfCalibration
from photonics.calibration.selfcal import (
    Measure,
    full_scale_power_mW,
    pairs_of_each_configuration,
)
from photonics.chips.calibration import Calibration
from photonics.devices.thermal import HeaterLayout, differential_crosstalk
from photonics.errors import FitError
from photonics.progress import Progress, steps

#: Pairs measured per configuration: in a hexagonal mesh every pair of cells within the
#: crosstalk's reach is one configuration (neighbouring edges of a hexagon, 0.87 unit lengths
#: apart), so a dozen pairs fix the law there and outvote a spoiled one.
HEX_PAIRS_PER_CONFIGURATION = 12
#: Points of a victim's sweep over one period: enough to read its phase to ~1 mrad.
VICTIM_POINTS = 8


def _bench(
    found: HexSelfCalibration, measure: Measure, n_ports: int, max_current_mA: float, budget: float
) -> CellBench:
    cal = found.calibration
    a, c = cal.a_ohm_per_mA2, cal.c_ohm
    p_max = full_scale_power_mW(a, c, max_current_mA)
    return CellBench(
        measure,
        cal.n_heaters,
        n_ports,
        a,
        c,
        p_max,
        max_current_mA,
        cal.p_pi_mW.copy(),
        cal.bias_rad.copy(),
        VICTIM_POINTS,
        budget,
    )


def _victim_bias(bench: CellBench, how: CellMeasurement, base: np.ndarray) -> float:
    """Bias (rad) of ``how.cell`` read on its photodiode with the other heaters at ``base``."""
    p_pi = bench.p_pi[how.cell]
    powers = np.linspace(0, 2 * p_pi, VICTIM_POINTS + 1)[:-1]
    return bench.bias_of(bench.sweep(how, base, powers, (0.8 * p_pi, 1.25 * p_pi)), how)


def calibrate_recirculating_crosstalk(
    found: HexSelfCalibration,
    endpoints_count: int,
    measure: Measure,
    layout: HeaterLayout,
    max_current_mA: float,
    radius_um: float = 120.0,
    pairs_per_configuration: int | None = HEX_PAIRS_PER_CONFIGURATION,
    power_budget_mW: float = np.inf,
    progress: Progress | None = None,
) -> Calibration:
    """``found``'s calibration with the cells' thermal crosstalk ``K`` (``crosstalk``,
    ``[victim, aggressor]``) and its biases freed of the warmth their neighbours gave them
    during the self-calibration (see the module docstring). ``measure`` as for the
    self-calibration (``endpoints_count`` photodiodes); ``layout`` the cells' heater positions
    (um). Of the pairs of trusted cells closer than ``radius_um``, ``pairs_per_configuration`` of
    each configuration (None: all) are measured, every row within ``max_current_mA`` and, by the
    fitted resistances, ``power_budget_mW`` (parked cells are turned off, warmest first, for
    both readings of a pair). :class:`FitError` when fewer than 4 pairs can be measured.
    ``progress`` follows the victims (stage ``"crosstalk sweeps"``)."""
    cal = found.calibration
    n = len(found.how)
    bench = _bench(found, measure, endpoints_count, max_current_mA, power_budget_mW)
    trusted = cal.phase_fitted[:n].copy()
    pos = np.asarray(layout.positions_um, float)[:n]
    distance = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    d_other = np.full(distance.shape, np.inf)
    candidates = []  # (victim, aggressor, power step mW)
    ways, bases = {}, {}
    for v in np.flatnonzero(trusted):
        how = found.how[v]
        if how is None or how.detector < 0:
            continue
        try:
            base = bench.base(how, trusted)
        except FitError:  # its routes alone do not fit the power budget
            continue
        ways[int(v)], bases[int(v)] = how, base
        route = {c for c, _ in how.route}
        own = bench.power(base)
        for a in np.flatnonzero(trusted & (distance[v] <= radius_um) & (np.arange(n) != v)):
            swing = 2 * bench.p_pi[a] if a in route else bench.p_max - own[a]
            if own[a] + swing <= bench.p_max * (1 + 1e-9) and swing > 0:
                candidates.append((int(v), int(a), float(swing)))
    chosen = pairs_of_each_configuration(candidates, distance, d_other, pairs_per_configuration)
    shift = np.zeros((n, n, 1))
    measured = np.zeros((n, n), bool)
    for v in steps("crosstalk sweeps", sorted({v for v, _, _ in chosen}), progress):
        how = ways[v]
        for a, swing in ((a, s) for victim, a, s in chosen if victim == v):
            hot = bases[v].copy()
            hot[a] = bench.current(a, bench.power(hot)[a] + swing)
            try:  # both readings with the same parked cells: only the aggressor differs
                hot = bench.within_budget(hot, [v, a, *(c for c, _ in how.route)])
            except FitError:
                continue
            cold = hot.copy()
            cold[a] = bases[v][a]
            try:
                moved = _victim_bias(bench, how, hot) - _victim_bias(bench, how, cold)
            except FitError:
                continue
            shift[v, a, 0] = np.angle(np.exp(1j * moved)) / (np.pi * swing / bench.p_pi[a])
            measured[v, a] = True
    if measured.sum() < 4:
        raise FitError(
            f"crosstalk: {int(measured.sum())} cell pairs could be measured, the distance law "
            f"needs at least 4"
        )
    pairs = fit_crosstalk(np.array([1.0]), shift)
    law = fit_crosstalk_model(distance[measured], pairs[measured], radius_um, d_other[measured])
    K = np.zeros((cal.n_heaters, cal.n_heaters))
    K[:n, :n] = differential_crosstalk(HeaterLayout(pos), law).toarray()
    # each trusted cell's bias holds K times its neighbours' own phases during its last fringe
    own_phase = np.pi * bench.power(np.nan_to_num(found.fringe_base_mA)) / bench.p_pi
    warmth = np.einsum("va,va->v", K[:n, :n], own_phase[:, :n])
    bias = cal.bias_rad.copy()
    bias[:n] = np.where(trusted, np.mod(bias[:n] - warmth, 2 * np.pi), bias[:n])
    return replace(cal, crosstalk=K, bias_rad=bias)


__all__ = ["calibrate_recirculating_crosstalk"]
