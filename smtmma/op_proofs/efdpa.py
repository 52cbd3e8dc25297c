"""Facts about one E-FDPA (Alg. 6, encodings/efdpa.py): its monotonicity in each argument, and its symmetry.

:func:`negated_sum_facts`: on (-A, B, -C) the exact sum is negated, placed summand by placed summand, and so is D.

:func:`monotone_facts`: every single move of one input in one formula, D = RNE(c + sum a_k b_k), the sum exact.

:func:`fused_sum.exact_sum` places every term at one static last place
2**floor (:func:`fused_sum.exact_floor`), so D is RNE at a fixed place of an
integer M, the sum of the placed terms (:func:`fused_sum.placed`).  Raising
one input raises one placed term and leaves the others as they are, and
rounding at a fixed place is monotone in M.  (With the place set by the
terms, the smallest non-zero last place, the same proof would need RNE's
invariance under shifting M and its place together, which no solver proved
at the sum's 278 bits within minutes: docs/claims.md.)  Every fact is about
the model's own terms in the query's formula; what bit-blasting does worst
(a product that grows with a factor, inequalities added up, RNE's order at
278 bits) is in lemmas on fresh constants, applied to those terms:

* **glue** (Alg. 6 line 1, a fact per run): D is the RNE
  (:func:`rounding.round_pack`) of :func:`fused_sum.placed_total` of the
  placed terms, at the static place;
* **terms**: each placed term of non-negative inputs is >= 0 (facts); raising c
  never lowers its placed term (a fact); raising a or b never lowers the placed
  product (the **ring** lemmas of :mod:`~smtmma.op_proofs.fma` at the model's
  significands, and a lemma whose significand products are arguments);
* **running sums** (:func:`fused_sum.ordered_sums`): a lemma at each running
  sum carries 0 <= S_j <= S'_j along the sum;
* **rounding**, by ranges of M': M <= M', each sign negative only on a zero
  sum, give RNE(M) <= RNE(M') as values, neither NaN;
* per position, the fact "raising this input never lowers D"; the query's
  own statement (some move lowers D) is then unsatisfiable.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import exact_floor, exact_sum, placed, placed_total, signed
from ..encodings.rounding import round_pack
from ..encodings.terms import Term, input_term, product
from ..formats import Format, carried_in, get_format
from ..models import Model
from ..encodings.efdpa import efdpa
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import lemma
from ..proof_kernel.parts import all_finite, implies
from ..queries.query_algebra import InputSet, QueryAlgebra, output_container, value_key
from ..simulate import decode_input, nan_pattern, output_format
from .fma import apply_step_facts, step_facts
from .fused_sum import negated_sum_lemmas, ordered_sums
from .moves import finite_nonneg, next_moves, smallest_positive
from .rounding import negated_output_fact

__all__ = ["EfdpaShape", "error_facts", "magnitude_cases", "monotone_facts", "negated_sum_facts", "rounding_cases", "supports_error_facts",
           "supports_monotone", "supports_symmetry"]

#: cut points (bits of M') of the rounding lemma's cases: each case a few seconds at 278 bits where one is eight
_CUTS = (50, 100, 200)


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`monotone_facts` applies: one E-FDPA (K <= L) of A and B in one format, read as they are,
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


def _range_text(name: str, lo: int, hi: int | None) -> str:
    """The case [2**lo, 2**hi) of :func:`magnitude_cases` in words, for a lemma's label."""
    return f"2^{lo} <= {name}" if hi is None else f"{name} < 2^{hi}" if not lo else f"2^{lo} <= {name} < 2^{hi}"


def _in_case(alg: QueryAlgebra, m: Int, lo: int, hi: int | None) -> Bool:
    parts = ([alg.le(1 << lo, m)] if lo else []) + ([alg.lt(m, 1 << hi)] if hi is not None else [])
    return alg.all(parts)


# -- monotonicity: every single move, in the query's own formula ---------------------------------------------


def _placed_terms(alg: QueryAlgebra, sh: EfdpaShape, y: InputSet) -> list[tuple[Int, Bool]]:
    """(placed value, sign) of each term of one run, the products then c (Alg. 6), as the model places them."""
    terms = [sh.placed_product(alg, unpack(alg, sh.fa, u), unpack(alg, sh.fb, v)) for u, v in zip(y.a, y.b)]
    return terms + [sh.placed_c(alg, unpack(alg, sh.fc, y.c))]


def _placed_of(g: QueryAlgebra, sh: EfdpaShape, a: Int, b: Int, m: Int) -> Int:
    """The placed product of patterns a and b whose significand product is the term ``m`` (the model's own)."""
    ua, ub = unpack(g, sh.fa, a), unpack(g, sh.fb, b)
    return placed(g, Term(g.xor(ua.neg, ub.neg), m, g.add(ua.exp, ub.exp), ua.frac + ub.frac), sh.floor)


def _product_raised(chain: LemmaChain, sh: EfdpaShape, first: Optional[int], who: str, a: Int, b: Int, a2: Int, b2: Int) -> list[str]:
    """Lemmas applied to one lane's patterns, before and after input ``who`` (a or b) moved: the ring facts of the
    model's significand products (:func:`~smtmma.op_proofs.fma.apply_step_facts`: a's significand is the left factor),
    then "the move never lowers the placed product", whose products are arguments (stated with the real
    multipliers on both sides, it has no answer in 300 s).  ``first``: the smallest positive pattern the move may
    reach from zero.  Returns the applications' texts ([] when one was not proved)."""
    alg = chain.alg
    assert isinstance(alg, QueryAlgebra)
    fm, fo = (sh.fa, sh.fb) if who == "a" else (sh.fb, sh.fa)
    moved, moved2, other = (a, a2, b) if who == "a" else (b, b2, a)
    um, um2, uo = unpack(alg, fm, moved), unpack(alg, fm, moved2), unpack(alg, fo, other)
    apps = apply_step_facts(chain, fm.man_bits + 1, um.sig, um2.sig, uo.sig, t_first=who == "b")
    if not apps:
        return []
    m1, m2 = (product(alg, unpack(alg, sh.fa, u), unpack(alg, sh.fb, v))[0].sig for u, v in ((a, b), (a2, b2)))

    def raised(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
        x, x2, o, n1, n2 = v
        u, u2, w = unpack(g, fm, x), unpack(g, fm, x2), unpack(g, fo, o)
        premise = [finite_nonneg(g, fm, x), finite_nonneg(g, fm, x2), finite_nonneg(g, fo, o),
                   g.any(next_moves(g, fm, x, x2, first)), *step_facts(g, fm.man_bits + 1, u.sig, u2.sig, w.sig, n1, n2)]
        before, after = ((x, o), (x2, o)) if who == "a" else ((o, x), (o, x2))
        return implies(g, premise, g.le(_placed_of(g, sh, *before, n1), _placed_of(g, sh, *after, n2)))

    args = [moved, moved2, other, m1, m2]
    if not chain.establish(lemma(f"terms: {who}'s next value never lowers the placed product (its significand products "
                                 "given, with the ring facts)", raised, args), args):
        return []
    return [*apps, chain.applied_last]


def monotone_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the monotonicity query's own formula (``formula``: a
    :class:`~smtmma.queries.properties.monotonicity.MoveFormula`, every single move of one input beside the inputs),
    that leave its final check ("some move lowers D") Boolean steps.

    Alg. 6 line 1 rounds the exact sum once at a static place 2**floor, so on the model's own terms: each run's D is
    RNE of :func:`~smtmma.encodings.fused_sum.placed_total` of its placed terms (the glue, one fact per run); every
    placed term of non-negative inputs is >= 0 (a fact per term); a move raises its own term (c: a fact; a product:
    the ring lemmas at the model's significands, then a lemma whose products are arguments); the running sums keep
    the order (:func:`~smtmma.op_proofs.fused_sum.ordered_sums`, a lemma at each running sum); the rounding lemmas,
    by ranges of M' (:func:`magnitude_cases`), give RNE(M) <= RNE(M') as values, neither NaN; so no move lowers D
    (a fact per position).  Each lemma is proved on fresh constants once and applied wherever it serves; each fact
    is proved under the facts and applications it names.  False when one is not proved (the chain says which).
    """
    alg, model, x = formula.alg, formula.model, formula.x
    sh = EfdpaShape.of(model, x.K)
    before = _placed_terms(alg, sh, x)
    n1, m1 = placed_total(alg, [v for v, _ in before], [n for _, n in before])
    chain.prove(f"glue (Alg. 6 line 1): D is RNE-{sh.out.name} of the sum of its terms placed at 2^{sh.floor}",
                alg.eq(formula.d, sh.rne(alg, n1, m1)), uses=[])
    glue = chain.last
    nonneg: dict[str, Optional[int]] = {}

    def at_least_zero(v: Int, what: str) -> Optional[int]:
        key = str(v.raw)
        if key not in nonneg:
            chain.prove(f"{what}: a finite non-negative input gives a placed term >= 0", alg.le(0, v), uses=[])
            nonneg[key] = chain.last
        return nonneg[key]

    for k, (v, _) in enumerate(before):
        at_least_zero(v, f"product {k}" if k < x.K else "c")
    for label in formula.labels:
        y = formula.raised[label]
        after = _placed_terms(alg, sh, y)
        n2, m2 = placed_total(alg, [v for v, _ in after], [n for _, n in after])
        chain.prove(f"glue, {label} raised: D is RNE-{sh.out.name} of the sum of its terms placed at 2^{sh.floor}",
                    alg.eq(formula.outputs[label], sh.rne(alg, n2, m2)), uses=[])
        glue2 = chain.last
        k = x.K if label == "c" else int(label[1:])
        term = at_least_zero(after[k][0], f"{label} raised")
        if label == "c":
            chain.prove("terms: c's next value is placed no lower", alg.le(before[k][0], after[k][0]), uses=[])
            apps: list[str] = []
        else:
            fmt = sh.fa if label[0] == "a" else sh.fb
            first = smallest_positive(fmt, formula.domain.exp, formula.domain.subnormals)
            apps = _product_raised(chain, sh, first, label[0], x.a[k], x.b[k], y.a[k], y.b[k])
            if not apps:
                return False
            chain.prove(f"terms: raising {label} never lowers its placed product", alg.le(before[k][0], after[k][0]),
                        uses=[], applied=apps)
        up = chain.last
        sums = ordered_sums(chain, alg, [v for v, _ in before], [v for v, _ in after])
        if sums is None:
            return False
        facts = [nonneg[str(v.raw)] for v, _ in before] + [term, up]
        chain.prove(f"{label} raised: the exact sum's magnitude is not lower, each sign negative only on a zero sum",
                    alg.all(_rounding_premise(alg, n1, m1, n2, m2)), uses=facts, applied=sums)
        ordered = chain.last
        rounding: list[str] = []
        for lo, hi in rounding_cases(sh):

            def monotone(g: QueryAlgebra, v: Sequence[Any], lo: int = lo, hi: Optional[int] = hi) -> Bool:
                a1, b1, a2, b2 = v
                return implies(g, _rounding_premise(g, a1, b1, a2, b2) + [_in_case(g, b2, lo, hi)],
                               _rounds_up(g, sh.out, sh.rne(g, a1, b1), sh.rne(g, a2, b2)))

            where = _range_text("M'", lo, hi)
            args = [n1, m1, n2, m2]
            if not chain.establish(lemma(f"rounding ({where}): M <= M', a negative sign only on a zero sum, give "
                                         f"RNE(M 2^{sh.floor}) <= RNE(M' 2^{sh.floor}), neither NaN", monotone, args), args):
                return False
            rounding.append(chain.applied_last)
        chain.prove(f"raising {label} to its next value never lowers D", alg.not_(formula.drops[label]),
                    uses=[glue, glue2, ordered], applied=rounding)
    return not chain.stopped


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

            where = _range_text("mag", lo, hi)
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
