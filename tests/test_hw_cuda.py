"""The NVIDIA device: fragment layouts, a pure-Python emulation of a kernel launch, kernel compilation, the device.

Runs without a GPU: layouts and the emulation are pure Python; the
compile test needs ``nvcc`` (skipped without it); only the tests marked
``gpu`` launch kernels (skipped without CuPy and a GPU).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np
import pytest

from smtmma.catalogue import ARCHS, CATALOGUE, Entry, model_of
from smtmma.discriminators.placement import Tile, cell_inputs, disagreeing_cells, place
from smtmma.formats import get_format
from smtmma.hw.cuda_kernels import KernelSpec, cuda_kernels, kernel_spec, tcgen05_idesc, unsupported_kernels
from smtmma.hw.device import DeviceError, open_device
from smtmma.hw.nv_layouts import Expr, Fragment, InstrLayout, SmemTile, instr_layout
from smtmma.isa import InstrShape
from smtmma.models import Model
from smtmma.sampling import draw, draw_scales
from smtmma.simulate import simulate_dot, simulate_mma


def _specs() -> list[tuple[Entry, KernelSpec]]:
    """Every (representative row, kernel) pair the NVIDIA device can run, one per kernel."""
    seen: dict[str, tuple[Entry, KernelSpec]] = {}
    for e in CATALOGUE:
        if ARCHS[e.arch].vendor != "nvidia":
            continue
        for sh in e.shapes:
            try:
                sp = kernel_spec(e, sh)
            except DeviceError:
                continue
            seen.setdefault(sp.name, (e, sp))
    return list(seen.values())


SPECS = _specs()
SPEC_IDS = [sp.name.replace("smtmma_", "") for _, sp in SPECS]


# ---------------------------------------------------------------- layouts: bijections


def _owners(frag: Fragment, lay: InstrLayout, slot: int) -> list[int]:
    return [t for t in range(frag.threads) if frag.owns(t) and lay.tile_of(t) == slot]


@pytest.mark.parametrize("entry,spec", SPECS, ids=SPEC_IDS)
def test_fragments_cover_each_element_once(entry: Entry, spec: KernelSpec) -> None:
    lay = spec.layout
    for name, op in lay.operands().items():
        if isinstance(op, SmemTile):
            offs = sorted(op.offset(r, c) for r in range(op.rows) for c in range(op.cols))  # type: ignore[type-var]
            assert offs == list(range(op.size)), f"{name}: shared-memory layout is not a bijection"
            continue
        table = op.table()
        for slot in range(lay.tiles):
            cells = [table[t][i] for t in _owners(op, lay, slot) for i in range(op.count)]
            want = [(r, c) for r in range(op.rows) for c in range(op.cols)]
            assert sorted(cells) == want, f"{name} (tile {slot}) is not covered exactly once"


def test_operand_shapes_match_the_instruction() -> None:
    for _, spec in SPECS:
        lay, sh = spec.layout, spec.shape
        assert (lay.a.rows, lay.a.cols) == (sh.m, sh.k)
        assert (lay.b.rows, lay.b.cols) == (sh.k, sh.n)
        assert (lay.c.rows, lay.c.cols) == (sh.m, sh.n)
        for op in (lay.a, lay.b, lay.c):
            if isinstance(op, Fragment):  # every register is filled: regs x elements per register = count
                assert op.regs * op.per_reg == op.count


def _frag(shape: str, a: str, c: str = "fp32", block: Optional[int] = None, k_: int = 0) -> InstrLayout:
    import re

    m, n, k = map(int, re.search(r"m(\d+)n(\d+)k(\d+)", shape).groups())  # type: ignore[union-attr]
    return instr_layout(InstrShape(shape, m, n, k), a, a, c, block)


def _at(frag: Fragment, lane: int, i: int) -> tuple[int, int]:
    return frag.table()[lane][i]


def test_spot_checks_against_the_ptx_text() -> None:
    """Positions read off the formulas of PTX ISA 9.0 section 9.7.14.5 (and 9.7.15.5.1.1 via cutlass)."""
    lay = _frag("mma.sync.aligned.m16n8k16", "fp16")
    a, b, c = lay.a, lay.b, lay.c
    assert isinstance(a, Fragment) and isinstance(b, Fragment)
    # 9.7.14.5.8: a0,a1 row groupID, cols 2*tig + {0,1}; a2,a3 row groupID + 8; a4..a7 cols + 8
    assert [_at(a, 0, i) for i in range(8)] == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
    assert _at(a, 5, 0) == (1, 2) and _at(a, 5, 7) == (9, 11)
    # B: row 2*tig + (i & 1) (+8 for i >= 2), col groupID
    assert [_at(b, 5, i) for i in range(4)] == [(2, 1), (3, 1), (10, 1), (11, 1)]
    # C/D: row groupID (+8 for c2, c3), col 2*tig + (i & 1)
    assert [_at(c, 5, i) for i in range(4)] == [(1, 2), (1, 3), (9, 2), (9, 3)]
    # 9.7.14.5.7 tf32 m16n8k8 A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
    t8 = _frag("mma.sync.aligned.m16n8k8", "tf32").a
    assert isinstance(t8, Fragment)
    assert [_at(t8, 5, i) for i in range(4)] == [(1, 1), (9, 1), (1, 5), (9, 5)]
    # 9.7.14.5.8 f64 m16n8k16 A: col = 2i + tig (even i) / 2i - 2 + tig (odd i)
    f64 = _frag("mma.sync.aligned.m16n8k16", "fp64", "fp64").a
    assert isinstance(f64, Fragment)
    assert [_at(f64, 5, i) for i in range(8)] == [(1, 1), (9, 1), (1, 5), (9, 5), (1, 9), (9, 9), (1, 13), (9, 13)]
    # 9.7.14.5.2 f64 m8n8k4: A (lane >> 2, lane % 4), C (groupID, 2 * tig + i)
    f884 = _frag("mma.sync.aligned.m8n8k4", "fp64", "fp64")
    assert _at(f884.a, 6, 0) == (1, 2) and [_at(f884.c, 5, i) for i in range(2)] == [(1, 2), (1, 3)]  # type: ignore[arg-type]
    # 9.7.14.5.10 m16n8k32 8-bit A: a0..a3 (g, 4t..4t+3), a4..a7 (g+8, ...), a8.. cols + 16
    k32 = _frag("mma.sync.aligned.m16n8k32", "e4m3").a
    assert isinstance(k32, Fragment)
    assert [_at(k32, 5, i) for i in (0, 3, 4, 8, 12, 15)] == [(1, 4), (1, 7), (9, 4), (1, 20), (9, 20), (9, 23)]
    # 9.7.14.5.11 m16n8k64 e2m1 A: a0 (g, 8t), a8 (g+8, 8t), a16 (g, 8t+32), a24 (g+8, 8t+32)
    k64 = _frag("mma.sync.aligned.m16n8k64.kind::mxf4.block_scale", "e2m1", block=32)
    assert [_at(k64.a, 5, i) for i in (0, 8, 16, 24, 31)] == [(1, 8), (9, 8), (1, 40), (9, 40), (9, 47)]  # type: ignore[arg-type]
    assert k64.a.bits == 4 and k64.a.per_reg == 8  # type: ignore[union-attr]
    # 9.7.14.3 with thread-id-a = 0: lanes 4g, 4g+1 give rows g, g+8; lanes 4g+2, 4g+3 give none
    sa, sb = k64.scale_a, k64.scale_b
    assert sa is not None and sb is not None
    assert _at(sa, 4, 0) == (1, 0) and _at(sa, 5, 1) == (9, 1) and not sa.owns(2) and not sa.owns(7)
    assert _at(sb, 12, 1) == (1, 3) and sb.owns(12) and not sb.owns(13)
    # 9.7.14.5.1 Volta m8n8k4 (.f32 C): lane 0 holds rows {0, 2} x cols {0, 1, 4, 5}; lanes 16.. rows + 4
    v = _frag("mma.sync.aligned.m8n8k4", "fp16")
    assert [_at(v.c, 0, i) for i in range(8)] == [(0, 0), (0, 1), (2, 0), (2, 1), (0, 4), (0, 5), (2, 4), (2, 5)]  # type: ignore[arg-type]
    assert _at(v.c, 19, 0) == (5, 2) and _at(v.a, 17, 3) == (5, 3) and _at(v.b, 18, 1) == (1, 6)  # type: ignore[arg-type]
    assert [v.tile_of(t) for t in (0, 4, 8, 12, 16, 20, 31)] == [0, 1, 2, 3, 0, 1, 3]
    # e2m1 under .kind::f8f6f4 sits in bits 2..5 of its byte (9.7.14.5.14)
    f6 = _frag("mma.sync.aligned.m16n8k32.kind::f8f6f4", "e2m1")
    assert f6.a.shift == 2 and f6.a.bits == 8  # type: ignore[union-attr]
    # wgmma D (cutlass CLayout_64xN): thread 37 = warp 1, lane 5
    wg = _frag("wgmma.mma_async.sync.aligned.m64n256k16", "fp16")
    assert [_at(wg.c, 37, i) for i in (0, 1, 2, 4)] == [(17, 2), (17, 3), (25, 2), (17, 10)]


def test_shared_memory_tiles_and_descriptors() -> None:
    # PTX 9.7.15.5.1.2 / 9.7.16.3.3, K-major no swizzle: a core matrix is 8 rows x 16 bytes, rows 16 B apart
    tile = SmemTile(mn=16, k=16, elem_bits=16, transposed=False)
    assert tile.t == 8 and tile.lbo == 128 and tile.sbo == 256
    assert [tile.offset(r, 0) for r in range(3)] == [0, 8, 16]  # row stride 16 bytes
    assert tile.offset(0, 8) == 64 and tile.offset(8, 0) == 128  # next core matrix along K at LBO, next 8 rows at SBO
    assert str(tile.offset(Expr("row"), Expr("col"))).count("row") >= 2
    wg = instr_layout(InstrShape("tcgen05.mma.cta_group::1.kind::f16", 128, 256, 16), "fp16", "fp16", "fp32")
    spec = KernelSpec("x", "f16f32", wg.shape, "fp16", "fp16", "fp32", None, None, wg)
    d = tcgen05_idesc(spec)
    assert (d >> 4) & 3 == 1 and (d >> 17) & 0x3F == 32 and (d >> 24) & 0x1F == 8 and (d >> 7) & 0x3F == 0


def test_unsupported_tcgen05_kinds_are_refused_with_a_reason() -> None:
    refused = unsupported_kernels()
    mixed_cd = [r for r in refused if "C and D of different formats" in r[3]]  # f16f32c16 (see tests/test_variants.py)
    assert {(arch, instr) for arch, instr, _, _ in mixed_cd} == {("sm70", "f16f32c16"), ("sm75", "f16f32c16")}
    refused = [r for r in refused if r not in mixed_cd]
    assert refused and all(arch in ("sm100", "sm103", "sm110") and "tcgen05" in shape for arch, _, shape, _ in refused)
    by_arch = {a: {(i, s) for arch, i, s, _ in refused if arch == a} for a in ("sm100", "sm103", "sm110")}
    assert by_arch["sm100"] == by_arch["sm103"] == by_arch["sm110"]  # the provisional rows are sm100's, kernel for kernel
    assert any("block_scale" in shape for _, _, shape, _ in refused)
    with pytest.raises(DeviceError, match="figures of the PTX ISA"):
        instr_layout(InstrShape("tcgen05.mma.cta_group::1.kind::f8f6f4", 128, 256, 32), "e2m1", "e2m1", "fp32")


# ---------------------------------------------------------------- emulation of a launch


def _cshift(fmt: str) -> int:
    f = get_format(fmt)
    return f.container_shift if f.container is not None else 0


def _to_regs(frag: Fragment, mat: np.ndarray, t: int, cshift: int) -> list[int]:
    """Thread t's registers, packed as the kernel packs them."""
    regs = [0] * frag.regs
    mask = (1 << frag.bits) - 1
    for i in range(frag.count):
        r, c = frag.at(t, i)
        v = int(mat[r, c]) << cshift
        reg, lo = frag.place(i)
        if frag.bits >= 32:
            regs[reg] = v
        else:
            regs[reg] |= ((v << frag.shift) & mask) << lo
    return regs


def _from_regs(frag: Fragment, regs: dict[int, list[int]], cshift: int) -> np.ndarray:
    """The matrix the tensor core sees from the owning threads' registers; each element exactly once."""
    out = np.zeros((frag.rows, frag.cols), dtype=np.uint64)
    seen = np.zeros((frag.rows, frag.cols), dtype=np.int64)
    mask = (1 << frag.bits) - 1
    for t, rr in regs.items():
        if not frag.owns(t):
            continue
        for i in range(frag.count):
            r, c = frag.at(t, i)
            reg, lo = frag.place(i)
            v = rr[reg] if frag.bits >= 32 else ((rr[reg] >> lo) & mask) >> frag.shift
            out[r, c] = v >> cshift
            seen[r, c] += 1
    assert (seen == 1).all(), "fragment does not cover the matrix exactly once"
    return out


def _through(op: object, mat: np.ndarray, threads: list[int], cshift: int) -> np.ndarray:
    """``mat`` as the tensor core reads it after the threads put it in registers / shared memory."""
    if isinstance(op, SmemTile):
        smem = np.full(op.size, -1, dtype=np.int64)
        for r in range(op.rows):
            for c in range(op.cols):
                smem[op.offset(r, c)] = int(mat[r, c]) << cshift  # type: ignore[index]
        assert (smem >= 0).all()
        return np.array([[smem[op.offset(r, c)] >> cshift for c in range(op.cols)] for r in range(op.rows)],  # type: ignore[index]
                        dtype=np.uint64)
    assert isinstance(op, Fragment)
    return _from_regs(op, {t: _to_regs(op, mat, t, cshift) for t in threads}, cshift)


def _random_tile(spec: KernelSpec, model: Model, issues: int, rng: np.random.Generator) -> Tile:
    K = issues * spec.shape.k - 1  # one zero lane of padding
    a = draw("bits", spec.a_fmt, K, rng).tolist()
    b = draw("bits", spec.b_fmt, K, rng).tolist()
    c = int(draw("bits", spec.c_fmt, 1, rng)[0])
    if spec.block:
        nb = -(-K // spec.block)
        sa = draw_scales("finite-bits", spec.scale_fmt or "ue8m0", nb, rng).tolist()
        sb = draw_scales("finite-bits", spec.scale_fmt or "ue8m0", nb, rng).tolist()
        return place(spec.shape, a, b, c, scale_a=sa, scale_b=sb, block=spec.block)
    return place(spec.shape, a, b, c)


def _issue(tile: Tile, s: int, k: int, nsf: int) -> tuple[np.ndarray, ...]:
    sa = tile.scale_a[:, s * nsf:(s + 1) * nsf] if tile.scale_a is not None else None
    sb = tile.scale_b[s * nsf:(s + 1) * nsf, :] if tile.scale_b is not None else None
    return tile.A[:, s * k:(s + 1) * k], tile.B[s * k:(s + 1) * k, :], sa, sb  # type: ignore[return-value]


def _emulate(spec: KernelSpec, model: Model, tiles: list[Tile]) -> list[np.ndarray]:
    """D of each tile as the kernel computes it: gather, MMA on what the registers hold, chain, scatter, read back."""
    lay = spec.layout
    k, nsf = spec.shape.k, lay.scale_vec
    ca, cb = _cshift(spec.a_fmt), _cshift(spec.b_fmt)
    out = []
    for slot, tile in enumerate(tiles):
        threads = [t for t in range(lay.threads) if lay.tile_of(t) == slot]
        acc = {t: _to_regs(lay.c, tile.C, t, 0) for t in threads}
        for s in range(tile.issues):
            A, B, SA, SB = _issue(tile, s, k, nsf)
            a_tc, b_tc = _through(lay.a, A, threads, ca), _through(lay.b, B, threads, cb)
            c_tc = _from_regs(lay.c, acc, 0)
            sa_tc = sb_tc = None
            if lay.scale_a is not None and lay.scale_b is not None:
                sa_tc, sb_tc = _through(lay.scale_a, SA, threads, 0), _through(lay.scale_b, SB, threads, 0)
            d = simulate_mma(model, None, a_tc, b_tc, c_tc, scale_a=sa_tc, scale_b=sb_tc)
            acc = {t: _to_regs(lay.c, d, t, 0) for t in threads}
        out.append(_from_regs(lay.c, acc, 0))
    return out


def _direct(spec: KernelSpec, model: Model, tile: Tile) -> np.ndarray:
    """D of every cell from :func:`cell_inputs`, chained over the issues, no layout involved."""
    m, n, k, nsf = spec.shape.m, spec.shape.n, spec.shape.k, spec.layout.scale_vec
    cells = [cell_inputs(tile, i, j) for i in range(m) for j in range(n)]
    a = np.array([x[0] for x in cells], dtype=np.uint64)
    b = np.array([x[1] for x in cells], dtype=np.uint64)
    c = np.array([x[2] for x in cells], dtype=np.uint64)
    for s in range(tile.issues):
        lanes = slice(s * k, (s + 1) * k)
        sa = sb = None
        if tile.scale_a is not None:
            sa = np.array([x[3][s * nsf:(s + 1) * nsf] for x in cells], dtype=np.uint64)  # type: ignore[index]
            sb = np.array([x[4][s * nsf:(s + 1) * nsf] for x in cells], dtype=np.uint64)  # type: ignore[index]
        c = simulate_dot(model, None, a[:, lanes], b[:, lanes], c, scale_a=sa, scale_b=sb).astype(np.uint64)
    return c.reshape(m, n)


def _emulation_cases() -> list[tuple[Entry, KernelSpec]]:
    """One kernel per distinct layout: family, shape, operand widths and shifts, C format, scales."""
    out: dict[tuple[object, ...], tuple[Entry, KernelSpec]] = {}
    for e, sp in SPECS:
        lay = sp.layout
        key = (sp.shape.name, sp.c_fmt, sp.scale_fmt, sp.block,
               tuple((type(o).__name__, getattr(o, "bits", 0), getattr(o, "shift", 0)) for o in lay.operands().values()))
        out.setdefault(key, (e, sp))
    return list(out.values())


EMULATION_CASES = _emulation_cases()


@pytest.mark.parametrize("entry,spec", EMULATION_CASES, ids=[sp.name.replace("smtmma_", "") for _, sp in EMULATION_CASES])
def test_emulated_launch_equals_direct_simulation(entry: Entry, spec: KernelSpec) -> None:
    model = model_of(entry.arch, entry.instr, op=spec.shape.name)
    rng = np.random.default_rng(sum(map(ord, spec.name)))
    issues = 1 if spec.shape.m * spec.shape.n > 4096 else 2
    tiles = [_random_tile(spec, model, issues, rng) for _ in range(spec.layout.tiles)]
    for tile, d in zip(tiles, _emulate(spec, model, tiles), strict=True):
        assert np.array_equal(d, _direct(spec, model, tile))
        assert disagreeing_cells(tile, d) == []


# ---------------------------------------------------------------- kernels compile


def test_kernel_manifest_rows() -> None:
    ks = cuda_kernels()
    assert len({k.file for k in ks}) == len(ks)
    assert {k.arch for k in ks} == {a for a, x in ARCHS.items() if x.vendor == "nvidia"}
    by = {(k.arch, k.op, k.shape.name): k.toolchain_arch for k in ks}
    assert by[("sm90", "wgmma", "wgmma.mma_async.sync.aligned.m64n8k16")] == "sm_90a"
    assert by[("sm100", "tcgen05", "tcgen05.mma.cta_group::1.kind::f16")] == "sm_100a"
    assert by[("sm120", "mma", "mma.sync.aligned.m16n8k32.kind::f8f6f4")] == "sm_120a"
    assert by[("sm80", "mma", "mma.sync.aligned.m16n8k16")] == "sm_80"
    assert all(k.source.count("void __launch_bounds__") == 1 for k in ks)


def _nvcc_archs(nvcc: str) -> set[str]:
    out = subprocess.run([nvcc, "--list-gpu-code"], capture_output=True, text=True, check=False).stdout
    return set(out.split())


def _compile(nvcc: str, arch: str, sources: list[str], tmp: str) -> tuple[int, str, float]:
    path = os.path.join(tmp, f"{arch}.cu")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(sources))
    t0 = time.perf_counter()
    r = subprocess.run([nvcc, "-cubin", f"-arch={arch}", "-o", os.path.join(tmp, f"{arch}.cubin"), path],
                       capture_output=True, text=True, check=False)
    return r.returncode, (r.stdout + r.stderr)[-4000:], time.perf_counter() - t0


@pytest.fixture(scope="module")
def compiled() -> dict[str, tuple[int, str, float]]:
    """Every toolchain arch's kernels in one translation unit, compiled in parallel (nvcc -cubin)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    supported = _nvcc_archs(nvcc)
    groups: dict[str, dict[str, None]] = {}
    for k in cuda_kernels():
        groups.setdefault(k.toolchain_arch, {})[k.source] = None
    todo = {a: list(g) for a, g in groups.items() if a.rstrip("a") in {s.rstrip("a") for s in supported}}
    results: dict[str, tuple[int, str, float]] = {a: (-1, "not supported by this nvcc", 0.0) for a in groups if a not in todo}
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        futs = {a: ex.submit(_compile, nvcc, a, src, tmp) for a, src in todo.items()}
        for a, f in futs.items():
            results[a] = f.result()
    return results


TOOLCHAIN_ARCHS = sorted({k.toolchain_arch for k in cuda_kernels()}, key=lambda a: (int(a[3:].rstrip("a")), a))


@pytest.mark.parametrize("arch", TOOLCHAIN_ARCHS)
def test_kernels_compile(compiled: dict[str, tuple[int, str, float]], arch: str) -> None:
    rc, log, _ = compiled[arch]
    if rc == -1:
        pytest.skip(f"this nvcc cannot target {arch}")
    assert rc == 0, log
    assert "error" not in log.lower(), log


# ---------------------------------------------------------------- the device


def test_open_cuda_without_cupy_names_the_install() -> None:
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed")
    with pytest.raises(DeviceError, match=r"CuPy is not installed; pip install 'smtmma\[cuda\]'"):
        open_device("cuda")


# A fake CuPy whose "kernels" run the Python emulation above: the device's host side (rows, shapes,
# containers, padding, batching, the agreement check) end to end, without a GPU.

class _FakeKernel:
    def __init__(self, spec: KernelSpec, arch: str, scramble: bool) -> None:
        self.spec, self.scramble = spec, scramble
        self.model = model_of(arch, spec.instr, op=spec.shape.name)

    def __call__(self, grid: tuple[int], block: tuple[int], args: tuple[object, ...]) -> None:
        sp, lay = self.spec, self.spec.layout
        A, B, C, D, SA, SB, tiles, issues = args
        assert grid[0] * sp.tiles_per_block == int(tiles) and block[0] == sp.threads_per_block  # type: ignore[call-overload]
        mats = []
        for t in range(int(tiles)):  # type: ignore[call-overload]
            sa = sb = None
            if sp.block:
                sa, sb = np.asarray(SA[t], np.uint64), np.asarray(SB[t], np.uint64)  # type: ignore[index]
            a = np.asarray(A[t], np.uint64) >> np.uint64(_cshift(sp.a_fmt))  # type: ignore[index]
            b = np.asarray(B[t], np.uint64) >> np.uint64(_cshift(sp.b_fmt))  # type: ignore[index]
            mats.append(Tile(sp.shape, a.shape[1], a, b, np.asarray(C[t], np.uint64), sa, sb,  # type: ignore[index]
                             (), (), (), False))
            assert mats[-1].issues == int(issues)  # type: ignore[call-overload]
        for g in range(0, len(mats), lay.tiles):
            for t, d in enumerate(_emulate(sp, self.model, mats[g:g + lay.tiles]), start=g):
                if self.scramble:
                    d = d.copy()
                    d[0, 1] ^= np.uint64(1)
                D[t] = d  # type: ignore[index]


def fake_cupy(monkeypatch: pytest.MonkeyPatch, cc: tuple[int, int], scramble: bool = False) -> None:
    """Install a fake CuPy: one GPU of compute capability ``cc`` whose kernels emulate the catalogue's model
    (``scramble``: one output bit of every tile flipped)."""
    import sys
    import types
    from contextlib import nullcontext

    arch = {(7, 0): "sm70", (9, 0): "sm90", (10, 0): "sm100", (12, 0): "sm120"}[cc]
    specs = {sp.name: sp for _, sp in _specs_for(arch)}

    class Module:
        def load(self, cubin: bytes) -> None:
            assert cubin.startswith(b"cubin:")
            self.arch = cubin[6:].decode()

        def get_function(self, name: str) -> _FakeKernel:
            return _FakeKernel(specs[name], arch, scramble)

    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1,
                                    getDeviceProperties=lambda i: {"major": cc[0], "minor": cc[1], "name": b"Fake GPU"})
    cuda = types.SimpleNamespace(runtime=runtime, Device=lambda i: nullcontext(),
                                 function=types.SimpleNamespace(Module=Module))
    cupy = types.SimpleNamespace(cuda=cuda, uint8=np.uint8, asarray=lambda x: np.array(x), asnumpy=np.asarray,
                                 zeros=np.zeros, zeros_like=np.zeros_like)
    compiled: dict[int, str] = {}
    nvrtc = types.SimpleNamespace(
        createProgram=lambda src, name, h, n: compiled.setdefault(len(compiled), src) and len(compiled) - 1,
        compileProgram=lambda prog, opts: compiled.__setitem__(prog, [o for o in opts if o.startswith("-arch=")][0]),
        getCUBIN=lambda prog: b"cubin:" + compiled[prog].encode(), getProgramLog=lambda prog: "",
        destroyProgram=lambda prog: None)
    libs = types.ModuleType("cupy_backends.cuda.libs")
    libs.nvrtc = nvrtc  # type: ignore[attr-defined]
    for name, mod in (("cupy", cupy), ("cupy_backends", types.ModuleType("cupy_backends")),
                      ("cupy_backends.cuda", types.ModuleType("cupy_backends.cuda")),
                      ("cupy_backends.cuda.libs", libs)):
        monkeypatch.setitem(sys.modules, name, mod)


def _specs_for(arch: str) -> list[tuple[Entry, KernelSpec]]:
    out = []
    for e in CATALOGUE:
        if e.arch == arch:
            for sh in e.shapes:
                try:
                    out.append((e, kernel_spec(e, sh)))
                except DeviceError:
                    pass
    return out


def _vectors(arch: str, instr: str, shape: Optional[str], count: int, K: int, rng: np.random.Generator) -> list:  # type: ignore[type-arg]
    from smtmma.catalogue import lookup
    from smtmma.vectors import dump_vector, parse_line

    model = lookup(arch, instr, shape).model
    out = []
    for _ in range(count):
        a, b = draw("bits", model.a_fmt, K, rng).tolist(), draw("bits", model.b_fmt, K, rng).tolist()
        c = int(draw("bits", model.c_fmt, 1, rng)[0])
        extra = {}
        if model.scale_fmt:
            nb = -(-K // (model.block or 1))
            extra = {"scale_a": draw_scales("finite-bits", model.scale_fmt, nb, rng).tolist(),
                     "scale_b": draw_scales("finite-bits", model.scale_fmt, nb, rng).tolist()}
        out.append(parse_line(dump_vector(arch, instr, a, b, c, op=shape, **extra)))
    return out


@pytest.mark.parametrize("cc,instr,shape,count,K", [
    ((9, 0), "f16f32", None, 5, 40),
    ((9, 0), "tf32f32", "wgmma.mma_async.sync.aligned.m64n8k8", 3, 16),
    ((9, 0), "e4m3e5m2f16", "mma.sync.aligned.m16n8k16", 3, 20),
    ((7, 0), "f16f16", None, 5, 9),
    ((7, 0), "f16f32", None, 6, 4),
    ((12, 0), "nvf4f32", None, 3, 100),
    ((12, 0), "mxf4f32", "mma.sync.aligned.m16n8k64.kind::mxf4nvf4.block_scale", 2, 64),
    ((12, 0), "e2m1e3m2f32", None, 3, 33),
    ((10, 0), "f16f16", "tcgen05.mma.cta_group::1.kind::f16", 2, 20),
])
def test_device_host_side_with_a_fake_gpu(monkeypatch: pytest.MonkeyPatch, cc: tuple[int, int], instr: str,
                                         shape: Optional[str], count: int, K: int) -> None:
    fake_cupy(monkeypatch, cc)
    dev = open_device("cuda:0")
    arch = dev.arch
    assert arch is not None and dev.description == f"Fake GPU ({arch}, cuda:0)"
    vs = _vectors(arch, instr, shape, count, K, np.random.default_rng(count * K))
    spec = dev.spec_for(vs[0])  # type: ignore[attr-defined]
    sim = open_device(f"sim:{arch}/{spec.shape.name}")
    assert dev.run(vs) == sim.run(vs)


def test_fake_gpu_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    fake_cupy(monkeypatch, (9, 0), scramble=True)
    with pytest.raises(DeviceError, match=r"cells \(0, 5\), .* of a tile disagree: outputs are not independent"):
        open_device("cuda").run(_vectors("sm90", "bf16f32", None, 2, 8, rng))
    with pytest.raises(DeviceError, match="no such GPU"):
        open_device("cuda:3")
    fake_cupy(monkeypatch, (7, 0))
    with pytest.raises(DeviceError, match=r"sm70 has no e4m3e4m3f32 instruction \(valid for sm70: f16f16, f16f32, f16f32c16\)"):
        open_device("cuda").run(_vectors("sm89", "e4m3e4m3f32", None, 1, 8, rng))
    fake_cupy(monkeypatch, (10, 0))
    with pytest.raises(DeviceError, match="figures of the PTX ISA"):
        open_device("cuda").run(_vectors("sm120", "e2m1e2m1f32", None, 1, 8, rng))
    # a vector of another architecture's suite runs on this GPU's instruction: sm80 f16f32 on sm100 (mma, k=16)
    dev = open_device("cuda")
    v = _vectors("sm80", "f16f32", None, 2, 16, rng)
    assert dev.spec_for(v[0]).shape.name == "mma.sync.aligned.m16n8k16"  # type: ignore[attr-defined]
    assert dev.run(v) == open_device("sim:sm100/mma.sync.aligned.m16n8k16").run(v)


def _gpu_device():  # type: ignore[no-untyped-def]
    if importlib.util.find_spec("cupy") is None:
        pytest.skip("CuPy is not installed")
    try:
        return open_device("cuda")
    except DeviceError as e:
        pytest.skip(str(e))


@pytest.mark.gpu
def test_cuda_matches_the_simulator_on_a_small_suite() -> None:
    from smtmma.hw.cuda import choose_shape
    from smtmma.vectors import dump_vector, parse_line

    dev = _gpu_device()
    rng = np.random.default_rng(7)
    arch = dev.arch
    checked = 0
    for e in CATALOGUE:
        if e.arch != arch or not e.default:
            continue
        shape = choose_shape(e, None)
        try:
            spec = kernel_spec(e, shape)
        except DeviceError:
            continue
        model = e.model
        lines = []
        for kind in ("normal", "bits"):
            for _ in range(4):
                K = 2 * shape.k
                a, b = draw(kind, model.a_fmt, K, rng).tolist(), draw(kind, model.b_fmt, K, rng).tolist()
                c = int(draw(kind, model.c_fmt, 1, rng)[0])
                extra = {}
                if spec.block:
                    nb = -(-K // spec.block)
                    extra = {"scale_a": draw_scales(kind, model.scale_fmt, nb, rng).tolist(),
                             "scale_b": draw_scales(kind, model.scale_fmt, nb, rng).tolist()}
                lines.append(parse_line(dump_vector(arch, e.instr, a, b, c, op=shape.name, **extra)))
        sim = open_device(f"sim:{arch}/{shape.name}")
        assert dev.run(lines) == sim.run(lines), f"{e.instr} on {shape.name}"
        checked += 1
    assert checked > 0
