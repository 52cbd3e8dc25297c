"""Symbolic interpretation of the algebra: SMT-LIB2 bit-vector terms (QF_BV).

Every term is a ``define-fun`` of a two's-complement bit-vector whose width
comes from the term's static interval, so operands are sign-extended to the
result width and no operation ever wraps: the formula means exactly what
the concrete interpretation computes.  The text is the interchange format
every backend parses (bitwuzla, z3, cvc5) and the archived artefact of a
query (``--emit-smt2``).
"""

from __future__ import annotations

from typing import Any

from .algebra import Algebra, Bool, Int, bits_for

__all__ = ["SmtAlgebra"]


def _lit(value: int, width: int) -> str:
    return f"(_ bv{value % (1 << width)} {width})"


class SmtAlgebra(Algebra):
    """Builds an SMT-LIB2 script: declarations, one ``define-fun`` per term, assertions."""

    def __init__(self, prefix: str = "t") -> None:
        self.prefix = prefix
        self.decls: list[str] = []
        self.defs: list[str] = []
        self.asserts: list[str] = []
        self._n = 0
        self._consts: dict[tuple[int, int], str] = {}

    # -- script ------------------------------------------------------------
    def _define(self, sort: str, expr: str) -> str:
        self._n += 1
        name = f"{self.prefix}{self._n}"
        self.defs.append(f"(define-fun {name} () {sort} {expr})")
        return name

    def var(self, name: str, bits: int) -> Int:
        """A free unsigned input of ``bits`` bits (a bit pattern), as an Int in [0, 2**bits)."""
        self.decls.append(f"(declare-const {name} (_ BitVec {bits}))")
        hi = (1 << bits) - 1
        return Int(self, self._define(f"(_ BitVec {bits + 1})", f"((_ zero_extend 1) {name})"), 0, hi)

    def bvar(self, name: str) -> Bool:
        """A free boolean input."""
        self.decls.append(f"(declare-const {name} Bool)")
        return Bool(self, name)

    def assert_(self, cond: Bool) -> None:
        """Add ``cond`` to the assertions."""
        if cond.const is True:
            return
        self.asserts.append(f"(assert {self._braw(cond)})")

    def bits_of(self, x: Int, bits: int) -> str:
        """An expression of ``bits`` bits for a term known to lie in [0, 2**bits) (an output pattern)."""
        assert x.lo >= 0 and x.hi < (1 << bits), (x, bits)
        if x.const is not None:
            return _lit(x.const, bits)
        return f"((_ extract {bits - 1} 0) {self._ext(x, max(bits + 1, x.width))})"

    def script(self, extra: str = "", *, logic: str = "QF_BV") -> str:
        """The SMT-LIB2 text: logic, declarations, definitions, assertions, then ``extra``."""
        return "\n".join([f"(set-logic {logic})", *self.decls, *self.defs, *self.asserts, extra]) + "\n"

    def term_text(self, x: Int | Bool, width: int | None = None) -> str:
        """The SMT-LIB2 text of a term: a Bool's, or an Int as a ``width``-bit two's-complement expression
        (default: its own width); what a certificate passes to a lemma applied to it."""
        if isinstance(x, Bool):
            return self._braw(x)
        return self._ext(x, x.width if width is None else width)

    # -- width helpers -------------------------------------------------------
    def _ext(self, x: Int, width: int) -> str:
        """x as a ``width``-bit expression: sign-extended, or cut when its value fits."""
        if x.const is not None:
            return _lit(x.const, width)
        w = x.width
        if w < width:
            return f"((_ sign_extend {width - w}) {x.raw})"
        if w > width:
            return f"((_ extract {width - 1} 0) {x.raw})"
        return str(x.raw)

    def _braw(self, b: Bool) -> str:
        if b.const is not None:
            return "true" if b.const else "false"
        return str(b.raw)

    def _bin(self, op: str, a: Int, b: Int, lo: int, hi: int) -> str:
        w = bits_for(lo, hi)
        return self._define(f"(_ BitVec {w})", f"({op} {self._ext(a, w)} {self._ext(b, w)})")

    # -- primitives ----------------------------------------------------------
    def _const(self, value: int, lo: int, hi: int) -> Any:
        return None  # constants are written as literals where used (Int.const)

    def _bconst(self, value: bool) -> Any:
        return "true" if value else "false"

    def _add(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._bin("bvadd", a, b, lo, hi)

    def _sub(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._bin("bvsub", a, b, lo, hi)

    def _mul(self, a: Int, b: Int, lo: int, hi: int) -> Any:
        return self._bin("bvmul", a, b, lo, hi)

    def _shl(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        w = max(bits_for(lo, hi), k.width)
        expr = f"(bvshl {self._ext(a, w)} {self._ext(k, w)})"
        out = bits_for(lo, hi)
        if out < w:
            expr = f"((_ extract {out - 1} 0) {expr})"
        return self._define(f"(_ BitVec {out})", expr)

    def _shr(self, a: Int, k: Int, lo: int, hi: int) -> Any:
        w = max(a.width, k.width)
        expr = f"(bvashr {self._ext(a, w)} {self._ext(k, w)})"
        out = bits_for(lo, hi)
        if out < w:
            expr = f"((_ extract {out - 1} 0) {expr})"
        elif out > w:
            expr = f"((_ sign_extend {out - w}) {expr})"
        return self._define(f"(_ BitVec {out})", expr)

    def _low_bits(self, a: Int, n: int) -> Any:
        w = max(a.width, n)
        return self._define(f"(_ BitVec {n + 1})", f"((_ zero_extend 1) ((_ extract {n - 1} 0) {self._ext(a, w)}))")

    def _bit_length(self, a: Int, hi: int) -> Any:
        n = hi.bit_length()
        out = bits_for(0, n)
        x = self._ext(a, n + 1)
        expr = _lit(0, out)
        for i in range(n):  # from the lowest bit up, so the highest set bit wins
            expr = f"(ite (= ((_ extract {i} {i}) {x}) #b1) {_lit(i + 1, out)} {expr})"
        return self._define(f"(_ BitVec {out})", expr)

    def _cmp(self, op: str, a: Int, b: Int) -> str:
        w = max(a.width, b.width)
        return self._define("Bool", f"({op} {self._ext(a, w)} {self._ext(b, w)})")

    def _lt(self, a: Int, b: Int) -> Any:
        return self._cmp("bvslt", a, b)

    def _eq(self, a: Int, b: Int) -> Any:
        return self._cmp("=", a, b)

    def _ite(self, c: Bool, a: Int, b: Int, lo: int, hi: int) -> Any:
        w = bits_for(lo, hi)
        return self._define(f"(_ BitVec {w})", f"(ite {self._braw(c)} {self._ext(a, w)} {self._ext(b, w)})")

    def _bite(self, c: Bool, a: Bool, b: Bool) -> Any:
        return self._define("Bool", f"(ite {self._braw(c)} {self._braw(a)} {self._braw(b)})")

    def _and(self, a: Bool, b: Bool) -> Any:
        return self._define("Bool", f"(and {self._braw(a)} {self._braw(b)})")

    def _or(self, a: Bool, b: Bool) -> Any:
        return self._define("Bool", f"(or {self._braw(a)} {self._braw(b)})")

    def _xor(self, a: Bool, b: Bool) -> Any:
        return self._define("Bool", f"(xor {self._braw(a)} {self._braw(b)})")

    def _not(self, a: Bool) -> Any:
        return self._define("Bool", f"(not {self._braw(a)})")

    def _b2i(self, a: Bool) -> Any:
        return self._define("(_ BitVec 2)", f"(ite {self._braw(a)} #b01 #b00)")
