"""The figures of ``docs/physics.md``: the numbers its prose and tables read from runs of the
models (a seeded draw of cells, the crosstalk the firmware predicts, the band, the driver
classes), the self-calibrations of sections 5.1-5.2 with their isolation and hardware time, the
reconfiguration the emulated power meter logs (``docs/reconfiguration.png``) and the ring lock
of ``benchmarks/bench_physics.py``.

The constants the page states (and the ``python`` blocks, which the test suite runs) are not
figures: only what a run prints or computes is. Every run here is seeded; the hardware times
are the driver's modelled time, not this machine's, so nothing here is a timing.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import numpy as np

from pswitch.figures._make import ROOT, Figure, benchmark, scratch, table, value

PAGE = "docs/physics.md"
#: Random matchings a calibrated switch is judged by (seeds 0 .. MATCHINGS - 1).
MATCHINGS = 20
#: The dense chip of the examples: 6 ports on a 60 x 20 um grid, seed 2.
DENSE = (6, 2, (60.0, 20.0))
DEMO = ("demo",)  # as the README's transcript runs it: one run serves both
DEMO_8 = ("demo", "--ports", "8", "--seed", "3", "--no-plots")


# --- models: no chip is calibrated -----------------------------------------------------------


def _cell_extinction() -> tuple[float, float]:
    """A seeded draw of 100 000 cells by ``MZIImperfections.sample``: their median extinction
    (dB) and the fraction below the published lowest, 32 dB."""
    from photonics.devices.mzi import MZIImperfections, extinction_ratio_db

    cells = MZIImperfections.sample(100_000, np.random.default_rng(0))
    extinction = extinction_ratio_db(cells.splitter_error_in, cells.splitter_error_out)
    return float(np.median(extinction)), float(np.mean(extinction < 32.0))


def _predicted(ports: int, pitch_um: tuple[float, float] | None) -> Callable[[], str]:
    """A value's maker: the crosstalk phase the firmware predicts for a chip, rad."""

    def make() -> str:
        from photonics.chips.chip import Chip, ChipSpec
        from photonics.devices.thermal import predicted_crosstalk_rad

        x, y = pitch_um if pitch_um else (None, None)
        chip = Chip(ChipSpec(n_ports=ports, pitch_x_um=x, pitch_y_um=y))
        rad = predicted_crosstalk_rad(chip.heater_layout, chip.mesh.n_mzis)
        return f"{rad:.2g} rad"

    return make


def _near_pairs() -> str:
    """The default chip's near pairs (MZI heaters within the 120 um sweep radius, each way) and
    their configurations (the aggressor's distances to the victim's two arms)."""
    from photonics.chips.chip import Chip, ChipSpec

    chip = Chip(ChipSpec())
    n = chip.mesh.n_mzis
    pos, other = chip.heater_positions_um[:n], chip.other_arms_um
    distance = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    d_other = np.linalg.norm(other[:, None] - pos[None], axis=-1)
    near = (distance <= 120.0) & ~np.eye(n, dtype=bool)
    shapes = {
        (round(d, 6), round(o, 6)) for d, o in zip(distance[near], d_other[near], strict=True)
    }
    return f"{len(shapes)} configurations among its {int(near.sum())} near pairs"


def _band_extinction() -> str:
    """The worst extinction over 1530-1565 nm of a cell of 35 dB at 1550 nm, dB."""
    from photonics.devices.dispersion import band, band_extinction_db
    from photonics.devices.mzi import MZIImperfections

    return f"{band_extinction_db(MZIImperfections.typical(), band(1530.0, 1565.0, 8)):.1f} dB"


def _column_pitches() -> str:
    """The drawn geometry's column pitch at 16 and 32 Clements ports, um."""
    from photonics import ClementsMesh
    from photonics.feedforward.chip_geometry import drawn_geometry

    pitch = {n: drawn_geometry(ClementsMesh(n)).column_pitch_um for n in (16, 32)}
    return f"{pitch[16]:.0f} um at 16, {pitch[32]:.0f} um at 32"


def _rewrite(driver: str, cells: int = 278) -> str:
    """The time ``HeaterWriteModel`` gives writing every one of ``cells`` cells with a driver
    class, and their settling, ms."""
    from firmware.electronics import driver_class
    from firmware.fabric import HeaterWriteModel

    ms = 1e3 * HeaterWriteModel(driver_class(driver)).seconds(cells)
    return f"{ms:.2f} ms" if ms < 1 else f"{ms:.0f} ms"


# --- section 5.1: self-calibration on a chip, with and without its crosstalk -----------------


@functools.cache
def _selfcal(
    ports: int, seed: int, pitch_um: tuple[float, float] | None, both_arms: bool, full: bool = True
) -> dict[str, float]:
    """A chip self-calibrated through noisy photodiodes (seed 5), of its mesh alone and (when
    ``full``) then with its crosstalk, as ``tests/photonics/chips/test_chip.py`` does: the worst
    isolation of each over 20 random permutations (``route_quality``, dB), and the largest
    relative error of the latter's MZI P_pi."""
    from photonics.calibration.selfcal import calibrate_mesh, route_quality, self_calibrate
    from photonics.chips.chip import Chip, ChipSpec

    x, y = pitch_um if pitch_um else (None, None)
    chip = Chip(ChipSpec(n_ports=ports, seed=seed, pitch_x_um=x, pitch_y_um=y, both_arms=both_arms))
    rng = np.random.default_rng(5)

    def measure(current: np.ndarray, port: int) -> np.ndarray:
        return chip.detect(current, np.eye(chip.n_ports)[port], rng)

    args = (chip.mesh, measure, chip.heater_voltage, chip.n_heaters, chip.spec.max_current_mA)
    mesh_only = calibrate_mesh(*args).calibration
    found = {"mesh_only_db": route_quality(chip, mesh_only)[1]}
    if not full:
        return found
    layout = {"positions_um": chip.heater_positions_um, "other_arm_um": chip.other_arms_um}
    cal, k = self_calibrate(*args, **layout).calibration, chip.mesh.n_mzis
    found["crosstalk_db"] = route_quality(chip, cal)[1]
    found["p_pi_error"] = float(np.abs(cal.p_pi_mW[:k] / chip.heaters.p_pi_mW[:k] - 1).max())
    return found


def _lift(ports: int, seed: int, pitch_um: tuple[float, float] | None, both: bool) -> str:
    """The worst isolation of :func:`_selfcal`'s chip, mesh alone to crosstalk calibrated."""
    r = _selfcal(ports, seed, pitch_um, both)
    return f"{r['mesh_only_db']:.1f} to {r['crosstalk_db']:.1f} dB"


# --- section 5.2: CAL:RUN on the emulated switch ---------------------------------------------


@contextmanager
def _every_pair(on: bool) -> Iterator[None]:
    """CAL:RUN measuring every near pair instead of ``PAIRS_PER_CONFIGURATION`` of each
    configuration (when ``on``)."""
    from photonics.calibration import selfcal

    if not on:
        yield
        return
    every = functools.partial(selfcal.calibrate_crosstalk, pairs_per_configuration=None)
    with mock.patch.object(selfcal, "calibrate_crosstalk", every):
        yield


@functools.cache
def _cal_run(
    ports: int, seed: int, pitch_um: tuple[float, float] | None = None, every_pair: bool = False
) -> dict[str, Any]:
    """``Switch.emulated(calibrated=False).calibrate()``: the hardware time the driver models
    in all (s) and from the start to each stage's start (``(stage, s)``: the passes' I-V sweeps
    and fringes and the crosstalk sweeps), the worst isolation of 20 random matchings by the
    chip's own transfer (dB), and the largest error of the crosstalk it fitted."""
    from firmware.sdk import Switch
    from photonics.calibration.selfcal import worst_isolation_db
    from photonics.matching import Matching

    switch = Switch.emulated(ports=ports, seed=seed, pitch_um=pitch_um, calibrated=False)
    controller = switch.transport.controller
    driver, stages = controller.driver, []
    start = driver.elapsed_s

    def progress(stage: str, done: int, total: int) -> None:
        if done == 0:
            stages.append((stage, driver.elapsed_s - start))

    controller.progress = progress
    with _every_pair(every_pair):
        hardware = switch.calibrate(save=False)
    controller.progress = None
    chip, worst = driver.chip, np.inf
    for trial in range(MATCHINGS):
        switch.connect(Matching.random(ports, np.random.default_rng(trial)))
        P = np.abs(chip.transfer(chip.heaters.quantise(driver.currents()))) ** 2
        worst = min(worst, worst_isolation_db(P, controller.matching.to_permutation()))
    n, fitted = chip.mesh.n_mzis, controller.calibration.crosstalk
    error = np.nan if fitted is None else np.abs(fitted - chip.crosstalk.toarray())[:n, :n].max()
    return {"hardware_s": hardware, "stages": stages, "isolation_db": worst, "fit_error": error}


def _passes(run: dict[str, Any]) -> tuple[float, float, float]:
    """A CAL:RUN's hardware time in its first pass over the mesh, its crosstalk sweeps and its
    second pass, s."""
    names = [stage for stage, _ in run["stages"]]
    sweeps = names.index("crosstalk sweeps")  # then the second pass's first stage
    first, second = run["stages"][sweeps][1], run["stages"][sweeps + 1][1]
    return first, second - first, run["hardware_s"] - second


def _stages() -> str:
    first, sweeps, second = _passes(_cal_run(8, 0))
    return (
        f"{first:.1f} s for the first pass over the mesh, {sweeps:.1f} s for the crosstalk "
        f"sweeps and {second:.1f} s for the second pass"
    )


def _every_pair_time() -> str:
    """The crosstalk sweeps measuring every near pair, and the whole CAL:RUN then, s."""
    run = _cal_run(8, 0, every_pair=True)
    return f"{_passes(run)[1]:.1f} s of sweeps, {run['hardware_s']:.1f} s in all"


def _sixteen() -> str:
    """CAL:RUN's hardware time on 16 ports over its first pass alone."""
    run = _cal_run(16, 0)
    return f"{run['hardware_s'] / _passes(run)[0]:.1f} times"


def _fit_error() -> str:
    """The largest error of the crosstalk CAL:RUN fitted on the default chip, seeds 0-2."""
    return f"{max(_cal_run(8, seed)['fit_error'] for seed in (0, 1, 2)):.0e}".replace("e-0", "e-")


def _demo_row(label: str, argv: tuple[str, ...]) -> list[str]:
    """A row of the table from ``pswitch demo``'s output: its calibration and all-to-all."""
    matchings = value(argv, r"all-to-all: (\d+) matchings applied")()
    worst = value(argv, r"\(worst ([\d.]+) dB")()
    hardware = float(value(argv, r"^\s+calibrate\s+[\d.]+ s\s+([\d.]+) s")())
    return [
        f"{label}: all-to-all, {matchings} matchings measured",
        f"{worst} dB",
        f"{hardware:.1f} s",
    ]


def _calibration_rows() -> list[list[str]]:
    """Section 5.2's table: each chip's worst isolation and CAL:RUN's hardware time."""

    def row(label: str, run: dict[str, Any]) -> list[str]:
        return [label, f"{run['isolation_db']:.1f} dB", f"{run['hardware_s']:.1f} s"]

    rows = [row(f"default 8-port, seed {seed}", _cal_run(8, seed)) for seed in (0, 1, 2)]
    rows.append(row("dense 6-port, 60 x 20 um, seed 2", _cal_run(*DENSE)))
    rows.append(_demo_row("`pswitch demo --ports 8 --seed 3`", DEMO_8))
    rows.append(_demo_row("`pswitch demo` (16 ports, seed 0)", DEMO))
    return rows


# --- section 7: the bench's power meter logs a reconfiguration -------------------------------


def _bench_module(name: str) -> ModuleType:
    """A script of ``benchmarks/`` imported as a module (its neighbours importable too)."""
    folder = str(ROOT / "benchmarks")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)


@functools.cache
def _reconfiguration() -> tuple[dict[str, Any], dict[str, Any], str]:
    """``bench_physics``'s two logged reconfigurations (every channel at once, logged at 1 us;
    a channel every 0.5 ms, logged at 10 us) and the folder its picture of them is drawn in."""
    bench = _bench_module("bench_physics")
    fast = bench.reconfiguration(0.0, 1e-6, 200)
    slow = bench.reconfiguration(0.5e-3, 1e-5, 6000)
    folder = scratch()
    bench.plot(str(Path(folder) / "reconfiguration.png"), fast, slow)
    return fast, slow, folder


def _logged(fmt: str) -> Callable[[], str]:
    """A value's maker of the logged reconfigurations: ``fmt`` of the all-at-once run's
    ``settled`` (us to 1 % of the swing, measured), ``model`` (us, from the time constants),
    ``leak`` (dB, the worst wrong port during it) and the sequential run's ``through`` (ms)."""

    def make() -> str:
        fast, slow, _ = _reconfiguration()
        return fmt.format(
            settled=1e6 * fast["settle_s_measured"],
            model=1e6 * fast["settle_s_model"],
            leak=fast["transient_worst_leak_db"],
            through=1e3 * slow["reconfigure_s_reported"],
        )

    return make


def _physics(fmt: str) -> Callable[[], str]:
    """A value's maker of ``benchmarks/bench_physics.py``'s figures (the README's run)."""
    return lambda: fmt.format(**benchmark("physics"))


def _router_cells() -> str:
    """The fewest and most cells a path of the 6x6 switch crosses, over 20 random
    permutations (seeds 0-19) routed as section 4 routes one."""
    from photonics import Permutation
    from photonics.recirculating.routing import Router, requests_for
    from photonics.recirculating.switch_geometry import switch_6x6

    mesh, inputs, outputs = switch_6x6()
    router, lengths = Router(mesh), []
    for seed in range(MATCHINGS):
        order = np.random.default_rng(seed).permutation(6)
        result = router.route(requests_for(Permutation(order), (inputs, outputs)), directed=True)
        lengths += [len(path.cells) for path in result.paths]
    return f"{min(lengths)}-{max(lengths)}"


# --- the figures -----------------------------------------------------------------------------


def _v(make: Callable[[], str], slow: bool = False, **files: Any) -> Figure:
    """A figure of this page (``files``: its ``files`` and ``folder``)."""
    return Figure(PAGE, make, slow=slow, **files)


RECONFIGURATION_PNG = {
    "files": {"docs/reconfiguration.png": "reconfiguration.png"},
    "folder": lambda: _reconfiguration()[2],
}
FIGURES: dict[str, Figure] = {
    "physics-cells-median": _v(lambda: f"{_cell_extinction()[0]:.1f} dB"),
    "physics-cells-below": _v(lambda: f"{100 * _cell_extinction()[1]:.0f} %"),
    "physics-51-default": _v(lambda: _lift(8, 0, None, True), slow=True),
    "physics-51-default-one-arm": _v(
        lambda: f"{_selfcal(8, 0, None, False, full=False)['mesh_only_db']:.1f} dB", slow=True
    ),
    "physics-51-dense": _v(lambda: _lift(6, 2, (60.0, 20.0), True), slow=True),
    "physics-51-dense-one-arm": _v(lambda: _lift(6, 2, (60.0, 20.0), False), slow=True),
    "physics-predicted-default": _v(_predicted(8, None)),
    "physics-predicted-dense": _v(_predicted(6, (60.0, 20.0))),
    "physics-predicted-sparse": _v(_predicted(8, (300.0, 127.0))),
    "physics-near-pairs": _v(_near_pairs),
    "physics-fit-error": _v(_fit_error, slow=True),
    "physics-calibration": _v(
        table(("chip", "worst isolation", "`CAL:RUN` hardware time"), _calibration_rows),
        slow=True,
    ),
    "physics-cal-stages": _v(_stages, slow=True),
    "physics-cal-every-pair": _v(_every_pair_time, slow=True),
    "physics-cal-16": _v(_sixteen, slow=True),
    "physics-ring-drift": _v(_physics("{ring_lock_drift_pm_max:.2f} pm"), slow=True),
    "physics-reconfiguration": _v(
        _logged("{settled:.0f} us to 1 % of the swing; from the time constants {model:.1f} us"),
        slow=True,
        **RECONFIGURATION_PNG,
    ),
    "physics-reconfiguration-leak": _v(_logged("{leak:.0f} dB"), slow=True),
    "physics-reconfiguration-through": _v(_logged("{through:.0f} ms"), slow=True),
    "physics-band-extinction": _v(_band_extinction),
    "physics-column-pitches": _v(_column_pitches),
    "physics-parallel-278": _v(lambda: _rewrite("parallel")),
    "physics-bench-278": _v(lambda: _rewrite("bench")),
    "physics-router-cells": _v(_router_cells, slow=True),
    "physics-p-pi-both": _v(
        lambda: f"{100 * _selfcal(8, 0, None, True)['p_pi_error']:.1f} %", slow=True
    ),
    "physics-pads": _v(lambda: str(benchmark("physics")["layout"]["pads"]), slow=True),
}
