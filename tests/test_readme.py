"""The README's Python tour runs top to bottom as a script, as a user pastes it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_python_snippet_runs_as_a_script(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    script = tmp_path / "tour.py"
    script.write_text(blocks[0], encoding="utf-8")
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "0x3f800008"  # 1 + 2^-11 * 2^-11 * ... as the README's comment says: D as FP32 bits
    assert lines[1].startswith("A[0, 1] = 0.1 is not representable in fp16")
    assert lines[2].startswith("sat [")
    assert lines[-1] == "bf16f32"  # the torch mode's log: the instruction the Linear's addmm ran on
