"""Standard FMA (Alg. 3): d = RNE(a * b + c) with IEEE 754 special values."""

from __future__ import annotations

from ..formats import Format
from .algebra import Algebra, Int
from .fields import Unpacked
from .fused_sum import exact_sum2
from .rounding import pack_special, round_pack
from .terms import input_term, merge_specials, product, value_specials

__all__ = ["fma", "quieted"]


def fma(alg: Algebra, a: Unpacked, b: Unpacked, c: Unpacked, *, out: Format, mode: str = "rne",
        nominal_product: bool = False, nan: str = "ieee") -> Int:
    """Bits of ``out`` holding a*b + c rounded once, to nearest-even by default.

    ``nan``: ``ieee`` returns the canonical quiet NaN (0x7FF8... for FP64); ``propagate`` returns the NaN
    operand quieted, sign and payload kept, b first, then c, then a, and an invalid operation (inf x 0,
    inf - inf) gives the negative canonical NaN 0xFFF8... -- what H200's DMMA returned (hw-samples/
    H200-survey-f64f64.jsonl, probes).  ``propagate`` needs a, b and c in ``out``'s format.
    ``mode`` (rne, rz, ru, rd): another IEEE rounding, for hypotheses (the SMT paper's ``a*b (+)_rm c``).
    ``nominal_product``: the same bits, with the product placed at e_a + e_b unnormalized, as the
    fused-sum models place it (:func:`~smtmma.encodings.fused_sum.exact_sum2`'s ``nominal_x``).
    """
    p, ps = product(alg, a, b)
    nominal = out.man_bits + 1 if nominal_product else 0
    neg, mag, lsb, sticky = exact_sum2(alg, p, input_term(c), nominal_x=nominal)  # Alg. 3 line 1: exact a*b + c
    finite = round_pack(alg, out, mode, neg, mag, lsb, sticky)
    specials = merge_specials(alg, [ps, value_specials(alg, c)])
    nan_bits: Int = alg.const(out.nan_bits())
    if nan == "propagate":
        nan_bits = alg.const(out.nan_bits() | out.sign_mask)
        for u in (a, c, b):  # the last ite wins: b before c before a
            nan_bits = alg.ite(u.is_nan, quieted(alg, out, u), nan_bits)
    elif nan != "ieee":
        raise ValueError(f"fma: NaN style {nan!r} is not ieee or propagate")
    return pack_special(alg, out, nan_bits, *specials.resolved(alg), finite)


def quieted(alg: Algebra, fmt: Format, u: Unpacked) -> Int:
    """The NaN ``u`` (decoded from ``fmt``) as a quiet NaN of ``fmt``: its sign and payload, the quiet bit set."""
    m = fmt.man_bits
    body = alg.add(alg.low_bits(u.sig, m - 1), (((1 << fmt.exp_bits) - 1) << m) | (1 << (m - 1)))
    return alg.add(body, alg.shl(alg.b2i(u.neg), fmt.bits - 1))
