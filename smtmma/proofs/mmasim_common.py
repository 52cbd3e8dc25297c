"""Helpers shared by the MMA-Sim and FTTN claims: exact values, ulps, fixed-input blocks and pair queries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..encodings.algebra import Int
from ..errors import SmtmmaError
from ..formats import Format, carried_in, floor_log2, get_format, to_fraction
from ..models import Model
from ..queries.backends import SolverResult, solve
from ..queries.distinguish import ReplayError, Witness
from ..queries.formula import Domain, DotFormula, output_bits
from ..simulate import output_format, run_model, simulate_dot
from ..proof_kernel.blocks import Block, pin_block
from .evidence import witness_pins

__all__ = ["PairResult", "container", "exact_value", "fixed_output_block", "pair_query", "sim", "ulp_of", "ulps"]


def container(model: Model) -> Format:
    """The format D's bits are read in (FP32 for E8M13 results)."""
    f = output_format(model)
    return carried_in(f)


def exact_value(model: Model, w: Witness) -> Fraction:
    """c + sum_k a_k b_k exactly (finite inputs only)."""
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    total = to_fraction(fc, w.c)
    for x, y in zip(w.a, w.b):
        total += to_fraction(fa, x) * to_fraction(fb, y)  # type: ignore[operator]
    assert isinstance(total, Fraction)
    return total


def ulp_of(fmt: Format, v: Fraction) -> Fraction:
    """One ulp of ``fmt`` at ``v`` (the subnormal ulp below the normal range)."""
    if v == 0:
        e = fmt.emin
    else:
        e = max(floor_log2(v), fmt.emin)
    return Fraction(2) ** (e - fmt.man_bits)


def ulps(fmt: Format, got: Fraction, exact: Fraction) -> Fraction:
    """(got - exact) in ulps of ``fmt`` at the exact value."""
    return (got - exact) / ulp_of(fmt, exact)


def sim(model: Model, w: Witness) -> int:
    """D bits of the simulator (NumPy interpretation) on one witness."""
    a = np.array([w.a], dtype=np.uint64)
    b = np.array([w.b], dtype=np.uint64)
    c = np.array([w.c], dtype=np.uint64)
    return int(simulate_dot(model, None, a, b, c, backend="numpy")[0])


def fixed_output_block(label: str, model: Model, w: Witness, bits: int) -> Block:
    """A block: the model on symbolic inputs pinned to ``w``, asserting D != ``bits`` (expect unsat)."""
    f = DotFormula.for_models([model], len(w.a))
    name, _ = f.output(model, "d")
    width = output_bits(model)
    f.alg.asserts.append(f"(assert (not (= {name} (_ bv{bits} {width}))))")
    return pin_block(label, f.alg.script(), witness_pins(model, w), "unsat")


@dataclass
class PairResult:
    """A solver witness on which ``risky`` and ``safe`` (same A/B/C formats) satisfy extra conditions, replayed."""

    verdict: str  # sat | unsat | unknown
    solver: str
    seconds: float
    script: str
    witness: Witness | None = None
    outputs: dict[str, int] = field(default_factory=dict)
    reason: str = ""


def pair_query(models: Sequence[tuple[str, Model]], K: int, domain: Domain, extra: Sequence[str], *,
               solver: str | None, timeout: float, seed: int = 0,
               negated: tuple[str, Model] | None = None) -> PairResult:
    """Run named models on shared inputs (and optionally one on (-a, b, -c)); ask for inputs meeting ``extra``.

    ``extra``: SMT-LIB2 assertions over the output names.  A sat witness is
    replayed through the simulator (ReplayError when it disagrees).
    """
    f = DotFormula.for_models([m for _, m in models] + ([negated[1]] if negated else []), K)
    for name, m in models:
        f.output(m, name)
    if negated is not None:
        name, m = negated
        alg = f.alg
        fa, fc = get_format(m.a_fmt), get_format(m.c_fmt)
        a_neg: list[Int] = [_neg_bits(alg, fa, x) for x in f.a]
        c_neg = _neg_bits(alg, fc, f.c)
        d = run_model(alg, m, a_neg, f.b, c_neg)
        bits = output_bits(m)
        alg.decls.append(f"(declare-const {name} (_ BitVec {bits}))")
        alg.asserts.append(f"(assert (= {name} {alg.bits_of(d, bits)}))")
        f.outputs.append((name, bits))
    f.restrict(domain)
    f.alg.asserts.extend(extra)
    script = f.alg.script()
    names = [n for n, _ in f.outputs]
    res: SolverResult = solve(script, f.input_names + names, solver=solver, timeout=timeout, seed=seed)
    out = PairResult(res.verdict, res.solver, res.seconds, script, reason=res.reason)
    if res.verdict != "sat":
        return out
    v = res.values
    w = Witness(tuple(v[f"a{k}"] for k in range(K)), tuple(v[f"b{k}"] for k in range(K)), v["c"])
    got = {n: sim(m, w) for n, m in models}
    if negated is not None:
        name, m = negated
        fa, fc = get_format(m.a_fmt), get_format(m.c_fmt)
        wn = Witness(tuple(x ^ fa.sign_mask for x in w.a), w.b, w.c ^ fc.sign_mask)
        got[name] = sim(m, wn)
    for n in names:
        if got[n] != v[n]:
            raise ReplayError(f"solver says {n}={v[n]:#x}, the simulator {got[n]:#x} on {w}")
    out.witness, out.outputs = w, got
    return out


def _neg_bits(alg: object, fmt: Format, x: Int) -> Int:
    """The pattern with its sign bit flipped (as an Int term): x + 2^(n-1) below, x - 2^(n-1) above."""
    s = fmt.sign_mask
    return alg.ite(alg.lt(x, s), alg.add(x, s), alg.sub(x, s))  # type: ignore[attr-defined]


class ClaimError(SmtmmaError):
    """A claim's check could not be set up."""
