"""Tenant slices: disjoint runs of consecutive ports, one per tenant, checked for isolation
(no tenant's matching changes a cell that another tenant's circuits cross)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from firmware.fabric.covers import circle_rounds
from firmware.fabric.jobs import Job, check_ports, job_matchings
from firmware.fabric.plans import try_plan
from photonics.chips.switch import Fabric, Pair, Rerouter, SwitchPlan
from photonics.errors import MatchingError, PortError, SettingsError
from photonics.matching import Matching


@dataclass(frozen=True)
class TenantSlice:
    """A tenant's ports (consecutive endpoints) and its matchings on the whole switch."""

    name: str
    ports: tuple[int, ...]
    matchings: tuple[Matching, ...]


@dataclass(frozen=True)
class Slicing:
    """Disjoint port sets of tenants, checked for isolation (see :func:`slice_tenants`).

    ``baseline``: the plan with every tenant in its first matching.
    """

    n_ports: int
    slices: tuple[TenantSlice, ...]
    reserved: tuple[int, ...]
    baseline: SwitchPlan

    def tenant(self, name: str) -> TenantSlice:
        for t in self.slices:
            if t.name == name:
                return t
        raise SettingsError(f"no tenant {name!r}; tenants are {[t.name for t in self.slices]}")

    @property
    def free_ports(self) -> tuple[int, ...]:
        used = {p for t in self.slices for p in t.ports} | set(self.reserved)
        return tuple(p for p in range(self.n_ports) if p not in used)

    def free_runs(self) -> list[tuple[int, int]]:
        """Maximal runs of consecutive free ports, as (first port, length)."""
        return _runs(self.free_ports)

    def fragmentation(self, size: int) -> float:
        """Share of the free ports that cannot host a new tenant of ``size`` ports.

        A tenant needs ``size`` consecutive free ports, so a run of ``L`` free ports hosts
        ``floor(L / size) * size`` of them; the rest of the run is stranded. 0 when no port is
        free (nothing is wasted) or when every free port is usable.
        """
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise SettingsError(f"size must be an integer >= 1, got {size!r}")
        free = len(self.free_ports)
        if not free:
            return 0.0
        usable = sum(length // size * size for _, length in self.free_runs())
        return (free - usable) / free


def _runs(ports: Sequence[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for p in ports:
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((p, 1))
    return runs


def _tenant_matchings(ports: Sequence[int], topology: str, n: int) -> list[Matching]:
    if topology == "ring":
        return job_matchings(Job("tenant", "ring", ports), n)
    local = circle_rounds(len(ports), 0) if len(ports) > 1 else []
    return [Matching([(ports[a], ports[b]) for a, b in m.pairs], n) for m in local]


def slice_tenants(
    fabric: Fabric,
    requests: Sequence[tuple[str, int]],
    topology: Literal["all_to_all", "ring"] = "all_to_all",
    reserved: Iterable[int] = (),
) -> Slicing:
    """Give each tenant ``(name, n_ports)`` its own consecutive ports, isolated from the others.

    Ports are consecutive endpoint indices: on a feed-forward mesh, adjacent modes; with the
    endpoints of :func:`~photonics.recirculating.switch_geometry.switch_32`, neighbours on one side
    of the mesh. Tenants are placed largest first, each in the smallest run of free ports (not
    ``reserved``) that fits it (best fit, which keeps large runs whole).

    Isolation is checked, not assumed: from the baseline (every tenant in its first matching),
    each tenant's every matching (``topology``: its all-to-all rounds or a ring in port order)
    must be realizable without changing a cell that another tenant's circuits cross. The
    tenant's own pairs are routed again, every other path pinned (:meth:`Rerouter.pinned
    <photonics.chips.switch.Rerouter.pinned>`, in a few orders), else the whole matching is planned
    from scratch; the check holds against the others' first matchings. On a feed-forward mesh
    a plan from scratch keeps each tenant inside its own band of modes (its sorting network
    never swaps across a band edge), so there any other tenants' states give the same cells.

    Raises :class:`PortError` when the tenants need more ports than are free, or a tenant finds
    no run of free ports long enough; :class:`MatchingError` when isolation fails.
    """
    n = fabric.n_ports
    if topology not in ("all_to_all", "ring"):
        raise SettingsError(f"topology must be 'all_to_all' or 'ring', got {topology!r}")
    blocked = set(check_ports("reserved", reserved))
    if blocked and max(blocked) >= n:
        raise PortError(f"reserved port {max(blocked)} is out of range 0..{n - 1}")
    names: set[str] = set()
    for req in requests:
        if len(req) != 2:
            raise SettingsError(f"a request is (name, n_ports), got {req!r}")
        name, size = req
        if not isinstance(name, str) or not name or name in names:
            raise SettingsError(f"tenant names must be distinct non-empty strings, got {name!r}")
        names.add(name)
        if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 2:
            raise PortError(f"tenant {name!r} needs an integer >= 2 ports, got {size!r}")
    free = [p for p in range(n) if p not in blocked]
    need = sum(int(size) for _, size in requests)
    if need > len(free):
        raise PortError(
            f"tenants need {need} ports in all but only {len(free)} of the {n} ports are free"
        )
    runs = _runs(free)
    ports: dict[str, tuple[int, ...]] = {}
    for name, size in sorted(requests, key=lambda r: -int(r[1])):  # stable: ties keep order
        fits = [i for i, (_, length) in enumerate(runs) if length >= size]
        if not fits:
            longest = max((length for _, length in runs), default=0)
            raise PortError(
                f"tenant {name!r} needs {size} consecutive free ports; the longest free run "
                f"has {longest} ({sum(r[1] for r in runs)} ports free in {len(runs)} runs)"
            )
        i = min(fits, key=lambda i: (runs[i][1], runs[i][0]))
        start, length = runs[i]
        ports[name] = tuple(range(start, start + int(size)))
        runs[i] = (start + int(size), length - int(size))
    slices = tuple(
        TenantSlice(name, ports[name], tuple(_tenant_matchings(ports[name], topology, n)))
        for name, _ in requests
    )
    baseline = _check_isolation(fabric, slices)
    return Slicing(n, slices, tuple(sorted(blocked)), baseline)


def _check_isolation(fabric: Fabric, slices: Sequence[TenantSlice]) -> SwitchPlan:
    """The baseline plan; raises MatchingError when a tenant's matching touches another's."""
    n = fabric.n_ports
    first = {t.name: list(t.matchings[0].pairs) if t.matchings else [] for t in slices}
    try:
        baseline = fabric.plan(Matching([p for pairs in first.values() for p in pairs], n))
    except MatchingError as err:
        raise MatchingError(
            f"the tenants' first matchings are not realizable together: {err}"
        ) from err
    owner = {p: t.name for t in slices for p in t.ports}
    rerouter, base_cross = fabric.rerouter(baseline), baseline.cross
    for t in slices:
        others = [p for name, pairs in first.items() if name != t.name for p in pairs]
        theirs = np.zeros(fabric.n_cells, dtype=bool)
        for c in baseline.circuits:
            if owner[c.source] != t.name:
                theirs[list(c.cells)] = True
        for i, m in enumerate(t.matchings[1:], start=1):
            cross = _around(fabric, rerouter, others, list(m.pairs))
            if cross is None:
                raise MatchingError(
                    f"tenant {t.name!r}: matching {i} {m.pairs} does not route around the "
                    f"other tenants' paths"
                )
            changed = np.flatnonzero(cross != base_cross)
            touched = changed[theirs[changed]]
            if touched.size:
                raise MatchingError(
                    f"tenant {t.name!r}: matching {i} changes cells {touched.tolist()} that "
                    f"other tenants' circuits cross"
                )
    return baseline


def _around(
    fabric: Fabric, rerouter: Rerouter, others: list[Pair], pairs: list[Pair]
) -> np.ndarray | None:
    """Cell states of ``others + pairs``: ``pairs`` routed around the others' pinned circuits
    (sequential routing depends on the order: each rotation of ``pairs``, both ways), else
    ``fabric.plan`` of them all; None when neither realizes them."""
    orders = [pairs[r:] + pairs[:r] for r in range(len(pairs))]
    for order in orders + [o[::-1] for o in orders]:
        found = rerouter.pinned(others, order)
        if found:
            return found[0]
    plan = try_plan(fabric, Matching([*others, *pairs], fabric.n_ports))
    return None if plan is None else plan.cross
