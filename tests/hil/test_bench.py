"""Bench routines through real pyvisa + pyvisa-py over real TCP sockets and a real pseudo-terminal,
against the emulated bench."""

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.calibration_file import load_calibration
from hil.bench import Bench
from hil.bench_config import BenchConfig, Instrument
from hil.emulator.bench import EmulatedBench
from hil.instruments.registry import MODELS, models
from photonics.calibration.selfcal import route_quality
from photonics.chips.calibration import same_calibration
from photonics.errors import SettingsError
from tests.hil.failures import failing_configs

PSWITCH = shutil.which("pswitch", path=str(Path(sys.executable).parent))


def _config(**changes) -> BenchConfig:
    return BenchConfig(
        Instrument("Q8iv", "ASRL/dev/pts/3::INSTR"),
        (Instrument("N7745A", "TCPIP0::h::1::SOCKET"),),
        Instrument("8164B", "TCPIP0::h::2::SOCKET"),
        **changes,
    )


def test_a_bench_config_round_trips_and_bad_files_are_refused(tmp_path) -> None:
    cfg = _config()
    path = tmp_path / "bench.json"
    cfg.save(path)
    assert BenchConfig.load(path) == cfg
    doc = json.loads(path.read_text())
    meter = doc["meters"][0]
    for change, why in (
        ({"version": 3}, "upgrade"),
        ({"schema": "other"}, "not a pswitch bench"),
        ({"lasr": "x"}, r"unexpected field\(s\) lasr"),
        ({"ports": 1}, "ports"),
        ({"laser": {"model": "X", "resource": "r"}}, "unknown laser model 'X'; known: 8164B"),
        ({"laser": "TCPIP0::h::2::SOCKET"}, "a version 1 resource string"),
        ({"meters": [meter | {"model": "8164B"}]}, "unknown power meter model '8164B'"),
        ({"meters": [meter | {"channels": 9}]}, "has 8 channels, configured 9"),
        ({"meters": [meter | {"ports": [0, 1, 2, 3, 4, 5, 6, 6]}]}, "output 6 is wired to two"),
        (
            {"meters": [meter | {"ports": [0, 1, 2, 3, 4, 5, 6, None]}]},
            r"reads chip output\(s\) \[7\]",
        ),
        ({"meters": []}, "one or more power meters"),
        ({"laser": {"model": "TSL570", "resource": "r"}}, "TSL570 laser has no 1xN module"),
        ({"settle_s": -1}, "settle_s"),
        ({"safe_current_mA": 11}, "above max_current_mA"),
        ({"heater_layout": "grid"}, 'heater_layout must be "drawn" or ""'),
    ):
        path.write_text(json.dumps(doc | change))
        with pytest.raises(SettingsError, match=why):
            BenchConfig.load(path)
    path.write_text(path.read_text()[:40])  # truncated
    with pytest.raises(SettingsError, match=r"bench\.json: not valid JSON, truncated"):
        BenchConfig.load(path)
    with pytest.raises(SettingsError, match="cannot read bench config"):
        BenchConfig.load(tmp_path / "absent.json")


@st.composite
def _meters(draw, ports: int) -> tuple[Instrument, ...]:
    """Meters of registered models whose channels read the outputs in a random order, some
    channels unwired."""
    outputs: list[int | None] = list(draw(st.permutations(range(ports))))
    meters = []
    while outputs:
        model = draw(st.sampled_from(models("power_meter")))
        n = MODELS[model].channels
        wired = outputs[:n] + [None] * max(0, n - len(outputs))
        outputs = outputs[n:]
        text = st.text(min_size=1).filter(str.strip)
        meters.append(Instrument(model, draw(text), n, tuple(draw(st.permutations(wired)))))
    return tuple(meters)


@given(
    resources=st.lists(st.text(min_size=1).filter(str.strip), min_size=2, max_size=2),
    ports_meters=st.integers(2, 32).flatmap(lambda n: st.tuples(st.just(n), _meters(n))),
    laser=st.sampled_from(models("laser")),
    ring_channels=st.lists(st.integers(0, 255), max_size=8),
    budget=st.none() | st.floats(1e-3, 1e6),
    settle_s=st.floats(0, 10),
)
def test_any_bench_config_round_trips(
    tmp_path_factory, resources, ports_meters, laser, ring_channels, budget, settle_s
) -> None:
    ports, meters = ports_meters
    switch = None if laser == "8164B" else Instrument("8164B-switch", "GPIB0::5::INSTR")
    cfg = BenchConfig(
        Instrument("Q8iv", resources[0]),
        meters,
        Instrument(laser, resources[1]),
        input_switch=switch,
        ports=ports,
        ring_channels=tuple(ring_channels),
        power_budget_mW=budget,
        settle_s=settle_s,
    )
    wired = {output: (i, ch) for output, i, ch in cfg.meter_ports()}
    assert all(meters[i].ports[ch] == output for output, (i, ch) in wired.items())
    path = tmp_path_factory.mktemp("bench") / "bench.json"
    cfg.save(path)
    assert BenchConfig.load(path) == cfg


@pytest.mark.slow  # ~10-50 s; `make test-all`
def test_a_full_bench_calibration_over_visa_routes_within_tolerance(tmp_path) -> None:
    """8-port chip: I-V, every MZI fringe and every ring lock through the Qontrol on a pty and
    the laser, fibre switch and power meter on TCP; the calibration file routes random
    permutations within 0.5 dB of the loss-only power with isolation >= 25 dB."""
    with EmulatedBench(ports=8, seed=0) as emulated, Bench(emulated.config()) as bench:
        seen: list[tuple[str, int, int]] = []
        cal = bench.calibrate(tmp_path / "cal.json", progress=lambda *step: seen.append(step))
        # from the first ring lock on, every stage to its end
        assert seen[0] == ("ring locks", 0, 8) and ("ring locks", 8, 8) in seen
        stages = [stage for stage, _, _ in seen]
        assert (
            stages.index("ring locks")
            < stages.index("heater I-V sweeps")
            < stages.index("MZI fringes")
        )
        assert seen[-1] == ("MZI fringes", 28, 28)
        assert same_calibration(load_calibration(tmp_path / "cal.json"), cal)
        error_db, isolation_db = route_quality(emulated.world.chip, cal)
        assert error_db < 0.5 and isolation_db >= 25
        # and the bench sees it: each circuit's light at its partner, isolated
        check = bench.verify([(0, 5), (1, 2), (3, 7), (4, 6)])
        assert check.worst_isolation_db >= 25
        for (src, dst), _ in check.isolation_db.items():
            assert check.power_dBm[dst, src] > -10  # 2 facets + a few cells from 0 dBm
        locked, error_nm = bench.lock_ring(3)
        assert locked and error_nm < 0.02


def test_a_lone_pair_is_isolated_from_its_partners_own_light_sent_back() -> None:
    """On the bench a circuit's isolation counts every other lit input, its partner among
    them (the partner's own light sent back): a lone pair has a figure, not a floor's."""
    with EmulatedBench(ports=4, seed=1) as emulated, Bench(emulated.config()) as bench:
        bench.use_calibration(emulated.world.chip.factory_calibration())  # no CAL:RUN: quick
        check = bench.verify([(0, 1)])
        P = check.power_dBm
        for (src, dst), iso in check.isolation_db.items():
            assert iso is not None and abs(iso - (P[dst, src] - P[dst, dst])) < 1e-6
        assert check.worst_isolation_db == min(check.isolation_db.values()) < 60


def test_the_meter_sees_a_reconfiguration_after_the_switch_writes_its_heaters() -> None:
    with EmulatedBench(ports=4, seed=1) as emulated, Bench(emulated.config()) as bench:
        for ring in range(4):
            bench.switch.lock_ring(ring)
        lat = bench.latency([(0, 1), (2, 3)], [(0, 3), (1, 2)], source=0)
        # the light arrives once the heater writes have taken effect, within the command's
        # reported hardware time (which also re-centres the rings), never before a write
        assert 0 < lat.latency_s <= lat.reported_s + 2 * lat.averaging_s
        channel_write_s = emulated.config().channel_write_s
        assert lat.latency_s >= channel_write_s
        assert lat.trace_mW[0] < 0.01 * lat.trace_mW[-1]


def test_pswitch_serve_runs_the_bench_in_another_process(tmp_path) -> None:
    assert PSWITCH is not None
    config = tmp_path / "bench.json"
    proc = subprocess.Popen(
        [PSWITCH, "serve", "--ports", "4", "--seed", "2", "--config", str(config)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not config.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.05)
        cfg = BenchConfig.load(config)
        assert cfg.ports == 4 and "127.0.0.1" in cfg.meters[0].resource
        with Bench(cfg) as bench:
            assert bench.switch is not None and bench.switch.idn().startswith("PSWITCH,")
            bench.switch.connect([(0, 2)])
            light = bench.detectors.detect(np.eye(4)[1])  # input 1 is dark in the switch
            assert light.shape == (4,) and np.all(np.isfinite(light))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    printed = set(re.findall(r"\S+::\S+", proc.stdout.read()))  # every resource served
    listed = {cfg.heater_driver.resource, cfg.laser.resource, cfg.switch}
    listed |= {m.resource for m in cfg.meters} | {i.resource for _, i in cfg.spare}
    assert len(printed) == 9 and printed == listed  # 6 instruments, 2 over HiSLIP, 1 over VXI-11


def test_pswitch_serve_refuses_a_size_it_cannot_serve() -> None:
    assert PSWITCH is not None
    done = subprocess.run(
        [PSWITCH, "serve", "--ports", "6", "--seconds", "1"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "4 or 8-port" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("name", "bad", "state"),
    [
        ("power_meter", ":SENS1:POW:WAV 99NM", ":SENS1:POW:WAV?"),
        ("laser", ":SOUR0:POW:STAT maybe", ":SOUR0:POW:STAT?"),
        ("tsl570", ":WAV 9000", ":WAV?"),
        ("pm100d", "SENS:CORR:WAV -5", "SENS:CORR:WAV?"),
        ("switch", "ROUT:MATC 0,1,1,2", "ROUT:MATC?"),
    ],
)
def test_a_bad_command_over_the_wire_queues_an_error_and_changes_nothing(
    name: str, bad: str, state: str
) -> None:
    from hil.visa import Session

    with EmulatedBench(ports=4) as emulated:
        read, write = emulated.terminations(name)  # the TSL-570 replies with CR
        with Session(emulated.resources[name], read_termination=read, write_termination=write) as s:
            before = s.query(state)
            s.write(bad)
            code = int(s.query("SYST:ERR?").split(",")[0])
            assert code < 0 and s.query(state) == before
            assert s.query("SYST:ERR?").startswith("0,")


def test_the_switch_replies_to_queries_only_whatever_the_quotes_hold() -> None:
    from hil.visa import Session

    with EmulatedBench(ports=4) as emulated, Session(emulated.resources["switch"]) as s:
        s.write('ROUT:MATC "why?"')  # no query: an error, and no reply to shift the next one
        assert s.query("SYST:ERR?").startswith("-104,")
        assert s.query('ROUT:MATC? "open') == ""  # a query that fails: an empty reply
        assert s.query("SYST:ERR?").startswith("-150,")


def test_a_bad_heater_line_over_the_pty_is_refused_and_changes_no_current() -> None:
    from hil.visa import Session

    with EmulatedBench(ports=4) as emulated, Session(emulated.resources["heater_driver"]) as s:
        before = s.query("IALL?")
        assert s.query("I2=999").startswith("E")
        assert s.query("I99=1").startswith("E")
        assert s.query("IALL?") == before


def test_a_remote_client_verifies_a_route_on_the_switchs_own_detectors() -> None:
    """Real pyvisa sessions only: the laser into port 0 through the fibre switch, a matching on
    the switch and the partner's output ring locked, then MEAS:POW:ALL? on the switch: the
    partner bright, every other port at least 20 dB below. The host-side firmware of a Bench
    reads the same light through its Qontrol."""
    from firmware.sdk import Switch
    from hil.emulator.world import FACET_LOSS_DB
    from hil.instruments import Laser8164B, OpticalSwitch
    from hil.visa import Session

    with EmulatedBench(ports=8, seed=0) as emulated:
        resources = emulated.resources
        with Session(resources["laser"]) as mainframe, Session(resources["switch"]) as s:
            laser = Laser8164B(mainframe)
            laser.set_power_mW(1.0)
            laser.on()
            OpticalSwitch(mainframe).select(0)
            s.write("ROUT:MATC 0,5,1,2,3,7,4,6;RING:LOCK 5;*WAI")  # its output ring on the laser
            mw = np.array([float(x) for x in s.query("MEAS:POW:ALL?").split(",")])
            dbm = np.array([float(x) for x in s.query("MEAS:POW:ALL? DBM").split(",")])
            loss_db = float(s.query("ROUT:PATH? 0").split(",")[1])
            one = float(s.query("MEAS:POW? 5,DBM"))
            assert s.query("SYST:ERR?") == '0,"No error"'
        assert mw.shape == dbm.shape == (8,) and np.all(mw > 0)
        assert int(np.argmax(dbm)) == 5 and one == pytest.approx(dbm[5], abs=0.01)
        assert dbm[5] == pytest.approx(-(loss_db + 2 * FACET_LOSS_DB), abs=0.5)  # 1 mW in
        assert np.all(dbm[5] - np.delete(dbm, 5) > 20)
        with Switch.open(resources["switch"]) as sw:  # the SDK over the same wire
            assert sw.powers([5], unit="dBm")[0] == pytest.approx(dbm[5], abs=0.01)
        with Bench(emulated.config()) as bench:  # the laser stays on input 0
            seen = bench.firmware.powers(unit="dBm")
            # seconds later in the bench's real time: the locked ring drifts with the chip's
            # temperature untracked meanwhile (0.24 dB once on a loaded CI machine)
            assert seen[5] == pytest.approx(dbm[5], abs=0.5)
            assert np.all(seen[5] - np.delete(seen, 5) > 20)


def _lit(world) -> list[str]:
    return [name for name in ("8164B", "TSL570") if name in world._lasers and world.laser(name).on]


def test_a_bench_of_two_meters_wired_out_of_order_sees_each_output_where_it_is() -> None:
    # two N7744C (the current model) reading the 8 outputs in reverse order, channel by channel
    wiring = [("N7744C", (3, 2, 1, 0)), ("N7744C", (7, 6, 5, 4))]
    with EmulatedBench(ports=8, seed=0, meters=wiring) as emulated:
        cfg = emulated.config()
        assert [(m.model, m.ports) for m in cfg.meters] == wiring
        with Bench(cfg) as bench:
            bench.use_calibration(emulated.world.chip.factory_calibration(cfg.chip_id))
            check = bench.verify([(0, 5), (1, 2), (3, 7), (4, 6)])
            assert check.worst_isolation_db >= 20
            for src, dst in check.isolation_db:  # each input's light is found at its partner
                assert int(np.argmax(check.power_dBm[:, src])) == dst


def test_closing_a_bench_leaves_it_safe_unless_kept(tmp_path) -> None:
    with EmulatedBench(ports=4, seed=1) as emulated:
        world, cfg = emulated.world, replace(emulated.config(), safe_current_mA=0.5)
        with pytest.raises(RuntimeError), Bench(cfg) as bench:
            bench.use_calibration(world.chip.factory_calibration(cfg.chip_id))
            bench.verify([(0, 3)])
            assert _lit(world) and world.driver.currents().max() > 1
            raise RuntimeError("a routine failed")
        assert _lit(world) == [] and np.all(world.driver.currents() == 0.5)
        with Bench(cfg, keep=True) as bench:
            bench.heaters.write([2], [3.0])
        assert _lit(world) == ["8164B"] and world.driver.currents()[2] == 3.0


def test_the_bench_docs_example_loads_and_name_every_model(tmp_path) -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "bench.md").read_text()
    example = re.search(r"```json\n(.*?)```", text, re.S).group(1)
    (tmp_path / "bench.json").write_text(example)
    cfg = BenchConfig.load(tmp_path / "bench.json")
    assert [port for port, _, _ in cfg.meter_ports()] == list(range(8))
    assert cfg.meter_ports()[0] == (0, 0, 3)  # output 0 on the first meter's last channel
    table = text[text.index("## Models") :]
    assert all(re.search(rf"\b{re.escape(name)}\b", table) for name in MODELS)


def test_whatever_fails_to_open_the_heaters_are_left_safe_and_the_laser_off() -> None:
    with EmulatedBench(ports=4, seed=1) as emulated:
        world = emulated.world
        cfg = replace(emulated.config(), safe_current_mA=0.5, timeout_s=2.0)
        for case, bad in failing_configs(cfg, emulated.resources).items():
            world.driver.write(range(world.driver.n_channels), [3.0] * world.driver.n_channels)
            with pytest.raises(Exception) as info:
                Bench(bad)
            assert np.all(world.driver.currents() == 0.5), case
            assert _lit(world) == [], case
            if "is a" in case:  # the instrument that answered is named
                what = "PM100D" if "PM100D" in case else "TSL-570"
                assert (
                    f"but a {'Thorlabs' if what == 'PM100D' else 'SANTEC'} {what} answered"
                    in str(info.value)
                ), case


def test_unsafe_after_failure_counts_a_bench_that_does_not_leave_safe(monkeypatch) -> None:
    from tests.hil.failures import unsafe_after_failure

    with EmulatedBench(ports=4, seed=1) as emulated:
        assert unsafe_after_failure(emulated) == (0, 5)
        monkeypatch.setattr(Bench, "safe_state", lambda self: [])  # a bench that forgets
        assert unsafe_after_failure(emulated) == (5, 5)
