"""The PM100D's command list as :mod:`hil.emulator.manuals` checks it.

Every command of the *Thorlabs PM100D Operation Manual*, chapter 6.4 "PM100D SCPI Commands"
(section 6.4.2, the command reference; printed pages of the edition reproduced at
easymanua.ls/thorlabs/pm100d/manual, whose edition line was not seen). Pages seen: 43 (6.4.1,
the SENSe tree with ZERO, BEAMdiameter, WAVelength, POWer[:PDIode][:RESPonse] and
POWer:THERmopile), 44 (``SYST:TIME 10, 34, 48``; ``CORR:BEAM 1;:AVER 300``), 45 (MIN, MAX,
DEF; ``POWer:REFerence``), 47 (6.4.2.2, the IEEE 488.2 commands), 49 (``SYST:SENS:IDN?``). The
rest of the list ("6.4.2, page not seen") was read where the manual's list is reproduced: the
Thorlabs PM100D VISA instrument driver 2.0.0 (PM100D_Drv.c, 2009: the SCPI line of each
function; PM100D.h 3.2.0: the STATus registers and bits) and the ThorlabsPM100 package 1.2.2
(one class per command of the manual's list, "PM100D only" marks kept). A set and its query
are one command here, listed with both lines.
"""

from __future__ import annotations

from hil.emulator.instruments.pm100d import PowerMeterPM100D
from hil.emulator.manual import Manual, ManualCommand

TITLE = (
    "Thorlabs PM100D Operation Manual, chapter 6.4 PM100D SCPI Commands (section 6.4.2, "
    "command reference); edition as reproduced at easymanua.ls, edition line not seen"
)
NOT_SEEN = "6.4.2, page not seen"


def _c(syntax: str, lines: tuple[str, ...] | str, modelled: bool, section: str) -> ManualCommand:
    return ManualCommand(syntax, (lines,) if isinstance(lines, str) else lines, modelled, section)


_IEEE = (
    _c("*CLS", "*CLS", False, "6.4.2.2, p. 47"),
    _c("*ESE", ("*ESE 32", "*ESE?"), False, "6.4.2.2, p. 47"),
    _c("*ESR?", "*ESR?", False, "6.4.2.2, p. 47"),
    _c("*IDN?", "*IDN?", False, "6.4.2.2.1, p. 47"),
    _c("*OPC", "*OPC", True, "6.4.2.2.2, p. 47"),
    _c("*OPC?", "*OPC?", True, "6.4.2.2.3, p. 47"),
    _c("*RST", "*RST", False, "6.4.2.2.4, p. 47"),
    _c("*SRE", ("*SRE 8", "*SRE?"), False, "6.4.2.2, p. 47"),
    _c("*STB?", "*STB?", False, "6.4.2.2, p. 47"),
    _c("*TST?", "*TST?", False, "6.4.2.2.5, p. 47"),
    _c("*WAI", "*WAI", True, "6.4.2.2, p. 47"),
)

_SYSTEM = (
    _c("SYSTem:BEEPer[:IMMediate]", ("SYST:BEEP", "SYST:BEEP:IMM"), False, NOT_SEEN),
    _c("SYSTem:BEEPer:STATe", ("SYST:BEEP:STAT 0", "SYST:BEEP:STAT?"), False, NOT_SEEN),
    _c("SYSTem:DATE", ("SYST:DATE 2026, 3, 14", "SYST:DATE?"), False, NOT_SEEN),
    _c("SYSTem:TIME", ("SYST:TIME 10, 34, 48", "SYST:TIME?"), False, "6.4.2; p. 44 (example)"),
    _c("SYSTem:ERRor[:NEXT]?", ("SYST:ERR?", "SYST:ERR:NEXT?"), False, NOT_SEEN),
    _c("SYSTem:LFRequency", ("SYST:LFR 60", "SYST:LFR?"), False, NOT_SEEN),
    _c("SYSTem:SENSor:IDN?", "SYST:SENS:IDN?", False, "6.4.2, p. 49"),
    _c("SYSTem:VERSion?", "SYST:VERS?", False, NOT_SEEN),
)


def _register(node: str, short: str, modelled_condition: bool) -> tuple[ManualCommand, ...]:
    root = f"STATus:{node}"
    return (
        _c(f"{root}[:EVENt]?", (f"STAT:{short}?", f"STAT:{short}:EVEN?"), False, NOT_SEEN),
        _c(f"{root}:CONDition?", f"STAT:{short}:COND?", modelled_condition, NOT_SEEN),
        _c(f"{root}:PTRansition", (f"STAT:{short}:PTR 512", f"STAT:{short}:PTR?"), False, NOT_SEEN),
        _c(f"{root}:NTRansition", (f"STAT:{short}:NTR 0", f"STAT:{short}:NTR?"), False, NOT_SEEN),
        _c(f"{root}:ENABle", (f"STAT:{short}:ENAB 8", f"STAT:{short}:ENAB?"), False, NOT_SEEN),
    )


_STATUS = (
    *_register("MEASurement", "MEAS", False),
    *_register("AUXillary", "AUX", False),
    *_register("OPERation", "OPER", False),
    *_register("QUEStionable", "QUES", True),  # a reading over a manual range
    _c("STATus:PRESet", "STAT:PRES", False, NOT_SEEN),
)

_DISPLAY = (
    _c("DISPlay:BRIGhtness", ("DISP:BRIG 0.8", "DISP:BRIG?"), False, NOT_SEEN),
    _c("DISPlay:CONTrast", ("DISP:CONT 0.4", "DISP:CONT?"), False, NOT_SEEN),
    _c("CALibration:STRing?", "CAL:STR?", False, NOT_SEEN),
)

_ZERO = "[SENSe:]CORRection:COLLect:ZERO"
_CORRECTION = (
    _c("[SENSe:]AVERage[:COUNt]", ("AVER 300", "SENS:AVER:COUN?"), True, "6.4.2; p. 44"),
    _c(
        "[SENSe:]CORRection[:LOSS[:INPut[:MAGNitude]]]",
        ("SENS:CORR:LOSS:INP:MAGN 3", "CORR?", "CORR:LOSS:INP:MAGN? MAX", "CORR 0"),
        True,
        NOT_SEEN,
    ),
    _c(f"{_ZERO}[:INITiate]", ("SENS:CORR:COLL:ZERO", "CORR:COLL:ZERO:INIT"), True, "6.4.1, p. 43"),
    _c(f"{_ZERO}:ABORt", "SENS:CORR:COLL:ZERO:ABORT", False, "6.4.1, p. 43"),
    _c(f"{_ZERO}:STATe?", "SENS:CORR:COLL:ZERO:STATE?", False, "6.4.1, p. 43"),
    _c(f"{_ZERO}:MAGNitude?", "SENS:CORR:COLL:ZERO:MAGN?", True, "6.4.1, p. 43"),
    _c(
        "[SENSe:]CORRection:BEAMdiameter",
        ("CORR:BEAM 1", "CORR:BEAM?", "SENS:CORR:BEAM? DEF"),
        True,
        "6.4.1, p. 43; p. 44",
    ),
    _c(
        "[SENSe:]CORRection:WAVelength",
        ("CORR:WAV 1310", "SENS:CORR:WAV?", "CORR:WAV? MIN", "CORR:WAV? MAX"),
        True,
        "6.4.1, p. 43",
    ),
    _c(
        "[SENSe:]CORRection:POWer[:PDIode][:RESPonse]",
        ("SENS:CORR:POW:PDI:RESP?", "SENS:CORR:POW? MAX", "CORR:POW:PDI:RESP 0.9"),
        True,
        "6.4.1, p. 43",
    ),
    _c(
        "[SENSe:]CORRection:POWer:THERmopile[:RESPonse]",
        ("SENS:CORR:POW:THER:RESP 0.001", "SENS:CORR:POW:THER? DEF"),
        False,
        "6.4.1, p. 43",
    ),
    _c(
        "[SENSe:]CORRection:ENERgy[:PYRo][:RESPonse]",
        ("SENS:CORR:ENER:PYRO:RESP 2", "SENS:CORR:ENER?"),
        False,
        NOT_SEEN,
    ),
)

_SENSE = (
    _c(
        "[SENSe:]CURRent[:DC]:RANGe:AUTO",
        ("SENS:CURR:RANG:AUTO 1", "SENS:CURR:RANG:AUTO?"),
        True,
        NOT_SEEN,
    ),
    _c(
        "[SENSe:]CURRent[:DC]:RANGe[:UPPer]",
        ("CURR:DC:RANG 50E-6", "CURR:RANG?", "SENS:CURR:RANG:UPP? MAX", "CURR:RANG:AUTO 1"),
        True,
        "6.4.1, p. 43 (example)",
    ),
    _c(
        "[SENSe:]CURRent[:DC]:REFerence",
        ("SENS:CURR:REF 1E-6", "SENS:CURR:REF?", "SENS:CURR:REF? MAX"),
        True,
        NOT_SEEN,
    ),
    _c(
        "[SENSe:]CURRent[:DC]:REFerence:STATe",
        ("SENS:CURR:REF:STAT 0", "SENS:CURR:REF:STAT?"),
        True,
        NOT_SEEN,
    ),
    _c(
        "[SENSe:]ENERgy:RANGe[:UPPer]",
        ("SENS:ENER:RANG 0.01", "SENS:ENER:RANG:UPP?", "SENS:ENER:RANG? MIN"),
        False,
        NOT_SEEN,
    ),
    _c("[SENSe:]ENERgy:REFerence", ("SENS:ENER:REF 0.001", "SENS:ENER:REF? DEF"), False, NOT_SEEN),
    _c(
        "[SENSe:]ENERgy:REFerence:STATe",
        ("SENS:ENER:REF:STAT 1", "SENS:ENER:REF:STAT?"),
        False,
        NOT_SEEN,
    ),
    _c("[SENSe:]FREQuency:RANGe[:UPPer]?", "SENS:FREQ:RANG:UPP?", False, NOT_SEEN),
    _c("[SENSe:]FREQuency:RANGe:LOWer?", "SENS:FREQ:RANG:LOW?", False, NOT_SEEN),
    _c(
        "[SENSe:]POWer[:DC]:RANGe:AUTO",
        ("SENS:POW:RANG:AUTO 0", "SENS:POW:RANG:AUTO?", "POW:RANG:AUTO ON"),
        True,
        NOT_SEEN,
    ),
    _c(
        "[SENSe:]POWer[:DC]:RANGe[:UPPer]",
        ("SENS:POW:RANG 1E-3", "SENS:POW:RANG:UPP?", "POW:RANG? MIN", "POW:DC:RANG:AUTO 1"),
        True,
        NOT_SEEN,
    ),
    _c(
        "[SENSe:]POWer[:DC]:REFerence",
        ("POW:REF 1E-6", "POW:REF?", "POW:REF? DEF"),
        True,
        "6.4.2; p. 45 (example)",
    ),
    _c(
        "[SENSe:]POWer[:DC]:REFerence:STATe",
        ("SENS:POW:REF:STAT 1", "SENS:POW:REF:STAT?", "SENS:POW:REF:STAT 0"),
        True,
        NOT_SEEN,
    ),
    _c(
        "[SENSe:]POWer[:DC]:UNIT",
        ("SENS:POW:DC:UNIT DBM", "POW:UNIT?", "POW:UNIT W"),
        True,
        NOT_SEEN,
    ),
    _c(
        "[SENSe:]VOLTage[:DC]:RANGe:AUTO",
        ("SENS:VOLT:RANG:AUTO 0", "SENS:VOLT:RANG:AUTO?"),
        False,
        NOT_SEEN,
    ),
    _c(
        "[SENSe:]VOLTage[:DC]:RANGe[:UPPer]",
        ("SENS:VOLT:RANG 0.1", "SENS:VOLT:RANG:UPP?", "VOLT:RANG? MAX"),
        False,
        NOT_SEEN,
    ),
    _c("[SENSe:]VOLTage[:DC]:REFerence", ("SENS:VOLT:REF 0.01", "SENS:VOLT:REF?"), False, NOT_SEEN),
    _c(
        "[SENSe:]VOLTage[:DC]:REFerence:STATe",
        ("SENS:VOLT:REF:STAT 1", "SENS:VOLT:REF:STAT?"),
        False,
        NOT_SEEN,
    ),
    _c(
        "[SENSe:]PEAKdetector:THReshold",
        ("SENS:PEAK:THR 20", "SENS:PEAK:THR?", "SENS:PEAK:THR? DEF"),
        False,
        NOT_SEEN,
    ),
)

_INPUT = (
    _c(
        "INPut:ADAPter[:TYPE]",
        ("INP:ADAP:TYPE THER", "INP:ADAP?", "INP:ADAP PHOT"),
        False,
        NOT_SEEN,
    ),
    _c(
        "INPut:PDIode:FILTer:LPASs[:STATe]",
        ("INP:PDI:FILT:LPAS:STAT 1", "INP:PDI:FILT:LPAS?"),
        False,
        NOT_SEEN,
    ),
    _c(
        "INPut:THERmopile:ACCelerator[:STATe]",
        ("INP:THER:ACC:STAT 1", "INP:THER:ACC?"),
        False,
        NOT_SEEN,
    ),
    _c(
        "INPut:THERmopile:ACCelerator:AUTO",
        ("INP:THER:ACC:AUTO 1", "INP:THER:ACC:AUTO?"),
        False,
        NOT_SEEN,
    ),
    _c(
        "INPut:THERmopile:ACCelerator:TAU",
        ("INP:THER:ACC:TAU 2", "INP:THER:ACC:TAU?", "INP:THER:ACC:TAU? MAX"),
        False,
        NOT_SEEN,
    ),
)

#: The measurement functions: node, short form, whether the emulation reads the bench for it.
_FUNCTIONS = (
    ("[:POWer]", "POW", True),
    (":CURRent[:DC]", "CURR", True),
    (":VOLTage[:DC]", "VOLT", False),
    (":ENERgy", "ENER", False),
    (":FREQuency", "FREQ", False),
    (":PDENsity", "PDEN", True),
    (":EDENsity", "EDEN", False),
    (":RESistance", "RES", False),
    (":TEMPerature", "TEMP", False),
)

_MEASURE = (
    _c("ABORt", "ABOR", False, NOT_SEEN),
    *(
        _c(f"CONFigure[:SCALar]{node}", (f"CONF:{short}", f"CONF:SCAL:{short}"), bench, NOT_SEEN)
        for node, short, bench in _FUNCTIONS
    ),
    _c("CONFigure?", ("CONF:POW", "CONF?"), False, NOT_SEEN),
    _c("INITiate[:IMMediate]", ("INIT", "INIT:IMM"), True, NOT_SEEN),
    *(
        _c(
            f"MEASure[:SCALar]{node}",
            (f"MEAS:{short}", f"MEAS:SCAL:{short}?", f"MEAS:{short}?", "MEAS?"),
            bench,
            NOT_SEEN,
        )
        for node, short, bench in _FUNCTIONS
    ),
    _c("READ?", ("CONF:POW", "READ?"), True, NOT_SEEN),
    _c("FETCh?", ("INIT", "FETC?"), True, NOT_SEEN),
)

MANUAL = Manual(
    "PM100D",
    TITLE,
    lambda world: PowerMeterPM100D(world, port=0),
    (*_IEEE, *_SYSTEM, *_STATUS, *_DISPLAY, *_CORRECTION, *_SENSE, *_INPUT, *_MEASURE),
)
