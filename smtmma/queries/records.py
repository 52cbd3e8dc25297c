"""The records of ``distinguish`` and ``query``: what ``--json`` prints and what :func:`smtmma.distinguish` returns.

:func:`distinguish_report` and :func:`query_report` run a query from the
names a user types (architectures, model specs, a property name, a domain
string) and return a :class:`Report`: the typed result and its JSON record
(bit patterns as hex in each operand's format, exact values as text).  The
CLI prints the record (``--json``) or renders it as text; the Python API
returns it.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, Sequence, Union

import numpy as np

from ..catalogue import lookup, model_of
from ..errors import InputError, InputTypeError, SmtmmaError, UnknownNameError, unknown_name, spell
from ..formats import Format, clip, format_hex, get_format
from ..models import Model, parse_model_spec
from ..simulate import output_format
from ..trace import Trace, divergence, trace_dot
from ..vectors import VectorFormats, dump_vector, vector_formats
from .distinguish import EmptyDomainError, distinguish, replay, ulp_distance
from .formula import Domain, parse_domain
from .model_tokens import Token, is_spec_token, resolve_models, token_name

__all__ = ["Report", "distinguish_report", "query_report", "witness_json", "value_text", "json_scalar"]


@dataclass
class Report:
    """A query's typed ``result``, its JSON ``record``, and what a text rendering needs besides."""

    result: Any
    record: dict[str, Any]
    formats: VectorFormats
    names: list[str] = field(default_factory=list)
    models: list[Model] = field(default_factory=list)
    instr: str = ""
    vector_line: Optional[str] = None


def witness_json(fm: VectorFormats, w: Any) -> dict[str, Any]:
    """A witness's a, b, c (and scales) as hex in their formats."""
    rec: dict[str, Any] = {"a": [format_hex(fm.a, x) for x in w.a], "b": [format_hex(fm.b, x) for x in w.b],
                           "c": format_hex(fm.c, w.c)}
    for label in ("scale_a", "scale_b"):
        s = getattr(w, label, None)
        if s is not None and fm.scale is not None:
            rec[label] = [format_hex(fm.scale, x) for x in s]
    return rec


def value_text(v: Any) -> str:
    """An exact step value as text: an integer, a decimal when a double holds it exactly, else p/q (~decimal)."""
    if isinstance(v, str):
        return v
    if v.denominator == 1:
        return str(v.numerator)
    f = float(v)
    return repr(f) if Fraction(f) == v else f"{v} (~{f:.17g})"


def json_scalar(value: Any) -> Any:
    """``value`` as JSON data: fractions as text, NumPy scalars as Python numbers, other objects as text."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [json_scalar(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_scalar(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def is_output_bits(fm: VectorFormats, value: Any) -> bool:
    """True when ``value`` is a D bit pattern (an int of the D format's width), not a count or a value."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= int(value) < (1 << fm.d.bits)


def _domain(domain: Union[None, str, Domain]) -> Domain:
    if domain is None or isinstance(domain, str):
        return parse_domain(domain)
    if isinstance(domain, Domain):
        return domain
    raise InputError(f"domain must be a string such as 'exp=-8:8,lanes=4' or a Domain, not {type(domain).__name__}")


def check_fixed(domain: Domain, fm: VectorFormats) -> None:
    """Fixed inputs of a domain (a0=0x3c00) must be patterns of their operand's format."""
    for name, value in domain.fixed:
        fmt = fm.c if name == "c" else fm.a if name.startswith("a") else fm.b
        if value < 0 or value >> fmt.bits:
            raise InputError(f"domain: {name}={value:#x} is not a {fmt.name} pattern ({fmt.bits} bits, "
                             f"0x{0:0{fmt.hex_digits}x}..0x{(1 << fmt.bits) - 1:0{fmt.hex_digits}x})")


# ---------------------------------------------------------------- distinguish


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
        out["step_values"] = [value_text(v) for v in div.values]
    if div.structure is not None:
        out["stages"] = [[{"stage": name, "result": value_text(v)} for name, v in model_stages] for model_stages in div.structure]
    return out


def _ulp_format(model: Model) -> str:
    """The format whose ulps measure the model's outputs: the rounding format when D carries it (E8M13 in FP32)."""
    if model.rho and not model.c_after:
        inner = get_format(model.conversion.fmt)
        if inner.container == model.d_fmt:
            return inner.name
    return output_format(model).name


def distinguish_report(
    tokens: Sequence[Token],
    *,
    instr: str,
    op: Optional[str] = None,
    like: Optional[str] = None,
    k: Optional[int] = None,
    domain: Union[None, str, Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    confirm: bool = False,
) -> Report:
    """Run ``distinguish`` on models named as a user names them; the result and its record.

    ``tokens``: architectures (``sm80``, ``h100``), model specs
    (``t-fdpa:F=26``, taking formats and other parameters from ``like`` or the
    first architecture) or :class:`Model` objects.  ``timeout`` is per solver
    call, in seconds.
    """
    if isinstance(tokens, (str, Model)):
        raise InputError("models: give a list of two or more models (architectures, model specs or Models)")
    tokens = list(tokens)
    if len(tokens) < 2:
        raise InputError("distinguish needs at least two models (architectures or model specs)")
    names = [token_name(t) for t in tokens]
    dupes = [n for i, n in enumerate(names) if n in names[:i]]
    if dupes:
        raise InputError(f"model {dupes[0]!r} is given twice; name each model once")
    dom = _domain(domain)
    instr, models, _, vec_arch = resolve_models(tokens, instr, op, like)
    entry = lookup(vec_arch, instr, op) if vec_arch else None
    fm = vector_formats(entry) if entry else vector_formats(models[0])
    check_fixed(dom, fm)
    r = distinguish(models, names, K=k, domain=dom, solver=solver, timeout=timeout, seed=seed, confirm=confirm)
    out_names = {_ulp_format(m) for m in models}
    d_name = out_names.pop() if len(out_names) == 1 else fm.d.name  # ulps of the models' own output format
    differences: list[dict[str, Any]] = []
    vector_line: Optional[str] = None
    if r.verdict == "sat" and r.witness is not None:
        w = r.witness
        traces = {n: trace_dot(m, w.a, w.b, w.c, w.scale_a, w.scale_b) for n, m in zip(names, models)}
        for x, y in itertools.combinations(names, 2):
            bx, by = r.outputs[x], r.outputs[y]
            if bx != by:
                ulps, words = _difference(d_name, fm.d, bx, by)
                differences.append({"models": [x, y], "ulps": ulps, "text": words, **_diverging_step(traces[x], traces[y])})
        if vec_arch is not None:
            d = next((r.outputs[n] for n, t in zip(names, tokens) if not is_spec_token(t)), None)  # the first arch's D
            vector_line = dump_vector(vec_arch, instr, w.a, w.b, w.c, d, op=op, scale_a=w.scale_a,
                                      scale_b=w.scale_b, expect=r.outputs)
    rec: dict[str, Any] = {"verdict": r.verdict, "models": names}
    if r.verdict == "sat" and r.witness is not None:
        rec["witness"] = witness_json(fm, r.witness)
        rec["outputs"] = {n: format_hex(fm.d, r.outputs[n]) for n in names}
    rec.update(solver=r.solver, seconds=round(r.seconds, 3),
               reason=r.reason or ("the outputs differ" if r.verdict == "sat" else ""))
    rec.update(instr=instr, op=entry.op if entry else op, k=r.K, domain=r.domain.describe(),
               specs={n: m.describe() for n, m in zip(names, models)})
    if differences:
        rec["differences"] = differences
    if vector_line is not None:
        rec["vector"] = json.loads(vector_line)
    if r.classes:
        rec["classes"] = r.classes
    if confirm:
        rec["confirmed_by"] = r.confirmed_by
        rec["confirmation"] = r.confirmation
    return Report(r, rec, fm, names, models, instr, vector_line)


# ---------------------------------------------------------------- query


def _load_properties() -> Any:
    try:
        from . import properties
    except ModuleNotFoundError as e:
        if e.name and e.name.endswith("properties"):
            raise InputError("query is not available in this installation (smtmma.queries.properties is missing)") from None
        raise
    return properties


def query_report(
    prop: str,
    arch: str,
    instr: Optional[str],
    *,
    op: Optional[str] = None,
    model: Union[None, str, Model] = None,
    k: Optional[int] = None,
    domain: Union[None, str, Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    tight: bool = False,
    predicate: Any = None,
    certify: bool = False,
) -> Report:
    """Check property ``prop`` of the model of (arch, instr, op), or of ``model`` (a spec or a Model); the result and its record.

    ``timeout`` is per solver call, in seconds.
    """
    properties = _load_properties()
    valid = list(properties.PROPERTIES)
    if not isinstance(prop, str):
        raise InputError(f"property must be a name ({', '.join(valid)}), not {type(prop).__name__}")
    name_of_prop = prop.strip().lower().replace("_", "-")
    if name_of_prop not in valid:
        raise UnknownNameError(unknown_name("property", prop, valid))
    prop = name_of_prop
    dom = _domain(domain)
    options: dict[str, Any] = {}
    if tight:
        if prop != "error-bound":
            raise InputError(f"{spell('tight', True)} applies to error-bound only, not {prop}")
        options["tight"] = True
    if predicate is not None:
        if prop != "custom":
            raise InputError(f"{spell('predicate')} applies to custom only, not {prop}")
        if not callable(predicate) and not os.path.isfile(predicate):  # a function: smtmma.query(predicate=fn)
            raise InputError(f"{spell('predicate', predicate)}: no such file")
        options["predicate"] = predicate
    elif prop == "custom":
        raise InputError(f"custom needs {spell('predicate', shown='FILE')} (a file, or in Python a function, that defines "
                         "predicate(alg, inputs, outputs))")
    if certify and prop == "order-independence":  # the canonical formula is no certificate: prove each swap on its own terms
        options["certify"] = True
    entry = lookup(arch, instr, op)
    the_model = model_of(entry.arch, entry.instr, op)
    fm = vector_formats(entry)
    check_fixed(dom, fm)
    name = arch
    if isinstance(model, Model):
        the_model, name = model_of(model, entry.instr), model.describe()  # refuses a model of other formats
    elif model is not None:
        if not isinstance(model, str):
            raise InputTypeError(f"model must be a spec such as 't-fdpa:F=26' or a Model, got {type(model).__name__}")
        try:
            the_model = parse_model_spec(model, like=the_model)
        except SmtmmaError as e:
            raise type(e)(f"{spell('model', clip(model, quote=False), shown=clip(model))}: {e}") from None
        name = model
    try:  # the properties check the domain alone before they report "holds"
        r = properties.check_property(prop, the_model, name=name, K=k, domain=dom, solver=solver,
                                      timeout=timeout, seed=seed, **options)
    except EmptyDomainError as e:
        text = str(e)
        raise EmptyDomainError(text if "empty domain" in text else f"empty domain: {text}") from None
    K = getattr(r, "K", None) or k
    w = getattr(r, "witness", None)
    has_lanes = w is not None and all(hasattr(w, f) for f in ("a", "b", "c"))
    outputs = dict(getattr(r, "outputs", None) or {})
    extra = dict(getattr(r, "extra", None) or {})
    vector_line: Optional[str] = None
    if has_lanes:  # a failing input, or the boundary case a "holds" reports (carry-bits: N - 1 bits fail)
        try:
            d = replay([the_model], w)[0]
            vector_line = dump_vector(entry.arch, entry.instr, w.a, w.b, w.c, None if model is not None else d, op=op,
                                      scale_a=getattr(w, "scale_a", None), scale_b=getattr(w, "scale_b", None),
                                      expect={name: d})
        except SmtmmaError:
            vector_line = None
    rec: dict[str, Any] = {"property": prop, "verdict": r.verdict}
    if w is not None:
        rec["witness"] = witness_json(fm, w) if has_lanes else json_scalar(w)
    rec["outputs"] = {str(key): format_hex(fm.d, int(v)) if is_output_bits(fm, v) else json_scalar(v)
                      for key, v in outputs.items()}
    rec.update(solver=r.solver, seconds=round(float(r.seconds), 3), reason=getattr(r, "reason", "") or "")
    rec.update(arch=entry.arch, instr=entry.instr, name=name, model=the_model.describe(), k=K, domain=dom.describe())
    for key, v in extra.items():
        rec.setdefault(str(key), json_scalar(v))
    if vector_line is not None:
        rec["vector"] = json.loads(vector_line)
    return Report(r, rec, fm, [name], [the_model], entry.instr, vector_line)
