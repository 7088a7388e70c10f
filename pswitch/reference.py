"""Writes ``docs/cli.md``, the command-line reference, from the parser itself:
``python -m pswitch.reference docs/cli.md`` (``make docs``); a test checks it is current."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pswitch.cli import build_parser

INTRO = """# Command-line reference

Generated from the `pswitch` parser by `python -m pswitch.reference` (`make docs`); a test
checks it is current. Every subcommand takes `--help`, and `--json` where it prints results.
Exit codes: 0 done; 1 a failure of the work (a check below its figure, an instrument that
fails); 2 a bad command line or input, refused before anything is done or written; 130
interrupted (Ctrl-C), which closes files and instruments as a normal exit does. Each error is
one line naming what was wrong and how to fix it; `pswitch --debug COMMAND ...` shows its
traceback, for a bug report.
"""

#: Help is formatted at this width, whatever the terminal, so the file does not depend on it.
WIDTH = 100


def reference() -> str:
    """The markdown reference: the top-level help, then each subcommand's."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)  # argparse reads the width from here
    try:
        parser = build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parts = [INTRO, "## pswitch\n", "```text\n" + parser.format_help() + "```\n"]
        for name, command in sub.choices.items():
            parts += [f"## pswitch {name}\n", "```text\n" + command.format_help() + "```\n"]
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts)


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(reference())
