"""``smtmma query``: prove or refute a property of one model (symmetry, carry bits, error bound, ...)."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from ..queries.distinguish import smt2_file_text
from ..queries.properties.common import approx_ratio
from ..queries.records import is_output_bits, json_scalar, query_report
from ..vectors import VectorFormats
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
from .common import EXIT_OK, EXIT_TIMEOUT, model_spec_arg
from .output import is_stdout, write_output
from .witness_format import hexdec, witness_lines

_PROPERTIES_HELP = """\
properties:
  symmetry            D(-A, B, -C) = -D(A, B, C) as values (holds for NVIDIA T-FDPA,
                      fails for CDNA3's round-down sums)
  monotonicity        with non-negative inputs, enlarging a, b or c never gives a
                      smaller D
  order-independence  permuting the products (the pairs a_k, b_k) never changes D
  carry-bits          the fewest carry bits N with which the model equals the
                      unbounded model ("carry_bits": N; the witness is an input on
                      which N - 1 bits fail); one FDPA (K <= L)
  error-bound         |D - exact| <= the Table 9 bound of MMA-Sim ("bound"); --tight
                      bisects for the smallest multiple of it that holds
  custom              --predicate FILE: a Python file defining
                      predicate(alg, inputs, outputs) -> Bool; the solver looks for
                      inputs on which it is false"""


_QUERY_EPILOG = f"""\
{_PROPERTIES_HELP}

The model is the catalogue's for --arch/--instr/--op; --model SPEC overrides it
(e.g. t-fdpa:F=26; parameters not given keep the catalogue's values).
output: holds (a proof on the stated domain), or fails with a witness (inputs,
the outputs involved, and a test-vector line), or unknown; the solver and time.

{DOMAIN_HELP}

{SOLVER_HELP}
--emit-smt2 FILE is written whole (a temporary file renamed onto FILE);
--emit-smt2 - writes it to standard output and the report to stderr.

--json prints one object:
  {{"property": NAME, "verdict": "holds"|"fails"|"unknown", "witness": {{"a", "b", "c"}} (when it
   fails), "outputs": {{...}}, "solver", "seconds", "reason", "model", "k", "domain", "vector", ...}}
  carry-bits adds "carry_bits": N; error-bound adds "bound", "symbols" (what e_max and
  ulp(FORMAT) in it stand for; printed as "where:") and "tight".

exit status: 0 holds or fails, 2 bad input, 3 the solver gave up.

examples:
  smtmma query carry-bits --arch volta --instr f16f32
  smtmma query symmetry --arch gfx942 --instr f16f32 --domain exp=-8:8
  smtmma query monotonicity --arch sm70 --instr f16f32 --json
  smtmma query error-bound --arch sm90 --instr f16f32 --tight --timeout 600
  smtmma query custom --arch sm80 --instr f16f32 --predicate my_predicate.py"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``query`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    pq = sub.add_parser("query", help="prove or refute a property of a model (symmetry, carry bits, ...)",
                        description="Ask a solver whether a property holds for the model of an architecture's "
                        "instruction: a proof on the domain, or a witness that it fails.",
                        epilog=_QUERY_EPILOG, formatter_class=fmt)
    pq.add_argument("property", metavar="PROPERTY",
                    help="symmetry, monotonicity, order-independence, carry-bits, error-bound or custom")
    pq.add_argument("--arch", required=True, help="architecture (sm80, sm90, volta, gfx942, ...)")
    pq.add_argument("--instr", help="instruction type (f16f32, bf16f32, e4m3f32, ...); may be left out when "
                    "--op names a full instruction whose types fix it")
    pq.add_argument("--op", help="op family or an instruction name; default: the catalogue's default")
    pq.add_argument("--model", type=model_spec_arg, metavar="SPEC", help="override the catalogue's model, e.g. t-fdpa:F=26")
    pq.add_argument("--tight", action="store_true", help="error-bound: bisect for the smallest multiple of the bound that holds")
    pq.add_argument("--predicate", metavar="FILE", help="custom: the file defining the predicate")
    add_solver_options(pq, "dot-product length (default: the property's, usually one FDPA: K = L)")
    pq.set_defaults(func=_cmd_query)


def _output_text(fm: VectorFormats, value: Any) -> str:
    return hexdec(fm.d, int(value)) if is_output_bits(fm, value) else str(value)


def _cmd_query(args: argparse.Namespace) -> int:
    return with_script_output(args, _query)


def _query(args: argparse.Namespace, script_out: TextIO) -> int:
    """The query, its --emit-smt2 file (``script_out`` for -) and its report."""
    label = solver_label(args.solver)
    with Progress(progress_message(label, args.timeout)):
        rep = query_report(args.property, args.arch, args.instr, op=args.op, model=args.model, k=args.k,
                           domain=args.domain, solver=args.solver, timeout=args.timeout, seed=args.seed,
                           tight=args.tight, predicate=args.predicate, certify=bool(args.emit_smt2))
    r, rec, fm, model = rep.result, rep.record, rep.formats, rep.models[0]
    prop, name, K = rec["property"], rec["name"], rec["k"]
    if args.emit_smt2 and getattr(r, "blocks", None):  # every check-sat the verdict rests on, each with its answer
        from ..proofs.certificate import Certificate

        meta = {"claim": f"query {prop} --arch {rec['arch']} --instr {rec['instr']}", "property": prop, "arch": rec["arch"],
                "instr": rec["instr"], "model": model.describe(), "k": K,
                "domain": rec["domain"], "verdict": r.verdict, "solver": r.solver}
        write_output(args.emit_smt2, Certificate(meta, list(r.blocks)).text(), "--emit-smt2", stdout=script_out)
    elif args.emit_smt2 and getattr(r, "smt2", ""):
        write_output(args.emit_smt2, smt2_file_text(r.smt2, [
            f"smtmma query {prop} --arch {rec['arch']} --instr {rec['instr']}" + (f" --model {args.model}" if args.model else ""),
            f"model: {model.describe()}; K={K}; domain: {rec['domain']}",
            f"answer: {r.verdict} ({r.solver}, {r.seconds:.2f} s)",
        ]), "--emit-smt2", stdout=script_out)
    if args.json:
        print(json.dumps(rec))
    else:
        # a proof whose scope differs from the domain asked states it ("scope:" below), not the domain asked
        where = f"{rec['arch']} {rec['instr']}, {model.describe()}, K={K}, " + (
            f"domain asked: {rec['domain']}" if "scope" in rec else rec["domain"])
        print(f"{prop} {r.verdict} for {name} ({where})")
        extra = dict(getattr(r, "extra", None) or {})
        for k, v in extra.items():
            if k == "symbols":  # printed once, as "where:", after the bound
                continue
            v = json_scalar(v)
            text = json.dumps(v) if isinstance(v, (dict, list)) else str(v)
            approx = approx_ratio(text) if k in ("ratio", "tight", "attained") else None
            if approx:  # an exact ratio of wide integers
                text += f" (about {approx})"
            print(f"  {k}: {text}")
        if extra.get("symbols"):
            print(f"  where: {extra['symbols']}")
        reason = getattr(r, "reason", "")
        if reason:
            print(f"reason: {reason}")
        w = getattr(r, "witness", None)
        if w is not None:
            if all(hasattr(w, f) for f in ("a", "b", "c")):
                for line in witness_lines(fm, w):
                    print(line)
            else:
                print(f"witness: {w}")
        outputs = dict(getattr(r, "outputs", None) or {})
        if outputs:
            print("outputs")
            width = max(len(str(k)) for k in outputs)
            for k, v in outputs.items():
                print(f"  {str(k).ljust(width)}  {_output_text(fm, v)}")
        print(f"solver: {r.solver}, {float(r.seconds):.2f} s")
        if args.emit_smt2 and (getattr(r, "smt2", "") or getattr(r, "blocks", None)):
            script = "standard output" if is_stdout(args.emit_smt2) else args.emit_smt2
            print(f"smt2: {script}" + (f" (certificate: {len(r.blocks)} blocks; smtmma prove --check re-runs it)"
                                       if getattr(r, "blocks", None) else ""))
        if rep.vector_line is not None:
            print("test vector (for 'smtmma check' or hardware):")
            print(rep.vector_line)
    if r.verdict == "unknown":
        unknown_note(getattr(r, "reason", ""))
        return EXIT_TIMEOUT
    return EXIT_OK
