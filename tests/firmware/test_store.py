"""Tests of firmware.store: round trips, refusal of bad files, names and documents, and the kill
test: a writer process SIGKILLed at random moments must never leave a store that reads as
anything but one complete document it wrote."""

import json
import math
import os
import select
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.calibration_file import CalibrationFileError
from firmware.store import MAX_NAME_LENGTH, STORE_SCHEMA, Store, StoreError
from photonics.chips.calibration import Calibration, RingTuning, same_calibration
from photonics.errors import PswitchError
from tests.strategies import CREATED, json_values, same_json, small_calibration

documents = st.dictionaries(st.text(max_size=8), json_values, max_size=6)


def temp_files(directory: Path, name: str) -> set[str]:
    return {p.name for p in directory.glob(f".{name}.json.*.tmp")}


# ------------------------------------------------------------------------------------------------
# round trips and the file format


@given(documents)
def test_documents_round_trip_exactly(tmp_path_factory, document) -> None:
    store = Store(tmp_path_factory.mktemp("rt"))
    store.write("configuration", document)
    back = store.read("configuration")
    assert same_json(back, document)
    assert back is not document
    # a second store on the same directory (a restarted controller) reads the same
    assert same_json(Store(store.directory).read("configuration"), document)


def test_floats_round_trip_bit_exact(tmp_path: Path) -> None:
    values = [0.1, -0.0, 5e-324, 1.7976931348623157e308, 1 / 3, math.pi, 2.0**-1074, 1e22]
    store = Store(tmp_path)
    store.write("schedule", {"dwell_s": values, "nested": {"x": values[::-1]}})
    back = store.read("schedule")
    assert [v.hex() for v in back["dwell_s"]] == [v.hex() for v in values]
    assert [v.hex() for v in back["nested"]["x"]] == [v.hex() for v in values[::-1]]


def test_tuples_read_back_as_lists(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write("schedule", {"phases": (1, (2.5, "x"))})
    assert same_json(store.read("schedule"), {"phases": [1, [2.5, "x"]]})


def test_overwrite_names_remove_and_absent(tmp_path: Path) -> None:
    store = Store(tmp_path / "a" / "b")  # created with its parents
    assert store.directory.is_dir()
    assert store.names() == []
    assert store.read("configuration") is None
    store.write("schedule", {"v": 1})
    store.write("configuration", {"v": 1})
    store.write("configuration", {"v": 2})
    assert store.read("configuration") == {"v": 2}
    assert store.read("schedule") == {"v": 1}
    assert store.names() == ["configuration", "schedule"]
    store.remove("configuration")
    assert store.read("configuration") is None
    assert store.names() == ["schedule"]
    store.remove("configuration")  # absent: nothing to do
    assert store.names() == ["schedule"]
    assert sorted(p.name for p in store.directory.iterdir()) == ["schedule.json"]


def test_file_format(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write("configuration", {"ports": [0, 1], "label": "caf\u00e9"})
    raw = (tmp_path / "configuration.json").read_bytes()
    assert raw.isascii()
    assert raw.endswith(b"}")  # no trailing newline: see the truncation tests
    assert json.loads(raw) == {
        "schema": STORE_SCHEMA,
        "name": "configuration",
        "document": {"ports": [0, 1], "label": "caf\u00e9"},
    }
    assert STORE_SCHEMA == 1


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="POSIX file modes")
def test_new_files_are_0644_and_overwrites_keep_the_mode(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write("configuration", {"v": 1})
    path = tmp_path / "configuration.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    path.chmod(0o600)
    store.write("configuration", {"v": 2})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert store.read("configuration") == {"v": 2}


def test_a_file_in_place_of_the_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(StoreError, match=r"f: exists but is not a directory"):
        Store(tmp_path / "f")
    assert issubclass(StoreError, PswitchError)


# ------------------------------------------------------------------------------------------------
# truncation: every proper prefix of a file is refused


def test_every_truncation_of_a_file_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path)
    document = {"version": 7, "values": [i / 7 for i in range(60)], "nested": {"a": [1, {}]}}
    store.write("configuration", document)
    path = tmp_path / "configuration.json"
    raw = path.read_bytes()
    for k in range(len(raw)):
        path.write_bytes(raw[:k])
        with pytest.raises(StoreError, match=r"configuration\.json: not valid JSON"):
            store.read("configuration")
    path.write_bytes(raw)
    assert same_json(store.read("configuration"), document)


@given(documents, st.data())
def test_any_truncation_of_any_file_is_refused(tmp_path_factory, document, data) -> None:
    store = Store(tmp_path_factory.mktemp("trunc"))
    store.write("schedule", document)
    path = store.directory / "schedule.json"
    raw = path.read_bytes()
    cuts = data.draw(st.lists(st.integers(0, len(raw) - 1), min_size=1, max_size=20))
    for k in cuts:
        path.write_bytes(raw[:k])
        with pytest.raises(StoreError, match=r"schedule\.json"):
            store.read("schedule")


# ------------------------------------------------------------------------------------------------
# refused files


def saved_text(store: Store) -> str:
    store.write("configuration", {"ports": [0, 1], "power_mW": 1.5})
    return (store.directory / "configuration.json").read_text()


def _edit(key, value):
    def edit(wrapper):
        wrapper[key] = value
        return json.dumps(wrapper)

    return edit


def _drop(key):
    def edit(wrapper):
        del wrapper[key]
        return json.dumps(wrapper)

    return edit


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (_edit("schema", 2), r"newer pswitch: schema version 2 > 1"),
        (_edit("schema", 10**6), r"newer pswitch"),
        (_drop("schema"), r"no schema version"),
        (_edit("schema", "1"), r"schema version must be an integer, got '1'"),
        (_edit("schema", True), r"schema version must be an integer, got True"),
        (_edit("schema", 1.0), r"schema version must be an integer"),
        (_edit("schema", 0), r"unsupported schema version 0"),
        (_edit("name", "schedule"), r"holds document 'schedule', not 'configuration'"),
        (_drop("name"), r"missing field\(s\) name"),
        (_drop("document"), r"missing field\(s\) document"),
        (_edit("extra", 1), r"unexpected field\(s\) extra"),
        (_edit("document", [1, 2]), r"document must be a JSON object, got list"),
        (_edit("document", None), r"document must be a JSON object, got NoneType"),
        (lambda w: json.dumps([w]), r"top level must be a JSON object, got list"),
        (lambda w: "3", r"top level must be a JSON object, got int"),
        (lambda w: "", r"not valid JSON"),
        (lambda w: "{}\n{}", r"not valid JSON"),
        (lambda w: json.dumps(w).replace("1.5", "NaN"), r"non-finite number NaN"),
        (lambda w: json.dumps(w).replace("1.5", "-Infinity"), r"non-finite number -Infinity"),
        (lambda w: json.dumps(w).replace("1.5", "1e999"), r"number 1e999 is out of range"),
        (lambda w: json.dumps(w).replace("}}", ', "ports": []}}'), r"duplicate field 'ports'"),
        (lambda w: json.dumps(w).replace("1.5", "9" * 5000), r"not a valid store file"),
        (lambda w: "[" * 100_000 + "]" * 100_000, r"recursion depth exceeded"),
    ],
)
def test_bad_files_are_refused_naming_the_file(tmp_path: Path, edit, problem) -> None:
    store = Store(tmp_path)
    wrapper = json.loads(saved_text(store))
    path = tmp_path / "configuration.json"
    path.write_text(edit(wrapper))
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"configuration\.json: .*" + problem):
        store.read("configuration")
    assert path.read_bytes() == before  # reading never "repairs" or touches the file


def test_non_utf8_file_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path)
    path = tmp_path / "configuration.json"
    path.write_bytes(saved_text(store).encode().replace(b"ports", b"p\xffrts"))
    with pytest.raises(StoreError, match=r"configuration\.json: not UTF-8"):
        store.read("configuration")


def test_the_error_chain_keeps_the_cause(tmp_path: Path) -> None:
    store = Store(tmp_path)
    (tmp_path / "configuration.json").write_bytes(saved_text(store).encode()[:-1])
    with pytest.raises(StoreError) as info:
        store.read("configuration")
    assert isinstance(info.value.__cause__, json.JSONDecodeError)
    assert str(tmp_path / "configuration.json") in str(info.value)


# ------------------------------------------------------------------------------------------------
# refused names and documents


BAD_NAMES = [
    "",
    "A",
    "Configuration",
    "1st",
    "_x",
    "-x",
    "a.b",
    "a.json",
    "a/b",
    "../etc",
    "a b",
    "a\n",
    "caf\u00e9",
    "x" * (MAX_NAME_LENGTH + 1),
    None,
    3,
    b"schedule",
]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_refused(tmp_path: Path, name) -> None:
    store = Store(tmp_path / "store")
    with pytest.raises(StoreError, match=r"bad document name"):
        store.write(name, {"v": 1})
    with pytest.raises(StoreError, match=r"bad document name"):
        store.read(name)
    with pytest.raises(StoreError, match=r"bad document name"):
        store.remove(name)
    assert list(tmp_path.rglob("*")) == [tmp_path / "store"]  # nothing written anywhere


@pytest.mark.parametrize("name", ["a", "x" * MAX_NAME_LENGTH, "ring_lock-2", "z9"])
def test_good_names_are_accepted(tmp_path: Path, name: str) -> None:
    store = Store(tmp_path)
    store.write(name, {"name": name})
    assert store.read(name) == {"name": name}
    assert store.names() == [name]


@given(st.text(max_size=12))
def test_names_match_the_pattern_exactly(tmp_path_factory, name: str) -> None:
    store = Store(tmp_path_factory.mktemp("names"))
    ok = (
        name != ""
        and "a" <= name[0] <= "z"
        and all(c in "abcdefghijklmnopqrstuvwxyz0123456789_-" for c in name)
    )
    if ok and name != "calibration":
        store.write(name, {})
        assert store.names() == [name]
    elif not ok:
        with pytest.raises(StoreError, match=r"bad document name"):
            store.write(name, {})
        assert store.names() == []


class Unjsonable:
    pass


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([1, 2], r"must be a JSON object \(dict\), got list"),
        (None, r"must be a JSON object \(dict\), got NoneType"),
        ("{}", r"must be a JSON object \(dict\), got str"),
        ({"a": math.nan}, r"document\['a'\] is nan \(numbers must be finite\)"),
        ({"a": [1.0, math.inf]}, r"document\['a'\]\[1\] is inf"),
        ({"a": {"b": [-math.inf]}}, r"document\['a'\]\['b'\]\[0\] is -inf"),
        ({"a": np.float64("nan")}, r"is nan"),
        ({1: "x"}, r"non-string key 1"),
        ({"a": {None: 1}}, r"document\['a'\] has a non-string key None"),
        ({"a": {1, 2}}, r"document\['a'\] is a set"),
        ({"a": b"x"}, r"is a bytes"),
        ({"a": Unjsonable()}, r"is a Unjsonable"),
        ({"a": np.int64(3)}, r"is a int64"),
        ({"a": 10**5000}, r"limit \(4300 digits\) for integer string conversion"),
    ],
)
def test_bad_documents_are_refused_and_the_old_one_stays(tmp_path: Path, document, problem):
    store = Store(tmp_path)
    store.write("configuration", {"v": 1})
    path = tmp_path / "configuration.json"
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"configuration\.json: refusing to write: .*" + problem):
        store.write("configuration", document)
    assert path.read_bytes() == before
    assert store.read("configuration") == {"v": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["configuration.json"]  # no temp file


def test_cycles_and_deep_nesting_are_refused(tmp_path: Path) -> None:
    store = Store(tmp_path)
    cyclic: dict = {"a": []}
    cyclic["a"].append(cyclic)
    with pytest.raises(StoreError, match=r"nested deeper than 100 levels"):
        store.write("configuration", cyclic)
    deep: list = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(StoreError, match=r"nested deeper than 100 levels"):
        store.write("configuration", {"a": deep})
    assert store.names() == []
    ok: list = []
    for _ in range(98):
        ok = [ok]
    store.write("configuration", {"a": ok})  # document -> "a" -> 98 lists: 100 levels
    assert store.read("configuration") == {"a": ok}


# ------------------------------------------------------------------------------------------------
# leftover temp files of a killed writer


def test_leftover_temp_files_are_ignored_and_cleaned_by_the_next_write(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write("configuration", {"v": 1})
    (tmp_path / ".configuration.json.k1l2d3.tmp").write_text('{\n  "schema": 1,\n  "na')
    (tmp_path / ".configuration.json.abcdef.tmp").write_text("")
    (tmp_path / ".schedule.json.abcdef.tmp").write_text("{")
    (tmp_path / "notes.txt").write_text("not a document")
    assert store.names() == ["configuration"]
    assert store.read("configuration") == {"v": 1}
    assert store.read("schedule") is None
    store.write("configuration", {"v": 2})
    assert temp_files(tmp_path, "configuration") == set()
    assert temp_files(tmp_path, "schedule") == {".schedule.json.abcdef.tmp"}  # not its name
    store.write("schedule", {"v": 1})
    assert temp_files(tmp_path, "schedule") == set()
    assert store.names() == ["configuration", "schedule"]
    assert (tmp_path / "notes.txt").exists()


# ------------------------------------------------------------------------------------------------
# calibration


def test_calibration_round_trips_through_the_store(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.read_calibration() is None
    cal = small_calibration()
    store.write_calibration(cal)
    back = store.read_calibration()
    assert same_calibration(back, cal)
    assert store.names() == ["calibration"]
    assert json.loads((tmp_path / "calibration.json").read_text())["chip_id"] == "hex6-0042"
    store.write_calibration(small_calibration(chip_id="other"))
    assert store.read_calibration().chip_id == "other"
    store.remove("calibration")
    assert store.read_calibration() is None


def test_calibration_name_is_reserved_for_the_calibration_format(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with pytest.raises(StoreError, match=r"calibration\.json: .*use write_calibration"):
        store.write("calibration", {"v": 1})
    store.write_calibration(small_calibration())
    with pytest.raises(StoreError, match=r"use write_calibration / read_calibration"):
        store.read("calibration")
    with pytest.raises(StoreError, match=r"needs a Calibration, got \{'v': 1\}"):
        store.write_calibration({"v": 1})
    assert same_calibration(store.read_calibration(), small_calibration())


def test_bad_calibration_files_raise_store_error(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write_calibration(small_calibration())
    path = tmp_path / "calibration.json"
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(StoreError, match=r"calibration\.json: not valid JSON") as info:
        store.read_calibration()
    assert isinstance(info.value.__cause__, CalibrationFileError)
    doc = json.loads(raw)
    doc["version"] = 3
    path.write_text(json.dumps(doc))
    with pytest.raises(StoreError, match=r"calibration\.json: .*newer"):
        store.read_calibration()


def test_write_calibration_cleans_its_leftover_temp_files(tmp_path: Path) -> None:
    store = Store(tmp_path)
    (tmp_path / ".calibration.json.x1y2z3.tmp").write_text('{\n  "schema": "pswitch.calib')
    assert store.names() == []
    assert store.read_calibration() is None
    store.write_calibration(small_calibration())
    assert temp_files(tmp_path, "calibration") == set()
    assert same_calibration(store.read_calibration(), small_calibration())


# ------------------------------------------------------------------------------------------------
# the kill test
#
# Spawning one Python per kill would cost ~1.2 s of imports each (numba, scipy), so one helper
# process (started with Popen) imports the store once and forks a fresh writer per round. Each
# writer is a separate process that the test SIGKILLs, exactly like a controller dying mid-write;
# the helper reaps it and reports its exit status, so the test reads the store only once the
# writer is certainly dead (and checks it died of SIGKILL, not of an error).

DOC_NAME = "configuration"


def version_document(version: int) -> dict:
    """A large document whose every value follows from ``version`` (sizes alternate with its
    parity), so a mix of two versions or a truncated one cannot pass for a written one."""
    n = 3000 if version % 2 else 1500
    return {
        "version": version,
        "values": [(version * 1_000_003 + i) / 7 for i in range(n)],
        "text": f"{version:08x}" * (20 * n),  # bulk bytes: make write+fsync a large share
        "meta": {"n": n, "odd": bool(version % 2)},
    }


def version_calibration(version: int) -> Calibration:
    """A calibration whose every value follows from ``version`` (chip_id ``v<version>``)."""
    n = 50 if version % 2 else 30
    i = np.arange(n)
    crosstalk = ((version % 1000) + np.add.outer(i, 2 * i)) / 1e5
    np.fill_diagonal(crosstalk, 0.0)
    return Calibration(
        chip_id=f"v{version}",
        p_pi_mW=20 + i / 7 + version / 1e3,
        bias_rad=(i * version % 628) / 100,
        a_ohm_per_mA2=0.5 + i / 1e3,
        c_ohm=500 + version / 3 + i,
        created=CREATED,
        crosstalk=crosstalk,
        rings=tuple(RingTuning(1550 + k / 10, 0.02, version / 1e6) for k in range(n // 10)),
    )


def stored_version(store: Store, kind: str) -> int:
    """The version in the store, after checking the whole content follows from it."""
    if kind == "doc":
        doc = store.read(DOC_NAME)
        assert doc is not None
        version = doc["version"]
        assert doc == version_document(version), f"document of version {version} is inconsistent"
    else:
        cal = store.read_calibration()
        assert cal is not None
        version = int(cal.chip_id.removeprefix("v"))
        assert same_calibration(cal, version_calibration(version)), f"calibration v{version}"
    return version


def writer_loop(kind: str, directory: str) -> None:
    """Run in a forked writer: say where it starts, then write versions until killed."""
    store = Store(directory)
    version = stored_version(store, kind)
    os.write(1, f"started {os.getpid()} {version}\n".encode())
    while True:
        version += 1
        if kind == "doc":
            store.write(DOC_NAME, version_document(version))
        else:
            store.write_calibration(version_calibration(version))


HELPER = r"""
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("store_kill_writers", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
os.write(1, b"ready\n")
while line := sys.stdin.readline():
    kind, directory = line.split()
    pid = os.fork()
    if pid == 0:
        try:
            module.writer_loop(kind, directory)
        except BaseException as exc:
            os.write(1, f"error {exc!r}\n".encode())
        os._exit(3)
    _, status = os.waitpid(pid, 0)
    os.write(1, f"exit {pid} {status}\n".encode())
"""


class Helper:
    """The forking helper process and a line reader with timeouts on its stdout."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HELPER, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.buffer = b""
        assert self.readline(timeout=120) == "ready"

    def readline(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"no line from the writer helper in {timeout} s")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise EOFError(f"writer helper exited with {self.proc.wait()}")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def start_writer(self, kind: str, directory: Path) -> tuple[int, int]:
        """Fork a writer; (its pid, the version it found in the store)."""
        self.proc.stdin.write(f"{kind} {directory}\n".encode())
        self.proc.stdin.flush()
        words = self.readline(timeout=30).split()
        assert words[0] == "started", f"writer did not start: {' '.join(words)}"
        return int(words[1]), int(words[2])

    def wait_dead(self, pid: int) -> int:
        """Block until the helper has reaped ``pid``; its wait status."""
        words = self.readline(timeout=30).split()
        assert words[:2] == ["exit", str(pid)], f"unexpected from helper: {' '.join(words)}"
        return int(words[2])

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def helper():
    h = Helper()
    yield h
    h.close()


def kill_writers(
    helper: Helper,
    directory: Path,
    kind: str,
    *,
    min_kills: int,
    min_interrupted: int,
    budget_s: float,
    seed: int,
) -> dict[str, int]:
    """SIGKILL forked writers at random moments until at least ``min_kills`` kills, of which
    ``min_interrupted`` caught a write in flight (a new temp file left behind) and as many came
    after a completed write, or the time budget is spent. After every kill the store must read
    as one complete written version.
    """
    name = DOC_NAME if kind == "doc" else "calibration"
    store = Store(directory)
    rng = np.random.default_rng(seed)
    stats = {"kills": 0, "interrupted": 0, "advanced": 0, "versions": 0}
    version = stored_version(store, kind)
    start = time.monotonic()
    while stats["kills"] < min_kills or (
        min(stats["interrupted"], stats["advanced"]) < min_interrupted
        and time.monotonic() - start < budget_s
    ):
        before = temp_files(directory, name)
        pid, found = helper.start_writer(kind, directory)
        assert found == version
        time.sleep(rng.uniform(0, 0.030))
        os.kill(pid, signal.SIGKILL)
        status = helper.wait_dead(pid)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
        stats["kills"] += 1

        after = temp_files(directory, name)
        if after - before:  # the kill landed between creating the temp file and the rename
            stats["interrupted"] += 1
        now = stored_version(store, kind)  # never raises: a complete, consistent version
        assert now >= version, f"store went back from version {version} to {now}"
        if now > version:
            stats["advanced"] += 1
            stats["versions"] += now - version
            # a completed write of this writer removed the leftovers of the previous kill
            assert before.isdisjoint(after)
        version = now
        assert store.names() == [name]  # temp files are never listed
    return stats


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill test forks writers (POSIX)")
def test_killed_writers_never_leave_a_half_written_document(helper, tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write(DOC_NAME, version_document(0))
    stats = kill_writers(
        helper, tmp_path, "doc", min_kills=60, min_interrupted=5, budget_s=8.0, seed=2026
    )
    print(f"\ndocument kill test: {stats}")
    assert stats["kills"] >= 60
    # not vacuous: some kills caught a write in flight, and writes did complete in between
    assert stats["interrupted"] >= 5, stats
    assert stats["advanced"] >= 5, stats
    # the next write cleans up whatever the last killed writer left
    store.write(DOC_NAME, version_document(10**6))
    assert temp_files(tmp_path, DOC_NAME) == set()
    assert stored_version(store, "doc") == 10**6


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill test forks writers (POSIX)")
def test_killed_calibration_writers_never_leave_a_half_written_file(helper, tmp_path) -> None:
    store = Store(tmp_path)
    store.write_calibration(version_calibration(0))
    stats = kill_writers(
        helper, tmp_path, "cal", min_kills=25, min_interrupted=2, budget_s=5.0, seed=7
    )
    print(f"\ncalibration kill test: {stats}")
    assert stats["kills"] >= 25
    assert stats["interrupted"] >= 2, stats
    assert stats["advanced"] >= 2, stats
    store.write_calibration(version_calibration(10**6))
    assert temp_files(tmp_path, "calibration") == set()
    assert stored_version(store, "cal") == 10**6
