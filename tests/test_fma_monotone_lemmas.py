"""The lemmas of the FMA chain's monotonicity proof in progress (sm80 f64f64): each one unsat, and not vacuous."""

from __future__ import annotations

import pytest

from smtmma.catalogue import model_of
from smtmma.queries.backends import available, solve
from smtmma.queries._twins import QueryAlgebra
from smtmma.queries.properties._monotone_fma import FmaShape, _rep, rounding_lemmas, term_lemmas, window_lemmas
from smtmma.queries.properties.error_parts import _Lemma, _ranged, _script

pytestmark = pytest.mark.skipif("bitwuzla" not in available(), reason="bitwuzla not installed")

SHAPE = FmaShape.of(model_of("sm80", "f64f64"))


def _lemmas() -> dict[str, _Lemma]:
    return {lem.label.split(":")[0] + ("" if ";" not in lem.label else ";" + lem.label.split(";")[1]): lem
            for lem in window_lemmas(SHAPE) + rounding_lemmas(SHAPE) + term_lemmas(SHAPE)}


LEMMAS = _lemmas()
FAST = ["window sum of non-negative terms", "window, adder", "window, lmax up by two or more", "terms, c",
        "terms, product; a is a zero", "terms, next pattern", "terms, product lead"]
SLOW = ["window, place", "window, lmax up by one", "rounding", "rounding, one more lsb"]


def test_the_shape_is_fp64s_window() -> None:
    # 106-bit product + 53-bit c + 3 (exact_sum2); non-zero products lead from 2**-2147, c from 2**-1073
    assert (SHAPE.window, SHAPE.prod_lead, SHAPE.c_lead) == (162, (-2147, 2050), (-1073, 1025))
    assert set(FAST + SLOW) <= set(LEMMAS)


def test_only_fma_chains_have_a_shape() -> None:
    with pytest.raises(ValueError, match="not an FMA chain"):
        FmaShape.of(model_of("sm90", "f16f32"))


@pytest.mark.parametrize("label", FAST)
def test_fast_lemma_is_unsat(label: str) -> None:
    assert solve(LEMMAS[label].script, solver="bitwuzla", timeout=60).verdict == "unsat"


@pytest.mark.slow
@pytest.mark.parametrize("label", SLOW)
def test_slow_lemma_is_unsat(label: str) -> None:
    assert solve(LEMMAS[label].script, solver="bitwuzla", timeout=120).verdict == "unsat"


def test_the_adder_step_needs_its_cut_premise() -> None:
    # without "no cut of Y' lost when the kept bits are equal", Y cut and Y' exact with the same kept bits is a
    # counterexample: the rep order the rounding lemma rests on is not implied by kept y <= kept y' alone
    alg = QueryAlgebra()
    kx, k1, k2 = (_ranged(alg, n, 0, (1 << SHAPE.window) - 1) for n in ("kx", "ky", "kz"))
    cx, c1, c2 = (alg.eq(alg.var(n, 1), 1) for n in ("cx", "cy", "cz"))
    goal = _rep(alg, alg.add(kx, k1), alg.or_(cx, c1), alg.add(kx, k2), alg.or_(cx, c2))
    r = solve(_script(alg, alg.or_(alg.not_(alg.le(k1, k2)), goal)), ["cx", "cy", "cz", "ky", "kz"], solver="bitwuzla", timeout=60)
    assert r.verdict == "sat"
    assert (r.values["ky"], r.values["cx"], r.values["cy"], r.values["cz"]) == (r.values["kz"], 0, 1, 0)
