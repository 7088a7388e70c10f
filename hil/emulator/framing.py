"""How each emulated instrument frames its lines on a byte stream (a TCP socket, a serial line):
which terminators end a received command line, and what ends each reply, as its programming
manual states it (:class:`Framing`, :func:`framing_of`, :class:`LineSplitter`).

By instrument (``docs/instruments.md``, "Line framing"):

- Keysight N774x, 8164B: IEEE 488.2 (Std 488.2-1992, 7.5: a program message ends in NL, white
  space before it allowed, CR being white space; 8.5: a response ends in NL). Accepts LF and
  CR LF, replies end in LF (the N774x and 8164B programming guides: "a newline" terminates).
- Thorlabs PM100D: USBTMC/VISA, LF (its termination character 0x0A) both ways; on the served
  socket LF, CR LF accepted as on the Keysight instruments.
- Qontrol Q8iv: its own line protocol, LF both ways, as Qontrol's ``qontrol`` library (1.1.20)
  writes and reads it (``'\\n'``); a CR before the LF is tolerated.
- the switch controller (the project's own, ``docs/commands.md``): LF, CR LF accepted.
- Santec TSL-570: CR, LF and CR LF accepted; replies end in the delimiter of
  ``:SYSTem:COMMunicate:GPIB:DELimiter`` (0 CR, the power-on setting; 1 LF; 2 CR LF; 3 none),
  which the emulation applies to its socket as the lab drivers that talk to it over LAN read
  it (QMI's ``Santec_Tsl570``, QCoDeS contrib's driver and Santec's LAN samples read CR); a
  binary block (``:READout:DATa?``) is sent without one (those drivers read the block and
  nothing after it). The property is :attr:`hil.emulator.instruments.tsl570.LaserTSL570.framing`.

An emulation gives its own framing with a ``framing`` attribute (read at every reply, so a
setting changes the next reply's terminator); otherwise :data:`FRAMINGS` by class name, else
:data:`IEEE_488_2`.
"""

from __future__ import annotations

from dataclasses import dataclass

CR, LF, CRLF = "\r", "\n", "\r\n"


@dataclass(frozen=True)
class Framing:
    """A line framing: ``accepts``, the terminators that end a received line (CR, LF, CR LF or
    any other string; where one is the start of another, as CR of CR LF, the longer counts
    once), ``reply``, what ends each text reply ('' none), and ``block``, what ends a reply
    that is a binary block (None: ``reply``)."""

    accepts: tuple[str, ...] = (LF, CRLF)
    reply: str = LF
    block: str | None = None

    def __post_init__(self) -> None:
        if not self.accepts or "" in self.accepts:
            raise ValueError(f"a framing accepts at least one non-empty terminator: {self}")

    def ending(self, reply: str | bytes) -> str:
        """What ends ``reply`` (a text reply, or bytes: a binary block)."""
        if isinstance(reply, bytes) and self.block is not None:
            return self.block
        return self.reply

    def client_terminations(self) -> tuple[str, str]:
        """(read, write) terminations a client of this framing uses: the reply terminator, and
        the first terminator the instrument accepts."""
        return self.reply, self.accepts[0]

    @classmethod
    def of(cls, read_termination: str, write_termination: str) -> Framing:
        """A server's framing from its two terminations; LF accepts CR LF too (as before)."""
        accepts = (LF, CRLF) if read_termination == LF else (read_termination,)
        return cls(accepts, write_termination)


#: IEEE 488.2 framing: LF ends a line (CR LF too: the CR is white space); replies end in LF.
IEEE_488_2 = Framing((LF, CRLF), LF)
#: The framing of each emulation without a ``framing`` attribute of its own, by class name (the
#: module docstring cites each manual).
FRAMINGS: dict[str, Framing] = {
    "PowerMeterN7744A": IEEE_488_2,
    "Mainframe8164B": IEEE_488_2,
    "PowerMeterPM100D": IEEE_488_2,
    "QontrolQ8iv": Framing((LF, CRLF), LF),
    "SwitchFirmware": IEEE_488_2,
}


def framing_of(handler: object) -> Framing:
    """``handler``'s framing now: its own ``framing`` attribute, else :data:`FRAMINGS` by its
    class name, else :data:`IEEE_488_2`."""
    own = getattr(handler, "framing", None)
    if isinstance(own, Framing):
        return own
    return FRAMINGS.get(type(handler).__name__, IEEE_488_2)


class LineSplitter:
    """One client's received bytes cut into lines at ``accepts`` (the bytes of each line without
    its terminator). A terminator that begins a longer accepted one (CR of CR LF) ends the line
    at once; the rest of the longer one, if it comes next (even in a later read), is dropped,
    so CR LF is one terminator and never an empty line. ``max_line``: a longer line is cut to
    it (the head kept), so a client cannot exhaust memory."""

    def __init__(self, accepts: tuple[str, ...], max_line: int) -> None:
        ends = [t.encode() for t in accepts]
        self._ends = sorted(ends, key=len, reverse=True)  # at one position the longest wins
        #: after a terminator, the rest of a longer one that starts with it
        self._rest = {
            e: next((o[len(e) :] for o in self._ends if o.startswith(e) and o != e), b"")
            for e in ends
        }
        self._max = max_line
        self._buffer = bytearray()
        self._drop = b""  # expected next: the rest of a longer terminator, dropped if it comes

    def feed(self, data: bytes) -> list[bytes]:
        """The lines completed by ``data``."""
        buffer, lines = self._buffer, []
        buffer += data
        while buffer:
            if self._drop:
                n = min(len(self._drop), len(buffer))
                if buffer[:n] != self._drop[:n]:
                    self._drop = b""
                elif n < len(self._drop):
                    break  # only part of it yet: wait for the rest
                else:
                    del buffer[:n]
                    self._drop = b""
                    continue
            found = self._first_end(buffer)
            if found is None:
                break
            at, end = found
            lines.append(bytes(buffer[: min(at, self._max)]))
            del buffer[: at + len(end)]
            self._drop = self._rest[end]
        if len(buffer) > self._max:  # keep the head of an overlong line, drop the tail
            del buffer[self._max :]
        return lines

    def _first_end(self, buffer: bytearray) -> tuple[int, bytes] | None:
        best: tuple[int, bytes] | None = None
        for end in self._ends:
            at = buffer.find(end)
            if at >= 0 and (best is None or at < best[0]):
                best = (at, end)
        return best
