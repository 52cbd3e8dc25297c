"""How a library's GEMM kernel drives the instruction: a :class:`Scheme`, plain data beside :class:`~smtmma.models.Model`.

The model says what one instruction computes; the scheme says what the
kernel around it does (:func:`smtmma.matmul` applies it):

* ``round``: how real-valued A, B (and C) become the instruction's operand
  formats: ``None`` exact (a value not representable is an error), ``rne``
  (nearest, ties to even), ``rna`` (nearest, ties away from zero: cuBLAS's
  FP32 -> TF32), ``rz`` (toward zero: truncation), ``ru`` (toward +inf),
  ``rd`` (toward -inf).
* ``block_scale``: for block-scaled instructions given real-valued A and B
  and no scales, how each block of K is quantized to a scale and elements:
  ``ocp-mx`` (OCP MX v1.0 §6.3: a power-of-two scale from the block's
  amax) or ``amax`` (scale = amax / largest element, rounded: NVFP4's);
  :mod:`smtmma.quantize` gives both rules.
* ``promote_every=N``: the instruction chain restarts from a zero
  accumulator every N elements of K, and each chain's result is added into
  an FP32 accumulator (FP64 for an FP64 D) that starts at +0, by IEEE RNE
  addition (the
  promotion of DeepGEMM and CUTLASS's FP8 kernels).
* ``split_k=S``: K is cut into S contiguous slices of whole instructions,
  as equal as they can be (slice s takes instructions s*n//S .. (s+1)*n//S
  of the n = ceil(K/k) along K); each slice's result is rounded
  (RNE) to the ``partial`` format (``fp32``, ``bf16``, ``fp16``), and the
  partials are reduced in that format, each addition rounded to nearest
  even, ``sequential`` (((p0 + p1) + p2) ...) or ``pairwise`` (a balanced
  tree: (p0 + p1) + (p2 + p3)).  The sum is then rounded to D's format.
* ``c_in``: ``accumulator`` (C enters the first instruction of the first
  chain, as the instruction's own C; alpha and beta must be 1) or
  ``epilogue`` (every chain starts from +0; then D = alpha * X + beta * C in
  FP32, FP64 for an FP64 D, as CUTLASS's LinearCombination computes it:
  ``fma(alpha, X, beta * C)``, beta * C rounded first; ``alpha * X`` alone
  when beta is 0; the result rounded to D's format by RNE).

A scheme is written in Python as ``Scheme(promote_every=128)`` and on the
command line as ``promote_every=128,split_k=2,partial=bf16`` or a preset's
name (:data:`PRESETS`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Optional, Union

from .arrays import ROUNDING
from .quantize import BLOCK_RULES
from .errors import InputError, InputTypeError, UnknownNameError, unknown_name
from .limits import is_int

__all__ = ["Scheme", "PRESETS", "ROUND_MODES", "PARTIAL_FORMATS", "REDUCTIONS", "C_IN", "parse_scheme", "as_scheme"]

#: Operand conversions: None is exact.
ROUND_MODES = ROUNDING
#: Formats of split-K partial sums.
PARTIAL_FORMATS = ("fp32", "bf16", "fp16")
#: Orders in which split-K partials are added.
REDUCTIONS = ("sequential", "pairwise")
#: Where C enters.
C_IN = ("accumulator", "epilogue")

_MAX_SPLIT = 1 << 16


@dataclass(frozen=True)
class Scheme:
    """A GEMM kernel's scheme around the instruction (module doc); every field checked on construction."""

    round: Optional[str] = None
    promote_every: Optional[int] = None
    split_k: int = 1
    partial: str = "fp32"
    reduction: str = "sequential"
    alpha: float = 1.0
    beta: float = 1.0
    c_in: str = "accumulator"
    block_scale: Optional[str] = None

    def __post_init__(self) -> None:
        _choice("round", self.round, ROUND_MODES, none="None (exact)")
        if self.promote_every is not None:
            if not is_int(self.promote_every) or not 1 <= int(self.promote_every) <= 1 << 30:
                raise InputError(f"promote_every must be None or a positive int (elements of K per chain), "
                                 f"got {self.promote_every!r}")
            object.__setattr__(self, "promote_every", int(self.promote_every))
        if not is_int(self.split_k) or not 1 <= int(self.split_k) <= _MAX_SPLIT:
            raise InputError(f"split_k must be an int in 1..{_MAX_SPLIT} (slices of K), got {self.split_k!r}")
        object.__setattr__(self, "split_k", int(self.split_k))
        _choice("partial", self.partial, PARTIAL_FORMATS)
        _choice("reduction", self.reduction, REDUCTIONS)
        _choice("c_in", self.c_in, C_IN)
        _choice("block_scale", self.block_scale, BLOCK_RULES, none="None (scales given)")
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) and type(v).__module__ != "numpy":
                raise InputTypeError(f"{name} must be a real number, got {v!r}")
            try:
                f = float(v)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise InputTypeError(f"{name} must be a real number, got {v!r}") from None
            if not math.isfinite(f):
                raise InputError(f"{name} must be finite, got {v!r}")
            object.__setattr__(self, name, f)
        if self.c_in == "accumulator" and (self.alpha != 1.0 or self.beta != 1.0):
            raise InputError(f"alpha={self.alpha:g}, beta={self.beta:g} need c_in='epilogue': with c_in='accumulator' "
                             "C enters the first instruction unscaled and D is the chain's result")

    @property
    def plain(self) -> bool:
        """True when the scheme is the bare instruction chain (no promotion, one slice, C in the accumulator)."""
        return self.promote_every is None and self.split_k == 1 and self.c_in == "accumulator"

    def spec(self) -> str:
        """The scheme as the command line writes it: its fields that differ from the defaults (``plain`` if none)."""
        parts = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v != f.default:
                parts.append(f"{f.name}={'exact' if v is None else _num(v)}")
        return ",".join(parts) or "plain"

    def __str__(self) -> str:
        return self.spec()


def _num(v: object) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _choice(name: str, value: object, choices: tuple[str, ...], none: str = "") -> None:
    if value is None and none:
        return
    if not isinstance(value, str) or value not in choices:
        accepted = ", ".join(([none] if none else []) + [repr(c) for c in choices])
        raise InputError(f"{name} must be one of {accepted}, got {value!r}")


#: Named schemes, each a behaviour a public source documents.
PRESETS: dict[str, Scheme] = {
    # DeepSeek-V3 technical report (arXiv:2412.19437) §3.3.2: FP8 WGMMA partial sums promoted to FP32 every N_C = 128 elements
    "deepgemm": Scheme(promote_every=128),
    # pytorch/pytorch#53635 and PTX ISA cvt.rna.tf32.f32: cuBLAS rounds FP32 operands to TF32 to nearest, ties away
    "cublas-tf32": Scheme(round="rna"),
    # BLAS xGEMM: D = alpha * A B + beta * C, C scaled in the epilogue (CUTLASS epilogue::thread::LinearCombination)
    "blas": Scheme(c_in="epilogue"),
}

_FIELDS = {f.name: f for f in dataclasses.fields(Scheme)}


def parse_scheme(text: str) -> Scheme:
    """A :class:`Scheme` from ``promote_every=128,split_k=2,partial=bf16`` or a preset name (``deepgemm``).

    ``round=exact`` and ``promote_every=none`` are the defaults spelled out;
    a preset may be followed by fields that override it
    (``deepgemm,split_k=2``).
    """
    if not isinstance(text, str):
        raise InputTypeError(f"a scheme is a string such as 'promote_every=128,split_k=2' or a preset "
                             f"({', '.join(PRESETS)}), got {type(text).__name__}")
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise InputError(f"empty scheme: give fields such as promote_every=128,split_k=2 or a preset ({', '.join(PRESETS)})")
    base = Scheme()
    fields: dict[str, object] = {}
    for i, item in enumerate(items):
        key, eq, val = item.partition("=")
        if not eq and i == 0 and key.strip().lower() in PRESETS:
            base = PRESETS[key.strip().lower()]
            continue
        key, val = key.strip().lower().replace("-", "_"), val.strip()
        if not eq:
            if key == "plain" and i == 0:
                continue
            raise UnknownNameError(unknown_name("scheme preset", item, PRESETS)
                                   + f"; fields are written NAME=VALUE ({', '.join(_FIELDS)})")
        if key not in _FIELDS:
            raise UnknownNameError(unknown_name("scheme field", key, _FIELDS))
        if key in fields:
            raise InputError(f"scheme field {key} given twice")
        fields[key] = _value(key, val)
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


def _value(key: str, val: str) -> object:
    low = val.lower()
    if key == "round":
        return None if low in ("exact", "none") else low
    if key == "block_scale":
        return None if low == "none" else low
    if key == "promote_every":
        if low in ("none", "off"):
            return None
        return _int(key, val)
    if key == "split_k":
        return _int(key, val)
    if key in ("alpha", "beta"):
        try:
            return float(val)
        except ValueError:
            raise InputError(f"{key} must be a real number, got {val!r}") from None
    return low


def _int(key: str, val: str) -> int:
    try:
        return int(val, 0)
    except ValueError:
        raise InputError(f"{key} must be an integer, got {val!r}") from None


def as_scheme(x: Union[None, str, Scheme]) -> Scheme:
    """``x`` as a Scheme: None is the plain chain, a string is parsed (:func:`parse_scheme`)."""
    if x is None:
        return Scheme()
    if isinstance(x, Scheme):
        return x
    if isinstance(x, str):
        return parse_scheme(x)
    raise InputTypeError(f"scheme must be a Scheme, a string such as 'promote_every=128' or None, got {type(x).__name__}")
