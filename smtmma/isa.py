"""What exists: the MMA instruction shapes each architecture offers.

Plain data.  ``SHAPES[arch][instr][family]`` lists the instructions that
compute ``instr`` (see :data:`smtmma.catalogue.INSTRS`) on ``arch`` through
the op family ``family``, each as an :class:`InstrShape` ``(name, m, n, k)``
where ``(m, n, k)`` is the matrix shape of one issue (for AMD multi-block
MFMAs: of one block, as written in the name).

Names:

* NVIDIA ``mma``: the PTX prefix ``mma.sync.aligned.mMnNkK``; where the PTX
  form needs a ``.kind`` (sm_120a) it is appended, and ``.block_scale`` for
  block-scaled kinds (the ``.row.col``, type and scale qualifiers are left
  out: they follow from the instruction type).
* NVIDIA ``wgmma``: ``wgmma.mma_async.sync.aligned.m64nNkK``.  N may be any
  multiple of 8 in 8..256; two representatives are listed (n=8 and n=256).
* NVIDIA ``tcgen05``: ``tcgen05.mma.cta_group::1.kind::KIND`` (plus
  ``.block_scale``); the shape is in the instruction descriptor, not the
  name, so one representative (m=128, n=256) is listed.
* AMD ``mfma`` / ``mfma_1k``: the ISA mnemonic, lower case (``v_mfma_...``);
  m, n, k are read from the name.

This module imports nothing from the package (the catalogue imports it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["InstrShape", "SHAPES"]


@dataclass(frozen=True)
class InstrShape:
    """One instruction: its assembly name and the (m, n, k) of one issue."""

    name: str
    m: int
    n: int
    k: int


# ---------------------------------------------------------------- helpers

_NV_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")
_AMD_SHAPE = re.compile(r"^v_(?:mfma|mfma_scale|wmma)_[a-z0-9]+_(\d+)x(\d+)x(\d+)")


def _mma(*shapes: str, suffix: str = "") -> tuple[InstrShape, ...]:
    """``mma.sync.aligned.<shape><suffix>`` for each PTX shape ``mMnNkK``."""
    out = []
    for s in shapes:
        m, n, k = map(int, _NV_SHAPE.fullmatch(s).groups())  # type: ignore[union-attr]
        out.append(InstrShape(f"mma.sync.aligned.{s}{suffix}", m, n, k))
    return tuple(out)


def _wgmma(k: int) -> tuple[InstrShape, ...]:
    """The n=8 and n=256 representatives of ``wgmma.mma_async`` m64nNkK."""
    return tuple(InstrShape(f"wgmma.mma_async.sync.aligned.m64n{n}k{k}", 64, n, k) for n in (8, 256))


def _tcgen05(kind: str, k: int, block_scale: bool = False) -> InstrShape:
    """``tcgen05.mma.cta_group::1.kind::<kind>``, representative M=128, N=256."""
    name = f"tcgen05.mma.cta_group::1.kind::{kind}" + (".block_scale" if block_scale else "")
    return InstrShape(name, 128, 256, k)


def _mfma(*names: str) -> tuple[InstrShape, ...]:
    """AMD MFMA / WMMA mnemonics; (m, n, k) from the ``MxNxK`` in the name."""
    out = []
    for name in names:
        m, n, k = map(int, _AMD_SHAPE.match(name).groups())  # type: ignore[union-attr]
        out.append(InstrShape(name, m, n, k))
    return tuple(out)


# ---------------------------------------------------------------- NVIDIA mma.sync
# PTX ISA, "Warp-level matrix instructions: mma" (docs.nvidia.com/cuda/
# parallel-thread-execution, section 9.7.14 in PTX 8.x/9.0), its syntax block
# and "Target ISA notes"; cross-checked against microsoft/MMA-Sim
# mmasim/isa/nv_mma.py (qualifier lists per architecture):
#   .f16  m8n8k4 (sm_70+), m16n8k8 (sm_75+), m16n8k16 (sm_80+); dtype/ctype
#         .f16 or .f32.  m8n8k4 is listed on sm70 and sm75 (microsoft/MMA-Sim
#         mmasim/isa/nv_ptx/nv_mma.py gives Turing the Volta qualifiers; ptxas of
#         CUDA 13 assembles it for sm_75 and later, optimised for sm_70 only);
#         m8n8k4 also takes .ctype .f16 with .dtype .f32 (instruction f16f32c16),
#         but not .ctype .f32 with .dtype .f16 ("dtype must be .f32 when ctype is
#         .f32", ptxas), and m16n8k8/k16 take dtype == ctype only.
#   .tf32 m16n8k4, m16n8k8 (sm_80+), f32 output.
#   .bf16 m16n8k8, m16n8k16 (sm_80+), f32 output.
#   .f64  m8n8k4 (sm_80+); m16n8k4, m16n8k8, m16n8k16 (sm_90+).
#   .e4m3/.e5m2 (any A/B combination) m16n8k32 (sm_89+, PTX 8.4) and
#         m16n8k16 (sm_89+, PTX 8.7); dtype/ctype .f32 or .f16 (.f16 from PTX 8.7).
#   .kind::f8f6f4 m16n8k32 (sm_120a): A and B each in {e4m3, e5m2, e3m2,
#         e2m3, e2m1} (any pair), dtype/ctype .f32 or .f16 (all 50 forms
#         assemble with ptxas 13.0).
#   .kind::mxf8f6f4.block_scale m16n8k32 (sm_120a): A and B each in the same
#         five types (any pair), ue8m0 scales, block 32, .f32 only (ptxas
#         refuses .f16: "Unexpected instruction types").
#   .kind::mxf4.block_scale m16n8k64 (sm_120a): e2m1, ue8m0, block 32.
#   .kind::mxf4nvf4.block_scale m16n8k64 (sm_120a): e2m1, ue8m0 block 32
#         (scale_vec::2X) or ue4m3 block 16 (scale_vec::4X) only.  MMA-Sim
#         (mmasim/isa/nv_ptx/nv_mma.py) also lists ue8m0 block 16 and ue4m3
#         block 32 for sm_120a; ptxas 13.0 refuses both ("Illegal modifier
#         .scale_vec::4X ... with type .ue8m0", "... .scale_vec::2X ... with
#         type .ue4m3") and the .block16/.block32 spellings on sm_120a, so
#         they are not listed (docs/semantics.md, "Instruction variants").

_F16_SM70 = _mma("m8n8k4")
_F16_SM75 = _mma("m16n8k8", "m8n8k4")
_F16_SM80 = _mma("m16n8k8", "m16n8k16")
_TF32 = _mma("m16n8k4", "m16n8k8")
_BF16 = _mma("m16n8k8", "m16n8k16")
_F64_SM80 = _mma("m8n8k4")
_F64_SM90 = _mma("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16")
_FP8 = _mma("m16n8k16", "m16n8k32")
_F8F6F4 = _mma("m16n8k32", suffix=".kind::f8f6f4")
_MXF8F6F4 = _mma("m16n8k32", suffix=".kind::mxf8f6f4.block_scale")
_MXF4 = _mma("m16n8k64", suffix=".kind::mxf4.block_scale")
_MXF4NVF4 = _mma("m16n8k64", suffix=".kind::mxf4nvf4.block_scale")

_F8 = ("e4m3", "e5m2")
_F6F4 = ("e2m3", "e3m2", "e2m1")
_FP8_INSTRS = tuple(f"{a}{b}{cd}" for a in _F8 for b in _F8 for cd in ("f32", "f16"))
#: .kind::f8f6f4 pairs with an fp6/fp4 operand (the fp8 x fp8 pairs are _FP8_INSTRS), .f32 and .f16 D.
_F6F4_INSTRS = tuple(f"{a}{b}{cd}" for a in _F8 + _F6F4 for b in _F8 + _F6F4 if a in _F6F4 or b in _F6F4
                     for cd in ("f32", "f16"))
#: .kind::mxf8f6f4: one name per (A, B) pair; mx{a}f32 when A and B share a type, mx{a}{b}f32 otherwise.
_MX_F8F6F4_INSTRS = tuple(f"mx{a}f32" if a == b else f"mx{a}{b}f32" for a in _F8 + _F6F4 for b in _F8 + _F6F4)


def _nv_mma_table(f16: tuple[InstrShape, ...], ampere: bool, f64: tuple[InstrShape, ...] = (),
                  fp8: tuple[InstrShape, ...] = ()) -> dict[str, tuple[InstrShape, ...]]:
    """instr -> mma shapes for one NVIDIA architecture."""
    t = {"f16f32": f16, "f16f16": f16}
    m8n8k4 = tuple(s for s in f16 if (s.m, s.n, s.k) == (8, 8, 4))
    if m8n8k4:  # fp16 C, fp32 D: the m8n8k4 form (listed where m8n8k4 is)
        t["f16f32c16"] = m8n8k4
    if ampere:
        t.update({"tf32f32": _TF32, "bf16f32": _BF16, "f64f64": f64})
    for instr in _FP8_INSTRS if fp8 else ():
        t[instr] = fp8
    return t


# ---------------------------------------------------------------- NVIDIA wgmma (sm_90a)
# PTX ISA, "Asynchronous warpgroup level matrix multiply-accumulate:
# wgmma.mma_async": shape m64nNkK, N in 8..256 step 8; K = 8 for .tf32,
# 16 for .f16/.bf16 (dtype .f16 or .f32; .bf16 only .f32), 32 for .e4m3/.e5m2
# (dtype .f16 or .f32).  Cross-checked with microsoft/MMA-Sim mmasim/isa/nv_wgmma.py.

_WGMMA_TF32 = _wgmma(8)
_WGMMA_F16 = _wgmma(16)
_WGMMA_FP8 = _wgmma(32)

# ---------------------------------------------------------------- NVIDIA tcgen05.mma (sm_100a)
# PTX ISA, "TensorCore 5th Generation: tcgen05.mma": .kind::tf32 K=8,
# .kind::f16 (f16/bf16) K=16, .kind::f8f6f4 K=32, .kind::mxf8f6f4 K=32,
# .kind::mxf4 and .kind::mxf4nvf4 K=64 (dense); cta_group::1 takes M=64 or 128
# with N in 8..256 step 8 (M=64) / 16..256 step 16 (M=128), cta_group::2 M=128
# or 256.  Cross-checked with microsoft/MMA-Sim mmasim/isa/nv_ptx/nv_tcgen05mma.py.
# Operand types are fields of the instruction descriptor, A's and B's apart:
#   .kind::f16: A, B each f16 or bf16 with f32 D (f16 x bf16 mixes: instructions
#         f16bf16f32, bf16f16f32; cutlass SM100_MMA_F16BF16_SS takes separate
#         a_type/b_type of 16 bits), f16 D only with f16 x f16 (MMA-Sim).
#   .kind::f8f6f4: A, B each in {e4m3, e5m2, e3m2, e2m3, e2m1}, f32 or f16 D.
#   .kind::mxf8f6f4: the same pairs, ue8m0 per 32, f32 D.
#   .kind::mxf4nvf4: e2m1; ue8m0 per 32 (scale_vec::2X), ue8m0 or ue4m3 per 16
#         (scale_vec::4X; the descriptor picks the scale type): mxf4f32,
#         mxf4b16f32, nvf4f32.

_TC05_TF32 = (_tcgen05("tf32", 8),)
_TC05_F16 = (_tcgen05("f16", 16),)
_TC05_F8F6F4 = (_tcgen05("f8f6f4", 32),)
_TC05_MXF8F6F4 = (_tcgen05("mxf8f6f4", 32, block_scale=True),)
_TC05_MXF4 = (_tcgen05("mxf4", 64, block_scale=True), _tcgen05("mxf4nvf4", 64, block_scale=True))
_TC05_NVF4 = (_tcgen05("mxf4nvf4", 64, block_scale=True),)
_F16_MIXED = ("f16bf16f32", "bf16f16f32")


def _nvidia() -> dict[str, dict[str, dict[str, tuple[InstrShape, ...]]]]:
    out: dict[str, dict[str, dict[str, tuple[InstrShape, ...]]]] = {}

    def put(arch: str, family: str, table: dict[str, tuple[InstrShape, ...]]) -> None:
        for instr, shapes in table.items():
            out.setdefault(arch, {}).setdefault(instr, {})[family] = shapes

    put("sm70", "mma", _nv_mma_table(_F16_SM70, ampere=False))
    put("sm75", "mma", _nv_mma_table(_F16_SM75, ampere=False))
    put("sm80", "mma", _nv_mma_table(_F16_SM80, ampere=True, f64=_F64_SM80))
    put("sm86", "mma", _nv_mma_table(_F16_SM80, ampere=True, f64=_F64_SM80))
    put("sm89", "mma", _nv_mma_table(_F16_SM80, ampere=True, f64=_F64_SM80, fp8=_FP8))
    # sm_90 and later keep every sm_89 mma.sync form (Target ISA notes say "sm_89 or higher").
    for arch in ("sm90", "sm100", "sm103", "sm110", "sm120", "sm121"):
        put(arch, "mma", _nv_mma_table(_F16_SM80, ampere=True, f64=_F64_SM90, fp8=_FP8))

    # sm_90a wgmma.
    put("sm90", "wgmma", {"tf32f32": _WGMMA_TF32, "bf16f32": _WGMMA_F16, "f16f32": _WGMMA_F16,
                          "f16f16": _WGMMA_F16, **{i: _WGMMA_FP8 for i in _FP8_INSTRS}})

    # sm_100a tcgen05.mma; its Target ISA notes list the same .kind forms for sm_103a and sm_110a (sm_101a
    # before CUDA 13 renamed it), so the provisional sm103/sm110 rows take the same table.
    tcgen05 = {
        "tf32f32": _TC05_TF32, "bf16f32": _TC05_F16, "f16f32": _TC05_F16, "f16f16": _TC05_F16,
        **{i: _TC05_F16 for i in _F16_MIXED},
        **{i: _TC05_F8F6F4 for i in _FP8_INSTRS + _F6F4_INSTRS},
        **{i: _TC05_MXF8F6F4 for i in _MX_F8F6F4_INSTRS},
        "mxf4f32": _TC05_MXF4, "nvf4f32": _TC05_NVF4, "mxf4b16f32": _TC05_NVF4,
    }
    for arch in ("sm100", "sm103", "sm110"):
        put(arch, "tcgen05", tcgen05)

    # sm_120a: the .kind forms of mma.sync; the PTX ISA lists sm_121a beside sm_120a for each of them.
    for arch in ("sm120", "sm121"):
        put(arch, "mma", {
            **{i: _FP8 + _F8F6F4 for i in _FP8_INSTRS},
            **{i: _F8F6F4 for i in _F6F4_INSTRS},
            **{i: _MXF8F6F4 for i in _MX_F8F6F4_INSTRS},
            "mxf4f32": _MXF4 + _MXF4NVF4, "nvf4f32": _MXF4NVF4,
        })
    return out


# ---------------------------------------------------------------- AMD MFMA
# CDNA1 (gfx908): "AMD Instinct MI100 Instruction Set Architecture" (CDNA1
# ISA), section 7 / table of V_MFMA opcodes; CDNA2 (gfx90a): "AMD Instinct
# MI200 ISA" adds V_MFMA_F64_* and the V_MFMA_F32_*BF16_1K forms (the old bf16
# forms remain); CDNA3 (gfx942): "AMD Instinct MI300 ISA" renames the forms
# with an underscore before the type and a _Nb block-count tag for multi-block
# shapes, drops the _1k suffix (its bf16 is the _1k datapath), and adds XF32
# and FP8/BF8.  Cross-checked with microsoft/MMA-Sim mmasim/isa/amd_mfma.py
# (cdna1/cdna2/cdna3 qualifier lists).  Multi-block shapes (e.g. 32x32x1f32 =
# 2 blocks, 16x16x1f32 = 4 blocks, 4x4x1f32 = 16 blocks) carry one block's
# m, n, k, as in the name.

_CDNA12_F32 = _mfma("v_mfma_f32_32x32x1f32", "v_mfma_f32_32x32x2f32", "v_mfma_f32_16x16x1f32",
                    "v_mfma_f32_16x16x4f32", "v_mfma_f32_4x4x1f32")
_CDNA12_F16 = _mfma("v_mfma_f32_32x32x4f16", "v_mfma_f32_32x32x8f16", "v_mfma_f32_16x16x4f16",
                    "v_mfma_f32_16x16x16f16", "v_mfma_f32_4x4x4f16")
_CDNA12_BF16 = _mfma("v_mfma_f32_32x32x2bf16", "v_mfma_f32_32x32x4bf16", "v_mfma_f32_16x16x2bf16",
                     "v_mfma_f32_16x16x8bf16", "v_mfma_f32_4x4x2bf16")
_CDNA2_BF16_1K = _mfma("v_mfma_f32_32x32x4bf16_1k", "v_mfma_f32_32x32x8bf16_1k", "v_mfma_f32_16x16x4bf16_1k",
                       "v_mfma_f32_16x16x16bf16_1k", "v_mfma_f32_4x4x4bf16_1k")
_CDNA2_F64 = _mfma("v_mfma_f64_16x16x4f64", "v_mfma_f64_4x4x4f64")

_CDNA3_F64 = _mfma("v_mfma_f64_16x16x4_f64", "v_mfma_f64_4x4x4_4b_f64")
_CDNA3_F32 = _mfma("v_mfma_f32_32x32x1_2b_f32", "v_mfma_f32_32x32x2_f32", "v_mfma_f32_16x16x1_4b_f32",
                   "v_mfma_f32_16x16x4_f32", "v_mfma_f32_4x4x1_16b_f32")
_CDNA3_XF32 = _mfma("v_mfma_f32_32x32x4_xf32", "v_mfma_f32_16x16x8_xf32")
_CDNA3_F16 = _mfma("v_mfma_f32_32x32x4_2b_f16", "v_mfma_f32_32x32x8_f16", "v_mfma_f32_16x16x4_4b_f16",
                   "v_mfma_f32_16x16x16_f16", "v_mfma_f32_4x4x4_16b_f16")
_CDNA3_BF16 = _mfma("v_mfma_f32_32x32x4_2b_bf16", "v_mfma_f32_32x32x8_bf16", "v_mfma_f32_16x16x4_4b_bf16",
                    "v_mfma_f32_16x16x16_bf16", "v_mfma_f32_4x4x4_16b_bf16")


def _cdna3_fp8(a: str, b: str) -> tuple[InstrShape, ...]:
    return _mfma(f"v_mfma_f32_32x32x16_{a}_{b}", f"v_mfma_f32_16x16x32_{a}_{b}")


# CDNA4 (gfx950): "AMD Instinct CDNA4 Instruction Set Architecture" (MI350
# series ISA), matrix arithmetic chapter, cross-checked with LLVM
# (llvm/test/MC/AMDGPU/mai-gfx950.s: v_mfma_f32_16x16x32_f16 ... accepted on
# gfx950, refused on gfx940; gfx950-unsupported tests refuse the _xf32 forms).
# It keeps the CDNA3 f32/f64/f16/bf16 forms, drops XF32, adds 16x16x32 and
# 32x32x16 f16/bf16, reads its fp8/bf8 MFMAs as OCP e4m3/e5m2 (llvm/llvm-project
# PR 106160: "gfx12 and some future gfx9 ... OCP 8-bit float formats ...
# retaining existing opcodes"), and adds v_mfma_f32_{16x16x128,32x32x64}_f8f6f4
# (A and B each fp8, bf8, fp6 e2m3, bf6 e3m2 or fp4 e2m1, chosen by CBSZ/BLGP)
# and their block-scaled v_mfma_scale_ forms (E8M0 scale per 32 k).

_CDNA4_F16 = _CDNA3_F16 + _mfma("v_mfma_f32_16x16x32_f16", "v_mfma_f32_32x32x16_f16")
_CDNA4_BF16 = _CDNA3_BF16 + _mfma("v_mfma_f32_16x16x32_bf16", "v_mfma_f32_32x32x16_bf16")
_CDNA4_F8F6F4 = _mfma("v_mfma_f32_16x16x128_f8f6f4", "v_mfma_f32_32x32x64_f8f6f4")
_CDNA4_SCALE = _mfma("v_mfma_scale_f32_16x16x128_f8f6f4", "v_mfma_scale_f32_32x32x64_f8f6f4")
_OCP8 = {"fp8": "e4m3", "bf8": "e5m2"}
_OCP_F8F6F4 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")

# RDNA3 (gfx11) and RDNA4 (gfx12) WMMA: "AMD RDNA3 Instruction Set
# Architecture" and "AMD RDNA4 Instruction Set Architecture", "Wave Matrix
# Multiply Accumulate (WMMA)" sections; LLVM clang BuiltinsAMDGPU.def
# (__builtin_amdgcn_wmma_*_w32).  One 16x16x16 shape; gfx11 and gfx12 take f16
# and bf16 with f32 or same-type D; gfx12 adds fp8/bf8 (OCP, PR 106160) with f32
# D.  The bf16-output and integer forms are not modelled (no bf16-output
# conversion among the models' rho).

_WMMA_F16F32 = _mfma("v_wmma_f32_16x16x16_f16")
_WMMA_BF16F32 = _mfma("v_wmma_f32_16x16x16_bf16")
_WMMA_F16F16 = _mfma("v_wmma_f16_16x16x16_f16")


def _wmma_fp8(a: str, b: str) -> tuple[InstrShape, ...]:
    return _mfma(f"v_wmma_f32_16x16x16_{a}_{b}")


def _amd() -> dict[str, dict[str, dict[str, tuple[InstrShape, ...]]]]:
    fp8 = ("fp8", "bf8")
    gfx950: dict[str, dict[str, tuple[InstrShape, ...]]] = {
        "f32f32": {"mfma": _CDNA3_F32},
        "f64f64": {"mfma": _CDNA3_F64},
        "f16f32": {"mfma": _CDNA4_F16},
        "bf16f32": {"mfma": _CDNA4_BF16},
    }
    for a in _OCP_F8F6F4:
        for b in _OCP_F8F6F4:
            names = {v: k for k, v in _OCP8.items()}
            old = _cdna3_fp8(names[a], names[b]) if a in names and b in names else ()
            gfx950[f"{a}{b}f32"] = {"mfma": old + _CDNA4_F8F6F4}
            gfx950[f"mx{a}f32" if a == b else f"mx{a}{b}f32"] = {"mfma": _CDNA4_SCALE}
    wmma: dict[str, dict[str, tuple[InstrShape, ...]]] = {
        "f16f32": {"wmma": _WMMA_F16F32}, "bf16f32": {"wmma": _WMMA_BF16F32}, "f16f16": {"wmma": _WMMA_F16F16}}
    return {
        "gfx908": {
            "f32f32": {"mfma": _CDNA12_F32},
            "f16f32": {"mfma": _CDNA12_F16},
            "bf16f32": {"mfma": _CDNA12_BF16},
        },
        "gfx90a": {
            "f32f32": {"mfma": _CDNA12_F32},
            "f64f64": {"mfma": _CDNA2_F64},
            "f16f32": {"mfma": _CDNA12_F16},
            "bf16f32": {"mfma": _CDNA12_BF16, "mfma_1k": _CDNA2_BF16_1K},
        },
        "gfx942": {
            "f32f32": {"mfma": _CDNA3_F32},
            "f64f64": {"mfma": _CDNA3_F64},
            "tf32f32": {"mfma": _CDNA3_XF32},
            "f16f32": {"mfma": _CDNA3_F16},
            "bf16f32": {"mfma": _CDNA3_BF16},
            **{f"{a}{b}f32": {"mfma": _cdna3_fp8(a, b)} for a in fp8 for b in fp8},
        },
        "gfx950": gfx950,
        "gfx11": wmma,
        "gfx12": {**wmma, **{f"{_OCP8[a]}{_OCP8[b]}f32": {"wmma": _wmma_fp8(a, b)} for a in fp8 for b in fp8}},
    }


#: SHAPES[arch][instr][family] -> shapes; family is "mma", "wgmma", "tcgen05" (NVIDIA) or "mfma", "mfma_1k", "wmma" (AMD).
SHAPES: dict[str, dict[str, dict[str, tuple[InstrShape, ...]]]] = {**_nvidia(), **_amd()}
