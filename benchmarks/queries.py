"""Solver query times: the queries of Table 4 of the SMT paper (001_8b79efe9cf5c7623.txt), and more.

Each query is phrased in smtmma's terms (a distinguish between the catalogue
model and a hypothesis, or a property query) and run with every installed
backend; the table shows the verdict and wall time per backend next to the
paper's z3 / cvc5 times (AMD EPYC, 6 h cap; "-" = timed out).

Run: python benchmarks/queries.py [--timeout 600] [--solvers bitwuzla,z3,cvc5] [--only NAME] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from typing import Callable, Optional

import smtmma
from smtmma.models import Model
from smtmma.queries.backends import available
from smtmma.queries.distinguish import distinguish
from smtmma.queries.formula import parse_domain
from smtmma.queries.properties import check_property


def M(arch: str, instr: str = "f16f32", op: Optional[str] = None) -> Model:
    return smtmma.lookup(arch, instr, op).model


def fma_chain(instr: str = "f16f32") -> Model:
    """Sequential FP32 FMAs of the fp16 products: every partial sum normalized and rounded."""
    i = smtmma.catalogue.INSTRS[instr]
    return Model("fma", i.a_fmt, i.b_fmt, i.c_fmt, i.d_fmt)


@dataclass
class Query:
    name: str
    paper: str  # z3 / cvc5 times of the SMT paper's Table 4, when it has the row
    run: Callable[[str, float], tuple[str, float]]  # (solver, timeout) -> (verdict, seconds)


def _dist(models: list[Model], K: int, domain: str = "") -> Callable[[str, float], tuple[str, float]]:
    def run(solver: str, timeout: float) -> tuple[str, float]:
        t0 = time.perf_counter()
        r = distinguish(models, K=K, domain=parse_domain(domain), solver=solver, timeout=timeout)
        return r.verdict, time.perf_counter() - t0

    return run


def _prop(prop: str, model: Model, K: Optional[int] = None, domain: str = "", **opts: object) -> Callable[[str, float], tuple[str, float]]:
    def run(solver: str, timeout: float) -> tuple[str, float]:
        t0 = time.perf_counter()
        r = check_property(prop, model, K=K, domain=parse_domain(domain) if domain else None, solver=solver, timeout=timeout, **opts)
        extra = f" ({r.extra['carry_bits']})" if "carry_bits" in r.extra and r.verdict == "holds" else ""
        return r.verdict + extra, time.perf_counter() - t0

    return run


def _no_subnormal_output(alg, inputs, outputs):  # type: ignore[no-untyped-def]
    """Predicate: D (fp16) is not subnormal; a failure shows subnormal outputs exist."""
    (d,) = outputs.values()
    mag = alg.low_bits(d, 15)
    return alg.not_(alg.and_(alg.lt(0, mag), alg.lt(mag, 1 << 10)))


V = M("sm70")
QUERIES = [
    # Table 4 of the SMT paper, on Volta (sm70, 4-term FDPA + c) unless said otherwise.
    Query("exact multiplication", "0.55s / 0.027s", _dist([V, fma_chain()], 1, "c=0")),
    Query("exact addition in FP16", "27.59s / 0.12s", _dist([M("sm70", "f16f16"), M("sm70", "f16f16").replace(F=10)], 4)),
    Query("rounding of final result", "0.52s / 0.008s", _dist([M("sm70", "f16f16"), M("sm70", "f16f16").replace(rho="rz-fp16")], 1, "c=0")),
    Query("rounding of accumulator", "0.34s / 0.017s", _dist([V, V.replace(F=60)], 2)),
    Query("accumulation order", "9.87s / 0.25s", _prop("order-independence", V, K=4)),
    Query("normalization", "9.63s / 0.25s", _dist([V, fma_chain()], 2, "nonneg")),
    Query("subnormal FP16 inputs", "0.117s / 0.016s", _dist([V, M("gfx90a")], 1, "c=0")),
    Query("subnormal FP16 outputs", "0.682s / 0.024s", _prop("custom", M("sm70", "f16f16"), K=1, domain="c=0", predicate=_no_subnormal_output)),
    Query("3 carry bits (Volta)", "410.25s / 72.793s", _prop("carry-bits", V, K=4)),
    Query("4 carry bits (Ampere)", "- / -", _prop("carry-bits", M("sm80"), K=8)),
    # Beyond the paper.
    Query("distinguish sm80 sm90 f16f32", "", _dist([M("sm80"), M("sm90")], 16)),
    Query("5 carry bits (Hopper)", "", _prop("carry-bits", M("sm90"), K=16)),
    Query("symmetry sm80 f16f32 (holds)", "", _prop("symmetry", M("sm80"), K=8)),
    Query("symmetry gfx942 f16f32 (CDNA3 asymmetry)", "", _prop("symmetry", M("gfx942"), K=8)),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=600.0, help="cap per query and backend, seconds (default 600)")
    ap.add_argument("--solvers", default=",".join(available()), help="comma-separated backends (default: every installed one)")
    ap.add_argument("--only", default="", help="run only queries whose name contains this text")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    solvers = [s for s in args.solvers.split(",") if s]
    rows = []
    for q in QUERIES:
        if args.only and args.only not in q.name:
            continue
        row: dict[str, object] = {"query": q.name, "paper (z3 / cvc5)": q.paper}
        for s in solvers:
            try:
                verdict, seconds = q.run(s, args.timeout)
                row[s] = f"{verdict} {seconds:.2f}s"
            except Exception as e:  # a crash is a result too: report it, keep going
                row[s] = f"error: {type(e).__name__}: {e}"[:60]
        rows.append(row)
        if not args.json:
            print(" | ".join(str(v) for v in row.values()), flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
