"""Nonsense that used to be accepted silently, or to end in a traceback: each is refused in one short line, status 2."""

from __future__ import annotations

import pytest

from smtmma.cli import main
from smtmma.errors import InputError
from smtmma.models import Model
from smtmma.queries.backends import available

HUGE = "1" + "0" * 5000

CASES = [
    (["list", "--arch", ""], "--arch is empty"),
    (["list", "--instr", "  "], "--instr is empty"),
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--domain", "lanes=100"],
     "domain: lanes=100 but the dot product has only K=16 lanes"),
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--domain", f"exp={HUGE}:1"], "domain: bad item 'exp=10000"),
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--domain", f"lanes={HUGE}"], "domain: bad item 'lanes=1000"),
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--domain", "a0=0x" + "f" * 40], "domain: 'a0=0xffff"),
    (["distinguish", "sm80", f"t-fdpa:F={HUGE}", "--instr", "f16f32"], "model 't-fdpa:F=1000"),
    (["query", "symmetry", "--arch", "sm80", "--instr", "f16f32", "--model", f"t-fdpa:L={HUGE}"], "--model 't-fdpa:L=100"),
    (["distinguish", "sm100", "st-fdpa:L=64,F=25", "--instr", "nvf4f32"], "model 'st-fdpa:L=64,F=25': st-fdpa multiplies "
     "power-of-two scales"),
    (["distinguish", "sm80", "t-fdpa:F=24,F=25", "--instr", "f16f32"], "model 't-fdpa:F=24,F=25': parameter F is given twice"),
    # a model the encodings cannot run: refused when it is made, in every command, not by an assertion deep inside
    (["simulate", "--arch", "gfx942", "--instr", "f16f32", "--model", "tr-fdpa:F2=0", "--a", "1", "--b", "1", "--c", "0"],
     "F2=0 < F=24"),
    (["simulate", "--arch", "gfx90a", "--instr", "f16f32", "--model", "ftz-addmul:P=3", "--a", "1", "--b", "1", "--c", "0"],
     "P=3: FTZ-AddMul (Alg. 2) adds products in pairs"),
    (["simulate", "--arch", "sm90", "--instr", "f16f32", "--model", "t-fdpa:rho=rne-fp16", "--a", "1", "--b", "1", "--c", "0"],
     "rho=rne-fp16 rounds to fp16, but D is fp32"),
    (["distinguish", "sm80", "t-fdpa:rho=rz-fp32", "--instr", "f16f16"], "model 't-fdpa:rho=rz-fp32': rho=rz-fp32 rounds to fp32"),
    (["simulate", "--arch", "sm90", "--instr", "f16f32", "--model", "", "--a", "1", "--b", "1", "--c", "0"],
     "argument --model: expected a model spec"),
    (["simulate", "--arch", "sm90", "--instr", "f16f32", "--model", "t-fdpa:F=\uff12\uff15", "--a", "1", "--b", "1", "--c", "0"],
     "parameter F="),
    # empty names would write into the current folder, or nowhere
    (["hw", "kernels", "--out", ""], "argument --out: expected a file or folder name"),
    (["prove", "exact-products", "--save", ""], "argument --save: expected a file or folder name"),
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--emit-smt2", ""], "argument --emit-smt2: expected a file"),
    (["suite", "--instr", "f16f32", "-o", ""], "argument -o/--output: expected a file or folder name"),
    # a domain item given twice, or one the dot product does not have: refused, not silently overridden
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--domain", "lanes=4,lanes=8"], "domain: 'lanes=4' and 'lanes=8'"),
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--domain", "finite,specials"], "domain: 'finite' and 'specials'"),
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--domain", ","], "domain is empty"),
    (["suite", "--instr", "f16f32", "--domain", "lanes=99"], "domain: lanes=99 but the dot product has only K=16 lanes"),
    # sizes and times no machine can honour
    (["suite", "--instr", "f16f32", "--pool", "999999999999"], "argument --pool: expected a number of random inputs"),
    (["validate", "--device", "sim:sm90", "--arch", "sm90", "--instr", "f16f32", "--k", "99999999"],
     "argument --k: expected a dot-product length in 1..65536"),
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--timeout", "3e6"], "argument --timeout: expected a positive"),
    (["distinguish", "sm80", "sm90", "--instr", "f16f32", "--seed", "4294967296"], "argument --seed: expected a seed"),
]


@pytest.mark.skipif(not available(), reason="no SMT backend installed")
@pytest.mark.parametrize("argv, starts", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_refused_in_one_short_line(capsys, argv: list[str], starts: str) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("smtmma: error: " + starts), err[:300]
    assert err.count("\n") == 1 and len(err) < 400 and "Traceback" not in err


def test_st_fdpa_refuses_scales_with_a_significand() -> None:
    with pytest.raises(InputError, match="use gst-fdpa"):
        Model("st-fdpa", "e2m1", "e2m1", "fp32", "fp32", L=64, F=25, rho="rz-fp32", block=16, scale_fmt="ue4m3")
    Model("st-fdpa", "e2m1", "e2m1", "fp32", "fp32", L=32, F=25, rho="rz-fp32", block=32, scale_fmt="ue8m0")
