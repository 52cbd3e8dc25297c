"""Any Python callable as a device: ``fn(A, B, C) -> D``, a GEMM computed the user's way.

``torch.matmul`` on a GPU, a Triton kernel, a library call, or
``smtmma.matmul`` with a scheme: whatever ``fn`` does, test vectors are
placed into GEMMs of a shape the user may choose (libraries pick kernels by
shape) and each vector's D is read back.  Named on the command line as
``python:MODULE:FUNCTION`` or ``python:MODULE:FUNCTION@MxNxK`` (MODULE is
imported with the current directory on ``sys.path``, as ``python -m`` does;
FUNCTION may be an attribute path, ``Gemm.run``).

Placement: the vectors of one instruction and one K go, up to min(M, N) per
GEMM, on the diagonal: vector i is row i of A, column i of B and C[i, i];
every other entry is zero, and only D[i, i] is read.  A is (M, K), B (K, N),
C (M, N), with K the vectors' K unless the shape gives a larger one (then
the vectors are padded with zeros, which a chained kernel may run as more
instructions).  K is not rounded up by default for the same reason: an
instruction of zeros after the vector's is not neutral everywhere (it turns
a -0 sum into +0), so only a shape the user asks for pads.  The other
entries of D (row i of A times column j of B) are computed and ignored:
arbitrary vectors do not pair up into useful cross products.  Operands are
real-valued NumPy arrays in the narrowest dtype holding the format exactly
(:func:`smtmma.gemm.natural_dtype`: float16, float32 -- tf32 too --,
float64, and ml_dtypes' bfloat16 / float8 / float6 / float4 types);
``array="torch"`` passes torch tensors.
``fn`` returns D (M, N): any array NumPy or torch can read, whose values
must be exactly representable in the instruction's D format (in D's own
dtype -- float32 for FP32 -- its bit patterns are read as they are, NaN
payloads included; other dtypes are converted, NaN becoming the format's
canonical NaN).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..arrays import from_patterns, patterns_of
from ..catalogue import lookup
from ..errors import InputError, NotRepresentableError, SmtmmaError, UnknownNameError
from ..formats import Format, carried_in, get_format
from ..gemm import natural_dtype
from ..vectors import TestVector
from .device import Device, DeviceError

__all__ = ["CallableDevice", "open_python_device", "MAX_SIDE"]

#: Largest M or N a default GEMM takes (vectors beyond it go into further GEMMs).
MAX_SIDE = 256

def _shape_text(shape: Optional[tuple[int, int, int]]) -> str:
    return "" if shape is None else "@" + "x".join(map(str, shape))


class CallableDevice(Device):
    """A device whose GEMM is ``fn(A, B, C) -> D`` (module doc); ``shape=(M, N, K)`` fixes the GEMMs' shape."""

    def __init__(self, fn: Callable[..., Any], *, shape: Optional[tuple[int, int, int]] = None,
                 name: Optional[str] = None, array: str = "numpy") -> None:
        if not callable(fn):
            raise InputError(f"a callable device needs a function fn(A, B, C) -> D, got {type(fn).__name__}")
        if array not in ("numpy", "torch"):
            raise InputError(f"array must be 'numpy' or 'torch', got {array!r}")
        if shape is not None:
            if (not isinstance(shape, tuple) or len(shape) != 3
                    or not all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 1 << 16 for x in shape)):
                raise InputError(f"shape must be (M, N, K), three ints in 1..65536, got {shape!r}")
        self.fn, self.shape, self.array = fn, shape, array
        self.name = name or f"python:{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        self.description = f"the callable {self.name.partition(':')[2] or self.name}"

    def call(self, A: np.ndarray, B: np.ndarray, C: np.ndarray, d_fmt: str | Format) -> np.ndarray:
        """D patterns (M, N) of ``fn`` on real arrays A, B, C; DeviceError for a failing or malformed answer."""
        fd = get_format(d_fmt)
        fd = carried_in(fd)
        args: tuple[Any, ...] = (A, B, C)
        if self.array == "torch":
            args = tuple(_to_torch(x) for x in args)
        try:
            out = self.fn(*args)
        except Exception as e:  # the user's code: any failure is the device's
            first = (str(e).strip().splitlines() or [""])[0][:200]
            raise DeviceError(f"device {self.name} raised {type(e).__name__}" + (f": {first}" if first else "")) from None
        D = _as_numpy(out, self.name)
        want = (A.shape[0], B.shape[1])
        if D.shape != want:
            raise DeviceError(f"device {self.name} returned shape {D.shape}; a GEMM of A {A.shape} and B {B.shape} "
                              f"gives {want}")
        try:
            return patterns_of(D, fd, name="D")  # in D's own dtype the bits themselves: a NaN keeps its pattern
        except NotRepresentableError as e:
            raise DeviceError(f"device {self.name}: {e} (its output is not {fd.name}, the instruction's D)") from None
        except SmtmmaError as e:
            raise DeviceError(f"device {self.name} returned {e}") from None

    def run(self, vectors: Sequence[TestVector]) -> list[int]:
        """D pattern of each vector: the vectors of one instruction and K share GEMMs, one per diagonal entry."""
        out = [0] * len(vectors)
        groups: dict[tuple[str, str, Optional[str], int], list[int]] = {}
        for i, v in enumerate(vectors):
            groups.setdefault((v.arch, v.instr, v.op, v.K), []).append(i)
        for (arch, instr, op, K), idx in groups.items():
            model = lookup(arch, instr, op).model
            if model.scale_fmt is not None:
                raise DeviceError(f"device {self.name}: {instr} is block-scaled, and a callable device takes only "
                                  "(A, B, C): block scales cannot be passed")
            side = min(MAX_SIDE, -(-len(idx) // 16) * 16) if self.shape is None else min(self.shape[0], self.shape[1])
            Kg = K if self.shape is None else self.shape[2]
            if Kg < K:
                raise InputError(f"device {self.name}: the GEMM's K = {Kg} is smaller than the vectors' K = {K}")
            M, N = (side, side) if self.shape is None else self.shape[:2]
            fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
            for g0 in range(0, len(idx), side):
                part = idx[g0:g0 + side]
                A = np.zeros((M, Kg), natural_dtype(fa))
                B = np.zeros((Kg, N), natural_dtype(fb))
                C = np.zeros((M, N), natural_dtype(fc))
                for j, i in enumerate(part):
                    v = vectors[i]
                    A[j, :K] = from_patterns(np.array(v.a, dtype=np.uint64), fa, dtype=A.dtype)
                    B[:K, j] = from_patterns(np.array(v.b, dtype=np.uint64), fb, dtype=B.dtype)
                    C[j, j] = from_patterns(np.array([v.c], dtype=np.uint64), fc, dtype=C.dtype)[0]
                D = self.call(A, B, C, model.d_fmt)
                for j, i in enumerate(part):
                    out[i] = int(D[j, j])
        return out


def _to_torch(x: np.ndarray) -> Any:
    import torch

    name = x.dtype.name
    direct = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64}
    if name in direct:
        return torch.from_numpy(np.ascontiguousarray(x))
    t = getattr(torch, name, None)  # ml_dtypes and torch name bfloat16 and the FP8 types alike
    if not isinstance(t, torch.dtype):  # FP6/FP4: torch has no such element type
        return torch.from_numpy(x.astype(np.float32))
    return torch.from_numpy(x.astype(np.float32)).to(t)  # exact: the values are t's


def _as_numpy(out: Any, name: str) -> np.ndarray:
    """The callable's result as a float array; DeviceError for what is not one."""
    if out is None:
        raise DeviceError(f"device {name} returned None: FUNCTION(A, B, C) must return D (a forgotten return?)")
    if type(out).__module__.startswith("torch"):
        t = out.detach().cpu()
        keep = str(t.dtype) in ("torch.float16", "torch.float32", "torch.float64")  # NumPy's: the bits pass as they are
        out = (t if keep or not t.is_floating_point() else t.double()).numpy()
    try:
        D = np.asarray(out)
    except Exception as e:  # noqa: BLE001 - anything NumPy cannot read
        raise DeviceError(f"device {name} returned a {type(out).__name__}, not an array ({e})") from None
    if D.dtype.kind not in "fiu" and not D.dtype.type.__module__.startswith("ml_dtypes"):
        raise DeviceError(f"device {name} returned an array of dtype {D.dtype}; a GEMM returns real numbers")
    return D


def open_python_device(name: str, spec: str) -> CallableDevice:
    """The device ``python:MODULE:FUNCTION[@MxNxK]`` (``spec`` is what follows ``python:``)."""
    target, _, shape_text = spec.partition("@")
    module, colon, func = target.strip().rpartition(":")
    if not colon or not module or not func:
        raise UnknownNameError(f"device {name!r}: write python:MODULE:FUNCTION (e.g. python:mylib:gemm), "
                               "optionally @MxNxK for the GEMMs' shape")
    shape = None
    if shape_text.strip():
        parts = shape_text.strip().lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and 1 <= int(p) <= 1 << 16 for p in parts):
            raise InputError(f"device {name!r}: the shape after @ must be MxNxK (three ints in 1..65536), "
                             f"got {shape_text!r}")
        shape = (int(parts[0]), int(parts[1]), int(parts[2]))
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        mod = importlib.import_module(module)
    except Exception as e:  # an import error, or any error the module raises as it loads
        raise UnknownNameError(f"device {name!r}: cannot import {module!r} ({type(e).__name__}: "
                               f"{(str(e).splitlines() or [''])[0][:160]})") from None
    fn: Any = mod
    for part in func.split("."):  # FUNCTION may be an attribute path: python:mylib:Gemm.run
        fn = getattr(fn, part, None)
        if fn is None:
            raise UnknownNameError(f"device {name!r}: module {module!r} has no {func!r}")
    if not callable(fn):
        raise UnknownNameError(f"device {name!r}: {module}.{func} is a {type(fn).__name__}, not a function")
    return CallableDevice(fn, shape=shape, name=f"python:{target.strip()}{_shape_text(shape)}")
