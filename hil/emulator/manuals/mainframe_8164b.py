"""The 8164B's programming guide as :mod:`hil.emulator.manuals` checks it: every command of the
Keysight "8163A/B, 8164A/B & 8166A/B Mainframes Programming Guide" command reference that
applies to the emulated configuration (:class:`~hil.emulator.instruments.lasers.Mainframe8164B`:
an 81600B-class tunable laser in slot 0, an 81595B 1xN switch in slot 1, an 81636B power sensor
in slot 2), set and query forms listed apart as the guide lists them.

Left out as the guide scopes them to other hardware: LEVel1 status registers (8166A/B only),
optical head commands (``:SLOT:HEAD``, head interface modules), return-loss and attenuator
module commands (``:SENS:RETurnloss``, ``:INPut``, ``:OUTPut:ATTenuation`` and the like), dual
laser sources' ``[l]`` selection beyond the first laser, and the attenuated laser's
``:POW:ATT`` commands (an 81600B without attenuator). Pages are the Keysight edition's (the
306-page guide whose chapter 4 starts on p. 79); "pp." gives a section's range where the
command's own page was not read.
"""

from __future__ import annotations

from hil.emulator.instruments.lasers import Mainframe8164B
from hil.emulator.manual import Manual, ManualCommand

TITLE = (
    "Keysight 8163A/B, 8164A/B & 8166A/B Mainframes Programming Guide (Keysight edition, 306 pages)"
)
IEEE = "3 Instrument Setup and Status: IEEE-Common Commands"
STATUS = "3: Status Reporting - The STATus Subsystem"
BEHAVIOUR = "3: Interface/Instrument Behaviour Settings"
ROOT = "4 Measurement Operations & Settings: Root Layer Command"
SENSE = "4: Measurement Functions - The SENSe Subsystem"
SOURCE = "4: Signal Generation - The SOURce Subsystem"
ROUTING = "4: Signal Routing, pp. 206-207"
TRIGGER = "4: Triggering - The TRIGger Subsystem"


def c(syntax: str, lines: tuple[str, ...], modelled: bool, section: str) -> ManualCommand:
    return ManualCommand(syntax, lines, modelled, section)


SWE = "[:SOURce[n]][:CHANnel[m]]:WAVelength:SWEep"
SRC = "[:SOURce[n]][:CHANnel[m]]"
SENS = ":SENSe[n][:CHANnel[m]]"

COMMANDS = (
    # ---- IEEE 488.2 common commands ----------------------------------------------------------
    c("*CLS", ("*CLS",), False, f"{IEEE}, pp. 45-54"),
    c("*ESE", ("*ESE 21",), False, f"{IEEE}, p. 47"),
    c("*ESE?", ("*ESE?",), False, f"{IEEE}, p. 48"),
    c("*ESR?", ("*ESR?",), False, f"{IEEE}, p. 48"),
    c("*IDN?", ("*IDN?",), False, f"{IEEE}, pp. 45-54"),
    c("*OPC", ("*OPC",), True, f"{IEEE}, pp. 45-54"),
    c("*OPC?", ("*OPC?",), True, f"{IEEE}, pp. 45-54"),
    c("*OPT?", ("*OPT?",), False, f"{IEEE}, pp. 45-54"),
    c("*RST", ("*RST",), True, f"{IEEE}, pp. 45-54"),
    c("*SRE", ("*SRE 32",), False, f"{IEEE}, pp. 45-54"),
    c("*SRE?", ("*SRE?",), False, f"{IEEE}, pp. 45-54"),
    c("*STB?", ("*STB?",), False, f"{IEEE}, pp. 45-54"),
    c("*TST?", ("*TST?",), False, f"{IEEE}, pp. 45-54"),
    c("*WAI", ("*WAI",), True, f"{IEEE}, pp. 45-54"),
    # ---- STATus (the SCPI base's registers) ------------------------------------------------
    c(":STATus:OPERation[:EVENt][:LEVel0]?", ("stat:oper?",), False, f"{STATUS}, p. 55"),
    c(":STATus:OPERation:CONDition[:LEVel0]?", ("stat:oper:cond?",), False, f"{STATUS}, p. 56"),
    c(":STATus:OPERation:ENABle[:LEVel0]", ("stat:oper:enab 128",), False, f"{STATUS}, p. 57"),
    c(":STATus:OPERation:ENABle[:LEVel0]?", ("stat:oper:enab?",), False, f"{STATUS}, p. 57"),
    c(
        ":STATus:OPERation:NTRansition[:LEVel0]",
        ("stat:oper:ntr 0",),
        False,
        f"{STATUS}, pp. 55-62",
    ),
    c(
        ":STATus:OPERation:NTRansition[:LEVel0]?",
        ("stat:oper:ntr?",),
        False,
        f"{STATUS}, pp. 55-62",
    ),
    c(
        ":STATus:OPERation:PTRansition[:LEVel0]",
        ("stat:oper:ptr 32767",),
        False,
        f"{STATUS}, pp. 55-62",
    ),
    c(
        ":STATus:OPERation:PTRansition[:LEVel0]?",
        ("stat:oper:ptr?",),
        False,
        f"{STATUS}, pp. 55-62",
    ),
    c(":STATus:PRESet", ("stat:pres",), False, f"{STATUS}, pp. 55-62"),
    c(":STATus:QUEStionable[:EVENt][:LEVel0]?", ("stat:ques?",), False, f"{STATUS}, pp. 55-62"),
    c(
        ":STATus:QUEStionable:CONDition[:LEVel0]?",
        ("stat:ques:cond?",),
        False,
        f"{STATUS}, pp. 55-62",
    ),
    c(":STATus:QUEStionable:ENABle[:LEVel0]", ("stat:ques:enab 4",), False, f"{STATUS}, pp. 55-62"),
    c(":STATus:QUEStionable:ENABle[:LEVel0]?", ("stat:ques:enab?",), False, f"{STATUS}, pp. 55-62"),
    c(
        ":STATus:QUEStionable:NTRansition[:LEVel0]",
        ("stat:ques:ntr 0",),
        False,
        f"{STATUS}, pp. 55-62",
    ),
    c(
        ":STATus:QUEStionable:NTRansition[:LEVel0]?",
        ("stat:ques:ntr?",),
        False,
        f"{STATUS}, pp. 55-62",
    ),
    c(
        ":STATus:QUEStionable:PTRansition[:LEVel0]",
        ("stat:ques:ptr 32767",),
        False,
        f"{STATUS}, pp. 55-62",
    ),
    c(
        ":STATus:QUEStionable:PTRansition[:LEVel0]?",
        ("stat:ques:ptr?",),
        False,
        f"{STATUS}, pp. 55-62",
    ),
    # ---- interface and instrument behaviour --------------------------------------------------
    c(":DISPlay:BRIGhtness", ("disp:brig 0.5",), False, BEHAVIOUR),
    c(":DISPlay:BRIGhtness?", ("disp:brig?",), False, BEHAVIOUR),
    c(":DISPlay:CONTrast", ("disp:cont 0.7",), False, BEHAVIOUR),
    c(":DISPlay:CONTrast?", ("disp:cont?",), False, BEHAVIOUR),
    c(":DISPlay:ENABle", ("disp:enab 0", "disp:enab 1"), False, BEHAVIOUR),
    c(":DISPlay:ENABle?", ("disp:enab?",), False, BEHAVIOUR),
    c(":DISPlay:LOCKout", ("disp:lock 1", "display:lockout off"), False, BEHAVIOUR),
    c(":DISPlay:LOCKout?", ("disp:lock?",), False, BEHAVIOUR),
    c(":LOCK", ("lock 1,1234", "lock 0,1234"), True, BEHAVIOUR),
    c(":LOCK?", ("lock?",), False, BEHAVIOUR),
    c(
        ":SYSTem:COMMunicate:GPIB[:SELF]:ADDRess",
        ("syst:comm:gpib:addr 20",),
        False,
        BEHAVIOUR,
    ),
    c(":SYSTem:COMMunicate:GPIB[:SELF]:ADDRess?", ("syst:comm:gpib:self:addr?",), False, BEHAVIOUR),
    c(":SYSTem:DATE", ("syst:date 2026,11,28",), False, BEHAVIOUR),
    c(":SYSTem:DATE?", ("syst:date?",), False, BEHAVIOUR),
    c(":SYSTem:ERRor?", ("syst:err?",), False, BEHAVIOUR),
    c(":SYSTem:PRESet", ("syst:pres",), True, BEHAVIOUR),
    c(":SYSTem:TIME", ("syst:time 12,30,0",), False, BEHAVIOUR),
    c(":SYSTem:TIME?", ("syst:time?",), False, BEHAVIOUR),
    # ---- root layer: the slots ---------------------------------------------------------------
    c(":SLOT[n]:EMPTy?", ("slot1:empt?", "slot4:empt?"), False, f"{ROOT}, p. 81"),
    c(":SLOT[n]:IDN?", ("slot0:idn?", "slot2:idn?"), False, f"{ROOT}, p. 81"),
    c(":SLOT[n]:OPTions?", ("slot1:opt?",), False, f"{ROOT}, p. 81"),
    c(":SLOT[n]:TST?", ("slot:tst?",), False, f"{ROOT}, p. 82"),
    # ---- the power sensor (slot 2) -----------------------------------------------------------
    c(
        ":FETCh[n][:CHANnel[m]][:SCALar]:POWer[:DC]?",
        ("fetc2:chan1:pow?",),
        True,
        f"{SENSE}, p. 86",
    ),
    c(
        ":INITiate[n][:CHANnel[m]]:CONTinuous",
        ("init2:cont 0", "init2:cont 1"),
        False,
        f"{SENSE}, pp. 86-121",
    ),
    c(
        ":INITiate[n][:CHANnel[m]]:CONTinuous?",
        ("init2:chan1:cont?",),
        False,
        f"{SENSE}, pp. 86-121",
    ),
    c(
        ":INITiate[n][:CHANnel[m]][:IMMediate]",
        ("init2:imm", "init2"),
        True,
        f"{SENSE}, pp. 86-121",
    ),
    c(
        ":READ[n][:CHANnel[m]][:SCALar]:POWer[:DC]?",
        ("read2:pow?", "read2:chan1:scal:pow:dc?"),
        True,
        f"{SENSE}, p. 92",
    ),
    c(f"{SENS}:CORRection:COLLect:ZERO", ("sens2:corr:coll:zero",), False, f"{SENSE}, pp. 86-121"),
    c(
        f"{SENS}:CORRection:COLLect:ZERO?",
        ("sens2:corr:coll:zero?",),
        False,
        f"{SENSE}, pp. 86-121",
    ),
    c(
        f"{SENS}:CORRection[:LOSS][:INPut][:MAGNitude]",
        ("sens2:corr 1.5dB", "sens2:corr:loss:inp:magn 0"),
        False,
        f"{SENSE}, pp. 86-121",
    ),
    c(
        f"{SENS}:CORRection[:LOSS][:INPut][:MAGNitude]?",
        ("sens2:corr?",),
        False,
        f"{SENSE}, pp. 86-121",
    ),
    c(
        f"{SENS}:FUNCtion:PARameter:LOGGing",
        ("sens2:func:par:logg 64,1ms",),
        True,
        f"{SENSE}, p. 97",
    ),
    c(f"{SENS}:FUNCtion:PARameter:LOGGing?", ("sens2:func:par:logg?",), False, f"{SENSE}, p. 97"),
    c(
        f"{SENS}:FUNCtion:PARameter:MINMax",
        ("sens2:func:par:minm wind,10",),
        True,
        f"{SENSE}, p. 98",
    ),
    c(f"{SENS}:FUNCtion:PARameter:MINMax?", ("sens2:func:par:minm?",), False, f"{SENSE}, p. 99"),
    c(
        f"{SENS}:FUNCtion:PARameter:STABility",
        ("sens2:func:par:stab 10s,1s,100ms",),
        True,
        f"{SENSE}, p. 99",
    ),
    c(
        f"{SENS}:FUNCtion:PARameter:STABility?",
        ("sens2:func:par:stab?",),
        False,
        f"{SENSE}, p. 100",
    ),
    c(f"{SENS}:FUNCtion:STATe", ("sens2:func:stat logg,star",), True, f"{SENSE}, p. 104"),
    c(f"{SENS}:FUNCtion:STATe?", ("sens2:func:stat?",), True, f"{SENSE}, p. 104"),
    c(f"{SENS}:FUNCtion:RESult?", ("sens2:func:res?",), True, f"{SENSE}, p. 100"),
    c(
        f"{SENS}:FUNCtion:RESult:BLOCk?",
        ("sens2:func:res:bloc? 0,16",),
        True,
        f"{SENSE}, pp. 100-104",
    ),
    c(f"{SENS}:POWer:ATIMe", ("sens2:pow:atim 100ms",), True, f"{SENSE}, pp. 86-121"),
    c(f"{SENS}:POWer:ATIMe?", ("sens2:pow:atim?",), False, f"{SENSE}, pp. 86-121"),
    c(
        f"{SENS}:POWer:RANGe:AUTO",
        ("sens2:pow:rang:auto 0", "sens2:pow:rang:auto 1"),
        False,
        f"{SENSE}, pp. 105-108",
    ),
    c(f"{SENS}:POWer:RANGe:AUTO?", ("sens2:pow:rang:auto?",), False, f"{SENSE}, pp. 105-108"),
    c(f"{SENS}:POWer:RANGe[:UPPer]", ("sens2:pow:rang -20DBM",), False, f"{SENSE}, p. 107"),
    c(f"{SENS}:POWer:RANGe[:UPPer]?", ("sens2:pow:rang?",), False, f"{SENSE}, p. 108"),
    c(
        f"{SENS}:POWer:REFerence",
        ("sens2:pow:ref toref,-10dbm", "sens2:pow:ref tomod,3"),
        False,
        f"{SENSE}, pp. 109-112",
    ),
    c(f"{SENS}:POWer:REFerence?", ("sens2:pow:ref? toref",), False, f"{SENSE}, pp. 109-112"),
    c(f"{SENS}:POWer:REFerence:DISPlay", ("sens2:pow:ref:disp",), True, f"{SENSE}, p. 112"),
    c(
        f"{SENS}:POWer:REFerence:STATe",
        ("sens2:pow:ref:stat 1", "sens2:pow:ref:stat 0"),
        True,
        f"{SENSE}, p. 112",
    ),
    c(f"{SENS}:POWer:REFerence:STATe?", ("sens2:pow:ref:stat?",), False, f"{SENSE}, p. 112"),
    c(
        f"{SENS}:POWer:REFerence:STATe:RATio",
        ("sens2:pow:ref:stat:rat toref,1",),
        False,
        f"{SENSE}, p. 113",
    ),
    c(
        f"{SENS}:POWer:REFerence:STATe:RATio?",
        ("sens2:pow:ref:stat:rat?",),
        False,
        f"{SENSE}, p. 114",
    ),
    c(
        f"{SENS}:POWer:UNIT",
        ("sens2:pow:unit W", "sens2:pow:unit dbm"),
        True,
        f"{SENSE}, pp. 114-121",
    ),
    c(f"{SENS}:POWer:UNIT?", ("sens2:pow:unit?",), False, f"{SENSE}, pp. 114-121"),
    c(
        f"{SENS}:POWer:WAVelength",
        ("sens2:pow:wav 1310nm", "sens2:pow:wav 1.55e-6"),
        False,
        f"{SENSE}, pp. 114-121",
    ),
    c(
        f"{SENS}:POWer:WAVelength?",
        ("sens2:chan1:pow:wav?", "sens2:pow:wav? max"),
        False,
        f"{SENSE}, pp. 114-121",
    ),
    # ---- the tunable laser (slot 0) ----------------------------------------------------------
    c(
        f"{SRC}:AM:INTernal[l]:FREQuency",
        ("sour0:am:int:freq 50KHZ",),
        False,
        f"{SOURCE}, pp. 122-127",
    ),
    c(f"{SRC}:AM:INTernal[l]:FREQuency?", ("sour0:am:int:freq?",), False, f"{SOURCE}, pp. 122-127"),
    c(
        f"{SRC}:AM:SOURce[l]",
        ("sour0:am:sour cohc", "sour0:am:sour int"),
        False,
        f"{SOURCE}, pp. 122-127",
    ),
    c(f"{SRC}:AM:SOURce[l]?", ("sour0:am:sour?",), False, f"{SOURCE}, pp. 122-127"),
    c(f"{SRC}:AM:STATe[l]", ("sour0:am:stat 1", "sour0:am:stat off"), False, f"{SOURCE}, p. 127"),
    c(f"{SRC}:AM:STATe[l]?", ("sour0:am:stat?",), False, f"{SOURCE}, p. 127"),
    c(
        ":OUTPut[n][:CHANnel[m]]:PATH",
        ("outp0:path lows", "outp0:path high"),
        False,
        f"{SOURCE}, pp. 122-181",
    ),
    c(":OUTPut[n][:CHANnel[m]]:PATH?", ("outp0:path?",), False, f"{SOURCE}, pp. 122-181"),
    c(
        f"{SRC}:POWer[:LEVel][:IMMediate][:AMPLitude[l]]",
        ("sour0:pow -3dbm", "sour0:pow:lev:imm:ampl 500uw"),
        True,
        f"{SOURCE}, p. 148",
    ),
    c(
        f"{SRC}:POWer[:LEVel][:IMMediate][:AMPLitude[l]]?",
        ("sour0:pow?", "sour0:pow? max", "sour0:pow? def"),
        True,
        f"{SOURCE}, p. 149",
    ),
    c(
        f"{SRC}:POWer:STATe[l]",
        ("sour0:pow:stat 1", "sour0:pow:stat 0"),
        True,
        f"{SOURCE}, pp. 149-152",
    ),
    c(f"{SRC}:POWer:STATe[l]?", ("sour0:pow:stat?",), True, f"{SOURCE}, pp. 149-152"),
    c(
        f"{SRC}:POWer:UNIT[l]",
        ("sour0:pow:unit W", "sour0:pow:unit dbm"),
        True,
        f"{SOURCE}, pp. 149-152",
    ),
    c(f"{SRC}:POWer:UNIT[l]?", ("sour0:pow:unit?",), False, f"{SOURCE}, pp. 149-152"),
    c(
        f"{SRC}:READout:DATA?",
        (
            "sour0:wav:swe:mode cont;:sour0:wav:swe:llog 1;:trig0:outp stf",
            "sour0:wav:swe:star 1540nm;:sour0:wav:swe:stop 1541nm;:sour0:wav:swe:step 0.5nm",
            "sour0:wav:swe 1",
            "sour0:wav:swe?",
            "sour0:read:data? llog",
        ),
        False,
        f"{SOURCE}, pp. 152-156",
    ),
    c(f"{SRC}:READout:POINts?", ("sour0:read:poin? llog",), False, f"{SOURCE}, pp. 152-156"),
    c(
        f"{SRC}:WAVelength[l][:CW|:FIXed]",
        ("sour0:wav 1552.5nm", "sour0:wav:cw 1550nm", ":SOUR0:WAV:FIX 1551NM"),
        True,
        f"{SOURCE}, pp. 156-163",
    ),
    c(
        f"{SRC}:WAVelength[l][:CW|:FIXed]?",
        ("sour0:wav?", ":SOUR0:WAV:FIX?", "sour0:wav? min"),
        True,
        f"{SOURCE}, pp. 156-163",
    ),
    c(f"{SRC}:WAVelength:CORRection:ARA", ("sour0:wav:corr:ara",), False, f"{SOURCE}, pp. 156-163"),
    c(f"{SRC}:WAVelength:FREQuency[l]", ("sour0:wav:freq -10GHZ",), True, f"{SOURCE}, p. 163"),
    c(f"{SRC}:WAVelength:FREQuency[l]?", ("sour0:wav:freq?",), True, f"{SOURCE}, p. 163"),
    c(f"{SRC}:WAVelength:REFerence?", ("sour0:wav:ref?",), False, f"{SOURCE}, pp. 163-165"),
    c(
        f"{SRC}:WAVelength:REFerence:DISPlay",
        ("sour0:wav:ref:disp",),
        True,
        f"{SOURCE}, pp. 163-165",
    ),
    c(f"{SWE}:CHECkparams?", ("sour0:wav:swe:chec?",), False, f"{SOURCE}, pp. 165-176"),
    c(f"{SWE}:CYCLes", ("sour0:wav:swe:cycl 2",), True, f"{SOURCE}, pp. 165-176"),
    c(f"{SWE}:CYCLes?", ("sour0:wav:swe:cycl?",), False, f"{SOURCE}, pp. 165-176"),
    c(f"{SWE}:DWELl", ("sour0:wav:swe:dwel 100ms",), False, f"{SOURCE}, pp. 165-176"),
    c(f"{SWE}:DWELl?", ("sour0:wav:swe:dwel?",), False, f"{SOURCE}, pp. 165-176"),
    c(
        f"{SWE}:EXPTime?",
        ("sour0:wav:swe:exp?", "sour0:wav:swe:expt?"),
        True,
        f"{SOURCE}, pp. 165-176",
    ),
    c(f"{SWE}:FLAG?", ("sour0:wav:swe:flag?",), True, f"{SOURCE}, p. 169"),
    c(f"{SWE}:LLOGging", ("sour0:wav:swe:llog 1", "wav:swe:llog 0"), True, f"{SOURCE}, p. 170"),
    c(f"{SWE}:LLOGging?", ("sour0:wav:swe:llog?",), False, f"{SOURCE}, p. 170"),
    c(
        f"{SWE}:MODE",
        ("sour0:wav:swe:mode cont", "sour0:wav:swe:mode step"),
        True,
        f"{SOURCE}, p. 171",
    ),
    c(f"{SWE}:MODE?", ("sour0:wav:swe:mode?",), False, f"{SOURCE}, p. 171"),
    c(f"{SWE}:PMAX?", ("sour0:wav:swe:pmax? 1520nm,1570nm",), False, f"{SOURCE}, pp. 165-176"),
    c(
        f"{SWE}:REPeat",
        ("sour0:wav:swe:rep twow", "sour0:wav:swe:rep onew"),
        True,
        f"{SOURCE}, pp. 171-176",
    ),
    c(f"{SWE}:REPeat?", ("sour0:wav:swe:rep?",), False, f"{SOURCE}, pp. 171-176"),
    c(f"{SWE}:SOFTtrigger", ("sour0:wav:swe:soft",), False, f"{SOURCE}, pp. 171-176"),
    c(f"{SWE}:SPEed", ("sour0:wav:swe:spe 40nm/s",), True, f"{SOURCE}, pp. 171-176"),
    c(f"{SWE}:SPEed?", ("sour0:wav:swe:spe?",), False, f"{SOURCE}, pp. 171-176"),
    c(f"{SWE}:STARt", ("sour0:wav:swe:star 1540nm",), True, f"{SOURCE}, pp. 171-176"),
    c(f"{SWE}:STARt?", ("sour0:wav:swe:star?",), False, f"{SOURCE}, pp. 171-176"),
    c(
        f"{SWE}[:STATe]",
        ("sour0:wav:swe star", "sour0:wav:swe:stat 0", "sour0:wav:swe 2", "sour0:wav:swe cont"),
        True,
        f"{SOURCE}, pp. 171-176",
    ),
    c(f"{SWE}[:STATe]?", ("sour0:wav:swe:stat?", "sour0:wav:swe?"), True, f"{SOURCE}, pp. 171-176"),
    c(
        f"{SWE}:STEP[:WIDTh]",
        ("sour0:wav:swe:step 10pm", "sour0:wav:swe:step:widt 0.1nm"),
        True,
        f"{SOURCE}, pp. 171-176",
    ),
    c(f"{SWE}:STEP[:WIDTh]?", ("sour0:wav:swe:step?",), False, f"{SOURCE}, pp. 171-176"),
    c(f"{SWE}:STOP", ("sour0:wav:swe:stop 1560nm",), True, f"{SOURCE}, pp. 171-176"),
    c(f"{SWE}:STOP?", ("sour0:wav:swe:stop?",), False, f"{SOURCE}, pp. 171-176"),
    # ---- the switch (slot 1) -----------------------------------------------------------------
    c(":ROUTe[n][:CHANnel[m]]", ("rout1:chan1 A,3", "rout1 A,1"), True, ROUTING),
    c(":ROUTe[n][:CHANnel[m]]?", ("rout1:chan1?", "rout1?"), True, ROUTING),
    c(":ROUTe[n]:CONFig?", ("rout1:conf?",), False, ROUTING),
    c(":ROUTe[n]:CONFig:ROUTe?", ("rout1:conf:rout?",), False, ROUTING),
    # ---- triggering --------------------------------------------------------------------------
    c(":TRIGger", ("trig nodea", "trig 2"), False, f"{TRIGGER}, p. 209"),
    c(
        ":TRIGger:CONFiguration",
        ("trig:conf loop", "trig:conf 1", "trig:conf pass"),
        False,
        f"{TRIGGER}, p. 214",
    ),
    c(":TRIGger:CONFiguration?", ("trig:conf?",), False, f"{TRIGGER}, p. 214"),
    c(
        ":TRIGger[n][:CHANnel[m]]:INPut",
        ("trig0:inp next", "trig2:inp sme", "trig0:inp ign"),
        False,
        f"{TRIGGER}, pp. 210-212",
    ),
    c(
        ":TRIGger[n][:CHANnel[m]]:INPut?",
        ("trig0:inp?", "trig2:chan1:inp?"),
        False,
        f"{TRIGGER}, pp. 210-212",
    ),
    c(
        ":TRIGger[n][:CHANnel[m]]:INPut:REARm",
        ("trig2:inp:rearm off",),
        False,
        f"{TRIGGER}, pp. 210-212",
    ),
    c(
        ":TRIGger[n][:CHANnel[m]]:INPut:REARm?",
        ("trig2:inp:rearm?",),
        False,
        f"{TRIGGER}, pp. 210-212",
    ),
    c(":TRIGger[n][:CHANnel[m]]:OFFSet", ("trig2:offs 5",), False, f"{TRIGGER}, pp. 210-213"),
    c(":TRIGger[n][:CHANnel[m]]:OFFSet?", ("trig2:offs?",), False, f"{TRIGGER}, pp. 210-213"),
    c(
        ":TRIGger[n][:CHANnel[m]]:OUTPut",
        ("trig0:outp stf", "trig2:outp avg", "trig0:outp dis"),
        False,
        f"{TRIGGER}, p. 213",
    ),
    c(
        ":TRIGger[n][:CHANnel[m]]:OUTPut?",
        ("trig0:outp?", "trig:outp?"),
        False,
        f"{TRIGGER}, p. 213",
    ),
    c(
        ":TRIGger[n][:CHANnel[m]]:OUTPut:REARm",
        ("trig2:outp:rearm on",),
        False,
        f"{TRIGGER}, pp. 213-214",
    ),
    c(
        ":TRIGger[n][:CHANnel[m]]:OUTPut:REARm?",
        ("trig2:outp:rearm?",),
        False,
        f"{TRIGGER}, pp. 213-214",
    ),
)

MANUAL = Manual("8164B", TITLE, Mainframe8164B, COMMANDS)
