"""Which meter channel sees which chip output, found from the light before a calibration trusts
the bench configuration's wiring.

Each chip output has its own ring resonator with its own heater (``ring_channels``). The routine
(:meth:`hil.bench.Bench.check_wiring`) scans the laser over one free spectral range and reads
every output at each step: each channel shows its ring's notch. It then heats ring ``k`` by its
own amount (a different one per ring, read back as power with the driver's V/I) and scans
again: each channel's notch moves by the shift of the ring in front of it. :func:`match_rings`
pairs channels and rings by those shifts (circular, in fractions of the FSR), the best overall
assignment (Hungarian) over a range of the rings' tuning efficiency; a channel whose light
shows no notch (a dark output) is not
identified. Neither the mesh's calibration nor its state matters: only the rings move. Each
output is read with the laser in the input that lights it best (the inputs are tried once
each first), so a mesh that leaves an output dark from one input still shows its notch.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

#: An output is too dark to read a notch from below this fraction of the best-lit one's light.
MIN_LIGHT = 1e-2
#: An input lights an output well enough at this fraction of the best input's light for it.
WELL_LIT = 0.1


def sources(lit: np.ndarray) -> np.ndarray:
    """For each output, the input to read it from, given one reading of every output per
    input (``lit[input, output]``, mW): as few inputs as light every output well enough
    (:data:`WELL_LIT` of its best), greedily, each output from the brightest of them."""
    good = lit >= WELL_LIT * lit.max(axis=0)
    chosen: list[int] = []
    covered = np.zeros(lit.shape[1], dtype=bool)
    while not covered.all():
        chosen.append(int(np.argmax((good & ~covered).sum(axis=1))))
        covered |= good[chosen[-1]]
    return np.array(chosen)[np.argmax(lit[chosen], axis=0)]


def notch_shifts(before: np.ndarray, after: np.ndarray) -> list[float | None]:
    """How far each output's ring notch moved between two scans of one FSR (equal steps, the
    same wavelengths; ``(steps, outputs)``, mW), as a fraction of the FSR in [0, 1); None for
    an output too dark to tell (:data:`MIN_LIGHT`)."""
    mean = before.mean(axis=0)
    out: list[float | None] = []
    for k in range(before.shape[1]):
        if not mean[k] > MIN_LIGHT * mean.max():
            out.append(None)
            continue
        a, b = (s[:, k] - np.median(s[:, k]) for s in (before, after))
        n = a.size  # circular cross-correlation: the shift that lays the first on the second
        score = np.fft.irfft(np.conj(np.fft.rfft(a)) * np.fft.rfft(b), n)
        out.append(float(np.argmax(score)) / n)
    return out


#: The most a channel's shift can cost a pairing (FSR fraction).
OUTLIER = 0.1


def match_rings(
    shifts: list[float | None], expected: np.ndarray, spread: float = 1.5
) -> dict[int, int]:
    """``{channel: ring}``: the channels with a measured ``shifts`` (FSR fractions) paired
    with the rings of ``expected`` shifts so that the total circular distance is least. The
    rings' tuning efficiency is known only roughly: the expected shifts are tried scaled by
    ``1 / spread`` .. ``spread`` and the best scale is taken."""
    seen = [c for c, s in enumerate(shifts) if s is not None]
    if not seen:
        return {}
    measured = np.array([shifts[c] for c in seen])
    best: tuple[float, dict[int, int]] = (np.inf, {})
    for scale in np.geomspace(1 / spread, spread, 121):
        distance = np.abs(measured[:, None] - scale * np.asarray(expected)[None, :]) % 1.0
        # circular distance, capped: one misread channel must not pull the rest off by one
        cost = np.minimum(np.minimum(distance, 1.0 - distance), OUTLIER)
        rows, cols = linear_sum_assignment(cost)
        total = float(cost[rows, cols].sum())
        if total < best[0]:
            best = (total, {seen[r]: int(c) for r, c in zip(rows, cols, strict=True)})
    return best[1]
