"""The Python entry points of the solver queries: :func:`distinguish` and :func:`query`.

Both take what a user types on the command line (architecture names, model
specs, a domain string) or the objects behind them (:class:`~smtmma.models.Model`,
:class:`~smtmma.queries.formula.Domain`) and return the record that
``smtmma distinguish --json`` / ``smtmma query --json`` prints: a dict of JSON
data, bit patterns as hex strings in each operand's format.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

from ..deadline import time_limit
from ..errors import InputTypeError, check_flag
from ..limits import check_solver_args
from ..models import Model
from .formula import Domain
from .properties.custom import Predicate
from .records import distinguish_report, query_report

__all__ = ["distinguish", "query"]


def distinguish(
    *models: Union[str, Model],
    instr: str,
    op: Optional[str] = None,
    like: Optional[str] = None,
    k: Optional[int] = None,
    domain: Union[None, str, Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    time_limit_s: Optional[float] = None,
    seed: int = 0,
    confirm: bool = False,
) -> dict[str, Any]:
    """Inputs on which two or more models give different D bits, or a proof that none exist.

    ``models``: architectures (``"sm80"``, ``"h100"``), model specs
    (``"t-fdpa:F=26"``: formats and unnamed parameters from ``like`` or the
    first architecture) or :class:`Model` objects (one list is accepted too).
    ``domain``: ``"exp=-8:8,lanes=4"`` or a :class:`Domain`.  ``timeout``:
    seconds per solver call; ``time_limit_s``: seconds for the whole call
    (raises :class:`~smtmma.deadline.TimeLimitError`).  Returns the record of
    ``smtmma distinguish --json``: ``verdict`` ("sat", "unsat", "unknown"),
    ``models``, ``witness`` ({"a", "b", "c"} as hex), ``outputs`` (name -> D
    hex), ``differences``, ``vector`` (a test-vector line), ``classes``,
    ``solver``, ``seconds``, ``reason``, ``instr``, ``op``, ``k``, ``domain``,
    ``specs``.
    """
    check_solver_args(k=k, solver=solver, timeout=timeout, time_limit_s=time_limit_s, seed=seed)
    check_flag("confirm", confirm)
    tokens: list[Union[str, Model]] = list(models[0]) if len(models) == 1 and isinstance(models[0], (list, tuple)) else list(models)
    with time_limit(time_limit_s, "time_limit_s"):
        return distinguish_report(tokens, instr=instr, op=op, like=like, k=k, domain=domain, solver=solver,
                                  timeout=timeout, seed=seed, confirm=confirm).record


def query(
    prop: str,
    arch: str,
    instr: str,
    *,
    op: Optional[str] = None,
    model: Union[None, str, Model] = None,
    k: Optional[int] = None,
    domain: Union[None, str, Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    time_limit_s: Optional[float] = None,
    seed: int = 0,
    tight: bool = False,
    predicate: Union[None, str, "os.PathLike[str]", Predicate] = None,
) -> dict[str, Any]:
    """Prove or refute property ``prop`` of the model of (arch, instr, op), or of ``model``.

    ``prop``: symmetry, monotonicity, order-independence, carry-bits,
    error-bound or custom (with ``predicate``: a function
    ``predicate(alg, inputs, outputs)`` returning a Bool term, or a Python
    file defining one; the solver looks for inputs where it is false).  ``model``: a
    spec replacing parameters of the catalogue's model (``"t-fdpa:F=26"``) or
    a :class:`Model` of the instruction's formats.  ``timeout``: seconds per
    solver call; ``time_limit_s``: seconds for the whole call.  Returns the
    record of ``smtmma query --json``: ``property``, ``verdict`` ("holds",
    "fails", "unknown"), ``witness``, ``outputs``, ``solver``, ``seconds``,
    ``reason``, ``arch``, ``instr``, ``name``, ``model``, ``k``, ``domain``,
    ``vector`` and the property's own fields (``carry_bits``, ``bound``, ...).
    """
    check_solver_args(k=k, solver=solver, timeout=timeout, time_limit_s=time_limit_s, seed=seed)
    check_flag("tight", tight)
    if predicate is not None and not callable(predicate):
        if not isinstance(predicate, (str, os.PathLike)):
            raise InputTypeError("predicate must be a function predicate(alg, inputs, outputs) or a Python file "
                                 f"defining one, got {type(predicate).__name__}")
        predicate = os.fspath(predicate)
    with time_limit(time_limit_s, "time_limit_s"):
        return query_report(prop, arch, instr, op=op, model=model, k=k, domain=domain, solver=solver, timeout=timeout,
                            seed=seed, tight=tight, predicate=predicate).record
