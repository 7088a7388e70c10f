"""Self-calibrated 32-endpoint chips for ``bench_router.py``: what the router's matchings measure
on sampled :class:`~photonics.chips.mesh_chip.MeshChip` instances of ``switch_32`` (mesh_9x9) after
:func:`~photonics.calibration.hex_selfcal.calibrate_recirculating`, side by side with the same chips
on their factory calibration (the baseline: every heater's true P_pi and bias).

Per chip (``MeshChipSpec(seed=s)``, s = 0 .. seeds - 1): the self-calibration through the
endpoints' photodiodes (timed: ``hex_selfcal_s``, the median over chips; the physics of the
emulated chip is part of it), a router that leaves its dead cells out, then

- the optimal all-to-all cover (``all_to_all_cover`` defaults: 31 matchings) measured with the
  self-calibration and with the factory calibration: worst port isolation of each
  (``hex_selfcal_isolation_db``, ``hex_factory_isolation_db``);
- the 1-factorisation searched for isolation (``search_factorisation``, ``SEARCH_ROUTES``
  routings; the optimal cover): its worst isolation predicted, measured, and measured once
  each matching's leaks are cancelled on the chip (``cover_optimal_predicted_db``,
  ``cover_optimal_worst_db_plain``, ``cover_optimal_worst_db_measured``), the gains of the
  cancellation (``cancel_gain_db_median``; on the circle method's ``CIRCLE_CANCELLED`` worst
  matchings ``cancel_gain_circle_db_median``) and its readings;
- the cover asking every matching for ``COVER_ISOLATION_DB`` predicted (25 dB plus the
  prediction's margin), built from that factorisation and routed on the calibration's
  per-state extinctions (the chip's true ones when the calibration has none) with
  ``COVER_BUDGET``; a matching predicted short that measures within ``RESCUE_DB`` of the goal
  is cancelled and kept whole when it then measures ``RESCUE_MARGIN_DB`` above it
  (``cover_25db_rescued``). Measured with the self-calibration: its size
  (``cover_25db_measured_size``), worst measured isolation (``cover_25db_measured_worst_db``),
  how many matchings measure below 25 dB, the worst and the median measured minus predicted
  isolation of any path of the matchings set as routed (``prediction_error_db_max``,
  ``prediction_error_db_median``; a matching kept whole by its trims is a measurement, not a
  bound) and the worst return loss (``cover_25db_return_loss_db``);
- the endpoints lost to a dead cell of their own (``lost_endpoints``; the router leaves dead
  cells out, as the switch does) and the pairs no matching could route (``unroutable_pairs``).

Each chip's row (``hex_selfcal_chips``) also names its dead cells (``dead``) and counts its
photodiode readings (``readings``).

``--cache DIR`` (``bench_router.py``; here the second argument) loads the self-calibrations
from ``DIR/seedN.npz`` instead of running them; ``hex_selfcal_s`` is then the cached run's.
``hex_selfcal_s_32`` is measured here, never cached: the median over the chips calibrated in
this run (None when all came from the cache; goal <= 20 s on an idle 2-core machine).

Isolation of a circuit ``src -> out``: its power over the strongest other input of the matching
reaching ``out`` (all endpoints of the matching lit one at a time, the field solve of the chip).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

from photonics.calibration.hex_leaks import Cancellation, cancel_measured, chip_model
from photonics.calibration.hex_selfcal import calibrate_recirculating
from photonics.calibration.selfcal import CellDrive
from photonics.chips.calibration import Calibration
from photonics.chips.emulated_chip import REFERENCE_WAVELENGTH_NM
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.devices.mzi import state_extinction_db
from photonics.fabrication.study import PROBE_MW
from photonics.recirculating.cover_search import search_factorisation
from photonics.recirculating.covers import all_to_all_cover
from photonics.recirculating.mesh_scattering import link_transmission
from photonics.recirculating.routing import (
    DEFAULT_EXTINCTION_DB,
    ISOLATION_BUDGET,
    PREDICTION_MARGIN_DB,
    Router,
    RouteResult,
)
from photonics.recirculating.switch_geometry import switch_32

#: The measured goal, dB.
GOAL_DB = 25.0
#: Predicted isolation asked of every matching of the isolation cover, dB: the goal plus the
#: prediction's stated margin.
COVER_ISOLATION_DB = GOAL_DB + PREDICTION_MARGIN_DB
#: Isolation-aware routing budget of the cover's router (cells searched): ten times the
#: default, since a cover is planned once (it may search longer than one matching may).
COVER_BUDGET = 10 * ISOLATION_BUDGET
#: Routings the cover search may spend a chip (about 0.04 s each).
SEARCH_ROUTES = 1500
QUICK_SEARCH_ROUTES = 60
#: A matching of the isolation cover predicted short of it is cancelled when it measures
#: within this of the goal (dB), and kept whole when it then measures this margin above it.
RESCUE_DB = 3.0
RESCUE_MARGIN_DB = 0.2
#: Matchings of the circle method's plain cover (the worst predicted) whose leaks are also
#: cancelled, a chip.
CIRCLE_CANCELLED = 6


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def measured_isolation(
    chip: MeshChip, drive: CellDrive, result: RouteResult, trims: np.ndarray | float = 0.0
) -> list[tuple[float, float]]:
    """(measured, predicted) isolation, dB, of every circuit of a routed matching (both
    directions of each path) on ``chip`` driven by ``drive``, its cells' angles trimmed by
    ``trims`` (rad; leak cancellation)."""
    index = {p: i for i, p in enumerate(chip.endpoints)}
    current = np.zeros(chip.n_heaters)
    current[: chip.n_cells] = drive.currents(result.theta() + trims)
    P = np.abs(chip.transfer(current)) ** 2  # [out, in]
    lit = [index[p] for path in result.paths for p in path.ports]
    out = []
    for path in result.paths:
        a, b = (index[p] for p in path.ports)
        for src, dst in ((a, b), (b, a)):
            # light dst itself sends and gets back is return loss, not another port's
            # crosstalk (as in routing.verify)
            leak = max((P[dst, x] for x in lit if x not in (src, dst)), default=0.0)
            measured = 10 * np.log10(P[dst, src] / leak) if leak > 0 else np.inf
            out.append((float(measured), path.isolation_db))
    return out


def _worst(chip: MeshChip, cal: Calibration, results: tuple[RouteResult, ...]) -> list[float]:
    drive = CellDrive.of(cal, chip.n_cells)
    return [min(m for m, _ in measured_isolation(chip, drive, r)) for r in results]


def _calibrate(
    chip: MeshChip, cache: str | None
) -> tuple[Calibration, np.ndarray | None, tuple[int, ...], float, int]:
    """(calibration, per-state extinction (2, n_cells) or None, dead cells, seconds, readings)
    of ``chip``: from ``cache`` (``seedN.npz``) when it holds this chip, else by running the
    self-calibration, which is then written there."""
    seed = chip.spec.seed
    path = os.path.join(cache, f"seed{seed}.npz") if cache else None
    if path and os.path.exists(path):
        d = np.load(path)
        if list(d["endpoints"]) != list(chip.endpoints):
            raise SystemExit(f"{path} calibrates other endpoints than switch_32's")
        cal = Calibration(
            chip_id=f"cache-seed{seed}",
            created="2026-01-01T00:00:00+00:00",
            p_pi_mW=d["p_pi_mW"],
            bias_rad=d["bias_rad"],
            a_ohm_per_mA2=d["a_ohm_per_mA2"],
            c_ohm=d["c_ohm"],
            phase_fitted=d["phase_fitted"],
        )
        dead = tuple(int(c) for c in d["dead"])
        return cal, d["extinction_db"], dead, float(d["selfcal_s"]), int(d["readings"])
    rng = np.random.default_rng(seed)

    def measure(currents: np.ndarray, port: int) -> np.ndarray:
        return chip.detect(currents, np.eye(chip.n_ports)[port], rng=rng)

    t0 = time.perf_counter()
    found = calibrate_recirculating(
        chip.mesh,
        chip.endpoints,
        measure,
        chip.heater_voltage,
        chip.n_heaters,
        chip.spec.max_current_mA,
    )
    seconds = time.perf_counter() - t0
    ext = np.asarray(found.extinction_db)
    per_state = ext if ext.shape == (2, chip.n_cells) else None
    if path:
        cal = found.calibration
        os.makedirs(cache, exist_ok=True)
        np.savez(
            path,
            endpoints=np.asarray(chip.endpoints),
            p_pi_mW=cal.p_pi_mW,
            bias_rad=cal.bias_rad,
            a_ohm_per_mA2=cal.a_ohm_per_mA2,
            c_ohm=cal.c_ohm,
            phase_fitted=cal.phase_fitted,
            dead=np.asarray(found.dead, dtype=np.int64),
            extinction_db=ext,
            selfcal_s=seconds,
            readings=found.measurements,
        )
    return found.calibration, per_state, found.dead, seconds, found.measurements


def pairs_of(result: RouteResult) -> tuple:
    """A routed matching's edge-port pairs, sorted: the key it is known by."""
    return tuple(sorted(tuple(sorted(p.ports)) for p in result.paths))


class Canceller:
    """Leak cancellation of matchings on one self-calibrated chip
    (:func:`~photonics.calibration.hex_leaks.cancel_measured`: dithered readings through the
    chip's photodiodes, a model of the chip from the calibration's per-state extinctions and the
    design's links and cell loss), each matching once (by its pairs)."""

    def __init__(self, chip: MeshChip, drive: CellDrive, extinction: np.ndarray, seed: int) -> None:
        self.chip, self.drive = chip, drive
        link = link_transmission(
            chip.mesh.unit_length_um, REFERENCE_WAVELENGTH_NM, chip.spec.waveguide_loss_db_per_cm
        )
        self.model = chip_model(chip.mesh, chip.endpoints, extinction, chip.spec.loss_db, link)
        self.rng = np.random.default_rng(seed)
        self.noise = chip.spec.noise_floor_mW / PROBE_MW  # per unit launched
        self.done: dict[tuple, Cancellation] = {}
        self.seconds = 0.0

    def measure(self, theta: np.ndarray) -> np.ndarray:
        """``P[out, in]`` per unit launched, every endpoint lit in turn with 1 mW."""
        current = np.zeros(self.chip.n_heaters)
        current[: self.chip.n_cells] = self.drive.currents(theta)
        probe = np.sqrt(PROBE_MW) * np.eye(self.chip.n_ports)
        return self.chip.detect(current, probe, rng=self.rng).T / PROBE_MW

    def __call__(self, result: RouteResult) -> Cancellation:
        key = pairs_of(result)
        if key not in self.done:
            t0 = time.perf_counter()
            self.done[key] = cancel_measured(self.model, result, self.measure, self.noise)
            self.seconds += time.perf_counter() - t0
        return self.done[key]


def chip_row(seed: int, cache: str | None = None, quick: bool = False) -> dict[str, Any]:
    """The figures of one chip (``MeshChipSpec(seed=seed)``), its (measured, predicted) pairs
    under ``"pairs"``; the self-calibration from ``cache`` when it holds it (see
    :func:`_calibrate`). ``quick``: a short search at the default routing budget, leaks
    cancelled in the searched cover's worst matching only, none kept whole by cancelling."""
    mesh, ends = switch_32()
    chip = MeshChip(mesh, ends, MeshChipSpec(seed=seed))
    _log(f"  chip {seed}: self-calibration")
    cal, extinction, dead, seconds, readings = _calibrate(chip, cache)
    source = "self-calibration"
    if extinction is None:  # a calibration without per-state figures: the chip's true ones
        imp, source = chip.imperfections, "true (the calibration has none per state)"
        extinction = state_extinction_db(imp.splitter_error_in, imp.splitter_error_out)
    # an endpoint whose own cell the calibration could not fit is lost, as on the switch: the
    # router leaves the cell out and the covers report its pairs unroutable
    ends_cells = set((mesh.edge_ports[ends] // 4).tolist())
    plain = all_to_all_cover(Router(mesh, dead), ends)
    factory = chip.factory_calibration()
    _log(f"  chip {seed}: {len(dead)} dead cells, {seconds:.0f} s; cover search")
    router = Router(
        mesh,
        dead,
        extinction_db=np.nan_to_num(extinction, nan=DEFAULT_EXTINCTION_DB),  # NaN: dead, unused
        isolation_target_db=COVER_ISOLATION_DB,
        isolation_budget=ISOLATION_BUDGET if quick else COVER_BUDGET,  # quick: a smoke run
    )
    t0 = time.perf_counter()
    searched = search_factorisation(
        router, ends, restarts=1, max_routes=QUICK_SEARCH_ROUTES if quick else SEARCH_ROUTES
    )
    search_s = time.perf_counter() - t0
    drive = CellDrive.of(cal, chip.n_cells)
    cancel = Canceller(chip, drive, extinction, seed)
    _log(f"  chip {seed}: searched ({searched.worst_db:.1f} dB predicted); cancelling leaks")
    optimal = searched.cover.results
    if quick:
        optimal = tuple(sorted(optimal, key=lambda r: r.isolation_db)[:1])
    plain_each = [min(m for m, _ in measured_isolation(chip, drive, r)) for r in optimal]
    cancelled = [cancel(r) for r in optimal]
    after_each = [
        min(m for m, _ in measured_isolation(chip, drive, r, c.trims))
        for r, c in zip(optimal, cancelled, strict=True)
    ]
    # the circle method's cover, routed plainly: its worst matchings' leaks add from several
    # shared cells, where cancelling them has something to work with
    worst_plain = sorted(plain.results, key=lambda r: r.isolation_db)[
        : 0 if quick else CIRCLE_CANCELLED
    ]
    circle_gains = [cancel(r).gain_db for r in worst_plain]
    _log(f"  chip {seed}: the cover asking {COVER_ISOLATION_DB} dB")
    rescued: list[tuple] = []

    def rescue(result: RouteResult) -> bool:
        # worth cancelling only when it could reach the goal: measured within RESCUE_DB of it
        plain_db = min(m for m, _ in measured_isolation(chip, drive, result))
        ok = (
            plain_db >= GOAL_DB - RESCUE_DB
            and cancel(result).after_db >= GOAL_DB + RESCUE_MARGIN_DB
        )
        if ok:
            rescued.append(pairs_of(result))
        return ok

    iso = all_to_all_cover(
        router,
        ends,
        1,
        COVER_ISOLATION_DB,
        rounds=searched.cover.matchings,
        rescue=None if quick else rescue,
    )

    def trims_of(result: RouteResult) -> np.ndarray | float:
        key = pairs_of(result)
        return cancel.done[key].trims if key in rescued else 0.0

    each = [measured_isolation(chip, drive, r, trims_of(r)) for r in iso.results]
    worst_each = [min(m for m, _ in m) for m in each]
    # the prediction bounds the matchings set as routed; one kept whole by its trims is a
    # measurement (the trims trade its circuits' leaks against each other)
    plain_set = [
        m for m, r in zip(each, iso.results, strict=True) if isinstance(trims_of(r), float)
    ]
    pairs = [p for m in plain_set for p in m]
    errors = [m - p for m, p in pairs if np.isfinite(p)]
    row = {
        "seed": seed,
        "selfcal_s": seconds,
        "from_cache": bool(cache and os.path.exists(os.path.join(cache, f"seed{seed}.npz"))),
        "extinction": source,
        "dead_cells": len(dead),
        "dead": [int(c) for c in dead],
        "lost_endpoints": len(ends_cells & set(dead)),
        "unroutable_pairs": len(iso.unroutable),
        "readings": readings,
        "plain_cover_size": plain.size,
        "selfcal_isolation_db": min(_worst(chip, cal, plain.results)),
        "factory_isolation_db": min(_worst(chip, factory, plain.results)),
        "search_s": search_s,
        "search_routes": searched.routes,
        "cover_optimal_size": searched.cover.size,
        "cancelled_matchings": len(optimal),
        "cover_optimal_predicted_db": searched.worst_db,
        "cover_optimal_worst_db_plain": min(plain_each),
        "cover_optimal_worst_db_measured": min(after_each),
        "cancel_gains_db": [c.gain_db for c in cancelled],
        "cancel_gains_circle_db": circle_gains,
        "cancel_readings": [c.readings for c in cancelled],
        "cancel_s": cancel.seconds,
        "cover_25db_size": iso.size,
        "cover_25db_rescued": len([r for r in iso.results if not isinstance(trims_of(r), float)]),
        "cover_25db_worst_db": min(worst_each),
        "cover_25db_below_goal": int(sum(w < GOAL_DB for w in worst_each)),
        "cover_25db_return_loss_db": min(return_loss_db(chip, drive, r) for r in iso.results),
        "prediction_error_db_min": min(errors),
        "prediction_error_db_median": float(np.median(errors)),
    }
    _log(f"  chip {seed}: {row}")
    return row | {"pairs": pairs}


def return_loss_db(chip: MeshChip, drive: CellDrive, result: RouteResult) -> float:
    """Worst return loss of a routed matching's endpoints on ``chip``, dB: the light an
    endpoint sends and gets back."""
    index = {p: i for i, p in enumerate(chip.endpoints)}
    current = np.zeros(chip.n_heaters)
    current[: chip.n_cells] = drive.currents(result.theta())
    P = np.abs(chip.transfer(current)) ** 2
    back = max(P[index[p], index[p]] for path in result.paths for p in path.ports)
    return float(-10 * np.log10(back))


def bench_selfcal(seeds: int, cache: str | None = None, quick: bool = False) -> dict[str, Any]:
    """The figures of the module docstring over chips 0 .. seeds - 1."""
    return combine([chip_row(seed, cache, quick) for seed in range(seeds)])


def combine(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON keys of :func:`bench_selfcal` from the chips' rows (:func:`chip_row`)."""
    return {
        "hex_selfcal_s": float(np.median([r["selfcal_s"] for r in rows])),
        # measured here, without a cache (None when every chip came from the cache)
        "hex_selfcal_s_32": (
            float(np.median(fresh))
            if (fresh := [r["selfcal_s"] for r in rows if not r["from_cache"]])
            else None
        ),
        "hex_selfcal_isolation_db": min(r["selfcal_isolation_db"] for r in rows),
        "hex_factory_isolation_db": min(r["factory_isolation_db"] for r in rows),
        "cover_optimal_worst_db_measured": min(r["cover_optimal_worst_db_measured"] for r in rows),
        "cover_optimal_worst_db_plain": min(r["cover_optimal_worst_db_plain"] for r in rows),
        "cover_optimal_predicted_db": min(r["cover_optimal_predicted_db"] for r in rows),
        "cover_optimal_size": max(r["cover_optimal_size"] for r in rows),
        "cover_search_s": float(np.median([r["search_s"] for r in rows])),
        "cancel_gain_db_median": float(np.median([g for r in rows for g in r["cancel_gains_db"]])),
        "cancel_gain_db_max": float(max(g for r in rows for g in r["cancel_gains_db"])),
        "cancel_gain_circle_db_median": (
            float(np.median(circle))
            if (circle := [g for r in rows for g in r["cancel_gains_circle_db"]])
            else None
        ),
        "cancel_readings_median": float(np.median([k for r in rows for k in r["cancel_readings"]])),
        "cover_25db_rescued": sum(r["cover_25db_rescued"] for r in rows),
        "cover_25db_measured_size": max(r["cover_25db_size"] for r in rows),
        "cover_25db_measured_worst_db": min(r["cover_25db_worst_db"] for r in rows),
        "cover_25db_measured_below_goal": sum(r["cover_25db_below_goal"] for r in rows),
        "prediction_error_db_max": min(r["prediction_error_db_min"] for r in rows),
        "prediction_error_db_median": float(
            np.median([r["prediction_error_db_median"] for r in rows])
        ),
        "cover_25db_return_loss_db": min(r["cover_25db_return_loss_db"] for r in rows),
        "lost_endpoints": sum(r["lost_endpoints"] for r in rows),
        "unroutable_pairs": sum(r["unroutable_pairs"] for r in rows),
        "hex_selfcal_chips": [{k: v for k, v in r.items() if k != "pairs"} for r in rows],
        "isolation_pairs": [r["pairs"] for r in rows],
    }


def print_selfcal(figures: dict[str, Any]) -> None:
    """The table of the self-calibrated chips: each beside its factory calibration."""
    print("\nself-calibrated 32-endpoint chips (baseline: the same chip's factory calibration)")
    print(
        f"{'chip':>4} {'selfcal s':>9} {'dead':>5} {'lost':>4} {'iso selfcal':>11} "
        f"{'iso factory':>11} {'diff dB':>7} {'cover25':>7} {'worst dB':>8} {'<25':>4} "
        f"{'meas-pred':>9}"
    )
    for r in figures["hex_selfcal_chips"]:
        diff = r["selfcal_isolation_db"] - r["factory_isolation_db"]
        print(
            f"{r['seed']:>4} {r['selfcal_s']:>9.1f} {r['dead_cells']:>5} {r['lost_endpoints']:>4} "
            f"{r['selfcal_isolation_db']:>11.1f} {r['factory_isolation_db']:>11.1f} {diff:>7.2f} "
            f"{r['cover_25db_size']:>7} {r['cover_25db_worst_db']:>8.1f} "
            f"{r['cover_25db_below_goal']:>4} {r['prediction_error_db_min']:>9.2f}"
        )


def plot_isolation(pairs: list[list[tuple[float, float]]], path: str) -> None:
    """Measured vs predicted isolation of every circuit of the isolation covers, one colour a
    chip, as a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 5))
    finite = [p for chip in pairs for _, p in chip if np.isfinite(p)]
    lo, hi = 15.0, max(finite, default=60.0) + 2
    for seed, chip in enumerate(pairs):
        m, p = np.array([(min(m, hi + 10), min(p, hi)) for m, p in chip]).T
        ax.scatter(p, m, s=6, alpha=0.5, label=f"chip {seed}")
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="measured = predicted")
    ax.plot([lo, hi], [lo - 1, hi - 1], "k:", lw=0.8, label="1 dB below")
    ax.axhline(GOAL_DB, color="r", lw=0.8, label=f"{GOAL_DB:g} dB")
    ax.set_xlabel("predicted isolation, dB (router; no shared cell: top edge)")
    ax.set_ylabel("measured isolation, dB (self-calibrated chip; clipped at the top)")
    ax.set_title(f"32-endpoint covers at >= {COVER_ISOLATION_DB} dB predicted")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":  # one chip: python hex_selfcal_bench.py SEED [CACHE_DIR]
    import json

    print(json.dumps(chip_row(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)))
