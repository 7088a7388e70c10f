"""Files written so that a crash at any instant leaves the old file or the new one.

The project's persistent state (the calibration file, the store's documents, the bench
configuration) is written with :func:`write_atomically`; :func:`fsync_directory` makes a
creation, rename or removal in a directory durable.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path


def write_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` so that a crash at any instant leaves the old file or the
    new one: a temp file ``.<name>.*.tmp`` in the same directory (a rename cannot cross file
    systems), flushed and fsync'ed, ``os.replace``d over ``target``, then the directory fsync'ed.
    ``target`` is untouched until the rename; on any failure the temp file is removed and the
    error propagates. The file keeps an existing file's mode, else 0644."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if hasattr(os, "fchmod"):  # mkstemp makes 0600
                try:
                    mode = target.stat().st_mode & 0o777
                except FileNotFoundError:
                    mode = 0o644
                os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_directory(target.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename, creation or removal in ``directory`` durable (POSIX; no-op elsewhere)."""
    if os.name != "posix":  # directories cannot be opened for fsync on Windows
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:  # some file systems do not support fsync on a directory
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)
