"""Table 9's error bound (000 §6.1) proved compositionally on the full domain; certificates re-checked by a second backend."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from smtmma.catalogue import model_of
from smtmma.errors import InputError
from smtmma.formats import decode_scalar, floor_log2, get_format, to_fraction
from smtmma.models import Model, parse_model_spec
from smtmma.proofs import load_claims
from smtmma.proofs.certificate import Certificate, recheck
from smtmma.proofs.claim import CLAIMS, Context
from smtmma.queries.properties.error_bound import error_bound, py_ratio, table9_bound
from smtmma.simulate import simulate_dot


def test_tfdpa_bound_is_a_chain_on_the_model_and_the_checker_accepts_it() -> None:
    """One T-FDPA's bound is proved on the model's own terms: every constant the certificate declares is an input, D,
    or a lemma's fresh argument; the final statement is the query itself; the independent checker accepts it."""
    import re

    from smtmma.proof_kernel.blocks import chain_block
    from smtmma.proofs.check_certificate import check_text

    model = Model("t-fdpa", "e4m3", "e4m3", "fp16", "fp16", L=2, F=13, rho="rne-fp16")
    r = error_bound(model, K=2, timeout=60)
    assert r.verdict == "holds" and "proof" not in r.extra
    assert r.extra["lemmas"] == 17  # 13 facts; the running sums' two steps (exact, aligned) for lanes 1 and c
    text = r.smt2 or ""
    facts = [line.split(": ", 1)[1].split(" (uses")[0] for line in text.splitlines() if line.startswith("; lemma ") and "(uses" in line]
    assert len(facts) == 13 and facts[0].startswith("product 0's exact value has floor(t / 2^(e_max-F)) whole units")
    assert facts[-2] == "glue (Alg. 7 step 3): on finite inputs D is rne-fp16 of S * 2^(e_max-F)"
    assert facts[-1] == "a finite D is a whole number of units 2^(e_max-F), within 1/2 ulp of S"
    declared = set(re.findall(r"\(declare-const (\S+) ", text))
    inputs = {"a0", "a1", "b0", "b1", "c", "d"}
    assert inputs <= declared and all(n in inputs or n.startswith("lemma_") for n in declared), sorted(declared - inputs)
    assert text.count("(define-fun lemma_") == 4
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("t-fdpa bound", text)]).text(), "bitwuzla", 60.0)
    assert passed, summary


def test_trfdpa_bound_is_a_chain_on_the_model_and_the_checker_accepts_it() -> None:
    """One TR-FDPA's bound (Alg. 10) is proved on the model's own terms, in both cases of the products' exponent
    (E = e_max: floors at E; E > e_max: floors at E with F + 1 bits and the truncated products cut there); every
    constant the certificate declares is an input, D or a lemma's argument; the independent checker accepts it."""
    import re

    from smtmma.proof_kernel.blocks import chain_block
    from smtmma.proofs.check_certificate import check_text

    model = Model("tr-fdpa", "e4m3", "e4m3", "fp16", "fp16", L=2, F=12, F2=16, rho="rne-fp16")
    r = error_bound(model, K=2, timeout=120)
    assert r.verdict == "holds" and "proof" not in r.extra
    text = r.smt2 or ""
    facts = [line.split(": ", 1)[1].split(" (uses")[0] for line in text.splitlines() if line.startswith("; lemma ") and "(uses" in line]
    assert facts[0] == "E = max(e_max, e_c) is the query's e_max (or every summand is zero)"
    assert "E > e_max: the products' exact sum minus T2 * 2^(E-F2) is within (-K, K/2] units 2^(E-F)" in facts
    assert facts[-1] == "a finite D is a whole number of units 2^(E-16), within 1/2 ulp of S"
    assert r.extra["lemmas"] == len(facts) + text.count("(define-fun lemma_")
    declared = set(re.findall(r"\(declare-const (\S+) ", text))
    inputs = {"a0", "a1", "b0", "b1", "c", "d"}
    assert inputs <= declared and all(n in inputs or n.startswith("lemma_") for n in declared), sorted(declared - inputs)
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("tr-fdpa bound", text)]).text(), "bitwuzla", 120.0)
    assert passed, summary
    tight = error_bound(model, K=2, scale=Fraction(1, 2), timeout=120)  # half the bound: a replayed witness breaks it
    assert tight.verdict == "fails" and py_ratio(model, table9_bound(model, 2), tight.witness, tight.outputs["d"]) > Fraction(1, 2)


def test_gtrfdpa_bound_is_tr_fdpas_chain_per_group() -> None:
    """One GTR-FDPA's bound (Alg. 11) is TR-FDPA's chain per group (even, odd lanes, each truncated at its own
    exponent), the group merge in its four cases, and a far c dropped; every constant the certificate declares is an
    input, D or a lemma's argument; the checker accepts it; half the bound gives a replayed witness."""
    import re

    from smtmma.proof_kernel.blocks import chain_block
    from smtmma.proofs.check_certificate import check_text

    model = Model("gtr-fdpa", "e4m3", "e4m3", "fp16", "fp16", L=4, F=12, F2=16, rho="rne-fp16")
    r = error_bound(model, K=4, timeout=120)
    assert r.verdict == "holds" and "proof" not in r.extra
    text = r.smt2 or ""
    facts = [line.split(": ", 1)[1].split(" (uses")[0] for line in text.splitlines() if line.startswith("; lemma ") and "(uses" in line]
    assert len(facts) == r.extra["lemmas"] - text.count("(define-fun lemma_") == 53
    assert facts[-7] == "the products' exact running sum 3 is its even lanes' plus its odd lanes'"  # regrouped, a lemma per lane
    for case in ("e_even = e_odd = E", "e_odd < e_even = E", "e_even < e_odd = E", "E > e_max"):
        assert f"{case}: the even and odd products' exact sums minus T2 * 2^(E-F2) are within [-K, K) units 2^(E-F)" in facts
    assert "the products' exact sum minus T2 * 2^(E-F2) is within [-K, K) units 2^(E-F)" in facts  # regrouped to the lanes' order
    assert any(f.startswith("c rounded down at E (RD_F, Alg. 11 line 23) is its floor") and "dropped" in f for f in facts)
    declared = set(re.findall(r"\(declare-const (\S+) ", text))
    inputs = {"a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3", "c", "d"}
    assert inputs <= declared and all(n in inputs or n.startswith("lemma_") for n in declared), sorted(declared - inputs)
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("gtr-fdpa bound", text)]).text(), "bitwuzla", 120.0)
    assert passed, summary
    tight = error_bound(model, K=4, scale=Fraction(1, 2), timeout=120)
    assert tight.verdict == "fails" and py_ratio(model, table9_bound(model, 4), tight.witness, tight.outputs["d"]) > Fraction(1, 2)


def test_cdna3_chains_cover_what_their_cuts_need() -> None:
    """The TR-/GTR-FDPA chains cut at E with F + 1 bits, one of RD_F2's (F2 > F), and GTR-FDPA's needs both groups
    (K >= 2); other models of those kinds get the proof by parts (``error_prover``), never a wrong chain."""
    from smtmma.queries.properties.error_bound import error_facts, error_prover

    gtr, tr = model_of("gfx942", "fp8fp8f32"), model_of("gfx942", "f16f32")
    assert error_facts(gtr, 16) is not None and error_facts(tr, 8) is not None
    for model, K in ((gtr.replace(F2=gtr.F), 16), (tr.replace(F2=tr.F), 8), (gtr.replace(L=1), 1)):
        assert error_facts(model, K) is None and error_prover(model, K) is not None


def test_one_sided_interval_is_the_chain_with_an_asymmetric_last_check() -> None:
    """``above``: exact - Phi in [-(above 2^(E-F) + 1/2 ulp), (L+1) 2^(E-F) + 1/2 ulp]; TR-FDPA's round-down steps give
    above = L (the chain's facts, the last check one-sided); with above = 1/2 a witness has Phi above exact by more."""
    model = Model("tr-fdpa", "e4m3", "e4m3", "fp16", "fp16", L=2, F=12, F2=16, rho="rne-fp16")
    r = error_bound(model, K=2, fused=3, above=2, timeout=120)
    assert r.verdict == "holds" and r.extra["bound"] == "exact - Phi in [-(2*2^(e_max-12) + 1/2 ulp(fp16)), 3*2^(e_max-12) + 1/2 ulp(fp16)]"
    low = error_bound(model, K=2, fused=3, above=Fraction(1, 2), timeout=120)
    assert low.verdict == "fails" and low.witness is not None
    bound = replace(table9_bound(model, 2), above=Fraction(1, 2))
    d = low.outputs["d"]
    exact = sum(to_fraction(get_format("e4m3"), x) * to_fraction(get_format("e4m3"), y) for x, y in zip(low.witness.a, low.witness.b))
    assert to_fraction(get_format("fp16"), d) > exact + to_fraction(get_format("fp16"), low.witness.c)  # Phi above: the short side
    assert py_ratio(model, bound, low.witness, d) > 1
    with pytest.raises(InputError):
        error_bound(model, K=2, above=-1)


def test_gstfdpa_bound_is_t_fdpas_chain_on_the_group_summands() -> None:
    """One GST-FDPA's bound (Alg. 9) is T-FDPA's chain on the group summands (a group's exact dot times its scales,
    whose value reaches 8 bits above its exponent: the relative view's narrowing leaves room for that); a finite D
    has no NaN scale; the checker accepts the certificate."""
    from smtmma.proof_kernel.blocks import chain_block
    from smtmma.proofs.check_certificate import check_text

    model = parse_model_spec("gst-fdpa:L=32", model_of("sm100", "nvf4f32"))
    r = error_bound(model, K=32, timeout=120)
    assert r.verdict == "holds" and "proof" not in r.extra and r.extra["lemmas"] == 17  # as a 2-lane T-FDPA: 2 groups, c
    text = r.smt2 or ""
    assert "; lemma 1: group 0's exact value has floor(t / 2^(e_max-F)) whole units 2^(e_max-F) (Alg. 9, as Alg. 7 line 10)" in text
    assert "a finite D has finite inputs (an infinite or NaN input, or a NaN scale, makes D infinite or NaN)" in text
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("gst-fdpa bound", text)]).text(), "bitwuzla", 120.0)
    assert passed, summary


def test_tfdpa_chain_reads_c_widened_as_the_model_does() -> None:
    """An FP16 C summed into an FP32 fused sum is widened first (its subnormals become normal, with a lower
    exponent): the query's e_max reaches a widened subnormal C's (2^-24, below every e4m3 product's 2^-12), and the
    summands' floors are the model's own, so the chain runs to its end (17 lemmas and facts)."""
    from smtmma.queries.formula import Domain
    from smtmma.queries.properties.error_bound import ErrorFormula

    from smtmma.queries.distinguish import Witness
    from smtmma.queries.properties.common import replay_one

    model = Model("t-fdpa", "e4m3", "e4m3", "fp16", "fp32", L=2, F=13, rho="rz-fp32")
    assert ErrorFormula(model, 2, Domain(), table9_bound(model, 2), narrow=True, relative=True).e_max.lo <= -24
    r = error_bound(model, K=2, timeout=60)
    assert r.verdict == "holds" and r.extra["lemmas"] == 17
    # py_ratio reads C so too: sm70's f16f32c16 with c = 3 * 2^-24 (e_max = -23, not FP16's field -14) and products
    # of 2^-40 whose last bits the F = 23 sum cuts
    c16 = model_of("sm70", "f16f32c16")
    w = Witness((0x0001, 0x0001, 0, 0), (0x0201, 0x0201, 0, 0), 0x0003)  # 2^-24 x (1 + 2^-9) 2^-15 = 2^-39 + 2^-48
    d, f16, f32 = replay_one(c16, w), get_format("fp16"), get_format("fp32")
    exact = 2 * to_fraction(f16, 0x0001) * to_fraction(f16, 0x0201) + to_fraction(f16, 0x0003)
    err = abs(to_fraction(f32, d) - exact)
    assert err == Fraction(2) ** -47 and py_ratio(c16, table9_bound(c16, 4), w, d) == err / (5 * Fraction(2) ** (-23 - 23) + Fraction(2) ** -46)  # ulp(D): D near 2^-22.4


@pytest.mark.parametrize("arch,instr,model", [("sm70", "f16f32", None), ("sm89", "e4m3e4m3f16", "t-fdpa:L=2"),
                                              ("gfx942", "f16f32", "tr-fdpa:L=2")])
def test_relative_units_state_the_same_bound(arch: str, instr: str, model: str | None) -> None:
    """The query in units 2^(e_max-F-G) (what the T-FDPA chain proves) says what py_ratio computes: on simulated
    inputs (the search's large ratio, and random ones) it is violated just below the exact ratio and not at it."""
    import random

    from smtmma.proof_kernel.blocks import pin_block
    from smtmma.queries.distinguish import Witness
    from smtmma.queries.formula import Domain
    from smtmma.queries.properties.error_bound import ErrorFormula
    from smtmma.queries.properties.error_search import search
    from smtmma.queries.query_algebra import Runner, witness_pins
    from smtmma.queries.properties.common import replay_one

    m = model_of(arch, instr) if model is None else parse_model_spec(model, model_of(arch, instr))
    K = m.L
    bound = table9_bound(m, K)
    f = ErrorFormula(m, K, Domain(), bound, narrow=True, relative=True)
    assert f.relative and (arch != "sm70" or f.G == 149 + 128 - 23)  # from fp32 c's last place 2^-149 to e_max <= 128
    found = search(m, K, lambda w, d: py_ratio(m, bound, w, d), seed=1)
    assert found is not None
    rows = [found[0]]
    rng = random.Random(5)
    fa, fc = get_format(m.a_fmt), get_format(m.c_fmt)
    while len(rows) < 4:
        w = Witness(tuple(rng.getrandbits(fa.bits) for _ in range(K)), tuple(rng.getrandbits(fa.bits) for _ in range(K)),
                    rng.getrandbits(fc.bits))
        d = replay_one(m, w)
        if py_ratio(m, bound, w, d) is not None:
            rows.append(w)
    run = Runner("bitwuzla", 60, 0)
    for w in rows:
        ratio = py_ratio(m, bound, w, replay_one(m, w))
        assert ratio is not None
        below = pin_block("below", f.script(ratio - Fraction(1, 1 << 20)), witness_pins(m, w), "sat")
        at = pin_block("at", f.script(ratio), witness_pins(m, w), "unsat")
        assert (run.check(below.text).verdict, run.check(at.text).verdict) == ("sat" if ratio else "unsat", "unsat")


def test_rounding_lemma_underflow_and_e8m13() -> None:
    """The rounding step's lemma holds where it used to have a counterexample: RNE-FP16 underflowing to 0
    (ulp >> 2^(e_max-F)) and RZ-E8M13 (FP32 bits below 2^(e_max-F) are not exact)."""
    from smtmma.queries.query_algebra import Runner
    from smtmma.op_proofs.fused_sum import Plan
    from smtmma.op_proofs.rounding import conversion_lemma

    run = Runner("bitwuzla", 60, 0)
    for arch, instr in (("sm80", "f16f16"), ("sm89", "e4m3e4m3f32")):
        plan = Plan(model_of(arch, instr), 4)
        lem, _ = conversion_lemma(plan, (-(1 << 30), 1 << 30), (plan.e_lo, plan.e_hi), plan.model.F)
        assert run.check(lem.script).verdict == "unsat", (arch, instr)


def test_too_small_bound_gives_replayed_witness() -> None:
    model = model_of("sm70", "f16f32")
    r = error_bound(model, K=4, scale=Fraction(1, 8), timeout=60)
    assert r.verdict == "fails"
    assert r.witness is not None
    # exact arithmetic on the replayed output
    ratio = py_ratio(model, table9_bound(model, 4), r.witness, r.outputs["d"])
    assert ratio is not None and ratio > Fraction(1, 8)


def test_block_scaled_witness_counts_the_scales() -> None:
    """ST-FDPA (Alg. 8): a too-small bound fails with a witness whose error, recomputed here from the patterns
    (each product times 2^(e_sa + e_sb), ue8m0 bias 127), exceeds it; Table 9's e_max includes the scales."""
    from smtmma.formats import get_format, to_fraction

    model = model_of("sm100", "mxe4m3f32")
    r = error_bound(model, K=2, scale=Fraction(1, 2), timeout=60)
    assert r.verdict == "fails" and r.witness is not None and r.witness.scale_a is not None
    w, e4, f32 = r.witness, get_format("e4m3"), get_format("fp32")
    ea, eb = w.scale_a[0] - 127, w.scale_b[0] - 127
    exact = sum(to_fraction(e4, x) * to_fraction(e4, y) for x, y in zip(w.a, w.b)) * Fraction(2) ** (ea + eb)
    exact += to_fraction(f32, w.c)
    err = abs(to_fraction(f32, r.outputs["d"]) - exact)
    # a product's exponent is e_a + e_b (the fields', Table 9's e_max): its value may reach 2^(e_a + e_b + 1)
    exps = [decode_scalar(e4, x)[1] + decode_scalar(e4, y)[1] + ea + eb for x, y in zip(w.a, w.b)
            if to_fraction(e4, x) * to_fraction(e4, y) != 0]
    e_max = max(exps + ([floor_log2(to_fraction(f32, w.c))] if to_fraction(f32, w.c) else []))
    d = to_fraction(f32, r.outputs["d"])
    ulp = Fraction(2) ** (max(floor_log2(d) if d else -126, -126) - 23)
    assert err > Fraction(1, 2) * (3 * Fraction(2) ** (e_max - 25) + ulp)
    assert py_ratio(model, table9_bound(model, 2), w, r.outputs["d"]) == err / (3 * Fraction(2) ** (e_max - 25) + ulp)


@pytest.mark.slow
def test_block_scaled_bound_holds_on_the_models_terms() -> None:
    r = error_bound(model_of("sm100", "mxe4m3f32"), K=2, timeout=120)
    assert r.verdict == "holds" and "proof" not in r.extra and r.extra["lemmas"] == 17
    assert "a NaN scale, makes D infinite or NaN" in (r.smt2 or "")


def test_claims_registered() -> None:
    load_claims()
    for name in ("error-bound-sm70-f16f32", "error-bound-sm90-f16f32", "error-bound-gfx942-f16f32",
                 "error-bound-tight-sm90-f16f32", "cdna3-one-sided-bound", "error-bound-sm80-bf16f32"):
        assert name in CLAIMS and CLAIMS[name].group == "error-bound"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["error-bound-sm70-f16f32", "error-bound-sm75-f16f32", "error-bound-sm80-f16f32",
                                  "error-bound-sm90-f16f32", "error-bound-sm90-tf32f32", "error-bound-sm100-f16f32",
                                  "error-bound-sm120-e4m3e4m3f32", "error-bound-sm80-bf16f32", "error-bound-sm80-f16f16",
                                  "error-bound-sm89-e4m3e4m3f32", "error-bound-sm90-e4m3e4m3f32-wgmma",
                                  "error-bound-gfx942-f16f32", "error-bound-gfx942-fp8fp8f32", "cdna3-one-sided-bound"])
def test_error_bound_claims_hold(name: str) -> None:
    load_claims()
    out = CLAIMS[name].check(Context(timeout=120))
    assert out.verdict == "holds" and out.agrees is True
    if name != "cdna3-one-sided-bound":  # the detail states the proof's scope and what the bound's symbols mean
        assert "whose D is finite, K=" in out.detail and "; where e_max = " in out.detail
    assert out.certificate is not None and out.certificate.checks >= 6


@pytest.mark.slow
def test_gfx942_query_answers_on_full_domain_and_rechecks() -> None:
    """The issue's example (query error-bound --arch gfx942 --instr f16f32): a full-domain proof, a chain on the
    model's own terms (Alg. 10's RD_F2 and glue among its facts) that the independent checker accepts."""
    from smtmma.proof_kernel.blocks import chain_block
    from smtmma.proofs.check_certificate import check_text

    model = model_of("gfx942", "f16f32")
    r = error_bound(model, K=8, timeout=300)
    assert r.verdict == "holds" and "proof" not in r.extra
    text = r.smt2 or ""
    assert "E > e_max: RD_F2 of T at E (Alg. 10 line 14) cut to F+1 bits is T cut at E with F+1 bits" in text
    assert "glue (Alg. 10 step 4): on finite inputs D is rne-fp32 of S * 2^(E-31)" in text
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("gfx942 f16f32", text)]).text(), "bitwuzla", 300.0)
    assert passed, summary


@pytest.mark.parametrize("arch,instr", [("sm70", "f16f32"), ("sm80", "bf16f32")])
def test_simulated_search_finds_a_large_error_below_the_proved_bound(arch: str, instr: str) -> None:
    """The witness of a tight constant: its output replays bit for bit, its exact ratio is what the search says,
    above 1/2 (the Table 9 bound is within a factor 2 of the worst error) and never above 1 (the proved bound)."""
    from smtmma.queries.properties.error_search import search
    import numpy as np

    model = model_of(arch, instr)
    K = model.L
    bound = table9_bound(model, K)
    found = search(model, K, lambda w, d: py_ratio(model, bound, w, d), seed=0, draws=800, climbs=4, batch=200)
    assert found is not None
    w, d, ratio = found
    got = simulate_dot(model, None, np.array([w.a]), np.array([w.b]), np.array([w.c]), backend="numpy")
    assert int(got[0]) == d
    assert py_ratio(model, bound, w, d) == ratio
    assert Fraction(1, 2) < ratio <= 1


@pytest.mark.slow
def test_tight_constant_has_a_confirmed_witness_below() -> None:
    """--tight on the full domain: a proof below Table 9's bound (the chain's final check is the query itself, so it
    sees that the summand at e_max is exact), a simulated witness the solver confirms (a pinned sat block) below it."""
    model = model_of("sm70", "f16f32")
    r = error_bound(model, K=4, tight=True, resolution=Fraction(1, 8), timeout=60)
    assert r.verdict == "holds" and r.extra["tight"] == "13/16"
    assert Fraction(1, 2) < Fraction(str(r.extra["attained"])) < Fraction(13, 16)
    sat = [b for b in r.blocks if b.expect == "sat"]
    assert len(sat) == 1 and "found by simulation" in sat[0].label
    assert set(r.extra["attained_witness"]) == {"a", "b", "c"}


def test_one_sided_claim_certificate_carries_every_lemma_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """cdna3-one-sided-bound asks each model for its one-sided interval (above = L for TR-FDPA, L + 1/2 for GTR-FDPA,
    whose far c is dropped) and puts each answer's blocks in its certificate, labelled by model, answers kept.

    The query is stubbed (the real chains take minutes, test_error_bound_claims_hold runs them): this checks the
    claim's own assembly, which once unpacked the blocks as (label, text) pairs and crashed ``prove --all``.
    """
    from types import SimpleNamespace

    from smtmma.proofs import claims_error_bound
    from smtmma.proofs.certificate import Block

    lemma = Block("a lemma", "(declare-const x (_ BitVec 4))\n(assert (= x (bvadd x #x1)))", "unsat")
    asked = []

    def stub(model: Model, **kw: object) -> SimpleNamespace:
        asked.append((model.kind, kw["fused"], kw["above"]))
        return SimpleNamespace(verdict="holds", blocks=[lemma], extra={"bound": "b", "lemmas": 1}, seconds=0.0, reason="", smt2="")

    monkeypatch.setattr(claims_error_bound, "error_bound", stub)
    load_claims()
    out = CLAIMS["cdna3-one-sided-bound"].check(Context())
    assert out.verdict == "holds" and asked == [("tr-fdpa", 9, Fraction(8)), ("gtr-fdpa", 17, Fraction(33, 2))]
    assert out.certificate is not None
    assert [(b.label, b.expect) for b in out.certificate.blocks] == [
        ("gfx942 f16f32: a lemma", "unsat"), ("gfx942 fp8fp8f32: a lemma", "unsat")]
    assert [a.got for a in recheck(out.certificate, solver="z3", timeout=30)] == ["unsat", "unsat"]


def test_tight_claim_at_scale_one_reuses_the_bisections_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the tightest scale certified is 1, the claim's proof is the bisection's own (its script at scale 1, a
    chain), not the same chain proved again; the witness below stays pinned after it."""
    from smtmma.proofs import claims_error_bound
    from smtmma.proofs.certificate import Block

    chain = "(set-logic QF_BV)\n(declare-const x (_ BitVec 4))\n(assert (= x (bvadd x #x1)))\n; expect: unsat\n(check-sat)\n"
    sat = Block("an input whose error exceeds 15/16 x the bound", "(declare-const y (_ BitVec 4))\n(assert (= y #x1))", "sat")
    from smtmma.queries.formula import Domain
    from smtmma.queries.properties.common import QueryResult

    calls = []

    def stub(model: Model, **kw: object) -> QueryResult:
        calls.append(kw.get("scale"))
        return replace(QUERY, blocks=[sat])

    QUERY = QueryResult("error-bound", "holds", "sm90", model_of("sm90", "f16f32"), 16, Domain(), "bitwuzla", 1.0,
                        extra={"tight": "1", "attained": "7/8", "bound": "b"}, smt2=chain)
    monkeypatch.setattr(claims_error_bound, "error_bound", stub)
    load_claims()
    out = CLAIMS["error-bound-tight-sm90-f16f32"].check(Context())
    assert calls == [None] and out.verdict == "scale 1" and out.certificate is not None
    assert [b.expect for b in out.certificate.blocks] == ["unsat", "sat"]
    assert [a.got for a in recheck(out.certificate, solver="z3", timeout=30)] == ["unsat", "sat"]


@pytest.mark.parametrize("arch,instr", [("sm100", "nvf4f32"), ("sm100", "mxe4m3f32")])
def test_block_scaled_ratio_of_simulated_outputs(arch: str, instr: str) -> None:
    """On random block-scaled inputs (ue4m3 scales with their significands, zero and subnormals; ue8m0 scales), the
    simulated D is within the proved Table 9 bound, and ``py_ratio`` is the ratio recomputed here from the paper:
    exact = sum a_k b_k s_a s_b + c; e_max over the non-zero summands -- a GST-FDPA group at the sum of its scales'
    exponents (Alg. 9 line 5), an ST-FDPA product at e_a + e_b + its scales' (Alg. 8 line 4) -- and c."""
    import numpy as np

    from smtmma.formats import decode_scalar, get_format, to_fraction
    from smtmma.queries.distinguish import Witness

    model = model_of(arch, instr)
    fa, fs, f32 = get_format(model.a_fmt), get_format(model.scale_fmt), get_format("fp32")
    K, block, G = model.L, model.block, model.G or 1
    rng = np.random.default_rng(7)
    n = 60
    finite = [x for x in range(1 << fa.bits) if isinstance(to_fraction(fa, x), Fraction)]
    scales = [x for x in range(1 << fs.bits) if isinstance(to_fraction(fs, x), Fraction)]
    a = rng.choice(finite, size=(n, K)).astype(np.uint64)
    b = rng.choice(finite, size=(n, K)).astype(np.uint64)
    sa = rng.choice(scales, size=(n, K // block)).astype(np.uint64)
    sb = rng.choice(scales, size=(n, K // block)).astype(np.uint64)
    if fs.name == "ue8m0":  # keep the products near 1 so that D stays finite
        sa, sb = (127 + rng.integers(-20, 20, size=(n, K // block))).astype(np.uint64), (127 + rng.integers(-20, 20, size=(n, K // block))).astype(np.uint64)
    c = (rng.integers(0x3000_0000, 0x4800_0000, size=n) | (rng.integers(0, 2, size=n) << 31)).astype(np.uint64)
    d = simulate_dot(model, None, a, b, c, scale_a=sa, scale_b=sb)
    bound = table9_bound(model, K)
    worst = Fraction(0)
    for i in range(n):
        s_of = lambda k: to_fraction(fs, int(sa[i, k // block])) * to_fraction(fs, int(sb[i, k // block]))  # noqa: E731
        e_of = lambda k: decode_scalar(fs, int(sa[i, k // block]))[1] + decode_scalar(fs, int(sb[i, k // block]))[1]  # noqa: E731
        prods = [to_fraction(fa, int(a[i, k])) * to_fraction(fa, int(b[i, k])) for k in range(K)]
        exact = sum(p * s_of(k) for k, p in enumerate(prods)) + to_fraction(f32, int(c[i]))
        exps = [decode_scalar(f32, int(c[i]))[1]] if to_fraction(f32, int(c[i])) else []
        for g0 in range(0, K, G):
            group = sum(prods[g0:g0 + G]) * s_of(g0)
            if group and G > 1:
                exps.append(e_of(g0))
            elif G == 1 and group:
                _, ea, _ = decode_scalar(fa, int(a[i, g0]))
                _, eb, _ = decode_scalar(fa, int(b[i, g0]))
                exps.append(ea + eb + e_of(g0))
        vd = to_fraction(f32, int(d[i]))
        if not isinstance(vd, Fraction):
            continue
        ulp = Fraction(2) ** (max(decode_scalar(f32, int(d[i]))[1], -126) - 23)
        total = bound.fused * Fraction(2) ** (max(exps) - model.F) + ulp if exps else ulp
        ratio = abs(vd - exact) / total
        w = Witness(tuple(map(int, a[i])), tuple(map(int, b[i])), int(c[i]), tuple(map(int, sa[i])), tuple(map(int, sb[i])))
        assert py_ratio(model, bound, w, int(d[i])) == ratio
        assert ratio <= 1
        worst = max(worst, ratio)
    assert worst > 0  # some input rounds


def test_efdpa_bound_is_a_chain_on_the_model_and_the_checker_accepts_it() -> None:
    """E-FDPA (Alg. 6) rounds the exact sum once: the proof's facts are about the model's own terms (glue, each placed
    term = its exact value, the signed sum = the query's exact value) and one rounding lemma applied to them, so the
    final check is Boolean; the independent checker accepts the file, and a too-small bound gets a replayed witness."""
    from smtmma.models import Model
    from smtmma.proof_kernel.blocks import chain_block
    from smtmma.proofs.check_certificate import check_text
    from smtmma.queries.formula import Domain
    from smtmma.queries.properties.error_bound import ErrorFormula
    from smtmma.queries.query_algebra import Runner

    model = Model("e-fdpa", "e4m3", "e4m3", "fp16", "fp16", L=2)
    r = error_bound(model, K=2, timeout=60)
    assert r.verdict == "holds" and r.extra["lemmas"] == 8
    text = r.smt2 or ""
    facts = [line.split(": ", 1)[1].split(" (uses")[0] for line in text.splitlines() if line.startswith("; lemma ") and "(uses" in line]
    # the static place is c's last place (an fp16 subnormal's, 2^-24), below e4m3 x e4m3's 2^-18
    assert facts[:2] == ["a finite D has finite inputs (an infinite or NaN input makes D infinite or NaN)",
                         "glue (Alg. 6 line 1): on finite inputs D is RNE-fp16 of the exact sum placed at 2^-24"]
    assert len(facts) == 7 and facts[-1] == "the exact sum's sign and magnitude are the exact value"
    assert text.count("(define-fun lemma_") == 1  # the rounding lemma (one range of mag: under 2^50), applied to the model's terms
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("e-fdpa bound", text)]).text(), "bitwuzla", 60.0)
    assert passed, summary
    small = error_bound(model, K=2, scale=Fraction(1, 2), timeout=60)
    assert small.verdict == "fails" and small.witness is not None
    ratio = py_ratio(model, table9_bound(model, 2), small.witness, small.outputs["d"])
    assert ratio is not None and ratio > Fraction(1, 2)
    # narrow exponents put the query's unit 2^R above the static place (fp32 c's 2^-149): the facts then compare in
    # the finer unit (the query itself is small enough to answer at once, so the facts are asked for here)
    run = Runner("bitwuzla", 60, 0)
    wide_c = Model("e-fdpa", "e4m3", "e4m3", "fp32", "fp32", L=2)
    narrow = ErrorFormula(wide_c, 2, Domain(exp=(-2, 2), cexp=(-4, 4)), table9_bound(wide_c, 2), narrow=True)
    assert narrow.R > -149
    chain = narrow.prove_lemmas(run)
    assert not chain.stopped and len(chain.proven) == 7
    assert run.check(narrow.script(Fraction(1))).verdict == "unsat" and len(chain.lemmas) == 1


@pytest.mark.slow
def test_gfx908_f16f32_efdpa_bound_holds() -> None:
    r = error_bound(model_of("gfx908", "f16f32"), K=4, timeout=300)
    assert r.verdict == "holds" and r.extra["lemmas"] == 13  # 9 facts, the rounding lemma in 4 ranges of mag's bits


def test_a_chain_with_fp16_intermediates_breaks_one_fdpas_bound() -> None:
    """sm90's FP8 mma with FP16 output rounds its first FDPA to FP16 before the second: no prover covers the chain,
    but one FDPA's Table 9 bound, posed for it, is refuted by a simulated input the solver confirms (pinned, sat),
    replayed exactly: D = 0 where the exact value is 2^-11, 910x the bound.  FTZ-AddMul is posed the same form at
    FP32's precision (no Table 9 row); a chained TR-FDPA is still refused, naming the missing part."""
    from smtmma.errors import InputError
    from smtmma.queries.properties.error_bound import posed_without_prover

    model = model_of("sm90", "e4m3e4m3f16", "mma")
    assert "adding C after" in posed_without_prover(model) and posed_without_prover(model_of("sm90", "e4m3e4m3f16", "wgmma")) == ""
    r = error_bound(model, timeout=60)
    assert r.verdict == "fails" and r.witness is not None and [b.expect for b in r.blocks] == ["sat"]
    assert Fraction(str(r.extra["ratio"])) > 900 and r.extra["posed"].startswith("one FDPA's Table 9 bound")
    assert py_ratio(model, table9_bound(model, 16), r.witness, r.outputs["d"]) == Fraction(str(r.extra["ratio"]))
    cdna2 = model_of("gfx90a", "f16f32")
    assert "FTZ-AddMul's pairwise roundings" in posed_without_prover(cdna2)
    assert (table9_bound(cdna2, 4).fused, table9_bound(cdna2, 4).F, table9_bound(cdna2, 4).ulps) == (5, 23, Fraction(1, 2))
    with pytest.raises(InputError, match="adding C after the rounded fused sum"):
        table9_bound(parse_model_spec("tr-fdpa:c_after", model_of("gfx942", "f16f32")), 4)


def test_a_chain_with_fp32_intermediates_breaks_one_fdpas_bound() -> None:
    """With FP32 output the first FDPA's RZ to FP32 loses up to one ulp of a running sum that sits binades above
    e_max, which one FDPA's bound does not count: C = 0 (e_max is the largest product's), large products lift the sum,
    small ones put bits where each rounding cuts.  The search's chain shape finds such an input; the solver confirms
    it pinned and the simulator replays it exactly, its ratio computed by hand from the decoded inputs."""
    from smtmma.formats import to_fraction

    model = model_of("sm90", "e5m2e5m2f32", "mma")
    r = error_bound(model, timeout=60)
    assert r.verdict == "fails" and r.witness is not None and [b.expect for b in r.blocks] == ["sat"]
    w, d = r.witness, r.outputs["d"]
    fa, f32 = get_format("e5m2"), get_format("fp32")
    exact = sum(to_fraction(fa, x) * to_fraction(fa, y) for x, y in zip(w.a, w.b)) + to_fraction(f32, w.c)
    e_max = max(decode_scalar(fa, x)[1] + decode_scalar(fa, y)[1] for x, y in zip(w.a, w.b)
                if to_fraction(fa, x) and to_fraction(fa, y))
    e_max = max([e_max] + ([decode_scalar(f32, w.c)[1]] if to_fraction(f32, w.c) else []))
    e_d = decode_scalar(f32, d)[1]
    bound = 17 * Fraction(2) ** (e_max - 25) + Fraction(2) ** (max(e_d, -126) - 23)
    ratio = abs(to_fraction(f32, d) - exact) / bound
    assert ratio == Fraction(str(r.extra["ratio"])) > 1


def test_flushed_draws_put_one_value_an_ftz_unit_drops_in_each_row() -> None:
    """error_search's FTZ-AddMul shape: each row holds one subnormal a, b or c, or a product below FP32's normals
    (drawn only where the formats reach that low: bf16, not fp16), every other lane zero; the FTZ model returns
    D = +-0 on each row whose only non-zero summand is that value."""
    from smtmma.queries.properties.error_search import search

    for instr, tiny_products in (("f16f32", False), ("bf16f32", True)):
        model = model_of("gfx90a", instr, "mfma_1k" if instr == "bf16f32" else None)
        fa, fc = get_format(model.a_fmt), get_format(model.c_fmt)
        rows = []
        found = search(model, 4, lambda w, d: rows.append((w, d)) or None, seed=3, draws=400, climbs=0)
        assert found is None  # the ratio function rejects every row, so all 400 x 2 shaped rows were seen
        flushed = rows[400:]  # _draw's rows first, then _draw_flushed's
        assert len(flushed) == 400
        kinds = set()
        for w, d in flushed:
            lanes = [k for k in range(4) if w.a[k] & 0x7FFF or w.b[k] & 0x7FFF]
            sub = [x for x in (*w.a, *w.b) if x & 0x7FFF and not (x >> fa.man_bits) & ((1 << fa.exp_bits) - 1)]
            c_sub = w.c & 0x7FFFFFFF and not (w.c >> 23) & 0xFF
            assert len(lanes) <= 1
            if sub:
                kinds.add("input")
            elif c_sub:
                kinds.add("c")
            else:
                v = [decode_scalar(fa, x) for x in (*w.a, *w.b) if x & 0x7FFF]
                assert len(v) == 2 and v[0][1] + v[1][1] < fc.emin  # a product below FP32's normals
                kinds.add("product")
            if sub or (not c_sub and len(lanes) == 1) or (c_sub and not lanes):
                assert d & 0x7FFFFFFF == 0, (w, hex(d))  # flushed: nothing else is left to sum
        assert kinds == ({"input", "c", "product"} if tiny_products else {"input", "c"})


def test_fma_bound_counts_in_the_windows_last_place_and_the_checker_accepts_it() -> None:
    """One FMA (Alg. 3) rounds a*b + c once: the query counts in units of the window sum's own last place (an
    exact value cut below it is an interval, both ends asked), the facts tie each term's placement and the
    window sum to that interval, and the rounding lemma's cases are applied to the model's terms; the
    independent checker accepts the file, and a too-small bound gets a replayed witness."""
    from smtmma.proof_kernel.blocks import chain_block
    from smtmma.proofs.check_certificate import check_text

    model = Model("fma", "bf16", "bf16", "bf16", "bf16")
    r = error_bound(model, K=1, timeout=120)
    assert r.verdict == "holds" and r.extra["lemmas"] == 20
    text = r.smt2 or ""
    facts = [line.split(": ", 1)[1].split(" (uses")[0] for line in text.splitlines() if line.startswith("; lemma ") and "(uses" in line]
    assert facts[1] == "glue (Alg. 3 line 1): on finite inputs D is RNE-bf16 of the window sum" and len(facts) == 5
    assert facts[-1].startswith("the exact value's interval lies where the window sum (neg, mag, sticky) puts it")
    assert text.count("(define-fun lemma_") == 15  # the rounding lemma: 3 kinds of sum x 5 ranges of its last place
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("fma bound", text)]).text(), "bitwuzla", 120.0)
    assert passed, summary
    small = error_bound(model, K=1, ulps=Fraction(1, 4), timeout=60)
    assert small.verdict == "fails" and small.witness is not None
    ratio = py_ratio(model, table9_bound(model, 1), small.witness, small.outputs["d"])
    assert ratio is not None and ratio > Fraction(1, 2)  # beyond 1/4 ulp: half the 1/2 ulp bound


@pytest.mark.slow
def test_gfx908_f32f32_fma_bound_holds() -> None:
    r = error_bound(model_of("gfx908", "f32f32"), K=1, timeout=300)
    assert r.verdict == "holds" and r.extra["lemmas"] == 32  # 5 facts, the rounding lemma in 27 cases
