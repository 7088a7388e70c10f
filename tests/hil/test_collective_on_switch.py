"""Compiled collectives run on the emulated switch server through the SDK over a real socket
(``SCH:LOAD``, ``SCH:STAR``, ``SCH:STEP``): the reconfiguration times are the firmware's own,
and the collective's time on the switch is its traffic plus them."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest

from firmware.controller import Controller
from firmware.fabric import (
    Link,
    circuit_timing,
    compile_collective,
    halving_doubling_all_reduce,
    ring_all_reduce,
)
from firmware.sdk import Switch, SwitchError
from hil.emulator.bench import SwitchFirmware
from hil.emulator.server import TcpServer
from photonics.errors import SettingsError
from photonics.matching import Matching

LINK = Link(bandwidth_Bps=50e9, alpha_s=5e-6)


def serve(mesh: str, ports: int) -> Iterator[tuple[Switch, Controller]]:
    controller = Switch.emulated(ports=ports, mesh=mesh, seed=0).transport.controller
    with TcpServer(SwitchFirmware(controller), name="switch") as server:
        sw = Switch.open(server.resource)
        sw.transport.timeout_s = 60.0
        with sw:
            yield sw, controller


@pytest.fixture
def clements16() -> Iterator[tuple[Switch, Controller]]:
    yield from serve("clements", 16)


@pytest.fixture
def hexagonal32() -> Iterator[tuple[Switch, Controller]]:
    yield from serve("hexagonal", 32)


def test_a_ring_all_reduce_runs_on_the_switch_and_takes_its_reconfiguration_times(clements16):
    sw, controller = clements16
    s = compile_collective(ring_all_reduce(range(16), 2.0**30), 16, controller.fabric)
    before = controller.driver.elapsed_s
    times = sw.run_collective(s, LINK)
    assert len(times) == len(s.steps) == 60
    # every step changes matching on a ring: each pays the heaters the firmware wrote
    assert all(t > 0 for t in times)
    assert math.isclose(sum(times), controller.driver.elapsed_s - before, rel_tol=1e-9)
    assert controller.matching == s.steps[-1].matching and not controller.running
    # the ring alternates two matchings: every change after the first costs the same
    assert len({round(t, 12) for t in times[1:]}) == 1 and times[0] > times[1]
    # a bidirectional ring's round is two matchings, each carrying n / 2p bytes each way
    p, n, a, b = 16, 2.0**30, LINK.alpha_s, 1 / LINK.bandwidth_Bps
    traffic = 2 * (p - 1) * (2 * a + n / p * b)
    assert math.isclose(circuit_timing(s, LINK, times).total_s, sum(times) + traffic, rel_tol=1e-12)


def test_halving_doubling_on_the_switch_is_its_closed_form_plus_the_firmware_s_times(clements16):
    sw, controller = clements16
    p, n = 16, 2.0**28
    s = compile_collective(halving_doubling_all_reduce(range(p), n), p, controller.fabric)
    times = sw.run_collective(s, LINK)
    # 2 log2 p rounds, one perfect matching each; the last halving's matching is the first
    # doubling's, so the switch is not asked to change it
    assert len(times) == 8 and times[4] == 0.0 and all(t > 0 for i, t in enumerate(times) if i != 4)
    a, b = LINK.alpha_s, 1 / LINK.bandwidth_Bps
    closed = 2 * math.log2(p) * a + 2 * (p - 1) / p * n * b
    assert math.isclose(circuit_timing(s, LINK, times).total_s, closed + sum(times), rel_tol=1e-12)
    # the same matchings the same way again: from where the last run left the switch
    again = sw.run_collective(s, LINK)
    assert again[1:] == times[1:] and again[0] != times[0]


def test_more_steps_than_a_schedule_holds_run_in_batches(clements16):
    sw, controller = clements16
    a, b = Matching([(0, 1), (2, 3)], 16), Matching([(1, 2), (0, 3)], 16)
    times = sw.run_matchings([(a if i % 2 == 0 else b, 1e-3) for i in range(70)])
    assert len(times) == 70 and all(t > 0 for t in times)
    assert len({round(t, 12) for t in times[1:]}) == 1  # the batch boundary costs the same
    assert controller.matching == b and sw.status()["schedule_running"] is False


def test_the_router_splits_what_the_mesh_cannot_hold_and_the_switch_refuses_the_rest(hexagonal32):
    sw, controller = hexagonal32
    # ranks in a shuffled order: 2 of its rounds' matchings do not route on the mesh
    ranks = [int(r) for r in np.random.default_rng(2).permutation(32)]
    c = halving_doubling_all_reduce(ranks, 2.0**20)
    unsplit = compile_collective(c, 32)  # not checked against the mesh
    count = controller.step_count()
    with pytest.raises(SwitchError) as err:
        sw.run_collective(unsplit, LINK)
    assert err.value.code == -221 and controller.step_count() == count
    s = compile_collective(c, 32, controller.fabric)
    assert len(s.steps) > len(c.rounds)  # the router split a matching
    times = sw.run_collective(s, LINK)
    assert len(times) == len(s.steps) and controller.matching == s.steps[-1].matching


def test_a_schedule_for_another_switch_size_is_refused_before_anything_is_sent(clements16):
    sw, controller = clements16
    s = compile_collective(ring_all_reduce(range(8), 1e6), 8)
    before = controller.driver.elapsed_s
    with pytest.raises(SettingsError, match="8 ports; the switch has 16"):
        sw.run_collective(s, LINK)
    assert controller.driver.elapsed_s == before and controller.step_count() == 0
