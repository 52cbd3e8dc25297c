"""Binary add and multiply (Alg. 1): RNE with IEEE special values, optionally flushing subnormal results (FTZ-Add/FTZ-Mul)."""

from __future__ import annotations

from ..formats import Format
from .algebra import Algebra, Int
from .fields import Unpacked
from .fused_sum import exact_sum2
from .rounding import flush_subnormal, pack_special, round_pack
from .terms import Specials, Term, input_term, merge_specials, product, value_specials

__all__ = ["mul", "round_product", "add", "flush_input"]


def mul(alg: Algebra, x: Unpacked, y: Unpacked, *, out: Format, ftz: bool, nan_bits: int, mode: str = "rne") -> Int:
    """Bits of RNE(x * y) in ``out``; with ``ftz`` a subnormal result becomes a zero of the same sign (Alg. 1 lines 4-5).

    ``mode`` (rne, rz, ru, rd): another IEEE rounding, for hypotheses (the SMT paper's Listing 1.1).
    """
    p, ps = product(alg, x, y)
    return round_product(alg, p, ps, out=out, ftz=ftz, nan_bits=nan_bits, mode=mode)


def round_product(alg: Algebra, p: Term, ps: Specials, *, out: Format, ftz: bool, nan_bits: int, mode: str = "rne") -> Int:
    """Bits of the exact product ``p`` (specials ``ps``) rounded to ``out``: the second half of :func:`mul` (Alg. 1 lines 4-5)."""
    z = round_pack(alg, out, mode, p.neg, p.sig, alg.sub(p.exp, p.frac))
    if ftz:
        z = flush_subnormal(alg, out, z)
    return pack_special(alg, out, nan_bits, *ps.resolved(alg), z)


def add(alg: Algebra, x: Unpacked, y: Unpacked, *, out: Format, ftz: bool, nan_bits: int, mode: str = "rne") -> Int:
    """Bits of RNE(x + y) in ``out`` (IEEE zero signs); with ``ftz`` subnormal results flush to signed zero (Alg. 1 line 2).

    ``mode`` (rne, rz, ru, rd): another IEEE rounding, for hypotheses (the SMT paper's Table 2 ``a (+)_rm b``);
    an exact zero sum of opposite signs is +0 in every mode (IEEE gives -0 under RD).
    """
    neg, mag, lsb, sticky = exact_sum2(alg, input_term(x), input_term(y))
    z = round_pack(alg, out, mode, neg, mag, lsb, sticky)
    if ftz:
        z = flush_subnormal(alg, out, z)
    specials = merge_specials(alg, [value_specials(alg, x), value_specials(alg, y)])
    return pack_special(alg, out, nan_bits, *specials.resolved(alg), z)


def flush_input(alg: Algebra, u: Unpacked) -> Unpacked:
    """A subnormal input, or -0, becomes +0 (Alg. 2 lines 1-3, FlushSubnormal: |x| < MinNormal -> +0)."""
    sub = alg.and_(alg.lt(u.sig, 1 << u.frac), alg.not_(alg.or_(u.is_nan, u.is_inf)))
    return Unpacked(
        alg.and_(u.neg, alg.not_(sub)), u.exp, alg.ite(sub, 0, u.sig), u.frac,
        alg.or_(u.is_zero, sub), u.is_inf, u.is_nan,
    )
