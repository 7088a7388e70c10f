"""The switch's ``ROUTe`` and ``HEATer`` commands: matchings, single connections, failover
onto spares, the circuits' paths, and the heaters by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from firmware.commands import Bound, Param
from firmware.controller.core import (
    APPLY_ERRORS,
    CHANNEL,
    CURRENT,
    PORT,
    PORTS,
    RECONFIGURE_ERRORS,
    Core,
    flat,
    pairs_of,
)
from firmware.declarations import command, query
from firmware.fabric import Job, failover
from firmware.scpi_errors import ScpiError
from photonics.matching import Matching


class RouteCommands(Core):
    """``ROUTe:...``: what light goes where."""

    @command(
        "ROUTe:CONNect",
        PORT,
        Param("peer", "int", 0, Bound("ports", -1)),
        summary="Connect two dark ports, keeping every other circuit.",
        example="ROUT:CONN 0,3",
        errors="-221 a port is connected already, or no path is free; " + RECONFIGURE_ERRORS,
    )
    def connect(self, port: int, peer: int) -> None:
        pairs = [*self.matching.pairs, (port, peer)]
        self.apply_matching(Matching(pairs, self.fabric.n_ports))

    @command(
        "ROUTe:DISConnect",
        PORT,
        summary="Disconnect the pair that holds this port.",
        example="ROUT:DISC 0",
        errors="-221 the port is dark; " + RECONFIGURE_ERRORS,
    )
    def disconnect(self, port: int) -> None:
        if self.matching.partner(port) is None:
            raise ScpiError(-221, f"port {port} is not connected")
        pairs = [p for p in self.matching.pairs if port not in p]
        self.apply_matching(Matching(pairs, self.fabric.n_ports))

    @command(
        "ROUTe:CLEar",
        summary="Disconnect every pair (heaters of the cells to 0 mA).",
        example="ROUT:CLE",
        errors=RECONFIGURE_ERRORS,
    )
    def clear_routes(self) -> None:
        self.apply_matching(Matching([], self.fabric.n_ports))

    @command(
        "ROUTe:MATChing",
        replace(PORTS, optional=True, default=()),
        summary="Apply a whole matching, given as port pairs a,b,c,d,... (pairs (a,b), (c,d)); "
        "nothing is changed unless all of it can be applied. The query gives the applied "
        "pairs, sorted.",
        example="ROUT:MATC 0,1,2,3",
        errors="-109 an odd number of ports; -224 a port twice; -221 not realizable; "
        + RECONFIGURE_ERRORS,
    )
    def apply_pairs(self, ports: tuple[int, ...]) -> None:
        self.apply_matching(pairs_of(ports, self.fabric.n_ports))

    @query("ROUTe:MATChing", reply="comma-separated ports, pairwise")
    def applied_pairs(self) -> list[int]:
        return flat(self.matching)

    @command(
        "ROUTe:REPLace",
        PORT,
        Param("spares", "list", 0, Bound("ports", -1)),
        summary="Failover: give the port's peer one of the dark spares instead (the one that "
        "disturbs fewest live circuits, then switches fewest cells), re-routing only that "
        "circuit where the mesh allows; ROUT:MATC? shows the spare chosen, ROUT:REPL:DIST? the "
        "live circuits it disturbed.",
        example="ROUT:REPL 1,5,7",
        errors="-221 the port is dark or a spare is not; -224 a spare twice; -221 no path; "
        + RECONFIGURE_ERRORS,
    )
    def replace_port(self, port: int, spares: tuple[int, ...]) -> None:
        peer = self.matching.partner(port)
        if peer is None or self.plan is None:
            raise ScpiError(-221, f"port {port} is dark: nothing to replace")
        lit = [s for s in spares if self.matching.partner(s) is not None or s == port]
        if lit:
            raise ScpiError(-221, f"spare {lit[0]} is not dark")
        if len(set(spares)) < len(spares):
            raise ScpiError(-224, f"a spare is listed twice: {list(spares)}")
        job = Job("replace", "ring", (port, peer), spares)
        found = failover(self.fabric, job, self.plan, port)
        self.apply_plan(found.plan)
        self.disturbed = sorted({src for src, _ in found.disturbed})

    @query(
        "ROUTe:REPLace:DISTurbed",
        reply="comma-separated ports",
        summary="Sources of the live circuits (other than the replaced ones) whose cells the "
        "last ROUT:REPL switched; empty when none.",
        example="ROUT:REPL:DIST?",
    )
    def disturbed_sources(self) -> list[int]:
        return self.disturbed

    @query(
        "ROUTe:PATH",
        PORT,
        reply="peer,loss_dB,cell,cell,...",
        summary="The circuit carrying a port's light: the port it reaches, its predicted "
        "insertion loss (dB) and the cells it crosses, in order.",
        example="ROUT:PATH? 0",
        errors="-221 the port is dark",
    )
    def path(self, port: int) -> list[object]:
        circuit = self.plan.circuit_from(port) if self.plan else None
        if circuit is None:
            raise ScpiError(-221, f"port {port} is dark")
        return [circuit.target, round(circuit.loss_db, 6), *circuit.cells]


class HeaterCommands(Core):
    """``HEATer:...``: the heater channels by hand."""

    @command(
        "HEATer:CURRent",
        CHANNEL,
        CURRENT,
        summary="Set one heater channel, or read it back. Setting a heater by hand marks the "
        "routes as not guaranteed.",
        example="HEAT:CURR 0,1.5mA",
        errors=APPLY_ERRORS,
    )
    def set_heater(self, channel: int, current: float) -> None:
        new = self.driver.currents()
        new[channel] = current
        self._apply(new, self.plan, manual=True)

    @query("HEATer:CURRent", CHANNEL, reply="number, mA")
    def heater(self, channel: int) -> float:
        return float(self.driver.currents()[channel])

    @command(
        "HEATer:ALL",
        Param("currents", "numbers", 0, Bound("max_current_mA"), "mA"),
        summary="Set every channel at once (atomic), or read them all back.",
        errors="-109/-108 too few/many currents; " + APPLY_ERRORS,
    )
    def set_heaters(self, currents: tuple[float, ...]) -> None:
        if len(currents) != self.driver.n_channels:
            raise ScpiError(
                -109 if len(currents) < self.driver.n_channels else -108,
                f"{self.driver.n_channels} currents needed, got {len(currents)}",
            )
        self._apply(np.asarray(currents, float), self.plan, manual=True)

    @query("HEATer:ALL", reply="comma-separated numbers, mA", example="HEAT:ALL?")
    def heaters(self) -> list[float]:
        return self.driver.currents().tolist()

    @query(
        "HEATer:COUNt",
        reply="integer",
        summary="Number of heater channels.",
        example="HEAT:COUN?",
    )
    def heater_count(self) -> int:
        return self.driver.n_channels
