import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from photonics import Matching, Permutation, PortError, SettingsError
from photonics.calibration.selfcal import CellDrive
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.devices.mzi import (
    PUBLISHED_EXTINCTION_DB,
    MZIImperfections,
    extinction_ratio_db,
    splitter_errors_for_extinction,
    state_extinction_db,
)
from photonics.recirculating import covers
from photonics.recirculating.covers import _dissolve, all_to_all_cover, round_robin
from photonics.recirculating.lattices import hexagonal_mesh
from photonics.recirculating.mesh_scattering import scattering
from photonics.recirculating.routing import (
    DEFAULT_MAX_PATH_LOSS_DB,
    PREDICTION_MARGIN_DB,
    Router,
    requests_for,
    verify,
)
from photonics.recirculating.switch_geometry import hexagonal_switch, switch_6x6, switch_32
from photonics.recirculating.waveguide_mesh import BAR, CROSS, forced_entry, through
from tests.strategies import seeds

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


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"cell_loss_db": -1.0}, "losses must be >= 0"),
        ({"extinction_db": 0.0}, "extinction_db must be > 0"),
        ({"extinction_db": [30.0, 40.0]}, r"a scalar, \(49,\) or \(2, 49\) \[BAR, CROSS\]"),
        ({"extinction_db": np.full((3, 42), 30.0)}, "got shape"),
        ({"extinction_db": np.nan}, "finite"),
        ({"max_iterations": 0}, "max_iterations must be >= 1"),
        ({"isolation_target_db": np.inf}, "isolation_target_db must be finite"),
        ({"isolation_budget": -1}, "isolation_budget must be >= 0"),
    ],
)
def test_bad_router_settings_are_refused(kwargs, words) -> None:
    with pytest.raises(ValueError, match=words):
        Router(MESH, **kwargs)


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


@given(seeds, st.booleans())
def test_predicted_isolation_is_a_lower_bound_on_the_scattering_solve(seed, directed) -> None:
    rng = np.random.default_rng(seed)
    chip = MZIImperfections.sample(MESH.n_cells, rng, splitter_sigma=0.02, loss_db=0.5)
    extinction = extinction_ratio_db(chip.splitter_error_in, chip.splitter_error_out)
    router = Router(MESH, extinction_db=extinction)
    result = router.route(requests_for(Matching.random(8, rng), ENDPOINTS), directed=directed)
    P = np.abs(scattering(MESH, result.theta(), imperfections=chip)) ** 2
    for path in result.paths:
        sends = [path.ports] if directed else [path.ports, path.ports[::-1]]
        for a, b in sends:
            senders = [q.ports[:1] if directed else q.ports for q in result.paths if q is not path]
            others = [P[b, x] for ports in senders for x in ports]
            measured = 10 * np.log10(P[b, a] / max(others, default=1e-30))
            # first order in the extinction (leaks of leaks move it by < 0.5 dB even with
            # cells of 24 dB); a path that shares no cell (inf) only sees leaks of leaks
            assert measured >= min(path.isolation_db - 0.5, 2 * extinction.min() - 20)
    shares = [p for p in result.paths if np.isfinite(p.isolation_db)]
    for p in shares:  # a finite prediction means a cell is shared with another path
        assert any(set(p.cells) & set(q.cells) for q in result.paths if q is not p)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_predicted_isolation_is_a_bound_within_its_margin_on_sampled_chips(seed) -> None:
    """On emulated chips (their field solve, driven by their true calibration), with the
    router told each cell's true extinction per state: no path measures more than
    PREDICTION_MARGIN_DB below its predicted isolation (a flat 35 dB missed by up to 8 dB)."""
    mesh32, ends32 = switch_32()
    mesh6, inputs, outputs = switch_6x6()
    rng = np.random.default_rng(seed)
    cases = [(mesh32, ends32, requests_for(Matching.random(32, rng), ends32), False)]
    for _ in range(3):
        perm = Permutation(list(rng.permutation(6)))
        cases.append((mesh6, inputs + outputs, requests_for(perm, (inputs, outputs)), True))
    for mesh, ends, pairs, directed in cases:
        chip = MeshChip(mesh, ends, MeshChipSpec(seed=seed))
        imp = chip.imperfections
        extinction = state_extinction_db(imp.splitter_error_in, imp.splitter_error_out)
        result = Router(mesh, extinction_db=extinction).route(pairs, directed=directed)
        assert result.ok
        current = np.zeros(chip.n_heaters)
        current[: chip.n_cells] = CellDrive.of(chip.factory_calibration(), mesh.n_cells).currents(
            result.theta()
        )
        P = np.abs(chip.transfer(current)) ** 2  # [out, in], endpoints in order
        at = {p: i for i, p in enumerate(ends)}
        for path in result.paths:
            a, b = path.ports
            for src, dst in [(a, b)] if directed else [(a, b), (b, a)]:
                senders = [q.ports[:1] if directed else q.ports for q in result.paths]
                others = [P[at[dst], at[x]] for s in senders for x in s if x not in (src, dst)]
                measured = 10 * np.log10(P[at[dst], at[src]] / max(others))
                floor = 2 * extinction.min() - 20  # no shared cell: leaks of leaks only
                assert measured >= min(path.isolation_db, floor) - PREDICTION_MARGIN_DB


def test_forced_entry_follows_the_only_inward_state() -> None:
    mesh, ends = switch_32()
    for p in ends:
        hops = forced_entry(mesh, p)
        assert hops and hops[0][2] == mesh.edge_ports[p]
        for (_, state, entry, out), nxt in itertools.pairwise(hops):
            assert through(entry, state) == out and mesh.partner()[out] == nxt[2]


def _published_chip(mesh, seed: int = 0):
    """A chip whose cells span the published extinction range (Perez-Lopez et al., Nat.
    Commun. 15, 1563 (2024); docs/physics.md)."""
    rng = np.random.default_rng(seed)
    chip = MZIImperfections.sample_extinction(mesh.n_cells, rng, loss_db=0.5)
    return chip, extinction_ratio_db(chip.splitter_error_in, chip.splitter_error_out)


def test_published_cells_span_the_published_extinction_range() -> None:
    chip = MZIImperfections.sample_extinction(4000, np.random.default_rng(3))
    extinction = extinction_ratio_db(chip.splitter_error_in, chip.splitter_error_out)
    low, typical, high = PUBLISHED_EXTINCTION_DB
    assert low - 1e-6 <= extinction.min() and extinction.max() <= high + 1e-6
    assert abs(np.median(extinction) - typical) < 0.3  # the typical value is the median


@given(st.floats(10, 60), st.floats(-1, 1), st.floats(-1, 1))
def test_splitter_errors_give_the_asked_extinction(extinction, a, b) -> None:
    if a == b == 0:
        return
    e_in, e_out = splitter_errors_for_extinction(extinction, [a, b])
    assert np.isclose(extinction_ratio_db(e_in, e_out), extinction, atol=1e-6)
    assert np.sign(e_in) == np.sign(a) and np.sign(e_out) == np.sign(b)


SAMPLE_6X6 = list(itertools.permutations(range(6)))[::24]  # 30 of the 720


def test_isolation_aware_routing_never_does_worse_than_plain_routing() -> None:
    mesh, inputs, outputs = switch_6x6()
    _, extinction = _published_chip(mesh, seed=1)
    aware = Router(mesh, extinction_db=extinction)
    plain = Router(mesh, extinction_db=extinction, isolation_target_db=None)
    gained = 0
    for perm in SAMPLE_6X6:
        pairs = requests_for(Permutation(list(perm)), (inputs, outputs))
        a, p = aware.route(pairs, directed=True), plain.route(pairs, directed=True)
        assert a.ok and _conflict_free(a) and a.directed
        assert a.isolation_db >= p.isolation_db
        assert (a.isolation_rounds > 0) == (p.isolation_db < aware.isolation_target_db)
        gained += a.isolation_db > p.isolation_db
    assert gained >= len(SAMPLE_6X6) // 2  # on this chip most plain routings fall short


def test_6x6_isolation_reaches_25_db_on_a_chip_of_published_cells() -> None:
    # the requirement, checked by the scattering solve at 1550 nm; the router knows each
    # cell's extinction (as a calibration measures it) but not the couplers' phases
    mesh, inputs, outputs = switch_6x6()
    chip, extinction = _published_chip(mesh, seed=3)
    router = Router(mesh, extinction_db=extinction)
    plain = Router(mesh, extinction_db=extinction, isolation_target_db=None)
    plain_misses = 0
    for perm in SAMPLE_6X6:
        pairs = requests_for(Permutation(list(perm)), (inputs, outputs))
        result = router.route(pairs, directed=True)
        check = verify(mesh, result, chip)
        assert check.worst_isolation_db >= 25.0, perm
        assert check.max_loss_error_db < 0.05  # loss still cells x cell loss + links
        plain_misses += verify(mesh, plain.route(pairs, True), chip).worst_isolation_db < 25.0
    assert plain_misses > 0  # on this chip it takes the isolation-aware routing


def test_verify_reads_a_matching_both_ways() -> None:
    mesh, inputs, outputs = switch_6x6()
    chip, _ = _published_chip(mesh)
    pairs = requests_for(Permutation([2, 0, 1, 5, 3, 4]), (inputs, outputs))
    result = Router(mesh, isolation_target_db=None).route(pairs, directed=True)
    one_way = verify(mesh, result, chip).worst_isolation_db
    both_ways = verify(mesh, replace(result, directed=False), chip).worst_isolation_db
    assert both_ways <= one_way  # the reverse direction adds outputs, never removes one


def test_typical_imperfections_are_the_published_typical_cell() -> None:
    typical = MZIImperfections.typical()
    ext = extinction_ratio_db(typical.splitter_error_in, typical.splitter_error_out)
    assert ext == pytest.approx(PUBLISHED_EXTINCTION_DB[1], abs=1e-6)
    assert typical.loss_bar_db == typical.loss_cross_db == 0.5
    typical.check_count(278)  # scalar fields fit any mesh


@given(st.permutations(range(6)))
def test_every_6x6_permutation_reaches_25_db_under_the_default_imperfections(perm) -> None:
    # the requirement, checked by the scattering solve on cells at the typical figures
    mesh, inputs, outputs = switch_6x6()
    result = Router(mesh).route(requests_for(Permutation(list(perm)), (inputs, outputs)), True)
    check = verify(mesh, result, MZIImperfections.typical())
    assert result.ok
    assert check.worst_isolation_db >= 25.0
    assert check.max_loss_error_db < 0.05


def test_isolation_is_other_ports_light_and_return_loss_is_reported_apart() -> None:
    # in a matching every routed port also sends: its own light the mesh sends back to it is
    # return loss, a figure of its own, not another port's crosstalk
    mesh, ends = switch_32()
    result = Router(mesh).route(requests_for(round_robin(32)[12], ends))  # a path folds back
    typical = MZIImperfections.typical()
    check = verify(mesh, result, typical)
    P = np.abs(scattering(mesh, result.theta(), cell_loss_db=0.5, imperfections=typical)) ** 2
    used = [e for p in result.paths for e in p.ports]
    assert check.worst_return_loss_db == pytest.approx(-10 * np.log10(P[used, used].max()))
    assert check.worst_return_loss_db == pytest.approx(38.0, abs=0.5)  # known value
    for p in result.paths:
        for a, b in (p.ports, p.ports[::-1]):
            others = [x for x in used if x not in (a, b)]
            # no other port's light at all: isolation without bound
            assert P[b, a] >= P[b, others].max() * 10 ** (check.worst_isolation_db / 10 - 1e-10)


@pytest.mark.slow  # ~10-50 s; `make test-all`
def test_a_cover_with_an_isolation_requirement_keeps_it_in_every_matching() -> None:
    mesh, ends = hexagonal_switch(16)
    router = Router(mesh)
    plain = all_to_all_cover(router, ends, attempts=1)
    strict = all_to_all_cover(router, ends, attempts=1, isolation_db=25.5)
    pairs = set(itertools.combinations(range(16), 2))
    for cover in (plain, strict):
        joined = [tuple(sorted(pair)) for m in cover.matchings for pair in m.pairs]
        assert sorted(joined) == sorted(pairs)  # every pair exactly once
    typical = MZIImperfections.typical()
    plain_worst = min(verify(mesh, r, typical).worst_isolation_db for r in plain.results)
    assert plain_worst < 25.0  # without the requirement some matching falls short ...
    for result in strict.results:  # ... with it, none does
        assert result.isolation_db >= 25.5
        assert verify(mesh, result, typical).worst_isolation_db >= 25.0
    assert strict.size > plain.size == 15
    assert "did not route at >= 25.5 dB" in strict.note
    with pytest.raises(SettingsError, match="isolation_db must be finite"):
        all_to_all_cover(router, ends, isolation_db=float("nan"))


def test_a_cover_adds_left_out_pairs_to_its_matchings_before_packing_new_ones(monkeypatch) -> None:
    # the packing alone: spreading matchings out afterwards has its own test
    monkeypatch.setattr(covers, "_dissolve", lambda router, ends, chosen, *rest: chosen)
    mesh, ends = hexagonal_switch(16)
    router = Router(mesh)
    cover = all_to_all_cover(router, ends, attempts=1, isolation_db=25.5)
    rounds = cover.size - int(cover.note.split(" took ")[1].split()[0])
    assert rounds == 15  # the circle method's matchings, then the packed ones
    for extra in cover.matchings[rounds:]:
        for pair in extra.pairs:
            for m in cover.matchings[:rounds]:
                if not {*pair} & {e for q in m.pairs for e in q}:  # it could have joined m
                    grown = router.route(requests_for(Matching([*m.pairs, pair], 16), ends))
                    assert not grown.ok or grown.isolation_db < 25.5


def test_a_path_above_the_loss_limit_fails_naming_its_loss_and_the_limit() -> None:
    mesh, ends = switch_32()
    pair = [(ends[0], ends[16])]  # west to east: about 20 cells
    routed = Router(mesh).route(pair)
    assert routed.ok and routed.paths[0].loss_db <= DEFAULT_MAX_PATH_LOSS_DB
    short = Router(mesh, max_path_loss_db=5.0).route(pair)
    assert not short.ok and short.paths == ()
    assert "above the limit 5 dB" in short.failures[pair[0]]


@pytest.mark.parametrize("limit", [0.0, -1.0])
def test_a_loss_limit_must_be_positive(limit) -> None:
    with pytest.raises(SettingsError, match="max_path_loss_db must be > 0 dB or None"):
        Router(switch_6x6()[0], max_path_loss_db=limit)


def test_a_cover_above_the_optimum_spreads_a_matching_whose_pairs_fit_elsewhere() -> None:
    mesh, ends = hexagonal_switch(8)
    router = Router(mesh)
    rounds = round_robin(8)
    lone = rounds[0].pairs[0]  # taken out of its round into a matching of its own
    split = [Matching(rounds[0].pairs[1:], 8), *rounds[1:], Matching([lone], 8)]
    chosen = [(m, router.route(requests_for(m, ends))) for m in split]
    assert all(r.ok for _, r in chosen)
    kept = _dissolve(router, ends, chosen, 8, lambda r: r.ok, None)
    assert len(kept) == 7 and all(r.ok for _, r in kept)
    joined = sorted(p for m, _ in kept for p in m.pairs)
    assert joined == sorted(itertools.combinations(range(8), 2))
    for m, r in kept:  # each result is its matching's
        assert sorted(tuple(sorted(p.ports)) for p in r.paths) == sorted(
            tuple(sorted((ends[a], ends[b]))) for a, b in m.pairs
        )
    # a pair that routes nowhere else keeps its matching
    assert len(_dissolve(router, ends, chosen, 8, lambda r: False, None)) == 8
