"""The calibration file: a :class:`~photonics.chips.calibration.Calibration` as a versioned
document.

:func:`save_calibration` writes it atomically and :func:`load_calibration` refuses, with
:class:`CalibrationFileError`, any file that is not exactly a valid calibration of a supported
version: never a half-loaded object. Both go through :mod:`firmware.documents`; this module maps
a calibration to the document's fields and back::

    {
      "schema": "pswitch.calibration",
      "version": 1,
      "chip_id": "...", "created": "<ISO 8601>",
      "p_pi_mW": [...], "bias_rad": [...], "a_ohm_per_mA2": [...], "c_ohm": [...],
      "crosstalk": null or rows, "rings": [{"lambda0_nm", "slope_nm_per_mW",
      "rms_residual_nm"}, ...], "phase_fitted": [true, ...],
      "extinction_db": null or [[bar dB or null, ...], [cross dB or null, ...]]
    }

Version 2 added ``extinction_db`` (a recirculating mesh's per-cell, per-state extinction; null
for a cell without a figure); a version 1 file reads with none.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from firmware.documents import ContentError, DocumentFormat, read_document, write_document
from photonics.chips.calibration import HEATER_FIELDS, RING_FIELDS, Calibration, RingTuning
from photonics.errors import PswitchError, SettingsError

#: The ``schema`` name written in and required of every calibration file.
SCHEMA_NAME = "pswitch.calibration"
#: The newest calibration file version this code reads and the one it writes.
SCHEMA_VERSION = 2


class CalibrationFileError(PswitchError):
    """A calibration file is corrupt, truncated, of an unknown schema or of a newer version."""


def _upgrade(version: int, body: dict[str, Any]) -> dict[str, Any]:
    """A version 1 body as version 2: no extinction figures."""
    return {**body, "extinction_db": None}


FORMAT = DocumentFormat(
    "calibration",
    SCHEMA_NAME,
    SCHEMA_VERSION,
    ("chip_id", "created", *HEATER_FIELDS, "crosstalk", "rings", "phase_fitted", "extinction_db"),
    CalibrationFileError,
    upgrade=_upgrade,
)


def save_calibration(cal: Calibration, path: str | os.PathLike[str]) -> None:
    """Write ``cal`` to ``path``, atomically (:func:`firmware.documents.write_atomically`).

    Until the rename an existing file at ``path`` is not touched; on any failure the temp file
    is removed and the error propagates.
    """
    if not isinstance(cal, Calibration):
        raise SettingsError(f"save_calibration needs a Calibration, got {type(cal).__name__}")
    body = {
        "chip_id": cal.chip_id,
        "created": cal.created,
        **{name: getattr(cal, name).tolist() for name in HEATER_FIELDS},
        "crosstalk": None if cal.crosstalk is None else cal.crosstalk.tolist(),
        "rings": [{n: getattr(r, n) for n in RING_FIELDS} for r in cal.rings],
        "phase_fitted": cal.phase_fitted.tolist(),
        "extinction_db": None
        if cal.extinction_db is None
        else [[None if math.isnan(x) else x for x in row] for row in cal.extinction_db.tolist()],
    }
    write_document(path, FORMAT, body)


def load_calibration(path: str | os.PathLike[str]) -> Calibration:
    """Read a calibration written by :func:`save_calibration`.

    Raises :class:`CalibrationFileError`, naming ``path`` and the problem, for a file that is
    not UTF-8 JSON (e.g. truncated), of another schema, of a newer version, with missing,
    unexpected, duplicate or mistyped fields, arrays of inconsistent lengths, non-finite or
    out-of-range values. An unreadable or missing file raises the ``OSError`` as is.
    """
    return read_document(path, FORMAT, _calibration)


def _number(where: str, value: Any) -> float:
    # bool is an int in Python but never a number in a calibration file
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ContentError(f"{where} must be a number, got {value!r}")
    try:
        x = float(value)
    except OverflowError:  # an integer too large for a float
        x = math.inf
    if not math.isfinite(x):
        raise ContentError(f"{where} must be finite, got {value!r}")
    return x


def _numbers(where: str, value: Any) -> list[float]:
    if not isinstance(value, list):
        raise ContentError(f"{where} must be a list of numbers, got {type(value).__name__}")
    return [_number(f"{where}[{i}]", v) for i, v in enumerate(value)]


def _calibration(body: dict[str, Any]) -> Calibration:
    """The calibration in a file's fields (types checked here, ranges by :class:`Calibration`)."""
    for key in ("chip_id", "created"):
        if not isinstance(body[key], str):
            raise ContentError(f"{key} must be a string, got {body[key]!r}")
    heaters = {name: _numbers(name, body[name]) for name in HEATER_FIELDS}
    lengths = {name: len(v) for name, v in heaters.items()}
    if len(set(lengths.values())) > 1:
        raise ContentError(f"per-heater arrays have inconsistent lengths {lengths}")
    n = lengths["p_pi_mW"]
    crosstalk = None
    if body["crosstalk"] is not None:
        if not isinstance(body["crosstalk"], list):
            raise ContentError(
                f"crosstalk must be null or a list of rows, got {body['crosstalk']!r}"
            )
        rows = [_numbers(f"crosstalk[{i}]", row) for i, row in enumerate(body["crosstalk"])]
        if len(rows) != n or any(len(row) != n for row in rows):
            shape = [len(row) for row in rows]
            raise ContentError(
                f"crosstalk must be {n} rows of {n} values, got rows of lengths {shape}"
            )
        crosstalk = np.array(rows, dtype=float).reshape(n, n)
    fitted = body["phase_fitted"]
    if not isinstance(fitted, list) or not all(isinstance(v, bool) for v in fitted):
        raise ContentError(f"phase_fitted must be a list of true/false, got {fitted!r}")
    if len(fitted) != n:
        raise ContentError(f"phase_fitted has {len(fitted)} values for {n} heaters")
    if not isinstance(body["rings"], list):
        raise ContentError(f"rings must be a list, got {body['rings']!r}")
    for i, ring in enumerate(body["rings"]):
        if not isinstance(ring, dict) or set(ring) != set(RING_FIELDS):
            fields_ = ", ".join(RING_FIELDS)
            raise ContentError(f"rings[{i}] must be an object with fields {fields_}, got {ring!r}")
    rings = [
        RingTuning(*(_number(f"rings[{i}].{f}", ring[f]) for f in RING_FIELDS))
        for i, ring in enumerate(body["rings"])
    ]
    extinction = body["extinction_db"]
    if extinction is not None:
        if not (
            isinstance(extinction, list)
            and len(extinction) == 2
            and all(isinstance(row, list) for row in extinction)
        ):
            raise ContentError(f"extinction_db must be null or two lists, got {extinction!r}")
        rows = [
            [
                math.nan if v is None else _number(f"extinction_db[{i}][{j}]", v)
                for j, v in enumerate(row)
            ]
            for i, row in enumerate(extinction)
        ]
        if len(rows[0]) != len(rows[1]):
            sizes = f"{len(rows[0])} and {len(rows[1])}"
            raise ContentError(f"extinction_db's rows have {sizes} values")
        extinction = np.array(rows, dtype=float)
    return Calibration(
        chip_id=body["chip_id"],
        created=body["created"],
        crosstalk=crosstalk,
        rings=tuple(rings),
        phase_fitted=np.array(fitted, dtype=bool),
        extinction_db=extinction,
        **{name: np.array(v, dtype=float) for name, v in heaters.items()},
    )
