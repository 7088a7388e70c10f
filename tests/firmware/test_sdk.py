import pytest

from firmware.sdk import InProcessTransport, Switch, SwitchError
from photonics.errors import SettingsError
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
