"""Which instruction AND which kernel scheme a GEMM callable runs: identify --scheme-grid and identify_scheme.

The devices are callables built from smtmma.matmul with a scheme they do not disclose; every verdict is exact.
"""

from __future__ import annotations

import json
from typing import Callable

import pytest

import smtmma
from smtmma.cli import main
from smtmma.discriminators.candidates import explicit_space
from smtmma.discriminators.scheme_identify import MAX_DEFAULT_K, default_shape, identify_scheme, parse_grid
from smtmma.errors import InputError, UnknownNameError
from smtmma.hw import CallableDevice
from smtmma.hw.device import SimDevice
from smtmma.models import parse_model_spec
from smtmma.scheme import Scheme

GRID = "promote_every=none,32,64,128;split_k=1,2"


def _hidden(scheme: Scheme, arch: str = "sm90", instr: str = "f16f32") -> CallableDevice:
    return CallableDevice(lambda A, B, C: smtmma.matmul(arch, instr, A, B, C, scheme=scheme), name="python:test:hidden")


def test_the_cli_names_the_hidden_instruction_and_scheme(user_module: Callable[[str, str], None],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's acceptance test: a callable that runs sm90's f16f32 with FP32 promotion every 64 and says so nowhere
    is named sm90 + promote_every=64 among every catalogue model x 8 schemes; one whose split-K is outside the grid
    gets none, with the nearest candidates."""
    user_module("hiddenlib1", """
        import smtmma
        from smtmma.scheme import Scheme

        def gemm(A, B, C):
            return smtmma.matmul("sm90", "f16f32", A, B, C, scheme=Scheme(promote_every=64))

        def other(A, B, C):
            return smtmma.matmul("sm90", "f16f32", A, B, C, scheme=Scheme(split_k=4, partial="fp16"))
    """)
    assert main(["identify", "--device", "python:hiddenlib1:gemm", "--instr", "f16f32", "--scheme-grid", GRID,
                 "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["verdict"] == "identified" and rec["scheme"] == "promote_every=64"
    assert rec["candidate"] == "sm90 = sm90/wgmma = sm100 = sm100/tcgen05 = sm120 + promote_every=64"
    assert rec["models"] == ["sm90", "sm90/wgmma", "sm100", "sm100/tcgen05", "sm120"]
    assert rec["shape"] == [16, 16, 512] and rec["probes"][-1]["left"] == 1
    assert main(["identify", "--device", "python:hiddenlib1:other", "--instr", "f16f32", "--scheme-grid", GRID]) == 1
    out = capsys.readouterr().out
    assert "\nnone: no candidate gives the device's outputs (10 GEMMs of 16x16x512, 48 candidates from 104 pairs" in out
    assert out.splitlines()[-1].startswith("nearest (outputs matched): ") and out.splitlines()[-1].count("/2560") == 5


def test_identify_scheme_names_hidden_schemes() -> None:
    grid = parse_grid(GRID)
    r = identify_scheme(_hidden(Scheme(promote_every=64)), "f16f32", grid)
    assert (r.verdict, r.candidates, r.pairs) == ("identified", 48, 104)
    assert r.left[0].scheme == Scheme(promote_every=64) and r.left[0].model == smtmma.lookup("sm90", "f16f32").model
    r = identify_scheme(_hidden(Scheme(split_k=2, partial="fp16"), arch="sm80"), "f16f32",
                        parse_grid("split_k=1,2;partial=fp32,fp16"))
    assert r.verdict == "identified" and r.left[0].label == "sm75 = sm80 = sm86 = sm89 + split_k=2,partial=fp16"


def test_tf32_operand_rounding_is_told_apart() -> None:
    """FP32 operands rounded to TF32: nearest-even, ties away (cuBLAS) and truncation are three answers."""
    grid = parse_grid("round=rne,rna,rz")
    for mode in ("rna", "rz"):
        r = identify_scheme(_hidden(Scheme(round=mode), arch="sm80", instr="tf32f32"), "tf32f32", grid)
        assert r.verdict == "identified" and r.left[0].label == f"sm80 = sm86 = sm89 + round={mode}"


def test_bf16_partials_do_not_hide_the_instruction_from_its_splitters() -> None:
    """Partial sums rounded to bf16 (8 bits) hide most of what the FP32 accumulators differed in on random GEMMs; the
    instruction-level splitters placed at the start and end of K still tell sm80 from the other models."""
    r = identify_scheme(_hidden(Scheme(split_k=2, partial="bf16"), arch="sm80"), "f16f32",
                        parse_grid("split_k=1,2;partial=fp32,bf16"))
    assert r.verdict == "identified" and r.left[0].scheme == Scheme(split_k=2, partial="bf16")
    assert "sm80" in r.left[0].names and r.left[0].model == smtmma.lookup("sm80", "f16f32").model


def test_what_no_probe_splits_is_undecided_and_the_shared_scheme_still_told(
        user_module: Callable[[str, str], None], capsys: pytest.CaptureFixture[str]) -> None:
    """sm90's and sm120's bf16f32 models differ only in the sign of some zero sums (the splitters find those), which an
    FP32 promotion from +0 erases: both stay, identify exits 3 (undecided) and tells the scheme they share."""
    args = ["identify", "--instr", "bf16f32", "--candidates", "sm90,sm120", "--scheme-grid", "promote_every=none,64",
            "--gemm-shape", "16x16x128"]
    assert main([*args, "--device", "sim:sm90"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("identified: sm90 + plain  (10 GEMMs of 16x16x128, ")
    user_module("hiddenlib2", """
        import smtmma

        def gemm(A, B, C):
            return smtmma.matmul("sm90", "bf16f32", A, B, C, scheme="promote_every=64")
    """)
    assert main([*args, "--device", "python:hiddenlib2:gemm"]) == 3
    cap = capsys.readouterr()
    assert cap.out.splitlines()[-3:] == ["  sm90 + promote_every=64", "  sm120 + promote_every=64",
                                         "  the scheme is told: promote_every=64; the instruction is not"]
    assert cap.err.count("\n") == 1 and "undecided: the probes cannot tell the candidates left apart" in cap.err


def test_only_what_matmul_computes_alike_is_merged() -> None:
    """split_k=1 has no partials to round; two promote_every at or above K are one chain each.  But promote_every >= K
    is not the plain chain: the chain is added into an FP32 accumulator from +0, so a -0 sum becomes +0 -- which the
    signed-zero probe shows where the model keeps -0 (gfx908) and cannot where it does not (sm90): undecided."""
    r = identify_scheme(_hidden(Scheme()), "f16f32", parse_grid("split_k=1;partial=fp32,bf16"))
    assert r.verdict == "identified" and r.left[0].scheme == Scheme()
    assert r.left[0].schemes == [Scheme(), Scheme(partial="bf16")]
    grid = parse_grid("promote_every=none,64,128")
    r = identify_scheme(_hidden(Scheme(promote_every=64), arch="gfx908"), "f16f32", grid, shape=(8, 8, 64))
    assert r.verdict == "identified" and r.left[0].label == "gfx908 + promote_every=64"
    assert r.left[0].schemes == [Scheme(promote_every=64), Scheme(promote_every=128)]
    r = identify_scheme(_hidden(Scheme(promote_every=64)), "f16f32", grid, shape=(8, 8, 64))
    assert r.verdict == "undecided" and r.scheme is None
    assert [c.scheme for c in r.left] == [Scheme(), Scheme(promote_every=64)]


def test_one_model_at_two_instruction_widths_is_merged_only_where_the_cuts_agree() -> None:
    """sm75 (k = 8) and sm80 (k = 16) share a model: one candidate for the plain chain, two for split_k=3, whose
    slices end at other places (168 vs 160 of 512)."""
    r = identify_scheme(_hidden(Scheme(split_k=3), arch="sm80"), "f16f32", parse_grid("split_k=1,3"))
    assert r.verdict == "identified" and r.left[0].label == "sm80 = sm86 = sm89 + split_k=3"


def test_model_specs_are_candidates_too() -> None:
    """A hypothetical model (a spec) run at the base architecture's instruction width, beside catalogue rows."""
    spec = "t-fdpa:L=16,F=26,rho=rz-fp32"
    model = parse_model_spec(spec, like=smtmma.lookup("sm90", "f16f32").model)
    dev = CallableDevice(lambda A, B, C: smtmma.matmul(model, "f16f32", A, B, C, k=16, scheme=Scheme(promote_every=128)))
    r = identify_scheme(dev, "f16f32", parse_grid("promote_every=none,128"), candidates=explicit_space(["sm90", spec], "f16f32"))
    assert r.verdict == "identified" and r.left[0].label == f"{model.describe()} + promote_every=128"


def test_the_default_shape_lets_every_slice_promote() -> None:
    assert default_shape(parse_grid(GRID)) == (16, 16, 512)
    assert default_shape(parse_grid("promote_every=none,32,64,128;split_k=1,2,4")) == (16, 16, 1024)
    assert default_shape(parse_grid("promote_every=4096;split_k=8")) == (16, 16, MAX_DEFAULT_K)
    assert default_shape([Scheme()], ks=(4, 8, 48)) == (16, 16, 528)


def test_a_grid_is_the_product_less_what_scheme_refuses_for_the_company() -> None:
    assert [s.spec() for s in parse_grid("c_in=accumulator,epilogue;beta=1,0.5")] == [
        "plain", "c_in=epilogue", "beta=0.5,c_in=epilogue"]
    assert parse_grid("promote_every=none,off;split_k=1,1") == [Scheme()]


def test_scheme_grids_refuse_nonsense(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="beta=0.5 need c_in='epilogue'"):
        parse_grid("beta=1,0.5")
    with pytest.raises(InputError, match="split_k must be an int"):
        parse_grid("split_k=0,1")
    with pytest.raises(InputError, match="is not FIELD=V1,V2"):
        parse_grid("split_k")
    with pytest.raises(InputError, match="field split_k given twice"):
        parse_grid("split_k=1;split_k=2")
    with pytest.raises(UnknownNameError, match="scheme field"):
        parse_grid("promote=64")
    with pytest.raises(InputError, match="round must be one of"):
        parse_grid("round=up")
    with pytest.raises(InputError, match="identifies a GEMM callable"):
        identify_scheme(SimDevice("sim:sm90", "sm90"), "f16f32", parse_grid("split_k=1,2"))
    with pytest.raises(InputError, match="no candidate: no model of f16f32 runs these schemes at K = 32"):
        identify_scheme(_hidden(Scheme()), "f16f32", parse_grid("split_k=64"), shape=(4, 4, 32))
    assert main(["identify", "--device", "sim:t-fdpa:L=8", "--instr", "f16f32", "--scheme-grid", "split_k=1,2"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["identify", "--device", "sim:sm90", "--instr", "f16f32", "--gemm-shape", "8x8x8"]) == 2
    assert main(["identify", "--device", "sim:sm90", "--instr", "f16f32", "--scheme-grid", "split_k=1,2",
                 "--gemm-shape", "8x8"]) == 2
    assert "--gemm-shape must be MxNxK" in capsys.readouterr().err


def test_a_sim_device_is_a_dry_run_of_the_plain_chain(capsys: pytest.CaptureFixture[str]) -> None:
    """sim:ARCH with a grid: does the grid tell that architecture's plain chain apart, here among two candidates?"""
    assert main(["identify", "--device", "sim:gfx942", "--instr", "f16f32", "--candidates", "gfx90a,gfx942",
                 "--scheme-grid", "split_k=1,2;round=rne,rz", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["candidate"] == "gfx942 + round=rne" and rec["candidates"] == 8
