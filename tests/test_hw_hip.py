"""The AMD hardware device: MFMA register layouts, the generated HIP kernels, and the runner, without an AMD GPU.

* layouts: every MFMA of smtmma.isa has one, it is a bijection per block,
  and spot positions agree with the AMD Matrix Instruction Calculator
  (ROCm/amd_matrix_instruction_calculator, ``--get-register``) and with
  amd/amd-lab-notes matrix-cores/src;
* kernels: a pure-Python emulation of each generated kernel (its address
  arithmetic and the lane tables parsed from the source, the MFMA replaced
  by the catalogue model reading registers through the ISA layout, chained
  over issues) equals the direct simulation of every cell of every tile;
* each source has exactly one ``__builtin_amdgcn_mfma_*`` call, for the
  builtin of its mnemonic; the LLVM intrinsics behind them, with the
  operand types the kernels use, compile to that mnemonic with ``llc``
  (gfx908, gfx90a; gfx942 when the llc found knows gfx942 or gfx940);
  with ``hipcc`` on PATH the sources compile;
* the runner (HipDevice.run with the launch replaced by the emulation):
  catalogue row and MFMA choice, placement, batching, the agreement checks
  and D[0, 0]; ``open_device("hip")`` without ROCm is a one-line DeviceError.

Nothing here runs on an AMD GPU.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from smtmma.catalogue import ARCHS, CATALOGUE, INSTRS, lookup, model_of
from smtmma.discriminators.placement import cell_inputs, disagreeing_cells, place
from smtmma.formats import get_format
from smtmma.hw.amd_layouts import LAYOUTS, WAVE, layout
from smtmma.hw.device import DeviceError, open_device
from smtmma.hw.hip import (
    HIPCC_FLAGS,
    HipDevice,
    catalogue_arch,
    check_tiles,
    choose_shape,
    pack_tiles,
    parse_rocminfo,
)
from smtmma.hw.hip_kernels import (
    ENTRY_POINT,
    NAME_SYMBOL,
    builtin_for,
    device_info_source,
    hip_kernels,
)
from smtmma.isa import SHAPES
from smtmma.sampling import draw
from smtmma.simulate import simulate_dot
from smtmma.vectors import dump_vector, parse_line

AMD_ARCHS = [a for a, x in ARCHS.items() if x.vendor == "amd"]
AMD_SHAPES = sorted({s.name for a in AMD_ARCHS for fams in SHAPES[a].values() for ss in fams.values() for s in ss})
KERNELS = hip_kernels()
KERNEL_IDS = [k.file.removesuffix(".hip") for k in KERNELS]


# ---------------------------------------------------------------- layouts

def test_every_amd_shape_has_a_layout_and_no_more():
    assert sorted(LAYOUTS) == AMD_SHAPES


@pytest.mark.parametrize("name", AMD_SHAPES)
def test_layout_is_a_bijection_per_block(name):
    lay = layout(name)
    assert lay.m * lay.k * lay.blocks == WAVE * lay.in_per_lane
    assert lay.m * lay.n * lay.blocks == WAVE * lay.out_per_lane
    for table, slot, rows, cols in ((lay.a_table, lay.a_slot, lay.m, lay.k), (lay.b_table, lay.b_slot, lay.k, lay.n),
                                    (lay.d_table, lay.d_slot, lay.m, lay.n)):
        cells = {tuple(x) for x in table.reshape(-1, 3).tolist()}
        assert cells == {(b, r, c) for b in range(lay.blocks) for r in range(rows) for c in range(cols)}
        for lane in range(WAVE):
            for e in range(table.shape[1]):
                assert slot(*table[lane, e].tolist()) == (lane, e)


# (mnemonic, matrix, block, row, col) -> (lane, element): ROCm/amd_matrix_instruction_calculator
# matrix_calculator.py --get-register (-A: A[i][k], -B: B[k][j], -D: D[i][j]), register names turned into
# the element of the lane's operand: v1{37}.[15:0] of an f16 A is element 2 of lane 37.
CALCULATOR = [
    ("v_mfma_f32_32x32x8f16", "A", 0, 5, 6, (37, 2)),  # cdna1: A[5][6] = v1{37}.[15:0]
    ("v_mfma_f32_4x4x4bf16_1k", "B", 9, 3, 2, (38, 3)),  # cdna2: B[3][2].B9 = v1{38}.[31:16]
    ("v_mfma_f64_16x16x4f64", "D", 0, 13, 7, (23, 3)),  # cdna2: D[13][7] = v[7:6]{23}
    ("v_mfma_f32_16x16x32_fp8_bf8", "A", 0, 11, 27, (59, 3)),  # cdna3: A[11][27] = v0{59}.[31:24]
    ("v_mfma_f32_32x32x1_2b_f32", "D", 1, 29, 3, (35, 29)),  # cdna3: D[29][3].B1 = v29{35}
    ("v_mfma_f32_32x32x2bf16", "A", 1, 7, 1, (39, 1)),  # cdna1: A[7][1].B1 = v0{39}.[31:16]
    ("v_mfma_f32_32x32x4_xf32", "B", 0, 3, 20, (52, 1)),  # cdna3: B[3][20] = v1{52}
    ("v_mfma_f32_16x16x1f32", "D", 3, 14, 5, (53, 14)),  # cdna2: D[14][5].B3 = v14{53}
    ("v_mfma_f64_4x4x4_4b_f64", "A", 1, 2, 3, (54, 0)),  # cdna3: A[2][3].B1 = v[1:0]{54}
    ("v_mfma_f32_4x4x1f32", "D", 12, 3, 1, (49, 3)),  # cdna1: D[3][1].B12 = v3{49}
]


@pytest.mark.parametrize("name,matrix,block,r,c,want", CALCULATOR, ids=[f"{x[0]}-{x[1]}" for x in CALCULATOR])
def test_layout_spot_checks_from_the_calculator(name, matrix, block, r, c, want):
    lay = layout(name)
    slot = {"A": lay.a_slot, "B": lay.b_slot, "D": lay.d_slot}[matrix]
    assert slot(block, r, c) == want


def test_layout_spot_checks_from_amd_lab_notes():
    # matrix-cores/src/mfma_fp64_4x4x4fp64.cpp: A lane = i + 4*batch + 16*k; D lane = j + 4*batch + 16*i
    lay = layout("v_mfma_f64_4x4x4f64")
    for b in range(4):
        for i in range(4):
            for k in range(4):
                assert lay.a_slot(b, i, k) == (i + 4 * b + 16 * k, 0)
                assert lay.d_slot(b, i, k) == (k + 4 * b + 16 * i, 0)  # (i, j=k)
    # matrix-cores/src/mfma_fp32_16x16x4fp16.cpp: A lanes 16b + i, a[k]; D d[4b + i % 4], lane 16 (i // 4) + j
    lay = layout("v_mfma_f32_16x16x4f16")
    assert lay.a_slot(2, 5, 3) == (16 * 2 + 5, 3)
    assert lay.d_slot(3, 13, 9) == (16 * 3 + 9, 4 * 3 + 1)
    # matrix-cores/src/mfma_fp32_4x4x4fp16.cpp: D d[i] covers row i, lane 4*batch + j
    lay = layout("v_mfma_f32_4x4x4f16")
    assert lay.d_slot(11, 2, 3) == (4 * 11 + 3, 2)


# ---------------------------------------------------------------- kernels: emulation

_TABLE = re.compile(r"__constant__ int (\w+)\[(\d+)\] = \{(.*?)\};", re.S)
_CONSTS = re.compile(r"static constexpr int (.*?);")
_IDX = r"((?:[^\[\]]|\[[^\]]*\])+)"  # an index expression, one level of nested [] allowed


@lru_cache(maxsize=None)
def _parsed(source: str) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, object]]:
    """The lane tables, the constants and the address expressions (as Python) of a generated source."""
    tables = {}
    for name, n, body in _TABLE.findall(source):
        vals = np.array([int(x) for x in body.replace("\n", " ").split(",")], dtype=np.int64)
        assert len(vals) == int(n)
        tables[name] = vals
    consts = {}
    for decl in _CONSTS.findall(source):
        for part in decl.split(","):
            key, val = part.split("=")
            consts[key.strip()] = int(val)

    def py(expr: str) -> str:  # C casts away; the rest is valid Python on NumPy arrays
        return re.sub(r"\((?:long|size_t|int)\)", "", expr).strip()

    def one(pattern: str) -> str:
        found = re.findall(pattern, source)
        assert len(found) == 1, (pattern, found)
        return py(found[0])

    loop = source.split("for (int s = 0; s < issues; ++s) {", 1)[1].split("\n    }\n", 1)[0]
    exprs: dict[str, object] = {
        "Kp": one(r"const long Kp = (.+?);"),
        "a_w": one(r"\*a_w = A \+ (.+?);"),
        "b_w": one(r"\*b_w = B \+ (.+?);"),
        "cd_w": one(r"const long cd_w = (.+?);"),
        "t": one(r"const int t = (.+?);"),
        "a_off": one(r"a_off\[e\] = (.+?);"),
        "b_off": one(r"b_off\[e\] = (.+?);"),
        "sa": one(r"const long sa = (.+?), sb"),
        "sb": one(r", sb = (.+?);"),
        "a_loads": [py(x) for x in re.findall(r"a_w\[" + _IDX + r"\]", loop)],
        "b_loads": [py(x) for x in re.findall(r"b_w\[" + _IDX + r"\]", loop)],
        "c_loads": [(acc, py(x)) for acc, x in re.findall(r"(acc(?:\[\d+\])?) = __builtin_bit_cast\(\w+, C\[" + _IDX + r"\]\);", source)],
        "d_stores": [(py(x), acc) for x, acc in re.findall(r"D\[" + _IDX + r"\] = __builtin_bit_cast\(\w+, (acc(?:\[\d+\])?)\);", source)],
    }
    return tables, consts, exprs


def emulate_launch(ks, lay, A, B, C, waves, issues):
    """What the kernel of ``ks`` does, lane by lane: its address expressions and lane tables (read from the source)
    gather A, B, C; the MFMA is the catalogue model reading the registers through the ISA layout
    (amd_layouts.*_slot); D of one issue is C of the next; D is scattered by the source's store expressions."""
    tables, cs, ex = _parsed(ks.source)
    M, N, K, BL, E, ED = (cs[x] for x in ("M_", "N_", "K_", "BLOCKS", "E_", "ED_"))
    assert (M, N, K, BL, E, ED) == (lay.m, lay.n, lay.k, lay.blocks, lay.in_per_lane, lay.out_per_lane)
    assert len(ex["a_loads"]) == len(ex["b_loads"]) == E and len(ex["c_loads"]) == len(ex["d_stores"]) == ED
    model = model_of(ks.arch, ks.instr, op=ks.shape.name)
    fmt = get_format(INSTRS[ks.instr].a_fmt)
    shift = np.uint64(fmt.container_shift if fmt.container else 0)  # the unit ignores TF32's 13 low bits
    Af, Bf, Cf = A.reshape(-1), B.reshape(-1), C.reshape(-1)
    Df = np.zeros_like(Cf)
    ns: dict[str, object] = {**tables, **cs, "issues": issues, "lane": np.arange(WAVE)}
    ns["Kp"] = eval(ex["Kp"], ns)
    a_off, b_off = [], []
    for e in range(E):
        ns["e"] = e
        ns["t"] = eval(ex["t"], ns)
        a_off.append(eval(ex["a_off"], ns))
        b_off.append(eval(ex["b_off"], ns))
    ns["a_off"], ns["b_off"] = a_off, b_off
    a_slots = [(b, i, k, *lay.a_slot(b, i, k)) for b in range(BL) for i in range(M) for k in range(K)]
    b_slots = [(b, k, j, *lay.b_slot(b, k, j)) for b in range(BL) for k in range(K) for j in range(N)]
    d_slots = [(b, i, j, *lay.d_slot(b, i, j)) for b in range(BL) for i in range(M) for j in range(N)]

    def reg(name: str) -> int:  # "acc" or "acc[e]" -> e
        return int(name[4:-1]) if "[" in name else 0

    for w in range(waves):
        ns["wave"] = w
        a_w, b_w, ns["cd_w"] = eval(ex["a_w"], ns), eval(ex["b_w"], ns), eval(ex["cd_w"], ns)
        acc = np.zeros((WAVE, ED), np.uint64)  # (lane, element) registers
        for name, idx in ex["c_loads"]:
            acc[:, reg(name)] = Cf[eval(idx, ns)]
        for s in range(issues):
            ns["s"] = s
            ns["sa"], ns["sb"] = eval(ex["sa"], ns), eval(ex["sb"], ns)
            a_reg = np.stack([Af[a_w + eval(x, ns)] for x in ex["a_loads"]], axis=1).astype(np.uint64) >> shift
            b_reg = np.stack([Bf[b_w + eval(x, ns)] for x in ex["b_loads"]], axis=1).astype(np.uint64) >> shift
            Am, Bm, Cm = np.zeros((BL, M, K), np.uint64), np.zeros((BL, K, N), np.uint64), np.zeros((BL, M, N), np.uint64)
            for b, i, k, lane, e in a_slots:
                Am[b, i, k] = a_reg[lane, e]
            for b, k, j, lane, e in b_slots:
                Bm[b, k, j] = b_reg[lane, e]
            for b, i, j, lane, e in d_slots:
                Cm[b, i, j] = acc[lane, e]
            rows_a = np.repeat(Am, N, axis=1).reshape(-1, K)  # cell (b, i, j) -> A_b[i, :]
            rows_b = np.tile(np.transpose(Bm, (0, 2, 1)), (1, M, 1)).reshape(-1, K)  # -> B_b[:, j]
            Dm = simulate_dot(model, None, rows_a, rows_b, Cm.reshape(-1)).astype(np.uint64).reshape(BL, M, N)
            for b, i, j, lane, e in d_slots:
                acc[lane, e] = Dm[b, i, j]
        for idx, name in ex["d_stores"]:
            Df[eval(idx, ns)] = acc[:, reg(name)].astype(Df.dtype)
    return Df.reshape(C.shape)


def _random_tiles(ks, count, rng, K=None):
    inst = INSTRS[ks.instr]
    k = ks.shape.k
    K = K or k + max(1, k // 2)  # two issues
    tiles = []
    for _ in range(count):
        a = draw("bits", inst.a_fmt, (K,), rng).tolist()
        b = draw("bits", inst.b_fmt, (K,), rng).tolist()
        c = int(draw("bits", inst.c_fmt, (1,), rng)[0])
        tiles.append(place(ks.shape, a, b, c, replicate=True))
    return tiles


def _direct(ks, tiles):
    """D of every cell of every tile, simulated straight from cell_inputs: (tiles, m, n)."""
    model = model_of(ks.arch, ks.instr, op=ks.shape.name)
    m, n = ks.shape.m, ks.shape.n
    cells = [cell_inputs(t, i, j) for t in tiles for i in range(m) for j in range(n)]
    d = simulate_dot(model, None, np.array([x[0] for x in cells]), np.array([x[1] for x in cells]),
                     np.array([x[2] for x in cells], dtype=np.uint64))
    return d.reshape(len(tiles), m, n)


@pytest.mark.parametrize("ks", KERNELS, ids=KERNEL_IDS)
def test_kernel_emulation_equals_direct_simulation(ks):
    lay = layout(ks.shape.name)
    rng = np.random.default_rng(zlib.crc32(ks.file.encode()))
    waves = 2
    tiles = _random_tiles(ks, waves * lay.blocks, rng)  # a different tile in every block of every wave
    issues = tiles[0].issues
    assert issues == 2
    fmt = get_format(INSTRS[ks.instr].a_fmt)
    A, B, C = pack_tiles(lay, tiles, fmt.container_shift if fmt.container else 0, repeat_blocks=False)
    D = emulate_launch(ks, lay, A, B, C, waves, issues)
    want = _direct(ks, tiles)
    assert D.dtype == {32: np.uint32, 64: np.uint64}[lay.out_bits]
    bad = np.argwhere(D.astype(np.uint64) != want.astype(np.uint64))
    assert bad.size == 0, f"{len(bad)} cells differ, first (tile, i, j) = {bad[0].tolist()}"
    for t, tile in enumerate(tiles):
        assert disagreeing_cells(tile, D[t]) == []


# ---------------------------------------------------------------- kernels: sources

def test_one_kernel_per_amd_catalogue_shape():
    want = [(e.arch, e.instr, e.op, s.name) for e in CATALOGUE if ARCHS[e.arch].vendor == "amd" for s in e.shapes]
    assert [(k.arch, k.instr, k.op, k.shape.name) for k in KERNELS] == want
    assert len({k.file for k in KERNELS}) == len(KERNELS)
    for k in KERNELS:
        assert (k.vendor, k.toolchain_arch) == ("amd", k.arch)
        assert k.manifest_entry()["offload_arch"] == k.arch


def _expected_builtin(name: str) -> str:
    """The builtin of a mnemonic, spelled out independently of hip_kernels.builtin_for."""
    body = name.removeprefix("v_")
    cdna3 = re.fullmatch(r"mfma_(f32|f64)_(\d+x\d+x\d+)(_\d+b)?_(f32|f16|bf16|f64)", body)
    if cdna3:  # gfx940 renamed these; clang kept the CDNA2 builtins (bf16 = the _1k one)
        o, mnk, _, t = cdna3.groups()
        body = f"mfma_{o}_{mnk}{t}" + ("_1k" if t == "bf16" else "")
    return "__builtin_amdgcn_" + body


@pytest.mark.parametrize("ks", KERNELS, ids=KERNEL_IDS)
def test_source_calls_the_builtin_of_its_mnemonic_once(ks):
    calls = re.findall(r"__builtin_amdgcn_mfma_\w+", ks.source)
    assert calls == [_expected_builtin(ks.shape.name)] == [builtin_for(ks.shape.name)]
    assert f'{NAME_SYMBOL}(void) {{ return "{ks.shape.name}"; }}' in ks.source
    assert f'extern "C" int {ENTRY_POINT}(' in ks.source
    assert "0, 0, 0)" in ks.source.split(calls[0])[1].splitlines()[0]  # cbsz, abid, blgp
    lay = layout(ks.shape.name)
    if lay.in_bits == 8:  # fp8/bf8: k element e of the lane in bits [8e+7:8e] of the 64-bit operand
        for var in ("a", "b"):
            line = re.search(rf"const long {var} = .*", ks.source).group(0)
            assert re.findall(r"<< (\d+)\)", line) == [str(8 * e) for e in range(lay.in_per_lane)]


# LLVM types of the C++ operand and accumulator types the sources declare.
_LL = {"float": "float", "f32x2": "<2 x float>", "f16x4": "<4 x half>", "i16x2": "<2 x i16>", "i16x4": "<4 x i16>",
       "double": "double", "long": "i64", "f32x4": "<4 x float>", "f32x16": "<16 x float>",
       "f32x32": "<32 x float>", "f64x4": "<4 x double>"}


def _ll_types(source: str) -> tuple[str, str]:
    a = re.search(r"const (\w+) a = ", source)
    acc = re.search(r"^    (\w+) acc;$", source, re.M)
    assert a and acc
    return _LL[a.group(1)], _LL[acc.group(1)]


def _llvm_ir(builtin: str, ab: str, cd: str) -> str:
    intrinsic = "llvm.amdgcn." + builtin.removeprefix("__builtin_amdgcn_").replace("_", ".")
    return (f"declare {cd} @{intrinsic}({ab}, {ab}, {cd}, i32, i32, i32)\n"
            f"define {cd} @f({ab} %a, {ab} %b, {cd} %c) {{\n"
            f"  %d = call {cd} @{intrinsic}({ab} %a, {ab} %b, {cd} %c, i32 0, i32 0, i32 0)\n"
            f"  ret {cd} %d\n}}\n")


@lru_cache(maxsize=None)
def _llc_cpus() -> list[tuple[str, frozenset[str]]]:
    """Each distinct llc on PATH (llc, llc-NN) with the AMDGPU processors it knows, newest name first."""
    out, seen = [], set()
    for name in ["llc"] + [f"llc-{v}" for v in range(30, 13, -1)]:
        path = shutil.which(name)
        if not path or Path(path).resolve() in seen:
            continue
        seen.add(Path(path).resolve())
        try:
            text = subprocess.run([path, "-march=amdgcn", "-mcpu=help"], check=False, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        cpus = frozenset(re.findall(r"^\s+(gfx\w+)\s+- Select", text.stdout + text.stderr, re.M))
        if cpus:
            out.append((path, cpus))
    return out


def _llc_for(arch: str) -> tuple[str, str]:
    """(llc path, -mcpu) that can compile ``arch``'s MFMAs; skips when none can."""
    for cpu in ([arch] if arch != "gfx942" else ["gfx942", "gfx940"]):  # gfx940: the same MFMA ISA as gfx942
        for path, cpus in _llc_cpus():
            if cpu in cpus:
                return path, cpu
    pytest.skip(f"no llc on PATH knows {arch}" + (" (or gfx940)" if arch == "gfx942" else "")
                + f"; found: {[p for p, _ in _llc_cpus()] or 'none'}")


@pytest.mark.parametrize("ks", KERNELS, ids=KERNEL_IDS)
def test_llvm_intrinsic_compiles_to_the_mnemonic(ks, tmp_path):
    llc, cpu = _llc_for(ks.arch)
    ab, cd = _ll_types(ks.source)
    src = tmp_path / "k.ll"
    src.write_text(_llvm_ir(builtin_for(ks.shape.name), ab, cd))
    proc = subprocess.run([llc, "-march=amdgcn", f"-mcpu={cpu}", "-O2", "-o", "-", str(src)],
                          check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.strip().splitlines()[:3]
    mfma = re.findall(r"^\s+(v_mfma_\w+)", proc.stdout, re.M)
    assert mfma == [ks.shape.name], (cpu, mfma)


HIPCC = shutil.which("hipcc")


@pytest.mark.skipif(HIPCC is None, reason="hipcc not on PATH (no ROCm on this machine)")
@pytest.mark.parametrize("ks", KERNELS, ids=KERNEL_IDS)
def test_hipcc_compiles_the_kernel(ks, tmp_path):
    src = tmp_path / ks.file
    src.write_text(ks.source)
    proc = subprocess.run([HIPCC, f"--offload-arch={ks.arch}", *HIPCC_FLAGS, "-o",
                           str(tmp_path / "k.so"), str(src)], check=False, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.skipif(HIPCC is None, reason="hipcc not on PATH (no ROCm on this machine)")
def test_hipcc_compiles_the_device_info_helper(tmp_path):
    src = tmp_path / "info.hip"
    src.write_text(device_info_source())
    proc = subprocess.run([HIPCC, *HIPCC_FLAGS, "-o", str(tmp_path / "info.so"), str(src)],
                          check=False, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]


# ---------------------------------------------------------------- the runner

def _device(arch: str, launch=emulate_launch) -> HipDevice:
    """A HipDevice of ``arch`` whose launches run the emulation (no ROCm, no GPU)."""
    dev = HipDevice.__new__(HipDevice)
    dev.name, dev.index, dev.arch, dev.gfx = f"hip-emulated:{arch}", 0, arch, arch
    dev.description = f"emulated {arch}"
    dev._libs, dev._launch = {}, launch
    return dev


def _vector(arch, instr, K, rng, op=None, line=1):
    inst = INSTRS[instr]
    a = draw("finite-bits", inst.a_fmt, (K,), rng).tolist()
    b = draw("finite-bits", inst.b_fmt, (K,), rng).tolist()
    c = int(draw("finite-bits", inst.c_fmt, (1,), rng)[0])
    return parse_line(dump_vector(arch, instr, a, b, c, op=op), line)


def _expected(arch, v, shape_name):
    """D[0, 0] of the vector's tile: the model of the MFMA on the padded vector (what the hardware sees)."""
    shape = next(s for e in CATALOGUE if e.arch == arch for s in e.shapes if s.name == shape_name)
    a, b, c, _, _ = cell_inputs(place(shape, v.a, v.b, v.c, replicate=False), 0, 0)
    model = model_of(arch, v.instr, op=shape_name)
    return int(simulate_dot(model, None, a[None], b[None], np.array([c], dtype=np.uint64))[0])


@pytest.mark.parametrize("arch", AMD_ARCHS)
def test_run_with_emulated_launch_matches_the_models(arch):
    rng = np.random.default_rng(7)
    dev = _device(arch)
    vectors, shapes = [], []
    for e in CATALOGUE:
        if e.arch != arch or not e.default:
            continue
        shape = choose_shape(e, None)
        for K in (1, shape.k, 2 * shape.k + 1):
            vectors.append(_vector(arch, e.instr, K, rng, line=len(vectors) + 1))
            shapes.append(shape.name)
    got = dev.run(vectors)
    assert got == [_expected(arch, v, s) for v, s in zip(vectors, shapes)]


def test_run_multi_block_op_and_foreign_spellings():
    rng = np.random.default_rng(11)
    dev = _device("gfx942")
    vs = [
        _vector("gfx942", "f16f32", 6, rng, op="v_mfma_f32_4x4x4_16b_f16", line=1),  # 16 blocks, 2 issues
        _vector("gfx90a", "f16f32", 5, rng, op="v_mfma_f32_32x32x4f16", line=2),  # CDNA2 spelling -> 32x32x4_2b_f16
        _vector("gfx90a", "bf16f32", 9, rng, op="mfma_1k", line=3),  # a family gfx942 lacks -> its default
    ]
    got = dev.run(vs)
    want = [_expected("gfx942", vs[0], "v_mfma_f32_4x4x4_16b_f16"),
            _expected("gfx942", vs[1], "v_mfma_f32_32x32x4_2b_f16"),
            _expected("gfx942", vs[2], "v_mfma_f32_16x16x16_bf16")]
    assert got == want


def test_run_refuses_an_instruction_the_arch_lacks():
    rng = np.random.default_rng(3)
    v = _vector("gfx90a", "f64f64", 4, rng)
    with pytest.raises(DeviceError, match=r"\(gfx908\) has no instruction f64f64 \(line 1\); valid for gfx908: .*f16f32"):
        _device("gfx908").run([v])


def test_run_reports_cells_and_blocks_that_disagree():
    rng = np.random.default_rng(5)

    def corrupt_cell(ks, lay, A, B, C, waves, issues):
        D = emulate_launch(ks, lay, A, B, C, waves, issues)
        D[0, 5, 0] ^= 1  # row 5 uses row 1's lane permutation: cell (5, 0) must equal cell (1, 0)
        return D

    def corrupt_block(ks, lay, A, B, C, waves, issues):
        D = emulate_launch(ks, lay, A, B, C, waves, issues)
        D[3] = D[3] ^ 1
        return D

    v = _vector("gfx90a", "f16f32", 8, rng, line=4)
    with pytest.raises(DeviceError, match=r"line 4: 1 cell\(s\) of D disagree"):
        _device("gfx90a", corrupt_cell).run([v])
    v = _vector("gfx90a", "f32f32", 1, rng, op="v_mfma_f32_4x4x1f32", line=9)
    with pytest.raises(DeviceError, match=r"line 9: block 3 of D differs from block 0"):
        _device("gfx90a", corrupt_block).run([v])


def test_check_tiles_returns_d00():
    ks = next(k for k in KERNELS if k.shape.name == "v_mfma_f32_16x16x16f16")
    lay = layout(ks.shape.name)
    tiles = _random_tiles(ks, 3, np.random.default_rng(1), K=16)
    A, B, C = pack_tiles(lay, tiles, 0)
    D = emulate_launch(ks, lay, A, B, C, 3, 1)
    vs = [_vector("gfx90a", "f16f32", 1, np.random.default_rng(i)) for i in range(3)]
    assert check_tiles("x", lay, tiles, D, vs) == [int(D[t, 0, 0]) for t in range(3)]


def test_choose_shape_defaults_to_the_widest_single_block_form():
    assert choose_shape(lookup("gfx90a", "f16f32"), None).name == "v_mfma_f32_16x16x16f16"
    assert choose_shape(lookup("gfx908", "f32f32"), None).name == "v_mfma_f32_16x16x4f32"
    assert choose_shape(lookup("gfx942", "fp8bf8f32"), None).name == "v_mfma_f32_16x16x32_fp8_bf8"
    assert choose_shape(lookup("gfx942", "tf32f32"), None).name == "v_mfma_f32_16x16x8_xf32"
    assert choose_shape(lookup("gfx90a", "f64f64"), None).name == "v_mfma_f64_16x16x4f64"
    assert choose_shape(lookup("gfx90a", "bf16f32", "mfma_1k"), "v_mfma_f32_4x4x4bf16_1k").name == "v_mfma_f32_4x4x4bf16_1k"


def test_catalogue_arch_of_runtime_names():
    assert catalogue_arch("gfx90a:sramecc+:xnack-") == "gfx90a"
    assert catalogue_arch("gfx942:sramecc+:xnack-") == "gfx942"
    assert catalogue_arch("gfx908") == "gfx908"
    with pytest.raises(DeviceError, match=r"gfx1100 is not a modelled AMD architecture.*gfx908 \(CDNA1\)"):
        catalogue_arch("gfx1100")


def test_parse_rocminfo_lists_gpu_agents_in_order():
    text = "\n".join([
        "*******", "Agent 1", "*******", "  Name:                    AMD EPYC 7763 64-Core Processor",
        "  Marketing Name:          AMD EPYC 7763 64-Core Processor", "  Device Type:             CPU",
        "*******", "Agent 2", "*******", "  Name:                    gfx90a", "  Marketing Name:          AMD Instinct MI250X",
        "  Device Type:             GPU", "  ISA Info:", "    ISA 1", "      Name:                    amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
        "*******", "Agent 3", "*******", "  Name:                    gfx942", "  Marketing Name:          AMD Instinct MI300X",
        "  Device Type:             GPU",
    ])
    assert parse_rocminfo(text) == [("gfx90a", "AMD Instinct MI250X"), ("gfx942", "AMD Instinct MI300X")]


@pytest.mark.skipif(HIPCC is not None, reason="hipcc is on PATH: the no-toolchain message does not apply")
def test_open_device_without_rocm_is_a_one_line_device_error(monkeypatch, tmp_path):
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))  # an empty ROCm root
    with pytest.raises(DeviceError) as e:
        open_device("hip")
    msg = str(e.value)
    assert msg == ("hip: no HIP toolchain (hipcc not found on PATH or in $ROCM_PATH/bin); "
                   "install ROCm to run on AMD Matrix Cores")
    assert "\n" not in msg
    with pytest.raises(DeviceError, match="no HIP toolchain"):
        open_device("hip:1")


# ---------------------------------------------------------------- device discovery through a stand-in hipcc

_FAKE_INFO = r"""
#include <stdio.h>
#include <stdlib.h>
extern "C" int smtmma_hip_device_info(int device, int *count, char *arch, char *name, int len) {
    *count = 2;
    if (device < 0 || device >= 2) return -1;
    snprintf(arch, (size_t)len, "%s", getenv("SMTMMA_TEST_GFX"));
    snprintf(name, (size_t)len, "Stand-in Instinct");
    return 0;
}
"""

# A kernel library whose "MFMA" returns C (what any model gives when every product is +0 and C is normal):
# it checks the runner's compile, cache, load, name check and launch plumbing, not the arithmetic.
_FAKE_KERNEL = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
@CONSTS@
typedef @OUT_T@ out_t;
extern "C" const char *smtmma_hip_kernel_name(void) { return "@NAME@"; }
extern "C" int smtmma_hip_run(int device, const void *a, const void *b, const void *c, void *d,
                              long waves, int issues, char *err, int err_len) {
    (void)device; (void)a; (void)b; (void)issues;
    if (getenv("SMTMMA_TEST_FAIL")) { snprintf(err, (size_t)err_len, "stand-in failure"); return 7; }
    memcpy(d, c, (size_t)waves * BLOCKS * M_ * N_ * sizeof(out_t));
    return 0;
}
"""

_FAKE_HIPCC = r"""
import re, subprocess, sys
args = sys.argv[1:]
out, src = args[args.index("-o") + 1], args[-1]
text = open(src).read()
if "smtmma_hip_run" in text:
    body = KERNEL.replace("@CONSTS@", re.search(r"static constexpr int .*;", text).group(0))
    body = body.replace("@OUT_T@", re.search(r"(uint\d+_t) \*__restrict__ D", text).group(1))
    body = body.replace("@NAME@", re.search(r'smtmma_hip_kernel_name\(void\) \{ return "(\w+)"', text).group(1))
else:
    body = INFO
open(out + ".cpp", "w").write(body)
sys.exit(subprocess.call([CXX, "-shared", "-fPIC", "-o", out, out + ".cpp"], env={"PATH": PATH}))
"""


@pytest.fixture
def fake_hipcc(tmp_path, monkeypatch):
    """A ``hipcc`` that builds host libraries answering the device query and running a stand-in kernel (needs c++)."""
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler to build the stand-in libraries")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "hipcc"
    script.write_text(f"#!{sys.executable}\nINFO = {_FAKE_INFO!r}\nKERNEL = {_FAKE_KERNEL!r}\nCXX = {cxx!r}\n"
                      f"PATH = {os.environ.get('PATH', '')!r}\n{_FAKE_HIPCC}")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))  # no rocminfo, no real ROCm
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return script


def test_open_device_reads_the_gfx_arch_from_the_runtime(fake_hipcc, monkeypatch):
    monkeypatch.setenv("SMTMMA_TEST_GFX", "gfx90a:sramecc+:xnack-")
    dev = open_device("hip:1")
    assert (dev.arch, dev.gfx, dev.index) == ("gfx90a", "gfx90a", 1)
    assert "Stand-in Instinct" in dev.description and "gfx90a" in dev.description
    with pytest.raises(DeviceError, match=r"GPU 5 does not exist; the HIP runtime sees 2 AMD GPU\(s\)"):
        open_device("hip:5")
    monkeypatch.setenv("SMTMMA_TEST_GFX", "gfx1100")
    with pytest.raises(DeviceError, match=r"gfx1100 is not a modelled AMD architecture"):
        open_device("hip")


def test_open_device_when_hipcc_fails(fake_hipcc):
    fake_hipcc.write_text("#!/bin/sh\necho 'error: no device library found' >&2\nexit 1\n")
    with pytest.raises(DeviceError, match=r"cannot query the AMD GPU \(hip: hipcc failed on device_info-\w+\.hip: "
                                          r"error: no device library found; rocminfo not found either\)"):
        open_device("hip")


def test_run_through_compiled_stand_in_libraries(fake_hipcc, monkeypatch, tmp_path):
    monkeypatch.setenv("SMTMMA_TEST_GFX", "gfx942:sramecc+:xnack-")
    dev = open_device("hip")
    rng = np.random.default_rng(2)
    vs = []
    for n, (instr, K, op) in enumerate([("f16f32", 20, None), ("f64f64", 3, "v_mfma_f64_4x4x4_4b_f64"),
                                        ("tf32f32", 9, None), ("bf8fp8f32", 40, None), ("f16f32", 16, None)]):
        inst = INSTRS[instr]
        c = int(draw("normal", inst.c_fmt, (1,), rng)[0]) & ~get_format(inst.c_fmt).sign_mask  # positive normal
        b = draw("finite-bits", inst.b_fmt, (K,), rng).tolist()
        vs.append(parse_line(dump_vector("gfx942", instr, [0] * K, b, c, op=op), n + 1))
    assert dev.run(vs) == [v.c for v in vs]
    libs = sorted(p.name.split("-")[0] for p in (tmp_path / "cache" / "smtmma" / "hip").glob("*.so"))
    assert libs == ["device_info", "gfx942_v_mfma_f32_16x16x16_f16", "gfx942_v_mfma_f32_16x16x32_bf8_fp8",
                    "gfx942_v_mfma_f32_16x16x8_xf32", "gfx942_v_mfma_f64_4x4x4_4b_f64"]
    monkeypatch.setenv("SMTMMA_TEST_FAIL", "1")
    with pytest.raises(DeviceError, match=r"v_mfma_f32_16x16x16_f16: launch failed: stand-in failure"):
        open_device("hip").run(vs[:1])
