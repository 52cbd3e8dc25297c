"""The catalogue's property table: how many cells each column decides, and how long the cells took.

Run: python benchmarks/catalogue_table.py [--table proofs/catalogue.json] [--by kind|column] [--recheck N] [--markdown]

Reads the records ``smtmma prove --catalogue --json`` saved (the shipped
``proofs/catalogue.json`` by default: bitwuzla, ``--jobs 2`` on the project's
2-core machine, so a cell's seconds are wall time shared with one other cell)
and prints, per column (or per model kind), the cells that hold, fail, are
unknown or do not apply, with the median and largest seconds of the decided
ones.  ``--recheck N`` re-runs the N smallest certificates of each column with
the independent checker (``proofs/check_certificate.py``) and z3, and prints
their times beside bitwuzla's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERDICTS = ("holds", "fails", "unknown", "n/a")


def _row(label: str, cells: list[dict]) -> list[str]:
    decided = [c["seconds"] for c in cells if c["verdict"] in ("holds", "fails")]
    counts = [str(sum(c["verdict"] == v for c in cells)) for v in VERDICTS]
    med = f"{statistics.median(decided):.1f}" if decided else "-"
    top = f"{max(decided):.1f}" if decided else "-"
    return [label, str(len(cells)), *counts, med, top, f"{sum(c['seconds'] for c in cells):.0f}"]


def _print(rows: list[list[str]], head: list[str], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return
    width = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(x.ljust(w) for x, w in zip(r, width)))


def recheck(cells: list[dict], n: int, timeout: float) -> list[list[str]]:
    """The ``n`` smallest certificates per column under the independent checker with z3."""
    out = []
    for column in dict.fromkeys(c["extra"]["column"] for c in cells):
        files = sorted((ROOT / c["certificate"] for c in cells if c["certificate"] and c["extra"]["column"] == column),
                       key=lambda p: p.stat().st_size)[:n]
        for f in files:
            t0 = time.perf_counter()
            try:
                r = subprocess.run([sys.executable, str(ROOT / "proofs" / "check_certificate.py"), str(f), "--solver", "z3",
                                    "--timeout", str(timeout)], capture_output=True, text=True, timeout=timeout)
                line = (r.stdout.strip().splitlines() or [r.stderr.strip()[-120:]])[-1]
            except subprocess.TimeoutExpired:
                line = f"timeout ({timeout:g} s)"
            made = next(c["seconds"] for c in cells if c["certificate"] and ROOT / c["certificate"] == f)
            out.append([f.name.split(".smt2")[0], f"{made:.1f}", f"{time.perf_counter() - t0:.1f}", line[:70]])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", default=str(ROOT / "proofs" / "catalogue.json"))
    ap.add_argument("--by", choices=("column", "kind"), default="column")
    ap.add_argument("--recheck", type=int, default=0, metavar="N", help="re-check the N smallest certificates per column with z3")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per re-checked file (default 300)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    doc = json.loads(Path(args.table).read_text())
    cells = doc["cells"]
    key = (lambda c: c["extra"]["column"]) if args.by == "column" else (lambda c: c["extra"]["model"].split(":")[0])
    groups: dict[str, list[dict]] = {}
    for c in cells:
        groups.setdefault(key(c), []).append(c)
    rows = [_row(k, v) for k, v in groups.items()] + [_row("all", cells)]
    models = len({c["extra"]["model"] + "|" + c["covers"][0] for c in cells})
    print(f"{len(cells)} cells of {models} models (per-cell limit {doc.get('timeout', '?')} s)")
    _print(rows, [args.by, "cells", *VERDICTS, "median s", "max s", "total s"], args.markdown)
    if args.recheck:
        print()
        _print(recheck(cells, args.recheck, args.timeout), ["certificate", "bitwuzla s", "z3 s (checker)", "checker"], args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
