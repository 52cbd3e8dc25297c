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

**Monotonicity**, :func:`monotone_facts`: raising any one input never lowers D.

The whole-model query (two runs, each a fused sum of K + 1 summands and a
rounding) gives a bit-blasting solver no answer in minutes.  Bit-blasting
is weak at exactly two things the argument needs -- a product that grows
when a factor grows, and adding up inequalities -- so the proof keeps both
out of every check: products grow by an *equality* the rewriter proves
((x + 1) * y = x * y + y), and inequalities are added as equalities with a
non-negative slack.  A single move raises one input (a lane's a or b, or c)
to its next value (:func:`~smtmma.op_proofs.moves.next_moves`).  With E, E' the two
runs' alignment exponents, D = min(E' - E, Dc) and w = 2**D - 1, the lemmas
(each proved on fresh constants, then applied to the model's own terms in the query's one-move formula,
:func:`credit_facts`) are:

* **glue** (the model, one run, all finite inputs): D = rho(S * 2**(E-F)),
  S the sum of the summands aligned at E = their largest exponent (RZ_F);
* **exponents** (a fact, the solver's own): raising one summand's exponent (or a zero) gives E <= E',
  and E' is E or the raised summand's exponent;
* **re-alignment** (each other summand, products and c): A(t, E) <=
  2**D * A(t, E') + w, i.e. slack s = 2**D * A(t, E') + w - A(t, E) in [0, w];
* **gain** (the raised summand): 2**D * A(t', E') >= A(t, E) + K * w, by
  cases: a zero raised or E' > E (one check); E' = E with the exponent
  field up by one (one check); E' = E in the same binade: the significand
  is x + 1 (**next pattern**), the product grows by y (**product step**)
  and aligning is monotone in the significand (**aligned step**);
* **distributivity**: 2**D * (P + Q) = 2**D * P + 2**D * Q (each node of
  the sum, at one width W: :class:`WideSums`);
* **composition** (slack form): those per-summand facts, the credits'
  running sums, give S <= 2**D * S';
* **value**: S <= 2**D * S' gives S * 2**(E-F) <= S' * 2**(E'-F);
* **rounding**: rho is monotone.

**Monotonicity of a chain with C added last**, :func:`chain_monotone_facts`
(sm90's FP8 ``mma``: FDPAs chained from 0 on inputs converted to FP16, then
C by an RNE add), facts on the model's own terms in its one-move formula:
per FDPA the credit argument of the one-FDPA facts, its lanes' gain lemmas
taking the FP8 patterns (converted inside, as the model converts them), its
c's gain any raise (the FDPA before gave D <= D'), under "the c of the moved
run is finite"; an infinite c gives +inf; then the RNE add of C is monotone
in each operand (two lemmas applied to the last FDPA's D and to C).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, NamedTuple, Optional, Protocol, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import unpack
from ..encodings.fused_sum import aligned
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
from .moves import finite_nonneg, move_firsts, next_moves, nonneg, nonneg_pattern
from .rounding import PreRounding, conversion_lemma, final_rounding, negated_output_fact, truncated_rounding, value_le

__all__ = ["Credits", "LaneMoves", "MonotoneShape", "MoveLemmas", "MoveSums", "WideSums", "credit_facts", "at_new_max", "capped_shift", "chain_monotone_facts", "chain_step", "ChainLink", "ChainView", "ChunkMoves",
           "error_composition_lemma", "error_facts", "error_parts", "fresh_exponents", "fresh_summand",
           "glue_lemma", "largest_aligned", "monotone_facts", "monotone_facts_of", "negated_chain_facts",
           "prove_error_bound", "realign_lemma", "sum_monotone_facts", "SummandMoves", "supports_chain_monotone", "supports_chained_symmetry", "supports_error_bound", "supports_error_facts",
           "lane_term", "supports_monotone", "supports_monotone_facts", "zero_or_below"]


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
        #: the inputs ("c") whose move is any raise, not a next value: a chained FDPA's c, the previous FDPA's D
        self.any_raise: frozenset[str] = frozenset()


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
        move = (g.le(value_key(g, fm, x), value_key(g, fm, x2)) if who in self.any_raise
                else g.any(next_moves(g, fm, x, x2, self.first[who])))
        return [*fin, move, zero_or_below(g, t, e), zero_or_below(g, t2, e2), g.le(e, e2), at_new_max(g, t2, e, e2)]

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
        if who in self.any_raise:
            what = "any raise"
        args = [x, x2, E, E2] if who == "c" else [x, x2, o, E, E2]
        return self.chain.use(f"gain of the moved summand (raising {who}; {what}): 2^D A(t', E') >= A(t, E) + "
                           f"{sh.gain_k} w", st, args)

    def lane_gain(self, who: str, x: Int, x2: Int, o: Int, E: Int, E2: Int, m1: Int) -> list[Optional[str]]:
        """The moved lane's gain (``who`` a or b moved from x to x2, ``o`` the other pattern, ``m1`` the summand's
        significand product before): by cases (:meth:`gain` "far" and "cross", :meth:`same_binade`), or, where the
        model converts its inputs first (``via``: the pattern's significand is not the product's factor), one lemma
        for every move (FP8 through FP16: 4-bit products, 0.4 s)."""
        plan = self.plan
        via = plan.model.via
        if via is not None and (via != plan.fa.name or via != plan.fb.name):  # an input converted: no ring facts
            return [self.gain(who, "all", x, x2, o, E, E2)]
        apps = [self.gain(who, "far", x, x2, o, E, E2), self.gain(who, "cross", x, x2, o, E, E2)]
        g = self.chain.alg
        m2 = lane_term(g, plan, x2, o).sig if who == "a" else lane_term(g, plan, o, x2).sig
        return apps + (self.same_binade(who, x, x2, o, E, E2, m1, m2) or [None])

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
        return lem.lane_gain(who, mine, v, other, E, E2, s.terms[i].sig), []

    def realign(self, i: int) -> Optional[tuple[list[str], list[Optional[int]]]]:
        x, y, s, k = self.formula.x, self.formula.y, self.s, self.s.sources[i]
        if k is not None:
            app = self.lem.realign(True, [x.a[k], x.b[k]], [y.a[k], y.b[k]], s.E, s.E2)
        else:
            app = self.lem.realign(False, [x.c], [y.c], s.E, s.E2)
        return None if app is None else ([app], [])


def credit_facts(chain: LemmaChain, formula: Any, sh: MonotoneShape, s: MoveSums, first: dict[str, Optional[int]], *,
                 still: Sequence[str] = (), what: str = "",
                 moves: Optional[Callable[["MoveLemmas", Any, MoveSums], "SummandMoves"]] = None,
                 when: Optional[Bool] = None, any_raise: Sequence[str] = ()) -> Optional[Credits]:
    """The credit argument for one fused sum ``s`` of a one-move formula (see :func:`monotone_facts`), as facts on
    the model's terms: per input position that makes a summand, if it moved, E <= E' (E' is E or the moved summand's
    exponent) and the moved summand's credit is >= (n + margin) w; per position in ``still`` (inputs outside the sum),
    if it moved, E' = E; every summand's credit >= 0; the credits' running sums; and S + margin w <= 2**D S' at W bits
    (``sh.margin``; where a summand of the sum moved, when the sum has ``still`` inputs).  None when a step is not
    proved (the chain says which).  ``what`` names the sum in the labels; ``moves`` makes the :class:`SummandMoves`
    that reach each summand (:class:`LaneMoves` by default: a lane's product or c).  ``when``: every fact holds under
    this premise (a chained FDPA's: the previous D finite); ``any_raise``: the inputs whose move is any raise
    (:attr:`MoveLemmas.any_raise`)."""
    alg, E, E2 = formula.alg, s.E, s.E2

    def prove(label: str, goal: Bool, **kw: Any) -> bool:
        return chain.prove(label, goal if when is None else implies(alg, [when], goal), **kw)

    D, w = capped_shift(alg, sh, E, E2)
    # W: room for every W-bit term (2**D Q_j below 2**(width(Q_j) - 1 + D.hi)) and 8 bits to spare
    wd = WideSums(max([v.width for v in [*s.aligned, w, *s.prefix]] + [v.width + D.hi for v in s.prefix2]) + 8)
    lem = MoveLemmas(chain, sh, first, wd)
    lem.any_raise = frozenset(any_raise)
    n = len(s.terms)
    m = sh.gain_k + 1
    mw, zero = wd.times(m, alg, w), wd.lit(0)
    mv = LaneMoves(lem, formula, s) if moves is None else moves(lem, formula, s)
    lanes = [(i, mv.labels(i)) for i in range(n)]
    cred = [wd.credit(alg, s.aligned[i], s.aligned2[i], D, w) for i in range(n)]  # each summand's credit (W bits)
    # E, E' within their ranges: the range premises of every lemma applied to them, one fact (a premise left to
    # each check costs it about 0.5 s at L = 32)
    prove(f"{what}E, E' in [{E.lo}, {E.hi}]", alg.and_(range_premise(alg, E), range_premise(alg, E2)), uses=[])
    ranged = chain.last
    # every summand below its run's e_max
    below: list[Optional[int]] = []
    for i in range(n):
        prove(f"{what}summand {i} is zero or not above e_max, in both runs",
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
                prove(f"{label} moved: {what}E <= E' and E' is E or the moved summand's exponent",
                            implies(alg, [here], alg.and_(rises, new_max)), uses=mv.order(i, label))
                order[label] = chain.last
            got = mv.gain(i, label)
            if chain.stopped or got is None or any(a is None for a in got[0]):
                return None
            apps, facts = got
            gain = alg.and_(wd.le(alg, zero, cred[i]), wd.le(alg, mw, cred[i]))
            moved_if = [here, gainer(i)] if label in shared else [here]
            which = f", summand {i} at E' or E' = E" if label in shared else ""
            prove(f"{label} moved{which}: its summand's credit 2^D A' + w - A is at least {m} w",
                        implies(alg, moved_if, alg.all([alg.le(0, s.aligned[i]), alg.le(0, s.aligned2[i]), gain])),
                        uses=[order[label], below[i], ranged, *facts], applied=apps)
            gains[(i, label)] = chain.last
    for label in still:
        if label in formula.labels:
            prove(f"{label} moved: {what}E' = E", implies(alg, [formula.moved(label)], alg.eq(E2, E)), uses=[])
            order[label] = chain.last
    prove(f"{what}E <= E' (some input is moved)", alg.le(E, E2), uses=list(order.values()))
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
        prove(f"{what}summand {i}: A, A' >= 0 and its credit 2^D A' + w - A is >= 0",
                    alg.all([alg.le(0, s.aligned[i]), alg.le(0, s.aligned2[i]), wd.le(alg, zero, c)]),
                    uses=[below[i], ordered, ranged, *mine, *facts], applied=re_apps)
        prove(f"{what}summand {i}: its credit is at most {cb}, A at most {ha} (A >= 0; 2^D A', A and w within their widths)",
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
        prove(f"{what}running sums {j}: ext(P_{j}) in [0, {j + 1} * {ha}]; the credits of summands 0..{j}, H_{j} = c_0 + ... + "
                    f"c_{j}, in [0, {(j + 1) * cb}], and >= {m} w once the moved summand is in",
                    alg.all([wd.le(alg, zero, wd.of(alg, s.prefix[j])), wd.le(alg, wd.of(alg, s.prefix[j]), wd.lit((j + 1) * ha)),
                             wd.le(alg, zero, H), wd.le(alg, H, wd.lit((j + 1) * cb)), implies(alg, [R], wd.le(alg, mw, H))]),
                    uses=[last if j else None, credits[j], *(gains[(j, lb)] for lb in lanes[j][1] if (j, lb) in gains)], applied=apps)
        last = chain.last
    running = last
    S, S2 = s.prefix[-1], s.prefix2[-1]
    X = Xs[-1]
    xb = 1 << (S2.width - 1 + D.hi)
    prove(f"{what}2^D S' at W bits lies in [-{xb}, {xb}) (S' has {S2.width} bits, D <= {D.hi})",
                alg.and_(wd.le(alg, wd.lit(-xb), X), wd.le(alg, X, wd.lit(xb - 1))), uses=[])
    bounds = chain.last
    ident = lem.identity(n, wide_of, wd.term(alg, wd.of(alg, w)))
    closes = lem.closes(wd.term(alg, H), wd.term(alg, X), wd.term(alg, wd.of(alg, S)), w, n, xb, n * ha, sh.margin)
    if ident is None or closes is None:
        return None
    order_s = alg.and_(wd.le(alg, zero, wd.of(alg, S)), wd.le(alg, wd.plus_times(wd.of(alg, S), sh.margin, alg, w), X))
    more = f" + {sh.margin} w" if sh.margin else ""
    where = " where a summand moved" if still else ""
    prove(f"{what}S{more} <= 2^D S'{where} (the credits' sum H_{n - 1} = 2^D S' + {n} w - S is at least {m} w{'' if sh.margin else f' = {n} w'})",
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
    """The one-FDPA model each FDPA of a ``c_after`` chain runs: the same inputs, read as the unit reads them (``via``:
    converted exactly first), C inside the sum (the previous FDPA's D, or 0)."""
    return model.replace(c_after=False, issue=None, interleave=None)


def supports_chain_monotone(model: Model, K: int) -> bool:
    """Whether :func:`chain_monotone_facts` applies: T-FDPAs chained from zero by Alg. 5 within one issue, C added
    last by an RNE add in D's format (``c_after``), each FDPA one the one-FDPA facts cover (its inputs read in the
    format ``via`` converts them to)."""
    if model.kind != "t-fdpa" or not model.c_after or model.L is None or model.scale_fmt is not None or model.ftz_inputs:
        return False
    if model.issue is not None and K > model.issue:
        return False
    v = model.via
    read = chain_step(model).replace(a_fmt=v or model.a_fmt, b_fmt=v or model.b_fmt, via=None)
    return model.c_fmt == output_container(model).name and supports_monotone(read, model.L)


class ChainLink(NamedTuple):
    """What one FDPA of a chain leaves the next (:func:`chain_monotone_facts`), indices of its facts: "D <= D',
    neither NaN nor below zero", "one of its inputs moved, or D' = D", "D, D' within their static ranges", and the
    next FDPA's own "D' finite gives D finite"."""

    ordered: Optional[int] = None
    kept: Optional[int] = None
    ranged: Optional[int] = None
    finite: Optional[int] = None


class ChunkMoves:
    """The summands of one FDPA of a chain (:func:`chain_monotone_facts`): lane ``ks[i]``'s product (a zero pad for
    None), then c, the D of the FDPA before (``acc``: both runs), which ``raisers`` raise by any amount (``prev``:
    the facts that FDPA left, :class:`ChainLink`); a lane's gain as one FDPA's (:meth:`MoveLemmas.lane_gain`)."""

    def __init__(self, lem: "MoveLemmas", formula: Any, s: MoveSums, ks: Sequence[Optional[int]], acc: tuple[Int, Int],
                 raisers: Sequence[str], prev: ChainLink) -> None:
        self.lem, self.formula, self.s, self.ks, self.acc, self.raisers, self.prev = lem, formula, s, ks, acc, raisers, prev

    def labels(self, i: int) -> list[str]:
        if i == len(self.ks):
            return list(self.raisers)
        k = self.ks[i]
        return [] if k is None else [f"a{k}", f"b{k}"]

    def order(self, i: int, label: str) -> list[Optional[int]]:
        """A lane's move: none (the solver's own); c's: D <= D' of the FDPA before, and their ranges."""
        return [self.prev.ordered, self.prev.ranged] if i == len(self.ks) else []

    def gain(self, i: int, label: str) -> Optional[tuple[list[Optional[str]], list[Optional[int]]]]:
        lem, x, s = self.lem, self.formula.x, self.s
        if i == len(self.ks):
            return [lem.gain("c", "all", *self.acc, None, s.E, s.E2)], [self.prev.ordered, self.prev.finite, self.prev.ranged]
        k = self.ks[i]
        assert k is not None
        who = label[0]
        mine, other = (x.a[k], x.b[k]) if who == "a" else (x.b[k], x.a[k])
        return lem.lane_gain(who, mine, self.formula.next[label], other, s.E, s.E2, s.terms[i].sig), []

    def realign(self, i: int) -> Optional[tuple[list[str], list[Optional[int]]]]:
        x, y, s = self.formula.x, self.formula.y, self.s
        if i == len(self.ks):
            app = self.lem.realign(False, [self.acc[0]], [self.acc[1]], s.E, s.E2)
            return None if app is None else ([app], list(self.prev))
        k = self.ks[i]
        zero = self.formula.alg.const(0)
        before, after = ([zero, zero], [zero, zero]) if k is None else ([x.a[k], x.b[k]], [y.a[k], y.b[k]])
        app = self.lem.realign(True, before, after, s.E, s.E2)
        return None if app is None else ([app], [])


class ChainView:
    """A chain's one-move formula as one FDPA of it sees its inputs: the formula's labels, and ``label`` for its c,
    moved where an input of the FDPAs before moved (``raised``: one Boolean, not one label per lane: each label's
    checks bit-blast the FDPAs before, 3.5 s apiece).  Everything else is the formula's."""

    def __init__(self, formula: Any, label: str, raised: Bool) -> None:
        self.formula, self.label, self.raised = formula, label, raised
        self.labels = [*formula.labels, label]

    def moved(self, label: str) -> Bool:
        return self.raised if label == self.label else self.formula.moved(label)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.formula, name)


def _ordered(alg: QueryAlgebra, fmt: Format, u: Int, u2: Int) -> Bool:
    """u <= u' in value, neither NaN nor below zero (+inf included)."""
    return alg.all([nonneg(alg, fmt, u), nonneg(alg, fmt, u2), alg.le(value_key(alg, fmt, u), value_key(alg, fmt, u2))])


def supports_monotone_facts(model: Model, K: int) -> bool:
    """Whether :func:`monotone_facts_of` covers the model: one T-FDPA (:func:`supports_monotone`) or a chain of them
    with C added last (:func:`supports_chain_monotone`)."""
    return supports_monotone(model, K) or supports_chain_monotone(model, K)


def monotone_facts_of(chain: LemmaChain, formula: Any) -> bool:
    """The monotonicity facts of the formula's model: :func:`chain_monotone_facts` for a chain with C added last,
    else :func:`monotone_facts`."""
    return (chain_monotone_facts if formula.model.c_after else monotone_facts)(chain, formula)


def chain_monotone_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the monotonicity query's own formula with one symbolic move (a :class:`OneMoveFormula` of a
    ``c_after`` chain: FDPAs from 0 on the lanes as the unit reads them, then C by an RNE add, Alg. 5), that leave its
    final check Boolean steps.

    Per FDPA j, on its own terms (its D_j, D'_j in both runs, its c the D of the FDPA before):

    * the credit argument of :func:`credit_facts` with :class:`ChunkMoves`: a lane's move is a next value of its
      (FP8) input, converted inside the gain lemma as the model converts it; c's move is any raise (the FDPA before
      gave D_{j-1} <= D'_{j-1}), under the premise that D'_{j-1} is finite; glue, value and rho's order then give
      D_j <= D'_j where one of its inputs moved;
    * a move outside its inputs leaves D'_j = D_j (the same terms); an infinite c gives +inf (the op's specials);
      so D_j <= D'_j, neither NaN nor below zero, for every move.

    Then the RNE add of C (Alg. 5, C last) is monotone in each operand (two lemmas, applied to the last FDPA's D and
    to C), so per input position its move never lowers D.  False when a step is not proved (the chain says which).
    """
    alg, model, x, y = formula.alg, formula.model, formula.x, formula.y
    step = chain_step(model)
    assert model.L is not None
    sh = MonotoneShape(step, model.L)
    fd, fc = output_container(model), get_format(model.c_fmt)
    nan_bits = nan_pattern(model, fd)
    first = move_firsts(sh.plan, formula.domain)
    zero = alg.const(0)
    ((_, chunks),) = issue_chunks(model, x.K)
    acc, acc2 = zero, zero  # the c of the first FDPA: 0 in both runs (Alg. 5 with C last)
    raisers: list[str] = []  # the labels that raise the next FDPA's c
    raised = alg.bconst(False)  # "one of them moved"
    prev = ChainLink()  # what the FDPA before left
    is_inf = lambda v: unpack(alg, fd, v).is_inf  # noqa: E731
    finite = lambda v: alg.not_(is_inf(v))  # noqa: E731 (with "not NaN" from the order facts)
    for j, ks in enumerate(chunks):
        what = f"FDPA {j + 1} of {len(chunks)}: "
        xa, xb = [x.a[k] if k is not None else zero for k in ks], [x.b[k] if k is not None else zero for k in ks]
        ya, yb = [y.a[k] if k is not None else zero for k in ks], [y.b[k] if k is not None else zero for k in ks]
        d, d2 = run_model(alg, step, xa, xb, acc), run_model(alg, step, ya, yb, acc2)
        p, q = fused_parts(alg, step, xa, xb, acc), fused_parts(alg, step, ya, yb, acc2)
        mine = [lb for k in ks if k is not None for lb in (f"a{k}", f"b{k}") if lb in formula.labels]
        inputs = [*mine, *raisers]
        still = [lb for lb in formula.labels if lb not in inputs]
        view = ChainView(formula, f"D{j}", raised) if j else formula  # its c: D of the FDPA before, raised with it
        when = finite(acc2) if j else None
        acc_finite: Optional[int] = None
        if j:  # the FDPA before: D <= D', so D' finite makes D finite
            chain.prove(f"{what}c' finite gives c finite (c <= c')", implies(alg, [when], finite(acc)), uses=[prev.ordered])
            acc_finite = chain.last
        pres = [PreRounding(parts.prefix[-1], alg.sub(parts.e_max, sh.F), None) for parts in (p, q)]  # S 2^(E-F), both runs
        glues = []
        for run, pre, dd, c_ in (("", pres[0], d, acc), (", moved", pres[1], d2, acc2)):
            chain.prove(f"{what}glue{run} (Alg. 7 step 3): where its c is finite, D is rho(S 2^(e_max-F))",
                        implies(alg, [finite(c_)] if j else [], alg.eq(dd, final_rounding(alg, step, pre))), uses=[prev.ordered])
            glues.append(chain.last)
        sums = MoveSums(p.terms, q.terms, p.aligned, q.aligned, p.prefix, q.prefix, p.e_max, q.e_max, [*range(len(ks)), None])
        link = prev._replace(finite=acc_finite)
        made = lambda lem, f, sm, ks=ks, acc=(acc, acc2), c_labels=[f"D{j}"] if j else [], link=link: ChunkMoves(  # noqa: E731
            lem, f, sm, ks, acc, c_labels, link)
        cr = credit_facts(chain, view, sh, sums, first, still=still, what=what, moves=made, when=when,
                          any_raise=["c"] if j else [])
        if cr is None:
            return False
        E, E2, S, S2 = p.e_max, q.e_max, p.prefix[-1], q.prefix[-1]
        val, rnd = cr.lem.value(S, S2, E, E2), cr.lem.rounding(S, S2, E, E2)
        low, low2 = cr.lem.rounding(zero, S, E, E), cr.lem.rounding(zero, S2, E2, E2)
        if None in (val, rnd, low, low2):
            return False
        pre1, pre2 = pres
        cond = [when, cr.moved] if when is not None else [cr.moved]
        chain.prove(f"{what}value where its inputs moved: S' >= 0 and S 2^(E-F) <= S' 2^(E'-F)",
                    implies(alg, cond, alg.all([alg.le(0, S), alg.le(0, S2), value_le(alg, pre1, pre2)])),
                    uses=[cr.summed, cr.ordered, cr.ranged, acc_finite], applied=[val])
        chain.prove(f"{what}rho keeps the order", implies(alg, cond, alg.le(value_key(alg, fd, final_rounding(alg, step, pre1)),
                                                                            value_key(alg, fd, final_rounding(alg, step, pre2)))),
                    uses=[chain.last, cr.ranged], applied=[rnd])
        ordered = chain.last
        # each run's D not below zero: rho(0) <= rho(S) (the rounding lemma at 0), where its c is finite
        nonnegs = []
        for run, dd, c_, app, g in (("", d, acc, low, glues[0]), (", moved", d2, acc2, low2, glues[1])):
            chain.prove(f"{what}D{run} is not NaN and not below zero where its c is finite",
                        implies(alg, [finite(c_)] if j else [], nonneg(alg, fd, dd)), uses=[g, cr.ranged, prev.ordered], applied=[app])
            nonnegs.append(chain.last)
        # a move outside this FDPA's inputs leaves its D (the same terms once the move is known)
        same = []
        for label in still:
            chain.prove(f"{what}{label} moved: D' = D", implies(alg, [formula.moved(label)], alg.eq(d2, d)), uses=[])
            same.append(chain.last)
        chain.prove(f"{what}one of its inputs moved, or D' = D", alg.or_(cr.moved, alg.eq(d2, d)), uses=same)
        kept = chain.last
        infs = []
        if j:  # an infinite c (the FDPA before overflowed) gives +inf: the op's specials (Alg. 7)
            for run, dd, c_ in (("", d, acc), (", moved", d2, acc2)):
                chain.prove(f"{what}c{run} = +inf gives D = +inf", implies(alg, [is_inf(c_)], alg.eq(dd, fd.inf_bits())),
                            uses=[prev.ordered])
                infs.append(chain.last)
        chain.prove(f"{what}D <= D', neither NaN nor below zero (every move)", _ordered(alg, fd, d, d2),
                    uses=[*glues, ordered, *nonnegs, kept, *infs, prev.ordered, acc_finite])
        le = chain.last
        # D, D' within their static ranges: the premise every lemma applied to them asserts, proved once (re-derived
        # through the FDPA's rounding inside each check, the next FDPA's gain of c ran past 60 s)
        chain.prove(f"{what}D, D' in [{d.lo}, {d.hi}]", alg.and_(range_premise(alg, d), range_premise(alg, d2)), uses=[])
        prev = ChainLink(le, kept, chain.last)
        acc, acc2 = d, d2
        raisers, raised = inputs, cr.moved
    # C added last (Alg. 5): the RNE add is monotone in each operand, values not below zero (+inf included)
    total = lambda h, u, v: add(h, unpack(h, fd, u), decode_input(h, fc, v, fd.name), out=fd, ftz=False, nan_bits=nan_bits)  # noqa: E731

    def raise_sum(h: QueryAlgebra, v: Sequence[Int]) -> Bool:
        u, u2, z = v
        s1, s2 = total(h, u, z), total(h, u2, z)
        return implies(h, [nonneg(h, fd, u), nonneg(h, fd, u2), finite_nonneg(h, fc, z), h.le(value_key(h, fd, u), value_key(h, fd, u2))],
                       _ordered(h, fd, s1, s2))

    def raise_c(h: QueryAlgebra, v: Sequence[Int]) -> Bool:
        u, z, z2 = v
        s1, s2 = total(h, u, z), total(h, u, z2)
        return implies(h, [nonneg(h, fd, u), finite_nonneg(h, fc, z), finite_nonneg(h, fc, z2), h.le(value_key(h, fc, z), value_key(h, fc, z2))],
                       _ordered(h, fd, s1, s2))

    c2 = y.c  # C of the moved run: C, or its next value where C moved
    chain.prove("C' is C or its next value: C <= C', both finite, not below zero",
                alg.all([finite_nonneg(alg, fc, x.c), finite_nonneg(alg, fc, c2), alg.le(value_key(alg, fc, x.c), value_key(alg, fc, c2))]),
                uses=[])
    c_up = chain.last
    # D + C <= D + C' <= D' + C': the lemmas' terms are the model's own D and D' (run_model adds C so)
    by_c = chain.use(f"C added last (RNE-{fd.name}): raising C never lowers D + C", raise_c, [acc, x.c, c2])
    by_sum = chain.use(f"C added last (RNE-{fd.name}): raising the chain's D (not below zero, +inf included) never lowers "
                       "D + C", raise_sum, [acc, acc2, c2])
    if by_c is None or by_sum is None:
        return False
    chain.prove("the move never lowers D", alg.not_(formula.drop), uses=[prev.ordered, prev.ranged, c_up], applied=[by_c, by_sum])
    return not chain.stopped


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
