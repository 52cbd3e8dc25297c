"""Facts about one GST-FDPA (Alg. 9, encodings/gstfdpa.py): its monotonicity in each argument (scales included) and
its error parts.

:func:`monotone_facts`: raising any one input never lowers D, as facts on the model's own terms in the
monotonicity query's formula (one symbolic move), its last check the query's statement.

GST-FDPA sums one summand per group of G lanes -- the group's exact dot product p times its block's two scales, at
the scales' exponent alone (Alg. 9 lines 3-5) -- and c, truncated at their largest exponent (RZ_F), then rounds once.
That is T-FDPA's shape with group summands in place of products, so the argument is T-FDPA's
(:func:`~smtmma.op_proofs.tfdpa.sum_monotone_facts`: glue, the credit argument, value, rho's order) with the group's
own steps (:class:`GroupMoves`), each a lemma applied to the model's terms:

* **the dot** (line 3): each lane's addend does not fall; an add step at each of the dot's running sums, so
  0 <= p <= p'; equal lanes give an equal dot, so a group none of whose lanes moved keeps p;
* **the gain** of the raised summand, by cases: it was 0 or its exponent became E' > E; E' = E with the exponent
  kept, where its significand (|p| sa) sb grows factor by factor (line 4) and aligns to no less; a scale raised
  across a binade at E' = E.  Proved once per group and move (a lane of it, or one scale), each input's fact then
  a Boolean step;
* **re-alignment** of a group not moved (or zero after its scale rose).

mxf4's 32-lane UE8M0 scale reaches two groups, which share its exponent (line 5): raising it raises both, and the
credit argument takes the one whose exponent became E' (either, at E' = E) as the gainer.  The group summand reaches
2**(exp + 12), not 2**(exp + 2) as a product, so the shift cap Dc covers its largest aligned value (:class:`GstShape`).

The error parts (:func:`prove_error_bound`, :func:`error_facts`) are T-FDPA's on the group summands.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import aligned
from ..encodings.gstfdpa import group_contributions, group_dot, gst_terms, scaled_group
from ..encodings.terms import Term, input_term, product
from ..formats import get_format
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.lemma import range_premise
from ..proof_kernel.parts import Part, PartsProof, all_finite, between, implies, negated_script, ranged_var, run_parts
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner
from ..simulate import decode_input, lane_scale_index, lane_scales, run_model
from .moves import next_moves, smallest_positive
from .fused_sum import Plan, summand_lemma
from .rounding import truncated_rounding
from . import tfdpa
from .tfdpa import (LaneMoves, MonotoneShape, MoveLemmas, MoveSums, at_new_max, capped_shift, error_parts, lane_term, sum_monotone_facts,
                    zero_or_below)

__all__ = ["GroupMoves", "GroupSummand", "GstShape", "error_facts", "glue_lemma", "monotone_facts", "prove_error_bound",
           "supports_error_bound", "supports_error_facts", "supports_monotone"]


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`monotone_facts` applies: one GST-FDPA of K = L lanes, each block of scales whole groups, C inside."""
    return (model.kind == "gst-fdpa" and model.L is not None and model.G is not None and K == model.L
            and model.L % model.G == 0 and model.block is not None and model.block % model.G == 0
            and model.scale_fmt is not None and model.carry_bits is None and not model.c_after and model.via is None
            and not model.ftz_inputs)


def supports_error_bound(model: Model, K: int) -> bool:
    """Whether :func:`prove_error_bound` covers the model: one GST-FDPA of K = L lanes (whole groups, each inside one
    block of scales), C inside the sum, no carry limit."""
    return (model.kind == "gst-fdpa" and model.L is not None and model.G is not None and K == model.L
            and model.L % model.G == 0 and model.block is not None and model.block % model.G == 0
            and model.scale_fmt is not None and model.carry_bits is None and not model.c_after and model.via is None
            and not model.ftz_inputs)


def supports_error_facts(model: Model, K: int) -> bool:
    """Whether :func:`error_facts` applies: one GST-FDPA as :func:`supports_error_bound` takes it."""
    return supports_error_bound(model, K)


def error_facts(chain: LemmaChain, formula: Any) -> bool:
    """The error-bound chain on the model's own terms: T-FDPA's (:func:`~smtmma.op_proofs.tfdpa.error_facts`) on the
    group summands (each group's exact dot times its scales, Alg. 9 lines 3-5) and c, which are what Alg. 9 truncates
    at e_max and adds; a NaN scale makes D NaN, so a finite D has no NaN scale."""
    return tfdpa.error_facts(chain, formula)


class GroupSummand:
    """A group's summand on fresh variables (Alg. 9 lines 3-5): its exact dot p (any value G lanes' products can
    sum to, units 2**lsb) times two non-NaN scales; ``plan`` takes its ranges as the non-c summand's."""

    def __init__(self, model: Model, K: int) -> None:
        assert model.G is not None and model.scale_fmt is not None
        self.plan = plan = Plan(model, K)
        self.fs = get_format(model.scale_fmt)
        probe = QueryAlgebra()
        lanes = [(unpack(probe, plan.fa, probe.var(f"a{j}", plan.fa.bits)), unpack(probe, plan.fb, probe.var(f"b{j}", plan.fb.bits)))
                 for j in range(model.G)]
        p, self.lsb = group_dot(probe, [product(probe, x, y)[0] for x, y in lanes])
        self.p_lo, self.p_hi = p.lo, p.hi
        plan.use_summand(self.fresh(probe)[0])

    def fresh(self, alg: QueryAlgebra) -> tuple[Term, Bool]:
        """The summand of a fresh dot ``p`` and fresh scales ``sa``, ``sb``, and the premise that no scale is NaN."""
        p = ranged_var(alg, "p", self.p_lo, self.p_hi)
        sa = unpack(alg, self.fs, alg.var("sa", self.fs.bits))
        sb = unpack(alg, self.fs, alg.var("sb", self.fs.bits))
        return scaled_group(alg, p, self.lsb, sa, sb), alg.not_(alg.or_(sa.is_nan, sb.is_nan))


def prove_error_bound(model: Model, K: int, run: Runner, *, scale: Fraction = Fraction(1),
                      fused: Optional[Fraction] = None, ulps: Optional[Fraction] = None) -> PartsProof:
    """Table 9's bound for one GST-FDPA: ``|Phi - exact| <= scale * (fused * 2**(e_max - F) + ulps * ulp(Phi))`` on
    every finite input (scales not NaN) with a finite output; ``fused`` defaults to L + 1 (Table 9's).

    The group dots are exact (Alg. 9 line 3), so only the K / G group
    summands and c are aligned and truncated: T-FDPA's error parts
    (:func:`~smtmma.op_proofs.tfdpa.error_parts`) with the group summand's
    lemma in place of a product's -- the composition needs only K / G + 1
    units, so Table 9's L + 1 holds with room to spare.
    """
    if not supports_error_bound(model, K):
        raise ValueError(f"no compositional error-bound proof for {model.describe()} with K={K}")
    gs = GroupSummand(model, K)
    assert model.G is not None
    summand = summand_lemma(gs.plan, "ab", summand=gs.fresh, what=f"a group's scaled dot ({model.G} exact products, "
                            f"{gs.fs.name} scales)")
    parts = error_parts(gs.plan, glue_lemma(gs.plan), summand, K // model.G, scale,
                        Fraction(K + 1) if fused is None else fused, ulps)
    proof = run_parts(parts, run)
    proof.summary = "group summand, c, rounding, glue, accumulation, composition"
    proof.scope = "every finite input (scales not NaN) whose D is finite"
    return proof


class GstShape:
    """The proof's shape: :class:`MonotoneShape` with the group summand's ranges in place of a product's."""

    def __init__(self, model: Model, K: int) -> None:
        assert model.G is not None and model.scale_fmt is not None
        self.G, self.groups = model.G, K // model.G
        self.sh = MonotoneShape(model, K, n=self.groups + 1)
        plan = self.sh.plan
        self.fs = get_format(model.scale_fmt)
        probe = QueryAlgebra()
        lanes = [(unpack(probe, plan.fa, probe.var(f"a{j}", plan.fa.bits)), unpack(probe, plan.fb, probe.var(f"b{j}", plan.fb.bits)))
                 for j in range(self.G)]
        p, self.lsb = group_dot(probe, [product(probe, x, y)[0] for x, y in lanes])
        self.p_hi = p.hi
        tg = self.group(probe, ranged_var(probe, "p", 0, self.p_hi), self.scale(probe, "sa")[1], self.scale(probe, "sb")[1])
        plan.use_summand(tg)  # the exponents lemma reads the summands' exponent ranges from plan.tp and plan.tc
        self.sh.e_lo, self.sh.e_hi = plan.e_lo, plan.e_hi
        E = ranged_var(probe, "E", plan.e_lo, plan.e_hi)
        c = input_term(decode_input(probe, plan.fc, probe.var("c", plan.fc.bits), plan.fd.name))
        self.a_hi = max(aligned(probe, tg, E, self.sh.F).hi, aligned(probe, c, E, self.sh.F).hi)
        # a group summand reaches 2**(exp + 12) (nvf4), not 2**(exp + 2) as a product: at D >= Dc every summand
        # aligns to 0 at E' only if Dc covers its largest aligned value
        self.sh.Dc = max(self.sh.Dc, self.a_hi.bit_length())

    def scale(self, alg: QueryAlgebra, name: str) -> tuple[Int, Unpacked]:
        """A fresh non-NaN scale pattern and its fields (scale formats have no sign and no infinity)."""
        v = alg.var(name, self.fs.bits)
        u = unpack(alg, self.fs, v)
        alg.assert_(alg.not_(u.is_nan))
        return v, u

    def group(self, alg: QueryAlgebra, p: Int, sa: Unpacked, sb: Unpacked) -> Term:
        """The group summand of dot p (units 2**lsb) and scales sa, sb: the model's own step (Alg. 9 lines 4-5)."""
        return scaled_group(alg, p, self.lsb, sa, sb)

    def fresh_group(self, alg: QueryAlgebra) -> Term:
        return self.group(alg, ranged_var(alg, "p", 0, self.p_hi), self.scale(alg, "sa")[1], self.scale(alg, "sb")[1])


def glue_lemma(plan: Plan) -> tuple[Part, tuple[int, int]]:
    """On finite inputs with non-NaN scales, D = rho(S 2**(E-F)) of the group summands and c aligned at E; and the
    static range of S (units 2**(E-F)).  Lane k reads its block's scales (k // block), as the model does."""
    model, K = plan.model, plan.K
    assert model.G is not None and model.scale_fmt is not None and model.block is not None
    G, fs = model.G, get_format(model.scale_fmt)
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    assert x.scale_a is not None and x.scale_b is not None
    d = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
    ua = [unpack(alg, plan.fa, v) for v in x.a]
    ub = [unpack(alg, plan.fb, v) for v in x.b]
    uc = decode_input(alg, plan.fc, x.c, plan.fd.name)
    lane_sa, lane_sb = lane_scales(alg, model, x.scale_a, x.scale_b, K)
    terms = gst_terms(alg, ua, ub, uc, lane_sa, lane_sb, G)[0]
    e_max, total, composed = truncated_rounding(alg, plan, terms)
    alg.assert_(all_finite(alg, *ua, *ub, uc))
    for v in [*x.scale_a, *x.scale_b]:  # decoded by run_model above
        alg.assert_(alg.not_(unpack(alg, fs, v).is_nan))
    goal = alg.all([between(alg, e_max, plan.e_lo, plan.e_hi), alg.eq(d, composed),
                    *(alg.or_(alg.eq(t.sig, 0), alg.le(t.exp, e_max)) for t in terms)])
    label = (f"glue: on finite inputs (scales not NaN) the model's output is rho(S * 2^(e_max-F)), S the sum of the "
             f"{K // G} group summands (Alg. 9 lines 3-5) and c aligned at e_max (RZ_F), e_max >= every non-zero summand's exponent")
    return Part(label, negated_script(alg, goal)), (total.lo, total.hi)


class GroupMoves:
    """GST-FDPA's summands for :func:`~smtmma.op_proofs.tfdpa.credit_facts` (Alg. 9 lines 3-5): group i's exact dot
    p_i (units 2**lsb) times its block's two scales, and c.  A lane's move raises p_i, a scale's move the scale; the
    gain of either is a fact per group and move, from gain lemmas by cases on (p_i, p_i', the scales, E, E')
    applied to the model's terms, with the facts that no move lowers a group's dot (0 <= p_i <= p_i') and that a
    group none of whose lanes moved keeps it."""

    def __init__(self, g: GstShape, lem: MoveLemmas, formula: Any, s: MoveSums) -> None:
        self.g, self.lem, self.formula, self.s = g, lem, formula, s
        alg, groups = formula.alg, range(len(s.sources) - 1)
        #: each group's exact dot in both runs: the model's own terms (the sum of :meth:`addends`, as group_dot adds them)
        self.dots = [alg.sum_all(self.addends(i, formula.x)) for i in groups]
        self.dots2 = [alg.sum_all(self.addends(i, formula.y)) for i in groups]
        self.lanes = LaneMoves(lem, formula, s)  # c's gain and re-alignment
        self.first = smallest_positive(g.fs, None, True)  # a zero scale's next value (raised_inputs)
        self.dot_facts: dict[int, Optional[int]] = {}
        self.kept_facts: dict[int, Optional[int]] = {}
        self.order_facts: dict[int, Optional[int]] = {}
        self.gain_facts: dict[tuple[int, str], Optional[int]] = {}

    def _block(self, i: int) -> int:
        x, model = self.formula.x, self.g.sh.model
        return lane_scale_index(i * self.g.G, model.block, len(x.scale_a))

    def labels(self, i: int) -> list[str]:
        if self.s.sources[i] is None:
            return ["c"]
        j = self._block(i)
        return [f"{who}{k}" for k in range(i * self.g.G, (i + 1) * self.g.G) for who in ("a", "b")] + [f"sa{j}", f"sb{j}"]

    def order(self, i: int, label: str) -> list[Optional[int]]:
        """A lane's move: the group's fact "a lane of group i moved: E <= E', E' = E or the summand's exponent",
        proved once (each lane's then a Boolean step, not a re-run of every group's dot and product)."""
        if label == "c" or label[0] not in "ab":
            return []
        if i not in self.order_facts:
            alg, E, E2, t2 = self.formula.alg, self.s.E, self.s.E2, self.s.terms2[i]
            ks = range(i * self.g.G, (i + 1) * self.g.G)
            some = alg.any([self.formula.moved(f"{w}{k}") for k in ks for w in ("a", "b") if f"{w}{k}" in self.formula.labels])
            self.lem.chain.prove(f"a lane of group {i} moved: E <= E' and E' is E or the group summand's exponent",
                                 implies(alg, [some], alg.and_(alg.le(E, E2), at_new_max(alg, t2, E, E2))), uses=[])
            self.order_facts[i] = self.lem.chain.last
        return [self.order_facts[i]]

    def addends(self, i: int, run: Any) -> list[Int]:
        """Group i's addends in ``run`` (the formula's x or y): its lanes' exact products in units 2**lsb (Alg. 9 line 3)."""
        ks = range(i * self.g.G, (i + 1) * self.g.G)
        alg, plan = self.formula.alg, self.lem.plan
        return group_contributions(alg, [lane_term(alg, plan, run.a[k], run.b[k]) for k in ks])[0]

    def _dot_fact(self, i: int) -> Optional[int]:
        """"0 <= p_i <= p_i'" (every move raises one input, so no group's exact dot falls), proved once: per lane,
        its addend does not fall; then the dot's running sums, an add step at each (a lemma: adding inequalities is
        what bit-blasting does worst, no answer in 120 s for the whole dot at once)."""
        if i not in self.dot_facts:
            alg, chain = self.formula.alg, self.lem.chain
            ks = range(i * self.g.G, (i + 1) * self.g.G)
            parts, parts2 = self.addends(i, self.formula.x), self.addends(i, self.formula.y)
            lanes: list[Optional[int]] = []
            for k, u, u2 in zip(ks, parts, parts2):
                chain.prove(f"lane {k}'s addend of its group's exact dot: 0 <= x <= x' (its a and b do not fall)",
                            alg.and_(alg.le(0, u), alg.le(u, u2)), uses=[])
                lanes.append(chain.last)
            run, run2 = alg.running_sums(parts), alg.running_sums(parts2)
            apps = [self._add_step(run[j - 1], parts[j], run2[j - 1], parts2[j]) for j in range(1, len(parts))]
            if chain.stopped or any(a is None for a in apps):
                self.dot_facts[i] = None
                return None
            chain.prove(f"group {i}'s exact dot (Alg. 9 line 3): 0 <= p <= p' (no move lowers it)",
                        alg.and_(alg.le(0, run[-1]), alg.le(run[-1], run2[-1])), uses=lanes, applied=[a for a in apps if a])
            self.dot_facts[i] = chain.last
        return self.dot_facts[i]

    def _add_step(self, u: Int, v: Int, u2: Int, v2: Int) -> Optional[str]:
        def st(g: QueryAlgebra, args: Sequence[Int]) -> Bool:
            u_, v_, u2_, v2_ = args
            premise = [g.le(0, u_), g.le(u_, u2_), g.le(0, v_), g.le(v_, v2_)]
            return implies(g, premise, g.and_(g.le(0, g.add(u_, v_)), g.le(g.add(u_, v_), g.add(u2_, v2_))))

        return self.lem.chain.use("an add step of the dot: 0 <= u <= u' and 0 <= v <= v' give 0 <= u + v <= u' + v'",
                                  st, [u, v, u2, v2])

    def _term(self, g: QueryAlgebra, p: Int, sa: Int, sb: Int) -> Term:
        fs = self.g.fs
        return self.g.group(g, p, unpack(g, fs, sa), unpack(g, fs, sb))

    def _placed(self, g: QueryAlgebra, t: Term, t2: Term, e: Int, e2: Int) -> list[Bool]:
        """Both summands at or below their run's e_max, E <= E', and E' is E or the raised summand's exponent."""
        return [zero_or_below(g, t, e), zero_or_below(g, t2, e2), g.le(e, e2), at_new_max(g, t2, e, e2)]

    def _not_nan(self, g: QueryAlgebra, *scales: Int) -> list[Bool]:
        return [g.not_(unpack(g, self.g.fs, v).is_nan) for v in scales]

    def _zero_gain(self, p: Int, p2: Int, sa: Int, sb: Int, sa2: Int, sb2: Int, raised: str) -> Optional[str]:
        """The gain where the summand was 0 (or, a scale raised, E' > E): the raised summand alone makes it."""
        lem, sh, fs = self.lem, self.g.sh, self.g.fs

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            p_, p2_, sa_, sb_, sa2_, sb2_, e, e2 = v
            t, t2 = self._term(g, p_, sa_, sb_), self._term(g, p2_, sa2_, sb2_)
            kept = [g.or_(g.eq(n, o), g.any(next_moves(g, fs, o, n, self.first))) for o, n in ((sa_, sa2_), (sb_, sb2_))]
            premise = [g.le(0, p_), g.le(p_, p2_), *self._not_nan(g, sa_, sb_, sa2_, sb2_), *kept, *self._placed(g, t, t2, e, e2),
                       g.or_(g.eq(t.sig, 0), g.ne(e2, e))]
            return implies(g, premise, lem.gained(g, t, t2, e, e2))

        return lem.chain.use(f"gain of a group summand that was 0, or whose exponent became E' > E ({raised}; its dot and "
                             f"scales do not fall): 2^D A(t', E') >= A(t, E) + {sh.gain_k} w", st,
                             [p, p2, sa, sb, sa2, sb2, self.s.E, self.s.E2])

    def _same_place(self, p: Int, p2: Int, sa: Int, sb: Int, sa2: Int, sb2: Int, m1: Int, m2: Int) -> Optional[str]:
        """The gain at E' = E, the summand's exponent kept: its significand m <= m' (the model's own products, given
        as arguments) aligns to no less."""
        lem, sh = self.lem, self.g.sh

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            p_, p2_, sa_, sb_, sa2_, sb2_, e, e2, n1, n2 = v
            t0, t20 = self._term(g, p_, sa_, sb_), self._term(g, p2_, sa2_, sb2_)
            t, t2 = Term(t0.neg, n1, t0.exp, t0.frac), Term(t20.neg, n2, t20.exp, t20.frac)
            premise = [g.le(0, p_), g.le(0, p2_), *self._not_nan(g, sa_, sb_, sa2_, sb2_), g.le(0, n1), g.le(n1, n2),
                       g.eq(t.exp, t2.exp), g.eq(e2, e), *self._placed(g, t, t2, e, e2)]
            return implies(g, premise, lem.gained(g, t, t2, e, e2))

        return lem.chain.use(f"gain of a group summand at E' = E, its exponent kept: a significand m <= m' aligns to no "
                             f"less (2^D A(t', E') >= A(t, E) + {sh.gain_k} w, D = 0)", st,
                             [p, p2, sa, sb, sa2, sb2, self.s.E, self.s.E2, m1, m2])

    def _times(self, x: Int, x2: Int, y: Int, y2: Int) -> Optional[str]:
        """0 <= x <= x' and 0 <= y <= y' give 0 <= x y <= x' y' (Alg. 9 line 4's products, one at a time)."""
        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            x_, x2_, y_, y2_ = v
            m, m2 = g.mul(x_, y_), g.mul(x2_, y2_)
            return implies(g, [g.le(0, x_), g.le(x_, x2_), g.le(0, y_), g.le(y_, y2_)], g.and_(g.le(0, m), g.le(m, m2)))

        return self.lem.chain.use("a product grows with its factors (Alg. 9 line 4): 0 <= x <= x' and 0 <= y <= y' give "
                                  "0 <= x y <= x' y'", st, [x, x2, y, y2])

    def gain(self, i: int, label: str) -> Optional[tuple[list[Optional[str]], list[Optional[int]]]]:
        if label == "c":
            return self.lanes.gain(i, label)
        who = "dot" if label[0] in "ab" else label
        if (i, who) not in self.gain_facts:
            self.gain_facts[(i, who)] = self._gain_fact(i, who)
        fact = self.gain_facts[(i, who)]
        return None if fact is None else ([], [fact] if who == "dot" else [fact, self._kept_fact(i)])

    def _gain_fact(self, i: int, who: str) -> Optional[int]:
        """"Group i's summand gains (n + margin) w" where its dot grows (``who`` "dot": any lane of the group
        moved, the scales kept) or scale ``who`` (sa<j>, sb<j>) is raised (the dot kept), and E' is E or the
        summand's exponent: the gain lemmas by cases (a zero or E' > E; E' = E with the exponent kept, the products
        growing factor by factor; a scale across a binade), applied to the model's terms; proved once, used by each
        input's fact."""
        alg, chain, fs = self.formula.alg, self.lem.chain, self.g.fs
        x, y, j, E, E2 = self.formula.x, self.formula.y, self._block(i), self.s.E, self.s.E2
        sa, sb, sa2, sb2 = x.scale_a[j], x.scale_b[j], y.scale_a[j], y.scale_b[j]
        p, p2 = self.dots[i], self.dots2[i]
        dot, kept = self._dot_fact(i), self._kept_fact(i)
        raised = "its exact dot grows" if who == "dot" else f"{who[:2]} raised to its next {fs.name} value"
        ua, ub, ua2, ub2 = (unpack(alg, fs, v) for v in (sa, sb, sa2, sb2))
        t, t2 = self.g.group(alg, p, ua, ub), self.g.group(alg, p2, ua2, ub2)
        ap, ap2 = alg.abs(p), alg.abs(p2)
        apps = [self._zero_gain(p, p2, sa, sb, sa2, sb2, raised), self._same_place(p, p2, sa, sb, sa2, sb2, t.sig, t2.sig),
                self._times(ap, ap2, ua.sig, ua2.sig), self._times(alg.mul(ap, ua.sig), alg.mul(ap2, ua2.sig), ub.sig, ub2.sig)]
        if who == "dot":
            moved = [alg.eq(sa2, sa), alg.eq(sb2, sb)]
        else:
            mine, mine2, other, other2 = (sa, sa2, sb, sb2) if who.startswith("sa") else (sb, sb2, sa, sa2)
            moved = [alg.eq(p2, p), alg.eq(other2, other), alg.any(next_moves(alg, fs, mine, mine2, self.first))]
            apps.append(self._cross_gain(who[:2], p, p2, sa, sb, sa2, sb2))
        if chain.stopped or any(a is None for a in apps):
            return None
        premise = [range_premise(alg, E), range_premise(alg, E2), *moved, *self._placed(alg, t, t2, E, E2)]
        chain.prove(f"group {i}'s summand, {raised}, E' = E or its exponent: it gains {self.g.sh.gain_k + 1} w",
                    implies(alg, premise, self.lem.gained(alg, t, t2, E, E2)), uses=[dot, kept], applied=apps)
        return chain.last

    def _kept_fact(self, i: int) -> Optional[int]:
        """"No lane of group i moved gives p_i' = p_i" (a lemma on the group's lane patterns: equal lanes give equal
        exact dots), proved once."""
        if i not in self.kept_facts:
            alg, chain, plan, x, y = self.formula.alg, self.lem.chain, self.lem.plan, self.formula.x, self.formula.y
            G = self.g.G
            ks = range(i * G, (i + 1) * G)

            def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
                before, after = v[:2 * G], v[2 * G:]
                dot = [group_dot(g, [lane_term(g, plan, u[2 * n], u[2 * n + 1]) for n in range(G)])[0] for u in (before, after)]
                return implies(g, [g.eq(u, w) for u, w in zip(before, after)], g.eq(dot[0], dot[1]))

            lanes = [v for k in ks for v in (x.a[k], x.b[k])] + [v for k in ks for v in (y.a[k], y.b[k])]
            app = chain.use(f"a group's exact dot (Alg. 9 line 3) of equal lanes is equal ({G} lanes)", st, lanes)
            if app is None:
                self.kept_facts[i] = None
                return None
            still = alg.all([alg.not_(self.formula.moved(f"{w}{k}")) for k in ks for w in ("a", "b") if f"{w}{k}" in self.formula.labels])
            chain.prove(f"group {i}: no lane of it moved gives p' = p", implies(alg, [still], alg.eq(self.dots2[i], self.dots[i])),
                        uses=[], applied=[app])
            self.kept_facts[i] = chain.last
        return self.kept_facts[i]

    def _cross_gain(self, who: str, p: Int, p2: Int, sa: Int, sb: Int, sa2: Int, sb2: Int) -> Optional[str]:
        """A scale raised across a binade at E' = E (the dot kept): the summand's exponent up by one."""
        lem, sh, fs = self.lem, self.g.sh, self.g.fs

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            p_, p2_, sa_, sb_, sa2_, sb2_, e, e2 = v
            t, t2 = self._term(g, p_, sa_, sb_), self._term(g, p2_, sa2_, sb2_)
            mine, mine2 = (sa_, sa2_) if who == "sa" else (sb_, sb2_)
            u, u2 = unpack(g, fs, mine), unpack(g, fs, mine2)
            same = g.eq(sb2_, sb_) if who == "sa" else g.eq(sa2_, sa_)
            premise = [g.le(0, p_), g.eq(p2_, p_), *self._not_nan(g, sa_, sb_, sa2_, sb2_), same,
                       g.any(next_moves(g, fs, mine, mine2, self.first)), *self._placed(g, t, t2, e, e2), g.eq(e2, e),
                       g.not_(u.is_zero), g.ne(u2.exp, u.exp)]
            return implies(g, premise, lem.gained(g, t, t2, e, e2))

        return lem.chain.use(f"gain of the group summand whose {who} is raised across a binade at E' = E: 2^D A(t', E') >= "
                             f"A(t, E) + {sh.gain_k} w", st, [p, p2, sa, sb, sa2, sb2, self.s.E, self.s.E2])

    def realign(self, i: int) -> Optional[tuple[list[str], list[Optional[int]]]]:
        if self.s.sources[i] is None:
            return self.lanes.realign(i)
        x, y, j = self.formula.x, self.formula.y, self._block(i)
        args = [self.dots[i], self.dots2[i], x.scale_a[j], x.scale_b[j], y.scale_a[j], y.scale_b[j], self.s.E, self.s.E2]
        shared = (self.g.sh.model.block or self.g.G) > self.g.G
        apps = [self._realign(args, vanished=False)] + ([self._realign(args, vanished=True)] if shared else [])
        if any(a is None for a in apps):
            return None
        return [a for a in apps if a is not None], [self._dot_fact(i), self._kept_fact(i)]

    def _realign(self, args: list[Int], vanished: bool) -> Optional[str]:
        """A group summand's credit 2**D A(t', E') + w - A(t, E) >= 0 where it did not move (its dot and scales
        kept), or (``vanished``: a block scale two groups share rose, this group's summand was and is 0) where it
        is 0 in the raised run."""
        lem, fs, sh = self.lem, self.g.fs, self.g.sh

        def st(g: QueryAlgebra, v: Sequence[Int]) -> Bool:
            p_, p2_, sa_, sb_, sa2_, sb2_, e, e2 = v
            t, t2 = self._term(g, p_, sa_, sb_), self._term(g, p2_, sa2_, sb2_)
            D, w = capped_shift(g, sh, e, e2)
            A, A2 = aligned(g, t, e, sh.F), aligned(g, t2, e2, sh.F)
            if vanished:
                kept = [g.or_(g.eq(n, o), g.any(next_moves(g, fs, o, n, self.first))) for o, n in ((sa_, sa2_), (sb_, sb2_))]
                moved = [*self._not_nan(g, sa_, sb_, sa2_, sb2_), *kept, g.eq(t2.sig, 0)]
            else:
                moved = [*self._not_nan(g, sa_, sb_), g.eq(sa2_, sa_), g.eq(sb2_, sb_)]
            premise = [g.le(0, p_), g.eq(p2_, p_), *moved, zero_or_below(g, t, e), g.le(e, e2)]
            wd = lem.wide
            return implies(g, premise, g.all([g.le(0, A), g.le(0, A2), wd.le(g, wd.lit(0), wd.credit(g, A, A2, D, w))]))

        what = "zero after a shared scale rose" if vanished else "not moved"
        return lem.chain.use(f"re-alignment (a group summand {what}): A(t, E) <= 2^D A(t', E') + w, D = min(E' - E, {sh.Dc}), "
                             "w = 2^D - 1, E <= E'", st, args)

def monotone_facts(chain: LemmaChain, formula: Any) -> bool:
    """Facts, in the monotonicity query's own formula with one symbolic move, that leave its final check Boolean
    steps: T-FDPA's argument (:func:`~smtmma.op_proofs.tfdpa.sum_monotone_facts`: glue, the credit argument, value,
    rho's order) on the model's own group summands and c (:class:`GroupMoves`)."""
    g = GstShape(formula.model, formula.x.K)
    return sum_monotone_facts(chain, formula, g.sh, "Alg. 9 lines 9-14", lambda lem, f, s: GroupMoves(g, lem, f, s))
