"""Facts about one GST-FDPA (Alg. 9, encodings/gstfdpa.py): its monotonicity in each argument (scales included).

:func:`prove_monotone`: raising any one input never lowers D.

GST-FDPA sums one summand per group of G lanes -- the group's exact dot
product p times its block's two scales, at the scales' exponent alone (Alg. 9
lines 3-5) -- and c, truncated at their largest exponent (RZ_F), then rounds
once.  That is :mod:`~smtmma.op_proofs.tfdpa`'s shape with group summands in place of
products, so the proof reuses its lemmas (exponents, re-alignment, c's gain,
distributivity, composition in slack form, value, rounding) and adds the
group's own (every check a check-sat on fresh variables, expecting unsat):

* **glue** (the model, every finite input with non-NaN scales): D =
  rho(S 2**(E-F)), S the sum of the group summands and c aligned at E, their
  largest exponent (the model's own :func:`gst_terms`);
* **dot steps**: raising one lane's a or b never lowers its contribution to
  the group's dot; one add of the running sum never falls when an operand
  grows; and a chain per lane over the running sums (fresh variables, the add
  step asserted at each) gives a non-negative dot that does not fall;
* **group step / gain, dot raised** (fresh p <= p', fresh scales): the
  summand keeps its exponent (or was zero) and 2**D A(t', E') >= A(t, E) +
  n w, as the T-FDPA proof's gain;
* **group step / gain, a scale raised** (fresh p, one scale moved to its next
  value): the exponent does not fall (or the summand was zero), and the gain.

A block scale raises one group's summand when the block is the group
(``block == G``: nvf4, one UE4M3 scale per 16 lanes).  mxf4's 32-lane UE8M0
scale reaches two groups, which share its exponent (line 5); raising it adds:

* **exponents, a block scale raised**: the m raised groups at one exponent
  e before and e' after give E <= E', E' = E or e';
* **raised with it**: the other group of the block loses nothing,
  2**D A(t', E') >= A(t, E) (the gain lemmas cover the first, a non-zero one
  when there is one);
* **composition** with that group's slack in [0, 2**D A(t', E')].

As in :mod:`~smtmma.op_proofs.tfdpa`,
applying a lemma stated on fresh variables to each of the model's groups is
the step no solver checks.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Optional

from ..encodings.algebra import Bool, Int
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import aligned
from ..encodings.gstfdpa import group_dot, gst_terms, scaled_group
from ..encodings.terms import Term, input_term, product
from ..formats import get_format
from ..models import Model
from ..proof_kernel.chain import LemmaChain
from ..proof_kernel.parts import Part, PartsProof, all_finite, between, negated_script, ranged_var, run_parts
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner
from ..simulate import decode_input, lane_scales, run_model
from .moves import nonneg_pattern, raised_pattern
from .fused_sum import Plan, summand_lemma
from .rounding import monotone_rounding_lemma, truncated_rounding
from . import tfdpa
from .tfdpa import (
    MonotoneShape,
    error_parts,
    composition_lemmas,
    distributivity_lemma,
    exponent_step_lemma,
    exponents_lemma,
    gain_goal,
    gain_lemma,
    capped_shift,
    fresh_exponents,
    gain_setup,
    realign_lemma,
    shape_e_max,
    value_lemma,
)

__all__ = ["GroupSummand", "GstShape", "dot_chain_lemma", "error_facts", "glue_lemma", "monotone_lemmas", "prove_error_bound",
           "prove_monotone", "supports_error_bound", "supports_error_facts", "supports_monotone"]


def supports_monotone(model: Model, K: int) -> bool:
    """Whether :func:`prove_monotone` applies: one GST-FDPA of K = L lanes, each block of scales whole groups, C inside."""
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
        self.d_hi = group_dot(probe, [product(probe, *lanes[0])[0]])[0].hi  # one lane's contribution
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


def _lane_step_lemma(g: GstShape, who: str) -> Part:
    """One lane's contribution to its group's dot (Alg. 9 line 3, one product) is >= 0 and grows when ``who`` is raised."""
    plan = g.sh.plan
    alg = QueryAlgebra()
    fmt, other = (plan.fa, plan.fb) if who == "a" else (plan.fb, plan.fa)
    _, u, _, u2 = raised_pattern(alg, fmt, who)
    uo = nonneg_pattern(alg, "b" if who == "a" else "a", other)[1]
    pair = (lambda x: (x, uo)) if who == "a" else (lambda x: (uo, x))
    d, d2 = (group_dot(alg, [product(alg, *pair(x))[0]])[0] for x in (u, u2))
    return Part(f"lane step (raising {who}): a lane's contribution to its group's exact dot (Alg. 9 line 3) is "
                  "non-negative and does not fall", negated_script(alg, alg.and_(alg.le(0, d), alg.le(d, d2))))


def _add_step_lemmas(g: GstShape) -> list[Part]:
    """One add of the dot's running sum (Alg. 9 line 3 adds lane by lane): operands >= 0 give a sum >= 0, and
    raising either operand never lowers it (fresh partial sum a in [0, G d_hi], contribution b in [0, d_hi])."""
    out = []
    for grows in ("running sum", "contribution"):
        alg = QueryAlgebra()
        a, b = ranged_var(alg, "a", 0, g.G * g.d_hi), ranged_var(alg, "b", 0, g.d_hi)
        if grows == "running sum":
            a2, b2 = ranged_var(alg, "a2", 0, g.G * g.d_hi), b
            alg.assert_(alg.le(a, a2))
        else:
            a2, b2 = a, ranged_var(alg, "b2", 0, g.d_hi)
            alg.assert_(alg.le(b, b2))
        goal = alg.all([alg.le(0, alg.add(a, b)), alg.le(alg.add(a, b), alg.add(a2, b2))])
        out.append(Part(f"dot add step: a, b >= 0 give a + b >= 0, and raising the {grows} never lowers a + b",
                          negated_script(alg, goal)))
    return out


def dot_chain_lemma(g: GstShape, k: int, *, steps: bool = True) -> Part:
    """Raising lane k's contribution never lowers the dot: the running sum over fresh variables (one per add, named by
    its operands), each add step asserted as an instance; a drop of the last running sum is unsat."""
    alg = QueryAlgebra()
    lim = g.G * g.d_hi  # every running sum of the model's dot lies in [-lim, lim]
    x = [ranged_var(alg, f"x{j}", -g.d_hi, g.d_hi) for j in range(g.G)]
    xk2 = ranged_var(alg, f"x{k}_2", -g.d_hi, g.d_hi)
    nodes: dict[tuple[str, str], Int] = {}

    def add(u: Int, v: Int) -> Int:
        key = (u.raw, v.raw)
        if key not in nodes:
            nodes[key] = ranged_var(alg, f"s{len(nodes)}", -lim, lim)
        return nodes[key]

    def nn(v: Int) -> Bool:
        return alg.le(0, v)

    def step(u: Int, v: Int, u2: Int, v2: Int) -> None:  # the add step lemmas at this node
        alg.assert_(alg.or_(alg.not_(alg.all([nn(u), nn(v), nn(u2), nn(v2), alg.le(u, u2), alg.le(v, v2)])),
                            alg.all([nn(add(u, v)), nn(add(u2, v2)), alg.le(add(u, v), add(u2, v2))])))

    zero = alg.const(0)
    run, run2 = zero, zero
    for j in range(g.G):
        xj2 = xk2 if j == k else x[j]
        if steps:  # (without them, a test's check that the chain rests on them)
            step(run, x[j], run2, xj2)
        run, run2 = add(run, x[j]), add(run2, xj2)
    for v in x + [xk2]:
        alg.assert_(nn(v))
    alg.assert_(alg.le(x[k], xk2))
    return Part(f"dot chain (lane {k} of {g.G}): contributions >= 0, lane {k}'s raised, the add steps at each of the "
                  f"{g.G} running sums give a non-negative dot that does not fall",
                  negated_script(alg, alg.and_(nn(run), alg.le(run, run2))))


def _group_step_goal(alg: QueryAlgebra, t: Term, t2: Term, same_exp: bool) -> Bool:
    keep = alg.eq(t.exp, t2.exp) if same_exp else alg.le(t.exp, t2.exp)
    return alg.or_(alg.eq(t.sig, 0), alg.and_(alg.ne(t2.sig, 0), keep))


def _dot_moves(g: GstShape, alg: QueryAlgebra) -> tuple[Term, Term]:
    """Fresh 0 <= p <= p' with fresh scales: the group summand before and after its dot grows."""
    p, p2 = ranged_var(alg, "p", 0, g.p_hi), ranged_var(alg, "p2", 0, g.p_hi)
    alg.assert_(alg.le(p, p2))
    sa, sb = g.scale(alg, "sa")[1], g.scale(alg, "sb")[1]
    return g.group(alg, p, sa, sb), g.group(alg, p2, sa, sb)


def _scale_moves(g: GstShape, alg: QueryAlgebra, who: str) -> tuple[Term, Term, Unpacked, Unpacked]:
    """Fresh p >= 0 and scales, scale ``who`` (sa or sb) moved to its next value: the summand before and after."""
    p = ranged_var(alg, "p", 0, g.p_hi)
    _, u, _, u2 = raised_pattern(alg, g.fs, who)
    other = g.scale(alg, "sb" if who == "sa" else "sa")[1]
    pair: Callable[[Unpacked], tuple[Unpacked, Unpacked]] = (lambda s: (s, other)) if who == "sa" else (lambda s: (other, s))
    return g.group(alg, p, *pair(u)), g.group(alg, p, *pair(u2)), u, u2


def _group_gain_lemma(g: GstShape, move: str, case: str) -> Part:
    """The raised group summand's gain, 2**D A(t', E') >= A(t, E) + n w, for one ``move`` (dot, sa, sb) and ``case``.

    ``case``: "zero" (the summand was 0) for a dot move; "far" (a zero scale raised, or E' > E), "cross" (E' = E, the
    exponent field up by one) for a scale move.  The cases left (E' = E, the summand's significand grows) are the
    scaling and aligned steps of :func:`_group_lemmas`.
    """
    sh = g.sh
    alg = QueryAlgebra()
    if move == "dot":
        t, t2 = _dot_moves(g, alg)
    else:
        t, t2, u, u2 = _scale_moves(g, alg, move)
    E, E2, D, w = gain_setup(alg, sh, t, t2)
    conds = {"zero": [alg.eq(t.sig, 0)]} if move == "dot" else {
        "far": [alg.or_(u.is_zero, alg.ne(E2, E))],
        "cross": [alg.eq(E2, E), alg.not_(u.is_zero), alg.ne(u2.exp, u.exp)],
    }
    for c in conds[case]:
        alg.assert_(c)
    what = {"zero": "the summand was 0", "far": "a zero scale raised, or E' > E", "cross": "E' = E, the exponent field up"}[case]
    raised = "dot grows" if move == "dot" else f"{move} is raised"
    return Part(f"gain of the group summand whose {raised} ({what}): 2^D A(t',E') >= A(t,E) + {sh.gain_k} (2^D - 1)",
                negated_script(alg, gain_goal(alg, sh, t, t2, E, E2, D, w)))


def _scale_next_lemma(g: GstShape) -> Part:
    """A non-zero scale raised to its next value keeps its exponent and gains 1 in its significand, or gains 1 in its
    exponent field."""
    alg = QueryAlgebra()
    _, u, _, u2 = raised_pattern(alg, g.fs, "s")
    same = alg.and_(alg.eq(u2.exp, u.exp), alg.eq(u2.sig, alg.add(u.sig, 1)))
    goal = alg.or_(u.is_zero, alg.or_(same, alg.ne(u2.exp, u.exp)))
    return Part(f"next pattern (a {g.fs.name} scale raised): a non-zero scale keeps its exponent and gains 1 in its "
                  "significand, or its exponent changes", negated_script(alg, goal))


def _scaling_lemmas(g: GstShape) -> list[Part]:
    """The group summand's significand (|p| * sa) * sb (Alg. 9 line 4) grows with each factor: x <= x' gives
    x * y <= x' * y, for both factors of both products (one scale's significand is 4 bits: a small multiplier)."""
    probe = QueryAlgebra()
    s_hi = g.scale(probe, "s")[1].sig.hi
    out = []
    for what, x_hi in (("|p| * sa", g.p_hi), ("(|p| * sa) * sb", g.p_hi * s_hi)):
        for grows in ("left", "right"):
            alg = QueryAlgebra()
            x, y = ranged_var(alg, "x", 0, x_hi), ranged_var(alg, "y", 0, s_hi)
            if grows == "left":
                x2 = ranged_var(alg, "x2", 0, x_hi)
                alg.assert_(alg.le(x, x2))
                goal = alg.le(alg.mul(x, y), alg.mul(x2, y))
            else:
                y2 = ranged_var(alg, "y2", 0, s_hi)
                alg.assert_(alg.le(y, y2))
                goal = alg.le(alg.mul(x, y), alg.mul(x, y2))
            factor = what.rsplit(" * ", 1)[0 if grows == "left" else 1].strip("()")
            out.append(Part(f"scaling step: {what} does not fall when {factor} grows", negated_script(alg, goal)))
    return out


def _group_aligned_step_lemma(g: GstShape) -> Part:
    """Aligning a group summand is monotone in its significand: m <= m' gives A(m, E) <= A(m', E) at one exponent."""
    sh = g.sh
    alg = QueryAlgebra()
    t = g.fresh_group(alg)
    m, m2 = ranged_var(alg, "m", 0, t.sig.hi), ranged_var(alg, "m2", 0, t.sig.hi)
    alg.assert_(alg.le(m, m2))
    e = ranged_var(alg, "e", t.exp.lo, t.exp.hi)
    E = ranged_var(alg, "E", sh.e_lo, sh.e_hi)
    alg.assert_(alg.or_(alg.le(e, E), alg.eq(m2, 0)))
    f = alg.bconst(False)
    lo, hi = aligned(alg, Term(f, m, e, t.frac), E, sh.F), aligned(alg, Term(f, m2, e, t.frac), E, sh.F)
    return Part("aligned step: a group summand's significand m <= m' at the same exponent aligns to no less",
                  negated_script(alg, alg.le(lo, hi)))


def _group_lemmas(g: GstShape) -> list[Part]:
    out = []
    alg = QueryAlgebra()
    t, t2 = _dot_moves(g, alg)
    out.append(Part("group step, dot raised: the group summand was 0, or stays non-zero at the same exponent",
                      negated_script(alg, _group_step_goal(alg, t, t2, True))))
    out.append(_group_gain_lemma(g, "dot", "zero"))
    for who in ("sa", "sb"):
        alg = QueryAlgebra()
        t, t2, _, _ = _scale_moves(g, alg, who)
        out.append(Part(f"group step, {who} raised: the group summand was 0, or stays non-zero at an exponent not smaller",
                          negated_script(alg, _group_step_goal(alg, t, t2, False))))
        out += [_group_gain_lemma(g, who, case) for case in ("far", "cross")]
    return out + [_scale_next_lemma(g), *_scaling_lemmas(g), _group_aligned_step_lemma(g)]


def _shared_exponents_lemma(g: GstShape, m: int) -> Part:
    """Raising a block scale that m groups share: on fresh exponents (zero flags) of the groups + c summands, the m
    raised ones at one exponent e before and e' after (a group's exponent is its scales', Alg. 9 line 5), each a
    zero or non-zero with e <= e': E <= E', and E' is E or e' (with a raised summand non-zero)."""
    sh = g.sh
    p = sh.plan
    alg = QueryAlgebra()
    lo, hi = min(p.tp.exp.lo, p.tc.exp.lo), max(p.tp.exp.hi, p.tc.exp.hi)
    f = alg.bconst(False)
    e, e2 = ranged_var(alg, "er", lo, hi), ranged_var(alg, "er_2", lo, hi)  # the raised groups'
    zs = [(ranged_var(alg, f"zr{i}", 0, 1), ranged_var(alg, f"zr{i}_2", 0, 1)) for i in range(m)]
    for z, z2 in zs:
        alg.assert_(alg.or_(alg.eq(z, 0), alg.and_(alg.ne(z2, 0), alg.le(e, e2))))
    others = [Term(f, ranged_var(alg, f"z{i}", 0, 1), ranged_var(alg, f"e{i}", lo, hi), 0) for i in range(m, sh.n)]
    E = shape_e_max(alg, sh, [Term(f, z, e, 0) for z, _ in zs] + others)
    E2 = shape_e_max(alg, sh, [Term(f, z2, e2, 0) for _, z2 in zs] + others)
    lifted = alg.and_(alg.any(alg.ne(z2, 0) for _, z2 in zs), alg.eq(E2, e2))
    return Part(f"exponents, a block scale raised ({m} groups share it, one exponent): E <= E', E' = E or E' = the "
                "raised groups' exponent", negated_script(alg, alg.and_(alg.le(E, E2), alg.or_(alg.eq(E2, E), lifted))))


def _raised_peer_lemma(g: GstShape, who: str) -> Part:
    """Another group of the block whose scale ``who`` is raised, at E and at E' >= E, E' = E or its own exponent:
    it loses nothing, 2**D A(t', E') >= A(t, E) >= 0 (slack s = 2**D A(t', E') - A(t, E) >= 0)."""
    sh = g.sh
    alg = QueryAlgebra()
    t, t2, _, _ = _scale_moves(g, alg, who)
    E, E2 = fresh_exponents(alg, sh)
    for x, at in ((t, E), (t2, E2)):
        alg.assert_(alg.or_(alg.eq(x.sig, 0), alg.le(x.exp, at)))
    alg.assert_(alg.or_(alg.eq(E2, E), alg.eq(E2, t2.exp)))
    D, _ = capped_shift(alg, sh, E, E2)
    A, A2 = aligned(alg, t, E, sh.F), aligned(alg, t2, E2, sh.F)
    return Part(f"raised with it ({who} shared by two groups): the other group loses nothing, 2^D A(t',E') >= A(t,E), "
                f"D = min(E'-E, {sh.Dc})", negated_script(alg, alg.all([alg.le(0, A), alg.le(A, alg.shl(A2, D))])))


def monotone_lemmas(model: Model, K: int) -> list[Part]:
    """Every lemma of the proof, the glue first (see the module docstring)."""
    g = GstShape(model, K)
    sh = g.sh
    glue, s_rng = glue_lemma(sh.plan)
    lemmas = [glue, exponents_lemma(sh), realign_lemma(sh, "group", g.fresh_group, "a group's scaled dot"),
              realign_lemma(sh, "c"), _lane_step_lemma(g, "a"), _lane_step_lemma(g, "b"),
              *_add_step_lemmas(g), *(dot_chain_lemma(g, k) for k in range(g.G)), *_group_lemmas(g), exponent_step_lemma(sh, "c"),
              gain_lemma(sh, "c", "all"), distributivity_lemma(sh, s_rng), *composition_lemmas(sh, g.a_hi),
              value_lemma(sh, s_rng), monotone_rounding_lemma(sh.plan, s_rng, sh.F)]
    m = (model.block or g.G) // g.G  # groups that share one block scale (mxf4: 32-lane scales, 16-lane groups)
    if m > 1:
        lemmas += [_shared_exponents_lemma(g, m), *(_raised_peer_lemma(g, who) for who in ("sa", "sb")),
                   *composition_lemmas(sh, g.a_hi, peers=m - 1)]
    return lemmas


def prove_monotone(model: Model, K: int, run: Runner) -> PartsProof:
    """Prove that no single move of a finite non-negative input (or non-NaN scale) lowers GST-FDPA's D.

    "holds" with every lemma's block (expecting unsat), or "unknown" naming the first lemma a solver did not prove.
    """
    proof = run_parts(monotone_lemmas(model, K), run)
    proof.summary = "glue, dot steps, group summands' exponents and gains, re-alignment, composition, rounding"
    return proof
