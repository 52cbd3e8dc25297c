"""``smtmma hw``: the hardware kernels (sources and manifest) the cuda and hip devices compile."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from ..hw.kernels import all_kernels, write_kernels
from ..hw.survey import DEFAULT_RANDOM
from . import properties_cmd
from .common import EXIT_OK, draws_arg, path_arg, seed_arg
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


_SURVEY_EPILOG = """\
For every instruction of the device's architecture (each op family and shape
of the catalogue: sm90 has 52, mma.sync and wgmma) the survey runs the shipped
suite of its type (suites/INSTR.jsonl, or vectors chosen on the fly), the open
questions of suites/open-questions.jsonl and --random vectors, records the
device's bits and checks them:
  matched           lines whose D the catalogue's model of that instruction gives
  model identified  catalogue models (any architecture, run on that shape) that
                    give every line's D; models equal on every line are one group
  open questions    the hypothesis each open question's vectors pick
  surprises         what disagrees with the catalogue, per input kind
An instruction whose kernel fails to build or launch, or whose replicated
cells disagree, gets its error and the survey goes on; Ctrl-C keeps what is
done.  Nothing on this path needs a solver: NumPy, ml_dtypes and CuPy (or HIP).
DIR gets one JSONL per instruction (test-vector lines with d and gpu: attach
them to a bug report, or 'smtmma check' them), summary.md and summary.json:
  {"gpu": {...}, "instructions": [{"arch", "instr", "op", "lines", "matched",
   "identified": [MODEL, ...], "open_questions": {...}, "error": null | TEXT}]}
Exit status: 0 every instruction ran and matched its catalogue model, 1 some
line differs or an instruction failed, 2 nothing could be surveyed.

examples:
  smtmma hw survey --device cuda -o h100-survey/
  smtmma hw survey --device sim:sm90 --random 200      rehearse on the simulator
  smtmma hw survey --device hip --instr f16f32 -o mi300x/"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``hw`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    p = sub.add_parser("hw", help="hardware: kernel sources, the survey of a GPU, the property table put to it",
                       description="The kernels the cuda and hip devices run, the survey of a device's every "
                       "instruction (smtmma hw survey --help) and the property table put to it (smtmma hw properties --help).", epilog=_HW_EPILOG, formatter_class=fmt)
    hs = p.add_subparsers(dest="hw_command", metavar="SUBCOMMAND", parser_class=type(p))
    k = hs.add_parser("kernels", help="write every kernel's source and manifest.json", epilog=_HW_EPILOG, formatter_class=fmt)
    k.add_argument("--out", type=path_arg, required=True, metavar="DIR",
                   help="folder for the sources and manifest.json (created; not -: many files need a folder)")
    k.add_argument("--vendor", choices=["nvidia", "amd"], help="only one vendor's kernels")
    k.add_argument("--json", action="store_true", help="print the manifest as JSON")
    k.set_defaults(func=_cmd_kernels)
    v = hs.add_parser("survey", help="run every instruction of a GPU on suites, open questions and random vectors",
                      description="First contact with a unit: record what every instruction of the device computes, "
                      "check it against the catalogue and name the models that explain it.",
                      epilog=_SURVEY_EPILOG, formatter_class=fmt)
    v.add_argument("--device", required=True, metavar="DEVICE",
                   help="cuda[:N], hip[:N], or sim:ARCH to rehearse the survey on the simulator")
    v.add_argument("-o", "--output", type=path_arg, metavar="DIR",
                   help="folder for one JSONL per instruction, summary.md and summary.json (created)")
    v.add_argument("--instr", action="append", metavar="INSTR",
                   help="only this instruction type (repeatable; default: every one the architecture has)")
    v.add_argument("--random", type=draws_arg, default=DEFAULT_RANDOM, metavar="N",
                   help=f"random vectors per instruction, of the §3.1.4 kinds (default {DEFAULT_RANDOM})")
    v.add_argument("--seed", type=seed_arg, default=0, help="seed of the random vectors (default 0)")
    v.add_argument("--json", action="store_true", help="print summary.json's object instead of the table")
    v.set_defaults(func=_cmd_survey)
    q = hs.add_parser("properties", help="put the property table's cells to a device: symmetry, monotonicity, "
                      "error bounds and witnesses", description="Does the hardware keep what the model's property "
                      "cells prove, and break what they refute?", epilog=properties_cmd.EPILOG, formatter_class=fmt)
    properties_cmd.add_arguments(q, path_arg, draws_arg, seed_arg)
    q.set_defaults(func=properties_cmd.run_properties)
    p.set_defaults(func=lambda args: p.error("a subcommand is required: kernels, survey, properties"))


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


def _cmd_survey(args: argparse.Namespace) -> int:
    from .survey_cmd import run_survey

    return run_survey(args)
