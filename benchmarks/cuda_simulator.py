"""The generated CUDA simulator on a real GPU: its bits against the NumPy reference, and its throughput.

Run (on a machine with CuPy and a CUDA GPU):
    python benchmarks/cuda_simulator.py [--rows 2000] [--seed 29] [--deadline 300] [--jobs 16] [--json FILE]

Every distinct catalogue model is compiled by NVRTC at its instruction's k
(``--jobs`` processes fill CuPy's kernel cache first), then run on the
§3.1.4 input kinds (``smtmma.sampling.KINDS``: normal, uniform, dnn, bit
streams with subnormals/inf/NaN, ill-conditioned sums), ``--rows`` dot
products per kind, with ``run_rows_cuda``; each D pattern is compared with
``simulate_dot(backend="numpy")``.  Models whose D chains back as C also run
a small GEMM (``matmul(device="cuda")`` against ``matmul(backend="numpy")``).
Table 1: per model, dot products compared, how many differ, GPU and NumPy
dot products/s and their ratio.  Table 2: ``smtmma.matmul`` of n x n x n
fp16 matrices on sm90 f16f32 on the GPU and on every CPU core (compiled C).
Models not reached by ``--deadline`` seconds are listed as not run.
``--dry-run`` stands the compiled CPU kernels in for the GPU (checks this
script on a machine without one).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from typing import Any, Optional

import numpy as np

import smtmma
from smtmma.catalogue import CATALOGUE, Entry
from smtmma.formats import carried_in, get_format
from smtmma.models import Model
from smtmma.native.build import compiler
from smtmma.sampling import KINDS, draw, draw_dot, draw_scales
from smtmma.simulate import simulate_dot


def distinct_models() -> list[tuple[Entry, int]]:
    """One catalogue row per distinct model, with K = its instruction's largest k."""
    seen: dict[Model, tuple[Entry, int]] = {}
    for e in CATALOGUE:
        if e.model not in seen:
            seen[e.model] = (e, max([s.k for s in e.shapes] or [e.model.L or 4]))
    return list(seen.values())


def inputs(model: Model, K: int, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """``rows`` dot products of every input kind (patterns), and scales for block-scaled models."""
    rng = np.random.default_rng(seed)
    parts = [draw_dot(kind, model.a_fmt, model.b_fmt, model.c_fmt, rows, K, rng) for kind in KINDS]
    A, B, C = (np.concatenate([p[i].astype(np.uint64) for p in parts]) for i in range(3))
    scales: dict = {}
    if model.scale_fmt is not None:
        shape = (len(C), -(-K // (model.block or K)))
        scales = {"scale_a": draw_scales("normal", model.scale_fmt, shape, rng),
                  "scale_b": draw_scales("bits", model.scale_fmt, shape, rng)}
    return A, B, C, scales


def gpu_rows(model: Model, K: int, A: np.ndarray, B: np.ndarray, C: np.ndarray, scales: dict, dry: bool) -> np.ndarray:
    """D patterns from the GPU (or, with ``dry``, from the compiled CPU kernels)."""
    if dry:
        return simulate_dot(model, None, A, B, C, backend="native", **scales)
    from smtmma.native.cuda import run_rows_cuda

    return run_rows_cuda(model, K, A, B, C, scales.get("scale_a"), scales.get("scale_b"))


def _compile(index: int) -> tuple[int, float, str]:
    """Build one model's kernel (a one-row run fills CuPy's on-disk cache); seconds, or the error's first line."""
    entry, K = distinct_models()[index]
    A, B, C, scales = inputs(entry.model, K, 1, 0)
    t0 = time.perf_counter()
    try:
        gpu_rows(entry.model, K, A[:1], B[:1], C[:1], {k: v[:1] for k, v in scales.items()}, False)
    except Exception as e:  # reported in the table, not raised: one model's failure must not hide the others
        return index, time.perf_counter() - t0, f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    return index, time.perf_counter() - t0, ""


def gemm_check(entry: Entry, K: int, seed: int, dry: bool) -> Optional[dict]:
    """A 16 x 24 GEMM of 3 chained instructions (plus a partial one) on the GPU against the NumPy reference; None when
    D does not chain back as C or the model is block-scaled."""
    m = entry.model
    if m.scale_fmt is not None or get_format(m.c_fmt).name != carried_in(m.d_fmt).name:
        return None
    rng = np.random.default_rng(seed)
    Kt = 3 * K + max(1, K // 2)
    A, B = draw("normal", m.a_fmt, (16, Kt), rng), draw("normal", m.b_fmt, (Kt, 24), rng)
    C = draw("normal", m.c_fmt, (16, 24), rng)
    kw = dict(op=entry.op, bits=True, k=K)
    ref = smtmma.matmul(entry.arch, entry.instr, A, B, C, backend="numpy", **kw)
    got = smtmma.matmul(entry.arch, entry.instr, A, B, C, **kw, **({"backend": "native"} if dry else {"device": "cuda"}))
    return {"outputs": int(ref.size), "differ": int(np.count_nonzero(np.asarray(ref) != np.asarray(got)))}


def model_row(index: int, entry: Entry, K: int, rows: int, seed: int, dry: bool, compile_s: float) -> dict:
    m = entry.model
    A, B, C, scales = inputs(m, K, rows, seed + index)
    t0 = time.perf_counter()
    ref = simulate_dot(m, None, A, B, C, backend="numpy", **scales)
    t_ref = time.perf_counter() - t0
    gpu_rows(m, K, A, B, C, scales, dry)  # warm: the module is loaded, the arrays' first transfer done
    t0 = time.perf_counter()
    got = gpu_rows(m, K, A, B, C, scales, dry)
    t_gpu = time.perf_counter() - t0
    bad = np.nonzero(np.asarray(got, np.uint64) != np.asarray(ref, np.uint64))[0]
    row = {"arch": entry.arch, "instr": entry.instr, "op": entry.op, "K": K, "model": m.describe(), "dots": int(len(C)),
           "differ": int(len(bad)), "compile_s": round(compile_s, 2), "numpy_per_s": int(len(C) / t_ref),
           "gpu_per_s": int(len(C) / t_gpu)}
    if len(bad):
        i = int(bad[0])
        row["first"] = {"a": [int(x) for x in A[i]], "b": [int(x) for x in B[i]], "c": int(C[i]),
                        "numpy": int(ref[i]), "gpu": int(got[i]),
                        **{k: [int(x) for x in v[i]] for k, v in scales.items()}}
    g = gemm_check(entry, K, seed + index, dry)
    if g is not None:
        row["gemm"] = g
    return row


def gemm_speed(size: int, dry: bool) -> dict:
    """Wall seconds of smtmma.matmul sm90 f16f32 on n x n x n fp16 values: GPU and every CPU core (compiled)."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((size, size)).astype(np.float16)
    B = rng.standard_normal((size, size)).astype(np.float16)
    out: dict[str, Any] = {"gemm": f"{size}x{size}x{size}", "cores": os.cpu_count()}
    sides = [("gpu", {"backend": "native"} if dry else {"device": "cuda"})]
    if compiler() is not None:  # without a C compiler the CPU side would be NumPy's: minutes, not a fair ratio
        sides.append(("cpu", {"backend": "native"}))
    for name, kw in sides:
        smtmma.matmul("sm90", "f16f32", A[:16, :16], B[:16, :16], **kw)  # builds the kernel
        t0 = time.perf_counter()
        D = smtmma.matmul("sm90", "f16f32", A, B, **kw)
        out[f"{name}_s"] = round(time.perf_counter() - t0, 3)
        out[f"{name}_D"] = D
    gpu_d, cpu_d = out.pop("gpu_D"), out.pop("cpu_D", None)
    if cpu_d is not None:
        out["same_bits"] = bool(np.array_equal(gpu_d.view(np.uint32), cpu_d.view(np.uint32)))
        out["ratio"] = round(out["cpu_s"] / out["gpu_s"], 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000, help="dot products per input kind and model (default 2000)")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--deadline", type=float, default=300.0, help="seconds after which no further model starts")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes compiling kernels up front")
    ap.add_argument("--gemm", default="1024,2048", help="comma-separated GEMM sizes for table 2 ('' skips it)")
    ap.add_argument("--json", metavar="FILE", help="also write every row as JSON")
    ap.add_argument("--dry-run", action="store_true", help="compiled CPU kernels stand in for the GPU")
    args = ap.parse_args()
    if args.rows < 1 or args.jobs < 1:
        print("error: --rows and --jobs must be at least 1", file=sys.stderr)
        return 2
    if not args.dry_run:
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() == 0:
                raise RuntimeError("no GPU")
        except Exception as e:
            print(f"error: this benchmark needs CuPy and a CUDA GPU ({type(e).__name__}); --dry-run checks it without",
                  file=sys.stderr)
            return 2
    t_start = time.perf_counter()
    models = distinct_models()
    compiled: dict[int, tuple[float, str]] = {}
    if args.dry_run:
        compiled = {i: (0.0, "") for i in range(len(models))}
    else:  # NVRTC takes 1-7 s per kernel: fill CuPy's disk cache from fresh processes, every core at once
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            for i, s, err in pool.imap_unordered(_compile, range(len(models))):
                compiled[i] = (s, err)
    print(f"{len(models)} distinct models, kernels built in {time.perf_counter() - t_start:.1f} s "
          f"({sum(1 for s, e in compiled.values() if e)} failed)", flush=True)
    rows: list[dict] = []
    for i, (entry, K) in enumerate(models):
        s, err = compiled[i]
        base = {"arch": entry.arch, "instr": entry.instr, "op": entry.op, "K": K, "model": entry.model.describe()}
        if err:
            rows.append({**base, "error": err})
        elif time.perf_counter() - t_start > args.deadline:
            rows.append({**base, "error": "not run (deadline)"})
        else:
            try:
                rows.append(model_row(i, entry, K, args.rows, args.seed, args.dry_run, s))
            except Exception as e:
                rows.append({**base, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"})
        r = rows[-1]
        mark = r.get("error") or (f"{r['differ']} of {r['dots']} differ" + (
            f"; gemm {r['gemm']['differ']} of {r['gemm']['outputs']}" if "gemm" in r else ""))
        print(f"{i + 1:3}/{len(models)} {entry.arch:7} {entry.instr:16} {entry.op:8} K={K:<3} {mark}", flush=True)
    gemms = [gemm_speed(int(n), args.dry_run) for n in args.gemm.split(",") if n]
    ran = [r for r in rows if "error" not in r]
    dots = sum(r["dots"] for r in ran)
    differ = sum(r["differ"] for r in ran)
    g_out = sum(r["gemm"]["outputs"] for r in ran if "gemm" in r)
    g_diff = sum(r["gemm"]["differ"] for r in ran if "gemm" in r)
    print()
    print(f"{'arch':7} {'instr':16} {'op':8} {'K':>3} {'dots':>7} {'differ':>6} {'gemm':>9} {'build s':>7} "
          f"{'numpy/s':>10} {'gpu/s':>12} {'ratio':>6}")
    for r in rows:
        if "error" in r:
            print(f"{r['arch']:7} {r['instr']:16} {r['op']:8} {r['K']:>3} {r['error']}")
            continue
        g = f"{r['gemm']['differ']}/{r['gemm']['outputs']}" if "gemm" in r else "-"
        print(f"{r['arch']:7} {r['instr']:16} {r['op']:8} {r['K']:>3} {r['dots']:>7} {r['differ']:>6} {g:>9} "
              f"{r['compile_s']:>7.2f} {r['numpy_per_s']:>10,} {r['gpu_per_s']:>12,} {r['gpu_per_s'] / r['numpy_per_s']:>6.1f}")
    print(f"\n{len(ran)} of {len(rows)} models run: {dots:,} dot products, {differ} differ from NumPy; "
          f"GEMM outputs {g_out:,}, {g_diff} differ")
    for g in gemms:
        cpu = (f", {g['cores']} CPU cores {g['cpu_s']:.3f} s (x{g['ratio']}), same bits: {g['same_bits']}"
               if "cpu_s" in g else " (no C compiler: no CPU side)")
        print(f"matmul {g['gemm']} sm90 f16f32: gpu {g['gpu_s']:.3f} s{cpu}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": args.seed, "rows_per_kind": args.rows, "models": rows, "gemm": gemms}, f, indent=1)
    return 1 if differ or g_diff or any(not g.get("same_bits", True) for g in gemms) else 0


if __name__ == "__main__":
    sys.exit(main())
