"""Plan helpers shared by the fabric modules: plan a matching when it is realizable, check a
plan against its fabric."""

from __future__ import annotations

from photonics.chips.switch import Fabric, SwitchPlan
from photonics.errors import MatchingError, SettingsError, ShapeError
from photonics.matching import Matching


def try_plan(fabric: Fabric, matching: Matching) -> SwitchPlan | None:
    """``fabric.plan(matching)``, or None when the matching is not realizable."""
    try:
        return fabric.plan(matching)
    except MatchingError:
        return None


def check_plan(fabric: Fabric, plan: SwitchPlan, name: str) -> None:
    """Raise unless ``plan`` (called ``name`` in the message) is a plan of ``fabric``'s size."""
    if not isinstance(plan, SwitchPlan):
        raise SettingsError(f"{name} must be a SwitchPlan, got {type(plan).__name__}")
    if plan.theta.shape != (fabric.n_cells,) or plan.matching.n_ports != fabric.n_ports:
        raise ShapeError(
            f"{name} is for {plan.matching.n_ports} ports and {plan.theta.size} cells; the "
            f"fabric has {fabric.n_ports} ports and {fabric.n_cells} cells"
        )
