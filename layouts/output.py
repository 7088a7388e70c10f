"""Files: the GDS of a layout, a picture of it rendered headless, and the GDS read back.

Rendering uses klayout's own layout view (no display, no Qt needed) with the generic PDK's layer
colours, on a white background; matplotlib then adds a scale bar and the ports' names.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import gdsfactory as gf
import klayout.db as kdb
import klayout.lay as klay
import numpy as np

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
def render_png(
    gds: str | Path,
    png: str | Path,
    width_px: int = 1600,
    ports: Sequence[tuple[str, float, float]] = (),
) -> Path:
    """Render the top cell of the GDS file ``gds`` to the PNG ``png``, ``width_px`` wide (the
    height follows the die's aspect ratio, at least 200 px), headless: klayout draws the layers,
    then a scale bar and each of ``ports`` (name, x, y in um; e.g. a component's optical
    ports) labelled where it is."""
    gds_path, png_path = Path(gds), Path(png)
    ly = kdb.Layout()
    ly.read(str(gds_path))
    box = ly.top_cell().dbbox()
    height_px = min(max(200, round(width_px * box.height() / max(box.width(), 1e-9))), 4 * width_px)
    view = klay.LayoutView()
    view.load_layout(str(gds_path))
    with tempfile.TemporaryDirectory() as tmp:
        lyp = Path(tmp) / "layers.lyp"
        gf.gpdk.PDK.get_layer_views().to_lyp(lyp)
        view.load_layer_props(str(lyp))
        view.set_config("background-color", "#ffffff")
        view.set_config("grid-visible", "false")
        view.max_hier()
        # the region drawn: the die with a margin, at the image's aspect ratio, um
        margin = 0.04 * max(box.width(), box.height())
        half_w = max(box.width() / 2 + margin, (box.height() / 2 + margin) * width_px / height_px)
        half_h = half_w * height_px / width_px
        middle = box.center()
        shown = kdb.DBox(middle.x - half_w, middle.y - half_h, middle.x + half_w, middle.y + half_h)
        raw = Path(tmp) / "layers.png"
        view.save_image_with_options(str(raw), width_px, height_px, 1, 1, 1, shown, False)
        _annotate(raw, png_path, (shown.left, shown.right, shown.bottom, shown.top), ports)
    return png_path


def scale_bar_um(span_um: float) -> float:
    """A round length for a scale bar across a view ``span_um`` wide: 1, 2 or 5 times a power
    of ten, at most a fifth of the span."""
    top = span_um / 5
    power = 10 ** np.floor(np.log10(top))
    return float(max(step * power for step in (1, 2, 5) if step * power <= top))


def _annotate(
    raw: Path,
    png: Path,
    extent: tuple[float, float, float, float],
    ports: Sequence[tuple[str, float, float]],
) -> None:
    """The klayout image ``raw`` of the region ``extent`` (left, right, bottom, top, um) into
    ``png`` at the same size, with a scale bar in its lower left and the ``ports`` labelled."""
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    image = plt.imread(str(raw))
    height, width = image.shape[:2]
    fig = plt.figure(figsize=(width / 100, height / 100), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    left, right, bottom, top = extent
    ax.imshow(image, extent=extent, interpolation="nearest")
    ax.set_axis_off()
    span = right - left
    length = scale_bar_um(span)
    x0, y0 = left + 0.03 * span, bottom + 0.04 * (top - bottom)
    ax.plot(
        [x0, x0 + length], [y0, y0], color="black", lw=3, solid_capstyle="butt", gid="scale bar"
    )
    label = f"{length / 1e3:g} mm" if length >= 1e3 else f"{length:g} um"
    ax.annotate(
        label,
        (x0 + length / 2, y0),
        xytext=(0, 4),
        textcoords="offset points",
        ha="center",
        va="bottom",
        fontsize=9,
    )
    middle = ((left + right) / 2, (bottom + top) / 2)
    for name, x, y in ports:
        # the label just outside the port, away from the die's middle
        dx, dy = x - middle[0], y - middle[1]
        norm = max(float(np.hypot(dx, dy)), 1e-9)
        ax.annotate(
            name,
            (x, y),
            xytext=(6 * dx / norm, 6 * dy / norm),
            textcoords="offset points",
            ha="left" if dx >= 0 else "right",
            va="center",
            fontsize=7,
            color="0.1",
            gid=f"port {name}",
        )
    ax.set_xlim(left, right)
    ax.set_ylim(bottom, top)
    fig.savefig(str(png), dpi=100)
    plt.close(fig)


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
