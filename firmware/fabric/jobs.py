"""Training jobs on the switch: accelerators on ports, a ring or torus topology, spares for
failover, and the job's circuits as matchings applied one at a time."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from photonics.errors import PortError, SettingsError, ShapeError
from photonics.matching import Matching


def check_ports(name: str, values: Iterable[object]) -> tuple[int, ...]:
    """``values`` as switch ports; raises :class:`PortError` for a non-port or a repeat."""
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
            raise PortError(f"{name} must be switch ports (integers >= 0), got {v!r}")
        out.append(int(v))
    if len(set(out)) != len(out):
        dup = next(p for p in out if out.count(p) > 1)
        raise PortError(f"port {dup} appears twice in {name} {out}")
    return tuple(out)


@dataclass(frozen=True)
class Job:
    """A training job on the switch: accelerator ``i`` sits on switch port ``endpoints[i]``.

    ``topology``: ``"ring"`` (accelerators in ``endpoints`` order, the last joined to the first)
    or ``"torus"`` (``shape = (rows, cols)``, accelerator ``(r, c)`` is ``r * cols + c``; every
    row and every column is a ring). ``spares``: idle ports reserved for failover; on a
    feed-forward mesh put them among the job's ports (e.g. one after every few), since a
    spare's new circuit switches a cell of every live circuit it must cross.
    """

    name: str
    topology: Literal["ring", "torus"]
    endpoints: tuple[int, ...]
    spares: tuple[int, ...] = ()
    shape: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SettingsError(f"a job needs a non-empty name, got {self.name!r}")
        if self.topology not in ("ring", "torus"):
            raise SettingsError(f"topology must be 'ring' or 'torus', got {self.topology!r}")
        ends = check_ports("endpoints", self.endpoints)
        spares = check_ports("spares", self.spares)
        if len(ends) < 2:
            raise PortError(f"job {self.name!r} needs at least 2 accelerators, got {len(ends)}")
        both = sorted(set(ends) & set(spares))
        if both:
            raise PortError(f"ports {both} of job {self.name!r} are both endpoints and spares")
        shape = tuple(int(s) for s in self.shape)
        if self.topology == "ring":
            if shape not in ((), (len(ends),)):
                raise ShapeError(f"a ring of {len(ends)} has shape ({len(ends)},), got {shape}")
            shape = (len(ends),)
        elif len(shape) != 2 or min(shape) < 1 or shape[0] * shape[1] != len(ends):
            raise ShapeError(
                f"a torus needs shape (rows, cols) with rows x cols = {len(ends)} accelerators, "
                f"got {self.shape!r}"
            )
        object.__setattr__(self, "endpoints", ends)
        object.__setattr__(self, "spares", spares)
        object.__setattr__(self, "shape", shape)

    def with_spare(self, failed_port: int, spare: int) -> Job:
        """This job with ``spare`` in place of ``failed_port`` (which leaves the job)."""
        if failed_port not in self.endpoints:
            raise PortError(f"port {failed_port} is not an endpoint of job {self.name!r}")
        if spare not in self.spares:
            raise PortError(f"port {spare} is not a spare of job {self.name!r}: {self.spares}")
        ends = tuple(spare if p == failed_port else p for p in self.endpoints)
        spares = tuple(p for p in self.spares if p != spare)
        return Job(self.name, self.topology, ends, spares, self.shape)


def _ring_rounds(cycle: Sequence[int]) -> list[list[tuple[int, int]]]:
    """Edges of a ring in as few matchings as possible: 1 (k = 2), 2 (even k), 3 (odd k)."""
    k = len(cycle)
    if k < 2:
        return []
    if k == 2:
        return [[(cycle[0], cycle[1])]]
    edges = [(cycle[i], cycle[(i + 1) % k]) for i in range(k)]
    if k % 2 == 0:
        return [edges[0::2], edges[1::2]]
    # odd: the closing edge meets edge 0 and edge k-2, one of each parity
    return [edges[0 : k - 1 : 2], edges[1 : k - 1 : 2], [edges[-1]]]


def job_matchings(job: Job, n_ports: int) -> list[Matching]:
    """The circuits of ``job`` on an ``n_ports`` switch, as matchings applied one at a time.

    A ring of k: its edges by parity of their position, 2 matchings for even k, 3 for odd k
    (1 for k = 2). A torus: the row rings' matchings (rows combined, as they share no port),
    then the column rings'. Each pair carries both directions.
    """
    top = max(job.endpoints + job.spares)
    if top >= n_ports:
        raise PortError(f"job {job.name!r} uses port {top}; the switch has ports 0..{n_ports - 1}")
    if job.topology == "ring":
        groups = [_ring_rounds(job.endpoints)]
    else:
        rows, cols = job.shape
        grid = [job.endpoints[r * cols : (r + 1) * cols] for r in range(rows)]
        rings = [[_ring_rounds(row) for row in grid]]
        rings.append([_ring_rounds([grid[r][c] for r in range(rows)]) for c in range(cols)])
        # rings of one kind have the same length, hence the same rounds: merge round by round
        groups = [
            [[p for r in rounds for p in r] for rounds in zip(*kind, strict=True)] for kind in rings
        ]
    return [Matching(pairs, n_ports) for g in groups for pairs in g]
