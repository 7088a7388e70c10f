"""The demo's figures: the mesh plots (bar/cross legend, numbered ports, each pair's light in a
colour of its own named in the key, cells on a circuit thick, dead cells hatched, the
matching in the title), the power matrix down to the photodiodes' floor, the ring's lock point,
and the timeline on time axes."""

import matplotlib

matplotlib.use("Agg")

import numpy as np

from firmware.controller.measure import FLOOR_DBM
from photonics.chips import topologies
from photonics.matching import Matching
from pswitch.demo_plots import (
    feedforward_mesh_figure,
    hexagonal_mesh_figure,
    powers_figure,
    ring_figure,
    timeline_figure,
)


def test_the_clements_plot_draws_each_circuits_light_to_its_output_and_names_the_matching(
    tmp_path,
) -> None:
    fabric = topologies.topology("clements").fabric(8)
    plan = fabric.plan(Matching([(0, 5), (2, 3)], 8))  # ports 1, 4, 6, 7 dark
    fig = feedforward_mesh_figure(fabric.mesh, plan.theta, plan)
    (ax,) = fig.axes  # one axes: no colour bar for a two-state quantity
    assert "matching 0-5 2-3" in ax.get_title()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"bar", "cross", "on a circuit", "parked", "pair 0-5", "pair 2-3"} <= set(legend)
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == sorted([str(p) for p in range(8)] * 2)  # inputs left, outputs right
    # every circuit's light is drawn, ends at its target's output, and shares its pair's colour
    light = {int(line.get_gid().split()[1]): line for line in ax.lines if line.get_gid()}
    assert sorted(light) == [0, 2, 3, 5]
    for circuit in plan.circuits:
        assert light[circuit.source].get_ydata()[-1] == circuit.target
    colour = {s: tuple(line.get_color()) for s, line in light.items()}
    assert colour[0] == colour[5] != colour[2] == colour[3]
    # thick exactly where a circuit crosses the MZI, coloured by its state
    mzis = [line for line in ax.lines if line.get_gid() is None and len(line.get_xdata()) == 2]
    mzis = [line for line in mzis if line.get_xdata()[0] == line.get_xdata()[1]]
    assert len(mzis) == fabric.mesh.n_mzis
    used = sorted({k for c in plan.circuits for k in c.cells})
    assert [k for k, line in enumerate(mzis) if line.get_linewidth() > 2] == used
    cross = np.sin(plan.theta) ** 2 > 0.5
    assert [line.get_color() for line in mzis] == ["tab:orange" if c else "tab:blue" for c in cross]
    fig.savefig(tmp_path / "mesh.png")


def test_the_hexagonal_plot_keys_each_pair_and_hatches_the_dead_cells() -> None:
    fabric = topologies.topology("hexagonal").fabric(8)
    plan = fabric.plan(Matching([(0, 5), (2, 3)], 8))
    dead = np.zeros(fabric.n_cells, bool)
    dead[[1, 7]] = True
    (ax,) = hexagonal_mesh_figure(fabric, plan.theta, plan, dead).axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"pair 0-5", "pair 2-3", "dead cell (2)"} <= set(legend)
    paths = {line.get_gid(): line for line in ax.lines if line.get_gid()}
    assert set(paths) == {"pair 0-5", "pair 2-3"}
    assert paths["pair 0-5"].get_color() != paths["pair 2-3"].get_color()
    hatched = [c for c in ax.collections if c.get_gid() == "dead cells"]
    assert len(hatched) == 1 and len(hatched[0].get_paths()) == 2
    assert hatched[0].get_hatch() == "xxxx"


def test_the_power_colours_end_at_the_photodiodes_floor() -> None:
    plan = topologies.topology("clements").fabric(4).plan(Matching([(0, 1)], 4))
    P = np.full((4, 4), 1e-12)  # far below the floor: shown at it, not below
    (ax, _) = powers_figure(P, plan).axes
    (image,) = ax.images
    assert image.get_clim() == (FLOOR_DBM, 0) and image.get_array().min() == FLOOR_DBM


def test_the_ring_sweep_marks_its_lock_point_with_an_inset_in_pm() -> None:
    heater = np.linspace(0, 10, 101)
    drop = 1 / (1 + ((heater - 6.0) / 0.2) ** 2)
    lock = {
        "ring": 0,
        "heater_mW": heater,
        "drop_mW": drop,
        "lock_mW": 6.0,
        "nm_per_mW": 0.17,
        "fwhm_nm": 0.18,
        "locked": True,
        "error_nm": 1e-4,
    }
    (ax,) = ring_figure(lock).axes
    (inset,) = ax.child_axes
    assert "locked here" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert "pm" in inset.get_xlabel()
    x = inset.lines[0].get_xdata()  # +- 2 FWHM of resonance shift, in pm
    assert x.min() >= -360 and x.max() <= 360 and x.size > 10


def test_the_timeline_is_a_time_axis_with_each_step_where_it_ran() -> None:
    steps = [
        {"step": "calibrate", "compute_s": 4.0, "modeled_s": 360.0},
        {"step": "all-to-all", "compute_s": 0.01, "modeled_s": 0.6},
        {"step": "failover", "compute_s": 0.002, "modeled_s": 0.008},
    ]
    early, late = timeline_figure(steps, 1.0).axes
    assert "time" in early.get_xlabel() and "time" in late.get_xlabel()
    starts = sorted((round(b.get_x(), 6), round(b.get_width(), 6)) for b in late.patches)
    # all-to-all from 0 for 0.6 s, the failover after it, the published one beside it
    assert (0.0, 0.6) in starts and (0.6, 0.008) in starts and (0.6, 1.0) in starts


def test_a_long_collective_is_charted_step_by_step_and_its_gantt_zoomed(
    tmp_path, monkeypatch
) -> None:
    from argparse import Namespace

    from matplotlib.figure import Figure

    from pswitch import collective_plots
    from pswitch.collective_run import collective

    args = Namespace(
        algorithm="ring-all-reduce",
        ranks=16,
        n_bytes=2.0**30,
        ports=16,
        mesh="clements",
        switch="model",
        seed=0,
        straggler_ms=None,
        bandwidth_gbps=400.0,
        alpha_us=5.0,
    )
    r = collective(args, 16)
    assert len(r["steps"]) > collective_plots.WHOLE_STEPS  # it showed 12 of 60 steps
    saved = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: saved.append(fig))
    collective_plots.write_plot(r, tmp_path / "g.png")
    steps, gantt = saved[0].axes[:2]
    marks = sum(len(line.get_xdata()) for line in steps.lines)
    assert marks >= len(r["steps"])  # every step's transfer at least
    zoom = r["steps"][collective_plots.ZOOM_STEPS - 1]["end_s"] * 1e3
    assert gantt.get_xlim() == (0, zoom)


def test_the_sweep_names_sizes_as_people_write_them(tmp_path, monkeypatch) -> None:
    from argparse import Namespace

    from matplotlib.figure import Figure

    from pswitch import collective_plots
    from pswitch.collective_answers import sweep

    args = Namespace(
        algorithm="sweep",
        ranks=4,
        n_bytes=16 * 2.0**30,
        ports=None,
        mesh="clements",
        switch="model",
        seed=0,
        straggler_ms=None,
        bandwidth_gbps=400.0,
        alpha_us=5.0,
    )
    saved = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: saved.append(fig))
    collective_plots.write_sweep_plot(sweep(args), tmp_path / "s.png")
    left, right = saved[0].axes
    labels = [t.get_text() for t in left.get_xticklabels()]
    assert labels[0] == "1 KiB" and labels[-1] == "16 GiB"  # it said "16384 MiB"
    assert "16 GiB" in right.get_title()
