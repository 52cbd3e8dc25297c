"""HIP C++ sources that run one AMD MFMA on test tiles: one kernel per (arch, instruction, op family, MFMA shape).

Each source holds

* a ``__global__`` kernel in which one wavefront (64 lanes, one workgroup)
  runs ``blocks`` tiles at once, one per MFMA block: every lane gathers its
  A, B and C elements from global memory, issues the MFMA builtin
  (``__builtin_amdgcn_mfma_*``, CBSZ = ABID = BLGP = 0) once per k-slice of
  the tiles, the D of one issue being the C of the next, and scatters D back;
* the lane tables it gathers with, generated from
  :mod:`smtmma.hw.amd_layouts` (the layout is written once, in Python):
  ``IN_BLK``, ``IN_ROW``, ``IN_K`` give, for element ``e`` of lane ``l`` (at
  ``[l * E + e]``), the block, the row of A (= column of B) and the k within
  the issue; ``OUT_OFF`` gives the offset ``(block * M + i) * N + j`` of the
  C/D element in element ``e`` of lane ``l`` (at ``[l * ED + e]``);
* an ``extern "C"`` host entry point, so the runner loads the compiled file
  as a shared library with ctypes::

      int smtmma_hip_run(int device, const void *a, const void *b, const void *c, void *d,
                         long waves, int issues, char *err, int err_len);
      const char *smtmma_hip_kernel_name(void);   // the MFMA mnemonic

  It copies the tiles in, launches ``waves`` wavefronts, copies D out and
  returns 0, or a HIP error code with its message in ``err``.

Memory layout of one launch (row-major, tile ``t = wave * blocks + b``):
A ``(tiles, m, Kp)``, B ``(tiles, Kp, n)``, C and D ``(tiles, m, n)`` with
``Kp = issues * k``.  Containers (:func:`container_bits`): uint16 for
f16/bf16, uint32 for fp32 and xf32 (the 19-bit TF32 pattern shifted left by
13), uint8 for fp8/bf8, uint64 for f64; D uint32 (fp32) or uint64 (f64).

The builtin of each mnemonic (:func:`builtin_for`): the CDNA1/2 names
drop the ``v_`` prefix; CDNA3 keeps the CDNA2 builtins for the renamed fp32,
fp16, bf16 (the ``_1k`` datapath) and fp64 forms (llvm-project
clang/include/clang/Basic/BuiltinsAMDGPU.def; llvm/test/MC/AMDGPU/mai-gfx940.s
shows ``v_mfma_f32_32x32x4bf16_1k`` assembling to
``v_mfma_f32_32x32x4_2b_bf16`` on gfx940), and its xf32/fp8 builtins drop
``v_``.

Nothing generated here has been run on an AMD GPU by this project.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..catalogue import ARCHS, CATALOGUE
from ..errors import UnknownNameError, choices
from ..isa import InstrShape
from .amd_layouts import WAVE, MfmaLayout, layout, type_tag
from .kernels import KernelSource

__all__ = [
    "hip_kernels",
    "hip_source",
    "kernel_for",
    "kernel_file",
    "builtin_for",
    "container_bits",
    "device_info_source",
    "ENTRY_POINT",
    "NAME_SYMBOL",
    "INFO_ENTRY_POINT",
]

#: The host entry point of every kernel library.
ENTRY_POINT = "smtmma_hip_run"
#: Returns the MFMA mnemonic a kernel library runs (a check that the right file was loaded).
NAME_SYMBOL = "smtmma_hip_kernel_name"
#: The entry point of the device-information helper (:func:`device_info_source`).
INFO_ENTRY_POINT = "smtmma_hip_device_info"

_C_UINT = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}
_CDNA3_RENAMED = re.compile(r"^v_mfma_(f32|f64)_(\d+x\d+x\d+)(?:_\d+b)?_(f32|f16|bf16|f64)$")


def builtin_for(name: str) -> str:
    """The clang builtin (``__builtin_amdgcn_mfma_...``) that emits the MFMA mnemonic ``name``."""
    key = name.strip().lower()
    if not key.startswith("v_mfma_"):
        raise UnknownNameError(f"{name!r} is not an MFMA mnemonic (v_mfma_...)")
    m = _CDNA3_RENAMED.match(key)
    if m:  # CDNA3 spelling of a CDNA1/2 instruction: the CDNA2 builtin (bf16 is the _1k form)
        out_t, mnk, in_t = m.groups()
        return f"__builtin_amdgcn_mfma_{out_t}_{mnk}{in_t}" + ("_1k" if in_t == "bf16" else "")
    return "__builtin_amdgcn_" + key[2:]


def container_bits(lay: MfmaLayout) -> tuple[int, int]:
    """(A/B, C/D) container widths in bits of the kernel's global arrays."""
    return lay.in_bits, lay.out_bits


def _input_kind(lay: MfmaLayout) -> str:
    """How a lane's E elements become the builtin's A/B argument."""
    tag = type_tag(lay.name)
    if tag in ("fp8", "bf8"):
        return "i64"
    if tag == "bf16":
        return "i16"
    return {"f32": "f32", "xf32": "f32", "f16": "f16", "f64": "f64"}[tag]


_TYPEDEFS = """\
typedef float f32x2 __attribute__((ext_vector_type(2)));
typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef float f32x32 __attribute__((ext_vector_type(32)));
typedef double f64x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));
typedef unsigned short u16x4 __attribute__((ext_vector_type(4)));
typedef short i16x2 __attribute__((ext_vector_type(2)));
typedef short i16x4 __attribute__((ext_vector_type(4)));
"""


def _operand(lay: MfmaLayout, var: str, ptr: str, offs: Sequence[str]) -> list[str]:
    """C++ lines declaring the builtin's A or B argument ``var`` from ``ptr[offs[e]]``."""
    kind, E = _input_kind(lay), lay.in_per_lane
    loads = [f"{ptr}[{o}]" for o in offs]
    if kind == "f32" and E == 1:
        return [f"const float {var} = __builtin_bit_cast(float, {loads[0]});"]
    if kind == "f32":
        items = ", ".join(f"__builtin_bit_cast(float, {x})" for x in loads)
        return [f"const f32x{E} {var} = {{{items}}};"]
    if kind == "f64":
        return [f"const double {var} = __builtin_bit_cast(double, {loads[0]});"]
    if kind == "f16":
        items = ", ".join(f"(unsigned short){x}" for x in loads)
        return [f"const u16x4 {var}_bits = {{{items}}};", f"const f16x4 {var} = __builtin_bit_cast(f16x4, {var}_bits);"]
    if kind == "i16":
        items = ", ".join(f"(short){x}" for x in loads)
        return [f"const i16x{E} {var} = {{{items}}};"]
    # fp8/bf8: eight bytes in one 64-bit operand, element e in bits [8e+7:8e]
    parts = " | ".join(f"((uint64_t){x} << {8 * e})" for e, x in enumerate(loads))
    return [f"const long {var} = (long)({parts});"]


def _acc_type(lay: MfmaLayout) -> str:
    ed = lay.out_per_lane
    if lay.out_bits == 64:
        return "double" if ed == 1 else f"f64x{ed}"
    return f"f32x{ed}"


def _table(name: str, values: Sequence[int]) -> str:
    rows = [", ".join(str(int(v)) for v in values[i : i + 32]) for i in range(0, len(values), 32)]
    body = ",\n    ".join(rows)
    return f"__constant__ int {name}[{len(values)}] = {{\n    {body}\n}};"


def hip_source(arch: str, instr: str, op: str, shape: InstrShape) -> str:
    """The HIP C++ source (text) of the kernel that runs ``shape`` (an MFMA of ``arch``); see the module docstring."""
    lay = layout(shape.name)
    if (lay.m, lay.n, lay.k) != (shape.m, shape.n, shape.k):
        raise AssertionError(f"{shape.name}: shape {shape} differs from its layout")
    E, ED = lay.in_per_lane, lay.out_per_lane
    in_t, out_t = _C_UINT[lay.in_bits], _C_UINT[lay.out_bits]
    out_float = "double" if lay.out_bits == 64 else "float"
    a_tab, d_tab = lay.a_table.reshape(WAVE * E, 3), lay.d_table.reshape(WAVE * ED, 3)
    out_off = [(b * lay.m + i) * lay.n + j for b, i, j in d_tab.tolist()]
    acc = _acc_type(lay)
    scalar_acc = acc == "double"
    el = (lambda e: "acc") if scalar_acc else (lambda e: f"acc[{e}]")

    lines = [
        f"// smtmma HIP kernel: {arch} {instr} ({op}) {shape.name}",
        f"// one block: m={lay.m} n={lay.n} k={lay.k}; {lay.blocks} block(s) per instruction; "
        f"{E} A/B element(s) and {ED} C/D element(s) per lane",
        f"// layout source: {lay.source}",
        "// generated by smtmma.hw.hip_kernels; CBSZ = ABID = BLGP = 0",
        "#include <hip/hip_runtime.h>",
        "#include <stdint.h>",
        "#include <stdio.h>",
        "",
        _TYPEDEFS,
        f"static constexpr int M_ = {lay.m}, N_ = {lay.n}, K_ = {lay.k}, BLOCKS = {lay.blocks}, E_ = {E}, ED_ = {ED};",
        "",
        "// element e of lane l: block, row of A (= column of B), k within the issue",
        _table("IN_BLK", a_tab[:, 0].tolist()),
        _table("IN_ROW", a_tab[:, 1].tolist()),
        _table("IN_K", a_tab[:, 2].tolist()),
        "// element e of lane l of C/D: offset (block * M + i) * N + j",
        _table("OUT_OFF", out_off),
        "",
        "__global__ void __launch_bounds__(64)",
        f"smtmma_mfma_kernel(const {in_t} *__restrict__ A, const {in_t} *__restrict__ B,",
        f"                   const {out_t} *__restrict__ C, {out_t} *__restrict__ D, int issues)",
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
        "        a_off[e] = ((long)IN_BLK[t] * M_ + IN_ROW[t]) * Kp + IN_K[t];",
        "        b_off[e] = ((long)IN_BLK[t] * Kp + IN_K[t]) * N_ + IN_ROW[t];",
        "    }",
        f"    {acc} acc;",
    ]
    for e in range(ED):
        lines.append(f"    {el(e)} = __builtin_bit_cast({out_float}, C[cd_w + OUT_OFF[lane * ED_ + {e}]]);")
    lines += [
        "    for (int s = 0; s < issues; ++s) {",
        "        const long sa = (long)s * K_, sb = (long)s * K_ * N_;",
    ]
    lines += ["        " + x for x in _operand(lay, "a", "a_w", [f"a_off[{e}] + sa" for e in range(E)])]
    lines += ["        " + x for x in _operand(lay, "b", "b_w", [f"b_off[{e}] + sb" for e in range(E)])]
    lines += [
        f"        acc = {builtin_for(shape.name)}(a, b, acc, 0, 0, 0);",
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
        "                              long waves, int issues, char *err, int err_len)",
        "{",
        "    const size_t tiles = (size_t)waves * BLOCKS, kp = (size_t)issues * K_;",
        f"    const size_t a_bytes = tiles * M_ * kp * sizeof({in_t});",
        f"    const size_t b_bytes = tiles * kp * N_ * sizeof({in_t});",
        f"    const size_t cd_bytes = tiles * M_ * N_ * sizeof({out_t});",
        "    void *da = 0, *db = 0, *dc = 0, *dd = 0;",
        "    hipError_t st = hipSuccess;",
        "    if (waves <= 0 || issues <= 0) {",
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
        "        hipLaunchKernelGGL(smtmma_mfma_kernel, dim3((unsigned)waves), dim3(64), 0, 0,",
        f"                           (const {in_t} *)da, (const {in_t} *)db, (const {out_t} *)dc, ({out_t} *)dd, issues);",
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


def kernel_file(arch: str, shape: InstrShape) -> str:
    """File name of the kernel of ``shape`` on ``arch``."""
    return f"{arch}_{shape.name}.hip"


def hip_kernels() -> list[KernelSource]:
    """One :class:`KernelSource` per (AMD catalogue arch, instr, op family, MFMA shape), in catalogue order."""
    out: list[KernelSource] = []
    for e in CATALOGUE:
        if ARCHS[e.arch].vendor != "amd":
            continue
        for s in e.shapes:
            out.append(KernelSource(kernel_file(e.arch, s), "amd", e.arch, e.instr, e.op, s, e.arch,
                                    hip_source(e.arch, e.instr, e.op, s)))
    return out


def kernel_for(arch: str, instr: str, op: str, shape_name: str) -> KernelSource:
    """The :class:`KernelSource` of one (arch, instr, op, MFMA mnemonic); UnknownNameError if there is none."""
    for e in CATALOGUE:
        if (e.arch, e.instr, e.op) == (arch, instr, op):
            for s in e.shapes:
                if s.name == shape_name:
                    return KernelSource(kernel_file(arch, s), "amd", arch, instr, op, s, arch,
                                        hip_source(arch, instr, op, s))
            raise UnknownNameError(f"{arch} {instr} ({op}) has no MFMA {shape_name!r}; valid: "
                                   f"{choices(x.name for x in e.shapes)}")
    raise UnknownNameError(f"no AMD catalogue row {arch} {instr} ({op})")
