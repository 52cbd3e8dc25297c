"""``smtmma check --against``: which candidate models explain a recorded log, whatever its ``arch`` field says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smtmma.check import check_against
from smtmma.cli import main
from smtmma.cli.space_options import build_space

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "hw-samples"
H100 = str(SAMPLES / "H100-fp16-fp32.jsonl")
A100 = str(SAMPLES / "A100-fp16-fp32.jsonl")
ADA = str(SAMPLES / "Ada-e4m3-fp32.jsonl")

#: Catalogue entries equal to sm90 on the H100 lines (every F=25, L=16 T-FDPA), and to sm80 on the A100 ones.
HOPPER_CLASS = ["sm90", "sm90/wgmma", "sm100", "sm100/tcgen05", "sm120"]
AMPERE_CLASS = ["sm75", "sm80", "sm86", "sm89"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def mislabelled(tmp_path: Path) -> str:
    """The H100 log with its arch field wrong on every line: another NVIDIA arch, an AMD arch without the op, a name
    no catalogue knows, and an op the arch does not have."""
    path = tmp_path / "mislabelled.jsonl"
    with open(H100) as src, open(path, "w") as out:
        for i, line in enumerate(src):
            rec = json.loads(line)
            rec["arch"] = ("sm80", "gfx908", "my-new-gpu", "sm70")[i % 4]
            if i % 4 == 3:
                rec["op"] = "wgmma"
            out.write(json.dumps(rec) + "\n")
    return str(path)


def test_h100_log_names_hopper_and_the_models_equal_to_it(capsys):
    code, out, err = run(capsys, "check", H100, "--against", "catalogue", "--json")
    assert code == 0 and err == ""
    rec = json.loads(out)
    assert rec["consistent"] == {"f16f32": HOPPER_CLASS}
    rows = rec["against"]["f16f32"]
    assert [r["model"] for r in rows[:5]] == HOPPER_CLASS and all(r["explained"] == r["lines"] == 300 for r in rows[:5])
    assert [r["explained"] for r in rows] == sorted((r["explained"] for r in rows), reverse=True)
    sm80 = next(r for r in rows if r["model"] == "sm80")
    assert sm80 == {"model": "sm80", "spec": "t-fdpa:L=8,F=24,rho=rz-fp32", "explained": 202, "lines": 300,
                    "first_missed": f"{H100}:2"}
    assert (rec["lines"], rec["compared"], rec["errors"], rec["file_errors"]) == (300, 300, 0, 0)


def test_a100_log_names_the_ampere_class(capsys):
    code, out, _ = run(capsys, "check", A100, "--against", "catalogue")
    assert code == 0
    assert f"consistent with every f16f32 line: {', '.join(AMPERE_CLASS)}" in out
    row = next(r for r in out.splitlines() if r.startswith("  sm80 "))
    assert row.split() == ["sm80", "300/300", "t-fdpa:L=8,F=24,rho=rz-fp32"]


def test_a_wrong_arch_field_is_ignored(capsys, tmp_path):
    path = mislabelled(tmp_path)
    assert run(capsys, "check", path)[0] != 0  # the plain check believes the arch field (and cannot read some lines)
    code, out, err = run(capsys, "check", path, "--against", "catalogue", "--json")
    assert code == 0 and err == ""
    rec = json.loads(out)
    assert rec["consistent"] == {"f16f32": HOPPER_CLASS} and rec["compared"] == 300 and rec["errors"] == 0


def test_a_log_mixing_instruction_types_is_grouped_by_instr(capsys):
    code, out, _ = run(capsys, "check", A100, ADA, "--against", "sm80,sm89,sm90", "--json")
    assert code == 0
    rec = json.loads(out)
    assert rec["consistent"] == {"f16f32": ["sm80", "sm89"], "e4m3e4m3f32": ["sm89"]}
    assert [r["model"] for r in rec["against"]["e4m3e4m3f32"]] == ["sm89", "sm90"]  # sm80 has no fp8: left out there


def test_none_explains_every_line_exit_1_names_the_best(capsys):
    code, out, _ = run(capsys, "check", H100, "--against", "sm80,sm70")
    assert code == 1
    assert f"f16f32: no candidate explains every line; the best, sm80, misses 98 of 300 (first: {H100}:2)" in out


def test_a_grid_and_the_library_call(capsys):
    code, out, _ = run(capsys, "check", H100, "--grid", "t-fdpa:L=8,16;F=24..26;rho=rz-fp32", "--json")
    assert code == 0
    assert json.loads(out)["consistent"] == {"f16f32": ["t-fdpa:L=16,F=25,rho=rz-fp32"]}
    rep = check_against([H100], lambda instr: build_space(instr, ["sm90", "t-fdpa:F=26"], None, None, None, lenient=True))
    assert rep.explained and rep.consistent == {"f16f32": ["sm90"]}
    assert [(c.model, c.explained) for c in rep.instrs[0].counts] == [("sm90", 300), ("t-fdpa:L=16,F=26,rho=rz-fp32", 265)]


@pytest.mark.parametrize("argv, code, starts", [
    (["--against", "nonsense"], 2, "candidate 'nonsense': neither 'catalogue'"),
    (["--like", "sm80"], 2, "--like and --vendor choose candidates"),
    (["--against", "sm80", "--like", "sm999"], 2, "--like sm999: unknown architecture"),
    (["--grid", "t-fdpa:F=99"], 2, "grid 't-fdpa:F=99': F=99 is out of range"),
])
def test_bad_options_are_one_line(capsys, argv, code, starts):
    got, out, err = run(capsys, "check", H100, *argv)
    assert got == code and out == ""
    assert err.startswith("smtmma: error: " + starts) and err.count("\n") == 1, err


def test_a_log_without_d_has_nothing_to_match(capsys, tmp_path):
    path = tmp_path / "inputs.jsonl"
    path.write_text('{"arch": "sm90", "instr": "f16f32", "a": ["3c00"], "b": ["3c00"], "c": "00000000"}\n')
    code, out, err = run(capsys, "check", str(path), "--against", "catalogue")
    assert code == 2 and "1 without d" in out
    assert "no line has a recorded d" in err
