"""The shape of the code: no file imports itself back through others, the rooms of
:mod:`photonics` hold what they say, and no module grows past 600 lines. (The layers between
packages and between the rooms are import-linter's contracts, run by ``make lint``.)"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pswitch", "photonics", "firmware", "hil", "layouts")
#: What every room of photonics uses, directly under it.
SHARED = {"__init__", "errors", "_checks", "matching", "levels", "progress"}
ROOMS = {"devices", "feedforward", "recirculating", "chips", "calibration", "fabrication"}


def module_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


FILES = {module_of(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def imports(module: str) -> set[str]:
    """The files of the five packages that ``module`` imports: every import statement, those
    inside functions and under ``TYPE_CHECKING`` too (a file that names another depends on it)."""
    found = set()
    for node in ast.walk(ast.parse(FILES[module].read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from package import module`` names the module's file, else the package's
            names = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in FILES else node.module
                for a in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in FILES:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one file (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_file_imports_itself_back_through_others() -> None:
    assert circles({module: imports(module) for module in FILES}) == []


def test_photonics_keeps_only_the_shared_modules_at_its_root_and_each_room_says_what_it_holds():
    root = ROOT / "photonics"
    assert {p.stem for p in root.glob("*.py")} == SHARED
    rooms = {p.parent.name for p in root.glob("*/__init__.py")}
    assert rooms == ROOMS
    for room in rooms:
        doc = ast.get_docstring(ast.parse((root / room / "__init__.py").read_text()))
        assert doc and "\n" not in doc, f"photonics/{room}: a one-line docstring"


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_is_over_600_lines(package: str) -> None:
    long = {
        module: n
        for module, path in FILES.items()
        if module.split(".")[0] == package and (n := len(path.read_text().splitlines())) > 600
    }
    assert long == {}
