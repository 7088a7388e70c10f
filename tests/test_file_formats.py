"""The project's three file formats (calibration, store document, bench configuration) share one
reader and writer (firmware.documents): files written before they did still load, the
calibration and store files are written byte for byte as before, and every format refuses a
bad file with the same message."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from firmware.calibration_file import CalibrationFileError, load_calibration, save_calibration
from firmware.store import Store, StoreError
from hil.bench_config import BenchConfig, Instrument
from photonics.chips.calibration import Calibration, RingTuning, same_calibration
from photonics.errors import SettingsError
from tests.strategies import CREATED

# Files written by pswitch at commit 8a79f83, before the formats shared a reader: bytes as is.
OLD_CALIBRATION = (
    b'{\n  "schema": "pswitch.calibration",\n  "version": 1,\n  "chip_id": "hex6-0042",\n'
    b'  "created": "2026-01-02T03:04:05.123456+00:00",\n'
    b'  "p_pi_mW": [21.4, 22.8, 0.3333333333333333],\n  "bias_rad": [-0.0, 3.1, 6.2],\n'
    b'  "a_ohm_per_mA2": [0.5, 0.45, 5e-324],\n  "c_ohm": [500.0, 512.5, 488.25],\n'
    b'  "crosstalk": [[0.0, 0.11, 0.002], [0.1, 0.0, 0.025], [0.0, 0.03, 0.0]],\n'
    b'  "rings": [{"lambda0_nm": 1550.12, "slope_nm_per_mW": 0.0184, "rms_residual_nm": 0.0001}],'
    b'\n  "phase_fitted": [true, false, true]\n}'
)
OLD_STORE_SCHEDULE = (
    b'{\n  "schema": 1,\n  "name": "schedule",\n  "document": {"dwell_s": 0.001, '
    b'"phases": [[0, 5], [1, 2]], "label": "caf\\u00e9", "off": null, "on": true}\n}'
)
OLD_BENCH = (
    b'{\n  "schema": "pswitch.bench",\n  "version": 1,\n'
    b'  "heater_driver": "ASRL/dev/pts/3::INSTR",\n  "power_meter": "TCPIP0::h::1::SOCKET",\n'
    b'  "laser": "TCPIP0::h::2::SOCKET",\n  "laser_model": "8164B",\n  "input_switch": "",\n'
    b'  "switch": "",\n  "ports": 8,\n  "mesh": "clements",\n  "chip_id": "chip",\n'
    b'  "ring_channels": [\n    16,\n    17\n  ],\n  "max_current_mA": 8.5,\n'
    b'  "power_budget_mW": null,\n  "channel_write_s": 0.0005,\n  "settle_s": 0.0001,\n'
    b'  "wavelength_nm": 1550.0,\n  "laser_power_mW": 1.0,\n  "timeout_s": 5.0\n}\n'
)

CALIBRATION = Calibration(
    chip_id="hex6-0042",
    p_pi_mW=[21.4, 22.8, 1 / 3],
    bias_rad=[-0.0, 3.1, 6.2],
    a_ohm_per_mA2=[0.5, 0.45, 5e-324],
    c_ohm=[500.0, 512.5, 488.25],
    created=CREATED,
    crosstalk=[[0.0, 0.11, 0.002], [0.1, 0.0, 0.025], [0.0, 0.03, 0.0]],
    rings=(RingTuning(1550.12, 0.0184, 1e-4),),
    phase_fitted=np.array([True, False, True]),
)
SCHEDULE = {
    "dwell_s": 1e-3,
    "phases": [[0, 5], [1, 2]],
    "label": "caf\u00e9",
    "off": None,
    "on": True,
}
BENCH = BenchConfig(  # version 1: one meter (N7745A at 8 ports), channel k on output k
    Instrument("Q8iv", "ASRL/dev/pts/3::INSTR"),
    (Instrument("N7745A", "TCPIP0::h::1::SOCKET"),),
    Instrument("8164B", "TCPIP0::h::2::SOCKET"),
    ring_channels=(16, 17),
    max_current_mA=8.5,
)


def test_files_written_before_the_shared_reader_still_load(tmp_path: Path) -> None:
    (tmp_path / "calibration.json").write_bytes(OLD_CALIBRATION)
    (tmp_path / "schedule.json").write_bytes(OLD_STORE_SCHEDULE)
    (tmp_path / "bench.json").write_bytes(OLD_BENCH)
    assert same_calibration(load_calibration(tmp_path / "calibration.json"), CALIBRATION)
    store = Store(tmp_path)
    assert same_calibration(store.read_calibration(), CALIBRATION)
    assert store.read("schedule") == SCHEDULE
    assert BenchConfig.load(tmp_path / "bench.json") == BENCH


def test_calibration_and_store_files_are_written_byte_for_byte_as_before(tmp_path) -> None:
    # the calibration file is now version 2 (a recirculating mesh's per-state extinction): the
    # same bytes but for the version and the new field, last
    save_calibration(CALIBRATION, tmp_path / "cal.json")
    version_2 = OLD_CALIBRATION.replace(b'"version": 1', b'"version": 2')[:-2]
    assert (tmp_path / "cal.json").read_bytes() == version_2 + b',\n  "extinction_db": null\n}'
    store = Store(tmp_path)
    store.write("schedule", SCHEDULE)
    assert store.path("schedule").read_bytes() == OLD_STORE_SCHEDULE
    # the bench configuration is now version 2 (instruments by model, meters wired by
    # channel); a version 1 file reads as the same bench (above)
    BENCH.save(tmp_path / "bench.json")
    written = json.loads((tmp_path / "bench.json").read_bytes())
    assert written["version"] == 2 and written["meters"][0]["model"] == "N7745A"
    assert BenchConfig.load(tmp_path / "bench.json") == BENCH


def calibration_file(path: Path) -> tuple[Path, str]:
    save_calibration(CALIBRATION, path)
    return path, "version"


def store_file(path: Path) -> tuple[Path, str]:
    Store(path.parent).write("schedule", SCHEDULE)
    return path.parent / "schedule.json", "schema"


def bench_file(path: Path) -> tuple[Path, str]:
    BENCH.save(path)
    return path, "version"


FORMATS = [
    (calibration_file, load_calibration, CalibrationFileError),
    (store_file, lambda path: Store(path.parent).read("schedule"), StoreError),
    (bench_file, BenchConfig.load, SettingsError),
]


@pytest.mark.parametrize(("write", "read", "error"), FORMATS)
@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda doc, key: doc | {key: 99},
            r"written by a newer pswitch: (schema )?version 99 > [12]; ",
        ),
        (
            lambda doc, key: doc | {key: 0},
            r"unsupported (schema )?version 0 \(supported: 1 to [12]\)",
        ),
        (lambda doc, key: doc | {"x": float("nan")}, r"non-finite number NaN"),
        (lambda doc, key: json.dumps(doc)[:-9], r"not valid JSON, truncated or corrupt \("),
        (lambda doc, key: json.dumps(doc)[:-1] + ', "schema": 1}', r"duplicate field 'schema'"),
        (lambda doc, key: doc | {"x": 1}, r"unexpected field\(s\) x$"),
    ],
)
def test_every_format_refuses_a_bad_file_with_the_same_message(
    tmp_path: Path, write, read, error, edit, problem
) -> None:
    path, version_key = write(tmp_path / "file.json")
    edited = edit(json.loads(path.read_bytes()), version_key)
    path.write_text(edited if isinstance(edited, str) else json.dumps(edited))
    with pytest.raises(error, match=f"^{re.escape(str(path))}: {problem}"):
        read(path)
