"""Monotonicity: with non-negative inputs, raising one input never lowers D."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Optional

from ...encodings.algebra import Bool, Int
from ...encodings.fields import unpack
from ...errors import InputError
from ...formats import Format, get_format
from ...models import Model
from ...simulate import run_model
from .._twins import InputSet, QueryAlgebra, Runner, declare_output, output_container, value_key, witness_pins
from ..distinguish import ReplayError, Witness
from ..formula import Domain
from ...proof_kernel.blocks import Block, pin_block
from . import _monotone_search as _search
from ._monotone_cdna3 import prove_cdna3_monotone, supports_cdna3_monotone
from ._monotone_chain import prove_chain_monotone, supports_chain_monotone
from ._monotone_efdpa import prove_efdpa_monotone, supports_efdpa_monotone
from ._monotone_fma_proof import prove_fma_monotone, supports_fma_monotone
from ._monotone_gst import prove_gst_monotone, supports_gst_monotone
from ._monotone_parts import prove_monotone_parts, supports_monotone_parts
from .common import (
    _QUICK,
    QueryResult,
    _check_nonempty,
    _expect_same,
    _hex_witness,
    _py_value,
    _replay_one,
    _result,
    _setup,
    _show,
    _unknown,
)


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


def _smallest_positive(fmt: Format, exp: Optional[tuple[int, int]], subnormals: bool) -> Optional[int]:
    """The smallest positive pattern of ``fmt`` a domain allows (exponent range, subnormals), None if none."""
    if not fmt.subnormals:  # ue8m0: every pattern is 2**(E - bias), exponent E - bias
        lo = fmt.emin if exp is None else max(exp[0], -fmt.bias)
        return None if exp is not None and lo > exp[1] else lo + fmt.bias
    lo = fmt.emin if exp is None else exp[0]
    if exp is not None and lo > min(exp[1], fmt.emax):
        return None
    if subnormals and lo <= fmt.emin:
        return 1
    return (max(lo, fmt.emin) + fmt.bias) << fmt.man_bits


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
    is pinned in the query and confirmed by the solver.  Where a
    compositional proof covers the model (one T-FDPA, one CDNA3 TR-/GTR-FDPA,
    FTZ-AddMul's tree, one GST-FDPA with a scale per group, a chain of FMAs, one E-FDPA)
    it runs next; if it does not prove the property, each
    position gets a short solver call (a witness), then the full timeout
    (a proof).  ``blocks``: the pinned witness query (sat), the proof's
    lemmas, or every position's query (unsat).
    ``witness`` holds the smaller inputs, ``extra["larger"]`` the larger
    ones (hex), ``outputs`` both outputs.
    """
    prop = "monotonicity"
    name, K, domain = _setup(model, name, K, domain, prop)
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
        y = _moved(alg, x, label, domain)
        return _monotone_script(alg, model, x, y, out), x

    # 1. simulation: structured candidates (002 §3.1.4) checked by the NumPy simulator, then pinned in the query
    if search and full:
        hit = _search.search(model, K, seed=seed)
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
    quick = min(_QUICK, timeout)
    first_lanes = [lb for lb in labels if lb in ("c", "a0", "b0", "sa0", "sb0")]
    passes = ([(quick, first_lanes)] if quick < timeout else []) + [(timeout, labels)]
    prove = None  # the compositional proof (one T-/TR-/GTR-/GST-FDPA, or FTZ-AddMul's tree), every position at once
    if full and supports_cdna3_monotone(model, K):
        prove = prove_cdna3_monotone
    elif full and supports_monotone_parts(model, K):
        prove = prove_monotone_parts
    elif full and supports_chain_monotone(model, K):
        prove = prove_chain_monotone
    elif full and supports_gst_monotone(model, K):
        prove = prove_gst_monotone
    elif full and supports_fma_monotone(model, K):
        prove = prove_fma_monotone
    elif full and supports_efdpa_monotone(model, K):
        prove = prove_efdpa_monotone
    parts_reason = ""
    if prove is not None:  # complete where it applies: a proof first, the per-position search only if it fails
        proof = prove(model, K, run)
        if proof.verdict == "holds":
            _check_nonempty(model, K, domain, run, prop)
            return _result(prop, "holds", name, model, K, domain, run, smt2=proof.blocks[0].text,
                           blocks=proof.blocks, extra={"lemmas": len(proof.blocks)},
                           reason=f"no single move of one input lowers the output: {len(proof.blocks)} lemmas "
                           f"({proof.summary}), each proved on its own ({domain.describe()}, K={K})")
        parts_reason = f"compositional proof: {proof.reason}; "
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
        return _unknown(prop, name, model, K, domain, run, "monotonicity", parts_reason + "; ".join(reasons.values()), smt2=first,
                        extra={"proved": sorted(proved)})
    _check_nonempty(model, K, domain, run, prop)
    return _result(prop, "holds", name, model, K, domain, run, smt2=first, blocks=blocks, extra={"queries": len(proved)},
                   reason=f"raising any one input to the next value never lowers the output, so no larger inputs do "
                   f"({domain.describe()}, K={K})")


def _format_of(model: Model, who: str) -> Format:
    return get_format({"c": model.c_fmt, "a": model.a_fmt, "b": model.b_fmt}.get(who) or model.scale_fmt or "")


def _fails(prop: str, name: str, model: Model, K: int, domain: Domain, run: Runner, out: Format, label: str, w: Witness,
           values: dict[str, int], script: str, blocks: list[Block]) -> QueryResult:
    """The "fails" result of a witness pair: replayed through the simulator, re-checked in exact arithmetic."""
    w2 = _with_input(w, label, values[f"{label}_2"])
    d1, d2 = _replay_one(model, w), _replay_one(model, w2)
    _expect_same("monotonicity d", values["d"], d1, w)
    _expect_same("monotonicity d_larger", values["d_larger"], d2, w2)
    _check_larger(model, w, w2)
    v1, v2 = _py_value(out, d1), _py_value(out, d2)
    if v1 is None or v2 is None or not v2 < v1:
        raise ReplayError(f"monotonicity witness does not decrease: {d1:#x} -> {d2:#x} on {w} -> {w2}")
    return _result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": d1, "d_larger": d2}, smt2=script,
                   blocks=blocks, extra={"larger": _hex_witness(model, w2), "raised": label},
                   reason=f"raising {label} gives a smaller output: {_show(out, d1)} -> {_show(out, d2)}")


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


def _moved(alg: QueryAlgebra, x: InputSet, label: str, domain: Domain) -> InputSet:
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
        first = _smallest_positive(fmt, None, True)
    else:
        exp = domain.cexp if who == "c" else domain.exp
        x._restrict_value(fmt, v, domain, exp, who)
        first = _smallest_positive(fmt, exp, domain.subnormals)
        if who != "c" and domain.lanes is not None and k >= domain.lanes:
            alg.assert_(unpack(alg, fmt, v).is_zero)  # a lane the domain keeps at zero
    if lanes is None:
        y.c = v
    else:
        lanes[k] = v
    alg.assert_(alg.any(next_moves(alg, fmt, old, v, first)))
    return y


def next_moves(alg: QueryAlgebra, fmt: Format, old: Int, new: Int, first: Optional[int]) -> list[Bool]:
    """The ways ``new`` is the next value after the non-negative pattern ``old``: [step, zero to zero, zero to ``first``].

    A step is the next pattern of a non-zero value (value order is pattern
    order for non-negative values); a zero moves to a zero of either sign,
    or to ``first``, the smallest positive pattern the domain allows.
    """
    uo, uv = unpack(alg, fmt, old), unpack(alg, fmt, new)
    step = alg.and_(alg.not_(uo.is_zero), alg.eq(new, alg.add(old, 1)))
    if fmt.sign_mask:  # the largest positive pattern has no next one (without inf or NaN above it, +1 is -0)
        step = alg.and_(step, alg.lt(old, fmt.sign_mask - 1))
    moves = [step]
    if fmt.subnormals:  # formats with a zero
        moves.append(alg.and_(uo.is_zero, uv.is_zero))
        if first is not None:
            moves.append(alg.and_(uo.is_zero, alg.eq(new, first)))
    return moves


def _monotone_script(alg: QueryAlgebra, model: Model, x: InputSet, y: InputSet, out: Format) -> str:
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
        vu, vv = _py_value(fmt, u), _py_value(fmt, v)
        if vu is None or vv is None or vu < 0 or vv < vu:
            raise ReplayError(f"monotonicity witness breaks its premise: {fmt.name} {u:#x} -> {v:#x}")
