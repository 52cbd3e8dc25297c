"""The ``sum_rz`` twin of CDNA3's TR-/GTR-FDPA (000 §6.2.4, Fig. 3): the same algorithms, truncating where they round down."""

from __future__ import annotations

import numpy as np
import pytest

import smtmma
from smtmma.catalogue import model_of
from smtmma.errors import InputError
from smtmma.models import parse_model_spec


def _inputs(instr: str, n: int = 4000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    m = model_of("gfx942", instr)
    K = m.L
    if instr == "f16f32":
        a = (1000 * rng.standard_normal((n, K))).astype(np.float16).view(np.uint16)
        b = (1000 * rng.standard_normal((n, K))).astype(np.float16).view(np.uint16)
    else:  # FNUZ fp8 patterns, NaN (0x80) left out
        a = rng.integers(0, 256, (n, K), dtype=np.uint8)
        b = rng.integers(0, 256, (n, K), dtype=np.uint8)
        a[a == 0x80], b[b == 0x80] = 0, 0
    c = rng.standard_normal(n).astype(np.float32).view(np.uint32)
    return a, b, c


def test_spec_round_trips_and_is_refused_elsewhere() -> None:
    m = model_of("gfx942", "f16f32").replace(sum_rz=True)
    assert m.describe() == "tr-fdpa:L=8,F=24,F2=31,rho=rne-fp32,sum_rz"
    assert parse_model_spec(m.describe(), model_of("gfx942", "f16f32")) == m
    with pytest.raises(InputError, match="sum_rz"):
        model_of("sm90", "f16f32").replace(sum_rz=True)


@pytest.mark.parametrize("instr", ["f16f32", "fp8fp8f32"])
def test_rz_twin_is_symmetric_and_never_below_round_down(instr: str) -> None:
    rd = model_of("gfx942", instr)
    rz = rd.replace(sum_rz=True)
    a, b, c = _inputs(instr)
    d_rd = smtmma.simulate_dot(rd, None, a, b, c, backend="numpy")
    d_rz = smtmma.simulate_dot(rz, None, a, b, c, backend="numpy")
    sign_a = 0x80 if instr != "f16f32" else 0x8000
    na = np.where((a & (sign_a - 1)) == 0, a, a ^ sign_a).astype(a.dtype)  # FNUZ zero has no negative
    nd_rz = smtmma.simulate_dot(rz, None, na, b, c ^ np.uint32(0x80000000), backend="numpy")
    f = lambda d: d.view(np.float32).astype(np.float64)  # noqa: E731
    assert np.array_equal(f(nd_rz), -f(d_rz))  # truncation is symmetric: D(-A, B, -C) = -D(A, B, C), every row
    assert np.all(f(d_rd) <= f(d_rz))  # RD <= RZ in every step, and the final RNE is monotone
    assert np.any(d_rd != d_rz)  # and the twins differ (they would not if sum_rz were ignored)


@pytest.mark.parametrize("instr", ["f16f32", "fp8fp8f32"])
def test_compiled_twin_matches_numpy(instr: str) -> None:
    rz = model_of("gfx942", instr).replace(sum_rz=True)
    a, b, c = _inputs(instr, 2000, seed=1)
    assert np.array_equal(smtmma.simulate_dot(rz, None, a, b, c, backend="numpy"),
                          smtmma.simulate_dot(rz, None, a, b, c, backend="native"))
