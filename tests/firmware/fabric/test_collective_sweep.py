"""Answers across sizes, ranks and delays (:mod:`firmware.fabric.collective_sweep`): lines that
are the timing at every size, crossovers where the lines meet, the straggler sweep."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.fabric import (
    HeaterWriteModel,
    Link,
    all_to_all_pairs,
    circuit_timing,
    compile_collective,
    halving_doubling_all_reduce,
    ring_all_reduce,
    straggler_cost,
)
from firmware.fabric.collective_sweep import (
    Affine,
    all_reduce_lines,
    all_to_all_crossover,
    crossover,
    optical_line,
    straggler_sweep,
)
from photonics import SettingsError
from tests.firmware.fabric.fabrics import clements

LINK = Link(bandwidth_Bps=50e9, alpha_s=5e-6)


def model(_schedule):
    return HeaterWriteModel()


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from([ring_all_reduce, halving_doubling_all_reduce, all_to_all_pairs]),
    st.integers(3, 12),
    st.floats(1.0, 1e12),
)
def test_a_line_is_the_compiled_timing_at_every_size(make, p, n):
    fabric = clements(12)
    line, _ = optical_line(make, p, fabric, LINK, model)
    s = compile_collective(make(range(p), n), 12, fabric)
    direct = circuit_timing(s, LINK, HeaterWriteModel()).total_s
    assert math.isclose(line.at(n), direct, rel_tol=1e-9)


def test_the_lines_take_the_switch_s_times_once_per_algorithm():
    asked = []

    def times(s):  # as a switch reports them: nothing where the matching stays
        asked.append(s)
        m = [st.matching for st in s.steps]
        return [0.0 if i and m[i] == m[i - 1] else 0.01 for i in range(len(m))]

    lines = all_reduce_lines(8, clements(8), LINK, times)
    assert len(asked) == 2  # one compiled schedule per algorithm, whatever the sizes
    # the same bandwidth term for both: the size never changes which is faster
    ring, hd = lines.optical["ring"], lines.optical["halving-doubling"]
    assert crossover(ring, hd) is None and crossover(hd, ring) is None
    assert math.isclose(ring.per_byte_s, 2 * 7 / 8 / LINK.bandwidth_Bps, rel_tol=1e-9)
    # ring: 28 steps, each a change; halving/doubling: 6 steps, the middle two share
    assert math.isclose(ring.fixed_s, 28 * (0.01 + LINK.alpha_s), rel_tol=1e-9)
    assert math.isclose(hd.fixed_s, 6 * LINK.alpha_s + 5 * 0.01, rel_tol=1e-9)
    assert lines.best(1e3) == ("halving-doubling", "halving-doubling")


def test_crossover_is_where_the_lines_meet():
    a, b = Affine(1.0, 1e-9), Affine(0.1, 2e-9)
    n = crossover(a, b)
    assert math.isclose(a.at(n), b.at(n)) and a.at(2 * n) < b.at(2 * n)
    assert crossover(b, a) is None
    assert crossover(Affine(0.0, 1e-9), b) == 0.0


def test_the_all_to_all_cover_pays_against_the_static_ring_above_the_crossover():
    x = all_to_all_crossover(16, clements(16), LINK, model)
    n = x.crossover_bytes
    assert n is not None and 1e8 < n < 1e11
    assert x.cover.at(2 * n) < x.static_ring.at(2 * n)
    assert x.cover.at(n / 2) > x.static_ring.at(n / 2)
    # per byte: (p - 1) / p n for the cover against (p - 1) / 2 n relayed
    assert math.isclose(x.cover.per_byte_s, 15 / 16 / LINK.bandwidth_Bps, rel_tol=1e-9)
    assert math.isclose(x.static_ring.per_byte_s, 15 / 2 / LINK.bandwidth_Bps, rel_tol=1e-9)


def test_the_straggler_speedup_grows_with_the_delay_then_holds_at_the_model_s_value():
    points = straggler_sweep([8, 64], [0.0, 1e-3, 1e-2, 1.0, 10.0], 2.0**30, LINK)
    for p in (8, 64):
        ups = [x.model_speedup for x in points if x.ranks == p]
        assert ups == sorted(ups) and ups[-1] == ups[-2]
        assert ups[-1] == straggler_cost(p, 2.0**30, LINK, 10.0).speedup
        compiled = [x.compiled_speedup for x in points if x.ranks == p]
        assert compiled == pytest.approx(sorted(compiled)) and compiled[-1] < ups[-1]


def test_per_step_times_are_taken_as_given_and_checked():
    s = compile_collective(ring_all_reduce(range(4), 1e6), 4)
    times = [0.1 * (i + 1) for i in range(len(s.steps))]
    t = circuit_timing(s, LINK, times)
    assert [x.reconfigure_s for x in t.steps] == times
    with pytest.raises(SettingsError, match=f"need {len(s.steps)} reconfiguration times"):
        circuit_timing(s, LINK, times[:-1])
    with pytest.raises(SettingsError, match=">= 0 s, got -1"):
        circuit_timing(s, LINK, [-1.0, *times[1:]])
