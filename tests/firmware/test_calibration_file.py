"""Tests of firmware.calibration_file: exact round trips, refusal of bad files, atomic writes."""

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.calibration_file import (
    SCHEMA_NAME,
    SCHEMA_VERSION,
    CalibrationFileError,
    load_calibration,
    save_calibration,
)
from photonics.calibration.fits import (
    fit_crosstalk,
    fit_fringe,
    fit_heater_resistance,
    fit_ring_tuning,
)
from photonics.chips.calibration import Calibration, RingTuning, same_calibration
from photonics.errors import SettingsError
from tests.strategies import CREATED, seeds, small_calibration

finite = st.floats(allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=0, exclude_min=True, allow_infinity=False)


@st.composite
def calibrations(draw: st.DrawFn) -> Calibration:
    n = draw(st.integers(0, 5))
    heaters = {
        name: draw(st.lists(strategy, min_size=n, max_size=n))
        for name, strategy in (
            ("p_pi_mW", positive),
            ("bias_rad", finite),
            ("a_ohm_per_mA2", finite),
            ("c_ohm", positive),
        )
    }
    crosstalk = None
    if draw(st.booleans()):
        crosstalk = np.array(draw(st.lists(finite, min_size=n * n, max_size=n * n))).reshape(n, n)
        np.fill_diagonal(crosstalk, 0.0)
    rings = draw(st.lists(st.builds(RingTuning, finite, finite, st.floats(0, 1e300)), max_size=4))
    extinction = None
    if n and draw(st.booleans()):  # of the first m heaters' cells, NaN: no figure
        m = draw(st.integers(1, n))
        cells = draw(st.lists(positive | st.just(np.nan), min_size=2 * m, max_size=2 * m))
        extinction = np.array(cells).reshape(2, m)
    return Calibration(
        chip_id=draw(st.text(min_size=1, max_size=12)),
        created=draw(st.datetimes()).isoformat(),
        crosstalk=crosstalk,
        rings=tuple(rings),
        extinction_db=extinction,
        **heaters,
    )


@given(calibrations())
def test_calibration_file_round_trips_exactly(tmp_path_factory, cal: Calibration) -> None:
    path = tmp_path_factory.mktemp("rt") / "cal.json"
    save_calibration(cal, path)
    back = load_calibration(path)
    assert same_calibration(cal, back)
    assert back.chip_id == cal.chip_id
    for name in ("p_pi_mW", "bias_rad", "a_ohm_per_mA2", "c_ohm"):
        assert getattr(back, name).tobytes() == getattr(cal, name).tobytes()
    assert (back.crosstalk is None) == (cal.crosstalk is None)
    assert [tuple(r.__dict__.values()) for r in back.rings] == [
        tuple(r.__dict__.values()) for r in cal.rings
    ]


def test_file_names_its_schema_and_version(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    save_calibration(small_calibration(), path)
    doc = json.loads(path.read_text())
    assert doc["schema"] == SCHEMA_NAME == "pswitch.calibration"
    assert doc["version"] == SCHEMA_VERSION == 2
    assert doc["p_pi_mW"] == [21.4, 22.8, 1.34]


def test_every_truncation_of_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    save_calibration(small_calibration(), path)
    data = path.read_bytes()
    cut = tmp_path / "cut.json"
    for k in range(len(data)):
        cut.write_bytes(data[:k])
        with pytest.raises(CalibrationFileError, match=r"cut\.json: not valid JSON"):
            load_calibration(cut)


@given(calibrations(), st.data())
def test_any_truncation_of_any_file_is_refused(tmp_path_factory, cal, data) -> None:
    directory = tmp_path_factory.mktemp("trunc")
    save_calibration(cal, directory / "cal.json")
    raw = (directory / "cal.json").read_bytes()
    k = data.draw(st.integers(0, len(raw) - 1), label="prefix length")
    (directory / "cut.json").write_bytes(raw[:k])
    with pytest.raises(CalibrationFileError, match=r"cut\.json"):
        load_calibration(directory / "cut.json")


def saved_document(tmp_path: Path) -> dict:
    path = tmp_path / "cal.json"
    save_calibration(small_calibration(), path)
    return json.loads(path.read_text())


def write_json(tmp_path: Path, doc) -> Path:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    return path


def test_newer_version_is_refused(tmp_path: Path) -> None:
    doc = saved_document(tmp_path)
    doc["version"] = 3
    path = write_json(tmp_path, doc)
    with pytest.raises(CalibrationFileError, match=r"edited\.json: .*newer.*version 3 > 2"):
        load_calibration(path)


def test_a_version_1_file_loads_without_extinction(tmp_path: Path) -> None:
    doc = saved_document(tmp_path)
    doc["version"] = 1
    del doc["extinction_db"]
    back = load_calibration(write_json(tmp_path, doc))
    assert back.extinction_db is None
    assert same_calibration(back, small_calibration())


def test_extinction_is_stored_per_state_with_null_for_cells_without_a_figure(
    tmp_path: Path,
) -> None:
    ext = np.array([[31.5, np.nan], [40.25, np.nan]])
    with_ext = small_calibration(extinction_db=ext)
    path = tmp_path / "cal.json"
    save_calibration(with_ext, path)
    assert json.loads(path.read_text())["extinction_db"] == [[31.5, None], [40.25, None]]
    np.testing.assert_array_equal(load_calibration(path).extinction_db, ext)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ([[30.0]], "two lists"),
        ([[30.0], [30.0, 31.0]], "rows have 1 and 2 values"),
        ([[30.0], ["x"]], r"extinction_db\[1\]\[0\] must be a number"),
        ([[30.0], [-1.0]], "must be > 0 dB"),
        ([[30.0] * 4, [30.0] * 4], r"shape \(2, m <= 3\)"),
    ],
)
def test_bad_extinction_is_refused(tmp_path: Path, value, why: str) -> None:
    doc = saved_document(tmp_path)
    doc["extinction_db"] = value
    with pytest.raises(CalibrationFileError, match=why):
        load_calibration(write_json(tmp_path, doc))


def test_wrong_schema_is_refused(tmp_path: Path) -> None:
    doc = saved_document(tmp_path)
    doc["schema"] = "someone.else"
    with pytest.raises(CalibrationFileError, match=r"schema must be 'pswitch\.calibration'"):
        load_calibration(write_json(tmp_path, doc))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_non_finite_numbers_are_refused(tmp_path: Path, literal: str) -> None:
    path = tmp_path / "cal.json"
    save_calibration(small_calibration(), path)
    text = path.read_text()
    assert '"bias_rad": [0.0, ' in text
    path.write_text(text.replace('"bias_rad": [0.0, ', f'"bias_rad": [{literal}, '))
    with pytest.raises(CalibrationFileError, match=r"cal\.json: .*(non-finite|must be finite)"):
        load_calibration(path)


def _set(key, value):
    def edit(doc):
        doc[key] = value

    return edit


def _delete(key):
    def edit(doc):
        del doc[key]

    return edit


def _set_ring(field, value):
    def edit(doc):
        doc["rings"][0][field] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (_delete("c_ohm"), "missing field.*c_ohm"),
        (_delete("rings"), "missing field.*rings"),
        (_delete("version"), r"no version \(not a pswitch calibration\?\)"),
        (_set("extra", 1), "unexpected field.*extra"),
        (_set("version", "1"), "version must be an integer, got '1'"),
        (_set("version", True), "version must be an integer, got True"),
        (_set("version", 0), "unsupported version 0"),
        (_set("chip_id", 42), "chip_id must be a string, got 42"),
        (_set("created", "soon"), "ISO 8601 time, got 'soon'"),
        (_set("p_pi_mW", "21.4"), "p_pi_mW must be a list of numbers, got str"),
        (_set("bias_rad", [0.0, True, 1.0]), r"bias_rad\[1\] must be a number, got True"),
        (_set("c_ohm", [500.0, None, 1.0]), r"c_ohm\[1\] must be a number, got None"),
        (_set("a_ohm_per_mA2", [0.5, 0.5]), "inconsistent lengths"),
        (_set("p_pi_mW", [21.4, -22.8, 1.34]), r"p_pi_mW\[1\] must be > 0"),
        (_set("crosstalk", [[0.0, 0.1], [0.1, 0.0]]), "crosstalk must be 3 rows of 3 values"),
        (_set("crosstalk", [[1.0, 0, 0], [0, 0, 0], [0, 0, 0]]), r"crosstalk\[0, 0\] must be 0"),
        (_set("crosstalk", "none"), "crosstalk must be null or a list of rows"),
        (_set("rings", {}), "rings must be a list"),
        (_set("rings", [{"lambda0_nm": 1550.0}]), r"rings\[0\] must be an object with fields"),
        (_set_ring("slope_nm_per_mW", "fast"), r"rings\[0\].slope_nm_per_mW must be a number"),
        (_set_ring("rms_residual_nm", -1.0), "rms_residual_nm must be >= 0"),
        (_set("p_pi_mW", [21.4, 10**400, 1.0]), r"p_pi_mW\[1\] must be finite"),
    ],
)
def test_malformed_fields_are_refused(tmp_path: Path, edit, match) -> None:
    doc = saved_document(tmp_path)
    edit(doc)
    path = write_json(tmp_path, doc)
    with pytest.raises(CalibrationFileError, match=r"edited\.json: .*" + match):
        load_calibration(path)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"[1, 2, 3]", "top level must be a JSON object, got list"),
        (b'{"schema": "pswitch.calibration", "schema": "x"}', "duplicate field 'schema'"),
        (b'{"chip_id": "\xff"}', "not UTF-8"),
        (b"", "not valid JSON"),
        (b"\x00" * 64, "not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "edited.json"),
        (b'{"x": 1' + b"0" * 5000 + b"}", "edited.json"),
    ],
)
def test_corrupt_files_are_refused(tmp_path: Path, data: bytes, match: str) -> None:
    path = tmp_path / "edited.json"
    path.write_bytes(data)
    with pytest.raises(CalibrationFileError, match=match):
        load_calibration(path)


def test_a_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_calibration(tmp_path / "absent.json")


# ------------------------------------------------------------------------------------------------
# atomic writes


def test_save_leaves_only_the_target_behind(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    save_calibration(small_calibration(), path)
    save_calibration(small_calibration(chip_id="second"), path)  # overwrite
    assert os.listdir(tmp_path) == ["cal.json"]
    assert load_calibration(path).chip_id == "second"


def test_a_failed_rename_leaves_the_old_file_intact(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "cal.json"
    save_calibration(small_calibration(), path)
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        save_calibration(small_calibration(chip_id="new"), path)
    assert path.read_bytes() == before
    assert load_calibration(path).chip_id == "hex6-0042"
    assert os.listdir(tmp_path) == ["cal.json"]  # the temp file is cleaned up


def test_a_failed_write_leaves_the_old_file_intact(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "cal.json"
    save_calibration(small_calibration(), path)
    before = path.read_bytes()

    def broken_fsync(fd):
        raise OSError("I/O error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="I/O error"):
        save_calibration(small_calibration(chip_id="new"), path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["cal.json"]


def test_save_syncs_the_data_before_the_rename_and_the_directory_after(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "cal.json"
    save_calibration(small_calibration(), path)
    old = path.read_bytes()
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        if kind == "file":
            # the new data is complete in the temp file, and the target is still the old one
            assert load_calibration(path).chip_id == "hex6-0042"
            assert path.read_bytes() == old
        events.append(f"fsync-{kind}")
        real_fsync(fd)

    def replace(src, dst):
        assert Path(src).parent == tmp_path and Path(src).name != "cal.json"
        assert load_calibration(src).chip_id == "new"
        events.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    save_calibration(small_calibration(chip_id="new"), path)
    expected = ["fsync-file", "replace"] + (["fsync-dir"] if os.name == "posix" else [])
    assert events == expected
    assert load_calibration(path).chip_id == "new"


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_save_keeps_the_old_mode_or_uses_0644(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    save_calibration(small_calibration(), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    path.chmod(0o600)
    save_calibration(small_calibration(), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_save_refuses_what_is_not_a_calibration(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="needs a Calibration, got dict"):
        save_calibration({"chip_id": "x"}, tmp_path / "cal.json")  # type: ignore[arg-type]
    assert not (tmp_path / "cal.json").exists()


@given(seeds)
def test_a_fitted_calibration_round_trips(tmp_path_factory, seed: int) -> None:
    # end to end: fits of synthetic sweeps -> Calibration -> file -> identical Calibration
    rng = np.random.default_rng(seed)
    n = 3
    p_pi = rng.uniform(1, 30, n)
    bias = rng.uniform(0, 2 * np.pi, n)
    fits = []
    for k in range(n):
        p = np.linspace(0, 3 * p_pi[k], 151)
        fits.append(fit_fringe(p, 1.0 + np.cos(np.pi * p / p_pi[k] + bias[k])))
    current = np.linspace(0.5, 10, 20)
    res = fit_heater_resistance(current, current * 1e-3 * (0.5 * current**2 + 500))
    K = rng.uniform(-0.05, 0.2, (n, n))
    np.fill_diagonal(K, 0)
    phase = np.linspace(0, np.pi, 5)
    cal = Calibration(
        chip_id=f"chip-{seed}",
        p_pi_mW=[f.p_pi_mW for f in fits],
        bias_rad=[f.bias_rad for f in fits],
        a_ohm_per_mA2=[res.a_ohm_per_mA2] * n,
        c_ohm=[res.c_ohm] * n,
        crosstalk=fit_crosstalk(phase, K[:, :, None] * phase),
        rings=(fit_ring_tuning(phase, 1550 + 0.02 * phase),),
        created=CREATED,
    )
    np.testing.assert_allclose(cal.p_pi_mW, p_pi, rtol=1e-9)
    path = tmp_path_factory.mktemp("e2e") / "cal.json"
    save_calibration(cal, path)
    assert same_calibration(load_calibration(path), cal)


def test_phase_fitted_flags_round_trip_and_are_checked(tmp_path: Path) -> None:
    cal = small_calibration(phase_fitted=np.array([True, False, True]))
    path = tmp_path / "cal.json"
    save_calibration(cal, path)
    back = load_calibration(path)
    assert back.phase_fitted.tolist() == [True, False, True]
    assert same_calibration(cal, back)
    assert not same_calibration(cal, small_calibration())
    doc = json.loads(path.read_text())
    doc["phase_fitted"] = [1, 0, 1]
    path.write_text(json.dumps(doc))
    with pytest.raises(CalibrationFileError, match="phase_fitted must be a list of true/false"):
        load_calibration(path)
