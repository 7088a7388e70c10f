"""Hexagonal, square and triangular recirculating meshes, built from a region of lattice faces.

The meshes (:class:`~photonics.recirculating.waveguide_mesh.WaveguideMesh`) of
:func:`hexagonal_mesh`, :func:`square_mesh` and :func:`triangular_mesh` are built by one rule. The
region is ``rows x cols`` faces; row 0 is the southernmost. Every distinct lattice edge of those
faces is a cell; cells are numbered by the position of their midpoint, south to north then west to
east (sort by ``(y, x)``). Geometry, with ``a = unit_length_um``:

- a lattice edge (vertex to vertex) is ``a`` long, so a face of ``m`` sides is a ring of ``m``
  cells and ``m`` links, ``m a`` long; a cell sits at its edge's midpoint
  (``cell_positions_um``), so neighbouring cells around a face are ``a cos(pi / m)`` apart
  (hexagon: ``0.866 a``, 702 um at the default 811 um). The south-west corner of the region's
  bounding box is the origin, x east, y north;
- end A of a cell is the edge's vertex with the smaller x (the southern one for a vertical
  edge), end B the other one. Arm 0-2 runs on the left of the way A -> B (the northern arm of
  a horizontal edge, the western arm of a vertical one), arm 1-3 on the right; each arm belongs
  to the face on its side (``cell_faces``; -1 is the outside);
- at every vertex and for every face of the region that touches it, the face's arm-ends on its
  two edges meeting there are joined by a link: light in bar circulates around the face.
  Arm-ends of the outside are never linked: each boundary cell has an *outer arm* running
  between two edge ports (the two ports of one outer arm are joined by bar);
- edge ports are numbered along the region's boundary, counter-clockwise (region on the left)
  starting at the boundary vertex nearest the north-west corner of the bounding box, i.e. down
  the west side first, then east along the south side, up the east side, back along the north
  side. An edge port's position (``edge_port_positions_um``) is a quarter of the way along its
  cell's edge from its vertex. Each boundary cell gets the side ("west", "east", "north",
  "south") of the bounding box nearest its midpoint (ties: west, east, north, south), shared
  by its two edge ports. :meth:`WaveguideMesh.side_ports` lists one side's ports in
  north-to-south (west, east) or west-to-east (north, south) order.
"""

from __future__ import annotations

import math

import numpy as np

from photonics.errors import SettingsError, ShapeError
from photonics.recirculating.waveguide_mesh import SIDES, WaveguideMesh

#: Lattice kinds understood by :func:`lattice_mesh`.
KINDS = ("hexagonal", "square", "triangular")
#: Hexagonal unit length (one cell plus its links), um: Smartlight gen-1 (Perez-Lopez et al.,
#: Nat. Commun. 15, 1563 (2024); docs/physics.md).
DEFAULT_UNIT_LENGTH_UM = 811.0

_Vertex = tuple[int, int]


def _size(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ShapeError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _unit(unit_length_um: float) -> float:
    try:
        unit = float(unit_length_um)
    except (TypeError, ValueError):
        raise SettingsError(f"unit_length_um must be a number, got {unit_length_um!r}") from None
    if not (math.isfinite(unit) and unit > 0):
        raise SettingsError(f"unit_length_um must be a finite number > 0, got {unit_length_um!r}")
    return unit


def _hexagon_faces(rows: int, cols: int) -> list[list[_Vertex]]:
    # pointy-top hexagons, odd rows shifted east by half a hexagon; x in units of sqrt(3) a / 2,
    # y in units of a / 2; vertices counter-clockwise
    faces = []
    for r in range(rows):
        for c in range(cols):
            x, y = 2 * c + r % 2, 3 * r
            faces.append(
                [
                    (x + 1, y - 1),
                    (x + 1, y + 1),
                    (x, y + 2),
                    (x - 1, y + 1),
                    (x - 1, y - 1),
                    (x, y - 2),
                ]
            )
    return faces


def _square_faces(rows: int, cols: int) -> list[list[_Vertex]]:
    return [
        [(c, r), (c + 1, r), (c + 1, r + 1), (c, r + 1)] for r in range(rows) for c in range(cols)
    ]


def _triangle_faces(rows: int, cols: int) -> list[list[_Vertex]]:
    # row r, triangle j spans x in [j, j + 2] (units of a / 2; y in units of sqrt(3) a / 2); it
    # points up when j + r is even. Every row covers the same x range.
    faces = []
    for r in range(rows):
        for j in range(cols):
            if (j + r) % 2 == 0:
                faces.append([(j, r), (j + 2, r), (j + 1, r + 1)])
            else:
                faces.append([(j, r + 1), (j + 1, r), (j + 2, r + 1)])
    return faces


_LATTICES = {
    # kind: (faces, (x unit, y unit) in lattice edge lengths)
    "hexagonal": (_hexagon_faces, (math.sqrt(3) / 2, 0.5)),
    "square": (_square_faces, (1.0, 1.0)),
    "triangular": (_triangle_faces, (0.5, math.sqrt(3) / 2)),
}


def _build(kind: str, rows: int, cols: int, unit_length_um: float) -> WaveguideMesh:
    """The mesh of a region of faces (see the module docstring for the rule)."""
    make_faces, (ux, uy) = _LATTICES[kind]
    polys = make_faces(rows, cols)
    scale = np.array([ux, uy]) * unit_length_um

    # edges, and the face on each side: left[(u, v)] = face whose ccw boundary runs u -> v
    left: dict[tuple[_Vertex, _Vertex], int] = {}
    for f, poly in enumerate(polys):
        for i, u in enumerate(poly):
            left[(u, poly[(i + 1) % len(poly)])] = f
    edges = sorted({(min(u, v), max(u, v)) for u, v in left}, key=lambda e: _edge_key(e))
    cell_of = {e: i for i, e in enumerate(edges)}  # (A, B) with A < B in (x, y) order
    faces = np.array([[left.get((a, b), -1), left.get((b, a), -1)] for a, b in edges])

    def end(u: _Vertex, v: _Vertex, face: int, at: _Vertex) -> int:
        """Port-end of ``face``'s arm of the cell on edge u-v, at vertex ``at``."""
        a, b = min(u, v), max(u, v)
        cell = cell_of[(a, b)]
        arm = int(np.flatnonzero(faces[cell] == face)[0])
        return 4 * cell + arm + (0 if at == a else 2)

    links = []
    for f, poly in enumerate(polys):
        m = len(poly)
        for i, v in enumerate(poly):
            prev, nxt = poly[i - 1], poly[(i + 1) % m]
            pair = sorted((end(prev, v, f, v), end(v, nxt, f, v)))
            links.append(pair)
    links_arr = np.array(sorted(links), dtype=np.int64)

    # boundary walk: ccw around the region (region on the left) from the vertex nearest NW
    step = {u: v for (u, v) in left if (v, u) not in left}
    if len(step) != sum(1 for f in faces.ravel() if f < 0):
        raise AssertionError("region boundary is not a simple cycle")  # pragma: no cover
    verts = np.array(sorted({v for poly in polys for v in poly}), dtype=float) * scale
    lo, hi = verts.min(axis=0), verts.max(axis=0)

    def phys(v: _Vertex) -> np.ndarray:
        return np.array(v, dtype=float) * scale - lo

    size = hi - lo
    nw = np.array([0.0, size[1]])
    start = min(step, key=lambda v: (round(float(np.hypot(*(phys(v) - nw))), 9), v))
    ports, port_pos, sides = [], [], []
    u = start
    for _ in range(len(step)):
        v = step[u]
        mid = (phys(u) + phys(v)) / 2
        dist = [mid[0], size[0] - mid[0], size[1] - mid[1], mid[1]]  # west, east, north, south
        side = SIDES[int(np.argmin(np.round(dist, 9)))]
        for at, other in ((u, v), (v, u)):
            ports.append(end(u, v, -1, at))
            port_pos.append(phys(at) + (phys(other) - phys(at)) / 4)
            sides.append(side)
        u = v
    if u != start:
        raise AssertionError("region boundary is not one cycle")  # pragma: no cover

    mids = np.array([(np.array(a) + np.array(b)) / 2 for a, b in edges]) * scale - lo
    centers = np.array([np.mean(poly, axis=0) for poly in polys]) * scale - lo
    return WaveguideMesh(
        kind=kind,
        cell_positions_um=mids,
        links=links_arr,
        edge_ports=np.array(ports, dtype=np.int64),
        edge_port_sides=np.array(sides),
        unit_length_um=unit_length_um,
        cell_faces=faces,
        face_centers_um=centers,
        edge_port_positions_um=np.array(port_pos),
    )


def _edge_key(edge: tuple[_Vertex, _Vertex]) -> tuple[int, int, _Vertex, _Vertex]:
    (ax, ay), (bx, by) = edge
    return (ay + by, ax + bx, *edge)  # midpoint (y, x), then the vertices


def hexagonal_mesh(
    rows: int, cols: int, unit_length_um: float = DEFAULT_UNIT_LENGTH_UM
) -> WaveguideMesh:
    """A honeycomb patch of ``rows x cols`` pointy-top hexagons (odd rows shifted east by half a
    hexagon), hexagon side ``unit_length_um`` (um).

    ``(3 rows + 2) cols + 2 rows - 1`` cells, ``6 rows cols`` links, ``8 (rows + cols) - 4``
    edge ports; e.g. 1x1: 6 cells, 6 links, 12 ports; 2x2: 19 cells, 24 links, 28 ports.
    """
    return _build("hexagonal", _size("rows", rows), _size("cols", cols), _unit(unit_length_um))


def square_mesh(
    rows: int, cols: int, unit_length_um: float = DEFAULT_UNIT_LENGTH_UM
) -> WaveguideMesh:
    """A ``rows x cols`` patch of squares of side ``unit_length_um`` (um).

    ``2 rows cols + rows + cols`` cells, ``4 rows cols`` links, ``4 (rows + cols)`` edge ports.
    """
    return _build("square", _size("rows", rows), _size("cols", cols), _unit(unit_length_um))


def triangular_mesh(
    rows: int, cols: int, unit_length_um: float = DEFAULT_UNIT_LENGTH_UM
) -> WaveguideMesh:
    """``rows`` strips of ``cols`` equilateral triangles of side ``unit_length_um`` (um),
    alternately pointing up and down (row ``r``'s first triangle points up for even ``r``);
    every strip spans the same x range.

    A single column of two or more rows would touch only at vertices, so ``cols >= 2`` is
    required when ``rows >= 2``. ``3 rows cols`` links; e.g. 1x1: 3 cells, 3 links, 6 ports;
    2x2: 9 cells, 12 links, 12 ports.
    """
    r, c = _size("rows", rows), _size("cols", cols)
    if r >= 2 and c < 2:
        raise ShapeError(
            f"a triangular mesh of rows={r} >= 2 needs cols >= 2 (its rows would only touch at "
            f"vertices), got cols={c}"
        )
    return _build("triangular", r, c, _unit(unit_length_um))


def lattice_mesh(
    kind: str, rows: int, cols: int, unit_length_um: float = DEFAULT_UNIT_LENGTH_UM
) -> WaveguideMesh:
    """:func:`hexagonal_mesh`, :func:`square_mesh` or :func:`triangular_mesh` by ``kind``."""
    constructors = {
        "hexagonal": hexagonal_mesh,
        "square": square_mesh,
        "triangular": triangular_mesh,
    }
    if kind not in constructors:
        raise SettingsError(f"kind must be one of {KINDS}, got {kind!r}")
    return constructors[kind](rows, cols, unit_length_um)


__all__ = [
    "DEFAULT_UNIT_LENGTH_UM",
    "KINDS",
    "hexagonal_mesh",
    "lattice_mesh",
    "square_mesh",
    "triangular_mesh",
]
