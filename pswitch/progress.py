"""Progress bars of the command line: one tqdm bar per stage, on stderr (hidden when stderr is
not a terminal)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def progress_bar() -> Callable[[str, int, int], None]:
    """``update(stage, done, total)``: opens the stage's bar on its first call, closes it when
    ``done`` reaches ``total``."""
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = tqdm(
                total=total, desc=stage, leave=False, file=sys.stderr, disable=None
            )
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return update
