"""The generated dot product as CUDA C, and two launchers that run it on a GPU through CuPy.

:func:`cuda_source` wraps :func:`~.source.dot_function` (a ``__device__``
function) in two ``extern "C" __global__`` kernels mirroring the CPU batch
loops of :mod:`.source`:

* ``smtmma_rows(n, a, b, c, d, sa, sb)``: n independent dot products, lane
  major (``a[k * n + i]``), one thread per row;
* ``smtmma_gemm(M, N, Kpad, A, B, acc, kstep, SA, SB)``: one thread per cell
  (i, j) of an M x N accumulator, chaining the dot product over
  ``Kpad / kstep`` instruction steps with the accumulator in a register; A
  is M x Kpad and B Kpad x N (row major), SA is M x Kpad/block and SB
  Kpad/block x N (row major).

The unit compiles with nvcc and with NVRTC (which has no ``<stdint.h>``:
the fixed-width types are declared under ``__CUDACC_RTC__``).  Launchers
import CuPy lazily; compiled modules are cached in memory per source text
and device.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import numpy as np

from ..errors import InputError, InputTypeError, NotRepresentableError
from ..formats import carried_in, get_format
from ..models import Model
from .build import BuildError
from .source import GENERATOR_VERSION, dot_function, uint_bits

__all__ = ["cuda_source", "run_rows_cuda", "gemm_cuda", "NoCudaError", "INSTALL_HINT", "THREADS"]

INSTALL_HINT = "device='cuda' needs CuPy and a CUDA GPU: pip install 'smtmma[cuda]'"

#: Threads per block of both kernels (grid-stride loops cover any size).
THREADS = 128
_MAX_BLOCKS = 1 << 16

_PRELUDE = """#ifdef __CUDACC_RTC__ /* NVRTC: no <stdint.h> */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#ifndef INT64_C
#define INT64_C(v) v##LL
#define UINT64_C(v) v##ULL
#define INT64_MIN (-INT64_C(9223372036854775807) - 1)
#endif
#else
#include <stdint.h>
#endif
#ifdef __CUDACC__
#pragma nv_diag_suppress 177 /* unused SSA values (the generator does not prune) */
#endif
#define SMTMMA_CLZ32(x) __clz((int)(x))
#define SMTMMA_CLZ64(x) __clzll((long long)(x))
"""

_KERNELS = """
extern "C" __global__ void smtmma_rows(int64_t n, const ta_t *a, const tb_t *b, const tc_t *c, td_t *d,
                                       const ts_t *sa, const ts_t *sb)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        d[i] = dot1(a + i, n, b + i, n, c[i], sa + i, n, sb + i, n);
}

extern "C" __global__ void smtmma_gemm(int64_t M, int64_t N, int64_t Kpad, const ta_t *A, const tb_t *B, td_t *acc,
                                       int64_t kstep, const ts_t *SA, const ts_t *SB)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x, nsc = Kpad / SMTMMA_BLOCK;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < M * N; t += stride) {
        const int64_t i = t / N, j = t % N;
        td_t d = acc[t];
        for (int64_t k0 = 0; k0 < Kpad; k0 += kstep)
            d = dot1(A + i * Kpad + k0, 1, B + k0 * N + j, N, (tc_t)d,
                     SA + i * nsc + k0 / SMTMMA_BLOCK, 1, SB + (k0 / SMTMMA_BLOCK) * N + j, N);
        acc[t] = d;
    }
}
"""


class NoCudaError(InputError):
    """device='cuda' was asked for, but CuPy or a CUDA GPU is missing."""


def cuda_source(model: Model, K: int) -> str:
    """The CUDA translation unit of ``model``'s dot product of length ``K`` (kernels: see module docstring).

    Raises :class:`~smtmma.encodings.ccode.NotCompilable` where a term needs more than 127 bits (the exact
    sums of the fp32 and fp64 FMA chains): those models stay on the NumPy interpretation.
    """
    func, _ = dot_function(model, K, name="dot1", qualifier="__device__ __forceinline__ static")
    return (f"/* smtmma generated CUDA kernel (generator {GENERATOR_VERSION}): {model.describe()}, K = {K} */\n"
            f"{_PRELUDE}#define SMTMMA_BLOCK {model.block or 1}\n\n{func}{_KERNELS}")


# ---------------------------------------------------------------- launching through CuPy

_modules: dict[tuple[str, int], Any] = {}
_lock = threading.Lock()


def _cupy() -> Any:
    """The CuPy module, once it is known to see a GPU (NoCudaError otherwise)."""
    try:
        import cupy
    except ImportError:
        raise NoCudaError(INSTALL_HINT) from None
    except Exception as e:  # CuPy present, its CUDA libraries not
        raise NoCudaError(f"{INSTALL_HINT} (CuPy cannot be imported: {type(e).__name__})") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        raise NoCudaError(f"{INSTALL_HINT} (CuPy finds no GPU: {type(e).__name__})") from None
    if count == 0:
        raise NoCudaError(f"{INSTALL_HINT} (CuPy finds no GPU)")
    return cupy


def _module(cp: Any, text: str) -> Any:
    """The compiled CuPy RawModule of ``text`` on the current device (NVRTC; cached in memory)."""
    key = (hashlib.sha256(text.encode()).hexdigest(), int(cp.cuda.Device().id))
    with _lock:
        mod = _modules.get(key)
        if mod is None:
            options = ("--device-int128",) if "__int128" in text else ()
            try:
                mod = cp.RawModule(code=text, options=options, backend="nvrtc")
                mod.get_function("smtmma_rows")  # compiles now, so errors surface here
            except Exception as e:
                lines = str(e).splitlines()
                first = next((ln for ln in lines if "error" in ln), lines[0] if lines else type(e).__name__)
                raise BuildError(f"NVRTC failed on a generated kernel: {first.strip()[:200]}") from None
            _modules[key] = mod
        return mod


def _dtype(bits: int) -> Any:
    return np.dtype(f"uint{uint_bits(bits)}")


def _widths(model: Model) -> tuple[int, int, int, int, int]:
    """Pattern bits of A, B, C, D (its container) and the scales (8 when unscaled)."""
    fa, fb, fc = (get_format(getattr(model, f)) for f in ("a_fmt", "b_fmt", "c_fmt"))
    fd = get_format(model.d_fmt)
    fd = carried_in(fd)
    fs = get_format(model.scale_fmt).bits if model.scale_fmt else 8
    return fa.bits, fb.bits, fc.bits, fd.bits, fs


def _patterns(cp: Any, name: str, x: object, bits: int) -> Any:
    """``x`` as a C-contiguous device array of ``bits``-bit patterns in their unsigned dtype; InputError otherwise."""
    arr = cp.asarray(x)
    if arr.dtype.kind not in "ui":
        raise InputTypeError(f"{name} must hold unsigned integer bit patterns, got dtype {arr.dtype}")
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >> bits):
        raise NotRepresentableError(f"{name} holds a value that is not a {bits}-bit pattern")
    return cp.ascontiguousarray(arr.astype(_dtype(bits), copy=False))


def _grid(n: int) -> tuple[int]:
    return (max(1, min(_MAX_BLOCKS, -(-n // THREADS))),)


def _scales(cp: Any, model: Model, SA: object, SB: object, shape_a: tuple[int, int], shape_b: tuple[int, int],
            bits: int) -> tuple[Any, Any]:
    """Device arrays of the scales (checked against their shapes), or a 1-element dummy for unscaled models."""
    if model.scale_fmt is None:
        if SA is not None or SB is not None:
            raise InputError(f"{model.describe()} takes no block scales: leave SA and SB None")
        dummy = cp.zeros(1, _dtype(bits))
        return dummy, dummy
    if SA is None or SB is None:
        raise InputError(f"{model.describe()} needs SA and SB ({model.scale_fmt} block scales)")
    sa, sb = _patterns(cp, "SA", SA, bits), _patterns(cp, "SB", SB, bits)
    for name, arr, shape in (("SA", sa, shape_a), ("SB", sb, shape_b)):
        if arr.shape != shape:
            raise InputError(f"{name} must have shape {shape} (one scale per {model.block} values), got {arr.shape}")
    return sa, sb


def run_rows_cuda(model: Model, K: int, A: object, B: object, C: object,
                  SA: object = None, SB: object = None) -> np.ndarray:
    """D patterns (N,) of N dot products of length ``K`` on the GPU, as :func:`smtmma.simulate.simulate_dot`.

    ``A``, ``B``: (N, K) bit patterns; ``C``: (N,); ``SA``, ``SB``: (N, ceil(K / block)) scale patterns for
    block-scaled models.  NumPy or CuPy arrays; the result is a NumPy array of D's unsigned dtype.
    """
    cp = _cupy()
    abits, bbits, cbits, dbits, sbits = _widths(model)
    a, b, c = _patterns(cp, "A", A, abits), _patterns(cp, "B", B, bbits), _patterns(cp, "C", C, cbits)
    if K < 1 or c.ndim != 1:
        raise InputError(f"dot products need K >= 1 (got {K}) and C of shape (N,) (got {c.shape})")
    n = int(c.shape[0])
    if a.shape != (n, K) or b.shape != (n, K):
        raise InputError(f"A and B must be (N, K) = ({n}, {K}) for C of shape ({n},): got A {a.shape}, B {b.shape}")
    nsc = -(-K // model.block) if model.scale_fmt and model.block else 0
    sa, sb = _scales(cp, model, SA, SB, (n, nsc), (n, nsc), sbits)
    if nsc:  # lane major, as A and B
        sa, sb = cp.ascontiguousarray(sa.T), cp.ascontiguousarray(sb.T)
    d = cp.empty(n, _dtype(dbits))
    if n:
        fn = _module(cp, cuda_source(model, K)).get_function("smtmma_rows")
        fn(_grid(n), (THREADS,), (np.int64(n), cp.ascontiguousarray(a.T), cp.ascontiguousarray(b.T), c, d, sa, sb))
    out: np.ndarray = cp.asnumpy(d)
    return out


def gemm_cuda(model: Model, kstep: int, A: object, B: object, acc: object,
              SA: object = None, SB: object = None) -> np.ndarray:
    """D patterns (M, N) of ``acc + A @ B`` as ``Kpad / kstep`` chained instruction steps of ``kstep`` lanes each.

    ``A``: (M, Kpad) and ``B``: (Kpad, N) bit patterns, Kpad a multiple of ``kstep``; ``acc``: (M, N) C
    patterns, each step reading the previous D as its C (``acc`` itself is not written); ``SA``:
    (M, Kpad / block), ``SB``: (Kpad / block, N) scale patterns.  NumPy or CuPy arrays; the result is a
    NumPy array of D's unsigned dtype.
    """
    cp = _cupy()
    abits, bbits, _, dbits, sbits = _widths(model)
    if get_format(model.c_fmt).name != carried_in(model.d_fmt).name:
        raise InputError(f"{model.describe()}: C ({model.c_fmt}) and D ({model.d_fmt}) differ in format, "
                         "so D cannot be chained back as C")
    a, b = _patterns(cp, "A", A, abits), _patterns(cp, "B", B, bbits)
    d = _patterns(cp, "acc", acc, dbits).copy()
    if a.ndim != 2 or b.ndim != 2 or d.ndim != 2 or a.shape[1] != b.shape[0] or d.shape != (a.shape[0], b.shape[1]):
        raise InputError(f"shapes do not multiply: A {a.shape}, B {b.shape}, acc {d.shape}")
    M, Kpad = a.shape
    N = b.shape[1]
    if kstep < 1 or Kpad % kstep:
        raise InputError(f"Kpad = {Kpad} must be a positive multiple of kstep = {kstep} (pad A and B with zeros)")
    block = model.block or 1
    if model.scale_fmt and kstep % block:
        raise InputError(f"kstep = {kstep} must be a multiple of the scale block ({block})")
    nsc = Kpad // block if model.scale_fmt else 0
    sa, sb = _scales(cp, model, SA, SB, (M, nsc), (nsc, N), sbits)
    if M * N:
        fn = _module(cp, cuda_source(model, kstep)).get_function("smtmma_gemm")
        fn(_grid(M * N), (THREADS,), (np.int64(M), np.int64(N), np.int64(Kpad), a, b, d, np.int64(kstep), sa, sb))
    out: np.ndarray = cp.asnumpy(d)
    return out
