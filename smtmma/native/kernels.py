"""Compiled kernels by (model, K): generated once per process, built once per machine (disk cache)."""

from __future__ import annotations

import ctypes
import threading
import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..encodings.ccode import NotCompilable
from ..models import Model
from .build import BuildError, cached_path, flags, load
from .source import KernelSource, kernel_source, uint_bits

__all__ = ["Kernel", "kernel", "try_kernel", "NativeFallbackWarning", "MAX_K", "np_uint"]

#: Longest dot product compiled as one function (longer ones are chained from chunks, or left to NumPy).
MAX_K = 256

_I64, _P = ctypes.c_int64, ctypes.c_void_p


class NativeFallbackWarning(RuntimeWarning):
    """The compiled backend could not be built here; the NumPy interpretation answers instead (same bits)."""


def np_uint(bits: int) -> type:
    """The NumPy unsigned dtype of the C type holding ``bits``-bit patterns."""
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[uint_bits(bits)]


@dataclass(frozen=True)
class Kernel:
    """A loaded kernel: ``rows(n, a, lda, b, ldb, c, d, sa, ldsa, sb, ldsb)`` and ``gemm(M, N, nk, A, lda, B, ldb, acc, ldc, SA, ldsa, SB, ldsb)``."""

    source: KernelSource
    rows: ctypes._CFuncPtr  # type: ignore[name-defined]
    gemm: ctypes._CFuncPtr  # type: ignore[name-defined]


_sources: dict[tuple[Model, int], KernelSource] = {}
_kernels: dict[tuple[Model, int, tuple[str, ...]], Kernel] = {}
_failed: dict[tuple[Model, int], str] = {}
_lock = threading.Lock()
_warned = False


def source_of(model: Model, K: int) -> KernelSource:
    """The generated source of (model, K), memoized (NotCompilable when a term needs more than ccode.MAX_BITS bits)."""
    key = (model, K)
    src = _sources.get(key)
    if src is None:
        src = _sources[key] = kernel_source(model, K)
    return src


def is_built(model: Model, K: int) -> bool:
    """Whether (model, K) is loaded or sits in the disk cache (so using it costs no compile)."""
    if (model, K, flags()) in _kernels:
        return True
    try:
        return cached_path(source_of(model, K).text) is not None
    except NotCompilable:
        return False


def kernel(model: Model, K: int) -> Kernel:
    """The compiled kernel of ``model``'s dot product of length ``K`` (BuildError / NotCompilable when there is none)."""
    key = (model, K, flags())
    with _lock:
        k = _kernels.get(key)
        if k is not None:
            return k
        src = source_of(model, K)
        lib = load(src.text)
        rows, gemm = lib.smtmma_rows, lib.smtmma_gemm
        rows.argtypes = [_I64, _P, _I64, _P, _I64, _P, _P, _P, _I64, _P, _I64]
        rows.restype = None
        gemm.argtypes = [_I64, _I64, _I64, _P, _I64, _P, _I64, _P, _I64, _P, _I64, _P, _I64]
        gemm.restype = None
        k = _kernels[key] = Kernel(src, rows, gemm)
        return k


def try_kernel(model: Model, K: int) -> Optional[Kernel]:
    """The kernel, or None after one NativeFallbackWarning when it cannot be built (no compiler, term too wide)."""
    global _warned
    key = (model, K)
    if key in _failed:
        return None
    try:
        return kernel(model, K)
    except NotCompilable as e:  # a property of the model, not of the machine: no warning, NumPy answers
        _failed[key] = str(e)
        return None
    except BuildError as e:
        _failed[key] = str(e)
        if not _warned:
            _warned = True
            warnings.warn(f"smtmma: compiled kernels unavailable ({e}); using the NumPy simulator", NativeFallbackWarning,
                          stacklevel=3)
        return None
