"""GTR-FDPA (Alg. 11): even/odd truncated group sums, round-down merge, then round-down sum with c."""

from __future__ import annotations

from typing import Sequence

from ..formats import Format
from .algebra import Algebra, Int
from .fields import Unpacked
from .fused_sum import aligned, max_exponent
from .rounding import convert_fixed, pack_special
from .terms import input_term, merge_specials, value_specials
from .trfdpa import overflowing_products, round_down_with_c, shift_cut

__all__ = ["gtrfdpa"]


def gtrfdpa(
    alg: Algebra, a: Sequence[Unpacked], b: Sequence[Unpacked], c: Unpacked, *, F: int, F2: int, out: Format, mode: str, nan_bits: int,
    sum_rz: bool = False,
) -> Int:
    """Bits of rho(S * 2**(E - F2)) for Alg. 11 (CDNA3 FP8); ``sum_rz``: steps 3-4 truncate instead of rounding down."""
    terms, specials = overflowing_products(alg, a, b)  # step 1
    ct = input_term(c)
    floor = min(min(t.exp.lo for t in terms), ct.exp.lo) - 1
    groups = (terms[0::2], terms[1::2])
    e_grp = [max_exponent(alg, g, floor) if g else alg.const(floor) for g in groups]  # step 2: e_even, e_odd
    T_grp = [alg.sum_all(aligned(alg, t, e, F) for t in g) for g, e in zip(groups, e_grp)]
    for name, Tg, e in zip(("even", "odd"), T_grp, e_grp):
        alg.note(f"truncated sum of the {name} lanes", Tg, exp=e, shift=-F)
    e_max = alg.max(*e_grp)  # step 3: RD_F each group sum at e_max
    span = max(T.hi.bit_length() + T.lo.bit_length() for T in T_grp) + 1
    T = alg.sum_all(shift_cut(alg, Tg, alg.sub(e, e_max), max_left=0, max_right=span, toward_zero=sum_rz) for Tg, e in zip(T_grp, e_grp))
    alg.note("group sums truncated at e_max", T, exp=e_max, shift=-F)
    S, E = round_down_with_c(alg, T, e_max, ct, F, F2, floor, drop_far_c=True, toward_zero=sum_rz)  # step 4
    alg.note("rounded down with c, before the final rounding", S, exp=E, shift=-F2)
    finite = convert_fixed(alg, out, mode, S, alg.sub(E, F2))  # step 5
    merged = merge_specials(alg, specials + [value_specials(alg, c)])
    return pack_special(alg, out, nan_bits, *merged.resolved(alg), finite)
