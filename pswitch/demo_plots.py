"""The figures of ``pswitch demo`` (headless matplotlib, PNG files): the mesh's cell states with
each pair's light in a colour of its own and the dead cells hatched, the power matrix measured on
the photodiodes down to their floor, a ring's lock sweep with its lock point, and the timeline
of the scenario on a time axis."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from firmware.controller.measure import FLOOR_DBM, FLOOR_MW
from photonics.chips.switch import MeshFabric, SwitchPlan
from pswitch.progress import Progress

#: Pairs named one by one in a mesh figure's key; more are summed up in one entry.
KEY_PAIRS = 16


def write_plots(
    folder: Path,
    fabric: Any,
    P: np.ndarray,
    plan: SwitchPlan,
    lock: dict[str, Any],
    steps: list[dict[str, Any]],
    published_failover_s: float,
    dead: np.ndarray | None = None,
    progress: Progress | None = None,
) -> dict[str, str]:
    """Write the four PNGs into ``folder`` (created); their paths by name. The mesh and the
    power matrix (``P``, mW ``[output, input]``) show the same applied ``plan``; ``dead``: the
    cells the calibration could not fit (bool per cell; None: none). ``progress(stage, done,
    total)`` follows the plots."""
    tick = progress or (lambda stage, done, total: None)
    tick("plots", 0, 4)
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: str(folder / f"{name}.png") for name in ("mesh", "powers", "ring", "timeline")}
    if isinstance(fabric, MeshFabric):
        fig = hexagonal_mesh_figure(fabric, plan.theta, plan, dead)
    else:
        fig = feedforward_mesh_figure(fabric.mesh, plan.theta, plan)
    figures = (
        fig,
        powers_figure(P, plan),
        ring_figure(lock),
        timeline_figure(steps, published_failover_s),
    )
    for done, (name, figure) in enumerate(zip(paths, figures, strict=True), start=1):
        figure.savefig(paths[name], dpi=120, bbox_inches="tight")
        plt.close(figure)
        tick("plots", done, 4)
    return paths


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    return plt


def _matching_title(plan: SwitchPlan) -> str:
    """The applied matching, wrapped for a title: ``matching 0-5 1-3 ...``."""
    pairs = " ".join(f"{a}-{b}" for a, b in plan.matching.pairs)
    return "\n".join(textwrap.wrap(f"matching {pairs}", 90))


def _pair_colours(plan: SwitchPlan) -> dict[tuple[int, int], Any]:
    """One colour per pair of the plan's matching (its two circuits carry the same link), none
    of them the cells' blue and orange nor grey; repeated beyond 19 pairs."""
    plt = _pyplot()
    tab20, dark2 = plt.get_cmap("tab20").colors, plt.get_cmap("Dark2").colors
    palette = [c for i, c in enumerate(tab20) if i not in (0, 1, 2, 3, 14, 15)]
    palette += [dark2[i] for i in (0, 2, 3, 4, 5)]
    pairs = plan.matching.pairs
    return {pair: palette[i % len(palette)] for i, pair in enumerate(pairs)}


def _key(plan: SwitchPlan, colours: dict[tuple[int, int], Any], extra: list[Any]) -> list[Any]:
    """The legend: a cell's states, then each pair's colour (the first :data:`KEY_PAIRS`)."""
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color="tab:blue", lw=4, label="bar"),
        Line2D([], [], color="tab:orange", lw=4, label="cross"),
        Line2D([], [], color="grey", lw=4, label="on a circuit"),
        Line2D([], [], color="grey", lw=1.2, label="parked"),
        *extra,
    ]
    pairs = list(colours.items())
    for (a, b), colour in pairs[:KEY_PAIRS]:
        handles.append(Line2D([], [], color=colour, lw=2.5, label=f"pair {a}-{b}"))
    if len(pairs) > KEY_PAIRS:
        handles.append(Line2D([], [], lw=0, label=f"... {len(pairs) - KEY_PAIRS} more pairs"))
    return handles


def feedforward_mesh_figure(mesh: Any, theta: np.ndarray, plan: SwitchPlan) -> Any:
    """A feed-forward mesh drawn as its columns of MZIs between numbered ports (inputs left,
    outputs right): each MZI coloured bar or cross (``theta``, rad), thick where a circuit of
    ``plan`` crosses it; each circuit's light drawn from its input to its output in its pair's
    colour, named in the key."""
    plt = _pyplot()
    n, columns = mesh.n, int(mesh.columns.max()) + 1
    cross = np.sin(theta) ** 2 > 0.5
    used = np.zeros(mesh.n_mzis, bool)
    for circuit in plan.circuits:
        used[list(circuit.cells)] = True
    # each input's light: (x, mode) waypoints, switching modes at the MZIs it crosses in
    at = list(range(n))  # at[mode]: the input whose light is on that mode now
    route: list[list[tuple[float, float]]] = [[(-1.0, i)] for i in range(n)]
    for k in np.argsort(mesh.columns, kind="stable"):
        c, m = int(mesh.columns[k]), int(mesh.modes[k])
        if cross[k]:
            for side in (0, 1):
                route[at[m + side]] += [(c - 0.3, m + side), (c + 0.3, m + 1 - side)]
            at[m], at[m + 1] = at[m + 1], at[m]
    for mode, source in enumerate(at):
        route[source].append((columns, mode))

    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * columns + 2), max(3.0, 0.4 * n + 1)))
    for mode in range(n):  # the waveguides
        ax.plot([-1, columns], [mode, mode], color="0.85", lw=1, zorder=0)
    colours = _pair_colours(plan)
    for pair, colour in colours.items():
        for source in pair:
            x, y = zip(*route[source], strict=True)
            ax.plot(x, y, color=colour, lw=2.5, alpha=0.8, zorder=1, gid=f"light {source}")
    for k in range(mesh.n_mzis):
        ax.plot(
            [mesh.columns[k]] * 2,
            [mesh.modes[k] + 0.15, mesh.modes[k] + 0.85],
            color="tab:orange" if cross[k] else "tab:blue",
            lw=4.0 if used[k] else 1.2,
            solid_capstyle="butt",
            zorder=2,
        )
    for mode in range(n):
        ax.annotate(str(mode), (-1, mode), xytext=(-1.4, mode), ha="right", va="center")
        ax.annotate(str(mode), (columns, mode), xytext=(columns + 0.4, mode), va="center")
    ax.legend(handles=_key(plan, colours, []), loc="upper left", bbox_to_anchor=(1.01, 1))
    kind = type(mesh).__name__.removesuffix("Mesh")
    ax.set_title(
        f"{kind} mesh, {n} ports, {mesh.n_mzis} MZIs: cell states of the {_matching_title(plan)}",
        fontsize=10,
    )
    ax.set(xlabel="column (inputs left, outputs right: port numbers)", ylabel="mode")
    ax.set_xlim(-2.2, columns + 1.2)
    ax.set_xticks(range(0, columns, max(1, columns // 16)))
    ax.set_yticks([])
    ax.invert_yaxis()
    return fig


def hexagonal_mesh_figure(
    fabric: MeshFabric, theta: np.ndarray, plan: SwitchPlan, dead: np.ndarray | None = None
) -> Any:
    """A recirculating mesh drawn as its lattice: each cell a segment along its edge at its
    position (mm), coloured bar or cross (``theta``, rad), thick where a circuit of ``plan``
    crosses it, thin where parked; each pair's path through its cells' centres in the pair's
    colour, named in the key; the cells the calibration could not fit (``dead``) hatched;
    the endpoints' edge ports marked with their numbers."""
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    plt = _pyplot()
    mesh = fabric.router.mesh
    pos = np.asarray(mesh.cell_positions_um) / 1e3  # mm
    faces = np.asarray(mesh.cell_faces)
    centers = np.asarray(mesh.face_centers_um) / 1e3
    # a cell lies on the edge between its two faces: along the edge is across the line from a
    # face's centre to the cell's midpoint (every lattice cell borders at least one face)
    face = np.where(faces[:, 0] >= 0, faces[:, 0], faces[:, 1])
    normal = pos - centers[face]
    along = np.stack([-normal[:, 1], normal[:, 0]], axis=1)
    along /= np.linalg.norm(along, axis=1, keepdims=True)
    half = 0.4 * mesh.unit_length_um / 1e3  # 80 % of the edge: gaps show the links
    segments = np.stack([pos - half * along, pos + half * along], axis=1)
    cross = np.sin(theta) ** 2 > 0.5
    used = np.zeros(mesh.n_cells, bool)
    for circuit in plan.circuits:
        used[list(circuit.cells)] = True
    colours = np.where(cross, "tab:orange", "tab:blue")

    fig, ax = plt.subplots(figsize=(7, 7))
    ax.add_collection(LineCollection(segments, colors=colours, linewidths=np.where(used, 4.0, 1.2)))
    pair_colours = _pair_colours(plan)
    for (a, b), colour in pair_colours.items():
        circuit = plan.circuit_from(a)
        if circuit is not None and circuit.target == b:
            path = pos[list(circuit.cells)]
            ax.plot(*path.T, color=colour, lw=2, alpha=0.9, zorder=2, gid=f"pair {a}-{b}")
    extra = [Line2D([], [], color="black", marker="o", lw=0, label="endpoint (number)")]
    if dead is not None and np.any(dead):
        # a hatched box over each dead cell's segment, a third of an edge wide
        width = 0.5 * half * (normal[dead] / np.linalg.norm(normal[dead], axis=1, keepdims=True))
        ends_ = segments[dead]
        boxes = np.stack(
            [ends_[:, 0] - width, ends_[:, 1] - width, ends_[:, 1] + width, ends_[:, 0] + width],
            axis=1,
        )
        hatch = {"facecolor": "none", "edgecolor": "black", "hatch": "xxxx"}
        ax.add_collection(PolyCollection(boxes, zorder=4, gid="dead cells", **hatch))
        extra.append(Patch(label=f"dead cell ({int(dead.sum())})", **hatch))
    ends = np.asarray(mesh.edge_port_positions_um)[list(fabric.endpoints)] / 1e3
    ax.scatter(ends[:, 0], ends[:, 1], s=40, c="black", zorder=3)
    middle = pos.mean(axis=0)
    for i, xy in enumerate(ends):
        out = (xy - middle) / max(float(np.linalg.norm(xy - middle)), 1e-9)
        ax.annotate(str(i), xy, xytext=xy + 0.25 * out, ha="center", va="center", fontsize=8)
    ax.legend(handles=_key(plan, pair_colours, extra), loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(
        f"hexagonal mesh, {fabric.n_ports} endpoints, {mesh.n_cells} cells: cell states of the "
        f"{_matching_title(plan)}",
        fontsize=10,
    )
    ax.set(xlabel="x, mm", ylabel="y, mm")
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.margins(0.08)
    return fig


def powers_figure(P: np.ndarray, plan: SwitchPlan) -> Any:
    """The power matrix ``P`` (mW per mW sent, ``[output, input]``) in dBm, its colour scale
    from the photodiodes' floor (:data:`FLOOR_DBM`: a reading below it reads as it) to 0."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    dbm = 10 * np.log10(np.maximum(P, FLOOR_MW))
    image = ax.imshow(dbm, cmap="magma", vmin=FLOOR_DBM, vmax=0)
    fig.colorbar(image, label=f"detected power, dBm (1 mW in; floor {FLOOR_DBM:g} dBm)")
    ax.set(
        xlabel="input (lit alone)",
        ylabel="output",
        title=f"measured powers: {len(plan.matching.pairs)} pairs",
    )
    return fig


def ring_figure(lock: dict[str, Any]) -> Any:
    """A ring's lock sweep: drop-port power against heater power, the lock point marked, and an
    inset around it in pm of resonance shift (the heater power times the ring's tuning,
    ``lock["nm_per_mW"]``)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    heater, drop = np.asarray(lock["heater_mW"]), np.asarray(lock["drop_mW"])
    dbm = 10 * np.log10(np.maximum(drop, FLOOR_MW))
    ax.plot(heater, dbm, ".-", color="tab:blue", label="sweep")
    at = float(lock["lock_mW"])
    ax.axvline(at, color="tab:red", lw=1, ls="--")
    ax.plot([at], [float(np.interp(at, heater, dbm))], "o", color="tab:red", label="locked here")
    ax.set(
        xlabel="ring heater power, mW",
        ylabel="drop-port power, dBm",
        title=f"ring {lock['ring']} lock sweep (locked: {lock['locked']}, "
        f"error {lock['error_nm'] * 1e3:.1f} pm)",
    )
    ax.legend(loc="lower left")
    # the inset: two FWHM either side of the lock, in pm of resonance shift
    shift_pm = (heater - at) * lock["nm_per_mW"] * 1e3
    near = np.abs(shift_pm) <= 2 * lock["fwhm_nm"] * 1e3
    inset = ax.inset_axes((0.62, 0.52, 0.35, 0.4))
    inset.plot(shift_pm[near], dbm[near], ".-", color="tab:blue")
    inset.axvline(0.0, color="tab:red", lw=1, ls="--")
    inset.set_xlabel("shift from the lock, pm", fontsize=7)
    inset.tick_params(labelsize=7)
    return fig


def timeline_figure(steps: list[dict[str, Any]], published_failover_s: float) -> Any:
    """The scenario on a time axis, s, as it ran: each step a row, its modeled hardware time a
    bar from where it began, its compute time (measured) a thin bar inside; the calibration on
    an axis of its own (its minutes would hide the rest), and the published failover beside
    the failover."""
    plt = _pyplot()
    rows = [s["step"] for s in steps] + ["published failover"]
    fig, (early, late) = plt.subplots(
        1,
        2,
        figsize=(10, 0.45 * len(rows) + 1.4),
        sharey=True,
        gridspec_kw={"width_ratios": [1, 2]},
        constrained_layout=True,
    )
    start = {"early": 0.0, "late": 0.0}
    begins = {}
    for i, step in enumerate(steps):
        ax, lane = (early, "early") if i == 0 else (late, "late")
        t0 = start[lane]
        begins[step["step"]] = t0
        ax.barh(i, step["modeled_s"], left=t0, height=0.6, color="C0")
        ax.barh(i, step["compute_s"], left=t0, height=0.2, color="black")
        ax.annotate(
            f" {step['modeled_s']:.3g} s",
            (t0 + step["modeled_s"], i),
            va="center",
            fontsize=8,
        )
        start[lane] = t0 + step["modeled_s"]
    if "failover" in begins:
        y, t0 = len(steps), begins["failover"]
        late.barh(y, published_failover_s, left=t0, height=0.6, color="0.75")
        late.annotate(
            f" {published_failover_s:.3g} s",
            (t0 + published_failover_s, y),
            va="center",
            fontsize=8,
        )
    early.set_yticks(range(len(rows)), rows)
    early.invert_yaxis()
    early.set(xlabel="time, s", title="calibration")
    late.set(xlabel="time after the calibration, s", title="then")
    for ax in (early, late):
        ax.set_xlim(0, ax.get_xlim()[1] * 1.2)  # room for the labels
    late.legend(
        handles=[
            plt.Rectangle((0, 0), 1, 1, color="C0", label="modeled hardware time"),
            plt.Rectangle((0, 0), 1, 1, color="black", label="compute time (measured)"),
            plt.Rectangle((0, 0), 1, 1, color="0.75", label="published (swap and restart)"),
        ],
        loc="upper right",
        fontsize=8,
    )
    return fig
