"""Monotonicity verdicts and standalone certificates (issue 8): Fasi et al. §3.1.4, proofs re-checked by a second backend,
order-independence certificates whose two runs are distinct terms."""

from __future__ import annotations

import re

import numpy as np
import pytest

import smtmma
from smtmma.proofs import load_claims
from smtmma.proofs.certificate import Certificate, recheck
from smtmma.proofs.claim import CLAIMS, Context
from smtmma.queries.query_algebra import Runner
from smtmma.queries.backends import available
from smtmma.queries.properties import check_property
from smtmma.proof_kernel.blocks import chain_block
from smtmma.proofs.check_certificate import check_text
from smtmma.proof_kernel.chain import LemmaChain
from smtmma.proof_kernel.parts import negated_script
from smtmma.queries.formula import Domain
from smtmma.queries.properties.monotonicity import MoveFormula
from smtmma.simulate import run_model

pytestmark = pytest.mark.skipif(not available(), reason="no SMT backend installed")
HAS_Z3 = "z3" in available()


def sim(model: smtmma.Model, a: tuple[int, ...], b: tuple[int, ...], c: int) -> int:
    return int(smtmma.simulate_dot(model, None, np.array([a], dtype=np.uint64), np.array([b], dtype=np.uint64),
                                   np.array([c], dtype=np.uint64))[0])


def test_volta_nonmonotonic_is_the_papers_input() -> None:
    """002 §3.1.4: b = 2^-24 (x4), c = 1 - 2^-24 gives 1 + 2^-23; c = 1 gives 1."""
    load_claims()
    o = CLAIMS["volta-nonmonotonic"].check(Context())
    assert (o.verdict, o.agrees) == ("fails", True)
    assert o.witness is not None and o.witness["a"] == ["3c00"] * 4 and o.witness["b"] == ["0001"] * 4
    assert o.witness["c"] == "3f7fffff"
    m = smtmma.lookup("sm70", "f16f32").model
    assert sim(m, (0x3C00,) * 4, (0x0001,) * 4, 0x3F7FFFFF) == 0x3F800001  # 1 + 2^-23 (the paper's first line)
    assert sim(m, (0x3C00,) * 4, (0x0001,) * 4, 0x3F800000) == 0x3F800000  # 1 (its second line)
    assert o.certificate is not None
    answers = recheck(o.certificate, solver="z3" if HAS_Z3 else None)
    assert [(a.expected, a.got) for a in answers] == [("sat", "sat")]
    # the block pins both outputs: claiming any other d makes it unsat, so the sat answer is the solver's own evaluation
    text = o.certificate.text().replace("(_ bv1065353217 32)", "(_ bv1065353218 32)")
    from smtmma.proofs.certificate import parse_certificate

    bad = recheck(parse_certificate(text), solver="z3" if HAS_Z3 else None)
    assert bad[0].got == "unsat"


def test_a_truncated_fdpa_witness_found_by_simulation_is_pinned() -> None:
    m = smtmma.lookup("sm90", "f16f32").model
    r = check_property("monotonicity", m)
    assert r.verdict == "fails" and r.witness is not None and len(r.blocks) == 1 and r.blocks[0].expect == "sat"
    larger = r.extra["larger"]
    assert isinstance(larger, dict)
    w2c = int(larger["c"], 16) if r.extra["raised"] == "c" else r.witness.c
    assert r.outputs["d"] == sim(m, r.witness.a, r.witness.b, r.witness.c)
    if r.extra["raised"] == "c":
        assert r.outputs["d_larger"] == sim(m, r.witness.a, r.witness.b, w2c)
        assert w2c == r.witness.c + 1  # the next pattern of a non-negative c
    assert r.seconds < 30


EXACT_FP4 = smtmma.Model("e-fdpa", "e2m1", "e2m1", "fp16", "fp16", L=2)


@pytest.mark.skipif(not HAS_Z3, reason="z3 is the second backend")
def test_a_monotone_proof_rechecks_with_a_second_backend() -> None:
    r = check_property("monotonicity", EXACT_FP4, K=1, solver="bitwuzla" if "bitwuzla" in available() else None)
    # E-FDPA's facts on the model's terms (c, a0, b0 in one formula); the two ring steps' wide forms among the lemmas
    assert r.verdict == "holds" and r.extra["lemmas"] == 36
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("e-fdpa monotone", r.smt2 or "")]).text(), "z3", 60.0)
    assert passed, summary


@pytest.mark.slow  # the faithful lemma chain: ~2 min on 2 cores (known: too slow yet)
def test_order_independence_certificate_has_distinct_runs() -> None:
    m = smtmma.lookup("gfx942", "f16f32").model
    r = check_property("order-independence", m, K=3, certify=True)
    assert r.verdict == "holds" and len(r.blocks) == 2  # both transpositions
    for b in r.blocks:
        d = re.search(r"\(assert \(= d (\S+?)\)\)", b.text)
        dp = re.search(r"\(assert \(= d_permuted (\S+?)\)\)", b.text)
        assert d and dp and d.group(1) != dp.group(1)  # two runs, two terms: nothing settled before the solver runs
    answers = recheck(Certificate({"claim": "t"}, r.blocks), solver="z3" if HAS_Z3 else None)
    assert answers and all(a.agrees for a in answers)


def test_order_dependence_witness_is_pinned_in_the_faithful_formula() -> None:
    m = smtmma.lookup("gfx90a", "bf16f32").model
    r = check_property("order-independence", m, K=4)
    assert r.verdict == "fails" and len(r.blocks) == 1 and r.blocks[0].expect == "sat"
    assert recheck(Certificate({"claim": "t"}, r.blocks))[0].got == "sat"


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in ("monotonicity-sm70-f16f32", "monotonicity-sm80-f16f32", "monotonicity-sm90-f16f32",
                                              "monotonicity-sm100-mxe4m3f32", "monotonicity-sm89-e4m3e4m3f32")])
def test_truncated_models_fail_in_seconds(name: str) -> None:
    load_claims()
    o = CLAIMS[name].check(Context())
    assert o.verdict == "fails" and o.seconds < 60


# -- composed proofs (pre-rounding value grows; the final rounding is monotone on fresh variables; composition) --------

TOY_TR = smtmma.Model("tr-fdpa", "e4m3", "e4m3", "fp16", "fp16", L=2, F=12, F2=16, rho="rne-fp16")  # Alg. 10, small
TOY_T32 = smtmma.Model("t-fdpa", "e4m3", "e4m3", "fp32", "fp32", L=2, F=13, rho="rz-fp32")  # Alg. 7 with an FP32 C


def _composed(model: smtmma.Model, label: str) -> tuple[str, object, str]:
    from dataclasses import replace

    from smtmma.queries.query_algebra import Runner, output_container
    from smtmma.queries.formula import Domain
    from smtmma.op_proofs.rounding import composed_position, supports_composed
    from smtmma.queries.properties.monotonicity import raised_inputs

    assert supports_composed(model, 2)
    dom = replace(Domain(), nonneg=True, specials=False)
    return composed_position(model, 2, dom, label, Runner("bitwuzla" if "bitwuzla" in available() else None, 30.0, 0), raised_inputs,
                             output_container(model))


def test_composed_proof_of_raising_c_stands_alone() -> None:
    """TR-FDPA: raising c never lowers D, as three check-sats (lemma 1, rounding lemma, composition) that re-check as unsat."""
    verdict, block, why = _composed(TOY_TR, "c")
    assert verdict == "unsat", why
    assert block is not None and block.text.count("(check-sat)") == 2  # lemmas 1 and 2; the final check is the block's own
    assert "(declare-const mono_mag1" in block.text  # the rounding lemma is stated on fresh variables
    answers = recheck(Certificate({"claim": "t"}, [block]))
    assert [a.got for a in answers] == ["unsat"] * 3


def test_composed_proof_refuses_a_truncated_sum_with_fp32_c() -> None:
    """With an FP32 C the truncated sum itself can drop when c is raised (002 §3.1.4): lemma 1 is sat, no proof."""
    verdict, block, why = _composed(TOY_T32, "c")
    assert (verdict, block) == ("sat", None) and "lemma 1" in why


# -- the compositional proof of one T-FDPA (op_proofs/tfdpa.py) --------------------------------------------------------

def _toy_t(F: int) -> smtmma.Model:
    return smtmma.Model("t-fdpa", "e4m3", "e4m3", "fp16", "fp16", L=2, F=F, rho="rne-fp16")


def _facts(model: smtmma.Model, K: int = 2):  # type: ignore[no-untyped-def]
    """T-FDPA's monotonicity facts in the query's own formula with one symbolic move: (held, chain, formula)."""
    from smtmma.op_proofs.tfdpa import monotone_facts
    from smtmma.queries.properties.monotonicity import OneMoveFormula

    f = OneMoveFormula(model, K, Domain(nonneg=True, specials=False))
    chain = LemmaChain(f.alg, Runner("bitwuzla" if "bitwuzla" in available() else None, 60.0, 0), scoped=True)
    held = monotone_facts(chain, f) and chain.check_final(f.statement()).verdict == "unsat"
    return held, chain, f


def test_tfdpa_monotone_facts_hold_on_the_models_terms_and_recheck() -> None:
    """F = 11: the facts about the model's own terms hold (gain by cases, credits, running sums at W bits, value,
    rounding), the last check is the query's statement, and the independent checker accepts the file (bitwuzla, and z3
    where present)."""
    held, chain, f = _facts(_toy_t(11))
    assert held, chain.stopped
    labels = [label for label, _, _ in chain.proven]
    assert labels[0].startswith("glue") and labels[-1] == "the move never lowers D"
    assert sum("moved: its summand's credit" in lb for lb in labels) == 5  # one per input position: c, a0, b0, a1, b1
    text = Certificate({"claim": "t"}, [chain_block("t-fdpa monotone", chain.certificate(f.statement()))]).text()
    for solver in {"bitwuzla" if "bitwuzla" in available() else "z3", *(["z3"] if HAS_Z3 else [])}:
        passed, summary = check_text(text, solver, 60.0)
        assert passed, (solver, summary)


def test_tfdpa_monotone_facts_stop_where_a_witness_exists() -> None:
    """F = 10 is one bit short: the gain lemma of raising c is sat, so the chain stops there (no proof), and the
    simulator finds a pair that drops."""
    held, chain, _ = _facts(_toy_t(10))
    assert not held and "gain of the moved summand (raising c" in chain.stopped and "sat" in chain.stopped


def test_one_move_formula_states_the_papers_drop() -> None:
    """The one-move formula's statement on 002 §3.1.4's input (sm70 f16f32, c = 1 - 2^-24 raised to 1): sat with the
    move on c, unsat with the move on a0 (the solver evaluates both runs)."""
    from smtmma.queries.properties.monotonicity import OneMoveFormula

    model = smtmma.lookup("sm70", "f16f32").model
    run = _bitwuzla_or_default()
    verdicts = []
    for label in ("c", "a0"):
        f = OneMoveFormula(model, 4, Domain(nonneg=True, specials=False))
        alg, x = f.alg, f.x
        pins = [alg.eq(v, 0x3C00) for v in x.a] + [alg.eq(v, 0x0001) for v in x.b] + [alg.eq(x.c, 0x3F7FFFFF), f.moved(label)]
        verdicts.append(run.check(alg.script("\n".join(f"(assert {alg.raw_bool(p)})" for p in pins) + "\n" + f.statement())).verdict)
    assert verdicts == ["sat", "unsat"]


def _assert_simulated_drop(model: smtmma.Model, K: int) -> None:
    """The simulator search finds a pair of inputs, one move apart, whose FP16 output drops."""
    from smtmma.queries.properties import monotone_search

    hit = monotone_search.search(model, K, seed=0)
    assert hit is not None
    _, w, w2 = hit
    d1, d2 = sim(model, w.a, w.b, w.c), sim(model, w2.a, w2.b, w2.c)
    f16 = np.array([d1, d2], dtype=np.uint16).view(np.float16)
    assert f16[1] < f16[0]


@pytest.mark.slow  # ~30 s on 2 cores
def test_sm80_f16f16_is_proved_monotone_through_the_property() -> None:
    """The property query proves it with the facts about the model's own terms once no witness turns up: one
    certificate, its last check the query's statement, which the independent checker accepts."""
    r = check_property("monotonicity", smtmma.lookup("sm80", "f16f16").model, timeout=60.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("t-fdpa monotone", r.smt2 or "")]).text(),
                                 "bitwuzla" if "bitwuzla" in available() else "z3", 300.0)
    assert passed, summary


# -- one TR-/GTR-FDPA, facts on the model's own terms (op_proofs/trfdpa.py, op_proofs/gtrfdpa.py) ------------------------

def _toy_cdna3(kind: str, F: int) -> smtmma.Model:
    return smtmma.Model(kind, "e4m3", "e4m3", "fp16", "fp16", L=4, F=F, F2=F + 4, rho="rne-fp16")


def _lemma_labels(smt2: str) -> list[str]:
    """The labels of the lemmas a chain certificate proves (``; lemma NAME: label`` lines)."""
    return re.findall(r"^; lemma lemma_\w+: (.*)$", smt2, re.M)


@pytest.mark.parametrize("kind, F, merges", [("tr-fdpa", 9, 0), ("gtr-fdpa", 10, 2)])
def test_cdna3_monotonicity_holds_on_the_models_own_terms(kind: str, F: int, merges: int) -> None:
    """Alg. 10 at F = 9, Alg. 11 at F = 10 (toy formats): facts on the model's own terms (the products' credit
    argument, GTR's group merge for each group moved, the second stage, raising c in four cases), the last check the
    query's statement; the independent checker accepts the certificate."""
    r = check_property("monotonicity", _toy_cdna3(kind, F), timeout=60.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason, r.reason
    labels = _lemma_labels(r.smt2 or "")
    assert sum(lb.startswith("group merge, composition") for lb in labels) == merges
    assert sum(lb.startswith("raising c (") for lb in labels) == 4
    assert any(lb.startswith("second stage, composition") for lb in labels)
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block(f"{kind} monotone", r.smt2 or "")]).text(),
                                 "bitwuzla" if "bitwuzla" in available() else "z3", 300.0)
    assert passed, summary


@pytest.mark.parametrize("kind", ["tr-fdpa", "gtr-fdpa"])
def test_cdna3_monotonicity_facts_stop_where_a_witness_exists(kind: str) -> None:
    """F = 6: the moved product's gain lemma is sat (it cannot cover the others' losses), and the simulator finds
    inputs whose output drops."""
    from smtmma.op_proofs import gtrfdpa, trfdpa
    from smtmma.queries.properties.monotonicity import OneMoveFormula

    model = _toy_cdna3(kind, 6)
    op = gtrfdpa if kind == "gtr-fdpa" else trfdpa
    assert op.supports_monotone(model, 4)
    f = OneMoveFormula(model, 4, Domain(nonneg=True, specials=False))
    chain = LemmaChain(f.alg, _bitwuzla_or_default(), scoped=True)
    assert not op.monotone_facts(chain, f)
    assert chain.stopped.startswith("lemma gain of the moved summand (raising a") and chain.stopped.endswith(": sat")
    _assert_simulated_drop(model, 4)


def test_a_model_no_monotonicity_proof_covers_says_which_part_is_missing() -> None:
    """K = 8 lanes of a GTR-FDPA with L = 4 are two FDPAs chained, which no proof composes: the verdict is unknown and
    says so, beside the solver's own reason; ST-FDPA has no op proof at all."""
    from smtmma.queries.properties.monotonicity import uncovered_monotone

    toy = _toy_cdna3("gtr-fdpa", 10)
    assert uncovered_monotone(toy, 8) == "K=8 is not one gtr-fdpa of L=4 lanes, and no proof chains them"
    st = smtmma.lookup("sm100", "mxe4m3f32", "tcgen05").model
    assert uncovered_monotone(st, 32) == "no op proof of st-fdpa's monotonicity"
    r = check_property("monotonicity", toy, K=8, timeout=3.0)
    assert r.verdict == "unknown", r.reason
    assert "no proof covers it (K=8 is not one gtr-fdpa of L=4 lanes, and no proof chains them); raising " in r.reason


@pytest.mark.slow  # ~35 s on 2 cores
def test_gfx942_f16f32_is_proved_monotone_through_the_property() -> None:
    """The card's monotonicity example (issue 8: no answer in 300 s before): holds by facts on the model's own terms."""
    r = check_property("monotonicity", smtmma.lookup("gfx942", "f16f32").model, timeout=60.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason


def test_a_tf32_product_reaching_2_128_stays_there_when_a_factor_is_raised() -> None:
    """TF32 products reach 2^128 (§4.2), where Alg. 10 gives +inf: the lemma that such a product still does after a
    or b moves to its next value is proved; FP16 products never get there."""
    from smtmma.encodings.trfdpa import product_top
    from smtmma.op_proofs import trfdpa
    from smtmma.op_proofs.fused_sum import Plan
    from smtmma.queries.query_algebra import QueryAlgebra

    model = smtmma.lookup("gfx942", "tf32f32").model
    plan = Plan(model, 4)
    assert product_top(plan.tp) >= 128 and product_top(Plan(smtmma.lookup("gfx942", "f16f32").model, 8).tp) < 128
    alg = QueryAlgebra()
    v = [alg.var(n, plan.fa.bits) for n in ("a", "a2", "b")]
    chain = LemmaChain(alg, _bitwuzla_or_default())
    for who in ("a", "b"):
        assert trfdpa.overflow_stays(chain, plan, who, *v, 1), chain.stopped
    m = smtmma.formats.get_format(model.a_fmt).man_bits
    big, two = 254 << m, 128 << m  # 2^127 x 2 = 2^128 overflows before the sum: +inf
    assert sim(model, (big, 0, 0, 0), (two, 0, 0, 0), 0) == 0x7F800000


@pytest.mark.slow  # ~30 s on 2 cores
def test_gfx942_tf32f32_is_proved_monotone_through_the_property() -> None:
    """A table cell that had no answer in 120 s (the glue was false where a product overflows): holds by facts on the
    model's own terms, a product overflowing to +inf (§4.2) among them."""
    r = check_property("monotonicity", smtmma.lookup("gfx942", "tf32f32").model, timeout=60.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason
    assert "overflow (§4.2): a product reaching 2^128 makes D = +inf" in (r.smt2 or "")


def _bitwuzla_or_default() -> Runner:
    return Runner("bitwuzla" if "bitwuzla" in available() else None, 60.0, 0)


def test_ftz_addmul_glue_checks_the_tree_against_the_model() -> None:
    """CDNA2 (Alg. 2): the model's D is the P = 4 tree of FTZ-Mul and FTZ-Add; the P = 2 tree is another formula (sat)."""
    from smtmma.op_proofs import addmul as chain

    model = smtmma.lookup("gfx90a", "f16f32").model
    ops = chain.AddMulOps.of(model)
    run = _bitwuzla_or_default()
    for tree, verdict in ((chain.addmul_tree(4, 4), "unsat"), (chain.addmul_tree(4, 2), "sat")):
        alg = chain.QueryAlgebra()
        x = chain.InputSet.of(alg, model, 4)
        d = run_model(alg, model, x.a, x.b, x.c)
        t = chain.evaluate_tree(alg, ops, tree, list(x.a), list(x.b), x.c)
        assert run.check(negated_script(alg, alg.eq(d, t))).verdict == verdict


def test_ftz_addmul_raised_product_rests_on_the_mul_lemmas() -> None:
    """In the query's own formula, "raising a0 never lowers FTZ-Mul(a0, b0)" is proved from the mul lemmas applied to
    the model's patterns and significands (three move cases, the ring facts, the same binade); without them the
    solver gives no answer in 5 s (it would have to compare two multipliers)."""
    from smtmma.op_proofs import addmul as chain

    model = smtmma.lookup("gfx90a", "f16f32").model
    ops = chain.AddMulOps.of(model)
    solver = "bitwuzla" if "bitwuzla" in available() else None
    for with_lemmas in (False, True):
        f = MoveFormula(model, 1, Domain(nonneg=True, specials=False))
        alg, x, y = f.alg, f.x, f.raised["a0"]
        c = LemmaChain(alg, Runner(solver, 60.0 if with_lemmas else 5.0, 0), scoped=True)
        goal = alg.le(ops.mul(alg, x.a[0], x.b[0]), ops.mul(alg, y.a[0], y.b[0]))
        if not with_lemmas:
            assert not c.prove("bare", goal, uses=[]) and "unknown" in c.stopped
            continue
        apps = chain.AddMulLemmas(c, ops).mul_raised("a", x.a[0], x.b[0], y.a[0], y.b[0])
        assert apps is not None and len(apps) == 3 + 6 + 1  # the move cases, the ring facts, the same binade
        assert c.prove("raised", goal, uses=[], applied=apps), c.stopped
        assert c.fact_apps[-1] == tuple(apps)  # the certificate asserts these ten in the fact's check, no other


@pytest.mark.slow  # ~40 s on 2 cores, and the checker's re-check
def test_gfx90a_f16f32_is_proved_monotone_through_the_property() -> None:
    """004 §VI: MI250X keeps monotonicity: facts on the model's own terms (a glue per run, a fact per node the move
    reaches, one per position) and the lemmas (FTZ-Mul by cases, the ring facts, 14 add cases and their cover,
    commutativity); the independent checker accepts the file."""
    r = check_property("monotonicity", smtmma.lookup("gfx90a", "f16f32").model, timeout=120.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("ftz-addmul monotone", r.smt2 or "")]).text(),
                                 "bitwuzla", 300.0)
    assert passed, summary


def _nvf4() -> smtmma.Model:
    return smtmma.lookup("sm100", "nvf4f32", "tcgen05").model


def test_gst_fdpa_monotonicity_proof_applies_to_one_scale_per_group() -> None:
    """nvf4 (UE4M3 per 16 lanes = G) and mxf4 (UE8M0 per 32 lanes, two groups) at K = L are covered; K < L is another
    model's question, and a block that splits a group is not covered."""
    from smtmma.op_proofs.gstfdpa import supports_monotone

    assert supports_monotone(_nvf4(), 64)
    assert not supports_monotone(_nvf4(), 32)
    assert supports_monotone(smtmma.lookup("sm100", "mxf4f32", "tcgen05").model, 64)
    assert not supports_monotone(_nvf4().replace(block=8), 64)


def _toy_gst(block: int, scale_fmt: str, F: int = 12) -> smtmma.Model:
    return smtmma.Model("gst-fdpa", "e2m1", "e2m1", "fp16", "fp16", L=4, G=2, F=F, rho="rne-fp16", block=block, scale_fmt=scale_fmt)


@pytest.mark.parametrize("block, scale_fmt, shared", [(2, "ue4m3", False), (4, "ue8m0", True)])
def test_gst_fdpa_monotonicity_holds_on_the_models_own_terms(block: int, scale_fmt: str, shared: bool) -> None:
    """Alg. 9 with 2 groups of 2 FP4 lanes: facts on the model's own terms (each group's dot by its add steps, the
    group summand's gain by cases, a UE4M3 scale across a binade), the last check the query's statement; where one
    block scale reaches both groups (mxf4's shape), its move names the gaining summand.  The independent checker
    accepts the certificate."""
    r = check_property("monotonicity", _toy_gst(block, scale_fmt), timeout=60.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason, r.reason
    smt2 = r.smt2 or ""
    labels = _lemma_labels(smt2)
    assert sum(lb.startswith("an add step of the dot") for lb in labels) == 1
    assert any(lb.startswith("a group's exact dot (Alg. 9 line 3) of equal lanes") for lb in labels)
    assert any(lb.startswith("gain of the group summand whose sa is raised across a binade") for lb in labels)
    assert bool(re.search(r"^; lemma \d+: sa0 moved, summand 1 at E' or E' = E: its summand's credit", smt2, re.M)) == shared
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("gst-fdpa monotone", r.smt2 or "")]).text(),
                                 "bitwuzla" if "bitwuzla" in available() else "z3", 300.0)
    assert passed, summary


def test_gst_fdpa_monotonicity_facts_stop_where_a_witness_exists() -> None:
    """F = 3: c's gain lemma is sat (a raised c cannot cover the groups' losses), and the query finds a replayed
    witness: raising c lowers D."""
    from smtmma.op_proofs import gstfdpa
    from smtmma.queries.properties.monotonicity import OneMoveFormula

    model = _toy_gst(2, "ue8m0", F=3)
    f = OneMoveFormula(model, 4, Domain(nonneg=True, specials=False))
    chain = LemmaChain(f.alg, _bitwuzla_or_default(), scoped=True, sessions=False)
    assert not gstfdpa.monotone_facts(chain, f)
    assert chain.stopped.startswith("lemma gain of the moved summand (raising c") and chain.stopped.endswith(": sat")
    r = check_property("monotonicity", model, timeout=30.0)
    assert r.verdict == "fails" and r.extra["raised"] == "c"


def test_gst_fdpa_re_alignment_needs_the_wide_shift_cap() -> None:
    """A group summand reaches 2**(e + 12), not 2**(e + 2) as a product: with the T-FDPA proof's cap Dc = F + 3 the
    re-alignment lemma is sat (a summand that does not align to 0 at D = Dc), with the group's cap it is unsat."""
    from smtmma.op_proofs.gstfdpa import GstShape
    from smtmma.op_proofs.tfdpa import realign_lemma

    g = GstShape(_nvf4(), 64)
    assert g.sh.Dc == g.a_hi.bit_length() > g.sh.F + 3
    run = _bitwuzla_or_default()
    g.sh.Dc = g.sh.F + 3
    assert run.check(realign_lemma(g.sh, "group", g.fresh_group, "group").script).verdict == "sat"


@pytest.mark.slow  # ~85 s on 2 cores
def test_sm100_nvf4_is_proved_monotone_through_the_property() -> None:
    """No document states it: facts on the model's own terms, which the independent checker accepts."""
    r = check_property("monotonicity", _nvf4(), timeout=60.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason, r.reason
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("gst-fdpa monotone", r.smt2 or "")]).text(),
                                 "bitwuzla" if "bitwuzla" in available() else "z3", 600.0)
    assert passed, summary


def test_an_fp32_fma_chain_is_proved_monotone_through_the_property() -> None:
    """CDNA's FP32 FMA chain (Alg. 4), two FMAs (~20 s): facts on the model's own terms, the window order lemma among
    the lemmas applied to them."""
    r = check_property("monotonicity", smtmma.lookup("gfx90a", "f32f32").model, K=2, timeout=30.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason, r.reason
    assert ": window order (c raised)" in (r.smt2 or "") and ": ring (24-bit significands, s * t)" in (r.smt2 or "")


@pytest.mark.slow  # ~100 s on 2 cores
def test_sm80_f64f64_is_proved_monotone_through_the_property() -> None:
    """002 §3.3: binary64 (a chain of correctly rounded FMAs) is monotone; facts on the model's own terms, which the
    independent checker accepts."""
    r = check_property("monotonicity", smtmma.lookup("sm80", "f64f64").model, timeout=60.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason, r.reason
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("fma monotone", r.smt2 or "")]).text(),
                                 "bitwuzla" if "bitwuzla" in available() else "z3", 600.0)
    assert passed, summary


def test_an_fma_chain_that_propagates_nan_payloads_is_its_own_chain_of_fmas() -> None:
    """Hopper's DMMA returns an operand's NaN payload (nan=propagate): the FMAs the facts are about, built in that
    style, are the model's own D (the same term), while IEEE FMAs are not."""
    from smtmma.op_proofs import fma as fma_proofs

    model = smtmma.Model("fma", "fp32", "fp32", "fp32", "fp32", nan="propagate")
    f = MoveFormula(model, 2, Domain(nonneg=True, specials=False))
    for nan, same in (("propagate", True), ("ieee", False)):
        sh = fma_proofs.FmaShape.of(model.replace(nan=nan))
        s0 = fma_proofs.fma_step(f.alg, sh, f.x.a[0], f.x.b[0], f.x.c)
        s1 = fma_proofs.fma_step(f.alg, sh, f.x.a[1], f.x.b[1], s0.d)
        assert (s1.d.raw == f.d.raw) is same


def _chain_facts(model: smtmma.Model, K: int):  # type: ignore[no-untyped-def]
    """A ``c_after`` chain's monotonicity facts in the query's own one-move formula: (held, chain, formula)."""
    from smtmma.op_proofs.tfdpa import chain_monotone_facts
    from smtmma.queries.properties.monotonicity import OneMoveFormula

    f = OneMoveFormula(model, K, Domain(nonneg=True, specials=False))
    chain = LemmaChain(f.alg, Runner("bitwuzla" if "bitwuzla" in available() else None, 60.0, 0), scoped=True)
    held = chain_monotone_facts(chain, f) and chain.check_final(f.statement()).verdict == "unsat"
    return held, chain, f


def test_a_chain_with_c_added_last_is_monotone_on_the_models_own_terms() -> None:
    """sm90's FP8 mma at K = 4 (lanes 0, 1 in the first FDPA, 2, 3 in the second, on FP16 conversions; C added last by
    an RNE add): every fact is about the model's own terms, with no stand-in: each FDPA's credit argument (the second
    one's c raised by any amount, one label for "an input of the first moved", under "its c' is finite"), +inf
    through the second FDPA, C's add monotone in both operands; the last check is the query's statement."""
    from smtmma.op_proofs import tfdpa
    from smtmma.queries.properties.monotonicity import uncovered_monotone

    model = smtmma.lookup("sm90", "e4m3e5m2f16", "mma").model
    assert tfdpa.supports_chain_monotone(model, 4) and not tfdpa.supports_chain_monotone(model, 33)  # one issue
    assert uncovered_monotone(model, 33) == ("the proof of chains with C added last (T-FDPAs, C in D's format, K within one "
                                             f"issue) does not take {model.describe()} at K=33")
    assert tfdpa.chain_step(model).describe() == "t-fdpa:L=16,F=25,rho=rne-fp16,via=fp16"  # the inputs as the unit reads them
    held, chain, f = _chain_facts(model, 4)
    assert held, chain.stopped
    labels = [label for label, _, _ in chain.proven]
    assert labels[-1] == "the move never lowers D"
    assert "D1 moved: its summand's credit 2^D A' + w - A is at least 17 w" in labels  # FDPA 2's c: one label
    assert sum("moved: its summand's credit" in lb for lb in labels) == 2 * 4 + 1  # a0..b1 in FDPA 1, a2..b3 and D1 in FDPA 2
    assert {"FDPA 2 of 2: c = +inf gives D = +inf", "FDPA 2 of 2: c, moved = +inf gives D = +inf"} <= set(labels)
    lemmas = [lem.label for lem in chain.lemmas]
    assert any("raising c; any raise" in lb for lb in lemmas)  # the previous D rises by any amount
    assert sum(lb.startswith("C added last (RNE-fp16)") for lb in lemmas) == 2


def test_a_chain_with_c_added_last_stops_where_the_fdpas_round_toward_zero() -> None:
    """sm90's FP8 mma with an FP32 output (each FDPA rounds RZ to FP32): raising an input of the first FDPA can lift its
    D into the next binade, where the second FDPA aligns its products one bit higher and drops their last bit (see
    the chain search's test below): the facts stop at the second FDPA's c, whose gain lemma has a counterexample."""
    model = smtmma.lookup("sm90", "e5m2e5m2f32", "mma").model
    held, chain, _ = _chain_facts(model, 4)
    assert not held and chain.stopped == "lemma gain of the moved summand (raising c; any raise): 2^D A(t', E') >= A(t, E) + 16 w: sat"


@pytest.mark.slow  # ~18 s
def test_a_users_chain_of_fp16_fdpas_with_c_added_last_is_monotone() -> None:
    """A spec no catalogue row has (FP16 lanes read as they are, two FDPAs of L = 2 at K = 4, C added last): its lanes'
    gain goes by cases as one FDPA's (11-bit significands: one lemma for every move gets no answer in 120 s)."""
    model = smtmma.lookup("sm90", "f16f16").model.replace(L=2, F=23, rho="rne-fp16", c_after=True, issue=None,
                                                           interleave=None, via=None, emax_floor=None)
    r = check_property("monotonicity", model, K=4, timeout=120.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason, r.reason


@pytest.mark.slow  # 137 s beside a CI run: the proof, then the checker
def test_sm90_fp8_mma_with_fp16_output_is_proved_monotone_through_the_property() -> None:
    """The table cell once proved on stand-ins: facts on the model's own terms at K = 16 (two FDPAs of 16 lanes, 8
    real each), through the property, and the independent checker accepts the file."""
    r = check_property("monotonicity", smtmma.lookup("sm90", "e4m3e4m3f16", "mma").model, timeout=60.0)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason and "K=16" in r.reason
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("c_after monotone", r.smt2 or "")]).text(),
                                 "bitwuzla" if "bitwuzla" in available() else "z3", 300.0)
    assert passed, summary


def test_the_chain_search_reaches_a_binade_through_the_first_fdpas_rounding() -> None:
    """sm90 e5m2 x e5m2 -> f32 mma, K = 16: no eight e5m2 products sum to 2^-6 - 2^-30 exactly, but a sum in
    [2^-6 - 2^-30, 2^-6) rounds (RZ) there; raising b0 lifts the first FDPA to 2^-6, the second aligns one bit
    higher and its products lose their last bit: D drops by one ulp.  The FP16-output chains, proved monotone, give none."""
    from smtmma.queries.properties.monotone_search import chain_candidate

    model = smtmma.lookup("sm90", "e5m2e5m2f32", "mma").model
    hit = chain_candidate(model, 16)
    assert hit is not None and hit[0] == "b0"
    _, w, w2 = hit
    assert w2.b[0] == w.b[0] + 1 and w2.a == w.a
    assert (sim(model, w.a, w.b, 0), sim(model, w2.a, w2.b, 0)) == (0x3C800001, 0x3C800000)  # 2^-6 + 2^-29 -> 2^-6
    assert chain_candidate(smtmma.lookup("sm90", "e5m2e5m2f16", "mma").model, 16) is None
