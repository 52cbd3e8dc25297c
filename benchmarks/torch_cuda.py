"""torch's GEMMs on a CUDA GPU against ``smtmma.emulate``: how many output bits the emulation predicts.

Run (torch with CUDA, on the GPU's machine):
    python benchmarks/torch_cuda.py [--arch sm90] [--ks 32,256,1024,4096,16384] [--mn 128] [--seed 0] [--json FILE]

For float16, bfloat16, float32 with TF32 and FP8 (``torch._scaled_mm``, e4m3,
scales 1), M = N = ``--mn`` and each K of ``--ks``, it draws N(0, 1) inputs
(exact in the dtype), runs ``torch.matmul`` (and ``F.linear`` with a bias
for the 16-bit types) on the GPU, and the same calls on CPU copies inside
``smtmma.emulate(arch)``: one cuBLAS-like kernel, the instruction chained
along K from a zero accumulator, C or the bias in an FP32 epilogue.  Each
row: the share of bit-identical outputs, the largest difference in units
of the output dtype's last place, and the CUDA kernels torch launched (from
``torch.profiler``: a split-K or stream-K GEMM shows in its name).  The
16-bit types run with torch's default ``allow_*_reduced_precision_reduction``
(True: cuBLAS may reduce split-K partials in the 16-bit type, which the
emulation does not model) and with it False; float32 with the emulation's
default TF32 rounding (RNE) and with ``scheme="cublas-tf32"`` (RNA).
``--cpu-check`` runs the script without a GPU (torch's CPU results stand in).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from typing import Any, Callable, Optional

import numpy as np

import smtmma


def ordered(bits: np.ndarray, width: int) -> np.ndarray:
    """Bit patterns of a sign-magnitude float format as integers in the order of their values (int64)."""
    b = bits.astype(np.int64) & ((1 << width) - 1)
    sign = 1 << (width - 1)
    return np.where(b & sign, -(b & (sign - 1)), b)


def patterns(t: Any) -> tuple[np.ndarray, int]:
    """(the bit patterns of a torch tensor on the CPU, their width)."""
    import torch

    width = t.element_size() * 8
    view = {16: torch.int16, 32: torch.int32, 64: torch.int64}[width]
    return t.detach().cpu().contiguous().view(view).numpy().astype(np.int64), width


def compare(got: Any, want: Any) -> dict[str, Any]:
    """Bit-identical share and largest distance in last places (NaN-free outputs assumed; NaNs count as different)."""
    g, w = patterns(got)
    e, _ = patterns(want)
    same = g == e
    dist = np.abs(ordered(g, w) - ordered(e, w))
    return {"outputs": int(g.size), "identical": int(same.sum()), "max_ulps": int(dist.max()) if g.size else 0}


def kernels(run: Callable[[], Any], cuda: bool) -> list[str]:
    """The names of the CUDA kernels ``run`` launches (none on the CPU)."""
    if not cuda:
        run()
        return []
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    names = {e.key for e in prof.key_averages() if "memcpy" not in e.key.lower() and "memset" not in e.key.lower()}
    return sorted(n[:90] for n in names)


def draw(torch: Any, shape: tuple[int, ...], dtype: Any, gen: Any) -> Any:
    """N(0, 1) values rounded to ``dtype`` (so the GPU and the emulation read the same inputs)."""
    return torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)


def case_rows(arch: str, mn: int, ks: list[int], seed: int, device: str) -> list[dict[str, Any]]:
    import torch
    import torch.nn.functional as F

    cuda = device == "cuda"
    gen = torch.Generator().manual_seed(seed)
    rows: list[dict[str, Any]] = []
    back = torch.backends.cuda.matmul

    def record(dtype: str, call: str, K: int, setting: str, gpu: Callable[[], Any], emu: Callable[[], Any],
               scheme: Optional[str] = None) -> None:
        row: dict[str, Any] = {"dtype": dtype, "call": call, "M": mn, "N": mn, "K": K, "setting": setting}
        try:
            names = kernels(gpu, cuda)
            t0 = time.perf_counter()
            want = gpu()
            if cuda:
                torch.cuda.synchronize()
            row["gpu_s"] = round(time.perf_counter() - t0, 4)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # provisional-model and native-op notes: the table says what ran
                with smtmma.emulate(arch, scheme=scheme):
                    got = emu()
            row.update(compare(got, want), kernels=names)
        except Exception as e:  # one case's failure is a row of the table, not the end of the run
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        rows.append(row)
        r = row
        print(f"{dtype:9} {call:11} K={K:<6} {setting:34} " + (r.get("error") or
              f"{r['identical']}/{r['outputs']} identical, max {r['max_ulps']} ulps, kernels: {'; '.join(r['kernels'])[:120]}"),
              flush=True)

    for K in ks:
        for name, dt in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
            A, B = draw(torch, (mn, K), dt, gen), draw(torch, (K, mn), dt, gen)
            W, bias = B.t().contiguous(), draw(torch, (mn,), dt, gen)
            Ag, Bg, Wg, bg = (x.to(device) for x in (A, B, W, bias))
            flag = "allow_fp16_reduced_precision_reduction" if name == "float16" else "allow_bf16_reduced_precision_reduction"
            for reduced in (True, False):
                setattr(back, flag, reduced)
                setting = f"{flag.split('_')[1]} reduced reduction {'on' if reduced else 'off'}"
                record(name, "matmul", K, setting, lambda: Ag @ Bg, lambda: A @ B)
                record(name, "linear+bias", K, setting, lambda: F.linear(Ag, Wg, bg), lambda: F.linear(A, W, bias))
            setattr(back, flag, True)
        A, B = draw(torch, (mn, K), torch.float32, gen), draw(torch, (K, mn), torch.float32, gen)
        Ag, Bg = A.to(device), B.to(device)
        back.allow_tf32 = True
        for scheme in (None, "cublas-tf32"):
            record("float32", "matmul", K, f"TF32, emulated with {scheme or 'RNE rounding'}", lambda: Ag @ Bg,
                   lambda: A @ B, scheme)
        back.allow_tf32 = False
        if K % 16 == 0 and hasattr(torch, "float8_e4m3fn"):
            A8, B8 = draw(torch, (mn, K), torch.float8_e4m3fn, gen), draw(torch, (mn, K), torch.float8_e4m3fn, gen).t()
            A8g, B8g = A8.to(device), B8.to(device)
            one = torch.tensor(1.0)
            oneg = one.to(device)
            record("e4m3", "_scaled_mm", K, "scales 1, FP32 out",
                   lambda: torch._scaled_mm(A8g, B8g, scale_a=oneg, scale_b=oneg, out_dtype=torch.float32),
                   lambda: torch._scaled_mm(A8, B8, scale_a=one, scale_b=one, out_dtype=torch.float32))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm90", help="the architecture to emulate (default sm90: H100, H200)")
    ap.add_argument("--mn", type=int, default=128, help="M = N (default 128)")
    ap.add_argument("--ks", default="32,256,1024,4096,16384", help="comma-separated K values")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    ap.add_argument("--cpu-check", action="store_true", help="no GPU: torch's CPU results stand in (checks the script)")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("error: this benchmark needs torch (pip install torch)", file=sys.stderr)
        return 2
    ks = [int(k) for k in args.ks.split(",") if k]
    if args.mn < 1 or not ks or min(ks) < 1:
        print("error: --mn and every K must be at least 1", file=sys.stderr)
        return 2
    device = "cpu" if args.cpu_check else "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        print("error: torch sees no CUDA GPU (--cpu-check runs the script without one)", file=sys.stderr)
        return 2
    gpu = torch.cuda.get_device_name(0) if device == "cuda" else "cpu"
    print(f"torch {torch.__version__}, {gpu}, emulating {args.arch}, M = N = {args.mn}", flush=True)
    rows = case_rows(args.arch, args.mn, ks, args.seed, device)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "device": gpu, "arch": args.arch, "seed": args.seed, "rows": rows}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
