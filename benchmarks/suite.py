"""Minimal suites: size against the information bound, and time, per instruction type and for a 500-variant grid.

Run: python benchmarks/suite.py [--json] [--solver S] [--no-grid] [--all]
Prints one row per space: candidates, classes M, suite size V (vectors that separate
classes), ceil(log2 M), solver calls, seconds (the whole smtmma suite computation, one
process).  The catalogue rows are every instruction type with a shipped suite (suites/);
the grid is GRID below (500 points, 499 distinct models after duplicates are dropped).
"""

from __future__ import annotations

import argparse
import json
import time

from smtmma.catalogue import INSTRS as INSTRS_ALL, entries
from smtmma.discriminators.candidates import Space, catalogue_space, grid_space
from smtmma.discriminators.suite import build_suite

INSTRS = ("f16f32", "f16f16", "bf16f32", "tf32f32", "e4m3f32", "e5m2f32", "e4m3f16", "mxe4m3f32", "f64f64")
GRID = "t-fdpa:L=4,8,16,32;F=22..26,35;rho=rz-fp32,rne-fp32,rd-fp32,ru-fp32;carry_bits=2..5,none|structural"


def row(label: str, build_space, solver: str | None) -> dict:
    """One table row: build the space and its suite, timed together (seconds)."""
    t0 = time.perf_counter()
    space: Space = build_space()
    suite = build_suite(space, solver=solver)
    dt = time.perf_counter() - t0
    s = suite.summary()
    return {"space": label, "candidates": s["candidates"], "classes": s["classes"], "vectors": s["vectors"],
            "log2_classes": s["log2_classes"], "within_bound": s["vectors"] <= s["log2_classes"],
            "solver_calls": s["solver_calls"], "unproven": len(s["unproven"]), "seconds": round(dt, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--solver", help="backend for the pairs the pool cannot split (default: the first installed)")
    ap.add_argument("--no-grid", action="store_true", help="skip the 500-variant grid (about 20 s)")
    ap.add_argument("--all", action="store_true", help="every instruction type of the catalogue, not only the shipped ones")
    args = ap.parse_args()
    instrs = [i for i in INSTRS_ALL if entries(instr=i)] if args.all else INSTRS
    rows = [row(f"catalogue {i}", lambda i=i: catalogue_space(i), args.solver) for i in instrs]
    if not args.no_grid:
        rows.append(row("grid f16f32 (500 points)", lambda: grid_space(GRID, "f16f32"), args.solver))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'space':28} {'candidates':>10} {'classes':>7} {'vectors':>7} {'log2':>4} {'calls':>5} {'seconds':>8}")
    for r in rows:
        print(f"{r['space']:28} {r['candidates']:>10} {r['classes']:>7} {r['vectors']:>7} {r['log2_classes']:>4} "
              f"{r['solver_calls']:>5} {r['seconds']:>8.2f}" + ("" if r["within_bound"] else "  (above the bound)"))


if __name__ == "__main__":
    main()
