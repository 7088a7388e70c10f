"""Fabrication yield of a switch design, one emulated chip at a time: :func:`run_chip` emulates
chip ``index`` of a :class:`~photonics.fabrication.study.YieldStudy` end to end, as a production
test would (a hexagonal study's chips: :mod:`photonics.fabrication.mesh_yield`):

1. draw the chip (:class:`photonics.chips.chip.Chip`) from the chip's own seed; with output
   rings, lock each to the laser through its photodiode
   (:class:`photonics.calibration.chip_rings.RingLock`) and hold it there;
2. self-calibrate it through its own photodiodes
   (:func:`photonics.calibration.selfcal.calibrate_mesh`, as the firmware's ``CAL:RUN`` does,
   its I-V sweeps grouped within the chip's power budget);
3. route every matching of the workload with that calibration: the all-to-all cover (the
   circle method's ``ports - 1`` perfect matchings,
   :func:`photonics.recirculating.covers.round_robin`) or the study's own matchings (a
   training job's, given by the caller);
4. for each matching (the rings re-centred after the mesh changed, as the firmware's ring
   tracking does), add up the heater power it draws, light each input alone with 1 mW and
   read every photodiode (with their noise): each circuit's insertion loss, and its isolation
   (its own light over the strongest light any other input of the matching sends to its
   output);

and returns a row of plain figures. A chip whose calibration fails to fit is a failed chip
(``calibrated`` False, figures NaN), not an error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from photonics.calibration.chip_rings import RingLock
from photonics.calibration.selfcal import calibrate_mesh, currents_for_theta, iv_group
from photonics.chips.chip import Chip
from photonics.errors import FitError
from photonics.fabrication.mesh_yield import run_mesh_chip
from photonics.fabrication.study import (
    HEXAGONAL,
    PROBE_MW,
    YieldStudy,
    chip_seeds,
    drawn_figures,
    passes,
    unmeasured,
)
from photonics.levels import DARK_MW


def run_chip(study: YieldStudy, index: int) -> dict[str, Any]:
    """Emulate chip ``index`` of ``study`` end to end (see the module docstring); its row:
    ``index``, ``chip_seed``, ``calibrated``, ``readings`` (detector readings the calibration
    took), ``matchings`` measured, ``worst_isolation_db``, ``worst_loss_db``,
    ``worst_excess_loss_db`` (measured loss over the loss-only path loss, the most any circuit
    lost to imperfect calibration), ``worst_power_mW`` (the most heater power a matching
    drew), what was drawn (:data:`DRAWN`: the largest |splitting
    error|, the rms relative deviation of the heaters' P_pi, the lossiest MZI, dB, the
    largest |ring resonance offset|, nm, None without rings) and ``passed``."""
    if study.mesh == HEXAGONAL:
        return run_mesh_chip(study, index)
    chip_seed, rng = chip_seeds(study, index)
    chip = Chip(study.spec(chip_seed))
    n = chip.n_ports
    rings = chip.ring_channels
    row = unmeasured(index, chip_seed) | drawn_figures(chip)
    held = np.zeros(chip.n_heaters)
    lock = RingLock(chip, rng, PROBE_MW) if rings.size else None
    if lock is not None:
        try:
            held = lock.lock(held)
        except FitError:
            return row

    def measure(current: np.ndarray, port: int) -> np.ndarray:
        current = np.array(current, dtype=float)
        current[..., rings] = held[rings]  # the rings stay locked
        return chip.detect(current, np.eye(n)[port], rng)

    limit = chip.spec.max_current_mA
    alone = chip.heaters.power_mW(np.diag(np.full(chip.n_heaters, limit)))  # each heater, mW
    group = iv_group(alone, chip.heaters.power_budget_mW)
    try:
        found = calibrate_mesh(
            chip.mesh, measure, chip.heater_voltage, chip.n_heaters, limit, iv_group=group
        )
    except FitError:
        return row
    isolation, loss, excess, power = np.inf, -np.inf, -np.inf, -np.inf
    probe = np.sqrt(PROBE_MW) * np.eye(n)  # row a: input a lit alone
    matchings = study.workload_matchings()
    for matching in matchings:
        perm = matching.to_permutation()
        lit = np.array([a for a, b in perm.pairs()])  # the inputs the matching uses
        out = np.array([b for a, b in perm.pairs()])
        current = currents_for_theta(found.calibration, chip.mesh.route(perm).theta, chip.n_heaters)
        if lock is not None:
            current[rings] = held[rings]
            current = lock.centre(current)  # the mesh's new heat moved them
        power = max(power, float(chip.heaters.power_mW(current).sum()))
        P = np.maximum(chip.detect(current, probe, rng) / PROBE_MW, DARK_MW)  # [input, output]
        signal = P[lit, out]
        others = ~np.eye(len(lit), dtype=bool)  # [a, b]: input a is not the one meant for out[b]
        leak = np.where(others, P[np.ix_(lit, out)], 0.0).max(axis=0)  # others into out[b]
        ideal = chip.ideal_path_power(perm)[lit]
        isolation = min(isolation, float(10 * np.log10(signal / np.maximum(leak, DARK_MW)).min()))
        loss = max(loss, float(-10 * np.log10(signal).min()))
        excess = max(excess, float(10 * np.log10(ideal / signal).max()))
    measured = row | {
        "calibrated": True,
        "readings": int(found.measurements),
        "matchings": len(matchings),
        "worst_isolation_db": isolation,
        "worst_loss_db": loss,
        "worst_excess_loss_db": excess,
        "worst_power_mW": power,
    }
    return measured | {"passed": passes(study, measured)}
