"""Order independence by transpositions: kernel lemmas (define-funs proved on fresh constants) applied to the model's runs."""

from __future__ import annotations

import re
from typing import Sequence

import pytest

from smtmma.catalogue import model_of
from smtmma.proofs import Context
from smtmma.proofs.certificate import Certificate, recheck
from smtmma.proof_kernel import Arg, lemma
from smtmma.proofs.check_certificate import check_text
from smtmma.proofs.transpositions import transposition_proofs
from smtmma.queries.query_algebra import QueryAlgebra
from smtmma.queries.backends import solve
from smtmma.proof_kernel.parts import ranged_var as _ranged

CTX = Context(solver="bitwuzla", timeout=60)


def _commute(A: QueryAlgebra, v: Sequence[Arg]) -> object:
    return A.eq(A.add(v[0], v[1]), A.add(v[1], v[0]))  # type: ignore[arg-type]


def _off_by_one(A: QueryAlgebra, v: Sequence[Arg]) -> object:
    return A.eq(A.add(v[0], v[1]), A.add(A.add(v[1], v[0]), 1))  # type: ignore[arg-type]


def _args() -> tuple[QueryAlgebra, list[Arg]]:
    alg = QueryAlgebra()
    return alg, [_ranged(alg, "x", -5, 300), _ranged(alg, "y", -5, 300)]


def test_a_true_statement_is_a_function_proved_on_fresh_constants_and_applied_to_the_arguments() -> None:
    alg, args = _args()
    lem = lemma("x + y = y + x", _commute, args)  # type: ignore[arg-type]
    assert f"(declare-const {lem.name}.a0 " in lem.script() and f"(declare-const {lem.name}.a1 " in lem.script()
    assert "(bvsle (_ bv" in lem.definition  # the arguments' ranges are the lemma's premise
    assert solve(lem.script(), (), solver="bitwuzla", timeout=30).verdict == "unsat"
    assert lem.apply(alg, args) == f"({lem.name} {alg.term_text(args[0])} {alg.term_text(args[1])})"
    assert lemma("x + y = y + x", _commute, args).name == lem.name  # equal statements, equal names


def test_a_false_statement_gives_a_lemma_the_solver_refutes() -> None:
    alg, args = _args()
    lem = lemma("x + y = y + x + 1", _off_by_one, args)  # type: ignore[arg-type]
    assert solve(lem.script(), (), solver="bitwuzla", timeout=30).verdict == "sat"


def test_an_argument_outside_the_lemma_range_is_refused() -> None:
    alg, args = _args()
    lem = lemma("x + y = y + x", _commute, args)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="spans"):
        lem.apply(alg, [args[0], _ranged(alg, "z", -10, 7)])
    with pytest.raises(ValueError, match="1 arguments for 2 parameters"):
        lem.apply(alg, [args[0]])


# K=4 (16 s) repeats what CI re-checks in the shipped accumulation-order-model (sm70, K=4, z3): -m slow
@pytest.mark.parametrize("K", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_sm70_transpositions_are_proved_and_the_certificate_rechecks_with_z3(K: int) -> None:
    found = transposition_proofs(model_of("sm70", "f16f32"), K, CTX)
    assert [f.verdict for f in found] == ["unsat"] * len(found)
    chains = [f for f in found if "(check-sat)" in f.script]
    assert len(chains) == K - 1  # one chain per adjacent transposition; the rest are fresh-variable lemmas
    for f in chains:  # K + 1 summands, the swap, the tail, the rounding: each an application of a proved lemma
        assert len(re.findall(r"^\(assert \(lemma_\w+ ", f.script, re.M)) == K + 4
    blocks = [f.block for f in found if f.block is not None]
    cert = Certificate({"claim": "test"}, blocks)
    ok, why = check_text(cert.text(), structure_only=True)
    assert ok, why
    answers = recheck(cert, solver="z3", timeout=60)
    assert answers and all(a.agrees for a in answers), [(a.label, a.expected, a.got) for a in answers]


def test_other_fused_sums_are_refused() -> None:
    with pytest.raises(ValueError, match="plain T-FDPA"):
        transposition_proofs(model_of("gfx908", "f16f32"), 4, CTX)
