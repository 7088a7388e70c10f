"""The 1xN optical fibre switch module of a Keysight 8164B mainframe (81595B class), feeding
the laser to one chip input. Ports are 0-based here; on the wire output ``k`` is ``k + 1``
(``:ROUT<slot>:CHAN1 A,<k+1>``)."""

from __future__ import annotations

import re

from hil.errors import InstrumentError
from hil.instruments.base import MAINFRAME_SLOTS, Connection, ScpiDriver, check_index

_ROUTE = re.compile(r"^A,(\d+)$")
_CONFIG = re.compile(r"^A,A;1,(\d+)$")


class OpticalSwitch(ScpiDriver):
    """A 1xN switch module in slot ``slot``: input A to one of ``n_ports`` outputs."""

    def __init__(self, conn: Connection, slot: int = 1) -> None:
        super().__init__(conn)
        self.slot = check_index(conn.resource, "slot", slot, MAINFRAME_SLOTS)
        config = self._query(f":ROUT{self.slot}:CHAN1:CONF?")
        m = _CONFIG.match(config)
        if m is None:
            raise InstrumentError(self.resource, f"not a 1xN switch: configuration {config!r}")
        self.n_ports = int(m.group(1))

    def select(self, port: int) -> None:
        """Route input A to output ``port`` (0-based)."""
        port = check_index(self.resource, "port", port, self.n_ports)
        self._set(f":ROUT{self.slot}:CHAN1 A,{port + 1}")

    def selected(self) -> int:
        """The output input A is routed to (0-based)."""
        reply = self._query(f":ROUT{self.slot}:CHAN1?")
        m = _ROUTE.match(reply)
        if m is None:
            raise InstrumentError(self.resource, f"unreadable route {reply!r}")
        return int(m.group(1)) - 1
