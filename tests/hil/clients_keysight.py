"""Conformance checks of other labs' unmodified drivers (keysight), registered with
:func:`tests.hil.clients.check`: PyOctal's ``Agilent8164B`` (``pyoctal`` on PyPI, the optical chip
testing library of christina-chang-tw/PyOctal) on the served 8164B, whose defaults are this
bench's configuration: the laser in slot 0, the power sensor in slot 2.

How it is connected, as shipped: ``Agilent8164B(rm=...)`` takes a resource manager and
``connect(address)`` opens the address only if the manager lists it and its first four characters
are a known interface; it compares them with ``"TCPIP"`` and ``"USB"`` too, which four characters
never equal, so it accepts only ASRL and GPIB addresses. The checks therefore open the served
TCPIP resource with pyvisa themselves and give it to the driver in ``_instr``, the attribute
``connect`` sets; every command is then sent by the library's own methods. Methods left out
because they send what the programming guide does not define (the real instrument refuses them
too): ``set_sweep_mode`` and ``set_sweep_tdwell`` (headers without ``:WAVelength:SWEep``),
``get_trigno``/``get_sweep_trigno`` (``int()`` of the NR3 seconds ``:EXPTime?`` replies),
``set_detect_func_params("stability", ...)`` (a line break inside the header) and
``run_laser_sweep_auto`` (all of these, and the trigger responses ``ignored``/``stfinished``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import numpy as np

from hil.emulator.bench import EmulatedBench
from hil.visa import resource_manager
from tests.hil.clients import TIMEOUT_MS, check

LASER = "8164B"


@contextlib.contextmanager
def _pyoctal(bench: EmulatedBench) -> Iterator:
    """PyOctal's Agilent8164B on the served mainframe (see the module docstring)."""
    from pyoctal.instruments import Agilent8164B

    manager = resource_manager()
    inst = Agilent8164B(rm=manager)  # the library's defaults: laser slot 0, sensor slot 2
    resource = manager.open_resource(
        bench.resources["laser"], read_termination="\n", write_termination="\n"
    )
    resource.timeout = TIMEOUT_MS
    inst._instr = resource  # what connect() would set for an address it accepts
    try:
        yield inst
        inst.opc()  # every line written has run before the next check starts
    finally:
        resource.close()


@check("laser")
def pyoctal_8164b_laser(bench: EmulatedBench) -> None:
    world = bench.world
    with _pyoctal(bench) as lms:
        assert lms.get_idn().serialno and "8164B" in lms.query("*IDN?")
        assert (lms.get_laser_wav_min(), lms.get_laser_wav_max()) == (1460e-9, 1640e-9)
        lms.unlock("1234")
        lms.set_laser_wav(1552.5)  # :wavelength:fixed, nm
        assert math.isclose(lms.get_laser_wav(), 1552.5e-9, rel_tol=1e-9)
        assert world.laser(LASER).wavelength_nm == 1552.5
        lms.set_laser_pow(3)
        lms.opc()
        assert math.isclose(world.laser(LASER).power_mW, 10**0.3, rel_tol=1e-6)
        lms.set_laser_state(1)
        lms.opc()  # a round trip: the server has run the write before the world is read
        assert world.laser(LASER).on
        lms.set_laser_unit("W")
        assert lms.query(f"{lms.laser}:power:unit?") == "1"
        lms.set_laser_am_state(0)
        lms.set_laser_state(0)
        lms.opc()
        assert not world.laser(LASER).on
        lms.reset()


@check("laser")
def pyoctal_8164b_sensor_reads_the_chip(bench: EmulatedBench) -> None:
    world = bench.world
    with _pyoctal(bench) as lms:
        lms.set_wavelength(1550)  # the sensor's and the laser's
        lms.set_detect_avgtime(0.01)
        lms.set_detect_autorange(1)
        lms.set_detect_prange(-10)
        lms.set_detect_calibration_val(0)
        lms.set_unit(source="dBm", sensor="Watt")
        lms.set_laser_pow(0)
        lms.set_laser_state(1)
        lms.opc()
        try:
            truth_W = 1e-3 * float(world.output_power_mW(averaging_s=0.01)[0])
            assert math.isclose(lms.get_detect_pow(), truth_W, rel_tol=0.05)
            lms.set_detect_unit("dBm")
            assert math.isclose(lms.get_detect_pow(), 10 * math.log10(1e3 * truth_W), abs_tol=0.2)
        finally:
            lms.set_laser_state(0)
        lms.reset()


@check("laser")
def pyoctal_8164b_logging(bench: EmulatedBench) -> None:
    world = bench.world
    with _pyoctal(bench) as lms:
        lms.set_detect_unit("Watt")
        lms.set_laser_state(1)
        try:
            lms.set_detect_func_params("logging", (32, 0.001))
            lms.set_detect_func_mode(("logg", "star"))
            start = world.clock()
            while lms.get_detect_func_state().endswith("progress"):
                pass
            assert lms.get_detect_func_state() == "logging_stability,complete"
            logged = np.array(lms.get_detect_func_result())  # float32, W
            ends = start + 1e-3 * np.arange(1, 33)
            truth = 1e-3 * world.output_power_mW(ends, averaging_s=1e-3)[:, 0]
            assert logged.shape == (32,) and np.allclose(logged, truth, rtol=0.05)
            lms.set_detect_func_params("minmax", ("wind", 10))
            assert lms.query(f"{lms.detect}:function:parameter:minmax?") == "WIND,10"
        finally:
            lms.set_laser_state(0)
        lms.reset()


@check("laser")
def pyoctal_8164b_sweep_and_triggers(bench: EmulatedBench) -> None:
    with _pyoctal(bench) as lms:
        lms.set_trig_config(3)  # LOOPback
        assert lms.query("trigger:configuration?") == "3"
        lms.set_trig_config(1)
        lms.set_trig_output("STF")  # unnumbered: slot 0, the laser
        assert lms.get_trig_output() == "STF"
        lms.set_trig_responses(2, 1, "SME", "DIS")  # the sensor
        assert lms.query("trigger2:channel1:input?") == "SME"
        lms.set_trig_contmode_state(2, 1, 0)
        assert lms.query("initiate2:channel1:continuous?") == "0"
        lms.set_sweep_start_stop(1540, 1541)
        lms.set_sweep_step(250)  # pm
        lms.set_sweep_speed(50)
        lms.set_sweep_repeat_mode("ONEW")
        lms.set_sweep_cycles(1)
        assert math.isclose(float(lms.query(f"{lms.laser}:wavelength:sweep:step?")), 0.25e-9)
        exp = float(lms.query("source:channel:wavelength:sweep:exp?"))
        assert math.isclose(exp, 1 / 50 + 5 * 0.0, rel_tol=1e-9)  # stepped: no dwell set
        lms.set_sweep_state("start")
        assert lms.get_sweep_state() in (0, 1)
        lms.set_sweep_soft_trig()
        lms.set_sweep_state("stop")
        assert lms.get_sweep_state() == 0
        lms.disconnect()  # display:lockout off
        assert lms.query("display:lockout?") == "0"
        lms.reset()
