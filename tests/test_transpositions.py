"""Order independence by transpositions: fresh-variable lemmas (generalized) and their instances on the model's runs."""

from __future__ import annotations

from typing import Sequence

import pytest

from smtmma.catalogue import model_of
from smtmma.proofs import Context
from smtmma.proofs.certificate import Certificate, recheck
from smtmma.proofs.generalized import Arg, generalized
from smtmma.proofs.transpositions import transposition_proofs
from smtmma.queries._twins import QueryAlgebra
from smtmma.queries.backends import solve
from smtmma.queries.properties.error_parts import _ranged

CTX = Context(solver="bitwuzla", timeout=60)


def _commute(A: QueryAlgebra, v: Sequence[Arg]) -> object:
    return A.eq(A.add(v[0], v[1]), A.add(v[1], v[0]))  # type: ignore[arg-type]


def _off_by_one(A: QueryAlgebra, v: Sequence[Arg]) -> object:
    return A.eq(A.add(v[0], v[1]), A.add(A.add(v[1], v[0]), 1))  # type: ignore[arg-type]


def _args() -> tuple[QueryAlgebra, list[Arg]]:
    alg = QueryAlgebra()
    return alg, [_ranged(alg, "x", -5, 300), _ranged(alg, "y", -5, 300)]


def test_a_true_statement_is_proved_on_fresh_variables_and_its_instance_is_built_on_the_arguments() -> None:
    alg, args = _args()
    lem, inst = generalized(alg, "x + y = y + x", _commute, args)  # type: ignore[arg-type]
    assert "(declare-const x0 " in lem.script and "(declare-const x1 " in lem.script
    assert solve(lem.script, (), solver="bitwuzla", timeout=30).verdict == "unsat"
    assert inst.raw == _commute(alg, args).raw  # type: ignore[attr-defined]


def test_a_false_statement_gives_a_lemma_the_solver_refutes() -> None:
    alg, args = _args()
    lem, _ = generalized(alg, "x + y = y + x + 1", _off_by_one, args)  # type: ignore[arg-type]
    assert solve(lem.script, (), solver="bitwuzla", timeout=30).verdict == "sat"


def test_tied_arguments_share_one_variable_and_must_have_the_same_range() -> None:
    alg, args = _args()
    lem, _ = generalized(alg, "x + x = x + x", _commute, args, {1: 0})  # type: ignore[arg-type]
    assert "(declare-const x1 " not in lem.script
    z = _ranged(alg, "z", 0, 7)
    with pytest.raises(ValueError, match="cannot share"):
        generalized(alg, "ranges differ", _commute, [args[0], z], {1: 0})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="constant"):
        generalized(alg, "a constant", _commute, [args[0], alg.const(3)])  # type: ignore[arg-type]


@pytest.mark.parametrize("K", [2, 4])
def test_sm70_transpositions_are_proved_and_the_certificate_rechecks_with_z3(K: int) -> None:
    found = transposition_proofs(model_of("sm70", "f16f32"), K, CTX)
    assert [f.verdict for f in found] == ["unsat"] * len(found)
    chains = [f for f in found if "(check-sat)" in f.script]
    assert len(chains) == K - 1  # one chain per adjacent transposition; the rest are fresh-variable lemmas
    for f in chains:
        assert f.script.count("; instance of the lemma:") == K + 4  # K + 1 summands, the swap, the tail, the rounding
    blocks = [f.block for f in found if f.block is not None]
    answers = recheck(Certificate({"claim": "test"}, blocks), solver="z3", timeout=60)
    assert answers and all(a.agrees for a in answers), [(a.label, a.expected, a.got) for a in answers]


def test_other_fused_sums_are_refused() -> None:
    with pytest.raises(ValueError, match="plain T-FDPA"):
        transposition_proofs(model_of("gfx908", "f16f32"), 4, CTX)
