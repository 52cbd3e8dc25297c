"""The MMA models (Alg. 2, 4, 5 of the MMA-Sim paper) run on the concrete interpretation.

:func:`simulate_dot` is the simulator's entry point: a batch of dot
products ``d = c + sum_k a_k b_k`` as bit patterns in, D bit patterns out.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Union

import numpy as np

from .catalogue import ARCHS, lookup, model_of, warn_if_provisional
from .encodings.algebra import Algebra, Int
from .encodings.concrete import NumpyAlgebra
from .encodings.efdpa import efdpa
from .encodings.fields import Unpacked, unpack
from .encodings.rounding import pack_special, round_pack
from .encodings.fma import fma
from .encodings.addmul import add, flush_input, mul
from .encodings.gstfdpa import gstfdpa
from .encodings.gtrfdpa import gtrfdpa
from .encodings.tfdpa import tfdpa
from .encodings.trfdpa import trfdpa
from .arrays import check_array_type
from .errors import InputError, InputTypeError, NotRepresentableError
from .instr_names import named_shape
from .formats import Format, carried_in, clip, get_format
from .models import Model

__all__ = ["issue_chunks", "simulate_dot", "simulate_mma", "run_model", "decode_input", "output_format", "nan_pattern", "CHUNK_ROWS", "as_bits",
           "check_scales", "chunk_order", "converted_pattern", "fdpa_chunks", "lane_scale_index", "lane_scales"]

_BACKENDS = ("auto", "native", "numpy")

#: Rows simulated per NumPy pass (keeps the working set in cache).
CHUNK_ROWS = 1 << 14


def output_format(model: Model) -> Format:
    """The D format of the model (its bits are what the model returns; E8M13 results come in this FP32 format)."""
    return get_format(model.d_fmt)


def nan_pattern(model: Model, fmt: Format) -> int:
    """The NaN pattern a model returns in format ``fmt`` (§4.2: NVIDIA FDPAs use 0x7FFFFFFF / 0x7FFF)."""
    if model.nan == "nvidia":
        return (1 << (fmt.bits - 1)) - 1
    return fmt.nan_bits()


def _dtype_for(bits: int) -> type:
    for width, dt in ((8, np.uint8), (16, np.uint16), (32, np.uint32), (64, np.uint64)):
        if bits <= width:
            return dt
    raise InputError(f"no unsigned dtype for {bits} bits")


Lanes = Sequence[Int]


def _fdpa_step(model: Model) -> Callable[..., Int]:
    """The FDPA of one chunk: (alg, a, b, c, scale_a, scale_b) -> D bits."""
    out = output_format(model)
    kind = model.kind
    if kind == "e-fdpa":
        return lambda alg, a, b, c, sa, sb: efdpa(alg, a, b, c, out=out, nan_bits=nan_pattern(model, out))
    conv = model.conversion
    rfmt = get_format(conv.fmt)
    nan_bits = nan_pattern(model, carried_in(rfmt))
    if kind in ("t-fdpa", "st-fdpa"):
        return lambda alg, a, b, c, sa, sb: tfdpa(
            alg, a, b, c, F=model.F, out=rfmt, mode=conv.mode, nan_bits=nan_bits,
            carry_bits=model.carry_bits, emax_floor=model.emax_floor, scale_a=sa, scale_b=sb,
            zero_emax=model.zero_emax, ieee_zero=model.ieee_zero,
        )
    if kind == "gst-fdpa":
        return lambda alg, a, b, c, sa, sb: gstfdpa(
            alg, a, b, c, sa, sb, G=model.G, F=model.F, out=rfmt, mode=conv.mode, nan_bits=nan_bits,
            carry_bits=model.carry_bits, emax_floor=model.emax_floor,
        )
    if kind == "tr-fdpa":
        return lambda alg, a, b, c, sa, sb: trfdpa(alg, a, b, c, F=model.F, F2=model.F2, out=rfmt, mode=conv.mode, nan_bits=nan_bits,
                                                            sum_rz=model.sum_rz)
    if kind == "gtr-fdpa":
        return lambda alg, a, b, c, sa, sb: gtrfdpa(alg, a, b, c, F=model.F, F2=model.F2, out=rfmt, mode=conv.mode, nan_bits=nan_bits,
                                                            sum_rz=model.sum_rz)
    raise AssertionError(kind)


def run_model(
    alg: Algebra,
    model: Model,
    a: Lanes,
    b: Lanes,
    c: Int,
    scale_a: Optional[Lanes] = None,
    scale_b: Optional[Lanes] = None,
) -> Int:
    """D bits of one dot product of length K = len(a) under ``model``, on any interpretation.

    ``a``, ``b``: K pattern terms; ``c``: the accumulator pattern in C's
    format; scales: one pattern per block of ``model.block`` lanes.  When C
    and D differ in format (``f16f32c16``: fp16 C, fp32 D), C is first
    widened exactly to D's format (as microsoft/MMA-Sim
    mmasim/simulator/nv_ptx.py does: a subnormal fp16 C becomes a normal fp32
    with its own exponent, which matters for e_max); each later step of a
    chain reads the previous D.
    """
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    fd = output_format(model)
    fd = carried_in(fd)  # the format a chained step reads back (E8M13 in FP32)
    K = len(a)
    if K != len(b):
        raise InputError(f"a has {K} values but b has {len(b)}")
    dec_a = [decode_input(alg, fa, x, model.via) for x in a]
    dec_b = [decode_input(alg, fb, x, model.via) for x in b]
    if model.ftz_inputs:  # FlushSubnormal on every input (Alg. 2 lines 1-3), in the layout the unit reads (after via)
        dec_a = [flush_input(alg, u) for u in dec_a]
        dec_b = [flush_input(alg, u) for u in dec_b]
        c = flush_input_bits(alg, fc, c)
    alg.note("inputs as the unit reads them")
    for name, dec in (("a", dec_a), ("b", dec_b)):
        for k, u in enumerate(dec):
            alg.note(f"{name}[{k}]", fields=u)
    alg.note("c", c, fmt=fc)
    dec_c = decode_input(alg, fc, c, fd.name)  # C as the first step reads it: widened exactly to D's format
    kind = model.kind
    if kind == "fma":  # Alg. 4: a chain of standard FMAs
        d = c
        for k, (x, y) in enumerate(zip(dec_a, dec_b)):
            alg.note(f"FMA {k + 1} of {K} (lane {k})")
            d = fma(alg, x, y, dec_c if k == 0 else unpack(alg, fd, d), out=fd, nan=model.nan if model.nan == "propagate" else "ieee")
            alg.note("result", d, fmt=fd)
        return d
    if kind == "ftz-addmul":  # Alg. 2
        f32 = get_format("fp32")
        nan32 = nan_pattern(model, f32)
        fadd = lambda x, y: add(alg, unpack(alg, f32, x), unpack(alg, f32, y), out=f32, ftz=True, nan_bits=nan32)  # noqa: E731
        P = model.P
        assert P in (2, 4)
        d = c
        zero = alg.const(0)
        for k0 in range(0, K, P):
            p = [mul(alg, dec_a[k], dec_b[k], out=f32, ftz=True, nan_bits=nan32) if k < K else zero for k in range(k0, k0 + P)]
            s = fadd(p[0], p[1])
            if P == 4:
                s = fadd(s, fadd(p[2], p[3]))
            alg.note(f"FTZ-AddMul of lanes {k0}-{k0 + P - 1}")
            alg.note("sum of the products", s, fmt=f32)
            d = fadd(d, s)
            alg.note("accumulator", d, fmt=f32)
        return d
    # Alg. 5: FDPAs over consecutive chunks of L = min(K, L_max), the last padded with zeros; with ``issue``,
    # each instruction's lanes are one Alg. 5 of their own, and the D of one is the C of the next (issue_chunks).
    step = _fdpa_step(model)
    zero_a, zero_b = decode_input(alg, fa, alg.const(0), model.via), decode_input(alg, fb, alg.const(0), model.via)
    per_lane_sa, per_lane_sb = lane_scales(alg, model, scale_a, scale_b, K)
    issues = issue_chunks(model, K)
    d = c
    for i, (start, chunks) in enumerate(issues):
        if len(issues) > 1:
            real = sorted(k for ks in chunks for k in ks if k is not None)
            alg.note(f"instruction {i + 1} of {len(issues)} (lanes {_lanes(real, K)})")
        d = _fdpas(alg, model, step, chunks, dec_a, dec_b, dec_c if start == 0 else unpack(alg, fd, d), c if start == 0 else d,
                   zero_a, zero_b, per_lane_sa, per_lane_sb, fd)
    return d


def _fdpas(alg: Algebra, model: Model, step: Callable[..., Int], chunks: list[list[Optional[int]]], dec_a: list,
           dec_b: list, dec_c: Unpacked, c: Int, zero_a: Unpacked, zero_b: Unpacked, dec_sa: Optional[list],
           dec_sb: Optional[list], fd: Format) -> Int:
    """Alg. 5 over one instruction's FDPAs (``chunks``: the lanes each reads, None a zero pad; :func:`issue_chunks`),
    C first or, with ``c_after``, added last by an RNE add.  ``dec_sa``/``dec_sb``: each lane's scale."""
    K = len(dec_a)
    d = alg.const(0) if model.c_after else c
    last = max(k for ks in chunks for k in ks if k is not None)  # a pad reads the issue's last lane's scales
    for j, ks in enumerate(chunks):
        ca = [dec_a[k] if k is not None else zero_a for k in ks]
        cb = [dec_b[k] if k is not None else zero_b for k in ks]
        sa = sb = None
        if dec_sa is not None and dec_sb is not None:
            sa = [dec_sa[last if k is None else k] for k in ks]
            sb = [dec_sb[last if k is None else k] for k in ks]
        alg.note(f"FDPA {j + 1} of {len(chunks)} (lanes {_lanes(ks, K)})")
        d = step(alg, ca, cb, dec_c if j == 0 and not model.c_after else unpack(alg, fd, d), sa, sb)
        alg.note("FDPA result", d, fmt=fd)
    if model.c_after:  # C joins last, through an RNE add of the output format
        alg.note("C added last")
        d = add(alg, unpack(alg, fd, d), dec_c, out=fd, ftz=False, nan_bits=nan_pattern(model, fd))
        alg.note("FDPA result plus C (RNE)", d, fmt=fd)
    return d


def chunk_order(lanes: int, width: int, L: int, interleave: Optional[int]) -> list[list[int]]:
    """The lanes (0-based; ``lanes`` and up are zero padding) each FDPA of one instruction reads, in order (Alg. 5):
    ceil(max(lanes, width) / L) chunks of L; with ``interleave``, the lanes of a register stay together and
    registers alternate between chunks."""
    chunks = -(-max(lanes, width) // L)
    order = list(range(chunks * L))
    if interleave:
        order.sort(key=lambda k: ((k // interleave) % chunks, k))
    return [order[j * L:(j + 1) * L] for j in range(chunks)]


def issue_chunks(model: Model, K: int) -> list[tuple[int, list[list[Optional[int]]]]]:
    """The FDPAs :func:`run_model` chains for K lanes (Alg. 5), per instruction issue (``model.issue`` lanes each;
    one issue without): the issue's first lane and, FDPA by FDPA, the lanes it reads (0-based in the whole dot;
    None: a zero pad).  An issue's FDPAs read L lanes each (min(K, L) without ``issue``), interleaved by register
    when the model says so (:func:`chunk_order`)."""
    assert model.L is not None
    width = model.issue or K
    L = model.L if model.issue else max(1, min(K, model.L))
    out: list[tuple[int, list[list[Optional[int]]]]] = []
    for start in range(0, K, width):
        n = min(start + width, K) - start
        out.append((start, [[start + k if k < n else None for k in ks]
                            for ks in chunk_order(n, width if model.issue else n, L, model.interleave)]))
    return out


def fdpa_chunks(model: Model, K: int) -> list[list[Optional[int]]]:
    """Every FDPA :func:`run_model` chains for K lanes (Alg. 5), in order: the lanes it reads (None: a zero pad),
    issue after issue (:func:`issue_chunks`)."""
    return [ks for _, chunks in issue_chunks(model, K) for ks in chunks]


def _lanes(ks: Sequence[Optional[int]], K: int) -> str:
    """Lane list of one FDPA, runs compressed: "0-7", "0,1,4,5" or "8-15, padded" (None or lanes >= K: zero pads)."""
    real = [k for k in ks if k is not None and k < K]
    if real and real == list(range(real[0], real[-1] + 1)):
        text = f"{real[0]}-{real[-1]}" if len(real) > 1 else str(real[0])
    else:
        text = ",".join(map(str, real))
    return text + (", padded" if len(real) < len(ks) else "")


def lane_scale_index(k: int, block: Optional[int], count: int) -> int:
    """Which of ``count`` block scales lane k reads: its block's, k // block (the last one past the end; the first
    when ``block`` is None)."""
    return min(k // block, count - 1) if block else 0


def lane_scales(alg: Algebra, model: Model, scale_a: Optional[Lanes], scale_b: Optional[Lanes],
                K: int) -> tuple[Optional[list[Unpacked]], Optional[list[Unpacked]]]:
    """Each of K lanes' decoded block scales, lane k reading its block's (:func:`lane_scale_index`); (None, None)
    when the model has no scales.  All of A's scales are decoded first, then B's."""
    if model.scale_fmt is None:
        return None, None
    if not scale_a or not scale_b:
        raise InputError(f"{model.describe()} needs scale_a and scale_b")
    sf = get_format(model.scale_fmt)
    da = [unpack(alg, sf, x) for x in scale_a]
    db = [unpack(alg, sf, x) for x in scale_b]
    return ([da[lane_scale_index(k, model.block, len(da))] for k in range(K)],
            [db[lane_scale_index(k, model.block, len(db))] for k in range(K)])


def converted_pattern(alg: Algebra, u: Unpacked, to: Format) -> Int:
    """The pattern of ``to`` a decoded input ``u`` converts to exactly (RNE; NaN and infinities kept): what a unit
    that reads its inputs ``via`` another format sees."""
    conv = round_pack(alg, to, "rne", u.neg, u.sig, alg.sub(u.exp, u.frac))
    nan_in = to.nan_bits() if to.nan != "none" else 0
    return pack_special(alg, to, nan_in, u.is_nan, alg.and_(u.is_inf, alg.not_(u.neg)), alg.and_(u.is_inf, u.neg), conv)


def decode_input(alg: Algebra, fmt: Format, bits: Int, via: Optional[str]) -> Unpacked:
    """Fields of an input pattern; with ``via``, of its exact conversion to that format first.

    The conversion matters: an e4m3 subnormal is a normal fp16 with a smaller
    exponent, and exponents decide the alignment (e_max) of the fused sum.
    """
    u = unpack(alg, fmt, bits)
    if via is None or via == fmt.name:
        return u
    to = get_format(via)
    return unpack(alg, to, converted_pattern(alg, u, to))


def flush_input_bits(alg: Algebra, fmt: Format, bits: Int) -> Int:
    """A subnormal pattern becomes +0 (Alg. 2 lines 1-3: FlushSubnormal)."""
    efield = alg.bits(bits, fmt.exp_bits + fmt.man_bits - 1, fmt.man_bits)
    return alg.ite(alg.eq(efield, 0), 0, bits)


#: NumPy float dtypes whose bits are those of a format (so ``x.view(np.uintN)`` gives its patterns).
_NP_FLOATS = {"fp16": "float16", "fp32": "float32", "fp64": "float64"}


def _float_hint(name: str, arr: np.ndarray, fmt: Format) -> str:
    """Error text for floats given where bit patterns of ``fmt`` go: how to get the patterns."""
    uint = f"np.{np.dtype(_dtype_for(fmt.bits)).name}"
    same = _NP_FLOATS.get(fmt.name)
    if same == arr.dtype.name:
        fix = f"{name}.view({uint})"
    elif same:
        fix = f"np.asarray({name}, np.{same}).view({uint}) (exact only if the values are {fmt.name} values)"
    elif fmt.name == "tf32":
        fix = f"np.asarray({name}, np.float32).view(np.uint32) >> 13"
    else:
        fix = f"[smtmma.formats.from_fraction({fmt.name!r}, v) for v in {name}] (exact values only)"
    return f"{name} holds {arr.dtype.name} values, not {fmt.name} bit patterns: pass {fix}"


def as_bits(name: str, x: object, fmt: Format, ndim: int) -> np.ndarray:
    """``x`` as a ``ndim``-D array of ``fmt`` bit patterns: its own unsigned dtype (no copy), int64 for signed
    input, uint64 only for 64-bit formats; InputError otherwise."""
    what = "an (N, K) array" if ndim == 2 else "an (N,) array"
    if x is None or isinstance(x, (str, bytes, dict, set)):
        raise InputTypeError(f"{name} must be {what} of {fmt.name} bit patterns (unsigned ints), got {type(x).__name__}")
    check_array_type(name, x)
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError, RuntimeError) as e:  # ragged nested lists, a tensor on a GPU
        raise InputError(f"{name} must be {what} of {fmt.name} bit patterns: {str(e).splitlines()[0]}") from None
    if arr.size and arr.dtype.kind == "c":
        raise InputTypeError(f"{name} holds complex ({arr.dtype}) values; bit patterns are unsigned ints of {fmt.name}")
    if arr.size and arr.dtype.kind == "f":
        raise InputTypeError(_float_hint(name, arr, fmt))
    if arr.ndim != ndim:
        raise InputError(f"{name} must be a {ndim}-D array of {fmt.name} bit patterns, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "ui":
        raise InputTypeError(f"{name} must hold unsigned integer bit patterns of {fmt.name}, got dtype {arr.dtype}")
    if arr.dtype.kind != "u":  # signed (or an empty list's float64)
        arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.dtype.kind == "i" and arr.min() < 0:
        row = int(np.nonzero((arr.reshape(len(arr), -1) < 0).any(axis=1))[0][0])
        bad = int(arr.reshape(len(arr), -1)[row].min())
        raise InputError(f"{name}: row {row}: {bad} is negative; bit patterns are unsigned "
                         f"(a signed array of patterns? pass {name}.view(np.{np.dtype(_dtype_for(fmt.bits)).name}))")
    if arr.size and int(arr.max()) >> fmt.bits:
        flat = arr.reshape(len(arr), -1) if arr.ndim > 1 else arr.reshape(-1, 1)
        row = int(np.nonzero((flat >= (1 << min(fmt.bits, 63))).any(axis=1))[0][0]) if fmt.bits < 64 else 0
        bad = int(flat[row][flat[row] >= (1 << min(fmt.bits, 63))][0]) if fmt.bits < 64 else int(arr.max())
        raise NotRepresentableError(f"{name}: row {row}: {bad:#x} has more bits than {fmt.name} ({fmt.bits} bits)")
    return arr.astype(np.int64) if arr.dtype == np.uint64 and fmt.bits < 64 else arr


def check_scales(model: Model, scale_a: object, scale_b: object) -> None:
    """Scales go with block-scaled models only, and then both of them."""
    given = [n for n, s in (("scale_a", scale_a), ("scale_b", scale_b)) if s is not None]
    if model.scale_fmt is None and given:
        raise InputError(f"{' and '.join(given)} given, but {model.describe()} ({model.a_fmt} x {model.b_fmt}) "
                         "takes no block scales: leave them None")
    if model.scale_fmt is not None and len(given) < 2:
        raise InputError(f"instruction with {model.scale_fmt} block scales needs scale_a and scale_b")


def checked_inputs(model: Model, a: object, b: object, c: object, scale_a: object = None,
                   scale_b: object = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
    """(A, B, C, SA, SB): the bit-pattern arrays of a batch of dot products for ``model``, each checked
    (unsigned patterns of the operand's format, shapes (N, K), (N, K), (N,), K >= 1, one scale per block);
    InputError naming the argument otherwise.  SA, SB are None for instructions without block scales."""
    check_scales(model, scale_a, scale_b)
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    A, B, C = as_bits("a", a, fa, 2), as_bits("b", b, fb, 2), as_bits("c", c, fc, 1)
    if A.shape != B.shape:
        raise InputError(f"a and b must have the same shape (N, K): got {A.shape} and {B.shape}")
    if C.shape[0] != A.shape[0]:
        raise InputError(f"c must have one value per dot product: {A.shape[0]} rows but c has {C.shape[0]}")
    n, K = A.shape
    if K == 0:
        raise InputError("dot products need K >= 1 values")
    SA = SB = None
    if model.scale_fmt is not None:
        sf = get_format(model.scale_fmt)
        SA, SB = as_bits("scale_a", scale_a, sf, 2), as_bits("scale_b", scale_b, sf, 2)
        need = -(-K // model.block)
        for nm, s in (("scale_a", SA), ("scale_b", SB)):
            if s.shape != (n, need):
                raise InputError(f"{nm} must have shape ({n}, {need}) (one scale per {model.block} values), got {s.shape}")
    return A, B, C, SA, SB


def simulate_dot(
    target: Union[str, Model],
    instr: Optional[str],
    a: object,
    b: object,
    c: object,
    *,
    op: Optional[str] = None,
    scale_a: object = None,
    scale_b: object = None,
    backend: str = "auto",
) -> np.ndarray:
    """D bit patterns of a batch of dot products ``d = c + sum_k a[:, k] * b[:, k]``.

    ``target`` is an architecture (``"sm90"``, alias ``"h100"``) with
    ``instr`` (``"f16f32"``) and optional ``op`` family, or a
    :class:`~smtmma.models.Model` (then ``instr`` may be None).  ``a``, ``b``:
    (N, K) unsigned arrays of A/B bit patterns; ``c``: (N,) C patterns;
    ``scale_a``, ``scale_b``: (N, ceil(K / block)) scale patterns for
    block-scaled instructions.  Returns an (N,) array of D patterns
    (uint16 for FP16, uint32 for FP32 and E8M13-in-FP32, uint64 for FP64).

    ``backend``: ``"numpy"`` (the reference interpretation), ``"native"``
    (the same definitions compiled to C: built on first use, cached on disk;
    NumPy answers, after one warning, where no C compiler is found) or
    ``"auto"`` (native for batches of at least 4096 rows or once the kernel
    is built; NumPy otherwise).  Every backend returns the same bits.
    """
    if backend not in _BACKENDS:
        raise InputError(f"backend must be one of {', '.join(_BACKENDS)}, got {clip(str(backend))}")
    model = model_of(target, instr, op)
    warn_if_provisional(target)
    A, B, C, SA, SB = checked_inputs(model, a, b, c, scale_a, scale_b)
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    n, K = A.shape
    out_fmt = carried_in(model.d_fmt)
    if backend != "numpy" and n:
        from .native.dot import run_rows  # late: keeps `import smtmma` light

        fast = run_rows(model, A, B, C, SA, SB, force=backend == "native")
        if fast is not None:
            return fast.astype(_dtype_for(out_fmt.bits), copy=False)
    result = np.empty(n, dtype=_dtype_for(out_fmt.bits))
    alg = NumpyAlgebra()
    for r0 in range(0, n, CHUNK_ROWS):
        rows = slice(r0, min(n, r0 + CHUNK_ROWS))
        lanes_a = [alg.input(A[rows, k], 0, (1 << fa.bits) - 1) for k in range(K)]
        lanes_b = [alg.input(B[rows, k], 0, (1 << fb.bits) - 1) for k in range(K)]
        cc = alg.input(C[rows], 0, (1 << fc.bits) - 1)
        sa = sb = None
        if SA is not None and SB is not None:
            top = (1 << get_format(model.scale_fmt or "ue8m0").bits) - 1
            sa = [alg.input(SA[rows, j], 0, top) for j in range(SA.shape[1])]
            sb = [alg.input(SB[rows, j], 0, top) for j in range(SB.shape[1])]
        d = run_model(alg, model, lanes_a, lanes_b, cc, sa, sb)
        result[rows] = alg.value(d, rows.stop - rows.start).astype(result.dtype)
    return result


def simulate_mma(
    target: Union[str, Model],
    instr: Optional[str],
    A: object,
    B: object,
    C: object,
    *,
    op: Optional[str] = None,
    scale_a: object = None,
    scale_b: object = None,
) -> np.ndarray:
    """D = A x B + C for instruction-shaped matrices of bit patterns: A (M, K), B (K, N), C (M, N) -> D (M, N).

    With an architecture, (M, N, K) must be one of the instruction's shapes.
    Scales: scale_a (M, K/block), scale_b (K/block, N).
    """
    model = model_of(target, instr, op)
    warn_if_provisional(target)
    check_scales(model, scale_a, scale_b)
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    Am, Bm, Cm = as_bits("A", A, fa, 2), as_bits("B", B, fb, 2), as_bits("C", C, fc, 2)
    M, K = Am.shape
    if Bm.shape[0] != K or Cm.shape != (M, Bm.shape[1]):
        raise InputError(f"shapes do not multiply: A {Am.shape}, B {Bm.shape}, C {Cm.shape}")
    N = Bm.shape[1]
    if isinstance(target, str):
        entry = lookup(target, instr, op)
        named = named_shape(entry.arch, entry.instr, op, ARCHS[entry.arch].vendor)
        shapes = {(named.m, named.n, named.k)} if named else {(s.m, s.n, s.k) for s in entry.shapes}
        if shapes and (M, N, K) not in shapes:
            valid = ", ".join(f"m{m}n{n}k{k}" for m, n, k in sorted(shapes))
            raise InputError(f"{entry.arch} {entry.instr} ({entry.op}) has no shape m{M}n{N}k{K}; valid: {valid}")
    a = np.repeat(Am, N, axis=0)  # row i*N + j is A[i, :]
    b = np.tile(Bm.T, (M, 1))  # row i*N + j is B[:, j]
    sa = sb = None
    if scale_a is not None and scale_b is not None:
        sf = get_format(model.scale_fmt or "ue8m0")
        sa = np.repeat(as_bits("scale_a", scale_a, sf, 2), N, axis=0)
        sb = np.tile(as_bits("scale_b", scale_b, sf, 2).T, (M, 1))
    d = simulate_dot(model, None, a, b, Cm.reshape(-1), scale_a=sa, scale_b=sb)
    return d.reshape(M, N)
