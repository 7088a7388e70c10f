"""Conformance checks of Qontrol's own unmodified ``qontrol`` library (1.1.20) on the served Q8iv
daisy chain, registered with :func:`tests.hil.clients.check`, beyond the currents of
:mod:`tests.hil.clients`: the limit vectors (``q.vmax``, ``q.imax``, ``set_all_values`` of
``VMAX``/``IMAX``, ``get_all_values``), a voltage vector (``VVEC``), the attributes and the chain
(``vfull``, ``ifull``, ``firmware``, ``lifetime``, ``chain``), ``VIPALL?`` and the error path
(an ``E02`` reply parsed by the library's own table, then found in ``LOG?``) through
``issue_command``, and settings kept and read back (``LED``, ``ADCN``, ``NVM``).

Not checked: the library's ``binary_mode`` (its binary frames are the manual's binary protocol,
which the emulation does not speak: it reads lines).
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator

import numpy as np

from hil.emulator.bench import EmulatedBench
from tests.hil.clients import QONTROL_TIMEOUT_S, check

NAME = "heater_driver"
#: The library's wait for a reply, s (it waits this long several times as it starts; the
#: emulated bench loads its settling kernel before it serves, so a write answers in ms).
TIMEOUT_S = QONTROL_TIMEOUT_S


@contextlib.contextmanager
def _qontrol(bench: EmulatedBench) -> Iterator:
    """``qontrol.QXOutput`` on the served chain (started without ``n_chs``); the currents are
    put back as they were afterwards (other checks lean on them)."""
    import qontrol

    port = bench.resources[NAME].removeprefix("ASRL").removesuffix("::INSTR")
    before = bench.world.driver.currents()
    with contextlib.redirect_stdout(io.StringIO()):  # the library prints its warnings
        q = qontrol.QXOutput(serial_port_name=port, response_timeout=TIMEOUT_S)
    try:
        yield q
        chain = before.tolist() + [0.0] * (q.n_chs - before.size)
        q.set_all_values("I", chain)
        assert np.array_equal(bench.world.driver.currents(), before)
    finally:
        q.close()


def _full_scale(q) -> None:
    q.set_all_values("VMAX", [12.0] * q.n_chs)
    q.set_all_values("IMAX", [24.0] * q.n_chs)


@check(NAME)
def qontrol_limit_vectors(bench: EmulatedBench) -> None:
    """``q.vmax[k]``, ``q.imax[k]`` (``VMAX3=``, ``VMAX3?``) and whole-chain limits
    (``VMAXVEC``/``IMAXVEC`` a module at a time, ``VMAXALL?``)."""
    handler = bench.servers[NAME].handler
    with _qontrol(bench) as q:
        try:
            q.vmax[3] = 6.5
            q.imax[3] = 9.0
            assert q.vmax[3] == 6.5 and q.imax[3] == 9.0
            assert handler.vmax[3] == 6.5 and handler.imax[3] == 9.0
            limits = [5.0 + 0.25 * k for k in range(q.n_chs)]
            q.set_all_values("VMAX", limits)
            assert handler.vmax.tolist() == limits
            assert q.get_all_values("VMAX") == limits
            q.set_all_values("IMAX", 8.0)
            assert q.get_all_values("IMAX") == [8.0] * q.n_chs
            assert [e for e in q.log if e["type"] == "err"] == []
        finally:
            _full_scale(q)
        assert handler.vmax.tolist() == [12.0] * q.n_chs


@check(NAME)
def qontrol_voltage_vector(bench: EmulatedBench) -> None:
    """``set_all_values('V', ...)`` (``VVEC``): each heater develops its voltage, read back
    through ``q.v``."""
    n = bench.world.driver.n_channels
    with _qontrol(bench) as q:
        volts = [0.2 + 0.05 * (k % 8) if k < n else 0.0 for k in range(q.n_chs)]
        q.set_all_values("V", volts)
        read = q.v[:]
        assert np.allclose(read[:n], volts[:n], atol=2e-4)
        assert np.all(bench.world.driver.currents() > 0)
        assert [e for e in q.log if e["type"] == "err"] == []


@check(NAME)
def qontrol_attributes_and_chain(bench: EmulatedBench) -> None:
    """``vfull``, ``ifull``, ``firmware``, ``lifetime``, the chain from ``NUPALL?`` and
    ``NCHAN?``."""
    handler = bench.servers[NAME].handler
    with _qontrol(bench) as q:
        assert (q.vfull, q.ifull) == ("12.0 V", "24.0 mA")
        assert q.firmware == "v2.4.1"
        assert re.fullmatch(r"\d+ s", q.lifetime)
        assert [d["device_id"] for d in q.chain] == handler.ids
        assert [d["index"] for d in q.chain] == list(range(handler.modules))
        assert {d["device_type"] for d in q.chain} == {"Q8iv"}
        nchan = q.issue_command("nchan", operator="?", n_lines_requested=1, output_regex=r"(\d+)")
        assert int(nchan[0][0]) == bench.world.driver.n_channels


@check(NAME)
def qontrol_vip_readings(bench: EmulatedBench) -> None:
    """``VIPALL?`` through ``issue_command``: a line per channel; the one driven reads its
    voltage, current, power and resistance."""
    world = bench.world
    with _qontrol(bench) as q:
        q.i[1] = 4.0
        rows = q.issue_command(
            "vipall",
            operator="?",
            n_lines_requested=q.n_chs,
            output_regex=r"(\d+),(\d+): ([+-][\d.]+) V, ([+-][\d.]+) mA(?:, +([\d.]+) mW)?",
        )
        assert len(rows) == q.n_chs
        module, channel, volts, mA, mW = rows[1]
        assert (module, channel, float(mA)) == ("0", "1", 4.0)
        true_volts = world.chip.heaters.voltage_V(world.driver.currents())[1]
        assert abs(float(volts) - true_volts) < 1e-4
        assert abs(float(mW) - float(volts) * 4.0) < 1e-3


@check(NAME)
def qontrol_error_reply_and_log(bench: EmulatedBench) -> None:
    """``q.i[2] = 99``: the library parses ``E02:02`` with its own table ("Over-current error
    on channel 2."), nothing is written, and the chain's ``LOG?`` lists it."""
    handler = bench.servers[NAME].handler
    with _qontrol(bench) as q:
        before = bench.world.driver.currents()
        q.i[2] = 99.0
        (error,) = [e for e in q.log if e["type"] == "err"]
        assert (error["id"], error["ch"]) == (2, 2)
        assert error["desc"] == "Over-current error on channel 2."
        assert np.array_equal(bench.world.driver.currents(), before)
        log = q.issue_command("log", operator="?")
        assert any(re.match(r"#\s*\d+, E02:02, \d+ s ago", line[0] or "") for line in log)
    # the one error provoked, and no other; the log has no command to clear it
    assert handler.errors.codes() == [2]
    handler.errors.clear()


@check(NAME)
def qontrol_settings_read_back(bench: EmulatedBench) -> None:
    """Settings kept by the module through ``issue_command``: ``LED``, ``ADCN``, an ``NVM``
    word, read back as written (and put back)."""

    def ask(name: str) -> str:
        return q.issue_command(name, operator="?", n_lines_requested=1)[0][0]

    with _qontrol(bench) as q:
        led, adcn, word = ask("led"), ask("adcn"), ask("nvm200")
        try:
            q.issue_command("led", operator="=", value=0)
            q.issue_command("adcn", operator="=", value=4)
            q.issue_command("nvm200", operator="=", value="0x2A5")
            assert (ask("led"), ask("adcn"), ask("nvm200")) == ("0", "4", "0x02A5")
        finally:
            q.issue_command("led", operator="=", value=led)
            q.issue_command("adcn", operator="=", value=adcn)
            q.issue_command("nvm200", operator="=", value=word)
        assert [e for e in q.log if e["type"] == "err"] == []
