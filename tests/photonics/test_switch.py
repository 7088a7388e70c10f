import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from photonics.errors import MatchingError, ShapeError
from photonics.feedforward import ClementsMesh, MeshSettings, ReckMesh
from photonics.matching import Matching
from photonics.mesh_scattering import scattering
from photonics.routing import Router
from photonics.switch import FeedForwardFabric, MeshFabric
from photonics.switch_geometry import switch_6x6


@given(st.sampled_from([ClementsMesh, ReckMesh]), st.integers(2, 9), st.integers(0, 2**32 - 1))
def test_feed_forward_circuits_cross_exactly_the_cells_their_light_depends_on(mesh, n, seed):
    fabric = FeedForwardFabric(mesh(n))
    matching = Matching.random(n, np.random.default_rng(seed))
    plan = fabric.plan(matching)
    assert len(plan.circuits) == 2 * len(matching.pairs)

    def power(theta: np.ndarray, src: int, dst: int) -> float:
        K = fabric.mesh.n_mzis
        M = fabric.mesh.transfer(MeshSettings(theta, np.zeros(K), np.zeros(n)))
        return abs(M[dst, src]) ** 2

    for c in plan.circuits:
        assert matching.partner(c.source) == c.target
        assert power(plan.theta, c.source, c.target) == pytest.approx(1.0)
        assert c.loss_db == pytest.approx(0.5 * len(c.cells))
        for k in range(fabric.n_cells):  # flipping a crossed cell loses the light, others do not
            flipped = plan.theta.copy()
            flipped[k] = np.pi / 2 - flipped[k]
            assert (power(flipped, c.source, c.target) < 1e-9) == (k in c.cells)


def test_plans_compare_by_changed_cells_and_refuse_a_wrong_matching() -> None:
    fabric = FeedForwardFabric(ClementsMesh(6))
    a = fabric.plan(Matching([(0, 1), (2, 3)], 6))
    b = fabric.plan(Matching([(0, 1), (2, 4)], 6))
    changed = a.changed_cells(b)
    assert changed.size and np.all(a.theta[changed] != b.theta[changed])
    assert a.changed_cells(a).size == 0 and a.circuit_from(5) is None
    with pytest.raises(ShapeError):
        fabric.plan(Matching([(0, 1)], 4))
    with pytest.raises(MatchingError):
        fabric.plan([(0, 1)])


def test_a_recirculating_plan_carries_each_pair_both_ways_on_one_path() -> None:
    mesh, west, east = switch_6x6()
    fabric = MeshFabric(Router(mesh), west + east)
    plan = fabric.plan(Matching([(0, 6), (1, 7), (2, 11)], 12))
    S = np.abs(scattering(mesh, plan.theta)) ** 2
    ends = west + east
    for c in plan.circuits:
        back = plan.circuit_from(c.target)
        assert back.cells == c.cells[::-1]
        assert -10 * np.log10(S[ends[c.target], ends[c.source]]) == pytest.approx(c.loss_db, 1e-6)
