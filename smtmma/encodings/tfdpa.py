"""T-FDPA (Alg. 7) and ST-FDPA (Alg. 8): truncated fused dot-product-add, optionally block-scaled."""

from __future__ import annotations

from typing import Optional, Sequence

from ..formats import Format
from .algebra import Algebra, Int
from .fields import Unpacked
from .fused_sum import truncated_sum
from .rounding import convert_fixed, convert_fixed_zero, pack_special
from .terms import Specials, Term, input_term, merge_specials, product, value_specials

__all__ = ["scaled_product", "tfdpa", "tfdpa_terms"]


def scaled_product(
    alg: Algebra, x: Unpacked, y: Unpacked, sa: Optional[Unpacked] = None, sb: Optional[Unpacked] = None
) -> tuple[Term, Specials]:
    """The exact product x*y of one lane and its special state; with scales ``sa``/``sb`` (E8M0/UE4M3, the
    lane's block), their exponents join the product's and a NaN scale makes it NaN (Alg. 8 line 4)."""
    t, s = product(alg, x, y)
    if sa is None or sb is None:
        return t, s
    t = Term(t.neg, t.sig, alg.add(t.exp, alg.add(sa.exp, sb.exp)), t.frac)
    return t, Specials(alg.any([s.nan, sa.is_nan, sb.is_nan]), s.pos_inf, s.neg_inf)


def tfdpa_terms(
    alg: Algebra,
    a: Sequence[Unpacked],
    b: Sequence[Unpacked],
    c: Unpacked,
    scale_a: Optional[Sequence[Unpacked]] = None,
    scale_b: Optional[Sequence[Unpacked]] = None,
) -> tuple[list[Term], list[Specials]]:
    """The L + 1 summands of Alg. 7 (exact products, then c) and their special states.

    With ``scale_a``/``scale_b`` (one E8M0 scale per lane) the scales'
    exponents join each product's exponent (Alg. 8 line 4).
    """
    terms: list[Term] = []
    specials: list[Specials] = [value_specials(alg, c)]
    for k, (x, y) in enumerate(zip(a, b)):  # Alg. 7 step 1: exact products
        scaled = scale_a is not None and scale_b is not None
        t, s = scaled_product(alg, x, y, scale_a[k] if scaled else None, scale_b[k] if scaled else None)  # type: ignore[index]
        terms.append(t)
        specials.append(s)
    terms.append(input_term(c))  # Alg. 7 lines 6-7
    return terms, specials


def tfdpa(
    alg: Algebra,
    a: Sequence[Unpacked],
    b: Sequence[Unpacked],
    c: Unpacked,
    *,
    F: int,
    out: Format,
    mode: str,
    nan_bits: int,
    carry_bits: Optional[int] = None,
    emax_floor: Optional[int] = None,
    scale_a: Optional[Sequence[Unpacked]] = None,
    scale_b: Optional[Sequence[Unpacked]] = None,
    zero_emax: bool = False,
    ieee_zero: bool = False,
) -> Int:
    """Bits of ``rho(S * 2**(e_max - F))`` (container layout of ``out``), S the truncated fused sum of L products and c.

    With ``scale_a``/``scale_b`` (one E8M0 scale per lane), the scales'
    exponents join each product's exponent: ST-FDPA (Alg. 8 line 4).
    ``zero_emax``: zero terms set e_max too; ``ieee_zero``: when every term
    is -0 the result is -0 (both alternatives to docs/semantics.md).
    """
    terms, specials = tfdpa_terms(alg, a, b, c, scale_a, scale_b)
    total, e_max = truncated_sum(alg, terms, F, carry_bits, emax_floor, zeros_in_emax=zero_emax)  # Alg. 7 step 2
    alg.note("alignment exponent e_max", e_max)
    alg.note("truncated fused sum, before rounding", total, exp=e_max, shift=-F)
    finite = convert_fixed(alg, out, mode, total, alg.sub(e_max, F))  # Alg. 7 step 3
    if ieee_zero:  # IEEE 754's sign of an exact zero sum: -0 only when every summand is -0
        all_neg_zero = alg.all(alg.and_(t.neg, alg.eq(t.sig, 0)) for t in terms)
        finite = alg.ite(all_neg_zero, convert_fixed_zero(alg, out, negative=True), finite)
    return pack_special(alg, out, nan_bits, *merge_specials(alg, specials).resolved(alg), finite)
