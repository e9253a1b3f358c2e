"""The README's Python snippets run as written, so the tour stays true."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_has_a_tour():
    assert len(SNIPPETS) >= 5


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_snippet_runs(code, capsys):
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
