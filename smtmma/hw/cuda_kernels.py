"""CUDA C++ kernels with inline PTX, one per (NVIDIA catalogue row, instruction shape).

Every kernel has the same signature::

    NAME(const AT* A, const BT* B, const CT* C, CT* D, const u8* SA, const u8* SB, int tiles, int issues)

and runs ``tiles`` independent tiles, each an instruction-shaped problem
chained over ``issues`` instructions (Alg. 5: D of one issue is C of the
next): A is (tiles, m, Kp), B (tiles, Kp, n), C and D (tiles, m, n), with
Kp = issues * k; block-scaled kernels read SA (tiles, m, Kp / block) and
SB (tiles, Kp / block, n).  Arrays hold one element per array entry in its
container: ``u16`` for fp16/bf16, ``u32`` for tf32 (the 19-bit pattern
shifted left by 13 into its fp32 container) and fp32, ``u64`` for fp64,
``u8`` for fp8/fp6/fp4 and scale factors (one element per byte, in the low
bits; the kernel moves e2m1 into bits 2..5 where ``.kind::f8f6f4`` wants it
and packs two e2m1 per byte for ``.kind::mxf4*``).

Launch geometry (:class:`KernelSpec`): ``mma.sync`` kernels run one warp
per tile (per 4 tiles for the Volta ``m8n8k4`` quad pairs), 4 warps per
block; ``wgmma`` and ``tcgen05`` kernels run one 128-thread block per
tile.  ``tiles`` must be a multiple of :attr:`KernelSpec.tiles_per_block`
(the host pads with zero tiles).

Per-thread index arithmetic is generated from :mod:`smtmma.hw.nv_layouts`
(the layouts are written once, as Python functions that also print C).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..catalogue import ARCHS, CATALOGUE, Entry
from ..isa import InstrShape
from .device import DeviceError
from .kernels import KernelSource
from .nv_layouts import Expr, Fragment, InstrLayout, SmemTile, instr_layout, kind_of

__all__ = ["KernelSpec", "kernel_spec", "kernel_source", "cuda_kernels", "unsupported_kernels",
           "toolchain_arch", "container_bits", "ptx_type", "tcgen05_idesc", "MMA_WARPS"]

#: Warps per block of an mma.sync kernel.
MMA_WARPS = 4

_PTX_TYPE = {"fp16": "f16", "bf16": "bf16", "tf32": "tf32", "fp32": "f32", "fp64": "f64",
             "e4m3": "e4m3", "e5m2": "e5m2", "e3m2": "e3m2", "e2m3": "e2m3", "e2m1": "e2m1",
             "ue8m0": "ue8m0", "ue4m3": "ue4m3"}

_CTYPE = {8: "u8", 16: "u16", 32: "u32", 64: "u64"}


def ptx_type(fmt: str) -> str:
    """The PTX type qualifier (without the dot) of a format name."""
    try:
        return _PTX_TYPE[fmt]
    except KeyError:
        raise DeviceError(f"cuda: no PTX type for format {fmt}") from None


def container_bits(fmt: str) -> int:
    """Bits of the array entry that carries one element of ``fmt`` (8, 16, 32 or 64)."""
    return {"fp64": 64, "fp32": 32, "tf32": 32, "fp16": 16, "bf16": 16}.get(fmt, 8)


def toolchain_arch(arch: str, shape: InstrShape) -> str:
    """nvcc ``-arch`` of a kernel: ``sm_90a`` for wgmma, ``sm_100a``/``sm_103a``/``sm_110a`` for tcgen05, ``sm_120a``/``sm_121a``
    for the ``.kind`` forms of mma.sync."""
    base = "sm_" + arch[2:]
    if shape.name.startswith("wgmma") or shape.name.startswith("tcgen05"):
        return base + "a"
    if kind_of(shape) is not None:
        return base + "a"
    return base


@dataclass(frozen=True)
class KernelSpec:
    """One kernel: the formats, the instruction shape, its layout and launch geometry.

    ``block`` is the scale-factor block (elements of k per scale) of
    block-scaled kinds, else None.  ``tiles_per_block`` tiles run in one
    block of ``threads_per_block`` threads.
    """

    name: str
    instr: str
    shape: InstrShape
    a_fmt: str
    b_fmt: str
    c_fmt: str
    scale_fmt: Optional[str]
    block: Optional[int]
    layout: InstrLayout

    @property
    def family(self) -> str:
        """``mma``, ``wgmma`` or ``tcgen05``."""
        return self.layout.family

    @property
    def threads_per_block(self) -> int:
        """Threads of one block."""
        return 32 * MMA_WARPS if self.family == "mma" else 128

    @property
    def tiles_per_block(self) -> int:
        """Tiles one block computes."""
        return MMA_WARPS * self.layout.tiles if self.family == "mma" else 1


def _slug(shape: InstrShape) -> str:
    out = shape.name.replace("mma.sync.aligned.", "mma_").replace("wgmma.mma_async.sync.aligned.", "wgmma_")
    out = out.replace("tcgen05.mma.cta_group::1.", f"tcgen05_m{shape.m}n{shape.n}k{shape.k}_")
    return "".join(ch if ch.isalnum() else "_" for ch in out).replace("__", "_").strip("_")


def kernel_spec(entry: Entry, shape: InstrShape) -> KernelSpec:
    """The kernel of catalogue row ``entry`` for one of its shapes; DeviceError if this package cannot run it."""
    m = entry.model
    if m.c_fmt != m.d_fmt:
        # e.g. f16f32c16 (m8n8k4 .f32.f16.f16.f16): the kernels keep C and D in one accumulator array of one
        # type and chain D into C; a C of another format needs its own fragment and a second mnemonic.
        raise DeviceError(
            f"cuda: {entry.instr} ({shape.name}) reads C as {m.c_fmt} and writes D as {m.d_fmt}; kernels with C "
            f"and D of different formats are not supported yet by the cuda device; use sim:{entry.arch}")
    block = m.block if m.scale_fmt else None
    layout = instr_layout(shape, m.a_fmt, m.b_fmt, m.c_fmt, block)
    name = f"smtmma_{entry.instr}_{_slug(shape)}"
    return KernelSpec(name, entry.instr, shape, m.a_fmt, m.b_fmt, m.c_fmt, m.scale_fmt, block, layout)


# ---------------------------------------------------------------- PTX mnemonics


def _mma_mnemonic(s: KernelSpec) -> str:
    sh = s.shape
    kind = kind_of(sh)
    head = f"mma.sync.aligned.m{sh.m}n{sh.n}k{sh.k}.row.col"
    a, b, c = ptx_type(s.a_fmt), ptx_type(s.b_fmt), ptx_type(s.c_fmt)
    if kind is None:
        return f"{head}.{c}.{a}.{b}.{c}"
    if kind == "f8f6f4":
        return f"{head}.kind::f8f6f4.{c}.{a}.{b}.{c}"
    vec = f"scale_vec::{sh.k // (s.block or sh.k)}X"
    return f"{head}.kind::{kind}.block_scale.{vec}.{c}.{a}.{b}.{c}.{ptx_type(s.scale_fmt or 'ue8m0')}"


def _wgmma_mnemonic(s: KernelSpec) -> str:
    sh = s.shape
    return f"wgmma.mma_async.sync.aligned.m{sh.m}n{sh.n}k{sh.k}.{ptx_type(s.c_fmt)}.{ptx_type(s.a_fmt)}.{ptx_type(s.b_fmt)}"


def tcgen05_idesc(s: KernelSpec) -> int:
    """The 32-bit instruction descriptor of a tcgen05 kernel (PTX 9.7.16.4.2; cutlass UMMA::InstrDescriptor).

    Bits 4-5 D type (F16 0, F32 1), 7-9 / 10-12 A / B type (kind::f16:
    F16 0, BF16 1; kind::tf32: TF32 2; kind::f8f6f4: E4M3 0, E5M2 1), 15-16
    transpose (0: K-major), 17-22 N >> 3, 24-28 M >> 4.
    """
    codes = {"fp16": 0, "bf16": 1, "tf32": 2, "e4m3": 0, "e5m2": 1}
    dtype = {"fp16": 0, "fp32": 1}[s.c_fmt]
    sh = s.shape
    return (dtype << 4) | (codes[s.a_fmt] << 7) | (codes[s.b_fmt] << 10) | ((sh.n >> 3) << 17) | ((sh.m >> 4) << 24)


# ---------------------------------------------------------------- C helpers

_TYPES = """#ifndef SMTMMA_TYPES
#define SMTMMA_TYPES
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
#endif
"""

_SMEM_HELPERS = """#ifndef SMTMMA_SMEM_HELPERS
#define SMTMMA_SMEM_HELPERS
static __device__ __forceinline__ u32 smtmma_smem_addr(const void* p)
{
    u64 a;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return (u32)a;
}

/* K-major, no-swizzle matrix descriptor: start, leading / stride byte offsets (16-byte units); version bit 46 for tcgen05 */
static __device__ __forceinline__ u64 smtmma_desc(u32 addr, u32 lbo, u32 sbo, u64 version)
{
    return (u64)((addr & 0x3FFFF) >> 4) | ((u64)(lbo >> 4) << 16) | ((u64)(sbo >> 4) << 32) | (version << 46);
}
#endif
"""

_TID, _IDX = Expr("t"), Expr("i")  # the kernels' names for the thread and the element index


def _rc(frag: Fragment) -> tuple[str, str]:
    """C expressions of (row, col) of element ``i`` of thread ``t``."""
    r, c = frag.at(_TID, _IDX)
    return str(r), str(c)


def _acc_kind(s: KernelSpec) -> str:
    """How accumulators live in registers: f32 (float), f16x2 (u32 pairs) or f64 (double)."""
    return {"fp32": "f32", "fp16": "f16x2", "fp64": "f64"}[s.c_fmt]


def _acc_decl(s: KernelSpec, frag: Fragment) -> list[str]:
    kind = _acc_kind(s)
    if kind == "f32":
        return [f"    float acc[{frag.count}];"]
    if kind == "f64":
        return [f"    double acc[{frag.count}];"]
    return [f"    u32 acc[{frag.regs}];", "    #pragma unroll", f"    for (int r = 0; r < {frag.regs}; ++r) acc[r] = 0u;"]


def _acc_loop(frag: Fragment, n: int, put: str) -> list[str]:
    """A loop over the accumulator fragment's elements: ``row``, ``col`` and ``idx`` (row-major in n columns), then ``put``."""
    row, col = _rc(frag)
    return ["    #pragma unroll", f"    for (int i = 0; i < {frag.count}; ++i) {{",
            f"        const int row = {row}, col = {col};", f"        const long long idx = (long long)row * {n} + col;",
            f"        {put}", "    }"]


def _acc_load(s: KernelSpec, frag: Fragment) -> list[str]:
    kind = _acc_kind(s)
    if kind == "f32":
        put = "acc[i] = __uint_as_float(Ct[idx]);"
    elif kind == "f64":
        put = "acc[i] = __longlong_as_double((long long)Ct[idx]);"
    else:
        put = "acc[i >> 1] |= (u32)Ct[idx] << (16 * (i & 1));"
    return _acc_loop(frag, s.shape.n, put)


def _acc_store(s: KernelSpec, frag: Fragment) -> list[str]:
    kind = _acc_kind(s)
    if kind == "f32":
        put = "Dt[idx] = __float_as_uint(acc[i]);"
    elif kind == "f64":
        put = "Dt[idx] = (u64)__double_as_longlong(acc[i]);"
    else:
        put = "Dt[idx] = (u16)(acc[i >> 1] >> (16 * (i & 1)));"
    return _acc_loop(frag, s.shape.n, put)


def _gather(var: str, frag: Fragment, index: str, src: str) -> list[str]:
    """Registers ``var`` of one operand fragment; ``index`` is the C index into ``src`` from ``row``, ``col``."""
    row, col = _rc(frag)
    lines = []
    if frag.bits == 64:
        lines.append(f"        double {var}[{frag.regs}];")
        put = f"{var}[i] = __longlong_as_double((long long){src}[{index}]);"
    elif frag.bits == 32:
        lines.append(f"        u32 {var}[{frag.regs}];")
        put = f"{var}[i] = (u32){src}[{index}];"
    else:
        mask = (1 << frag.bits) - 1
        lines += [f"        u32 {var}[{frag.regs}];", "        #pragma unroll",
                  f"        for (int r = 0; r < {frag.regs}; ++r) {var}[r] = 0u;"]
        put = (f"{var}[i / {frag.per_reg}] |= ((((u32){src}[{index}]) << {frag.shift}) & {mask}u)"
               f" << ({frag.bits} * (i % {frag.per_reg}));")
    lines += ["        #pragma unroll", f"        for (int i = 0; i < {frag.count}; ++i) {{",
              f"            const int row = {row}, col = {col};", f"            {put}", "        }"]
    return lines


def _reg_constraint(frag: Fragment) -> str:
    return "d" if frag.bits == 64 else "r"


def _acc_constraint(s: KernelSpec) -> str:
    return {"f32": "+f", "f64": "+d", "f16x2": "+r"}[_acc_kind(s)]


def _acc_regs(s: KernelSpec, frag: Fragment) -> int:
    return frag.regs if _acc_kind(s) == "f16x2" else frag.count


def _signature(s: KernelSpec) -> str:
    at, bt = _CTYPE[container_bits(s.a_fmt)], _CTYPE[container_bits(s.b_fmt)]
    ct = _CTYPE[container_bits(s.c_fmt)]
    return (f'extern "C" __global__ void __launch_bounds__({s.threads_per_block}) {s.name}(\n'
            f"    const {at}* __restrict__ A, const {bt}* __restrict__ B, const {ct}* __restrict__ C, {ct}* __restrict__ D,\n"
            f"    const u8* __restrict__ SA, const u8* __restrict__ SB, int tiles, int issues)")


def _tile_pointers(s: KernelSpec) -> list[str]:
    sh = s.shape
    lines = [f"    const int Kp = issues * {sh.k};",
             f"    const auto* At = A + tile * ((long long){sh.m} * Kp);",
             f"    const auto* Bt = B + tile * ((long long){sh.n} * Kp);",
             f"    const auto* Ct = C + tile * (long long){sh.m * sh.n};",
             f"    auto* Dt = D + tile * (long long){sh.m * sh.n};"]
    if s.layout.scale_vec:
        nsf = s.layout.scale_vec
        lines += [f"    const int SK = issues * {nsf};",
                  f"    const u8* SAt = SA + tile * ((long long){sh.m} * SK);",
                  f"    const u8* SBt = SB + tile * ((long long){sh.n} * SK);"]
    else:
        lines += ["    (void)SA; (void)SB;"]
    return lines


def _operand_list(first: int, count: int) -> str:
    return ", ".join(f"%{first + j}" for j in range(count))


# ---------------------------------------------------------------- mma.sync kernels


def _mma_body(s: KernelSpec) -> list[str]:
    lay = s.layout
    sh = s.shape
    assert isinstance(lay.a, Fragment) and isinstance(lay.b, Fragment)
    c = lay.c
    tile_of = lay.tile_of(_TID)
    lines = ["    const int t = threadIdx.x & 31;",
             f"    const long long group = (long long)blockIdx.x * {MMA_WARPS} + (threadIdx.x >> 5);",
             f"    if (group * {lay.tiles} >= tiles) return;  /* whole warps only: mma.sync is .aligned */",
             f"    const long long tile = group * {lay.tiles} + {tile_of};"]
    lines += _tile_pointers(s)
    lines += _acc_decl(s, c) + _acc_load(s, c)
    lines += ["    for (int s = 0; s < issues; ++s) {"]
    lines += _gather("a", lay.a, f"(long long)row * Kp + s * {sh.k} + col", "At")
    lines += _gather("b", lay.b, f"(long long)(s * {sh.k} + row) * {sh.n} + col", "Bt")
    nd, na, nb = _acc_regs(s, c), lay.a.regs, lay.b.regs
    d_ops = _operand_list(0, nd)
    text = f"{_mma_mnemonic(s)} {{{d_ops}}}, {{{_operand_list(nd, na)}}}, {{{_operand_list(nd + na, nb)}}}, {{{d_ops}}}"
    inputs = [f'"{_reg_constraint(lay.a)}"(a[{j}])' for j in range(na)]
    inputs += [f'"{_reg_constraint(lay.b)}"(b[{j}])' for j in range(nb)]
    if lay.scale_a is not None and lay.scale_b is not None:
        nsf = lay.scale_vec
        lines += _gather("sfa", lay.scale_a, f"(long long)row * SK + s * {nsf} + col", "SAt")
        lines += _gather("sfb", lay.scale_b, f"(long long)(s * {nsf} + row) * {sh.n} + col", "SBt")
        lines += ["        const u16 zero = 0;  /* byte-id and thread-id selectors: all 0 (PTX 9.7.14.3) */"]
        k0 = nd + na + nb
        text += f", {{%{k0}}}, {{%{k0 + 1}, %{k0 + 2}}}, {{%{k0 + 3}}}, {{%{k0 + 4}, %{k0 + 5}}}"
        inputs += ['"r"(sfa[0])', '"h"(zero)', '"h"(zero)', '"r"(sfb[0])', '"h"(zero)', '"h"(zero)']
    outputs = [f'"{_acc_constraint(s)}"(acc[{j}])' for j in range(nd)]
    lines += [f'        asm volatile("{text};"', f"            : {', '.join(outputs)}",
              f"            : {', '.join(inputs)});", "    }"]
    lines += _acc_store(s, c)
    return lines


# ---------------------------------------------------------------- wgmma kernels


def _smem_fill(var: str, tile: SmemTile, src_index: str, count: int) -> list[str]:
    """Copy one issue's operand into its shared-memory layout; ``row``/``col`` index the operand's matrix."""
    off = tile.offset(Expr("row"), Expr("col"))
    return [f"        for (int e = threadIdx.x; e < {count}; e += blockDim.x) {{",
            f"            const int row = e / {tile.cols}, col = e % {tile.cols};",
            f"            {var}[{off}] = {src_index};", "        }"]


def _wgmma_body(s: KernelSpec) -> list[str]:
    lay = s.layout
    sh = s.shape
    assert isinstance(lay.a, Fragment) and isinstance(lay.b, SmemTile)
    bt = _CTYPE[container_bits(s.b_fmt)]
    c = lay.c
    lines = [f"    __shared__ __align__(128) {bt} sB[{lay.b.size}];",
             "    const int t = threadIdx.x;",
             "    const long long tile = blockIdx.x;",
             "    if (tile >= tiles) return;"]
    lines += _tile_pointers(s)
    lines += _acc_decl(s, c) + _acc_load(s, c)
    lines += [f"    const u64 bdesc = smtmma_desc(smtmma_smem_addr(sB), {lay.b.lbo}, {lay.b.sbo}, 0);",
              "    for (int s = 0; s < issues; ++s) {"]
    lines += _smem_fill("sB", lay.b, f"Bt[(long long)(s * {sh.k} + row) * {sh.n} + col]", lay.b.size)
    lines += ['        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");', "        __syncthreads();"]
    lines += _gather("a", lay.a, f"(long long)row * Kp + s * {sh.k} + col", "At")
    nd, na = _acc_regs(s, c), lay.a.regs
    trans = ", 0" if s.a_fmt in ("fp16", "bf16") else ""  # imm-trans-b (K-major) exists only for .f16/.bf16
    text = (f"{_wgmma_mnemonic(s)} {{{_operand_list(0, nd)}}}, {{{_operand_list(nd, na)}}}, %{nd + na}, 1, 1, 1{trans}")
    outputs = [f'"{_acc_constraint(s)}"(acc[{j}])' for j in range(nd)]
    inputs = [f'"r"(a[{j}])' for j in range(na)] + ['"l"(bdesc)']
    fence = f'asm volatile("" : "{_acc_constraint(s)}"(acc[j]) :: "memory");'
    lines += ['        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");',
              f'        asm volatile("{text};"', f"            : {', '.join(outputs)}",
              f"            : {', '.join(inputs)});",
              '        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");',
              '        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");',
              "        #pragma unroll", f"        for (int j = 0; j < {nd}; ++j) {fence}",
              "        __syncthreads();  /* sB is rewritten by the next issue */", "    }"]
    lines += _acc_store(s, c)
    return lines


# ---------------------------------------------------------------- tcgen05 kernels


def _tmem_cols(n: int) -> int:
    cols = 32
    while cols < n:
        cols *= 2
    return cols


def _tcgen05_body(s: KernelSpec) -> list[str]:
    lay = s.layout
    sh = s.shape
    assert isinstance(lay.a, SmemTile) and isinstance(lay.b, SmemTile)
    at, bt = _CTYPE[container_bits(s.a_fmt)], _CTYPE[container_bits(s.b_fmt)]
    cols = _tmem_cols(sh.n)
    row, col = _rc(lay.c)
    wide = s.c_fmt == "fp32"
    regs32 = ", ".join(f"%{j + 1}" for j in range(32))
    st_in = ", ".join(f'"r"(v[{j}])' for j in range(32))
    ld_out = ", ".join(f'"=r"(v[{j}])' for j in range(32))
    ld_regs = ", ".join(f"%{j}" for j in range(32))
    kind = kind_of(sh)
    lines = [f"    __shared__ __align__(128) {at} sA[{lay.a.size}];",
             f"    __shared__ __align__(128) {bt} sB[{lay.b.size}];",
             "    __shared__ u32 tmem_slot;",
             "    __shared__ __align__(8) u64 mbar;",
             "    const int t = threadIdx.x, warp = t >> 5;",
             "    const long long tile = blockIdx.x;",
             "    if (tile >= tiles) return;"]
    lines += _tile_pointers(s)
    lines += ["    const u32 mbar_addr = smtmma_smem_addr(&mbar);",
              "    if (warp == 0) {",
              f'        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], {cols};"'
              ' :: "r"(smtmma_smem_addr(&tmem_slot)) : "memory");',
              '        asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");',
              "    }",
              "    if (t == 0) {",
              '        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(mbar_addr) : "memory");',
              '        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");',
              "    }",
              '    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");',
              "    __syncthreads();",
              '    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");',
              "    const u32 tmem = tmem_slot;",
              "    const u32 lanes = tmem + ((u32)(warp * 32) << 16);  /* warp w reaches tensor-memory lanes 32w.. */",
              "    /* C -> tensor memory (Layout D: row t in lane t, column i); 16-bit C unpacked in the low half */",
              "    #pragma unroll",
              f"    for (int c0 = 0; c0 < {sh.n}; c0 += 32) {{",
              "        u32 v[32];",
              "        #pragma unroll",
              "        for (int j = 0; j < 32; ++j) {",
              "            const int i = c0 + j;",
              f"            const int row = {row}, col = {col};",
              f"            v[j] = (u32)Ct[(long long)row * {sh.n} + col];",
              "        }",
              f'        asm volatile("tcgen05.st.sync.aligned.32x32b.x32.b32 [%0], {{{regs32}}};"'
              f' :: "r"(lanes + c0), {st_in} : "memory");',
              "    }",
              '    asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");',
              f"    const u64 adesc = smtmma_desc(smtmma_smem_addr(sA), {lay.a.lbo}, {lay.a.sbo}, 1);",
              f"    const u64 bdesc = smtmma_desc(smtmma_smem_addr(sB), {lay.b.lbo}, {lay.b.sbo}, 1);",
              f"    const u32 idesc = {tcgen05_idesc(s):#010x}u;",
              "    for (int s = 0; s < issues; ++s) {"]
    lines += _smem_fill("sA", lay.a, f"At[(long long)row * Kp + s * {sh.k} + col]", lay.a.size)
    lines += _smem_fill("sB", lay.b, f"Bt[(long long)(s * {sh.k} + row) * {sh.n} + col]", lay.b.size)
    lines += ['        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");',
              '        asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");',
              "        __syncthreads();",
              '        asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");',
              "        if (t == 0) {",
              '            asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0; '
              f'tcgen05.mma.cta_group::1.kind::{kind} [%0], %1, %2, %3, p; }}"',
              '                :: "r"(tmem), "l"(adesc), "l"(bdesc), "r"(idesc), "r"(1) : "memory");',
              '            asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"'
              ' :: "r"(mbar_addr) : "memory");',
              "        }",
              "        u32 done = 0;",
              "        while (!done)",
              '            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; '
              'selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(mbar_addr), "r"((u32)(s & 1)) : "memory");',
              '        asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");',
              "    }",
              "    #pragma unroll",
              f"    for (int c0 = 0; c0 < {sh.n}; c0 += 32) {{",
              "        u32 v[32];",
              f'        asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 {{{ld_regs}}}, [%32];"',
              f'            : {ld_out} : "r"(lanes + c0) : "memory");',
              '        asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");',
              "        #pragma unroll",
              "        for (int j = 0; j < 32; ++j) {",
              "            const int i = c0 + j;",
              f"            const int row = {row}, col = {col};",
              f"            Dt[(long long)row * {sh.n} + col] = {'v[j]' if wide else '(u16)(v[j] & 0xFFFFu)'};",
              "        }",
              "    }",
              '    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");',
              "    __syncthreads();",
              "    if (warp == 0)",
              f'        asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, {cols};" :: "r"(tmem) : "memory");']
    return lines


# ---------------------------------------------------------------- sources


def _header(s: KernelSpec, archs: list[str]) -> str:
    lay = s.layout
    srcs = sorted({op.source for op in lay.operands().values() if op.source})
    lines = [f"/* smtmma kernel {s.name}: {s.instr} on {s.shape.name} ({', '.join(archs)}).",
             f"   A {s.a_fmt}, B {s.b_fmt}, C/D {s.c_fmt}" + (f", scales {s.scale_fmt} per {s.block}" if s.block else "") + ".",
             "   Layouts (smtmma/hw/nv_layouts.py): " + "; ".join(srcs) + ". */"]
    return "\n".join(lines)


def kernel_source(spec: KernelSpec, archs: Optional[list[str]] = None, prelude: bool = True) -> str:
    """CUDA C++ source of one kernel (with the shared prelude of typedefs and helpers unless ``prelude`` is False)."""
    body = {"mma": _mma_body, "wgmma": _wgmma_body, "tcgen05": _tcgen05_body}[spec.family](spec)
    parts: list[str] = []
    if prelude:
        parts = [_TYPES] + ([_SMEM_HELPERS] if spec.family != "mma" else [])
    parts += [_header(spec, archs or []), _signature(spec), "{", *body, "}", ""]
    return "\n".join(parts)


def _nvidia_rows() -> list[Entry]:
    return [e for e in CATALOGUE if ARCHS[e.arch].vendor == "nvidia"]


def cuda_kernels() -> list[KernelSource]:
    """One :class:`KernelSource` per NVIDIA catalogue row and instruction shape this package can run.

    Rows of the same instruction and shape share source text; each row
    names its own architecture and nvcc ``-arch``.  Shapes refused by
    :func:`kernel_spec` are listed by :func:`unsupported_kernels`.
    """
    specs: list[tuple[Entry, InstrShape, KernelSpec]] = []
    for e in _nvidia_rows():
        for sh in e.shapes:
            try:
                specs.append((e, sh, kernel_spec(e, sh)))
            except DeviceError:
                continue
    archs_of: dict[str, list[str]] = {}
    for e, _, sp in specs:
        archs_of.setdefault(sp.name, []).append(e.arch)
    texts: dict[str, str] = {}
    out = []
    for e, sh, sp in specs:
        if sp.name not in texts:
            texts[sp.name] = kernel_source(sp, sorted(set(archs_of[sp.name]), key=list(ARCHS).index))
        out.append(KernelSource(file=f"{e.arch}_{sp.name[len('smtmma_'):]}.cu", vendor="nvidia", arch=e.arch,
                                instr=e.instr, op=e.op, shape=sh, toolchain_arch=toolchain_arch(e.arch, sh),
                                source=texts[sp.name]))
    return out


def unsupported_kernels() -> list[tuple[str, str, str, str]]:
    """(arch, instr, shape name, reason) of every NVIDIA catalogue shape that has no kernel."""
    out = []
    for e in _nvidia_rows():
        for sh in e.shapes:
            try:
                kernel_spec(e, sh)
            except DeviceError as err:
                out.append((e.arch, e.instr, sh.name, str(err)))
    return out
