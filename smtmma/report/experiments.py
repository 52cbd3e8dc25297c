"""The report's simulation experiments (NumPy only, no plotting): errors of MMA models against exact arithmetic.

* :func:`cdna3_bias` -- §6.2.4 / Fig. 3 of the MMA-Sim paper (000): the
  CDNA3 FP16 MFMA (TR-FDPA, Alg. 10, which rounds down in its final fused
  sum) against a hypothetical twin that truncates (RZ) there instead, on the
  same random inputs (A, B ~ 1000 N(0, 1) in FP16, C ~ N(0, 1) in FP32, K = 8
  as in v_mfma_f32_32x32x8_f16); deviations from the exact result.
* :func:`f16f32_errors` -- every architecture's f16f32 model on one set of
  random inputs, errors in units of the FP32 ulp of the exact result.

Exact results: the products of FP16 values and an FP32 C are exact in
float64, and :func:`math.fsum` of them and of ``-D`` is the correctly
rounded value of ``D - exact``: its sign is exact and it is within 2^-53
(relative) of the true deviation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..catalogue import entries
from ..models import Model
from ..simulate import simulate_dot

__all__ = ["BiasResult", "ArchErrors", "cdna3_bias", "f16f32_errors", "trfdpa_fp16", "deviation", "random_f16", "random_f32"]

_F16_BIAS, _F32_BIAS = 15, 127


def random_f16(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    """FP16 bit patterns (uint16) of ``scale * N(0, 1)`` rounded to nearest (ties to even)."""
    return (scale * rng.standard_normal(shape)).astype(np.float16).view(np.uint16)


def random_f32(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    """FP32 bit patterns (uint32) of ``scale * N(0, 1)`` rounded to nearest."""
    return (scale * rng.standard_normal(shape)).astype(np.float32).view(np.uint32)


def deviation(d_bits: np.ndarray, a_bits: np.ndarray, b_bits: np.ndarray, c_bits: np.ndarray) -> np.ndarray:
    """``D - (c + sum_k a_k b_k)`` per row, correctly rounded to float64 (FP32 D, FP16 A/B, FP32 C; finite values)."""
    a = a_bits.view(np.float16).astype(np.float64)
    b = b_bits.view(np.float16).astype(np.float64)
    terms = np.concatenate([d_bits.view(np.float32).astype(np.float64)[:, None], -(a * b),  # products exact in float64
                            -c_bits.view(np.float32).astype(np.float64)[:, None]], axis=1)
    return np.array([math.fsum(row) for row in terms.tolist()], dtype=np.float64)


def _exact(a_bits: np.ndarray, b_bits: np.ndarray, c_bits: np.ndarray) -> np.ndarray:
    """``c + sum_k a_k b_k`` correctly rounded to float64."""
    zero = np.zeros(len(c_bits), dtype=np.uint32)
    return -deviation(zero, a_bits, b_bits, c_bits)


def _unpack(bits: np.ndarray, man: int, bias: int) -> tuple[np.ndarray, np.ndarray]:
    """(signed significand as an integer, exponent) with value = sig * 2**(exp - man); Exp(x) = max(E, 1) - bias."""
    b = bits.astype(np.int64)
    width = 16 if man == 10 else 32
    e_field = (b >> man) & ((1 << (width - 1 - man)) - 1)
    sig = (b & ((1 << man) - 1)) | np.where(e_field > 0, 1 << man, 0)
    neg = (b >> (width - 1)) & 1
    return np.where(neg == 1, -sig, sig), np.maximum(e_field, 1) - bias


def _shift_right(x: np.ndarray, k: np.ndarray, *, floor: bool) -> np.ndarray:
    """``x * 2**-k`` (k >= 0) rounded down (floor) or toward zero; k is clamped to 62 (x is below 2**40)."""
    k = np.minimum(k, 62)
    if floor:
        return x >> k  # arithmetic shift: floor
    return np.sign(x) * (np.abs(x) >> k)


def trfdpa_fp16(a_bits: np.ndarray, b_bits: np.ndarray, c_bits: np.ndarray, *, F: int = 24, F2: int = 31,
                step3: str = "rd") -> np.ndarray:
    """FP32 bits of one TR-FDPA (Alg. 10) per row over all K columns, finite FP16 A/B and FP32 C.

    ``step3``: "rd" rounds T and c down in the rounded sum with c (Alg. 10
    lines 14-15, CDNA3); "rz" truncates them toward zero instead: the
    hypothetical ``v_mfma_f32_32x32x8_f16_rz`` of §6.2.4.  Steps 1-2 (exact
    products, RZ_F alignment at e_max) and step 4 (RNE-FP32) are the same.
    """
    floor = {"rd": True, "rz": False}[step3]
    sa, ea = _unpack(a_bits, 10, _F16_BIAS)
    sb, eb = _unpack(b_bits, 10, _F16_BIAS)
    s, e = sa * sb, ea + eb  # step 1: value = s * 2**(e - 20)
    nonzero = s != 0
    low = -10_000
    e_max = np.max(np.where(nonzero, e, low), axis=1)  # step 2: zero terms do not set e_max
    shifted = np.abs(s) << (F - 20)
    T = np.sum(np.sign(s) * _shift_right(shifted, (e_max[:, None] - e), floor=False), axis=1)  # RZ_F, units 2**(e_max-F)
    sc, ec = _unpack(c_bits, 23, _F32_BIAS)  # step 3
    ec = np.where(sc != 0, ec, low)
    E = np.maximum(e_max, ec)
    T2 = _shift_right(T << (F2 - F), E - e_max, floor=floor)  # units 2**(E - F2)
    c2 = _shift_right(sc << (F - 23), E - ec, floor=floor) << (F2 - F)
    S = T2 + c2
    d = np.ldexp(S.astype(np.float64), (E - F2).astype(np.int64))  # exact: |S| < 2**40
    return d.astype(np.float32).view(np.uint32)  # step 4: RNE-FP32 (one rounding of an exact value)


@dataclass
class BiasResult:
    """Fig. 3 data: deviations from the exact result of the RD model and its RZ twin, and the inputs."""

    delta_rd: np.ndarray  # D_RD - D_real per row (float64, correctly rounded)
    delta_rz: np.ndarray  # D_RZ - D_real
    d_rd: np.ndarray  # FP32 bits of the catalogue's gfx942 f16f32 model (simulate_dot)
    d_rz: np.ndarray  # FP32 bits of the RZ twin
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    model: Model
    samples: int
    seed: int


def cdna3_bias(samples: int = 65536, seed: int = 0, k: int = 8) -> BiasResult:
    """§6.2.4 reproduced: ``samples`` dot products of length ``k`` on gfx942 f16f32 and on its RZ twin.

    D_RD comes from the catalogue model through :func:`simulate_dot`; the
    NumPy TR-FDPA above with step3="rd" must give the same bits on every row
    (checked here), so its step3="rz" twin differs from the catalogue's model
    in the one rounding the paper changes.
    """
    model = entries("gfx942", "f16f32")[0].model
    assert model.kind == "tr-fdpa" and model.L is not None and k <= model.L, model
    rng = np.random.default_rng(seed)
    a = random_f16(rng, (samples, k), 1000.0)
    b = random_f16(rng, (samples, k), 1000.0)
    c = random_f32(rng, (samples,))
    d_rd = simulate_dot(model, "f16f32", a, b, c).astype(np.uint32)
    mine = trfdpa_fp16(a, b, c, F=model.F or 0, F2=model.F2 or 0, step3="rd")
    if not np.array_equal(mine, d_rd):
        bad = int(np.flatnonzero(mine != d_rd)[0])
        raise AssertionError(f"TR-FDPA twin differs from the catalogue model on row {bad}")
    d_rz = trfdpa_fp16(a, b, c, F=model.F or 0, F2=model.F2 or 0, step3="rz")
    return BiasResult(deviation(d_rd, a, b, c), deviation(d_rz, a, b, c), d_rd, d_rz, a, b, c, model, samples, seed)


@dataclass
class ArchErrors:
    """One distinct f16f32 model: the architectures that run it and its errors on the common inputs."""

    archs: list[str]
    model: Model
    ulps: np.ndarray  # (D - exact) / ulp_FP32(exact), float64


def f16f32_errors(samples: int = 20000, seed: int = 0, k: int = 16) -> list[ArchErrors]:
    """Errors of each distinct f16f32 model (default op family of every architecture) on one set of inputs.

    Inputs: A, B ~ N(0, 1) in FP16, C ~ N(0, 1) in FP32, dot products of
    length ``k`` (models with L < k chain FDPAs, Alg. 5).  Error unit: the
    FP32 ulp of the exact result, 2^(floor(log2|exact|) - 23) (subnormal
    spacing below 2^-126).
    """
    rng = np.random.default_rng(seed)
    a, b, c = random_f16(rng, (samples, k)), random_f16(rng, (samples, k)), random_f32(rng, (samples,))
    exact = _exact(a, b, c)
    _, ex = np.frexp(exact)
    ulp = np.ldexp(1.0, np.maximum(ex.astype(np.int64) - 1, -126) - 23)
    groups: dict[Model, list[str]] = {}
    for e in entries(None, "f16f32"):
        if e.default:
            groups.setdefault(e.model, []).append(e.arch)
    out = []
    for model, archs in groups.items():
        d = simulate_dot(model, "f16f32", a, b, c)
        out.append(ArchErrors(archs, model, deviation(np.asarray(d, dtype=np.uint32), a, b, c) / ulp))
    return out
