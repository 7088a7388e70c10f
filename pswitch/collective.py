"""``pswitch collective``: a collective of distributed training compiled into the switch's
matchings and timed against an ideal electrical switch.

The collective (ring or halving/doubling all-reduce, reduce-scatter, all-gather, an all-to-all,
the straggler-aware all-reduce) runs on ranks 0..N-1, rank i on port i of a P-port feed-forward
switch. Each round's links are coloured into matchings; each matching is planned on the mesh
(one the mesh cannot realise is split into realisable ones). A step costs ``alpha + bytes /
bandwidth`` for its most loaded circuit, plus, on the optical switch, the reconfiguration
before it when its matching differs from the step before: the firmware's heater write model
(every changed cell written, then the heaters' settling; the first matching from the idle
chip). The ideal electrical switch runs each round at once, with no reconfiguration. The duty
cycle is the transfer time over the total. With a straggler late by D ms, every step waits for
it except the straggler-aware all-reduce's first phase, which the other ranks run meanwhile.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from photonics import topologies
from photonics.errors import SettingsError
from pswitch import args as types

if TYPE_CHECKING:  # the compiler is imported when the command runs, not with its parser
    from firmware.fabric import Collective

#: The algorithms by command-line name: (function name in firmware.fabric, all-reduce?).
ALGORITHMS = {
    "ring-all-reduce": ("ring_all_reduce", True),
    "halving-doubling": ("halving_doubling_all_reduce", True),
    "straggler-all-reduce": ("straggler_all_reduce", True),
    "reduce-scatter": ("ring_reduce_scatter", False),
    "all-gather": ("ring_all_gather", False),
    "all-to-all-shift": ("all_to_all_shift", False),
    "all-to-all-cover": ("all_to_all_pairs", False),
    "all-to-all-ring": ("all_to_all_ring", False),
}
#: Largest switch compiled here (as ``pswitch route``'s feed-forward switches).
MAX_PORTS = 256
#: Largest buffer per rank, bytes (1 PiB).
MAX_BYTES = 2.0**50
#: Longest ``--straggler-ms`` (an hour).
MAX_STRAGGLER_MS = 3.6e6
#: Steps listed in the text output (all of them in ``--json``).
LIST_STEPS = 40

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1e3,
    "mb": 1e6,
    "gb": 1e9,
    "tb": 1e12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}

EXAMPLES = """examples:
  pswitch collective ring-all-reduce --ranks 16 --bytes 1GiB
  pswitch collective halving-doubling --ranks 16 --bytes 64MiB --plot hd.png
  pswitch collective straggler-all-reduce --ranks 8 --bytes 1GiB --straggler-ms 50
  pswitch collective all-to-all-cover --ranks 16 --bytes 256MiB --json
"""


def size(text: str) -> float:
    """An argument type: a size in bytes, a number with an optional unit (KB, MB, GB, TB in
    powers of 1000; KiB, MiB, GiB, TiB in powers of 1024), e.g. 4096, 1e9, 64MiB, 1.5GB."""
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*", text)
    value = math.nan
    if m and m.group(2).lower() in _UNITS:
        with contextlib.suppress(ValueError):
            value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not 0 < value <= MAX_BYTES:  # NaN fails too
        raise argparse.ArgumentTypeError(
            f"needs a size > 0 and <= 1 PiB, a number with an optional unit (B, KB, MB, GB, TB, "
            f"KiB, MiB, GiB, TiB), e.g. 64MiB; got {text!r}"
        )
    return value


def alpha(text: str) -> float:
    """An argument type: a step latency in us, >= 0 and <= 1 s."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1e6:
        raise argparse.ArgumentTypeError(f"needs a number of us >= 0 and <= 1e+06, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``collective`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "collective",
        help="a training collective compiled into matchings, timed against an electrical switch",
        description=types.plain(__doc__),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("algorithm", choices=tuple(ALGORITHMS), help="the collective")
    parser.add_argument(
        "--ranks", type=types.integer(2, MAX_PORTS), required=True, help="ranks, one per port"
    )
    parser.add_argument(
        "--bytes",
        type=size,
        required=True,
        dest="n_bytes",
        metavar="SIZE",
        help="buffer per rank: bytes, or with a unit, e.g. 64MiB, 1GB",
    )
    parser.add_argument(
        "--ports",
        type=types.integer(2, MAX_PORTS),
        default=None,
        help="switch ports, >= --ranks (default: --ranks)",
    )
    parser.add_argument(
        "--mesh",
        choices=topologies.names(kind="feedforward"),
        default="clements",
        help="the switch's feed-forward mesh (default clements)",
    )
    parser.add_argument(
        "--straggler-ms",
        type=types.number(MAX_STRAGGLER_MS, "ms"),
        default=None,
        help="the last rank is late by this many ms (default: none late)",
    )
    parser.add_argument(
        "--bandwidth-gbps",
        type=types.number(1e6, "Gb/s"),
        default=400.0,
        help="port bandwidth each way, Gb/s (default 400)",
    )
    parser.add_argument(
        "--alpha-us",
        type=alpha,
        default=5.0,
        help="latency of each step, us (default 5)",
    )
    parser.add_argument(
        "--plot", type=types.output_file, default=None, help="write a Gantt chart to this PNG"
    )
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.set_defaults(run=run)


def check(args: argparse.Namespace) -> int:
    """The switch's port count; raises :class:`SettingsError` on options that do not fit."""
    ports = args.ranks if args.ports is None else args.ports
    if ports < args.ranks:
        raise SettingsError(f"--ports {ports} is fewer than --ranks {args.ranks}; one rank a port")
    if args.algorithm == "straggler-all-reduce" and args.ranks < 3:
        raise SettingsError("straggler-all-reduce needs --ranks >= 3 (one late, two ready)")
    if args.plot is not None and args.plot.suffix.lower() != ".png":
        raise SettingsError(f"--plot writes a PNG; give a file name ending .png, got {args.plot}")
    return ports


def build(name: str, ranks: int, n_bytes: float) -> Collective:
    """The collective ``name`` (a key of :data:`ALGORITHMS`) of ``ranks`` ranks on ports 0..."""
    from firmware import fabric

    return getattr(fabric, ALGORITHMS[name][0])(range(ranks), n_bytes)


def timings(
    c: Collective, ports: int, mesh: str, link: Any, delay_s: float
) -> tuple[Any, Any, Any]:
    """``c`` compiled for a ``ports``-port ``mesh`` switch: (the schedule, its timing on the
    optical switch, the electrical switch's), with a straggler late by ``delay_s``."""
    from firmware.fabric import (
        HeaterWriteModel,
        circuit_timing,
        compile_collective,
        electrical_timing,
        with_straggler,
    )

    fabric = topologies.topology(mesh).fabric(ports)
    schedule = compile_collective(c, ports, fabric)
    optical = with_straggler(circuit_timing(schedule, link, HeaterWriteModel()), delay_s)
    electrical = with_straggler(electrical_timing(c, link), delay_s)
    return schedule, optical, electrical


def collective(args: argparse.Namespace) -> dict[str, Any]:
    """Compile and time the collective; the steps, totals and the all-reduce comparison as data
    (s, bytes)."""
    from firmware.fabric import Link, Round

    ports = check(args)
    link = Link(bandwidth_Bps=args.bandwidth_gbps * 1e9 / 8, alpha_s=args.alpha_us * 1e-6)
    delay_s = (args.straggler_ms or 0.0) * 1e-3
    c = build(args.algorithm, args.ranks, args.n_bytes)
    schedule, optical, electrical = timings(c, ports, args.mesh, link, delay_s)
    steps = []
    for st, t in zip(schedule.steps, optical.steps, strict=True):
        steps.append(
            {
                "round": st.round_index,
                "label": st.label,
                "pairs": [list(p) for p in st.matching.pairs],
                "transfers": [[tr.src, tr.dst] for tr in st.transfers],
                "bytes_per_circuit": c.round_bytes(Round(st.transfers)),
                "reconfigure_s": t.reconfigure_s,
                "start_s": t.start_s,
                "end_s": t.end_s,
            }
        )
    transfer_s = sum(t.end_s - t.start_s - t.reconfigure_s for t in optical.steps)
    compare = []
    for name, (_, all_reduce) in ALGORITHMS.items():
        if not all_reduce or (name == "straggler-all-reduce" and args.ranks < 3):
            continue
        if name == args.algorithm:
            o, e = optical, electrical
        else:
            other = build(name, args.ranks, args.n_bytes)
            _, o, e = timings(other, ports, args.mesh, link, delay_s)
        compare.append({"algorithm": name, "optical_s": o.total_s, "electrical_s": e.total_s})
    best = min(compare, key=lambda row: row["optical_s"])["algorithm"]
    return {
        "algorithm": args.algorithm,
        "name": c.name,
        "kind": c.kind,
        "ranks": args.ranks,
        "ports": ports,
        "mesh": args.mesh,
        "bytes": args.n_bytes,
        "link": {"bandwidth_Bps": link.bandwidth_Bps, "alpha_s": link.alpha_s},
        "straggler_s": delay_s,
        "steps": steps,
        "rounds": len(c.rounds),
        "matchings": schedule.n_matchings,
        "reconfigurations": sum(1 for t in optical.steps if t.reconfigure_s > 0),
        "optical_total_s": optical.total_s,
        "electrical_total_s": electrical.total_s,
        "reconfigure_s": optical.reconfigure_s,
        "transfer_s": transfer_s,
        "duty_cycle": transfer_s / optical.total_s if optical.total_s else 1.0,
        "all_reduce_compare": compare,
        "best_optical_all_reduce": best,
    }


def human(n_bytes: float) -> str:
    """A size as people write it: ``1 GiB``, ``64 MiB``, ``1.5e+09 B``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale and (n_bytes / scale).is_integer():
            return f"{n_bytes / scale:g} {unit}"
    return f"{n_bytes:.4g} B"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def _print(r: dict[str, Any]) -> None:
    gbps = r["link"]["bandwidth_Bps"] * 8 / 1e9
    print(
        f"{r['name']} of {r['ranks']} ranks, {human(r['bytes'])} each, on a {r['ports']}-port "
        f"{r['mesh']} switch ({gbps:g} Gb/s a port, alpha {r['link']['alpha_s'] * 1e6:g} us): "
        f"{r['rounds']} rounds, {len(r['steps'])} steps, {r['matchings']} matchings"
    )
    if r["straggler_s"]:
        print(f"rank {r['ranks'] - 1} is late by {_ms(r['straggler_s'])} ms")
    show = r["ports"] <= 16
    print(
        "  step  round  label            bytes/circuit  reconfigure ms  start ms    end ms"
        + ("  matching" if show else "  circuits")
    )
    for i, s in enumerate(r["steps"][:LIST_STEPS]):
        pairs = " ".join(f"{a}-{b}" for a, b in s["pairs"]) if show else len(s["pairs"])
        print(
            f"  {i:>4} {s['round']:>6}  {s['label']:<16} {s['bytes_per_circuit']:>13.0f} "
            f"{_ms(s['reconfigure_s']):>15} {_ms(s['start_s']):>9} {_ms(s['end_s']):>9}  {pairs}"
        )
    if len(r["steps"]) > LIST_STEPS:
        print(f"  ... {len(r['steps']) - LIST_STEPS} more steps (all of them in --json)")
    ratio = r["optical_total_s"] / r["electrical_total_s"]
    print(
        f"total: optical {_ms(r['optical_total_s'])} ms ({r['reconfigurations']} "
        f"reconfigurations, {_ms(r['reconfigure_s'])} ms), ideal electrical "
        f"{_ms(r['electrical_total_s'])} ms ({ratio:.2f}x); duty cycle "
        f"{100 * r['duty_cycle']:.1f} % (transfer time / total)"
    )
    print("all-reduce at this size      optical ms  electrical ms")
    for row in r["all_reduce_compare"]:
        mark = (
            "  <- fastest on the optical switch"
            if row["algorithm"] == r["best_optical_all_reduce"]
            else ""
        )
        print(
            f"  {row['algorithm']:<24} {_ms(row['optical_s']):>12} "
            f"{_ms(row['electrical_s']):>14}{mark}"
        )


def write_plot(r: dict[str, Any], path: Path) -> None:
    """A Gantt chart of ``r`` (:func:`collective`'s result) into the PNG ``path``: one row per
    rank, a bar for each step it sends in (coloured by phase), the reconfigurations shaded, the
    straggler's wait hatched, the electrical switch's total marked."""
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    ranks = r["ranks"]
    labels = list(dict.fromkeys(s["label"] for s in r["steps"]))
    colours = {lab: plt.get_cmap("tab10")(i % 10) for i, lab in enumerate(labels)}
    fig, ax = plt.subplots(figsize=(10, max(3.0, min(12.0, 1.5 + 0.25 * ranks))))
    bars: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for s in r["steps"]:
        begin = (s["start_s"] + s["reconfigure_s"]) * 1e3
        width = (s["end_s"] * 1e3) - begin
        for rank in {src for src, _ in s["transfers"]}:
            bars.setdefault((rank, s["label"]), []).append((begin, width))
        if s["reconfigure_s"] > 0:
            ax.axvspan(s["start_s"] * 1e3, begin, color="0.85", zorder=0, lw=0)
    for (rank, label), spans in bars.items():
        ax.broken_barh(spans, (rank - 0.4, 0.8), facecolors=colours[label], edgecolor="none")
    if r["straggler_s"]:
        ax.broken_barh(
            [(0.0, r["straggler_s"] * 1e3)],
            (ranks - 1 - 0.4, 0.8),
            facecolors="none",
            edgecolor="0.4",
            hatch="//",
        )
    ax.axvline(r["electrical_total_s"] * 1e3, color="k", ls="--", lw=1.2)
    ax.axvline(r["optical_total_s"] * 1e3, color="C3", ls="-", lw=1.2)
    handles = [Patch(color=colours[lab], label=lab) for lab in labels]
    handles.append(Patch(color="0.85", label="reconfiguration"))
    if r["straggler_s"]:
        handles.append(Patch(facecolor="none", edgecolor="0.4", hatch="//", label="straggler late"))
    handles += [
        plt.Line2D(
            [],
            [],
            color="k",
            ls="--",
            label=f"electrical total {_ms(r['electrical_total_s'])} ms",
        ),
        plt.Line2D([], [], color="C3", label=f"optical total {_ms(r['optical_total_s'])} ms"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set_ylim(ranks - 0.5, -0.5)
    if ranks <= 32:
        ax.set_yticks(range(ranks))
    ax.set_ylabel("rank (bars: sending)")
    ax.set_xlabel("time (ms)")
    ax.set_xlim(0, max(r["optical_total_s"], r["electrical_total_s"]) * 1e3 * 1.02)
    ax.set_title(
        f"{r['name']}, {r['ranks']} ranks, {human(r['bytes'])} each, {r['ports']}-port "
        f"{r['mesh']} switch; duty cycle {100 * r['duty_cycle']:.1f} %",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    result = collective(args)
    if args.plot is not None:
        write_plot(result, args.plot)
        result["plot"] = str(args.plot)
    if args.json:
        print(json.dumps(result))
    else:
        _print(result)
        if args.plot is not None:
            print(f"plot: {args.plot}")
    return 0
