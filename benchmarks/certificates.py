"""The shipped certificates under the independent checker: lemmas, statements, and a second solver's time.

Run: python benchmarks/certificates.py [--solver z3] [--timeout 300] [--only NAME,...] [--markdown]

For each file in proofs/ (one process each, ``--timeout`` seconds of wall time
for the whole file): the checks the discipline counts (lemmas proved,
statements, witnesses), the seconds the maker took (``proofs/claims.json``,
bitwuzla under ``prove --all --jobs 2``), and the seconds the second solver
took to re-check every check-sat with ``proofs/check_certificate.py``, or why
it did not.  ``--markdown`` prints the table docs/claims.md carries.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT / "proofs" / "check_certificate.py"
SUMMARY = re.compile(r"ok: (\d+) lemmas proved, (\d+) statements, (\d+) witnesses")


def run(path: Path, solver: str, timeout: float) -> tuple[str, float]:
    """(the checker's line for ``path``, wall seconds); "timeout" when it ran past ``timeout``."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run([sys.executable, str(CHECKER), str(path), "--solver", solver, "--timeout", str(timeout)],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0
    return (r.stdout.strip().splitlines() or [r.stderr.strip()[-200:]])[-1], time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solver", default="z3", choices=("z3", "cvc5", "bitwuzla"))
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per file (default 300)")
    ap.add_argument("--only", default="", help="claim names, comma-separated")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    claims = {c["name"]: c for c in json.loads((ROOT / "proofs" / "claims.json").read_text())["claims"]}
    files = sorted(p for p in (ROOT / "proofs").iterdir() if p.name.endswith((".smt2", ".smt2.gz")))
    only = {x for x in args.only.split(",") if x}
    rows = []
    for path in files:
        name = path.name.split(".smt2")[0]
        if only and name not in only:
            continue
        structure = subprocess.run([sys.executable, str(CHECKER), str(path), "--structure-only"],
                                   capture_output=True, text=True).stdout
        m = SUMMARY.search(structure)
        lemmas, statements, witnesses = (m.groups() if m else ("?", "?", "?"))
        line, seconds = run(path, args.solver, args.timeout)
        second = f"{seconds:.1f}" if SUMMARY.search(line) else (f"> {args.timeout:.0f}" if line == "timeout"
                                                                 else "fails: " + line.split(": ", 1)[-1][:80])
        made = claims.get(name, {}).get("seconds")
        rows.append((name, lemmas, statements, witnesses, "" if made is None else f"{made:.1f}", second))
        if not args.markdown:
            print(f"{name:42} lemmas {lemmas:>4}  statements {statements:>4}  witnesses {witnesses:>3}  "
                  f"made {rows[-1][4]:>6} s  {args.solver} {second}", flush=True)
    if args.markdown:
        print(f"| claim | lemmas | statements | witnesses | bitwuzla, s (made) | {args.solver}, s (re-check) |")
        print("|---|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| `{r[0]}` | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
