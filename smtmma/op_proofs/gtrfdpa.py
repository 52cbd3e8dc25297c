"""Facts about one CDNA3 GTR-FDPA (Alg. 11, encodings/gtrfdpa.py): the group merge, on top of TR-FDPA's.

GTR-FDPA is TR-FDPA (Alg. 10, :mod:`~smtmma.op_proofs.trfdpa`) with the
products summed in two groups (even and odd lanes), each truncated at its
own largest exponent, the group sums rounded down at e_max = max(e_even,
e_odd) (Alg. 11 steps 2-3), and a c far below E dropped (lines 23-25).
Its proofs are TR-FDPA's with these parts plugged in:

* glue: :func:`group_sums`, the two group sums rounded down and added;
* **error bound** (:func:`prove_error_interval`): RD_F of a group sum at
  e_max (lines 15-16), the two groups' error within L units
  (:func:`two_groups_lemma`), the far c dropped (:func:`far_c_lemma`);
* **monotonicity** (:func:`prove_monotone`): the first stage per group with
  :data:`GROUP_MARGIN`, then the group merge -- the other group's sum
  re-aligned (:func:`group_realign_lemma`), the raised group's gain
  (:func:`group_gain_lemma`), distributivity and a composition in slack
  form -- then TR-FDPA's second stage.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from ..encodings.algebra import Bool
from ..encodings.fused_sum import aligned, max_exponent
from ..encodings.terms import Term, input_term
from ..encodings.trfdpa import shift_cut
from ..models import Model
from ..proof_kernel.parts import Part, PartsProof, all_finite, between, negated_script, ranged_var, run_parts
from ..queries.query_algebra import QueryAlgebra, Runner
from ..simulate import decode_input
from .fused_sum import Plan
from .tfdpa import MonotoneShape, capped_shift, composition_lemmas, distributivity_lemma, fresh_exponents
from .trfdpa import (
    MARGIN,
    Cdna3Glue,
    ProductSums,
    cdna3_error_applies,
    cdna3_error_parts,
    cdna3_monotone_applies,
    first_stage,
    round_down_lemma,
    second_stage_lemmas,
)

__all__ = ["GROUP_MARGIN", "far_c_lemma", "group_error_parts", "group_gain_lemma", "group_realign_lemma", "group_sums",
           "monotone_lemmas", "prove_error_bound", "prove_error_interval", "prove_monotone", "supports_error_bound",
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
