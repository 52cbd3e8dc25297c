"""Checks shared by the tests of compositional proofs (:class:`smtmma.proof_kernel.pieces.Composed`)."""

from __future__ import annotations

from smtmma.queries.backends import solve
from smtmma.proof_kernel.pieces import Composed
from smtmma.proof_kernel.parts import negated_script as _script


def assert_composition_sound(comp: Composed, timeout: float = 60) -> None:
    """The composition is proved (unsat); its premise, facts and goal have a model (the facts do not contradict each
    other, so the proof is not vacuous); without the facts the goal does not follow from the premise."""
    assert solve(comp.lemma().script, solver="bitwuzla", timeout=timeout).verdict == "unsat"
    assert solve(comp.script(goal=True), solver="bitwuzla", timeout=timeout).verdict == "sat"
    assert solve(comp.script(facts=False), solver="bitwuzla", timeout=timeout).verdict == "sat"


def assert_facts_hold_at(comp: Composed, point: dict[str, int], timeout: float = 60) -> None:
    """At the input patterns ``point``, with every fresh variable defined as the piece it stands for: the point is in
    the premise's domain, and every fact the composition asserts holds (the step no solver checks in the proof)."""
    ap = comp.apps
    alg = ap.alg
    facts, premise = alg.all(ap.facts), alg.all(comp.premise)
    for v, bits in point.items():
        alg.assert_(alg.eq(ap.inputs[v], bits))
    for d in ap.definitions():
        alg.assert_(d)
    assert solve(_script(alg, alg.not_(premise)), solver="bitwuzla", timeout=timeout).verdict == "sat"
    assert solve(_script(alg, facts), solver="bitwuzla", timeout=timeout).verdict == "unsat"
