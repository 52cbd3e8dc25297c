"""Whole GEMMs D = A x B + C as a tensor-core kernel with one instruction computes them, bit for bit.

The k-loop is the hardware's (Alg. 5 of the MMA-Sim paper, one level up):
each output chains the instruction's dot product over consecutive chunks
of k values (the instruction's k), the accumulator carried from one
instruction to the next, the last chunk padded with zeros.  The compiled
kernels (:mod:`smtmma.native`) run it over tiles of D on every core; the
NumPy interpretation answers where no C compiler is found.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional, Union

import numpy as np

from .arrays import check_fits_in_memory, from_patterns, to_patterns, value_dtype
from .catalogue import ARCHS, lookup, model_of
from .errors import InputError, InputTypeError, check_flag, spell
from .formats import Format, get_format
from .instr_names import named_shape
from .limits import check_int
from .models import Model
from .sampling import dtype_for

__all__ = ["matmul", "instruction_k"]

#: Rows of D per work item (a thread takes one at a time; progress is reported per item).
ROWS_PER_ITEM = 64


def instruction_k(target: Union[str, Model], instr: Optional[str], op: Optional[str] = None) -> int:
    """k of the instruction a GEMM chains (values per dot product per instruction).

    ``op`` naming a shape (``mma.sync.aligned.m16n8k16...``) gives its k;
    otherwise the largest k among the instruction's shapes (what a GEMM
    kernel picks); a bare Model gives its chunk length L (P for FTZ-AddMul,
    1 for a chain of FMAs).
    """
    if isinstance(target, str):
        entry = lookup(target, instr, op)
        named = named_shape(entry.arch, entry.instr, op, ARCHS[entry.arch].vendor) if op else None
        if named:
            return named.k
        if entry.shapes:
            return max(s.k for s in entry.shapes)
        target = entry.model
    return target.L or target.P or 1


def _patterns(name: str, x: object, fmt: Format, bits: bool, round: Optional[str]) -> np.ndarray:
    """``x`` as a 2-D array of ``fmt`` patterns: validated bit patterns (bits=True) or exactly converted values."""
    if bits:
        from .simulate import _as_bits

        return _as_bits(name, x, fmt, 2)
    arr = to_patterns(x, fmt, name=name, round=round)
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
    return arr


def matmul(
    target: Union[str, Model],
    instr: Optional[str],
    A: object,
    B: object,
    C: object = None,
    *,
    op: Optional[str] = None,
    k: Optional[int] = None,
    out: Optional[np.ndarray] = None,
    jobs: Optional[int] = None,
    bits: bool = False,
    round: Optional[str] = None,
    scale_a: object = None,
    scale_b: object = None,
    backend: str = "auto",
    progress: Optional[Callable[[int, int], None]] = None,
    device: str = "cpu",
) -> np.ndarray:
    """D = A x B + C for any M, N, K, as a GEMM with ``instr`` on ``target`` computes it.

    ``A`` (M, K), ``B`` (K, N), ``C`` (M, N) or None (+0): real-valued
    arrays (NumPy float64/32/16, ml_dtypes, torch) converted exactly to the
    instruction's formats (a value that is not representable is an error,
    unless ``round="rne"``), or bit patterns with ``bits=True``.
    ``scale_a`` (M, K/block) and ``scale_b`` (K/block, N): block-scale
    patterns of block-scaled instructions.  ``k``: values per instruction
    (default :func:`instruction_k`).  ``jobs``: threads (default: every
    core).  ``backend``: "auto"/"native" (compiled) or "numpy".
    ``progress(done_rows, M)`` is called as rows of D complete.
    ``device="cuda"``: the same generated code as CUDA C on a GPU through
    CuPy (the ``smtmma[cuda]`` extra; an error where there is none).

    Returns D in D's format: float32 for FP32 (and E8M13 results, which
    live in FP32), float16 for FP16, float64 for FP64; its bit patterns
    (uint16/uint32/uint64) with ``bits=True``.  ``out``: an array of that
    dtype and shape (M, N) to write into.
    """
    if backend not in ("auto", "native", "numpy"):
        raise InputError(f"backend must be one of auto, native, numpy, got {backend!r}")
    if device not in ("cpu", "cuda"):
        raise InputError(f"device must be cpu or cuda, got {device!r}")
    if jobs is not None:
        check_int("jobs", jobs, 1, 4096, " (threads)")
    if progress is not None and not callable(progress):
        raise InputTypeError(f"progress must be a function progress(done_rows, M), got {type(progress).__name__}")
    check_flag("bits", bits)
    model = model_of(target, instr, op)
    kstep = instruction_k(target, instr, op) if k is None else k
    if isinstance(kstep, np.integer):
        kstep = int(kstep)
    if not isinstance(kstep, int) or isinstance(kstep, bool) or not 1 <= kstep <= 1024:
        raise InputError(f"{spell('k')} must be an integer in 1..1024 (values per instruction), got {kstep!r}")
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    fd = get_format(model.d_fmt)
    fd = get_format(fd.container or fd.name)
    if fc.name != fd.name:
        raise InputError(f"a GEMM feeds D back as C, but this instruction reads C as {fc.name} and returns {fd.name} "
                         "(use the instruction with C and D in one format)")
    Am = _patterns("A", A, fa, bits, round)
    Bm = _patterns("B", B, fb, bits, round)
    M, K = Am.shape
    if Bm.shape[0] != K:
        raise InputError(f"A is {M}x{K} but B is {Bm.shape[0]}x{Bm.shape[1]}: A's columns must match B's rows")
    N = Bm.shape[1]
    if K == 0:
        raise InputError("K must be at least 1")
    tdt = np.dtype(dtype_for(fd))
    nk = -(-K // kstep)
    _check_out(out, (M, N), tdt if bits else value_dtype(fd))
    per_d = 2 * tdt.itemsize + (0 if C is None else 8)  # the accumulator, D's values (C: float64 on the way in)
    check_fits_in_memory(M * N * per_d + (M + N) * nk * kstep * 8, f"D ({M} x {N}: A's rows x B's columns)")
    acc = np.zeros((M, N), tdt) if C is None else _patterns("C", C, fc, bits, round).astype(tdt)
    if acc.shape != (M, N):
        raise InputError(f"C must be {M}x{N} (A's rows x B's columns), got {acc.shape[0]}x{acc.shape[1]}")
    Ap = np.zeros((M, nk * kstep), dtype_for(fa))
    Ap[:, :K] = Am
    Bp = np.zeros((nk * kstep, N), dtype_for(fb))
    Bp[:K] = Bm
    SA, SB = _scales(model, scale_a, scale_b, M, N, K, kstep, nk)
    if device == "cuda":
        from .native.cuda import gemm_cuda

        acc = gemm_cuda(model, kstep, Ap, Bp, acc, SA, SB)
        if progress is not None:
            progress(M, M)
        return _result(acc, fd, bits, out)
    jobs = max(1, int(jobs or os.cpu_count() or 1))
    run = _native_runner(model, kstep, backend, M * N * nk, nk) if backend != "numpy" else None
    if run is None:
        run = _numpy_runner(model, kstep)
    items = [(i0, min(M, i0 + ROWS_PER_ITEM)) for i0 in range(0, M, ROWS_PER_ITEM)]
    done = 0

    def work(item: tuple[int, int]) -> int:
        i0, i1 = item
        run(Ap[i0:i1], Bp, acc[i0:i1], nk, None if SA is None else SA[i0:i1], SB)
        return i1 - i0

    with ThreadPoolExecutor(jobs) as pool:
        for rows in pool.map(work, items):
            done += rows
            if progress is not None:
                progress(done, M)
    return _result(acc, fd, bits, out)


def _check_out(out: object, shape: tuple[int, int], dtype: np.dtype) -> None:
    """``out`` (None, or a writable array of ``shape`` and ``dtype``); InputError before any work otherwise."""
    if out is None:
        return
    if not isinstance(out, np.ndarray) or isinstance(out, np.ma.MaskedArray) or out.shape != shape or out.dtype != dtype:
        got = f"{out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
        raise InputTypeError(f"out must be a {dtype} array of shape {shape}, got a {got}")
    if not out.flags.writeable:
        raise InputError("out is read-only (out.flags.writeable is False): pass a writable array, or no out")


def _result(acc: np.ndarray, fd: Format, bits: bool, out: Optional[np.ndarray]) -> np.ndarray:
    """D from its patterns ``acc``: values of D's format (patterns with ``bits``), written into ``out`` if given."""
    result = acc if bits else from_patterns(acc, fd.name)
    if out is not None:
        out[...] = result
        return out
    return result


def _scales(model: Model, scale_a: object, scale_b: object, M: int, N: int, K: int, kstep: int, nk: int
            ) -> tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    """Scale patterns padded to whole instructions: SA (M, nk * per), SB (nk * per, N); (None, None) unscaled."""
    from .simulate import _as_bits, _check_scales

    _check_scales(model, scale_a, scale_b)
    if model.scale_fmt is None:
        return None, None
    block = model.block or kstep
    if kstep % block:
        raise InputError(f"k = {kstep} is not a multiple of the scale block ({block})")
    sf = get_format(model.scale_fmt)
    need = -(-K // block)
    sa, sb = _as_bits("scale_a", scale_a, sf, 2), _as_bits("scale_b", scale_b, sf, 2)
    if sa.shape != (M, need) or sb.shape != (need, N):
        raise InputError(f"scale_a must be ({M}, {need}) and scale_b ({need}, {N}) (one scale per {block} values of K); "
                         f"got {sa.shape} and {sb.shape}")
    per = nk * kstep // block
    SA = np.pad(sa, ((0, 0), (0, per - need)), mode="edge").astype(dtype_for(sf))  # padded lanes are zero; any scale will do
    SB = np.pad(sb, ((0, per - need), (0, 0)), mode="edge").astype(dtype_for(sf))
    return np.ascontiguousarray(SA), np.ascontiguousarray(SB)


Runner = Callable[[np.ndarray, np.ndarray, np.ndarray, int, Optional[np.ndarray], Optional[np.ndarray]], None]


#: Chained steps along K that NumPy runs one call each (a few ms a call) before a compile (1-6 s) pays off.
NUMPY_MAX_CHAIN = 32


def _native_runner(model: Model, kstep: int, backend: str, steps: int, chain: int) -> Optional[Runner]:
    """The compiled GEMM of ``steps`` instructions (``chain`` of them along K), or None where NumPy answers: no kernel,
    or (``auto``) no kernel built yet, fewer steps than AUTO_MIN_ROWS and a chain of at most NUMPY_MAX_CHAIN (a compile
    would cost more than the GEMM; a long chain, e.g. K = 8192 in 512 steps of 16, costs NumPy seconds)."""
    from .native.dot import AUTO_MIN_ROWS
    from .native.kernels import is_built, try_kernel

    if backend == "auto" and steps < AUTO_MIN_ROWS and chain <= NUMPY_MAX_CHAIN and not is_built(model, kstep):
        return None
    kern = try_kernel(model, kstep)  # None (after one warning where no compiler is found): NumPy answers
    if kern is None:
        return None

    def run(A: np.ndarray, B: np.ndarray, acc: np.ndarray, nk: int, SA: Optional[np.ndarray], SB: Optional[np.ndarray]) -> None:
        M, N = acc.shape
        kern.gemm(M, N, nk, A.ctypes.data, A.strides[0] // A.itemsize, B.ctypes.data, B.strides[0] // B.itemsize,
                  acc.ctypes.data, acc.strides[0] // acc.itemsize,
                  None if SA is None else SA.ctypes.data, 0 if SA is None else SA.strides[0] // SA.itemsize,
                  None if SB is None else SB.ctypes.data, 0 if SB is None else SB.strides[0] // SB.itemsize)
    return run


def _numpy_runner(model: Model, kstep: int) -> Runner:
    from .simulate import simulate_dot

    def p(x: np.ndarray) -> np.ndarray:  # patterns as simulate_dot takes them: int64, uint64 for 64-bit formats
        return x if x.dtype == np.uint64 else x.astype(np.int64)

    def run(A: np.ndarray, B: np.ndarray, acc: np.ndarray, nk: int, SA: Optional[np.ndarray], SB: Optional[np.ndarray]) -> None:
        M, N = acc.shape
        per = 0 if SA is None else SA.shape[1] // nk
        for s in range(nk):
            ks = slice(s * kstep, (s + 1) * kstep)
            a = np.repeat(p(A[:, ks]), N, axis=0)
            b = np.tile(p(B[ks].T), (M, 1))
            kw = {}
            if SA is not None and SB is not None:
                kw = {"scale_a": np.repeat(SA[:, s * per:(s + 1) * per].astype(np.int64), N, axis=0),
                      "scale_b": np.tile(SB[s * per:(s + 1) * per].T.astype(np.int64), (M, 1))}
            d = simulate_dot(model, None, a, b, p(acc.reshape(-1)), backend="numpy", **kw)
            acc[...] = d.reshape(M, N)
    return run
