"""Code-generating interpretation of the algebra: straight-line, branch-free C.

Run an op definition once on this algebra and every term becomes one
``const T tN = ...;`` line, ``T`` the narrowest of ``int32_t``, ``int64_t``
and ``__int128`` that holds the term's static interval.  Operands are
widened to a type that holds the operands and the result before each op, so
the C computes exactly what :mod:`.concrete` computes (no wrap-around);
selection is ``?:`` on SSA values (a conditional move, never a branch);
operand fields are decoded with shifts and masks (no look-up table).

A term wider than 128 bits (the exact sums of E-FDPA, the FP64 and FP32
FMA windows) is a ``wideN_t``, N = ceil(bits / 64) limbs of two's
complement, and its ops call the branch-free helpers of :mod:`.cwide`; the
text of those helpers is :meth:`CAlgebra.prelude` (empty when every term
fits ``__int128``, so narrow kernels are unchanged).  Only a term wider
than :data:`MAX_BITS` raises :class:`NotCompilable`.

The same text is valid CUDA C: leading zeros are counted through the
macros ``SMTMMA_CLZ32``/``SMTMMA_CLZ64``, ``__builtin_clz``/``__builtin_clzll``
in C (:data:`CLZ_MACROS`) and ``__clz``/``__clzll`` on the GPU
(:mod:`smtmma.native.cuda`), so one generator serves the CPU and the GPU
kernels.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .algebra import Algebra, Bool, Int, bits_for
from .cwide import LIMB_BITS, wide_literal, wide_prelude, wide_type

__all__ = ["CAlgebra", "NotCompilable", "ctype_bits", "ctype", "MAX_BITS", "CLZ_MACROS"]

#: Widest term compiled (bits, sign included): 64 limbs; the catalogue's widest (BF16 E-FDPA) needs 552.
MAX_BITS = 64 * LIMB_BITS


#: C definitions of the leading-zero counts of non-zero values that the emitted code calls, unless the unit
#: defined them first (:mod:`smtmma.native.cuda` does, with ``__clz``/``__clzll``).
CLZ_MACROS = """#ifndef SMTMMA_CLZ32
#define SMTMMA_CLZ32(x) __builtin_clz(x)
#define SMTMMA_CLZ64(x) __builtin_clzll(x)
#endif
"""


class NotCompilable(Exception):
    """A term needs more than :data:`MAX_BITS` bits (two's complement)."""


_TYPES = ((32, "int32_t"), (64, "int64_t"), (128, "__int128"))


def ctype_bits(lo: int, hi: int) -> int:
    """Width (bits) of the narrowest C type holding every integer in [lo, hi]: 32, 64, 128, or a multiple of 64 beyond."""
    need = bits_for(lo, hi)
    for width, _ in _TYPES:
        if need <= width:
            return width
    if need <= MAX_BITS:
        return LIMB_BITS * -(-need // LIMB_BITS)
    raise NotCompilable(f"a term in [{lo}, {hi}] needs {need} bits; compiled terms stop at {MAX_BITS}")


def ctype(width: int) -> str:
    """The C type name of a signed integer of ``width`` bits (32, 64, 128, or ``wideN_t`` for 64 N > 128)."""
    return dict(_TYPES).get(width) or wide_type(width // LIMB_BITS)


def _literal(value: int, width: int) -> str:
    """A C expression of type ``ctype(width)`` equal to ``value``."""
    if width > 128:
        n = width // LIMB_BITS
        return f"wide{n}_from({_literal(value, 128)})" if -(1 << 127) <= value < (1 << 127) else wide_literal(value, n)
    if width == 32:
        return f"((int32_t){value})" if value != -(1 << 31) else "((int32_t)(-2147483647 - 1))"
    if -(1 << 63) < value < (1 << 63):
        lit = f"INT64_C({value})"
        return lit if width == 64 else f"((__int128){lit})"
    if width == 64:
        return "(INT64_MIN)"
    hi, lo = value >> 64, value & ((1 << 64) - 1)  # value = hi * 2**64 + lo, lo unsigned
    return f"((__int128)(((unsigned __int128)(uint64_t)INT64_C({hi}) << 64) | (unsigned __int128)UINT64_C({lo})))"


_WIDE_OPS = {"+": "add", "-": "sub", "*": "mul"}


class CAlgebra(Algebra):
    """Builds the body of a C function: each term is a local variable (or a literal for constants)."""

    BOOL_TYPE = "int"  # the C type of a boolean local

    def __init__(self, prefix: str = "t", *, finite_inputs: bool = False) -> None:
        self.prefix = prefix
        self.lines: list[str] = []
        self._n = 0
        self.max_width = 0  # widest C type used (bits)
        self.wide_limbs: set[int] = set()  # limb counts of the wideN_t types used (see prelude)
        #: Inputs are known to be finite (the caller tests :meth:`input` patterns with the same ``unpack``
        #: first): their is_inf/is_nan fold to False, and the special-value logic they feed drops out.
        self.finite_inputs = finite_inputs
        self._inputs: set[str] = set()
        self._unpacking = False

    def unpack_cached(self, fmt: Any, bits: Int, unpack: Any) -> Any:
        """With ``finite_inputs``, ``unpack``'s own fields of an input pattern with is_inf/is_nan set to False."""
        if not self.finite_inputs or self._unpacking or bits.raw not in self._inputs:
            return None
        self._unpacking = True
        try:
            u = unpack(self, fmt, bits)
        finally:
            self._unpacking = False
        return replace(u, is_inf=self.bconst(False), is_nan=self.bconst(False))

    # -- the emitted code ----------------------------------------------
    def prelude(self, qualifier: str = "static inline") -> str:
        """C definitions the emitted lines call: :data:`CLZ_MACROS`, then the wide-integer helpers (if any)."""
        return CLZ_MACROS + wide_prelude(self.wide_limbs, qualifier)

    def _define(self, width: int, expr: str) -> str:
        self._n += 1
        name = f"{self.prefix}{self._n}"
        self.max_width = max(self.max_width, width)
        if width > 128:
            self.wide_limbs.add(width // LIMB_BITS)
        self.lines.append(f"const {ctype(width)} {name} = {expr};")
        return name

    def _bdefine(self, expr: str) -> str:
        self._n += 1
        name = f"{self.prefix}{self._n}"
        self.lines.append(f"const {self.BOOL_TYPE} {name} = {expr};")
        return name

    def input(self, expr: str, lo: int, hi: int) -> Int:
        """An input term: the C expression ``expr`` (e.g. a load) whose values lie in [lo, hi]."""
        width = ctype_bits(lo, hi)
        name = self._define(width, f"({ctype(width)})({expr})")
        self._inputs.add(name)
        return Int(self, name, lo, hi)

    def expr(self, x: Int, width: int) -> str:
        """``x`` as a C expression of type ``ctype(width)`` (the width must hold x's interval)."""
        if x.const is not None:
            if width > 128:
                self.wide_limbs.add(width // LIMB_BITS)
            return _literal(x.const, width)
        own = ctype_bits(x.lo, x.hi)
        if own > 128 or width > 128:
            return self._convert(x.raw, own, width)
        return x.raw if own == width else f"(({ctype(width)}){x.raw})"

    def bexpr(self, c: Bool) -> str:
        """``c`` as a C int expression (0 or 1)."""
        if c.const is not None:
            return "1" if c.const else "0"
        return c.raw

    # -- wide terms (more than 128 bits) ----------------------------------
    def _wide(self, width: int, op: str) -> str:
        """Name of the :mod:`.cwide` helper ``op`` for ``width``-bit terms (recording its limb count)."""
        n = width // LIMB_BITS
        self.wide_limbs.add(n)
        return f"wide{n}_{op}"

    def _convert(self, e: str, src: int, dst: int) -> str:
        """The C expression ``e`` of type ``ctype(src)`` as ``ctype(dst)``: sign-extended, or cut where the value fits."""
        if src == dst:
            return e
        if dst > 128:
            if src > 128:
                self.wide_limbs.add(src // LIMB_BITS)
                return f"{self._wide(dst, f'from_wide{src // LIMB_BITS}')}({e})"
            return f"{self._wide(dst, 'from')}({e})"
        if src > 128:
            if dst == 128:
                return f"{self._wide(src, 'i128')}({e})"
            low = f"{self._wide(src, 'i64')}({e})"
            return low if dst == 64 else f"(({ctype(dst)}){low})"
        return f"(({ctype(dst)})({e}))"

    def _wide_op(self, op: str, w: int, r: int, *args: str) -> str:
        """Define a term of width ``r``: the helper ``op`` on ``w``-bit operands ``args``, converted to ``r`` bits."""
        return self._define(r, self._convert(f"{self._wide(w, op)}({', '.join(args)})", w, r))

    # -- primitives ------------------------------------------------------
    def _const(self, value: int, lo: int, hi: int) -> Any:
        return None  # constants are written as literals where used (see expr)

    def _bconst(self, value: bool) -> Any:
        return None

    def _binary(self, op: str, a: Int, b: Int, lo: int, hi: int) -> str:
        w = ctype_bits(min(lo, a.lo, b.lo), max(hi, a.hi, b.hi))
        r = ctype_bits(lo, hi)
        if w > 128:
            return self._wide_op(_WIDE_OPS[op], w, r, self.expr(a, w), self.expr(b, w))
        e = f"{self.expr(a, w)} {op} {self.expr(b, w)}"
        return self._define(r, e if r == w else f"({ctype(r)})({e})")

    def _add(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._binary("+", a, b, lo, hi)

    def _sub(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._binary("-", a, b, lo, hi)

    def _mul(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._binary("*", a, b, lo, hi)

    def _amount(self, k: Int, limit: int) -> str:
        """Shift amount ``k`` as an int expression, capped at ``limit`` where its interval reaches past it."""
        if ctype_bits(k.lo, k.hi) > 128:
            raise NotCompilable(f"a shift amount in [{k.lo}, {k.hi}] is wider than 128 bits")
        kk = self.expr(k, ctype_bits(k.lo, k.hi))
        if k.hi <= limit:
            return f"(int)({kk})"
        return f"(int)({kk} < {limit} ? {kk} : {limit})"

    def _shl(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        # a * 2**k; where k's interval reaches past the type, only a == 0 gets there (the result interval says so)
        w = ctype_bits(min(lo, a.lo), max(hi, a.hi))
        r = ctype_bits(lo, hi)
        if w > 128 and ctype_bits(a.lo, a.hi) <= 64:  # an int64 operand: two limbs placed, no limb pairs shifted
            return self._wide_op("shl_i64", w, r, self.expr(a, 64), self._amount(k, w - 1))
        if w > 128:
            return self._wide_op("shl", w, r, self.expr(a, w), self._amount(k, w - 1))
        e = f"{self.expr(a, w)} << {self._amount(k, w - 1)}"
        return self._define(r, e if r == w else f"({ctype(r)})({e})")

    def _shr(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        w = ctype_bits(a.lo, a.hi)  # an arithmetic shift by w - 1 already gives 0 or -1
        r = ctype_bits(lo, hi)
        if w > 128 and r <= 64:  # only the low limb of the shifted value is needed
            return self._define(r, self._convert(f"{self._wide(w, 'shr_i64')}({self.expr(a, w)}, {self._amount(k, w - 1)})", 64, r))
        if w > 128:
            return self._wide_op("shr", w, r, self.expr(a, w), self._amount(k, w - 1))
        e = f"{self.expr(a, w)} >> {self._amount(k, w - 1)}"
        return self._define(r, e if r == w else f"({ctype(r)})({e})")

    def _low_bits(self, a: Int, n: int) -> Any:
        w = ctype_bits(min(a.lo, 0), max(a.hi, (1 << n) - 1))  # holds the mask too (int64 a, n = 64: __int128)
        r = ctype_bits(0, (1 << n) - 1)
        if w > 128 and r > 128:
            return self._wide_op("and", w, r, self.expr(a, w), self.expr(self.const((1 << n) - 1), w))
        if w > 128:  # the mask fits __int128: a's low 128 bits are enough
            e = f"{self._convert(self.expr(a, w), w, 128)} & {_literal((1 << n) - 1, 128)}"
            return self._define(r, e if r == 128 else f"({ctype(r)})({e})")
        e = f"{self.expr(a, w)} & {_literal((1 << n) - 1, w)}"
        return self._define(r, e if r == w else f"({ctype(r)})({e})")

    def _bit_length(self, a: Int, hi: int) -> Any:
        w = ctype_bits(a.lo, a.hi)
        x = self.expr(a, w)
        if w > 128:
            return self._define(32, f"(int32_t){self._wide(w, 'bitlen')}({x})")
        if w == 32:
            e = f"({x} ? 32 - SMTMMA_CLZ32((uint32_t){x}) : 0)"
        elif w == 64:
            e = f"({x} ? 64 - SMTMMA_CLZ64((uint64_t){x}) : 0)"
        else:
            top = f"(uint64_t)((unsigned __int128){x} >> 64)"
            low = f"(uint64_t){x}"
            e = f"({top} ? 128 - SMTMMA_CLZ64({top}) : ({low} ? 64 - SMTMMA_CLZ64({low}) : 0))"
        return self._define(32, f"(int32_t){e}")

    def _lt(self, a: Int, b: Int) -> Any:
        w = ctype_bits(min(a.lo, b.lo), max(a.hi, b.hi))
        if w > 128:
            return self._bdefine(f"{self._wide(w, 'lt')}({self.expr(a, w)}, {self.expr(b, w)})")
        return self._bdefine(f"{self.expr(a, w)} < {self.expr(b, w)}")

    def _eq(self, a: Int, b: Int) -> Any:
        w = ctype_bits(min(a.lo, b.lo), max(a.hi, b.hi))
        if w > 128:
            return self._bdefine(f"{self._wide(w, 'eq')}({self.expr(a, w)}, {self.expr(b, w)})")
        return self._bdefine(f"{self.expr(a, w)} == {self.expr(b, w)}")

    def _ite(self, c: Bool, a: Int, b: Int, lo: int, hi: int) -> Any:
        r = ctype_bits(lo, hi)
        if r > 128:
            return self._wide_op("sel", r, r, self.bexpr(c), self.expr(a, r), self.expr(b, r))
        return self._define(r, f"{self.bexpr(c)} ? {self.expr(a, r)} : {self.expr(b, r)}")

    def _bite(self, c: Bool, a: Bool, b: Bool) -> Any:
        return self._bdefine(f"{self.bexpr(c)} ? {self.bexpr(a)} : {self.bexpr(b)}")

    def _and(self, a: Bool, b: Bool) -> Any:
        return self._bdefine(f"{self.bexpr(a)} & {self.bexpr(b)}")

    def _or(self, a: Bool, b: Bool) -> Any:
        return self._bdefine(f"{self.bexpr(a)} | {self.bexpr(b)}")

    def _xor(self, a: Bool, b: Bool) -> Any:
        return self._bdefine(f"{self.bexpr(a)} ^ {self.bexpr(b)}")

    def _not(self, a: Bool) -> Any:
        return self._bdefine(f"!{self.bexpr(a)}")

    def _b2i(self, a: Bool) -> Any:
        return self._define(32, f"(int32_t){self.bexpr(a)}")

    def _max(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._extreme("max", a, b, lo, hi)

    def _min(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._extreme("min", a, b, lo, hi)

    def _extreme(self, which: str, a: Int, b: Int, lo: int, hi: int) -> Any:
        """max(a, b) or min(a, b) as a conditional move (a helper call for wide terms)."""
        w = ctype_bits(min(a.lo, b.lo), max(a.hi, b.hi))
        r = ctype_bits(lo, hi)
        x, y = self.expr(a, w), self.expr(b, w)
        if w > 128:
            return self._wide_op(which, w, r, x, y)
        e = f"({x} < {y} ? {y} : {x})" if which == "max" else f"({x} < {y} ? {x} : {y})"
        return self._define(r, e if r == w else f"({ctype(r)}){e}")
