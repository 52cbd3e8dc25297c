"""The AMD hardware device: MFMA/WMMA register layouts, the generated HIP kernels, and the runner, without an AMD GPU.

* layouts: every (AMD arch, mnemonic) of smtmma.isa has one (the gfx950
  ``_f8f6f4`` forms one per format pair), it is a bijection per block (RDNA3:
  each element in both lane halves), and spot positions agree with public
  sources: the AMD Matrix Instruction Calculator
  (ROCm/amd_matrix_instruction_calculator, ``--get-register``; CDNA1-3, RDNA3,
  RDNA4), amd/amd-lab-notes matrix-cores/src, and for gfx950 (which the
  calculator lacks) ROCm/composable_kernel test/mx_mfma_op (register tables
  and a recorded scale mapping), ROCm/rocm-blogs matrix-cores-cdna and
  carlushuang/gcnasm matrix_core_gfx950;
* kernels: a pure-Python emulation of each generated kernel (its address
  arithmetic, lane tables and register packing parsed from the source, the
  instruction replaced by the catalogue model reading registers through the
  layout, chained over issues) equals the direct simulation of every cell of
  every tile;
* each source has exactly one builtin call, for the builtin of its mnemonic
  with the operand-format codes of its instruction type; the LLVM intrinsics
  behind them (``llc``) and the builtins themselves (``clang``, C mode,
  ``-nogpulib``), with the types the kernels use, compile to that mnemonic
  with those codes, for every architecture the newest llc / clang on PATH
  knows (one module per architecture); the whole sources compile with
  clang's HIP mode and a stand-in runtime header (device side: the same
  mnemonic; a sample by default, every source with -m slow); with ``hipcc``
  on PATH they compile for real;
* the runner (HipDevice.run with the launch replaced by the emulation):
  catalogue row and shape choice, placement (scales included), batching, the
  agreement checks and D[0, 0]; ``open_device("hip")`` without ROCm is a
  one-line DeviceError.

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
from smtmma.hw.amd_layouts import F8F6F4_FORMATS, LAYOUTS, layout
from smtmma.hw.device import DeviceError, open_device
from smtmma.hw.hip import (
    GFX_TO_ARCH,
    HIPCC_FLAGS,
    HipDevice,
    catalogue_arch,
    check_tiles,
    choose_shape,
    pack_scales,
    pack_tiles,
    parse_rocminfo,
)
from smtmma.hw.hip_kernels import (
    ENTRY_POINT,
    NAME_SYMBOL,
    builtin_for,
    device_info_source,
    hip_kernels,
    offload_arch,
)
from smtmma.isa import SHAPES
from smtmma.sampling import draw, draw_scales
from smtmma.simulate import simulate_dot
from smtmma.vectors import dump_vector, parse_line

AMD_ARCHS = [a for a, x in ARCHS.items() if x.vendor == "amd"]
AMD_PAIRS = sorted({(a, s.name) for a in AMD_ARCHS for fams in SHAPES[a].values() for ss in fams.values() for s in ss})
F8F6F4_NAMES = sorted({n for _, n in AMD_PAIRS if n.endswith("_f8f6f4")})
KERNELS = hip_kernels()
KERNEL_IDS = [k.file.removesuffix(".hip") for k in KERNELS]


def _instr_of(a_fmt: str, b_fmt: str, scaled: bool) -> str:
    """The catalogue instruction type of a gfx950 f8f6f4 format pair."""
    if scaled:
        return f"mx{a_fmt}f32" if a_fmt == b_fmt else f"mx{a_fmt}{b_fmt}f32"
    return f"{a_fmt}{b_fmt}f32"


#: f8f6f4 format pairs whose kernels the default run emulates: every format once as A and once as B, one pair equal.
QUICK_PAIRS = (("e4m3", "e4m3"), ("e5m2", "e2m3"), ("e2m3", "e2m1"), ("e3m2", "e5m2"), ("e2m1", "e3m2"))


def _quick(ks) -> bool:
    """Whether a kernel's emulation runs by default: all but the f8f6f4 pairs outside QUICK_PAIRS (those: -m slow)."""
    inst = INSTRS[ks.instr]
    return not ks.shape.name.endswith("_f8f6f4") or (inst.a_fmt, inst.b_fmt) in QUICK_PAIRS


QUICK = [pytest.param(k, id=i) if _quick(k) else pytest.param(k, id=i, marks=pytest.mark.slow)
         for k, i in zip(KERNELS, KERNEL_IDS)]


# ---------------------------------------------------------------- layouts

def test_every_amd_shape_has_a_layout_and_no_more():
    assert sorted(LAYOUTS) == AMD_PAIRS


def _check_bijection(lay) -> None:
    """Every element of every block in exactly the table's slots; each slot maps back (whole arrays at once)."""
    assert lay.m * lay.k * lay.blocks * lay.replicas == lay.wave * lay.in_per_lane
    assert lay.m * lay.n * lay.blocks == lay.wave * lay.out_per_lane
    stride = lay.wave // lay.replicas
    for table, slot, rows, cols, rep in ((lay.a_table, lay.a_slot, lay.m, lay.k, lay.replicas),
                                         (lay.b_table[:, :, [0, 2, 1]], lambda b, j, kk: lay.b_slot(b, kk, j), lay.n,
                                          lay.k, lay.replicas),
                                         (lay.d_table, lay.d_slot, lay.m, lay.n, 1)):
        flat = table.reshape(-1, 3)
        cells, counts = np.unique(flat, axis=0, return_counts=True)
        assert len(cells) == lay.blocks * rows * cols and (counts == rep).all()
        lane, e = slot(flat[:, 0], flat[:, 1], flat[:, 2])
        lanes = np.repeat(np.arange(lay.wave), table.shape[1])
        assert (lane == lanes % (stride if rep > 1 else lay.wave)).all()
        assert (e == np.tile(np.arange(table.shape[1]), lay.wave)).all()
    if lay.scale_block:
        rows_kb = {tuple(x) for x in lay.scale_table.tolist()}
        assert rows_kb == {(r, kb) for r in range(lay.m) for kb in range(lay.k // lay.scale_block)}


@pytest.mark.parametrize("arch,name", AMD_PAIRS, ids=[f"{a}-{n}" for a, n in AMD_PAIRS])
def test_layout_is_a_bijection_per_block(arch, name):
    _check_bijection(layout(name, arch))


@pytest.mark.parametrize("name", F8F6F4_NAMES)
def test_f8f6f4_layouts_per_format_pair(name):
    for a_fmt in F8F6F4_FORMATS:
        for b_fmt in F8F6F4_FORMATS:
            lay = layout(name, "gfx950", _instr_of(a_fmt, b_fmt, name.startswith("v_mfma_scale_")))
            (ca, wa, _), (cb, wb, _) = F8F6F4_FORMATS[a_fmt], F8F6F4_FORMATS[b_fmt]
            assert (lay.cbsz, lay.blgp, lay.a_bits, lay.b_elem_bits) == (ca, cb, wa, wb)
            assert lay.in_per_lane == 32 and lay.scale_block == (32 if name.startswith("v_mfma_scale_") else 0)
            _check_bijection(lay)


def test_layout_needs_the_arch_where_archs_differ():
    with pytest.raises(Exception, match=r"v_wmma_f32_16x16x16_f16: the layout differs between gfx11, gfx12"):
        layout("v_wmma_f32_16x16x16_f16")
    with pytest.raises(Exception, match=r"no MFMA/WMMA layout for 'v_wmma_f32_16x16x16_fp8_fp8' on gfx11"):
        layout("v_wmma_f32_16x16x16_fp8_fp8", "gfx11")
    assert layout("v_mfma_f32_16x16x16_f16") is layout("v_mfma_f32_16x16x16_f16", "gfx950")


# (arch, mnemonic, matrix, block, row, col) -> (lane, element): ROCm/amd_matrix_instruction_calculator
# matrix_calculator.py --get-register (-A: A[i][k], -B: B[k][j], -D: D[i][j]; RDNA with --wavefront 32), register
# names turned into the element of the lane's operand: v1{37}.[15:0] of an f16 A is element 2 of lane 37.
CALCULATOR = [
    ("gfx908", "v_mfma_f32_32x32x8f16", "A", 0, 5, 6, (37, 2)),  # cdna1: A[5][6] = v1{37}.[15:0]
    ("gfx90a", "v_mfma_f32_4x4x4bf16_1k", "B", 9, 3, 2, (38, 3)),  # cdna2: B[3][2].B9 = v1{38}.[31:16]
    ("gfx90a", "v_mfma_f64_16x16x4f64", "D", 0, 13, 7, (23, 3)),  # cdna2: D[13][7] = v[7:6]{23}
    ("gfx942", "v_mfma_f32_16x16x32_fp8_bf8", "A", 0, 11, 27, (59, 3)),  # cdna3: A[11][27] = v0{59}.[31:24]
    ("gfx942", "v_mfma_f32_32x32x1_2b_f32", "D", 1, 29, 3, (35, 29)),  # cdna3: D[29][3].B1 = v29{35}
    ("gfx908", "v_mfma_f32_32x32x2bf16", "A", 1, 7, 1, (39, 1)),  # cdna1: A[7][1].B1 = v0{39}.[31:16]
    ("gfx942", "v_mfma_f32_32x32x4_xf32", "B", 0, 3, 20, (52, 1)),  # cdna3: B[3][20] = v1{52}
    ("gfx90a", "v_mfma_f32_16x16x1f32", "D", 3, 14, 5, (53, 14)),  # cdna2: D[14][5].B3 = v14{53}
    ("gfx942", "v_mfma_f64_4x4x4_4b_f64", "A", 1, 2, 3, (54, 0)),  # cdna3: A[2][3].B1 = v[1:0]{54}
    ("gfx908", "v_mfma_f32_4x4x1f32", "D", 12, 3, 1, (49, 3)),  # cdna1: D[3][1].B12 = v3{49}
    ("gfx11", "v_wmma_f32_16x16x16_f16", "A", 0, 5, 6, (5, 6)),  # rdna3: A[5][6] = v3{5}.[15:0] and v3{21}
    ("gfx11", "v_wmma_f32_16x16x16_bf16", "B", 0, 11, 2, (2, 11)),  # rdna3: B[11][2] = v5{2}.[31:16] and v5{18}
    ("gfx11", "v_wmma_f32_16x16x16_f16", "D", 0, 6, 9, (9, 3)),  # rdna3: D[6][9] = v3{9}
    ("gfx11", "v_wmma_f16_16x16x16_f16", "D", 0, 13, 7, (23, 6)),  # rdna3: D[13][7] = v6{23}.[15:0]
    ("gfx12", "v_wmma_f32_16x16x16_f16", "A", 0, 5, 6, (21, 2)),  # rdna4: A[5][6] = v1{21}.[15:0]
    ("gfx12", "v_wmma_f32_16x16x16_bf16", "D", 0, 13, 7, (23, 5)),  # rdna4: D[13][7] = v5{23}
    ("gfx12", "v_wmma_f16_16x16x16_f16", "D", 0, 13, 7, (23, 5)),  # rdna4: D[13][7] = v2{23}.[31:16]
    ("gfx12", "v_wmma_f32_16x16x16_fp8_bf8", "A", 0, 9, 13, (25, 5)),  # rdna4: A[9][13] = v1{25}.[15:8]
    ("gfx12", "v_wmma_f32_16x16x16_bf8_fp8", "B", 0, 3, 14, (14, 3)),  # rdna4: B[3][14] = v0{14}.[31:24]
]


@pytest.mark.parametrize("arch,name,matrix,block,r,c,want", CALCULATOR,
                         ids=[f"{x[0]}-{x[1]}-{x[2]}" for x in CALCULATOR])
def test_layout_spot_checks_from_the_calculator(arch, name, matrix, block, r, c, want):
    lay = layout(name, arch)
    slot = {"A": lay.a_slot, "B": lay.b_slot, "D": lay.d_slot}[matrix]
    assert slot(block, r, c) == want


def test_rdna3_repeats_a_and_b_in_both_lane_halves_and_keeps_f16_d_in_low_halves():
    # calculator rdna3: A[5][6] = v3{5}.[15:0] and v3{21}.[15:0]; D f16 in GPR floor(i/2) bits [15:0]
    lay = layout("v_wmma_f32_16x16x16_f16", "gfx11")
    assert lay.a_table[5, 6].tolist() == lay.a_table[21, 6].tolist() == [0, 5, 6]
    assert lay.b_table[18, 11].tolist() == [0, 11, 2]
    f16 = layout("v_wmma_f16_16x16x16_f16", "gfx11")
    assert (f16.out_bits, f16.out_slot) == (16, 32)
    assert (layout("v_wmma_f16_16x16x16_f16", "gfx12").out_slot, lay.in_per_lane) == (16, 16)


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


def test_gfx950_double_rate_f16_bf16_spot_checks():
    # carlushuang/gcnasm matrix_core_gfx950/matrix_core.cc (matrix_core_kernel_standard, 32x32x16 f16): lane l loads
    # A[l % 32][8 * (l / 32) + e] (a fp16x8); C element i of lane l: row 4 * (l / 32) + i % 4 + 8 * (i / 4),
    # column l % 32
    lay = layout("v_mfma_f32_32x32x16_f16", "gfx950")
    assert lay.a_slot(0, 7, 12) == (32 + 7, 4)
    assert lay.b_slot(0, 3, 30) == (30, 3)
    assert lay.d_slot(0, 4 * 1 + 2 + 8 * 3, 17) == (32 + 17, 2 + 4 * 3)
    # composable_kernel xdlops_gemm.hpp mfma_type<mfma_f32_16x16x32f16/bf16>: 16 lanes per block, 4 input blocks,
    # 8 k per lane; C 4 rows per lane group
    for name in ("v_mfma_f32_16x16x32_f16", "v_mfma_f32_16x16x32_bf16"):
        lay = layout(name, "gfx950")
        assert lay.a_slot(0, 3, 27) == (48 + 3, 3) and lay.d_slot(0, 9, 5) == (32 + 5, 1)


def test_gfx950_f8f6f4_spot_checks():
    # composable_kernel test/mx_mfma_op/mx_mfma_op.hpp, load_A_row_major register tables:
    # 16x16x128 FP8 "Reg 4 [0:7] | K64 | K80 | K96 | K112 | v[16]": A[i][80] in lane 16 + i, byte 16
    lay = layout("v_mfma_f32_16x16x128_f8f6f4", "gfx950", "e4m3e4m3f32")
    assert lay.a_slot(0, 5, 80) == (21, 16) and lay.a_slot(0, 5, 15) == (5, 15) and lay.b_slot(0, 112, 2) == (50, 16)
    # 32x32x64 FP8 "Reg 4 [0:7] | K32 | K48 | v[16]"; rocm-blogs matrix-cores-cdna: a_reg[i*16 + j] of lane t is
    # A[t % 32][(t / 32) * 16 + 32 * i + j]  -> t = 37, i = 1, j = 3: A[5][51] is element 19
    lay = layout("v_mfma_scale_f32_32x32x64_f8f6f4", "gfx950", "mxe4m3f32")
    assert lay.a_slot(0, 5, 48) == (37, 16) and lay.a_slot(0, 5, 51) == (37, 19)
    # FP6 16x16x128 "Reg 0-2 [0:95] K = 32-47 | Reg 3-5 [0:95] K = 48-63" in lanes 16..31: A[i][50] is element 18,
    # bits [113:108] of the 6-register tuple (f6_pk_t::pack: element i at bits [6i+5:6i])
    lay = layout("v_mfma_f32_16x16x128_f8f6f4", "gfx950", "e2m3e3m2f32")
    assert lay.a_slot(0, 4, 50) == (20, 18) and (lay.a_bits, lay.b_elem_bits, lay.cbsz, lay.blgp) == (6, 6, 2, 3)
    # FP4 32x32x64 (rocm-blogs: lane t reads bytes A + (t % 32) * 32 + (t / 32) * 16 of packed fp4x2, low nibble
    # first; CK "Reg 0 [0:7] K0K1 | K32K33"): A[3][42] is nibble 10 of lane 35
    lay = layout("v_mfma_scale_f32_32x32x64_f8f6f4", "gfx950", "mxe2m1f32")
    assert lay.a_slot(0, 3, 42) == (35, 10) and lay.b_slot(0, 42, 3) == (35, 10) and lay.a_bits == 4
    # mixed: A fp8 (runs of 16), B fp4 (32 consecutive k)
    lay = layout("v_mfma_f32_32x32x64_f8f6f4", "gfx950", "e4m3e2m1f32")
    assert lay.a_slot(0, 0, 40) == (0, 24) and lay.b_slot(0, 40, 0) == (32, 8) and (lay.cbsz, lay.blgp) == (0, 4)


def test_gfx950_scale_lanes_agree_with_the_recorded_mapping():
    # composable_kernel test/mx_mfma_op/scale_mapping_16x16x128.{cpp,txt}, recorded on gfx950: the kernel puts 1.0
    # in register element testId % 32 of lane rowId + 16 * (testId / 32) and prints which lane's scale multiplied
    # it, e.g. "a(0,16) is scaled from thread 32", "a(1,80) is scaled from thread 49", "a(2,64) ... thread 18".
    recorded = {(0, 0): 0, (0, 16): 32, (0, 32): 0, (0, 48): 32, (0, 64): 16, (0, 80): 48, (0, 96): 16,
                (0, 112): 48, (1, 80): 49, (1, 16): 33, (2, 64): 18, (3, 16): 35}
    lay = layout("v_mfma_scale_f32_16x16x128_f8f6f4", "gfx950", "mxe4m3f32")
    for (row, test_id), lane in recorded.items():
        _, i, kk = lay.a_table[row + 16 * (test_id // 32), test_id % 32].tolist()
        assert (i, lay.scale_a_lane(i, kk // 32)) == (row, lane)
    # mx_mfma_op.hpp load_mx_A_row_major: lane l holds x(l % BLOCK_M, l / BLOCK_M)
    lay32 = layout("v_mfma_scale_f32_32x32x64_f8f6f4", "gfx950", "mxe2m1f32")
    assert lay32.scale_table[37].tolist() == [5, 1] and lay.scale_table[50].tolist() == [2, 3]


# ---------------------------------------------------------------- kernels: emulation

_TABLE = re.compile(r"__constant__ int (\w+)\[(\d+)\] = \{(.*?)\};", re.S)
_CONSTS = re.compile(r"static constexpr int (.*?);")
_IDX = r"((?:[^\[\]]|\[[^\]]*\])+)"  # an index expression, one level of nested [] allowed
_PACK = re.compile(r"([ab])w(?:\[(\d+)\])? \|= \(uint32_t\)\(([ab])(\d+) (<<|>>) (\d+)\);")
_ELEM_BITS = {"float": 32, "double": 64, "f32": 32, "f64": 64, "f16": 16}
#: Register bits of one element of each f8f6f4 CBSZ/BLGP code (CDNA4 ISA via LLVM: 0 fp8, 1 bf8, 2 fp6, 3 bf6, 4 fp4).
_F8F6F4_CODE_BITS = {0: 8, 1: 8, 2: 6, 3: 6, 4: 4}
_F8F6F4_CODE = {"e4m3": 0, "e5m2": 1, "e2m3": 2, "e3m2": 3, "e2m1": 4}


@lru_cache(maxsize=None)
def _parsed(source: str) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, object]]:
    """The lane tables, the constants and the expressions (as Python) of a generated source."""
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
        return re.sub(r"\((?:long|size_t|int)\)", "", expr).strip().replace(" / ", " // ")

    def one(pattern: str, text: str = source) -> str:
        found = re.findall(pattern, text)
        assert len(found) == 1, (pattern, found)
        return py(found[0])

    loop = source.split("for (int s = 0; s < issues; ++s) {", 1)[1].split("\n    }\n", 1)[0]
    call = re.search(r"acc = (__builtin_amdgcn_\w+)\((.*)\);", loop)
    assert call
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
        "a_loads": [py(x) for x in re.findall(r"const uint64_t a\d+ = a_w\[" + _IDX + r"\];", loop)],
        "b_loads": [py(x) for x in re.findall(r"const uint64_t b\d+ = b_w\[" + _IDX + r"\];", loop)],
        "packs": [(buf, int(w or 0), var, int(e), op, int(sh)) for buf, w, var, e, op, sh in _PACK.findall(loop)],
        "words": {v: int(m.group(1) or 1) for v in "ab"
                  if (m := re.search(rf"(?:u32x(\d+)|uint32_t) {v}w = ", loop))},
        "operand": {v: re.search(rf"const (\w+) {v} = __builtin_bit_cast\(\1, {v}w\);", loop).group(1) for v in "ab"},
        "acc": re.search(r"^    (\w+) acc = ", source, re.M).group(1),
        "builtin": call.group(1),
        "args": [x.strip() for x in call.group(2).split(",")],
        "c_loads": [(acc, py(x)) for acc, x in re.findall(r"(acc(?:\[\d+\])?) = __builtin_bit_cast\(\w+, C\[" + _IDX + r"\]\);", source)],
        "d_stores": [(py(x), acc) for x, acc in re.findall(r"D\[" + _IDX + r"\] = __builtin_bit_cast\(\w+, (acc(?:\[\d+\])?)\);", source)],
        "launch": int(re.search(r"__launch_bounds__\((\d+)\)", source).group(1)),
    }
    if "xa" in exprs["args"]:  # type: ignore[operator]
        exprs.update({
            "KBp": one(r"const long KBp = (.+?);"),
            "sa_w": one(r"\*sa_w = SA \+ (.+?);"),
            "sb_w": one(r"\*sb_w = SB \+ (.+?);"),
            "sa_off": one(r"const long sa_off = (.+?);"),
            "sb_off": one(r"const long sb_off = (.+?);"),
            "ss": one(r"const long ss = (.+?);", loop),
            "xa": one(r"const int xa = \(int\)sa_w\[(.+?)\];", loop),
            "xb": one(r"const int xb = \(int\)sb_w\[(.+?)\];", loop),
        })
    return tables, consts, exprs


def _reg_bits(ks, which: str, args: list) -> int:
    """Register bits of one A or B element: by the CBSZ / BLGP argument for f8f6f4, else by the format."""
    if ks.shape.name.endswith("_f8f6f4"):
        return _F8F6F4_CODE_BITS[int(args[3 if which == "a" else 4])]
    fmt = get_format(getattr(INSTRS[ks.instr], f"{which}_fmt"))
    return 32 if fmt.container else fmt.bits  # tf32 sits in a 32-bit container


def _elements(words: np.ndarray, bits: int, count: int) -> np.ndarray:
    """(lanes, count) elements of ``bits`` each, from the lowest bit of (lanes, W) 32-bit register tuples up."""
    padded = np.concatenate([words, np.zeros((words.shape[0], 1), np.uint64)], axis=1)
    p = bits * np.arange(count)
    lo, sh = p // 32, (p % 32).astype(np.uint64)
    pair = padded[:, lo] | (padded[:, lo + 1] << np.uint64(32))  # the two words element e can touch
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    out = (pair >> sh) & mask
    if bits == 64:  # a 64-bit element fills both words exactly (sh == 0)
        assert (sh == 0).all()
    return out


def _registers(ex, var: str, loaded: np.ndarray) -> np.ndarray:
    """(lanes, words) 32-bit register tuple the source's pack lines build from the loaded (lanes, E) elements."""
    words = np.zeros((loaded.shape[0], ex["words"][var]), dtype=np.uint64)
    for buf, w, v, e, op, sh in ex["packs"]:
        if buf != var:
            continue
        assert v == var
        x = loaded[:, e] << np.uint64(sh) if op == "<<" else loaded[:, e] >> np.uint64(sh)
        words[:, w] |= x & np.uint64(0xFFFFFFFF)
    return words


def emulate_launch(ks, lay, A, B, C, waves, issues, scales=None):
    """What the kernel of ``ks`` does, lane by lane: its address expressions, lane tables and register packing
    (read from the source) gather A, B, C (and the scales); the instruction is the catalogue model reading the
    register tuples through the layout (amd_layouts tables: element e of w bits at bits [w*e + w-1 : w*e]; where the
    wave repeats an element, every copy must agree); D of one issue is C of the next; D is scattered by the source's
    store expressions."""
    tables, cs, ex = _parsed(ks.source)
    M, N, K, BL, E, ED, W = (cs[x] for x in ("M_", "N_", "K_", "BLOCKS", "E_", "ED_", "WAVE_"))
    assert (M, N, K, BL, E, ED, W, ex["launch"]) == (lay.m, lay.n, lay.k, lay.blocks, lay.in_per_lane,
                                                     lay.out_per_lane, lay.wave, lay.wave)
    assert len(ex["a_loads"]) == len(ex["b_loads"]) == E and len(ex["c_loads"]) == len(ex["d_stores"]) == ED
    args = ex["args"]
    wa, wb = _reg_bits(ks, "a", args), _reg_bits(ks, "b", args)
    model = model_of(ks.arch, ks.instr, op=ks.shape.name)
    fmt = get_format(INSTRS[ks.instr].a_fmt)
    shift = np.uint64(fmt.container_shift if fmt.container else 0)  # the unit ignores TF32's 13 low bits
    acc_bits = next(b for t, b in _ELEM_BITS.items() if ex["acc"].startswith(t))
    Af, Bf, Cf = A.reshape(-1), B.reshape(-1), C.reshape(-1)
    Df = np.zeros_like(Cf)
    ns: dict[str, object] = {**tables, **cs, "issues": issues, "lane": np.arange(W)}
    ns["Kp"] = eval(ex["Kp"], ns)
    a_off, b_off = [], []
    for e in range(E):
        ns["e"] = e
        ns["t"] = eval(ex["t"], ns)
        a_off.append(eval(ex["a_off"], ns))
        b_off.append(eval(ex["b_off"], ns))
    ns["a_off"], ns["b_off"] = a_off, b_off
    scaled = "xa" in args
    if scaled:
        SA, SB = (x.reshape(-1) for x in scales)
        for key in ("KBp", "sa_off", "sb_off"):
            ns[key] = eval(ex[key], ns)
    at, bt, dt = lay.a_table.reshape(-1, 3), lay.b_table.reshape(-1, 3), lay.d_table.reshape(-1, 3)

    def slot(name: str) -> int:  # "acc" or "acc[v]" -> the C/D element in vector slot v
        v = int(name[4:-1]) if "[" in name else 0
        assert v * acc_bits % lay.out_slot == 0
        return v * acc_bits // lay.out_slot

    def matrix(reg: np.ndarray, tab: np.ndarray, shape: tuple) -> np.ndarray:
        out = np.zeros(shape, np.uint64)
        out[tab[:, 0], tab[:, 1], tab[:, 2]] = reg.reshape(-1)
        assert (out[tab[:, 0], tab[:, 1], tab[:, 2]] == reg.reshape(-1)).all(), "repeated lanes disagree"
        return out

    for w in range(waves):
        ns["wave"] = w
        a_w, b_w, ns["cd_w"] = eval(ex["a_w"], ns), eval(ex["b_w"], ns), eval(ex["cd_w"], ns)
        acc = np.zeros((W, ED), np.uint64)  # (lane, element) registers
        for name, idx in ex["c_loads"]:
            acc[:, slot(name)] = Cf[eval(idx, ns)]
        for s in range(issues):
            ns["s"] = s
            ns["sa"], ns["sb"] = eval(ex["sa"], ns), eval(ex["sb"], ns)
            a_el = np.stack([Af[a_w + eval(x, ns)] for x in ex["a_loads"]], axis=1).astype(np.uint64)
            b_el = np.stack([Bf[b_w + eval(x, ns)] for x in ex["b_loads"]], axis=1).astype(np.uint64)
            a_reg = _elements(_registers(ex, "a", a_el), wa, E) >> shift
            b_reg = _elements(_registers(ex, "b", b_el), wb, E) >> shift
            Am = matrix(a_reg, at, (BL, M, K))
            Bm = matrix(b_reg, bt, (BL, K, N))
            Cm = np.zeros((BL, M, N), np.uint64)
            Cm[dt[:, 0], dt[:, 1], dt[:, 2]] = acc.reshape(-1)
            rows_a = np.repeat(Am, N, axis=1).reshape(-1, K)  # cell (b, i, j) -> A_b[i, :]
            rows_b = np.tile(np.transpose(Bm, (0, 2, 1)), (1, M, 1)).reshape(-1, K)  # -> B_b[:, j]
            extra = {}
            if scaled:
                ns["sa_w"], ns["sb_w"] = eval(ex["sa_w"], ns), eval(ex["sb_w"], ns)
                ns["ss"] = eval(ex["ss"], ns)
                xa = SA[ns["sa_w"] + eval(ex["xa"], ns)].astype(np.uint64)  # the byte each lane passes
                xb = SB[ns["sb_w"] + eval(ex["xb"], ns)].astype(np.uint64)
                nkb = K // lay.scale_block
                st = lay.scale_table  # lane -> (row of A = column of B, k block), from scale_a_lane / scale_b_lane
                sam, sbm = np.zeros((M, nkb), np.uint64), np.zeros((nkb, N), np.uint64)
                sam[st[:, 0], st[:, 1]] = xa
                sbm[st[:, 1], st[:, 0]] = xb
                extra = {"scale_a": np.repeat(sam, N, axis=0), "scale_b": np.tile(sbm.T, (M, 1))}
            Dm = simulate_dot(model, None, rows_a, rows_b, Cm.reshape(-1), backend="numpy", **extra).astype(np.uint64)
            acc = Dm.reshape(BL, M, N)[dt[:, 0], dt[:, 1], dt[:, 2]].reshape(W, ED)
        for idx, name in ex["d_stores"]:
            Df[eval(idx, ns)] = acc[:, slot(name)].astype(Df.dtype)
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
        if inst.scale_fmt is None:
            tiles.append(place(ks.shape, a, b, c, replicate=True))
        else:
            nb = -(-K // inst.block)
            sa, sb = (draw_scales("normal", inst.scale_fmt, (nb,), rng).tolist() for _ in range(2))
            tiles.append(place(ks.shape, a, b, c, scale_a=sa, scale_b=sb, block=inst.block, replicate=True))
    return tiles


def _direct(ks, tiles):
    """D of every cell of every tile, simulated straight from cell_inputs: (tiles, m, n)."""
    model = model_of(ks.arch, ks.instr, op=ks.shape.name)
    m, n = ks.shape.m, ks.shape.n
    cells = [cell_inputs(t, i, j) for t in tiles for i in range(m) for j in range(n)]
    extra = {}
    if cells[0][3] is not None:
        extra = {"scale_a": np.array([x[3] for x in cells]), "scale_b": np.array([x[4] for x in cells])}
    d = simulate_dot(model, None, np.array([x[0] for x in cells]), np.array([x[1] for x in cells]),
                     np.array([x[2] for x in cells], dtype=np.uint64), backend="numpy", **extra)
    return d.reshape(len(tiles), m, n)


def _lay(ks):
    return layout(ks.shape.name, ks.arch, ks.instr)


@pytest.mark.parametrize("ks", QUICK)
def test_kernel_emulation_equals_direct_simulation(ks):
    lay = _lay(ks)
    rng = np.random.default_rng(zlib.crc32(ks.file.encode()))
    waves = 2
    tiles = _random_tiles(ks, waves * lay.blocks, rng)  # a different tile in every block of every wave
    issues = tiles[0].issues
    assert issues == 2
    fmt = get_format(INSTRS[ks.instr].a_fmt)
    A, B, C = pack_tiles(lay, tiles, fmt.container_shift if fmt.container else 0, repeat_blocks=False)
    D = emulate_launch(ks, lay, A, B, C, waves, issues, pack_scales(lay, tiles, repeat_blocks=False))
    want = _direct(ks, tiles)
    assert D.dtype == {16: np.uint16, 32: np.uint32, 64: np.uint64}[lay.out_bits]
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
        assert k.vendor == "amd" and k.toolchain_arch == {"gfx11": "gfx1100", "gfx12": "gfx1200"}.get(k.arch, k.arch)
        assert k.manifest_entry()["offload_arch"] == k.toolchain_arch == offload_arch(k.arch)


def _expected_builtin(arch: str, name: str) -> str:
    """The builtin of a mnemonic, spelled out independently of hip_kernels.builtin_for."""
    body = name.removeprefix("v_")
    if body.startswith("wmma_"):  # clang: _w32 on gfx11, _w32_gfx12 on gfx12
        return "__builtin_amdgcn_" + body + {"gfx11": "_w32", "gfx12": "_w32_gfx12"}[arch]
    if body.endswith("_f8f6f4"):  # one builtin for the scaled and unscaled forms
        return "__builtin_amdgcn_mfma_scale_" + body.removeprefix("mfma_scale_").removeprefix("mfma_")
    cdna3 = re.fullmatch(r"mfma_(f32|f64)_(\d+x\d+x\d+)(_\d+b)?_(f32|f16|bf16|f64)", body)
    if cdna3 and cdna3.group(2) not in ("16x16x32", "32x32x16"):  # gfx940 renamed these; clang kept the CDNA2 builtins
        o, mnk, _, t = cdna3.groups()
        body = f"mfma_{o}_{mnk}{t}" + ("_1k" if t == "bf16" else "")
    return "__builtin_amdgcn_" + body


def _expected_args(ks) -> str:
    """The arguments after (a, b, acc) of the builtin call: controls, f8f6f4 format codes and scales."""
    name, inst = ks.shape.name, INSTRS[ks.instr]
    if name.endswith("_f8f6f4"):
        codes = f"{_F8F6F4_CODE[inst.a_fmt]}, {_F8F6F4_CODE[inst.b_fmt]}"
        return f"{codes}, 0, xa, 0, xb" if inst.scale_fmt else f"{codes}, 0, 0, 0, 0"
    if name.startswith("v_wmma_"):
        return "0" if (ks.arch, inst.d_fmt) == ("gfx11", "fp16") else ""  # gfx11 f16 D: OPSEL = 0 (low halves)
    return "0, 0, 0"  # cbsz, abid, blgp


@pytest.mark.parametrize("ks", KERNELS, ids=KERNEL_IDS)
def test_source_calls_the_builtin_of_its_mnemonic_once(ks):
    calls = re.findall(r"__builtin_amdgcn_\w+", ks.source)
    assert calls == [_expected_builtin(ks.arch, ks.shape.name)] == [builtin_for(ks.shape.name, ks.arch)]
    assert f'{NAME_SYMBOL}(void) {{ return "{ks.shape.name}"; }}' in ks.source
    assert f'extern "C" int {ENTRY_POINT}(' in ks.source
    args = ", ".join(_parsed(ks.source)[2]["args"][3:])  # type: ignore[index]
    assert args == _expected_args(ks)
    assert f"__launch_bounds__({32 if ks.arch in ('gfx11', 'gfx12') else 64})" in ks.source


def test_builtin_for_refuses_a_wmma_without_its_arch():
    with pytest.raises(Exception, match=r"v_wmma_f32_16x16x16_f16: the WMMA builtin depends on the architecture"):
        builtin_for("v_wmma_f32_16x16x16_f16")
    with pytest.raises(Exception, match=r"'v_dot2_f32_f16' is not an MFMA or WMMA mnemonic"):
        builtin_for("v_dot2_f32_f16")


# LLVM types of the C++ operand and accumulator types the sources declare.
_LL = {"float": "float", "f32x2": "<2 x float>", "f16x4": "<4 x half>", "f16x8": "<8 x half>",
       "f16x16": "<16 x half>", "bf16x8": "<8 x bfloat>", "i16x2": "<2 x i16>", "i16x4": "<4 x i16>",
       "i16x8": "<8 x i16>", "i16x16": "<16 x i16>", "i32x2": "<2 x i32>", "double": "double", "long": "i64",
       "f32x4": "<4 x float>", "f32x8": "<8 x float>", "f32x16": "<16 x float>", "f32x32": "<32 x float>",
       "f64x4": "<4 x double>"}


def _ll_function(fn: str, ks) -> tuple[str, str]:
    """(declaration, definition) of an IR function ``fn`` calling the intrinsic behind the kernel's builtin."""
    ex = _parsed(ks.source)[2]
    cd = _LL[ex["acc"]]  # type: ignore[index]
    builtin = str(ex["builtin"]).removeprefix("__builtin_amdgcn_").removesuffix("_gfx12").removesuffix("_w32")
    intrinsic = "llvm.amdgcn." + builtin.replace("_", ".")
    if ks.shape.name.endswith("_f8f6f4"):  # A, B narrowed to the registers their formats fill: 8, 6 or 4
        args = ex["args"]  # type: ignore[index]
        na, nb = (_F8F6F4_CODE_BITS[int(args[i])] for i in (3, 4))
        ta, tb = f"<{na} x i32>", f"<{nb} x i32>"
        intrinsic += f".v{na}i32.v{nb}i32"  # overloaded on A's and B's types: the mangled name
        sa, sb = ("%sa", "%sb") if "xa" in args else ("0", "0")
        tail = f", i32 {args[3]}, i32 {args[4]}, i32 0, i32 {sa}, i32 0, i32 {sb}"
        params = [ta, tb, cd, "i32", "i32", "i32", "i32", "i32", "i32"]
    else:
        ta = tb = _LL[ex["operand"]["a"]]  # type: ignore[index]
        wmma = ks.shape.name.startswith("v_wmma_")
        f16_d = wmma and ks.shape.name.startswith("v_wmma_f16")
        tail = ", i1 0" if f16_d else ("" if wmma else ", i32 0, i32 0, i32 0")
        params = [ta, tb, cd] + (["i1"] if f16_d else [] if wmma else ["i32"] * 3)
    decl = f"declare {cd} @{intrinsic}({', '.join(params)})"
    body = (f"define {cd} @{fn}({ta} %a, {tb} %b, {cd} %c, i32 %sa, i32 %sb) {{\n"
            f"  %d = call {cd} @{intrinsic}({ta} %a, {tb} %b, {cd} %c{tail})\n  ret {cd} %d\n}}")
    return decl, body


def _c_function(fn: str, ks) -> tuple[list[str], str]:
    """(typedef lines, a C function ``fn`` making the kernel's builtin call on arguments of the kernel's types)."""
    ex = _parsed(ks.source)[2]
    typedefs = re.findall(r"^typedef .*;$", ks.source, re.M)
    ta, tb, acc = ex["operand"]["a"], ex["operand"]["b"], ex["acc"]  # type: ignore[index]
    args = ", ".join(ex["args"])  # type: ignore[arg-type]
    return typedefs, f"{acc} {fn}({ta} a, {tb} b, {acc} acc, int xa, int xb) {{ return {ex['builtin']}({args}); }}"


@lru_cache(maxsize=None)
def _llvm_tools() -> list[tuple[int, str, frozenset[str]]]:
    """Each distinct llc on PATH (llc, llc-NN): (LLVM major version, path, AMDGPU processors), newest first."""
    out, seen = [], set()
    for name in ["llc"] + [f"llc-{v}" for v in range(40, 13, -1)]:
        path = shutil.which(name)
        if not path or Path(path).resolve() in seen:
            continue
        seen.add(Path(path).resolve())
        try:
            ver = subprocess.run([path, "--version"], check=False, capture_output=True, text=True, timeout=60).stdout
            cpu = subprocess.run([path, "-march=amdgcn", "-mcpu=help"], check=False, capture_output=True, text=True,
                                 timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        major = re.search(r"LLVM version (\d+)", ver)
        cpus = frozenset(re.findall(r"^\s+(gfx\w+)\s+- Select", cpu.stdout + cpu.stderr, re.M))
        if major and cpus:
            out.append((int(major.group(1)), path, cpus))
    return sorted(out, reverse=True)


#: -mcpu for each catalogue architecture, preferred first (gfx940: the same MFMA ISA as gfx942).
_CPUS = {"gfx908": ["gfx908"], "gfx90a": ["gfx90a"], "gfx942": ["gfx942", "gfx940"], "gfx950": ["gfx950"],
         "gfx11": ["gfx1100"], "gfx12": ["gfx1200"]}


def _tool_for(arch: str, tool: str) -> tuple[str, str, int]:
    """(``tool`` (llc or clang) of the newest LLVM on PATH that knows ``arch``, -mcpu, version); skips if none."""
    for major, llc, cpus in _llvm_tools():
        for cpu in _CPUS[arch]:
            if cpu in cpus:
                path = llc if tool == "llc" else shutil.which(Path(llc).name.replace("llc", "clang", 1))
                if path:
                    return path, cpu, major
    found = [f"{Path(p).name} (LLVM {v})" for v, p, _ in _llvm_tools()] or ["none"]
    pytest.skip(f"no {tool} on PATH knows {' or '.join(_CPUS[arch])} (found llc: {', '.join(found)})")


def _asm_by_function(asm: str, count: int) -> list[list[tuple[str, str]]]:
    """Per function k0 .. k{count-1} of an AMDGPU assembly listing: its (mnemonic, operands) of v_mfma/v_wmma lines."""
    out: list[list[tuple[str, str]]] = [[] for _ in range(count)]
    cur = -1
    for line in asm.splitlines():
        head = re.match(r"^k(\d+):", line)
        if head:
            cur = int(head.group(1))
        mma = re.match(r"^\s+(v_(?:mfma|wmma)\w*)\s*(.*)$", line)
        if mma and cur >= 0:
            out[cur].append((mma.group(1), mma.group(2)))
    return out


def _check_mnemonics(asm: str, kernels: list, cpu: str) -> None:
    for ks, found in zip(kernels, _asm_by_function(asm, len(kernels))):
        assert [m for m, _ in found] == [ks.shape.name], (ks.file, cpu, found)
        lay = _lay(ks)
        mods = found[0][1]
        for field, code in (("cbsz", lay.cbsz), ("blgp", lay.blgp)):  # printed only when not 0
            assert (f"{field}:{code}" in mods) if code else (f"{field}:" not in mods), (ks.file, mods)


def _llc_check(llc: str, cpu: str, arch: str, tmp_path: Path) -> None:
    """One IR module for ``arch``, a function per kernel, through ``llc``: each gives its mnemonic and codes."""
    kernels = [k for k in KERNELS if k.arch == arch]
    decls, defs = set(), []
    for n, ks in enumerate(kernels):
        decl, body = _ll_function(f"k{n}", ks)
        decls.add(decl)
        defs.append(body)
    src = tmp_path / f"{arch}-{Path(llc).name}.ll"
    src.write_text("\n".join(sorted(decls)) + "\n\n" + "\n\n".join(defs) + "\n")
    proc = subprocess.run([llc, "-march=amdgcn", f"-mcpu={cpu}", "-O2", "-o", "-", str(src)],
                          check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (llc, proc.stderr.strip().splitlines()[:3])
    _check_mnemonics(proc.stdout, kernels, cpu)


@pytest.mark.parametrize("arch", AMD_ARCHS)
def test_llvm_intrinsic_compiles_to_the_mnemonic(arch, tmp_path):
    """The newest llc on PATH that knows ``arch``: every kernel's intrinsic gives the kernel's mnemonic."""
    llc, cpu, _ = _tool_for(arch, "llc")
    _llc_check(llc, cpu, arch, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("arch", AMD_ARCHS)
def test_llvm_intrinsic_compiles_with_every_llc(arch, tmp_path):
    """Every llc on PATH (older ones too) that knows ``arch``."""
    ran = 0
    for _, llc, cpus in _llvm_tools():
        cpu = next((c for c in _CPUS[arch] if c in cpus), None)
        if cpu:
            _llc_check(llc, cpu, arch, tmp_path)
            ran += 1
    if not ran:
        pytest.skip(f"no llc on PATH knows {arch}")


@pytest.mark.parametrize("arch", AMD_ARCHS)
def test_clang_builtin_compiles_to_the_mnemonic(arch, tmp_path):
    """The kernels' builtin calls with their operand types through clang (C, -nogpulib): mnemonic and CBSZ/BLGP."""
    clang, cpu, _ = _tool_for(arch, "clang")
    kernels = [k for k in KERNELS if k.arch == arch]
    typedefs: dict[str, None] = {}
    fns = []
    for n, ks in enumerate(kernels):
        tds, fn = _c_function(f"k{n}", ks)
        typedefs.update(dict.fromkeys(tds))
        fns.append(fn)
    src = tmp_path / f"{arch}.c"
    src.write_text("\n".join(typedefs) + "\n\n" + "\n".join(fns) + "\n")
    proc = subprocess.run([clang, "--target=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-nogpulib", "-O1", "-S", "-o", "-",
                           str(src)], check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, [x for x in proc.stderr.splitlines() if "error" in x][:3]
    _check_mnemonics(proc.stdout, kernels, cpu)


# A stand-in for <hip/hip_runtime.h> (no ROCm here): the qualifiers, threadIdx/blockIdx and the runtime calls the
# sources use, so that clang's HIP mode compiles a whole source, device side and host side.
_HIP_STUB = """#pragma once
#include <stddef.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __constant__ __attribute__((constant))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
struct stub_tid { __device__ unsigned get() const { return __builtin_amdgcn_workitem_id_x(); }
                  __declspec(property(get = get)) unsigned x; };
struct stub_bid { __device__ unsigned get() const { return __builtin_amdgcn_workgroup_id_x(); }
                  __declspec(property(get = get)) unsigned x; };
extern const __device__ __attribute__((weak)) stub_tid threadIdx;
extern const __device__ __attribute__((weak)) stub_bid blockIdx;
struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
struct ihipStream_t;
typedef int hipError_t;
enum { hipSuccess = 0, hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2 };
hipError_t hipSetDevice(int);
hipError_t hipMalloc(void **, size_t);
hipError_t hipMemcpy(void *, const void *, size_t, int);
hipError_t hipFree(void *);
hipError_t hipGetLastError(void);
hipError_t hipDeviceSynchronize(void);
const char *hipGetErrorString(hipError_t);
extern "C" int __hipPushCallConfiguration(dim3, dim3, size_t = 0, ihipStream_t * = 0);
extern "C" int __hipPopCallConfiguration(dim3 *, dim3 *, size_t *, ihipStream_t **);
extern "C" hipError_t hipLaunchKernel(const void *, dim3, dim3, void **, size_t, ihipStream_t *);
#define hipLaunchKernelGGL(k, g, b, s, st, ...) k<<<g, b, s>>>(__VA_ARGS__)
"""

#: Kernels whose whole source the default run compiles with clang's HIP mode (every one with -m slow).
_HIP_SAMPLE = {"gfx90a_v_mfma_f64_4x4x4f64", "gfx942_v_mfma_f32_16x16x8_xf32", "gfx950_v_mfma_f32_32x32x16_bf16",
               "gfx950_v_mfma_scale_f32_32x32x64_f8f6f4_mxe3m2e5m2f32", "gfx11_v_wmma_f16_16x16x16_f16",
               "gfx12_v_wmma_f32_16x16x16_fp8_bf8"}
HIP_SOURCES = [pytest.param(k, id=i, marks=() if i in _HIP_SAMPLE else pytest.mark.slow) for k, i in zip(KERNELS, KERNEL_IDS)]


@pytest.mark.parametrize("ks", HIP_SOURCES)
def test_clang_hip_compiles_the_whole_source(ks, tmp_path):
    """The source through clang -x hip (stand-in runtime header): the device side gives the mnemonic, the host side
    compiles too, warning-free."""
    clang, cpu, _ = _tool_for(ks.arch, "clang")
    (tmp_path / "hip").mkdir()
    (tmp_path / "hip" / "hip_runtime.h").write_text(_HIP_STUB)
    src = tmp_path / ks.file
    src.write_text(ks.source)
    base = [clang, "-x", "hip", f"--offload-arch={cpu}", "-nogpulib", "-nogpuinc", "-O2", "-Wall", "-I", str(tmp_path)]
    dev = subprocess.run(base + ["--cuda-device-only", "-S", "-o", "-", str(src)], check=False, capture_output=True,
                         text=True, timeout=300)
    assert dev.returncode == 0 and "warning" not in dev.stderr, dev.stderr[-2000:]
    _check_mnemonics(re.sub(r"^_Z\w*smtmma_mma_kernel\w*:", "k0:", dev.stdout, flags=re.M), [ks], cpu)
    host = subprocess.run(base + ["--cuda-host-only", "-fPIC", "-c", "-o", str(tmp_path / "h.o"), str(src)],
                          check=False, capture_output=True, text=True, timeout=300)
    assert host.returncode == 0 and "warning" not in host.stderr, host.stderr[-2000:]


HIPCC = shutil.which("hipcc")


@pytest.mark.skipif(HIPCC is None, reason="hipcc not on PATH (no ROCm on this machine)")
@pytest.mark.parametrize("ks", KERNELS, ids=KERNEL_IDS)
def test_hipcc_compiles_the_kernel(ks, tmp_path):
    src = tmp_path / ks.file
    src.write_text(ks.source)
    proc = subprocess.run([HIPCC, f"--offload-arch={ks.toolchain_arch}", *HIPCC_FLAGS, "-o",
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
    scales = {}
    if inst.scale_fmt is not None:
        nb = -(-K // inst.block)
        scales = {f"scale_{x}": draw_scales("normal", inst.scale_fmt, (nb,), rng).tolist() for x in "ab"}
    return parse_line(dump_vector(arch, instr, a, b, c, op=op, **scales), line)


def _expected(arch, v, shape_name):
    """D[0, 0] of the vector's tile: the model of the instruction on the padded vector (what the hardware sees)."""
    shape = next(s for e in CATALOGUE if e.arch == arch for s in e.shapes if s.name == shape_name)
    inst = INSTRS[v.instr]
    scaled = {"scale_a": v.scale_a, "scale_b": v.scale_b, "block": inst.block} if inst.scale_fmt else {}
    a, b, c, sa, sb = cell_inputs(place(shape, v.a, v.b, v.c, replicate=False, **scaled), 0, 0)
    model = model_of(arch, v.instr, op=shape_name)
    extra = {"scale_a": sa[None], "scale_b": sb[None]} if sa is not None else {}
    return int(simulate_dot(model, None, a[None], b[None], np.array([c], dtype=np.uint64), backend="numpy",
                            **extra)[0])


def _runner_rows(arch: str) -> list:
    """The default rows of ``arch`` the runner test covers; gfx950: its new default shapes (f16/bf16 double rate,
    f8f6f4 with one format: the kernel emulation covers every pair), not the gfx942 f32/f64 ones again."""
    rows = [e for e in CATALOGUE if e.arch == arch and e.default]
    if arch == "gfx950":
        rows = [e for e in rows if e.instr not in ("f32f32", "f64f64") and INSTRS[e.instr].a_fmt == INSTRS[e.instr].b_fmt]
    return rows


@pytest.mark.parametrize("arch", AMD_ARCHS)
def test_run_with_emulated_launch_matches_the_models(arch):
    rng = np.random.default_rng(7)
    dev = _device(arch)
    vectors, shapes = [], []
    for e in _runner_rows(arch):
        shape = choose_shape(e, None)
        wide = shape.k >= 64  # f8f6f4: two issues are enough (the emulation test chains them too)
        for K in (1, shape.k + 1) if wide else (1, shape.k, 2 * shape.k + 1):
            vectors.append(_vector(arch, e.instr, K, rng, line=len(vectors) + 1))
            shapes.append(shape.name)
    got = dev.run(vectors)
    assert got == [_expected(arch, v, s) for v, s in zip(vectors, shapes)]


def test_run_picks_the_named_gfx950_and_wmma_forms():
    rng = np.random.default_rng(13)
    dev = _device("gfx950")
    vs = [
        _vector("gfx950", "e4m3e2m1f32", 70, rng, op="v_mfma_f32_32x32x64_f8f6f4", line=1),  # 2 issues, CBSZ 0 BLGP 4
        _vector("gfx950", "mxe2m3f32", 40, rng, op="v_mfma_scale_f32_32x32x64_f8f6f4", line=2),  # scales per 32 k
        _vector("gfx950", "e5m2e5m2f32", 20, rng, op="v_mfma_f32_16x16x32_bf8_bf8", line=3),  # the CDNA3 form, OCP
        _vector("gfx950", "bf16f32", 9, rng, op="v_mfma_f32_32x32x16_bf16", line=4),
    ]
    want = ["v_mfma_f32_32x32x64_f8f6f4", "v_mfma_scale_f32_32x32x64_f8f6f4", "v_mfma_f32_16x16x32_bf8_bf8",
            "v_mfma_f32_32x32x16_bf16"]
    assert dev.run(vs) == [_expected("gfx950", v, s) for v, s in zip(vs, want)]
    for arch in ("gfx11", "gfx12"):
        v = _vector(arch, "f16f16", 37, rng, line=5)  # 3 issues, f16 D
        assert _device(arch).run([v]) == [_expected(arch, v, "v_wmma_f16_16x16x16_f16")]


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

    def corrupt_cell(ks, lay, A, B, C, waves, issues, scales):
        D = emulate_launch(ks, lay, A, B, C, waves, issues, scales)
        D[0, 5, 0] ^= 1  # row 5 uses row 1's lane permutation: cell (5, 0) must equal cell (1, 0)
        return D

    def corrupt_block(ks, lay, A, B, C, waves, issues, scales):
        D = emulate_launch(ks, lay, A, B, C, waves, issues, scales)
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
    assert choose_shape(lookup("gfx950", "f16f32"), None).name == "v_mfma_f32_16x16x32_f16"
    assert choose_shape(lookup("gfx950", "e4m3e4m3f32"), None).name == "v_mfma_f32_16x16x128_f8f6f4"
    assert choose_shape(lookup("gfx950", "mxe2m1f32"), None).name == "v_mfma_scale_f32_16x16x128_f8f6f4"
    assert choose_shape(lookup("gfx950", "e4m3e4m3f32"), "v_mfma_f32_32x32x16_fp8_fp8").name == \
        "v_mfma_f32_32x32x16_fp8_fp8"
    assert choose_shape(lookup("gfx12", "e5m2e4m3f32"), None).name == "v_wmma_f32_16x16x16_bf8_fp8"
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
    assert catalogue_arch("gfx950:sramecc+:xnack-") == "gfx950"
    for gfx in ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151"):
        assert catalogue_arch(gfx) == "gfx11"
    assert catalogue_arch("gfx1200") == catalogue_arch("gfx1201") == "gfx12"
    assert set(GFX_TO_ARCH.values()) == set(AMD_ARCHS)
    with pytest.raises(DeviceError, match=r"gfx1030 is not a modelled AMD architecture.*gfx908 \(CDNA1\).*"
                                          r"gfx1200, gfx1201 \(RDNA4\)"):
        catalogue_arch("gfx1030")


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
                              const void *sa, const void *sb, long waves, int issues, char *err, int err_len) {
    (void)device; (void)a; (void)b; (void)sa; (void)sb; (void)issues;
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
    monkeypatch.setenv("SMTMMA_TEST_GFX", "gfx1101")
    dev = open_device("hip")
    assert (dev.arch, dev.gfx) == ("gfx11", "gfx1101")
    monkeypatch.setenv("SMTMMA_TEST_GFX", "gfx1030")
    with pytest.raises(DeviceError, match=r"gfx1030 is not a modelled AMD architecture"):
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
