"""Composed monotonicity proofs for one-FDPA models whose fused sum is rounded once at the end.

A single move (one input raised to its next value, :func:`monotonicity._moved`)
never lowers D when (1) the value the final rounding receives does not
decrease, and (2) the final rounding is monotone.  Bit-blasting both runs
and both roundings at once leaves a solver lost (the 300 s of issue 8); as a
chain each part is small:

1. in the model's own formula (both runs), the pre-rounding quantity of the
   raised input -- T-FDPA/ST/GST-FDPA's truncated sum at 2**(e_max - F)
   (Alg. 7-9 step 2), TR/GTR-FDPA's S at 2**(E - F2) (Alg. 10 step 3 /
   Alg. 11 step 4), E-FDPA's exact sum (Alg. 6) -- is a non-negative value
   in its static range, and not smaller than the original's;
2. the final rounding (the model's own :func:`convert_fixed` /
   :func:`round_pack` call) is monotone, on fresh variables of the same
   ranges: for all X1 <= X2, rho(X1) <= rho(X2);
3. the fresh variables are defined as the two runs' pre-rounding terms
   (a conservative definition: the solver substitutes them, nothing is
   identified in Python) and the property -- D of the larger input below
   D of the smaller -- is unsat.

Every step is a ``check-sat`` of one incremental script (a lemma-chain
block): the certificate stands alone.

Status (issue 8): lemma 2 and the composition take ~1 s for gfx942 f16f32;
lemma 1 is proved for raising c (~20 s for gfx942 f16f32, ~2 s for a
small TR-FDPA), but not within 60 s for raising a lane's a_k or b_k (the two
runs then align every summand at different e_max: the "gain of the raised
product exceeds the truncation loss" argument needs its own per-summand
lemmas).  :func:`monotonicity.monotonicity` does not call this; it uses
:mod:`_monotone_parts` (one T-FDPA) and :mod:`_monotone_cdna3` (one TR- or
GTR-FDPA), which have those per-summand lemmas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...encodings.algebra import Bool, Int
from ...encodings.fields import unpack
from ...encodings.rounding import convert_fixed, round_pack
from ...formats import Format, get_format
from ...models import Model
from ...proof_kernel.blocks import Block, chain_block
from ...proof_kernel.chain import chain_text
from ...simulate import output_format, run_model
from .._twins import InputSet, QueryAlgebra, Runner, declare_output, value_key
from ..formula import Domain

__all__ = ["composed_position", "supports_composed"]

#: the label under which each kind's encoding notes the value its final rounding receives
_PRE = {
    "t-fdpa": "truncated fused sum, before rounding",
    "st-fdpa": "truncated fused sum, before rounding",
    "gst-fdpa": "truncated fused sum, before rounding",
    "tr-fdpa": "rounded down with c, before the final rounding",
    "gtr-fdpa": "rounded down with c, before the final rounding",
    "e-fdpa": "exact sum, before rounding",
}


def supports_composed(model: Model, K: int) -> bool:
    """Whether the composed proof applies: one FDPA (K <= L, C inside it) of a kind with one final rounding."""
    return (model.kind in _PRE and model.L is not None and K <= model.L and not model.c_after
            and not getattr(model, "ieee_zero", False) and not getattr(model, "carry_bits", None))


class _NotingAlgebra(QueryAlgebra):
    """A :class:`QueryAlgebra` that keeps the encodings' ``note`` calls (label, term, exponent, shift, sign)."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[tuple[str, Int | None, Any, int, Any]] = []

    def note(self, label: str, x: Int | None = None, *, exp: Any = 0, shift: int = 0, neg: Any = None,
             fmt: Any = None, fields: Any = None) -> None:
        self.notes.append((label, x, exp, shift, neg))


@dataclass
class _Pre:
    """A pre-rounding value (-1)**neg * mag * 2**exp (neg None: ``mag`` is a signed integer)."""

    mag: Int
    exp: Int
    neg: Bool | None


def _fresh_int(alg: QueryAlgebra, name: str, like: Int) -> Int:
    """A fresh constant with ``like``'s static range (so the same width and the same circuits over it)."""
    w = like.width
    alg.decls.append(f"(declare-const {name} (_ BitVec {w}))")
    return Int(alg, name, like.lo, like.hi)


def _honest(alg: QueryAlgebra, x: Int) -> Int:
    """The same bit-vector with the full range of its width: comparisons on it are not folded by the static range."""
    if x.const is not None:
        return x
    w = x.width
    return Int(alg, x.raw, -(1 << (w - 1)), (1 << (w - 1)) - 1)


def _in_range(alg: QueryAlgebra, x: Int) -> Bool:
    """x lies in its static range (a fresh constant of that width may not; for a term the solver checks it)."""
    h = _honest(alg, x)
    return alg.and_(alg.le(x.lo, h), alg.le(h, x.hi))


def _nonneg(alg: QueryAlgebra, p: _Pre) -> Bool:
    return alg.le(0, _honest(alg, p.mag)) if p.neg is None else alg.or_(alg.not_(p.neg), alg.eq(p.mag, 0))


def _value_le(alg: QueryAlgebra, p: _Pre, q: _Pre) -> Bool:
    """|p| <= |q| as exact values mag * 2**exp (magnitudes >= 0), compared by leading-bit exponent, then bits."""
    mp, mq = (alg.abs(p.mag), alg.abs(q.mag)) if p.neg is None else (p.mag, q.mag)
    width = max(mp.hi.bit_length(), mq.hi.bit_length(), 1)
    np_, lp = alg.normalize(mp, width)
    nq, lq = alg.normalize(mq, width)
    ep, eq = alg.add(p.exp, lp), alg.add(q.exp, lq)
    bigger = alg.or_(alg.lt(ep, eq), alg.and_(alg.eq(ep, eq), alg.le(np_, nq)))
    return alg.or_(alg.eq(mp, 0), alg.and_(alg.ne(mq, 0), bigger))


def _rounding(alg: QueryAlgebra, model: Model, p: _Pre) -> Int:
    """The model's own final rounding of ``p`` (the call its encoding makes): bits in the output's container."""
    if model.kind == "e-fdpa":
        assert p.neg is not None
        return round_pack(alg, output_format(model), "rne", p.neg, p.mag, p.exp)
    conv = model.conversion
    return convert_fixed(alg, get_format(conv.fmt), conv.mode, p.mag, p.exp)


def _pre_of(model: Model, notes: list[tuple[str, Int | None, Any, int, Any]], alg: QueryAlgebra) -> list[_Pre]:
    out = []
    for label, x, exp, shift, neg in notes:
        if label == _PRE[model.kind] and x is not None:
            out.append(_Pre(x, alg.add(alg.lift(exp), shift), neg))
    return out


def composed_position(model: Model, K: int, domain: Domain, label: str, run: Runner,
                      moved: Any, out: Format) -> tuple[str, Block | None, str]:
    """Prove that raising input ``label`` never lowers D: ("unsat", block, "") or ("unknown"/"sat", None, why).

    ``moved``: :func:`monotonicity._moved`; ``out``: D's container format.
    """
    alg = _NotingAlgebra()
    x = InputSet.of(alg, model, K)
    x.restrict(domain)
    y = moved(alg, x, label, domain)
    alg.notes.clear()
    d1 = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
    n1 = len(alg.notes)
    d2 = run_model(alg, model, y.a, y.b, y.c, y.scale_a, y.scale_b)
    pre1, pre2 = _pre_of(model, alg.notes[:n1], alg), _pre_of(model, alg.notes[n1:], alg)
    if len(pre1) != 1 or len(pre2) != 1:
        return "unknown", None, f"not one final rounding per run ({len(pre1)}, {len(pre2)})"
    p, q = pre1[0], pre2[0]
    declare_output(alg, "d", d1, out.bits)
    declare_output(alg, "d_larger", d2, out.bits)
    u1, u2 = unpack(alg, out, d1), unpack(alg, out, d2)
    drop = alg.all([alg.not_(u1.is_nan), alg.not_(u2.is_nan), alg.lt(value_key(alg, out, d2), value_key(alg, out, d1))])

    # 1. the pre-rounding value grows (in range, non-negative), in the model's own formula
    grows = alg.all([_in_range(alg, p.mag), _in_range(alg, q.mag), _in_range(alg, p.exp), _in_range(alg, q.exp),
                     _nonneg(alg, p), _nonneg(alg, q), _value_le(alg, p, q)])
    # 2. the final rounding is monotone, on fresh variables of the same ranges
    fresh = []
    for tag, pre in (("1", p), ("2", q)):
        neg = alg.bvar(f"mono_neg{tag}") if pre.neg is not None else None
        fresh.append(_Pre(_fresh_int(alg, f"mono_mag{tag}", pre.mag), _fresh_int(alg, f"mono_exp{tag}", pre.exp), neg))
    f1, f2 = fresh
    premise = alg.all([_in_range(alg, f1.mag), _in_range(alg, f2.mag), _in_range(alg, f1.exp), _in_range(alg, f2.exp),
                       _nonneg(alg, f1), _nonneg(alg, f2), _value_le(alg, f1, f2)])
    cf = out
    r1, r2 = _rounding(alg, model, f1), _rounding(alg, model, f2)
    k1, k2 = value_key(alg, cf, r1), value_key(alg, cf, r2)
    ru1, ru2 = unpack(alg, cf, r1), unpack(alg, cf, r2)
    monotone = alg.or_(alg.not_(premise), alg.all([alg.not_(ru1.is_nan), alg.not_(ru2.is_nan), alg.le(k1, k2)]))
    # 3. the fresh variables defined as the runs' pre-rounding terms
    defs = [alg.eq(f.mag, r.mag) for f, r in ((f1, p), (f2, q))] + [alg.eq(f.exp, r.exp) for f, r in ((f1, p), (f2, q))]
    defs += [alg.not_(alg.xor(f.neg, r.neg)) for f, r in ((f1, p), (f2, q)) if f.neg is not None and r.neg is not None]
    steps = [("lemma 1: the pre-rounding value of the raised input is not smaller (both in range, non-negative)", grows),
             ("lemma 2: the final rounding is monotone (fresh variables of the same ranges)", monotone)]
    raws = [alg.raw_bool(goal) for _, goal in steps]
    define = f"(assert {alg.raw_bool(alg.all(defs))})"
    final = f"(assert {alg.raw_bool(drop)})"
    base = ["(set-logic QF_BV)", *alg.decls, *alg.defs, *alg.asserts]
    lines = list(base)
    for (what, _), raw in zip(steps, raws):
        r = run.check("\n".join(lines + [f"(assert (not {raw}))"]) + "\n", proof=True)

        if r.verdict != "unsat":
            return r.verdict, None, f"{what.split(':')[0]} of raising {label}: {r.verdict}" + (f" ({r.reason})" if r.reason else "")
        lines += [f"; {what}", "(push 1)", f"(assert (not {raw}))", "; expect: unsat", "(check-sat)", "(pop 1)", f"(assert {raw})"]
    lines += ["; the fresh variables are the two runs' pre-rounding values", define]
    r = run.check("\n".join(lines + [final]) + "\n")
    if r.verdict != "unsat":
        return r.verdict, None, f"composition for raising {label}: {r.verdict}" + (f" ({r.reason})" if r.reason else "")
    # the certificate: each lemma a fact over the runs' terms; the fresh variables' definitions join the statement
    text = chain_text([*alg.decls, *alg.defs], alg.asserts, [("fact", what, raw, None) for (what, _), raw in zip(steps, raws)],
                      f"(assert (and {alg.raw_bool(alg.all(defs))} {alg.raw_bool(drop)}))")
    return "unsat", chain_block(f"raising {label} never lowers D (pre-rounding value grows; rounding monotone)", text), ""
