"""Line framing per instrument as its manual gives it (hil.emulator.framing), over real sockets
and the pseudo-terminal of a served bench, and the terminations bench.json carries to a client."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hil.bench import Bench
from hil.bench_config import BenchConfig, Instrument
from hil.emulator.bench import EmulatedBench
from hil.emulator.framing import CR, CRLF, LF, Framing, LineSplitter, framing_of
from hil.emulator.instruments.tsl570_commands import DELIMITERS, FIRMWARE
from photonics.errors import SettingsError

IDN = f"SANTEC,TSL-570,25010001,{FIRMWARE}".encode()
#: How long a socket must stay quiet for "nothing more was sent", s.
QUIET_S = 0.15


@pytest.fixture(scope="module")
def served() -> Iterator[EmulatedBench]:
    with EmulatedBench(ports=4, seed=0) as bench:
        yield bench


@contextlib.contextmanager
def raw(bench: EmulatedBench, name: str) -> Iterator[socket.socket]:
    """A bare TCP connection to the served ``name``: bytes exactly as sent and received."""
    port = int(bench.resources[name].split("::")[2])
    sock = socket.create_connection(("127.0.0.1", port), timeout=5.0)
    try:
        yield sock
    finally:
        sock.close()


def read_until(sock: socket.socket, ending: bytes, timeout_s: float = 5.0) -> bytes:
    """Bytes up to and including ``ending``, then nothing more for :data:`QUIET_S`."""
    data, deadline = b"", time.monotonic() + timeout_s
    while not data.endswith(ending):
        sock.settimeout(max(deadline - time.monotonic(), 1e-3))
        chunk = sock.recv(65536)
        assert chunk, f"closed after {data!r}"
        data += chunk
    assert quiet(sock) == b"", "more came after the reply"
    return data


def quiet(sock: socket.socket) -> bytes:
    """What arrives within :data:`QUIET_S` (b'' when the instrument stays silent)."""
    sock.settimeout(QUIET_S)
    try:
        return sock.recv(65536)
    except TimeoutError:
        return b""


# ---- the splitter --------------------------------------------------------------------------------
LINE = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12)


@given(
    st.lists(st.tuples(LINE, st.sampled_from((CR, LF, CRLF))), max_size=8),
    st.lists(st.integers(1, 7), max_size=30),
)
def test_cr_lf_or_crlf_end_a_line_however_the_bytes_are_cut(lines, cuts) -> None:
    stream = "".join(text + end for text, end in lines).encode()
    splitter, got, at = LineSplitter((CR, LF, CRLF), 1000), [], 0
    for n in [*cuts, len(stream)]:  # the stream in reads of any sizes (CR and LF apart too)
        got += splitter.feed(stream[at : at + n])
        at += n
    assert got == [text.encode() for text, _ in lines]  # CR LF is one end: no empty line


def test_an_ieee_line_ends_at_lf_only_and_a_cr_before_it_is_dropped() -> None:
    splitter = LineSplitter(Framing().accepts, 1000)
    assert splitter.feed(b"A\rB\nC\r") == [b"A\rB"]  # a CR alone ends nothing
    assert splitter.feed(b"\n") == [b"C"]


def test_an_overlong_line_keeps_its_head() -> None:
    splitter = LineSplitter((LF,), 8)
    assert splitter.feed(b"0123456789abc") == []
    assert splitter.feed(b"\nok\n") == [b"01234567", b"ok"]


def test_each_model_has_its_manuals_framing(served) -> None:
    for name in ("power_meter", "laser", "pm100d", "switch", "heater_driver"):
        assert served.servers[name].framing == Framing((LF, CRLF), LF), name
    tsl = served.servers["tsl570"].framing
    assert (tsl.accepts, tsl.reply, tsl.block) == ((CR, LF, CRLF), CR, "")
    assert framing_of(object()) == Framing()  # an unknown handler: IEEE 488.2


# ---- over the wire -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["power_meter", "laser", "pm100d", "switch"])
def test_ieee_instruments_take_lf_and_crlf_and_reply_with_lf(served, name) -> None:
    with raw(served, name) as sock:
        for end in (b"\n", b"\r\n"):
            sock.sendall(b"*IDN?" + end)
            reply = read_until(sock, b"\n")
            assert not reply.endswith(b"\r\n") and reply.count(b"\n") == 1
        sock.sendall(b"*IDN?\r")  # IEEE 488.2: CR is white space, no terminator
        assert quiet(sock) == b""
        sock.sendall(b"\n")
        assert read_until(sock, b"\n").count(b",") >= 3


@pytest.mark.parametrize("end", [b"\r", b"\n", b"\r\n"], ids=["CR", "LF", "CRLF"])
def test_the_tsl570_takes_cr_lf_and_crlf_and_replies_with_cr(served, end) -> None:
    with raw(served, "tsl570") as sock:
        sock.sendall(b"*IDN?" + end)
        assert read_until(sock, b"\r") == IDN + b"\r"
        sock.sendall(b":SYST:ERR?" + end)  # CR LF was one terminator: no empty command
        assert read_until(sock, b"\r") == b'0,"No error"\r'


def test_the_tsl570_delimiter_ends_the_replies_from_the_next_one_on(served) -> None:
    with raw(served, "tsl570") as sock:
        for code, delimiter in enumerate(DELIMITERS):
            # the line's own reply is the next one: it ends in the new delimiter already
            sock.sendall(f":SYST:COMM:GPIB:DEL {code};*IDN?\r".encode())
            if delimiter:
                assert read_until(sock, delimiter.encode()) == IDN + delimiter.encode()
            else:  # 3, none: the reply and nothing after it (a GPIB client has EOI)
                assert read_until(sock, IDN) == IDN
            assert served.terminations("tsl570") == (delimiter, CR)
        sock.sendall(b":SYST:COMM:GPIB:DEL 0\n:SYST:COMM:GPIB:DEL?\n")
        assert read_until(sock, b"\r") == b"0\r"


def test_a_tsl570_binary_block_has_no_delimiter(served) -> None:
    with raw(served, "tsl570") as sock:
        sock.sendall(
            b":WAV:SWE:MOD 1;:WAV:SWE:STAR 1500;:WAV:SWE:STOP 1501;:WAV:SWE:SPE 100;"
            b":TRIG:OUTP:STEP 0.5;:WAV:SWE:DEL 0\r:WAV:SWE 1\r:WAV:SWE?\r"
        )
        assert read_until(sock, b"\r") == b"1\r"  # polled: the virtual clock goes to its end
        sock.sendall(b":WAV:SWE?;:READ:POIN?\r")
        assert read_until(sock, b"\r") == b"0;3\r"
        sock.sendall(b":READ:DAT?\r")
        block = read_until(
            sock, b"#212" + np.array([15_000_000, 15_005_000, 15_010_000], "<i4").tobytes()
        )
        assert block.startswith(b"#212")  # 3 points, int32 in 0.1 pm, nothing after


def test_the_qontrol_pty_takes_lf_and_crlf_and_replies_with_lf(served) -> None:
    fd = os.open(served.servers["heater_driver"].path, os.O_RDWR | os.O_NOCTTY)
    try:
        for end in (b"\n", b"\r\n"):
            os.write(fd, b"ID?" + end)
            data, deadline = b"", time.monotonic() + 5
            while not data.endswith(b"\n") and time.monotonic() < deadline:
                data += os.read(fd, 1024)
            assert data == b"Q8iv-0001\n"
    finally:
        os.close(fd)


# ---- bench.json ----------------------------------------------------------------------------------
def test_bench_json_carries_each_instruments_terminations(served, tmp_path) -> None:
    cfg = served.config()
    cfg.save(tmp_path / "bench.json")
    body = json.loads((tmp_path / "bench.json").read_text())
    (tsl,) = [s for s in body["spare"] if s["model"] == "TSL570"]
    assert (tsl["read_termination"], tsl["write_termination"]) == (CR, CR)
    others = [body["laser"], body["heater_driver"], *body["meters"]]
    assert all((i["read_termination"], i["write_termination"]) == (LF, LF) for i in others)
    assert BenchConfig.load(tmp_path / "bench.json") == cfg


def test_an_older_bench_json_reads_lf_and_a_bad_termination_is_refused(served, tmp_path) -> None:
    cfg = served.config()
    cfg.save(tmp_path / "bench.json")
    body = json.loads((tmp_path / "bench.json").read_text())
    for spare in body["spare"]:  # as written before the terminations were
        spare.pop("read_termination"), spare.pop("write_termination")
    (tmp_path / "old.json").write_text(json.dumps(body))
    assert {i.read_termination for _, i in BenchConfig.load(tmp_path / "old.json").spare} == {LF}
    body["laser"]["read_termination"] = "\t"
    (tmp_path / "bad.json").write_text(json.dumps(body))
    with pytest.raises(SettingsError, match="read_termination"):
        BenchConfig.load(tmp_path / "bad.json")


def test_a_bench_opened_from_bench_json_drives_the_tsl570_over_its_cr_framing(tmp_path) -> None:
    with EmulatedBench(ports=4, seed=1) as emulated:
        cfg = emulated.config()
        (tsl,) = [i for _, i in cfg.spare if i.model == "TSL570"]
        switch = Instrument("8164B-switch", cfg.laser.resource)
        replace(cfg, laser=tsl, input_switch=switch).save(tmp_path / "bench.json")
        loaded = BenchConfig.load(tmp_path / "bench.json")
        assert loaded.laser.read_termination == CR
        world = emulated.world
        with Bench(loaded) as bench:
            assert world.laser("TSL-570").on and bench.laser.is_on()
            bench.laser.set_wavelength_nm(1551.25)
            bench.laser.set_power_mW(2.0)
            assert bench.laser.wavelength_nm() == 1551.25
            assert world.laser("TSL-570").wavelength_nm == 1551.25
            assert bench.laser.power_mW() == pytest.approx(2.0, rel=1e-3)
        assert not world.laser("TSL-570").on  # closed safe: the laser off
