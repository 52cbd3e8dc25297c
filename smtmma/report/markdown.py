"""The report as Markdown: tables in GitHub's pipe syntax, figures as PNG files next to the .md, linked."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence
from urllib.parse import quote

from .content import BOUND_SYMBOLS, CLAIM_COLUMNS, Report, claim_row, summary
from .data import PROPERTIES, cell_text

__all__ = ["render_markdown"]


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_esc(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def render_markdown(rep: Report, path: Path) -> tuple[str, list[Path]]:
    """(Markdown text, PNG paths written) for a report saved at ``path``: figures go to ``<stem>-<figure>.png`` beside it."""
    out = [f"# {rep.title}\n\nsmtmma {rep.version}. {summary(rep)}"
           f"{'; claims from ' + rep.claims_from if rep.claims_from else ''}.\n\n## Claims\n\n"]
    if rep.records:
        out.append(_table(CLAIM_COLUMNS, [claim_row(r) for r in rep.records]))
    else:
        out.append("No claim records (run `smtmma prove --all --json > claims.json` and give `--claims claims.json`).\n")
    out.append("\n## Catalogue\n\nEvery catalogue row, grouped by distinct model; properties come from the claims above, "
               f"else from the property table of `smtmma prove --catalogue`{' (' + rep.table_from + ')' if rep.table_from else ''}.\n\n")
    rows = []
    for g in rep.groups:
        rows.append([g.model.describe(), g.instr, ", ".join(g.row_names()),
                     *[cell_text(g, k) for k in PROPERTIES]])
    out.append(_table(["model", "instr", "rows (arch instr op; * = default)", *PROPERTIES.values()], rows))
    out.append(f"\n{BOUND_SYMBOLS}\n")
    written: list[Path] = []
    if rep.figures:
        out.append("\n## Plots\n")
    for f in rep.figures:
        png = path.with_name(f"{path.stem}-{f.stem}.png")
        png.write_bytes(f.png)
        written.append(png)
        out.append(f"\n![{f.alt}]({quote(png.name)})\n\n{f.caption}\n")
    return "".join(out), written
