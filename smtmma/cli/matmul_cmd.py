"""``smtmma matmul``: D = A x B + C of .npy matrices, as a GEMM with one MMA instruction computes it, bit for bit."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import Any

import numpy as np

from ..errors import InputError, SmtmmaError
from .common import EXIT_OK, load_npy
from .output import check_output, is_stdout, open_output
from .progress import Status

_EPILOG = """\
inputs: .npy files (numpy.save) of real values: float64/float32/float16, or
ml_dtypes types (bfloat16, float8_e4m3fn, ...).  Every value must be exactly
representable in the instruction's A/B/C format (an fp16 instruction refuses
0.1); --round rounds instead (rne: nearest even; rna: nearest, ties away,
as cuBLAS's FP32 -> TF32; rz: truncation; ru, rd: toward +-inf).  --bits:
the files hold bit patterns (unsigned integers) of those formats.  Batched
and broadcast shapes follow np.matmul: A (..., M, K), B (..., K, N), C
broadcast to D.

--scheme: what the library's kernel does around the instruction, as
NAME=VALUE fields or a preset (smtmma.scheme):
  promote_every=N    restart the chain from 0 every N values of K and add each
                     chain's result into an FP32 accumulator (DeepGEMM, CUTLASS FP8)
  split_k=S          cut K into S slices; each slice's result is rounded to
  partial=fp32|bf16|fp16   the partial format and the partials summed in it,
  reduction=sequential|pairwise
  c_in=epilogue,alpha=A,beta=B   D = alpha (A x B) + beta C in FP32 (CUTLASS's
                     LinearCombination) instead of C entering the first instruction
  round=rne|rna|rz|ru|rd   operand conversion (as --round)
  block_scale=ocp-mx|amax  block-scaled instructions: quantize real A and B per
                     block of K (OCP MX v1.0 §6.3 power-of-two scales, or
                     amax / largest element rounded: NVFP4's)
presets: deepgemm (promote_every=128, DeepSeek-V3 §3.3.2), cublas-tf32
(round=rna), blas (c_in=epilogue); a preset may be followed by fields.

the k-loop: each output chains the instruction over consecutive chunks of k
values of K (k: the instruction's, e.g. 16 for m16n8k16; --k to choose), the
accumulator carried in the output format from one instruction to the next,
the last chunk padded with zeros -- what a tensor-core GEMM kernel with that
one instruction computes.

output: D as .npy in D's format (float32 for f32 outputs, float16 for f16),
or its bit patterns with --bits, written whole (a temporary file renamed
onto OUT: concurrent runs never interleave, a failed one leaves OUT as it
was).  -o - writes the .npy to standard output (not a terminal), and the
summary to stderr.  A D larger than this machine's memory is refused before
any work.  A summary line (shape, instruction, k, time) goes to stdout;
--json prints it as an object.

examples:
  smtmma matmul --arch sm90 --instr f16f32 A.npy B.npy -o D.npy
  smtmma matmul --arch a100 --instr bf16f32 A.npy B.npy C.npy -o D.npy --jobs 2
  smtmma matmul --arch mi300x --instr f16f32 A.npy B.npy -o D.npy --round rne --json
  smtmma matmul --arch sm90 --instr e4m3f32 A.npy B.npy -o D.npy --scheme deepgemm
  smtmma matmul --arch sm80 --instr f16f32 A.npy B.npy -o D.npy --scheme split_k=4,partial=bf16
  smtmma matmul --arch sm90 --instr f16f32 A.npy B.npy -o - | python my_check.py"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``matmul`` subcommand to ``sub``."""
    p = sub.add_parser("matmul", help="D = A x B + C of .npy matrices, bit for bit as a GPU GEMM computes it",
                       description="Multiply .npy matrices as a tensor-core GEMM with one MMA instruction does, bit for bit.",
                       epilog=_EPILOG, formatter_class=fmt)
    p.add_argument("--arch", required=True, help="architecture (sm80, sm90, h100, gfx942, ...)")
    p.add_argument("--instr", help="instruction type (f16f32, bf16f32, e4m3f32, ...)")
    p.add_argument("--op", help="op family or instruction name (mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, wgmma, mfma, ...)")
    p.add_argument("--k", type=int, help="values of K per instruction (default: the instruction's largest k)")
    p.add_argument("A", help="A, an M x K .npy file")
    p.add_argument("B", help="B, a K x N .npy file")
    p.add_argument("C", nargs="?", help="C, an M x N .npy file (default: zeros)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="where to write D (.npy; - for standard output)")
    p.add_argument("--jobs", type=int, help="threads (default: every core)")
    p.add_argument("--bits", action="store_true", help="the files hold bit patterns, and D is written as bit patterns")
    p.add_argument("--round", choices=("rne", "rna", "rz", "ru", "rd"),
                   help="round inputs that are not representable (default: refuse them)")
    p.add_argument("--scheme", help="the kernel around the instruction: fields such as promote_every=128,split_k=2 or a "
                                    "preset (deepgemm, cublas-tf32, blas); see below")
    p.add_argument("--backend", choices=("auto", "native", "numpy"), default="auto",
                   help="compiled kernels (auto, native) or the NumPy reference (numpy); same bits")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="cuda: run the generated kernel on a GPU through CuPy (pip install 'smtmma[cuda]')")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.set_defaults(func=_cmd_matmul)


#: The library's advice for floats given as bit patterns, in this command's terms (pattern, replacement).
_CLI_SPELLINGS = (
    (r"(holds \S+ values, not \S+ bit patterns): pass .*$", r"\1: leave out --bits to read the values "
     "(or save the bit patterns as unsigned integers)"),
)


def cli_message(e: SmtmmaError) -> SmtmmaError:
    """``e`` with the library's Python advice (``pass A.view(np.uint16)``) in this command's terms (``leave out --bits``)."""
    text = str(e)
    for pattern, repl in _CLI_SPELLINGS:
        text = re.sub(pattern, repl, text)
    return e if text == str(e) else type(e)(text)


def _cmd_matmul(args: argparse.Namespace) -> int:
    from ..gemm import instruction_k, matmul
    from ..catalogue import lookup
    from ..scheme import Scheme, parse_scheme

    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {args.jobs}")
    check_output(args.output, "-o", "the file D is written to (D.npy)", binary=True)
    to_stdout = is_stdout(args.output)
    if to_stdout and args.json:
        raise InputError("--json prints the summary on standard output, where -o - writes D: give -o FILE")
    entry = lookup(args.arch, args.instr, args.op)
    A, B = load_npy(args.A, "A"), load_npy(args.B, "B")
    C = load_npy(args.C, "C") if args.C else None
    k = args.k if args.k is not None else instruction_k(args.arch, args.instr, args.op)
    scheme = parse_scheme(args.scheme) if args.scheme is not None else Scheme()
    t0 = time.perf_counter()
    with Status() as status:
        try:
            D = matmul(args.arch, args.instr, A, B, C, op=args.op, k=k, jobs=args.jobs, bits=args.bits, round=args.round,
                       scheme=scheme, backend=args.backend, device=args.device,
                       progress=lambda done, total: status.bar(done, total, " rows of D"))
        except SmtmmaError as e:  # how to pass bit patterns is the library's (a NumPy view); say it as options
            raise cli_message(e) from None
    seconds = time.perf_counter() - t0
    with open_output(args.output, "-o", binary=True) as fh:  # the name as given: np.save(path) would append .npy to D.txt
        np.save(fh, D)
    M = int(A.shape[-2]) if A.ndim > 1 else 1
    N = int(B.shape[-1]) if B.ndim > 1 else 1
    record = {"arch": entry.arch, "instr": entry.instr, "op": entry.op, "model": entry.model.describe(), "M": M, "N": N,
              "K": int(A.shape[-1]), "shape": list(D.shape), "k": k, "scheme": scheme.spec(), "output": args.output,
              "dtype": str(D.dtype), "seconds": round(seconds, 3)}
    if args.json:
        print(json.dumps(record))
    else:
        shown = "x".join(map(str, D.shape)) or "scalar"
        print(f"D ({shown}, {D.dtype}) = A x B{' + C' if C is not None else ''} on {entry.arch} {entry.instr} "
              f"({entry.op}, {entry.model.describe()}), k = {k} per instruction"
              + (f", scheme {scheme.spec()}" if not scheme == Scheme() else "") + ": "
              f"{'standard output' if to_stdout else args.output} ({seconds:.2f} s)",
              file=sys.stderr if to_stdout else sys.stdout)
    return EXIT_OK
