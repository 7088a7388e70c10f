"""Light in a recirculating mesh: the scattering matrix between its edge ports, loops included.

Each cell (:mod:`photonics.recirculating.waveguide_mesh`) is the 2x2 transfer ``T`` of
:func:`photonics.devices.mzi.imperfect_transfer` from end A to end B (mode 0 = arm 0-2, mode 1 = arm
1-3) and ``T^T`` from B to A, with no length of its own; each link is a waveguide of one unit
length ``a`` (phase ``2 pi n_eff(lambda) a / lambda``, loss in dB/cm). The default 811 um at
group index 4.2 is an 11.36 ps unit delay (Smartlight gen-1 quotes 811 um / 11.25 ps, i.e.
group index 4.16).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.sparse.linalg import splu

from photonics._checks import finite
from photonics.devices.mzi import DEFAULT_LOSS_DB, MZIImperfections, imperfect_transfer
from photonics.errors import PortError, SettingsError, ShapeError
from photonics.recirculating.waveguide_mesh import WaveguideMesh

#: Waveguide propagation loss, dB/cm (1.5-2.5 dB/cm: Perez-Lopez et al., Nat. Commun. 15, 1563
#: (2024); docs/physics.md).
DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM = 2.0
#: Unit-cell insertion loss, dB (0.46-0.55 dB, the same source).
DEFAULT_CELL_LOSS_DB = DEFAULT_LOSS_DB
#: Effective and group index of a 500 x 220 nm silicon wire at 1550 nm.
DEFAULT_N_EFF = 2.4
DEFAULT_N_G = 4.2
#: Design wavelength, nm; also the wavelength at which ``n_eff`` is given.
DEFAULT_WAVELENGTH_NM = 1550.0

#: Working set of one block-diagonal solve, bytes: a batch of states is solved in blocks of as
#: many states as fit, each state taking its right-hand sides and about :data:`FILL_PER_ROW`
#: entries of LU factors per row (complex, 16 bytes each). Past a core's cache the factorisation
#: and the triangular solves slow down per state (mesh_9x9, 32 right-hand sides: 1.3 ms a state
#: for 2 states at once, 8 ms for 16); at this size a block is never slower than the states one
#: by one, and up to twice as fast on the 6x6 switch's mesh.
BLOCK_BYTES = 1 << 20
#: Entries of the LU factors per row of the system, about (measured: 7 on switch_6x6_mesh,
#: 14.5 on mesh_9x9).
FILL_PER_ROW = 16
#: Most cells a batch of states may differ in from a factorised state and still be solved as
#: low-rank updates of it (Woodbury): each changed cell adds 4 right-hand sides to one solve,
#: against a factorisation per state (mesh_9x9: 3.6 ms a factorisation, ~30 us a right-hand
#: side).
LOW_RANK_CELLS = 8

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


def unit_link_loss_db(unit_length_um: float, waveguide_loss_db_per_cm: float) -> float:
    """Loss of one link (one unit length of waveguide), dB."""
    return waveguide_loss_db_per_cm * unit_length_um * 1e-4


def path_loss_db(cell_loss_db: ArrayLike, link_db: float) -> float:
    """Loss of a routed path, dB: its cells' losses (one per cell crossed, in dB) plus one link
    ``link_db`` between each two consecutive cells."""
    cells = np.asarray(cell_loss_db, dtype=float)
    return float(np.sum(cells) + (cells.size - 1) * link_db)


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
    factorisation (:class:`MeshSolver`). The result is reciprocal (``S = S^T``), passive, and
    unitary when nothing is lossy and the couplers are ideal. About 1 ms for
    :func:`~photonics.recirculating.switch_geometry.switch_6x6_mesh`, 8 ms for
    :func:`~photonics.recirculating.switch_geometry.mesh_9x9`.
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
    return mesh_solver(mesh).solve(imperfect_transfer(th, ph, imp), g)


class MeshSolver:
    """The scattering solve of one mesh, analysed once and evaluated for many states.

    With ``b`` the waves leaving the cells' port-ends, ``e`` the waves entering at edge ports,
    ``S_c`` the cells' scattering and ``P`` the links (each transmitting ``g``):
    ``b = S_c (g P b + e)``, i.e. ``(I - g S_c P) b = S_c e``. The mesh fixes where every
    entry of the matrix and of the right-hand sides comes from (which cell transfer entry,
    which edge port); that is worked out here once. A state only fills the values: a batch of
    states is one block-diagonal sparse system (in blocks of :data:`BLOCK_BYTES`), factorised
    once (sparse LU) and solved for all the wanted inputs at once. Solving the states one by one
    gives the same results to about 1e-16.

    Most batches differ in a few cells only (a calibration sweeps one cell's heater with the
    others still): those are solved as low-rank updates (Woodbury) of one factorised state,
    the last one factorised, kept while the states asked for stay within
    :data:`LOW_RANK_CELLS` cells of it (agreeing with the direct solve to about 1e-13).
    """

    def __init__(self, mesh: WaveguideMesh) -> None:
        n = mesh.n_cells
        N = 4 * n
        base = 4 * np.arange(n)[:, None]
        rows = (base + _ROWS).ravel()
        cols = (base + _COLS).ravel()
        source = (base + np.arange(8) % 4).ravel()  # entry of T.reshape(n_cells * 4)
        partner = mesh.partner()
        linked = partner[cols] >= 0
        # the matrix I - g S_c P in compressed columns: the diagonal, then the linked entries
        row = np.concatenate([np.arange(N), rows[linked]])
        col = np.concatenate([np.arange(N), partner[cols[linked]]])
        order = np.lexsort((row, col))
        position = np.empty_like(order)
        position[order] = np.arange(order.size)
        self.n_cells, self.size, self.nnz = n, N, order.size
        self.indices = row[order].astype(np.int32)
        self.indptr = np.r_[0, np.cumsum(np.bincount(col, minlength=N))].astype(np.int32)
        self.diagonal = position[:N]
        self.entries, self.entry_source = position[N:], source[linked]
        # right-hand sides: a cell entry whose input port-end is an edge port is fed from it
        fed = ~linked
        self.fed_rows, self.fed_source = rows[fed], source[fed]
        self.fed_port = mesh.port_of_end()[cols[fed]]
        self.edge_ports = mesh.edge_ports
        self.n_ports = mesh.n_ports
        # for the low-rank updates: each linked entry's row and column
        self.entry_row, self.entry_col = rows[linked], partner[cols[linked]]
        # for derivatives: every cell entry's out row, in port-end and transfer entry, and the
        # port-ends' partners (-1 at the edge)
        self.cell_rows, self.cell_cols, self.cell_source = rows, cols, source
        self.partner = partner
        #: The state factorised last: (link, its values (4 n_cells,), its LU); replaced whole.
        self._factored: _Factored | None = None

    def solve(
        self,
        T: np.ndarray,
        link: complex,
        outputs: np.ndarray | None = None,
        inputs: np.ndarray | None = None,
    ) -> np.ndarray:
        """``S[..., outputs, inputs]`` for cells with the transfer matrices ``T``, shape
        ``(..., n_cells, 2, 2)`` (end A to end B, any phase of the cell's own included; leading
        axes are a batch of states), and links transmitting ``link`` (complex amplitude).
        ``outputs`` and ``inputs`` are edge ports (default: all); fewer inputs, fewer
        right-hand sides."""
        every = np.arange(self.n_ports)
        outputs = every if outputs is None else np.asarray(outputs, dtype=np.int64)
        inputs = every if inputs is None else np.asarray(inputs, dtype=np.int64)
        T = np.asarray(T, dtype=complex)
        if T.shape[-3:] != (self.n_cells, 2, 2):
            raise ShapeError(f"T has shape {T.shape}; expected (..., {self.n_cells}, 2, 2)")
        batch = T.shape[:-3]
        values = T.reshape(-1, 4 * self.n_cells)
        out = np.zeros((len(values), outputs.size, inputs.size), complex)
        column = np.full(self.n_ports, -1)
        column[inputs] = np.arange(inputs.size)
        col = column[self.fed_port]
        lit = col >= 0
        rhs_rows, rhs_cols, rhs_source = self.fed_rows[lit], col[lit], self.fed_source[lit]
        rows_out = self.edge_ports[outputs]
        factored = self._reference(values, link) if inputs.size else None
        if factored is not None:
            out[:] = self._low_rank(values, factored, inputs, rows_out)
            return out.reshape(*batch, outputs.size, inputs.size)
        N, nnz = self.size, self.nnz
        step = max(1, BLOCK_BYTES // (16 * N * (inputs.size + FILL_PER_ROW)))
        for start in range(0, len(values) if inputs.size else 0, step):
            block = values[start : start + step]
            k = len(block)
            data = np.empty((k, nnz), complex)
            data[:, self.diagonal] = 1
            data[:, self.entries] = -(link * block[:, self.entry_source])
            shift = np.arange(k, dtype=np.int32)
            indices = (self.indices + N * shift[:, None]).ravel()
            indptr = np.r_[(self.indptr[:-1] + nnz * shift[:, None]).ravel(), k * nnz]
            M = sp.csc_matrix((data.ravel(), indices, indptr), shape=(k * N, k * N))
            rhs = np.zeros((k, N, inputs.size), complex)
            rhs[:, rhs_rows, rhs_cols] = block[:, rhs_source]
            b = splu(M).solve(rhs.reshape(k * N, inputs.size)).reshape(k, N, inputs.size)
            out[start : start + k] = b[:, rows_out]
        return out.reshape(*batch, outputs.size, inputs.size)

    def _matrix(self, values: np.ndarray, link: complex) -> sp.csc_matrix:
        """``I - g S_c P`` of one state (its transfer entries ``values``, (4 n_cells,))."""
        data = np.empty(self.nnz, complex)
        data[self.diagonal] = 1
        data[self.entries] = -(link * values[self.entry_source])
        return sp.csc_matrix((data, self.indices, self.indptr), shape=(self.size, self.size))

    def _changed(self, values: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """The cells in which any of the states ``values`` (k, 4 n_cells) differ from
        ``reference``."""
        differ = values.reshape(len(values), self.n_cells, 4) != reference.reshape(-1, 4)
        return np.flatnonzero(differ.any(axis=(0, 2)))

    def _reference(self, values: np.ndarray, link: complex) -> _Factored | None:
        """A factorised state the states ``values`` are within :data:`LOW_RANK_CELLS` cells of:
        the last one factorised, else their first one (factorised now, and kept); None when
        they are far apart."""
        factored = self._factored
        near = factored is not None and factored.link == link
        if near and self._changed(values, factored.values).size <= LOW_RANK_CELLS:
            return factored
        if self._changed(values, values[0]).size > LOW_RANK_CELLS:
            return None
        reference = values[0].copy()
        factored = _Factored(link, reference, splu(self._matrix(reference, link)))
        self._factored = factored  # one assignment: another thread sees the old or the new
        return factored

    def _low_rank(
        self,
        values: np.ndarray,
        factored: _Factored,
        inputs: np.ndarray,
        rows_out: np.ndarray,
    ) -> np.ndarray:
        """``S[:, outputs, inputs]`` of the states ``values`` near the factorised state: with
        ``A`` its matrix, a state's is ``A + U D`` (``U`` the rows of the changed cells, ``D``
        their new entries less the old) and its right-hand sides ``b + U beta``; with
        ``Z = A^-1 U`` and ``y = A^-1 b + Z beta``, the waves are
        ``y - Z (I + D Z)^-1 D y`` (Woodbury). ``Z`` and ``A^-1 b`` are kept per cell and per
        input with the factorised state."""
        cells = self._changed(values, factored.values)
        r, k = 4 * cells.size, len(values)
        local = np.full(self.size, -1)  # the rows that change, numbered 0 .. r - 1
        local[(4 * cells[:, None] + np.arange(4)).ravel()] = np.arange(r)
        moved = np.flatnonzero(local[self.entry_row] >= 0)  # their matrix entries
        fed = np.flatnonzero(local[self.fed_rows] >= 0)  # and right-hand side entries
        # the rows of the waves the answer reads: the outputs, and where D reads them
        need = np.concatenate([rows_out, self.entry_col[moved]])
        Z = factored.columns(self, cells, need)  # (rows, r)
        x0 = factored.waves(self, inputs, need)  # (rows, inputs)
        delta = values - factored.values
        # D as (k, L) values at L entries, each in row local[...] and reading column need[...]
        d = -(factored.link * delta[:, self.entry_source[moved]])
        at = np.zeros((r, moved.size))
        at[local[self.entry_row[moved]], np.arange(moved.size)] = 1
        beta = np.zeros((k, r, inputs.size), complex)
        column = np.full(self.n_ports, -1)
        column[inputs] = np.arange(inputs.size)
        lit = fed[column[self.fed_port[fed]] >= 0]
        beta[:, local[self.fed_rows[lit]], column[self.fed_port[lit]]] = delta[
            :, self.fed_source[lit]
        ]
        y = x0 + Z @ beta  # (k, rows, inputs)
        reads = rows_out.size + np.arange(moved.size)  # where D reads y and Z
        DZ = at @ (d[:, :, None] * Z[reads])  # (k, r, r)
        Dy = at @ (d[:, :, None] * y[:, reads])  # (k, r, inputs)
        W = np.linalg.solve(np.eye(r) + DZ, Dy)
        return y[:, : rows_out.size] - Z[: rows_out.size] @ W


class _Factored:
    """A state whose matrix is factorised (its ``link``, transfer entries ``values`` and
    ``lu``), with the solves made against it so far: ``A^-1`` of each cell's four rows and of
    each input's right-hand side."""

    def __init__(self, link: complex, values: np.ndarray, lu: object) -> None:
        self.link, self.values, self.lu = link, values, lu
        self._cells: dict[int, np.ndarray] = {}
        self._inputs: dict[int, np.ndarray] = {}

    def columns(self, solver: MeshSolver, cells: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``A^-1 U`` for the rows of ``cells``, at the waves ``rows``: (rows, 4 len(cells))."""
        missing = [int(c) for c in cells if int(c) not in self._cells]
        if missing:
            unit = np.zeros((solver.size, 4 * len(missing)), complex)
            changed = (4 * np.asarray(missing)[:, None] + np.arange(4)).ravel()
            unit[changed, np.arange(changed.size)] = 1
            solved = self.lu.solve(unit)
            for i, c in enumerate(missing):
                self._cells[c] = solved[:, 4 * i : 4 * i + 4]
        found = [self._cells[int(c)][rows] for c in cells]
        return np.concatenate(found, axis=1) if found else np.zeros((len(rows), 0), complex)

    def waves(self, solver: MeshSolver, inputs: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``A^-1 b`` for each input edge port, at the waves ``rows``: (rows, len(inputs))."""
        missing = [int(p) for p in inputs if int(p) not in self._inputs]
        if missing:
            rhs = np.zeros((solver.size, len(missing)), complex)
            for i, port in enumerate(missing):
                fed = solver.fed_port == port
                rhs[solver.fed_rows[fed], i] = self.values[solver.fed_source[fed]]
            solved = self.lu.solve(rhs)
            for i, port in enumerate(missing):
                self._inputs[port] = solved[:, i]
        return np.stack([self._inputs[int(p)][rows] for p in inputs], axis=1)


@lru_cache(maxsize=16)
def mesh_solver(mesh: WaveguideMesh) -> MeshSolver:
    """The :class:`MeshSolver` of ``mesh``, analysed on first use (kept for the 16 meshes used
    last: a mesh is immutable)."""
    return MeshSolver(mesh)


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


__all__ = [
    "BLOCK_BYTES",
    "DEFAULT_CELL_LOSS_DB",
    "DEFAULT_N_EFF",
    "DEFAULT_N_G",
    "DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM",
    "DEFAULT_WAVELENGTH_NM",
    "FILL_PER_ROW",
    "MeshSolver",
    "insertion_loss_db",
    "link_transmission",
    "mesh_solver",
    "path_loss_db",
    "port_powers",
    "scattering",
    "unit_link_loss_db",
]
