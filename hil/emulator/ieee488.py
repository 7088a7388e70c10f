"""An emulated instrument as an IEEE 488 transport sees it (HiSLIP today; GPIB's model): the line
handler of :mod:`hil.emulator.server` plus what the bus adds to it, from IEEE Std 488.2-1992:

- the status byte a serial poll reads (11.2): the instrument's bits (:meth:`status_byte` of the
  SCPI base: EAV, questionable, ESB, ...) with MAV (bit 4) given by the transport, which knows
  whether a reply has gone out unread, and bit 6 the transport's RQS (:class:`ServiceRequest`);
- the device trigger (GET, 6.1.4.2.5): the instrument's ``*TRG``;
- the device clear (dcas, 5.8): the transport drops its input and output, the instrument its
  pending ``*OPC`` (``device_clear`` of the SCPI base); settings and status registers are kept;
- service requests (11.3.2): a client is sent one when the master summary (MSS: an enabled bit
  of the status byte) goes from false to true, a new reason for service; its RQS stays set until
  its next serial poll.

A handler without ``status_byte``, ``sre`` or ``device_clear`` (a non-SCPI one) reads 0 and
clears nothing. The instrument's lock is shared with its raw-socket server (one command at a
time, whoever sends it).
"""

from __future__ import annotations

import contextlib
import logging
import threading

from firmware.scpi_errors import STB_MAV, STB_MSS
from hil.emulator.server import LineHandler

log = logging.getLogger(__name__)

#: Bit 6 of a serial poll's status byte: RQS, the device requested service (IEEE 488.2 11.2.2).
STB_RQS = STB_MSS


class Device:
    """``handler`` behind ``lock`` (its raw-socket server's, so both transports take turns; None:
    a lock of its own), with the bus operations of the module docstring."""

    def __init__(
        self, handler: LineHandler, lock: threading.Lock | None = None, name: str = ""
    ) -> None:
        self.handler = handler
        self.lock = lock or threading.Lock()
        self.name = name or type(handler).__name__

    def handle(self, line: str) -> str | bytes | None:
        """The instrument's reply to ``line`` (None: none, or the emulation failed: logged)."""
        with self.lock:
            try:
                return self.handler.handle(line)
            except Exception:  # a broken emulation must not kill the instrument
                log.exception("%s: handler failed on %r", self.name, line)
                return None

    def status_byte(self, mav: bool) -> int:
        """The status byte with the transport's ``mav``; bit 6 is the master summary (MSS): an
        enabled (``*SRE``) bit of the others."""
        read = getattr(self.handler, "status_byte", None)
        with self.lock:
            bits = read() if callable(read) else 0
            enabled = getattr(self.handler, "sre", 0)
        bits = (bits & ~(STB_MAV | STB_MSS)) | (STB_MAV if mav else 0)
        return bits | (STB_MSS if bits & enabled else 0)

    def trigger(self) -> None:
        """A device trigger: the instrument runs ``*TRG``."""
        self.handle("*TRG")

    def clear(self) -> None:
        """The instrument's part of a device clear (its pending ``*OPC`` dropped)."""
        clear = getattr(self.handler, "device_clear", None)
        if callable(clear):
            with self.lock, contextlib.suppress(Exception):
                clear()


class ServiceRequest:
    """One client's service requests: MSS as last seen, and its RQS (set by a new reason for
    service, cleared by the client's serial poll)."""

    def __init__(self) -> None:
        self.summary = False
        self.rqs = False

    def update(self, stb: int) -> bool:
        """Note the status byte ``stb`` (bit 6 MSS); True when it requests service now (MSS
        went from false to true)."""
        summary = bool(stb & STB_MSS)
        rising = summary and not self.summary
        self.summary = summary
        self.rqs |= rising
        return rising

    def poll(self, stb: int) -> int:
        """A serial poll's answer to ``stb``: bit 6 is RQS, which the poll clears."""
        self.update(stb)
        answer = (stb & ~STB_MSS) | (STB_RQS if self.rqs else 0)
        self.rqs = False
        return answer
