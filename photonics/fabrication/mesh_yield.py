"""One chip of a yield study of the hexagonal (recirculating) switch, end to end.

The counterpart of :func:`photonics.fabrication.chip_yield.run_chip` for
``YieldStudy(mesh="hexagonal")``: the switch of
:func:`photonics.recirculating.switch_geometry.hexagonal_switch` (``ports`` endpoints on the
smallest honeycomb that holds them), as its production test would treat it:

1. draw the chip (:class:`photonics.chips.mesh_chip.MeshChip`) from the chip's own seed, with the
   study's coupler, heater and loss spreads;
2. self-calibrate it through its endpoints' photodiodes
   (:func:`photonics.calibration.hex_selfcal.calibrate_recirculating`, as the firmware's ``CAL:RUN``
   does); a cell it cannot fit is dead and the router leaves it out; a dead endpoint cell takes its
   endpoint out of the switch, and the chip fails (``calibrated`` False, as for a fit that fails);
3. route the workload on the live cells: the all-to-all cover
   (:func:`photonics.recirculating.covers.all_to_all_cover`, splitting what does not route: the
   row's ``matchings`` says how many it took), or the study's own matchings; with
   ``search_routes``, the 1-factorisation searched for isolation
   (:func:`~photonics.recirculating.cover_search.search_factorisation`, its measured worst
   ``optimal_worst_isolation_db``) and the cover whose every matching is predicted at the
   study's ``min_isolation_db`` (plus the prediction's margin) built from it; a chip on which a pair
   of the workload cannot be routed (the dead cells cut it off) fails, measured on the rest;
4. for each routed matching, light each endpoint alone with 1 mW and read every photodiode:
   each circuit's isolation (both directions: both ends send), insertion loss and its excess
   over the loss-only path (:meth:`~photonics.chips.mesh_chip.MeshChip.ideal_path_loss_db`), and the
   heater power the matching draws.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from photonics.calibration.hex_selfcal import calibrate_recirculating
from photonics.calibration.selfcal import CellDrive
from photonics.chips.mesh_chip import MeshChip
from photonics.chips.switch import MeshFabric
from photonics.errors import FitError
from photonics.fabrication.study import (
    PROBE_MW,
    YieldStudy,
    chip_seeds,
    drawn_figures,
    passes,
    unmeasured,
)
from photonics.levels import DARK_MW
from photonics.recirculating.cover_search import search_factorisation
from photonics.recirculating.covers import all_to_all_cover
from photonics.recirculating.routing import (
    ISOLATION_BUDGET,
    PREDICTION_MARGIN_DB,
    Router,
    RouteResult,
    requests_for,
)
from photonics.recirculating.switch_geometry import hexagonal_switch

#: Isolation-aware routing budget (cells searched) of a study that searches its cover: ten
#: times the default, as for the benchmark's covers (a cover is planned once).
SEARCH_BUDGET = 10 * ISOLATION_BUDGET


def run_mesh_chip(study: YieldStudy, index: int) -> dict[str, Any]:
    """Chip ``index`` of a hexagonal ``study`` (module docstring): the row of
    :func:`photonics.fabrication.chip_yield.run_chip`, the same keys."""
    chip_seed, rng = chip_seeds(study, index)
    mesh, ends = hexagonal_switch(study.ports, study.mesh_size, study.endpoint_margin)
    chip = MeshChip(mesh, ends, study.spec(chip_seed))
    row = unmeasured(index, chip_seed) | drawn_figures(chip)
    n = chip.n_ports
    probe = np.sqrt(PROBE_MW) * np.eye(n)

    def measure(current: np.ndarray, port: int) -> np.ndarray:
        return chip.detect(current, probe[port], rng=rng)

    try:
        found = calibrate_recirculating(
            mesh, ends, measure, chip.heater_voltage, chip.n_heaters, chip.spec.max_current_mA
        )
    except FitError:
        return row
    row["readings"] = int(found.measurements)
    if set(found.dead) & set((mesh.edge_ports[ends] // 4).tolist()):
        return row  # an endpoint's own cell could not be fitted: the port is lost
    # as the firmware after CAL:RUN: dead cells left out, the measured extinctions predicted with
    ext = found.calibration.extinction_db
    goal = study.min_isolation_db + PREDICTION_MARGIN_DB
    base = (
        Router(mesh, isolation_target_db=goal, isolation_budget=SEARCH_BUDGET)
        if study.search_routes
        else Router(mesh)
    )
    router = MeshFabric(base, ends).with_dead_cells(found.dead, ext).router
    optimal: list = []
    if study.matchings:
        results = [router.route(requests_for(m, ends)) for m in study.workload_matchings()]
        complete = all(r.ok for r in results)
        results = [r for r in results if r.ok]
    elif study.search_routes:
        # the 1-factorisation searched for isolation, then the cover whose every matching is
        # predicted at the spec's isolation (with the prediction's margin)
        searched = search_factorisation(router, ends, restarts=1, max_routes=study.search_routes)
        optimal = [r for r in searched.cover.results if r.ok]
        cover = all_to_all_cover(router, ends, 1, goal, rounds=searched.cover.matchings)
        results, complete = list(cover.results), not cover.unroutable
    else:
        cover = all_to_all_cover(router, ends)
        results, complete = list(cover.results), not cover.unroutable
    if not results:
        return row | {"calibrated": True}
    drive = CellDrive.of(found.calibration, chip.n_cells)
    isolation, loss, excess, power = _measure(chip, drive, results, rng)
    best = _measure(chip, drive, optimal, rng)[0] if optimal else None
    measured = row | {
        "calibrated": True,
        "matchings": len(results),
        "worst_isolation_db": isolation,
        "worst_loss_db": loss,
        "worst_excess_loss_db": excess,
        "worst_power_mW": power,
        "optimal_worst_isolation_db": best,
    }
    return measured | {"passed": complete and passes(study, measured)}


def _measure(
    chip: MeshChip, drive: CellDrive, results: list[RouteResult], rng: np.random.Generator
) -> tuple[float, float, float, float]:
    """Worst isolation, insertion loss and its excess (dB) of every circuit of the routed
    ``results`` and the most heater power (mW) one draws, each endpoint lit alone with
    :data:`PROBE_MW` and every photodiode read."""
    probe = np.sqrt(PROBE_MW) * np.eye(chip.n_ports)
    endpoint = {p: i for i, p in enumerate(chip.endpoints)}
    isolation, loss, excess, power = math.inf, -math.inf, -math.inf, -math.inf
    for result in results:
        current = np.zeros(chip.n_heaters)
        current[: chip.n_cells] = drive.currents(result.theta())
        power = max(power, float(chip.heaters.power_mW(current).sum()))
        lit = sorted(endpoint[p] for path in result.paths for p in path.ports)
        P = np.maximum(chip.detect(current, probe[lit], rng=rng) / PROBE_MW, DARK_MW)
        row_of = {src: k for k, src in enumerate(lit)}  # P[row_of[src], out]
        for path in result.paths:
            a, b = (endpoint[p] for p in path.ports)
            ideal = chip.ideal_path_loss_db(path)
            for src, out in ((a, b), (b, a)):
                signal = P[row_of[src], out]
                leak = max(P[row_of[x], out] for x in lit if x != src)
                isolation = min(isolation, float(10 * np.log10(signal / leak)))
                loss = max(loss, float(-10 * np.log10(signal)))
                excess = max(excess, float(-10 * np.log10(signal)) - ideal)
    return isolation, loss, excess, power
