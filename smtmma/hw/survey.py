"""First contact with a unit: record every instruction it has on a suite, the open questions and random vectors.

For each catalogue instruction the device's architecture has (one row per
op family and instruction shape, e.g. ``sm90 f16f32 mma.sync.aligned.m16n8k8``)
the survey runs

* the shipped catalogue suite of the instruction type (``suites/INSTR.jsonl``
  beside the package), or, without one, vectors chosen on the fly from a
  random pool so that every pair of catalogue models the pool can tell apart
  is told apart (no solver: the survey path imports none);
* the open-question vectors of this architecture and instruction
  (``suites/open-questions.jsonl``, :mod:`smtmma.discriminators.questions`);
* ``n_random`` random vectors of the MMA-Sim paper's §3.1.4 kinds (normal,
  uniform, DNN-like, ill-conditioned, random bits),

records every line with the device's ``d`` (one JSONL per instruction), and
checks them: ``matched`` counts lines where the catalogue's own model gives
the device's bits, ``identified`` names the catalogue models (of any
architecture, run on this instruction's shape) that give the device's bits on
every line, grouped where they are the same model, and each open question gets
the hypothesis whose ``expect`` equals ``d`` (or none).  A failing instruction
(a kernel that does not build or launch, replicated cells that disagree) is
recorded with its error and the survey goes on.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..catalogue import ARCHS, INSTRS, Entry, entries, lookup, model_of, model_on_shape
from ..discriminators.candidates import catalogue_space
from ..discriminators.provisional import PROVISIONAL_SUITES, provisional_space, suite_file
from ..discriminators.selection import select
from ..errors import InputError, SmtmmaError
from ..formats import Format, format_hex
from ..isa import InstrShape
from ..models import Model
from ..check import simulate_with
from ..sampling import draw_operands
from ..simulate import simulate_dot
from ..vectors import TestVector, parse_line, read_vectors, vector_formats
from .device import Device
from .record import recorded_line
from .validate import VALIDATION_KINDS

__all__ = ["SurveyTarget", "InstrSurvey", "Survey", "survey_targets", "survey", "suites_dir", "target_line", "DEFAULT_RANDOM"]

#: Random vectors per instruction, drawn in equal parts from each §3.1.4 kind.
DEFAULT_RANDOM = 2000

#: Random rows drawn to choose an on-the-fly suite from, when the instruction type ships none.
POOL_ROWS = 4096


@dataclass(frozen=True)
class SurveyTarget:
    """One instruction of the device: its catalogue row and one of the row's shapes."""

    entry: Entry
    shape: InstrShape

    @property
    def name(self) -> str:
        """``ARCH-INSTR-SHAPE`` (the JSONL's file stem), e.g. ``sm90-f16f32-mma.sync.aligned.m16n8k8``."""
        return f"{self.entry.arch}-{self.entry.instr}-{self.shape.name}"

    @property
    def model(self) -> Model:
        """The catalogue's model of this row on this shape (L = k when one instruction is one FDPA)."""
        return model_on_shape(self.entry, self.shape)

    @property
    def K(self) -> int:
        """Dot-product length of most random vectors: at least one FDPA of the row's model, whole issues of k."""
        m = self.entry.model
        want = max(m.L or 0, m.P or 0, m.block or 0, self.shape.k)
        return -(-want // self.shape.k) * self.shape.k

    @property
    def K_chained(self) -> int:
        """Length of the chained random vectors: two of :attr:`K` and half an issue more (zero-padded), whole blocks."""
        unit = self.entry.model.block or 1
        extra = -(-max(1, self.shape.k // 2) // unit) * unit
        return 2 * self.K + extra


@dataclass
class InstrSurvey:
    """What one instruction did: lines recorded and matched, the consistent models, the open questions' answers."""

    arch: str
    instr: str
    op: str
    family: str
    model: str
    lines: int = 0
    matched: int = 0
    identified: list[list[str]] = field(default_factory=list)  # classes of equal models, each a list of names
    open_questions: dict[str, Optional[str]] = field(default_factory=dict)  # question -> hypothesis (None: no match)
    surprises: list[str] = field(default_factory=list)
    error: Optional[str] = None
    seconds: float = 0.0
    file: Optional[str] = None

    @property
    def own_identified(self) -> bool:
        """The catalogue's own row is among the consistent models."""
        own = self.arch if self.family == lookup(self.arch, self.instr).op else f"{self.arch}/{self.family}"
        return any(own in cls for cls in self.identified)

    def as_dict(self) -> dict[str, Any]:
        """The ``instructions`` item of summary.json."""
        return {"arch": self.arch, "instr": self.instr, "op": self.op, "family": self.family, "model": self.model,
                "lines": self.lines, "matched": self.matched, "identified": [c[0] for c in self.identified],
                "identified_classes": self.identified, "open_questions": self.open_questions,
                "surprises": self.surprises, "error": self.error, "seconds": round(self.seconds, 3), "file": self.file}


@dataclass
class Survey:
    """The whole survey: the GPU, one :class:`InstrSurvey` per instruction, whether it was interrupted."""

    gpu: dict[str, Any]
    instructions: list[InstrSurvey]
    seconds: float = 0.0
    interrupted: bool = False
    command: Optional[str] = None

    def as_dict(self) -> dict[str, Any]:
        """summary.json."""
        return {"gpu": self.gpu, "command": self.command, "seconds": round(self.seconds, 3),
                "interrupted": self.interrupted, "instructions": [i.as_dict() for i in self.instructions]}

    def table(self) -> list[list[str]]:
        """Rows of the printed table (header first)."""
        rows = [["arch", "instr", "instruction", "lines", "matched", "model identified", "open questions", "surprises"]]
        for s in self.instructions:
            if s.error:
                ident = "error"
            elif not s.identified:
                ident = "none"
            else:
                ident = "; ".join(", ".join(c) for c in s.identified)
            oq = ", ".join(f"{q}: {h or 'none'}" for q, h in s.open_questions.items()) or "-"
            rows.append([s.arch, s.instr, s.op, str(s.lines), f"{s.matched}/{s.lines}", ident, oq,
                         (s.error or "; ".join(s.surprises) or "-")])
        return rows

    def markdown(self) -> str:
        """summary.md: the GPU, the table and each error in full."""
        g = self.gpu
        head = [f"# smtmma hw survey: {g.get('description', g.get('name', '?'))}", ""]
        head += [f"- {k}: {v}" for k, v in g.items() if k != "description"]
        if self.command:
            head.append(f"- command: `{self.command}`")
        head.append(f"- {len(self.instructions)} instructions in {self.seconds:.1f} s"
                    + (" (interrupted: the rest were not run)" if self.interrupted else ""))
        rows = self.table()
        out = head + ["", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows[1:]]
        return "\n".join(out) + "\n"


def suites_dir() -> Optional[Path]:
    """The shipped ``suites/`` folder beside the package (a source checkout), or None (an installed package)."""
    p = Path(__file__).resolve().parent.parent.parent / "suites"
    return p if (p / "open-questions.jsonl").is_file() else None


def survey_targets(arch: str, instrs: Optional[Sequence[str]] = None) -> list[SurveyTarget]:
    """Every (catalogue row, shape) of ``arch``, optionally only the instruction types ``instrs``."""
    rows = entries(arch)
    if instrs:
        want = {lookup(arch, i).instr for i in instrs}
        rows = [e for e in rows if e.instr in want]
    return [SurveyTarget(e, s) for e in rows for s in e.shapes]


def _candidates(t: SurveyTarget) -> list[tuple[str, Model]]:
    """The catalogue's models of this instruction type (every architecture, provisional ones too), as each row would
    run this shape; for a provisional row with a shipped suite also the grid around its hypothesis (by spec)."""
    out = []
    for c in catalogue_space(t.entry.instr, provisional=True).candidates:
        row = lookup(c.arch, t.entry.instr, c.op) if c.arch else None
        out.append((c.name, model_on_shape(row, t.shape) if row is not None else c.model))
    if t.entry.instr in PROVISIONAL_SUITES.get(t.entry.arch, ()):
        named = {n for n, _ in out}
        for c in provisional_space(t.entry.arch, t.entry.instr).candidates:
            if c.name not in named:
                out.append((c.name, model_on_shape(Entry(t.entry.arch, t.entry.instr, t.entry.op, c.model, "grid"), t.shape)))
    return out


def target_line(t: SurveyTarget, a: Sequence[int], b: Sequence[int], c: int, sa: Optional[Sequence[int]],
                sb: Optional[Sequence[int]], **extra: Any) -> dict[str, Any]:
    """A test-vector line (inputs only) for instruction ``t``: patterns as hex, ``op`` the shape, then ``extra``."""
    fm = vector_formats(t.entry)
    rec: dict[str, Any] = {"arch": t.entry.arch, "instr": t.entry.instr, "op": t.shape.name}
    rec["a"] = _hex_list(fm.a, a)
    rec["b"] = _hex_list(fm.b, b)
    rec["c"] = format_hex(fm.c, int(c))
    if sa is not None and sb is not None and fm.scale is not None:
        rec["scale_a"] = _hex_list(fm.scale, sa)
        rec["scale_b"] = _hex_list(fm.scale, sb)
    rec.update(extra)
    return rec


def _hex_list(fmt: Format, bits: Sequence[int]) -> list[str]:
    """Patterns as test-vector hex (:func:`format_hex`, checked once for the whole list)."""
    values = [int(x) for x in bits]
    if values and (min(values) < 0 or max(values) >> fmt.bits):
        raise InputError(f"a {fmt.name} pattern out of range among {len(values)} lanes")
    w = fmt.hex_digits
    return [f"{x:0{w}x}" for x in values]


def _suite_records(t: SurveyTarget, folder: Optional[Path], seed: int, pool_rows: int,
                   cands: list[tuple[str, Model]]) -> list[dict[str, Any]]:
    """The suite vectors for ``t`` (inputs only): a provisional row's shipped suite, else the shipped catalogue suite of its
    type, else a pool's choice."""
    if folder is not None and t.entry.instr in PROVISIONAL_SUITES.get(t.entry.arch, ()):
        path = suite_file(folder, t.entry.arch, t.entry.instr)
        if path.is_file():
            return [target_line(t, v.a, v.b, v.c, v.scale_a, v.scale_b, source="provisional suite") for v in read_vectors(path)]
    if folder is not None:
        for name in (t.entry.instr, *INSTRS[t.entry.instr].aliases):  # e4m3e4m3f32 ships as e4m3f32
            path = folder / f"{name}.jsonl"
            if path.is_file():
                return [target_line(t, v.a, v.b, v.c, v.scale_a, v.scale_b, source="suite") for v in read_vectors(path)]
    return _pool_suite(t, seed, pool_rows, cands)


def _pool_suite(t: SurveyTarget, seed: int, pool_rows: int, cands: list[tuple[str, Model]]) -> list[dict[str, Any]]:
    """Pool rows that separate every pair of candidate classes the pool separates (simulation only)."""
    fm = vector_formats(t.entry)
    rng = np.random.default_rng(seed)
    per = max(1, pool_rows // len(VALIDATION_KINDS))
    drawn = [draw_operands(kind, fm.a, fm.b, fm.c, per, t.K, rng, scale_fmt=fm.scale, block=fm.block)
             for kind in VALIDATION_KINDS]
    a, b, c = (np.concatenate([d[i] for d in drawn]) for i in range(3))
    sa, sb = (None, None) if drawn[0][3] is None else (np.concatenate([d[i] for d in drawn]) for i in (3, 4))
    outs = []
    for m in dict.fromkeys(m for _, m in cands):
        try:
            outs.append(simulate_dot(m, None, a, b, c, scale_a=sa, scale_b=sb, backend="numpy"))
        except SmtmmaError:
            continue
    if not outs:
        return []
    table = np.unique(np.array(outs, dtype=np.uint64), axis=0)
    chosen = select(table) if len(table) > 1 else [0]
    return [target_line(t, a[j], b[j], c[j], None if sa is None else sa[j], None if sb is None else sb[j],
                  source="suite (pool)") for j in chosen]


def _open_questions(folder: Optional[Path]) -> list[TestVector]:
    """The vectors of ``folder/open-questions.jsonl`` (none without a folder), read once per survey."""
    return read_vectors(folder / "open-questions.jsonl") if folder is not None else []


def _question_records(t: SurveyTarget, questions: Sequence[TestVector]) -> list[dict[str, Any]]:
    """The open-question lines of this architecture and instruction, when the question's model is this shape's."""
    out = []
    for v in questions:
        if (v.arch, v.instr, v.op) != (t.entry.arch, t.entry.instr, t.entry.op):
            continue
        if model_of(v.arch, v.instr, v.op) != t.model:
            continue  # the hypotheses were computed for another L than this shape's
        out.append({**v.raw, "op": t.shape.name, "source": "open question"})
    return out


def _random_records(t: SurveyTarget, n: int, seed: int) -> list[dict[str, Any]]:
    fm = vector_formats(t.entry)
    rng = np.random.default_rng(seed)
    out = []
    kinds = VALIDATION_KINDS
    for i, kind in enumerate(kinds):
        count = n // len(kinds) + (1 if i < n % len(kinds) else 0)
        chained = count // 4  # a quarter chain instructions: D of one issue is the C of the next, the last padded
        for K, many in ((t.K, count - chained), (t.K_chained, chained)):
            if not many:
                continue
            a, b, c, sa, sb = draw_operands(kind, fm.a, fm.b, fm.c, many, K, rng, scale_fmt=fm.scale, block=fm.block)
            for j in range(many):
                out.append(target_line(t, a[j], b[j], c[j], None if sa is None else sa[j], None if sb is None else sb[j],
                                 source=f"random: {kind}"))
    return out


def _simulate(model: Model, vs: Sequence[TestVector]) -> np.ndarray:
    """D patterns of ``vs`` under ``model``, grouped by K."""
    out = np.zeros(len(vs), dtype=np.uint64)
    groups: dict[int, list[int]] = {}
    for i, v in enumerate(vs):
        groups.setdefault(v.K, []).append(i)
    for idx in groups.values():  # NumPy: a few thousand rows cost less than building a native kernel per model
        out[idx] = simulate_with(model, [vs[i] for i in idx], backend="numpy")
    return out


def _survey_one(device: Device, t: SurveyTarget, out_dir: Optional[Path], n_random: int, seed: int,
                folder: Optional[Path], questions: Sequence[TestVector], batch: int, pool_rows: int) -> InstrSurvey:
    res = InstrSurvey(t.entry.arch, t.entry.instr, t.shape.name, t.entry.op, t.model.describe())
    t0 = time.perf_counter()
    try:
        cands = _candidates(t)
        recs = (_suite_records(t, folder, seed, pool_rows, cands) + _question_records(t, questions)
                + _random_records(t, n_random, seed))
        vs = [parse_line(json.dumps(r), i + 1) for i, r in enumerate(recs)]
        ds: list[int] = []
        fh = None
        if out_dir is not None:
            res.file = f"{t.name}.jsonl"
            fh = open(out_dir / res.file, "w", encoding="utf-8")
        try:
            for start in range(0, len(vs), batch):
                part = vs[start:start + batch]
                got = device.run(part)
                ds += got
                if fh is not None:
                    for v, d in zip(part, got):
                        fh.write(recorded_line(v, d, device) + "\n")
                    fh.flush()
        except SmtmmaError as e:
            res.error = str(e)
            vs = vs[:len(ds)]
        finally:
            if fh is not None:
                fh.close()
        res.lines = len(ds)
        if not ds:
            return res
        d = np.array(ds, dtype=np.uint64)
        own = _simulate(t.model, vs)
        res.matched = int(np.count_nonzero(own == d))
        if res.matched < res.lines:
            by: dict[str, int] = {}
            for v, ok in zip(vs, (own == d).tolist()):
                if not ok:
                    src = str(v.raw.get("source", "?"))
                    by[src] = by.get(src, 0) + 1
            res.surprises.append("the catalogue model differs on " + ", ".join(f"{n} {s}" for s, n in by.items()))
        classes: dict[bytes, list[str]] = {}
        fits: dict[Model, bool] = {}  # one simulation per distinct model (provisional rows repeat measured ones)
        for name, m in cands:
            if m not in fits:
                try:
                    fits[m] = bool(np.array_equal(_simulate(m, vs), d))
                except SmtmmaError:
                    fits[m] = False
            if fits[m]:
                classes.setdefault(repr(m).encode(), []).append(name)
        res.identified = list(classes.values())
        for v, dv in zip(vs, ds):
            q = v.raw.get("question")
            if not isinstance(q, str):
                continue
            qname = q.split(":", 1)[0]
            hit = [h for h, x in v.expect.items() if x == dv] if v.expect else []
            prev = res.open_questions.get(qname, "")
            ans = hit[0] if len(hit) == 1 else (" = ".join(hit) if hit else None)
            res.open_questions[qname] = ans if prev in ("", ans) else None
        for qname, ans in res.open_questions.items():
            if ans is not None and ans != t.entry.arch and not ans.startswith(t.entry.arch + " "):
                res.surprises.append(f"{qname}: the hardware takes the alternative {ans}")
    except OSError as e:
        res.error = f"cannot write {res.file}: {e.strerror or e}"
    except SmtmmaError as e:
        res.error = str(e)
    finally:
        res.seconds = time.perf_counter() - t0
    return res


def survey(
    device: Device,
    out_dir: Optional[Path] = None,
    *,
    instrs: Optional[Sequence[str]] = None,
    n_random: int = DEFAULT_RANDOM,
    seed: int = 0,
    batch: int = 4096,
    suites: Optional[Path] = None,
    pool_rows: int = POOL_ROWS,
    progress: Optional[Callable[[int, int, str], None]] = None,
    done: Optional[Callable[[int, int, InstrSurvey], None]] = None,
) -> Survey:
    """Survey every instruction of ``device``'s architecture (see the module docstring).

    ``progress(n, total, name)`` is called before instruction n runs, ``done(n,
    total, result)`` after.  ``out_dir`` receives one JSONL per instruction; ``suites`` is the folder of
    shipped suites (default :func:`suites_dir`); ``pool_rows`` random rows are
    drawn to choose a suite for a type that ships none.  Summary files are the
    caller's (:meth:`Survey.markdown`, :meth:`Survey.as_dict`).  Ctrl-C stops
    between batches: the instructions done so far are returned with
    ``interrupted`` set.
    """
    if device.arch is None:
        raise InputError(f"device {device.name} has no architecture to survey (give sim:ARCH, cuda or hip)")
    if n_random < 0:
        raise InputError(f"the number of random vectors must be >= 0, got {n_random}")
    targets = survey_targets(device.arch, instrs)
    if device.op:
        targets = [t for t in targets if t.entry.op == device.op or t.shape.name == device.op]
    folder = suites if suites is not None else suites_dir()
    questions = _open_questions(folder)
    result = Survey(device_info(device), [])
    t0 = time.perf_counter()
    try:
        for n, t in enumerate(targets):
            if progress is not None:
                progress(n, len(targets), t.name)
            one = _survey_one(device, t, out_dir, n_random, seed, folder, questions, batch, pool_rows)
            result.instructions.append(one)
            if done is not None:
                done(n, len(targets), one)
    except KeyboardInterrupt:
        result.interrupted = True
    result.seconds = time.perf_counter() - t0
    return result


def device_info(device: Device) -> dict[str, Any]:
    """What is known of the device: its own ``info()`` when it has one, else its name, description and arch."""
    info: dict[str, Any] = {"device": device.name, "description": device.description, "arch": device.arch}
    extra = getattr(device, "info", None)
    if callable(extra):
        try:
            info.update(extra())
        except Exception as e:  # the report must not fail on a property the driver will not give
            info["info_error"] = f"{type(e).__name__}: {e}"[:200]
    if device.arch in ARCHS:
        info.setdefault("family", ARCHS[device.arch].family)
    return info
