"""The docs' figures are the code's: every marked region is what today's code prints (timings
aside), and the check that says so would catch a drifted one."""

import shutil
from pathlib import Path

import pytest

from pswitch import figures
from pswitch.figures._make import ROOT, TIMING, Figure, table


def test_every_fast_figure_is_what_the_code_prints() -> None:
    assert figures.stale(slow=False) == []


@pytest.mark.slow
def test_every_figure_is_what_the_code_prints() -> None:
    assert figures.stale(slow=True) == []


def test_every_marked_region_has_a_figure_on_its_page() -> None:
    assert figures.unmarked() == []


def test_a_drifted_figure_is_reported_and_written_back(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    page = "docs/collectives.md"
    shutil.copyfile(ROOT / page, tmp_path / page)
    text = (tmp_path / page).read_text()
    right = figures.regions(text)["collective-hd-total"]
    drifted = text.replace(
        f"<!-- value: collective-hd-total -->{right}", "<!-- value: collective-hd-total -->1 ms"
    )
    (tmp_path / page).write_text(drifted)
    assert figures.stale(["collective-hd-total"], root=tmp_path) == [
        f"collective-hd-total: {page} differs from what the code prints (make docs)"
    ]
    figures.write(["collective-hd-total"], root=tmp_path)
    assert (tmp_path / page).read_text() == text


def test_timings_and_the_stamp_are_masked_and_nothing_else() -> None:
    figure = Figure("README.md", lambda: "", timings=(r"took (\d+\.\d+) s",))
    text = "3 chips took 1.25 s\n\n*Timings measured on a 2-core x86_64 Linux machine, on 2026.*\n"
    assert figure.masked(text) == f"3 chips took {TIMING} s\n\n{TIMING}\n"
    assert figure.masked(text.replace("3 chips", "4 chips")) != figure.masked(text)


def test_a_table_is_markdown_with_a_stamp_when_timed() -> None:
    made = table(("n", "time"), lambda: [(8, "1 ms"), (16, "2 ms")], timed=True)()
    lines = made.splitlines()
    assert lines[:4] == ["| n | time |", "|---|---:|", "| 8 | 1 ms |", "| 16 | 2 ms |"]
    assert lines[5].startswith("*Timings measured on a ")


def test_an_unknown_figure_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert figures.main(["--check", "no-such-figure"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m pswitch.figures: no figure 'no-such-figure'")
    assert err.count("\n") == 1
