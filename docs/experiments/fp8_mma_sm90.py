"""Re-run the hypothesis table of docs/fp8-mma-sm90.md on the recorded H100 lines.

Usage: python docs/experiments/fp8_mma_sm90.py [path/to/H100-e4m3-fp16.jsonl]
Prints, for each candidate model of PTX mma.sync e4m3 -> f16 on sm90, how many of
the recorded lines it reproduces bit for bit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import smtmma
from smtmma.models import Model

DEFAULT = Path(__file__).resolve().parents[2] / "hw-samples" / "H100-e4m3-fp16.jsonl"


def load(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    a = np.array([[int(x, 16) for x in r["a"]] for r in rows], dtype=np.uint8)
    b = np.array([[int(x, 16) for x in r["b"]] for r in rows], dtype=np.uint8)
    c = np.array([int(r["c"], 16) for r in rows], dtype=np.uint16)
    d = np.array([int(r["d"], 16) for r in rows], dtype=np.uint16)
    return a, b, c, d


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    a, b, c, d = load(path)
    native = smtmma.lookup("sm90", "e4m3f16", "wgmma").model
    chosen = smtmma.lookup("sm90", "e4m3f16", "mma").model
    candidates = [
        ("native QGMMA (Table 4): L=32, F=13", native),
        ("one FDPA on the FP16 path: L=32, F=25 (MMA-Sim's choice)", native.replace(F=25)),
        ("two HMMA k-halves, C in the first: L=16, F=25", native.replace(L=16, F=25)),
        ("two HMMA over interleaved register pairs, C in the first", native.replace(L=16, F=25, interleave=2)),
        ("one FDPA from 0, then C added by an FP16 add", native.replace(F=25, c_after=True)),
        ("two HMMA k-halves from 0, then C added", native.replace(L=16, F=25, c_after=True)),
        ("chosen: interleaved pairs from 0, then C added (F=25)", chosen),
        ("same with the FP8 datapath's F=13", chosen.replace(F=13)),
    ]
    print(f"{'matched':>8}  candidate ({len(d)} recorded lines)")
    for name, m in candidates:
        got = smtmma.simulate_dot(m, None, a, b, c)
        print(f"{int((got == d).sum()):>8}  {name}  [{m.describe()}]")


if __name__ == "__main__":
    main()
