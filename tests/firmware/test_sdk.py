from dataclasses import replace

import numpy as np
import pytest

from firmware.controller.schedule import MAX_SCHEDULE_STEPS
from firmware.sdk import InProcessTransport, Switch, SwitchError
from firmware.store import Store
from photonics.calibration.selfcal import worst_isolation_db
from photonics.devices.thermal import CROSSTALK_MATTERS_RAD, predicted_crosstalk_rad
from photonics.errors import InvalidInputError, SettingsError
from photonics.matching import Matching


class Recording(InProcessTransport):
    """A transport that keeps every line it sent, as an instrument log would."""

    def __init__(self, controller) -> None:
        super().__init__(controller)
        self.lines: list[str] = []
        self.closed = False

    def write(self, line: str) -> None:
        self.lines.append(line)
        super().write(line)

    def query(self, line: str) -> str:
        self.lines.append(line)
        return super().query(line)

    def close(self) -> None:
        self.closed = True


def test_open_finds_a_transport_by_the_resource_prefix_and_speaks_only_lines() -> None:
    controller = Switch.emulated(ports=4, seed=1).transport.controller
    made = []

    def factory(resource: str) -> Recording:
        made.append(resource)
        return Recording(controller)

    with Switch.open("LOOP0::switch::INSTR", transports={"LOOP": factory}) as sw:
        assert sw.ports == 4
        sw.connect(Matching([(0, 3)], 4))
        assert sw.matching().pairs == ((0, 3),)
        assert controller.matching.pairs == ((0, 3),)
    assert made == ["LOOP0::switch::INSTR"] and sw.transport.closed
    assert "ROUT:MATC 0,3" in sw.transport.lines
    with pytest.raises(SettingsError, match="no transport for 'TCPIP0::h::5025::SOCKET'"):
        Switch.open("TCPIP0::h::5025::SOCKET", transports={"LOOP": factory})
    with pytest.raises(SettingsError, match="mesh must be one of"):
        Switch.emulated(mesh="banyan")


def test_instrument_errors_are_exceptions_with_the_scpi_code_and_the_queue_is_drained() -> None:
    sw = Switch.emulated(ports=4, seed=1)
    sw.connect([(0, 1)])
    with pytest.raises(SwitchError) as info:
        sw.add(1, 2)
    assert info.value.code == -221 and "port 1" in info.value.message
    assert info.value.command == "ROUT:CONN 1,2"
    assert sw.errors() == []  # the exception took its error off the queue
    sw.transport.write("BOGUS;ROUT:CLE")
    sw.transport.write("HEAT:CURR 0,99")
    assert [code for code, _ in sw.errors()] == [-113, -222]
    assert sw.matching().pairs == ((0, 1),)  # neither line changed anything
    with pytest.raises(SwitchError) as info:
        sw._numbers("ROUTe:PATH", 3)  # a query that fails
    assert info.value.code == -221


def test_paths_and_heaters_read_back_what_the_switch_applied() -> None:
    sw = Switch.emulated(ports=4, seed=1)
    sw.connect([(0, 2), (1, 3)])
    paths = sw.paths()
    assert sorted(paths) == [0, 1, 2, 3]
    assert all(paths[p].target == sw.matching().partner(p) for p in paths)
    heaters = sw.heaters()
    assert heaters.shape == (int(sw._ask("HEATer:COUNt")),) and heaters.max() > 0
    sw.set_heaters(heaters)  # the same currents again: no hardware time
    assert sw.set_heaters(heaters) == 0.0
    assert sw.status()["manual_heaters"]


def _recorded(**kw) -> tuple[Switch, Recording]:
    """A switch whose every line is recorded, the lines of opening it forgotten."""
    sw = Switch(Recording(Switch.emulated(**kw).transport.controller))
    sw.transport.lines.clear()
    return sw, sw.transport


INJECTION = "4,5;ROUT:DISC 0;ROUT:CONN 6"


@pytest.mark.parametrize(
    "call",
    [
        lambda sw: sw.add(INJECTION, 7),
        lambda sw: sw.add(4.0, 5.0),  # refused like connect refuses floats
        lambda sw: sw.add(True, 1),  # a bool is no port
        lambda sw: sw.add(1, 4),
        lambda sw: sw.disconnect(INJECTION),
        lambda sw: sw.disconnect(2.0),
        lambda sw: sw.set_heater(INJECTION, 1.0),
        lambda sw: sw.set_heater(0, "1;*RST"),
        lambda sw: sw.set_heater(10**6, 1.0),
        lambda sw: sw.set_heater(0, float("nan")),
        lambda sw: sw.set_heaters([0.0, "1"]),
        lambda sw: sw.lock_ring(INJECTION),
        lambda sw: sw.unlock_ring(INJECTION),
        lambda sw: sw.lock_ring(4),
        lambda sw: sw.ring_status("0;*RST"),
        lambda sw: sw.set_interlock(None),
        lambda sw: sw.set_interlock(""),
        lambda sw: sw.set_interlock(0),
        lambda sw: sw.set_interlock("OFF"),
        lambda sw: sw.run_schedule(0),
        lambda sw: sw.run_schedule(-3),
        lambda sw: sw.run_schedule("2"),
        lambda sw: sw.run_schedule(2.0),
        lambda sw: sw.run_schedule(True),
        lambda sw: sw.set_limits(current_mA="1;*RST"),
        lambda sw: sw.set_limits(power_mW=float("inf")),
        lambda sw: sw.set_limits(current_mA=1.0, power_mW=-1.0),
        lambda sw: sw.load_schedule([([(0, 1)], 1e-3), ([(0, 2.0)], 1e-3)]),
        lambda sw: sw.load_schedule([([(0, 1)], 0.0)]),
        lambda sw: sw.load_schedule([([(0, 1)], "1ms")]),
        lambda sw: sw.load_schedule([([(0, 1)], 1e-3)] * (MAX_SCHEDULE_STEPS + 1)),
    ],
)
def test_a_bad_argument_is_refused_before_a_byte_is_sent(call) -> None:
    sw, wire = _recorded(ports=4, seed=1, rings=True)
    with pytest.raises(InvalidInputError):
        call(sw)
    assert wire.lines == []


def test_a_schedule_is_loaded_in_one_line_and_a_failed_load_keeps_the_previous(tmp_path) -> None:
    sw, wire = _recorded(ports=4, seed=1, state_dir=tmp_path)
    sw.load_schedule([([(0, 1)], 1e-3), ([(0, 2), (1, 3)], 2e-3)])
    assert wire.lines[0] == "SCH:LOAD 0.001,2,0,1,0.002,4,0,2,1,3"
    assert [line for line in wire.lines if not line.endswith("?")] == [wire.lines[0]]
    c = sw.transport.controller
    c.store.write = lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    with pytest.raises(SwitchError) as info:
        sw.load_schedule([([(2, 3)], 5e-3)])
    assert info.value.code == -310
    assert [s.plan.matching.pairs for s in c.schedule] == [((0, 1),), ((0, 2), (1, 3))]
    del c.store.write
    sw.load_schedule([])
    assert c.schedule == []


def test_a_switch_repr_gives_its_model_ports_and_calibrated_state() -> None:
    assert repr(Switch.emulated(ports=8, mesh="clements", seed=1)) == (
        "<Switch EMU-CLEMENTS-8: 8 ports, calibrated>"
    )
    fresh = Switch.emulated(ports=4, mesh="hexagonal", calibrated=False)
    assert repr(fresh) == "<Switch EMU-HEXAGONAL-4: 4 ports, not calibrated>"

    class Gone(InProcessTransport):
        """The switch answered at connection, then the line dropped."""

        def query(self, line: str) -> str:
            raise ConnectionResetError("connection reset by peer")

    sw = Switch.emulated(ports=4)
    sw.transport = Gone(sw.transport.controller)
    assert repr(sw) == "<Switch: 4 ports; state unreadable: connection reset by peer>"


def _worst_isolation_db(switch: Switch, trials: int = 20) -> float:
    """Worst port isolation (dB) of ``trials`` random perfect matchings as the switch applies
    them, by the emulated chip's own transfer (its truth)."""
    driver = switch.transport.controller.driver
    worst = np.inf
    for trial in range(trials):
        matching = Matching.random(switch.ports, np.random.default_rng(trial))
        switch.connect(matching)
        power = np.abs(driver.chip.transfer(driver.currents())) ** 2
        worst = min(worst, worst_isolation_db(power, matching.to_permutation()))
    return worst


def test_calibrate_calibrates_thermal_crosstalk_where_the_layout_makes_it_matter(tmp_path) -> None:
    # a dense 6-port chip (60 x 20 um pitch): crosstalk costs isolation, so it is calibrated,
    # stored with the rest and compensated when routes are set
    dense = Switch.emulated(
        ports=6, seed=2, pitch_um=(60.0, 20.0), calibrated=False, state_dir=tmp_path
    )
    layout = dense.transport.controller.heater_layout
    assert predicted_crosstalk_rad(layout, 15) > CROSSTALK_MATTERS_RAD
    dense.calibrate(save=True)
    stored = Store(tmp_path).read_calibration()
    assert stored is not None and stored.crosstalk is not None
    true_K = dense.transport.controller.driver.chip.crosstalk.toarray()[:15, :15]
    assert np.abs(stored.crosstalk[:15, :15] - true_K).max() < 0.25 * true_K.max()
    assert _worst_isolation_db(dense) >= 17.0
    # the same chip calibrated without its crosstalk isolates far worse
    blind = replace(stored, crosstalk=None)
    dense.transport.controller.use_calibration(blind, stored=False)
    assert _worst_isolation_db(dense) < 12.0
    # the default layout: an MZI's other arm 60 um from its neighbour's heater (0.048 rad),
    # calibrated too; a sparse chip (a 127 um mode pitch) predicts little, and none is calibrated
    default = Switch.emulated(ports=8, calibrated=False).transport.controller.heater_layout
    assert predicted_crosstalk_rad(default, 28) > CROSSTALK_MATTERS_RAD
    sparse = Switch.emulated(ports=4, seed=1, pitch_um=(300.0, 127.0), calibrated=False)
    layout = sparse.transport.controller.heater_layout
    assert predicted_crosstalk_rad(layout, 6) < CROSSTALK_MATTERS_RAD / 10
    sparse.calibrate(save=False)
    assert sparse.transport.controller.calibration.crosstalk is None


def test_a_pitch_is_for_feed_forward_chips_only() -> None:
    with pytest.raises(SettingsError, match="pitch_um sets a feed-forward chip's column"):
        Switch.emulated(ports=8, mesh="hexagonal", pitch_um=(60.0, 20.0))
