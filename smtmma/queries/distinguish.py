"""distinguish: inputs on which two or more models give different bits.

The models run on shared symbolic inputs; the solver is asked for inputs
whose outputs differ pairwise.  A sat witness is replayed through the
simulator (the concrete interpretation) before it is reported; a replay
that disagrees with the solver is an internal error, never a result.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ..errors import InputError, SmtmmaError
from ..formats import get_format
from ..models import Model
from ..simulate import simulate_dot
from .backends import SolverResult, solve
from .formula import Domain, DotFormula, output_bits

__all__ = ["Witness", "DistinguishResult", "distinguish", "replay", "ulp_distance"]


class ReplayError(SmtmmaError, AssertionError):
    """The simulator disagrees with the solver's model of a witness: a bug in an interpretation."""


@dataclass(frozen=True)
class Witness:
    """Inputs of one dot product as bit patterns (A/B/C formats; scales when block-scaled)."""

    a: tuple[int, ...]
    b: tuple[int, ...]
    c: int
    scale_a: Optional[tuple[int, ...]] = None
    scale_b: Optional[tuple[int, ...]] = None


@dataclass
class DistinguishResult:
    """verdict "sat" (witness + each model's output bits), "unsat" (equivalent on the domain) or "unknown"."""

    verdict: str
    names: list[str]
    models: list[Model]
    K: int
    domain: Domain
    solver: str
    seconds: float
    witness: Optional[Witness] = None
    outputs: dict[str, int] = field(default_factory=dict)
    reason: str = ""
    smt2: str = ""
    classes: list[list[str]] = field(default_factory=list)  # equivalent models, when not all can differ


def replay(models: Sequence[Model], w: Witness) -> list[int]:
    """Each model's D pattern for witness ``w``, computed by the simulator."""
    a = np.array([w.a], dtype=np.uint64)
    b = np.array([w.b], dtype=np.uint64)
    c = np.array([w.c], dtype=np.uint64)
    sa = np.array([w.scale_a], dtype=np.uint64) if w.scale_a is not None else None
    sb = np.array([w.scale_b], dtype=np.uint64) if w.scale_b is not None else None
    return [int(simulate_dot(m, None, a, b, c, scale_a=sa, scale_b=sb)[0]) for m in models]


def ulp_distance(fmt_name: str, x: int, y: int) -> Optional[int]:
    """Number of representable values between two finite patterns (0 for +0 vs -0); None when either is NaN."""
    fmt = get_format(fmt_name)
    if fmt.container:
        fmt = get_format(fmt.container)
    if fmt.is_nan_bits(x) or fmt.is_nan_bits(y):
        return None

    def key(v: int) -> int:
        mag = v & ~fmt.sign_mask
        return -mag if v & fmt.sign_mask else mag

    return abs(key(x) - key(y))


def _witness(formula: DotFormula, values: dict[str, int]) -> Witness:
    K = formula.K
    sa = sb = None
    if formula.scale_a is not None:
        n = len(formula.scale_a)
        sa = tuple(values[f"sa{j}"] for j in range(n))
        sb = tuple(values[f"sb{j}"] for j in range(n))
    return Witness(tuple(values[f"a{k}"] for k in range(K)), tuple(values[f"b{k}"] for k in range(K)), values["c"], sa, sb)


def _pairwise_distinct(
    models: Sequence[Model], names: Sequence[str], K: int, domain: Domain, solver: Optional[str], timeout: float, seed: int
) -> DistinguishResult:
    formula = DotFormula.for_models(list(models), K)
    bits = {output_bits(m) for m in models}
    if len(bits) != 1:
        raise InputError("models write outputs of different widths; they cannot be compared")
    outs = [formula.output(m)[0] for m in models]
    formula.restrict(domain)
    for x, y in itertools.combinations(outs, 2):
        formula.alg.asserts.append(f"(assert (not (= {x} {y})))")
    script = formula.alg.script()
    t0 = time.perf_counter()
    res: SolverResult = solve(script, formula.input_names + outs, solver=solver, timeout=timeout, seed=seed)
    result = DistinguishResult(res.verdict, list(names), list(models), K, domain, res.solver, time.perf_counter() - t0, reason=res.reason, smt2=script)
    if res.verdict != "sat":
        if res.verdict == "unsat":
            result.reason = f"equivalent on this domain ({domain.describe()}, K={K})" if len(models) == 2 else (
                f"no input gives pairwise different outputs ({domain.describe()}, K={K})")
        return result
    w = _witness(formula, res.values)
    got = replay(models, w)
    claimed = [res.values[o] for o in outs]
    if got != claimed:
        raise ReplayError(f"solver's outputs {[hex(x) for x in claimed]} disagree with the simulator's {[hex(x) for x in got]} on {w}")
    if len(set(got)) != len(got):
        raise ReplayError(f"replayed outputs are not pairwise different: {[hex(x) for x in got]}")
    result.witness = w
    result.outputs = dict(zip(names, got))
    return result


def distinguish(
    models: Sequence[Model],
    names: Optional[Sequence[str]] = None,
    *,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
) -> DistinguishResult:
    """Ask for inputs on which every pair of ``models`` gives different D bits.

    ``K`` defaults to the largest L among the models (one FDPA each); the
    witness is replayed through the simulator before it is returned.
    """
    models = list(models)
    if len(models) < 2:
        raise InputError("distinguish needs at least two models")
    names = list(names) if names else [m.describe() for m in models]
    domain = domain or Domain()
    if K is None:
        K = max((m.L or m.P or 4) for m in models)
    result = _pairwise_distinct(models, names, K, domain, solver, timeout, seed)
    if result.verdict != "unsat" or len(models) == 2:
        return result
    # No input splits them all: group the models that are equivalent on the domain, then split the groups.
    t0 = time.perf_counter()
    classes: list[list[int]] = []
    for i in range(len(models)):
        for cls in classes:
            pair = _pairwise_distinct([models[cls[0]], models[i]], [names[cls[0]], names[i]], K, domain, solver, timeout, seed)
            if pair.verdict == "unsat":
                cls.append(i)
                break
        else:
            classes.append([i])
    result.classes = [[names[i] for i in cls] for cls in classes]
    if len(classes) >= 2:
        reps = [cls[0] for cls in classes]
        split = _pairwise_distinct([models[i] for i in reps], [names[i] for i in reps], K, domain, solver, timeout, seed)
        if split.verdict == "sat" and split.witness is not None:
            result.verdict = "sat"
            result.witness = split.witness
            result.outputs = dict(zip(names, replay(models, split.witness)))
            result.smt2 = split.smt2
    groups = "; ".join(" = ".join(c) for c in result.classes)
    result.reason = f"not all pairwise different: equivalent groups on this domain: {groups} ({domain.describe()}, K={K})"
    result.seconds += time.perf_counter() - t0
    return result
