"""Formats: traits, exhaustive round trips for every format of <= 16 bits, exact parsing."""

from __future__ import annotations

import decimal
import sys
from fractions import Fraction

import numpy as np
import pytest

from smtmma import formats
from smtmma.errors import InputError, NotRepresentableError, UnknownNameError
from smtmma.formats import FORMATS, get_format

SMALL = [f for f in FORMATS.values() if f.bits <= 16]


@pytest.mark.parametrize("fmt", FORMATS.values(), ids=lambda f: f.name)
def test_traits_are_consistent(fmt: formats.Format) -> None:
    assert fmt.bits == int(fmt.signed) + fmt.exp_bits + fmt.man_bits
    top = formats.to_fraction(fmt, fmt.max_exp_field << fmt.man_bits | (fmt.max_sig & ((1 << fmt.man_bits) - 1)))
    assert top == Fraction(fmt.max_sig) * Fraction(2) ** (fmt.emax - fmt.man_bits)


@pytest.mark.parametrize(
    "name,maximum,min_sub",
    [
        ("fp16", 65504, Fraction(1, 2**24)),
        ("bf16", (2 - Fraction(1, 128)) * 2**127, Fraction(1, 2**133)),
        ("e4m3", 448, Fraction(1, 2**9)),
        ("e5m2", 57344, Fraction(1, 2**16)),
        ("e4m3fnuz", 240, Fraction(1, 2**10)),
        ("e5m2fnuz", 57344, Fraction(1, 2**17)),
        ("e2m3", Fraction(15, 2), Fraction(1, 8)),
        ("e3m2", 28, Fraction(1, 16)),
        ("e2m1", 6, Fraction(1, 2)),
        ("tf32", (2 - Fraction(1, 1024)) * 2**127, Fraction(1, 2**136)),
    ],
)
def test_extremes_match_the_format_specs(name: str, maximum: Fraction, min_sub: Fraction) -> None:
    fmt = get_format(name)
    finite = [formats.to_fraction(fmt, b) for b in range(1 << fmt.bits)]
    values = [v for v in finite if isinstance(v, Fraction)]
    assert max(values) == maximum
    assert min(v for v in values if v > 0) == min_sub


@pytest.mark.parametrize("fmt", SMALL, ids=lambda f: f.name)
def test_exhaustive_decode_encode_round_trip(fmt: formats.Format) -> None:
    bits = np.arange(1 << fmt.bits, dtype=np.int64)
    sign, exp, sig = formats.decode(fmt, bits)
    cls = formats.classify(fmt, bits)
    finite = cls < formats.INF
    if not fmt.subnormals:
        finite &= True
    back = formats.encode(fmt, sign[finite], exp[finite], sig[finite])
    expected = bits[finite]
    if fmt.sign_ignored:
        expected = expected & ~fmt.sign_mask  # ue4m3: the sign bit carries nothing
        keep = bits[finite] < (1 << (fmt.bits - 1))
        assert (back[keep] == expected[keep]).all()
    else:
        assert (back == expected).all()


@pytest.mark.parametrize("fmt", SMALL, ids=lambda f: f.name)
def test_exhaustive_fraction_round_trip(fmt: formats.Format) -> None:
    for b in range(1 << fmt.bits):
        if fmt.sign_ignored and b & fmt.sign_mask:
            continue
        v = formats.to_fraction(fmt, b)
        if v == formats.Special.NAN:
            assert fmt.is_nan_bits(b)
            continue
        if formats.is_negative_zero(fmt, b):
            assert formats.from_fraction(fmt, "-0") == b
            continue
        assert formats.from_fraction(fmt, v) == b


@pytest.mark.parametrize("fmt", SMALL, ids=lambda f: f.name)
def test_decode_agrees_with_exact_values(fmt: formats.Format) -> None:
    bits = np.arange(1 << fmt.bits, dtype=np.int64)
    sign, exp, sig = formats.decode(fmt, bits)
    cls = formats.classify(fmt, bits)
    for b in range(0, 1 << fmt.bits, max(1, (1 << fmt.bits) // 4096)):
        if cls[b] >= formats.INF:
            continue
        v = Fraction(int(sig[b])) * Fraction(2) ** (int(exp[b]) - fmt.man_bits)
        assert (-v if sign[b] else v) == formats.to_fraction(fmt, b)


def test_classification_counts_fp16() -> None:
    cls = formats.classify("fp16", np.arange(1 << 16))
    counts = np.bincount(cls, minlength=5)
    assert counts.tolist() == [2, 2 * 1023, 2 * 30 * 1024, 2, 2 * 1023]


def test_classification_of_fp8_specials() -> None:
    assert formats.classify("e4m3", [0x7F, 0xFF, 0x7E, 0x80]).tolist() == [formats.NAN, formats.NAN, formats.NORMAL, formats.ZERO]
    assert formats.classify("e4m3fnuz", [0x80, 0x7F, 0x00]).tolist() == [formats.NAN, formats.NORMAL, formats.ZERO]
    assert formats.classify("e5m2", [0x7C, 0xFC, 0x7D]).tolist() == [formats.INF, formats.INF, formats.NAN]
    assert formats.classify("ue8m0", [0xFF, 0x00, 0x7F]).tolist() == [formats.NAN, formats.NORMAL, formats.NORMAL]


def test_fp32_and_fp64_decode_match_numpy() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=1000) * 2.0 ** rng.integers(-140, 120, size=1000)
    for name, dt, ut in (("fp32", np.float32, np.uint32), ("fp64", np.float64, np.uint64)):
        bits = x.astype(dt).view(ut)
        sign, exp, sig = formats.decode(name, bits)
        m = get_format(name).man_bits
        got = np.array([(-1) ** int(s) * int(g) * 2.0 ** (int(e) - m) for s, e, g in zip(sign, exp, sig)])
        assert (got == x.astype(dt).astype(np.float64)).all()


@pytest.mark.parametrize(
    "fmt,text,bits",
    [
        ("fp16", "1", 0x3C00),
        ("fp16", "-2.5", 0xC100),
        ("fp16", "2^-24", 0x0001),
        ("fp16", "-0", 0x8000),
        ("fp16", "inf", 0x7C00),
        ("fp16", "0x3c00", 0x3C00),
        ("fp32", "0.1015625", 0x3DD00000),
        ("bf16", "-2^127", 0xFF00),
        ("e4m3", "448", 0x7E),
        ("e4m3", "nan", 0x7F),
        ("tf32", "0x3f800000", 0x3F800000 >> 13),
        ("tf32", "1", 0x3F800000 >> 13),
    ],
)
def test_parse_value(fmt: str, text: str, bits: int) -> None:
    assert formats.parse_value(fmt, text) == bits


@pytest.mark.parametrize(
    "fmt,text,error,fragment",
    [
        ("fp16", "0.1", NotRepresentableError, "not exactly representable in fp16"),
        ("fp16", "65520", NotRepresentableError, "not exactly representable"),
        ("fp16", "0x13c00", NotRepresentableError, "more bits than fp16"),
        ("fp16", "0xzz", InputError, "malformed hex"),
        ("fp16", "one", InputError, "neither hex"),
        ("e4m3", "inf", InputError, "has no infinity"),
        ("e2m1", "-0.75", NotRepresentableError, "not exactly representable"),
    ],
)
def test_parse_errors_name_the_problem(fmt: str, text: str, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        formats.parse_value(fmt, text)


def test_unknown_format_lists_valid_names() -> None:
    with pytest.raises(UnknownNameError, match="valid: fp64, fp32"):
        get_format("fp7")


def test_aliases_follow_ml_dtypes_spelling() -> None:
    assert get_format("float8_e4m3fn") is get_format("e4m3")
    assert get_format("float8_e5m2fnuz") is get_format("e5m2fnuz")
    assert get_format("float4_e2m1fn").bits == 4
    assert get_format("e8m13").container == "fp32"


# ---------------------------------------------------------------- value spellings, refusals that stay cheap

@pytest.mark.parametrize(
    "fmt,text,bits",
    [
        ("fp16", "nan", 0x7E00), ("fp16", "NaN", 0x7E00), ("fp16", "+nan", 0x7E00), ("fp16", "NAN", 0x7E00),
        ("fp16", "-nan", 0xFE00), ("fp16", "-NaN", 0xFE00),
        ("fp16", "inf", 0x7C00), ("fp16", "+inf", 0x7C00), ("fp16", "Inf", 0x7C00), ("fp16", "infinity", 0x7C00),
        ("fp16", "+Infinity", 0x7C00), ("fp16", "-inf", 0xFC00), ("fp16", "-Infinity", 0xFC00), ("fp16", "-INF", 0xFC00),
        ("fp32", "-nan", 0xFFC00000), ("bf16", "-inf", 0xFF80), ("e5m2", "-nan", 0xFE), ("e5m2", "+inf", 0x7C),
        ("e4m3", "nan", 0x7F), ("e4m3", "-nan", 0xFF),  # e4m3 (OCP): S.1111.111, both signs
        ("e4m3fnuz", "nan", 0x80), ("e4m3fnuz", "-nan", 0x80),  # FNUZ: one NaN, the would-be -0
        ("e5m2fnuz", "+NaN", 0x80), ("ue8m0", "nan", 0xFF), ("ue4m3", "nan", 0x7F),
        ("fp16", "-0.0e5", 0x8000), ("fp16", "-0/1", 0x8000), ("fp16", "0e999999999999", 0x0000),
        ("fp16", ".5", 0x3800), ("fp16", "5.", 0x4500), ("fp16", "-.5E1", 0xC500), ("fp16", "2^(-3)", 0x3000),
        ("fp16", "+2^+3", 0x4800), ("fp16", "0x00003c00", 0x3C00), ("fp16", "6.103515625e-5", 0x0400),
        ("fp64", "2^-1074", 0x1), ("fp64", "-2^1023", 0xFFE0000000000000),
    ],
)
def test_value_spellings(fmt: str, text: str, bits: int) -> None:
    assert formats.parse_value(fmt, text) == bits


def test_every_fp64_subnormal_written_out_in_full_is_accepted() -> None:
    # the longest exact decimal of the widest format stays under MAX_VALUE_CHARS
    exact = Fraction(1, 2**1074)
    digits = exact.numerator * 10**1074 // exact.denominator
    text = "0." + str(digits).rjust(1074, "0")
    assert len(text) < formats.MAX_VALUE_CHARS
    assert formats.parse_value("fp64", text) == 0x1


# Each is refused at once: exponents are bounded before any power is computed and digit strings are
# bounded before they are converted (a regression here hangs the test run rather than failing it).
BAD_VALUES = [
    ("fp16", "2^99999999", NotRepresentableError, "(overflow"),
    ("fp16", "-2^99999999", NotRepresentableError, "(overflow"),
    ("fp16", "2^-99999999", NotRepresentableError, "(underflow"),
    ("fp16", "2^(-99999999999999999999999999)", NotRepresentableError, "(underflow"),
    ("fp16", "1.0e+99999", NotRepresentableError, "(overflow"),
    ("fp16", "1.0e+99999999", NotRepresentableError, "(overflow"),
    ("fp64", "1e" + "9" * 1500, NotRepresentableError, "(overflow"),
    ("fp64", "1e-99999", NotRepresentableError, "(underflow"),
    ("fp64", "-1.5E-99999999", NotRepresentableError, "(underflow"),
    ("fp16", "65520", NotRepresentableError, "(overflow: the largest finite value is 65504.0)"),
    ("fp16", "1" + "0" * 10**6, InputError, "is too long for a value"),
    ("fp16", "0." + "0" * 10**6 + "1", InputError, "is too long for a value"),
    ("fp16", "1/" + "3" * 10**6, InputError, "is too long for a value"),
    ("fp16", "0x" + "f" * 10**6, NotRepresentableError, "has more bits than fp16"),
    ("fp16", "0x1" + "0" * 10**6, NotRepresentableError, "has more bits than fp16"),
    ("fp16", "z" * 10**6, InputError, "is too long for a value"),
    ("fp16", "1/0", InputError, "divides by zero"),
    ("fp16", "snan", InputError, "neither hex"),
    ("fp16", "nan(0x1)", InputError, "neither hex"),
    ("fp16", "- inf", InputError, "neither hex"),
    ("fp16", "--1", InputError, "neither hex"),
    ("fp16", "1_000", InputError, "neither hex"),
    ("fp16", "\uff11", InputError, "neither hex"),  # a fullwidth digit: values are ASCII
    ("fp16", "1e", InputError, "neither hex"),
    ("fp16", "2^(3", InputError, "neither hex"),
    ("fp16", "", InputError, "empty value"),
    ("e4m3", "inf", InputError, "format e4m3 has no infinity (largest finite value: 448.0)"),
    ("e4m3", "-Infinity", InputError, "format e4m3 has no infinity"),
    ("e4m3fnuz", "+inf", InputError, "format e4m3fnuz has no infinity"),
    ("e5m2fnuz", "-inf", InputError, "format e5m2fnuz has no infinity"),
    ("e2m1", "nan", InputError, "format e2m1 has no NaN"),
    ("ue8m0", "-nan", NotRepresentableError, "-nan is not representable in ue8m0 (it is unsigned)"),
    ("ue8m0", "-2^99999999", NotRepresentableError, "is negative; ue8m0 is unsigned"),
    ("ue8m0", "0", NotRepresentableError, "0 is not representable in ue8m0 (it has no zero)"),
    ("e4m3fnuz", "-0", NotRepresentableError, "-0 is not representable in e4m3fnuz (it has no -0)"),
]


@pytest.mark.parametrize("fmt,text,error,fragment", BAD_VALUES, ids=lambda x: x[:24] if isinstance(x, str) else None)
def test_bad_values_are_refused_with_a_short_message(fmt: str, text: str, error: type, fragment: str) -> None:
    with pytest.raises(error) as info:
        formats.parse_value(fmt, text, field="--a")
    msg = str(info.value)
    assert fragment in msg and msg.startswith("--a: ")
    assert len(msg) < 200 and "\n" not in msg


def test_leading_zeros_of_hex_are_fine_however_many() -> None:
    assert formats.parse_value("fp16", "0x" + "0" * 10**6 + "1") == 1


def test_int_str_digit_limit_is_an_input_error() -> None:
    if not hasattr(sys, "set_int_max_str_digits"):
        pytest.skip("Python without an int/str digit limit")
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        with pytest.raises(InputError, match="has too many digits"):
            formats.parse_value("fp64", "1" * 700 + "e-1000")
    finally:
        sys.set_int_max_str_digits(old)


@pytest.mark.parametrize(
    "value,fragment",
    [
        (10**100000, "(a value near 2^332192) is not exactly representable in fp16 (overflow"),
        (-Fraction(1, 10**5000), "-(a value near 2^-16609) is not exactly representable in fp16 (underflow"),
        (decimal.Decimal("1e99999999"), "1E+99999999 is not exactly representable in fp16 (overflow"),
        (1e300, "1e+300 is not exactly representable in fp16 (overflow"),
        (Fraction(1, 3), "1/3 is not exactly representable in fp16"),
    ],
    ids=["huge-int", "tiny-fraction", "decimal", "float", "third"],
)
def test_from_fraction_refuses_huge_python_numbers_cheaply(value: object, fragment: str) -> None:
    with pytest.raises(NotRepresentableError) as info:
        formats.from_fraction("fp16", value)
    assert str(info.value).startswith(fragment) and len(str(info.value)) < 200


def test_from_fraction_takes_python_and_numpy_numbers() -> None:
    assert formats.from_fraction("fp16", np.float32(1.5)) == 0x3E00
    assert formats.from_fraction("fp16", np.int64(-2)) == 0xC000
    assert formats.from_fraction("fp16", decimal.Decimal("-Infinity")) == 0xFC00
    assert formats.from_fraction("fp16", -0.0) == 0x8000
    assert formats.from_fraction("fp16", float("nan")) == 0x7E00  # a float NaN's sign is noise: canonical NaN
    with pytest.raises(InputError, match="expected a number or a string, got NoneType"):
        formats.from_fraction("fp16", None)  # type: ignore[arg-type]


def test_parse_real_classifies_without_computing() -> None:
    assert formats.parse_real("-1e-99999999") == formats.Real(True, "tiny")
    assert formats.parse_real("2^99999") == formats.Real(False, "huge")
    assert formats.parse_real("-nan") == formats.Real(True, "nan")
    assert formats.parse_real("-0") == formats.Real(True, "finite", Fraction(0))
    assert formats.parse_real("1.25e2") == formats.Real(False, "finite", Fraction(125))


@pytest.mark.parametrize(("x", "e"), [
    (Fraction(1), 0), (Fraction(3, 2), 0), (Fraction(2), 1), (Fraction(-3), 1), (Fraction(1, 3), -2),
    (Fraction(1, 4), -2), (Fraction((1 << 24) - 1, 1 << 48), -25), (Fraction(1, 1 << 149), -149), (7, 2),
])
def test_floor_log2_is_the_unbounded_exponent(x: Fraction, e: int) -> None:
    assert formats.floor_log2(x) == e
    assert Fraction(2) ** e <= abs(Fraction(x)) < Fraction(2) ** (e + 1)


def test_floor_log2_of_zero_is_refused() -> None:
    with pytest.raises(InputError, match="zero"):
        formats.floor_log2(0)


def test_carried_in_names_the_container() -> None:
    assert formats.carried_in("tf32").name == "fp32" and formats.carried_in("e8m13").name == "fp32"
    assert formats.carried_in("fp16") is get_format("fp16")
