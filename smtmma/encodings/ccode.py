"""Code-generating interpretation of the algebra: straight-line, branch-free C.

Run an op definition once on this algebra and every term becomes one
``const T tN = ...;`` line, ``T`` the narrowest of ``int32_t``, ``int64_t``
and ``__int128`` that holds the term's static interval.  Operands are
widened to a type that holds the operands and the result before each op, so
the C computes exactly what :mod:`.concrete` computes (no wrap-around);
selection is ``?:`` on SSA values (a conditional move, never a branch);
operand fields are decoded with shifts and masks (no look-up table).  A
term wider than 127 bits raises :class:`NotCompilable` (the caller keeps
the NumPy interpretation for that model).

The same text is valid CUDA C (``__int128`` and the ``__builtin_clz``
family map to ``__clz``/``__clzll``), so one generator serves the CPU and the
GPU kernels.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .algebra import Algebra, Bool, Int, bits_for

__all__ = ["CAlgebra", "NotCompilable", "ctype_bits", "ctype"]


class NotCompilable(Exception):
    """A term needs more than 127 bits (two's complement): no native C integer type holds it."""


_TYPES = ((32, "int32_t"), (64, "int64_t"), (128, "__int128"))


def ctype_bits(lo: int, hi: int) -> int:
    """Width (bits: 32, 64 or 128) of the narrowest C integer type holding every integer in [lo, hi]."""
    need = bits_for(lo, hi)
    for width, _ in _TYPES:
        if need <= width:
            return width
    raise NotCompilable(f"a term in [{lo}, {hi}] needs {need} bits; C integers stop at 128")


def ctype(width: int) -> str:
    """The C type name of a signed integer of ``width`` bits (32, 64 or 128)."""
    return dict(_TYPES)[width]


def _literal(value: int, width: int) -> str:
    """A C expression of type ``ctype(width)`` equal to ``value``."""
    if width == 32:
        return f"((int32_t){value})" if value != -(1 << 31) else "((int32_t)(-2147483647 - 1))"
    if -(1 << 63) < value < (1 << 63):
        lit = f"INT64_C({value})"
        return lit if width == 64 else f"((__int128){lit})"
    if width == 64:
        return "(INT64_MIN)"
    hi, lo = value >> 64, value & ((1 << 64) - 1)  # value = hi * 2**64 + lo, lo unsigned
    return f"((__int128)(((unsigned __int128)(uint64_t)INT64_C({hi}) << 64) | (unsigned __int128)UINT64_C({lo})))"


class CAlgebra(Algebra):
    """Builds the body of a C function: each term is a local variable (or a literal for constants)."""

    def __init__(self, prefix: str = "t", *, finite_inputs: bool = False) -> None:
        self.prefix = prefix
        self.lines: list[str] = []
        self._n = 0
        self.max_width = 0  # widest C type used (bits)
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
    def _define(self, width: int, expr: str) -> str:
        self._n += 1
        name = f"{self.prefix}{self._n}"
        self.max_width = max(self.max_width, width)
        self.lines.append(f"const {ctype(width)} {name} = {expr};")
        return name

    def _bdefine(self, expr: str) -> str:
        self._n += 1
        name = f"{self.prefix}{self._n}"
        self.lines.append(f"const int {name} = {expr};")
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
            return _literal(x.const, width)
        own = ctype_bits(x.lo, x.hi)
        return x.raw if own == width else f"(({ctype(width)}){x.raw})"

    def bexpr(self, c: Bool) -> str:
        """``c`` as a C int expression (0 or 1)."""
        if c.const is not None:
            return "1" if c.const else "0"
        return c.raw

    # -- primitives ------------------------------------------------------
    def _const(self, value: int, lo: int, hi: int) -> Any:
        return None  # constants are written as literals where used (see expr)

    def _bconst(self, value: bool) -> Any:
        return None

    def _binary(self, op: str, a: Int, b: Int, lo: int, hi: int) -> str:
        w = ctype_bits(min(lo, a.lo, b.lo), max(hi, a.hi, b.hi))
        r = ctype_bits(lo, hi)
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
        kk = self.expr(k, ctype_bits(k.lo, k.hi))
        if k.hi <= limit:
            return f"(int)({kk})"
        return f"(int)({kk} < {limit} ? {kk} : {limit})"

    def _shl(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        # a * 2**k; where k's interval reaches past the type, only a == 0 gets there (the result interval says so)
        w = ctype_bits(min(lo, a.lo), max(hi, a.hi))
        r = ctype_bits(lo, hi)
        e = f"{self.expr(a, w)} << {self._amount(k, w - 1)}"
        return self._define(r, e if r == w else f"({ctype(r)})({e})")

    def _shr(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        w = ctype_bits(a.lo, a.hi)  # an arithmetic shift by w - 1 already gives 0 or -1
        r = ctype_bits(lo, hi)
        e = f"{self.expr(a, w)} >> {self._amount(k, w - 1)}"
        return self._define(r, e if r == w else f"({ctype(r)})({e})")

    def _low_bits(self, a: Int, n: int) -> Any:
        w = ctype_bits(a.lo, a.hi)
        r = ctype_bits(0, (1 << n) - 1)
        e = f"{self.expr(a, w)} & {_literal((1 << n) - 1, w)}"
        return self._define(r, e if r == w else f"({ctype(r)})({e})")

    def _bit_length(self, a: Int, hi: int) -> Any:
        w = ctype_bits(a.lo, a.hi)
        x = self.expr(a, w)
        if w == 32:
            e = f"({x} ? 32 - __builtin_clz((uint32_t){x}) : 0)"
        elif w == 64:
            e = f"({x} ? 64 - __builtin_clzll((uint64_t){x}) : 0)"
        else:
            top = f"(uint64_t)((unsigned __int128){x} >> 64)"
            low = f"(uint64_t){x}"
            e = f"({top} ? 128 - __builtin_clzll({top}) : ({low} ? 64 - __builtin_clzll({low}) : 0))"
        return self._define(32, f"(int32_t){e}")

    def _lt(self, a: Int, b: Int) -> Any:
        w = ctype_bits(min(a.lo, b.lo), max(a.hi, b.hi))
        return self._bdefine(f"{self.expr(a, w)} < {self.expr(b, w)}")

    def _eq(self, a: Int, b: Int) -> Any:
        w = ctype_bits(min(a.lo, b.lo), max(a.hi, b.hi))
        return self._bdefine(f"{self.expr(a, w)} == {self.expr(b, w)}")

    def _ite(self, c: Bool, a: Int, b: Int, lo: int, hi: int) -> Any:
        r = ctype_bits(lo, hi)
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
        w = ctype_bits(min(a.lo, b.lo), max(a.hi, b.hi))
        r = ctype_bits(lo, hi)
        x, y = self.expr(a, w), self.expr(b, w)
        e = f"({x} < {y} ? {y} : {x})"
        return self._define(r, e if r == w else f"({ctype(r)}){e}")

    def _min(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        w = ctype_bits(min(a.lo, b.lo), max(a.hi, b.hi))
        r = ctype_bits(lo, hi)
        x, y = self.expr(a, w), self.expr(b, w)
        e = f"({x} < {y} ? {x} : {y})"
        return self._define(r, e if r == w else f"({ctype(r)}){e}")
