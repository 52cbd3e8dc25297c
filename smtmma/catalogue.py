"""The catalogue: (architecture, instruction, op family) -> model + parameters.

Architecture differences live only here.  Every row cites its source:
"T4" = Table 4 of the MMA-Sim paper (000_bd90616f30d82206.txt), "T5",
"T6", "T7" likewise; decisions where a table is ambiguous are written next
to the row and tested in tests/test_catalogue.py.

Checklist of what a new architecture must decide (one row per instruction
and op family): model kind; L (L_max); F (and F2); rho; NaN encoding;
input FTZ; chaining of K > L; which PTX/MFMA shapes run on which datapath.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Optional, Union

from . import instr_names
from .errors import (InputError, InputTypeError, ProvisionalWarning, UnknownNameError, choices, did_you_mean, unknown_name,
                     user_stacklevel)
from .isa import SHAPES, InstrShape
from .models import Model

__all__ = [
    "Arch",
    "Instr",
    "Entry",
    "ARCHS",
    "INSTRS",
    "CATALOGUE",
    "resolve_arch",
    "resolve_instr",
    "lookup",
    "entries",
    "split_arch_op",
    "is_arch_name",
    "model_of",
    "model_on_shape",
    "provisional_warning",
    "warn_if_provisional",
]


@dataclass(frozen=True)
class Arch:
    """A GPU architecture: compute capability / gfx id, vendor, aliases.

    ``provisional`` names the vendor documents its rows come from when no
    recorded hardware output of it exists: shapes and formats are documented,
    the model parameters are the nearest modelled generation's (``like``), a
    hypothesis that ``suites/provisional/`` is built to settle.  Empty for
    architectures modelled from measurements.
    """

    name: str
    vendor: str  # "nvidia" | "amd"
    family: str  # e.g. "Hopper", "CDNA3"
    aliases: tuple[str, ...]
    provisional: str = ""  # the documents behind a provisional architecture; "" when measured
    like: str = ""  # a provisional architecture's hypothesis: the modelled architecture its parameters are taken from


@dataclass(frozen=True)
class Instr:
    """An instruction type: formats of A, B, C and D; block-scaled: the scale format and its block.

    C and D share a format except in ``f16f32c16`` (Volta/Turing ``m8n8k4``
    with an fp16 C and an fp32 D).  ``block`` is the number of consecutive
    k elements that share one scale factor (None when not block-scaled).
    """

    name: str
    a_fmt: str
    b_fmt: str
    c_fmt: str
    d_fmt: str
    scale_fmt: Optional[str] = None  # block-scaled instructions
    aliases: tuple[str, ...] = ()
    block: Optional[int] = None  # elements per scale factor (block-scaled instructions)


@dataclass(frozen=True)
class Entry:
    """One catalogue row: the model an (arch, instr, op family) runs."""

    arch: str
    instr: str
    op: str
    model: Model
    source: str
    default: bool = False
    shapes: tuple[InstrShape, ...] = field(default=(), compare=False)


ARCHS: dict[str, Arch] = {
    a.name: a
    for a in (
        Arch("sm70", "nvidia", "Volta", ("volta", "v100")),
        Arch("sm75", "nvidia", "Turing", ("turing", "t4")),
        Arch("sm80", "nvidia", "Ampere", ("ampere", "a100", "a30")),
        Arch("sm86", "nvidia", "Ampere", ("ga102", "a40", "a2", "rtx3090")),
        Arch("sm89", "nvidia", "Ada Lovelace", ("ada", "ada-lovelace", "lovelace", "l40s", "rtx4090")),
        Arch("sm90", "nvidia", "Hopper", ("hopper", "h100", "h200", "gh200")),
        Arch("sm100", "nvidia", "Blackwell", ("blackwell", "b200", "gb200")),
        # Provisional (no recorded output of them is public; docs/provisional.md): the documents of their shapes,
        # and the modelled architecture whose parameters are the hypothesis.
        Arch("sm103", "nvidia", "Blackwell Ultra", ("blackwell-ultra", "b300", "gb300"),
             provisional="PTX ISA 9.0, tcgen05.mma and mma Target ISA notes (sm_103a)", like="sm100"),
        Arch("sm110", "nvidia", "Blackwell (Thor)", ("thor", "jetson-thor"),
             provisional="PTX ISA 9.0, tcgen05.mma and mma Target ISA notes (sm_110a; sm_101a before CUDA 13)", like="sm100"),
        Arch("sm120", "nvidia", "RTX Blackwell", ("rtx-blackwell", "rtx5090", "rtx-pro-6000")),
        Arch("sm121", "nvidia", "RTX Blackwell (GB10)", ("gb10", "dgx-spark"),
             provisional="PTX ISA 9.0, mma Target ISA notes (.kind forms on sm_120a and sm_121a)", like="sm120"),
        Arch("gfx908", "amd", "CDNA1", ("cdna1", "mi100")),
        Arch("gfx90a", "amd", "CDNA2", ("cdna2", "mi250x", "mi250", "mi210")),
        Arch("gfx942", "amd", "CDNA3", ("cdna3", "mi300x", "mi300a", "mi300")),
        Arch("gfx950", "amd", "CDNA4", ("cdna4", "mi350x", "mi355x", "mi350"),
             provisional="AMD Instinct CDNA4 ISA, matrix arithmetic chapter; LLVM mai-gfx950.s", like="gfx942"),
        Arch("gfx11", "amd", "RDNA3", ("rdna3", "gfx1100", "gfx1101", "gfx1102", "rx7900xtx", "w7900"),
             provisional="AMD RDNA3 ISA, WMMA section; LLVM BuiltinsAMDGPU.def (wmma_*_w32)", like="gfx942"),
        Arch("gfx12", "amd", "RDNA4", ("rdna4", "gfx1200", "gfx1201", "rx9070xt", "rx9070"),
             provisional="AMD RDNA4 ISA, WMMA section; LLVM BuiltinsAMDGPU.def (wmma_*_w32_gfx12)", like="gfx942"),
    )
}

#: The operand types of NVIDIA .kind::f8f6f4 / .kind::mxf8f6f4 (A and B each any of them).
_F8F6F4 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")

INSTRS: dict[str, Instr] = {
    i.name: i
    for i in (
        Instr("f64f64", "fp64", "fp64", "fp64", "fp64", aliases=("fp64",)),
        Instr("f32f32", "fp32", "fp32", "fp32", "fp32", aliases=("fp32",)),
        Instr("tf32f32", "tf32", "tf32", "fp32", "fp32", aliases=("tf32", "xf32f32")),
        Instr("bf16f32", "bf16", "bf16", "fp32", "fp32", aliases=("bf16",)),
        Instr("f16f32", "fp16", "fp16", "fp32", "fp32", aliases=("fp16fp32",)),
        Instr("f16f16", "fp16", "fp16", "fp16", "fp16", aliases=("fp16fp16",)),
        # Volta/Turing mma.m8n8k4 .f32.f16.f16.f16: fp16 C, fp32 D ("c16": C's format; not f16f16f32,
        # which the {a}{b}{cd} scheme would read as fp16 x fp16 with fp32 C and D).
        Instr("f16f32c16", "fp16", "fp16", "fp16", "fp32", aliases=("fp16fp32c16",)),
        # tcgen05 .kind::f16 with A and B of different 16-bit types (f32 D only).
        Instr("f16bf16f32", "fp16", "bf16", "fp32", "fp32"),
        Instr("bf16f16f32", "bf16", "fp16", "fp32", "fp32"),
        # NVIDIA fp8/fp6/fp4 (OCP formats, .kind::f8f6f4 takes any pair); the first name is A's type, the second B's.
        *(
            Instr(f"{a}{b}{cd}", a, b, fmt, fmt, aliases=((f"{a}{cd}",) if a == b else ()))
            for a in _F8F6F4
            for b in _F8F6F4
            for cd, fmt in (("f32", "fp32"), ("f16", "fp16"))
        ),
        # Block-scaled (MX) with UE8M0 scales, one per 32 elements: mx{a}f32 (A and B of one type), mx{a}{b}f32.
        Instr("mxe4m3f32", "e4m3", "e4m3", "fp32", "fp32", scale_fmt="ue8m0", aliases=("mxf8f6f4", "mxf8f32"), block=32),
        Instr("mxe2m1f32", "e2m1", "e2m1", "fp32", "fp32", scale_fmt="ue8m0", aliases=("mxf6f4e2m1f32",), block=32),
        *(
            Instr(f"mx{a}f32" if a == b else f"mx{a}{b}f32", a, b, "fp32", "fp32", scale_fmt="ue8m0", block=32)
            for a in _F8F6F4
            for b in _F8F6F4
            if (a, b) not in (("e4m3", "e4m3"), ("e2m1", "e2m1"))
        ),
        # .kind::mxf4nvf4: UE8M0 per 32 (mxf4), UE4M3 per 16 (nvf4), UE8M0 per 16 (mxf4b16: tcgen05 only).
        Instr("mxf4f32", "e2m1", "e2m1", "fp32", "fp32", scale_fmt="ue8m0", aliases=("mxf4",), block=32),
        Instr("nvf4f32", "e2m1", "e2m1", "fp32", "fp32", scale_fmt="ue4m3", aliases=("mxf4nvf4", "nvf4"), block=16),
        Instr("mxf4b16f32", "e2m1", "e2m1", "fp32", "fp32", scale_fmt="ue8m0", aliases=("mxf4b16",), block=16),
        # AMD CDNA3 fp8 (FNUZ formats): fp8 = e4m3fnuz, bf8 = e5m2fnuz.
        *(
            Instr(f"{an}{bn}f32", a, b, "fp32", "fp32", aliases=((f"{an}f32",) if a == b else ()))
            for an, a in (("fp8", "e4m3fnuz"), ("bf8", "e5m2fnuz"))
            for bn, b in (("fp8", "e4m3fnuz"), ("bf8", "e5m2fnuz"))
        ),
    )
}


def _nv_tfdpa(instr: str, L: int, F: int, rho: str, **kw: object) -> Model:
    i = INSTRS[instr]
    return Model("t-fdpa", i.a_fmt, i.b_fmt, i.c_fmt, i.d_fmt, L=L, F=F, rho=rho, nan="nvidia", **kw)  # type: ignore[arg-type]


def _fma(instr: str, nan: str = "ieee") -> Model:
    i = INSTRS[instr]
    return Model("fma", i.a_fmt, i.b_fmt, i.c_fmt, i.d_fmt, nan=nan)


_FP8 = tuple(f"{a}{b}" for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2"))
_FP64 = ("f64f64",)


def _nvidia_rows() -> list[Entry]:
    rows: list[Entry] = []

    def add(arch: str, instr: str, op: str, model: Model, source: str, default: bool = True) -> None:
        rows.append(Entry(arch, instr, op, model, source, default))

    # Volta, Turing: FP16 only (T4 rows 1-4).
    for arch, L, F in (("sm70", 4, 23), ("sm75", 8, 24)):
        add(arch, "f16f32", "mma", _nv_tfdpa("f16f32", L, F, "rz-fp32"), "T4")
        add(arch, "f16f16", "mma", _nv_tfdpa("f16f16", L, F, "rne-fp16"), "T4")
        # m8n8k4 .f32.f16.f16.f16: the FP16->FP32 datapath; C is widened exactly to fp32 first, as
        # microsoft/MMA-Sim mmasim/simulator/nv_ptx.py does (run_model, for any C format other than D's).  The
        # only shape is m8n8k4, so one issue is one FDPA of k=4 terms: L = 4 on Turing too (Alg. 5).
        add(arch, "f16f32c16", "mma", _nv_tfdpa("f16f32c16", 4, F, "rz-fp32"), "T4 (FP16->FP32 row; L = k of m8n8k4)")
    # Ampere (sm80, sm86: T4 "Ampere" covers both) and Ada Lovelace: F = 24.
    for arch in ("sm80", "sm86", "sm89"):
        add(arch, "tf32f32", "mma", _nv_tfdpa("tf32f32", 4, 24, "rz-fp32"), "T4")
        add(arch, "bf16f32", "mma", _nv_tfdpa("bf16f32", 8, 24, "rz-fp32"), "T4")
        add(arch, "f16f32", "mma", _nv_tfdpa("f16f32", 8, 24, "rz-fp32"), "T4")
        add(arch, "f16f16", "mma", _nv_tfdpa("f16f16", 8, 24, "rne-fp16"), "T4")
        add(arch, "f64f64", "mma", _fma("f64f64"), "T3 (DMMA)")
    for ab in _FP8:  # Ada QMMA: L=16, F=13 (T4)
        add("sm89", f"{ab}f32", "mma", _nv_tfdpa(f"{ab}f32", 16, 13, "rz-e8m13"), "T4")
        add("sm89", f"{ab}f16", "mma", _nv_tfdpa(f"{ab}f16", 16, 13, "rne-fp16"), "T4")
    # Hopper, Blackwell, RTX Blackwell: F = 25, L doubled (T4).
    # Hopper and Blackwell never align below 2**-133 (BF16/TF32: products can be smaller) and B200
    # FP16->FP16 never below 2**-15: the newer hardware evidence of 003_d749da898286e929.txt ("exponent,
    # on alignment, is capped from below to -133, for bf16 and tf19"; Khattak & Mikaitis's H100/B200
    # models).  Sm120 has no such measurement: no floor.
    for arch, native in (("sm90", "wgmma"), ("sm100", "tcgen05"), ("sm120", "mma")):
        floor = {"emax_floor": -133} if arch != "sm120" else {}
        floor16 = {"emax_floor": -15} if arch == "sm100" else {}
        src = "T4 + 003 (alignment floor)" if floor else "T4"
        for op in dict.fromkeys(("mma", native)):
            default = op == "mma"
            add(arch, "tf32f32", op, _nv_tfdpa("tf32f32", 8, 25, "rz-fp32", **floor), src, default)
            add(arch, "bf16f32", op, _nv_tfdpa("bf16f32", 16, 25, "rz-fp32", **floor), src, default)
            add(arch, "f16f32", op, _nv_tfdpa("f16f32", 16, 25, "rz-fp32"), "T4", default)
            add(arch, "f16f16", op, _nv_tfdpa("f16f16", 16, 25, "rne-fp16", **floor16), "T4 + 003 (alignment floor)" if floor16 else "T4", default)
        # DMMA: FMA chains (T3).  On H200 every shape carries a NaN operand's payload to D, quieted (b, then c,
        # then a) and gives 0xFFF8... for inf x 0 and inf - inf: 8,004 lines and 56 probes of the survey
        # (hw-samples/H200-survey-f64f64.jsonl).  sm100/sm120 keep the canonical NaN until measured.
        add(arch, "f64f64", "mma", _fma("f64f64", nan="propagate") if arch == "sm90" else _fma("f64f64"),
            "T3 (DMMA) + H200 survey (NaN)" if arch == "sm90" else "T3 (DMMA)")
    # tcgen05 .kind::f16 with f16 x bf16 operands: the Blackwell BF16/FP16 -> FP32 row of T4; a bf16 operand
    # brings bf16-range products, so the alignment floor of the bf16 row applies (003, as bf16f32 above).
    for instr in ("f16bf16f32", "bf16f16f32"):
        add("sm100", instr, "tcgen05", _nv_tfdpa(instr, 16, 25, "rz-fp32", emax_floor=-133), "T4 + 003 (alignment floor)")
    for ab in _FP8:
        # Hopper QGMMA (wgmma): L=32, F=13, RZ-E8M13 / RNE-FP16 (T4).
        add("sm90", f"{ab}f32", "wgmma", _nv_tfdpa(f"{ab}f32", 32, 13, "rz-e8m13"), "T4")
        add("sm90", f"{ab}f16", "wgmma", _nv_tfdpa(f"{ab}f16", 32, 13, "rne-fp16"), "T4")
        # Blackwell UTCQMMA (tcgen05) and RTX Blackwell QMMA (mma): L=32, F=25 (T4).
        for arch, op in (("sm100", "tcgen05"), ("sm120", "mma")):
            add(arch, f"{ab}f32", op, _nv_tfdpa(f"{ab}f32", 32, 25, "rz-fp32"), "T4")
            add(arch, f"{ab}f16", op, _nv_tfdpa(f"{ab}f16", 32, 25, "rne-fp16"), "T4")
        # PTX mma.sync FP8 on Hopper/Blackwell does not reach the FP8 datapath: the compiler converts
        # e4m3/e5m2 to fp16 (exactly) and issues two HMMA.16816 (L=16, F=25 as the FP16 rows) over the
        # k-halves of alternating fp16 register pairs, from a zero accumulator, then adds C with an RNE
        # add.  Found on hw-samples/H100-e4m3-fp16.jsonl (300/300; the native model gets 188/300) and
        # confirmed on further public validation lines (H100, H200, B200; FP16 and FP32 output; 89/89
        # each).  See docs/fp8-mma-sm90.md.
        for arch in ("sm90", "sm100"):
            hmma = dict(via="fp16", interleave=2, c_after=True, issue=32)
            add(arch, f"{ab}f32", "mma", _nv_tfdpa(f"{ab}f32", 16, 25, "rz-fp32", **hmma), "experiment: public validation data", False)
            add(arch, f"{ab}f16", "mma", _nv_tfdpa(f"{ab}f16", 16, 25, "rne-fp16", **hmma), "experiment: hw-samples", False)
    # .kind::f8f6f4 with an fp6/fp4 operand (any A/B pair, fp8 mixes included): the FP8/6/4 rows of T4 (one
    # datapath for the kind), FP32 and FP16 output.
    for a in _F8F6F4:
        for b in _F8F6F4:
            if a in ("e4m3", "e5m2") and b in ("e4m3", "e5m2"):
                continue  # the fp8 pairs above
            for arch, op in (("sm100", "tcgen05"), ("sm120", "mma")):
                add(arch, f"{a}{b}f32", op, _nv_tfdpa(f"{a}{b}f32", 32, 25, "rz-fp32"), "T4 (FP8/6/4)")
                add(arch, f"{a}{b}f16", op, _nv_tfdpa(f"{a}{b}f16", 32, 25, "rne-fp16"), "T4 (FP8/6/4, FP16 output)")
    # Block-scaled: ST-FDPA (T4, MXFP8/6/4 row; any A/B pair of .kind::mxf8f6f4) and GST-FDPA (T5).
    for arch, op in (("sm100", "tcgen05"), ("sm120", "mma")):
        for i in INSTRS.values():
            if i.scale_fmt is None or i.name in _GST_INSTRS:
                continue
            add(arch, i.name, op, Model("st-fdpa", i.a_fmt, i.b_fmt, "fp32", "fp32", L=32, F=25, rho="rz-fp32",
                                        block=i.block, scale_fmt=i.scale_fmt, nan="nvidia"), "T4 (MXFP8/6/4)")
        # mxf4b16f32 (UE8M0 per 16) is tcgen05 .kind::mxf4nvf4 .scale_vec::4X only: mma.sync on sm_120a
        # takes UE8M0 with scale_vec::2X only (ptxas 13.0), so sm120 has no such row.
        for instr in _GST_INSTRS:
            if instr == "mxf4b16f32" and arch != "sm100":
                continue
            i = INSTRS[instr]
            add(arch, instr, op, Model("gst-fdpa", "e2m1", "e2m1", "fp32", "fp32", L=64, G=16, F=35, rho="rz-fp32",
                                       block=i.block, scale_fmt=i.scale_fmt, nan="nvidia"), "T5")
    return rows


#: The .kind::mxf4 / mxf4nvf4 instructions (GST-FDPA, T5).
_GST_INSTRS = ("mxf4f32", "nvf4f32", "mxf4b16f32")


def _amd_rows() -> list[Entry]:
    rows: list[Entry] = []

    def add(arch: str, instr: str, op: str, model: Model, source: str, default: bool = True) -> None:
        rows.append(Entry(arch, instr, op, model, source, default))

    for arch in ("gfx908", "gfx90a", "gfx942"):
        add(arch, "f32f32", "mfma", _fma("f32f32"), "T6")
    for arch in ("gfx90a", "gfx942"):
        add(arch, "f64f64", "mfma", _fma("f64f64"), "T6")
    # CDNA1: E-FDPA, L=2 (BF16), L=4 (FP16) (T6).
    add("gfx908", "bf16f32", "mfma", Model("e-fdpa", "bf16", "bf16", "fp32", "fp32", L=2), "T6")
    add("gfx908", "f16f32", "mfma", Model("e-fdpa", "fp16", "fp16", "fp32", "fp32", L=4), "T6")
    # CDNA2: FTZ-AddMul, P=2 (BF16 w/o _1k), P=4 (BF16 _1k, FP16) (T6); inputs flushed (Alg. 2).
    ftz = dict(ftz_inputs=True)
    add("gfx90a", "bf16f32", "mfma", Model("ftz-addmul", "bf16", "bf16", "fp32", "fp32", P=2, **ftz), "T6")
    add("gfx90a", "bf16f32", "mfma_1k", Model("ftz-addmul", "bf16", "bf16", "fp32", "fp32", P=4, **ftz), "T6", False)
    add("gfx90a", "f16f32", "mfma", Model("ftz-addmul", "fp16", "fp16", "fp32", "fp32", P=4, **ftz), "T6")
    # CDNA3: TR-FDPA (TF32 L=4; BF16/FP16 L=8) and GTR-FDPA (FP8 L=16), F=24, F2=31, RNE-FP32 (T7).
    for instr, L in (("tf32f32", 4), ("bf16f32", 8), ("f16f32", 8)):
        i = INSTRS[instr]
        add("gfx942", instr, "mfma", Model("tr-fdpa", i.a_fmt, i.b_fmt, "fp32", "fp32", L=L, F=24, F2=31, rho="rne-fp32"), "T7")
    for instr in ("fp8fp8f32", "fp8bf8f32", "bf8fp8f32", "bf8bf8f32"):
        i = INSTRS[instr]
        add("gfx942", instr, "mfma", Model("gtr-fdpa", i.a_fmt, i.b_fmt, "fp32", "fp32", L=16, F=24, F2=31, rho="rne-fp32"), "T7")
    return rows


def _provisional_rows(measured: list[Entry]) -> list[Entry]:
    """The rows of the provisional architectures: documented shapes (isa.SHAPES), the nearest generation's model.

    NVIDIA: sm103 and sm110 are sm100 (tcgen05 and mma), sm121 is sm120, row for row.  AMD: the CDNA3 models
    of gfx942 (000 T7: TR-FDPA L=4/8, GTR-FDPA L=16, F=24, F2=31, RNE-FP32) are the hypothesis for gfx950's
    MFMAs and for RDNA3/RDNA4 WMMA; FP16 output rounds RNE to fp16 (the NVIDIA FP16-output choice, T4); the
    OCP fp8/fp6/fp4 pairs take the fp8 GTR-FDPA; the block-scaled v_mfma_scale forms take Blackwell's ST-FDPA
    (T4 MXFP8/6/4: L=32, F=25, RZ-FP32), the only block-scaled model there is.
    """
    rows: list[Entry] = []
    for arch in ("sm103", "sm110", "sm121"):
        like = ARCHS[arch].like
        for e in measured:
            if e.arch == like:
                rows.append(Entry(arch, e.instr, e.op, e.model, f"hypothesis {like} ({e.source}); shapes: {ARCHS[arch].provisional}",
                                  e.default))
    for arch in ("gfx950", "gfx11", "gfx12"):
        like = ARCHS[arch].like
        cdna3 = {e.instr: e.model for e in measured if e.arch == like}
        for instr, fams in SHAPES[arch].items():
            i = INSTRS[instr]
            for op in fams:
                if instr in cdna3:
                    model, why = cdna3[instr], f"{like} {instr}"
                elif i.d_fmt == "fp16":
                    model = cdna3["f16f32"].replace(c_fmt="fp16", d_fmt="fp16", rho="rne-fp16")
                    why = f"{like} f16f32, RNE-FP16 output"
                elif i.scale_fmt is not None:
                    model = Model("st-fdpa", i.a_fmt, i.b_fmt, "fp32", "fp32", L=32, F=25, rho="rz-fp32", block=i.block,
                                  scale_fmt=i.scale_fmt, nan="nvidia")
                    why = "sm100 ST-FDPA (T4 MXFP8/6/4)"
                else:
                    model = cdna3["fp8fp8f32"].replace(a_fmt=i.a_fmt, b_fmt=i.b_fmt)
                    why = f"{like} fp8 GTR-FDPA, OCP operands"
                src = f"hypothesis {why}" + ("" if "T4" in why else " (T7)") + f"; shapes: {ARCHS[arch].provisional}"
                rows.append(Entry(arch, instr, op, model, src, True))
    return rows


def _with_shapes(rows: list[Entry]) -> list[Entry]:
    out = []
    for e in rows:
        shapes = SHAPES.get(e.arch, {}).get(e.instr, {}).get(e.op, ())
        out.append(Entry(e.arch, e.instr, e.op, e.model, e.source, e.default, tuple(shapes)))
    return out


_MEASURED = _nvidia_rows() + _amd_rows()
CATALOGUE: tuple[Entry, ...] = tuple(_with_shapes(_MEASURED + _provisional_rows(_MEASURED)))

_ROWS: dict[tuple[str, str], list[Entry]] = {}
for _e in CATALOGUE:
    _ROWS.setdefault((_e.arch, _e.instr), []).append(_e)

_ARCH_BY_NAME = {n.lower(): a.name for a in ARCHS.values() for n in (a.name, *a.aliases)}
_INSTR_BY_NAME = {n.lower(): i.name for i in INSTRS.values() for n in (i.name, *i.aliases)}


def _name_arg(what: str, name: object, example: str) -> str:
    """``name`` when it is a str, else an :class:`InputTypeError` saying what a name looks like."""
    if isinstance(name, str):
        return name
    hint = f" (did you mean 'sm{name}'?)" if what.startswith("architecture") and isinstance(name, int) and f"sm{name}" in ARCHS else ""
    raise InputTypeError(f"{what} must be a name (str) such as {example!r}, got {type(name).__name__} {name!r}{hint}")


def resolve_arch(name: str) -> str:
    """Canonical architecture id (``sm90``) of a name or alias (``hopper``, ``h100``, ``sm_90a``)."""
    key = _name_arg("architecture", name, "sm90").strip().lower()
    if key.startswith("sm_"):
        key = "sm" + key[3:]
    if re.fullmatch(r"sm\d+[af]", key):  # PTX targets sm_90a, sm_100f: the same arithmetic
        key = key[:-1]
    try:
        return _ARCH_BY_NAME[key]
    except KeyError:
        raise UnknownNameError(unknown_name("architecture", name, ARCHS, aliases=[a for x in ARCHS.values() for a in x.aliases],
                                            see="'smtmma list'", limit=20)) from None


def split_arch_op(text: str) -> tuple[str, Optional[str]]:
    """``sm90/wgmma`` -> (``sm90``, ``wgmma``); ``h100`` -> (``sm90``, None); UnknownNameError for an unknown ARCH.

    The op is returned as written (a family or an instruction name); it is
    checked against an instruction type by :func:`lookup`.
    """
    arch, slash, op = text.partition("/")
    return resolve_arch(arch), (op.strip() or None) if slash else None


def is_arch_name(text: str) -> bool:
    """Whether ``text`` names an architecture, with or without an op (``sm90``, ``h100``, ``sm90/wgmma``), rather than
    something else (a model spec, a file, a device)."""
    try:
        split_arch_op(text)
        return True
    except UnknownNameError:
        return False


def resolve_instr(name: str) -> str:
    """Canonical instruction name (``f16f32``) of a name or alias."""
    try:
        return _INSTR_BY_NAME[_name_arg("instruction", name, "f16f32").strip().lower()]
    except KeyError:
        raise UnknownNameError(unknown_name("instruction", name, INSTRS, aliases=[a for i in INSTRS.values() for a in i.aliases],
                                            see="'smtmma list'")) from None


def entries(arch: Optional[str] = None, instr: Optional[str] = None) -> list[Entry]:
    """Catalogue rows, optionally for one architecture and/or instruction."""
    a = resolve_arch(arch) if arch else None
    i = resolve_instr(instr) if instr else None
    return [e for e in CATALOGUE if (a is None or e.arch == a) and (i is None or e.instr == i)]


def lookup(arch: str, instr: Optional[str], op: Optional[str] = None) -> Entry:
    """The row for ``(arch, instr, op)``; ``op=None`` gives the default op family.

    ``op`` may be a family (``mma``, ``wgmma``, ``tcgen05``, ``mfma``,
    ``mfma_1k``) or an instruction name in any spelling of
    :mod:`smtmma.instr_names` (PTX ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``,
    MMA-Sim ``m16n8k16.f32.f16.f16.f32``, ``v_mfma_f32_32x32x8bf16_1k``); its
    types must agree with ``instr``, and ``instr`` may be None when they fix it.
    """
    a = resolve_arch(arch)
    if op is not None:
        op = _name_arg("op", op, "mma")
    named = instr_names.resolve(a, resolve_instr(instr) if instr is not None else None, op, ARCHS[a].vendor) \
        if op and op.strip().lower() not in instr_names.FAMILIES else None
    if instr is None and named is None:
        raise InputError("an instruction type is needed (instr, e.g. f16f32), or an op that names one "
                         "(e.g. mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32)")
    i = named[0] if named else resolve_instr(instr)  # type: ignore[arg-type]
    rows = _ROWS.get((a, i), [])
    if not rows:
        have = sorted({e.instr for e in CATALOGUE if e.arch == a})
        hint = did_you_mean(i, have) if len(have) > 5 else ""
        raise UnknownNameError(f"{a} has no instruction {i}; {hint + ' ' if hint else ''}valid for {a}: {choices(have)}")
    if op is None or op.strip() == "":
        defaults = [e for e in rows if e.default] or rows
        return defaults[0]
    key = named[1] if named else op.strip().lower()
    if key == "wmma" and ARCHS[a].vendor == "nvidia":
        key = "mma"  # the WMMA API issues the same HMMA/QMMA as mma.sync
    for e in rows:
        if e.op == key:
            return e
    ops = [e.op for e in rows]
    hint = did_you_mean(op.strip(), ops) if len(ops) > 5 else ""
    raise UnknownNameError(f"{a} {i} has no op {op!r}; {hint + ' ' if hint else ''}valid: {choices(ops)}")


def model_of(target: Union[str, Model], instr: Optional[str] = None, op: Optional[str] = None) -> Model:
    """A :class:`Model`: ``target`` itself, or the catalogue's model of ``(target, instr, op)``.

    A Model given with ``instr`` must have that instruction's formats.  When
    ``op`` names one instruction shape (``mma.sync.aligned.m16n8k4``) whose k
    is below the model's L, each instruction is its own FDPA: L becomes that
    k (Alg. 5, L = min(K, L_max), with K the instruction's k).
    """
    if not isinstance(target, Model):
        _name_arg("architecture (or a Model)", target, "sm90")
    if isinstance(target, Model):
        if instr is not None:
            i = INSTRS[resolve_instr(instr)]
            want = (i.a_fmt, i.b_fmt, i.c_fmt, i.d_fmt, i.scale_fmt)
            have = (target.a_fmt, target.b_fmt, target.c_fmt, target.d_fmt, target.scale_fmt)
            if want != have:
                raise InputError(f"the model computes {_fmts_text(have)} but instr {i.name} is {_fmts_text(want)}: "
                                 "give a model of that instruction, or instr=None")
        if op:
            raise InputError("op picks a catalogue row: give an architecture, not a Model, with op")
        return target
    if instr is None and not op:
        raise InputError("an architecture needs an instruction (instr)")
    entry = lookup(target, instr, op)
    if op:
        shape = instr_names.named_shape(entry.arch, entry.instr, op, ARCHS[entry.arch].vendor)
        if shape is not None:
            return model_on_shape(entry, shape)
    return entry.model


def model_on_shape(entry: Entry, shape: InstrShape) -> Model:
    """The model of row ``entry`` running instruction ``shape`` (of this row or, as a hypothesis, another's).

    An FDPA longer than the instruction's k is cut to k (Alg. 5: L = min(K, L_max)).  A row that models
    whole instructions (``issue``: the sm90 FP8 ``mma.sync``, two HMMAs over interleaved k-halves) splits
    every shape into as many FDPAs: m16n8k16 FP8 is two HMMA.1688 of L=8 (the H200 survey,
    hw-samples/H200-*.jsonl: 16,007/16,007 lines of the eight FP8 m16n8k16 types).
    """
    model = entry.model
    if model.L is None or not model.kind.endswith("fdpa"):
        return model
    if model.issue:  # FDPAs per instruction stay; each is k / (issue / L) lanes of this shape's k
        per = model.issue // model.L
        return model.replace(L=max(1, shape.k // per), issue=shape.k) if shape.k % per == 0 else model
    return model.replace(L=shape.k) if shape.k < model.L else model


def provisional_warning(arch: str) -> str:
    """The one-line warning for a provisional architecture's results; "" for a measured one."""
    a = ARCHS[resolve_arch(arch)]
    if not a.provisional:
        return ""
    return (f"provisional: {a.name} ({a.family}) has no recorded hardware output; its model is {a.like}'s as a "
            f"hypothesis; run `smtmma hw survey` on one")


def warn_if_provisional(target: object) -> None:
    """Issue a :class:`~smtmma.errors.ProvisionalWarning` (at the user's call) when ``target`` names a provisional
    architecture; nothing for a Model or a measured architecture."""
    if isinstance(target, str) and is_arch_name(target):
        text = provisional_warning(split_arch_op(target)[0])
        if text:
            warnings.warn(text, ProvisionalWarning, stacklevel=user_stacklevel())


def _fmts_text(f: tuple[Optional[str], ...]) -> str:
    return f"a {f[0]}, b {f[1]}, c {f[2]}, d {f[3]}" + (f", scales {f[4]}" if f[4] else "")
