"""Jobs and their matchings (:mod:`firmware.fabric.jobs`)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.fabric import Job, job_matchings
from photonics import PortError, SettingsError, ShapeError
from tests.firmware.fabric.fabrics import pairs_of
from tests.strategies import seeds


def ring_edges(cycle) -> set[frozenset[int]]:
    k = len(cycle)
    return {frozenset((cycle[i], cycle[(i + 1) % k])) for i in range(k)}


@given(st.integers(2, 12), seeds)
def test_ring_job_is_its_edges_in_2_matchings_when_even_3_when_odd(k, seed):
    ports = [int(p) for p in np.random.default_rng(seed).permutation(16)[:k]]
    ms = job_matchings(Job("r", "ring", ports), 16)
    assert len(ms) == (1 if k == 2 else 2 if k % 2 == 0 else 3)
    edges = [frozenset(p) for p in pairs_of(ms)]
    assert len(edges) == len(set(edges))  # every link in exactly one matching
    assert set(edges) == ring_edges(ports)


@pytest.mark.parametrize(("rows", "cols", "count"), [(4, 4, 4), (3, 4, 5), (2, 3, 4), (1, 5, 3)])
def test_torus_job_is_its_row_rings_then_column_rings(rows, cols, count):
    ports = list(range(3, 3 + rows * cols))
    ms = job_matchings(Job("t", "torus", ports, shape=(rows, cols)), 32)
    assert len(ms) == count
    grid = np.array(ports).reshape(rows, cols)
    want = set()
    for r in range(rows):
        want |= ring_edges(list(grid[r])) if cols > 1 else set()
    for c in range(cols):
        want |= ring_edges(list(grid[:, c])) if rows > 1 else set()
    assert {frozenset(p) for p in pairs_of(ms)} == {frozenset(map(int, e)) for e in want}


def test_job_validation():
    with pytest.raises(PortError, match="port 3 appears twice"):
        Job("j", "ring", [1, 3, 3])
    with pytest.raises(PortError, match=r"\[2\].*both endpoints and spares"):
        Job("j", "ring", [1, 2, 3], spares=[2])
    with pytest.raises(ShapeError, match="rows x cols = 6"):
        Job("j", "torus", range(6), shape=(4, 2))
    with pytest.raises(SettingsError, match="'mesh'"):
        Job("j", "mesh", [0, 1])
    with pytest.raises(PortError, match="at least 2"):
        Job("j", "ring", [0])
    with pytest.raises(PortError, match="uses port 9"):
        job_matchings(Job("j", "ring", [0, 1], spares=[9]), 8)
    job = Job("j", "ring", [4, 5, 6], spares=[7, 8])
    assert job.with_spare(5, 8) == Job("j", "ring", [4, 8, 6], spares=[7])
    with pytest.raises(PortError, match="not a spare"):
        job.with_spare(5, 4)
