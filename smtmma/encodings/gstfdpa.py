"""GST-FDPA (Alg. 9): exact dot products per group of G, scaled per block, then a truncated fused sum with c."""

from __future__ import annotations

from typing import Optional, Sequence

from ..formats import Format
from .algebra import Algebra, Int
from .fields import Unpacked
from .fused_sum import signed, truncated_sum
from .rounding import convert_fixed, pack_special
from .terms import Specials, Term, input_term, merge_specials, product, value_specials

__all__ = ["gstfdpa", "gst_terms", "group_contributions", "group_dot", "scaled_group"]


def gst_terms(
    alg: Algebra,
    a: Sequence[Unpacked],
    b: Sequence[Unpacked],
    c: Unpacked,
    scale_a: Optional[Sequence[Unpacked]],
    scale_b: Optional[Sequence[Unpacked]],
    G: int,
) -> tuple[list[Term], list[Specials], list[Int]]:
    """(summands, special states, group dots) of Alg. 9 lines 1-8: one scaled summand per group of G lanes, then c.

    A group's dot is its exact fixed-point sum of products (line 3), in units
    of 2**lsb, lsb the smallest last place its products can have.
    """
    assert scale_a is not None and scale_b is not None, "GST-FDPA needs scales"
    terms: list[Term] = []
    dots: list[Int] = []
    specials: list[Specials] = [value_specials(alg, c)]
    for g0 in range(0, len(a), G):
        prods = [product(alg, x, y) for x, y in zip(a[g0 : g0 + G], b[g0 : g0 + G])]
        p, lsb = group_dot(alg, [t for t, _ in prods])
        sa, sb = scale_a[g0], scale_b[g0]
        terms.append(scaled_group(alg, p, lsb, sa, sb))
        dots.append(p)
        specials.extend(s for _, s in prods)
        specials.append(Specials(alg.or_(sa.is_nan, sb.is_nan), alg.bconst(False), alg.bconst(False)))
    terms.append(input_term(c))  # lines 7-8
    return terms, specials, dots


def group_dot(alg: Algebra, prods: Sequence[Term]) -> tuple[Int, int]:
    """(p, lsb): a group's exact dot product (Alg. 9 line 3), the integer p in units of 2**lsb, lsb the smallest
    last place its products can have (a static exponent)."""
    parts, lsb = group_contributions(alg, prods)
    return alg.sum_all(parts), lsb


def group_contributions(alg: Algebra, prods: Sequence[Term]) -> tuple[list[Int], int]:
    """(each product as an integer in units of 2**lsb, lsb): the addends of :func:`group_dot` (Alg. 9 line 3)."""
    lsb = min(t.exp.lo - t.frac for t in prods)
    return [signed(alg, t.neg, alg.shl(t.sig, alg.sub(alg.sub(t.exp, t.frac), lsb))) for t in prods], lsb


def scaled_group(alg: Algebra, p: Int, lsb: int, sa: Unpacked, sb: Unpacked) -> Term:
    """A group's summand (Alg. 9 lines 4-5): the dot p * 2**lsb times the scales, its exponent the scales' alone."""
    sig = alg.mul(alg.mul(alg.abs(p), sa.sig), sb.sig)  # line 4: times the scales' significands, one at a time
    exp = alg.add(sa.exp, sb.exp)  # line 5: sum of the scales' exponents
    return Term(alg.lt(p, 0), sig, exp, sa.frac + sb.frac - lsb)


def gstfdpa(
    alg: Algebra,
    a: Sequence[Unpacked],
    b: Sequence[Unpacked],
    c: Unpacked,
    scale_a: Optional[Sequence[Unpacked]],
    scale_b: Optional[Sequence[Unpacked]],
    *,
    G: int,
    F: int,
    out: Format,
    mode: str,
    nan_bits: int,
    carry_bits: Optional[int] = None,
    emax_floor: Optional[int] = None,
) -> Int:
    """Bits of rho(S * 2**(e_max - F)) for Alg. 9; ``scale_a``/``scale_b`` give each lane its block's scale."""
    terms, specials, _ = gst_terms(alg, a, b, c, scale_a, scale_b, G)
    total, e_max = truncated_sum(alg, terms, F, carry_bits, emax_floor)  # lines 9-12
    alg.note("alignment exponent e_max", e_max)
    alg.note("truncated fused sum, before rounding", total, exp=e_max, shift=-F)
    finite = convert_fixed(alg, out, mode, total, alg.sub(e_max, F))  # line 14
    return pack_special(alg, out, nan_bits, *merge_specials(alg, specials).resolved(alg), finite)
