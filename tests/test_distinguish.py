"""distinguish: witnesses that tell models apart (replayed through the simulator), proofs of equivalence, domains."""

from __future__ import annotations

import pytest

import smtmma
from smtmma.errors import InputError
from smtmma.queries.backends import available
from smtmma.queries.distinguish import distinguish, replay, ulp_distance
from smtmma.queries.formula import Domain, parse_domain

pytestmark = pytest.mark.skipif(not available(), reason="no SMT backend installed")


def M(arch: str, instr: str = "f16f32", op: str | None = None) -> smtmma.Model:
    return smtmma.lookup(arch, instr, op).model


def test_ampere_and_hopper_differ_and_the_witness_replays() -> None:
    r = distinguish([M("sm80"), M("sm90")], ["sm80", "sm90"], K=16, timeout=300)
    assert r.verdict == "sat"
    assert r.witness is not None and len(r.witness.a) == 16
    got = replay([M("sm80"), M("sm90")], r.witness)
    assert got == [r.outputs["sm80"], r.outputs["sm90"]] and got[0] != got[1]


def test_identical_models_are_proved_equivalent() -> None:
    r = distinguish([M("sm80"), M("sm86")], ["sm80", "sm86"], K=16)
    assert r.verdict == "unsat"
    assert "equivalent on this domain (finite inputs, K=16)" in r.reason


def test_f_differs_by_one_bit_inside_a_small_domain() -> None:
    base = M("sm80")
    dom = parse_domain("exp=-4:4,cexp=-4:4,lanes=3")
    r = distinguish([base, base.replace(F=23)], K=8, domain=dom, timeout=300)
    assert r.verdict == "sat"
    w = r.witness
    assert w is not None and all(x & 0x7FFF == 0 for x in w.a[3:])  # lanes >= 3 are zero
    for x in w.a[:3]:
        e = (x >> 10) & 0x1F
        assert x & 0x7FFF == 0 or -4 <= max(e, 1) - 15 <= 4


def test_fixed_lanes_are_respected() -> None:
    r = distinguish([M("sm80"), M("sm90")], K=16, domain=parse_domain("a0=0x3c00,c=0"), timeout=300)
    assert r.verdict == "sat" and r.witness is not None
    assert r.witness.a[0] == 0x3C00 and r.witness.c == 0


def test_many_models_group_the_equivalent_ones() -> None:
    names = ["sm70", "sm75", "sm80", "sm90", "sm100"]
    r = distinguish([M(a) for a in names], names, K=16, timeout=600)
    assert r.classes == [["sm70"], ["sm75", "sm80"], ["sm90", "sm100"]]
    assert r.verdict == "sat"
    assert len({r.outputs["sm70"], r.outputs["sm80"], r.outputs["sm90"]}) == 3
    assert r.outputs == dict(zip(names, replay([M(a) for a in names], r.witness)))


def test_many_models_all_different_inside_a_domain() -> None:
    names = ["sm70", "sm75", "sm90", "gfx908", "gfx942"]
    dom = parse_domain("a0=0x3c00,lanes=8,nonneg")
    r = distinguish([M(a) for a in names], names, K=16, domain=dom, timeout=300)
    assert r.verdict == "sat" and not r.classes and r.witness is not None
    w = r.witness
    assert w.a[0] == 0x3C00 and all(x == 0 for x in w.a[8:] + w.b[8:])
    assert all(x < 0x8000 for x in w.a + w.b) and w.c < 0x80000000
    got = replay([M(a) for a in names], w)
    assert got == [r.outputs[n] for n in names] and len(set(got)) == len(names)


def test_equivalent_models_that_are_not_identical_need_the_solver() -> None:
    # An alignment floor at 2**-133 never acts on FP16 products (>= 2**-48): equivalent, but not the same Model.
    floored = M("sm90").replace(emax_floor=-133)
    r = distinguish([M("sm70"), M("sm90"), floored], ["sm70", "sm90", "floored"], K=16, timeout=300)
    assert r.classes == [["sm70"], ["sm90", "floored"]]
    assert r.verdict == "sat" and r.outputs["sm90"] == r.outputs["floored"] != r.outputs["sm70"]


def test_mutants_stay_inside_the_domain() -> None:
    import numpy as np
    from smtmma.queries.pool import OperandFormats, distinct_outputs, draw_pool, mutate, restrict
    f = OperandFormats.of(M("sm90"))
    dom = parse_domain("exp=-3:3,lanes=5,a-,b2=0x4000")
    rng = np.random.default_rng(1)
    kids = mutate(draw_pool(f, 16, 256, rng, dom), f, 4096, rng, dom)
    assert len(kids) > 0 and len(restrict(kids, f, dom)) == len(kids)
    assert (kids.b[:, 2] == 0x4000).all() and (kids.a[:, 5:] == 0).all()
    assert distinct_outputs(np.array([[1, 2, 3], [1, 3, 3], [2, 2, 3]], dtype=np.uint64)).tolist() == [2, 2, 1]


def test_bad_requests() -> None:
    with pytest.raises(InputError, match="at least two models"):
        distinguish([M("sm80")])
    with pytest.raises(InputError, match="different operand formats"):
        distinguish([M("sm80"), M("sm80", "bf16f32")])
    with pytest.raises(InputError, match="bad item 'lanes=0'"):
        parse_domain("lanes=0")
    with pytest.raises(InputError, match="empty exponent range"):
        parse_domain("exp=3:1")


def test_domain_description_states_every_restriction() -> None:
    d = parse_domain("normal,exp=-8:8,cexp=0:30,lanes=4,nonneg,a0=0x3c00")
    assert d.describe() == (
        "finite inputs, no subnormals, exponents of a,b in [-8, 8], exponent of c in [0, 30], "
        "only lanes 0..3 non-zero, non-negative a, b, c, a0=0x3c00"
    )
    assert Domain().describe() == "finite inputs"


def test_ulp_distance() -> None:
    assert ulp_distance("fp32", 0x3F800000, 0x3F800002) == 2
    assert ulp_distance("fp32", 0x80000000, 0x00000000) == 0
    assert ulp_distance("fp32", 0x80000001, 0x00000001) == 2
    assert ulp_distance("e8m13", 0x3F800000, 0x7FFFFFFF) is None


def test_operand_signs_restrict_the_witness() -> None:
    """a <= 0, b >= 0, c <= 0: every product and c are non-positive, so the witness has no cancellation."""
    dom = parse_domain("a-,b+,c-")
    assert dom.signs == (("a", "-"), ("b", "+"), ("c", "-"))
    assert dom.describe() == "finite inputs, non-positive a, non-negative b, non-positive c"
    r = distinguish([M("sm80"), M("sm80").replace(F=23)], K=8, domain=dom, timeout=300)
    assert r.verdict == "sat" and r.witness is not None
    w = r.witness
    assert all(x >> 15 == 1 or x == 0 for x in w.a) and all(x >> 15 == 0 for x in w.b)
    assert w.c >> 31 == 1 or w.c == 0


def test_contradictory_signs_are_refused() -> None:
    with pytest.raises(InputError, match="a\\+ and a- together leave only zeros"):
        parse_domain("a+,a-")


def test_fma_nan_style_twins_are_equivalent_on_finite_inputs_by_induction() -> None:
    """sm90's DMMA (nan=propagate) and sm80's (canonical NaN): no finite input tells them apart, at any K; a NaN does."""
    from smtmma.catalogue import model_of

    m80, m90 = model_of("sm80", "f64f64"), model_of("sm90", "f64f64")
    r = distinguish([m80, m90], ["sm80", "sm90"], K=16, timeout=60)
    assert r.verdict == "unsat" and "induction on the FMA chain" in r.reason and r.K == 16
    r = distinguish([m80, m90], ["sm80", "sm90"], K=4, domain=Domain(specials=True), timeout=60)
    assert r.verdict == "sat" and r.witness is not None
    assert replay([m80, m90], r.witness) == [r.outputs["sm80"], r.outputs["sm90"]]
    assert r.outputs["sm80"] == 0x7FF8000000000000 != r.outputs["sm90"]
