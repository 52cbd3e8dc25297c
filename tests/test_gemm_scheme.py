"""Kernel schemes: matmul under promotion, split-K, epilogue alpha/beta and operand rounding equals, for every
instruction type, the instruction chained per output through simulate_dot with the scheme applied by an
independent reference in exact rationals (this file's own arithmetic, not smtmma.rounded's)."""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

import numpy as np
import pytest

import smtmma
from smtmma.arrays import from_patterns, to_patterns
from smtmma.catalogue import CATALOGUE
from smtmma.errors import InputError, UnknownNameError
from smtmma.formats import Format, carried_in, floor_log2, get_format
from smtmma.gemm import instruction_k
from smtmma.sampling import draw, draw_scales
from smtmma.scheme import PRESETS, Scheme, parse_scheme
from smtmma.simulate import simulate_dot



def _feeds_back(e: object) -> bool:
    """C and D share a format (a GEMM feeds D back as C)."""
    m = e.model  # type: ignore[attr-defined]
    return get_format(m.c_fmt).name == carried_in(m.d_fmt).name


#: One catalogue row per instruction type whose D feeds back as C.
ROWS = {e.instr: e for e in reversed(CATALOGUE) if _feeds_back(e)}


def rne(q: Fraction, fmt: Format) -> float:
    """q rounded to nearest, ties to even, in ``fmt`` (IEEE: subnormals, overflow to inf), as a float; q != 0."""
    v = round_ref(q, fmt, "rne")
    top = (2 - Fraction(2) ** -fmt.man_bits) * Fraction(2) ** fmt.emax
    return v if abs(Fraction(v)) <= top else (float("inf") if q > 0 else float("-inf"))


def exact_sum(terms: list[float], fmt: Format) -> float:
    """The sum of IEEE values ``terms`` rounded once to ``fmt`` (an exact zero: -0 only when every term is -0)."""
    if not all(np.isfinite(terms)):  # an infinity or NaN: IEEE's answer, which float64 gives
        with np.errstate(invalid="ignore"):
            return float(np.sum(np.array(terms, dtype=np.float64)))
    q = sum((Fraction(t) for t in terms), Fraction(0))
    if q == 0:
        return -0.0 if all(t == 0 and np.signbit(t) for t in terms) else 0.0
    return rne(q, fmt)


def ref_add(x: float, y: float, fmt: Format) -> float:
    return exact_sum([x, y], fmt)


def ref_fma(a: float, x: float, u: float, fmt: Format) -> float:
    if not all(np.isfinite([a, x, u])):
        with np.errstate(invalid="ignore"):
            return float(np.float64(a) * np.float64(x) + np.float64(u))
    p = Fraction(a) * Fraction(x)
    if p == 0:
        prod_zero = -0.0 if np.signbit(a) != np.signbit(x) else 0.0
        return exact_sum([prod_zero, u], fmt)
    q = p + Fraction(u)
    return rne(q, fmt) if q != 0 else 0.0


def chain(model: smtmma.Model, k: int, A: np.ndarray, B: np.ndarray, start: int, i: int, j: int, k0: int, k1: int,
          SA: Optional[np.ndarray], SB: Optional[np.ndarray], c_dtype: np.dtype) -> int:
    """D pattern of the instruction chained over K values k0..k1 of output (i, j), from accumulator ``start``."""
    n = -(-(k1 - k0) // k)
    a = np.zeros(n * k, np.int64 if A.dtype != np.uint64 else np.uint64)
    b = np.zeros(n * k, a.dtype)
    a[:k1 - k0], b[:k1 - k0] = A[i, k0:k1], B[k0:k1, j]
    d = start
    for s in range(n):
        kw = {}
        if SA is not None and SB is not None:
            per = k // (model.block or k)
            first = (k0 + s * k) // (model.block or k)
            idx = [min(first + t, SA.shape[1] - 1) for t in range(per)]
            kw = {"scale_a": SA[i, idx][None].astype(np.int64), "scale_b": SB[idx, j][None].astype(np.int64)}
        d = int(simulate_dot(model, None, a[None, s * k:(s + 1) * k], b[None, s * k:(s + 1) * k],
                             np.array([d], c_dtype), backend="numpy", **kw)[0])
    return d


def reference(model: smtmma.Model, k: int, A: np.ndarray, B: np.ndarray, C: np.ndarray, i: int, j: int, sch: Scheme,
              SA: Optional[np.ndarray], SB: Optional[np.ndarray]) -> int:
    """D pattern of output (i, j) under ``sch``, the scheme written out from smtmma.scheme's module doc."""
    fd = carried_in(model.d_fmt)
    wide = get_format("fp64" if fd.name == "fp64" else "fp32")
    cdt = np.uint64 if fd.bits == 64 else np.int64
    K = A.shape[1]
    n = -(-K // k)
    cuts = [s * n // sch.split_k * k for s in range(sch.split_k + 1)]
    epi = sch.c_in == "epilogue"
    val = lambda d: float(from_patterns(np.array([d], np.uint64), fd, dtype=np.float64)[0])  # noqa: E731
    partials = []
    for s in range(sch.split_k):
        a, b = cuts[s], min(K, cuts[s + 1])
        P = sch.promote_every or (b - a)
        acc: Optional[float] = None
        for t, c0 in enumerate(range(a, b, P)):
            start = int(C[i, j]) if (s == 0 and t == 0 and not epi) else 0
            d = chain(model, k, A, B, start, i, j, c0, min(b, c0 + P), SA, SB, cdt)
            if sch.promote_every is None:
                acc = val(d)
            else:
                acc = ref_add(0.0 if acc is None else acc, val(d), wide)
        partials.append(acc)
    if len(partials) > 1:
        pf = get_format(sch.partial)
        ps = [rne(Fraction(p), pf) if p != 0 and np.isfinite(p) else p for p in partials]  # type: ignore[arg-type]
        if sch.reduction == "sequential":
            x = ps[0]
            for p in ps[1:]:
                x = ref_add(x, p, pf)
        else:
            while len(ps) > 1:
                ps = [ref_add(ps[q], ps[q + 1], pf) if q + 1 < len(ps) else ps[q] for q in range(0, len(ps), 2)]
            x = ps[0]
    else:
        x = partials[0]
    if epi:
        alpha = rne(Fraction(sch.alpha), wide) if sch.alpha else 0.0
        beta = rne(Fraction(sch.beta), wide) if sch.beta else 0.0
        if beta == 0:
            x = ref_fma(alpha, x, -0.0, wide)
        else:
            x = ref_fma(alpha, x, ref_fma(beta, val(int(C[i, j])), -0.0, wide), wide)
    return int(to_patterns(np.array([x]), fd, round="rne")[0])


def schemes(k: int) -> list[Scheme]:
    return [
        Scheme(promote_every=2 * k),
        Scheme(split_k=3, partial="bf16", reduction="pairwise"),
        Scheme(split_k=2, partial="fp16", promote_every=k),
        Scheme(c_in="epilogue", alpha=-1.5, beta=0.75),
        Scheme(c_in="epilogue", alpha=3.0, beta=0.0),
        Scheme(split_k=4, c_in="epilogue", alpha=0.1, beta=1.0),
    ]


#: One catalogue row per model kind runs in CI's fast pass; -m slow runs every instruction type.
FAST = {e.model.kind: e for e in reversed(CATALOGUE) if _feeds_back(e)}
PARAMS = ([pytest.param(e, id=f"{e.arch}-{e.instr}") for e in FAST.values()]
          + [pytest.param(e, id=f"{e.arch}-{e.instr}", marks=pytest.mark.slow) for e in ROWS.values()])


@pytest.mark.parametrize("e", PARAMS)
def test_matmul_under_each_scheme_equals_the_reference(e: object) -> None:
    instr = e.instr
    model = e.model
    k = instruction_k(e.arch, instr, e.op)
    rng = np.random.default_rng(11)
    M, N, K = 2, 3, 5 * k + 3
    A = draw("normal", model.a_fmt, (M, K), rng)
    B = draw("normal", model.b_fmt, (K, N), rng)
    C = draw("dnn", model.c_fmt, (M, N), rng)
    SA = SB = None
    kw = {}
    if model.scale_fmt:
        nb = -(-K // (model.block or k))
        SA, SB = draw_scales("normal", model.scale_fmt, (M, nb), rng), draw_scales("normal", model.scale_fmt, (nb, N), rng)
        kw = {"scale_a": SA, "scale_b": SB}
    for sch in schemes(k):
        D = smtmma.matmul(e.arch, instr, A, B, C, op=e.op, bits=True, scheme=sch, backend="numpy", **kw)
        for i in range(M):
            for j in range(N):
                assert int(D[i, j]) == reference(model, k, A, B, C, i, j, sch, SA, SB), (instr, str(sch), i, j)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "tf32", "e4m3", "e5m2", "e3m2", "e2m1", "fp32"])
@pytest.mark.parametrize("mode", ["rne", "rna", "rz", "ru", "rd"])
def test_operand_rounding_modes_equal_exact_rounding(fmt: str, mode: str) -> None:
    f = get_format(fmt)
    rng = np.random.default_rng(4)
    top = float(from_patterns(np.array([f.max_exp_field << f.man_bits | ((1 << f.man_bits) - 1)]), f, dtype=np.float64)[0]) \
        if not f.has_inf else None
    x = rng.standard_normal(400) * 2.0 ** rng.integers(f.emin - f.man_bits - 2, 4, 400)
    grid = from_patterns(np.arange(1 << min(f.bits, 12), dtype=np.int64) % (1 << f.bits), f, dtype=np.float64)
    grid = grid[np.isfinite(grid)]
    mids = (grid[:-1] + grid[1:]) / 2  # ties, where they exist in float64
    x = np.concatenate([x, mids[np.isfinite(mids)][:300], -mids[np.isfinite(mids)][:300]])
    if top is not None:
        x = x[np.abs(x) <= top]
    got = from_patterns(to_patterns(x, f, round=mode), f, dtype=np.float64)
    for xi, gi in zip(x.tolist(), got.tolist()):
        assert gi == round_ref(Fraction(xi), f, mode), (fmt, mode, xi)


def round_ref(q: Fraction, f: Format, mode: str) -> float:
    """q rounded to ``f``'s precision and subnormal grid in ``mode``, exactly (no overflow check)."""
    if q == 0:
        return float(q)
    a = abs(q)
    ulp = Fraction(2) ** (max(floor_log2(a), f.emin) - f.man_bits)
    n = a / ulp
    fl = n.numerator // n.denominator
    rest = n - fl
    up = {"rne": rest > Fraction(1, 2) or (rest == Fraction(1, 2) and fl % 2 == 1),
          "rna": rest >= Fraction(1, 2), "rz": False,
          "ru": rest > 0 and q > 0, "rd": rest > 0 and q < 0}[mode]
    v = (fl + up) * ulp
    return float(v) if q > 0 else -float(v)


def test_tf32_1024_5_times_1_under_rna_and_rne() -> None:
    """pytorch#53635: 1024.5 * 1 gives 1025 when FP32 operands are rounded to TF32 ties away (cuBLAS), 1024 ties to even."""
    A, B = np.array([[1024.5]], np.float32), np.array([[1.0]], np.float32)
    assert smtmma.matmul("sm80", "tf32f32", A, B, scheme="cublas-tf32")[0, 0] == np.float32(1025.0)
    assert smtmma.matmul("sm80", "tf32f32", A, B, round="rne")[0, 0] == np.float32(1024.0)
    assert smtmma.matmul("sm80", "tf32f32", A, B, round="rz")[0, 0] == np.float32(1024.0)


def test_promotion_rescues_what_the_fp8_accumulator_drops() -> None:
    """Hopper e4m3 (F = 13): 2^-14 terms next to 1.0 vanish in the chain; promoted into FP32 every 128 elements, only
    the first chain (which holds the 1.0) loses them, and each other chain's 128 terms sum exactly to 2^-7."""
    K = 4096
    A = np.full((1, K), 2.0 ** -7)
    A[0, 0] = 1.0
    B = np.full((K, 1), 2.0 ** -7)
    B[0, 0] = 1.0
    plain = smtmma.matmul("sm90", "e4m3e4m3f32", A, B)[0, 0]
    promoted = smtmma.matmul("sm90", "e4m3e4m3f32", A, B, scheme="deepgemm")[0, 0]
    assert plain == np.float32(1.0)
    assert promoted == np.float32(1.0 + (K // 128 - 1) * 2.0 ** -7)


def test_scheme_refusals_name_the_field() -> None:
    A, B = np.ones((1, 40), np.float16), np.ones((40, 1), np.float16)
    with pytest.raises(InputError, match="promote_every=8 is not a multiple of the instruction's k \\(16\\)"):
        smtmma.matmul("sm90", "f16f32", A, B, scheme=Scheme(promote_every=8))
    with pytest.raises(InputError, match="split_k=41 is larger than K = 40"):
        smtmma.matmul("sm90", "f16f32", A, B, scheme=Scheme(split_k=41))
    with pytest.raises(InputError, match="split_k=4 is more than the 3 instructions along K"):
        smtmma.matmul("sm90", "f16f32", A, B, scheme=Scheme(split_k=4))
    with pytest.raises(InputError, match="promote_every must be None or a positive int"):
        Scheme(promote_every=0)
    with pytest.raises(InputError, match="partial must be one of 'fp32', 'bf16', 'fp16', got 'fp8'"):
        parse_scheme("split_k=2,partial=fp8")
    with pytest.raises(UnknownNameError, match="unknown scheme preset 'deepgem'; valid: deepgemm"):
        parse_scheme("deepgem")
    with pytest.raises(InputError, match="need c_in='epilogue'"):
        Scheme(alpha=2.0)
    with pytest.raises(InputError, match="disagree"):
        smtmma.matmul("sm90", "f16f32", A, B, round="rz", scheme="cublas-tf32")
    assert parse_scheme("deepgemm,split_k=2").spec() == "promote_every=128,split_k=2"
    assert all(isinstance(s, Scheme) for s in PRESETS.values())


def _blocks_reference(x: np.ndarray, elem: str, scale: str, block: int, rule: str) -> tuple[list[int], list[int]]:
    """Element and scale patterns of one row by the rule's text, in exact rationals."""
    fe, fs = get_format(elem), get_format(scale)
    top = Fraction(float(from_patterns(np.array([fe.max_exp_field << fe.man_bits | (fe.max_sig & ((1 << fe.man_bits) - 1))]),
                                       fe, dtype=np.float64)[0]))
    elems, scales = [], []
    for b0 in range(0, len(x), block):
        vals = [Fraction(float(v)) for v in x[b0:b0 + block]]
        amax = max(abs(v) for v in vals)
        if rule == "ocp-mx":
            e = floor_log2(amax) - fe.emax if amax else fs.emin
            s = Fraction(2) ** min(max(e, fs.emin), fs.emax)
        else:
            every = from_patterns(np.arange(1 << fs.bits), fs, dtype=np.float64)
            every = every[np.isfinite(every) & (every > 0)]
            largest, smallest = Fraction(float(every.max())), Fraction(float(every.min()))
            s = Fraction(round_ref(min(amax / top, largest), fs, "rne")) if amax else Fraction(0)
            s = max(s, smallest)
        scales.append(int(to_patterns(np.array([float(s)]), fs)[0]))
        for v in vals:
            q = v / s
            q = max(-top, min(top, q))
            elems.append(int(to_patterns(np.array([round_ref(q, fe, "rne")]), fe)[0]))
    return elems, scales


@pytest.mark.parametrize("elem, scale, block, rule", [("e4m3", "ue8m0", 32, "ocp-mx"), ("e5m2", "ue8m0", 32, "ocp-mx"),
                                                      ("e2m1", "ue8m0", 32, "ocp-mx"), ("e3m2", "ue8m0", 32, "ocp-mx"),
                                                      ("e2m1", "ue4m3", 16, "amax"), ("e4m3", "ue8m0", 32, "amax")])
def test_block_quantization_follows_its_rule(elem: str, scale: str, block: int, rule: str) -> None:
    from smtmma.quantize import quantize_blocks

    rng = np.random.default_rng(9)
    x = rng.standard_normal((6, 70)) * 2.0 ** rng.integers(-20, 20, (6, 1))
    x[1, :32] = 0.0  # a block of zeros
    x[2, 5] = 1e4  # an outlier that sets its block's scale
    e, s = quantize_blocks(x, elem, scale, block, rule)
    for r in range(x.shape[0]):
        want_e, want_s = _blocks_reference(x[r], elem, scale, block, rule)
        assert e[r].tolist() == want_e and s[r].tolist() == want_s, (elem, rule, r)


def test_matmul_quantizes_real_blocks_as_the_scheme_says() -> None:
    from smtmma.quantize import quantize_blocks

    rng = np.random.default_rng(10)
    A, B = rng.standard_normal((3, 64)), rng.standard_normal((64, 2))
    ea, sa = quantize_blocks(A, "e2m1", "ue4m3", 16, "amax")
    eb, sb = quantize_blocks(B.T, "e2m1", "ue4m3", 16, "amax")
    want = smtmma.matmul("sm100", "nvf4f32", ea, eb.T, bits=True, scale_a=sa, scale_b=sb.T)
    got = smtmma.matmul("sm100", "nvf4f32", A, B, scheme=Scheme(block_scale="amax"))
    assert np.array_equal(got.view(np.uint32), want)
    with pytest.raises(InputError, match="block_scale='ocp-mx' or 'amax' to quantize"):
        smtmma.matmul("sm100", "mxe4m3f32", A, B)
    with pytest.raises(InputError, match="takes power-of-two scales"):
        smtmma.matmul("sm100", "nvf4f32", A, B, scheme="block_scale=ocp-mx")
    with pytest.raises(InputError, match="takes no scales"):
        smtmma.matmul("sm90", "f16f32", A, B, scheme="block_scale=amax")


@pytest.mark.parametrize("fmt", ["fp32", "bf16", "fp16", "fp64"])
def test_rounded_adds_and_fmas_equal_exact_rounding(fmt: str) -> None:
    """smtmma.rounded's sums (binary32 then RNE; TwoSum and round-to-odd) against this file's rationals."""
    from smtmma.rounded import add_rounded, fma_rounded

    f = get_format(fmt)
    rng = np.random.default_rng(12)
    n = 3000
    lo, hi = max(f.emin - f.man_bits, -1060), min(f.emax, 1000)
    x = from_patterns(to_patterns(rng.standard_normal(n) * 2.0 ** rng.integers(lo, hi, n), f, round="rne"), f,
                      dtype=np.float64)
    y = from_patterns(to_patterns(rng.standard_normal(n) * 2.0 ** rng.integers(lo, hi, n), f, round="rne"), f,
                      dtype=np.float64)
    y[:300] = -x[:300]  # exact zeros
    y[300:600] = x[300:600] * 2.0 ** -(f.man_bits + 1)  # ties
    got = add_rounded(x, y, f)
    a = 0.75 if fmt != "fp64" else 0.1
    got_fma = fma_rounded(a, x, y, f)
    for i in range(n):
        want_add = ref_add(float(x[i]), float(y[i]), f)
        assert got[i] == want_add and np.signbit(got[i]) == np.signbit(want_add), (i, x[i], y[i])
        want = ref_fma(a, float(x[i]), float(y[i]), f)
        assert got_fma[i] == want and np.signbit(got_fma[i]) == np.signbit(want), (i, x[i], y[i])
