"""The bit-vector algebra every elementary op is written against.

Values are integers with a *static* interval ``[lo, hi]`` known when the
formula is built (from the format widths and model parameters), plus
booleans.  Ops are exact integer ops (no wrap-around): the interval of each
result is derived from its operands, so an interpretation can pick the
width it needs once per op, not per element:

* the concrete interpretation (:mod:`.concrete`) uses int64 NumPy arrays
  when the interval fits 62 bits and exact Python integers (object arrays)
  beyond;
* a symbolic interpretation maps each value to a two's-complement
  bit-vector of ``width`` bits (sign included), sign-extending operands to
  the result width, so the same definition is a formula.

Static facts fold: ops on constants give constants, ``x & False`` is
``False``, and an ``ite`` with a constant condition picks a branch, so a
format without infinities builds no infinity logic.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Iterable, Optional, Sequence, Union

__all__ = ["Algebra", "Int", "Bool", "IntLike", "BoolLike", "bits_for"]


def bits_for(lo: int, hi: int) -> int:
    """Two's-complement width (bits, sign included) holding every integer in [lo, hi]."""
    return max(lo.bit_length() if lo >= 0 else (-lo - 1).bit_length(), hi.bit_length() if hi >= 0 else (-hi - 1).bit_length()) + 1


class Int:
    """An integer term: ``raw`` is the interpretation's object, ``[lo, hi]`` its static range.

    ``const`` is the Python int when the value is known statically, else None.
    """

    __slots__ = ("alg", "raw", "lo", "hi", "const")

    def __init__(self, alg: "Algebra", raw: Any, lo: int, hi: int, const: Union[int, None] = None) -> None:
        assert lo <= hi, (lo, hi)
        self.alg, self.raw, self.lo, self.hi, self.const = alg, raw, lo, hi, const

    @property
    def width(self) -> int:
        """Bits (two's complement) needed for this term."""
        return bits_for(self.lo, self.hi)

    def __repr__(self) -> str:
        return f"Int[{self.lo},{self.hi}]" + (f"={self.const}" if self.const is not None else "")

    # arithmetic sugar -------------------------------------------------
    def __add__(self, o: "IntLike") -> "Int":
        return self.alg.add(self, o)

    __radd__ = __add__

    def __sub__(self, o: "IntLike") -> "Int":
        return self.alg.sub(self, o)

    def __rsub__(self, o: "IntLike") -> "Int":
        return self.alg.sub(o, self)

    def __mul__(self, o: "IntLike") -> "Int":
        return self.alg.mul(self, o)

    __rmul__ = __mul__

    def __neg__(self) -> "Int":
        return self.alg.neg(self)

    def __lshift__(self, k: "IntLike") -> "Int":
        return self.alg.shl(self, k)

    def __rshift__(self, k: "IntLike") -> "Int":
        return self.alg.shr(self, k)

    def __lt__(self, o: "IntLike") -> "Bool":  # type: ignore[override]
        return self.alg.lt(self, o)

    def __le__(self, o: "IntLike") -> "Bool":  # type: ignore[override]
        return self.alg.le(self, o)

    def __gt__(self, o: "IntLike") -> "Bool":  # type: ignore[override]
        return self.alg.lt(o, self)

    def __ge__(self, o: "IntLike") -> "Bool":  # type: ignore[override]
        return self.alg.le(o, self)

    def eq(self, o: "IntLike") -> "Bool":
        """``self == o`` as a Bool term (``==`` stays Python identity)."""
        return self.alg.eq(self, o)

    def ne(self, o: "IntLike") -> "Bool":
        """``self != o`` as a Bool term."""
        return ~self.alg.eq(self, o)


class Bool:
    """A boolean term; ``const`` is the Python bool when known statically."""

    __slots__ = ("alg", "raw", "const")

    def __init__(self, alg: "Algebra", raw: Any, const: Union[bool, None] = None) -> None:
        self.alg, self.raw, self.const = alg, raw, const

    def __repr__(self) -> str:
        return "Bool" + (f"={self.const}" if self.const is not None else "")

    def __and__(self, o: "BoolLike") -> "Bool":
        return self.alg.and_(self, o)

    __rand__ = __and__

    def __or__(self, o: "BoolLike") -> "Bool":
        return self.alg.or_(self, o)

    __ror__ = __or__

    def __xor__(self, o: "BoolLike") -> "Bool":
        return self.alg.xor(self, o)

    __rxor__ = __xor__

    def __invert__(self) -> "Bool":
        return self.alg.not_(self)

    def __bool__(self) -> bool:
        raise TypeError("a Bool term has no Python truth value; use alg.ite or .const")


IntLike = Union[Int, int]
BoolLike = Union[Bool, bool]


class Algebra(ABC):
    """Exact integer/boolean ops with static intervals; subclasses interpret ``raw``.

    Subclasses implement the ``_``-prefixed primitives, which receive
    operands already lifted to terms and the result interval; this class
    computes intervals, folds constants and derives the composite ops.
    """

    # -- tracing hook (a no-op except in smtmma.trace) ------------------
    def note(self, label: str, x: Optional[Int] = None, *, exp: IntLike = 0, shift: int = 0, neg: Optional[BoolLike] = None,
             fmt: Any = None, fields: Any = None) -> None:
        """Mark an intermediate value as step ``label`` of the op: ``(-1)**neg * x * 2**(exp + shift)``, or with
        ``fmt`` the pattern ``x`` of that format, or with ``fields`` a decoded operand (``Unpacked``);
        ``label`` alone starts a new stage.  Ignored by the simulator and the formulas; :mod:`smtmma.trace`
        records it."""

    # -- primitives an interpretation provides ---------------------------
    @abstractmethod
    def _const(self, value: int, lo: int, hi: int) -> Any: ...

    @abstractmethod
    def _bconst(self, value: bool) -> Any: ...

    @abstractmethod
    def _add(self, a: Int, b: Int, lo: int, hi: int) -> Any: ...

    @abstractmethod
    def _sub(self, a: Int, b: Int, lo: int, hi: int) -> Any: ...

    @abstractmethod
    def _mul(self, a: Int, b: Int, lo: int, hi: int) -> Any: ...

    @abstractmethod
    def _shl(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        """a * 2**k for k >= 0."""

    @abstractmethod
    def _shr(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        """floor(a / 2**k) for k >= 0 (k may exceed a's width)."""

    @abstractmethod
    def _low_bits(self, a: Int, n: int) -> Any:
        """a mod 2**n (n static, result in [0, 2**n))."""

    @abstractmethod
    def _bit_length(self, a: Int, hi: int) -> Any:
        """Number of bits of a >= 0 (0 for 0)."""

    @abstractmethod
    def _lt(self, a: Int, b: Int) -> Any: ...

    @abstractmethod
    def _eq(self, a: Int, b: Int) -> Any: ...

    @abstractmethod
    def _ite(self, c: Bool, a: Int, b: Int, lo: int, hi: int) -> Any: ...

    @abstractmethod
    def _bite(self, c: Bool, a: Bool, b: Bool) -> Any: ...

    @abstractmethod
    def _and(self, a: Bool, b: Bool) -> Any: ...

    @abstractmethod
    def _or(self, a: Bool, b: Bool) -> Any: ...

    @abstractmethod
    def _xor(self, a: Bool, b: Bool) -> Any: ...

    @abstractmethod
    def _not(self, a: Bool) -> Any: ...

    @abstractmethod
    def _b2i(self, a: Bool) -> Any: ...

    def _max(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._ite(self.lt(a, b), b, a, lo, hi)

    def _min(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._ite(self.lt(a, b), a, b, lo, hi)

    def _bool(self, raw: Any) -> Bool:
        """Wrap a primitive's boolean result (an interpretation may fold uniform batches to constants)."""
        return Bool(self, raw)

    def unpack_cached(self, fmt: Any, bits: Int, unpack: Any) -> Any:
        """Hook: decoded fields of ``bits`` from a table of ``unpack``'s own results, or None."""
        return None

    # -- lifting ---------------------------------------------------------
    def const(self, value: int) -> Int:
        """The integer constant ``value``."""
        value = int(value)
        return Int(self, self._const(value, value, value), value, value, value)

    def bconst(self, value: bool) -> Bool:
        """The boolean constant ``value``."""
        return Bool(self, self._bconst(bool(value)), bool(value))

    def lift(self, x: IntLike) -> Int:
        """``x`` as an Int term (Python ints become constants)."""
        if isinstance(x, Int):
            return x
        return self.const(x)

    def blift(self, x: BoolLike) -> Bool:
        """``x`` as a Bool term."""
        if isinstance(x, Bool):
            return x
        return self.bconst(bool(x))

    # -- integer ops -----------------------------------------------------
    def add(self, a: IntLike, b: IntLike) -> Int:
        """a + b."""
        a, b = self.lift(a), self.lift(b)
        if a.const is not None and b.const is not None:
            return self.const(a.const + b.const)
        if a.const == 0:
            return b
        if b.const == 0:
            return a
        lo, hi = a.lo + b.lo, a.hi + b.hi
        return Int(self, self._add(a, b, lo, hi), lo, hi)

    def sub(self, a: IntLike, b: IntLike) -> Int:
        """a - b."""
        a, b = self.lift(a), self.lift(b)
        if a.const is not None and b.const is not None:
            return self.const(a.const - b.const)
        if b.const == 0:
            return a
        lo, hi = a.lo - b.hi, a.hi - b.lo
        return Int(self, self._sub(a, b, lo, hi), lo, hi)

    def neg(self, a: IntLike) -> Int:
        """-a."""
        return self.sub(0, a)

    def mul(self, a: IntLike, b: IntLike) -> Int:
        """a * b."""
        a, b = self.lift(a), self.lift(b)
        if a.const is not None and b.const is not None:
            return self.const(a.const * b.const)
        if a.const == 1:
            return b
        if b.const == 1:
            return a
        if a.const == 0 or b.const == 0:
            return self.const(0)
        corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
        lo, hi = min(corners), max(corners)
        return Int(self, self._mul(a, b, lo, hi), lo, hi)

    def shl(self, a: IntLike, k: IntLike, *, at_most: Optional[int] = None) -> Int:
        """a * 2**k, k >= 0.

        ``at_most``: an upper bound on the result that the caller knows to hold
        (e.g. ``(x >> k) << k <= x``); it narrows the term's width, so it must
        be true for every input.
        """
        a, k = self.lift(a), self.lift(k)
        assert k.lo >= 0, f"shift amount may be negative: {k}"
        if a.const is not None and k.const is not None:
            return self.const(a.const << k.const)
        if k.const == 0 or a.const == 0:
            return a
        corners = [a.lo << k.lo, a.lo << k.hi, a.hi << k.lo, a.hi << k.hi]
        lo, hi = min(corners), max(corners)
        if at_most is not None:
            assert a.lo >= 0 and at_most >= lo, (a, at_most)
            hi = min(hi, at_most)
        return Int(self, self._shl(a, k, lo, hi), lo, hi)

    def shr(self, a: IntLike, k: IntLike) -> Int:
        """floor(a / 2**k), k >= 0."""
        a, k = self.lift(a), self.lift(k)
        assert k.lo >= 0, f"shift amount may be negative: {k}"
        if a.const is not None and k.const is not None:
            return self.const(a.const >> k.const)
        if k.const == 0:
            return a
        corners = [a.lo >> k.lo, a.lo >> k.hi, a.hi >> k.lo, a.hi >> k.hi]
        lo, hi = min(corners), max(corners)
        if lo == hi:
            return self.const(lo)
        return Int(self, self._shr(a, k, lo, hi), lo, hi)

    def low_bits(self, a: IntLike, n: int) -> Int:
        """a mod 2**n (the n low bits), n static."""
        a = self.lift(a)
        if a.const is not None:
            return self.const(a.const & ((1 << n) - 1))
        if 0 <= a.lo and a.hi < (1 << n):
            return a
        return Int(self, self._low_bits(a, n), 0, (1 << n) - 1)

    def bits(self, a: IntLike, hi_bit: int, lo_bit: int) -> Int:
        """Bits hi_bit..lo_bit of a >= 0, as an unsigned integer."""
        return self.low_bits(self.shr(a, lo_bit), hi_bit - lo_bit + 1)

    def bit_length(self, a: IntLike) -> Int:
        """Number of significant bits of a >= 0 (0 for a == 0)."""
        a = self.lift(a)
        assert a.lo >= 0, f"bit_length of a possibly negative term {a}"
        if a.const is not None:
            return self.const(a.const.bit_length())
        return Int(self, self._bit_length(a, a.hi), a.lo.bit_length(), a.hi.bit_length())

    def normalize(self, a: IntLike, width: int) -> tuple[Int, Int]:
        """(a * 2**(width - bit_length(a)), bit_length(a)) for 0 <= a < 2**width: the leading bit moved to bit width-1.

        The shifted value's interval is [0, 2**width) (a plain variable shift
        could not know that the amount shrinks as a grows); 0 stays 0.
        """
        a = self.lift(a)
        assert a.lo >= 0 and a.hi < (1 << width), (a, width)
        n = self.bit_length(a)
        k = self.sub(width, n)
        if k.const is not None:
            return self.shl(a, k), n
        hi = (1 << width) - 1
        return Int(self, self._shl(a, k, 0, hi), 0, hi), n

    def max(self, a: IntLike, b: IntLike) -> Int:
        """max(a, b)."""
        a, b = self.lift(a), self.lift(b)
        if a.lo >= b.hi:
            return a
        if b.lo >= a.hi:
            return b
        lo, hi = max(a.lo, b.lo), max(a.hi, b.hi)
        return Int(self, self._max(a, b, lo, hi), lo, hi)

    def min(self, a: IntLike, b: IntLike) -> Int:
        """min(a, b)."""
        a, b = self.lift(a), self.lift(b)
        if a.hi <= b.lo:
            return a
        if b.hi <= a.lo:
            return b
        lo, hi = min(a.lo, b.lo), min(a.hi, b.hi)
        return Int(self, self._min(a, b, lo, hi), lo, hi)

    def clamp(self, a: IntLike, lo: int, hi: int) -> Int:
        """a limited to [lo, hi]."""
        return self.min(self.max(a, lo), hi)

    def max_all(self, xs: Sequence[IntLike]) -> Int:
        """Maximum of a non-empty sequence."""
        out = self.lift(xs[0])
        for x in xs[1:]:
            out = self.max(out, x)
        return out

    def sum_all(self, xs: Iterable[IntLike]) -> Int:
        """Exact sum of a sequence (0 when empty)."""
        out: Int = self.const(0)
        for x in xs:
            out = self.add(out, x)
        return out

    def running_sums(self, xs: Iterable[IntLike]) -> list[Int]:
        """The running sums of a sequence as :meth:`sum_all` adds them (from 0): the last is its sum's own term."""
        out: list[Int] = []
        run: Int = self.const(0)
        for x in xs:
            run = self.add(run, x)
            out.append(run)
        return out

    def abs(self, a: IntLike) -> Int:
        """|a|."""
        a = self.lift(a)
        if a.lo >= 0:
            return a
        if a.hi <= 0:
            return self.neg(a)
        n = self.neg(a)
        lo, hi = 0, max(-a.lo, a.hi)
        return Int(self, self._ite(self.lt(a, 0), n, a, lo, hi), lo, hi)

    def shift(self, a: IntLike, k: IntLike, *, max_left: int, max_right: int) -> Int:
        """a * 2**k for a signed shift k: left by k > 0, floor right by -k > 0.

        ``max_left``/``max_right`` bound the shift amounts actually reached
        (beyond ``max_right`` the result no longer changes); they keep the
        static interval tight when k's interval is wide.
        """
        a, k = self.lift(a), self.lift(k)
        left = self.clamp(k, 0, max(0, max_left))
        right = self.clamp(self.neg(k), 0, max(0, max_right))
        return self.shr(self.shl(a, left), right)

    # -- comparisons and selection --------------------------------------
    def lt(self, a: IntLike, b: IntLike) -> Bool:
        """a < b."""
        a, b = self.lift(a), self.lift(b)
        if a.hi < b.lo:
            return self.bconst(True)
        if a.lo >= b.hi:
            return self.bconst(False)
        return self._bool(self._lt(a, b))

    def le(self, a: IntLike, b: IntLike) -> Bool:
        """a <= b."""
        return self.not_(self.lt(b, a))

    def eq(self, a: IntLike, b: IntLike) -> Bool:
        """a == b."""
        a, b = self.lift(a), self.lift(b)
        if a.const is not None and b.const is not None:
            return self.bconst(a.const == b.const)
        if a.hi < b.lo or b.hi < a.lo:
            return self.bconst(False)
        return self._bool(self._eq(a, b))

    def ne(self, a: IntLike, b: IntLike) -> Bool:
        """a != b."""
        return self.not_(self.eq(a, b))

    def ite(self, c: BoolLike, a: IntLike, b: IntLike) -> Int:
        """a if c else b."""
        c, a, b = self.blift(c), self.lift(a), self.lift(b)
        if c.const is not None:
            return a if c.const else b
        if a is b or (a.const is not None and a.const == b.const):
            return a
        lo, hi = min(a.lo, b.lo), max(a.hi, b.hi)
        return Int(self, self._ite(c, a, b, lo, hi), lo, hi)

    def bite(self, c: BoolLike, a: BoolLike, b: BoolLike) -> Bool:
        """a if c else b, for booleans."""
        c, a, b = self.blift(c), self.blift(a), self.blift(b)
        if c.const is not None:
            return a if c.const else b
        if a.const is not None and b.const is not None:
            if a.const == b.const:
                return a
            return c if a.const else self.not_(c)
        return self._bool(self._bite(c, a, b))

    def b2i(self, c: BoolLike) -> Int:
        """1 if c else 0."""
        c = self.blift(c)
        if c.const is not None:
            return self.const(int(c.const))
        return Int(self, self._b2i(c), 0, 1)

    # -- boolean ops -----------------------------------------------------
    def and_(self, a: BoolLike, b: BoolLike) -> Bool:
        """a and b."""
        a, b = self.blift(a), self.blift(b)
        if a.const is False or b.const is False:
            return self.bconst(False)
        if a.const is True:
            return b
        if b.const is True:
            return a
        return self._bool(self._and(a, b))

    def or_(self, a: BoolLike, b: BoolLike) -> Bool:
        """a or b."""
        a, b = self.blift(a), self.blift(b)
        if a.const is True or b.const is True:
            return self.bconst(True)
        if a.const is False:
            return b
        if b.const is False:
            return a
        return self._bool(self._or(a, b))

    def xor(self, a: BoolLike, b: BoolLike) -> Bool:
        """a xor b."""
        a, b = self.blift(a), self.blift(b)
        if a.const is not None and b.const is not None:
            return self.bconst(a.const != b.const)
        if a.const is False:
            return b
        if b.const is False:
            return a
        if a.const is True:
            return self.not_(b)
        if b.const is True:
            return self.not_(a)
        return self._bool(self._xor(a, b))

    def not_(self, a: BoolLike) -> Bool:
        """not a."""
        a = self.blift(a)
        if a.const is not None:
            return self.bconst(not a.const)
        return self._bool(self._not(a))

    def any(self, xs: Iterable[BoolLike]) -> Bool:
        """Disjunction (False when empty)."""
        out: Bool = self.bconst(False)
        for x in xs:
            out = self.or_(out, x)
        return out

    def all(self, xs: Iterable[BoolLike]) -> Bool:
        """Conjunction (True when empty)."""
        out: Bool = self.bconst(True)
        for x in xs:
            out = self.and_(out, x)
        return out
