"""HIP C++ sources that run one AMD MFMA or WMMA on test tiles: one kernel per (arch, instruction, op family, shape).

Each source holds

* a ``__global__`` kernel in which one wave (64 lanes on gfx9, 32 on
  gfx11/gfx12; one workgroup) runs ``blocks`` tiles at once, one per block
  of the instruction: every lane gathers its A, B and C elements (and, for
  ``v_mfma_scale``, its two E8M0 scales) from global memory, packs A and B
  into their register tuples (element ``e`` of width ``w`` at bits
  ``[w*e + w-1 : w*e]``, 32-bit words ``aw``/``bw`` bit-cast to the
  builtin's operand type), issues the builtin once per k-slice of the
  tiles, the D of one issue being the C of the next, and scatters D back;
* the lane tables it gathers with, generated from
  :mod:`smtmma.hw.amd_layouts` (the layout is written once, in Python):
  ``A_BLK``, ``A_ROW``, ``A_K`` (``B_BLK``, ``B_COL``, ``B_K``) give, for
  element ``e`` of lane ``l`` (at ``[l * E + e]``), the block, the row of A
  (column of B) and the k within the issue; ``OUT_OFF`` the offset ``(block
  * M + i) * N + j`` of the C/D element ``e`` of lane ``l`` (at ``[l * ED +
  e]``); ``S_ROW``, ``S_KB`` the row of A (= column of B) and k block of a
  lane's scales;
* an ``extern "C"`` host entry point, so the runner loads the compiled file
  as a shared library with ctypes::

      int smtmma_hip_run(int device, const void *a, const void *b, const void *c, void *d,
                         const void *sa, const void *sb, long waves, int issues, char *err, int err_len);
      const char *smtmma_hip_kernel_name(void);   // the mnemonic

  It copies the tiles in, launches ``waves`` waves, copies D out and
  returns 0, or a HIP error code with its message in ``err``.

Memory layout of one launch (row-major, tile ``t = wave * blocks + b``):
A ``(tiles, m, Kp)``, B ``(tiles, Kp, n)``, C and D ``(tiles, m, n)`` with
``Kp = issues * k``; scales SA ``(tiles, m, Kp / 32)``, SB ``(tiles, Kp /
32, n)`` (uint8, E8M0; null for unscaled kernels).  Containers
(:func:`container_bits`): uint8 for fp8/bf8/fp6/fp4 (the pattern in the low
bits), uint16 for f16/bf16, uint32 for fp32 and xf32 (the 19-bit TF32
pattern shifted left by 13), uint64 for f64; D uint16 (WMMA f16), uint32
(fp32) or uint64 (f64).

The builtin of each mnemonic (:func:`builtin_for`, llvm-project
clang/include/clang/Basic/BuiltinsAMDGPU.def): the CDNA1/2 names drop the
``v_`` prefix; CDNA3 keeps the CDNA2 builtins for the renamed fp32, fp16,
bf16 (the ``_1k`` datapath) and fp64 forms (llvm/test/MC/AMDGPU/mai-gfx940.s
shows ``v_mfma_f32_32x32x4bf16_1k`` assembling to ``v_mfma_f32_32x32x4_2b_bf16``
on gfx940), and its xf32/fp8 builtins and the gfx950 double-rate f16/bf16
ones drop ``v_``.  Both gfx950 ``_f8f6f4`` forms go through
``__builtin_amdgcn_mfma_scale_f32_*_f8f6f4(a, b, c, CBSZ, BLGP, opsel_a,
scale_a, opsel_b, scale_b)``: with literal zero scales clang selects the
unscaled ``v_mfma_f32_*_f8f6f4`` (llvm/test/CodeGen/AMDGPU/llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.ll;
checked with clang-22 in the tests); A and B are ``int x 8`` of which fp6
uses 6 and fp4 4 registers.  WMMA: ``__builtin_amdgcn_wmma_*_w32`` (gfx11;
the f16-output form takes OPSEL = 0 last and writes the low halves) and
``__builtin_amdgcn_wmma_*_w32_gfx12`` (gfx12), compiled for wave32.

Nothing generated here has been run on an AMD GPU by this project.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Optional

from ..catalogue import ARCHS, CATALOGUE
from ..errors import UnknownNameError, choices
from ..isa import InstrShape
from .amd_layouts import MfmaLayout, layout, type_tag
from .kernels import KernelSource

__all__ = [
    "hip_kernels",
    "hip_source",
    "kernel_for",
    "kernel_file",
    "builtin_for",
    "container_bits",
    "offload_arch",
    "device_info_source",
    "ENTRY_POINT",
    "NAME_SYMBOL",
    "INFO_ENTRY_POINT",
]

#: The host entry point of every kernel library.
ENTRY_POINT = "smtmma_hip_run"
#: Returns the mnemonic a kernel library runs (a check that the right file was loaded).
NAME_SYMBOL = "smtmma_hip_kernel_name"
#: The entry point of the device-information helper (:func:`device_info_source`).
INFO_ENTRY_POINT = "smtmma_hip_device_info"

_C_UINT = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}
_CDNA3_RENAMED = re.compile(r"^v_mfma_(f32|f64)_(\d+x\d+x\d+)(?:_\d+b)?_(f32|f16|bf16|f64)$")
_GFX950_DOUBLE_RATE = ("16x16x32", "32x32x16")  # f16/bf16 shapes new in gfx950: builtins spelled as the mnemonic
#: ``--offload-arch`` of each catalogue architecture (the RDNA rows stand for their families).
_OFFLOAD = {"gfx11": "gfx1100", "gfx12": "gfx1200"}


def offload_arch(arch: str) -> str:
    """The hipcc ``--offload-arch`` a catalogue architecture's kernels are built for by default."""
    return _OFFLOAD.get(arch, arch)


def builtin_for(name: str, arch: Optional[str] = None) -> str:
    """The clang builtin that emits the mnemonic ``name`` (WMMA: on ``arch``, gfx11 or gfx12)."""
    key = name.strip().lower()
    if key.startswith("v_wmma_"):
        if arch not in ("gfx11", "gfx12"):
            raise UnknownNameError(f"{name}: the WMMA builtin depends on the architecture; valid: gfx11, gfx12")
        return "__builtin_amdgcn_" + key[2:] + ("_w32" if arch == "gfx11" else "_w32_gfx12")
    if not key.startswith("v_mfma_"):
        raise UnknownNameError(f"{name!r} is not an MFMA or WMMA mnemonic (v_mfma_..., v_wmma_...)")
    if key.endswith("_f8f6f4"):  # scaled and unscaled forms share the scale builtin
        return "__builtin_amdgcn_mfma_scale_" + key.removeprefix("v_mfma_scale_").removeprefix("v_mfma_")
    m = _CDNA3_RENAMED.match(key)
    if m and m.group(2) not in _GFX950_DOUBLE_RATE:  # CDNA3 spelling of a CDNA2 instruction: the CDNA2 builtin
        out_t, mnk, in_t = m.groups()
        return f"__builtin_amdgcn_mfma_{out_t}_{mnk}{in_t}" + ("_1k" if in_t == "bf16" else "")
    return "__builtin_amdgcn_" + key[2:]


def _container(bits: int) -> int:
    return 8 if bits <= 8 else bits


def container_bits(lay: MfmaLayout) -> tuple[int, int]:
    """(A/B, C/D) container widths in bits of the kernel's global arrays."""
    a, b = _container(lay.a_bits), _container(lay.b_elem_bits)
    if a != b:
        raise AssertionError(f"{lay.name}: A and B containers differ ({a}, {b} bits)")
    return a, lay.out_bits


# One line per vector type a kernel may use; a source declares only those it uses.
_TYPEDEFS = {
    "f32x2": "typedef float f32x2 __attribute__((ext_vector_type(2)));",
    "f32x4": "typedef float f32x4 __attribute__((ext_vector_type(4)));",
    "f32x8": "typedef float f32x8 __attribute__((ext_vector_type(8)));",
    "f32x16": "typedef float f32x16 __attribute__((ext_vector_type(16)));",
    "f32x32": "typedef float f32x32 __attribute__((ext_vector_type(32)));",
    "f64x4": "typedef double f64x4 __attribute__((ext_vector_type(4)));",
    "f16x4": "typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));",
    "f16x8": "typedef _Float16 f16x8 __attribute__((ext_vector_type(8)));",
    "f16x16": "typedef _Float16 f16x16 __attribute__((ext_vector_type(16)));",
    "bf16x8": "typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));",
    "i16x2": "typedef short i16x2 __attribute__((ext_vector_type(2)));",
    "i16x4": "typedef short i16x4 __attribute__((ext_vector_type(4)));",
    "i16x8": "typedef short i16x8 __attribute__((ext_vector_type(8)));",
    "i16x16": "typedef short i16x16 __attribute__((ext_vector_type(16)));",
    "i32x2": "typedef int i32x2 __attribute__((ext_vector_type(2)));",
    "i32x8": "typedef int i32x8 __attribute__((ext_vector_type(8)));",
    "u32x2": "typedef unsigned int u32x2 __attribute__((ext_vector_type(2)));",
    "u32x4": "typedef unsigned int u32x4 __attribute__((ext_vector_type(4)));",
    "u32x8": "typedef unsigned int u32x8 __attribute__((ext_vector_type(8)));",
}


def _operand_type(lay: MfmaLayout) -> tuple[str, int]:
    """(C++ type, 32-bit words) of the builtin's A and B arguments."""
    E, tag = lay.in_per_lane, type_tag(lay.name)
    if lay.f8f6f4:
        return "i32x8", 8  # fp6 fills 6 words, fp4 4; the rest stay 0
    if tag in ("f32", "xf32"):
        return ("float", 1) if E == 1 else (f"f32x{E}", E)
    if tag == "f64":
        return "double", 2
    if tag == "f16":
        return f"f16x{E}", E // 2
    if tag == "bf16":
        new = lay.family == "mfma" and E == 8  # gfx950 double-rate bf16 takes __bf16 vectors
        return (f"bf16x{E}" if new else f"i16x{E}"), E // 2
    return ("long", 2) if lay.family == "mfma" else ("i32x2", 2)  # fp8/bf8: 8 bytes


def _acc_type(lay: MfmaLayout) -> tuple[str, str, int]:
    """(C++ accumulator type, its element type, element bits) of C/D."""
    ed = lay.out_per_lane
    if lay.out_bits == 64:
        return ("double" if ed == 1 else f"f64x{ed}"), "double", 64
    if lay.out_bits == 16:
        return f"f16x{ed * lay.out_slot // 16}", "_Float16", 16
    return f"f32x{ed}", "float", 32


def _pack(var: str, bits: int, E: int, words: int) -> list[str]:
    """C++ lines packing ``{var}0 ..`` (``bits`` wide each) into the word buffer ``{var}w``, lowest bit first."""
    buf = f"{var}w"
    lines = [f"uint32_t {buf} = 0u;" if words == 1 else f"u32x{words} {buf} = {{}};"]
    for e in range(E):
        p = bits * e
        for w in range(p // 32, (p + bits - 1) // 32 + 1):
            s = p - 32 * w
            shift = f"<< {s}" if s >= 0 else f">> {-s}"
            dst = buf if words == 1 else f"{buf}[{w}]"
            lines.append(f"{dst} |= (uint32_t)({var}{e} {shift});")
    return lines


def _operand(lay: MfmaLayout, var: str, bits: int, ptr: str, offs: Sequence[str]) -> list[str]:
    """C++ lines declaring the builtin's A or B argument ``var`` from ``ptr[offs[e]]``."""
    t, words = _operand_type(lay)
    lines = [f"const uint64_t {var}{e} = {ptr}[{o}];" for e, o in enumerate(offs)]
    lines += _pack(var, bits, len(offs), words)
    lines.append(f"const {t} {var} = __builtin_bit_cast({t}, {var}w);")
    return lines


def _call(lay: MfmaLayout, arch: str) -> str:
    """The builtin call of one issue."""
    b = builtin_for(lay.name, arch)
    if lay.f8f6f4:
        scales = "xa, 0, xb" if lay.scale_block else "0, 0, 0"
        return f"acc = {b}(a, b, acc, {lay.cbsz}, {lay.blgp}, 0, {scales});"
    if lay.family == "wmma":
        return f"acc = {b}(a, b, acc{', 0' if lay.out_bits == 16 and arch == 'gfx11' else ''});"
    return f"acc = {b}(a, b, acc, 0, 0, 0);"


def _table(name: str, values: Sequence[int]) -> str:
    return _table_text(name, tuple(values))


@lru_cache(maxsize=None)
def _table_text(name: str, values: tuple[int, ...]) -> str:
    rows = [", ".join(map(str, values[i : i + 32])) for i in range(0, len(values), 32)]
    body = ",\n    ".join(rows)
    return f"__constant__ int {name}[{len(values)}] = {{\n    {body}\n}};"


def hip_source(arch: str, instr: str, op: str, shape: InstrShape) -> str:
    """The HIP C++ source (text) of the kernel that runs ``shape`` (an MFMA/WMMA of ``arch``); see the module doc."""
    lay = layout(shape.name, arch, instr)
    if (lay.m, lay.n, lay.k) != (shape.m, shape.n, shape.k):
        raise AssertionError(f"{shape.name}: shape {shape} differs from its layout")
    W, E, ED = lay.wave, lay.in_per_lane, lay.out_per_lane
    in_c, out_c = container_bits(lay)
    in_t, out_t = _C_UINT[in_c], _C_UINT[out_c]
    a_tab, b_tab = lay.a_table.reshape(W * E, 3), lay.b_table.reshape(W * E, 3)
    d_tab = lay.d_table.reshape(W * ED, 3)
    out_off = [(b * lay.m + i) * lay.n + j for b, i, j in d_tab.tolist()]
    acc, acc_el, acc_bits = _acc_type(lay)
    scalar_acc = acc == "double"
    el = (lambda e: "acc") if scalar_acc else (lambda e: f"acc[{e * lay.out_slot // acc_bits}]")
    a_lines = _operand(lay, "a", lay.a_bits, "a_w", [f"a_off[{e}] + sa" for e in range(E)])
    b_lines = _operand(lay, "b", lay.b_elem_bits, "b_w", [f"b_off[{e}] + sb" for e in range(E)])
    op_t, words = _operand_type(lay)
    used = {op_t, acc, f"u32x{words}"}
    scaled = bool(lay.scale_block)
    fmts = f"; CBSZ = {lay.cbsz}, BLGP = {lay.blgp}" if lay.f8f6f4 else ""

    lines = [
        f"// smtmma HIP kernel: {arch} {instr} ({op}) {shape.name}",
        f"// one block: m={lay.m} n={lay.n} k={lay.k}; {lay.blocks} block(s) per instruction; wave{W}; "
        f"{E} A/B element(s) and {ED} C/D element(s) per lane{fmts}",
        f"// layout source: {lay.source}",
        "// generated by smtmma.hw.hip_kernels",
        "#include <hip/hip_runtime.h>",
        "#include <stdint.h>",
        "#include <stdio.h>",
        "",
        *[_TYPEDEFS[t] for t in _TYPEDEFS if t in used],
        "",
        f"static constexpr int M_ = {lay.m}, N_ = {lay.n}, K_ = {lay.k}, BLOCKS = {lay.blocks}, E_ = {E}, ED_ = {ED}, "
        f"WAVE_ = {W}{f', SB_ = {lay.scale_block}' if scaled else ''};",
        "",
        "// element e of lane l: block, row of A (column of B), k within the issue",
        _table("A_BLK", a_tab[:, 0].tolist()),
        _table("A_ROW", a_tab[:, 1].tolist()),
        _table("A_K", a_tab[:, 2].tolist()),
        _table("B_BLK", b_tab[:, 0].tolist()),
        _table("B_COL", b_tab[:, 2].tolist()),
        _table("B_K", b_tab[:, 1].tolist()),
        "// element e of lane l of C/D: offset (block * M + i) * N + j",
        _table("OUT_OFF", out_off),
    ]
    if scaled:
        lines += ["// the scales of lane l: row of A (= column of B), k block within the issue",
                  _table("S_ROW", lay.scale_table[:, 0].tolist()), _table("S_KB", lay.scale_table[:, 1].tolist())]
    lines += [
        "",
        f"__global__ void __launch_bounds__({W})",
        f"smtmma_mma_kernel(const {in_t} *__restrict__ A, const {in_t} *__restrict__ B,",
        f"                  const {out_t} *__restrict__ C, {out_t} *__restrict__ D,",
        "                  const uint8_t *__restrict__ SA, const uint8_t *__restrict__ SB, int issues)",
        "{",
        "    const int lane = (int)threadIdx.x;",
        "    const long wave = (long)blockIdx.x;",
        "    const long Kp = (long)issues * K_;",
        f"    const {in_t} *a_w = A + wave * BLOCKS * M_ * Kp;  // this wave's tiles: (BLOCKS, M, Kp)",
        f"    const {in_t} *b_w = B + wave * BLOCKS * Kp * N_;  // (BLOCKS, Kp, N)",
        "    const long cd_w = wave * BLOCKS * M_ * N_;        // (BLOCKS, M, N)",
        "    long a_off[E_], b_off[E_];",
        "    for (int e = 0; e < E_; ++e) {",
        "        const int t = lane * E_ + e;",
        "        a_off[e] = ((long)A_BLK[t] * M_ + A_ROW[t]) * Kp + A_K[t];",
        "        b_off[e] = ((long)B_BLK[t] * Kp + B_K[t]) * N_ + B_COL[t];",
        "    }",
    ]
    if scaled:
        lines += [
            "    const long KBp = Kp / SB_;  // scale blocks per row of A (column of B)",
            "    const uint8_t *sa_w = SA + wave * BLOCKS * M_ * KBp;  // (BLOCKS, M, KBp)",
            "    const uint8_t *sb_w = SB + wave * BLOCKS * KBp * N_;  // (BLOCKS, KBp, N)",
            "    const long sa_off = (long)S_ROW[lane] * KBp + S_KB[lane];",
            "    const long sb_off = (long)S_KB[lane] * N_ + S_ROW[lane];",
        ]
    else:
        lines.append("    (void)SA; (void)SB;")
    lines.append(f"    {acc} acc{' = 0.0' if scalar_acc else ' = {}'};")
    for e in range(ED):
        lines.append(f"    {el(e)} = __builtin_bit_cast({acc_el}, C[cd_w + OUT_OFF[lane * ED_ + {e}]]);")
    lines += [
        "    for (int s = 0; s < issues; ++s) {",
        "        const long sa = (long)s * K_, sb = (long)s * K_ * N_;",
    ]
    lines += ["        " + x for x in a_lines + b_lines]
    if scaled:
        lines += [
            "        const long ss = (long)s * (K_ / SB_);",
            "        const int xa = (int)sa_w[sa_off + ss];",
            "        const int xb = (int)sb_w[sb_off + ss * N_];",
        ]
    lines += [
        f"        {_call(lay, arch)}",
        "    }",
    ]
    for e in range(ED):
        lines.append(f"    D[cd_w + OUT_OFF[lane * ED_ + {e}]] = __builtin_bit_cast({out_t}, {el(e)});")
    lines += [
        "}",
        "",
        f'extern "C" const char *{NAME_SYMBOL}(void) {{ return "{shape.name}"; }}',
        "",
        f'extern "C" int {ENTRY_POINT}(int device, const void *a, const void *b, const void *c, void *d,',
        "                              const void *sa, const void *sb, long waves, int issues, char *err, int err_len)",
        "{",
        "    const size_t tiles = (size_t)waves * BLOCKS, kp = (size_t)issues * K_;",
        f"    const size_t a_bytes = tiles * M_ * kp * sizeof({in_t});",
        f"    const size_t b_bytes = tiles * kp * N_ * sizeof({in_t});",
        f"    const size_t cd_bytes = tiles * M_ * N_ * sizeof({out_t});",
        f"    const size_t sa_bytes = {'tiles * M_ * (kp / SB_)' if scaled else '0'}, "
        f"sb_bytes = {'tiles * (kp / SB_) * N_' if scaled else '0'};",
        "    void *da = 0, *db = 0, *dc = 0, *dd = 0, *dsa = 0, *dsb = 0;",
        "    hipError_t st = hipSuccess;",
        f"    if (waves <= 0 || issues <= 0{' || !sa || !sb' if scaled else ''}) {{",
        '        snprintf(err, (size_t)err_len, "bad launch: waves=%ld issues=%d", waves, issues);',
        "        return -1;",
        "    }",
        "    do {",
        "        if ((st = hipSetDevice(device)) != hipSuccess) break;",
        "        if ((st = hipMalloc(&da, a_bytes)) != hipSuccess) break;",
        "        if ((st = hipMalloc(&db, b_bytes)) != hipSuccess) break;",
        "        if ((st = hipMalloc(&dc, cd_bytes)) != hipSuccess) break;",
        "        if ((st = hipMalloc(&dd, cd_bytes)) != hipSuccess) break;",
        "        if ((st = hipMemcpy(da, a, a_bytes, hipMemcpyHostToDevice)) != hipSuccess) break;",
        "        if ((st = hipMemcpy(db, b, b_bytes, hipMemcpyHostToDevice)) != hipSuccess) break;",
        "        if ((st = hipMemcpy(dc, c, cd_bytes, hipMemcpyHostToDevice)) != hipSuccess) break;",
    ]
    if scaled:
        lines += [
            "        if ((st = hipMalloc(&dsa, sa_bytes)) != hipSuccess) break;",
            "        if ((st = hipMalloc(&dsb, sb_bytes)) != hipSuccess) break;",
            "        if ((st = hipMemcpy(dsa, sa, sa_bytes, hipMemcpyHostToDevice)) != hipSuccess) break;",
            "        if ((st = hipMemcpy(dsb, sb, sb_bytes, hipMemcpyHostToDevice)) != hipSuccess) break;",
        ]
    else:
        lines.append("        (void)sa; (void)sb; (void)sa_bytes; (void)sb_bytes;")
    lines += [
        "        hipLaunchKernelGGL(smtmma_mma_kernel, dim3((unsigned)waves), dim3(WAVE_), 0, 0,",
        f"                           (const {in_t} *)da, (const {in_t} *)db, (const {out_t} *)dc, ({out_t} *)dd,",
        "                           (const uint8_t *)dsa, (const uint8_t *)dsb, issues);",
        "        if ((st = hipGetLastError()) != hipSuccess) break;",
        "        if ((st = hipDeviceSynchronize()) != hipSuccess) break;",
        "        st = hipMemcpy(d, dd, cd_bytes, hipMemcpyDeviceToHost);",
        "    } while (0);",
        "    if (st != hipSuccess && err && err_len > 0)",
        '        snprintf(err, (size_t)err_len, "%s", hipGetErrorString(st));',
        "    if (da) (void)hipFree(da);",
        "    if (db) (void)hipFree(db);",
        "    if (dc) (void)hipFree(dc);",
        "    if (dd) (void)hipFree(dd);",
        "    if (dsa) (void)hipFree(dsa);",
        "    if (dsb) (void)hipFree(dsb);",
        "    return (int)st;",
        "}",
        "",
    ]
    return "\n".join(lines)


def device_info_source() -> str:
    """Host-only HIP source of the helper that reports a device's gfx arch (``gcnArchName``) and name.

    Entry point (see :data:`INFO_ENTRY_POINT`)::

        int smtmma_hip_device_info(int device, int *count, char *arch, char *name, int len);

    returns 0, -1 when ``device`` is not below ``*count``, or a HIP error
    code with its message in ``arch``.
    """
    return "\n".join([
        "// smtmma HIP helper: which AMD GPUs the runtime sees",
        "#include <hip/hip_runtime.h>",
        "#include <stdio.h>",
        "",
        f'extern "C" int {INFO_ENTRY_POINT}(int device, int *count, char *arch, char *name, int len)',
        "{",
        "    int n = 0;",
        "    hipError_t st = hipGetDeviceCount(&n);",
        "    *count = 0;",
        "    if (st != hipSuccess) {",
        '        snprintf(arch, (size_t)len, "%s", hipGetErrorString(st));',
        "        return (int)st;",
        "    }",
        "    *count = n;",
        "    if (device < 0 || device >= n) return -1;",
        "    hipDeviceProp_t p;",
        "    st = hipGetDeviceProperties(&p, device);",
        "    if (st != hipSuccess) {",
        '        snprintf(arch, (size_t)len, "%s", hipGetErrorString(st));',
        "        return (int)st;",
        "    }",
        '    snprintf(arch, (size_t)len, "%s", p.gcnArchName);',
        '    snprintf(name, (size_t)len, "%s", p.name);',
        "    return 0;",
        "}",
        "",
    ])


def kernel_file(arch: str, shape: InstrShape, instr: Optional[str] = None) -> str:
    """File name of the kernel of ``shape`` on ``arch`` (``_f8f6f4`` forms, one per format pair: with ``instr``)."""
    tail = f"_{instr}" if instr and shape.name.endswith("_f8f6f4") else ""
    return f"{arch}_{shape.name}{tail}.hip"


def _kernel(arch: str, instr: str, op: str, s: InstrShape) -> KernelSource:
    return KernelSource(kernel_file(arch, s, instr), "amd", arch, instr, op, s, offload_arch(arch),
                        hip_source(arch, instr, op, s))


def hip_kernels() -> list[KernelSource]:
    """One :class:`KernelSource` per (AMD catalogue arch, instr, op family, shape), in catalogue order."""
    return [_kernel(e.arch, e.instr, e.op, s) for e in CATALOGUE if ARCHS[e.arch].vendor == "amd" for s in e.shapes]


def kernel_for(arch: str, instr: str, op: str, shape_name: str) -> KernelSource:
    """The :class:`KernelSource` of one (arch, instr, op, mnemonic); UnknownNameError if there is none."""
    for e in CATALOGUE:
        if (e.arch, e.instr, e.op) == (arch, instr, op):
            for s in e.shapes:
                if s.name == shape_name:
                    return _kernel(arch, instr, op, s)
            raise UnknownNameError(f"{arch} {instr} ({op}) has no instruction {shape_name!r}; valid: "
                                   f"{choices(x.name for x in e.shapes)}")
    raise UnknownNameError(f"no AMD catalogue row {arch} {instr} ({op})")
