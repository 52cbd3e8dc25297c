"""Statements about a formula's own terms, proved once on fresh variables and asserted as instances.

Two runs of a model on permuted lanes build separate circuits for the same
function of equal arguments (a summand aligned at e_max, the final
rounding of the sum).  A bit-blasting solver does not apply congruence
across them: it proves ``f(x) = f(y)`` from ``x = y`` by search, which for
the sm70 rounding takes half a second.  Built by the same function on fresh
variables with the same ranges, the statement is proved in milliseconds
(the solver substitutes ``y := x``), and its instance on the runs' terms
is then asserted where the chain needs it.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence, Union

from ..encodings.algebra import Bool, Int
from ..queries._twins import QueryAlgebra
from ..queries.properties.error_parts import _Lemma, _ranged, _script

__all__ = ["Arg", "generalized"]

Arg = Union[Int, Bool]
Statement = Callable[[QueryAlgebra, Sequence[Arg]], Bool]


def generalized(alg: QueryAlgebra, label: str, statement: Statement, args: Sequence[Arg],
                ties: Optional[Mapping[int, int]] = None) -> tuple[_Lemma, Bool]:
    """(lemma, instance): ``statement`` for every value of fresh variables in the ranges of ``args`` (a lemma
    script, expecting unsat), and the same statement built in ``alg`` on ``args`` themselves.

    The two are built by one function on terms of the same ranges, so they
    have the same shape; an argument that is a constant would fold into a
    different shape, and is refused (ValueError).  ``ties`` {j: i}: the
    statement's premise equates arguments j and i, so the lemma gives both
    one variable (the instance, with the premise, follows by substitution).
    """
    ties = dict(ties or {})
    fresh = QueryAlgebra()
    vs: list[Arg] = []
    for i, a in enumerate(args):
        if a.const is not None:
            raise ValueError(f"{label}: argument {i} is the constant {a.const}")
        if i in ties:
            b = args[ties[i]]
            if ties[i] >= i or type(a) is not type(b) or (isinstance(a, Int) and (a.lo, a.hi) != (b.lo, b.hi)):
                raise ValueError(f"{label}: argument {i} cannot share the variable of argument {ties[i]}")
            vs.append(vs[ties[i]])
            continue
        vs.append(fresh.bvar(f"p{i}") if isinstance(a, Bool) else _ranged(fresh, f"x{i}", a.lo, a.hi))
    return _Lemma(label, _script(fresh, statement(fresh, vs))), statement(alg, list(args))
