"""The switch controller's non-volatile store: named JSON documents in one directory.

Each document lives in ``<directory>/<name>.json`` (names match ``[a-z][a-z0-9_-]*``, at most
64 characters), for example ``configuration`` (the last applied configuration) or ``schedule``.
A file holds::

    {
      "schema": 1,
      "name": "configuration",
      "document": {...}
    }

where ``schema`` is :data:`STORE_SCHEMA`, the store's file-format version. Following the
project's rule for persistent state:

- :meth:`Store.write` is atomic: the bytes go to a temp file in the same directory, which is
  flushed and fsync'ed, renamed over the target with :func:`os.replace`, and the directory is
  fsync'ed so the rename itself is durable. A reader, or the controller after a crash or power
  cut, sees the old document or the new one, never a mix.
- The encoding has no trailing newline, so every proper prefix of a file is invalid JSON: a
  truncated file is always detected, never read as a shorter document.
- :meth:`Store.read` refuses with :class:`StoreError`, naming the file and the problem, a file
  that is not JSON (corrupt, truncated), has no schema version or a newer one, is stored under
  another name, or whose document is not a JSON object. Nothing is ever half-read.

A writer killed mid-write leaves at most a temp file ``.<name>.json.<random>.tmp``, which
:meth:`Store.read` and :meth:`Store.names` ignore and the next write of that name removes. The
store assumes one writing process (the controller): a second process writing the same name at
the same time could have its temp file removed, which makes its write fail (never corrupts).

The chip calibration is the one document in another format: :meth:`Store.write_calibration` and
:meth:`Store.read_calibration` keep ``<directory>/calibration.json`` in the versioned format of
:mod:`firmware.calibration_file`, so the name ``calibration`` is reserved for them.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from pathlib import Path
from typing import Any

from firmware.calibration_file import CalibrationFileError, load_calibration, save_calibration
from firmware.documents import fsync_directory, write_atomically
from photonics.calibration import Calibration
from photonics.errors import PswitchError

#: The newest store file-format version this code reads, and the one it writes.
STORE_SCHEMA = 1
#: What a document name must look like: also a safe file name on every OS (no dots, no slashes).
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_-]*")
#: Longest document name, in characters (keeps temp-file names far below the usual 255-byte limit).
MAX_NAME_LENGTH = 64
#: The name kept in the calibration file format (see :meth:`Store.write_calibration`).
CALIBRATION_NAME = "calibration"

_SUFFIX = ".json"
_TMP_SUFFIX = ".tmp"
#: Deepest nesting of lists and objects a document may have. The JSON decoder recurses, so a much
#: deeper document could be written but not read back; the limit also stops reference cycles.
_MAX_DEPTH = 100
_FIELDS = ("schema", "name", "document")


class StoreError(PswitchError):
    """A store file is corrupt, truncated, of a missing or newer schema version, or not a JSON
    object; or a name or document cannot be stored. The message names the file and the problem."""


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise StoreError(
            f"bad document name {name!r}: must match {NAME_PATTERN.pattern} "
            f"(lower-case letter, then lower-case letters, digits, '_' or '-')"
        )
    if len(name) > MAX_NAME_LENGTH:
        raise StoreError(
            f"bad document name {name[:20]!r}...: {len(name)} characters, at most "
            f"{MAX_NAME_LENGTH} allowed"
        )
    return name


def _check_document(document: Any) -> None:
    """Refuse what JSON cannot hold exactly: non-finite floats, non-string keys, other types.

    ``json.dumps`` would silently turn ``{1: x}`` into ``{"1": x}`` and write ``NaN``, which is not
    JSON; checking first keeps a refused write from touching the disk. Raises ``ValueError``
    with the path of the offending value (the caller adds the file name).
    """
    if not isinstance(document, dict):
        raise ValueError(
            f"the document must be a JSON object (dict), got {type(document).__name__}"
        )
    # only containers get a path formatted up front: a list of thousands of floats costs one
    # isinstance test per value
    stack: list[tuple[str, dict[Any, Any] | list[Any] | tuple[Any, ...], int]] = [
        ("document", document, 0)
    ]
    while stack:  # iterative: no recursion limit to hit on deep input
        where, container, depth = stack.pop()
        if depth >= _MAX_DEPTH:
            raise ValueError(f"{where} is nested deeper than {_MAX_DEPTH} levels (or a cycle)")
        items = container.items() if isinstance(container, dict) else enumerate(container)
        for key, value in items:
            if isinstance(container, dict) and not isinstance(key, str):
                raise ValueError(f"{where} has a non-string key {key!r}")
            if isinstance(value, dict | list | tuple):
                stack.append((f"{where}[{key!r}]", value, depth + 1))
            elif isinstance(value, float):
                if not math.isfinite(value):
                    raise ValueError(
                        f"{where}[{key!r}] is {float(value)!r} (numbers must be finite)"
                    )
            elif value is not None and not isinstance(value, str | int):  # bool is an int
                raise ValueError(
                    f"{where}[{key!r}] is a {type(value).__name__}, which JSON cannot hold"
                )


def _encode(name: str, document: dict[str, Any]) -> bytes:
    # one top-level field per line; json writes floats with repr, which round-trips exactly, and
    # escapes everything outside ASCII. No trailing newline: then every proper prefix of the file
    # is invalid JSON, so any truncation is detected.
    wrapper = {"schema": STORE_SCHEMA, "name": name, "document": document}
    lines = [f"  {json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in wrapper.items()]
    return ("{\n" + ",\n".join(lines) + "\n}").encode("ascii")


class _ContentError(Exception):
    """Internal: what is wrong with a file's content (the caller adds the path)."""


def _reject_constant(literal: str) -> float:
    raise _ContentError(f"non-finite number {literal} (numbers must be finite)")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # e.g. 1e999, which float() turns into inf
        raise _ContentError(f"number {literal} is out of range (numbers must be finite)")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:  # json.loads would silently keep the last one
            raise _ContentError(f"duplicate field {key!r}")
        out[key] = value
    return out


def _decode(name: str, raw: bytes) -> dict[str, Any]:
    """The document inside a store file's bytes; :class:`_ContentError` or a ``ValueError``
    (including ``json.JSONDecodeError`` and ``UnicodeDecodeError``) if anything is wrong."""
    wrapper = json.loads(
        raw.decode("utf-8"),
        parse_float=_finite_float,
        parse_constant=_reject_constant,
        object_pairs_hook=_unique_keys,
    )
    if not isinstance(wrapper, dict):
        raise _ContentError(f"top level must be a JSON object, got {type(wrapper).__name__}")
    if "schema" not in wrapper:
        raise _ContentError("no schema version (not a pswitch store file?)")
    schema = wrapper["schema"]
    if isinstance(schema, bool) or not isinstance(schema, int):
        raise _ContentError(f"schema version must be an integer, got {schema!r}")
    if schema > STORE_SCHEMA:
        raise _ContentError(
            f"written by a newer pswitch: schema version {schema} > {STORE_SCHEMA}; upgrade pswitch"
        )
    if schema < 1:
        raise _ContentError(f"unsupported schema version {schema} (supported: 1 to {STORE_SCHEMA})")
    missing = [k for k in _FIELDS if k not in wrapper]
    if missing:
        raise _ContentError(f"missing field(s) {', '.join(missing)}")
    extra = sorted(set(wrapper) - set(_FIELDS))
    if extra:
        raise _ContentError(f"unexpected field(s) {', '.join(extra)} for schema version {schema}")
    if wrapper["name"] != name:  # e.g. a file copied or renamed by hand
        raise _ContentError(f"holds document {wrapper['name']!r}, not {name!r}")
    document = wrapper["document"]
    if not isinstance(document, dict):
        raise _ContentError(f"document must be a JSON object, got {type(document).__name__}")
    return document


class Store:
    """A directory of named JSON documents, each written atomically (see the module docstring).

    ``Store(directory)`` creates ``directory`` (and its parents) if missing. I/O failures (no
    permission, disk full) raise the ``OSError`` as is; :class:`StoreError` is for bad names,
    bad documents and bad file content.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        if not self.directory.is_dir():
            if self.directory.exists():
                raise StoreError(f"{self.directory}: exists but is not a directory")
            self.directory.mkdir(parents=True, exist_ok=True)
            fsync_directory(self.directory.parent)  # make the new directory's entry durable

    def path(self, name: str) -> Path:
        """The file that holds document ``name``: ``<directory>/<name>.json``."""
        return self.directory / f"{_check_name(name)}{_SUFFIX}"

    def _document_path(self, name: str) -> Path:
        path = self.path(name)
        if name == CALIBRATION_NAME:
            raise StoreError(
                f"{path}: the name {CALIBRATION_NAME!r} is kept in the calibration file format; "
                f"use write_calibration / read_calibration"
            )
        return path

    def _remove_leftovers(self, path: Path) -> None:
        """Remove temp files that a killed writer of ``path`` left behind."""
        prefix = f".{path.name}."  # names have no dots, so this prefix belongs to one name only
        for entry in os.scandir(self.directory):
            if entry.name.startswith(prefix) and entry.name.endswith(_TMP_SUFFIX):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)

    def write(self, name: str, document: dict[str, Any]) -> None:
        """Store ``document`` (a JSON object: dicts with string keys, lists, tuples, strings,
        ints, finite floats, bools, None) under ``name``, atomically.

        Floats read back bit-exact (``repr`` round-trips); tuples read back as lists. A
        document JSON cannot hold exactly (non-finite float, non-string key, other types,
        nesting deeper than 100) is refused with :class:`StoreError` before anything is
        written, so the previous document stays.
        """
        path = self._document_path(name)
        try:
            _check_document(document)
            data = _encode(name, document)
        except (ValueError, TypeError) as exc:
            raise StoreError(f"{path}: refusing to write: {exc}; nothing written") from exc
        self._remove_leftovers(path)
        write_atomically(path, data)

    def read(self, name: str) -> dict[str, Any] | None:
        """The document stored under ``name``, or None if there is none.

        Raises :class:`StoreError`, naming the file and the problem, for a file that is not
        UTF-8 JSON (corrupt or truncated), has a missing or newer schema version, holds another
        name, has missing, unexpected or duplicate fields, non-finite numbers, or a document
        that is not a JSON object.
        """
        path = self._document_path(name)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            return _decode(name, raw)
        except json.JSONDecodeError as exc:
            raise StoreError(
                f"{path}: not valid JSON, truncated or corrupt ({exc.msg} at line {exc.lineno} "
                f"column {exc.colno}, file of {len(raw)} bytes)"
            ) from exc
        except UnicodeDecodeError as exc:
            raise StoreError(
                f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}), corrupt"
            ) from exc
        except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
            raise StoreError(f"{path}: not a valid store file ({exc})") from exc
        except (_ContentError, RecursionError) as exc:
            raise StoreError(f"{path}: {exc}") from exc

    def remove(self, name: str) -> None:
        """Delete document ``name`` (any name, ``calibration`` included); absent is fine."""
        path = self.path(name)
        self._remove_leftovers(path)
        try:
            path.unlink()
        except FileNotFoundError:
            return
        fsync_directory(self.directory)

    def names(self) -> list[str]:
        """The names of the stored documents (``calibration`` included), sorted. Temp files and
        files whose names are not document names are ignored."""
        found = []
        for entry in os.scandir(self.directory):
            stem = entry.name.removesuffix(_SUFFIX)
            if (
                entry.name.endswith(_SUFFIX)
                and NAME_PATTERN.fullmatch(stem)
                and len(stem) <= MAX_NAME_LENGTH
                and entry.is_file()
            ):
                found.append(stem)
        return sorted(found)

    def write_calibration(self, cal: Calibration) -> None:
        """Store ``cal`` atomically in ``<directory>/calibration.json`` with
        :func:`firmware.calibration_file.save_calibration` (its own versioned format)."""
        path = self.path(CALIBRATION_NAME)
        if not isinstance(cal, Calibration):  # checked here so nothing is touched
            raise StoreError(f"{path}: write_calibration needs a Calibration, got {cal!r}")
        self._remove_leftovers(path)  # save_calibration's temp files follow the same pattern
        save_calibration(cal, path)

    def read_calibration(self) -> Calibration | None:
        """The stored calibration, or None if there is none.

        A corrupt, truncated or newer-version file raises :class:`StoreError` (wrapping the
        :class:`~firmware.calibration_file.CalibrationFileError` of
        :func:`firmware.calibration_file.load_calibration` as ``__cause__``), so a caller of the
        store has one exception to handle for every bad file.
        """
        path = self.path(CALIBRATION_NAME)
        try:
            return load_calibration(path)
        except FileNotFoundError:
            return None
        except CalibrationFileError as exc:
            raise StoreError(str(exc)) from exc
