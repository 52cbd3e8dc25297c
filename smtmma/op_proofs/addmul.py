"""Facts about CDNA2's FTZ-AddMul (Alg. 1-2, encodings/addmul.py): FTZ-Mul and FTZ-Add monotone in each argument.

:func:`negated_chain_facts` (symmetry): on (-A, B, -C) every FTZ-Mul and FTZ-Add is the original negated, in the
order the model runs them.

:func:`monotone_facts`: every single move of one input in one formula, Alg. 2's tree of IEEE operations each
monotone.

FTZ-AddMul computes D = c + ((p0 + p1) + (p2 + p3)) per group of P = 4 lanes
(c + (p0 + p1) for P = 2), every p_k = FTZ-Mul(a_k, b_k) and every + an
FTZ-Add in FP32 (Alg. 1), the inputs flushed first.  Raising one input moves
one leaf of that tree, and a tree of operations each monotone in each operand
is monotone.  The whole-model query, or even "the FTZ add is monotone" as one
check, takes minutes (issue 8: 43-50 s for the add alone); split by exponent
cases, every lemma here takes seconds.  With nn(x) "x is a non-negative
non-NaN FP32 pattern" (sign bit 0, at most +inf: value order is pattern
order), the facts are about the model's own terms, and the lemmas (proved on
fresh constants) are applied to them:

* **glue** (a fact per run): D is the tree evaluated with the operations below;
* **add** (Alg. 1 line 2): nn(x), nn(x'), nn(y), x <= x' give nn results and
  x + y <= x' + y, in exponent cases (x' in x's binade, one or more above;
  y's exponent field relative to x's), and a lemma that the cases cover
  every input; **add commutes**, for a raised right operand;
* **mul** (Alg. 1 lines 4-5, inputs flushed, Alg. 2 lines 1-3): raising a
  finite non-negative input to its next value (:func:`~smtmma.op_proofs.moves.next_moves`)
  never lowers the product, by cases: a zero raised, a subnormal raised (it
  flushes to zero), the exponent field up; in the same binade the
  significand product grows by the other significand (the **ring** lemmas of
  :mod:`~smtmma.op_proofs.fma` at the model's significands) and rounding it
  is monotone (a lemma whose products are arguments);
* **c** (Alg. 2 line 1): raising c never lowers flushed c;
* per node the move reaches, from the leaf up, a fact "not lower"; per input
  position, "raising it never lowers D"; the query's own statement is last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

from ..encodings.addmul import add, flush_input, mul, round_product
from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.terms import Term, product
from ..formats import Format, get_format
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.parts import implies
from ..queries.query_algebra import InputSet, QueryAlgebra
from ..simulate import decode_input, flush_input_bits, nan_pattern
from .fma import apply_step_facts, step_facts
from .fused_sum import negated_rounded_sum2
from .moves import finite_nonneg, next_value
from .rounding import negated_output_fact

__all__ = ["AddMulLemmas", "AddMulOps", "Node", "addmul_tree", "evaluate_tree", "monotone_facts", "negated_chain_facts", "supports_monotone",
           "supports_symmetry"]


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`monotone_facts` applies: FTZ-AddMul with flushed inputs, A and B of one format, FP32 C and D."""
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


# -- the ops' cases ----------------------------------------------------------------------------------


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


def _add_monotone(alg: QueryAlgebra, ops: AddMulOps, x: Int, x2: Int, y: Int) -> Bool:
    """The add lemma's conclusion: nn(x + y), nn(x' + y), x + y <= x' + y."""
    r1, r2 = ops.add(alg, x, y), ops.add(alg, x2, y)
    return alg.all([_nn(alg, ops.f32, r1), _nn(alg, ops.f32, r2), alg.le(r1, r2)])


def _show(rng: tuple[Union[int, None], Union[int, None]]) -> str:
    lo, hi = rng
    return f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"


def _mul_monotone(alg: QueryAlgebra, ops: AddMulOps, r1: Int, r2: Int) -> Bool:
    return alg.all([_nn(alg, ops.f32, r1), _nn(alg, ops.f32, r2), alg.le(r1, r2)])


# -- monotonicity: every single move, in the query's own formula ---------------------------------------------


def _product_of(g: QueryAlgebra, ops: AddMulOps, a: Int, b: Int, m: Int) -> Int:
    """FTZ-Mul of raw inputs a and b whose significand product is the term ``m`` (the model's own, a's first)."""
    u, v = ops.dec(g, a), ops.dec(g, b)
    specials = product(g, u, v)[1]  # NaN and infinities do not involve the significands' product
    return round_product(g, Term(g.xor(u.neg, v.neg), m, g.add(u.exp, v.exp), u.frac + v.frac), specials, out=ops.f32,
                         ftz=True, nan_bits=ops.nan)


class AddMulLemmas:
    """The lemmas of one FTZ-AddMul, established in ``chain`` when first applied (each proved once on fresh constants)."""

    def __init__(self, chain: LemmaChain, ops: AddMulOps) -> None:
        self.chain, self.ops = chain, ops
        self.alg = chain.alg

    def apply(self, label: str, statement: Callable[[QueryAlgebra, Sequence[Int]], Bool], args: list[Int], *,
              patterns: bool = False) -> Optional[str]:
        """``statement`` as a lemma applied to ``args`` (None when it was not proved); ``patterns``: every argument an
        FP32 pattern, the lemma stated for all 2**32 of them (one lemma for every node, whatever its term's range)."""
        span = (0, (1 << self.ops.f32.bits) - 1) if patterns else None
        return self.chain.use(label, statement, args, span=span)

    def nn(self, g: QueryAlgebra, x: Int) -> Bool:
        return _nn(g, self.ops.f32, x)

    def mul_raised(self, who: str, a: Int, b: Int, a2: Int, b2: Int) -> Optional[list[str]]:
        """Applications giving nn(x * y), nn(x' * y), x * y <= x' * y for input ``who`` (a or b) raised: three moves
        by cases (a zero, a subnormal flushed to +0, the exponent field up), and the same binade through the ring
        facts of the model's significand product (:func:`~smtmma.op_proofs.fma.apply_step_facts`) and a lemma whose
        products are arguments (the rounding of an exact product whose significand grows by t)."""
        ops, f, alg = self.ops, self.ops.fin, self.alg
        ex = lambda g, v: g.bits(v, f.bits - 2, f.man_bits)  # noqa: E731

        def mul(g: QueryAlgebra, x: Int, y: Int) -> Int:
            return ops.mul(g, x, y) if who == "a" else ops.mul(g, y, x)

        cases: list[tuple[str, Callable[[QueryAlgebra, Int, Int], Bool]]] = [
            ("x is a zero", lambda g, x, x2: unpack(g, f, x).is_zero),
            ("x is subnormal (flushed to +0)", lambda g, x, x2: g.and_(g.not_(unpack(g, f, x).is_zero), g.eq(ex(g, x), 0))),
            ("x normal, the exponent field up by one", lambda g, x, x2: g.and_(g.ne(ex(g, x), 0), g.ne(ex(g, x), ex(g, x2)))),
        ]
        moved, moved2, other = (a, a2, b) if who == "a" else (b, b2, a)
        apps = []
        for what, case in cases:

            def raised(g: QueryAlgebra, v: Sequence[Int], case: Callable[[QueryAlgebra, Int, Int], Bool] = case) -> Bool:
                x, x2, y = v
                premise = [finite_nonneg(g, f, x), finite_nonneg(g, f, x2), finite_nonneg(g, f, y), next_value(g, f, x, x2), case(g, x, x2)]
                return implies(g, premise, _mul_monotone(g, ops, mul(g, x, y), mul(g, x2, y)))

            app = self.apply(f"mul (Alg. 1 lines 4-5, inputs flushed): raising {who} to its next value never lowers a * b; "
                             f"{what}", raised, [moved, moved2, other])
            if app is None:
                return None
            apps.append(app)
        um, um2, uo = ops.dec(alg, moved), ops.dec(alg, moved2), ops.dec(alg, other)
        ring = apply_step_facts(self.chain, f.man_bits + 1, um.sig, um2.sig, uo.sig, t_first=who == "b")
        if not ring:
            return None
        m1 = alg.mul(ops.dec(alg, a).sig, ops.dec(alg, b).sig)
        m2 = alg.mul(ops.dec(alg, a2).sig, ops.dec(alg, b2).sig)

        def same_binade(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            x, x2, y, n1, n2 = v
            u, u2, w = ops.dec(g, x), ops.dec(g, x2), ops.dec(g, y)
            premise = [finite_nonneg(g, f, x), finite_nonneg(g, f, x2), finite_nonneg(g, f, y), next_value(g, f, x, x2),
                       g.ne(ex(g, x), 0), g.eq(ex(g, x), ex(g, x2)), *step_facts(g, f.man_bits + 1, u.sig, u2.sig, w.sig, n1, n2)]
            before, after = ((x, y), (x2, y)) if who == "a" else ((y, x), (y, x2))
            return implies(g, premise, _mul_monotone(g, ops, _product_of(g, ops, *before, n1), _product_of(g, ops, *after, n2)))

        app = self.apply(f"mul, {who} normal in the same binade as its next value: the significand product grows by the "
                         "other's (ring facts given), and rounding it never lowers it", same_binade, [moved, moved2, other, m1, m2])
        return None if app is None else [*apps, *ring, app]

    def add_raised(self, x: Int, x2: Int, y: Int) -> Optional[list[str]]:
        """Applications giving nn(x + y), nn(x' + y), x + y <= x' + y for nn x <= x', nn y: the exponent cases
        (:data:`_ADD_CASES`) and the lemma that they cover every such input."""
        ops = self.ops

        def cover(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            premise, dx, dy = _add_case_of(g, ops, *v)
            return implies(g, premise, g.any(g.and_(_in_case(g, dx, cx), _in_case(g, dy, cy)) for cx, cy in _ADD_CASES))

        app = self.apply(f"add: the {len(_ADD_CASES)} exponent cases cover every nn x <= x', nn y", cover, [x, x2, y],
                         patterns=True)
        if app is None:
            return None
        apps = [app]
        for cx, cy in _ADD_CASES:

            def case(g: QueryAlgebra, v: Sequence[Int], cx: tuple = cx, cy: tuple = cy) -> Bool:
                premise, dx, dy = _add_case_of(g, ops, *v)
                return implies(g, premise + [_in_case(g, dx, cx), _in_case(g, dy, cy)], _add_monotone(g, ops, *v))

            app = self.apply(f"add (Alg. 1 line 2): nn x <= x', nn y give nn sums and x + y <= x' + y, for e(x') - e(x) in "
                             f"{_show(cx)}, e(y) - e(x) in {_show(cy)}", case, [x, x2, y], patterns=True)
            if app is None:
                return None
            apps.append(app)
        return apps

    def add_commutes(self, x: Int, y: Int) -> Optional[str]:
        ops = self.ops
        return self.apply("add commutes: x + y = y + x for nn x, y", lambda g, v: implies(
            g, [self.nn(g, v[0]), self.nn(g, v[1])], g.eq(ops.add(g, v[0], v[1]), ops.add(g, v[1], v[0]))), [x, y], patterns=True)


def _add_case_of(g: QueryAlgebra, ops: AddMulOps, x: Int, x2: Int, y: Int) -> tuple[list[Bool], Int, Int]:
    """The add lemma's premise on x <= x', y (all nn) and the exponent-field differences e(x') - e(x), e(y) - e(x)."""
    f = ops.f32
    premise = [_nn(g, f, x), _nn(g, f, x2), _nn(g, f, y), g.le(x, x2)]
    e = [g.bits(v, f.bits - 2, f.man_bits) for v in (x, x2, y)]
    return premise, g.sub(e[1], e[0]), g.sub(e[2], e[0])


def monotone_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the monotonicity query's own formula (``formula``: a
    :class:`~smtmma.queries.properties.monotonicity.MoveFormula`, every single move of one input beside the inputs),
    that leave its final check ("some move lowers D") Boolean steps.

    On the model's own terms: each run's D is Alg. 2's tree of FTZ-Mul, FTZ-Add and flushed c (the glue, a fact per
    run); every node of the inputs' tree is nn (facts, from the leaves up); for each input position, walking up from
    the raised leaf, the node the move reaches is not lower (a fact per node, from the op's lemmas applied to the
    model's operands: mul by cases and the ring facts, flushed c, add by exponent cases and commutativity; the
    other operand is the same term in both runs); so no move lowers D (a fact per position).  False when one is not
    proved (the chain says which).
    """
    alg, model, x = formula.alg, formula.model, formula.x
    ops = AddMulOps.of(model)
    tree = addmul_tree(x.K, model.P or 0)
    lem = AddMulLemmas(chain, ops)
    f32, fin, fc = ops.f32, ops.fin, ops.fc
    chain.prove(f"glue (Alg. 2): D is the tree of FTZ-Mul, FTZ-Add and flushed c (K={x.K}, P={model.P})",
                alg.eq(formula.d, evaluate_tree(alg, ops, tree, list(x.a), list(x.b), x.c)), uses=[])
    glue = chain.last
    nn: dict[str, Optional[int]] = {}  # a node's value -> the fact that it is nn

    def nn_fact(v: Int, what: str, uses: list[Optional[int]], apps: Sequence[str] = ()) -> Optional[int]:
        key = str(v.raw)
        if key not in nn:
            chain.prove(f"{what} is a non-negative non-NaN FP32 pattern", _nn(alg, f32, v), uses=uses, applied=list(apps))
            nn[key] = chain.last
        return nn[key]

    def values(tree: Node, y: InputSet) -> Int:
        return evaluate_tree(alg, ops, tree, list(y.a), list(y.b), y.c)

    def nn_tree(tree: Node) -> Optional[int]:  # the inputs' tree, leaves up
        if tree[0] == "add":
            left, right = nn_tree(tree[1]), nn_tree(tree[2])  # type: ignore[misc]
            l_, r_ = values(tree[1], x), values(tree[2], x)  # type: ignore[misc]
            app = lem.apply("add of nn x, y is nn", lambda g, v: implies(g, [lem.nn(g, v[0]), lem.nn(g, v[1])],
                                                                          lem.nn(g, ops.add(g, v[0], v[1]))), [l_, r_],
                            patterns=True)
            return nn_fact(ops.add(alg, l_, r_), "an FTZ-Add node", [left, right], [app] if app else [])
        if tree[0] == "p":
            k = tree[1]  # type: ignore[misc]
            app = lem.apply("mul of finite non-negative inputs is nn", lambda g, v: implies(
                g, [finite_nonneg(g, fin, v[0]), finite_nonneg(g, fin, v[1])], lem.nn(g, ops.mul(g, v[0], v[1]))), [x.a[k], x.b[k]])
            return nn_fact(ops.mul(alg, x.a[k], x.b[k]), f"product {k}", [], [app] if app else [])
        if tree[0] == "c":
            return nn_fact(ops.c(alg, x.c), "flushed c", [])
        return None  # a padding lane: the constant 0

    nn_tree(tree)
    if chain.stopped:
        return False
    for label in formula.labels:
        y = formula.raised[label]
        chain.prove(f"glue, {label} raised: D is the tree of FTZ-Mul, FTZ-Add and flushed c",
                    alg.eq(formula.outputs[label], values(tree, y)), uses=[])
        glue2 = chain.last

        def up(tree: Node) -> Optional[int]:
            """The fact "this node's value in the raised run is nn and not below the inputs'", None when the move does
            not reach the node (the same term in both runs)."""
            v1, v2 = values(tree, x), values(tree, y)
            if v1.raw == v2.raw or tree[0] == "zero":
                return None
            if tree[0] == "c":
                c_up = lem.apply("c (Alg. 2 line 1): raising c to its next value never lowers flushed c, both nn", lambda g, v: implies(
                    g, [finite_nonneg(g, fc, v[0]), finite_nonneg(g, fc, v[1]), next_value(g, fc, v[0], v[1])],
                    g.all([lem.nn(g, ops.c(g, v[0])), lem.nn(g, ops.c(g, v[1])), g.le(ops.c(g, v[0]), ops.c(g, v[1]))])), [x.c, y.c])
                apps = [c_up] if c_up else []
                uses: list[Optional[int]] = []
            elif tree[0] == "p":
                k = tree[1]  # type: ignore[misc]
                apps = lem.mul_raised(label[0], x.a[k], x.b[k], y.a[k], y.b[k]) or []
                uses = []
            else:
                left, right = up(tree[1]), up(tree[2])  # type: ignore[misc]
                l1, l2, r1, r2 = values(tree[1], x), values(tree[1], y), values(tree[2], x), values(tree[2], y)  # type: ignore[misc]
                if left is not None:  # the left operand raised: x + y <= x' + y
                    apps = lem.add_raised(l1, l2, r1) or []
                    uses = [left, nn.get(str(r1.raw))]
                else:  # the right one: y + x = x + y <= x' + y = y + x' (commutativity at both ends)
                    ends = [lem.add_commutes(l1, r1), lem.add_commutes(l1, r2)]
                    apps = [*(lem.add_raised(r1, r2, l1) or []), *(e for e in ends if e)]
                    uses = [right, nn.get(str(l1.raw))]
            if chain.stopped:
                return None
            chain.prove(f"{label} raised: {tree[0]} node not lower, both nn", alg.all([_nn(alg, f32, v1), _nn(alg, f32, v2), alg.le(v1, v2)]),
                        uses=uses, applied=apps)
            return chain.last

        root = up(tree)
        if chain.stopped:
            return False
        chain.prove(f"raising {label} to its next value never lowers D", alg.not_(formula.drops[label]),
                    uses=[glue, glue2, root])
    return not chain.stopped


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
