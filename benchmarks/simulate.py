"""Simulator throughput: dot products per second, NumPy vs compiled, and whole-GEMM wall times.

Run: python benchmarks/simulate.py [--n 1000000] [--all] [--gemm 1024,4096] [--json]

Table 1, one row per case: dot products/s of simulate_dot with the NumPy
interpretation and with the compiled one (one thread, finite N(0, 1)
inputs, kernel already built with the default -O3 -march=native), their
ratio, and the dot products per vector step of the compiled loop (1:
scalar code, terms wider than 64 bits).  --all adds every distinct
catalogue model (compiled, at its instruction's k).  Table 2: smtmma.matmul
of n x n x n fp16 matrices on sm90 f16f32, every core, wall time and
chained FDPA steps per second.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import smtmma
from smtmma.catalogue import CATALOGUE
from smtmma.gemm import instruction_k
from smtmma.native.kernels import MAX_K, source_of
from smtmma.sampling import draw, draw_scales

CASES = [
    ("sm70", "f16f32", None, 16),
    ("sm80", "f16f32", None, 16),
    ("sm90", "f16f32", None, 16),
    ("sm90", "e4m3f32", "wgmma", 32),
    ("sm100", "mxe4m3f32", None, 32),
    ("gfx942", "f16f32", None, 16),
    ("gfx90a", "bf16f32", None, 16),
    ("gfx908", "f16f32", None, 16),
    ("sm80", "f64f64", None, 4),
]


def _inputs(model: smtmma.Model, K: int, n: int, seed: int) -> dict:
    """Inputs of n dot products drawn N(0, 1) (the §3.1.4 'normal' kind: finite, near 1), scales near 1."""
    rng = np.random.default_rng(seed)
    kw = {"a": draw("normal", model.a_fmt, (n, K), rng), "b": draw("normal", model.b_fmt, (n, K), rng),
          "c": draw("normal", model.c_fmt, (n,), rng)}
    if model.scale_fmt:
        shape = (n, -(-K // (model.block or K)))
        kw["scale_a"] = draw_scales("normal", model.scale_fmt, shape, rng)
        kw["scale_b"] = draw_scales("normal", model.scale_fmt, shape, rng)
    return kw


def rate(model: smtmma.Model, K: int, n: int, backend: str) -> float:
    """Dot products/s of simulate_dot on n random dot products of length K (after a warm-up that builds the kernel)."""
    kw = _inputs(model, K, n, 0)
    warm = {k: v[:64] for k, v in kw.items()}
    smtmma.simulate_dot(model, None, backend=backend, **warm)
    t0 = time.perf_counter()
    smtmma.simulate_dot(model, None, backend=backend, **kw)
    return n / (time.perf_counter() - t0)


def dot_rows(cases: list, n: int, numpy_n: int) -> list[dict]:
    rows = []
    for arch, instr, op, K in cases:
        entry = smtmma.lookup(arch, instr, op)
        nat = rate(entry.model, K, n, "native")
        ref = rate(entry.model, K, numpy_n, "numpy") if numpy_n else None
        lanes = source_of(entry.model, K).lanes if K <= MAX_K else None
        rows.append({"arch": entry.arch, "instr": entry.instr, "op": entry.op, "K": K, "model": entry.model.describe(),
                     "lanes": lanes,
                     "numpy_per_s": int(ref) if ref else None, "native_per_s": int(nat),
                     "ratio": round(nat / ref, 1) if ref else None})
    return rows


def gemm_row(size: int) -> dict:
    rng = np.random.default_rng(1)
    A = rng.standard_normal((size, size)).astype(np.float16)
    B = rng.standard_normal((size, size)).astype(np.float16)
    smtmma.matmul("sm90", "f16f32", A[:16, :16], B[:16, :16], backend="native")  # builds the kernel (auto: NumPy here)
    t0 = time.perf_counter()
    smtmma.matmul("sm90", "f16f32", A, B)
    dt = time.perf_counter() - t0
    steps = size * size * (-(-size // 16))
    return {"gemm": f"{size}x{size}x{size}", "arch": "sm90", "instr": "f16f32", "k": 16, "cores": os.cpu_count(),
            "seconds": round(dt, 2), "fdpa_per_s": int(steps / dt)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="dot products per compiled case (default 10^6)")
    ap.add_argument("--numpy-n", type=int, default=100_000, help="dot products per NumPy case (default 10^5; 0: skip)")
    ap.add_argument("--all", action="store_true", help="also every distinct catalogue model (compiled only)")
    ap.add_argument("--gemm", default="1024", help="comma-separated GEMM sizes (default 1024; 4096 takes minutes)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    rows = dot_rows(CASES, args.n, args.numpy_n)
    if args.all:
        seen: dict = {}
        for e in CATALOGUE:
            seen.setdefault(e.model, (e.arch, e.instr, e.op, instruction_k(e.arch, e.instr, e.op)))
        rows += dot_rows(list(seen.values()), max(args.n // 10, 10_000), 0)
    gemms = [gemm_row(int(s)) for s in args.gemm.split(",") if s]
    if args.json:
        print(json.dumps({"dot": rows, "gemm": gemms}, indent=2))
        return
    print(f"{'arch':7} {'instr':14} {'op':7} {'K':>3} {'numpy dots/s':>13} {'compiled dots/s':>16} {'ratio':>6} {'lanes':>5}  model")
    for r in rows:
        ref = f"{r['numpy_per_s']:,}" if r["numpy_per_s"] else "-"
        ratio = f"{r['ratio']:.1f}" if r["ratio"] else "-"
        lanes = r["lanes"] or "1"
        print(f"{r['arch']:7} {r['instr']:14} {r['op']:7} {r['K']:>3} {ref:>13} {r['native_per_s']:>16,} {ratio:>6} "
              f"{lanes:>5}  {r['model']}")
    if args.all:
        low = min(rows, key=lambda r: r["native_per_s"])
        print(f"slowest compiled model: {low['arch']} {low['instr']} {low['op']} ({low['native_per_s']:,}/s)")
    for g in gemms:
        print(f"matmul {g['gemm']} sm90 f16f32 (k = 16), {g['cores']} cores: {g['seconds']:.2f} s, "
              f"{g['fdpa_per_s']:,} chained FDPA steps/s")


if __name__ == "__main__":
    main()
