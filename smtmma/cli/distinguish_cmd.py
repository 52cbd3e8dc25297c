"""``smtmma distinguish``: inputs on which two or more models give different bits, or a proof that none exist."""

from __future__ import annotations

import argparse
import json
from typing import Any, Optional, TextIO

from ..models import Model
from ..queries.distinguish import DistinguishResult, smt2_file_text
from ..queries.records import distinguish_report
from ..vectors import VectorFormats
from .common import EXIT_OK, EXIT_TIMEOUT
from .solver_options import (
    DOMAIN_HELP,
    SOLVER_HELP,
    Progress,
    add_solver_options,
    progress_message,
    solver_label,
    unknown_note,
    with_script_output,
)
from .output import is_stdout, write_output
from .witness_format import hexdec, witness_lines

_DIST_EPILOG = f"""\
models: each X, Y, ... is an architecture (sm80, a100, hopper, gfx942, ...; its
catalogue model for --instr and --op) or a model spec KIND:PARAM=V,... (it has a
':'; e.g. t-fdpa:F=26, tfdpa:L=8,F=24,rho=rz-fp32, e-fdpa:L=16).  A spec takes
its operand formats, and the parameters it does not name, from the model of
the first architecture given, or of --like ARCH when every model is a spec.
Kinds: ftz-addmul, fma, e-fdpa, t-fdpa, st-fdpa, gst-fdpa, tr-fdpa, gtr-fdpa
(see 'smtmma list' for the catalogue's parameters).

output: the verdict; for sat the witness (a, b per lane in hex and decimal,
lanes with a zero product are counted, not shown), each model's D, how they
differ (ulps, NaN vs number, +0 vs -0) and where: the first step of the op
whose exact value differs (an input as read, the alignment exponent, the fused
sum before rounding, an FDPA's result), or each model's stages when they split
the K products differently; the solver and time, and the witness as
a test-vector line (arch/instr of the first architecture, "expect": each
model's D, "d": the first architecture's D) for 'smtmma check' or hardware.
unsat: equivalent on the stated domain (K inputs).  With three or more
models, the groups of equivalent models when not all can differ.
--k: the dot-product length; default the largest L of the models (one FDPA).

{DOMAIN_HELP}

{SOLVER_HELP}
--confirm: re-check an unsat answer with a second installed backend.
--emit-smt2 FILE: write the SMT-LIB2 script that was checked (with check-sat),
so any solver can re-check it; written whole (a temporary file renamed onto
FILE).  --emit-smt2 - writes it to standard output and the report to stderr.

--json prints one object:
  {{"verdict": "sat"|"unsat"|"unknown", "models": [NAME, ...], "witness": {{"a": [HEX, ...],
   "b": [HEX, ...], "c": HEX}}, "outputs": {{NAME: HEX, ...}}, "solver", "seconds", "reason",
   "instr", "k", "domain", "specs", "differences", "vector", "classes", "confirmed_by"}}
  (witness, outputs, differences, vector only when sat; hex in each operand's format)
  differences: [{{"models": [X, Y], "ulps", "text", "step": LABEL|null, "step_values": [X's, Y's],
   "stages": [[{{"stage", "result"}}, ...], [...]] (when the models run different stages)}}]

exit status: 0 sat or unsat, 2 bad input (unknown model or parameter, an
instruction the architectures do not share, bad or empty domain, no backend),
3 the solver gave up (timeout; the reason is printed).

examples:
  smtmma distinguish sm80 sm90 --instr f16f32
  smtmma distinguish sm80 t-fdpa:F=25 --instr f16f32 --domain exp=-8:8
  smtmma distinguish sm80 sm86 --instr f16f32 --confirm          (unsat: equivalent)
  smtmma distinguish t-fdpa:F=24 t-fdpa:F=25 --like sm80 --instr f16f32 --domain lanes=4
  smtmma distinguish sm70 sm75 sm80 sm90 --instr f16f32 --solver portfolio --timeout 600
  smtmma distinguish sm80 sm90 --instr f16f32 --json --emit-smt2 sm80-sm90.smt2
  smtmma distinguish sm80 sm90 --instr f16f32 --json | jq -c .vector > v.jsonl && smtmma check v.jsonl"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``distinguish`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    pd = sub.add_parser("distinguish", help="find inputs on which two or more models give different bits",
                        description="Ask a solver for inputs on which the models (architectures or model specs) "
                        "give different D bits, or prove them equivalent on a domain.",
                        epilog=_DIST_EPILOG, formatter_class=fmt)
    pd.add_argument("models", nargs="+", metavar="MODEL",
                    help="two or more architectures (sm80, h100, ...) or model specs (t-fdpa:F=26, ...)")
    pd.add_argument("--instr", required=True, help="instruction type (f16f32, bf16f32, e4m3f32, ...)")
    pd.add_argument("--op", help="op family (mma, wgmma, tcgen05, mfma, mfma_1k) or an instruction name; "
                    "default: the catalogue's default")
    pd.add_argument("--like", metavar="ARCH", help="architecture whose operand formats and parameters model specs take "
                    "(default: the first architecture among the models)")
    pd.add_argument("--confirm", action="store_true", help="re-check an unsat answer with a second installed backend")
    add_solver_options(pd, "dot-product length (default: the largest L of the models: one FDPA)")
    pd.set_defaults(func=_cmd_distinguish)


def _cmd_distinguish(args: argparse.Namespace) -> int:
    return with_script_output(args, _distinguish)


def _distinguish(args: argparse.Namespace, script_out: TextIO) -> int:
    """The query, its --emit-smt2 file (``script_out`` for -) and its report."""
    label = solver_label(args.solver)
    with Progress(progress_message(label, args.timeout)):
        rep = distinguish_report(args.models, instr=args.instr, op=args.op, like=args.like, k=args.k, domain=args.domain,
                                 solver=args.solver, timeout=args.timeout, seed=args.seed, confirm=args.confirm)
    r, tokens = rep.result, rep.names
    if args.emit_smt2:
        write_output(args.emit_smt2, smt2_file_text(r.smt2, [
            f"smtmma distinguish {' '.join(tokens)} --instr {rep.instr}" + (f" --op {args.op}" if args.op else ""),
            *(f"  {n}: {m.describe()}" for n, m in zip(tokens, rep.models)),
            f"K={r.K}; domain: {r.domain.describe()}",
            "sat: inputs a0.., b0.., c on which the outputs out0.. differ pairwise; unsat: no such input",
            f"answer: {r.verdict} ({r.solver}, {r.seconds:.2f} s)",
        ]), "--emit-smt2", stdout=script_out)
    if args.json:
        print(json.dumps(rep.record))
    else:
        _print_distinguish(r, tokens, rep.models, rep.instr, rep.formats, rep.record.get("differences", []),
                           rep.vector_line, args)
    if r.verdict == "unknown":
        unknown_note(r.reason)
        return EXIT_TIMEOUT
    return EXIT_OK


def _print_distinguish(r: DistinguishResult, tokens: list[str], models: list[Model], instr: str, fm: VectorFormats,
                       differences: list[dict[str, Any]], vector_line: Optional[str], args: argparse.Namespace) -> None:
    where = f"{instr}, K={r.K}, {r.domain.describe()}"
    both = " and ".join(tokens) if len(tokens) == 2 else ", ".join(tokens)
    if r.verdict == "sat":
        all_differ = len(set(r.outputs.values())) == len(tokens)
        head = f"sat: {both} differ" if all_differ else f"sat: inputs that split {both} into groups"
    elif r.verdict == "unsat":
        head = (f"unsat: {both} are equivalent on this domain" if len(tokens) == 2
                else f"unsat: no input gives {both} pairwise different outputs")
    else:
        head = f"unknown: no answer for {both}"
    print(f"{head} ({where})" + (f": {r.reason or 'the solver gave up'}" if r.verdict == "unknown" else ""))
    width = max(len(t) for t in tokens)
    for t, m in zip(tokens, models):
        print(f"  {t.ljust(width)}  {m.describe()}")
    if r.classes:
        print("equivalence classes on this domain: " + " | ".join(" = ".join(c) for c in r.classes))
    if r.verdict == "sat" and r.witness is not None:
        for line in witness_lines(fm, r.witness):
            print(line)
        print("outputs (d)")
        for t in tokens:
            print(f"  {t.ljust(width)}  {hexdec(fm.d, r.outputs[t])}")
        if differences:
            print("difference")
            for dif in differences:
                x, y = dif["models"]
                print(f"  {x} vs {y}: {dif['text']}")
                if dif.get("stages"):
                    print("    the models run different stages (stage: the value it ends on)")
                    for name, stages in zip((x, y), dif["stages"]):
                        print(f"      {name}: " + "; ".join(f"{st['stage']}: {st['result']}" for st in stages))
                if dif.get("step"):
                    vx, vy = dif["step_values"]
                    print(f"    first differing step: {dif['step']}: {x} = {vx}, {y} = {vy}")
    if r.classes and "gave up" in r.reason:
        print(r.reason.rsplit("; ", 1)[-1])  # some pairwise comparisons gave up: the groups may merge
    solved = f"solver: {r.solver}, {r.seconds:.2f} s"
    if args.confirm and r.verdict != "unknown":
        solved += f"; {'confirmed by ' + r.confirmation if r.confirmed_by else r.confirmation}"
    print(solved)
    if args.emit_smt2:
        print(f"smt2: {'standard output' if is_stdout(args.emit_smt2) else args.emit_smt2}")
    if vector_line is not None:
        print("test vector (for 'smtmma check' or hardware; \"expect\" holds each model's d):")
        print(vector_line)
