"""Standard FMA (Alg. 3): d = RNE(a * b + c) with IEEE 754 special values."""

from __future__ import annotations

from ..formats import Format
from .algebra import Algebra, Int
from .fields import Unpacked
from .fused_sum import exact_sum2
from .rounding import pack_special, round_pack
from .terms import input_term, merge_specials, product, value_specials

__all__ = ["fma"]


def fma(alg: Algebra, a: Unpacked, b: Unpacked, c: Unpacked, *, out: Format, mode: str = "rne",
        nominal_product: bool = False) -> Int:
    """Bits of ``out`` holding a*b + c rounded once, to nearest-even by default (IEEE NaN 0x7FC00000-style).

    ``mode`` (rne, rz, ru, rd): another IEEE rounding, for hypotheses (the SMT paper's ``a*b (+)_rm c``).
    ``nominal_product``: the same bits, with the product placed at e_a + e_b unnormalized, as the
    fused-sum models place it (:func:`~smtmma.encodings.fused_sum.exact_sum2`'s ``nominal_x``).
    """
    p, ps = product(alg, a, b)
    nominal = out.man_bits + 1 if nominal_product else 0
    neg, mag, lsb, sticky = exact_sum2(alg, p, input_term(c), nominal_x=nominal)  # Alg. 3 line 1: exact a*b + c
    finite = round_pack(alg, out, mode, neg, mag, lsb, sticky)
    specials = merge_specials(alg, [ps, value_specials(alg, c)])
    return pack_special(alg, out, out.nan_bits(), *specials.resolved(alg), finite)
