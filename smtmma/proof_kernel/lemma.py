"""Lemmas as SMT-LIB functions of their arguments: stated once, proved on fresh constants, applied to a run's terms.

A :class:`Lemma` is a Boolean ``define-fun`` whose parameters are the
statement's arguments (a Bool, or an integer of a given range as a
two's-complement bit-vector) and whose body is the statement built by the
ops' own functions (:mod:`smtmma.encodings`), its intermediate terms as
``let`` bindings.  :meth:`Lemma.proof` is the check that proves it for every
argument (``(assert (not (L c1 ... cn)))`` on fresh constants, expecting
unsat); :meth:`Lemma.apply` is the text ``(L t1 ... tn)`` on a run's terms,
asserted where a query needs it.  That an instance *is* that lemma is then
a syntactic fact a checker reads off the file
(``proofs/check_certificate.py``), not a comment.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

from ..encodings.algebra import Bool, Int, bits_for
from ..encodings.symbolic import SmtAlgebra

__all__ = ["Arg", "Helper", "Param", "Lemma", "closed_term", "composed", "lemma", "let_body", "range_premise"]

Arg = Union[Int, Bool]
Statement = Callable[[SmtAlgebra, Sequence[Arg]], Bool]
#: a lemma a composed lemma's proof applies: (label, statement, arguments built from the composed lemma's parameters)
Helper = tuple[str, Statement, Sequence[Arg]]

_DEF = re.compile(r"\(define-fun (\S+) \(\) (Bool|\(_ BitVec \d+\)) (.*)\)\s*$", re.S)
_NAME = re.compile(r"(?<![\w.])v\d+(?![\w.])")
_PARAM = re.compile(r"(?<![\w.])a\d+(?![\w.])")


@dataclass(frozen=True)
class Param:
    """One argument of a lemma: ``Bool``, or an integer in [lo, hi] as a ``bits``-bit two's-complement bit-vector."""

    name: str
    lo: int = 0
    hi: int = 1
    boolean: bool = False

    @property
    def bits(self) -> int:
        """Width of the bit-vector (bits, sign included)."""
        return bits_for(self.lo, self.hi)

    @property
    def sort(self) -> str:
        """The SMT-LIB sort."""
        return "Bool" if self.boolean else f"(_ BitVec {self.bits})"

    def in_range(self) -> str:
        """The premise lo <= param <= hi ("" when every value of the width is in range)."""
        if self.boolean:
            return ""
        w = self.bits
        lit = lambda v: f"(_ bv{v % (1 << w)} {w})"  # noqa: E731
        parts = ([f"(bvsle {lit(self.lo)} {self.name})"] if self.lo > -(1 << (w - 1)) else []) + \
                ([f"(bvsle {self.name} {lit(self.hi)})"] if self.hi < (1 << (w - 1)) - 1 else [])
        return " ".join(parts)


@dataclass(frozen=True)
class Lemma:
    """A statement proved once for every argument in its parameters' ranges; ``name`` is its SMT-LIB symbol."""

    label: str
    name: str
    params: tuple[Param, ...]
    body: str  # the Bool body over the parameters
    #: earlier lemmas its proof applies to its own fresh constants: (lemma, application text over the parameter
    #: names a0, a1, ...), each asserted in the proof's scope (a step one solver cannot take alone: z3 proves the
    #: ring step "(s + 1) t = s t + t" at the product's width, not through the model's sign extensions)
    given: tuple[tuple["Lemma", str], ...] = ()

    @property
    def definition(self) -> str:
        """``(define-fun NAME ((a0 S0) ...) Bool BODY)``."""
        ps = " ".join(f"({p.name} {p.sort})" for p in self.params)
        return f"(define-fun {self.name} ({ps}) Bool {self.body})"

    def _negated(self) -> list[str]:
        """One fresh constant per parameter, declared, the :attr:`given` applications to them asserted, and the
        lemma applied to them asserted false."""
        fresh = [f"{self.name}.{p.name}" for p in self.params]
        app = f"({self.name} {' '.join(fresh)})" if fresh else self.name
        given = [f"(assert {_PARAM.sub(lambda m: f'{self.name}.{m.group(0)}', text)})" for _, text in self.given]
        return [*(f"(declare-const {f} {p.sort})" for f, p in zip(fresh, self.params)), *given, f"(assert (not {app}))"]

    def helpers(self) -> list["Lemma"]:
        """The lemmas its proof applies, theirs first, each once."""
        out: list[Lemma] = []
        for h, _ in self.given:
            out += [x for x in [*h.helpers(), h] if all(x.name != y.name for y in out)]
        return out

    def with_given(self, helper: "Lemma", args: Sequence[str]) -> "Lemma":
        """This lemma, its proof also given ``helper`` applied to ``args`` (texts over the parameter names)."""
        return Lemma(self.label, self.name, self.params, self.body, (*self.given, (helper, f"({helper.name} {' '.join(args)})")))

    def proof(self) -> str:
        """The check that proves it: a scope with one fresh constant per parameter and the negated application."""
        return "\n".join([f"; lemma {self.name}: {self.label}", "(push 1)", *self._negated(), "; expect: unsat",
                          "(check-sat)", "(pop 1)"])

    def script(self) -> str:
        """The proof as one stand-alone query (definition and negated application; no check-sat)."""
        return "\n".join(["(set-logic QF_BV)", *(h.definition for h in self.helpers()), self.definition, *self._negated()]) + "\n"

    def apply(self, alg: SmtAlgebra, args: Sequence[Arg]) -> str:
        """``(NAME t1 ... tn)``: the lemma applied to terms of ``alg`` (each within its parameter's range)."""
        if len(args) != len(self.params):
            raise ValueError(f"{self.label}: {len(args)} arguments for {len(self.params)} parameters")
        texts = []
        for p, a in zip(self.params, args):
            if p.boolean != isinstance(a, Bool):
                raise ValueError(f"{self.label}: argument {p.name} must be {'a Bool' if p.boolean else 'an integer'}")
            if isinstance(a, Int) and (a.lo < p.lo or a.hi > p.hi):
                raise ValueError(f"{self.label}: argument {p.name} spans [{a.lo}, {a.hi}], the lemma [{p.lo}, {p.hi}]")
            texts.append(alg.term_text(a, None if p.boolean else p.bits))
        return f"({self.name} {' '.join(texts)})" if texts else self.name


def range_premise(alg: SmtAlgebra, x: Int) -> Bool:
    """The premise lo <= x <= hi that a lemma applied to ``x`` (a parameter of x's range) asserts of it, word for
    word, so that a fact stating it answers that premise of every such application at once (true when x's width
    allows nothing outside its range)."""
    text = Param(alg.term_text(x, bits_for(x.lo, x.hi)), x.lo, x.hi).in_range()
    return Bool(alg, f"(and {text} true)") if text else alg.bconst(True)


def let_body(defs: Sequence[str], result: str) -> str:
    """``result`` under ``let`` bindings of ``defs`` (``(define-fun vK () SORT EXPR)`` lines, names ``v<k>``),
    one ``let`` per dependency level (so nesting grows with the terms' depth, not their number)."""
    level: dict[str, int] = {}
    rows: list[tuple[str, str, int]] = []
    for d in defs:
        m = _DEF.match(d)
        if m is None:
            raise ValueError(f"not a term definition: {d[:60]!r}")
        name, expr = m.group(1), m.group(3)
        lv = 1 + max((level.get(n, 0) for n in _NAME.findall(expr)), default=0)
        level[name] = lv
        rows.append((name, expr, lv))
    text = result
    for lv in range(max(level.values(), default=0), 0, -1):
        binds = " ".join(f"({n} {e})" for n, e, k in rows if k == lv)
        text = f"(let ({binds}) {text})"
    return text


def lemma(label: str, statement: Statement, args: Sequence[Arg], *, name: str = "",
          span: Optional[tuple[int, int]] = None) -> Lemma:
    """The lemma "``statement`` holds for every argument in the ranges of ``args``" (built on parameters, not on
    ``args``; the statement is the same function that builds its instances).  ``name``: its symbol (default: a
    hash of the definition, so equal lemmas get equal names).  ``span``: one range (lo, hi) for every integer
    parameter instead, containing each argument's (one lemma then serves arguments of different ranges)."""
    fresh = SmtAlgebra(prefix="v")
    params: list[Param] = []
    vs: list[Arg] = []
    for i, a in enumerate(args):
        if isinstance(a, Bool):
            params.append(Param(f"a{i}", boolean=True))
            vs.append(Bool(fresh, f"a{i}"))
        else:
            lo, hi = (a.lo, a.hi) if span is None else span
            if not lo <= a.lo <= a.hi <= hi:
                raise ValueError(f"{label}: argument a{i} spans [{a.lo}, {a.hi}], outside the lemma's [{lo}, {hi}]")
            params.append(Param(f"a{i}", lo, hi))
            vs.append(Int(fresh, f"a{i}", lo, hi))
    goal = statement(fresh, vs)
    if fresh.decls or fresh.asserts:
        raise ValueError(f"{label}: a lemma's statement may not declare or assert anything")
    ranges = " ".join(r for r in (p.in_range() for p in params) if r)
    result = fresh.term_text(goal)
    if ranges:
        result = f"(=> (and {ranges} true) {result})"
    body = let_body(fresh.defs, result)
    if not name:
        digest = hashlib.sha1(("".join(p.sort + str((p.lo, p.hi)) for p in params) + body).encode()).hexdigest()
        name = f"lemma_{digest[:10]}"
    return Lemma(label, name, tuple(params), body)


def closed_term(alg: SmtAlgebra, x: Arg, width: Optional[int] = None) -> str:
    """The text of ``x`` (a term of ``alg``, as :meth:`~smtmma.encodings.symbolic.SmtAlgebra.term_text` writes it at
    ``width`` bits) with the definitions it depends on bound by ``let``: one expression over ``alg``'s declared
    names alone (definition names ``v<k>``, as :func:`let_body` needs)."""
    if alg.prefix != "v":
        raise ValueError(f"closed_term needs an algebra whose definitions are named v<k>, not {alg.prefix}<k>")
    text = alg.term_text(x, width)
    defs = {}
    for d in alg.defs:
        m = _DEF.match(d)
        if m is None:
            raise ValueError(f"not a term definition: {d[:60]!r}")
        defs[m.group(1)] = (d, m.group(3))
    need: set[str] = set()
    todo = _NAME.findall(text)
    while todo:
        n = todo.pop()
        if n in defs and n not in need:
            need.add(n)
            todo += _NAME.findall(defs[n][1])
    return let_body([d for n, (d, _) in defs.items() if n in need], text)


def composed(label: str, statement: Statement, args: Sequence[Arg], helpers: Callable[[SmtAlgebra, Sequence[Arg]], Sequence[Helper]],
             *, span: Optional[tuple[int, int]] = None) -> Lemma:
    """The lemma "``statement`` holds" (:func:`lemma`), its proof given helper lemmas applied to terms of its own
    parameters: ``helpers(g, params)`` builds, in a fresh algebra ``g`` whose parameters are named as the lemma's
    (a0, a1, ...), each helper's (label, statement, arguments); each helper is the lemma of those arguments' ranges,
    proved on its own fresh constants, and asserted in this lemma's proof scope applied to the arguments' closed
    terms (:func:`closed_term`).  So a proof that a solver answers only in steps is one lemma whose steps a
    checker reads off the file: each is an application of a proved lemma."""
    main = lemma(label, statement, args, span=span)
    g = SmtAlgebra(prefix="v")
    params: list[Arg] = [Bool(g, p.name) if p.boolean else Int(g, p.name, p.lo, p.hi) for p in main.params]
    given = list(main.given)
    for h_label, h_statement, h_args in helpers(g, params):
        h = lemma(h_label, h_statement, h_args)
        texts = [closed_term(g, a, None if p.boolean else p.bits) for a, p in zip(h_args, h.params)]
        given.append((h, f"({h.name} {' '.join(texts)})" if texts else h.name))
    return Lemma(main.label, main.name, main.params, main.body, tuple(given))
