"""Recirculating waveguide meshes of 2x2 tunable cells as data, and light traced through them.

Data model (shared with :mod:`photonics.recirculating.lattices`, which builds hexagonal, square and
triangular meshes, :mod:`photonics.recirculating.mesh_scattering`, which solves their light, and
:mod:`photonics.recirculating.routing`):

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

Paths (:func:`trace`, :func:`forced_entry`): with every cell in BAR or CROSS, light entering at
an edge port follows one path of port-ends to the edge port where it leaves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.sparse.csgraph import breadth_first_order

from photonics._checks import finite
from photonics.errors import PortError, SettingsError, ShapeError
from photonics.recirculating import _route_kernel

BAR, CROSS = 0, 1

#: Sides of the bounding box an edge port can be on.
SIDES = ("west", "east", "north", "south")


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

    def __repr__(self) -> str:
        return (
            f"<WaveguideMesh {self.kind}: {self.n_ports} edge ports, {self.n_cells} cells, "
            f"{self.n_links} links, {self.unit_length_um:g} um edges>"
        )

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


def reach(partner: np.ndarray, starts: ArrayLike, allowed: np.ndarray) -> np.ndarray:
    """Breadth-first search over the port-ends of a mesh (``partner``:
    :meth:`WaveguideMesh.partner`) from the entry port-ends ``starts``, through the cells
    ``allowed`` (bool, one per cell) in bar or cross: for every port-end light can arrive at,
    the port-end through which it entered the previous cell (-1 for a start); -2 elsewhere.
    Compiled: a calibration runs it tens of thousands of times."""
    # contiguous and writable, so one compiled signature serves every caller
    return _route_kernel.reach(
        np.require(partner, np.int64, ["C", "W"]),
        np.require(np.reshape(starts, -1), np.int64, ["C", "W"]),
        np.require(allowed, np.bool_, ["C", "W"]),
    )


def state_between(a: int, b: int) -> int:
    """The state (BAR or CROSS) that joins port-ends ``a`` and ``b`` of one cell."""
    return BAR if (a % 4 + 2) % 4 == b % 4 else CROSS


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
    "SIDES",
    "TracedPath",
    "WaveguideMesh",
    "forced_entry",
    "lattice_counts",
    "state_between",
    "theta_of_states",
    "through",
    "trace",
]
