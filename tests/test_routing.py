import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import seeds

from photonics import Matching, Permutation, PortError
from photonics.routing import (
    Router,
    all_to_all_cover,
    requests_for,
    round_robin,
    switch_6x6,
    verify,
)
from photonics.waveguide_mesh import BAR, CROSS, hexagonal_mesh, scattering

MESH = hexagonal_mesh(3, 4)
ENDPOINTS = list(range(0, MESH.n_ports, MESH.n_ports // 8))[:8]


def _conflict_free(result) -> bool:
    ends = [e for p in result.paths for e in p.port_ends]
    if len(ends) != len(set(ends)):
        return False
    return all(
        result.states[c] == s for p in result.paths for c, s in zip(p.cells, p.states, strict=True)
    )


@given(seeds)
def test_routed_configurations_are_conflict_free_and_realise_every_pair(seed) -> None:
    matching = Matching.random(8, np.random.default_rng(seed), n_pairs=3)
    result = Router(MESH).route(requests_for(matching, ENDPOINTS))
    assert _conflict_free(result)
    S = scattering(MESH, result.theta(), cell_loss_db=0.5, waveguide_loss_db_per_cm=0.0)
    for path in result.paths:
        a, b = path.ports
        assert np.isclose(-10 * np.log10(abs(S[b, a]) ** 2), 0.5 * len(path.cells), atol=1e-9)
        assert np.isclose(abs(S[a, b]), abs(S[b, a]))  # one reciprocal path per pair
    assert set(np.unique(result.states)) <= {BAR, CROSS}


@given(seeds)
def test_routing_is_deterministic(seed) -> None:
    pairs = requests_for(Matching.random(8, np.random.default_rng(seed)), ENDPOINTS)
    a, b = Router(MESH).route(pairs), Router(MESH).route(pairs)
    assert [p.cells for p in a.paths] == [p.cells for p in b.paths]
    assert np.array_equal(a.states, b.states)


def test_dead_cells_are_routed_around() -> None:
    pairs = [(ENDPOINTS[0], ENDPOINTS[4])]
    path = Router(MESH).route(pairs).paths[0]
    middle = list(path.cells[len(path.cells) // 2 : len(path.cells) // 2 + 2])
    detour = Router(MESH, dead_cells=middle).route(pairs)
    assert detour.ok
    assert not set(detour.paths[0].cells) & set(middle)


def test_the_6x6_switch_routes_permutations_with_the_expected_loss() -> None:
    mesh, inputs, outputs = switch_6x6()
    router = Router(mesh)
    perms = list(itertools.permutations(range(6)))[::30]  # 24 of the 720
    for perm in perms:
        result = router.route(requests_for(Permutation(list(perm)), (inputs, outputs)))
        assert result.ok, (perm, result.failures)
        assert _conflict_free(result)
    check = verify(mesh, result)
    assert check.max_loss_error_db < 1e-9  # each path: its cells x cell loss + links x waveguide
    assert check.worst_isolation_db > 100  # ideal couplers leak nothing


def test_all_to_all_cover_joins_every_pair() -> None:
    cover = all_to_all_cover(Router(MESH), ENDPOINTS[:6])
    joined = {pair for m in cover.matchings for pair in m.pairs}
    assert joined | set(cover.unroutable) == set(itertools.combinations(range(6), 2))
    assert not joined & set(cover.unroutable)
    for a, b in cover.unroutable:  # reported unroutable: indeed no path, even alone
        assert not Router(MESH).route([(ENDPOINTS[a], ENDPOINTS[b])]).ok
    assert cover.size >= 5 and all(r.ok for r in cover.results)


def test_round_robin_is_a_one_factorisation() -> None:
    rounds = round_robin(8, shift=3)
    assert len(rounds) == 7 and all(m.is_perfect for m in rounds)
    assert len({p for m in rounds for p in m.pairs}) == 28


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda r: r.route([(0, MESH.n_ports)]), "out of range"),
        (lambda r: r.route([(0, 1), (1, 2)]), "edge port 1 is in two requests"),
        (lambda r: r.route([(3, 3)]), "cannot be joined to itself"),
        (lambda r: Router(MESH, dead_cells=[MESH.edge_ports[0] // 4]).route([(0, 5)]), "dead cell"),
        (lambda r: Router(MESH, dead_cells=[10_000]), "dead cell 10000 is out of range"),
        (lambda r: requests_for(Matching([(0, 1)], 4), [1, 2]), "4 endpoints need 4 edge ports"),
        (lambda r: round_robin(5), "even number"),
    ],
)
def test_bad_requests_are_refused(call, words) -> None:
    with pytest.raises(PortError, match=words):
        call(Router(MESH))


@given(st.integers(1, 4), seeds)
def test_failures_say_why(k, seed) -> None:
    rng = np.random.default_rng(seed)
    ends = {MESH.edge_ports[p] // 4 for p in ENDPOINTS}
    dead = [c for c in rng.permutation(MESH.n_cells) if c not in ends][: 4 * k]
    result = Router(MESH, dead_cells=dead).route(requests_for(Matching.random(8, rng), ENDPOINTS))
    for pair, reason in result.failures.items():
        assert pair not in {p.ports for p in result.paths}
        assert reason
    assert _conflict_free(result)
    assert not {c for p in result.paths for c in p.cells} & set(dead)
