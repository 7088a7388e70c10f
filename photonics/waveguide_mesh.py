"""Recirculating waveguide meshes of 2x2 tunable cells: hexagonal, square and triangular.

Data model (shared with :mod:`photonics.routing`):

- a *cell* is a 2x2 tunable basic unit (an MZI) lying on one edge of a planar lattice of
  polygonal faces (hexagons, squares or triangles). It has four *port-ends*, numbered
  ``4 * cell + k``: ``k = 0, 1`` at its end A and ``k = 2, 3`` at its end B. Waveguide 0-2 and
  waveguide 1-3 are its two arms; ``bar`` joins 0<->2 and 1<->3, ``cross`` joins 0<->3 and 1<->2
  (light may run either way: the mesh is reciprocal);
- each waveguide of a cell belongs to one of the two faces the cell's edge borders: light that
  stays in bar goes on around the same face;
- ``links`` join port-ends of different cells (a fixed waveguide at a lattice vertex, one unit
  of length); a port-end in no link is an *edge port* of the mesh, numbered 0 .. n_ports-1 in
  ``edge_ports`` order.

Lattices (:func:`hexagonal_mesh`, :func:`square_mesh`, :func:`triangular_mesh`) are built by one
rule. The region is ``rows x cols`` faces; row 0 is the southernmost. Every distinct lattice edge
of those faces is a cell; cells are numbered by the position of their midpoint, south to north
then west to east (sort by ``(y, x)``). Geometry, with ``a = unit_length_um``:

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

Scattering (:func:`scattering`): each cell is the 2x2 transfer ``T`` of
:func:`photonics.mzi.imperfect_transfer` from end A to end B (mode 0 = arm 0-2, mode 1 = arm
1-3) and ``T^T`` from B to A, with no length of its own; each link is a waveguide of one unit
length ``a`` (phase ``2 pi n_eff(lambda) a / lambda``, loss in dB/cm). The default 811 um at
group index 4.2 is an 11.36 ps unit delay (Smartlight gen-1 quotes 811 um / 11.25 ps, i.e.
group index 4.16).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.sparse.csgraph import breadth_first_order
from scipy.sparse.linalg import splu

from photonics._checks import finite
from photonics.errors import PortError, SettingsError, ShapeError
from photonics.mzi import DEFAULT_LOSS_DB, MZIImperfections, imperfect_transfer

BAR, CROSS = 0, 1

#: Lattice kinds understood by :func:`lattice_mesh`.
KINDS = ("hexagonal", "square", "triangular")
#: Sides of the bounding box an edge port can be on.
SIDES = ("west", "east", "north", "south")
#: Hexagonal unit length (one cell plus its links), um: Smartlight gen-1 (design notes, s. 4).
DEFAULT_UNIT_LENGTH_UM = 811.0
#: Waveguide propagation loss, dB/cm (1.5-2.5 dB/cm, design notes s. 4).
DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM = 2.0
#: Unit-cell insertion loss, dB (0.46-0.55 dB, design notes s. 4).
DEFAULT_CELL_LOSS_DB = DEFAULT_LOSS_DB
#: Effective and group index of a 500 x 220 nm silicon wire at 1550 nm.
DEFAULT_N_EFF = 2.4
DEFAULT_N_G = 4.2
#: Design wavelength, nm; also the wavelength at which ``n_eff`` is given.
DEFAULT_WAVELENGTH_NM = 1550.0

#: Size of :func:`switch_6x6_mesh`: hexagonal, 3 rows x 6 columns of faces.
SWITCH_6X6_ROWS, SWITCH_6X6_COLS = 3, 6
#: Size of :func:`mesh_9x9`: hexagonal, 9 x 9 faces.
MESH_9X9_ROWS, MESH_9X9_COLS = 9, 9

_Vertex = tuple[int, int]


@dataclass(frozen=True, eq=False)
class WaveguideMesh:
    """A recirculating mesh as data (see the module docstring).

    - ``kind``: "hexagonal", "square" or "triangular";
    - ``cell_positions_um``: (n_cells, 2) centre of each cell, um;
    - ``links``: (n_links, 2) int, pairs of port-ends joined by a fixed waveguide;
    - ``edge_ports``: (n_ports,) int, the port-end of each edge port;
    - ``edge_port_sides``: (n_ports,) str, "west", "east", "north" or "south";
    - ``unit_length_um``: length of one cell plus its share of the links, um.

    Optional geometry (filled by the lattice constructors, ``None`` for hand-made meshes):

    - ``cell_faces``: (n_cells, 2) int, the face of arm 0-2 and of arm 1-3 of each cell, -1 for
      the outside;
    - ``face_centers_um``: (n_faces, 2) centre of each face, um (face ids are ``row * cols +
      col`` of the constructor);
    - ``edge_port_positions_um``: (n_ports, 2) position of each edge port, um.

    Construction checks that every port-end ``0 .. 4 n_cells - 1`` is in exactly one link or is
    exactly one edge port, and that no link joins two ends of one cell. Arrays are made
    read-only.
    """

    kind: str
    cell_positions_um: np.ndarray
    links: np.ndarray
    edge_ports: np.ndarray
    edge_port_sides: np.ndarray
    unit_length_um: float
    cell_faces: np.ndarray | None = None
    face_centers_um: np.ndarray | None = None
    edge_port_positions_um: np.ndarray | None = None

    def __post_init__(self) -> None:
        pos = finite("cell_positions_um", self.cell_positions_um)
        if pos.ndim != 2 or pos.shape[1] != 2:
            raise ShapeError(f"cell_positions_um has shape {pos.shape}; expected (n_cells, 2)")
        n = len(pos)
        links = _int_array("links", self.links)
        if links.size == 0:
            links = links.reshape(0, 2)
        if links.ndim != 2 or links.shape[1] != 2:
            raise ShapeError(f"links has shape {links.shape}; expected (n_links, 2)")
        ports = _int_array("edge_ports", self.edge_ports).reshape(-1)
        sides = np.asarray(self.edge_port_sides, dtype=str).reshape(-1)
        if sides.shape != ports.shape:
            raise ShapeError(
                f"edge_port_sides has {sides.size} entries; expected one per edge port "
                f"({ports.size})"
            )
        bad_sides = sorted(set(sides.tolist()) - set(SIDES))
        if bad_sides:
            raise SettingsError(f"edge_port_sides {bad_sides!r} are not among {SIDES}")
        ends = np.concatenate([links.ravel(), ports])
        if ends.size and (ends.min() < 0 or ends.max() >= 4 * n):
            bad = ends[(ends < 0) | (ends >= 4 * n)][0]
            raise PortError(f"port-end {bad} is out of range [0, {4 * n - 1}] ({n} cells)")
        uses = np.bincount(ends, minlength=4 * n)
        if np.any(uses != 1):
            bad = int(np.flatnonzero(uses != 1)[0])
            raise PortError(
                f"port-end {bad} is used {uses[bad]} times by links and edge ports; "
                "every port-end must be in exactly one link or be exactly one edge port"
            )
        same = links[:, 0] // 4 == links[:, 1] // 4
        if np.any(same):
            raise PortError(f"link {links[same][0].tolist()} joins two ends of one cell")
        unit = float(finite("unit_length_um", self.unit_length_um))
        if not unit > 0:
            raise SettingsError(f"unit_length_um must be > 0 um, got {self.unit_length_um!r}")
        checked: dict[str, np.ndarray | float] = {
            "cell_positions_um": pos,
            "links": links,
            "edge_ports": ports,
            "edge_port_sides": sides,
            "unit_length_um": unit,
        }
        if self.cell_faces is not None:
            faces = _int_array("cell_faces", self.cell_faces)
            if faces.shape != (n, 2) or (faces.size and faces.min() < -1):
                raise ShapeError(
                    f"cell_faces must be (n_cells, 2) = ({n}, 2) face ids >= -1, got shape "
                    f"{faces.shape}"
                )
            checked["cell_faces"] = faces
        if self.face_centers_um is not None:
            centers = finite("face_centers_um", self.face_centers_um)
            faces_given = checked.get("cell_faces")
            n_faces = None if faces_given is None else int(np.max(faces_given, initial=-1)) + 1
            if centers.ndim != 2 or centers.shape[1] != 2 or n_faces not in (None, len(centers)):
                raise ShapeError(
                    f"face_centers_um has shape {centers.shape}; expected (n_faces, 2) with "
                    f"n_faces = {n_faces}"
                )
            checked["face_centers_um"] = centers
        if self.edge_port_positions_um is not None:
            port_pos = finite("edge_port_positions_um", self.edge_port_positions_um)
            if port_pos.shape != (ports.size, 2):
                raise ShapeError(
                    f"edge_port_positions_um has shape {port_pos.shape}; expected ({ports.size}, 2)"
                )
            checked["edge_port_positions_um"] = port_pos
        for name, value in checked.items():
            if isinstance(value, np.ndarray):
                value = value.copy()
                value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def n_cells(self) -> int:
        return len(self.cell_positions_um)

    @property
    def n_ports(self) -> int:
        return len(self.edge_ports)

    @property
    def n_links(self) -> int:
        return len(self.links)

    @property
    def n_faces(self) -> int:
        """Number of faces of the region (the outside not counted)."""
        return int(np.max(self._faces(), initial=-1)) + 1

    def partner(self) -> np.ndarray:
        """(4 n_cells,) the port-end linked to each port-end, or -1 for an edge port."""
        out = np.full(4 * self.n_cells, -1, dtype=np.int64)
        out[self.links[:, 0]] = self.links[:, 1]
        out[self.links[:, 1]] = self.links[:, 0]
        return out

    def port_of_end(self) -> np.ndarray:
        """(4 n_cells,) the edge port index of each port-end, or -1 for a linked one."""
        out = np.full(4 * self.n_cells, -1, dtype=np.int64)
        out[self.edge_ports] = np.arange(self.n_ports)
        return out

    def side_ports(self, side: str) -> np.ndarray:
        """Edge ports on ``side``, sorted north to south (west, east) or west to east (north,
        south) by position; ties (the two ports of one vertex) by port index."""
        if side not in SIDES:
            raise SettingsError(f"side must be one of {SIDES}, got {side!r}")
        ports = np.flatnonzero(self.edge_port_sides == side)
        if self.edge_port_positions_um is None:
            return ports
        x, y = self.edge_port_positions_um[ports].T
        key = (ports, -y) if side in ("west", "east") else (ports, x)
        return ports[np.lexsort(key)]

    def outer_arm_partner(self) -> np.ndarray:
        """(n_ports,) for each edge port, the edge port at the other end of its arm if that
        arm runs between two edge ports (the outer arm of a boundary cell), else -1."""
        other = self.port_of_end()[_bar_end(self.edge_ports)]
        return np.where(other >= 0, other, -1)

    def cell_adjacency(self) -> np.ndarray:
        """(n_pairs, 2) int, each pair ``i < j`` of cells joined by at least one link, sorted."""
        cells = np.sort(self.links // 4, axis=1)
        return np.unique(cells, axis=0).reshape(-1, 2)

    def reachability(self) -> np.ndarray:
        """(n_ports, n_ports) bool ``R[out, in]``: some BAR/CROSS setting of the cells carries
        light from edge port ``in`` to edge port ``out`` (other paths' conflicts ignored).

        Symmetric (reciprocity). All True on hexagonal meshes. Square and triangular lattices
        have two-colourable faces, and a cross turns light circulating counter-clockwise in one
        face into light circulating clockwise in the next: their edge ports fall into two
        classes of equal size, and light only goes from one class to the other.
        """
        n_ends = 4 * self.n_cells
        ends = np.arange(n_ends)
        outs = np.stack([_bar_end(ends), ends - ends % 4 + 3 - ends % 4], axis=1)  # bar, cross
        partner, port_of = self.partner(), self.port_of_end()
        nxt = partner[outs]
        src = np.repeat(ends, 2).reshape(-1, 2)
        step = sp.csr_matrix(
            (np.ones(np.sum(nxt >= 0)), (src[nxt >= 0], nxt[nxt >= 0])), shape=(n_ends, n_ends)
        )
        exits = sp.csr_matrix(
            (np.ones(np.sum(nxt < 0)), (src[nxt < 0], port_of[outs[nxt < 0]])),
            shape=(n_ends, self.n_ports),
        )
        reach = np.zeros((self.n_ports, n_ends), dtype=bool)
        for p, start in enumerate(self.edge_ports):
            reach[p, breadth_first_order(step, int(start), return_predecessors=False)] = True
        return (exits.T @ sp.csr_matrix(reach.T)).toarray() > 0

    def face_cells(self, face: int) -> np.ndarray:
        """Cells around ``face``, in the order light in bar circulates (from its lowest cell,
        leaving that cell through end B)."""
        faces = self._faces()
        if isinstance(face, bool) or not isinstance(face, int | np.integer):
            raise SettingsError(f"face must be an integer face id, got {face!r}")
        if not 0 <= face < self.n_faces:
            raise SettingsError(f"face {face} is out of range [0, {self.n_faces - 1}]")
        cell, arm = map(int, np.argwhere(faces == face)[0])
        partner = self.partner()
        out = [cell]
        end = 4 * cell + arm + 2  # end B of the face's arm
        for _ in range(self.n_cells):
            end = int(partner[end])
            if end < 0 or end // 4 == out[0]:
                break
            out.append(end // 4)
            end = _bar_end(end)
        return np.array(out, dtype=np.int64)

    def _faces(self) -> np.ndarray:
        if self.cell_faces is None:
            raise SettingsError("this mesh has no cell_faces (build it with a lattice constructor)")
        return self.cell_faces


def _int_array(name: str, value: ArrayLike) -> np.ndarray:
    arr = np.asarray(value)
    if arr.size == 0:
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise ShapeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _bar_end(port_end: ArrayLike) -> np.ndarray:
    """The other end of the same arm (what :func:`through` gives in BAR), vectorised."""
    pe = np.asarray(port_end)
    return pe - pe % 4 + (pe % 4 + 2) % 4


def through(port_end: int, state: int) -> int:
    """The port-end of the same cell that light entering at ``port_end`` leaves from."""
    cell, k = divmod(port_end, 4)
    return 4 * cell + ((k + 2) % 4 if state == BAR else 3 - k)


def state_between(a: int, b: int) -> int:
    """The state (BAR or CROSS) that joins port-ends ``a`` and ``b`` of one cell."""
    return BAR if (a % 4 + 2) % 4 == b % 4 else CROSS


# --- lattices ------------------------------------------------------------------------------


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


def switch_6x6_mesh(unit_length_um: float = DEFAULT_UNIT_LENGTH_UM) -> WaveguideMesh:
    """The hexagonal mesh for a 6x6 switch on about 72 cells: 3 rows x 6 columns of hexagons.

    71 cells, 108 links, 68 edge ports: 10 west (ports 0-9, north to south), 10 east (ports
    43 down to 34, north to south), 24 south (10-33), 24 north (44-67). West and east each
    have 5 boundary cells (3 vertical edges, 2 slanted), two ports each. The region is 9.13 x
    4.06 mm at 811 um. Every west port reaches every east port; the shortest west-to-east
    paths cross 13 to 19 cells, 15.5 on average (Smartlight gen-1: 72 cells, 15 cells per
    path for its 6x6 switch).
    """
    return hexagonal_mesh(SWITCH_6X6_ROWS, SWITCH_6X6_COLS, unit_length_um)


def mesh_9x9(unit_length_um: float = DEFAULT_UNIT_LENGTH_UM) -> WaveguideMesh:
    """The "9x9 programmable mesh" class (PipSwitch: 32 ports): 9 x 9 hexagons.

    278 cells, 486 links, 140 edge ports: 34 west, 34 east, 36 north, 36 south; any 32 of them
    (e.g. 8 a side) can be the switch's fibre ports. Hexagonal rather than square: a square
    mesh of 9 x 9 faces (180 cells, 72 ports) splits its ports into two classes that only
    reach each other (see :meth:`WaveguideMesh.reachability`), so half the pairs of any 32
    ports could never be connected, which rules out all-to-all matchings; every port of a
    hexagonal mesh reaches every other.
    """
    return hexagonal_mesh(MESH_9X9_ROWS, MESH_9X9_COLS, unit_length_um)


# --- paths ---------------------------------------------------------------------------------


def forced_entry(mesh: WaveguideMesh, port: int) -> list[tuple[int, int, int, int]]:
    """(cell, state, entry, exit) of the cells a path from edge ``port`` must cross, each in
    the only state that does not lead straight back out of the mesh, until it has a choice."""
    partner = mesh.partner()
    entry = int(mesh.edge_ports[_port(mesh, "port", port)])
    hops: list[tuple[int, int, int, int]] = []
    seen: set[int] = set()
    while entry not in seen:
        seen.add(entry)
        inward = [s for s in (BAR, CROSS) if partner[through(entry, s)] >= 0]
        if len(inward) != 1:
            break
        out = through(entry, inward[0])
        hops.append((entry // 4, inward[0], entry, out))
        entry = int(partner[out])
    return hops


class TracedPath(NamedTuple):
    """The path of light through a mesh of cells in BAR/CROSS.

    ``exit_port``: edge port where it leaves; ``cells``: cells crossed, in order;
    ``port_ends``: (entry, exit) port-end of each cell crossed, flattened; ``n_links``: links
    crossed (``len(cells) - 1``).
    """

    exit_port: int
    cells: tuple[int, ...]
    port_ends: tuple[int, ...]
    n_links: int


def _states(mesh: WaveguideMesh, states: ArrayLike) -> np.ndarray:
    arr = np.asarray(states)
    if arr.shape != (mesh.n_cells,):
        raise ShapeError(f"states has shape {arr.shape}; expected ({mesh.n_cells},), one per cell")
    if not np.all((arr == BAR) | (arr == CROSS)):
        bad = arr[(arr != BAR) & (arr != CROSS)][0]
        raise SettingsError(f"states must be BAR ({BAR}) or CROSS ({CROSS}), got {bad}")
    return arr.astype(np.int64)


def _port(mesh: WaveguideMesh, name: str, port: object) -> int:
    if isinstance(port, bool) or not isinstance(port, int | np.integer):
        raise PortError(f"{name} must be an integer edge port, got {port!r}")
    if not 0 <= port < mesh.n_ports:
        raise PortError(f"{name} {port} is out of range [0, {mesh.n_ports - 1}]")
    return int(port)


def trace(mesh: WaveguideMesh, states: ArrayLike, port: int) -> TracedPath:
    """Follow light from edge ``port`` through cells in ``states`` (BAR/CROSS per cell).

    The cells' bar/cross maps and the links are a perfect matching of port-ends, so light
    entering at an edge port always leaves at an edge port.
    """
    st = _states(mesh, states)
    p = _port(mesh, "port", port)
    partner, port_of = mesh.partner(), mesh.port_of_end()
    end = int(mesh.edge_ports[p])
    cells: list[int] = []
    ends: list[int] = []
    for _ in range(4 * mesh.n_cells):
        out = through(end, int(st[end // 4]))
        cells.append(end // 4)
        ends += [end, out]
        if partner[out] < 0:
            return TracedPath(int(port_of[out]), tuple(cells), tuple(ends), len(cells) - 1)
        end = int(partner[out])
    raise AssertionError("a path from an edge port did not end")  # pragma: no cover


def theta_of_states(states: ArrayLike) -> np.ndarray:
    """``theta`` (rad) of BAR (0) / CROSS (pi / 2) states, any shape."""
    arr = np.asarray(states)
    if not np.all((arr == BAR) | (arr == CROSS)):
        raise SettingsError(f"states must be BAR ({BAR}) or CROSS ({CROSS}), got {states!r}")
    return np.where(arr == CROSS, np.pi / 2, 0.0)


# --- scattering ----------------------------------------------------------------------------

# the 8 non-zero entries of a cell's 4x4 scattering matrix: out end B (2 + i) from in end A (j)
# is T[i, j]; out end A (j) from in end B (2 + i) is T[i, j] too (reciprocity, T^T from B to A)
_ROWS = np.array([2, 2, 3, 3, 0, 1, 0, 1])
_COLS = np.array([0, 1, 0, 1, 2, 2, 3, 3])


def _nonneg(name: str, value: float, *, positive: bool = False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x) or x < 0 or (positive and x == 0):
        rng = "> 0" if positive else ">= 0"
        raise SettingsError(f"{name} must be a finite number {rng}, got {value!r}")
    return x


def _per_cell(name: str, value: ArrayLike, n: int) -> np.ndarray:
    arr = finite(name, value)
    if arr.shape != (n,):
        raise ShapeError(f"{name} has shape {arr.shape}; expected ({n},), one value per cell (rad)")
    return arr


def link_transmission(
    unit_length_um: float,
    wavelength_nm: float = DEFAULT_WAVELENGTH_NM,
    waveguide_loss_db_per_cm: float = DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM,
    n_eff: float = DEFAULT_N_EFF,
    n_g: float = DEFAULT_N_G,
    reference_wavelength_nm: float = DEFAULT_WAVELENGTH_NM,
) -> complex:
    """Complex amplitude transmission of one link (one unit length), dimensionless.

    Phase ``2 pi n_eff(lambda) L / lambda`` with ``n_eff`` linear in wavelength about
    ``reference_wavelength_nm`` so that the group index is ``n_g``:
    ``n_eff(lambda) = n_eff + (n_eff - n_g) (lambda - ref) / ref``. Amplitude
    ``10^(-loss_db_per_cm * L_cm / 20)``.
    """
    L_nm = _nonneg("unit_length_um", unit_length_um, positive=True) * 1e3
    wl = _nonneg("wavelength_nm", wavelength_nm, positive=True)
    loss = _nonneg("waveguide_loss_db_per_cm", waveguide_loss_db_per_cm)
    ne = _nonneg("n_eff", n_eff, positive=True)
    ng = _nonneg("n_g", n_g, positive=True)
    ref = _nonneg("reference_wavelength_nm", reference_wavelength_nm, positive=True)
    phase = 2 * np.pi * L_nm * (ng / wl + (ne - ng) / ref)
    return complex(10 ** (-loss * L_nm * 1e-7 / 20) * np.exp(1j * phase))


def scattering(
    mesh: WaveguideMesh,
    theta: ArrayLike,
    wavelength_nm: float = DEFAULT_WAVELENGTH_NM,
    cell_loss_db: float = DEFAULT_CELL_LOSS_DB,
    waveguide_loss_db_per_cm: float = DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM,
    n_eff: float = DEFAULT_N_EFF,
    n_g: float = DEFAULT_N_G,
    imperfections: MZIImperfections | None = None,
    phi: ArrayLike | None = None,
    *,
    reference_wavelength_nm: float = DEFAULT_WAVELENGTH_NM,
) -> np.ndarray:
    """The (n_ports, n_ports) complex scattering matrix between edge ports, loops included.

    ``S[out, in]`` is the field amplitude leaving edge port ``out`` for unit amplitude entering
    ``in`` (``|S|^2`` a power fraction).

    - ``theta``, ``phi``: (n_cells,) MZI settings, rad (0 = bar, pi/2 = cross); ``phi``
      defaults to 0;
    - ``wavelength_nm``: wavelength, nm; ``n_eff`` (given at ``reference_wavelength_nm``) and
      group index ``n_g`` set each link's phase (see :func:`link_transmission`);
    - ``cell_loss_db``: insertion loss of every cell (dB, >= 0) with ideal couplers, used only
      when ``imperfections`` is None; otherwise ``imperfections`` (scalars or one value per
      cell) describe the cells completely: splitter errors and their own
      ``loss_bar_db``/``loss_cross_db``;
    - ``waveguide_loss_db_per_cm``: link loss, dB/cm (>= 0), over one unit length per link.

    Each cell scatters ``T`` from end A to end B and ``T^T`` back, links join port-ends: with
    ``a`` the waves entering cells and ``b`` the waves leaving them, ``b = S_c (P b + e)``, so
    ``(I - S_c P) b = S_c e``, solved for all edge-port excitations ``e`` at once by a sparse LU
    factorisation. The result is reciprocal (``S = S^T``), passive, and unitary when nothing
    is lossy and the couplers are ideal. About 2 ms for :func:`switch_6x6_mesh`, 10-20 ms for
    :func:`mesh_9x9`.
    """
    n = mesh.n_cells
    th = _per_cell("theta", theta, n)
    ph = np.zeros(n) if phi is None else _per_cell("phi", phi, n)
    g = link_transmission(
        mesh.unit_length_um,
        wavelength_nm,
        waveguide_loss_db_per_cm,
        n_eff,
        n_g,
        reference_wavelength_nm,
    )
    loss = _nonneg("cell_loss_db", cell_loss_db)
    if imperfections is None:
        imp = MZIImperfections(loss_bar_db=loss, loss_cross_db=loss)
    elif isinstance(imperfections, MZIImperfections):
        imperfections.check_count(n)
        imp = imperfections
    else:
        raise SettingsError(
            f"imperfections must be MZIImperfections or None, got {type(imperfections).__name__}"
        )
    T = imperfect_transfer(th, ph, imp).reshape(n, 4)
    vals = np.concatenate([T, T], axis=1).ravel()
    base = 4 * np.arange(n)[:, None]
    rows = (base + _ROWS).ravel()
    cols = (base + _COLS).ravel()

    partner = mesh.partner()
    linked = partner[cols] >= 0
    N = 4 * n
    SP = sp.coo_matrix((vals[linked] * g, (rows[linked], partner[cols[linked]])), shape=(N, N))
    M = (sp.identity(N, dtype=complex, format="csc") - SP.tocsc()).tocsc()
    port_of = mesh.port_of_end()
    fed = ~linked
    rhs = np.zeros((N, mesh.n_ports), dtype=complex)
    np.add.at(rhs, (rows[fed], port_of[cols[fed]]), vals[fed])
    if mesh.n_ports == 0:
        return np.zeros((0, 0), dtype=complex)
    b = splu(M).solve(rhs)
    return b[mesh.edge_ports]


def insertion_loss_db(S: ArrayLike, in_port: ArrayLike, out_port: ArrayLike) -> np.ndarray:
    """Insertion loss ``-10 log10 |S[out, in]|^2``, dB (``inf`` where no light arrives)."""
    S_arr = np.asarray(S)
    if S_arr.ndim != 2 or S_arr.shape[0] != S_arr.shape[1]:
        raise ShapeError(f"S has shape {S_arr.shape}; expected a square matrix")
    i, o = np.asarray(in_port), np.asarray(out_port)
    for name, p in (("in_port", i), ("out_port", o)):
        if not np.issubdtype(p.dtype, np.integer) or np.any((p < 0) | (p >= len(S_arr))):
            raise PortError(f"{name} must be integer ports in [0, {len(S_arr) - 1}], got {p!r}")
    with np.errstate(divide="ignore"):
        return -10 * np.log10(np.abs(S_arr[o, i]) ** 2)


def port_powers(S: ArrayLike, in_port: int) -> np.ndarray:
    """(n_ports,) power fraction reaching every edge port from edge port ``in_port``."""
    S_arr = np.asarray(S)
    if S_arr.ndim != 2 or S_arr.shape[0] != S_arr.shape[1]:
        raise ShapeError(f"S has shape {S_arr.shape}; expected a square matrix")
    if isinstance(in_port, bool) or not isinstance(in_port, int | np.integer):
        raise PortError(f"in_port must be an integer edge port, got {in_port!r}")
    if not 0 <= in_port < len(S_arr):
        raise PortError(f"in_port {in_port} is out of range [0, {len(S_arr) - 1}]")
    return np.abs(S_arr[:, in_port]) ** 2


def lattice_counts(mesh: WaveguideMesh) -> dict[str, int]:
    """Cells, links, edge ports, faces and edge ports per side of ``mesh``."""
    counts = {
        "cells": mesh.n_cells,
        "links": mesh.n_links,
        "ports": mesh.n_ports,
        "faces": mesh.n_faces if mesh.cell_faces is not None else 0,
    }
    for side in SIDES:
        counts[side] = int(np.sum(mesh.edge_port_sides == side))
    return counts


__all__ = [
    "BAR",
    "CROSS",
    "KINDS",
    "SIDES",
    "TracedPath",
    "WaveguideMesh",
    "hexagonal_mesh",
    "insertion_loss_db",
    "lattice_counts",
    "lattice_mesh",
    "link_transmission",
    "mesh_9x9",
    "port_powers",
    "scattering",
    "square_mesh",
    "state_between",
    "switch_6x6_mesh",
    "theta_of_states",
    "through",
    "trace",
    "triangular_mesh",
]
