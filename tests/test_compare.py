"""ulp differences (smtmma.compare.ulp_distance) and the ``smtmma compare`` command: exact bits, counts, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import smtmma
from smtmma.cli import main
from smtmma.compare import NONFINITE, bucket_bounds, compare_outputs, ulp_distance
from smtmma.errors import InputError
from smtmma.sampling import is_inf_bits, is_nan_bits, to_float64
from smtmma.vectors import parse_line

ROOT = Path(__file__).resolve().parents[1]
H100_LOG = str(ROOT / "hw-samples" / "H100-fp16-fp32.jsonl")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fmt, x, y, ulps", [
    ("fp32", 0x3F800000, 0x3F800001, 1),          # 1.0 and the next float
    ("fp32", 0x3F7FFFFF, 0x3F800000, 1),          # across a binade edge
    ("fp32", 0x00000000, 0x80000000, 0),          # +0 and -0
    ("fp32", 0x00000001, 0x80000001, 2),          # smallest subnormal and its negation
    ("fp32", 0x007FFFFF, 0x00800000, 1),          # largest subnormal, smallest normal
    ("fp32", 0x3F800000, 0xBF800000, 2 * 0x3F800000),  # 1 and -1: every pattern in between
    ("fp16", 0x0001, 0x8001, 2),
    ("fp16", 0x3C00, 0x3C05, 5),
    ("bf16", 0x0001, 0x8001, 2),
    ("bf16", 0x3F80, 0x3F7F, 1),
    ("fp64", 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 2 * 0x7FEFFFFFFFFFFFFF),  # wider than int64
    ("fp32", 0x7FC00000, 0xFFFFFFFF, 0),          # NaN and NaN (any payloads, signs)
    ("fp32", 0x7F800000, 0x7F800000, 0),          # the same infinity
    ("fp32", 0x7F7FFFFF, 0x7F800000, NONFINITE),  # max finite vs inf
    ("fp16", 0x7BFF, 0x7C00, NONFINITE),
    ("bf16", 0x7F7F, 0x7F80, NONFINITE),
    ("fp32", 0x7F800000, 0xFF800000, NONFINITE),  # +inf vs -inf
    ("fp32", 0x7FC00000, 0x3F800000, NONFINITE),  # NaN vs a number
])
def test_ulp_distance_exact(fmt, x, y, ulps):
    assert ulp_distance(fmt, x, y) == ulps
    assert ulp_distance(fmt, y, x) == ulps
    assert smtmma.ulp_distance(fmt, np.array([x]), np.array([y])).tolist() == [ulps]


def test_ulp_distance_counts_every_fp16_value_in_between():
    """Exhaustive: from 1.0 to every finite fp16 pattern, the count of distinct values strictly between, plus one."""
    pats = np.arange(1 << 16, dtype=np.uint64)
    finite = ~(is_nan_bits("fp16", pats) | is_inf_bits("fp16", pats))
    vals = to_float64("fp16", pats)
    order = np.unique(vals[finite])  # -0 and +0 are one value
    rank = np.searchsorted(order, vals[finite])
    got = ulp_distance("fp16", np.full(int(finite.sum()), 0x3C00, np.uint64), pats[finite])
    assert got.dtype == np.uint64
    assert np.array_equal(got.astype(np.int64), np.abs(rank - np.searchsorted(order, 1.0)))


def test_ulp_distance_refuses_what_is_not_a_pattern():
    with pytest.raises(InputError, match="not a 16-bit pattern of fp16"):
        ulp_distance("fp16", 0x10000, 0)
    with pytest.raises(InputError, match="integer bit patterns"):
        ulp_distance("fp32", np.array([1.0]), np.array([1]))


def test_histogram_buckets():
    assert [bucket_bounds(v) for v in (0, 1, 2, 3, 4, 5, 8, 9, 16, 17)] == [
        (0, 0), (1, 1), (2, 2), (3, 4), (3, 4), (5, 8), (5, 8), (9, 16), (9, 16), (17, 32)]
    c = compare_outputs("fp16", np.array([0, 1, 5, 0x7C00, 0x7E00, 0x3C00]), np.array([0, 2, 0x8003, 0x7C00, 0x7C00, 0x3C10]))
    assert (c.n, c.differ, c.nonfinite, c.max_ulps, c.worst, c.first_nonfinite) == (6, 4, 1, 16, 5, 4)
    assert c.histogram == [(0, 0, 2), (1, 1, 1), (2, 2, 0), (3, 4, 0), (5, 8, 1), (9, 16, 1)]


def test_compare_sm80_sm90_differ_and_the_worst_input_replays(capsys):
    code, out, err = run(capsys, "compare", "sm80", "sm90", "--instr", "f16f32", "-n", "2000", "--seed", "1", "--json")
    assert code == 1 and err == ""
    rec = json.loads(out)
    assert rec["format"] == "fp32" and rec["n"] == 2000 and rec["k"] == 16 and rec["nonfinite"] == 0
    assert 0 < rec["differ"] < 2000
    assert sum(b["count"] for b in rec["histogram"]) == 2000
    assert rec["histogram"][0] == {"ulps": "0", "lo": 0, "hi": 0, "count": 2000 - rec["differ"]}
    v = parse_line(json.dumps(rec["worst"]))
    args = (np.array([v.a]), np.array([v.b]), np.array([v.c]))
    d80, d90 = int(smtmma.simulate_dot("sm80", "f16f32", *args)[0]), int(smtmma.simulate_dot("sm90", "f16f32", *args)[0])
    assert (v.expect["sm80"], v.expect["sm90"]) == (d80, d90)
    assert ulp_distance("fp32", d80, d90) == rec["max_ulps"] > 0


def test_compare_text_and_identical_models(capsys):
    code, out, _ = run(capsys, "compare", "sm80", "sm90", "--instr", "f16f32", "-n", "500")
    assert code == 1
    assert "differ: " in out and "|ulp difference| in fp32" in out and "non-finite mismatch" in out
    assert "max: " in out and '"expect": {"sm80": ' in out
    code, out, _ = run(capsys, "compare", "sm80", "t-fdpa:L=8,F=24,rho=rz-fp32", "--instr", "f16f32", "-n", "500")
    assert code == 0 and "differ: 0 of 500" in out


def test_compare_a_model_with_a_recorded_log(capsys):
    code, out, _ = run(capsys, "compare", "sm90", H100_LOG, "--json")
    rec = json.loads(out)
    assert code == 0 and rec["instr"] == "f16f32" and (rec["n"], rec["differ"]) == (300, 0) and rec["worst"] is None
    code, out, _ = run(capsys, "compare", "sm80", H100_LOG, "--json")
    rec = json.loads(out)
    assert code == 1 and rec["differ"] == 98  # sm80's 202 of 300 (check --against says the same)
    assert rec["worst"]["d"] != rec["worst"]["expect"]["sm80"]


def test_compare_with_an_npy_d_of_saved_inputs(capsys, tmp_path):
    npz, dnpy = str(tmp_path / "in.npz"), str(tmp_path / "D.npy")
    assert run(capsys, "compare", "sm90", "--save-inputs", npz, "--instr", "f16f32", "-n", "300")[0] == 0
    z = np.load(npz)
    np.save(dnpy, smtmma.simulate_dot("sm80", "f16f32", z["a"], z["b"], z["c"]))
    code, out, _ = run(capsys, "compare", dnpy, "sm80", "--instr", "f16f32", "-n", "300", "--json")
    assert code == 0 and json.loads(out)["differ"] == 0
    code, out, _ = run(capsys, "compare", "sm90", dnpy, "--instr", "f16f32", "-n", "300", "--json")
    assert code == 1 and json.loads(out)["differ"] > 0


def test_compare_refuses_an_npy_side_that_is_no_array(capsys, tmp_path):
    archive = tmp_path / "D.npy"
    with open(archive, "wb") as fh:  # an .npz archive under an .npy name
        np.savez(fh, d=np.zeros(4, np.uint32))
    for side, message in [(str(archive), f"{archive}: holds no single array (an .npz archive?)"),
                          (str(tmp_path / "none.npy"), f"{tmp_path / 'none.npy'}: no such file")]:
        code, out, err = run(capsys, "compare", "sm90", side, "--instr", "f16f32", "-n", "4")
        assert (code, out) == (2, "") and err == f"smtmma: error: {message}\n"


@pytest.mark.parametrize("argv, starts", [
    (["compare", "sm90", "nonsense", "--instr", "f16f32"], "SIDE 'nonsense': neither an architecture"),
    (["compare", "sm90", "--instr", "f16f32"], "compare takes 2 SIDEs"),
    (["compare", "sm90", "sm80"], "--instr is required"),
    (["compare", "sm90", "gfx90a", "--instr", "e4m3f32"], "candidate 'gfx90a': gfx90a has no instruction"),
    (["compare", "sm90", "sm80", "--instr", "f16f32", "--dist", "cauchy"], "argument --dist: invalid choice"),
])
def test_compare_bad_input_is_one_line(capsys, argv, starts):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("smtmma: error: " + starts) and err.count("\n") == 1, err
