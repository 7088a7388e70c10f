import re
from pathlib import Path

import numpy as np
import pytest

from firmware.commands import MAX_LINE, is_query
from firmware.controller import Controller
from firmware.reference import SIZES, reference
from firmware.scpi_errors import MESSAGES
from firmware.sdk import Switch, SwitchError
from photonics.errors import SettingsError
from photonics.matching import Matching
from tests.firmware.state import capture

DOCS = Path(__file__).resolve().parents[2] / "docs" / "commands.md"


def _switch(tmp_path: Path | None = None, **kw) -> tuple[Switch, Controller]:
    sw = Switch.emulated(**{"ports": 6, "seed": 5, **kw}, state_dir=tmp_path)
    return sw, sw.transport.controller


def _codes(sw: Switch) -> list[int]:
    return [code for code, _ in sw.errors()]


def test_the_command_reference_is_current_and_every_example_runs(tmp_path) -> None:
    assert DOCS.read_text() == reference(), "run `make docs`"
    examples = re.findall(r"^Example: `(.+)`$", DOCS.read_text(), re.M)
    assert len(examples) == len(re.findall(r"^## ", DOCS.read_text(), re.M))
    c = _switch(tmp_path, ports=SIZES["ports"], rings=True)[1]
    c.handle("SCH:ADD 1ms,0,1;SCH:ADD 1ms,0,2")  # for SCH:STAR / SCH:STEP
    for line in examples:
        reply = c.handle(line)
        assert c.errors.codes() == [], (line, c.errors.codes())
        assert (reply is not None) == is_query(line), line
    assert c.handle("*IDN?").startswith("PSWITCH,EMU-CLEMENTS-8,5,")


def test_a_matching_lights_each_partner_and_leaves_the_rest_dark() -> None:
    sw, c = _switch()
    seconds = sw.connect([(0, 4), (1, 2), (3, 5)])
    assert 0 < seconds < 0.1  # channels x 0.5 ms + settling
    assert sw.matching().pairs == ((0, 4), (1, 2), (3, 5))
    for src in range(6):
        power = c.driver.detect(np.eye(6)[src])
        peer = sw.matching().partner(src)
        others = np.delete(power, peer)
        assert 10 * np.log10(power[peer] / others.max()) > 20
        circuit = sw.paths()[src]
        assert circuit.target == peer
        # the predicted loss is the cells' loss; the detectors see it within the splitter error
        assert circuit.loss_db == pytest.approx(0.5 * len(circuit.cells))
        assert -10 * np.log10(power[peer]) == pytest.approx(circuit.loss_db, abs=0.5)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("ROUT:CONN 0", -109),
        ("ROUT:CONN 0,9", -222),
        ("ROUT:CONN 0,x", -104),
        ("ROUT:CONN 0,1", -221),  # 0 is connected already
        ("ROUT:MATC 0,1,2", -109),
        ("ROUT:MATC 0,1,1,2", -224),
        ("ROUT:DISC 5", -221),  # dark
        ("ROUT:PATH? 5", -221),
        ("ROUT:REPL 5,1", -221),  # 5 is dark: nothing to replace
        ("ROUT:REPL 0,1,3", -221),  # 3 is lit: not a spare
        ("ROUT:REPL 0,1,1", -224),
        ("ROUT:REPL 0", -109),
        ("HEAT:CURR 0,10.5", -222),
        ("HEAT:CURR 999,1", -222),
        ("HEAT:ALL 1,2", -109),
        ("HEAT:CURR 0,1.5 V", -131),
        ("ROUTE:BOGUS 1", -113),
        ("SYST:POW:LIM 1e9", -222),
        ("SCH:ADD 0,0,1", -222),
        ("SCH:STEP", -221),
        ("RING:LOCK 0", -222),  # no rings on this chip
        ("CAL:LOAD", -310),  # no store
        ("ROUT:CLE;ROUT:MATC 0,1 2", -104),  # nothing on a malformed line runs
        ('ROUT:MATC "0', -150),
        ("x" * (MAX_LINE + 1), -363),
        (b"ROUT:MATC 0,1\xff", -101),
        # these once raised TypeError out of handle
        ("ROUT:MATC DEF", -224),
        ("SCH:ADD 1,DEF", -224),
        ("ROUT:MATC 0,1,DEF", -224),
        ("ROUT:MATC DEF;*OPC?", -224),
        # once read as port 1 (0 is lit here, 1 and 2 are dark)
        ("ROUT:CONN 0.99999999999999999,2", -104),
        ("SCH:LOAD 1ms,2,0,1,1ms,2,0,0", -224),  # the second step is bad: nothing loaded
        ("SCH:LOAD 1ms,2,0,1,1ms,3,0,1", -109),
    ],
)
def test_a_bad_command_changes_nothing_and_queues_its_error(line, code) -> None:
    sw, c = _switch()
    sw.connect([(0, 3)])
    before = capture(c)
    assert c.handle(line) is None
    assert capture(c) == before
    assert c.errors.codes() == [code]
    assert c.next_error().startswith(f'{code},"{MESSAGES[code]}')


def test_a_driver_failure_part_way_is_rolled_back_exactly() -> None:
    sw, c = _switch()
    sw.connect([(0, 3), (1, 2)])
    before = capture(c)
    c.driver.fail_after = 5
    with pytest.raises(SwitchError) as info:
        sw.connect([(0, 1), (2, 5)])
    assert info.value.code == -240 and "restored" in info.value.message
    assert capture(c) == before
    assert sw.connect([(0, 1), (2, 5)]) > 0  # the next attempt goes through


def test_limits_are_checked_on_the_whole_state_before_any_write() -> None:
    sw, c = _switch()
    writes = []
    real_write = c.driver.write
    c.driver.write = lambda ch, cur: writes.append(len(ch)) or real_write(ch, cur)
    power = sw.power_mW()
    sw.set_limits(power_mW=power + 1.0)  # the dark state fits, any matching does not
    with pytest.raises(SwitchError) as info:
        sw.connect([(0, 1), (2, 3), (4, 5)])
    assert info.value.code == -222 and "budget" in info.value.message
    assert writes == [] and sw.matching().pairs == ()
    with pytest.raises(SettingsError, match="budget"):
        sw.set_limits(power_mW=-1.0)  # refused by the SDK, before a byte is sent
    with pytest.raises(SwitchError) as info:
        sw.set_limits(power_mW=c._hw_budget_mW + 1)  # above the hardware's own budget
    assert "hardware" in info.value.message
    sw.set_limits(power_mW=c._hw_budget_mW)
    sw.connect([(0, 1), (2, 3), (4, 5)])
    assert writes and sw.matching().pairs == ((0, 1), (2, 3), (4, 5))


def test_the_interlock_turns_heaters_off_and_refuses_drive_until_released() -> None:
    sw = _switch()[0]
    sw.connect([(0, 3)])
    sw.set_interlock(True)
    assert np.all(sw.heaters() == 0) and sw.matching().pairs == ()
    assert sw.status()["interlock"]
    with pytest.raises(SwitchError) as info:
        sw.connect([(0, 3)])
    assert info.value.code == -221 and "interlock" in info.value.message
    with pytest.raises(SwitchError):
        sw.set_heater(0, 1.0)
    sw.set_interlock(False)
    sw.connect([(0, 3)])
    assert sw.matching().pairs == ((0, 3),)


def test_configuration_schedule_and_calibration_survive_a_restart(tmp_path) -> None:
    sw, c = _switch(tmp_path, calibrated=False)
    assert sw.status()["uncalibrated"]
    with pytest.raises(SwitchError) as info:
        sw.connect([(0, 1)])
    assert info.value.code == -221 and "calibrated" in info.value.message
    seen: list[tuple[str, int, int]] = []
    c.progress = lambda stage, done, total: seen.append((stage, done, total))
    sw.calibrate()  # and store it
    mzis = c.fabric.mesh.n_mzis
    # each stage from its start (done 0) to its end, the I-V sweeps before the fringes
    assert seen[0][:2] == ("heater I-V sweeps", 0) and seen[0][2] >= 1
    # the fringes twice, before and after the crosstalk sweeps: the default layout's crosstalk
    # matters (physics section 5.2)
    stages = [s for s, _, _ in seen]
    assert [(d, t) for s, d, t in seen if s == "MZI fringes"] == 2 * [
        (d, mzis) for d in range(mzis + 1)
    ]
    assert stages.index("crosstalk sweeps") == stages.index("MZI fringes") + mzis + 1
    sw.connect([(0, 5), (1, 4)])
    sw.load_schedule([([(0, 1)], 1e-3), ([(2, 3), (0, 4)], 2e-3)])
    saved = capture(c)
    # power cycle: a new controller and a driver whose heaters start at 0
    again, c2 = _switch(tmp_path, calibrated=False)
    restored = capture(c2)
    assert restored.currents_mA == saved.currents_mA
    assert again.matching().pairs == ((0, 5), (1, 4))
    assert restored.schedule == saved.schedule
    assert restored.calibration == saved.calibration
    assert again.calibration()["stored"] and not again.status()["uncalibrated"]


def test_a_saved_calibration_wins_over_the_factory_one_at_restart(tmp_path) -> None:
    # once: Switch.emulated(state_dir=d) (calibrated=True) came back with the factory one
    sw, c = _switch(tmp_path)
    factory = sw.calibration()
    sw.calibrate()  # and store it
    sw.connect([(0, 5)])
    saved = capture(c)
    again, c2 = _switch(tmp_path)
    assert again.calibration() == {**sw.calibration(), "stored": True} != factory
    assert capture(c2).calibration == saved.calibration
    assert capture(c2).currents_mA == saved.currents_mA


def test_a_schedule_reports_its_duty_cycle_from_the_modeled_reconfiguration_times() -> None:
    sw = _switch()[0]
    steps = [([(0, 1), (2, 3)], 5e-3), ([(0, 2), (1, 3)], 5e-3), ([(0, 3), (1, 2)], 5e-3)]
    sw.load_schedule(steps)
    run = sw.run_schedule(6)
    assert run.steps == 6 and len(run.reconfiguration_s) == 6
    assert all(t > 0 for t in run.reconfiguration_s)
    dwell = 6 * 5e-3
    assert run.duty_cycle == pytest.approx(dwell / (dwell + sum(run.reconfiguration_s)), 1e-6)
    assert sw.matching().pairs == ((0, 3), (1, 2))  # six steps end on the third matching
    assert sw.status()["schedule_running"]
    sw.stop_schedule()
    assert not sw.status()["schedule_running"]


def test_reset_clears_routes_and_keeps_calibration() -> None:
    sw, c = _switch()
    sw.connect([(0, 1)])
    sw.set_heater(20, 2.0)
    assert sw.status()["manual_heaters"]
    cal = c.calibration
    sw.reset()
    assert np.all(sw.heaters() == 0) and sw.matching() == Matching([], 6)
    assert c.calibration is cal and not sw.status()["manual_heaters"]
    assert sw.self_test()


def test_a_hexagonal_switch_routes_through_the_same_commands() -> None:
    sw, c = _switch(ports=8, mesh="hexagonal", seed=0)
    sw.connect([(0, 5), (1, 2), (3, 7), (4, 6)])
    for src in range(8):
        power = c.driver.detect(np.eye(8)[src])
        peer = sw.matching().partner(src)
        circuit = sw.paths()[src]
        assert circuit.target == peer
        assert -10 * np.log10(power[peer]) == pytest.approx(circuit.loss_db, abs=1.0)
        assert 10 * np.log10(power[peer] / np.delete(power, peer).max()) > 15
    before = c.calibration
    with pytest.raises(SwitchError) as info:  # CAL:RUN runs here too (test_hex_calibration)
        sw.calibrate()  # ... but with no store, ON is refused before anything runs
    assert info.value.code == -310 and c.calibration is before
