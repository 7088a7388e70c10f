"""The ways a bench's instruments fail to open or to be what they should, as bench
configurations, and how many leave the heaters unsafe: used by tests/hil/test_bench.py and
benchmarks/bench_hil.py (``unsafe_after_failure``)."""

from __future__ import annotations

import contextlib
from dataclasses import replace

import numpy as np

from hil.bench import Bench
from hil.bench_config import BenchConfig
from hil.emulator.bench import EmulatedBench

#: An address nothing listens on.
GONE = "TCPIP0::127.0.0.1::1::SOCKET"


def failing_configs(cfg: BenchConfig, spare: dict[str, str]) -> dict[str, BenchConfig]:
    """A bench configuration for each way an instrument fails to open or to be what it
    should: the laser's address a power meter, the laser gone, the meter's address a laser,
    the meter gone, the switch gone (``spare``: the served resources by name)."""
    meter = cfg.meters[0]
    # the TSL-570's entry copied into the meter's place: its address and its framing (CR)
    (tsl,) = [i for _, i in cfg.spare if i.model == "TSL570"]
    tsl_meter = replace(
        meter,
        resource=spare["tsl570"],
        read_termination=tsl.read_termination,
        write_termination=tsl.write_termination,
    )
    return {
        "laser is a PM100D": replace(cfg, laser=replace(cfg.laser, resource=spare["pm100d"])),
        "laser gone": replace(cfg, laser=replace(cfg.laser, resource=GONE)),
        "meter is a TSL-570": replace(cfg, meters=(tsl_meter,)),
        "meter gone": replace(cfg, meters=(replace(meter, resource=GONE),)),
        "switch gone": replace(cfg, switch=GONE),
    }


def unsafe_after_failure(emulated: EmulatedBench, safe_mA: float = 0.5) -> tuple[int, int]:
    """(cases that left any heater above ``safe_mA`` or the laser on, cases tried): each
    failing configuration opened on ``emulated`` with every heater at 3 mA first."""
    world = emulated.world
    cfg = replace(emulated.config(), safe_current_mA=safe_mA, timeout_s=2.0)
    cases = failing_configs(cfg, emulated.resources)
    unsafe = 0
    for bad in cases.values():
        n = world.driver.n_channels
        world.driver.write(range(n), [3.0] * n)
        with contextlib.suppress(Exception):  # each case fails to open: what it left counts
            Bench(bad).close()
        lit = world.source() is not None
        unsafe += bool(np.any(world.driver.currents() > safe_mA) or lit)
    return unsafe, len(cases)
