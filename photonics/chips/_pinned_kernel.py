"""Pinned routing: new circuits routed around circuits that keep every cell they cross.

Works on plain arrays; the rerouters that use it live in :mod:`photonics.chips.switch`.

- Feed-forward mesh (compiled, numba, cached on disk): a DAG of cells in slot order; cell ``k``
  joins modes ``modes[k]`` and ``modes[k] + 1``, in bar it keeps each input's light on its mode,
  in cross it swaps the two. A directed circuit at a time, by dynamic programming.
- Recirculating mesh: one reciprocal path at a time, by the router's compiled Dijkstra over
  port-ends (:meth:`~photonics.recirculating.routing.Router.cheapest_path`) with the pinned cells'
  other state and the used port-ends barred.
"""

from collections.abc import Collection, Mapping

import numpy as np
from numba import njit

from photonics.recirculating.routing import Router
from photonics.recirculating.waveguide_mesh import state_between, through

_INF = 1 << 40
#: Cost of pushing a pinned circuit aside in the blocker search, against 1 per switched cell.
RIP_COST = 1000
#: Cost of one cell crossed on a recirculating mesh, against 1 per switched cell: among paths
#: that switch equally many cells the shortest (least loss) wins.
LENGTH_COST = 1e-3
#: The same when the path that switches fewest cells is too lossy: the shortest path wins,
#: fewest switched cells among the shortest.
SHORTEST_COST = 1e3


@njit(cache=True)
def pins(modes, cross, kept):  # pragma: no cover - compiled
    """One pass over a feed-forward mesh's cells (slot order) at states ``cross``.

    Returns, per cell, the state it must keep (``fixed``: -1 free, else 0 bar / 1 cross) and
    the ``kept`` input whose light enters its top and bottom input (``owner``, -1: none); and
    the output each input reaches."""
    n = kept.size
    at = np.arange(n)
    fixed = np.full(modes.size, -1, np.int64)
    owner = np.full((modes.size, 2), -1, np.int64)
    for k in range(modes.size):
        m = modes[k]
        a, b = at[m], at[m + 1]
        if kept[a] or kept[b]:
            fixed[k] = 1 if cross[k] else 0
            owner[k, 0] = a if kept[a] else -1
            owner[k, 1] = b if kept[b] else -1
        if cross[k]:
            at[m], at[m + 1] = b, a
    out = np.empty(n, np.int64)
    for mode in range(n):
        out[at[mode]] = mode
    return fixed, owner, out


@njit(cache=True)
def _path(modes, n, cur, fixed, owner, src, dst, soft, back, dist):  # pragma: no cover
    """Cheapest path input ``src`` -> output ``dst`` (cost: cells switched from ``cur``) by
    dynamic programming over the cells in slot order (the mesh is a DAG). Hard (``soft``
    False): no fixed cell changes and no input that carries other light is entered; soft: both
    are allowed at ``RIP_COST`` each. Fills ``back`` (per cell: input side and state that
    reach its top and bottom output); returns the cost (``_INF``: no path)."""
    dist[:] = _INF
    dist[src] = 0
    for k in range(modes.size):
        m = modes[k]
        if dist[m] >= _INF and dist[m + 1] >= _INF:
            continue
        best0, best1 = _INF, _INF
        for s in range(2):
            for side in range(2):
                d = dist[m + side]
                if d >= _INF:
                    continue
                # a switched cell costs 1, once: a fixed cell is already in its new state
                c = 1 if fixed[k] < 0 and (s == 1) != cur[k] else 0
                if owner[k, side] >= 0:
                    if not soft:
                        continue
                    c += RIP_COST
                if fixed[k] >= 0 and fixed[k] != s:
                    if not soft:
                        continue
                    c += RIP_COST + ((s == 1) != cur[k])
                out = side ^ s  # bar keeps the side, cross swaps it
                if out == 0 and d + c < best0:
                    best0 = d + c
                    back[k, 0], back[k, 1] = side, s
                elif out == 1 and d + c < best1:
                    best1 = d + c
                    back[k, 2], back[k, 3] = side, s
        dist[m], dist[m + 1] = best0, best1
    return dist[dst]


@njit(cache=True)
def route(modes, n, cur, fixed, owner, sources, targets):  # pragma: no cover - compiled
    """Route directed circuits ``sources[i] -> targets[i]`` one after the other through a
    feed-forward mesh, each switching fewest cells, with no fixed cell changed and no input
    carrying other light entered (see :func:`pins`); each routed circuit is pinned for the
    next. Returns (index of the circuit that found no path or -1, cell states, blockers): for
    a failure, ``blockers[i]`` says input ``i``'s light stands in the way of the cheapest path
    that may push pinned light aside."""
    K = modes.size
    fixed = fixed.copy()
    owner = owner.copy()
    cross = cur.copy()
    dist = np.empty(n, np.int64)
    back = np.zeros((K, 4), np.int64)
    blockers = np.zeros(n, np.bool_)
    for i in range(sources.size):
        src, dst = sources[i], targets[i]
        soft = _path(modes, n, cur, fixed, owner, src, dst, False, back, dist) >= _INF
        if soft:
            _path(modes, n, cur, fixed, owner, src, dst, True, back, dist)
        mode = dst
        for k in range(K - 1, -1, -1):  # walk back along the path
            m = modes[k]
            if mode != m and mode != m + 1:
                continue
            j = 0 if mode == m else 2
            side, s = back[k, j], back[k, j + 1]
            if soft:
                if owner[k, side] >= 0:
                    blockers[owner[k, side]] = True
                if fixed[k] >= 0 and fixed[k] != s:  # the other input's light turns too
                    for o in range(2):
                        if owner[k, o] >= 0:
                            blockers[owner[k, o]] = True
            else:
                fixed[k] = s
                owner[k, side] = src
                cross[k] = s == 1
            mode = m + side
        if soft:
            return i, cross, blockers
    return -1, cross, blockers


# ---- recirculating mesh -------------------------------------------------------------------


def mesh_search(
    router: Router,
    cur: list[int],
    fixed: np.ndarray,
    used: Mapping[int, object],
    start: int,
    goal: int,
    history: Mapping[int, float],
    soft: tuple[Collection[int], Collection[int]] = ((), ()),
    length_cost: float = LENGTH_COST,
) -> list[tuple[int, int]] | None:
    """Cheapest path from entry port-end ``start`` to exit port-end ``goal``, at 1 per cell
    switched and ``length_cost`` per cell crossed; returns the (entry, state) of each cell
    crossed. ``used`` port-ends and another state of a ``fixed`` cell are out of bounds, except
    the cells and port-ends in ``soft``, which cost ``RIP_COST`` each; ``history`` adds a cost
    per cell crossed."""
    n = fixed.size
    step = np.full((n, 2), length_cost)
    if history:
        step[list(history)] += np.fromiter(history.values(), float)[:, None]
    free = fixed < 0
    step[free] += np.arange(2)[None, :] != np.asarray(cur)[free, None]
    pinned = np.flatnonzero(~free)
    bar = np.full(pinned.size, np.inf)
    bar[np.isin(pinned, list(soft[0]))] = RIP_COST
    step[pinned, 1 - fixed[pinned]] += bar
    ends = np.zeros(4 * n)
    if used:
        ends[list(used)] = np.inf
    if soft[1]:
        ends[list(soft[1])] = RIP_COST
    hops = router.cheapest_path(start, goal, step, ends, link_cost=0.0)
    if hops is None:
        return None
    return [(int(a), state_between(int(a), int(b))) for a, b in hops]


def mesh_path(
    router: Router,
    cur: list[int],
    fixed: np.ndarray,
    used: dict[int, object],
    start: int,
    goal: int,
    history: Mapping[int, float],
    length_cost: float = LENGTH_COST,
) -> list[tuple[int, int]] | None:
    """The cheapest path of :func:`mesh_search` with nothing pinned pushed aside, as light can
    take it. Dijkstra does not see its own path, so a path may cross one cell twice in two
    states, or one port-end twice: then that cell is held in its first state, or that port-end
    barred, and the search runs again (8 times at most; None after that or when no path)."""
    fixed = fixed.copy()
    used = dict(used)
    for _ in range(8):
        args = (router, cur, fixed, used, start, goal, history)
        hops = mesh_search(*args, length_cost=length_cost)
        if hops is None:
            return None
        states: dict[int, int] = {}
        ends: set[int] = set()
        for e, st in hops:
            if states.setdefault(e // 4, st) != st:
                fixed[e // 4] = states[e // 4]
                break
            clash = {e, through(e, st)} & ends
            if clash:
                used[clash.pop()] = None
                break
            ends |= {e, through(e, st)}
        else:
            return hops
    return None
