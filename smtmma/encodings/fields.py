"""Decoding bit patterns into fields, written once on the algebra.

``unpack`` gives the exact value ``(-1)**neg * sig * 2**(exp - frac)`` of a
pattern plus its class (zero, inf, NaN); subnormals have ``exp = emin`` and
no hidden bit.  Unsigned formats have ``neg = False``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..formats import Format
from .algebra import Algebra, Bool, Int

__all__ = ["Unpacked", "unpack", "bits_input"]


@dataclass(frozen=True)
class Unpacked:
    """Fields of a decoded value: sign, exponent, integer significand (``frac`` fraction bits), class."""

    neg: Bool
    exp: Int  # unbiased exponent
    sig: Int  # integer significand, hidden bit included
    frac: int  # fraction bits of sig (static)
    is_zero: Bool
    is_inf: Bool
    is_nan: Bool


def bits_input(alg: Algebra, fmt: Format) -> tuple[int, int]:
    """Static interval [lo, hi] of a pattern of ``fmt``."""
    return 0, (1 << fmt.bits) - 1


def unpack(alg: Algebra, fmt: Format, bits: Int) -> Unpacked:
    """Fields of the pattern ``bits`` of format ``fmt`` (see module docstring).

    An interpretation may answer from a table of this very function's
    results (the NumPy one does for formats of <= 16 bits).
    """
    cached = alg.unpack_cached(fmt, bits, unpack)
    if cached is not None:
        return cached
    m, e = fmt.man_bits, fmt.exp_bits
    efield = alg.bits(bits, m + e - 1, m)
    man = alg.low_bits(bits, m) if m else alg.const(0)
    if fmt.signed and not fmt.sign_ignored:
        neg = alg.eq(alg.shr(bits, fmt.bits - 1), 1)
    else:
        neg = alg.bconst(False)
    top = (1 << e) - 1
    if fmt.subnormals:
        normal = alg.lt(0, efield)
        sig = alg.add(man, alg.shl(alg.b2i(normal), m))
        exp = alg.sub(alg.max(efield, 1), fmt.bias)
    else:  # ue8m0: every pattern is 2**(E - bias)
        sig = alg.add(man, 1 << m)
        exp = alg.sub(efield, fmt.bias)
    if fmt.nan == "ieee":
        special = alg.eq(efield, top)
        man_zero = alg.eq(man, 0)
        is_inf = alg.and_(special, man_zero)
        is_nan = alg.and_(special, alg.not_(man_zero))
    elif fmt.nan == "all_ones":
        is_inf = alg.bconst(False)
        is_nan = alg.and_(alg.eq(efield, top), alg.eq(man, (1 << m) - 1))
    elif fmt.nan == "neg_zero":
        is_inf = alg.bconst(False)
        is_nan = alg.eq(bits, fmt.sign_mask)
    elif fmt.nan == "exp_all_ones":
        is_inf = alg.bconst(False)
        is_nan = alg.eq(efield, top)
    else:
        is_inf = is_nan = alg.bconst(False)
    is_zero = alg.eq(sig, 0)
    return Unpacked(neg, exp, sig, m, is_zero, is_inf, is_nan)
