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
* **monotonicity** (:func:`prove_monotone`): the first stage per group with
  :data:`GROUP_MARGIN`, then the group merge -- the other group's sum
  re-aligned (:func:`group_realign_lemma`), the raised group's gain
  (:func:`group_gain_lemma`), distributivity and a composition in slack
  form -- then TR-FDPA's second stage.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import accumulate
from typing import Any, Optional, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fused_sum import aligned, max_exponent
from ..encodings.terms import Term, input_term
from ..encodings.trfdpa import c_at, c_exponent, round_down_with_c, shift_cut, sum_at
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import lemma
from ..proof_kernel.parts import Part, PartsProof, all_finite, between, implies, negated_script, ranged_var, run_parts
from ..queries.query_algebra import QueryAlgebra, Runner
from ..simulate import decode_input
from .fused_sum import Plan
from .tfdpa import MonotoneShape, capped_shift, composition_lemmas, distributivity_lemma, fresh_exponents
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
    cut_sum_step,
    first_stage,
    floor_chain,
    round_down_lemma,
    second_stage_lemmas,
)

__all__ = ["GROUP_MARGIN", "error_facts", "far_c_lemma", "group_error_parts", "group_gain_lemma",
           "group_realign_lemma", "group_sums", "monotone_lemmas", "prove_error_bound", "prove_error_interval",
           "prove_monotone", "regroup_chain", "regroup_step", "supports_error_bound", "supports_error_facts",
           "supports_monotone", "two_groups_lemma"]


def group_sums(g: QueryAlgebra, plan: Plan, terms: list[Term], floor: int) -> ProductSums:
    """GTR-FDPA's products' sum (Alg. 11 steps 2-3): even and odd lanes truncated at their own largest exponent, each
    group sum rounded down at e_max = max(e_even, e_odd), the two added."""
    F = plan.model.F
    assert F is not None
    facts: list[Bool] = []
    groups = (terms[0::2], terms[1::2])
    e_grp = [max_exponent(g, grp, floor) for grp in groups]
    T_grp = [g.sum_all(aligned(g, t, e, F) for t in grp) for grp, e in zip(groups, e_grp)]
    e_max = g.max(*e_grp)
    span = max(T.hi.bit_length() + T.lo.bit_length() for T in T_grp) + 1
    T = g.sum_all(shift_cut(g, Tg, g.sub(e, e_max), max_left=0, max_right=span) for Tg, e in zip(T_grp, e_grp))
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
    groups = [[terms[k] for k in ls] for ls in lanes]
    e_grp = [max_exponent(alg, grp, floor) for grp in groups]  # step 2: e_even, e_odd
    A = [[aligned(alg, t, e_g, F) for t in grp] for grp, e_g in zip(groups, e_grp)]
    T_grp = [alg.sum_all(a) for a in A]
    e_max = alg.max(*e_grp)  # step 3: RD_F each group sum at e_max
    span = max(T.hi.bit_length() + T.lo.bit_length() for T in T_grp) + 1
    R = [shift_cut(alg, Tg, alg.sub(e_g, e_max), max_left=0, max_right=span) for Tg, e_g in zip(T_grp, e_grp)]
    T = alg.sum_all(R)
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
    """Whether :func:`prove_monotone` applies: one GTR-FDPA (K = L, L even) whose products cannot overflow (§4.2)."""
    return model.kind == "gtr-fdpa" and model.L is not None and model.L % 2 == 0 and cdna3_monotone_applies(model, K)


def group_realign_lemma(shm: MonotoneShape, t_hi: int, span: int) -> Part:
    """GTR: the other group's sum, rounded down from e_h to e_max and to e_max' >= e_max (Alg. 11 lines 15-16):
    s = 2**Dm R' + wm - R is in [0, wm] (Dm = min(e_max' - e_max, Dc'), Dc' above the group sum's width)."""
    alg = QueryAlgebra()
    T = ranged_var(alg, "T", 0, t_hi)
    eh = ranged_var(alg, "eh", shm.e_lo, shm.e_hi)
    E, E2 = fresh_exponents(alg, shm)
    alg.assert_(alg.le(eh, E))
    D, w = capped_shift(alg, shm, E, E2)
    R, R2 = (shift_cut(alg, T, alg.sub(eh, x), max_left=0, max_right=span) for x in (E, E2))
    s = alg.sub(alg.add(alg.shl(R2, D), w), R)
    goal = alg.all([alg.le(0, R), alg.le(R, t_hi), alg.le(0, R2), alg.le(0, s), alg.le(s, w)])
    return Part(f"group merge, the other group's sum re-aligned from e_max to e_max' >= e_max (RD_F): R <= 2^Dm R' + "
                  f"(2^Dm - 1), Dm = min(e_max'-e_max, {shm.Dc})", negated_script(alg, goal))


def group_gain_lemma(sh1: MonotoneShape, shm: MonotoneShape, t_hi: int, span: int) -> Part:
    """GTR: from T_g + M1 w <= 2**D T_g' (the raised group), at e_max = max(e_g, e_h) <= e_max' = max(e_g', e_h):
    2**Dm R' >= R + (1 + MARGIN) wm, R = RD_F(T_g at e_max) (Alg. 11 lines 15-16)."""
    alg = QueryAlgebra()
    T, T2 = ranged_var(alg, "T", 0, t_hi), ranged_var(alg, "T2", 0, t_hi)
    e, e2 = fresh_exponents(alg, sh1)
    D, w = capped_shift(alg, sh1, e, e2)
    alg.assert_(alg.le(alg.add(T, alg.mul(sh1.margin, w)), alg.shl(T2, D)))
    eh = ranged_var(alg, "eh", shm.e_lo, shm.e_hi)  # the other group's exponent
    E, E2 = alg.max(e, eh), alg.max(e2, eh)
    Dm, wm = capped_shift(alg, shm, E, E2)
    R = shift_cut(alg, T, alg.sub(e, E), max_left=0, max_right=span)
    R2 = shift_cut(alg, T2, alg.sub(e2, E2), max_left=0, max_right=span)
    s = alg.sub(alg.shl(R2, Dm), alg.add(R, alg.mul(shm.gain_k, wm)))
    goal = alg.all([alg.le(E, E2), alg.le(0, R), alg.le(R, t_hi), alg.le(0, s)])
    return Part(f"group merge, the raised group's sum: T_g + {sh1.margin} w <= 2^D T_g' gives, at e_max = max(e_g, e_h) "
                  f"<= e_max' = max(e_g', e_h), 2^Dm RD(T_g' at e_max') >= RD(T_g at e_max) + {shm.gain_k} (2^Dm - 1)",
                  negated_script(alg, goal))


def monotone_lemmas(model: Model, K: int) -> list[Part]:
    """Every lemma of the GTR-FDPA proof, the glue first: TR-FDPA's first stage per group, the group merge, TR-FDPA's
    second stage."""
    n = K // 2  # products per truncated sum: per even/odd group
    lemmas, sh1, gl, a_hi = first_stage(model, K, n=n, margin=GROUP_MARGIN, products=group_sums)
    # Alg. 11 step 3: the two group sums rounded down at e_max = max(e_even, e_odd)
    t_hi = n * a_hi
    # a group sum is below 2**Dc': past that shift the cap loses nothing
    shm = MonotoneShape(model, K, n=2, with_c=False, margin=MARGIN, zeros_at_floor=True, Dc=t_hi.bit_length() + 1)
    lemmas += [group_realign_lemma(shm, t_hi, gl.span), group_gain_lemma(sh1, shm, t_hi, gl.span),
               distributivity_lemma(shm, (0, 2 * t_hi)), *composition_lemmas(shm, t_hi)]
    return lemmas + second_stage_lemmas(shm, 2 * t_hi, gl.S.hi)


def prove_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of a finite non-negative input lowers D (GTR-FDPA): "holds" with every lemma's
    block (expecting unsat), or "unknown" naming the first lemma a solver did not prove; seconds per lemma."""
    return run_parts(monotone_lemmas(model, K), run)
