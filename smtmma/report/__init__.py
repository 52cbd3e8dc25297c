"""``smtmma report``: the claims table, the catalogue with each model's properties, and plots, as HTML or Markdown.

:func:`~smtmma.report.content.build` gathers a :class:`~smtmma.report.content.Report`
(claim records, catalogue groups, figures); :func:`write_report` writes it
in the format its file name's suffix names (``.html``/``.htm`` or ``.md``).
Modules: ``data`` (records and catalogue), ``experiments`` (the simulations
behind the plots, NumPy only), ``plots`` (matplotlib), ``html``, ``markdown``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError, InputTypeError
from ..limits import check_output_file
from .content import DEFAULT_SAMPLES, Report, build
from .data import load_records, run_claims

__all__ = ["Report", "build", "write_report", "load_records", "run_claims", "report_format", "check_output", "DEFAULT_SAMPLES"]

_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}


def report_format(path: str) -> str:
    """"html" or "md" from the file name's suffix; InputError for any other."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"the report's path is a file name (report.html or report.md), got {type(path).__name__}")
    fmt = _FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InputError(f"{path}: the report's format comes from its suffix: .html or .md")
    return fmt


def check_output(path: str) -> str:
    """The report's format ("html" or "md") after checking ``path`` can be written: InputError before any work if not."""
    fmt = report_format(path)
    check_output_file(path, "report", "the report's file name (report.html or report.md)")
    return fmt


def write_report(rep: Report, path: str) -> list[Path]:
    """Write ``rep`` to ``path`` (HTML or Markdown by suffix); returns the files written (the report first)."""
    fmt = check_output(path)
    p = Path(path)
    if fmt == "html":
        from .html import render_html

        p.write_text(render_html(rep), encoding="utf-8")
        return [p]
    from .markdown import render_markdown

    text, pngs = render_markdown(rep, p)
    p.write_text(text, encoding="utf-8")
    return [p, *pngs]
