"""``python -m pswitch.figures``: the README's and the docs' figures, written from runs.

No figure is typed by hand (``make docs`` runs this; ``--check`` says which are stale). A page
marks what is generated, and a module of this package per page knows how to make it:

- a block, ``<!-- figure: NAME -->`` ... ``<!-- /figure -->`` on lines of their own: a
  transcript of a command, or a table of a benchmark's figures;
- a value in prose, ``<!-- value: NAME -->289 ms<!-- /value -->``: one number from such a run;
- files: pictures the runs write (``docs/demo/mesh.png``, ...), copied into place.

Every run is seeded, so what it prints is the same on any machine, but for its timings. A
figure that holds timings says so: they are stamped with the machine, its load and the date
where they are written, and left out when the figures are checked (:func:`stale`). The slow
figures (Monte Carlo studies, whole benchmarks) are written by ``make docs`` and checked by
``make test-all``; the rest by every ``make test`` (``tests/test_docs.py``).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import shutil
import sys
from pathlib import Path

from pswitch.figures._make import ALL, ROOT, Figure

_BLOCK = re.compile(r"(<!-- figure: ([\w-]+) -->\n)(.*?)(<!-- /figure -->)", re.DOTALL)
_VALUE = re.compile(r"(<!-- value: ([\w-]+) -->)(.*?)(<!-- /value -->)", re.DOTALL)


def _figures() -> dict[str, Figure]:
    """Every page module's ``FIGURES``, by name (a name is unique across pages)."""
    found: dict[str, Figure] = {}
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("_"):
            continue
        figures = importlib.import_module(f"{__name__}.{module.name}").FIGURES
        twice = found.keys() & figures.keys()
        if twice:
            raise RuntimeError(f"figure {sorted(twice)[0]!r} is defined twice")
        found |= figures
    return found


FIGURES = _figures()


def regions(text: str) -> dict[str, str]:
    """The marked regions of a page's ``text`` by name: their current contents."""
    found = {m.group(2): m.group(3) for m in _BLOCK.finditer(text)}
    found |= {m.group(2): m.group(3) for m in _VALUE.finditer(text)}
    return found


def _replace(text: str, name: str, new: str) -> str:
    for pattern in (_BLOCK, _VALUE):
        text = pattern.sub(
            lambda m: m.group(1) + new + m.group(4) if m.group(2) == name else m.group(0), text
        )
    return text


def chosen(names: list[str] | None, slow: bool) -> dict[str, Figure]:
    """The figures ``names`` (None: every figure, the slow ones only when ``slow``)."""
    if names:
        unknown = [n for n in names if n not in FIGURES]
        if unknown:
            raise KeyError(f"no figure {unknown[0]!r}: figures are {', '.join(FIGURES)}")
        return {n: FIGURES[n] for n in names}
    return {n: f for n, f in FIGURES.items() if slow or not f.slow}


def write(names: list[str] | None = None, slow: bool = True, root: Path = ROOT) -> list[str]:
    """Make the figures and write them into their pages and files, each page once all its
    figures are made (a failed run writes nothing); the names written."""
    figures = chosen(names, slow)
    pages: dict[str, str] = {}
    copies: list[tuple[Path, Path]] = []
    for name, figure in figures.items():
        text = pages.setdefault(figure.page, (root / figure.page).read_text())
        if name not in regions(text):
            raise KeyError(f"{figure.page} has no region marked {name!r}")
        print(f"making {name} ({figure.page})", file=sys.stderr, flush=True)
        pages[figure.page] = _replace(text, name, figure.make())
        if figure.files:
            assert figure.folder is not None, f"{name} names files but no folder"
            folder = Path(figure.folder())
            copies += [(folder / src, root / dst) for dst, src in figure.files.items()]
    for page, text in pages.items():
        (root / page).write_text(text)
    for source, destination in copies:
        shutil.copyfile(source, destination)
    return list(figures)


def stale(names: list[str] | None = None, slow: bool = False, root: Path = ROOT) -> list[str]:
    """The figures whose pages differ from a run of today's code (timings aside): one line a
    figure, naming it and its page. A figure that is a timing alone is not run."""
    out = []
    for name, figure in chosen(names, slow).items():
        now = regions((root / figure.page).read_text()).get(name)
        if now is None:
            out.append(f"{name}: {figure.page} has no region marked {name!r}")
        elif figure.timings != ALL and figure.masked(now) != figure.masked(figure.make()):
            out.append(f"{name}: {figure.page} differs from what the code prints (make docs)")
    return out


def unmarked(root: Path = ROOT) -> list[str]:
    """Regions marked in the README or a docs page that no figure makes: ``page: name``."""
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return [
        f"{page.relative_to(root)}: {name}"
        for page in pages
        for name in regions(page.read_text())
        if name not in FIGURES or FIGURES[name].page != str(page.relative_to(root))
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pswitch.figures", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("names", nargs="*", help="figures to make (default: all)")
    parser.add_argument("--check", action="store_true", help="say which are stale; write nothing")
    parser.add_argument("--fast", action="store_true", help="leave out the slow figures")
    parser.add_argument("--list", action="store_true", help="list the figures and stop")
    args = parser.parse_args(argv)
    try:
        if args.list:
            for name, figure in FIGURES.items():
                print(f"{name:32} {figure.page}{' (slow)' if figure.slow else ''}")
            return 0
        if args.check:
            found = stale(args.names or None, slow=not args.fast)
            for line in found:
                print(line)
            print(f"{len(found)} stale figures")
            return 1 if found else 0
        for name in write(args.names or None, slow=not args.fast):
            print(f"wrote {name} ({FIGURES[name].page})")
    except KeyError as error:
        print(f"python -m pswitch.figures: {error.args[0]}", file=sys.stderr)
        return 2
    return 0
