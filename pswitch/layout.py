"""``pswitch layout``: build a chip's layout, write its GDS and a picture, check it.

The check compares the layout with its model: the optical graph, the metal nets and, for a
feed-forward mesh, the heaters (count and positions) with the default chip model's
(``photonics.chips.chip.ChipSpec(n_ports=..., mesh=...)``), which puts them where the layout draws
them (:func:`photonics.feedforward.chip_geometry.drawn_geometry`).

This module imports gdsfactory only when the command runs, so ``pswitch demo`` and the other
commands never load it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
from pathlib import Path
from typing import Any

from photonics.chips import topologies
from photonics.errors import PswitchError, SettingsError
from pswitch import args as types
from pswitch.progress import progress_bar, stage

#: What the command lays out besides the registered topologies: one heated add-drop ring.
RING = "ring"
#: Largest feed-forward mesh the command builds (n = 128 has 8128 MZIs).
MAX_PORTS = 128

EXAMPLES = """examples:
  pswitch layout --mesh clements --ports 8 -o mesh.gds --png mesh.png
  pswitch layout --mesh reck --ports 16 --no-pads -o reck16.gds
  pswitch layout --mesh hexagonal --ports 16 -o hex.gds --png hex.png
  pswitch layout --mesh switch6x6 -o switch.gds     the 6x6 switch's 71-cell mesh
  pswitch layout --mesh ring -o ring.gds --json     a heated add-drop ring with pads
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``layout`` subcommand to the ``pswitch`` parser's subcommands."""
    parser = sub.add_parser(
        "layout",
        help="write the GDS layout of a mesh or ring, with a picture and checks",
        description=(
            "Build the gdsfactory layout of an emulated chip's circuit from its model, write it "
            "as GDS (and a PNG rendered headless), and check it against the model: the optical "
            "graph extracted from the layout's netlist, the heater metal (no shorts, no "
            "opens) and, for a feed-forward mesh, every heater's place against the chip "
            "model's (count and positions). Prints the element count, die size and check "
            "results; exits 1 when a check fails. Needs the `layout` extra (gdsfactory)."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--mesh",
        choices=[*topologies.names(), RING],
        default="clements",
        help="a switch's mesh, or one ring (default clements)",
    )
    parser.add_argument(
        "--ports",
        type=types.integer(2, MAX_PORTS),
        default=None,
        help="the switch's ports (default: the mesh's own)",
    )
    parser.add_argument(
        "--no-pads", action="store_true", help="feed-forward meshes: leave the heaters unwired"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=types.output_file,
        default="layout.gds",
        help="GDS file to write (layout.gds)",
    )
    parser.add_argument(
        "--png", type=types.output_file, default=None, help="also render a picture to this PNG file"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(run=run)


def checked_ports(args: argparse.Namespace) -> int | None:
    """The ports of the mesh to lay out (None for the ring), every option checked against the
    mesh before anything is built."""
    if args.output.suffix.lower() != ".gds":
        raise SettingsError(f"-o writes GDS; give a file name ending .gds, got {args.output}")
    # (so --png can never name the GDS file: the suffixes differ)
    if args.png is not None and args.png.suffix.lower() != ".png":
        raise SettingsError(f"--png writes a PNG; give a file name ending .png, got {args.png}")
    feed_forward = args.mesh != RING and topologies.topology(args.mesh).kind == "feedforward"
    if args.no_pads and not feed_forward:
        raise SettingsError(
            f"--no-pads is for feed-forward meshes; the {args.mesh} layout's heaters are "
            + ("wired to its two pads" if args.mesh == RING else "never wired to pads")
        )
    if args.mesh == RING:
        if args.ports is not None:
            raise SettingsError("--ports is for a mesh; the ring layout is one ring")
        return None
    topology = topologies.topology(args.mesh)
    if not topology.layout:
        raise SettingsError(f"the {args.mesh} topology has no layout builder")
    return topology.check_ports(topology.default_ports if args.ports is None else args.ports)


def build(mesh: str, ports: int | None, pads: bool) -> Any:
    """The :class:`layouts.meshes.MeshLayout` of the registered topology ``mesh`` for
    ``ports`` (its own builder on its mesh), or of the ring."""
    from layouts.cells import PadSettings
    from layouts.meshes import LayoutSettings
    from layouts.rings import ring_layout

    if ports is None:
        return ring_layout()
    topology = topologies.topology(mesh)
    module, _, function = topology.layout.partition(":")
    builder = getattr(importlib.import_module(module), function)
    settings = LayoutSettings(pads=PadSettings() if pads else None)
    return builder(topology.geometry(ports).mesh, settings)


def model_heaters_um(mesh: str, ports: int | None) -> Any:
    """The default chip model's heater positions ((H, 2) um) of a feed-forward topology
    ``mesh`` at ``ports``, to check the layout's against; None for other layouts."""
    if ports is None or mesh not in topologies.names(kind="feedforward"):
        return None
    from photonics.chips.build import build_chip

    return build_chip(mesh, ports).heater_positions_um


def run(args: argparse.Namespace) -> int:
    """Build, write, render and check; print the results. 0 when every check passes, else 1."""
    ports = checked_ports(args)
    tick = progress_bar()
    try:
        with stage(tick, "layout: loading gdsfactory"):
            from layouts.check import check_layout
            from layouts.output import read_gds, render_png, write_gds
    except ImportError as exc:
        raise PswitchError(
            f"the layout command needs gdsfactory ({exc.name} is missing): "
            "pip install 'pswitch-photonics[layout]'"
        ) from None
    t0 = time.perf_counter()
    with stage(tick, "layout: building the cells"):
        layout = build(args.mesh, ports, not args.no_pads)
    build_s = time.perf_counter() - t0
    with stage(tick, "layout: writing the GDS file"):
        gds = write_gds(layout, args.output)
        named = [(p.name, *p.center) for p in layout.component.ports]  # labelled in the picture
        png = render_png(gds, args.png, ports=named) if args.png else None
        contents = read_gds(gds)
    with stage(tick, "layout: checking it against the model"):
        check = check_layout(layout, model_heaters_um(args.mesh, ports))
    width, height = layout.die_size_um
    result = {
        "mesh": args.mesh,
        "ports": ports,
        "kind": layout.kind,
        "elements": layout.n_elements,
        "pads": layout.n_pads,
        "die_width_um": width,
        "die_height_um": height,
        "build_s": build_s,
        "gds": str(gds),
        "png": None if png is None else str(png),
        "gds_instances": contents.by_prefix,
        "graph_ok": check.graph.ok,
        "graph_differences": check.graph.lines(),
        "metal_ok": check.metal.ok,
        "metal_regions": check.metal.regions,
        "metal_expected": check.metal.expected,
        "metal_problems": list(check.metal.problems),
        "check_s": check.graph_s + check.metal_s,
        "heaters_ok": None if check.heaters is None else check.heaters.ok,
        "heaters_drawn": None if check.heaters is None else check.heaters.drawn,
        "heaters_model": None if check.heaters is None else check.heaters.expected,
        "ok": check.ok,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result, layout, check)
    return 0 if check.ok else 1


def _print(result: dict[str, Any], layout: Any, check: Any) -> None:
    what = {"clements": "MZIs", "reck": "MZIs", "ring": "ring"}.get(layout.kind, "cells")
    print(
        f"{result['mesh']} layout: {result['elements']} {what}, {result['pads']} pads; die "
        f"{result['die_width_um'] / 1e3:.2f} x {result['die_height_um'] / 1e3:.2f} mm; built "
        f"in {result['build_s']:.2f} s"
    )
    counts = ", ".join(f"{n} {k}" for k, n in sorted(result["gds_instances"].items()))
    print(f"wrote {result['gds']} (read back: {counts})")
    if result["png"]:
        print(f"rendered {result['png']} ({Path(result['png']).stat().st_size // 1024} kB)")
    for line in check.lines():
        print(line)
