"""Hypotheses as compositions of the catalogue's own ops, asked to a solver and replayed through the simulator.

The SMT paper (001, Valpey et al.) poses most of its Table 4 rows as
*test generation*: "find inputs on which hypothesis H1 and hypothesis H2
give different outputs" (products exact vs rounded to FP16, truncation vs
IEEE round-to-zero, ...).  A :class:`Hyp` is one such hypothesis: a
function over the bit-vector algebra that maps the inputs of one dot
product to output bits, built only from ops defined once elsewhere
(:func:`~smtmma.simulate.run_model` of a :class:`~smtmma.models.Model`,
:func:`~smtmma.encodings.addmul.mul` / ``add`` with an IEEE rounding mode,
:func:`~smtmma.encodings.rounding.flush_subnormal`).  The same function runs
on the symbolic interpretation (the query) and on the concrete one (NumPy:
the replay of every witness), so the two cannot drift apart.

:func:`ask` builds one query: shared inputs, each hypothesis's output
declared as a constant, a constraint over inputs and outputs; a sat answer
is replayed (every output and the constraint re-evaluated on NumPy) before
it is returned, and the certificate block is the same script with the
witness pinned (sat) or the script itself (unsat).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from ..encodings.addmul import add, mul
from ..encodings.algebra import Algebra, Bool, Int
from ..encodings.concrete import NumpyAlgebra
from ..encodings.fields import unpack
from ..formats import carried_in, get_format
from ..models import Model
from ..queries.backends import solve
from ..queries.distinguish import ReplayError, Witness
from ..queries.formula import Domain, DotFormula
from ..simulate import run_model, simulate_dot
from ..proof_kernel.blocks import Block, pin_block

__all__ = ["Hyp", "Found", "ask", "evaluate", "tc", "mul_rm", "add_rm", "Inputs"]

Comp = Callable[[Algebra, Sequence[Int], Sequence[Int], Int], Int]


@dataclass(frozen=True)
class Inputs:
    """The pattern terms of one dot product (any interpretation)."""

    a: list[Int]
    b: list[Int]
    c: Int


#: constraint(alg, inputs, outputs by hypothesis name) -> the Bools that must all hold
Constraint = Callable[[Algebra, Inputs, dict[str, Int]], Sequence[Bool]]


@dataclass(frozen=True)
class Hyp:
    """One hypothesis: a name, its output format, and the composition computing its D bits.

    ``model``: set when the hypothesis is one catalogue-style model run as it
    is (its replay is also compared with :func:`~smtmma.simulate.simulate_dot`).
    """

    name: str
    fmt: str
    fn: Comp
    model: Optional[Model] = None


def tc(name: str, model: Model) -> Hyp:
    """The hypothesis "the unit is ``model``" (one model run on the inputs)."""
    return Hyp(name, _out_name(model), lambda alg, a, b, c: run_model(alg, model, list(a), list(b), c), model)


def _out_name(model: Model) -> str:
    return carried_in(model.d_fmt).name


def mul_rm(alg: Algebra, x: Int, y: Int, xf: str, yf: str, out: str, mode: str) -> Int:
    """Bits of ``x * y`` rounded to ``out`` with IEEE ``mode`` (Alg. 1's multiply, any mode; no FTZ)."""
    fo = get_format(out)
    return mul(alg, unpack(alg, get_format(xf), x), unpack(alg, get_format(yf), y), out=fo, ftz=False,
               nan_bits=fo.nan_bits(), mode=mode)


def add_rm(alg: Algebra, x: Int, y: Int, fmt: str, mode: str, yf: Optional[str] = None) -> Int:
    """Bits of ``x + y`` rounded to ``fmt`` with IEEE ``mode`` (the SMT paper's ``a (+)_rm b``, Table 2)."""
    f = get_format(fmt)
    return add(alg, unpack(alg, f, x), unpack(alg, get_format(yf or fmt), y), out=f, ftz=False,
               nan_bits=f.nan_bits(), mode=mode)


@dataclass
class Found:
    """One query's answer: verdict ("sat", "unsat", "unknown"), witness and outputs when sat, the certificate block."""

    verdict: str
    solver: str
    seconds: float
    script: str
    block: Optional[Block] = None
    witness: Optional[Witness] = None
    outputs: dict[str, int] = field(default_factory=dict)
    reason: str = ""


def _formula(base: Model, K: int, hyps: Sequence[Hyp], constraint: Constraint, domain: Domain
             ) -> tuple[DotFormula, list[str]]:
    f = DotFormula.for_models([base], K)
    alg = f.alg
    x = Inputs(f.a, f.b, f.c)
    outs: dict[str, Int] = {}
    names = []
    for i, h in enumerate(hyps):
        d = h.fn(alg, x.a, x.b, x.c)
        outs[h.name] = d
        name = f"h{i}"
        bits = get_format(h.fmt).bits
        alg.decls.append(f"(declare-const {name} (_ BitVec {bits}))")
        alg.asserts.append(f"(assert (= {name} {alg.bits_of(d, bits)}))")
        names.append(name)
    f.restrict(domain)
    for cond in constraint(alg, x, outs):
        alg.assert_(cond)
    return f, names


def evaluate(base: Model, hyps: Sequence[Hyp], w: Witness, constraint: Optional[Constraint] = None
             ) -> tuple[dict[str, int], bool]:
    """Each hypothesis's output bits on ``w`` by the concrete (NumPy) interpretation, and whether the constraint holds.

    A hypothesis that is one model is also run through
    :func:`~smtmma.simulate.simulate_dot`; a mismatch raises :class:`ReplayError`.
    """
    alg = NumpyAlgebra()
    fa, fb, fc = get_format(base.a_fmt), get_format(base.b_fmt), get_format(base.c_fmt)
    a = [alg.input(np.array([v], dtype=np.int64), 0, (1 << fa.bits) - 1) for v in w.a]
    b = [alg.input(np.array([v], dtype=np.int64), 0, (1 << fb.bits) - 1) for v in w.b]
    c = alg.input(np.array([w.c], dtype=np.int64), 0, (1 << fc.bits) - 1)
    outs_t = {h.name: h.fn(alg, a, b, c) for h in hyps}
    outs = {k: int(alg.value(v, 1)[0]) for k, v in outs_t.items()}
    for h in hyps:
        if h.model is not None:
            sim = int(simulate_dot(h.model, None, np.array([w.a], dtype=np.uint64), np.array([w.b], dtype=np.uint64),
                                   np.array([w.c], dtype=np.uint64), backend="numpy")[0])
            if sim != outs[h.name]:
                raise ReplayError(f"{h.name}: simulate_dot gives {sim:#x}, the composition {outs[h.name]:#x} on {w}")
    ok = True
    if constraint is not None:
        ok = all(bool(alg.value(cnd, 1)[0]) if not isinstance(cnd, bool) else cnd
                 for cnd in constraint(alg, Inputs(a, b, c), outs_t))
    return outs, ok


def ask(label: str, base: Model, K: int, hyps: Sequence[Hyp], constraint: Constraint, *,
        domain: Optional[Domain] = None, solver: Optional[str] = None, timeout: float = 60.0, seed: int = 0,
        proof: bool = False) -> Found:
    """Is there an input (K lanes, the formats of ``base``, within ``domain``) satisfying ``constraint``?

    ``proof``: the caller expects none (unsat), a hint to the solver (:func:`~smtmma.queries.backends.solve`).

    sat: the witness is replayed (:func:`evaluate`: the solver's outputs and
    the constraint must come out the same on NumPy) and the block pins it
    (expect sat); unsat: the block is the script (expect unsat).
    """
    domain = domain or Domain()
    t0 = time.perf_counter()
    f, names = _formula(base, K, hyps, constraint, domain)
    script = f.alg.script()
    r = solve(script, f.input_names + names, solver=solver, timeout=timeout, seed=seed, proof=proof)
    found = Found(r.verdict, r.solver, 0.0, script, reason=r.reason)
    if r.verdict == "unsat":
        found.block = Block(label, script, "unsat")
    elif r.verdict == "sat":
        w = Witness(tuple(r.values[f"a{k}"] for k in range(K)), tuple(r.values[f"b{k}"] for k in range(K)), r.values["c"])
        outs, ok = evaluate(base, hyps, w, constraint)
        claimed = {h.name: r.values[n] for h, n in zip(hyps, names)}
        if outs != claimed or not ok:
            raise ReplayError(f"{label}: the solver's outputs {claimed} (constraint true) replay as {outs} "
                              f"(constraint {'true' if ok else 'false'}) on {w}")
        found.witness, found.outputs = w, outs
        pins = {f"a{k}": (v, get_format(base.a_fmt).bits) for k, v in enumerate(w.a)}
        pins.update({f"b{k}": (v, get_format(base.b_fmt).bits) for k, v in enumerate(w.b)})
        pins["c"] = (w.c, get_format(base.c_fmt).bits)
        found.block = pin_block(label, script, pins, "sat")
    found.seconds = time.perf_counter() - t0
    return found
