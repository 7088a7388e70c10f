"""Compiled inner loops of the feed-forward meshes (numba, cached on disk).

Everything here works on plain arrays; validation and conventions live in
:mod:`photonics.feedforward.meshes`. Rotations follow the MZI convention of
:mod:`photonics.devices.mzi`: ``T = [[e cos, -sin], [e sin, cos]]`` with ``e = e^{i phi}``.
"""

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _right_null(a: complex, b: complex) -> tuple[float, float]:
    """(theta, phi) such that ``[a, b] @ T^dagger`` has a zero first entry."""
    th = math.atan2(abs(a), abs(b))
    ph = 0.0 if a == 0 else math.atan2(a.imag, a.real) - math.atan2(b.imag, b.real)
    return th, ph


@njit(cache=True)
def apply_mzis(mats: np.ndarray, modes: np.ndarray, n: int) -> np.ndarray:
    """Product of 2x2 matrices ``mats[b, k]`` on mode pairs ``(modes[k], modes[k] + 1)``.

    Applied in order k = 0, 1, ... to the identity, for every batch entry b. Each row's
    non-zero columns are tracked (the light cone), so early columns cost little.
    """
    B, K = mats.shape[0], mats.shape[1]
    out = np.zeros((B, n, n), np.complex128)
    lo = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    for b in range(B):
        M = out[b]
        for i in range(n):
            M[i, i] = 1.0
            lo[i] = i
            hi[i] = i
        for k in range(K):
            m = modes[k]
            t00, t01 = mats[b, k, 0, 0], mats[b, k, 0, 1]
            t10, t11 = mats[b, k, 1, 0], mats[b, k, 1, 1]
            left = min(lo[m], lo[m + 1])
            right = max(hi[m], hi[m + 1])
            for col in range(left, right + 1):
                x = M[m, col]
                y = M[m + 1, col]
                M[m, col] = t00 * x + t01 * y
                M[m + 1, col] = t10 * x + t11 * y
            lo[m] = left
            lo[m + 1] = left
            hi[m] = right
            hi[m + 1] = right
    return out


@njit(cache=True)
def _rotate_row_right(row: np.ndarray, c: int, w: complex, cs: float, sn: float) -> None:
    """``row[c:c+2] <- row[c:c+2] @ T^dagger`` with ``w = e^{-i phi}``."""
    x = row[c]
    y = row[c + 1]
    row[c] = w * cs * x - sn * y
    row[c + 1] = w * sn * x + cs * y


@njit(cache=True)
def clements_decompose(U: np.ndarray, slot: np.ndarray):
    """Clements et al. (2016) nulling of a unitary ``U`` (overwritten).

    Returns ``(theta, phi, output_phase)`` in mesh slot order, where ``slot[column, mode]`` is
    the flat index of the MZI at that column acting on modes (mode, mode + 1).

    Odd sweeps null by column operations ``U T^dagger``: they are done row by row (each row
    gets the whole sweep's rotations) so memory is walked contiguously. Even sweeps null by
    row operations ``T U``, whose inverses are then moved through the diagonal (Eq. 5 of the
    paper): ``T^dagger(theta, phi) D = D' T(theta, phi')``.
    """
    n = U.shape[0]
    K = n * (n - 1) // 2
    theta = np.empty(K)
    phi = np.empty(K)
    w_sweep = np.empty(n, np.complex128)
    c_sweep = np.empty(n)
    s_sweep = np.empty(n)
    n_left = 0
    left_th = np.empty(K)
    left_ph = np.empty(K)
    left_mode = np.empty(K, np.int64)
    left_slot = np.empty(K, np.int64)
    for i in range(1, n):
        if i % 2 == 1:
            # rotation j nulls U[n-1-j, i-1-j] with columns (i-1-j, i-j); mesh column j
            for j in range(i):
                row = U[n - 1 - j]
                for q in range(j):
                    _rotate_row_right(row, i - 1 - q, w_sweep[q], c_sweep[q], s_sweep[q])
                c = i - 1 - j
                th, ph = _right_null(row[c], row[c + 1])
                w_sweep[j] = complex(math.cos(ph), -math.sin(ph))
                c_sweep[j] = math.cos(th)
                s_sweep[j] = math.sin(th)
                _rotate_row_right(row, c, w_sweep[j], c_sweep[j], s_sweep[j])
                k = slot[j, c]
                theta[k] = th
                phi[k] = ph
            for r in range(n - i):
                row = U[r]
                for q in range(i):
                    _rotate_row_right(row, i - 1 - q, w_sweep[q], c_sweep[q], s_sweep[q])
        else:
            # rotation j nulls U[r, j-1], r = n-1+j-i, with rows (r-1, r); mesh column n-j
            for j in range(1, i + 1):
                r = n - 1 + j - i
                c = j - 1
                a = U[r - 1, c]
                b = U[r, c]
                th = math.atan2(abs(b), abs(a))
                ph = 0.0
                if b != 0:
                    ph = math.pi + math.atan2(b.imag, b.real) - math.atan2(a.imag, a.real)
                e = complex(math.cos(ph), math.sin(ph))
                cs = math.cos(th)
                sn = math.sin(th)
                for col in range(c, n):
                    x = U[r - 1, col]
                    y = U[r, col]
                    U[r - 1, col] = e * cs * x - sn * y
                    U[r, col] = e * sn * x + cs * y
                left_th[n_left] = th
                left_ph[n_left] = ph
                left_mode[n_left] = r - 1
                left_slot[n_left] = slot[n - j, r - 1]
                n_left += 1
    d = np.empty(n, np.complex128)
    for i in range(n):
        d[i] = U[i, i] / abs(U[i, i])
    for t in range(n_left - 1, -1, -1):
        m = left_mode[t]
        d1 = d[m]
        d2 = d[m + 1]
        z = -d1 / d2
        k = left_slot[t]
        theta[k] = left_th[t]
        phi[k] = math.atan2(z.imag, z.real)
        d[m] = -complex(math.cos(left_ph[t]), -math.sin(left_ph[t])) * d2
    out_phase = np.empty(n)
    for i in range(n):
        out_phase[i] = math.atan2(d[i].imag, d[i].real)
    return theta, phi, out_phase


@njit(cache=True)
def reck_decompose(U: np.ndarray, slot: np.ndarray):
    """Reck et al. (1994) nulling of ``U`` (overwritten) by column operations only.

    Pass p nulls row ``n-1-p`` left to right with columns (j, j+1), j = 0 .. n-2-p, the MZI at
    mesh column ``j + 2p``. The pass's rotations depend on that row alone, so they are found
    first and then applied to the rows above it one row at a time.
    """
    n = U.shape[0]
    K = n * (n - 1) // 2
    theta = np.empty(K)
    phi = np.empty(K)
    w_pass = np.empty(n, np.complex128)
    c_pass = np.empty(n)
    s_pass = np.empty(n)
    for p in range(n - 1):
        r = n - 1 - p
        row = U[r]
        for j in range(n - 1 - p):
            th, ph = _right_null(row[j], row[j + 1])
            w_pass[j] = complex(math.cos(ph), -math.sin(ph))
            c_pass[j] = math.cos(th)
            s_pass[j] = math.sin(th)
            _rotate_row_right(row, j, w_pass[j], c_pass[j], s_pass[j])
            k = slot[j + 2 * p, j]
            theta[k] = th
            phi[k] = ph
        for q in range(r):
            above = U[q]
            for j in range(n - 1 - p):
                _rotate_row_right(above, j, w_pass[j], c_pass[j], s_pass[j])
    out_phase = np.empty(n)
    for i in range(n):
        out_phase[i] = math.atan2(U[i, i].imag, U[i, i].real)
    return theta, phi, out_phase


@njit(cache=True)
def route_labels(labels: np.ndarray, modes: np.ndarray):
    """Sort destination ``labels`` (one per mode, overwritten) through the mesh's comparators.

    Each MZI crosses when its top label is larger, as in a sorting network; returns the cross
    flags per MZI and the sign (+1/-1) each mode's signal carries at the output, since a cross
    ``T(pi/2, 0) = [[0, -1], [1, 0]]`` negates the signal it sends up.
    """
    K = modes.size
    cross = np.zeros(K, np.bool_)
    sign = np.ones(labels.size)
    for k in range(K):
        m = modes[k]
        if labels[m] > labels[m + 1]:
            cross[k] = True
            lab = labels[m]
            labels[m] = labels[m + 1]
            labels[m + 1] = lab
            s = sign[m]
            sign[m] = -sign[m + 1]
            sign[m + 1] = s
    return cross, sign
