"""Claims of the MMA-Sim paper (000 §5 Table 8, §6.2 Table 10) and of FTTN (004 §V) as smtmma.proofs checks."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from smtmma.catalogue import model_of
from smtmma.formats import from_fraction, to_fraction
from smtmma.proofs import get_claim, recheck
from smtmma.proofs.mmasim_common import fixed_output_block, sim
from smtmma.proofs.claim import Context
from smtmma.proofs.claims_fttn import FTTN_GPUS, fttn_exact, fttn_operands, fttn_values
from smtmma.proofs.claims_mmasim import (
    FP16_ARCHS,
    TABLE8,
    eq10_input,
    eq10_witness,
    one_fdpa_k,
    table8_rows,
)
from smtmma.queries.backends import available, solve
from smtmma.queries.distinguish import Witness

F = Fraction
P2 = lambda e: F(2) ** e


# -- table8-discrepancy ------------------------------------------------------------------------------

#: 000 Table 8 as printed (row -> column -> d_00); "-0.375 or 0.0" for CDNA2 BF16 (without / with "_1k").
PRINTED = {
    "Volta": {"FP16": "0.0"}, "Turing": {"FP16": "-0.5"},
    "Ampere": {"TF32/BF16": "-0.5", "FP16": "-0.5"},
    "Ada Lovelace": {"TF32/BF16": "-0.5", "FP16": "-0.5", "FP8": "0.0"},
    "Hopper": {"TF32/BF16": "-0.75", "FP16": "-0.75", "FP8": "0.0"},
    "Blackwell": {"TF32/BF16": "-0.75", "FP16": "-0.75", "FP8": "-0.75"},
    "RTX Blackwell": {"TF32/BF16": "-0.75", "FP16": "-0.75", "FP8": "-0.75"},
    "CDNA1": {"TF32/BF16": "-0.875", "FP16": "-0.875"},
    "CDNA2": {"TF32/BF16": "-0.375 or 0.0", "FP16": "0.0"},
    "CDNA3": {"TF32/BF16": "-0.5", "FP16": "-0.5", "FP8": "-1.0"},
}


def test_table8_cells_are_the_printed_table() -> None:
    """The claim's cells are Table 8 as printed (and the caption's -0.875 for FP32/FP64)."""
    for row, col, arch, instr, op, value in TABLE8:
        if row == "caption":
            assert value == F(-7, 8)
            continue
        printed = PRINTED[row][col]
        if " or " in printed:
            assert value == F(printed.split(" or ")[0 if op == "mfma" else 1])
        else:
            assert value == F(printed)
    # every printed non-N/A cell is covered
    assert {(r, c) for r, c, *_ in TABLE8 if r != "caption"} == {(r, c) for r, cols in PRINTED.items() for c in cols}


def test_eq10_scaled_inputs() -> None:
    """Eq. 10 as is for fp16/bf16; e4m3 needs s = 7 and e4m3fnuz s = 9 (every value a normal power of two)."""
    assert eq10_input(model_of("sm80", "f16f32")) == ((-P2(13), F(-1, 2), F(-1, 4), F(-1, 8)),
                                                      (P2(10), F(1), F(1), F(1)), P2(23), 0)
    a, b, c, s = eq10_input(model_of("sm89", "e4m3e4m3f32"))
    assert (c, s) == (P2(16), 7) and [x * y for x, y in zip(a, b)] == [-c, -P2(-8), -P2(-9), -P2(-10)]
    assert eq10_input(model_of("gfx942", "fp8fp8f32"))[2:] == (P2(14), 9)


def test_table8_every_cell_matches() -> None:
    rows = table8_rows()
    assert len(rows) == len(TABLE8)
    bad = [(r["row"], r["column"], r["arch"], r["instr"], r["got"]) for r in rows if not r["match"]]
    assert not bad


def test_table8_claim_and_certificate_second_backend() -> None:
    out = get_claim("table8-discrepancy").check(Context())
    assert (out.verdict, out.agrees) == ("holds", True)
    assert out.certificate is not None and len(out.certificate.blocks) == 6  # one per distinct FP16 model
    others = [s for s in available() if s != out.solver.split(":")[-1]]
    if not others:
        pytest.skip("only one solver backend installed")
    answers = recheck(out.certificate, solver=others[0])
    assert [a.got for a in answers] == ["unsat"] * 6


def test_table8_block_is_not_vacuous() -> None:
    """The same fixed-input block asserting d != a wrong value (Hopper's -0.75 on Volta) is sat."""
    m = model_of("sm70", "f16f32")
    w, s = eq10_witness(m, one_fdpa_k(m))
    assert s == 0
    wrong = fixed_output_block("volta vs -0.75", m, w, from_fraction("fp32", F(-3, 4)))
    assert solve(wrong.text, (), timeout=30).verdict == "sat"
    right = fixed_output_block("volta vs 0", m, w, from_fraction("fp32", F(0)))
    assert solve(right.text, (), timeout=30).verdict == "unsat"


# -- max-discrepancy -------------------------------------------------------------------------------------


def test_max_discrepancy() -> None:
    out = get_claim("max-discrepancy").check(Context())
    # 000 Table 8, FP16 column: 0.0, -0.5, -0.75, -0.875 -> 4 distinct values on Eq. 10
    assert out.extra["eq10_count"] == len({F(v) for cols in PRINTED.values() for c, v in cols.items() if c == "FP16"})
    names = [a for a, _ in FP16_ARCHS]
    models = [model_of(a, "f16f32", o) for a, o in FP16_ARCHS]
    # the maximum is the number of distinct arithmetics among the ten f16f32 models
    assert out.extra["max"] == len(set(models)) == 6
    w = out.witness
    assert w is not None
    wit = Witness(tuple(int(x, 16) for x in w["a"]), tuple(int(x, 16) for x in w["b"]), int(w["c"], 16))
    got = [sim(m, wit) for m in models]  # replayed
    assert len(set(got)) == out.extra["count"] == 6 > out.extra["eq10_count"]
    assert [int(w["outputs"][n].split()[0], 16) for n in names] == got
    assert out.agrees is True
    assert [b.expect for b in out.certificate.blocks] == ["sat", "unsat", "unsat"]


# -- risky-designs: fixed witnesses, exact expectations computed by hand ---------------------------------


def test_risky_rz_e8m13_witness() -> None:
    """000 §6.2.3: c = 4 - 2^-22, a_k = b_k = 2 (16 lanes): exact 68 - 2^-22.  F = 13 at e_max = 2 cuts c to
    4 - 2^-11 (RZ-FP32 keeps 68 - 2^-11); RZ-E8M13 at 2^6 keeps 13 bits: 68 - 2^-7, 1 E8M13 ulp (1024 FP32 ulps) low."""
    m = model_of("sm89", "e4m3e4m3f32")
    two = from_fraction("e4m3", F(2))
    w = Witness((two,) * 16, (two,) * 16, from_fraction("fp32", 4 - P2(-22)))
    assert sim(m, w) == from_fraction("fp32", 68 - P2(-7))
    assert sim(m.replace(rho="rz-fp32"), w) == from_fraction("fp32", 68 - P2(-11))


def test_risky_cdna2_ftz_witness() -> None:
    """000 §6.2.1: a subnormal fp16 b (2^-24 * 853) times a = 23280: the product 1.18 is flushed on CDNA2."""
    m = model_of("gfx90a", "f16f32")
    a, b = from_fraction("fp16", F(23280)), 0x0355
    w = Witness((a, 0, 0, 0), (b, 0, 0, 0), 0)
    assert sim(m, w) == 0
    exact = F(23280) * to_fraction("fp16", b)
    assert sim(m.replace(ftz_inputs=False), w) == from_fraction("fp32", exact)  # exact in fp32


@pytest.mark.slow
def test_risky_designs_claim() -> None:
    out = get_claim("risky-designs").check(Context(timeout=120))
    assert out.verdict == "holds", out.detail
    assert len(out.extra["rows"]) == 7 and all(b.expect == "sat" for b in out.certificate.blocks)
    for r in out.extra["rows"]:  # every witness replayed; the risky output is off the exact value
        assert r["errors"]["d"]["error"] != "0"
    answers = recheck(out.certificate)
    assert all(a.agrees for a in answers)


# -- fttn-gemm ---------------------------------------------------------------------------------------------


def test_fttn_exact_value() -> None:
    # 004 §V: D_ij = -(2^10 2^10 + sum_{2^12} 2^-2 2^-3 + sum_{2^12 - 1} 2^-3 2^-3) + 2^20 = -(2^7 + 2^6 - 2^-6)
    assert fttn_exact() == -(P2(7) + P2(6) - P2(-6))
    A, B, C = fttn_operands()
    assert F(float((A.astype(np.float64) @ B.astype(np.float64))[0, 0])) - F(float(C[0, 0])) == -fttn_exact()


def _rne32(x: F) -> F:
    return F(float(np.float32(float(x))))  # exact for these dyadic values (float64 holds them)


def test_fttn_values() -> None:
    """Each GPU's value, against references computed here from the models' definitions (000 Alg. 2/3/5)."""
    v = fttn_values()
    K = 1 << 13
    prods = [F(2 ** 20)] + [F(1, 32) if j % 2 else F(1, 64) for j in range(1, K)]
    # V100 (F = 23) and A100 (F = 24): 2^-5 and 2^-6 lie 25/26 bits below e_max = 20: all truncated -> 0 (= 004)
    assert v["V100"]["epilogue"] == 0 and v["A100"]["epilogue"] == 0
    # H100 (F = 25): the 2^-5 terms (2^12 of them) survive, the 2^-6 terms do not -> acc = 2^20 + 128
    assert v["H100"]["epilogue"] == -F(K // 2, 32)
    # H100 with C in the accumulator: the first chunk of 16 loses its 7 2^-6 terms, the rest is exact: 004's 191.875
    assert v["H100"]["in-accumulator"] == fttn_exact() + F(7, 64) == -F(191875, 1000)
    # MI100 (E-FDPA, L = 4): each chunk summed exactly, RNE to FP32 with the accumulator
    acc = F(0)
    for k0 in range(0, K, 4):
        acc = _rne32(acc + sum(prods[k0:k0 + 4]))
    assert v["MI100"]["epilogue"] == F(2 ** 20) - acc == -256
    # MI250X (FTZ-AddMul, P = 4): ((p0 + p1) + (p2 + p3)) in FP32 RNE, then added to the accumulator
    acc = F(0)
    for k0 in range(0, K, 4):
        p = prods[k0:k0 + 4]
        acc = _rne32(acc + _rne32(_rne32(p[0] + p[1]) + _rne32(p[2] + p[3])))
    assert v["MI250X"]["epilogue"] == F(2 ** 20) - acc == -F(255875, 1000)
    assert {g: (a, o) for g, (a, o) in FTTN_GPUS.items()} == {g: (x["arch"], x["op"]) for g, x in v.items()}


def test_fttn_claim_verdict() -> None:
    out = get_claim("fttn-gemm").check(Context())
    # 004 §V: 0 on V100, A100, MI250X; 255.875 on MI100; 191.875 on H100 -- the models disagree on three GPUs
    assert out.verdict == "V100 0, A100 0, MI250X 255.875, MI100 256, H100 128"
    assert out.agrees is False and out.certificate is None
