"""Fixed-point sums shared by the FDPA ops: alignment at a common exponent.

* :func:`max_exponent` -- e_max over the non-zero terms (zero terms never
  set it; docs/semantics.md);
* :func:`aligned` -- a term aligned at e_max with F fractional bits,
  truncated toward zero (RZ_F, Alg. 7 line 10) or floored (RD_F);
* :func:`truncated_sum` -- step 2 of Alg. 7/8/9/10/11: the exact sum of
  the aligned terms, optionally held in a register with limited carry bits;
* :func:`exact_sum` -- the infinitely precise sum of Alg. 6 (E-FDPA), as
  an integer at the smallest last place any term can have;
* :func:`exact_sum2` -- the same for two terms, in a window of bounded
  width with a sticky bit (the classic FP adder: exact for rounding).
"""

from __future__ import annotations

from typing import Optional, Sequence

from .algebra import Algebra, Bool, Int
from .terms import Term, zero_exponent_floor

__all__ = ["max_exponent", "aligned", "truncated_sum", "wrap_carry", "exact_sum", "exact_floor", "placed", "placed_total",
           "exact_sum2", "sum2_window", "window_lead",
           "window_place", "window_sum", "signed"]


def signed(alg: Algebra, neg: Bool, mag: Int) -> Int:
    """``-mag`` if neg else ``mag``."""
    return alg.ite(neg, alg.neg(mag), mag)


def max_exponent(alg: Algebra, terms: Sequence[Term], floor: Optional[int] = None, *, include_zeros: bool = False) -> Int:
    """Largest exponent among the non-zero terms; ``floor`` (below all) when every term is zero.

    ``include_zeros``: zero terms count with their own exponent too (the
    ``zero_emax`` hypothesis; a zero input's exponent is its format's emin).
    """
    if include_zeros:
        return alg.max_all([t.exp for t in terms])
    low = zero_exponent_floor(terms) if floor is None else floor
    return alg.max_all([alg.ite(alg.eq(t.sig, 0), low, t.exp) for t in terms])


def aligned(alg: Algebra, t: Term, e_ref: Int, F: int, *, floor: bool = False) -> Int:
    """``t`` in units of 2**(e_ref - F), cut to an integer: toward zero (RZ_F) or down (RD_F).

    Requires ``t.exp <= e_ref`` for non-zero terms (zero terms give 0 whatever their exponent).
    """
    # value / 2**(e_ref - F) = sig * 2**(F - frac) / 2**(e_ref - exp)
    up, down = max(F - t.frac, 0), max(t.frac - F, 0)
    span = t.sig.hi.bit_length() + up + 1  # shifting further right leaves 0 (or -1 when flooring)
    right = alg.clamp(alg.add(alg.sub(e_ref, t.exp), down), 0, span)
    x = alg.shl(t.sig, up)
    if not floor:
        return signed(alg, t.neg, alg.shr(x, right))
    return alg.shr(signed(alg, t.neg, x), right)


def wrap_carry(alg: Algebra, s: Int, F: int, carry_bits: Optional[int]) -> Int:
    """``s`` (units 2**-F) held in a two's-complement register of 2 + carry_bits integer bits: the carry-out is lost."""
    if carry_bits is None:
        return s
    width = 3 + carry_bits + F
    half = 1 << (width - 1)
    return alg.sub(alg.low_bits(alg.add(s, half), width), half)


def truncated_sum(
    alg: Algebra, terms: Sequence[Term], F: int, carry_bits: Optional[int] = None, emax_floor: Optional[int] = None,
    *, zeros_in_emax: bool = False,
) -> tuple[Int, Int]:
    """(S, e_max): S = sum of RZ_F-aligned terms in units of 2**(e_max - F) (Alg. 7 lines 8-11).

    ``emax_floor``: the alignment exponent is never below it (terms below
    2**(emax_floor - F) are cut), as Hopper/Blackwell do for BF16/TF32 (-133).
    ``zeros_in_emax``: zero terms set e_max too (see :func:`max_exponent`).
    """
    e_max = max_exponent(alg, terms, include_zeros=zeros_in_emax)
    if emax_floor is not None:
        e_max = alg.max(e_max, emax_floor)
    total = alg.sum_all(aligned(alg, t, e_max, F) for t in terms)
    return wrap_carry(alg, total, F, carry_bits), e_max


def exact_sum(alg: Algebra, terms: Sequence[Term]) -> tuple[Bool, Int, Int]:
    """(neg, mag, lsb): the exact sum is (-1)**neg * mag * 2**lsb; an exact zero is -0 only if every term is -0.

    lsb is static (an exponent, :func:`exact_floor`), so every term is placed
    by its own exponent and no alignment depends on the other terms (one term
    alone is returned as it is).
    """
    if len(terms) == 1:
        t = terms[0]
        return t.neg, t.sig, alg.sub(t.exp, t.frac)
    floor = exact_floor(terms)
    neg, mag = placed_total(alg, [placed(alg, t, floor) for t in terms], [t.neg for t in terms])
    return neg, mag, alg.const(floor)


def exact_floor(terms: Sequence[Term]) -> int:
    """The smallest last place (exponent of the lsb) any of ``terms`` can have: where :func:`exact_sum` puts its lsb."""
    return min(t.exp.lo - t.frac for t in terms)


def placed(alg: Algebra, t: Term, floor: int) -> Int:
    """``t``'s exact signed value in units of 2**floor (floor at most its last place)."""
    return signed(alg, t.neg, alg.shl(t.sig, alg.sub(t.exp, t.frac + floor)))


def placed_total(alg: Algebra, values: Sequence[Int], negs: Sequence[Bool]) -> tuple[Bool, Int]:
    """(neg, mag) of the sum of placed values (:func:`placed`); a zero sum is negative only if every term's sign is."""
    total = alg.sum_all(values)
    neg = alg.or_(alg.lt(total, 0), alg.and_(alg.eq(total, 0), alg.all(negs)))
    return neg, alg.abs(total)


def exact_sum2(alg: Algebra, x: Term, y: Term, *, nominal_x: int = 0) -> tuple[Bool, Int, Int, Bool]:
    """(neg, mag, lsb, sticky) of x + y for correct rounding: value = (-1)**neg * (mag + t) * 2**lsb, t in (0,1) iff sticky.

    Both significands are normalized and placed in a window of
    ``bits(x) + bits(y) + 3`` bits whose top is the leading bit of the
    larger term; a smaller term that falls out of it only sets the sticky
    bit (it cannot cancel more than one bit of the larger): the classic
    FP adder, exact for rounding, and 51 bits wide for FP32.

    ``nominal_x`` (a precision p in bits; 0: off): x (an FMA's product) is
    placed at its nominal exponent, unnormalized, as an FMA datapath and the
    fused-sum models place it, in a window of ``bits(x) + max(bits(y), p) + 3``
    bits. That is exact for rounding to p bits: a cut y is less than half of
    x's lowest possible bit, so the sum's leading bit is at most bits(x) under
    the window's top, which leaves p bits of the sum and 3 below them (a
    window 3 bits narrower fails tests/test_fma_nominal.py).
    """
    window, low = sum2_window(x, y, nominal_x)
    lx, tx = window_lead(alg, x, window, low, normalize=not nominal_x)
    ly, ty = window_lead(alg, y, window, low)
    return window_sum(alg, window, (x.neg, lx, tx), (y.neg, ly, ty))


def sum2_window(x: Term, y: Term, y_at_least: int = 0) -> tuple[int, int]:
    """(window, low) of :func:`exact_sum2`: the window's width in bits, and the lead exponent standing for a zero term
    (``y_at_least``: y counted as at least that many bits wide)."""
    window = x.sig.hi.bit_length() + max(y.sig.hi.bit_length(), y_at_least) + 3
    return window, min(x.exp.lo - x.frac, y.exp.lo - y.frac) - window - 1


def window_lead(alg: Algebra, t: Term, window: int, low: int, *, normalize: bool = True) -> tuple[Int, Int]:
    """(lead, top): t's magnitude is top * 2**(lead - window), top's leading bit at bit window - 1 (lead: the exponent
    just above t's leading bit); (low, 0) for a zero term.

    ``normalize=False``: lead is t's nominal one (just above its significand's highest possible bit), and top's
    leading bit may lie up to bits(t) - 1 lower.
    """
    bits = t.sig.hi.bit_length()
    norm, bl = alg.normalize(t.sig, bits) if normalize else (t.sig, bits)
    top = alg.shl(norm, window - bits)
    return alg.ite(alg.eq(t.sig, 0), low, alg.add(alg.sub(t.exp, t.frac), bl)), top


def window_place(alg: Algebra, window: int, lmax: Int, neg: Bool, lead: Int, top: Int) -> tuple[Int, Int, Bool]:
    """(kept, signed kept, cut): ``top`` shifted right by lmax - lead (units 2**(lmax - window)), with its term's sign,
    and whether non-zero bits fell off."""
    right = alg.clamp(alg.sub(lmax, lead), 0, window + 1)
    kept = alg.shr(top, right)
    return kept, signed(alg, neg, kept), alg.ne(alg.shl(kept, right, at_most=top.hi), top)  # (top >> r) << r <= top


def window_sum(alg: Algebra, window: int, x: tuple[Bool, Int, Int], y: tuple[Bool, Int, Int]) -> tuple[Bool, Int, Int, Bool]:
    """:func:`exact_sum2` of two terms given as (neg, lead, top) (:func:`window_lead`): (neg, mag, lsb, sticky)."""
    (nx, lx, tx), (ny, ly, ty) = x, y
    lmax = alg.max(lx, ly)
    _, ax, sx = window_place(alg, window, lmax, nx, lx, tx)
    _, ay, sy = window_place(alg, window, lmax, ny, ly, ty)
    total = alg.add(ax, ay)
    sticky = alg.or_(sx, sy)  # at most one term is cut (the smaller)
    cut_neg = alg.ite(sx, alg.b2i(nx), alg.b2i(ny))
    neg_total = alg.lt(total, 0)
    # the cut part has the sign of its term; when it opposes the total, borrow one unit
    borrow = alg.and_(sticky, alg.ne(cut_neg, alg.b2i(neg_total)))
    mag = alg.max(alg.sub(alg.abs(total), alg.b2i(borrow)), 0)  # never below 0: |total| >= 2 when a term is cut
    zero_neg = alg.and_(alg.eq(total, 0), alg.and_(alg.not_(sticky), alg.and_(nx, ny)))
    return alg.or_(neg_total, zero_neg), mag, alg.sub(lmax, window), sticky
