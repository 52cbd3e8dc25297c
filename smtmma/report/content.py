"""The report's content, independent of its format: claim rows, catalogue groups, figures."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .. import __version__
from .data import ModelGroup, catalogue_groups, witness_text
from .plots import Figure

__all__ = ["Report", "CLAIM_COLUMNS", "BOUND_SYMBOLS", "claim_row", "build", "DEFAULT_SAMPLES"]

#: Samples of the Fig. 3 experiment; the f16f32 comparison uses a third of them per model.
DEFAULT_SAMPLES = 60000

#: What the symbols of the error bounds the claims print stand for (Table 9 of the MMA-Sim paper), said once.
BOUND_SYMBOLS = ("Error bounds are Table 9's |Phi - exact| <= (L+1) 2^(e_max-F) + u ulp(FMT): Phi is the model's D and "
                 "exact the dot product plus c in exact arithmetic; e_max the largest unbiased exponent among the non-zero "
                 "products a_k*b_k (e_a + e_b) and c, the exponent the fused sum is aligned at; 2^(e_max-F) one unit of "
                 "the F fraction bits kept below it; ulp(FMT) the unit in the last place of D in format FMT at D's "
                 "exponent; u = 1 for outputs rounded toward zero or down, 1/2 to nearest. The bounds hold for finite "
                 "inputs whose D is finite.")

CLAIM_COLUMNS = ("claim", "source", "models", "expected", "verdict", "agrees", "solver", "seconds", "witness (hex)",
                 "witness (decimal)")


@dataclass
class Report:
    """Everything a writer renders."""

    records: list[dict[str, Any]]
    groups: list[ModelGroup]
    figures: list[Figure] = field(default_factory=list)
    claims_from: str = ""  # "FILE.json", "run now", or "" when no claims were asked for
    table_from: str = ""  # where the property table's cells come from ("proofs/catalogue.json (shipped)", FILE.json, "")
    notes: list[str] = field(default_factory=list)
    title: str = "smtmma report"
    version: str = __version__
    timings: dict[str, float] = field(default_factory=dict)


def _agrees(v: Any) -> str:
    return {True: "yes", False: "NO", None: "—"}.get(v, str(v))


def claim_row(rec: dict[str, Any]) -> list[str]:
    """The cells of one claims-table row (strings, in :data:`CLAIM_COLUMNS` order)."""
    hx, dx = witness_text(rec.get("witness"))
    secs = rec.get("seconds")
    return [
        str(rec["name"]),
        str(rec.get("source") or "—"),
        ", ".join(rec.get("models") or []) or "—",
        str(rec.get("expected") if rec.get("expected") is not None else "—"),
        str(rec.get("verdict") if rec.get("verdict") is not None else "—"),
        _agrees(rec.get("agrees")),
        str(rec.get("solver") or "—"),
        f"{secs:.2f}" if isinstance(secs, (int, float)) else "—",
        hx or "—",
        dx or "—",
    ]


def build(records: Sequence[dict[str, Any]], *, samples: int = DEFAULT_SAMPLES, seed: int = 0, plots: bool = True,
          claims_from: str = "", errors_k: int = 16, cells: Sequence[dict[str, Any]] = (), table_from: str = "") -> Report:
    """Gather the report: the catalogue with the records' properties, and (``plots``) the two figures.

    ``samples``: dot products of the Fig. 3 experiment; the f16f32
    comparison runs ``samples // 3`` (at least 1) per distinct model.
    """
    rep = Report(list(records), catalogue_groups(records, cells), claims_from=claims_from, table_from=table_from)
    if plots:
        from .experiments import cdna3_bias, f16f32_errors
        from .plots import bias_figure, errors_figure

        t0 = time.perf_counter()
        rep.figures.append(bias_figure(cdna3_bias(samples, seed)))
        t1 = time.perf_counter()
        n = max(1, samples // 3)
        rep.figures.append(errors_figure(f16f32_errors(n, seed, errors_k), samples=n, k=errors_k, seed=seed))
        rep.timings = {"cdna3-bias": t1 - t0, "f16f32-errors": time.perf_counter() - t1}
    return rep


def summary(rep: Report) -> str:
    """One line: how many claims agree with their documents, differ, or are unknown."""
    if not rep.records:
        return "no claim records" + (" (--no-claims)" if not rep.claims_from else "")
    agree = sum(1 for r in rep.records if r.get("agrees") is True)
    differ = sum(1 for r in rep.records if r.get("agrees") is False)
    unknown = len(rep.records) - agree - differ
    return f"{len(rep.records)} claims: {agree} agree with their document, {differ} differ, {unknown} undecided"


def optional_text(x: Optional[str]) -> str:
    """``x`` or an em dash."""
    return x if x else "—"
