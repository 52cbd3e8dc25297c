"""A compositional proof of Table 9's error bound (MMA-Sim, 000 §6.1) on every finite input of one FDPA.

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
* **round-down steps** (TR-/GTR-FDPA, Alg. 10/11): RD_F2 of T and RD_F of c at
  E, each below one of its own units and never above the exact value;
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
carry limit: see :func:`supports_parts`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

from ...encodings.algebra import Bool, Int
from ...encodings.fields import Unpacked, unpack
from ...encodings.fused_sum import aligned, max_exponent, signed, truncated_sum
from ...encodings.rounding import convert_fixed
from ...encodings.terms import Term, input_term, product
from ...formats import get_format
from ...models import Model
from ...simulate import decode_input, output_format, run_model
from .._twins import InputSet, QueryAlgebra, Runner, container_format
from ...proof_kernel.parts import Part, PartsProof, all_finite, between, negated_script, ranged_var, run_parts

__all__ = ["supports_parts", "supports_cdna3", "PartsProof", "prove_by_parts", "prove_cdna3"]


def supports_cdna3(model: Model, K: int) -> bool:
    """Whether :func:`prove_cdna3` covers the model: one CDNA3 TR-FDPA / GTR-FDPA (Alg. 10 / 11) with K = L."""
    return (model.kind in ("tr-fdpa", "gtr-fdpa") and model.L is not None and K == model.L and not model.sum_rz
            and model.F is not None and model.F2 is not None and model.F2 >= model.F and not model.ftz_inputs)


def supports_parts(model: Model, K: int) -> bool:
    """Whether :func:`prove_by_parts` covers the model: one T-FDPA (K <= L, C inside the sum, no carry limit).

    TR-FDPA / GTR-FDPA (two alignment exponents, round-down steps) and
    E-FDPA are not decomposed yet: they keep the monolithic query.
    """
    if model.scale_fmt is not None or model.c_after or model.via or model.ftz_inputs or model.carry_bits is not None:
        return False
    if model.zero_emax or model.ieee_zero or model.L is None or K > model.L:
        return False
    return model.kind == "t-fdpa"


def _fixed(alg: QueryAlgebra, neg: Bool, sig: Int, exp: Int, frac: int, R: int) -> Int:
    """(-1)**neg * sig * 2**(exp - frac) in units of 2**R (exp - frac >= R)."""
    return signed(alg, neg, alg.shl(sig, alg.sub(exp, frac + R)))


class _Plan:
    """The model's shape: formats, exponent ranges, the common scale R, and the ranges of every cut point."""

    def __init__(self, model: Model, K: int) -> None:
        self.model, self.K = model, K
        self.fa, self.fb, self.fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
        fd = output_format(model)
        self.fd = get_format(fd.container or fd.name)  # the format C is widened to (run_model)
        if model.kind == "e-fdpa":
            self.rfmt, self.mode, self.ulps = fd, "rne", Fraction(1, 2)
        else:
            conv = model.conversion
            self.rfmt, self.mode = get_format(conv.fmt), conv.mode
            self.ulps = Fraction(1) if conv.mode in ("rz", "rd", "ru") else Fraction(1, 2)
        self.out = container_format(self.rfmt)
        # static ranges of the summands (built once on scratch variables)
        alg = QueryAlgebra()
        ua, ub = unpack(alg, self.fa, alg.var("a", self.fa.bits)), unpack(alg, self.fb, alg.var("b", self.fb.bits))
        uc = decode_input(alg, self.fc, alg.var("c", self.fc.bits), self.fd.name)
        self.tc = input_term(uc)
        self.use_summand(product(alg, ua, ub)[0])

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


def _glue_inputs(plan: _Plan) -> tuple[QueryAlgebra, InputSet, list[Unpacked], list[Unpacked], Unpacked, Int]:
    """(algebra, inputs, decoded a's, decoded b's, decoded c, the model's output term) of the glue lemma's query."""
    g = QueryAlgebra()
    x = InputSet.of(g, plan.model, plan.K)
    ua = [unpack(g, plan.fa, v) for v in x.a]
    ub = [unpack(g, plan.fb, v) for v in x.b]
    uc = decode_input(g, plan.fc, x.c, plan.fd.name)
    return g, x, ua, ub, uc, run_model(g, plan.model, x.a, x.b, x.c)


def _summand_lemma(plan: _Plan, which: str, *, floor: bool = False) -> tuple[Part, dict[str, tuple[int, int]]]:
    """One summand aligned at any E >= its exponent, in units u = 2**(E-F) (the summand's own variables and E).

    Proves: Q (its exact value floored to units u) is the floor, in the
    summand's own scale (Q * 2**d <= s < (Q + 1) * 2**d, d = E - F - lsb, d
    clamped where Q is 0 or -1; exact when d <= 0, sticky when not), and the
    aligned summand A (RZ_F, or RD_F when ``floor``) is Q or, only when the
    value is inexact and negative (RZ), Q + 1.
    """
    model = plan.model
    F = model.F
    assert F is not None
    alg = QueryAlgebra()
    if which == "c":
        uc = decode_input(alg, plan.fc, alg.var("c", plan.fc.bits), plan.fd.name)
        t, hyp = input_term(uc), all_finite(alg, uc)
    else:
        ua, ub = unpack(alg, plan.fa, alg.var("a", plan.fa.bits)), unpack(alg, plan.fb, alg.var("b", plan.fb.bits))
        t, hyp = product(alg, ua, ub)[0], all_finite(alg, ua, ub)
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
    what = "c" if which == "c" else f"a*b ({plan.fa.name} x {plan.fb.name})"
    side = "RD_F: A = Q" if floor else "RZ_F: A = Q + (1 if negative and inexact)"
    label = f"summand {what} at any E >= its exponent, F={F}: Q = floor(x / 2^(E-F)) exactly; {side}"
    return Part(label, negated_script(alg, goal)), {"A": (A.lo, A.hi), "Q": (Q.lo, Q.hi)}


def _conversion_lemma(plan: _Plan, S_range: tuple[int, int], e_range: tuple[int, int], F: int) -> tuple[Part, dict[str, tuple[int, int]]]:
    """rho(S * u), u = 2**(E-F), when finite: its value D in units u is within ulps * W of S, W = ulp / u
    (W = 0 where the output's last place is below u: then the output is S * u exactly)."""
    alg = QueryAlgebra()
    S = ranged_var(alg, "S", *S_range)
    E = ranged_var(alg, "E", *e_range)
    d = convert_fixed(alg, plan.rfmt, plan.mode, S, alg.sub(E, F))
    ud = unpack(alg, plan.out, d)
    alg.assert_(all_finite(alg, ud))
    m, emin = plan.rfmt.man_bits, plan.rfmt.emin
    # k: the output pattern's last place (its container's: FP32 bits for E8M13) relative to u; w: ulp(d) relative to u
    k = alg.sub(alg.sub(ud.exp, ud.frac), alg.sub(E, F))
    w = alg.sub(alg.sub(alg.max(ud.exp, emin), m), alg.sub(E, F))
    sbits = max(S.hi, -S.lo).bit_length()
    # a finite output is below 2 |S| u; its last place is at most the larger of that and the subnormals' (underflow)
    top_k = max(0, sbits - ud.frac + 1, emin - ud.frac - (e_range[0] - F))
    top_w = max(0, ud.exp.hi - m - (e_range[0] - F), emin - m - (e_range[0] - F))  # an underflow to 0 has ulp >> u
    sd = signed(alg, ud.neg, ud.sig)
    # D: d in units u, exact whenever ulp(d) >= u (then d is a multiple of u: checked below)
    D_full = alg.shift(sd, k, max_left=top_k, max_right=ud.frac + 2)
    lim = 1 << (sbits + 1)
    D = alg.clamp(D_full, -lim, lim)  # keeps the composition narrow; near checks nothing was clamped
    W = alg.ite(alg.lt(w, 0), 0, alg.shl(1, alg.clamp(w, 0, top_w)))
    u = plan.ulps
    err = alg.abs(alg.sub(D, S))
    whole = alg.or_(alg.le(0, k), alg.eq(alg.shift(D, alg.neg(k), max_left=ud.frac + 2, max_right=0), sd))
    near = alg.all([alg.or_(alg.eq(sd, 0), alg.le(k, top_k)), alg.le(w, top_w), alg.eq(D, D_full), alg.le(0, w), whole,
                    alg.le(alg.mul(err, u.denominator), alg.mul(W, u.numerator))])
    exact = alg.all([alg.lt(w, 0), alg.lt(k, 0), alg.eq(alg.shl(S, alg.clamp(alg.neg(k), 0, ud.frac + 2)), sd),
                     alg.eq(D, S)])
    goal = alg.or_(near, exact)
    label = f"rounding to {plan.rfmt.name} ({plan.mode}) of S*2^(E-{F}), when finite: within {u} ulp, exact where ulp < 2^(E-{F})"
    rng = {"D": (min(D.lo, S.lo), max(D.hi, S.hi)), "W": (0, W.hi)}
    return Part(label, negated_script(alg, goal)), rng


def _accumulate_lemma(n: int, a_rng: tuple[int, int], q_rng: tuple[int, int], s_rng: tuple[int, int],
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


def _final_lemma(plan: _Plan, n: int, s_rng: tuple[int, int], n_rng: tuple[int, int], rv: dict[str, tuple[int, int]],
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


def truncated_rounding(alg: QueryAlgebra, plan: _Plan, terms: list[Term]) -> tuple[Int, Int, Int]:
    """(e_max, S, D) of summands ``terms`` as one FDPA sums and rounds them (Alg. 7-9): e_max the largest non-zero
    summand's exponent (or the model's floor), S their sum aligned at e_max (RZ_F, units 2**(e_max - F)), D = rho(S)."""
    F = plan.model.F
    assert F is not None
    total, e_max = truncated_sum(alg, terms, F, emax_floor=plan.model.emax_floor)
    return e_max, total, convert_fixed(alg, plan.rfmt, plan.mode, total, alg.sub(e_max, F))


def tfdpa_glue(plan: _Plan) -> tuple[Part, tuple[int, int]]:
    """The glue lemma of a one-FDPA T-FDPA and the static range of its sum S (units 2**(e_max - F)).

    Proves, in the model's own formula: on finite inputs the output is
    rho(S * 2**(e_max - F)), S the sum of the summands aligned at e_max
    (RZ_F), e_max = the largest non-zero summand's exponent (Alg. 7 lines 5-11).
    """
    g, x, ua, ub, uc, d = _glue_inputs(plan)
    terms = [product(g, u, v)[0] for u, v in zip(ua, ub)] + [input_term(uc)]
    e_max, total, composed = truncated_rounding(g, plan, terms)
    g.assert_(all_finite(g, *ua, *ub, uc))
    glue = g.all([between(g, e_max, plan.e_lo, plan.e_hi), g.eq(d, composed), between(g, total, total.lo, total.hi),
                  *(g.or_(g.eq(t.sig, 0), g.le(t.exp, e_max)) for t in terms)])
    lemma = Part(f"glue: on finite inputs the model's output is rho(S * 2^(e_max-F)), S the sum of the {len(terms)} "
                   "summands aligned at e_max (RZ_F), e_max >= every non-zero summand's exponent", negated_script(g, glue))
    return lemma, (total.lo, total.hi)


def _tfdpa_parts(plan: _Plan, scale: Fraction, fused: Fraction, ulps: Optional[Fraction]) -> tuple[list[Part], Callable[[], Part]]:
    model, K = plan.model, plan.K
    F = model.F
    assert F is not None
    prod, rp = _summand_lemma(plan, "ab")
    cl, rc = _summand_lemma(plan, "c")
    n = K + 1
    glue_l, total = tfdpa_glue(plan)
    conv, rv = _conversion_lemma(plan, total, (plan.e_lo, plan.e_hi), F)

    lo_q = rp["Q"][0] * K + rc["Q"][0]
    hi_q = rp["Q"][1] * K + rc["Q"][1]
    lo_a = rp["A"][0] * K + rc["A"][0]
    hi_a = rp["A"][1] * K + rc["A"][1]
    acc = _accumulate_lemma(n, (min(rp["A"][0], rc["A"][0]), max(rp["A"][1], rc["A"][1])),
                            (min(rp["Q"][0], rc["Q"][0]), max(rp["Q"][1], rc["Q"][1])), (lo_a, hi_a), (lo_q, hi_q))

    def composition() -> Part:
        return _final_lemma(plan, n, (lo_a, hi_a), (lo_q, hi_q), rv, scale, fused, ulps)

    return [prod, cl, conv, glue_l, acc], composition


def prove_by_parts(model: Model, K: int, run: Runner, *, scale: Fraction = Fraction(1),
                   fused: Optional[Fraction] = None, ulps: Optional[Fraction] = None) -> PartsProof:
    """Prove ``|Phi - exact| <= scale * (fused * 2**(e_max - F) + ulps * ulp(Phi))`` on every finite input with a
    finite output, step by step; every step's script (expecting unsat) is in ``blocks``, seconds per step in ``seconds``.

    ``fused`` defaults to K + 1 (Table 9's L + 1), ``ulps`` to the conversion's (1 RZ, 1/2 RNE).
    """
    if not supports_parts(model, K):
        raise ValueError(f"no compositional error-bound proof for {model.describe()} with K={K}")
    plan = _Plan(model, K)
    if fused is None:
        fused = Fraction(K + 1)
    lemmas, composition = _tfdpa_parts(plan, scale, fused, ulps)
    return run_parts([*lemmas, composition()], run)


# -- CDNA3: TR-FDPA (Alg. 10) and GTR-FDPA (Alg. 11) ---------------------------------------------------


def _rd_lemma(plan: _Plan, T_rng: tuple[int, int], kmax: int, k_lo: int, max_right: int, label: str) -> Part:
    """RD by a shift k <= kmax (Alg. 10 line 14, Alg. 11 lines 15-16 and 22): R = shift_cut(T, k) is floor(T * 2**k).

    Proves: k >= 0 and R = T * 2**k (exact), or k < 0 and R * 2**-k <= T < (R + 1) * 2**-k
    (clamped where the shift passes T's width: then R is 0 or -1 by T's sign).
    """
    from ...encodings.trfdpa import shift_cut

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


def _far_c_lemma(plan: _Plan) -> Part:
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


def _cdna3_products_lemma(L: int) -> Part:
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


def _cdna3_composition(plan: _Plan, rv: dict[str, tuple[int, int]], lo_f: Fraction, hi_f: Fraction, ulps: Fraction,
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


@dataclass
class Cdna3Glue:
    """What the CDNA3 glue lemma leaves: products per group (n), group sums' range (t_rng), the group RD's shift span
    (GTR-FDPA; 0 for TR), and T and S (terms of the glue's algebra: their static ranges)."""

    n: int
    t_rng: tuple[int, int]
    span: int
    T: Int
    S: Int


def cdna3_glue(plan: _Plan, *, finite_output: bool = True) -> tuple[Part, Cdna3Glue]:
    """The glue lemma of one TR-FDPA / GTR-FDPA (Alg. 10 / 11), in the model's own formula.

    Proves, on finite inputs (with ``finite_output``: and a finite output),
    the output is rho(S * 2**(E - F2)), S = RD_F2(T at E) + RD_F(c at E), T
    the RZ_F-aligned products' sum (GTR: of the two groups, each rounded
    down at e_max), every exponent bounding its summands and every term in
    its static range.
    """
    from ...encodings.trfdpa import overflowing_products, round_down_with_c, shift_cut

    model, K = plan.model, plan.K
    F, F2 = model.F, model.F2
    assert F is not None and F2 is not None
    gtr = model.kind == "gtr-fdpa"
    # the glue: the model's output is rho(S * 2^(E-F2)) with S from its own steps; the exponents bound their summands
    g, x, ua, ub, uc, d = _glue_inputs(plan)
    ud = unpack(g, plan.out, d)
    terms, _ = overflowing_products(g, ua, ub)
    ct = input_term(uc)
    floor = min(min(t.exp.lo for t in terms), ct.exp.lo) - 1
    facts: list[Bool] = []
    if gtr:
        groups = (terms[0::2], terms[1::2])
        e_grp = [max_exponent(g, grp, floor) for grp in groups]
        T_grp = [g.sum_all(aligned(g, t, e, F) for t in grp) for grp, e in zip(groups, e_grp)]
        e_max = g.max(*e_grp)
        span = max(T.hi.bit_length() + T.lo.bit_length() for T in T_grp) + 1
        T = g.sum_all(shift_cut(g, Tg, g.sub(e, e_max), max_left=0, max_right=span) for Tg, e in zip(T_grp, e_grp))
        for grp, e, Tg in zip(groups, e_grp, T_grp):
            facts += [g.or_(g.eq(t.sig, 0), g.le(t.exp, e)) for t in grp]
            facts += [g.le(e, e_max), between(g, e, plan.e_lo, plan.e_hi), between(g, Tg, Tg.lo, Tg.hi)]
        n = len(groups[0])
        t_rng = (min(Tg.lo for Tg in T_grp), max(Tg.hi for Tg in T_grp))
    else:
        e_max = max_exponent(g, terms, floor)
        T = g.sum_all(aligned(g, t, e_max, F) for t in terms)
        facts += [g.or_(g.eq(t.sig, 0), g.le(t.exp, e_max)) for t in terms]
        n, span = K, 0
        t_rng = (T.lo, T.hi)
    S, E = round_down_with_c(g, T, e_max, ct, F, F2, floor, drop_far_c=gtr)
    composed = convert_fixed(g, plan.rfmt, plan.mode, S, g.sub(E, F2))
    g.assert_(all_finite(g, *ua, *ub, uc, *([ud] if finite_output else [])))
    if not finite_output:  # the monotonicity proof's stage-1 exponents range over the products' only
        facts.append(g.le(e_max, max(plan.tp.exp.hi, plan.e_lo)))
    facts += [g.eq(d, composed), between(g, e_max, plan.e_lo, plan.e_hi), between(g, E, plan.e_lo, plan.e_hi), g.le(e_max, E),
              g.or_(g.eq(ct.sig, 0), g.le(ct.exp, E)), between(g, T, T.lo, T.hi), between(g, S, S.lo, S.hi)]
    alg_name = "Alg. 11" if gtr else "Alg. 10"
    glue = Part(f"glue ({alg_name}): on finite inputs{' with a finite output' if finite_output else ''}, the model's output is rho(S * 2^(E-F2)), "
                  f"S = RD_F2(T at E) + RD_F(c at E){' (far c dropped)' if gtr else ''}, T the RZ_F-aligned products' sum"
                  f"{' of the two groups, each rounded down at e_max' if gtr else ''}; every exponent bounds its summands",
                  negated_script(g, g.all(facts)))
    return glue, Cdna3Glue(n, t_rng, span, T, S)


def _cdna3_parts(plan: _Plan, lo_f: Fraction, hi_f: Fraction, ulps: Fraction) -> list[Part]:
    """The lemmas of a TR-FDPA / GTR-FDPA proof (Alg. 10 / 11), the glue and the composition last."""
    model = plan.model
    F, F2, L = model.F, model.F2, model.L
    assert F is not None and F2 is not None and L is not None
    gtr = model.kind == "gtr-fdpa"
    prod, rp = _summand_lemma(plan, "ab")
    glue, gl = cdna3_glue(plan)
    n, t_rng, span, T, S = gl.n, gl.t_rng, gl.span, gl.T, gl.S
    alg_name = "Alg. 11" if gtr else "Alg. 10"
    acc = _accumulate_lemma(n, rp["A"], rp["Q"], (rp["A"][0] * n, rp["A"][1] * n), (rp["Q"][0] * n, rp["Q"][1] * n))
    lemmas = [prod, acc]
    kr = max(0, T.hi.bit_length() + T.lo.bit_length() + 1)
    if gtr:
        lemmas.append(_rd_lemma(plan, t_rng, 0, -(plan.e_hi - plan.e_lo), span,
                                "RD_F of a group sum at e_max >= e_g (Alg. 11 lines 15-16): floor(T_g * 2^(e_g-e_max))"))
        lemmas.append(_cdna3_products_lemma(L))
        lemmas.append(_far_c_lemma(plan))
    else:
        c_lem, _ = _summand_lemma(plan, "c", floor=True)
        lemmas.append(c_lem)
    lemmas.append(_rd_lemma(plan, (T.lo, T.hi), F2 - F, -(plan.e_hi - plan.e_lo) + F2 - F, kr,
                            f"RD_F2 of T at E >= e_max ({alg_name} line {22 if gtr else 14}): floor(T * 2^(e_max-E+F2-F)), "
                            "exact when E = e_max"))
    conv, rv = _conversion_lemma(plan, (S.lo, S.hi), (plan.e_lo, plan.e_hi), F2)
    lemmas += [conv, glue, _cdna3_composition(plan, rv, lo_f, hi_f, ulps, gtr)]
    return lemmas


def prove_cdna3(model: Model, K: int, run: Runner, *, lo_fused: Fraction, hi_fused: Fraction,
                ulps: Optional[Fraction] = None) -> PartsProof:
    """Prove ``-(lo_fused 2**(E-F) + ulps ulp) <= exact - Phi <= hi_fused 2**(E-F) + ulps ulp`` for TR-/GTR-FDPA
    (K = L, E = max(e_max, e_c)) on every finite input with a finite output, step by step (blocks expect unsat)."""
    plan = _Plan(model, K)
    return run_parts(_cdna3_parts(plan, lo_fused, hi_fused, plan.ulps if ulps is None else ulps), run)
