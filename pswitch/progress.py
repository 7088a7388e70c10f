"""Progress of the command line: one tqdm bar per stage, on stderr, whenever stderr is a
terminal (``--json`` included: the results go to stdout, the bars never do; hidden in pipes,
files and CI logs).

A stage is any step that can run over about 2 s. The layers below report through a plain
callback, ``progress(stage, done, total)`` (:mod:`photonics.progress`:
:attr:`firmware.controller.Controller.progress` for CAL:RUN, ``progress=`` of the
self-calibration and of the all-to-all covers), and the bar it gets here shows from the stage's
start: a stage reports ``done = 0`` as it begins. An open bar's clock is redrawn every second,
so a long step shows it is running between two updates.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Progress = Callable[[str, int, int], None]

#: Seconds between redraws of the open bars' clocks.
HEARTBEAT_S = 1.0


def progress_bar() -> Progress:
    """``update(stage, done, total)``: opens the stage's bar on its first call (``done = 0``
    shows it before the first step ends), closes it when ``done`` reaches ``total``; a stage
    may learn its ``total`` as it goes."""
    from tqdm import tqdm

    bars: dict[str, Any] = {}
    lock = threading.Lock()
    beating = threading.Event()

    def heartbeat() -> None:
        while True:
            with lock:
                if not bars:
                    beating.clear()
                    return
                for bar in bars.values():
                    bar.refresh()
            time.sleep(HEARTBEAT_S)

    def update(stage: str, done: int, total: int) -> None:
        with lock:
            bar = bars.get(stage)
            if bar is None:
                bar = tqdm(total=total, desc=stage, leave=False, file=sys.stderr, disable=None)
                if bar.disable:
                    return
                bars[stage] = bar
                if not beating.is_set():
                    beating.set()
                    threading.Thread(target=heartbeat, daemon=True).start()
            if bar.total != total:
                bar.total = total
            bar.update(done - bar.n)
            if done >= total:
                bar.close()
                del bars[stage]

    return update


@contextmanager
def stage(progress: Progress, name: str) -> Iterator[None]:
    """A one-step stage ``name``: its bar, with its running clock, shown while the block runs."""
    progress(name, 0, 1)
    try:
        yield
    finally:
        progress(name, 1, 1)


def within(step: str, progress: Progress) -> Progress:
    """``progress`` for the stages of ``step``, each named ``step: stage``."""
    return lambda stage, done, total: progress(f"{step}: {stage}", done, total)
