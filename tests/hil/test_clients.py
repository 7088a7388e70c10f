"""Unmodified clients (pymeasure, qontrol, plain pyvisa) against ``pswitch serve``'s bench: one
test per check of :mod:`tests.hil.clients`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hil.emulator.bench import EmulatedBench
from tests.hil.clients import CHECKS, Check, run


@pytest.fixture(scope="module")
def served() -> Iterator[EmulatedBench]:
    with EmulatedBench(ports=4, seed=0) as bench:
        yield bench


@pytest.mark.parametrize("c", CHECKS, ids=[c.name for c in CHECKS])
def test_client(served: EmulatedBench, c: Check) -> None:
    run(c, served)


def test_the_checks_cover_every_served_instrument() -> None:
    assert {c.instrument for c in CHECKS} == set(EmulatedBench(ports=4).servers)
