"""Which catalogue rows a per-row test takes in the default run, and which only under ``-m slow``.

Every measured row runs by default.  A provisional row (docs/provisional.md) repeats a measured row's model
(sm103/sm110/sm121 are sm100/sm120 row for row, gfx950's f16/bf16/f32/f64 are gfx942's), or is one of 25
format pairs of one algorithm (gfx950's f8f6f4 GTR-FDPA): by default one row of each algorithm no measured row
has (kind, rounding, D format: gfx950's e4m3 GTR-FDPA, RDNA's FP16-output TR-FDPA) runs; the rest run under
``-m slow``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Iterable

import pytest

from smtmma.catalogue import ARCHS, CATALOGUE, Entry

__all__ = ["is_fast", "rows_param", "repeats_formats"]

_MEASURED = {e.model for e in CATALOGUE if not ARCHS[e.arch].provisional}
_FIRST_NEW: dict[Any, Entry] = {}
_ALGORITHMS: set[tuple[Any, ...]] = set()
for _e in CATALOGUE:
    _key = (_e.model.kind, _e.model.rho, _e.model.d_fmt)
    if ARCHS[_e.arch].provisional and _e.model not in _MEASURED and _key not in _ALGORITHMS:
        _ALGORITHMS.add(_key)
        _FIRST_NEW[_e.model] = _e


def is_fast(e: Entry) -> bool:
    """Whether row ``e`` runs in the default test run (see the module docstring)."""
    return not ARCHS[e.arch].provisional or _FIRST_NEW.get(e.model) is e


def rows_param(rows: Iterable[Entry], *, thin: bool = False) -> list[Any]:
    """``rows`` as pytest params, the ones :func:`is_fast` leaves out marked slow, with ids ``arch-instr-op``;
    ``thin``: also the rows :func:`repeats_formats` finds (their model's formats were all tested already)."""
    rows = list(rows)
    repeats = repeats_formats(rows) if thin else set()
    return [pytest.param(e, id=f"{e.arch}-{e.instr}-{e.op}", marks=() if is_fast(e) and id(e) not in repeats else pytest.mark.slow)
            for e in rows]


def repeats_formats(rows: Iterable[Entry]) -> set[int]:
    """ids of the fast rows whose model brings no A or B format its algorithm (every model parameter but the input
    formats) has not had in an earlier fast row: sm100's 81 f8f6f4/mxf8f6f4 format pairs of a few algorithms become
    about 20 rows that still take every format once per algorithm, as A and as B; ``-m slow`` takes them all."""
    seen: set[tuple[Any, ...]] = set()
    out = set()
    for e in rows:
        if not is_fast(e):
            continue
        m = e.model
        algorithm = tuple(getattr(m, f.name) for f in fields(m) if f.name not in ("a_fmt", "b_fmt"))
        new = {(algorithm, "a", m.a_fmt), (algorithm, "b", m.b_fmt)} - seen
        if new:
            seen |= new
        else:
            out.add(id(e))
    return out
