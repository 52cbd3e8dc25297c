"""Symmetry: Phi(-A, B, -C) = -Phi(A, B, C) as values, proved with lemmas for one T-FDPA."""

from __future__ import annotations

from typing import Optional, Sequence

from ...encodings.algebra import Int
from ...errors import InputError
from ...formats import get_format
from ...models import Model
from ...simulate import run_model
from .._twins import (
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
from ...proof_kernel.chain import LemmaChain
from ..distinguish import ReplayError
from ..formula import Domain
from .common import (
    QueryResult,
    _check_nonempty,
    _expect_same,
    _negated_witness,
    _py_same_value,
    _replay_one,
    _result,
    _setup,
    _show,
    _unknown,
)


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
    name, K, domain = _setup(model, name, K, domain, prop)
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
    if lemmas and supports_fused_parts(model, K):
        # each lemma names the lemmas it rests on, so the solver blasts only their terms
        p = fused_parts(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
        q = fused_parts(alg, model, na, x.b, nc, x.scale_a, x.scale_b)
        G = model.G or 0
        groups: list[list[Optional[int]]] = []  # per group: the lemmas its summand rests on
        for g, (pd, qd) in enumerate(zip(p.dots, q.dots)):  # GST-FDPA: each group's exact dot (Alg. 9 line 3), then its term
            what = f"group {g}'s dot product"
            _negated_sum(chain, alg, _operands(alg, pd), _operands(alg, qd), pd, qd,
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
        _negated_sum(chain, alg, p.aligned, q.aligned, p.total, q.total, [[*ls, same_emax] for ls in lanes],
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
    final = f"(assert {alg.raw_bool(violated)})"
    script = alg.script(final)
    r = run.check(script, x.declared + ["d", "d_neg"])
    smt2 = chain.certificate(final) if chain.proven else script
    extra: dict[str, object] = {"lemmas": len(chain.proven)} if chain.proven else {}
    if r.verdict == "unknown":
        return _unknown(prop, name, model, K, domain, run, "symmetry query", r.reason, smt2=smt2, extra=extra)
    if r.verdict == "unsat":
        _check_nonempty(model, K, domain, run, prop)
        return _result(prop, "holds", name, model, K, domain, run, smt2=smt2, extra=extra,
                       reason=f"Phi(-A, B, -C) = -Phi(A, B, C) for every input ({domain.describe()}, K={K})")
    w = x.witness(r.values)
    wn = _negated_witness(model, w)
    got, got_neg = _replay_one(model, w), _replay_one(model, wn)
    _expect_same("symmetry d", r.values["d"], got, w)
    _expect_same("symmetry d_neg", r.values["d_neg"], got_neg, wn)
    if _py_same_value(out, got_neg, neg_pattern(out, got)):
        raise ReplayError(f"symmetry witness {w} does not break symmetry: d={got:#x}, d_neg={got_neg:#x}")
    return _result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": got, "d_neg": got_neg}, smt2=smt2,
                   extra=extra, reason=f"Phi(-A, B, -C) = {_show(out, got_neg)} but -Phi(A, B, C) = {_show(out, neg_pattern(out, got))}")





def _operands(alg: QueryAlgebra, total: Int) -> Optional[list[Int]]:
    """The operands ``sum_all`` added up to ``total``, in its order (None when not found, or reordered: ``canonical``)."""
    if alg.canonical:
        return None
    return next((list(g) for o, g in alg.nary if o.raw == total.raw), None)


def _negated_sum(chain: LemmaChain, alg: QueryAlgebra, terms: Optional[Sequence[Int]], neg_terms: Optional[Sequence[Int]],
                 total: Int, neg_total: Int, uses: Sequence[Sequence[Optional[int]]], *, operand: str, whole: str,
                 prefix: str = "") -> None:
    """Prove ``neg_total = -total`` operand by operand and running sum by running sum (left to right, as ``sum_all``).

    ``uses[k]``: the lemmas operand k rests on; the running sums are rebuilt
    from 0 by the same additions, so they are the very terms of the sum.
    Labels: "<prefix><operand> k ...", "<prefix>running sum k ...", "<whole> ...".
    :attr:`LemmaChain.last` is the final lemma.
    """
    if terms is None or neg_terms is None or len(terms) != len(neg_terms):
        chain.prove(f"{whole} of the negated inputs is minus {whole}", alg.eq(neg_total, alg.neg(total)),
                    uses=[i for u in uses for i in u])
        return
    run = neg_run = alg.const(0)
    last: Optional[int] = None
    for k, (x, y) in enumerate(zip(terms, neg_terms)):
        chain.prove(f"{prefix}{operand} {k} of the negated inputs is minus {operand} {k}", alg.eq(y, alg.neg(x)),
                    uses=uses[k] if k < len(uses) else [])
        this = chain.last
        run, neg_run = alg.add(run, x), alg.add(neg_run, y)
        chain.prove(f"{prefix}running sum {k} of the negated inputs is minus running sum {k}", alg.eq(neg_run, alg.neg(run)),
                    uses=[this, last])
        last = chain.last
    chain.prove(f"{whole} of the negated inputs is minus {whole}", alg.eq(neg_total, alg.neg(total)), uses=[last])
