"""A command that fails changes nothing: routes, heaters, rings, calibration, schedule, limits,
interlock and the store's files stay exactly as they were (tests/firmware/state.py captures
them), whatever failed: a bad argument, a limit, the hardware, a measurement or the store."""

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.controller import Controller
from firmware.controller.core import MACHINERY
from firmware.driver import DriverError
from firmware.sdk import Switch, SwitchError
from tests.firmware.contracts import ACTIONS
from tests.firmware.state import ATTRIBUTES, capture


def _controller(**kw) -> Controller:
    return Switch.emulated(**kw).transport.controller


@contextlib.contextmanager
def _fsync_fails(after_rename: bool = False) -> Iterator[None]:
    """``os.fsync`` fails as on a full disk: every call (the new file's, so the old one stays),
    or with ``after_rename`` once, at the directory's fsync after the new file was renamed
    into place (so it must be put back)."""
    real, calls = os.fsync, [0]

    def fsync(fd: int) -> None:
        calls[0] += 1
        if calls[0] == 2 if after_rename else True:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    with mock.patch("os.fsync", fsync):
        yield


def test_capture_reads_every_attribute_a_transaction_restores() -> None:
    c = _controller(ports=4, seed=1, rings=True)
    assert set(vars(c)) - MACHINERY == ATTRIBUTES


@pytest.mark.parametrize("after_rename", [False, True])
def test_a_store_failure_leaves_the_applied_state_and_the_store_in_agreement(
    tmp_path, after_rename
) -> None:
    c = _controller(ports=4, seed=0, state_dir=tmp_path)
    c.handle("ROUT:MATC 0,1")
    before = capture(c)
    with _fsync_fails(after_rename):
        c.handle("ROUT:MATC 2,3")
    assert c.errors.codes() == [-310]
    assert capture(c) == before  # the heaters are back, the store holds 0,1 still
    assert c.handle("ROUT:MATC?") == "0,1"
    again = _controller(ports=4, seed=0, state_dir=tmp_path)
    assert again.handle("ROUT:MATC?") == "0,1"
    assert (again.driver.currents() == c.driver.currents()).all()


def test_a_failed_ring_lock_under_a_current_limit_changes_nothing() -> None:
    # once: RING:LOCK 1 reported -222 (channel 65 outside 0..3 mA), yet had moved heater 65
    # from 0 to 2.99998 mA and changed RING:STAT? 1
    c = _controller(ports=8, seed=0, rings=True)
    c.handle("SYST:CURR:LIM 3")
    failed = 0
    for line in ("RING:LOCK 0", "RING:LOCK 1"):
        before = capture(c)
        c.handle(line)
        if c.errors.codes():
            assert capture(c) == before, line
            failed += 1
            c.errors.clear()
    assert failed


def test_a_driver_failure_during_a_ring_lock_restores_every_ring() -> None:
    c = _controller(ports=4, seed=1, rings=True)
    c.handle("RING:LOCK 0")
    before = capture(c)
    c.driver.fail_after = 0  # the lock's first heater write fails
    c.handle("RING:LOCK 1")
    assert c.errors.codes() == [-240]
    assert capture(c) == before


def test_a_failed_self_calibration_leaves_the_rings_as_they_were() -> None:
    # once: -200 (P_pi beyond the limit's reach), yet the rings ended locked
    c = _controller(ports=4, seed=0, rings=True)
    c.handle("SYST:CURR:LIM 4")
    before = capture(c)
    c.handle("CAL:RUN")
    assert c.errors.codes()
    assert capture(c) == before


def test_calibrate_and_save_without_a_store_fails_before_anything_changes() -> None:
    sw = Switch.emulated(ports=4, seed=0, calibrated=False)
    c = sw.transport.controller
    before = capture(c)
    with pytest.raises(SwitchError) as info:
        sw.calibrate()  # save=True
    assert info.value.code == -310
    assert capture(c) == before
    assert sw.calibrate(save=False) > 0


# ---- any failing command, any fault ---------------------------------------------------------

LINES = ACTIONS  # the contracts' well-formed commands that change the state
FAULTS = [None, "driver", "measurement", "store", "store after rename"]


@contextlib.contextmanager
def _fault(c: Controller, fault: str | None, after: int) -> Iterator[None]:
    """``fault`` in the next command: the ``after``-th heater write fails part-way, the
    ``after``-th measurement fails, or the store's writes fail (file or directory fsync)."""
    if fault == "driver":
        c.driver.fail_after = after
    if fault == "store" or fault == "store after rename":
        with _fsync_fails(after_rename=fault != "store"):
            yield
        return
    measure, calls = c.driver.measure, [0]

    def failing(*args, **kwargs):
        calls[0] += 1
        if fault == "measurement" and calls[0] > after:
            raise DriverError("detector read failed")
        return measure(*args, **kwargs)

    c.driver.measure = failing
    try:
        yield
    finally:
        c.driver.fail_after = None
        c.driver.measure = measure


@given(
    steps=st.lists(
        st.tuples(st.sampled_from(LINES), st.sampled_from(FAULTS), st.integers(0, 3)),
        min_size=1,
        max_size=8,
    )
)
def test_any_failing_command_leaves_the_whole_state_unchanged(steps) -> None:
    with tempfile.TemporaryDirectory() as folder:
        c = _controller(ports=4, seed=1, rings=True, state_dir=folder)
        for line, fault, after in steps:
            before = capture(c)
            with _fault(c, fault, after):
                c.handle(line)
            if c.errors.codes():
                assert capture(c) == before, (line, fault, c.errors.codes())
                c.errors.clear()
        # the store agrees with what is applied: a restart comes back to it
        again = _controller(ports=4, seed=1, rings=True, state_dir=folder)
        assert again.matching == c.matching
        assert (again.driver.currents() == c.driver.currents()).all()
        now, restarted = capture(c), capture(again)
        assert restarted.schedule == now.schedule
        if now.calibration_stored:
            assert restarted.calibration == now.calibration
