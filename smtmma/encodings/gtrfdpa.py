"""GTR-FDPA (Alg. 11): even/odd truncated group sums, round-down merge, then round-down sum with c."""

from __future__ import annotations

from typing import NamedTuple, Sequence

from ..formats import Format
from .algebra import Algebra, Int
from .fields import Unpacked
from .fused_sum import aligned, max_exponent
from .rounding import convert_fixed, pack_special
from .terms import Term, input_term, merge_specials, value_specials
from .trfdpa import overflowing_products, round_down_with_c, shift_cut

__all__ = ["GroupMerge", "group_merge", "gtrfdpa"]


class GroupMerge(NamedTuple):
    """Alg. 11 steps 2-3 on the products: the even and odd lanes' products (``groups``), each group's largest exponent
    and truncated sum (RZ_F, units 2**(e - F)), e_max = max(e_even, e_odd), the group sums cut down to e_max
    (``cut``, with the shift cap ``span``: bits) and their sum T (units 2**(e_max - F))."""

    groups: tuple[list[Term], list[Term]]
    e_grp: list[Int]
    T_grp: list[Int]
    e_max: Int
    span: int
    cut: list[Int]
    T: Int


def group_merge(alg: Algebra, terms: Sequence[Term], F: int, floor: int, *, toward_zero: bool = False) -> GroupMerge:
    """Alg. 11 steps 2-3 (``toward_zero``: steps 3-4 truncate instead of rounding down)."""
    groups = (list(terms[0::2]), list(terms[1::2]))
    e_grp = [max_exponent(alg, g, floor) if g else alg.const(floor) for g in groups]  # step 2: e_even, e_odd
    T_grp = [alg.sum_all(aligned(alg, t, e, F) for t in g) for g, e in zip(groups, e_grp)]
    e_max = alg.max(*e_grp)  # step 3: RD_F each group sum at e_max
    span = max(T.hi.bit_length() + T.lo.bit_length() for T in T_grp) + 1
    cut = [shift_cut(alg, Tg, alg.sub(e, e_max), max_left=0, max_right=span, toward_zero=toward_zero) for Tg, e in zip(T_grp, e_grp)]
    return GroupMerge(groups, e_grp, T_grp, e_max, span, cut, alg.sum_all(cut))


def gtrfdpa(
    alg: Algebra, a: Sequence[Unpacked], b: Sequence[Unpacked], c: Unpacked, *, F: int, F2: int, out: Format, mode: str, nan_bits: int,
    sum_rz: bool = False,
) -> Int:
    """Bits of rho(S * 2**(E - F2)) for Alg. 11 (CDNA3 FP8); ``sum_rz``: steps 3-4 truncate instead of rounding down."""
    terms, specials = overflowing_products(alg, a, b)  # step 1
    ct = input_term(c)
    floor = min(min(t.exp.lo for t in terms), ct.exp.lo) - 1
    m = group_merge(alg, terms, F, floor, toward_zero=sum_rz)  # steps 2-3
    for name, Tg, e in zip(("even", "odd"), m.T_grp, m.e_grp):
        alg.note(f"truncated sum of the {name} lanes", Tg, exp=e, shift=-F)
    alg.note("group sums truncated at e_max", m.T, exp=m.e_max, shift=-F)
    S, E = round_down_with_c(alg, m.T, m.e_max, ct, F, F2, floor, drop_far_c=True, toward_zero=sum_rz)  # step 4
    alg.note("rounded down with c, before the final rounding", S, exp=E, shift=-F2)
    finite = convert_fixed(alg, out, mode, S, alg.sub(E, F2))  # step 5
    merged = merge_specials(alg, specials + [value_specials(alg, c)])
    return pack_special(alg, out, nan_bits, *merged.resolved(alg), finite)
