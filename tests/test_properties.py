"""Property queries: exact verdicts for the literature's claims, witnesses replayed and re-checked here too.

Every "fails" witness is replayed through the simulator by the library;
these tests replay it again with :func:`smtmma.simulate_dot` and check the
claimed failure in exact arithmetic, so a test never trusts the solver.
CI runs the fast cases with the default backend; ``-m slow`` runs the
larger ones (Hopper's 16-term symmetry and order independence).
"""

from __future__ import annotations

import re

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import smtmma
from smtmma.encodings.fields import unpack
from smtmma.errors import InputError, UnknownNameError
from smtmma.formats import get_format, to_fraction
from smtmma.queries.query_algebra import InputSet, QueryAlgebra, fused_parts, neg_pattern
from smtmma.queries.backends import available, solve
from smtmma.queries.distinguish import Witness
from smtmma.queries.formula import Domain, parse_domain
from smtmma.proofs.certificate import Certificate, recheck
from smtmma.queries.properties import PROPERTIES, QueryResult, check_property

pytestmark = pytest.mark.skipif(not available(), reason="no SMT backend installed")

def M(arch: str, instr: str = "f16f32", op: str | None = None) -> smtmma.Model:
    return smtmma.lookup(arch, instr, op).model


def sim(model: smtmma.Model, w: Witness) -> int:
    sa = np.array([w.scale_a], dtype=np.uint64) if w.scale_a is not None else None
    sb = np.array([w.scale_b], dtype=np.uint64) if w.scale_b is not None else None
    return int(smtmma.simulate_dot(model, None, np.array([w.a], dtype=np.uint64), np.array([w.b], dtype=np.uint64),
                                   np.array([w.c], dtype=np.uint64), scale_a=sa, scale_b=sb)[0])


def value(fmt: str, bits: int) -> object:
    v = to_fraction(fmt, bits)
    return {"inf": float("inf"), "-inf": float("-inf")}.get(v, v) if isinstance(v, str) else v  # type: ignore[arg-type]


def test_registry_and_dispatch() -> None:
    assert list(PROPERTIES) == ["symmetry", "monotonicity", "carry-bits", "error-bound", "order-independence", "custom"]
    with pytest.raises(UnknownNameError, match="unknown property 'symetry'; did you mean symmetry\\? valid: symmetry, monotonicity, carry-bits"):
        check_property("symetry", M("sm80"))
    with pytest.raises(InputError, match="symmetry has no option 'tight'; its options: lemmas"):
        check_property("symmetry", M("sm80"), tight=True)
    with pytest.raises(InputError, match="carry-bits: fma has no carry-bit parameter"):
        check_property("carry_bits", M("gfx942", "f32f32"))
    with pytest.raises(InputError, match="K must be at most L=8"):
        check_property("carry-bits", M("sm80"), K=16)
    chained = smtmma.models.parse_model_spec("tr-fdpa:c_after", M("gfx942"))  # a valid model no prover covers
    uncovered = check_property("error-bound", chained)
    assert uncovered.verdict == "unknown" and uncovered.solver == "none" and uncovered.reason == (
        "not covered: no Table 9 bound is implemented for tr-fdpa:L=8,F=24,F2=31,rho=rne-fp32,c_after: "
        "the error parts of adding C after the rounded fused sum (a second rounding) are missing")
    with pytest.raises(InputError, match="custom needs predicate="):
        check_property("custom", M("sm80"))


# -- symmetry -------------------------------------------------------------------------------------


def test_ampere_tfdpa_is_symmetric() -> None:
    r = check_property("symmetry", M("sm80"), name="sm80", K=4)
    assert isinstance(r, QueryResult)
    assert (r.property, r.verdict, r.name, r.K, r.witness) == ("symmetry", "holds", "sm80", 4, None)
    # 5 decodings of negated inputs, the common e_max, 5 summands, 5 running sums, the fused sum
    assert r.extra["lemmas"] == 17
    assert "(push 1)" in r.smt2 and r.smt2.count("(check-sat)") == 18  # 17 lemmas, then the property
    # each lemma is checked under the lemmas it names only: running sum 1 under summand 1 and running sum 0
    scope = r.smt2.split("; lemma 10: running sum 1 of the negated inputs is minus running sum 1")[1].split("(pop 1)")[0]
    assert "(uses: 8, 9)" in scope and scope.count("(assert") == 3  # two premises, the negated goal


@pytest.mark.slow
def test_ampere_symmetry_certificate_stands_alone() -> None:
    """The file stands alone: another backend gives every expected answer (z3: ~30 s, hence slow)."""
    r = check_property("symmetry", M("sm80"), name="sm80", K=4)
    other = "z3" if r.solver != "z3" else "bitwuzla"
    answers = recheck(Certificate({"claim": "sm80 symmetry"}, body=r.smt2), solver=other, timeout=120)
    assert [a.got for a in answers] == ["unsat"] * 18


@pytest.mark.skipif("bitwuzla" not in available(), reason="bitwuzla: the group-scaled FP4 chain")
def test_group_scaled_fp4_sum_is_symmetric() -> None:
    """GST-FDPA (Alg. 9): the chain goes through each group's dot product and its scaled significand (nvf4: ue4m3 scales)."""
    m = M("sm100", "nvf4f32", "tcgen05")
    r = check_property("symmetry", m, name="nvf4", K=16, solver="bitwuzla", timeout=120)
    assert r.verdict == "holds"
    assert "group 0's scaled summand of the negated inputs has the same significand" in r.smt2
    assert r.smt2.count("(check-sat)") == r.extra["lemmas"] + 1  # type: ignore[operator]


def test_fma_chain_is_symmetric_step_by_step() -> None:
    """Alg. 4 (a chain of K FMAs): each FMA's exact sum of the negated inputs keeps its magnitude, last place and sticky
    bit and its RNE its fields (two lemmas on fresh constants, each applied at both FMAs), its D decodes to D's fields
    with the sign flipped, and that is the next FMA's c (K=2 fp16)."""
    m = smtmma.Model("fma", "fp16", "fp16", "fp16", "fp16")
    r = check_property("symmetry", m, K=2, timeout=120)
    assert r.verdict == "holds" and r.extra["lemmas"] == 8  # 2 lemmas; 3 decodings, D per FMA, -D
    names = re.findall(r"^; lemma (lemma_\w+): ", r.smt2, re.M)
    assert len(names) == 2 and all(r.smt2.count(f"(assert ({n} ") == 2 for n in names)  # each applied at both FMAs
    assert "; lemma 5: FMA 2: D of the negated run decodes to the fields of D, sign flipped (unless zero or NaN) (uses: 2, 4)" in r.smt2
    assert r.smt2.count("(check-sat)") == 9


def test_exact_fdpa_is_symmetric_through_its_exact_sum() -> None:
    """E-FDPA (Alg. 6, CDNA1 f16f32): each placed summand and running sum of the negated inputs is negated, then D."""
    r = check_property("symmetry", M("gfx908", "f16f32"), K=2, timeout=120)
    assert r.verdict == "holds"
    labels = [x for x in r.smt2.splitlines() if x.startswith("; lemma")]
    assert any("placed summand 2 of the negated inputs is minus placed summand 2" in x for x in labels)  # c, last
    assert labels[-2].startswith(f"; lemma {len(labels) - 1}: the E-FDPA: D of the negated run decodes to the fields of D")
    assert labels[-1].startswith(f"; lemma {len(labels)}: D of the negated inputs is minus D, as values")


def test_chained_fdpas_with_c_added_last_are_symmetric() -> None:
    """Hopper's FP8 mma (Alg. 5: lanes converted to fp16, two interleaved FDPAs, C added last by an RNE add): each
    lane's conversion, each FDPA's fused sum and D, and the last add (two lemmas on fresh constants, applied) are
    proved negated in turn (K=2)."""
    m = M("sm90", "e4m3e4m3f32", "mma")
    assert m.c_after and m.via == "fp16" and m.interleave == 2
    r = check_property("symmetry", m, K=2, timeout=120)
    assert r.verdict == "holds"
    assert "; lemma 4: lane 0: a converted to fp16 (as the unit reads it) of the negated run decodes to the fields of a" in r.smt2
    assert "FDPA 2 of lanes 0-1: the negated inputs align at the same e_max" in r.smt2
    assert "; lemma lemma_" in r.smt2 and "an RNE add (C added last): the exact sum of two operands, each negated" in r.smt2
    assert "C added last: D of the negated run decodes to the fields of D, sign flipped" in r.smt2


@pytest.mark.slow
def test_chained_fdpas_rounding_down_are_not_symmetric() -> None:
    """The same chain with RD-FP32 conversions: a fact fails, the chain stops, and the query finds a witness, replayed."""
    m = M("sm90", "e4m3e4m3f32", "mma").replace(rho="rd-fp32")
    r = check_property("symmetry", m, K=2, timeout=120)
    assert r.verdict == "fails" and r.witness is not None
    fa, fc = get_format(m.a_fmt), get_format(m.c_fmt)
    wn = Witness(tuple(neg_pattern(fa, x) for x in r.witness.a), r.witness.b, neg_pattern(fc, r.witness.c))
    d, dn = sim(m, r.witness), sim(m, wn)
    assert r.outputs == {"d": d, "d_neg": dn} and value("fp32", dn) != -value("fp32", d)  # type: ignore[operator]


def test_chained_fdpas_are_not_monotone_the_first_result_crossing_a_power_of_two() -> None:
    """002 §3.1.4 on the chain's own accumulator (Hopper FP8 mma, Alg. 5): the first FDPA sums exactly to 256 - 2^-16,
    one lane's b raised lifts it to 256, and the second FDPA's 16 products of 2^-18 then truncate away: D drops from
    256 + 2^-15 to 256.  The simulator finds it, the solver confirms it, and it is replayed here."""
    m = M("sm90", "e4m3e4m3f32", "mma")
    r = check_property("monotonicity", m, K=32, timeout=120)
    assert r.verdict == "fails" and r.witness is not None and r.extra["raised"] == "b0"
    w = r.witness
    w2 = Witness(w.a, tuple(int(x, 16) for x in r.extra["larger"]["b"]), w.c)  # type: ignore[index]
    assert [i for i, (x, y) in enumerate(zip(w.b, w2.b)) if x != y] == [0] and w2.b[0] == w.b[0] + 1
    e4 = get_format("e4m3")
    first = sum(to_fraction(e4, w.a[k]) * to_fraction(e4, w.b[k]) for k in range(32) if (k // 2) % 2 == 0)
    second = [to_fraction(e4, w.a[k]) * to_fraction(e4, w.b[k]) for k in range(32) if (k // 2) % 2 == 1]
    assert first == 256 - Fraction(1, 2**16) and second == [Fraction(1, 2**18)] * 16
    assert (sim(m, w), sim(m, w2)) == (0x43800001, 0x43800000) == (r.outputs["d"], r.outputs["d_larger"])


@pytest.mark.slow
def test_ftz_addmul_is_symmetric_op_by_op() -> None:
    """FTZ-AddMul (Alg. 2, CDNA2): every FTZ-Mul and FTZ-Add of the negated inputs is negated; two infinite products
    of opposite signs give the same NaN in both runs, so the adder's facts hold where the operands are finite."""
    r = check_property("symmetry", M("gfx90a", "bf16f32"), K=2, timeout=120)
    assert r.verdict == "holds" and r.extra["lemmas"] == 21
    assert "; lemma 5: product 0 (FTZ-Mul): D of the negated run decodes to the fields of D" in r.smt2
    assert "; lemma 21: D of the negated inputs is minus D, as values (uses: 20)" in r.smt2


@pytest.mark.parametrize("instr", ["f16f32", "fp8fp8f32"])
def test_cdna3_round_down_is_asymmetric(instr: str) -> None:
    m = M("gfx942", instr)
    r = check_property("symmetry", m, name="gfx942")
    assert r.verdict == "fails" and r.witness is not None
    w = r.witness
    fa, fc = get_format(m.a_fmt), get_format(m.c_fmt)
    wn = Witness(tuple(neg_pattern(fa, x) for x in w.a), w.b, neg_pattern(fc, w.c))
    d, dn = sim(m, w), sim(m, wn)
    assert r.outputs == {"d": d, "d_neg": dn}
    assert value("fp32", dn) != -value("fp32", d)  # type: ignore[operator]
    if instr == "fp8fp8f32":  # FNUZ: 0x80 is NaN, so negation never makes it
        assert 0x80 not in wn.a


@pytest.mark.slow
@pytest.mark.parametrize("arch, K", [("sm80", 8), ("sm90", 16), ("sm100", 16)])
def test_nvidia_tfdpa_is_symmetric_for_one_full_fdpa(arch: str, K: int) -> None:
    r = check_property("symmetry", M(arch), K=K, timeout=600)
    assert r.verdict == "holds"


def test_negating_a_pattern_decodes_like_the_negated_pattern() -> None:
    """The shortcut of QueryAlgebra (a negated pattern reuses the fields) against plain decoding, for every pattern."""
    for name in ("fp16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m1"):
        fmt = get_format(name)
        alg = QueryAlgebra()
        x = alg.var("x", fmt.bits)
        fast = unpack(alg, fmt, alg.negate(x, fmt))
        # the same negation written arithmetically, decoded without the shortcut
        flipped = alg.ite(alg.lt(x, fmt.sign_mask), alg.add(x, fmt.sign_mask), alg.sub(x, fmt.sign_mask))
        if fmt.nan == "neg_zero":
            flipped = alg.ite(alg.eq(alg.low_bits(x, fmt.bits - 1), 0), x, flipped)
        plain = unpack(alg, fmt, alg.min(flipped, (1 << fmt.bits) - 1))
        fields = ("neg", "exp", "sig", "is_zero", "is_inf", "is_nan")
        same = [alg.eq(getattr(fast, f), getattr(plain, f)) if f in ("exp", "sig") else
                alg.not_(alg.xor(getattr(fast, f), getattr(plain, f))) for f in fields]
        r = solve(alg.script(f"(assert (not {alg.raw_bool(alg.all(same))}))"), ["x"])
        assert r.verdict == "unsat", (name, r)
        assert all(neg_pattern(fmt, neg_pattern(fmt, v)) == v for v in range(1 << fmt.bits))


def test_fused_parts_are_the_models_own_sums() -> None:
    """The rebuilt running sums end in truncated_sum's total (same definitions, so the same terms)."""
    m = M("sm90")
    alg = QueryAlgebra()
    x = InputSet.of(alg, m, 16)
    p = fused_parts(alg, m, x.a, x.b, x.c)
    assert p.prefix[-1].raw == p.total.raw and len(p.aligned) == 17


# -- monotonicity ---------------------------------------------------------------------------------


def test_volta_truncation_is_not_monotonic() -> None:
    """Fasi et al. §3.1.4: raising c to the next value can lower the output."""
    m = M("sm70")
    r = check_property("monotonicity", m, name="sm70")
    assert r.verdict == "fails" and r.witness is not None
    assert r.domain.nonneg and not r.domain.specials
    w = r.witness
    larger = r.extra["larger"]
    assert isinstance(larger, dict)
    w2 = Witness(tuple(int(h, 16) for h in larger["a"]), tuple(int(h, 16) for h in larger["b"]), int(larger["c"], 16))
    for fmt, lo, hi in [("fp32", w.c, w2.c)] + [("fp16", u, v) for u, v in zip(w.a + w.b, w2.a + w2.b)]:
        assert 0 <= value(fmt, lo) <= value(fmt, hi)  # type: ignore[operator]
    d, d2 = sim(m, w), sim(m, w2)
    assert r.outputs == {"d": d, "d_larger": d2}
    assert value("fp32", d2) < value("fp32", d)  # type: ignore[operator]


FP4_EXACT = smtmma.Model("e-fdpa", "e2m1", "e2m1", "fp16", "fp16", L=2)
FP4_TRUNCATED = smtmma.Model("t-fdpa", "e2m1", "e2m1", "fp16", "fp16", L=2, F=6, rho="rne-fp16")


def test_an_exact_sum_rounded_once_is_monotonic() -> None:
    """E-FDPA's facts on the model's own terms on the full domain (36 lemmas and facts at K = 1, the ring steps' wide
    forms among them, one chain ending with the query's statement); with c fixed, every single move of a and b proved harmless on its own.  The FP4 formats
    end in 0x7 (6.0): its next pattern 0x8 is -0, not larger."""
    r = check_property("monotonicity", FP4_EXACT, K=1)
    assert (r.verdict, r.extra["lemmas"]) == ("holds", 36) and not r.blocks
    assert (r.smt2 or "").rstrip().endswith("; expect: unsat\n(check-sat)")
    r = check_property("monotonicity", FP4_EXACT, K=1, domain=Domain(fixed=(("c", 0),)))
    assert (r.verdict, r.extra["queries"]) == ("holds", 2)


def test_the_same_sum_truncated_before_normalizing_is_not() -> None:
    m = FP4_TRUNCATED
    r = check_property("monotonicity", m, K=2)
    assert r.verdict == "fails" and r.witness is not None and r.extra["raised"] == "c"
    larger = r.extra["larger"]
    assert isinstance(larger, dict)
    w2 = Witness(r.witness.a, r.witness.b, int(larger["c"], 16))
    assert value("fp16", w2.c) > value("fp16", r.witness.c)  # type: ignore[operator]
    assert value("fp16", sim(m, w2)) < value("fp16", sim(m, r.witness))  # type: ignore[operator]


@pytest.mark.slow
def test_an_exact_sum_of_two_products_is_monotonic() -> None:
    assert check_property("monotonicity", FP4_EXACT, K=2, timeout=600).verdict == "holds"


@pytest.mark.slow
@pytest.mark.parametrize("arch, instr, op", [("sm80", "f16f32", None), ("sm90", "f16f32", None), ("sm89", "e4m3f32", None),
                                             ("sm100", "e4m3f32", "tcgen05")])
def test_unnormalized_truncated_sums_are_not_monotonic(arch: str, instr: str, op: str | None) -> None:
    r = check_property("monotonicity", M(arch, instr, op), timeout=600)
    assert r.verdict == "fails"


# -- carry bits -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arch, instr, op, K, bits",
    [
        ("sm70", "f16f32", None, 4, 3),  # 5 summands: 3 carry bits (001 §4, Table 4)
        ("sm80", "f16f32", None, 8, 4),  # 9 summands: 4 (the paper's query timed out after 6 h)
        ("sm90", "f16f32", None, 16, 5),  # 17 summands: 5
        # 33 summands, but e4m3 significands are at most 1.875: products < 3.52, |S| < 32 * 3.52 + 2 < 2**7
        ("sm100", "e4m3f32", "tcgen05", 32, 5),
    ],
)
def test_carry_bits_needed_by_one_fdpa(arch: str, instr: str, op: str | None, K: int, bits: int) -> None:
    m = M(arch, instr, op)
    r = check_property("carry-bits", m, name=arch, K=K)
    assert (r.verdict, r.extra["carry_bits"], r.extra["summands"]) == ("holds", bits, K + 1)
    w = r.witness
    assert w is not None  # the input on which one carry bit fewer loses a carry
    short, unbounded = sim(m.replace(carry_bits=bits - 1), w), sim(m.replace(carry_bits=None), w)
    assert r.outputs == {f"d_carry{bits - 1}": short, "d_unbounded": unbounded} and short != unbounded
    assert sim(m.replace(carry_bits=bits), w) == unbounded


def test_carry_bits_of_a_short_dot_product() -> None:
    r = check_property("carry-bits", M("sm80"), K=1)  # one product and c: |S| < 4 + 2
    assert r.extra["carry_bits"] == 1


# -- error bound ----------------------------------------------------------------------------------

SMALL = parse_domain("exp=-2:2,cexp=-2:2")


SCOPE_TAIL = ", K=2; a NaN or infinite D is outside the bound"


def test_table9_bound_holds_for_ampere_with_the_scope_its_proof_has() -> None:
    # NaN/Inf inputs may be asked for, but the proof is about finite inputs and outputs: the scope says so
    dom = parse_domain("specials,exp=-2:2,cexp=-2:2")
    r = check_property("error-bound", M("sm80"), K=2, domain=dom)
    assert r.verdict == "holds" and "proof" not in r.extra and r.extra["lemmas"] == 17  # facts on the model's terms
    assert r.extra["bound"] == "3*2^(e_max-24) + 1 ulp(fp32)"
    assert r.extra["scope"] == f"every input of the domain ({dom.describe()}) whose D is finite" + SCOPE_TAIL
    assert r.reason == f"|Phi - exact| <= 3*2^(e_max-24) + 1 ulp(fp32) for {r.extra['scope']}"


@pytest.mark.slow
def test_error_bound_without_lemmas_states_its_formulas_scope() -> None:
    # one formula over the domain asked (35 s): its inputs may be NaN/Inf, its outputs are finite
    dom = parse_domain("specials,exp=-1:1,cexp=-1:1,lanes=1")
    r = check_property("error-bound", M("sm80"), K=2, domain=dom, lemmas=False, timeout=300)
    assert r.verdict == "holds" and "proof" not in r.extra
    assert r.extra["scope"] == f"every input of the domain ({dom.describe()}) whose D is finite" + SCOPE_TAIL


def test_half_the_table9_bound_fails_with_an_exact_witness() -> None:
    m = M("sm80")
    r = check_property("error-bound", m, K=2, domain=SMALL, scale="1/2")
    assert r.verdict == "fails" and r.witness is not None
    w = r.witness
    d = sim(m, w)
    assert r.outputs == {"d": d}
    exact = sum((Fraction(to_fraction("fp16", x)) * Fraction(to_fraction("fp16", y)) for x, y in zip(w.a, w.b)), Fraction(0))
    exact += Fraction(to_fraction("fp32", w.c))
    # the bound from scratch: e_max over the non-zero summands, ulp of the FP32 result
    exps = [max((x >> 10) & 31, 1) + max((y >> 10) & 31, 1) - 30 for x, y in zip(w.a, w.b) if x & 0x7FFF and y & 0x7FFF]
    if w.c & 0x7FFFFFFF:
        exps.append(max((w.c >> 23) & 255, 1) - 127)
    e_max = max(exps)
    ulp = Fraction(2) ** (max(((d >> 23) & 255), 1) - 127 - 23)
    bound = 3 * Fraction(2) ** (e_max - 24) + ulp
    err = abs(Fraction(to_fraction("fp32", d)) - exact)
    assert bound / 2 < err
    assert Fraction(r.extra["ratio"]) == err / bound  # type: ignore[arg-type]


def test_ftz_addmul_has_no_bound_of_table9s_form_a_flushed_input_loses_its_product() -> None:
    # Table 9 has no FTZ-AddMul row; the posed form (K + 1 units of FP32's last place at e_max, plus 1/2 ulp) fails:
    # a subnormal input is flushed to +0 (ftz_inputs), so D misses that whole product
    m = M("gfx90a", "f16f32")
    r = check_property("error-bound", m)
    assert r.verdict == "fails" and r.witness is not None and r.K == 4
    assert r.extra["posed"].startswith("Table 9 has no FTZ-AddMul row: one FDPA's form, F = 23")
    w = r.witness
    d = sim(m, w)
    assert r.outputs == {"d": d}
    exact = sum((Fraction(to_fraction("fp16", x)) * Fraction(to_fraction("fp16", y)) for x, y in zip(w.a, w.b)), Fraction(0))
    exact += Fraction(to_fraction("fp32", w.c))
    assert exact != 0 and to_fraction("fp32", d) == 0  # the flushed product is the whole error
    assert any((x & 0x7C00) == 0 and x & 0x3FF for x in (*w.a, *w.b))  # an fp16 subnormal input
    exps = [max((x >> 10) & 31, 1) + max((y >> 10) & 31, 1) - 30 for x, y in zip(w.a, w.b) if x & 0x7FFF and y & 0x7FFF]
    bound = 5 * Fraction(2) ** (max(exps) - 23) + Fraction(1, 2) * Fraction(2) ** -149  # ulp of D = 0
    assert Fraction(r.extra["ratio"]) == abs(exact) / bound > 10 ** 6  # type: ignore[arg-type]


def test_error_bound_rejects_a_bad_scale() -> None:
    with pytest.raises(InputError, match="scale must be >= 0"):
        check_property("error-bound", M("sm80"), K=2, scale=-1)


# -- order independence ---------------------------------------------------------------------------


@pytest.mark.parametrize("arch, instr, op, K", [("sm90", "f16f32", None, 16), ("sm100", "e4m3f32", "tcgen05", 32), ("gfx942", "f16f32", None, 8)])
def test_one_fdpa_does_not_depend_on_the_order_of_its_products(arch: str, instr: str, op: str | None, K: int) -> None:
    r = check_property("order-independence", M(arch, instr, op), K=K)
    assert (r.verdict, r.extra["transpositions"]) == ("holds", K - 1)


@pytest.mark.slow
def test_order_independence_without_canonical_sums_needs_the_solver() -> None:
    r = check_property("order-independence", M("sm80"), K=3, canonical=False)
    assert (r.verdict, r.extra["transpositions"], r.extra["identical_terms"]) == ("holds", 2, 0)


@pytest.mark.parametrize(
    "arch, instr, K, swap",
    [
        ("sm80", "f16f32", 16, (7, 8)),  # two chained FDPAs: a product moves from the first to the second
        ("gfx90a", "bf16f32", 4, (1, 2)),  # FTZ-AddMul, P = 2: a product moves to the other pair
        ("gfx942", "fp8fp8f32", 16, (1, 2)),  # GTR-FDPA: a product moves between the even and the odd group
    ],
)
def test_chained_and_pairwise_sums_depend_on_the_order(arch: str, instr: str, K: int, swap: tuple[int, int]) -> None:
    m = M(arch, instr)
    r = check_property("order-independence", m, K=K)
    assert r.K == K and r.verdict == "fails" and r.witness is not None
    perm = r.extra["permutation"]
    expect = list(range(K))
    expect[swap[0]], expect[swap[1]] = swap[1], swap[0]
    assert perm == expect
    w = r.witness
    wp = Witness(tuple(w.a[i] for i in perm), tuple(w.b[i] for i in perm), w.c)
    assert r.outputs == {"d": sim(m, w), "d_permuted": sim(m, wp)}
    assert r.outputs["d"] != r.outputs["d_permuted"]


# -- custom ---------------------------------------------------------------------------------------

NO_NAN = """
from smtmma.encodings.fields import unpack
from smtmma.formats import get_format


def predicate(alg, inputs, outputs):
    # finite inputs never give NaN
    return alg.not_(unpack(alg, get_format("fp32"), outputs["sm80"]).is_nan)
"""

NO_INF16 = """
def predicate(alg, inputs, outputs):
    (d,) = outputs.values()
    return alg.ne(alg.low_bits(d, 15), 0x7C00)  # |d| is not infinity
"""


def test_custom_predicate_that_holds(tmp_path: Path) -> None:
    f = tmp_path / "no_nan.py"
    f.write_text(NO_NAN)
    r = check_property("custom", M("sm80"), name="sm80", K=4, predicate=str(f))
    assert r.verdict == "holds"


def test_custom_predicate_that_fails_is_rechecked(tmp_path: Path) -> None:
    f = tmp_path / "no_inf.py"
    f.write_text(NO_INF16)
    m = M("sm80", "f16f16")
    r = check_property("custom", m, name="sm80", K=4, predicate=f)
    assert r.verdict == "fails" and r.witness is not None
    d = sim(m, r.witness)
    assert r.outputs == {"sm80": d} and d & 0x7FFF == 0x7C00


def test_custom_predicate_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def predicate(alg, inputs, outputs):\n    return 3\n")
    with pytest.raises(InputError, match="must return a Bool term"):
        check_property("custom", M("sm80"), K=2, predicate=str(bad))
    none = tmp_path / "none.py"
    none.write_text("x = 1\n")
    with pytest.raises(InputError, match="must define a function predicate"):
        check_property("custom", M("sm80"), K=2, predicate=str(none))
    with pytest.raises(InputError, match="does not exist"):
        check_property("custom", M("sm80"), K=2, predicate=str(tmp_path / "missing.py"))
    quits = tmp_path / "quits.py"
    quits.write_text("import sys\nsys.exit(0)\n")  # would have ended smtmma with status 0 and no output
    with pytest.raises(InputError, match="loading .* failed: SystemExit"):
        check_property("custom", M("sm80"), K=2, predicate=str(quits))


def test_custom_predicate_across_two_models() -> None:
    """A callable predicate over two models' outputs: Ampere and Hopper agree on every 2-term input? No."""
    r = check_property("custom", M("sm80"), name="sm80", K=2, predicate=lambda alg, i, o: alg.eq(o["sm80"], o["sm90"]),
                       models={"sm90": M("sm90")})
    assert r.verdict == "fails" and r.witness is not None
    assert r.outputs == {"sm80": sim(M("sm80"), r.witness), "sm90": sim(M("sm90"), r.witness)}
    assert r.outputs["sm80"] != r.outputs["sm90"]


def test_unknown_is_a_verdict_not_an_exception() -> None:
    r = check_property("symmetry", M("sm90"), K=16, timeout=0.01, lemmas=False)
    assert r.verdict == "unknown" and "gave up" in r.reason


def test_empty_domain_is_refused() -> None:
    from smtmma.queries.distinguish import EmptyDomainError

    with pytest.raises(EmptyDomainError):
        check_property("custom", M("sm80"), K=2, domain=Domain(fixed=(("c", 0x7F800000),)), predicate=lambda alg, i, o: alg.bconst(True))


def test_monotonicity_refuses_non_positive_operands() -> None:
    with pytest.raises(InputError, match="non-negative inputs; drop a-"):
        check_property("monotonicity", M("sm70"), K=4, domain=parse_domain("a-"))
