"""Exact conversion between real-valued arrays and bit patterns of a format.

The edge where users' numbers meet the simulator's bits (``smtmma.matmul``
takes real arrays).  :func:`to_patterns` turns values into patterns,
:func:`from_patterns` patterns into values; both are vectorized NumPy (no
loop per element) and go through float64, which holds every value of every
input dtype accepted and of every format.

Conversion is exact unless ``round`` is given.  Policy:

* NaN (either sign, any payload) becomes the format's canonical NaN
  (:meth:`Format.nan_bits`); a format without NaN (fp6, fp4) refuses it.
* +-inf becomes the infinity of the same sign; a format without infinity
  (e4m3, FNUZ, fp6, fp4, scales) refuses it, with or without ``round``.
* -0.0 keeps its sign where the format has a -0; FNUZ formats (whose
  would-be -0 is the NaN) and unsigned formats (ue8m0, ue4m3) take it as +0.
  A negative non-zero value in an unsigned format is refused.
* ``round='rne'`` rounds to nearest, ties to even, as IEEE 754 / OCP
  conversion in non-saturating mode: a value beyond the largest finite one
  (after rounding) becomes infinity (fp16, bf16, e5m2, ...), else the
  canonical NaN (e4m3, FNUZ, ue8m0, ue4m3: OCP non-saturating), else the
  largest finite value (fp6/fp4 have neither; the OCP MX spec saturates).
* ``round='rna'`` rounds to nearest, ties away from zero (cuBLAS's FP32 ->
  TF32, PTX ``cvt.rna.tf32.f32``); overflow as ``rne``.
* ``round='ru'`` / ``'rd'`` round toward +inf / -inf (IEEE 754 directed
  modes): an overflow toward the direction's infinity becomes it (the
  canonical NaN, or the largest finite value, where the format has none),
  an overflow away from it the largest finite value of that sign.
* ``round='rz'`` truncates toward zero (what a tensor core does to the 13
  low bits of an fp32 operand of a tf32 MMA); it never rounds up in
  magnitude, so an overflow saturates to the largest finite value (IEEE).
  (round_pack gives inf in every mode: that is a rule of MMA outputs.)
* ue8m0 has no zero: under rounding, 0 and values below 2**-127 become
  2**-127, its smallest value; its one significand bit is always 1, so a
  tie goes up (1.5 -> 2, 3 -> 4), as round_pack and ml_dtypes do.

tf32 and e8m13 patterns are 19- and 22-bit (as in :mod:`smtmma.formats`),
not FP32 containers.  Integers of more than 53 significant bits (int64,
uint64) and long doubles that float64 cannot hold are refused.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Optional

import numpy as np

from .errors import InputError, InputTypeError, NotRepresentableError, spell
from .formats import INF, NAN, Format, classify, decode, get_format
from .sampling import dtype_for

__all__ = ["ROUNDING", "check_array_type", "check_fits_in_memory", "from_patterns", "largest_value", "pattern_dtype",
           "patterns_of", "physical_memory", "smallest_value", "to_patterns", "value_dtype"]

#: Rounding modes accepted by :func:`to_patterns` (None: exact).
ROUNDING = ("rne", "rna", "rz", "ru", "rd")

_BLOCK = 1 << 15  # elements converted at a time
_INF64 = 0x7FF << 52  # float64 bits of +inf
_FP64 = get_format("fp64")

_NATIVE: dict[Format, Any] = {get_format("fp16"): np.float16, get_format("fp32"): np.float32, _FP64: np.float64}


def pattern_dtype(fmt: str | Format) -> np.dtype:
    """The smallest unsigned NumPy dtype holding a pattern of ``fmt`` (uint8 .. uint64)."""
    return dtype_for(fmt)


def value_dtype(fmt: str | Format) -> np.dtype:
    """The NumPy dtype :func:`from_patterns` returns by default: fp16/fp32/fp64 their own,
    tf32/e8m13 their container's (float32), every other format float64 (exact for all)."""
    fmt = get_format(fmt)
    native = _NATIVE.get(get_format(fmt.container) if fmt.container else fmt)
    return np.dtype(native or np.float64)


def physical_memory() -> Optional[int]:
    """This machine's memory in bytes (None where the system does not say)."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * size if pages > 0 and size > 0 else None


def check_fits_in_memory(nbytes: int, what: str) -> None:
    """InputError, before any work, when ``nbytes`` exceed this machine's memory; ``what`` names the size's source.

    E.g. ``what="D (300000 x 300000)"`` gives ``D (300000 x 300000) needs 671 GiB, more than this machine's
    memory (23 GiB)``.  Nothing is refused where the memory is unknown.
    """
    total = physical_memory()
    if total is not None and nbytes > total:
        raise InputError(f"{what} needs {_gib(nbytes)}, more than this machine's memory ({_gib(total)})")


def _gib(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB"


def check_array_type(name: str, x: object) -> None:
    """InputTypeError (one line naming ``name``) for array types whose values NumPy would read wrongly or not at all.

    Sparse matrices and tensors (scipy, pydata ``sparse``, torch: duck-typed,
    nothing imported) and masked arrays (``np.asarray`` drops the mask and
    reads the values under it).  Dtypes are checked where the values are read.
    """
    if isinstance(x, np.ma.MaskedArray):
        raise InputTypeError(f"{name} is a masked array, whose masked values would be read as they are: pass "
                             f"{name}.filled(value) or {name}.data")
    if getattr(x, "nnz", None) is not None and hasattr(x, "todense"):  # scipy.sparse, pydata sparse
        raise InputTypeError(f"{name} is a sparse {type(x).__name__}: pass a dense array ({name}.toarray() or .todense())")
    layout = getattr(x, "layout", None)
    if type(x).__module__.startswith("torch") and (getattr(x, "is_sparse", False) is True or
                                                   (layout is not None and str(layout) != "torch.strided")):
        raise InputTypeError(f"{name} is a torch tensor with layout {layout}: pass {name}.to_dense()")


def _where(name: str, shape: tuple[int, ...], i: int) -> str:
    """``name[3, 7]`` for flat index ``i`` of an array of ``shape`` (``name`` for a scalar)."""
    if not shape:
        return name
    return f"{name}[{', '.join(str(int(k)) for k in np.unravel_index(i, shape))}]"


def _as_float64(x: object, fmt: Format, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(the input as a NumPy array, its values as float64), refusing what float64 cannot hold exactly."""
    check_array_type(name, x)
    if type(x).__module__.startswith("torch"):  # torch is optional: duck-typed, never imported
        t = x.detach().cpu()  # type: ignore[attr-defined]
        x = (t.double() if t.is_floating_point() else t).numpy()  # bf16/fp8 -> float64 is exact
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError, RuntimeError) as e:
        raise InputTypeError(f"{name}: not an array of real numbers ({str(e).splitlines()[0]})") from None
    kind = arr.dtype.kind
    from_ml = arr.dtype.type.__module__.startswith("ml_dtypes")  # bfloat16, float8_*, ...: kind 'V'
    if kind not in "iuf" and not from_ml:
        raise InputTypeError(f"{name}: expected real numbers (float, int, ml_dtypes or torch arrays), "
                             f"got an array of dtype {arr.dtype}")
    with np.errstate(all="ignore"):
        f = arr.astype(np.float64, copy=False)
        if kind in "iu" and arr.dtype.itemsize == 8:  # int64 -> float64 may round: split off 32 low bits
            lo = arr & np.array(0xFFFFFFFF, dtype=arr.dtype)
            hi = (arr - lo).astype(np.float64)  # at most 32 significant bits: exact
            lost = (f - hi) != lo.astype(np.float64)  # Fast2Sum: f - hi is exact
        elif kind == "f" and arr.dtype.itemsize > 8:  # long double
            lost = (f.astype(arr.dtype) != arr) & ~np.isnan(arr)
        else:
            lost = None
    if lost is not None and lost.any():
        i = int(np.flatnonzero(lost)[0])
        raise NotRepresentableError(f"{_where(name, arr.shape, i)} = {arr.reshape(-1)[i]} is not representable "
                                    f"in {fmt.name} (more than float64's 53 significant bits or range; "
                                    "convert it to float64 first to round it)")
    return arr, f


def _top_bits(fmt: Format) -> int:
    """Pattern of the largest finite value of ``fmt``."""
    return fmt.max_exp_field << fmt.man_bits | (fmt.max_sig & ((1 << fmt.man_bits) - 1))


def patterns_of(x: np.ndarray, fmt: str | Format, *, name: str = "x") -> np.ndarray:
    """Patterns of ``fmt`` holding the values ``x``: the bits themselves where ``x`` is in ``fmt``'s own NumPy dtype
    (float16/32/64: a NaN keeps its payload), else :func:`to_patterns` (exact; NaN canonical)."""
    fmt = get_format(fmt)
    native = _NATIVE.get(fmt)
    if native is not None and x.dtype == native:
        return np.ascontiguousarray(x).view(f"u{x.itemsize}")
    return to_patterns(x, fmt, name=name)


def largest_value(fmt: str | Format) -> float:
    """The largest finite value of ``fmt``."""
    fmt = get_format(fmt)
    return float(_decode64(fmt, np.array([_top_bits(fmt)]))[0])


def smallest_value(fmt: str | Format) -> float:
    """The smallest positive value of ``fmt``: its least subnormal, else its least normal (ue8m0: 2**-127)."""
    fmt = get_format(fmt)
    pat = 1 if fmt.subnormals else (1 << fmt.man_bits if fmt.man_bits else 0)
    return float(_decode64(fmt, np.array([pat]))[0])


def _encode_finite(fmt: Format, mag64: np.ndarray, neg: np.ndarray, mode: str) -> np.ndarray:
    """int64 patterns of ``(-1)**neg * a``, ``mag64`` the float64 bits of ``a >= 0`` finite, rounded with ``mode``.

    Normal range of ``fmt``: the float64 pattern itself is rounded at fmt's last
    place, a carry running into the exponent; below it, the value scaled to units
    of the smallest subnormal is rounded.  Overflow: module doc.
    """
    m, shift = fmt.man_bits, 52 - fmt.man_bits
    up = None  # directed modes: where the magnitude rounds up (ru on positives, rd on negatives)
    if mode in ("ru", "rd"):
        up = ~neg if mode == "ru" else neg
    r = mag64
    if mode == "rne":  # ties to even; ue8m0's one significand bit is always 1: its ties go up (as round_pack's)
        r = mag64 + (((mag64 >> shift) & 1) if m else 1) + ((1 << (shift - 1)) - 1)
    elif mode == "rna":  # ties away from zero
        r = mag64 + (1 << (shift - 1))
    elif up is not None:
        r = mag64 + np.where(up, (1 << shift) - 1, 0)
    mag = (r >> shift) - ((1023 - fmt.bias) << m)
    if fmt.subnormals:
        sub = mag64 < ((fmt.emin + 1023) << 52)
        if sub.any():
            scaled = mag64[sub].view(np.float64) * 2.0 ** (m - fmt.emin)  # exact
            if mode == "rne":
                q = np.rint(scaled)
            elif mode == "rna":
                q = np.floor(scaled + 0.5)  # scaled < 2**53: the addition is exact
            elif up is not None:
                q = np.where(up[sub], np.ceil(scaled), np.trunc(scaled))
            else:
                q = np.trunc(scaled)
            mag[sub] = q.astype(np.int64)
    else:  # ue8m0 has no zero: below 2**emin, its smallest value
        mag = np.maximum(mag, 0)
    top = _top_bits(fmt)
    if fmt.signed and not fmt.sign_ignored:
        sign_bits = (neg & (mag != 0) if fmt.nan == "neg_zero" else neg).astype(np.int64) << (fmt.bits - 1)
    else:
        sign_bits = 0
    over = mag > top
    if mode in ("rne", "rna"):
        to_inf = over
    elif up is not None:
        to_inf = over & up  # toward the infinity of the rounding direction; away from it: the largest finite value
    else:
        to_inf = np.zeros_like(over)
    if fmt.has_inf:
        mag = np.where(to_inf, fmt.inf_bits(), np.minimum(mag, top))
    elif fmt.nan != "none":
        return np.where(to_inf, fmt.nan_bits(), np.minimum(mag, top) | sign_bits)
    else:
        mag = np.minimum(mag, top)
    return mag | sign_bits


def to_patterns(x: Any, fmt: str | Format, *, name: str = "x", round: str | None = None) -> np.ndarray:
    """Bit patterns of ``fmt`` holding the values of ``x``, same shape, dtype :func:`pattern_dtype`.

    ``x``: NumPy float/int arrays (values, not patterns), ml_dtypes arrays,
    torch tensors, Python numbers or nested lists.  Exact unless ``round`` is
    one of :data:`ROUNDING` (policy for NaN, inf, -0 and overflow: module doc).
    Raises :class:`NotRepresentableError` naming the first offending element,
    ``x[3, 7] = 0.1 is not representable in fp16 (nearest: ...)``, and
    :class:`InputTypeError` for strings, objects, booleans, complex numbers.
    """
    fmt = get_format(fmt)
    if round is not None and round not in ROUNDING:
        raise InputError(f"round must be None (exact), {', '.join(repr(r) for r in ROUNDING)}, got {round!r}")
    arr, f = _as_float64(x, fmt, name)
    flat = f.reshape(-1)
    if fmt == _FP64:  # fp64: the float64 bits themselves, NaN made canonical
        return np.where(np.isnan(flat), np.uint64(fmt.nan_bits()), flat.view(np.uint64)).reshape(f.shape)
    out = np.empty(flat.shape, dtype=pattern_dtype(fmt))
    for start in range(0, flat.size, _BLOCK):  # blocks that stay in cache: several times faster than whole arrays
        block = flat[start:start + _BLOCK]
        bits, bad = _convert(fmt, block, round)
        if bad.any():
            i = start + int(np.flatnonzero(bad)[0])
            raise NotRepresentableError(_refusal(fmt, _where(name, f.shape, i), arr.reshape(-1)[i], flat[i]))
        out[start:start + _BLOCK] = bits
    return out.reshape(f.shape)


def _convert(fmt: Format, flat: np.ndarray, mode: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(int64 patterns of the float64 values ``flat``, mask of values refused) for :func:`to_patterns`."""
    u = flat.view(np.int64)
    neg, mag64 = u < 0, u & ((1 << 63) - 1)
    special = mag64 >= _INF64  # inf or NaN
    any_special = bool(special.any())
    bits = _encode_finite(fmt, np.where(special, 0, mag64) if any_special else mag64, neg, mode or "rne")
    unsigned = not fmt.signed or fmt.sign_ignored
    bad = neg & (mag64 != 0) if unsigned else np.zeros(flat.shape, dtype=bool)  # -0.0 is +0
    if mode is None:
        bad |= _decode64(fmt, bits) != flat  # the round trip is the exactness check
    if any_special:
        nan, inf = special & (mag64 > _INF64), special & (mag64 == _INF64)
        bad &= ~special
        if fmt.nan != "none":
            bits[nan] = fmt.nan_bits()
        else:
            bad |= nan
        if fmt.has_inf:
            bits[inf] = np.where(neg[inf], fmt.inf_bits(True), fmt.inf_bits())
        else:
            bad |= inf
    return bits, bad


def _refusal(fmt: Format, where: str, raw: Any, value: float) -> str:
    """One-line message: why ``value`` (shown as ``raw`` was given) cannot go into ``fmt``."""
    shown = str(int(raw)) if np.asarray(raw).dtype.kind in "iu" else repr(float(value))
    top = largest_value(fmt)
    if np.isnan(value):
        return f"{where} = nan: format {fmt.name} has no NaN"
    if np.isinf(value):
        return f"{where} = {shown}: format {fmt.name} has no infinity (largest finite value: {top!r})"
    if value < 0 and (not fmt.signed or fmt.sign_ignored):
        return f"{where} = {shown} is negative; {fmt.name} is unsigned"
    if abs(value) > top:
        return f"{where} = {shown} is not representable in {fmt.name} (overflow: the largest finite value is {top!r})"
    if value == 0:
        return f"{where} = {shown} is not representable in {fmt.name} (it has no zero)"
    with np.errstate(all="ignore"):
        near = _decode64(fmt, _encode_finite(fmt, np.array([abs(value)]).view(np.int64), np.array([value < 0]), "rne"))[0]
    return f"{where} = {shown} is not representable in {fmt.name} (nearest: {float(near)!r}); pass {spell('round', 'rne')} to round"


@functools.cache
def _table(fmt: Format) -> np.ndarray:
    """float64 value of every pattern of a <= 16-bit format (read-only)."""
    out = _decode_fields(fmt, np.arange(1 << fmt.bits, dtype=np.int64))
    out.flags.writeable = False
    return out


def _decode_fields(fmt: Format, bits: np.ndarray) -> np.ndarray:
    """float64 values of patterns through the project's vectorized field decoder (any format up to 53 bits of precision)."""
    sign, exp, sig = decode(fmt, bits)
    cls = classify(fmt, bits)
    v = np.ldexp(sig.astype(np.float64), (exp - fmt.man_bits).astype(np.int32))
    v = np.where(sign != 0, -v, v)  # keeps -0.0
    v[cls == INF] = np.where(sign[cls == INF] != 0, -np.inf, np.inf)
    v[cls == NAN] = np.nan
    return v


def _decode64(fmt: Format, bits: np.ndarray) -> np.ndarray:
    """float64 values of in-range patterns ``bits`` (any integer dtype) of ``fmt``."""
    if fmt.bits <= 16:
        return _table(fmt)[bits]
    container = get_format(fmt.container) if fmt.container else fmt
    native = _NATIVE.get(container)
    if native is None:
        return _decode_fields(fmt, bits)
    word = bits.astype(pattern_dtype(container)) << np.array(fmt.container_shift, dtype=pattern_dtype(container))
    with np.errstate(invalid="ignore"):  # a signalling NaN stays a NaN
        return word.view(native).astype(np.float64)


def from_patterns(bits: Any, fmt: str | Format, *, name: str = "bits", dtype: Any = None) -> np.ndarray:
    """Values of the bit patterns ``bits`` (any integer array or list, same shape out) of ``fmt``.

    dtype: :func:`value_dtype` by default (fp16 -> float16, fp32/tf32/e8m13
    -> float32, fp64 -> float64, others float64); any NumPy or ml_dtypes
    dtype that holds every value exactly (checked).  NaN patterns give nan,
    infinities inf; -0 stays -0.  Raises :class:`InputTypeError` for
    non-integer input, :class:`NotRepresentableError` for a pattern wider
    than the format or a value the dtype cannot hold.
    """
    fmt = get_format(fmt)
    check_array_type(name, bits)
    try:
        arr = given = np.asarray(bits)
    except (ValueError, TypeError, RuntimeError) as e:
        raise InputTypeError(f"{name}: not an array of bit patterns ({str(e).splitlines()[0]})") from None
    if arr.dtype.kind in "fO" and not isinstance(bits, np.ndarray):  # Python ints past int64 (fp64 patterns)
        arr = np.array(bits, dtype=object)
        if not all(type(v) is int for v in arr.flat):
            arr = given
    if arr is given and arr.dtype.kind not in "iu":
        raise InputTypeError(f"{name}: expected integer bit patterns of {fmt.name}, got an array of dtype "
                             f"{arr.dtype} (values go through to_patterns)")
    try:
        out_dt = value_dtype(fmt) if dtype is None else np.dtype(dtype)
    except TypeError:
        raise InputTypeError(f"dtype: not a NumPy dtype: {dtype!r}") from None
    flat = arr.reshape(-1)
    wide = ((flat < 0) | (flat > (1 << fmt.bits) - 1)).astype(bool)
    if wide.any():
        i = int(np.flatnonzero(wide)[0])
        raise NotRepresentableError(f"{_where(name, arr.shape, i)} = {int(flat[i]):#x} is not a pattern of "
                                    f"{fmt.name} ({fmt.bits} bits)")
    flat = flat.astype(pattern_dtype(fmt))
    if fmt in _NATIVE and out_dt == _NATIVE[fmt]:
        return flat.view(out_dt).reshape(arr.shape)
    values = _decode64(fmt, flat)
    with np.errstate(all="ignore"):
        out = values.astype(out_dt)
        lost = (out.astype(np.float64) != values) & ~np.isnan(values)
    if lost.any():
        i = int(np.flatnonzero(lost)[0])
        raise NotRepresentableError(f"{_where(name, arr.shape, i)} = {int(flat[i]):#x} is {float(values[i])!r} in "
                                    f"{fmt.name}, which dtype {out_dt} cannot hold exactly")
    return out.reshape(arr.shape)
