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
from typing import Any, Callable, Optional, Union

import numpy as np

from .arrays import check_array_type, check_fits_in_memory, from_patterns, to_patterns, value_dtype
from .catalogue import ARCHS, lookup, model_of, warn_if_provisional
from .errors import InputError, InputTypeError, check_flag, spell
from .formats import Format, carried_in, get_format
from .instr_names import named_shape
from .limits import check_int
from .models import Model
from .rounded import add_rounded, fma_rounded, mul_rounded, patterns_rne, round_f32, round_to
from .sampling import dtype_for
from .scheme import Scheme, as_scheme

__all__ = ["matmul", "instruction_k", "natural_dtype"]

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


def _patterns(name: str, x: object, fmt: Format, bits: bool, round: Optional[str], scalar: bool = False) -> np.ndarray:
    """``x`` as an array (at least 1-D unless ``scalar``) of ``fmt`` patterns: validated bit patterns (bits=True; a
    torch tensor's signed ints are read as the unsigned patterns of the same width) or converted values."""
    check_array_type(name, x)
    if bits and _is_torch(x):
        arr = x.detach().cpu().numpy()  # type: ignore[attr-defined]
        x = arr.view(f"u{arr.dtype.itemsize}") if arr.dtype.kind == "i" else arr
    if bits:
        from .simulate import as_bits

        nd = getattr(x, "ndim", None)
        if not isinstance(nd, int):
            try:
                nd = np.ndim(x)
            except (ValueError, TypeError, RuntimeError):
                nd = 2  # the reader names what is wrong
        arr = as_bits(name, x, fmt, max(nd, 1)) if nd else as_bits(name, np.reshape(x, 1), fmt, 1).reshape(())
    else:
        arr = to_patterns(x, fmt, name=name, round=round)
    if arr.ndim == 0 and not scalar:
        raise InputError(f"{name} is a scalar: matmul takes arrays of at least one dimension (as np.matmul)")
    return arr


def _is_torch(x: object) -> bool:
    return type(x).__module__.startswith("torch")


def matmul(
    target: Union[str, Model],
    instr: Optional[str],
    A: object,
    B: object,
    C: object = None,
    *,
    scheme: Union[None, str, Scheme] = None,
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
) -> Any:
    """D = A @ B + C as a GEMM kernel with ``instr`` on ``target`` computes it, shaped as ``np.matmul``.

    ``A`` (..., M, K), ``B`` (..., K, N): batch dimensions broadcast; a 1-D
    ``A`` is a row, a 1-D ``B`` a column, and that dimension is dropped from
    D (np.matmul's rules).  ``C``: None (+0) or broadcast to D's shape.
    Real-valued arrays (NumPy float64/32/16, ml_dtypes, torch) are converted
    to the instruction's formats exactly (a value not representable is an
    error) unless ``round`` (or the scheme's) rounds them
    (``rne``/``rna``/``rz``/``ru``/``rd``); bit patterns with ``bits=True``.
    ``scheme``: the kernel around the instruction (:class:`smtmma.scheme.Scheme`,
    or its spec string / preset name: promotion, split-K, alpha/beta).
    ``scale_a`` (..., M, K/block) and ``scale_b`` (..., K/block, N): block-scale
    patterns of block-scaled instructions.  ``k``: values per instruction
    (default :func:`instruction_k`).  ``jobs``: threads (default: every
    core).  ``backend``: "auto"/"native" (compiled) or "numpy".
    ``progress(done_rows, rows)`` is called as rows of D complete.
    ``device="cuda"``: the instruction chain as generated CUDA C on a GPU
    through CuPy (the ``smtmma[cuda]`` extra; an error where there is none).

    Returns D in D's format as the kind of array given: NumPy (float32 for
    FP32 and E8M13 results, float16 for FP16, float64 for FP64, ml_dtypes
    for BF16/FP8), or a torch tensor (same dtype, on A's torch device) when
    A or B is one; the patterns (unsigned NumPy ints; torch: the signed int
    of the same width) with ``bits=True``.  ``out``: a NumPy array of that
    dtype and D's shape to write into.
    """
    if backend not in ("auto", "native", "numpy"):
        raise InputError(f"backend must be one of auto, native, numpy, got {backend!r}")
    if device not in ("cpu", "cuda"):
        raise InputError(f"device must be cpu or cuda, got {device!r}")
    if jobs is not None:
        check_int("jobs", jobs, 1, 4096, " (threads)")
    if progress is not None and not callable(progress):
        raise InputTypeError(f"progress must be a function progress(done_rows, rows), got {type(progress).__name__}")
    check_flag("bits", bits)
    sch = as_scheme(scheme)
    if round is not None and sch.round is not None and round != sch.round:
        raise InputError(f"round={round!r} and the scheme's round={sch.round!r} disagree: give one")
    round = round if round is not None else sch.round
    model = model_of(target, instr, op)
    warn_if_provisional(target)
    kstep = instruction_k(target, instr, op) if k is None else k
    if isinstance(kstep, np.integer):
        kstep = int(kstep)
    if not isinstance(kstep, int) or isinstance(kstep, bool) or not 1 <= kstep <= 1024:
        raise InputError(f"{spell('k')} must be an integer in 1..1024 (values per instruction), got {kstep!r}")
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    fd = get_format(model.d_fmt)
    fd = carried_in(fd)
    if fc.name != fd.name:
        raise InputError(f"a GEMM feeds D back as C, but this instruction reads C as {fc.name} and returns {fd.name} "
                         "(use the instruction with C and D in one format)")
    if out is not None and (_is_torch(A) or _is_torch(B)):
        raise InputTypeError("out takes a NumPy array; with torch tensors in, use the tensor matmul returns")
    torch_ref = A if _is_torch(A) else B if _is_torch(B) else None
    ab_bits = bits
    if model.scale_fmt and not bits and scale_a is None and scale_b is None and sch.block_scale is None:
        raise InputError(f"{model.a_fmt} x {model.b_fmt} with {model.scale_fmt} block scales: pass scale_a and scale_b "
                         f"(A and B then hold {model.a_fmt}/{model.b_fmt} values), or a scheme with "
                         "block_scale='ocp-mx' or 'amax' to quantize real-valued A and B")
    if sch.block_scale is not None:
        A, B, scale_a, scale_b = _quantized(model, sch.block_scale, A, B, scale_a, scale_b, bits, kstep)
        ab_bits = True  # A and B are patterns now
    Am = _patterns("A", A, fa, ab_bits, round).astype(dtype_for(fa), copy=False)  # the kernels read these widths
    Bm = _patterns("B", B, fb, ab_bits, round).astype(dtype_for(fb), copy=False)
    row, col = Am.ndim == 1, Bm.ndim == 1
    if row:
        Am = Am[None, :]
    if col:
        Bm = Bm[:, None]
    M, K = Am.shape[-2:]
    K2, N = Bm.shape[-2:]
    if K2 != K:
        raise InputError(f"A is {_shape(Am.shape, row)} but B is {_shape(Bm.shape, col, True)}: "
                         f"A's last dimension ({K}) must equal B's {'only' if col else 'second-to-last'} dimension ({K2})")
    try:
        batch = np.broadcast_shapes(Am.shape[:-2], Bm.shape[:-2])
    except ValueError:
        raise InputError(f"the batch dimensions of A {Am.shape[:-2]} and B {Bm.shape[:-2]} do not broadcast") from None
    if K == 0:
        raise InputError("K must be at least 1")
    shape = batch + ((M,) if not row else ()) + ((N,) if not col else ())  # D's shape, as np.matmul's
    tdt = np.dtype(dtype_for(fd))
    nb = int(np.prod(batch, dtype=np.int64)) if batch else 1
    _check_out(out, shape, tdt if bits else natural_dtype(fd))
    per_d = 2 * tdt.itemsize + (0 if C is None else 8)
    check_fits_in_memory(nb * M * N * per_d + (M + N) * K * 8, "D (" + " x ".join(map(str, shape)) + ": A's rows x B's columns)")
    plan = _plan(sch, model, fd, K, kstep)
    Cm = None
    if C is not None:
        Cm = _patterns("C", C, fc, bits, round, scalar=True)
        try:
            Cm = np.broadcast_to(Cm, shape)
        except ValueError:
            raise InputError(f"C of shape {Cm.shape} does not broadcast to D's shape {shape}") from None
        Cm = Cm.reshape(batch + (M, N))
    SA, SB = _batched_scales(model, scale_a, scale_b, batch, M, N, K, kstep)
    Ab, Bb = np.broadcast_to(Am, batch + (M, K)), np.broadcast_to(Bm, batch + (K, N))  # views: nothing copied
    at = lambda i: np.unravel_index(i, batch) if batch else ()  # noqa: E731  (batch index i -> its position)
    D = np.empty((nb, M, N), tdt)
    if D.size == 0:  # M, N or a batch dimension is 0: nothing to compute (np.matmul's empty result)
        return _result(D.reshape(shape), fd, bits, out, torch_ref)
    jobs = max(1, int(jobs or os.cpu_count() or 1))
    rows = nb * M
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, rows)

    engine = _Engine(model, kstep, backend, device, nb * M * N * (-(-K // kstep)), -(-K // kstep))
    rows_per = M if device == "cuda" else ROWS_PER_ITEM  # a GPU takes whole GEMMs; the CPU's threads take row blocks
    items = [(i, r0, min(M, r0 + rows_per)) for i in range(nb) for r0 in range(0, M, rows_per)]

    def work(item: tuple[int, int, int]) -> int:
        i, r0, r1 = item
        p = at(i)
        D[i, r0:r1] = _run_scheme(engine, sch, plan, Ab[p][r0:r1], Bb[p], None if Cm is None else Cm[p][r0:r1],
                                  None if SA is None else SA[i, r0:r1], None if SB is None else SB[i], fc, fd, tdt)
        return r1 - r0

    if device == "cuda" or jobs == 1 or len(items) == 1:
        for it in items:
            tick(work(it))
    else:
        with ThreadPoolExecutor(min(jobs, len(items))) as pool:
            for n in pool.map(work, items):
                tick(n)
    D = D.reshape(shape)
    return _result(D, fd, bits, out, torch_ref)


def _quantized(model: Model, rule: str, A: object, B: object, scale_a: object, scale_b: object, bits: bool, kstep: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Real A and B quantized in blocks along K (:mod:`smtmma.quantize`): (A, B) patterns and their scales."""
    from .quantize import quantize_blocks

    if model.scale_fmt is None:
        raise InputError(f"block_scale={rule!r} quantizes for block-scaled instructions; {model.describe()} takes no scales")
    if bits or scale_a is not None or scale_b is not None:
        raise InputError(f"block_scale={rule!r} computes the scales from real-valued A and B: give it without "
                         "scale_a/scale_b and bits")
    block = model.block or kstep
    out = []
    for name, x, fmt, along_rows in (("A", A, model.a_fmt, True), ("B", B, model.b_fmt, False)):
        check_array_type(name, x)
        v = from_patterns(to_patterns(x, "fp64", name=name), "fp64")  # every real value, exactly (float64)
        if v.ndim == 1:
            v = v[None, :] if along_rows else v[:, None]
        w = v if along_rows else np.swapaxes(v, -1, -2)
        e, sc = quantize_blocks(w, fmt, model.scale_fmt, block, rule, name=name)
        out.append((e, sc) if along_rows else (np.swapaxes(e, -1, -2), np.swapaxes(sc, -1, -2)))
    (ea, sa), (eb, sb) = out
    if np.ndim(A) == 1:
        ea = ea[0]
    if np.ndim(B) == 1:
        eb = eb[:, 0]
    return ea, eb, sa, sb


def _shape(s: tuple[int, ...], one_d: bool, col: bool = False) -> str:
    if one_d:
        return f"1-D of length {s[-2] if col else s[-1]}"
    return "x".join(str(x) for x in s)


def natural_dtype(fmt: Union[str, Format]) -> np.dtype:
    """The narrowest dtype holding every value of ``fmt`` exactly, as matmul returns D and a callable device receives
    operands: fp16/fp32/fp64 NumPy's (E8M13 and TF32 in float32), BF16, FP8, FP6 and FP4 ml_dtypes' where the
    installed version has the type, other formats float64."""
    fmt = get_format(fmt)
    ml = _ML_DTYPES.get(fmt.name)
    if ml is not None:
        try:
            import ml_dtypes
        except ImportError:  # optional: float64 holds every value of these formats exactly
            return np.dtype(np.float64)
        if hasattr(ml_dtypes, ml):
            return np.dtype(getattr(ml_dtypes, ml))
    return value_dtype(fmt)


#: Formats NumPy has no dtype for, and the ml_dtypes type holding them.
_ML_DTYPES = {"bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
              "e5m2fnuz": "float8_e5m2fnuz", "e2m1": "float4_e2m1fn", "e2m3": "float6_e2m3fn", "e3m2": "float6_e3m2fn"}
#: Formats torch has a dtype for.
_TORCH_DTYPES = {"fp16": "float16", "fp32": "float32", "fp64": "float64", "bf16": "bfloat16",
                 "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz", "e5m2fnuz": "float8_e5m2fnuz"}


class _Plan:
    """The slices of K (split-K) and, inside each, the chains (promotion): [(k0, k1), ...] per slice."""

    def __init__(self, slices: list[list[tuple[int, int]]], promote: bool, wide: Format) -> None:
        self.slices, self.promote, self.wide = slices, promote, wide


def _plan(sch: Scheme, model: Model, fd: Format, K: int, kstep: int) -> _Plan:
    """Where chains start and stop along K under scheme ``sch``; InputError for a scheme this GEMM cannot carry."""
    nk = -(-K // kstep)  # instructions along K
    if sch.split_k > nk:
        raise InputError(f"split_k={sch.split_k} is larger than K = {K}: a slice would be empty" if sch.split_k > K else
                         f"split_k={sch.split_k} is more than the {nk} instructions along K (K = {K}, k = {kstep}): "
                         "a slice would be empty")
    cuts = [s * nk // sch.split_k * kstep for s in range(sch.split_k + 1)]  # whole instructions, as equal as they can be
    bounds = [(cuts[s], min(K, cuts[s + 1])) for s in range(sch.split_k)]
    P = sch.promote_every
    if P is not None and P % kstep:
        raise InputError(f"promote_every={P} is not a multiple of the instruction's k ({kstep}): a chain is made of "
                         "whole instructions")
    slices = []
    for a, b in bounds:
        step = P if P is not None else b - a
        slices.append([(c, min(b, c + step)) for c in range(a, b, step)])
    wide = get_format("fp64" if fd.name == "fp64" else "fp32")
    return _Plan(slices, P is not None, wide)


class _Engine:
    """Runs the instruction chain over a range of K for a block of rows of one GEMM, from a given accumulator."""

    def __init__(self, model: Model, kstep: int, backend: str, device: str, steps: int, chain: int) -> None:
        self.model, self.kstep, self.device = model, kstep, device
        self.run: Optional[Runner] = None
        if device == "cpu":
            self.run = _native_runner(model, kstep, backend, steps, chain) if backend != "numpy" else None
            if self.run is None:
                self.run = _numpy_runner(model, kstep)

    def chain(self, A: np.ndarray, B: np.ndarray, acc: np.ndarray, k0: int, k1: int,
              SA: Optional[np.ndarray], SB: Optional[np.ndarray]) -> np.ndarray:
        """acc (patterns, modified in place) after the instructions over K values k0..k1 (padded with zeros)."""
        kstep = self.kstep
        nk = -(-(k1 - k0) // kstep)
        M, N = acc.shape
        whole = k1 - k0 == nk * kstep  # whole instructions: the kernels read strided views, nothing is copied
        if whole and A.strides[1] == A.itemsize:
            Ap = A[:, k0:k1]
        else:
            Ap = np.zeros((M, nk * kstep), A.dtype)
            Ap[:, :k1 - k0] = A[:, k0:k1]
        if whole and B.strides[1] == B.itemsize:
            Bp = B[k0:k1]
        else:
            Bp = np.zeros((nk * kstep, N), B.dtype)
            Bp[:k1 - k0] = B[k0:k1]
        sa = sb = None
        if SA is not None and SB is not None:
            block = self.model.block or kstep
            j0, per = k0 // block, nk * kstep // block
            sa = np.ascontiguousarray(SA[:, j0:j0 + per])
            sb = np.ascontiguousarray(SB[j0:j0 + per])
        if self.device == "cuda":
            from .native.cuda import gemm_cuda

            acc[...] = gemm_cuda(self.model, kstep, Ap, Bp, acc, sa, sb)
            return acc
        assert self.run is not None
        self.run(Ap, Bp, acc, nk, sa, sb)
        return acc


def _run_scheme(engine: _Engine, sch: Scheme, plan: _Plan, A: np.ndarray, B: np.ndarray, C: Optional[np.ndarray],
                SA: Optional[np.ndarray], SB: Optional[np.ndarray], fc: Format, fd: Format, tdt: np.dtype) -> np.ndarray:
    """D patterns (M, N) of one GEMM under the plan (module :mod:`smtmma.scheme` says what each field does)."""
    M, N = A.shape[0], B.shape[1]
    epilogue = sch.c_in == "epilogue"
    partials = []
    for s, chains in enumerate(plan.slices):
        wide = None
        for j, (k0, k1) in enumerate(chains):
            first = s == 0 and j == 0
            acc = np.array(C, dtype=tdt, order="C") if (first and C is not None and not epilogue) else np.zeros((M, N), tdt)
            engine.chain(A, B, acc, k0, k1, SA, SB)
            if not plan.promote:
                wide = acc
                continue
            v = _values(acc, fd)  # added into FP32 (FP64) from +0 by IEEE RNE additions
            wide = (np.zeros((M, N), v.dtype) if wide is None else wide) + v
        partials.append(wide if not plan.promote else wide.astype(np.float64))
    if plan.promote or len(partials) > 1 or epilogue:
        vals = [p if plan.promote else from_patterns(p, fd, dtype=np.float64) for p in partials]
        if len(vals) > 1:
            pf = get_format(sch.partial)
            exact32 = fd.name != "fp64"  # every value of a D of up to 32 bits is a float32
            vals = [round_f32(v.astype(np.float32), pf).astype(np.float64) if exact32 else round_to(v, pf) for v in vals]
            x = _reduce(vals, pf, sch.reduction)
        else:
            x = vals[0]
        if epilogue:  # CUTLASS LinearCombination: fma(alpha, X, beta * C), or alpha * X without a source
            ef = plan.wide
            alpha = float(round_to(np.array(sch.alpha), ef)[()])
            beta = float(round_to(np.array(sch.beta), ef)[()])
            x = round_to(x, ef)
            if beta == 0 or C is None:  # fma(alpha, X, -0): the product alone, rounded once
                x = x if alpha == 1 else mul_rounded(alpha, x, ef)
            else:
                cv = from_patterns(C, fc, dtype=np.float64)
                u = cv if beta == 1 else mul_rounded(beta, cv, ef)
                x = add_rounded(x, u, ef) if alpha == 1 else fma_rounded(alpha, x, u, ef)
        return patterns_rne(x, fd).astype(tdt, copy=False)
    return partials[0]


def _values(acc: np.ndarray, fd: Format) -> np.ndarray:
    """D patterns ``acc`` as values in the promotion accumulator's dtype: float32 (every D of up to 32 bits is exact
    there), float64 for an FP64 D."""
    if fd.name == "fp64":
        return acc.view(np.float64)
    if fd.name == "fp32":
        return acc.view(np.float32)
    if fd.name == "fp16":
        return acc.view(np.float16).astype(np.float32)
    return from_patterns(acc, fd, dtype=np.float32)


def _reduce(vals: list[np.ndarray], fmt: Format, order: str) -> np.ndarray:
    """The partials summed in ``fmt``, every addition rounded: left to right, or a balanced pairwise tree."""
    if order == "sequential":
        x = vals[0]
        for v in vals[1:]:
            x = add_rounded(x, v, fmt)
        return x
    while len(vals) > 1:
        vals = [add_rounded(vals[i], vals[i + 1], fmt) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]
    return vals[0]


def _check_out(out: object, shape: tuple[int, ...], dtype: np.dtype) -> None:
    """``out`` (None, or a writable array of ``shape`` and ``dtype``); InputError before any work otherwise."""
    if out is None:
        return
    if not isinstance(out, np.ndarray) or isinstance(out, np.ma.MaskedArray) or out.shape != shape or out.dtype != dtype:
        got = f"{out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
        raise InputTypeError(f"out must be a {dtype} array of shape {shape}, got a {got}")
    if not out.flags.writeable:
        raise InputError("out is read-only (out.flags.writeable is False): pass a writable array, or no out")


def _result(D: np.ndarray, fd: Format, bits: bool, out: Optional[np.ndarray], torch_ref: object) -> Any:
    """D from its patterns: values of D's format (patterns with ``bits``), in ``out`` if given, a tensor like ``torch_ref``."""
    if torch_ref is not None:
        return _to_torch(D, fd, bits, torch_ref)
    result = D if bits else from_patterns(D, fd, dtype=natural_dtype(fd))
    if out is not None:
        out[...] = result
        return out
    return result


def _to_torch(D: np.ndarray, fd: Format, bits: bool, like: Any) -> Any:
    """D's patterns as a torch tensor on ``like``'s device: D's dtype, or (bits) the signed int of the same width."""
    import torch

    signed = np.ascontiguousarray(D).reshape(-1).view(np.dtype(f"int{8 * D.dtype.itemsize}"))
    t = torch.from_numpy(signed.copy()).reshape(D.shape)  # a 0-d D stays 0-d
    name = _TORCH_DTYPES.get(fd.name)
    if not bits:
        t = t.view(getattr(torch, name)) if name and hasattr(torch, name) else \
            torch.from_numpy(from_patterns(D, fd, dtype=np.float64))
    return t.to(like.device)


def _batched_scales(model: Model, scale_a: object, scale_b: object, batch: tuple[int, ...], M: int, N: int, K: int,
                    kstep: int) -> tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    """Scale patterns per GEMM of the batch, padded to whole instructions: (nb, M, per), (nb, per, N); (None, None)."""
    from .simulate import as_bits, check_scales

    check_scales(model, scale_a, scale_b)
    if model.scale_fmt is None:
        return None, None
    block = model.block or kstep
    if kstep % block:
        raise InputError(f"k = {kstep} is not a multiple of the scale block ({block})")
    sf = get_format(model.scale_fmt)
    need = -(-K // block)
    nd_a, nd_b = max(np.ndim(scale_a), 2), max(np.ndim(scale_b), 2)
    sa, sb = as_bits("scale_a", scale_a, sf, nd_a), as_bits("scale_b", scale_b, sf, nd_b)
    if sa.shape[-2:] != (M, need) or sb.shape[-2:] != (need, N):
        raise InputError(f"scale_a must be (..., {M}, {need}) and scale_b (..., {need}, {N}) (one scale per {block} "
                         f"values of K); got {sa.shape} and {sb.shape}")
    try:
        sa = np.broadcast_to(sa, batch + (M, need))
        sb = np.broadcast_to(sb, batch + (need, N))
    except ValueError:
        raise InputError(f"the batch dimensions of scale_a {sa.shape[:-2]} and scale_b {sb.shape[:-2]} do not "
                         f"broadcast to A @ B's {batch}") from None
    nb = int(np.prod(batch, dtype=np.int64)) if batch else 1
    per = -(-K // kstep) * kstep // block
    dt = dtype_for(sf)  # padded lanes are zero; any scale will do
    SA = np.pad(sa.reshape(nb, M, need), ((0, 0), (0, 0), (0, per - need)), mode="edge").astype(dt)
    SB = np.pad(sb.reshape(nb, need, N), ((0, 0), (0, per - need), (0, 0)), mode="edge").astype(dt)
    return SA, SB


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
