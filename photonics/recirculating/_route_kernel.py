"""Compiled negotiated-congestion routing on a recirculating mesh (numba, cached on disk).

Works on plain arrays; requests, checks and results live in :mod:`photonics.recirculating.routing`.
A node of the search is an entry port-end ``4 * cell + k``; from it a path leaves its cell through
the bar end ``4 * cell + (k + 2) % 4`` or the cross end ``4 * cell + 3 - k`` and enters the next
cell at that end's partner (``-1`` at the mesh edge).
"""

import numpy as np
from numba import njit

BAR, CROSS = 0, 1
#: Penalty factor of a port-end used by another path, relative to a conflicting cell state.
END_PENALTY = 10.0
#: Growth of the present-congestion penalty per iteration.
PRESENT_GROWTH = 1.6
#: Cost (units of the cell cost, dB) added per isolation round to a cell whose leak keeps a path
#: below the isolation target, times that leak's amplitude over the target's.
LEAK_PENALTY = 2.0


@njit(cache=True)
def _push(hc, hn, size, cost, node):
    i = size
    hc[i], hn[i] = cost, node
    while i > 0:
        up = (i - 1) // 2
        if hc[up] <= hc[i]:
            break
        hc[up], hc[i] = hc[i], hc[up]
        hn[up], hn[i] = hn[i], hn[up]
        i = up
    return size + 1


@njit(cache=True)
def _pop(hc, hn, size):
    cost, node = hc[0], hn[0]
    size -= 1
    hc[0], hn[0] = hc[size], hn[size]
    i = 0
    while True:
        lo, r = 2 * i + 1, 2 * i + 2
        m = i
        if lo < size and hc[lo] < hc[m]:
            m = lo
        if r < size and hc[r] < hc[m]:
            m = r
        if m == i:
            break
        hc[m], hc[i] = hc[i], hc[m]
        hn[m], hn[i] = hn[i], hn[m]
        i = m
    return cost, node, size


@njit(cache=True)
def _search(src, dst, partner, dead, step_cost, end_cost, link_cost, work, out):
    """Cheapest path from entry ``src`` to exit ``dst`` (Dijkstra over entry port-ends).

    ``step_cost[cell, state]`` and ``end_cost[port_end]`` are the current costs. Writes the
    path's (entry, exit) hops into ``out`` and returns their number (-1: no path).
    """
    best, back_entry, back_out, hc, hn = work
    best[:] = np.inf
    best[src] = 0.0
    size = _push(hc, hn, 0, 0.0, src)
    found_cost, found_entry = np.inf, -1
    while size > 0:
        cost, entry, size = _pop(hc, hn, size)
        if cost >= found_cost:
            break  # nothing cheaper is left
        if cost > best[entry]:
            continue
        cell, k = entry // 4, entry % 4
        base = cost + end_cost[entry]
        for state in range(2):
            ex = 4 * cell + ((k + 2) % 4 if state == BAR else 3 - k)
            step = base + step_cost[cell, state] + end_cost[ex]
            if ex == dst:
                if step < found_cost:
                    found_cost, found_entry = step, entry
                continue
            nxt = partner[ex]
            if nxt < 0 or dead[nxt // 4]:
                continue
            step += link_cost
            if step < best[nxt]:
                best[nxt] = step
                back_entry[nxt], back_out[nxt] = entry, ex
                size = _push(hc, hn, size, step, nxt)
    if found_entry < 0:
        return -1
    n = 1
    node = found_entry
    while node != src:
        node = back_entry[node]
        n += 1
    i = n - 1
    out[i, 0], out[i, 1] = found_entry, dst
    node = found_entry
    while node != src:
        i -= 1
        out[i, 0], out[i, 1] = back_entry[node], back_out[node]
        node = back_entry[node]
    return n


@njit(cache=True)
def _state(entry, ex):
    return BAR if ex % 4 == (entry % 4 + 2) % 4 else CROSS


@njit(cache=True)
def _state_at(hops, p, i):
    return _state(hops[p, i, 0], hops[p, i, 1])


@njit(cache=True)
def _occupy(hops, n, use_state, use_end, sign):
    for i in range(n):
        entry, ex = hops[i, 0], hops[i, 1]
        use_state[entry // 4, _state(entry, ex)] += sign
        use_end[entry] += sign
        use_end[ex] += sign


@njit(cache=True)
def _conflicts(use_state, use_end, bad):
    """Mark in ``bad[cell, state]`` every used state of a cell that is used in both states or
    has a port-end carrying two paths; return how many are marked."""
    count = 0
    for c in range(use_state.shape[0]):
        clash = use_state[c, 0] > 0 and use_state[c, 1] > 0
        for k in range(4):
            clash = clash or use_end[4 * c + k] > 1
        for s in range(2):
            bad[c, s] = 1.0 if clash and use_state[c, s] > 0 else 0.0
            count += int(bad[c, s])
    return count


@njit(cache=True)
def _leaks(hops, lengths, extinction_db, step_db, both_ways):
    """The first-order leaks of a configuration (see :func:`isolation_db`), one term per shared
    cell and direction: (count, cell, victim, source, amp, leak). Term t has a cell, a victim
    ``2 p + d`` (path p read at its last hop if d = 0, at its first if d = 1), a source
    ``2 q + d`` (path q lit at its first hop if d = 0, at its last if d = 1) and an amplitude
    relative to the victim's own signal; ``leak[victim, source]`` sums the amplitudes (leaks
    from one input into one output add in amplitude: in a mesh of equal unit lengths their
    phases need not differ)."""
    n_pairs, n_cells = lengths.shape[0], extinction_db.shape[1]
    cell = np.empty(4 * n_cells, np.int64)
    victim, source = np.empty_like(cell), np.empty_like(cell)
    amp = np.empty(4 * n_cells)
    who = np.full((n_cells, 2), -1, np.int64)
    where = np.zeros((n_cells, 2), np.int64)
    crowded = np.zeros(n_cells, np.bool_)
    for p in range(n_pairs):
        for i in range(lengths[p]):
            c = hops[p, i, 0] // 4
            if who[c, 0] < 0:
                who[c, 0], where[c, 0] = p, i
            elif who[c, 1] < 0:
                who[c, 1], where[c, 1] = p, i
            else:
                crowded[c] = True  # a conflict the router resolves anyway
    count = 0
    for c in range(n_cells):
        p, q = who[c, 0], who[c, 1]
        # shared by two paths, one arm pair each, in one state
        if q < 0 or p == q or crowded[c]:
            continue
        state = _state_at(hops, p, where[c, 0])
        if state != _state_at(hops, q, where[c, 1]):
            continue
        for j in range(2):
            v, iv, a, ia = who[c, j], where[c, j], who[c, 1 - j], where[c, 1 - j]
            for da in range(2 if both_ways else 1):
                # the leak leaves c on the side where the aggressor's light leaves, through the
                # victim's end on that side: onward along the victim if that is its exit
                out_side = hops[a, ia, 1 - da] % 4 >= 2
                dv = 0 if (hops[v, iv, 1] % 4 >= 2) == out_side else 1
                if dv == 1 and not both_ways:
                    continue  # back towards the victim's input: no output sees it
                ahead = iv if dv == 0 else lengths[v] - 1 - iv
                behind = ia if da == 0 else lengths[a] - 1 - ia
                iso = extinction_db[state, c] - (ahead - behind) * step_db
                cell[count], victim[count], source[count] = c, 2 * v + dv, 2 * a + da
                amp[count] = 10.0 ** (-iso / 20.0)
                count += 1
    leak = np.zeros((2 * n_pairs, 2 * n_pairs))
    for t in range(count):
        leak[victim[t], source[t]] += amp[t]
    return count, cell, victim, source, amp, leak


@njit(cache=True)
def isolation_db(hops, lengths, extinction_db, step_db, both_ways):
    """Each path's isolation, dB, to first order: the light other paths leak into it through
    the cells they share with it (each path on one arm pair; inf when it shares no cell).

    At a shared cell ``c``, light of path q leaks into path p with the extinction of the
    state both set it to, ``extinction_db[state, c]`` (shape (2, n_cells): [BAR, CROSS]);
    relative to p's own signal it has lost ``step_db`` per cell less if q reached ``c``
    through fewer cells than p did. The leak runs on along p in the direction
    q's light crosses the cell. Leaks from one input into one output add in amplitude (in a
    mesh of equal unit lengths their phases need not differ); the worst input counts. With
    ``both_ways`` every path end is an input and an output (matchings); otherwise light runs
    from each path's first hop to its last. Paths with
    ``lengths[p] < 0`` are left out.
    """
    leak = _leaks(hops, lengths, extinction_db, step_db, both_ways)[5]
    isolation = np.full(lengths.shape[0], np.inf)
    for v in range(leak.shape[0]):
        for a in range(leak.shape[1]):
            if leak[v, a] > 0:
                isolation[v // 2] = min(isolation[v // 2], -20.0 * np.log10(leak[v, a]))
    return isolation


@njit(cache=True)
def _tally(hops, lengths, use_state, use_end):
    use_state[:] = 0
    use_end[:] = 0
    for p in range(lengths.shape[0]):
        if lengths[p] > 0:
            _occupy(hops[p], lengths[p], use_state, use_end, 1)


@njit(cache=True)
def negotiate(
    partner,
    dead,
    srcs,
    dsts,
    cell_cost,
    extra_cost,
    link_cost,
    max_iterations,
    stall_limit,
):
    """Route every (``srcs[p]``, ``dsts[p]``) port-end pair, re-routing with rising penalties.

    A cell state costs ``cell_cost`` plus the cell's ``extra_cost[cell]`` plus its conflict
    history, plus the present penalty times
    the other paths needing the other state; a port-end costs ``END_PENALTY`` x the present
    penalty per other path on it. Stops when no conflict is left, after ``max_iterations``,
    or after ``stall_limit`` passes without fewer conflicts, and keeps the pass with fewest.
    Returns (hops (P, L, 2), lengths (-1: no path), conflicted (P,), iterations).
    """
    n_cells = dead.shape[0]
    n_pairs = srcs.shape[0]
    hops = np.zeros((n_pairs, 4 * n_cells, 2), np.int64)
    lengths = np.full(n_pairs, -1, np.int64)
    best_hops, best_lengths = hops.copy(), lengths.copy()
    history = np.zeros((n_cells, 2))
    use_state = np.zeros((n_cells, 2), np.int64)
    use_end = np.zeros(4 * n_cells, np.int64)
    bad = np.zeros((n_cells, 2))
    step_cost = np.empty((n_cells, 2))
    end_cost = np.empty(4 * n_cells)
    work = (
        np.empty(4 * n_cells),
        np.empty(4 * n_cells, np.int64),
        np.empty(4 * n_cells, np.int64),
        np.empty(8 * n_cells + 1),
        np.empty(8 * n_cells + 1, np.int64),
    )
    present = 1.0
    fewest = 2 * n_cells + 1
    stalled, iterations = 0, 0
    for _ in range(max_iterations):
        iterations += 1
        for p in range(n_pairs):
            if lengths[p] > 0:
                _occupy(hops[p], lengths[p], use_state, use_end, -1)
            for c in range(n_cells):
                for s in range(2):
                    step_cost[c, s] = (
                        cell_cost + extra_cost[c] + history[c, s] + present * use_state[c, 1 - s]
                    )
            for e in range(4 * n_cells):
                end_cost[e] = END_PENALTY * present * use_end[e]
            lengths[p] = _search(
                srcs[p], dsts[p], partner, dead, step_cost, end_cost, link_cost, work, hops[p]
            )
            if lengths[p] > 0:
                _occupy(hops[p], lengths[p], use_state, use_end, 1)
        count = _conflicts(use_state, use_end, bad)
        if count < fewest:
            fewest, stalled = count, 0
            best_hops[:], best_lengths[:] = hops, lengths
        if count == 0:
            break
        stalled += 1
        if stalled > stall_limit:  # penalties no longer help: give up early
            break
        history += bad
        present *= PRESENT_GROWTH
    _tally(best_hops, best_lengths, use_state, use_end)
    conflicted = np.zeros(n_pairs, np.bool_)
    if _conflicts(use_state, use_end, bad) > 0:
        for p in range(n_pairs):
            for i in range(best_lengths[p]):
                if bad[best_hops[p, i, 0] // 4, _state_at(best_hops, p, i)] > 0:
                    conflicted[p] = True
    return best_hops, best_lengths, conflicted, iterations


@njit(cache=True)
def improve_isolation(
    partner,
    dead,
    srcs,
    dsts,
    hops,
    lengths,
    extinction_db,
    cell_cost,
    link_cost,
    step_db,
    both_ways,
    target_db,
    budget,
    stall_limit,
):
    """Negotiate a conflict-free routing (``hops``, ``lengths``) again until every path's
    :func:`isolation_db` reaches ``target_db`` or ``budget`` path searches are spent.

    Each round adds ``LEAK_PENALTY`` x (leak amplitude / the target's) to the cost of every
    cell whose leak brings a (victim, source) pair below the target, so the worst leaks, and
    of two cells the one of lower extinction, are avoided first; then it routes all requests
    from scratch, in an order rotated by one request per round. (Starting from the current
    paths instead leaves a crowded mesh where it is: each path is held in place by the
    others.) Returns the conflict-free routing with the best worst-path isolation, the given
    one unless a round beats it: (hops, lengths, isolation (P,), rounds, negotiation passes).
    """
    n_cells, n_pairs = dead.shape[0], lengths.shape[0]
    best_iso = isolation_db(hops, lengths, extinction_db, step_db, both_ways)
    best_hops, best_lengths = hops, lengths
    cur_hops, cur_lengths = hops, lengths
    extra = np.zeros(n_cells)
    floor = 10.0 ** (-target_db / 20.0)
    rounds, passes, left = 0, 0, budget
    while best_iso.min() < target_db and left >= n_pairs:
        count, cell, victim, source, amp, leak = _leaks(
            cur_hops, cur_lengths, extinction_db, step_db, both_ways
        )
        for t in range(count):
            if leak[victim[t], source[t]] > floor:
                extra[cell[t]] += LEAK_PENALTY * amp[t] / floor
        rounds += 1
        order = np.roll(np.arange(n_pairs), -rounds)
        h, n, conflicted, its = negotiate(
            partner,
            dead,
            srcs[order],
            dsts[order],
            cell_cost,
            extra,
            link_cost,
            left // n_pairs,
            stall_limit,
        )
        passes += its
        left -= its * n_pairs
        if np.any(conflicted) or np.any(n < 0):
            continue  # keep the raised costs; the next round starts in another order
        back = np.argsort(order)
        cur_hops, cur_lengths = h[back], n[back]
        iso = isolation_db(cur_hops, cur_lengths, extinction_db, step_db, both_ways)
        if iso.min() > best_iso.min():
            best_hops, best_lengths, best_iso = cur_hops, cur_lengths, iso
    return best_hops, best_lengths, best_iso, rounds, passes


@njit(cache=True)
def reach(partner, starts, allowed):
    """Breadth-first search over port-ends from the entry port-ends ``starts``, through the
    cells ``allowed`` in bar or cross (bar first): for every port-end light can arrive at, the
    port-end through which it entered the previous cell (-1 for a start); -2 elsewhere."""
    pred = np.full(partner.size, -2, dtype=np.int64)
    frontier = np.empty(partner.size + starts.size, dtype=np.int64)
    for i in range(starts.size):
        pred[starts[i]] = -1
        frontier[i] = starts[i]
    head, tail = 0, starts.size
    while head < tail:  # one queue: the frontier of each depth follows the last, in order
        e = frontier[head]
        head += 1
        if not allowed[e // 4]:
            continue
        cell, k = e // 4, e % 4
        for ex in (4 * cell + (k + 2) % 4, 4 * cell + 3 - k):
            y = partner[ex]
            if y >= 0 and pred[y] == -2:
                pred[y] = e
                frontier[tail] = y
                tail += 1
    return pred
