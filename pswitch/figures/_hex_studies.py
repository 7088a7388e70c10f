"""The runs behind ``docs/calibration-hex.md``: the two benchmarks it quotes (one run of each
per process: ``bench_hex_extinction.py --big`` and item 6 of ``bench_router.py``), and what no
benchmark makes: the thermal crosstalk step on dense chips, the router's prediction against the
chips' field solve, and the ideas tried for 25 dB at 32 endpoints (extinction per state,
parking, search budget, endpoint placement, relabelings). Every run is seeded; each function
returns plain figures (dB, counts, seconds), cached for the process."""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np

from photonics.calibration.hex_crosstalk import calibrate_recirculating_crosstalk
from photonics.calibration.hex_leaks import shared_cells
from photonics.calibration.hex_selfcal import calibrate_recirculating
from photonics.calibration.selfcal import CellDrive
from photonics.chips.calibration import Calibration
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.chips.switch import MeshFabric
from photonics.devices.mzi import state_extinction_db
from photonics.errors import MatchingError, PortError
from photonics.matching import Matching, Permutation
from photonics.recirculating.cover_search import search_factorisation
from photonics.recirculating.covers import all_to_all_cover
from photonics.recirculating.lattices import hexagonal_mesh
from photonics.recirculating.leak_cancel import CellModel, cancel_leaks
from photonics.recirculating.mesh_scattering import link_transmission
from photonics.recirculating.routing import (
    ISOLATION_BUDGET,
    PREDICTION_MARGIN_DB,
    Router,
    RouteResult,
    requests_for,
)
from photonics.recirculating.switch_geometry import (
    hexagonal_switch,
    spread_endpoints,
    switch_6x6,
    switch_32,
)
from photonics.recirculating.waveguide_mesh import BAR, CROSS
from pswitch.figures._make import benchmark, scratch

#: Items 1-5 of the router benchmark shrunk to a minimum: the page quotes item 6 alone.
ROUTER_SMALL = (
    "--matchings", "1", "--dead-k", "1", "--dead-sets", "1", "--dead-matchings", "1",
    "--stride", "720", "--cover-attempts", "1",
)  # fmt: skip
#: The measured goal of a 32-endpoint cover, and what its matchings ask predicted, dB.
GOAL_DB = 25.0
COVER_DB = GOAL_DB + PREDICTION_MARGIN_DB
#: A cover's search budget (cells): ten times a matching's default, as the benchmark's.
COVER_BUDGET = 10 * ISOLATION_BUDGET
#: Random perfect matchings the crosstalk study routes on each chip.
CROSSTALK_MATCHINGS = 10


def true_extinction_db(chip: MeshChip) -> np.ndarray:
    """Each cell's true extinction per state ``(2, n_cells)`` [bar, cross], dB."""
    imp = chip.imperfections
    return state_extinction_db(imp.splitter_error_in, imp.splitter_error_out)


def isolation(
    chip: MeshChip,
    cal: Calibration,
    result: RouteResult,
    directed: bool = False,
    theta: np.ndarray | None = None,
) -> list[tuple[float, float]]:
    """(measured, predicted) isolation, dB, of every circuit of ``result`` on ``chip`` driven
    by ``cal``: a circuit's power over the strongest other lit endpoint reaching its output
    (the light an output sends and gets back is return loss, left out). ``directed``: each
    path carries light from its first port only; ``theta``: the cells' settings (rad) in
    place of the result's."""
    at = {p: i for i, p in enumerate(chip.endpoints)}
    theta = result.theta() if theta is None else theta
    current = np.zeros(chip.n_heaters)
    current[: chip.n_cells] = CellDrive.of(cal, chip.n_cells).currents(theta)
    P = np.abs(chip.transfer(current)) ** 2  # [out, in], endpoints in order
    senders = [at[q.ports[0]] for q in result.paths] if directed else []
    if not directed:
        senders = [at[p] for q in result.paths for p in q.ports]
    out = []
    for path in result.paths:
        a, b = (at[p] for p in path.ports)
        for src, dst in [(a, b)] if directed else [(a, b), (b, a)]:
            leak = max(P[dst, x] for x in senders if x not in (src, dst))
            out.append((float(10 * np.log10(P[dst, src] / leak)), path.isolation_db))
    return out


# --- the benchmarks ---------------------------------------------------------------------------


def extinction() -> dict[str, Any]:
    """``bench_hex_extinction.py --big`` (three 8-endpoint and three 32-endpoint chips): its
    JSON object."""
    return benchmark("hex_extinction", "--big")


def chips(kind: str) -> list[dict[str, Any]]:
    """The extinction benchmark's rows of the ``kind`` ("8" or "32") endpoint chips."""
    return [r for r in extinction()["chips"] if r["chip"].startswith(f"{kind}-endpoint")]


@functools.cache
def folder() -> str:
    """Where the router benchmark draws its picture (kept until the process ends)."""
    return scratch("pswitch-figures-hex-")


def router() -> dict[str, Any]:
    """``bench_router.py`` with its three self-calibrated chips and its geometry study (items
    1-5 shrunk): its JSON object; its pictures of the covers' measured against predicted
    isolation and of the design curve in :func:`folder`."""
    return benchmark(
        "router",
        *ROUTER_SMALL,
        "--isolation-plot",
        f"{folder()}/hex-isolation.png",
        "--design-plot",
        f"{folder()}/hex-design.png",
    )


# --- thermal crosstalk --------------------------------------------------------------------------


def _counted(chip: MeshChip, count: list[int]):
    """The chip's photodiodes (1 mW on one endpoint, noise drawn from the chip's seed), counting
    the readings into ``count[0]``."""
    rng = np.random.default_rng(chip.spec.seed)

    def measure(rows: np.ndarray, port: int) -> np.ndarray:
        count[0] += len(np.atleast_2d(rows))
        return chip.detect(rows, np.eye(chip.n_ports)[port], rng=rng)

    return measure


def _worst_each(chip: MeshChip, fabric: MeshFabric, cal: Calibration) -> list[float]:
    """Worst measured isolation of each of the random perfect matchings ``fabric`` routes."""
    worst = []
    for seed in range(CROSSTALK_MATCHINGS):
        try:
            matching = Matching.random(chip.n_ports, np.random.default_rng(seed))
            result = fabric.router.route(requests_for(matching, fabric.endpoints))
        except (MatchingError, PortError):  # an endpoint on a dead cell
            continue
        if result.ok:
            worst.append(min(m for m, _ in isolation(chip, cal, result)))
    return worst


@functools.cache
def crosstalk_chip(unit_length_um: float) -> dict[str, Any]:
    """A self-calibrated 8-endpoint chip of ``unit_length_um`` (seed 0; the switch's
    ``hexagonal_switch(8)`` at its default 811 um, else ``hexagonal_mesh(4, 4)`` with 2
    endpoints a side), with the crosstalk step when its cells have neighbours within reach:
    the geometry, the calibrations' bias errors and the matchings' isolation, routed as the
    switch routes them (its dead cells left out, its extinctions) and driven by the
    self-calibration, by it with the crosstalk step and by the factory calibration."""
    if unit_length_um == 811:
        mesh, ends = hexagonal_switch(8)
    else:
        mesh = hexagonal_mesh(4, 4, unit_length_um=unit_length_um)
        ends = spread_endpoints(mesh, 2)
    chip = MeshChip(mesh, ends, MeshChipSpec(seed=0))
    count = [0]
    measure = _counted(chip, count)
    found = calibrate_recirculating(
        mesh, ends, measure, chip.heater_voltage, chip.n_heaters, chip.spec.max_current_mA
    )
    readings = count[0]
    n = chip.n_cells
    pos = np.asarray(chip.heater_layout.positions_um, float)[:n]
    apart = np.linalg.norm(pos[:, None] - pos[None], axis=-1) + np.eye(n) * 1e9
    true_k = chip.crosstalk.toarray()[:n, :n]
    row: dict[str, Any] = {
        "unit_length_um": unit_length_um,
        "cells": n,
        "apart_um": float(apart.min()),
        "k": float(true_k.max()),
        "dead": found.dead,
        "lost_endpoints": len({int(c) for c in mesh.edge_ports[ends] // 4} & set(found.dead)),
        "selfcal_readings": readings,
    }
    cals = {"selfcal": found.calibration, "factory": chip.factory_calibration()}
    if true_k.max() > 1e-3:
        t0 = time.perf_counter()
        cals["crosstalk"] = calibrate_recirculating_crosstalk(
            found, chip.n_ports, measure, chip.heater_layout, chip.spec.max_current_mA
        )
        row["crosstalk_s"] = time.perf_counter() - t0
        row["crosstalk_readings"] = count[0] - readings
        near = true_k > 1e-3
        row["k_error"] = float(
            np.abs(cals["crosstalk"].crosstalk[:n, :n][near] / true_k[near] - 1).max()
        )
    fabric = MeshFabric(Router(mesh), ends).with_dead_cells(found.dead, found.extinction_db)
    fitted = found.calibration.phase_fitted[:n]
    for name, cal in cals.items():
        error = np.abs(np.angle(np.exp(1j * (cal.bias_rad[:n] - chip.heaters.bias_rad[:n]))))
        worst = _worst_each(chip, fabric, cal)
        row[name] = {
            "bias_median_rad": float(np.median(error[fitted])),
            "bias_worst_rad": float(error[fitted].max()),
            "routed": len(worst),
            "worst_db": min(worst, default=float("nan")),
            "median_db": float(np.median(worst)) if worst else float("nan"),
        }
    return row


# --- the prediction against the field solve ---------------------------------------------------


def _bound_cases(seed: int, matchings: int, permutations: int) -> list[tuple[MeshChip, list, bool]]:
    """Chip ``seed``'s requests: ``matchings`` random 32-endpoint matchings and
    ``permutations`` random 6x6 permutations (the same for every chip)."""
    mesh32, ends32 = switch_32()
    mesh6, inputs, outputs = switch_6x6()
    chip32 = MeshChip(mesh32, ends32, MeshChipSpec(seed=seed))
    chip6 = MeshChip(mesh6, inputs + outputs, MeshChipSpec(seed=seed))
    rng = np.random.default_rng(seed)
    cases = [
        (chip32, requests_for(Matching.random(32, rng), ends32), False) for _ in range(matchings)
    ]
    for _ in range(permutations):
        perm = Permutation(list(rng.permutation(6)))
        cases.append((chip6, requests_for(perm, (inputs, outputs)), True))
    return cases


@functools.cache
def prediction_bound(chips: int = 3, matchings: int = 30, permutations: int = 180) -> dict:
    """Measured minus predicted isolation (dB) of the circuits routed on sampled chips
    (``MeshChipSpec(seed=s)``, driven by their true calibration), the router told each cell's
    true extinction per state (``per_state``) or 35 dB for every cell (``flat``); per switch
    (``32``, ``6x6``): the circuits, those sharing a cell (a finite prediction), the worst
    error over them, and the worst over those predicted below 40 dB."""
    out: dict[str, Any] = {}
    for told in ("per_state", "flat"):
        got: dict[str, list[tuple[float, float, float]]] = {"32": [], "6x6": []}
        for seed in range(chips):
            for chip, pairs, directed in _bound_cases(seed, matchings, permutations):
                ext = true_extinction_db(chip) if told == "per_state" else 35.0
                result = Router(chip.mesh, extinction_db=ext).route(pairs, directed=directed)
                if result.ok:
                    cal = chip.factory_calibration()
                    floor = 2 * np.nanmin(true_extinction_db(chip)) - 20
                    got["6x6" if directed else "32"] += [
                        (m, p, floor) for m, p in isolation(chip, cal, result, directed)
                    ]
        out[told] = {kind: _errors(pairs) for kind, pairs in got.items()}
    return out


def _errors(pairs: list[tuple[float, float, float]]) -> dict[str, Any]:
    shared = [(m, p, f) for m, p, f in pairs if np.isfinite(p)]
    return {
        "circuits": len(pairs),
        "shared": len(shared),
        "worst_db": min(m - p for m, p, _ in shared),
        "bound_db": min(m - min(p, f) for m, p, f in pairs),
        "below_40_db": min((m - p for m, p, _ in shared if p < 40), default=float("nan")),
        "beyond_margin": sum(m - min(p, f) < -PREDICTION_MARGIN_DB for m, p, f in pairs),
        "floor_db": min(f for _, _, f in pairs),
    }


# --- ideas for 25 dB at 32 endpoints ----------------------------------------------------------


def _chip32(seed: int, margin: float | None = None) -> MeshChip:
    mesh, ends = switch_32() if margin is None else switch_32(margin=margin)
    return MeshChip(mesh, ends, MeshChipSpec(seed=seed))


@functools.cache
def extinction_spread(seed: int = 0) -> dict[str, Any]:
    """Chip ``seed``'s true per-state extinctions (dB): the cell whose two states differ most,
    each state's lowest and median."""
    ext = true_extinction_db(_chip32(seed))
    cell = int(np.argmax(np.abs(ext[BAR] - ext[CROSS])))
    return {
        "cell": cell,
        "bar_db": float(ext[BAR, cell]),
        "cross_db": float(ext[CROSS, cell]),
        "lowest_db": (float(ext[BAR].min()), float(ext[CROSS].min())),
        "median_db": float(np.median(ext)),
    }


def _cover_router(chip: MeshChip, budget: int = COVER_BUDGET) -> Router:
    return Router(
        chip.mesh,
        extinction_db=true_extinction_db(chip),
        isolation_target_db=COVER_DB,
        isolation_budget=budget,
    )


@functools.cache
def cover(seed: int, margin: float, attempts: int = 1) -> dict[str, Any]:
    """The cover asking ``COVER_DB`` predicted of chip ``seed`` at endpoint ``margin``, routed on
    its true per-state extinctions (``attempts`` relabelings) and measured driven by its true
    calibration: size, pairs left unroutable, worst measured isolation, seconds."""
    chip = _chip32(seed, margin)
    t0 = time.perf_counter()
    found = all_to_all_cover(_cover_router(chip), chip.endpoints, attempts, COVER_DB)
    seconds = time.perf_counter() - t0
    cal = chip.factory_calibration()
    worst = [min(m for m, _ in isolation(chip, cal, r)) for r in found.results]
    return {
        "size": found.size,
        "unroutable": len(found.unroutable),
        "worst_db": min(worst),
        "below_goal": sum(w < GOAL_DB for w in worst),
        "seconds": seconds,
    }


@functools.cache
def routable(margin: float, matchings: int) -> int:
    """How many of ``matchings`` random perfect matchings (seeds 0, 1, ...) the switch's
    default router routes at endpoint ``margin``."""
    mesh, ends = switch_32(margin=margin)
    router = Router(mesh)
    done = 0
    for seed in range(matchings):
        pairs = requests_for(Matching.random(32, np.random.default_rng(seed)), ends)
        done += router.route(pairs).ok
    return done


@functools.cache
def budget(seed: int = 0, matchings: int = 12) -> dict[str, Any]:
    """The median predicted worst isolation (dB) of ``matchings`` random perfect matchings on
    chip ``seed``'s true extinctions, routed asking ``COVER_DB`` with the default search
    budget and with the cover's; the seconds a matching takes with each (median)."""
    chip = _chip32(seed)
    out = {}
    for name, cells in (("default", ISOLATION_BUDGET), ("cover", COVER_BUDGET)):
        router = _cover_router(chip, cells)
        predicted, seconds = [], []
        for i in range(matchings):
            pairs = requests_for(Matching.random(32, np.random.default_rng(i)), chip.endpoints)
            t0 = time.perf_counter()
            result = router.route(pairs)
            seconds.append(time.perf_counter() - t0)
            predicted.append(result.isolation_db if result.ok else -np.inf)
        out[name] = {"median_db": float(np.median(predicted)), "seconds": seconds}
    return out


@functools.cache
def parking(chips: int = 3, matchings: int = 6) -> dict[str, float]:
    """How far parking every unused cell at bar, or at cross, instead of the router's choice
    moves the worst measured isolation of ``matchings`` random perfect matchings on each of
    ``chips`` chips (true extinctions, true calibration): the largest move, dB, and the number
    of matchings."""
    moved, n = 0.0, 0
    for seed in range(chips):
        chip = _chip32(seed)
        router, cal = _cover_router(chip, ISOLATION_BUDGET), chip.factory_calibration()
        for i in range(matchings):
            pairs = requests_for(Matching.random(32, np.random.default_rng(i)), chip.endpoints)
            result = router.route(pairs)
            if not result.ok:
                continue
            n += 1
            used = sorted({c for path in result.paths for c in path.cells})
            idle = np.setdiff1d(np.arange(chip.n_cells), used)
            base = min(m for m, _ in isolation(chip, cal, result))
            for state in (0.0, np.pi / 2):  # bar, cross
                theta = result.theta()
                theta[idle] = state
                worst = min(m for m, _ in isolation(chip, cal, result, theta=theta))
                moved = max(moved, abs(worst - base))
    return {"moved_db": moved, "matchings": n}


@functools.cache
def true_cancel(seed: int = 0, worst: int = 4, routes: int = 1500) -> dict[str, list[float]]:
    """What leak cancellation could gain knowing the chip: on a model of chip ``seed``'s true
    couplers, trims of the shared cells alone and of every cell on the paths, for the
    ``worst`` matchings (predicted) of the factorisation searched for isolation on its true
    extinctions; each gain (dB) measured on the chip driven by its true calibration."""
    chip = _chip32(seed)
    cal = chip.factory_calibration()
    searched = search_factorisation(_cover_router(chip), chip.endpoints, 1, routes)
    link = link_transmission(chip.mesh.unit_length_um, 1550.0, chip.spec.waveguide_loss_db_per_cm)
    model = CellModel(chip.mesh, chip.endpoints, chip.imperfections, link)
    out: dict[str, list[float]] = {"shared": [], "path": []}
    for result in sorted(searched.cover.results, key=lambda r: r.isolation_db)[:worst]:
        base = min(m for m, _ in isolation(chip, cal, result))
        for name, cells in (("shared", shared_cells(result)), ("path", None)):
            trims = cancel_leaks(model, result, cells).trims
            theta = result.theta() + trims
            out[name].append(min(m for m, _ in isolation(chip, cal, result, theta=theta)) - base)
    return out
