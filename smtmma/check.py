"""Check test-vector files against the catalogue's models.

:func:`check_file` simulates every line of a JSON Lines file (see
:mod:`smtmma.vectors`) and compares the result with the line's ``d``, bit for
bit.  Lines are simulated in batches: consecutive lines are buffered, grouped
by (arch, instr, op, K, scaled) and each group is one call of
:func:`~smtmma.simulate.simulate_dot`, so files of 10^5+ lines take seconds.
Memory stays bounded: the buffer is flushed every :data:`FLUSH_LINES` lines.

Every non-blank line ends in exactly one of four counts: ``matched``,
``mismatched``, ``errors`` (the line could not be parsed or simulated; the
file goes on) and ``no_expectation`` (no ``d``: nothing to compare).  A file
that cannot be read (missing, a directory, compressed, a read error) or
holds no test vector at all records a file-level ``error`` in its report;
the other files are checked all the same.  The path ``-`` is standard input.

Lines with ``expect`` (``{MODEL: D}``, as test suites write them) are
checked too: every named model (``ARCH``, ``ARCH/OP`` or a model spec) is
simulated and must give its expected D (``expect_disagree`` counts those
that do not; an unknown name makes the line an error), and where a line
also has the device's ``d``, the report names the candidates whose
expectations agree with ``d`` on every such line (``consistent``): the
models a recorded run of a suite identifies.

:func:`check_against` asks the other question of a log: which models explain
it?  Every candidate of a space (the catalogue, a list, a parameter grid; see
:mod:`smtmma.discriminators.candidates`) runs on every line with a ``d``,
whatever the line's ``arch`` and ``op`` say, and each gets a count of the
lines it explains (:class:`AgainstReport`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, Union

import numpy as np

from .catalogue import ARCHS, entries, model_of, resolve_instr
from .discriminators.candidates import Space, model_by_name
from .errors import InputError, InputTypeError, SmtmmaError
from .formats import Format, format_hex, to_float
from .models import Model
from .simulate import simulate_dot
from .vectors import LineError, TestVector, iter_vectors, parse_record, vector_formats

__all__ = [
    "Mismatch",
    "FileReport",
    "CheckReport",
    "check_file",
    "check_files",
    "LogFile",
    "ModelCount",
    "InstrCounts",
    "AgainstReport",
    "check_against",
    "iter_vectors_any_arch",
    "simulate_vectors",
    "simulate_with",
    "json_value",
    "FLUSH_LINES",
    "MAX_RECORDS",
    "NO_VECTORS",
]

#: Lines buffered before a batch of simulations (small enough that the garbage collector stays cheap).
FLUSH_LINES = 1 << 13

#: Default number of mismatch (and error) records kept per file.
MAX_RECORDS = 10

#: The file-level error of a file without a single test vector: nothing was checked, which is not a pass.
NO_VECTORS = "no test vectors (empty file or only blank lines)"


def json_value(fmt: Format, bits: int) -> Union[float, str]:
    """A pattern's value for JSON reports: a float when finite, else ``"nan"``, ``"inf"``, ``"-inf"``."""
    v = to_float(fmt, bits)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


@dataclass(frozen=True)
class Mismatch:
    """A line whose simulated D differs from its recorded ``d`` (patterns as ints)."""

    vector: TestVector
    model: str  # Model.describe() of the row simulated
    expected: int
    got: int

    @property
    def line(self) -> int:
        """Line number in the file (from 1)."""
        return self.vector.line

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record: line, names, inputs and both outputs in hex, values of both."""
        v = self.vector
        fm = vector_formats(v.entry)
        rec: dict[str, Any] = {
            "line": v.line,
            "arch": v.arch,
            "instr": v.instr,
            "op": v.op,
            "model": self.model,
            "a": [format_hex(fm.a, x) for x in v.a],
            "b": [format_hex(fm.b, x) for x in v.b],
            "c": format_hex(fm.c, v.c),
        }
        if v.scale_a is not None and v.scale_b is not None and fm.scale is not None:
            rec["scale_a"] = [format_hex(fm.scale, x) for x in v.scale_a]
            rec["scale_b"] = [format_hex(fm.scale, x) for x in v.scale_b]
        rec["expected"] = format_hex(fm.d, self.expected)
        rec["got"] = format_hex(fm.d, self.got)
        rec["expected_value"] = json_value(fm.d, self.expected)
        rec["got_value"] = json_value(fm.d, self.got)
        return rec


@dataclass
class FileReport:
    """Counts and first records of one checked file."""

    file: str
    lines: int = 0
    matched: int = 0
    mismatched: int = 0
    errors: int = 0
    no_expectation: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    error_list: list[LineError] = field(default_factory=list)
    expect_lines: int = 0
    expect_checked: int = 0
    expect_disagree: int = 0
    expect_wrong: list[dict[str, Any]] = field(default_factory=list)
    consistent: Optional[list[str]] = None  # candidates agreeing with d on every line with d and expect
    provisional: list[str] = field(default_factory=list)  # provisional architectures of its lines (no recorded output)
    error: Optional[str] = None  # the file could not be read (or has no test vector); counts are the lines before

    @property
    def ok(self) -> bool:
        """Read in full, no mismatch, no bad line and no expectation the simulator contradicts."""
        return self.error is None and self.mismatched == 0 and self.errors == 0 and self.expect_disagree == 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (``mismatches``: the first records; ``error_messages``: the first bad lines)."""
        return {
            "file": self.file,
            "lines": self.lines,
            "matched": self.matched,
            "mismatched": self.mismatched,
            "errors": self.errors,
            "no_expectation": self.no_expectation,
            "mismatches": [m.to_dict() for m in self.mismatches],
            "error_messages": [{"line": e.line, "message": e.message} for e in self.error_list],
            "expect_lines": self.expect_lines,
            "expect_checked": self.expect_checked,
            "expect_disagree": self.expect_disagree,
            "expect_wrong": self.expect_wrong,
            "consistent": self.consistent,
            "provisional": self.provisional,
            "error": self.error,
        }


@dataclass
class CheckReport:
    """Reports of several files and their totals."""

    files: list[FileReport]

    def _sum(self, name: str) -> int:
        return sum(getattr(f, name) for f in self.files)

    @property
    def lines(self) -> int:
        """Total non-blank lines."""
        return self._sum("lines")

    @property
    def matched(self) -> int:
        """Total matched lines."""
        return self._sum("matched")

    @property
    def mismatched(self) -> int:
        """Total mismatched lines."""
        return self._sum("mismatched")

    @property
    def errors(self) -> int:
        """Total bad lines."""
        return self._sum("errors")

    @property
    def no_expectation(self) -> int:
        """Total lines without ``d``."""
        return self._sum("no_expectation")

    @property
    def expect_disagree(self) -> int:
        """Total expectations the simulator contradicts."""
        return self._sum("expect_disagree")

    @property
    def file_errors(self) -> int:
        """Files that could not be read (or hold no test vector)."""
        return sum(f.error is not None for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        """``{"files": [...], "lines", "matched", "mismatched", "errors", "no_expectation", "expect_disagree", "file_errors"}``."""
        return {
            "files": [f.to_dict() for f in self.files],
            "lines": self.lines,
            "matched": self.matched,
            "mismatched": self.mismatched,
            "errors": self.errors,
            "no_expectation": self.no_expectation,
            "expect_disagree": self.expect_disagree,
            "file_errors": self.file_errors,
        }


def _op_name(v: TestVector) -> str:
    """The op as the line wrote it (a full instruction name can narrow L), else the row's family."""
    raw = v.raw.get("op")
    return raw if isinstance(raw, str) and raw else v.op


def _group_key(v: TestVector) -> tuple[str, str, str, int, bool]:
    return (v.arch, v.instr, _op_name(v), v.K, v.scale_a is not None)


def simulate_with(model: Model, vectors: Sequence[TestVector], *, backend: str = "auto") -> np.ndarray:
    """D patterns of ``vectors`` (all of one K) under ``model``: their a, b, c, and their scales when it reads scales
    (``backend`` as :func:`~smtmma.simulate.simulate_dot` takes it)."""
    sa = sb = None
    if model.scale_fmt is not None:
        if any(v.scale_a is None or v.scale_b is None for v in vectors):
            raise InputError(f"{model.describe()} needs scale_a and scale_b on every vector")
        sa = np.array([v.scale_a for v in vectors], dtype=np.uint64)
        sb = np.array([v.scale_b for v in vectors], dtype=np.uint64)
    return simulate_dot(model, None, np.array([v.a for v in vectors], dtype=np.uint64),
                        np.array([v.b for v in vectors], dtype=np.uint64),
                        np.array([v.c for v in vectors], dtype=np.uint64), scale_a=sa, scale_b=sb, backend=backend)


def _simulate_group(vs: Sequence[TestVector]) -> np.ndarray:
    v0 = vs[0]
    return simulate_with(model_of(v0.arch, v0.instr, _op_name(v0)), vs)


def simulate_vectors(vectors: Sequence[TestVector]) -> list[Union[int, LineError]]:
    """D pattern of each vector (in order), simulated in batches; a :class:`LineError` where one fails.

    Vectors are grouped by (arch, instr, op, K, scaled) and each group is one
    :func:`~smtmma.simulate.simulate_dot` call; if a group call fails, its
    vectors are simulated one by one so the error lands on its own line.
    """
    out: list[Union[int, LineError]] = [0] * len(vectors)
    groups: dict[tuple[str, str, str, int, bool], list[int]] = {}
    for i, v in enumerate(vectors):
        groups.setdefault(_group_key(v), []).append(i)
    for idx in groups.values():
        group = [vectors[i] for i in idx]
        try:
            d = _simulate_group(group)
            for i, x in zip(idx, d.tolist()):
                out[i] = int(x)
        except SmtmmaError:
            for i, v in zip(idx, group):
                try:
                    out[i] = int(_simulate_group([v])[0])
                except SmtmmaError as e:
                    out[i] = LineError(v.line, f"line {v.line}: {e}")
    return out


def _flush(report: FileReport, pending: list[TestVector], max_mismatches: int, max_errors: int) -> None:
    results = simulate_vectors(pending)
    models: dict[tuple[str, str, str], str] = {}
    for v, got in zip(pending, results):
        if isinstance(got, LineError):
            report.errors += 1
            report.error_list.append(got)
            continue
        if got == v.d:
            report.matched += 1
            continue
        report.mismatched += 1
        if len(report.mismatches) < max_mismatches:
            key = (v.arch, v.instr, v.op)
            if key not in models:
                models[key] = v.entry.model.describe()
            assert v.d is not None
            report.mismatches.append(Mismatch(v, models[key], v.d, got))
    # Errors found while parsing and while simulating interleave: keep the first ones by line.
    report.error_list.sort(key=lambda e: e.line)
    del report.error_list[max_errors:]
    pending.clear()


class _Expectations:
    """Checks the ``expect`` field of lines: models resolved once, simulated in batches."""

    def __init__(self, report: FileReport, max_records: int) -> None:
        self.report = report
        self.max_records = max_records
        self.pending: list[tuple[TestVector, dict[str, Model]]] = []
        self._models: dict[tuple[str, str, str, str], Model] = {}
        self._consistent: Optional[dict[str, None]] = None

    def resolve(self, v: TestVector) -> dict[str, Model]:
        """The model of each name in ``v.expect``; raises SmtmmaError naming the line for an unknown one."""
        out = {}
        for name in v.expect:
            key = (name, v.arch, v.instr, _op_name(v))
            if key not in self._models:
                try:
                    self._models[key] = model_by_name(name, v.instr, v.arch, _op_name(v))
                except SmtmmaError as e:
                    raise SmtmmaError(f"line {v.line}: expect[{json.dumps(name)}]: {e}") from None
            out[name] = self._models[key]
        return out

    def add(self, v: TestVector, models: dict[str, Model]) -> None:
        """Queue ``v`` for checking; with ``d``, narrow the consistent candidates."""
        self.report.expect_lines += 1
        self.pending.append((v, models))
        if v.d is not None:
            agree = [n for n, x in v.expect.items() if x == v.d]
            if self._consistent is None:
                self._consistent = dict.fromkeys(agree)
            else:
                self._consistent = {n: None for n in self._consistent if n in agree}
            self.report.consistent = list(self._consistent)

    def flush(self) -> None:
        """Simulate every queued expectation, grouped by model and K; count those that disagree."""
        groups: dict[tuple[Model, int], list[tuple[TestVector, str]]] = {}
        for v, models in self.pending:
            for name, m in models.items():
                groups.setdefault((m, v.K), []).append((v, name))
        for (m, _), items in groups.items():
            got = simulate_with(m, [v for v, _ in items])
            for (v, name), x in zip(items, got.tolist()):
                self.report.expect_checked += 1
                if int(x) != v.expect[name]:
                    self.report.expect_disagree += 1
                    if len(self.report.expect_wrong) < self.max_records:
                        fm = vector_formats(v.entry)
                        self.report.expect_wrong.append({"line": v.line, "model": name, "expected": format_hex(fm.d, v.expect[name]),
                                                         "simulated": format_hex(fm.d, int(x))})
        self.pending.clear()


def check_file(
    path: Union[str, Path],
    *,
    max_mismatches: int = MAX_RECORDS,
    max_errors: int = MAX_RECORDS,
    progress: Optional[Callable[[int], None]] = None,
) -> FileReport:
    """Simulate every line of ``path`` (``-``: standard input) and compare with its ``d``; see :class:`FileReport`.

    Never raises for the file's content: a file that cannot be read, or that
    holds no test vector, sets the report's ``error`` (lines read before a
    read error are counted); bad lines are counted in ``errors`` (first
    ``max_errors`` kept).  ``progress``, if given, is called with the number
    of lines done after each batch.
    """
    name = "<stdin>" if str(path) == "-" else str(path)
    report = FileReport(name)
    stopped = _check_lines(report, iter_vectors(path), max_mismatches, max_errors, progress)
    if stopped is not None:
        report.error = _strip_prefix(str(stopped), f"{path}: ")
    elif report.lines == 0:
        report.error = NO_VECTORS
    return report


def _strip_prefix(msg: str, prefix: str) -> str:
    return msg[len(prefix):] if msg.startswith(prefix) else msg


def _check_lines(
    report: FileReport,
    items: Iterable[Union[TestVector, LineError]],
    max_mismatches: int,
    max_errors: int,
    progress: Optional[Callable[[int], None]],
) -> Optional[InputError]:
    """Count and simulate ``items`` into ``report``; the error that stopped the reading, if any (what was read counts)."""
    pending: list[TestVector] = []
    expectations = _Expectations(report, max_mismatches)
    stopped = None
    try:
        _consume(report, items, pending, expectations, max_mismatches, max_errors, progress)
    except InputError as e:  # the file could not be opened, or reading it failed part-way
        stopped = e
    _flush(report, pending, max_mismatches, max_errors)
    expectations.flush()
    if progress is not None:
        progress(report.lines)
    return stopped


def _consume(
    report: FileReport,
    items: Iterable[Union[TestVector, LineError]],
    pending: list[TestVector],
    expectations: "_Expectations",
    max_mismatches: int,
    max_errors: int,
    progress: Optional[Callable[[int], None]],
) -> None:
    for item in items:
        report.lines += 1
        if isinstance(item, TestVector) and ARCHS[item.arch].provisional and item.arch not in report.provisional:
            report.provisional.append(item.arch)
        if isinstance(item, TestVector) and item.expect:
            try:
                expectations.add(item, expectations.resolve(item))
            except SmtmmaError as e:
                item = LineError(item.line, str(e))
            if len(expectations.pending) >= FLUSH_LINES:
                expectations.flush()
        if isinstance(item, LineError):
            report.errors += 1
            if len(report.error_list) < max_errors:
                report.error_list.append(item)
        elif item.d is None:
            report.no_expectation += 1
        else:
            pending.append(item)
            if len(pending) >= FLUSH_LINES:
                _flush(report, pending, max_mismatches, max_errors)
                if progress is not None:
                    progress(report.lines)


def check_files(
    paths: Iterable[Union[str, Path]],
    *,
    max_mismatches: int = MAX_RECORDS,
    max_errors: int = MAX_RECORDS,
    progress: Optional[Callable[[str, int], None]] = None,
) -> CheckReport:
    """:func:`check_file` for each path (in order); a file that cannot be read never stops the others."""
    if isinstance(paths, (str, Path)):  # one path, not its characters
        raise InputTypeError(f"paths is a list of files; for one file use check_file({str(paths)!r}) or [{str(paths)!r}]")
    reports = []
    for p in paths:
        cb = (lambda n, _p=str(p): progress(_p, n)) if progress is not None else None
        reports.append(check_file(p, max_mismatches=max_mismatches, max_errors=max_errors, progress=cb))
    return CheckReport(reports)


# ---------------------------------------------------------------- which models explain a log (check --against)


def _retargeted(raw: bytes, n: int, first: InputError) -> TestVector:
    """The line read as if its arch were the instruction's first catalogue architecture and it had no op.

    Only for a line whose ``arch`` or ``op`` (or an arch without its
    ``instr``) is what failed; raises ``first`` otherwise.
    """
    msg = str(first)
    if not (msg.startswith((f"line {n}: arch: ", f"line {n}: op: ")) or
            msg.startswith(f"line {n}: instr: ") and "has no instruction" in msg):
        raise first
    try:
        obj = json.loads(raw.decode("utf-8"))
        base = entries(instr=resolve_instr(obj["instr"]))[0].arch
        return parse_record({**{k: v for k, v in obj.items() if k != "op"}, "arch": base}, n)
    except (ValueError, KeyError, TypeError, IndexError, SmtmmaError):
        raise first from None


def iter_vectors_any_arch(path: Union[str, Path]) -> Iterator[Union[TestVector, LineError]]:
    """Per non-blank line of ``path``: its vector, read whatever its ``arch`` says, or a :class:`LineError`.

    As :func:`~smtmma.vectors.iter_vectors`, except that a line whose
    ``arch`` is unknown, lacks the line's ``instr``, or whose ``op`` does
    not fit, is read in the formats of its ``instr`` alone (the vector's
    ``arch`` is then the instruction's first catalogue architecture; the
    line's own stays in ``raw``): the log of a GPU no catalogue row names
    yet can still be matched against candidate models.  Raises InputError
    when the file cannot be opened or read (missing, a directory, gzip, UTF-16).
    """
    return iter_vectors(path, reread=_retargeted)


@dataclass
class LogFile:
    """One file of a ``check --against`` run: its lines, those with a d (compared), without d, and the bad ones."""

    file: str
    lines: int = 0
    compared: int = 0
    no_expectation: int = 0
    errors: int = 0
    error_list: list[LineError] = field(default_factory=list)
    error: Optional[str] = None  # the file could not be read (or has no test vector)

    def to_dict(self) -> dict[str, Any]:
        """``{"file", "lines", "compared", "no_expectation", "errors", "error_messages": [{"line", "message"}], "error"}``."""
        return {"file": self.file, "lines": self.lines, "compared": self.compared, "no_expectation": self.no_expectation,
                "errors": self.errors, "error_messages": [{"line": e.line, "message": e.message} for e in self.error_list],
                "error": self.error}


@dataclass(frozen=True)
class ModelCount:
    """How many of an instruction type's recorded lines one candidate explains (its D equals the line's ``d``)."""

    model: str  # the candidate's name (ARCH, ARCH/OP or a model spec)
    spec: str  # Model.describe() of the candidate
    explained: int
    lines: int
    first_missed: Optional[str] = None  # "FILE:LINE" of the first line it does not explain

    @property
    def missed(self) -> int:
        """Lines whose recorded d the candidate does not give."""
        return self.lines - self.explained

    def to_dict(self) -> dict[str, Any]:
        """``{"model", "spec", "explained", "lines", "first_missed"}``."""
        return {"model": self.model, "spec": self.spec, "explained": self.explained, "lines": self.lines,
                "first_missed": self.first_missed}


@dataclass
class InstrCounts:
    """The candidates of one instruction type and how many lines each explains, best first (None: no candidate)."""

    instr: str
    lines: int
    counts: Optional[list[ModelCount]]

    @property
    def consistent(self) -> list[str]:
        """Candidates that explain every line of this instruction type."""
        return [c.model for c in self.counts or [] if c.explained == c.lines]


@dataclass
class AgainstReport:
    """``check --against``: per file, the lines read; per instruction type, every candidate's count."""

    files: list[LogFile]
    instrs: list[InstrCounts]

    @property
    def compared(self) -> int:
        """Lines with a recorded d (those the candidates are run on)."""
        return sum(i.lines for i in self.instrs)

    @property
    def consistent(self) -> dict[str, list[str]]:
        """Instruction type -> the candidates that explain all its lines."""
        return {i.instr: i.consistent for i in self.instrs}

    @property
    def explained(self) -> bool:
        """Every instruction type of the log has a candidate that explains all its lines."""
        return bool(self.instrs) and all(i.consistent for i in self.instrs)

    def to_dict(self) -> dict[str, Any]:
        """``{"files": [...], "lines", "compared", "errors", "no_expectation", "file_errors", "against": {INSTR: [...]},
        "consistent": {INSTR: [MODEL, ...]}}`` (an instruction type with no candidate maps to null in ``against``)."""
        return {
            "files": [f.to_dict() for f in self.files],
            "lines": sum(f.lines for f in self.files),
            "compared": self.compared,
            "errors": sum(f.errors for f in self.files),
            "no_expectation": sum(f.no_expectation for f in self.files),
            "file_errors": sum(f.error is not None for f in self.files),
            "against": {i.instr: None if i.counts is None else [c.to_dict() for c in i.counts] for i in self.instrs},
            "consistent": self.consistent,
        }


def _count_group(vs: Sequence[tuple[str, TestVector]], space: Space, tally: dict[str, list[Any]]) -> None:
    """Run every distinct model of ``space`` on ``vs`` (one K, all with d) at once; add to ``tally[name] = [explained, first]``."""
    v0 = vs[0][1]
    A = np.array([v.a for _, v in vs], dtype=np.uint64)
    B = np.array([v.b for _, v in vs], dtype=np.uint64)
    C = np.array([v.c for _, v in vs], dtype=np.uint64)
    D = np.array([v.d for _, v in vs], dtype=np.uint64)
    SA = np.array([v.scale_a for _, v in vs], dtype=np.uint64) if v0.scale_a is not None else None
    SB = np.array([v.scale_b for _, v in vs], dtype=np.uint64) if v0.scale_b is not None else None
    done: dict[Model, Optional[np.ndarray]] = {}
    for cand in space.candidates:
        m = cand.model
        if m not in done:
            try:
                scaled = m.scale_fmt is not None
                got = simulate_dot(m, None, A, B, C, scale_a=SA if scaled else None, scale_b=SB if scaled else None)
                done[m] = got.astype(np.uint64) == D
            except SmtmmaError:  # the model cannot run these lines (e.g. scales it needs): it explains none of them
                done[m] = None
        ok = done[m]
        t = tally.setdefault(cand.name, [0, None])
        hits = np.zeros(len(vs), dtype=bool) if ok is None else ok
        t[0] += int(hits.sum())
        if not hits.all():
            where, v = vs[int(np.flatnonzero(~hits)[0])]
            if t[1] is None or (where, v.line) < t[1]:
                t[1] = (where, v.line)


def check_against(
    paths: Iterable[Union[str, Path]],
    space_for: Callable[[str], Optional[Space]],
    *,
    max_errors: int = MAX_RECORDS,
) -> AgainstReport:
    """Which candidate models explain a log: every line with a ``d``, whatever its ``arch`` and ``op`` say.

    Lines are grouped by instruction type; ``space_for(instr)`` gives the
    candidates of each (None: none); every candidate is simulated on all the
    lines of one instruction type and K at once.  Each file's report counts
    its lines (:class:`LogFile`: those with d, compared; those without;
    the bad ones (``error_list``: the first ``max_errors``).  Never raises
    for a file's content: a file that cannot be read sets its ``error``.
    """
    if isinstance(paths, (str, Path)):
        raise InputTypeError(f"paths is a list of files; for one file use [{str(paths)!r}]")
    files: list[LogFile] = []
    by_instr: dict[str, dict[tuple[int, bool], list[tuple[str, TestVector]]]] = {}
    for p in paths:
        name = "<stdin>" if str(p) == "-" else str(p)
        rep = LogFile(name)
        files.append(rep)
        try:
            for item in iter_vectors_any_arch(p):
                rep.lines += 1
                if isinstance(item, LineError):
                    rep.errors += 1
                    if len(rep.error_list) < max_errors:
                        rep.error_list.append(item)
                elif item.d is None:
                    rep.no_expectation += 1
                else:
                    rep.compared += 1
                    key = (item.K, item.scale_a is not None)
                    by_instr.setdefault(item.instr, {}).setdefault(key, []).append((name, item))
        except InputError as e:
            rep.error = _strip_prefix(str(e), f"{p}: ")
        if rep.error is None and rep.lines == 0:
            rep.error = NO_VECTORS
    instrs: list[InstrCounts] = []
    for instr, groups in by_instr.items():
        total = sum(len(g) for g in groups.values())
        space = space_for(instr)
        if space is None or not space.candidates:
            instrs.append(InstrCounts(instr, total, None))
            continue
        tally: dict[str, list[Any]] = {}
        for vs in groups.values():
            _count_group(vs, space, tally)
        counts = [ModelCount(c.name, c.model.describe(), tally[c.name][0], total,
                             None if tally[c.name][1] is None else f"{tally[c.name][1][0]}:{tally[c.name][1][1]}")
                  for c in space.candidates]
        counts.sort(key=lambda c: -c.explained)  # stable: the space's order among equals
        instrs.append(InstrCounts(instr, total, counts))
    return AgainstReport(files, instrs)
