"""Floating-point formats read or written by matrix units, as data.

A :class:`Format` is a row of traits (exponent bits, fraction bits, bias,
which encodings are NaN/Inf, whether subnormals exist), never a class per
format.  Names follow the short spelling of the instruction names
(``fp16``, ``e4m3``) with the ml_dtypes spelling as alias
(``float16``, ``float8_e4m3fn``).  Departures from IEEE 754, explained once:

* ``fn``  (e4m3, fp6, fp4): finite only, no infinities; e4m3 has a NaN at
  S.1111.111, fp6/fp4 have no NaN at all.
* ``fnuz`` (CDNA3 fp8/bf8): finite, NaN is 0x80 (the would-be -0), no -0.
* ``ue8m0``: unsigned power of two 2**(E-127), 0xFF is NaN, no zero.
* ``ue4m3``: the NVFP4 block scale; an 8-bit e4m3 whose sign bit the
  hardware ignores (it takes the absolute value).
* ``e8m13``: the truncated FP32 that FP8 units of Ada/Hopper produce;
  22 bits, delivered in an FP32 container with 10 zero trailing bits.
* ``tf32``: 19 bits; delivered in an FP32 container whose 13 trailing bits
  the tensor core ignores.

Values here are exact: :func:`to_fraction` and :func:`from_fraction` use
Python integers and :class:`fractions.Fraction`; the vectorized decode and
rounding used by the simulator live in :mod:`smtmma.encodings`.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Optional, Union

import numpy as np

from .errors import InputError, InputTypeError, NotRepresentableError, UnknownNameError, unknown_name

__all__ = [
    "decode",
    "encode",
    "classify",
    "ZERO",
    "SUBNORMAL",
    "NORMAL",
    "INF",
    "NAN",
    "Format",
    "FORMATS",
    "get_format",
    "to_fraction",
    "from_fraction",
    "to_float",
    "parse_value",
    "parse_hex",
    "parse_real",
    "encode_real",
    "Real",
    "clip",
    "MAX_VALUE_CHARS",
    "format_hex",
    "Special",
]

NanStyle = Literal["ieee", "all_ones", "neg_zero", "exp_all_ones", "none"]


@dataclass(frozen=True)
class Format:
    """Traits of one binary floating-point format.

    ``bits`` is the width of the bit pattern (sign + exponent + fraction);
    a value is ``(-1)**s * sig * 2**(exp - man_bits)`` with ``sig`` the
    integer significand (hidden bit included) and ``exp`` the unbiased
    exponent, ``max(E, 1) - bias`` for a biased field ``E``.
    """

    name: str
    exp_bits: int
    man_bits: int
    bias: int
    signed: bool = True
    has_inf: bool = True
    nan: NanStyle = "ieee"
    subnormals: bool = True
    sign_ignored: bool = False
    container: Optional[str] = None  # format whose layout carries this one
    container_shift: int = 0  # trailing bits of the container dropped
    aliases: tuple[str, ...] = ()

    @property
    def bits(self) -> int:
        """Width of a bit pattern in bits."""
        return int(self.signed) + self.exp_bits + self.man_bits

    @property
    def hex_digits(self) -> int:
        """Hex digits of a pattern as written in test vectors."""
        return (self.bits + 3) // 4

    @property
    def precision(self) -> int:
        """Significand bits including the hidden bit."""
        return self.man_bits + 1

    @property
    def emin(self) -> int:
        """Unbiased exponent of the smallest normal number."""
        return 1 - self.bias if self.subnormals else -self.bias

    @property
    def max_exp_field(self) -> int:
        """Largest biased exponent field of a finite number."""
        top = (1 << self.exp_bits) - 1
        if self.nan in ("ieee", "exp_all_ones"):
            return top - 1
        return top

    @property
    def emax(self) -> int:
        """Unbiased exponent of the largest finite number."""
        return self.max_exp_field - self.bias

    @property
    def max_sig(self) -> int:
        """Integer significand of the largest finite number."""
        full = (1 << self.precision) - 1
        if self.nan == "all_ones":
            return full - 1  # S.1111.111 is NaN
        return full

    @property
    def sign_mask(self) -> int:
        """Mask of the sign bit (0 for unsigned formats)."""
        return (1 << (self.bits - 1)) if self.signed else 0

    def is_nan_bits(self, bits: int) -> bool:
        """True if the pattern encodes NaN."""
        mag = bits & ~self.sign_mask
        efield, man = mag >> self.man_bits, mag & ((1 << self.man_bits) - 1)
        top = (1 << self.exp_bits) - 1
        if self.nan == "ieee":
            return efield == top and man != 0
        if self.nan == "all_ones":
            return efield == top and man == (1 << self.man_bits) - 1
        if self.nan == "neg_zero":
            return bits == self.sign_mask
        if self.nan == "exp_all_ones":
            return efield == top
        return False

    def is_inf_bits(self, bits: int) -> bool:
        """True if the pattern encodes an infinity."""
        mag = bits & ~self.sign_mask
        return self.has_inf and mag == ((1 << self.exp_bits) - 1) << self.man_bits

    def nan_bits(self) -> int:
        """A canonical quiet NaN pattern (IEEE: sign 0, top fraction bit set)."""
        top = (1 << self.exp_bits) - 1
        if self.nan == "ieee":
            return (top << self.man_bits) | (1 << (self.man_bits - 1))
        if self.nan == "all_ones":
            return (top << self.man_bits) | ((1 << self.man_bits) - 1)
        if self.nan == "neg_zero":
            return self.sign_mask
        if self.nan == "exp_all_ones":
            return top << self.man_bits
        raise InputError(f"format {self.name} has no NaN")

    def inf_bits(self, negative: bool = False) -> int:
        """The pattern of +inf (or -inf)."""
        if not self.has_inf:
            raise InputError(f"format {self.name} has no infinity")
        return (self.sign_mask if negative else 0) | (((1 << self.exp_bits) - 1) << self.man_bits)


def _f(name: str, e: int, m: int, bias: int, *aliases: str, **kw: object) -> Format:
    return Format(name, e, m, bias, aliases=aliases, **kw)  # type: ignore[arg-type]


#: Every format, by canonical name (Table 2 of the MMA-Sim paper, OCP 8-bit FP and MX specs).
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        _f("fp64", 11, 52, 1023, "float64", "f64", "binary64"),
        _f("fp32", 8, 23, 127, "float32", "f32", "binary32"),
        _f("tf32", 8, 10, 127, "tf19", container="fp32", container_shift=13),
        _f("bf16", 8, 7, 127, "bfloat16"),
        _f("fp16", 5, 10, 15, "float16", "f16", "binary16", "half"),
        _f("e4m3", 4, 3, 7, "float8_e4m3fn", "fp8_e4m3", "e4m3fn", has_inf=False, nan="all_ones"),
        _f("e5m2", 5, 2, 15, "float8_e5m2", "fp8_e5m2"),
        _f("e4m3fnuz", 4, 3, 8, "float8_e4m3fnuz", "fp8", has_inf=False, nan="neg_zero"),
        _f("e5m2fnuz", 5, 2, 16, "float8_e5m2fnuz", "bf8", has_inf=False, nan="neg_zero"),
        _f("e2m3", 2, 3, 1, "float6_e2m3fn", "fp6_e2m3", has_inf=False, nan="none"),
        _f("e3m2", 3, 2, 3, "float6_e3m2fn", "fp6_e3m2", has_inf=False, nan="none"),
        _f("e2m1", 2, 1, 1, "float4_e2m1fn", "fp4", "fp4_e2m1", has_inf=False, nan="none"),
        _f(
            "ue8m0", 8, 0, 127, "float8_e8m0fnu", "e8m0",
            signed=False, has_inf=False, nan="exp_all_ones", subnormals=False,
        ),
        _f("ue4m3", 4, 3, 7, has_inf=False, nan="all_ones", sign_ignored=True),
        _f("e8m13", 8, 13, 127, container="fp32", container_shift=10),
    )
}

_BY_NAME: dict[str, Format] = {}
for _fmt in FORMATS.values():
    for _n in (_fmt.name, *_fmt.aliases):
        _BY_NAME[_n.lower()] = _fmt


def get_format(name: Union[str, Format]) -> Format:
    """Return the :class:`Format` called ``name`` (canonical name or alias)."""
    if isinstance(name, Format):
        return name
    if not isinstance(name, str):
        raise InputTypeError(f"format must be a name (str) such as 'fp16' or a Format, got {type(name).__name__} {name!r}")
    try:
        return _BY_NAME[name.strip().lower()]
    except KeyError:
        raise UnknownNameError(unknown_name("format", name, FORMATS, aliases=[a for f in FORMATS.values() for a in f.aliases])) from None


def floor_log2(x: Union[Fraction, int]) -> int:
    """floor(log2 |x|) of a non-zero rational: the unbiased exponent of ``x`` with unbounded range."""
    a = abs(Fraction(x))
    if a == 0:
        raise InputError("floor_log2 of zero")
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2**(e-1) < a < 2**(e+1)
    return e - 1 if Fraction(2) ** e > a else e


def carried_in(fmt: Union[str, Format]) -> Format:
    """The format whose bit layout carries ``fmt``'s patterns: FP32 for TF32 and E8M13, ``fmt`` itself otherwise."""
    f = get_format(fmt)
    return get_format(f.container) if f.container else f


class Special:
    """Non-finite results of :func:`to_fraction`."""

    NAN = "nan"
    INF = "inf"
    NINF = "-inf"


def pattern(fmt: Format, bits: object) -> int:
    """``bits`` as a bit pattern of ``fmt`` (an int in [0, 2**fmt.bits)); InputTypeError / NotRepresentableError if not.

    A float, a bool or a string is refused rather than truncated to an int.
    """
    if not isinstance(bits, numbers.Integral) or isinstance(bits, (bool, np.bool_)):
        raise InputTypeError(f"a {fmt.name} bit pattern must be an int, got {type(bits).__name__} "
                             f"{clip(repr(bits), quote=False)}")
    b = int(bits)
    if b < 0:
        raise NotRepresentableError(f"{b} is negative: a {fmt.name} bit pattern is an unsigned int of {fmt.bits} bits")
    if b >> fmt.bits:
        raise NotRepresentableError(f"{b:#x} has more bits than {fmt.name} ({fmt.bits} bits)")
    return b


def named_pattern(fmt: Format, bits: object, name: str) -> int:
    """:func:`pattern`, its error prefixed with ``name`` (``c: ...``, ``a[3]: ...``)."""
    try:
        return pattern(fmt, bits)
    except (InputTypeError, NotRepresentableError) as e:
        raise type(e)(f"{name}: {e}") from None


def patterns(fmt: Format, values: object, name: str) -> list[int]:
    """Each of ``values`` (a sequence) as a bit pattern of ``fmt`` (:func:`pattern`); errors name the element."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not hasattr(values, "__iter__"):
        raise InputTypeError(f"{name} must be a sequence of {fmt.name} bit patterns (ints), got {type(values).__name__}")
    return [named_pattern(fmt, x, f"{name}[{i}]") for i, x in enumerate(values)]  # type: ignore[arg-type]


def _fields(fmt: Format, bits: int) -> tuple[int, int, int]:
    bits = pattern(fmt, bits)
    sign = (bits >> (fmt.bits - 1)) & 1 if fmt.signed and not fmt.sign_ignored else 0
    mag = bits & ((1 << (fmt.exp_bits + fmt.man_bits)) - 1)
    return sign, mag >> fmt.man_bits, mag & ((1 << fmt.man_bits) - 1)


def decode_scalar(fmt: Format, bits: int) -> tuple[int, int, int]:
    """Return ``(sign, exp, sig)`` of a finite pattern: value = (-1)**sign * sig * 2**(exp - man_bits)."""
    sign, efield, man = _fields(fmt, bits)
    if not fmt.subnormals:
        return sign, efield - fmt.bias, (1 << fmt.man_bits) | man
    hidden = 1 if efield != 0 else 0
    return sign, max(efield, 1) - fmt.bias, (hidden << fmt.man_bits) | man


def to_fraction(fmt: Union[str, Format], bits: int) -> Union[Fraction, str]:
    """Exact value of a pattern as a Fraction, or a :class:`Special` string.

    Zero keeps no sign here; use :func:`is_negative_zero` for that.
    """
    fmt = get_format(fmt)
    bits = pattern(fmt, bits)
    if fmt.is_nan_bits(bits):
        return Special.NAN
    if fmt.is_inf_bits(bits):
        return Special.NINF if bits & fmt.sign_mask else Special.INF
    sign, exp, sig = decode_scalar(fmt, bits)
    value = Fraction(sig) * Fraction(2) ** (exp - fmt.man_bits)
    return -value if sign else value


def is_negative_zero(fmt: Union[str, Format], bits: int) -> bool:
    """True for the pattern of -0."""
    fmt = get_format(fmt)
    return fmt.signed and fmt.nan != "neg_zero" and bits == fmt.sign_mask


def to_float(fmt: Union[str, Format], bits: int) -> float:
    """The pattern's value as a Python float (for display; exact when it fits binary64)."""
    fmt = get_format(fmt)
    bits = pattern(fmt, bits)
    v = to_fraction(fmt, bits)
    if v == Special.NAN:
        return math.nan
    if v == Special.INF:
        return math.inf
    if v == Special.NINF:
        return -math.inf
    assert isinstance(v, Fraction)
    f = float(v)
    return -0.0 if is_negative_zero(fmt, bits) else f


# -- values as text: hex, decimals, fractions, powers of two, NaN and infinity ---------------------

#: Longest value text read, in characters.  Every exact value of every format is shorter (fp64's
#: smallest subnormal written out in full has about 1080); longer text is refused before any digit
#: is converted, so no input can build a huge integer or trip Python's int/str digit limit.
MAX_VALUE_CHARS = 2000

#: Decimal orders of magnitude (|log10| of a value) beyond which a non-zero value is out of range of
#: every format (fp64, the widest, spans about 4.9e-324 .. 1.8e308): such a value is classified as
#: overflow or underflow from its exponent and never computed.
DECIMAL_ORDER_LIMIT = 1000

#: Binary exponents (|log2| of a value) beyond which a power of two is out of range of every format.
BINARY_EXP_LIMIT = 1 << 14

_HEX = re.compile(r"(0x)?[0-9a-f]+", re.IGNORECASE)
_SPECIAL = re.compile(r"([+-]?)(nan|inf|infinity)", re.IGNORECASE)
_POW2 = re.compile(r"([+-]?)2\^(?:([+-]?[0-9]+)|\(([+-]?[0-9]+)\))")
_RATIO = re.compile(r"([+-]?)([0-9]+)/([0-9]+)")
_DECIMAL = re.compile(r"([+-]?)(?:([0-9]+)(?:\.([0-9]*))?|\.([0-9]+))(?:[eE]([+-]?[0-9]+))?")

RealKind = Literal["finite", "inf", "nan", "huge", "tiny"]


@dataclass(frozen=True)
class Real:
    """A real number read from text, before any format is chosen.

    ``kind`` is ``"finite"`` (the value is ``magnitude``, negated when
    ``negative``; exact), ``"inf"``, ``"nan"``, or ``"huge"`` / ``"tiny"``: a
    non-zero finite value whose exponent lies beyond every format's range
    (overflow / underflow), classified from its exponent and never computed.
    ``negative`` is the written sign (``-0`` and ``-nan`` keep it).
    """

    negative: bool
    kind: RealKind
    magnitude: Fraction = Fraction(0)


def clip(text: str, *, quote: bool = True, limit: int = 40) -> str:
    """``text`` for an error message (``repr`` when ``quote``); when longer than ``limit``, its start and its length."""
    if len(text) <= limit:
        return repr(text) if quote else text
    head = text[: limit - 8]
    return f"{head!r}... ({len(text)} characters)" if quote else f"{head}... ({len(text)} characters)"


def _exponent(text: Optional[str]) -> int:
    """The integer ``text`` (sign, decimal digits; None is 0), or +-10**10 when it has more than 9 digits."""
    if not text:
        return 0
    sign = -1 if text[0] == "-" else 1
    digits = text.lstrip("+-").lstrip("0")
    return sign * (10**10 if len(digits) > 9 else int(digits or "0"))


def _beyond(negative: bool, order: int, limit: int) -> Optional[Real]:
    """A huge or tiny :class:`Real` when ``|order|`` exceeds ``limit``, else None."""
    if order > limit:
        return Real(negative, "huge")
    if order < -limit:
        return Real(negative, "tiny")
    return None


def _read_decimal(m: "re.Match[str]") -> Real:
    negative = m.group(1) == "-"
    frac = m.group(3) or m.group(4) or ""
    digits = ((m.group(2) or "") + frac).lstrip("0")
    if not digits:
        return Real(negative, "finite")
    exp10 = _exponent(m.group(5)) - len(frac)
    # int(digits) * 10**exp10 lies in [10**(order - 1), 10**order): bounded before any power is taken
    far = _beyond(negative, len(digits) + exp10, DECIMAL_ORDER_LIMIT)
    if far is not None:
        return far
    sig = int(digits)
    q = Fraction(sig * 10**exp10) if exp10 >= 0 else Fraction(sig, 10**-exp10)
    return Real(negative, "finite", q)


def _read_power_of_two(m: "re.Match[str]") -> Real:
    negative = m.group(1) == "-"
    e = _exponent(m.group(2) or m.group(3))
    return _beyond(negative, e, BINARY_EXP_LIMIT) or Real(negative, "finite", Fraction(2) ** e)


def _read_ratio(m: "re.Match[str]") -> Real:
    return Real(m.group(1) == "-", "finite", Fraction(int(m.group(2)), int(m.group(3))))


def parse_real(text: str, *, field: str = "value") -> Real:
    """Read a real number written in ASCII, without inner spaces.

    Spellings: decimals (``1.5``, ``-.25``, ``1e3``, ``2.5E-3``), fractions
    ``N/D``, powers of two (``2^-24``, ``-2^(3)``), and ``nan``, ``inf``,
    ``infinity`` in any letter case with an optional sign.  Takes time
    linear in the text: a value whose exponent lies beyond every format
    (``1e99999999``, ``2^-99999999``) is ``huge`` / ``tiny`` without being
    computed, and text over :data:`MAX_VALUE_CHARS` characters is refused.
    Raises :class:`InputError` (message ``"<field>: ..."``) otherwise.
    """
    if not isinstance(text, str):
        raise InputError(f"{field}: expected a string, got {type(text).__name__}")
    t = text.strip()
    if not t:
        raise InputError(f"{field}: empty value")
    if len(t) > MAX_VALUE_CHARS:
        raise InputError(f"{field}: {clip(t)} is too long for a value (at most {MAX_VALUE_CHARS} characters)")
    m = _SPECIAL.fullmatch(t)
    if m:
        return Real(m.group(1) == "-", "nan" if m.group(2).lower() == "nan" else "inf")
    try:
        for pattern, read in ((_POW2, _read_power_of_two), (_RATIO, _read_ratio), (_DECIMAL, _read_decimal)):
            m = pattern.fullmatch(t)
            if m:
                return read(m)
    except ZeroDivisionError:
        raise InputError(f"{field}: {clip(t)} divides by zero") from None
    except ValueError:  # Python's int/str digit limit (sys.set_int_max_str_digits) set below our bound
        raise InputError(f"{field}: {clip(t)} has too many digits") from None
    raise InputError(f"{field}: {clip(t)} is neither hex (0x...) nor a decimal number")


def _limits(fmt: Format) -> tuple[Fraction, Fraction]:
    """(smallest positive, largest finite) magnitudes of ``fmt``."""
    low = Fraction(2) ** (fmt.emin - (fmt.man_bits if fmt.subnormals else 0))
    top = Fraction(fmt.max_sig) * Fraction(2) ** (fmt.emax - fmt.man_bits)
    return low, top


def _out_of_range(fmt: Format, shown: str, huge: bool) -> NotRepresentableError:
    low, top = _limits(fmt)
    why = f"overflow: the largest finite value is {float(top)!r}" if huge else \
        f"underflow: the smallest positive value is {float(low)!r}"
    return NotRepresentableError(f"{shown} is not exactly representable in {fmt.name} ({why})")


def _zero_bits(fmt: Format, negative: bool, shown: str) -> int:
    if not fmt.subnormals:
        raise NotRepresentableError(f"{shown} is not representable in {fmt.name} (it has no zero)")
    if not negative:
        return 0
    if not fmt.signed or fmt.nan == "neg_zero":
        raise NotRepresentableError(f"{shown} is not representable in {fmt.name} (it has no -0)")
    return fmt.sign_mask


def _finite_bits(fmt: Format, negative: bool, q: Fraction, shown: str) -> int:
    """Pattern of +-q (q >= 0) when ``fmt`` holds it exactly; NotRepresentableError naming ``shown`` otherwise.

    Cheap for any q: the range is judged from bit lengths before a power of two is computed.
    """
    if q == 0:
        return _zero_bits(fmt, negative, shown)
    if negative and (not fmt.signed or fmt.sign_ignored):
        raise NotRepresentableError(f"{shown} is negative; {fmt.name} is unsigned")
    e = q.numerator.bit_length() - q.denominator.bit_length()  # 2**(e-1) < q < 2**(e+1)
    low, top = _limits(fmt)
    if e > fmt.emax + 1 or q > top:
        raise _out_of_range(fmt, shown, huge=True)
    if e < fmt.emin - fmt.man_bits - 1 or q < low:
        raise _out_of_range(fmt, shown, huge=False)
    e = floor_log2(q)
    exp = max(e, fmt.emin)
    scaled = q / Fraction(2) ** (exp - fmt.man_bits)
    if scaled.denominator != 1 or (not fmt.subnormals and scaled.numerator != 1 << fmt.man_bits):
        raise NotRepresentableError(f"{shown} is not exactly representable in {fmt.name}")
    sig = scaled.numerator
    efield = exp + fmt.bias if (sig >> fmt.man_bits or not fmt.subnormals) else 0
    bits = (efield << fmt.man_bits) | (sig & ((1 << fmt.man_bits) - 1))
    return bits | (fmt.sign_mask if negative else 0)


def _nan_bits(fmt: Format, negative: bool, prefix: str) -> int:
    """The canonical quiet NaN; ``-nan``: the same with the sign bit set (FNUZ: its one NaN, 0x80)."""
    if fmt.nan == "none":
        raise InputError(f"{prefix}format {fmt.name} has no NaN")
    bits = fmt.nan_bits()
    if not negative or fmt.nan == "neg_zero":
        return bits
    if not fmt.signed or fmt.sign_ignored:
        raise NotRepresentableError(f"{prefix}-nan is not representable in {fmt.name} (it is unsigned)")
    return bits | fmt.sign_mask


def encode_real(fmt: Union[str, Format], real: Real, *, shown: str = "value", prefix: str = "") -> int:
    """The pattern of ``real`` in ``fmt`` if it holds it exactly; no rounding.

    Refusals are one line: ``{prefix}{shown} is not exactly representable in
    FMT`` (with ``(overflow: ...)`` / ``(underflow: ...)`` when out of range),
    ``{prefix}format FMT has no infinity`` / ``has no NaN``, or the value
    is negative in an unsigned format.
    """
    fmt = get_format(fmt)
    if real.kind == "nan":
        return _nan_bits(fmt, real.negative, prefix)
    if real.kind == "inf":
        if not fmt.has_inf:
            top = _limits(fmt)[1]
            raise InputError(f"{prefix}format {fmt.name} has no infinity (largest finite value: {float(top)!r})")
        return fmt.inf_bits(negative=real.negative)
    if real.kind == "finite":
        return _finite_bits(fmt, real.negative, real.magnitude, prefix + shown)
    if real.negative and (not fmt.signed or fmt.sign_ignored):
        raise NotRepresentableError(f"{prefix}{shown} is negative; {fmt.name} is unsigned")
    raise _out_of_range(fmt, prefix + shown, huge=real.kind == "huge")


def _as_real(value: object) -> Real:
    """A Python number or string as a :class:`Real` (a float NaN gives the canonical NaN whatever its sign)."""
    if isinstance(value, str):
        return parse_real(value)
    if isinstance(value, decimal.Decimal):
        return parse_real(str(value))  # Decimal('1e99999999') would build the integer
    if isinstance(value, numbers.Integral):
        n = int(value)
        return Real(n < 0, "finite", Fraction(abs(n)))
    if isinstance(value, numbers.Rational):
        q = Fraction(int(value.numerator), int(value.denominator))
        return Real(q < 0, "finite", abs(q))
    if isinstance(value, numbers.Real):
        f = float(value)
        if math.isnan(f):
            return Real(False, "nan")
        if math.isinf(f):
            return Real(f < 0, "inf")
        return Real(math.copysign(1.0, f) < 0, "finite", abs(Fraction(f)))
    raise InputError(f"expected a number or a string, got {type(value).__name__}")


def _show(value: object) -> str:
    """``value`` for an error message, never thousands of digits."""
    if isinstance(value, str):
        return clip(value.strip(), quote=False)
    if isinstance(value, numbers.Rational) and not isinstance(value, bool):
        q = Fraction(int(value.numerator), int(value.denominator))
        if max(q.numerator.bit_length(), q.denominator.bit_length()) > 128:
            e = abs(q.numerator).bit_length() - q.denominator.bit_length()
            return f"{'-' if q < 0 else ''}(a value near 2^{e})"
    return clip(str(value), quote=False)


def from_fraction(fmt: Union[str, Format], value: Union[Fraction, int, float, str]) -> int:
    """The pattern holding ``value`` exactly; raise NotRepresentableError otherwise (no rounding).

    ``value`` may be a Fraction, int, float, Decimal or a string read by
    :func:`parse_real` (``"1.5"``, ``"2^-24"``, ``"nan"``, ``"-inf"``,
    ``"-0"``).  NaN is the format's canonical quiet NaN; ``"-nan"`` the same
    with the sign bit set (see :func:`parse_value`).
    """
    return encode_real(fmt, _as_real(value), shown=_show(value))


def parse_hex(fmt: Union[str, Format], text: str, *, field: str = "value") -> int:
    """Bits of a hex string in ``fmt``; a container-width string (tf32 in fp32) is truncated as the hardware does."""
    fmt = get_format(fmt)
    if not isinstance(text, str):
        raise InputError(f"{field}: expected a hex string of {fmt.name}, got {type(text).__name__}")
    t = text.strip()
    if not _HEX.fullmatch(t):
        raise InputError(f"{field}: malformed hex {clip(text)} (expected up to {fmt.hex_digits} hex digits of {fmt.name})")
    digits = t[2:] if t[:2].lower() == "0x" else t
    widest = max(fmt.hex_digits, get_format(fmt.container).hex_digits if fmt.container else 0)
    too_wide = NotRepresentableError(f"{field}: {clip(text)} has more bits than {fmt.name} ({fmt.bits} bits)")
    if len(digits.lstrip("0")) > widest:  # refused before converting: the string may be megabytes long
        raise too_wide
    bits = int(digits, 16)
    if fmt.container is not None and len(digits) == get_format(fmt.container).hex_digits and len(digits) > fmt.hex_digits:
        return bits >> fmt.container_shift
    if bits >> fmt.bits:
        raise too_wide
    return bits


def parse_value(fmt: Union[str, Format], text: str, *, field: str = "value") -> int:
    """Bits of ``text`` in ``fmt``: hex (``0x3c00``) or an exactly representable real (no rounding).

    Reals are read by :func:`parse_real`: ``1.5``, ``-2.5e-3``, ``3/4``,
    ``2^-24``, ``-0``; ``nan``, ``+nan``, ``inf``, ``+inf``, ``-inf``,
    ``infinity``, ``-Infinity`` in any letter case.  NaN is the format's
    canonical quiet NaN (fp16 ``7e00``, e4m3 ``7f``); ``-nan`` is the same
    pattern with the sign bit set (fp16 ``fe00``, e4m3 ``ff``), except in
    FNUZ formats, whose one NaN is ``80`` either way; unsigned formats
    refuse ``-nan``, formats without NaN (fp6, fp4) refuse ``nan``, formats
    without infinity (e4m3, FNUZ, fp6, fp4, scales) refuse ``inf``.  A value
    beyond the format's range is refused as overflow or underflow, in time
    linear in the text however large its exponent.
    """
    fmt = get_format(fmt)
    if not isinstance(text, str):
        raise InputError(f"{field}: expected a string, got {type(text).__name__}")
    t = text.strip()
    if t[:2].lower() == "0x":
        return parse_hex(fmt, t, field=field)
    return encode_real(fmt, parse_real(t, field=field), shown=clip(t, quote=False), prefix=f"{field}: ")


def format_hex(fmt: Union[str, Format], bits: int) -> str:
    """The pattern as zero-padded lowercase hex without prefix (test-vector spelling)."""
    fmt = get_format(fmt)
    return f"{pattern(fmt, bits):0{fmt.hex_digits}x}"


# -- vectorized decode / encode / classify (through the algebra's NumPy interpretation) ------------

#: Class codes returned by :func:`classify`.
ZERO, SUBNORMAL, NORMAL, INF, NAN = 0, 1, 2, 3, 4


def _unpack_np(fmt: Format, bits: object):  # type: ignore[no-untyped-def]
    import numpy as np

    from .encodings.concrete import NumpyAlgebra
    from .encodings.fields import unpack

    arr = _int_array(bits, f"{fmt.name} bit patterns")
    wide = arr.reshape(-1).astype(object)  # checked as Python ints: no overflow on the way
    if wide.size and int(wide.min()) < 0:
        raise NotRepresentableError(f"pattern {int(wide.min())} is negative: {fmt.name} bit patterns are unsigned")
    if wide.size and int(wide.max()) >> fmt.bits:
        raise NotRepresentableError(f"pattern {int(wide.max()):#x} has more bits than {fmt.name} ({fmt.bits} bits)")
    flat = wide if fmt.bits > 62 else arr.reshape(-1).astype(np.int64)
    alg = NumpyAlgebra()
    u = unpack(alg, fmt, alg.input(flat, 0, (1 << fmt.bits) - 1))
    n = flat.size
    return alg, u, n, arr.shape


def _int_array(x: object, what: str) -> "np.ndarray":  # noqa: F821
    """``x`` as an integer array (ints, or Python ints in an object array); InputTypeError for anything else."""
    import numpy as np

    try:
        arr = np.asarray(x)
    except ValueError as e:  # ragged nested lists
        raise InputTypeError(f"{what} must form a rectangular array of ints ({e})") from None
    ok = np.issubdtype(arr.dtype, np.integer) or (arr.dtype == object and all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.reshape(-1)))
    if not ok or arr.dtype == np.bool_:
        raise InputTypeError(f"{what} must be ints, got an array of {arr.dtype}")
    return arr


def decode(fmt: Union[str, Format], bits: object) -> tuple["np.ndarray", "np.ndarray", "np.ndarray"]:  # noqa: F821
    """Vectorized: (sign, exp, sig) arrays with value = (-1)**sign * sig * 2**(exp - man_bits).

    ``exp`` is the unbiased exponent (``max(E, 1) - bias``), ``sig`` the
    integer significand with the hidden bit.  Infinities and NaNs decode to
    their raw fields; use :func:`classify` to tell them apart.
    """
    import numpy as np

    fmt = get_format(fmt)
    alg, u, n, shape = _unpack_np(fmt, bits)
    sign = alg.value(u.neg, n).astype(np.uint8).reshape(shape)
    exp = alg.value(u.exp, n).astype(np.int64).reshape(shape)
    sig = alg.value(u.sig, n).astype(np.uint64).reshape(shape)
    return sign, exp, sig


def classify(fmt: Union[str, Format], bits: object) -> "np.ndarray":  # noqa: F821
    """Vectorized class codes: ZERO, SUBNORMAL, NORMAL, INF, NAN (module constants)."""
    import numpy as np

    fmt = get_format(fmt)
    alg, u, n, shape = _unpack_np(fmt, bits)
    out = np.full(n, NORMAL, dtype=np.uint8)
    sig = alg.value(u.sig, n).astype(np.int64)
    out[sig < (1 << fmt.man_bits)] = SUBNORMAL
    out[alg.value(u.is_zero, n)] = ZERO
    out[alg.value(u.is_inf, n)] = INF
    out[alg.value(u.is_nan, n)] = NAN
    return out.reshape(shape)


def encode(fmt: Union[str, Format], sign: object, exp: object, sig: object) -> "np.ndarray":  # noqa: F821
    """Vectorized inverse of :func:`decode` for finite values: bit patterns of (-1)**sign * sig * 2**(exp - man_bits).

    ``sig`` may be unnormalized (any non-negative integer); raises
    NotRepresentableError when a value is not exactly representable.
    """
    import numpy as np

    from .encodings.concrete import NumpyAlgebra
    from .encodings.rounding import round_pack

    fmt = get_format(fmt)
    sign_a = _int_array(sign, "signs") if not np.asarray(sign).dtype == np.bool_ else np.asarray(sign)
    exp_a, sig_a = _int_array(exp, "exponents"), _int_array(sig, "significands")
    if sign_a.size and not np.isin(sign_a.astype(np.int64), (0, 1)).all():
        raise InputError("signs must be 0 or 1 (or bools)")
    if sig_a.size and int(sig_a.reshape(-1).min()) < 0:
        raise InputError("significands must be non-negative ints (the sign is its own argument)")
    try:
        sign_a, exp_a, sig_a = np.broadcast_arrays(sign_a, exp_a, sig_a)
    except ValueError:
        raise InputError(f"sign, exp and sig have shapes {np.shape(sign)}, {np.shape(exp)}, {np.shape(sig)} "
                         "that do not broadcast together") from None
    if sig_a.size and (max(abs(int(v)) for v in exp_a.reshape(-1)) > 1 << 20
                       or max(int(v) for v in sig_a.reshape(-1)) >> (62 if fmt.bits <= 62 else 4096)):
        raise NotRepresentableError(f"a value of sign, exp, sig is far outside {fmt.name}")
    if (not fmt.signed or fmt.sign_ignored) and sig_a.size and (sign_a.astype(bool) & (sig_a != 0)).any():
        raise NotRepresentableError(f"{fmt.name} has no negative values")
    s = sign_a.reshape(-1).astype(bool)
    e = exp_a.reshape(-1).astype(np.int64)
    g = sig_a.reshape(-1).astype(object if fmt.bits > 62 else np.int64)
    shape = sig_a.shape
    if g.size == 0:
        return np.zeros(shape, dtype=np.uint64)
    alg = NumpyAlgebra()
    sig_hi = max(int(g.max()), 1)
    bits = round_pack(
        alg, Format(**{**fmt.__dict__, "container": None, "container_shift": 0}), "rne",
        _bool_input(alg, s),
        alg.input(g, 0, sig_hi), alg.input(e - fmt.man_bits, int(e.min()) - fmt.man_bits, int(e.max()) - fmt.man_bits),
    )
    out = alg.value(bits, g.size).astype(np.uint64)
    back_s, back_e, back_g = decode(fmt, out)
    want_g, want_e = _strip(g, e)
    got_g, got_e = _strip(back_g.astype(g.dtype), back_e)
    special = (classify(fmt, out) >= INF)
    bad = np.nonzero((want_g != got_g) | ((want_e != got_e) & (want_g != 0)) | special)[0]
    if bad.size:
        i = int(bad[0])
        raise NotRepresentableError(
            f"value {'-' if s[i] else ''}{int(g[i])}*2^{int(e[i]) - fmt.man_bits} is not exactly representable in {fmt.name}"
        )
    return out.reshape(shape)


def _strip(sig: "np.ndarray", exp: "np.ndarray") -> tuple["np.ndarray", "np.ndarray"]:  # noqa: F821
    """(sig, exp) with trailing zero bits of sig moved into exp (a canonical form of sig * 2**exp)."""
    sig, exp = sig.copy(), exp.astype(np.int64).copy()
    while True:
        even = (sig != 0) & (sig % 2 == 0)
        if not even.any():
            return sig, exp
        sig[even] //= 2
        exp[even] += 1


def _bool_input(alg: object, arr: "np.ndarray"):  # type: ignore[no-untyped-def]  # noqa: F821
    from .encodings.algebra import Bool

    return Bool(alg, arr)  # type: ignore[arg-type]
