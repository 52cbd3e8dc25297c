"""Summands of the fused ops: exact products and accumulators, with their special-value state.

A :class:`Term` is ``(-1)**neg * sig * 2**(exp - frac)`` with ``sig >= 0``
an integer and ``frac`` static; ``sig == 0`` is a zero term.  A
:class:`Specials` records NaN and infinities met so far (§4.2 of the
MMA-Sim paper) so that the finite datapath can ignore them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .algebra import Algebra, Bool, Int
from .fields import Unpacked

__all__ = ["Term", "Specials", "input_term", "product", "value_specials", "merge_specials", "zero_exponent_floor"]


@dataclass(frozen=True)
class Term:
    """An exact summand: value ``(-1)**neg * sig * 2**(exp - frac)``."""

    neg: Bool
    sig: Int
    exp: Int
    frac: int


@dataclass(frozen=True)
class Specials:
    """NaN / +inf / -inf seen among inputs and products."""

    nan: Bool
    pos_inf: Bool
    neg_inf: Bool

    def resolved(self, alg: Algebra) -> tuple[Bool, Bool, Bool]:
        """(is_nan, is_pos_inf, is_neg_inf) of the result: +inf with -inf is NaN."""
        nan = alg.or_(self.nan, alg.and_(self.pos_inf, self.neg_inf))
        return nan, alg.and_(self.pos_inf, alg.not_(nan)), alg.and_(self.neg_inf, alg.not_(nan))


def input_term(u: Unpacked) -> Term:
    """The value of a decoded input as a term."""
    return Term(u.neg, u.sig, u.exp, u.frac)


def value_specials(alg: Algebra, u: Unpacked) -> Specials:
    """Special state of a single input value (the accumulator c)."""
    return Specials(u.is_nan, alg.and_(u.is_inf, alg.not_(u.neg)), alg.and_(u.is_inf, u.neg))


def product(alg: Algebra, a: Unpacked, b: Unpacked) -> tuple[Term, Specials]:
    """Exact product of significands and sum of exponents (Alg. 7 lines 3-4), and its specials.

    inf x 0 and NaN operands give NaN; inf x finite non-zero gives inf with
    the product's sign.
    """
    neg = alg.xor(a.neg, b.neg)
    term = Term(neg, alg.mul(a.sig, b.sig), alg.add(a.exp, b.exp), a.frac + b.frac)
    nan = alg.any([a.is_nan, b.is_nan, alg.and_(a.is_inf, b.is_zero), alg.and_(b.is_inf, a.is_zero)])
    inf = alg.and_(alg.or_(a.is_inf, b.is_inf), alg.not_(nan))
    return term, Specials(nan, alg.and_(inf, alg.not_(neg)), alg.and_(inf, neg))


def merge_specials(alg: Algebra, items: Sequence[Specials]) -> Specials:
    """Union of the special states of several summands."""
    return Specials(
        alg.any(s.nan for s in items),
        alg.any(s.pos_inf for s in items),
        alg.any(s.neg_inf for s in items),
    )


def zero_exponent_floor(terms: Sequence[Term]) -> int:
    """An exponent below every term's: zero terms take it so they never set e_max."""
    return min(t.exp.lo for t in terms) - 1
