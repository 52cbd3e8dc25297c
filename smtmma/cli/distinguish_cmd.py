"""``smtmma distinguish``: inputs on which two or more models give different bits, or a proof that none exist."""

from __future__ import annotations

import argparse
import itertools
import json
from typing import Any, Optional

from ..catalogue import lookup
from ..errors import InputError
from ..formats import Format, format_hex, get_format
from ..models import Model
from ..queries.distinguish import DistinguishResult, distinguish, ulp_distance
from ..queries.formula import parse_domain
from ..simulate import output_format
from ..trace import Trace, divergence, trace_dot
from ..vectors import VectorFormats, dump_vector, vector_formats
from .common import EXIT_OK, EXIT_TIMEOUT
from .model_resolution import _is_spec_token, _resolve_models
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
from .witness_format import _hexdec, _value_text, _witness_json, _witness_lines

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

{_DOMAIN_HELP}

{_SOLVER_HELP}
--confirm: re-check an unsat answer with a second installed backend.
--emit-smt2 FILE: write the SMT-LIB2 script that was checked (with check-sat),
so any solver can re-check it.

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
    _add_solver_options(pd, "dot-product length (default: the largest L of the models: one FDPA)")
    pd.set_defaults(func=_cmd_distinguish)


def _difference(fmt_name: str, fmt: Format, x: int, y: int) -> tuple[Optional[int], str]:
    """(ulps or None, words) for two different D patterns."""
    nx, ny = fmt.is_nan_bits(x), fmt.is_nan_bits(y)
    if nx and ny:
        return None, "NaN vs NaN (different NaN patterns)"
    if nx or ny:
        return None, "NaN vs number"
    if x & ~fmt.sign_mask == 0 and y & ~fmt.sign_mask == 0:
        return 0, f"{'-0' if x else '+0'} vs {'-0' if y else '+0'}"
    try:
        ulps = ulp_distance(fmt_name, x, y)
    except InputError:  # not both patterns of the inner format (E8M13 in FP32): count container ulps
        fmt_name = fmt.name
        ulps = ulp_distance(fmt_name, x, y)
    assert ulps is not None
    words = f"{ulps} ulp{'s' if ulps != 1 else ''} ({fmt_name})"
    if fmt.is_inf_bits(x) or fmt.is_inf_bits(y):
        words += ", infinity vs " + ("infinity" if fmt.is_inf_bits(x) and fmt.is_inf_bits(y) else "finite")
    elif (x ^ y) & fmt.sign_mask:
        words += ", opposite signs"
    return ulps, words


def _diverging_step(x: Trace, y: Trace) -> dict[str, Any]:
    """Where two models' traces on the witness first differ (:func:`smtmma.trace.divergence`).

    Returns ``step`` (the stage and step, or None when no step both record
    differs), ``step_values`` (exact values as text) and, when the models
    run different stages, ``stages`` (each model's stages with the value each ends on).
    """
    div = divergence(x, y)
    out: dict[str, Any] = {"step": div.label}
    if div.label is not None:
        out["step_values"] = [_value_text(v) for v in div.values]
    if div.structure is not None:
        out["stages"] = [[{"stage": name, "result": _value_text(v)} for name, v in model_stages] for model_stages in div.structure]
    return out


def _ulp_format(model: Model) -> str:
    """The format whose ulps measure the model's outputs: the rounding format when D carries it (E8M13 in FP32)."""
    if model.rho and not model.c_after:
        inner = get_format(model.conversion.fmt)
        if inner.container == model.d_fmt:
            return inner.name
    return output_format(model).name


def _cmd_distinguish(args: argparse.Namespace) -> int:
    tokens: list[str] = args.models
    if len(tokens) < 2:
        raise InputError("distinguish needs at least two models (architectures or model specs)")
    dupes = [t for i, t in enumerate(tokens) if t in tokens[:i]]
    if dupes:
        raise InputError(f"model {dupes[0]!r} is given twice; name each model once")
    domain = parse_domain(args.domain)
    instr, models, first_arch, vec_arch = _resolve_models(tokens, args.instr, args.op, args.like)
    _check_fixed(domain, vector_formats(lookup(vec_arch, instr, args.op)))
    label = _solver_label(args.solver)
    with _Progress(_progress_message(label, args.timeout)):
        r = distinguish(models, tokens, K=args.k, domain=domain, solver=args.solver, timeout=args.timeout,
                        seed=args.seed, confirm=args.confirm)
    entry = lookup(vec_arch, instr, args.op)
    fm = vector_formats(entry)
    out_names = {_ulp_format(m) for m in models}
    d_name = out_names.pop() if len(out_names) == 1 else fm.d.name  # ulps of the models' own output format
    if args.emit_smt2:
        _write_smt2(args.emit_smt2, r.smt2, [
            f"smtmma distinguish {' '.join(tokens)} --instr {instr}" + (f" --op {args.op}" if args.op else ""),
            *(f"  {n}: {m.describe()}" for n, m in zip(tokens, models)),
            f"K={r.K}; domain: {r.domain.describe()}",
            "sat: inputs a0.., b0.., c on which the outputs out0.. differ pairwise; unsat: no such input",
            f"answer: {r.verdict} ({r.solver}, {r.seconds:.2f} s)",
        ])

    differences: list[dict[str, Any]] = []
    vector_line: Optional[str] = None
    if r.verdict == "sat" and r.witness is not None:
        w = r.witness
        traces = {t: trace_dot(m, w.a, w.b, w.c, w.scale_a, w.scale_b) for t, m in zip(tokens, models)}
        for x, y in itertools.combinations(tokens, 2):
            bx, by = r.outputs[x], r.outputs[y]
            if bx != by:
                ulps, words = _difference(d_name, fm.d, bx, by)
                differences.append({"models": [x, y], "ulps": ulps, "text": words, **_diverging_step(traces[x], traces[y])})
        d = next((r.outputs[t] for t in tokens if not _is_spec_token(t)), None)  # the first architecture's D
        vector_line = dump_vector(vec_arch, instr, w.a, w.b, w.c, d, op=args.op, scale_a=w.scale_a,
                                  scale_b=w.scale_b, expect=r.outputs)

    if args.json:
        rec: dict[str, Any] = {"verdict": r.verdict, "models": tokens}
        if r.verdict == "sat" and r.witness is not None:
            rec["witness"] = _witness_json(fm, r.witness)
            rec["outputs"] = {n: format_hex(fm.d, r.outputs[n]) for n in tokens}
        rec.update(solver=r.solver, seconds=round(r.seconds, 3),
                   reason=r.reason or ("the outputs differ" if r.verdict == "sat" else ""))
        rec.update(instr=instr, op=entry.op, k=r.K, domain=r.domain.describe(),
                   specs={n: m.describe() for n, m in zip(tokens, models)})
        if differences:
            rec["differences"] = differences
        if vector_line is not None:
            rec["vector"] = json.loads(vector_line)
        if r.classes:
            rec["classes"] = r.classes
        if args.confirm:
            rec["confirmed_by"] = r.confirmed_by
            rec["confirmation"] = r.confirmation
        print(json.dumps(rec))
    else:
        _print_distinguish(r, tokens, models, instr, fm, differences, vector_line, args)
    if r.verdict == "unknown":
        _unknown_note(r.reason)
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
        for line in _witness_lines(fm, r.witness):
            print(line)
        print("outputs (d)")
        for t in tokens:
            print(f"  {t.ljust(width)}  {_hexdec(fm.d, r.outputs[t])}")
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
        print(f"smt2: {args.emit_smt2}")
    if vector_line is not None:
        print("test vector (for 'smtmma check' or hardware; \"expect\" holds each model's d):")
        print(vector_line)
