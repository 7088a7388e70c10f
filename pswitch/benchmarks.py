"""``pswitch bench``: run the side-by-side benchmarks of ``benchmarks/`` in a source checkout.

Each benchmark is a script, ``benchmarks/bench_NAME.py``, that prints a table comparing pswitch
with its peers (ratios), or with ``--json`` one JSON object of its named figures.
The peers are in the ``bench`` extra (``make bench`` installs it); a benchmark whose peer is
missing reports it and runs the rest. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

from photonics.errors import SettingsError
from pswitch import args as types

#: Where the benchmarks are in a source checkout (``pswitch/benchmarks.py`` -> ``benchmarks/``).
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

EXAMPLES = """examples:
  pswitch bench --list                      the benchmarks and what each measures
  pswitch bench router                      one benchmark's tables
  pswitch bench thermal failover --json     one JSON object: {name: figures}
  pswitch bench programming --args="--ports 8 --trials 2"
  pswitch bench                             all of them (the feed-forward one takes ~20 min)
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``bench`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "bench",
        help="run the benchmarks against peers (source checkout)",
        description=types.plain(__doc__),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default all)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and stop")
    parser.add_argument(
        "--args",
        type=_options,
        default=[],
        help='options for the one benchmark named, e.g. "--sizes 8 16"',
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=BENCHMARKS,
        help="the benchmarks folder (default: the checkout's)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object of every figure")
    parser.set_defaults(run=run)


def _options(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} in {text!r}") from None


def available(folder: Path) -> dict[str, Path]:
    """The benchmark scripts in ``folder`` by name (``bench_router.py`` is ``router``)."""
    if not folder.is_dir():
        raise SettingsError(
            f"no benchmarks folder at {folder}: the benchmarks come with a source checkout "
            f"(git clone); or give --dir"
        )
    return {p.stem.removeprefix("bench_"): p for p in sorted(folder.glob("bench_*.py"))}


def _summary(script: Path) -> str:
    """The first sentence of a script's docstring, as plain text."""
    doc = script.read_text().split('"""')
    first = " ".join(doc[1].strip().split("\n\n")[0].split()) if len(doc) > 1 else ""
    return types.plain(first.split(". ")[0].rstrip(".") + ".")


def run(args: argparse.Namespace) -> int:
    scripts = available(args.dir)
    if args.list and (args.names or args.args or args.json):
        raise SettingsError(
            "--list lists every benchmark and stops: give no NAME, --args or --json"
        )
    if args.list:
        width = max(map(len, scripts), default=0)
        for name, script in scripts.items():
            print(f"{name:<{width}}  {_summary(script)}")
        return 0
    unknown = [n for n in args.names if n not in scripts]
    if unknown:
        raise SettingsError(f"unknown benchmark {unknown[0]!r}: known {', '.join(scripts)}")
    names = args.names or list(scripts)
    extra = args.args
    if extra and len(names) != 1:
        raise SettingsError("--args goes to one benchmark: name exactly one")
    figures = {}
    for name in names:
        print(f"== {name}: {_summary(scripts[name])}", file=sys.stderr, flush=True)
        command = [sys.executable, str(scripts[name]), *extra, *(["--json"] if args.json else [])]
        done = subprocess.run(command, stdout=subprocess.PIPE if args.json else None, text=True)
        if done.returncode != 0:
            print(f"pswitch bench: {name} failed (exit {done.returncode})", file=sys.stderr)
            return done.returncode
        if args.json:
            try:
                figures[name] = json.loads(done.stdout)
            except ValueError:
                print(f"pswitch bench: {name} printed no JSON object", file=sys.stderr)
                return 1
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0
