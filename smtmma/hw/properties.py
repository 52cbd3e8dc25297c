"""The property table, tried on a device: do the hardware's bits keep what the model's cells prove and break what they refute?

Every cell of the catalogue's property table (``proofs/catalogue.json``,
:mod:`smtmma.proofs.catalogue_table`) is a statement about one model at one
length K.  For each instruction shape of the device whose model is the cell's
(a K below the shape's k runs padded with -0 products, which no model
sees), this module writes test vectors that put the statement to
the device, and judges the bits the device returns:

- ``symmetry`` (cell holds): random finite inputs (the §3.1.4 kinds) and their
  negation (-A, B, -C); the device keeps the property on a pair when D(-A, B, -C)
  and -D(A, B, C) are the same value (NaN and NaN count as the same).
- ``monotonicity`` (holds): random non-negative finite inputs and a copy with
  one input raised to its next pattern (every other pair: c at the top of a
  binade above the products, raised across it, where truncating units lose
  monotonicity); the device keeps it unless both D are numbers and the second is
  smaller (the query's drop).
- ``error-bound`` (holds): random finite inputs, and inputs of the worst-case
  shape that the simulator's search (:mod:`smtmma.queries.properties.error_search`)
  finds closest to the bound; the device keeps it when its D is finite and within
  the cell's Table 9 bound, or when its D is not finite (the bound's scope leaves
  those out).
- every refuted cell's witness: symmetry (the witness and its negation: the
  device shows the refutation when the two D are not negatives), monotonicity
  (the witness and its raised copy: when the second D is smaller) and an error
  bound (when D exceeds the bound); and each carry-bit witness (the device gives
  the model's D, the one with enough carry bits).

A line carries ``property`` (the cell's name), ``case`` (lines of one pair share
it) and ``role`` (``base``, ``negated``, ``raised`` or ``witness``).  Nothing here
needs a solver: the cells were decided before; the device only runs vectors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, NamedTuple, Optional, Sequence

import numpy as np

from ..errors import InputError
from ..formats import Format, format_hex, parse_hex
from ..catalogue import lookup
from ..models import Model, parse_model_spec
from ..queries.distinguish import Witness
from ..queries.query_algebra import neg_pattern
from ..queries.properties.error_bound import py_ratio, table9_bound
from ..queries.properties.error_search import search
from ..sampling import draw_operands, is_inf_bits, is_nan_bits, negate_bits, round_to_format, to_float64
from ..simulate import simulate_dot
from ..vectors import TestVector, vector_formats
from .survey import SurveyTarget, survey_targets, target_line
from .validate import VALIDATION_KINDS

__all__ = ["DEFAULT_NEAR", "DEFAULT_PAIRS", "PropertyCase", "PropertyRow", "property_cases", "property_lines", "judge", "load_cells",
           "summary_markdown"]

#: Random pairs (or single lines, for the error bound) per cell and instruction shape, by default.
DEFAULT_PAIRS = 64

#: Searches for an input near the error bound per cell, by default (one line each, on every shape of the cell).
DEFAULT_NEAR = 2

#: The input kinds drawn for the random cases: the finite ones of §3.1.4 (the cells' scope is finite inputs).
FINITE_KINDS = tuple(k for k in VALIDATION_KINDS if k != "bits")


@dataclass(frozen=True)
class PropertyCase:
    """One table cell put to one instruction shape: the cell's record and the shape it runs on."""

    cell: dict[str, Any]
    target: SurveyTarget

    @property
    def prop(self) -> str:
        """The property: ``symmetry``, ``monotonicity``, ``carry-bits`` or ``error-bound``."""
        return str(self.cell["name"]).rsplit(".", 1)[-1]

    @property
    def K(self) -> int:
        """The cell's dot-product length (lanes)."""
        return int(self.cell["extra"]["K"])

    @property
    def model(self) -> Model:
        return self.target.model


@dataclass
class PropertyRow:
    """What one device did on one cell and shape: cases tried, cases where it keeps the cell's statement."""

    cell: str
    verdict: str  # the table's: holds / fails (witness) / ...
    op: str  # the instruction shape
    test: str  # what was tried: "random", "near" (near-bound inputs) or "witness"
    tried: int = 0
    agree: int = 0
    notes: list[str] = field(default_factory=list)
    worst: Optional[float] = None  # error bound: the largest |D - exact| / bound among the cases

    @property
    def agrees(self) -> bool:
        return self.tried > 0 and self.agree == self.tried

    def as_dict(self) -> dict[str, Any]:
        return {"cell": self.cell, "verdict": self.verdict, "op": self.op, "test": self.test, "tried": self.tried,
                "agree": self.agree, "notes": self.notes, "worst": self.worst}


def load_cells(path: Optional[str] = None) -> list[dict[str, Any]]:
    """The table's cell records: ``path`` (a ``smtmma prove --catalogue --json`` file) or the shipped table."""
    from ..report.data import load_table, shipped_table

    if path is None:
        shipped = shipped_table()
        if shipped is None:
            raise InputError("no property table: give one (smtmma prove --catalogue --json > table.json)")
        path = str(shipped)
    return load_table(path)


def property_cases(arch: str, cells: Sequence[dict[str, Any]], instrs: Optional[Sequence[str]] = None) -> list[PropertyCase]:
    """Every (cell, instruction shape) of ``arch`` that a device can test: the shape's model is the cell's; cells that the device cannot show (unknown, n/a, a carry-bit cell without witness) are left out."""
    out = []
    for t in survey_targets(arch, instrs):
        row = f"{t.entry.arch} {t.entry.instr} {t.entry.op}"
        spec = t.model.describe()
        for cell in cells:
            extra = cell.get("extra") or {}
            if row not in cell.get("covers", ()) or extra.get("model") != spec or not extra.get("K"):
                continue
            case = PropertyCase(cell, t)
            verdict = cell.get("verdict")
            shown = verdict == "fails" or (verdict == "holds" and case.prop == "carry-bits")
            if (cell.get("witness") and shown) or (verdict == "holds" and case.prop != "carry-bits"):
                out.append(case)
    return out


def property_lines(cases: Sequence[PropertyCase], pairs: int = DEFAULT_PAIRS, seed: int = 0,
                   near: int = DEFAULT_NEAR) -> list[dict[str, Any]]:
    """The test-vector lines (inputs only) of ``cases``: random pairs for cells that hold (and ``near`` inputs found
    close to a proved error bound), witnesses for the rest."""
    if pairs < 0 or near < 0:
        raise InputError(f"the numbers of random pairs and near-bound searches must be >= 0, got {pairs} and {near}")
    out: list[dict[str, Any]] = []
    found: dict[str, list[Witness]] = {}  # cell -> near-bound inputs (one search per cell, shared by its shapes)
    for n, case in enumerate(cases):
        rng = np.random.default_rng([seed, n])
        if case.cell.get("witness"):
            out += _witness_lines(case)
        elif case.prop == "symmetry":
            out += _symmetry_lines(case, pairs, rng)
        elif case.prop == "monotonicity":
            out += _monotone_lines(case, pairs, rng)
        elif case.prop == "error-bound":
            out += _bound_lines(case, pairs, rng)
            if near:
                if case.cell["name"] not in found:
                    found[case.cell["name"]] = _near_bound(case, near, seed)
                out += [_record(case, w.a, w.b, w.c, "base", f"n{i}", w.scale_a, w.scale_b)
                        for i, w in enumerate(found[case.cell["name"]])]
    return out


def _record(case: PropertyCase, a: Sequence[int], b: Sequence[int], c: int, role: str, tag: str,
            sa: Optional[Sequence[int]] = None, sb: Optional[Sequence[int]] = None) -> dict[str, Any]:
    name = case.cell["name"]
    return target_line(case.target, a, b, c, sa, sb, property=name, case=f"{name}@{case.target.shape.name}#{tag}",
                       role=role)


class _Rows(NamedTuple):
    """Drawn inputs, one row per dot product (patterns); the scales None unless the instruction is block-scaled."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    sa: Optional[np.ndarray]
    sb: Optional[np.ndarray]

    def scales(self, j: int) -> tuple[Optional[np.ndarray], Optional[np.ndarray]]:
        return (None, None) if self.sa is None or self.sb is None else (self.sa[j], self.sb[j])


def _finite_rows(case: PropertyCase, n: int, rng: np.random.Generator) -> _Rows:
    """``n`` rows of finite a, b, c and finite scales (drawn in turn from the finite §3.1.4 kinds)."""
    fm = vector_formats(case.target.entry)
    parts = []
    for i, kind in enumerate(FINITE_KINDS):
        many = n // len(FINITE_KINDS) + (1 if i < n % len(FINITE_KINDS) else 0)
        if many:
            a, b, c, sa, sb = draw_operands(kind, fm.a, fm.b, fm.c, many * 2, case.K, rng, scale_fmt=fm.scale,
                                            block=fm.block)
            ok = _finite(fm.a, a).all(axis=1) & _finite(fm.b, b).all(axis=1) & _finite(fm.c, c)
            if sa is not None and sb is not None and fm.scale is not None:
                ok &= _finite(fm.scale, sa).all(axis=1) & _finite(fm.scale, sb).all(axis=1)
            parts.append([x if x is None else x[ok][:many] for x in (a, b, c, sa, sb)])
    if not parts:
        empty = np.zeros((0, case.K), np.uint64)
        return _Rows(empty, empty, np.zeros(0, np.uint64), None, None)
    cols = [None if parts[0][i] is None else np.concatenate([p[i] for p in parts]) for i in range(5)]
    return _Rows(*cols)  # type: ignore[arg-type]


def _finite(fmt: Format, bits: np.ndarray) -> np.ndarray:
    return ~(is_nan_bits(fmt, bits) | is_inf_bits(fmt, bits))


def _symmetry_lines(case: PropertyCase, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    fm = vector_formats(case.target.entry)
    rows = _finite_rows(case, n, rng)
    na, nc = negate_bits(fm.a, rows.a), negate_bits(fm.c, rows.c)
    out = []
    for j in range(len(rows.c)):
        sa, sb = rows.scales(j)
        out.append(_record(case, rows.a[j], rows.b[j], rows.c[j], "base", str(j), sa, sb))
        out.append(_record(case, na[j], rows.b[j], nc[j], "negated", str(j), sa, sb))
    return out


def _next_up(fmt: Format, bits: int) -> Optional[int]:
    """The next larger finite pattern of a non-negative pattern (a zero: the smallest subnormal), None past the top."""
    up = bits + 1
    if up >> (fmt.bits - (1 if fmt.signed else 0)) or not _finite(fmt, np.array([up], np.uint64))[0]:
        return None
    return up


def _monotone_lines(case: PropertyCase, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    fm = vector_formats(case.target.entry)
    rows = _finite_rows(case, n, rng)
    a, b, c = _nonneg(fm.a, rows.a), _nonneg(fm.b, rows.b), _nonneg(fm.c, rows.c)
    edge = _binade_tops(fm, a, b, rows.sa, rows.sb)
    K = case.K
    fmts = [fm.a] * K + [fm.b] * K + [fm.c]  # the inputs in the order a_0..a_K-1, b_0..b_K-1, c
    out = []
    for j in range(len(c)):
        if j % 2 and edge[j]:  # every other pair: c at the top of a binade above the products, raised across it
            c[j] = edge[j]
        pick = 2 * K if j % 2 else int(rng.integers(2 * K + 1))
        values = [int(v) for v in (*a[j], *b[j], c[j])]
        up = _next_up(fmts[pick], values[pick])
        if up is None:
            continue
        values[pick] = up
        sa, sb = rows.scales(j)
        out.append(_record(case, a[j], b[j], c[j], "base", str(j), sa, sb))
        out.append(_record(case, values[:K], values[K:2 * K], values[2 * K], "raised", str(j), sa, sb))
    return out


def _nonneg(fmt: Format, bits: np.ndarray) -> np.ndarray:
    """The patterns with the sign bit cleared (their absolute values; an unsigned format's are their own)."""
    return bits & np.uint64(~fmt.sign_mask & ((1 << fmt.bits) - 1)) if fmt.signed else bits


def _binade_tops(fm: Any, a: np.ndarray, b: np.ndarray, sa: Optional[np.ndarray], sb: Optional[np.ndarray]) -> np.ndarray:
    """Per row, the largest c pattern below 2**(e + 7), e the exponent of the row's largest product (0 where none
    fits c's format): raising it to the next pattern moves the fused sum's alignment up one binade, so every product
    loses a bit to truncation (§3.1.4's non-monotone shape)."""
    prod = to_float64(fm.a, a) * to_float64(fm.b, b)
    if sa is not None and sb is not None and fm.scale is not None and fm.block:
        lane_block = np.arange(a.shape[1]) // fm.block
        with np.errstate(over="ignore", invalid="ignore"):
            prod = prod * to_float64(fm.scale, sa)[:, lane_block] * to_float64(fm.scale, sb)[:, lane_block]
    with np.errstate(invalid="ignore"):
        top = np.max(np.abs(prod), axis=1)
    out = np.zeros(len(top), dtype=np.uint64)
    if not fm.c.man_bits:
        return out
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(top))
    for j, ej in enumerate(e):
        if not np.isfinite(ej):
            continue
        p = int(round_to_format(fm.c, np.array([2.0 ** (ej + 7)]), overflow="inf")[0])
        if not _finite(fm.c, np.array([p], np.uint64))[0] or p >> fm.c.man_bits == 0:
            continue
        out[j] = p - 1  # all-ones fraction of the binade below
    return out


def _bound_lines(case: PropertyCase, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    rows = _finite_rows(case, n, rng)
    return [_record(case, rows.a[j], rows.b[j], rows.c[j], "base", str(j), *rows.scales(j)) for j in range(len(rows.c))]


def _near_bound(case: PropertyCase, n: int, seed: int) -> list[Witness]:
    """``n`` inputs of the worst-case shape with the largest error / bound the simulator's search finds (one search
    per seed)."""
    m = case.model
    if m.scale_fmt is not None:
        return []  # the search draws no block scales
    bound = table9_bound(m, case.K)
    out = []
    for i in range(n):
        best = search(m, case.K, lambda w, d: py_ratio(m, bound, w, d), seed=seed * 1000 + i, draws=1000, climbs=6,
                      batch=200)
        if best is not None:
            out.append(best[0])
    return out


def _witness_lines(case: PropertyCase) -> list[dict[str, Any]]:
    """The cell's witness (and, for a refuted monotonicity, its raised copy: the one whose model D is the recorded one)."""
    fm = vector_formats(case.target.entry)
    w = case.cell["witness"]
    x: dict[str, Any] = {"a": [parse_hex(fm.a, v) for v in w["a"]], "b": [parse_hex(fm.b, v) for v in w["b"]],
                         "c": parse_hex(fm.c, w["c"]), "sa": None, "sb": None}
    if fm.scale is not None and w.get("scale_a") is not None and w.get("scale_b") is not None:
        x["sa"] = [parse_hex(fm.scale, v) for v in w["scale_a"]]
        x["sb"] = [parse_hex(fm.scale, v) for v in w["scale_b"]]
    paired = case.prop in ("monotonicity", "symmetry")
    out = [_record(case, x["a"], x["b"], x["c"], "base" if paired else "witness", "w", x["sa"], x["sb"])]
    if case.prop == "symmetry":
        out.append(_record(case, [neg_pattern(fm.a, v) for v in x["a"]], x["b"], neg_pattern(fm.c, x["c"]), "negated", "w", x["sa"], x["sb"]))
    if case.prop != "monotonicity":
        return out
    label = str(case.cell["extra"].get("raised", ""))
    want = str(w.get("outputs", {}).get("d_larger", "")).split(" ")[0]
    for y in _raised_candidates(fm, x, label):
        d = _simulate(case.model, y["a"], y["b"], y["c"], y["sa"], y["sb"])
        if format_hex(fm.d, d) == want:
            out.append(_record(case, y["a"], y["b"], y["c"], "raised", "w", y["sa"], y["sb"]))
            return out
    raise InputError(f"{case.cell['name']}: no next value of {label} gives the witness's recorded D {want}")


def _simulate(model: Model, a: Sequence[int], b: Sequence[int], c: int, sa: Optional[Sequence[int]],
              sb: Optional[Sequence[int]]) -> int:
    """The model's D (pattern) of one dot product."""
    scales = {} if sa is None or sb is None else {"scale_a": np.array([sa], np.uint64), "scale_b": np.array([sb], np.uint64)}
    d = simulate_dot(model, None, np.array([a], np.uint64), np.array([b], np.uint64), np.array([c], np.uint64), **scales)
    return int(d[0])


def _raised_candidates(fm: Any, x: dict[str, Any], label: str) -> list[dict[str, Any]]:
    """The witness ``x`` with input ``label`` (``c``, ``a3``, ``b0``, ``sa1``) at each value the query may call its next
    one: the next pattern, or from a zero the smallest normal."""
    match = re.fullmatch(r"(sa|sb|a|b|c)(\d*)", label)
    if match is None or (match.group(1) != "c" and not match.group(2)) or (match.group(1) in ("sa", "sb") and x["sa"] is None):
        raise InputError(f"the witness raises an unknown input {label!r}")
    who, k = match.group(1), int(match.group(2) or 0)
    fmt = {"a": fm.a, "b": fm.b, "c": fm.c, "sa": fm.scale, "sb": fm.scale}[who]
    lanes = None if who == "c" else x[who]
    if lanes is not None and k >= len(lanes):
        raise InputError(f"the witness raises {label!r}, past its {len(lanes)} lanes")
    old = x["c"] if lanes is None else lanes[k]
    values = [old + 1] + ([1 << fmt.man_bits] if fmt.man_bits and old & ~fmt.sign_mask == 0 else [])
    out = []
    for v in values:
        y = {key: (list(val) if isinstance(val, list) else val) for key, val in x.items()}
        if who == "c":
            y["c"] = v
        else:
            y[who][k] = v
        out.append(y)
    return out


def judge(lines: Sequence[TestVector], cells: Sequence[dict[str, Any]]) -> list[PropertyRow]:
    """Rows of what the recorded ``lines`` (with the device's ``d``) show about the cells they were written for."""
    by_name = {str(c["name"]): c for c in cells}
    groups: dict[str, dict[str, TestVector]] = {}
    for v in lines:
        if v.d is None or "case" not in v.raw:
            continue
        groups.setdefault(str(v.raw["case"]), {})[str(v.raw.get("role"))] = v
    rows: dict[tuple[str, str, str], PropertyRow] = {}
    for case_id, roles in groups.items():
        first = next(iter(roles.values()))
        name = str(first.raw.get("property"))
        cell = by_name.get(name)
        if cell is None:
            raise InputError(f"line {first.line}: no table cell named {name!r}")
        op = str(first.raw.get("op"))
        tag = case_id.rsplit("#", 1)[-1]
        test = "witness" if tag == "w" else ("near" if tag.startswith("n") else "random")
        row = rows.setdefault((name, op, test), PropertyRow(name, str(cell["verdict"]), op, test))
        ok, note, ratio = _keeps(cell, roles)
        if ok is None:
            continue
        if ratio is not None:
            row.worst = max(row.worst or 0.0, ratio)
        row.tried += 1
        row.agree += int(ok)
        if not ok and len(row.notes) < 3:
            row.notes.append(f"{case_id}: {note}")
    return sorted(rows.values(), key=lambda r: (r.cell, r.op, r.test))


def _value(fmt: Format, bits: int) -> float:
    return float(to_float64(fmt, np.array([bits], np.uint64))[0])


def _keeps(cell: dict[str, Any], roles: dict[str, TestVector]) -> tuple[Optional[bool], str, Optional[float]]:
    """Whether the device's D keep the cell's statement on one case (a witness: whether it shows the refutation), with
    a note and, for an error bound, |D - exact| / bound; None when the case is incomplete."""
    prop = str(cell["name"]).rsplit(".", 1)[-1]
    base = roles.get("base") or roles.get("witness")
    if base is None or base.d is None:
        return None, "", None
    entry = lookup(base.arch, base.instr, base.op)
    fd = vector_formats(entry).d
    model = entry.model
    if prop == "symmetry":
        neg = roles.get("negated")
        if neg is None or neg.d is None:
            return None, "", None
        x, y = _value(fd, base.d), _value(fd, neg.d)
        same = bool((np.isnan(x) and np.isnan(y)) or x == -y)
        note = f"D = {format_hex(fd, base.d)}, D(-A, B, -C) = {format_hex(fd, neg.d)}"
        return (not same if cell["verdict"] == "fails" else same), note, None
    if prop == "monotonicity":
        up = roles.get("raised")
        if up is None or up.d is None:
            return None, "", None
        x, y = _value(fd, base.d), _value(fd, up.d)
        drop = bool(not np.isnan(x) and not np.isnan(y) and y < x)  # the query's drop: a NaN D is none
        note = f"D = {format_hex(fd, base.d)}, raised: {format_hex(fd, up.d)}"
        return (drop if cell["verdict"] == "fails" else not drop), note, None
    w = Witness(tuple(base.a), tuple(base.b), base.c, base.scale_a, base.scale_b)
    if prop == "error-bound":
        m = _cell_model(cell, model)
        r = py_ratio(m, table9_bound(m, len(base.a)), w, base.d)
        note = f"D = {format_hex(fd, base.d)}, |D - exact| / bound = {_ratio_text(r)}"
        ok = (r is not None and r > 1) if cell["verdict"] == "fails" else (r is None or r <= 1)
        return ok, note, None if r is None else float(r)
    # carry-bits: the device gives the model's D on the witness (the one with enough carry bits)
    m = _cell_model(cell, model)
    d = _simulate(m, base.a, base.b, base.c, base.scale_a, base.scale_b)
    return base.d == d, f"D = {format_hex(fd, base.d)}, the model's {format_hex(fd, d)}", None


def _cell_model(cell: dict[str, Any], fallback: Model) -> Model:
    spec = (cell.get("extra") or {}).get("model")
    return parse_model_spec(spec, fallback) if isinstance(spec, str) else fallback


def _ratio_text(r: Optional[Fraction]) -> str:
    return "none (D not finite)" if r is None else f"{float(r):.6g}"


def summary_markdown(rows: Sequence[PropertyRow], gpu: str = "") -> str:
    """The rows as a Markdown table: cell, the table's verdict, shape, what was tried, how many cases agree."""
    head = f"# The property table on {gpu}\n\n" if gpu else ""
    agree = sum(r.agree for r in rows)
    tried = sum(r.tried for r in rows)
    out = [head + f"{len(rows)} cell x shape rows, {agree}/{tried} cases as the table says.\n",
           "| cell | table | instruction | test | device agrees | largest error / bound | first disagreement |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        worst = "-" if r.worst is None else f"{r.worst:.4g}"
        out.append(f"| {r.cell} | {r.verdict} | {r.op} | {r.test} | {r.agree}/{r.tried} | {worst} | "
                   f"{r.notes[0] if r.notes else '-'} |")
    return "\n".join(out) + "\n"
