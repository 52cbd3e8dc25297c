"""Custom properties: a Python predicate over the model's symbolic inputs and outputs."""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Callable, Optional, Union

import numpy as np

from ...encodings.algebra import Algebra, Bool, Int
from ...encodings.concrete import NumpyAlgebra
from ...errors import InputError
from ...models import Model
from ...simulate import run_model
from ..query_algebra import InputSet, QueryAlgebra, Runner, declare_output, output_container
from ..distinguish import ReplayError, Witness, replay
from ..formula import Domain
from .common import QueryResult, check_nonempty, expect_same, make_result, setup_query, unknown_result

Predicate = Callable[[Algebra, dict, dict], Any]


def load_predicate(source: Union[str, "os.PathLike[str]", Predicate]) -> Predicate:
    """The ``predicate`` function of a Python file (or ``source`` itself when callable)."""
    if callable(source):
        return source
    path = os.fspath(source)
    if not os.path.isfile(path):
        raise InputError(f"custom: predicate file {path!r} does not exist")
    spec = importlib.util.spec_from_file_location(f"smtmma_predicate_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise InputError(f"custom: cannot load {path!r} as a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # sys.exit() in the file must not end smtmma with the file's status
        raise InputError(f"custom: loading {path} failed: {type(e).__name__}: {e}") from None
    fn = getattr(module, "predicate", None)
    if not callable(fn):
        raise InputError(f"custom: {path} must define a function predicate(alg, inputs, outputs) returning a Bool term")
    return fn


def _call_predicate(fn: Predicate, alg: Algebra, inputs: dict[str, Int], outputs: dict[str, Int]) -> Bool:
    try:
        value = fn(alg, inputs, outputs)
    except (Exception, SystemExit) as e:
        raise InputError(f"custom: the predicate raised {type(e).__name__}: {e}") from None
    if isinstance(value, (bool, np.bool_)):
        return alg.bconst(bool(value))
    if not isinstance(value, Bool):
        raise InputError(f"custom: the predicate must return a Bool term (alg.eq, alg.lt, ...), got {type(value).__name__}")
    return value


def custom(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    predicate: Union[str, "os.PathLike[str]", Predicate, None] = None,
    models: Optional[dict[str, Model]] = None,
) -> QueryResult:
    """Does ``predicate(alg, inputs, outputs)`` hold for every input of the domain?

    ``outputs`` has the D pattern of ``model`` under ``name`` and of each
    of ``models`` (name -> Model, same operand formats) under its key.  A
    failing input is replayed and the predicate evaluated on it again with
    the concrete interpretation before it is reported.
    """
    prop = "custom"
    name, K, domain = setup_query(model, name, K, domain, prop)
    if predicate is None:
        raise InputError("custom needs predicate= (a Python file defining predicate(alg, inputs, outputs))")
    fn = load_predicate(predicate)
    all_models: dict[str, Model] = {name: model, **(models or {})}
    for other_name, m in all_models.items():
        if (m.a_fmt, m.b_fmt, m.c_fmt, m.scale_fmt, m.block) != (model.a_fmt, model.b_fmt, model.c_fmt, model.scale_fmt, model.block):
            raise InputError(f"custom: model {other_name!r} reads other operand formats than {name!r}")
    run = Runner(solver, timeout, seed)
    alg = QueryAlgebra()
    x = InputSet.of(alg, model, K)
    x.restrict(domain)
    outs: dict[str, Int] = {}
    decl: dict[str, str] = {}
    for i, (n, m) in enumerate(all_models.items()):
        outs[n] = run_model(alg, m, x.a, x.b, x.c, x.scale_a, x.scale_b)
        decl[n] = declare_output(alg, f"out{i}", outs[n], output_container(m).bits)
    holds = _call_predicate(fn, alg, x.terms(), outs)
    script = alg.script(f"(assert (not {alg.raw_bool(holds)}))")
    r = run.check(script, x.declared + list(decl.values()))
    if r.verdict == "unknown":
        return unknown_result(prop, name, model, K, domain, run, "custom predicate", r.reason, smt2=script)
    if r.verdict == "unsat":
        check_nonempty(model, K, domain, run, prop)
        return make_result(prop, "holds", name, model, K, domain, run, smt2=script,
                           reason=f"the predicate holds for every input ({domain.describe()}, K={K})")
    w = x.witness(r.values)
    got = dict(zip(all_models, replay(list(all_models.values()), w)))
    for n in all_models:
        expect_same(f"custom output {n}", r.values[decl[n]], got[n], w)
    if _eval_predicate(fn, model, x, w, got, all_models):
        raise ReplayError(f"custom: the predicate holds on the solver's witness {w} when evaluated concretely")
    return make_result(prop, "fails", name, model, K, domain, run, witness=w, outputs=got, smt2=script,
                       reason="the predicate is false on this input")


def _eval_predicate(fn: Predicate, model: Model, x: InputSet, w: Witness, got: dict[str, int], all_models: dict[str, Model]) -> bool:
    """The predicate on concrete values (NumPy interpretation, one row)."""
    alg = NumpyAlgebra()
    values = list(w.a) + list(w.b) + [w.c] + list(w.scale_a or ()) + list(w.scale_b or ())
    fmts = [x.a_fmt] * x.K + [x.b_fmt] * x.K + [x.c_fmt] + [x.scale_fmt] * (len(values) - 2 * x.K - 1)
    inputs = {n: alg.input(np.array([v], dtype=np.int64), 0, (1 << f.bits) - 1) for n, v, f in zip(x.input_names, values, fmts) if f}
    outputs = {n: alg.input(np.array([v], dtype=np.int64), 0, (1 << output_container(m).bits) - 1)
               for (n, m), v in zip(all_models.items(), got.values())}
    value = _call_predicate(fn, alg, inputs, outputs)
    if value.const is not None:
        return bool(value.const)
    return bool(alg.value(value, 1)[0])
