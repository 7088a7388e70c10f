"""The manual-coverage tables of ``docs/instruments.md``: for each emulated model, every command
of its programming manual, whether the emulation models it or only keeps its state, whether it
was accepted, and where the manual documents it (:mod:`hil.emulator.manuals`)."""

from __future__ import annotations

from pswitch.figures._make import Figure

INSTRUMENTS = "docs/instruments.md"


def manual_table(model: str):
    """A block's maker: ``model``'s manual table and its coverage line."""

    def make() -> str:
        from hil.emulator.manuals import check, manuals

        (manual,) = [m for m in manuals() if m.model == model]
        results = check(manual)
        accepted = sum(r.accepted for r in results)
        modelled = sum(r.command.modelled for r in results)
        rows = [
            f"| `{r.command.syntax}` | {'modelled' if r.command.modelled else 'stored'} | "
            f"{'yes' if r.accepted else 'no: ' + r.problems[0].replace('|', '/')} | "
            f"{r.command.section} |"
            for r in results
        ]
        return "\n".join(
            [
                f"{accepted} of {len(results)} commands of *{manual.title}* accepted "
                f"({accepted / len(results):.0%}); {modelled} modelled on the bench, the rest "
                "stored and read back.",
                "",
                "| command | emulation | accepted | manual |",
                "|---|---|---|---|",
                *rows,
                "",
            ]
        )

    return make


#: Model names as :mod:`hil.emulator.manuals` writes them, by figure name.
_MODELS = {
    "n774x": "N7744C",
    "8164b": "8164B",
    "tsl570": "TSL-570",
    "pm100d": "PM100D",
    "q8iv": "Q8iv",
}

FIGURES: dict[str, Figure] = {
    f"instruments-manual-{key}": Figure(INSTRUMENTS, manual_table(model))
    for key, model in _MODELS.items()
}
