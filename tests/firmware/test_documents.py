"""Tests of firmware.documents on formats of its own: both header shapes, exact round trips,
the reader's refusals, the writer's checks, leftover temp files and removal. The real formats
(calibration, store, bench configuration) are checked together in tests/test_file_formats.py;
crash safety of the atomic write in test_calibration_file.py and test_store.py."""

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.documents import (
    ContentError,
    DocumentFormat,
    read_document,
    remove_document,
    write_document,
)
from photonics.errors import PswitchError, SettingsError
from tests.strategies import json_values, same_json


class NoteError(PswitchError):
    """The error of the test formats."""


NAMED = DocumentFormat("note", "test.note", 3, ("text", "values"), NoteError, frozenset({"values"}))
UNNAMED = DocumentFormat("note", None, 2, ("text", "values"), NoteError)


def as_is(body: dict) -> dict:
    return body


@pytest.mark.parametrize("fmt", [NAMED, UNNAMED])
@given(text=st.text(), values=json_values)
def test_bodies_round_trip_exactly(tmp_path_factory, fmt, text, values) -> None:
    path = tmp_path_factory.mktemp("rt") / "note.json"
    write_document(path, fmt, {"text": text, "values": values})
    back = read_document(path, fmt, as_is)
    assert same_json(back, {"text": text, "values": values})


def test_both_header_shapes_are_written_first_one_field_a_line(tmp_path: Path) -> None:
    path = tmp_path / "note.json"
    write_document(path, NAMED, {"text": "x", "values": [1, 2.5]})
    assert path.read_bytes() == (
        b'{\n  "schema": "test.note",\n  "version": 3,\n  "text": "x",\n  "values": [1, 2.5]\n}'
    )
    write_document(path, UNNAMED, {"text": "caf\u00e9", "values": None})
    assert path.read_bytes() == (b'{\n  "schema": 2,\n  "text": "caf\\u00e9",\n  "values": null\n}')


def test_optional_fields_may_be_left_out(tmp_path: Path) -> None:
    path = tmp_path / "note.json"
    write_document(path, NAMED, {"text": "x"})
    assert read_document(path, NAMED, as_is) == {"text": "x"}
    with pytest.raises(NoteError, match=r"refusing to write: missing field\(s\) values"):
        write_document(path, UNNAMED, {"text": "x"})


def write_json(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("fmt", "doc", "problem"),
    [
        (NAMED, {"schema": "test.note", "version": 4, "text": ""}, "newer pswitch: version 4 > 3"),
        (UNNAMED, {"schema": 3, "text": "", "values": 0}, "newer pswitch: schema version 3 > 2"),
        (NAMED, {"schema": "x", "version": 1}, "not a pswitch note: schema must be 'test.note'"),
        (NAMED, {"version": 1}, "schema must be 'test.note', got None"),
        (NAMED, {"schema": "test.note"}, r"no version \(not a pswitch note\?\)"),
        (UNNAMED, {"text": ""}, r"no schema version \(not a pswitch note\?\)"),
        (NAMED, {"schema": "test.note", "version": 1.0}, "version must be an integer, got 1.0"),
        (UNNAMED, {"schema": False}, "schema version must be an integer, got False"),
        (NAMED, {"schema": "test.note", "version": -1}, r"unsupported version -1 \(supported"),
        (UNNAMED, {"schema": 1, "values": 0}, r"missing field\(s\) text"),
        (NAMED, {"schema": "test.note", "version": 2, "x": 0}, r"missing field\(s\) text"),
        (UNNAMED, {"schema": 2, "text": "", "values": 0, "x": 0}, r"unexpected field\(s\) x"),
        (UNNAMED, {"schema": 1, "version": 1, "text": "", "values": 0}, r"field\(s\) version"),
        (NAMED, None, "top level must be a JSON object, got NoneType"),
    ],
)
def test_bad_headers_and_fields_are_refused(tmp_path: Path, fmt, doc, problem) -> None:
    path = write_json(tmp_path / "bad.json", doc)
    with pytest.raises(NoteError, match=r"bad\.json: .*" + problem):
        read_document(path, fmt, as_is)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"schema": "test.note", "version": 1, "text": "", "text": ""}', "duplicate field 'text'"),
        ('{"schema": "test.note", "version": 1, "text": NaN}', "non-finite number NaN"),
        ('{"schema": "test.note", "version": 1, "text": 1e400}', "number 1e400 is out of range"),
        ('{"schema": "test.note", "version": 1', "not valid JSON, truncated or corrupt"),
        ('{"schema": "test.note", "version": 1' + "1" * 5000 + "}", "not a valid note"),
        ("[" * 100_000 + "]" * 100_000, "maximum recursion depth exceeded"),
    ],
)
def test_corrupt_files_are_refused(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(NoteError, match=r"bad\.json: " + problem):
        read_document(path, NAMED, as_is)


def test_what_the_builder_refuses_names_the_file_and_nothing_else_is_caught(tmp_path) -> None:
    path = tmp_path / "note.json"
    write_document(path, NAMED, {"text": "x", "values": -1})

    def positive(body: dict) -> int:
        if not isinstance(body["values"], int):
            raise ContentError(f"values must be an integer, got {body['values']!r}")
        if body["values"] < 0:
            raise SettingsError(f"values must be >= 0, got {body['values']}")
        return body["values"]

    with pytest.raises(NoteError, match=r"note\.json: values must be >= 0, got -1"):
        read_document(path, NAMED, positive)
    write_document(path, NAMED, {"text": "x", "values": "many"})
    with pytest.raises(NoteError, match=r"note\.json: values must be an integer, got 'many'"):
        read_document(path, NAMED, positive)
    with pytest.raises(KeyError):  # a builder's bug is not a bad file
        read_document(path, NAMED, lambda body: body["absent"])
    with pytest.raises(FileNotFoundError):
        read_document(tmp_path / "absent.json", NAMED, as_is)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"text": "x", "values": 0, "x": 1}, r"unexpected field\(s\) x"),
        ({"text": float("nan")}, r"text is nan \(numbers must be finite\)"),
        ({"text": "", "values": {"a": [1, {2: 3}]}}, r"values\['a'\]\[1\] has a non-string key 2"),
        ({"text": "", "values": {1, 2}}, "values is a set, which JSON cannot hold"),
    ],
)
def test_what_json_cannot_hold_is_refused_and_the_old_file_stays(tmp_path, body, problem):
    path = tmp_path / "note.json"
    write_document(path, NAMED, {"text": "old"})
    before = path.read_bytes()
    with pytest.raises(NoteError, match=r"note\.json: refusing to write: " + problem):
        write_document(path, NAMED, body)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["note.json"]


def test_a_format_checks_its_own_settings() -> None:
    with pytest.raises(SettingsError, match="version must be an integer >= 1, got 0"):
        DocumentFormat("note", "test.note", 0, ("text",), NoteError)
    with pytest.raises(SettingsError, match="must not repeat the header's"):
        DocumentFormat("note", None, 1, ("schema", "text"), NoteError)


def test_leftovers_of_a_killed_writer_go_with_the_next_write_and_with_removal(tmp_path) -> None:
    path = tmp_path / "note.json"
    (tmp_path / ".note.json.k1l2d3.tmp").write_text('{\n  "schema": "test.no')
    (tmp_path / ".other.json.k1l2d3.tmp").write_text("")
    write_document(path, NAMED, {"text": "x"})
    assert sorted(os.listdir(tmp_path)) == [".other.json.k1l2d3.tmp", "note.json"]
    (tmp_path / ".note.json.a1b2c3.tmp").write_text("")
    remove_document(path)
    assert os.listdir(tmp_path) == [".other.json.k1l2d3.tmp"]
    remove_document(path)  # absent: nothing to do
