"""The monitor photodiodes on the wire: ``MEAS:POW?``, ``MEAS:POW:ALL?`` and ``Switch.powers()``."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from firmware.controller.measure import FLOOR_DBM, FLOOR_MW, in_unit
from firmware.driver import LAUNCH_MW
from firmware.scpi_errors import MESSAGES
from firmware.sdk import Switch, SwitchError
from photonics.errors import SettingsError
from tests.firmware.test_sdk import Recording
from tests.strategies import matchings

#: A measured circuit's loss may differ this much from the predicted one (cell loss spread,
#: splitter errors, crosstalk), dB.
LOSS_TOLERANCE_DB = 0.5
#: A port outside every circuit reads at least this far below the launched power, dB.
DARK_DB = 20.0

#: Small emulated switches, one per kind of mesh: feed-forward and recirculating.
SMALL = {
    "clements": Switch.emulated(ports=6, seed=3),
    "hexagonal": Switch.emulated(ports=8, mesh="hexagonal", seed=3),
}


def _readings(c, line: str) -> np.ndarray:
    reply = c.handle(line)
    assert c.errors.codes() == [], (line, c.errors.codes())
    return np.array([float(x) for x in reply.split(",")])


@pytest.mark.parametrize("mesh", SMALL)
@given(data=st.data())
def test_each_port_of_a_circuit_receives_its_partners_light_less_the_predicted_loss(
    mesh: str, data: st.DataObject
) -> None:
    """Any matching the switch can realize; the accelerators on its circuits send 1 mW each,
    the others are off."""
    sw = SMALL[mesh]
    c, n = sw.transport.controller, sw.ports
    matching = data.draw(matchings(n))
    try:
        sw.connect(matching)
    except SwitchError as err:  # a recirculating mesh cannot route every matching
        assert err.code == -221
        assume(False)
    lit = [p for pair in matching.pairs for p in pair]
    c.driver.launch_mW = LAUNCH_MW * np.isin(np.arange(n), lit)
    dbm = _readings(c, "MEAS:POW:ALL? DBM")
    for info in sw.paths().values():
        assert -dbm[info.target] == pytest.approx(info.loss_db, abs=LOSS_TOLERANCE_DB)
        assert sw.powers([info.target], unit="dBm")[0] == pytest.approx(dbm[info.target], 1e-4)
    dark = [p for p in range(n) if p not in lit]
    assert np.all(dbm[dark] < -DARK_DB) and np.all(dbm >= FLOOR_DBM)


def test_every_endpoint_sends_1_mW_by_default_and_the_units_agree() -> None:
    sw = Switch.emulated(ports=8, seed=1)
    c = sw.transport.controller
    assert np.array_equal(c.driver.launch_mW, np.full(8, 1.0))
    sw.connect([(0, 5), (1, 2), (3, 7), (4, 6)])
    mw = _readings(c, "MEAS:POW:ALL?")
    dbm = _readings(c, "measure:power:all? dbm")  # long form, any case
    assert mw.shape == dbm.shape == (8,)
    assert np.allclose(dbm, 10 * np.log10(mw), atol=1e-3)  # two reads: only the noise differs
    for info in sw.paths().values():  # the partner's light and a little crosstalk
        assert -dbm[info.target] == pytest.approx(info.loss_db, abs=LOSS_TOLERANCE_DB)
    assert float(c.handle("MEAS:POW? 5")) == pytest.approx(mw[5], rel=1e-3)
    assert float(c.handle("MEAS:POW? 5,MW")) == pytest.approx(mw[5], rel=1e-3)
    assert float(c.handle("MEAS:POWER? 5,DBM")) == pytest.approx(dbm[5], abs=1e-3)
    assert c.errors.codes() == []


def test_a_dark_port_reads_the_floor_not_a_negative_power_or_minus_infinity() -> None:
    sw = Switch.emulated(ports=4, seed=2, launch_mW=0.0)  # no light at all: noise only
    c = sw.transport.controller
    for line in ("MEAS:POW:ALL?", "MEAS:POW:ALL? DBM", "MEAS:POW? 3,DBM"):
        reply = c.handle(line)
        assert "inf" not in reply and "nan" not in reply and not reply.startswith("-3")
    dbm = sw.powers(unit="dBm")
    assert np.all((dbm >= FLOOR_DBM) & (dbm < FLOOR_DBM + 10))  # a few times the noise
    assert np.all(sw.powers() >= FLOOR_MW)
    assert in_unit([-3e-6, 0.0, FLOOR_MW / 2, 1.0], "DBM").tolist() == [FLOOR_DBM] * 3 + [0.0]
    assert in_unit([-3e-6, 2.0], "mw").tolist() == [FLOOR_MW, 2.0]


def _snapshot(c) -> tuple:
    return (
        c.driver.currents().tolist(),
        c.matching.pairs,
        c.driver.elapsed_s,  # a refused line reads no detector either
        c.driver.launch_mW.tolist(),
    )


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("MEAS:POW? 6", -222),  # 6 ports: 0..5
        ("MEAS:POW? -1", -222),
        ("MEAS:POW? 1.5", -104),
        ("MEAS:POW? one", -104),
        ("MEAS:POW?", -109),
        ("MEAS:POW? 1,DBW", -141),
        ('MEAS:POW? 1,"DBM"', -141),
        ("MEAS:POW? 1,DBM,2", -108),
        ("MEAS:POW:ALL? W", -141),
        ("MEAS:POW:ALL? 3", -141),
        ("MEAS:POW:ALL? DBM,MW", -108),
        ("MEAS:POW 1", -113),  # query only
        ("MEAS:POW:ALL", -113),
        ("ROUT:CLE;MEAS:POW? 9", -222),  # nothing on the line runs
    ],
)
def test_a_bad_measurement_queues_its_error_and_changes_nothing(line: str, code: int) -> None:
    sw = Switch.emulated(ports=6, seed=5)
    c = sw.transport.controller
    sw.connect([(0, 3)])
    before = _snapshot(c)
    assert c.handle(line) is None
    assert _snapshot(c) == before
    assert c.errors.codes() == [code]
    assert c.next_error().startswith(f'{code},"{MESSAGES[code]}')


def test_powers_sends_one_query_per_read_and_parses_numpy_arrays() -> None:
    c = Switch.emulated(ports=4, seed=1).transport.controller
    sw = Switch(Recording(c))
    sw.connect([(0, 3)])
    del sw.transport.lines[:]
    every = sw.powers()
    some = sw.powers([3, 0], unit="dBm")
    assert sw.transport.lines == ["MEAS:POW:ALL?", "MEAS:POW? 3", "MEAS:POW? 0"]
    assert isinstance(every, np.ndarray) and every.shape == (4,) and every.dtype == float
    assert some.shape == (2,) and np.allclose(some, 10 * np.log10(every[[3, 0]]), atol=1e-3)
    assert sw.powers(np.array([1]), unit="DBM").shape == (1,)  # numpy integers are ports
    assert sw.powers([]).shape == (0,)


@pytest.mark.parametrize(
    ("ports", "unit", "error", "message"),
    [
        ([4], "mW", SettingsError, r"port: expected 0 \.\. 3, got 4"),
        ([-1], "mW", SettingsError, r"port: expected 0 \.\. 3, got -1"),
        ([1.0], "mW", SettingsError, "port: expected an integer, got 1.0"),
        ([True], "mW", SettingsError, "port: expected an integer, got True"),
        ([0, "1"], "mW", SettingsError, "port: expected an integer, got '1'"),
        (2, "mW", SettingsError, "ports must be a sequence of port numbers or None"),
        ("01", "mW", SettingsError, "ports must be a sequence of port numbers or None"),
        (None, "W", SettingsError, "unit must be 'mW' or 'dBm'"),
        (None, "dBW", SettingsError, "unit must be 'mW' or 'dBm'"),
        ([0], None, SettingsError, "unit must be 'mW' or 'dBm'"),
        ([0], 1, SettingsError, "unit must be 'mW' or 'dBm'"),
    ],
)
def test_powers_refuses_bad_arguments_before_anything_is_sent(ports, unit, error, message) -> None:
    sw = Switch(Recording(Switch.emulated(ports=4, seed=1).transport.controller))
    sent = list(sw.transport.lines)
    with pytest.raises(error, match=message) as info:
        sw.powers(ports, unit=unit)
    assert "\n" not in str(info.value)
    assert sw.transport.lines == sent
