"""Evaluate a model's formula on concrete inputs with a solver (the guard between the two interpretations)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..encodings.symbolic import SmtAlgebra
from ..formats import get_format
from ..models import Model
from ..simulate import run_model
from .backends import solve
from .formula import output_bits

__all__ = ["evaluate_formula"]


def evaluate_formula(
    model: Model,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    scale_a: Optional[np.ndarray] = None,
    scale_b: Optional[np.ndarray] = None,
    *,
    solver: Optional[str] = None,
    timeout: float = 600.0,
) -> list[int]:
    """D patterns of the model's SMT formula for each row of (a, b, c), all rows in one solver call.

    Each row gets its own copy of the formula (declared inputs fixed by
    assertions), so the answer is the solver's reading of the formula,
    independent of the NumPy interpretation it is compared with.
    """
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    sf = get_format(model.scale_fmt) if model.scale_fmt else None
    bits = output_bits(model)
    alg = SmtAlgebra()
    outs: list[str] = []
    n, K = np.asarray(a).shape
    for i in range(n):
        alg.prefix = f"r{i}_"
        xa = [alg.var(f"a{k}_{i}", fa.bits) for k in range(K)]
        xb = [alg.var(f"b{k}_{i}", fb.bits) for k in range(K)]
        xc = alg.var(f"c_{i}", fc.bits)
        sa = sb = None
        if sf is not None and scale_a is not None and scale_b is not None:
            sa = [alg.var(f"sa{j}_{i}", sf.bits) for j in range(scale_a.shape[1])]
            sb = [alg.var(f"sb{j}_{i}", sf.bits) for j in range(scale_b.shape[1])]
            for j in range(scale_a.shape[1]):
                alg.asserts.append(f"(assert (= sa{j}_{i} (_ bv{int(scale_a[i, j])} {sf.bits})))")
                alg.asserts.append(f"(assert (= sb{j}_{i} (_ bv{int(scale_b[i, j])} {sf.bits})))")
        for k in range(K):
            alg.asserts.append(f"(assert (= a{k}_{i} (_ bv{int(a[i, k])} {fa.bits})))")
            alg.asserts.append(f"(assert (= b{k}_{i} (_ bv{int(b[i, k])} {fb.bits})))")
        alg.asserts.append(f"(assert (= c_{i} (_ bv{int(c[i])} {fc.bits})))")
        d = run_model(alg, model, xa, xb, xc, sa, sb)
        out = f"out_{i}"
        alg.decls.append(f"(declare-const {out} (_ BitVec {bits}))")
        alg.asserts.append(f"(assert (= {out} {alg.bits_of(d, bits)}))")
        outs.append(out)
    res = solve(alg.script(), outs, solver=solver, timeout=timeout)
    if res.verdict != "sat":
        raise RuntimeError(f"{res.solver} answered {res.verdict} on a fully determined formula: {res.reason}")
    return [res.values[o] for o in outs]
