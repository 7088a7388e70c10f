"""Conformance checks of other labs' unmodified drivers (pm100d), registered with
:func:`tests.hil.clients.check`: the PM100D served by :class:`~hil.emulator.bench.EmulatedBench`
on chip output 0, driven over real sockets by

- the ThorlabsPM100 package (1.2.2: ``ThorlabsPM100.ThorlabsPM100`` on a pyvisa-py resource;
  one property or method per command of the manual's list): ``MEAS:POW`` written without
  ``?``, the range, zero, attenuation, filter and beam-diameter nodes, ``STAT:OPER:COND?``;
- QCoDeS contrib's ``Thorlab_PM100D`` (its constructor sets the STAT:OPER transition filters,
  sends ``ABOR;:STAT:OPER?``, ``INIT``; its power is ``MEAS:POW`` then ``FETC?``);
- QMI's ``qmi.instruments.thorlabs.pm100d.Thorlabs_PM100D`` over its ``tcp:host:port``
  transport.

Two faults of QCoDeS's driver itself show (they would on the instrument too, the checks name
them): its ``averaging`` parameter's ``set_cmd='AVER'`` has no ``{}``, so the constructor's
``averaging(300)`` sends ``AVER`` without a value (-109, missing parameter: the check reads that
one error back and expects nothing else); its ``wavelength`` and ``beam_diameter`` getters have
a ``scale`` but no ``get_parser`` (a str divided by a float: TypeError), so those two are set
through the driver and read from the instrument's state.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator

import numpy as np

from hil.emulator.bench import EmulatedBench
from hil.emulator.instruments.pm100d import responsivity
from tests.hil.clients import check, plain

NAME = "pm100d"
REL = 0.01  # the noise floor (1e-9 W) against the 0.8 uW on output 0: some 8 sigma


@contextlib.contextmanager
def _lit(bench: EmulatedBench) -> Iterator[Callable[[], float]]:
    """The TSL-570 on at 1550 nm and the heaters at zero, the chip as it starts (the laser, its
    wavelength and the heaters as they were again after): yields the true power on the meter's
    output, W. So lit, output 0 sees 0.8 uW. The TSL-570 checks on the same bench leave it at
    other wavelengths (its ``*RST`` keeps them) and the Qontrol checks other heater states, where
    output 0 can see a few nW, and the meter's noise (1e-9 W) is 20 % of a reading."""
    world, port = bench.world, bench.servers[NAME].handler.port
    wavelength, before = world.laser("TSL-570").wavelength_nm, world.driver.currents()
    channels = range(before.size)
    world.driver.write(channels, np.zeros(before.size))
    world.set_laser("TSL-570", on=True, wavelength_nm=1550.0)
    world.wait_settled()
    try:
        yield lambda: 1e-3 * float(world.output_power_mW()[port])
    finally:
        world.set_laser("TSL-570", on=False, wavelength_nm=wavelength)
        world.driver.write(channels, before)


@contextlib.contextmanager
def _fresh(bench: EmulatedBench) -> Iterator[None]:
    """The meter as ``*RST`` and ``*CLS`` leave it, before the check (an earlier check's
    wavelength, zero or events do not carry over) and after it, whatever happened."""
    with plain(bench, NAME) as inst:
        inst.write("*RST;*CLS")
    try:
        yield
    finally:
        with plain(bench, NAME) as inst:
            inst.write("*RST;*CLS")


@contextlib.contextmanager
def _thorlabspm100(bench: EmulatedBench) -> Iterator:
    from ThorlabsPM100 import ThorlabsPM100

    with _fresh(bench), plain(bench, NAME) as inst:
        yield ThorlabsPM100(inst=inst)


@contextlib.contextmanager
def _qcodes(bench: EmulatedBench) -> Iterator:
    from qcodes_contrib_drivers.drivers.Thorlabs.PM100D import Thorlab_PM100D

    with _fresh(bench):
        pm = Thorlab_PM100D("pm100d_check", bench.resources[NAME], visalib="@py")
        try:
            # the driver's own fault (module docstring): AVER without a value, nothing else
            assert pm.ask("SYST:ERR?").startswith("-109,")
            assert pm.ask("SYST:ERR?").startswith("0,")
            yield pm
        finally:
            pm.close()


@contextlib.contextmanager
def _qmi(bench: EmulatedBench) -> Iterator:
    from qmi.core.context import QMI_Context
    from qmi.instruments.thorlabs.pm100d import Thorlabs_PM100D

    port = bench.resources[NAME].split("::")[2]  # TCPIP0::127.0.0.1::<port>::SOCKET
    with _fresh(bench):
        pm = Thorlabs_PM100D(QMI_Context("pm100d_check"), NAME, f"tcp:127.0.0.1:{port}")
        pm.open()
        try:
            yield pm
            pm.reset()  # *CLS, *RST, *OPC?, and its own SYST:ERR? check
        finally:
            pm.close()


# ---- ThorlabsPM100 -------------------------------------------------------------------------------
@check(NAME)
def thorlabspm100_power_and_wavelength(bench: EmulatedBench) -> None:
    with _lit(bench) as truth, _thorlabspm100(bench) as pm:
        assert math.isclose(pm.read, truth(), rel_tol=REL)
        pm.measure.scalar.power()  # MEAS:POW written without '?': a reading for FETCh?
        assert math.isclose(pm.fetch, truth(), rel_tol=REL)
        assert pm.getconfigure == "POW"
        pm.sense.correction.wavelength = 1310
        assert pm.sense.correction.wavelength == 1310.0
        assert (pm.sense.correction.minimum_wavelength, pm.sense.correction.maximum_wavelength) == (
            800.0,
            1700.0,
        )
        pm.measure.scalar.current.dc()
        assert math.isclose(pm.fetch, truth() * responsivity(1310), rel_tol=REL)
        pm.sense.power.dc.unit = "DBM"
        assert pm.sense.power.dc.unit == "DBM"
        pm.measure.scalar.power()
        assert math.isclose(pm.fetch, 10 * math.log10(1e3 * truth()), abs_tol=0.05)
        pm.sense.average.count = 10
        assert pm.sense.average.count == 10
        assert pm.system.sensor.idn.startswith("S122C,") and pm.system.version == 1999.0


@check(NAME)
def thorlabspm100_range_zero_attenuation_filter_beam(bench: EmulatedBench) -> None:
    with _lit(bench) as truth, _thorlabspm100(bench) as pm:
        r = responsivity(1550)
        pm.sense.power.dc.range.auto = "OFF"
        pm.sense.power.dc.range.upper = 1e-3  # 1 mW at 0.98 A/W: the 5 mA current range
        assert pm.sense.power.dc.range.auto == 0
        assert math.isclose(pm.sense.power.dc.range.upper, 5e-3 / r, rel_tol=1e-6)
        assert math.isclose(pm.sense.power.dc.range.minimum_upper, 5e-8 / r, rel_tol=1e-6)
        pm.sense.current.dc.range.auto = "ON"
        assert pm.sense.power.dc.range.auto == 1
        pm.sense.correction.loss.input.magnitude = 10  # a 10 dB attenuator before the sensor
        assert pm.sense.correction.loss.input.magnitude == 10.0
        assert math.isclose(pm.read, 10 * truth(), rel_tol=REL)
        pm.sense.correction.loss.input.magnitude = 0
        pm.input.pdiode.filter.lpass.state = 1
        assert pm.input.pdiode.filter.lpass.state == 1
        pm.sense.correction.beamdiameter = 2
        assert (pm.sense.correction.beamdiameter, pm.sense.correction.default_beamdiameter) == (
            2.0,
            9.5,
        )
        pm.sense.correction.collect.zero.initiate()  # lit: the light becomes the zero
        assert pm.sense.correction.collect.zero.state == 0
        assert math.isclose(pm.sense.correction.collect.zero.magnitude, truth() * r, rel_tol=REL)
        assert abs(pm.read) < REL * truth()  # the noise left
        assert pm.status.operation.condition == 256  # the sensor connected, no data held


@check(NAME)
def thorlabspm100_status_registers(bench: EmulatedBench) -> None:
    with _thorlabspm100(bench) as pm:
        op = pm.status.operation
        op.ptransition, op.ntransition, op.enable = 512, 0, 512
        assert (op.ptransition, op.ntransition, op.enable) == (512, 0, 512)
        pm.initiate.immediate()  # a reading held: data ready, bit 9
        assert op.condition == 768 and op.event == 512 and op.event == 0
        pm.abort()
        assert op.condition == 256
        for reg in (pm.status.questionable, pm.status.measurement, pm.status.auxillary):
            reg.enable = 4
            assert reg.enable == 4 and reg.condition == 0 and reg.event == 0


# ---- QCoDeS contrib ------------------------------------------------------------------------------
@check(NAME)
def qcodes_pm100d(bench: EmulatedBench) -> None:
    # one instance for every property: the driver's constructor sleeps 5 s of its own
    meter = bench.servers[NAME].handler
    with _lit(bench) as truth, _qcodes(bench) as pm:
        assert pm.get_idn()["model"] == "PM100D"
        assert math.isclose(pm.power(), truth(), rel_tol=REL)  # CONF, ABOR, INIT, MEAS, FETC?
        assert math.isclose(pm.current(), truth() * responsivity(1550), rel_tol=REL)
        assert pm.frequency() == 0.0  # the bench's light is continuous
        assert pm.zero_value() == 0.0 and pm.current_range() >= truth() * responsivity(1550)
        pm.attenuation(3.0)
        assert pm.attenuation() == 3.0
        assert math.isclose(pm.power(), truth() * 10**0.3, rel_tol=REL)
        pm.attenuation(0.0)
        pm.auto_range(False)
        pm.power_range(1e-6)
        assert not pm.auto_range() and pm.current_range() == 5e-6
        assert math.isclose(pm.power_range(), 5e-6 / responsivity(1550), rel_tol=1e-6)
        pm.auto_range(True)
        assert pm.auto_range()
        pm.wavelength(1.31e-6)  # set through the driver, read from the meter (module docstring)
        pm.beam_diameter(2e-3)
        pm.ask("*OPC?")  # a round trip: both writes have run
        assert math.isclose(meter.wavelength_nm, 1310.0, rel_tol=1e-9)
        assert math.isclose(meter.beam_mm, 2.0, rel_tol=1e-9)
        assert pm.averaging() == "1"  # AVER 300 never reached it


# ---- QMI -----------------------------------------------------------------------------------------
@check(NAME)
def qmi_pm100d(bench: EmulatedBench) -> None:
    with _lit(bench) as truth, _qmi(bench) as pm:
        idn = pm.get_idn()
        assert (idn.vendor, idn.model) == ("Thorlabs", "PM100D")
        sensor = pm.get_sensor_info()
        assert sensor.name == "S122C" and sensor.flags == 289
        assert math.isclose(pm.get_power(), truth(), rel_tol=REL)
        pm.set_wavelength(1310.0)
        assert pm.get_wavelength() == 1310.0
        assert math.isclose(pm.get_current(), truth() * responsivity(1310), rel_tol=REL)
        pm.set_range(1e-4)  # 1e-4 W at 1310 nm: the 500 uA current range
        assert not pm.get_autorange()
        assert math.isclose(pm.get_range(), 5e-4 / responsivity(1310), rel_tol=1e-6)
        pm.set_autorange(True)
        assert pm.get_autorange() and pm.get_range_in_use() == pm.get_range()
