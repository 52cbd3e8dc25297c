"""Facts about the FMA (Alg. 3, encodings/fma.py) and chains of FMAs (Alg. 4): monotonicity in each argument, symmetry,
one FMA's error bound (:func:`error_facts`, at the end of this module).

:func:`negated_chain_facts`: on (-A, B, -C) every FMA of the chain is the
original negated, through its window adder (facts in the symmetry query's
own formula, see the end of this module).

:func:`prove_monotone`: raising one input never lowers a chain's D.  First the
lemmas, on fresh variables.

One fma is one RNE of the exact a*b + c (:func:`encodings.fma.fma`:
:func:`fused_sum.exact_sum2`'s window adder, then :func:`rounding.round_pack`).
Stated on the model's FMA, "raising c never lowers fma(a, b, c)" gives
bitwuzla no answer in 60 s (issue 8: FP64's 162-bit window with its 106-bit
product).  The lemmas here split the FMA at the window adder's own pieces
(:func:`fused_sum.window_lead`: a term as (lead, top), top * 2**(lead -
window) with top's leading bit at the window's top, or (low, 0) for a zero)
and state each piece on fresh variables; the compositions below compose
them.  With "lex" the value order of (lead, top) and "rep" the order of
(mag, sticky) at one last place (mag < mag', or equal and no sticky lost):

* **window** (:func:`window_lemmas`, fresh leads X and Y <=lex Y'):
  - *structure*: window_sum's mag is kept x + kept y (0 or normalized, 0
    only for two zeros), its sticky a cut, its lsb lmax - window, a
    negative sum only -0;
  - *place*: at one lmax, Y keeps no more bits than Y' and loses no cut
    Y' keeps; *adder*: so kept x + kept y is rep-ordered;
  - *lmax up by one* (five cases of lead(Y) - lead(X), which together cover
    every pair): (mag, sticky) is rep-ordered with (2 mag' + sticky',
    sticky') at the first sum's lsb; *up by two or more*: RNE is ordered;
* **rounding** (:func:`rounding_lemmas`, fresh): rep order at one lsb gives
  no smaller RNE; a sum negative only as -0 rounds to no NaN and nothing
  below zero; (mag, lsb + 1, sticky) rounds as (2 mag + sticky, lsb, sticky);
* **terms** (:func:`term_lemmas`): c <= c' gives lex-ordered leads; the
  product's lead, with the significand product s * t a fresh variable
  (:class:`OpaqueMul`) and what is known of it asserted as instances of the
  **ring** lemmas (:func:`ring_lemmas`: (s + 1) t = s t + t, a power of
  two, zero, commutativity; stated on bit-vectors wide enough that nothing
  wraps, where a solver's rewriter proves them at once: the same step on the
  algebra's clamped terms gives bitwuzla and z3 no answer in 60 s), is well
  formed, and a's next value (a zero raised, the same exponent with s + 1,
  or the exponent up from s = 2**p - 1) gives a lex-larger one.

Then the proof of a chain of standard FMAs (Alg. 4, every step Alg. 3): those lemmas composed, first into
one FMA, then along the chain.

D = fma(a_{K-1}, b_{K-1}, ... fma(a_0, b_0, c)).  Raising one input raises one
operand of one FMA, and the later FMAs read its result as their c; so the
chain is monotone if one FMA is.  The lemmas (each a check-sat expecting unsat):

* **glue**: the model's D is the chain of :func:`encodings.fma.fma`; **split**:
  one fma of finite non-negative a, b and non-negative c (+inf and -0
  included) is +inf for c = +inf, else RNE of :func:`fused_sum.window_sum` of
  the product's and c's leads (:func:`fused_sum.window_lead`); **commutes**:
  fma(a, b, c) = fma(b, a, c);
* the window, rounding and term lemmas above;
* **FMA in c** and **FMA in a** (compositions): the split fma over fresh
  variables, one per piece applied (a lead, a placement, a window sum, an
  RNE), named by its operands, with every lemma's instance asserted: raising
  c (to any larger value, +inf included) or a (to its next value) never
  lowers the result, and results are not NaN and not below zero;
* **chain** (one composition per input position): the chain over fresh
  variables, one per FMA applied, with the FMA lemmas' instances at each
  FMA the raised input reaches (b through commutativity).

As in :mod:`~smtmma.op_proofs.addmul`, applying a lemma stated on fresh operands to the
pieces named in a composition is the one step no solver checks in the proof;
:meth:`~smtmma.proof_kernel.pieces.Pieces.definitions` (each fresh variable defined as its piece) lets a
test check every asserted fact at pinned inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple, Optional, Sequence

from ..encodings.algebra import Bool, Int, IntLike
from ..encodings.fields import Unpacked, unpack
from ..encodings.fma import fma
from ..encodings.fused_sum import exact_sum2, signed, sum2_window, window_lead, window_place, window_sum
from ..encodings.rounding import round_pack
from ..encodings.terms import Term, input_term, product
from ..formats import Format, get_format
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import Lemma, lemma
from ..proof_kernel.parts import Part, PartsProof, all_finite, implies, negated_script, ranged_var, run_parts
from ..proof_kernel.pieces import Composed, Pieces, piece_key
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner, output_container, value_key
from ..simulate import decode_input, run_model
from .moves import finite_nonneg, next_value, nonneg
from .fused_sum import negated_rounded_sum2
from .rounding import negated_output_fact

__all__ = ["FmaShape", "OpaqueMul", "WindowSum", "apply_step_facts", "chain_position", "error_facts", "fma_in_a", "fma_in_c", "glue_lemma",
           "in_place", "negated_chain_facts", "prove_monotone", "rounding_cases", "sticky_is_large", "sum_place", "supports_error_facts",
           "supports_symmetry",
           "rep_le", "ring_lemmas", "rounding_lemmas", "split_lemmas", "step_facts", "structure", "supports_monotone",
           "term_lemmas", "up_by_one", "window_lemmas", "window_sum_of"]


# -- the window: leads and sums on fresh variables ------------------------------------------------------


@dataclass
class FmaShape:
    """An FMA model's window: its format, width (bits), the lead standing for a zero, the leads (exponents) of non-zero
    products and c."""

    fmt: Format
    window: int
    low: int
    prod_lead: tuple[int, int]  # non-zero products
    c_lead: tuple[int, int]  # non-zero c
    nan: str = "ieee"  # the model's NaN style (encodings.fma.fma): "propagate" keeps an operand's payload

    @property
    def sig_bits(self) -> int:
        """Bits of a significand, the hidden bit included (53 for FP64)."""
        return self.fmt.man_bits + 1

    @classmethod
    def of(cls, model: Model) -> "FmaShape":
        """The shape of ``model`` (kind fma, one format for A, B, C and D)."""
        if model.kind != "fma" or not model.a_fmt == model.b_fmt == model.c_fmt == model.d_fmt:
            raise ValueError(f"not an FMA chain of one format: {model.describe()}")
        fmt = get_format(model.c_fmt)
        alg = QueryAlgebra()
        u = unpack(alg, fmt, alg.var("x", fmt.bits))
        p, _ = product(alg, u, u)
        c = input_term(u)
        window, low = sum2_window(p, c)
        lp = alg.add(alg.sub(p.exp, p.frac), 1)
        lc = alg.add(alg.sub(c.exp, c.frac), 1)
        return cls(fmt, window, low, (lp.lo, lp.hi + p.sig.hi.bit_length() - 1), (lc.lo, lc.hi + c.sig.hi.bit_length() - 1),
                   "propagate" if model.nan == "propagate" else "ieee")


@dataclass
class _Lead:
    neg: Bool
    lead: Int
    top: Int

    def triple(self) -> tuple[Bool, Int, Int]:
        return self.neg, self.lead, self.top


def _well_formed(alg: QueryAlgebra, sh: FmaShape, x: _Lead, rng: tuple[int, int]) -> Bool:
    """x is a non-negative term's lead: (low, 0), or a lead in ``rng`` and top normalized; negative only as -0."""
    zero = alg.and_(alg.eq(x.top, 0), alg.eq(x.lead, sh.low))
    top = alg.and_(alg.le(1 << (sh.window - 1), x.top), alg.le(x.top, (1 << sh.window) - 1))
    live = alg.all([top, alg.le(rng[0], x.lead), alg.le(x.lead, rng[1]), alg.not_(x.neg)])
    return alg.or_(zero, live)


def _fresh_lead(alg: QueryAlgebra, sh: FmaShape, name: str, rng: tuple[int, int]) -> _Lead:
    x = _Lead(alg.eq(alg.var(f"{name}_neg", 1), 1), ranged_var(alg, f"{name}_lead", sh.low, rng[1]),
              ranged_var(alg, f"{name}_top", 0, (1 << sh.window) - 1))
    alg.assert_(_well_formed(alg, sh, x, rng))
    return x


def _lex(alg: QueryAlgebra, x: _Lead, y: _Lead) -> Bool:
    """x <= y in value (both well formed)."""
    return alg.or_(alg.lt(x.lead, y.lead), alg.and_(alg.eq(x.lead, y.lead), alg.le(x.top, y.top)))


def rep_le(alg: QueryAlgebra, m1: Int, s1: Bool, m2: Int, s2: Bool) -> Bool:
    """(m1 + t1) <= (m2 + t2) as far as rounding can tell: m1 < m2, or m1 = m2 and no sticky lost."""
    return alg.or_(alg.lt(m1, m2), alg.and_(alg.eq(m1, m2), alg.or_(s2, alg.not_(s1))))


def _kept_order(alg: QueryAlgebra, k1: Int, c1: Bool, k2: Int, c2: Bool) -> Bool:
    """Kept bits k1 <= k2, and no cut lost when they are equal (the place lemma's conclusion, the adder's premise)."""
    return alg.and_(alg.le(k1, k2), alg.or_(alg.not_(alg.and_(alg.eq(k1, k2), c1)), c2))


def _normal_mag(alg: QueryAlgebra, sh: FmaShape, m: Int, top: int) -> Bool:
    """m is 0 or has its leading bit at window - 1 or above (below 2**top)."""
    return alg.or_(alg.eq(m, 0), alg.and_(alg.le(1 << (sh.window - 1), m), alg.lt(m, 1 << top)))


def _zero_if_neg(alg: QueryAlgebra, n: Bool, m: Int, s: Bool) -> Bool:
    """A negative sum is -0: n implies mag 0 and no sticky."""
    return alg.or_(alg.not_(n), alg.and_(alg.eq(m, 0), alg.not_(s)))


def _rne(alg: QueryAlgebra, sh: FmaShape, n: Bool, m: Int, l: Int, s: Bool) -> Int:
    return round_pack(alg, sh.fmt, "rne", n, m, l, s)


def _vle(alg: QueryAlgebra, sh: FmaShape, r1: Int, r2: Int) -> Bool:
    return alg.le(value_key(alg, sh.fmt, r1), value_key(alg, sh.fmt, r2))


def _union(sh: FmaShape) -> tuple[int, int]:
    """The smallest and largest lead (exponent) of a non-zero product or c."""
    return min(sh.prod_lead[0], sh.c_lead[0]), max(sh.prod_lead[1], sh.c_lead[1])


def _places(alg: QueryAlgebra, sh: FmaShape, x: _Lead, y: _Lead) -> tuple[Int, tuple[Int, Bool], tuple[Int, Bool]]:
    """(lmax, (kept, cut) of x, (kept, cut) of y): :func:`window_sum`'s own placement of two terms."""
    lmax = alg.max(x.lead, y.lead)
    kx, _, cx = window_place(alg, sh.window, lmax, x.neg, x.lead, x.top)
    ky, _, cy = window_place(alg, sh.window, lmax, y.neg, y.lead, y.top)
    return lmax, (kx, cx), (ky, cy)


def _structure_lemma(sh: FmaShape) -> Part:
    """window_sum of two well-formed non-negative terms: mag = kept x + kept y, sticky = either cut, lsb = lmax - window."""
    alg = QueryAlgebra()
    x, y = _fresh_lead(alg, sh, "x", _union(sh)), _fresh_lead(alg, sh, "y", _union(sh))
    total = window_sum(alg, sh.window, x.triple(), y.triple())
    lmax, kx, ky = _places(alg, sh, x, y)
    goal = structure(alg, sh, total, lmax, kx, ky)
    return Part("window sum of non-negative terms: mag = kept x + kept y (0 or normalized, 0 only for two zeros), "
                  "sticky = a cut, lsb = lmax - window, negative only as -0", negated_script(alg, goal))


def structure(alg: QueryAlgebra, sh: FmaShape, total: tuple[Bool, Int, Int, Bool], lmax: Int, kx: tuple[Int, Bool],
              ky: tuple[Int, Bool]) -> Bool:
    """The structure lemma's conclusion for the window sum ``total`` (neg, mag, lsb, sticky) of two terms placed at lmax
    as (kept, cut) ``kx`` and ``ky``: mag = kept x + kept y (0, or normalized and 0 only when lmax is the zero's
    lead, low), sticky = a cut, lsb = lmax - window, negative only as -0."""
    (n, m, l, s), (kx_, cx), (ky_, cy) = total, kx, ky
    return alg.all([alg.eq(m, alg.add(kx_, ky_)), alg.eq(alg.b2i(s), alg.b2i(alg.or_(cx, cy))), alg.eq(l, alg.sub(lmax, sh.window)),
                    _zero_if_neg(alg, n, m, s), _normal_mag(alg, sh, m, sh.window + 1),
                    alg.or_(alg.eq(lmax, sh.low), alg.le(1 << (sh.window - 1), m))])


def up_by_one(alg: QueryAlgebra, m1: Int, s1: Bool, m2: Int, s2: Bool) -> Bool:
    """The lmax-up-by-one lemma's conclusion: (m1, s1) is rep-ordered with (2 m2 + s2, s2), the second sum at the
    first's lsb."""
    return rep_le(alg, m1, s1, alg.add(alg.shl(m2, 1), alg.b2i(s2)), s2)


class _Raise:
    """Fresh X and Y <=lex Y' (every lead in the union of the product's and c's ranges): the placements of both runs."""

    def __init__(self, sh: FmaShape) -> None:
        self.alg = alg = QueryAlgebra()
        self.sh = sh
        self.x = _fresh_lead(alg, sh, "x", _union(sh))
        self.y = _fresh_lead(alg, sh, "y", _union(sh))
        self.y2 = _fresh_lead(alg, sh, "z", _union(sh))
        self.order = _lex(alg, self.y, self.y2)
        self.lmax1, (self.kx1, self.cx1), (self.ky1, self.cy1) = _places(alg, sh, self.x, self.y)
        self.lmax2, (self.kx2, self.cx2), (self.ky2, self.cy2) = _places(alg, sh, self.x, self.y2)

    def sums(self) -> tuple[Int, Bool, Int, Bool]:
        alg = self.alg
        return (alg.add(self.kx1, self.ky1), alg.or_(self.cx1, self.cy1), alg.add(self.kx2, self.ky2), alg.or_(self.cx2, self.cy2))

    def lemma(self, label: str, premise: list[Bool], goal: Bool) -> Part:
        alg = self.alg
        return Part(label, negated_script(alg, implies(alg, [self.order] + premise, goal)))


def _place_lemma(sh: FmaShape) -> Part:
    alg = QueryAlgebra()
    lmax = ranged_var(alg, "lmax", sh.low, _union(sh)[1])
    y, y2 = _fresh_lead(alg, sh, "y", _union(sh)), _fresh_lead(alg, sh, "z", _union(sh))
    k1, _, c1 = window_place(alg, sh.window, lmax, y.neg, y.lead, y.top)
    k2, _, c2 = window_place(alg, sh.window, lmax, y2.neg, y2.lead, y2.top)
    premise = [_lex(alg, y, y2), alg.le(y.lead, lmax), alg.le(y2.lead, lmax)]
    return Part("window, place: at a shared lmax >= both leads, Y <=lex Y' keeps no more bits of Y than of Y', "
                  "and no cut of Y' is lost when they keep the same", negated_script(alg, implies(alg, premise, _kept_order(alg, k1, c1, k2, c2))))


def _adder_lemma(sh: FmaShape) -> Part:
    alg = QueryAlgebra()
    kx, k1, k2 = (ranged_var(alg, n, 0, (1 << sh.window) - 1) for n in ("kx", "ky", "kz"))
    cx, c1, c2 = (alg.eq(alg.var(n, 1), 1) for n in ("cx", "cy", "cz"))
    goal = rep_le(alg, alg.add(kx, k1), alg.or_(cx, c1), alg.add(kx, k2), alg.or_(cx, c2))
    return Part("window, adder: kept y <= kept y' (no cut lost when equal) gives rep order of kept x + kept y",
                  negated_script(alg, implies(alg, [_kept_order(alg, k1, c1, k2, c2)], goal)))


def window_lemmas(sh: FmaShape) -> list[Part]:
    """The structure of one sum, the place and adder steps (same lmax), lmax up by one, by two or more."""
    out = [_structure_lemma(sh), _place_lemma(sh), _adder_lemma(sh)]
    # by lead(Y) - lead(X): at most 0, X's lead is the first lmax; else Y's (the second lmax is always Y''s)
    for lo, hi in ((None, 0), (1, 2), (3, 40), (41, 80), (81, None)):
        w = _Raise(sh)
        alg = w.alg
        m1, s1, m2, s2 = w.sums()
        d = alg.sub(w.y.lead, w.x.lead)
        case = ([alg.le(lo, d)] if lo is not None else []) + ([alg.le(d, hi)] if hi is not None else [])
        out.append(w.lemma(f"window, lmax up by one, lead(Y) - lead(X) in [{lo if lo is not None else '-inf'}, "
                           f"{hi if hi is not None else 'inf'}]: (mag, sticky) is rep-ordered with (2 mag' + sticky', sticky')",
                           [alg.eq(alg.add(w.lmax1, 1), w.lmax2), *case], up_by_one(alg, m1, s1, m2, s2)))
    w = _Raise(sh)
    alg = w.alg
    m1, s1, m2, s2 = w.sums()
    n1 = alg.eq(alg.var("n1", 1), 1)
    r1 = _rne(alg, sh, n1, m1, alg.sub(w.lmax1, sh.window), s1)
    r2 = _rne(alg, sh, alg.bconst(False), m2, alg.sub(w.lmax2, sh.window), s2)
    out.append(w.lemma("window, lmax up by two or more: RNE of the first sum (either sign, negative only as -0) is no "
                       "more than of the second", [alg.le(alg.add(w.lmax1, 2), w.lmax2), _zero_if_neg(alg, n1, m1, s1)],
                       _vle(alg, sh, r1, r2)))
    return out


def rounding_lemmas(sh: FmaShape) -> list[Part]:
    """RNE is monotone in rep order at a shared lsb; one more lsb is a doubled magnitude."""
    alg = QueryAlgebra()
    big = sh.window + 2
    ms = []
    for name in ("m", "n"):
        m = ranged_var(alg, f"{name}_mag", 0, (1 << big) - 1)
        alg.assert_(_normal_mag(alg, sh, m, big))
        ms.append((alg.eq(alg.var(f"{name}_neg", 1), 1), m, alg.eq(alg.var(f"{name}_sticky", 1), 1)))
    lsb = ranged_var(alg, "lsb", sh.low - sh.window, _union(sh)[1] + 2)
    (n1, m1, s1), (n2, m2, s2) = ms
    premise = [rep_le(alg, m1, s1, m2, s2), _zero_if_neg(alg, n1, m1, s1), _zero_if_neg(alg, n2, m2, s2)]
    goal = _vle(alg, sh, _rne(alg, sh, n1, m1, lsb, s1), _rne(alg, sh, n2, m2, lsb, s2))
    out = [Part("rounding: rep order at a shared lsb gives no smaller RNE (magnitudes 0 or normalized)",
                  negated_script(alg, implies(alg, premise, goal)))]
    alg = QueryAlgebra()
    n, m, s = alg.eq(alg.var("m_neg", 1), 1), ranged_var(alg, "m_mag", 0, (1 << big) - 1), alg.eq(alg.var("m_sticky", 1), 1)
    lsb = ranged_var(alg, "lsb", sh.low - sh.window, _union(sh)[1] + 2)
    premise = [_normal_mag(alg, sh, m, big), _zero_if_neg(alg, n, m, s)]
    out.append(Part("rounding, sign: RNE of a sum negative only as -0 is not NaN and not below zero",
                      negated_script(alg, implies(alg, premise, nonneg(alg, sh.fmt, _rne(alg, sh, n, m, lsb, s))))))
    alg = QueryAlgebra()
    m = ranged_var(alg, "m_mag", 1 << (sh.window - 1), (1 << (sh.window + 1)) - 1)
    s = alg.eq(alg.var("m_sticky", 1), 1)
    lsb = ranged_var(alg, "lsb", sh.low - sh.window, _union(sh)[1] + 1)
    f = alg.bconst(False)
    out.append(Part("rounding, one more lsb: (mag, lsb + 1, sticky) rounds as (2 mag + sticky, lsb, sticky)",
                      negated_script(alg, alg.eq(_rne(alg, sh, f, m, alg.add(lsb, 1), s),
                                          _rne(alg, sh, f, alg.add(alg.shl(m, 1), alg.b2i(s)), lsb, s)))))
    return out


# -- terms: the leads of c and of the product ------------------------------------------------------------


def _lead_of(alg: QueryAlgebra, sh: FmaShape, t: Term) -> _Lead:
    lead, top = window_lead(alg, t, sh.window, sh.low)
    return _Lead(t.neg, lead, top)


def term_lemmas(sh: FmaShape) -> list[Part]:
    """c's leads, and the product's by the cases of a's next value (each a check-sat expecting unsat)."""
    f = sh.fmt
    out = []
    alg = QueryAlgebra()
    c, c2 = alg.var("c", f.bits), alg.var("c2", f.bits)
    y, y2 = (_lead_of(alg, sh, input_term(unpack(alg, f, v))) for v in (c, c2))
    premise = [finite_nonneg(alg, f, c), finite_nonneg(alg, f, c2), alg.le(value_key(alg, f, c), value_key(alg, f, c2))]
    goal = alg.all([_well_formed(alg, sh, y, sh.c_lead), _well_formed(alg, sh, y2, sh.c_lead), _lex(alg, y, y2)])
    out.append(Part("terms, c: finite non-negative c <= c' give well-formed, lex-ordered leads", negated_script(alg, implies(alg, premise, goal))))
    out += ring_lemmas(sh.sig_bits)
    out += [_product_lemma(sh, moved) for moved in (False, True)]
    return out


def _ring_script(bits: int, lhs: str, rhs: str) -> str:
    """"lhs = rhs" for all s, t of ``bits`` bits, as (S, T) zero-extended to 2 bits + 1: no term below wraps there."""
    w = 2 * bits + 1
    ext = f"(_ zero_extend {w - bits})"
    return "\n".join(["(set-logic QF_BV)", f"(declare-const s (_ BitVec {bits}))", f"(declare-const t (_ BitVec {bits}))",
                      f"(define-fun S () (_ BitVec {w}) ({ext} s))", f"(define-fun T () (_ BitVec {w}) ({ext} t))",
                      f"(assert (not (= {lhs} {rhs})))", ""])


def ring_lemmas(p: int) -> list[Part]:
    """What the product proofs assume of a significand product s * t (s, t < 2**p, p = significand bits; every value
    below 2**(2p + 1), so the bit-vector ring is the integers): the step to s + 1, a power of two, zero, commutativity."""
    w = 2 * p + 1
    lit = lambda v: f"(_ bv{v} {w})"  # noqa: E731
    out = [Part("ring, product step: (s + 1) * t = s * t + t (significands, exact)",
                  _ring_script(p, f"(bvmul (bvadd S {lit(1)}) T)", "(bvadd (bvmul S T) T)"))]
    for k in (p - 1, p):
        out.append(Part(f"ring, power of two 2**{k}: 2**{k} * t = t shifted left by {k}",
                          _ring_script(p, f"(bvmul {lit(1 << k)} T)", f"(bvshl T {lit(k)})")))
    out.append(Part("ring, zero on the right: s * 0 = 0", _ring_script(p, f"(bvmul S {lit(0)})", lit(0))))
    out.append(Part("ring, zero on the left: 0 * t = 0", _ring_script(p, f"(bvmul {lit(0)} T)", lit(0))))
    out.append(Part("ring, commutativity: s * t = t * s", _ring_script(p, "(bvmul S T)", "(bvmul T S)")))
    return out


class OpaqueMul(QueryAlgebra):
    """A :class:`QueryAlgebra` whose products of two non-constant terms are fresh variables (in the product's static
    interval), one per operand pair; :attr:`muls` maps the pair to its product's variable.  What a proof knows of them
    is what it asserts: instances of :func:`ring_lemmas`."""

    def __init__(self) -> None:
        super().__init__()
        self.muls: dict[tuple[str, str], Int] = {}

    def mul(self, a: IntLike, b: IntLike) -> Int:
        a, b = self.lift(a), self.lift(b)
        if a.const is not None or b.const is not None:
            return super().mul(a, b)
        key = (str(a.raw), str(b.raw))
        if key not in self.muls:
            corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
            self.muls[key] = ranged_var(self, f"mul{len(self.muls)}", min(corners), max(corners))
        return self.muls[key]


def step_facts(alg: QueryAlgebra, p: int, s: Int, s2: Int, t: Int, m1: Int, m2: Int) -> list[Bool]:
    """Instances of :func:`ring_lemmas` for m1 = s * t and m2 = s2 * t (p-bit significands, s2 the significand of the
    next value of s's input): the step s2 = s + 1, the binade's end s = 2**p - 1 and start s2 = 2**(p-1), zeros."""
    return [implies(alg, [alg.eq(s2, alg.add(s, 1))], alg.eq(m2, alg.add(m1, t))),  # ring: product step
            implies(alg, [alg.eq(s, (1 << p) - 1)], alg.eq(alg.add(m1, t), alg.shl(t, p))),  # step, power of two
            implies(alg, [alg.eq(s2, 1 << (p - 1))], alg.eq(m2, alg.shl(t, p - 1))),  # power of two
            implies(alg, [alg.eq(t, 0)], alg.and_(alg.eq(m1, 0), alg.eq(m2, 0))),  # zero
            implies(alg, [alg.eq(s, 0)], alg.eq(m1, 0)), implies(alg, [alg.eq(s2, 0)], alg.eq(m2, 0))]


def _with_wide_step(step: Lemma, p: int, t_first: bool) -> Lemma:
    """The ring step lemma, its proof given "S' = S + 1 gives S' T = S T + T" on (2p+1)-bit S, S', T (every value of
    the width, so no range premise): applied to the sign-extended significands, whose products the step's body
    multiplies at that width, it leaves z3 no multiplier to bit-blast (z3 gives no answer in 120 s on the step alone
    at p = 11; the wide form is one rewriting step).  Unchanged where the body multiplies otherwise."""
    w = 2 * p + 1
    ext = [f"((_ sign_extend {w - q.bits}) a{k})" if q.bits < w else f"a{k}" for k, q in enumerate(step.params)]
    mul = (lambda x, y: f"(bvmul {y} {x})") if t_first else (lambda x, y: f"(bvmul {x} {y})")
    if mul(ext[0], ext[2]) not in step.body or mul(ext[1], ext[2]) not in step.body:
        return step

    def wide(g: QueryAlgebra, v: list[Int]) -> Bool:
        s_, s2_, t_ = (g.term_text(x) for x in v)
        return Bool(g, f"(=> (= {s2_} (bvadd {s_} (_ bv1 {w}))) (= {mul(s2_, t_)} (bvadd {mul(s_, t_)} {t_})))")

    full = Int(QueryAlgebra(), "x", -(1 << (w - 1)), (1 << (w - 1)) - 1)
    what = "T S' = T S + T" if t_first else "S' T = S T + T"
    return step.with_given(lemma(f"ring at {w} bits, every value: S' = S + 1 gives {what}", wide, [full] * 3), ext)


def apply_step_facts(chain: LemmaChain, p: int, s: Int, s2: Int, t: Int, *, t_first: bool = False) -> list[str]:
    """:func:`step_facts` of the products s * t and s2 * t (t * s and t * s2 with ``t_first``: the order the model
    multiplies in) as lemmas, one per fact, proved on fresh constants and applied to the run's terms s, s2, t, whose
    products are then the model's own (the same function builds both).  One lemma per fact: a premise that is one
    equality lets the solver substitute it (the six as one lemma: no answer in 120 s at 11 bits).  Returns the
    applications' texts (empty when a lemma was not proved: the chain says which)."""
    apps: list[str] = []
    for i, what in enumerate(("the step s + 1", "the binade's end s = 2^p - 1", "the binade's start 2^(p-1)",
                              "t = 0", "s = 0", "s2 = 0")):

        def fact(g: QueryAlgebra, v: list[Int], i: int = i) -> Bool:
            s_, s2_, t_ = v
            mul = (lambda x, y: g.mul(y, x)) if t_first else g.mul
            return step_facts(g, p, s_, s2_, t_, mul(s_, t_), mul(s2_, t_))[i]

        order = "t * s" if t_first else "s * t"
        lem = lemma(f"ring ({p}-bit significands, {order}): {what}", fact, [s, s2, t])
        if i == 0:
            lem = _with_wide_step(lem, p, t_first)
        if not chain.establish(lem, [s, s2, t]):
            return []
        apps.append(chain.applied_last)
    return apps


def _product_lemma(sh: FmaShape, moved: bool) -> Part:
    """The product's lead (s * t a fresh variable, ring lemma instances asserted): well formed for finite non-negative
    a, b; with ``moved``, a's next value a' gives a lex-larger lead (a zero raised, the same exponent with significand
    s + 1, or the exponent up from s = 2**p - 1 to 2**(p-1))."""
    f, p = sh.fmt, sh.sig_bits
    alg = OpaqueMul()
    a, a2, b = alg.var("a", f.bits), alg.var("a2", f.bits), alg.var("b", f.bits)
    ua, ua2, ub = (unpack(alg, f, v) for v in (a, a2, b))
    x, x2 = _lead_of(alg, sh, product(alg, ua, ub)[0]), _lead_of(alg, sh, product(alg, ua2, ub)[0])
    m1, m2 = alg.muls.values()
    for fact in step_facts(alg, p, ua.sig, ua2.sig, ub.sig, m1, m2):
        alg.assert_(fact)
    premise = [finite_nonneg(alg, f, a), finite_nonneg(alg, f, b)]
    if not moved:
        return Part("terms, product lead: finite non-negative a, b give a well-formed lead (s * t fresh, ring facts)",
                      negated_script(alg, implies(alg, premise, _well_formed(alg, sh, x, sh.prod_lead))))
    premise += [finite_nonneg(alg, f, a2), next_value(alg, f, a, a2)]
    goal = alg.all([_well_formed(alg, sh, x2, sh.prod_lead), _lex(alg, x, x2)])
    return Part("terms, product lead, a raised: a's next value gives a well-formed, lex-larger lead (s * t fresh, ring facts)",
                  negated_script(alg, implies(alg, premise, goal)))


# -- the proof: one FMA composed, then the chain -----------------------------------------------------------


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`prove_monotone` applies: a chain of FMAs in one IEEE format with subnormals, read as is (the
    glue equates the model with the chain of FMAs of its NaN style on every input; the split lemma, on non-negative
    operands, meets no NaN)."""
    if model.kind != "fma" or not model.a_fmt == model.b_fmt == model.c_fmt == model.d_fmt or K < 1:
        return False
    f = get_format(model.c_fmt)
    return model.via in (None, f.name) and not model.ftz_inputs and f.nan == "ieee" and f.subnormals and f.signed


# -- fresh variables for the pieces ---------------------------------------------------------------------


class _Apps(Pieces):
    """The FMA's pieces: leads, placements, window sums, RNE, whole FMAs (one fresh variable or tuple each)."""

    def __init__(self, sh: FmaShape) -> None:
        super().__init__(QueryAlgebra())
        self.sh = sh
        probe = QueryAlgebra()  # the static intervals of window_sum's outputs
        hi = _union(sh)[1]
        t = [(probe.bconst(False), ranged_var(probe, f"l{i}", sh.low, hi), ranged_var(probe, f"t{i}", 0, (1 << sh.window) - 1))
             for i in (0, 1)]
        _, m, l, _ = window_sum(probe, sh.window, t[0], t[1])
        self.mag, self.lsb = (m.lo, m.hi), (l.lo, l.hi)

    def var(self, name: str) -> Int:
        """An input pattern of the format (kept in :attr:`inputs`)."""
        return self.input(name, self.sh.fmt.bits)

    def lead(self, what: str, *ops: Int) -> _Lead:
        """The (neg, lead, top) of the product of ``ops`` (what="p") or of c (what="c")."""
        key = ("lead", what, *piece_key(*ops))
        if key not in self.memo:
            n = len(self.memo)
            x = self.memo[key] = _Lead(self.bool_var(f"ln{n}"), ranged_var(self.alg, f"ll{n}", self.sh.low, _union(self.sh)[1]),
                                       ranged_var(self.alg, f"lt{n}", 0, (1 << self.sh.window) - 1))
            alg, f = self.alg, self.sh.fmt
            term = (lambda: product(alg, unpack(alg, f, ops[0]), unpack(alg, f, ops[1]))[0]) if what == "p" else \
                (lambda: input_term(unpack(alg, f, ops[0])))
            self.definers.append(lambda: self.same(x.triple(), _lead_of(alg, self.sh, term()).triple()))
        return self.memo[key]  # type: ignore[return-value]

    def place(self, lmax: Int, t: _Lead) -> tuple[Int, Bool]:
        """(kept, cut) of :func:`window_place` for term t at lmax."""
        key = ("place", *piece_key(lmax, *t.triple()))
        if key not in self.memo:
            n = len(self.memo)
            v = self.memo[key] = (ranged_var(self.alg, f"pk{n}", 0, (1 << self.sh.window) - 1), self.bool_var(f"pc{n}"))
            def real() -> Bool:
                kept, _, cut = window_place(self.alg, self.sh.window, lmax, *t.triple())
                return self.same(v, (kept, cut))

            self.definers.append(real)
        return self.memo[key]  # type: ignore[return-value]

    def wsum(self, x: _Lead, y: _Lead) -> tuple[Bool, Int, Int, Bool]:
        """(neg, mag, lsb, sticky) of :func:`window_sum` of x and y."""
        key = ("sum", *piece_key(*x.triple(), *y.triple()))
        if key not in self.memo:
            n = len(self.memo)
            v = self.memo[key] = (self.bool_var(f"sn{n}"), ranged_var(self.alg, f"sm{n}", *self.mag),
                                  ranged_var(self.alg, f"sl{n}", *self.lsb), self.bool_var(f"ss{n}"))
            self.definers.append(lambda: self.same(v, window_sum(self.alg, self.sh.window, x.triple(), y.triple())))
        return self.memo[key]  # type: ignore[return-value]

    def rne(self, n: Bool, m: Int, l: Int, s: Bool) -> Int:
        """The pattern :func:`rounding.round_pack` (RNE) makes of (neg, mag, lsb, sticky)."""
        key = ("rne", *piece_key(n, m, l, s))
        if key not in self.memo:
            r = self.memo[key] = self.alg.var(f"r{len(self.memo)}", self.sh.fmt.bits)
            self.definers.append(lambda: self.alg.eq(r, round_pack(self.alg, self.sh.fmt, "rne", n, m, l, s)))
        return self.memo[key]  # type: ignore[return-value]

    def fma(self, a: Int, b: Int, c: Int) -> Int:
        """The pattern fma(a, b, c) (the chain's step)."""
        key = ("fma", *piece_key(a, b, c))
        if key not in self.memo:
            d = self.memo[key] = self.alg.var(f"d{len(self.memo)}", self.sh.fmt.bits)
            alg, f = self.alg, self.sh.fmt
            self.definers.append(lambda: alg.eq(d, fma(alg, *(unpack(alg, f, v) for v in (a, b, c)), out=f)))
        return self.memo[key]  # type: ignore[return-value]


# -- the window: one term raised, the other fixed -------------------------------------------------------


def _window(ap: _Apps, F: _Lead, G1: _Lead, G2: _Lead, raised_first: bool) -> tuple[Int, Int]:
    """RNE of window_sum with term G1, then G2 (G1 <=lex G2), beside the fixed F (F second, or first with
    ``raised_first`` False): every window and rounding lemma's instance asserted; the two RNE patterns."""
    alg, sh = ap.alg, ap.sh
    w = sh.window
    f_ = alg.bconst(False)
    sums, lmaxes, fixed, raised = [], [], [], []
    wf = [_well_formed(alg, sh, t, _union(sh)) for t in (F, G1, G2)]
    for G in (G1, G2):
        X, Y = (G, F) if raised_first else (F, G)
        lmax = alg.max(X.lead, Y.lead)
        kf, kg = ap.place(lmax, F), ap.place(lmax, G)
        total = ap.wsum(X, Y)
        ap.fact([_well_formed(alg, sh, X, _union(sh)), _well_formed(alg, sh, Y, _union(sh))],  # structure
                structure(alg, sh, total, lmax, *((kg, kf) if raised_first else (kf, kg))))
        sums.append(total)
        lmaxes.append(lmax)
        fixed.append(kf)
        raised.append(kg)
    (n1, m1, l1, s1), (n2, m2, l2, s2) = sums
    L1, L2 = lmaxes
    (kf1, cf1), (kf2, cf2) = fixed
    (kg1, cg1), (kg2, cg2) = raised
    r1, r2 = ap.rne(*sums[0]), ap.rne(*sums[1])
    order = _lex(alg, G1, G2)
    k1, c1, k2, c2 = alg.add(kf1, kg1), alg.or_(cf1, cg1), alg.add(kf2, kg2), alg.or_(cf2, cg2)
    zin1, zin2 = _zero_if_neg(alg, n1, m1, s1), _zero_if_neg(alg, n2, m2, s2)
    big = w + 2
    # the same lmax: place, the fixed term placed alike, adder, rounding at one lsb
    same = alg.eq(L1, L2)
    ap.fact(wf + [order, alg.le(G1.lead, L1), alg.le(G2.lead, L1), same], _kept_order(alg, kg1, cg1, kg2, cg2))
    ap.fact([same], alg.and_(alg.eq(kf1, kf2), alg.eq(alg.b2i(cf1), alg.b2i(cf2))))
    ap.fact([_kept_order(alg, kg1, cg1, kg2, cg2)], rep_le(alg, k1, c1, alg.add(kf1, kg2), alg.or_(cf1, cg2)))
    ap.fact([rep_le(alg, m1, s1, m2, s2), zin1, zin2, _normal_mag(alg, sh, m1, big), _normal_mag(alg, sh, m2, big), alg.eq(l1, l2)],
            _vle(alg, sh, r1, r2))
    # lmax up by one: the second sum at one lsb lower, then rounding at one lsb
    ap.fact(wf + [order, alg.eq(L2, alg.add(L1, 1))], up_by_one(alg, k1, c1, k2, c2))
    wide = alg.add(alg.shl(m2, 1), alg.b2i(s2))
    rb = ap.rne(f_, wide, l1, s2)
    ap.fact([alg.le(1 << (w - 1), m2), alg.lt(m2, 1 << (w + 1)), alg.not_(n2), alg.eq(l2, alg.add(l1, 1))], alg.eq(r2, rb))
    ap.fact([rep_le(alg, m1, s1, wide, s2), zin1, _normal_mag(alg, sh, m1, big), _normal_mag(alg, sh, wide, big)],
            _vle(alg, sh, r1, rb))
    # lmax up by two or more
    ap.fact(wf + [order, alg.le(alg.add(L1, 2), L2), _zero_if_neg(alg, n1, k1, c1), alg.eq(m1, k1), alg.eq(alg.b2i(s1), alg.b2i(c1)),
                  alg.eq(l1, alg.sub(L1, w)), alg.eq(m2, k2), alg.eq(alg.b2i(s2), alg.b2i(c2)), alg.eq(l2, alg.sub(L2, w)), alg.not_(n2)],
            _vle(alg, sh, r1, r2))
    for (n, m, _, s), r in zip(sums, (r1, r2)):  # rounding, sign
        ap.fact([_normal_mag(alg, sh, m, big), _zero_if_neg(alg, n, m, s)], nonneg(alg, sh.fmt, r))
    return r1, r2


def _finish(ap: _Apps, c: Int, r: Int) -> Int:
    """The split fma: +inf for c = +inf, else the RNE pattern r."""
    return ap.alg.ite(unpack(ap.alg, ap.sh.fmt, c).is_inf, ap.sh.fmt.inf_bits(), r)


def fma_in_c(sh: FmaShape) -> Composed:
    ap = _Apps(sh)
    alg, f = ap.alg, sh.fmt
    a, b, c, c2 = (ap.var(n) for n in ("a", "b", "c", "c2"))
    X, Y1, Y2 = ap.lead("p", a, b), ap.lead("c", c), ap.lead("c", c2)
    ap.fact([finite_nonneg(alg, f, a), finite_nonneg(alg, f, b)], _well_formed(alg, sh, X, sh.prod_lead))  # terms, product
    ap.fact([finite_nonneg(alg, f, c), finite_nonneg(alg, f, c2), alg.le(value_key(alg, f, c), value_key(alg, f, c2))],  # terms, c
            alg.all([_well_formed(alg, sh, Y1, sh.c_lead), _well_formed(alg, sh, Y2, sh.c_lead), _lex(alg, Y1, Y2)]))
    for Y, v in ((Y1, c), (Y2, c2)):  # terms, c (c' = c)
        ap.fact([finite_nonneg(alg, f, v)], _well_formed(alg, sh, Y, sh.c_lead))
    r1, r2 = _window(ap, X, Y1, Y2, raised_first=False)
    d1, d2 = _finish(ap, c, r1), _finish(ap, c2, r2)
    premise = [finite_nonneg(alg, f, a), finite_nonneg(alg, f, b), nonneg(alg, f, c), nonneg(alg, f, c2),
               alg.le(value_key(alg, f, c), value_key(alg, f, c2))]
    goal = alg.all([nonneg(alg, f, d1), nonneg(alg, f, d2), _vle(alg, sh, d1, d2)])
    return Composed(ap, premise, goal, "FMA in c (composition): finite non-negative a, b and c <= c' (not below zero, +inf "
                    "included) give fma(a, b, c) <= fma(a, b, c'), neither NaN nor below zero")


def fma_in_a(sh: FmaShape) -> Composed:
    ap = _Apps(sh)
    alg, f = ap.alg, sh.fmt
    a, a2, b, c = (ap.var(n) for n in ("a", "a2", "b", "c"))
    X1, X2, Y = ap.lead("p", a, b), ap.lead("p", a2, b), ap.lead("c", c)
    ap.fact([finite_nonneg(alg, f, a), finite_nonneg(alg, f, b)], _well_formed(alg, sh, X1, sh.prod_lead))  # terms, product
    ap.fact([finite_nonneg(alg, f, a), finite_nonneg(alg, f, a2), finite_nonneg(alg, f, b), next_value(alg, f, a, a2)],  # terms, product (moved)
            alg.and_(_well_formed(alg, sh, X2, sh.prod_lead), _lex(alg, X1, X2)))
    ap.fact([finite_nonneg(alg, f, c)], _well_formed(alg, sh, Y, sh.c_lead))  # terms, c (c' = c)
    r1, r2 = _window(ap, Y, X1, X2, raised_first=True)
    d1, d2 = _finish(ap, c, r1), _finish(ap, c, r2)
    premise = [finite_nonneg(alg, f, a), finite_nonneg(alg, f, a2), finite_nonneg(alg, f, b), next_value(alg, f, a, a2), nonneg(alg, f, c)]
    goal = alg.all([nonneg(alg, f, d1), nonneg(alg, f, d2), _vle(alg, sh, d1, d2)])
    return Composed(ap, premise, goal, "FMA in a (composition): raising a to its next value never lowers fma(a, b, c) "
                    "(finite non-negative a, b; c not below zero, +inf included)")


# -- one FMA: split and commutativity; the model: the chain ---------------------------------------------


def split_lemmas(sh: FmaShape) -> list[Part]:
    f = sh.fmt
    alg = QueryAlgebra()
    a, b, c = (alg.var(n, f.bits) for n in ("a", "b", "c"))
    ua, ub, uc = (unpack(alg, f, v) for v in (a, b, c))
    x, y = _lead_of(alg, sh, product(alg, ua, ub)[0]), _lead_of(alg, sh, input_term(uc))
    r = round_pack(alg, f, "rne", *window_sum(alg, sh.window, x.triple(), y.triple()))
    premise = [finite_nonneg(alg, f, a), finite_nonneg(alg, f, b), nonneg(alg, f, c)]
    split = alg.eq(fma(alg, ua, ub, uc, out=f, nan=sh.nan), alg.ite(uc.is_inf, f.inf_bits(), r))
    style = " (NaNs propagated: none arises here)" if sh.nan == "propagate" else ""
    out = [Part(f"split (Alg. 3): fma{style} of finite non-negative a, b and c not below zero is +inf for c = +inf, else RNE of "
                  "the window sum of the product's and c's leads", negated_script(alg, implies(alg, premise, split)))]
    alg = QueryAlgebra()
    a, b, c = (alg.var(n, f.bits) for n in ("a", "b", "c"))
    ua, ub, uc = (unpack(alg, f, v) for v in (a, b, c))
    out.append(Part("fma commutes: fma(a, b, c) = fma(b, a, c) for finite non-negative a, b", negated_script(alg, implies(
        alg, [finite_nonneg(alg, f, a), finite_nonneg(alg, f, b)],
        alg.eq(fma(alg, ua, ub, uc, out=f, nan=sh.nan), fma(alg, ub, ua, uc, out=f, nan=sh.nan))))))
    return out


def glue_lemma(model: Model, K: int, sh: FmaShape) -> Part:
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    d = x.c
    for a, b in zip(x.a, x.b):
        d = fma(alg, unpack(alg, sh.fmt, a), unpack(alg, sh.fmt, b), unpack(alg, sh.fmt, d), out=sh.fmt, nan=sh.nan)
    style = ", NaN payloads propagated" if sh.nan == "propagate" else ""
    return Part(f"glue (Alg. 4): the model's D is the chain of {K} FMAs{style}, c first (every input)",
                  negated_script(alg, alg.eq(run_model(alg, model, x.a, x.b, x.c), d)))


def chain_position(sh: FmaShape, K: int, label: str) -> Composed:
    """Raising input ``label`` (c, a<k>, b<k>) never lowers D: the chain over fresh FMA results, the FMA lemmas' instances."""
    ap = _Apps(sh)
    alg, f = ap.alg, sh.fmt
    a = [ap.var(f"a{k}") for k in range(K)]
    b = [ap.var(f"b{k}") for k in range(K)]
    c = ap.var("c")
    a2, b2, c2 = list(a), list(b), c
    raised = ap.var(f"{label}_2")
    if label == "c":
        c2, moved = raised, next_value(alg, f, c, raised)
    else:
        k = int(label[1:])
        (a2 if label[0] == "a" else b2)[k] = raised
        moved = next_value(alg, f, (a if label[0] == "a" else b)[k], raised)
    ok = lambda v: finite_nonneg(alg, f, v)  # noqa: E731
    nn = lambda v: nonneg(alg, f, v)  # noqa: E731

    def in_c(x: Int, y: Int, d: Int, d2: Int) -> Int:  # FMA in c
        r1, r2 = ap.fma(x, y, d), ap.fma(x, y, d2)
        ap.fact([ok(x), ok(y), nn(d), nn(d2), alg.le(value_key(alg, f, d), value_key(alg, f, d2))],
                alg.all([nn(r1), nn(r2), _vle(alg, sh, r1, r2)]))
        return r2

    def in_a(x: Int, x2: Int, y: Int, d: Int) -> Int:  # FMA in a
        r1, r2 = ap.fma(x, y, d), ap.fma(x2, y, d)
        ap.fact([ok(x), ok(x2), ok(y), next_value(alg, f, x, x2), nn(d)], alg.all([nn(r1), nn(r2), _vle(alg, sh, r1, r2)]))
        return r2

    d, d2 = c, c2
    for k in range(K):
        x, y, x2, y2 = a[k], b[k], a2[k], b2[k]
        in_c(x, y, d, d)  # the first run's result is not below zero
        if x2 is not x:  # the raised input's FMA (d2 is d there)
            next2 = in_a(x, x2, y, d)
        elif y2 is not y:  # b through commutativity
            for v in (y, y2):
                ap.fact([ok(x), ok(v)], alg.eq(ap.fma(x, v, d), ap.fma(v, x, d)))
            in_a(y, y2, x, d)
            next2 = ap.fma(x, y2, d)
        else:
            next2 = in_c(x, y, d, d2)
        d, d2 = ap.fma(x, y, d), next2
    premise = [ok(v) for v in a + b + [c, raised]] + [moved]
    goal = alg.all([nn(d), nn(d2), _vle(alg, sh, d, d2)])
    return Composed(ap, premise, goal, f"chain (composition): raising {label} never lowers D (the FMA lemmas at each FMA it reaches)")


def prove_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of one input lowers the FMA chain's D (all finite non-negative inputs).

    "holds" with every lemma's block, or "unknown" naming the first lemma the solver did not prove.
    """
    sh = FmaShape.of(model)
    lemmas = [glue_lemma(model, K, sh), *split_lemmas(sh), *term_lemmas(sh), *window_lemmas(sh), *rounding_lemmas(sh),
              fma_in_c(sh).lemma(), fma_in_a(sh).lemma()]
    lemmas += [chain_position(sh, K, label).lemma() for label in ["c"] + [f"{w}{k}" for k in range(K) for w in ("a", "b")]]
    proof = run_parts(lemmas, run)
    proof.summary = ("glue, the FMA split at its window adder, term, ring, window and rounding lemmas composed into the "
                     "FMA in c and in a, composed along the chain")
    return proof


# -- symmetry: the exact sum of the negated inputs ---------------------------------------------------------


def supports_symmetry(model: Model, K: int) -> bool:
    """Whether :func:`negated_chain_facts` applies: a chain of K FMAs (Alg. 4), inputs read as they are (no via, no
    flushing)."""
    return model.kind == "fma" and K >= 1 and model.via is None and not model.ftz_inputs


def negated_chain_facts(chain: LemmaChain, alg: QueryAlgebra, model: Model, x: InputSet, na: list[Int], nc: Int,
                        decoded: list[Optional[int]], decoded_c: Optional[int]) -> Optional[int]:
    """Prove, in the symmetry query's own formula, FMA by FMA of the chain (Alg. 4) on (-A, B, -C), that each step is
    the original step negated: the lemmas of :func:`~smtmma.op_proofs.fused_sum.negated_rounded_sum2` (the exact sum
    a*b + c of Alg. 3 line 1 keeps its magnitude, last place and sticky bit; its RNE keeps its fields), proved once
    on fresh constants and applied at each FMA, then the fact that D decodes to the same fields, sign flipped (both
    zero, or both NaN, otherwise).  ``decoded``,
    ``decoded_c``: the facts that decode -a_k and -c (sign flipped, fields kept).  Returns the fact about D."""
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    fd = output_container(model)
    nan = model.nan if model.nan == "propagate" else "ieee"  # as run_model chains them
    c_run, c_neg = decode_input(alg, fc, x.c, fd.name), decode_input(alg, fc, nc, fd.name)  # as run_model reads C
    c_fact = decoded_c
    for k in range(len(x.a)):
        ua, ub, una = unpack(alg, fa, x.a[k]), unpack(alg, fb, x.b[k]), unpack(alg, fa, na[k])
        at = f"FMA {k + 1}" if len(x.a) > 1 else "the FMA"
        if not negated_rounded_sum2(chain, alg, "an FMA (Alg. 3: RNE of a*b + c)", fd, "rne", (ua, ub), (c_run,), (una, ub), (c_neg,)):
            return None
        d = fma(alg, ua, ub, c_run, out=fd, nan=nan)
        d2 = fma(alg, una, ub, c_neg, out=fd, nan=nan)
        c_neg = negated_output_fact(chain, alg, fd, d, d2, at, [decoded[k], c_fact], applied=True)
        c_run = unpack(alg, fd, d)  # the next FMA's c, as run_model reads it
        c_fact = chain.last
    return c_fact


# -- the error bound (Table 9: 1/2 ulp, one rounding) ------------------------------------------------------


class WindowSum(NamedTuple):
    """One FMA as the model reads x's inputs: the decoded a, b and c (c in D's format), the product and c terms, the
    window sum (neg, mag, lsb, sticky) (Alg. 3 line 1, :func:`~smtmma.encodings.fused_sum.exact_sum2`), the window's
    width (bits) and the lead standing for a zero term (:func:`~smtmma.encodings.fused_sum.sum2_window`)."""

    inputs: tuple[Unpacked, Unpacked, Unpacked]
    p: Term
    c: Term
    total: tuple[Bool, Int, Int, Bool]
    window: int
    low: int


def window_sum_of(alg: QueryAlgebra, model: Model, x: InputSet) -> WindowSum:
    """:class:`WindowSum` of one FMA (K = 1) on x's inputs, built by the model's own functions."""
    fd = get_format(model.d_fmt)
    ua, ub = (decode_input(alg, get_format(f), v[0], model.via) for f, v in ((model.a_fmt, x.a), (model.b_fmt, x.b)))
    uc = decode_input(alg, get_format(model.c_fmt), x.c, fd.name)
    p, _ = product(alg, ua, ub)
    c = input_term(uc)
    return WindowSum((ua, ub, uc), p, c, exact_sum2(alg, p, c), *sum2_window(p, c))


def sum_place(alg: QueryAlgebra, model: Model, x: InputSet) -> tuple[Int, int]:
    """The exponent of one FMA's window sum's last place on x's inputs, and the window's width (bits): the unit
    the error query counts in (:meth:`~smtmma.queries.properties.error_bound.ErrorFormula.place_units`)."""
    w = window_sum_of(alg, model, x)
    return w.total[2], w.window


def supports_error_facts(model: Model, K: int) -> bool:
    """Whether :func:`error_facts` covers the model: one standard FMA (K = 1) on its inputs as they are."""
    return model.kind == "fma" and K == 1 and model.via is None and not model.ftz_inputs


def in_place(alg: QueryAlgebra, n: Bool, m: Int, s: Bool, lo: Int, hi: Int, G: int) -> Bool:
    """[lo, hi] (units 2**(lsb - G)) lies where the window sum (n, m, s) at lsb puts the exact value: (-1)**n m
    exactly without sticky; with it, between m and m + 1 (units 2**lsb) on n's side."""
    low, high = alg.shl(m, G), alg.shl(alg.add(m, 1), G)
    exact = alg.and_(alg.eq(lo, signed(alg, n, low)), alg.eq(hi, lo))
    pos = alg.all([alg.le(low, lo), alg.le(lo, hi), alg.le(hi, high)])
    neg = alg.all([alg.le(alg.neg(high), lo), alg.le(lo, hi), alg.le(hi, alg.neg(low))])
    side = alg.or_(alg.and_(n, neg), alg.and_(alg.not_(n), pos))
    return alg.or_(alg.and_(s, side), alg.and_(alg.not_(s), exact))


def sticky_is_large(alg: QueryAlgebra, m: Int, s: Bool, window: int) -> Bool:
    """A sticky window sum's magnitude is at least 2**(window - 2) (a cut term is below the larger one's last place,
    so it cancels at most one bit): the rounding lemma's premise, the interval fact's conclusion."""
    return alg.or_(alg.not_(s), alg.le(1 << (window - 2), m))


def rounding_cases(fd: Format, window: int, chunk: int = 16) -> list[tuple[str, Any]]:
    """The cases of the rounding lemma, each a few seconds where one lemma is minutes (FP64): (words,
    ``case(g, mag, sticky, lsb)``).  By the sum's kind (exact and at most p + 1 bits, exact and wider, sticky),
    and by its last place: below every result's ulp, near the subnormal range (``chunk`` places each: there
    RNE's shift depends on both mag's length and lsb), or where every non-zero result is normal."""
    p, emin = fd.man_bits + 1, fd.emin
    kinds = [(f"no sticky, mag < 2^{p + 1}", lambda g, m, s: g.and_(g.not_(s), g.lt(m, 1 << (p + 1)))),
             (f"no sticky, 2^{p + 1} <= mag", lambda g, m, s: g.and_(g.not_(s), g.le(1 << (p + 1), m))),
             ("sticky", lambda g, m, s: s)]
    low = emin - fd.man_bits - window - 2  # below: the sum is under half the smallest subnormal
    cuts = [None, *range(low, emin, chunk), emin, None]
    places = []
    for lo, hi in zip(cuts, cuts[1:]):
        text = f"lsb < {hi}" if lo is None else f"{lo} <= lsb" if hi is None else f"{lo} <= lsb < {hi}"
        places.append((text, lo, hi))
    out: list[tuple[str, Any]] = []
    for kw, kind in kinds:
        for pw, lo, hi in places:
            def case(g: Any, m: Int, s: Bool, l: Int, kind: Any = kind, lo: Optional[int] = lo, hi: Optional[int] = hi) -> Bool:
                return g.all([kind(g, m, s), *([g.le(lo, l)] if lo is not None else []), *([g.lt(l, hi)] if hi is not None else [])])
            out.append((f"{kw}, {pw}", case))
    return out


def error_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the error query's own formula (``formula``: an
    :class:`~smtmma.queries.properties.error_bound.ErrorFormula` in units 2**(lsb - G) of the window sum's last
    place, :meth:`~smtmma.queries.properties.error_bound.ErrorFormula.place_units`), that leave its final check
    ``|Phi - exact| > scale * 1/2 ulp`` a Boolean step.

    Alg. 3 rounds a*b + c once, so the error is the rounding's.  On the model's own terms: a finite D has finite
    inputs; on them D is RNE of the window sum (neg, mag, lsb, sticky) (the glue); each term, placed at the
    window's top lmax, keeps ``kept`` units 2**lsb and cuts the rest (``cut``), which puts its exact magnitude in
    [kept, kept + 1] units, exactly kept without a cut, and never above the window; so the exact value's interval
    lies where (neg, mag, sticky) says (:func:`in_place`), and a sticky sum is at least 2**(window - 2) units.
    Then, per scale asked, one lemma on fresh constants (neg, mag, lsb, sticky, d, lo, hi): "d = RNE(neg, mag, lsb,
    sticky), a sticky mag that large and [lo, hi] in place imply no violation at either end", applied to the
    model's terms.  False when a fact is not proved (the chain says which).
    """
    alg, model, x = formula.alg, formula.model, formula.x
    fd, out, G = get_format(model.d_fmt), formula.out, formula.G
    ws = window_sum_of(alg, model, x)
    (neg, mag, lsb, sticky), p, c, window = ws.total, ws.p, ws.c, ws.window
    leads = [window_lead(alg, t, window, ws.low) for t in (p, c)]  # exact_sum2's own placement of each term
    lmax = alg.max(leads[0][0], leads[1][0])
    fin = all_finite(alg, *ws.inputs)
    chain.prove("a finite D has finite inputs (an infinite or NaN input makes D infinite or NaN)",
                implies(alg, [formula.finite], fin), uses=[])
    rne = round_pack(alg, fd, "rne", neg, mag, lsb, sticky)
    chain.prove(f"glue (Alg. 3 line 1): on finite inputs D is RNE-{fd.name} of the window sum",
                implies(alg, [fin], alg.eq(formula.d, rne)), uses=[])
    each = []
    for name, t, (lead, top), (_, whole, cut), outside in zip(("the product", "c"), (p, c), leads, formula.place_terms,
                                                               formula.summand_outside):
        kept, _, lost = window_place(alg, window, lmax, t.neg, lead, top)
        goal = alg.all([alg.not_(outside), alg.le(alg.shl(kept, G), whole),
                        alg.le(alg.add(whole, cut), alg.shl(alg.add(kept, 1), G)),
                        alg.or_(lost, alg.and_(alg.eq(whole, alg.shl(kept, G)), alg.eq(cut, 0)))])
        chain.prove(f"{name}, placed at the window's top, keeps its exact magnitude's whole units 2^lsb and cuts "
                    "less than one (none without a cut); it is not above the window", goal, uses=[])
        each.append(chain.last)
    chain.prove("the exact value's interval lies where the window sum (neg, mag, sticky) puts it; a sticky sum is "
                f"at least 2^{window - 2} units",
                alg.and_(in_place(alg, neg, mag, sticky, formula.exact, formula.exact_hi, G),
                         sticky_is_large(alg, mag, sticky, window)), uses=each)
    if chain.stopped:
        return False
    args = [neg, mag, lsb, sticky, formula.d, formula.exact, formula.exact_hi]
    done: set[Fraction] = set()

    def rounding_lemma(lam: Fraction) -> None:
        if lam in done:
            return
        done.add(lam)

        for where, case in rounding_cases(fd, window):

            def statement(g: Any, v: Sequence[Any], case: Any = case) -> Bool:
                n, m, l, s, d, lo, hi = v
                view = formula.place_view(g, unpack(g, out, d), g.sub(l, G))
                premise = [g.eq(d, round_pack(g, fd, "rne", n, m, l, s)), sticky_is_large(g, m, s, window),
                           in_place(g, n, m, s, lo, hi, G), case(g, m, s, l)]
                zero = g.const(0)
                return implies(g, premise, g.not_(g.or_(formula.violation(g, view, lo, zero, lam),
                                                        formula.violation(g, view, hi, zero, lam))))

            chain.establish(lemma(f"RNE-{fd.name} of a window sum ({where}) errs by at most {lam} * 1/2 ulp at both "
                                  "ends of the exact value's interval (or the output is not finite)", statement, args), args)

    formula.before_script.append(rounding_lemma)
    return True
