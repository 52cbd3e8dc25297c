"""Facts about one T-FDPA (Alg. 7, encodings/tfdpa.py): its error bound and its monotonicity in each argument.

**Error bound on the model's own terms**, :func:`error_facts` (what the error-bound query uses for T-FDPA and
ST-FDPA): Table 9's bound (MMA-Sim, 000 §6.1) as a chain of facts in the query's own formula, whose last check is
the query itself.  The query counts in relative units 2**(e_max - F - G), G a constant wide enough that every
summand's last place is a whole unit, so the fused unit 2**(e_max - F) is the constant 2**G and every step cuts
at a fixed bit: each summand's exact value has floor(t / 2**(e_max - F)) whole units (a symbolic shift, but one
summand at a time); each running sum of the exact values carries at most one unit per summand; each aligned
summand (RZ_F) is its floor or one above; the glue; a finite D is a whole number of units within the rounding's
ulps of S.  The two running-sum steps are lemmas on fresh constants applied to the model's terms (adding
inequalities is what bit-blasting does worst), each followed by the fact it gives.

**Error bound by parts**, :func:`prove_error_bound` (kept for comparison; GST-FDPA's proof builds on its parts).

The monolithic query (the exact sum against the model's output, ~100-bit
alignments, all in one formula) is out of a solver's reach on the full
domain.  The error of a truncated fused sum splits into steps (Table 9: "the
errors are additive"), each a small lemma about one step function on *its own
variables only*:

* **summand** (one lemma per distinct summand: the products of A x B lanes,
  and c): for every finite a, b and every alignment exponent E >= the
  summand's exponent, the summand aligned at E with F fraction bits (RZ_F,
  or RD_F) is within one unit 2**(E - F) of its exact value (RZ: on either
  side; RD: never above it);
* **sum**: putting the aligned sum in a common scale distributes over the
  summands (shl(sum, s) = sum of shl);
* **conversion**: rho's output is within 1 ulp (RZ) or 1/2 ulp (RNE) of the
  fixed-point sum it converts, when finite;
* **glue** (the model itself, all inputs): the model's output bits are those
  step functions composed on the inputs (its e_max is at least every
  non-zero summand's exponent), so every lemma applies to the model;
* **composition**: over the values the lemmas talk about (cut points: the
  exact summands X_k, the aligned ones Y_k, units, the sum, the output value
  and its ulp), the lemmas imply ``|Phi - exact| <= scale * bound``: a small
  linear check.

Every value is an integer in units of 2**R, R below every last place of the
domain.  Each step is a check-sat expecting unsat (a :class:`Block`); the
proof is the lemmas, instantiated at the model's own terms (the glue), plus
the composition.  Only for one FDPA (K <= L) with C inside the sum and no
carry limit: see :func:`supports_error_bound`.  The summand, accumulation
and conversion lemmas are shared (:mod:`~smtmma.op_proofs.fused_sum`, :mod:`~smtmma.op_proofs.rounding`).

**Monotonicity**, :func:`prove_monotone`: raising any one input never lowers D.

The whole-model query (two runs, each a fused sum of K + 1 summands and a
rounding) gives a bit-blasting solver no answer in minutes.  Bit-blasting
is weak at exactly two things the argument needs -- a product that grows
when a factor grows, and adding up inequalities -- so the proof keeps both
out of every check: products grow by an *equality* the rewriter proves
((x + 1) * y = x * y + y), and inequalities are added as equalities with a
non-negative slack.  A single move raises one input (a lane's a or b, or c)
to its next value (:func:`~smtmma.op_proofs.moves.next_moves`).  With E, E' the two
runs' alignment exponents, D = min(E' - E, Dc) and w = 2**D - 1, the lemmas
(each a check-sat on its own variables, expecting unsat) are:

* **glue** (the model, one run, all finite inputs): D = rho(S * 2**(E-F)),
  S the sum of the summands aligned at E = their largest exponent (RZ_F);
* **exponents**: raising one summand's exponent (or a zero) gives E <= E',
  and E' is E or the raised summand's exponent;
* **re-alignment** (each other summand, products and c): A(t, E) <=
  2**D * A(t, E') + w, i.e. slack s = 2**D * A(t, E') + w - A(t, E) in [0, w];
* **gain** (the raised summand): 2**D * A(t', E') >= A(t, E) + K * w, by
  cases: a zero raised or E' > E (one check); E' = E with the exponent
  field up by one (one check); E' = E in the same binade: the significand
  is x + 1 (**next pattern**), the product grows by y (**product step**)
  and aligning is monotone in the significand (**aligned step**);
* **distributivity**: 2**D * (P + Q) = 2**D * P + 2**D * Q (each node of
  the sum);
* **composition** (slack form): those per-summand facts give
  S <= 2**D * S';
* **value**: S <= 2**D * S' gives S * 2**(E-F) <= S' * 2**(E'-F);
* **rounding**: rho is monotone.

As in the error-bound proof (above), applying a lemma stated on
one generic summand (or one node of the sum) to each of the model's is the
step no solver checks; every lemma itself is a check-sat of the certificate.

**Monotonicity of a chain with C added last**, :func:`prove_chain_monotone`
(sm90's FP8 ``mma``: FDPAs chained from 0 on inputs converted to FP16, then
C by an RNE add): the glue (the model's D is that composition, run_model's
own terms), the conversion keeps the order, the one-FDPA proof above for the
step (:func:`chain_step`, single moves chained), a step with c = +inf stays
+inf, and the RNE add is monotone in both operands.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Optional

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import aligned, max_exponent
from ..encodings.terms import Term, input_term, product
from ..encodings.addmul import add
from ..encodings.rounding import convert_fixed
from ..encodings.tfdpa import tfdpa_terms
from ..formats import get_format
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.parts import Part, PartsProof, all_finite, between, negated_script, ranged_var, run_parts
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner, fused_parts, output_container, value_key
from ..simulate import converted_pattern, decode_input, issue_chunks, nan_pattern, run_model
from .fused_sum import (Plan, accumulate_lemma, ahead_fact, carry_fact, glue_inputs, negated_rounded_sum2, negated_sum_lemmas, plan_scales,
                        rounded_output_facts, scales_not_nan, summand_lemma)
from .moves import finite_nonneg, nonneg, nonneg_pattern, raised_pattern
from .rounding import PreRounding, conversion_lemma, monotone_rounding_lemma, negated_output_fact, truncated_rounding, value_le

__all__ = ["MonotoneShape", "aligned_step_lemma", "capped_shift", "chain_monotone_lemmas", "chain_step", "composition_lemmas", "distributivity_lemma",
           "error_composition_lemma", "error_facts", "error_parts", "exponent_step_lemma", "exponents_lemma", "fresh_exponents", "fresh_summand",
           "gain_goal", "gain_lemma", "gain_setup", "glue_lemma", "largest_aligned", "monotone_lemmas", "negated_chain_facts", "product_step_lemma",
           "prove_chain_monotone", "prove_error_bound", "prove_monotone", "realign_lemma", "shape_e_max", "supports_chain_monotone", "supports_chained_symmetry", "supports_error_bound", "supports_error_facts",
           "supports_monotone", "value_lemma"]


# -- the error bound (Table 9) ---------------------------------------------------------------------------


def supports_error_bound(model: Model, K: int) -> bool:
    """Whether :func:`prove_error_bound` covers the model: one T-FDPA (K <= L, C inside the sum, no carry limit).

    TR-FDPA / GTR-FDPA (two alignment exponents, round-down steps) and
    E-FDPA are not decomposed yet: they keep the monolithic query.
    """
    if model.c_after or model.via or model.ftz_inputs or model.carry_bits is not None:
        return False
    if model.zero_emax or model.ieee_zero or model.L is None or K > model.L:
        return False
    if model.kind == "st-fdpa":  # Alg. 8: T-FDPA on block-scaled products (every lane's scales in its summand)
        return model.scale_fmt is not None and model.block is not None
    return model.kind == "t-fdpa" and model.scale_fmt is None


def glue_lemma(plan: Plan) -> tuple[Part, tuple[int, int]]:
    """The glue lemma of a one-FDPA T-FDPA and the static range of its sum S (units 2**(e_max - F)).

    Proves, in the model's own formula: on finite inputs the output is
    rho(S * 2**(e_max - F)), S the sum of the summands aligned at e_max
    (RZ_F), e_max = the largest non-zero summand's exponent (Alg. 7 lines 5-11).
    """
    g, x, ua, ub, uc, d = glue_inputs(plan)
    sa, sb, scales_finite = plan_scales(g, plan, x)
    terms = tfdpa_terms(g, ua, ub, uc, sa, sb)[0]
    e_max, total, composed = truncated_rounding(g, plan, terms)
    g.assert_(g.and_(all_finite(g, *ua, *ub, uc), scales_finite))
    glue = g.all([between(g, e_max, plan.e_lo, plan.e_hi), g.eq(d, composed), between(g, total, total.lo, total.hi),
                  *(g.or_(g.eq(t.sig, 0), g.le(t.exp, e_max)) for t in terms)])
    lemma = Part(f"glue: on finite inputs the model's output is rho(S * 2^(e_max-F)), S the sum of the {len(terms)} "
                   "summands aligned at e_max (RZ_F), e_max >= every non-zero summand's exponent", negated_script(g, glue))
    return lemma, (total.lo, total.hi)


def error_composition_lemma(plan: Plan, n: int, s_rng: tuple[int, int], n_rng: tuple[int, int], rv: dict[str, tuple[int, int]],
                            scale: Fraction, fused: Fraction, ulps: Optional[Fraction] = None) -> Part:
    """In units u = 2**(e_max-F): exact/u = N + T, T in [0, cnt) (0 when cnt = 0); 0 <= S - N <= cnt;
    |D - S| <= ulps * W; then |D - exact/u| <= scale * (fused + ulps * W) for every such T."""
    alg = QueryAlgebra()
    S, N = ranged_var(alg, "S", *s_rng), ranged_var(alg, "N", *n_rng)
    cnt = ranged_var(alg, "cnt", 0, n)
    D, W = ranged_var(alg, "D", *rv["D"]), ranged_var(alg, "W", *rv["W"])
    u = plan.ulps
    alg.assert_(alg.and_(alg.le(0, alg.sub(S, N)), alg.le(alg.sub(S, N), cnt)))
    alg.assert_(alg.le(alg.mul(alg.abs(alg.sub(D, S)), u.denominator), alg.mul(W, u.numerator)))
    u = plan.ulps if ulps is None else ulps  # the bound's ulps (the conversion lemma above proves the natural one)
    f, wu = scale * fused, scale * u
    den = f.denominator * wu.denominator
    rhs = alg.add(int(f * den), alg.mul(W, int(wu * den)))
    goal = alg.and_(alg.le(alg.mul(alg.sub(D, N), den), rhs), alg.le(alg.neg(rhs), alg.mul(alg.sub(alg.sub(D, N), cnt), den)))
    F = plan.model.F
    return Part(f"composition (units 2^(e_max-{F})): |Phi - exact| <= {scale} * ({fused}*2^(e_max-{F}) + {u} ulp)",
                  negated_script(alg, goal))


def error_parts(plan: Plan, glue: tuple[Part, tuple[int, int]], summand: tuple[Part, dict[str, tuple[int, int]]], count: int,
                scale: Fraction, fused: Fraction, ulps: Optional[Fraction]) -> list[Part]:
    """The error parts of one truncated fused sum (Alg. 7-9) of ``count`` summands stated by ``summand`` (its lemma
    and the ranges of A and Q) and c: both summand lemmas, the rounding's, the model's ``glue`` (its lemma and the
    range of S), the accumulation and the composition into ``scale * (fused * 2**(e_max-F) + ulps ulp)``."""
    F = plan.model.F
    assert F is not None
    prod, rp = summand
    cl, rc = summand_lemma(plan, "c")
    n = count + 1
    glue_l, total = glue
    conv, rv = conversion_lemma(plan, total, (plan.e_lo, plan.e_hi), F)
    lo_q, hi_q = rp["Q"][0] * count + rc["Q"][0], rp["Q"][1] * count + rc["Q"][1]
    lo_a, hi_a = rp["A"][0] * count + rc["A"][0], rp["A"][1] * count + rc["A"][1]
    acc = accumulate_lemma(n, (min(rp["A"][0], rc["A"][0]), max(rp["A"][1], rc["A"][1])),
                           (min(rp["Q"][0], rc["Q"][0]), max(rp["Q"][1], rc["Q"][1])), (lo_a, hi_a), (lo_q, hi_q))
    return [prod, cl, conv, glue_l, acc, error_composition_lemma(plan, n, (lo_a, hi_a), (lo_q, hi_q), rv, scale, fused, ulps)]


def prove_error_bound(model: Model, K: int, run: Runner, *, scale: Fraction = Fraction(1),
                      fused: Optional[Fraction] = None, ulps: Optional[Fraction] = None) -> PartsProof:
    """Prove ``|Phi - exact| <= scale * (fused * 2**(e_max - F) + ulps * ulp(Phi))`` on every finite input with a
    finite output, step by step; every step's script (expecting unsat) is in ``blocks``, seconds per step in ``seconds``.

    ``fused`` defaults to K + 1 (Table 9's L + 1), ``ulps`` to the conversion's (1 RZ, 1/2 RNE).
    """
    if not supports_error_bound(model, K):
        raise ValueError(f"no compositional error-bound proof for {model.describe()} with K={K}")
    plan = Plan(model, K)
    if fused is None:
        fused = Fraction(K + 1)
    proof = run_parts(error_parts(plan, glue_lemma(plan), summand_lemma(plan, "ab"), K, scale, fused, ulps), run)
    if plan.fs is not None:
        proof.scope = "every finite input (scales not NaN) whose D is finite"
    return proof


def supports_error_facts(model: Model, K: int) -> bool:
    """Whether :func:`error_facts` applies: one T-FDPA or ST-FDPA as :func:`supports_error_bound` takes it (GST-FDPA's
    own, :func:`~smtmma.op_proofs.gstfdpa.supports_error_facts`, takes the same chain on its group summands)."""
    return supports_error_bound(model, K)


def error_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the error query's own formula (``formula``: an
    :class:`~smtmma.queries.properties.error_bound.ErrorFormula` in relative units 2**(e_max - F - G)), that leave
    its final check ``|Phi - exact| > scale * bound`` a linear step on whole units 2**G = 2**(e_max - F).

    On the model's own terms, each fact proved under only the facts it names (Table 9: "the errors are additive"):
    each summand's exact value X_k has Q_k = floor(t_k / 2**(e_max - F)) whole units (floor(X_k / 2**G) = Q_k);
    the exact running sums then keep 0 <= floor(sum X / 2**G) - sum Q <= j (the remainders' carries); the model's
    aligned summand A_k (RZ_F, Alg. 7 line 10) is Q_k or Q_k + 1, so its running sums S_j keep 0 <= S_j - sum Q <= j + 1;
    on finite inputs D is rho(S * 2**(e_max - F)) (the glue, Alg. 7 step 3), so a finite D is a whole number of
    units within the rounding's ulps of S.  No stand-in: the final statement is the query itself.
    """
    alg, model, x = formula.alg, formula.model, formula.x
    F, G = model.F, formula.G
    assert F is not None
    plan = Plan(model, x.K)
    p = fused_parts(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
    e = formula.e_max
    Q = [aligned(alg, t, e, F, floor=True) for t in p.terms]  # the model's own summands (C widened to D's format)
    gst = model.kind == "gst-fdpa"  # its summands are the groups' exact dots times their scales (Alg. 9 lines 3-5)
    names = [f"{'group' if gst else 'product'} {k}" for k in range(len(p.terms) - 1)] + ["c"]
    alg_ref = "Alg. 9, as Alg. 7" if gst else "Alg. 7"
    whole = []
    for name, X, q, out in zip(names, formula.exact_terms, Q, formula.summand_outside):
        chain.prove(f"{name}'s exact value has floor(t / 2^(e_max-F)) whole units 2^(e_max-F) ({alg_ref} line 10)",
                    alg.and_(alg.not_(out), alg.eq(alg.shr(X, G), q)), uses=[])
        whole.append(chain.last)
    ups = []
    for k, (A, q) in enumerate(zip(p.aligned, Q)):
        step = alg.sub(A, q)
        chain.prove(f"{names[k]} aligned at e_max (RZ_F) is its floor or one above", alg.and_(alg.le(0, step), alg.le(step, 1)), uses=[])
        ups.append(chain.last)
    exact_run, floor_run, last_x, last_s = formula.exact_terms[0], Q[0], whole[0], ups[0]
    for j in range(1, len(Q)):
        before = floor_run
        runs = carry_fact(chain, exact_run, floor_run, formula.exact_terms[j], Q[j], G, j,
                          f"exact running sum {j}: its whole units exceed the floors' sum by at most {j}", [last_x, whole[j]])
        if runs is None:
            return False
        (exact_run, floor_run), last_x = runs, chain.last
        if not ahead_fact(chain, p.prefix[j - 1], before, p.aligned[j], Q[j], p.prefix[j], floor_run, j,
                          f"aligned running sum {j} exceeds the floors' sum by at most {j + 1}", [last_s, ups[j]]):
            return False
        last_s = chain.last
    total = p.wrapped(alg, F, model.carry_bits)
    scales_ok = scales_not_nan(alg, model, x)  # ST-FDPA's lane scales, GST-FDPA's group scales
    ua, ub = [unpack(alg, plan.fa, v) for v in x.a], [unpack(alg, plan.fb, v) for v in x.b]
    fin = alg.and_(all_finite(alg, *ua, *ub, decode_input(alg, plan.fc, x.c, plan.fd.name)), scales_ok)
    rho = convert_fixed(alg, plan.rfmt, plan.mode, total, alg.sub(p.e_max, F))
    rounded_output_facts(chain, formula, plan, fin,
                         "a finite D has finite inputs (an infinite or NaN input, or a NaN scale, makes D infinite or NaN)",
                         rho, f"glue ({alg_ref} step 3): on finite inputs D is {plan.mode}-{plan.rfmt.name} of S * 2^(e_max-F)",
                         total, G, "2^(e_max-F)")
    return not chain.stopped


# -- monotonicity ----------------------------------------------------------------------------------------


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`prove_monotone` applies: one T-FDPA (not block-scaled) as :func:`supports_error_bound` takes it."""
    return model.kind == "t-fdpa" and supports_error_bound(model, K)


class MonotoneShape:
    """What every lemma shares: the plan (formats, exponent ranges), the summands of the sum, the shift cap Dc.

    ``with_c``: c is one of the n summands (T-FDPA: K products and c; TR-FDPA:
    the L products only, c joins in a second stage).  ``margin``: how many
    w's the raised summand gains beyond covering the n - 1 others (the
    second stage's losses, :mod:`~smtmma.op_proofs.trfdpa`).  ``zeros_at_floor``: zero
    summands give e_max the floor below every summand (TR-FDPA's Alg. 10 step
    2), not the model's own rule.  ``Dc``: the shift cap, F + 3 by default.
    """

    def __init__(self, model: Model, K: int, *, n: Optional[int] = None, with_c: bool = True, margin: int = 0,
                 zeros_at_floor: bool = False, Dc: Optional[int] = None) -> None:
        self.plan = Plan(model, K)
        self.model, self.K = model, K
        F = model.F
        assert F is not None
        self.F = F
        # at D >= Dc every other summand (below 2**(E+2)) aligns to 0 at E', and A(t, E) < 2**Dc: the cap loses nothing
        self.Dc = F + 3 if Dc is None else Dc
        self.with_c, self.margin = with_c, margin
        self.floor = self.plan.e_lo if zeros_at_floor else None
        self.n = (K + 1 if with_c else K) if n is None else n
        self.gain_k = self.n - 1 + margin  # the w's the raised summand's gain covers
        p = self.plan
        self.e_lo, self.e_hi = p.e_lo, (p.e_hi if with_c else max(p.tp.exp.hi, p.e_lo))


def fresh_summand(alg: QueryAlgebra, sh: MonotoneShape, which: str) -> Term:
    """A fresh summand: a lane's product a*b (``which`` "ab") or c (``"c"``), finite and non-negative."""
    p = sh.plan
    if which == "c":
        return input_term(decode_input(alg, p.fc, nonneg_pattern(alg, "c", p.fc)[0], p.fd.name))
    ua, ub = nonneg_pattern(alg, "a", p.fa)[1], nonneg_pattern(alg, "b", p.fb)[1]
    return product(alg, ua, ub)[0]


def largest_aligned(sh: MonotoneShape) -> int:
    """The largest summand (a product, and c when it is one) aligned at any E >= its exponent, in units 2**(E - F)."""
    probe = QueryAlgebra()
    E = ranged_var(probe, "E", sh.e_lo, sh.e_hi)
    return max(aligned(probe, fresh_summand(probe, sh, w), E, sh.F).hi for w in (("ab", "c") if sh.with_c else ("ab",)))


def capped_shift(alg: QueryAlgebra, sh: MonotoneShape, E: Int, E2: Int) -> tuple[Int, Int]:
    """(D, w): D = min(E' - E, Dc) (E <= E'), w = 2**D - 1."""
    D = alg.clamp(alg.sub(E2, E), 0, sh.Dc)
    return D, alg.sub(alg.shl(1, D), 1)


def fresh_exponents(alg: QueryAlgebra, sh: MonotoneShape) -> tuple[Int, Int]:
    """Fresh alignment exponents E <= E' of the two runs."""
    E, E2 = ranged_var(alg, "E", sh.e_lo, sh.e_hi), ranged_var(alg, "E2", sh.e_lo, sh.e_hi)
    alg.assert_(alg.le(E, E2))
    return E, E2


def _below(alg: QueryAlgebra, t: Term, E: Int) -> Bool:
    return alg.or_(alg.eq(t.sig, 0), alg.le(t.exp, E))


def realign_lemma(sh: MonotoneShape, which: str, summand: Optional[Callable[[QueryAlgebra], Term]] = None,
                  what: str = "") -> Part:
    """Another summand t, aligned at E and at E' >= E: s = 2**D * A(t, E') + w - A(t, E) is in [0, w], A(t, E) >= 0.

    ``summand``: builds t on fresh variables (default: :func:`fresh_summand` of ``which``); ``what`` names it."""
    alg = QueryAlgebra()
    t = summand(alg) if summand is not None else fresh_summand(alg, sh, which)
    E, E2 = fresh_exponents(alg, sh)
    alg.assert_(_below(alg, t, E))
    D, w = capped_shift(alg, sh, E, E2)
    A, A2 = aligned(alg, t, E, sh.F), aligned(alg, t, E2, sh.F)
    s = alg.sub(alg.add(alg.shl(A2, D), w), A)
    what = what or ("c" if which == "c" else "a*b")
    return Part(f"re-alignment of another summand ({what}) from E to E' >= E: A(t,E) <= 2^D A(t,E') + (2^D - 1), "
                  f"D = min(E'-E, {sh.Dc})", negated_script(alg, alg.all([alg.le(0, A), alg.le(0, A2), alg.le(0, s), alg.le(s, w)])))


def _raised(alg: QueryAlgebra, sh: MonotoneShape, who: str) -> tuple[Term, Term, Unpacked, Unpacked]:
    """(t, t') of a summand whose input ``who`` (a, b or c) moves to its next value, with the moved input's fields."""
    p = sh.plan
    if who == "c":
        v, u, v2, u2 = raised_pattern(alg, p.fc, "c")
        t = input_term(decode_input(alg, p.fc, v, p.fd.name))
        t2 = input_term(decode_input(alg, p.fc, v2, p.fd.name))
        return t, t2, u, u2
    fmt, other = (p.fa, p.fb) if who == "a" else (p.fb, p.fa)
    _, u, _, u2 = raised_pattern(alg, fmt, who)
    uo = nonneg_pattern(alg, "b" if who == "a" else "a", other)[1]
    pair = (lambda x: (x, uo)) if who == "a" else (lambda x: (uo, x))
    return product(alg, *pair(u))[0], product(alg, *pair(u2))[0], u, u2


def gain_setup(alg: QueryAlgebra, sh: MonotoneShape, t: Term, t2: Term) -> tuple[Int, Int, Int, Int]:
    """(E, E', D, w) as the exponents lemma leaves them: E bounds t, E' is E or t''s exponent and bounds t'."""
    E, E2 = fresh_exponents(alg, sh)
    alg.assert_(_below(alg, t, E))
    alg.assert_(_below(alg, t2, E2))
    alg.assert_(alg.or_(alg.eq(E2, E), alg.and_(alg.ne(t2.sig, 0), alg.eq(E2, t2.exp))))
    D, w = capped_shift(alg, sh, E, E2)
    return E, E2, D, w


def gain_goal(alg: QueryAlgebra, sh: MonotoneShape, t: Term, t2: Term, E: Int, E2: Int, D: Int, w: Int) -> Bool:
    A, A2 = aligned(alg, t, E, sh.F), aligned(alg, t2, E2, sh.F)
    s = alg.sub(alg.sub(alg.shl(A2, D), A), alg.mul(sh.gain_k, w))
    return alg.all([alg.le(0, A), alg.le(0, s)])


def gain_lemma(sh: MonotoneShape, who: str, case: str) -> Part:
    """The raised summand's gain, 2**D * A(t', E') >= A(t, E) + K * w, in one case of the move.

    ``case``: "far" (a zero raised, or E' > E), "cross" (E' = E, the exponent
    field up by one), "all" (every move: used for c, whose term has no product).
    """
    alg = QueryAlgebra()
    t, t2, u, u2 = _raised(alg, sh, who)
    E, E2, D, w = gain_setup(alg, sh, t, t2)
    if case == "far":
        alg.assert_(alg.or_(u.is_zero, alg.ne(E2, E)))
    elif case == "cross":
        alg.assert_(alg.and_(alg.eq(E2, E), alg.eq(u2.exp, alg.add(u.exp, 1))))
        alg.assert_(alg.not_(u.is_zero))
    what = {"far": "a zero raised, or E' > E", "cross": "E' = E, the exponent field up by one",
            "all": "every move"}[case]
    return Part(f"gain of the raised summand (raising {who}; {what}): 2^D A(t',E') >= A(t,E) + {sh.gain_k} (2^D - 1)",
                negated_script(alg, gain_goal(alg, sh, t, t2, E, E2, D, w)))


def exponent_step_lemma(sh: MonotoneShape, who: str) -> Part:
    """Raising input ``who`` by one move: the summand was zero, or is non-zero with an exponent not smaller; and a
    non-zero step keeps the exponent field and adds 1 to the significand, or adds 1 to the exponent field."""
    alg = QueryAlgebra()
    t, t2, u, u2 = _raised(alg, sh, who)
    same = alg.and_(alg.eq(u2.exp, u.exp), alg.eq(u2.sig, alg.add(u.sig, 1)))
    cross = alg.eq(u2.exp, alg.add(u.exp, 1))
    goal = alg.all([alg.or_(alg.eq(t.sig, 0), alg.and_(alg.ne(t2.sig, 0), alg.le(t.exp, t2.exp))),
                    alg.or_(u.is_zero, alg.or_(same, cross))])
    return Part(f"next pattern (raising {who}): the summand was 0, or stays non-zero with an exponent not smaller; a "
                  "non-zero input keeps its exponent field and gains 1 in its significand, or gains 1 in its exponent field",
                  negated_script(alg, goal))


def product_step_lemma(sh: MonotoneShape, who: str) -> Part:
    """The encoding's product of significands when the raised one is x + 1: (x + 1) * y = x * y + y (or x * (y + 1))."""
    p = sh.plan
    alg = QueryAlgebra()
    ua = unpack(alg, p.fa, alg.var("a", p.fa.bits))
    ub = unpack(alg, p.fb, alg.var("b", p.fb.bits))
    x = alg.var("x", ua.sig.hi.bit_length())
    y = alg.var("y", ub.sig.hi.bit_length())
    if who == "a":
        goal = alg.eq(alg.mul(alg.add(x, 1), y), alg.add(alg.mul(x, y), y))
        text = "(x + 1) * y = x * y + y"
    else:
        goal = alg.eq(alg.mul(x, alg.add(y, 1)), alg.add(alg.mul(x, y), x))
        text = "x * (y + 1) = x * y + x"
    return Part(f"product step (raising {who} in its binade): {text} for the significands' widths", negated_script(alg, goal))


def aligned_step_lemma(sh: MonotoneShape) -> Part:
    """Aligning is monotone in the significand: A(m + y, E) >= A(m, E) for one exponent (a product's ranges)."""
    p = sh.plan
    alg = QueryAlgebra()
    ua = unpack(alg, p.fa, alg.var("a", p.fa.bits))
    ub = unpack(alg, p.fb, alg.var("b", p.fb.bits))
    t = product(alg, ua, ub)[0]
    m = alg.var("m", t.sig.hi.bit_length())
    y = alg.var("y", max(ua.sig.hi, ub.sig.hi).bit_length())
    alg.assert_(alg.le(alg.add(m, y), t.sig.hi))
    e = ranged_var(alg, "e", t.exp.lo, t.exp.hi)
    neg = alg.bvar("neg")
    alg.assert_(alg.or_(alg.not_(neg), alg.and_(alg.eq(m, 0), alg.eq(y, 0))))  # non-negative inputs: only a zero is -0
    E = ranged_var(alg, "E", p.e_lo, p.e_hi)
    alg.assert_(alg.or_(alg.le(e, E), alg.eq(alg.add(m, y), 0)))  # a zero product may carry any exponent
    lo, hi = aligned(alg, Term(neg, m, e, t.frac), E, sh.F), aligned(alg, Term(neg, alg.add(m, y), e, t.frac), E, sh.F)
    return Part("aligned step: a product's significand m grown by y >= 0 at the same exponent aligns to no less",
                  negated_script(alg, alg.le(lo, hi)))


def shape_e_max(alg: QueryAlgebra, sh: MonotoneShape, ts: list[Term]) -> Int:
    """The encoding's e_max of summands ``ts``: their largest exponent (zeros at the shape's floor), at least the
    model's floor."""
    e = max_exponent(alg, ts, sh.floor)
    return alg.max(e, sh.model.emax_floor) if sh.model.emax_floor is not None else e


def exponents_lemma(sh: MonotoneShape) -> Part:
    """On n fresh summand exponents (zero flags), one raised: E <= E', E' is E or the raised one's, and bounds it."""
    p = sh.plan
    alg = QueryAlgebra()
    kinds = [p.tp, p.tc] if sh.with_c else [p.tp]
    lo, hi = min(t.exp.lo for t in kinds), max(t.exp.hi for t in kinds)
    f = alg.bconst(False)

    def term(name: str) -> Term:
        return Term(f, ranged_var(alg, f"z{name}", 0, 1), ranged_var(alg, f"e{name}", lo, hi), 0)

    others = [term(str(i)) for i in range(1, sh.n)]
    t, t2 = term("0"), term("0_2")
    alg.assert_(alg.or_(alg.eq(t.sig, 0), alg.and_(alg.ne(t2.sig, 0), alg.le(t.exp, t2.exp))))
    E, E2 = shape_e_max(alg, sh, [t, *others]), shape_e_max(alg, sh, [t2, *others])
    goal = alg.all([alg.le(E, E2), alg.or_(alg.eq(E2, E), alg.and_(alg.ne(t2.sig, 0), alg.eq(E2, t2.exp)))])
    return Part(f"exponents: raising one of {sh.n} summands (a zero, or to an exponent not smaller) gives E <= E', "
                  "E' = E or E' = the raised summand's exponent (the encoding's e_max)", negated_script(alg, goal))


def distributivity_lemma(sh: MonotoneShape, s_rng: tuple[int, int]) -> Part:
    alg = QueryAlgebra()
    P, Q = ranged_var(alg, "P", 0, s_rng[1]), ranged_var(alg, "Q", 0, s_rng[1])
    alg.assert_(alg.le(alg.add(P, Q), s_rng[1]))
    D = ranged_var(alg, "D", 0, sh.Dc)
    goal = alg.eq(alg.shl(alg.add(P, Q), D), alg.add(alg.shl(P, D), alg.shl(Q, D)))
    return Part(f"distributivity (each node of the sum): 2^D (P + Q) = 2^D P + 2^D Q, P, Q >= 0, D <= {sh.Dc}",
                  negated_script(alg, goal))


def composition_lemmas(sh: MonotoneShape, a_hi: int, peers: int = 0) -> list[Part]:
    """With B_i = A_i + s_i - w (s_i >= 0, the other summands) and B_0 = A_0 + K w + s_0: sum A <= sum B.

    ``peers``: summands 1..peers are raised with the first and lose nothing (B_i = A_i + s_i; GST-FDPA's groups that
    share a raised block scale).  Written at one bit-width W with every variable bounded far below 2**(W-2)
    (no sum wraps): the rewriter then cancels the sums, where mixed widths
    leave a solver adding inequalities bit by bit (no answer in minutes).
    """
    a_bits, s0_bits = a_hi.bit_length(), a_hi.bit_length() + sh.Dc  # s_0 <= 2**D * A(t', E'); s_i <= w (i >= 1)
    k = sh.gain_k
    top = ((sh.n + peers) << a_bits) + ((1 + peers) << s0_bits) + (k << sh.Dc)  # above sum A + sum s: no sum wraps
    W = max(64, top.bit_length() + 1)  # bitwuzla cancels these sums at 64 bits, not at 67 (measured)

    def lit(v: int) -> str:
        return f"(_ bv{v} {W})"

    lines = ["(set-logic QF_BV)", f"(declare-const w (_ BitVec {W}))", f"(assert (bvult w {lit(1 << sh.Dc)}))"]
    for i in range(sh.n):
        lines += [f"(declare-const A{i} (_ BitVec {W}))", f"(assert (bvult A{i} {lit(1 << a_bits)}))",
                  f"(declare-const s{i} (_ BitVec {W}))", f"(assert (bvult s{i} {lit(1 << (s0_bits if i <= peers else sh.Dc))}))"]
    lines.append(f"(define-fun B0 () (_ BitVec {W}) (bvadd A0 s0 (bvmul {lit(k)} w)))")
    lines += [f"(define-fun B{i} () (_ BitVec {W}) (bvadd A{i} s{i}))" for i in range(1, peers + 1)]
    lines += [f"(define-fun B{i} () (_ BitVec {W}) (bvsub (bvadd A{i} s{i}) w))" for i in range(peers + 1, sh.n)]
    total = " ".join(f"A{i}" for i in range(sh.n))
    total_b = " ".join(f"B{i}" for i in range(sh.n))
    if sh.margin:
        total += f" (bvmul {lit(sh.margin)} w)"
    more = f" + {sh.margin} w" if sh.margin else ""
    raised = f" and {peers} raised with it with A_i <= B_i" if peers else ""
    label = (f"composition: {sh.n - 1 - peers} summands with A_i <= B_i + w{raised} and the raised one with A_0 + {k} w <= B_0 "
             f"(as equalities with slacks s_i >= 0) give sum A{more} <= sum B")
    goal = f"(assert (not (bvule (bvadd {total}) (bvadd {total_b}))))"
    if W <= 64:
        return [Part(label, "\n".join(lines + [goal]) + "\n")]
    # wider than 64 bits bitwuzla no longer cancels the sums under the inequality (no answer in 120 s for GST-FDPA's
    # 86 bits), but proves the identity, and the inequality once the identity is a premise, in well under a second
    slacks = " ".join(f"s{i}" for i in range(sh.n)) + (f" (bvmul {lit(peers)} w)" if peers else "")
    identity = f"(= (bvadd {total_b}) (bvadd (bvadd {total}) (bvadd {slacks})))"
    extra = f" + {peers} w" if peers else ""
    return [Part(f"composition, the sums: sum B = (sum A{more}) + sum s{extra} (the definitions of the B_i)",
                   "\n".join(lines + [f"(assert (not {identity}))"]) + "\n"),
            Part(label + " (with the sums' identity above as a premise)",
                   "\n".join(lines + [f"(assert {identity})", goal]) + "\n")]


def value_lemma(sh: MonotoneShape, s_rng: tuple[int, int], fbits: Optional[int] = None, stage: str = "") -> Part:
    """S <= 2**D S' gives S 2**(E-fbits) <= S' 2**(E'-fbits); ``fbits`` F by default (``stage``: the label's tag,
    with E over the plan's whole range, as the second stage of :mod:`~smtmma.op_proofs.trfdpa` has it)."""
    alg = QueryAlgebra()
    S, S2 = ranged_var(alg, "S", 0, s_rng[1]), ranged_var(alg, "S2", 0, s_rng[1])
    f = sh.F if fbits is None else fbits
    if stage:
        E, E2 = ranged_var(alg, "E", sh.plan.e_lo, sh.plan.e_hi), ranged_var(alg, "E2", sh.plan.e_lo, sh.plan.e_hi)
        alg.assert_(alg.le(E, E2))
    else:
        E, E2 = fresh_exponents(alg, sh)
    D, _ = capped_shift(alg, sh, E, E2)
    alg.assert_(alg.le(S, alg.shl(S2, D)))
    goal = value_le(alg, PreRounding(S, alg.sub(E, f), None), PreRounding(S2, alg.sub(E2, f), None))
    name = "F" if fbits is None else f"F2={fbits}"
    return Part(f"value{stage}: S <= 2^D S' (S, S' >= 0) gives S 2^(E-{name}) <= S' 2^(E'-{name})",
                  negated_script(alg, goal))


def monotone_lemmas(model: Model, K: int) -> list[Part]:
    """Every lemma of the proof, the glue first (see the module docstring)."""
    sh = MonotoneShape(model, K)
    glue, s_rng = glue_lemma(sh.plan)
    a_hi = largest_aligned(sh)
    lemmas = [glue, exponents_lemma(sh), realign_lemma(sh, "ab"), realign_lemma(sh, "c")]
    for who in ("a", "b"):
        lemmas += [exponent_step_lemma(sh, who), gain_lemma(sh, who, "far"), gain_lemma(sh, who, "cross"),
                   product_step_lemma(sh, who)]
    lemmas += [aligned_step_lemma(sh), exponent_step_lemma(sh, "c"), gain_lemma(sh, "c", "all"),
               distributivity_lemma(sh, s_rng), *composition_lemmas(sh, a_hi), value_lemma(sh, s_rng),
               monotone_rounding_lemma(sh.plan, s_rng, sh.F)]
    return lemmas


def prove_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of a finite non-negative input lowers D: "holds" with every lemma's block
    (expecting unsat), or "unknown" naming the first lemma a solver did not prove; seconds per lemma."""
    return run_parts(monotone_lemmas(model, K), run)


# -- monotonicity of chained FDPAs (Alg. 5 with C added last) ------------------------------------------------


def chain_step(model: Model) -> Model:
    """The one-FDPA model each FDPA of a ``c_after`` chain is: inputs in the format they are converted to exactly
    (``via``), C inside the sum (the previous FDPA's D, or 0)."""
    v = model.via or model.a_fmt
    return model.replace(a_fmt=v, b_fmt=model.via or model.b_fmt, via=None, c_after=False, issue=None, interleave=None)


def supports_chain_monotone(model: Model, K: int) -> bool:
    """Whether :func:`prove_chain_monotone` applies: T-FDPAs chained from zero by Alg. 5 within one issue, C added
    last by an RNE add in D's format (``c_after``), each FDPA one the one-FDPA proof covers (:func:`chain_step`)."""
    if model.kind != "t-fdpa" or not model.c_after or model.L is None or model.scale_fmt is not None or model.ftz_inputs:
        return False
    if model.issue is not None and K > model.issue:
        return False
    return model.c_fmt == output_container(model).name and supports_monotone(chain_step(model), model.L)


def chain_monotone_lemmas(model: Model, K: int) -> list[Part]:
    """The chain's glue, the conversions, the FDPA step's lemmas (:func:`monotone_lemmas`), an FDPA with c = +inf, and
    the RNE add of C (see :func:`prove_chain_monotone`)."""
    assert model.L is not None
    step = chain_step(model)
    fd = output_container(model)
    nan_bits = nan_pattern(model, fd)
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    to_a, to_b = get_format(step.a_fmt), get_format(step.b_fmt)
    # glue: the model's D is C added (RNE) to the chain of FDPA steps on the converted lanes, from 0 (run_model's own)
    g = QueryAlgebra()
    x = InputSet.of(g, model, K)
    conv = lambda fmt, to, v: v if fmt.name == to.name else converted_pattern(g, unpack(g, fmt, v), to)  # noqa: E731
    ca, cb = [conv(fa, to_a, v) for v in x.a], [conv(fb, to_b, v) for v in x.b]
    zero = g.const(0)
    acc: Int = zero
    ((_, chunks),) = issue_chunks(model, K)
    for ks in chunks:
        acc = run_model(g, step, [ca[k] if k is not None else zero for k in ks], [cb[k] if k is not None else zero for k in ks], acc)
    d = add(g, unpack(g, fd, acc), decode_input(g, fc, x.c, fd.name), out=fd, ftz=False, nan_bits=nan_bits)
    out = [Part(f"glue (Alg. 5, C last): the model's D is RNE-{fd.name}(chain + C), the chain {len(chunks)} FDPA steps "
                f"({step.describe()}) from 0 on the lanes converted to {to_a.name}", negated_script(g, g.eq(run_model(g, model, x.a, x.b, x.c), d)))]
    for fmt, to in dict.fromkeys([(fa, to_a), (fb, to_b)]):
        if fmt.name == to.name:
            continue
        h = QueryAlgebra()
        v, _, v2, _ = raised_pattern(h, fmt, "v")
        p, p2 = (converted_pattern(h, unpack(h, fmt, y), to) for y in (v, v2))
        goal = h.all([finite_nonneg(h, to, p), finite_nonneg(h, to, p2), h.le(value_key(h, to, p), value_key(h, to, p2))])
        out.append(Part(f"conversion: a finite non-negative {fmt.name} and its next value convert to finite non-negative "
                        f"{to.name} values in the same order", negated_script(h, goal)))
    out += [Part(f"FDPA step: {p.label}", p.script) for p in monotone_lemmas(step, model.L)]
    # an FDPA step of finite non-negative lanes: not NaN and not below zero for c non-negative, +inf for c = +inf
    h = QueryAlgebra()
    lanes = [nonneg_pattern(h, f"a{k}", to_a)[0] for k in range(model.L)], [nonneg_pattern(h, f"b{k}", to_b)[0] for k in range(model.L)]
    c = h.var("c", fd.bits)
    h.assert_(nonneg(h, fd, c))
    r = run_model(h, step, *lanes, c)
    is_inf = lambda y: h.eq(y, fd.inf_bits())  # noqa: E731
    out.append(Part("FDPA step with c = +inf: finite non-negative lanes and c not below zero give D not below zero, "
                    "+inf when c is", negated_script(h, h.and_(nonneg(h, fd, r), h.or_(h.not_(is_inf(c)), is_inf(r))))))
    # C added last: RNE add of values not below zero is monotone in each operand
    for raised in ("the chain", "C"):
        h = QueryAlgebra()
        y, y2, z = (h.var(n, fd.bits) for n in ("y", "y2", "z"))
        for v in (y, y2, z):
            h.assert_(nonneg(h, fd, v))
        h.assert_(h.le(value_key(h, fd, y), value_key(h, fd, y2)))
        s1, s2 = ((add(h, unpack(h, fd, v), unpack(h, fd, z), out=fd, ftz=False, nan_bits=nan_bits) for v in (y, y2))
                  if raised == "the chain" else
                  (add(h, unpack(h, fd, z), unpack(h, fd, v), out=fd, ftz=False, nan_bits=nan_bits) for v in (y, y2)))
        goal = h.all([nonneg(h, fd, s1), nonneg(h, fd, s2), h.le(value_key(h, fd, s1), value_key(h, fd, s2))])
        out.append(Part(f"C added last (RNE-{fd.name}): raising {raised} (values not below zero, +inf included) never "
                        "lowers the sum", negated_script(h, goal)))
    return out


def prove_chain_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of a finite non-negative input lowers D of a ``c_after`` chain (Alg. 5, C last).

    The chain is monotone if each of its steps is: raising a lane raises its converted value (**conversion**), so
    its FDPA's D by the one-FDPA proof (**FDPA step**, single moves chained); a larger c of a later FDPA, finite, by
    the same proof, or +inf, which that FDPA keeps (**c = +inf**); and the RNE add of C is monotone in both
    operands.  "holds" with every lemma's block, or "unknown" naming the first lemma a solver did not prove.
    """
    proof = run_parts(chain_monotone_lemmas(model, K), run)
    proof.summary = ("glue, the conversions, the one-FDPA proof of each step (glue, re-alignment and gain, composition, "
                     "rounding), a step with c = +inf, the RNE add of C, composed along the chain")
    return proof


# -- symmetry of chained FDPAs (Alg. 5: several FDPAs, C added last, inputs converted first) ------------------


def supports_chained_symmetry(model: Model, K: int) -> bool:
    """Whether :func:`negated_chain_facts` applies: T-FDPAs chained by Alg. 5 (K > L, an issue width, or C added
    last), inputs read as they are or converted (``via``), C and D in one format, no carry limit."""
    if model.kind != "t-fdpa" or model.L is None or model.scale_fmt is not None or model.ftz_inputs:
        return False
    if model.carry_bits is not None or model.zero_emax or model.ieee_zero:
        return False
    if model.c_fmt != output_container(model).name:
        return False
    return model.c_after or model.issue is not None or K > model.L


def negated_chain_facts(chain: LemmaChain, alg: QueryAlgebra, model: Model, x: InputSet, na: list[Int], nc: Int,
                        decoded: list[Optional[int]], decoded_c: Optional[int]) -> Optional[int]:
    """Prove, in the symmetry query's own formula, FDPA by FDPA of Alg. 5 on (-A, B, -C), that each step is the
    original negated: each lane converted (``via``) keeps its fields with the sign flipped; per FDPA, the summands
    align at the same e_max and the fused sum is negated summand by summand (where the chained c is not NaN), and
    its D decodes to the original's fields, sign flipped; with ``c_after``, C's RNE add likewise
    (:func:`~smtmma.op_proofs.fused_sum.negated_rounded_sum2`).  The chunks, their lane order (``interleave``) and
    issues are those run_model forms; each step is the one-FDPA model on them, so its terms are the model's own.
    Returns the fact about D."""
    fa, fc = get_format(model.a_fmt), get_format(model.c_fmt)
    fd = output_container(model)
    K = len(x.a)
    step = model.replace(c_after=False, issue=None, interleave=None)
    lane = list(decoded)  # per lane: the fact that -a_k, as the unit reads it, has a_k's fields, sign flipped
    if model.via is not None and model.via != fa.name:
        to = get_format(model.via)
        for k in range(K):
            conv = [converted_pattern(alg, unpack(alg, fa, v), to) for v in (x.a[k], na[k])]
            negated_output_fact(chain, alg, to, conv[0], conv[1], f"lane {k}", [decoded[k]],
                                what=f"a converted to {to.name} (as the unit reads it)")
            lane[k] = chain.last
    zero = alg.const(0)
    d = d2 = x.c
    c_fact: Optional[int] = decoded_c
    issues = issue_chunks(model, K)  # as run_model chains them
    for start, chunks in issues:
        end = max(k for ks in chunks for k in ks if k is not None)
        c_in, c_in2, c_in_fact = (x.c, nc, decoded_c) if start == 0 else (d, d2, c_fact)  # this issue's C
        acc, acc2 = (zero, zero) if model.c_after else (c_in, c_in2)
        acc_fact: Optional[int] = None if model.c_after else c_in_fact
        for j, ks in enumerate(chunks):
            pick = lambda xs: [xs[k] if k is not None else zero for k in ks]  # noqa: E731
            a1, a2, b = pick(x.a), pick(na), pick(x.b)
            facts = [lane[k] if k is not None else None for k in ks]
            at = f"FDPA {j + 1} of lanes {start}-{end}" if K > len(ks) or model.c_after else "the FDPA"
            p = fused_parts(alg, step, a1, b, acc)
            q = fused_parts(alg, step, a2, b, acc2)
            cu = unpack(alg, fc, acc)
            finite_c = alg.not_(alg.or_(cu.is_nan, cu.is_inf))
            chain.prove(f"{at}: the negated inputs align at the same e_max", alg.eq(q.e_max, p.e_max),
                        uses=[*facts, acc_fact])
            same_emax = chain.last
            negated_sum_lemmas(chain, alg, p.aligned, q.aligned, p.total, q.total,
                               [[f, same_emax] for f in facts] + [[acc_fact, same_emax]], operand="summand",
                               whole="the fused sum", prefix=f"{at}: ", premise=finite_c)
            summed = chain.last
            acc, acc2 = run_model(alg, step, a1, b, acc), run_model(alg, step, a2, b, acc2)
            negated_output_fact(chain, alg, fd, acc, acc2, at, [summed, same_emax, *facts, acc_fact])
            acc_fact = chain.last
        if model.c_after:  # C joins last through an RNE add of D's format (Alg. 5 with C after the FDPAs)
            ux, ux2 = unpack(alg, fd, acc), unpack(alg, fd, acc2)
            uc, uc2 = decode_input(alg, fc, c_in, fd.name), decode_input(alg, fc, c_in2, fd.name)
            if not negated_rounded_sum2(chain, alg, "an RNE add (C added last)", fd, "rne", (ux,), (uc,), (ux2,), (uc2,)):
                return None
            nan_bits = nan_pattern(model, fd)
            acc = add(alg, ux, uc, out=fd, ftz=False, nan_bits=nan_bits)
            acc2 = add(alg, ux2, uc2, out=fd, ftz=False, nan_bits=nan_bits)
            negated_output_fact(chain, alg, fd, acc, acc2, "C added last", [acc_fact, c_in_fact], applied=True)
            acc_fact = chain.last
        d, d2, c_fact = acc, acc2, acc_fact
    return c_fact
