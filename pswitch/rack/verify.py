"""The physical layer kept honest: configurations a study used, applied to the emulated switch
through the SDK (``SCH:LOAD``, ``SCH:STAR``) and measured on its photodiodes, one accelerator
sending at a time (:func:`pswitch.demo.check_circuits`): how many verified, their worst
isolation, and the reconfiguration time the switch reported for each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from firmware.fabric.collective_timing import _edge_matchings
from firmware.sdk import Switch
from photonics import levels
from photonics.matching import Matching
from pswitch.demo import check_circuits
from pswitch.rack import model

#: How long each configuration is held, s (as a schedule step's dwell).
DWELL_S = 1e-3


def ring_matchings(accelerators: Sequence[int], n: int) -> list[Matching]:
    """The matchings that join ``accelerators`` in a bidirectional ring, on ``n`` ports: its
    links coloured (two for an even ring, three for an odd one, one for a pair)."""
    a = list(accelerators)
    if len(a) < 2:
        return []
    links = [(a[0], a[1])] if len(a) == 2 else [(a[i], a[(i + 1) % len(a)]) for i in range(len(a))]
    return [Matching(pairs, n) for pairs in _edge_matchings(links)]


def verify(rack: model.Rack, matchings: Sequence[Matching], seed: int = 0) -> dict[str, Any]:
    """Apply each of ``matchings`` on an emulated switch of the rack's chips (its mesh, its
    driver class, one endpoint an accelerator) and measure it; the counts and figures."""
    rows = []
    with Switch.emulated(
        ports=rack.accelerators, mesh=rack.mesh, seed=seed, driver=rack.driver
    ) as sw:
        for m in matchings:
            (reconfigure,) = sw.run_matchings([(m, DWELL_S)])
            _, circuits = check_circuits(sw)
            rows.append(
                {
                    "pairs": [list(p) for p in m.pairs],
                    "reconfigure_s": reconfigure,
                    "verified": all(c["verified"] for c in circuits),
                    "isolation_db": levels.worst([c["isolation_db"] for c in circuits]),
                }
            )
    return {
        "applied": len(rows),
        "verified": sum(r["verified"] for r in rows),
        "worst_isolation_db": levels.worst([r["isolation_db"] for r in rows]),
        "reconfigure_s_max": max((r["reconfigure_s"] for r in rows), default=0.0),
        "configurations": rows,
    }
