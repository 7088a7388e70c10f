"""The switch controller's non-volatile store: named JSON documents in one directory.

Each document lives in ``<directory>/<name>.json`` (names match ``[a-z][a-z0-9_-]*``, at most
64 characters), for example ``configuration`` (the last applied configuration) or ``schedule``.
A file holds::

    {
      "schema": 1,
      "name": "configuration",
      "document": {...}
    }

where ``schema`` is :data:`STORE_SCHEMA`, the store's file-format version. Files are written and
read by :mod:`firmware.documents`, the project's rule for persistent state:

- :meth:`Store.write` is atomic: a reader, or the controller after a crash or power cut, sees
  the old document or the new one, never a mix. A truncated file is always detected, never read
  as a shorter document.
- :meth:`Store.read` refuses with :class:`StoreError`, naming the file and the problem, a file
  that is not JSON (corrupt, truncated), has no schema version or a newer one, is stored under
  another name, or whose document is not a JSON object. Nothing is ever half-read.

A writer killed mid-write leaves at most a temp file ``.<name>.json.<random>.tmp``, which
:meth:`Store.read` and :meth:`Store.names` ignore and the next write of that name removes. The
store assumes one writing process (the controller).

The chip calibration is the one document in another format: :meth:`Store.write_calibration` and
:meth:`Store.read_calibration` keep ``<directory>/calibration.json`` in the versioned format of
:mod:`firmware.calibration_file`, so the name ``calibration`` is reserved for them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from firmware.calibration_file import CalibrationFileError, load_calibration, save_calibration
from firmware.documents import (
    ContentError,
    DocumentFormat,
    fsync_directory,
    read_document,
    remove_document,
    write_atomically,
    write_document,
)
from photonics.chips.calibration import Calibration
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


class StoreError(PswitchError):
    """A store file is corrupt, truncated, of a missing or newer schema version, or not a JSON
    object; or a name or document cannot be stored. The message names the file and the problem."""


#: The store's files keep their header of version 1: ``schema`` holds the version, no name.
FORMAT = DocumentFormat("store file", None, STORE_SCHEMA, ("name", "document"), StoreError)


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


def _document(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """The document of a store file's fields, which must be stored under ``name``."""
    if body["name"] != name:  # e.g. a file copied or renamed by hand
        raise ContentError(f"holds document {body['name']!r}, not {name!r}")
    document = body["document"]
    if not isinstance(document, dict):
        raise ContentError(f"document must be a JSON object, got {type(document).__name__}")
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

    def write(self, name: str, document: dict[str, Any]) -> None:
        """Store ``document`` (a JSON object: dicts with string keys, lists, tuples, strings,
        ints, finite floats, bools, None) under ``name``, atomically.

        Floats read back bit-exact (``repr`` round-trips); tuples read back as lists. A
        document JSON cannot hold exactly (non-finite float, non-string key, other types,
        nesting deeper than 100) is refused with :class:`StoreError` before anything is
        written, so the previous document stays.
        """
        path = self._document_path(name)
        if not isinstance(document, dict):
            raise StoreError(
                f"{path}: refusing to write: the document must be a JSON object (dict), got "
                f"{type(document).__name__}; nothing written"
            )
        write_document(path, FORMAT, {"name": name, "document": document})

    def read(self, name: str) -> dict[str, Any] | None:
        """The document stored under ``name``, or None if there is none.

        Raises :class:`StoreError`, naming the file and the problem, for a file that is not
        UTF-8 JSON (corrupt or truncated), has a missing or newer schema version, holds another
        name, has missing, unexpected or duplicate fields, non-finite numbers, or a document
        that is not a JSON object.
        """
        path = self._document_path(name)
        try:
            return read_document(path, FORMAT, lambda body: _document(name, body))
        except FileNotFoundError:
            return None

    def remove(self, name: str) -> None:
        """Delete document ``name`` (any name, ``calibration`` included); absent is fine."""
        remove_document(self.path(name))

    def read_bytes(self, name: str) -> bytes | None:
        """The bytes of document ``name``'s file (any name, ``calibration`` included), or None
        when there is none: what :meth:`restore_bytes` can put back."""
        try:
            return self.path(name).read_bytes()
        except FileNotFoundError:
            return None

    def restore_bytes(self, name: str, data: bytes | None) -> None:
        """Give document ``name``'s file the bytes ``data`` (from :meth:`read_bytes`; None: no
        file) back, atomically; nothing is written when it holds them already."""
        if self.read_bytes(name) == data:
            return
        if data is None:
            self.remove(name)
        else:
            write_atomically(self.path(name), data)

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
