"""simulate_dot / simulate_mma: the API contract, chaining, special values, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import smtmma
from smtmma.errors import InputError
from smtmma.formats import from_fraction as bits_of
from smtmma.models import parse_model_spec

H = lambda v: bits_of("fp16", v)  # noqa: E731
S = lambda v: bits_of("fp32", v)  # noqa: E731


def dot(arch: str, instr: str, a: list, b: list, c: int, op: str | None = None) -> int:
    return int(smtmma.simulate_dot(arch, instr, np.array([a], dtype=np.uint64), np.array([b], dtype=np.uint64), np.array([c], dtype=np.uint64), op=op)[0])


def test_returns_uint_arrays_of_the_output_width() -> None:
    a = np.full((3, 4), H(1), dtype=np.uint16)
    assert smtmma.simulate_dot("sm80", "f16f32", a, a, np.zeros(3, np.uint32)).dtype == np.uint32
    assert smtmma.simulate_dot("sm80", "f16f16", a, a, np.zeros(3, np.uint16)).dtype == np.uint16
    assert smtmma.simulate_dot("sm80", "f16f32", a, a, np.zeros(3, np.uint32)).tolist() == [S(4)] * 3


def test_model_object_instead_of_arch() -> None:
    m = smtmma.lookup("sm90", "f16f32").model.replace(F=23)
    a = [H(-(2**13)), H(-0.5), H(-0.25), H(-0.125)]
    b = [H(2**10), H(1), H(1), H(1)]
    assert smtmma.simulate_dot(m, None, np.array([a]), np.array([b]), np.array([S(2**23)]))[0] == S(0)


def test_short_k_is_padded_and_long_k_is_chained() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0x3000, 0x4400, size=(50, 3)).astype(np.uint16)
    b = rng.integers(0x3000, 0x4400, size=(50, 3)).astype(np.uint16)
    c = np.zeros(50, np.uint32)
    pad = lambda x: np.concatenate([x, np.zeros((50, 5), np.uint16)], axis=1)  # noqa: E731
    assert (smtmma.simulate_dot("sm80", "f16f32", a, b, c) == smtmma.simulate_dot("sm80", "f16f32", pad(a), pad(b), c)).all()
    # K = 16 on Ampere (L = 8) is two FDPAs: the second sees the first's FP32 result as c
    a16 = rng.integers(0x3000, 0x4400, size=(50, 16)).astype(np.uint16)
    first = smtmma.simulate_dot("sm80", "f16f32", a16[:, :8], a16[:, :8], c)
    both = smtmma.simulate_dot("sm80", "f16f32", a16, a16, c)
    assert (both == smtmma.simulate_dot("sm80", "f16f32", a16[:, 8:], a16[:, 8:], first)).all()


def test_simulate_mma_is_the_dot_products_of_rows_and_columns() -> None:
    rng = np.random.default_rng(5)
    A = rng.integers(0x3000, 0x4400, size=(16, 16)).astype(np.uint16)
    B = rng.integers(0x3000, 0x4400, size=(16, 8)).astype(np.uint16)
    C = np.zeros((16, 8), np.uint32)
    D = smtmma.simulate_mma("sm80", "f16f32", A, B, C)
    assert D.shape == (16, 8)
    assert D[3, 5] == smtmma.simulate_dot("sm80", "f16f32", A[3:4], B[:, 5][None, :], C[3, 5:6])[0]


def test_simulate_mma_rejects_shapes_the_instruction_lacks() -> None:
    A = np.zeros((16, 12), np.uint16)
    with pytest.raises(InputError, match="no shape m16n8k12; valid: m16n8k8, m16n8k16"):
        smtmma.simulate_mma("sm80", "f16f32", A, np.zeros((12, 8), np.uint16), np.zeros((16, 8), np.uint32))


@pytest.mark.parametrize(
    "a,b,c,fragment",
    [
        (np.zeros((2, 4)), np.zeros((2, 4)), np.zeros(2), r"a holds float64 values, not fp16 bit patterns: pass np.asarray\(a, np.float16\).view\(np.uint16\)"),
        (np.zeros((2, 4), np.uint16), np.zeros((2, 5), np.uint16), np.zeros(2, np.uint32), "same shape"),
        (np.zeros((2, 4), np.uint16), np.zeros((2, 4), np.uint16), np.zeros(3, np.uint32), "one value per dot product"),
        (np.full((1, 4), 0x10000, np.uint32), np.zeros((1, 4), np.uint16), np.zeros(1, np.uint32), "0x10000 has more bits than fp16"),
        (np.zeros(4, np.uint16), np.zeros(4, np.uint16), np.zeros(1, np.uint32), "2-D array"),
        (np.zeros((1, 0), np.uint16), np.zeros((1, 0), np.uint16), np.zeros(1, np.uint32), "K >= 1"),
    ],
)
def test_bad_input_is_a_clear_error(a, b, c, fragment: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match=fragment):
        smtmma.simulate_dot("sm80", "f16f32", a, b, c)


def test_block_scaled_needs_scales() -> None:
    a = np.zeros((1, 32), np.uint8)
    with pytest.raises(InputError, match="needs scale_a and scale_b"):
        smtmma.simulate_dot("sm100", "mxe4m3f32", a, a, np.zeros(1, np.uint32))
    with pytest.raises(InputError, match=r"scale_a must have shape \(1, 1\)"):
        smtmma.simulate_dot("sm100", "mxe4m3f32", a, a, np.zeros(1, np.uint32), scale_a=np.zeros((1, 2), np.uint8), scale_b=np.zeros((1, 1), np.uint8))


def test_block_scales_multiply_by_powers_of_two() -> None:
    a = np.full((1, 32), 0x38, np.uint8)  # e4m3 1.0
    out = smtmma.simulate_dot("sm100", "mxe4m3f32", a, a, np.zeros(1, np.uint32),
                              scale_a=np.array([[127 + 3]], np.uint8), scale_b=np.array([[127 - 1]], np.uint8))
    assert out[0] == S(32 * 4)


# -- special values (§4.2) ------------------------------------------------------------------------


def test_nvidia_nan_is_canonical() -> None:
    assert dot("sm80", "f16f32", [0x7E01, H(1)], [H(1), H(1)], S(0)) == 0x7FFFFFFF
    assert dot("sm80", "f16f16", [0x7C00, H(1)], [H(0), H(1)], H(0)) == 0x7FFF  # inf x 0
    assert dot("sm90", "e4m3f32", [0x7F], [0x38], S(0), op="wgmma") == 0x7FFFFFFF  # e4m3 NaN


def test_infinities() -> None:
    assert dot("sm80", "f16f32", [0x7C00, H(1)], [H(2), H(1)], S(5)) == 0x7F800000
    assert dot("sm80", "f16f32", [0x7C00, 0xFC00], [H(2), H(1)], S(0)) == 0x7FFFFFFF  # +inf - inf
    assert dot("sm80", "f16f32", [H(1)], [H(1)], 0xFF800000) == 0xFF800000
    # TR-FDPA: a product >= 2**128 overflows to infinity before the sum (§4.2)
    big = bits_of("bf16", 2**127)
    assert dot("gfx942", "bf16f32", [big, big], [bits_of("bf16", 2), bits_of("bf16", -2)], S(0)) == 0x7FC00000


def test_amd_nan_is_the_ieee_default() -> None:
    assert dot("gfx942", "f16f32", [0x7E00], [H(1)], S(0)) == 0x7FC00000
    assert dot("gfx908", "f32f32", [0x7FC00001], [S(1)], S(0)) == 0x7FC00000


def test_exact_zero_sums() -> None:
    # T-FDPA: an exact zero is +0 even when every input is -0 (docs/semantics.md)
    assert dot("sm80", "f16f32", [0x8000], [H(1)], 0x80000000) == 0
    # FMA: IEEE signs: (-0 * 1) + -0 = -0, 1*1 + -1 = +0
    assert dot("gfx90a", "f32f32", [0x80000000], [S(1)], 0x80000000) == 0x80000000
    assert dot("gfx90a", "f32f32", [S(1)], [S(1)], S(-1)) == 0


def test_cdna2_flushes_subnormal_inputs_and_results() -> None:
    sub = 0x0001  # smallest fp16 subnormal
    assert dot("gfx90a", "f16f32", [sub, 0, 0, 0], [H(2**14), 0, 0, 0], S(0)) == 0
    assert dot("gfx908", "f16f32", [sub, 0, 0, 0], [H(2**14), 0, 0, 0], S(0)) == S(2**-10)  # CDNA1 keeps it


def test_fp64_fma_chain_rounds_each_step() -> None:
    F = lambda v: bits_of("fp64", v)  # noqa: E731
    # 1 + 2^-53 rounds to 1 (tie to even), then + 2^-53 again: still 1
    assert dot("sm80", "f64f64", [F(1), F(1)], [F(2**-53), F(2**-53)], F(1)) == F(1)
    # fused: 3 * (1/3 rounded) + (-1) is the exact residual
    third = np.float64(1) / np.float64(3)
    resid = np.float64(float(__import__("fractions").Fraction(float(third)) * 3 - 1))
    assert dot("gfx942", "f64f64", [int(np.float64(third).view(np.uint64))], [F(3)], F(-1)) == int(resid.view(np.uint64))


def test_alignment_floor_cuts_bits_below_2_to_the_minus_158() -> None:
    # Two bf16 products that sum to exactly 2**-149 (the smallest fp32 subnormal), c = 0:
    #   t1 = 2**-149 * (1 - 2**-8)**2 = 2**-149 * (1 - 2**-7 + 2**-16),  t2 = 2**-156 * (1 - 2**-9).
    # Without a floor e_max ~ -150 and F = 25 keep every bit: RZ gives 2**-149 (bits 0x1).  Hopper aligns
    # at 2**-133 (003: "capped from below to -133"), cutting below 2**-158: the sum falls short -> +0.
    from fractions import Fraction as Fr

    B = lambda v: bits_of("bf16", v)  # noqa: E731
    a = [B((1 - Fr(1, 256)) * Fr(2) ** -75), B(Fr(7, 8) * Fr(2) ** -78)]
    b = [B((1 - Fr(1, 256)) * Fr(2) ** -74), B(Fr(73, 64) * Fr(2) ** -78)]
    assert dot("sm90", "bf16f32", a, b, S(0)) == 0x00000000
    assert dot("sm80", "bf16f32", a, b, S(0)) == 0x00000001  # Ampere: no floor documented
    free = smtmma.lookup("sm90", "bf16f32").model.replace(emax_floor=None)
    assert smtmma.simulate_dot(free, None, np.array([a]), np.array([b]), np.array([S(0)]))[0] == 0x00000001


@pytest.mark.parametrize("kind_spec", ["t-fdpa:ftz_inputs", "fma:ftz_inputs", "e-fdpa:ftz_inputs"])
def test_ftz_inputs_flushes_subnormal_inputs_of_any_kind(kind_spec: str) -> None:
    """2^-24 (the smallest fp16 subnormal) times 1 is 2^-24 in FP32, or +0 when the unit flushes inputs."""
    like = smtmma.lookup("sm70", "f16f32").model
    m = parse_model_spec(kind_spec, like=like)
    a, b = np.array([[0x0001]], dtype=np.uint16), np.array([[0x3C00]], dtype=np.uint16)
    c = np.array([0x00000000, 0x00000001], dtype=np.uint32)  # c: +0, and the smallest FP32 subnormal
    keep = smtmma.simulate_dot(m.replace(ftz_inputs=False), None, np.repeat(a, 2, 0), np.repeat(b, 2, 0), c)
    flush = smtmma.simulate_dot(m, None, np.repeat(a, 2, 0), np.repeat(b, 2, 0), c)
    assert keep[0] == 0x33800000 and list(flush) == [0, 0]
