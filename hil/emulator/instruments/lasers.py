"""Emulated tunable lasers: the Keysight 8164B mainframe with its laser and 1xN switch module
(:class:`Mainframe8164B`) and the Santec TSL-570 (:class:`LaserTSL570`), each a laser on the
world. Their drivers are :mod:`hil.instruments.lasers` and :mod:`hil.instruments.switch`."""

from __future__ import annotations

from firmware.commands import Param
from hil.emulator.instruments.scpi import (
    UNIT_CODES,
    Entry,
    ScpiInstrument,
    in_unit,
    unit_param,
    wavelength_param,
)
from hil.emulator.world import BenchWorld
from hil.instruments.lasers import (
    KEYSIGHT_LASER_POWER_MW,
    KEYSIGHT_LASER_WAVELENGTH_NM,
    TSL570_POWER_MW,
    TSL570_WAVELENGTH_NM,
)
from photonics.chip import REFERENCE_WAVELENGTH_NM


class Mainframe8164B(ScpiInstrument):
    """A Keysight 8164B mainframe: a tunable laser in ``laser_slot`` (a laser named ``laser``
    on the world) and a 1xN optical switch module (81595B class) in ``switch_slot``, its
    outputs 1..N on the chip inputs 0..N-1.

    Laser: ``:SOUR<s>[:CHAN1]:WAV[:CW]`` (bare in m, query in m),
    ``:SOUR<s>[:CHAN1]:POW[:LEV][:IMM][:AMPL]`` (bare in the unit of ``:POW:UNIT``, dBm or W;
    query in it too), ``:SOUR<s>[:CHAN1]:POW:UNIT DBM|W|0|1``, ``:SOUR<s>[:CHAN1]:POW:STAT``.
    Switch: ``:ROUT<s>[:CHAN1] A,<k>`` and its query (``A,<k>``), ``:ROUT<s>[:CHAN1]:CONF?``
    (``A,A;1,<N>``). ``*RST``: laser off at 1550 nm and 0 dBm, switch to ``A,1``.
    """

    def __init__(
        self,
        world: BenchWorld,
        laser: str = "8164B",
        laser_slot: int = 0,
        switch_slot: int = 1,
        serial: str = "DE00000001",
    ) -> None:
        self.laser = laser
        world.add_laser(laser)
        numbered = {"SOUR": (laser_slot,) * 2, "ROUT": (switch_slot,) * 2, "CHAN": (1, 1)}
        super().__init__(world, f"Keysight Technologies,8164B,{serial},V5.25(72637)", numbered)

    def reset(self) -> None:
        self.power_unit = 0  # 0 dBm, 1 W
        self.world.set_laser(
            self.laser, on=False, wavelength_nm=REFERENCE_WAVELENGTH_NM, power_mW=1.0
        )
        self.world.select_input(0)

    def bare_unit(self, number: int, param: Param) -> str:
        if param.unit == "nm":
            return "M"
        return ("DBM", "W")[self.power_unit] if param.unit == "mW" else ""

    def commands(self) -> list[Entry]:
        source = "SOURce[:CHANnel]"
        world, name = self.world, self.laser
        return [
            Entry(
                f"{source}:WAVelength[:CW]",
                (wavelength_param(KEYSIGHT_LASER_WAVELENGTH_NM),),
                set=lambda _, nm: world.set_laser(name, wavelength_nm=nm),
                query=lambda _: world.laser(name).wavelength_nm * 1e-9,
            ),
            Entry(
                f"{source}:POWer[:LEVel][:IMMediate][:AMPLitude]",
                (Param("power", "number", *KEYSIGHT_LASER_POWER_MW, "mW", default=1.0),),
                set=lambda _, mW: world.set_laser(name, power_mW=mW),
                query=lambda _: in_unit(world.laser(name).power_mW, self.power_unit, 1e3),
            ),
            Entry(
                f"{source}:POWer:UNIT",
                (unit_param(("DBM", "Watt", "0", "1")),),
                set=lambda _, u: setattr(self, "power_unit", UNIT_CODES[u]),
                query=lambda _: self.power_unit,
            ),
            Entry(
                f"{source}:POWer:STATe",
                (Param("state", "bool"),),
                set=lambda _, on: world.set_laser(name, on=on),
                query=lambda _: world.laser(name).on,
            ),
            Entry(
                "ROUTe[:CHANnel]",
                (
                    Param("input", "name", choices=("A",)),
                    Param("output", "int", 1, world.n_ports),
                ),
                set=lambda _, _a, k: world.select_input(k - 1),
                query=lambda _: f"A,{world.selected_input + 1}",
            ),
            Entry("ROUTe[:CHANnel]:CONFig", query=lambda _: f"A,A;1,{world.n_ports}"),
        ]


class LaserTSL570(ScpiInstrument):
    """A Santec TSL-570 tunable laser (a laser named ``laser`` on the world).

    ``:WAV`` (nm; query in nm), ``:POW[:LEV]`` (bare in the unit of ``:POW:UNIT``: 0 dBm,
    1 mW; query in it too), ``:POW:UNIT``, ``:POW:STAT``, ``:POW:ACT[:LEV]?`` (the power out
    now: the set power when on, none when off). ``*RST``: off at 1550 nm and 0 dBm.
    """

    def __init__(self, world: BenchWorld, laser: str = "TSL-570", serial: str = "25010001") -> None:
        self.laser = laser
        world.add_laser(laser)
        super().__init__(world, f"SANTEC,TSL-570,{serial},0001.0000")

    def reset(self) -> None:
        self.power_unit = 0  # 0 dBm, 1 mW
        self.world.set_laser(
            self.laser, on=False, wavelength_nm=REFERENCE_WAVELENGTH_NM, power_mW=1.0
        )

    def bare_unit(self, number: int, param: Param) -> str:
        return ("DBM", "MW")[self.power_unit] if param.unit == "mW" else ""

    def _actual_mW(self) -> float:
        laser = self.world.laser(self.laser)
        return laser.power_mW if laser.on else 0.0

    def commands(self) -> list[Entry]:
        world, name = self.world, self.laser
        return [
            Entry(
                "WAVelength",
                (wavelength_param(TSL570_WAVELENGTH_NM),),
                set=lambda _, nm: world.set_laser(name, wavelength_nm=nm),
                query=lambda _: world.laser(name).wavelength_nm,
            ),
            Entry(
                "POWer[:LEVel]",
                (Param("power", "number", *TSL570_POWER_MW, "mW", default=1.0),),
                set=lambda _, mW: world.set_laser(name, power_mW=mW),
                query=lambda _: in_unit(world.laser(name).power_mW, self.power_unit, 1.0),
            ),
            Entry(
                "POWer:UNIT",
                (unit_param(("DBM", "MW", "0", "1")),),
                set=lambda _, u: setattr(self, "power_unit", UNIT_CODES[u]),
                query=lambda _: self.power_unit,
            ),
            Entry(
                "POWer:STATe",
                (Param("state", "bool"),),
                set=lambda _, on: world.set_laser(name, on=on),
                query=lambda _: world.laser(name).on,
            ),
            Entry(
                "POWer:ACTual[:LEVel]",
                query=lambda _: in_unit(self._actual_mW(), self.power_unit, 1.0),
            ),
        ]
