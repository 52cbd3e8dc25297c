"""The SMT paper's Table 4 claims (001): exact verdicts, replayed witnesses, certificates re-checked by a second backend."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from smtmma.formats import from_fraction, to_fraction
from smtmma.proofs import Context, load_claims, recheck
from smtmma.proofs.claims_smt_paper import FINAL_ROUNDING_ROWS, ieee_sum, sm70_f16f16, sm70_f16f32, paper_value
from smtmma.proofs.hypotheses import evaluate, tc
from smtmma.queries.distinguish import Witness
from smtmma.simulate import simulate_dot

CLAIMS = load_claims()
FAST = ["exact-products", "exact-products-model", "exact-addition-fp16", "exact-addition-fp16-model", "fp16-output-rne",
        "fp16-output-rne-model", "truncation-not-rz", "rounding-of-accumulator", "accumulation-order",
        "accumulation-order-model", "no-normalization", "no-normalization-model", "subnormal-inputs",
        "subnormal-inputs-model", "subnormal-outputs", "subnormal-outputs-model", "rounding-of-accumulator-model"]
CTX = Context(solver="bitwuzla", timeout=60)


def _d(model, a, b, c):  # type: ignore[no-untyped-def]
    return int(simulate_dot(model, None, np.array([a], dtype=np.uint64), np.array([b], dtype=np.uint64),
                            np.array([c], dtype=np.uint64), backend="numpy")[0])


@pytest.mark.parametrize("name", FAST)
def test_table4_claim_verdict(name: str) -> None:
    c = CLAIMS[name]
    out = c.run(CTX)
    assert out.verdict == c.expected and out.agrees is True, out.detail
    assert out.certificate is not None and out.certificate.checks >= 1


def test_truncation_not_rz_model_fails_only_with_a_subnormal_factor() -> None:
    """The catalogue aligns at e_a + e_b, a subnormal factor's exponent e_min above the product's value: the
    witness has one, and sm70 is below RZ on it; every normal input is proved equal."""
    out = CLAIMS["truncation-not-rz-model"].run(CTX)
    assert out.verdict == "fails (holds for normal inputs)" and out.agrees is False
    assert out.witness is not None and out.certificate is not None and out.certificate.checks == 2
    a, b = int(out.witness["a"][0], 16), int(out.witness["b"][0], 16)
    assert (a & 0x7C00) == 0 or (b & 0x7C00) == 0  # a subnormal (or zero) factor
    sm70, rz = (int(out.witness["outputs"][k].split()[0], 16) for k in ("sm70", "ieee-rz"))
    assert to_fraction("fp32", sm70) < to_fraction("fp32", rz)


_RM_INPUTS = [(0x3C00, 0x3C00, 0x80000000), (0x8000, 0x3C00, 0x00000000), (0x0000, 0x8000, 0x80000000),
              (0x7C00, 0x0000, 0x3F800000), (0x7C00, 0x3C00, 0xFF800000), (0x0001, 0x0001, 0x00000001),
              (0x4000, 0x3C00, 0xAD800000), (0x7BFF, 0x7BFF, 0x7F7FFFFF), (0x7E00, 0x3C00, 0x3F800000),
              (0x0200, 0x8001, 0x00000003)]


@pytest.mark.parametrize("rm", ["rne", "rz", "ru", "rd"])
def test_ieee_sum_is_the_papers_product_then_addition(rm: str) -> None:
    """``ieee_sum`` (one FMA rounded with rm) gives the bits of the paper's ToFP32(a)*ToFP32(b) (+)_rm c on zeros of
    both signs, infinities, NaN, subnormals, overflow and 4000 random inputs (the SMT proof: -m slow)."""
    from smtmma.proofs.claims_smt_paper import ieee_mul_add
    from smtmma.proofs.hypotheses import Hyp

    m, rng = sm70_f16f32(), np.random.default_rng(7)
    paper = ieee_mul_add(rm)
    hyps = [ieee_sum(rm), Hyp("paper", paper.fmt, paper.fn)]
    rows = _RM_INPUTS + [(int(x), int(y), int(z)) for x, y, z in zip(rng.integers(0, 1 << 16, 4000),
                                                                       rng.integers(0, 1 << 16, 4000),
                                                                       rng.integers(0, 1 << 32, 4000))]
    for a, b, c in rows:
        outs, _ = evaluate(m, hyps, Witness((a,), (b,), c))
        assert outs[f"ieee-{rm}"] == outs["paper"], (rm, hex(a), hex(b), hex(c))


@pytest.mark.slow
@pytest.mark.parametrize("rm", ["rne", "rz", "ru", "rd"])
def test_ieee_sum_equals_the_papers_form_on_every_input(rm: str) -> None:
    """The same, proved for every FP16 a, b and FP32 c (about 20 s per mode)."""
    from smtmma.proofs.claims_smt_paper import ieee_mul_add
    from smtmma.proofs.hypotheses import Hyp, ask

    paper = ieee_mul_add(rm)
    f = ask("FMA_rm != product then add_rm", sm70_f16f32(), 1, [ieee_sum(rm), Hyp("paper", paper.fmt, paper.fn)],
            lambda alg, x, o: [alg.not_(alg.eq(o[f"ieee-{rm}"], o["paper"]))], solver="bitwuzla", timeout=120, proof=True)
    assert f.verdict == "unsat"


def test_exact_products_witness_is_the_exact_product() -> None:
    out = CLAIMS["exact-products"].run(CTX)
    w = out.witness
    assert w is not None
    a, b = int(w["a"][0], 16), int(w["b"][0], 16)
    d = _d(sm70_f16f32(), [a, 0, 0, 0], [b, 0, 0, 0], 0)
    assert to_fraction("fp32", d) == to_fraction("fp16", a) * to_fraction("fp16", b)
    # and the product is not an FP16 value (so an FP16 product would differ in every mode)
    with pytest.raises(Exception):
        from_fraction("fp16", to_fraction("fp16", a) * to_fraction("fp16", b))


def test_table3_truncation_not_rz() -> None:
    """001 Table 3: a = 2, b = 1, c = -2^-40: the hardware (and sm70) 2, RZ 2 - 2^-23."""
    m = sm70_f16f32()
    w = Witness((0x4000,), (0x3C00,), from_fraction("fp32", Fraction(-1, 2**40)))
    outs, _ = evaluate(m, [tc("sm70", m), ieee_sum("rz")], w)
    assert outs["sm70"] == 0x40000000
    assert to_fraction("fp32", outs["ieee-rz"]) == 2 - Fraction(1, 2**23)


@pytest.mark.parametrize("a,b,hw", FINAL_ROUNDING_ROWS)
def test_published_final_rounding_rows(a: str, b: str, hw: str) -> None:
    """tensor_core_semantics index.html, 'Rounding of Final Result': the hardware's (RNE) values."""
    assert _d(sm70_f16f16(), [paper_value("fp16", a)], [paper_value("fp16", b)], 0) == paper_value("fp16", hw)


def test_published_accumulation_order_row() -> None:
    """index.html 'Accumulation Order': both orders give the hardware's 1.0021672248840332*2^15 (as printed, 17 digits)."""
    m = sm70_f16f32()
    x, y = paper_value("fp16", "1.9990234375*2^-9"), paper_value("fp16", "1.9990234375*2^-1")
    c = from_fraction("fp32", Fraction("1.0021368265151978") * 2**15 // Fraction(1, 2**8) * Fraction(1, 2**8))
    d1, d2 = _d(m, [x, y], [y, y], c), _d(m, [y, x], [y, y], c)
    assert d1 == d2
    assert abs(float(to_fraction("fp32", d1)) / 2**15 - 1.0021672248840332) < 1e-15


@pytest.mark.parametrize("name", ["exact-products", "subnormal-outputs-model"])
def test_certificate_rechecks_with_a_second_backend(name: str) -> None:
    out = CLAIMS[name].run(CTX)
    assert out.certificate is not None
    answers = recheck(out.certificate, solver="z3", timeout=60)
    assert answers and all(a.agrees for a in answers), [(a.label, a.expected, a.got) for a in answers]


def test_volta_alignment_published_row_sides_with_sm70() -> None:
    """index.html row 5: sm70 gives the hardware's value exactly, the paper's own model the value the hardware did not."""
    from smtmma.proofs.claims_smt_paper import PUBLISHED_ROW, paper_volta

    a1, b1, c, hw, other = PUBLISHED_ROW
    m = sm70_f16f32()
    w = Witness((paper_value("fp16", a1), 0, 0, 0), (paper_value("fp16", b1), 0, 0, 0), paper_value("fp32", c))
    outs, _ = evaluate(m, [tc("sm70", m), paper_volta()], w)
    assert float(to_fraction("fp32", outs["sm70"])) == float(hw.split("*")[0]) * 2**29
    assert float(to_fraction("fp32", outs["SMT paper fp_add(5,3)"])) == float(other.split("*")[0]) * 2**29
    out = CLAIMS["volta-alignment-vs-smt-paper"].run(CTX)
    assert out.verdict == "hardware sides with sm70" and out.agrees is False


# -- 001 §6: Ootomo-Yokota vs Markidis (Property 5) ----------------------------------------------------------


def _oy_errors(w):  # type: ignore[no-untyped-def]
    """Both methods on NumPy and their exact errors, recomputed here from the simulator's own sm70 calls."""
    from smtmma.catalogue import model_of
    from smtmma.proofs.claims_ootomo import HYPS, base_model, property5

    outs, ok = evaluate(base_model(), HYPS, w, property5)
    exact = sum(to_fraction("fp32", a) * to_fraction("fp32", b) for a, b in zip(w.a, w.b)) + to_fraction("fp32", w.c)
    return outs, ok, {k: abs(to_fraction("fp32", v) - exact) for k, v in outs.items()}, model_of("sm70", "f16f32")


def test_ootomo_walkthrough_errors_exact() -> None:
    """001 §6 walk-through (scaled by 2^10): Markidis exact (1024 + 2^-13), O-Y 1024 (error 2^-13)."""
    from smtmma.proofs.claims_ootomo import walkthrough

    w = walkthrough()
    outs, ok, err, m = _oy_errors(w)
    assert ok
    assert to_fraction("fp32", outs["Markidis"]) == 1024 + Fraction(1, 2**13)
    assert to_fraction("fp32", outs["Ootomo-Yokota"]) == 1024
    assert err == {"Markidis": 0, "Ootomo-Yokota": Fraction(1, 2**13)}
    # the mechanism, on the simulator directly: the inputs are FP16 values, so O-Y's first call is sm70(a16, b16, 0)
    a16 = [from_fraction("fp16", to_fraction("fp32", x)) for x in w.a]
    b16 = [from_fraction("fp16", to_fraction("fp32", x)) for x in w.b]
    assert to_fraction("fp32", _d(m, a16, b16, 0)) == 1024  # 1024 + 2^-14 truncated by the normalization
    assert _d(m, a16, b16, w.c) == outs["Markidis"]  # C inside: the register holds 1024 + 2^-13 exactly


def test_ootomo_table5_as_printed_does_not_separate() -> None:
    """001 Table 5's inputs as printed: both methods give the same value (the inputs are FP16 values, C = 2^-24)."""
    from smtmma.proofs.claims_ootomo import TABLE5, fp32_witness

    outs, ok, err, _ = _oy_errors(fp32_witness(*TABLE5))
    assert outs["Markidis"] == outs["Ootomo-Yokota"] and not ok
    assert err["Markidis"] == err["Ootomo-Yokota"] == Fraction(1, 2**40)


def test_ootomo_pinned_certificate_rechecks() -> None:
    """Property 5's full query with the walk-through pinned: sat with bitwuzla, replayed, and sat again with z3."""
    from smtmma.proofs.certificate import Certificate
    from smtmma.proofs.claims_ootomo import (
        HYPS,
        K,
        base_model,
        pinned,
        property5,
        walkthrough,
    )
    from smtmma.proofs.hypotheses import ask

    w = walkthrough()
    f = ask("pinned", base_model(), K, HYPS, property5, domain=pinned(w), solver="bitwuzla", timeout=60)
    assert f.verdict == "sat" and f.witness == w and f.block is not None
    answers = recheck(Certificate({"name": "ootomo-pinned"}, [f.block]), solver="z3", timeout=60)
    assert answers and all(a.agrees for a in answers)


@pytest.mark.slow
def test_ootomo_vs_markidis_claim() -> None:
    out = CLAIMS["ootomo-vs-markidis"].run(CTX)
    assert out.verdict == "sat" and out.agrees is True, out.detail
    w = out.witness
    assert w is not None
    wit = Witness(tuple(int(x, 16) for x in w["a"]), tuple(int(x, 16) for x in w["b"]), int(w["c"], 16))
    _, ok, err, _ = _oy_errors(wit)
    assert ok and err["Markidis"] < err["Ootomo-Yokota"]
