"""Fabrics and checks shared by the tests of :mod:`firmware.fabric`."""

from functools import cache

import numpy as np

from photonics import ClementsMesh, MeshSettings
from photonics.chips.switch import FeedForwardFabric, MeshFabric, SwitchPlan
from photonics.recirculating.routing import Router
from photonics.recirculating.switch_geometry import switch_32
from photonics.recirculating.waveguide_mesh import BAR, CROSS, trace


@cache
def clements(n: int) -> FeedForwardFabric:
    return FeedForwardFabric(ClementsMesh(n))


@cache
def hex32() -> MeshFabric:
    mesh, ends = switch_32()
    return MeshFabric(Router(mesh), ends)


def pairs_of(matchings) -> list[tuple[int, int]]:
    return [p for m in matchings for p in m.pairs]


def light_goes(fabric: FeedForwardFabric, plan: SwitchPlan) -> np.ndarray:
    """|M[out, in]|^2 of the mesh at the plan's angles (no phases): where light really goes."""
    n = fabric.mesh.n_mzis
    M = fabric.mesh.transfer(MeshSettings(plan.theta, np.zeros(n), np.zeros(fabric.n_ports)))
    return np.abs(M) ** 2


def mesh_exit(fabric: MeshFabric, plan: SwitchPlan, a: int) -> int:
    """The endpoint where light from endpoint ``a`` leaves, traced through the plan's states."""
    states = np.where(np.sin(plan.theta) ** 2 > 0.5, CROSS, BAR)
    return fabric.endpoints.index(trace(fabric.router.mesh, states, fabric.endpoints[a]).exit_port)
