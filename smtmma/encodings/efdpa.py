"""E-FDPA (Alg. 6): d = RNE-FP32(c + sum a_k b_k), the sum exact."""

from __future__ import annotations

from typing import Sequence

from ..formats import Format
from .algebra import Algebra, Int
from .fields import Unpacked
from .fused_sum import exact_sum
from .rounding import pack_special, round_pack
from .terms import input_term, merge_specials, product, value_specials

__all__ = ["efdpa"]


def efdpa(alg: Algebra, a: Sequence[Unpacked], b: Sequence[Unpacked], c: Unpacked, *, out: Format, nan_bits: int) -> Int:
    """Bits of ``out`` holding the exact c + sum a_k b_k rounded to nearest-even (Alg. 6 line 1).

    The exact sum is an integer as wide as the exponent range needs (exact
    Python integers on the concrete side).
    """
    prods = [product(alg, x, y) for x, y in zip(a, b)]
    terms = [t for t, _ in prods] + [input_term(c)]
    neg, mag, lsb = exact_sum(alg, terms)
    alg.note("exact sum, before rounding", mag, exp=lsb, neg=neg)
    finite = round_pack(alg, out, "rne", neg, mag, lsb)
    specials = merge_specials(alg, [s for _, s in prods] + [value_specials(alg, c)])
    return pack_special(alg, out, nan_bits, *specials.resolved(alg), finite)
