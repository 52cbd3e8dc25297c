"""NVIDIA Tensor Cores as a device: kernels from :mod:`smtmma.hw.cuda_kernels`, compiled at run time with NVRTC.

Each vector runs on this GPU's own instruction for the vector's
instruction type: the catalogue row ``(gpu arch, instr, op)`` (the
vector's op family when the GPU's architecture has it, else the default
family), one of that row's shapes (the vector's ``op`` when it names one,
else the shape with the largest k, the first listed on ties).  The dot
product is placed, replicated, into an instruction-shaped tile
(:func:`~smtmma.discriminators.placement.place`); every cell of D comes
back, and cells that compute the same dot product must agree bit for bit
(an independence and fragment-layout check) before D[0, 0] is returned.

CuPy is imported lazily: the package and its tests run without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ..catalogue import Entry, entries, lookup
from ..discriminators.placement import Tile, disagreeing_cells, padding_zero, place
from ..errors import SmtmmaError, choices
from ..formats import get_format
from ..isa import InstrShape
from ..vectors import TestVector
from .cuda_kernels import KernelSpec, container_bits, kernel_source, kernel_spec, toolchain_arch
from .device import Device, DeviceError

__all__ = ["CudaDevice", "ARCH_OF_CC", "choose_shape", "INSTALL_HINT"]

#: Compute capability -> catalogue architecture.
ARCH_OF_CC = {(7, 0): "sm70", (7, 5): "sm75", (8, 0): "sm80", (8, 6): "sm86", (8, 9): "sm89",
              (9, 0): "sm90", (10, 0): "sm100", (10, 3): "sm103", (11, 0): "sm110", (12, 0): "sm120", (12, 1): "sm121"}

INSTALL_HINT = "cuda: CuPy is not installed; pip install 'smtmma[cuda]' (CUDA 12) or 'smtmma[cuda13]'"

#: Bytes of device memory one launch may use for its arrays.
LAUNCH_BYTES = 256 << 20

_DTYPE = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _import_cupy() -> Any:
    try:
        import cupy
    except ImportError:
        raise DeviceError(INSTALL_HINT) from None
    except Exception as e:  # CuPy present but its CUDA libraries are not
        raise DeviceError(f"cuda: CuPy cannot be imported ({type(e).__name__}: {e})") from None
    return cupy


def choose_shape(entry: Entry, op: Optional[str]) -> InstrShape:
    """The shape a vector runs on: the one ``op`` names, else the largest k (first listed on ties)."""
    if not entry.shapes:
        raise DeviceError(f"cuda: {entry.arch} {entry.instr} ({entry.op}) lists no instruction shape")
    if op:
        key = op.strip().lower()
        for s in entry.shapes:
            if s.name.lower() == key:
                return s
    best = entry.shapes[0]
    for s in entry.shapes[1:]:
        if s.k > best.k:
            best = s
    return best


@dataclass
class _Job:
    """One vector's place in a launch."""

    index: int
    tile: Tile


class CudaDevice(Device):
    """GPU ``index`` through CuPy; ``arch`` is its catalogue architecture."""

    hardware = True

    def __init__(self, name: str, index: int) -> None:
        self.name = name
        self.index = index
        self._cp = _import_cupy()
        cp = self._cp
        try:
            count = cp.cuda.runtime.getDeviceCount()
        except Exception as e:
            raise DeviceError(f"cuda: no usable CUDA GPU ({_short(e)})") from None
        if count == 0:
            raise DeviceError("cuda: no CUDA GPU found")
        if not 0 <= index < count:
            raise DeviceError(f"cuda:{index}: no such GPU (found {count}: cuda:0..cuda:{count - 1})")
        try:
            props = cp.cuda.runtime.getDeviceProperties(index)
        except Exception as e:
            raise DeviceError(f"cuda:{index}: cannot read the device properties ({_short(e)})") from None
        cc = (int(props["major"]), int(props["minor"]))
        gpu = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        if cc not in ARCH_OF_CC:
            raise DeviceError(f"cuda:{index}: {gpu} has compute capability {cc[0]}.{cc[1]}, which the catalogue does "
                              f"not model (modelled: {', '.join(f'{a}.{b}' for a, b in ARCH_OF_CC)})")
        self.arch = ARCH_OF_CC[cc]
        self.description = f"{gpu} ({self.arch}, cuda:{index})"
        self._props = props
        self._cc = cc
        self._gpu = gpu
        self._functions: dict[str, Any] = {}
        self._specs: dict[tuple[str, str, Optional[str]], KernelSpec] = {}

    def info(self) -> dict[str, Any]:
        """The GPU for a report: name, compute capability, driver and runtime versions (CUDA's 12040 = 12.4), CuPy's."""
        cp = self._cp
        out: dict[str, Any] = {"name": self._gpu, "compute_capability": f"{self._cc[0]}.{self._cc[1]}",
                               "index": self.index}
        for key, call in (("driver", lambda: cp.cuda.runtime.driverGetVersion()),
                          ("runtime", lambda: cp.cuda.runtime.runtimeGetVersion()),
                          ("cupy", lambda: cp.__version__),
                          ("nvrtc", lambda: _nvrtc_version()),
                          ("memory_bytes", lambda: int(self._props["totalGlobalMem"])),
                          ("multiprocessors", lambda: int(self._props["multiProcessorCount"])),
                          ("clock_khz", lambda: int(self._props["clockRate"]))):
            try:
                out[key] = call()
            except Exception:  # a field this CuPy or driver does not give is left out
                pass
        return out

    # ------------------------------------------------------------ which kernel

    def entry_for(self, v: TestVector) -> Entry:
        """The catalogue row of this GPU that runs vector ``v``."""
        assert self.arch is not None
        rows = entries(self.arch, v.instr)
        if not rows:
            have = sorted({e.instr for e in entries(self.arch)})
            raise DeviceError(f"{self.arch} has no {v.instr} instruction (valid for {self.arch}: {choices(have)})")
        op = v.op if any(e.op == v.op for e in rows) else None
        return lookup(self.arch, v.instr, op)

    def spec_for(self, v: TestVector) -> KernelSpec:
        """The kernel that runs vector ``v`` on this GPU; DeviceError if there is none."""
        raw_op = v.raw.get("op") if isinstance(v.raw.get("op"), str) else None
        key = (v.instr, v.op, raw_op)
        if key not in self._specs:
            entry = self.entry_for(v)
            self._specs[key] = kernel_spec(entry, choose_shape(entry, raw_op))
        return self._specs[key]

    # ------------------------------------------------------------ compile

    def _function(self, spec: KernelSpec) -> Any:
        """The loaded kernel (compiled once per device)."""
        if spec.name not in self._functions:
            assert self.arch is not None
            arch = toolchain_arch(self.arch, spec.shape)
            cubin = _nvrtc_cubin(self._cp, kernel_source(spec, [self.arch]), spec.name, arch)
            try:
                with self._cp.cuda.Device(self.index):
                    module = self._cp.cuda.function.Module()
                    module.load(cubin)
                    self._functions[spec.name] = (module, module.get_function(spec.name))
            except Exception as e:
                raise DeviceError(f"cuda: cannot load {spec.name} for {arch} ({_short(e)})") from None
        return self._functions[spec.name][1]

    # ------------------------------------------------------------ run

    def run(self, vectors: Sequence[TestVector]) -> list[int]:
        """D of each vector (16-bit patterns for fp16 D, 32-bit for fp32 / E8M13, 64-bit for fp64)."""
        out = [0] * len(vectors)
        groups: dict[tuple[str, int], tuple[KernelSpec, list[_Job]]] = {}
        for n, v in enumerate(vectors):
            spec = self.spec_for(v)
            tile = self._place(spec, v)
            groups.setdefault((spec.name, tile.issues), (spec, []))[1].append(_Job(n, tile))
        for spec, jobs in groups.values():
            per = _tiles_per_launch(spec, jobs[0].tile.issues)
            for start in range(0, len(jobs), per):
                chunk = jobs[start:start + per]
                d = self._launch(spec, [j.tile for j in chunk])
                for j, dj in zip(chunk, d, strict=True):
                    bad = disagreeing_cells(j.tile, dj)
                    if bad:
                        cells = ", ".join(f"({r}, {c})" for r, c in bad[:4]) + (" ..." if len(bad) > 4 else "")
                        raise DeviceError(f"cuda: cells {cells} of a tile disagree: outputs are not independent or the "
                                          f"fragment layout is wrong ({spec.shape.name}, {spec.instr}, vector "
                                          f"line {vectors[j.index].line})")
                    out[j.index] = int(dj[0, 0])
        return out

    def _place(self, spec: KernelSpec, v: TestVector) -> Tile:
        try:
            pad = padding_zero(get_format(spec.b_fmt))
            if spec.block:
                return place(spec.shape, v.a, v.b, v.c, scale_a=v.scale_a, scale_b=v.scale_b, block=spec.block, b_pad=pad)
            return place(spec.shape, v.a, v.b, v.c, b_pad=pad)
        except SmtmmaError as e:
            raise DeviceError(f"cuda: line {v.line}: {e}") from None

    def _launch(self, spec: KernelSpec, tiles: list[Tile]) -> np.ndarray:
        """D (len(tiles), m, n) of one launch over ``tiles`` (same kernel, same number of issues)."""
        cp = self._cp
        fn = self._function(spec)
        sh = spec.shape
        count = len(tiles)
        padded = -(-count // spec.tiles_per_block) * spec.tiles_per_block
        host = {
            "A": _stack([t.A for t in tiles], padded, spec.a_fmt),
            "B": _stack([t.B for t in tiles], padded, spec.b_fmt),
            "C": _stack([t.C for t in tiles], padded, spec.c_fmt),
        }
        if spec.block:
            host["SA"] = _stack([t.scale_a for t in tiles], padded, spec.scale_fmt or "ue8m0")  # type: ignore[misc]
            host["SB"] = _stack([t.scale_b for t in tiles], padded, spec.scale_fmt or "ue8m0")  # type: ignore[misc]
        try:
            with cp.cuda.Device(self.index):
                dev = {k: cp.asarray(x) for k, x in host.items()}
                dummy = cp.zeros(1, dtype=cp.uint8)
                d = cp.zeros_like(dev["C"])
                grid = (padded // spec.tiles_per_block,)
                fn(grid, (spec.threads_per_block,),
                   (dev["A"], dev["B"], dev["C"], d, dev.get("SA", dummy), dev.get("SB", dummy),
                    np.int32(padded), np.int32(tiles[0].issues)))
                result = cp.asnumpy(d)
        except SmtmmaError:
            raise
        except Exception as e:
            raise DeviceError(f"cuda: launch of {spec.name} failed ({_short(e)})") from None
        return result[:count].reshape(count, sh.m, sh.n)


def _stack(mats: list[Any], padded: int, fmt_name: str) -> np.ndarray:
    """Patterns of ``mats`` in their kernel containers (tf32: << 13), zero tiles appended up to ``padded``."""
    fmt = get_format(fmt_name)
    bits = container_bits(fmt.name)
    arr = np.zeros((padded, *np.asarray(mats[0]).shape), dtype=np.uint64)
    arr[: len(mats)] = np.stack([np.asarray(m, dtype=np.uint64) for m in mats])
    if fmt.container is not None and container_bits(fmt.container) == bits:
        arr = arr << np.uint64(fmt.container_shift)
    return np.ascontiguousarray(arr.astype(_DTYPE[bits]))


def _tiles_per_launch(spec: KernelSpec, issues: int) -> int:
    """Tiles per launch so that A, B, C and D stay within :data:`LAUNCH_BYTES`."""
    sh = spec.shape
    kp = issues * sh.k
    per_tile = (sh.m * kp * container_bits(spec.a_fmt) + kp * sh.n * container_bits(spec.b_fmt)
                + 2 * sh.m * sh.n * container_bits(spec.c_fmt)) // 8 + 1
    per = max(1, LAUNCH_BYTES // per_tile)
    return max(spec.tiles_per_block, per // spec.tiles_per_block * spec.tiles_per_block)


def _nvrtc() -> Any:
    """CuPy's NVRTC bindings; DeviceError when this CuPy has none."""
    try:
        from cupy_backends.cuda.libs import nvrtc
    except ImportError:
        try:
            from cupy.cuda import nvrtc  # type: ignore[no-redef]  # older CuPy
        except ImportError:
            raise DeviceError("cuda: this CuPy exposes no NVRTC bindings; CuPy >= 12 is needed") from None
    return nvrtc


def _nvrtc_version() -> str:
    """NVRTC's version as ``MAJOR.MINOR``."""
    major, minor = _nvrtc().getVersion()
    return f"{major}.{minor}"


def _nvrtc_cubin(cp: Any, source: str, name: str, arch: str) -> bytes:
    """SASS (cubin) of ``source`` for ``arch`` (``sm_90a``...) through NVRTC, as CuPy ships it."""
    nvrtc = _nvrtc()
    try:
        prog = nvrtc.createProgram(source, name + ".cu", (), ())
    except Exception as e:
        raise DeviceError(f"cuda: NVRTC cannot start ({_short(e)})") from None
    try:
        try:
            nvrtc.compileProgram(prog, (f"-arch={arch}", "-std=c++17"))
        except Exception as e:
            log = ""
            try:
                log = nvrtc.getProgramLog(prog)
            except Exception:
                pass
            first = next((ln for ln in str(log).splitlines() if "error" in ln), str(log).strip()[:200])
            raise DeviceError(f"cuda: NVRTC cannot compile {name} for {arch} ({first or _short(e)}); "
                              f"the PTX may need a newer CUDA than CuPy's NVRTC") from None
        try:
            return bytes(nvrtc.getCUBIN(prog))
        except Exception as e:
            raise DeviceError(f"cuda: NVRTC gave no cubin for {name} ({_short(e)}); CUDA >= 11.1 is needed") from None
    finally:
        try:
            nvrtc.destroyProgram(prog)
        except Exception:
            pass


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]
