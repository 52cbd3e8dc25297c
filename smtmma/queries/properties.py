"""Properties of one model, proved or refuted by a solver: symmetry, monotonicity, carry bits, error bounds, ...

Every property is a function ``prop(model, *, name, K, domain, solver,
timeout, seed, **options) -> QueryResult`` (listed in :data:`PROPERTIES`;
:func:`check_property` dispatches by name).  Verdicts:

* ``"holds"`` -- the solver proved the property for every input of the
  domain (dot products of length ``K``);
* ``"fails"`` -- a witness: inputs on which it fails.  Every witness is
  replayed through the simulator and re-checked in exact Python arithmetic
  before it is returned; a disagreement raises :class:`ReplayError` (a bug,
  never a result);
* ``"unknown"`` -- a solver gave up (``reason`` says which query and why).

``timeout`` is per solver call, in seconds; ``seconds`` of the result is the
wall time of the whole check.  The domain defaults to finite inputs.

Properties (the claims of the SMT paper 001 and the MMA-Sim paper 000):

``symmetry``
    ``Phi(-A, B, -C) = -Phi(A, B, C)`` as values (+0 equals -0, all NaNs
    are equal).  Negating a pattern flips its sign bit; an FNUZ zero (and
    its NaN 0x80) is its own negation.  Holds for NVIDIA T-FDPA; fails for
    the round-down sums of CDNA3 (MMA-Sim §6.2.4).
``monotonicity``
    With finite non-negative inputs, ``a' >= a``, ``b' >= b``, ``c' >= c``
    elementwise (as values) never give ``Phi(a', b', c') < Phi(a, b, c)``.
    Fails for truncated, unnormalized fused sums (Fasi et al. §3.1.4: raise
    c to a power of two and the products lose their low bits).  By
    transitivity it suffices to raise one input to its next value at a
    time; both the witness search and the proof do that.
``carry-bits``
    The smallest N such that the model with ``carry_bits=N`` equals the
    unbounded model on every input: a witness that N - 1 bits lose a carry
    and a proof that N bits never do (``extra["carry_bits"]``; ``witness``
    is the input on which N - 1 bits fail).  One T-FDPA or ST-FDPA (K <= L).
``error-bound``
    ``|Phi - exact| <= scale * ((L+1) 2**(e_max - F) + u ulp(Phi))`` (Table
    9 of MMA-Sim; u = 1 for RZ, 1/2 for RNE; e_max the alignment exponent of
    the summands), with the exact ``c + sum a_k b_k``; infinite outputs are
    out of scope.  ``tight=True`` bisects for the smallest scale that holds.
``order-independence``
    Whether permuting the products (the pairs ``a_k, b_k``) can change the
    output bits: each adjacent transposition (they generate every
    permutation) is proved harmless, or a witness shows one that is not.
    Holds for one fused sum (T-, TR-FDPA, K <= L); fails for chained FDPAs
    (K > L), pairwise FTZ-AddMul and the even/odd groups of GTR-FDPA.
``custom``
    ``predicate``: a Python file defining ``predicate(alg, inputs, outputs)
    -> Bool`` (or the function itself).  ``alg`` is the algebra of the
    formula (:class:`~smtmma.encodings.algebra.Algebra`: ``alg.eq``,
    ``alg.lt``, ``alg.add``, ``alg.ite``, ``alg.and_``, ... and
    :func:`smtmma.encodings.fields.unpack` to decode a pattern);
    ``inputs`` maps ``a0.., b0.., c`` (and ``sa0.., sb0..``) to the input
    bit patterns (Int terms); ``outputs`` maps each model's name to its D
    bit pattern (Int term).  The query asks for inputs where the predicate
    is false.  The same function is evaluated again on the concrete
    witness (NumPy interpretation) before a failure is reported.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import os
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable, Optional, Union

import numpy as np

from ..encodings.algebra import Algebra, Bool, Int
from ..encodings.concrete import NumpyAlgebra
from ..encodings.fields import unpack
from ..encodings.fused_sum import max_exponent
from ..encodings.terms import Term, input_term, product
from ..errors import InputError, UnknownNameError, choices
from ..formats import Format, Special, decode_scalar, format_hex, get_format, to_fraction
from ..models import PARAM_RANGES, Model
from ..simulate import run_model
from ._twins import (
    InputSet,
    LemmaChain,
    QueryAlgebra,
    Runner,
    declare_output,
    fused_parts,
    neg_pattern,
    output_container,
    same_value,
    supports_fused_parts,
    value_key,
)
from .distinguish import EmptyDomainError, ReplayError, Witness, domain_is_empty, replay
from .formula import Domain

__all__ = [
    "QueryResult",
    "PROPERTIES",
    "check_property",
    "symmetry",
    "monotonicity",
    "carry_bits",
    "error_bound",
    "order_independence",
    "custom",
    "load_predicate",
]

#: Seconds of a first, short solver call that looks for a witness before lemmas are proved.
_QUICK = 5.0

_FDPA_KINDS = ("e-fdpa", "t-fdpa", "st-fdpa", "gst-fdpa", "tr-fdpa", "gtr-fdpa")


@dataclass
class QueryResult:
    """The answer to a property query (see the module docstring for the verdicts)."""

    property: str  # "symmetry", "monotonicity", "carry-bits", "error-bound", "order-independence", "custom"
    verdict: str  # "holds" | "fails" | "unknown"
    name: str  # the model's name as given (e.g. "sm80" or a spec)
    model: Model
    K: int
    domain: Domain
    solver: str
    seconds: float
    witness: Optional[Witness] = None  # when it fails (replayed through the simulator first)
    outputs: dict[str, int] = field(default_factory=dict)  # bits of the outputs involved, e.g. {"d": .., "d_neg": ..}
    reason: str = ""
    extra: dict[str, object] = field(default_factory=dict)  # carry-bits: {"carry_bits": N}; error-bound: {"bound": .., "tight": ..}
    smt2: str = ""  # the main script (for --emit-smt2)


# -- shared helpers --------------------------------------------------------------------------------


def _default_K(model: Model, prop: str) -> int:
    """One FDPA (K = L) for fused models; two pairwise groups for FTZ-AddMul order questions; one FMA for error bounds."""
    if model.L is not None and model.kind in _FDPA_KINDS:
        return model.L
    if model.kind == "ftz-addmul":
        assert model.P is not None
        return 2 * model.P if prop == "order-independence" else model.P
    return 1 if prop == "error-bound" else 4


def _setup(model: Model, name: Optional[str], K: Optional[int], domain: Optional[Domain], prop: str) -> tuple[str, int, Domain]:
    if not isinstance(model, Model):
        raise InputError(f"{prop}: expected a Model, got {type(model).__name__}")
    K = _default_K(model, prop) if K is None else int(K)
    if K < 1:
        raise InputError(f"{prop}: K must be at least 1, got {K}")
    return (name or model.describe()), K, (domain or Domain())


def _result(prop: str, verdict: str, name: str, model: Model, K: int, domain: Domain, run: Runner, **kw: Any) -> QueryResult:
    return QueryResult(prop, verdict, name, model, K, domain, run.name, run.seconds, **kw)


def _unknown(prop: str, name: str, model: Model, K: int, domain: Domain, run: Runner, what: str, reason: str, **kw: Any) -> QueryResult:
    return _result(prop, "unknown", name, model, K, domain, run, reason=f"{what}: the solver gave up ({reason or 'no reason given'})", **kw)


def _check_nonempty(model: Model, K: int, domain: Domain, run: Runner, prop: str) -> None:
    """A proof over an empty domain proves nothing: raise EmptyDomainError when no input satisfies it."""
    if domain == Domain():
        return  # finite inputs always exist
    empty = domain_is_empty([model], K, domain, solver=run.solver, timeout=run.timeout, seed=run.seed)
    if empty:
        raise EmptyDomainError(f"{prop}: no input satisfies the domain ({domain.describe()}, K={K}); a proof over it would be vacuous")


def _replay_one(model: Model, w: Witness) -> int:
    return replay([model], w)[0]


def _expect_same(label: str, claimed: int, got: int, w: Witness) -> None:
    if claimed != got:
        raise ReplayError(f"{label}: the solver's output {claimed:#x} disagrees with the simulator's {got:#x} on {w}")


def _py_value(fmt: Format, bits: int) -> Union[Fraction, float, None]:
    """Exact value of a pattern (Fraction), +-inf as floats, None for NaN."""
    v = to_fraction(fmt, bits)
    if v == Special.NAN:
        return None
    if v == Special.INF:
        return float("inf")
    if v == Special.NINF:
        return float("-inf")
    assert isinstance(v, Fraction)
    return v


def _py_same_value(fmt: Format, x: int, y: int) -> bool:
    vx, vy = _py_value(fmt, x), _py_value(fmt, y)
    return vx == vy  # None == None: both NaN


def _negated_witness(model: Model, w: Witness) -> Witness:
    fa, fc = get_format(model.a_fmt), get_format(model.c_fmt)
    return Witness(tuple(neg_pattern(fa, x) for x in w.a), w.b, neg_pattern(fc, w.c), w.scale_a, w.scale_b)


def _hex_witness(model: Model, w: Witness) -> dict[str, object]:
    """A witness as hex strings in each operand's format (for ``extra``: JSON-friendly)."""
    out: dict[str, object] = {
        "a": [format_hex(model.a_fmt, x) for x in w.a],
        "b": [format_hex(model.b_fmt, x) for x in w.b],
        "c": format_hex(model.c_fmt, w.c),
    }
    if w.scale_a is not None and w.scale_b is not None and model.scale_fmt:
        out["scale_a"] = [format_hex(model.scale_fmt, x) for x in w.scale_a]
        out["scale_b"] = [format_hex(model.scale_fmt, x) for x in w.scale_b]
    return out


# -- symmetry ---------------------------------------------------------------------------------------


def symmetry(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    lemmas: bool = True,
) -> QueryResult:
    """Is ``Phi(-A, B, -C) = -Phi(A, B, C)`` (as values) for every input of the domain?

    The model runs twice in one formula, on ``(A, B, C)`` and on the
    negated patterns; the second run decodes the same significands.  For
    one T-FDPA/ST-FDPA (K <= L) with ``lemmas``, the solver first proves,
    summand by summand and running sum by running sum, that the fused sum
    of the negated inputs is the negated sum; the proved lemmas then make
    the final query easy (bitwuzla, L = 4: 1.5 s instead of 16 s).
    ``smt2`` is then an incremental script that proves every lemma, then
    the property (every ``check-sat`` answers unsat).
    """
    prop = "symmetry"
    name, K, domain = _setup(model, name, K, domain, prop)
    fa, fc = get_format(model.a_fmt), get_format(model.c_fmt)
    for fmt, who in ((fa, "A"), (fc, "C")):
        if not fmt.signed or fmt.sign_ignored:
            raise InputError(f"symmetry: {who} is {fmt.name}, which has no sign to negate")
    run = Runner(solver, timeout, seed)
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    x.restrict(domain)
    base = len(alg.asserts)
    na = [alg.negate(v, fa) for v in x.a]
    nc = alg.negate(x.c, fc)
    chain = LemmaChain(alg, run)
    if lemmas and supports_fused_parts(model, K):
        p = fused_parts(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
        q = fused_parts(alg, model, na, x.b, nc, x.scale_a, x.scale_b)
        for j in range(len(p.aligned)):
            chain.prove(f"summand {j} of the negated inputs is minus summand {j}", alg.eq(q.aligned[j], alg.neg(p.aligned[j])))
            chain.prove(f"running sum {j} of the negated inputs is minus running sum {j}", alg.eq(q.prefix[j], alg.neg(p.prefix[j])))
        chain.prove("the fused sum of the negated inputs is minus the fused sum", alg.eq(q.total, alg.neg(p.total)))
        if model.carry_bits is not None:
            assert model.F is not None
            chain.prove("the carry-limited register is negated too",
                        alg.eq(q.wrapped(alg, model.F, model.carry_bits), alg.neg(p.wrapped(alg, model.F, model.carry_bits))))
    out = output_container(model)
    d = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
    dn = run_model(alg, model, na, x.b, nc, x.scale_a, x.scale_b)
    declare_output(alg, "d", d, out.bits)
    declare_output(alg, "d_neg", dn, out.bits)
    violated = alg.not_(same_value(alg, out, dn, alg.negate(d, out)))
    final = f"(assert {alg.raw_bool(violated)})"
    script = alg.script(final)
    r = run.check(script, x.declared + ["d", "d_neg"])
    smt2 = chain.certificate(base, final) if chain.proven else script
    extra: dict[str, object] = {"lemmas": len(chain.proven)} if chain.proven else {}
    if r.verdict == "unknown":
        return _unknown(prop, name, model, K, domain, run, "symmetry query", r.reason, smt2=smt2, extra=extra)
    if r.verdict == "unsat":
        _check_nonempty(model, K, domain, run, prop)
        return _result(prop, "holds", name, model, K, domain, run, smt2=smt2, extra=extra,
                       reason=f"Phi(-A, B, -C) = -Phi(A, B, C) for every input ({domain.describe()}, K={K})")
    w = x.witness(r.values)
    wn = _negated_witness(model, w)
    got, got_neg = _replay_one(model, w), _replay_one(model, wn)
    _expect_same("symmetry d", r.values["d"], got, w)
    _expect_same("symmetry d_neg", r.values["d_neg"], got_neg, wn)
    if _py_same_value(out, got_neg, neg_pattern(out, got)):
        raise ReplayError(f"symmetry witness {w} does not break symmetry: d={got:#x}, d_neg={got_neg:#x}")
    return _result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": got, "d_neg": got_neg}, smt2=smt2,
                   extra=extra, reason=f"Phi(-A, B, -C) = {_show(out, got_neg)} but -Phi(A, B, C) = {_show(out, neg_pattern(out, got))}")


def _show(fmt: Format, bits: int) -> str:
    v = _py_value(fmt, bits)
    text = "nan" if v is None else (str(v) if isinstance(v, float) else _dec(v))
    return f"{format_hex(fmt, bits)} ({text})"


def _dec(v: Fraction) -> str:
    if v == 0:
        return "0"
    if v.denominator == 1 or v.denominator & (v.denominator - 1) == 0:
        return f"{float(v):.9g}" if abs(float(v)) not in (0.0, float("inf")) else str(v)
    return str(v)


# -- monotonicity -----------------------------------------------------------------------------------


def _positions(x: InputSet, domain: Domain) -> list[tuple[str, Int, Format]]:
    """Inputs that may change, cheapest witnesses first: c, then a_k and b_k lane by lane, then scales."""
    fixed = {n for n, _ in domain.fixed}
    out: list[tuple[str, Int, Format]] = []
    if "c" not in fixed:
        out.append(("c", x.c, x.c_fmt))
    for k in range(x.K):
        for who, terms, fmt in (("a", x.a, x.a_fmt), ("b", x.b, x.b_fmt)):
            if f"{who}{k}" not in fixed:
                out.append((f"{who}{k}", terms[k], fmt))
    if x.scale_a is not None and x.scale_b is not None and x.scale_fmt is not None:
        for j in range(len(x.scale_a)):
            for who, terms in (("sa", x.scale_a), ("sb", x.scale_b)):
                if f"{who}{j}" not in fixed:
                    out.append((f"{who}{j}", terms[j], x.scale_fmt))
    return out


def _smallest_positive(fmt: Format, exp: Optional[tuple[int, int]], subnormals: bool) -> Optional[int]:
    """The smallest positive pattern of ``fmt`` a domain allows (exponent range, subnormals), None if none."""
    if not fmt.subnormals:  # ue8m0: every pattern is 2**(E - bias), exponent E - bias
        lo = fmt.emin if exp is None else max(exp[0], -fmt.bias)
        return None if exp is not None and lo > exp[1] else lo + fmt.bias
    lo = fmt.emin if exp is None else exp[0]
    if exp is not None and lo > min(exp[1], fmt.emax):
        return None
    if subnormals and lo <= fmt.emin:
        return 1
    return (max(lo, fmt.emin) + fmt.bias) << fmt.man_bits


def monotonicity(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
) -> QueryResult:
    """Do larger non-negative finite inputs ever give a smaller output?

    The domain is intersected with finite non-negative inputs.  Between two
    inputs X <= X' of the domain lies a chain of single moves, each raising
    one input to the next value the domain allows (or swapping a zero's
    sign), so the property holds iff no single move lowers the output: one
    query per input position (``c`` first, then ``a_k``, ``b_k``, scales),
    each small, and complete both for witnesses and for the proof.
    ``witness`` holds the smaller inputs, ``extra["larger"]`` the larger
    ones (hex), ``outputs`` both outputs.
    """
    prop = "monotonicity"
    name, K, domain = _setup(model, name, K, domain, prop)
    domain = replace(domain, nonneg=True, specials=False)
    run = Runner(solver, timeout, seed)
    out = output_container(model)
    reasons: list[str] = []
    scripts: list[str] = []
    labels = [label for label, _, _ in _positions(InputSet.of(QueryAlgebra(), model, K), domain)]
    for label in labels:
        alg = QueryAlgebra()
        x = InputSet.of(alg, model, K)
        x.restrict(domain)
        y = _moved(alg, x, label, domain)
        script = _monotone_script(alg, model, x, y, out)
        scripts.append(script)
        r = run.check(script, x.declared + [f"{label}_2", "d", "d_larger"])
        if r.verdict == "unknown":
            reasons.append(f"raising {label}: {r.reason}")
            continue
        if r.verdict == "unsat":
            continue
        w = x.witness(r.values)
        w2 = _with_input(w, label, r.values[f"{label}_2"])
        d1, d2 = _replay_one(model, w), _replay_one(model, w2)
        _expect_same("monotonicity d", r.values["d"], d1, w)
        _expect_same("monotonicity d_larger", r.values["d_larger"], d2, w2)
        _check_larger(model, w, w2)
        v1, v2 = _py_value(out, d1), _py_value(out, d2)
        if v1 is None or v2 is None or not v2 < v1:
            raise ReplayError(f"monotonicity witness does not decrease: {d1:#x} -> {d2:#x} on {w} -> {w2}")
        return _result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": d1, "d_larger": d2}, smt2=script,
                       extra={"larger": _hex_witness(model, w2), "raised": label},
                       reason=f"raising {label} gives a smaller output: {_show(out, d1)} -> {_show(out, d2)}")
    if reasons:
        return _unknown(prop, name, model, K, domain, run, "monotonicity", "; ".join(reasons), smt2=scripts[0] if scripts else "")
    _check_nonempty(model, K, domain, run, prop)
    return _result(prop, "holds", name, model, K, domain, run, smt2=scripts[0] if scripts else "", extra={"queries": len(scripts)},
                   reason=f"raising any one input to the next value never lowers the output, so no larger inputs do "
                   f"({domain.describe()}, K={K})")


def _split_label(label: str) -> tuple[str, int]:
    """``"c"`` -> ("c", 0); ``"a3"`` -> ("a", 3); ``"sb0"`` -> ("sb", 0)."""
    if label == "c":
        return "c", 0
    for who in ("sa", "sb", "a", "b"):
        if label.startswith(who) and label[len(who):].isdigit():
            return who, int(label[len(who):])
    raise AssertionError(label)


_WITNESS_FIELD = {"a": "a", "b": "b", "sa": "scale_a", "sb": "scale_b"}


def _with_input(w: Witness, label: str, value: int) -> Witness:
    """``w`` with input ``label`` (``c``, ``a3``, ``sb0``) set to ``value``."""
    who, k = _split_label(label)
    if who == "c":
        return replace(w, c=value)
    items = list(getattr(w, _WITNESS_FIELD[who]))
    items[k] = value
    return replace(w, **{_WITNESS_FIELD[who]: tuple(items)})


def _moved(alg: QueryAlgebra, x: InputSet, label: str, domain: Domain) -> InputSet:
    """A copy of ``x``'s inputs where input ``label`` takes the next value of the domain (``<label>_2``).

    The next value of a zero is the smallest positive value the domain
    allows, or a zero (of either sign); of a positive value, the next
    pattern (value order is pattern order for non-negative values).
    """
    y = copy.copy(x)
    y.a, y.b = list(x.a), list(x.b)
    y.scale_a = list(x.scale_a) if x.scale_a is not None else None
    y.scale_b = list(x.scale_b) if x.scale_b is not None else None
    y.suffix = "_2"
    who, k = _split_label(label)
    lanes = {"c": None, "a": y.a, "b": y.b, "sa": y.scale_a, "sb": y.scale_b}[who]
    fmt = {"c": x.c_fmt, "a": x.a_fmt, "b": x.b_fmt}.get(who, x.scale_fmt)
    assert fmt is not None
    old = x.c if lanes is None else lanes[k]
    v = alg.var(f"{label}_2", fmt.bits)
    if who in ("sa", "sb"):
        alg.assert_(alg.not_(unpack(alg, fmt, v).is_nan))
        alg.assert_(alg.not_(unpack(alg, fmt, old).is_nan))
        first = _smallest_positive(fmt, None, True)
    else:
        exp = domain.cexp if who == "c" else domain.exp
        x._restrict_value(fmt, v, domain, exp)
        first = _smallest_positive(fmt, exp, domain.subnormals)
        if who != "c" and domain.lanes is not None and k >= domain.lanes:
            alg.assert_(unpack(alg, fmt, v).is_zero)  # a lane the domain keeps at zero
    if lanes is None:
        y.c = v
    else:
        lanes[k] = v
    uo, uv = unpack(alg, fmt, old), unpack(alg, fmt, v)
    step = alg.and_(alg.not_(uo.is_zero), alg.eq(v, alg.add(old, 1)))
    if fmt.sign_mask:  # the largest positive pattern has no next one (without inf or NaN above it, +1 is -0)
        step = alg.and_(step, alg.lt(old, fmt.sign_mask - 1))
    moves = [step]
    if fmt.subnormals:  # formats with a zero
        moves.append(alg.and_(uo.is_zero, uv.is_zero))
        if first is not None:
            moves.append(alg.and_(uo.is_zero, alg.eq(v, first)))
    alg.assert_(alg.any(moves))
    return y


def _monotone_script(alg: QueryAlgebra, model: Model, x: InputSet, y: InputSet, out: Format) -> str:
    d1 = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
    d2 = run_model(alg, model, y.a, y.b, y.c, y.scale_a, y.scale_b)
    declare_output(alg, "d", d1, out.bits)
    declare_output(alg, "d_larger", d2, out.bits)
    u1, u2 = unpack(alg, out, d1), unpack(alg, out, d2)
    drop = alg.all([alg.not_(u1.is_nan), alg.not_(u2.is_nan), alg.lt(value_key(alg, out, d2), value_key(alg, out, d1))])
    return alg.script(f"(assert {alg.raw_bool(drop)})")


def _check_larger(model: Model, w: Witness, w2: Witness) -> None:
    """Python re-check of a monotonicity witness's premise: non-negative inputs, each not smaller."""
    pairs: list[tuple[str, int, int]] = [(model.c_fmt, w.c, w2.c)]
    pairs += [(model.a_fmt, u, v) for u, v in zip(w.a, w2.a)] + [(model.b_fmt, u, v) for u, v in zip(w.b, w2.b)]
    if model.scale_fmt and w.scale_a is not None and w2.scale_a is not None and w.scale_b is not None and w2.scale_b is not None:
        pairs += [(model.scale_fmt, u, v) for u, v in zip(w.scale_a + w.scale_b, w2.scale_a + w2.scale_b)]
    for fmt_name, u, v in pairs:
        fmt = get_format(fmt_name)
        vu, vv = _py_value(fmt, u), _py_value(fmt, v)
        if vu is None or vv is None or vu < 0 or vv < vu:
            raise ReplayError(f"monotonicity witness breaks its premise: {fmt.name} {u:#x} -> {v:#x}")


# -- carry bits -------------------------------------------------------------------------------------


def carry_bits(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
) -> QueryResult:
    """The fewest carry bits N with which the model equals the unbounded model on the domain.

    For each candidate n the solver is first asked whether the register of
    2 + n integer bits can lose a carry (the fixed-point sums differ); no
    means n bits suffice: that proved lemma is asserted and the outputs are
    then proved equal.  A lost carry gives an input that is replayed
    through both models; if their outputs differ (they always did so far)
    n is too few, else the outputs are compared directly.  The search
    starts at the bound the sums' static ranges give and moves down (or up).
    """
    prop = "carry-bits"
    name, K, domain = _setup(model, name, K, domain, prop)
    if model.kind not in ("t-fdpa", "st-fdpa") or model.F is None or model.L is None:
        raise InputError(f"carry-bits: {model.describe()} has no carry-bit parameter (T-FDPA and ST-FDPA models have one)")
    if K > model.L:
        raise InputError(f"carry-bits is a property of one FDPA: K must be at most L={model.L}, got {K}")
    if model.c_after:
        raise InputError(f"carry-bits: {model.describe()} adds C outside the FDPA; its fused sum has no C term")
    F = model.F
    run = Runner(solver, timeout, seed)
    unbounded = model.replace(carry_bits=None)
    out = output_container(model)

    probe_alg = QueryAlgebra()
    px = InputSet.of(probe_alg, model, K)
    total = fused_parts(probe_alg, unbounded, px.a, px.b, px.c, px.scale_a, px.scale_b).total
    start = 0
    while not (-(1 << (2 + start + F)) <= total.lo and total.hi < (1 << (2 + start + F))):
        start += 1
    limit = PARAM_RANGES["carry_bits"][1]
    start = min(start, limit)

    def probe(n: int) -> tuple[str, Any, str]:
        """("enough", None, script) | ("short", (witness, d_n, d_inf), script) | ("unknown", reason, script)."""
        alg = QueryAlgebra()
        x = InputSet.of(alg, model, K)
        x.restrict(domain)
        base = len(alg.asserts)
        limited = model.replace(carry_bits=n)
        parts = fused_parts(alg, unbounded, x.a, x.b, x.c, x.scale_a, x.scale_b)
        same_sum = alg.eq(parts.wrapped(alg, F, n), parts.total)
        r = run.check(alg.script(f"(assert (not {alg.raw_bool(same_sum)}))"), x.declared)
        if r.verdict == "sat":  # a lost carry: does it change the output?
            w = x.witness(r.values)
            dn, dinf = replay([limited, unbounded], w)
            if dn != dinf:
                return "short", (w, dn, dinf), ""
        elif r.verdict == "unknown":
            return "unknown", f"can {n} carry bits lose a carry: {r.reason}", ""
        chain = LemmaChain(alg, run)
        if r.verdict == "unsat":
            chain.proven.append((f"{n} carry bits never lose a carry", alg.raw_bool(same_sum)))
            alg.assert_(same_sum)
        d_n = run_model(alg, limited, x.a, x.b, x.c, x.scale_a, x.scale_b)
        d_inf = run_model(alg, unbounded, x.a, x.b, x.c, x.scale_a, x.scale_b)
        declare_output(alg, "d_n", d_n, out.bits)
        declare_output(alg, "d_inf", d_inf, out.bits)
        final = "(assert (not (= d_n d_inf)))"
        script = alg.script(final)
        r2 = run.check(script, x.declared + ["d_n", "d_inf"])
        smt2 = chain.certificate(base, final) if chain.proven else script
        if r2.verdict == "unsat":
            return "enough", None, smt2
        if r2.verdict == "unknown":
            return "unknown", f"do {n} carry bits change the output: {r2.reason}", smt2
        w = x.witness(r2.values)
        dn, dinf = replay([limited, unbounded], w)
        _expect_same(f"carry-bits d (carry_bits={n})", r2.values["d_n"], dn, w)
        _expect_same("carry-bits d (unbounded)", r2.values["d_inf"], dinf, w)
        if dn == dinf:
            raise ReplayError(f"carry-bits witness {w} gives the same output with {n} carry bits and unbounded")
        return "short", (w, dn, dinf), smt2

    enough: dict[int, str] = {}
    short: dict[int, Any] = {}
    n = start
    while True:
        verdict, info, smt2 = probe(n)
        if verdict == "unknown":
            return _unknown(prop, name, model, K, domain, run, f"carry bits ({_known(enough, short)})", info, smt2=smt2,
                            extra=_carry_extra(enough, short, K))
        if verdict == "enough":
            enough[n] = smt2
            if n == 0 or (n - 1) in short:
                break
            n -= 1
        else:
            short[n] = info
            if (n + 1) in enough:
                break
            if n + 1 > limit:
                return _unknown(prop, name, model, K, domain, run, "carry bits", f"even {limit} carry bits lose a carry",
                                extra=_carry_extra(enough, short, K))
            n += 1
    N = min(enough)
    _check_nonempty(model, K, domain, run, prop)
    extra = _carry_extra(enough, short, K)
    extra["carry_bits"] = N
    if N - 1 in short:
        w, dn, dinf = short[N - 1]
        return _result(prop, "holds", name, model, K, domain, run, witness=w, outputs={f"d_carry{N - 1}": dn, "d_unbounded": dinf},
                       smt2=enough[N], extra=extra,
                       reason=f"{N} carry bits suffice for {K + 1} summands and {N - 1} do not ({domain.describe()})")
    return _result(prop, "holds", name, model, K, domain, run, smt2=enough[N], extra=extra,
                   reason=f"no carry bits are needed for {K + 1} summands ({domain.describe()})")


def _known(enough: dict[int, str], short: dict[int, Any]) -> str:
    parts = []
    if enough:
        parts.append(f"{min(enough)} suffice")
    if short:
        parts.append(f"{max(short)} do not")
    return ", ".join(parts) or "nothing decided"


def _carry_extra(enough: dict[int, str], short: dict[int, Any], K: int) -> dict[str, object]:
    extra: dict[str, object] = {"summands": K + 1}
    if enough:
        extra["sufficient"] = min(enough)
    if short:
        extra["insufficient"] = max(short)
    return extra


# -- error bound ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Bound:
    """|Phi - exact| <= scale * (fused * 2**(e_max - F) + ulps * ulp(Phi))."""

    fused: Fraction
    ulps: Fraction
    F: int
    rfmt: Format  # format rounded to (its ulp)

    def describe(self, scale: Fraction) -> str:
        parts = []
        if self.fused:
            parts.append(f"{self.fused}*2^(e_max-{self.F})")
        if self.ulps:
            parts.append(f"{self.ulps} ulp({self.rfmt.name})")
        text = " + ".join(parts) or "0"
        return text if scale == 1 else f"{scale} * ({text})"


def _table9(model: Model, K: int) -> _Bound:
    kind = model.kind
    if model.scale_fmt is not None or kind in ("gst-fdpa", "ftz-addmul") or model.c_after or model.via:
        raise InputError(f"error-bound: no Table 9 bound is implemented for {model.describe()} "
                         "(supported: one T-FDPA, TR-FDPA, GTR-FDPA or E-FDPA with K <= L, or a single FMA)")
    if kind == "fma":
        if K != 1:
            raise InputError(f"error-bound: an FMA chain of K={K} rounds K times; Table 9's bound is for one FMA (K=1)")
        return _Bound(Fraction(0), Fraction(1, 2), 0, get_format(model.d_fmt))
    assert model.L is not None
    if K > model.L:
        raise InputError(f"error-bound: Table 9 bounds one FDPA; K must be at most L={model.L}, got {K}")
    if kind == "e-fdpa":
        return _Bound(Fraction(0), Fraction(1, 2), 0, get_format(model.d_fmt))
    assert model.F is not None
    conv = model.conversion
    ulps = Fraction(1) if conv.mode in ("rz", "rd", "ru") else Fraction(1, 2)
    return _Bound(Fraction(K + 1), ulps, model.F, get_format(conv.fmt))


def _alignment_exponent(alg: QueryAlgebra, model: Model, x: InputSet, terms: list[Term]) -> Int:
    """e_max of Table 9: the exponent the fused sum aligns at (T-FDPA: the model's own, floor included)."""
    if supports_fused_parts(model, x.K):
        return fused_parts(alg, model, x.a, x.b, x.c).e_max
    return max_exponent(alg, terms)  # TR-/GTR-FDPA: E = max over the non-zero products and c (Alg. 10 step 3)


def _py_alignment_exponent(model: Model, w: Witness) -> Optional[int]:
    exps = []
    for u, v in zip(w.a, w.b):
        su, eu, mu = decode_scalar(get_format(model.a_fmt), u)
        sv, ev, mv = decode_scalar(get_format(model.b_fmt), v)
        if mu and mv:
            exps.append(eu + ev)
    sc, ec, mc = decode_scalar(get_format(model.c_fmt), w.c)
    if mc:
        exps.append(ec)
    e = max(exps) if exps else None
    if model.kind in ("t-fdpa", "st-fdpa") and model.emax_floor is not None:
        e = model.emax_floor if e is None else max(e, model.emax_floor)
    return e


def _range(u_exp: Int, rng: Optional[tuple[int, int]]) -> tuple[int, int]:
    """The exponents a domain allows for a non-zero value (within the format's), never empty."""
    lo, hi = u_exp.lo, u_exp.hi
    if rng is not None:
        lo, hi = max(lo, rng[0]), min(hi, rng[1])
    return lo, max(lo, hi)


class _ErrorFormula:
    """``|Phi - exact| > scale * bound`` as integers in units of 2**R.

    ``narrow``: exponents are clamped to the ranges the domain allows
    (exact: the domain asserts them for non-zero values), and the output's
    exponent to the range a non-zero result of these inputs can have; an
    output outside it counts as a violation, so a proof stays sound and a
    witness of that kind is re-asked without the narrowing.  Narrow units
    keep the integers about as wide as the domain's exponent span instead
    of the formats' (FP32 subnormals: 2**-149).
    """

    def __init__(self, model: Model, K: int, domain: Domain, bound: _Bound, *, narrow: bool) -> None:
        self.narrow = narrow
        alg = self.alg = QueryAlgebra()
        x = self.x = InputSet.of(alg, model, K)
        x.restrict(domain)
        self.base_asserts = len(alg.asserts)
        out = output_container(model)
        fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
        ua = [unpack(alg, fa, v) for v in x.a]
        ub = [unpack(alg, fb, v) for v in x.b]
        uc = unpack(alg, fc, x.c)
        terms = [product(alg, u, v)[0] for u, v in zip(ua, ub)] + [input_term(uc)]
        if narrow:
            ranges = [tuple(map(sum, zip(_range(u.exp, domain.exp), _range(v.exp, domain.exp)))) for u, v in zip(ua, ub)]
            ranges.append(_range(uc.exp, domain.cexp))
        else:
            ranges = [(t.exp.lo, t.exp.hi) for t in terms]
        d = run_model(alg, model, x.a, x.b, x.c)
        declare_output(alg, "d", d, out.bits)
        ud = unpack(alg, out, d)
        lo_e, hi_e = min(r[0] for r in ranges), max(r[1] for r in ranges)
        if model.kind in ("t-fdpa", "st-fdpa") and model.emax_floor is not None:
            lo_e, hi_e = max(lo_e, model.emax_floor), max(hi_e, model.emax_floor)
        lsb_lo = min(r[0] - t.frac for r, t in zip(ranges, terms))
        quanta = [lsb_lo] + [lo_e - f for f in (model.F, model.F2) if f is not None and bound.fused]
        m_r, emin_r = bound.rfmt.man_bits, bound.rfmt.emin
        if narrow:  # a non-zero result is a multiple of its smallest quantum and below 4n times the largest summand
            e_lo, e_hi = max(min(quanta), ud.exp.lo), min(hi_e + (4 * len(terms)).bit_length() + 1, ud.exp.hi)
            e_hi = max(e_lo, e_hi)
        else:
            e_lo, e_hi = ud.exp.lo, ud.exp.hi
        R = min(quanta + [max(e_lo, emin_r) - m_r - 1])

        def fixed(neg: Bool, sig: Int, exp: Int, frac: int) -> Int:
            mag = alg.shl(sig, alg.sub(exp, frac + R))
            return alg.ite(neg, alg.neg(mag), mag)

        self.exact_terms = [fixed(t.neg, t.sig, alg.clamp(t.exp, lo, hi), t.frac) for t, (lo, hi) in zip(terms, ranges)]
        exact = alg.sum_all(self.exact_terms)
        exp_d = alg.clamp(ud.exp, e_lo, e_hi)
        self.err = alg.abs(alg.sub(fixed(ud.neg, ud.sig, exp_d, ud.frac), exact))
        self.R, self.d_value = R, fixed(ud.neg, ud.sig, exp_d, ud.frac)
        if bound.fused:
            e_max = self.e_max = alg.clamp(_alignment_exponent(alg, model, x, terms), lo_e, hi_e)
            self.unit_fused = alg.shl(1, alg.sub(e_max, bound.F + R))
        else:
            self.unit_fused = alg.const(0)
        zero_ulp = 1 << (emin_r - m_r - R) if emin_r - m_r >= R else 0  # an ulp of zero below the unit: count it as 0 (stricter)
        self.unit_ulp = alg.ite(ud.is_zero, zero_ulp, alg.shl(1, alg.sub(alg.max(exp_d, emin_r), m_r + R)))
        finite = alg.not_(alg.or_(ud.is_inf, ud.is_nan))
        outside = alg.and_(alg.not_(ud.is_zero), alg.or_(alg.lt(ud.exp, e_lo), alg.lt(e_hi, ud.exp)))
        self.finite, self.outside, self.bound = finite, outside, bound
        self.model, self.lemma_count = model, 0

    def prove_lemmas(self, run: Runner) -> LemmaChain:
        """For one T-FDPA: prove the error of each step, so the final query only adds them up.

        Each summand loses less than one unit 2**(e_max - F) when aligned;
        the running sums of the aligned summands stay within (j+1) units of
        the exact running sums; the output is within the natural rounding
        error (1 ulp RZ, 1/2 ulp RNE) of the fixed-point sum.  Every lemma
        is proved by the solver before it is asserted.
        """
        alg, model, x = self.alg, self.model, self.x
        chain = LemmaChain(alg, run)
        if not (self.bound.fused and supports_fused_parts(model, x.K)) or model.F is None:
            return chain
        p = fused_parts(alg, model, x.a, x.b, x.c)
        sh = alg.sub(self.e_max, model.F + self.R)
        unit = self.unit_fused
        shifted = [alg.shl(v, sh) for v in p.aligned]
        X = self.exact_terms
        for k in range(len(X)):
            chain.prove(f"aligning summand {k} loses less than 2^(e_max-F)", alg.lt(alg.abs(alg.sub(shifted[k], X[k])), unit))
        exact_run = X[0]
        for j in range(1, len(X)):
            exact_run = alg.add(exact_run, X[j])
            chain.prove(f"running sum {j} in units of 2^R", alg.eq(alg.shl(p.prefix[j], sh), alg.add(alg.shl(p.prefix[j - 1], sh), shifted[j])))
            chain.prove(f"running sum {j} is within {j + 1} units of the exact one",
                        alg.lt(alg.abs(alg.sub(alg.shl(p.prefix[j], sh), exact_run)), alg.mul(unit, j + 1)))
        total = p.wrapped(alg, model.F, model.carry_bits)
        if model.carry_bits is not None:
            chain.prove("the register keeps every carry", alg.eq(total, p.total))
        natural = _table9(model, x.K).ulps
        err_round = alg.abs(alg.sub(self.d_value, alg.shl(total, sh)))
        chain.prove(f"rounding the fused sum errs by at most {natural} ulp",
                    alg.or_(alg.not_(self.finite), alg.le(alg.mul(err_round, natural.denominator), alg.mul(self.unit_ulp, natural.numerator))))
        self.lemma_count = len(chain.proven)
        return chain

    def script(self, lam: Fraction) -> str:
        """The query: a finite output beyond ``lam`` times the bound (or outside the assumed exponent range)."""
        alg, bound = self.alg, self.bound
        f, u = lam * bound.fused, lam * bound.ulps
        den = f.denominator * u.denominator
        rhs = alg.add(alg.mul(self.unit_fused, int(f * den)), alg.mul(self.unit_ulp, int(u * den)))
        beyond = alg.and_(self.finite, alg.or_(self.outside, alg.lt(rhs, alg.mul(self.err, den))))
        return alg.script(f"(assert {alg.raw_bool(beyond)})")


def error_bound(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    scale: Union[Fraction, int, str] = 1,
    fused: Optional[Union[Fraction, int, str]] = None,
    ulps: Optional[Union[Fraction, int, str]] = None,
    tight: bool = False,
    resolution: Union[Fraction, str] = Fraction(1, 64),
    lemmas: bool = True,
) -> QueryResult:
    """Is ``|Phi - exact| <= scale * (fused * 2**(e_max - F) + ulps * ulp(Phi))`` on the domain?

    ``fused`` defaults to L + 1 (the summands, Table 9), ``ulps`` to 1 for
    RZ outputs and 1/2 for RNE; ``ulp(Phi)`` is the quantum of the rounded
    result (the smallest subnormal's for zero).  Infinite outputs are out of
    scope.  Everything is computed exactly as integers in units of the
    smallest quantum of the domain, so keep exponent ranges (``exp``,
    ``cexp``) narrow for wide formats.  ``tight=True`` bisects the scale:
    ``extra["tight"]`` is the smallest scale proved (to ``resolution``),
    ``extra["attained"]`` the largest ratio error/bound a witness reached.

    For one T-FDPA with ``lemmas``, a proof goes in steps the solver checks
    one by one (each summand's alignment error, each running sum's, the
    output rounding's), then adds them up; a short first call looks for a
    witness before any lemma is proved.
    """
    prop = "error-bound"
    name, K, domain = _setup(model, name, K, domain, prop)
    bound = _table9(model, K)
    if fused is not None:
        bound = replace(bound, fused=Fraction(fused))
    if ulps is not None:
        bound = replace(bound, ulps=Fraction(ulps))
    scale, resolution = Fraction(scale), Fraction(resolution)
    if scale < 0 or resolution <= 0:
        raise InputError("error-bound: scale must be >= 0 and resolution > 0")
    run = Runner(solver, timeout, seed)
    formulas = [_ErrorFormula(model, K, domain, bound, narrow=True)]
    chains: list[Optional[LemmaChain]] = [None]

    def ask(lam: Fraction) -> tuple[str, Any, str]:
        """("holds", None, script) | ("fails", (witness, d, ratio), script) | ("unknown", reason, script)."""
        while True:
            f = formulas[-1]
            script = f.script(lam)
            # a short look for a witness first (fast when the bound is too small); proofs need the lemmas
            r = run.check(script, f.x.declared + ["d"], timeout=_QUICK) if lemmas and chains[-1] is None else None
            if r is None or r.verdict == "unknown":
                if lemmas and chains[-1] is None:
                    chains[-1] = f.prove_lemmas(run)
                    script = f.script(lam)
                r = run.check(script, f.x.declared + ["d"])
            chain = chains[-1]
            if chain is not None and chain.proven:
                script = chain.certificate(f.base_asserts, script.rstrip("\n").rsplit("\n", 1)[-1])
            if r.verdict == "unsat":
                return "holds", None, script
            if r.verdict == "unknown":
                return "unknown", r.reason, script
            w = f.x.witness(r.values)
            got = _replay_one(model, w)
            _expect_same("error-bound d", r.values["d"], got, w)
            ratio = _py_ratio(model, bound, w, got)
            if ratio is not None and ratio > lam:
                return "fails", (w, got, ratio), script
            if not f.narrow:
                raise ReplayError(f"error-bound witness {w} is within {lam} * bound (ratio {ratio})")
            # the output left the exponent range the narrow formula assumed: ask again over the full ranges
            formulas.append(_ErrorFormula(model, K, domain, bound, narrow=False))
            chains.append(None)

    verdict, info, script = ask(scale)
    extra: dict[str, object] = {"bound": bound.describe(scale), "scale": str(scale)}
    if verdict == "unknown":
        return _unknown(prop, name, model, K, domain, run, f"error bound {bound.describe(scale)}", info, smt2=script, extra=extra)
    if verdict == "holds":
        _check_nonempty(model, K, domain, run, prop)
    else:
        extra["ratio"] = str(info[2])
    if tight:
        extra.update(_bisect(ask, scale, verdict, info, resolution))
    if verdict == "holds":
        return _result(prop, "holds", name, model, K, domain, run, smt2=script, extra=extra,
                       reason=f"|Phi - exact| <= {bound.describe(scale)} for every input ({domain.describe()}, K={K})")
    w, got, ratio = info
    return _result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": got}, smt2=script, extra=extra,
                   reason=f"|Phi - exact| = {float(ratio):.6g} * ({bound.describe(Fraction(1))}) exceeds {bound.describe(scale)}")


def _bisect(ask: Callable[[Fraction], tuple[str, Any, str]], scale: Fraction, verdict: str, info: Any, resolution: Fraction) -> dict[str, object]:
    """Smallest scale that holds (to ``resolution``) and the largest ratio a witness attained."""
    hi: Optional[Fraction] = scale if verdict == "holds" else None
    lo = info[2] if verdict == "fails" else Fraction(0)  # every scale below lo fails (lo itself may hold)
    guess = max(scale, Fraction(1)) * 2
    while hi is None:  # find a scale that holds
        if guess > 1 << 20:
            return {"tight": None, "attained": str(lo), "tight_reason": "no scale up to 2**20 holds"}
        v, i, _ = ask(max(guess, lo))
        if v == "unknown":
            return {"tight": None, "attained": str(lo), "tight_reason": f"solver gave up: {i}"}
        if v == "holds":
            hi = max(guess, lo)
        else:
            lo = max(lo, i[2])
            guess *= 2
    while hi - lo > resolution:
        mid = (lo + hi) / 2
        mid = Fraction(int(mid / resolution * 2), 1) * resolution / 2 if mid.denominator > 2 * resolution.denominator else mid
        if not lo < mid < hi:
            break
        v, i, _ = ask(mid)
        if v == "unknown":
            return {"tight": str(hi), "attained": str(lo), "tight_reason": f"bisection stopped, solver gave up: {i}"}
        if v == "holds":
            hi = mid
        else:
            lo = max(lo, i[2])
    return {"tight": str(hi), "attained": str(lo)}


def _py_ratio(model: Model, bound: _Bound, w: Witness, d: int) -> Optional[Fraction]:
    """|Phi - exact| / bound for a concrete witness, in exact arithmetic (None for an infinite or NaN output)."""
    out = output_container(model)
    vd = _py_value(out, d)
    if vd is None or isinstance(vd, float):
        return None
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    exact = Fraction(0)
    for u, v in zip(w.a, w.b):
        pu, pv = to_fraction(fa, u), to_fraction(fb, v)
        assert isinstance(pu, Fraction) and isinstance(pv, Fraction), "finite inputs"
        exact += pu * pv
    pc = to_fraction(fc, w.c)
    assert isinstance(pc, Fraction)
    exact += pc
    err = abs(vd - exact)
    total = Fraction(0)
    if bound.fused:
        e = _py_alignment_exponent(model, w)
        if e is not None:
            total += bound.fused * Fraction(2) ** (e - bound.F)
    _, ed, _ = decode_scalar(out, d)
    total += bound.ulps * Fraction(2) ** (max(ed, bound.rfmt.emin) - bound.rfmt.man_bits)
    if total == 0:
        return None if err == 0 else Fraction(1 << 62)
    return err / total


# -- order independence -----------------------------------------------------------------------------


def _transpositions(model: Model, K: int) -> list[int]:
    """Adjacent transpositions (k, k+1) to test, those across a boundary of the model's grouping first."""
    size = model.L if model.L is not None and model.kind in _FDPA_KINDS else (model.P or 1)
    ks = list(range(K - 1))
    if model.block:
        ks = [k for k in ks if k // model.block == (k + 1) // model.block]  # scales stay with their positions
    if model.kind == "gtr-fdpa":
        size = 2  # even and odd lanes form separate groups
    return sorted(ks, key=lambda k: (0 if (k + 1) % max(size, 1) == 0 else 1, k))


def order_independence(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    canonical: bool = True,
) -> QueryResult:
    """Can permuting the products (a_k, b_k) change the output bits?

    Adjacent transpositions generate every permutation, so the property
    holds when each transposition is proved harmless; the first one that
    is not gives the witness (``extra["permutation"]``: output lane i takes
    input lane ``permutation[i]``).  Those crossing a chunk (K > L), pair
    (FTZ-AddMul) or even/odd group (GTR-FDPA) boundary are tried first.
    Block-scaled models only permute within a block.

    With ``canonical`` (the default) the formula builds exact sums and
    maxima of many operands in a fixed operand order (the algebra is exact,
    so their value is the same in any order): the permuted run of one fused
    sum then builds the same terms as the original, and only an order
    dependence through rounding, chunks or groups is left to the solver
    (``extra["identical_terms"]`` counts the transpositions settled so).
    """
    prop = "order-independence"
    name, K, domain = _setup(model, name, K, domain, prop)
    run = Runner(solver, timeout, seed)
    out = output_container(model)
    gens = _transpositions(model, K)
    reasons: list[str] = []
    first_script = ""
    same_terms = 0  # transpositions whose two runs built the very same output term
    for k in gens:
        perm = list(range(K))
        perm[k], perm[k + 1] = perm[k + 1], perm[k]
        alg = QueryAlgebra(canonical=canonical)
        x = InputSet.of(alg, model, K)
        x.restrict(domain)
        d = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
        dp = run_model(alg, model, [x.a[i] for i in perm], [x.b[i] for i in perm], x.c, x.scale_a, x.scale_b)
        declare_output(alg, "d", d, out.bits)
        declare_output(alg, "d_permuted", dp, out.bits)
        script = alg.script("(assert (not (= d d_permuted)))")
        first_script = first_script or script
        same_terms += d.raw == dp.raw and d.const == dp.const
        r = run.check(script, x.declared + ["d", "d_permuted"])
        if r.verdict == "unknown":
            reasons.append(f"swapping lanes {k} and {k + 1}: {r.reason}")
            continue
        if r.verdict == "unsat":
            continue
        w = x.witness(r.values)
        wp = Witness(tuple(w.a[i] for i in perm), tuple(w.b[i] for i in perm), w.c, w.scale_a, w.scale_b)
        got, got_p = _replay_one(model, w), _replay_one(model, wp)
        _expect_same("order-independence d", r.values["d"], got, w)
        _expect_same("order-independence d_permuted", r.values["d_permuted"], got_p, wp)
        if got == got_p:
            raise ReplayError(f"order-independence witness {w} gives the same output after swapping lanes {k} and {k + 1}")
        return _result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": got, "d_permuted": got_p},
                       smt2=script, extra={"permutation": perm},
                       reason=f"swapping lanes {k} and {k + 1} changes the output: {_show(out, got)} -> {_show(out, got_p)}")
    if reasons:
        return _unknown(prop, name, model, K, domain, run, "order independence", "; ".join(reasons), smt2=first_script)
    if gens:
        _check_nonempty(model, K, domain, run, prop)
    return _result(prop, "holds", name, model, K, domain, run, smt2=first_script,
                   extra={"transpositions": len(gens), "identical_terms": same_terms},
                   reason=(f"no permutation of the products changes the output ({domain.describe()}, K={K})" if gens
                           else f"nothing to permute (K={K})"))


# -- custom predicates ------------------------------------------------------------------------------

Predicate = Callable[[Algebra, dict, dict], Any]


def load_predicate(source: Union[str, "os.PathLike[str]", Predicate]) -> Predicate:
    """The ``predicate`` function of a Python file (or ``source`` itself when callable)."""
    if callable(source):
        return source
    path = os.fspath(source)
    if not os.path.isfile(path):
        raise InputError(f"custom: predicate file {path!r} does not exist")
    spec = importlib.util.spec_from_file_location(f"smtmma_predicate_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise InputError(f"custom: cannot load {path!r} as a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise InputError(f"custom: loading {path} failed: {type(e).__name__}: {e}") from None
    fn = getattr(module, "predicate", None)
    if not callable(fn):
        raise InputError(f"custom: {path} must define a function predicate(alg, inputs, outputs) returning a Bool term")
    return fn


def _call_predicate(fn: Predicate, alg: Algebra, inputs: dict[str, Int], outputs: dict[str, Int]) -> Bool:
    try:
        value = fn(alg, inputs, outputs)
    except Exception as e:
        raise InputError(f"custom: the predicate raised {type(e).__name__}: {e}") from None
    if isinstance(value, (bool, np.bool_)):
        return alg.bconst(bool(value))
    if not isinstance(value, Bool):
        raise InputError(f"custom: the predicate must return a Bool term (alg.eq, alg.lt, ...), got {type(value).__name__}")
    return value


def custom(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    predicate: Union[str, "os.PathLike[str]", Predicate, None] = None,
    models: Optional[dict[str, Model]] = None,
) -> QueryResult:
    """Does ``predicate(alg, inputs, outputs)`` hold for every input of the domain?

    ``outputs`` has the D pattern of ``model`` under ``name`` and of each
    of ``models`` (name -> Model, same operand formats) under its key.  A
    failing input is replayed and the predicate evaluated on it again with
    the concrete interpretation before it is reported.
    """
    prop = "custom"
    name, K, domain = _setup(model, name, K, domain, prop)
    if predicate is None:
        raise InputError("custom needs predicate= (a Python file defining predicate(alg, inputs, outputs))")
    fn = load_predicate(predicate)
    all_models: dict[str, Model] = {name: model, **(models or {})}
    for other_name, m in all_models.items():
        if (m.a_fmt, m.b_fmt, m.c_fmt, m.scale_fmt, m.block) != (model.a_fmt, model.b_fmt, model.c_fmt, model.scale_fmt, model.block):
            raise InputError(f"custom: model {other_name!r} reads other operand formats than {name!r}")
    run = Runner(solver, timeout, seed)
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    x.restrict(domain)
    outs: dict[str, Int] = {}
    decl: dict[str, str] = {}
    for i, (n, m) in enumerate(all_models.items()):
        outs[n] = run_model(alg, m, x.a, x.b, x.c, x.scale_a, x.scale_b)
        decl[n] = declare_output(alg, f"out{i}", outs[n], output_container(m).bits)
    holds = _call_predicate(fn, alg, x.terms(), outs)
    script = alg.script(f"(assert (not {alg.raw_bool(holds)}))")
    r = run.check(script, x.declared + list(decl.values()))
    if r.verdict == "unknown":
        return _unknown(prop, name, model, K, domain, run, "custom predicate", r.reason, smt2=script)
    if r.verdict == "unsat":
        _check_nonempty(model, K, domain, run, prop)
        return _result(prop, "holds", name, model, K, domain, run, smt2=script,
                       reason=f"the predicate holds for every input ({domain.describe()}, K={K})")
    w = x.witness(r.values)
    got = dict(zip(all_models, replay(list(all_models.values()), w)))
    for n in all_models:
        _expect_same(f"custom output {n}", r.values[decl[n]], got[n], w)
    if _eval_predicate(fn, model, x, w, got, all_models):
        raise ReplayError(f"custom: the predicate holds on the solver's witness {w} when evaluated concretely")
    return _result(prop, "fails", name, model, K, domain, run, witness=w, outputs=got, smt2=script,
                   reason="the predicate is false on this input")


def _eval_predicate(fn: Predicate, model: Model, x: InputSet, w: Witness, got: dict[str, int], all_models: dict[str, Model]) -> bool:
    """The predicate on concrete values (NumPy interpretation, one row)."""
    alg = NumpyAlgebra()
    values = list(w.a) + list(w.b) + [w.c] + list(w.scale_a or ()) + list(w.scale_b or ())
    fmts = [x.a_fmt] * x.K + [x.b_fmt] * x.K + [x.c_fmt] + [x.scale_fmt] * (len(values) - 2 * x.K - 1)
    inputs = {n: alg.input(np.array([v], dtype=np.int64), 0, (1 << f.bits) - 1) for n, v, f in zip(x.input_names, values, fmts) if f}
    outputs = {n: alg.input(np.array([v], dtype=np.int64), 0, (1 << output_container(m).bits) - 1)
               for (n, m), v in zip(all_models.items(), got.values())}
    value = _call_predicate(fn, alg, inputs, outputs)
    if value.const is not None:
        return bool(value.const)
    return bool(alg.value(value, 1)[0])


# -- registry ---------------------------------------------------------------------------------------

#: Property name -> function(model, *, name, K, domain, solver, timeout, seed, **options) -> QueryResult.
PROPERTIES: dict[str, Callable[..., QueryResult]] = {
    "symmetry": symmetry,
    "monotonicity": monotonicity,
    "carry-bits": carry_bits,
    "error-bound": error_bound,
    "order-independence": order_independence,
    "custom": custom,
}

_COMMON = ("name", "K", "domain", "solver", "timeout", "seed")


def check_property(prop: str, model: Model, **kw: Any) -> QueryResult:
    """Run property ``prop`` (a key of :data:`PROPERTIES`, ``_`` or ``-``, any case) on ``model``.

    Unknown properties raise :class:`UnknownNameError`; options a property
    does not take raise :class:`InputError` naming the ones it does.
    """
    key = str(prop).strip().lower().replace("_", "-")
    fn = PROPERTIES.get(key)
    if fn is None:
        raise UnknownNameError(f"unknown property {prop!r}; valid: {choices(PROPERTIES)}")
    params = [p for p in inspect.signature(fn).parameters if p != "model"]
    bad = [k for k in kw if k not in params]
    if bad:
        own = [p for p in params if p not in _COMMON]
        raise InputError(f"{key} has no option {bad[0]!r}; its options: {choices(own) or 'none'} (and {choices(_COMMON)})")
    return fn(model, **kw)
