"""What the report shows, gathered: claim records (from a saved ``prove --json`` or a fresh run) and the catalogue.

A claim record is one element of ``{"claims": [...]}`` as ``smtmma prove
--json`` prints it: ``name``, ``source``, ``models`` ("sm90 f16f32", ...),
``expected``, ``verdict``, ``agrees``, ``solver``, ``seconds``, ``witness``,
``certificate``.  The catalogue's properties come from the records whose
name says which property they decide (:func:`property_of`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from ..catalogue import ARCHS, CATALOGUE, Entry, resolve_arch, resolve_instr
from ..errors import InputError, InputTypeError, SmtmmaError
from ..models import Model

__all__ = ["PROPERTIES", "ModelGroup", "Cell", "load_records", "load_table", "run_claims", "shipped_claims", "shipped_table",
           "catalogue_groups", "cell_text",
           "property_of", "witness_text"]

#: The catalogue's property columns, in order: key -> heading.
PROPERTIES: dict[str, str] = {
    "symmetric": "symmetric?",
    "monotone": "monotone?",
    "carry": "carry bits needed",
    "bound": "error bound",
}


def shipped_claims() -> Optional[Path]:
    """The claim records shipped with the source tree (``proofs/claims.json`` beside the package), or None when
    there are none (an installed wheel has no ``proofs/``)."""
    return _shipped("claims.json")


def shipped_table() -> Optional[Path]:
    """The property table shipped with the source tree (``proofs/catalogue.json``), or None."""
    return _shipped("catalogue.json")


def _shipped(name: str) -> Optional[Path]:
    import smtmma

    path = Path(smtmma.__file__).resolve().parents[1] / "proofs" / name
    return path if path.is_file() else None


def load_table(path: str) -> list[dict[str, Any]]:
    """The cell records of a saved ``smtmma prove --catalogue --json`` file; InputError (one line) when it is not one."""
    data = _json_object(path, "property table file", "smtmma prove --catalogue --json")
    if not isinstance(data.get("cells"), list):
        raise InputError(f"{path}: expected an object {{\"cells\": [...]}} as 'smtmma prove --catalogue --json' prints")
    cells = [_checked(r, path, i) for i, r in enumerate(data["cells"])]
    for rec in cells:
        extra = rec.get("extra")
        if not isinstance(extra, dict) or extra.get("column") not in PROPERTIES or not isinstance(extra.get("cell"), str):
            raise InputError(f"{path}: cell {rec['name']}: \"extra\" must name its \"column\" ({', '.join(PROPERTIES)}) "
                             "and its \"cell\" text")
    return cells


def _json_object(path: str, noun: str, command: str) -> dict[str, Any]:
    """The JSON object in file ``path`` (a ``noun`` such as "claims file" that ``command`` writes); InputError if not."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"the {noun} is a path, got {type(path).__name__}")
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such {noun} (save one with '{command} > FILE.json')")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file (expected the JSON of '{command}')") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected an object as '{command}' prints")
    return data


def load_records(path: str) -> list[dict[str, Any]]:
    """The claim records of a saved ``smtmma prove --json`` file; InputError (one line) when it is not one."""
    data = _json_object(path, "claims file", "smtmma prove --all --json")
    if not isinstance(data.get("claims"), list):
        raise InputError(f"{path}: expected an object {{\"claims\": [...]}} as 'smtmma prove --json' prints")
    return [_checked(r, path, i) for i, r in enumerate(data["claims"])]


def _checked(r: object, path: str, i: int) -> dict[str, Any]:
    """One record, its fields checked for type (missing optional fields filled with None)."""
    if not isinstance(r, dict):
        raise InputError(f"{path}: claims[{i}] is not an object")
    if not isinstance(r.get("name"), str) or not r["name"]:
        raise InputError(f"{path}: claims[{i}] has no \"name\"")
    models = r.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise InputError(f"{path}: claim {r['name']}: \"models\" must be a list of strings such as \"sm90 f16f32\"")
    seconds = r.get("seconds")
    if seconds is not None and (not isinstance(seconds, (int, float)) or isinstance(seconds, bool)):
        raise InputError(f"{path}: claim {r['name']}: \"seconds\" must be a number")
    rec = {k: r.get(k) for k in ("name", "source", "models", "expected", "verdict", "agrees", "solver", "seconds",
                                 "witness", "certificate", "covers", "extra", "detail")}
    if rec["extra"] is not None and not isinstance(rec["extra"], dict):
        raise InputError(f"{path}: claim {r['name']}: \"extra\" must be an object")
    rec["models"] = models
    return rec


def run_claims(names: Optional[Sequence[str]], *, solver: Optional[str] = None, timeout: float = 60.0,
               progress: Optional[Callable[..., Any]] = None) -> list[dict[str, Any]]:
    """Records of the named claims (None: all), run now with :func:`smtmma.proofs.runner.prove`."""
    from ..proofs.claim import Context
    from ..proofs.runner import prove, select  # late: the solver stack is heavy

    claims = select(list(names or ()), all_claims=not names)
    return prove(claims, Context(solver=solver, timeout=timeout), progress=progress)


@dataclass
class Cell:
    """One property of one model: the text shown and the claims it comes from."""

    text: str
    claims: list[str] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)


@dataclass
class ModelGroup:
    """Catalogue rows that run one and the same :class:`Model`, and its properties."""

    model: Model
    rows: list[Entry]
    cells: dict[str, Cell] = field(default_factory=dict)

    @property
    def instr(self) -> str:
        """The instruction types of the rows (usually one)."""
        return ", ".join(dict.fromkeys(e.instr for e in self.rows))

    def row_names(self) -> list[str]:
        """``sm90 f16f32 mma*``-style names of the rows."""
        return [f"{e.arch} {e.instr} {e.op}{'*' if e.default else ''}" for e in self.rows]


def _model_key(text: str) -> Optional[tuple[str, str, Optional[str]]]:
    """(arch, instr, op or None) of a record's model string ("sm90 f16f32", "h100 f16f32 wgmma"); None if not one."""
    parts = text.replace(",", " ").split()
    if len(parts) < 2:
        return None
    try:
        arch, instr = resolve_arch(parts[0]), resolve_instr(parts[1])
    except SmtmmaError:
        return None
    return arch, instr, parts[2] if len(parts) > 2 else None


_HOLDS = ("holds", "proved", "proof", "yes", "true")
_FAILS = ("fails", "witness", "no", "false")


def property_of(name: str) -> Optional[str]:
    """Which catalogue property a claim decides, from its name; None for claims about something else."""
    n = name.lower()
    if "symmetr" in n:
        return "symmetric"
    if "monoton" in n:
        return "monotone"
    if n.endswith("carry-bits"):
        return "carry"
    if n.startswith("error-bound"):
        return "bound"
    return None


def _yes_no(rec: dict[str, Any]) -> str:
    """symmetric?/monotone? of a record: "yes", "no", "unknown" or "?" (a verdict in other words).

    A witness is a counterexample (no).  Otherwise the verdict's first word
    says whether the claim holds; a claim named for the negation
    ("cdna3-asymmetry", "volta-nonmonotonic") that holds means "no".
    """
    verdict = str(rec.get("verdict") or "unknown").lower()
    if verdict.startswith("unknown") or verdict in ("timeout", "error"):
        return "unknown"
    if rec.get("witness"):
        return "no"
    name = str(rec.get("name", "")).lower()
    negated = "asymmetr" in name or "nonmonoton" in name or "non-monoton" in name
    word = re.split(r"[\s:(,;]", verdict, maxsplit=1)[0]
    if word in ("sat", "unsat"):  # a query for a counterexample found one / proved there is none
        return "no" if word == "sat" else "yes"
    if word in _HOLDS:
        return "no" if negated else "yes"
    if word in _FAILS:
        return "yes" if negated else "no"
    return "?"


def _cell_text(prop: str, rec: dict[str, Any], model: Model) -> str:
    if prop in ("symmetric", "monotone"):
        yn = _yes_no(rec)
        return yn if yn != "?" else str(rec.get("verdict"))
    text = str(rec.get("verdict") or "unknown")
    summands = (rec.get("extra") or {}).get("summands") if prop == "carry" else None
    if isinstance(summands, int) and model.L is not None and summands - 1 != model.L:
        text += f" for K={summands - 1}"  # posed on fewer products than the model sums (turing-carry-bits: K=4, L=8)
    return text


def catalogue_groups(records: Sequence[dict[str, Any]] = (), cells: Sequence[dict[str, Any]] = ()) -> list[ModelGroup]:
    """Every catalogue row, grouped by distinct model (first-appearance order), with properties from ``records``
    (the literature's claims) and, where no claim decides a property, from ``cells`` (the property table of
    ``prove --catalogue``); :func:`cell_text` words a property neither decides."""
    groups: dict[Model, ModelGroup] = {}
    where: dict[tuple[str, str, str], ModelGroup] = {}
    for e in CATALOGUE:
        g = groups.setdefault(e.model, ModelGroup(e.model, []))
        g.rows.append(e)
        where[(e.arch, e.instr, e.op)] = g
    for rec in records:
        prop = property_of(rec["name"])
        if prop is None:
            continue
        hit: dict[int, ModelGroup] = {}
        for m in rec.get("covers") or rec.get("models") or []:
            key = _model_key(m)
            if key is None:
                continue
            arch, instr, op = key
            for (a, i, o), g in where.items():
                if a == arch and i == instr and (op is None and g.rows and _default_or_only(a, i, o) or o == op):
                    hit[id(g)] = g
        for g in hit.values():
            _add(g, prop, _cell_text(prop, rec, g.model), rec["name"])
    for rec in cells:
        extra = rec.get("extra") or {}
        prop = extra.get("column")
        rows = [_model_key(m) for m in rec.get("covers") or []]
        g = next((where[k] for k in rows if k is not None and k in where), None)  # type: ignore[comparison-overlap]
        if g is not None and prop in PROPERTIES and g.model.describe() == extra.get("model") and prop not in g.cells:
            _add(g, prop, str(extra.get("cell")), rec["name"])
    return list(groups.values())


def cell_text(g: ModelGroup, prop: str) -> str:
    """The report's text for property ``prop`` of ``g``: its cell, or the command that would decide it."""
    if prop in g.cells:
        return g.cells[prop].text
    e = g.rows[0]
    return f"not run (smtmma prove --catalogue --arch {e.arch} --instr {e.instr})"


def _add(g: ModelGroup, prop: str, text: str, claim: str) -> None:
    cell = g.cells.setdefault(prop, Cell(""))
    if text not in cell.verdicts:
        cell.verdicts.append(text)
    cell.claims.append(claim)
    cell.text = " / ".join(cell.verdicts)


def _default_or_only(arch: str, instr: str, op: str) -> bool:
    """Whether op is the default op family of (arch, instr) (what a model string without an op names)."""
    return any(e.arch == arch and e.instr == instr and e.op == op and e.default for e in CATALOGUE)


def witness_text(w: Any, limit: int = 400) -> tuple[str, str]:
    """(hex, decimal) one-line renderings of a record's witness ("" when there is none)."""
    if not w:
        return "", ""
    if not isinstance(w, dict):
        return _clip(json.dumps(w), limit), ""
    hexpart = {k: v for k, v in w.items() if k not in ("decimal", "outputs")}
    dec = w.get("decimal")
    hx = "; ".join(f"{k}={_join(v)}" for k, v in hexpart.items())
    if isinstance(w.get("outputs"), dict):
        hx += ("; " if hx else "") + "; ".join(f"{k}={v}" for k, v in w["outputs"].items())
    dx = "; ".join(f"{k}={_join(v)}" for k, v in dec.items()) if isinstance(dec, dict) else ""
    return _clip(hx, limit), _clip(dx, limit)


def _join(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ",".join(str(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_join(x)}" for k, x in v.items()) + "}"
    return str(v)


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "\u2026"


def arch_family(arch: str) -> str:
    """The family name of an architecture (Hopper, CDNA3, ...)."""
    return ARCHS[arch].family
