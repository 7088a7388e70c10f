"""Every subcommand refuses bad input with one line and exit 2, writing nothing: the table of
tests/pswitch/bad_inputs.py, then generated values (numbers out of range or not numbers at all,
port specs that are malformed or out of range), in process through ``pswitch.cli.main``."""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pswitch.cli import main
from tests.pswitch.bad_inputs import CASES, leftovers, prepare


@contextlib.contextmanager
def case_folder() -> Iterator[Path]:
    """A folder holding the cases' files, the working directory while the block runs."""
    before = Path.cwd()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        prepare(folder)
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(before)


def refusal(args: list[str]) -> str:
    """Run ``pswitch *args`` in a case folder; assert exit 2, one line on stderr, nothing on
    stdout and nothing written; the line."""
    out, err = io.StringIO(), io.StringIO()
    with case_folder() as folder, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
        written = leftovers(folder)
    lines = err.getvalue().splitlines()
    assert code == 2, (args, err.getvalue())
    assert len(lines) == 1 and lines[0].startswith("pswitch"), (args, err.getvalue())
    assert out.getvalue() == "" and written == [], (args, written)
    return lines[0]


@pytest.mark.parametrize(("args", "words"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_a_bad_command_line_is_one_line_exit_2_and_writes_nothing(args, words) -> None:
    assert words in refusal(args)


def _not(valid) -> st.SearchStrategy[str]:
    """Text ``valid`` is false for or cannot read: numbers out of range, non-finite, garbage."""

    def bad(text: str) -> bool:
        try:
            return not valid(text)
        except (ValueError, OverflowError):
            return True

    numbers = st.one_of(
        st.integers(), st.integers(-(10**30), 10**30), st.floats(), st.just(float("inf"))
    )
    return st.one_of(numbers.map(str), st.text(max_size=12)).filter(bad)


#: (arguments, option, the values it accepts): a value outside is refused
NUMERIC = [
    (["demo"], "--ports", lambda v: 4 <= int(v) <= 32 and int(v) % 2 == 0),
    (["demo"], "--seed", lambda v: int(v) >= 0),
    (["serve"], "--ports", lambda v: int(v) in (4, 8)),
    (["serve", "--seconds", "1"], "--seed", lambda v: int(v) >= 0),
    (["serve"], "--seconds", lambda v: 0 < float(v) <= 1e9),
    (["route", "0-1"], "--ports", lambda v: 2 <= int(v) <= 256),
    (["schedule", "ring"], "--ports", lambda v: 2 <= int(v) <= 64),
    (["schedule", "ring"], "--dwell-ms", lambda v: 0 < float(v) <= 3.6e6),
    (["schedule", "ring"], "--seed", lambda v: int(v) >= 0),
    (["layout"], "--ports", lambda v: 2 <= int(v) <= 128),
]


@given(data=st.data(), case=st.sampled_from(NUMERIC))
def test_a_number_out_of_range_or_not_a_number_is_refused(data, case) -> None:
    args, option, valid = case
    value = data.draw(_not(valid), label=option)
    refusal([*args, f"{option}={value}"])


@given(
    pair=st.one_of(
        st.text(max_size=8).filter(lambda t: "-" not in t and ":" not in t),
        st.tuples(st.integers(0, 7), st.integers(8, 10**9)).map(lambda p: f"{p[0]}-{p[1]}"),
        st.integers(0, 7).map(lambda p: f"{p}-{p}"),
    ),
    mesh=st.sampled_from(["clements", "reck", "hexagonal"]),
)
def test_a_bad_pair_is_refused_on_every_mesh(pair: str, mesh: str) -> None:
    refusal(["route", pair, "--ports", "8", "--mesh", mesh])


@given(
    perm=st.one_of(
        st.lists(st.integers(0, 3), min_size=2, max_size=6).filter(lambda p: len(set(p)) < len(p)),
        st.lists(st.integers(4, 10**6), min_size=1, max_size=4),
    ).map(lambda p: ",".join(map(str, p)))
)
def test_a_permutation_that_repeats_or_leaves_the_switch_is_refused(perm: str) -> None:
    refusal(["route", f"--perm={perm}", "--mesh", "reck"])


@given(ports=st.lists(st.integers(0, 10**6).map(str) | st.text(max_size=4)))
def test_bad_endpoints_of_a_ring_are_refused(ports: list[str]) -> None:
    ends = ",".join([*ports, "16"])  # port 16 is past the switch, whatever comes before
    refusal(["schedule", "ring", "--ports", "16", f"--endpoints={ends}"])
