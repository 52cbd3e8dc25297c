"""Code-generating interpretation over SIMD lanes: the lines of :mod:`.ccode` on W dot products at once.

Each term is a GCC/Clang vector (``__attribute__((vector_size))``) of W
lanes, one lane per dot product: ``v32`` (int32 lanes) where the term's
static interval fits 32 bits, ``v64`` (int64 lanes) where it fits 64; a
boolean is a ``v32`` mask (0 or -1 per lane).  Selection is a bitwise
blend with the mask, shifts are lane-wise by lane-wise amounts, and
leading zeros are counted through the exponent of a ``double`` (exact below
2**53, else on 32-bit halves), so the text needs no intrinsics and the compiler maps it
to whatever vector unit ``-march`` names (SSE, AVX2, AVX-512, NEON).

It is the same op definitions run on another algebra, not another copy of
them: :class:`VecCAlgebra` only changes how :class:`.ccode.CAlgebra`
writes a term.  A term wider than 64 bits raises :class:`NotVectorizable`;
such models keep the scalar code.
"""

from __future__ import annotations

from .algebra import Bool, Int
from .ccode import CAlgebra, NotCompilable, ctype_bits

__all__ = ["VecCAlgebra", "NotVectorizable", "vector_prelude"]


class NotVectorizable(NotCompilable):
    """A term needs more than 64 bits: the model has no lane-parallel code."""


def vector_prelude(lanes: int) -> str:
    """C typedefs of the lane types (``v32``, ``v64``, ``vf64``) for ``lanes`` lanes and the ``VBL32``/``VBL64`` helpers."""
    return f"""#ifndef SMTMMA_VLANES
#define SMTMMA_VLANES {lanes}
typedef int32_t v32 __attribute__((vector_size({4 * lanes})));
typedef int64_t v64 __attribute__((vector_size({8 * lanes})));
typedef double vf64 __attribute__((vector_size({8 * lanes})));
/* bit length of lanes in [0, 2**53) held in int64 lanes: the biased exponent of their exact double, 0 for 0 */
static inline __attribute__((always_inline)) v64 vbl53(v64 x)
{{
    const vf64 f = __builtin_convertvector(x, vf64);
    v64 e;
    __builtin_memcpy(&e, &f, sizeof e);
    e = (e >> 52) - 1022;
    return e & (v64)(x != 0);
}}
static inline __attribute__((always_inline)) v64 vbl64(v64 x)  /* x in [0, 2**63) */
{{
    const v64 hi = x >> 32;
    const v64 m = (v64)(hi != 0);
    return (m & (vbl53(hi) + 32)) | (~m & vbl53(x & 0xffffffff));
}}
#endif
"""


def _vtype(width: int) -> str:
    if width > 64:
        raise NotVectorizable(f"a {width}-bit term has no vector lane type")
    return "v32" if width == 32 else "v64"


def _splat(value: int, width: int) -> str:
    lit = f"(int32_t){value}" if width == 32 else f"INT64_C({value})"
    if width == 32 and value == -(1 << 31):
        lit = "(int32_t)(-2147483647 - 1)"
    elif width == 64 and value == -(1 << 63):
        lit = "(INT64_C(-9223372036854775807) - 1)"
    return f"(({_vtype(width)}){{0}} + {lit})"


class VecCAlgebra(CAlgebra):
    """Builds the body of a lane-parallel C function: each term a ``v32``/``v64`` local, each boolean a ``v32`` mask."""

    BOOL_TYPE = "v32"

    def _define(self, width: int, expr: str) -> str:
        self._n += 1
        name = f"{self.prefix}{self._n}"
        self.max_width = max(self.max_width, width)
        self.lines.append(f"const {_vtype(width)} {name} = {expr};")
        return name

    def input(self, expr: str, lo: int, hi: int) -> Int:
        """An input term: ``expr``, a vector of unsigned patterns whose lanes lie in [lo, hi]."""
        width = ctype_bits(lo, hi)
        name = self._define(width, f"__builtin_convertvector({expr}, {_vtype(width)})")
        self._inputs.add(name)
        return Int(self, name, lo, hi)

    def expr(self, x: Int, width: int) -> str:
        """``x`` as a vector expression of ``width``-bit lanes (the width must hold x's interval)."""
        if x.const is not None:
            return _splat(x.const, width)
        own = ctype_bits(x.lo, x.hi)
        _vtype(own), _vtype(width)
        return x.raw if own == width else f"__builtin_convertvector({x.raw}, {_vtype(width)})"

    def bexpr(self, c: Bool) -> str:
        """``c`` as a ``v32`` mask (-1 true, 0 false)."""
        if c.const is not None:
            return _splat(-1 if c.const else 0, 32)
        return c.raw

    def _cast(self, e: str, src: int, dst: int) -> str:
        return e if src == dst else f"__builtin_convertvector({e}, {_vtype(dst)})"

    def _mask(self, m: str, width: int) -> str:
        """The v32 mask ``m`` widened to ``width``-bit lanes."""
        return self._cast(m, 32, width)

    def _blend(self, m: str, a: str, b: str) -> str:
        return f"(({m} & {a}) | (~{m} & {b}))"

    # -- primitives ------------------------------------------------------
    def _binary(self, op: str, a: Int, b: Int, lo: int, hi: int) -> str:
        w = ctype_bits(min(lo, a.lo, b.lo), max(hi, a.hi, b.hi))
        r = ctype_bits(lo, hi)
        return self._define(r, self._cast(f"({self.expr(a, w)} {op} {self.expr(b, w)})", w, r))

    def _vamount(self, k: Int, limit: int, width: int) -> str:
        """Shift amount ``k`` as ``width``-bit lanes, capped at ``limit`` where its interval reaches past it."""
        own = ctype_bits(k.lo, k.hi)
        kk = self.expr(k, own)
        if k.hi > limit:
            kk = self._define(own, self._blend(f"({kk} < {_splat(limit, own)})", kk, _splat(limit, own)))
        return self._cast(kk, own, width)

    def _shl(self, a: Int, k: Int, lo: int, hi: int) -> str:
        w = ctype_bits(min(lo, a.lo), max(hi, a.hi))
        r = ctype_bits(lo, hi)
        return self._define(r, self._cast(f"({self.expr(a, w)} << {self._vamount(k, w - 1, w)})", w, r))

    def _shr(self, a: Int, k: Int, lo: int, hi: int) -> str:
        w = ctype_bits(a.lo, a.hi)
        r = ctype_bits(lo, hi)
        return self._define(r, self._cast(f"({self.expr(a, w)} >> {self._vamount(k, w - 1, w)})", w, r))

    def _low_bits(self, a: Int, n: int) -> str:
        w = ctype_bits(min(a.lo, 0), max(a.hi, (1 << n) - 1))
        r = ctype_bits(0, (1 << n) - 1)
        return self._define(r, self._cast(f"({self.expr(a, w)} & {_splat((1 << n) - 1, w)})", w, r))

    def _bit_length(self, a: Int, hi: int) -> str:
        x = self.expr(a, 64)
        f = "vbl53" if hi < (1 << 53) else "vbl64"
        return self._define(32, f"__builtin_convertvector({f}({x}), v32)")

    def _compare(self, op: str, a: Int, b: Int) -> str:
        w = ctype_bits(min(a.lo, b.lo), max(a.hi, b.hi))
        return self._bdefine(self._cast(f"({self.expr(a, w)} {op} {self.expr(b, w)})", w, 32))

    def _lt(self, a: Int, b: Int) -> str:
        return self._compare("<", a, b)

    def _eq(self, a: Int, b: Int) -> str:
        return self._compare("==", a, b)

    def _ite(self, c: Bool, a: Int, b: Int, lo: int, hi: int) -> str:
        r = ctype_bits(lo, hi)
        return self._define(r, self._blend(self._mask(self.bexpr(c), r), self.expr(a, r), self.expr(b, r)))

    def _bite(self, c: Bool, a: Bool, b: Bool) -> str:
        return self._bdefine(self._blend(self.bexpr(c), self.bexpr(a), self.bexpr(b)))

    def _and(self, a: Bool, b: Bool) -> str:
        return self._bdefine(f"({self.bexpr(a)} & {self.bexpr(b)})")

    def _or(self, a: Bool, b: Bool) -> str:
        return self._bdefine(f"({self.bexpr(a)} | {self.bexpr(b)})")

    def _xor(self, a: Bool, b: Bool) -> str:
        return self._bdefine(f"({self.bexpr(a)} ^ {self.bexpr(b)})")

    def _not(self, a: Bool) -> str:
        return self._bdefine(f"(~{self.bexpr(a)})")

    def _b2i(self, a: Bool) -> str:
        return self._define(32, f"(-{self.bexpr(a)})")

    def _extreme(self, which: str, a: Int, b: Int, lo: int, hi: int) -> str:
        w = ctype_bits(min(a.lo, b.lo), max(a.hi, b.hi))
        r = ctype_bits(lo, hi)
        x, y = self.expr(a, w), self.expr(b, w)
        pick = self._blend(f"({x} < {y})", y, x) if which == "max" else self._blend(f"({x} < {y})", x, y)
        return self._define(r, self._cast(pick, w, r))
