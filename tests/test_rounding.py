"""The rounding funnel against independent oracles (NumPy's correctly rounded casts, exact fractions)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from smtmma import formats
from smtmma.encodings.concrete import NumpyAlgebra
from smtmma.encodings.rounding import round_pack
from smtmma.formats import get_format


def _round(fmt_name: str, mode: str, x: np.ndarray) -> np.ndarray:
    """round_pack applied to float64 values (exact: sig * 2**(exp - 52))."""
    alg = NumpyAlgebra()
    sign, exp, sig = formats.decode("fp64", x.view(np.uint64))
    fmt = get_format(fmt_name)
    out = round_pack(
        alg, fmt, mode,
        alg.input(sign.astype(np.int64), 0, 1).eq(1),
        alg.input(sig.astype(np.int64), 0, (1 << 53) - 1),
        alg.input(exp - 52, -1074, 971),
    )
    return alg.value(out, x.size)


def _doubles(n: int, lo: int, hi: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(1, 2, n) * 2.0 ** rng.integers(lo, hi, n) * rng.choice([-1.0, 1.0], n)
    # add exact ties and values a few ulps of the target away
    return x


@pytest.mark.parametrize("fmt,dt,ut,lo,hi", [("fp32", np.float32, np.uint32, -160, 130), ("fp16", np.float16, np.uint16, -30, 17)])
def test_rne_matches_numpy_casts(fmt: str, dt: type, ut: type, lo: int, hi: int) -> None:
    x = _doubles(20000, lo, hi, 7)
    m = get_format(fmt).man_bits
    ties = (np.round(x * 2.0 ** (m + 3)) + 0.5) / 2.0 ** (m + 3)  # halfway cases at various exponents
    x = np.concatenate([x, ties])
    with np.errstate(over="ignore"):
        want = x.astype(dt).view(ut)
    got = _round(fmt, "rne", x)
    assert (got.astype(ut) == want).all()


@pytest.mark.parametrize("mode", ["rz", "rd", "ru"])
def test_directed_modes_match_exact_fractions(mode: str) -> None:
    x = _doubles(3000, -152, 126, 11)
    got = _round("fp32", mode, x)
    for v, g in zip(x, got):
        exact = Fraction(float(v))
        r = formats.to_fraction("fp32", int(g))
        if isinstance(r, str):  # overflow: infinity in every mode (docs/semantics.md)
            assert abs(exact) >= Fraction(2) ** 128 - Fraction(2) ** 103
            continue
        ulp_exp = max(int(np.floor(np.log2(abs(float(v))))), -126) - 23
        assert abs(r - exact) < Fraction(2) ** ulp_exp
        if mode == "rz":
            assert abs(r) <= abs(exact)
        elif mode == "rd":
            assert r <= exact
        else:
            assert r >= exact


def test_e8m13_is_truncated_fp32_in_an_fp32_container() -> None:
    x = np.array([1 + 2.0**-13 + 2.0**-14, -(1 + 2.0**-12), 2.0**-130 * 1.75, 2.0**-140 * 1.75])
    got = _round("e8m13", "rz", x)
    assert [hex(int(g)) for g in got] == ["0x3f800400", "0xbf800800", "0xe0000", "0x0"]


def test_overflow_gives_infinity_and_subnormals_round() -> None:
    got = _round("fp16", "rne", np.array([65520.0, 65519.0, 2.0**-25, 2.0**-25 * 1.5, -(2.0**-26)]))
    assert got.tolist() == [0x7C00, 0x7BFF, 0x0000, 0x0001, 0x8000]
