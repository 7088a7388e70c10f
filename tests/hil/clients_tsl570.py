"""Conformance checks of other labs' unmodified drivers (tsl570), registered with
:func:`tests.hil.clients.check`: the TSL-570 served by :class:`~hil.emulator.bench.EmulatedBench`,
driven over a real socket by QMI's ``qmi.instruments.santec.Santec_Tsl570`` (its ``tcp:host:port``
transport; commands and replies framed with CR, as the instrument's delimiter setting is at
power-on). Its ``open()`` reads the ranges (``:WAV:MIN?``, ``:WAV:FREQ:MAX?``, ``:POW:UNIT?``);
every setter writes its command then reads ``:SYST:ERR?`` and ``:SYST:ALER?`` until
``0,"No error"`` and ``No alerts.``, and raises on anything else. (pymeasure's ``TSL570`` checks
are in :mod:`tests.hil.clients`.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from hil.emulator.bench import EmulatedBench
from hil.emulator.instruments.lasers import thz
from tests.hil.clients import check, plain

NAME = "tsl570"
#: The state each check starts and ends from: Legacy units, dBm, output off, no trigger wait.
FRESH = ":SYST:COMM:COD 0;:POW:UNIT 0;:WAV:UNIT 0;:POW:STAT 0;:TRIG:INP:EXT 0;:TRIG:INP:STAN 0"


@contextlib.contextmanager
def _fresh(bench: EmulatedBench) -> Iterator[None]:
    with plain(bench, NAME) as inst:
        inst.write(f"{FRESH};*RST;*CLS")
    try:
        yield
    finally:
        with plain(bench, NAME) as inst:
            inst.write(f"{FRESH};*RST;*CLS")


@contextlib.contextmanager
def _qmi(bench: EmulatedBench) -> Iterator:
    from qmi.core.context import QMI_Context
    from qmi.instruments.santec import Santec_Tsl570

    port = bench.resources[NAME].split("::")[2]  # TCPIP0::127.0.0.1::<port>::SOCKET
    with _fresh(bench):
        tsl = Santec_Tsl570(QMI_Context("tsl570_check"), NAME, f"tcp:127.0.0.1:{port}")
        tsl.open()
        try:
            yield tsl
            assert tsl.get_errors() == []  # SYST:ERR? and SYST:ALER? both empty
        finally:
            tsl.close()


def _laser(bench: EmulatedBench):
    return bench.world.laser(bench.servers[NAME].handler.laser)


@check(NAME)
def qmi_tsl570_opens_with_its_ranges(bench: EmulatedBench) -> None:
    with _qmi(bench) as tsl:
        idn = tsl.get_idn()
        assert (idn.vendor, idn.model, idn.version) == ("SANTEC", "TSL-570", "0026.0026.0011")
        assert (tsl.get_minimum_wavelength(), tsl.get_maximum_wavelength()) == (1480.0, 1640.0)
        low, high = tsl.get_minimum_frequency(), tsl.get_maximum_frequency()
        assert (low, high) == pytest.approx((thz(1640), thz(1480)), abs=1e-5)
        assert tsl.get_power_level_unit() == "dBm"
        assert (tsl.get_minimum_power_level(), tsl.get_maximum_power_level()) == (-15.0, 13.0)
        assert tsl.operation_complete()
        tsl.clear()
        tsl.reset()


@check(NAME)
def qmi_tsl570_wavelength_frequency_and_fine_tuning(bench: EmulatedBench) -> None:
    with _qmi(bench) as tsl:
        tsl.set_wavelength(1551.1234)
        assert tsl.get_wavelength() == 1551.1234 and _laser(bench).wavelength_nm == 1551.1234
        assert tsl.get_frequency() == pytest.approx(thz(1551.1234), abs=1e-5)
        tsl.set_frequency(193.1)
        assert tsl.get_frequency() == 193.1
        assert _laser(bench).wavelength_nm == pytest.approx(thz(193.1), abs=1e-6)
        tsl.set_wavelength_unit_to_thz()
        assert tsl.get_wavelength_unit() == "THz"
        tsl.set_wavelength_unit_to_nm()
        assert tsl.get_wavelength_unit() == "nm"
        tsl.set_wavelength_fine(-12.34)
        assert tsl.get_wavelength_fine() == -12.34
        tsl.disable_finetuning_operation()
        assert tsl.get_wavelength_fine() == 0.0
        with pytest.raises(ValueError):  # the driver's own check of the manual's range
            tsl.set_wavelength(1700.0)


@check(NAME)
def qmi_tsl570_power_output_and_coherence(bench: EmulatedBench) -> None:
    with _qmi(bench) as tsl:
        tsl.set_power_level(3.0)
        assert tsl.get_power_level() == 3.0
        assert _laser(bench).power_mW == pytest.approx(10**0.3)
        assert tsl.get_optical_output_status() == "OFF" and tsl.get_actual_power() == -120.0
        tsl.set_optical_output_status(True)
        assert tsl.get_optical_output_status() == "ON" and _laser(bench).on
        assert tsl.get_actual_power() == 3.0
        tsl.set_power_level_unit_to_mw()
        assert tsl.get_power_level_unit() == "mW" and tsl.get_maximum_power_level() == 20.0
        tsl.set_power_level(2.5)
        assert _laser(bench).power_mW == 2.5 and tsl.get_actual_power() == 2.5
        tsl.set_power_level_unit_to_dbm()
        tsl.set_coherence_control_status("ON")
        assert tsl.get_coherence_control_status() == "ON"
        tsl.set_coherence_control_status(False)
        assert tsl.get_coherence_control_status() == "OFF"
        tsl.set_optical_output_status("OFF")
        assert not _laser(bench).on


@check(NAME)
def qmi_tsl570_sweep_trigger_and_logging(bench: EmulatedBench) -> None:
    with _qmi(bench) as tsl:
        tsl.set_sweep_start_wavelength(1520.0)
        tsl.set_sweep_stop_wavelength(1530.0)
        assert (tsl.get_sweep_start_wavelength(), tsl.get_sweep_stop_wavelength()) == (
            1520.0,
            1530.0,
        )
        assert tsl.get_sweep_start_frequency() == pytest.approx(thz(1520.0), abs=1e-5)
        tsl.set_sweep_mode(1)
        tsl.set_sweep_speed(10)
        tsl.set_sweep_dwell(0.5)
        tsl.set_sweep_delay(1.5)
        tsl.set_sweep_cycles(2)
        assert (tsl.get_sweep_mode(), tsl.get_sweep_speed()) == (1, 10.0)
        assert (tsl.get_sweep_dwell(), tsl.get_sweep_delay(), tsl.get_sweep_cycles()) == (
            0.5,
            1.5,
            2,
        )
        tsl.set_trigger_output_timing_mode(3)
        tsl.set_trigger_output_period_mode(0)
        tsl.set_trigger_output_step(0.5)
        assert tsl.get_trigger_output_timing_mode() == 3
        assert tsl.get_trigger_output_period_mode() == 0
        assert tsl.get_trigger_output_step() == 0.5
        assert tsl.get_sweep_state() == 0 and tsl.readout_points() == 0
        tsl.set_sweep_state(1)
        assert tsl.get_sweep_state() == 1  # polled: the virtual clock runs it to its end
        assert tsl.get_sweep_state() == 0
        assert tsl.readout_points() == 21
        assert tsl.readout_data() == pytest.approx([1520.0 + 0.5 * k for k in range(21)])
        tsl.start_repeating_sweep()
        assert tsl.get_sweep_state() == 1
        tsl.set_sweep_state(0)
        assert tsl.get_sweep_state() == 0
        tsl.set_sweep_start_frequency(197.0)
        assert tsl.get_sweep_start_frequency() == 197.0
        tsl.set_sweep_stop_frequency(196.0)
        assert tsl.get_sweep_stop_frequency() == 196.0
        tsl.issue_soft_trigger()  # nothing stands by: accepted, nothing starts
        assert tsl.get_sweep_state() == 0


@check(NAME)
def qmi_tsl570_shutdown_and_reboot(bench: EmulatedBench) -> None:
    with _qmi(bench) as tsl:
        tsl.set_wavelength(1560.0)
        tsl.set_optical_output_status(True)
        tsl.shutdown()  # on the instrument the connection goes too; here the light only
        assert not _laser(bench).on
        tsl.reboot()
        assert tsl.get_wavelength() == 1550.0 and tsl.get_power_level() == 0.0
