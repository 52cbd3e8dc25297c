"""Facts about one CDNA3 TR-FDPA (Alg. 10, encodings/trfdpa.py): its error parts and its monotonicity in each argument.

TR-FDPA sums in two stages: the products truncated at their largest
exponent e (RZ_F, step 2), then that sum T and c rounded down at E =
max(e, e_c) (RD_F2 and RD_F, step 3), then rho (step 4).  GTR-FDPA
(Alg. 11, :mod:`~smtmma.op_proofs.gtrfdpa`) is the same with the products
in two groups merged by a round-down: its proofs are this module's, with
the group merge plugged in (``products``, ``c_parts``, a first stage of
:func:`first_stage` followed by the merge); the round-down with c, which
drops a far c in Alg. 11, is shared here as in the encodings.

**Error bound on the model's own terms**, :func:`error_facts` (what the
error-bound query uses for one TR-FDPA): a chain of facts in the query's
formula, in relative units 2**(E - F - G), whose last check is the query
itself; the products' own e_max below E is handled with floors at E with
F + 1 bits and narrow cuts (see the function).

**Error bound by parts**, :func:`prove_error_interval` (Table 9 with E = max(e_max,
e_c), and the one-sided interval round-down implies; where the chain does
not apply, F2 = F): the shared summand,
accumulation and conversion lemmas (:mod:`~smtmma.op_proofs.fused_sum`,
:mod:`~smtmma.op_proofs.rounding`), plus the **round-down steps**: RD_F2 of
T and RD_F of c at E, each below one of its own units and never above the
exact value; the glue (:func:`cdna3_glue`) and a composition in units
2**(E - F2 - 1).

**Monotonicity**, :func:`prove_monotone`: raising any one input never lowers D.

The whole-model query gives no answer in 300 s (issue 8), nor does the
second stage as one lemma in 120 s; by stages, every check is small:

* **glue** (the model, all finite inputs; TF32 and BF16, whose products
  can reach 2**128: those where none does): D = rho(S 2**(E-F2)) with S, E
  from the model's own steps (:func:`cdna3_glue`);
* **overflow** (TF32, BF16; :func:`overflow_lemmas`): a product reaching
  2**128 makes D = +inf (§4.2), and raising a or b keeps it there; so a
  move either gives D' = +inf or leaves both runs where the glue holds;
* **first stage, raising a product's a or b**: the lemmas of the T-FDPA
  proof (:mod:`~smtmma.op_proofs.tfdpa`) on the L products alone, with a margin:
  the raised product gains 4 w more than the others can lose, so
  T + 4 w <= 2**D T' (w = 2**D - 1, D = min(e' - e, Dc));
* **second stage, raising a product**: the sum's gain at E' >= E (from that
  margin, 2**D2 RD_F2(T' at E') >= RD_F2(T at E) + 2**(F2-F) w2), c's
  re-alignment from E to E' (a slack in [0, w2]), distributivity and a
  composition in slack form give S <= 2**D2 S'; then the value;
* **raising c** (T and e unchanged): S 2**(E-F2) <= S' 2**(E'-F2) directly,
  in four cases (c was 0; same exponent field, E set by e or by c;
  exponent field up by one);
* **rounding**: rho is monotone.

As in :mod:`~smtmma.op_proofs.tfdpa`, applying a lemma stated on generic variables
to the model's terms is the step no solver checks; each lemma is a
check-sat of the certificate.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate
from typing import Any, Callable, Optional, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import aligned, max_exponent
from ..encodings.rounding import convert_fixed
from ..encodings.terms import Term, input_term, product
from ..encodings.trfdpa import (
    c_at,
    c_exponent,
    overflowing_products,
    overflows,
    product_top,
    round_down_with_c,
    shift_cut,
    sum_at,
)
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import lemma
from ..proof_kernel.parts import Part, PartsProof, all_finite, between, implies, negated_script, ranged_var, run_parts
from ..queries.query_algebra import QueryAlgebra, Runner
from ..simulate import decode_input
from .fused_sum import Plan, accumulate_lemma, ahead_fact, carry_fact, glue_inputs, rounded_output_facts, summand_lemma
from .moves import finite_nonneg, nonneg_pattern, raised_pattern
from .rounding import PreRounding, conversion_lemma, monotone_rounding_lemma, value_le
from .tfdpa import (
    MonotoneShape,
    aligned_step_lemma,
    capped_shift,
    composition_lemmas,
    distributivity_lemma,
    exponent_step_lemma,
    exponents_lemma,
    fresh_exponents,
    gain_lemma,
    largest_aligned,
    product_step_lemma,
    realign_lemma,
    value_lemma,
)

__all__ = ["MARGIN", "Cdna3Glue", "Cdna3Start", "ProductSums", "ProductsSum", "Stage2", "cdna3_error_applies", "cdna3_error_parts",
           "ahead_chain", "cdna3_glue", "cdna3_output_facts", "cdna3_start", "cdna3_monotone_applies", "cut_chain", "cut_product_step", "cut_sum_step", "error_facts",
           "floor_chain", "first_stage", "monotone_lemmas", "overflow_lemmas", "prove_error_bound",
           "prove_error_interval", "prove_monotone", "round_down_lemma", "second_stage_lemmas", "supports_error_bound",
           "supports_error_facts", "supports_monotone", "truncated_products"]


# -- the glue: the model's own steps ---------------------------------------------------------------------


@dataclass
class ProductSums:
    """The products' sum T of one CDNA3 FDPA as its glue states it: the exponent e_max it is aligned at, T, the facts
    bounding them, products per truncated sum (n), a truncated sum's range (t_rng), the group round-down's shift span
    (GTR-FDPA; 0 for TR)."""

    e_max: Int
    T: Int
    facts: list[Bool]
    n: int
    t_rng: tuple[int, int]
    span: int


#: how a glue sums the products: (glue algebra, plan, the products, the zero floor) -> their sum
ProductsSum = Callable[[QueryAlgebra, Plan, list[Term], int], ProductSums]


def truncated_products(g: QueryAlgebra, plan: Plan, terms: list[Term], floor: int) -> ProductSums:
    """TR-FDPA's products' sum (Alg. 10 step 2): every product aligned at their largest exponent e_max (RZ_F)."""
    F = plan.model.F
    assert F is not None
    e_max = max_exponent(g, terms, floor)
    T = g.sum_all(aligned(g, t, e_max, F) for t in terms)
    facts = [g.or_(g.eq(t.sig, 0), g.le(t.exp, e_max)) for t in terms]
    return ProductSums(e_max, T, facts, plan.K, (T.lo, T.hi), 0)


@dataclass
class Cdna3Glue:
    """What the CDNA3 glue lemma leaves: products per group (n), group sums' range (t_rng), the group RD's shift span
    (GTR-FDPA; 0 for TR), and T and S (terms of the glue's algebra: their static ranges)."""

    n: int
    t_rng: tuple[int, int]
    span: int
    T: Int
    S: Int


def cdna3_glue(plan: Plan, *, finite_output: bool = True, products: ProductsSum = truncated_products) -> tuple[Part, Cdna3Glue]:
    """The glue lemma of one TR-FDPA / GTR-FDPA (Alg. 10 / 11), in the model's own formula.

    Proves, on finite inputs (with ``finite_output``: and a finite output),
    the output is rho(S * 2**(E - F2)), S = RD_F2(T at E) + RD_F(c at E), T
    the RZ_F-aligned products' sum (``products``; GTR: of the two groups, each
    rounded down at e_max, :func:`~smtmma.op_proofs.gtrfdpa.group_sums`), every
    exponent bounding its summands and every term in its static range.
    """
    model = plan.model
    F, F2 = model.F, model.F2
    assert F is not None and F2 is not None
    gtr = model.kind == "gtr-fdpa"
    # the glue: the model's output is rho(S * 2^(E-F2)) with S from its own steps; the exponents bound their summands
    g, x, ua, ub, uc, d = glue_inputs(plan)
    ud = unpack(g, plan.out, d)
    terms, _ = overflowing_products(g, ua, ub)
    ct = input_term(uc)
    floor = min(min(t.exp.lo for t in terms), ct.exp.lo) - 1
    ps = products(g, plan, terms, floor)
    e_max, T, facts = ps.e_max, ps.T, list(ps.facts)
    S, E = round_down_with_c(g, T, e_max, ct, F, F2, floor, drop_far_c=gtr)
    composed = convert_fixed(g, plan.rfmt, plan.mode, S, g.sub(E, F2))
    g.assert_(all_finite(g, *ua, *ub, uc, *([ud] if finite_output else [])))
    bounded = not finite_output and any(product_top(t) >= 128 for t in terms)
    if bounded:  # an overflowing product makes D infinite (§4.2): :func:`overflow_lemmas` covers those inputs
        g.assert_(g.not_(g.any(overflows(g, t) for t in terms)))
    if not finite_output:  # the monotonicity proof's stage-1 exponents range over the products' only
        facts.append(g.le(e_max, max(plan.tp.exp.hi, plan.e_lo)))
    facts += [g.eq(d, composed), between(g, e_max, plan.e_lo, plan.e_hi), between(g, E, plan.e_lo, plan.e_hi), g.le(e_max, E),
              g.or_(g.eq(ct.sig, 0), g.le(ct.exp, E)), between(g, T, T.lo, T.hi), between(g, S, S.lo, S.hi)]
    alg_name = "Alg. 11" if gtr else "Alg. 10"
    where = " with a finite output" if finite_output else " where no product reaches 2^128" if bounded else ""
    glue = Part(f"glue ({alg_name}): on finite inputs{where}, the model's output is rho(S * 2^(E-F2)), "
                  f"S = RD_F2(T at E) + RD_F(c at E){' (far c dropped)' if gtr else ''}, T the RZ_F-aligned products' sum"
                  f"{' of the two groups, each rounded down at e_max' if gtr else ''}; every exponent bounds its summands",
                  negated_script(g, g.all(facts)))
    return glue, Cdna3Glue(ps.n, ps.t_rng, ps.span, T, S)


# -- the error bound (Table 9; the one-sided interval) ------------------------------------------------------


def cdna3_error_applies(model: Model, K: int) -> bool:
    """What the error parts of Alg. 10 and 11 assume: one FDPA (K = L) with F2 >= F, steps 3-4 rounding down, inputs
    read as they are (the kind is the caller's: :func:`supports_error_bound`, GTR-FDPA's own)."""
    return (model.L is not None and K == model.L and not model.sum_rz
            and model.F is not None and model.F2 is not None and model.F2 >= model.F and not model.ftz_inputs)


def supports_error_bound(model: Model, K: int) -> bool:
    """Whether :func:`prove_error_bound` covers the model: one TR-FDPA (Alg. 10) with K = L."""
    return model.kind == "tr-fdpa" and cdna3_error_applies(model, K)


def round_down_lemma(plan: Plan, T_rng: tuple[int, int], kmax: int, k_lo: int, max_right: int, label: str) -> Part:
    """RD by a shift k <= kmax (Alg. 10 line 14, Alg. 11 lines 15-16 and 22): R = shift_cut(T, k) is floor(T * 2**k).

    Proves: k >= 0 and R = T * 2**k (exact), or k < 0 and R * 2**-k <= T < (R + 1) * 2**-k
    (clamped where the shift passes T's width: then R is 0 or -1 by T's sign).
    """
    alg = QueryAlgebra()
    T = ranged_var(alg, "T", *T_rng)
    k = ranged_var(alg, "k", k_lo, kmax)
    R = shift_cut(alg, T, k, max_left=max(0, kmax), max_right=max_right)
    span = max(T.hi, -T.lo).bit_length() + 1
    r = alg.clamp(alg.neg(k), 0, span)
    rem = alg.sub(T, alg.shl(R, r))
    exact = alg.and_(alg.le(0, k), alg.eq(R, alg.shl(T, alg.clamp(k, 0, max(0, kmax)))))
    floor = alg.all([alg.lt(k, 0), alg.le(0, rem), alg.lt(rem, alg.shl(1, r)),
                     alg.or_(alg.le(alg.neg(k), span), alg.or_(alg.eq(R, 0), alg.eq(R, -1)))])
    return Part(label, negated_script(alg, alg.or_(exact, floor)))


def error_composition_lemma(plan: Plan, rv: dict[str, tuple[int, int]], lo_f: Fraction, hi_f: Fraction, ulps: Fraction,
                            gtr: bool) -> Part:  # ulps: the bound's; the rounding hypothesis uses the conversion's (plan.ulps)
    """exact - Phi in units h = 2**(E - F2 - 1): products a (|a| <= L * 2**(kk+1), kk = max(k, -1), k = e_max - E + F2 - F),
    the RD_F2 step b in [0, 2] (0 when k = F2 - F), c's RD c_ in [0, 2**(F2-F+1)] ([-2**(F2-F), ...] when dropped,
    Alg. 11), the rounding |q| <= 2 * ulps * W (W = ulp / 2**(E-F2)); then
    -(lo_f * 2**(E-F) + ulps ulp) <= exact - Phi <= hi_f * 2**(E-F) + ulps ulp."""
    model = plan.model
    F, F2, L = model.F, model.F2, model.L
    assert F is not None and F2 is not None and L is not None
    g = F2 - F
    alg = QueryAlgebra()
    kk = ranged_var(alg, "kk", -1, g)
    W = ranged_var(alg, "W", *rv["W"])
    amax = alg.shl(L, alg.add(kk, 1))
    a = ranged_var(alg, "a", -L << (g + 1), L << (g + 1))
    b = ranged_var(alg, "b", 0, 2)
    c = ranged_var(alg, "c", -(1 << g) if gtr else 0, 1 << (g + 1))
    nat = plan.ulps
    q = ranged_var(alg, "q", -2 * W.hi, 2 * W.hi)
    alg.assert_(alg.le(alg.abs(a), amax))
    alg.assert_(alg.or_(alg.lt(kk, g), alg.eq(b, 0)))
    alg.assert_(alg.le(alg.mul(alg.abs(q), nat.denominator), alg.mul(W, 2 * nat.numerator)))
    err = alg.sum_all([a, b, c, q])
    den = lo_f.denominator * hi_f.denominator * ulps.denominator
    unit = 1 << (g + 1)  # 2**(E-F) in units h
    hi = alg.add(int(hi_f * unit * den), alg.mul(W, int(2 * ulps * den)))
    lo = alg.add(int(lo_f * unit * den), alg.mul(W, int(2 * ulps * den)))
    goal = alg.and_(alg.le(alg.mul(err, den), hi), alg.le(alg.neg(lo), alg.mul(err, den)))
    return Part(f"composition (units 2^(E-{F2}-1)): -({lo_f}*2^(E-{F}) + {ulps} ulp) <= exact - Phi <= "
                  f"{hi_f}*2^(E-{F}) + {ulps} ulp", negated_script(alg, goal))


def _c_round_down(plan: Plan, gl: Cdna3Glue) -> list[Part]:
    """TR-FDPA's c at E: aligned and rounded down to F bits (RD_F), within one unit below its value."""
    c_lem, _ = summand_lemma(plan, "c", floor=True)
    return [c_lem]


def cdna3_error_parts(plan: Plan, lo_f: Fraction, hi_f: Fraction, ulps: Fraction, *,
                      products: ProductsSum = truncated_products,
                      c_parts: Callable[[Plan, Cdna3Glue], list[Part]] = _c_round_down) -> list[Part]:
    """The lemmas of a TR-FDPA / GTR-FDPA proof (Alg. 10 / 11), the glue and the composition last.

    ``products``: how the glue sums the products; ``c_parts``: the lemmas between the products' accumulation and
    RD_F2 of T (TR: c rounded down; GTR: the group merge and the far c, :mod:`~smtmma.op_proofs.gtrfdpa`)."""
    model = plan.model
    F, F2, L = model.F, model.F2, model.L
    assert F is not None and F2 is not None and L is not None
    gtr = model.kind == "gtr-fdpa"
    prod, rp = summand_lemma(plan, "ab")
    glue, gl = cdna3_glue(plan, products=products)
    n, T, S = gl.n, gl.T, gl.S
    alg_name = "Alg. 11" if gtr else "Alg. 10"
    acc = accumulate_lemma(n, rp["A"], rp["Q"], (rp["A"][0] * n, rp["A"][1] * n), (rp["Q"][0] * n, rp["Q"][1] * n))
    lemmas = [prod, acc]
    kr = max(0, T.hi.bit_length() + T.lo.bit_length() + 1)
    lemmas += c_parts(plan, gl)
    lemmas.append(round_down_lemma(plan, (T.lo, T.hi), F2 - F, -(plan.e_hi - plan.e_lo) + F2 - F, kr,
                                   f"RD_F2 of T at E >= e_max ({alg_name} line {22 if gtr else 14}): floor(T * 2^(e_max-E+F2-F)), "
                                   "exact when E = e_max"))
    conv, rv = conversion_lemma(plan, (S.lo, S.hi), (plan.e_lo, plan.e_hi), F2)
    lemmas += [conv, glue, error_composition_lemma(plan, rv, lo_f, hi_f, ulps, gtr)]
    return lemmas


def prove_error_interval(model: Model, K: int, run: Runner, *, lo_fused: Fraction, hi_fused: Fraction,
                         ulps: Optional[Fraction] = None) -> PartsProof:
    """Prove ``-(lo_fused 2**(E-F) + ulps ulp) <= exact - Phi <= hi_fused 2**(E-F) + ulps ulp`` for one TR-FDPA
    (K = L, E = max(e_max, e_c)) on every finite input with a finite output, step by step (blocks expect unsat)."""
    if model.kind != "tr-fdpa":
        raise ValueError(f"not a TR-FDPA: {model.describe()}")
    plan = Plan(model, K)
    return run_parts(cdna3_error_parts(plan, lo_fused, hi_fused, plan.ulps if ulps is None else ulps), run)


def prove_error_bound(model: Model, K: int, run: Runner, *, scale: Fraction = Fraction(1), fused: Optional[Fraction] = None,
                      ulps: Optional[Fraction] = None) -> PartsProof:
    """Prove ``|Phi - exact| <= scale * (fused * 2**(E - F) + ulps * ulp(Phi))`` (``fused``: K + 1 by default, ``ulps``:
    the conversion's), as :func:`prove_error_interval` with both sides at ``scale * fused``."""
    fused = Fraction(K + 1) if fused is None else fused
    return prove_error_interval(model, K, run, lo_fused=scale * fused, hi_fused=scale * fused,
                                ulps=None if ulps is None else scale * ulps)


def supports_error_facts(model: Model, K: int) -> bool:
    """Whether :func:`error_facts` applies: one TR-FDPA as :func:`supports_error_bound` takes it, with F2 > F (the cut
    at E with F + 1 bits is one of RD_F2's)."""
    return supports_error_bound(model, K) and model.F2 is not None and model.F is not None and model.F2 > model.F


def error_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the error query's own formula (``formula``: an
    :class:`~smtmma.queries.properties.error_bound.ErrorFormula` in relative units 2**(E - F - G), E = max(e_max, e_c)
    its e_max), that leave its final check a linear step on the model's own terms (Alg. 10).

    The products are truncated at their own largest exponent e_max (RZ_F, step 2), whose unit is a variable
    2**(G - d) in the query's units (d = E - e_max): a fact relating each product's wide exact value to it through a
    variable shift gets no answer in minutes, so every fact cuts at a fixed bit or shifts narrow terms only.  Two
    cases, each fact stated under its own:

    * d = 0 (E = e_max): as T-FDPA's chain -- each product's exact value has floor(X_k / 2**G) = Q_k whole units
      (its floor at E with F bits), its aligned value A_k is Q_k or Q_k + 1, the running sums carry at most one unit
      per product, and RD_F2 of T at E is exact (T2 = T * 2**(F2-F));
    * d >= 1: floors at E with F + 1 bits, Q'_k = floor(X_k / 2**(G-1)); floor(A_k / 2**(d-1)) is Q'_k or Q'_k + 1
      (narrow); floor(T / 2**(d-1)) exceeds the sum of those by at most one per product (a lemma per step, a narrow
      variable shift); and floor(T2 / 2**(F2-F-1)) = floor(T / 2**(d-1)) (RD_F2 at E, Alg. 10 line 14).

    Then c rounded down at E is its floor in units 2**G; the glue (step 4); a finite D is a whole number of units
    2**(E - F2) within the rounding's ulps of S.  The final statement is the query itself.
    """
    start = cdna3_start(chain, formula)
    if start is None:
        return False
    alg, x, G, G2 = formula.alg, formula.x, formula.G, start.G2
    F, F2, terms, ct, floor = start.F, start.F2, start.terms, start.ct, start.floor
    e_p = max_exponent(alg, terms, floor)  # Alg. 10 step 2
    A = [aligned(alg, t, e_p, F) for t in terms]
    T = alg.sum_all(A)
    S, E = round_down_with_c(alg, T, e_p, ct, F, F2, floor)  # Alg. 10 step 3
    T2, sc = sum_at(alg, T, e_p, E, F, F2), c_at(alg, ct, E, F, floor)
    e = formula.e_max
    chain.prove("E = max(e_max, e_c) is the query's e_max (or every summand is zero)",
                alg.or_(alg.eq(E, e), alg.and_(alg.eq(T, 0), alg.eq(sc, 0))), uses=[])
    same_e = chain.last
    X = formula.exact_terms
    run = list(accumulate(A, alg.add))
    chain.prove("T is the products' running sum", alg.eq(T, run[-1]), uses=[])
    whole_t = chain.last
    at_e, below_e = alg.eq(e_p, e), alg.lt(e_p, e)
    K, unit = x.K, 1 << G
    T2u = alg.shl(T2, G2)
    # d = 0: T-FDPA's chain at E with F bits
    x_last = floor_chain(chain, alg, X, terms, e, F, G, "F")
    Q = [aligned(alg, t, e, F, floor=True) for t in terms]
    ahead = ahead_chain(chain, alg, A, Q, run, at_e, "E = e_max: product {k} truncated at e_max (RZ_F) is its floor at E or one above")
    chain.prove(f"E = e_max: RD_F2 of T at E is exact (Alg. 10 line 14), T2 = T * 2^{F2 - F}",
                implies(alg, [at_e], alg.eq(T2, alg.shl(T, F2 - F))), uses=[same_e])
    exact_t = chain.last
    diff = alg.sub(alg.sum_all(X[:K]), T2u)
    chain.prove("E = e_max: the products' exact sum minus T2 * 2^(E-F2) is within [-K, K) units 2^(E-F)",
                implies(alg, [at_e], between(alg, diff, -K * unit, K * unit - 1)), uses=[x_last, ahead, exact_t, whole_t])
    case_at = chain.last
    # d >= 1: floors at E with F + 1 bits; the truncated products cut at E with F + 1 bits (narrow terms)
    x_last = floor_chain(chain, alg, X, terms, e, F + 1, G - 1, "F+1")
    m = alg.clamp(alg.sub(alg.sub(e, e_p), 1), 0, max(T.hi, -T.lo).bit_length() + 1)  # d - 1, past T's width: 0 or -1
    cut = cut_chain(chain, alg, terms, A, run, e_p, e, m, below_e, F, "e_max", "E > e_max")
    if cut is None:
        return False
    ahead, last = cut
    chain.prove("E > e_max: RD_F2 of T at E (Alg. 10 line 14) cut to F+1 bits is T cut at E with F+1 bits",
                implies(alg, [below_e], alg.eq(alg.shr(T2, F2 - F - 1), alg.shr(T, m))), uses=[same_e, whole_t])
    cut_t = chain.last
    chain.prove("E > e_max: the products' exact sum minus T2 * 2^(E-F2) is within (-K, K/2] units 2^(E-F)",
                implies(alg, [below_e], between(alg, diff, -K * unit + 1, K * (unit >> 1) - 1)),
                uses=[x_last, ahead, last, cut_t, whole_t])
    case_below = chain.last
    chain.prove("the products' exact sum minus T2 * 2^(E-F2) is within [-K, K) units 2^(E-F)",
                between(alg, diff, -K * unit, K * unit - 1), uses=[case_at, case_below, same_e, whole_t])
    chain.prove("c rounded down at E (RD_F, Alg. 10 step 3) is its floor in units 2^(E-F)",
                alg.eq(alg.shr(X[-1], G), sc), uses=[same_e])
    cdna3_output_facts(chain, formula, start, S, E, "Alg. 10 step 4", same_e)
    return not chain.stopped


@dataclass
class Cdna3Start:
    """What a CDNA3 error chain reads first (:func:`cdna3_start`): the model's plan and inputs as it decodes them, its
    products and c as terms, the exponent below every term (``floor``), and RD_F2's unit in the query's units
    (2**G2 = 2**(E - F2))."""

    F: int
    F2: int
    G2: int
    plan: Plan
    inputs: list[Unpacked]  # a..., b..., c
    terms: list[Term]
    ct: Term
    floor: int


def cdna3_start(chain: LemmaChain, formula: Any) -> Optional[Cdna3Start]:
    """The model's pieces an Alg. 10 or 11 error chain starts from, in the query's formula (``formula``: an
    :class:`~smtmma.queries.properties.error_bound.ErrorFormula` in relative units 2**(E - F - G)); None (the chain
    stopped) when 2**(E - F2) is not a whole number of those units."""
    alg, model, x = formula.alg, formula.model, formula.x
    F, F2, G = model.F, model.F2, formula.G
    assert F is not None and F2 is not None
    G2 = G - (F2 - F)  # 2**(E - F2) in relative units
    if G2 < 1:
        chain.stopped = f"the query's unit 2^(E-F-{G}) is not below RD_F2's 2^(E-{F2})"
        return None
    plan = Plan(model, x.K)
    ua = [decode_input(alg, plan.fa, v, model.via) for v in x.a]  # as run_model reads them
    ub = [decode_input(alg, plan.fb, v, model.via) for v in x.b]
    uc = decode_input(alg, plan.fc, x.c, plan.fd.name)
    terms, _ = overflowing_products(alg, ua, ub)  # step 1
    ct = input_term(uc)
    floor = min(min(t.exp.lo for t in terms), ct.exp.lo) - 1
    return Cdna3Start(F, F2, G2, plan, [*ua, *ub, uc], terms, ct, floor)


def cdna3_output_facts(chain: LemmaChain, formula: Any, start: Cdna3Start, S: Int, E: Int, step: str,
                       same_e: Optional[int]) -> None:
    """A CDNA3 error chain's last facts: a finite D has finite inputs and no product reaching 2**128, on finite
    inputs D is rho(S * 2**(E - F2)) (the glue, Alg. ``step``), a finite D is a whole number of units 2**(E - F2)
    within the rounding's ulps of S (``same_e``: the fact that E is the query's e_max)."""
    alg, plan = formula.alg, start.plan
    fin = alg.and_(all_finite(alg, *start.inputs), alg.not_(alg.any(overflows(alg, t) for t in start.terms)))
    rho = convert_fixed(alg, plan.rfmt, plan.mode, S, alg.sub(E, start.F2))
    rounded_output_facts(chain, formula, plan, fin,
                         "a finite D has finite inputs and no product reaching 2^128 (those make D infinite or NaN, §4.2)",
                         rho, f"glue ({step}): on finite inputs D is {plan.mode}-{plan.rfmt.name} of S * 2^(E-{start.F2})",
                         S, start.G2, f"2^(E-{start.F2})", uses=[same_e])


def ahead_chain(chain: LemmaChain, alg: QueryAlgebra, A: Sequence[Int], Q: Sequence[Int], run: Sequence[Int], case: Bool,
                label: str, applied: Sequence[str] = (), lanes: Optional[Sequence[int]] = None) -> Optional[int]:
    """Under ``case``: each A_k is Q_k or Q_k + 1 (``applied``: the lemma application each rests on; ``label``: its
    fact, formatted with the lane k, ``lanes[k]`` when given), so each running sum of the A_k (``run``) exceeds the
    Q_k's by at most j + 1 (the aligned running sum's step, applied); the index of the last fact."""
    ups = []
    for k in range(len(A)):
        step = alg.sub(A[k], Q[k])
        chain.prove(label.format(k=k if lanes is None else lanes[k]), implies(alg, [case], alg.and_(alg.le(0, step), alg.le(step, 1))),
                    uses=[], applied=[applied[k]] if applied else False)
        ups.append(chain.last)
    floors, last = Q[0], ups[0]
    for j in range(1, len(A)):
        before = floors
        floors = alg.add(floors, Q[j])
        if not ahead_fact(chain, run[j - 1], before, A[j], Q[j], run[j], floors, j,
                          f"running sum {j} exceeds the floors' sum by at most {j + 1} ({label.split(':')[0]})", [last, ups[j]], case):
            return None
        last = chain.last
    return last


def cut_chain(chain: LemmaChain, alg: QueryAlgebra, terms: Sequence[Term], A: Sequence[Int], run: Sequence[Int], e_p: Int,
              e: Int, m: Int, case: Bool, F: int, where: str, case_text: str, lanes: Optional[Sequence[int]] = None,
              prefix: str = "", lemma_where: str = "") -> Optional[tuple[Optional[int], Optional[int]]]:
    """Under ``case`` (e_p < e): products truncated at e_p (RZ_F; ``A``, their running sums ``run``), cut by
    m = e - e_p - 1 bits, are each their floor at e with F + 1 bits or one above (one lemma on fresh constants,
    applied per product), and the running sums cut carry at most one per product (a lemma per step, a narrow variable
    shift); the indices of the last facts on the cut products' sum and on the cut running sum.

    Labels: ``case_text`` names the case, ``where`` e_p (``lemma_where`` in the lemma's, when another), ``lanes``
    the products' lane numbers, ``prefix`` their running sums."""
    cut = [alg.shr(a, m) for a in A]
    cuts = list(accumulate(cut, alg.add))
    Q1 = [aligned(alg, t, e, F + 1, floor=True) for t in terms]
    apps = []
    for t in terms:  # one lemma for every product (the same shape): relating two alignments of a product is slow in the query
        args = [t.neg, t.sig, t.exp, e_p, e]
        if not chain.establish(lemma(f"a product truncated at {lemma_where or where} < E (RZ_F), cut at E with F+1 bits, is its floor there or one above",
                                     lambda g, v, frac=t.frac: cut_product_step(g, v, frac, F, m.hi), args), args):
            return None
        apps.append(chain.applied_last)
    ahead = ahead_chain(chain, alg, cut, Q1, cuts, case,
                        f"{case_text}: product {{k}} truncated at {where}, cut at E with F+1 bits, is its floor there or one above",
                        apps, lanes)
    last = None  # the sums cut: floor(T_j / 2**m) = floor(T_(j-1) / 2**m) + floor(A_j / 2**m) + a carry of 0 or 1
    for j in range(1, len(A)):
        before, after = alg.shr(run[j - 1], m), alg.shr(run[j], m)
        gain = alg.sub(after, before)
        args = [run[j - 1], A[j], run[j], m]
        if not chain.establish(lemma("a sum cut at a shift is the sum of its operands cut there, or one more",
                                     cut_sum_step, args), args):
            return None
        chain.prove(f"{prefix}truncated running sum {j} cut at E with F+1 bits gains its product's cut or one more",
                    between(alg, alg.sub(gain, cut[j]), 0, 1), uses=[], applied=[chain.applied_last])
        if not ahead_fact(chain, before, cuts[j - 1], gain, cut[j], after, cuts[j], j - 1,  # a carry: 0 at j = 0
                          f"{prefix}truncated running sum {j} cut at E with F+1 bits exceeds its cut products' sum by at most {j}",
                          [last, chain.last]):
            return None
        last = chain.last
    return ahead, last


def cut_product_step(g: Any, v: Sequence[Any], frac: int, F: int, m_hi: int) -> Bool:
    """A product t (sign, significand, exponent; ``frac`` fraction bits) truncated at e_p >= its exponent with F
    fraction bits (RZ_F), then floored by d - 1 = e - e_p - 1 >= 0 more bits (capped at ``m_hi``), is its floor at e
    with F + 1 fraction bits or one above."""
    neg, sig, exp, e_p, e = v
    t = Term(neg, sig, exp, frac)
    cut = g.shr(aligned(g, t, e_p, F), g.clamp(g.sub(g.sub(e, e_p), 1), 0, m_hi))
    step = g.sub(cut, aligned(g, t, e, F + 1, floor=True))
    return implies(g, [g.or_(g.eq(sig, 0), g.le(exp, e_p)), g.lt(e_p, e)], g.and_(g.le(0, step), g.le(step, 1)))


def cut_sum_step(g: Any, v: Sequence[Int]) -> Bool:
    """P2 = P + a gives floor(P2 / 2**m) - floor(P / 2**m) - floor(a / 2**m) in [0, 1]."""
    P, a, P2, m = v
    return implies(g, [g.eq(P2, g.add(P, a))], between(g, g.sub(g.sub(g.shr(P2, m), g.shr(P, m)), g.shr(a, m)), 0, 1))


def floor_chain(chain: LemmaChain, alg: QueryAlgebra, X: Sequence[Int], terms: Sequence[Term], e: Int, bits: int,
                G: int, name: str, lanes: Optional[Sequence[int]] = None, group: str = "") -> Optional[int]:
    """Each product's exact value X_k has floor(X_k / 2**G) = its floor at e with ``bits`` fraction bits, and the
    exact running sums carry at most one unit per product (T-FDPA's carry step, applied); ``lanes``: the products'
    lane numbers, ``group``: their name in the labels; the index of the last fact."""
    Q = [aligned(alg, t, e, bits, floor=True) for t in terms]
    whole = []
    for k, (x, q) in enumerate(zip(X, Q)):
        chain.prove(f"product {k if lanes is None else lanes[k]}'s exact value has floor(t / 2^(E-{name})) whole units 2^(E-{name})",
                    alg.eq(alg.shr(x, G), q), uses=[])
        whole.append(chain.last)
    exact_run, floor_run, last = X[0], Q[0], whole[0]
    for j in range(1, len(Q)):
        runs = carry_fact(chain, exact_run, floor_run, X[j], Q[j], G, j,
                          f"the {group}products' exact running sum {j}: its whole units 2^(E-{name}) exceed the floors' sum by at most {j}",
                          [last, whole[j]])
        if runs is None:
            return None
        (exact_run, floor_run), last = runs, chain.last
    return last


# -- monotonicity ----------------------------------------------------------------------------------------


#: w's the first stage's raised product gains beyond the other products' losses: with w >= 2**(D-1) (D >= 1) that
#: is 2 units at e', covering c's re-alignment (< 1 unit) and RD_F2 of T' (< 2**(F-F2) unit) at E' = e' > E
MARGIN = 4


def cdna3_monotone_applies(model: Model, K: int) -> bool:
    """What the monotonicity proof of Alg. 10 and 11 assumes: one FDPA (K = L) with F2 >= F, steps 3-4 rounding down,
    inputs read as they are (products that can reach 2**128, §4.2, get :func:`overflow_lemmas`); the kind is the
    caller's."""
    if model.L is None or K != model.L or model.sum_rz or model.ftz_inputs:
        return False
    return model.F is not None and model.F2 is not None and model.F2 >= model.F


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`prove_monotone` applies: one TR-FDPA (K = L) whose products cannot overflow (§4.2)."""
    return model.kind == "tr-fdpa" and cdna3_monotone_applies(model, K)


class Stage2:
    """The second stage's constants: F, F2, g = F2 - F, the zero floor, T's and S's ranges."""

    def __init__(self, sh: MonotoneShape, T_hi: int, S_hi: int) -> None:
        m = sh.model
        assert m.F is not None and m.F2 is not None
        self.sh, self.F, self.F2, self.g = sh, m.F, m.F2, m.F2 - m.F
        self.floor = sh.plan.e_lo
        self.gtr = m.kind == "gtr-fdpa"  # Alg. 11: c is dropped when e_c < E - F - 1
        self.T_hi, self.S_hi = T_hi, S_hi
        self.C_hi = (1 << (self.F + 2)) - 1  # c_at(E) < 2**(F+1): c is below 2**(E+1)

    def exponent(self, alg: QueryAlgebra, name: str) -> Int:
        """A second-stage exponent E (c's range included)."""
        p = self.sh.plan
        return ranged_var(alg, name, p.e_lo, p.e_hi)


def _sum_gain_lemma(st: Stage2) -> Part:
    """From T + 4 w <= 2**D T' (first stage), at E = max(e, e_c) <= E' = max(e', e_c):
    2**D2 RD_F2(T' at E') >= RD_F2(T at E) + 2**g w2 (D2 = min(E' - E, Dc), w2 = 2**D2 - 1)."""
    sh = st.sh
    alg = QueryAlgebra()
    T, T2 = ranged_var(alg, "T", 0, st.T_hi), ranged_var(alg, "T2", 0, st.T_hi)
    e, e2 = fresh_exponents(alg, sh)
    D, w = capped_shift(alg, sh, e, e2)
    alg.assert_(alg.le(alg.add(T, alg.mul(MARGIN, w)), alg.shl(T2, D)))
    ec = st.exponent(alg, "ec")  # c's exponent (or the zero floor): c is not the raised input
    E, E2 = alg.max(e, ec), alg.max(e2, ec)
    D2, w2 = capped_shift(alg, sh, E, E2)
    A, A2 = sum_at(alg, T, e, E, st.F, st.F2), sum_at(alg, T2, e2, E2, st.F, st.F2)
    s = alg.sub(alg.shl(A2, D2), alg.add(A, alg.shl(w2, st.g)))
    goal = alg.all([alg.le(E, E2), alg.le(0, A), alg.le(A, st.T_hi << st.g), alg.le(0, s)])
    return Part(f"second stage, the products' sum (raising a or b): T + {MARGIN} w <= 2^D T' gives, at E = max(e, e_c) "
                  f"<= E' = max(e', e_c), 2^D2 RD_F2(T' at E') >= RD_F2(T at E) + 2^{st.g} (2^D2 - 1)", negated_script(alg, goal))


def _c_realign_lemma(st: Stage2) -> Part:
    """c re-aligned from E to E' >= E (RD_F): s = 2**D2 c_at(E') + w2 - c_at(E) is in [0, w2]."""
    sh = st.sh
    alg = QueryAlgebra()
    p = sh.plan
    c = input_term(decode_input(alg, p.fc, nonneg_pattern(alg, "c", p.fc)[0], p.fd.name))
    E, E2 = st.exponent(alg, "E"), st.exponent(alg, "E2")
    alg.assert_(alg.le(E, E2))
    alg.assert_(alg.le(c_exponent(alg, c, st.floor), E))
    D2, w2 = capped_shift(alg, sh, E, E2)
    A, A2 = (c_at(alg, c, x, st.F, st.floor, drop_far_c=st.gtr) for x in (E, E2))
    s = alg.sub(alg.add(alg.shl(A2, D2), w2), A)
    goal = alg.all([alg.le(0, A), alg.le(A, st.C_hi), alg.le(0, A2), alg.le(0, s), alg.le(s, w2)])
    return Part("second stage, c re-aligned from E to E' >= E (RD_F): c_at(E) <= 2^D2 c_at(E') + (2^D2 - 1)",
                  negated_script(alg, goal))


def _stage2_distributivity_lemma(st: Stage2, p_hi: int, q_hi: int) -> Part:
    sh = st.sh
    alg = QueryAlgebra()
    P, Q = ranged_var(alg, "P", 0, p_hi), ranged_var(alg, "Q", 0, q_hi)
    D = ranged_var(alg, "D", 0, sh.Dc)
    goal = alg.eq(alg.shl(alg.add(P, alg.shl(Q, st.g)), D), alg.add(alg.shl(P, D), alg.shl(alg.shl(Q, D), st.g)))
    return Part(f"second stage, distributivity: 2^D2 (P + 2^{st.g} Q) = 2^D2 P + 2^{st.g} (2^D2 Q), D2 <= {sh.Dc}",
                  negated_script(alg, goal))


def _stage2_composition_lemma(st: Stage2, p_hi: int, q_hi: int) -> Part:
    """P + 2**g C <= B_T + 2**g B_c from B_T = P + 2**g w2 + s_T (s_T >= 0) and B_c = C - w2 + s_c (s_c >= 0).

    Hand-written at one width (as :func:`~smtmma.op_proofs.tfdpa.composition_lemmas`): the rewriter cancels the sums.
    """
    sh, g = st.sh, st.g
    st_bits = p_hi.bit_length() + sh.Dc + 1  # s_T <= 2**D2 RD_F2(T' at E')
    top = (1 << st_bits) + (q_hi << (g + sh.Dc + 1)) + (p_hi << 1)
    W = max(64, top.bit_length() + 2)

    def lit(v: int) -> str:
        return f"(_ bv{v} {W})"

    lines = ["(set-logic QF_BV)"]
    for name, hi in (("P", p_hi), ("C", q_hi), ("sT", (1 << st_bits) - 1), ("sc", (1 << sh.Dc) - 1), ("w", (1 << sh.Dc) - 1)):
        lines += [f"(declare-const {name} (_ BitVec {W}))", f"(assert (bvule {name} {lit(hi)}))"]
    gg = lit(1 << g)
    lines.append(f"(define-fun BT () (_ BitVec {W}) (bvadd P (bvmul {gg} w) sT))")
    lines.append(f"(define-fun Bc () (_ BitVec {W}) (bvsub (bvadd C sc) w))")
    lines.append(f"(assert (not (bvule (bvadd P (bvmul {gg} C)) (bvadd BT (bvmul {gg} Bc)))))")
    return Part(f"second stage, composition: the sum's gain (B_T = P + 2^{g} w2 + s_T) and c's re-alignment "
                  f"(B_c = C - w2 + s_c), slacks >= 0, give P + 2^{g} C <= B_T + 2^{g} B_c", "\n".join(lines) + "\n")


def _c_raise_lemma(st: Stage2, case: str) -> Part:
    """Raising c (T, e unchanged): S 2**(E-F2) <= S' 2**(E'-F2), in one ``case`` of the move: "zero" (c was 0),
    "same, e sets E" / "same, c sets E" (same exponent field; e_c <= e or e < e_c), "cross" (exponent field up by one)."""
    sh = st.sh
    p = sh.plan
    alg = QueryAlgebra()
    T = ranged_var(alg, "T", 0, st.T_hi)
    e = ranged_var(alg, "e", sh.e_lo, sh.e_hi)
    v, u, v2, u2 = raised_pattern(alg, p.fc, "c")
    if case == "zero":
        alg.assert_(u.is_zero)
    else:
        alg.assert_(alg.not_(u.is_zero))
        alg.assert_((alg.ne if case == "cross" else alg.eq)(u.exp, u2.exp))
    c, c2 = (input_term(decode_input(alg, p.fc, x, p.fd.name)) for x in (v, v2))
    if case == "same, e sets E":  # the same-binade case split by which exponent sets E (each half about twice as fast)
        alg.assert_(alg.le(c_exponent(alg, c, st.floor), e))
    elif case == "same, c sets E":
        alg.assert_(alg.lt(e, c_exponent(alg, c, st.floor)))
    S, E = round_down_with_c(alg, T, e, c, st.F, st.F2, st.floor, drop_far_c=st.gtr)
    S2, E2 = round_down_with_c(alg, T, e, c2, st.F, st.F2, st.floor, drop_far_c=st.gtr)
    goal = alg.and_(alg.le(0, S), value_le(alg, PreRounding(S, alg.sub(E, st.F2), None), PreRounding(S2, alg.sub(E2, st.F2), None)))
    what = {"zero": "c was 0", "same, e sets E": "same exponent field; e sets E",
            "same, c sets E": "same exponent field; c sets E", "cross": "exponent field up by one"}[case]
    step = "Alg. 11 step 4" if st.gtr else "Alg. 10 step 3"
    return Part(f"raising c ({what}), T and e unchanged: S 2^(E-F2) <= S' 2^(E'-F2) ({step})", negated_script(alg, goal))


def _first_stage_lemmas(sh: MonotoneShape, a_hi: int) -> list[Part]:
    """The T-FDPA lemmas (:mod:`~smtmma.op_proofs.tfdpa`) on the products of one sum, raising a lane's a or b."""
    lemmas = [exponents_lemma(sh), realign_lemma(sh, "ab")]
    for who in ("a", "b"):
        lemmas += [exponent_step_lemma(sh, who), gain_lemma(sh, who, "far"), gain_lemma(sh, who, "cross"),
                   product_step_lemma(sh, who)]
    return lemmas + [aligned_step_lemma(sh), distributivity_lemma(sh, (0, sh.n * a_hi)), *composition_lemmas(sh, a_hi)]


def first_stage(model: Model, K: int, *, n: int, margin: int,
                products: ProductsSum = truncated_products) -> tuple[list[Part], MonotoneShape, Cdna3Glue, int]:
    """The glue and the first stage: the T-FDPA lemmas on ``n`` products per truncated sum, the raised product gaining
    ``margin`` w's beyond the others' losses.  Returns (lemmas, the stage's shape, the glue's ranges, the largest
    aligned product)."""
    # Alg. 10 step 2 / Alg. 11 step 2: zero products give e_max the floor below every summand
    sh1 = MonotoneShape(model, K, n=n, with_c=False, margin=margin, zeros_at_floor=True)
    glue, gl = cdna3_glue(sh1.plan, finite_output=False, products=products)
    a_hi = largest_aligned(sh1)
    return [glue, *_first_stage_lemmas(sh1, a_hi)], sh1, gl, a_hi


def second_stage_lemmas(sh: MonotoneShape, T_hi: int, S_hi: int) -> list[Part]:
    """The second stage (T, in [0, T_hi], and c rounded down at E; S in [0, S_hi]) and the final rounding."""
    st = Stage2(sh, T_hi, S_hi)
    q_hi, p_hi = st.C_hi, T_hi << st.g
    lemmas = [_sum_gain_lemma(st), _c_realign_lemma(st), _stage2_distributivity_lemma(st, p_hi, q_hi),
              _stage2_composition_lemma(st, p_hi, q_hi), value_lemma(sh, (0, st.S_hi), st.F2, " (second stage)")]
    lemmas += [_c_raise_lemma(st, case) for case in ("zero", "same, e sets E", "same, c sets E", "cross")]
    lemmas.append(monotone_rounding_lemma(sh.plan, (0, st.S_hi), st.F2))
    return lemmas


def overflow_lemmas(plan: Plan) -> list[Part]:
    """Where a product can reach 2**128 (TF32, BF16: §4.2), the inputs the glue leaves out: on finite non-negative
    inputs an overflowing product makes D = +inf (the model, one run), and raising a or b keeps an overflowing
    product overflowing ([] when no product can overflow).

    With these, a single move either gives the raised inputs an overflowing product (D' = +inf, not below D) or
    leaves both runs without one, where the glue and the rest of the proof hold."""
    if product_top(plan.tp) < 128:
        return []
    g, x, ua, ub, uc, d = glue_inputs(plan)
    for fmt, v in [*((plan.fa, v) for v in x.a), *((plan.fb, v) for v in x.b), (plan.fc, x.c)]:
        g.assert_(finite_nonneg(g, fmt, v))
    g.assert_(g.any(overflows(g, product(g, u, v)[0]) for u, v in zip(ua, ub)))
    ud = unpack(g, plan.out, d)
    out = [Part("overflow (Alg. 10, §4.2): on finite non-negative inputs, a product reaching 2^128 makes D = +inf",
                negated_script(g, g.and_(ud.is_inf, g.not_(ud.neg))))]
    for who in ("a", "b"):
        h = QueryAlgebra()
        fmt, other = (plan.fa, plan.fb) if who == "a" else (plan.fb, plan.fa)
        _, u, _, u2 = raised_pattern(h, fmt, who)
        _, w = nonneg_pattern(h, "y", other)
        t, t2 = (product(h, u, w)[0], product(h, u2, w)[0]) if who == "a" else (product(h, w, u)[0], product(h, w, u2)[0])
        h.assert_(overflows(h, t))
        out.append(Part(f"overflow stays (raising {who}): a product reaching 2^128 still does with {who} at its next value",
                        negated_script(h, overflows(h, t2))))
    return out


def monotone_lemmas(model: Model, K: int) -> list[Part]:
    """Every lemma of the TR-FDPA proof, the glue first (see the module docstring)."""
    lemmas, sh, gl, a_hi = first_stage(model, K, n=K, margin=MARGIN)
    return lemmas + second_stage_lemmas(sh, K * a_hi, gl.S.hi) + overflow_lemmas(sh.plan)


def prove_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of a finite non-negative input lowers D (TR-FDPA): "holds" with every lemma's
    block (expecting unsat), or "unknown" naming the first lemma a solver did not prove; seconds per lemma."""
    lemmas = monotone_lemmas(model, K)
    proof = run_parts(lemmas, run)
    if any(p.label.startswith("overflow") for p in lemmas):
        proof.summary += "; a product overflowing to +inf (§4.2) stays so"
    return proof
