"""E-FDPA's monotonicity (Alg. 6) as facts about the model's own terms: every single move in one formula, lemmas
applied to the run's terms, the query's statement last; the independent checker accepts the file."""

from __future__ import annotations

import pytest

from smtmma.catalogue import model_of
from smtmma.encodings.fields import unpack
from smtmma.models import Model
from smtmma.proof_kernel.blocks import chain_block
from smtmma.proof_kernel.chain import LemmaChain
from smtmma.proofs.certificate import Certificate
from smtmma.proofs.check_certificate import check_text
from smtmma.queries.backends import available, solve
from smtmma.queries.formula import Domain
from smtmma.queries.properties.monotonicity import MoveFormula, monotone_facts, monotonicity
from smtmma.queries.query_algebra import QueryAlgebra, Runner, value_key
from smtmma.op_proofs.efdpa import EfdpaShape, monotone_facts as efdpa_facts, rounding_cases, supports_monotone
from smtmma.proof_kernel.parts import negated_script as _script, ranged_var as _ranged

pytestmark = pytest.mark.skipif("bitwuzla" not in available(), reason="bitwuzla not installed")

MODEL = model_of("gfx908", "f16f32")
SHAPE = EfdpaShape.of(MODEL, 4)
SMALL = Model("e-fdpa", "e4m3", "e4m3", "fp16", "fp16", L=2)  # a narrow sum: the whole chain in a few seconds
DOMAIN = Domain(nonneg=True, specials=False)


def test_the_shape_is_fp32_cs_last_place() -> None:
    # the smallest last place is c's (2**-149, FP32 subnormal); M spans 278 bits: c up to 2**128 plus four products
    assert SHAPE.floor == -149 and SHAPE.mag_hi.bit_length() == 278
    # a placed product: (2**11 - 1)**2 shifted by up to 2 * 16 - 20 + 149 (the static range: exponents up to inf's 16)
    assert SHAPE.prod == (-SHAPE.prod[1], ((1 << 11) - 1) ** 2 << (2 * 16 - 20 + 149))
    assert rounding_cases(SHAPE) == [(0, 50), (50, 100), (100, 200), (200, None)]


def test_only_one_efdpa_of_one_input_format_has_the_facts() -> None:
    assert supports_monotone(MODEL, 4) and supports_monotone(MODEL, 1)
    assert not supports_monotone(MODEL, 0) and not supports_monotone(MODEL, 8)  # K > L: a chain of two
    assert supports_monotone(model_of("gfx908", "bf16f32"), 2)
    assert not supports_monotone(model_of("sm90", "f16f32"), 16)
    assert monotone_facts(MODEL, 4) is not None and not monotone_facts(MODEL, 4).one_move  # a run per position
    assert monotone_facts(model_of("gfx942", "f16f32"), 8).one_move  # TR-FDPA (L = 8): one symbolic move
    assert monotone_facts(model_of("gfx942", "f16f32"), 16) is None  # K > L: a chain of two, no facts cover it


def test_every_move_is_in_one_formula() -> None:
    f = MoveFormula(SMALL, 2, DOMAIN)
    assert f.labels == ["c", "a0", "b0", "a1", "b1"]
    assert sorted(f.outputs) == sorted(f.labels) and sorted(f.drops) == sorted(f.labels)
    text = f.alg.script(f.statement())
    for label in f.labels:  # each raised input is declared; the runs are terms of the inputs, not declared outputs
        assert f"(declare-const {label}_2 " in text
    assert "(declare-const d" not in text


def test_the_chain_holds_and_the_checker_accepts_it() -> None:
    r = monotonicity(SMALL, K=2, timeout=60, search=False)
    assert r.verdict == "holds", r.reason
    text = r.smt2 or ""
    facts = [line.split(": ", 1)[1].split(" (uses")[0] for line in text.splitlines() if line.startswith("; lemma ") and "(uses" in line]
    assert facts[0].startswith("glue (Alg. 6 line 1): D is RNE-fp16 of the sum of its terms placed at 2^")
    # the last fact of each position: raising it never lowers D; the statement (some move lowers D) is last
    assert [x for x in facts if x.startswith("raising ") and x.endswith("never lowers D")] == \
        [f"raising {lb} to its next value never lowers D" for lb in ("c", "a0", "b0", "a1", "b1")]
    lemmas = [line for line in text.splitlines() if line.startswith("; lemma lemma_")]
    assert any("ring (4-bit significands, s * t): the step s + 1" in x for x in lemmas)
    assert any("ring (4-bit significands, t * s): the step s + 1" in x for x in lemmas)  # b moved: t * s
    assert any("running sums" in x for x in lemmas) and any("rounding (" in x for x in lemmas)
    assert r.extra["lemmas"] == len(facts) + len(lemmas)
    passed, summary = check_text(Certificate({"claim": "t"}, [chain_block("e-fdpa monotone", text)]).text(), "bitwuzla", 60.0)
    assert passed, summary


def test_without_the_ring_lemmas_the_raised_product_is_not_a_boolean_step() -> None:
    # the fact "raising a0 never lowers its placed product" asked with no lemma applied: the solver must compare two
    # multipliers itself, which it does not do in 5 s (with the ring lemmas: 0.02 s)
    f = MoveFormula(MODEL, 1, DOMAIN)
    run = Runner("bitwuzla", 5, 0)
    chain = LemmaChain(f.alg, run)
    alg = f.alg
    a, b, a2 = f.x.a[0], f.x.b[0], f.raised["a0"].a[0]
    p1 = SHAPE.placed_product(alg, unpack(alg, SHAPE.fa, a), unpack(alg, SHAPE.fb, b))[0]
    p2 = SHAPE.placed_product(alg, unpack(alg, SHAPE.fa, a2), unpack(alg, SHAPE.fb, b))[0]
    assert not chain.prove("raised product", alg.le(p1, p2), uses=[])
    assert "unknown" in chain.stopped
    # the op's own facts prove it (and every other fact) on the same formula
    full = MoveFormula(MODEL, 1, DOMAIN)
    chain2 = LemmaChain(full.alg, Runner("bitwuzla", 60, 0))
    assert efdpa_facts(chain2, full), chain2.stopped
    assert chain2.check_final(full.statement()).verdict == "unsat"


def test_the_rounding_lemma_needs_its_sign_premise() -> None:
    # -0 is below +0 nowhere, but a negative sign on a non-zero M is: RNE(-M) > RNE(M') fails for M <= M'
    alg = QueryAlgebra()
    m1, m2 = _ranged(alg, "M1", 0, SHAPE.mag_hi), _ranged(alg, "M2", 0, SHAPE.mag_hi)
    r1, r2 = SHAPE.rne(alg, alg.bvar("n1"), m1), SHAPE.rne(alg, alg.bvar("n2"), m2)
    goal = alg.le(value_key(alg, SHAPE.out, r2), value_key(alg, SHAPE.out, r1))  # RNE(M') <= RNE(M) ...
    r = solve(_script(alg, alg.or_(alg.not_(alg.lt(m1, m2)), alg.not_(goal))), ["n2"], solver="bitwuzla", timeout=60)
    assert r.verdict == "sat" and r.values["n2"] == 1  # ... happens only by a negative sign on M'


@pytest.mark.slow
def test_gfx908_f16f32_holds_on_the_models_terms() -> None:
    r = monotonicity(MODEL, K=4, timeout=120)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason
