"""What a user reads from ``--help`` and ``pswitch bench --list``: the parser loads no numerics,
and the texts are plain, with the figures they quote equal to the code's."""

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pswitch.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = tuple(
    next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
)
HEAVY = ("numba", "scipy", "gdsfactory", "matplotlib", "dask", "distributed", "pyarrow", "simpy")


def help_text(*command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pswitch", *command, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_command_is_covered() -> None:
    assert set(COMMANDS) == {
        "demo",
        "serve",
        "switch",
        "route",
        "schedule",
        "collective",
        "calibrate",
        "layout",
        "yield",
        "rack",
        "bench",
    }


def test_the_parser_and_every_help_import_no_numerics() -> None:
    """The start-up goal in a form a test can hold: the modules that make ``pswitch`` slow to
    start (numba, scipy; gdsfactory, matplotlib; dask, distributed, pyarrow) stay unloaded by
    the parser and ``--help``."""
    script = f"""
import contextlib, io, json, sys
from pswitch.cli import build_parser
build_parser()
for command in ([], *[[c] for c in {list(COMMANDS)!r}]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        build_parser().parse_args([*command, "--help"])
print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def constant_names() -> set[str]:
    """Module-level UPPER_CASE names with an underscore defined in the packages."""
    names = set()
    for package in ("pswitch", "photonics", "firmware", "hil", "layouts"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.parse(path.read_text()).body:
                targets = node.targets if isinstance(node, ast.Assign) else []
                if isinstance(node, ast.AnnAssign):
                    targets = [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+", t.id):
                        names.add(t.id)
    return names


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    out = {"pswitch": help_text()} | {c: help_text(c) for c in COMMANDS}
    listed = subprocess.run(
        [sys.executable, "-m", "pswitch", "bench", "--list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    return out | {"bench --list": listed.stdout}


def test_help_reads_as_plain_text(texts: dict[str, str]) -> None:
    names = constant_names()
    assert "VERIFY_ISOLATION_DB" in names and "DEFAULT_ISOLATION_TARGET_DB" in names
    for command, text in texts.items():
        assert "``" not in text, command
        assert not re.search(r":(func|class|meth|mod|data|attr):", text), command
        quoted = sorted(n for n in names if re.search(rf"\b{n}\b", text))
        assert quoted == [], command


def test_help_speaks_of_the_project_only(texts: dict[str, str]) -> None:
    for command, text in texts.items():
        assert not re.search(r"\bissues?\b", text, re.IGNORECASE), command


def test_figures_quoted_in_help_are_the_code_s(texts: dict[str, str]) -> None:
    from photonics.devices.mzi import DEFAULT_LOSS_DB, PUBLISHED_EXTINCTION_DB
    from photonics.recirculating.routing import DEFAULT_ISOLATION_TARGET_DB
    from pswitch.demo import VERIFY_ISOLATION_DB, VERIFY_LOSS_DB

    demo = " ".join(texts["demo"].split())
    assert f">= {VERIFY_ISOLATION_DB:g} dB over the strongest other lit input" in demo
    assert f"within {VERIFY_LOSS_DB:g} dB of the predicted insertion loss" in demo
    schedule = " ".join(texts["schedule"].split())
    assert f"router's {DEFAULT_ISOLATION_TARGET_DB:g} dB isolation target" in schedule
    route = " ".join(texts["route"].split())
    assert f"({PUBLISHED_EXTINCTION_DB[1]:g} dB extinction, {DEFAULT_LOSS_DB:g} dB loss)" in route


def test_main_help_exits_0(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0 and "demo" in capsys.readouterr().out


def test_a_bare_command_prints_its_help_and_runs_nothing(capsys) -> None:
    # it printed one error line ("required: COMMAND") and no usage
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: pswitch") and all(f"    {c}" in err for c in ("demo", "route"))
