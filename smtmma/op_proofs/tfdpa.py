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
from typing import Any, Callable, NamedTuple, Optional, Protocol, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import aligned, max_exponent
from ..encodings.terms import Term, input_term, product
from ..encodings.addmul import add
from ..encodings.rounding import convert_fixed
from ..encodings.tfdpa import tfdpa_terms
from ..formats import Format, get_format
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import range_premise
from ..proof_kernel.parts import Part, PartsProof, all_finite, between, implies, negated_script, ranged_var, run_parts
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner, fused_parts, output_container, value_key
from ..simulate import converted_pattern, decode_input, issue_chunks, nan_pattern, run_model
from .fused_sum import (Plan, accumulate_lemma, ahead_fact, carry_fact, glue_inputs, negated_rounded_sum2, negated_sum_lemmas, plan_scales,
                        rounded_output_facts, scales_not_nan, summand_lemma)
from .fma import apply_step_facts, step_facts
from .moves import finite_nonneg, move_firsts, next_moves, nonneg, nonneg_pattern, raised_pattern
from .rounding import PreRounding, conversion_lemma, final_rounding, monotone_rounding_lemma, negated_output_fact, truncated_rounding, value_le

__all__ = ["Credits", "LaneMoves", "MonotoneShape", "MoveLemmas", "MoveSums", "WideSums", "credit_facts", "aligned_step_lemma", "at_new_max", "capped_shift", "chain_monotone_lemmas", "chain_step", "composition_lemmas", "distributivity_lemma",
           "error_composition_lemma", "error_facts", "error_parts", "exponent_step_lemma", "exponents_lemma", "fresh_exponents", "fresh_summand",
           "gain_goal", "gain_lemma", "gain_setup", "glue_lemma", "largest_aligned", "monotone_facts", "monotone_lemmas", "negated_chain_facts", "product_step_lemma",
           "prove_chain_monotone", "prove_error_bound", "prove_monotone", "realign_lemma", "shape_e_max", "sum_monotone_facts", "SummandMoves", "supports_chain_monotone", "supports_chained_symmetry", "supports_error_bound", "supports_error_facts",
           "lane_term", "supports_monotone", "value_lemma", "zero_or_below"]


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


def zero_or_below(alg: QueryAlgebra, t: Term, E: Int) -> Bool:
    """t is zero or its exponent is at most E (a summand of a run whose e_max is E)."""
    return alg.or_(alg.eq(t.sig, 0), alg.le(t.exp, E))


def at_new_max(alg: QueryAlgebra, t2: Term, E: Int, E2: Int) -> Bool:
    """E' = E, or E' is the exponent of the raised summand t' (non-zero): where a move leaves the raised run's e_max."""
    return alg.or_(alg.eq(E2, E), alg.and_(alg.ne(t2.sig, 0), alg.eq(E2, t2.exp)))


def realign_lemma(sh: MonotoneShape, which: str, summand: Optional[Callable[[QueryAlgebra], Term]] = None,
                  what: str = "") -> Part:
    """Another summand t, aligned at E and at E' >= E: s = 2**D * A(t, E') + w - A(t, E) is in [0, w], A(t, E) >= 0.

    ``summand``: builds t on fresh variables (default: :func:`fresh_summand` of ``which``); ``what`` names it."""
    alg = QueryAlgebra()
    t = summand(alg) if summand is not None else fresh_summand(alg, sh, which)
    E, E2 = fresh_exponents(alg, sh)
    alg.assert_(zero_or_below(alg, t, E))
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
    alg.assert_(zero_or_below(alg, t, E))
    alg.assert_(zero_or_below(alg, t2, E2))
    alg.assert_(at_new_max(alg, t2, E, E2))
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


# -- monotonicity on the model's own terms: one symbolic move ---------------------------------------------


def lane_term(g: QueryAlgebra, plan: Plan, a: Int, b: Int) -> Term:
    """A lane's summand as the model forms it from the patterns a, b (Alg. 7 step 1: the exact product)."""
    via = plan.model.via
    return product(g, decode_input(g, plan.fa, a, via), decode_input(g, plan.fb, b, via))[0]


def _c_term(g: QueryAlgebra, plan: Plan, c: Int) -> Term:
    """c's summand as the model forms it (Alg. 7 lines 6-7: widened exactly to D's format)."""
    return input_term(decode_input(g, plan.fc, c, plan.fd.name))


class WideSums:
    """Sums at one width ``W`` (bits): each term sign-extended to W bits and added modulo 2**W, which no sum here
    reaches.  A linear identity between such sums is one the solver's rewriter normalizes at once (33 summands: 0.0 s);
    as the algebra builds sums, each one bit wider than its operands, it has to add bit by bit (no answer in 60 s for
    "(X + Y) + 2w - (P + A) = (X + w - P) + (Y + w - A)")."""

    def __init__(self, W: int) -> None:
        self.W = W

    def of(self, g: QueryAlgebra, x: Int) -> str:
        assert x.width <= self.W, (x.width, self.W)
        text = g.term_text(x)
        return text if x.width == self.W else f"((_ sign_extend {self.W - x.width}) {text})"

    def lit(self, v: int) -> str:
        return f"(_ bv{v % (1 << self.W)} {self.W})"

    def term(self, g: QueryAlgebra, text: str) -> Int:
        """A W-bit expression as a term (every W-bit value in its range), to pass to a lemma."""
        return Int(g, text, -(1 << (self.W - 1)), (1 << (self.W - 1)) - 1)

    def shl(self, g: QueryAlgebra, x: Int, D: Int) -> str:
        """2**D x at W bits (a shift of the sign-extended x, which no value here overflows; it distributes over W-bit
        sums for every argument, so the lemmas that use it carry no range premise the solver must re-derive)."""
        return f"(bvshl {self.of(g, x)} {self.of(g, D)})"

    def credit(self, g: QueryAlgebra, A: Int, A2: Int, D: Int, w: Int) -> str:
        """2**D A' + w - A: what a summand aligned at E' (A') and scaled back to E's units leaves over A (aligned
        at E)."""
        return self.credit_of(self.shl(g, A2, D), self.of(g, w), self.of(g, A))

    @staticmethod
    def credit_of(Y: str, w: str, A: str) -> str:
        """Y + w - A (W-bit texts): a credit, Y = 2**D A'."""
        return f"(bvsub (bvadd {Y} {w}) {A})"

    @staticmethod
    def total(terms: Sequence[str]) -> str:
        """terms[0] + terms[1] + ... (W-bit texts), added left to right: the credits' running sums."""
        text = terms[0]
        for t in terms[1:]:
            text = f"(bvadd {text} {t})"
        return text

    def times(self, m: int, g: QueryAlgebra, w: Int) -> str:
        return self.of(g, w) if m == 1 else f"(bvmul {self.lit(m)} {self.of(g, w)})"

    def plus_times(self, x: str, m: int, g: QueryAlgebra, w: Int) -> str:
        """x + m w (x a W-bit text; x itself when m = 0)."""
        return x if m == 0 else f"(bvadd {x} {self.times(m, g, w)})"

    def running(self, X: str, P: str, k: int, w: str) -> str:
        """X + k w - P (W-bit texts): the credits of k summands, X = 2**D Q and P their running sums."""
        kw = w if k == 1 else f"(bvmul {self.lit(k)} {w})"
        return f"(bvsub (bvadd {X} {kw}) {P})"

    @staticmethod
    def le(g: QueryAlgebra, a: str, b: str) -> Bool:
        return Bool(g, f"(bvsle {a} {b})")

    @staticmethod
    def eq(g: QueryAlgebra, a: str, b: str) -> Bool:
        return Bool(g, f"(= {a} {b})")


class MoveLemmas:
    """The lemmas of one T-FDPA's monotonicity, each a function of the run's terms (patterns, E, E', sums),
    established in ``chain`` when first applied."""

    def __init__(self, chain: LemmaChain, sh: MonotoneShape, first: dict[str, Optional[int]], wide: WideSums) -> None:
        self.chain, self.sh, self.plan, self.first, self.wide = chain, sh, sh.plan, first, wide


    def realign(self, lane: bool, before: list[Int], after: list[Int], E: Int, E2: Int) -> Optional[str]:
        """An input pair not moved: its summand aligned at E is at most 2**D times it aligned at E' plus w."""
        plan, sh = self.plan, self.sh

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            n = len(v) // 2 - 1
            xs, ys, e, e2 = v[:n], v[n:2 * n], v[-2], v[-1]
            if lane:
                t, t2 = lane_term(g, plan, *xs), lane_term(g, plan, *ys)
            else:
                t, t2 = _c_term(g, plan, xs[0]), _c_term(g, plan, ys[0])
            fmts = [plan.fa, plan.fb] if lane else [plan.fc]
            D, w = capped_shift(g, sh, e, e2)
            A, A2 = aligned(g, t, e, sh.F), aligned(g, t2, e2, sh.F)
            premise = [*(g.eq(y, x) for x, y in zip(xs, ys)), *(finite_nonneg(g, f, x) for f, x in zip(fmts, xs)),
                       zero_or_below(g, t, e), g.le(e, e2)]
            wd = self.wide
            return implies(g, premise, g.all([g.le(0, A), g.le(0, A2), wd.le(g, wd.lit(0), wd.credit(g, A, A2, D, w))]))

        what = "a lane's product" if lane else "c"
        return self.chain.use(f"re-alignment ({what} not moved): A(t, E) <= 2^D A(t, E') + w, D = min(E' - E, {sh.Dc}), "
                           f"w = 2^D - 1, E <= E'", st, [*before, *after, E, E2])

    def _premise(self, g: QueryAlgebra, fm: Format, fo: Optional[Format], x: Int, x2: Int, o: Optional[Int],
                 t: Term, t2: Term, e: Int, e2: Int, who: str) -> list[Bool]:
        fin = [finite_nonneg(g, fm, x), finite_nonneg(g, fm, x2)]
        if fo is not None and o is not None:
            fin.append(finite_nonneg(g, fo, o))
        return [*fin, g.any(next_moves(g, fm, x, x2, self.first[who])), zero_or_below(g, t, e), zero_or_below(g, t2, e2), g.le(e, e2),
                at_new_max(g, t2, e, e2)]

    def gained(self, g: QueryAlgebra, t: Term, t2: Term, e: Int, e2: Int) -> Bool:
        """A, A' >= 0 and the credit 2**D A' + w - A >= (K + 1) w (2**D A' >= A + K w)."""
        sh, wd = self.sh, self.wide
        D, w = capped_shift(g, sh, e, e2)
        A, A2 = aligned(g, t, e, sh.F), aligned(g, t2, e2, sh.F)
        c = wd.credit(g, A, A2, D, w)
        return g.all([g.le(0, A), g.le(0, A2), wd.le(g, wd.lit(0), c), wd.le(g, wd.times(sh.gain_k + 1, g, w), c)])

    def gain(self, who: str, case: str, x: Int, x2: Int, o: Optional[Int], E: Int, E2: Int) -> Optional[str]:
        """The moved summand's gain, 2**D A(t', E') >= A(t, E) + K w, in one case of the move: ``who`` a, b (``o``
        the other pattern) or c; ``case`` "far" (a zero moved, or E' > E), "cross" (E' = E, the exponent up by one),
        "all" (c: every move)."""
        plan, sh = self.plan, self.sh
        fm, fo = {"a": (plan.fa, plan.fb), "b": (plan.fb, plan.fa), "c": (plan.fc, None)}[who]

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            if who == "c":
                x_, x2_, e, e2 = v
                o_ = None
                t, t2 = _c_term(g, plan, x_), _c_term(g, plan, x2_)
            else:
                x_, x2_, o_, e, e2 = v
                pair = (lambda m: (m, o_)) if who == "a" else (lambda m: (o_, m))
                t, t2 = lane_term(g, plan, *pair(x_)), lane_term(g, plan, *pair(x2_))
            u, u2 = unpack(g, fm, x_), unpack(g, fm, x2_)
            cases = {"far": g.or_(u.is_zero, g.ne(e2, e)),
                     "cross": g.all([g.eq(e2, e), g.not_(u.is_zero), g.eq(u2.exp, g.add(u.exp, 1))]),
                     "all": g.bconst(True)}
            return implies(g, [*self._premise(g, fm, fo, x_, x2_, o_, t, t2, e, e2, who), cases[case]],
                           self.gained(g, t, t2, e, e2))

        what = {"far": "a zero moved, or E' > E", "cross": "E' = E, the exponent up by one", "all": "every move"}[case]
        args = [x, x2, E, E2] if who == "c" else [x, x2, o, E, E2]
        return self.chain.use(f"gain of the moved summand (raising {who}; {what}): 2^D A(t', E') >= A(t, E) + "
                           f"{sh.gain_k} w", st, args)

    def same_binade(self, who: str, x: Int, x2: Int, o: Int, E: Int, E2: Int, m1: Int, m2: Int) -> Optional[list[str]]:
        """The move in one binade (E' = E, the exponent unchanged, not a zero): the ring facts of the model's own
        significand products (:func:`~smtmma.op_proofs.fma.apply_step_facts`), then a lemma whose products are
        arguments: the product grows by the other significand, and aligning is monotone in it."""
        plan, alg = self.plan, self.chain.alg
        fm, fo = (plan.fa, plan.fb) if who == "a" else (plan.fb, plan.fa)
        p = fm.man_bits + 1
        um, um2, uo = unpack(alg, fm, x), unpack(alg, fm, x2), unpack(alg, fo, o)
        ring = apply_step_facts(self.chain, p, um.sig, um2.sig, uo.sig, t_first=who == "b")
        if not ring:
            return None

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            x_, x2_, o_, e, e2, n1, n2 = v
            u, u2, w_ = unpack(g, fm, x_), unpack(g, fm, x2_), unpack(g, fo, o_)
            ua, ub = (u, w_) if who == "a" else (w_, u)
            ua2, ub2 = (u2, w_) if who == "a" else (w_, u2)
            t = Term(g.xor(ua.neg, ub.neg), n1, g.add(ua.exp, ub.exp), ua.frac + ub.frac)
            t2 = Term(g.xor(ua2.neg, ub2.neg), n2, g.add(ua2.exp, ub2.exp), ua2.frac + ub2.frac)
            premise = [*self._premise(g, fm, fo, x_, x2_, o_, t, t2, e, e2, who), g.eq(e2, e), g.not_(u.is_zero),
                       g.eq(u2.exp, u.exp), *step_facts(g, p, u.sig, u2.sig, w_.sig, n1, n2)]
            return implies(g, premise, self.gained(g, t, t2, e, e2))

        app = self.chain.use(f"gain of the moved summand (raising {who}; E' = E, the exponent unchanged): the significand "
                          "product grows by the other's (ring facts given), and aligning never lowers it",
                          st, [x, x2, o, E, E2, m1, m2])
        return None if app is None else [*ring, app]

    def distributes(self, x: Int, y: Int, d: Int) -> Optional[str]:
        """2**d (x + y) = 2**d x + 2**d y at W bits, for every W-bit x, y, d (``x``, ``y``, ``d``: W-bit terms, so the
        lemma has no range premise: where each application is used, its premise is the model's own sum, which the
        solver's rewriter sign-extends term by term, 0.03 s, while a range premise costs it about 1 s)."""
        wd = self.wide

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            xt, yt, dt = (g.term_text(t) for t in v)
            return wd.eq(g, f"(bvshl (bvadd {xt} {yt}) {dt})", f"(bvadd (bvshl {xt} {dt}) (bvshl {yt} {dt}))")

        return self.chain.use(f"a shift distributes at {wd.W} bits: 2^d (x + y) = 2^d x + 2^d y", st, [x, y, d])

    def identity(self, n: int, terms: Sequence[Int], w: Int) -> Optional[str]:
        """The credits' sum at W bits (``terms``: the W-bit P_0..P_{n-1}, A_0.., X_0.., Y_0..; ``w`` W bits wide):
        P_0 = A_0, X_0 = Y_0 and P_j = P_{j-1} + A_j, X_j = X_{j-1} + Y_j give (Y_0 + w - A_0) + ... +
        (Y_{n-1} + w - A_{n-1}) = X_{n-1} + n w - P_{n-1}, a linear identity (0.002 s at n = 33 on fresh constants)."""
        wd = self.wide

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            P, A, X, Y = (v[k * n:(k + 1) * n] for k in range(4))
            t = g.term_text
            wt = t(v[-1])  # W bits wide already: a sign extension inside the lemma keeps bitwuzla from normalizing
            premise = [wd.eq(g, t(P[0]), t(A[0])), wd.eq(g, t(X[0]), t(Y[0]))]
            for j in range(1, n):
                premise += [wd.eq(g, t(P[j]), f"(bvadd {t(P[j - 1])} {t(A[j])})"), wd.eq(g, t(X[j]), f"(bvadd {t(X[j - 1])} {t(Y[j])})")]
            credits = wd.total([wd.credit_of(t(y), wt, t(a)) for y, a in zip(Y, A)])
            return implies(g, premise, wd.eq(g, credits, wd.running(t(X[-1]), t(P[-1]), n, wt)))

        return self.chain.use(f"the credits' sum at W bits: P_j = P_(j-1) + A_j, X_j = X_(j-1) + Y_j (j < {n}) give "
                           f"(Y_0 + w - A_0) + ... + (Y_{n - 1} + w - A_{n - 1}) = X_{n - 1} + {n} w - P_{n - 1}",
                           st, [*terms, w])

    def accumulate(self, h: Int, c: Int, w: Int, R: Bool, r: Bool, hb: int, cb: int) -> Optional[str]:
        """At W bits: h in [0, hb] and c in [0, cb], each >= (K + 1) w where its flag holds, give h + c in [0, hb + cb],
        >= (K + 1) w where either holds (h, c: W-bit terms, the credits' running sum and one credit)."""
        wd, m = self.wide, self.sh.gain_k + 1

        def st(g: QueryAlgebra, v: Sequence[Any]) -> Bool:
            h_, c_, w_, R_, r_ = v
            ht, ct, mw, zero = g.term_text(h_), g.term_text(c_), wd.times(m, g, w_), wd.lit(0)
            total = f"(bvadd {ht} {ct})"
            premise = [wd.le(g, zero, ht), wd.le(g, ht, wd.lit(hb)), wd.le(g, zero, ct), wd.le(g, ct, wd.lit(cb)),
                       g.or_(g.not_(R_), wd.le(g, mw, ht)), g.or_(g.not_(r_), wd.le(g, mw, ct))]
            return implies(g, premise, g.all([wd.le(g, zero, total), wd.le(g, total, wd.lit(hb + cb)),
                                              g.or_(g.not_(g.or_(R_, r_)), wd.le(g, mw, total))]))

        return self.chain.use(f"credits add up at W bits: h in [0, {hb}], c in [0, {cb}], each >= {m} w where its flag holds, "
                           f"give h + c in [0, {hb + cb}], >= {m} w where either holds", st, [h, c, w, R, r])

    def adds(self, x: Int, y: Int, xb: int, yb: int) -> Optional[str]:
        """At W bits: x in [0, xb], y in [0, yb] give x + y in [0, xb + yb] (x, y: W-bit terms)."""
        wd = self.wide

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            xt, yt, zero = g.term_text(v[0]), g.term_text(v[1]), wd.lit(0)
            total = f"(bvadd {xt} {yt})"
            return implies(g, [wd.le(g, zero, xt), wd.le(g, xt, wd.lit(xb)), wd.le(g, zero, yt), wd.le(g, yt, wd.lit(yb))],
                           g.and_(wd.le(g, zero, total), wd.le(g, total, wd.lit(xb + yb))))

        return self.chain.use(f"at W bits: x in [0, {xb}], y in [0, {yb}] give x + y in [0, {xb + yb}]", st, [x, y])

    def closes(self, H: Int, X: Int, P: Int, w: Int, n: int, xb: int, pb: int, margin: int = 0) -> Optional[str]:
        """At W bits: H >= (n + margin) w and H = X + n w - P give P + margin w <= X (|X| < xb, P in [0, pb], w >= 0
        within its width)."""
        wd = self.wide

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            H_, X_, P_, w_ = v
            ht, xt, pt, wt, zero = g.term_text(H_), g.term_text(X_), g.term_text(P_), wd.of(g, w_), wd.lit(0)
            premise = [wd.le(g, wd.times(n + margin, g, w_), ht), wd.eq(g, ht, wd.running(xt, pt, n, wt)), wd.le(g, wd.lit(-xb), xt),
                       wd.le(g, xt, wd.lit(xb - 1)), wd.le(g, zero, pt), wd.le(g, pt, wd.lit(pb)), wd.le(g, zero, wt),
                       wd.le(g, wt, wd.lit(1 << (w_.width - 1)))]
            return implies(g, premise, wd.le(g, wd.plus_times(pt, margin, g, w_), xt))

        more = f" + {margin} w" if margin else ""
        return self.chain.use(f"the credits' sum closes at W bits: H >= {n + margin} w and H = X + {n} w - P give P{more} <= X", st,
                           [H, X, P, w])

    def value(self, S: Int, S2: Int, E: Int, E2: Int, F: Optional[int] = None) -> Optional[str]:
        """S <= 2**D S' at W bits (S >= 0) gives S 2**(E-F) <= S' 2**(E'-F) (``F``: the sum's fraction bits, the
        shape's by default)."""
        sh, wd = self.sh, self.wide
        f = sh.F if F is None else F

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            s, s2, e, e2 = v
            D, _ = capped_shift(g, sh, e, e2)
            premise = [wd.le(g, wd.lit(0), wd.of(g, s)), g.le(e, e2), wd.le(g, wd.of(g, s), wd.shl(g, s2, D))]
            return implies(g, premise, g.and_(g.le(0, s2), value_le(g, PreRounding(s, g.sub(e, f), None),
                                                                    PreRounding(s2, g.sub(e2, f), None))))

        name = "F" if F is None else str(F)
        return self.chain.use(f"value: S <= 2^D S' (S >= 0, E <= E') gives S' >= 0 and S 2^(E-{name}) <= S' 2^(E'-{name})", st,
                           [S, S2, E, E2])

    def rounding(self, S: Int, S2: Int, E: Int, E2: Int, F: Optional[int] = None) -> Optional[str]:
        """rho (the model's own final rounding) is monotone on non-negative fixed-point values S 2**(E-F) (``F``: the
        sum's fraction bits, the shape's by default)."""
        plan, sh = self.plan, self.sh
        f = sh.F if F is None else F

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            s, s2, e, e2 = v
            p1, p2 = PreRounding(s, g.sub(e, f), None), PreRounding(s2, g.sub(e2, f), None)
            r1, r2 = final_rounding(g, plan.model, p1), final_rounding(g, plan.model, p2)
            u1, u2 = unpack(g, plan.out, r1), unpack(g, plan.out, r2)
            return implies(g, [g.le(0, s), g.le(0, s2), value_le(g, p1, p2)],
                           g.all([g.not_(u1.is_nan), g.not_(u2.is_nan), g.le(value_key(g, plan.out, r1), value_key(g, plan.out, r2))]))

        return self.chain.use(f"rounding: rho = {plan.mode}-{plan.rfmt.name} is monotone on non-negative fixed-point values",
                           st, [S, S2, E, E2])


class MoveSums(NamedTuple):
    """One truncated fused sum in both runs of a one-move formula (Alg. 7 line 10): its summands, each aligned at its
    run's e_max (E, E') with F fraction bits, and their running sums (the last is the sum S); ``sources``, per
    summand, the lane whose a, b make it (None: c)."""

    terms: Sequence[Term]
    terms2: Sequence[Term]
    aligned: Sequence[Int]
    aligned2: Sequence[Int]
    prefix: Sequence[Int]
    prefix2: Sequence[Int]
    E: Int
    E2: Int
    sources: Sequence[Optional[int]]


class Credits(NamedTuple):
    """What :func:`credit_facts` leaves: the lemmas (their W), D and w, the indices of its facts "E, E' in range",
    "E <= E'" and the sums' order (S + margin w <= 2**D S' at W bits, where a summand moved: :attr:`moved`)."""

    lem: "MoveLemmas"
    wide: WideSums
    D: Int
    w: Int
    ranged: Optional[int]
    ordered: Optional[int]
    summed: Optional[int]
    moved: Bool
    running: Optional[int]  # the last running sums' fact: 0 <= S at W bits


class SummandMoves(Protocol):
    """How :func:`credit_facts` reaches each summand ``i`` of its sum from the inputs: the input positions that make
    it, the facts its exponents' order rests on, and the lemma applications (with any facts they rest on, their
    indices) that give a moved summand's gain and every summand's credit >= 0."""

    def labels(self, i: int) -> list[str]: ...

    def order(self, i: int, label: str) -> list[Optional[int]]: ...

    def gain(self, i: int, label: str) -> Optional[tuple[list[Optional[str]], list[Optional[int]]]]: ...

    def realign(self, i: int) -> Optional[tuple[list[str], list[Optional[int]]]]: ...


class LaneMoves:
    """T-FDPA's summands (Alg. 7 step 1): lane k's exact product a_k b_k, and c (``s.sources``: the lane, None for
    c); the gain by cases of the move (:meth:`MoveLemmas.gain`, :meth:`MoveLemmas.same_binade`), the credit of a
    summand not moved by re-alignment."""

    def __init__(self, lem: "MoveLemmas", formula: Any, s: MoveSums) -> None:
        self.lem, self.formula, self.s = lem, formula, s

    def labels(self, i: int) -> list[str]:
        source = self.s.sources[i]
        return ["c"] if source is None else [f"a{source}", f"b{source}"]

    def order(self, i: int, label: str) -> list[Optional[int]]:
        """The facts that "``label`` moved: E <= E', E' = E or summand i's exponent" rests on: none (the solver's own)."""
        return []

    def gain(self, i: int, label: str) -> Optional[tuple[list[Optional[str]], list[Optional[int]]]]:
        lem, x, s = self.lem, self.formula.x, self.s
        E, E2, who, v = s.E, s.E2, label[0], self.formula.next[label]
        if who == "c":
            return [lem.gain("c", "all", x.c, v, None, E, E2)], []
        k = s.sources[i]
        assert k is not None
        mine, other = (x.a[k], x.b[k]) if who == "a" else (x.b[k], x.a[k])
        apps = [lem.gain(who, "far", mine, v, other, E, E2), lem.gain(who, "cross", mine, v, other, E, E2)]
        g, plan = self.formula.alg, lem.plan
        m1 = s.terms[i].sig
        m2 = lane_term(g, plan, v, other).sig if who == "a" else lane_term(g, plan, other, v).sig
        return apps + (lem.same_binade(who, mine, v, other, E, E2, m1, m2) or [None]), []

    def realign(self, i: int) -> Optional[tuple[list[str], list[Optional[int]]]]:
        x, y, s, k = self.formula.x, self.formula.y, self.s, self.s.sources[i]
        if k is not None:
            app = self.lem.realign(True, [x.a[k], x.b[k]], [y.a[k], y.b[k]], s.E, s.E2)
        else:
            app = self.lem.realign(False, [x.c], [y.c], s.E, s.E2)
        return None if app is None else ([app], [])


def credit_facts(chain: LemmaChain, formula: Any, sh: MonotoneShape, s: MoveSums, first: dict[str, Optional[int]], *,
                 still: Sequence[str] = (), what: str = "",
                 moves: Optional[Callable[["MoveLemmas", Any, MoveSums], "SummandMoves"]] = None) -> Optional[Credits]:
    """The credit argument for one fused sum ``s`` of a one-move formula (see :func:`monotone_facts`), as facts on
    the model's terms: per input position that makes a summand, if it moved, E <= E' (E' is E or the moved summand's
    exponent) and the moved summand's credit is >= (n + margin) w; per position in ``still`` (inputs outside the sum),
    if it moved, E' = E; every summand's credit >= 0; the credits' running sums; and S + margin w <= 2**D S' at W bits
    (``sh.margin``; where a summand of the sum moved, when the sum has ``still`` inputs).  None when a step is not
    proved (the chain says which).  ``what`` names the sum in the labels; ``moves`` makes the :class:`SummandMoves`
    that reach each summand (:class:`LaneMoves` by default: a lane's product or c)."""
    alg, E, E2 = formula.alg, s.E, s.E2
    D, w = capped_shift(alg, sh, E, E2)
    # W: room for every W-bit term (2**D Q_j below 2**(width(Q_j) - 1 + D.hi)) and 8 bits to spare
    wd = WideSums(max([v.width for v in [*s.aligned, w, *s.prefix]] + [v.width + D.hi for v in s.prefix2]) + 8)
    lem = MoveLemmas(chain, sh, first, wd)
    n = len(s.terms)
    m = sh.gain_k + 1
    mw, zero = wd.times(m, alg, w), wd.lit(0)
    mv = LaneMoves(lem, formula, s) if moves is None else moves(lem, formula, s)
    lanes = [(i, mv.labels(i)) for i in range(n)]
    cred = [wd.credit(alg, s.aligned[i], s.aligned2[i], D, w) for i in range(n)]  # each summand's credit (W bits)
    # E, E' within their ranges: the range premises of every lemma applied to them, one fact (a premise left to
    # each check costs it about 0.5 s at L = 32)
    chain.prove(f"{what}E, E' in [{E.lo}, {E.hi}]", alg.and_(range_premise(alg, E), range_premise(alg, E2)), uses=[])
    ranged = chain.last
    # every summand below its run's e_max
    below: list[Optional[int]] = []
    for i in range(n):
        chain.prove(f"{what}summand {i} is zero or not above e_max, in both runs",
                    alg.and_(zero_or_below(alg, s.terms[i], E), zero_or_below(alg, s.terms2[i], E2)), uses=[])
        below.append(chain.last)
    # per position: the exponents, and the moved summand's gain
    # a label that makes several summands (a block scale two groups share) raises them all; the one whose exponent
    # became E' (or any, at E' = E) gains: its "gainer" condition joins that label's facts
    owners: dict[str, list[int]] = {}
    for i, labels in lanes:
        for label in labels:
            owners.setdefault(label, []).append(i)

    def lifted(i: int) -> Bool:  # E' is summand i's exponent (a non-zero summand)
        return alg.and_(alg.ne(s.terms2[i].sig, 0), alg.eq(E2, s.terms2[i].exp))

    def gainer(i: int) -> Bool:
        return at_new_max(alg, s.terms2[i], E, E2)

    shared = {label for label, who in owners.items() if len(who) > 1}
    gains: dict[tuple[int, str], Optional[int]] = {}
    order: dict[str, Optional[int]] = {}
    for i, labels in lanes:
        for label in labels:
            if label not in formula.labels:
                continue
            here = formula.moved(label)
            if label not in order:
                rises = alg.le(E, E2)  # built first, the order the certificates' terms have
                new_max = (alg.or_(alg.eq(E2, E), alg.any([lifted(o) for o in owners[label]])) if label in shared
                           else gainer(i))
                chain.prove(f"{label} moved: {what}E <= E' and E' is E or the moved summand's exponent",
                            implies(alg, [here], alg.and_(rises, new_max)), uses=mv.order(i, label))
                order[label] = chain.last
            got = mv.gain(i, label)
            if chain.stopped or got is None or any(a is None for a in got[0]):
                return None
            apps, facts = got
            gain = alg.and_(wd.le(alg, zero, cred[i]), wd.le(alg, mw, cred[i]))
            when = [here, gainer(i)] if label in shared else [here]
            which = f", summand {i} at E' or E' = E" if label in shared else ""
            chain.prove(f"{label} moved{which}: its summand's credit 2^D A' + w - A is at least {m} w",
                        implies(alg, when, alg.all([alg.le(0, s.aligned[i]), alg.le(0, s.aligned2[i]), gain])),
                        uses=[order[label], below[i], ranged, *facts], applied=apps)
            gains[(i, label)] = chain.last
    for label in still:
        if label in formula.labels:
            chain.prove(f"{label} moved: {what}E' = E", implies(alg, [formula.moved(label)], alg.eq(E2, E)), uses=[])
            order[label] = chain.last
    chain.prove(f"{what}E <= E' (some input is moved)", alg.le(E, E2), uses=list(order.values()))
    ordered = chain.last
    # every summand's credit >= 0 (and below a static bound: no sum at W bits wraps)
    cb = (1 << (max(v.width for v in s.aligned2) - 1 + D.hi)) + (1 << (w.width - 1))
    ha, wb = 1 << (max(v.width for v in s.aligned) - 1), (1 << (w.width - 1)) - 1
    credits: list[Optional[int]] = []
    for i, labels in lanes:
        got_re = mv.realign(i)
        if got_re is None:
            return None
        re_apps, facts = got_re
        mine = [gains[(i, lb)] for lb in labels if (i, lb) in gains]
        c = cred[i]
        chain.prove(f"{what}summand {i}: A, A' >= 0 and its credit 2^D A' + w - A is >= 0",
                    alg.all([alg.le(0, s.aligned[i]), alg.le(0, s.aligned2[i]), wd.le(alg, zero, c)]),
                    uses=[below[i], ordered, ranged, *mine, *facts], applied=re_apps)
        chain.prove(f"{what}summand {i}: its credit is at most {cb}, A at most {ha} (A >= 0; 2^D A', A and w within their widths)",
                    alg.all([alg.le(0, s.aligned[i]), alg.le(0, s.aligned2[i]), wd.le(alg, zero, c), wd.le(alg, c, wd.lit(cb)),
                             wd.le(alg, zero, wd.of(alg, s.aligned[i])), wd.le(alg, wd.of(alg, s.aligned[i]), wd.lit(ha)),
                             wd.le(alg, zero, wd.of(alg, w)), wd.le(alg, wd.of(alg, w), wd.lit(wb))]),
                    uses=[chain.last])
        credits.append(chain.last)
    # the credits' running sums, H_j = c_0 + ... + c_j at W bits (each a sum of the facts' own terms, so every
    # step's bounds are an application's conclusion word for word), and the model's running sums P_j, ext(P_j)
    # = ext(P_{j-1}) + ext(A_j): 0 <= ext(P_j), 0 <= H_j, and H_j >= m w from the moved summand on
    moved = [alg.any([alg.and_(formula.moved(lb), gainer(i)) if lb in shared else formula.moved(lb)
                      for lb in labels if lb in formula.labels]) for i, labels in lanes]
    R, last = moved[0], credits[0]
    Xs = [wd.shl(alg, v, D) for v in s.prefix2]
    Ys = [wd.shl(alg, v, D) for v in s.aligned2]
    H = cred[0]
    wide_of = [*(wd.term(alg, wd.of(alg, v)) for v in (*s.prefix, *s.aligned)), *(wd.term(alg, t) for t in (*Xs, *Ys))]
    dist_apps: list[str] = []
    dw = wd.term(alg, wd.of(alg, D))
    for j in range(n):
        apps: list[str] = []
        if j:
            dist = lem.distributes(wd.term(alg, wd.of(alg, s.prefix2[j - 1])), wd.term(alg, wd.of(alg, s.aligned2[j])), dw)
            acc = lem.accumulate(wd.term(alg, H), wd.term(alg, cred[j]), w, R, moved[j], j * cb, cb)
            pos = lem.adds(wide_of[j - 1], wide_of[n + j], j * ha, ha)
            if dist is None or acc is None or pos is None:
                return None
            apps = [acc, pos]
            dist_apps.append(dist)
            H = wd.total([H, cred[j]])
            R = alg.or_(R, moved[j])
        chain.prove(f"{what}running sums {j}: ext(P_{j}) in [0, {j + 1} * {ha}]; the credits of summands 0..{j}, H_{j} = c_0 + ... + "
                    f"c_{j}, in [0, {(j + 1) * cb}], and >= {m} w once the moved summand is in",
                    alg.all([wd.le(alg, zero, wd.of(alg, s.prefix[j])), wd.le(alg, wd.of(alg, s.prefix[j]), wd.lit((j + 1) * ha)),
                             wd.le(alg, zero, H), wd.le(alg, H, wd.lit((j + 1) * cb)), implies(alg, [R], wd.le(alg, mw, H))]),
                    uses=[last if j else None, credits[j], *(gains[(j, lb)] for lb in lanes[j][1] if (j, lb) in gains)], applied=apps)
        last = chain.last
    running = last
    S, S2 = s.prefix[-1], s.prefix2[-1]
    X = Xs[-1]
    xb = 1 << (S2.width - 1 + D.hi)
    chain.prove(f"{what}2^D S' at W bits lies in [-{xb}, {xb}) (S' has {S2.width} bits, D <= {D.hi})",
                alg.and_(wd.le(alg, wd.lit(-xb), X), wd.le(alg, X, wd.lit(xb - 1))), uses=[])
    bounds = chain.last
    ident = lem.identity(n, wide_of, wd.term(alg, wd.of(alg, w)))
    closes = lem.closes(wd.term(alg, H), wd.term(alg, X), wd.term(alg, wd.of(alg, S)), w, n, xb, n * ha, sh.margin)
    if ident is None or closes is None:
        return None
    order_s = alg.and_(wd.le(alg, zero, wd.of(alg, S)), wd.le(alg, wd.plus_times(wd.of(alg, S), sh.margin, alg, w), X))
    more = f" + {sh.margin} w" if sh.margin else ""
    where = " where a summand moved" if still else ""
    chain.prove(f"{what}S{more} <= 2^D S'{where} (the credits' sum H_{n - 1} = 2^D S' + {n} w - S is at least {m} w{'' if sh.margin else f' = {n} w'})",
                implies(alg, [R], order_s) if still else order_s, uses=[last, bounds, *(order[lb] for lb in sorted(shared) if lb in order)],
                applied=[*dist_apps, ident, closes])
    return Credits(lem, wd, D, w, ranged, ordered, chain.last, R, running)


def monotone_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the monotonicity query's own formula with one symbolic move (``formula``: a
    :class:`~smtmma.queries.properties.monotonicity.OneMoveFormula`), that leave its final check Boolean steps.

    The argument of :func:`prove_monotone`, on the model's own terms: E, E' its e_max of both runs, A_i, A'_i its
    aligned summands (Alg. 7 line 10), D = min(E' - E, Dc), w = 2**D - 1, and a summand's credit 2**D A' + w - A.

    * glue, a fact per run: D is rho(S 2**(E-F)) (Alg. 7 step 3); every summand is zero or not above its e_max;
    * the credit argument (:func:`credit_facts`): per input position, if it is the one moved: E <= E', E' is E or
      the moved summand's exponent, and the moved summand's credit is >= (K + 1) w (gain lemmas by cases: a zero
      moved or E' > E, the exponent up by one, and in one binade the ring facts at the model's significand products);
      every summand's credit is >= 0 (the re-alignment lemma where it did not move); the credits' running sums
      H_j = c_0 + ... + c_j are >= 0, and >= (K + 1) w from the moved summand on (each step a lemma whose conclusion
      is the next fact's own atoms); the credits' whole sum is 2**D S' + (K + 1) w - S (a linear identity whose
      premises are the model's running sums and "a shift distributes"), so S <= 2**D S'.  These sums are written at
      one width W (:class:`WideSums`), where a linear identity is one rewriting step;
    * the value S 2**(E-F) <= S' 2**(E'-F) and rho's order (lemmas), so the move never lowers D.

    Each lemma is proved on fresh constants and applied to the run's terms; each fact under the facts and
    applications it names.  False when one is not proved (the chain says which).
    """
    return sum_monotone_facts(chain, formula, MonotoneShape(formula.model, formula.x.K), "Alg. 7 step 3")


def sum_monotone_facts(chain: LemmaChain, formula: Any, sh: MonotoneShape, step: str,
                       moves: Optional[Callable[["MoveLemmas", Any, MoveSums], SummandMoves]] = None) -> bool:
    """:func:`monotone_facts` for any op whose D is rho of one truncated fused sum (:func:`fused_parts`): its summands
    made as ``moves`` says (:class:`LaneMoves`: K products and c; GST-FDPA: a summand per group, and c), the glue
    labelled with the paper's ``step``."""
    alg, model, x, y = formula.alg, formula.model, formula.x, formula.y
    plan, F = sh.plan, sh.F
    p = fused_parts(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
    q = fused_parts(alg, model, y.a, y.b, y.c, y.scale_a, y.scale_b)
    first = move_firsts(plan, formula.domain)
    # 1. glue, a fact per run
    glues = []
    for run, parts, d in (("", p, formula.d), (", moved", q, formula.d2)):
        pre = PreRounding(parts.prefix[-1], alg.sub(parts.e_max, F), None)
        chain.prove(f"glue{run} ({step}): on finite inputs D is rho(S 2^(e_max-F))",
                    alg.eq(d, final_rounding(alg, model, pre)), uses=[])
        glues.append(chain.last)
    # 2. the credit argument: S <= 2^D S'
    sources = [*range(len(p.terms) - 1), None]  # the summands before c: a lane's product or a group's
    sums = MoveSums(p.terms, q.terms, p.aligned, q.aligned, p.prefix, q.prefix, p.e_max, q.e_max, sources)
    cr = credit_facts(chain, formula, sh, sums, first, moves=moves)
    if cr is None:
        return False
    E, E2, S, S2 = p.e_max, q.e_max, p.prefix[-1], q.prefix[-1]
    val = cr.lem.value(S, S2, E, E2)
    rnd = cr.lem.rounding(S, S2, E, E2)
    if val is None or rnd is None:
        return False
    pre1, pre2 = PreRounding(S, alg.sub(E, F), None), PreRounding(S2, alg.sub(E2, F), None)
    chain.prove("value: S' >= 0 and S 2^(E-F) <= S' 2^(E'-F)", alg.all([alg.le(0, S), alg.le(0, S2), value_le(alg, pre1, pre2)]),
                uses=[cr.summed, cr.ordered, cr.ranged], applied=[val])
    chain.prove("rho keeps the order", alg.le(value_key(alg, plan.out, final_rounding(alg, model, pre1)),
                                              value_key(alg, plan.out, final_rounding(alg, model, pre2))),
                uses=[chain.last, cr.ranged], applied=[rnd])
    chain.prove("the move never lowers D", alg.not_(formula.drop), uses=[*glues, chain.last])
    return not chain.stopped


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
