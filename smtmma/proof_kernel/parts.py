"""Proofs by parts: each part a check-sat on its own fresh variables, expecting unsat.

A property too large for one query is split into parts (one op's step, a
glue to the model, a composition), each a :class:`Part`: a script that
declares the part's own variables (:func:`ranged_var` for an integer in a
range), states its premises and asserts its goal negated
(:func:`negated_script`).  :func:`run_parts` checks them in turn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked
from ..encodings.symbolic import SmtAlgebra
from .blocks import Block

if TYPE_CHECKING:  # the queries build on the kernel, not the other way round
    from ..queries.query_algebra import Runner

__all__ = ["Part", "PartsProof", "all_finite", "between", "implies", "negated_script", "ranged_var", "run_parts"]


@dataclass
class Part:
    """One part of a proof: a label and its script (declarations, definitions, premises, the negated goal; no
    check-sat)."""

    label: str
    script: str


@dataclass
class PartsProof:
    """Outcome of a proof by parts: "holds" or "unknown" (with the failing part), the blocks, seconds per part."""

    verdict: str
    blocks: list[Block] = field(default_factory=list)  # every part, expecting unsat
    reason: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    summary: str = "glue, per-summand re-alignment and gain, composition, rounding"  # the kinds of part, for reports
    #: the inputs the parts cover: every part's premise is a finite input whose output is finite
    scope: str = "every finite input whose D is finite"


def ranged_var(alg: SmtAlgebra, name: str, lo: int, hi: int) -> Int:
    """A declared integer ``name`` in [lo, hi] (an unsigned bit-vector plus lo, asserted <= hi)."""
    span = hi - lo
    v = alg.var(name, max(1, span.bit_length()))
    x = alg.add(v, lo)
    if x.hi > hi:
        alg.assert_(alg.le(x, hi))
    return alg.clamp(x, lo, hi)


def all_finite(alg: SmtAlgebra, *us: Unpacked) -> Bool:
    """Every decoded value in ``us`` is finite (neither NaN nor infinite)."""
    return alg.all(alg.not_(alg.or_(u.is_nan, u.is_inf)) for u in us)


def between(alg: SmtAlgebra, x: Int, lo: int, hi: int) -> Bool:
    """lo <= x <= hi."""
    return alg.and_(alg.le(lo, x), alg.le(x, hi))


def implies(alg: SmtAlgebra, premise: Sequence[Bool], goal: Bool) -> Bool:
    """(all of ``premise``) => ``goal``."""
    return alg.or_(alg.not_(alg.all(list(premise))), goal)


def negated_script(alg: SmtAlgebra, goal: Bool) -> str:
    """The script of ``alg`` with ``goal`` asserted false: unsat proves the goal under the script's assertions."""
    return alg.script(f"(assert (not {alg.term_text(goal)}))")


def run_parts(parts: Sequence[Part], run: "Runner") -> PartsProof:
    """Check each part in turn (each expects unsat): "holds" with every block, or "unknown" naming the first part
    the solver did not prove (sat or unknown); wall seconds per part in ``seconds``."""
    proof = PartsProof("holds")
    for part in parts:
        t0 = time.perf_counter()
        r = run.check(part.script, proof=True)
        proof.seconds[part.label] = time.perf_counter() - t0
        if r.verdict != "unsat":
            proof.verdict = "unknown"
            proof.reason = f"step '{part.label}': {r.verdict}" + (f" ({r.reason})" if r.reason else "")
            return proof
        proof.blocks.append(Block(part.label, part.script, "unsat"))
    return proof
