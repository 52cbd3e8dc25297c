"""Torch emulation mode: ``with smtmma.emulate("h100"):`` runs torch's matrix products as the GPU's GEMM computes them.

Inside the mode, an unchanged torch program (a model's forward and backward
included) has every matrix product routed through :func:`smtmma.matmul`
with the instruction and scheme a cuBLAS / hipBLASLt GEMM would use on the
named architecture; everything else runs as torch runs it.  A
:class:`torch.utils._python_dispatch.TorchDispatchMode` intercepts the aten
ops below autograd, where ``linear``, ``matmul``, ``einsum`` and the
backward products have become:

* ``mm``, ``bmm``, ``dot``, ``mv``: D = A @ B (``dot`` and ``mv`` as GEMMs of
  one column, though cuBLAS may run them without Tensor Cores);
* ``addmm``, ``baddbmm``, ``addmv`` (and their ``_`` in-place and ``out=``
  forms): D = alpha * (A @ B) + beta * C, applied in the epilogue as cuBLAS
  does (``Scheme(c_in="epilogue", alpha=..., beta=...)``): X = A @ B by the
  instruction chain from a zero accumulator, then ``fma(alpha, X, beta * C)``
  in FP32 (FP64 for float64), beta * C rounded first; beta = 0 ignores C.
  So ``linear``'s bias (addmm with alpha = beta = 1) is added to the FP32
  result once, rounded to nearest even, never accumulated in the chain
  (torch itself turns a linear of a non-contiguous 3-D input into ``mm``
  and an ``add`` in the op's dtype: that add runs natively);
* ``_scaled_mm`` (FP8 A, B with float32 scales): D = (A * scale_a) @ (B *
  scale_b) is computed as the hardware does: X = A @ B by the FP8
  instruction on the FP8 patterns (FP32 result; E8M13 widened on Hopper),
  then in FP32, each step rounded to nearest even:
  ``D = X * (scale_a * scale_b)`` (+ ``bias``).  Scales per tensor or per
  row of A / column of B; ``use_fast_accum`` is not modelled (the scheme
  decides: ``scheme="deepgemm"`` promotes every 128).

The instruction comes from the operands' dtype and torch's settings:

* float16: ``f16f32`` (cuBLAS accumulates FP16 GEMMs in FP32), or
  ``f16f16`` where ``torch.backends.cuda.matmul.allow_fp16_accumulation``;
* bfloat16: ``bf16f32``;
* float32: ``tf32f32`` when TF32 is allowed
  (``torch.backends.cuda.matmul.fp32_precision == "tf32"``, or on older
  torch ``allow_tf32`` / ``get_float32_matmul_precision()`` "high" or
  "medium"); else ``f32f32`` where the architecture has it (CDNA's MFMA
  F32); else the product runs natively (cuBLAS runs FP32 GEMMs without
  Tensor Cores).  FP32 operands are rounded to TF32 by RNE unless the
  scheme gives a ``round`` (``scheme="cublas-tf32"``: RNA, cuBLAS's);
* float64: ``f64f64``; FP8 (``_scaled_mm``): the architecture's instruction
  for the pair of formats (``e4m3e4m3f32`` on sm90, ``fp8fp8f32`` for the
  FNUZ dtypes on gfx942).

The FP32 (FP64) result becomes the op's dtype by torch's conversion (RNE:
float16 and bfloat16 by round to nearest even).  A product the
architecture has no instruction for (float64 on sm70, FP32 without TF32
on NVIDIA) runs natively with one :class:`NativeWarning` per (dtype,
reason), or raises :class:`~smtmma.errors.InputError` with ``strict=True``;
so do fused ops that hide products (convolution, fused attention), once
per op.  ``allow_*_reduced_precision_reduction`` are not modelled: give a
split-K scheme (``split_k=4,partial=bf16``) to model one.

The mode's :attr:`Emulator.log` lists every product it saw, routed or not,
as :class:`Product` records.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Callable, NamedTuple, Optional, Union

from .catalogue import INSTRS, entries, resolve_arch
from .errors import InputError, check_flag, choices, user_stacklevel
from .scheme import Scheme, as_scheme

try:  # torch is optional: only this module needs it, and only when the mode is used
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode as _ModeBase
except ImportError:  # pragma: no cover - exercised in a subprocess without torch
    torch = None  # type: ignore[assignment]
    _ModeBase = object  # type: ignore[assignment,misc]

__all__ = ["emulate", "Emulator", "Product", "NativeWarning", "ROUTED_OPS", "UNROUTED_OPS"]

#: aten ops routed through smtmma.matmul (the ``_`` in-place forms and ``out=`` overloads too).
ROUTED_OPS = ("mm", "bmm", "dot", "mv", "addmm", "baddbmm", "addmv", "_scaled_mm")
#: aten ops that compute matrix products the mode cannot route: they run natively, with one warning each.
UNROUTED_OPS = ("convolution", "convolution_backward", "_convolution", "addbmm", "addr", "vdot", "_addmm_activation",
                "_scaled_mm_v2", "_scaled_grouped_mm", "_grouped_mm", "_scaled_dot_product_flash_attention",
                "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_efficient_attention",
                "_scaled_dot_product_cudnn_attention", "_flash_attention_forward", "_efficient_attention_forward")

_SCALED_DTYPES = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "float8_e4m3fnuz": "e4m3fnuz",
                  "float8_e5m2fnuz": "e5m2fnuz"}
_FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


class NativeWarning(RuntimeWarning):
    """A product inside :func:`emulate` that ran natively (torch's own kernel), not as the architecture computes it."""


class Product(NamedTuple):
    """One matrix product the mode saw: ``op`` (aten name), ``dtype``, the instruction (None: native), operand
    shapes, whether it was routed through :func:`smtmma.matmul`, and why not (``reason``, "" when routed)."""

    op: str
    dtype: str
    instr: Optional[str]
    shapes: tuple[tuple[int, ...], ...]
    routed: bool
    reason: str = ""


def _dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def _tf32_allowed() -> bool:
    """Whether torch lets cuBLAS run FP32 GEMMs in TF32: ``fp32_precision`` (torch >= 2.9, inheritance resolved by
    torch) when set, else the legacy ``allow_tf32`` / ``get_float32_matmul_precision()``."""
    try:
        p = torch.backends.cuda.matmul.fp32_precision
    except (AttributeError, RuntimeError):
        p = None
    if p in ("tf32", "ieee"):
        return p == "tf32"
    try:
        return bool(torch.backends.cuda.matmul.allow_tf32) or torch.get_float32_matmul_precision() in ("high", "medium")
    except RuntimeError:  # torch refuses to read the legacy flags once the new API was used
        return False


def _fp16_accumulation() -> bool:
    try:
        return bool(torch.backends.cuda.matmul.allow_fp16_accumulation)
    except (AttributeError, RuntimeError):
        return False


class Emulator(_ModeBase):  # type: ignore[misc,valid-type]
    """The dispatch mode :func:`emulate` returns (module doc); ``log`` lists the :class:`Product` records seen.

    ``log`` grows by one record per product (clear it with ``mode.log.clear()``
    in a long loop); each (dtype, reason) and each unrouted op warns once per mode.
    """

    def __init__(self, arch: str, scheme: Scheme, strict: bool) -> None:
        super().__init__()
        self.arch, self.scheme, self.strict = arch, scheme, strict
        self.log: list[Product] = []
        self._instrs = frozenset(e.instr for e in entries(arch))
        self._warned: set[tuple[str, ...]] = set()

    def __repr__(self) -> str:
        return f"smtmma.emulate({self.arch!r}, scheme={self.scheme.spec()!r}, strict={self.strict})"

    def instruction(self, dtype: Any, dtype_b: Any = None) -> tuple[Optional[str], str]:
        """(the instruction a product of ``dtype`` operands runs, "") or (None, why it runs natively).

        FP8 dtypes name the instruction of ``_scaled_mm`` (``dtype_b``: B's, default A's).
        """
        name = _dtype_name(dtype)
        if name in _SCALED_DTYPES:
            fa, fb = _SCALED_DTYPES[name], _SCALED_DTYPES.get(_dtype_name(dtype_b if dtype_b is not None else dtype))
            want = [i.name for i in INSTRS.values()
                    if (i.a_fmt, i.b_fmt, i.c_fmt, i.d_fmt, i.scale_fmt) == (fa, fb, "fp32", "fp32", None)]
        elif name == "float16":
            want = ["f16f16" if _fp16_accumulation() else "f16f32"]
        elif name == "bfloat16":
            want = ["bf16f32"]
        elif name == "float32":
            if _tf32_allowed():
                want = ["tf32f32", "f32f32"]
            else:
                want = ["f32f32"]
                if "tf32f32" in self._instrs and "f32f32" not in self._instrs:
                    return None, ("TF32 is off (torch.backends.cuda.matmul.fp32_precision / allow_tf32): cuBLAS runs "
                                  "FP32 GEMMs without Tensor Cores")
        elif name == "float64":
            want = ["f64f64"]
        else:
            return None, f"no matrix instruction takes {name}"
        for instr in want:
            if instr in self._instrs:
                return instr, ""
        return None, f"{self.arch} has no instruction for {name} (it has {choices(sorted(self._instrs))})"

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Optional[dict] = None) -> Any:
        kwargs = kwargs or {}
        op = func.overloadpacket.__name__
        base = op[:-1] if op.endswith("_") and op[:-1] in ROUTED_OPS else op  # addmm_: in place
        if base in ROUTED_OPS:
            native = lambda: func(*args, **kwargs)  # noqa: E731
            if base == "_scaled_mm":
                return self._scaled_mm(native, _bind(func, args, kwargs))
            return self._product(native, base, op != base, _bind(func, args, kwargs))
        if op in UNROUTED_OPS:
            shapes = tuple(tuple(a.shape) for a in args if isinstance(a, torch.Tensor))
            dtype = next((_dtype_name(a.dtype) for a in args if isinstance(a, torch.Tensor)), "")
            self._native(op, dtype, shapes, f"aten.{op} is not a routed product (smtmma.emulate routes "
                         f"{', '.join(ROUTED_OPS)})" + _HINTS.get(op, ""), key=(op,))
        return func(*args, **kwargs)

    def _product(self, native: Callable[[], Any], op: str, inplace: bool, a: dict[str, Any]) -> Any:
        """D of mm, bmm, dot, mv, addmm, baddbmm or addmv (bound arguments ``a``) by the instruction, or ``native()``."""
        out = a.get("out")
        A, B = (a["self"], a["mat2"]) if op in ("mm", "bmm") else (a["self"], a["tensor"]) if op == "dot" else \
            (a["self"], a["vec"]) if op == "mv" else (a["mat1"], a["mat2"]) if op == "addmm" else \
            (a["batch1"], a["batch2"]) if op == "baddbmm" else (a["mat"], a["vec"])
        C = a["self"] if op in ("addmm", "baddbmm", "addmv") else None
        shapes = tuple(tuple(t.shape) for t in (A, B, C) if t is not None)
        dtype = _dtype_name(A.dtype)
        reason, warn = self._unroutable(A, B, C)
        instr = None
        if not reason and dtype not in _FLOAT_DTYPES:
            reason, warn = f"aten.{op} is routed for {', '.join(_FLOAT_DTYPES)} (FP8 products through _scaled_mm)", True
        if not reason:
            instr, reason = self.instruction(A.dtype)
            warn = True
        if instr is None:
            self._native(op, dtype, shapes, reason, key=(dtype, reason), warn=warn)
            return native()
        alpha, beta = a.get("alpha", 1), a.get("beta", 1)
        sch = self._scheme_for(instr)
        if C is not None or alpha != 1:
            sch = dataclasses.replace(sch, c_in="epilogue", alpha=_real(alpha), beta=_real(beta) if C is not None else 1.0)
        if C is not None and beta == 0:
            C = None  # torch ignores C (even its NaNs) when beta is 0
        from .gemm import matmul

        D = matmul(self.arch, instr, A, B, C, scheme=sch)
        D = D.reshape(_result_shape(A.shape, B.shape)).to(A.dtype)
        self.log.append(Product(op, dtype, instr, shapes, True))
        if out is not None:
            out.resize_(D.shape)
            return out.copy_(D)
        if inplace:
            return a["self"].copy_(D)
        return D

    def _scaled_mm(self, native: Callable[[], Any], a: dict[str, Any]) -> Any:
        """D of _scaled_mm (bound arguments ``a``): the FP8 instruction's FP32 X, then the scales and bias in FP32."""
        A, B, sa, sb, bias = a["self"], a["mat2"], a["scale_a"], a["scale_b"], a["bias"]
        shapes = tuple(tuple(t.shape) for t in (A, B, sa, sb, bias) if t is not None)
        dtype = _dtype_name(A.dtype) + ("" if B.dtype == A.dtype else "x" + _dtype_name(B.dtype))
        reason, warn = self._unroutable(A, B, bias)
        instr = None
        if not reason:
            warn = True
            M, N = A.shape[-2], B.shape[-1]
            if a.get("scale_result") is not None:
                reason = "_scaled_mm's scale_result is not modelled"
            elif A.ndim != 2 or B.ndim != 2 or sa.dtype != torch.float32 or sb.dtype != torch.float32 or \
                    not (sa.numel() == 1 or tuple(sa.shape) == (M, 1)) or not (sb.numel() == 1 or tuple(sb.shape) == (1, N)):
                reason = "only 2-D _scaled_mm with float32 scales per tensor or per row of A / column of B is modelled"
            else:
                instr, reason = self.instruction(A.dtype, B.dtype)
        if instr is None:
            self._native("_scaled_mm", dtype, shapes, reason, key=(dtype, reason), warn=warn)
            return native()
        from .gemm import matmul

        X = matmul(self.arch, instr, A, B, scheme=self._scheme_for(instr)).to(torch.float32)
        s = sa.reshape(-1, 1).to(X.device) * sb.reshape(1, -1).to(X.device)  # (1, 1), (M, 1), (1, N) or (M, N)
        D = X * s  # FP32 products, each rounded to nearest even
        if bias is not None:
            D = D + bias.to(torch.float32)
        D = D.to(a.get("out_dtype") or A.dtype)
        self.log.append(Product("_scaled_mm", dtype, instr, shapes, True))
        out = a.get("out")
        if out is not None:
            out.resize_(D.shape)
            return out.copy_(D)
        return D

    def _scheme_for(self, instr: str) -> Scheme:
        if instr == "tf32f32" and self.scheme.round is None:
            return dataclasses.replace(self.scheme, round="rne")
        return self.scheme

    @staticmethod
    def _unroutable(*ts: Any) -> tuple[str, bool]:
        """(why these operands stay native, whether that deserves a warning), or ("", False) to route them."""
        ts = tuple(t for t in ts if t is not None)
        if any(t.device.type == "meta" for t in ts):
            return "meta tensors: shapes only", False
        if any(t.numel() == 0 for t in ts[:2]):
            return "an empty operand: no product to round", False
        if len({t.dtype for t in ts[:2]}) > 1 and not all(_dtype_name(t.dtype) in _SCALED_DTYPES for t in ts[:2]):
            return "mixed dtypes: torch's rule applies", False
        if len(ts) > 2 and _dtype_name(ts[0].dtype) in _FLOAT_DTYPES and ts[2].dtype != ts[0].dtype:
            return "mixed dtypes: torch's rule applies", False
        if not ts[0].is_floating_point() and not ts[0].is_complex():
            return "integer products are exact", False
        return "", False

    def _native(self, op: str, dtype: str, shapes: tuple, reason: str, key: tuple, warn: bool = True) -> None:
        """Log a native product; warn once per ``key`` (strict: raise)."""
        self.log.append(Product(op, dtype, None, shapes, False, reason))
        if not warn:
            return
        if self.strict:
            raise InputError(f"smtmma.emulate({self.arch!r}, strict=True): {op} on {dtype or 'tensors'} cannot be "
                             f"routed: {reason}")
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(f"smtmma.emulate({self.arch!r}): {op} on {dtype or 'tensors'} runs natively: {reason}",
                          NativeWarning, stacklevel=user_stacklevel())


_HINTS = {
    "_scaled_dot_product_flash_attention_for_cpu": "; use torch.nn.attention.sdpa_kernel(SDPBackend.MATH) to route "
                                                   "its products",
    "_scaled_dot_product_flash_attention": "; use torch.nn.attention.sdpa_kernel(SDPBackend.MATH) to route its products",
    "_scaled_dot_product_efficient_attention": "; use torch.nn.attention.sdpa_kernel(SDPBackend.MATH) to route its "
                                               "products",
}


def _bind(func: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The op's arguments by schema name, defaults filled in."""
    bound: dict[str, Any] = {}
    for i, arg in enumerate(func._schema.arguments):
        if i < len(args):
            bound[arg.name] = args[i]
        elif arg.name in kwargs:
            bound[arg.name] = kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
    return bound


def _real(x: Any) -> float:
    if isinstance(x, torch.Tensor):
        x = x.item()
    if isinstance(x, complex):
        raise InputError(f"alpha and beta must be real numbers, got {x!r}")
    return float(x)


def _result_shape(a: Any, b: Any) -> tuple[int, ...]:
    """np.matmul's result shape for operand shapes ``a`` and ``b`` (both 1-D: a scalar)."""
    a, b = tuple(a), tuple(b)
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(b) == 1:
        return a[:-1]
    if len(a) == 1:
        return b[:-2] + b[-1:]
    import numpy as np

    return tuple(np.broadcast_shapes(a[:-2], b[:-2])) + (a[-2], b[-1])


def emulate(arch: str, *, scheme: Union[None, str, Scheme] = None, strict: bool = False) -> Emulator:
    """A torch dispatch mode that runs matrix products as ``arch``'s GEMM does: ``with smtmma.emulate("h100"):``.

    ``arch``: a catalogue architecture or alias (``sm90``, ``h100``,
    ``gfx942``, ``mi300x``).  ``scheme``: the GEMM kernel around the
    instruction (a :class:`~smtmma.scheme.Scheme`, its spec string or a preset
    name such as ``"cublas-tf32"``, or None); its alpha and beta must be 1 (each
    op gives its own).  ``strict``: raise InputError instead of running a
    product natively.  FP32 operands of a TF32 instruction are rounded to
    TF32 by RNE unless the scheme gives ``round`` (``"cublas-tf32"``: RNA).
    The rules (which instruction, epilogue, FP8 scales, output rounding) are
    the module doc's.
    """
    if torch is None:
        raise InputError("torch is not installed: pip install torch")
    if isinstance(arch, str) and ":" in arch:
        raise InputError(f"emulate takes an architecture name (sm90, h100, gfx942, ...), got the model spec {arch!r}: "
                         "a model computes one instruction; use smtmma.matmul(model, instr, A, B)")
    name = resolve_arch(arch)  # UnknownNameError: one line, with "did you mean"
    sch = as_scheme(scheme)
    if sch.alpha != 1.0 or sch.beta != 1.0 or sch.c_in != "accumulator":
        raise InputError(f"scheme {sch.spec()!r}: emulate takes alpha, beta and c_in from each torch op (addmm's alpha "
                         "and beta, applied in the epilogue); give a scheme without them")
    return Emulator(name, sch, check_flag("strict", strict))
