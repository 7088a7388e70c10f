"""The TSL-570's command list as :mod:`hil.emulator.manuals` checks it.

Every command of the *Santec TSL-570 Instruction Manual*'s remote command list: the IEEE 488.2
common commands, then its three groups, "optical output related commands" (pp. 69-88),
"input/output related commands" (pp. 89-93) and "system related commands" (pp. 94-99); the
error and alert lists are on p. 100. The manual's PDF was not at hand: its list is read where
lab drivers reproduce it, with the page of each command as the ``instrumental`` package's
TSL-570 driver (``instrumental/drivers/lasers/santec.py``) cites it; a command it does not cite
is marked "page not cited" in its group. Santec's own ``TSL`` Python class (Legacy command
set, 2025), QCoDeS contrib's ``SantecTSL570`` (a 62-command coverage table of the manual's
list, its ``Santec_TSL570_command_list.txt``) and QMI's ``Santec_Tsl570`` give the same list,
syntax, ranges and replies. A set and its query are one command here, listed with both lines.
"""

from __future__ import annotations

from hil.emulator.instruments.tsl570 import LaserTSL570
from hil.emulator.manual import Manual, ManualCommand

TITLE = (
    "Santec TSL-570 Instruction Manual, remote command list (pp. 69-100 as the lab drivers "
    "cite it; the PDF's edition line not seen)"
)
IEEE = "IEEE 488.2 common commands, page not cited"
OPTICAL = "optical output related commands"
IO = "input/output related commands"
SYSTEM = "system related commands"


def _c(syntax: str, lines: tuple[str, ...] | str, modelled: bool, section: str) -> ManualCommand:
    return ManualCommand(syntax, (lines,) if isinstance(lines, str) else lines, modelled, section)


def _p(group: str, page: int | None) -> str:
    return f"{group}, p. {page}" if page else f"{group}, page not cited"


_IEEE = (
    _c("*IDN?", "*IDN?", False, IEEE),
    _c("*RST", "*RST", True, IEEE),  # stops a sweep or a trigger standby
    _c("*TST?", "*TST?", False, IEEE),
    _c("*OPC?", "*OPC?", True, IEEE),
    _c("*CLS", "*CLS", False, IEEE),
    _c("*ESE", ("*ESE 60", "*ESE?"), False, IEEE),
    _c("*ESR?", "*ESR?", False, IEEE),
    _c("*SRE", ("*SRE 32", "*SRE?"), False, IEEE),
    _c("*STB?", "*STB?", False, IEEE),
)

_OPTICAL = (
    _c(
        ":WAVelength",
        (":WAV 1550.125", ":WAVelength?", ":WAV? MIN", ":WAV? MAX"),
        True,
        _p(OPTICAL, 69),
    ),
    _c(
        ":WAVelength:UNIT",
        (":WAV:UNIT 1", ":WAVelength:UNIT?", ":WAV:UNIT 0"),
        False,
        _p(OPTICAL, 70),
    ),
    _c(
        ":WAVelength:FINetuning",
        (":WAV:FIN 12.5", ":WAVelength:FINetuning?"),
        False,
        _p(OPTICAL, 70),
    ),
    _c(":WAVelength:FINetuning:DISable", ":WAV:FIN:DIS", False, _p(OPTICAL, 71)),
    _c(
        "[:WAVelength]:FREQuency",
        (":FREQ 193.5", ":WAV:FREQ?", ":FREQuency? MAX", ":WAVelength:FREQuency 193.4"),
        True,
        _p(OPTICAL, 71),
    ),
    _c(":COHCtrl", (":COHC 1", ":COHCtrl?", ":COHC 0"), False, _p(OPTICAL, 72)),
    _c(":POWer:STATe", (":POW:STAT 1", ":POWer:STATe?"), True, _p(OPTICAL, 72)),
    _c(":POWer:ATTenuation", (":POW:ATT 5.5", ":POWer:ATTenuation?"), False, _p(OPTICAL, 73)),
    _c(":POWer:ATTenuation:AUTo", (":POW:ATT:AUT 0", ":POW:ATT:AUTo?"), False, _p(OPTICAL, 73)),
    _c(
        ":POWer[:LEVel]",
        (":POW 3", ":POWer:LEVel?", ":POW? MIN", ":POW? MAX"),
        True,
        _p(OPTICAL, 74),
    ),
    _c(":POWer:ACTual[:LEVel]?", (":POW:ACT?", ":POWer:ACTual:LEVel?"), True, _p(OPTICAL, 74)),
    _c(":POWer:SHUTter", (":POW:SHUT 1", ":POWer:SHUTter?", ":POW:SHUT 0"), True, _p(OPTICAL, 75)),
    _c(":POWer:UNIT", (":POW:UNIT 1", ":POWer:UNIT?", ":POW:UNIT 0"), False, _p(OPTICAL, 76)),
    _c(":WAVelength:SWEep:STARt", (":WAV:SWE:STAR 1520", ":WAV:SWE:STAR?"), True, _p(OPTICAL, 76)),
    _c(
        "[:WAVelength]:FREQuency:SWEep:STARt",
        (":FREQ:SWE:STAR 197.0", ":WAV:FREQ:SWE:STAR?"),
        True,
        _p(OPTICAL, 77),
    ),
    _c(":WAVelength:SWEep:STOP", (":WAV:SWE:STOP 1580", ":WAV:SWE:STOP?"), True, _p(OPTICAL, 78)),
    _c(":WAVelength:SWEep:RANGe:MINimum?", ":WAV:SWE:RANG:MIN?", False, _p(OPTICAL, None)),
    _c(":WAVelength:SWEep:RANGe:MAXimum?", ":WAV:SWE:RANG:MAX?", False, _p(OPTICAL, None)),
    _c(
        "[:WAVelength]:FREQuency:SWEep:STOP",
        (":FREQ:SWE:STOP 190.0", ":WAV:FREQ:SWE:STOP?"),
        True,
        _p(OPTICAL, 79),
    ),
    _c(
        "[:WAVelength]:FREQuency:SWEep:RANGe:MINimum?",
        ":FREQ:SWE:RANG:MIN?",
        False,
        _p(OPTICAL, None),
    ),
    _c(
        "[:WAVelength]:FREQuency:SWEep:RANGe:MAXimum?",
        ":WAV:FREQ:SWE:RANG:MAX?",
        False,
        _p(OPTICAL, None),
    ),
    _c(":WAVelength:SWEep:MODe", (":WAV:SWE:MOD 2", ":WAV:SWE:MODe?"), True, _p(OPTICAL, 80)),
    _c(":WAVelength:SWEep:SPEed", (":WAV:SWE:SPE 100", ":WAV:SWE:SPEed?"), True, _p(OPTICAL, 81)),
    _c(
        ":WAVelength:SWEep:STEP[:WIDTh]",
        (":WAV:SWE:STEP 0.5", ":WAV:SWE:STEP:WIDTh?"),
        True,
        _p(OPTICAL, 81),
    ),
    _c(
        "[:WAVelength]:FREQuency:SWEep:STEP[:WIDTh]",
        (":FREQ:SWE:STEP 0.1", ":WAV:FREQ:SWE:STEP:WIDT?"),
        True,
        _p(OPTICAL, 82),
    ),
    _c(":WAVelength:SWEep:DWELl", (":WAV:SWE:DWEL 0.5", ":WAV:SWE:DWELl?"), True, _p(OPTICAL, 83)),
    _c(":WAVelength:SWEep:CYCLes", (":WAV:SWE:CYCL 3", ":WAV:SWE:CYCLes?"), True, _p(OPTICAL, 84)),
    _c(":WAVelength:SWEep:COUNt?", ":WAV:SWE:COUN?", True, _p(OPTICAL, 84)),
    _c(":WAVelength:SWEep:DELay", (":WAV:SWE:DEL 1.5", ":WAV:SWE:DELay?"), True, _p(OPTICAL, 85)),
    _c(
        ":WAVelength:SWEep[:STATe]",
        (":WAV:SWE 1", ":WAV:SWE:STAT?", ":WAVelength:SWEep:STATe 0"),
        True,
        _p(OPTICAL, 85),
    ),
    _c(
        ":WAVelength:SWEep[:STATe]:REPeat",
        (":WAV:SWE:REP", ":WAV:SWE:STAT:REP", ":WAV:SWE 0"),
        True,
        _p(OPTICAL, 86),
    ),
    _c(":READout:POINts?", ":READ:POIN?", True, _p(OPTICAL, 86)),
    _c(":READout:DATa?", ":READ:DAT?", True, _p(OPTICAL, None)),
    _c(":READout:DATa:POWer?", ":READout:DATa:POWer?", True, _p(OPTICAL, None)),
    _c(":AM:STATe", (":AM:STAT 1", ":AM:STATe?", ":AM:STAT 0"), False, _p(OPTICAL, 87)),
    _c(":AM:SOURce", (":AM:SOUR 3", ":AM:SOURce?"), False, _p(OPTICAL, 88)),
    _c(":WAVelength:OFFSet", (":WAV:OFFS 0.01", ":WAVelength:OFFSet?"), False, _p(OPTICAL, 88)),
)

_IO = (
    _c(
        ":TRIGger:INPut:EXTernal",
        (":TRIG:INP:EXT 1", ":TRIGger:INPut:EXTernal?", ":TRIG:INP:EXT 0"),
        True,
        _p(IO, 89),
    ),
    _c(
        ":TRIGger:INPut[:EXTernal]:ACTive",
        (":TRIG:INP:ACT 1", ":TRIG:INP:EXT:ACTive?"),
        False,
        _p(IO, 90),
    ),
    _c(
        ":TRIGger:INPut:STANdby",
        (":TRIG:INP:STAN 1", ":TRIGger:INPut:STANdby?", ":TRIG:INP:STAN 0"),
        True,
        _p(IO, 90),
    ),
    _c(":TRIGger:INPut:SOFTtrigger", ":TRIG:INP:SOFT", True, _p(IO, 91)),
    _c(":TRIGger:OUTPut", (":TRIG:OUTP 3", ":TRIGger:OUTPut?"), False, _p(IO, 91)),
    _c(":TRIGger:OUTPut:ACTive", (":TRIG:OUTP:ACT 1", ":TRIG:OUTP:ACTive?"), False, _p(IO, 91)),
    _c(
        ":TRIGger:OUTPut:STEP[:WIDTh]",
        (":TRIG:OUTP:STEP 0.01", ":TRIG:OUTP:STEP:WIDTh?"),
        True,
        _p(IO, 92),
    ),
    _c(":TRIGger:OUTPut:SETTing", (":TRIG:OUTP:SETT 1", ":TRIG:OUTP:SETTing?"), False, _p(IO, 93)),
    _c(":TRIGger:THRough", (":TRIG:THR 1", ":TRIGger:THRough?"), False, _p(IO, 93)),
)

_SYSTEM = (
    _c(":SYSTem:ERRor?", (":SYST:ERR?", ":SYSTem:ERRor?"), False, _p(SYSTEM, 94)),
    _c(
        ":SYSTem:COMMunicate:GPIB:ADDRess",
        (":SYST:COMM:GPIB:ADDR 5", ":SYST:COMM:GPIB:ADDRess?"),
        False,
        _p(SYSTEM, 94),
    ),
    _c(  # acts on the reply framing (hil.emulator.framing), not on the bench
        ":SYSTem:COMMunicate:GPIB:DELimiter",
        (":SYST:COMM:GPIB:DEL 2", ":SYST:COMM:GPIB:DELimiter?", ":SYST:COMM:GPIB:DEL 0"),
        False,
        _p(SYSTEM, 95),
    ),
    _c(
        ":SYSTem:COMMunicate:ETHernet:MACaddress?",
        ":SYST:COMM:ETH:MAC?",
        False,
        _p(SYSTEM, 95),
    ),
    _c(
        ":SYSTem:COMMunicate:ETHernet:IPADdress",
        (":SYST:COMM:ETH:IPAD 192.168.1.10", ":SYST:COMM:ETH:IPADdress?"),
        False,
        _p(SYSTEM, 95),
    ),
    _c(
        ":SYSTem:COMMunicate:ETHernet:SMASk",
        (":SYST:COMM:ETH:SMAS 255.255.0.0", ":SYST:COMM:ETH:SMASk?"),
        False,
        _p(SYSTEM, 96),
    ),
    _c(
        ":SYSTem:COMMunicate:ETHernet:DGATeway",
        (":SYST:COMM:ETH:DGAT 192.168.1.254", ":SYST:COMM:ETH:DGATeway?"),
        False,
        _p(SYSTEM, 96),
    ),
    _c(
        ":SYSTem:COMMunicate:ETHernet:PORT",
        (":SYST:COMM:ETH:PORT 5001", ":SYST:COMM:ETH:PORT?"),
        False,
        _p(SYSTEM, 97),
    ),
    _c(
        ":SYSTem:COMMunicate:CODe",
        (":SYST:COMM:COD 1", ":SYSTem:COMMunicate:CODe?", ":SYST:COMM:COD 0"),
        False,
        _p(SYSTEM, 97),
    ),
    _c(":SYSTem:LOCK?", ":SYST:LOCK?", False, _p(SYSTEM, 98)),
    _c(":DISPlay:BRIGhtness", (":DISP:BRIG 50", ":DISPlay:BRIGhtness?"), False, _p(SYSTEM, 98)),
    _c(":SPECial:SHUTdown", ":SPEC:SHUT", True, _p(SYSTEM, 98)),  # the light goes off
    _c(":SPECial:REBoot", ":SPECial:REBoot", True, _p(SYSTEM, 98)),  # the power-on light
    _c(":SYSTem:ALERt?", (":SYST:ALER?", ":SYSTem:ALERt?"), False, _p(SYSTEM, 99)),
    _c(":SYSTem:VERSion?", ":SYST:VERS?", False, _p(SYSTEM, None)),
    _c(":SYSTem:CODe?", ":SYST:COD?", False, _p(SYSTEM, None)),
)

MANUAL = Manual("TSL-570", TITLE, LaserTSL570, (*_IEEE, *_OPTICAL, *_IO, *_SYSTEM))
