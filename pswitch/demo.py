"""The headline scenario of ``pswitch demo``: a rack of accelerators on an emulated switch,
a feed-forward mesh (Clements by default) or a recirculating one (``--mesh hexagonal``); any
registered topology whose endpoints send and receive on one port.

1. calibrate the chip through its detectors (CAL:RUN): a feed-forward mesh column by column,
   a recirculating one cell by cell on light paths routed through calibrated cells (cells it
   cannot fit are dead, and the router leaves them out);
2. compute an all-to-all schedule of matchings and apply each, verified by measured powers;
3. run a training step as a schedule, one matching per parallelism phase, and its duty cycle;
4. fail an accelerator, splice in a spare, verify the new circuit and the untouched ones;
5. a timeline of each step: its compute time, measured on this machine (the firmware's work
   and the emulated chip's physics, in this process; never numba's compilation, which is done
   before the first step and reported apart), and its modeled hardware time (what the
   emulated heater driver, thermal settling and detectors take: a real switch's time);
6. plots (PNG): the mesh's cell states, the measured power matrix, a ring lock trace (rings
   exist on feed-forward chips only: a separate 4-port Clements switch) and the failover
   timeline.

Powers are read on the switch's photodiodes (``MEAS:POW:ALL?``, ``Switch.powers()``), one
accelerator at a time sending 1 mW (the emulated world's light, not the switch's); a circuit is
verified when its output gets the light of its source with >= ``VERIFY_ISOLATION_DB`` over the
strongest other lit input (and its own light sent back) and within ``VERIFY_LOSS_DB`` of the
predicted insertion loss.
"""

# Over 500 lines on purpose: one scenario whose steps share the switch, the schedule and the
# timeline they print; split, each step would pass them all along.

from __future__ import annotations

import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from firmware.driver import LAUNCH_MW
from firmware.fabric import Job, all_to_all, job_matchings
from firmware.sdk import Switch
from photonics import levels
from photonics.chips import topologies
from photonics.chips.switch import MeshFabric, SwitchPlan
from photonics.errors import SettingsError
from photonics.recirculating.routing import DEFAULT_ISOLATION_TARGET_DB
from pswitch.progress import Progress, within
from pswitch.verification import VERIFY_ISOLATION_DB, VERIFY_LOSS_DB
from pswitch.warm import compiling, warm

#: Published swap of a failed accelerator and job restart, s (LUMION ~1 s, Morphlux 1.2 s).
PUBLISHED_FAILOVER_S = 1.0
#: An untouched circuit's measured power may move this much across a failover (dB).
UNTOUCHED_DB = 0.1
#: Communication time of each parallelism phase of the training step, s.
PHASE_DWELL_S = 0.010


@dataclass(frozen=True)
class DemoSettings:
    """``ports`` (endpoints, even, 4-32), the emulated chip's ``seed``, where the plots go
    (``plots_dir``; None: no plots) and the switch's ``mesh`` (a registered topology whose
    endpoints send and receive)."""

    ports: int = 16
    seed: int = 0
    plots_dir: Path | None = Path("pswitch-demo")
    mesh: str = "clements"

    def __post_init__(self) -> None:
        if isinstance(self.ports, bool) or not isinstance(self.ports, int):
            raise SettingsError(f"ports must be an integer, got {self.ports!r}")
        if not 4 <= self.ports <= 32 or self.ports % 2:
            raise SettingsError(f"ports must be even and in 4..32, got {self.ports}")
        meshes = topologies.names(directed=False)  # endpoints that send and receive
        if self.mesh not in meshes:
            raise SettingsError(f"mesh must be one of {', '.join(meshes)}; got {self.mesh!r}")
        topologies.topology(self.mesh).check_ports(self.ports)


def job_for(ports: int) -> Job:
    """A torus job on ``ports`` switch ports with one spare in every four ports (interleaved:
    a spare's circuit then crosses few live ones). Accelerators ``rows x cols``."""
    spares = tuple(range(3, ports, 4))
    ends = tuple(p for p in range(ports) if p not in spares)
    cols = next(c for c in (4, 3, 7, 5, 2) if len(ends) % c == 0)
    return Job("train", "torus", ends, spares, (len(ends) // cols, cols))


def measured_powers(switch: Switch, ports: list[int]) -> np.ndarray:
    """Detected power, mW per mW sent, ``[output, input]``: the switch's photodiodes
    (:meth:`Switch.powers`) with the accelerator on each of ``ports`` alone sending
    :data:`LAUNCH_MW` (other columns zero); a reading below the switch's floor (1e-6 mW) reads
    as the floor."""
    world = switch.transport.controller.driver  # the emulated accelerators' transmitters
    n, before = switch.ports, world.launch_mW
    P = np.zeros((n, n))
    try:
        for a in ports:
            world.launch_mW = LAUNCH_MW * np.eye(n)[a]
            P[:, a] = switch.powers() / LAUNCH_MW
    finally:
        world.launch_mW = before
    return P


def check_circuits(switch: Switch) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Measure the applied matching (:func:`measured_powers`, every lit port) and check each
    lit circuit (both directions): the power matrix, and each circuit's measured loss and
    isolation, dB."""
    rows = []
    lit = [p for pair in switch.matching().pairs for p in pair]
    P = measured_powers(switch, lit)
    for src, info in sorted(switch.paths().items()):
        out = info.target
        others = [P[out, x] for x in lit if x != src]
        loss = float(-10 * np.log10(P[out, src]))
        iso = levels.isolation_db(P[out, src], others)  # None: nothing else lit, no leak
        isolated = iso is None or iso >= VERIFY_ISOLATION_DB
        ok = isolated and abs(loss - info.loss_db) <= VERIFY_LOSS_DB
        rows.append(
            {
                "source": src,
                "target": out,
                "loss_db": loss,
                "predicted_loss_db": info.loss_db,
                "isolation_db": iso,
                "verified": bool(ok),
            }
        )
    return P, rows


def run_demo(settings: DemoSettings, progress: Progress | None = None) -> dict[str, Any]:
    """Run the scenario; the results as data (times s, powers dB). ``progress(stage, done,
    total)`` is called as each stage advances."""
    tick = progress or (lambda stage, done, total: None)

    # numba's kernels before any step is timed: loaded from the on-disk cache the install
    # filled, else compiled here (and reported apart)
    tick("loading compiled kernels", 0, 1)
    with compiling() as compiled:
        warm()
    tick("loading compiled kernels", 1, 1)
    n = settings.ports
    feed_forward = topologies.topology(settings.mesh).kind == "feedforward"
    switch = Switch.emulated(ports=n, mesh=settings.mesh, seed=settings.seed, calibrated=False)
    controller = switch.transport.controller
    steps: list[dict[str, Any]] = []

    # 1. calibration through the detectors (feed-forward: photonics.calibration.selfcal;
    #    recirculating:
    # photonics.calibration.hex_selfcal, whose cells it cannot fit the router then leaves out)
    controller.progress = within("calibrate", tick)
    t0 = time.perf_counter()
    hw = switch.calibrate(save=False)
    controller.progress = None
    steps.append({"step": "calibrate", "compute_s": time.perf_counter() - t0, "modeled_s": hw})

    # 2. all-to-all: compute, apply and verify every matching
    t0 = time.perf_counter()
    # on a recirculating mesh keep only matchings predicted at the router's isolation target:
    # a plain cover accepts detours that leak (down to 18 dB measured at 16 ports)
    floor = None if feed_forward else DEFAULT_ISOLATION_TARGET_DB
    schedule = all_to_all(
        controller.fabric, isolation_db=floor, progress=within("all-to-all", tick)
    )
    compute = time.perf_counter() - t0
    hw, verified, worst_iso, worst_loss_error, first_P = 0.0, 0, None, 0.0, None
    unverified: list[dict[str, Any]] = []
    for k, plan in enumerate(schedule.plans):
        tick("all-to-all: apply and verify", k, schedule.size)
        t0, start = time.perf_counter(), controller.driver.elapsed_s
        controller.apply_plan(plan)
        compute += time.perf_counter() - t0
        hw += controller.driver.elapsed_s - start
        P, rows = check_circuits(switch)
        first_P = P if first_P is None else first_P
        verified += all(r["verified"] for r in rows)
        unverified += [{"matching": k, **r} for r in rows if not r["verified"]]
        worst_iso = levels.worst([worst_iso, *(r["isolation_db"] for r in rows)])
        worst_loss_error = max(
            worst_loss_error, *(abs(r["loss_db"] - r["predicted_loss_db"]) for r in rows)
        )
        tick("all-to-all: apply and verify", k + 1, schedule.size)
    all_to_all_result = {
        "matchings": schedule.size,
        "verified": verified,
        "verify_isolation_db": VERIFY_ISOLATION_DB,
        "worst_isolation_db": worst_iso,
        "worst_loss_error_db": worst_loss_error,
        "note": schedule.note,
        "unverified_circuits": unverified,
    }
    steps.append({"step": "all-to-all", "compute_s": compute, "modeled_s": hw})

    # 3. a training step: one matching per parallelism phase, run as a schedule
    tick("training step", 0, 1)
    job = job_for(n)
    phases = job_matchings(job, n)
    t0 = time.perf_counter()
    switch.load_schedule([(m, PHASE_DWELL_S) for m in phases])
    run = switch.run_schedule()
    steps.append(
        {
            "step": "training step",
            "compute_s": time.perf_counter() - t0,
            "modeled_s": sum(run.reconfiguration_s),
        }
    )
    switch.stop_schedule()
    tick("training step", 1, 1)

    # 4. an accelerator fails: splice in a spare, verify new and untouched circuits
    tick("failover", 0, 1)
    switch.connect(phases[0])
    before = {r["source"]: r for r in check_circuits(switch)[1]}
    failed = job.endpoints[len(job.endpoints) // 2]
    peer = phases[0].partner(failed)
    t0 = time.perf_counter()
    new_job, hw, disturbed = switch.failover(job, failed)
    compute = time.perf_counter() - t0
    spare = switch.matching().partner(peer)
    after = {r["source"]: r for r in check_circuits(switch)[1]}
    new = [after[peer], after[spare]]
    kept = [
        after[s] for s in after if s not in (peer, spare) and s not in disturbed and s in before
    ]
    moved = max(
        (abs(after[s["source"]]["loss_db"] - before[s["source"]]["loss_db"]) for s in kept),
        default=0.0,
    )
    failover_result = {
        "failed_port": failed,
        "peer": peer,
        "spare": spare,
        "new_circuits_verified": all(r["verified"] for r in new),
        "disturbed_circuits": len(disturbed) // 2,
        "untouched_circuits": len(kept) // 2,
        "untouched_max_change_db": moved,
        "untouched_verified": moved <= UNTOUCHED_DB and all(r["verified"] for r in kept),
        "job_endpoints_after": list(new_job.endpoints),
    }
    steps.append({"step": "failover", "compute_s": compute, "modeled_s": hw})
    tick("failover", 1, 1)

    calibration = switch.calibration()
    result_cells = controller.fabric.n_cells
    result = {
        "ports": n,
        "seed": settings.seed,
        "mesh": settings.mesh,
        "mzis": int(controller.fabric.n_cells),
        "calibrated": calibration["calibrated"],
        "calibration": {
            "through_detectors": True,
            "chip_id": calibration["chip_id"],
            "created": calibration["created"],
            "dead_cells": int(np.sum(~controller.calibration.phase_fitted[:result_cells])),
        },
        "all_to_all": all_to_all_result,
        "training_step": {
            "topology": f"torus {job.shape[0]}x{job.shape[1]}",
            "accelerators": len(job.endpoints),
            "spares": list(job.spares),
            "phases": len(phases),
            "phase_dwell_s": PHASE_DWELL_S,
            "duty_cycle": run.duty_cycle,
        },
        "failover": failover_result,
        "timeline": steps,
        "published_failover_s": PUBLISHED_FAILOVER_S,
        "compiled_on_first_use": {"kernels": compiled.kernels, "seconds": compiled.seconds},
        "plots": {},
    }
    tick("ring lock sweep", 0, 1)
    lock = _lock_trace(settings.seed)
    tick("ring lock sweep", 1, 1)
    result["ring_lock"] = {"locked": lock["locked"], "error_nm": lock["error_nm"]}
    if settings.plots_dir is not None:
        result["plots"] = write_plots(
            settings.plots_dir, controller.fabric, first_P, schedule.plans[0], lock, steps, tick
        )
    return result


def _lock_trace(seed: int, ring: int = 0) -> dict[str, Any]:
    """Lock ``ring`` of a 4-port emulated switch with add-drop rings in front of its
    photodiodes: the lock sweep (heater power against drop power, mW) and the result."""
    switch = Switch.emulated(ports=4, seed=seed, rings=True)
    switch.connect([(0, 1), (2, 3)])
    switch.lock_ring(ring)
    locked, error_nm = switch.ring_status(ring)
    heater_mW, drop_mW = switch.transport.controller.ring_sweeps[ring]
    return {
        "ring": ring,
        "heater_mW": heater_mW,
        "drop_mW": drop_mW,
        "locked": locked,
        "error_nm": error_nm,
    }


def write_plots(
    folder: Path,
    fabric: Any,
    P: np.ndarray,
    plan: SwitchPlan,
    lock: dict[str, Any],
    steps: list[dict[str, Any]],
    progress: Progress | None = None,
) -> dict[str, str]:
    """Write the four PNGs into ``folder`` (created); their paths by name. The mesh and the
    power matrix (``P``, mW ``[output, input]``) show the same applied ``plan``.
    ``progress(stage, done, total)`` follows the plots."""
    tick = progress or (lambda stage, done, total: None)
    tick("plots", 0, 4)
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: str(folder / f"{name}.png") for name in ("mesh", "powers", "ring", "timeline")}
    theta = plan.theta

    if isinstance(fabric, MeshFabric):
        fig = _hexagonal_mesh_figure(fabric, theta, plan)
    else:
        fig = _feedforward_mesh_figure(fabric.mesh, theta, plan)
    fig.savefig(paths["mesh"], dpi=120, bbox_inches="tight")
    plt.close(fig)
    tick("plots", 1, 4)

    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(10 * np.log10(np.maximum(P, 1e-9)), cmap="magma", vmin=-90, vmax=0)
    fig.colorbar(image, label="detected power, dBm (1 mW in)")
    ax.set(
        xlabel="input (lit alone)",
        ylabel="output",
        title=f"measured powers: {len(plan.matching.pairs)} pairs",
    )
    fig.savefig(paths["powers"], dpi=120, bbox_inches="tight")
    plt.close(fig)
    tick("plots", 2, 4)

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(lock["heater_mW"], 10 * np.log10(np.maximum(lock["drop_mW"], 1e-12)), ".-")
    ax.set(
        xlabel="ring heater power, mW",
        ylabel="drop-port power, dBm",
        title=f"ring {lock['ring']} lock sweep (locked: {lock['locked']}, "
        f"error {lock['error_nm'] * 1e3:.1f} pm)",
    )
    fig.savefig(paths["ring"], dpi=120, bbox_inches="tight")
    plt.close(fig)
    tick("plots", 3, 4)

    fig, ax = plt.subplots(figsize=(7, 3))
    names = [s["step"] for s in steps] + ["published failover"]
    modeled = [s["modeled_s"] for s in steps] + [PUBLISHED_FAILOVER_S]
    computed = [s["compute_s"] for s in steps] + [0.0]
    y = np.arange(len(names))
    ax.barh(y - 0.2, modeled, 0.4, label="modeled hardware time")
    ax.barh(y + 0.2, computed, 0.4, label="compute time (measured)")
    ax.set_yticks(y, names)
    ax.set_xscale("log")
    ax.set(xlabel="seconds (log)", title="timeline")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.savefig(paths["timeline"], dpi=120, bbox_inches="tight")
    plt.close(fig)
    tick("plots", 4, 4)
    return paths


def _matching_title(plan: SwitchPlan) -> str:
    """The applied matching, wrapped for a title: ``matching 0-5 1-3 ...``."""
    pairs = " ".join(f"{a}-{b}" for a, b in plan.matching.pairs)
    return "\n".join(textwrap.wrap(f"matching {pairs}", 90))


def _cell_legend() -> list[Any]:
    """The legend entries both mesh figures share: a cell's state and whether it carries a
    circuit."""
    from matplotlib.lines import Line2D

    return [
        Line2D([], [], color="tab:blue", lw=4, label="bar"),
        Line2D([], [], color="tab:orange", lw=4, label="cross"),
        Line2D([], [], color="grey", lw=4, label="on a circuit"),
        Line2D([], [], color="grey", lw=1.2, label="parked"),
    ]


def _feedforward_mesh_figure(mesh: Any, theta: np.ndarray, plan: SwitchPlan) -> Any:
    """A feed-forward mesh drawn as its columns of MZIs between numbered ports (inputs left,
    outputs right): each MZI coloured bar or cross (``theta``, rad), thick where a circuit of
    ``plan`` crosses it; each circuit's light drawn from its input to its output."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

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
    # one colour per pair: its two circuits (a -> b, b -> a) carry the same link
    pairs = plan.matching.pairs
    colours = plt.get_cmap("viridis")(np.linspace(0, 0.9, max(len(pairs), 1)))
    for colour, pair in zip(colours, pairs, strict=True):
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
    ax.legend(
        handles=[
            *_cell_legend(),
            Line2D([], [], color=colours[0], lw=2.5, label="a pair's light (one colour)"),
        ],
        loc="upper left",
        bbox_to_anchor=(1.01, 1),
    )
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


def _hexagonal_mesh_figure(fabric: MeshFabric, theta: np.ndarray, plan: SwitchPlan) -> Any:
    """A recirculating mesh drawn as its lattice: each cell a segment along its edge at its
    position (um), coloured bar or cross (``theta``, rad), thick where a circuit of ``plan``
    crosses it, thin where parked; the endpoints' edge ports marked with their numbers."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

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
    ends = np.asarray(mesh.edge_port_positions_um)[list(fabric.endpoints)] / 1e3
    ax.scatter(ends[:, 0], ends[:, 1], s=40, c="black", zorder=3)
    middle = pos.mean(axis=0)
    for i, xy in enumerate(ends):
        out = (xy - middle) / max(float(np.linalg.norm(xy - middle)), 1e-9)
        ax.annotate(str(i), xy, xytext=xy + 0.25 * out, ha="center", va="center", fontsize=8)
    ax.legend(
        handles=[
            *_cell_legend(),
            Line2D([], [], color="black", marker="o", lw=0, label="endpoint (number)"),
        ],
        loc="upper left",
        bbox_to_anchor=(1.01, 1),
    )
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
