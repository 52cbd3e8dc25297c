"""Order independence: whether permuting the products (a_k, b_k) can change D."""

from __future__ import annotations

from typing import Optional

from ...encodings.algebra import Bool, Int
from ...models import Model
from ...proof_kernel.blocks import Block, chain_block, pin_block
from ...simulate import run_model
from ..query_algebra import InputSet, QueryAlgebra, Runner, declare_output, output_container, witness_pins
from ...proof_kernel.chain import LemmaChain
from ..distinguish import ReplayError, Witness
from ..formula import Domain
from .common import (
    QUICK_TIMEOUT,
    QueryResult,
    FDPA_KINDS,
    check_nonempty,
    expect_same,
    replay_one,
    make_result,
    setup_query,
    show_value,
    unknown_result,
)


def _transpositions(model: Model, K: int) -> list[int]:
    """Adjacent transpositions (k, k+1) to test, those across a boundary of the model's grouping first."""
    size = model.L if model.L is not None and model.kind in FDPA_KINDS else (model.P or 1)
    ks = list(range(K - 1))
    if model.block:
        ks = [k for k in ks if k // model.block == (k + 1) // model.block]  # scales stay with their positions
    if model.kind == "gtr-fdpa":
        size = 2  # even and odd lanes form separate groups
    return sorted(ks, key=lambda k: (0 if (k + 1) % max(size, 1) == 0 else 1, k))


def order_independence(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    canonical: bool = True,
    certify: bool = False,
) -> QueryResult:
    """Can permuting the products (a_k, b_k) change the output bits?

    Adjacent transpositions generate every permutation, so the property
    holds when each transposition is proved harmless; the first one that
    is not gives the witness (``extra["permutation"]``: output lane i takes
    input lane ``permutation[i]``).  Those crossing a chunk (K > L), pair
    (FTZ-AddMul) or even/odd group (GTR-FDPA) boundary are tried first.
    Block-scaled models only permute within a block.

    With ``canonical`` (the default) the formula builds exact sums and
    maxima of many operands in a fixed operand order (the algebra is exact,
    so their value is the same in any order): the permuted run of one fused
    sum then builds the same terms as the original, and only an order
    dependence through rounding, chunks or groups is left to the solver
    (``extra["identical_terms"]`` counts the transpositions settled so).

    The certificate (``blocks``, with ``certify``; off by default: minutes for L = 8) never rests on that
    shortcut: each transposition is proved again on a formula whose two
    runs are built in their own operand order (distinct terms), with
    lemma check-sats first proving that each exact sum and maximum of the
    permuted run equals the original run's; a witness is pinned in the
    same faithful formula.  ``smt2`` is the first block.
    """
    prop = "order-independence"
    name, K, domain = setup_query(model, name, K, domain, prop)
    run = Runner(solver, timeout, seed)
    out = output_container(model)
    gens = _transpositions(model, K)
    reasons: list[str] = []
    first_script = ""
    blocks: list[Block] = []
    same_terms = 0  # transpositions whose two runs built the very same output term
    for k in gens:
        perm = list(range(K))
        perm[k], perm[k + 1] = perm[k + 1], perm[k]
        alg = QueryAlgebra(canonical=canonical)
        x = InputSet.of(alg, model, K)
        x.restrict(domain)
        d = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
        dp = run_model(alg, model, [x.a[i] for i in perm], [x.b[i] for i in perm], x.c, x.scale_a, x.scale_b)
        declare_output(alg, "d", d, out.bits)
        declare_output(alg, "d_permuted", dp, out.bits)
        script = alg.script("(assert (not (= d d_permuted)))")
        first_script = first_script or script
        same_terms += d.raw == dp.raw and d.const == dp.const
        r = run.check(script, x.declared + ["d", "d_permuted"])
        if r.verdict == "unknown":
            reasons.append(f"swapping lanes {k} and {k + 1}: {r.reason}")
            continue
        if r.verdict == "unsat":
            continue
        w = x.witness(r.values)
        wp = Witness(tuple(w.a[i] for i in perm), tuple(w.b[i] for i in perm), w.c, w.scale_a, w.scale_b)
        got, got_p = replay_one(model, w), replay_one(model, wp)
        expect_same("order-independence d", r.values["d"], got, w)
        expect_same("order-independence d_permuted", r.values["d_permuted"], got_p, wp)
        if got == got_p:
            raise ReplayError(f"order-independence witness {w} gives the same output after swapping lanes {k} and {k + 1}")
        faithful, _, _ = _faithful(model, K, domain, perm)
        block = pin_block(f"swapping lanes {k} and {k + 1} changes the output (the witness pinned; both runs built in their own order)",
                          faithful.script("(assert (not (= d d_permuted)))"), witness_pins(model, w), "sat")
        return make_result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": got, "d_permuted": got_p},
                           smt2=block.text, blocks=[block], extra={"permutation": perm},
                       reason=f"swapping lanes {k} and {k + 1} changes the output: {show_value(out, got)} -> {show_value(out, got_p)}")
    if not reasons and certify:
        for k in gens:  # the certificate: each transposition proved on a formula where both runs are their own terms
            perm = list(range(K))
            perm[k], perm[k + 1] = perm[k + 1], perm[k]
            text = _certify(model, K, domain, perm, run)
            if text is None:
                reasons.append(f"swapping lanes {k} and {k + 1}: no standalone proof within the time limit")
                break
            blocks.append(chain_block(f"swapping lanes {k} and {k + 1} never changes the output", text))
        first_script = blocks[0].text + "\n(check-sat)\n" if blocks else first_script
    if reasons:
        return unknown_result(prop, name, model, K, domain, run, "order independence", "; ".join(reasons), smt2=first_script)
    if gens:
        check_nonempty(model, K, domain, run, prop)
    return make_result(prop, "holds", name, model, K, domain, run, smt2=first_script, blocks=blocks,
                       extra={"transpositions": len(gens), "identical_terms": same_terms},
                   reason=(f"no permutation of the products changes the output ({domain.describe()}, K={K})" if gens
                           else f"nothing to permute (K={K})"))


def _faithful(model: Model, K: int, domain: Domain, perm: list[int]) -> tuple[QueryAlgebra, list[tuple[Int, list[Int]]], list[tuple[Int, list[Int]]]]:
    """A formula of both runs, each built in its own operand order (no canonical sums): (algebra, sums of run 1, of run 2)."""
    alg = QueryAlgebra(canonical=False)
    x = InputSet.of(alg, model, K)
    x.restrict(domain)
    out = output_container(model)
    n0 = len(alg.nary)
    d = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
    n1 = len(alg.nary)
    dp = run_model(alg, model, [x.a[i] for i in perm], [x.b[i] for i in perm], x.c, x.scale_a, x.scale_b)
    declare_output(alg, "d", d, out.bits)
    declare_output(alg, "d_permuted", dp, out.bits)
    return alg, alg.nary[n0:n1], alg.nary[n1:]


def _certify(model: Model, K: int, domain: Domain, perm: list[int], run: Runner) -> Optional[str]:
    """A lemma chain proving ``d = d_permuted`` on the faithful formula, or None when a check is not unsat.

    Lemmas: the i-th exact sum/maximum of the permuted run equals the i-th
    of the original run (where the solver proves it; the others are left
    out), then the property itself.
    """
    alg, first, second = _faithful(model, K, domain, perm)
    chain = LemmaChain(alg, run)

    def lemma(goal: Bool, label: str) -> None:
        if goal.const is not None:
            return
        raw = alg.raw_bool(goal)
        r = run.check(alg.script(f"(assert (not {raw}))"), timeout=QUICK_TIMEOUT)
        if r.verdict == "unsat":
            chain.record(label, raw)

    for i, ((t1, ops1), (t2, ops2)) in enumerate(zip(first, second)):
        if t1.raw == t2.raw and t1.const == t2.const:
            continue
        if len(ops1) == len(ops2):  # operand j of the permuted run is operand perm[j] of the original (c and the rest stay)
            for j, u in enumerate(ops2):
                v = ops1[perm[j]] if j < len(perm) else ops1[j]
                if u.raw != v.raw or u.const != v.const:
                    lemma(alg.eq(u, v), f"operand {j} of sum/maximum {i} of the permuted run is operand {perm[j] if j < len(perm) else j} of the original's")
        lemma(alg.eq(t1, t2), f"sum/maximum {i} of the permuted run equals the original's")
    final = "(assert (not (= d d_permuted)))"
    r = run.check(alg.script(final))
    if r.verdict != "unsat":
        return None
    return chain.certificate(final)
