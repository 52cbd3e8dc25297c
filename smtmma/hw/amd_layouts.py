"""MFMA register layouts: which lane, and which element of its A/B/C/D registers, holds which matrix element.

An MFMA is a wavefront instruction: 64 lanes each hold a slice of A, B and
C and receive a slice of D.  One instruction computes ``blocks`` independent
products ``D_b = A_b B_b + C_b`` of one block's shape (m x k) x (k x n),
``b = 0 .. blocks - 1`` (:class:`smtmma.isa.InstrShape` carries one block's
m, n, k).  With the broadcast controls CBSZ = ABID = BLGP = 0 (the only
setting smtmma uses) every gfx9 MFMA follows one rule, stated here once:

* **A and B** (sources 0 and 1).  Each lane holds ``E = m * blocks * k / 64``
  consecutive k values of one row of A_b (one column of B_b), packed in its
  source register(s) from the lowest bits up: element ``e`` of the lane is
  bits ``[w*e + w-1 : w*e]`` of the register tuple, ``w`` the element width
  (f16/bf16: 16, fp8/bf8: 8, f32/xf32: 32, f64: 64).  Lanes are filled row
  (column) first, then block, then k group::

      A_b[i][kk]  -> lane = i + m*b + m*blocks*(kk // E),  element kk % E
      B_b[kk][j]  -> lane = j + n*b + n*blocks*(kk // E),  element kk % E

* **C and D** (source 2 and the destination, one register per element for
  32-bit results, a register pair for f64).  Rows come in groups of
  ``H = 4`` (32-bit) or ``H = 1`` (64-bit) consecutive rows, one row per
  register; the ``R = 64 / n`` lane groups of n lanes each hold one such
  group of rows, group t of a block in lane group ``t % R`` of register
  set ``t // R``; when a block has fewer row groups than R (4x4 shapes),
  ``S = R / (m / H)`` blocks share one register set, row group t of block
  b in lane group ``b % S + S * t``::

      D_b[i][j]   -> lane = j + n*(b % S) + n*S*((i // H) % R),
                     element = H*((b // S)*ceil(m/H/R) + (i // H) // R) + i % H

  where S = max(1, R // (m / H)).

Sources: the AMD Matrix Instruction Calculator (github
ROCm/amd_matrix_instruction_calculator, ``matrix_calculator.py``: the
per-instruction ``blocks`` of ``dict_insts`` and its gfx9 input/output
register-lane mapping, AMD's tool for the layouts the CDNA1/2/3 ISA
reference guides ("AMD Instinct MI100/MI200/MI300 Instruction Set
Architecture", matrix arithmetic chapter) tabulate; the guides themselves
were not read for this file), whose ``--register-layout`` output agrees
with this rule element for element for all 64 (architecture, instruction)
pairs below (checked when this module was written; spot checks are in
``tests/test_hw_hip.py``); and the worked examples of github
amd/amd-lab-notes ``matrix-cores/src/*.cpp`` (e.g. ``mfma_fp64_4x4x4fp64.cpp``:
A lane = i + 4b + 16k; D lane = j + 4b + 16i).

Nothing here has been checked on an AMD GPU by this project.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import UnknownNameError, choices
from ..isa import SHAPES, InstrShape

__all__ = ["MfmaLayout", "LAYOUTS", "layout", "WAVE", "element_bits", "type_tag"]

#: Lanes of a gfx9 wavefront.
WAVE = 64

#: Width in bits of one A/B element in the source registers, by the type tag of the mnemonic.
_ELEMENT_BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "f64": 64, "fp8": 8, "bf8": 8}


@dataclass(frozen=True)
class MfmaLayout:
    """Register layout of one MFMA mnemonic (CBSZ = ABID = BLGP = 0).

    ``m``, ``n``, ``k``: one block's shape; ``blocks``: independent products
    per instruction; ``in_bits``: width of one A/B element in the source
    registers; ``out_bits``: width of one C/D element (32 or 64);
    ``source``: where the layout (and the block count) is documented.
    """

    name: str
    m: int
    n: int
    k: int
    blocks: int
    in_bits: int
    out_bits: int
    source: str

    @property
    def shape(self) -> InstrShape:
        """The instruction's :class:`InstrShape` (one block's m, n, k)."""
        return InstrShape(self.name, self.m, self.n, self.k)

    @property
    def in_per_lane(self) -> int:
        """A (and B) elements each lane holds: ``m * blocks * k / 64``."""
        return self.m * self.blocks * self.k // WAVE

    @property
    def out_per_lane(self) -> int:
        """C (and D) elements each lane holds: ``m * n * blocks / 64``."""
        return self.m * self.n * self.blocks // WAVE

    @property
    def _rows_per_reg(self) -> int:  # H
        return 4 if self.out_bits == 32 else 1

    # ------------------------------------------------------------ element -> (lane, element)

    def a_slot(self, block: int, i: int, kk: int) -> tuple[int, int]:
        """(lane, element) holding A_block[i][kk]."""
        E = self.in_per_lane
        return i + self.m * block + self.m * self.blocks * (kk // E), kk % E

    def b_slot(self, block: int, kk: int, j: int) -> tuple[int, int]:
        """(lane, element) holding B_block[kk][j]."""
        E = self.in_per_lane
        return j + self.n * block + self.n * self.blocks * (kk // E), kk % E

    def d_slot(self, block: int, i: int, j: int) -> tuple[int, int]:
        """(lane, element) holding C_block[i][j] on input and D_block[i][j] on output."""
        H = self._rows_per_reg
        R = WAVE // self.n  # lane groups of n lanes
        groups = self.m // H  # row groups of one block
        S = max(1, R // groups)  # blocks sharing one register (4x4 shapes)
        regs_per_block = -(-groups // R)
        t = i // H
        lane = j + self.n * (block % S) + self.n * S * (t % R)
        elem = H * ((block // S) * regs_per_block + t // R) + i % H
        return lane, elem

    # ------------------------------------------------------------ (lane, element) -> element

    @cached_property
    def a_table(self) -> np.ndarray:
        """(64, E, 3) int array: ``a_table[lane, e] = (block, i, kk)`` of the A element there."""
        return self._invert(lambda b, r, kk: self.a_slot(b, r, kk), self.m, self.k, self.in_per_lane)

    @cached_property
    def b_table(self) -> np.ndarray:
        """(64, E, 3) int array: ``b_table[lane, e] = (block, kk, j)`` of the B element there."""
        t = self._invert(lambda b, c, kk: self.b_slot(b, kk, c), self.n, self.k, self.in_per_lane)
        return t[:, :, [0, 2, 1]]

    @cached_property
    def d_table(self) -> np.ndarray:
        """(64, Ed, 3) int array: ``d_table[lane, e] = (block, i, j)`` of the C/D element there."""
        return self._invert(self.d_slot, self.m, self.n, self.out_per_lane)

    def _invert(self, slot, rows: int, cols: int, per_lane: int) -> np.ndarray:  # type: ignore[no-untyped-def]
        out = np.full((WAVE, per_lane, 3), -1, dtype=np.int64)
        for b in range(self.blocks):
            for r in range(rows):
                for c in range(cols):
                    lane, e = slot(b, r, c)
                    if not (0 <= lane < WAVE and 0 <= e < per_lane) or out[lane, e, 0] >= 0:
                        raise AssertionError(f"{self.name}: layout is not a bijection at block {b} ({r}, {c})")
                    out[lane, e] = (b, r, c)
        if (out < 0).any():
            raise AssertionError(f"{self.name}: layout leaves register slots unused")
        return out


def type_tag(name: str) -> str:
    """The A/B type tag of the MFMA mnemonic ``name``: f32, xf32, f16, bf16, f64, fp8 or bf8 (B's type for fp8/bf8 mixes)."""
    tag = name.strip().lower().removesuffix("_1k").rsplit("_", 1)[-1]
    tag = tag.split("x")[-1].lstrip("0123456789") if tag[:1].isdigit() else tag
    if tag not in _ELEMENT_BITS:
        raise UnknownNameError(f"{name}: unknown MFMA element type {tag!r}; valid: {choices(_ELEMENT_BITS)}")
    return tag


def element_bits(name: str) -> int:
    """Width in bits of one A/B element of the MFMA ``name`` in its source registers."""
    return _ELEMENT_BITS[type_tag(name)]


# One row per mnemonic of smtmma.isa.SHAPES (gfx908, gfx90a, gfx942): (name, blocks, source).
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


def _build() -> dict[str, MfmaLayout]:
    out: dict[str, MfmaLayout] = {}
    for name, blocks, source in _ROWS:
        m, n, k = _mnk(name)
        out_bits = 64 if name.startswith("v_mfma_f64") else 32
        out[name] = MfmaLayout(name, m, n, k, blocks, element_bits(name), out_bits, source)
    return out


def _mnk(name: str) -> tuple[int, int, int]:
    """(m, n, k) of one block, as :mod:`smtmma.isa` reads them from the name."""
    for fam in SHAPES.values():
        for shapes_by_op in fam.values():
            for shapes in shapes_by_op.values():
                for s in shapes:
                    if s.name == name:
                        return s.m, s.n, s.k
    raise AssertionError(f"{name} is not in smtmma.isa.SHAPES")


#: Every AMD MFMA of :data:`smtmma.isa.SHAPES`, by mnemonic.
LAYOUTS: dict[str, MfmaLayout] = _build()


def layout(name: str) -> MfmaLayout:
    """The :class:`MfmaLayout` of the MFMA mnemonic ``name`` (lower case, as in :data:`smtmma.isa.SHAPES`)."""
    try:
        return LAYOUTS[name.strip().lower()]
    except KeyError:
        raise UnknownNameError(f"no MFMA layout for {name!r}; valid: {choices(LAYOUTS)}") from None
