"""Facts about the final rounding rho (encodings/rounding.py): its error and its monotonicity, for every FDPA.

* :func:`truncated_rounding`: (e_max, S, D) as one FDPA sums and rounds
  (Alg. 7-9), the glue lemmas' view of the model;
* error part: :func:`conversion_lemma`, rho(S * 2**(E-F)) is within 1 ulp
  (RZ) or 1/2 ulp (RNE) of S * 2**(E-F) when finite (Table 9);
* monotonicity: :func:`value_le` compares two
  pre-rounding values :class:`PreRounding` exactly; :func:`final_rounding`
  is the model's own rounding call;
* a chain-based proof of one FDPA, :func:`composed_position`, for models
  whose fused sum is rounded once at the end (not used by the property).

A single move (one input raised to its next value, :func:`monotonicity.raised_inputs`)
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
lemmas).  :func:`monotonicity.monotonicity` does not call this; it uses the proofs
by parts of :mod:`~smtmma.op_proofs.tfdpa` (one T-FDPA), :mod:`~smtmma.op_proofs.trfdpa`
and :mod:`~smtmma.op_proofs.gtrfdpa`, which have those per-summand lemmas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import signed, truncated_sum
from ..encodings.rounding import convert_fixed, round_pack
from ..encodings.terms import Term
from ..formats import Format, get_format
from ..models import Model
from ..proof_kernel.blocks import Block, chain_block
from ..proof_kernel.chain import LemmaChain, chain_text
from ..proof_kernel.parts import Part, all_finite, negated_script, ranged_var
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner, declare_output, value_key
from ..queries.formula import Domain
from ..simulate import output_format, run_model
from .fused_sum import Plan

__all__ = ["PreRounding", "composed_position", "conversion_lemma", "final_rounding",
           "negated_output_fact", "supports_composed", "truncated_rounding", "value_le"]


def truncated_rounding(alg: QueryAlgebra, plan: Plan, terms: list[Term]) -> tuple[Int, Int, Int]:
    """(e_max, S, D) of summands ``terms`` as one FDPA sums and rounds them (Alg. 7-9): e_max the largest non-zero
    summand's exponent (or the model's floor), S their sum aligned at e_max (RZ_F, units 2**(e_max - F)), D = rho(S)."""
    F = plan.model.F
    assert F is not None
    total, e_max = truncated_sum(alg, terms, F, emax_floor=plan.model.emax_floor)
    return e_max, total, convert_fixed(alg, plan.rfmt, plan.mode, total, alg.sub(e_max, F))


def conversion_lemma(plan: Plan, S_range: tuple[int, int], e_range: tuple[int, int], F: int) -> tuple[Part, dict[str, tuple[int, int]]]:
    """rho(S * u), u = 2**(E-F), when finite: its value D in units u is within ulps * W of S, W = ulp / u
    (W = 0 where the output's last place is below u: then the output is S * u exactly)."""
    alg = QueryAlgebra()
    S = ranged_var(alg, "S", *S_range)
    E = ranged_var(alg, "E", *e_range)
    d = convert_fixed(alg, plan.rfmt, plan.mode, S, alg.sub(E, F))
    ud = unpack(alg, plan.out, d)
    alg.assert_(all_finite(alg, ud))
    m, emin = plan.rfmt.man_bits, plan.rfmt.emin
    # k: the output pattern's last place (its container's: FP32 bits for E8M13) relative to u; w: ulp(d) relative to u
    k = alg.sub(alg.sub(ud.exp, ud.frac), alg.sub(E, F))
    w = alg.sub(alg.sub(alg.max(ud.exp, emin), m), alg.sub(E, F))
    sbits = max(S.hi, -S.lo).bit_length()
    # a finite output is below 2 |S| u; its last place is at most the larger of that and the subnormals' (underflow)
    top_k = max(0, sbits - ud.frac + 1, emin - ud.frac - (e_range[0] - F))
    top_w = max(0, ud.exp.hi - m - (e_range[0] - F), emin - m - (e_range[0] - F))  # an underflow to 0 has ulp >> u
    sd = signed(alg, ud.neg, ud.sig)
    # D: d in units u, exact whenever ulp(d) >= u (then d is a multiple of u: checked below)
    D_full = alg.shift(sd, k, max_left=top_k, max_right=ud.frac + 2)
    lim = 1 << (sbits + 1)
    D = alg.clamp(D_full, -lim, lim)  # keeps the composition narrow; near checks nothing was clamped
    W = alg.ite(alg.lt(w, 0), 0, alg.shl(1, alg.clamp(w, 0, top_w)))
    u = plan.ulps
    err = alg.abs(alg.sub(D, S))
    whole = alg.or_(alg.le(0, k), alg.eq(alg.shift(D, alg.neg(k), max_left=ud.frac + 2, max_right=0), sd))
    near = alg.all([alg.or_(alg.eq(sd, 0), alg.le(k, top_k)), alg.le(w, top_w), alg.eq(D, D_full), alg.le(0, w), whole,
                    alg.le(alg.mul(err, u.denominator), alg.mul(W, u.numerator))])
    exact = alg.all([alg.lt(w, 0), alg.lt(k, 0), alg.eq(alg.shl(S, alg.clamp(alg.neg(k), 0, ud.frac + 2)), sd),
                     alg.eq(D, S)])
    goal = alg.or_(near, exact)
    label = f"rounding to {plan.rfmt.name} ({plan.mode}) of S*2^(E-{F}), when finite: within {u} ulp, exact where ulp < 2^(E-{F})"
    rng = {"D": (min(D.lo, S.lo), max(D.hi, S.hi)), "W": (0, W.hi)}
    return Part(label, negated_script(alg, goal)), rng


# -- monotonicity: pre-rounding values compared; the chain-based proof ------------------------------------


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
class PreRounding:
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


def _nonneg(alg: QueryAlgebra, p: PreRounding) -> Bool:
    return alg.le(0, _honest(alg, p.mag)) if p.neg is None else alg.or_(alg.not_(p.neg), alg.eq(p.mag, 0))


def value_le(alg: QueryAlgebra, p: PreRounding, q: PreRounding) -> Bool:
    """|p| <= |q| as exact values mag * 2**exp (magnitudes >= 0), compared by leading-bit exponent, then bits."""
    mp, mq = (alg.abs(p.mag), alg.abs(q.mag)) if p.neg is None else (p.mag, q.mag)
    width = max(mp.hi.bit_length(), mq.hi.bit_length(), 1)
    np_, lp = alg.normalize(mp, width)
    nq, lq = alg.normalize(mq, width)
    ep, eq = alg.add(p.exp, lp), alg.add(q.exp, lq)
    bigger = alg.or_(alg.lt(ep, eq), alg.and_(alg.eq(ep, eq), alg.le(np_, nq)))
    return alg.or_(alg.eq(mp, 0), alg.and_(alg.ne(mq, 0), bigger))


def final_rounding(alg: QueryAlgebra, model: Model, p: PreRounding) -> Int:
    """The model's own final rounding of ``p`` (the call its encoding makes): bits in the output's container."""
    if model.kind == "e-fdpa":
        assert p.neg is not None
        return round_pack(alg, output_format(model), "rne", p.neg, p.mag, p.exp)
    conv = model.conversion
    return convert_fixed(alg, get_format(conv.fmt), conv.mode, p.mag, p.exp)


def _pre_of(model: Model, notes: list[tuple[str, Int | None, Any, int, Any]], alg: QueryAlgebra) -> list[PreRounding]:
    out = []
    for label, x, exp, shift, neg in notes:
        if label == _PRE[model.kind] and x is not None:
            out.append(PreRounding(x, alg.add(alg.lift(exp), shift), neg))
    return out


def composed_position(model: Model, K: int, domain: Domain, label: str, run: Runner,
                      moved: Any, out: Format) -> tuple[str, Block | None, str]:
    """Prove that raising input ``label`` never lowers D: ("unsat", block, "") or ("unknown"/"sat", None, why).

    ``moved``: :func:`monotonicity.raised_inputs`; ``out``: D's container format.
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
                     _nonneg(alg, p), _nonneg(alg, q), value_le(alg, p, q)])
    # 2. the final rounding is monotone, on fresh variables of the same ranges
    fresh = []
    for tag, pre in (("1", p), ("2", q)):
        neg = alg.bvar(f"mono_neg{tag}") if pre.neg is not None else None
        fresh.append(PreRounding(_fresh_int(alg, f"mono_mag{tag}", pre.mag), _fresh_int(alg, f"mono_exp{tag}", pre.exp), neg))
    f1, f2 = fresh
    premise = alg.all([_in_range(alg, f1.mag), _in_range(alg, f2.mag), _in_range(alg, f1.exp), _in_range(alg, f2.exp),
                       _nonneg(alg, f1), _nonneg(alg, f2), value_le(alg, f1, f2)])
    cf = out
    r1, r2 = final_rounding(alg, model, f1), final_rounding(alg, model, f2)
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


def negated_output_fact(chain: LemmaChain, alg: QueryAlgebra, fmt: Format, d: Int, d2: Int, label: str,
                        uses: Sequence[Optional[int]], what: str = "D", *, applied: bool = False) -> Unpacked:
    """Prove, in a symmetry query's formula, that the output ``d2`` of the negated run decodes (``fmt``) to the fields
    of ``d`` with the sign flipped -- both zero or both NaN otherwise -- from the facts ``uses`` (its rounding's input
    negated: RNE and RZ are sign-symmetric) and, with ``applied``, every lemma applied so far (a rounding's own, e.g.
    :func:`~smtmma.op_proofs.fused_sum.negated_rounded_sum2`).  Returns ``d2`` decoded, the next step's operand."""
    u, u2 = unpack(alg, fmt, d), unpack(alg, fmt, d2)
    flags = [(u2.is_nan, u.is_nan), (u2.is_inf, u.is_inf), (u2.is_zero, u.is_zero)]
    chain.prove(f"{label}: {what} of the negated run decodes to the fields of {what}, sign flipped (unless zero or NaN)",
                alg.all([*(alg.not_(alg.xor(x, y)) for x, y in flags), alg.eq(u2.sig, u.sig), alg.eq(u2.exp, u.exp),
                         alg.or_(alg.or_(u.is_zero, u.is_nan), alg.xor(u2.neg, u.neg))]), uses=uses, applied=applied)
    return u2
