"""Versioned JSON documents on disk: one writer, one reader, atomic writes.

Every persistent file of the project (the calibration file, the store's documents, the bench
configuration) is a JSON object: a header naming its format and version, then the format's
fields, its *body*. A :class:`DocumentFormat` describes one kind of file; :func:`write_document`
and :func:`read_document` are how every one is written and read.

- Writes are atomic (:func:`write_atomically`): the bytes go to a temp file in the same
  directory, which is flushed and fsync'ed, renamed over the target with :func:`os.replace`,
  and the directory is fsync'ed so the rename itself is durable. A crash at any instant leaves
  the old file or the new one. A body JSON cannot hold exactly (a non-finite float, a
  non-string key, another type, nesting deeper than 100) is refused before anything is written.
- One top-level field per line, values compact, ASCII, no trailing newline: every proper prefix
  of a file is invalid JSON, so a truncated file is always detected. Floats are written with
  ``repr`` and read back bit-exact.
- :func:`read_document` refuses, with the format's error naming the file and the problem, a file
  that is not UTF-8 JSON (corrupt, truncated), has a duplicate field, a non-finite number, a
  wrong schema, a missing, mistyped, newer or unknown version, missing or unexpected fields, or a
  body the format's builder refuses. Nothing is ever half-read.

Two header shapes are read and written, each format keeping the one its files have always had:
``{"schema": "<name>", "version": <int>, ...}`` (calibration, bench configuration) and the
store's ``{"schema": <int>, ...}``, whose ``schema`` is the version (:attr:`DocumentFormat.name`
None). A writer killed mid-write leaves at most a temp file ``.<name>.<random>.tmp``, which
the next write of the same file removes; a file has one writing process.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from photonics.errors import InvalidInputError, PswitchError, SettingsError

#: Deepest nesting of lists and objects a body may have. The JSON decoder recurses, so a much
#: deeper document could be written but not read back; the limit also stops reference cycles.
MAX_DEPTH = 100
_TMP_SUFFIX = ".tmp"

T = TypeVar("T")


class ContentError(Exception):
    """What is wrong with a file's content; :func:`read_document` adds the path and raises the
    format's error. A format's builder raises it for a body of the wrong shape or types."""


@dataclass(frozen=True)
class DocumentFormat:
    """One kind of versioned document file.

    - ``label``: what the file is, in messages (``"calibration"``, ``"store file"``);
    - ``name``: the value of ``schema`` that names the format, or None for the store's header,
      where ``schema`` holds the version and there is no ``version`` field;
    - ``version``: the newest version read, and the one written (>= 1);
    - ``fields``: the body's fields, in the order written; ``optional``: those a file may omit;
    - ``error``: what a bad file or an unwritable body raises, its message the path first;
    - ``upgrade``: ``upgrade(version, body)`` turns the body of an older version's file into
      the current version's (None: older versions have the same fields).
    """

    label: str
    name: str | None
    version: int
    fields: tuple[str, ...]
    error: type[PswitchError]
    optional: frozenset[str] = field(default=frozenset())
    upgrade: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 1:
            raise SettingsError(f"version must be an integer >= 1, got {self.version!r}")
        if {"schema", "version"} & set(self.fields):
            raise SettingsError(f"the body's fields {self.fields} must not repeat the header's")

    def header(self) -> dict[str, Any]:
        """The fields written before the body."""
        if self.name is None:
            return {"schema": self.version}
        return {"schema": self.name, "version": self.version}

    @property
    def version_field(self) -> str:
        """The header field that holds the version."""
        return "schema" if self.name is None else "version"

    @property
    def version_words(self) -> str:
        """How messages name the version field."""
        return "schema version" if self.name is None else "version"


# ------------------------------------------------------------------------------------------------
# writing


def write_document(path: str | os.PathLike[str], fmt: DocumentFormat, body: dict[str, Any]) -> None:
    """Write ``fmt``'s header and ``body`` to ``path`` atomically (:func:`write_atomically`).

    ``body`` holds ``fmt.fields`` (the optional ones may be left out) with values JSON holds
    exactly: dicts with string keys, lists, tuples (read back as lists), strings, ints, finite
    floats, bools, None. Anything else is refused with ``fmt.error`` before anything is written,
    so an existing file stays.
    """
    path = Path(path)
    try:
        _check_fields(fmt, body)
        _check_json(body)
        data = _encode({**fmt.header(), **body})
    except (ContentError, ValueError, TypeError) as exc:  # json.dumps: too many digits
        raise fmt.error(f"{path}: refusing to write: {exc}; nothing written") from exc
    write_atomically(path, data)


def _check_fields(fmt: DocumentFormat, present: Collection[str]) -> None:
    """Refuse a set of body fields that is not ``fmt``'s: the reader and the writer both check,
    so every write reads back."""
    missing = [k for k in fmt.fields if k not in present and k not in fmt.optional]
    if missing:
        raise ContentError(f"missing field(s) {', '.join(missing)}")
    extra = sorted(set(present) - set(fmt.fields))
    if extra:
        raise ContentError(f"unexpected field(s) {', '.join(extra)}")


def _check_json(body: dict[str, Any]) -> None:
    """Refuse what JSON cannot hold exactly: non-finite floats, non-string keys, other types.

    ``json.dumps`` would silently turn ``{1: x}`` into ``{"1": x}`` and write ``NaN``, which is not
    JSON. Raises ``ValueError`` naming the path of the offending value (``document['a'][1]``).
    """
    # only containers get a path formatted up front: a list of thousands of floats costs one
    # isinstance test per value
    stack: list[tuple[str, dict[Any, Any] | list[Any] | tuple[Any, ...], int]] = [("", body, 0)]
    while stack:  # iterative: no recursion limit to hit on deep input
        where, container, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"{where} is nested deeper than {MAX_DEPTH} levels (or a cycle)")
        items = container.items() if isinstance(container, dict) else enumerate(container)
        for key, value in items:
            if isinstance(container, dict) and not isinstance(key, str):
                raise ValueError(f"{where or 'the top level'} has a non-string key {key!r}")
            inner = f"{where}[{key!r}]" if where else key
            if isinstance(value, dict | list | tuple):
                stack.append((inner, value, depth + 1))
            elif isinstance(value, float):
                if not math.isfinite(value):
                    raise ValueError(f"{inner} is {float(value)!r} (numbers must be finite)")
            elif value is not None and not isinstance(value, str | int):  # bool is an int
                raise ValueError(f"{inner} is a {type(value).__name__}, which JSON cannot hold")


def _encode(doc: dict[str, Any]) -> bytes:
    # one top-level field per line; json writes floats with repr, which round-trips exactly, and
    # escapes everything outside ASCII. No trailing newline: then every proper prefix of the file
    # is invalid JSON, so any truncation is detected.
    lines = [f"  {json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in doc.items()]
    return ("{\n" + ",\n".join(lines) + "\n}").encode("ascii")


def write_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` so that a crash at any instant leaves the old file or the
    new one: a temp file ``.<name>.*.tmp`` in the same directory (a rename cannot cross file
    systems), flushed and fsync'ed, ``os.replace``d over ``target``, then the directory fsync'ed.
    ``target`` is untouched until the rename; on any failure the temp file is removed and the
    error propagates. Temp files an earlier, killed write of ``target`` left are removed first.
    The file keeps an existing file's mode, else 0644."""
    _remove_leftovers(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=_TMP_SUFFIX, dir=target.parent)
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


def _remove_leftovers(target: Path) -> None:
    """Remove the temp files a killed writer of ``target`` left behind. A second process
    writing ``target`` at the same time could have its temp file removed, which makes its write
    fail (never corrupts): one writing process per file."""
    prefix = f".{target.name}."
    with os.scandir(target.parent) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.name.endswith(_TMP_SUFFIX):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


def remove_document(path: str | os.PathLike[str]) -> None:
    """Delete the file at ``path``, and the temp files a killed writer of it left, durably (the
    directory is fsync'ed); an absent file is fine."""
    path = Path(path)
    _remove_leftovers(path)
    try:
        path.unlink()
    except FileNotFoundError:
        return
    fsync_directory(path.parent)


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


# ------------------------------------------------------------------------------------------------
# reading


def read_document(
    path: str | os.PathLike[str], fmt: DocumentFormat, build: Callable[[dict[str, Any]], T]
) -> T:
    """What ``build`` makes of the body (the fields of ``fmt`` present in the file) of the
    document at ``path``.

    Raises ``fmt.error``, naming ``path`` and the problem, for a file that is not UTF-8 JSON
    (e.g. truncated), of another schema or a newer or unknown version, with missing, unexpected
    or duplicate fields or non-finite numbers, and for a :class:`ContentError` or
    :class:`~photonics.errors.InvalidInputError` (a value of the right type but out of range)
    raised by ``build``. An unreadable or missing file raises the ``OSError`` as is.
    """
    raw = Path(path).read_bytes()
    try:
        doc = json.loads(
            raw.decode("utf-8"),
            parse_float=_finite_float,
            parse_constant=_reject_constant,
            object_pairs_hook=_unique_keys,
        )
        return build(_body(fmt, doc))
    except UnicodeDecodeError as exc:
        raise fmt.error(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}), corrupt"
        ) from exc
    except json.JSONDecodeError as exc:
        raise fmt.error(
            f"{path}: not valid JSON, truncated or corrupt ({exc.msg} at line {exc.lineno} "
            f"column {exc.colno}, file of {len(raw)} bytes)"
        ) from exc
    except (ContentError, InvalidInputError, RecursionError) as exc:
        raise fmt.error(f"{path}: {exc}") from exc
    except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
        raise fmt.error(f"{path}: not a valid {fmt.label} ({exc})") from exc


def _body(fmt: DocumentFormat, doc: Any) -> dict[str, Any]:
    """The body of a parsed file, after checking its header and its set of fields."""
    if not isinstance(doc, dict):
        raise ContentError(f"top level must be a JSON object, got {type(doc).__name__}")
    if fmt.name is not None and doc.get("schema") != fmt.name:
        raise ContentError(
            f"not a pswitch {fmt.label}: schema must be {fmt.name!r}, got {doc.get('schema')!r}"
        )
    key, words = fmt.version_field, fmt.version_words
    if key not in doc:
        raise ContentError(f"no {words} (not a pswitch {fmt.label}?)")
    version = doc[key]
    if isinstance(version, bool) or not isinstance(version, int):
        raise ContentError(f"{words} must be an integer, got {version!r}")
    if version > fmt.version:
        raise ContentError(
            f"written by a newer pswitch: {words} {version} > {fmt.version}; upgrade pswitch"
        )
    if version < 1:
        raise ContentError(f"unsupported {words} {version} (supported: 1 to {fmt.version})")
    body = {k: v for k, v in doc.items() if k not in fmt.header()}
    if version < fmt.version and fmt.upgrade is not None:
        body = fmt.upgrade(version, body)
    _check_fields(fmt, body.keys())
    return {k: body[k] for k in fmt.fields if k in body}


def _reject_constant(literal: str) -> float:
    raise ContentError(f"non-finite number {literal} (numbers must be finite)")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # e.g. 1e999, which float() turns into inf
        raise ContentError(f"number {literal} is out of range (numbers must be finite)")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:  # json.loads would silently keep the last one
            raise ContentError(f"duplicate field {key!r}")
        out[key] = value
    return out
