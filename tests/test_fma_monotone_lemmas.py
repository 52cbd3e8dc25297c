"""The FMA chain's monotonicity (Alg. 3-4) on the model's own terms: the shape, the ring facts at FP64's 53 bits, the
window order lemma and its helpers, toy chains proved and re-checked by the independent checker."""

from __future__ import annotations

import pytest

import smtmma
from smtmma.catalogue import model_of
from smtmma.encodings.fields import unpack
from smtmma.formats import get_format
from smtmma.op_proofs.fma import FmaShape, apply_step_facts, fma_step, supports_monotone, window_order_lemma
from smtmma.proof_kernel.blocks import chain_block
from smtmma.proof_kernel.chain import LemmaChain
from smtmma.proofs.certificate import Certificate
from smtmma.proofs.check_certificate import check_text
from smtmma.queries.backends import available
from smtmma.queries.properties.monotonicity import monotonicity
from smtmma.queries.query_algebra import QueryAlgebra, Runner

pytestmark = pytest.mark.skipif("bitwuzla" not in available(), reason="bitwuzla not installed")

MODEL = model_of("sm80", "f64f64")
SHAPE = FmaShape.of(MODEL)
TOY = smtmma.Model("fma", "fp16", "fp16", "fp16", "fp16")


def test_the_shape_is_fp64s_window() -> None:
    # 106-bit product + 53-bit c + 3 (exact_sum2); non-zero products lead from 2**-2147, c from 2**-1073
    assert (SHAPE.window, SHAPE.prod_lead, SHAPE.c_lead, SHAPE.sig_bits) == (162, (-2147, 2050), (-1073, 1025), 53)


def test_only_fma_chains_have_a_shape_and_a_proof() -> None:
    with pytest.raises(ValueError, match="not an FMA chain"):
        FmaShape.of(model_of("sm90", "f16f32"))
    assert supports_monotone(MODEL, 4) and not supports_monotone(model_of("sm90", "f16f32"), 4)
    assert not supports_monotone(MODEL, 0)
    hopper = model_of("sm90", "f64f64")  # NaN payloads propagated: the split lemma states the FMA of that style
    assert hopper.nan == "propagate" and supports_monotone(hopper, 1) and FmaShape.of(hopper).nan == "propagate"
    assert FmaShape.of(hopper.replace(nan="ieee")).nan == "ieee"


@pytest.mark.parametrize("p, given", [(24, 1), (53, 2)])
def test_the_ring_facts_of_the_models_products_are_proved(p: int, given: int) -> None:
    # the binade's end, (2^p - 1) t + t = 2^p t: bitwuzla gives no answer in 120 s at 53 bits as it is, and proves it
    # at once given the wide step at (s, s + 1, t); at FP32's 24 bits it needs no help, so those certificates keep
    # their form
    f = get_format({24: "fp32", 53: "fp64"}[p])
    alg = QueryAlgebra()
    a, a2, b = (unpack(alg, f, alg.var(n, f.bits)) for n in ("a", "a2", "b"))
    chain = LemmaChain(alg, Runner("bitwuzla", 60, 0))
    apps = apply_step_facts(chain, p, a.sig, a2.sig, b.sig)
    assert len(apps) == 6 and not chain.stopped
    end = next(lem for lem in chain.lemmas if "binade's end" in lem.label)
    assert len(end.given) == given - 1 and len([x for x in chain.lemmas if x.label.startswith("ring at")]) == 1


def test_the_window_order_lemma_is_proved_from_its_helpers() -> None:
    """RNE(F + G) <= RNE(F + G') on the leads, proved in a scope where the window and rounding lemmas are applied to
    its own parameters' terms: every helper is proved first, and the composed lemma's proof asserts them."""
    sh = FmaShape.of(TOY)
    alg = QueryAlgebra()
    f = sh.fmt
    s = fma_step(alg, sh, alg.var("a", 16), alg.var("b", 16), alg.var("c", 16))
    s2 = fma_step(alg, sh, s.a, s.b, alg.var("c2", 16))
    args = [*s.x.triple(), *s.y.triple(), *s2.y.triple()]
    lem = window_order_lemma(sh, False, args)
    labels = [h.label for h, _ in lem.given]
    assert len(labels) == 16 and sum(x.startswith("window, lmax up by one") for x in labels) == 5
    assert {"rounding, one more lsb", "window, adder", "window, place"} <= {x.split(":")[0] for x in labels}
    assert all(text.startswith(f"({h.name} ") for h, text in lem.given)
    chain = LemmaChain(alg, Runner("bitwuzla", 60, 0))
    assert chain.establish(lem, args) and not chain.stopped
    assert [x.label for x in chain.lemmas][-1] == lem.label and len(chain.lemmas) >= 12
    assert f.name == "fp16" and lem.proof().count("(assert (lemma_") == 16


def _certificate(r) -> str:
    return Certificate({"claim": "t"}, [chain_block("fma monotone", r.smt2 or "")]).text()


def test_a_toy_fma_chain_is_monotone_on_its_own_terms_and_the_checker_agrees() -> None:
    """Two FP16 FMAs (~10 s): every move's fact rests on lemma applications to the model's own terms, and the
    independent checker, given only the file, proves every lemma and fact again."""
    r = monotonicity(TOY, K=2, solver="bitwuzla", timeout=60, search=False)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason, r.reason
    text = r.smt2 or ""
    for label in ("split (Alg. 3)", "window order (c raised)", "window order (the product raised)", "finish (Alg. 3)",
                  "terms, product lead, a raised", "terms, product lead, b raised", "ring (11-bit significands"):
        assert f": {label}" in text, label
    passed, summary = check_text(_certificate(r), "bitwuzla", 120.0)
    assert passed, summary


def test_an_fma_chain_that_propagates_nan_payloads_is_proved_on_its_own_fmas() -> None:
    """Hopper's DMMA returns an operand's NaN payload (nan=propagate): the split lemma states the FMA of that style
    (on non-negative operands it meets no NaN), and the facts are about the model's own D (~5 s)."""
    model = smtmma.Model("fma", "fp16", "fp16", "fp16", "fp16", nan="propagate")
    r = monotonicity(model, K=1, solver="bitwuzla", timeout=60, search=False)
    assert r.verdict == "holds" and "facts about the model's own terms" in r.reason, r.reason
    assert "split (Alg. 3): fma (NaNs propagated: none arises here)" in (r.smt2 or "")
    passed, summary = check_text(_certificate(r), "bitwuzla", 120.0)
    assert passed, summary


def test_facts_about_other_fmas_than_the_models_stop_with_a_reason() -> None:
    """A chain whose rebuilt FMAs are not the model's own D (here the formula of Hopper's propagating FMAs, the facts
    built for IEEE FMAs) stops before any check, naming why: an unknown with a reason, not a crash."""
    from smtmma.op_proofs.fma import monotone_facts
    from smtmma.queries.formula import Domain
    from smtmma.queries.properties.monotonicity import MoveFormula

    model = smtmma.Model("fma", "fp16", "fp16", "fp16", "fp16", nan="propagate")
    f = MoveFormula(model, 1, Domain(nonneg=True, specials=False))
    f.model = model.replace(nan="ieee")
    chain = LemmaChain(f.alg, Runner("bitwuzla", 60, 0))
    assert monotone_facts(chain, f) is False and "not the model's own D" in chain.stopped and not chain.proven
