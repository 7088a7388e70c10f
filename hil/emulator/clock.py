"""The emulated bench's clocks, s: :class:`VirtualClock` (the default: the wall clock plus every
wait skipped) and :class:`ManualClock` (tests: time moves only when told). ``time.monotonic``
paces a bench on the wall clock instead (:class:`hil.emulator.world.BenchWorld`)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator


class ManualClock:
    """A clock that stands still until told to move (tests): call it for the time, s. Waiting
    on it moves it. Thread-safe."""

    def __init__(self, start_s: float = 0.0) -> None:
        self.now_s = start_s
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now_s

    def wait_until(self, t_s: float) -> None:
        """Wait until ``t_s``: the time jumps there (never back)."""
        with self._lock:
            self.now_s = max(self.now_s, float(t_s))

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` from now."""
        self.wait_until(self() + max(float(seconds), 0.0))

    advance = sleep


class VirtualClock(ManualClock):
    """The emulated bench's default clock, s: the wall clock's time plus every wait skipped.
    Time flows as on a real bench (a round trip to an instrument takes its real time, and
    what the chip does meanwhile happens), but a wait (settling, ``*OPC?``, ``*WAI``, a
    logging run or sweep a client polls) jumps to its end instead of being slept. One clock
    for every instrument of a world keeps them consistent: a jump made for one client is seen
    by all. :meth:`held` stops it for one thread while an instrument runs a line, so that
    the readings of one line are of one instant."""

    def __init__(self, start_s: float = 0.0) -> None:
        super().__init__(start_s - time.monotonic())  # now_s: the offset from the wall clock
        self._held = threading.local()

    def __call__(self) -> float:
        held = getattr(self._held, "t_s", None)
        return held if held is not None else self.now_s + time.monotonic()

    def wait_until(self, t_s: float) -> None:
        with self._lock:
            self.now_s += max(0.0, float(t_s) - (self.now_s + time.monotonic()))
        if getattr(self._held, "t_s", None) is not None:
            self._held.t_s = max(self._held.t_s, float(t_s))

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """This thread's time stands still inside (waits still move it)."""
        outer = getattr(self._held, "t_s", None)
        self._held.t_s = self() if outer is None else outer
        try:
            yield
        finally:
            self._held.t_s = outer
