"""``smtmma hw``: the hardware kernels (sources and manifest) the cuda and hip devices compile."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from ..hw.kernels import all_kernels, write_kernels
from .common import EXIT_OK, _path
from .output import check_output

_HW_EPILOG = """\
'smtmma hw kernels --out DIR' writes one source file per kernel (CUDA C++ with
inline PTX for NVIDIA: mma.sync, wgmma, tcgen05.mma; HIP C++ with MFMA builtins
for AMD) and DIR/manifest.json:
  [{"file", "arch", "instr", "op", "shape": {"name", "m", "n", "k"},
    "nvcc_arch" (NVIDIA) | "offload_arch" (AMD)}, ...]
Compile one by hand with e.g.  nvcc -cubin -arch=sm_90a DIR/FILE.cu
(the cuda device compiles them at run time with NVRTC through CuPy).

examples:
  smtmma hw kernels --out kernels/
  smtmma hw kernels --out kernels/ --vendor nvidia --json"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``hw`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    p = sub.add_parser("hw", help="hardware kernels: write their sources and manifest",
                       description="The kernels the cuda and hip devices run.", epilog=_HW_EPILOG, formatter_class=fmt)
    hs = p.add_subparsers(dest="hw_command", metavar="SUBCOMMAND", parser_class=type(p))
    k = hs.add_parser("kernels", help="write every kernel's source and manifest.json", epilog=_HW_EPILOG, formatter_class=fmt)
    k.add_argument("--out", type=_path, required=True, metavar="DIR",
                   help="folder for the sources and manifest.json (created; not -: many files need a folder)")
    k.add_argument("--vendor", choices=["nvidia", "amd"], help="only one vendor's kernels")
    k.add_argument("--json", action="store_true", help="print the manifest as JSON")
    k.set_defaults(func=_cmd_kernels)
    p.set_defaults(func=lambda args: p.error("a subcommand is required: kernels"))


def _cmd_kernels(args: argparse.Namespace) -> int:
    check_output(args.out, "--out", "a folder for the kernel sources (kernels/)", stdout=False, folder=True)
    kernels = all_kernels(args.vendor)
    manifest = write_kernels(args.out, kernels)
    if args.json:
        print(json.dumps([k.manifest_entry() for k in kernels]))
    else:
        per = Counter(k.toolchain_arch for k in kernels)
        print(f"{len(kernels)} kernels written to {args.out} ({', '.join(f'{a}: {n}' for a, n in sorted(per.items()))}); "
              f"manifest: {manifest}")
    return EXIT_OK
