"""fma(nominal_product=True) -- the product placed at e_a + e_b unnormalized -- gives the bits of the normalized FMA."""

from __future__ import annotations

import numpy as np
import pytest

from smtmma.encodings.concrete import NumpyAlgebra
from smtmma.encodings.fields import unpack
from smtmma.encodings.fma import fma
from smtmma.formats import get_format

MODES = ["rne", "rz", "ru", "rd"]


def _patterns(rng: np.random.Generator, fmt: str, n: int) -> np.ndarray:
    """Random bit patterns of ``fmt``, a third of them with a zero exponent field (subnormals, zeros)."""
    f = get_format(fmt)
    x = rng.integers(0, 1 << f.bits, n, dtype=np.uint64)
    sub = rng.random(n) < 1 / 3
    x[sub] &= np.uint64((1 << (f.bits - 1)) | ((1 << f.man_bits) - 1))
    return x


def _both(fa: str, fc: str, mode: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(normalized, nominal) FMA bits of ``fc`` for the rows a, b (format fa) and c (format fc)."""
    alg = NumpyAlgebra()
    f_a, f_c = get_format(fa), get_format(fc)
    ua = unpack(alg, f_a, alg.input(a.astype(np.int64), 0, (1 << f_a.bits) - 1))
    ub = unpack(alg, f_a, alg.input(b.astype(np.int64), 0, (1 << f_a.bits) - 1))
    uc = unpack(alg, f_c, alg.input(c.astype(np.int64), 0, (1 << f_c.bits) - 1))
    return tuple(alg.value(fma(alg, ua, ub, uc, out=f_c, mode=mode, nominal_product=nom), a.size)  # type: ignore[return-value]
                 for nom in (False, True))


def _value(fa: str, x: np.ndarray) -> np.ndarray:
    """float64 values of the ``fa`` patterns x (exact)."""
    if fa == "bf16":
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if fa == "fp16":
        return x.astype(np.uint16).view(np.float16).astype(np.float64)
    return x.astype(np.uint32).view(np.float32).astype(np.float64)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fa", ["fp16", "bf16", "fp32"])
def test_nominal_product_gives_the_same_bits(fa: str, mode: str) -> None:
    """Four kinds of rows: random a, b (a third subnormal or zero) and c; products with many leading zeros (a
    subnormal a of 1-4 significant bits, b too in half of them) against a random-significand c within a few binades;
    c = -(a*b) nudged by -2..2 ulps (cancellation); a*b a power of two at the very bottom of the product's bits and
    c of the other sign one or two binades below it, where the sum's guard bit is the window's lowest bit."""
    rng = np.random.default_rng(11)
    n, f = 8000, get_format(fa)
    kind = np.arange(n) % 4
    a, b, c = _patterns(rng, fa, n), _patterns(rng, fa, n), _patterns(rng, "fp32", n)
    sign = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(f.bits - 1)
    tiny = rng.integers(1, 16, n).astype(np.uint64) | sign
    power = (np.uint64(1) << rng.integers(0, 3, n).astype(np.uint64)) | sign
    a = np.select([kind == 1, kind == 3], [tiny, power], a)
    b = np.select([(kind == 1) & (np.arange(n) % 8 == 1), kind == 3], [np.roll(tiny, 1), np.roll(power, 1)], b)
    with np.errstate(all="ignore"):
        ab = _value(fa, a) * _value(fa, b)
        lead = np.floor(np.log2(np.abs(ab), where=ab != 0, out=np.zeros(n))).astype(np.int64)
        offset = np.where(kind == 3, rng.integers(-2, 0, n), rng.integers(-3, 4, n))
        field = np.clip(lead + offset + 127, 1, 254).astype(np.uint64)
        csign = np.where(kind == 3, (ab > 0).astype(np.uint64), rng.integers(0, 2, n).astype(np.uint64))
        near = (csign << np.uint64(31)) | (field << np.uint64(23)) | rng.integers(0, 1 << 23, n).astype(np.uint64)
        cancel = (-ab).astype(np.float32).view(np.uint32).astype(np.int64) + rng.integers(-2, 3, n)
    finite = np.isfinite(ab) & (ab != 0)
    c = np.where(((kind == 1) | (kind == 3)) & finite, near, c)
    c = np.where((kind == 2) & finite & (cancel >= 0) & (cancel < 1 << 32), cancel.astype(np.uint64), c)
    normalized, nominal = _both(fa, "fp32", mode, a, b, c)
    bad = np.nonzero(normalized != nominal)[0]
    assert bad.size == 0, [(hex(int(a[i])), hex(int(b[i])), hex(int(c[i]))) for i in bad[:5]]


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_nominal_product_is_the_same_fma_on_every_input(mode: str) -> None:
    """The same for every FP16 a, b and FP32 c, proved by bitwuzla (313-370 s per mode, two at a time on 2 cores)."""
    from smtmma.proofs.claims_smt_paper import ieee_sum, sm70_f16f32
    from smtmma.proofs.hypotheses import Hyp, ask

    nominal = ieee_sum(mode, nominal=True)
    f = ask("normalized FMA != nominal FMA", sm70_f16f32(), 1,
            [ieee_sum(mode), Hyp("nominal", nominal.fmt, nominal.fn)],
            lambda alg, x, o: [alg.not_(alg.eq(o[f"ieee-{mode}"], o["nominal"]))], solver="bitwuzla", timeout=900,
            proof=True)
    assert f.verdict == "unsat"
