"""The N774x multiport power meters' command list as :mod:`hil.emulator.manuals` checks it.

Every command the *Keysight N77xx Series Programming Guide*, Edition 7, March 2015 (N7744A,
N7745A, N7747A, N7748A; "PG", its page) gives for the multiport power meters (instrument column
MPPM, PM or all in its Table 2.1, pp. 28-36), with the IEEE 488.2 commands of its Table 1.3
(p. 22). Then the commands of the *Keysight N774xC Series Multiport Power Meter Programming
Guide* beyond those: pages of it seen ("C p."), or the commands an N7744C driver sends whose
pages were not seen ("C, page not seen"). The attenuator, laser and switch commands of the PG
are not the meters' and are not listed. The check builds an N7744C (4 channels).
"""

from __future__ import annotations

from hil.emulator.instruments.power_meters import PowerMeterN7744A
from hil.emulator.manual import Manual, ManualCommand

TITLE = (
    "Keysight N77xx Series Programming Guide, Edition 7, March 2015 (N7744A/45A/47A/48A), with "
    "the Keysight N774xC Series Multiport Power Meter Programming Guide"
)


def _c(syntax: str, lines: tuple[str, ...] | str, modelled: bool, section: str) -> ManualCommand:
    return ManualCommand(syntax, (lines,) if isinstance(lines, str) else lines, modelled, section)


_IEEE = (
    _c("*CLS", "*CLS", False, "PG p. 38"),
    _c("*ESE", "*ESE 21", False, "PG p. 38"),
    _c("*ESE?", "*ESE?", False, "PG p. 39"),
    _c("*ESR?", "*ESR?", False, "PG p. 39"),
    _c("*IDN?", "*IDN?", False, "PG p. 39"),
    _c("*OPC", "*OPC", True, "PG p. 40"),
    _c("*OPC?", "*OPC?", True, "PG p. 40"),
    _c("*OPT?", "*OPT?", False, "PG p. 40"),
    _c("*RST", "*RST", False, "PG p. 41; C p. 32"),
    _c("*STB?", "*STB?", False, "PG p. 41; C p. 32"),
    _c("*TST?", "*TST?", False, "PG p. 42; C p. 32"),
    _c("*WAI", "*WAI", True, "PG p. 43"),
)

_STATUS = (
    _c(":STATus:PRESet", "STAT:PRES", False, "PG p. 48"),
    _c(":STATus:OPERation[:EVENt][:LEVel]?", "STAT:OPER?", False, "PG p. 48; C p. 34"),
    _c(":STATus:OPERation:CONDition[:LEVel]?", "STAT:OPER:COND?", False, "PG p. 49; C p. 34"),
    _c(
        ":STATus:OPERation:ENABle[:LEVel]",
        ("STAT:OPER:ENAB 2", "STAT:OPER:ENAB?"),
        False,
        "PG p. 49",
    ),
    _c(":STATus<n>:OPERation[:EVENt]?", "STAT2:OPER?", False, "PG p. 51"),
    _c(":STATus<n>:OPERation:CONDition?", "STAT2:OPER:COND?", False, "PG p. 51"),
    _c(":STATus<n>:OPERation:ENABle", ("STAT2:OPER:ENAB 8", "STAT2:OPER:ENAB?"), False, "PG p. 52"),
    _c(":STATus:QUEStionable[:EVENt][:LEVel]?", "STAT:QUES?", False, "PG p. 52"),
    _c(":STATus:QUEStionable:CONDition[:LEVel]?", "STAT:QUES:COND?", True, "PG p. 55"),
    _c(
        ":STATus:QUEStionable:ENABle[:LEVel]",
        ("STAT:QUES:ENAB 2", "STAT:QUES:ENAB?"),
        False,
        "PG p. 55",
    ),
    _c(":STATus<n>:QUEStionable[:EVENt]?", "STAT2:QUES?", False, "PG p. 55"),
    _c(":STATus<n>:QUEStionable:CONDition?", "STAT2:QUES:COND?", False, "PG p. 55"),
    _c(
        ":STATus<n>:QUEStionable:ENABle",
        ("STAT2:QUES:ENAB 2", "STAT2:QUES:ENAB?"),
        False,
        "PG p. 55",
    ),
)

_ETH = ":SYSTem:COMMunicate:ETHernet"
_SYSTEM = (
    _c(":SYSTem:DATE", ("SYST:DATE 2025,3,14", "SYST:DATE?"), False, "PG p. 67"),
    _c(":SYSTem:ERRor?", "SYST:ERR?", False, "PG p. 67"),
    _c(":SYSTem:HELP:HEADers?", "SYST:HELP:HEAD?", False, "PG p. 67"),
    _c(":SYSTem:LXI:IDN", "SYST:LXI:IDN ON", False, "PG p. 68"),
    _c(":SYSTem:PRESet", "SYST:PRES", False, "PG p. 68"),
    _c(":SYSTem:REBoot", "SYST:REB", False, "PG p. 68"),
    _c(":SYSTem:TIME", ("SYST:TIME 13,45,0", "SYST:TIME?"), False, "PG p. 69"),
    _c(":SYSTem:VERSion?", "SYST:VERS?", False, "PG p. 69"),
    _c(
        ":SYSTem:COMMunicate:GPIB[:SELF]:ADDRess",
        ("SYST:COMM:GPIB:ADDR 20", "SYST:COMM:GPIB:SELF:ADDR?"),
        False,
        "PG p. 69",
    ),
    _c(f"{_ETH}:MACaddress?", "SYST:COMM:ETH:MAC?", False, "PG p. 70"),
    _c(
        f"{_ETH}:DHCP:ENABle",
        ("SYST:COMM:ETH:DHCP:ENAB ON", "SYST:COMM:ETH:DHCP:ENAB?"),
        False,
        "PG p. 71",
    ),
    _c(
        f"{_ETH}:AUTOip:ENABle",
        ("SYST:COMM:ETH:AUTO:ENAB ON", "SYST:COMM:ETH:AUTO:ENAB?"),
        False,
        "PG p. 71",
    ),
    _c(f"{_ETH}:IPADdress:CURRent?", "SYST:COMM:ETH:IPAD:CURR?", False, "PG p. 72"),
    _c(f"{_ETH}:SMASk:CURRent?", "SYST:COMM:ETH:SMAS:CURR?", False, "PG p. 72"),
    _c(f"{_ETH}:HOSTname:CURRent?", "SYST:COMM:ETH:HOST:CURR?", False, "PG p. 72"),
    _c(f"{_ETH}:DOMainname:CURRent?", "SYST:COMM:ETH:DOM:CURR?", False, "PG p. 73"),
    _c(f"{_ETH}:DGATeway:CURRent?", "SYST:COMM:ETH:DGAT:CURR?", False, "PG p. 73"),
    _c(
        f"{_ETH}:HOSTname",
        ('SYST:COMM:ETH:HOST "powermeter1"', "SYST:COMM:ETH:HOST?"),
        False,
        "PG p. 73",
    ),
    _c(
        f"{_ETH}:DOMainname",
        ('SYST:COMM:ETH:DOM ".example.com"', "SYST:COMM:ETH:DOM?"),
        False,
        "PG p. 74",
    ),
    _c(
        f"{_ETH}:IPADdress",
        ('SYST:COMM:ETH:IPAD "192.132.13.2"', "SYST:COMM:ETH:IPAD?"),
        False,
        "PG p. 74",
    ),
    _c(
        f"{_ETH}:SMASk",
        ('SYST:COMM:ETH:SMAS "255.255.255.0"', "SYST:COMM:ETH:SMAS?"),
        False,
        "PG p. 75",
    ),
    _c(
        f"{_ETH}:DGATeway",
        ('SYST:COMM:ETH:DGAT "192.168.101.11"', "SYST:COMM:ETH:DGAT?"),
        False,
        "PG p. 75",
    ),
    _c(f"{_ETH}:RESet", "SYST:COMM:ETH:RES", False, "PG p. 76"),
    _c(f"{_ETH}:RESTart", "SYST:COMM:ETH:REST", False, "PG p. 76"),
    _c(f"{_ETH}:SAVE", "SYST:COMM:ETH:SAVE", False, "PG p. 76"),
    _c(f"{_ETH}:CANCel", "SYST:COMM:ETH:CANC", False, "PG p. 77"),
)

_SETT = ":CONFigure:MEASurement:SETTing"
_SETTINGS = (
    _c(f"{_SETT}:ACTual?", "CONF:MEAS:SETT:ACT?", False, "PG p. 78"),
    _c(f"{_SETT}:CANCel", "CONF:MEAS:SETT:CANC", False, "PG p. 79"),
    _c(f"{_SETT}:ERASe", "CONF:MEAS:SETT:ERAS 1", False, "PG p. 79"),
    _c(f"{_SETT}:NUMBer?", "CONF:MEAS:SETT:NUMB?", False, "PG p. 79"),
    _c(f"{_SETT}:PRESet", "CONF:MEAS:SETT:PRES", False, "PG p. 80"),
    _c(f"{_SETT}:RECall", ("CONF:MEAS:SETT:SAVE 2", "CONF:MEAS:SETT:REC 2"), False, "PG p. 80"),
    _c(f"{_SETT}:SAVE", ("CONF:MEAS:SETT:SAV 1", "CONF:MEAS:SETT:ACT?"), False, "PG p. 80"),
)

_SLOT = ":SLOT[n][:HEAD[m]]"
_SLOTS = (
    _c(f"{_SLOT}:OPTions?", "SLOT1:HEAD1:OPT?", False, "PG p. 82"),
    _c(f"{_SLOT}:IDN?", "SLOT2:IDN?", False, "PG p. 82"),
    _c(f"{_SLOT}:WAVelength:RESPonse?", "SLOT1:HEAD1:WAV:RESP?", False, "PG p. 83"),
    _c(f"{_SLOT}:WAVelength:RESPonse:CSV?", "SLOT1:WAV:RESP:CSV?", False, "PG p. 83"),
    _c(f"{_SLOT}:WAVelength:RESPonse:SIZE?", "SLOT2:HEAD1:WAV:RESP:SIZE?", False, "PG p. 83"),
)

_CH = "[n][:CHANnel[m]]"
_MEASURE = (
    _c(f":FETCh{_CH}[:SCALar]:POWer[:DC]?", ("INIT1:IMM", "FETC1:POW?"), True, "PG p. 114"),
    _c(f":FETCh{_CH}[:SCALar]:POWer[:DC]:ALL?", "FETC:POW:ALL?", True, "PG p. 115"),
    _c(f":FETCh{_CH}[:SCALar]:POWer[:DC]:ALL:CSV?", "FETC:POW:ALL:CSV?", True, "PG p. 115"),
    _c(f":FETCh{_CH}[:SCALar]:POWer[:DC]:ALL:CONFig?", "FETC:POW:ALL:CONF?", False, "PG p. 116"),
    _c(f":INITiate{_CH}[:IMMediate]", ("INIT2:IMM", "INIT2:CHAN1"), True, "PG p. 116"),
    _c(f":INITiate{_CH}:CONTinuous", ("INIT2:CONT 1", "INIT2:CONT?"), True, "PG p. 117"),
    _c(f":READ{_CH}[:SCALar]:POWer[:DC]:ALL?", "READ:POW:ALL?", True, "PG p. 117"),
    _c(f":READ{_CH}[:SCALar]:POWer[:DC]:ALL:CSV?", "READ:POW:ALL:CSV?", True, "PG p. 117"),
    _c(
        f":READ{_CH}[:SCALar]:POWer[:DC]:ALL:CONFig?",
        "READ1:POW:ALL:CONF?",
        False,
        "PG p. 118; C p. 69",
    ),
    _c(
        f":READ{_CH}[:SCALar]:POWer[:DC]?",
        ("READ1:POW?", "READ2:CHAN1:SCAL:POW:DC?"),
        True,
        "PG p. 118; C p. 69",
    ),
)

_SENS = f":SENSe{_CH}"
_FUNCTIONS = (
    _c(
        f"{_SENS}:CORRection[:LOSS][:INPut][:MAGNitude]",
        ("SENS1:CORR 1DB", "SENS1:CORR?"),
        True,
        "PG p. 121",
    ),
    _c(
        f"{_SENS}:CORRection:COLLect:ZERO",
        ("SENS1:CORR:COLL:ZERO", "SENS1:CORR:COLL:ZERO?"),
        True,
        "PG p. 121",
    ),
    _c(
        f"{_SENS}:CORRection:COLLect:ZERO:ALL",
        ("SENS:CHAN:CORR:COLL:ZERO:ALL", "SENS:CORR:COLL:ZERO:ALL?"),
        True,
        "PG p. 122",
    ),
    _c(f"{_SENS}:FUNCtion:LOOP", ("SENS1:FUNC:LOOP 1", "SENS1:FUNC:LOOP?"), True, "PG p. 123"),
    _c(
        f"{_SENS}:FUNCtion:PARameter:LOGGing",
        ("SENS1:FUNC:PAR:LOGG 64,1ms", "SENS1:FUNC:PAR:LOGG?"),
        True,
        "PG p. 124",
    ),
    _c(
        f"{_SENS}:FUNCtion:PARameter:MINMax",
        ("SENS2:FUNC:PAR:MINM WIND,10", "SENS2:FUNC:PAR:MINM?"),
        True,
        "PG p. 124",
    ),
    _c(
        f"{_SENS}:FUNCtion:PARameter:STABility",
        ("SENS3:FUNC:PAR:STAB 1s,0.1s,0.1s", "SENS3:FUNC:PAR:STAB?"),
        True,
        "PG p. 126",
    ),
    _c(
        f"{_SENS}:FUNCtion:RESult?",
        ("SENS1:FUNC:STAT LOGG,STAR", "SENS1:FUNC:STAT?", "SENS1:FUNC:STAT?", "SENS1:FUNC:RES?"),
        True,
        "PG p. 130",
    ),
    _c(f"{_SENS}:FUNCtion:RESult:INDex?", "SENS1:FUNC:RES:IND?", True, "PG p. 130"),
    _c(f"{_SENS}:FUNCtion:RESult:BUFA?", "SENS1:FUNC:RES:BUFA?", True, "PG p. 131"),
    _c(
        f"{_SENS}:FUNCtion:RESult:BUFB?",
        (
            "SENS4:FUNC:LOOP 2",
            "SENS4:FUNC:PAR:LOGG 10,1ms",
            "SENS4:FUNC:STAT LOGG,STAR",
            "SENS4:FUNC:STAT?",
            "SENS4:FUNC:STAT?",
            "SENS4:FUNC:RES:BUFB?",
        ),
        True,
        "PG p. 131",
    ),
    _c(
        f"{_SENS}:FUNCtion:STATe",
        ("SENS2:FUNC:STAT MINM,STAR", "SENS2:FUNC:STAT?", "SENS2:FUNC:STAT MINM,STOP"),
        True,
        "PG p. 132",
    ),
)

_POWER = (
    _c(f"{_SENS}:POWer:ATIMe", ("SENS1:POW:ATIM 1ms", "SENS1:POW:ATIM?"), True, "PG p. 133"),
    _c(
        f"{_SENS}:POWer:RANGe:AUTO",
        ("SENS1:POW:RANG:AUTO 1", "SENS1:POW:RANG:AUTO?"),
        True,
        "PG p. 133",
    ),
    _c(
        f"{_SENS}:POWer:RANGe[:UPPer]",
        ("SENS2:POW:RANG -20DBM", "SENS2:POW:RANG:UPP?"),
        True,
        "PG p. 134",
    ),
    _c(
        f"{_SENS}:POWer:GAIN:AUTO",
        ("SENS1:POW:GAIN:AUTO 1", "SENS1:POW:GAIN:AUTO?"),
        False,
        "PG p. 134",
    ),
    _c(
        f"{_SENS}:POWer:REFerence",
        (
            "SENS1:POW:REF TOMOD,-40DB",
            "SENS1:POW:REF? TOMOD",
            "SENS1:POW:REF TOREF,1UW",
            "SENS1:POW:REF? TOREF",
        ),
        True,
        "PG p. 135",
    ),
    _c(f"{_SENS}:POWer:REFerence:DISPlay", "SENS1:POW:REF:DISP", True, "PG p. 136"),
    _c(
        f"{_SENS}:POWer:REFerence:STATe",
        ("SENS1:POW:REF:STAT 0", "SENS1:POW:REF:STAT?"),
        True,
        "PG p. 136",
    ),
    _c(
        f"{_SENS}:POWer:REFerence:STATe:RATio",
        ("SENS1:POW:REF:STAT:RAT 2,1", "SENS1:POW:REF:STAT:RAT TOREF,1", "SENS1:POW:REF:STAT:RAT?"),
        True,
        "PG p. 137",
    ),
    _c(f"{_SENS}:POWer:UNIT", ("SENS1:POW:UNIT 1", "SENS1:POW:UNIT?"), True, "PG p. 138; C p. 88"),
    _c(
        ":SENSe[:CHANnel[m]]:POWer:UNIT:ALL:CSV?",
        "SENS:POW:UNIT:ALL:CSV?",
        False,
        "PG p. 138; C p. 88",
    ),
    _c(
        f"{_SENS}:POWer:WAVelength",
        ("SENS1:POW:WAV 1550NM", "SENS1:POW:WAV?", "SENS1:POW:WAV? MIN"),
        False,
        "PG p. 138",
    ),
    _c(
        ":SENSe[n]:POWer:WAVelength[:ALL]",
        ("SENS:POW:WAV:ALL 1310NM", "SENS:POW:WAV:ALL?"),
        False,
        "C p. 88",
    ),
    _c(":SENSe:POWer:UNIT:ALL", "SENS:POW:UNIT:ALL 1", True, "C, page not seen"),
)

_TRIGGER = (
    _c(":TRIGger NODEA|1|NODEB|2", ("TRIG NODEA", "TRIG 2"), True, "PG p. 141"),
    _c(f":TRIGger{_CH}:INPut", ("TRIG1:INP SME", "TRIG1:INP?", "TRIG1:INP IGN"), True, "PG p. 142"),
    _c(f":TRIGger{_CH}:OUTPut", ("TRIG1:OUTP AVG", "TRIG1:OUTP?"), False, "PG p. 143"),
    _c(":TRIGger:CONFiguration", ("TRIG:CONF PASS", "TRIG:CONF?"), True, "PG p. 143"),
    _c(":TRIGger[n]:DELay", ("TRIG1:DEL 32", "TRIG1:DEL?"), True, "C, page not seen"),
    _c(
        ":TRIGger[n]:INPut:EDGE", ("TRIG1:INP:EDGE 1", "TRIG1:INP:EDGE?"), False, "C, page not seen"
    ),
    _c(":TRIGger[n]:OFFSet", ("TRIG1:OFFS 2", "TRIG1:OFFS?"), True, "C, page not seen"),
)

MANUAL = Manual(
    "N7744C",
    TITLE,
    lambda world: PowerMeterN7744A(world, 4, "MY00000001", "N7744C", range(4)),
    (*_IEEE, *_STATUS, *_SYSTEM, *_SETTINGS, *_SLOTS, *_MEASURE, *_FUNCTIONS, *_POWER, *_TRIGGER),
)
