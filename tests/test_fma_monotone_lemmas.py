"""The FMA chain's monotonicity proof (sm80 f64f64): each lemma unsat, the compositions consistent and not vacuous."""

from __future__ import annotations

import pytest
from composition_checks import assert_composition_sound, assert_facts_hold_at

from smtmma.catalogue import model_of
from smtmma.queries.backends import available, solve
from smtmma.queries.query_algebra import QueryAlgebra
from smtmma.op_proofs.fma import (FmaShape, chain_position, fma_in_a, fma_in_c, glue_lemma, rep_le, rounding_lemmas,
                                  split_lemmas, supports_monotone, term_lemmas, window_lemmas)
from smtmma.proof_kernel.parts import Part as _Lemma, negated_script as _script, ranged_var as _ranged

pytestmark = pytest.mark.skipif("bitwuzla" not in available(), reason="bitwuzla not installed")

MODEL = model_of("sm80", "f64f64")
SHAPE = FmaShape.of(MODEL)


def _lemmas() -> dict[str, _Lemma]:
    lemmas = [glue_lemma(MODEL, 4, SHAPE), *split_lemmas(SHAPE), *term_lemmas(SHAPE), *window_lemmas(SHAPE),
              *rounding_lemmas(SHAPE)]
    return {lem.label.split(":")[0]: lem for lem in lemmas}


LEMMAS = _lemmas()
FAST = ["glue (Alg. 4)", "split (Alg. 3)", "fma commutes", "terms, c", "ring, product step", "ring, power of two 2**52",
        "ring, power of two 2**53", "ring, zero on the right", "ring, zero on the left", "ring, commutativity",
        "terms, product lead", "window sum of non-negative terms", "window, adder", "window, lmax up by one, lead(Y) - lead(X) in [-inf, 0]",
        "window, lmax up by one, lead(Y) - lead(X) in [1, 2]", "window, lmax up by two or more", "rounding, sign"]
SLOW = ["terms, product lead, a raised", "window, place", "window, lmax up by one, lead(Y) - lead(X) in [3, 40]",
        "window, lmax up by one, lead(Y) - lead(X) in [41, 80]", "window, lmax up by one, lead(Y) - lead(X) in [81, inf]",
        "rounding", "rounding, one more lsb"]


def test_the_shape_is_fp64s_window() -> None:
    # 106-bit product + 53-bit c + 3 (exact_sum2); non-zero products lead from 2**-2147, c from 2**-1073
    assert (SHAPE.window, SHAPE.prod_lead, SHAPE.c_lead, SHAPE.sig_bits) == (162, (-2147, 2050), (-1073, 1025), 53)
    assert set(FAST) | set(SLOW) == set(LEMMAS)


def test_only_fma_chains_have_a_shape_and_a_proof() -> None:
    with pytest.raises(ValueError, match="not an FMA chain"):
        FmaShape.of(model_of("sm90", "f16f32"))
    assert supports_monotone(MODEL, 4) and not supports_monotone(model_of("sm90", "f16f32"), 4)
    assert not supports_monotone(MODEL, 0)
    hopper = model_of("sm90", "f64f64")  # NaN payloads propagated: the glue states the chain of FMAs of that style
    assert hopper.nan == "propagate" and supports_monotone(hopper, 1) and FmaShape.of(hopper).nan == "propagate"
    assert FmaShape.of(hopper.replace(nan="ieee")).nan == "ieee"


@pytest.mark.parametrize("label", FAST)
def test_fast_lemma_is_unsat(label: str) -> None:
    assert solve(LEMMAS[label].script, solver="bitwuzla", timeout=60).verdict == "unsat"


@pytest.mark.slow
@pytest.mark.parametrize("label", SLOW)
def test_slow_lemma_is_unsat(label: str) -> None:
    assert solve(LEMMAS[label].script, solver="bitwuzla", timeout=120).verdict == "unsat"


COMPOSITIONS = {"FMA in c": lambda: fma_in_c(SHAPE), "FMA in a": lambda: fma_in_a(SHAPE),
                "chain, c": lambda: chain_position(SHAPE, 4, "c"), "chain, b2": lambda: chain_position(SHAPE, 4, "b2")}


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_a_composition_is_proved_consistent_and_needs_its_facts(name: str) -> None:
    assert_composition_sound(COMPOSITIONS[name]())


def test_the_fma_ring_step_is_what_the_algebra_could_not_prove() -> None:
    # the ring lemma's script has no clamp and no sign extension: the rewriter's form, not the algebra's
    script = LEMMAS["ring, product step"].script
    assert "(bvmul (bvadd S (_ bv1 107)) T)" in script and "ite" not in script and "sign_extend" not in script


def test_the_adder_step_needs_its_cut_premise() -> None:
    # without "no cut of Y' lost when the kept bits are equal", Y cut and Y' exact with the same kept bits is a
    # counterexample: the rep order the rounding lemma rests on is not implied by kept y <= kept y' alone
    alg = QueryAlgebra()
    kx, k1, k2 = (_ranged(alg, n, 0, (1 << SHAPE.window) - 1) for n in ("kx", "ky", "kz"))
    cx, c1, c2 = (alg.eq(alg.var(n, 1), 1) for n in ("cx", "cy", "cz"))
    goal = rep_le(alg, alg.add(kx, k1), alg.or_(cx, c1), alg.add(kx, k2), alg.or_(cx, c2))
    r = solve(_script(alg, alg.or_(alg.not_(alg.le(k1, k2)), goal)), ["cx", "cy", "cz", "ky", "kz"], solver="bitwuzla", timeout=60)
    assert r.verdict == "sat"
    assert (r.values["ky"], r.values["cx"], r.values["cy"], r.values["cz"]) == (r.values["kz"], 0, 1, 0)


def _f64(x: float) -> int:
    import struct

    return struct.unpack("<Q", struct.pack("<d", x))[0]


#: (composition, inputs as FP64 patterns): points where the lemma instances each composition asserts are checked
#: against the pieces themselves (the step no solver checks in the proof: applying a lemma stated on fresh operands)
POINTS = [
    ("FMA in c", {"a": _f64(1.5), "b": _f64(3.0), "c": _f64(4.0), "c2": _f64(4.0) + 1}),  # the same lmax
    ("FMA in c", {"a": _f64(1.0), "b": _f64(2.0 ** -60), "c": _f64(2.0), "c2": _f64(4.0)}),  # lmax up by one, c cut
    ("FMA in c", {"a": _f64(3.0), "b": _f64(5.0), "c": _f64(1.0), "c2": _f64(2.0 ** 40)}),  # lmax up by many
    ("FMA in c", {"a": _f64(3.0), "b": _f64(5.0), "c": _f64(-0.0), "c2": _f64(float("inf"))}),  # c' = +inf
    ("FMA in a", {"a": _f64(2.0) - 1, "a2": _f64(2.0), "b": _f64(3.0), "c": _f64(1.0)}),  # the exponent field up
    ("FMA in a", {"a": _f64(1.25), "a2": _f64(1.25) + 1, "b": _f64(2.0 ** -1000), "c": _f64(2.0 ** -1000)}),  # s + 1
    ("FMA in a", {"a": 0, "a2": 1, "b": _f64(2.0 ** 1000), "c": _f64(7.0)}),  # a zero raised to the least subnormal
    ("chain, b2", {"a0": _f64(1.0), "a1": _f64(2.0), "a2": _f64(0.5), "a3": _f64(1.0), "b0": _f64(3.0), "b1": _f64(1e-3),
                   "b2": _f64(7.0), "b3": _f64(2.0 ** 900), "c": _f64(1.0), "b2_2": _f64(7.0) + 1}),
]


@pytest.mark.parametrize("name, point", POINTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(POINTS)])
def test_every_asserted_fact_holds_of_the_pieces_themselves(name: str, point: dict[str, int]) -> None:
    assert_facts_hold_at(COMPOSITIONS[name](), point)