"""The monotonicity domain shared by every op's proof: finite non-negative inputs and their single moves.

Between two inputs X <= X' lies a chain of single moves, each raising one
input to its next value (:func:`next_moves`); an op is monotone in an
argument when no single move of it lowers the result.  The predicates here
state that domain once for the query (:mod:`smtmma.queries.properties.monotonicity`)
and for the lemmas of each op (:mod:`smtmma.op_proofs`).
"""

from __future__ import annotations

from typing import Any, Optional

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..formats import Format
from ..queries.query_algebra import QueryAlgebra

__all__ = ["finite_nonneg", "move_firsts", "next_moves", "next_value", "nonneg", "nonneg_pattern", "raised_pattern", "smallest_positive"]


def smallest_positive(fmt: Format, exp: Optional[tuple[int, int]], subnormals: bool) -> Optional[int]:
    """The smallest positive pattern of ``fmt`` a domain allows (exponent range, subnormals), None if none."""
    if not fmt.subnormals:  # ue8m0: every pattern is 2**(E - bias), exponent E - bias
        lo = fmt.emin if exp is None else max(exp[0], -fmt.bias)
        return None if exp is not None and lo > exp[1] else lo + fmt.bias
    lo = fmt.emin if exp is None else exp[0]
    if exp is not None and lo > min(exp[1], fmt.emax):
        return None
    if subnormals and lo <= fmt.emin:
        return 1
    return (max(lo, fmt.emin) + fmt.bias) << fmt.man_bits


def move_firsts(plan: Any, domain: Any) -> dict[str, Optional[int]]:
    """Per input ("a", "b", "c"), the smallest positive pattern a zero moves to in ``domain`` (``plan``: the model's
    formats fa, fb, fc)."""
    return {"a": smallest_positive(plan.fa, domain.exp, domain.subnormals), "b": smallest_positive(plan.fb, domain.exp, domain.subnormals),
            "c": smallest_positive(plan.fc, domain.cexp, domain.subnormals)}


def next_moves(alg: QueryAlgebra, fmt: Format, old: Int, new: Int, first: Optional[int]) -> list[Bool]:
    """The ways ``new`` is the next value after the non-negative pattern ``old``: [step, zero to zero, zero to ``first``].

    A step is the next pattern of a non-zero value (value order is pattern
    order for non-negative values); a zero moves to a zero of either sign,
    or to ``first``, the smallest positive pattern the domain allows.
    """
    uo, uv = unpack(alg, fmt, old), unpack(alg, fmt, new)
    step = alg.and_(alg.not_(uo.is_zero), alg.eq(new, alg.add(old, 1)))
    if fmt.sign_mask:  # the largest positive pattern has no next one (without inf or NaN above it, +1 is -0)
        step = alg.and_(step, alg.lt(old, fmt.sign_mask - 1))
    moves = [step]
    if fmt.subnormals:  # formats with a zero
        moves.append(alg.and_(uo.is_zero, uv.is_zero))
        if first is not None:
            moves.append(alg.and_(uo.is_zero, alg.eq(new, first)))
    return moves


def nonneg(alg: QueryAlgebra, fmt: Format, x: Int) -> Bool:
    """x is a pattern of ``fmt`` that is not NaN and not below zero (-0 and +inf included)."""
    u = unpack(alg, fmt, x)
    return alg.and_(alg.not_(u.is_nan), alg.or_(alg.not_(u.neg), u.is_zero))


def finite_nonneg(alg: QueryAlgebra, fmt: Format, x: Int) -> Bool:
    """x is a finite non-negative pattern of ``fmt``, -0 included (the monotonicity domain)."""
    u = unpack(alg, fmt, x)
    return alg.and_(alg.not_(alg.or_(u.is_nan, u.is_inf)), alg.or_(alg.not_(u.neg), u.is_zero))


def next_value(alg: QueryAlgebra, fmt: Format, x: Int, x2: Int) -> Bool:
    """x2 is x's next value in the full non-negative domain (:func:`next_moves`, subnormals allowed)."""
    return alg.any(next_moves(alg, fmt, x, x2, smallest_positive(fmt, None, True)))


def nonneg_pattern(alg: QueryAlgebra, name: str, fmt: Format) -> tuple[Int, Unpacked]:
    """A fresh finite non-negative pattern of ``fmt`` (-0 included, as the monotonicity domain has it) and its fields."""
    v = alg.var(name, fmt.bits)
    u = unpack(alg, fmt, v)
    alg.assert_(alg.not_(alg.or_(u.is_nan, u.is_inf)))
    alg.assert_(alg.or_(alg.not_(u.neg), u.is_zero))
    return v, u


def raised_pattern(alg: QueryAlgebra, fmt: Format, name: str) -> tuple[Int, Unpacked, Int, Unpacked]:
    """A fresh pattern and its next value (:func:`next_moves`), both finite and non-negative, with their fields."""
    v, u = nonneg_pattern(alg, name, fmt)
    v2, u2 = nonneg_pattern(alg, name + "_2", fmt)
    alg.assert_(alg.any(next_moves(alg, fmt, v, v2, smallest_positive(fmt, None, True))))
    return v, u, v2, u2
