"""Hand-checked cases for the exact reference (tests/reference.py) and the samplers.

The reference is the oracle of the differential tests, so it is pinned here
against values worked out by hand from the MMA-Sim paper (Eq. 10 / Table 8),
against recorded hardware outputs (hw-samples/), and against
rounding edge cases of its own funnel.
"""

from __future__ import annotations

import pathlib
from fractions import Fraction

import numpy as np
import pytest

from smtmma import sampling
from smtmma.formats import FORMATS, from_fraction, get_format, to_fraction
from smtmma.models import Model

from reference import decode, ftz_mul, reference_dot, round_fraction

F = Fraction
HW_SAMPLES = pathlib.Path(__file__).resolve().parents[1] / "hw-samples"


def bits(fmt: str, v: object) -> int:
    return from_fraction(fmt, v if isinstance(v, str) else F(v))


def value(fmt: str, b: int) -> object:
    return to_fraction(fmt, b)


# ---------------------------------------------------------------------------
# Eq. 10 / Table 8 of the MMA-Sim paper
# ---------------------------------------------------------------------------

EQ10_A = (-(2**13), F(-1, 2), F(-1, 4), F(-1, 8))
EQ10_B = (2**10, 1, 1, 1)
EQ10_C = 2**23

TABLE8 = [
    ("volta t-fdpa F=23", Model("t-fdpa", "fp16", "fp16", "fp32", "fp32", L=4, F=23, rho="rz-fp32"), F(0)),
    ("ampere t-fdpa F=24", Model("t-fdpa", "fp16", "fp16", "fp32", "fp32", L=8, F=24, rho="rz-fp32"), F(-1, 2)),
    ("ampere bf16 F=24", Model("t-fdpa", "bf16", "bf16", "fp32", "fp32", L=8, F=24, rho="rz-fp32"), F(-1, 2)),
    ("hopper t-fdpa F=25", Model("t-fdpa", "fp16", "fp16", "fp32", "fp32", L=16, F=25, rho="rz-fp32"), F(-3, 4)),
    ("hopper tf32 F=25", Model("t-fdpa", "tf32", "tf32", "fp32", "fp32", L=8, F=25, rho="rz-fp32"), F(-3, 4)),
    ("cdna1 e-fdpa", Model("e-fdpa", "fp16", "fp16", "fp32", "fp32", L=4), F(-7, 8)),
    ("cdna1 e-fdpa bf16 L=2", Model("e-fdpa", "bf16", "bf16", "fp32", "fp32", L=2), F(-7, 8)),
    ("cdna3 tr-fdpa", Model("tr-fdpa", "fp16", "fp16", "fp32", "fp32", L=8, F=24, F2=31, rho="rne-fp32"), F(-1, 2)),
    ("cdna3 gtr-fdpa", Model("gtr-fdpa", "e5m2fnuz", "e5m2fnuz", "fp32", "fp32", L=16, F=24, F2=31, rho="rne-fp32"), F(-1)),
    ("cdna2 ftz P=4", Model("ftz-addmul", "fp16", "fp16", "fp32", "fp32", P=4, ftz_inputs=True), F(0)),
    ("cdna2 ftz P=2", Model("ftz-addmul", "bf16", "bf16", "fp32", "fp32", P=2, ftz_inputs=True), F(-3, 8)),
    ("fma fp32", Model("fma", "fp32", "fp32", "fp32", "fp32"), F(-7, 8)),
    ("fma fp64", Model("fma", "fp64", "fp64", "fp64", "fp64"), F(-7, 8)),
]


@pytest.mark.parametrize("model, expected", [(m, e) for _, m, e in TABLE8], ids=[n for n, _, _ in TABLE8])
def test_table8(model: Model, expected: Fraction) -> None:
    a = [bits(model.a_fmt, v) for v in EQ10_A]
    b = [bits(model.b_fmt, v) for v in EQ10_B]
    d = reference_dot(model, a, b, bits(model.c_fmt, EQ10_C))
    assert value(model.d_fmt, d) == expected
    if expected == 0:
        assert d == 0  # an exact zero is +0


@pytest.mark.parametrize("K", [4, 9, 16, 17])
def test_table8_padded_with_zeros(K: int) -> None:
    """Trailing zeros (chained FDPAs, padding) do not change the Eq. 10 results."""
    for _, model, expected in TABLE8:
        a = [bits(model.a_fmt, v) for v in EQ10_A] + [0] * (K - 4)
        b = [bits(model.b_fmt, v) for v in EQ10_B] + [0] * (K - 4)
        assert value(model.d_fmt, reference_dot(model, a, b, bits(model.c_fmt, EQ10_C))) == expected


# ---------------------------------------------------------------------------
# The rounding funnel
# ---------------------------------------------------------------------------

ULP1 = F(1, 2**23)  # fp32 ulp of 1.0


@pytest.mark.parametrize(
    "x, mode, expected",
    [
        (1 + ULP1 / 2, "rne", 0x3F800000),  # tie -> even (down)
        (1 + 3 * ULP1 / 2, "rne", 0x3F800002),  # tie -> even (up)
        (1 + ULP1 / 2 + F(1, 2**60), "rne", 0x3F800001),  # above the tie
        (-(1 + ULP1 / 2), "rne", 0xBF800000),
        (1 + ULP1 * F(99, 100), "rz", 0x3F800000),
        (-(1 + ULP1 * F(99, 100)), "rz", 0xBF800000),
        (-(1 + ULP1 / 100), "rd", 0xBF800001),
        (1 + ULP1 / 100, "rd", 0x3F800000),
        (1 + ULP1 / 100, "ru", 0x3F800001),
        (F(1, 3), "rne", 0x3EAAAAAB),
        (F(1, 3), "rz", 0x3EAAAAAA),
        # subnormals (gradual underflow)
        (F(1, 2**149), "rne", 0x00000001),
        (F(1, 2**150), "rne", 0x00000000),  # tie between 0 and 2^-149 -> 0 (even)
        (F(3, 2**150), "rne", 0x00000002),  # 1.5 quanta -> 2 (even)
        (F(3, 2**151), "rne", 0x00000001),  # 0.75 quanta -> 1
        (-F(1, 2**150) - F(1, 2**200), "rne", 0x80000001),
        (-F(1, 2**151), "rne", 0x80000000),  # underflow keeps the sign
        (F(1, 2**126) - F(1, 2**149), "rne", 0x007FFFFF),  # largest subnormal
        (F(1, 2**126) - F(1, 2**151), "rne", 0x00800000),  # rounds up to the smallest normal
        (F(1, 2**126) - F(1, 2**151), "rz", 0x007FFFFF),
        # overflow: inf in every mode (docs/semantics.md)
        (F(2**128), "rne", 0x7F800000),
        (F(2**128), "rz", 0x7F800000),
        (-F(2**128), "rz", 0xFF800000),
        (F(2**128) - F(2**103), "rz", 0x7F7FFFFF),  # below 2^128: max finite
        (F(2**128) - F(2**103), "rne", 0x7F800000),  # the tie rounds to 2^128 -> inf
        (F(2**128) - F(2**103) - 1, "rne", 0x7F7FFFFF),
    ],
)
def test_round_fraction_fp32(x: Fraction, mode: str, expected: int) -> None:
    assert round_fraction(F(x), "fp32", mode) == expected


def test_round_fraction_zero_sign() -> None:
    assert round_fraction(F(0), "fp32", "rne") == 0
    assert round_fraction(F(0), "fp32", "rne", zero_negative=True) == 0x80000000


@pytest.mark.parametrize(
    "x, mode, expected",
    [
        (F(65504), "rne", 0x7BFF),
        (F(65520), "rne", 0x7C00),  # the tie above max -> inf
        (F(65519), "rne", 0x7BFF),
        (F(65535), "rz", 0x7BFF),
        (F(1, 2**24), "rne", 0x0001),
        (F(1, 2**25), "rne", 0x0000),
        (F(3, 2**25), "rne", 0x0002),
        (F(-3, 2**26), "rne", 0x8001),
        (1 + F(1, 2**11), "rne", 0x3C00),
        (1 + F(3, 2**11), "rne", 0x3C02),
    ],
)
def test_round_fraction_fp16(x: Fraction, mode: str, expected: int) -> None:
    assert round_fraction(x, "fp16", mode) == expected


def test_round_fraction_e8m13_and_fp64() -> None:
    e8m13 = get_format("e8m13")
    r = round_fraction(1 + F(1, 2**13) - F(1, 2**40), e8m13, "rz")
    assert r << 10 == 0x3F800000
    assert round_fraction(1 + F(1, 2**13), e8m13, "rz") << 10 == 0x3F800400
    assert round_fraction(F(1, 2**139), e8m13, "rz") << 10 == 0x00000400  # smallest E8M13 subnormal
    assert round_fraction(F(1, 2**140), e8m13, "rz") == 0
    assert round_fraction(F(2**128), e8m13, "rz") << 10 == 0x7F800000
    assert round_fraction(1 + F(1, 2**53), "fp64", "rne") == 0x3FF0000000000000
    assert round_fraction(F(1, 2**1074), "fp64", "rne") == 1


def test_round_fraction_agrees_with_exact_values() -> None:
    """Every fp16 / bf16 pattern is a fixed point of round_fraction (all modes)."""
    for name in ("fp16", "bf16", "e4m3", "e5m2", "e2m1"):
        fmt = get_format(name)
        for b in range(1 << fmt.bits):
            v = to_fraction(fmt, b)
            if isinstance(v, str) or v == 0:
                continue
            for mode in ("rne", "rz", "rd", "ru"):
                assert round_fraction(v, fmt, mode) == b


# ---------------------------------------------------------------------------
# Models: special values, zeros, FTZ, carries, scales
# ---------------------------------------------------------------------------

T_NV = Model("t-fdpa", "fp16", "fp16", "fp32", "fp32", L=4, F=23, rho="rz-fp32", nan="nvidia")
T_NV16 = Model("t-fdpa", "fp16", "fp16", "fp16", "fp16", L=8, F=24, rho="rne-fp16", nan="nvidia")
T_E8M13 = Model("t-fdpa", "e4m3", "e4m3", "fp32", "fp32", L=16, F=13, rho="rz-e8m13", nan="nvidia")
E_FDPA = Model("e-fdpa", "fp16", "fp16", "fp32", "fp32", L=4)
FMA32 = Model("fma", "fp32", "fp32", "fp32", "fp32")
FTZ4 = Model("ftz-addmul", "fp16", "fp16", "fp32", "fp32", P=4, ftz_inputs=True)
FTZ2_BF16 = Model("ftz-addmul", "bf16", "bf16", "fp32", "fp32", P=2, ftz_inputs=True)
TR_BF16 = Model("tr-fdpa", "bf16", "bf16", "fp32", "fp32", L=8, F=24, F2=31, rho="rne-fp32")
GTR = Model("gtr-fdpa", "e4m3fnuz", "e4m3fnuz", "fp32", "fp32", L=16, F=24, F2=31, rho="rne-fp32")
ONE16, NAN16, INF16, NINF16 = 0x3C00, 0x7E00, 0x7C00, 0xFC00


def test_nan_encodings() -> None:
    assert reference_dot(T_NV, [NAN16], [ONE16], 0) == 0x7FFFFFFF
    assert reference_dot(T_NV16, [NAN16], [ONE16], 0) == 0x7FFF
    assert reference_dot(T_E8M13, [0x7F], [0x38], 0) == 0x7FFFFFFF  # e4m3 NaN is S.1111.111
    assert reference_dot(E_FDPA, [NAN16], [ONE16], 0) == 0x7FC00000
    assert reference_dot(FMA32, [0x7FC00001], [0x3F800000], 0) == 0x7FC00000
    assert reference_dot(FTZ4, [NAN16], [ONE16], 0) == 0x7FC00000
    assert reference_dot(TR_BF16, [0x7FC1], [0x3F80], 0) == 0x7FC00000


@pytest.mark.parametrize("model", [T_NV, E_FDPA, FTZ4], ids=["t-fdpa", "e-fdpa", "ftz-addmul"])
def test_infinities(model: Model) -> None:
    nan = 0x7FFFFFFF if model.nan == "nvidia" else 0x7FC00000
    assert reference_dot(model, [INF16, ONE16], [ONE16, ONE16], 0) == 0x7F800000
    assert reference_dot(model, [NINF16], [ONE16], 0x3F800000) == 0xFF800000
    assert reference_dot(model, [INF16], [0], 0) == nan  # inf × 0
    assert reference_dot(model, [INF16, NINF16], [ONE16, ONE16], 0) == nan  # +inf - inf
    assert reference_dot(model, [INF16], [ONE16], 0xFF800000) == nan  # product +inf, c = -inf
    assert reference_dot(model, [ONE16], [ONE16], 0x7F800000) == 0x7F800000


def test_exact_zero_sums() -> None:
    neg1 = 0xBC00
    # fixed-point fused sums: an exact zero is +0 whatever the zero signs
    assert reference_dot(T_NV, [neg1], [ONE16], 0x3F800000) == 0
    assert reference_dot(T_NV, [0x8000], [ONE16], 0x80000000) == 0
    assert reference_dot(TR_BF16, [0x8000], [0x3F80], 0x80000000) == 0
    # IEEE ops: -0 only when every term is -0
    assert reference_dot(FMA32, [0x80000000], [0x3F800000], 0x80000000) == 0x80000000
    assert reference_dot(FMA32, [0xBF800000], [0x3F800000], 0x3F800000) == 0
    e4 = E_FDPA
    assert reference_dot(e4, [0x8000] * 4, [ONE16] * 4, 0x80000000) == 0x80000000
    assert reference_dot(e4, [0x8000] * 3 + [0], [ONE16] * 4, 0x80000000) == 0


def test_short_dot_is_not_padded() -> None:
    """Alg. 5 line 1: L = min(K, L_max), so K < L_max runs one FDPA of K terms (no +0 padding)."""
    assert reference_dot(E_FDPA, [0x8000], [ONE16], 0x80000000) == 0x80000000  # -0 + -0
    # K = 5 > L = 4: the second chunk is padded with +0 products, so the exact zero is +0
    assert reference_dot(E_FDPA, [0x8000] * 5, [ONE16] * 5, 0x80000000) == 0


def test_t_fdpa_underflow_keeps_sign() -> None:
    # bf16 products far below the fp32 range truncate to a signed zero under RZ
    m = Model("t-fdpa", "bf16", "bf16", "fp32", "fp32", L=8, F=24, rho="rz-fp32")
    tiny = bits("bf16", F(1, 2**100))
    assert reference_dot(m, [tiny], [tiny], 0) == 0
    assert reference_dot(m, [tiny | 0x8000], [tiny], 0) == 0x80000000


def test_ftz_addmul_flushes() -> None:
    sub16 = 0x0001  # 2^-24, an fp16 subnormal
    assert reference_dot(FTZ4, [sub16], [ONE16], 0) == 0
    assert value("fp32", reference_dot(E_FDPA, [sub16], [ONE16], 0)) == F(1, 2**24)
    # a subnormal c is flushed too
    assert reference_dot(FTZ4, [0], [0], 0x00000001) == 0
    # FTZ-Mul: a product below 2^-126 becomes a zero of the same sign
    a, b = bits("bf16", F(-1, 2**100)), bits("bf16", F(1, 2**30))
    assert ftz_mul(FTZ2_BF16, decode("bf16", a), decode("bf16", b)) == 0x80000000
    assert reference_dot(FTZ2_BF16, [a], [b], 0) == 0  # (-0) + (+0 pad) = +0, then +0 + c
    # a -0 input is flushed to +0 like a subnormal (MMA-Sim's flush_denormal does the same)
    assert reference_dot(FTZ2_BF16, [a, a], [b, b], 0x80000000) == 0  # +0 + (-0 + -0)
    assert reference_dot(FTZ2_BF16, [0x8000, 0x8000], [0x3F80, 0x3F80], 0x80000000) == 0
    # FTZ-Add: a sum below 2^-126 is flushed
    x, y = bits("bf16", F(3, 2**126)), bits("bf16", -F(2, 2**126) - F(2, 2**133))
    assert reference_dot(FTZ2_BF16, [x, y], [0x3F80, 0x3F80], 0) == 0


def test_carry_bits_wrap() -> None:
    # four products 1.75 × 1.75 = 3.0625 at e_max = 0: S = 12.25
    a = [bits("fp16", F(7, 4))] * 4
    unbounded = Model("t-fdpa", "fp16", "fp16", "fp32", "fp32", L=4, F=23, rho="rz-fp32")
    assert value("fp32", reference_dot(unbounded, a, a, 0)) == F(49, 4)
    # register of 2 integer bits: [-4, 4); 12.25 wraps to 12.25 - 16 = -3.75
    assert value("fp32", reference_dot(unbounded.replace(carry_bits=0), a, a, 0)) == F(-15, 4)
    # 2 carry bits: [-16, 16): no wrap
    assert value("fp32", reference_dot(unbounded.replace(carry_bits=2), a, a, 0)) == F(49, 4)
    # 1 carry bit: [-8, 8): 12.25 - 16
    assert value("fp32", reference_dot(unbounded.replace(carry_bits=1), a, a, 0)) == F(-15, 4)


def test_emax_floor() -> None:
    """``emax_floor``: the alignment exponent is never below it, so tiny terms are cut at 2^(floor - F)."""
    m = Model("t-fdpa", "bf16", "bf16", "fp32", "fp32", L=16, F=10, rho="rz-fp32", nan="nvidia")
    # t1 = 2^-149 + 2^-156, t2 = 2^-149 - 2^-157 (products of normal bf16 values), c = 0
    a = [bits("bf16", (1 + F(1, 2**7)) / 2**75), bits("bf16", (2 - F(1, 2**7)) / 2**76)]
    b = [bits("bf16", F(1, 2**74))] * 2
    # no floor: e_max = -149, quantum 2^-159, exact: 2^-148 + 2^-157 -> RZ-FP32 2^-148
    assert reference_dot(m, a, b, 0) == 0x00000002
    # floor -140: quantum 2^-150; t1 -> 2^-149, t2 -> 2^-150; 1.5 × 2^-149 -> RZ 2^-149
    assert reference_dot(m.replace(emax_floor=-140), a, b, 0) == 0x00000001
    # a floor below the terms' e_max changes nothing
    assert reference_dot(m.replace(emax_floor=-200), a, b, 0) == 0x00000002


def test_tr_fdpa_product_overflow() -> None:
    big = bits("bf16", F(2**127))
    two = bits("bf16", 2)
    assert reference_dot(TR_BF16, [big], [two], 0) == 0x7F800000  # 2^128 overflows
    assert reference_dot(TR_BF16, [big | 0x8000], [two], 0) == 0xFF800000
    assert reference_dot(TR_BF16, [big, big | 0x8000], [two, two], 0) == 0x7FC00000  # +inf + -inf
    # T-FDPA has no product overflow: 2^128 - 2^128 = 0
    t = Model("t-fdpa", "bf16", "bf16", "fp32", "fp32", L=8, F=24, rho="rz-fp32", nan="nvidia")
    assert reference_dot(t, [big, big | 0x8000], [two, two], 0) == 0


def test_tr_fdpa_round_down_asymmetry() -> None:
    one = 0x3F80
    c_neg = bits("fp32", -F(1, 2**26))
    # c aligned at E = 0 and rounded down to F = 24 bits: -2^-26 -> -2^-24
    assert value("fp32", reference_dot(TR_BF16, [one], [one], c_neg)) == 1 - F(1, 2**24)
    assert reference_dot(TR_BF16, [one], [one], c_neg ^ 0x80000000) == 0x3F800000


def test_gtr_fdpa_special_truncation() -> None:
    one = bits("e4m3fnuz", 1)
    # e_c = -26 < E - F - 1 = -25: c is dropped
    assert reference_dot(GTR, [one], [one], bits("fp32", -F(1, 2**26))) == 0x3F800000
    # e_c = -25: kept and rounded down to -2^-24
    assert value("fp32", reference_dot(GTR, [one], [one], bits("fp32", -F(1, 2**25)))) == 1 - F(1, 2**24)


def test_gtr_fdpa_groups() -> None:
    # even group: 1 and 2^-30 (truncated away); odd group: -2^-26 rounded down to -2^-24 at e_max
    a = [bits("e4m3fnuz", v) for v in (1, -F(1, 2**6), F(1, 2**7), F(1, 2**5))]
    b = [bits("e4m3fnuz", v) for v in (1, F(1, 2**7), F(1, 2**7), F(1, 2**7))]
    # products: 1, -2^-13, 2^-14, 2^-12 ; even: 1 + 2^-14 (exact in F=24), odd: 2^-12 - 2^-13 = 2^-13
    d = reference_dot(GTR, a, b, 0)
    assert value("fp32", d) == 1 + F(1, 2**14) + F(1, 2**13)


def test_e8m13_output() -> None:
    one = bits("e4m3", 1)
    eps = bits("e4m3", F(1, 2**7))
    # 1 + 2^-14 truncates to 1 under RZ-E8M13; fp32 container has 10 trailing zeros
    assert reference_dot(T_E8M13, [one, eps], [one, eps], 0) == 0x3F800000
    d = reference_dot(T_E8M13, [one, eps], [one, one], 0)  # 1 + 2^-7
    assert d == 0x3F810000 and d & 0x3FF == 0


def test_fp16_output_overflow() -> None:
    big = bits("fp16", 256)
    assert reference_dot(T_NV16, [big], [big], 0) == 0x7C00  # 65536 rounds to inf
    assert reference_dot(T_NV16, [big], [big | 0x8000], 0) == 0xFC00


MX = Model("st-fdpa", "e4m3", "e4m3", "fp32", "fp32", L=32, F=25, rho="rz-fp32", block=32, scale_fmt="ue8m0", nan="nvidia")
NVF4 = Model("gst-fdpa", "e2m1", "e2m1", "fp32", "fp32", L=64, G=16, F=35, rho="rz-fp32", block=16, scale_fmt="ue4m3", nan="nvidia")
MXF4 = NVF4.replace(block=32, scale_fmt="ue8m0")


def test_st_fdpa_scales() -> None:
    one = bits("e4m3", 1)
    a = [one] * 32
    d = reference_dot(MX, a, a, 0, scale_a=[127 + 3], scale_b=[127 - 1])
    assert value("fp32", d) == 32 * 4
    # scales of the second block apply to elements 32..63 (chained FDPA)
    d = reference_dot(MX, a * 2, a * 2, 0, scale_a=[127, 127 + 10], scale_b=[127, 127])
    assert value("fp32", d) == 32 + 32 * 1024
    # a NaN scale gives NaN
    assert reference_dot(MX, a, a, 0, scale_a=[0xFF], scale_b=[127]) == 0x7FFFFFFF
    # truncation at e_max including the scale exponents: products 2^e - 2^e cancel,
    # c = 1 survives F = 25 at e_max = 25 but not at e_max = 26
    neg_one = bits("e4m3", -1)
    d = reference_dot(MX, [one, one], [one, neg_one], bits("fp32", 1), scale_a=[127 + 25], scale_b=[127])
    assert value("fp32", d) == 1
    d = reference_dot(MX, [one, one], [one, neg_one], bits("fp32", 1), scale_a=[127 + 26], scale_b=[127])
    assert d == 0


def test_gst_fdpa_groups_and_scales() -> None:
    six, half = bits("e2m1", 6), bits("e2m1", F(1, 2))
    a = [six] * 16 + [half] * 16
    b = [six] * 16 + [half] * 16
    s1 = bits("ue4m3", 1)
    s15 = bits("ue4m3", F(3, 2))
    # group 0: 16 × 36 = 576, scales 1.5 × 1; group 1: 16 × 0.25 = 4, scales 1 × 1
    d = reference_dot(NVF4, a, b, 0, scale_a=[s15, s1], scale_b=[s1, s1])
    assert value("fp32", d) == 576 * F(3, 2) + 4
    # ue4m3 ignores the sign bit
    d2 = reference_dot(NVF4, a, b, 0, scale_a=[s15 | 0x80, s1 | 0x80], scale_b=[s1, s1])
    assert d2 == d
    # a group is summed exactly before truncation: at e_max = 0 with F = 35 nothing is lost here
    e = reference_dot(MXF4, a, b, 0, scale_a=[127], scale_b=[127])
    assert value("fp32", e) == 576 + 4
    # a group's exponent is the sum of its scale exponents only; its exact sum is
    # unnormalized (36 × 2^8 at e = 8), c sets e_max = 13, and group 0
    # (0.25 at e = -12, i.e. 2^-27 relative) survives F = 35
    g0 = [half] + [0] * 15
    g1 = [six] + [0] * 15
    sa = [bits("ue4m3", F(1, 2**6)), bits("ue4m3", 256)]
    sb = [bits("ue4m3", F(1, 2**6)), s1]
    d3 = reference_dot(NVF4, g0 + g1, g0 + g1, bits("fp32", -9216), scale_a=sa, scale_b=sb)
    assert value("fp32", d3) == F(1, 2**14)
    d4 = reference_dot(NVF4.replace(F=26), g0 + g1, g0 + g1, bits("fp32", -9216), scale_a=sa, scale_b=sb)
    assert d4 == 0
    assert reference_dot(NVF4, a, b, 0, scale_a=[0x7F, s1], scale_b=[s1, s1]) == 0x7FFFFFFF


def test_via_decodes_in_the_wider_format() -> None:
    """With ``via``, an e4m3 subnormal is a normal fp16 and its exponent drives e_max."""
    m = Model("t-fdpa", "e4m3", "e4m3", "fp32", "fp32", L=4, F=3, rho="rz-fp32")
    sub = 0x01  # 2^-9: Exp = -6 in e4m3 (subnormal), -9 in fp16
    one = bits("e4m3", 1)
    x = sub
    # products: 2^-9 × 1 (e = -6 as e4m3, -9 via fp16) and 2^-12 × 1 ...
    small = bits("e4m3", F(1, 2**6))  # 2^-6, normal
    # e4m3: e_max = max(-6 + 0, -6 + 0) = -6; 2^-9 is sig 2^-3 at e = -6: kept with F = 3
    assert value("fp32", reference_dot(m, [x, small], [one, one], 0)) == F(1, 2**6) + F(1, 2**9)
    mv = m.replace(via="fp16")
    assert value("fp32", reference_dot(mv, [x, small], [one, one], 0)) == F(1, 2**6) + F(1, 2**9)
    # the difference shows when the subnormal alone sets e_max together with c
    c = bits("fp32", F(1, 2**12))
    assert value("fp32", reference_dot(m, [x], [one], c)) == F(1, 2**9)  # 2^-12 is 2^-6 relative: lost
    assert value("fp32", reference_dot(mv, [x], [one], c)) == F(1, 2**9) + F(1, 2**12)


# ---------------------------------------------------------------------------
# Recorded hardware outputs (hw-samples/)
# ---------------------------------------------------------------------------

HW_FILES = sorted(p.name for p in HW_SAMPLES.glob("*.jsonl")) if HW_SAMPLES.is_dir() else []


@pytest.mark.parametrize("name", HW_FILES)
def test_hardware_samples(name: str) -> None:
    """Every recorded line, through the exact reference, under the catalogue's model of its own instruction."""
    from smtmma.catalogue import model_of
    from smtmma.vectors import parse_line

    texts = [x for x in (HW_SAMPLES / name).read_text().splitlines() if x.strip()]
    ok = 0
    for n, text in enumerate(texts, 1):
        v = parse_line(text, n)
        m = model_of(v.arch, v.instr, v.raw.get("op") or v.op)  # a shape name keeps its own L
        ok += reference_dot(m, v.a, v.b, v.c, v.scale_a, v.scale_b) == v.d
    assert ok == len(texts)


# ---------------------------------------------------------------------------
# Samplers (smtmma.sampling)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(FORMATS))
def test_round_to_format_is_exact_rne(name: str) -> None:
    """The vectorized float64 -> bits rounding of the samplers equals the exact funnel (in range)."""
    fmt = get_format(name)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(3000) * np.exp2(rng.integers(-30, 30, 3000))
    if not fmt.signed or fmt.sign_ignored:
        x = np.abs(x)
    got = sampling.round_to_format(fmt, x)
    assert got.dtype == sampling.dtype_for(fmt)
    max_finite = F(fmt.max_sig) * F(2) ** (fmt.emax - fmt.man_bits)
    min_value = F(2) ** (fmt.emin - fmt.man_bits)
    checked = 0
    for xi, g in zip(x, got):
        v = F(float(xi))
        if abs(v) >= max_finite:
            assert to_fraction(fmt, int(g)) == (max_finite if v > 0 else -max_finite)  # saturates
            continue
        if not fmt.subnormals and v < min_value:
            continue  # ue8m0 has no zero: anything below 2^-127 is 2^-127
        want = round_fraction(v, fmt, "rne")
        if fmt.is_inf_bits(want) or fmt.is_nan_bits(want):
            continue  # rounds past the largest finite value: saturated instead
        if fmt.nan == "neg_zero" and want == fmt.sign_mask:
            want = 0  # FNUZ has no -0
        assert int(g) == want, (name, float(xi))
        checked += 1
    assert checked > 1000


@pytest.mark.parametrize("name", [n for n, f in FORMATS.items() if f.bits <= 16])
def test_to_float64_exhaustive(name: str) -> None:
    fmt = get_format(name)
    allb = np.arange(1 << fmt.bits, dtype=sampling.dtype_for(fmt))
    vals = sampling.to_float64(fmt, allb)
    nan = sampling.is_nan_bits(fmt, allb)
    inf = sampling.is_inf_bits(fmt, allb)
    for b, v, isn, isi in zip(allb, vals, nan, inf):
        exact = to_fraction(fmt, int(b))
        assert isn == (exact == "nan") and isi == (exact in ("inf", "-inf"))
        if not isinstance(exact, str):
            assert F(float(v)) == exact


@pytest.mark.parametrize("kind", sampling.KINDS)
@pytest.mark.parametrize("fmts", [("fp16", "fp16", "fp32"), ("e4m3", "e5m2", "fp16"), ("tf32", "tf32", "fp32"),
                                  ("e2m1", "e2m1", "fp32"), ("fp64", "fp64", "fp64"), ("e4m3fnuz", "e5m2fnuz", "fp32")])
def test_draw_dot_shapes_and_determinism(kind: str, fmts: tuple[str, str, str]) -> None:
    a, b, c = sampling.draw_dot(kind, *fmts, 50, 12, np.random.default_rng(7))
    a2, b2, c2 = sampling.draw_dot(kind, *fmts, 50, 12, np.random.default_rng(7))
    assert a.shape == b.shape == (50, 12) and c.shape == (50,)
    for arr, f in ((a, fmts[0]), (b, fmts[1]), (c, fmts[2])):
        assert arr.dtype == sampling.dtype_for(f)
        assert int(arr.max()) < (1 << get_format(f).bits)
    assert (a == a2).all() and (b == b2).all() and (c == c2).all()
    if kind not in ("bits",):
        for arr, f in ((a, fmts[0]), (b, fmts[1]), (c, fmts[2])):
            assert not (sampling.is_nan_bits(f, arr) | sampling.is_inf_bits(f, arr)).any()


def test_ill_conditioned_cancels() -> None:
    a, b, c = sampling.draw_dot("ill-conditioned", "fp16", "fp16", "fp32", 400, 16, np.random.default_rng(3))
    av, bv, cv = (sampling.to_float64(f, x) for f, x in (("fp16", a), ("fp16", b), ("fp32", c)))
    p = av * bv
    total = np.abs(p).sum(axis=1) + np.abs(cv)
    exact = p.sum(axis=1) + cv
    cond = total / np.maximum(np.abs(exact), 1e-300)
    assert np.median(cond) > 1e4


def test_bits_cover_specials() -> None:
    x = sampling.draw("bits", "fp16", 400000, np.random.default_rng(0))
    assert sampling.is_nan_bits("fp16", x).any() and sampling.is_inf_bits("fp16", x).any()
    assert ((x & 0x7C00) == 0).any()  # subnormals / zeros
    y = sampling.draw("finite-bits", "fp16", 20000, np.random.default_rng(0))
    assert not (sampling.is_nan_bits("fp16", y) | sampling.is_inf_bits("fp16", y)).any()
