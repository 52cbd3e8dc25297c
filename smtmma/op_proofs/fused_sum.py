"""Facts about the fused sum (encodings/fused_sum.py) every FDPA shares: its plan, summands, accumulation, sign.

* :class:`Plan`: a one-FDPA model's shape -- formats, the exponent range of
  the alignment, the common scale R every value is an integer of, the
  ranges of the summands (products of A x B lanes, and c);
* error parts (Table 9 of MMA-Sim, 000 §6.1: "the errors are additive"),
  each a check-sat on its own variables expecting unsat:
  :func:`summand_lemma` (one summand aligned at any E >= its exponent is
  within one unit 2**(E - F) of its value: RZ_F on either side, RD_F never
  above) and :func:`accumulate_lemma` (the running sums of aligned and of
  floored summands stay within the count of inexact ones);
  :func:`glue_inputs` starts every glue lemma (the model's own formula);
* sign lemmas of symmetry (Phi(-A, B, -C) = -Phi(A, B, C)):
  :func:`negated_sum_lemmas` proves a sum of negated operands is the negated
  sum, operand by operand and running sum by running sum (the operands from
  :func:`sum_operands`); :func:`negated_rounded_sum2` applies the lemmas that
  a rounded sum of two negated operands (an FMA, an FTZ-Add) keeps its fields
  with the sign flipped.

The ops' proofs (:mod:`~smtmma.op_proofs.tfdpa`, :mod:`~smtmma.op_proofs.trfdpa`,
:mod:`~smtmma.op_proofs.gtrfdpa`, :mod:`~smtmma.op_proofs.gstfdpa`) build
on these; applying a lemma stated on one generic summand to each of the
model's is the step no solver checks.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import accumulate
from typing import Any, Callable, Optional, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import aligned, exact_sum2, signed
from ..encodings.rounding import round_pack
from ..encodings.terms import Term, input_term, product
from ..encodings.tfdpa import scaled_product
from ..formats import Format, carried_in, get_format
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import lemma
from ..proof_kernel.parts import Part, all_finite, between, implies, negated_script, ranged_var
from ..queries.query_algebra import InputSet, QueryAlgebra, container_format
from ..simulate import decode_input, lane_scales, output_format, run_model

__all__ = ["Plan", "accumulate_lemma", "ahead_fact", "ahead_step", "carry_fact", "carry_step", "glue_inputs", "lane_summand", "negated_rounded_sum2", "negated_sum_lemmas",
           "ordered_step", "ordered_sums", "plan_scales", "rounded_output_facts", "scales_not_nan", "sum_operands", "summand_lemma"]


class Plan:
    """The model's shape: formats, exponent ranges, the common scale R, and the ranges of every cut point."""

    def __init__(self, model: Model, K: int) -> None:
        self.model, self.K = model, K
        self.fa, self.fb, self.fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
        fd = output_format(model)
        self.fd = carried_in(fd)  # the format C is widened to (run_model)
        if model.kind == "e-fdpa":
            self.rfmt, self.mode, self.ulps = fd, "rne", Fraction(1, 2)
        else:
            conv = model.conversion
            self.rfmt, self.mode = get_format(conv.fmt), conv.mode
            self.ulps = Fraction(1) if conv.mode in ("rz", "rd", "ru") else Fraction(1, 2)
        self.out = container_format(self.rfmt)
        #: block-scaled products (ST-FDPA, Alg. 8 line 4): each lane's scales join its product's exponent
        self.fs = get_format(model.scale_fmt) if model.scale_fmt is not None and model.kind == "st-fdpa" else None
        # static ranges of the summands (built once on scratch variables)
        alg = QueryAlgebra()
        uc = decode_input(alg, self.fc, alg.var("c", self.fc.bits), self.fd.name)
        self.tc = input_term(uc)
        self.use_summand(lane_summand(alg, self)[0])

    def use_summand(self, tp: Term) -> None:
        """Take ``tp`` (a product, or GST-FDPA's group summand) as the non-c summand: its ranges set e_lo, e_hi, R."""
        model, F = self.model, self.model.F or 0
        self.tp = tp
        lsb = min(tp.exp.lo - tp.frac, self.tc.exp.lo - self.tc.frac)
        self.e_lo = min(tp.exp.lo, self.tc.exp.lo) - 1  # the floor zero summands take
        self.e_hi = max(tp.exp.hi, self.tc.exp.hi)
        if model.emax_floor is not None:
            self.e_lo, self.e_hi = max(self.e_lo, model.emax_floor), max(self.e_hi, model.emax_floor)
        F2 = model.F2 or F
        self.R = min(lsb, self.e_lo - max(F, F2) - 1, self.rfmt.emin - self.rfmt.man_bits)


def lane_summand(alg: QueryAlgebra, plan: Plan, suffix: str = "") -> tuple[Term, Bool]:
    """One lane's summand on fresh patterns ``a``, ``b`` (and scales ``sa``, ``sb`` when block-scaled), and the
    premise that they are finite (a scale not NaN): the product as the model forms it (Alg. 7 step 1, Alg. 8 line 4),
    of the inputs as the unit reads them (converted exactly first with ``via``: an FP8 subnormal is a normal FP16)."""
    via = plan.model.via
    ua = decode_input(alg, plan.fa, alg.var(f"a{suffix}", plan.fa.bits), via)
    ub = decode_input(alg, plan.fb, alg.var(f"b{suffix}", plan.fb.bits), via)
    if plan.fs is None:
        return scaled_product(alg, ua, ub)[0], all_finite(alg, ua, ub)
    sa = unpack(alg, plan.fs, alg.var(f"sa{suffix}", plan.fs.bits))
    sb = unpack(alg, plan.fs, alg.var(f"sb{suffix}", plan.fs.bits))
    return scaled_product(alg, ua, ub, sa, sb)[0], alg.and_(all_finite(alg, ua, ub), alg.not_(alg.or_(sa.is_nan, sb.is_nan)))


def plan_scales(alg: QueryAlgebra, plan: Plan, x: InputSet) -> tuple[Optional[list[Unpacked]], Optional[list[Unpacked]], Bool]:
    """Each lane's decoded scales (its block's: lane k reads scale k // block) and the premise that none is NaN;
    (None, None, true) when the plan is not block-scaled."""
    if plan.fs is None or x.scale_a is None or x.scale_b is None:
        return None, None, alg.bconst(True)
    sa, sb = lane_scales(alg, plan.model, x.scale_a, x.scale_b, plan.K)
    return sa, sb, scales_not_nan(alg, plan.model, x)  # decoded above, once


def scales_not_nan(alg: QueryAlgebra, model: Model, x: InputSet) -> Bool:
    """The premise that no block scale of ``x`` is NaN (a NaN scale makes D NaN: ST-FDPA's Alg. 8, GST-FDPA's Alg. 9);
    true for a model without scales."""
    if model.scale_fmt is None or x.scale_a is None or x.scale_b is None:
        return alg.bconst(True)
    fs = get_format(model.scale_fmt)
    return alg.all(alg.not_(unpack(alg, fs, v).is_nan) for v in [*x.scale_a, *x.scale_b])


def glue_inputs(plan: Plan) -> tuple[QueryAlgebra, InputSet, list[Unpacked], list[Unpacked], Unpacked, Int]:
    """(algebra, inputs, decoded a's, decoded b's, decoded c, the model's output term) of the glue lemma's query."""
    g = QueryAlgebra()
    x = InputSet.of(g, plan.model, plan.K)
    ua = [unpack(g, plan.fa, v) for v in x.a]
    ub = [unpack(g, plan.fb, v) for v in x.b]
    uc = decode_input(g, plan.fc, x.c, plan.fd.name)
    return g, x, ua, ub, uc, run_model(g, plan.model, x.a, x.b, x.c, x.scale_a, x.scale_b)


def summand_lemma(plan: Plan, which: str, *, floor: bool = False,
                  summand: Optional[Callable[[QueryAlgebra], tuple[Term, Bool]]] = None,
                  what: str = "") -> tuple[Part, dict[str, tuple[int, int]]]:
    """One summand aligned at any E >= its exponent, in units u = 2**(E-F) (the summand's own variables and E).

    Proves: Q (its exact value floored to units u) is the floor, in the
    summand's own scale (Q * 2**d <= s < (Q + 1) * 2**d, d = E - F - lsb, d
    clamped where Q is 0 or -1; exact when d <= 0, sticky when not), and the
    aligned summand A (RZ_F, or RD_F when ``floor``) is Q or, only when the
    value is inexact and negative (RZ), Q + 1.  ``summand``: builds another
    non-c summand on fresh variables (the term and its premise; GST-FDPA's
    group summand), ``what`` names it.
    """
    model = plan.model
    F = model.F
    assert F is not None
    alg = QueryAlgebra()
    if which == "c":
        uc = decode_input(alg, plan.fc, alg.var("c", plan.fc.bits), plan.fd.name)
        t, hyp = input_term(uc), all_finite(alg, uc)
    else:
        t, hyp = (summand or (lambda a: lane_summand(a, plan)))(alg)
    E = ranged_var(alg, "E", plan.e_lo, plan.e_hi)
    alg.assert_(hyp)
    alg.assert_(alg.or_(alg.eq(t.sig, 0), alg.le(t.exp, E)))
    A = aligned(alg, t, E, F, floor=floor)
    Q = aligned(alg, t, E, F, floor=True)
    s = signed(alg, t.neg, t.sig)
    d = alg.sub(alg.sub(E, F), alg.sub(t.exp, t.frac))  # right shift from the summand's last place to u
    span = t.sig.hi.bit_length() + 1
    dr = alg.clamp(d, 0, span)
    left = alg.clamp(alg.neg(d), 0, max(0, F - t.frac))
    rem = alg.sub(s, alg.shl(Q, dr))
    exact_case = alg.and_(alg.le(d, 0), alg.eq(Q, alg.shl(s, left)))
    floor_case = alg.all([alg.lt(0, d), alg.le(0, rem), alg.lt(rem, alg.shl(1, dr)),
                          alg.or_(alg.le(d, span), alg.or_(alg.eq(Q, 0), alg.eq(Q, -1)))])
    sticky = alg.and_(alg.lt(0, d), alg.ne(rem, 0))
    step = alg.sub(A, Q)
    if floor:
        link = alg.eq(step, 0)
    else:
        link = alg.eq(step, alg.ite(alg.and_(t.neg, sticky), 1, 0))
    goal = alg.all([alg.or_(exact_case, floor_case), link, between(alg, A, A.lo, A.hi), between(alg, Q, Q.lo, Q.hi)])
    scales = "" if plan.fs is None else f", scaled by 2^(e_sa + e_sb) ({plan.fs.name})"
    what = "c" if which == "c" else what or f"a*b ({plan.fa.name} x {plan.fb.name}{scales})"
    side = "RD_F: A = Q" if floor else "RZ_F: A = Q + (1 if negative and inexact)"
    label = f"summand {what} at any E >= its exponent, F={F}: Q = floor(x / 2^(E-F)) exactly; {side}"
    return Part(label, negated_script(alg, goal)), {"A": (A.lo, A.hi), "Q": (Q.lo, Q.hi)}


def accumulate_lemma(n: int, a_rng: tuple[int, int], q_rng: tuple[int, int], s_rng: tuple[int, int],
                     n_rng: tuple[int, int]) -> Part:
    """Adding one summand to the running sums: 0 <= P - M <= C stays true (P: aligned, M: floored, C: inexact count).

    Applied once per summand (from P = M = C = 0), it gives 0 <= S - N <= #inexact
    for the model's sum S of aligned summands and N the sum of their floors.
    """
    alg = QueryAlgebra()
    P = ranged_var(alg, "P", min(0, s_rng[0]), max(0, s_rng[1]))
    M = ranged_var(alg, "M", min(0, n_rng[0]), max(0, n_rng[1]))
    C = ranged_var(alg, "C", 0, n)
    a, q, st = ranged_var(alg, "A", *a_rng), ranged_var(alg, "Q", *q_rng), alg.bvar("inexact")
    alg.assert_(alg.and_(alg.le(0, alg.sub(P, M)), alg.le(alg.sub(P, M), C)))
    alg.assert_(alg.or_(alg.eq(a, q), alg.and_(st, alg.eq(a, alg.add(q, 1)))))
    diff = alg.sub(alg.add(P, a), alg.add(M, q))
    goal = alg.and_(alg.le(0, diff), alg.le(diff, alg.add(C, alg.b2i(st))))
    return Part("accumulate: if 0 <= P - M <= C and A - Q is 0, or 1 when inexact, then "
                  "0 <= (P + A) - (M + Q) <= C + inexact (once per summand, from 0)", negated_script(alg, goal))


# -- symmetry: a sum of negated operands ----------------------------------------------------------------


def sum_operands(alg: QueryAlgebra, total: Int) -> Optional[list[Int]]:
    """The operands ``sum_all`` added up to ``total``, in its order (None when not found, or reordered: ``canonical``)."""
    if alg.canonical:
        return None
    return next((list(g) for o, g in alg.nary if o.raw == total.raw), None)


def negated_sum_lemmas(chain: LemmaChain, alg: QueryAlgebra, terms: Optional[Sequence[Int]], neg_terms: Optional[Sequence[Int]],
                       total: Int, neg_total: Int, uses: Sequence[Sequence[Optional[int]]], *, operand: str, whole: str,
                 prefix: str = "", premise: Optional[Bool] = None) -> None:
    """Prove ``neg_total = -total`` operand by operand and running sum by running sum (left to right, as ``sum_all``).

    ``uses[k]``: the lemmas operand k rests on; the running sums are rebuilt
    from 0 by the same additions, so they are the very terms of the sum.
    Labels: "<prefix><operand> k ...", "<prefix>running sum k ...", "<whole> ...".
    :attr:`LemmaChain.last` is the final lemma.  ``premise``: every lemma is
    stated where it holds (a chained FDPA's c that is NaN keeps its sign).
    """
    when = (lambda goal: goal) if premise is None else (lambda goal: alg.or_(alg.not_(premise), goal))  # noqa: E731
    if terms is None or neg_terms is None or len(terms) != len(neg_terms):
        chain.prove(f"{whole} of the negated inputs is minus {whole}", when(alg.eq(neg_total, alg.neg(total))),
                    uses=[i for u in uses for i in u])
        return
    run = neg_run = alg.const(0)
    last: Optional[int] = None
    for k, (x, y) in enumerate(zip(terms, neg_terms)):
        chain.prove(f"{prefix}{operand} {k} of the negated inputs is minus {operand} {k}", when(alg.eq(y, alg.neg(x))),
                    uses=uses[k] if k < len(uses) else [])
        this = chain.last
        run, neg_run = alg.add(run, x), alg.add(neg_run, y)
        chain.prove(f"{prefix}running sum {k} of the negated inputs is minus running sum {k}", when(alg.eq(neg_run, alg.neg(run))),
                    uses=[this, last])
        last = chain.last
    chain.prove(f"{whole} of the negated inputs is minus {whole}", when(alg.eq(neg_total, alg.neg(total))), uses=[last])


Operand = Sequence[Unpacked]  # one decoded input (its value), or two (their exact product, Alg. 7 lines 3-4)


def _operand_term(g: QueryAlgebra, us: Sequence[Unpacked]) -> Term:
    """The exact term of an :data:`Operand`: the input's value, or the two inputs' product."""
    return input_term(us[0]) if len(us) == 1 else product(g, us[0], us[1])[0]


def _fields(us: Sequence[Unpacked]) -> list:
    """An :data:`Operand`'s lemma arguments: (neg, sig, exp) of each input."""
    return [f for u in us for f in (u.neg, u.sig, u.exp)]


def _operands(g: QueryAlgebra, v: Sequence, shapes: Sequence[Operand]) -> list[Term]:
    """The terms of operands rebuilt on a lemma's parameters ``v`` (laid out as :func:`_fields`)."""
    out, i, no = [], 0, g.bconst(False)
    for us in shapes:
        rebuilt = [Unpacked(v[i + 3 * j], v[i + 3 * j + 2], v[i + 3 * j + 1], u.frac, no, no, no) for j, u in enumerate(us)]
        out.append(_operand_term(g, rebuilt))
        i += 3 * len(us)
    return out


def _same_sum(g: QueryAlgebra, s: Sequence, s2: Sequence) -> Bool:
    """Two (neg, mag, lsb, sticky) of an exact sum (:func:`~smtmma.encodings.fused_sum.exact_sum2`) are one another
    negated: the same magnitude, last place and sticky bit, the opposite sign unless the sum is zero.  The sum's
    lemma concludes it and the rounding's assumes it: one term, so the solver matches them."""
    (neg, mag, lsb, sticky), (neg2, mag2, lsb2, sticky2) = s, s2
    return g.all([g.eq(mag2, mag), g.eq(lsb2, lsb), g.not_(g.xor(sticky2, sticky)),
                  g.or_(g.and_(g.eq(mag, 0), g.not_(sticky)), g.xor(neg2, neg))])


def negated_rounded_sum2(chain: LemmaChain, alg: QueryAlgebra, label: str, fmt: Format, mode: str, x: Operand, y: Operand,
                         x2: Operand, y2: Operand) -> bool:
    """Apply, at a symmetry query's terms, two lemmas: :func:`~smtmma.encodings.fused_sum.exact_sum2` of two operands
    negated (``x2``, ``y2``: decoded inputs with the fields of ``x``, ``y``, the sign of the first input of each
    flipped unless zero) has the same magnitude, last place and sticky bit, and the opposite sign unless the sum
    is zero; and rounding (``fmt``, ``mode``) such a (neg, mag, lsb, sticky) gives the same zero, infinity,
    significand and exponent, the opposite sign unless zero.  An operand is a decoded input, or two (an FMA's product
    a*b); ``label`` names the op.

    Each lemma is stated on fresh constants and proved once per shape: the sum's on the inputs' decoded fields,
    whose ranges a solver reads off the decoding rather than the run's cone; the rounding's on the sum's (neg, mag,
    lsb, sticky).  The cut between them is an equality of magnitudes, which the solver substitutes, so the
    rounding's proof compares one circuit with itself but for the sign.  False (and the chain stops) when one is not
    proved.  The same steps as facts in the query's formula (window leads, placed operands, their sum, the
    output) make the solver relate two copies of the window adder and the rounding through the run's whole cone:
    30-60 s per FP64 FMA, where the sum's lemma takes 35 s once (sm80 f64f64 symmetry: about 300 s before, 44 s
    after)."""
    shapes = [x, y, x2, y2]

    def summed(g: QueryAlgebra, v: Sequence) -> Bool:
        tx, ty, tx2, ty2 = _operands(g, v, shapes)
        n = len(x) + len(y)
        same_in = []
        for j in range(n):  # input j of the negated run: the same fields; the first input of each operand flipped
            neg, sig, exp = v[3 * j: 3 * j + 3]
            neg2, sig2, exp2 = v[3 * (n + j): 3 * (n + j) + 3]
            sign = g.or_(g.xor(neg2, neg), g.eq(sig, 0)) if j in (0, len(x)) else g.not_(g.xor(neg2, neg))
            same_in.append(g.all([g.eq(sig2, sig), g.eq(exp2, exp), sign]))
        same = _same_sum(g, exact_sum2(g, tx, ty), exact_sum2(g, tx2, ty2))
        return g.or_(g.not_(g.all(same_in)), same)

    args = [f for op in shapes for f in _fields(op)]
    if not chain.establish(lemma(f"{label}: the exact sum of two operands, each negated (the sign of its first input "
                                 "flipped unless zero), has the same magnitude, last place and sticky bit, and the "
                                 "opposite sign unless the sum is zero", summed, args), args):
        return False
    out = container_format(fmt)

    def rounding(g: QueryAlgebra, v: Sequence) -> Bool:
        s, s2 = v[:4], v[4:]
        premise = _same_sum(g, s, s2)
        z, z2 = (unpack(g, out, round_pack(g, fmt, mode, *t)) for t in (s, s2))
        same = g.all([g.not_(g.xor(z2.is_zero, z.is_zero)), g.not_(g.xor(z2.is_inf, z.is_inf)), g.eq(z2.sig, z.sig),
                      g.eq(z2.exp, z.exp), g.or_(z.is_zero, g.xor(z2.neg, z.neg))])
        return g.or_(g.not_(premise), same)

    tx, ty, tx2, ty2 = (_operand_term(alg, op) for op in shapes)
    args = [*exact_sum2(alg, tx, ty), *exact_sum2(alg, tx2, ty2)]
    return chain.establish(lemma(f"{label}: {mode.upper()}-{fmt.name} of a (neg, mag, lsb, sticky) and of its negation "
                                 "(unless zero) has the same fields with the sign flipped (unless zero)", rounding, args), args)


def carry_step(g: Any, v: Sequence[Int], G: int, j: int) -> Bool:
    """A running sum's carry step (shift G constant): R2 = R + X and M2 = M + q, floor(R / 2**G) - M in [0, j - 1]
    and floor(X / 2**G) = q give floor(R2 / 2**G) - M2 in [0, j] (the remainders' carries: at most one per summand)."""
    R, M, X, q, R2, M2 = v
    before, after = g.sub(g.shr(R, G), M), g.sub(g.shr(R2, G), M2)
    return implies(g, [g.eq(R2, g.add(R, X)), g.eq(M2, g.add(M, q)), g.le(0, before), g.le(before, j - 1), g.eq(g.shr(X, G), q)],
                   g.and_(g.le(0, after), g.le(after, j)))


def ahead_step(g: Any, v: Sequence[Int], j: int) -> Bool:
    """An aligned running sum's step: P2 = P + a and M2 = M + q, P - M in [0, j] and a - q in [0, 1] give
    P2 - M2 in [0, j + 1]."""
    P, M, a, q, P2, M2 = v
    before, step, after = g.sub(P, M), g.sub(a, q), g.sub(P2, M2)
    return implies(g, [g.eq(P2, g.add(P, a)), g.eq(M2, g.add(M, q)), g.le(0, before), g.le(before, j), g.le(0, step), g.le(step, 1)],
                   g.and_(g.le(0, after), g.le(after, j + 1)))


def rounded_output_facts(chain: LemmaChain, formula: Any, plan: Plan, fin: Bool, finite: str, rho: Int, glue: str, S: Int,
                         G: int, unit: str, uses: Sequence[Optional[int]] = ()) -> None:
    """The last facts of an error-bound chain (``formula``: the query's, in relative units): a finite D has finite
    inputs (``fin``, the fact's label ``finite``), on finite inputs D is ``rho`` (the glue, label ``glue``), and a finite
    D is a whole number of units 2**G (``unit``: their name) within the rounding's ulps of S (``uses``: facts it also
    needs)."""
    alg = formula.alg
    chain.prove(finite, implies(alg, [formula.finite], fin), uses=[])
    finite_inputs = chain.last
    chain.prove(glue, implies(alg, [fin], alg.eq(formula.d, rho)), uses=[])
    glued = chain.last
    view, nat = formula.d_view, plan.ulps
    Du, W = alg.shr(view.value, G), alg.shr(view.ulp, G)
    chain.prove(f"a finite D is a whole number of units {unit}, within {nat} ulp of S",
                implies(alg, [formula.finite], alg.all([alg.not_(view.outside), alg.eq(alg.low_bits(view.value, G), 0),
                                                        alg.le(alg.mul(alg.abs(alg.sub(Du, S)), nat.denominator),
                                                               alg.mul(W, nat.numerator))])),
                uses=[*uses, finite_inputs, glued])


def carry_fact(chain: LemmaChain, R: Int, M: Int, X: Int, q: Int, G: int, j: int, label: str,
               uses: Sequence[Optional[int]]) -> Optional[tuple[Int, Int]]:
    """One step of an exact running sum R against its floors' sum M: :func:`carry_step` proved on fresh constants,
    applied to R2 = R + X and M2 = M + q, then the fact ``label`` it gives (floor(R2 / 2**G) - M2 in [0, j]) proved
    under ``uses``; (R2, M2), or None when the chain stops."""
    alg = chain.alg
    R2, M2 = alg.add(R, X), alg.add(M, q)
    args = [R, M, X, q, R2, M2]
    if not chain.establish(lemma(f"exact running sum {j}: whole units 2^G above the floors' sum stay within [0, {j}]",
                                 lambda g, v: carry_step(g, v, G, j), args), args):
        return None
    carry = alg.sub(alg.shr(R2, G), M2)
    chain.prove(label, alg.and_(alg.le(0, carry), alg.le(carry, j)), uses=uses, applied=[chain.applied_last])
    return R2, M2


def ahead_fact(chain: LemmaChain, P: Int, M: Int, a: Int, q: Int, P2: Int, M2: Int, j: int, label: str,
               uses: Sequence[Optional[int]], case: Optional[Bool] = None) -> bool:
    """One step of a running sum P2 = P + a against M2 = M + q: :func:`ahead_step` proved on fresh constants and
    applied, then the fact ``label`` it gives (P2 - M2 in [0, j + 1]; under ``case`` when given) proved under ``uses``;
    False when the chain stops."""
    alg = chain.alg
    args = [P, M, a, q, P2, M2]
    if not chain.establish(lemma(f"aligned running sum {j}: above the floors' sum by at most {j + 1}",
                                 lambda g, v: ahead_step(g, v, j), args), args):
        return False
    ahead = alg.sub(P2, M2)
    goal = alg.and_(alg.le(0, ahead), alg.le(ahead, j + 1))
    chain.prove(label, goal if case is None else implies(alg, [case], goal), uses=uses, applied=[chain.applied_last])
    return True


def ordered_step(g: Any, v: Sequence[Int]) -> Bool:
    """0 <= x <= x' and 0 <= y <= y' give 0 <= x + y <= x' + y' (two runs' running sums, one addend each)."""
    x, x2, y, y2 = v
    return implies(g, [g.le(0, x), g.le(x, x2), g.le(0, y), g.le(y, y2)],
                   g.and_(g.le(0, g.add(x, y)), g.le(g.add(x, y), g.add(x2, y2))))


def ordered_sums(chain: LemmaChain, alg: QueryAlgebra, xs: Sequence[Int], ys: Sequence[Int]) -> Optional[list[str]]:
    """Two runs' sums of addends, ``alg.sum_all(xs)`` and ``alg.sum_all(ys)`` (left to right, as the models add): the
    lemma :func:`ordered_step` (on one range that holds every running sum) applied at each running sum, so that
    xs[k] >= 0 and xs[k] <= ys[k] for every k (facts the caller proves) give 0 <= sum xs <= sum ys by Boolean steps
    alone (adding inequalities is what bit-blasting does worst: "raising an early lane" through four 278-bit adders
    had no answer in 120 s).  Returns the applications' texts, None when the lemma was not proved."""
    run_x, run_y = list(accumulate(xs, alg.add)), list(accumulate(ys, alg.add))  # sum_all's running sums
    every = [*xs, *ys, *run_x, *run_y]
    span = (min(0, *(v.lo for v in every)), max(0, *(v.hi for v in every)))
    apps: list[str] = []
    for args in zip(run_x[:-1], run_y[:-1], xs[1:], ys[1:]):
        if not chain.establish(lemma("running sums: 0 <= x <= x' and 0 <= y <= y' give 0 <= x + y <= x' + y'", ordered_step,
                                     list(args), span=span), list(args)):
            return None
        apps.append(chain.applied_last)
    return apps
