"""Carry bits: the fewest integer bits of the aligned sum with which a T-FDPA equals the unbounded one."""

from __future__ import annotations

from typing import Any, Optional

from ...errors import InputError
from ...proof_kernel.blocks import Block, chain_block, pin_block
from ...models import PARAM_RANGES, Model
from ...simulate import run_model
from ..query_algebra import (
    InputSet,
    QueryAlgebra,
    Runner,
    declare_output,
    fused_parts,
    output_container,
)
from ...proof_kernel.chain import LemmaChain
from ..distinguish import ReplayError, Witness, replay
from ..formula import Domain
from .common import QueryResult, check_nonempty, expect_same, make_result, setup_query, unknown_result


def carry_bits(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
) -> QueryResult:
    """The fewest carry bits N with which the model equals the unbounded model on the domain.

    For each candidate n the solver is first asked whether the register of
    2 + n integer bits can lose a carry (the fixed-point sums differ); no
    means n bits suffice: that proved lemma is asserted and the outputs are
    then proved equal.  A lost carry gives an input that is replayed
    through both models; if their outputs differ (they always did so far)
    n is too few, else the outputs are compared directly.  The search
    starts at the bound the sums' static ranges give and moves down (or up).
    """
    prop = "carry-bits"
    name, K, domain = setup_query(model, name, K, domain, prop)
    if model.kind not in ("t-fdpa", "st-fdpa") or model.F is None or model.L is None:
        raise InputError(f"carry-bits: {model.describe()} has no carry-bit parameter (T-FDPA and ST-FDPA models have one)")
    if K > model.L:
        raise InputError(f"carry-bits is a property of one FDPA: K must be at most L={model.L}, got {K}")
    if model.c_after:
        raise InputError(f"carry-bits: {model.describe()} adds C outside the FDPA; its fused sum has no C term")
    F = model.F
    run = Runner(solver, timeout, seed)
    unbounded = model.replace(carry_bits=None)
    out = output_container(model)

    probe_alg = QueryAlgebra()
    px = InputSet.of(probe_alg, model, K)
    total = fused_parts(probe_alg, unbounded, px.a, px.b, px.c, px.scale_a, px.scale_b).total
    start = 0
    while not (-(1 << (2 + start + F)) <= total.lo and total.hi < (1 << (2 + start + F))):
        start += 1
    limit = PARAM_RANGES["carry_bits"][1]
    start = min(start, limit)

    def probe(n: int) -> tuple[str, Any, str]:
        """("enough", None, script) | ("short", (witness, d_n, d_inf), script) | ("unknown", reason, script)."""
        alg = QueryAlgebra()
        x = InputSet.of(alg, model, K)
        x.restrict(domain)
        limited = model.replace(carry_bits=n)
        parts = fused_parts(alg, unbounded, x.a, x.b, x.c, x.scale_a, x.scale_b)
        same_sum = alg.eq(parts.wrapped(alg, F, n), parts.total)
        r = run.check(alg.script(f"(assert (not {alg.raw_bool(same_sum)}))"), x.declared)
        if r.verdict == "sat":  # a lost carry: does it change the output?
            w = x.witness(r.values)
            dn, dinf = replay([limited, unbounded], w)
            if dn != dinf:
                return "short", (w, dn, dinf), ""
        elif r.verdict == "unknown":
            return "unknown", f"can {n} carry bits lose a carry: {r.reason}", ""
        chain = LemmaChain(alg, run)
        if r.verdict == "unsat":
            chain.record(f"{n} carry bits never lose a carry", alg.raw_bool(same_sum))
        d_n = run_model(alg, limited, x.a, x.b, x.c, x.scale_a, x.scale_b)
        d_inf = run_model(alg, unbounded, x.a, x.b, x.c, x.scale_a, x.scale_b)
        declare_output(alg, "d_n", d_n, out.bits)
        declare_output(alg, "d_inf", d_inf, out.bits)
        final = "(assert (not (= d_n d_inf)))"
        script = alg.script(final)
        r2 = run.check(script, x.declared + ["d_n", "d_inf"])
        smt2 = chain.certificate(final) if chain.proven else script
        if r2.verdict == "unsat":
            return "enough", None, smt2
        if r2.verdict == "unknown":
            return "unknown", f"do {n} carry bits change the output: {r2.reason}", smt2
        w = x.witness(r2.values)
        dn, dinf = replay([limited, unbounded], w)
        expect_same(f"carry-bits d (carry_bits={n})", r2.values["d_n"], dn, w)
        expect_same("carry-bits d (unbounded)", r2.values["d_inf"], dinf, w)
        if dn == dinf:
            raise ReplayError(f"carry-bits witness {w} gives the same output with {n} carry bits and unbounded")
        return "short", (w, dn, dinf), smt2

    enough: dict[int, str] = {}
    short: dict[int, Any] = {}
    n = start
    while True:
        verdict, info, smt2 = probe(n)
        if verdict == "unknown":
            return unknown_result(prop, name, model, K, domain, run, f"carry bits ({_known(enough, short)})", info, smt2=smt2,
                                  extra=_carry_extra(enough, short, K))
        if verdict == "enough":
            enough[n] = smt2
            if n == 0 or (n - 1) in short:
                break
            n -= 1
        else:
            short[n] = info
            if (n + 1) in enough:
                break
            if n + 1 > limit:
                return unknown_result(prop, name, model, K, domain, run, "carry bits", f"even {limit} carry bits lose a carry",
                                      extra=_carry_extra(enough, short, K))
            n += 1
    N = min(enough)
    check_nonempty(model, K, domain, run, prop)
    extra = _carry_extra(enough, short, K)
    extra["carry_bits"] = N
    blocks = [_proof_block(enough[N], f"{N} carry bits give the unbounded model's output on every input ({K + 1} summands)")]
    if N - 1 in short:
        w, dn, dinf = short[N - 1]
        blocks.append(_witness_block(model, K, domain, N - 1, w))
        return make_result(prop, "holds", name, model, K, domain, run, witness=w, outputs={f"d_carry{N - 1}": dn, "d_unbounded": dinf},
                           smt2=enough[N], extra=extra, blocks=blocks,
                       reason=f"{N} carry bits suffice for {K + 1} summands and {N - 1} do not ({domain.describe()})")
    return make_result(prop, "holds", name, model, K, domain, run, smt2=enough[N], extra=extra, blocks=blocks,
                       reason=f"no carry bits are needed for {K + 1} summands ({domain.describe()})")


def _proof_block(script: str, label: str) -> Block:
    """The proof that n bits suffice: a lemma chain (ends with its own check-sat) or one query, expecting unsat."""
    text = script.rstrip("\n")
    return chain_block(label, text) if text.endswith("(check-sat)") else Block(label, text, "unsat")


def _witness_block(model: Model, K: int, domain: Domain, n: int, w: Witness) -> Block:
    """The input on which n carry bits change the output: both outputs in one formula, the inputs pinned, expecting sat."""
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    x.restrict(domain)
    out = output_container(model)
    declare_output(alg, "d_n", run_model(alg, model.replace(carry_bits=n), x.a, x.b, x.c, x.scale_a, x.scale_b), out.bits)
    declare_output(alg, "d_inf", run_model(alg, model.replace(carry_bits=None), x.a, x.b, x.c, x.scale_a, x.scale_b), out.bits)
    return pin_block(f"{n} carry bits change the output of this input", alg.script("(assert (not (= d_n d_inf)))"), x.pins(w))


def _known(enough: dict[int, str], short: dict[int, Any]) -> str:
    parts = []
    if enough:
        parts.append(f"{min(enough)} suffice")
    if short:
        parts.append(f"{max(short)} do not")
    return ", ".join(parts) or "nothing decided"


def _carry_extra(enough: dict[int, str], short: dict[int, Any], K: int) -> dict[str, object]:
    extra: dict[str, object] = {"summands": K + 1}
    if enough:
        extra["sufficient"] = min(enough)
    if short:
        extra["insufficient"] = max(short)
    return extra
