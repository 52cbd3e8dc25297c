"""Provisional architectures: documented shapes, a hypothesis from the nearest generation, one warning line, a space."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import smtmma
from smtmma.catalogue import ARCHS, CATALOGUE, lookup, model_of
from smtmma.discriminators.candidates import catalogue_space
from smtmma.discriminators.provisional import PROVISIONAL_SUITES, neighbourhood, provisional_space
from smtmma.errors import InputError, ProvisionalWarning
from smtmma.hw.cuda import ARCH_OF_CC
from smtmma.hw.cuda_kernels import toolchain_arch
from smtmma.isa import SHAPES
from smtmma.cli import main
from smtmma.cli.space_options import build_space

PROVISIONAL = [a for a, x in ARCHS.items() if x.provisional]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(err: str, starts: str) -> None:
    assert err.startswith("smtmma: error: " + starts) and err.count("\n") == 1, err


def test_provisional_architectures_cite_documents_and_a_measured_hypothesis() -> None:
    assert PROVISIONAL == ["sm103", "sm110", "sm121", "gfx950", "gfx11", "gfx12"]
    for a in PROVISIONAL:
        x = ARCHS[a]
        assert x.provisional and x.like in ARCHS and not ARCHS[x.like].provisional
        rows = [e for e in CATALOGUE if e.arch == a]
        assert rows and all(e.shapes for e in rows) and all("; shapes: " + x.provisional in e.source for e in rows)
    # NVIDIA: the hypothesis is the named architecture's row, model for model
    for a in ("sm103", "sm110", "sm121"):
        like = ARCHS[a].like
        assert {(e.instr, e.op, e.model) for e in CATALOGUE if e.arch == a} == \
               {(e.instr, e.op, e.model) for e in CATALOGUE if e.arch == like}
    assert set(PROVISIONAL_SUITES) == set(PROVISIONAL)


def test_cdna4_and_rdna_rows_read_documented_formats() -> None:
    # gfx950 fp8 MFMAs keep the CDNA3 mnemonic and read OCP e4m3 (llvm/llvm-project PR 106160)
    e = lookup("mi355x", None, "v_mfma_f32_16x16x32_fp8_fp8")
    assert (e.instr, e.model.a_fmt, e.model.kind, e.model.L) == ("e4m3e4m3f32", "e4m3", "gtr-fdpa", 16)
    assert lookup("mi300x", None, "v_mfma_f32_16x16x32_fp8_fp8").instr == "fp8fp8f32"
    assert "tf32f32" not in SHAPES["gfx950"]  # CDNA4 drops XF32
    assert model_of("gfx950", "e2m3e5m2f32", "v_mfma_f32_32x32x64_f8f6f4").describe() == "gtr-fdpa:L=16,F=24,F2=31,rho=rne-fp32"
    assert lookup("gfx950", "mxe2m1f32").model.block == 32
    assert [s.name for s in lookup("rdna3", "f16f16").shapes] == ["v_wmma_f16_16x16x16_f16"]
    assert lookup("gfx12", "e5m2e4m3f32", "v_wmma_f32_16x16x16_bf8_fp8").model.b_fmt == "e4m3"
    assert "e4m3e4m3f32" not in SHAPES["gfx11"]  # RDNA3 WMMA has no fp8
    with pytest.raises(InputError, match=r"implies .*e5m2e5m2f32.*not instruction e4m3e4m3f32"):
        lookup("gfx12", "e4m3f32", "v_wmma_f32_16x16x16_bf8_bf8")
    with pytest.raises(InputError, match="this is an MFMA name"):
        lookup("sm103", "f16f32", "v_mfma_f32_16x16x32_f16")
    with pytest.raises(InputError, match="gfx11 f16f32 has no such WMMA"):
        lookup("gfx11", "f16f32", "v_wmma_f32_16x16x32_f16")


def test_nvidia_kernels_target_the_new_toolchain_archs() -> None:
    assert {ARCH_OF_CC[cc] for cc in ((10, 3), (11, 0), (12, 1))} == {"sm103", "sm110", "sm121"}
    by = {(e.arch, s.name): toolchain_arch(e.arch, s) for e in CATALOGUE for s in e.shapes if e.arch in ("sm103", "sm110", "sm121")}
    assert by[("sm103", "tcgen05.mma.cta_group::1.kind::f16")] == "sm_103a"
    assert by[("sm110", "tcgen05.mma.cta_group::1.kind::f8f6f4")] == "sm_110a"
    assert by[("sm121", "mma.sync.aligned.m16n8k32.kind::f8f6f4")] == "sm_121a"
    assert by[("sm121", "mma.sync.aligned.m16n8k16")] == "sm_121"


def test_api_warns_once_per_call_and_gives_the_hypothesis_bits() -> None:
    a, b, c = np.array([[0x3C00, 0x4000]]), np.array([[0x3C00, 0x3C00]]), np.array([0])
    with pytest.warns(ProvisionalWarning, match=r"^provisional: sm103 \(Blackwell Ultra\) has no recorded hardware "
                                                r"output; its model is sm100's as a hypothesis; run `smtmma hw survey` on one$"):
        d = smtmma.simulate_dot("b300", "f16f32", a, b, c)
    assert d.tolist() == smtmma.simulate_dot("sm100", "f16f32", a, b, c).tolist() == [0x40400000]
    with pytest.warns(ProvisionalWarning, match="gfx11"):
        smtmma.matmul("rdna3", "f16f32", np.ones((2, 16), np.float16), np.ones((16, 2), np.float16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        smtmma.simulate_dot(model_of("gfx950", "f16f32"), None, a, b, c)  # a Model: the caller chose it
        smtmma.simulate_dot("sm100", "f16f32", a, b, c)


@pytest.mark.filterwarnings("always::smtmma.errors.ProvisionalWarning")  # as a user's console shows it
def test_cli_prints_one_warning_line(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    code, out, err = run(capsys, "simulate", "--arch", "gb10", "--instr", "f16f32", "--a", "1,2", "--b", "1,1", "--c", "0")
    assert code == 0 and "d       0x40400000" in out
    assert err.splitlines() == ["smtmma: warning: provisional: sm121 (RTX Blackwell (GB10)) has no recorded hardware "
                                "output; its model is sm120's as a hypothesis; run `smtmma hw survey` on one"]
    log = tmp_path / "run.jsonl"
    log.write_text(json.dumps({"arch": "gfx12", "instr": "f16f32", "a": ["3c00"], "b": ["3c00"], "c": "00000000",
                               "d": "3f800000"}) + "\n")
    code, out, err = run(capsys, "check", str(log), "--json")
    assert code == 0 and json.loads(out)["files"][0]["provisional"] == ["gfx12"]
    assert len(err.splitlines()) == 1 and err.startswith("smtmma: warning: provisional: gfx12 (RDNA4)")
    code, out, err = run(capsys, "check", str(tmp_path / "missing.jsonl"))
    assert "provisional" not in err


def test_neighbourhood_is_the_structural_grid_around_the_hypothesis() -> None:
    h = lookup("gfx950", "f16f32").model
    models, dropped = neighbourhood(h)
    assert models[0] == h and not dropped
    specs = {m.describe() for m in models}
    assert {"tr-fdpa:L=4,F=23,F2=31,rho=rz-fp32", "tr-fdpa:L=16,F=25,F2=31,rho=rne-fp32",  # L x F x rounding
            "gtr-fdpa:L=8,F=24,F2=31,rho=rne-fp32",  # even/odd groups
            "tr-fdpa:L=8,F=24,F2=31,rho=rne-fp32,ftz_inputs", "tr-fdpa:L=8,F=24,F2=31,rho=rne-fp32,sum_rz",
            "t-fdpa:L=8,F=24,rho=rz-fp32"} <= specs
    assert len(models) == 3 * 3 * 2 + 4
    fp8 = {m.describe() for m in neighbourhood(lookup("sm103", "e4m3f32").model)[0]}  # the FP8 flavours
    assert {"t-fdpa:L=32,F=13,rho=rz-e8m13", "t-fdpa:L=16,F=25,rho=rz-fp32,via=fp16,interleave=2,c_after,issue=32"} <= fp8


def test_provisional_space_names_hypothesis_measured_rows_and_specs() -> None:
    sp = provisional_space("gfx12", "e4m3f32")
    assert sp.base_arch == "gfx12" and sp.names[0] == "gfx12"
    assert not any(n in ("sm89", "sm90", "gfx942") for n in sp.names)  # other vendor; gfx942 has no OCP fp8 row
    sp = provisional_space("sm121", "f16f32")
    assert sp.names[:11] == ["sm121", "sm70", "sm75", "sm80", "sm86", "sm89", "sm90", "sm90/wgmma", "sm100", "sm100/tcgen05",
                             "sm120"]
    for c in sp.candidates:  # each name reads back as its model, for a test vector of sm121
        assert smtmma.discriminators.candidates.model_by_name(c.name, "f16f32", "sm121") == c.model
    with pytest.raises(InputError, match="sm90 is not provisional"):
        provisional_space("sm90", "f16f32")
    # the catalogue's own space leaves provisional rows out unless asked
    assert "sm103" not in catalogue_space("f16f32").names
    assert "sm103" in catalogue_space("f16f32", provisional=True).names


def test_suite_cli_takes_a_provisional_space(capsys: pytest.CaptureFixture[str]) -> None:
    sp = build_space("f16f16", ["provisional"], None, "rdna4", None)
    assert sp is not None and sp.base_arch == "gfx12" and sp.names == provisional_space("gfx12", "f16f16").names
    both = build_space("f16f16", ["provisional,sm90"], None, "gfx12", None)
    assert both is not None and both.names == sp.names + ["sm90"]
    code, out, err = run(capsys, "suite", "--instr", "f16f16", "--candidates", "provisional")
    assert code == 2
    assert_one_line_error(err, "--candidates provisional needs --like ARCH, a provisional architecture "
                               "(sm103, sm110, sm121, gfx950, gfx11, gfx12)")
    code, out, err = run(capsys, "suite", "--instr", "f16f16", "--candidates", "provisional", "--like", "sm90")
    assert code == 2
    assert_one_line_error(err, "sm90 is not provisional")


def test_an_unknown_mnemonic_lists_every_instruction_of_the_arch() -> None:
    with pytest.raises(InputError) as e:
        lookup("gfx12", None, "v_wmma_f32_16x16x16_f8f6f4")
    assert str(e.value).endswith("its WMMAs: v_wmma_f32_16x16x16_f16, v_wmma_f32_16x16x16_bf16, v_wmma_f16_16x16x16_f16, "
                                 "v_wmma_f32_16x16x16_fp8_fp8, v_wmma_f32_16x16x16_fp8_bf8, v_wmma_f32_16x16x16_bf8_fp8, "
                                 "v_wmma_f32_16x16x16_bf8_bf8")
