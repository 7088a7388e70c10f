"""``pswitch switch`` against a served switch over real sockets, and any VISA resource: a GPIB
switch on pyvisa-sim (a simulated VISA library), reached by ``Switch.open`` and the command
line alike."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.sdk import Switch
from hil.emulator.bench import SwitchFirmware
from hil.emulator.server import TcpServer
from tests.pswitch.test_errors import assert_one_line, run

#: What the SDK asks a switch when it opens it and for ``idn``.
OPENING = ("SYST:PORT?", "HEAT:COUN?", "RING:COUN?", "*IDN?")


@pytest.fixture
def served() -> Iterator[tuple[str, Switch]]:
    """An emulated 4-port switch on TCP (its resource) and an in-process view of it."""
    sw = Switch.emulated(ports=4, seed=0)
    with TcpServer(SwitchFirmware(sw.transport.controller), name="switch") as server:
        yield server.resource, sw


def test_connect_status_and_powers_from_the_command_line(served, tmp_path) -> None:
    resource, sw = served
    done = run("switch", "--resource", resource, "--json", "connect", "0-3", "1-2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["matching"] == [[0, 3], [1, 2]]
    assert sw.matching().pairs == ((0, 3), (1, 2))  # on the switch itself
    done = run("switch", "--resource", resource, "--json", "status", cwd=tmp_path)
    status = json.loads(done.stdout)
    assert status["matching"] == [[0, 3], [1, 2]] and "routed" in status["set"]
    assert status["errors"] == []
    env = {**os.environ, "PSWITCH_RESOURCE": resource}
    done = run("switch", "--json", "powers", "--dbm", cwd=tmp_path, env=env)
    dbm = json.loads(done.stdout)["powers_dBm"]
    assert len(dbm) == 4 and all(p is None or p < 10 for p in dbm)
    # --json after the action too, as a user types it (it was refused there)
    after = run("switch", "--resource", resource, "status", "--json", cwd=tmp_path)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["matching"] == [[0, 3], [1, 2]]


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["connect", "0-9"], 2, "port 9"),  # checked by the SDK before a byte is sent
        (["connect", "0-"], 2, "a pair is two ports"),
        (["disconnect", "2"], 1, "port 2 is not connected"),  # the switch refuses it
    ],
)
def test_bad_requests_exit_with_one_line_and_change_nothing(
    served, tmp_path, args: list[str], code: int, words: str
) -> None:
    resource, sw = served
    sw.connect([(0, 1)])
    done = run("switch", "--resource", resource, *args, cwd=tmp_path)
    assert_one_line(done, code, words)
    assert sw.matching().pairs == ((0, 1),)


def test_no_resource_and_a_dead_one_are_one_line(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PSWITCH_RESOURCE"}
    assert_one_line(run("switch", "idn", cwd=tmp_path, env=env), 2, "--resource")
    dead = "TCPIP0::127.0.0.1::1::SOCKET"
    assert_one_line(
        run("switch", "--resource", dead, "--timeout", "0.5", "idn", cwd=tmp_path), 1, dead
    )


def _simulated(folder: Path) -> str:
    """A pyvisa-sim library with a switch on GPIB0::5::INSTR that answers what the emulated
    switch answers (a transcript of :data:`OPENING`); its backend string."""
    controller = Switch.emulated(ports=4, seed=0).transport.controller
    dialogues = "".join(
        f'      - q: "{line}"\n        r: "{controller.handle(line)}"\n' for line in OPENING
    )
    spec = (
        'spec: "1.1"\ndevices:\n  switch:\n    eom:\n      GPIB INSTR:\n        q: "\\n"\n'
        f'        r: "\\n"\n    error: ERROR\n    dialogues:\n{dialogues}'
        "resources:\n  GPIB0::5::INSTR:\n    device: switch\n"
    )
    (folder / "visa.yaml").write_text(spec)
    return f"{folder / 'visa.yaml'}@sim"


def test_a_gpib_switch_opens_through_the_visa_library_chosen(tmp_path, monkeypatch) -> None:
    backend = _simulated(tmp_path)
    monkeypatch.setenv("PSWITCH_VISA_BACKEND", backend)
    with Switch.open("GPIB0::5::INSTR") as sw:  # the GPIB transport, on that library
        assert sw.idn().startswith("PSWITCH,EMU-CLEMENTS-4") and sw.ports == 4
    monkeypatch.delenv("PSWITCH_VISA_BACKEND")
    done = run(
        "switch", "--resource", "GPIB0::5::INSTR", "--visa-backend", backend, "idn", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("idn: PSWITCH,EMU-CLEMENTS-4")
