"""A model's programming-manual command list (:class:`Manual`, :class:`ManualCommand`) and how
much of it an emulation accepts (:func:`check`, :func:`coverage`); the lists themselves are the
modules of :mod:`hil.emulator.manuals`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hil.emulator.world import BenchWorld
from hil.instruments.base import Handler


@dataclass(frozen=True)
class ManualCommand:
    """One command of a programming manual: ``syntax`` as the manual writes it (optional nodes in
    brackets), the ``lines`` that exercise it (set and query forms; each must run without an
    error, each line with a ``?`` must get a reply), ``modelled`` (True: it acts on the emulated
    bench or reads it; False: its state is kept and read back only), and ``section``: where the
    manual documents it (page or section)."""

    syntax: str
    lines: tuple[str, ...]
    modelled: bool
    section: str


@dataclass(frozen=True)
class Manual:
    """A model's programming manual: the ``model``, the manual's ``title`` (with its edition),
    how to build a fresh emulation on a world (``build``), the ``commands``, and how to tell
    whether a line was accepted (``errors``: the instrument's errors after a line, default the
    SCPI error queue)."""

    model: str
    title: str
    build: Callable[[BenchWorld], Handler]
    commands: tuple[ManualCommand, ...]
    errors: Callable[[Handler, str, str | bytes | None], list[str]] | None = None


def scpi_errors(handler: Handler, line: str, reply: str | bytes | None) -> list[str]:
    """The SCPI error queue's entries after ``line`` (drained)."""
    found = []
    for _ in range(32):
        entry = handler.handle("SYST:ERR?")
        text = entry.decode() if isinstance(entry, bytes) else str(entry)
        if text.split(",")[0].strip().lstrip("+") in ("0", "-0"):
            break
        found.append(text)
    return found


@dataclass(frozen=True)
class Result:
    """One manual command tried: accepted, or why not."""

    command: ManualCommand
    problems: tuple[str, ...]

    @property
    def accepted(self) -> bool:
        return not self.problems


def check(manual: Manual, seed: int = 0) -> list[Result]:
    """Try every command of ``manual`` on one fresh emulation (on the default 8-port world of
    ``seed``), in the manual's order."""
    world = BenchWorld(seed=seed)
    handler = manual.build(world)
    errors = manual.errors or scpi_errors
    results = []
    for command in manual.commands:
        problems: list[str] = []
        for line in command.lines:
            try:
                reply = handler.handle(line)
            except Exception as exc:  # an emulation that raises is a failed command, counted
                problems.append(f"{line!r} raised {type(exc).__name__}: {exc}")
                continue
            if "?" in line and reply is None:
                problems.append(f"{line!r}: no reply")
            problems += [f"{line!r}: {e}" for e in errors(handler, line, reply)]
        results.append(Result(command, tuple(problems)))
    return results


def coverage(manual: Manual) -> float:
    """The fraction of ``manual``'s commands the emulation accepts (0 for an empty list)."""
    results = check(manual)
    return sum(r.accepted for r in results) / len(results) if results else 0.0
