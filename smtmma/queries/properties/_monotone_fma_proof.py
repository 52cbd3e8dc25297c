"""A compositional monotonicity proof of a chain of standard FMAs (Alg. 4, every step Alg. 3): the lemmas of
:mod:`_monotone_fma` composed, first into one FMA, then along the chain.

D = fma(a_{K-1}, b_{K-1}, ... fma(a_0, b_0, c)).  Raising one input raises one
operand of one FMA, and the later FMAs read its result as their c; so the
chain is monotone if one FMA is.  The lemmas (each a check-sat expecting unsat):

* **glue**: the model's D is the chain of :func:`encodings.fma.fma`; **split**:
  one fma of finite non-negative a, b and non-negative c (+inf and -0
  included) is +inf for c = +inf, else RNE of :func:`fused_sum.window_sum` of
  the product's and c's leads (:func:`fused_sum.window_lead`); **commutes**:
  fma(a, b, c) = fma(b, a, c);
* the window, rounding and term lemmas of :mod:`_monotone_fma`;
* **FMA in c** and **FMA in a** (compositions): the split fma over fresh
  variables, one per piece applied (a lead, a placement, a window sum, an
  RNE), named by its operands, with every lemma's instance asserted: raising
  c (to any larger value, +inf included) or a (to its next value) never
  lowers the result, and results are not NaN and not below zero;
* **chain** (one composition per input position): the chain over fresh
  variables, one per FMA applied, with the FMA lemmas' instances at each
  FMA the raised input reaches (b through commutativity).

As in :mod:`_monotone_chain`, applying a lemma stated on fresh operands to the
pieces named in a composition is the one step no solver checks in the proof;
:meth:`_Apps.definitions` (each fresh variable defined as its piece) lets a
test check every asserted fact at pinned inputs.
"""

from __future__ import annotations

from ...encodings.algebra import Bool, Int
from ...encodings.fields import unpack
from ...encodings.fma import fma
from ...encodings.fused_sum import window_place, window_sum
from ...encodings.rounding import round_pack
from ...encodings.terms import input_term, product
from ...formats import get_format
from ...models import Model
from ...simulate import run_model
from .._twins import InputSet, QueryAlgebra, Runner, value_key
from ._monotone_chain import _input, _moved
from ._monotone_fma import (FmaShape, _Lead, _kept_order, _lead_of, _lex, _normal_mag, _rep, _union, _vle, _well_formed,
                            _zero_if_neg, nonneg, rounding_lemmas, structure, term_lemmas, up_by_one, window_lemmas)
from ._pieces import Composed, Pieces, piece_key
from ...proof_kernel.parts import Part, PartsProof, implies, negated_script, ranged_var, run_parts

__all__ = ["supports_fma_monotone", "prove_fma_monotone"]


def supports_fma_monotone(model: Model, K: int) -> bool:
    """Whether :func:`prove_fma_monotone` applies: a chain of FMAs in one IEEE format with subnormals, read as is."""
    if model.kind != "fma" or not model.a_fmt == model.b_fmt == model.c_fmt == model.d_fmt or K < 1:
        return False
    f = get_format(model.c_fmt)
    return model.via in (None, f.name) and not model.ftz_inputs and f.nan == "ieee" and f.subnormals and f.signed


# -- fresh variables for the pieces ---------------------------------------------------------------------


class _Apps(Pieces):
    """The FMA's pieces: leads, placements, window sums, RNE, whole FMAs (one fresh variable or tuple each)."""

    def __init__(self, sh: FmaShape) -> None:
        super().__init__()
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
            x = self.memo[key] = _Lead(self._bool(f"ln{n}"), ranged_var(self.alg, f"ll{n}", self.sh.low, _union(self.sh)[1]),
                                       ranged_var(self.alg, f"lt{n}", 0, (1 << self.sh.window) - 1))
            alg, f = self.alg, self.sh.fmt
            term = (lambda: product(alg, unpack(alg, f, ops[0]), unpack(alg, f, ops[1]))[0]) if what == "p" else \
                (lambda: input_term(unpack(alg, f, ops[0])))
            self._real.append(lambda: self._same(x.triple(), _lead_of(alg, self.sh, term()).triple()))
        return self.memo[key]  # type: ignore[return-value]

    def place(self, lmax: Int, t: _Lead) -> tuple[Int, Bool]:
        """(kept, cut) of :func:`window_place` for term t at lmax."""
        key = ("place", *piece_key(lmax, *t.triple()))
        if key not in self.memo:
            n = len(self.memo)
            v = self.memo[key] = (ranged_var(self.alg, f"pk{n}", 0, (1 << self.sh.window) - 1), self._bool(f"pc{n}"))
            def real() -> Bool:
                kept, _, cut = window_place(self.alg, self.sh.window, lmax, *t.triple())
                return self._same(v, (kept, cut))

            self._real.append(real)
        return self.memo[key]  # type: ignore[return-value]

    def wsum(self, x: _Lead, y: _Lead) -> tuple[Bool, Int, Int, Bool]:
        """(neg, mag, lsb, sticky) of :func:`window_sum` of x and y."""
        key = ("sum", *piece_key(*x.triple(), *y.triple()))
        if key not in self.memo:
            n = len(self.memo)
            v = self.memo[key] = (self._bool(f"sn{n}"), ranged_var(self.alg, f"sm{n}", *self.mag),
                                  ranged_var(self.alg, f"sl{n}", *self.lsb), self._bool(f"ss{n}"))
            self._real.append(lambda: self._same(v, window_sum(self.alg, self.sh.window, x.triple(), y.triple())))
        return self.memo[key]  # type: ignore[return-value]

    def rne(self, n: Bool, m: Int, l: Int, s: Bool) -> Int:
        """The pattern :func:`rounding.round_pack` (RNE) makes of (neg, mag, lsb, sticky)."""
        key = ("rne", *piece_key(n, m, l, s))
        if key not in self.memo:
            r = self.memo[key] = self.alg.var(f"r{len(self.memo)}", self.sh.fmt.bits)
            self._real.append(lambda: self.alg.eq(r, round_pack(self.alg, self.sh.fmt, "rne", n, m, l, s)))
        return self.memo[key]  # type: ignore[return-value]

    def fma(self, a: Int, b: Int, c: Int) -> Int:
        """The pattern fma(a, b, c) (the chain's step)."""
        key = ("fma", *piece_key(a, b, c))
        if key not in self.memo:
            d = self.memo[key] = self.alg.var(f"d{len(self.memo)}", self.sh.fmt.bits)
            alg, f = self.alg, self.sh.fmt
            self._real.append(lambda: alg.eq(d, fma(alg, *(unpack(alg, f, v) for v in (a, b, c)), out=f)))
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
    ap.fact([_kept_order(alg, kg1, cg1, kg2, cg2)], _rep(alg, k1, c1, alg.add(kf1, kg2), alg.or_(cf1, cg2)))
    ap.fact([_rep(alg, m1, s1, m2, s2), zin1, zin2, _normal_mag(alg, sh, m1, big), _normal_mag(alg, sh, m2, big), alg.eq(l1, l2)],
            _vle(alg, sh, r1, r2))
    # lmax up by one: the second sum at one lsb lower, then rounding at one lsb
    ap.fact(wf + [order, alg.eq(L2, alg.add(L1, 1))], up_by_one(alg, k1, c1, k2, c2))
    wide = alg.add(alg.shl(m2, 1), alg.b2i(s2))
    rb = ap.rne(f_, wide, l1, s2)
    ap.fact([alg.le(1 << (w - 1), m2), alg.lt(m2, 1 << (w + 1)), alg.not_(n2), alg.eq(l2, alg.add(l1, 1))], alg.eq(r2, rb))
    ap.fact([_rep(alg, m1, s1, wide, s2), zin1, _normal_mag(alg, sh, m1, big), _normal_mag(alg, sh, wide, big)],
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
    ap.fact([_input(alg, f, a), _input(alg, f, b)], _well_formed(alg, sh, X, sh.prod_lead))  # terms, product
    ap.fact([_input(alg, f, c), _input(alg, f, c2), alg.le(value_key(alg, f, c), value_key(alg, f, c2))],  # terms, c
            alg.all([_well_formed(alg, sh, Y1, sh.c_lead), _well_formed(alg, sh, Y2, sh.c_lead), _lex(alg, Y1, Y2)]))
    for Y, v in ((Y1, c), (Y2, c2)):  # terms, c (c' = c)
        ap.fact([_input(alg, f, v)], _well_formed(alg, sh, Y, sh.c_lead))
    r1, r2 = _window(ap, X, Y1, Y2, raised_first=False)
    d1, d2 = _finish(ap, c, r1), _finish(ap, c2, r2)
    premise = [_input(alg, f, a), _input(alg, f, b), nonneg(alg, f, c), nonneg(alg, f, c2),
               alg.le(value_key(alg, f, c), value_key(alg, f, c2))]
    goal = alg.all([nonneg(alg, f, d1), nonneg(alg, f, d2), _vle(alg, sh, d1, d2)])
    return Composed(ap, premise, goal, "FMA in c (composition): finite non-negative a, b and c <= c' (not below zero, +inf "
                    "included) give fma(a, b, c) <= fma(a, b, c'), neither NaN nor below zero")


def fma_in_a(sh: FmaShape) -> Composed:
    ap = _Apps(sh)
    alg, f = ap.alg, sh.fmt
    a, a2, b, c = (ap.var(n) for n in ("a", "a2", "b", "c"))
    X1, X2, Y = ap.lead("p", a, b), ap.lead("p", a2, b), ap.lead("c", c)
    ap.fact([_input(alg, f, a), _input(alg, f, b)], _well_formed(alg, sh, X1, sh.prod_lead))  # terms, product
    ap.fact([_input(alg, f, a), _input(alg, f, a2), _input(alg, f, b), _moved(alg, f, a, a2)],  # terms, product (moved)
            alg.and_(_well_formed(alg, sh, X2, sh.prod_lead), _lex(alg, X1, X2)))
    ap.fact([_input(alg, f, c)], _well_formed(alg, sh, Y, sh.c_lead))  # terms, c (c' = c)
    r1, r2 = _window(ap, Y, X1, X2, raised_first=True)
    d1, d2 = _finish(ap, c, r1), _finish(ap, c, r2)
    premise = [_input(alg, f, a), _input(alg, f, a2), _input(alg, f, b), _moved(alg, f, a, a2), nonneg(alg, f, c)]
    goal = alg.all([nonneg(alg, f, d1), nonneg(alg, f, d2), _vle(alg, sh, d1, d2)])
    return Composed(ap, premise, goal, "FMA in a (composition): raising a to its next value never lowers fma(a, b, c) "
                    "(finite non-negative a, b; c not below zero, +inf included)")


# -- one FMA: split and commutativity; the model: the chain ---------------------------------------------


def _split_lemmas(sh: FmaShape) -> list[Part]:
    f = sh.fmt
    alg = QueryAlgebra()
    a, b, c = (alg.var(n, f.bits) for n in ("a", "b", "c"))
    ua, ub, uc = (unpack(alg, f, v) for v in (a, b, c))
    x, y = _lead_of(alg, sh, product(alg, ua, ub)[0]), _lead_of(alg, sh, input_term(uc))
    r = round_pack(alg, f, "rne", *window_sum(alg, sh.window, x.triple(), y.triple()))
    premise = [_input(alg, f, a), _input(alg, f, b), nonneg(alg, f, c)]
    split = alg.eq(fma(alg, ua, ub, uc, out=f), alg.ite(uc.is_inf, f.inf_bits(), r))
    out = [Part("split (Alg. 3): fma of finite non-negative a, b and c not below zero is +inf for c = +inf, else RNE of "
                  "the window sum of the product's and c's leads", negated_script(alg, implies(alg, premise, split)))]
    alg = QueryAlgebra()
    a, b, c = (alg.var(n, f.bits) for n in ("a", "b", "c"))
    ua, ub, uc = (unpack(alg, f, v) for v in (a, b, c))
    out.append(Part("fma commutes: fma(a, b, c) = fma(b, a, c) for finite non-negative a, b", negated_script(alg, implies(
        alg, [_input(alg, f, a), _input(alg, f, b)], alg.eq(fma(alg, ua, ub, uc, out=f), fma(alg, ub, ua, uc, out=f))))))
    return out


def _glue_lemma(model: Model, K: int, sh: FmaShape) -> Part:
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    d = x.c
    for a, b in zip(x.a, x.b):
        d = fma(alg, unpack(alg, sh.fmt, a), unpack(alg, sh.fmt, b), unpack(alg, sh.fmt, d), out=sh.fmt)
    return Part(f"glue (Alg. 4): the model's D is the chain of {K} FMAs, c first (every input)",
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
        c2, moved = raised, _moved(alg, f, c, raised)
    else:
        k = int(label[1:])
        (a2 if label[0] == "a" else b2)[k] = raised
        moved = _moved(alg, f, (a if label[0] == "a" else b)[k], raised)
    ok = lambda v: _input(alg, f, v)  # noqa: E731
    nn = lambda v: nonneg(alg, f, v)  # noqa: E731

    def in_c(x: Int, y: Int, d: Int, d2: Int) -> Int:  # FMA in c
        r1, r2 = ap.fma(x, y, d), ap.fma(x, y, d2)
        ap.fact([ok(x), ok(y), nn(d), nn(d2), alg.le(value_key(alg, f, d), value_key(alg, f, d2))],
                alg.all([nn(r1), nn(r2), _vle(alg, sh, r1, r2)]))
        return r2

    def in_a(x: Int, x2: Int, y: Int, d: Int) -> Int:  # FMA in a
        r1, r2 = ap.fma(x, y, d), ap.fma(x2, y, d)
        ap.fact([ok(x), ok(x2), ok(y), _moved(alg, f, x, x2), nn(d)], alg.all([nn(r1), nn(r2), _vle(alg, sh, r1, r2)]))
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


def prove_fma_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of one input lowers the FMA chain's D (all finite non-negative inputs).

    "holds" with every lemma's block, or "unknown" naming the first lemma the solver did not prove.
    """
    sh = FmaShape.of(model)
    lemmas = [_glue_lemma(model, K, sh), *_split_lemmas(sh), *term_lemmas(sh), *window_lemmas(sh), *rounding_lemmas(sh),
              fma_in_c(sh).lemma(), fma_in_a(sh).lemma()]
    lemmas += [chain_position(sh, K, label).lemma() for label in ["c"] + [f"{w}{k}" for k in range(K) for w in ("a", "b")]]
    proof = run_parts(lemmas, run)
    proof.summary = ("glue, the FMA split at its window adder, term, ring, window and rounding lemmas composed into the "
                     "FMA in c and in a, composed along the chain")
    return proof
