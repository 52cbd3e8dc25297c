"""Facts about one CDNA3 TR-FDPA (Alg. 10, encodings/trfdpa.py): its error parts and its monotonicity in each argument.

TR-FDPA sums in two stages: the products truncated at their largest
exponent e (RZ_F, step 2), then that sum T and c rounded down at E =
max(e, e_c) (RD_F2 and RD_F, step 3), then rho (step 4).  GTR-FDPA
(Alg. 11, :mod:`~smtmma.op_proofs.gtrfdpa`) is the same with the products
in two groups merged by a round-down: its proofs are this module's, with
the group merge plugged in (``products``, ``c_parts``; for monotonicity
the merge before :func:`cdna3_monotone_facts`); the round-down with c, which
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

**Monotonicity**, :func:`monotone_facts`: raising any one input never lowers D, as facts on the model's own
terms in the query's formula with one symbolic move (the whole-model query gave no answer in 300 s, issue 8):

* **products' stage** (step 2): T-FDPA's credit argument (:func:`~smtmma.op_proofs.tfdpa.credit_facts`) on the L
  products alone, with a margin: the moved product gains :data:`MARGIN` w's more than the others can lose, so
  T + 4 w <= 2**D T' where a lane moved (w = 2**D - 1, D = min(e' - e, Dc)); c moved: e' = e;
* **second stage, a lane moved** (:class:`Stage2Lemmas`): the sum's gain at E' >= E (2**D2 RD_F2(T' at E') >=
  RD_F2(T at E) + 2**(F2-F) w2), c's re-alignment from E to E' (a slack in [0, w2]) and their composition give
  S <= 2**D2 S'; then the value;
* **c moved**: T and e unchanged, S 2**(E-F2) <= S' 2**(E'-F2) in four cases (c was 0; same exponent field, E set
  by e or by c; exponent field up by one);
* **rounding**: rho is monotone; **glue** per run where no product reaches 2**128: D = rho(S 2**(E-F2));
  **overflow** (TF32, BF16): such a product makes D = +inf (§4.2) and stays so after the move
  (:func:`overflow_stays`), so the move never lowers D.

Every lemma is a ``define-fun`` proved on fresh constants and applied to the run's terms
(:mod:`smtmma.proof_kernel`); GTR-FDPA (:mod:`~smtmma.op_proofs.gtrfdpa`) plugs its group merge in before the
second stage (:func:`cdna3_monotone_facts`).
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
from ..queries.query_algebra import QueryAlgebra, Runner, output_container, value_key
from ..simulate import decode_input
from .fused_sum import Plan, accumulate_lemma, ahead_fact, carry_fact, glue_inputs, rounded_output_facts, summand_lemma
from .moves import finite_nonneg, move_firsts, next_moves
from .rounding import PreRounding, conversion_lemma, final_rounding, value_le
from .tfdpa import Credits, MonotoneShape, MoveLemmas, MoveSums, WideSums, capped_shift, credit_facts

__all__ = ["MARGIN", "Cdna3Glue", "Cdna3Run", "Cdna3Start", "ProductSums", "ProductsSum", "Stage2Lemmas", "ahead_chain",
           "cdna3_error_applies", "cdna3_error_parts", "cdna3_glue", "cdna3_monotone_applies", "cdna3_monotone_facts",
           "cdna3_output_facts", "cdna3_products", "cdna3_run", "cdna3_start", "cut_chain", "cut_product_step", "cut_sum_step",
           "error_facts", "floor_chain", "monotone_facts", "overflow_stays", "prove_error_bound", "prove_error_interval",
           "round_down_lemma", "supports_error_bound", "supports_error_facts", "supports_monotone",
           "truncated_products"]


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


def cdna3_glue(plan: Plan, *, products: ProductsSum = truncated_products) -> tuple[Part, Cdna3Glue]:
    """The glue lemma of one TR-FDPA / GTR-FDPA (Alg. 10 / 11), in the model's own formula.

    Proves, on finite inputs with a finite output, the output is rho(S * 2**(E - F2)), S = RD_F2(T at E) + RD_F(c at E), T
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
    g.assert_(all_finite(g, *ua, *ub, uc, ud))
    facts += [g.eq(d, composed), between(g, e_max, plan.e_lo, plan.e_hi), between(g, E, plan.e_lo, plan.e_hi), g.le(e_max, E),
              g.or_(g.eq(ct.sig, 0), g.le(ct.exp, E)), between(g, T, T.lo, T.hi), between(g, S, S.lo, S.hi)]
    alg_name = "Alg. 11" if gtr else "Alg. 10"
    glue = Part(f"glue ({alg_name}): on finite inputs with a finite output, the model's output is rho(S * 2^(E-F2)), "
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
    inputs, terms, ct, floor = cdna3_products(alg, model, plan, x.a, x.b, x.c)
    return Cdna3Start(F, F2, G2, plan, inputs, terms, ct, floor)


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
    """What the monotonicity facts of Alg. 10 and 11 assume: one FDPA (K = L) with F2 >= F, steps 3-4 rounding down,
    inputs read as they are (products that can reach 2**128, §4.2, get facts of their own in
    :func:`cdna3_monotone_facts`); the kind is the caller's."""
    if model.L is None or K != model.L or model.sum_rz or model.ftz_inputs:
        return False
    return model.F is not None and model.F2 is not None and model.F2 >= model.F


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`monotone_facts` applies: one TR-FDPA (K = L), F2 >= F, rounding down (see
    :func:`cdna3_monotone_applies`)."""
    return model.kind == "tr-fdpa" and cdna3_monotone_applies(model, K)


@dataclass
class Cdna3Run:
    """One run of Alg. 10 / 11 in a one-move formula, built by the encoding's own functions (so its terms are the
    model's): the products and c as terms (step 1), the exponent below every term, the products' sum T at e (step 2;
    GTR: the group merge, step 3), c's exponent e_c, and step 3 (GTR: 4): E = max(e, e_c), T rounded down at E (A),
    c rounded down at E (C), S = A + 2**(F2 - F) C."""

    terms: list[Term]
    ct: Term
    floor: int
    T: Int
    e: Int
    ec: Int
    E: Int
    A: Int
    C: Int
    S: Int


def cdna3_products(alg: QueryAlgebra, model: Model, plan: Plan, a: Sequence[Int], b: Sequence[Int],
                   c: Int) -> tuple[list[Unpacked], list[Term], Term, int]:
    """One run's inputs as run_model decodes them (a..., b..., c), its products and c as terms (Alg. 10 step 1), and
    the exponent below all."""
    ua = [decode_input(alg, plan.fa, v, model.via) for v in a]
    ub = [decode_input(alg, plan.fb, v, model.via) for v in b]
    uc = decode_input(alg, plan.fc, c, plan.fd.name)
    terms, _ = overflowing_products(alg, ua, ub)
    ct = input_term(uc)
    return [*ua, *ub, uc], terms, ct, min(min(t.exp.lo for t in terms), ct.exp.lo) - 1


def cdna3_run(alg: QueryAlgebra, model: Model, terms: list[Term], ct: Term, floor: int, T: Int, e: Int) -> Cdna3Run:
    """Step 3 of Alg. 10 (4 of Alg. 11) on the products' sum T at e, as the encoding builds it."""
    F, F2 = model.F, model.F2
    assert F is not None and F2 is not None
    gtr = model.kind == "gtr-fdpa"
    S, E = round_down_with_c(alg, T, e, ct, F, F2, floor, drop_far_c=gtr)
    A, C = sum_at(alg, T, e, E, F, F2), c_at(alg, ct, E, F, floor, drop_far_c=gtr)
    return Cdna3Run(terms, ct, floor, T, e, c_exponent(alg, ct, floor), E, A, C, S)


class Stage2Lemmas:
    """The lemmas of step 3 of Alg. 10 (4 of Alg. 11), each a function of the run's terms: the products' stage's
    order T + margin w <= 2**D T' (in the terms of shape ``sh``, its sums at ``prev_wide``) carried to E = max(e, e_c),
    c re-aligned, their composition, and raising c.  ``sh``'s Dc also caps D2 = min(E' - E, Dc); ``wide``: W2, the
    second stage's sums."""

    def __init__(self, chain: LemmaChain, model: Model, sh: MonotoneShape, wide: WideSums, prev_wide: WideSums, floor: int,
                 first_c: Optional[int]) -> None:
        assert model.F is not None and model.F2 is not None
        self.chain, self.model, self.plan, self.sh, self.wide = chain, model, sh.plan, sh, wide
        self.prev_wide, self.floor, self.first_c = prev_wide, floor, first_c
        self.F, self.F2, self.g = model.F, model.F2, model.F2 - model.F
        self.gtr = model.kind == "gtr-fdpa"


    def _c(self, g: Any, c: Int) -> Term:
        return input_term(decode_input(g, self.plan.fc, c, self.plan.fd.name))

    def _shift(self, g: Any, E: Int, E2: Int) -> tuple[Int, Int]:
        return capped_shift(g, self.sh, E, E2)

    def gained(self, g: Any, A: Int, A2: Int, D2: Int, w2: Int) -> Bool:
        """A + 2**(F2-F) w2 <= 2**D2 A' at W2: the products' sum's gain (A = RD_F2(T at E))."""
        wd = self.wide
        return wd.le(g, f"(bvadd {wd.of(g, A)} {wd.of(g, g.shl(w2, self.g))})", wd.shl(g, A2, D2))

    def within(self, g: Any, slack: str, w2: Int) -> list[Bool]:
        """0 <= slack <= w2 at W2 (``slack``: c's credit 2**D2 C' + w2 - C)."""
        wd = self.wide
        return [wd.le(g, wd.lit(0), slack), wd.le(g, slack, wd.of(g, w2))]

    def sum_gain(self, T: Int, T2: Int, e: Int, e2: Int, ec: Int, ec2: Int) -> Optional[str]:
        """T + margin w <= 2**D T' (at the previous stage's W) gives, at E = max(e, e_c) <= E' = max(e', e_c),
        2**D2 A' >= A + 2**(F2-F) w2 at W2 (A = RD_F2(T at E), Alg. 10 line 14)."""
        prev, pw, F, F2, gg = self.sh, self.prev_wide, self.F, self.F2, self.g

        def st(g: Any, v: Sequence[Int]) -> Bool:
            T_, T2_, e_, e2_, ec_, ec2_ = v
            D, w = capped_shift(g, prev, e_, e2_)
            premise = [g.le(0, T_), g.le(0, T2_), g.le(e_, e2_), g.eq(ec2_, ec_),
                       pw.le(g, pw.plus_times(pw.of(g, T_), prev.margin, g, w), pw.shl(g, T2_, D))]
            E_, E2_ = g.max(e_, ec_), g.max(e2_, ec2_)
            D2, w2 = self._shift(g, E_, E2_)
            A, A2 = sum_at(g, T_, e_, E_, F, F2), sum_at(g, T2_, e2_, E2_, F, F2)
            gain = self.gained(g, A, A2, D2, w2)
            return implies(g, premise, g.all([g.le(E_, E2_), g.le(0, A), g.le(0, A2), gain]))

        return self.chain.use(f"second stage, the products' sum: T + {prev.margin} w <= 2^D T' gives, at E = max(e, e_c) <= "
                           f"E' = max(e', e_c), 2^D2 RD_F2(T' at E') >= RD_F2(T at E) + 2^{gg} (2^D2 - 1)", st,
                           [T, T2, e, e2, ec, ec2])

    def c_realign(self, c: Int, c2: Int, E: Int, E2: Int) -> Optional[str]:
        """c not moved, rounded down at E and at E' >= E (RD_F): C <= 2**D2 C' + w2 <= C + w2 at W2."""
        wd, fc, F, floor, gtr = self.wide, self.plan.fc, self.F, self.floor, self.gtr

        def st(g: Any, v: Sequence[Int]) -> Bool:
            c_, c2_, E_, E2_ = v
            ct, ct2 = self._c(g, c_), self._c(g, c2_)
            D2, w2 = self._shift(g, E_, E2_)
            C, C2 = c_at(g, ct, E_, F, floor, drop_far_c=gtr), c_at(g, ct2, E2_, F, floor, drop_far_c=gtr)
            slack = wd.credit(g, C, C2, D2, w2)
            premise = [g.eq(c2_, c_), finite_nonneg(g, fc, c_), g.le(E_, E2_), g.le(c_exponent(g, ct, floor), E_)]
            return implies(g, premise, g.all([g.le(0, C), g.le(0, C2), *self.within(g, slack, w2)]))

        return self.chain.use("second stage, c re-aligned from E to E' >= E (RD_F): c_at(E) <= 2^D2 c_at(E') + (2^D2 - 1)",
                           st, [c, c2, E, E2])

    def compose(self, A: Int, A2: Int, C: Int, C2: Int, E: Int, E2: Int) -> Optional[str]:
        """The sum's gain and c's re-alignment give S = A + 2**g C <= 2**D2 S' at W2."""
        wd, gg = self.wide, self.g

        def st(g: Any, v: Sequence[Int]) -> Bool:
            A_, A2_, C_, C2_, E_, E2_ = v
            D2, w2 = self._shift(g, E_, E2_)
            slack = wd.credit(g, C_, C2_, D2, w2)
            premise = [g.le(0, A_), g.le(0, A2_), g.le(0, C_), g.le(0, C2_), g.le(E_, E2_), self.gained(g, A_, A2_, D2, w2),
                       *self.within(g, slack, w2)]
            S, S2 = g.add(A_, g.shl(C_, gg)), g.add(A2_, g.shl(C2_, gg))
            return implies(g, premise, g.and_(wd.le(g, wd.lit(0), wd.of(g, S)), wd.le(g, wd.of(g, S), wd.shl(g, S2, D2))))

        return self.chain.use(f"second stage, composition: 2^D2 A' >= A + 2^{gg} w2 and C <= 2^D2 C' + w2 give "
                           f"S = A + 2^{gg} C <= 2^D2 S'", st, [A, A2, C, C2, E, E2])

    def c_raise(self, T: Int, T2: Int, e: Int, e2: Int, c: Int, c2: Int, case: str) -> Optional[str]:
        """Raising c (T and e unchanged): S 2**(E-F2) <= S' 2**(E'-F2), in one ``case`` of the move: "zero" (c was 0),
        "same, e sets E" / "same, c sets E" (same exponent field; e_c <= e or e < e_c), "cross" (exponent field up)."""
        fc, F, F2, floor, gtr, first = self.plan.fc, self.F, self.F2, self.floor, self.gtr, self.first_c

        def st(g: Any, v: Sequence[Int]) -> Bool:
            T_, T2_, e_, e2_, c_, c2_ = v
            u, u2 = unpack(g, fc, c_), unpack(g, fc, c2_)
            ct, ct2 = self._c(g, c_), self._c(g, c2_)
            cases = {"zero": u.is_zero,
                     "same, e sets E": g.all([g.not_(u.is_zero), g.eq(u.exp, u2.exp), g.le(c_exponent(g, ct, floor), e_)]),
                     "same, c sets E": g.all([g.not_(u.is_zero), g.eq(u.exp, u2.exp), g.lt(e_, c_exponent(g, ct, floor))]),
                     "cross": g.and_(g.not_(u.is_zero), g.ne(u.exp, u2.exp))}
            premise = [g.eq(T2_, T_), g.eq(e2_, e_), g.le(0, T_), finite_nonneg(g, fc, c_), finite_nonneg(g, fc, c2_),
                       g.any(next_moves(g, fc, c_, c2_, first)), cases[case]]
            S, E = round_down_with_c(g, T_, e_, ct, F, F2, floor, drop_far_c=gtr)
            S2, E2 = round_down_with_c(g, T2_, e2_, ct2, F, F2, floor, drop_far_c=gtr)
            return implies(g, premise, g.and_(g.le(0, S), value_le(g, PreRounding(S, g.sub(E, F2), None),
                                                                   PreRounding(S2, g.sub(E2, F2), None))))

        what = {"zero": "c was 0", "same, e sets E": "same exponent field; e sets E",
                "same, c sets E": "same exponent field; c sets E", "cross": "exponent field up by one"}[case]
        step = "Alg. 11 step 4" if gtr else "Alg. 10 step 3"
        return self.chain.use(f"raising c ({what}), T and e unchanged: S 2^(E-F2) <= S' 2^(E'-F2) ({step})", st,
                           [T, T2, e, e2, c, c2])


def overflow_stays(chain: LemmaChain, plan: Plan, who: str, x: Int, x2: Int, o: Int, first: Optional[int]) -> Optional[str]:
    """Raising ``who`` (a or b; ``o`` the other factor's pattern) to its next value keeps a product reaching 2**128
    there (§4.2), applied to the run's patterns."""
    fmt, other = (plan.fa, plan.fb) if who == "a" else (plan.fb, plan.fa)
    via = plan.model.via

    def st(g: Any, v: Sequence[Int]) -> Bool:
        m, m2, o_ = v
        um, um2, uo = (decode_input(g, f, p, via) for f, p in ((fmt, m), (fmt, m2), (other, o_)))
        pair = (lambda u: (u, uo)) if who == "a" else (lambda u: (uo, u))
        t, t2 = product(g, *pair(um))[0], product(g, *pair(um2))[0]
        premise = [finite_nonneg(g, fmt, m), finite_nonneg(g, other, o_), g.any(next_moves(g, fmt, m, m2, first)), overflows(g, t)]
        return implies(g, premise, overflows(g, t2))

    return chain.use(f"overflow stays (raising {who}): a product reaching 2^128 still does with {who} at its next value", st, [x, x2, o])


def cdna3_monotone_facts(chain: LemmaChain, formula: Any, run1: Cdna3Run, run2: Cdna3Run, stage: Credits, sh: MonotoneShape,
                         first: dict[str, Optional[int]]) -> bool:
    """The facts after the products' stage of Alg. 10 / 11, on the model's terms: where a lane moved (``stage``: its
    facts, T + margin w <= 2**D T' in the terms of ``sh``, whose Dc also caps D2; ``stage.moved``: a lane moved;
    ``stage.running``: 0 <= T) the sum's gain at E, c re-aligned and their composition S <= 2**D2 S', then the value;
    where c moved, T and e unchanged and S's value raised (four cases); rho's order; the glue of both runs (a product
    reaching 2**128 makes D = +inf, §4.2, and stays so); the move never lowers D.  False when a step is not proved
    (the chain says which)."""
    alg, model, x, y = formula.alg, formula.model, formula.x, formula.y
    plan = sh.plan
    F2 = model.F2
    assert F2 is not None
    p, q = run1, run2
    D2, w2 = capped_shift(alg, sh, p.E, q.E)
    wd2 = WideSums(max(v.width for v in (p.A, p.C, p.S, w2)) + D2.hi + max(q.S.width, q.A.width, q.C.width) + 8)
    st = Stage2Lemmas(chain, model, sh, wd2, stage.wide, p.floor, first["c"])
    lem2 = MoveLemmas(chain, sh, first, wd2)
    R, nonneg_T = stage.moved, stage.running
    # a lane moved: the sum's gain, c re-aligned, composed, the value
    gain = st.sum_gain(p.T, q.T, p.e, q.e, p.ec, q.ec)
    if gain is None:
        return False
    gw = st.gained(alg, p.A, q.A, D2, w2)
    chain.prove("a lane moved: E <= E', and 2^D2 A' >= A + 2^(F2-F) w2 (A = T rounded down at E)",
                implies(alg, [R], alg.all([alg.le(p.E, q.E), alg.le(0, p.A), alg.le(0, q.A), gw])),
                uses=[stage.summed, stage.ordered, stage.ranged, nonneg_T], applied=[gain])
    gained = chain.last
    realign = st.c_realign(x.c, y.c, p.E, q.E)
    if realign is None:
        return False
    slack = wd2.credit(alg, p.C, q.C, D2, w2)
    chain.prove("a lane moved: c rounded down at E is at most 2^D2 times it at E', plus w2",
                implies(alg, [R], alg.all([alg.le(0, p.C), alg.le(0, q.C), *st.within(alg, slack, w2)])),
                uses=[gained], applied=[realign])
    c_fact = chain.last
    comp = st.compose(p.A, q.A, p.C, q.C, p.E, q.E)
    if comp is None:
        return False
    chain.prove("a lane moved: S <= 2^D2 S'", implies(alg, [R], alg.and_(wd2.le(alg, wd2.lit(0), wd2.of(alg, p.S)),
                                                                          wd2.le(alg, wd2.of(alg, p.S), wd2.shl(alg, q.S, D2)))),
                uses=[gained, c_fact], applied=[comp])
    val = lem2.value(p.S, q.S, p.E, q.E, F2)
    if val is None:
        return False
    pre1, pre2 = PreRounding(p.S, alg.sub(p.E, F2), None), PreRounding(q.S, alg.sub(q.E, F2), None)
    ordered = alg.and_(alg.le(0, p.S), value_le(alg, pre1, pre2))
    chain.prove("a lane moved: S 2^(E-F2) <= S' 2^(E'-F2)", implies(alg, [R], ordered), uses=[chain.last, gained], applied=[val])
    by_lane = chain.last
    # c moved: T and e unchanged, S's value raised
    by_c: Optional[int] = None
    if "c" in formula.labels:
        here = formula.moved("c")
        chain.prove("c moved: T' = T and e' = e", implies(alg, [here], alg.and_(alg.eq(q.T, p.T), alg.eq(q.e, p.e))), uses=[])
        same = chain.last
        apps = [st.c_raise(p.T, q.T, p.e, q.e, x.c, y.c, case) for case in ("zero", "same, e sets E", "same, c sets E", "cross")]
        if any(a is None for a in apps):
            return False
        chain.prove("c moved: S 2^(E-F2) <= S' 2^(E'-F2)", implies(alg, [here], ordered), uses=[same, nonneg_T],
                    applied=[a for a in apps if a is not None])
        by_c = chain.last
    chain.prove("S 2^(E-F2) <= S' 2^(E'-F2) (a lane or c moved)", ordered, uses=[by_lane, by_c])
    valued = chain.last
    rnd = lem2.rounding(p.S, q.S, p.E, q.E, F2)
    if rnd is None:
        return False
    r1, r2 = final_rounding(alg, model, pre1), final_rounding(alg, model, pre2)
    chain.prove("rho keeps the order", alg.le(value_key(alg, plan.out, r1), value_key(alg, plan.out, r2)),
                uses=[valued], applied=[rnd])
    order = chain.last
    # the glue of both runs; a product reaching 2^128 (TF32, BF16) makes D = +inf and stays so
    out = output_container(model)
    over = [alg.any(overflows(alg, t) for t in r.terms) for r in (p, q)]
    glues = []
    for run, r, d, ov in (("", p, formula.d, over[0]), (", moved", q, formula.d2, over[1])):
        pre = PreRounding(r.S, alg.sub(r.E, F2), None)
        chain.prove(f"glue{run} ({'Alg. 11 step 5' if model.kind == 'gtr-fdpa' else 'Alg. 10 step 4'}): where no product "
                    "reaches 2^128, D is rho(S 2^(E-F2))", implies(alg, [alg.not_(ov)], alg.eq(d, final_rounding(alg, model, pre))),
                    uses=[])
        glues.append(chain.last)
    if any(product_top(t) >= 128 for t in p.terms):
        for run, d, ov in (("", formula.d, over[0]), (", moved", formula.d2, over[1])):
            ud = unpack(alg, out, d)
            chain.prove(f"overflow{run} (§4.2): a product reaching 2^128 makes D = +inf",
                        implies(alg, [ov], alg.and_(ud.is_inf, alg.not_(ud.neg))), uses=[])
            glues.append(chain.last)
        stays = []
        for k in range(x.K):
            apps = [overflow_stays(chain, plan, "a", x.a[k], formula.next[f"a{k}"], x.b[k], first["a"]),
                    overflow_stays(chain, plan, "b", x.b[k], formula.next[f"b{k}"], x.a[k], first["b"])]
            if any(a is None for a in apps):
                return False
            chain.prove(f"product {k} reaching 2^128 still does after the move",
                        implies(alg, [overflows(alg, p.terms[k])], overflows(alg, q.terms[k])), uses=[],
                        applied=[a for a in apps if a is not None])
            stays.append(chain.last)
        chain.prove("a product reaching 2^128 still does after the move", implies(alg, [over[0]], over[1]), uses=stays)
        glues.append(chain.last)
    chain.prove("the move never lowers D", alg.not_(formula.drop), uses=[*glues, order])
    return not chain.stopped


def monotone_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the monotonicity query's own formula with one symbolic move (``formula``: a
    :class:`~smtmma.queries.properties.monotonicity.OneMoveFormula`), that leave its final check Boolean steps
    (Alg. 10): the products' stage is T-FDPA's credit argument (:func:`~smtmma.op_proofs.tfdpa.credit_facts`) on the
    L products, the raised product gaining :data:`MARGIN` w's more than the others lose (c moved: e' = e), so
    T + 4 w <= 2**D T' where a lane moved; then :func:`cdna3_monotone_facts`."""
    alg, model, x, y = formula.alg, formula.model, formula.x, formula.y
    sh1 = MonotoneShape(model, x.K, n=x.K, with_c=False, margin=MARGIN, zeros_at_floor=True)
    plan, F = sh1.plan, sh1.F
    first = move_firsts(plan, formula.domain)
    sums, runs = [], []
    for inputs in (x, y):
        _, terms, ct, floor = cdna3_products(alg, model, plan, inputs.a, inputs.b, inputs.c)
        e = max_exponent(alg, terms, floor)  # Alg. 10 step 2
        A = [aligned(alg, t, e, F) for t in terms]
        prefix = alg.running_sums(A)  # the last is the encoding's own sum term
        sums.append((terms, A, prefix, e))
        runs.append(cdna3_run(alg, model, terms, ct, floor, prefix[-1], e))
    (t1, A1, P1, e1), (t2, A2, P2, e2) = sums
    cr = credit_facts(chain, formula, sh1, MoveSums(t1, t2, A1, A2, P1, P2, e1, e2, list(range(x.K))), first, still=["c"],
                      what="the products' ")
    if cr is None:
        return False
    return cdna3_monotone_facts(chain, formula, runs[0], runs[1], cr, sh1, first)
