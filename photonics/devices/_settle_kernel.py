"""Compiled settling-time search of :func:`photonics.devices.transients.settle_time_s` (numba,
cached on disk).

Works on plain arrays; the checks, the units and the model live in
:mod:`photonics.devices.transients`. An emulated driver asks it once per write that moves more
than one heater (tens of thousands of times in one self-calibration), so the whole search, the
crosstalk's gathering included, is one compiled call.
"""

import math

import numpy as np
from numba import njit

#: Points of the first (geometric) grid of times, and of each of its refinements.
GRID_POINTS = 96
REFINE_POINTS = 64
#: Searches for the first time within tolerance: on the first grid, then twice on a finer grid
#: over the interval before it.
SEARCHES = 3


@njit(cache=True)
def rise_at(t: float, tau: float, tau2: float) -> float:
    """:func:`photonics.devices.transients.rise` at one time ``t`` (s) for one ``tau``."""
    t = max(t, 0.0)
    one = math.exp(-t / tau)
    if not tau2 > 0:
        return 1.0 - one
    if abs(tau - tau2) <= 1e-9 * tau:
        two = (1 + t / tau) * one
    else:
        two = (tau * one - tau2 * math.exp(-t / tau2)) / (tau - tau2)
    return min(max(1.0 - two, 0.0), 1.0)


@njit(cache=True)
def _exceeds(
    t: float,
    taus: np.ndarray,
    own: np.ndarray,
    coupled: np.ndarray,
    tau2: float,
    crosstalk_tau: float,
    tolerance: float,
    f: np.ndarray,
    g: np.ndarray,
) -> bool:
    """Whether some heater's bound at time ``t`` is above ``tolerance``: the sum over the time
    constants ``u`` of ``own[u, h]`` times the own step's remainder and ``coupled[u, h]`` times
    the crosstalk's (``f``, ``g``: room for the remainders, one per time constant)."""
    n_u = own.shape[0]
    for u in range(n_u):
        f[u] = 1 - rise_at(t, taus[u], tau2)
        g[u] = 1 - rise_at(t, taus[u], crosstalk_tau)
    for h in range(own.shape[1]):  # the largest amplitudes first: most times stop at one
        bound = 0.0
        for u in range(n_u):
            bound += f[u] * own[u, h] + g[u] * coupled[u, h]
        if bound > tolerance:
            return True
    return False


@njit(cache=True)
def settle_search(
    step: np.ndarray,
    tau: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    tau2: float,
    crosstalk_tau: float,
    settled_after: float,
    tolerance: float,
) -> float:
    """The settling time (s) of a step of the heaters' own phases ``|step|`` (H,) with time
    constants ``tau`` (H,), thermal crosstalk ``K[victim, aggressor]`` given by its columns
    (``indptr``, ``indices``, ``data``: compressed sparse columns; none stored: no crosstalk),
    the dynamics' second pole ``tau2`` and crosstalk pole ``crosstalk_tau``, each response
    complete after ``settled_after`` of its slowest time constant; 0 when the step is within
    ``tolerance`` (rad) already."""
    changed = np.flatnonzero(step)
    if changed.size == 0:
        return 0.0
    # the distinct time constants of the stepped heaters, and each one's amplitudes
    taus = np.unique(tau[changed])
    own = np.zeros((taus.size, step.size))
    coupled = np.zeros((taus.size, step.size))
    moves = np.zeros(step.size, dtype=np.bool_)
    for c in changed:
        s = abs(step[c])
        u = np.searchsorted(taus, tau[c])
        own[u, c] += s
        moves[c] = True
        for j in range(indptr[c], indptr[c + 1]):  # its victims
            coupled[u, indices[j]] += abs(data[j]) * s
            moves[indices[j]] = True
    # only the heaters that move, the largest total amplitude first
    active = np.flatnonzero(moves)
    total = (own[:, active] + coupled[:, active]).sum(axis=0)
    order = active[np.argsort(-total)]
    own = np.ascontiguousarray(own[:, order])
    coupled = np.ascontiguousarray(coupled[:, order])
    f, g = np.empty(taus.size), np.empty(taus.size)
    if not _exceeds(0.0, taus, own, coupled, tau2, crosstalk_tau, tolerance, f, g):
        return 0.0
    slowest = settled_after * max(taus.max(), tau2, crosstalk_tau)
    start = 1e-3 * taus.min()
    grid = 10.0 ** np.linspace(math.log10(start), math.log10(slowest), GRID_POINTS)
    grid[0], grid[-1] = start, slowest
    for _ in range(SEARCHES):
        # the first time within tolerance, by bisection (the bound only falls); 0 if none is
        low, high = -1, grid.size - 1
        if _exceeds(grid[high], taus, own, coupled, tau2, crosstalk_tau, tolerance, f, g):
            high = 0
        else:
            while high - low > 1:
                mid = (low + high) // 2
                if _exceeds(grid[mid], taus, own, coupled, tau2, crosstalk_tau, tolerance, f, g):
                    low = mid
                else:
                    high = mid
        grid = np.linspace(grid[high - 1] if high else 0.0, grid[high], REFINE_POINTS)
    return grid[-1]
