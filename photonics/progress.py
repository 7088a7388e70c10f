"""Progress callbacks of long computations, for a caller's progress bar (no I/O here).

A routine that can run for seconds takes ``progress``: None, or a callable
``progress(stage, done, total)`` that it calls as each step of a stage begins (``done`` steps
finished so far, from 0) and once the stage is complete (``done == total``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

Progress = Callable[[str, int, int], None]
T = TypeVar("T")


def steps(stage: str, items: Iterable[T], progress: Progress | None) -> Iterator[T]:
    """Each of ``items`` in turn, reported to ``progress`` as it begins and once all are done
    (nothing is reported without ``progress`` or items)."""
    items = list(items)
    for done, item in enumerate(items):
        if progress is not None:
            progress(stage, done, len(items))
        yield item
    if progress is not None and items:
        progress(stage, len(items), len(items))
