"""A rack of accelerators and what a collective costs on it: on the emulated photonic switch
(compiled into the matchings the switch realizes, reconfigured by a driver class) and on the
electrical racks as built (a server-bounded domain with a scale-out network, a fixed torus, and
the ideal non-blocking switch as the bound). Pure functions of frozen settings; times in s,
bytes in bytes, bandwidths in Gb/s each way. ``docs/rack.md`` gives every default's source.

The photonic rack: accelerator ``a`` has ``ports`` optical ports; port ``k`` of every
accelerator goes to switch chip ``k`` (``ports`` chips of ``accelerators`` endpoints each), so a
matching is set on every chip at once and each circuit carries ``ports x port_gbps``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal

from firmware import fabric as ff
from firmware.electronics import driver_class
from firmware.fabric.training import sends
from photonics.chips import topologies
from photonics.errors import SettingsError

#: How often a photonic job's circuits change: once when it starts (a ring at full port
#: bandwidth), at each phase of a training step, or at each step of a collective.
Reconfigure = Literal["job", "phase", "step"]
#: The collectives a study prices, by name (functions of firmware.fabric).
COLLECTIVES = {
    "ring": ff.ring_all_reduce,
    "halving-doubling": ff.halving_doubling_all_reduce,
    "straggler": ff.straggler_all_reduce,
    # a pipeline's stages, each sending its activations to the next at once
    "chain": lambda ports, n_bytes: sends([list(ports)], n_bytes),
}


def _positive(name: str, value: float) -> None:
    if isinstance(value, bool) or not (isinstance(value, int | float) and math.isfinite(value)):
        raise SettingsError(f"{name} must be a number, got {value!r}")
    if value <= 0:
        raise SettingsError(f"{name} must be > 0, got {value!r}")


@dataclass(frozen=True)
class Rack:
    """A rack of ``servers`` servers of ``per_server`` accelerators.

    Photonic: ``ports`` optical ports an accelerator, ``port_gbps`` each (Gb/s each way), onto
    chips of the ``mesh`` topology reconfigured by the ``driver`` class
    (:mod:`firmware.electronics`). Electrical as built: ``scale_up_gbps`` an accelerator inside
    its server (an NVLink-class domain), ``scale_out_gbps`` an accelerator between servers (its
    NIC); the fixed torus of shape ``torus`` (its sizes multiply to the accelerators; empty:
    ``servers x per_server``), each accelerator with two links a dimension (+ and -) of
    ``torus_gbps`` each way.
    ``alpha_us``: the latency of one step of a collective, us.
    """

    servers: int = 4
    per_server: int = 8
    ports: int = 8
    port_gbps: float = 100.0
    scale_up_gbps: float = 800.0
    scale_out_gbps: float = 200.0
    torus_gbps: float = 100.0
    torus: tuple[int, ...] = ()
    alpha_us: float = 5.0
    mesh: str = "clements"
    driver: str = "parallel"

    def __post_init__(self) -> None:
        for name in ("servers", "per_server", "ports"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SettingsError(f"{name} must be an integer >= 1, got {value!r}")
        for name in ("port_gbps", "scale_up_gbps", "scale_out_gbps", "torus_gbps"):
            _positive(name, getattr(self, name))
        if not (math.isfinite(self.alpha_us) and self.alpha_us >= 0):
            raise SettingsError(f"alpha_us must be >= 0, got {self.alpha_us!r}")
        if self.torus and (
            any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in self.torus)
            or math.prod(self.torus) != self.accelerators
        ):
            raise SettingsError(
                f"torus {self.torus} must be sizes >= 1 multiplying to {self.accelerators}"
            )
        topologies.topology(self.mesh).check_ports(self.accelerators)
        driver_class(self.driver)

    @property
    def accelerators(self) -> int:
        return self.servers * self.per_server

    @property
    def torus_shape(self) -> tuple[int, ...]:
        return self.torus or (self.servers, self.per_server)

    def server_of(self, accelerator: int) -> int:
        return accelerator // self.per_server

    def link(self, gbps: float) -> ff.Link:
        return ff.Link(bandwidth_Bps=gbps * 1e9 / 8, alpha_s=self.alpha_us * 1e-6)


# --- the photonic rack ---------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _fabric(mesh: str, n: int):
    return topologies.topology(mesh).fabric(n)


@functools.lru_cache(maxsize=4096)
def photonic_s(
    rack: Rack,
    collective: str,
    ranks: int,
    n_bytes: float,
    how: Reconfigure,
    ports: int | None = None,
) -> float:
    """One ``collective`` of ``ranks`` ranks, ``n_bytes`` each, on the photonic rack (s).

    ``job``: the circuits form a bidirectional ring when the job starts (not counted here), and
    the collective runs over it as on a ring of direct links, half of the ``ports`` it holds
    (None: all of an accelerator's) to each neighbour (all of them when there is one); ``phase``
    and ``step``: the collective
    is compiled into the chips' matchings (every port on the circuit), reconfiguring before
    each step whose matching changes (``phase``: the first matching is set while the ranks
    compute, so it is free).
    """
    if ranks < 2:
        return 0.0
    if how == "job":
        held = rack.ports if ports is None else ports
        ring = rack.link(held * rack.port_gbps / (1 if ranks == 2 else 2))
        return ff.electrical_timing(COLLECTIVES[collective](range(ranks), n_bytes), ring).total_s
    return _compiled(rack, collective, ranks, n_bytes, how == "phase")


def _compiled(rack: Rack, collective: str, ranks: int, n_bytes: float, set_before: bool) -> float:
    fabric = _fabric(rack.mesh, rack.accelerators)
    schedule = ff.compile_collective(
        COLLECTIVES[collective](range(ranks), n_bytes), rack.accelerators, fabric
    )
    model = ff.HeaterWriteModel(driver_class(rack.driver))
    link = rack.link(rack.ports * rack.port_gbps)
    return ff.circuit_timing(schedule, link, model, first_configured=set_before).total_s


def reconfigure_s(rack: Rack, changed_cells: int | None = None) -> float:
    """One reconfiguration of the rack's chips (in parallel), s: ``changed_cells`` of a chip's
    cells written (None: every cell), then the heaters' settling."""
    fabric = _fabric(rack.mesh, rack.accelerators)
    n = fabric.n_cells if changed_cells is None else changed_cells
    return ff.HeaterWriteModel(driver_class(rack.driver)).seconds(n, fabric.n_cells)


# --- the electrical racks as built ---------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def server_domain_s(
    rack: Rack, collective: str, per_server: tuple[int, ...], n_bytes: float
) -> float:
    """One ``collective`` on the server-bounded rack (s), ``per_server[i]`` of its ranks in
    server ``i``: inside one server over the scale-up domain; across servers the faster of a
    ring over every rank, whose slowest links are the NICs, and the hierarchical form
    collective libraries use: a reduce-scatter inside each server, an all-reduce of each shard
    between servers over the NICs (the server with the fewest ranks carries the largest
    shards), an all-gather inside."""
    counts = tuple(c for c in per_server if c)
    ranks = sum(counts)
    if ranks < 2:
        return 0.0
    make = COLLECTIVES[collective]
    up, out = rack.link(rack.scale_up_gbps), rack.link(rack.scale_out_gbps)
    if len(counts) == 1:
        return ff.electrical_timing(make(range(ranks), n_bytes), up).total_s
    ring = ff.electrical_timing(make(range(ranks), n_bytes), out).total_s
    local = min(counts)  # the server with the fewest ranks carries the largest shards
    across = ff.electrical_timing(make(range(len(counts)), n_bytes / local), out).total_s
    inside = max(
        (
            ff.electrical_timing(ff.ring_reduce_scatter(range(c), n_bytes), up).total_s
            + ff.electrical_timing(ff.ring_all_gather(range(c), n_bytes), up).total_s
            for c in counts
            if c > 1
        ),
        default=0.0,
    )
    across += inside
    return min(ring, across)


@functools.lru_cache(maxsize=4096)
def torus_s(rack: Rack, collective: str, ranks: int, n_bytes: float, dims: int) -> float:
    """One ``collective`` on a block of the fixed torus spanning ``dims`` of its dimensions
    (s): a ring over the block, as torus collectives run one ring a dimension at once, each
    accelerator's links along those dimensions shared by its two ring neighbours (one link of
    ``torus_gbps`` a dimension each way); the links of the other dimensions stay idle."""
    if ranks < 2:
        return 0.0
    link = rack.link(max(dims, 1) * rack.torus_gbps)
    return ff.electrical_timing(COLLECTIVES[collective](range(ranks), n_bytes), link).total_s


@functools.lru_cache(maxsize=4096)
def ideal_s(rack: Rack, collective: str, ranks: int, n_bytes: float) -> float:
    """One ``collective`` on the ideal non-blocking switch with the photonic rack's bandwidth
    an accelerator (s): the bound."""
    if ranks < 2:
        return 0.0
    link = rack.link(rack.ports * rack.port_gbps)
    return ff.electrical_timing(COLLECTIVES[collective](range(ranks), n_bytes), link).total_s
