"""docs/field-questions.md: every snippet runs and prints exactly the output shown under it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "field-questions.md"
PAIRS = re.findall(r"```python\n(.*?)```\n\n```text\n(.*?)```", DOC.read_text(), re.S)


def test_the_page_has_its_snippets() -> None:
    assert len(PAIRS) >= 5


@pytest.mark.parametrize("code, shown", PAIRS, ids=[f"snippet-{i + 1}" for i in range(len(PAIRS))])
def test_snippet_prints_what_the_page_shows(code: str, shown: str) -> None:
    if "import torch" in code:
        pytest.importorskip("torch")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__field_question__"})
    assert buf.getvalue() == shown
