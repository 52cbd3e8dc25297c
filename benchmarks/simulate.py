"""Simulator throughput: dot products per second, single process, random inputs.

Run: python benchmarks/simulate.py [--n 1000000] [--json]
Prints one row per case: arch, instr, K, dot products, seconds, dot products/s,
and the ratio to the 1,000,000/s target (NVIDIA f16 cases) .
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import smtmma
from smtmma.formats import get_format

CASES = [
    ("sm80", "f16f32", None, 16),
    ("sm90", "f16f32", None, 16),
    ("sm90", "e4m3f32", "wgmma", 32),
    ("gfx942", "f16f32", None, 16),
    ("gfx90a", "bf16f32", None, 16),
]
TARGET = 1_000_000  # dot products/s for the NVIDIA f16 cases


def random_bits(fmt_name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random finite values near 1 in magnitude, as bit patterns (normal-distributed mantissas and exponents)."""
    fmt = get_format(fmt_name)
    sign = rng.integers(0, 2, size=shape, dtype=np.int64) << (fmt.bits - 1)
    exp = np.clip(rng.normal(fmt.bias, 3, size=shape).astype(np.int64), 1, fmt.max_exp_field - 1)
    man = rng.integers(0, 1 << fmt.man_bits, size=shape, dtype=np.int64)
    return (sign | (exp << fmt.man_bits) | man).astype(np.uint64)


def run_case(arch: str, instr: str, op: str | None, K: int, n: int, seed: int = 0) -> dict:
    """Time simulate_dot on n random dot products of length K; returns a result row."""
    entry = smtmma.lookup(arch, instr, op)
    m = entry.model
    rng = np.random.default_rng(seed)
    a = random_bits(m.a_fmt, (n, K), rng)
    b = random_bits(m.b_fmt, (n, K), rng)
    c = random_bits(m.c_fmt, (n,), rng)
    smtmma.simulate_dot(arch, instr, a[:1000], b[:1000], c[:1000], op=op)  # warm-up
    t0 = time.perf_counter()
    smtmma.simulate_dot(arch, instr, a, b, c, op=op)
    dt = time.perf_counter() - t0
    return {"arch": arch, "instr": instr, "op": entry.op, "K": K, "n": n, "seconds": round(dt, 3),
            "dots_per_s": int(n / dt), "model": m.describe()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="dot products per case (default 10^6)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    rows = [run_case(arch, instr, op, K, args.n) for arch, instr, op, K in CASES]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'arch':7} {'instr':8} {'op':6} {'K':>3} {'n':>9} {'seconds':>8} {'dots/s':>11} {'vs 1e6/s':>8}  model")
    for r in rows:
        print(f"{r['arch']:7} {r['instr']:8} {r['op']:6} {r['K']:>3} {r['n']:>9} {r['seconds']:>8.3f} "
              f"{r['dots_per_s']:>11,} {r['dots_per_s'] / TARGET:>8.2f}  {r['model']}")


if __name__ == "__main__":
    main()
