"""The whole emulated bench on loopback: every instrument of a :class:`~hil.bench.Bench` served
over its real transport, all on one :class:`~hil.emulator.world.BenchWorld`.

- N7744A/N7745A-style power meter (a channel per chip output), 8164B-style mainframe (laser
  and 1xN fibre switch), TSL-570-style laser, PM100D-style power meter (on chip output 0),
  and the pswitch controller: each a raw TCP socket (``TCPIP0::127.0.0.1::<port>::SOCKET``);
- the Qontrol-style heater driver on a pseudo-terminal (``ASRL/dev/pts/<n>::INSTR``);
- the 8164B and the (first) N774x meter also over HiSLIP (:mod:`hil.emulator.hislip`,
  ``TCPIP0::127.0.0.1::hislip0,<port>::INSTR``: status byte, trigger, device clear, SRQ);
- the 8164B also over VXI-11 (:mod:`hil.emulator.vxi11`, ``TCPIP0::127.0.0.1,<port>::inst0::INSTR``:
  status byte, trigger, device clear and locks through pyvisa-py's own resource calls).

``pswitch serve`` runs one until interrupted and writes its :meth:`EmulatedBench.config` to a
file that :class:`~hil.bench.Bench` reads.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from firmware.commands import is_query
from firmware.controller import Controller, Rings, Session
from hil.bench_config import BenchConfig, Instrument
from hil.emulator.framing import IEEE_488_2
from hil.emulator.hislip import HislipServer
from hil.emulator.instruments import (
    LaserTSL570,
    Mainframe8164B,
    PowerMeterN7744A,
    PowerMeterPM100D,
    QontrolQ8iv,
)
from hil.emulator.server import Faults, PtyServer, TcpServer
from hil.emulator.vxi11 import Vxi11Server
from hil.emulator.world import BenchWorld
from hil.instruments.power_meters import N7744A_CHANNELS
from photonics.chips.chip import Chip, ChipSpec
from photonics.errors import SettingsError

#: Chip sizes the emulated bench serves: one meter channel per output (N7744A 4, N7745A 8).
BENCH_PORTS = (4, 8)


class EmulatedBench:
    """An emulated bench for a ``ports``-port Clements chip with output rings drawn from
    ``seed``, its TCP instruments on ``host`` (loopback unless told otherwise). ``meters``:
    the N774x meters and the chip output on each of their channels (default: one N7744A or
    N7745A, channel k on output k). ``clock``: ``"virtual"`` (default: the bench's time jumps
    over every wait, :class:`~hil.emulator.clock.VirtualClock`) or ``"real"`` (wall-clock
    pacing, for lab code that is sensitive to timing). Start with :meth:`start` or a ``with``
    block; :attr:`servers` maps instrument names to servers."""

    #: What ``clock`` may say.
    CLOCKS = ("virtual", "real")

    def __init__(
        self,
        ports: int = 8,
        seed: int = 0,
        host: str = "127.0.0.1",
        faults: Faults | None = None,
        meters: Sequence[tuple[str, Sequence[int]]] = (),
        clock: str = "virtual",
    ) -> None:
        if clock not in self.CLOCKS:
            raise SettingsError(f'clock must be "virtual" or "real", got {clock!r}')
        if ports not in BENCH_PORTS:
            raise SettingsError(
                f"the emulated bench serves {' or '.join(map(str, BENCH_PORTS))}-port chips "
                f"(one N7744A/N7745A channel per output), got {ports}"
            )
        chip = Chip(ChipSpec(n_ports=ports, seed=seed, output_rings=True))
        self.clock = clock
        self.world = BenchWorld(chip, clock=time.monotonic if clock == "real" else None)
        w = self.world
        wired = meters or [(_DEFAULT_METER[ports], range(ports))]
        tcp = {
            **{
                _meter_name(i): PowerMeterN7744A(
                    w, N7744A_CHANNELS[model], f"MY0000000{i + 1}", model, outputs
                )
                for i, (model, outputs) in enumerate(wired)
            },
            "laser": Mainframe8164B(w),
            "tsl570": LaserTSL570(w),
            "pm100d": PowerMeterPM100D(w, port=0),
            "switch": SwitchFirmware(w.controller),
        }
        self.servers: dict[str, TcpServer | PtyServer | HislipServer | Vxi11Server] = {
            name: TcpServer(handler, host=host, faults=faults or Faults(), name=name)
            for name, handler in tcp.items()
        }
        self.servers["heater_driver"] = PtyServer(QontrolQ8iv(w), name="heater_driver")
        for name in HISLIP:  # the same instrument as a VISA ::INSTR resource too
            raw = self.servers[name]
            hislip = HislipServer(raw.handler, host, name=f"hislip_{name}", lock=raw._lock)
            self.servers[hislip.name] = hislip
        raw = self.servers["laser"]
        vxi11 = Vxi11Server(raw.handler, host, name="vxi11_laser", lock=raw._lock)
        self.servers[vxi11.name] = vxi11

    def start(self) -> EmulatedBench:
        # the settling kernel loads on its first use (~0.3 s, numba's cache): before any client
        # waits on a heater write, not during one (a Qontrol client's reply timeout is 0.5 s)
        zero = self.world.driver.currents()
        self.world.driver.settle_s(zero, zero + 0.1)
        for server in self.servers.values():
            server.start()
        return self

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()

    def __enter__(self) -> EmulatedBench:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def resources(self) -> dict[str, str]:
        """Each instrument's resource string (after :meth:`start`)."""
        return {name: server.resource for name, server in self.servers.items()}

    def terminations(self, name: str) -> tuple[str, str]:
        """The (read, write) terminations a client of the served ``name`` uses now: its
        manual's framing (:mod:`hil.emulator.framing`; the TSL-570's delimiter setting); a
        HiSLIP resource's messages end in a newline."""
        framing = getattr(self.servers[name], "framing", IEEE_488_2)
        return framing.client_terminations()

    def config(self) -> BenchConfig:
        """The bench configuration of this emulated bench (after :meth:`start`)."""
        chip, driver = self.world.chip, self.world.driver
        r = self.resources
        n = chip.n_ports
        meters = [(n, s.handler) for n, s in self.servers.items() if n.startswith("power_meter")]
        return BenchConfig(
            heater_driver=Instrument("Q8iv", r["heater_driver"]),
            meters=tuple(Instrument(m.model, r[n], m.channels, m.outputs) for n, m in meters),
            laser=Instrument("8164B", r["laser"]),
            switch=r["switch"],
            spare=(
                (
                    "laser",
                    Instrument("TSL570", r["tsl570"], None, (), *self.terminations("tsl570")),
                ),
                ("power_meter", Instrument("PM100D", r["pm100d"], 1, (0,))),
                *_hislip_spares(self.servers, r),
            ),
            ports=n,
            mesh=chip.spec.mesh,
            chip_id=f"EMU-{chip.spec.mesh.upper()}-{n}",
            ring_channels=Rings.of_chip(chip).channels,
            max_current_mA=chip.spec.max_current_mA,
            power_budget_mW=float(chip.heaters.power_budget_mW),
            channel_write_s=driver.channel_write_s,
            clock=self.clock,
        )


#: The instruments served as HiSLIP ``::INSTR`` resources too (``hislip_<name>``; the laser
#: also as ``vxi11_laser``).
HISLIP = ("laser", "power_meter")


def _hislip_spares(servers: dict, resources: dict[str, str]) -> list[tuple[str, Instrument]]:
    """The ``::INSTR`` resources of :data:`HISLIP` as the bench configuration's spares."""
    meter = servers["power_meter"].handler
    return [
        ("laser", Instrument("8164B", resources["hislip_laser"])),
        ("power_meter", Instrument(meter.model, resources["hislip_power_meter"], meter.channels)),
        ("laser", Instrument("8164B", resources["vxi11_laser"])),
    ]


def _meter_name(i: int) -> str:
    return "power_meter" if i == 0 else f"power_meter_{i + 1}"


#: The meter that reads every output of a chip, by ports.
_DEFAULT_METER = {4: "N7744A", 8: "N7745A"}


class SwitchFirmware:
    """A switch controller on a line server (:mod:`hil.emulator.server`): each connection gets
    a session of its own (:mod:`firmware.controller.session`: its error queue, ``*OPC``, its
    overlapped operations), and the controller locks itself."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    def session(self) -> _Client:
        return _Client(Session(self.controller))


class _Client:
    """One connection's session as a line handler. A line with a query always gets a reply
    line (empty when its command failed), so a client reads the error queue at once instead of
    waiting for its timeout; a line without one gets none."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def handle(self, line: str) -> str | None:
        reply = self.session.handle(line)
        return "" if reply is None and is_query(line) else reply
