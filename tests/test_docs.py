"""Every Python snippet of the README runs, so the docs cannot drift from the code."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_has_snippets() -> None:
    assert SNIPPETS


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_readme_snippet_runs(code: str) -> None:
    # the snippets check their own claims with assert statements
    exec(compile(code, str(README), "exec"), {})
