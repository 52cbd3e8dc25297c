"""Compile time of one kernel under each documented compiler setting ($SMTMMA_CC_OPT, $SMTMMA_CC_MARCH).

Run: python benchmarks/build_times.py [--cases sm90:f16f32:16,gfx908:f16f32:16] [--repeat 3] [--json]

One row per (kernel, setting): the wall time of the system C compiler
building that kernel's shared object into an empty cache (timed inside a
fresh process around the build alone: code generation excluded), the object's size,
and whether the setting is what a user gets by default.  The cases: sm90
f16f32 K=16 (a 16-lane vector kernel), gfx908 f16f32 K=16 (FP32 FMA chain:
multi-limb terms, the scalar loops only) and sm100 mxe4m3f32 K=32 (block
scales).  Lanes: dot products per vector step, as many as fill one vector
register of the target (16 with AVX-512, 8 with AVX2, 4 with SSE2/NEON).  Kernels are built once per machine; this is the price
of that first use.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

from smtmma.native import build

CASES = "sm90:f16f32:16,gfx908:f16f32:16,sm100:mxe4m3f32:32"

#: (label, SMTMMA_CC_OPT, SMTMMA_CC_MARCH); None: unset (the default)
SETTINGS = [
    ("default", None, None),
    ("-O0", "-O0", None),
    ("-O1", "-O1", None),
    ("-O2", "-O2", None),
    ("-O3", "-O3", None),
    ("-Os", "-Os", None),
    ("march none", None, "none"),
    ("march none -O3", "-O3", "none"),
    ("march x86-64-v3", None, "x86-64-v3"),
]


_ONE_BUILD = """
import os, sys, time
from smtmma.catalogue import lookup
from smtmma.native import build
from smtmma.native.kernels import source_of
src = source_of(lookup(sys.argv[1], sys.argv[2]).model, int(sys.argv[3]))
t0 = time.perf_counter()
build.load(src.text)
dt = time.perf_counter() - t0
size = sum(os.path.getsize(os.path.join(sys.argv[4], f)) for f in os.listdir(sys.argv[4]) if f.endswith(".so"))
print(dt, size, build.flags(src.text)[0], src.lanes)
"""


def build_seconds(arch: str, instr: str, k: int, opt: "str | None", march: "str | None") -> tuple[float, int, str, int]:
    """(seconds, object bytes, optimization flag used, lanes) of one build into a fresh cache, in a fresh process
    (so nothing is reused from an earlier build)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SMTMMA_CC_OPT", "SMTMMA_CC_MARCH", "SMTMMA_CACHE")}
    env.update({k: v for k, v in (("SMTMMA_CC_OPT", opt), ("SMTMMA_CC_MARCH", march)) if v is not None})
    with tempfile.TemporaryDirectory(prefix="smtmma-bench-") as cache:
        env["SMTMMA_CACHE"] = cache
        out = subprocess.run([sys.executable, "-c", _ONE_BUILD, arch, instr, str(k), cache], env=env,
                             capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1]), out[2], int(out[3])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=CASES, help=f"comma-separated arch:instr:K (default {CASES})")
    ap.add_argument("--repeat", type=int, default=1, help="builds per row, the fastest reported (default 1; a busy "
                    "machine adds seconds)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    rows = []
    for case in args.cases.split(","):
        arch, instr, k = case.split(":")
        for label, opt, march in SETTINGS:
            if march and march.startswith("x86-64") and platform.machine() not in ("x86_64", "AMD64"):
                continue
            runs = [build_seconds(arch, instr, int(k), opt, march) for _ in range(max(1, args.repeat))]
            dt, size, used, lanes = min(runs)
            rows.append({"arch": arch, "instr": instr, "K": int(k), "lanes": lanes, "setting": label, "opt": used,
                         "march": march or build.DEFAULT_MARCH, "seconds": round(dt, 2), "kib": size // 1024})
            if not args.json:
                r = rows[-1]
                print(f"{arch:6} {instr:10} K={k:<3} lanes={lanes:<2} {label:20} {used:4} march={r['march']:7} "
                      f"{dt:7.2f} s {r['kib']:6} KiB", flush=True)
    if args.json:
        print(json.dumps({"cc": build.compiler(), "machine": platform.machine(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
