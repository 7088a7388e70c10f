"""The command line's parser and the argument types its subcommands share.

Every value is checked while the command line is parsed, before any work or side effect: a bad
one is a :class:`UsageError` naming the option, the value and what it needs, which
:func:`pswitch.cli.main` prints as one line and exits 2 on. This module imports nothing heavy:
``pswitch --help`` and each subcommand's help load only the parser.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

from photonics.errors import InvalidInputError


def plain(doc: str, **values: str) -> str:
    """A docstring as plain text for ``--help``: ````NAME```` becomes ``values[NAME]`` (a
    constant's figure, e.g. ``VERIFY_ISOLATION_DB="20 dB"``), other double backticks are
    dropped, and a cross-reference reads as Sphinx shows it: ``:func:`a.b.name``` as
    ``a.b.name``, ``:func:`~a.b.name``` as ``name``."""
    text = re.sub(r":[a-z]+:`~(?:[\w.]+\.)?([^`.]+)`", r"\1", doc)
    text = re.sub(r":[a-z]+:`([^`]+)`", r"\1", text)
    return re.sub(r"``([^`]+)``", lambda m: values.get(m.group(1), m.group(1)), text).strip()


class UsageError(InvalidInputError):
    """A command line the parser refuses; ``prog`` is the (sub)command that refused it."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are :class:`UsageError` (one line, no usage block), so
    that :func:`pswitch.cli.main` reports every failure in one place. Its subparsers are of
    this class too."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(self.prog, message)


def integer(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argument type: an integer in ``low..high`` (no upper bound when ``high`` is None)."""
    span = f">= {low}" if high is None else f"in {low}..{high}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"needs an integer {span}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"needs an integer {span}, got {value}")
        return value

    return parse


def number(high: float, unit: str) -> Callable[[str], float]:
    """An argument type: a number > 0 and <= ``high`` (in ``unit``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0 < value <= high:  # NaN fails too
            raise argparse.ArgumentTypeError(
                f"needs a number of {unit} > 0 and <= {high:g}, got {text!r}"
            )
        return value

    return parse


#: The seed of an emulated chip.
seed = integer(0)


def output_file(text: str) -> Path:
    """An argument type: a file to write, in a folder that exists and is writable."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name")
    _writable_folder(path.parent, text)
    return path


def output_folder(text: str) -> Path:
    """An argument type: a folder to write files into, created if missing (with its parents)
    under the nearest folder that exists, which must be writable."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file; give a folder (new or existing)")
    existing = next(p for p in (path, *path.parents) if p.exists())
    _writable_folder(existing, text)
    return path


def _writable_folder(folder: Path, text: str) -> None:
    where = folder.resolve()
    if not where.exists():
        raise argparse.ArgumentTypeError(
            f"cannot write {text}: folder {where} does not exist; create it or give another path"
        )
    if not where.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text}: {where} is not a folder")
    if not os.access(where, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text}: folder {where} is not writable")
    try:  # a file made and removed at once: a read-only or virtual file system, root or not
        tempfile.TemporaryFile(dir=where).close()
    except OSError as exc:
        raise argparse.ArgumentTypeError(
            f"cannot write {text}: folder {where} takes no files ({exc.strerror or exc})"
        ) from None


def host(text: str) -> str:
    """An argument type: an address of this machine to serve on (bound and released here)."""
    try:
        family, kind, _, _, address = socket.getaddrinfo(text, 0, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind) as probe:
            probe.bind(address)
    except (OSError, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise argparse.ArgumentTypeError(
            f"cannot serve on {text!r} ({reason}); give an address of this machine, e.g. "
            f"127.0.0.1 (or 0.0.0.0 for every interface)"
        ) from None
    return text


#: Dask address schemes ``--scheduler`` takes (``host:port`` alone is ``tcp``).
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")


def scheduler(text: str) -> str:
    """An argument type: a Dask scheduler's address, ``[SCHEME://]HOST:PORT`` (a scheme of
    :data:`SCHEDULER_SCHEMES`, a port in 1..65535), e.g. ``tcp://10.0.0.5:8786``."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    host, colon, port = rest.rpartition(":")
    if (
        scheme not in SCHEDULER_SCHEMES
        or not colon
        or not host
        or not port.isdigit()
        or not (0 < int(port) < 65536)
    ):
        raise argparse.ArgumentTypeError(
            f"needs a scheduler address SCHEME://HOST:PORT (scheme {', '.join(SCHEDULER_SCHEMES)}"
            f"; port 1..65535), e.g. tcp://10.0.0.5:8786; got {text!r}"
        )
    return f"{scheme}://{host}:{port}"
