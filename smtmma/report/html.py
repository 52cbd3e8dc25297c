"""The report as one self-contained HTML file (figures as base64 PNG data URIs, no external resources)."""

from __future__ import annotations

import base64
from html import escape
from typing import Sequence

from .content import BOUND_SYMBOLS, CLAIM_COLUMNS, Report, claim_row, summary
from .data import PROPERTIES, cell_text

__all__ = ["render_html"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 110em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; text-align: left; }
th { background: #f0f0f0; }
td.mono { font-family: ui-monospace, monospace; font-size: 0.9em; word-break: break-all; max-width: 30em; }
tr.differs td { background: #fde8e8; }
tr.unknown td { background: #fff6da; }
figure { margin: 1.5em 0; } figcaption { max-width: 60em; font-size: 0.9em; }
.dash { color: #999; }
"""


def _cell(text: str, cls: str = "") -> str:
    body = '<span class="dash">—</span>' if text == "—" else escape(text)
    return f"<td{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}>{body}</td>"


def _table(head: Sequence[str], rows: Sequence[str]) -> str:
    return ("<table>\n<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody>\n</table>")


def render_html(rep: Report) -> str:
    """The HTML text of the report."""
    out = [f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{escape(rep.title)}</title>\n"
           f"<style>{_STYLE}</style>\n</head>\n<body>\n<h1>{escape(rep.title)}</h1>\n"
           f"<p>smtmma {escape(rep.version)}. {escape(summary(rep))}"
           f"{'; claims from ' + escape(rep.claims_from) if rep.claims_from else ''}.</p>\n"]
    out.append('<h2 id="claims">Claims</h2>\n')
    if rep.records:
        rows = []
        for rec in rep.records:
            cells = claim_row(rec)
            cls = "differs" if rec.get("agrees") is False else "unknown" if rec.get("agrees") is None else ""
            tds = "".join(_cell(c, "mono" if i >= 8 else "") for i, c in enumerate(cells))
            rows.append(f'<tr id="claim-{escape(rec["name"])}"{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}>{tds}</tr>')
        out.append(_table(CLAIM_COLUMNS, rows))
    else:
        out.append("<p>No claim records (run <code>smtmma prove --all --json &gt; claims.json</code> and give "
                   "<code>--claims claims.json</code>).</p>\n")
    out.append('<h2 id="catalogue">Catalogue</h2>\n<p>Every catalogue row, grouped by distinct model; properties come '
               "from the claims above, else from the property table of <code>smtmma prove --catalogue</code>"
               f"{' (' + escape(rep.table_from) + ')' if rep.table_from else ''}.</p>\n")
    rows = []
    for g in rep.groups:
        prop_cells = []
        for key in PROPERTIES:
            cell = g.cells.get(key)
            if cell is None:
                prop_cells.append(_cell(cell_text(g, key)))
            else:
                title = escape(", ".join(dict.fromkeys(cell.claims)))
                prop_cells.append(f'<td title="{title}">{escape(cell.text)}</td>')
        rows.append(f"<tr>{_cell(g.model.describe(), 'mono')}{_cell(g.instr)}"
                    f"<td>{escape(', '.join(g.row_names()))}</td>{''.join(prop_cells)}</tr>")
    out.append(_table(["model", "instr", "rows (arch instr op; * = default)", *PROPERTIES.values()], rows))
    out.append(f"<p>{escape(BOUND_SYMBOLS)}</p>\n")
    if rep.figures:
        out.append('<h2 id="plots">Plots</h2>\n')
    for f in rep.figures:
        data = base64.b64encode(f.png).decode("ascii")
        out.append(f'<figure id="{escape(f.stem)}">\n<img src="data:image/png;base64,{data}" width="{f.width}" '
                   f'height="{f.height}" alt="{escape(f.alt)}">\n<figcaption>{escape(f.caption)}</figcaption>\n</figure>\n')
    out.append("</body>\n</html>\n")
    return "".join(out)
