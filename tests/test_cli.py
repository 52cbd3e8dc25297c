"""The command line (smtmma.cli): list, simulate, check; --json contracts; exit codes; one-line errors."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from smtmma import __version__
from smtmma.catalogue import ARCHS, CATALOGUE
from smtmma.cli import main

ROOT = Path(__file__).resolve().parents[1]

# Real GPU outputs (hw-samples, first lines of A100-fp16-fp16, H100-fp16-fp32, H100-e4m3-fp32).
A100_F16F16 = ('{"arch":"sm80","gpu":"A100","instr":"f16f16","op":"mma","a":["3688","be38","393f","342b","3975","269f",'
               '"a94f","ba49"],"b":["3c41","ba17","beb7","32ef","3b48","320f","34f3","3d7f"],"c":"3bad","d":"3c44"}')
H100_F16F32 = ('{"arch":"sm90","gpu":"H100","instr":"f16f32","op":"mma","a":["3bd5","3c3e","b534","3df8","b9e8","356e",'
               '"3c05","3f47","3b17","3ae9","bc60","359f","2788","34e3","3c37","3ac8"],"b":["38ca","b935","36bf","34ec",'
               '"bf9a","3797","be0b","bc83","2df8","b98b","ba97","4075","a388","40f2","30e1","b527"],"c":"3f676bea",'
               '"d":"3f6d0cda"}')
H100_E4M3_WGMMA = ('{"arch":"sm90","gpu":"H100","instr":"e4m3f32","op":"wgmma","a":["37","3f","32","3d","b8","c1","b5",'
                   '"ae","38","ad","37","b8","b8","32","af","9d","2a","c2","99","b3","2e","ae","b0","b5","c1","b5","b3",'
                   '"a3","2e","3e","3c","2b"],"b":["af","36","b0","b5","b9","11","bf","39","2e","a6","1c","33","bd","3c",'
                   '"aa","ad","ae","3b","2e","32","a1","b2","aa","b8","19","b9","b6","22","28","b9","b8","b7"],'
                   '"c":"00000000","d":"bf61f000"}')
REAL_LINES = (A100_F16F16, H100_F16F32, H100_E4M3_WGMMA)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(err: str, starts: str) -> None:
    assert err.startswith("smtmma: error: " + starts), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err


def flip_d_bit(line: str, bit: int = 0) -> str:
    rec = json.loads(line)
    width = len(rec["d"])
    rec["d"] = f"{int(rec['d'], 16) ^ (1 << bit):0{width}x}"
    return json.dumps(rec)


def write(tmp_path: Path, name: str, *lines: str) -> str:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


# ---------------------------------------------------------------- top level

def test_subprocess_help_and_exit_codes_documented():
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "smtmma", "--help"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert proc.stdout.startswith("usage: smtmma [-h] [--version] [--debug] COMMAND ...")
    for cmd in ("list", "simulate", "check"):
        assert f"    {cmd}  " in proc.stdout
    assert "exit status:\n  0  success\n  1  check:" in proc.stdout
    assert "\n  2  usage or input error" in proc.stdout
    assert "\n  3  a solver gave up" in proc.stdout
    assert "\n  70 internal error" in proc.stdout and "\n  130 interrupted" in proc.stdout


def test_version(capsys):
    assert run(capsys, "--version") == (0, f"smtmma {__version__}\n", "")


@pytest.mark.parametrize("cmd", ["list", "simulate", "check"])
def test_subcommand_help_has_examples(capsys, cmd):
    code, out, err = run(capsys, cmd, "--help")
    assert code == 0 and err == ""
    assert out.startswith(f"usage: smtmma {cmd}")
    assert "examples:\n  smtmma " + cmd in out


def test_no_command(capsys):
    code, out, err = run(capsys)
    assert code == 2 and out == ""
    assert_one_line_error(err, "a command is required: list, simulate or check")


def test_usage_error_is_one_line(capsys):
    code, out, err = run(capsys, "simulate", "--arch", "sm90")
    assert code == 2 and out == ""
    assert_one_line_error(err, "the following arguments are required: --a, --b, --c (see 'smtmma simulate --help')")
    code, out, err = run(capsys, "frobnicate")
    assert code == 2
    assert_one_line_error(err, "argument COMMAND: invalid choice: 'frobnicate'")


# ---------------------------------------------------------------- list

def test_list_table(capsys):
    code, out, err = run(capsys, "list")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["ARCH", "FAMILY", "INSTR", "OP", "MODEL", "ROUNDING", "SOURCE", "SHAPES"]
    assert lines[1].split() == ["sm70", "Volta", "f16f32", "mma", "*", "t-fdpa:L=4,F=23,rho=rz-fp32", "RZ", "F=23", "->",
                                "RZ", "fp32", "T4", "m8n8k4"]
    assert lines[-2] == f"{len(CATALOGUE)} rows; * = default op family of (arch, instr)"
    assert lines[-1] == ("provisional (sm103, sm110, sm121, gfx950, gfx11, gfx12): no recorded hardware output; documented "
                         "shapes, the model of sm100, sm120, gfx942 as a hypothesis; run `smtmma hw survey` on one")
    assert len(lines) == len(CATALOGUE) + 4
    # columns line up: MODEL starts at the same offset on every row
    col = lines[0].index("MODEL")
    assert all(row[col - 2:col] == "  " for row in lines[1:-3])
    provisional = [r for r in lines[1:-3] if "(provisional)" in r]
    assert {r.split()[0] for r in provisional} == {a for a, x in ARCHS.items() if x.provisional}
    assert all("hypothesis " in r and "; shapes: " in r for r in provisional)


def test_list_filters(capsys):
    code, out, _ = run(capsys, "list", "--arch", "h100", "--instr", "f16f32")
    assert code == 0
    rows = [r.split() for r in out.splitlines()[1:-2]]
    assert rows == [
        ["sm90", "Hopper", "f16f32", "mma", "*", "t-fdpa:L=16,F=25,rho=rz-fp32", "RZ", "F=25", "->", "RZ", "fp32", "T4",
         "m16n8k8", "m16n8k16"],
        ["sm90", "Hopper", "f16f32", "wgmma", "t-fdpa:L=16,F=25,rho=rz-fp32", "RZ", "F=25", "->", "RZ", "fp32", "T4",
         "m64n8k16", "m64n256k16"],
    ]
    assert out.splitlines()[-1] == "2 rows; * = default op family of (arch, instr)"


def test_list_no_rows(capsys):
    assert run(capsys, "list", "--arch", "sm70", "--instr", "bf16f32") == (
        0, "no catalogue rows for arch sm70, instr bf16f32\n", "")


def test_list_json(capsys):
    code, out, err = run(capsys, "list", "--json")
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert len(rows) == len(CATALOGUE)
    assert rows[0] == {
        "arch": "sm70", "vendor": "nvidia", "family": "Volta", "provisional": False, "instr": "f16f32", "op": "mma",
        "default": True,
        "model": "t-fdpa:L=4,F=23,rho=rz-fp32", "kind": "t-fdpa",
        "formats": {"a": "fp16", "b": "fp16", "c": "fp32", "d": "fp32"}, "source": "T4",
        "shapes": [{"name": "mma.sync.aligned.m8n8k4", "m": 8, "n": 8, "k": 4}],
        "rounding": "terms aligned at e_max and truncated toward zero (RZ) to F=23 fraction bits inside each FDPA, then "
                    "summed exactly; D rounded toward zero (RZ) to fp32 after each FDPA of L=4",
        "rounding_short": "RZ F=23 -> RZ fp32",
    }
    code, out, _ = run(capsys, "list", "--json", "--arch", "mi300x", "--instr", "fp8f32")
    assert [(r["arch"], r["instr"], r["model"]) for r in json.loads(out)] == [
        ("gfx942", "fp8fp8f32", "gtr-fdpa:L=16,F=24,F2=31,rho=rne-fp32")]
    code, out, _ = run(capsys, "list", "--json", "--arch", "mi355x", "--instr", "mxe2m1f32")
    (row,) = json.loads(out)
    assert (row["provisional"], row["hypothesis_from"], row["model"]) == (True, "gfx942", "st-fdpa:L=32,F=25,rho=rz-fp32,block=32")
    assert row["documents"].startswith("AMD Instinct CDNA4 ISA") and [s["name"] for s in row["shapes"]] == [
        "v_mfma_scale_f32_16x16x128_f8f6f4", "v_mfma_scale_f32_32x32x64_f8f6f4"]


def test_list_unknown_arch(capsys):
    code, out, err = run(capsys, "list", "--arch", "sm99")
    assert code == 2 and out == ""
    assert_one_line_error(err, "unknown architecture 'sm99'; did you mean sm90 or sm89? valid: sm70, sm75, sm80, sm86, "
                               "sm89, sm90, sm100, sm103, sm110, sm120, sm121, gfx908, gfx90a, gfx942, gfx950, gfx11, gfx12 "
                               "(and aliases: see 'smtmma list')")


# ---------------------------------------------------------------- simulate

SIM = ("simulate", "--arch", "sm90", "--instr", "f16f32")


def test_simulate_text(capsys):
    code, out, err = run(capsys, *SIM, "--a", "1,2^-10", "--b", "3c00,0x1400", "--c", "0")
    assert code == 0 and err == ""
    assert out.splitlines() == [
        "arch    sm90 (Hopper)",
        "instr   f16f32  (a fp16, b fp16, c fp32, d fp32)",
        "op      mma",
        "model   t-fdpa:L=16,F=25,rho=rz-fp32  [T4]",
        "a       0x3c00 (1.0), 0x1400 (0.0009765625)",
        "b       0x3c00 (1.0), 0x1400 (0.0009765625)",
        "c       0x00000000 (0.0)",
        "d       0x3f800008 (1.0000009536743164)",
    ]


def test_simulate_json_contract(capsys):
    code, out, err = run(capsys, *SIM, "--a", "1,2^-10", "--b", "1,2^-10", "--c", "0", "--json")
    assert code == 0 and err == ""
    assert json.loads(out) == {"arch": "sm90", "instr": "f16f32", "op": "mma", "model": "t-fdpa:L=16,F=25,rho=rz-fp32",
                               "a": ["3c00", "1400"], "b": ["3c00", "1400"], "c": "00000000", "d": "3f800008",
                               "d_value": 1.0000009536743164}


def test_simulate_reproduces_real_gpu_line(capsys):
    rec = json.loads(H100_F16F32)
    code, out, _ = run(capsys, *SIM, "--a", ",".join("0x" + x for x in rec["a"]), "--b", ",".join("0x" + x for x in rec["b"]),
                       "--c", "0x" + rec["c"], "--json")
    assert code == 0 and json.loads(out)["d"] == rec["d"] == "3f6d0cda"


def test_simulate_op_and_model_override(capsys):
    # Hopper wgmma e4m3 (T4: F=13, RZ to E8M13): 2^-20 is below the 13 fractional bits of the sum's exponent.
    code, out, _ = run(capsys, "simulate", "--arch", "h100", "--instr", "e4m3f32", "--op", "wgmma",
                       "--a", "1,1", "--b", "0.5,-0.5", "--c", "2^-20", "--json")
    assert code == 0
    assert json.loads(out) == {"arch": "sm90", "instr": "e4m3e4m3f32", "op": "wgmma",
                               "model": "t-fdpa:L=32,F=13,rho=rz-e8m13", "a": ["38", "38"], "b": ["30", "b0"],
                               "c": "35800000", "d": "00000000", "d_value": 0.0}
    # 1 + 2^-24 + 2^-24: F=25 keeps 2^-24 (sum 1+2^-23 = 0x3f800001), F=23 drops both addends.
    args = (*SIM, "--a", "1,2^-24,2^-24", "--b", "1,1,1", "--c", "0", "--json")
    assert json.loads(run(capsys, *args)[1])["d"] == "3f800001"
    code, out, _ = run(capsys, *args, "--model", "t-fdpa:F=23")
    assert json.loads(out)["model"] == "t-fdpa:L=16,F=23,rho=rz-fp32"
    assert json.loads(out)["d"] == "3f800000"


def test_simulate_negative_first_value(capsys):
    for argv in (("--a", "-1,2"), ("--a=-1,2",)):
        code, out, _ = run(capsys, *SIM, *argv, "--b", "1,1", "--c", "-0", "--json")
        assert code == 0
        rec = json.loads(out)
        assert (rec["a"], rec["c"], rec["d"], rec["d_value"]) == (["bc00", "4000"], "80000000", "3f800000", 1.0)


def test_simulate_special_values(capsys):
    code, out, _ = run(capsys, *SIM, "--a", "inf,1", "--b", "1,1", "--c", "nan", "--json")
    rec = json.loads(out)
    assert (rec["a"], rec["c"], rec["d"], rec["d_value"]) == (["7c00", "3c00"], "7fc00000", "7fffffff", "nan")
    code, out, _ = run(capsys, *SIM, "--a", "inf", "--b", "1", "--c", "1", "--json")
    assert json.loads(out)["d_value"] == "inf"


def test_simulate_hex_vs_decimal_rule(capsys):
    # "3e00" (hex digits, not all decimal) is hex; 0x forces hex; "1.5e2" and "1000.0" are decimal.
    out = run(capsys, *SIM, "--a", "3e00,0x1000,1.5e2,1000.0", "--b", "1,1,1,1", "--c", "0", "--json")[1]
    assert json.loads(out)["a"] == ["3e00", "1000", "58b0", "63d0"]
    # a bare "1400" (no bare hex around) is the integer 1400, not the pattern 0x1400
    out = run(capsys, *SIM, "--a", "1400", "--b", "1", "--c", "0", "--json")[1]
    assert json.loads(out)["a"] == ["6578"]


def test_simulate_refuses_ambiguous_digits_next_to_hex(capsys):
    code, out, err = run(capsys, *SIM, "--a", "3c00,1400", "--b", "1,1", "--c", "0")
    assert code == 2 and out == ""
    assert_one_line_error(err, "--a[1]: '1400' is ambiguous next to bare hex values: it reads as the decimal 1400 "
                               "(0x6578); write 0x1400 for the bit pattern or 1400.0 for the number")
    # Same value either way ("0000"), or a width that is not the format's: no ambiguity.
    out = run(capsys, *SIM, "--a", "3c00,0000", "--b", "1,10", "--c", "0", "--json")[1]
    rec = json.loads(out)
    assert (rec["a"], rec["b"]) == (["3c00", "0000"], ["3c00", "4900"])


def test_simulate_tf32_container(capsys):
    code, out, _ = run(capsys, "simulate", "--arch", "sm80", "--instr", "tf32", "--a", "3f801fff,1", "--b", "1,1",
                       "--c", "1.5", "--json")
    rec = json.loads(out)
    assert (rec["a"], rec["b"], rec["d"]) == (["1fc00", "1fc00"], ["1fc00", "1fc00"], "40600000")


def test_simulate_block_scaled(capsys):
    ones = ",".join(["1"] * 16)
    code, out, _ = run(capsys, "simulate", "--arch", "sm100", "--instr", "nvf4f32", "--a", ones, "--b", ones,
                       "--c", "0", "--scale-a", "1", "--scale-b", "0.5", "--json")
    rec = json.loads(out)
    assert (rec["scale_a"], rec["scale_b"], rec["d"], rec["d_value"]) == (["38"], ["30"], "41000000", 8.0)
    code, _, err = run(capsys, "simulate", "--arch", "sm100", "--instr", "nvf4f32", "--a", ones, "--b", ones, "--c", "0")
    assert code == 2
    assert_one_line_error(err, "nvf4f32 is block-scaled: give --scale-a and --scale-b, 1 ue4m3 value(s) each "
                               "(one per 16 values)")
    code, _, err = run(capsys, "simulate", "--arch", "sm100", "--instr", "nvf4f32", "--a", ones, "--b", ones, "--c", "0",
                       "--scale-a", "1,1", "--scale-b", "1")
    assert_one_line_error(err, "--scale-a needs 1 value(s) (one per 16 values of K=16), got 2")
    code, _, err = run(capsys, *SIM, "--a", "1", "--b", "1", "--c", "0", "--scale-a", "1", "--scale-b", "1")
    assert_one_line_error(err, "f16f32 is not block-scaled: --scale-a/--scale-b are not allowed")


@pytest.mark.parametrize(
    "args, message",
    [
        (("--arch", "sm99", "--instr", "f16f32", "--a", "1", "--b", "1", "--c", "0"),
         "unknown architecture 'sm99'; did you mean sm90 or sm89? valid: sm70, sm75, sm80, sm86, sm89, sm90, sm100, sm103, sm110, sm120, sm121, "
         "gfx908, gfx90a, gfx942, gfx950, gfx11, gfx12 (and aliases: see 'smtmma list')"),
        (("--arch", "sm90", "--instr", "f17", "--a", "1", "--b", "1", "--c", "0"),
         "unknown instruction 'f17'; "),
        (("--arch", "sm70", "--instr", "bf16f32", "--a", "1", "--b", "1", "--c", "0"),
         "sm70 has no instruction bf16f32; valid for sm70: f16f16, f16f32, f16f32c16"),
        (("--arch", "sm90", "--instr", "f16f32", "--op", "mfma", "--a", "1", "--b", "1", "--c", "0"),
         "sm90 f16f32 has no op 'mfma'; valid: mma, wgmma"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "0x3c0g", "--b", "1", "--c", "0"),
         "--a: malformed hex '0x3c0g' (expected up to 4 hex digits of fp16)"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "1,zz", "--b", "1,1", "--c", "0"),
         "--a[1]: 'zz' is neither hex (0x...) nor a decimal number"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "1", "--b", "1", "--c", "0,1"), "--c takes one value, got 2"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "1,2", "--b", "1", "--c", "0"),
         "--a has 2 values but --b has 1; a dot product needs K values of each"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "0x13c00", "--b", "1", "--c", "0"),
         "--a: '0x13c00' has more bits than fp16 (16 bits)"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "1", "--b", "1", "--c", "1ffffffff"),
         "--c: '1ffffffff' has more bits than fp32 (32 bits)"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "0.1", "--b", "1", "--c", "0"),
         "--a: 0.1 is not exactly representable in fp16 (nearest: 0x2e66 (0.0999755859375) and "
         "0x2e67 (0.10003662109375))"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "70000", "--b", "1", "--c", "0"),
         "--a: 70000 is not exactly representable in fp16 (overflow; largest finite: 0x7bff (65504.0))"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "1", "--b", "2^-25", "--c", "0"),
         "--b: 2^-25 is not exactly representable in fp16 (underflow; nearest: 0x0000 (0.0) and 0x0001 (5.960464477539063e-08))"),
        (("--arch", "sm90", "--instr", "f16f32", "--a", "1", "--b", "1", "--c", "0", "--model", "t-fdpa:Q=1"),
         "bad parameter 'Q=1' for t-fdpa; parameters:"),
        (("--arch", "sm90", "--instr", "e4m3f32", "--a", "inf", "--b", "1", "--c", "0"),
         "--a: format e4m3 has no infinity"),
    ],
)
def test_simulate_bad_inputs(capsys, args, message):
    code, out, err = run(capsys, "simulate", *args)
    assert code == 2 and out == ""
    assert_one_line_error(err, message)


@pytest.mark.parametrize(
    "a, d",
    [("-nan", "7fffffff"), ("NaN", "7fffffff"), ("+Infinity", "7f800000"), ("-INF", "ff800000"), ("-0.0e9", "00000000")],
)
def test_simulate_nan_and_inf_spellings(capsys, a, d):
    code, out, err = run(capsys, *SIM, "--a", a, "--b", "1", "--c", "0", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["d"] == d


@pytest.mark.parametrize(
    "value, message",
    [
        ("2^99999999", "--a: 2^99999999 is not exactly representable in fp16 (overflow; largest finite: 0x7bff (65504.0))"),
        ("-1.0e+99999999", "--a: -1.0e+99999999 is not exactly representable in fp16 (overflow; largest finite: "
                           "0xfbff (-65504.0))"),
        ("1.0e+99999", "--a: 1.0e+99999 is not exactly representable in fp16 (overflow;"),
        ("2^-99999999", "--a: 2^-99999999 is not exactly representable in fp16 (underflow; nearest: 0x0000 (0.0) and "
                        "0x0001 (5.960464477539063e-08))"),
        ("1" + "0" * 10**6, "--a: '10000000000000000000000000000000'... (1000001 characters) is too long for a value"),
        ("0x" + "f" * 10**6, "--a: '0xffffffffffffffffffffffffffffff'... (1000002 characters) has more bits than fp16"),
        ("3c" * 10**6, "--a: '3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c'... (2000000 characters) has more bits than fp16"),
        ("1/0", "--a: '1/0' divides by zero"),
        ("-nan(1)", "--a: '-nan(1)' is neither hex (0x...) nor a decimal number"),
    ],
    ids=lambda x: x[:20],
)
def test_simulate_huge_values_are_refused_in_one_short_line(capsys, value, message):
    code, out, err = run(capsys, *SIM, "--a", value, "--b", "1", "--c", "0")
    assert code == 2 and out == ""
    assert_one_line_error(err, message)
    assert len(err) < 200


def test_simulate_formats_without_inf_or_nan_or_sign(capsys):
    code, _, err = run(capsys, "simulate", "--arch", "gfx942", "--instr", "fp8fp8f32", "--a", "-inf", "--b", "1", "--c", "0")
    assert code == 2
    assert_one_line_error(err, "--a: format e4m3fnuz has no infinity (largest finite value: 240.0)")
    code, _, err = run(capsys, "simulate", "--arch", "sm100", "--instr", "mxe4m3f32", "--a", "1", "--b", "1", "--c", "0",
                       "--scale-a", "-nan", "--scale-b", "1")
    assert code == 2
    assert_one_line_error(err, "--scale-a: -nan is not representable in ue8m0 (it is unsigned)")


# ---------------------------------------------------------------- check

def test_check_all_match(capsys, tmp_path):
    path = write(tmp_path, "ok.jsonl", *REAL_LINES)
    code, out, err = run(capsys, "check", path)
    assert (code, err) == (0, "")
    assert out == f"{path}: 3 lines: 3 matched, 0 mismatched, 0 errors\n"


def test_check_mismatch_text(capsys, tmp_path):
    path = write(tmp_path, "bad.jsonl", A100_F16F16, flip_d_bit(A100_F16F16))
    code, out, err = run(capsys, "check", path)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"{path}: 2 lines: 1 matched, 1 mismatched, 0 errors",
        "  line 2: mismatch (sm80 f16f16 mma, t-fdpa:L=8,F=24,rho=rne-fp16)",
        "    a = 3688 be38 393f 342b 3975 269f a94f ba49",
        "    b = 3c41 ba17 beb7 32ef 3b48 320f 34f3 3d7f",
        "    c = 3bad",
        "    expected d = 3c45 (1.0673828125)",
        "    got      d = 3c44 (1.06640625)",
    ]


def test_check_json_contract(capsys, tmp_path):
    good = write(tmp_path, "good.jsonl", *REAL_LINES)
    bad = write(tmp_path, "bad.jsonl", H100_F16F32, flip_d_bit(H100_F16F32, 31), flip_d_bit(H100_E4M3_WGMMA, 12))
    code, out, err = run(capsys, "check", good, bad, "--json")
    assert (code, err) == (1, "")
    assert out.count("\n") == 1
    rep = json.loads(out)
    assert {"files", "lines", "matched"} <= rep.keys()
    assert (rep["lines"], rep["matched"], rep["mismatched"], rep["errors"]) == (6, 4, 2, 0)
    f_good, f_bad = rep["files"]
    assert {k: f_good[k] for k in ("file", "lines", "matched", "mismatched", "errors", "mismatches")} == {
        "file": good, "lines": 3, "matched": 3, "mismatched": 0, "errors": 0, "mismatches": []}
    assert (f_bad["file"], f_bad["lines"], f_bad["matched"], f_bad["mismatched"], f_bad["errors"]) == (bad, 3, 1, 2, 0)
    m1, m2 = f_bad["mismatches"]
    assert (m1["line"], m1["expected"], m1["got"]) == (2, "bf6d0cda", "3f6d0cda")
    assert (m1["expected_value"], m1["got_value"]) == (-0.925977349281311, 0.925977349281311)
    assert (m2["line"], m2["expected"], m2["got"]) == (3, "bf61e000", "bf61f000")
    assert m2["op"] == "wgmma" and m2["model"] == "t-fdpa:L=32,F=13,rho=rz-e8m13" and len(m2["a"]) == 32


def test_check_max_mismatches(capsys, tmp_path):
    lines = [flip_d_bit(A100_F16F16, bit) for bit in range(12)]
    path = write(tmp_path, "many.jsonl", *lines)
    rep = json.loads(run(capsys, "check", path, "--json")[1])
    assert rep["files"][0]["mismatched"] == 12
    assert [m["line"] for m in rep["files"][0]["mismatches"]] == list(range(1, 11))
    code, out, _ = run(capsys, "check", path, "--max-mismatches", "2")
    assert code == 1
    assert out.count("mismatch (") == 2
    assert out.splitlines()[-1] == "  ... 10 more mismatches"
    code, _, err = run(capsys, "check", path, "--max-mismatches", "-1")
    assert code == 2
    assert_one_line_error(err, "argument --max-mismatches: expected a non-negative integer, got '-1'")


def test_check_keeps_going_past_bad_lines(capsys, tmp_path):
    rec = json.loads(H100_F16F32)
    missing_c = json.dumps({k: v for k, v in rec.items() if k != "c"})
    wrong_len = json.dumps({**rec, "b": rec["b"][:-1]})
    too_wide = json.dumps({**rec, "a": ["13bd5"] + rec["a"][1:]})
    unknown_arch = json.dumps({**rec, "arch": "sm99"})
    path = write(tmp_path, "mixed.jsonl", H100_F16F32, missing_c, "{oops", wrong_len, too_wide, unknown_arch,
                 A100_F16F16)
    code, out, err = run(capsys, "check", path, "--json")
    assert code == 2  # bad lines and no mismatch
    assert_one_line_error(err, f"{path}: 5 bad lines (first: line 2: missing field c (required: arch, instr, a, b, c))")
    f = json.loads(out)["files"][0]
    assert (f["lines"], f["matched"], f["mismatched"], f["errors"]) == (7, 2, 0, 5)
    msgs = [(e["line"], e["message"]) for e in f["error_messages"]]
    assert msgs[:4] == [
        (2, "line 2: missing field c (required: arch, instr, a, b, c)"),
        (3, "line 3: bad JSON: Expecting property name enclosed in double quotes at column 2"),
        (4, "line 4: a and b have different lengths (16 and 15 values)"),
        (5, "line 5: a[0]: '13bd5' has more bits than fp16 (16 bits)"),
    ]
    assert msgs[4][0] == 6 and msgs[4][1].startswith("line 6: arch: unknown architecture 'sm99'; did you mean sm90 or sm89? valid: sm70,")


def test_check_mismatch_wins_over_bad_lines(capsys, tmp_path):
    path = write(tmp_path, "both.jsonl", flip_d_bit(A100_F16F16), "{")
    code, out, err = run(capsys, "check", path)
    assert code == 1
    assert out.splitlines()[0] == f"{path}: 2 lines: 0 matched, 1 mismatched, 1 errors"
    assert "  error: line 2: bad JSON: Expecting property name enclosed in double quotes at column 2" in out.splitlines()
    assert_one_line_error(err, f"{path}: 1 bad line (first: line 2: bad JSON")


def test_check_lines_without_d(capsys, tmp_path):
    rec = json.loads(A100_F16F16)
    no_d = json.dumps({k: v for k, v in rec.items() if k != "d"})
    path = write(tmp_path, "inputs.jsonl", no_d, A100_F16F16, "", no_d)
    code, out, err = run(capsys, "check", path)
    assert (code, err) == (0, "")
    assert out == f"{path}: 3 lines: 1 matched, 0 mismatched, 0 errors, 2 without d (not compared)\n"
    f = json.loads(run(capsys, "check", path, "--json")[1])["files"][0]
    assert (f["lines"], f["matched"], f["no_expectation"]) == (3, 1, 2)


def test_check_many_files_total(capsys, tmp_path):
    p1 = write(tmp_path, "1.jsonl", A100_F16F16)
    p2 = write(tmp_path, "2.jsonl", H100_F16F32, H100_E4M3_WGMMA)
    code, out, _ = run(capsys, "check", p1, p2)
    assert code == 0
    assert out.splitlines()[-1] == "total: 3 lines: 3 matched, 0 mismatched, 0 errors"


def test_check_missing_file_keeps_the_other_reports(capsys, tmp_path):
    ok = write(tmp_path, "ok.jsonl", A100_F16F16)
    nope = str(tmp_path / "nope.jsonl")
    code, out, err = run(capsys, "check", ok, nope)
    assert code == 2
    assert out.splitlines() == [f"{ok}: 1 lines: 1 matched, 0 mismatched, 0 errors", f"{nope}: no such file",
                                "total: 1 lines: 1 matched, 0 mismatched, 0 errors, 1 file error"]
    assert_one_line_error(err, f"{nope}: no such file")
    code, out, err = run(capsys, "check", nope, ok, "--json")
    assert code == 2
    assert_one_line_error(err, f"{nope}: no such file")
    rep = json.loads(out)
    assert (rep["lines"], rep["matched"], rep["file_errors"]) == (1, 1, 1)
    assert [(f["file"], f["lines"], f["error"]) for f in rep["files"]] == [(nope, 0, "no such file"), (ok, 1, None)]


def test_check_missing_file_does_not_hide_a_mismatch(capsys, tmp_path):
    bad = write(tmp_path, "bad.jsonl", flip_d_bit(A100_F16F16))
    code, out, err = run(capsys, "check", str(tmp_path / "nope.jsonl"), bad)
    assert code == 2  # documented: a file that could not be read makes the check incomplete
    assert_one_line_error(err, f"{tmp_path / 'nope.jsonl'}: no such file")
    assert "1 mismatched" in out  # the other file is still reported


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "no test vectors (empty file or only blank lines)"),
        (b"\n  \r\n\n", "no test vectors (empty file or only blank lines)"),
        (gzip.compress(A100_F16F16.encode()), "gzip-compressed; decompress it first"),
        ("\ufeff".encode("utf-16-le") + A100_F16F16.encode("utf-16-le"), "UTF-16 text; test-vector files are UTF-8"),
    ],
    ids=["empty", "blank", "gzip", "utf16"],
)
def test_check_file_level_errors(capsys, tmp_path, content, message):
    path = tmp_path / "f.jsonl"
    path.write_bytes(content)
    ok = write(tmp_path, "ok.jsonl", A100_F16F16)
    code, out, err = run(capsys, "check", str(path), ok)
    assert code == 2
    assert_one_line_error(err, f"{path}: {message}")
    assert out.splitlines()[0].startswith(f"{path}: {message}")
    assert out.splitlines()[1] == f"{ok}: 1 lines: 1 matched, 0 mismatched, 0 errors"
    rep = json.loads(run(capsys, "check", str(path), ok, "--json")[1])
    assert rep["files"][0]["error"].startswith(message) and rep["file_errors"] == 1 and rep["matched"] == 1


def test_check_directory_with_json(capsys, tmp_path):
    ok = write(tmp_path, "ok.jsonl", A100_F16F16)
    code, out, err = run(capsys, "check", str(tmp_path), ok, "--json")
    assert code == 2
    assert_one_line_error(err, f"{tmp_path}: is a directory, not a test-vector file")
    rep = json.loads(out)
    assert [f["error"] for f in rep["files"]] == ["is a directory, not a test-vector file", None]


def test_check_bad_lines_of_every_kind(capsys, tmp_path):
    rec = json.loads(A100_F16F16)
    lines = [
        "[" * 100_000,  # RecursionError in json
        '{"arch": "sm80", "c": 1' + "0" * 5000 + "}",  # past Python's int/str digit limit
        "[1, 2]",
        A100_F16F16[:-1] + ', "d": "3c45"}',  # d given twice: which one is the record?
        json.dumps({**rec, "arch": "x" * 100_000}),
        json.dumps({**rec, "c": "f" * 100_000}),
        json.dumps({**rec, "a": [1] * 100_000}),
        json.dumps({**rec, "unknown": {"deep": [1, 2]}, "note": "extra fields are ignored"}),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_bytes("\n".join(lines).encode() + b"\n\x80\xc3 binary\x00\n")
    code, out, err = run(capsys, "check", str(path), "--json")
    assert code == 2
    assert_one_line_error(err, f"{path}: 8 bad lines (first: line 1: bad JSON: nested too deeply)")
    assert len(err) < 300
    f = json.loads(out)["files"][0]
    assert (f["lines"], f["matched"], f["errors"], f["error"]) == (9, 1, 8, None)
    assert [e["message"] for e in f["error_messages"]] == [
        "line 1: bad JSON: nested too deeply",
        "line 2: bad JSON: a number with too many digits",
        "line 3: expected a JSON object, got list",
        "line 4: field 'd' appears more than once",
        "line 5: arch: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (100000 characters) is too long for a name",
        "line 6: c: 'ffffffffffffffffffffffffffffffff'... (100000 characters) has more bits than fp16 (16 bits)",
        "line 7: a[0]: expected a hex string of fp16, got 1",
        "line 9: not UTF-8 text (byte 0)",
    ]
    assert all(len(e["message"]) < 200 for e in f["error_messages"])


def test_check_line_too_long(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("smtmma.vectors.MAX_LINE_BYTES", 1000)
    path = write(tmp_path, "long.jsonl", A100_F16F16, json.dumps({"note": "x" * 5000}), A100_F16F16)
    code, out, err = run(capsys, "check", path)
    assert code == 2
    assert out.splitlines()[0] == f"{path}: 3 lines: 2 matched, 0 mismatched, 1 errors"
    assert_one_line_error(err, f"{path}: 1 bad line (first: line 2: longer than 1000 bytes)")


def test_check_bom_and_crlf(capsys, tmp_path):
    path = tmp_path / "win.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(REAL_LINES).encode() + b"\r\n")
    code, out, err = run(capsys, "check", str(path))
    assert (code, err) == (0, "")
    assert out == f"{path}: 3 lines: 3 matched, 0 mismatched, 0 errors\n"


def test_check_standard_input(capsys, monkeypatch):
    data = ("\ufeff" + "\n".join(REAL_LINES) + "\n" + flip_d_bit(A100_F16F16) + "\n").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, err = run(capsys, "check", "-")
    assert (code, err) == (1, "")
    assert out.splitlines()[0] == "<stdin>: 4 lines: 3 matched, 1 mismatched, 0 errors"
    code, out, err = run(capsys, "check", "-", "-", "--json")
    assert code == 2
    assert json.loads(out) == {"error": "'-' (standard input) can be given once"}
    assert_one_line_error(err, "'-' (standard input) can be given once")


def test_subprocess_check_reads_stdin():
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "smtmma", "check", "-", "--json"], input="\n".join(REAL_LINES) + "\n",
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    rep = json.loads(proc.stdout)
    assert (rep["files"][0]["file"], rep["matched"], rep["file_errors"]) == ("<stdin>", 3, 0)


def test_check_batches_many_groups(capsys, tmp_path):
    # Interleaved instructions and K values: grouped per (arch, instr, op, K) but reported in line order.
    short = json.loads(A100_F16F16)
    short4 = json.dumps({**short, "a": short["a"][:4], "b": short["b"][:4], "d": None})
    lines = [A100_F16F16, H100_F16F32, short4, H100_E4M3_WGMMA] * 50
    lines[101] = flip_d_bit(lines[101], 3)
    path = write(tmp_path, "mix.jsonl", *lines)
    rep = json.loads(run(capsys, "check", path, "--json")[1])
    f = rep["files"][0]
    assert (f["lines"], f["matched"], f["mismatched"], f["no_expectation"]) == (200, 149, 1, 50)
    assert [m["line"] for m in f["mismatches"]] == [102]


def test_simulate_runs_the_instruction_named_by_op(capsys):
    """--op with an instruction name runs that instruction's model: FP8 m16n8k16 on sm90 is two FDPAs of L=8."""
    args = ("simulate", "--arch", "sm90", "--instr", "e4m3f16", "--a", "1,2,3", "--b", "1,1,1", "--c", "0", "--json")
    rc, out, _ = run(capsys, *args, "--op", "mma.sync.aligned.m16n8k16")
    assert rc == 0 and json.loads(out)["model"].startswith("t-fdpa:L=8,") and json.loads(out)["op"] == "mma"
    rc, out, _ = run(capsys, *args, "--op", "mma")
    assert rc == 0 and json.loads(out)["model"].startswith("t-fdpa:L=16,")
