"""Facts about one CDNA3 GTR-FDPA (Alg. 11, encodings/gtrfdpa.py): the group merge, on top of TR-FDPA's.

GTR-FDPA is TR-FDPA (Alg. 10, :mod:`~smtmma.op_proofs.trfdpa`) with the
products summed in two groups (even and odd lanes), each truncated at its
own largest exponent, the group sums rounded down at e_max = max(e_even,
e_odd) (Alg. 11 steps 2-3), and a c far below E dropped (lines 24-25).
Its proofs are TR-FDPA's with these parts plugged in:

* **error bound on the model's own terms** (:func:`error_facts`, what the
  error-bound query uses): TR-FDPA's chain per group, the merge in four
  cases (which groups sit at E), the exact sum regrouped lane by lane
  (:func:`regroup_step`), the far c dropped;
* glue: :func:`group_sums`, the two group sums rounded down and added;
* **error bound by parts** (:func:`prove_error_interval`, where
  :func:`error_facts` does not apply: K = 1 or F2 = F): RD_F of a group
  sum at e_max (lines 15-16), the two groups' error within L units
  (:func:`two_groups_lemma`), the far c dropped (:func:`far_c_lemma`);
* **monotonicity** (:func:`monotone_facts`, on the model's own terms): the
  products' stage per group (T-FDPA's credit argument with
  :data:`GROUP_MARGIN`), then the group merge (:class:`MergeLemmas`: the
  moved group's gain at e_max, the other group's sum re-aligned, composed),
  then TR-FDPA's second stage.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import accumulate
from typing import Any, Optional, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fused_sum import aligned
from ..encodings.terms import Term, input_term
from ..encodings.gtrfdpa import group_merge
from ..encodings.trfdpa import c_at, c_exponent, round_down_with_c, shift_cut, sum_at
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import lemma
from ..proof_kernel.parts import Part, PartsProof, all_finite, between, implies, negated_script, ranged_var, run_parts
from ..queries.query_algebra import QueryAlgebra, Runner
from ..simulate import decode_input
from .fused_sum import Plan
from .moves import move_firsts
from .tfdpa import Credits, MonotoneShape, MoveLemmas, MoveSums, WideSums, capped_shift, credit_facts, largest_aligned
from .trfdpa import (
    Cdna3Glue,
    MARGIN,
    ProductSums,
    ahead_chain,
    cdna3_error_applies,
    cdna3_error_parts,
    cdna3_monotone_applies,
    cdna3_output_facts,
    cdna3_start,
    cut_chain,
    cdna3_monotone_facts,
    cdna3_products,
    cdna3_run,
    cut_sum_step,
    floor_chain,
    round_down_lemma,
)

__all__ = ["GROUP_MARGIN", "MergeLemmas", "error_facts", "far_c_lemma", "group_error_parts", "group_sums", "monotone_facts",
           "prove_error_bound", "prove_error_interval", "regroup_chain", "regroup_step", "supports_error_bound",
           "supports_error_facts", "supports_monotone", "two_groups_lemma"]


def group_sums(g: QueryAlgebra, plan: Plan, terms: list[Term], floor: int) -> ProductSums:
    """GTR-FDPA's products' sum (Alg. 11 steps 2-3): even and odd lanes truncated at their own largest exponent, each
    group sum rounded down at e_max = max(e_even, e_odd), the two added."""
    F = plan.model.F
    assert F is not None
    facts: list[Bool] = []
    m = group_merge(g, terms, F, floor)
    groups, e_grp, T_grp, e_max, span, T = m.groups, m.e_grp, m.T_grp, m.e_max, m.span, m.T
    for grp, e, Tg in zip(groups, e_grp, T_grp):
        facts += [g.or_(g.eq(t.sig, 0), g.le(t.exp, e)) for t in grp]
        facts += [g.le(e, e_max), between(g, e, plan.e_lo, plan.e_hi), between(g, Tg, Tg.lo, Tg.hi)]
    t_rng = (min(Tg.lo for Tg in T_grp), max(Tg.hi for Tg in T_grp))
    return ProductSums(e_max, T, facts, len(groups[0]), t_rng, span)


# -- the error bound ---------------------------------------------------------------------------------------


def supports_error_bound(model: Model, K: int) -> bool:
    """Whether :func:`prove_error_bound` covers the model: one GTR-FDPA (Alg. 11) with K = L."""
    return model.kind == "gtr-fdpa" and cdna3_error_applies(model, K)


def far_c_lemma(plan: Plan) -> Part:
    """Alg. 11 lines 23-25: c aligned at E >= e_c and rounded down to F bits, dropped when e_c < E - F - 1.

    Proves: dropped, the value is 0 and |c| < 2**(E - F - 1) (in c's own scale); else it is floor(c / 2**(E - F)).
    """
    F = plan.model.F
    assert F is not None
    alg = QueryAlgebra()
    uc = decode_input(alg, plan.fc, alg.var("c", plan.fc.bits), plan.fd.name)
    t = input_term(uc)
    E = ranged_var(alg, "E", plan.e_lo, plan.e_hi)
    alg.assert_(all_finite(alg, uc))
    e_c = alg.ite(alg.eq(t.sig, 0), plan.e_lo, t.exp)
    alg.assert_(alg.le(e_c, E))
    A = alg.ite(alg.lt(e_c, alg.sub(E, F + 1)), 0, aligned(alg, t, E, F, floor=True))
    Q = aligned(alg, t, E, F, floor=True)
    dropped = alg.lt(e_c, alg.sub(E, F + 1))
    d = alg.sub(alg.sub(E, F), alg.sub(t.exp, t.frac))  # c's last place below u = 2**(E-F)
    span = t.sig.hi.bit_length() + 2
    small = alg.or_(alg.eq(t.sig, 0), alg.and_(alg.lt(span, d), alg.lt(0, d)))  # sig < 2**span <= 2**(d-1)
    small = alg.or_(small, alg.and_(alg.le(1, d), alg.lt(t.sig, alg.shl(1, alg.clamp(alg.sub(d, 1), 0, span)))))
    goal = alg.and_(alg.or_(alg.not_(dropped), alg.and_(alg.eq(A, 0), small)), alg.or_(dropped, alg.eq(A, Q)))
    return Part(f"c at E >= e_c, RD_F (F={F}) and dropped when e_c < E - F - 1 (Alg. 11 lines 23-25): "
                  "dropped, |c| < 2^(E-F-1); else floor(c / 2^(E-F))", negated_script(alg, goal))


def two_groups_lemma(L: int) -> Part:
    """GTR-FDPA's two groups (Alg. 11 steps 2-3), in units u1/2 (u1 = 2**(e_max - F)): group g errs by
    x_g * 2**(e_g - e_max) (|x_g| <= L/2 units of its own) plus an RD step y_g in [0, 1] (0 when e_g = e_max);
    one group has e_g = e_max.  Then the products' error is within L units u1 (j_g = min(e_max - e_g, 1))."""
    alg = QueryAlgebra()
    n = L // 2
    je, jo = ranged_var(alg, "je", 0, 1), ranged_var(alg, "jo", 0, 1)
    alg.assert_(alg.or_(alg.eq(je, 0), alg.eq(jo, 0)))
    total = alg.const(0)
    for name, j in (("e", je), ("o", jo)):
        x = ranged_var(alg, f"x{name}", -2 * n, 2 * n)  # units of u_g/2 <= u1/2 * 2**-j
        y = ranged_var(alg, f"y{name}", 0, 2)
        alg.assert_(alg.le(alg.abs(x), alg.ite(alg.eq(j, 0), 2 * n, n)))
        alg.assert_(alg.or_(alg.eq(j, 1), alg.eq(y, 0)))
        total = alg.add(total, alg.add(x, y))
    goal = between(alg, total, -2 * L, 2 * L)
    return Part(f"two groups of {n} products (Alg. 11): their error, group RD included, is within {L} units 2^(e_max-F)",
                  negated_script(alg, goal))


def group_error_parts(plan: Plan, gl: Cdna3Glue) -> list[Part]:
    """The group merge's error parts, in TR-FDPA's place of c's round-down: RD_F of a group sum at e_max, the two
    groups' error, the far c."""
    L = plan.model.L
    assert L is not None
    return [round_down_lemma(plan, gl.t_rng, 0, -(plan.e_hi - plan.e_lo), gl.span,
                             "RD_F of a group sum at e_max >= e_g (Alg. 11 lines 15-16): floor(T_g * 2^(e_g-e_max))"),
            two_groups_lemma(L), far_c_lemma(plan)]


def prove_error_interval(model: Model, K: int, run: Runner, *, lo_fused: Fraction, hi_fused: Fraction,
                         ulps: Optional[Fraction] = None) -> PartsProof:
    """Prove ``-(lo_fused 2**(E-F) + ulps ulp) <= exact - Phi <= hi_fused 2**(E-F) + ulps ulp`` for one GTR-FDPA
    (K = L, E = max(e_max, e_c)) on every finite input with a finite output, step by step (blocks expect unsat)."""
    if model.kind != "gtr-fdpa":
        raise ValueError(f"not a GTR-FDPA: {model.describe()}")
    plan = Plan(model, K)
    return run_parts(cdna3_error_parts(plan, lo_fused, hi_fused, plan.ulps if ulps is None else ulps,
                                       products=group_sums, c_parts=group_error_parts), run)


def prove_error_bound(model: Model, K: int, run: Runner, *, scale: Fraction = Fraction(1), fused: Optional[Fraction] = None,
                      ulps: Optional[Fraction] = None) -> PartsProof:
    """Prove ``|Phi - exact| <= scale * (fused * 2**(E - F) + ulps * ulp(Phi))`` (``fused``: K + 1 by default, ``ulps``:
    the conversion's), as :func:`prove_error_interval` with both sides at ``scale * fused``."""
    fused = Fraction(K + 1) if fused is None else fused
    return prove_error_interval(model, K, run, lo_fused=scale * fused, hi_fused=scale * fused,
                                ulps=None if ulps is None else scale * ulps)


def supports_error_facts(model: Model, K: int) -> bool:
    """Whether :func:`error_facts` applies: one GTR-FDPA as :func:`supports_error_bound` takes it, with both groups
    non-empty (K >= 2) and F2 > F (the cut at E with F + 1 bits is one of RD_F2's)."""
    return supports_error_bound(model, K) and K >= 2 and model.F2 is not None and model.F is not None and model.F2 > model.F


def error_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the error query's own formula (``formula``: an
    :class:`~smtmma.queries.properties.error_bound.ErrorFormula` in relative units 2**(E - F - G), E = max(e_max, e_c)
    its e_max), that leave its final check a linear step on the model's own terms (Alg. 11).

    TR-FDPA's chain (:func:`~smtmma.op_proofs.trfdpa.error_facts`) one level deeper: each group (even, odd lanes) is
    truncated at its own exponent e_g (RZ_F, step 2), so each group has TR's two cases -- e_g = E: its truncated
    products are their floors at E with F bits or one above; e_g < E: cut at E with F + 1 bits they are their floors
    there or one above, and the group's running sums cut carry at most one per product.  The group merge (RD_F at
    e_max, step 3) then has four cases, each a fact under its own premise:

    * both groups at E: the merge and RD_F2 (Alg. 11 line 22) are exact;
    * one group at E, the other below: e_max = E, the lower group's sum rounded down is its cut halved (floor);
    * both below (E > e_max): a group sum rounded down at e_max, cut at E with F + 1 bits, is the group's cut; the
      merged sum cut carries at most one; RD_F2 at E cut to F + 1 bits is that cut.

    In every case the products' exact sum (in the groups' order, then regrouped to the lanes' one lemma per lane)
    minus T2 * 2**(E - F2) is within [-K, K) units 2**(E - F).  Then c: rounded down at E, or dropped when
    e_c < E - F - 1 and then below half a unit (lines 23-25); so the exact sum minus S * 2**(E - F2) is within
    (-(K + 1/2), K + 1) units (without this fact the final check of gfx950 e3m2 x e3m2 gets no answer in 600 s; with
    it, 24 s); the glue (step 5); a finite D is a whole number of units 2**(E - F2) within the rounding's ulps of S.
    The final statement is the query itself.
    """
    start = cdna3_start(chain, formula)
    if start is None:
        return False
    alg, x, G, G2 = formula.alg, formula.x, formula.G, start.G2
    F, F2, terms, ct, floor = start.F, start.F2, start.terms, start.ct, start.floor
    lanes = (list(range(0, x.K, 2)), list(range(1, x.K, 2)))
    m = group_merge(alg, terms, F, floor)  # steps 2-3: e_even, e_odd; each group sum rounded down at e_max
    groups, e_grp, T_grp, e_max, R, T = m.groups, m.e_grp, m.T_grp, m.e_max, m.cut, m.T
    A = [[aligned(alg, t, e_g, F) for t in grp] for grp, e_g in zip(groups, e_grp)]  # the terms T_grp adds
    S, E = round_down_with_c(alg, T, e_max, ct, F, F2, floor, drop_far_c=True)  # step 4
    T2, sc = sum_at(alg, T, e_max, E, F, F2), c_at(alg, ct, E, F, floor, drop_far_c=True)
    e = formula.e_max
    chain.prove("E = max(e_max, e_c) is the query's e_max (or every summand is zero)",
                alg.or_(alg.eq(E, e), alg.and_(alg.eq(T, 0), alg.eq(sc, 0))), uses=[])
    same_e = chain.last
    X = formula.exact_terms
    K, unit = x.K, 1 << G
    names = ("even", "odd")
    runs, whole = [], []
    for name, a, Tg in zip(names, A, T_grp):
        run = list(accumulate(a, alg.add))
        chain.prove(f"T_{name} is the {name} lanes' truncated products' running sum", alg.eq(Tg, run[-1]), uses=[])
        runs.append(run)
        whole.append(chain.last)
    chain.prove("T is the sum of the two group sums rounded down at e_max (Alg. 11 lines 15-17)", alg.eq(T, alg.add(R[0], R[1])), uses=[])
    whole.append(chain.last)
    at = [alg.eq(e_g, e) for e_g in e_grp]
    below = [alg.lt(e_g, e) for e_g in e_grp]
    # per group, e_g = E: floors at E with F bits, each truncated product its floor or one above
    x_at, ahead_at = [], []
    for name, ls, grp, a, run, case in zip(names, lanes, groups, A, runs, at):
        x_at.append(floor_chain(chain, alg, [X[k] for k in ls], grp, e, F, G, "F", ls, f"{name} "))
        Q = [aligned(alg, t, e, F, floor=True) for t in grp]
        ahead_at.append(ahead_chain(chain, alg, a, Q, run, case,
                                    f"e_{name} = E: product {{k}} truncated at e_{name} (RZ_F) is its floor at E or one above", (), ls))
    # per group, e_g < E: floors at E with F + 1 bits, the truncated products and running sums cut there (narrow terms)
    x_below, cut_facts, cuts = [], [], []
    for name, ls, grp, a, run, case, e_g, Tg in zip(names, lanes, groups, A, runs, below, e_grp, T_grp):
        x_below.append(floor_chain(chain, alg, [X[k] for k in ls], grp, e, F + 1, G - 1, "F+1", ls, f"{name} "))
        m_g = alg.clamp(alg.sub(alg.sub(e, e_g), 1), 0, max(Tg.hi, -Tg.lo).bit_length() + 1)  # past T_g's width: 0 or -1
        facts = cut_chain(chain, alg, grp, a, run, e_g, e, m_g, case, F, f"e_{name}", f"e_{name} < E", ls, f"{name} lanes' ",
                          "its group's exponent e_g")
        if facts is None:
            return False
        cut_facts.append(facts)
        cuts.append(alg.shr(Tg, m_g))
    # the group merge (step 3), in four cases, each on the exact sum in the groups' order (Xe + Xo)
    T2u = alg.shl(T2, G2)
    X_grp = [alg.sum_all([X[k] for k in ls]) for ls in lanes]
    diff = alg.sub(alg.add(X_grp[0], X_grp[1]), T2u)
    within = between(alg, diff, -K * unit, K * unit - 1)
    both_at = alg.and_(at[0], at[1])
    chain.prove("e_even = e_odd = E: the group sums rounded down at e_max are exact, T = T_even + T_odd",
                implies(alg, [both_at], alg.eq(T, alg.add(T_grp[0], T_grp[1]))), uses=[whole[2]])
    merged = chain.last
    chain.prove(f"e_max = E: RD_F2 of T at E is exact (Alg. 11 line 22), T2 = T * 2^{F2 - F}",
                implies(alg, [alg.or_(at[0], at[1])], alg.eq(T2, alg.shl(T, F2 - F))), uses=[same_e])
    exact_t = chain.last
    chain.prove("e_even = e_odd = E: the even and odd products' exact sums minus T2 * 2^(E-F2) are within [-K, K) units 2^(E-F)",
                implies(alg, [both_at], within), uses=[*x_at, *ahead_at, merged, exact_t, *whole])
    cases = [chain.last]
    for hi, lo in ((0, 1), (1, 0)):
        case = alg.and_(at[hi], below[lo])
        chain.prove(f"e_{names[lo]} < e_{names[hi]} = E: the {names[lo]} group's sum rounded down at e_max is its cut at E with "
                    "F+1 bits halved (floor)",
                    implies(alg, [case], alg.and_(alg.eq(R[hi], T_grp[hi]), between(alg, alg.sub(cuts[lo], alg.shl(R[lo], 1)), 0, 1))),
                    uses=[])
        halved = chain.last
        chain.prove(f"e_{names[lo]} < e_{names[hi]} = E: the even and odd products' exact sums minus T2 * 2^(E-F2) are within "
                    "[-K, K) units 2^(E-F)",
                    implies(alg, [case], within),
                    uses=[x_at[hi], ahead_at[hi], x_below[lo], *cut_facts[lo], halved, exact_t, *whole])
        cases.append(chain.last)
    both_below = alg.and_(below[0], below[1])  # E > e_max
    m = alg.clamp(alg.sub(alg.sub(e, e_max), 1), 0, max(T.hi, -T.lo).bit_length() + 1)
    recut = []
    for name, Rg, cut_g in zip(names, R, cuts):
        chain.prove(f"E > e_max: the {name} group's sum rounded down at e_max, cut at E with F+1 bits, is its cut there",
                    implies(alg, [both_below], alg.eq(alg.shr(Rg, m), cut_g)), uses=[])
        recut.append(chain.last)
    args = [R[0], R[1], T, m]
    if not chain.establish(lemma("a sum cut at a shift is the sum of its operands cut there, or one more", cut_sum_step, args), args):
        return False
    chain.prove("the merged sum T cut at E with F+1 bits is its group sums' cuts, or one more",
                between(alg, alg.sub(alg.sub(alg.shr(T, m), alg.shr(R[0], m)), alg.shr(R[1], m)), 0, 1),
                uses=[whole[2]], applied=[chain.applied_last])
    merged_cut = chain.last
    chain.prove("E > e_max: RD_F2 of T at E (Alg. 11 line 22) cut to F+1 bits is T cut at E with F+1 bits",
                implies(alg, [both_below], alg.eq(alg.shr(T2, F2 - F - 1), alg.shr(T, m))), uses=[same_e])
    cut_t = chain.last
    chain.prove("E > e_max: the even and odd products' exact sums minus T2 * 2^(E-F2) are within [-K, K) units 2^(E-F)",
                implies(alg, [both_below], within),
                uses=[*x_below, *(f for facts in cut_facts for f in facts), *recut, merged_cut, cut_t, *whole])
    cases.append(chain.last)
    chain.prove("the even and odd products' exact sums minus T2 * 2^(E-F2) are within [-K, K) units 2^(E-F)", within,
                uses=[*cases, same_e])
    grouped = chain.last
    regrouped = regroup_chain(chain, alg, X[:K])
    if regrouped is None:
        return False
    total, last = regrouped
    chain.prove("the products' exact sum minus T2 * 2^(E-F2) is within [-K, K) units 2^(E-F)",
                between(alg, alg.sub(total, T2u), -K * unit, K * unit - 1), uses=[grouped, last])
    products = chain.last
    dropped = alg.lt(c_exponent(alg, ct, floor), alg.sub(E, F + 1))
    chain.prove("c rounded down at E (RD_F, Alg. 11 line 23) is its floor in units 2^(E-F), or dropped (e_c < E-F-1, "
                "lines 24-25) and below half a unit",
                alg.or_(alg.and_(alg.not_(dropped), alg.eq(alg.shr(X[-1], G), sc)),
                        alg.all([dropped, alg.eq(sc, 0), between(alg, X[-1], -(unit >> 1) + 1, (unit >> 1) - 1)])), uses=[same_e])
    c_fact = chain.last
    chain.prove("the exact sum minus S * 2^(E-F2) is within (-(K+1/2), K+1) units 2^(E-F)",
                between(alg, alg.sub(formula.exact, alg.shl(S, G2)), -K * unit - (unit >> 1) + 1, (K + 1) * unit - 1),
                uses=[products, c_fact])
    cdna3_output_facts(chain, formula, start, S, E, "Alg. 11 step 5", same_e)
    return not chain.stopped


def regroup_chain(chain: LemmaChain, alg: QueryAlgebra, X: Sequence[Int]) -> Optional[tuple[Int, Optional[int]]]:
    """X_0 + X_1 + ... (the lanes' order) is (X_0 + X_2 + ...) + (X_1 + X_3 + ...) (the groups'): one fact per lane,
    each from :func:`regroup_step` applied; (the lanes' sum, the index of the last fact), None when the chain stops.

    A sum of 16 wide terms rearranged gets no answer in minutes, in the query or as one lemma (the solvers' sum
    normalization stops at the sign extensions between widths); every argument in the whole sum's range makes two
    lemmas (one per side) serve every step."""
    P, Eg, Og, prev = alg.add(X[0], X[1]), X[0], X[1], None
    total = alg.sum_all(X)
    span = (total.lo, total.hi)
    for j in range(2, len(X)):
        side = j % 2
        args = [P, Eg, Og, X[j]]
        if not chain.establish(lemma(f"a sum P = E + O plus x is (E{' + x' * (1 - side)}) + (O{' + x' * side})",
                                     lambda g, v, side=side: regroup_step(g, v, side), args, span=span), args):
            return None
        P = alg.add(P, X[j])
        Eg, Og = (alg.add(Eg, X[j]), Og) if side == 0 else (Eg, alg.add(Og, X[j]))
        chain.prove(f"the products' exact running sum {j} is its even lanes' plus its odd lanes'", alg.eq(P, alg.add(Eg, Og)),
                    uses=[prev], applied=[chain.applied_last])
        prev = chain.last
    return total, prev


def regroup_step(g: Any, v: Sequence[Int], side: int) -> Bool:
    """P = E + O gives P + x = (E + x) + O (``side`` 0) or E + (O + x) (``side`` 1)."""
    P, E, O, x = v
    return implies(g, [g.eq(P, g.add(E, O))], g.eq(g.add(P, x), g.add(g.add(E, x), O) if side == 0 else g.add(E, g.add(O, x))))


# -- monotonicity ----------------------------------------------------------------------------------------


#: GTR-FDPA: w's a group's raised product gains beyond the group's others: the group merge needs 1 + MARGIN w's
#: at e_max' (the other group's re-alignment and MARGIN), and w >= 2**(D-1)
GROUP_MARGIN = 2 * (1 + MARGIN)


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`monotone_facts` applies: one GTR-FDPA (K = L, L even), F2 >= F, rounding down (see
    :func:`~smtmma.op_proofs.trfdpa.cdna3_monotone_applies`)."""
    return model.kind == "gtr-fdpa" and model.L is not None and model.L % 2 == 0 and cdna3_monotone_applies(model, K)


class MergeLemmas:
    """The group merge's lemmas (Alg. 11 step 3), each a function of the run's terms: the moved group's sum carried
    from its own e to e_max = max(e_even, e_odd) (its order at the group's W, ``group_wide``, shape ``sh1``), the
    other group's sum re-aligned, and the two composed (shape ``shm``, sums at ``wide``); ``span``: the encoding's
    shift cap of a group sum."""

    def __init__(self, chain: LemmaChain, sh1: MonotoneShape, shm: MonotoneShape, group_wide: WideSums, wide: WideSums,
                 span: int) -> None:
        self.chain, self.sh1, self.shm, self.group_wide, self.wide, self.span = chain, sh1, shm, group_wide, wide, span


    def _cut(self, g: Any, T: Int, e: Int, E: Int) -> Int:
        return shift_cut(g, T, g.sub(e, E), max_left=0, max_right=self.span)

    def gain(self, T: Int, T2: Int, e: Int, e2: Int, eh: Int, eh2: Int, moved: int) -> Optional[str]:
        """The moved group (``moved``: 0 even, 1 odd): T_g + M1 w <= 2**D T_g' gives, at e_max = max(e_even, e_odd) <=
        e_max' (e_h unchanged), 2**Dm R' >= R + (1 + MARGIN) wm, R = RD(T_g at e_max)."""
        sh1, shm, pw, wd = self.sh1, self.shm, self.group_wide, self.wide

        def st(g: Any, v: Sequence[Int]) -> Bool:
            T_, T2_, e_, e2_, eh_, eh2_ = v
            D, w = capped_shift(g, sh1, e_, e2_)
            premise = [g.le(0, T_), g.le(0, T2_), g.le(e_, e2_), g.eq(eh2_, eh_),
                       pw.le(g, pw.plus_times(pw.of(g, T_), sh1.margin, g, w), pw.shl(g, T2_, D))]
            # e_max as the encoding takes it, max(e_even, e_odd)
            E, E2 = (g.max(e_, eh_), g.max(e2_, eh2_)) if moved == 0 else (g.max(eh_, e_), g.max(eh2_, e2_))
            Dm, wm = capped_shift(g, shm, E, E2)
            R, R2 = self._cut(g, T_, e_, E), self._cut(g, T2_, e2_, E2)
            gain = wd.le(g, wd.plus_times(wd.of(g, R), shm.gain_k, g, wm), wd.shl(g, R2, Dm))
            return implies(g, premise, g.all([g.le(E, E2), g.le(0, R), g.le(0, R2), gain]))

        return self.chain.use(f"group merge, the moved ({('even', 'odd')[moved]}) group's sum: T_g + {sh1.margin} w <= 2^D T_g' gives, at e_max = "
                           f"max(e_g, e_h) <= e_max', 2^Dm RD(T_g' at e_max') >= RD(T_g at e_max) + {shm.gain_k} (2^Dm - 1)",
                           st, [T, T2, e, e2, eh, eh2])

    def realign(self, T: Int, T2: Int, e: Int, e2: Int, E: Int, E2: Int) -> Optional[str]:
        """The other group (T, e unchanged), rounded down at e_max and at e_max' >= e_max: R <= 2**Dm R' + wm <= R + wm."""
        shm, wd = self.shm, self.wide

        def st(g: Any, v: Sequence[Int]) -> Bool:
            T_, T2_, e_, e2_, E_, E2_ = v
            Dm, wm = capped_shift(g, shm, E_, E2_)
            R, R2 = self._cut(g, T_, e_, E_), self._cut(g, T2_, e2_, E2_)
            slack = wd.credit(g, R, R2, Dm, wm)
            premise = [g.eq(T2_, T_), g.eq(e2_, e_), g.le(0, T_), g.le(e_, E_), g.le(E_, E2_)]
            return implies(g, premise, g.all([g.le(0, R), g.le(0, R2), wd.le(g, wd.lit(0), slack), wd.le(g, slack, wd.of(g, wm))]))

        return self.chain.use(f"group merge, the other group's sum re-aligned from e_max to e_max' >= e_max (RD_F): R <= "
                           f"2^Dm R' + (2^Dm - 1), Dm = min(e_max'-e_max, {shm.Dc})", st, [T, T2, e, e2, E, E2])

    def compose(self, R: Sequence[Int], R2: Sequence[Int], E: Int, E2: Int, moved: int) -> Optional[str]:
        """The moved group's gain (``moved``: 0 even, 1 odd) and the other's re-alignment give T + MARGIN wm <= 2**Dm T'
        (T = R_even + R_odd, Alg. 11 step 3)."""
        shm, wd = self.shm, self.wide

        def st(g: Any, v: Sequence[Int]) -> Bool:
            r, r2, E_, E2_ = v[:2], v[2:4], v[4], v[5]
            Dm, wm = capped_shift(g, shm, E_, E2_)
            o = 1 - moved
            slack = wd.credit(g, r[o], r2[o], Dm, wm)
            premise = [*(g.le(0, t) for t in (*r, *r2)), g.le(E_, E2_),
                       wd.le(g, wd.plus_times(wd.of(g, r[moved]), shm.gain_k, g, wm), wd.shl(g, r2[moved], Dm)),
                       wd.le(g, wd.lit(0), slack), wd.le(g, slack, wd.of(g, wm))]
            T, T2 = g.sum_all(r), g.sum_all(r2)
            return implies(g, premise, g.and_(wd.le(g, wd.lit(0), wd.of(g, T)),
                                              wd.le(g, wd.plus_times(wd.of(g, T), shm.margin, g, wm), wd.shl(g, T2, Dm))))

        which = ("even", "odd")[moved]
        return self.chain.use(f"group merge, composition ({which} group moved): its gain and the other's re-alignment give "
                           f"T + {shm.margin} wm <= 2^Dm T', T = R_even + R_odd", st, [*R, *R2, E, E2])


def monotone_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the monotonicity query's own formula with one symbolic move (``formula``: a
    :class:`~smtmma.queries.properties.monotonicity.OneMoveFormula`), that leave its final check Boolean steps
    (Alg. 11): T-FDPA's credit argument per group (:func:`~smtmma.op_proofs.tfdpa.credit_facts`; every input outside
    the group keeps its e), the moved group gaining :data:`GROUP_MARGIN` w's; the group merge at e_max (the moved
    group's gain, the other's re-alignment, composed: T + 4 wm <= 2**Dm T' where a lane moved); then TR-FDPA's
    second stage (:func:`~smtmma.op_proofs.trfdpa.cdna3_monotone_facts`)."""
    alg, model, x, y = formula.alg, formula.model, formula.x, formula.y
    K = x.K
    sh1 = MonotoneShape(model, K, n=K // 2, with_c=False, margin=GROUP_MARGIN, zeros_at_floor=True)
    plan, F = sh1.plan, sh1.F
    first = move_firsts(plan, formula.domain)
    lanes = (list(range(0, K, 2)), list(range(1, K, 2)))
    runs, parts = [], []
    for inputs in (x, y):
        _, terms, ct, floor = cdna3_products(alg, model, plan, inputs.a, inputs.b, inputs.c)
        m = group_merge(alg, terms, F, floor)  # steps 2-3
        A_grp = [[aligned(alg, t, e, F) for t in grp] for grp, e in zip(m.groups, m.e_grp)]  # the terms T_grp adds
        P_grp = [alg.running_sums(A) for A in A_grp]  # the last is T_grp's own term
        runs.append(cdna3_run(alg, model, terms, ct, floor, m.T, m.e_max))
        parts.append((m.groups, m.e_grp, A_grp, P_grp, m.T_grp, m.cut, m.span))
    (g1, e1, A1, P1, T1, R1, span), (g2, e2, A2, P2, T2, R2, _) = parts
    p, q = runs
    t_hi = (K // 2) * largest_aligned(sh1)
    # a group sum is below 2**Dc': past that shift the cap loses nothing
    shm = MonotoneShape(model, K, n=2, with_c=False, margin=MARGIN, zeros_at_floor=True, Dc=t_hi.bit_length() + 1)
    names = ("even", "odd")
    credits = []
    for i in (0, 1):
        other = [f"{w}{k}" for k in lanes[1 - i] for w in "ab"]
        cr = credit_facts(chain, formula, sh1, MoveSums(g1[i], g2[i], A1[i], A2[i], P1[i], P2[i], e1[i], e2[i], lanes[i]), first,
                          still=[*other, "c"], what=f"the {names[i]} lanes' ")
        if cr is None:
            return False
        credits.append(cr)
    Dm, wm = capped_shift(alg, shm, p.e, q.e)
    wdm = WideSums(max(v.width for v in (*R1, wm)) + Dm.hi + max(v.width for v in R2) + 8)
    merged: list[Optional[int]] = []
    for i in (0, 1):
        o = 1 - i
        ml = MergeLemmas(chain, sh1, shm, credits[i].wide, wdm, span)
        keep = []
        for label in (f"{w}{k}" for k in lanes[i] for w in "ab"):
            if label in formula.labels:
                chain.prove(f"{label} moved: the {names[o]} lanes' sum and e unchanged",
                            implies(alg, [formula.moved(label)], alg.and_(alg.eq(T2[o], T1[o]), alg.eq(e2[o], e1[o]))), uses=[])
                keep.append(chain.last)
        R = credits[i].moved
        chain.prove(f"a lane of the {names[i]} group moved: the {names[o]} lanes' sum and e unchanged",
                    implies(alg, [R], alg.and_(alg.eq(T2[o], T1[o]), alg.eq(e2[o], e1[o]))), uses=keep)
        same = chain.last
        gain = ml.gain(T1[i], T2[i], e1[i], e2[i], e1[o], e2[o], i)
        realign = ml.realign(T1[o], T2[o], e1[o], e2[o], p.e, q.e)
        comp = ml.compose(R1, R2, p.e, q.e, i)
        if gain is None or realign is None or comp is None:
            return False
        wd = wdm
        chain.prove(f"a lane of the {names[i]} group moved: e_max <= e_max' and T + {MARGIN} wm <= 2^Dm T'",
                    implies(alg, [R], alg.all([alg.le(p.e, q.e), wd.le(alg, wd.lit(0), wd.of(alg, p.T)),
                                               wd.le(alg, wd.plus_times(wd.of(alg, p.T), MARGIN, alg, wm), wd.shl(alg, q.T, Dm))])),
                    uses=[same, credits[i].summed, credits[i].ordered, credits[i].running, credits[o].running],
                    applied=[gain, realign, comp])
        merged.append(chain.last)
    lanes_moved = alg.or_(credits[0].moved, credits[1].moved)
    order = alg.and_(wdm.le(alg, wdm.lit(0), wdm.of(alg, p.T)),
                     wdm.le(alg, wdm.plus_times(wdm.of(alg, p.T), MARGIN, alg, wm), wdm.shl(alg, q.T, Dm)))
    chain.prove(f"a lane moved: T + {MARGIN} wm <= 2^Dm T'", implies(alg, [lanes_moved], order), uses=merged)
    summed = chain.last
    chain.prove("e_max <= e_max' (some input is moved)", alg.le(p.e, q.e), uses=[*merged, credits[0].ordered, credits[1].ordered])
    ordered = chain.last
    chain.prove("0 <= T", alg.le(0, p.T), uses=[credits[0].running, credits[1].running])
    nonneg_T = chain.last
    stage = Credits(MoveLemmas(chain, shm, first, wdm), wdm, Dm, wm, None, ordered, summed, lanes_moved, nonneg_T)
    return cdna3_monotone_facts(chain, formula, p, q, stage, shm, first)
