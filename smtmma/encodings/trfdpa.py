"""TR-FDPA (Alg. 10): truncated fused sum of L products, then a round-down sum with c."""

from __future__ import annotations

from typing import Sequence

from ..formats import Format
from .algebra import Algebra, Bool, Int, IntLike
from .fields import Unpacked
from .fused_sum import aligned, max_exponent
from .rounding import convert_fixed, pack_special
from .terms import Specials, Term, input_term, merge_specials, product, value_specials

__all__ = ["trfdpa", "overflowing_products", "overflows", "round_down_with_c", "shift_cut", "sum_at", "c_at", "c_exponent", "product_top"]


def product_top(t: Term) -> int:
    """The largest leading-bit exponent a product term can reach (it overflows past 127, §4.2)."""
    return t.exp.hi - t.frac + t.sig.hi.bit_length() - 1


def overflows(alg: Algebra, t: Term) -> Bool:
    """Whether a product term is non-zero with |s 2**e| >= 2**128 (its leading bit at exponent 128 or above), where
    Alg. 10 makes it +/-inf (§4.2); constant false when its range cannot reach that."""
    if product_top(t) < 128:
        return alg.bconst(False)
    lead = alg.add(alg.sub(t.exp, t.frac + 1), alg.bit_length(t.sig))
    return alg.and_(alg.le(128, lead), alg.ne(t.sig, 0))


def overflowing_products(alg: Algebra, a: Sequence[Unpacked], b: Sequence[Unpacked]) -> tuple[list[Term], list[Specials]]:
    """Exact products (Alg. 10 step 1), a product with |s_k 2**e_k| >= 2**128 overflowing to +/-inf (§4.2)."""
    terms, specials = [], []
    for x, y in zip(a, b):
        t, s = product(alg, x, y)
        if product_top(t) >= 128:
            over = alg.and_(overflows(alg, t), alg.not_(s.nan))
            s = Specials(s.nan, alg.or_(s.pos_inf, alg.and_(over, alg.not_(t.neg))), alg.or_(s.neg_inf, alg.and_(over, t.neg)))
        terms.append(t)
        specials.append(s)
    return terms, specials


def shift_cut(alg: Algebra, x: Int, k: IntLike, *, max_left: int, max_right: int, toward_zero: bool = False) -> Int:
    """``x * 2**k`` cut to an integer: rounded down (Alg. 10/11's RD), or toward zero with ``toward_zero``."""
    if not toward_zero:
        return alg.shift(x, k, max_left=max_left, max_right=max_right)
    mag = alg.shift(alg.abs(x), k, max_left=max_left, max_right=max_right)
    return alg.ite(alg.lt(x, 0), alg.neg(mag), mag)


def c_exponent(alg: Algebra, c: Term, floor: int) -> Int:
    """e_c: c's exponent, ``floor`` for a zero c (Alg. 10 step 3)."""
    return alg.ite(alg.eq(c.sig, 0), floor, c.exp)


def sum_at(alg: Algebra, T: Int, e_max: Int, E: Int, F: int, F2: int, *, toward_zero: bool = False) -> Int:
    """T' = RD_F2(T * 2**(e_max - E)) in units of 2**(E - F2), T in units of 2**(e_max - F) (Alg. 10 line 14)."""
    k = alg.add(alg.sub(e_max, E), F2 - F)
    return shift_cut(alg, T, k, max_left=F2 - F, max_right=T.hi.bit_length() + T.lo.bit_length() + 1, toward_zero=toward_zero)


def c_at(alg: Algebra, c: Term, E: Int, F: int, floor: int, *, drop_far_c: bool = False, toward_zero: bool = False) -> Int:
    """s'_c = RD_F(s_c * 2**(e_c - E)) in units of 2**(E - F), or 0 with ``drop_far_c`` when e_c < E - F - 1 (Alg. 11 lines 23-25)."""
    sc = aligned(alg, c, E, F, floor=not toward_zero)
    if drop_far_c:
        sc = alg.ite(alg.lt(c_exponent(alg, c, floor), alg.sub(E, F + 1)), 0, sc)
    return sc


def round_down_with_c(
    alg: Algebra, T: Int, e_max: Int, c: Term, F: int, F2: int, floor: int, *, drop_far_c: bool = False,
    toward_zero: bool = False,
) -> tuple[Int, Int]:
    """(S, E): Alg. 10 step 3 / Alg. 11 step 4; S in units of 2**(E - F2).

    T (units 2**(e_max - F)) is rounded down to F2 fraction bits at E =
    max(e_max, e_c), c rounded down to F bits (:func:`sum_at`, :func:`c_at`);
    with ``drop_far_c`` c is dropped when e_c < E - F - 1 (Alg. 11 lines
    24-25).  ``toward_zero``: the hypothetical twin of 000 §6.2.4 (Fig. 3)
    that truncates there instead.
    """
    E = alg.max(e_max, c_exponent(alg, c, floor))
    T2 = sum_at(alg, T, e_max, E, F, F2, toward_zero=toward_zero)
    sc = c_at(alg, c, E, F, floor, drop_far_c=drop_far_c, toward_zero=toward_zero)
    return alg.add(T2, alg.shl(sc, F2 - F)), E


def trfdpa(
    alg: Algebra, a: Sequence[Unpacked], b: Sequence[Unpacked], c: Unpacked, *, F: int, F2: int, out: Format, mode: str, nan_bits: int,
    sum_rz: bool = False,
) -> Int:
    """Bits of rho(S * 2**(E - F2)) for Alg. 10 (CDNA3 TF32/BF16/FP16)."""
    terms, specials = overflowing_products(alg, a, b)
    ct = input_term(c)
    floor = min(min(t.exp.lo for t in terms), ct.exp.lo) - 1
    e_max = max_exponent(alg, terms, floor)  # Alg. 10 step 2
    T = alg.sum_all(aligned(alg, t, e_max, F) for t in terms)
    alg.note("alignment exponent e_max", e_max)
    alg.note("truncated sum of the products", T, exp=e_max, shift=-F)
    S, E = round_down_with_c(alg, T, e_max, ct, F, F2, floor, toward_zero=sum_rz)  # Alg. 10 step 3
    alg.note("rounded down with c, before the final rounding", S, exp=E, shift=-F2)
    finite = convert_fixed(alg, out, mode, S, alg.sub(E, F2))  # Alg. 10 step 4
    merged = merge_specials(alg, specials + [value_specials(alg, c)])
    return pack_special(alg, out, nan_bits, *merged.resolved(alg), finite)
