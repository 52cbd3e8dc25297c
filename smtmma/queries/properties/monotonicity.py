"""Monotonicity: with non-negative inputs, raising one input never lowers D."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Callable, NamedTuple, Optional

from ...encodings.algebra import Bool, Int
from ...encodings.fields import Unpacked, unpack
from ...errors import InputError
from ...formats import Format, get_format
from ...models import Model
from ...simulate import run_model
from ..query_algebra import InputSet, QueryAlgebra, Runner, declare_output, output_container, value_key, witness_pins
from ..distinguish import ReplayError, Witness
from ..formula import Domain
from ...op_proofs import addmul, efdpa, fma, gstfdpa, gtrfdpa, tfdpa, trfdpa
from ...op_proofs.moves import next_moves, smallest_positive
from ...proof_kernel.blocks import Block, pin_block
from ...proof_kernel.chain import LemmaChain
from .monotone_search import search as search_candidates
from .common import (
    QUICK_TIMEOUT,
    QueryResult,
    check_nonempty,
    expect_same,
    hex_witness,
    py_value,
    replay_one,
    make_result,
    setup_query,
    show_value,
    unknown_result,
)

__all__ = ["MONOTONE_FACTS", "MonotoneFacts", "MoveFormula", "OneMoveFormula", "monotone_facts",
           "monotone_script", "monotonicity", "raised_inputs", "uncovered_monotone"]


class MonotoneFacts(NamedTuple):
    """One op's monotonicity as facts in the query's own formula: whether they cover a model with K lanes, and the
    proof (``facts(chain, formula) -> bool``, ``formula`` a :class:`MoveFormula`: a fact per input position that
    raising it never lowers D)."""

    supports: Callable[[Model, int], bool]
    facts: Callable[[LemmaChain, Any], bool]  # its formula: a MoveFormula, or a OneMoveFormula where :attr:`one_move`
    #: each application asserted only in the checks that use it (:attr:`LemmaChain.scoped`): FTZ-AddMul's ~400
    #: applications with FP32 adders in their bodies, all kept, made the checker take 1,902 s
    scoped: bool = False
    #: the formula holds one symbolic move (:class:`OneMoveFormula`: two runs) instead of a run per input position
    #: (:class:`MoveFormula`: 65 runs of an L = 32 T-FDPA)
    one_move: bool = False
    #: the chain asks its checks in an incremental session (:attr:`LemmaChain.sessions`); GST-FDPA's facts, each a
    #: script of its named facts in 0.1 s, ran past the session's 5 s budget every time
    sessions: bool = True


#: the ops whose monotonicity is a chain of facts on the model's own terms
MONOTONE_FACTS: dict[str, MonotoneFacts] = {
    "e-fdpa": MonotoneFacts(efdpa.supports_monotone, efdpa.monotone_facts),  # Alg. 6
    "fma": MonotoneFacts(fma.supports_monotone, fma.monotone_facts, scoped=True, sessions=False),  # Alg. 3-4
    "ftz-addmul": MonotoneFacts(addmul.supports_monotone, addmul.monotone_facts, scoped=True),  # Alg. 1-2
    "t-fdpa": MonotoneFacts(tfdpa.supports_monotone_facts, tfdpa.monotone_facts_of, scoped=True, one_move=True),  # Alg. 7, 5
    "tr-fdpa": MonotoneFacts(trfdpa.supports_monotone, trfdpa.monotone_facts, scoped=True, one_move=True),  # Alg. 10
    "gtr-fdpa": MonotoneFacts(gtrfdpa.supports_monotone, gtrfdpa.monotone_facts, scoped=True, one_move=True),  # Alg. 11
    "gst-fdpa": MonotoneFacts(gstfdpa.supports_monotone, gstfdpa.monotone_facts, scoped=True, one_move=True,
                              sessions=False),  # Alg. 9
}


def monotone_facts(model: Model, K: int) -> Optional[MonotoneFacts]:
    """The chain of facts that covers ``model`` with K lanes (:data:`MONOTONE_FACTS`), None if none."""
    op = MONOTONE_FACTS.get(model.kind)
    return op if op is not None and op.supports(model, K) else None


def _domain_inputs(model: Model, K: int, domain: Domain) -> tuple[QueryAlgebra, InputSet, list[str]]:
    """A formula's inputs restricted to ``domain``, and the labels of their positions (c, a_k, b_k, scales)."""
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    x.restrict(domain)
    return alg, x, [label for label, _, _ in _positions(x, domain)]


def _below(alg: QueryAlgebra, out: Format, d2: Int, d: Int, u: Unpacked) -> Bool:
    """"D' is below D" (the output patterns d2, d of format ``out``, ``u`` d unpacked, made once for every move;
    neither NaN)."""
    u2 = unpack(alg, out, d2)
    return alg.all([alg.not_(u.is_nan), alg.not_(u2.is_nan), alg.lt(value_key(alg, out, d2), value_key(alg, out, d))])


class MoveFormula:
    """Every single move in one formula: the inputs ``x`` (of the domain, non-negative and finite), and for each input
    position (:attr:`labels`: c, a_k, b_k, scales) a copy :attr:`raised` with that input raised to its next value
    (:func:`raised_inputs`); D of each run (terms, not declared: the premise of every fact is then the domain alone,
    and a check bit-blasts only what it names), and :attr:`drops`: per position, "the raised run's D is below D"
    (neither NaN).  The property fails iff some drop is satisfiable: :meth:`statement`."""

    def __init__(self, model: Model, K: int, domain: Domain) -> None:
        alg, x, self.labels = _domain_inputs(model, K, domain)
        self.alg, self.x, self.model, self.domain = alg, x, model, domain
        self.raised = {label: raised_inputs(alg, x, label, domain) for label in self.labels}
        self.d = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
        self.outputs: dict[str, Int] = {}
        self.drops: dict[str, Bool] = {}
        out = output_container(model)
        u = unpack(alg, out, self.d)
        for label, y in self.raised.items():
            d2 = self.outputs[label] = run_model(alg, model, y.a, y.b, y.c, y.scale_a, y.scale_b)
            self.drops[label] = _below(alg, out, d2, self.d, u)

    def statement(self) -> str:
        """The query's last assertion: some single move lowers D."""
        return f"(assert {self.alg.raw_bool(self.alg.any(list(self.drops.values())))})"


class OneMoveFormula:
    """One symbolic single move in one formula: the inputs ``x`` (of the domain, non-negative and finite), for each
    input position its next value (declared, ``<label>_2``), a position :attr:`sel` (an integer: the index of the
    moved input in :attr:`labels`), and the copy :attr:`y` whose input at that position is its next value and every
    other input ``x``'s.  D of both runs are terms; :attr:`drop` is "the moved run's D is below D" (neither NaN).
    The property fails iff the drop is satisfiable: :meth:`statement`, the same statement as :class:`MoveFormula`'s
    with one run for every move, not one per position (2 runs of an L = 32 FDPA, not 65)."""

    def __init__(self, model: Model, K: int, domain: Domain) -> None:
        alg, x, self.labels = _domain_inputs(model, K, domain)
        self.alg, self.x, self.model, self.domain = alg, x, model, domain
        self.sel = alg.var("move", max(1, (len(self.labels) - 1).bit_length()) + 1)
        alg.assert_(alg.le(self.sel, len(self.labels) - 1))
        alg.assert_(alg.le(0, self.sel))
        raised = {label: raised_inputs(alg, x, label, domain) for label in self.labels}
        y = self.y = copy.copy(x)
        y.a, y.b = list(x.a), list(x.b)
        y.scale_a = list(x.scale_a) if x.scale_a is not None else None
        y.scale_b = list(x.scale_b) if x.scale_b is not None else None
        y.suffix = "_2"
        #: per position, its next value (a declared constant)
        self.next: dict[str, Int] = {}
        for label in self.labels:
            who, k = _split_label(label)
            here = self.moved(label)
            if who == "c":
                self.next[label] = raised[label].c
                y.c = alg.ite(here, raised[label].c, x.c)
                continue
            lanes = {"a": (y.a, raised[label].a), "b": (y.b, raised[label].b),
                     "sa": (y.scale_a, raised[label].scale_a), "sb": (y.scale_b, raised[label].scale_b)}[who]
            assert lanes[0] is not None and lanes[1] is not None
            self.next[label] = lanes[1][k]
            lanes[0][k] = alg.ite(here, lanes[1][k], lanes[0][k])
        self.d = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
        self.d2 = run_model(alg, model, y.a, y.b, y.c, y.scale_a, y.scale_b)
        out = output_container(model)
        self.drop = _below(alg, out, self.d2, self.d, unpack(alg, out, self.d))

    def moved(self, label: str) -> Bool:
        """"The move raises input ``label``" (the selector equals its index)."""
        return self.alg.eq(self.sel, self.labels.index(label))

    def statement(self) -> str:
        """The query's last assertion: the move lowers D."""
        return f"(assert {self.alg.raw_bool(self.drop)})"


def uncovered_monotone(model: Model, K: int) -> str:
    """Why :data:`MONOTONE_FACTS` does not cover ``model`` with K lanes (one phrase)."""
    if model.kind not in MONOTONE_FACTS:
        return f"no op proof of {model.kind}'s monotonicity"
    if model.c_after:
        return (f"the proof of chains with C added last (T-FDPAs, C in D's format, K within one issue) does not take "
                f"{model.describe()} at K={K}")
    if model.kind != "fma" and model.L is not None and K != model.L:
        return f"K={K} is not one {model.kind} of L={model.L} lanes, and no proof chains them"
    return f"the {model.kind} proofs do not take {model.describe()} (see their supports_monotone)"



def _positions(x: InputSet, domain: Domain) -> list[tuple[str, Int, Format]]:
    """Inputs that may change, cheapest witnesses first: c, then a_k and b_k lane by lane, then scales."""
    fixed = {n for n, _ in domain.fixed}
    out: list[tuple[str, Int, Format]] = []
    if "c" not in fixed:
        out.append(("c", x.c, x.c_fmt))
    for k in range(x.K):
        for who, terms, fmt in (("a", x.a, x.a_fmt), ("b", x.b, x.b_fmt)):
            if f"{who}{k}" not in fixed:
                out.append((f"{who}{k}", terms[k], fmt))
    if x.scale_a is not None and x.scale_b is not None and x.scale_fmt is not None:
        for j in range(len(x.scale_a)):
            for who, terms in (("sa", x.scale_a), ("sb", x.scale_b)):
                if f"{who}{j}" not in fixed:
                    out.append((f"{who}{j}", terms[j], x.scale_fmt))
    return out


def monotonicity(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    search: bool = True,
) -> QueryResult:
    """Do larger non-negative finite inputs ever give a smaller output?

    The domain is intersected with finite non-negative inputs.  Between two
    inputs X <= X' of the domain lies a chain of single moves, each raising
    one input to the next value the domain allows (or swapping a zero's
    sign), so the property holds iff no single move lowers the output: one
    query per input position (``c`` first, then ``a_k``, ``b_k``, scales),
    each small, and complete both for witnesses and for the proof.
    With ``search`` (and the full domain), structured candidate pairs
    (Fasi et al. §3.1.4: c raised to a power of two, so the products lose
    their low bits) are first checked by the simulator; a witness found so
    is pinned in the query and confirmed by the solver.  Where an op's
    facts cover the model (:data:`MONOTONE_FACTS`: one E-, T-, TR-, GTR- or GST-FDPA, a chain of T-FDPAs with C
    added last, FTZ-AddMul's tree, a chain of FMAs), every move is
    put in one formula (:class:`MoveFormula`, or one symbolic move: :class:`OneMoveFormula`) and the facts are
    proved about the model's own terms, the query's statement last; if they do not prove the property, each
    position gets a short solver call (a witness), then the full timeout
    (a proof).  ``blocks``: the pinned witness query (sat), the proof's
    lemmas, or every position's query (unsat).
    ``witness`` holds the smaller inputs, ``extra["larger"]`` the larger
    ones (hex), ``outputs`` both outputs.
    """
    prop = "monotonicity"
    name, K, domain = setup_query(model, name, K, domain, prop)
    if any(sign == "-" for _, sign in domain.signs):
        raise InputError(f"monotonicity is a property of non-negative inputs; drop {', '.join(w + '-' for w, s in domain.signs if s == '-')}")
    full = domain == Domain() or domain == Domain(nonneg=True)
    domain = replace(domain, nonneg=True, specials=False)
    run = Runner(solver, timeout, seed)
    out = output_container(model)
    labels = [label for label, _, _ in _positions(InputSet.of(QueryAlgebra(), model, K), domain)]

    def build(label: str) -> tuple[str, InputSet]:
        alg = QueryAlgebra()
        x = InputSet.of(alg, model, K)
        x.restrict(domain)
        y = raised_inputs(alg, x, label, domain)
        return monotone_script(alg, model, x, y, out), x

    # 1. simulation: structured candidates (002 §3.1.4) checked by the NumPy simulator, then pinned in the query
    if search and full:
        hit = search_candidates(model, K, seed=seed)
        if hit is not None:
            label, w, w2 = hit
            script, x = build(label)
            pins = witness_pins(model, w)
            who, k = _split_label(label)
            moved = w2.c if who == "c" else getattr(w2, _WITNESS_FIELD[who])[k]
            pins[f"{label}_2"] = (moved, _format_of(model, who).bits)
            block = pin_block(f"raising {label} lowers the output (the witness pinned)", script, pins, "sat")
            r = run.check(block.text, x.declared + [f"{label}_2", "d", "d_larger"])
            if r.verdict == "sat":
                return _fails(prop, name, model, K, domain, run, out, label, x.witness(r.values), r.values, script, [block])
    # 2. a short solver search for a witness per input position, then 3. the proofs (every position unsat)
    reasons: dict[str, str] = {}
    proved: dict[str, str] = {}
    quick = min(QUICK_TIMEOUT, timeout)
    first_lanes = [lb for lb in labels if lb in ("c", "a0", "b0", "sa0", "sb0")]
    passes = ([(quick, first_lanes)] if quick < timeout else []) + [(timeout, labels)]
    # the compositional proof (one T-/TR-/GTR-/GST-/E-FDPA, a chain of FMAs, or FTZ-AddMul's tree), every position at once
    parts_reason = ""
    op = monotone_facts(model, K) if full else None
    if op is not None:  # the op's facts on the model's own terms, every position in one formula
        f = (OneMoveFormula if op.one_move else MoveFormula)(model, K, domain)
        chain = LemmaChain(f.alg, run, scoped=op.scoped, sessions=op.sessions)
        final = f.statement()
        r = chain.check_final(final) if op.facts(chain, f) else None
        if r is not None and r.verdict == "unsat":
            check_nonempty(model, K, domain, run, prop)
            last = ("for one symbolic move of any input: it never lowers D" if op.one_move
                    else "per input position: raising it never lowers D")
            return make_result(prop, "holds", name, model, K, domain, run, smt2=chain.certificate(final),
                               extra={"lemmas": len(chain.proven) + len(chain.lemmas)},
                               reason=f"no single move of one input lowers the output: {len(chain.proven)} facts about the "
                               f"model's own terms (the last, {last}) and "
                               f"{len(chain.lemmas)} lemmas applied to them ({domain.describe()}, K={K})")
        why = chain.stopped if r is None else f"the final check: {r.verdict}" + (f" ({r.reason})" if r.reason else "")
        parts_reason = f"facts on the model's terms: {why}; "
    if full and op is None:
        parts_reason = f"no proof covers it ({uncovered_monotone(model, K)}); "
    for limit, todo in passes:
        for label in todo:
            if label in proved:
                continue
            if limit == timeout and reasons:
                break  # one position the solver could not decide: the verdict is unknown whatever the others give
            script, x = build(label)
            r = run.check(script, x.declared + [f"{label}_2", "d", "d_larger"], timeout=limit)
            if r.verdict == "unknown":
                reasons[label] = f"raising {label}: {r.reason}"
                continue
            reasons.pop(label, None)
            if r.verdict == "unsat":
                proved[label] = script
                continue
            w = x.witness(r.values)
            pins = witness_pins(model, w)
            who, k = _split_label(label)
            pins[f"{label}_2"] = (r.values[f"{label}_2"], _format_of(model, who).bits)
            block = pin_block(f"raising {label} lowers the output (the witness pinned)", script, pins, "sat")
            return _fails(prop, name, model, K, domain, run, out, label, w, r.values, script, [block])
        if limit < timeout:
            reasons.clear()  # the short pass only looks for witnesses
    blocks = [Block(f"raising {label} to its next value never lowers the output", s, "unsat") for label, s in proved.items()]
    first = next(iter(proved.values()), "")
    if reasons:
        return unknown_result(prop, name, model, K, domain, run, "monotonicity", parts_reason + "; ".join(reasons.values()), smt2=first,
                              extra={"proved": sorted(proved)})
    check_nonempty(model, K, domain, run, prop)
    return make_result(prop, "holds", name, model, K, domain, run, smt2=first, blocks=blocks, extra={"queries": len(proved)},
                       reason=f"raising any one input to the next value never lowers the output, so no larger inputs do "
                   f"({domain.describe()}, K={K})")


def _format_of(model: Model, who: str) -> Format:
    return get_format({"c": model.c_fmt, "a": model.a_fmt, "b": model.b_fmt}.get(who) or model.scale_fmt or "")


def _fails(prop: str, name: str, model: Model, K: int, domain: Domain, run: Runner, out: Format, label: str, w: Witness,
           values: dict[str, int], script: str, blocks: list[Block]) -> QueryResult:
    """The "fails" result of a witness pair: replayed through the simulator, re-checked in exact arithmetic."""
    w2 = _with_input(w, label, values[f"{label}_2"])
    d1, d2 = replay_one(model, w), replay_one(model, w2)
    expect_same("monotonicity d", values["d"], d1, w)
    expect_same("monotonicity d_larger", values["d_larger"], d2, w2)
    _check_larger(model, w, w2)
    v1, v2 = py_value(out, d1), py_value(out, d2)
    if v1 is None or v2 is None or not v2 < v1:
        raise ReplayError(f"monotonicity witness does not decrease: {d1:#x} -> {d2:#x} on {w} -> {w2}")
    return make_result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": d1, "d_larger": d2}, smt2=script,
                   blocks=blocks, extra={"larger": hex_witness(model, w2), "raised": label},
                   reason=f"raising {label} gives a smaller output: {show_value(out, d1)} -> {show_value(out, d2)}")


def _split_label(label: str) -> tuple[str, int]:
    """``"c"`` -> ("c", 0); ``"a3"`` -> ("a", 3); ``"sb0"`` -> ("sb", 0)."""
    if label == "c":
        return "c", 0
    for who in ("sa", "sb", "a", "b"):
        if label.startswith(who) and label[len(who):].isdigit():
            return who, int(label[len(who):])
    raise AssertionError(label)


_WITNESS_FIELD = {"a": "a", "b": "b", "sa": "scale_a", "sb": "scale_b"}


def _with_input(w: Witness, label: str, value: int) -> Witness:
    """``w`` with input ``label`` (``c``, ``a3``, ``sb0``) set to ``value``."""
    who, k = _split_label(label)
    if who == "c":
        return replace(w, c=value)
    items = list(getattr(w, _WITNESS_FIELD[who]))
    items[k] = value
    return replace(w, **{_WITNESS_FIELD[who]: tuple(items)})


def raised_inputs(alg: QueryAlgebra, x: InputSet, label: str, domain: Domain) -> InputSet:
    """A copy of ``x``'s inputs where input ``label`` takes the next value of the domain (``<label>_2``).

    The next value of a zero is the smallest positive value the domain
    allows, or a zero (of either sign); of a positive value, the next
    pattern (value order is pattern order for non-negative values).
    """
    y = copy.copy(x)
    y.a, y.b = list(x.a), list(x.b)
    y.scale_a = list(x.scale_a) if x.scale_a is not None else None
    y.scale_b = list(x.scale_b) if x.scale_b is not None else None
    y.suffix = "_2"
    who, k = _split_label(label)
    lanes = {"c": None, "a": y.a, "b": y.b, "sa": y.scale_a, "sb": y.scale_b}[who]
    fmt = {"c": x.c_fmt, "a": x.a_fmt, "b": x.b_fmt}.get(who, x.scale_fmt)
    assert fmt is not None
    old = x.c if lanes is None else lanes[k]
    v = alg.var(f"{label}_2", fmt.bits)
    if who in ("sa", "sb"):
        alg.assert_(alg.not_(unpack(alg, fmt, v).is_nan))
        alg.assert_(alg.not_(unpack(alg, fmt, old).is_nan))
        first = smallest_positive(fmt, None, True)
    else:
        exp = domain.cexp if who == "c" else domain.exp
        x._restrict_value(fmt, v, domain, exp, who)
        first = smallest_positive(fmt, exp, domain.subnormals)
        if who != "c" and domain.lanes is not None and k >= domain.lanes:
            alg.assert_(unpack(alg, fmt, v).is_zero)  # a lane the domain keeps at zero
    if lanes is None:
        y.c = v
    else:
        lanes[k] = v
    alg.assert_(alg.any(next_moves(alg, fmt, old, v, first)))
    return y


def monotone_script(alg: QueryAlgebra, model: Model, x: InputSet, y: InputSet, out: Format) -> str:
    d1 = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
    d2 = run_model(alg, model, y.a, y.b, y.c, y.scale_a, y.scale_b)
    declare_output(alg, "d", d1, out.bits)
    declare_output(alg, "d_larger", d2, out.bits)
    u1, u2 = unpack(alg, out, d1), unpack(alg, out, d2)
    drop = alg.all([alg.not_(u1.is_nan), alg.not_(u2.is_nan), alg.lt(value_key(alg, out, d2), value_key(alg, out, d1))])
    return alg.script(f"(assert {alg.raw_bool(drop)})")


def _check_larger(model: Model, w: Witness, w2: Witness) -> None:
    """Python re-check of a monotonicity witness's premise: non-negative inputs, each not smaller."""
    pairs: list[tuple[str, int, int]] = [(model.c_fmt, w.c, w2.c)]
    pairs += [(model.a_fmt, u, v) for u, v in zip(w.a, w2.a)] + [(model.b_fmt, u, v) for u, v in zip(w.b, w2.b)]
    if model.scale_fmt and w.scale_a is not None and w2.scale_a is not None and w.scale_b is not None and w2.scale_b is not None:
        pairs += [(model.scale_fmt, u, v) for u, v in zip(w.scale_a + w.scale_b, w2.scale_a + w2.scale_b)]
    for fmt_name, u, v in pairs:
        fmt = get_format(fmt_name)
        vu, vv = py_value(fmt, u), py_value(fmt, v)
        if vu is None or vv is None or vu < 0 or vv < vu:
            raise ReplayError(f"monotonicity witness breaks its premise: {fmt.name} {u:#x} -> {v:#x}")
