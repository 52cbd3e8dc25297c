"""Array conversion throughput: smtmma.arrays on an N x N float64 array (default 4096 x 4096, 16.8M values).

Run: python benchmarks/arrays.py [--n 4096] [--json]
Prints one row per format: seconds for to_patterns exact (values already in the
format), to_patterns round='rne' (standard-normal values) and from_patterns;
best of three runs each, single process.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from smtmma.arrays import from_patterns, to_patterns

FORMATS = ["fp64", "fp32", "tf32", "bf16", "fp16", "e4m3", "e5m2", "e2m1", "ue8m0"]


def best(run: Callable[..., object], *args: Any, **kw: Any) -> float:
    """Fastest of three calls ``run(*args, **kw)``, in seconds."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        run(*args, **kw)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    x = np.random.default_rng(0).standard_normal((args.n, args.n))
    rows = []
    for name in FORMATS:
        src = np.abs(x) if name == "ue8m0" else x
        bits = to_patterns(src, name, round="rne")
        exact = from_patterns(bits, name).astype(np.float64)
        rows.append({
            "format": name,
            "exact_s": best(to_patterns, exact, name),
            "rne_s": best(to_patterns, src, name, round="rne"),
            "from_patterns_s": best(from_patterns, bits, name),
        })
    if args.json:
        print(json.dumps({"n": args.n, "rows": rows}))
        return
    print(f"{args.n} x {args.n} values")
    print(f"{'format':8} {'exact s':>8} {'rne s':>8} {'from s':>8}")
    for r in rows:
        print(f"{r['format']:8} {r['exact_s']:8.3f} {r['rne_s']:8.3f} {r['from_patterns_s']:8.3f}")


if __name__ == "__main__":
    main()
