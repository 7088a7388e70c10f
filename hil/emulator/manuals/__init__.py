"""Each emulated model's command list as its programming manual gives it, and how much of it the
emulation accepts (``benchmarks/bench_hil.py``: ``manual_coverage_min``; the tables of
``docs/instruments.md``).

A :class:`Manual` lists a model's manual commands (:class:`ManualCommand`): the syntax as the
manual writes it, the lines a client would send to use it, whether the emulation models it on the
bench (``modelled``) or only keeps its state and reads it back, and the manual's page or
section. :func:`coverage` sends each command's lines to a fresh emulation and counts it accepted
when every line ran without an error (SCPI: ``SYST:ERR?`` answers 0 afterwards; the Qontrol: no
``E<code>`` reply) and every query got a reply.

One module per model, each defining ``MANUAL``: :mod:`.n774x`, :mod:`.mainframe_8164b`,
:mod:`.tsl570`, :mod:`.pm100d`, :mod:`.q8iv`; the machinery is :mod:`hil.emulator.manual`.
"""

from __future__ import annotations

from hil.emulator.manual import Manual, ManualCommand, Result, check, coverage, scpi_errors

__all__ = ["Manual", "ManualCommand", "Result", "check", "coverage", "manuals", "scpi_errors"]


def manuals() -> list[Manual]:
    """Every model's manual."""
    from hil.emulator.manuals import mainframe_8164b, n774x, pm100d, q8iv, tsl570

    return [m.MANUAL for m in (n774x, mainframe_8164b, tsl570, pm100d, q8iv)]
