"""Light in a recirculating mesh: the scattering matrix between its edge ports, loops included.

Each cell (:mod:`photonics.waveguide_mesh`) is the 2x2 transfer ``T`` of
:func:`photonics.mzi.imperfect_transfer` from end A to end B (mode 0 = arm 0-2, mode 1 = arm
1-3) and ``T^T`` from B to A, with no length of its own; each link is a waveguide of one unit
length ``a`` (phase ``2 pi n_eff(lambda) a / lambda``, loss in dB/cm). The default 811 um at
group index 4.2 is an 11.36 ps unit delay (Smartlight gen-1 quotes 811 um / 11.25 ps, i.e.
group index 4.16).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.sparse.linalg import splu

from photonics._checks import finite
from photonics.errors import PortError, SettingsError, ShapeError
from photonics.mzi import DEFAULT_LOSS_DB, MZIImperfections, imperfect_transfer
from photonics.waveguide_mesh import WaveguideMesh

#: Waveguide propagation loss, dB/cm (1.5-2.5 dB/cm, design notes s. 4).
DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM = 2.0
#: Unit-cell insertion loss, dB (0.46-0.55 dB, design notes s. 4).
DEFAULT_CELL_LOSS_DB = DEFAULT_LOSS_DB
#: Effective and group index of a 500 x 220 nm silicon wire at 1550 nm.
DEFAULT_N_EFF = 2.4
DEFAULT_N_G = 4.2
#: Design wavelength, nm; also the wavelength at which ``n_eff`` is given.
DEFAULT_WAVELENGTH_NM = 1550.0

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


__all__ = [
    "DEFAULT_CELL_LOSS_DB",
    "DEFAULT_N_EFF",
    "DEFAULT_N_G",
    "DEFAULT_WAVEGUIDE_LOSS_DB_PER_CM",
    "DEFAULT_WAVELENGTH_NM",
    "insertion_loss_db",
    "link_transmission",
    "port_powers",
    "scattering",
]
