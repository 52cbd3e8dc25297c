"""Formats: traits, exhaustive round trips for every format of <= 16 bits, exact parsing."""

from __future__ import annotations

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
