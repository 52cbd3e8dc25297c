"""Compiled kernels whose terms need more than 128 bits (multi-limb C integers) agree bit for bit with NumPy.

The three catalogue models with such terms: sm80 FP64 FMA (a 163-bit window) and the gfx908 E-FDPA
exact sums (FP16: 304 bits, BF16: 552 bits).  Each compiled
kernel is compared with :func:`smtmma.simulate.simulate_dot` on random patterns (infinities, NaN,
subnormals), finite values of every magnitude with exact cancellations, and hand-picked rows; the wide
helpers themselves are checked against Python integers through a small generated function.
"""

from __future__ import annotations

import ctypes
from typing import Iterator, Optional

import numpy as np
import pytest

from smtmma.catalogue import CATALOGUE, lookup
from smtmma.encodings.algebra import Int
from smtmma.encodings.ccode import CAlgebra
from smtmma.formats import Format, carried_in, get_format
from smtmma.models import Model
from smtmma.native import build
from smtmma.native.kernels import kernel, np_uint
from smtmma.native.source import kernel_source
from smtmma.simulate import simulate_dot

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")

#: (arch, instr, K): K the instruction's k (FMA: four chained FMAs; E-FDPA: two chained FDPAs of L terms).
#: (gfx908 f32f32's FP32 FMA fits __int128 since the adder's sticky test knows (x >> k) << k <= x.)
WIDE = [("sm80", "f64f64", 4), ("sm90", "f64f64", 4), ("gfx908", "f16f32", 8), ("gfx908", "bf16f32", 4)]
ROWS = 20000


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Build into a fresh cache: the test compiles, never reuses a stale shared object."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SMTMMA_CACHE", str(tmp_path_factory.mktemp("kernels")))
    yield
    mp.undo()


def _model(arch: str, instr: str) -> Model:
    return lookup(arch, instr).model


def _formats(m: Model) -> tuple[Format, Format, Format, Format]:
    fa, fb, fc, fd = (get_format(getattr(m, f)) for f in ("a_fmt", "b_fmt", "c_fmt", "d_fmt"))
    return fa, fb, fc, carried_in(fd)


def _run(m: Model, K: int, A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    """D patterns of the compiled kernel for (N, K) pattern arrays A, B and (N,) C."""
    fa, fb, fc, fd = _formats(m)
    a = np.ascontiguousarray(A, dtype=np_uint(fa.bits))  # row major: a[i * K + k]
    b = np.ascontiguousarray(B, dtype=np_uint(fb.bits))
    c = np.ascontiguousarray(C, dtype=np_uint(fc.bits))
    d = np.zeros(len(c), dtype=np_uint(fd.bits))
    kernel(m, K).rows(len(c), a.ctypes.data, K, b.ctypes.data, K, c.ctypes.data, d.ctypes.data, None, 0, None, 0)
    return d


def _agree(m: Model, K: int, A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The compiled D after asserting it equals simulate_dot's on every row."""
    got, want = _run(m, K, A, B, C), simulate_dot(m, None, A, B, C)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{bad.size} rows differ; first: a={A[bad[0]].tolist()} b={B[bad[0]].tolist()} "
                           f"c={int(C[bad[0]])} native={int(got[bad[0]]):#x} numpy={int(want[bad[0]]):#x}")
    return got


# -- inputs ---------------------------------------------------------------------
def _pattern(fmt: Format, neg: bool, field: np.ndarray | int, man: np.ndarray | int) -> np.ndarray:
    """Patterns from sign, biased exponent field and fraction (object ints: exact for 64-bit formats)."""
    f = np.asarray(field, dtype=object) << fmt.man_bits
    return np.asarray((fmt.sign_mask if neg else 0) | f | np.asarray(man, dtype=object), dtype=np.uint64)


def _random_bits(fmt: Format, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Uniform bit patterns (infinities and NaN included)."""
    return rng.integers(0, 1 << fmt.bits, size=shape, dtype=np.uint64)


def _finite(fmt: Format, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Finite patterns: exponents over the whole range, a tenth subnormal or zero, a tenth with fraction 0."""
    field = rng.integers(0, fmt.max_exp_field + 1, size=shape)
    field = np.where(rng.random(shape) < 0.1, 0, field)
    man = rng.integers(0, 1 << fmt.man_bits, size=shape, dtype=np.uint64).astype(object)
    man = np.where(rng.random(shape) < 0.1, 0, man)
    sign = rng.integers(0, 2, size=shape).astype(object) << (fmt.bits - 1)
    return np.asarray(sign | (field.astype(object) << fmt.man_bits) | man, dtype=np.uint64)


def _cancelling(m: Model, K: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite rows where lane 1 is (-a_0, b_0): a_0 b_0 cancels exactly; later lanes tiny (exponent field < 4)."""
    fa, fb, fc, _ = _formats(m)
    A, B, C = _finite(fa, (ROWS, K), rng), _finite(fb, (ROWS, K), rng), _finite(fc, (ROWS,), rng)
    A[:, 1], B[:, 1] = A[:, 0] ^ np.uint64(fa.sign_mask), B[:, 0]
    for x, f in ((A, fa), (B, fb)):
        man = x[:, 2:] & np.uint64((1 << f.man_bits) - 1)
        low = rng.integers(0, 4, size=man.shape).astype(np.uint64) << np.uint64(f.man_bits)
        x[:, 2:] = (x[:, 2:] & np.uint64(f.sign_mask)) | low | man
    return A, B, C


# -- the three models against NumPy ----------------------------------------------------
@pytest.mark.parametrize("arch,instr,K", WIDE, ids=[f"{a}-{i}-K{k}" for a, i, k in WIDE])
def test_wide_kernel_matches_numpy(arch: str, instr: str, K: int) -> None:
    m = _model(arch, instr)
    assert kernel_source(m, K).max_width > 128  # the multi-limb path is what runs
    fa, fb, fc, _ = _formats(m)
    rng = np.random.default_rng(sum(map(ord, arch + instr)))
    _agree(m, K, _random_bits(fa, (ROWS, K), rng), _random_bits(fb, (ROWS, K), rng), _random_bits(fc, (ROWS,), rng))
    _agree(m, K, _finite(fa, (ROWS, K), rng), _finite(fb, (ROWS, K), rng), _finite(fc, (ROWS,), rng))
    _agree(m, K, *_cancelling(m, K, rng))


def _pow2(fmt: Format, e: int, neg: bool = False) -> Optional[int]:
    """Pattern of (-1)**neg * 2**e if it is a normal number of ``fmt``, else None."""
    field = e + fmt.bias
    return int(_pattern(fmt, neg, field, 0)) if 1 <= field <= fmt.max_exp_field else None


def _max(fmt: Format, neg: bool = False) -> int:
    return int(_pattern(fmt, neg, fmt.max_exp_field, (1 << fmt.man_bits) - 1))


def _edge_rows(m: Model, K: int) -> list[tuple[list[int], list[int], int, Optional[int]]]:
    """(a, b, c, expected D or None): overflow by a tie at the largest finite C, exact zeros and their signs."""
    fa, fb, fc, fd = _formats(m)
    pz, nz, one, one_b = 0, fa.sign_mask, _pow2(fa, 0), _pow2(fb, 0)
    rows: list[tuple[list[int], list[int], int, Optional[int]]] = []
    half_ulp = fc.emax - fc.man_bits - 1  # c = max + 2**half_ulp is a tie; max is odd: rounds to inf
    for neg in (False, True):
        ea = min(fa.emax, half_ulp - fb.emin)
        a0, b0 = _pow2(fa, ea, neg), _pow2(fb, half_ulp - ea)
        if a0 is not None and b0 is not None:
            rows.append(([a0] + [pz] * (K - 1), [b0] + [0] * (K - 1), _max(fc, neg), fd.inf_bits(neg)))
            below = int(a0) - 1 if not neg else int(a0) + (1 << fa.man_bits) - 1  # just under the tie (or over)
            rows.append(([below] + [pz] * (K - 1), [b0] + [0] * (K - 1), _max(fc, neg), None))
        rows.append(([_max(fa, neg)] * K, [_max(fb)] * K, _max(fc, neg), None))  # the largest products on top
    x = _pow2(fa, 3)
    c_x = _pow2(fc, 3, True)  # 2**3 * 1 - 2**3 = +0 exactly
    rows.append(([x] + [pz] * (K - 1), [one_b] + [0] * (K - 1), c_x, 0))
    rows.append(([nz] * K, [0] * K, fc.sign_mask, fd.sign_mask))  # every term -0: -0
    rows.append(([pz] * K, [fb.sign_mask] * K, 0, 0))  # -0 products with +0: +0
    rows.append(([one, one ^ nz] + [pz] * (K - 2), [one_b, one_b] + [0] * (K - 2), fc.sign_mask, 0))  # 1 - 1 - 0: +0
    tiny_c = 1  # the smallest subnormal C, plus products far below it
    rows.append(([1] * K, [1 | fb.sign_mask] * K, tiny_c, None))
    rows.append(([1] * K, [1] * K, tiny_c | fc.sign_mask, None))
    return rows


@pytest.mark.parametrize("arch,instr,K", WIDE, ids=[f"{a}-{i}-K{k}" for a, i, k in WIDE])
def test_wide_kernel_edge_rows(arch: str, instr: str, K: int) -> None:
    m = _model(arch, instr)
    rows = _edge_rows(m, K)
    A = np.array([r[0] for r in rows], dtype=np.uint64)
    B = np.array([r[1] for r in rows], dtype=np.uint64)
    C = np.array([r[2] for r in rows], dtype=np.uint64)
    got = _agree(m, K, A, B, C)
    for (_, _, _, want), d in zip(rows, got.tolist()):
        if want is not None:
            assert d == want, (rows, got)


def test_wide_models_are_the_listed_ones() -> None:
    """Every catalogue model whose kernel needs terms over 128 bits is in WIDE (so it is tested above)."""
    seen: dict[Model, tuple[str, str]] = {}
    for e in CATALOGUE:
        seen.setdefault(e.model, (e.arch, e.instr))
    wide = {seen[m] for m in seen if kernel_source(m, m.L or 1).max_width > 128}
    assert wide == {(a, i) for a, i, _ in WIDE}


def test_narrow_kernel_has_no_wide_helpers() -> None:
    """Models whose terms fit __int128 keep the plain C integer code (no prelude)."""
    src = kernel_source(_model("sm90", "f16f32"), 16)
    assert src.max_width <= 128 and "wide" not in src.text


# -- the helpers themselves -----------------------------------------------------
_I64 = (-(1 << 63), (1 << 63) - 1)
_LIMBS = (0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1)


def _compose(alg: CAlgebra, base: int) -> Int:
    """A 192-bit term from inputs base..base+2 (low, middle limb unsigned; top limb signed)."""
    lo, mid, top = (alg.input(f"in[{base + j}]", *_I64) for j in range(3))
    return alg.add(alg.add(alg.shl(top, 128), alg.shl(alg.low_bits(mid, 64), 64)), alg.low_bits(lo, 64))


def _limbs(x: int) -> list[int]:
    return [((x >> (64 * j)) + (1 << 63)) % (1 << 64) - (1 << 63) for j in range(3)]


@pytest.fixture(scope="module")
def helper_case() -> tuple[dict[str, Int], ctypes.CDLL, int]:
    """(the named result terms, the compiled ``check(in, out)``, output words per row)."""
    alg = CAlgebra()
    x, y = _compose(alg, 0), _compose(alg, 3)
    k = alg.input("in[6]", 0, 260)  # shift amounts past the width: shr gives 0 or -1
    s = alg.input("in[7]", *_I64)
    big = (1 << 150) + 12345  # a constant wider than __int128
    terms = {
        "add": alg.add(x, y), "sub": alg.sub(x, y), "mul": alg.mul(x, s), "mulxy": alg.mul(x, y),
        "shl": alg.shl(x, alg.min(k, 70)), "shl64": alg.shl(s, k), "shr": alg.shr(x, k), "const": alg.sub(x, big),
        "bitlen": alg.bit_length(alg.abs(x)), "lt": alg.b2i(alg.lt(x, y)), "eq": alg.b2i(alg.eq(x, y)),
        "neg": alg.b2i(alg.lt(x, 0)), "low150": alg.low_bits(x, 150), "low100": alg.low_bits(x, 100),
        "max": alg.max(x, y), "min": alg.min(x, y), "ite": alg.ite(alg.eq(alg.low_bits(s, 1), 0), x, alg.neg(y)),
    }
    lines, words = [], 0
    for t in terms.values():
        for j in range(-(-t.width // 64) + 1):  # 64-bit words, one past the sign
            lines.append(f"out[{words}] = (uint64_t)({alg.expr(alg.low_bits(alg.shr(t, 64 * j), 64), 128)});")
            words += 1
    body = "\n    ".join(alg.lines + lines)
    text = f"#include <stdint.h>\n{alg.prelude()}void check(const int64_t *in, uint64_t *out)\n{{\n    {body}\n}}\n"
    assert {3, 4, 5, 6} <= alg.wide_limbs
    lib = build.load(text)
    lib.check.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return terms, lib, words


def _expected(x: int, y: int, k: int, s: int) -> dict[str, int]:
    return {
        "add": x + y, "sub": x - y, "mul": x * s, "mulxy": x * y, "shl": x << min(k, 70), "shl64": s << k, "shr": x >> k,
        "const": x - (1 << 150) - 12345, "bitlen": abs(x).bit_length(), "lt": int(x < y), "eq": int(x == y),
        "neg": int(x < 0), "low150": x % (1 << 150), "low100": x % (1 << 100), "max": max(x, y), "min": min(x, y),
        "ite": x if s % 2 == 0 else -y,
    }


def test_wide_helpers_match_python_ints(helper_case: tuple[dict[str, Int], ctypes.CDLL, int]) -> None:
    terms, lib, words = helper_case
    rng = np.random.default_rng(7)
    cases = []
    for i in range(400):
        limbs = [_LIMBS[int(rng.integers(len(_LIMBS)))] if rng.random() < 0.4 else int(rng.integers(0, 1 << 64, dtype=np.uint64))
                 for _ in range(6)]
        x = limbs[0] | limbs[1] << 64 | limbs[2] << 128
        x -= (x >> 191) << 192  # a signed 192-bit value
        y = x if i % 5 == 0 else (limbs[3] | limbs[4] << 64 | limbs[5] << 128) - ((limbs[5] >> 63) << 192)
        cases.append((x, y, int(rng.integers(0, 261)), int(rng.integers(*_I64, endpoint=True))))
    inp = np.array([_limbs(x) + _limbs(y) + [k, s] for x, y, k, s in cases], dtype=np.int64)
    out = np.zeros(words, dtype=np.uint64)
    for row, (x, y, k, s) in zip(inp, cases):  # one call per case: in[0..7] in, every term's words out
        lib.check(row.ctypes.data, out.ctypes.data)
        want, w = _expected(x, y, k, s), 0
        for name, t in terms.items():
            n = -(-t.width // 64) + 1
            got = sum(int(v) << (64 * j) for j, v in enumerate(out[w:w + n].tolist()))
            w += n
            assert got == want[name] % (1 << (64 * n)), (name, x, y, k, s)
