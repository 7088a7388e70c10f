"""Conformance checks over HiSLIP and VXI-11 (``::INSTR`` resources, :mod:`hil.emulator.hislip`,
:mod:`hil.emulator.vxi11`): the unmodified pyvisa-py on the 8164B and the N774x meter served
as ``hislip_laser``, ``hislip_power_meter`` and ``vxi11_laser``, registered with
:func:`tests.hil.clients.check`.

pyvisa-py 0.8.1's HiSLIP session has no ``assert_trigger`` and no service-request events: the
trigger and the service request go through its HiSLIP client (``pyvisa_py.protocols.hislip``,
unmodified), as tests/hil/test_hislip.py says.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator

from pyvisa.resources import MessageBasedResource
from pyvisa_py.protocols import hislip

from hil.emulator.bench import EmulatedBench
from tests.hil.clients import _KEYSIGHT_NR3, TIMEOUT_MS, check, plain

ESB, MAV, RQS = 0x20, 0x10, 0x40


def _eventually(condition: Callable[[], object], timeout_s: float = 5.0) -> bool:
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


@contextlib.contextmanager
def instr(bench: EmulatedBench, name: str) -> Iterator[MessageBasedResource]:
    """The served ``name`` as a VISA ``::INSTR`` resource through pyvisa-py."""
    with plain(bench, name) as inst:
        assert inst.resource_name.endswith("::INSTR") and "hislip0," in inst.resource_name
        yield inst


def _trigger(inst: MessageBasedResource) -> None:
    """``assert_trigger()``, or on pyvisa-py 0.8.1 the same Trigger message from its client."""
    try:
        inst.assert_trigger()
    except NotImplementedError:
        inst.visalib.sessions[inst.session].interface.trigger()


@check("hislip_laser")
def hislip_laser_is_the_same_instrument_as_its_socket(bench: EmulatedBench) -> None:
    """A setting made over HiSLIP reads back over the raw socket, and the other way round."""
    with instr(bench, "hislip_laser") as inst, plain(bench, "laser") as raw:
        assert inst.query("*IDN?") == raw.query("*IDN?")
        assert inst.query("*IDN?").startswith("Keysight Technologies,8164B,")
        assert inst.query(":SOUR0:WAV 1530NM;*OPC?") == "1"  # run before the socket reads
        assert float(raw.query(":SOUR0:WAV?")) == 1530e-9
        assert raw.query(":SOUR0:POW 0.5MW;*OPC?") == "1"
        power = inst.query(":SOUR0:POW?")
        assert _KEYSIGHT_NR3.match(power) and abs(float(power) - 10 * math.log10(0.5)) < 1e-6
        inst.write("*RST")


@check("hislip_laser")
def hislip_laser_status_byte(bench: EmulatedBench) -> None:
    """``read_stb``: MAV while a reply waits unread, ESB for an enabled event, nothing queued."""
    with instr(bench, "hislip_laser") as inst:
        inst.write("*CLS")
        assert inst.read_stb() == 0
        inst.write("*IDN?")
        assert _eventually(lambda: inst.read_stb() & MAV)
        assert inst.read().startswith("Keysight")
        assert inst.read_stb() & MAV == 0
        inst.write("*ESE 1;*OPC")
        assert _eventually(lambda: inst.read_stb() & ESB)
        assert inst.read_stb() & RQS == 0  # *SRE 0: no service requested
        assert int(inst.query("*ESR?")) == 1 and inst.read_stb() == 0
        inst.write("*ESE 0")


@check("hislip_laser")
def hislip_laser_trigger_and_clear(bench: EmulatedBench) -> None:
    """A device trigger is accepted as ``*TRG``; a device clear leaves the settings alone."""
    with instr(bench, "hislip_laser") as inst:
        inst.write(":SOUR0:WAV 1540NM")
        _trigger(inst)
        assert inst.query("*OPC?") == "1"
        inst.clear()
        assert float(inst.query(":SOUR0:WAV?")) == 1540e-9
        assert inst.query("SYST:ERR?") == '0,"No error"'
        inst.write("*RST")


@check("hislip_power_meter")
def hislip_power_meter_reads_every_output(bench: EmulatedBench) -> None:
    """The meter's readings over HiSLIP: one per chip output, Keysight's number format."""
    n = bench.world.n_ports
    with instr(bench, "hislip_power_meter") as m:
        assert "N774" in m.query("*IDN?")
        values = m.query(":READ:POW:ALL:CSV?").split(",")
        assert len(values) == n and all(_KEYSIGHT_NR3.match(v) for v in values)
        m.write(":SENS1:POW:UNIT W")
        assert float(m.query(":READ1:POW?")) > 0
        m.write("*RST")


@check("hislip_power_meter")
def hislip_power_meter_requests_service(bench: EmulatedBench) -> None:
    """``*SRE 32;*ESE 1;*OPC``: an AsyncServiceRequest with RQS and ESB, RQS cleared by the
    next status query (pyvisa-py's HiSLIP client, its asynchronous channel read directly)."""
    server = bench.servers["hislip_power_meter"]
    client = hislip.Instrument(server.host, timeout=TIMEOUT_MS / 1000, port=server.port)
    try:
        client.send(b"*CLS;*SRE 32;*ESE 1;*OPC\n")
        assert hislip.AsyncServiceRequest(client._async).server_status & (RQS | ESB) == RQS | ESB
        assert client.async_status_query() & (RQS | ESB) == RQS | ESB
        assert client.async_status_query() & (RQS | ESB) == ESB
        client.send(b"*SRE 0;*ESE 0;*CLS;*OPC?\n")
        assert client.receive(10) == b"1\n"
    finally:
        client.close()


# ---- VXI-11 ----------------------------------------------------------------------------------
@check("vxi11_laser")
def vxi11_laser_status_byte_trigger_clear_and_locks(bench: EmulatedBench) -> None:
    """The 8164B over VXI-11 through pyvisa-py's own resource calls: ``read_stb`` (MAV while a
    reply waits, ESB for an enabled event), ``assert_trigger``, ``clear`` (settings kept), and
    an exclusive lock that keeps another link out until it is released."""
    resource = bench.resources["vxi11_laser"]
    assert resource.endswith("::inst0::INSTR")
    with plain(bench, "vxi11_laser") as inst, plain(bench, "vxi11_laser") as other:
        inst.write("*CLS")
        assert inst.read_stb() == 0
        inst.write("*IDN?")
        assert inst.read_stb() & MAV
        assert inst.read().startswith("Keysight Technologies,8164B,")
        inst.write("*ESE 1;*OPC")
        assert inst.read_stb() & ESB and int(inst.query("*ESR?")) == 1
        inst.write(":SOUR0:WAV 1545NM")
        inst.assert_trigger()
        inst.clear()
        assert float(inst.query(":SOUR0:WAV?")) == 1545e-9
        inst.lock_excl(timeout=1000)
        other.timeout = 300
        with contextlib.suppress(Exception):
            other.query("*IDN?")
            raise AssertionError("a locked device answered another link")
        inst.unlock()
        assert other.query("*IDN?").startswith("Keysight")
        assert inst.query("SYST:ERR?") == '0,"No error"'
        inst.write("*ESE 0;*RST")
