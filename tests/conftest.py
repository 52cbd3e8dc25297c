"""Session-wide test settings."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Callable

import pytest

# Kernels that tests compile on the way (simulate_dot's auto backend on large batches) build at -O0: the same bits
# as the default -O3/-O1 (tests/test_native_lanes.py builds one at the defaults), in a fraction of the time.
os.environ.setdefault("SMTMMA_CC_OPT", "-O0")


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], None]:
    """``user_module(name, body)``: a module file in a fresh folder made the current directory.  python: devices
    import from there (as ``python -m``), so the folder is deliberately not on sys.path (nor is '', which
    'python -m pytest' puts there), and no module of that name is left imported."""

    def write(name: str, body: str) -> None:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
        monkeypatch.delitem(sys.modules, name, raising=False)

    return write
