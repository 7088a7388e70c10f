from functools import cache

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from photonics.chips.switch import Fabric, FeedForwardFabric, MeshFabric, Pair, SwitchPlan
from photonics.errors import MatchingError, ShapeError
from photonics.feedforward.meshes import ClementsMesh, MeshSettings, ReckMesh
from photonics.matching import Matching
from photonics.recirculating.mesh_scattering import scattering
from photonics.recirculating.routing import DEFAULT_EXTINCTION_DB, Router
from photonics.recirculating.switch_geometry import switch_6x6
from tests.strategies import seeds


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


# ---- rerouting: new pairs around pinned ones ------------------------------------------------


@cache
def six_by_six() -> MeshFabric:
    mesh, west, east = switch_6x6()
    return MeshFabric(Router(mesh), west + east)


def fabrics() -> st.SearchStrategy[Fabric]:
    feed_forward = st.builds(
        lambda kind, n: FeedForwardFabric(kind(n)),
        st.sampled_from([ClementsMesh, ReckMesh]),
        st.integers(4, 10),
    )
    return st.one_of(feed_forward, st.just(six_by_six()))


def light(fabric: Fabric, theta: np.ndarray) -> np.ndarray:
    """|S[endpoint out, endpoint in]|^2 at angles ``theta`` (no phases): where light goes."""
    if isinstance(fabric, FeedForwardFabric):
        K, n = fabric.n_cells, fabric.n_ports
        return np.abs(fabric.mesh.transfer(MeshSettings(theta, np.zeros(K), np.zeros(n)))) ** 2
    ends = list(fabric.endpoints)
    return (np.abs(scattering(fabric.router.mesh, theta)) ** 2)[np.ix_(ends, ends)]


def running(fabric: Fabric, seed: int) -> tuple[SwitchPlan, list[Pair], list[Pair]]:
    """A running plan of a random matching, the pairs to keep (all but up to two) and new
    pairs among the other ports (dark or released)."""
    rng = np.random.default_rng(seed)
    n = fabric.n_ports
    n_pairs = int(rng.integers(1, n // 2 + 1 if isinstance(fabric, FeedForwardFabric) else 4))
    try:
        current = fabric.plan(Matching.random(n, rng, n_pairs))
    except MatchingError:
        assume(False)
    pairs = list(current.matching.pairs)
    keep = pairs[int(rng.integers(0, 3)) :]
    free = rng.permutation([p for p in range(n) if not any(p in q for q in keep)]).tolist()
    new = [(free[2 * i], free[2 * i + 1]) for i in range(min(2, len(free) // 2))]
    return current, keep, new


@given(fabrics(), seeds)
def test_pinned_reroutes_keep_every_kept_cell_and_realise_the_new_pairs(fabric, seed):
    current, keep, new = running(fabric, seed)
    rerouter = fabric.rerouter(current)
    matching = Matching([*keep, *new], fabric.n_ports)
    for cross in rerouter.pinned(keep, new):
        plan = rerouter.plan(matching, cross)
        for a, b in keep:  # the kept circuits and every cell they cross are as they were
            for c in (current.circuit_from(a), current.circuit_from(b)):
                assert plan.circuit_from(c.source) == c
                assert np.array_equal(cross[list(c.cells)], current.cross[list(c.cells)])
        S = light(fabric, plan.theta)
        for a, b in new:  # the light of each new pair reaches its partner
            assert S[:, a].argmax() == b and S[:, b].argmax() == a
            assert plan.circuit_from(a).target == b


@given(fabrics(), seeds)
def test_a_pair_the_running_states_carry_is_pinned_without_switching_a_cell(fabric, seed):
    current, _, _ = running(fabric, seed)
    pairs = list(current.matching.pairs)
    for i, pair in enumerate(pairs):
        found = fabric.rerouter(current).pinned(pairs[:i] + pairs[i + 1 :], [pair])
        assert found and all(np.array_equal(cross, current.cross) for cross in found)


def test_released_moves_the_pairs_in_the_way_when_pinned_finds_no_path() -> None:
    fabric = FeedForwardFabric(ClementsMesh(8))
    current = fabric.plan(Matching([(1, 2), (3, 4), (5, 6)], 8))
    rerouter = fabric.rerouter(current)
    keep, new = list(current.matching.pairs), [(0, 7)]
    assert rerouter.pinned(keep, new) == []  # a planar mesh: 0 -> 7 must move a live circuit
    assert rerouter.released(keep, new, max_released=0) is None
    cross = rerouter.released(keep, new, max_released=3)
    plan = rerouter.plan(Matching([*keep, *new], 8), cross)
    S = light(fabric, plan.theta)
    assert all(S[:, a].argmax() == b for c in plan.circuits for a, b in [(c.source, c.target)])


@pytest.mark.parametrize("budget", [0, 3, 20])
def test_completions_offer_the_fabrics_own_plan_first_then_at_most_the_budget(budget) -> None:
    fabric = FeedForwardFabric(ClementsMesh(8))
    current = fabric.plan(Matching([(0, 5), (2, 3)], 8))
    matching = Matching([(0, 5), (1, 3)], 8)  # ports 2, 4, 6, 7 are dark
    offered: list[np.ndarray] = []

    def score(cross: np.ndarray) -> tuple:
        offered.append(cross)
        return (int((cross != current.cross).sum()),)

    fabric.rerouter(current).completions(matching, budget, score)
    assert np.array_equal(offered[0], fabric.plan(matching).cross)
    assert 2 <= len(offered) <= budget + 2  # the default, the inherited one, then the search
    for cross in offered:  # every completion realises the matching
        fabric.rerouter(current).plan(matching, cross)
    mesh = six_by_six()
    mesh.rerouter(mesh.plan(Matching([(0, 6)], 12))).completions(matching, budget, score)
    assert len(offered) <= budget + 2  # a recirculating mesh offers none


@pytest.mark.parametrize("fabric", [FeedForwardFabric(ClementsMesh(6)), six_by_six()])
def test_rerouter_plan_refuses_states_that_do_not_join_the_pairs(fabric) -> None:
    current = fabric.plan(Matching([(0, 1)], fabric.n_ports))
    with pytest.raises(MatchingError):
        fabric.rerouter(current).plan(Matching([(0, 2)], fabric.n_ports), current.cross)


def test_only_a_recirculating_mesh_of_even_endpoints_has_its_own_all_to_all_cover() -> None:
    assert FeedForwardFabric(ClementsMesh(6)).all_to_all_cover() is None
    mesh = six_by_six()
    assert MeshFabric(mesh.router, mesh.endpoints[:5]).all_to_all_cover() is None
    cover = MeshFabric(mesh.router, mesh.endpoints[:6]).all_to_all_cover(attempts=2)
    joined = sorted(p for m in cover.matchings for p in m.pairs)
    assert joined == [(a, b) for a in range(6) for b in range(a + 1, 6)]


def test_a_mesh_fabric_routes_on_a_calibrations_per_state_extinction() -> None:
    fabric = six_by_six()
    n = fabric.n_cells
    ext = np.vstack([np.linspace(26.0, 44.0, n), np.full(n, 33.0)])
    ext[0, 0] = np.nan  # no bar figure: the router's own for bar, the measured one for cross
    ext[:, 1] = np.nan  # a dead cell's: the router's own
    routed = fabric.with_dead_cells([1], ext).router
    assert routed.dead[1] and routed.dead.sum() == 1
    expected = ext.copy()
    expected[0, 0] = expected[:, 1] = DEFAULT_EXTINCTION_DB
    np.testing.assert_array_equal(routed.extinction_db, expected)
