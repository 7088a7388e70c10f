"""Power levels as they are reported: a power in dBm and a circuit's isolation in dB, each
None where it has no value (an output with no light; a circuit with no other light to leak).

The one place powers become dBm and isolations are taken, for the command line, the demo and
the bench alike. Plain floats, no numpy: the command line's parser imports it cheaply.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

#: Below this, mW, a power is dark: -150 dBm, far under any photodiode (the emulated ones
#: read 1e-6 mW) and under a model's rounding; a dBm figure there would be noise.
DARK_MW = 1e-15

#: Why a circuit has no isolation: no other input is lit, so nothing can leak into its output.
NO_OTHER_LIGHT = "no other input is lit"


def dbm(power_mW: float) -> float | None:
    """``power_mW`` in dBm (dB above 1 mW), or None when it is dark (below :data:`DARK_MW`)."""
    return 10 * math.log10(power_mW) if power_mW >= DARK_MW else None


def isolation_db(signal_mW: float, leaks_mW: Iterable[float]) -> float | None:
    """A circuit's isolation, dB: the power its output gets from its own input over the most
    it gets from any other lit input (``leaks_mW``, one per other lit input). None when no
    other input is lit: nothing can leak, the isolation is undefined. A leak below
    :data:`DARK_MW` counts as :data:`DARK_MW`, so the figure is then a lower bound."""
    leaks = list(leaks_mW)
    if not leaks:
        return None
    return 10 * math.log10(max(signal_mW, DARK_MW) / max(*leaks, DARK_MW))


def worst(isolations: Iterable[float | None]) -> float | None:
    """The lowest of the defined isolations (dB), None when none is defined."""
    return min((i for i in isolations if i is not None), default=None)


def shown(value: float | None, spec: str, missing: str) -> str:
    """``value`` formatted with ``spec`` (e.g. ``".1f"``) for a table, ``missing`` when None
    (``"dark"`` for a power, ``"n/a"`` for an isolation)."""
    return missing if value is None else format(value, spec)
