"""Names users already have (PTX, MMA-Sim, MFMA spellings), did-you-mean suggestions, and API argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import smtmma
from smtmma.catalogue import lookup, model_of, resolve_arch, resolve_instr
from smtmma.errors import InputError, InputTypeError, SmtmmaError, UnknownNameError, close_names
from smtmma.formats import get_format
from smtmma.models import Model, parse_model_spec


@pytest.mark.parametrize(
    "arch, op, instr, family",
    [
        ("sm80", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "f16f32", "mma"),
        ("sm80", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", "f16f16", "mma"),
        ("sm80", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "tf32f32", "mma"),
        ("sm70", "mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32", "f16f32", "mma"),
        ("sm120", "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e2m3.f32", "e2m1e2m3f32", "mma"),
        ("sm120", "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3",
         "nvf4f32", "mma"),
        ("sm90", "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", "f16f32", "wgmma"),
        ("sm90", "wgmma.mma_async.sync.aligned.m64n128k32.f16.e4m3.e5m2", "e4m3e5m2f16", "wgmma"),
        ("sm100", "tcgen05.mma.cta_group::1.kind::tf32", "tf32f32", "tcgen05"),
        ("sm100", "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::2X", "mxf4f32", "tcgen05"),
        # MMA-Sim qualifier strings (microsoft/MMA-Sim mmasim/isa/nv_ptx/*.py, mmasim/isa/amd.py)
        ("sm80", "m16n8k16.f32.f16.f16.f32", "f16f32", "mma"),
        ("sm90", "m64n8k16.f32.bf16.bf16", "bf16f32", "wgmma"),
        ("sm100", "m128n256k16.f16.f16.f16", "f16f16", "tcgen05"),
        ("sm120", "m16n8k32.block32.f32.e4m3.e4m3.f32.ue8m0", "mxe4m3f32", "mma"),
        ("gfx942", "f32_16x16x16_f16", "f16f32", "mfma"),
        ("gfx90a", "f32_32x32x8bf16_1k", "bf16f32", "mfma_1k"),
        # AMD mnemonics, with or without prefix, any case, with or without the '_' before the type
        ("gfx942", "v_mfma_f32_16x16x16_f16", "f16f32", "mfma"),
        ("gfx942", "mfma_f32_16x16x16_f16", "f16f32", "mfma"),
        ("gfx942", "V_MFMA_F32_16X16X16_F16", "f16f32", "mfma"),
        ("gfx942", "v_mfma_f32_16x16x16f16", "f16f32", "mfma"),
        ("gfx942", "v_mfma_f32_32x32x16_fp8_bf8", "fp8bf8f32", "mfma"),
        ("gfx942", "v_mfma_f32_32x32x4f16", "f16f32", "mfma"),  # CDNA1/2 spelling of v_mfma_f32_32x32x4_2b_f16
        ("gfx942", "v_mfma_f32_32x32x8bf16_1k", "bf16f32", "mfma"),  # CDNA3's bf16 is the _1k datapath
    ],
)
def test_name_forms_name_the_instruction(arch: str, op: str, instr: str, family: str) -> None:
    e = lookup(arch, None, op)
    assert (e.instr, e.op) == (instr, family)
    assert lookup(arch, instr, op) == e  # a consistent instr is fine


def test_full_name_simulates_like_the_family() -> None:
    a = b = np.array([[0x3C00, 0x1400]], np.uint16)
    c = np.zeros(1, np.uint32)
    full = smtmma.simulate_dot("sm80", None, a, b, c, op="mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    assert full.tolist() == smtmma.simulate_dot("sm80", "f16f32", a, b, c).tolist()
    assert model_of("sm90", None, "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32").L == 4


@pytest.mark.parametrize(
    "arch, instr, op, fragment",
    [
        ("sm80", "bf16f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
         "implies f16f32 (a fp16, b fp16, c fp32, d fp32), not instruction bf16f32"),
        ("gfx942", "bf16f32", "v_mfma_f32_16x16x16_f16", "implies f16f32"),
        ("sm100", "bf16f32", "tcgen05.mma.cta_group::1.kind::tf32", "implies tf32f32, not instruction bf16f32"),
        ("sm80", None, "mma.sync.aligned.m16n8k4.row.col.f32.f16.f16.f32",
         "sm80 f16f32 has no mma shape m16n8k4; its mma shapes: mma.sync.aligned.m16n8k8, mma.sync.aligned.m16n8k16"),
        ("sm80", "f16f32", "mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32", "mma takes .row.col only"),
        ("sm90", None, "wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16", "n=12"),
        ("sm100", None, "tcgen05.mma.cta_group::1.kind::f16", "several instruction types on sm100 (bf16f16f32, bf16f32, f16bf16f32, f16f16, f16f32)"),
        ("sm100", "f16f32", "tcgen05.mma.cta_group::1", "needs a .kind::"),
        # 4X: one scale per 16 of K=64, UE8M0 or UE4M3 (the tcgen05 name does not say which)
        ("sm100", None, "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X",
         "several instruction types on sm100 (mxf4b16f32, nvf4f32)"),
        ("sm90", "f16f32", "mma.sync.aligned.m16n8k16.rowcol", "unknown qualifier '.rowcol'; did you mean row or col?"),
        ("gfx908", "bf16f32", "v_mfma_f32_16x16x16_bf16", "gfx908 bf16f32 has no such MFMA; did you mean"),
        ("gfx942", "f16f32", "mma.sync.aligned.m16n8k16", "gfx942 is an AMD architecture"),
        ("sm90", "f16f32", "wgmm", "has no op 'wgmm'; valid: mma, wgmma"),
        ("sm90", None, None, "an instruction type is needed"),
    ],
)
def test_bad_names_are_one_line_errors(arch: str, instr: str, op: str, fragment: str) -> None:
    with pytest.raises(SmtmmaError) as info:
        lookup(arch, instr, op)
    assert fragment in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: resolve_arch("hoper"), "unknown architecture 'hoper'; did you mean hopper or thor?"),
        (lambda: resolve_arch("blackwel"), "did you mean blackwell"),
        (lambda: resolve_instr("bf16f3"), "did you mean bf16f32"),
        (lambda: lookup("sm90", "f16f32", "wgmmma"), "valid: mma, wgmma"),
        (lambda: parse_model_spec("tfdp:F=3", lookup("sm90", "f16f32").model), "did you mean t-fdpa"),
        (lambda: parse_model_spec("t-fdpa:Fx=3", lookup("sm90", "f16f32").model), "did you mean F?"),
        (lambda: parse_model_spec("t-fdpa:rho=rz-fp3", lookup("sm90", "f16f32").model), "did you mean rz-fp32"),
        (lambda: get_format("fp17"), "unknown format 'fp17'; did you mean fp16?"),
        (lambda: lookup("sm90", "f16f32").model.replace(FF=3), "no field 'FF'; did you mean F?"),
    ],
)
def test_did_you_mean(call, fragment: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SmtmmaError) as info:
        call()
    assert fragment in str(info.value)


def test_sm_targets_and_suggestion_helper() -> None:
    assert resolve_arch("sm_90a") == "sm90" and resolve_arch("SM100A") == "sm100"
    assert close_names("hoper", ["hopper", "volta"]) == ["hopper"]
    assert close_names("zzz", ["hopper", "volta"]) == []


_U16 = np.zeros((2, 4), np.uint16)
_C32 = np.zeros(2, np.uint32)
_MODEL = lookup("sm90", "f16f32").model


@pytest.mark.parametrize(
    "call, error, fragment",
    [
        (lambda: smtmma.simulate_dot(None, "f16f32", _U16, _U16, _C32), InputTypeError, "architecture (or a Model) must be"),
        (lambda: smtmma.simulate_dot(90, "f16f32", _U16, _U16, _C32), InputTypeError, "did you mean 'sm90'?"),
        (lambda: smtmma.simulate_dot(9.0, "f16f32", _U16, _U16, _C32), InputTypeError, "got float 9.0"),
        (lambda: smtmma.simulate_dot("sm90", 16, _U16, _U16, _C32), InputTypeError, "instruction must be a name"),
        (lambda: smtmma.simulate_dot("sm90", ["f16f32"], _U16, _U16, _C32), InputTypeError, "got list"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", _U16, _U16, _C32, op=3), InputTypeError, "op must be a name"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", None, _U16, _C32), InputTypeError, "a must be an (N, K) array"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", np.ones((2, 4), np.float16), _U16, _C32), InputTypeError,
         "pass a.view(np.uint16)"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", _U16, _U16, np.ones(2, np.float32)), InputTypeError,
         "pass c.view(np.uint32)"),
        (lambda: smtmma.simulate_dot("sm90", "e4m3f32", np.ones((2, 4)), _U16, _C32), InputTypeError,
         "smtmma.formats.from_fraction('e4m3'"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", [["1", "2"]], [[1, 2]], [0]), InputTypeError, "unsigned integer"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", np.full((2, 4), -1), _U16, _C32), InputError, "-1 is negative"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", np.full((2, 4), 0x1FFFF), _U16, _C32), InputError,
         "0x1ffff has more bits than fp16"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", np.zeros((2, 4, 1), np.uint16), _U16, _C32), InputError, "2-D array"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", _U16, np.zeros((2, 3), np.uint16), _C32), InputError, "same shape"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", _U16, _U16, np.zeros(3, np.uint32)), InputError, "one value per"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", [[1, 2], [3]], [[1, 2]], [0]), InputError, "a must be"),
        (lambda: smtmma.simulate_dot("sm90", "f16f32", _U16, _U16, _C32, scale_a=_U16), InputError, "takes no block scales"),
        (lambda: smtmma.simulate_mma("sm80", "f16f32", np.zeros((16, 16), np.uint16), np.zeros((16, 8), np.uint16),
                                     np.zeros((16, 8), np.uint32), scale_b=_U16), InputError, "takes no block scales"),
        (lambda: smtmma.simulate_dot(_MODEL, "bf16f32", _U16, _U16, _C32), InputError,
         "the model computes a fp16, b fp16, c fp32, d fp32 but instr bf16f32 is a bf16"),
        (lambda: smtmma.simulate_mma("sm80", "f16f32", np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))),
         InputTypeError, "A holds float64 values"),
        (lambda: lookup(None, "f16f32"), InputTypeError, "architecture must be a name"),
        (lambda: get_format(16), InputTypeError, "format must be a name"),
        (lambda: Model("t-fdpa", "fp16", "fp16", "fp32", "fp32", L="8"), InputTypeError, "L must be an int"),
        (lambda: Model("t-fdpa", "fp17", "fp16", "fp32", "fp32"), UnknownNameError, "model a_fmt: unknown format 'fp17'"),
        (lambda: _MODEL.replace(F=2.5), InputTypeError, "F must be an int"),
        (lambda: parse_model_spec(None, _MODEL), InputTypeError, "model spec must be a str"),
        (lambda: parse_model_spec("t-fdpa:F=3", "sm90"), InputTypeError, "like must be a Model"),
    ],
)
def test_wrong_arguments_raise_smtmma_errors(call, error: type, fragment: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, SmtmmaError)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_sensible_inputs_are_accepted() -> None:
    d = smtmma.simulate_dot("sm90", "f16f32", [[0x3C00, 0x3C00]], [[0x3C00, 0x3C00]], [0])  # lists of ints
    assert d.tolist() == [0x40000000]
    wide = np.zeros((2, 8), np.uint16)
    wide[:, ::2] = 0x3C00
    assert smtmma.simulate_dot("sm90", "f16f32", wide[:, ::2], wide[:, ::2], _C32).tolist() == [0x40800000] * 2
    assert smtmma.simulate_dot(_MODEL, "f16f32", _U16, _U16, _C32).tolist() == [0, 0]  # a consistent instr is fine
    assert smtmma.simulate_dot("sm90", "f16f32", np.zeros((0, 4), np.uint16), np.zeros((0, 4), np.uint16),
                               np.zeros(0, np.uint32)).shape == (0,)


def test_scale_vec_picks_the_block_of_the_instruction() -> None:
    op = "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X"
    assert lookup("sm100", "nvf4f32", op).instr == "nvf4f32" and lookup("sm100", "mxf4b16f32", op).instr == "mxf4b16f32"
    with pytest.raises(InputError, match="implies"):
        lookup("sm100", "mxf4f32", op)  # mxf4f32 has one scale per 32: scale_vec::2X
