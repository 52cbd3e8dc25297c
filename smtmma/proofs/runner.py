"""Running claims: records for ``smtmma prove --json``, certificates saved to a folder, and re-checks of saved ones."""

from __future__ import annotations

import gzip
import os
import re
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from ..errors import InputError, SmtmmaError
from ..queries.backends import die_with_parent, signals_deferred
from .check_certificate import check_text
from .certificate import CHECK_MEMORY, MAX_TEXT_BYTES, CertificateError, CheckAnswer, byte_size, parse_certificate, recheck
from .claim import CLAIMS, Claim, Context, Outcome, get_claim

__all__ = ["prove", "record", "select", "save_certificate", "certificate_files", "read_text", "CertificateCheck",
           "check_certificate", "check_certificates", "COMPRESS_OVER", "existing_certificates"]


def select(names: Sequence[str] = (), *, all_claims: bool = False, group: Optional[str] = None) -> list[Claim]:
    """The claims named (each checked, close names suggested), or all of them (optionally one ``group``)."""
    from . import load_claims

    load_claims()
    if all_claims or not names:
        picked = list(CLAIMS.values())
    else:
        picked = [get_claim(n) for n in dict.fromkeys(names)]
    if group:
        groups = sorted({c.group for c in CLAIMS.values() if c.group})
        if group not in groups:
            raise InputError(f"unknown claim group {group!r}; groups: {', '.join(groups)}")
        picked = [c for c in picked if c.group == group]
    return picked


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) + ".smt2"


def existing_certificates(claims: Iterable[Claim], folder: str) -> list[str]:
    """The certificate files (``<claim>.smt2`` or ``.smt2.gz``) of ``claims`` already in ``folder``, which
    :func:`save_certificate` would replace."""
    found = []
    for c in claims:
        path = os.path.join(folder, _file_name(c.name))
        found += [p for p in (path, path + ".gz") if os.path.lexists(p)]
    return found


def record(c: Claim, out: Outcome, certificate: Optional[str] = None) -> dict[str, Any]:
    """The JSON record of one claim's outcome (the keys of ``smtmma prove --json``)."""
    rec: dict[str, Any] = {
        "name": c.name,
        "source": c.source,
        "models": list(c.models),
        "summary": c.summary,
        "group": c.group,
        "expected": c.expected,
        "verdict": out.verdict,
        "agrees": out.agrees,
        "solver": out.solver,
        "seconds": round(out.seconds, 3),
        "witness": out.witness,
        "detail": out.detail,
        "certificate": certificate,
        "covers": out.covers or list(c.models),
    }
    if out.certificate is not None:
        rec["checks"] = out.certificate.checks
    if out.extra:
        rec["extra"] = out.extra
    return rec


#: Certificates larger than this (bytes of text) are written gzipped by ``save(..., compress=True)``.
COMPRESS_OVER = 200_000


def save_certificate(out: Outcome, c: Claim, folder: str, *, compress: bool = False,
                     compress_over: Optional[int] = None) -> Optional[str]:
    """Write the outcome's certificate to ``folder/<claim>.smt2`` (``.smt2.gz`` when ``compress`` and over
    ``compress_over`` bytes, default :data:`COMPRESS_OVER`); its path, or None when it has none."""
    if out.certificate is None:
        return None
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, _file_name(c.name))
    cert = out.certificate
    cert.meta.setdefault("claim", c.name)
    cert.meta.setdefault("source", c.source)
    cert.meta.setdefault("models", list(c.models))
    cert.meta["expected"] = c.expected
    cert.meta["verdict"] = out.verdict
    rows = _rows_of([*c.models, *cert.meta.get("models", [])])
    if rows:
        cert.meta["rows"] = rows
    text = cert.text()
    for stale in (path, path + ".gz"):  # one file per claim, whichever form it takes now
        if os.path.exists(stale):
            os.remove(stale)
    if compress and len(text) > (COMPRESS_OVER if compress_over is None else compress_over):
        path += ".gz"
        with gzip.open(path, "wt", encoding="utf-8") as gz:
            gz.write(text)
        return path
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _checked(c: Claim, ctx: Context) -> Outcome:
    """The claim's outcome; a bug raised while checking it is an outcome of its own (verdict "error"), so the
    other claims of a batch still run.  User errors (:class:`SmtmmaError`: a missing solver) still propagate."""
    import time

    t0 = time.perf_counter()
    try:
        return c.check(ctx)
    except SmtmmaError:
        raise
    except Exception as e:  # noqa: BLE001 -- reported in the record and by the exit status, never hidden
        return Outcome("error", None, detail=f"internal error (a bug in smtmma): {type(e).__name__}: {e}",
                       seconds=time.perf_counter() - t0)


#: The claims of the running :func:`prove` call, by name: a forked worker finds claims built for the call (the
#: catalogue's cells) here, registered ones also in the registry.
_RUNNING: dict[str, Claim] = {}


def _check_by_name(name: str, ctx: Context) -> Outcome:
    """Run one claim in a worker process (claims are found by name there: the registry is per process)."""
    return _checked(_RUNNING.get(name) or get_claim(name), ctx)


def prove(claims: Iterable[Claim], ctx: Context, *, save: Optional[str] = None,
          progress: Optional[Callable[[Claim, Optional[dict[str, Any]]], None]] = None, jobs: int = 1,
          compress: bool = False, compress_over: Optional[int] = None) -> list[dict[str, Any]]:
    """Run ``claims``; their records (see :func:`record`), in the order given.

    ``save``: a folder for the certificates; ``progress(claim, None)`` is
    called when a claim starts and ``progress(claim, record)`` when it ends.
    ``jobs``: claims run at once, each in a process of its own (their
    ``seconds`` are then wall times on a shared machine).  ``compress``:
    certificates over ``compress_over`` bytes (default :data:`COMPRESS_OVER`) are saved gzipped.
    """
    todo = list(claims)
    records: dict[str, dict[str, Any]] = {}

    def finish(c: Claim, out: Outcome) -> None:
        path = save_certificate(out, c, save, compress=compress, compress_over=compress_over) if save else None
        records[c.name] = record(c, out, path)
        if progress:
            progress(c, records[c.name])

    if jobs <= 1 or len(todo) <= 1:
        for c in todo:
            if progress:
                progress(c, None)
            finish(c, _checked(c, ctx))
        return [records[c.name] for c in todo]
    import concurrent.futures as cf
    import multiprocessing as mp

    method = "fork" if "fork" in mp.get_all_start_methods() else None
    unregistered = [c.name for c in todo if CLAIMS.get(c.name) is not c]
    if method is None and unregistered:
        raise InputError(f"--jobs needs the 'fork' start method for claims built per run ({unregistered[0]}); use --jobs 1")
    _RUNNING.clear()
    _RUNNING.update({c.name: c for c in todo})
    before = {p.pid for p in mp.active_children()}
    pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context(method), initializer=_worker_setup,
                                  initargs=(os.getpid(),))
    try:
        futures = {}
        with signals_deferred():  # the first submit forks the workers
            for c in todo:
                futures[pool.submit(_check_by_name, c.name, ctx)] = c
        if progress:
            for c in todo:
                progress(c, None)
        for fut in cf.as_completed(futures):
            finish(futures[fut], fut.result())
    except BaseException:
        # Ctrl-C, SIGTERM, a user error: end the running claims now instead of waiting for them (minutes).
        # The workers' solver processes die with them (see die_with_parent).
        pool.shutdown(wait=False, cancel_futures=True)
        for p in mp.active_children():
            if p.pid not in before:
                p.kill()
        raise
    pool.shutdown()
    return [records[c.name] for c in todo]


def _worker_setup(parent: int) -> None:
    """In a ``prove --jobs`` worker: Ctrl-C is the parent's to handle (it kills the worker); die with the parent."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)


# -- re-checking saved certificates ---------------------------------------------------------------------


@dataclass
class CertificateCheck:
    """One certificate file re-run: its claim, the answers of its checks, whether they all agree."""

    path: str
    claim: str
    verdict: str  # the verdict the file certifies
    answers: list[CheckAnswer]
    error: str = ""  # a malformed file or a model that no longer exists

    @property
    def status(self) -> str:
        """"ok" (every check gave its expected answer), "mismatch", "unknown" (a solver gave up) or "error"."""
        if self.error:
            return "error"
        if any(a.got == "unknown" for a in self.answers):
            return "unknown"
        return "ok" if self.answers and all(a.agrees for a in self.answers) else "mismatch"

    @property
    def seconds(self) -> float:
        """Solver seconds, all checks together."""
        return sum(a.seconds for a in self.answers)


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_text(path: str, *, limit: int = MAX_TEXT_BYTES) -> str:
    """A certificate file's text (``.gz`` files decompressed), at most ``limit`` bytes of it.

    Only a regular file is opened (a FIFO, device or socket, also behind a
    symbolic link, is refused without blocking); a file, or a ``.gz`` file's
    decompressed text, over ``limit`` bytes is refused as soon as the limit
    is passed (a gzip bomb is never expanded in full).  Raises
    :class:`CertificateError` (one line, naming ``path``); UTF-8 text.
    """
    try:
        st = os.stat(path)
    except OSError as e:
        raise CertificateError(f"cannot read {path}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise CertificateError(f"{path}: {_kind(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        raise CertificateError(f"{path}: {byte_size(st.st_size)}, over the limit of {byte_size(limit)}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise CertificateError(f"cannot read {path}: {e.strerror or e}") from None
    with open(fd, "rb") as fh:
        st = os.fstat(fd)  # what was opened, in case the path changed since os.stat
        if not stat.S_ISREG(st.st_mode):
            raise CertificateError(f"{path}: {_kind(st.st_mode)}, not a regular file")
        try:
            if path.endswith(".gz"):
                with gzip.GzipFile(fileobj=fh, mode="rb") as gz:
                    data = gz.read(limit + 1)
                if len(data) > limit:
                    raise CertificateError(f"{path}: expands beyond {byte_size(limit)} (the limit of a certificate's text)")
            else:
                data = fh.read(limit + 1)
                if len(data) > limit:
                    raise CertificateError(f"{path}: over the limit of {byte_size(limit)}")
        except (OSError, EOFError, zlib.error) as e:
            raise CertificateError(f"cannot read {path}: {e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CertificateError(f"{path}: not UTF-8 text (byte {e.start})") from None


def certificate_files(paths: Sequence[str]) -> list[str]:
    """The ``.smt2`` / ``.smt2.gz`` files of ``paths`` (files, or folders searched one level deep), sorted; InputError if none.

    Nothing is opened here: a path named on its own is kept whatever it is
    (:func:`read_text` refuses what is not a regular file), and so is each
    ``*.smt2`` / ``*.smt2.gz`` entry of a folder.
    """
    files: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(str(f) for f in [*Path(p).glob("*.smt2"), *Path(p).glob("*.smt2.gz")])
        elif os.path.lexists(p):
            files.append(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    if not files:
        raise InputError(f"no .smt2 (or .smt2.gz) certificates in {', '.join(paths)}")
    return files


def _rows_of(models: Sequence[str]) -> list[dict[str, str]]:
    """The catalogue rows named by ``"arch instr [op]"`` strings, with each model's description (free text is skipped)."""
    from ..catalogue import lookup
    from ..errors import SmtmmaError

    rows: list[dict[str, str]] = []
    for text in dict.fromkeys(str(m) for m in models):
        parts = text.split()
        if len(parts) not in (2, 3):
            continue
        try:
            e = lookup(parts[0], parts[1], parts[2] if len(parts) == 3 else None)
        except SmtmmaError:
            continue
        rows.append({"arch": e.arch, "instr": e.instr, "op": e.op, "model": e.model.describe()})
    return rows


def _check_models(meta: dict[str, Any], where: str) -> None:
    """Refuse a certificate whose catalogue rows no longer exist or whose models have changed since it was made."""
    from ..catalogue import lookup
    from ..errors import SmtmmaError

    rows = meta.get("rows", [])
    if not isinstance(rows, list):
        raise CertificateError(f"{where}: the meta line's 'rows' must be a list")
    for row in rows:
        try:
            arch, instr, op, desc = row["arch"], row["instr"], row["op"], row["model"]
        except (KeyError, TypeError):
            raise CertificateError(f"{where}: a malformed 'rows' entry in the meta line: {str(row)[:100]}") from None
        if not all(isinstance(x, str) for x in (arch, instr, op, desc)):
            raise CertificateError(f"{where}: a malformed 'rows' entry in the meta line: {str(row)[:100]}")
        try:
            e = lookup(arch, instr, op)
        except SmtmmaError as err:
            raise CertificateError(f"{where}: its model {arch} {instr} {op} no longer exists ({err})") from None
        if e.model.describe() != desc:
            raise CertificateError(f"{where}: the catalogue's {arch} {instr} {op} is now {e.model.describe()}, "
                                   f"the certificate is about {desc}; make it again (smtmma prove --save)")


def _check_meta(meta: dict[str, Any], where: str) -> None:
    """Refuse a certificate whose meta line does not name its claim and verdict (an empty ``{}`` proves nothing)."""
    missing = [k for k in ("claim", "verdict") if not isinstance(meta.get(k), str) or not meta[k].strip()]
    if missing:
        raise CertificateError(f"{where}: its meta line names no {' and no '.join(missing)}"
                               f"{' (it is empty)' if not meta else ''}; not a certificate of a claim")


def check_certificate(path: str, *, solver: Optional[str] = None, timeout: float = 60.0,
                      memory: Optional[int] = CHECK_MEMORY,
                      on_answer: Optional[Callable[[CheckAnswer, int], None]] = None) -> CertificateCheck:
    """Re-run one certificate file; a malformed, oversized or unreadable file is a result with ``error`` set.

    ``on_answer(answer, checks)`` is called after each check (``checks``: how many the file holds).
    """
    try:
        text = read_text(path)
        cert = parse_certificate(text, path)
        _check_meta(cert.meta, path)
        _check_models(cert.meta, path)
    except CertificateError as e:
        return CertificateCheck(path, "?", "?", [], str(e))
    claim, verdict = str(cert.meta["claim"]), str(cert.meta["verdict"])
    ok, why = check_text(text, structure_only=True)  # the independent checker's discipline, before any solver runs
    del text
    if not ok:
        return CertificateCheck(path, claim, verdict, [], f"{path}: {why}")
    total = cert.checks
    try:
        answers = recheck(cert, solver=solver, timeout=timeout, memory=memory,
                          progress=(lambda a: on_answer(a, total)) if on_answer else None)
    except CertificateError as e:
        return CertificateCheck(path, claim, verdict, [], f"{path}: {e}")
    return CertificateCheck(path, claim, verdict, answers)


def check_certificates(paths: Sequence[str], *, solver: Optional[str] = None, timeout: float = 60.0,
                       progress: Optional[Callable[[str, Optional[CertificateCheck]], None]] = None,
                       on_answer: Optional[Callable[[str, CheckAnswer, int], None]] = None) -> list[CertificateCheck]:
    """Re-run every certificate in ``paths`` with ``solver``; one :class:`CertificateCheck` per file.

    ``progress(path, None)`` is called when a file starts and
    ``progress(path, result)`` when it ends (errors included), so a caller
    interrupted part-way (Ctrl-C) still has every finished result;
    ``on_answer(path, answer, checks)`` after each check.  Every file is
    bounded (see :mod:`smtmma.proofs.certificate`): each check gets
    ``timeout`` seconds and :data:`~smtmma.proofs.certificate.CHECK_MEMORY` bytes.
    """
    results = []
    for path in certificate_files(paths):
        if progress:
            progress(path, None)
        res = check_certificate(path, solver=solver, timeout=timeout,
                                on_answer=(lambda a, n, path=path: on_answer(path, a, n)) if on_answer else None)
        results.append(res)
        if progress:
            progress(path, res)
    return results
