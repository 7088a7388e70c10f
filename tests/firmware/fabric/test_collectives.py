"""Collectives compiled into matchings and their timing (:mod:`firmware.fabric.collectives`)."""

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.fabric import (
    Collective,
    HeaterWriteModel,
    Link,
    all_to_all_pairs,
    all_to_all_ring,
    all_to_all_shift,
    circuit_timing,
    compile_collective,
    electrical_timing,
    halving_doubling_all_reduce,
    holdings,
    ring_all_gather,
    ring_all_reduce,
    ring_reduce_scatter,
    straggler_all_reduce,
    straggler_cost,
    with_straggler,
)
from firmware.fabric.collective_timing import PUBLISHED_COMPLETION_ROUNDS, completion_rounds
from photonics import PortError, SettingsError
from photonics.chips.switch import MeshFabric
from photonics.matching import Matching
from photonics.recirculating.routing import Router
from photonics.recirculating.switch_geometry import switch_6x6
from tests.firmware.fabric.fabrics import clements
from tests.strategies import seeds

ALL_REDUCES = [ring_all_reduce, halving_doubling_all_reduce, straggler_all_reduce]
ALL = [
    *ALL_REDUCES,
    ring_reduce_scatter,
    ring_all_gather,
    all_to_all_shift,
    all_to_all_pairs,
    all_to_all_ring,
]
LINK = Link(bandwidth_Bps=25e9, alpha_s=2e-6)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)


def random_ports(seed: int, p: int, n_ports: int = 16) -> list[int]:
    return [int(q) for q in np.random.default_rng(seed).permutation(n_ports)[:p]]


def check_result(c: Collective) -> None:
    """Every rank ends with what the collective computes, every byte counted once."""
    p = len(c.ports)
    ranks = frozenset(range(p))
    h = holdings(c)
    if c.kind == "all-reduce":
        n_seg = round(c.n_bytes / c.segment_bytes)
        for port in c.ports:
            assert h[port] == dict.fromkeys(range(n_seg), ranks)
            assert n_seg * c.segment_bytes == pytest.approx(c.n_bytes)
    elif c.kind == "reduce-scatter":
        owned = [s for port in c.ports for s, who in h[port].items() if who == ranks]
        assert sorted(owned) == list(range(2 * p))  # each segment reduced in full, once
    elif c.kind == "all-gather":
        for port in c.ports:
            assert sorted(h[port]) == list(range(2 * p))
            assert all(len(who) == 1 for who in h[port].values())
    else:
        for j, port in enumerate(c.ports):
            for i in range(p):
                assert h[port][i * p + j] == {i}  # what rank i had for j reached j


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(ALL), st.integers(3, 12), seeds, st.floats(1.0, 1e10))
def test_every_collective_leaves_every_rank_its_result_on_realisable_matchings(
    kind, p, seed, n_bytes
):
    fabric = clements(16)
    c = kind(random_ports(seed, p), n_bytes)
    check_result(c)
    s = compile_collective(c, 16, fabric)
    carried = []
    for step in s.steps:
        assert step.plan is not None and step.plan.matching == step.matching
        links = set(step.matching.pairs)
        assert all((min(t.src, t.dst), max(t.src, t.dst)) in links for t in step.transfers)
        carried += [(step.round_index, t) for t in step.transfers]
    want = [(k, t) for k, r in enumerate(c.rounds) for t in r.transfers]
    assert sorted(carried, key=repr) == sorted(want, key=repr)  # each transfer exactly once


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8, 13, 16, 64])
def test_ring_all_reduce_is_the_textbook_alpha_beta_cost(p):
    n = 3.0 * 2**30
    a, b = LINK.alpha_s, 1 / LINK.bandwidth_Bps
    t = electrical_timing(ring_all_reduce(range(p), n), LINK)
    assert len(t.steps) == 2 * (p - 1)
    assert close(t.total_s, 2 * (p - 1) * a + 2 * (p - 1) / p * n * b)
    assert t.reconfigure_s == 0.0 and t.duty_cycle == 1.0


@pytest.mark.parametrize("p", [2, 4, 8, 16, 64, 256])
def test_halving_doubling_is_the_textbook_alpha_beta_cost_on_either_switch(p):
    n = 2.0**30
    a, b = LINK.alpha_s, 1 / LINK.bandwidth_Bps
    closed = 2 * math.log2(p) * a + 2 * (p - 1) / p * n * b
    c = halving_doubling_all_reduce(range(p), n)
    assert close(electrical_timing(c, LINK).total_s, closed)
    s = compile_collective(c, p)
    assert len(s.steps) == 2 * int(math.log2(p))  # each round is one perfect matching
    assert all(step.matching.is_perfect for step in s.steps)
    assert close(circuit_timing(s, LINK, reconfigure=0.0).total_s, closed)


@pytest.mark.parametrize("p", [3, 5, 6, 7, 12])
def test_halving_doubling_of_other_rank_counts_folds_the_extra_ranks(p):
    n = 1e6
    q = 1 << (p.bit_length() - 1)
    c = halving_doubling_all_reduce(range(p), n)
    assert [r.label for r in c.rounds][:: len(c.rounds) - 1] == ["fold", "unfold"]
    a, b = LINK.alpha_s, 1 / LINK.bandwidth_Bps
    closed = 2 * (a + n * b) + 2 * math.log2(q) * a + 2 * (q - 1) / q * n * b
    assert close(electrical_timing(c, LINK).total_s, closed)
    check_result(c)


@pytest.mark.parametrize("p", [4, 6, 10])
def test_ring_on_the_circuit_switch_alternates_two_matchings(p):
    n = 1e6
    s = compile_collective(ring_all_reduce(range(p), n), 16)
    assert s.n_matchings == 2 and len(s.steps) == 4 * (p - 1) == s.n_changes
    a, b = LINK.alpha_s, 1 / LINK.bandwidth_Bps
    t0 = circuit_timing(s, LINK, reconfigure=0.0)
    assert close(t0.total_s, 4 * (p - 1) * a + 2 * (p - 1) / p * n * b)
    t1 = circuit_timing(s, LINK, reconfigure=1e-3)
    assert close(t1.total_s - t0.total_s, 4 * (p - 1) * 1e-3)
    assert close(t1.duty_cycle, 1 - t1.reconfigure_s / t1.total_s)
    warm = circuit_timing(s, LINK, 1e-3, first_configured=True)
    assert warm.steps[0].reconfigure_s == 0.0
    assert close(warm.reconfigure_s, (4 * (p - 1) - 1) * 1e-3)


def test_odd_rings_need_three_matchings():
    s = compile_collective(ring_reduce_scatter(range(5), 1e3), 8)
    assert s.n_matchings == 3
    assert {len(m.pairs) for m in {st.matching for st in s.steps}} == {2, 1}


def test_the_heater_write_model_times_matching_changes_and_same_matchings_share():
    fabric = clements(8)
    s = compile_collective(halving_doubling_all_reduce(range(8), 1e6), 8, fabric)
    # halving ends on distance 1, doubling starts on it: 6 steps, 5 changes
    assert len(s.steps) == 6 and s.n_changes == 5 and s.steps[2].matching == s.steps[3].matching
    model = HeaterWriteModel()
    t = circuit_timing(s, LINK, model)
    want = [model(None, s.steps[0].plan)]
    want += [model(s.steps[i - 1].plan, s.steps[i].plan) for i in range(1, 6)]
    assert [x.reconfigure_s for x in t.steps] == pytest.approx(want)
    assert t.steps[3].reconfigure_s == 0.0 and all(x > 0 for x in want[:3])
    assert all(t.steps[i].start_s == t.steps[i - 1].end_s for i in range(1, 6))
    with pytest.raises(SettingsError, match="compiled with a fabric"):
        circuit_timing(compile_collective(ring_all_reduce(range(4), 1.0), 8), LINK)


def test_all_to_all_shift_and_cover_cost_the_same_on_an_electrical_switch():
    p, n = 8, 1e6
    a, b = LINK.alpha_s, 1 / LINK.bandwidth_Bps
    for c in (all_to_all_shift(range(p), n), all_to_all_pairs(range(p), n)):
        assert close(electrical_timing(c, LINK).total_s, (p - 1) * (a + n / p * b))
    assert len(compile_collective(all_to_all_pairs(range(p), n), p).steps) == p - 1
    relay = electrical_timing(all_to_all_ring(range(p), n), LINK)
    assert close(relay.total_s, (p - 1) * a + (p - 1) / 2 * n * b)
    assert len(compile_collective(all_to_all_shift(range(p), n), p).steps) > p - 1


def test_matchings_the_mesh_cannot_realise_are_split_by_its_planner():
    mesh, _, _ = switch_6x6()
    fabric = MeshFabric(Router(mesh), [24, 64, 5, 65, 63, 54])  # round-robin does not route
    c = all_to_all_pairs(range(fabric.n_ports), 1e6)
    s = compile_collective(c, fabric.n_ports, fabric)
    assert len(s.steps) > len(c.rounds)  # some cover matchings did not route whole
    for step in s.steps:
        assert step.plan is not None and step.plan.matching == step.matching
    carried = sorted(((st.round_index, t) for st in s.steps for t in st.transfers), key=repr)
    want = sorted(((k, t) for k, r in enumerate(c.rounds) for t in r.transfers), key=repr)
    assert carried == want


def test_straggler_aware_all_reduce_leaves_the_straggler_out_until_it_arrives():
    ports = [5, 1, 7, 2, 9, 3, 4, 0]
    c = straggler_all_reduce(ports, 1e6, straggler=2)
    ready = [r for r in c.rounds if r.label == "ready"]
    assert len(ready) == 6
    assert all(7 not in (t.src, t.dst) for r in ready for t in r.transfers)
    check_result(c)
    completion = len(c.rounds) - len(ready)
    assert completion >= len(ports)  # the bound of straggler_cost
    # once the straggler arrives it beats ring (bandwidth-bound, delay hides the ready rounds)
    slow = Link(25e9, 0.0)
    delay = 1.0
    ours = with_straggler(electrical_timing(c, slow), delay).total_s - delay
    ring = electrical_timing(ring_all_reduce(ports, 1e6), slow).total_s
    assert ours == pytest.approx(completion * 1e6 / 7 / 25e9)
    assert ring / ours > 1.15
    early = with_straggler(electrical_timing(c, slow), 0.0)
    assert early.total_s == pytest.approx(electrical_timing(c, slow).total_s)


def test_straggler_speedup_over_ring_rises_toward_two():
    link = Link(25e9, 0.0)
    ups = [straggler_cost(p, 2.0**30, link, 1.0).speedup for p in (4, 8, 16, 64, 256, 1024, 8192)]
    assert all(b > a for a, b in itertools.pairwise(ups))
    # the published model: p - 2 + log2 p completion rounds of n / (p - 1) for a power of two
    assert ups[1] == pytest.approx((2 * 7 / 8) / (9 / 7))
    assert 1.99 < ups[-1] < 2
    # latency-bound messages: 9 rounds against 2 (p - 1)
    tiny = straggler_cost(8, 1.0, Link(25e9, 1e-5), 1.0)
    assert tiny.speedup == pytest.approx(14 / 9, rel=1e-3)
    # a delay shorter than the ready ranks' reduce-scatter adds what is left of it
    short = straggler_cost(8, 2.0**30, link, 0.0)
    assert short.straggler_aware_s == pytest.approx((6 / 7 + 9 / 7) * 2**30 / 25e9)


@pytest.mark.parametrize("p", [4, 6, 8, 12, 16, 24, 32, 48, 64])
def test_the_compiled_completion_is_near_the_published_rounds_and_never_below_the_bound(p):
    published, source = completion_rounds(p)
    assert source.startswith("published")
    c = straggler_all_reduce(range(p), 1.0)
    ours = sum(r.label == "completion" for r in c.rounds)
    # the straggler adds its part to one chunk a round (p - 1 rounds), and the last chunk
    # finished spreads from its two holders by doubling: p - 2 + ceil(log2 p) rounds at least
    assert ours >= p - 2 + math.ceil(math.log2(p))
    assert ours <= published + p // 8 + 1
    if p in (4, 8, 12):
        assert ours == published
    odd = p + 1 if p + 1 not in PUBLISHED_COMPLETION_ROUNDS else p + 3
    assert completion_rounds(odd)[1] == "compiled here (greedy)"


def test_bad_inputs_are_refused():
    with pytest.raises(PortError, match="twice"):
        ring_all_reduce([1, 2, 1], 1.0)
    with pytest.raises(PortError, match="at least 2"):
        ring_all_reduce([1], 1.0)
    with pytest.raises(SettingsError, match="n_bytes"):
        halving_doubling_all_reduce([0, 1], 0)
    with pytest.raises(PortError, match=r"0\.\.7"):
        compile_collective(ring_all_reduce([0, 9], 1.0), 8)
    with pytest.raises(SettingsError, match="bandwidth"):
        Link(0.0)
    with pytest.raises(SettingsError, match="p must be"):
        straggler_cost(2, 1.0, LINK, 0.0)
    with pytest.raises(SettingsError, match="reconfigure"):
        circuit_timing(compile_collective(ring_all_reduce([0, 1], 1.0), 2), LINK, -1.0)
    two = compile_collective(ring_all_reduce([0, 1], 1.0), 2)
    assert [st.matching for st in two.steps] == [Matching([(0, 1)], 2)] * 2


def test_the_completion_round_counts_the_docstring_quotes_are_the_codes() -> None:
    # it said 19 for 16 ranks where the completion takes 20
    quoted = re.search(
        r"takes e\.g\. (\d+) for (\d+) ranks, (\d+) for (\d+) and (\d+) for (\d+)",
        " ".join(straggler_all_reduce.__doc__.split()),
    )
    assert quoted is not None
    numbers = [int(x) for x in quoted.groups()]
    for rounds, ranks in zip(numbers[::2], numbers[1::2], strict=True):
        c = straggler_all_reduce(range(ranks), 1e9)
        assert sum(r.label == "completion" for r in c.rounds) == rounds
