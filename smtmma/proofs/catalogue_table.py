"""The catalogue's property table: every distinct model's sign symmetry, monotonicity, carry bits and error bound.

Each cell is decided by the property query of :mod:`smtmma.queries.properties`
on one model, at the property's own K (one FDPA, K = L; one FMA), and runs as
a claim of its own (a record, a certificate, a slot of ``prove --jobs``),
named ``<model>.<property>`` after the model's first catalogue row
(``sm90-f16f32-mma.symmetry``).  ``smtmma prove --catalogue`` runs them;
``proofs/catalogue.json`` holds the shipped records and ``smtmma report``
shows them where no literature claim decides the cell.

A cell's verdict is ``holds`` (a proof, with its certificate), ``fails`` (a
witness replayed through the simulator), ``unknown`` (the solver gave up, or
no prover covers the model's kind for that property: the reason names the
missing part) or ``n/a`` (the property does not apply, e.g. a kind without a
carry-bit parameter).  The record's ``extra["cell"]`` is the table's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

from ..catalogue import CATALOGUE, lookup, model_of, resolve_arch, resolve_instr
from ..deadline import TimeLimitError, time_limit
from ..errors import InputError, InputTypeError
from ..models import Model, parse_model_spec
from ..queries.properties import check_property
from ..queries.properties.common import QueryResult, approx_ratio
from .claim import Claim, Context, Outcome
from .evidence import certificate, query_blocks, witness_record

__all__ = ["CELLS", "TableModel", "table_models", "spec_model", "cell_claims", "table_claims", "decide_cell", "SOURCE",
           "property_table"]

#: The table's columns (report keys) -> the property query that decides them.
CELLS: dict[str, str] = {"symmetric": "symmetry", "monotone": "monotonicity", "carry": "carry-bits", "bound": "error-bound"}

#: The ``source`` of a cell's record: no document states it; the model's own query decides it.
SOURCE = "catalogue (smtmma's model)"

#: Properties that do not apply to a model when their query refuses it (the others are then unknown: no prover).
_NOT_APPLICABLE = ("carry-bits",)


@dataclass(frozen=True)
class TableModel:
    """One distinct model of the table: a file-safe ``key``, the model, and the catalogue rows that run it."""

    key: str  # "sm90-f16f32-mma", or for a spec "sm90-f16f32-t-fdpa_L_8_F_26"
    model: Model
    rows: tuple[str, ...]  # "sm90 f16f32 mma", ... (the first names the model)


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]+", "_", text).strip("_")


def table_models(arch: Optional[str] = None, instr: Optional[str] = None) -> list[TableModel]:
    """The catalogue's distinct models (first-appearance order), each with all its rows; ``arch``/``instr`` keep
    only the models that run on a matching row (a name the catalogue does not know is an error)."""
    a = resolve_arch(arch) if arch is not None else None
    i = resolve_instr(instr) if instr is not None else None
    groups: dict[Model, list[str]] = {}
    picked: set[Model] = set()
    for e in CATALOGUE:
        groups.setdefault(e.model, []).append(f"{e.arch} {e.instr} {e.op}")
        if (a is None or e.arch == a) and (i is None or e.instr == i):
            picked.add(e.model)
    if not picked:
        raise InputError(f"no catalogue row runs {i or 'any instruction'} on {a or 'any architecture'}")
    return [TableModel(_safe(rows[0].replace(" ", "-")), m, tuple(rows)) for m, rows in groups.items() if m in picked]


def spec_model(spec: str, arch: str, instr: str, op: Optional[str] = None) -> TableModel:
    """The model a user's spec (``t-fdpa:L=8,F=26``) describes, with the formats of (arch, instr)'s row."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("a model spec is text such as 't-fdpa:L=8,F=26'")
    entry = lookup(arch, instr, op)
    model = parse_model_spec(spec, like=model_of(entry.arch, entry.instr, op))
    return TableModel(_safe(f"{entry.arch}-{entry.instr}-{spec}"), model, (f"{entry.arch} {entry.instr} spec {spec}",))


def cell_claims(models: Sequence[TableModel], props: Sequence[str] = tuple(CELLS)) -> list[Claim]:
    """One claim per (model, property): ``props`` are column keys of :data:`CELLS` or query names."""
    names = {v: k for k, v in CELLS.items()}
    keys = []
    for p in props:
        key = p if p in CELLS else names.get(p)
        if key is None:
            raise InputError(f"no table column {p!r}; columns: {', '.join(CELLS)} (or {', '.join(CELLS.values())})")
        keys.append(key)
    return [_cell_claim(tm, key) for tm in models for key in dict.fromkeys(keys)]


def _cell_claim(tm: TableModel, key: str) -> Claim:
    prop = CELLS[key]
    return Claim(f"{tm.key}.{prop}", SOURCE, tm.rows, "", f"{prop} of {tm.model.describe()} ({tm.rows[0]})",
                 lambda ctx: decide_cell(tm, key, ctx), "catalogue")


def decide_cell(tm: TableModel, key: str, ctx: Context) -> Outcome:
    """Decide one cell: ``ctx.timeout`` bounds the whole query (formulas, every solver call), in seconds."""
    prop = CELLS[key]
    try:
        with time_limit(ctx.timeout, "the cell's time limit"):
            r = check_property(prop, tm.model, solver=ctx.solver, timeout=ctx.timeout, seed=ctx.seed)
    except TimeLimitError:
        out = _outcome(key, "unknown", f"no answer within {ctx.timeout:g} s", tm)
        out.extra["timeout"] = ctx.timeout
        return out
    except InputError as e:  # the query refuses the model: the property does not apply, or no prover covers it
        why = re.sub(r" \(supported: [^)]*\)$", "", str(e).split(": ", 1)[-1])  # the list of what is covered: --help
        if prop in _NOT_APPLICABLE:
            return _outcome(key, "n/a", why, tm)
        return _outcome(key, "unknown", f"not covered: {why}", tm)
    out = _from_result(tm, key, r)
    out.extra["timeout"] = ctx.timeout
    return out


def _outcome(key: str, verdict: str, why: str, tm: TableModel) -> Outcome:
    """A cell without a query result: "unknown" or "n/a", and why."""
    return Outcome(verdict, None, detail=why, extra={"cell": f"{verdict}: {why}", "column": key, "model": tm.model.describe()},
                   covers=list(tm.rows))


def _cell_text(key: str, r: QueryResult) -> str:
    if r.verdict == "unknown":
        return f"unknown: {r.reason}"
    if key == "carry":
        return str(r.extra.get("carry_bits"))
    if key == "bound":
        if r.verdict == "holds":
            return f"{r.extra.get('bound')}"
        ratio = str(r.extra.get("ratio"))
        return f"fails: |D - exact| = {approx_ratio(ratio) or ratio} x bound"  # the exact ratio stays in extra.ratio
    return {"holds": "yes", "fails": "no"}[r.verdict]


def _from_result(tm: TableModel, key: str, r: QueryResult) -> Outcome:
    name = f"{tm.key}.{CELLS[key]}"
    verdict = r.verdict
    outputs = {n: (tm.model.d_fmt, bits) for n, bits in r.outputs.items()}
    witness = witness_record(tm.model, r.witness, outputs) if r.witness is not None else None
    cert = certificate(name, SOURCE, tm.rows, verdict, r.solver, query_blocks(r, f"{CELLS[key]} of {tm.model.describe()}, "
                                                                             f"K={r.K}"), witness,
                       describe=tm.model.describe(), K=r.K) if verdict != "unknown" else None
    extra = {"cell": _cell_text(key, r), "column": key, "model": tm.model.describe(), "K": r.K}
    extra.update({k: v for k, v in r.extra.items() if isinstance(v, (str, int, float, bool))})
    return Outcome(verdict, None, r.solver, witness, r.reason, cert, extra, list(tm.rows))



def property_table(arch: Optional[str] = None, instr: Optional[str] = None, *, model: Optional[str] = None,
                   op: Optional[str] = None, properties: Union[None, str, Sequence[str]] = None,
                   solver: Optional[str] = None, timeout: float = 120.0, seed: int = 0, jobs: int = 1,
                   save: Optional[str] = None) -> list[dict[str, Any]]:
    """Decide the property table's cells: the records ``smtmma prove --catalogue --json`` prints under "cells".

    ``arch``/``instr`` keep the catalogue models of matching rows (both None:
    every distinct model); ``model``: a spec (``"t-fdpa:L=8,F=26"``) decided
    on the formats of ``arch``/``instr`` (and ``op``)'s row instead.
    ``properties``: columns to decide (``"symmetry"``, ``"monotonicity"``,
    ``"carry-bits"``, ``"error-bound"``; default all).  ``timeout``: seconds
    per cell, all its solver calls together; ``jobs``: cells at once, one
    process each; ``save``: a folder for the certificates
    (``<model>.<property>.smt2``).  Each record's ``verdict`` is "holds",
    "fails", "unknown" or "n/a"; ``extra["cell"]`` is the table's text.
    """
    from ..limits import check_int, check_solver_args
    from .runner import prove

    check_solver_args(solver=solver, timeout=timeout, seed=seed)
    check_int("jobs", jobs, 1, 256)
    claims = table_claims(arch, instr, model=model, op=op, properties=properties)
    return prove(claims, Context(solver, float(timeout), int(seed)), save=save, jobs=int(jobs), compress=bool(save),
                 compress_over=0)


def table_claims(arch: Optional[str] = None, instr: Optional[str] = None, *, model: Optional[str] = None,
                 op: Optional[str] = None, properties: Union[None, str, Sequence[str]] = None) -> list[Claim]:
    """The cells :func:`property_table` decides, as claims (see there for the arguments)."""
    if isinstance(properties, str):
        properties = [p.strip() for p in properties.split(",") if p.strip()]
    elif properties is not None and not (isinstance(properties, Sequence) and all(isinstance(p, str) for p in properties)):
        raise InputTypeError("properties must be a column name or a list of them, e.g. ['symmetry', 'carry-bits']")
    if model is not None:
        if arch is None or instr is None:
            raise InputError("a model spec needs an arch and an instr: the row whose formats the model computes")
        models = [spec_model(model, arch, instr, op)]
    elif op is not None:
        raise InputError("op picks the row of a model spec; the catalogue's models come with their rows")
    else:
        models = table_models(arch, instr)
    return cell_claims(models, properties) if properties else cell_claims(models)
