"""The one rounding funnel: exact value -> bits of a format, for every mode.

Only :func:`round_pack` knows rounding modes, overflow, subnormal output
and containers; elementary ops never round inline.  Modes: ``rne`` (to
nearest, ties to even), ``rz`` (toward zero), ``rd`` (toward -inf), ``ru``
(toward +inf).  Overflow gives infinity in every mode (docs/semantics.md).
"""

from __future__ import annotations

from ..formats import Format
from .algebra import Algebra, BoolLike, Int

__all__ = ["round_pack", "pack_special", "flush_subnormal", "convert_fixed", "convert_fixed_zero", "MODES"]

MODES = ("rne", "rz", "rd", "ru")


def _to_container(alg: Algebra, fmt: Format, bits: Int) -> Int:
    return alg.shl(bits, fmt.container_shift) if fmt.container else bits


def round_pack(
    alg: Algebra,
    fmt: Format,
    mode: str,
    neg: BoolLike,
    sig: Int,
    exp: Int,
    sticky: BoolLike = False,
) -> Int:
    """Bits of ``(-1)**neg * (sig + t) * 2**exp`` rounded to ``fmt`` with ``mode``.

    ``sig >= 0`` is an integer; ``t`` is 0, or in (0, 1) when ``sticky``
    (bits below ``sig``'s last place were dropped).  A zero value keeps the
    sign ``neg``.  Formats with a container (E8M13, TF32) come back in the
    container's layout (FP32 bits).
    """
    assert mode in MODES, mode
    assert sig.lo >= 0
    neg = alg.blift(neg)
    sticky = alg.blift(sticky)
    m, emin = fmt.man_bits, fmt.emin
    width = max(sig.hi.bit_length(), m + 2)
    norm, n = alg.normalize(sig, width)  # value = norm * 2**(lead - width + 1)
    lead = alg.add(exp, alg.sub(n, 1))  # exponent of the leading bit
    # drop the bits below the result's last place, 2**(max(lead, emin) - m): at least width - 1 - m >= 1 bits
    right = alg.clamp(alg.add(alg.max(alg.sub(emin, lead), 0), width - 1 - m), 0, width + 1)
    kept = alg.shr(norm, right)
    rem2 = alg.shl(alg.sub(norm, alg.shl(kept, right, at_most=norm.hi)), 1)  # twice the dropped part ((n >> r) << r <= n)
    half2 = alg.shl(1, right)  # twice half a unit of the last place
    if mode == "rne":
        above = alg.or_(alg.lt(half2, rem2), alg.and_(alg.eq(rem2, half2), sticky))
        tie = alg.and_(alg.eq(rem2, half2), alg.not_(sticky))
        odd = alg.eq(alg.low_bits(kept, 1), 1)
        inc = alg.or_(above, alg.and_(tie, odd))
    elif mode == "rz":
        inc = alg.bconst(False)
    else:
        inexact = alg.or_(alg.lt(0, rem2), sticky)
        inc = alg.and_(inexact, neg if mode == "rd" else alg.not_(neg))
    field = alg.shl(alg.sub(alg.max(lead, emin), emin), m)
    mag = alg.add(alg.add(field, kept), alg.b2i(inc))
    if not fmt.subnormals:  # no subnormal range: the hidden bit is not part of the field (ue8m0)
        mag = alg.max(alg.sub(mag, 1 << m), 0)
    # sig == 0 with sticky: a value below the smallest subnormal (precondition);
    # it rounds to 0, or to the smallest subnormal on its side under RD/RU
    mag = alg.ite(alg.eq(sig, 0), alg.b2i(inc) if mode in ("rd", "ru") else 0, mag)
    if fmt.has_inf:
        inf_mag = fmt.inf_bits()
        mag = alg.min(mag, inf_mag)  # overflow -> infinity
    else:
        top = (fmt.max_exp_field - fmt.emin - fmt.bias + 1) << m | (fmt.max_sig & ((1 << m) - 1))
        over = fmt.nan_bits() & ~fmt.sign_mask if fmt.nan != "none" else top  # no NaN: saturate
        mag = alg.ite(alg.lt(top, mag), over, mag)
    bits = alg.add(mag, alg.ite(neg, fmt.sign_mask, 0))
    return _to_container(alg, fmt, bits)


def pack_special(alg: Algebra, fmt: Format, nan_bits: int, is_nan: BoolLike, pos_inf: BoolLike, neg_inf: BoolLike, finite: Int) -> Int:
    """``finite`` unless a special case holds: NaN (as ``nan_bits``, container layout), or +/-inf."""
    out = alg.ite(neg_inf, _to_container(alg, fmt, alg.const(fmt.inf_bits(True))), finite) if fmt.has_inf else finite
    if fmt.has_inf:
        out = alg.ite(pos_inf, _to_container(alg, fmt, alg.const(fmt.inf_bits())), out)
    return alg.ite(is_nan, nan_bits, out)


def flush_subnormal(alg: Algebra, fmt: Format, bits: Int) -> Int:
    """A subnormal pattern of ``fmt`` becomes the zero of the same sign (output FTZ)."""
    mag = alg.low_bits(bits, fmt.bits - 1)
    sub = alg.and_(alg.lt(0, mag), alg.lt(mag, 1 << fmt.man_bits))
    return alg.ite(sub, alg.shl(alg.shr(bits, fmt.bits - 1), fmt.bits - 1), bits)


def convert_fixed_zero(alg: Algebra, fmt: Format, *, negative: bool) -> Int:
    """Bits of a zero of ``fmt`` (container layout), -0 when ``negative``."""
    return _to_container(alg, fmt, alg.const(fmt.sign_mask if negative else 0))


def convert_fixed(alg: Algebra, fmt: Format, mode: str, total: Int, scale_exp: Int) -> Int:
    """rho(total * 2**scale_exp) for a signed fixed-point integer ``total`` (Table 2); zero gives +0."""
    return round_pack(alg, fmt, mode, alg.lt(total, 0), alg.abs(total), scale_exp)
