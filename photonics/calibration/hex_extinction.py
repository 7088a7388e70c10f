"""Where a recirculating mesh's first-order leaks go, and the conservative per-state extinction
of its cells: the pure parts of the extinction measurement of
:mod:`photonics.calibration.hex_selfcal`.

A cell in state S (BAR or CROSS) passes a path's light on and leaks a little into its other
exit; where that leak leaves the mesh follows from the states of the cells it meets. A detector
read for one cell's leak is *clean* when no other lit cell's leak can reach it: then its
reading is that cell's leak alone, not a coherent sum that may cancel it (which reads
optimistic). Cells of unknown state (not calibrated, or off for the power budget) send light
both ways.
"""

from __future__ import annotations

import numpy as np

from photonics.recirculating.waveguide_mesh import BAR, CROSS, through

#: The state of a cell whose setting is not known (it may send light either way).
UNKNOWN = -1
#: A cell's state without a clean reading is taken to leak this many standard deviations of
#: the chip's leak amplitudes (a Gaussian exceeds it in 5 of 10 000 cells).
DEFAULT_SIGMAS = 3.5
#: Extinction assumed for a calibrated cell when the chip gave no clean reading at all, dB: the
#: lowest published unit-cell figure (Perez-Lopez et al., Nat. Commun. 15, 1563 (2024)).
NO_READING_DB = 32.0


def lit_hops(partner: np.ndarray, states: np.ndarray, start: int) -> list[tuple[int, int]] | None:
    """The (entry port-end, state) of every cell light crosses from port-end ``start`` (where
    it enters the mesh) until it leaves; None when it meets a cell of unknown state or loops."""
    hops: list[tuple[int, int]] = []
    e = start
    for _ in range(partner.size):
        state = int(states[e // 4])
        if state == UNKNOWN:
            return None
        hops.append((e, state))
        e = int(partner[through(e, state)])
        if e < 0:
            return hops
    return None


def exit_of(partner: np.ndarray, hops: list[tuple[int, int]]) -> int:
    """The port-end where the light of ``hops`` (from :func:`lit_hops`) leaves the mesh."""
    e, state = hops[-1]
    return through(e, state)


def leak_exits(
    partner: np.ndarray, states: np.ndarray, hops: list[tuple[int, int]], skip: int
) -> set[int]:
    """The port-ends where light leaks out of the mesh at first order: each cell of ``hops``
    but ``skip`` leaks into its other exit, and that light follows the cells' ``states``
    (both ways through a cell of unknown state)."""
    out: set[int] = set()
    seen: set[int] = set()
    frontier = [through(e, 1 - s) for e, s in hops if e // 4 != skip]
    while frontier:
        x = frontier.pop()
        y = int(partner[x])
        if y < 0:
            out.add(x)
            continue
        if y in seen:
            continue
        seen.add(y)
        state = int(states[y // 4])
        frontier += [through(y, s) for s in ((BAR, CROSS) if state == UNKNOWN else (state,))]
    return out


def conservative(measured_db: np.ndarray, fitted: np.ndarray) -> np.ndarray:
    """Per-state extinction ``(2, n)`` dB the router can take as a lower bound: a cell's clean
    reading (``measured_db``, NaN where it has none) where there is one; else the default of
    :func:`default_extinction_db` from the chip's clean readings; NaN for cells not
    ``fitted``."""
    clean = measured_db[:, fitted]
    floor = default_extinction_db(clean[np.isfinite(clean)])
    out = np.where(np.isfinite(measured_db), measured_db, floor)
    out[:, ~fitted] = np.nan
    return out


def default_extinction_db(clean_db: np.ndarray) -> float:
    """Extinction (dB) to assume of a cell in a state the chip could not read cleanly: its leak
    amplitude :data:`DEFAULT_SIGMAS` standard deviations out. A cell's leak amplitude is, to
    first order, a difference or sum of its two couplers' splitting errors, so Gaussian about
    zero over a chip's cells: its standard deviation is the median of the ``clean_db``
    readings' amplitudes over 0.6745 (robust to the few cells whose reading is far out).
    :data:`NO_READING_DB` without readings."""
    if clean_db.size == 0:
        return NO_READING_DB
    sigma = float(np.median(10 ** (-clean_db / 20))) / 0.6745
    return float(-20 * np.log10(DEFAULT_SIGMAS * sigma))
