"""Cost of the torch mode: torch.nn.functional.linear under smtmma.emulate("h100") against the equal smtmma.matmul call.

Run: python benchmarks/emulate.py [--small] [--repeat 3] [--json]
Rows: a bf16 linear (default 1024 x 768 input, 768 -> 3072 weight) with and
without bias, timed under ``emulate("h100")`` and as the smtmma.matmul call
the mode makes (bf16f32; the bias as C in the FP32 epilogue), and their
ratio (target <= 1.1: the mode's dispatch, argument binding and output
conversion are all it adds); then forward + backward of a two-layer bf16
MLP (768 -> 3072 -> ReLU -> 768, batch 256) under the mode, beside torch's
native run on the CPU.  ``--small`` divides every size by 8;
``--torch-threads N`` sets torch's CPU threads (smtmma.matmul's own
threads are not affected).  Best of
``--repeat`` runs each, the two sides of a ratio interleaved; one untimed
run first (a kernel's first compile is not counted).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import torch

import smtmma
from smtmma.scheme import Scheme


def best(runs: list[Callable[[], object]], repeat: int) -> list[float]:
    """Fastest of ``repeat`` calls of each function in ``runs``, seconds, the functions called in turn."""
    for run in runs:
        run()  # untimed: compiles, caches
    times = [[] for _ in runs]
    for _ in range(repeat):
        for run, t in zip(runs, times):
            start = time.perf_counter()
            run()
            t.append(time.perf_counter() - start)
    return [min(t) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="sizes divided by 8")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--torch-threads", type=int, default=None,
                    help="torch.set_num_threads(N) first (on a loaded machine each OpenMP op can cost ms to start)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    div = 8 if args.small else 1
    M, K, N, batch = 1024 // div, 768 // div, 3072 // div, 256 // div
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(M, K, generator=gen).to(torch.bfloat16)
    w = torch.randn(N, K, generator=gen).div(K ** 0.5).to(torch.bfloat16)
    b = torch.randn(N, generator=gen).to(torch.bfloat16)
    rows = []

    def linear(bias: object) -> Callable[[], object]:
        def run() -> object:
            with smtmma.emulate("h100"):
                return torch.nn.functional.linear(x, w, bias)
        return run

    def direct(bias: object) -> Callable[[], object]:
        scheme = Scheme(c_in="epilogue") if bias is not None else None
        return lambda: smtmma.matmul("h100", "bf16f32", x, w.t(), bias, scheme=scheme)

    for name, bias in (("linear + bias", b), ("linear", None)):
        emu, mat = best([linear(bias), direct(bias)], args.repeat)
        rows.append({"case": f"{name} {M}x{K} @ {K}x{N}", "emulate_s": emu, "matmul_s": mat, "ratio": emu / mat})

    net = torch.nn.Sequential(torch.nn.Linear(K, N), torch.nn.ReLU(), torch.nn.Linear(N, K)).to(torch.bfloat16)
    xb = torch.randn(batch, K, generator=gen).to(torch.bfloat16)

    def step() -> None:
        net.zero_grad(set_to_none=True)
        net(xb).float().square().mean().backward()

    def emulated_step() -> None:
        with smtmma.emulate("h100"):
            step()

    emu, native = best([emulated_step, step], args.repeat)
    rows.append({"case": f"MLP fwd+bwd {batch}x{K} -> {N} -> {K}", "emulate_s": emu, "native_s": native})
    if args.json:
        print(json.dumps({"arch": "h100", "dtype": "bfloat16", "threads": torch.get_num_threads(), "rows": rows}))
        return
    print(f"smtmma.emulate('h100'), bfloat16, best of {args.repeat}")
    print(f"{'case':38} {'emulate s':>10} {'matmul s':>10} {'ratio':>6} {'torch s':>9}")
    for r in rows:
        mat = f"{r['matmul_s']:10.3f}" if "matmul_s" in r else f"{'':10}"
        ratio = f"{r['ratio']:6.2f}" if "ratio" in r else f"{'':6}"
        nat = f"{r['native_s']:9.4f}" if "native_s" in r else ""
        print(f"{r['case']:38} {r['emulate_s']:10.3f} {mat} {ratio} {nat}")


if __name__ == "__main__":
    main()
