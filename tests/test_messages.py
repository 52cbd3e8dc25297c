"""Messages speak the interface they came from; printed bounds explain their symbols; models say where they round."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import smtmma
from smtmma.catalogue import lookup
from smtmma.cli import main
from smtmma.models import parse_model_spec

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- Python spelling in Python, options on the command line

def test_python_api_says_round_keyword():
    with pytest.raises(smtmma.NotRepresentableError) as e:
        smtmma.matmul("h100", "f16f32", [[1.0, 0.1]], [[1], [1]])
    assert "round='rne'" in str(e.value) and "--round" not in str(e.value)


@pytest.fixture
def npys(tmp_path):
    paths = {}
    for name, arr in (("A", np.array([[1.0, 0.1]])), ("B", np.array([[1.0], [1.0]])), ("Af", np.array([[1.0, 0.5]]))):
        paths[name] = str(tmp_path / f"{name}.npy")
        np.save(paths[name], arr)
    paths["D"] = str(tmp_path / "D.npy")
    return paths


def test_cli_matmul_says_round_option(capsys, npys):
    code, out, err = run(capsys, "matmul", "--arch", "h100", "--instr", "f16f32", npys["A"], npys["B"], "-o", npys["D"])
    assert code == 2 and out == ""
    assert err == ("smtmma: error: A[0, 1] = 0.1 is not representable in fp16 (nearest: 0.0999755859375); "
                   "pass --round rne to round\n")
    assert run(capsys, "matmul", "--arch", "h100", "--instr", "f16f32", npys["A"], npys["B"], "-o", npys["D"],
               "--round", "rne")[0] == 0


@pytest.mark.parametrize("extra, says", [
    (["--k", "0"], "smtmma: error: --k must be an integer in 1..1024"),
    (["--bits"], "smtmma: error: A holds float64 values, not fp16 bit patterns: leave out --bits"),
])
def test_cli_matmul_other_options(capsys, npys, extra, says):
    code, _, err = run(capsys, "matmul", "--arch", "h100", "--instr", "f16f32", npys["Af"], npys["B"], "-o", npys["D"], *extra)
    assert code == 2 and err.startswith(says) and err.count("\n") == 1, err
    assert "np.asarray" not in err and "k=" not in err


# ---------------------------------------------------------------- bounds explain their symbols

SYMBOLS = ("e_max = the largest unbiased exponent among the non-zero products a_k*b_k (e_a + e_b) and c, the exponent the "
           "fused sum is aligned at; 2^(e_max-24) = one unit of the F=24 fraction bits kept below it; ulp(fp32) = the unit "
           "in the last place of D in fp32 at D's exponent e_D: 2^(max(e_D, -126) - 23) (2^-149 for D = 0)")


def test_error_bound_says_what_e_max_and_ulp_are(capsys):
    # a 1 s solver timeout keeps this short: the bound and its symbols are printed whatever the verdict
    code, out, _ = run(capsys, "query", "error-bound", "--arch", "sm80", "--instr", "f16f32", "--timeout", "1")
    assert code in (0, 3)
    lines = out.splitlines()
    assert "  bound: 9*2^(e_max-24) + 1 ulp(fp32)" in lines
    assert f"  where: {SYMBOLS}" in lines
    assert lines.index(f"  where: {SYMBOLS}") > lines.index("  bound: 9*2^(e_max-24) + 1 ulp(fp32)")
    assert not any(line.startswith("  symbols:") for line in lines)
    code, out, _ = run(capsys, "query", "error-bound", "--arch", "sm80", "--instr", "f16f32", "--timeout", "1", "--json")
    rec = json.loads(out)
    assert rec["bound"] == "9*2^(e_max-24) + 1 ulp(fp32)" and rec["symbols"] == SYMBOLS


# ---------------------------------------------------------------- where each model rounds

def test_cdna3_says_it_rounds_down_inside_and_to_nearest_at_the_end():
    m = lookup("gfx942", "f16f32").model
    text = m.rounding_summary()
    inside, _, end = text.partition("; D ")
    assert "rounded down (RD, toward -inf) to F2=31 bits" in inside and "c rounded down (RD, toward -inf) to F=24" in inside
    assert end == "rounded to nearest, ties to even (RNE), to fp32 after each FDPA of L=8"
    assert m.rounding_summary(short=True) == "RZ F=24, RD F2=31 -> RNE fp32"
    twin = m.replace(sum_rz=True)  # the RZ twin of 000 §6.2.4: no round-down left
    assert "RD" not in twin.rounding_summary() and twin.rounding_summary(short=True) == "RZ F=24, RZ F2=31 -> RNE fp32"
    assert parse_model_spec(m.describe(), like=m) == m  # the spec string is unchanged and still parses back


@pytest.mark.parametrize("arch, instr, short, end", [
    ("sm90", "f16f32", "RZ F=25 -> RZ fp32", "D rounded toward zero (RZ) to fp32 after each FDPA of L=16"),
    ("sm89", "e4m3f32", "RZ F=13 -> RZ e8m13", "D rounded toward zero (RZ) to e8m13 (in fp32) after each FDPA of L=16"),
    ("sm80", "f16f16", "RZ F=24 -> RNE fp16", "D rounded to nearest, ties to even (RNE), to fp16 after each FDPA of L=8"),
    ("sm80", "f64f64", "RNE fp64 per FMA", None),
    ("gfx908", "f16f32", "exact -> RNE fp32", None),
    ("gfx90a", "bf16f32", "RNE+FTZ fp32 per op", None),
])
def test_rounding_summary_from_the_fields(arch, instr, short, end):
    m = lookup(arch, instr).model
    assert m.rounding_summary(short=True) == short
    if end:
        assert m.rounding_summary().endswith(end)
    if m.kind == "t-fdpa":
        assert "truncated toward zero (RZ) to F=" in m.rounding_summary()


def test_list_rounding_and_the_readme_tell_the_same_story(capsys):
    code, out, _ = run(capsys, "list", "--arch", "mi300x", "--instr", "f16f32")
    assert code == 0
    header, row = out.splitlines()[:2]
    assert header.split()[:6] == ["ARCH", "FAMILY", "INSTR", "OP", "MODEL", "ROUNDING"]
    assert "RZ F=24, RD F2=31 -> RNE fp32" in row
    code, out, _ = run(capsys, "list", "--arch", "mi300x", "--instr", "f16f32", "--json")
    (rec,) = json.loads(out)
    assert rec["rounding_short"] == "RZ F=24, RD F2=31 -> RNE fp32" and "rounded down (RD" in rec["rounding"]
    readme = (ROOT / "README.md").read_text()
    assert "CDNA3 rounds down\n" not in readme  # D is rounded to nearest: only the sums inside round down
    assert "CDNA3 rounds its sums down inside, D to nearest" in readme


# -- every library message names a parameter the way its caller gives it -----------------------------

@pytest.mark.parametrize("call, argv, python, cli", [
    (lambda: smtmma.query("symmetry", "sm80", "f16f32", tight=True),
     ["query", "symmetry", "--arch", "sm80", "--instr", "f16f32", "--tight"],
     "tight=True applies to error-bound only", "--tight applies to error-bound only"),
    (lambda: smtmma.query("symmetry", "sm80", "f16f32", model="t-fdpa:F=99"),
     ["query", "symmetry", "--arch", "sm80", "--instr", "f16f32", "--model", "t-fdpa:F=99"],
     "model='t-fdpa:F=99': model parameter F=99", "--model 't-fdpa:F=99': model parameter F=99"),
    (lambda: smtmma.query("custom", "sm80", "f16f32"), ["query", "custom", "--arch", "sm80", "--instr", "f16f32"],
     "custom needs predicate=", "custom needs --predicate FILE"),
    (lambda: smtmma.distinguish("t-fdpa:F=25", "t-fdpa:F=26", instr="f16f32"),
     ["distinguish", "t-fdpa:F=25", "t-fdpa:F=26", "--instr", "f16f32"],
     "give like= (e.g. like='sm80':", "give --like ARCH (e.g. --like sm80:"),
    (lambda: smtmma.distinguish("sm80", "sm90", instr="f16f32", domain=" "),
     ["distinguish", "sm80", "sm90", "--instr", "f16f32", "--domain", " "],
     "or leave domain= out", "or leave --domain out"),
])
def test_messages_speak_the_interface_they_came_from(capsys, call, argv, python, cli) -> None:
    with pytest.raises(smtmma.SmtmmaError) as e:
        call()
    assert python in str(e.value) and "--" not in str(e.value)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("smtmma: error: ") and cli in err and python not in err
