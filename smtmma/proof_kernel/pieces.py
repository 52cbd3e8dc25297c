"""Fresh variables for the pieces a compositional proof names, and the composition check built over them.

A composition replaces each piece of a model (a product's placed value, a
rounding, one FMA) applied to distinct operands by a fresh variable, and
asserts about it only instances of lemmas proved on their own.  Naming a
piece by its operands is the one step no solver checks; :meth:`Pieces.definitions`
(each fresh variable equal to its piece computed by the encoding) lets a test
check every asserted fact at pinned inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..encodings.algebra import Bool, Int
from ..encodings.symbolic import SmtAlgebra
from .parts import Part, implies, negated_script

__all__ = ["Pieces", "Composed", "piece_key"]


def piece_key(*xs: object) -> tuple[str, ...]:
    """The operands of a piece as a memo key (a constant's value, else the term's SMT text)."""
    return tuple(str(x.const) if x.const is not None else str(x.raw) for x in xs)  # type: ignore[attr-defined]


class Pieces:
    """One fresh variable (or tuple) per piece applied to distinct operands (:attr:`memo`); the facts (lemma
    instances) asserted about them; the input patterns declared.  ``alg``: the algebra they are all built in."""

    def __init__(self, alg: SmtAlgebra) -> None:
        self.alg = alg
        self.memo: dict[tuple[str, ...], object] = {}
        self.facts: list[Bool] = []
        self.inputs: dict[str, Int] = {}
        self.definers: list[Callable[[], Bool]] = []  # per piece applied: "its variables equal the piece itself"

    def bool_var(self, name: str) -> Bool:
        """A fresh boolean piece (a 1-bit variable equal to 1)."""
        return self.alg.eq(self.alg.var(name, 1), 1)

    def input(self, name: str, bits: int) -> Int:
        """An input pattern of ``bits`` bits (kept in :attr:`inputs`)."""
        self.inputs[name] = self.alg.var(name, bits)
        return self.inputs[name]

    def definitions(self) -> list[Bool]:
        """For every piece applied, "its fresh variables equal the piece computed by the encoding on its operands":
        built only when asked (a test pins the inputs and checks every fact under these), never part of a proof."""
        return [define() for define in self.definers]

    def same(self, xs: tuple[object, ...], ys: tuple[object, ...]) -> Bool:
        """Each of ``xs`` equals its counterpart in ``ys`` (booleans as bits)."""
        alg = self.alg
        return alg.all([alg.eq(alg.b2i(x), alg.b2i(y)) if isinstance(x, Bool) else alg.eq(x, y)  # type: ignore[arg-type]
                        for x, y in zip(xs, ys)])

    def fact(self, premise: list[Bool], goal: Bool) -> None:
        """Assert a lemma instance: ``premise`` implies ``goal``."""
        self.facts.append(implies(self.alg, premise, goal))


@dataclass
class Composed:
    """A composition: the premise, the lemma instances (``apps.facts``) and the goal over the pieces' fresh variables."""

    apps: Pieces
    premise: list[Bool]
    goal: Bool
    label: str

    def lemma(self) -> Part:
        """The check-sat that proves it: premise and facts with the goal false (expect unsat)."""
        alg = self.apps.alg
        return Part(self.label, negated_script(alg, implies(alg, self.premise + self.apps.facts, self.goal)))

    def script(self, *, facts: bool = True, goal: bool = False) -> str:
        """Premise, the facts (or none) and the goal (or its negation) asserted: a sat check of the facts' consistency,
        or of what the goal needs of them."""
        alg = self.apps.alg
        hyps = self.premise + (self.apps.facts if facts else [])
        return negated_script(alg, alg.not_(alg.and_(alg.all(hyps), self.goal if goal else alg.not_(self.goal))))
