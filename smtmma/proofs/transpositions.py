"""Order independence of a T-FDPA model, one adjacent transposition of the lanes at a time (001 §4.3, Property 3).

The model runs twice, on the lanes and on the lanes with k and k+1
swapped; nothing is canonicalized, so the two runs are separate circuits.
Each transposition rests on:

* a chain on both runs (:class:`~smtmma.proof_kernel.chain.LemmaChain`): "equal
  e_max" (checked) and instances of the lemmas below (asserted), then
  D = D_swapped (checked);
* lemmas (:class:`~smtmma.proof_kernel.lemma.Lemma`, each a ``define-fun``
  of its arguments proved on fresh constants, then applied to the runs'
  terms): a term aligned at equal e_max gives equal summands (Alg. 7 line
  9), the exact sum of the summands does not change when two of them trade
  places, and the final rounding of equal sums at equal e_max is equal
  (Alg. 7 step 3).

Without the lemmas the solver has to re-derive congruence across the two
circuits: 2.5 s per transposition instead of a few tenths.
"""

from __future__ import annotations

import time
from typing import Sequence

from ..encodings.algebra import Bool, Int
from ..encodings.fused_sum import aligned
from ..encodings.rounding import convert_fixed
from ..encodings.terms import Term
from ..formats import get_format
from ..models import Model
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner, declare_output, fused_parts, output_container
from ..proof_kernel.chain import LemmaChain
from ..simulate import run_model
from ..proof_kernel.blocks import chain_block
from .claim import Context
from ..proof_kernel.lemma import Arg, Lemma, lemma
from .hypotheses import Found
from ..proof_kernel.parts import implies

__all__ = ["transposition_proofs"]


def transposition_proofs(m: Model, K: int, ctx: Context) -> list[Found]:
    """Every check that swapping lanes k and k+1 (k < K-1) leaves D unchanged: the fresh-variable lemmas (each
    distinct one once), then one chain per transposition; the first that is not unsat ends the list."""
    if m.kind != "t-fdpa" or m.carry_bits is not None or m.emax_floor is not None or m.ieee_zero or m.zero_emax:
        raise ValueError(f"{m.describe()}: the transposition proof covers plain T-FDPA models")
    run = Runner(ctx.solver, ctx.timeout, ctx.seed)
    swaps = [_transposition(m, K, k) for k in range(K - 1)]
    lemmas = list({lem.name: lem for _, _, uses in swaps for lem, _ in uses}.values())  # each distinct lemma once
    found: list[Found] = []
    for lem in lemmas:  # proved here to report the first that fails; each chain's certificate proves them again
        t0 = time.perf_counter()
        r = run.check(lem.script(), proof=True)
        if r.verdict != "unsat":
            return found + [Found("unknown", run.name, time.perf_counter() - t0, "",
                                  reason=f"lemma '{lem.label}': {r.verdict}" + (f" ({r.reason})" if r.reason else ""))]
        found.append(Found("unsat", run.name, time.perf_counter() - t0, lem.script()))  # no block: each chain proves it
    for k, chain in enumerate(swaps):
        f = _run_chain(f"swapping lanes {k} and {k + 1} leaves D unchanged", *chain, run)
        found.append(f)
        if f.verdict != "unsat":
            break
    return found


Use = tuple[Lemma, Sequence[Arg]]  # a lemma and the runs' terms it is applied to


def _transposition(m: Model, K: int, k: int) -> tuple[QueryAlgebra, Bool, list[Use]]:
    """(algebra, e_max fact, lemma uses) of one transposition."""
    perm = list(range(K))
    perm[k], perm[k + 1] = perm[k + 1], perm[k]
    src = perm + [K]  # slot j of the swapped run holds the lanes' summand src[j]; c stays last
    alg = QueryAlgebra(canonical=False)
    x = InputSet.of(alg, m, K)
    pa, pb = [x.a[i] for i in perm], [x.b[i] for i in perm]
    bits = output_container(m).bits
    declare_output(alg, "d", run_model(alg, m, x.a, x.b, x.c), bits)
    declare_output(alg, "d_swapped", run_model(alg, m, pa, pb, x.c), bits)
    f1, f2 = fused_parts(alg, m, x.a, x.b, x.c), fused_parts(alg, m, pa, pb, x.c)  # the models' own terms
    F = m.F
    assert F is not None
    conv = m.conversion
    rfmt = get_format(conv.fmt)
    uses: list[Use] = []

    def add(label: str, statement, args: Sequence[Arg]) -> None:  # type: ignore[no-untyped-def]
        uses.append((lemma(label, statement, args), list(args)))

    for j in range(K + 1):
        t = f1.terms[src[j]]

        def realign(A: QueryAlgebra, v: Sequence[Arg], frac: int = t.frac) -> Bool:
            term = Term(v[0], v[1], v[2], frac)  # type: ignore[arg-type]
            return implies(A, [A.eq(v[3], v[4])], A.eq(aligned(A, term, v[3], F), aligned(A, term, v[4], F)))  # type: ignore[arg-type]

        what = "c" if src[j] == K else "a product"
        add(f"{what} aligned at equal e_max gives equal summands (Alg. 7 line 9; fresh variables)", realign,
            [t.neg, t.sig, t.exp, f1.e_max, f2.e_max])

    def same_sum(label: str, first: Sequence[Int], second: Sequence[Int], pick: Sequence[int]) -> None:
        """Lemma: when summand j of ``second`` is summand pick[j] of ``first``, their running sums end equal."""
        n = len(first)

        def statement(A: QueryAlgebra, v: Sequence[Arg]) -> Bool:
            same = [A.eq(v[n + j], v[pick[j]]) for j in range(n)]  # type: ignore[arg-type]
            return implies(A, same, A.eq(A.sum_all(v[:n]), A.sum_all(v[n:])))  # type: ignore[arg-type]

        add(label, statement, [*first, *second])

    n = k + 2  # the running sums of the two runs differ up to summand k+1 (Alg. 7 line 10, in the lanes' order)
    same_sum(f"summands {k} and {k + 1} trade places: the running sum through them is the same (fresh variables)",
             f1.aligned[:n], f2.aligned[:n], src[:n])
    tail1, tail2 = [f1.prefix[n - 1], *f1.aligned[n:]], [f2.prefix[n - 1], *f2.aligned[n:]]
    same_sum(f"equal running sums through summand {k + 1} plus equal summands are equal sums (fresh variables)",
             tail1, tail2, range(len(tail1)))

    def rounding(A: QueryAlgebra, v: Sequence[Arg]) -> Bool:
        t1, e1, t2, e2 = v
        same = [A.eq(t1, t2), A.eq(e1, e2)]  # type: ignore[arg-type]
        return implies(A, same, A.eq(convert_fixed(A, rfmt, conv.mode, t1, A.sub(e1, F)),  # type: ignore[arg-type]
                                      convert_fixed(A, rfmt, conv.mode, t2, A.sub(e2, F))))  # type: ignore[arg-type]

    add("equal sums at equal e_max round to the same bits (Alg. 7 step 3; fresh variables)", rounding,
        [f1.total, f1.e_max, f2.total, f2.e_max])
    return alg, alg.eq(f1.e_max, f2.e_max), uses


def _run_chain(label: str, alg: QueryAlgebra, emax: Bool, instances: list[Use], run: Runner) -> Found:
    """The chain of one transposition: prove equal e_max, apply the lemmas to the runs' terms, prove D = D_swapped."""
    t0 = time.perf_counter()
    chain = LemmaChain(alg, run)
    if not chain.prove("equal e_max", emax):
        return Found("unknown", run.name, time.perf_counter() - t0, alg.script(), reason=chain.stopped)
    for lem, args in instances:  # each a define-fun proved on fresh constants (the certificate proves it again)
        chain.apply(lem, args)
    final = "(assert (not (= d d_swapped)))"
    r = run.check(alg.script(final), proof=True)
    verdict, reason = r.verdict, r.reason
    if verdict == "sat":  # cannot be: the lemmas are proved; a sat here is a bug to report, not a witness
        verdict, reason = "unknown", "the final check answered sat after the lemmas were proved"
    text = chain.certificate(final)
    f = Found(verdict, run.name, time.perf_counter() - t0, text, reason=reason)
    if verdict == "unsat":
        f.block = chain_block(label, text)
    return f
