"""The generated CUDA kernels (smtmma.native.cuda): compiled by nvcc, run on the host, run on a GPU.

Without a GPU: the emitted units compile with ``nvcc -c`` (skipped without
nvcc on PATH); the same text, compiled as C++ by the host compiler with
``__CUDACC_RTC__`` defined (NVRTC's branch: no system header) and a shim for
``__global__``/``threadIdx``/``__clz``, stands in for CuPy's RawModule, so
the launchers' host side and both kernels' index arithmetic are checked bit
for bit against :func:`simulate_dot`.  The test marked ``gpu`` runs the
same comparison on a real GPU (skipped without CuPy).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, Optional

import numpy as np
import pytest

from smtmma.catalogue import CATALOGUE, Entry, lookup
from smtmma.gemm import matmul
from smtmma.encodings.ccode import NotCompilable
from smtmma.errors import InputError, InputTypeError, NotRepresentableError
from smtmma.models import Model
from smtmma.native import cuda as native_cuda
from smtmma.native.cuda import (
    INSTALL_HINT,
    NoCudaError,
    cuda_source,
    gemm_cuda,
    run_rows_cuda,
)
from smtmma.sampling import draw, draw_scales
from smtmma.simulate import simulate_dot

#: (arch, instr): one row per model kind and per pattern width (fp8, mx block-scaled, nvf4's __int128, fp16 out,
#: the fp64 and fp32 FMA chains' multi-limb integers).
ROWS = [("sm70", "f16f32"), ("sm80", "bf16f32"), ("sm80", "f16f16"), ("sm90", "f16f32"), ("sm90", "e4m3f32"),
        ("sm100", "mxe4m3f32"), ("sm100", "nvf4f32"), ("gfx90a", "bf16f32"), ("gfx942", "f16f32"),
        ("gfx942", "fp8fp8f32"), ("sm80", "f64f64"), ("gfx90a", "f32f32")]
NVCC_ARCH = "sm_80"


def _entry(arch: str, instr: str) -> Entry:
    return lookup(arch, instr, None)


def _kstep(e: Entry) -> int:
    """The instruction's k: its largest shape's."""
    return max(s.k for s in e.shapes)


def _compilable(e: Entry) -> bool:
    try:
        cuda_source(e.model, _kstep(e))
    except NotCompilable:
        return False
    return True


# ---------------------------------------------------------------- nvcc


def _nvcc(nvcc: str, path: Path, mode: str) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    r = subprocess.run([nvcc, mode, f"-arch={NVCC_ARCH}", "-o", str(path.with_suffix(".out")), str(path)],
                       capture_output=True, text=True, check=False)
    return r.returncode, (r.stdout + r.stderr)[-4000:], time.perf_counter() - t0


def _nvcc_all(units: dict[str, str], mode: str) -> dict[str, tuple[int, str, float]]:
    """``nvcc mode`` (-c, -cubin) of each unit, one process per core: {name: (status, log, seconds)}."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    with tempfile.TemporaryDirectory(prefix="smtmma-nvcc-") as tmp, ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        paths = {}
        for name, text in units.items():
            paths[name] = Path(tmp) / f"{name}.cu"
            paths[name].write_text(text)
        futs = {name: ex.submit(_nvcc, nvcc, p, mode) for name, p in paths.items()}
        return {name: f.result() for name, f in futs.items()}


@pytest.fixture(scope="module")
def nvcc_results() -> dict[str, tuple[int, str, float]]:
    """Device code only (-cubin, what NVRTC compiles): half the CPU time of -c, whose host pass the slow test runs."""
    return _nvcc_all({f"{a}_{i}": cuda_source(_entry(a, i).model, _kstep(_entry(a, i))) for a, i in ROWS}, "-cubin")


@pytest.mark.parametrize("arch,instr", ROWS, ids=[f"{a}-{i}" for a, i in ROWS])
def test_nvcc_compiles(nvcc_results: dict[str, tuple[int, str, float]], arch: str, instr: str) -> None:
    rc, log, _ = nvcc_results[f"{arch}_{instr}"]
    assert rc == 0, log
    assert "warning" not in log.lower() and "error" not in log.lower(), log


@pytest.mark.slow
def test_nvcc_compiles_every_catalogue_row() -> None:
    units: dict[str, str] = {}
    for e in CATALOGUE:
        if _compilable(e):
            units.setdefault(cuda_source(e.model, _kstep(e)), f"{e.arch}_{e.instr}_{e.op}")
    results = _nvcc_all({name: text for text, name in units.items()}, "-c")
    bad = {name: log for name, (rc, log, _) in results.items() if rc != 0 or log.strip()}
    assert not bad, bad
    print(f"\n{len(results)} units, nvcc {sum(s for _, _, s in results.values()) / len(results):.2f} s each")


# ---------------------------------------------------------------- the kernels on the host, behind a fake CuPy

_SHIM = """/* CUDA built-ins for a host run: one emulated thread at a time */
struct smtmma_dim3 { unsigned x; };
static smtmma_dim3 blockIdx, threadIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
static inline int __clz(int x) { return __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return __builtin_clzll((unsigned long long)x); }
"""

_LAUNCH = """
#define SMTMMA_LAUNCH for (unsigned bx = 0; bx < grid; bx++) for (unsigned tx = 0; tx < block; tx++) \\
    { gridDim.x = grid; blockDim.x = block; blockIdx.x = bx; threadIdx.x = tx;
extern "C" void launch_smtmma_rows(unsigned grid, unsigned block, int64_t n, const ta_t *a, const tb_t *b,
                                   const tc_t *c, td_t *d, const ts_t *sa, const ts_t *sb)
{ SMTMMA_LAUNCH smtmma_rows(n, a, b, c, d, sa, sb); } }
extern "C" void launch_smtmma_gemm(unsigned grid, unsigned block, int64_t M, int64_t N, int64_t Kpad, const ta_t *A,
                                   const tb_t *B, td_t *acc, int64_t kstep, const ts_t *SA, const ts_t *SB)
{ SMTMMA_LAUNCH smtmma_gemm(M, N, Kpad, A, B, acc, kstep, SA, SB); } }
"""

#: Emulated launch size: 2 blocks of 3 threads, so both grid-stride loops wrap.
_GRID, _BLOCK = 2, 3


class _HostModule:
    """CuPy's RawModule for the tests: the unit compiled as C++ (NVRTC's branch) and loaded with ctypes."""

    compiled: ClassVar[list[tuple[str, ...]]] = []  # the options of every build

    def __init__(self, code: str, options: tuple[str, ...] = (), backend: str = "nvrtc") -> None:
        cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
        if cxx is None:
            pytest.skip("no C++ compiler on PATH")
        assert backend == "nvrtc" and ("--device-int128" in options) == ("__int128" in code)
        self.compiled.append(options)
        with tempfile.TemporaryDirectory(prefix="smtmma-host-cuda-") as tmp:  # a loaded library outlives its file
            src, lib = Path(tmp) / "unit.cpp", Path(tmp) / "unit.so"
            src.write_text(_SHIM + code + _LAUNCH)
            r = subprocess.run([cxx, "-O1", "-shared", "-fPIC", "-fwrapv", "-nostdinc", "-D__CUDACC_RTC__", "-o",
                                str(lib), str(src)], capture_output=True, text=True, check=False)
            assert r.returncode == 0, r.stderr[-3000:]
            self._lib = ctypes.CDLL(str(lib))

    def get_function(self, name: str) -> Any:
        fn = getattr(self._lib, "launch_" + name)

        def launch(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
            assert grid[0] >= 1 and block[0] >= 1
            conv = [a.ctypes.data_as(ctypes.c_void_p) if isinstance(a, np.ndarray) else ctypes.c_int64(int(a))
                    for a in args]
            fn(ctypes.c_uint(_GRID), ctypes.c_uint(_BLOCK), *conv)

        return launch


def _fake_cupy() -> types.ModuleType:
    cp = types.ModuleType("cupy")
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
    cp.cuda = types.SimpleNamespace(runtime=runtime, Device=lambda: types.SimpleNamespace(id=0))  # type: ignore[attr-defined]
    for name in ("asarray", "ascontiguousarray", "zeros", "empty", "array"):
        setattr(cp, name, getattr(np, name))
    cp.asnumpy = np.asarray  # type: ignore[attr-defined]
    cp.RawModule = _HostModule  # type: ignore[attr-defined]
    return cp


@pytest.fixture
def host_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    monkeypatch.setattr(native_cuda, "_modules", {})  # host modules never reach a real GPU's run


Batch = tuple[np.ndarray, np.ndarray, np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]


def _inputs(model: Model, n: int, K: int, rng: np.random.Generator) -> Batch:
    """(A, B, C, SA, SB): n rows, half drawn 'normal', half 'bits' (NaN, inf, subnormals); scales None if unscaled."""
    h = n // 2
    pick = lambda fmt, shape: np.concatenate([draw("normal", fmt, (h,) + shape, rng),  # noqa: E731
                                              draw("bits", fmt, (n - h,) + shape, rng)])
    A, B, C = pick(model.a_fmt, (K,)), pick(model.b_fmt, (K,)), pick(model.c_fmt, ())
    if model.scale_fmt is None:
        return A, B, C, None, None
    nb = -(-K // (model.block or K))
    sc = lambda: np.concatenate([draw_scales("normal", model.scale_fmt, (h, nb), rng),  # noqa: E731
                                 draw_scales("bits", model.scale_fmt, (n - h, nb), rng)])
    return A, B, C, sc(), sc()


def _chained(model: Model, kstep: int, A: np.ndarray, B: np.ndarray, C: np.ndarray,
             SA: Optional[np.ndarray], SB: Optional[np.ndarray]) -> np.ndarray:
    """acc + A @ B by simulate_dot, one instruction step of kstep lanes at a time (D read back as C)."""
    M, Kpad = A.shape
    N = B.shape[1]
    d = C.reshape(-1)
    for k0 in range(0, Kpad, kstep):
        a = np.repeat(A[:, k0:k0 + kstep], N, axis=0)
        b = np.tile(B[k0:k0 + kstep].T, (M, 1))
        sa = sb = None
        if SA is not None and SB is not None:
            block = model.block or kstep
            j0, j1 = k0 // block, (k0 + kstep) // block
            sa, sb = np.repeat(SA[:, j0:j1], N, axis=0), np.tile(SB[j0:j1].T, (M, 1))
        d = simulate_dot(model, None, a, b, d, scale_a=sa, scale_b=sb)
    return d.reshape(M, N)


def _check_rows_and_gemm(e: Entry, rng: np.random.Generator, n: int = 64, M: int = 3, N: int = 5) -> None:
    model, kstep = e.model, _kstep(e)
    A, B, C, SA, SB = _inputs(model, n, kstep, rng)
    want = simulate_dot(model, None, A, B, C, scale_a=SA, scale_b=SB)
    got = run_rows_cuda(model, kstep, A, B, C, SA, SB)
    assert got.dtype == want.dtype and np.array_equal(got, want), f"{e.arch} {e.instr} rows"
    Kpad = 2 * kstep
    A, Bt, C, SA, SBt = _inputs(model, M * N, Kpad, rng)
    A, B, acc = A[:M], Bt[:N].T.copy(), C.reshape(M, N)
    SA, SB = (SA[:M], SBt[:N].T.copy()) if SA is not None and SBt is not None else (None, None)
    got = gemm_cuda(model, kstep, A, B, acc, SA, SB)
    assert np.array_equal(got, _chained(model, kstep, A, B, acc, SA, SB)), f"{e.arch} {e.instr} gemm"


#: Host runs: a row of each model kind, the block-scaled ones, fp16 D (compiling as C++ costs ~1 s each).
HOST_ROWS = [("sm80", "f16f16"), ("sm90", "e4m3f32"), ("sm100", "mxe4m3f32"), ("sm100", "nvf4f32"),
             ("gfx90a", "bf16f32"), ("gfx942", "f16f32"), ("gfx942", "fp8fp8f32"), ("sm80", "f64f64"),
             ("gfx90a", "f32f32")]


@pytest.mark.parametrize("arch,instr", HOST_ROWS, ids=[f"{a}-{i}" for a, i in HOST_ROWS])
def test_kernels_match_the_simulator_on_the_host(host_cupy: None, arch: str, instr: str) -> None:
    _check_rows_and_gemm(_entry(arch, instr), np.random.default_rng(zlib.crc32(f"{arch} {instr}".encode())))


def test_matmul_on_the_cuda_device_equals_the_cpu(host_cupy: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """matmul(device="cuda") pads K, chains the instructions and converts D exactly as the CPU path does."""
    monkeypatch.setenv("SMTMMA_CC_OPT", "-O0")  # the CPU kernels: same bits, faster builds
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((5, 40)).astype(np.float16), rng.standard_normal((40, 7)).astype(np.float16)
    C = rng.standard_normal((5, 7)).astype(np.float32)
    want = matmul("sm90", "f16f32", A, B, C)
    got = matmul("sm90", "f16f32", A, B, C, device="cuda")
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    half = matmul("sm80", "f16f16", A, B, device="cuda")
    assert half.dtype == np.float16 and np.array_equal(half.view(np.uint16), matmul("sm80", "f16f16", A, B).view(np.uint16))


def test_modules_are_cached_per_source(host_cupy: None) -> None:
    e = _entry("sm70", "f16f32")
    A, B, C, _, _ = _inputs(e.model, 4, 4, np.random.default_rng(1))
    before = len(_HostModule.compiled)
    run_rows_cuda(e.model, 4, A, B, C)
    run_rows_cuda(e.model, 4, A[:2], B[:2], C[:2])
    assert len(_HostModule.compiled) == before + 1


def test_launcher_input_errors(host_cupy: None) -> None:
    mx, f16 = _entry("sm100", "mxe4m3f32").model, _entry("sm80", "f16f32").model
    z = lambda *shape: np.zeros(shape, np.uint8)  # noqa: E731
    with pytest.raises(InputError, match=r"\(N, K\) = \(2, 16\)"):
        run_rows_cuda(f16, 16, z(2, 8), z(2, 8), z(2))
    with pytest.raises(InputTypeError, match="unsigned integer bit patterns"):
        run_rows_cuda(f16, 8, np.zeros((2, 8)), z(2, 8), z(2))
    with pytest.raises(NotRepresentableError, match="not a 8-bit pattern"):
        run_rows_cuda(mx, 32, np.full((2, 32), 256), z(2, 32), z(2), SA=z(2, 1), SB=z(2, 1))
    with pytest.raises(InputError, match="needs SA and SB"):
        run_rows_cuda(mx, 32, z(2, 32), z(2, 32), z(2))
    with pytest.raises(InputError, match="takes no block scales"):
        run_rows_cuda(f16, 8, z(2, 8), z(2, 8), z(2), SA=z(2, 1), SB=z(2, 1))
    with pytest.raises(InputError, match=r"SA must have shape \(2, 1\)"):
        run_rows_cuda(mx, 32, z(2, 32), z(2, 32), z(2), SA=z(2, 2), SB=z(2, 1))
    with pytest.raises(InputError, match="multiple of kstep = 16"):
        gemm_cuda(f16, 16, z(2, 24), z(24, 3), z(2, 3))
    with pytest.raises(InputError, match="shapes do not multiply"):
        gemm_cuda(f16, 16, z(2, 16), z(16, 3), z(3, 2))
    with pytest.raises(InputError, match="cannot be chained"):
        gemm_cuda(_entry("sm70", "f16f32c16").model, 4, z(2, 4), z(4, 3), z(2, 3))


def test_without_cupy_one_line_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    e = _entry("sm80", "f16f32")
    with pytest.raises(NoCudaError, match=r"^device='cuda' needs CuPy and a CUDA GPU: pip install 'smtmma\[cuda\]'$"):
        run_rows_cuda(e.model, 8, np.zeros((1, 8), np.uint16), np.zeros((1, 8), np.uint16), np.zeros(1, np.uint32))
    assert INSTALL_HINT.count("\n") == 0 and issubclass(NoCudaError, ValueError)


# ---------------------------------------------------------------- a real GPU


@pytest.mark.gpu
@pytest.mark.parametrize("arch,instr", ROWS, ids=[f"{a}-{i}" for a, i in ROWS])
def test_gpu_matches_the_simulator(arch: str, instr: str) -> None:
    if importlib.util.find_spec("cupy") is None:
        pytest.skip("CuPy is not installed")
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA GPU")
    except Exception as e:  # CuPy without its CUDA libraries, or without a driver
        pytest.skip(f"no usable CUDA GPU ({type(e).__name__})")
    _check_rows_and_gemm(_entry(arch, instr), np.random.default_rng(7), n=4096, M=33, N=65)
