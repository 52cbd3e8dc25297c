"""Exact, deliberately simple reference of the MMA models (MMA-Sim paper, Alg. 1-11).

This module is the oracle the fast simulator (``smtmma.encodings``) is tested
against.  It is written for readability, not speed: one function per
algorithm of the paper, each citing "Alg. N", over Python integers and
:class:`fractions.Fraction` only (no floats, no NumPy).  It imports nothing
from ``smtmma.encodings``; it uses :mod:`smtmma.formats` only to read the
traits of a format and to split a bit pattern into sign, exponent and
significand.

Every decision the paper leaves open follows ``docs/semantics.md``:

* ``SignedSig(x) = ±sig × 2^-m`` and ``Exp(x) = max(E, 1) - bias``;
* zero terms do not take part in e_max; an exact zero fixed-point sum is +0;
* ``RZ_F`` truncates the magnitude, ``RD_F`` is floor;
* ``carry_bits`` wraps the aligned sum in a two's-complement register;
* every conversion rho has gradual underflow, and overflow gives ±inf;
* NaN/Inf rules of §4.2, NaN encodings by ``model.nan``;
* FTZ-Add/FTZ-Mul flush results below 2^-126 to a zero of the same sign.

Fixed-point sums are held as Python ints counting units of 2^-F ("units");
``value = S × 2^(e_max - F)``.

Public entry point: :func:`reference_dot`.  The rounding funnel
:func:`round_fraction` is public too (tested on its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Sequence

from smtmma.formats import Format, decode_scalar, get_format, is_negative_zero, to_fraction
from smtmma.models import Model

__all__ = ["reference_dot", "round_fraction", "Operand", "decode"]

TWO = Fraction(2)


# --------------------------------------------------------------------------
# Decoding bit patterns
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Operand:
    """One decoded input: ``kind`` is "num", "inf" or "nan".

    For "num": value = (-1)^neg × sig × 2^(exp - m), ``sig`` the integer
    significand with the hidden bit (0 for a zero), ``exp`` = Exp(x),
    ``m`` the fraction bits of the format.  ``neg`` is also the sign of a
    zero or an infinity.
    """

    kind: str
    neg: bool = False
    sig: int = 0
    exp: int = 0
    m: int = 0

    @property
    def is_zero(self) -> bool:
        return self.kind == "num" and self.sig == 0

    @property
    def signed_sig(self) -> int:
        """SignedSig(x) in units of 2^-m."""
        return -self.sig if self.neg else self.sig

    @property
    def value(self) -> Fraction:
        """Exact value of a finite operand (zeros give 0)."""
        assert self.kind == "num"
        return Fraction(self.signed_sig) * TWO ** (self.exp - self.m)


NAN = Operand("nan")
POS_ZERO = Operand("num")


def decode(fmt_name: str, bits: int, *, via: Optional[str] = None, ftz: bool = False) -> Operand:
    """Decode the pattern ``bits`` of format ``fmt_name``.

    ``via``: the value is first converted exactly to that format and decoded
    there (the unit reads the operand in ``via``'s layout, e.g. an e4m3
    subnormal becomes a normal fp16).  ``ftz``: a subnormal is flushed to +0
    (Alg. 2, lines 1-3).
    """
    fmt = get_format(fmt_name)
    bits = int(bits)
    if via is not None:
        return decode(via, _convert_exactly(fmt, bits, get_format(via)), ftz=ftz)
    if fmt.is_nan_bits(bits):
        return NAN
    if fmt.is_inf_bits(bits):
        return Operand("inf", neg=bool(bits & fmt.sign_mask))
    sign, exp, sig = decode_scalar(fmt, bits)
    op = Operand("num", neg=bool(sign), sig=sig, exp=exp, m=fmt.man_bits)
    if ftz and fmt.subnormals and sig < (1 << fmt.man_bits):
        return Operand("num", exp=exp, m=fmt.man_bits)  # FlushSubnormal: subnormals (and -0) become +0 (exponent kept)
    return op


def _flushed_bits(fmt_name: str, bits: int) -> int:
    """+0 for a subnormal pattern (or -0), else ``bits`` (FlushSubnormal on an operand passed on as bits)."""
    fmt, b = get_format(fmt_name), int(bits)
    if fmt.is_nan_bits(b) or fmt.is_inf_bits(b) or not fmt.subnormals:
        return b
    return 0 if decode_scalar(fmt, b)[2] < (1 << fmt.man_bits) else b


def _convert_exactly(src: Format, bits: int, dst: Format) -> int:
    """The pattern of ``dst`` holding the value of ``bits`` (exact; NaN -> NaN)."""
    v = to_fraction(src, bits)
    if v == "nan":
        return dst.nan_bits()
    if v in ("inf", "-inf"):
        return dst.inf_bits(negative=v == "-inf")
    assert isinstance(v, Fraction)
    out = round_fraction(v, dst, "rz", zero_negative=is_negative_zero(src, bits))
    if to_fraction(dst, out) != v:
        raise ValueError(f"{bits:#x} of {src.name} is not exactly representable in {dst.name}")
    return out


# --------------------------------------------------------------------------
# The rounding funnel: exact Fraction -> bits
# --------------------------------------------------------------------------


def _floor_log2(x: Fraction) -> int:
    """The integer e with 2^e <= x < 2^(e+1), for x > 0."""
    num, den = x.numerator, x.denominator
    e = num.bit_length() - den.bit_length()
    # now 2^(e-1) < x < 2^(e+1)
    if e >= 0:
        if num < den << e:
            e -= 1
    elif num << -e < den:
        e -= 1
    return e


def round_fraction(x: Fraction, fmt: "Format | str", mode: str, *, zero_negative: bool = False) -> int:
    """Round the exact value ``x`` into the bits of ``fmt`` (its own layout).

    ``mode``: "rne" (nearest, ties to even), "rz" (toward zero), "rd"
    (toward -inf), "ru" (toward +inf).  Gradual underflow (subnormals of
    ``fmt``); a nonzero ``x`` that rounds to zero gives the zero of ``x``'s
    sign.  Overflow (a rounded magnitude above the largest finite number)
    gives ±inf in every mode (docs/semantics.md).  ``x == 0`` gives +0, or
    -0 when ``zero_negative``.
    """
    fmt = get_format(fmt)
    x = Fraction(x)
    m = fmt.man_bits
    if x == 0:
        return fmt.sign_mask if zero_negative else 0
    neg = x < 0
    if neg and not fmt.signed:
        raise ValueError(f"negative value for unsigned {fmt.name}")
    a = -x if neg else x
    e = max(_floor_log2(a), fmt.emin)
    # a = (n + rem) × 2^(e - m) with integer n and 0 <= rem < 1
    scaled = a / TWO ** (e - m)
    n, rem = divmod(scaled.numerator, scaled.denominator)
    half = 2 * rem - scaled.denominator  # sign of (rem/den - 1/2)
    if mode == "rne":
        up = half > 0 or (half == 0 and n % 2 == 1)
    elif mode == "rz":
        up = False
    elif mode == "rd":
        up = neg and rem > 0
    elif mode == "ru":
        up = (not neg) and rem > 0
    else:
        raise ValueError(f"unknown rounding mode {mode!r}")
    if up:
        n += 1
        if n == 1 << (m + 1):  # carried into the next binade
            n >>= 1
            e += 1
    sign = fmt.sign_mask if neg else 0
    if e > fmt.emax or (e == fmt.emax and n > fmt.max_sig):
        return sign | fmt.inf_bits()  # overflow -> ±inf, every mode
    if n == 0:
        return sign  # underflow to a signed zero
    if fmt.subnormals:
        efield = e + fmt.bias if n >> m else 0
    else:
        efield = e + fmt.bias
    return sign | (efield << m) | (n & ((1 << m) - 1))


def _in_container(fmt: Format, bits: int) -> int:
    """Bits of ``fmt`` delivered in its container (E8M13 in FP32: 10 zero bits)."""
    return bits << fmt.container_shift if fmt.container else bits


def _nan_bits(model: Model) -> int:
    """NaN output pattern of the model (docs/semantics.md, §4.2)."""
    fmt = get_format(model.d_fmt)
    if model.nan == "nvidia":
        return (1 << (fmt.bits - 1)) - 1  # 0x7FFFFFFF / 0x7FFF
    return fmt.nan_bits()  # IEEE default quiet NaN


def _inf_bits(model: Model, neg: bool) -> int:
    return get_format(model.d_fmt).inf_bits(negative=neg)


def _rho(model: Model, S: int, exp2: int) -> int:
    """Conversion rho of Table 2 applied to S × 2^exp2; S == 0 gives +0."""
    conv = model.conversion
    fmt = get_format(conv.fmt)
    bits = round_fraction(Fraction(S) * TWO**exp2, fmt, conv.mode)
    if fmt.container:
        assert get_format(fmt.container).name == get_format(model.d_fmt).name
        return _in_container(fmt, bits)
    return bits


def _rho_negative_zero(model: Model) -> int:
    """-0 in rho's format (its container's layout)."""
    fmt = get_format(model.conversion.fmt)
    return _in_container(fmt, fmt.sign_mask) if fmt.container else fmt.sign_mask


# --------------------------------------------------------------------------
# Special values (§4.2) for the fused (fixed-point) ops
# --------------------------------------------------------------------------


def _product_special(a: Operand, b: Operand) -> Optional[Operand]:
    """The product a × b if it is NaN or ±inf, else None."""
    if a.kind == "nan" or b.kind == "nan":
        return NAN
    if a.kind == "inf" or b.kind == "inf":
        if a.is_zero or b.is_zero:
            return NAN  # inf × 0
        return Operand("inf", neg=a.neg != b.neg)
    return None


def _combine_specials(terms: Sequence[Operand]) -> Optional[Operand]:
    """NaN/Inf result of a fused sum of ``terms`` (products and c), or None.

    NaN if any term is NaN or +inf and -inf both occur; else the infinity.
    """
    if any(t.kind == "nan" for t in terms):
        return NAN
    infs = {t.neg for t in terms if t.kind == "inf"}
    if len(infs) == 2:
        return NAN
    if infs:
        return Operand("inf", neg=infs.pop())
    return None


def _special_out(model: Model, sp: Operand) -> int:
    return _nan_bits(model) if sp.kind == "nan" else _inf_bits(model, sp.neg)


# --------------------------------------------------------------------------
# Fixed-point helpers (units of 2^-F)
# --------------------------------------------------------------------------


def _shift_rz(n: int, k: int) -> int:
    """n × 2^k truncated toward zero (RZ)."""
    if k >= 0:
        return n << k
    q = abs(n) >> -k
    return -q if n < 0 else q


def _shift_rd(n: int, k: int) -> int:
    """n × 2^k rounded down (floor, RD)."""
    return n << k if k >= 0 else n >> -k  # Python >> is floor division


def _wrap_carry(S: int, F: int, carry_bits: Optional[int]) -> int:
    """Two's-complement register with 2 + carry_bits integer bits (docs/semantics.md)."""
    if carry_bits is None:
        return S
    half = 1 << (2 + carry_bits + F)
    return ((S + half) % (2 * half)) - half


@dataclass(frozen=True)
class _Term:
    """A finite term of a fused sum: value = sig × 2^(e - frac)."""

    sig: int  # signed integer significand
    frac: int  # fraction bits of sig (SignedSig = sig × 2^-frac)
    e: int  # exponent


def _product_term(a: Operand, b: Operand, extra_exp: int = 0) -> _Term:
    """Alg. 7 lines 3-4: s_k = SignedSig(a)·SignedSig(b), e_k = Exp(a) + Exp(b)."""
    return _Term(a.signed_sig * b.signed_sig, a.m + b.m, a.exp + b.exp + extra_exp)


def _c_term(c: Operand) -> _Term:
    """Alg. 7 lines 6-7: s_L = SignedSig(c), e_L = Exp(c)."""
    return _Term(c.signed_sig, c.m, c.exp)


def _truncated_fused_sum(terms: Sequence[_Term], F: int, emax_floor: Optional[int] = None,
                         zero_emax: bool = False) -> tuple[int, Optional[int]]:
    """Alg. 7 lines 8-11: align at e_max, RZ_F each term, sum exactly.

    Returns (S in units of 2^-F relative to e_max, e_max); zero terms do not
    take part in e_max (unless ``zero_emax``: then they do, with their own
    exponent); with no nonzero term, (0, None).  ``emax_floor`` (model
    parameter): the alignment exponent is never below it.
    """
    live = [t for t in terms if t.sig != 0]
    if not live:
        return 0, None
    e_max = max(t.e for t in (terms if zero_emax else live))
    if emax_floor is not None:
        e_max = max(e_max, emax_floor)
    S = sum(_shift_rz(t.sig, F + t.e - e_max - t.frac) for t in live)
    return S, e_max


# --------------------------------------------------------------------------
# IEEE arithmetic for FMA, E-FDPA and FTZ-Add/Mul
# --------------------------------------------------------------------------


def _ieee_mul_exact(a: Operand, b: Operand) -> "tuple[str, bool, Fraction]":
    """a × b exactly: (kind, neg, value); zero sign is the xor of the signs."""
    sp = _product_special(a, b)
    if sp is not None:
        return sp.kind, sp.neg, Fraction(0)
    return "num", a.neg != b.neg, a.value * b.value


def _ieee_sum_exact(terms: Sequence["tuple[str, bool, Fraction]"]) -> "tuple[str, bool, Fraction]":
    """Exact sum of IEEE terms: NaN/inf rules, zero sign (-0 only if all terms are -0)."""
    if any(k == "nan" for k, _, _ in terms):
        return "nan", False, Fraction(0)
    infs = {n for k, n, _ in terms if k == "inf"}
    if len(infs) == 2:
        return "nan", False, Fraction(0)
    if infs:
        return "inf", infs.pop(), Fraction(0)
    total = sum((v for _, _, v in terms), Fraction(0))
    if total != 0:
        return "num", total < 0, total
    all_neg_zero = all(n and v == 0 for _, n, v in terms)
    return "num", all_neg_zero, Fraction(0)


def _ieee_round(model: Model, fmt_name: str, r: "tuple[str, bool, Fraction]") -> int:
    """RNE into ``fmt_name`` with IEEE special values (NaN encoding by model.nan)."""
    kind, neg, v = r
    fmt = get_format(fmt_name)
    if kind == "nan":
        return _nan_bits(model)
    if kind == "inf":
        return fmt.inf_bits(negative=neg)
    return round_fraction(v, fmt, "rne", zero_negative=neg)


# --------------------------------------------------------------------------
# Alg. 1 and Alg. 2: FTZ-Add, FTZ-Mul, Phi_FTZ-AddMul
# --------------------------------------------------------------------------


def _ieee_value(op: Operand) -> "tuple[str, bool, Fraction]":
    """(kind, neg, value) of a decoded operand, for the IEEE helpers."""
    return op.kind, op.neg, (op.value if op.kind == "num" else Fraction(0))


def _as_ieee(fmt_name: str, bits: int) -> "tuple[str, bool, Fraction]":
    return _ieee_value(decode(fmt_name, bits))


def _ftz_fp32(model: Model, r: "tuple[str, bool, Fraction]") -> int:
    """Alg. 1: RNE-FP32, then |z| < 2^-126 becomes a zero of the same sign."""
    bits = _ieee_round(model, "fp32", r)
    if bits & 0x7F800000 == 0:  # zero or subnormal
        return bits & 0x80000000
    return bits


def ftz_mul(model: Model, a: Operand, b: Operand) -> int:
    """Alg. 1 FTZ-Mul: FP32 bits of RNE-FP32(a × b), flushed."""
    return _ftz_fp32(model, _ieee_mul_exact(a, b))


def ftz_add(model: Model, x_bits: int, y_bits: int) -> int:
    """Alg. 1 FTZ-Add on FP32 patterns: RNE-FP32(x + y), flushed."""
    return _ftz_fp32(model, _ieee_sum_exact([_as_ieee("fp32", x_bits), _as_ieee("fp32", y_bits)]))


def phi_ftz_addmul(model: Model, a: Sequence[Operand], b: Sequence[Operand], c: Operand) -> int:
    """Alg. 2: pairwise sums of P products, accumulated sequentially onto c.

    ``a``, ``b``, ``c`` are already flushed (lines 1-3).  K not a multiple of
    P: the last group is padded with +0 × +0.
    """
    P = model.P
    assert P in (2, 4)
    fmt32 = get_format("fp32")
    d = _ieee_round(model, "fp32", _ieee_value(c))
    assert get_format(model.c_fmt) == fmt32 and get_format(model.d_fmt) == fmt32
    a, b = _pad(a, P), _pad(b, P)
    for k in range(0, len(a), P):
        p = [ftz_mul(model, a[k + l], b[k + l]) for l in range(P)]
        s = ftz_add(model, p[0], p[1])
        if P == 4:
            s2 = ftz_add(model, p[2], p[3])
            s = ftz_add(model, s, s2)
        d = ftz_add(model, d, s)
    return d


# --------------------------------------------------------------------------
# Alg. 3 and Alg. 4: FMA chain
# --------------------------------------------------------------------------


def fma(model: Model, a: Operand, b: Operand, c_bits: int) -> int:
    """Alg. 3: RNE(a × b + c) as if with infinite precision (IEEE 754 fusedMultiplyAdd)."""
    c = _as_ieee(model.c_fmt, c_bits)
    return _ieee_round(model, model.d_fmt, _ieee_sum_exact([_ieee_mul_exact(a, b), c]))


def phi_fma(model: Model, a: Sequence[Operand], b: Sequence[Operand], c_bits: int) -> int:
    """Alg. 4: d <- c; d <- FMA(a_k, b_k, d) for k = 0..K-1."""
    d = c_bits
    if not a:  # K = 0: c passes through (canonicalizing a NaN)
        return _ieee_round(model, model.d_fmt, _as_ieee(model.c_fmt, c_bits))
    for ak, bk in zip(a, b):
        d = fma(model, ak, bk, d)
    return d


def phi_fma_propagate(model: Model, a_bits: Sequence[int], b_bits: Sequence[int], c_bits: int) -> int:
    """Alg. 4 with ``nan=propagate`` (H200 DMMA): a NaN operand comes out quieted with its sign and payload,
    b's before c's before a's; an invalid operation (inf x 0, inf - inf) gives the negative default NaN."""
    fmt = get_format(model.d_fmt)
    quiet = 1 << (fmt.man_bits - 1)
    d = c_bits
    for ak, bk in zip(a_bits, b_bits):
        nans = [x for x in (bk, d, ak) if fmt.is_nan_bits(x)]
        if nans:
            d = nans[0] | quiet
            continue
        d = fma(model, decode(model.a_fmt, ak), decode(model.b_fmt, bk), d)
        if fmt.is_nan_bits(d):
            d = fmt.nan_bits() | fmt.sign_mask
    return d


# --------------------------------------------------------------------------
# Alg. 6: E-FDPA
# --------------------------------------------------------------------------


def e_fdpa(model: Model, a: Sequence[Operand], b: Sequence[Operand], c: Operand) -> int:
    """Alg. 6: RNE-FP32(c + sum a_k b_k) as if with infinite precision."""
    terms = [_ieee_mul_exact(x, y) for x, y in zip(a, b)]
    terms.append(_ieee_value(c))
    return _ieee_round(model, model.d_fmt, _ieee_sum_exact(terms))


# --------------------------------------------------------------------------
# Alg. 7: T-FDPA, Alg. 8: ST-FDPA
# --------------------------------------------------------------------------


def t_fdpa(
    model: Model,
    a: Sequence[Operand],
    b: Sequence[Operand],
    c: Operand,
    scales: Optional[Sequence[tuple[Operand, Operand]]] = None,
) -> int:
    """Alg. 7 (T-FDPA), and Alg. 8 (ST-FDPA) when per-element scales are given.

    Step 1: exact products s_k = SignedSig(a_k)·SignedSig(b_k), e_k = Exp(a_k)
    + Exp(b_k); Alg. 8 adds Exp(alpha) + Exp(beta) to e_k (an E8M0 scale has
    significand 1; a scale significand other than 1 would multiply s_k).
    Step 2: align at e_max, truncate each term to F fraction bits, sum exactly
    (in a register of 2 + carry_bits integer bits when carry_bits is set).
    Step 3: d = rho(S × 2^e_max).
    """
    F = model.F
    specials = [_product_special(x, y) or POS_ZERO for x, y in zip(a, b)]
    if scales is not None and any(s.kind == "nan" for pair in scales for s in pair):
        specials.append(NAN)  # §4.2: a NaN scale gives NaN
    sp = _combine_specials(specials + [c])
    if sp is not None:
        return _special_out(model, sp)
    terms = []
    for k, (x, y) in enumerate(zip(a, b)):
        t = _product_term(x, y)
        if scales is not None:  # Alg. 8 line 4
            sa, sb = scales[k]
            t = _Term(t.sig * sa.sig * sb.sig, t.frac + sa.m + sb.m, t.e + sa.exp + sb.exp)
        terms.append(t)
    terms.append(_c_term(c))
    S, e_max = _truncated_fused_sum(terms, F, model.emax_floor, model.zero_emax)
    if e_max is None:  # every term zero: +0, or -0 under ieee_zero when every term is -0
        if model.ieee_zero and c.neg and all(x.neg != y.neg for x, y in zip(a, b)):
            return _rho_negative_zero(model)
        return _rho(model, 0, 0)
    S = _wrap_carry(S, F, model.carry_bits)
    return _rho(model, S, e_max - F)


# --------------------------------------------------------------------------
# Alg. 9: GST-FDPA
# --------------------------------------------------------------------------


def gst_fdpa(
    model: Model,
    a: Sequence[Operand],
    b: Sequence[Operand],
    c: Operand,
    alpha: Sequence[Operand],
    beta: Sequence[Operand],
) -> int:
    """Alg. 9: exact dot product per group of G, scaled; truncated fused sum with c.

    ``alpha[g]``/``beta[g]`` are the scales of group g (already picked by
    block).  Group g: s_g = p_g × SignedSig(alpha) × SignedSig(beta),
    e_g = Exp(alpha) + Exp(beta); a group whose s_g is zero does not take
    part in e_max.
    """
    F, G = model.F, model.G
    # a chunk shorter than a multiple of G (K < L_max) is padded with zero products
    n_groups = -(-len(a) // G)
    a, b = _pad(a, G), _pad(b, G)
    L = len(a)
    assert len(alpha) == len(beta) == n_groups
    # §4.2: NaN scales, NaN/Inf products (including inf × a zero scale significand)
    specials: list[Operand] = []
    for g in range(L // G):
        for s in (alpha[g], beta[g]):
            if s.kind == "nan":
                specials.append(NAN)
        for k in range(g * G, (g + 1) * G):
            p = _product_special(a[k], b[k])
            if p is not None and p.kind == "inf" and (alpha[g].is_zero or beta[g].is_zero):
                p = NAN
            specials.append(p or POS_ZERO)
    sp = _combine_specials(specials + [c])
    if sp is not None:
        return _special_out(model, sp)
    # Step 1: exact per-group dot products (Fractions), scaled by the scale significands
    group_vals: list[tuple[Fraction, int]] = []
    for g in range(L // G):
        p_g = sum((a[k].value * b[k].value for k in range(g * G, (g + 1) * G)), Fraction(0))
        s_g = p_g * alpha[g].value / TWO ** alpha[g].exp * beta[g].value / TWO ** beta[g].exp
        e_g = alpha[g].exp + beta[g].exp
        group_vals.append((s_g, e_g))
    group_vals.append((c.value / TWO**c.exp, c.exp))  # s_{L/G} = SignedSig(c), e = Exp(c)
    # Step 2: truncated fused sum of L/G + 1 terms
    live = [(s, e) for s, e in group_vals if s != 0]
    if not live:
        return _rho(model, 0, 0)
    e_max = max(e for _, e in live)
    if model.emax_floor is not None:
        e_max = max(e_max, model.emax_floor)
    S = sum(_frac_rz(s * TWO ** (F + e - e_max)) for s, e in live)
    S = _wrap_carry(S, F, model.carry_bits)
    # Step 3
    return _rho(model, S, e_max - F)


def _frac_rz(x: Fraction) -> int:
    """Truncate a Fraction toward zero to an int."""
    q = abs(x.numerator) // x.denominator
    return -q if x < 0 else q


def _frac_rd(x: Fraction) -> int:
    """Floor of a Fraction."""
    return x.numerator // x.denominator


# --------------------------------------------------------------------------
# Alg. 10: TR-FDPA, Alg. 11: GTR-FDPA
# --------------------------------------------------------------------------


def _tr_products(a: Sequence[Operand], b: Sequence[Operand]) -> tuple[list[Operand], list[_Term]]:
    """Step 1 of Alg. 10/11 with §4.2 overflow: |s_k × 2^e_k| >= 2^128 gives ±inf.

    Returns (special products, finite product terms in index order; a
    special product is given as a zero term to keep indices).
    """
    specials: list[Operand] = []
    terms: list[_Term] = []
    for x, y in zip(a, b):
        sp = _product_special(x, y)
        t = _Term(0, 0, 0)
        if sp is None:
            t = _product_term(x, y)
            if abs(t.sig) * TWO ** (t.e - t.frac) >= TWO**128:
                sp = Operand("inf", neg=t.sig < 0)
                t = _Term(0, 0, 0)
        specials.append(sp or POS_ZERO)
        terms.append(t)
    return specials, terms


def _rounded_sum_with_c(model: Model, T: int, e_max: Optional[int], c: Operand, special_trunc: bool) -> int:
    """Alg. 10 Steps 3-4 / Alg. 11 Steps 4-5: RD-rounded two-term sum of T and c.

    ``T`` in units of 2^-F at ``e_max`` (None when every product is zero).
    """
    F, F2 = model.F, model.F2
    e_c = c.exp if not c.is_zero else None
    if e_max is None and e_c is None:
        return _rho(model, 0, 0)
    E = max(e for e in (e_max, e_c) if e is not None)
    # T' = RD_F2(T × 2^(e_max - E)), in units of 2^-F2
    T2 = _shift_rd(T, F2 - F + e_max - E) if e_max is not None else 0
    # s'_c = RD_F(s_c × 2^(e_c - E)), in units of 2^-F
    sc = _shift_rd(c.signed_sig, F - c.m + e_c - E) if e_c is not None else 0
    if special_trunc and e_c is not None and e_c < E - F - 1:
        sc = 0  # Alg. 11 line 24-25: special truncation
    # S = T' + s'_c, in units of 2^-F2 (F2 >= F in every catalogued model; stay exact otherwise)
    lo = max(F, F2)
    S = (T2 << (lo - F2)) + (sc << (lo - F))
    return _rho(model, S, E - lo)


def tr_fdpa(model: Model, a: Sequence[Operand], b: Sequence[Operand], c: Operand) -> int:
    """Alg. 10: truncated fused sum of the L products, then RD-rounded sum with c, then rho."""
    specials, terms = _tr_products(a, b)
    sp = _combine_specials(specials + [c])
    if sp is not None:
        return _special_out(model, sp)
    T, e_max = _truncated_fused_sum(terms, model.F)  # Step 2
    return _rounded_sum_with_c(model, T, e_max, c, special_trunc=False)


def gtr_fdpa(model: Model, a: Sequence[Operand], b: Sequence[Operand], c: Operand) -> int:
    """Alg. 11: even/odd truncated fused sums, RD sum of the two, RD sum with c."""
    F = model.F
    specials, terms = _tr_products(a, b)
    sp = _combine_specials(specials + [c])
    if sp is not None:
        return _special_out(model, sp)
    # Step 2: two truncated fused sums
    T_even, e_even = _truncated_fused_sum(terms[0::2], F)
    T_odd, e_odd = _truncated_fused_sum(terms[1::2], F)
    # Step 3: rounded sum of the two group sums at e_max, RD_F
    present = [e for e in (e_even, e_odd) if e is not None]
    if not present:
        T, e_max = 0, None
    else:
        e_max = max(present)
        T = 0
        for Tg, eg in ((T_even, e_even), (T_odd, e_odd)):
            if eg is not None:
                T += _shift_rd(Tg, eg - e_max)
    # Steps 4-5
    return _rounded_sum_with_c(model, T, e_max, c, special_trunc=True)


# --------------------------------------------------------------------------
# Alg. 5: chaining, and the entry point
# --------------------------------------------------------------------------


def _pad(xs: Sequence[Operand], n: int) -> list[Operand]:
    """Pad with +0 to a multiple of n."""
    xs = list(xs)
    return xs + [POS_ZERO] * (-len(xs) % n)


def reference_dot(
    model: Model,
    a_bits: Sequence[int],
    b_bits: Sequence[int],
    c_bits: int,
    scale_a: Optional[Sequence[int]] = None,
    scale_b: Optional[Sequence[int]] = None,
) -> int:
    """D bits of d = c + sum_k a_k b_k under ``model``.

    ``a_bits``, ``b_bits``: K patterns of ``model.a_fmt`` / ``model.b_fmt``
    (tf32 as 19-bit patterns); ``c_bits`` a pattern of ``model.c_fmt``;
    ``scale_a``/``scale_b``: ceil(K / model.block) patterns of
    ``model.scale_fmt`` for st-fdpa and gst-fdpa.  Returns a pattern of
    ``model.d_fmt`` (E8M13 results in their FP32 container).
    """
    a_bits = [int(x) for x in a_bits]
    b_bits = [int(x) for x in b_bits]
    c_bits = int(c_bits)
    if len(a_bits) != len(b_bits):
        raise ValueError("a and b differ in length")
    K = len(a_bits)
    ftz = model.ftz_inputs
    a = [decode(model.a_fmt, x, via=model.via, ftz=ftz) for x in a_bits]
    b = [decode(model.b_fmt, x, via=model.via, ftz=ftz) for x in b_bits]
    kind = model.kind

    if kind == "fma":  # Alg. 4
        if model.nan == "propagate":
            return phi_fma_propagate(model, a_bits, b_bits, c_bits)
        return phi_fma(model, a, b, _flushed_bits(model.c_fmt, c_bits) if ftz else c_bits)
    if model.issue and K != model.issue:  # whole instructions of ``issue`` lanes, zero-padded, D -> C
        if scale_a is not None or scale_b is not None:
            raise NotImplementedError("the reference chains instructions of unscaled models only")
        d = c_bits  # each call below is one instruction of exactly ``issue`` lanes
        for lo in range(0, K, model.issue):
            pad = model.issue - len(a_bits[lo:lo + model.issue])
            d = reference_dot(model, a_bits[lo:lo + model.issue] + [0] * pad, b_bits[lo:lo + model.issue] + [0] * pad,
                              d if lo else c_bits)
        return d
    # a C of another format than D (f16f32c16) is widened exactly to D's format first (docs/semantics.md)
    c = decode(model.c_fmt, c_bits, via=model.d_fmt if model.c_fmt != model.d_fmt else None, ftz=ftz)
    if kind == "ftz-addmul":  # Alg. 2
        return phi_ftz_addmul(model, a, b, c)

    # Alg. 5: L <- min(K, L_max) (line 1); chunks of L, the last padded with zeros
    # (+0 × +0); d threads through the chain.
    L = max(1, min(K, model.L))
    n_chunks = max(1, -(-K // L))
    # padding lanes are the zero pattern, decoded (their exponent is emin: it matters under zero_emax)
    a = a + [decode(model.a_fmt, 0, via=model.via)] * (n_chunks * L - K)
    b = b + [decode(model.b_fmt, 0, via=model.via)] * (n_chunks * L - K)
    scales = None
    if kind in ("st-fdpa", "gst-fdpa"):
        if scale_a is None or scale_b is None:
            raise ValueError(f"{kind} needs scale_a and scale_b")
        n_blocks = -(-K // model.block)
        if len(scale_a) != n_blocks or len(scale_b) != n_blocks:
            raise ValueError(f"need {n_blocks} scales per operand, got {len(scale_a)}, {len(scale_b)}")
        sa = [decode(model.scale_fmt, int(s)) for s in scale_a]
        sb = [decode(model.scale_fmt, int(s)) for s in scale_b]
        # padded elements (beyond K) take the last block's scale, as the simulator does; their products are zero
        # (the scale's exponent still counts for them under zero_emax)
        last = n_blocks - 1
        scales = [(sa[min(k // model.block, last)], sb[min(k // model.block, last)]) for k in range(len(a))]
    # Lanes of each chunk: consecutive (Alg. 5), or, with ``interleave``, groups of
    # ``interleave`` lanes dealt to the chunks in turn: chunk of lane k = (k // interleave) % chunks.
    chunk_lanes: list[list[int]] = [[] for _ in range(n_chunks)]
    for k in range(n_chunks * L):
        j = (k // model.interleave) % n_chunks if model.interleave else k // L
        chunk_lanes[j].append(k)
    assert all(len(lanes) == L for lanes in chunk_lanes)
    a = [a[k] for lanes in chunk_lanes for k in lanes]
    b = [b[k] for lanes in chunk_lanes for k in lanes]
    if scales is not None:
        scales = [scales[k] for lanes in chunk_lanes for k in lanes]
    # ``c_after``: the chain starts from +0 and C joins last through an RNE add in d_fmt.
    c_first = c
    if model.c_after:
        c = decode(model.c_fmt, 0)  # the zero pattern: its exponent is emin (it matters under zero_emax)

    d_bits = c_bits
    for i in range(n_chunks):
        lo, hi = i * L, (i + 1) * L
        c_op = c if i == 0 else decode(model.d_fmt, d_bits)
        ak, bk = a[lo:hi], b[lo:hi]
        if kind == "e-fdpa":
            d_bits = e_fdpa(model, ak, bk, c_op)
        elif kind == "t-fdpa":
            d_bits = t_fdpa(model, ak, bk, c_op)
        elif kind == "st-fdpa":
            assert scales is not None
            d_bits = t_fdpa(model, ak, bk, c_op, scales=scales[lo:hi])
        elif kind == "gst-fdpa":
            assert scales is not None
            sc = scales[lo:hi]
            alpha = [sc[g][0] for g in range(0, L, model.G)]
            beta = [sc[g][1] for g in range(0, L, model.G)]
            d_bits = gst_fdpa(model, ak, bk, c_op, alpha, beta)
        elif kind == "tr-fdpa":
            d_bits = tr_fdpa(model, ak, bk, c_op)
        elif kind == "gtr-fdpa":
            d_bits = gtr_fdpa(model, ak, bk, c_op)
        else:
            raise ValueError(f"unknown model kind {kind!r}")
    if model.c_after:
        d_op = decode(model.d_fmt, d_bits)
        d_bits = _ieee_round(model, model.d_fmt, _ieee_sum_exact([_ieee_value(d_op), _ieee_value(c_first)]))
    return d_bits


