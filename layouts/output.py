"""Files: the GDS of a layout, a picture of it rendered headless, and the GDS read back.

Rendering uses klayout's own layout view (no display, no Qt needed) with the generic PDK's layer
colours, on a white background.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import gdsfactory as gf
import klayout.db as kdb
import klayout.lay as klay

from layouts.cells import with_generic_pdk
from layouts.meshes import MeshLayout
from photonics.errors import InvalidInputError

#: klayout stores an instance's name as this user property in the GDS.
NAME_PROPERTY = 0


@with_generic_pdk
def write_gds(layout: MeshLayout, path: str | Path) -> Path:
    """Write ``layout`` (its top cell and everything below) as GDSII to ``path``."""
    out = Path(path)
    layout.component.write_gds(out)
    return out


@with_generic_pdk
def render_png(gds: str | Path, png: str | Path, width_px: int = 1600) -> Path:
    """Render the top cell of the GDS file ``gds`` to the PNG ``png``, ``width_px`` wide (the
    height follows the die's aspect ratio, at least 200 px), headless."""
    gds_path, png_path = Path(gds), Path(png)
    ly = kdb.Layout()
    ly.read(str(gds_path))
    box = ly.top_cell().dbbox()
    height_px = max(200, round(width_px * box.height() / max(box.width(), 1e-9)))
    view = klay.LayoutView()
    view.load_layout(str(gds_path))
    with tempfile.TemporaryDirectory() as tmp:
        lyp = Path(tmp) / "layers.lyp"
        gf.gpdk.PDK.get_layer_views().to_lyp(lyp)
        view.load_layer_props(str(lyp))
    view.set_config("background-color", "#ffffff")
    view.set_config("grid-visible", "false")
    view.max_hier()
    view.zoom_fit()
    view.save_image(str(png_path), width_px, min(height_px, 4 * width_px))
    return png_path


@dataclass(frozen=True)
class GdsContents:
    """What a GDS file holds, read back: its top cell, the die size (um) and the top cell's
    instances counted by name prefix (``mzi``, ``cell``, ``ring``, ``pad``, ``wg``) and by
    child cell."""

    top: str
    die_size_um: tuple[float, float]
    by_prefix: dict[str, int]
    by_cell: dict[str, int]
    n_cells: int


def read_gds(path: str | Path) -> GdsContents:
    """Read the GDS file ``path`` with klayout and count its top cell's instances."""
    ly = kdb.Layout()
    ly.read(str(path))
    tops = ly.top_cells()
    if len(tops) != 1:
        raise InvalidInputError(f"{path} has {len(tops)} top cells, expected 1")
    top = tops[0]
    prefixes: Counter[str] = Counter()
    cells: Counter[str] = Counter()
    for inst in top.each_inst():
        name = str(inst.properties().get(NAME_PROPERTY, ""))
        prefixes[name.split("_", 1)[0]] += 1
        cells[inst.cell.name] += 1
    box = top.dbbox()
    return GdsContents(
        top.name, (box.width(), box.height()), dict(prefixes), dict(cells), ly.cells()
    )
