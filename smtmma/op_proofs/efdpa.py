"""Facts about one E-FDPA (Alg. 6, encodings/efdpa.py): its monotonicity in each argument, and its symmetry.

:func:`negated_sum_facts`: on (-A, B, -C) the exact sum is negated, placed summand by placed summand, and so is D.

:func:`prove_monotone`: a compositional proof, D = RNE(c + sum a_k b_k), the sum exact.

:func:`fused_sum.exact_sum` places every term at one static last place
2**floor (:func:`fused_sum.exact_floor`), so D is RNE at a fixed place of an
integer M, the sum of the placed terms (:func:`fused_sum.placed`).  Raising
one input raises one placed term and leaves the others as they are, and
rounding at a fixed place is monotone in M.  (With the place set by the
terms, the smallest non-zero last place, the same proof would need RNE's
invariance under shifting M and its place together, which no solver proved
at the sum's 278 bits within minutes: docs/claims.md.)  The lemmas, each a
check-sat expecting unsat:

* **glue** (Alg. 6 line 1, every finite input): the model's D is the RNE
  (:func:`rounding.round_pack`) of :func:`fused_sum.placed_total` of the
  placed terms, at the static place;
* **terms**: c and the product of a and b, finite and non-negative, are
  placed at >= 0; raising c, a or b to its next value never lowers its
  placed term (a product's s * t a fresh variable, with instances of the
  **ring** lemmas of :mod:`~smtmma.op_proofs.fma`; b through their commutativity);
* **rounding**, by ranges of M': M <= M', each sign negative only on a zero
  sum, give RNE(M) <= RNE(M') as values, neither NaN;
* **composition**, one per input position: the sum over fresh placed terms
  (one per term applied, named by its operands) and fresh RNE patterns, with
  the instances of the lemmas above: the larger inputs' D is not below D.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import exact_floor, exact_sum, placed, placed_total, signed
from ..encodings.rounding import round_pack
from ..encodings.terms import input_term, product
from ..formats import Format, carried_in, get_format
from ..models import Model
from ..encodings.efdpa import efdpa
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import lemma
from ..proof_kernel.parts import Part, PartsProof, all_finite, implies, negated_script, ranged_var, run_parts
from ..proof_kernel.pieces import Composed, Pieces, piece_key
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner, output_container, value_key
from ..simulate import decode_input, nan_pattern, output_format, run_model
from .fma import OpaqueMul, ring_lemmas, step_facts
from .fused_sum import negated_sum_lemmas
from .moves import finite_nonneg, next_value
from .rounding import negated_output_fact

__all__ = ["EfdpaShape", "adder_lemmas", "error_facts", "glue_lemma", "magnitude_cases", "negated_sum_facts", "position", "positions", "prove_monotone",
           "rounding_cases", "rounding_lemmas", "supports_error_facts", "supports_monotone", "supports_symmetry", "term_lemmas"]

#: cut points (bits of M') of the rounding lemma's cases: each case a few seconds at 278 bits where one is eight
_CUTS = (50, 100, 200)


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`prove_monotone` applies: one E-FDPA (K <= L) of A and B in one format, read as they are,
    C in D's format."""
    return (model.kind == "e-fdpa" and model.L is not None and 1 <= K <= model.L and model.scale_fmt is None
            and model.a_fmt == model.b_fmt
            and model.via is None and not model.ftz_inputs and not model.c_after
            and model.c_fmt == output_container(model).name == output_format(model).name)


@dataclass(frozen=True)
class EfdpaShape:
    """An E-FDPA's formats, its static place (exponent of the sum's lsb) and the ranges of its placed terms and M."""

    fa: Format
    fb: Format
    fc: Format
    out: Format
    K: int
    floor: int
    prod: tuple[int, int]  # a placed product
    c: tuple[int, int]  # placed c
    mag_hi: int  # M = |sum| is at most this

    @classmethod
    def of(cls, model: Model, K: int) -> "EfdpaShape":
        fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
        alg = QueryAlgebra()
        tp = product(alg, unpack(alg, fa, alg.var("a", fa.bits)), unpack(alg, fb, alg.var("b", fb.bits)))[0]
        tc = input_term(unpack(alg, fc, alg.var("c", fc.bits)))
        floor = exact_floor([tp, tc])
        p, c = placed(alg, tp, floor), placed(alg, tc, floor)
        _, mag = placed_total(alg, [p] * K + [c], [tp.neg] * K + [tc.neg])
        return cls(fa, fb, fc, output_format(model), K, floor, (p.lo, p.hi), (c.lo, c.hi), mag.hi)

    def rne(self, alg: QueryAlgebra, neg: Bool, mag: Int) -> Int:
        """E-FDPA's rounding of (-1)**neg * mag * 2**floor: D's bits (Alg. 6 line 1)."""
        return round_pack(alg, self.out, "rne", neg, mag, alg.const(self.floor))

    def placed_product(self, alg: QueryAlgebra, a: Unpacked, b: Unpacked) -> tuple[Int, Bool]:
        t = product(alg, a, b)[0]
        return placed(alg, t, self.floor), t.neg

    def placed_c(self, alg: QueryAlgebra, c: Unpacked) -> tuple[Int, Bool]:
        t = input_term(c)
        return placed(alg, t, self.floor), t.neg


def _rounds_up(alg: QueryAlgebra, out: Format, r1: Int, r2: Int) -> Bool:
    """Neither pattern NaN and r1 <= r2 as values."""
    u1, u2 = unpack(alg, out, r1), unpack(alg, out, r2)
    return alg.all([alg.not_(u1.is_nan), alg.not_(u2.is_nan), alg.le(value_key(alg, out, r1), value_key(alg, out, r2))])


def _rounding_premise(alg: QueryAlgebra, n1: Bool, m1: Int, n2: Bool, m2: Int) -> list[Bool]:
    return [alg.le(m1, m2), implies(alg, [n1], alg.eq(m1, 0)), implies(alg, [n2], alg.eq(m2, 0))]


def rounding_cases(sh: EfdpaShape) -> list[tuple[int, int | None]]:
    """[lo, hi) bit ranges of M' (powers of two), covering [0, mag_hi]."""
    return magnitude_cases(sh.mag_hi)


def magnitude_cases(mag_hi: int) -> list[tuple[int, int | None]]:
    """[lo, hi) bit ranges (powers of two, :data:`_CUTS`) covering a magnitude in [0, mag_hi]; hi None: unbounded."""
    cuts = [c for c in _CUTS if (1 << c) <= mag_hi]
    bounds = [0, *cuts]
    return [(lo, hi) for lo, hi in zip(bounds, cuts + [None])]  # type: ignore[operator]


def _in_case(alg: QueryAlgebra, m: Int, lo: int, hi: int | None) -> Bool:
    parts = ([alg.le(1 << lo, m)] if lo else []) + ([alg.lt(m, 1 << hi)] if hi is not None else [])
    return alg.all(parts)


# -- lemmas on fresh operands ---------------------------------------------------------------------------


def glue_lemma(model: Model, K: int, sh: EfdpaShape) -> Part:
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    ua, ub = [unpack(alg, sh.fa, v) for v in x.a], [unpack(alg, sh.fb, v) for v in x.b]
    uc = unpack(alg, sh.fc, x.c)
    terms = [sh.placed_product(alg, u, w) for u, w in zip(ua, ub)] + [sh.placed_c(alg, uc)]
    d = sh.rne(alg, *placed_total(alg, [v for v, _ in terms], [n for _, n in terms]))
    finite = all_finite(alg, *ua, *ub, uc)
    return Part(f"glue (Alg. 6): for finite inputs the model's D is RNE of the sum of its {K + 1} terms, each placed "
                  f"at 2**{sh.floor}", negated_script(alg, implies(alg, [finite], alg.eq(run_model(alg, model, x.a, x.b, x.c), d))))


def term_lemmas(sh: EfdpaShape) -> list[Part]:
    """c placed at >= 0 and raised in order; the product likewise, a raised and b raised (s * t fresh, ring facts)."""
    out = []
    alg = QueryAlgebra()
    fc = sh.fc
    c, c2 = alg.var("c", fc.bits), alg.var("c2", fc.bits)
    (v1, _), (v2, _) = sh.placed_c(alg, unpack(alg, fc, c)), sh.placed_c(alg, unpack(alg, fc, c2))
    out.append(Part("terms, c: finite non-negative c is placed at >= 0", negated_script(alg, implies(
        alg, [finite_nonneg(alg, fc, c)], alg.le(0, v1)))))
    out.append(Part("terms, c raised: c's next value is placed no lower", negated_script(alg, implies(
        alg, [finite_nonneg(alg, fc, c), finite_nonneg(alg, fc, c2), next_value(alg, fc, c, c2)], alg.le(v1, v2)))))
    for moved in ("", "a", "b"):
        out.append(_product_lemma(sh, moved))
    return out + ring_lemmas(sh.fa.man_bits + 1)


def _product_lemma(sh: EfdpaShape, moved: str) -> Part:
    """"" : a placed product of finite non-negative a, b is >= 0; "a" / "b": raising a / b to its next value never
    lowers it.  s * t are fresh variables (:class:`OpaqueMul`) with ring-lemma instances."""
    alg = OpaqueMul()
    fa, fb = sh.fa, sh.fb
    p = fa.man_bits + 1  # fa == fb
    a, b = alg.var("a", fa.bits), alg.var("b", fb.bits)
    ua, ub = unpack(alg, fa, a), unpack(alg, fb, b)
    v1, _ = sh.placed_product(alg, ua, ub)
    m1 = alg.muls[piece_key(ua.sig, ub.sig)]  # type: ignore[index]
    premise = [finite_nonneg(alg, fa, a), finite_nonneg(alg, fb, b)]
    if not moved:
        for fact in (implies(alg, [alg.eq(ua.sig, 0)], alg.eq(m1, 0)), implies(alg, [alg.eq(ub.sig, 0)], alg.eq(m1, 0))):
            alg.assert_(fact)  # ring: zero on either side
        return Part("terms, product: finite non-negative a, b give a placed product >= 0 (s * t fresh, ring facts)",
                      negated_script(alg, implies(alg, premise, alg.le(0, v1))))
    fmt, x = (fa, a) if moved == "a" else (fb, b)
    x2 = alg.var(f"{moved}2", fmt.bits)
    u2 = unpack(alg, fmt, x2)
    v2, _ = sh.placed_product(alg, *((u2, ub) if moved == "a" else (ua, u2)))
    m2 = alg.muls[piece_key(*((u2.sig, ub.sig) if moved == "a" else (ua.sig, u2.sig)))]  # type: ignore[index]
    if moved == "a":
        facts = step_facts(alg, p, ua.sig, u2.sig, ub.sig, m1, m2)
    else:  # b's step, through commutativity: t * s = s * t
        n1, n2 = alg.mul(ub.sig, ua.sig), alg.mul(u2.sig, ua.sig)
        facts = [alg.eq(m1, n1), alg.eq(m2, n2), *step_facts(alg, p, ub.sig, u2.sig, ua.sig, n1, n2)]
    for fact in facts:
        alg.assert_(fact)
    premise += [finite_nonneg(alg, fmt, x2), next_value(alg, fmt, x, x2)]
    return Part(f"terms, product, {moved} raised: {moved}'s next value never lowers the placed product (s * t fresh, "
                  "ring facts)", negated_script(alg, implies(alg, premise, alg.le(v1, v2))))


def adder_lemmas(sh: EfdpaShape) -> list[Part]:
    """Raising one addend of non-negative integers never lowers their sum, for the raised addend on either side
    (x, x', y in [0, M's bound]: the partial sums of :func:`fused_sum.placed_total`)."""
    out = []
    for side in ("left", "right"):
        alg = QueryAlgebra()
        x, x2, y = (ranged_var(alg, n, 0, sh.mag_hi) for n in ("x", "x2", "y"))
        s1, s2 = (alg.add(x, y), alg.add(x2, y)) if side == "left" else (alg.add(y, x), alg.add(y, x2))
        what = "x + y <= x' + y" if side == "left" else "y + x <= y + x'"
        out.append(Part(f"adder, {side}: 0 <= x <= x' and 0 <= y give 0 <= {what}", negated_script(alg, implies(
            alg, [alg.le(x, x2)], alg.and_(alg.le(0, s1), alg.le(s1, s2))))))
    return out


def rounding_lemmas(sh: EfdpaShape) -> list[Part]:
    """RNE at the static place is monotone in M, one lemma per range of M' (:data:`_CUTS`)."""
    out = []
    for lo, hi in rounding_cases(sh):
        alg = QueryAlgebra()
        m1, m2 = ranged_var(alg, "M1", 0, sh.mag_hi), ranged_var(alg, "M2", 0, sh.mag_hi)
        n1, n2 = alg.bvar("n1"), alg.bvar("n2")
        r1, r2 = sh.rne(alg, n1, m1), sh.rne(alg, n2, m2)
        premise = _rounding_premise(alg, n1, m1, n2, m2) + [_in_case(alg, m2, lo, hi)]
        where = f"2**{lo} <= M' < 2**{hi}" if lo and hi else (f"M' < 2**{hi}" if hi else f"M' >= 2**{lo}")
        out.append(Part(f"rounding ({where}): M <= M', a negative sign only on 0, give RNE(M 2**{sh.floor}) <= "
                          f"RNE(M' 2**{sh.floor}), neither NaN", negated_script(alg, implies(alg, premise, _rounds_up(alg, sh.out, r1, r2)))))
    return out


# -- the composition ------------------------------------------------------------------------------------


class _Apps(Pieces):
    """E-FDPA's pieces: a placed term (value and sign) per product or c applied, an RNE pattern per sum."""

    def __init__(self, sh: EfdpaShape) -> None:
        super().__init__(QueryAlgebra())
        self.sh = sh

    def term(self, what: str, *ops: Int) -> tuple[Int, Bool]:
        """(placed value, sign) of the product of ``ops`` (what="p") or of c (what="c")."""
        key = ("term", what, *piece_key(*ops))
        if key not in self.memo:
            n, sh, alg = len(self.memo), self.sh, self.alg
            v = self.memo[key] = (ranged_var(alg, f"v{n}", *(sh.prod if what == "p" else sh.c)), self.bool_var(f"n{n}"))
            if what == "p":
                real = lambda: sh.placed_product(alg, unpack(alg, sh.fa, ops[0]), unpack(alg, sh.fb, ops[1]))  # noqa: E731
            else:
                real = lambda: sh.placed_c(alg, unpack(alg, sh.fc, ops[0]))  # noqa: E731
            self.definers.append(lambda: self.same(v, real()))
        return self.memo[key]  # type: ignore[return-value]

    def rne(self, neg: Bool, mag: Int) -> Int:
        """The pattern E-FDPA's rounding makes of (neg, mag)."""
        key = ("rne", *piece_key(neg, mag))
        if key not in self.memo:
            r = self.memo[key] = self.alg.var(f"r{len(self.memo)}", self.sh.out.bits)
            self.definers.append(lambda: self.alg.eq(r, self.sh.rne(self.alg, neg, mag)))
        return self.memo[key]  # type: ignore[return-value]


def position(sh: EfdpaShape, label: str) -> Composed:
    """Raising input ``label`` (c, a<k>, b<k>) never lowers D: the sum over fresh placed terms, the lemmas' instances."""
    ap = _Apps(sh)
    alg = ap.alg
    a = [ap.input(f"a{k}", sh.fa.bits) for k in range(sh.K)]
    b = [ap.input(f"b{k}", sh.fb.bits) for k in range(sh.K)]
    c = ap.input("c", sh.fc.bits)
    who = label[0]
    fmt = {"a": sh.fa, "b": sh.fb, "c": sh.fc}[who]
    raised = ap.input(f"{label}_2", fmt.bits)
    old = c if who == "c" else (a if who == "a" else b)[int(label[1:])]
    a2, b2, c2 = list(a), list(b), raised if who == "c" else c
    if who != "c":
        (a2 if who == "a" else b2)[int(label[1:])] = raised
    ok = [finite_nonneg(alg, sh.fa, v) for v in a] + [finite_nonneg(alg, sh.fb, v) for v in b] + [finite_nonneg(alg, sh.fc, c)]
    premise = ok + [finite_nonneg(alg, fmt, raised), next_value(alg, fmt, old, raised)]
    runs = []
    for xa, xb, xc in ((a, b, c), (a2, b2, c2)):
        terms = [ap.term("p", xa[k], xb[k]) for k in range(sh.K)] + [ap.term("c", xc)]
        for k, (v, _) in enumerate(terms):
            if runs and v.raw == runs[0][k][0].raw:
                continue  # the same term as the first run's: its fact is asserted
            ok_k = [finite_nonneg(alg, sh.fa, xa[k]), finite_nonneg(alg, sh.fb, xb[k])] if k < sh.K else [finite_nonneg(alg, sh.fc, xc)]
            ap.fact(ok_k, alg.le(0, v))  # terms, product / c
        runs.append(terms)
    k = sh.K if who == "c" else int(label[1:])
    ap.fact(premise, alg.le(runs[0][k][0], runs[1][k][0]))  # terms, raised
    _partial_sums(ap, [v for v, _ in runs[0]], [v for v, _ in runs[1]])
    (n1, m1), (n2, m2) = (placed_total(alg, [v for v, _ in t], [n for _, n in t]) for t in runs)
    r1, r2 = ap.rne(n1, m1), ap.rne(n2, m2)
    for case in rounding_cases(sh):  # rounding
        ap.fact(_rounding_premise(alg, n1, m1, n2, m2) + [_in_case(alg, m2, *case)], _rounds_up(alg, sh.out, r1, r2))
    return Composed(ap, premise, _rounds_up(alg, sh.out, r1, r2),
                    f"composition: raising {label} never lowers D (one placed term up, the others as they are, RNE at a fixed place)")


def _partial_sums(ap: _Apps, xs: list[Int], ys: list[Int]) -> None:
    """The adder lemmas' instances along the partial sums of two runs' addends (as :func:`fused_sum.placed_total` adds
    them, first to last), the addends not below zero and ys[k] >= xs[k] where they differ."""
    alg = ap.alg
    px, py = xs[0], ys[0]
    for x, y in zip(xs[1:], ys[1:]):
        qx, qy = alg.add(px, x), alg.add(py, y)
        if x.raw == y.raw:  # adder, left: the partial sums differ (or not), the addend is the same
            ap.fact([alg.le(0, px), alg.le(px, py), alg.le(0, x)], alg.and_(alg.le(0, qx), alg.le(qx, qy)))
        else:  # adder, right: the raised addend, after the same partial sum
            ap.fact([alg.le(0, x), alg.le(x, y), alg.le(0, px)], alg.and_(alg.le(0, qx), alg.le(qx, qy)))
        px, py = qx, qy


def positions(K: int) -> list[str]:
    """The input positions of one E-FDPA, c first."""
    return ["c"] + [f"{w}{k}" for k in range(K) for w in ("a", "b")]


def prove_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of one input lowers E-FDPA's D (all finite non-negative inputs).

    "holds" with every lemma's block, or "unknown" naming the first lemma the solver did not prove.
    """
    sh = EfdpaShape.of(model, K)
    lemmas = [glue_lemma(model, K, sh), *term_lemmas(sh), *adder_lemmas(sh), *rounding_lemmas(sh)]
    lemmas += [position(sh, label).lemma() for label in positions(K)]
    proof = run_parts(lemmas, run)
    proof.summary = "glue, term, ring, adder and rounding lemmas composed per input position (the sum at a static place)"
    return proof


# -- the error bound (Table 9: 1/2 ulp, the output rounding only) ----------------------------------------


def supports_error_facts(model: Model, K: int) -> bool:
    """Whether :func:`error_facts` covers the model: one E-FDPA whose inputs are read as they are (no flush, no via)."""
    return model.kind == "e-fdpa" and not model.ftz_inputs and model.via is None and K >= 1


def error_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the error query's own formula (``formula``: :class:`~smtmma.queries.properties.error_bound.ErrorFormula`),
    that leave its final check ``|Phi - exact| > scale * 1/2 ulp`` nothing but Boolean steps.

    Alg. 6 line 1 rounds the exact sum once, so the error is the rounding's.  On the model's own terms, each proved
    under only the facts it names: a finite D has finite inputs; on finite inputs D is RNE of
    :func:`~smtmma.encodings.fused_sum.exact_sum`'s (neg, mag) at its static place 2**floor (the glue); each placed
    term, and so their sum and the signed (neg, mag), is the query's exact value in units of 2**R.  Then, for each
    scale asked, one lemma on fresh constants (neg, mag, d, X): "d = RNE(neg, mag) and X = (neg, mag)'s value imply
    no violation" (:meth:`ErrorFormula.violation`, built by the same function as the query), applied to the model's
    terms.  False when a fact is not proved (the chain says which).
    """
    alg, model, x = formula.alg, formula.model, formula.x
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    out = output_format(model)
    fd = carried_in(out)
    ua = [decode_input(alg, fa, v, model.via) for v in x.a]
    ub = [decode_input(alg, fb, v, model.via) for v in x.b]
    uc = decode_input(alg, fc, x.c, fd.name)
    terms = [product(alg, u, v)[0] for u, v in zip(ua, ub)] + [input_term(uc)]  # Alg. 6: the products, then c
    floor = exact_floor(terms)
    neg, mag, lsb = exact_sum(alg, terms)
    fin = all_finite(alg, *ua, *ub, uc)
    shift = floor - formula.R  # below 0 when a domain's narrow exponents put the query's unit above the static place

    def same(g: Any, placed_value: Int, X: Int) -> Bool:
        """A value placed at 2**floor equals X (units 2**R): compared in the finer of the two units."""
        return g.eq(g.shl(placed_value, shift), X) if shift >= 0 else g.eq(placed_value, g.shl(X, -shift))

    chain.prove("a finite D has finite inputs (an infinite or NaN input makes D infinite or NaN)",
                implies(alg, [formula.finite], fin), uses=[])
    rne = round_pack(alg, out, "rne", neg, mag, lsb)
    chain.prove(f"glue (Alg. 6 line 1): on finite inputs D is RNE-{out.name} of the exact sum placed at 2^{floor}",
                implies(alg, [fin], alg.eq(formula.d, rne)), uses=[])
    placed_terms = [placed(alg, t, floor) for t in terms]
    each = []
    for k, (p, X) in enumerate(zip(placed_terms, formula.exact_terms)):
        what = f"product {k}" if k < len(x.a) else "c"
        chain.prove(f"{what}, placed at 2^{floor}, is its exact value (units 2^{formula.R})",
                    implies(alg, [fin], same(alg, p, X)), uses=[])
        each.append(chain.last)
    chain.prove("the placed sum is the exact value", implies(alg, [fin], same(alg, alg.sum_all(placed_terms), formula.exact)),
                uses=each)
    Y = signed(alg, neg, mag)
    chain.prove("the exact sum's sign and magnitude are the exact value", implies(alg, [fin], same(alg, Y, formula.exact)),
                uses=[chain.last])
    if chain.stopped:
        return False
    args = [neg, mag, formula.d, formula.exact]
    done: set[Fraction] = set()

    def rounding_lemma(lam: Fraction) -> None:
        if lam in done:
            return
        done.add(lam)

        for lo, hi in magnitude_cases(mag.hi):  # one lemma per range of mag's bits: each a few seconds where one is many (and z3's reach)

            def statement(g: Any, v: Sequence[Any], lo: int = lo, hi: Optional[int] = hi) -> Bool:
                n, m, d, X = v
                view = formula.output_view(g, unpack(g, formula.out, d))
                premise = [g.eq(d, round_pack(g, out, "rne", n, m, g.const(floor))), same(g, signed(g, n, m), X),
                           _in_case(g, m, lo, hi)]
                return implies(g, premise, g.not_(formula.violation(g, view, X, g.const(0), lam)))

            where = f"2^{lo} <= mag" if hi is None else f"mag < 2^{hi}" if not lo else f"2^{lo} <= mag < 2^{hi}"
            chain.establish(lemma(f"RNE-{out.name} of (-1)^neg * mag * 2^{floor}, {where}, errs by at most {lam} * 1/2 ulp "
                                  "(or the output is not finite)", statement, args), args)

    formula.before_script.append(rounding_lemma)
    return True


# -- symmetry: the exact sum of the negated inputs ---------------------------------------------------------


def supports_symmetry(model: Model, K: int) -> bool:
    """Whether :func:`negated_sum_facts` applies: one E-FDPA (K <= L), its inputs read as they are, C inside."""
    return (model.kind == "e-fdpa" and model.L is not None and 1 <= K <= model.L and model.scale_fmt is None
            and model.via is None and not model.ftz_inputs and not model.c_after)


def negated_sum_facts(chain: LemmaChain, alg: QueryAlgebra, model: Model, x: InputSet, na: list[Int], nc: Int,
                      decoded: list[Optional[int]], decoded_c: Optional[int]) -> Optional[int]:
    """Prove, in the symmetry query's own formula, that Alg. 6 on (-A, B, -C) is the original negated: each placed
    summand (products, then c) and each running sum of the exact sum is negated, so its magnitude is kept and its
    sign flipped (unless zero), and the rounded D decodes to D's fields with the sign flipped.  ``decoded``,
    ``decoded_c``: the facts that decode -a_k and -c (sign flipped, fields kept).  Returns the fact about D."""
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    fd = carried_in(output_format(model))  # as run_model widens C
    ua = [unpack(alg, fa, v) for v in x.a]
    una = [unpack(alg, fa, v) for v in na]
    ub = [unpack(alg, fb, v) for v in x.b]
    uc, unc = decode_input(alg, fc, x.c, fd.name), decode_input(alg, fc, nc, fd.name)
    terms = [product(alg, u, v)[0] for u, v in zip(ua, ub)] + [input_term(uc)]
    nterms = [product(alg, u, v)[0] for u, v in zip(una, ub)] + [input_term(unc)]
    floor = exact_floor(terms)
    vals, nvals = [placed(alg, t, floor) for t in terms], [placed(alg, t, floor) for t in nterms]
    neg, mag = placed_total(alg, vals, [t.neg for t in terms])
    neg2, mag2 = placed_total(alg, nvals, [t.neg for t in nterms])
    negated_sum_lemmas(chain, alg, vals, nvals, alg.sum_all(vals), alg.sum_all(nvals), [[i] for i in [*decoded, decoded_c]],
                       operand="placed summand", whole="the exact sum (Alg. 6 line 1)")
    chain.prove("the exact sum of the negated inputs has the same magnitude and the opposite sign unless it is zero",
                alg.and_(alg.eq(mag2, mag), alg.or_(alg.eq(mag, 0), alg.xor(neg2, neg))), uses=[chain.last])
    out = output_format(model)  # as run_model's FDPA step rounds
    d = efdpa(alg, ua, ub, uc, out=out, nan_bits=nan_pattern(model, out))
    d2 = efdpa(alg, una, ub, unc, out=out, nan_bits=nan_pattern(model, out))
    negated_output_fact(chain, alg, output_container(model), d, d2, "the E-FDPA", [chain.last, *decoded, decoded_c])
    return chain.last
