"""Random inputs for MMA models, as bit patterns (MMA-Sim paper, §3.1.4).

Every generator returns **bit patterns** in unsigned NumPy arrays of the
format's width: ``uint8`` for formats of at most 8 bits, ``uint16`` up to
16 bits, ``uint32`` up to 32 bits (tf32 as 19-bit patterns, e8m13 as 22-bit
patterns, not in their FP32 containers), ``uint64`` for fp64.  Draws are
deterministic for a given :class:`numpy.random.Generator`.

Kinds (:data:`KINDS`):

``normal``
    N(0, 1), rounded to the nearest value of the format (ties to even).
``uniform``
    U(-1, 1), rounded likewise.
``dnn``
    N(0, 1) + Bernoulli(0.001) · N(0, 100) (variance 100, i.e. standard
    deviation 10), the activation-like distribution of §3.1.4.
``bits``
    Uniformly random bit streams: every pattern equally likely, so
    subnormals, infinities and NaNs all occur.
``finite-bits``
    Random bit streams with the NaN and infinity patterns redrawn.
``ill-conditioned``
    (:func:`draw_dot` only) dot products with large cancellation: pairs of
    products that cancel exactly or nearly, small residues, and an
    accumulator that cancels most of the sum.

Values outside a format's finite range saturate to its largest finite
value (sampling never produces an overflow to infinity; ``bits`` covers
those).  Unsigned formats (ue8m0, ue4m3) take the absolute value.
"""

from __future__ import annotations

from typing import Optional, Union

import numpy as np
import numpy.typing as npt

from .errors import InputError, UnknownNameError, unknown_name
from .formats import Format, get_format

__all__ = [
    "KINDS",
    "ELEMENT_KINDS",
    "dtype_for",
    "round_to_format",
    "to_float64",
    "is_nan_bits",
    "is_inf_bits",
    "negate_bits",
    "draw",
    "draw_dot",
    "draw_scales",
    "draw_operands",
]

#: Kinds :func:`draw` accepts (element-wise distributions).
ELEMENT_KINDS: tuple[str, ...] = ("normal", "uniform", "dnn", "bits", "finite-bits")
#: Kinds :func:`draw_dot` accepts.
KINDS: tuple[str, ...] = ELEMENT_KINDS + ("ill-conditioned",)

FormatLike = Union[str, Format]
Shape = Union[int, tuple[int, ...]]


def dtype_for(fmt: FormatLike) -> np.dtype:
    """The unsigned dtype holding one pattern of ``fmt`` (uint8/16/32/64)."""
    bits = get_format(fmt).bits
    for width, dt in ((8, np.uint8), (16, np.uint16), (32, np.uint32), (64, np.uint64)):
        if bits <= width:
            return np.dtype(dt)
    raise InputError(f"format {get_format(fmt).name} is wider than 64 bits")


def _fields(fmt: Format, bits: npt.NDArray[np.unsignedinteger]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sign, exponent field, fraction field) of each pattern, as uint64 arrays."""
    b = np.asarray(bits).astype(np.uint64)
    sign = (b >> np.uint64(fmt.bits - 1)) & np.uint64(1) if fmt.signed else np.zeros_like(b)
    if fmt.sign_ignored:
        sign = np.zeros_like(b)
    mag = b & np.uint64((1 << (fmt.exp_bits + fmt.man_bits)) - 1)
    efield = mag >> np.uint64(fmt.man_bits)
    man = mag & np.uint64((1 << fmt.man_bits) - 1)
    return sign, efield, man


def is_nan_bits(fmt: FormatLike, bits: npt.ArrayLike) -> np.ndarray:
    """Boolean array: which patterns of ``fmt`` encode NaN (vectorized :meth:`Format.is_nan_bits`)."""
    fmt = get_format(fmt)
    b = np.asarray(bits).astype(np.uint64)
    _, efield, man = _fields(fmt, b)
    top = (1 << fmt.exp_bits) - 1
    if fmt.nan == "ieee":
        return (efield == top) & (man != 0)
    if fmt.nan == "all_ones":
        return (efield == top) & (man == (1 << fmt.man_bits) - 1)
    if fmt.nan == "neg_zero":
        return b == np.uint64(fmt.sign_mask)
    if fmt.nan == "exp_all_ones":
        return efield == top
    return np.zeros(b.shape, dtype=bool)


def is_inf_bits(fmt: FormatLike, bits: npt.ArrayLike) -> np.ndarray:
    """Boolean array: which patterns of ``fmt`` encode ±inf."""
    fmt = get_format(fmt)
    b = np.asarray(bits).astype(np.uint64)
    if not fmt.has_inf:
        return np.zeros(b.shape, dtype=bool)
    mag = b & np.uint64((1 << (fmt.exp_bits + fmt.man_bits)) - 1)
    return mag == np.uint64(((1 << fmt.exp_bits) - 1) << fmt.man_bits)


def to_float64(fmt: FormatLike, bits: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Values of the patterns as float64 (exact for every format of this package; NaN/±inf kept)."""
    fmt = get_format(fmt)
    b = np.asarray(bits)
    if fmt.name == "fp64":
        return b.astype(np.uint64).view(np.float64).copy()
    sign, efield, man = _fields(fmt, b)
    ef = efield.astype(np.int64)
    mf = man.astype(np.float64)
    if fmt.subnormals:
        sig = np.where(ef > 0, mf + 2.0**fmt.man_bits, mf)
        exp = np.maximum(ef, 1) - fmt.bias
    else:
        sig = mf + 2.0**fmt.man_bits
        exp = ef - fmt.bias
    val = np.ldexp(sig, (exp - fmt.man_bits).astype(np.int32))
    val = np.where(sign == 1, -val, val)
    val = np.where(is_inf_bits(fmt, b), np.where(sign == 1, -np.inf, np.inf), val)
    return np.where(is_nan_bits(fmt, b), np.nan, val)


def round_to_format(fmt: FormatLike, x: npt.ArrayLike, *, overflow: str = "saturate") -> np.ndarray:
    """Round float64 values to the nearest patterns of ``fmt`` (ties to even), exactly.

    Gradual underflow where the format has subnormals; ``overflow`` is
    "saturate" (largest finite value, the default) or "inf" (±inf where the
    format has one, else saturate).  NaN inputs give the format's NaN
    (saturating formats without NaN give 0).  Negative values of unsigned
    formats take their absolute value; -0 stays -0 where it exists.
    Returns an array of :func:`dtype_for` ``(fmt)``.
    """
    fmt = get_format(fmt)
    x = np.asarray(x, dtype=np.float64)
    dt = dtype_for(fmt)
    if fmt.name == "fp64":
        return x.view(np.uint64).copy()
    m = fmt.man_bits
    neg = np.signbit(x) if (fmt.signed and not fmt.sign_ignored) else np.zeros(x.shape, dtype=bool)
    nan = np.isnan(x)
    a = np.abs(np.where(nan, 0.0, x))
    inf_in = np.isinf(a)
    a = np.where(inf_in, 0.0, a)
    # exponent of the leading bit, clamped to the format's smallest exponent
    _, e2 = np.frexp(a)
    e = np.maximum(e2.astype(np.int64) - 1, fmt.emin)
    # a / 2^(e - m) is exact in float64 (power-of-two scaling, no underflow: e - m >= emin - m >= -1074)
    scaled = np.ldexp(a, (m - e).astype(np.int32))
    sig = np.rint(scaled).astype(np.int64)  # rint: ties to even
    carry = sig >= (1 << (m + 1))
    sig = np.where(carry, sig >> 1, sig)
    e = np.where(carry, e + 1, e)
    # overflow
    over = (e > fmt.emax) | ((e == fmt.emax) & (sig > fmt.max_sig)) | inf_in
    if not fmt.subnormals:
        sig = np.where(a == 0, 1 << m, sig)  # no zero (ue8m0): smallest value
    efield = np.where(sig >> m > 0, e + fmt.bias, 0) if fmt.subnormals else e + fmt.bias
    mag = (efield.astype(np.uint64) << np.uint64(m)) | (sig.astype(np.uint64) & np.uint64((1 << m) - 1))
    max_mag = np.uint64(((fmt.emax + fmt.bias) << m) | (fmt.max_sig & ((1 << m) - 1)))
    if overflow == "inf" and fmt.has_inf:
        over_mag = np.uint64(fmt.inf_bits())
    elif overflow in ("inf", "saturate"):
        over_mag = max_mag
    else:
        raise InputError(f"overflow must be 'saturate' or 'inf', got {overflow!r}")
    mag = np.where(over, over_mag, mag)
    out = mag | np.where(neg, np.uint64(fmt.sign_mask), np.uint64(0))
    if fmt.nan == "neg_zero":  # FNUZ: no -0 (0x80 is NaN)
        out = np.where(out == np.uint64(fmt.sign_mask), np.uint64(0), out)
    if fmt.nan != "none":
        out = np.where(nan, np.uint64(fmt.nan_bits()), out)
    else:
        out = np.where(nan, np.uint64(0), out)
    return out.astype(dt)


def negate_bits(fmt: FormatLike, bits: npt.ArrayLike) -> np.ndarray:
    """Patterns of the negated values (flip the sign bit; zero of FNUZ formats stays 0)."""
    fmt = get_format(fmt)
    b = np.asarray(bits)
    if not fmt.signed or fmt.sign_ignored:
        raise InputError(f"format {fmt.name} is unsigned")
    out = b ^ b.dtype.type(fmt.sign_mask)
    if fmt.nan == "neg_zero":
        out = np.where(b == 0, b, out)
        out = np.where(b == b.dtype.type(fmt.sign_mask), b, out)  # NaN stays NaN
    return out.astype(b.dtype)


def _random_bits(fmt: Format, shape: Shape, rng: np.random.Generator) -> np.ndarray:
    dt = dtype_for(fmt)
    raw = rng.integers(0, np.iinfo(np.uint64).max, size=shape, dtype=np.uint64, endpoint=True)
    return (raw & np.uint64((1 << fmt.bits) - 1) if fmt.bits < 64 else raw).astype(dt)


def draw(kind: str, fmt: FormatLike, shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Random patterns of ``fmt`` with the given ``shape``, drawn as ``kind`` (one of :data:`ELEMENT_KINDS`).

    Returns an unsigned array of :func:`dtype_for` ``(fmt)``.
    """
    fmt = get_format(fmt)
    if kind == "normal":
        return round_to_format(fmt, rng.standard_normal(shape))
    if kind == "uniform":
        return round_to_format(fmt, rng.uniform(-1.0, 1.0, shape))
    if kind == "dnn":
        x = rng.standard_normal(shape) + rng.binomial(1, 0.001, shape) * rng.normal(0.0, 10.0, shape)
        return round_to_format(fmt, x)
    if kind == "bits":
        return _random_bits(fmt, shape, rng)
    if kind == "finite-bits":
        out = _random_bits(fmt, shape, rng)
        bad = is_nan_bits(fmt, out) | is_inf_bits(fmt, out)
        while bad.any():
            out[bad] = _random_bits(fmt, int(bad.sum()), rng)
            bad = is_nan_bits(fmt, out) | is_inf_bits(fmt, out)
        return out
    if kind == "ill-conditioned":
        raise InputError("'ill-conditioned' describes dot products: use draw_dot")
    raise UnknownNameError(unknown_name("sampling kind", kind, KINDS))


def draw_scales(kind: str, fmt: FormatLike, shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Block-scale patterns of ``fmt`` (ue8m0 or ue4m3).

    ``bits`` gives uniformly random patterns (NaN included); every other kind
    gives finite scales near 1: ue8m0 2^j with j uniform in [-20, 20], ue4m3
    |N(0, 1)| rounded (zero and subnormal scales included).  Returns an
    unsigned array of :func:`dtype_for` ``(fmt)``.
    """
    fmt = get_format(fmt)
    if kind == "bits":
        return _random_bits(fmt, shape, rng)
    if fmt.name == "ue8m0":
        return (127 + rng.integers(-20, 21, size=shape)).astype(dtype_for(fmt))
    if kind == "finite-bits":
        return draw("finite-bits", fmt, shape, rng)
    return round_to_format(fmt, np.abs(rng.standard_normal(shape)))


def draw_dot(
    kind: str,
    a_fmt: FormatLike,
    b_fmt: FormatLike,
    c_fmt: FormatLike,
    n: int,
    k: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` dot products of length ``k``: patterns ``(a, b, c)`` of shapes (n, k), (n, k), (n,).

    ``kind`` is one of :data:`KINDS`; dtypes are :func:`dtype_for` of each format.
    """
    a_fmt, b_fmt, c_fmt = get_format(a_fmt), get_format(b_fmt), get_format(c_fmt)
    if kind != "ill-conditioned":
        return draw(kind, a_fmt, (n, k), rng), draw(kind, b_fmt, (n, k), rng), draw(kind, c_fmt, (n,), rng)
    return _ill_conditioned(a_fmt, b_fmt, c_fmt, n, k, rng)


def _ill_conditioned(
    a_fmt: Format, b_fmt: Format, c_fmt: Format, n: int, k: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dot products with condition number sum|p_k| / |sum p_k| >> 1.

    Recipe, per row: magnitudes spread over a few binades; a random half of
    the positions paired so that a_j' = -a_j, b_j' = b_j (products cancel
    exactly) or b_j' one ulp away (they nearly cancel); a few positions get
    tiny residues; c cancels the float64 sum of the products (rounded to
    c's format) in most rows.
    """
    a_max = _max_finite(a_fmt)
    # a: N(0,1) scaled by 2^U{0..span}, b: N(0,1); spans adapted to the format range
    span_a = int(max(0, min(8, np.floor(np.log2(a_max)) - 1)))
    a = round_to_format(a_fmt, rng.standard_normal((n, k)) * np.exp2(rng.integers(0, span_a + 1, (n, k))))
    b = round_to_format(b_fmt, rng.standard_normal((n, k)) * np.exp2(rng.integers(0, 2, (n, k))))
    if k >= 2:
        for row in range(n):
            perm = rng.permutation(k)
            n_pairs = int(rng.integers(1, k // 2 + 1))
            src, dst = perm[:n_pairs], perm[n_pairs : 2 * n_pairs]
            a[row, dst] = negate_bits(a_fmt, a[row, src])
            b[row, dst] = b[row, src]
            # nudge some partners by one ulp (adjacent pattern, staying finite)
            nudge = rng.random(n_pairs) < 0.5
            nb = b[row, dst].astype(np.int64) + np.where(rng.random(n_pairs) < 0.5, 1, -1)
            nb = np.clip(nb, 0, (1 << b_fmt.bits) - 1).astype(b.dtype)
            ok = nudge & ~is_nan_bits(b_fmt, nb) & ~is_inf_bits(b_fmt, nb)
            b[row, dst] = np.where(ok, nb, b[row, dst])
    # small residues
    tiny = rng.random((n, k)) < 0.15
    if tiny.any():
        small = rng.standard_normal((n, k)) * np.exp2(-rng.integers(4, 24, (n, k)))
        a = np.where(tiny, round_to_format(a_fmt, small), a)
    # c cancels the sum of the products (float64, close but not exact)
    av, bv = to_float64(a_fmt, a), to_float64(b_fmt, b)
    with np.errstate(over="ignore", invalid="ignore"):
        total = (av * bv).sum(axis=1)
    total = np.where(np.isfinite(total), total, 0.0)
    noise = rng.standard_normal(n) * np.exp2(-rng.integers(0, 30, n))
    c_val = np.where(rng.random(n) < 0.8, -total, noise)
    c = round_to_format(c_fmt, c_val)
    return a.astype(dtype_for(a_fmt)), b.astype(dtype_for(b_fmt)), c


def _max_finite(fmt: Format) -> float:
    return float(fmt.max_sig) * 2.0 ** (fmt.emax - fmt.man_bits)


def draw_operands(
    kind: str,
    a_fmt: FormatLike,
    b_fmt: FormatLike,
    c_fmt: FormatLike,
    n: int,
    k: int,
    rng: np.random.Generator,
    scale_fmt: Optional[FormatLike] = None,
    block: Optional[int] = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
    """:func:`draw_dot`'s ``(a, b, c)`` and, for block-scaled operands (``scale_fmt`` and ``block`` given), the scales of
    A and B, one per ``block`` lanes (:func:`draw_scales`, the same ``kind``); every array uint64, scales None otherwise."""
    a, b, c = (x.astype(np.uint64) for x in draw_dot(kind, a_fmt, b_fmt, c_fmt, n, k, rng))
    if scale_fmt is None or not block:
        return a, b, c, None, None
    nb = -(-k // block)
    sa = draw_scales(kind, scale_fmt, (n, nb), rng).astype(np.uint64)
    sb = draw_scales(kind, scale_fmt, (n, nb), rng).astype(np.uint64)
    return a, b, c, sa, sb
