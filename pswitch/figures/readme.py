"""The README's figures: the demo's transcript and pictures, the layouts, the thermal and
physics figures, and the benchmarks' tables and the prose quoting them (made in
:mod:`pswitch.figures._bench_tables`: one run of each benchmark per process, which every figure
written or checked together shares)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pswitch.figures import _bench_tables as bt
from pswitch.figures._make import Figure, benchmark, pswitch, stamp, table, transcript, value

DEMO = ("demo",)
HEX_DEMO = ("demo", "--mesh", "hexagonal", "--ports", "16", "--plots", "plots")
#: The compute column of the demo's timeline, and its compilation line.
DEMO_TIMINGS = (r"^   [a-z -]+?\s+(\d+\.\d+) s\s+\d", r"compiled on first use: (.*)$")
LAYOUT = ("layout", "--mesh", "clements", "--ports", "8", "-o", "mesh.gds", "--png", "mesh.png")
SWITCH_LAYOUT = ("layout", "--mesh", "switch6x6", "-o", "switch.gds", "--png", "switch.png")
#: The layout command's timings, and the size of the picture it renders (which depends on the
#: plotting library's version and fonts, not on the seed).
LAYOUT_TIMINGS = (r"in (\d+\.\d+) s$", r"\((\d+\.\d+) s\)$", r"\((\d+) kB\)$")

#: Timings: a number with its unit of time; a speed-up (a ratio of times).
TIME = r"(\d[\d.]*) (?:s|ms|us)\b"
RATIO = r"(>?\d[\d ]*(?:\.\d+)?)x\b"
#: A feed-forward peer's name (library, version, method): which is fastest depends on the machine.
PEER = r"((?:Strawberry Fields|interferometer|neurophox)[\w. ]* `\w+`)"


def column(i: int) -> str:
    """A timing pattern: the ``i``-th cell (from 0) of every row of a table's body."""
    return rf"(?<=\|\n)(?!\|-)(?:\|[^|\n]*){{{i}}}\| ([^|\n]*?) \|"


#: The instrument benchmark's figures in prose: templates and timings by name. The emulated
#: bench runs on the wall clock (heaters settling, the ambient drifting): how well a calibration
#: over the wire routes depends on how long its round trips took, hence a timing too.
HIL = {
    "readme-hil-ratio": ("{ratio}", (RATIO,)),
    "readme-hil-query": (
        "{session_query_s} against {raw_query_s}, and {pyvisa_query_s} for a plain pyvisa-py query",
        (TIME,),
    ),
    "readme-hil-pair": ("{write_then_query_s} against {write_then_query_nagle_s}", (TIME,)),
    "readme-hil-calibration": (
        "{bench_calibration_s_8} (the same chip in process: {in_process_calibration_s_8})",
        (TIME,),
    ),
    "readme-hil-quality": (
        "{bench_calibration_error_db:.2f} dB of the loss-only power with >= "
        "{bench_calibration_isolation_db:.1f} dB",
        (r"([\d.]+) dB",),
    ),
    "readme-hil-clients": ("{client_checks_passed} of {client_checks_total}", ()),
}


def layout_shell() -> str:
    """The layout command and its output as shell comments, then the stamp."""
    lines = pswitch(*LAYOUT)[0].splitlines()
    text = "\n".join([f"pswitch {' '.join(LAYOUT)}", *(f"# {line}" for line in lines)])
    return f"```sh\n{text}\n```\n\n{stamp()}\n"


def layouts_ok() -> str:
    """Whether every layout the benchmark built matched its model and its metal."""
    every = "every" if benchmark("layouts")["check_ok_all"] else "NOT every"
    return f"{every} layout matched its model and its metal"


def layout_transfer_error() -> str:
    """How closely the layouts evaluated as circuits equal their models: the worst entry of
    ``layout_transfer - mesh.transfer`` on 6-port Clements and Reck layouts, ideal and with
    sampled imperfections, rounded up to a power of ten."""
    import math

    import numpy as np

    from layouts.check import extract_graph, layout_transfer
    from layouts.meshes import LayoutSettings, feedforward_layout
    from photonics import ClementsMesh, MZIImperfections, ReckMesh

    worst = 0.0
    for mesh in (ClementsMesh(6), ReckMesh(6)):
        rng = np.random.default_rng(4)
        settings = mesh.random_settings(rng)
        chip = MZIImperfections.sample(mesh.n_mzis, rng, splitter_sigma=0.02, loss_db=0.5)
        graph = extract_graph(feedforward_layout(mesh, LayoutSettings(pads=None)).component)
        for imperfections in (None, chip):
            found = layout_transfer(graph, mesh, settings, imperfections)
            worst = max(worst, float(np.abs(found - mesh.transfer(settings, imperfections)).max()))
    return f"1e{math.ceil(math.log10(worst))}" if worst > 0 else "0"


def crosstalk() -> str:
    """The crosstalk the firmware's criterion predicts on the default chip and on a dense one
    (rad), beside its threshold: the model's arithmetic, no run of the chip."""
    from firmware.sdk import Switch
    from photonics.devices.thermal import CROSSTALK_MATTERS_RAD, predicted_crosstalk_rad

    def predicted(**kwargs: object) -> float:
        c = Switch.emulated(calibrated=False, **kwargs).transport.controller
        return predicted_crosstalk_rad(c.heater_layout, c.driver.chip.mesh.n_mzis)

    default, dense = predicted(ports=8), predicted(ports=6, pitch_um=(60.0, 20.0))
    verb = "do" if min(default, dense) > CROSSTALK_MATTERS_RAD else "do not both"
    return (
        f"more than {CROSSTALK_MATTERS_RAD:.3f} rad of it (the default chip's {default:.3f} rad "
        f"and `Switch.emulated(ports=6, pitch_um=(60, 20))`'s {dense:.2f} rad {verb})"
    )


def blind_isolation_db() -> float:
    """The default 8-port chip's worst isolation (dB) self-calibrated without its heaters'
    layout, so with its crosstalk left uncalibrated: ``benchmarks/bench_thermal.py``'s seed-0
    chip and readings, less the layout (the benchmark calibrates with it)."""
    import numpy as np

    from photonics.calibration.selfcal import route_quality, self_calibrate
    from photonics.chips.chip import Chip, ChipSpec

    chip, rng = Chip(ChipSpec(n_ports=8, mesh="clements", seed=0)), np.random.default_rng(0)

    def measure(currents_mA: np.ndarray, port: int) -> np.ndarray:
        return chip.detect(currents_mA, np.eye(8)[port], rng)

    found = self_calibrate(chip.mesh, measure, chip.heater_voltage, chip.n_heaters, 10.0)
    return route_quality(chip, found.calibration)[1]


def thermal() -> str:
    """Self-calibration with and without crosstalk, from ``benchmarks/bench_thermal.py`` (seed
    0's chip) and :func:`blind_isolation_db`."""
    r = benchmark("thermal")
    xt = r["crosstalk"]
    return (
        f"{blind_isolation_db():.0f} dB of worst isolation with the crosstalk uncalibrated and "
        f"{r['calibrated_worst_isolation_db']:.0f} dB with it calibrated; on a dense 6-port mesh "
        f"(60 x 20 um pitch) it takes routing from {xt['err_before_db']:.1f} dB / "
        f"{xt['iso_before_db']:.1f} dB isolation to {xt['err_after_db']:.2f} dB / "
        f"{xt['iso_after_db']:.1f} dB"
    )


def physics() -> str:
    """The reconfiguration logged and the ring tracked, from ``benchmarks/bench_physics.py``
    (all in the emulated bench's simulated time: seeded, no timing)."""
    r = benchmark("physics")
    return (
        f"settled in {bt.t(r['settle_s_measured'], 2)} against {bt.t(r['settle_s_model'])} from "
        f"the time constants, a wrong port briefly at {r['transient_worst_leak_db']:.0f} dB of "
        f"the routed power, every channel updated at once; "
        f"{bt.t(r['reconfigure_s_sequential'], 1)} through every partial state at 0.5 ms a "
        f"channel) and tracks a locked ring with `RING:TRAC` every second through an hour of "
        f"drift: worst detuning {r['ring_lock_drift_pm_max']:.2f} pm "
        f"({r['ring_untracked_drift_pm_max']:.0f} pm untracked"
    )


def fig(
    make: Callable[[], str],
    *timings: str,
    files: dict[str, str] | None = None,
    folder: Callable[[], str] | None = None,
) -> Figure:
    """A README figure made from a benchmark's or a layout's run: slow."""
    return Figure("README.md", make, timings, files or {}, folder, slow=True)


def stamped(head: Sequence[str], rows: Callable[[], list[list[object]]]) -> Callable[[], str]:
    """A benchmark's table, stamped (each holds timings)."""
    return table(head, rows, timed=True)


PEERS_HEAD = ("task", "pswitch", "peer", "ratio")
SPEED_HEAD = ("n", "decompose: ours", "fastest peer", "ratio", "route: ours",
              "fastest peer decomposing P", "ratio", "transfer: ours", "fastest peer",
              "ratio")  # fmt: skip
FAILOVER_HEAD = ("mesh", "spares", "compute", "modeled hardware", "cells switched (re-route)",
                 "live circuits disturbed")  # fmt: skip
LAYOUTS_HEAD = ("mesh", "MZIs / cells", "pads", "die (mm)", "build", "build with pads",
                "graph check", "metal check")  # fmt: skip
PROGRAMMING_HEAD = ("loss per MZI", "1 - F, ideal decomposition", "1 - F, local correction",
                    "1 - F, programmed", "time")  # fmt: skip
ISOLATION_HEAD = ("configurations", "plain routing", "isolation-aware")
ROUTER_HEAD = ("workload", "ours", "baseline", "target")

FIGURES = {
    "demo": Figure("README.md", transcript(DEMO, prompt=False, timed=True), DEMO_TIMINGS),
    "demo-hexagonal": fig(
        value(HEX_DEMO, r"hexagonal mesh, (\d+) cells", "{} cells"),
        files={"docs/demo/mesh.png": "plots/mesh.png", "docs/demo/powers.png": "plots/powers.png"},
        folder=lambda: pswitch(*HEX_DEMO)[1],
    ),
    "readme-crosstalk": Figure("README.md", crosstalk),
    "readme-thermal": fig(thermal),
    "readme-physics": fig(physics),
    "readme-peers": fig(stamped(PEERS_HEAD, bt.peer_rows), TIME, RATIO, PEER),
    "readme-peers-prose": fig(bt.summary_sentences, TIME, r"(\d\.\d)e-\d+"),
    "readme-router": fig(stamped(ROUTER_HEAD, bt.router_rows), TIME),
    "readme-router-dead": fig(bt.dead_cells),
    "readme-router-paths": fig(bt.router_text(bt.PATHS)),
    "readme-router-crossings": fig(bt.router_text(bt.CROSSINGS)),
    "readme-router-isolation": fig(stamped(ISOLATION_HEAD, bt.isolation_rows), TIME),
    "readme-router-longest": fig(bt.router_text("up to {matching_32[ours_path_cells_max]} cells")),
    "readme-router-cover": fig(bt.router_text("{cover_25db[size]} in all")),
    "readme-router-published": fig(bt.published),
    "readme-failover": fig(stamped(FAILOVER_HEAD, bt.failover_rows), column(2)),
    "readme-layout": fig(
        layout_shell,
        *LAYOUT_TIMINGS,
        files={"docs/layout_clements8.png": "mesh.png"},
        folder=lambda: pswitch(*LAYOUT)[1],
    ),
    "readme-layout-heaters": fig(value(LAYOUT, r"^heaters: (\d+ drawn, \d+ in the model)")),
    "readme-layout-switch6x6": fig(
        value(SWITCH_LAYOUT, r"^switch6x6 layout: (\d+ cells), \d+ pads; (die .* mm)", "{}, {}"),
        files={"docs/layout_switch6x6.png": "switch.png"},
        folder=lambda: pswitch(*SWITCH_LAYOUT)[1],
    ),
    "readme-layout-transfer": fig(layout_transfer_error),
    "readme-layouts": fig(stamped(LAYOUTS_HEAD, bt.layouts_rows), TIME),
    "readme-layouts-ok": fig(layouts_ok),
    "readme-speed": fig(
        stamped(SPEED_HEAD, bt.speed_rows), *(column(i) for i in range(1, len(SPEED_HEAD)))
    ),
    "readme-speed-err": fig(lambda: bt.exp(bt.ff()["decompose_err_max"]), r"^(\d\.\d)e"),
    "readme-speed-targets": fig(bt.targets, TIME, RATIO, r"^([^:]*):"),
    "readme-programming": fig(stamped(PROGRAMMING_HEAD, bt.programming_rows), column(4)),
    **{name: fig(bt.hil_text(text), *timings) for name, (text, timings) in HIL.items()},
}
