"""Concrete interpretation of the algebra: NumPy arrays, vectorized over a batch.

A term's ``raw`` is an int32 array when its static interval fits 31 bits, int64 when it fits 62 bits,
an object array of exact Python integers beyond that (only the FP64 FMA and
the exact sums of E-FDPA/FTZ ops reach such widths), or a Python int/bool
for constants.  Booleans are NumPy bool arrays.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from .algebra import Algebra, Bool, Int

__all__ = ["NumpyAlgebra"]

_LIMIT = 1 << 62
_bit_length_obj = np.frompyfunc(int.bit_length, 1, 1)


def _dtype(lo: int, hi: int) -> Any:
    if -(1 << 31) <= lo and hi < (1 << 31):
        return np.int32
    return np.int64 if -_LIMIT <= lo and hi < _LIMIT else object


_TABLES: dict[Any, Any] = {}


class NumpyAlgebra(Algebra):
    """The simulator's interpretation: each term is a batch of exact integers."""

    def _bool(self, raw: Any) -> Bool:
        """A batch that is all False (or all True) becomes a constant, so the ops it guards fold away."""
        if isinstance(raw, np.ndarray) and raw.ndim:
            if not raw.any():
                return self.bconst(False)
            if raw.all():
                return self.bconst(True)
        return Bool(self, raw)

    def unpack_cached(self, fmt: Any, bits: Int, unpack: Any) -> Any:
        """Fields of a pattern of a <= 16-bit format by table look-up.

        The table holds ``unpack``'s own results over every pattern, so the
        definition stays single; only the work per element shrinks.
        """
        if fmt.bits > 16 or not isinstance(bits.raw, np.ndarray) or bits.lo < 0 or bits.hi >= (1 << fmt.bits):
            return None
        table = _TABLES.get(fmt)
        if table is None:
            plain = NumpyAlgebra()
            plain.unpack_cached = lambda *args: None  # type: ignore[method-assign]
            every = plain.input(np.arange(1 << fmt.bits, dtype=np.int64), 0, (1 << fmt.bits) - 1)
            table = _TABLES[fmt] = unpack(plain, fmt, every)
        idx = bits.raw

        def take(x: Any) -> Any:
            if x.const is not None:
                return x
            if isinstance(x, Bool):
                return self._bool(x.raw[idx])
            return Int(self, x.raw[idx], x.lo, x.hi)

        return type(table)(
            take(table.neg), take(table.exp), take(table.sig), table.frac,
            take(table.is_zero), take(table.is_inf), take(table.is_nan),
        )

    def input(self, array: np.ndarray, lo: int, hi: int) -> Int:
        """An input term over a batch (values must lie in [lo, hi])."""
        return Int(self, np.asarray(array, dtype=_dtype(lo, hi)), lo, hi)

    def value(self, x: Union[Int, Bool], n: int) -> np.ndarray:
        """The batch of ``n`` values of ``x`` (constants broadcast)."""
        raw = x.raw
        if isinstance(x, Bool):
            return np.broadcast_to(np.asarray(raw, dtype=bool), (n,))
        if isinstance(raw, np.ndarray):
            return raw
        return np.full(n, raw, dtype=_dtype(x.lo, x.hi))

    @staticmethod
    def _v(x: Int, dtype: Any) -> Any:
        raw = x.raw
        if isinstance(raw, np.ndarray):
            if raw.dtype != dtype:
                return raw.astype(dtype)
            return raw
        if dtype is object:  # keep big constants exact (np.where would wrap them to int64)
            return np.array(raw, dtype=object)
        return dtype(raw)  # a typed scalar: a bare Python int would take the other operand's (narrower) dtype

    # primitives -----------------------------------------------------------
    def _const(self, value: int, lo: int, hi: int) -> Any:
        return value

    def _bconst(self, value: bool) -> Any:
        return value

    def _arith(self, op: Any, a: Int, b: Int, lo: int, hi: int) -> Any:
        """``op`` in a dtype that holds both operands and the result, then narrowed to the result's dtype."""
        wide = _dtype(min(lo, a.lo, b.lo), max(hi, a.hi, b.hi))
        out = op(self._v(a, wide), self._v(b, wide))
        dt = _dtype(lo, hi)
        return out.astype(dt) if isinstance(out, np.ndarray) and out.dtype != dt else out

    def _add(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._arith(np.add, a, b, lo, hi)

    def _sub(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._arith(np.subtract, a, b, lo, hi)

    def _mul(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._arith(np.multiply, a, b, lo, hi)

    def _shl(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        dt = _dtype(min(lo, a.lo), max(hi, a.hi))
        out = self._v(a, dt) << self._v(k, dt)
        res = _dtype(lo, hi)
        return out.astype(res) if isinstance(out, np.ndarray) and out.dtype != res else out

    def _shr(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        src = _dtype(a.lo, a.hi)
        av = self._v(a, src)
        if src is not object:
            top = 31 if src is np.int32 else 63
            kv = np.minimum(k.raw, top) if isinstance(k.raw, np.ndarray) else min(k.raw, top)
            out = av >> kv
        else:
            out = av >> self._v(k, object)
        dt = _dtype(lo, hi)
        return out.astype(dt) if isinstance(out, np.ndarray) and out.dtype != dt else out

    def _low_bits(self, a: Int, n: int) -> Any:
        out = self._v(a, _dtype(a.lo, a.hi)) & ((1 << n) - 1)
        dt = _dtype(0, (1 << n) - 1)
        return out.astype(dt) if out.dtype != dt else out

    def _bit_length(self, a: Int, hi: int) -> Any:
        av = a.raw
        if _dtype(a.lo, a.hi) is object:
            return _bit_length_obj(av).astype(np.int64)
        if hi < (1 << 53):
            return np.frexp(av.astype(np.float64))[1].astype(_dtype(0, hi.bit_length()))
        top = av >> 26
        low = np.frexp((av & ((1 << 26) - 1)).astype(np.float64))[1]
        return np.where(top > 0, np.frexp(top.astype(np.float64))[1] + 26, low).astype(np.int64)

    def _lt(self, a: Int, b: Int) -> Any:
        dt = _dtype(min(a.lo, b.lo), max(a.hi, b.hi))
        return self._v(a, dt) < self._v(b, dt)

    def _eq(self, a: Int, b: Int) -> Any:
        dt = _dtype(min(a.lo, b.lo), max(a.hi, b.hi))
        return self._v(a, dt) == self._v(b, dt)

    def _ite(self, c: Bool, a: Int, b: Int, lo: int, hi: int) -> Any:
        dt = _dtype(lo, hi)  # the result's interval holds both branches
        out = np.where(c.raw, self._v(a, dt), self._v(b, dt))
        return out.astype(dt) if out.dtype != dt else out

    def _bite(self, c: Bool, a: Bool, b: Bool) -> Any:
        return np.where(c.raw, a.raw, b.raw)

    def _and(self, a: Bool, b: Bool) -> Any:
        return np.logical_and(a.raw, b.raw)

    def _or(self, a: Bool, b: Bool) -> Any:
        return np.logical_or(a.raw, b.raw)

    def _xor(self, a: Bool, b: Bool) -> Any:
        return np.logical_xor(a.raw, b.raw)

    def _not(self, a: Bool) -> Any:
        return np.logical_not(a.raw)

    def _b2i(self, a: Bool) -> Any:
        return np.asarray(a.raw, dtype=np.int32)

    def _max(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        dt = _dtype(min(a.lo, b.lo), max(a.hi, b.hi))
        if dt is not object:
            return np.maximum(self._v(a, dt), self._v(b, dt)).astype(_dtype(lo, hi), copy=False)
        return super()._max(a, b, lo, hi)

    def _min(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        dt = _dtype(min(a.lo, b.lo), max(a.hi, b.hi))
        if dt is not object:
            return np.minimum(self._v(a, dt), self._v(b, dt)).astype(_dtype(lo, hi), copy=False)
        return super()._min(a, b, lo, hi)
