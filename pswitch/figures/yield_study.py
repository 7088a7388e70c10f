"""The figures of ``docs/yield.md``: the yield studies' transcripts and the numbers the prose
reads from them, the sweep's picture, the rings and hexagonal runs, and what a study costs
(``benchmarks/bench_yield.py``).

Every study here is a Monte Carlo run over many chips on a local Dask cluster, so every figure
but the chip's geometry is slow. Each runs on 2 workers whatever the machine (the rows are the
same with any number of workers; nothing printed depends on it), and one study at a time: they
run one after the other in the process that makes them.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pswitch.figures._make import ALL, Figure, benchmark, pswitch, table, timed, transcript

PAGE = "docs/yield.md"
WORKERS = ("--workers", "2")
STUDY = ("yield", "--chips", "40", "--coupler-sigma", "0.02", *WORKERS)
SWEEP = (
    "yield", "--chips", "12", "--sweep", "coupler_sigma=0.005,0.01,0.02",
    "--sweep", "pitch_y_um=60,140", *WORKERS, "--output", "sweep.parquet",
    "--plot", "yield_sweep.png",
)  # fmt: skip
TORUS = (
    "yield", "--ports", "8", "--chips", "20", "--workload", "torus", "--max-power-mw", "700",
    *WORKERS, "--output", "torus.parquet",
)  # fmt: skip
RINGS = (
    "yield", "--ports", "8", "--chips", "4", "--output-rings", "--ring-sigma-nm", "2",
    *WORKERS, "--output", "rings.parquet",
)  # fmt: skip
#: The same chips as RINGS without their rings: what the rings add.
NO_RINGS = ("yield", "--ports", "8", "--chips", "4", *WORKERS, "--output", "no-rings.parquet")
HEX = ("yield", "--mesh", "hexagonal", "--ports", "6", "--chips", "6", *WORKERS)
HEX4 = ("yield", "--mesh", "hexagonal", "--ports", "4", "--chips", "40", "--seed", "3", *WORKERS)
#: The bench_yield figures that are ratios of times (masked in the check).
TIMED_ROWS = ("chips_per_s_per_core", "scaling_2_workers", "overhead_vs_serial")


@functools.cache
def _run(argv: tuple[str, ...]) -> tuple[str, str, float]:
    """``pswitch *argv`` (run once per process): its output, its folder and how long it took,
    s. Every figure of this page runs its study through here, so the first one times it."""
    start = time.perf_counter()
    out, folder = pswitch(*argv)
    return out, folder, time.perf_counter() - start


def _rows(argv: tuple[str, ...]) -> list[dict[str, Any]]:
    """The rows ``pswitch *argv`` wrote (its ``--output`` folder), by chip index."""
    from pswitch.yield_study import read_rows

    output = argv[argv.index("--output") + 1] if "--output" in argv else "pswitch-yield.parquet"
    return read_rows(Path(_run(argv)[1]) / output)


def _found(argv: tuple[str, ...], pattern: str) -> str:
    """The first group of ``pattern`` (a line of its own) in the output of ``pswitch *argv``."""
    found = re.search(pattern, _run(argv)[0], re.MULTILINE)
    if found is None:
        raise RuntimeError(f"{pattern!r} is not in the output of pswitch {' '.join(argv)}")
    return found.group(1)


def _value(argv: tuple[str, ...], pattern: str, fmt: str = "{}") -> Callable[[], str]:
    """A value's maker: the first group of ``pattern`` in the output, formatted by ``fmt``."""
    return lambda: fmt.format(_found(argv, pattern))


def _percentile(label: str, column: int) -> str:
    """A pattern of column ``column`` (0: p5, 1: p50, 2: p95) of the summary line ``label``."""
    return rf"^  {re.escape(label)}\s+" + r"\S+\s+" * column + r"(\S+)"


def _correlation(drawn: str) -> str:
    """A pattern of the rank correlation of ``drawn`` with the worst isolation."""
    return rf"^    {drawn}\s+([+-]\d\.\d\d)\s"


def _point(sigma: str, pitch: str) -> str:
    """A pattern of the yield of a sweep point (coupler sigma, pitch), in per cent."""
    return rf"^\s+{re.escape(sigma)}\s+{pitch}\s+\d+ / \d+\s+([\d.]+) %"


def _transcript(argv: tuple[str, ...]) -> Callable[[], str]:
    """A transcript of the study, timed by :func:`_run` when it is the first figure made."""
    make = transcript(argv)

    def run() -> str:
        _run(argv)
        return make()

    return run


def _took(argv: tuple[str, ...]) -> Callable[[], str]:
    """A value's maker: how long the study took here, stamped (a timing alone)."""
    return timed(lambda: _run(argv)[2])


# --- the rings: 4 chips with rings beside the same chips without ---------------------------


def _ring_figures() -> dict[str, float]:
    """What the rings do to the same 4 chips: chips whose every ring locked, the worst offset
    drawn (nm), chips passing with and without rings, and the least and most drop loss (dB)
    and heater power (mW) the rings add to a chip's worst matching."""
    rings, plain = _rows(RINGS), _rows(NO_RINGS)
    loss = [r["worst_loss_db"] - p["worst_loss_db"] for r, p in zip(rings, plain, strict=True)]
    power = [r["worst_power_mW"] - p["worst_power_mW"] for r, p in zip(rings, plain, strict=True)]
    return {
        "locked": sum(r["calibrated"] for r in rings),
        "offset_nm": max(r["max_ring_offset_nm"] for r in rings),
        "passed": sum(r["passed"] for r in rings),
        "passed_without": sum(p["passed"] for p in plain),
        "loss_low": min(loss),
        "loss_high": max(loss),
        "power_low": min(power),
        "power_high": max(power),
    }


def _rings(fmt: str) -> Callable[[], str]:
    return lambda: fmt.format(**_ring_figures())


# --- the torus: why chips fail -------------------------------------------------------------


def _torus_failures(what: str) -> Callable[[], str]:
    """How many torus chips isolate some circuit below the spec (``isolation``), or meet it but
    draw more than the power cap in a matching (``power``)."""

    def make() -> str:
        rows = [r for r in _rows(TORUS) if r["calibrated"]]
        low = [r for r in rows if r["worst_isolation_db"] < 20.0]
        hot = [r for r in rows if r["worst_isolation_db"] >= 20.0 and r["worst_power_mW"] > 700]
        return str(len(low if what == "isolation" else hot))

    return make


# --- the hexagonal switch ------------------------------------------------------------------


def _hex4_lost() -> str:
    """How many of the 40 4-endpoint chips lose an endpoint (their calibration cannot fit an
    endpoint's own cell)."""
    return str(sum(not r["calibrated"] for r in _rows(HEX4)))


# --- what it costs: bench_yield ------------------------------------------------------------


def _bench() -> dict[str, Any]:
    return benchmark("yield")


def _bench_rows() -> list[tuple[str, str, str]]:
    """bench_yield's figures with their goals, one row each."""
    b = _bench()
    return [
        ("`chips_per_s_per_core` (wall)", f"{b['chips_per_s_per_core']:.3f}", ""),
        ("`scaling_2_workers`", f"{b['scaling_2_workers']:.2f}", ">= 1.7"),
        ("`overhead_vs_serial` (wall)", f"{b['overhead_vs_serial']:.3f}", "<= 1.15"),
        ("`overhead_vs_serial_cpu`", f"{b['overhead_vs_serial_cpu']:.3f}", ""),
        ("`identical_across_workers`", str(b["identical_across_workers"]).lower(), "true"),
        ("`resume_lost_chips`", str(b["resume_lost_chips"]), "0"),
    ]


def _seconds(key: str) -> Callable[[], str]:
    """A value's maker: a time of bench_yield's run, s (a timing alone)."""
    return lambda: f"{_bench()[key]:.1f} s"


def _per_chip_cpu() -> str:
    """CPU time a chip costs in the plain loop, s, and chips per CPU second (a timing alone)."""
    b = _bench()
    per_chip = b["serial_cpu_s"] / b["chips"]
    total = f"{b['serial_cpu_s']:.1f} s for {b['chips']} chips"
    return f"{per_chip:.2f} s ({total}): {1 / per_chip:.2f}"


def _spread(argv: tuple[str, ...], label: str) -> Callable[[], str]:
    """A value's maker: the 5th-95th percentile of the summary line ``label``, dB."""

    def make() -> str:
        low, high = (float(_found(argv, _percentile(label, column))) for column in (0, 2))
        return f"{low:.1f}-{high:.1f} dB"

    return make


def _geometry() -> str:
    """The drawn geometry of the default 16-port chip: column x mode pitch, um."""
    from photonics import ClementsMesh
    from photonics.feedforward.chip_geometry import drawn_geometry

    g = drawn_geometry(ClementsMesh(16))
    return f"{g.column_pitch_um:.0f} x {g.mode_pitch_um:.0f} um"


def _v(make: Callable[[], str], timing: bool = False) -> Figure:
    """A value of this page: slow (every one is read from a study), a timing alone if so."""
    return Figure(PAGE, make, ALL if timing else (), slow=True)


ISOLATION = "worst isolation (dB)"
FIGURES: dict[str, Figure] = {
    "yield-geometry": Figure(PAGE, _geometry),
    "yield-study": Figure(PAGE, _transcript(STUDY), slow=True),
    "yield-study-passed": _v(_value(STUDY, r"passed (\d+) of 40")),
    "yield-study-iso-p50": _v(_value(STUDY, _percentile(ISOLATION, 1), "{} dB")),
    "yield-study-loss-p50": _v(_value(STUDY, _percentile("worst loss (dB)", 1), "{} dB")),
    "yield-study-excess-p50": _v(_value(STUDY, _percentile("worst excess loss (dB)", 1), "{} dB")),
    "yield-study-power-p50": _v(
        lambda: f"{float(_found(STUDY, _percentile('worst heater power (mW)', 1))) / 1e3:.1f} W"
    ),
    "yield-study-took": _v(_took(STUDY), timing=True),
    "yield-study-coupler-rho": _v(_value(STUDY, _correlation("max_coupler_error"))),
    "yield-study-heater-rho": _v(_value(STUDY, _correlation("heater_efficiency_rms"))),
    "yield-sweep": Figure(
        PAGE,
        _transcript(SWEEP),
        files={"docs/yield_sweep.png": "yield_sweep.png"},
        folder=lambda: _run(SWEEP)[1],
        slow=True,
    ),
    "yield-sweep-iso-60": _v(_value(SWEEP, r"^\s+0\.005\s+60\s+.*\s([\d.]+)\s+\d+$", "{} dB")),
    "yield-sweep-140-0005": _v(_value(SWEEP, _point("0.005", "140"), "{} %")),
    "yield-sweep-140-001": _v(_value(SWEEP, _point("0.01", "140"), "{} %")),
    "yield-sweep-140-002": _v(_value(SWEEP, _point("0.02", "140"), "{} %")),
    "yield-sweep-took": _v(_took(SWEEP), timing=True),
    "yield-torus": Figure(PAGE, _transcript(TORUS), slow=True),
    "yield-torus-passed": _v(_value(TORUS, r"passed (\d+) of 20")),
    "yield-torus-iso-p50": _v(_value(TORUS, _percentile(ISOLATION, 1), "{} dB")),
    "yield-torus-low": _v(_torus_failures("isolation")),
    "yield-torus-hot": _v(_torus_failures("power")),
    "yield-rings-locked": _v(_rings("{locked}")),
    "yield-rings-offset": _v(_rings("{offset_nm:.1f} nm")),
    "yield-rings-passed": _v(_rings("{passed}")),
    "yield-rings-passed-without": _v(_rings("{passed_without}")),
    "yield-rings-loss": _v(_rings("{loss_low:.2f}-{loss_high:.2f} dB")),
    "yield-rings-power": _v(_rings("{power_low:.0f}-{power_high:.0f} mW")),
    "yield-hex-passed": _v(_value(HEX, r"passed (\d+) of 6")),
    "yield-hex-iso": _v(_spread(HEX, ISOLATION)),
    "yield-hex-loss": _v(_spread(HEX, "worst loss (dB)")),
    "yield-hex-took": _v(_took(HEX), timing=True),
    "yield-hex4-lost": _v(_hex4_lost),
    "yield-hex4-passed": _v(_value(HEX4, r"passed (\d+) of 40")),
    "yield-bench": Figure(
        PAGE,
        table(("figure", "measured", "goal"), _bench_rows, timed=True),
        (rf"^\| `(?:{'|'.join(TIMED_ROWS)})\w*`[^|]*\| ([\d.]+) \|",),
        slow=True,
    ),
    "yield-bench-serial": _v(_seconds("serial_s"), timing=True),
    "yield-bench-one": _v(_seconds("one_worker_s"), timing=True),
    "yield-bench-two": _v(_seconds("two_workers_s"), timing=True),
    "yield-bench-startup-1": _v(_seconds("startup_1_worker_s"), timing=True),
    "yield-bench-startup-2": _v(_seconds("startup_2_workers_s"), timing=True),
    "yield-bench-cpu": _v(_per_chip_cpu, timing=True),
}
