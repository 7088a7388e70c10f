"""Sequences of matchings on a switch fabric: all-to-all covers (:mod:`.covers`),
collectives (:mod:`.collectives`) compiled into matchings and timed (:mod:`.collective_timing`),
answered across sizes, ranks and delays (:mod:`.collective_sweep`), a hybrid-parallel training
step (:mod:`.training`),
time-multiplexed schedules (:mod:`.schedules`), jobs (:mod:`.jobs`), accelerator failover onto
spare ports (:mod:`.spares`) and tenant slices (:mod:`.tenants`); :mod:`.plans` holds the plan
helpers they share. Import the names from here.

Pure logic on :mod:`photonics.chips.switch` fabrics (no I/O). Terms:

- a *plan* (:class:`~photonics.chips.switch.SwitchPlan`) is every cell's angle plus the directed
  circuits it carries; a *changed cell* is one whose bar/cross state differs between two plans.
  On the emulated feed-forward chip each cell is one heater channel (channel ``k`` is the internal
  heater of MZI ``k``), so reconfiguration time grows with the changed cells
  (:class:`HeaterWriteModel`);
- a live circuit is *disturbed* by a reconfiguration when a cell on its path changes state (its
  light is interrupted while the heaters move), even if it joins the same endpoints afterwards;
- a job's topology is a list of matchings applied one at a time (:func:`job_matchings`): a port
  is in at most one pair of a matching, and each pair ``(a, b)`` is two circuits,
  ``a -> b`` and ``b -> a``, so one matching carries both directions of its links.

Times are in s.
"""

from firmware.fabric.collective_sweep import (
    Affine,
    AllReduceLines,
    AllToAllCrossover,
    StragglerPoint,
    all_reduce_lines,
    all_to_all_crossover,
    crossover,
    straggler_sweep,
)
from firmware.fabric.collective_timing import (
    CircuitSchedule,
    CircuitStep,
    CollectiveTiming,
    Link,
    StepTime,
    StragglerCost,
    circuit_timing,
    compile_collective,
    electrical_timing,
    straggler_cost,
    with_straggler,
)
from firmware.fabric.collectives import (
    Collective,
    Round,
    Transfer,
    all_to_all_pairs,
    all_to_all_ring,
    all_to_all_shift,
    halving_doubling_all_reduce,
    holdings,
    ring_all_gather,
    ring_all_reduce,
    ring_reduce_scatter,
    straggler_all_reduce,
)
from firmware.fabric.covers import AllToAll, all_to_all
from firmware.fabric.jobs import Job, job_matchings
from firmware.fabric.schedules import (
    HeaterWriteModel,
    ReconfigurationModel,
    Schedule,
    ScheduleTiming,
    Step,
    phases_schedule,
    plan_schedule,
    schedule_timing,
)
from firmware.fabric.spares import FailoverResult, failover
from firmware.fabric.tenants import Slicing, TenantSlice, slice_tenants
from firmware.fabric.training import HybridJob, StepSettings, training_step

__all__ = [
    "Affine",
    "AllReduceLines",
    "AllToAll",
    "AllToAllCrossover",
    "CircuitSchedule",
    "CircuitStep",
    "Collective",
    "CollectiveTiming",
    "FailoverResult",
    "HeaterWriteModel",
    "HybridJob",
    "Job",
    "Link",
    "ReconfigurationModel",
    "Round",
    "Schedule",
    "ScheduleTiming",
    "Slicing",
    "Step",
    "StepSettings",
    "StepTime",
    "StragglerCost",
    "StragglerPoint",
    "TenantSlice",
    "Transfer",
    "all_reduce_lines",
    "all_to_all",
    "all_to_all_crossover",
    "all_to_all_pairs",
    "all_to_all_ring",
    "all_to_all_shift",
    "circuit_timing",
    "compile_collective",
    "crossover",
    "electrical_timing",
    "failover",
    "halving_doubling_all_reduce",
    "holdings",
    "job_matchings",
    "phases_schedule",
    "plan_schedule",
    "ring_all_gather",
    "ring_all_reduce",
    "ring_reduce_scatter",
    "schedule_timing",
    "slice_tenants",
    "straggler_all_reduce",
    "straggler_cost",
    "straggler_sweep",
    "training_step",
    "with_straggler",
]
