"""Solver query times: the queries of Table 4 of the SMT paper (001_8b79efe9cf5c7623.txt), and more.

Each query is the smtmma command a user would type (a distinguish between
the catalogue model and a hypothesis model spec, or a property query),
run once per installed backend in its own process; the table shows the
verdict and the wall time of the whole command (start-up, formula
building, solving, replay) next to the paper's z3 / cvc5 times (AMD EPYC,
6 h cap; "-" = timed out).  ``--timeout`` is the cap per query and
backend: it is passed on as the solver's limit and the command is killed
when its wall time passes it ("killed").  z3's time depends strongly on
its random seed, so its cell is the median of ``--z3-seeds`` runs (seeds
0, 1, ...) with the range in parentheses; bitwuzla and cvc5 run once
(seed 0).

Run: python benchmarks/queries.py [--timeout 600] [--solvers bitwuzla,z3,cvc5] [--only NAME] [--json]
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from smtmma.queries.backends import available

NO_SUBNORMAL_OUTPUT = Path(__file__).resolve().parent / "predicates" / "no_subnormal_output.py"


@dataclass
class Query:
    name: str
    paper: str  # z3 / cvc5 times of the SMT paper's Table 4, when it has the row
    command: str  # smtmma arguments, without --solver/--timeout/--json


# Table 4 of the SMT paper is about Volta (sm70: one 4-term FDPA plus c per instruction).
# Hypotheses are model specs: "fma" = a chain of FP32 FMAs (every partial sum normalized and
# rounded), t-fdpa:F=60 = a much wider accumulator, t-fdpa:rho=rz-fp16 = truncation to fp16,
# t-fdpa:ftz_inputs = the same FDPA flushing subnormal inputs to zero.
QUERIES = [
    Query("exact multiplication", "0.55 / 0.027", "distinguish sm70 fma --instr f16f32 --k 1 --domain c=0"),
    Query("exact addition in FP16", "27.59 / 0.12", "distinguish sm70 t-fdpa:F=10 --instr f16f16 --k 4"),
    Query("rounding of final result", "0.52 / 0.008", "distinguish sm70 t-fdpa:rho=rz-fp16 --instr f16f16 --k 1 --domain c=0"),
    Query("rounding of accumulator", "0.34 / 0.017", "distinguish sm70 t-fdpa:F=60 --instr f16f32 --k 2"),
    Query("accumulation order", "9.87 / 0.25", "query order-independence --arch sm70 --instr f16f32 --k 4"),
    Query("normalization", "9.63 / 0.25", "distinguish sm70 fma --instr f16f32 --k 2 --domain nonneg"),
    Query("subnormal FP16 inputs", "0.117 / 0.016", "distinguish sm70 t-fdpa:ftz_inputs --instr f16f32 --k 1 --domain c=0"),
    Query("subnormal FP16 outputs", "0.68 / 0.024",
          f"query custom --arch sm70 --instr f16f16 --k 1 --domain c=0 --predicate {shlex.quote(str(NO_SUBNORMAL_OUTPUT))}"),
    Query("3 carry bits (Volta)", "410.25 / 72.79", "query carry-bits --arch sm70 --instr f16f32"),
    Query("4 carry bits (Ampere)", "- / -", "query carry-bits --arch sm80 --instr f16f32 --k 8"),
    # Beyond the paper.
    Query("distinguish sm80 sm90 f16f32", "", "distinguish sm80 sm90 --instr f16f32"),
    Query("distinguish sm70 sm75 sm80 sm90 f16f32", "", "distinguish sm70 sm75 sm80 sm90 --instr f16f32"),
    Query("distinguish 6 architectures f16f32", "", "distinguish sm70 sm80 sm90 gfx908 gfx90a gfx942 --instr f16f32"),
    Query("5 carry bits (Hopper)", "", "query carry-bits --arch sm90 --instr f16f32"),
    Query("symmetry sm80 f16f32 K=8 (holds)", "", "query symmetry --arch sm80 --instr f16f32 --k 8"),
    Query("symmetry sm90 f16f32 K=16 (holds)", "", "query symmetry --arch sm90 --instr f16f32"),
    Query("symmetry gfx942 f16f32 (CDNA3 asymmetry)", "", "query symmetry --arch gfx942 --instr f16f32"),
]


def run_one(q: Query, solver: str, cap: float, seed: int = 0) -> tuple[str, float]:
    """(verdict, wall seconds) of the command with ``solver`` and ``seed``, killed after ``cap`` seconds."""
    argv = [sys.executable, "-m", "smtmma", *shlex.split(q.command), "--solver", solver, "--timeout", f"{cap:g}",
            "--seed", str(seed), "--json"]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=cap)
    except subprocess.TimeoutExpired:
        return "killed", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        return f"error (exit {p.returncode}): {p.stderr.strip()[-80:]}", seconds
    verdict = str(out.get("verdict"))
    if "carry_bits" in out and verdict == "holds":
        verdict += f" ({out['carry_bits']})"
    return verdict, seconds


def run_median(q: Query, solver: str, cap: float, seeds: int) -> tuple[str, float, str]:
    """The run of median wall time over ``seeds`` solver seeds: (verdict, seconds, "min-max" or "")."""
    runs = sorted((run_one(q, solver, cap, seed) for seed in range(seeds)), key=lambda r: r[1])
    verdict, seconds = runs[len(runs) // 2]
    spread = f"{runs[0][1]:.2f}-{runs[-1][1]:.2f}" if len(runs) > 1 else ""
    return verdict, seconds, spread


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=600.0, help="cap per query and backend, seconds of wall time (default 600)")
    ap.add_argument("--solvers", default=",".join(available()), help="comma-separated backends (default: every installed one)")
    ap.add_argument("--z3-seeds", type=int, default=3, metavar="N",
                    help="z3's time varies up to 100x with its random seed: report the median of seeds 0..N-1 (default 3)")
    ap.add_argument("--only", default="", help="run only queries whose name contains this text")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    solvers = [s for s in args.solvers.split(",") if s]
    rows = []
    if not args.json:
        print("| query | paper z3 / cvc5 (s) | " + " | ".join(solvers) + " |")
        print("|---|---|" + "---|" * len(solvers))
    for q in QUERIES:
        if args.only and args.only not in q.name:
            continue
        row: dict[str, object] = {"query": q.name, "paper": q.paper, "command": "smtmma " + q.command}
        cells = []
        for s in solvers:
            verdict, seconds, spread = run_median(q, s, args.timeout, args.z3_seeds if s == "z3" else 1)
            row[s] = {"verdict": verdict, "seconds": round(seconds, 2), **({"range": spread} if spread else {})}
            cells.append(f"{verdict} {seconds:.2f}" + (f" ({spread})" if spread else ""))
        rows.append(row)
        if not args.json:
            print(f"| {q.name} | {q.paper} | " + " | ".join(cells) + " |", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
