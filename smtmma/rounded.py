"""IEEE arithmetic a GEMM kernel does around the instruction, correctly rounded, vectorized over float64 arrays.

Values travel as float64 (every value of fp16, bf16, fp32 and of their
sums' and products' exact parts fits).  A sum is computed exactly as
``s + e`` (Knuth's TwoSum), rounded to odd at float64's 53 bits, then to
nearest even in the target format: with at least two bits to spare
(53 >= p + 2 for p <= 24) round-to-odd followed by RNE is a single RNE
(Boldo and Melquiond, *When double rounding is odd*, 2005).  FP64 sums are
NumPy's own (IEEE RNE); an FP64 fused multiply-add whose product is not
exact in float64 is computed in exact rationals.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .arrays import from_patterns, to_patterns
from .formats import Format, get_format

__all__ = ["round_to", "round_f32", "add_rounded", "mul_rounded", "fma_rounded", "patterns_rne"]

_FP64 = get_format("fp64")
#: Formats whose NumPy dtype rounds a float64 correctly (RNE) on conversion, and whose adds NumPy rounds once (fp32).
_NATIVE = {"fp32": np.float32, "fp16": np.float16}


def round_to(x: np.ndarray, fmt: str | Format) -> np.ndarray:
    """float64 ``x`` rounded to nearest even in ``fmt`` (overflow to inf where it has one), as float64 values."""
    fmt = get_format(fmt)
    if fmt == _FP64:
        return np.asarray(x, dtype=np.float64)
    native = _NATIVE.get(fmt.name)
    if native is not None:  # NumPy's float64 -> float32/float16 casts round to nearest even, overflow to inf
        with np.errstate(over="ignore"):
            return np.asarray(x, dtype=np.float64).astype(native).astype(np.float64)
    if fmt.name == "bf16":
        return _bf16(np.asarray(x, dtype=np.float64))
    return from_patterns(to_patterns(np.asarray(x, dtype=np.float64), fmt, round="rne"), fmt, dtype=np.float64)


def patterns_rne(x: np.ndarray, fmt: str | Format) -> np.ndarray:
    """Patterns of float64 ``x`` rounded to nearest even in ``fmt`` (as :func:`smtmma.arrays.to_patterns` with
    ``round='rne'``: NaN canonical, overflow to inf), through NumPy's own casts where they round so."""
    fmt = get_format(fmt)
    native = _NATIVE.get(fmt.name) or (np.float64 if fmt == _FP64 else None)
    if native is None:
        return to_patterns(x, fmt, round="rne")
    with np.errstate(over="ignore"):
        v = np.asarray(x, dtype=np.float64).astype(native)
    bits = v.view(f"u{v.itemsize}")
    nan = np.isnan(v)
    return np.where(nan, bits.dtype.type(fmt.nan_bits()), bits) if nan.any() else bits


def round_f32(v: np.ndarray, fmt: str | Format) -> np.ndarray:
    """float32 ``v`` rounded to nearest even in fp32, bf16 or fp16, as float32 values (overflow to inf)."""
    fmt = get_format(fmt)
    v = np.asarray(v, dtype=np.float32)
    if fmt.name == "fp32":
        return v
    if fmt.name == "fp16":
        with np.errstate(over="ignore"):
            return v.astype(np.float16).astype(np.float32)
    if fmt.name != "bf16":
        raise ValueError(f"round_f32 rounds to fp32, bf16 or fp16, not {fmt.name}")
    bits = v.view(np.uint32)
    top = ((bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)) << np.uint32(16)
    return np.where(np.isnan(v), np.float32(np.nan), top.view(np.float32))


def _bf16(x: np.ndarray) -> np.ndarray:
    """float64 ``x`` rounded to nearest even in bf16: round to odd at FP32's 24 bits (16 to spare), then
    :func:`round_f32`'s RNE on the FP32 pattern's top 16 bits."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
        bits = f.view(np.uint32).astype(np.int64)
        fix = (f.astype(np.float64) != x) & ((bits & 1) == 0) & np.isfinite(f)
        bits = np.where(fix, bits + np.where(np.abs(x) > np.abs(f.astype(np.float64)), 1, -1), bits)  # a unit of magnitude
    return round_f32(bits.astype(np.uint32).view(np.float32), "bf16").astype(np.float64)


def _two_sum(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, e): s = fl64(x + y) and x + y = s + e exactly (e is NaN where s is not finite)."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = x + y
        bp = s - x
        e = (x - (s - bp)) + (y - bp)
    return s, e


def _round_odd_then(s: np.ndarray, e: np.ndarray, fmt: Format) -> np.ndarray:
    """RNE in ``fmt`` (p <= 51 bits) of the exact value s + e, through round-to-odd at 53 bits."""
    inexact = (e != 0) & np.isfinite(e) & np.isfinite(s)
    even = (s.view(np.int64) & 1) == 0
    fix = inexact & even
    if fix.any():
        s = s.copy()
        s[fix] = np.nextafter(s[fix], np.where(e[fix] > 0, np.inf, -np.inf))
    return round_to(s, fmt)


def add_rounded(x: np.ndarray, y: np.ndarray, fmt: str | Format) -> np.ndarray:
    """x + y (float64 arrays of ``fmt`` values: the fp32/bf16/fp16 path relies on it) rounded once to nearest even
    in ``fmt``; IEEE specials as IEEE adds them.

    An exact zero sum of operands of opposite signs is +0 (RNE), as IEEE 754 says.
    """
    fmt = get_format(fmt)
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if fmt == _FP64:
        with np.errstate(invalid="ignore", over="ignore"):
            return x + y
    if fmt.name in ("fp32", "bf16", "fp16"):
        # IEEE binary32 addition, then RNE to fmt: for p <= 11 bits, 24 >= 2p + 1 makes the double rounding of a sum
        # innocuous (S. A. Figueroa, "When is double rounding innocuous?", SIGNUM Newsletter 30(3), 1995)
        with np.errstate(invalid="ignore", over="ignore"):
            return round_f32(x.astype(np.float32) + y.astype(np.float32), fmt).astype(np.float64)
    s, e = _two_sum(x, y)
    return _round_odd_then(s, e, fmt)


def mul_rounded(a: np.ndarray | float, x: np.ndarray, fmt: str | Format) -> np.ndarray:
    """a * x rounded once to nearest even in ``fmt`` (values of ``fmt``): the float64 product is exact for formats of
    up to 26 bits of precision and is IEEE's own product for FP64; the sign of a zero product is the product's."""
    fmt = get_format(fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        return round_to(np.asarray(a, dtype=np.float64) * np.asarray(x, dtype=np.float64), fmt)


def fma_rounded(a: np.ndarray | float, x: np.ndarray, u: np.ndarray, fmt: str | Format) -> np.ndarray:
    """a * x + u rounded once to nearest even in ``fmt`` (a, x, u values of ``fmt``, float64 arrays or scalars).

    For formats of up to 24 bits of precision the product is exact in float64;
    for FP64 a product that float64 cannot hold exactly is summed in rationals.
    """
    fmt = get_format(fmt)
    a = np.asarray(a, dtype=np.float64)
    x, u = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(u, dtype=np.float64))
    a = np.broadcast_to(a, x.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        p = a * x
    if fmt != _FP64:
        s, e = _two_sum(p, u)
        return _round_odd_then(s, e, fmt)
    out = np.empty(x.shape, dtype=np.float64)
    flat_out, flat_p, flat_a, flat_x, flat_u = out.reshape(-1), p.reshape(-1), a.reshape(-1), x.reshape(-1), u.reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):
        flat_out[...] = flat_p + flat_u
    for i in range(flat_out.size):
        ai, xi, ui = float(flat_a[i]), float(flat_x[i]), float(flat_u[i])
        if not (np.isfinite(ai) and np.isfinite(xi) and np.isfinite(ui) and np.isfinite(flat_p[i])):
            continue  # specials and overflowing products: IEEE's answer is the float64 one
        exact = Fraction(ai) * Fraction(xi) + Fraction(ui)
        if exact == 0:
            continue  # the sign of an exact zero: as the float64 sum gives it
        flat_out[i] = _fraction_to_fp64(exact)
    return out


def _fraction_to_fp64(q: Fraction) -> float:
    """The FP64 value nearest ``q`` (ties to even; Python's int/int division rounds correctly), +-inf past the range."""
    try:
        return q.numerator / q.denominator
    except OverflowError:
        return float("inf") if q > 0 else float("-inf")
