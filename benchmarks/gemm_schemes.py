"""Batched matmul and kernel schemes: chained instruction steps per second against the 2-D path, same run.

Run: python benchmarks/gemm_schemes.py [--batch 64] [--n 512] [--arch sm90] [--instr f16f32] [--repeat 3] [--json]

Rows (best of --repeat, every core, compiled kernels already built):
  2-D       one (batch*n) x n x n GEMM: the same chained steps as the batch
  batched   a (batch, n, n) @ (batch, n, n) GEMM
  promote   the batch with promote_every=128 (DeepGEMM's interval)
  split-K   the batch with split_k=4, bf16 partials, pairwise
  epilogue  the batch with c_in=epilogue, alpha=0.5, beta=2 and a C
Each row gives the wall time, chained steps (outputs x instructions along
K) per second, and the ratio to the 2-D row (targets: batched >= 0.9,
promote/split-K/epilogue >= 0.9 of the batched row).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Callable

import numpy as np

import smtmma
from smtmma.gemm import instruction_k
from smtmma.scheme import Scheme


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--arch", default="sm90")
    ap.add_argument("--instr", default="f16f32")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    b, n = args.batch, args.n
    A = rng.standard_normal((b, n, n)).astype(np.float16)
    B = rng.standard_normal((b, n, n)).astype(np.float16)
    C = rng.standard_normal((b, n, n)).astype(np.float32)
    k = instruction_k(args.arch, args.instr)
    steps = b * n * n * (-(-n // k))
    mm = lambda *x, **kw: smtmma.matmul(args.arch, args.instr, *x, **kw)  # noqa: E731
    mm(A[0], B[0], backend="native")  # build (or load) the kernel before timing
    A2 = A.reshape(b * n, n)
    cases: list[tuple[str, Callable[[], object]]] = [
        ("2-D", lambda: mm(A2, B[0], backend="native")),
        ("batched", lambda: mm(A, B, backend="native")),
        ("promote", lambda: mm(A, B, scheme=Scheme(promote_every=128), backend="native")),
        ("split-K", lambda: mm(A, B, scheme=Scheme(split_k=4, partial="bf16", reduction="pairwise"), backend="native")),
        ("epilogue", lambda: mm(A, B, C, scheme=Scheme(c_in="epilogue", alpha=0.5, beta=2.0), backend="native")),
    ]
    rows = []
    for name, fn in cases:
        t = _best(fn, args.repeat)
        rows.append({"case": name, "seconds": round(t, 3), "steps_per_s": steps / t})
    base, batched = rows[0]["steps_per_s"], rows[1]["steps_per_s"]
    for r in rows:
        r["vs_2d"] = round(r["steps_per_s"] / base, 3)
        r["vs_batched"] = round(r["steps_per_s"] / batched, 3)
    if args.json:
        print(json.dumps({"arch": args.arch, "instr": args.instr, "batch": b, "n": n, "k": k, "rows": rows}))
        return
    print(f"{args.arch} {args.instr}: {b} x {n}x{n}x{n}, k = {k}, {steps:,} chained steps per GEMM, best of {args.repeat}")
    print(f"{'case':<10} {'seconds':>8} {'steps/s':>12} {'vs 2-D':>7} {'vs batched':>11}")
    for r in rows:
        print(f"{r['case']:<10} {r['seconds']:>8.3f} {r['steps_per_s']:>12.3e} {r['vs_2d']:>7.3f} {r['vs_batched']:>11.3f}")


if __name__ == "__main__":
    main()
