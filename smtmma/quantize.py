"""Real-valued blocks to a block-scaled format: one scale per ``block`` values along K, and the elements.

Two rules (``Scheme.block_scale``):

* ``ocp-mx``: OCP Microscaling Formats v1.0, §6.3: the scale is the power of
  two 2^(floor(log2(amax)) - emax_elem), emax_elem the exponent of the
  element format's largest normal (e4m3: 8, e5m2: 15, e2m1: 2, e3m2: 4,
  e2m3: 2), clamped to the scale format's range (a block of zeros takes
  2^-127); each element is V / scale rounded to nearest even, a value past
  the largest normal clamped to it (as oneDNN's MX RFC restates it:
  uxlfoundation/oneDNN rfcs/20250911-mxfp-support).  Power-of-two scales only.
* ``amax``: the scale is amax / (the element format's largest value), rounded
  to nearest even in the scale format and clamped to its range (smallest
  positive value .. largest): NVFP4's block scale in E4M3 (NVIDIA, *Introducing NVFP4 for
  Efficient and Accurate Low-Precision Inference*, 2025; its second,
  per-tensor FP32 scale is the library's, outside the instruction).
  Elements as above.

NaN and infinities have no block encoding here: they are refused.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .arrays import from_patterns, largest_value, smallest_value, to_patterns
from .errors import InputError
from .formats import Format, get_format

__all__ = ["BLOCK_RULES", "quantize_blocks", "rne_quotient"]

#: Rules accepted by :func:`quantize_blocks`.
BLOCK_RULES = ("ocp-mx", "amax")


def quantize_blocks(x: np.ndarray, elem: str | Format, scale: str | Format, block: int, rule: str, *, name: str = "x"
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(element patterns, scale patterns) of the real array ``x`` (..., K), blocks of ``block`` along the last axis.

    The scale array has shape (..., ceil(K / block)); a last, short block is
    scaled by its own amax.  ``rule``: :data:`BLOCK_RULES` (module doc).
    """
    if rule not in BLOCK_RULES:
        raise InputError(f"block_scale must be one of {', '.join(repr(r) for r in BLOCK_RULES)}, got {rule!r}")
    fe, fs = get_format(elem), get_format(scale)
    x = np.asarray(x, dtype=np.float64)
    if not np.isfinite(x).all():
        i = np.unravel_index(int(np.flatnonzero(~np.isfinite(x))[0]), x.shape)
        raise InputError(f"{name}[{', '.join(map(str, i))}] = {x[i]}: NaN and infinities have no block-scaled "
                         "encoding here (pass scale and element patterns with bits=True)")
    K = x.shape[-1]
    nb = -(-K // block)
    padded = np.zeros(x.shape[:-1] + (nb * block,))
    padded[..., :K] = x
    blocks = padded.reshape(x.shape[:-1] + (nb, block))
    amax = np.abs(blocks).max(axis=-1)
    top = largest_value(fe)
    if rule == "ocp-mx":
        if fs.man_bits:
            raise InputError(f"block_scale='ocp-mx' takes power-of-two scales (ue8m0); this instruction's scales are "
                             f"{fs.name}: use block_scale='amax'")
        # floor(log2(amax)) from float64's exponent field, exactly (np.log2 can round up just below a power of two);
        # a block of zeros takes the smallest scale
        e = np.where(amax > 0, np.frexp(np.where(amax > 0, amax, 1.0))[1] - 1, fs.emin + fe.emax)
        e = np.clip(e - fe.emax, fs.emin, fs.emax)
        s_val = np.ldexp(1.0, e.astype(np.int32))
        s_pat = to_patterns(s_val, fs)
    else:
        big = largest_value(fs)
        s_val = np.where(amax > big * top, big, rne_quotient(np.minimum(amax, big * top), np.full_like(amax, top), fs))
        s_val = np.maximum(s_val, smallest_value(fs))
        s_pat = to_patterns(s_val, fs)
    with np.errstate(invalid="ignore", divide="ignore"):
        over = np.abs(blocks / s_val[..., None]) > top
    q = rne_quotient(np.where(over, np.sign(blocks) * top, blocks), np.where(over, 1.0, s_val[..., None]), fe)
    elems = to_patterns(q, fe).reshape(x.shape[:-1] + (nb * block,))[..., :K]
    return elems, s_pat


def rne_quotient(num: np.ndarray, den: np.ndarray, fmt: str | Format) -> np.ndarray:
    """num / den (finite float64, den > 0) rounded to nearest even in ``fmt`` (at most 51 bits), as float64 values.

    float64's quotient is rounded once; only where it lands exactly on a
    midpoint of ``fmt`` can that differ from rounding the exact quotient, and
    there the exact quotient (a Fraction) decides.
    """
    fmt = get_format(fmt)
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    q = num / den
    out = from_patterns(to_patterns(q, fmt, round="rne"), fmt, dtype=np.float64)
    lo = from_patterns(to_patterns(q, fmt, round="rz"), fmt, dtype=np.float64)
    hi = np.where(q < 0, from_patterns(to_patterns(q, fmt, round="rd"), fmt, dtype=np.float64),
                  from_patterns(to_patterns(q, fmt, round="ru"), fmt, dtype=np.float64))
    tie = (hi != lo) & (q == (lo + hi) / 2)
    for i in zip(*np.nonzero(tie)):
        exact = abs(Fraction(float(num[i])) / Fraction(float(den[i])))
        mid = abs(Fraction(float(q[i])))
        if exact != mid:
            out[i] = hi[i] if exact > mid else lo[i]
    return out
