"""``smtmma query``: prove or refute a property of one model (symmetry, carry bits, error bound, ...)."""

from __future__ import annotations

import argparse
import json
import os
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from ..catalogue import lookup, model_of
from ..errors import InputError, SmtmmaError, UnknownNameError, unknown_name
from ..formats import format_hex
from ..models import parse_model_spec
from ..queries.distinguish import EmptyDomainError, replay
from ..queries.formula import parse_domain
from ..vectors import VectorFormats, dump_vector, vector_formats
from .common import EXIT_OK, EXIT_TIMEOUT
from .solver_options import (
    _DOMAIN_HELP,
    _SOLVER_HELP,
    _add_solver_options,
    _check_fixed,
    _Progress,
    _progress_message,
    _solver_label,
    _unknown_note,
    _write_smt2,
)
from .witness_format import _hexdec, _witness_json, _witness_lines

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

{_DOMAIN_HELP}

{_SOLVER_HELP}

--json prints one object:
  {{"property": NAME, "verdict": "holds"|"fails"|"unknown", "witness": {{"a", "b", "c"}} (when it
   fails), "outputs": {{...}}, "solver", "seconds", "reason", "model", "k", "domain", "vector", ...}}
  carry-bits adds "carry_bits": N; error-bound adds "bound" (and "tight").

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
    pq.add_argument("--model", metavar="SPEC", help="override the catalogue's model, e.g. t-fdpa:F=26")
    pq.add_argument("--tight", action="store_true", help="error-bound: bisect for the smallest multiple of the bound that holds")
    pq.add_argument("--predicate", metavar="FILE", help="custom: the file defining the predicate")
    _add_solver_options(pq, "dot-product length (default: the property's, usually one FDPA: K = L)")
    pq.set_defaults(func=_cmd_query)


def _json_scalar(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_json_scalar(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_scalar(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def _output_hex(fm: VectorFormats, value: Any) -> Any:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= int(value) < (1 << fm.d.bits):
        return format_hex(fm.d, int(value))
    return _json_scalar(value)


def _output_text(fm: VectorFormats, value: Any) -> str:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= int(value) < (1 << fm.d.bits):
        return _hexdec(fm.d, int(value))
    return str(value)


def _load_properties() -> Any:
    try:
        from ..queries import properties
    except ModuleNotFoundError as e:
        if e.name and e.name.endswith("properties"):
            raise InputError("query is not available in this installation (smtmma.queries.properties is missing)") from None
        raise
    return properties


def _cmd_query(args: argparse.Namespace) -> int:
    properties = _load_properties()
    names = list(properties.PROPERTIES)
    prop = args.property.strip().lower().replace("_", "-")
    if prop not in names:
        raise UnknownNameError(unknown_name("property", args.property, names))
    domain = parse_domain(args.domain)
    options: dict[str, Any] = {}
    if args.tight:
        if prop != "error-bound":
            raise InputError(f"--tight applies to error-bound only, not {prop}")
        options["tight"] = True
    if args.predicate is not None:
        if prop != "custom":
            raise InputError(f"--predicate applies to custom only, not {prop}")
        if not os.path.isfile(args.predicate):
            raise InputError(f"--predicate {args.predicate}: no such file")
        options["predicate"] = args.predicate
    elif prop == "custom":
        raise InputError("custom needs --predicate FILE (the file that defines the predicate)")
    entry = lookup(args.arch, args.instr, args.op)
    model = model_of(entry.arch, entry.instr, args.op)
    _check_fixed(domain, vector_formats(entry))
    name = args.arch
    if args.model:
        try:
            model = parse_model_spec(args.model, like=model)
        except SmtmmaError as e:
            raise type(e)(f"--model {args.model!r}: {e}") from None
        name = args.model
    label = _solver_label(args.solver)
    with _Progress(_progress_message(label, args.timeout)):
        try:  # the properties check the domain alone before they report "holds"
            r = properties.check_property(prop, model, name=name, K=args.k, domain=domain, solver=args.solver,
                                          timeout=args.timeout, seed=args.seed, **options)
        except EmptyDomainError as e:
            text = str(e)
            raise EmptyDomainError(text if "empty domain" in text else f"empty domain: {text}") from None
    K = getattr(r, "K", None) or args.k
    fm = vector_formats(entry)
    w = getattr(r, "witness", None)
    has_lanes = w is not None and all(hasattr(w, f) for f in ("a", "b", "c"))
    outputs = dict(getattr(r, "outputs", None) or {})
    extra = dict(getattr(r, "extra", None) or {})
    vector_line: Optional[str] = None
    if has_lanes:  # a failing input, or the boundary case a "holds" reports (carry-bits: N - 1 bits fail)
        try:
            d = replay([model], w)[0]
            vector_line = dump_vector(entry.arch, entry.instr, w.a, w.b, w.c, None if args.model else d, op=args.op,
                                      scale_a=getattr(w, "scale_a", None), scale_b=getattr(w, "scale_b", None),
                                      expect={name: d})
        except SmtmmaError:
            vector_line = None
    if args.emit_smt2 and getattr(r, "smt2", ""):
        _write_smt2(args.emit_smt2, r.smt2, [
            f"smtmma query {prop} --arch {entry.arch} --instr {entry.instr}" + (f" --model {args.model}" if args.model else ""),
            f"model: {model.describe()}; K={K}; domain: {domain.describe()}",
            f"answer: {r.verdict} ({r.solver}, {r.seconds:.2f} s)",
        ])
    if args.json:
        rec: dict[str, Any] = {"property": prop, "verdict": r.verdict}
        if w is not None:
            rec["witness"] = _witness_json(fm, w) if has_lanes else _json_scalar(w)
        rec["outputs"] = {str(k): _output_hex(fm, v) for k, v in outputs.items()}
        rec.update(solver=r.solver, seconds=round(float(r.seconds), 3), reason=getattr(r, "reason", "") or "")
        rec.update(arch=entry.arch, instr=entry.instr, name=name, model=model.describe(), k=K, domain=domain.describe())
        for k, v in extra.items():
            rec.setdefault(str(k), _json_scalar(v))
        if vector_line is not None:
            rec["vector"] = json.loads(vector_line)
        print(json.dumps(rec))
    else:
        where = f"{entry.arch} {entry.instr}, {model.describe()}, K={K}, {domain.describe()}"
        verdict = {"holds": "holds", "fails": "fails", "unknown": "unknown"}.get(r.verdict, r.verdict)
        print(f"{prop} {verdict} for {name} ({where})")
        for k, v in extra.items():
            v = _json_scalar(v)
            print(f"  {k}: {json.dumps(v) if isinstance(v, (dict, list)) else v}")
        reason = getattr(r, "reason", "")
        if reason:
            print(f"reason: {reason}")
        if w is not None:
            if has_lanes:
                for line in _witness_lines(fm, w):
                    print(line)
            else:
                print(f"witness: {w}")
        if outputs:
            print("outputs")
            width = max(len(str(k)) for k in outputs)
            for k, v in outputs.items():
                print(f"  {str(k).ljust(width)}  {_output_text(fm, v)}")
        print(f"solver: {r.solver}, {float(r.seconds):.2f} s")
        if args.emit_smt2 and getattr(r, "smt2", ""):
            print(f"smt2: {args.emit_smt2}")
        if vector_line is not None:
            print("test vector (for 'smtmma check' or hardware):")
            print(vector_line)
    if r.verdict == "unknown":
        _unknown_note(getattr(r, "reason", ""))
        return EXIT_TIMEOUT
    return EXIT_OK
