"""E-FDPA's monotonicity proof (gfx908 f16f32): each lemma unsat, the compositions consistent, not vacuous, and their
facts true of the pieces themselves at pinned inputs."""

from __future__ import annotations

import pytest
from composition_checks import assert_composition_sound, assert_facts_hold_at

from smtmma.catalogue import model_of
from smtmma.formats import from_fraction
from smtmma.queries.query_algebra import QueryAlgebra, value_key
from smtmma.queries.backends import available, solve
from smtmma.op_proofs.efdpa import (EfdpaShape, adder_lemmas, glue_lemma, position, positions, rounding_cases, rounding_lemmas,
                                    supports_monotone, term_lemmas)
from smtmma.proof_kernel.parts import Part as _Lemma, negated_script as _script, ranged_var as _ranged

pytestmark = pytest.mark.skipif("bitwuzla" not in available(), reason="bitwuzla not installed")

MODEL = model_of("gfx908", "f16f32")
SHAPE = EfdpaShape.of(MODEL, 4)
LEMMAS: dict[str, _Lemma] = {lem.label.split(":")[0]: lem for lem in
                             [glue_lemma(MODEL, 4, SHAPE), *term_lemmas(SHAPE), *adder_lemmas(SHAPE), *rounding_lemmas(SHAPE)]}
SLOW = ["adder, left", "rounding (2**100 <= M' < 2**200)"]  # 4 s each on one core


def test_the_shape_is_fp32_cs_last_place() -> None:
    # the smallest last place is c's (2**-149, FP32 subnormal); M spans 278 bits: c up to 2**128 plus four products
    assert SHAPE.floor == -149 and SHAPE.mag_hi.bit_length() == 278
    # a placed product: (2**11 - 1)**2 shifted by up to 2 * 16 - 20 + 149 (the static range: exponents up to inf's 16)
    assert SHAPE.prod == (-SHAPE.prod[1], ((1 << 11) - 1) ** 2 << (2 * 16 - 20 + 149))
    assert rounding_cases(SHAPE) == [(0, 50), (50, 100), (100, 200), (200, None)]
    assert sorted(LEMMAS) == sorted(
        ["glue (Alg. 6)", "terms, c", "terms, c raised", "terms, product", "terms, product, a raised", "terms, product, b raised",
         "ring, product step", "ring, power of two 2**10", "ring, power of two 2**11", "ring, zero on the right",
         "ring, zero on the left", "ring, commutativity", "adder, left", "adder, right", "rounding (M' < 2**50)",
         "rounding (2**50 <= M' < 2**100)", "rounding (2**100 <= M' < 2**200)", "rounding (M' >= 2**200)"])


def test_only_one_efdpa_of_one_input_format_has_the_proof() -> None:
    assert supports_monotone(MODEL, 4) and supports_monotone(MODEL, 1)
    assert not supports_monotone(MODEL, 0) and not supports_monotone(MODEL, 8)  # K > L: a chain of two
    assert supports_monotone(model_of("gfx908", "bf16f32"), 2)
    assert not supports_monotone(model_of("sm90", "f16f32"), 16)
    assert positions(2) == ["c", "a0", "b0", "a1", "b1"]


@pytest.mark.parametrize("label", [k for k in sorted(LEMMAS) if k not in SLOW])
def test_fast_lemma_is_unsat(label: str) -> None:
    assert solve(LEMMAS[label].script, solver="bitwuzla", timeout=60).verdict == "unsat"


@pytest.mark.slow
@pytest.mark.parametrize("label", SLOW)
def test_slow_lemma_is_unsat(label: str) -> None:
    assert solve(LEMMAS[label].script, solver="bitwuzla", timeout=120).verdict == "unsat"


def test_the_rounding_lemma_needs_its_sign_premise() -> None:
    # -0 is below +0 nowhere, but a negative sign on a non-zero M is: RNE(-M) > RNE(M') fails for M <= M'
    alg = QueryAlgebra()
    m1, m2 = _ranged(alg, "M1", 0, SHAPE.mag_hi), _ranged(alg, "M2", 0, SHAPE.mag_hi)
    r1, r2 = SHAPE.rne(alg, alg.bvar("n1"), m1), SHAPE.rne(alg, alg.bvar("n2"), m2)
    goal = alg.le(value_key(alg, SHAPE.out, r2), value_key(alg, SHAPE.out, r1))  # RNE(M') <= RNE(M) ...
    r = solve(_script(alg, alg.or_(alg.not_(alg.lt(m1, m2)), alg.not_(goal))), ["n2"], solver="bitwuzla", timeout=60)
    assert r.verdict == "sat" and r.values["n2"] == 1  # ... happens only by a negative sign on M'


COMPOSITIONS = {label: (lambda label=label: position(SHAPE, label)) for label in ("c", "a0", "b1", "a3")}


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_a_composition_is_proved_consistent_and_needs_its_facts(name: str) -> None:
    assert_composition_sound(COMPOSITIONS[name]())


def _h(x: float) -> int:
    return from_fraction("fp16", x)


def _s(x: float) -> int:
    return from_fraction("fp32", x)


#: (position, inputs as patterns): the pieces' facts checked at these points
POINTS = [
    ("c", {"a0": _h(1.5), "a1": _h(2.0), "a2": 0, "a3": _h(65504), "b0": _h(3.0), "b1": _h(2.0 ** -24), "b2": _h(7.0),
           "b3": _h(65504), "c": _s(2.0 ** 100), "c_2": _s(2.0 ** 100) + 1}),  # c far above the products
    ("c", {"a0": 0x8000, "a1": 0, "a2": 0, "a3": 0, "b0": _h(1.0), "b1": 0, "b2": 0, "b3": 0, "c": 0x80000000,
           "c_2": 0}),  # every term -0, then c +0: D -0 to +0
    ("a0", {"a0": _h(2.0) - 1, "a1": _h(1.0), "a2": _h(1.0), "a3": _h(1.0), "b0": _h(3.0), "b1": _h(2.0 ** -14),
            "b2": _h(1.0), "b3": _h(1.0), "c": 1, "a0_2": _h(2.0)}),  # a's exponent field up, c the least subnormal
    ("b1", {"a0": _h(1.0), "a1": _h(5.0), "a2": _h(1.0), "a3": _h(1.0), "b0": _h(1.0), "b1": 0, "b2": _h(1.0),
            "b3": _h(1.0), "c": _s(1.0), "b1_2": 1}),  # a zero raised to the least subnormal
    ("a3", {"a0": _h(1.0), "a1": _h(1.0), "a2": _h(1.0), "a3": _h(1.25), "b0": _h(1.0), "b1": _h(1.0), "b2": _h(1.0),
            "b3": _h(3.0), "c": _s(1.5 * 2.0 ** 127), "a3_2": _h(1.25) + 1}),  # s + 1, the sum overflowing to +inf
]


@pytest.mark.parametrize("name, point", POINTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(POINTS)])
def test_every_asserted_fact_holds_of_the_pieces_themselves(name: str, point: dict[str, int]) -> None:
    assert_facts_hold_at(COMPOSITIONS[name](), point)


def test_a_reversed_move_is_outside_the_premise() -> None:
    comp = COMPOSITIONS["a0"]()
    ap = comp.apps
    alg = ap.alg
    point = dict(POINTS[2][1], a0=_h(2.0), a0_2=_h(2.0) - 1)  # a lowered, not raised
    for v, bits in point.items():
        alg.assert_(alg.eq(ap.inputs[v], bits))
    assert solve(_script(alg, alg.not_(alg.all(comp.premise))), solver="bitwuzla", timeout=60).verdict == "unsat"
