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

To be completed: the lattice constructors and the scattering solve (see the module's issue).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BAR, CROSS = 0, 1


@dataclass(frozen=True, eq=False)
class WaveguideMesh:
    """A recirculating mesh as data (see the module docstring).

    - ``kind``: "hexagonal", "square" or "triangular";
    - ``cell_positions_um``: (n_cells, 2) centre of each cell, um;
    - ``links``: (n_links, 2) int, pairs of port-ends joined by a fixed waveguide;
    - ``edge_ports``: (n_ports,) int, the port-end of each edge port;
    - ``edge_port_sides``: (n_ports,) str, "west", "east", "north" or "south";
    - ``unit_length_um``: length of one cell plus its share of the links, um.
    """

    kind: str
    cell_positions_um: np.ndarray
    links: np.ndarray
    edge_ports: np.ndarray
    edge_port_sides: np.ndarray
    unit_length_um: float

    @property
    def n_cells(self) -> int:
        return len(self.cell_positions_um)

    @property
    def n_ports(self) -> int:
        return len(self.edge_ports)

    def partner(self) -> np.ndarray:
        """(4 n_cells,) the port-end linked to each port-end, or -1 for an edge port."""
        out = np.full(4 * self.n_cells, -1, dtype=np.int64)
        out[self.links[:, 0]] = self.links[:, 1]
        out[self.links[:, 1]] = self.links[:, 0]
        return out


def through(port_end: int, state: int) -> int:
    """The port-end of the same cell that light entering at ``port_end`` leaves from."""
    cell, k = divmod(port_end, 4)
    return 4 * cell + ((k + 2) % 4 if state == BAR else 3 - k)


def state_between(a: int, b: int) -> int:
    """The state (BAR or CROSS) that joins port-ends ``a`` and ``b`` of one cell."""
    return BAR if (a % 4 + 2) % 4 == b % 4 else CROSS
