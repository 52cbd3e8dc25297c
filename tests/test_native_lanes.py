"""The lane-parallel interpretation (encodings/cvector.py, native/lanes.py): its helpers, and groups mixing special lanes."""

from __future__ import annotations

import ctypes
import numpy as np
import pytest

from smtmma.catalogue import lookup
from smtmma.encodings.cvector import vector_prelude
from smtmma.gemm import matmul
from smtmma.native import build
from smtmma.native.source import kernel_source
from smtmma.simulate import simulate_dot

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def _bit_lengths(values: list[int], helper: str) -> list[int]:
    """bit lengths of ``values`` through the generated vector helper ``helper`` (vbl53 or vbl64), 8 lanes."""
    text = "#include <stdint.h>\n" + vector_prelude(8) + f"""
void run(const int64_t *x, int64_t *out, int64_t n)
{{
    for (int64_t i = 0; i + 8 <= n; i += 8) {{
        v64 v;
        __builtin_memcpy(&v, x + i, sizeof v);
        const v64 r = {helper}(v);
        __builtin_memcpy(out + i, &r, sizeof r);
    }}
}}
"""
    fn = build.load(text).run
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    x = np.array(values + [0] * (-len(values) % 8), dtype=np.int64)
    out = np.zeros_like(x)
    fn(x.ctypes.data, out.ctypes.data, len(x))
    return out[:len(values)].tolist()


def test_bit_length_helpers_are_exact_at_every_power_of_two() -> None:
    small = sorted({v for k in range(54) for v in ((1 << k) - 1, 1 << k, (1 << k) + 1) if v < (1 << 53)})
    assert _bit_lengths(small, "vbl53") == [v.bit_length() for v in small]
    big = small + sorted({v for k in range(53, 63) for v in ((1 << k) - 1, 1 << k, (1 << k) + 1)}) + [(1 << 63) - 1]
    assert _bit_lengths(big, "vbl64") == [v.bit_length() for v in big]


@pytest.mark.parametrize("arch,instr,K,lanes", [("sm90", "f16f32", 16, 16), ("gfx90a", "bf16f32", 16, 8),
                                                ("sm80", "f64f64", 4, 0), ("gfx908", "f16f32", 8, 0)])
def test_lanes_chosen_per_model(arch: str, instr: str, K: int, lanes: int) -> None:
    """int32 bodies take 16 lanes, int64-heavy ones 8; terms wider than 64 bits keep the scalar loops (0)."""
    assert kernel_source(lookup(arch, instr).model, K).lanes == lanes


@pytest.mark.parametrize("arch,instr", [("sm90", "f16f32"), ("gfx90a", "bf16f32"), ("sm100", "mxe4m3f32")])
def test_one_special_lane_in_a_group(arch: str, instr: str) -> None:
    """A NaN or infinity in one lane of a vector group: that lane takes the full definition, the others stay exact."""
    model = lookup(arch, instr).model
    K = 32 if model.scale_fmt else 16
    rng = np.random.default_rng(5)
    n = 16 * 4 + 5  # whole groups of 8 or 16, and a scalar tail
    A = np.where(rng.random((n, K)) < 0.5, 0x3C00, 0xBC00).astype(np.uint16) if model.a_fmt == "fp16" else None
    if A is None:  # bf16 (0x3F80 = 1) or e4m3 (0x38 = 1)
        one = 0x3F80 if model.a_fmt == "bf16" else 0x38
        A = np.full((n, K), one, dtype=np.uint16 if model.a_fmt == "bf16" else np.uint8)
    B = A.copy()
    C = np.zeros(n, dtype=np.uint32 if model.c_fmt == "fp32" else np.uint16)
    inf_a = {"fp16": 0x7C00, "bf16": 0x7F80}.get(model.a_fmt, 0x7F)  # e4m3 has no infinity: 0x7F is its NaN
    A[3, 5] = inf_a  # one special lane in the first group
    A[20, 0] = inf_a  # and one in the second
    C[40] = 0x7FC00000  # a NaN C in the third
    A[n - 1, 2] = inf_a  # and one in the tail
    kw = {}
    if model.scale_fmt:
        kw = {"scale_a": np.full((n, K // model.block), 127, np.uint8), "scale_b": np.full((n, K // model.block), 127, np.uint8)}
    want = simulate_dot(model, None, A, B, C, backend="numpy", **kw)
    got = simulate_dot(model, None, A, B, C, backend="native", **kw)
    assert np.array_equal(got, want)
    assert {int(got[i]) & 0x7F800000 for i in (3, 20, 40, n - 1)} == {0x7F800000}  # inf or NaN came through


def test_default_build_flags_give_the_same_bits(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    """The kernel as users build it (-O3 -march=native, no override) against NumPy, on finite and special rows."""
    monkeypatch.delenv("SMTMMA_CC_OPT", raising=False)
    monkeypatch.setenv("SMTMMA_CACHE", str(tmp_path))
    assert build.flags("SMTMMA_VLANES")[0] == "-O3" and build.flags("")[0] == "-O1"
    model = lookup("sm90", "f16f32").model
    rng = np.random.default_rng(11)
    A = rng.integers(0, 1 << 16, (4099, 16), dtype=np.uint16)
    A[:2048] &= 0xBFFF  # finite half (exponent field below all-ones)
    B = rng.integers(0, 1 << 16, (4099, 16), dtype=np.uint16)
    B[:2048] &= 0xBFFF
    C = rng.integers(0, 1 << 32, 4099, dtype=np.uint32)
    C[:2048] &= 0xBFFFFFFF
    got = simulate_dot(model, None, A, B, C, backend="native")
    assert np.array_equal(got, simulate_dot(model, None, A, B, C, backend="numpy"))


def test_gemm_with_an_infinity_in_one_column() -> None:
    """The vectorized GEMM loop (lanes across columns of D) redoes only the lane holding an infinity."""
    rng = np.random.default_rng(9)
    A = rng.standard_normal((3, 48)).astype(np.float16)
    B = rng.standard_normal((48, 37)).astype(np.float16)
    B[7, 4] = np.inf
    got = matmul("sm90", "f16f32", A, B, bits=False)
    ref = matmul("sm90", "f16f32", A, B, backend="numpy")
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32))
    assert np.isinf(got[:, 4]).any() or np.isnan(got[:, 4]).all()
