"""Compiled kernels by (model, K): generated once per process, built once per machine (disk cache).

A kernel is checked when first loaded in a process (:func:`self_test`): a
few fixed dot products through it against the NumPy interpretation.  One
that differs is built again; if it still differs, it is refused and NumPy
answers after a NativeFallbackWarning naming it.
"""

from __future__ import annotations

import ctypes
import threading
import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..encodings.ccode import NotCompilable
from ..errors import user_stacklevel
from ..formats import Format, get_format
from ..models import Model
from ..sampling import draw, draw_scales, round_to_format
from .build import BuildError, cached_path, flags, load, vector_bits
from .source import KernelSource, kernel_source, uint_bits

__all__ = ["Kernel", "kernel", "try_kernel", "is_built", "source_of", "self_test", "NativeFallbackWarning",
           "SelfTestError", "MAX_K", "np_uint", "SELF_TEST_ROWS"]

#: Longest dot product compiled as one function (longer ones are chained from chunks, or left to NumPy).
MAX_K = 256

_I64, _P = ctypes.c_int64, ctypes.c_void_p


class NativeFallbackWarning(RuntimeWarning):
    """The compiled backend could not be built here; the NumPy interpretation answers instead (same bits)."""


class SelfTestError(BuildError):
    """A compiled kernel gave other bits than the NumPy interpretation on its self-test, built twice."""


def np_uint(bits: int) -> type:
    """The NumPy unsigned dtype of the C type holding ``bits``-bit patterns."""
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[uint_bits(bits)]


@dataclass(frozen=True)
class Kernel:
    """A loaded kernel: ``rows(n, a, lda, b, ldb, c, d, sa, ldsa, sb, ldsb)`` and ``gemm(M, N, nk, A, lda, B, ldb, acc, ldc, SA, ldsa, SB, ldsb)``."""

    source: KernelSource
    rows: ctypes._CFuncPtr  # type: ignore[name-defined]
    gemm: ctypes._CFuncPtr  # type: ignore[name-defined]


_sources: dict[tuple[Model, int, int], KernelSource] = {}
_kernels: dict[tuple[Model, int, tuple[str, ...]], Kernel] = {}
_failed: dict[tuple[Model, int], str] = {}
_lock = threading.Lock()
_warned: set[str] = set()  # "build" (once per process), or the kernel that failed its self-test (once per kernel)

#: Dot products of the self-test: whole groups of vector lanes (2 of 16, 4 of 8, 9 of 4) and a scalar tail.
SELF_TEST_ROWS = 37


def source_of(model: Model, K: int) -> KernelSource:
    """The generated source of (model, K) for the build target now (its vector loops as wide as its vector registers:
    :func:`.build.vector_bits`), memoized (NotCompilable when a term needs more than ccode.MAX_BITS bits)."""
    key = (model, K, vector_bits())
    src = _sources.get(key)
    if src is None:
        src = _sources[key] = kernel_source(model, K, vector_bits=key[2])
    return src


def is_built(model: Model, K: int) -> bool:
    """Whether (model, K) is loaded or sits in the disk cache (so using it costs no compile)."""
    try:
        if (model, K, flags()) in _kernels:
            return True
        return cached_path(source_of(model, K).text) is not None
    except (NotCompilable, BuildError):  # a bad $SMTMMA_CC_OPT/MARCH: try_kernel says so where a kernel is wanted
        return False


def _bind(src: KernelSource, lib: ctypes.CDLL) -> Kernel:
    rows, gemm = lib.smtmma_rows, lib.smtmma_gemm
    rows.argtypes = [_I64, _P, _I64, _P, _I64, _P, _P, _P, _I64, _P, _I64]
    rows.restype = None
    gemm.argtypes = [_I64, _I64, _I64, _P, _I64, _P, _I64, _P, _I64, _P, _I64, _P, _I64]
    gemm.restype = None
    return Kernel(src, rows, gemm)


def _special(fmt: Format) -> int:
    """An infinity, else a NaN, else the largest finite pattern of ``fmt``."""
    if fmt.has_inf:
        return fmt.inf_bits()
    if fmt.nan != "none":
        return fmt.nan_bits()
    return (1 << (fmt.bits - 1 if fmt.signed else fmt.bits)) - 1


def self_test(model: Model, K: int, kern: Kernel) -> Optional[str]:
    """Where ``kern`` differs from the NumPy interpretation of ``model`` on fixed inputs (None: nowhere).

    :data:`SELF_TEST_ROWS` dot products of length ``K`` through ``kern.rows``:
    zeros, ones, N(0, 1) values (seed fixed), an infinity (or NaN) in one
    lane of the second vector group and in C of the last, scalar, row.
    Milliseconds for short K, ~0.1 s at K = 256.
    """
    from ..simulate import simulate_dot  # late: simulate imports this module lazily

    n, rng = SELF_TEST_ROWS, np.random.default_rng(33)
    fa, fb, fc = (get_format(getattr(model, f)) for f in ("a_fmt", "b_fmt", "c_fmt"))
    src = kern.source
    A = np.ascontiguousarray(draw("normal", fa, (n, K), rng), np_uint(src.a_bits))
    B = np.ascontiguousarray(draw("normal", fb, (n, K), rng), np_uint(src.b_bits))
    C = np.ascontiguousarray(draw("normal", fc, (n,), rng), np_uint(src.c_bits))
    A[0], B[0], C[0] = 0, 0, 0
    A[1], B[1] = round_to_format(fa, np.ones(K)), round_to_format(fb, np.ones(K))
    C[1] = round_to_format(fc, np.ones(1))[0]
    A[20, K // 2], C[n - 1] = _special(fa), _special(fc)
    SA = SB = None
    if model.scale_fmt is not None:
        sf = get_format(model.scale_fmt)
        shape = (n, -(-K // (model.block or K)))
        SA = np.ascontiguousarray(draw_scales("normal", sf, shape, rng), np_uint(src.s_bits or 8))
        SB = np.ascontiguousarray(draw_scales("normal", sf, shape, rng), np_uint(src.s_bits or 8))
    want = simulate_dot(model, None, A, B, C, scale_a=SA, scale_b=SB, backend="numpy")
    got = np.zeros(n, np_uint(src.d_bits))
    kern.rows(n, A.ctypes.data, K, B.ctypes.data, K, C.ctypes.data, got.ctypes.data,
              None if SA is None else SA.ctypes.data, 0 if SA is None else SA.shape[1],
              None if SB is None else SB.ctypes.data, 0 if SB is None else SB.shape[1])
    bad = np.nonzero(got.astype(np.uint64) != want.astype(np.uint64))[0]
    if not len(bad):
        return None
    i = int(bad[0])
    return f"{len(bad)} of {n} rows differ; row {i}: {int(got[i]):#x}, NumPy {int(want[i]):#x}"


def kernel(model: Model, K: int) -> Kernel:
    """The compiled kernel of ``model``'s dot product of length ``K``, checked against NumPy when first loaded in
    this process (BuildError when it cannot be built or fails that check twice; NotCompilable)."""
    key = (model, K, flags())
    with _lock:
        k = _kernels.get(key)
        if k is not None:
            return k
        src = source_of(model, K)
        k = _bind(src, load(src.text))
        why = self_test(model, K, k)
        if why is not None:  # a damaged build that passed the file checks, or a compiler that got it wrong: once more
            k = _bind(src, load(src.text, rebuild=True))
            why = self_test(model, K, k)
            if why is not None:
                raise SelfTestError(f"the compiled kernel of {model.describe()}, K = {K}, gives other bits than the NumPy "
                                 f"interpretation on its self-test, twice ({why})")
        _kernels[key] = k
        return k


def try_kernel(model: Model, K: int) -> Optional[Kernel]:
    """The kernel, or None when it cannot be built (no compiler, term too wide, failed self-test): NumPy answers,
    after one NativeFallbackWarning per process (and one per kernel refused for wrong bits)."""
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
        topic = f"{model.describe()} K={K}" if isinstance(e, SelfTestError) else "build"
        if topic not in _warned:
            _warned.add(topic)
            warnings.warn(f"smtmma: compiled kernels unavailable ({e}); using the NumPy simulator", NativeFallbackWarning,
                          stacklevel=user_stacklevel())
        return None
