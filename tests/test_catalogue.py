"""The catalogue: every architecture and alias, the table rows of the MMA-Sim paper, the decisions taken."""

from __future__ import annotations

import re

import pytest

from smtmma import catalogue
from smtmma.catalogue import ARCHS, CATALOGUE, lookup, model_of, resolve_arch, resolve_instr
from smtmma.errors import InputError, UnknownNameError
from smtmma.models import Model, parse_model_spec


@pytest.mark.parametrize(
    "alias,arch",
    [
        ("volta", "sm70"), ("v100", "sm70"), ("turing", "sm75"), ("t4", "sm75"), ("ampere", "sm80"),
        ("a100", "sm80"), ("ada", "sm89"), ("hopper", "sm90"), ("h100", "sm90"), ("h200", "sm90"),
        ("blackwell", "sm100"), ("b200", "sm100"), ("rtx-blackwell", "sm120"), ("cdna1", "gfx908"),
        ("mi100", "gfx908"), ("cdna2", "gfx90a"), ("mi250x", "gfx90a"), ("cdna3", "gfx942"),
        ("mi300x", "gfx942"), ("SM_90", "sm90"), ("H100", "sm90"),
    ],
)
def test_aliases(alias: str, arch: str) -> None:
    assert resolve_arch(alias) == arch


def test_every_architecture_has_rows() -> None:
    assert {e.arch for e in CATALOGUE} == set(ARCHS)


def test_one_default_per_arch_and_instr() -> None:
    keys = {(e.arch, e.instr) for e in CATALOGUE}
    for arch, instr in keys:
        defaults = [e for e in CATALOGUE if (e.arch, e.instr) == (arch, instr) and e.default]
        assert len(defaults) == 1, (arch, instr, defaults)


# Table 4 of the MMA-Sim paper: (arch, instr) -> (L, F, rho)
TABLE4 = [
    ("sm70", "f16f32", 4, 23, "rz-fp32"), ("sm70", "f16f16", 4, 23, "rne-fp16"),
    ("sm75", "f16f32", 8, 24, "rz-fp32"), ("sm75", "f16f16", 8, 24, "rne-fp16"),
    ("sm80", "tf32f32", 4, 24, "rz-fp32"), ("sm80", "bf16f32", 8, 24, "rz-fp32"),
    ("sm80", "f16f32", 8, 24, "rz-fp32"), ("sm80", "f16f16", 8, 24, "rne-fp16"),
    ("sm89", "tf32f32", 4, 24, "rz-fp32"), ("sm89", "e4m3f32", 16, 13, "rz-e8m13"),
    ("sm89", "e5m2f16", 16, 13, "rne-fp16"),
    ("sm90", "tf32f32", 8, 25, "rz-fp32"), ("sm90", "bf16f32", 16, 25, "rz-fp32"),
    ("sm90", "f16f16", 16, 25, "rne-fp16"), ("sm90", "e4m3f32", 32, 13, "rz-e8m13"),
    ("sm90", "e4m3e5m2f16", 32, 13, "rne-fp16"),
    ("sm100", "tf32f32", 8, 25, "rz-fp32"), ("sm100", "e4m3f32", 32, 25, "rz-fp32"),
    ("sm100", "e2m1f32", 32, 25, "rz-fp32"), ("sm100", "e5m2f16", 32, 25, "rne-fp16"),
    ("sm120", "f16f32", 16, 25, "rz-fp32"), ("sm120", "e3m2f32", 32, 25, "rz-fp32"),
]


@pytest.mark.parametrize("arch,instr,L,F,rho", TABLE4, ids=lambda x: str(x))
def test_table4_rows(arch: str, instr: str, L: int, F: int, rho: str) -> None:
    m = lookup(arch, instr).model
    assert (m.kind, m.L, m.F, m.rho, m.nan) == ("t-fdpa", L, F, rho, "nvidia")


def test_table5_gst_fdpa() -> None:
    for arch in ("sm100", "sm120"):
        for instr, block, scale in (("mxf4f32", 32, "ue8m0"), ("nvf4f32", 16, "ue4m3")):
            m = lookup(arch, instr).model
            assert (m.kind, m.L, m.G, m.F, m.rho, m.block, m.scale_fmt) == ("gst-fdpa", 64, 16, 35, "rz-fp32", block, scale)


def test_st_fdpa_rows() -> None:
    m = lookup("sm100", "mxe4m3f32").model
    assert (m.kind, m.L, m.F, m.block, m.scale_fmt) == ("st-fdpa", 32, 25, 32, "ue8m0")


@pytest.mark.parametrize(
    "arch,instr,op,kind,params",
    [
        ("gfx908", "f32f32", None, "fma", {}),
        ("gfx908", "bf16f32", None, "e-fdpa", {"L": 2}),
        ("gfx908", "f16f32", None, "e-fdpa", {"L": 4}),
        ("gfx90a", "f64f64", None, "fma", {}),
        ("gfx90a", "bf16f32", None, "ftz-addmul", {"P": 2, "ftz_inputs": True}),
        ("gfx90a", "bf16f32", "v_mfma_f32_32x32x8bf16_1k", "ftz-addmul", {"P": 4}),
        ("gfx90a", "bf16f32", "mfma_1k", "ftz-addmul", {"P": 4}),
        ("gfx90a", "f16f32", None, "ftz-addmul", {"P": 4}),
        ("gfx942", "tf32f32", None, "tr-fdpa", {"L": 4, "F": 24, "F2": 31, "rho": "rne-fp32"}),
        ("gfx942", "f16f32", None, "tr-fdpa", {"L": 8, "F": 24, "F2": 31}),
        ("gfx942", "bf16f32", None, "tr-fdpa", {"L": 8}),
        ("gfx942", "fp8bf8f32", None, "gtr-fdpa", {"L": 16, "F": 24, "F2": 31}),
    ],
)
def test_tables6_and_7(arch: str, instr: str, op: str, kind: str, params: dict) -> None:
    m = lookup(arch, instr, op).model
    assert m.kind == kind
    for k, v in params.items():
        assert getattr(m, k) == v


def test_fp64_is_an_fma_chain_on_every_arch_that_has_it() -> None:
    rows = [e for e in CATALOGUE if e.instr == "f64f64"]
    assert {e.arch for e in rows} == {"sm80", "sm86", "sm89", "sm90", "sm100", "sm120", "gfx90a", "gfx942",
                                      "sm103", "sm110", "sm121", "gfx950"}  # the last four provisional
    assert all(e.model.kind == "fma" for e in rows)


def test_fp8_mma_on_hopper_runs_on_the_fp16_path() -> None:
    # Decision (docs/fp8-mma-sm90.md): PTX mma.sync FP8 on sm90/sm100 is two HMMA.16816.
    for arch in ("sm90", "sm100"):
        m = lookup(arch, "e4m3f16", "mma").model
        assert (m.L, m.F, m.rho, m.interleave, m.c_after, m.via) == (16, 25, "rne-fp16", 2, True, "fp16")
    assert lookup("sm90", "e4m3f16").op == "wgmma"  # the native datapath stays the default
    assert lookup("sm89", "e4m3f16", "mma").model.F == 13  # Ada's mma.sync is native QMMA


def test_wmma_is_the_mma_datapath() -> None:
    assert lookup("sm80", "f16f32", "wmma") is lookup("sm80", "f16f32", "mma")


def test_full_ptx_names_resolve_to_their_family() -> None:
    e = lookup("sm90", "e4m3f16", "mma.sync.aligned.m16n8k32")
    assert e.op == "mma"


@pytest.mark.parametrize(
    "call,fragment",
    [
        (lambda: resolve_arch("sm99"), "unknown architecture 'sm99'; did you mean sm90 or sm89? valid: sm70, sm75"),
        (lambda: resolve_instr("f17f32"), "unknown instruction 'f17f32'; did you mean f16f32"),
        (lambda: lookup("sm70", "bf16f32"), "sm70 has no instruction bf16f32; valid for sm70: f16f16, f16f32, f16f32c16"),
        (lambda: lookup("sm90", "f16f32", "tcgen05"), "has no op 'tcgen05'; valid: mma, wgmma"),
    ],
)
def test_errors_list_the_valid_choices(call, fragment: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnknownNameError) as info:
        call()
    assert fragment in str(info.value)


def test_entries_filter() -> None:
    rows = catalogue.entries("hopper", "f16f32")
    assert {e.op for e in rows} == {"mma", "wgmma"}


def test_an_instruction_shape_below_l_chains_per_instruction() -> None:
    from smtmma.catalogue import model_of

    assert model_of("sm90", "tf32f32", "mma.sync.aligned.m16n8k4").L == 4  # HMMA.1684: one FDPA per k=4
    assert model_of("sm90", "tf32f32", "mma.sync.aligned.m16n8k8").L == 8
    assert model_of("sm90", "tf32f32", "mma").L == 8


def test_alignment_floor_rows() -> None:
    # 003_d749da898286e929.txt: "exponent, on alignment, is capped from below to -133, for bf16 and tf19"
    for arch in ("sm90", "sm100"):
        for instr in ("bf16f32", "tf32f32"):
            assert lookup(arch, instr).model.emax_floor == -133
    assert lookup("sm100", "f16f16").model.emax_floor == -15
    assert lookup("sm80", "bf16f32").model.emax_floor is None
    assert lookup("sm120", "bf16f32").model.emax_floor is None


@pytest.mark.parametrize("entry", CATALOGUE, ids=lambda e: f"{e.arch}-{e.instr}-{e.op}")
def test_every_model_description_parses_back_to_the_model(entry) -> None:
    m = entry.model
    assert parse_model_spec(m.describe(), like=m) == m


def test_spec_flags_and_options() -> None:
    like = lookup("sm90", "e4m3f32", "mma").model  # via=fp16, interleave=2, c_after
    m = parse_model_spec("t-fdpa:c_after=0,via=none,interleave=none", like=like)
    assert (m.c_after, m.via, m.interleave, m.L, m.F) == (False, None, None, like.L, like.F)
    assert parse_model_spec("t-fdpa:ftz_inputs", like=like).ftz_inputs is True
    with pytest.raises(InputError, match="c_after is a flag"):
        parse_model_spec("t-fdpa:c_after=yes", like=like)
    with pytest.raises(UnknownNameError, match="via: unknown format 'fp7'"):
        parse_model_spec("t-fdpa:via=fp7", like=like)
    with pytest.raises(InputError, match=re.escape("options: via=FORMAT, interleave=N, issue=N, nan=ieee|nvidia|propagate, "
                                                   "c_after, ftz_inputs, zero_emax, ieee_zero")):
        parse_model_spec("t-fdpa:Q=1", like=like)


def test_issue_option_models_whole_instructions() -> None:
    like = lookup("sm90", "e4m3f32", "mma").model
    assert (like.L, like.issue) == (16, 32)
    assert parse_model_spec(like.describe(), like=like) == like
    assert parse_model_spec("t-fdpa:issue=none", like=like).issue is None
    with pytest.raises(InputError, match="issue=24 .* must be a multiple of L=16"):
        parse_model_spec("t-fdpa:issue=24", like=like)
    with pytest.raises(InputError, match="fused-sum model"):
        Model("fma", "fp64", "fp64", "fp64", "fp64", issue=4)
    # each shape keeps the row's two FDPAs per instruction: k16 is two of L=8, k32 two of L=16
    assert model_of("sm90", "e4m3f32", "mma.sync.aligned.m16n8k16").describe().startswith("t-fdpa:L=8,")
    assert model_of("sm90", "e4m3f32", "mma.sync.aligned.m16n8k16").issue == 16
    assert model_of("sm90", "e4m3f32", "mma.sync.aligned.m16n8k32") == like


def test_nan_propagate_is_an_fma_choice() -> None:
    dmma = lookup("sm90", "f64f64").model
    assert (dmma.kind, dmma.nan) == ("fma", "propagate")
    assert lookup("sm80", "f64f64").model.nan == "ieee"  # not measured
    assert parse_model_spec("fma:nan=ieee", like=dmma).nan == "ieee"
    with pytest.raises(InputError, match="nan=propagate .* is a choice of fma models"):
        parse_model_spec("t-fdpa:nan=propagate", like=lookup("sm90", "f16f32").model)
    with pytest.raises(InputError, match="share one format"):
        Model("fma", "fp16", "fp16", "fp32", "fp32", nan="propagate")


def test_an_fma_rounds_to_a_format_with_infinities() -> None:
    """Alg. 3 is IEEE 754's FMA (an overflow is +-inf): a D without infinities is refused, not encoded wrongly."""
    with pytest.raises(InputError, match="D=e4m3 has no infinity"):
        Model("fma", "e4m3", "e4m3", "e4m3", "e4m3")
    assert Model("fma", "e5m2", "e5m2", "e5m2", "e5m2").d_fmt == "e5m2"


def test_hypothesis_flags_and_the_nan_option() -> None:
    like = lookup("sm80", "f16f32").model
    m = parse_model_spec("t-fdpa:zero_emax,ieee_zero,nan=ieee", like=like)
    assert (m.zero_emax, m.ieee_zero, m.nan, like.nan) == (True, True, "ieee", "nvidia")
    assert m.describe() == "t-fdpa:L=8,F=24,rho=rz-fp32,zero_emax,ieee_zero"  # nan is not printed: it is the arch's
    assert parse_model_spec(m.describe(), like=m) == m
    with pytest.raises(InputError, match="parameter F is given twice"):
        parse_model_spec("t-fdpa:F=24,F=25", like=like)
    with pytest.raises(InputError, match="parameter zero_emax is given twice"):
        parse_model_spec("t-fdpa:zero_emax,zero_emax=0", like=like)
    with pytest.raises(UnknownNameError, match="unknown NaN style nan 'amd'; valid: ieee, nvidia"):
        parse_model_spec("t-fdpa:nan=amd", like=like)
    with pytest.raises(InputError, match="zero_emax is a hypothesis about T-FDPA and ST-FDPA sums; tr-fdpa"):
        parse_model_spec("tr-fdpa:zero_emax", like=lookup("gfx942", "f16f32").model)


def test_a_spec_of_another_kind_takes_the_parameters_it_shares() -> None:
    like = lookup("sm80", "f16f32").model  # t-fdpa L=8, F=24
    e = parse_model_spec("e-fdpa", like=like)
    assert (e.kind, e.L, e.F) == ("e-fdpa", like.L, None)
    tr = parse_model_spec("tr-fdpa:F2=30", like=like)
    assert (tr.L, tr.F, tr.F2, tr.rho) == (like.L, like.F, 30, like.rho)


@pytest.mark.parametrize("spec, message", [
    ("tr-fdpa", r"tr-fdpa needs F2=N \(0\.\.64\)"),
    ("ftz-addmul", r"ftz-addmul needs P=N \(2 or 4\)"),
    ("gst-fdpa:G=4,block=4", "gst-fdpa multiplies block scales"),
])
def test_a_spec_missing_what_its_kind_needs_is_refused(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_model_spec(spec, like=lookup("sm80", "f16f32").model)
