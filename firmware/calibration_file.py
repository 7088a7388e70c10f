"""The calibration file: a :class:`~photonics.calibration.Calibration` as versioned JSON.

:func:`save_calibration` writes it atomically (:func:`firmware.documents.write_atomically`) and
:func:`load_calibration` refuses, with :class:`CalibrationFileError`, any file that is not
exactly a valid calibration of a supported version: never a half-loaded object.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from firmware.documents import write_atomically
from photonics.calibration import HEATER_FIELDS, RING_FIELDS, Calibration, RingTuning
from photonics.errors import InvalidInputError, PswitchError, SettingsError

#: The ``schema`` name written in and required of every calibration file.
SCHEMA_NAME = "pswitch.calibration"
#: The newest calibration file version this code reads and the one it writes.
SCHEMA_VERSION = 1


class CalibrationFileError(PswitchError):
    """A calibration file is corrupt, truncated, of an unknown schema or of a newer version."""


def _to_document(cal: Calibration) -> dict[str, Any]:
    return {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "chip_id": cal.chip_id,
        "created": cal.created,
        **{name: getattr(cal, name).tolist() for name in HEATER_FIELDS},
        "crosstalk": None if cal.crosstalk is None else cal.crosstalk.tolist(),
        "rings": [{n: getattr(r, n) for n in RING_FIELDS} for r in cal.rings],
        "phase_fitted": cal.phase_fitted.tolist(),
    }


def _encode(doc: dict[str, Any]) -> bytes:
    # one top-level key per line, values compact; json writes floats with repr, which round-trips
    # exactly. No trailing newline: then every proper prefix of the file is invalid JSON, so any
    # truncation is detected.
    lines = [f"  {json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in doc.items()]
    return ("{\n" + ",\n".join(lines) + "\n}").encode("ascii")


def save_calibration(cal: Calibration, path: str | os.PathLike[str]) -> None:
    """Write ``cal`` to ``path`` as JSON, atomically.

    The bytes go to a temp file in the same directory, which is flushed and fsync'ed, then
    renamed over ``path`` (``os.replace``), and the directory is fsync'ed so the rename itself
    is durable. Until the rename an existing file at ``path`` is not touched; on any failure
    the temp file is removed and the error propagates.
    """
    if not isinstance(cal, Calibration):
        raise SettingsError(f"save_calibration needs a Calibration, got {type(cal).__name__}")
    write_atomically(Path(path), _encode(_to_document(cal)))


class _ContentError(Exception):
    """Internal: what is wrong with a file's content (the caller adds the path)."""


def _reject_constant(name: str) -> float:
    raise _ContentError(f"non-finite number {name} (calibration values must be finite)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _ContentError(f"duplicate field {key!r}")
        out[key] = value
    return out


def _number(where: str, value: Any) -> float:
    # bool is an int in Python but never a number in a calibration file
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _ContentError(f"{where} must be a number, got {value!r}")
    try:
        x = float(value)
    except OverflowError:  # an integer too large for a float
        x = math.inf
    if not math.isfinite(x):
        raise _ContentError(f"{where} must be finite, got {value!r}")
    return x


def _numbers(where: str, value: Any) -> list[float]:
    if not isinstance(value, list):
        raise _ContentError(f"{where} must be a list of numbers, got {type(value).__name__}")
    return [_number(f"{where}[{i}]", v) for i, v in enumerate(value)]


_TOP_FIELDS = (
    "schema",
    "version",
    "chip_id",
    "created",
    *HEATER_FIELDS,
    "crosstalk",
    "rings",
    "phase_fitted",
)


def _from_document(doc: Any) -> Calibration:
    if not isinstance(doc, dict):
        raise _ContentError(f"top level must be a JSON object, got {type(doc).__name__}")
    schema = doc.get("schema")
    if schema != SCHEMA_NAME:
        raise _ContentError(f"schema must be {SCHEMA_NAME!r}, got {schema!r}")
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise _ContentError(f"version must be an integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise _ContentError(
            f"written by a newer pswitch: version {version} > {SCHEMA_VERSION}; upgrade pswitch"
        )
    if version < 1:
        raise _ContentError(f"unsupported version {version} (supported: 1 to {SCHEMA_VERSION})")
    missing = [k for k in _TOP_FIELDS if k not in doc]
    if missing:
        raise _ContentError(f"missing field(s) {', '.join(missing)}")
    extra = sorted(set(doc) - set(_TOP_FIELDS))
    if extra:
        raise _ContentError(f"unexpected field(s) {', '.join(extra)} for version {version}")
    for key in ("chip_id", "created"):
        if not isinstance(doc[key], str):
            raise _ContentError(f"{key} must be a string, got {doc[key]!r}")
    heaters = {name: _numbers(name, doc[name]) for name in HEATER_FIELDS}
    lengths = {name: len(v) for name, v in heaters.items()}
    if len(set(lengths.values())) > 1:
        raise _ContentError(f"per-heater arrays have inconsistent lengths {lengths}")
    crosstalk = None
    if doc["crosstalk"] is not None:
        if not isinstance(doc["crosstalk"], list):
            raise _ContentError(
                f"crosstalk must be null or a list of rows, got {doc['crosstalk']!r}"
            )
        crosstalk = [_numbers(f"crosstalk[{i}]", row) for i, row in enumerate(doc["crosstalk"])]
        n = lengths["p_pi_mW"]
        if len(crosstalk) != n or any(len(row) != n for row in crosstalk):
            shape = [len(row) for row in crosstalk]
            raise _ContentError(
                f"crosstalk must be {n} rows of {n} values, got rows of lengths {shape}"
            )
        crosstalk = np.array(crosstalk, dtype=float).reshape(n, n)
    fitted = doc["phase_fitted"]
    if not isinstance(fitted, list) or not all(isinstance(v, bool) for v in fitted):
        raise _ContentError(f"phase_fitted must be a list of true/false, got {fitted!r}")
    if len(fitted) != lengths["p_pi_mW"]:
        raise _ContentError(
            f"phase_fitted has {len(fitted)} values for {lengths['p_pi_mW']} heaters"
        )
    if not isinstance(doc["rings"], list):
        raise _ContentError(f"rings must be a list, got {doc['rings']!r}")
    for i, ring in enumerate(doc["rings"]):
        if not isinstance(ring, dict) or set(ring) != set(RING_FIELDS):
            fields_ = ", ".join(RING_FIELDS)
            raise _ContentError(f"rings[{i}] must be an object with fields {fields_}, got {ring!r}")
    try:
        rings = [
            RingTuning(*(_number(f"rings[{i}].{n}", ring[n]) for n in RING_FIELDS))
            for i, ring in enumerate(doc["rings"])
        ]
        return Calibration(
            chip_id=doc["chip_id"],
            created=doc["created"],
            crosstalk=crosstalk,
            rings=tuple(rings),
            phase_fitted=np.array(fitted, dtype=bool),
            **{name: np.array(v, dtype=float) for name, v in heaters.items()},
        )
    except InvalidInputError as exc:  # values of the right types but out of range
        raise _ContentError(str(exc)) from exc


def load_calibration(path: str | os.PathLike[str]) -> Calibration:
    """Read a calibration written by :func:`save_calibration`.

    Raises :class:`CalibrationFileError`, naming ``path`` and the problem, for a file that is
    not UTF-8 JSON (e.g. truncated), of another schema, of a newer version, with missing,
    unexpected, duplicate or mistyped fields, arrays of inconsistent lengths, non-finite or
    out-of-range values. An unreadable or missing file raises the ``OSError`` as is.
    """
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
        doc = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
        return _from_document(doc)
    except UnicodeDecodeError as exc:
        raise CalibrationFileError(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from exc
    except json.JSONDecodeError as exc:
        raise CalibrationFileError(
            f"{path}: not valid JSON, truncated or corrupt ({exc.msg} at line {exc.lineno} "
            f"column {exc.colno}, file of {len(raw)} bytes)"
        ) from exc
    except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
        raise CalibrationFileError(f"{path}: not a valid calibration ({exc})") from exc
    except (_ContentError, RecursionError) as exc:
        raise CalibrationFileError(f"{path}: {exc}") from exc
