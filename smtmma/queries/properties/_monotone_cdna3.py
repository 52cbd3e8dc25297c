"""A compositional monotonicity proof for one CDNA3 TR-FDPA (Alg. 10): raising any one input never lowers D.

TR-FDPA sums in two stages: the L products truncated at their largest
exponent e (RZ_F, step 2), then that sum T and c rounded down at E =
max(e, e_c) (RD_F2 and RD_F, step 3), then rho (step 4).  The whole-model
query gives no answer in 300 s (issue 8), nor does the second stage as one
lemma in 120 s; by stages, every check is small:

* **glue** (the model, all finite inputs): D = rho(S 2**(E-F2)) with S, E
  from the model's own steps (:func:`error_parts.cdna3_glue`);
* **first stage, raising a product's a or b**: the lemmas of the T-FDPA
  proof (:mod:`_monotone_parts`) on the L products alone, with a margin:
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

As in :mod:`_monotone_parts`, applying a lemma stated on generic variables
to the model's terms is the step no solver checks; each lemma is a
check-sat of the certificate.
"""

from __future__ import annotations

from ...encodings.algebra import Int
from ...encodings.terms import input_term
from ...encodings.trfdpa import (
    c_at,
    c_exponent,
    product_top,
    round_down_with_c,
    shift_cut,
    sum_at,
)
from ...models import Model
from ...simulate import decode_input
from .._twins import QueryAlgebra, Runner
from ._monotone_parts import (
    _aligned_step_lemma,
    _composition_lemmas,
    _distributivity_lemma,
    _exponent_step_lemma,
    _exponents,
    _exponents_lemma,
    _gain_lemma,
    _move,
    _pattern,
    _product_step_lemma,
    _realign_lemma,
    _rounding_lemma,
    _Shape,
    _shift,
    _value_lemma,
    largest_aligned,
)
from ._monotone_proof import _Pre, _value_le
from .error_parts import (
    _Plan,
    cdna3_glue,
)
from ...proof_kernel.parts import Part, PartsProof, negated_script, ranged_var, run_parts

__all__ = ["cdna3_monotone_lemmas", "prove_cdna3_monotone", "supports_cdna3_monotone"]

#: w's the first stage's raised product gains beyond the other products' losses: with w >= 2**(D-1) (D >= 1) that
#: is 2 units at e', covering c's re-alignment (< 1 unit) and RD_F2 of T' (< 2**(F-F2) unit) at E' = e' > E
MARGIN = 4
#: GTR-FDPA: w's a group's raised product gains beyond the group's others: the group merge needs 1 + MARGIN w's
#: at e_max' (the other group's re-alignment and MARGIN), and w >= 2**(D-1)
GROUP_MARGIN = 2 * (1 + MARGIN)


def supports_cdna3_monotone(model: Model, K: int) -> bool:
    """Whether :func:`cdna3_monotone_lemmas` applies: one TR-/GTR-FDPA (K = L) whose products cannot overflow (§4.2)."""
    if model.kind not in ("tr-fdpa", "gtr-fdpa") or model.L is None or K != model.L or model.sum_rz or model.ftz_inputs:
        return False
    if model.F is None or model.F2 is None or model.F2 < model.F or (model.kind == "gtr-fdpa" and model.L % 2):
        return False
    return product_top(_Plan(model, K).tp) < 128  # no product reaches 2**128


class _Stage2:
    """The second stage's constants: F, F2, g = F2 - F, the zero floor, T's and S's ranges."""

    def __init__(self, sh: _Shape, T_hi: int, S_hi: int) -> None:
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


def _sum_gain_lemma(st: _Stage2) -> Part:
    """From T + 4 w <= 2**D T' (first stage), at E = max(e, e_c) <= E' = max(e', e_c):
    2**D2 RD_F2(T' at E') >= RD_F2(T at E) + 2**g w2 (D2 = min(E' - E, Dc), w2 = 2**D2 - 1)."""
    sh = st.sh
    alg = QueryAlgebra()
    T, T2 = ranged_var(alg, "T", 0, st.T_hi), ranged_var(alg, "T2", 0, st.T_hi)
    e, e2 = _exponents(alg, sh)
    D, w = _shift(alg, sh, e, e2)
    alg.assert_(alg.le(alg.add(T, alg.mul(MARGIN, w)), alg.shl(T2, D)))
    ec = st.exponent(alg, "ec")  # c's exponent (or the zero floor): c is not the raised input
    E, E2 = alg.max(e, ec), alg.max(e2, ec)
    D2, w2 = _shift(alg, sh, E, E2)
    A, A2 = sum_at(alg, T, e, E, st.F, st.F2), sum_at(alg, T2, e2, E2, st.F, st.F2)
    s = alg.sub(alg.shl(A2, D2), alg.add(A, alg.shl(w2, st.g)))
    goal = alg.all([alg.le(E, E2), alg.le(0, A), alg.le(A, st.T_hi << st.g), alg.le(0, s)])
    return Part(f"second stage, the products' sum (raising a or b): T + {MARGIN} w <= 2^D T' gives, at E = max(e, e_c) "
                  f"<= E' = max(e', e_c), 2^D2 RD_F2(T' at E') >= RD_F2(T at E) + 2^{st.g} (2^D2 - 1)", negated_script(alg, goal))


def _c_realign_lemma(st: _Stage2) -> Part:
    """c re-aligned from E to E' >= E (RD_F): s = 2**D2 c_at(E') + w2 - c_at(E) is in [0, w2]."""
    sh = st.sh
    alg = QueryAlgebra()
    p = sh.plan
    c = input_term(decode_input(alg, p.fc, _pattern(alg, "c", p.fc)[0], p.fd.name))
    E, E2 = st.exponent(alg, "E"), st.exponent(alg, "E2")
    alg.assert_(alg.le(E, E2))
    alg.assert_(alg.le(c_exponent(alg, c, st.floor), E))
    D2, w2 = _shift(alg, sh, E, E2)
    A, A2 = (c_at(alg, c, x, st.F, st.floor, drop_far_c=st.gtr) for x in (E, E2))
    s = alg.sub(alg.add(alg.shl(A2, D2), w2), A)
    goal = alg.all([alg.le(0, A), alg.le(A, st.C_hi), alg.le(0, A2), alg.le(0, s), alg.le(s, w2)])
    return Part("second stage, c re-aligned from E to E' >= E (RD_F): c_at(E) <= 2^D2 c_at(E') + (2^D2 - 1)",
                  negated_script(alg, goal))


def _stage2_distributivity_lemma(st: _Stage2, p_hi: int, q_hi: int) -> Part:
    sh = st.sh
    alg = QueryAlgebra()
    P, Q = ranged_var(alg, "P", 0, p_hi), ranged_var(alg, "Q", 0, q_hi)
    D = ranged_var(alg, "D", 0, sh.Dc)
    goal = alg.eq(alg.shl(alg.add(P, alg.shl(Q, st.g)), D), alg.add(alg.shl(P, D), alg.shl(alg.shl(Q, D), st.g)))
    return Part(f"second stage, distributivity: 2^D2 (P + 2^{st.g} Q) = 2^D2 P + 2^{st.g} (2^D2 Q), D2 <= {sh.Dc}",
                  negated_script(alg, goal))


def _stage2_composition_lemma(st: _Stage2, p_hi: int, q_hi: int) -> Part:
    """P + 2**g C <= B_T + 2**g B_c from B_T = P + 2**g w2 + s_T (s_T >= 0) and B_c = C - w2 + s_c (s_c >= 0).

    Hand-written at one width (as :func:`_monotone_parts._composition_lemmas`): the rewriter cancels the sums.
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


def _c_raise_lemma(st: _Stage2, case: str) -> Part:
    """Raising c (T, e unchanged): S 2**(E-F2) <= S' 2**(E'-F2), in one ``case`` of the move: "zero" (c was 0),
    "same, e sets E" / "same, c sets E" (same exponent field; e_c <= e or e < e_c), "cross" (exponent field up by one)."""
    sh = st.sh
    p = sh.plan
    alg = QueryAlgebra()
    T = ranged_var(alg, "T", 0, st.T_hi)
    e = ranged_var(alg, "e", sh.e_lo, sh.e_hi)
    v, u, v2, u2 = _move(alg, p.fc, "c")
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
    goal = alg.and_(alg.le(0, S), _value_le(alg, _Pre(S, alg.sub(E, st.F2), None), _Pre(S2, alg.sub(E2, st.F2), None)))
    what = {"zero": "c was 0", "same, e sets E": "same exponent field; e sets E",
            "same, c sets E": "same exponent field; c sets E", "cross": "exponent field up by one"}[case]
    step = "Alg. 11 step 4" if st.gtr else "Alg. 10 step 3"
    return Part(f"raising c ({what}), T and e unchanged: S 2^(E-F2) <= S' 2^(E'-F2) ({step})", negated_script(alg, goal))


def _group_realign_lemma(shm: _Shape, t_hi: int, span: int) -> Part:
    """GTR: the other group's sum, rounded down from e_h to e_max and to e_max' >= e_max (Alg. 11 lines 15-16):
    s = 2**Dm R' + wm - R is in [0, wm] (Dm = min(e_max' - e_max, Dc'), Dc' above the group sum's width)."""
    alg = QueryAlgebra()
    T = ranged_var(alg, "T", 0, t_hi)
    eh = ranged_var(alg, "eh", shm.e_lo, shm.e_hi)
    E, E2 = _exponents(alg, shm)
    alg.assert_(alg.le(eh, E))
    D, w = _shift(alg, shm, E, E2)
    R, R2 = (shift_cut(alg, T, alg.sub(eh, x), max_left=0, max_right=span) for x in (E, E2))
    s = alg.sub(alg.add(alg.shl(R2, D), w), R)
    goal = alg.all([alg.le(0, R), alg.le(R, t_hi), alg.le(0, R2), alg.le(0, s), alg.le(s, w)])
    return Part(f"group merge, the other group's sum re-aligned from e_max to e_max' >= e_max (RD_F): R <= 2^Dm R' + "
                  f"(2^Dm - 1), Dm = min(e_max'-e_max, {shm.Dc})", negated_script(alg, goal))


def _group_gain_lemma(sh1: _Shape, shm: _Shape, t_hi: int, span: int) -> Part:
    """GTR: from T_g + M1 w <= 2**D T_g' (the raised group), at e_max = max(e_g, e_h) <= e_max' = max(e_g', e_h):
    2**Dm R' >= R + (1 + MARGIN) wm, R = RD_F(T_g at e_max) (Alg. 11 lines 15-16)."""
    alg = QueryAlgebra()
    T, T2 = ranged_var(alg, "T", 0, t_hi), ranged_var(alg, "T2", 0, t_hi)
    e, e2 = _exponents(alg, sh1)
    D, w = _shift(alg, sh1, e, e2)
    alg.assert_(alg.le(alg.add(T, alg.mul(sh1.margin, w)), alg.shl(T2, D)))
    eh = ranged_var(alg, "eh", shm.e_lo, shm.e_hi)  # the other group's exponent
    E, E2 = alg.max(e, eh), alg.max(e2, eh)
    Dm, wm = _shift(alg, shm, E, E2)
    R = shift_cut(alg, T, alg.sub(e, E), max_left=0, max_right=span)
    R2 = shift_cut(alg, T2, alg.sub(e2, E2), max_left=0, max_right=span)
    s = alg.sub(alg.shl(R2, Dm), alg.add(R, alg.mul(shm.gain_k, wm)))
    goal = alg.all([alg.le(E, E2), alg.le(0, R), alg.le(R, t_hi), alg.le(0, s)])
    return Part(f"group merge, the raised group's sum: T_g + {sh1.margin} w <= 2^D T_g' gives, at e_max = max(e_g, e_h) "
                  f"<= e_max' = max(e_g', e_h), 2^Dm RD(T_g' at e_max') >= RD(T_g at e_max) + {shm.gain_k} (2^Dm - 1)",
                  negated_script(alg, goal))


def _first_stage(sh: _Shape, a_hi: int) -> list[Part]:
    """The T-FDPA lemmas (:mod:`_monotone_parts`) on the products of one sum, raising a lane's a or b."""
    lemmas = [_exponents_lemma(sh), _realign_lemma(sh, "ab")]
    for who in ("a", "b"):
        lemmas += [_exponent_step_lemma(sh, who), _gain_lemma(sh, who, "far"), _gain_lemma(sh, who, "cross"),
                   _product_step_lemma(sh, who)]
    return lemmas + [_aligned_step_lemma(sh), _distributivity_lemma(sh, (0, sh.n * a_hi)), *_composition_lemmas(sh, a_hi)]


def cdna3_monotone_lemmas(model: Model, K: int) -> list[Part]:
    """Every lemma of the TR-/GTR-FDPA proof, the glue first (see the module docstring)."""
    gtr = model.kind == "gtr-fdpa"
    n = K // 2 if gtr else K  # products per truncated sum (GTR: per even/odd group)
    # Alg. 10 step 2 / Alg. 11 step 2: zero products give e_max the floor below every summand
    sh1 = _Shape(model, K, n=n, with_c=False, margin=GROUP_MARGIN if gtr else MARGIN, zeros_at_floor=True)
    glue, gl = cdna3_glue(sh1.plan, finite_output=False)
    a_hi = largest_aligned(sh1)
    lemmas = [glue, *_first_stage(sh1, a_hi)]
    sh2, T_hi = sh1, n * a_hi
    if gtr:  # Alg. 11 step 3: the two group sums rounded down at e_max = max(e_even, e_odd)
        t_hi = n * a_hi
        # a group sum is below 2**Dc': past that shift the cap loses nothing
        shm = _Shape(model, K, n=2, with_c=False, margin=MARGIN, zeros_at_floor=True, Dc=t_hi.bit_length() + 1)
        lemmas += [_group_realign_lemma(shm, t_hi, gl.span), _group_gain_lemma(sh1, shm, t_hi, gl.span),
                   _distributivity_lemma(shm, (0, 2 * t_hi)), *_composition_lemmas(shm, t_hi)]
        sh2, T_hi = shm, 2 * t_hi
    st = _Stage2(sh2, T_hi, gl.S.hi)
    q_hi, p_hi = st.C_hi, T_hi << st.g
    lemmas += [_sum_gain_lemma(st), _c_realign_lemma(st), _stage2_distributivity_lemma(st, p_hi, q_hi),
               _stage2_composition_lemma(st, p_hi, q_hi), _value_lemma(sh2, (0, st.S_hi), st.F2, " (second stage)")]
    lemmas += [_c_raise_lemma(st, case) for case in ("zero", "same, e sets E", "same, c sets E", "cross")]
    lemmas.append(_rounding_lemma(sh2, (0, st.S_hi), st.F2))
    return lemmas


def prove_cdna3_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of a finite non-negative input lowers D (TR-FDPA): "holds" with every lemma's
    block (expecting unsat), or "unknown" naming the first lemma a solver did not prove; seconds per lemma."""
    return run_parts(cdna3_monotone_lemmas(model, K), run)
