"""Real arrays <-> bit patterns: exact bits, exhaustive round trips, rounding, refusals, input types."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from smtmma import formats
from smtmma.arrays import from_patterns, pattern_dtype, to_patterns, value_dtype
from smtmma.encodings.algebra import Bool
from smtmma.encodings.concrete import NumpyAlgebra
from smtmma.encodings.rounding import round_pack
from smtmma.errors import InputError, InputTypeError, NotRepresentableError
from smtmma.formats import FORMATS, Format, get_format

SMALL = [f for f in FORMATS.values() if f.bits <= 22]  # every pattern enumerated (tf32: 2**19, e8m13: 2**22)
ALL = list(FORMATS.values())
ids = lambda f: f.name


def _bits(value: object, fmt: str, **kw: object) -> int:
    return int(to_patterns(value, fmt, **kw))


@pytest.mark.parametrize(
    "fmt,value,bits",
    [
        ("fp16", 1.0, 0x3C00), ("fp16", -0.0, 0x8000), ("fp16", 2.0**-24, 0x0001), ("fp16", 2.0**-14, 0x0400),
        ("fp16", 65504.0, 0x7BFF), ("fp16", -2.0, 0xC000), ("fp16", np.inf, 0x7C00), ("fp16", -np.inf, 0xFC00),
        ("bf16", 1.0, 0x3F80), ("bf16", 2.0**-133, 0x0001), ("bf16", float((2 - Fraction(1, 128)) * 2**127), 0x7F7F),
        ("e4m3", 1.0, 0x38), ("e4m3", 448.0, 0x7E), ("e4m3", -448.0, 0xFE), ("e4m3", 2.0**-9, 0x01), ("e4m3", -0.0, 0x80),
        ("e5m2", 1.0, 0x3C), ("e5m2", 57344.0, 0x7B), ("e5m2", 2.0**-16, 0x01), ("e5m2", -np.inf, 0xFC),
        ("e4m3fnuz", 1.0, 0x40), ("e4m3fnuz", 240.0, 0x7F), ("e4m3fnuz", 2.0**-10, 0x01), ("e4m3fnuz", -0.0, 0x00),
        ("e5m2fnuz", 1.0, 0x40), ("e5m2fnuz", 2.0**-17, 0x01), ("e5m2fnuz", -57344.0, 0xFF),
        ("e2m3", 7.5, 0x1F), ("e2m3", 0.125, 0x01), ("e2m3", -1.0, 0x28),
        ("e3m2", 28.0, 0x1F), ("e3m2", 0.0625, 0x01), ("e3m2", 1.0, 0x0C),
        ("e2m1", 6.0, 0x7), ("e2m1", 0.5, 0x1), ("e2m1", -6.0, 0xF), ("e2m1", 1.0, 0x2), ("e2m1", -0.0, 0x8),
        ("ue8m0", 1.0, 0x7F), ("ue8m0", 2.0**-127, 0x00), ("ue8m0", 2.0**127, 0xFE), ("ue8m0", 0.5, 0x7E),
        ("ue4m3", 448.0, 0x7E), ("ue4m3", 1.0, 0x38), ("ue4m3", -0.0, 0x00),
        ("tf32", 1.0, 0x3F800000 >> 13), ("tf32", -2.0**-136, 0x40001), ("e8m13", 1.0, 0x3F800000 >> 10),
        ("fp32", 1.0, 0x3F800000), ("fp32", 2.0**-149, 0x1), ("fp32", -0.0, 0x80000000),
        ("fp64", 1.0, 0x3FF0000000000000), ("fp64", -0.0, 1 << 63), ("fp64", 5e-324, 1),
    ],
)
def test_exact_bits(fmt: str, value: float, bits: int) -> None:
    out = to_patterns(value, fmt)
    assert out.shape == () and out.dtype == pattern_dtype(fmt)
    assert int(out) == bits
    back = from_patterns(bits, fmt)
    assert back.dtype == value_dtype(fmt)
    f = get_format(fmt)
    assert float(back) == value
    assert np.signbit(back) == (f.signed and not f.sign_ignored and bits >> (f.bits - 1) == 1)


@pytest.mark.parametrize("fmt", ALL, ids=ids)
def test_nan_and_infinity(fmt: Format) -> None:
    x = np.array([np.nan, -np.nan, np.inf, -np.inf])
    if fmt.nan == "none":
        with pytest.raises(NotRepresentableError, match=rf"^x\[0\] = nan: format {fmt.name} has no NaN$"):
            to_patterns(x[:2], fmt, round="rne")
    else:
        assert to_patterns(x[:2], fmt).tolist() == [fmt.nan_bits()] * 2  # canonical, whatever the sign
        assert np.isnan(from_patterns([fmt.nan_bits()], fmt)).all()
    if fmt.has_inf:
        assert to_patterns(x[2:], fmt).tolist() == [fmt.inf_bits(), fmt.inf_bits(True)]
        assert from_patterns([fmt.inf_bits(), fmt.inf_bits(True)], fmt).tolist() == [np.inf, -np.inf]
    else:
        for mode in (None, "rne", "rz"):
            with pytest.raises(NotRepresentableError, match=rf"^x\[1\] = -inf: format {fmt.name} has no infinity"):
                to_patterns([1.0, -np.inf], fmt, round=mode)


@pytest.mark.parametrize("fmt", SMALL, ids=ids)
def test_every_pattern_round_trips(fmt: Format) -> None:
    bits = np.arange(1 << fmt.bits, dtype=np.int64)
    values = from_patterns(bits, fmt)
    cls = formats.classify(fmt, bits)
    assert np.array_equal(np.isnan(values), cls == formats.NAN)
    expected = bits & ~fmt.sign_mask if fmt.sign_ignored else bits  # ue4m3: the sign bit carries nothing
    if fmt.nan != "none":
        expected = np.where(cls == formats.NAN, fmt.nan_bits(), expected)
    back = to_patterns(values, fmt)
    assert back.dtype == pattern_dtype(fmt)
    assert np.array_equal(back, expected)
    assert np.array_equal(to_patterns(values, fmt, round="rne"), expected)
    assert np.array_equal(to_patterns(values, fmt, round="rz"), expected)


@pytest.mark.parametrize("fmt", SMALL, ids=ids)
def test_values_agree_with_exact_fractions(fmt: Format) -> None:
    step = max(1, (1 << fmt.bits) // 4096)
    for b in range(0, 1 << fmt.bits, step):
        v = formats.to_fraction(fmt, b)
        got = float(from_patterns(b, fmt))
        if isinstance(v, Fraction):
            assert Fraction(got) == v, hex(b)
        else:
            assert np.isnan(got) if v == formats.Special.NAN else got == float(v)


@pytest.mark.parametrize("name", ["fp32", "fp64"])
def test_wide_formats_round_trip_random_patterns(name: str) -> None:
    fmt = get_format(name)
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 1 << 64, 100_000, dtype=np.uint64) >> np.uint64(64 - fmt.bits)
    bits = bits.astype(pattern_dtype(fmt))
    values = from_patterns(bits, fmt)
    nan = np.isnan(values)
    assert np.array_equal(to_patterns(values, fmt), np.where(nan, fmt.nan_bits(), bits))


def _random_reals(n: int, seed: int, fmt: Format) -> np.ndarray:
    """Values around ``fmt``'s range: exact ones, inexact ones, ties, subnormals, overflows, zeros."""
    rng = np.random.default_rng(seed)
    sig = rng.integers(1, 1 << 30, n) * rng.choice([1.0, 2.0**-20, 2.0**-40], n) + rng.choice([0, 0.5], n)
    low, high = fmt.emin - fmt.man_bits - 3, fmt.emax + 2  # exponents of the leading bit of the values
    x = np.ldexp(sig, rng.integers(low, high, n) - np.frexp(sig)[1]) * rng.choice([-1.0, 1.0], n)
    x[:: 97] = 0.0
    x[1:: 97] = -0.0
    return x


def _funnel(fmt: Format, mode: str, x: np.ndarray) -> np.ndarray:
    """Bits by the project's rounding funnel (:func:`round_pack`), the reference for rounding."""
    m, e = np.frexp(np.abs(x))
    sig = np.ldexp(m, 53).astype(np.int64)
    exp = e.astype(np.int64) - 53
    alg = NumpyAlgebra()
    plain = Format(**{**fmt.__dict__, "container": None, "container_shift": 0})
    out = round_pack(alg, plain, mode, Bool(alg, np.signbit(x)), alg.input(sig, 0, 1 << 53),
                     alg.input(exp, int(exp.min()), int(exp.max())))
    return alg.value(out, x.size).astype(np.int64)


@pytest.mark.parametrize("mode", ["rne", "rz"])
@pytest.mark.parametrize("fmt", [f for f in ALL if f.bits < 64], ids=ids)
def test_rounding_matches_the_funnel(fmt: Format, mode: str) -> None:
    x = _random_reals(20_000, 7, fmt)
    if not fmt.signed or fmt.sign_ignored:
        x = np.abs(x)
    got = to_patterns(x, fmt, round=mode).astype(np.int64)
    want = _funnel(fmt, mode, x)
    top = float(from_patterns(fmt.max_exp_field << fmt.man_bits | (fmt.max_sig & ((1 << fmt.man_bits) - 1)), fmt))
    # the funnel keeps the sign of an overflow to NaN, gives inf on RZ overflow and -0 (0x80, NaN) in FNUZ: compare the rest
    same = (np.abs(x) <= top) & ((want != fmt.sign_mask) if fmt.nan == "neg_zero" else True)
    assert np.array_equal(got[same], want[same])
    assert same.sum() > 15_000


@pytest.mark.parametrize("fmt", ALL, ids=ids)
def test_exactness_agrees_with_from_fraction(fmt: Format) -> None:
    for v in _random_reals(400, 3, fmt).tolist() + [0.0, -0.0]:
        if v == 0 and (fmt.nan == "neg_zero" or fmt.sign_ignored):  # from_fraction: FNUZ refuses -0,
            assert _bits(v, fmt.name) == 0  # ue4m3 keeps the ignored sign bit; arrays take -0.0 as +0
            continue
        try:
            want = formats.from_fraction(fmt, v)
        except NotRepresentableError:
            with pytest.raises(NotRepresentableError):
                to_patterns(v, fmt)
            continue
        assert _bits(v, fmt.name) == want, v


@pytest.mark.parametrize(
    "fmt,value,mode,bits",
    [
        ("fp16", 1 + 2.0**-11, "rne", 0x3C00), ("fp16", 1 + 3 * 2.0**-11, "rne", 0x3C02),  # ties to even
        ("fp16", 1 + 2.0**-11 + 2.0**-40, "rne", 0x3C01), ("fp16", 65519.0, "rne", 0x7BFF), ("fp16", 65520.0, "rne", 0x7C00),
        ("fp16", 2.0**-25, "rne", 0x0000), ("fp16", -2.0**-25, "rne", 0x8000), ("fp16", 3 * 2.0**-25, "rne", 0x0002),
        ("fp16", 2.0**-14 - 2.0**-26, "rne", 0x0400),  # a subnormal rounding up to the smallest normal
        ("fp16", 0.1, "rne", 0x2E66), ("fp16", 0.1, "rz", 0x2E66), ("fp16", -0.3, "rne", 0xB4CD), ("fp16", -0.3, "rz", 0xB4CC),
        ("fp16", 1e6, "rz", 0x7BFF), ("fp16", -1e6, "rne", 0xFC00), ("fp16", 1e-30, "rz", 0x0000),
        ("bf16", 1 + 2.0**-8, "rne", 0x3F80), ("bf16", 1 + 3 * 2.0**-8, "rne", 0x3F82), ("bf16", 1e39, "rne", 0x7F80),
        ("e4m3", 17.0, "rne", 0x58), ("e4m3", 19.0, "rne", 0x5A), ("e4m3", 464.0, "rne", 0x7E),
        ("e4m3", 465.0, "rne", 0x7F), ("e4m3", -1000.0, "rne", 0x7F), ("e4m3", 1000.0, "rz", 0x7E), ("e4m3", -1000.0, "rz", 0xFE),
        ("e4m3", 2.0**-10, "rne", 0x00), ("e4m3", 3 * 2.0**-10, "rne", 0x02),
        ("e5m2", 61440.0, "rne", 0x7C), ("e5m2", 61439.0, "rne", 0x7B),
        ("e4m3fnuz", -2.0**-12, "rne", 0x00), ("e4m3fnuz", 248.0, "rne", 0x80), ("e4m3fnuz", -300.0, "rz", 0xFF),
        ("e2m1", 2.5, "rne", 0x4), ("e2m1", 3.5, "rne", 0x6), ("e2m1", 5.0, "rne", 0x6), ("e2m1", 7.0, "rne", 0x7),
        ("e2m1", -100.0, "rne", 0xF), ("e2m1", 0.25, "rne", 0x0), ("e2m1", 0.75, "rne", 0x2), ("e2m1", 0.75, "rz", 0x1),
        ("e2m3", 100.0, "rne", 0x1F), ("e3m2", -30.0, "rne", 0x3F),
        ("ue8m0", 1.5, "rne", 0x80), ("ue8m0", 3.0, "rne", 0x81), ("ue8m0", 1.4, "rne", 0x7F), ("ue8m0", 3.0, "rz", 0x80),
        ("ue8m0", 0.0, "rne", 0x00), ("ue8m0", 1e-50, "rne", 0x00), ("ue8m0", 2.0**128, "rne", 0xFF), ("ue8m0", 1e300, "rz", 0xFE),
        ("ue8m0", float.fromhex("0x1.006p-127"), "rne", 0x00), ("ue8m0", float.fromhex("0x1.8p-127"), "rne", 0x01),
        ("e4m3", float.fromhex("0x1.0000000060000p-10"), "rne", 0x01),  # above half the smallest subnormal
        ("ue4m3", 470.0, "rne", 0x7F), ("ue4m3", 0.3, "rne", 0x2A),
        ("tf32", 1 + 2.0**-23, "rz", 0x1FC00), ("tf32", 1 + 2.0**-11, "rne", 0x1FC00), ("tf32", -(1 + 2.0**-10 + 2.0**-11), "rne", 0x5FC02),
        ("e8m13", 1 + 2.0**-14, "rne", 0xFE000), ("fp32", 0.1, "rne", 0x3DCCCCCD), ("fp32", 0.1, "rz", 0x3DCCCCCC),
        ("fp64", 0.1, "rz", 0x3FB999999999999A),
    ],
)
def test_rounding_hand_checked(fmt: str, value: float, mode: str, bits: int) -> None:
    assert _bits(value, fmt, round=mode) == bits


def test_refusal_names_the_first_offending_index_and_value() -> None:
    a = np.zeros((4, 8))
    a[3, 7], a[3, 6] = 0.1, 2.0
    with pytest.raises(NotRepresentableError) as e:
        to_patterns(a, "fp16", name="A")
    assert str(e.value) == "A[3, 7] = 0.1 is not representable in fp16 (nearest: 0.0999755859375); pass round='rne' to round"
    a[1, 2] = 1e-9
    with pytest.raises(NotRepresentableError, match=r"^A\[1, 2\] = 1e-09 .* \(nearest: 0\.0\)"):
        to_patterns(a, "fp16", name="A")
    with pytest.raises(NotRepresentableError, match=r"^x\[2\] = 1000\.0 is not representable in e4m3 \(overflow: the largest finite value is 448\.0\)$"):
        to_patterns([1.0, 2.0, 1000.0, 1e9], "e4m3")
    with pytest.raises(NotRepresentableError, match=r"^x = -3\.0 is negative; ue8m0 is unsigned$"):
        to_patterns(-3.0, "ue8m0", round="rne")
    with pytest.raises(NotRepresentableError, match=r"^x\[0\] = -1\.0 is negative; ue4m3 is unsigned$"):
        to_patterns([-1.0], "ue4m3")
    with pytest.raises(NotRepresentableError, match=r"^x = 0\.0 is not representable in ue8m0 \(it has no zero\)$"):
        to_patterns(0.0, "ue8m0")
    with pytest.raises(NotRepresentableError, match=r"^B\[0, 1\] = 5 is not representable in e2m1 \(nearest: 4\.0\)") as e:
        to_patterns(np.array([[1, 5]], dtype=np.int8), "e2m1", name="B")
    assert "\n" not in str(e.value)


def test_refusal_of_integer_and_huge_values() -> None:
    with pytest.raises(NotRepresentableError, match=r"^x\[1\] = 9007199254740993 is not representable in fp32"):
        to_patterns(np.array([1, 2**53 + 1], dtype=np.int64), "fp32", round="rne")
    with pytest.raises(NotRepresentableError, match=r"^x\[0\] = 18446744073709551615 "):
        to_patterns(np.array([2**64 - 1], dtype=np.uint64), "fp64")
    assert to_patterns(np.array([2**63], dtype=np.uint64), "fp32").tolist() == [0x5F000000]
    assert to_patterns(np.array([-(2**63), 2**60], dtype=np.int64), "bf16").tolist() == [0xDF00, 0x5D80]
    with pytest.raises(NotRepresentableError, match=r"^x\[1\] = 257 is not representable in bf16 \(nearest: 256\.0\)"):
        to_patterns(np.array([1, 257], dtype=np.uint16), "bf16")


@pytest.mark.parametrize(
    "bad,error",
    [
        ("1.0", InputTypeError), (["1", "2"], InputTypeError), (np.array([1.0, None], dtype=object), InputTypeError),
        ([1.0, "a"], InputTypeError), ([[1.0], [1.0, 2.0]], InputTypeError), (np.array([True, False]), InputTypeError),
        (np.array([1 + 2j]), InputTypeError), ([2**70], InputTypeError), (np.array(["2020-01-01"], dtype="datetime64[D]"), InputTypeError),
    ],
)
def test_non_numbers_are_refused(bad: object, error: type) -> None:
    with pytest.raises(error) as e:
        to_patterns(bad, "fp16")
    assert str(e.value).startswith("x: ") and "\n" not in str(e.value)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(InputError, match="round must be None"):
        to_patterns(1.0, "fp16", round="rnd")
    with pytest.raises(InputTypeError, match="expected integer bit patterns of fp16"):
        from_patterns(np.array([1.0]), "fp16")
    with pytest.raises(NotRepresentableError, match=r"^bits\[1\] = 0x10000 is not a pattern of fp16 \(16 bits\)$"):
        from_patterns([1, 0x10000], "fp16")
    with pytest.raises(NotRepresentableError, match=r"^bits\[0, 1\] = -0x1 is not a pattern of e4m3"):
        from_patterns([[1, -1]], "e4m3")
    with pytest.raises(NotRepresentableError, match=r"^p\[1\] = 0x4780 is 65536\.0 in bf16, which dtype float16 cannot hold"):
        from_patterns([0x3F80, 0x4780], "bf16", dtype=np.float16, name="p")
    with pytest.raises(InputTypeError, match="dtype"):
        from_patterns([1], "bf16", dtype="no such dtype")


def test_input_types_and_shapes() -> None:
    assert to_patterns(np.array([1, 2, -3], dtype=np.int8), "fp16").tolist() == [0x3C00, 0x4000, 0xC200]  # values, not patterns
    assert to_patterns(np.array([0.5], dtype=np.float16), "e2m1").tolist() == [1]
    assert to_patterns(np.float32(0.1), "fp32").tolist() == 0x3DCCCCCD
    assert to_patterns(np.longdouble(1.5), "fp16").tolist() == 0x3E00
    assert to_patterns([[1, 2.5]], "bf16").tolist() == [[0x3F80, 0x4020]]
    assert to_patterns(3, "e2m1").tolist() == 0x5
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    out = to_patterns(x, "fp16")
    assert out.shape == (2, 3, 4) and np.array_equal(from_patterns(out, "fp16"), x)
    assert to_patterns(x[:, ::2, 1:], "fp32").shape == (2, 2, 3)  # non-contiguous input
    assert to_patterns(np.zeros((0, 5)), "e4m3").shape == (0, 5)
    assert from_patterns(np.zeros((0, 5), dtype=np.uint8), "e4m3").shape == (0, 5)


@pytest.mark.parametrize("fmt", ALL, ids=ids)
def test_dtypes(fmt: Format) -> None:
    assert pattern_dtype(fmt).itemsize * 8 == next(w for w in (8, 16, 32, 64) if w >= fmt.bits)
    native = {"fp16": np.float16, "fp32": np.float32, "tf32": np.float32, "e8m13": np.float32}
    assert value_dtype(fmt) == native.get(fmt.name, np.float64)


def test_from_patterns_dtype_argument() -> None:
    assert from_patterns([0x38, 0x01], "e4m3", dtype=np.float16).tolist() == [1.0, 2.0**-9]
    assert from_patterns([0x3C00], "fp16", dtype=np.float64).dtype == np.float64
    assert from_patterns([0x1FC00], "tf32", dtype=np.float64).tolist() == [1.0]
    assert from_patterns(np.array([1 << 63], dtype=np.uint64), "fp64").tolist() == [-0.0]


def test_torch_like_tensors_go_through_double() -> None:
    class Tensor:  # the duck type to_patterns expects from torch (torch itself is not installed here)
        __module__ = "torch"

        def __init__(self, a: np.ndarray) -> None:
            self.a = a

        def detach(self) -> Tensor:
            return self

        def cpu(self) -> Tensor:
            return self

        def is_floating_point(self) -> bool:
            return self.a.dtype.kind == "f"

        def double(self) -> Tensor:
            return Tensor(self.a.astype(np.float64))

        def numpy(self) -> np.ndarray:
            return self.a

    assert to_patterns(Tensor(np.array([1.0, 2.0], dtype=np.float32)), "fp16").tolist() == [0x3C00, 0x4000]
    assert to_patterns(Tensor(np.array([3])), "e2m1").tolist() == [0x5]


ML_NAMES = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
            "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "float8_e8m0fnu"]


@pytest.mark.parametrize("ml_name", ML_NAMES)
def test_ml_dtypes_inputs_and_outputs(ml_name: str) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    if not hasattr(ml_dtypes, ml_name):
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} has no {ml_name}")
    dt = np.dtype(getattr(ml_dtypes, ml_name))
    fmt = get_format(ml_name)  # the ml_dtypes spelling is an alias of the project's format
    bits = np.arange(1 << fmt.bits, dtype=np.uint64).astype(pattern_dtype(fmt))
    values = bits.view(dt)
    nan = formats.classify(fmt, bits) == formats.NAN
    got = to_patterns(values, fmt)
    assert np.array_equal(got[~nan], bits[~nan]) and (fmt.nan == "none" or (got[nan] == fmt.nan_bits()).all())
    back = from_patterns(bits, fmt, dtype=dt)
    assert back.dtype == dt and np.array_equal(back.view(bits.dtype)[~nan], bits[~nan])


@pytest.mark.parametrize("ml_name", [n for n in ML_NAMES])
def test_rne_matches_ml_dtypes(ml_name: str) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    if not hasattr(ml_dtypes, ml_name):
        pytest.skip(f"ml_dtypes has no {ml_name}")
    fmt = get_format(ml_name)
    x = _random_reals(20_000, 11, fmt)
    if not fmt.signed:  # ml_dtypes takes 0 and negatives to e8m0's NaN (to_patterns refuses them), and rounds
        x = np.abs(x[np.abs(x) >= 2.0**-126])  # float32 subnormals up: 0x1.006p-127 to 2**-126 (to_patterns: 2**-127)
    top = float(ml_dtypes.finfo(getattr(ml_dtypes, ml_name)).max)
    x = x[np.abs(x) <= top].astype(np.float32)  # ml_dtypes rounds float64 through float32 (twice: see below)
    assert x.size > 5_000  # overflow left out: ml_dtypes keeps the NaN's sign and saturates or not per type
    want = x.astype(getattr(ml_dtypes, ml_name)).view(np.uint8 if fmt.bits <= 8 else np.uint16)
    assert np.array_equal(to_patterns(x, fmt, round="rne"), want)
