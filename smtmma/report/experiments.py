"""The report's simulation experiments (NumPy only, no plotting): errors of MMA models against exact arithmetic.

* :func:`cdna3_bias` -- §6.2.4 / Fig. 3 of the MMA-Sim paper (000): the
  CDNA3 FP16 MFMA (TR-FDPA, Alg. 10, which rounds down in its final fused
  sum) against its hypothetical twin that truncates (RZ) there instead
  (the catalogue model with ``sum_rz``), on the
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

__all__ = ["BiasResult", "ArchErrors", "cdna3_bias", "f16f32_errors", "deviation", "random_f16", "random_f32"]

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

    D_RD comes from the catalogue model, D_RZ from the same model with
    ``sum_rz`` (Alg. 10 step 3 truncates instead of rounding down): one
    definition, one flag, so the twins differ only in the rounding the
    paper changes.
    """
    model = entries("gfx942", "f16f32")[0].model
    assert model.kind == "tr-fdpa" and model.L is not None and k <= model.L, model
    rng = np.random.default_rng(seed)
    a = random_f16(rng, (samples, k), 1000.0)
    b = random_f16(rng, (samples, k), 1000.0)
    c = random_f32(rng, (samples,))
    d_rd = np.asarray(simulate_dot(model, "f16f32", a, b, c), dtype=np.uint32)
    d_rz = np.asarray(simulate_dot(model.replace(sum_rz=True), "f16f32", a, b, c), dtype=np.uint32)
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
