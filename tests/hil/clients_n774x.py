"""Conformance checks of the N774x power meter (n774x), registered with
:func:`tests.hil.clients.check`: the programming guides' own examples sent by plain pyvisa over
real sockets, line for line (Keysight N77xx Series Programming Guide, Edition 7, "PG": the VISA
examples of ch. 5, the streaming example of p. 127, the command examples of ch. 4).

No open-source N774x driver installs on Python 3.11 beside this project's dev environment:
pymeasure's ``KeysightN7744C`` is on its development branch only (0.16.0, the release, has
none); LabExT's ``PowerMeterN7744A`` (labext-pkg 2.3.1) pins numpy 1.26.4, scipy 1.13.1,
pyvisa 1.14.1 and some fifty other exact versions (and tkinter widgets); QMI, QCoDeS and its
contrib drivers, pylablib, InstrumentKit and the ``keysight`` package have none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from hil.emulator.bench import EmulatedBench
from tests.hil.clients import _KEYSIGHT_NR3, check, plain

METER = "power_meter"


def _poll_complete(m, slot: int) -> str:
    """PG p. 153: poll ``FUNC:STATE?`` until it says COMPLETE (a bounded loop)."""
    for _ in range(100):
        reply = m.query(f"SENS{slot}:CHAN1:FUNC:STATE?")
        if "COMPLETE" in reply:
            return reply
    raise AssertionError(f"SENS{slot}: never complete ({reply})")


@contextlib.contextmanager
def _lit(bench: EmulatedBench) -> Iterator[int]:
    """The laser on (off again after): the 1-based channel that sees the most."""
    with plain(bench, "laser") as laser:
        laser.write(":SOUR0:POW:STAT 1")
    try:
        yield int(np.argmax(bench.world.output_power_mW())) + 1
    finally:
        with plain(bench, "laser") as laser:
            laser.write(":SOUR0:POW:STAT 0")


@check(METER)
def n774x_guide_fetch_and_read(bench: EmulatedBench) -> None:
    """PG p. 149, "How to Measure Power using FETCh and READ": FETCh returns the last trigger's
    value, READ measures anew."""
    with _lit(bench) as n, plain(bench, METER) as m:
        for line in (
            f"SENS{n}:CHAN1:POW:REF:STATE 0",
            "*CLS",
            f"SENS{n}:CHAN1:POW:RANGE:AUTO 1",
            f"SENS{n}:CHAN1:POW:UNIT W",
            f"SENS{n}:CHAN1:POW:ATIME {0.5:f}",
            f"INIT{n}:CHAN1:CONT 0",
            f"INIT{n}:CHAN1:IMM",
        ):
            m.write(line)
        fetched = [m.query(f"FETCH{n}:CHAN1:POW?") for _ in range(10)]
        assert len(set(fetched)) == 1 and _KEYSIGHT_NR3.match(fetched[0])  # "Same:"
        read = [float(m.query(f"READ{n}:CHAN1:POW?")) for _ in range(10)]
        truth = 1e-3 * bench.world.output_power_mW()[n - 1]
        assert np.allclose(read, truth, rtol=0.01) and len(set(read)) > 1  # "New:"
        m.write("*RST")


@check(METER)
def n774x_guide_logging(bench: EmulatedBench) -> None:
    """PG p. 153, "How to Log Results": 100 values at 20 ms, polled, read as a block of
    little-endian float32 in the channel's unit (dBm after *RST)."""
    with _lit(bench) as n, plain(bench, METER) as m:
        m.write("*CLS")
        m.write(f"SENS{n}:CHAN1:POW:RANGE:AUTO 1")
        m.write(f"SENS{n}:CHAN1:FUNC:PAR:LOGG {100},{0.02:f}")
        m.write(f"SENS{n}:CHAN1:FUNC:STAT LOGG,START")
        assert _poll_complete(m, n) == "LOGGING_STABILITY,COMPLETE"
        values = m.query_binary_values(f"SENS{n}:CHAN1:FUNC:RES?", datatype="f")
        m.write(f"SENS{n}:CHAN1:FUNC:STAT LOGG,STOP")
        level = 10 * np.log10(bench.world.output_power_mW()[n - 1])
        assert len(values) == 100 and np.allclose(values, level, atol=0.05)
        assert m.query(f"SENS{n}:FUNC:STAT?") == "NONE,COMPLETE"
        m.write("*RST")


@check(METER)
def n774x_guide_stability(bench: EmulatedBench) -> None:
    """PG p. 126: ``sens1:func:par:stab 1s,0.1s,0.1s`` and its query; the run gives total over
    period samples."""
    with _lit(bench) as n, plain(bench, METER) as m:
        m.write(f"sens{n}:pow:unit 1")
        m.write(f"sens{n}:func:par:stab 1s,0.1s,0.1s")
        stab = m.query(f"sens{n}:func:par:stab?")
        assert stab == "+1.00000000E+000,+1.00000000E-001,+1.00000000E-001"
        assert m.query(f"sens{n}:func:par:logg?") == "10,+1.00000000E-001"  # shared (p. 123)
        m.write(f"sens{n}:func:stat stab,star")
        assert _poll_complete(m, n) == "LOGGING_STABILITY,COMPLETE"
        values = m.query_binary_values(f"sens{n}:func:res?", datatype="f")
        truth = 1e-3 * bench.world.output_power_mW()[n - 1]
        assert len(values) == 10 and np.allclose(values, truth, rtol=0.01)
        m.write("*RST")


@check(METER)
def n774x_guide_minmax(bench: EmulatedBench) -> None:
    """PG pp. 124-132: ``sens1:func:par:minm WIND,10``, its query, a MinMax run and its
    minimum, maximum and last sample."""
    with _lit(bench) as n, plain(bench, METER) as m:
        m.write(f"sens{n}:pow:unit 1;:sens{n}:func:par:minm WIND,10")
        assert m.query(f"sens{n}:func:par:minm?") == "WIND,10"
        m.write(f"sens{n}:func:stat minm,star")
        assert m.query(f"sens{n}:func:stat?") == "MINMAX,PROGRESS"
        low, high, last = m.query_binary_values(f"sens{n}:func:res?", datatype="f")
        truth = 1e-3 * bench.world.output_power_mW()[n - 1]
        assert low <= last <= high and np.allclose([low, high, last], truth, rtol=0.01)
        m.write(f"sens{n}:func:stat minm,stop")
        assert m.query(f"sens{n}:func:stat?") == "NONE,COMPLETE"
        m.write("*RST")


@check(METER)
def n774x_csv_readings_in_watts(bench: EmulatedBench) -> None:
    """PG pp. 115-118 and C p. 88: every channel at once, in W whatever each channel's unit,
    the units, and the slot and channel of each value."""
    channels = bench.world.n_ports
    with _lit(bench), plain(bench, METER) as m:
        m.write("sens1:pow:unit 0;:sens2:pow:unit 1")
        assert m.query("sens:pow:unit:all:csv?") == "0,1" + ",0" * (channels - 2)
        truth = 1e-3 * bench.world.output_power_mW()
        for query in ("read:pow:all:csv?", "fetc:pow:all:csv?"):
            values = [float(v) for v in m.query(query).split(",")]
            assert np.allclose(values, truth, rtol=0.01, atol=1e-8)
        block = m.query_binary_values("read1:pow:all?", datatype="f")
        assert np.allclose(block, truth, rtol=0.01, atol=1e-8)
        pairs = m.query_binary_values("read1:pow:all:conf?", datatype="H")
        assert list(pairs) == [v for k in range(1, channels + 1) for v in (k, 1)]
        m.write("*RST")


@check(METER)
def n774x_guide_streaming_triggers(bench: EmulatedBench) -> None:
    """PG p. 127, "Programming Streaming Data": two logging loops armed for a trigger
    (``TRIGn:INP MME``), started by ``INIT1:IMM``, read from buffers A and B."""
    with _lit(bench) as n, plain(bench, METER) as m:
        m.write(f"SENS{n}:FUNC:STAT LOGG,STOP")
        m.write(f"SENS{n}:FUNC:LOOP 2")
        for line in (
            f"INIT{n}:CONT 0",
            f"SENS{n}:POW:GAIN:AUTO 0",
            f"SENS{n}:POW:RANG 10DBM",
            f"SENS{n}:POW:UNIT 1",
            f"TRIG{n}:INP MME",
            f"SENS{n}:FUNC:PAR:LOGG 10,100000 us",  # 1 s loops: longer than a round trip
        ):
            m.write(line)
        assert m.query(f"TRIG{n}:INP?;:TRIG:CONF?") == "MME;DEF"
        m.write(f"SENS{n}:FUNC:STAT LOGG,STAR")
        assert m.query(f"SENS{n}:FUNC:RES:IND?") == "0"  # armed, waiting for the trigger
        m.write("INIT1:IMM")  # in logging mode it triggers every channel (p. 116)
        indices = [int(m.query(f"SENS{n}:FUNC:RES:IND?")) for _ in range(3)]
        assert indices == [0, 1, 2]  # each poll waits for the next loop's end
        a = m.query_binary_values(f"SENS{n}:FUNC:RES:BUFA?", datatype="f")
        b = m.query_binary_values(f"SENS{n}:FUNC:RES:BUFB?", datatype="f")
        truth = 1e-3 * bench.world.output_power_mW()[n - 1]
        assert len(a) == len(b) == 10 and np.allclose([*a, *b], truth, rtol=0.01)
        m.write(f"SENS{n}:FUNC:LOOP 1")  # the guide's last step: loops done
        assert m.query(f"SENS{n}:FUNC:STAT?") == "LOGGING_STABILITY,COMPLETE"
        m.write("*RST")
