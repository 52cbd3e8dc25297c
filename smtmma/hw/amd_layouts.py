"""AMD matrix-unit register layouts: which lane, and which element of its A/B/C/D registers, holds which matrix element.

Covers the gfx9 MFMAs (CDNA1-4: gfx908, gfx90a, gfx942, gfx950; wave64) and
the RDNA3/RDNA4 WMMAs (gfx11, gfx12; wave32).  One instruction computes
``blocks`` independent products ``D_b = A_b B_b + C_b`` of one block's shape
(m x k) x (k x n) (:class:`smtmma.isa.InstrShape` carries one block's m, n,
k).  Broadcast controls are off (CBSZ = ABID = BLGP = 0, except that the
gfx950 ``_f8f6f4`` forms use CBSZ / BLGP as A's / B's format code); OPSEL = 0.
Every layout here is one instance of these rules:

* **A and B** (sources 0 and 1).  A lane holds ``E`` k values of one row of
  A_b (one column of B_b), packed in its source register tuple from the
  lowest bits up: element ``e`` is bits ``[w*e + w-1 : w*e]`` of the tuple,
  ``w`` the element width (f32: 32, f64: 64, f16/bf16: 16, fp8/bf8: 8, fp6:
  6, fp4: 4; fp6 elements straddle 32-bit register boundaries).  The ``P =
  m * blocks`` lanes of a lane group hold one row of every block; the ``G =
  k / E`` lane groups split the k values in runs of ``c`` consecutive k::

      A_b[i][kk]  -> lane = i + m*b + P*g,  element = c*(kk // (c*G)) + kk % c,  g = (kk // c) % G
      B_b[kk][j]  -> lane = j + n*b + P*g,  same element

  With ``c = E`` (every gfx9 MFMA but the fp8/bf8 operands of the gfx950
  ``_f8f6f4`` forms, and RDNA4 fp8) this is ``lane = i + m*b + P*(kk // E),
  element = kk % E``.  When ``P * G`` is less than the wave (RDNA3) the
  rest of the wave repeats the first ``P * G`` lanes (``replicas`` copies).

* **C and D** (source 2 and the destination).  Rows come in groups of ``H``
  consecutive rows, one row per register; the ``R = wave / n`` lane groups
  of n lanes each hold one such group, group t of a block in lane group
  ``t % R`` of register set ``t // R``; when a block has fewer row groups
  than R (gfx9 4x4 shapes), ``S = R / (m / H)`` blocks share a register set::

      D_b[i][j]   -> lane = j + n*(b % S) + n*S*((i // H) % R),
                     element = H*((b // S)*ceil(m/H/R) + (i // H) // R) + i % H

  H = 4 (gfx9, 32-bit results), 1 (gfx9 f64; RDNA3), 8 (RDNA4).  One
  32-bit register per element, a pair for f64; 16-bit results (WMMA f16 D)
  sit in the low half of one register each on RDNA3 (OPSEL = 0) and two to
  a register on RDNA4 (``out_slot_bits`` 32 and 16).

* **Scales** (``v_mfma_scale_*``, gfx950): one E8M0 per 32 k per row of A
  (column of B), in bits [7:0] of one 32-bit operand per lane (OPSEL = 0):
  scale (i, kb) of A in lane ``i + m*kb``, scale (kb, j) of B in lane ``j + n*kb``.

Sources, by family (each pinned by spot checks in ``tests/test_hw_hip.py``):

* gfx908/gfx90a/gfx942 MFMA: the AMD Matrix Instruction Calculator (github
  ROCm/amd_matrix_instruction_calculator, ``matrix_calculator.py``: the
  per-instruction ``blocks`` of ``dict_insts`` and its gfx9 register-lane
  mapping; AMD's tool for the layouts the CDNA1/2/3 ISA guides tabulate;
  the guides themselves were not read for this file), whose
  ``--register-layout`` agrees with the rule above for all 64 (arch,
  instruction) pairs, and github amd/amd-lab-notes ``matrix-cores/src/*.cpp``
  (e.g. ``mfma_fp64_4x4x4fp64.cpp``: A lane = i + 4b + 16k; D lane = j + 4b + 16i).
* gfx950 (CDNA4; the calculator has no CDNA4 tables): it keeps the CDNA3
  forms and their layouts (github ROCm/rocm-blogs
  ``blogs/software-tools-optimization/matrix-cores-cdna/README.md``,
  "Matrix Core Programming on AMD CDNA3 and CDNA4 architecture": its
  32x32x16 fp8 kernel is the CDNA3 layout).  ``16x16x32``/``32x32x16``
  f16/bf16: the rule with E = 8 (github carlushuang/gcnasm
  ``matrix_core_gfx950/matrix_core.cc``, ``matrix_core_kernel_standard``:
  lane l holds row l % 32, k = 8*(l // 32) + e, of v_mfma_f32_32x32x16_f16;
  ROCm/composable_kernel ``include/ck/tensor_operation/gpu/warp/xdlops_gemm.hpp``,
  ``mfma_type<mfma_f32_16x16x32f16>``: 16 lanes per block, 4 input blocks,
  8 k per lane).  ``_f8f6f4`` and ``v_mfma_scale_*``: ROCm/composable_kernel
  ``test/mx_mfma_op/mx_mfma_op.hpp`` (register-mapping tables of
  ``load_A_row_major`` / ``load_B_col_major`` / ``load_mx_A_row_major``:
  fp8 in runs of 16, k = 16*g + 16*G*(e // 16) + e % 16; fp6 and fp4 32
  consecutive k per lane, k = 32*g + e, in 6 resp. 4 registers; scale x(i, kb)
  in lane i + m*kb), its recorded hardware output
  ``test/mx_mfma_op/scale_mapping_16x16x128.txt`` (which lane's scale
  multiplies which A register element), ``include/ck/utility/data_type.hpp``
  (``f6_pk_t::pack``: fp6 element i at bits [6i+5:6i] of the packed dwords;
  ``f4x2_pk_t``: element 0 in the low nibble) and the rocm-blogs post above
  (its 32x32x64 fp8 and fp4 kernels, E8M0 127 = 2^0).  Mixed-format pairs
  take each operand's own layout (CBSZ picks A's, BLGP B's; CK's loaders
  are per operand type).
* gfx11 / gfx12 WMMA (wave32): the calculator, arch ``rdna3`` / ``rdna4``
  (``--detail-instruction --wavefront 32``): RDNA3 A[i][k] in lanes i and
  i + 16, element k; D row 2*gpr + lane // 16 (the calculator is where
  GPUOpen's "How to accelerate AI applications on RDNA 3 using WMMA"
  sends readers for the mappings); RDNA4 f16/bf16
  k = 8*(e // 4) + 4*(lane // 16) + e % 4, fp8 k = 8*(lane // 16) + e, D
  row 8*(lane // 16) + gpr (f32) or + 2*gpr + half (f16).

For the unscaled forms these sources fix the k order only up to a
permutation shared by A and B (which no product shows); the models read k
in this order, and the ``hw survey`` suites settle it on hardware.  Nothing
here has been checked on an AMD GPU by this project.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Callable, Optional

import numpy as np

from ..errors import UnknownNameError, choices
from ..isa import SHAPES, InstrShape

__all__ = ["MfmaLayout", "LAYOUTS", "layout", "WAVE", "element_bits", "type_tag", "F8F6F4_FORMATS", "SCALE_BLOCK"]

#: Lanes of a gfx9 wavefront (RDNA WMMA layouts have ``wave = 32``).
WAVE = 64

#: k values per E8M0 scale of the gfx950 ``v_mfma_scale_*`` forms.
SCALE_BLOCK = 32

#: Width in bits of one A/B element in the source registers, by the type tag of the mnemonic.
_ELEMENT_BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "f64": 64, "fp8": 8, "bf8": 8, "f8f6f4": 8}

#: gfx950 ``_f8f6f4`` operand formats: format -> (CBSZ/BLGP code, bits per element, k per run in a lane).
F8F6F4_FORMATS = {"e4m3": (0, 8, 16), "e5m2": (1, 8, 16), "e2m3": (2, 6, 32), "e3m2": (3, 6, 32), "e2m1": (4, 4, 32)}


@dataclass(frozen=True)
class MfmaLayout:
    """Register layout of one MFMA / WMMA mnemonic (see the module docstring for the rules).

    ``m``, ``n``, ``k``: one block's shape; ``blocks``: independent products
    per instruction; ``in_bits`` / ``b_bits``: width of one A / B element in
    the source registers (``b_bits`` 0: as A); ``out_bits``: width of one
    C/D element (16, 32 or 64) and ``out_slot_bits`` the register bits it
    takes (0: ``out_bits``); ``wave``: lanes (64 MFMA, 32 WMMA);
    ``replicas``: copies of the A/B lanes across the wave; ``a_run`` /
    ``b_run``: consecutive k per run in a lane (0: all of them); ``d_rows``:
    H (0: 4, or 1 for 64-bit results); ``cbsz`` / ``blgp``: A / B format
    codes of the ``_f8f6f4`` forms; ``scale_block``: k per E8M0 scale (0:
    unscaled); ``source``: where the layout is documented.
    """

    name: str
    m: int
    n: int
    k: int
    blocks: int
    in_bits: int
    out_bits: int
    source: str
    b_bits: int = 0
    wave: int = WAVE
    replicas: int = 1
    a_run: int = 0
    b_run: int = 0
    d_rows: int = 0
    out_slot_bits: int = 0
    cbsz: int = 0
    blgp: int = 0
    scale_block: int = 0

    @property
    def shape(self) -> InstrShape:
        """The instruction's :class:`InstrShape` (one block's m, n, k)."""
        return InstrShape(self.name, self.m, self.n, self.k)

    @property
    def family(self) -> str:
        """``wmma`` (RDNA, wave32) or ``mfma`` (gfx9)."""
        return "wmma" if self.name.startswith("v_wmma_") else "mfma"

    @property
    def f8f6f4(self) -> bool:
        """True for the gfx950 forms whose A/B formats are the CBSZ/BLGP operands."""
        return self.name.endswith("_f8f6f4")

    @property
    def a_bits(self) -> int:
        """Width in bits of one A element in its registers."""
        return self.in_bits

    @property
    def b_elem_bits(self) -> int:
        """Width in bits of one B element in its registers."""
        return self.b_bits or self.in_bits

    @property
    def in_per_lane(self) -> int:
        """A (and B) elements each lane holds: ``m * blocks * k * replicas / wave``."""
        return self.m * self.blocks * self.k * self.replicas // self.wave

    @property
    def out_per_lane(self) -> int:
        """C (and D) elements each lane holds: ``m * n * blocks / wave``."""
        return self.m * self.n * self.blocks // self.wave

    @property
    def out_slot(self) -> int:
        """Register bits between consecutive C/D elements of a lane."""
        return self.out_slot_bits or self.out_bits

    @property
    def _rows_per_reg(self) -> int:  # H
        return self.d_rows or (4 if self.out_bits == 32 else 1)

    # ------------------------------------------------------------ element -> (lane, element)

    def _in_slot(self, row: int, kk: int, run: int) -> tuple[int, int]:
        E = self.in_per_lane
        c = run or E
        G = self.k // E
        g = (kk // c) % G
        return row + self.m * self.blocks * g, c * (kk // (c * G)) + kk % c

    def a_slot(self, block: int, i: int, kk: int) -> tuple[int, int]:
        """(lane, element) holding A_block[i][kk] (the lowest lane when the wave repeats it)."""
        return self._in_slot(i + self.m * block, kk, self.a_run)

    def b_slot(self, block: int, kk: int, j: int) -> tuple[int, int]:
        """(lane, element) holding B_block[kk][j] (the lowest lane when the wave repeats it)."""
        return self._in_slot(j + self.n * block, kk, self.b_run)

    def d_slot(self, block: int, i: int, j: int) -> tuple[int, int]:
        """(lane, element) holding C_block[i][j] on input and D_block[i][j] on output."""
        H = self._rows_per_reg
        R = self.wave // self.n  # lane groups of n lanes
        groups = self.m // H  # row groups of one block
        S = max(1, R // groups)  # blocks sharing one register (4x4 shapes)
        regs_per_block = -(-groups // R)
        t = i // H
        lane = j + self.n * (block % S) + self.n * S * (t % R)
        elem = H * ((block // S) * regs_per_block + t // R) + i % H
        return lane, elem

    def scale_a_lane(self, i: int, kb: int) -> int:
        """Lane whose scale operand (bits [7:0]) holds A's scale for row i, k block kb (v_mfma_scale only)."""
        return i + self.m * kb

    def scale_b_lane(self, kb: int, j: int) -> int:
        """Lane whose scale operand (bits [7:0]) holds B's scale for k block kb, column j (v_mfma_scale only)."""
        return j + self.n * kb

    # ------------------------------------------------------------ (lane, element) -> element

    @cached_property
    def a_table(self) -> np.ndarray:
        """(wave, E, 3) int array: ``a_table[lane, e] = (block, i, kk)`` of the A element there."""
        return self._invert(lambda b, r, kk: self.a_slot(b, r, kk), self.m, self.k, self.in_per_lane, self.replicas)

    @cached_property
    def b_table(self) -> np.ndarray:
        """(wave, E, 3) int array: ``b_table[lane, e] = (block, kk, j)`` of the B element there."""
        t = self._invert(lambda b, c, kk: self.b_slot(b, kk, c), self.n, self.k, self.in_per_lane, self.replicas)
        return t[:, :, [0, 2, 1]]

    @cached_property
    def d_table(self) -> np.ndarray:
        """(wave, Ed, 3) int array: ``d_table[lane, e] = (block, i, j)`` of the C/D element there."""
        return self._invert(self.d_slot, self.m, self.n, self.out_per_lane, 1)

    @cached_property
    def scale_table(self) -> np.ndarray:
        """(wave, 2) int array: ``scale_table[lane] = (row of A = column of B, k block)`` of the lane's scales."""
        if not self.scale_block:
            raise AssertionError(f"{self.name} takes no scales")
        nkb = self.k // self.scale_block
        out = np.full((self.wave, 2), -1, dtype=np.int64)
        for kb in range(nkb):
            for r in range(self.m):
                lane = self.scale_a_lane(r, kb)
                if out[lane, 0] >= 0 or self.scale_b_lane(kb, r) != lane:
                    raise AssertionError(f"{self.name}: scale layout is not a bijection at ({r}, {kb})")
                out[lane] = (r, kb)
        if (out < 0).any():
            raise AssertionError(f"{self.name}: scale layout leaves lanes unused")
        return out

    def _invert(self, slot: Callable[..., tuple], rows: int, cols: int, per_lane: int, replicas: int) -> np.ndarray:
        """(wave, per_lane, 3) table of ``slot`` inverted; ``slot`` is applied to whole index arrays at once."""
        grid = np.meshgrid(np.arange(self.blocks), np.arange(rows), np.arange(cols), indexing="ij")
        b, r, c = (x.ravel() for x in grid)
        lane0, e = (np.asarray(x, dtype=np.int64) for x in slot(b, r, c))
        stride = self.wave // replicas
        if lane0.min() < 0 or lane0.max() >= stride or e.min() < 0 or e.max() >= per_lane:
            raise AssertionError(f"{self.name}: layout maps outside {stride} lanes x {per_lane} elements")
        lanes = (lane0[None, :] + stride * np.arange(replicas)[:, None]).ravel()
        flat = lanes * per_lane + np.tile(e, replicas)
        if len(np.unique(flat)) != len(flat) or len(flat) != self.wave * per_lane:
            raise AssertionError(f"{self.name}: layout is not a bijection onto its register slots")
        out = np.empty((self.wave * per_lane, 3), dtype=np.int64)
        out[flat] = np.tile(np.stack([b, r, c], axis=1), (replicas, 1))
        return out.reshape(self.wave, per_lane, 3)


def type_tag(name: str) -> str:
    """The A/B type tag of the mnemonic ``name``: f32, xf32, f16, bf16, f64, fp8, bf8 (B's type for mixes) or f8f6f4."""
    tag = name.strip().lower().removesuffix("_1k").rsplit("_", 1)[-1]
    tag = tag.split("x")[-1].lstrip("0123456789") if tag[:1].isdigit() else tag
    if tag not in _ELEMENT_BITS:
        raise UnknownNameError(f"{name}: unknown MFMA element type {tag!r}; valid: {choices(_ELEMENT_BITS)}")
    return tag


def element_bits(name: str) -> int:
    """Width in bits of one A/B element of the mnemonic ``name`` in its source registers (f8f6f4: fp8's 8)."""
    return _ELEMENT_BITS[type_tag(name)]


# One row per gfx9 MFMA mnemonic of smtmma.isa.SHAPES (gfx908, gfx90a, gfx942, gfx950): (name, blocks, source).
# The calculator = ROCm/amd_matrix_instruction_calculator matrix_calculator.py, arch cdna1/2/3: its
# dict_insts gives the block count and its gfx9 register mapping the layout; "ISA1/2/3" = the CDNA1/2/3 ISA
# guide the calculator transcribes (not read directly); "labnotes X" = amd/amd-lab-notes
# matrix-cores/src/X.cpp, a worked example of the same layout.
_CALC = "ROCm/amd_matrix_instruction_calculator matrix_calculator.py"
_ROWS: tuple[tuple[str, int, str], ...] = (
    # ---- CDNA1 / CDNA2 (gfx908, gfx90a) fp32
    ("v_mfma_f32_32x32x1f32", 2, f"{_CALC} cdna1/cdna2 (2 blocks); ISA1/2; labnotes mfma_fp32_32x32x1fp32"),
    ("v_mfma_f32_32x32x2f32", 1, f"{_CALC} cdna1/cdna2; ISA1/2; labnotes mfma_fp32_32x32x2fp32"),
    ("v_mfma_f32_16x16x1f32", 4, f"{_CALC} cdna1/cdna2 (4 blocks); ISA1/2; labnotes mfma_fp32_16x16x1fp32"),
    ("v_mfma_f32_16x16x4f32", 1, f"{_CALC} cdna1/cdna2; ISA1/2; labnotes mfma_fp32_16x16x4fp32"),
    ("v_mfma_f32_4x4x1f32", 16, f"{_CALC} cdna1/cdna2 (16 blocks); ISA1/2; labnotes mfma_fp32_4x4x1fp32"),
    # ---- CDNA1 / CDNA2 fp16 (4 per lane)
    ("v_mfma_f32_32x32x4f16", 2, f"{_CALC} cdna1/cdna2 (2 blocks); ISA1/2; labnotes mfma_fp32_32x32x4fp16"),
    ("v_mfma_f32_32x32x8f16", 1, f"{_CALC} cdna1/cdna2; ISA1/2; labnotes mfma_fp32_32x32x8fp16"),
    ("v_mfma_f32_16x16x4f16", 4, f"{_CALC} cdna1/cdna2 (4 blocks); ISA1/2; labnotes mfma_fp32_16x16x4fp16"),
    ("v_mfma_f32_16x16x16f16", 1, f"{_CALC} cdna1/cdna2; ISA1/2; labnotes mfma_fp32_16x16x16fp16"),
    ("v_mfma_f32_4x4x4f16", 16, f"{_CALC} cdna1/cdna2 (16 blocks); ISA1/2; labnotes mfma_fp32_4x4x4fp16"),
    # ---- CDNA1 / CDNA2 bf16, original forms (2 per lane, one VGPR)
    ("v_mfma_f32_32x32x2bf16", 2, f"{_CALC} cdna1/cdna2 (2 blocks, bf16 x2 per VGPR); ISA1/2"),
    ("v_mfma_f32_32x32x4bf16", 1, f"{_CALC} cdna1/cdna2 (bf16 x2 per VGPR); ISA1/2"),
    ("v_mfma_f32_16x16x2bf16", 4, f"{_CALC} cdna1/cdna2 (4 blocks, bf16 x2 per VGPR); ISA1/2"),
    ("v_mfma_f32_16x16x8bf16", 1, f"{_CALC} cdna1/cdna2 (bf16 x2 per VGPR); ISA1/2"),
    ("v_mfma_f32_4x4x2bf16", 16, f"{_CALC} cdna1/cdna2 (16 blocks, bf16 x2 per VGPR); ISA1/2"),
    # ---- CDNA2 bf16_1k (4 per lane, a VGPR pair)
    ("v_mfma_f32_32x32x4bf16_1k", 2, f"{_CALC} cdna2 (2 blocks, bf16 x4 per VGPR pair); ISA2"),
    ("v_mfma_f32_32x32x8bf16_1k", 1, f"{_CALC} cdna2 (bf16 x4 per VGPR pair); ISA2"),
    ("v_mfma_f32_16x16x4bf16_1k", 4, f"{_CALC} cdna2 (4 blocks, bf16 x4 per VGPR pair); ISA2"),
    ("v_mfma_f32_16x16x16bf16_1k", 1, f"{_CALC} cdna2 (bf16 x4 per VGPR pair); ISA2"),
    ("v_mfma_f32_4x4x4bf16_1k", 16, f"{_CALC} cdna2 (16 blocks, bf16 x4 per VGPR pair); ISA2"),
    # ---- CDNA2 fp64 (one double per lane; D in VGPR pairs)
    ("v_mfma_f64_16x16x4f64", 1, f"{_CALC} cdna2; ISA2; labnotes mfma_fp64_16x16x4fp64"),
    ("v_mfma_f64_4x4x4f64", 4, f"{_CALC} cdna2 (4 blocks); ISA2; labnotes mfma_fp64_4x4x4fp64"),
    # ---- CDNA3 (gfx942): the CDNA2 layouts under the new names
    ("v_mfma_f64_16x16x4_f64", 1, f"{_CALC} cdna3; ISA3"),
    ("v_mfma_f64_4x4x4_4b_f64", 4, f"{_CALC} cdna3 (4 blocks); ISA3"),
    ("v_mfma_f32_32x32x1_2b_f32", 2, f"{_CALC} cdna3 (2 blocks); ISA3"),
    ("v_mfma_f32_32x32x2_f32", 1, f"{_CALC} cdna3; ISA3"),
    ("v_mfma_f32_16x16x1_4b_f32", 4, f"{_CALC} cdna3 (4 blocks); ISA3"),
    ("v_mfma_f32_16x16x4_f32", 1, f"{_CALC} cdna3; ISA3"),
    ("v_mfma_f32_4x4x1_16b_f32", 16, f"{_CALC} cdna3 (16 blocks); ISA3"),
    # xf32: two fp32 containers (tf32 in the top 19 bits) per lane, a VGPR pair
    ("v_mfma_f32_32x32x4_xf32", 1, f"{_CALC} cdna3 (xf32 x2 per VGPR pair); ISA3"),
    ("v_mfma_f32_16x16x8_xf32", 1, f"{_CALC} cdna3 (xf32 x2 per VGPR pair); ISA3"),
    ("v_mfma_f32_32x32x4_2b_f16", 2, f"{_CALC} cdna3 (2 blocks); ISA3"),
    ("v_mfma_f32_32x32x8_f16", 1, f"{_CALC} cdna3; ISA3"),
    ("v_mfma_f32_16x16x4_4b_f16", 4, f"{_CALC} cdna3 (4 blocks); ISA3"),
    ("v_mfma_f32_16x16x16_f16", 1, f"{_CALC} cdna3; ISA3"),
    ("v_mfma_f32_4x4x4_16b_f16", 16, f"{_CALC} cdna3 (16 blocks); ISA3"),
    # CDNA3 bf16 is the CDNA2 _1k layout (4 per lane)
    ("v_mfma_f32_32x32x4_2b_bf16", 2, f"{_CALC} cdna3 (2 blocks, bf16 x4 per VGPR pair); ISA3"),
    ("v_mfma_f32_32x32x8_bf16", 1, f"{_CALC} cdna3 (bf16 x4 per VGPR pair); ISA3"),
    ("v_mfma_f32_16x16x4_4b_bf16", 4, f"{_CALC} cdna3 (4 blocks, bf16 x4 per VGPR pair); ISA3"),
    ("v_mfma_f32_16x16x16_bf16", 1, f"{_CALC} cdna3 (bf16 x4 per VGPR pair); ISA3"),
    ("v_mfma_f32_4x4x4_16b_bf16", 16, f"{_CALC} cdna3 (16 blocks, bf16 x4 per VGPR pair); ISA3"),
    # fp8/bf8: eight bytes per lane in a VGPR pair, byte e = k within the lane's group
    *(
        (f"v_mfma_f32_{mnk}_{a}_{b}", 1, f"{_CALC} cdna3 ({a}/{b} x8 per VGPR pair); ISA3")
        for a in ("fp8", "bf8")
        for b in ("fp8", "bf8")
        for mnk in ("32x32x16", "16x16x32")
    ),
)


# gfx950 (CDNA4) additions: the double-rate f16/bf16 forms (the rule, E = 8) and the f8f6f4 forms (fp8 x fp8
# here; :func:`layout` with an instruction type gives the other format pairs).  "CK" = ROCm/composable_kernel.
_CK_F8F6F4 = ("CK test/mx_mfma_op/mx_mfma_op.hpp (register-mapping tables), data_type.hpp (f6/f4 packing); "
              "ROCm/rocm-blogs matrix-cores-cdna/README.md")
_GFX950_ROWS: tuple[tuple[str, int, str], ...] = (
    ("v_mfma_f32_16x16x32_f16", 1, "CK xdlops_gemm.hpp mfma_type<mfma_f32_16x16x32f16> (8 k per lane, 4 lane groups)"),
    ("v_mfma_f32_32x32x16_f16", 1, "carlushuang/gcnasm matrix_core_gfx950/matrix_core.cc (k = 8*(lane//32) + e); "
                                   "CK xdlops_gemm.hpp mfma_type<mfma_f32_32x32x16f16>"),
    ("v_mfma_f32_16x16x32_bf16", 1, "CK xdlops_gemm.hpp mfma_type<mfma_f32_16x16x32bf16> (as the f16 form)"),
    ("v_mfma_f32_32x32x16_bf16", 1, "CK xdlops_gemm.hpp mfma_type<mfma_f32_32x32x16bf16> (as the f16 form)"),
    ("v_mfma_f32_16x16x128_f8f6f4", 1, _CK_F8F6F4),
    ("v_mfma_f32_32x32x64_f8f6f4", 1, _CK_F8F6F4),
    ("v_mfma_scale_f32_16x16x128_f8f6f4", 1, _CK_F8F6F4 + "; CK test/mx_mfma_op/scale_mapping_16x16x128.txt (scales)"),
    ("v_mfma_scale_f32_32x32x64_f8f6f4", 1, _CK_F8F6F4 + "; CK mx_mfma_op.hpp load_mx_A_row_major (scales)"),
)

_CALC_RDNA = "ROCm/amd_matrix_instruction_calculator matrix_calculator.py {} --detail-instruction --wavefront 32"
# (arch, name, A/B bits, C/D bits): RDNA3 repeats A/B in both lane halves and has D rows 2*gpr + lane//16 (H = 1), one
# f16 result per register (OPSEL = 0); RDNA4 splits k between the lane halves (f16/bf16 in runs of 4) and has D rows
# 8*(lane//16) + element (H = 8), two f16 results per register.
_WMMA_ROWS: tuple[tuple[str, str, int, int], ...] = (
    ("gfx11", "v_wmma_f32_16x16x16_f16", 16, 32),
    ("gfx11", "v_wmma_f32_16x16x16_bf16", 16, 32),
    ("gfx11", "v_wmma_f16_16x16x16_f16", 16, 16),
    ("gfx12", "v_wmma_f32_16x16x16_f16", 16, 32),
    ("gfx12", "v_wmma_f32_16x16x16_bf16", 16, 32),
    ("gfx12", "v_wmma_f16_16x16x16_f16", 16, 16),
    *(("gfx12", f"v_wmma_f32_16x16x16_{a}_{b}", 8, 32) for a in ("fp8", "bf8") for b in ("fp8", "bf8")),
)


def _mnk(name: str) -> tuple[int, int, int]:
    """(m, n, k) of one block, as :mod:`smtmma.isa` reads them from the name."""
    for fam in SHAPES.values():
        for shapes_by_op in fam.values():
            for shapes in shapes_by_op.values():
                for s in shapes:
                    if s.name == name:
                        return s.m, s.n, s.k
    raise AssertionError(f"{name} is not in smtmma.isa.SHAPES")


def _gfx9() -> dict[str, MfmaLayout]:
    out: dict[str, MfmaLayout] = {}
    for name, blocks, source in _ROWS + _GFX950_ROWS:
        m, n, k = _mnk(name)
        out_bits = 64 if name.startswith("v_mfma_f64") else 32
        lay = MfmaLayout(name, m, n, k, blocks, element_bits(name), out_bits, source)
        if lay.f8f6f4:
            lay = _with_formats(lay, "e4m3", "e4m3")
        out[name] = lay
    return out


def _wmma() -> dict[tuple[str, str], MfmaLayout]:
    out: dict[tuple[str, str], MfmaLayout] = {}
    for arch, name, in_bits, out_bits in _WMMA_ROWS:
        m, n, k = _mnk(name)
        rdna3 = arch == "gfx11"
        src = _CALC_RDNA.format("rdna3" if rdna3 else "rdna4")
        run = 0 if rdna3 or in_bits == 8 else 4
        slot = 32 if rdna3 and out_bits == 16 else 0
        out[(arch, name)] = MfmaLayout(name, m, n, k, 1, in_bits, out_bits, src, wave=32, replicas=2 if rdna3 else 1,
                                       a_run=run, b_run=run, d_rows=1 if rdna3 else 8, out_slot_bits=slot)
    return out


def _with_formats(base: MfmaLayout, a_fmt: str, b_fmt: str) -> MfmaLayout:
    """The ``_f8f6f4`` layout ``base`` with A in ``a_fmt`` and B in ``b_fmt`` (CBSZ, BLGP, widths, runs)."""
    try:
        (ca, wa, ra), (cb, wb, rb) = F8F6F4_FORMATS[a_fmt], F8F6F4_FORMATS[b_fmt]
    except KeyError:
        raise UnknownNameError(f"{base.name}: no operand format {a_fmt if a_fmt not in F8F6F4_FORMATS else b_fmt!r}; "
                               f"valid: {choices(F8F6F4_FORMATS)}") from None
    scaled = SCALE_BLOCK if base.name.startswith("v_mfma_scale_") else 0
    return replace(base, in_bits=wa, b_bits=wb, a_run=ra, b_run=rb, cbsz=ca, blgp=cb, scale_block=scaled)


_GFX9 = _gfx9()
_WMMA = _wmma()


def _for_arch(arch: str, name: str) -> Optional[MfmaLayout]:
    return _WMMA.get((arch, name)) if name.startswith("v_wmma_") else _GFX9.get(name)


#: Every AMD (architecture, mnemonic) of :data:`smtmma.isa.SHAPES`; ``_f8f6f4`` forms in their e4m3 x e4m3 layout.
LAYOUTS: dict[tuple[str, str], MfmaLayout] = {
    (arch, s.name): lay
    for arch, fams in SHAPES.items() if arch.startswith("gfx")
    for by_op in fams.values() for shapes in by_op.values() for s in shapes
    if (lay := _for_arch(arch, s.name)) is not None
}


def layout(name: str, arch: Optional[str] = None, instr: Optional[str] = None) -> MfmaLayout:
    """The :class:`MfmaLayout` of the mnemonic ``name`` (lower case, as in :data:`smtmma.isa.SHAPES`).

    ``arch`` is needed where architectures differ (WMMA: gfx11, gfx12);
    ``instr`` (a catalogue instruction type) picks the A/B formats of the
    gfx950 ``_f8f6f4`` forms (default e4m3 x e4m3) and is ignored otherwise.
    """
    key = name.strip().lower()
    hits = {a: lay for (a, n), lay in LAYOUTS.items() if n == key and (arch is None or a == arch)}
    if not hits:
        where = f" on {arch}" if arch else ""
        names = sorted({n for (a, n) in LAYOUTS if arch is None or a == arch})
        raise UnknownNameError(f"no MFMA/WMMA layout for {name!r}{where}; valid: {choices(names)}")
    lays = set(hits.values())
    if len(lays) > 1:
        raise UnknownNameError(f"{key}: the layout differs between {', '.join(sorted(hits))}; name the architecture")
    lay = lays.pop()
    return _formats_of(lay, instr) if instr and lay.f8f6f4 else lay


@lru_cache(maxsize=None)
def _formats_of(lay: MfmaLayout, instr: str) -> MfmaLayout:
    from ..catalogue import INSTRS  # catalogue is above hw; imported late to keep this module light

    if instr not in INSTRS:
        raise UnknownNameError(f"unknown instruction type {instr!r}; valid: {choices(INSTRS)}")
    i = INSTRS[instr]
    return _with_formats(lay, i.a_fmt, i.b_fmt)
