"""Facts about the FMA (Alg. 3, encodings/fma.py) and chains of FMAs (Alg. 4): monotonicity in each argument, symmetry,
one FMA's error bound (:func:`error_facts`, at the end of this module).

:func:`negated_chain_facts`: on (-A, B, -C) every FMA of the chain is the
original negated, through its window adder (facts in the symmetry query's
own formula).

:func:`monotone_facts`: raising one input never lowers a chain's D, proved
on the model's own terms.  One fma is one RNE of the exact a*b + c
(:func:`encodings.fma.fma`: :func:`fused_sum.exact_sum2`'s window adder,
then :func:`rounding.round_pack`).  Stated on the model's FMA, "raising c
never lowers fma(a, b, c)" gives bitwuzla no answer in 60 s (issue 8: FP64's
162-bit window with its 106-bit product), so the lemmas split the FMA at the
window adder's own pieces (:func:`fused_sum.window_lead`: a term as (lead,
top), top * 2**(lead - window) with top's leading bit at the window's top,
or (low, 0) for a zero).  With "lex" the value order of (lead, top) and
"rep" the order of (mag, sticky) at one last place (mag < mag', or equal and
no sticky lost), each lemma a function of its arguments, proved on fresh
constants and applied to the model's terms:

* **split** (of the patterns a, b, c): fma of finite non-negative a, b and c
  not below zero is +inf for c = +inf, else RNE of the window sum of the
  product's and c's leads;
* **terms**: c <= c' give well-formed, lex-ordered leads; the product's lead
  (its significand product an argument, zero where a significand is) is well
  formed, and a's or b's next value gives a lex-larger one, from the **ring**
  facts of the model's own products (:func:`apply_step_facts`: (s + 1) t =
  s t + t, the binade's end and start, zeros);
* **window order** (:func:`window_order_lemma`, on the leads F, G <=lex G'):
  RNE(F + G) <= RNE(F + G'), neither NaN nor below zero.  Its proof is the
  window and rounding lemmas applied in its own scope
  (:func:`~smtmma.proof_kernel.lemma.composed`): the *structure* of a window
  sum (mag = kept x + kept y, 0 or normalized; sticky a cut; lsb = lmax -
  window; negative only as -0); at one lmax the raised term keeps no less
  and the fixed one the same, so the kept sums are rep-ordered (*place*,
  *alike*, *adder*) and RNE at one lsb keeps that order (*rounding*); lmax up
  by one (five cases of lead(G) - lead(F)) gives the order at the first
  sum's lsb, where the second rounds as its doubled magnitude (*one more
  lsb*); up by two or more, RNE is ordered; RNE of a sum negative only as -0
  is not below zero (*sign*);
* **finish** (of the patterns): the split's two cases and the window order
  give D <= D', neither NaN nor below zero.

D = fma(a_{K-1}, b_{K-1}, ... fma(a_0, b_0, c)).  A move raises one operand
of one FMA, and the later FMAs read its result as their c; so FMA by FMA of
each raised run a fact D <= D' rests on the facts before it and these
lemmas' applications, each check a Boolean step (unit propagation), the
terms' static ranges and the product leads facts of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, NamedTuple, Optional, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fma import fma
from ..encodings.fused_sum import exact_sum2, signed, sum2_window, window_lead, window_place, window_sum
from ..encodings.rounding import round_pack
from ..encodings.terms import Term, input_term, product
from ..formats import Format, get_format
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import Lemma, composed, lemma, range_premise
from ..proof_kernel.parts import all_finite, implies
from ..queries.query_algebra import InputSet, QueryAlgebra, output_container, value_key
from ..simulate import decode_input
from .moves import finite_nonneg, next_value, nonneg
from .fused_sum import negated_rounded_sum2
from .rounding import negated_output_fact

__all__ = ["FmaMoves", "FmaShape", "FmaStep", "WindowRun", "WindowSum", "apply_step_facts", "error_facts", "fma_step",
           "in_place", "monotone_facts", "negated_chain_facts", "rep_le", "rounding_cases", "step_facts", "sticky_is_large",
           "structure", "sum_place", "supports_error_facts", "supports_monotone", "supports_symmetry", "up_by_one",
           "window_order_lemma", "window_run", "window_sum_of"]


# -- the window: leads, placements, sums -----------------------------------------------------------------


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


# -- terms: the leads of c and of the product ------------------------------------------------------------


def _lead_of(alg: QueryAlgebra, sh: FmaShape, t: Term) -> _Lead:
    lead, top = window_lead(alg, t, sh.window, sh.low)
    return _Lead(t.neg, lead, top)


def step_facts(alg: QueryAlgebra, p: int, s: Int, s2: Int, t: Int, m1: Int, m2: Int) -> list[Bool]:
    """The ring facts of m1 = s * t and m2 = s2 * t (p-bit significands, s2 the significand of the
    next value of s's input): the step s2 = s + 1, the binade's end s = 2**p - 1 and start s2 = 2**(p-1), zeros."""
    return [implies(alg, [alg.eq(s2, alg.add(s, 1))], alg.eq(m2, alg.add(m1, t))),  # ring: product step
            implies(alg, [alg.eq(s, (1 << p) - 1)], alg.eq(alg.add(m1, t), alg.shl(t, p))),  # step, power of two
            implies(alg, [alg.eq(s2, 1 << (p - 1))], alg.eq(m2, alg.shl(t, p - 1))),  # power of two
            implies(alg, [alg.eq(t, 0)], alg.and_(alg.eq(m1, 0), alg.eq(m2, 0))),  # zero
            implies(alg, [alg.eq(s, 0)], alg.eq(m1, 0)), implies(alg, [alg.eq(s2, 0)], alg.eq(m2, 0))]


#: significand bits up to which the solvers prove the binade's end, (2^p - 1) t + t = 2^p t, as it is (FP32's 24);
#: at FP64's 53 bitwuzla gives no answer in 120 s, and the lemma takes the wide step at (s, s + 1, t) as given
_NARROW = 24


def _with_wide_step(step: Lemma, p: int, t_first: bool, *, at_end: bool = False) -> Lemma:
    """The ring step lemma, its proof given "S' = S + 1 gives S' T = S T + T" on (2p+1)-bit S, S', T (every value of
    the width, so no range premise): applied to the sign-extended significands, whose products the step's body
    multiplies at that width, it leaves z3 no multiplier to bit-blast (z3 gives no answer in 120 s on the step alone
    at p = 11; the wide form is one rewriting step).  Unchanged where the body multiplies otherwise."""
    w = 2 * p + 1
    ext = [f"((_ sign_extend {w - q.bits}) a{k})" if q.bits < w else f"a{k}" for k, q in enumerate(step.params)]
    mul = (lambda x, y: f"(bvmul {y} {x})") if t_first else (lambda x, y: f"(bvmul {x} {y})")
    if mul(ext[0], ext[2]) not in step.body or (not at_end and mul(ext[1], ext[2]) not in step.body):
        return step

    def wide(g: QueryAlgebra, v: list[Int]) -> Bool:
        s_, s2_, t_ = (g.term_text(x) for x in v)
        return Bool(g, f"(=> (= {s2_} (bvadd {s_} (_ bv1 {w}))) (= {mul(s2_, t_)} (bvadd {mul(s_, t_)} {t_})))")

    full = Int(QueryAlgebra(), "x", -(1 << (w - 1)), (1 << (w - 1)) - 1)
    what = "T S' = T S + T" if t_first else "S' T = S T + T"
    if at_end:  # the step at (s, s + 1, t): with s = 2^p - 1 the rewriter turns 2^p T into a shift
        ext = [ext[0], f"(bvadd {ext[0]} (_ bv1 {w}))", ext[2]]
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
        elif i == 1 and p > _NARROW:
            lem = _with_wide_step(lem, p, t_first, at_end=True)
        if not chain.establish(lem, [s, s2, t]):
            return []
        apps.append(chain.applied_last)
    return apps


# -- monotonicity on the model's own terms ----------------------------------------------------------------


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`monotone_facts` applies: a chain of FMAs in one IEEE format with subnormals, read as is (the
    model runs the chain of FMAs of its NaN style; the split lemma, on non-negative operands, meets no NaN)."""
    if model.kind != "fma" or not model.a_fmt == model.b_fmt == model.c_fmt == model.d_fmt or K < 1:
        return False
    f = get_format(model.c_fmt)
    return model.via in (None, f.name) and not model.ftz_inputs and f.nan == "ieee" and f.subnormals and f.signed


class WindowRun(NamedTuple):
    """One FMA's window sum from its two terms' leads, x first as :func:`~smtmma.encodings.fused_sum.exact_sum2`
    adds them (the product, then c): lmax, each term's (kept, cut) there, the sum (neg, mag, lsb, sticky), kept x +
    kept y and either cut, and the sum's RNE pattern."""

    lmax: Int
    kx: tuple[Int, Bool]
    ky: tuple[Int, Bool]
    total: tuple[Bool, Int, Int, Bool]
    kept: Int
    cut: Bool
    r: Int


def window_run(g: QueryAlgebra, sh: FmaShape, x: _Lead, y: _Lead) -> WindowRun:
    """:class:`WindowRun` of the leads x and y, built by the model's own functions (its terms are the model's)."""
    lmax, kx, ky = _places(g, sh, x, y)
    total = window_sum(g, sh.window, x.triple(), y.triple())
    return WindowRun(lmax, kx, ky, total, g.add(kx[0], ky[0]), g.or_(kx[1], ky[1]), _rne(g, sh, *total))


def _leads(v: Sequence[Any]) -> tuple[_Lead, _Lead, _Lead]:
    """The fixed term F and the raised term before and after, G and G', from nine arguments (neg, lead, top each)."""
    return _Lead(*v[0:3]), _Lead(*v[3:6]), _Lead(*v[6:9])


def _window_pair(g: QueryAlgebra, sh: FmaShape, v: Sequence[Any], raised_first: bool) -> tuple[WindowRun, WindowRun]:
    """Both runs' window sums: F beside G, then beside G' (G first with ``raised_first``: the product raised)."""
    F, G1, G2 = _leads(v)
    pair = (lambda G: (G, F)) if raised_first else (lambda G: (F, G))
    return window_run(g, sh, *pair(G1)), window_run(g, sh, *pair(G2))


def _placed(R: WindowRun, raised_first: bool) -> tuple[tuple[Int, Bool], tuple[Int, Bool]]:
    """((kept, cut) of the fixed term, (kept, cut) of the raised one) in the run R."""
    return (R.ky, R.kx) if raised_first else (R.kx, R.ky)


def _window_helpers(sh: FmaShape, raised_first: bool) -> Callable[[Any, Sequence[Any]], list[Any]]:
    """The steps of :func:`window_order_lemma`'s proof (the window and rounding lemmas), each a lemma applied to
    terms of its parameters: the structure of each sum; at one lmax the raised term keeps no less and the fixed one
    the same, so the kept sums are rep-ordered, and RNE at one lsb keeps that order; lmax up by one (five cases of
    lead(G) - lead(F)) gives the order at the first sum's lsb, where the second sum rounds as its doubled magnitude;
    lmax up by two or more; each RNE not below zero."""
    w, big, U = sh.window, sh.window + 2, _union(sh)

    def steps(g: Any, v: Sequence[Any]) -> list[Any]:
        R1, R2 = _window_pair(g, sh, v, raised_first)
        F, G1, G2 = _leads(v)
        out: list[Any] = []

        def structure_st(h: Any, u: Sequence[Any]) -> Bool:
            x, y = _Lead(*u[0:3]), _Lead(*u[3:6])
            R = window_run(h, sh, x, y)
            return implies(h, [_well_formed(h, sh, x, U), _well_formed(h, sh, y, U)], structure(h, sh, R.total, R.lmax, R.kx, R.ky))

        for G in (G1, G2):
            X, Y = (G, F) if raised_first else (F, G)
            out.append(("window sum of non-negative terms: mag = kept x + kept y (0 or normalized, 0 only for two zeros), "
                        "sticky = a cut, lsb = lmax - window, negative only as -0", structure_st, [*X.triple(), *Y.triple()]))

        def on_leads(label: str, premise: Callable[..., list[Bool]], goal: Callable[..., Bool]) -> None:
            def st(h: Any, u: Sequence[Any]) -> Bool:
                S1, S2 = _window_pair(h, sh, u, raised_first)
                f, g1, g2 = _leads(u)
                wf = [_well_formed(h, sh, t, U) for t in (f, g1, g2)] + [_lex(h, g1, g2)]
                return implies(h, wf + premise(h, f, g1, g2, S1, S2), goal(h, S1, S2))
            out.append((label, st, list(v)))

        def kept_order(h: Any, S1: WindowRun, S2: WindowRun) -> Bool:
            (_, (k1, c1)), (_, (k2, c2)) = _placed(S1, raised_first), _placed(S2, raised_first)
            return _kept_order(h, k1, c1, k2, c2)

        def alike(h: Any, S1: WindowRun, S2: WindowRun) -> Bool:
            ((k1, c1), _), ((k2, c2), _) = _placed(S1, raised_first), _placed(S2, raised_first)
            return h.and_(h.eq(k1, k2), h.eq(h.b2i(c1), h.b2i(c2)))

        same = lambda h, f, g1, g2, S1, S2: [h.eq(S1.lmax, S2.lmax)]  # noqa: E731
        on_leads("window, place: at one lmax, G <=lex G' keeps no more bits of G than of G', and no cut of G' is lost "
                 "when they keep the same", same, kept_order)
        on_leads("window, the fixed term at one lmax is placed alike", same, alike)
        on_leads("window, adder: G's kept bits no more than G''s (no cut lost when equal), F's alike, give rep order "
                 "of kept x + kept y", lambda h, f, g1, g2, S1, S2: [kept_order(h, S1, S2), alike(h, S1, S2)],
                 lambda h, S1, S2: rep_le(h, S1.kept, S1.cut, S2.kept, S2.cut))
        for lo, hi in ((None, 0), (1, 2), (3, 40), (41, 80), (81, None)):
            def up1(h: Any, f: _Lead, g1: _Lead, g2: _Lead, S1: WindowRun, S2: WindowRun, lo: Optional[int] = lo,
                    hi: Optional[int] = hi) -> list[Bool]:
                d = h.sub(g1.lead, f.lead)
                return [h.eq(h.add(S1.lmax, 1), S2.lmax), *([h.le(lo, d)] if lo is not None else []),
                        *([h.le(d, hi)] if hi is not None else [])]
            on_leads(f"window, lmax up by one, lead(G) - lead(F) in [{lo if lo is not None else '-inf'}, "
                     f"{hi if hi is not None else 'inf'}]: kept x + kept y is rep-ordered with twice the second's",
                     up1, lambda h, S1, S2: up_by_one(h, S1.kept, S1.cut, S2.kept, S2.cut))

        def up2(h: Any, f: _Lead, g1: _Lead, g2: _Lead, S1: WindowRun, S2: WindowRun) -> list[Bool]:
            (n1, m1, l1, s1), (n2, m2, l2, s2) = S1.total, S2.total
            return [h.le(h.add(S1.lmax, 2), S2.lmax), _zero_if_neg(h, n1, S1.kept, S1.cut), h.eq(m1, S1.kept),
                    h.eq(h.b2i(s1), h.b2i(S1.cut)), h.eq(l1, h.sub(S1.lmax, w)), h.eq(m2, S2.kept),
                    h.eq(h.b2i(s2), h.b2i(S2.cut)), h.eq(l2, h.sub(S2.lmax, w)), h.not_(n2)]

        on_leads("window, lmax up by two or more: RNE of the first sum is no more than of the second", up2,
                 lambda h, S1, S2: _vle(h, sh, S1.r, S2.r))

        def rounding_st(h: Any, u: Sequence[Any]) -> Bool:
            n1, m1, l1, s1, n2, m2, l2, s2 = u
            premise = [rep_le(h, m1, s1, m2, s2), _zero_if_neg(h, n1, m1, s1), _zero_if_neg(h, n2, m2, s2),
                       _normal_mag(h, sh, m1, big), _normal_mag(h, sh, m2, big), h.eq(l1, l2)]
            return implies(h, premise, _vle(h, sh, _rne(h, sh, n1, m1, l1, s1), _rne(h, sh, n2, m2, l2, s2)))

        out.append(("rounding: rep order at one lsb gives no smaller RNE (magnitudes 0 or normalized)", rounding_st,
                    [*R1.total, *R2.total]))
        (n1, m1, l1, s1), (n2, m2, l2, s2) = R1.total, R2.total
        nb = g.bconst(False)
        wide = g.add(g.shl(m2, 1), g.b2i(s2))

        def lsb_st(h: Any, u: Sequence[Any]) -> Bool:
            n, m, la, lb, s, z = u
            premise = [h.not_(n), h.not_(z), h.le(1 << (w - 1), m), h.lt(m, 1 << (w + 1)), h.eq(lb, h.add(la, 1))]
            return implies(h, premise, h.eq(_rne(h, sh, n, m, lb, s), _rne(h, sh, z, h.add(h.shl(m, 1), h.b2i(s)), la, s)))

        out.append(("rounding, one more lsb: (mag, lsb + 1, sticky) rounds as (2 mag + sticky, lsb, sticky)", lsb_st,
                    [n2, m2, l1, l2, s2, nb]))
        out.append(("rounding: rep order at one lsb gives no smaller RNE (the second sum doubled)", rounding_st,
                    [n1, m1, l1, s1, nb, wide, l1, s2]))

        def sign_st(h: Any, u: Sequence[Any]) -> Bool:
            n, m, l, s = u
            return implies(h, [_normal_mag(h, sh, m, big), _zero_if_neg(h, n, m, s)], nonneg(h, sh.fmt, _rne(h, sh, n, m, l, s)))

        for R in (R1, R2):
            out.append(("rounding, sign: RNE of a sum negative only as -0 is not NaN and not below zero", sign_st, list(R.total)))
        return out

    return steps


def window_order_lemma(sh: FmaShape, raised_first: bool, args: Sequence[Any]) -> Lemma:
    """"Raising one term never lowers the FMA's RNE of the window sum": for well-formed leads F, G <=lex G' (nine
    arguments, neg, lead and top each), RNE of F beside G is at most RNE of F beside G', neither NaN nor below zero;
    G is added first with ``raised_first`` (the product raised), else F (the product fixed, c raised).  Proved from
    :func:`_window_helpers`' lemmas applied in its scope."""

    def st(g: Any, v: Sequence[Any]) -> Bool:
        R1, R2 = _window_pair(g, sh, v, raised_first)
        F, G1, G2 = _leads(v)
        U = _union(sh)
        premise = [_well_formed(g, sh, t, U) for t in (F, G1, G2)] + [_lex(g, G1, G2)]
        return implies(g, premise, g.all([nonneg(g, sh.fmt, R1.r), nonneg(g, sh.fmt, R2.r), _vle(g, sh, R1.r, R2.r)]))

    what = "the product" if raised_first else "c"
    return composed(f"window order ({what} raised): well-formed leads F and G <=lex G' give RNE(F + G) <= RNE(F + G'), "
                    "neither NaN nor below zero", st, args, _window_helpers(sh, raised_first))


class FmaStep(NamedTuple):
    """One FMA of a run on the model's own terms: its patterns a, b, c, their fields, the product's significand
    (the model's multiplication), the product's and c's leads, and D's pattern."""

    a: Int
    b: Int
    c: Int
    ua: Unpacked
    ub: Unpacked
    uc: Unpacked
    m: Int
    x: _Lead
    y: _Lead
    d: Int


def fma_step(alg: QueryAlgebra, sh: FmaShape, a: Int, b: Int, c: Int) -> FmaStep:
    """:class:`FmaStep` of fma(a, b, c) (Alg. 3), built by the functions the model runs (so its terms are the model's)."""
    f = sh.fmt
    ua, ub, uc = (unpack(alg, f, v) for v in (a, b, c))
    p, _ = product(alg, ua, ub)
    d = fma(alg, ua, ub, uc, out=f, nan=sh.nan)
    return FmaStep(a, b, c, ua, ub, uc, p.sig, _lead_of(alg, sh, p), _lead_of(alg, sh, input_term(uc)), d)


def _zero_times(g: Any, s: Int, t: Int, m: Int) -> Bool:
    """"s = 0 or t = 0 gives m = 0" (m the product s * t)."""
    return implies(g, [g.or_(g.eq(s, 0), g.eq(t, 0))], g.eq(m, 0))


def _product_of(g: Any, ua: Unpacked, ub: Unpacked, m: Int) -> Term:
    """The product term of ``ua`` and ``ub`` with significand ``m`` (an argument: the model's product), as
    :func:`~smtmma.encodings.terms.product` builds it."""
    return Term(g.xor(ua.neg, ub.neg), m, g.add(ua.exp, ub.exp), ua.frac + ub.frac)


class FmaMoves:
    """The lemmas of one FMA's monotonicity, each a function of the run's terms, established in ``chain`` when first
    applied (each method returns the application's text, or None where the solver did not prove the lemma): the
    split, the leads of c and of the product, the product's lead when a or b is raised (with the ring facts of the
    model's own significand products), the window order, the finish, and "no drop" as the query states it."""

    def __init__(self, chain: LemmaChain, sh: FmaShape) -> None:
        self.chain, self.sh = chain, sh

    def split(self, s: FmaStep) -> Optional[str]:
        """fma(a, b, c) of finite non-negative a, b and c not below zero is +inf for c = +inf, else RNE of the window
        sum of the product's and c's leads."""
        sh, f = self.sh, self.sh.fmt

        def st(g: Any, v: Sequence[Any]) -> Bool:
            a, b, c = v
            u = [unpack(g, f, x) for x in v]
            p, _ = product(g, u[0], u[1])
            R = window_run(g, sh, _lead_of(g, sh, p), _lead_of(g, sh, input_term(u[2])))
            premise = [finite_nonneg(g, f, a), finite_nonneg(g, f, b), nonneg(g, f, c)]
            return implies(g, premise, g.eq(fma(g, *u, out=f, nan=sh.nan), g.ite(u[2].is_inf, f.inf_bits(), R.r)))

        style = " (NaNs propagated: none arises here)" if sh.nan == "propagate" else ""
        return self.chain.use(f"split (Alg. 3): fma{style} of finite non-negative a, b and c not below zero is +inf for "
                              "c = +inf, else RNE of the window sum of the product's and c's leads", st, [s.a, s.b, s.c])

    def c_leads(self, c: Int, c2: Int) -> Optional[str]:
        """Finite non-negative c <= c' give well-formed, lex-ordered leads."""
        sh, f = self.sh, self.sh.fmt

        def st(g: Any, v: Sequence[Any]) -> Bool:
            y, y2 = (_lead_of(g, sh, input_term(unpack(g, f, x))) for x in v)
            U = _union(sh)
            premise = [finite_nonneg(g, f, v[0]), finite_nonneg(g, f, v[1]), _vle(g, sh, v[0], v[1])]
            return implies(g, premise, g.all([_well_formed(g, sh, y, U), _well_formed(g, sh, y2, U), _lex(g, y, y2)]))

        return self.chain.use("terms, c: finite non-negative c <= c' give well-formed, lex-ordered leads", st, [c, c2])

    def product_lead(self, s: FmaStep) -> Optional[list[str]]:
        """Finite non-negative a, b give a well-formed product lead (its significand an argument): the applications of
        the zero-product ring lemma and of the lead lemma."""
        sh, f = self.sh, self.sh.fmt

        zero = self.zero_product(s)
        if zero is None:
            return None

        def st(g: Any, v: Sequence[Any]) -> Bool:
            a, b, m = v
            ua, ub = unpack(g, f, a), unpack(g, f, b)
            x = _lead_of(g, sh, _product_of(g, ua, ub, m))
            premise = [finite_nonneg(g, f, a), finite_nonneg(g, f, b), _zero_times(g, ua.sig, ub.sig, m)]
            return implies(g, premise, _well_formed(g, sh, x, _union(sh)))

        app = self.chain.use("terms, product lead: finite non-negative a, b give a well-formed lead (the significand "
                             "product an argument, zero where a significand is)", st, [s.a, s.b, s.m])
        return None if app is None else [zero, app]

    def zero_product(self, s: FmaStep) -> Optional[str]:
        """Ring: a zero significand gives a zero product (the model's own multiplication)."""

        def st(g: Any, v: Sequence[Any]) -> Bool:
            return _zero_times(g, v[0], v[1], g.mul(v[0], v[1]))

        return self.chain.use(f"ring ({self.sh.sig_bits}-bit significands): a zero factor gives a zero product", st,
                              [s.ua.sig, s.ub.sig])

    def product_raised(self, who: str, s: FmaStep, s2: FmaStep) -> Optional[list[str]]:
        """Raising ``who`` (a or b) to its next value gives a well-formed, lex-larger product lead: the ring facts of
        the model's significand products (:func:`apply_step_facts`), then a lemma whose products are arguments."""
        sh, f, p = self.sh, self.sh.fmt, self.sh.sig_bits
        (um, um2, uo) = (s.ua, s2.ua, s.ub) if who == "a" else (s.ub, s2.ub, s.ua)
        ring = apply_step_facts(self.chain, p, um.sig, um2.sig, uo.sig, t_first=who == "b")
        if not ring:
            return None

        def st(g: Any, v: Sequence[Any]) -> Bool:
            x, x2, o, n1, n2 = v
            u, u2, w_ = unpack(g, f, x), unpack(g, f, x2), unpack(g, f, o)
            pair = (lambda m: (m, w_)) if who == "a" else (lambda m: (w_, m))
            X1, X2 = _lead_of(g, sh, _product_of(g, *pair(u), n1)), _lead_of(g, sh, _product_of(g, *pair(u2), n2))
            premise = [finite_nonneg(g, f, x), finite_nonneg(g, f, x2), finite_nonneg(g, f, o), next_value(g, f, x, x2),
                       *step_facts(g, p, u.sig, u2.sig, w_.sig, n1, n2)]
            return implies(g, premise, g.and_(_well_formed(g, sh, X2, _union(sh)), _lex(g, X1, X2)))

        x, x2, o = (s.a, s2.a, s.b) if who == "a" else (s.b, s2.b, s.a)
        app = self.chain.use(f"terms, product lead, {who} raised: its next value gives a well-formed, lex-larger lead "
                             "(the significand products arguments, ring facts given)", st, [x, x2, o, s.m, s2.m])
        return None if app is None else [*ring, app]

    def finish(self, s: FmaStep, s2: FmaStep, r: Int, r2: Int) -> Optional[str]:
        """The split's two cases: c <= c' (both not below zero; c' = c where a or b rose), each D the RNE pattern r or
        +inf for an infinite c (``r``, ``r2``: each step's window run's RNE), and r <= r' where both c are finite (r
        not below zero where c is) give D <= D', neither NaN nor below zero (a lemma of the patterns: the step's
        check is then Boolean)."""
        sh, f = self.sh, self.sh.fmt

        def st(g: Any, v: Sequence[Any]) -> Bool:
            c, c2, d, d2, r, r2 = v
            u, u2 = unpack(g, f, c), unpack(g, f, c2)
            fin = [finite_nonneg(g, f, c), finite_nonneg(g, f, c2), _vle(g, sh, c, c2)]
            premise = [nonneg(g, f, c), nonneg(g, f, c2), _vle(g, sh, c, c2),
                       g.eq(d, g.ite(u.is_inf, f.inf_bits(), r)), g.eq(d2, g.ite(u2.is_inf, f.inf_bits(), r2)),
                       implies(g, fin, g.all([nonneg(g, f, r), nonneg(g, f, r2), _vle(g, sh, r, r2)])),
                       implies(g, [finite_nonneg(g, f, c), finite_nonneg(g, f, c), _vle(g, sh, c, c)],
                               g.all([nonneg(g, f, r), nonneg(g, f, r), _vle(g, sh, r, r)]))]
            return implies(g, premise, g.all([nonneg(g, f, d), nonneg(g, f, d2), _vle(g, sh, d, d2)]))

        return self.chain.use("finish (Alg. 3): c <= c', D = +inf for an infinite c, else the RNE pattern r, and r <= r' "
                              "where c and c' are finite give D <= D', neither NaN nor below zero", st,
                              [s.c, s2.c, s.d, s2.d, r, r2])

    def no_drop(self, d: Int, d2: Int) -> Optional[str]:
        """D <= D' (neither NaN) is not "D' is below D" as the query states it."""
        f = self.sh.fmt

        def st(g: Any, v: Sequence[Any]) -> Bool:
            a, b = v
            u, u2 = unpack(g, f, a), unpack(g, f, b)
            below = g.all([g.not_(u.is_nan), g.not_(u2.is_nan), g.lt(value_key(g, f, b), value_key(g, f, a))])
            return implies(g, [nonneg(g, f, a), nonneg(g, f, b), _vle(g, self.sh, a, b)], g.not_(below))

        return self.chain.use("D <= D', neither NaN, is not D' below D", st, [d, d2])

    def window(self, raised_first: bool, F: _Lead, G1: _Lead, G2: _Lead) -> Optional[str]:
        """:func:`window_order_lemma` applied to the model's leads."""
        args = [*F.triple(), *G1.triple(), *G2.triple()]
        lem = window_order_lemma(self.sh, raised_first, args)
        return self.chain.applied_last if self.chain.establish(lem, args) else None


def _each(apps: Optional[list[str]]) -> list[Optional[str]]:
    """A list of applications, or [None] where a lemma was not proved."""
    return [None] if apps is None else list(apps)


def monotone_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the monotonicity query's own formula (``formula``: a
    :class:`~smtmma.queries.properties.monotonicity.MoveFormula`, every single move of one input beside the inputs),
    that leave its final check ("some move lowers D") Boolean steps.

    D is the chain of FMAs (Alg. 4), each RNE of the window sum of its product's and c's leads (Alg. 3, the split
    lemma).  A move raises one input of one FMA; the later FMAs read its result as their c.  So, FMA by FMA of each
    raised run, on the model's own terms: where c rose (c <= c', +inf included) or a or b took its next value, the
    leads are well formed and the raised one lex-larger (lemmas of the patterns, the product's significand an
    argument, ring facts of the model's products), and the window order lemma (its proof the window and rounding
    lemmas, applied in its scope) gives RNE(F + G) <= RNE(F + G'); the finish lemma turns that and the split into
    D <= D', neither NaN nor below zero (a fact per FMA a move reaches: each a Boolean step from the applications,
    whatever the FMAs before it), and no move lowers D (a fact per position).  Each lemma is proved on fresh
    constants once and applied wherever it serves.  False when one is not proved (the chain says which).
    """
    alg, model, x = formula.alg, formula.model, formula.x
    sh = FmaShape.of(model)
    f = sh.fmt
    mv = FmaMoves(chain, sh)
    K = len(x.a)

    def chain_of(y: Any) -> list[FmaStep]:
        steps, c = [], y.c
        for k in range(K):
            steps.append(fma_step(alg, sh, y.a[k], y.b[k], c))
            c = steps[-1].d
        return steps

    inputs: dict[str, Optional[int]] = {}

    def finite_input(v: Int) -> Optional[int]:
        """The fact "this input is finite and not below zero" (the domain's), once per pattern."""
        if str(v.raw) not in inputs:
            chain.prove("an input of the domain is finite and not below zero", finite_nonneg(alg, f, v), uses=[])
            inputs[str(v.raw)] = chain.last
        return inputs[str(v.raw)]

    leads: dict[str, Optional[int]] = {}

    def product_fact(s: FmaStep) -> Optional[int]:
        """The fact "the product's lead is well formed", once per product (its lemma's premise bounds the model's
        significand product: a check of its own, not a step of every later one)."""
        key = str(s.m.raw)
        if key not in leads:
            apps = mv.product_lead(s)
            if apps is None:
                return None
            chain.prove("the product's lead is well formed", _well_formed(alg, sh, s.x, _union(sh)),
                        uses=[finite_input(s.a), finite_input(s.b)], applied=apps)
            leads[key] = chain.last
        return leads[key]

    ranges: dict[str, Optional[int]] = {}

    def in_range(*terms: Int) -> list[Optional[int]]:
        """The facts "lo <= t <= hi" of each term's static range, the premise a lemma's application states of it
        (:func:`~smtmma.proof_kernel.lemma.range_premise`), once per term: a check of their own (0.2 s for an FP64
        FMA's D), so that no later check re-derives them through the FMAs before it (2.4 s each at the third)."""
        out = []
        for v in terms:
            if str(v.raw) not in ranges:
                chain.prove("a term lies in its static range", range_premise(alg, v), uses=[])
                ranges[str(v.raw)] = chain.last
            out.append(ranges[str(v.raw)])
        return out

    def step_fact(what: str, s: FmaStep, s2: FmaStep, raised: Optional[str], before: list[Optional[int]]) -> Optional[int]:
        """D <= D' at one FMA (both not NaN and not below zero): c rose (``raised`` None; c <= c' a fact in
        ``before``, or c' = c) or ``raised`` (a, b) took its next value; ``before``: the facts about the c's."""
        inputs = [finite_input(v) for v in (s.a, s.b, s2.a, s2.b)]
        uses = [product_fact(s), *in_range(s.c, s2.c, *(v for t in (s.x, s.y, s2.x, s2.y) for v in (t.lead, t.top)))]
        apps = [mv.c_leads(s.c, s.c)]
        if raised is None:
            apps += [mv.c_leads(s.c, s2.c), mv.window(False, s.x, s.y, s2.y), mv.window(False, s.x, s.y, s.y)]
        else:
            moved = mv.product_raised(raised, s, s2)
            if moved is None:
                return None
            chain.prove(f"{what}: the raised product's lead is well formed and lex-larger",
                        alg.and_(_well_formed(alg, sh, s2.x, _union(sh)), _lex(alg, s.x, s2.x)), uses=inputs, applied=moved)
            uses.append(chain.last)
            apps += [mv.window(True, s.y, s.x, s2.x), mv.window(True, s.y, s.x, s.x)]
        c, c2, (r, r2) = s.c, s2.c, (window_run(alg, sh, t.x, t.y).r for t in (s, s2))
        splits, finish = [mv.split(s), mv.split(s2)], mv.finish(s, s2, r, r2)
        if finish is None or any(a is None for a in apps + splits) or chain.stopped:
            return None
        # each check below is unit propagation from its facts and applications (a case split inside one check
        # sent the SAT solver through the FMAs' circuits: 18 s at the fourth FP64 FMA)
        cases = []
        for what_c, (p, q) in (("c and c' finite", (c2, r2)), ("c finite", (c, r))):
            fin = [finite_nonneg(alg, f, c), finite_nonneg(alg, f, p), _vle(alg, sh, c, p)]
            chain.prove(f"{what}: where {what_c}, RNE of the window sums does not fall, neither NaN nor below zero",
                        implies(alg, fin, alg.all([nonneg(alg, f, r), nonneg(alg, f, q), _vle(alg, sh, r, q)])),
                        uses=uses, applied=[a for a in apps if a is not None])
            cases.append(chain.last)
        goal = alg.all([nonneg(alg, f, s.d), nonneg(alg, f, s2.d), _vle(alg, sh, s.d, s2.d)])
        chain.prove(what, goal, uses=before + inputs + cases + in_range(c, c2, s.d, s2.d, r, r2),
                    applied=[a for a in [*splits, finish] if a is not None])
        return chain.last if not chain.stopped else None

    def own(steps: list[FmaStep], d: Int) -> bool:
        """Whether the FMAs rebuilt end in the model's own D (else the facts would be about other FMAs: the chain stops)."""
        if steps[-1].d.raw == d.raw:
            return True
        chain.stopped = "the chain of FMAs the facts are about is not the model's own D"
        return False

    base = chain_of(x)
    if not own(base, formula.d):
        return False
    below: list[Optional[int]] = [finite_input(x.c)]  # per FMA of the first run: its c is not below zero
    for k, s in enumerate(base):
        below.append(step_fact(f"FMA {k + 1}: D is not NaN and not below zero", s, s, None, below[-1:]))
        if below[-1] is None:
            return False
    for label in formula.labels:
        y = formula.raised[label]
        steps = chain_of(y)
        if not own(steps, formula.outputs[label]):
            return False
        at = 0 if label == "c" else int(label[1:])
        last: Optional[int] = None
        if label == "c":
            finite_input(y.c)
            chain.prove("c's next value is not below c", alg.all([nonneg(alg, f, x.c), nonneg(alg, f, y.c),
                                                                  _vle(alg, sh, x.c, y.c)]), uses=[])
            last = chain.last
        for k in range(at, K):
            s, s2 = base[k], steps[k]
            if k == at and label != "c":
                last = step_fact(f"raising {label} (FMA {k + 1}): D does not fall, neither NaN nor below zero", s, s2,
                                 label[0], [below[k]])
            else:
                last = step_fact(f"raising {label}, FMA {k + 1}: c rose (c <= c', +inf included), so D does not fall",
                                 s, s2, None, [below[k], last])
            if last is None:
                return False
        drop = mv.no_drop(base[-1].d, steps[-1].d)
        if drop is None:
            return False
        chain.prove(f"raising {label} to its next value never lowers D", alg.not_(formula.drops[label]), uses=[last],
                    applied=[drop])
    return not chain.stopped


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
