"""Facts about CDNA2's FTZ-AddMul (Alg. 1-2, encodings/addmul.py): FTZ-Mul and FTZ-Add monotone in each argument.

:func:`negated_chain_facts` (symmetry): on (-A, B, -C) every FTZ-Mul and FTZ-Add is the original negated, in the
order the model runs them.

:func:`prove_monotone`: a compositional proof over Alg. 2's tree of IEEE operations, each monotone.

FTZ-AddMul computes D = c + ((p0 + p1) + (p2 + p3)) per group of P = 4 lanes
(c + (p0 + p1) for P = 2), every p_k = FTZ-Mul(a_k, b_k) and every + an
FTZ-Add in FP32 (Alg. 1), the inputs flushed first.  Raising one input moves
one leaf of that tree, and a tree of operations each monotone in each operand
is monotone; so the proof is one lemma per operation, on fresh operands, and a
composition over the tree.  The whole-model query, or even "the FTZ add is
monotone" as one check, takes minutes (issue 8: 43-50 s for the add alone);
split by exponent cases, every check here takes seconds.  The lemmas (each a
check-sat expecting unsat) are, with nn(x) "x is a non-negative non-NaN FP32
pattern" (sign bit 0, at most +inf: value order is pattern order):

* **glue** (the model, every input): D equals the tree evaluated with the
  operations below -- the tree is built here, the model in
  :func:`simulate.run_model`, and the solver checks they agree;
* **add** (Alg. 1 line 2): nn(x), nn(x'), nn(y), x <= x' give nn results and
  x + y <= x' + y, in exponent cases (x' in x's binade, one or more above;
  y's exponent field relative to x's), plus a check that the cases cover
  every input; **add commutes**, for the other operand;
* **mul** (Alg. 1 lines 4-5, inputs flushed, Alg. 2 lines 1-3): raising a
  finite non-negative input to its next value (:func:`~smtmma.op_proofs.moves.next_moves`)
  never lowers the product, by cases: a zero raised, a subnormal raised (it
  flushes to zero), the exponent field up; in the same binade the
  significand is s + 1 (**next pattern**), the product grows by t
  (**product step**, an equality the rewriter proves) and rounding is
  monotone in the exact product (**rounding step**, fresh products);
  products are nn; **mul commutes**, for b;
* **c** (Alg. 2 line 1): raising c never lowers flushed c; flushed c is nn;
* **composition**, one per input position: the tree over fresh variables
  (one per operation applied), with each lemma assumed as a ground instance
  at each node the raised input reaches; D of the larger input below D of
  the smaller is unsat.

As in :mod:`~smtmma.op_proofs.tfdpa`, applying a lemma stated on fresh operands to
the model's operations is the step no solver checks (the composition names
each application by its operands); every lemma is a check-sat of the
certificate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Union

from ..encodings.addmul import add, flush_input, mul, round_product
from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.terms import Specials, Term
from ..formats import Format, get_format
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.parts import Part, PartsProof, implies, negated_script, ranged_var, run_parts
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner, value_key
from ..simulate import decode_input, flush_input_bits, nan_pattern, run_model
from .fused_sum import negated_rounded_sum2
from .moves import finite_nonneg, next_value
from .rounding import negated_output_fact

__all__ = ["AddMulOps", "Node", "TreeComposition", "add_lemmas", "addmul_tree", "c_lemma", "evaluate_tree", "glue_lemma",
           "mul_lemmas", "negated_chain_facts", "prove_monotone", "supports_monotone", "supports_symmetry"]


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`prove_monotone` applies: FTZ-AddMul with flushed inputs, A and B of one format, FP32 C and D."""
    return (model.kind == "ftz-addmul" and model.ftz_inputs and model.via is None and model.a_fmt == model.b_fmt
            and model.c_fmt == "fp32" and model.d_fmt == "fp32" and model.P in (2, 4) and K >= 1)


# -- the tree ------------------------------------------------------------------------------------------

#: a node: ("c",) flushed c; ("p", k) lane k's product; ("zero",) a padding lane; ("add", left, right)
Node = Union[tuple[str], tuple[str, int], tuple[str, "Node", "Node"]]


def addmul_tree(K: int, P: int) -> Node:
    """Alg. 2's order of operations for K lanes in groups of P: d = d + ((p0 + p1) + (p2 + p3)), d starting at c."""
    d: Node = ("c",)
    for k0 in range(0, K, P):
        p: list[Node] = [("p", k) if k < K else ("zero",) for k in range(k0, k0 + P)]
        s: Node = ("add", p[0], p[1])
        if P == 4:
            s = ("add", s, ("add", p[2], p[3]))
        d = ("add", d, s)
    return d


@dataclass
class AddMulOps:
    """The model's operations on patterns: FTZ-Mul of two raw inputs, flushed c, FTZ-Add in FP32."""

    model: Model
    fin: Format  # A's and B's format
    fc: Format  # C's (FP32)
    f32: Format

    @classmethod
    def of(cls, model: Model) -> "AddMulOps":
        return cls(model, get_format(model.a_fmt), get_format(model.c_fmt), get_format("fp32"))

    @property
    def nan(self) -> int:
        return nan_pattern(self.model, self.f32)

    def dec(self, alg: QueryAlgebra, x: Int) -> Unpacked:
        """A raw input as the unit reads it: decoded, then flushed (Alg. 2 lines 1-3)."""
        return flush_input(alg, decode_input(alg, self.fin, x, self.model.via))

    def mul(self, alg: QueryAlgebra, x: Int, y: Int) -> Int:
        return mul(alg, self.dec(alg, x), self.dec(alg, y), out=self.f32, ftz=True, nan_bits=self.nan)

    def add(self, alg: QueryAlgebra, x: Int, y: Int) -> Int:
        return add(alg, unpack(alg, self.f32, x), unpack(alg, self.f32, y), out=self.f32, ftz=True, nan_bits=self.nan)

    def c(self, alg: QueryAlgebra, c: Int) -> Int:
        return flush_input_bits(alg, self.fc, c)


def evaluate_tree(alg: QueryAlgebra, ops: AddMulOps, tree: Node, a: list[Int], b: list[Int], c: Int) -> Int:
    """The tree's D bits with the model's operations."""
    if tree[0] == "add":
        return ops.add(alg, evaluate_tree(alg, ops, tree[1], a, b, c), evaluate_tree(alg, ops, tree[2], a, b, c))  # type: ignore[misc]
    if tree[0] == "p":
        k = tree[1]  # type: ignore[misc]
        return ops.mul(alg, a[k], b[k])
    return ops.c(alg, c) if tree[0] == "c" else alg.const(0)


# -- predicates shared by the lemmas and the composition ------------------------------------------------


def _nn(alg: QueryAlgebra, f32: Format, x: Int) -> Bool:
    """x is a non-negative non-NaN FP32 pattern: sign bit 0 and at most +inf (value order is pattern order)."""
    return alg.le(x, f32.inf_bits())


# -- lemmas -------------------------------------------------------------------------------------------


def glue_lemma(model: Model, K: int, ops: AddMulOps) -> Part:
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    d = run_model(alg, model, x.a, x.b, x.c)
    t = evaluate_tree(alg, ops, addmul_tree(K, model.P or 0), list(x.a), list(x.b), x.c)
    return Part(f"glue: the model's D is Alg. 2's tree of FTZ-Mul, FTZ-Add and flushed c (K={K}, P={model.P}, every input)",
                  negated_script(alg, alg.eq(d, t)))


#: exponent-field cases of the add lemma: (e(x') - e(x) range, e(y) - e(x) ranges); None: unbounded
_SAME_BINADE_Y = ((None, -26), (-25, -2), (-1, -1), (0, 0), (1, 1), (2, 2), (3, 25), (26, None))
_ADD_CASES: tuple[tuple[tuple[int, Union[int, None]], tuple[Union[int, None], Union[int, None]]], ...] = (
    *(((0, 0), y) for y in _SAME_BINADE_Y),
    *(((1, 1), y) for y in ((None, 0), (1, 1), (2, None))),
    *(((2, None), y) for y in ((None, 0), (1, 1), (2, None))),
)


def _in_case(alg: QueryAlgebra, d: Int, rng: tuple[Union[int, None], Union[int, None]]) -> Bool:
    lo, hi = rng
    parts = ([alg.le(lo, d)] if lo is not None else []) + ([alg.le(d, hi)] if hi is not None else [])
    return alg.all(parts)


def _add_operands(alg: QueryAlgebra, ops: AddMulOps) -> tuple[Int, Int, Int, list[Bool], Int, Int]:
    """Fresh x <= x', y, all nn; the premise list and the exponent-field differences e(x') - e(x), e(y) - e(x)."""
    f = ops.f32
    x, x2, y = (alg.var(n, f.bits) for n in ("x", "x2", "y"))
    premise = [_nn(alg, f, x), _nn(alg, f, x2), _nn(alg, f, y), alg.le(x, x2)]
    e = [alg.bits(v, f.bits - 2, f.man_bits) for v in (x, x2, y)]
    return x, x2, y, premise, alg.sub(e[1], e[0]), alg.sub(e[2], e[0])


def _add_monotone(alg: QueryAlgebra, ops: AddMulOps, x: Int, x2: Int, y: Int) -> Bool:
    """The add lemma's conclusion: nn(x + y), nn(x' + y), x + y <= x' + y."""
    r1, r2 = ops.add(alg, x, y), ops.add(alg, x2, y)
    return alg.all([_nn(alg, ops.f32, r1), _nn(alg, ops.f32, r2), alg.le(r1, r2)])


def add_lemmas(ops: AddMulOps) -> list[Part]:
    out = []
    alg = QueryAlgebra()
    x, x2, y, premise, dx, dy = _add_operands(alg, ops)
    cases = alg.any(alg.and_(_in_case(alg, dx, cx), _in_case(alg, dy, cy)) for cx, cy in _ADD_CASES)
    out.append(Part(f"add: the {len(_ADD_CASES)} exponent cases below cover every nn x <= x', y", negated_script(alg, implies(alg, premise, cases))))
    for cx, cy in _ADD_CASES:
        alg = QueryAlgebra()
        x, x2, y, premise, dx, dy = _add_operands(alg, ops)
        premise += [_in_case(alg, dx, cx), _in_case(alg, dy, cy)]
        out.append(Part(f"add (Alg. 1 line 2): nn x <= x', nn y give nn sums and x + y <= x' + y, for e(x') - e(x) in "
                          f"{_show(cx)}, e(y) - e(x) in {_show(cy)}", negated_script(alg, implies(alg, premise, _add_monotone(alg, ops, x, x2, y)))))
    alg = QueryAlgebra()
    x, y = alg.var("x", 32), alg.var("y", 32)
    out.append(Part("add commutes: x + y = y + x for nn x, y",
                      negated_script(alg, implies(alg, [_nn(alg, ops.f32, x), _nn(alg, ops.f32, y)], alg.eq(ops.add(alg, x, y), ops.add(alg, y, x))))))
    return out


def _show(rng: tuple[Union[int, None], Union[int, None]]) -> str:
    lo, hi = rng
    return f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"


def _mul_operands(alg: QueryAlgebra, ops: AddMulOps) -> tuple[Int, Int, Int, list[Bool]]:
    """Fresh raw inputs x, its next value x', and y, all finite non-negative."""
    f = ops.fin
    x, x2, y = (alg.var(n, f.bits) for n in ("x", "x2", "y"))
    return x, x2, y, [finite_nonneg(alg, f, x), finite_nonneg(alg, f, x2), finite_nonneg(alg, f, y), next_value(alg, f, x, x2)]


def _mul_monotone(alg: QueryAlgebra, ops: AddMulOps, r1: Int, r2: Int) -> Bool:
    return alg.all([_nn(alg, ops.f32, r1), _nn(alg, ops.f32, r2), alg.le(r1, r2)])


def mul_lemmas(ops: AddMulOps) -> list[Part]:
    f, f32 = ops.fin, ops.f32
    out = []
    cases: list[tuple[str, Callable[[QueryAlgebra, Int, Int], Bool]]] = [
        ("x is a zero", lambda alg, x, x2: unpack(alg, f, x).is_zero),
        ("x is subnormal (flushed to +0)", lambda alg, x, x2: alg.and_(alg.not_(unpack(alg, f, x).is_zero),
                                                                       alg.eq(alg.bits(x, f.bits - 2, f.man_bits), 0))),
        ("x normal, the exponent field up by one", lambda alg, x, x2: alg.and_(
            alg.ne(alg.bits(x, f.bits - 2, f.man_bits), 0),
            alg.ne(alg.bits(x, f.bits - 2, f.man_bits), alg.bits(x2, f.bits - 2, f.man_bits)))),
    ]
    for what, case in cases:
        alg = QueryAlgebra()
        x, x2, y, premise = _mul_operands(alg, ops)
        goal = _mul_monotone(alg, ops, ops.mul(alg, x, y), ops.mul(alg, x2, y))
        out.append(Part(f"mul (Alg. 1 lines 4-5, inputs flushed): raising x to its next value never lowers x * y; {what}",
                          negated_script(alg, implies(alg, premise + [case(alg, x, x2)], goal))))
    # the same binade: the cases above and this one cover every move (zero, subnormal, normal: field up or not)
    alg = QueryAlgebra()
    x, x2, y, premise = _mul_operands(alg, ops)
    ex, ex2 = alg.bits(x, f.bits - 2, f.man_bits), alg.bits(x2, f.bits - 2, f.man_bits)
    premise += [alg.ne(ex, 0), alg.eq(ex, ex2)]
    u, u2 = ops.dec(alg, x), ops.dec(alg, x2)
    same = alg.all([alg.eq(u2.sig, alg.add(u.sig, 1)), alg.eq(u2.exp, u.exp), alg.not_(u.neg), alg.not_(u2.neg),
                    alg.not_(alg.any([u.is_zero, u.is_inf, u.is_nan, u2.is_zero, u2.is_inf, u2.is_nan]))])
    out.append(Part("mul, x normal in the same binade as x' (next pattern): x' has x's exponent and significand s + 1, "
                      "both positive finite", negated_script(alg, implies(alg, premise, same))))
    probe = QueryAlgebra()
    ps = unpack(probe, f, probe.var("x", f.bits))
    alg = QueryAlgebra()
    s = ranged_var(alg, "s", 0, ps.sig.hi - 1)
    t = ranged_var(alg, "t", 0, ps.sig.hi)
    out.append(Part("mul, product step: (s + 1) * t = s * t + t (significands, exact)",
                      negated_script(alg, alg.eq(alg.mul(alg.add(s, 1), t), alg.add(alg.mul(s, t), t)))))
    alg = QueryAlgebra()
    s, t = ranged_var(alg, "s", 0, ps.sig.hi - 1), ranged_var(alg, "t", 0, ps.sig.hi)
    P = ranged_var(alg, "P", 0, alg.mul(s, t).hi)
    e = ranged_var(alg, "e", 2 * ps.exp.lo, 2 * ps.exp.hi)
    none = Specials(alg.bconst(False), alg.bconst(False), alg.bconst(False))
    frac = 2 * ps.frac
    r1 = round_product(alg, Term(alg.bconst(False), P, e, frac), none, out=f32, ftz=True, nan_bits=ops.nan)
    r2 = round_product(alg, Term(alg.bconst(False), alg.add(P, t), e, frac), none, out=f32, ftz=True, nan_bits=ops.nan)
    out.append(Part("mul, rounding step: for an exact non-negative product P * 2**(e - frac), rounding P + t gives no less "
                      "than rounding P (FTZ-Mul's RNE and flush, fresh P, t, e)", negated_script(alg, _mul_monotone(alg, ops, r1, r2))))
    alg = QueryAlgebra()
    x, y = alg.var("x", f.bits), alg.var("y", f.bits)
    ok = [finite_nonneg(alg, f, x), finite_nonneg(alg, f, y)]
    m = ops.mul(alg, x, y)
    out.append(Part("mul of finite non-negative inputs is nn, and commutes: x * y = y * x",
                      negated_script(alg, implies(alg, ok, alg.and_(_nn(alg, f32, m), alg.eq(m, ops.mul(alg, y, x)))))))
    return out


def c_lemma(ops: AddMulOps) -> Part:
    alg = QueryAlgebra()
    f = ops.fc
    c, c2 = alg.var("c", f.bits), alg.var("c2", f.bits)
    r1, r2 = ops.c(alg, c), ops.c(alg, c2)
    goal = alg.all([_nn(alg, ops.f32, r1), alg.or_(alg.not_(alg.and_(finite_nonneg(alg, f, c2), next_value(alg, f, c, c2))),
                                                   alg.and_(_nn(alg, ops.f32, r2), alg.le(r1, r2)))])
    return Part("c (Alg. 2 line 1): flushed c is nn, and raising c to its next value never lowers it",
                negated_script(alg, implies(alg, [finite_nonneg(alg, f, c)], goal)))


# -- composition ----------------------------------------------------------------------------------------


class TreeComposition:
    """The tree over fresh variables: one per operation applied (named by its operands), lemma instances asserted."""

    def __init__(self, model: Model, ops: AddMulOps, K: int) -> None:
        self.alg = QueryAlgebra()
        self.ops, self.K = ops, K
        self.apps: dict[tuple[str, ...], Int] = {}
        self.facts: list[Bool] = []
        f, alg = ops.fin, self.alg
        self.a = [alg.var(f"a{k}", f.bits) for k in range(K)]
        self.b = [alg.var(f"b{k}", f.bits) for k in range(K)]
        self.c = alg.var("c", ops.fc.bits)
        self.premise = [finite_nonneg(alg, f, v) for v in self.a + self.b] + [finite_nonneg(alg, ops.fc, self.c)]
        self.zero = alg.const(0)

    def app(self, op: str, *args: Int) -> Int:
        key = (op, *(a.raw for a in args))
        if key not in self.apps:
            self.apps[key] = self.alg.var(f"{op}{len(self.apps)}", 32)
        return self.apps[key]

    def nn(self, x: Int) -> Bool:
        return _nn(self.alg, self.ops.f32, x)

    def add_step(self, l1: Int, l2: Int, r1: Int, r2: Int) -> Int:
        """fadd(l1, r1) <= fadd(l2, r2) from the add lemma twice and commutativity twice; fadd(l2, r2)'s variable."""
        alg, nn = self.alg, self.nn
        for x, x2, y in ((l1, l2, r1), (r1, r2, l2)):
            s1, s2 = self.app("fadd", x, y), self.app("fadd", x2, y)
            self.facts.append(implies(alg, [nn(x), nn(x2), nn(y), alg.le(x, x2)], alg.all([nn(s1), nn(s2), alg.le(s1, s2)])))
        for x, y in ((l2, r1), (r2, l2)):
            self.facts.append(implies(alg, [nn(x), nn(y)], alg.eq(self.app("fadd", x, y), self.app("fadd", y, x))))
        return self.app("fadd", l2, r2)

    def leaf(self, tree: Node, a: list[Int], b: list[Int], c: Int, a2: list[Int], b2: list[Int], c2: Int) -> tuple[Int, Int]:
        alg, f = self.alg, self.ops.fin
        if tree[0] == "zero":
            return self.zero, self.zero
        if tree[0] == "c":
            v1, v2 = self.app("fc", c), self.app("fc", c2)
            moved = next_value(alg, self.ops.fc, c, c2)
            self.facts.append(implies(alg, [finite_nonneg(alg, self.ops.fc, c)], alg.and_(
                self.nn(v1), implies(alg, [finite_nonneg(alg, self.ops.fc, c2), moved], alg.and_(self.nn(v2), alg.le(v1, v2))))))
            return v1, v2
        k = tree[1]  # type: ignore[misc]
        x, y, x2, y2 = a[k], b[k], a2[k], b2[k]
        for u, v in ((x, y), (x2, y2), (x2, y)):
            self.facts.append(implies(alg, [finite_nonneg(alg, f, u), finite_nonneg(alg, f, v)],
                                       alg.and_(self.nn(self.app("fmul", u, v)), alg.eq(self.app("fmul", u, v), self.app("fmul", v, u)))))
        for u, u2, v in ((x, x2, y), (y, y2, x2)):  # raise a (b fixed), then b (a raised or not): fmul(b, a) by commutativity
            m1, m2 = self.app("fmul", u, v), self.app("fmul", u2, v)
            self.facts.append(implies(alg, [finite_nonneg(alg, f, u), finite_nonneg(alg, f, u2), finite_nonneg(alg, f, v), next_value(alg, f, u, u2)],
                                       alg.all([self.nn(m1), self.nn(m2), alg.le(m1, m2)])))
        return self.app("fmul", x, y), self.app("fmul", x2, y2)

    def walk(self, tree: Node, *inputs: object) -> tuple[Int, Int]:
        if tree[0] != "add":
            return self.leaf(tree, *inputs)  # type: ignore[arg-type]
        l1, l2 = self.walk(tree[1], *inputs)  # type: ignore[arg-type]
        r1, r2 = self.walk(tree[2], *inputs)  # type: ignore[arg-type]
        return self.app("fadd", l1, r1), self.add_step(l1, l2, r1, r2)

    def position(self, tree: Node, label: str) -> Part:
        """Raising input ``label`` (c, a<k>, b<k>) never lowers D, from the lemma instances along the tree."""
        alg, ops = self.alg, self.ops
        a2, b2, c2 = list(self.a), list(self.b), self.c
        who = label[0]
        if who == "c":
            c2 = alg.var("c_2", ops.fc.bits)
            raised, moved = c2, next_value(alg, ops.fc, self.c, c2)
        else:
            k = int(label[1:])
            lanes = a2 if who == "a" else b2
            lanes[k] = alg.var(f"{label}_2", ops.fin.bits)
            raised, moved = lanes[k], next_value(alg, ops.fin, (self.a if who == "a" else self.b)[k], lanes[k])
        fmt = ops.fc if who == "c" else ops.fin
        d1, d2 = self.walk(tree, self.a, self.b, self.c, a2, b2, c2)
        f32 = ops.f32
        u1, u2 = unpack(alg, f32, d1), unpack(alg, f32, d2)
        drop = alg.all([alg.not_(u1.is_nan), alg.not_(u2.is_nan), alg.lt(value_key(alg, f32, d2), value_key(alg, f32, d1))])
        for p in self.premise + [finite_nonneg(alg, fmt, raised), moved] + self.facts:
            alg.assert_(p)
        return Part(f"composition: raising {label} never lowers D (the tree, each operation's lemma at each node)",
                      alg.script(f"(assert {alg.raw_bool(drop)})"))


def _positions(K: int) -> list[str]:
    return ["c"] + [f"{w}{k}" for k in range(K) for w in ("a", "b")]


def prove_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of one input lowers FTZ-AddMul's D (all finite non-negative inputs).

    "holds" with every lemma's block, or "unknown" naming the first lemma the solver did not prove.
    """
    ops = AddMulOps.of(model)
    tree = addmul_tree(K, model.P or 0)
    lemmas = [glue_lemma(model, K, ops), *mul_lemmas(ops), c_lemma(ops), *add_lemmas(ops)]
    lemmas += [TreeComposition(model, ops, K).position(tree, label) for label in _positions(K)]
    proof = run_parts(lemmas, run)
    proof.summary = "glue, each operation monotone by exponent cases, commutativity, composition over Alg. 2's tree"
    return proof


# -- symmetry: every FTZ-Mul and FTZ-Add of the negated inputs negated ---------------------------------------


def supports_symmetry(model: Model, K: int) -> bool:
    """Whether :func:`negated_chain_facts` applies: FTZ-AddMul (Alg. 2) of inputs read as they are (no via)."""
    return model.kind == "ftz-addmul" and model.P in (2, 4) and K >= 1 and model.via is None


def negated_chain_facts(chain: LemmaChain, alg: QueryAlgebra, model: Model, x: InputSet, na: list[Int], nc: Int,
                        decoded: list[Optional[int]], decoded_c: Optional[int]) -> Optional[int]:
    """Prove, in the symmetry query's own formula, op by op of Alg. 2 on (-A, B, -C) as the model runs them, that
    each result decodes to the original's fields with the sign flipped (unless zero or NaN): the flushed inputs
    (Alg. 2 lines 1-3), each FTZ-Mul (Alg. 1), each FTZ-Add through its exact sum
    (:func:`~smtmma.op_proofs.fused_sum.negated_rounded_sum2`), the pairwise sums and the accumulation.
    ``decoded``, ``decoded_c``: the facts that decode -a_k and -c (sign flipped, fields kept).  Returns the fact
    about D."""
    fa, fb, fc, f32 = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt), get_format("fp32")
    nan32 = nan_pattern(model, f32)
    K, P = len(x.a), model.P
    assert P is not None

    def read(fmt: Format, v: Int) -> Unpacked:
        u = decode_input(alg, fmt, v, model.via)
        return flush_input(alg, u) if model.ftz_inputs else u

    def fadd(label: str, u: tuple[Int, Int, Optional[int]], v: tuple[Int, Int, Optional[int]]) -> tuple[Int, Int, Optional[int]]:
        """(bits, negated run's bits, fact) of FTZ-Add(u, v) as run_model adds them (operands as fp32 patterns)."""
        (x1, x2, fx), (y1, y2, fy) = u, v
        ux, uy, ux2, uy2 = (unpack(alg, f32, t) for t in (x1, y1, x2, y2))
        negated_rounded_sum2(chain, alg, "an FTZ-Add (Alg. 1)", f32, "rne", (ux,), (uy,), (ux2,), (uy2,))  # a chain it stops proves no more
        d1 = add(alg, ux, uy, out=f32, ftz=True, nan_bits=nan32)
        d2 = add(alg, ux2, uy2, out=f32, ftz=True, nan_bits=nan32)
        negated_output_fact(chain, alg, f32, d1, d2, label, [fx, fy], applied=True)
        return d1, d2, chain.last

    c1 = flush_input_bits(alg, fc, x.c) if model.ftz_inputs else x.c
    c2 = flush_input_bits(alg, fc, nc) if model.ftz_inputs else nc
    negated_output_fact(chain, alg, f32, c1, c2, "c", [decoded_c], what="c flushed (as the first add reads it)")
    d = (c1, c2, chain.last)
    zero = alg.const(0)
    for k0 in range(0, K, P):
        prods: list[tuple[Int, Int, Optional[int]]] = []
        for k in range(k0, k0 + P):
            if k >= K:
                prods.append((zero, zero, None))
                continue
            ub = read(fb, x.b[k])
            p1 = mul(alg, read(fa, x.a[k]), ub, out=f32, ftz=True, nan_bits=nan32)
            p2 = mul(alg, read(fa, na[k]), ub, out=f32, ftz=True, nan_bits=nan32)
            negated_output_fact(chain, alg, f32, p1, p2, f"product {k} (FTZ-Mul)", [decoded[k]])
            prods.append((p1, p2, chain.last))
        s = fadd(f"lanes {k0}-{k0 + 1}", prods[0], prods[1])
        if P == 4:
            s = fadd(f"lanes {k0}-{k0 + 3}", s, fadd(f"lanes {k0 + 2}-{k0 + 3}", prods[2], prods[3]))
        d = fadd(f"accumulator after lanes {k0}-{k0 + P - 1}", d, s)
    return d[2]
