"""Symmetry: Phi(-A, B, -C) = -Phi(A, B, C) as values, proved with lemma chains in the query's own formula.

One T-/ST-/GST-FDPA: the fused sum of the negated inputs is the negated sum,
summand by summand; FMA chains, E-FDPA and FTZ-AddMul: each op of the negated
run is the original op negated (:data:`SYMMETRY_FACTS`, the ops' own facts in
:mod:`smtmma.op_proofs`).  Any other model: the two runs in one query.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from ...errors import InputError
from ...formats import get_format
from ...models import Model
from ...simulate import run_model
from ..query_algebra import (
    InputSet,
    QueryAlgebra,
    Runner,
    declare_output,
    fused_parts,
    neg_pattern,
    output_container,
    same_value,
    supports_fused_parts,
)
from ...op_proofs import addmul as addmul_proofs
from ...op_proofs import efdpa as efdpa_proofs
from ...op_proofs import fma as fma_proofs
from ...op_proofs import tfdpa as tfdpa_proofs
from ...op_proofs.fused_sum import negated_sum_lemmas, sum_operands
from ...proof_kernel.chain import LemmaChain
from ..distinguish import ReplayError
from ..formula import Domain
from .common import (
    QueryResult,
    check_nonempty,
    expect_same,
    negated_witness,
    py_same_value,
    replay_one,
    make_result,
    setup_query,
    show_value,
    unknown_result,
)


__all__ = ["SYMMETRY_FACTS", "SymmetryFacts", "symmetry"]


class SymmetryFacts(NamedTuple):
    """One op's symmetry facts: whether they cover a model with K lanes, and the proof (``prove(chain, alg, model,
    x, na, nc, decoded, decoded_c)``: facts in the query's formula that the negated run is the original negated, op
    by op; returns the fact about D)."""

    supports: Callable[[Model, int], bool]
    prove: Callable[..., Optional[int]]


#: the ops whose datapath is proved negated step by step (T-/ST-/GST-FDPA: the fused-sum chain in :func:`symmetry`)
SYMMETRY_FACTS: dict[str, SymmetryFacts] = {
    "t-fdpa": SymmetryFacts(tfdpa_proofs.supports_chained_symmetry, tfdpa_proofs.negated_chain_facts),  # Alg. 5 chains
    "fma": SymmetryFacts(fma_proofs.supports_symmetry, fma_proofs.negated_chain_facts),  # Alg. 3-4, FMA by FMA
    "e-fdpa": SymmetryFacts(efdpa_proofs.supports_symmetry, efdpa_proofs.negated_sum_facts),  # Alg. 6
    "ftz-addmul": SymmetryFacts(addmul_proofs.supports_symmetry, addmul_proofs.negated_chain_facts),  # Alg. 1-2, op by op
}


def symmetry(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    lemmas: bool = True,
) -> QueryResult:
    """Is ``Phi(-A, B, -C) = -Phi(A, B, C)`` (as values) for every input of the domain?

    The model runs twice in one formula, on ``(A, B, C)`` and on the
    negated patterns; the second run decodes the same significands.  For
    one T-FDPA/ST-FDPA (K <= L) with ``lemmas``, the solver first proves,
    summand by summand (group dot by group dot for GST-FDPA) and running
    sum by running sum, that the fused sum
    of the negated inputs is the negated sum; the proved lemmas then make
    the final query easy (bitwuzla, L = 4: 1.5 s instead of 16 s).
    ``smt2`` is then an incremental script that proves every lemma, then
    the property (every ``check-sat`` answers unsat).
    """
    prop = "symmetry"
    name, K, domain = setup_query(model, name, K, domain, prop)
    fa, fc = get_format(model.a_fmt), get_format(model.c_fmt)
    for fmt, who in ((fa, "A"), (fc, "C")):
        if not fmt.signed or fmt.sign_ignored:
            raise InputError(f"symmetry: {who} is {fmt.name}, which has no sign to negate")
    run = Runner(solver, timeout, seed)
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    x.restrict(domain)
    na = [alg.negate(v, fa) for v in x.a]
    nc = alg.negate(x.c, fc)
    chain = LemmaChain(alg, run)
    # the negated inputs share the originals' decoded fields: prove it, so the certificate trusts nothing
    decoded: list[Optional[int]] = []
    for k, v in enumerate(na):
        chain.prove(f"decoding -a{k} gives the fields of a{k}, sign flipped", alg.decoding_lemma(v, fa), uses=())
        decoded.append(chain.last)
    chain.prove("decoding -c gives the fields of c, sign flipped", alg.decoding_lemma(nc, fc), uses=())
    decoded_c = chain.last
    d_fact: Optional[int] = None  # a proved fact: D of the negated inputs has D's fields, sign flipped
    facts = SYMMETRY_FACTS.get(model.kind)
    if lemmas and facts is not None and facts.supports(model, K):
        d_fact = facts.prove(chain, alg, model, x, na, nc, decoded, decoded_c)
    elif lemmas and supports_fused_parts(model, K):
        # each lemma names the lemmas it rests on, so the solver blasts only their terms
        p = fused_parts(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
        q = fused_parts(alg, model, na, x.b, nc, x.scale_a, x.scale_b)
        G = model.G or 0
        groups: list[list[Optional[int]]] = []  # per group: the lemmas its summand rests on
        for g, (pd, qd) in enumerate(zip(p.dots, q.dots)):  # GST-FDPA: each group's exact dot (Alg. 9 line 3), then its term
            what = f"group {g}'s dot product"
            negated_sum_lemmas(chain, alg, sum_operands(alg, pd), sum_operands(alg, qd), pd, qd,
                               [[i] for i in decoded[g * G:(g + 1) * G]], operand="operand", whole=what, prefix=f"{what}: ")
            dot = chain.last
            chain.prove(f"group {g}'s dot product of the negated inputs has the same magnitude", alg.eq(alg.abs(qd), alg.abs(pd)),
                        uses=[dot])
            chain.prove(f"group {g}'s scaled summand of the negated inputs has the same significand",
                        alg.eq(q.terms[g].sig, p.terms[g].sig), uses=[chain.last])
            same_sig = chain.last
            chain.prove(f"group {g}'s scaled summand of the negated inputs has the opposite sign (or is zero)",
                        alg.or_(alg.eq(p.terms[g].sig, 0), alg.xor(q.terms[g].neg, p.terms[g].neg)), uses=[same_sig, dot])
            groups.append([same_sig, chain.last])
        lanes = [*(groups if p.dots else [[i] for i in decoded]), [decoded_c]]  # what each summand is built from, c last
        chain.prove("the negated inputs align at the same e_max", alg.eq(q.e_max, p.e_max), uses=[i for ls in lanes for i in ls])
        same_emax = chain.last
        negated_sum_lemmas(chain, alg, p.aligned, q.aligned, p.total, q.total, [[*ls, same_emax] for ls in lanes],
                           operand="summand", whole="the fused sum")
        if model.carry_bits is not None:
            assert model.F is not None
            chain.prove("the carry-limited register is negated too",
                        alg.eq(q.wrapped(alg, model.F, model.carry_bits), alg.neg(p.wrapped(alg, model.F, model.carry_bits))),
                        uses=[chain.last])
    out = output_container(model)
    d = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
    dn = run_model(alg, model, na, x.b, nc, x.scale_a, x.scale_b)
    declare_output(alg, "d", d, out.bits)
    declare_output(alg, "d_neg", dn, out.bits)
    violated = alg.not_(same_value(alg, out, dn, alg.negate(d, out)))
    if d_fact is not None:  # the property itself, from that fact alone (the final check then has it in hand)
        chain.prove("D of the negated inputs is minus D, as values", alg.not_(violated), uses=[d_fact])
    final = f"(assert {alg.raw_bool(violated)})"
    script = alg.script(final)
    r = chain.check_final(final, x.declared + ["d", "d_neg"])
    smt2 = chain.certificate(final) if chain.proven else script
    extra: dict[str, object] = {"lemmas": len(chain.proven) + len(chain.lemmas)} if chain.proven else {}  # facts and lemmas
    if r.verdict == "unknown":
        return unknown_result(prop, name, model, K, domain, run, "symmetry query", r.reason, smt2=smt2, extra=extra)
    if r.verdict == "unsat":
        check_nonempty(model, K, domain, run, prop)
        return make_result(prop, "holds", name, model, K, domain, run, smt2=smt2, extra=extra,
                           reason=f"Phi(-A, B, -C) = -Phi(A, B, C) for every input ({domain.describe()}, K={K})")
    w = x.witness(r.values)
    wn = negated_witness(model, w)
    got, got_neg = replay_one(model, w), replay_one(model, wn)
    expect_same("symmetry d", r.values["d"], got, w)
    expect_same("symmetry d_neg", r.values["d_neg"], got_neg, wn)
    if py_same_value(out, got_neg, neg_pattern(out, got)):
        raise ReplayError(f"symmetry witness {w} does not break symmetry: d={got:#x}, d_neg={got_neg:#x}")
    return make_result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": got, "d_neg": got_neg}, smt2=smt2,
                   extra=extra, reason=f"Phi(-A, B, -C) = {show_value(out, got_neg)} but -Phi(A, B, C) = {show_value(out, neg_pattern(out, got))}")
