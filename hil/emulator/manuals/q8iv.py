"""The Q8iv's command list as :mod:`hil.emulator.manuals` checks it.

Qontrol's programming manual itself (the PDF on qontrol.co.uk) was not found in the searchable
stores; its command set is read where Qontrol reproduces it:

- the command codes of the manual's command table as Qontrol's ``qontrol`` library 1.1.20
  tabulates them (``CMD_CODES``; "See Programming Manual" in ``issue_binary_command``), each
  entry citing its code;
- *QontrolDoc Documentation*, release 0, 28 June 2020 (``manual.pdf`` of
  github.com/takeqontrol/api), section 3.3 "Main commands and error codes": the core command
  set (``v``, ``i``, ``vmax``, ``imax``, ``vipall?``) and the error codes;
- the ASCII forms the library sends (``<cmd>ALL?``, ``<cmd>VEC<first>=``) and the replies a
  Q8iv on firmware v2.4.1 gave in Qontrol's recordings (``progs/*.json`` of the same
  repository, 2024).

Left out of ``CMD_CODES``: ``Q``, ``EQ``, ``M``, ``QN``, ``QL``, ``PW``, ``TIMER`` (added in 2024
for another product, "qme command codes"). Not in any of these sources for a Q8iv: the M2
motor module's ``X``, ``XMIN``, ``XMAX``, ``USTEP``, ``MODE`` and the S8i input's ``TEMP``.
"""

from __future__ import annotations

import re

from hil.emulator.instruments.qontrol import QontrolQ8iv
from hil.emulator.manual import Manual, ManualCommand
from hil.instruments.base import Handler

TITLE = (
    "Qontrol programming manual, command set for Q8-class modules as tabulated in the qontrol "
    "library 1.1.20 (CMD_CODES), and QontrolDoc Documentation release 0 (28 June 2020), "
    "section 3.3"
)
_CORE = "section 3.3 (core command set)"
_ERROR = re.compile(r"^E\d\d:\d\d+$")


def _c(syntax: str, lines: tuple[str, ...] | str, modelled: bool, section: str) -> ManualCommand:
    return ManualCommand(syntax, (lines,) if isinstance(lines, str) else lines, modelled, section)


def _code(code: int, more: str = "") -> str:
    return f"code 0x{code:02X}" + (f"; {more}" if more else "")


def _channel(name: str, value: str, unit: str, code: int, modelled: bool, more: str = ""):
    """A channel command: its set, query and every-channel query."""
    return _c(
        f"{name}<ch>=<{unit}>, {name}<ch>?, {name}ALL?",
        (f"{name}3={value}", f"{name}3?", f"{name}ALL?"),
        modelled,
        _code(code, more),
    )


def _setting(name: str, value: str, code: int) -> ManualCommand:
    """A module setting kept for the chain: set, query, a line per module."""
    return _c(
        f"{name}=<n>, {name}?, {name}ALL?",
        (f"{name}={value}", f"{name}?", f"{name}ALL?"),
        False,
        _code(code),
    )


def _query(name: str, code: int, modelled: bool, more: str = "") -> ManualCommand:
    return _c(f"{name}?, {name}ALL?", (f"{name}?", f"{name}ALL?"), modelled, _code(code, more))


COMMANDS = (
    _channel("V", "0.5", "V", 0x00, True, _CORE),
    _channel("I", "1.5", "mA", 0x01, True, _CORE),
    _channel("VMAX", "10", "V", 0x02, True, _CORE),
    _channel("IMAX", "9", "mA", 0x03, True, _CORE),
    _channel("VCAL", "1,0,0,0", "a>,<b>,<c>,<d", 0x04, False),
    _channel("ICAL", "1,0,0,0", "a>,<b>,<c>,<d", 0x05, False),
    _channel("VERR", "0.1", "V", 0x06, False),
    _channel("IERR", "0.1", "mA", 0x07, False),
    _c("VIP<ch>?, VIPALL?", ("VIP3?", "VIPALL?"), True, _code(0x0A, _CORE)),
    _channel("SR", "100", "value", 0x0B, False),
    _channel("PDI", "0", "value", 0x0C, False),
    _channel("PDP", "0", "value", 0x0D, False),
    _channel("PDR", "0", "value", 0x0E, False),
    _channel("GAIN", "1", "value", 0x0F, False),
    _query("VFULL", 0x20, False),
    _query("IFULL", 0x21, False),
    _query("NCHAN", 0x22, True),
    _query("FIRMWARE", 0x23, False),
    _query("ID", 0x24, False),
    _query("LIFETIME", 0x25, True),
    _c(
        "NVM<address>=<word>, NVM<address>?, NVMALL?",
        ("NVM16=0x1234", "NVM16?", "NVMALL?"),
        False,
        _code(0x26),
    ),
    _query("LOG", 0x27, True),
    _setting("QUIET", "0", 0x28),
    _setting("LED", "1", 0x31),
    _c("NUP=<n>, NUP?, NUPALL?", ("NUP=0", "NUP?", "NUPALL?"), True, _code(0x32)),
    _setting("ADCT", "5", 0x33),
    _setting("ADCN", "2", 0x34),
    _setting("CCFN", "0", 0x35),
    _setting("INTEST", "0", 0x36),
    _query("OK", 0x37, False),
    _setting("DIGSUP", "0", 0x38),
    _c("HELP, HELP?", ("HELP", "HELP?"), False, _code(0x41, "section 3.3 ('help')")),
    _setting("SAFE", "1", 0x42),
    _setting("ROCOM", "0", 0x43),
    _c("IVEC<first>=<mA>,...", "IVEC0=1,2,0,0", True, "library: set_all_values('I')"),
    _c("VVEC<first>=<V>,...", "VVEC0=0.5,0,0,0", True, "library: set_all_values('V')"),
    _c("VMAXVEC<first>=<V>,...", "VMAXVEC0=12,12", True, "library: set_all_values('VMAX')"),
    _c("IMAXVEC<first>=<mA>,...", "IMAXVEC0=24,24", True, "library: set_all_values('IMAX')"),
)


def reply_errors(handler: Handler, line: str, reply: str | bytes | None) -> list[str]:
    """The problems of one line: each ``E<code>:<channel>`` line of its reply (a query left
    without a reply is caught by :func:`hil.emulator.manual.check` itself)."""
    text = reply.decode("ascii", "replace") if isinstance(reply, bytes) else reply or ""
    return [x.strip() for x in text.split("\n") if _ERROR.match(x.strip())]


MANUAL = Manual("Q8iv", TITLE, QontrolQ8iv, COMMANDS, reply_errors)
