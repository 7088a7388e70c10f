"""Layouts: how long building and checking a mesh's gdsfactory layout takes, and whether every
built mesh matches its model.

For Clements and Reck meshes of n = 4, 8, 16, 32 ports, with and without bond pads (each
heater's east terminal to its own pad, each column's west terminals to a shared return pad), and
for the hexagonal 6x6-switch mesh (71 cells) and the 9x9 mesh (278 cells):

- build: :func:`layouts.meshes.feedforward_layout` / ``waveguide_mesh_layout`` from a cold
  gdsfactory cache (the MZI cell is built too), best of ``--repeat``;
- check: :func:`layouts.check.check_layout`: the netlist extracted and reduced to the MZI graph
  and compared with the model's (``graph``), and the metal merged into regions and compared
  with the expected nets (``metal``);
- GDS: written to a temporary file and read back, instances counted.

Figures: ``build_s_{n}``, ``build_pads_s_{n}``, ``graph_check_s_{n}``, ``metal_check_s_{n}``
(Clements, with pads for the checks), the same prefixed ``reck_`` for Reck, ``hex_6x6_*`` and
``hex_9x9_*``, ``die_mm_32`` (width, height of the 32-port Clements die with pads) and
``check_ok_all`` (true when every built layout matched its model and its metal) and ``rows``
(one object a layout built: ``mesh``, ``size``, ``pads``, ``elements``, ``die_mm``, ``build_s``,
``graph_s``, ``metal_s``, ``gds_s``, ``ok``).

Run::

    python benchmarks/bench_layouts.py          # table
    python benchmarks/bench_layouts.py --json   # one JSON object
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from layouts.cells import clear_cache, with_generic_pdk
from layouts.check import check_layout
from layouts.meshes import LayoutSettings, MeshLayout, feedforward_layout, waveguide_mesh_layout
from layouts.output import read_gds, write_gds
from photonics.feedforward.meshes import ClementsMesh, ReckMesh
from photonics.recirculating.switch_geometry import mesh_9x9, switch_6x6_mesh

SIZES = (4, 8, 16, 32)


def _cold_build(make: Callable[[], MeshLayout], repeat: int) -> tuple[MeshLayout, float]:
    """The layout and the best wall time (s) of building it from an empty cell cache."""
    best, layout = float("inf"), None
    for _ in range(repeat):
        clear_cache()
        t0 = time.perf_counter()
        layout = make()
        best = min(best, time.perf_counter() - t0)
    assert layout is not None
    return layout, best


@with_generic_pdk  # activated once, outside the timed builds
def measure(repeat: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Figures (see the module docstring) and one table row per layout built."""
    figures: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    ok_all = True
    cases: list[tuple[str, str, Callable[[], MeshLayout]]] = []
    for kind, cls in (("", ClementsMesh), ("reck_", ReckMesh)):
        for n in SIZES:
            for pads in (False, True):
                settings = LayoutSettings() if pads else LayoutSettings(pads=None)
                key = f"{kind}build{'_pads' if pads else ''}_s_{n}"
                cases.append((key, f"{n}", _ff(cls, n, settings)))
    cases.append(("hex_6x6_build_s", "6x6", lambda: waveguide_mesh_layout(switch_6x6_mesh())))
    cases.append(("hex_9x9_build_s", "9x9", lambda: waveguide_mesh_layout(mesh_9x9())))
    with tempfile.TemporaryDirectory() as tmp:
        for key, size, make in cases:
            layout, build_s = _cold_build(make, repeat)
            check = check_layout(layout)
            t0 = time.perf_counter()
            gds = write_gds(layout, Path(tmp) / f"{key}.gds")
            contents = read_gds(gds)
            gds_s = time.perf_counter() - t0
            counted = contents.by_prefix.get("mzi", 0) + contents.by_prefix.get("cell", 0)
            ok = check.ok and counted == layout.n_elements
            ok_all &= ok
            figures[key] = build_s
            prefix = key.split("build")[0]
            if "_pads" in key or prefix.startswith("hex"):
                suffix = "" if prefix.startswith("hex") else f"_{size}"
                figures[f"{prefix}graph_check_s{suffix}"] = check.graph_s
                figures[f"{prefix}metal_check_s{suffix}"] = check.metal_s
            width, height = layout.die_size_um
            if key == "build_pads_s_32":
                figures["die_mm_32"] = [round(width / 1e3, 2), round(height / 1e3, 2)]
            rows.append(
                {
                    "mesh": layout.kind,
                    "size": size,
                    "pads": layout.n_pads,
                    "elements": layout.n_elements,
                    "die_mm": f"{width / 1e3:.1f} x {height / 1e3:.1f}",
                    "build_s": build_s,
                    "graph_s": check.graph_s,
                    "metal_s": check.metal_s,
                    "gds_s": gds_s,
                    "ok": ok,
                }
            )
    figures["check_ok_all"] = ok_all
    # every layout's row (mesh, size, pads, elements, die, times): the README's table
    figures["rows"] = rows
    return figures, rows


def _ff(cls: type, n: int, settings: LayoutSettings) -> Callable[[], MeshLayout]:
    return lambda: feedforward_layout(cls(n), settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeat", type=int, default=3, help="cold builds per layout (best)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: one build per layout")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
    figures, rows = measure(args.repeat)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"Layouts built from an empty cell cache (best of {args.repeat}), checked, GDS read back")
    head = (
        f"{'mesh':<10} {'size':>4} {'elements':>8} {'pads':>5} {'die (mm)':>12} "
        f"{'build s':>8} {'graph s':>8} {'metal s':>8} {'gds s':>6}  check"
    )
    print(head)
    for r in rows:
        print(
            f"{r['mesh']:<10} {r['size']:>4} {r['elements']:>8} {r['pads']:>5} "
            f"{r['die_mm']:>12} {r['build_s']:>8.2f} {r['graph_s']:>8.2f} {r['metal_s']:>8.3f} "
            f"{r['gds_s']:>6.2f}  {'ok' if r['ok'] else 'FAILED'}"
        )
    print(f"every layout matches its model: {figures['check_ok_all']}")


if __name__ == "__main__":
    main()
