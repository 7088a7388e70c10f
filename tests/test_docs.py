"""Every Python snippet of the README and of docs/*.md runs, so the docs cannot drift from the code.

The snippets check their own claims with assert statements. A README snippet runs on its own;
the snippets of one docs page run in order in one namespace (a page builds on its earlier
snippets), one test per page. Tracebacks point at the snippet's line in the Markdown file.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
#: The pages whose snippets are the docs' tests: each must have some.
RUNNABLE = ("architecture", "physics", "tutorial")

_FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)|<img src=\"([^\"]+)\"")


def snippets(path: Path) -> list[tuple[int, str]]:
    """The ```python blocks of a Markdown file: (line of the block's first code line, code)."""
    text = path.read_text()
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _FENCE.finditer(text)]


def run(path: Path, line: int, code: str, namespace: dict) -> None:
    # padded so that a traceback names the Markdown file and the line in it
    exec(compile("\n" * (line - 1) + code, str(path), "exec"), namespace)


README_SNIPPETS = snippets(README)


def test_readme_has_snippets() -> None:
    assert README_SNIPPETS


@pytest.mark.parametrize(
    ("line", "code"), README_SNIPPETS, ids=[f"line{line}" for line, _ in README_SNIPPETS]
)
def test_readme_snippet_runs(line: int, code: str) -> None:
    run(README, line, code, {"__name__": "readme"})


def test_the_docs_pages_are_there_and_have_snippets() -> None:
    names = {p.stem for p in PAGES}
    assert {"index", "commands", "cli", *RUNNABLE} <= names
    for name in RUNNABLE:
        assert snippets(DOCS / f"{name}.md"), f"docs/{name}.md has no python snippet"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_every_snippet_of_a_docs_page_runs_in_order(page: Path) -> None:
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for line, code in snippets(page):
        run(page, line, code, namespace)


@pytest.mark.parametrize("page", [README, *PAGES], ids=["README", *(p.stem for p in PAGES)])
def test_relative_links_point_at_files_that_exist(page: Path) -> None:
    for target in (a or b for a, b in _LINK.findall(page.read_text())):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).exists(), f"{page.name}: broken link {target!r}"


def test_the_command_line_reference_is_current() -> None:
    from pswitch.reference import reference

    assert (DOCS / "cli.md").read_text() == reference(), "run `make docs`"


def test_every_package_is_marked_typed_and_ships_the_marker() -> None:
    """PEP 561: each package holds ``py.typed`` and the wheel's package data carries it."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text())
    packages = [p.rstrip("*") for p in config["tool"]["setuptools"]["packages"]["find"]["include"]]
    assert sorted(packages) == ["firmware", "hil", "layouts", "photonics", "pswitch"]
    assert [p for p in packages if not (root / p / "py.typed").is_file()] == []
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["*"]


def test_the_tutorials_install_lines_are_the_makefiles() -> None:
    """The tutorial's install by hand installs the extras the Makefile installs and warms the
    compiled kernels the same way."""
    root = Path(__file__).resolve().parents[1]
    makefile = (root / "Makefile").read_text()
    tutorial = (root / "docs" / "tutorial.md").read_text()
    extras = re.search(
        r"^\t\$\(BIN\)/python -m pip install --quiet -e '(\.\[[^\]]*\])'", makefile, re.M
    )
    assert extras is not None
    assert f".venv/bin/pip install -e '{extras.group(1)}'" in tutorial
    assert "\t$(BIN)/python -m pswitch.warm" in makefile
    assert ".venv/bin/python -m pswitch.warm" in tutorial
