"""Instruction variants found by running microsoft/MMA-Sim beside smtmma (issue 10, item 11).

Mixed .kind::f8f6f4 operands and their FP16 output, MX instructions with
different A and B types, tcgen05 .kind::mxf4nvf4 with UE8M0 per 16,
tcgen05 .kind::f16 f16 x bf16, and Volta/Turing m8n8k4 with an fp16 C and
an fp32 D.  Every expected value below is worked out by hand in the comment
beside it; the catalogue-wide tests (formula vs simulator, kernels, traces)
pick these rows up by parametrization.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

from smtmma import simulate_dot
from smtmma.catalogue import CATALOGUE, INSTRS, lookup, model_of
from smtmma.errors import UnknownNameError
from smtmma.hw.cuda_kernels import cuda_kernels, kernel_spec, toolchain_arch
from smtmma.hw.device import DeviceError
from smtmma.vectors import parse_line

F8F6F4 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")


def _dot(arch: str, instr: str, a: list[int], b: list[int], c: int, sa: Optional[list[int]] = None,
         sb: Optional[list[int]] = None, op: Optional[str] = None) -> int:
    kw = {}
    if sa is not None and sb is not None:
        kw = {"scale_a": np.array([sa], dtype=np.uint64), "scale_b": np.array([sb], dtype=np.uint64)}
    d = simulate_dot(arch, instr, np.array([a], dtype=np.uint64), np.array([b], dtype=np.uint64),
                     np.array([c], dtype=np.uint64), op=op, **kw)
    return int(d[0])


# ---------------------------------------------------------------- catalogue rows


@pytest.mark.parametrize("arch,op", [("sm100", "tcgen05"), ("sm120", "mma")])
def test_every_f8f6f4_pair_with_both_outputs(arch: str, op: str) -> None:
    """All 25 A/B pairs of .kind::f8f6f4, FP32 (RZ) and FP16 (RNE) output: T4 FP8/6/4 rows, L=32, F=25."""
    for a in F8F6F4:
        for b in F8F6F4:
            for cd, rho in (("f32", "rz-fp32"), ("f16", "rne-fp16")):
                m = lookup(arch, f"{a}{b}{cd}", op).model
                assert (m.kind, m.a_fmt, m.b_fmt, m.L, m.F, m.rho, m.nan) == ("t-fdpa", a, b, 32, 25, rho, "nvidia")
                assert m.c_fmt == m.d_fmt == ("fp32" if cd == "f32" else "fp16")


@pytest.mark.parametrize("arch,op", [("sm100", "tcgen05"), ("sm120", "mma")])
def test_every_mx_pair_is_st_fdpa(arch: str, op: str) -> None:
    """.kind::mxf8f6f4 takes any A/B pair: ST-FDPA (T4 MXFP8/6/4), UE8M0 per 32; mx{a}f32 or mx{a}{b}f32."""
    for a in F8F6F4:
        for b in F8F6F4:
            name = f"mx{a}f32" if a == b else f"mx{a}{b}f32"
            e = lookup(arch, name, op)
            m = e.model
            assert (m.kind, m.a_fmt, m.b_fmt, m.L, m.F, m.rho, m.block, m.scale_fmt) == (
                "st-fdpa", a, b, 32, 25, "rz-fp32", 32, "ue8m0")
            assert INSTRS[name].block == 32 and e.source.startswith("T4")


def test_mxf4nvf4_scale_variants() -> None:
    """T5 (GST-FDPA L=64 G=16 F=35) with each instruction's scale format and block, from Instr.block."""
    for arch in ("sm100", "sm120"):
        for instr, block, sfmt in (("mxf4f32", 32, "ue8m0"), ("nvf4f32", 16, "ue4m3")):
            m = lookup(arch, instr).model
            assert (m.kind, m.block, m.scale_fmt) == ("gst-fdpa", block, sfmt) == ("gst-fdpa", INSTRS[instr].block, INSTRS[instr].scale_fmt)
    m = lookup("sm100", "mxf4b16f32").model
    assert (m.kind, m.L, m.G, m.F, m.rho, m.block, m.scale_fmt) == ("gst-fdpa", 64, 16, 35, "rz-fp32", 16, "ue8m0")
    assert lookup("sm100", "mxf4b16").shapes[0].name == "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale"


def test_variants_ptx_does_not_allow_are_absent() -> None:
    """MMA-Sim lists sm_120a mma.sync mxf4nvf4 with UE8M0 per 16 and UE4M3 per 32; ptxas 13.0 refuses both.

    Also absent: f16 x bf16 with FP16 D (MMA-Sim allows f16 D only for f16 x f16) and block-scaled FP16 D.
    """
    with pytest.raises(UnknownNameError, match="sm120 has no instruction mxf4b16f32"):
        lookup("sm120", "mxf4b16f32")
    assert not any(i.scale_fmt == "ue4m3" and i.block == 32 for i in INSTRS.values())
    assert not any(i.a_fmt != i.b_fmt and {i.a_fmt, i.b_fmt} == {"fp16", "bf16"} and i.d_fmt != "fp32" for i in INSTRS.values())
    assert all(i.d_fmt == "fp32" for i in INSTRS.values() if i.scale_fmt)


def test_tcgen05_f16_bf16_mixes() -> None:
    """T4 Blackwell BF16/FP16 -> FP32 (L=16, F=25, RZ) on tcgen05 only, with the bf16 row's alignment floor (003)."""
    for instr, a, b in (("f16bf16f32", "fp16", "bf16"), ("bf16f16f32", "bf16", "fp16")):
        rows = [e for e in CATALOGUE if e.instr == instr]
        assert [(e.arch, e.op, e.default) for e in rows] == [(a, "tcgen05", True) for a in ("sm100", "sm103", "sm110")]
        m = rows[0].model
        assert (m.kind, m.a_fmt, m.b_fmt, m.L, m.F, m.rho, m.emax_floor) == ("t-fdpa", a, b, 16, 25, "rz-fp32", -133)
        assert m.emax_floor == lookup("sm100", "bf16f32", "tcgen05").model.emax_floor


def test_m8n8k4_fp16_c_fp32_d_rows_and_turing_shape() -> None:
    for arch, F in (("sm70", 23), ("sm75", 24)):
        e = lookup(arch, "f16f32c16")
        m = e.model
        assert (m.kind, m.a_fmt, m.b_fmt, m.c_fmt, m.d_fmt, m.L, m.F, m.rho) == (
            "t-fdpa", "fp16", "fp16", "fp16", "fp32", 4, F, "rz-fp32")
        assert [s.name for s in e.shapes] == ["mma.sync.aligned.m8n8k4"]
        assert lookup(arch, "fp16fp32c16").instr == "f16f32c16"
    for instr in ("f16f32", "f16f16"):  # Turing keeps Volta's m8n8k4; one issue is one FDPA of k=4 (L = min(k, 8))
        names = [s.name for s in lookup("sm75", instr).shapes]
        assert names == ["mma.sync.aligned.m16n8k8", "mma.sync.aligned.m8n8k4"]
        assert model_of("sm75", instr, "mma.sync.aligned.m8n8k4").L == 4
    assert not any(e.instr == "f16f32c16" for e in CATALOGUE if e.arch not in ("sm70", "sm75"))


# ---------------------------------------------------------------- exact bits, by hand


def test_mixed_e4m3_e2m1_products() -> None:
    # e4m3 0x3C = 1.5 (exp field 7 = 2**0, mantissa .100); e2m1 0x5 = 3 (exp field 2 = 2**1, mantissa .1): 4.5
    assert _dot("sm120", "e4m3e2m1f32", [0x3C], [0x5], 0) == 0x40900000  # 4.5 = 1.125 * 2**2
    assert _dot("sm100", "e2m1e4m3f32", [0x5], [0x3C], 0) == 0x40900000
    # FP16 output: 4.5 + 1 = 5.5 = 1.375 * 2**2 -> fp16 0 10001 0110000000 = 0x4580 (RNE, exact)
    assert _dot("sm120", "e4m3e2m1f16", [0x3C], [0x5], 0x3C00) == 0x4580
    # 1 * 6 - 2**-30: F=25 aligns to 2**(2 - 25); the -2**-30 is truncated away, so D = 6.0 = 0x40C00000,
    # where an exactly rounded RZ sum would give 0x40BFFFFF (the largest float below 6)
    assert _dot("sm120", "e4m3e2m1f32", [0x38], [0x7], 0xB0800000) == 0x40C00000
    # e2m1 6 (0x7) x e2m3 1.125 (0 01 001 = 0x09) = 6.75 = 1.6875 * 2**2 -> 0x40D80000
    assert _dot("sm100", "e2m1e2m3f32", [0x7], [0x09], 0) == 0x40D80000
    # e2m1 6 x e5m2 -2 (1 10000 00 = 0xC0) = -12 -> fp16 1 10010 1000000000 = 0xCA00
    assert _dot("sm120", "e2m1e5m2f16", [0x7], [0xC0], 0) == 0xCA00


def test_mx_with_different_a_and_b_types() -> None:
    # mxe4m3e2m1f32: a0 = e4m3 1.5, b0 = e2m1 6, other lanes 0: 9; scales 2**(128-127) * 2**(126-127) = 1 -> 9
    a, b = [0x3C] + [0] * 31, [0x7] + [0] * 31
    assert _dot("sm120", "mxe4m3e2m1f32", a, b, 0, [128], [126]) == 0x41100000  # 9 = 1.125 * 2**3
    assert _dot("sm100", "mxe4m3e2m1f32", a, b, 0, [129], [126]) == 0x41900000  # 18
    assert _dot("sm100", "mxe2m1e4m3f32", b, a, 0, [129], [126]) == 0x41900000


def test_block16_and_block32_scales() -> None:
    ones = [0x2] * 32  # e2m1 1.0
    # block 16 (UE8M0): lanes 0-15 scaled by 2**0, lanes 16-31 by 2**1: 16 + 32 = 48 = 1.5 * 2**5 -> 0x42400000
    assert _dot("sm100", "mxf4b16f32", ones, ones, 0, [127, 128], [127, 127]) == 0x42400000
    # block 32 (UE8M0): one scale 2**1 for all 32 lanes: 64 -> 0x42800000
    assert _dot("sm100", "mxf4f32", ones, ones, 0, [128], [127]) == 0x42800000
    # block 16 (UE4M3): 0x38 = 1.0, 0x40 = 2.0: 48 again
    assert _dot("sm120", "nvf4f32", ones, ones, 0, [0x38, 0x40], [0x38, 0x38]) == 0x42400000
    # the block boundary is lane 16: a = 1 at lanes 15 and 16 only, scale 2**3 on the second block: 1 + 8 = 9
    a = [0] * 32
    a[15] = a[16] = 0x2
    assert _dot("sm100", "mxf4b16f32", a, ones, 0, [127, 130], [127, 127]) == 0x41100000
    assert _dot("sm100", "mxf4f32", a, ones, 0, [130], [127]) == 0x41800000  # block 32: both lanes x 8 = 16


def test_tcgen05_f16_times_bf16() -> None:
    # fp16 0x3E00 = 1.5, bf16 0x4040 = 3.0: 4.5 -> 0x40900000, either operand order
    assert _dot("sm100", "f16bf16f32", [0x3E00], [0x4040], 0) == 0x40900000
    assert _dot("sm100", "bf16f16f32", [0x4040], [0x3E00], 0) == 0x40900000


def test_fp16_c_is_widened_to_fp32() -> None:
    z = [0, 0, 0]
    # fp16 C = 65504 (0x7BFF) with zero products: D = 65504.0 in fp32 = 1.99902 * 2**15 -> 0x477FE000
    assert _dot("sm70", "f16f32c16", [0] * 4, [0] * 4, 0x7BFF) == 0x477FE000
    # 1 * 1 + fp16 0.5 (0x3800) = 1.5 -> 0x3FC00000
    assert _dot("sm70", "f16f32c16", [0x3C00] + z, [0x3C00] + z, 0x3800) == 0x3FC00000
    # fp16 infinity -> fp32 infinity; an fp16 NaN -> NVIDIA's NaN 0x7FFFFFFF
    assert _dot("sm75", "f16f32c16", [0] * 4, [0] * 4, 0x7C00) == 0x7F800000
    assert _dot("sm75", "f16f32c16", [0] * 4, [0] * 4, 0x7E00) == 0x7FFFFFFF
    # C = fp16 subnormal 2**-24 (0x0001); product 2**-24 * (2**-4 * (1 + 2**-10)) = 2**-28 + 2**-38.
    # C widened to fp32 has exponent -24, so e_max = -24 and the F=23 grid is 2**-47: the sum
    # 2**-24 * (1 + 2**-4 + 2**-14) is exact: exponent field 103 (0x33800000), mantissa bits 19 and 9 -> 0x33880200.
    # (Read as an fp16 subnormal with exponent -14, the grid would be 2**-37 and the 2**-38 lost: 0x33880000.)
    want = 0x33880200
    assert _dot("sm70", "f16f32c16", [0x0001] + z, [0x2C01] + z, 0x0001) == want
    assert _dot("sm70", "f16f32", [0x0001] + z, [0x2C01] + z, 0x33800000) == want


def test_fp16_c_chains_as_fp32_d() -> None:
    """K = 8 on m8n8k4 is two issues: the first reads the fp16 C, the second the first's fp32 D."""
    a = [0x3C00] * 8
    b = [0x3C00] * 4 + [0x3C00, 0, 0, 0]
    # first FDPA: 4 + 0.5 = 4.5 (fp32 D); second: 4.5 + 1 = 5.5 -> 0x40B00000
    assert _dot("sm70", "f16f32c16", a, b, 0x3800) == 0x40B00000
    rng = np.random.default_rng(11)
    n, K = 400, 12
    A = rng.integers(0, 1 << 16, (n, K), dtype=np.uint64)
    B = rng.integers(0, 1 << 16, (n, K), dtype=np.uint64)
    C16 = rng.integers(0, 1 << 16, n, dtype=np.uint64)
    # the same as the fp32-C instruction on C widened exactly (numpy's fp16 -> fp32 is exact; NaN payloads aside)
    c32 = C16.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32).astype(np.uint64)
    for arch in ("sm70", "sm75"):
        got = simulate_dot(arch, "f16f32c16", A, B, C16)
        want = simulate_dot(lookup(arch, "f16f32c16").model.replace(c_fmt="fp32"), None, A, B, c32)
        assert np.array_equal(got, want)


def test_vector_lines_spell_c_and_d_in_their_own_formats() -> None:
    line = '{"arch": "sm70", "instr": "f16f32c16", "a": ["3c00","0","0","0"], "b": ["3c00","0","0","0"], "c": "3800", "d": "3fc00000"}'
    v = parse_line(line)
    assert (v.c, v.d) == (0x3800, 0x3FC00000)
    assert (v.formats.c.name, v.formats.d.name) == ("fp16", "fp32")


# ---------------------------------------------------------------- hardware side


def test_cuda_refuses_c_and_d_of_different_formats() -> None:
    e = lookup("sm75", "f16f32c16")
    with pytest.raises(DeviceError, match="C and D of different formats are not supported yet by the cuda device; use sim:sm75"):
        kernel_spec(e, e.shapes[0])


def test_new_rows_get_kernels() -> None:
    ks = {(k.arch, k.instr, k.shape.name): k for k in cuda_kernels()}
    assert ks[("sm75", "f16f32", "mma.sync.aligned.m8n8k4")].toolchain_arch == "sm_75"
    k = ks[("sm120", "e4m3e2m1f16", "mma.sync.aligned.m16n8k32.kind::f8f6f4")]
    assert "kind::f8f6f4.f16.e4m3.e2m1.f16" in k.source and k.toolchain_arch == "sm_120a"
    k = ks[("sm120", "mxe2m1e5m2f32", "mma.sync.aligned.m16n8k32.kind::mxf8f6f4.block_scale")]
    assert "scale_vec::1X.f32.e2m1.e5m2.f32.ue8m0" in k.source
    k = ks[("sm100", "f16bf16f32", "tcgen05.mma.cta_group::1.kind::f16")]
    # instruction descriptor: A type F16 = 0 (bits 7-9), B type BF16 = 1 (bits 10-12), D F32 = 1 (bits 4-5)
    assert "const u32 idesc = 0x08400410u;" in k.source
    assert toolchain_arch("sm100", lookup("sm100", "f16bf16f32").shapes[0]) == "sm_100a"


_PTX_HEAD = ".version 8.8\n.target {t}\n.address_size 64\n.visible .entry k() {{\n" \
            ".reg .b32 r<40>; .reg .f32 f<40>; .reg .b16 h<4>;\n{body}\nret;\n}}\n"
_SF = "{r20}, {h0, h1}, {r21}, {h0, h1}"
_F4 = "{f0, f1, f2, f3}, {r0, r1, r2, r3}, {r4, r5}, {f0, f1, f2, f3}"


@pytest.mark.parametrize("target,body,ok", [
    ("sm_75", "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f16 {f0,f1,f2,f3,f4,f5,f6,f7}, {r0,r1}, {r2,r3}, {r10,r11,r12,r13};", True),
    ("sm_75", "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f32 {r10,r11,r12,r13}, {r0,r1}, {r2,r3}, {f0,f1,f2,f3,f4,f5,f6,f7};", False),
    ("sm_120a", "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f16.e3m2.e2m1.f16 {r10,r11}, {r0,r1,r2,r3}, {r4,r5}, {r10,r11};", True),
    ("sm_120a", f"mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e2m1.f32.ue8m0 {_F4}, {_SF};", True),
    ("sm_120a", f"mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 {_F4}, {_SF};", True),
    ("sm_120a", f"mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue8m0 {_F4}, {_SF};", False),
    ("sm_120a", f"mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue4m3 {_F4}, {_SF};", False),
], ids=["m8n8k4-c16-d32", "m8n8k4-c32-d16", "f8f6f4-e3m2-e2m1-f16", "mxf8f6f4-e4m3-e2m1",
        "nvf4-ue4m3-x4", "nvf4-ue8m0-x4", "nvf4-ue4m3-x2"])
def test_ptx_legality_of_the_variants(target: str, body: str, ok: bool, tmp_path: Path) -> None:
    """What the catalogue lists and leaves out, as ptxas sees it (the PTX ISA's rules, checked by the assembler)."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not on PATH")
    src = tmp_path / "k.ptx"
    src.write_text(_PTX_HEAD.format(t=target, body=body), encoding="utf-8")
    r = subprocess.run([ptxas, f"-arch={target}", str(src), "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True, check=False)
    if "not defined for option" in r.stderr or "Unsupported gpu architecture" in r.stderr:
        pytest.skip(f"this ptxas cannot target {target}")
    assert (r.returncode == 0) == ok, r.stderr
