"""``smtmma prove``: the literature's claims re-checked by a solver, with certificates; ``--check`` re-runs certificates."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Optional

from ..errors import InputError
from ..proofs.certificate import CHECK_MEMORY, MAX_CHECKS, MAX_COMMANDS, MAX_NESTING, MAX_SCOPES, MAX_TEXT_BYTES, byte_size
from ..proofs.claim import Claim
from .common import (EXIT_INTERNAL, EXIT_MISMATCH, EXIT_OK, EXIT_TIMEOUT, model_spec_arg, path_arg, positive_int_arg,
                     print_error, seconds_arg, seed_arg)
from .progress import Status

_EPILOG = """\
Each claim is a statement of a source document (001 = the SMT paper, 000 =
MMA-Sim, 002 = Fasi et al., 004 = FTTN; see the README's sources) with the
verdict the document reports, decided again by a solver on the catalogue's
models: a proof (unsat) or a witness, replayed through the simulator.  A claim
whose verdict differs from its document is shown as such ("agrees: no"), with
its witness or proof; the detail line says why.

--save DIR writes one self-contained SMT-LIB2 certificate per claim
(DIR/<claim>.smt2): every check-sat the verdict rests on, each preceded by
'; expect: sat|unsat', the models and the solver in the header.  Any solver
can run it (bitwuzla F.smt2, z3 F.smt2, cvc5 F.smt2); 'smtmma prove --check
DIR --solver z3' re-runs them through smtmma's backends.  An existing
certificate (the shipped ones in proofs/, say) is not replaced without --force.

Before any solver runs, --check applies the rule of proofs/check_certificate.py
(an independent checker: Python's standard library and a solver's package):
every check expecting unsat rests only on applications of lemmas proved
earlier in the file (Boolean define-funs proved on fresh constants) and on one
statement, its last assertion; anything else is an error naming the block.

--check is bounded, whatever the files hold: only regular files are read (a
FIFO or device is an error line, never opened), at most %(text)s of text each
(gzip files are refused as soon as they expand past it), %(commands)s commands,
%(checks)s checks, push scopes %(scopes)s deep and terms %(nesting)s deep; each check gets
--timeout seconds and %(memory)s of solver memory.  A file whose meta line does not
name its claim and verdict is an error, never "ok".  A line per certificate is
printed as it finishes (on a terminal, a status line shows the check under way
and the running tally); Ctrl-C prints the results so far, then exits 130.

--catalogue decides the catalogue's property table instead of the claims:
for every distinct model (all the rows that run it), sign symmetry,
monotonicity, carry bits and the Table 9 error bound, each by the model's own
property query at its K (one FDPA: K = L; one FMA), --timeout seconds per cell
in all.  A cell is "holds"/a value (a proof: its certificate), "no"/"fails"
(a witness replayed through the simulator), "n/a: why" (the property does not
apply: no carry-bit parameter) or "unknown: why" (the solver gave up, or no
prover covers the kind: the reason names what is missing).  --arch/--instr keep
the models of matching rows; --model SPEC --arch A --instr I decides a model
you write, on that row's formats.  --save DIR writes DIR/<model>.<property>.smt2
(with --compress every one gzipped); 'smtmma report' shows the shipped table
(proofs/catalogue.json) wherever no claim decides a cell.

--json prints {"claims": [{"name", "source", "models", "expected", "verdict",
"agrees", "solver", "seconds", "witness", "certificate", "detail", ...}]}; with
--check, {"certificates": [{"path", "claim", "verdict", "status", "checks",
"seconds", "error"}]} (and "interrupted": the file under way, after Ctrl-C);
with --catalogue, {"cells": [...], "timeout"}: the same records, "extra" holding
the cell's "column", "cell" text and "model".

exit status: 0 every claim got a verdict (agreeing with its document or not)
/ every certificate re-checked; 1 --check: a certificate's check gave another
answer; 2 bad input (unknown claim, malformed certificate, a certificate --save
would replace without --force); 3 a solver gave up; 70 a claim's check hit a
bug in smtmma (its record says "error"; the other claims still ran); 130
interrupted (--check: after printing the results so far).

examples:
  smtmma prove --list
  smtmma prove volta-carry-bits ampere-carry-bits
  smtmma prove --all --jobs 2 --save my-proofs/ --json > claims.json
  smtmma prove --group table4
  smtmma prove --check proofs/ --solver z3
  smtmma prove --catalogue --arch sm90 --jobs 2
  smtmma prove --catalogue --model t-fdpa:L=8,F=26 --arch sm80 --instr f16f32
  smtmma prove --catalogue --jobs 2 --save proofs/catalogue --compress --json > proofs/catalogue.json"""
_EPILOG %= {
    "text": byte_size(MAX_TEXT_BYTES), "commands": f"{MAX_COMMANDS:,}", "checks": f"{MAX_CHECKS:,}", "scopes": f"{MAX_SCOPES:,}",
    "nesting": f"{MAX_NESTING:,}", "memory": byte_size(CHECK_MEMORY)}


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``prove`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    p = sub.add_parser("prove", help="re-check the literature's claims (proofs, witnesses, certificates)",
                       description="Decide the claims of the source documents with a solver on the catalogue's models, "
                       "and save or re-check their SMT-LIB2 certificates.", epilog=_EPILOG, formatter_class=fmt)
    p.add_argument("claims", nargs="*", metavar="CLAIM", help="claim names (see --list)")
    p.add_argument("--all", action="store_true", help="every claim")
    p.add_argument("--list", action="store_true", help="list the claims (name, source, models, expected verdict)")
    p.add_argument("--group", help="only the claims of one group (table4, carry-bits, symmetry, ...)")
    p.add_argument("--solver", help="bitwuzla, z3, cvc5 or portfolio (default: the first installed)")
    p.add_argument("--timeout", type=seconds_arg, default=120.0, metavar="S", help="seconds per solver call (default 120)")
    p.add_argument("--seed", type=seed_arg, default=0, help="solver seed (default 0)")
    p.add_argument("--save", type=path_arg, metavar="DIR", help="write each claim's certificate to DIR/<claim>.smt2")
    p.add_argument("--force", action="store_true", help="with --save: replace certificates already in DIR")
    p.add_argument("--compress", action="store_true",
                   help="with --save: write certificates over 200 kB gzipped (DIR/<claim>.smt2.gz; zcat F | z3 -in)")
    p.add_argument("--jobs", "-j", type=positive_int_arg, default=1, metavar="N",
                   help="claims run at once, one process each (default 1; their seconds are then wall times)")
    p.add_argument("--check", nargs="+", metavar="PATH", help="re-run saved certificates (files or folders) instead")
    t = p.add_argument_group("the catalogue's property table (--catalogue)")
    t.add_argument("--catalogue", action="store_true",
                   help="decide symmetry, monotonicity, carry bits and the error bound of every distinct catalogue model "
                   "(--timeout: seconds per cell, all its solver calls)")
    t.add_argument("--arch", help="with --catalogue: only the models of this architecture's rows")
    t.add_argument("--instr", help="with --catalogue: only the models of this instruction type's rows")
    t.add_argument("--op", help="with --model: the op family whose row gives the formats")
    t.add_argument("--model", type=model_spec_arg, metavar="SPEC",
                   help="with --catalogue: a model spec instead of the catalogue's (needs --arch and --instr for its "
                   "formats), e.g. t-fdpa:L=8,F=26")
    t.add_argument("--property", action="append", metavar="P",
                   help="with --catalogue: only these columns (symmetry, monotonicity, carry-bits, error-bound; "
                   "repeat or separate with commas)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=_cmd_prove)


def _yes_no(agrees: Optional[bool]) -> str:
    return "-" if agrees is None else ("yes" if agrees else "NO")


def _short_witness(w: Optional[dict[str, Any]]) -> str:
    if not w:
        return ""
    if "a" in w and "c" in w:
        dec = w.get("decimal", {})
        return f"a={','.join(w['a'])} b={','.join(w['b'])} c={w['c']}" + (
            f"  (a={','.join(dec['a'])} b={','.join(dec['b'])} c={dec['c']})" if dec else "")
    return json.dumps(w)[:200]


def _list(claims: list[Claim], as_json: bool) -> int:
    if as_json:
        print(json.dumps({"claims": [{"name": c.name, "source": c.source, "models": list(c.models), "expected": c.expected,
                                      "group": c.group, "summary": c.summary} for c in claims]}))
        return EXIT_OK
    width = max(len(c.name) for c in claims)
    for c in claims:
        print(f"{c.name.ljust(width)}  {c.group or '-':<14} {c.summary}")
        print(f"{'':{width}}  {'':<14} source: {c.source}; expected: {c.expected}")
    print(f"\n{len(claims)} claims")
    return EXIT_OK


def _certificate_line(r: Any) -> str:
    """One line of ``prove --check``'s output for one certificate."""
    if r.error:
        return f"error    {r.error}"
    solver = r.answers[-1].solver if r.answers else "?"
    bad = [a for a in r.answers if not a.agrees]
    what = f"{len(r.answers)} checks" + (f", check {bad[0].index} ({bad[0].label}) expected {bad[0].expected}, got "
                                          f"{bad[0].got}{' (' + bad[0].reason + ')' if bad[0].reason else ''}" if bad else "")
    return f"{r.status:8} {r.claim} ({r.verdict}): {what}, {solver}, {r.seconds:.2f} s  [{r.path}]"


_STATUSES = ("ok", "mismatch", "unknown", "error")


def _tally(results: list[Any]) -> str:
    """``ok 3, mismatch 0, unknown 1, error 0``."""
    return ", ".join(f"{k} {sum(r.status == k for r in results)}" for k in _STATUSES)


def _check(args: argparse.Namespace) -> int:
    from ..proofs.runner import certificate_files, check_certificates

    files = certificate_files(args.check)  # a missing path fails before any work
    status = Status(delay=0.5)
    results: list[Any] = []
    current = [""]

    def progress(path: str, res: Any) -> None:
        if res is None:
            current[0] = path
            status(f"[{len(results) + 1}/{len(files)}] {path}; {_tally(results)}")
            return
        results.append(res)
        current[0] = ""
        if not args.json:
            status.close()
            print(_certificate_line(res), flush=True)

    def on_answer(path: str, answer: Any, checks: int) -> None:
        status(f"[{len(results) + 1}/{len(files)}] {path}: check {answer.index}/{checks}; {_tally(results)}")

    try:
        with status:
            check_certificates(files, solver=args.solver, timeout=args.timeout, progress=progress, on_answer=on_answer)
    except KeyboardInterrupt:
        _report_checks(args, results, len(files), interrupted=current[0])
        print("smtmma: interrupted", file=sys.stderr)
        return 130
    return _report_checks(args, results, len(files))


def _report_checks(args: argparse.Namespace, results: list[Any], total: int, interrupted: Optional[str] = None) -> int:
    """The end of ``prove --check``: JSON, or the tally line; the exit status.

    ``interrupted``: None, or Ctrl-C came during that file ("" between files)."""
    if args.json:
        doc: dict[str, Any] = {"certificates": [{"path": r.path, "claim": r.claim, "verdict": r.verdict, "status": r.status,
                                                 "checks": len(r.answers), "seconds": round(r.seconds, 3), "error": r.error,
                                                 "solver": r.answers[-1].solver if r.answers else "",
                                                 "answers": [{"label": a.label, "expected": a.expected, "got": a.got}
                                                             for a in r.answers]}
                                                for r in results]}
        if interrupted is not None:
            doc["interrupted"] = interrupted or True
        print(json.dumps(doc))
    else:
        ok = sum(r.status == "ok" for r in results)
        stop = "" if interrupted is None else (
            f"; interrupted{' during ' + interrupted if interrupted else ''}, "
            f"{total - len(results) - bool(interrupted)} not started")
        print(f"{ok}/{total} certificates re-checked ({_tally(results)}{stop})")
    if interrupted is not None:
        return 130
    errors = [r for r in results if r.status == "error"]
    if errors:
        print_error(f"{len(errors)} of {len(results)} certificates could not be re-checked (first: {errors[0].error})")
        return 2
    if any(r.status == "mismatch" for r in results):
        return EXIT_MISMATCH
    unknown = [r for r in results if r.status == "unknown"]
    if unknown:
        print_error(f"{len(unknown)} of {len(results)} certificates got no answer from the solver (first: {unknown[0].path}); "
                    "try a larger --timeout or another --solver")
        return EXIT_TIMEOUT
    return EXIT_OK


def _cmd_prove(args: argparse.Namespace) -> int:
    from ..proofs.claim import Context
    from ..proofs.runner import prove, select

    if args.catalogue or args.model or args.property or args.arch or args.instr or args.op:
        return _catalogue(args)
    if args.check:
        if args.claims or args.all or args.list:
            raise InputError("--check re-runs saved certificates; give no claim names, --all or --list with it")
        return _check(args)
    if not (args.claims or args.all or args.list or args.group):
        raise InputError("name claims to prove, or --all, --group G or --list (see 'smtmma prove --help')")
    if args.compress and not args.save:
        raise InputError("--compress applies to the certificates --save DIR writes")
    if args.force and not args.save:
        raise InputError("--force applies to the certificates --save DIR writes")
    claims = select(args.claims, all_claims=args.all or args.list and not args.claims, group=args.group)
    if args.list:
        return _list(claims, args.json)
    if args.save and not args.force:
        from ..proofs.runner import existing_certificates

        existing = existing_certificates(claims, args.save)
        if existing:
            more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
            raise InputError(f"{existing[0]} exists{more}; --save would replace it: add --force to replace certificates, "
                             "or save to another folder")
    _check_solver(args.solver)
    status = Status()
    progress = _progress(status, len(claims), args.jobs, None if args.json else _print_record)

    with status:
        records = prove(claims, Context(args.solver, args.timeout, args.seed), save=args.save, progress=progress, jobs=args.jobs,
                        compress=args.compress)
    if args.json:
        print(json.dumps({"claims": records}))
    else:
        agree = sum(r["agrees"] is True for r in records)
        differ = [r["name"] for r in records if r["agrees"] is False]
        unknown = [r["name"] for r in records if r["verdict"] == "unknown"]
        total = sum(r["seconds"] for r in records)
        print(f"\n{len(records)} claims in {total:.1f} s: {agree} agree with their document"
              + (f", {len(differ)} do not ({', '.join(differ)})" if differ else "")
              + (f", {len(unknown)} unknown ({', '.join(unknown)})" if unknown else ""))
        if args.save:
            print(f"certificates: {os.path.join(args.save, '')}")
    return _exit_status(records)


def _print_record(r: dict[str, Any]) -> None:
    print(f"{r['name']}  [{r['source']}]")
    print(f"  models:   {', '.join(r['models'])}")
    print(f"  expected: {r['expected']}")
    print(f"  verdict:  {r['verdict']}   agrees: {_yes_no(r['agrees'])}   ({r['solver'] or 'simulation'}, {r['seconds']:.2f} s)")
    w = _short_witness(r.get("witness"))
    if w:
        print(f"  witness:  {w}")
    if r.get("detail"):
        print(f"  detail:   {r['detail']}")
    if r.get("certificate"):
        print(f"  certificate: {r['certificate']} ({r.get('checks', '?')} checks)")


def _catalogue(args: argparse.Namespace) -> int:
    """``prove --catalogue``: the property table's cells, one claim each (see :mod:`smtmma.proofs.catalogue_table`)."""
    from ..proofs.catalogue_table import table_claims
    from ..proofs.claim import Context
    from ..proofs.runner import existing_certificates, prove

    if not args.catalogue:
        given = next(f for f, v in (("--model", args.model), ("--property", args.property), ("--arch", args.arch),
                                    ("--instr", args.instr), ("--op", args.op)) if v)
        raise InputError(f"{given} belongs to --catalogue (the property table); add --catalogue")
    if args.claims or args.all or args.list or args.group or args.check:
        raise InputError("--catalogue decides the property table; give no claim names, --all, --group, --list or --check with it")
    if (args.compress or args.force) and not args.save:
        raise InputError("--compress and --force apply to the certificates --save DIR writes")
    if args.model and not (args.arch and args.instr):
        raise InputError("--model SPEC needs --arch and --instr: the row whose formats the model computes")
    if args.op and not args.model:
        raise InputError("--op picks the row of a --model spec; the catalogue's models come with their rows")
    props = [p.strip() for ps in args.property or () for p in ps.split(",") if p.strip()] or None
    claims = table_claims(args.arch, args.instr, model=args.model, op=args.op, properties=props)
    models = {c.models for c in claims}
    _check_solver(args.solver)
    if args.save and not args.force:
        existing = existing_certificates(claims, args.save)
        if existing:
            raise InputError(f"{existing[0]} exists; --save would replace it: add --force, or save to another folder")
    status = Status()

    def cell_line(rec: dict[str, Any]) -> None:  # with --json: a log on stderr (an hour of cells)
        cell = (rec.get("extra") or {}).get("cell", rec["verdict"])
        print(f"{rec['name']:<48} {cell}  ({rec['solver'] or '-'}, {rec['seconds']:.1f} s)",
              file=sys.stderr if args.json else sys.stdout, flush=True)

    progress = _progress(status, len(claims), args.jobs, cell_line)

    with status:
        records = prove(claims, Context(args.solver, args.timeout, args.seed), save=args.save, progress=progress,
                        jobs=args.jobs, compress=args.compress, compress_over=0)
    if args.json:
        print(json.dumps({"cells": records, "timeout": args.timeout}))
    else:
        tally = {v: sum(r["verdict"] == v for r in records) for v in ("holds", "fails", "unknown", "n/a", "error")}
        print(f"\n{len(records)} cells of {len(models)} models: " + ", ".join(f"{v} {k}" for k, v in tally.items() if k)
              + f"; {sum(r['seconds'] for r in records):.1f} s")
        if args.save:
            print(f"certificates: {os.path.join(args.save, '')}")
    return _exit_status(records)


def _progress(status: Status, n: int, jobs: int,
              show: Optional[Callable[[dict[str, Any]], None]]) -> Callable[[Claim, Optional[dict[str, Any]]], None]:
    """The ``progress`` callback of :func:`smtmma.proofs.runner.prove`: a status line (which claim, how many of ``n``
    are done; the claim under way only with one job) and ``show(record)`` as each claim ends."""
    done = [0]

    def progress(c: Claim, rec: Optional[dict[str, Any]]) -> None:
        if rec is None:
            if jobs == 1:
                status(f"[{done[0] + 1}/{n}] {c.name}")
            return
        done[0] += 1
        status(f"[{done[0]}/{n}] done: {c.name}")
        if show is not None:
            status.close()
            show(rec)

    return progress


def _exit_status(records: list[dict[str, Any]]) -> int:
    """70 when a claim hit a bug (each printed), 3 when a solver gave up on one, else 0."""
    broken = [r for r in records if r["verdict"] == "error"]
    for r in broken:
        print_error(f"{r['name']}: {r['detail']}")
    if broken:
        return EXIT_INTERNAL
    return EXIT_TIMEOUT if any(r["verdict"] == "unknown" for r in records) else EXIT_OK


def _check_solver(solver: Optional[str]) -> None:
    """A solver named on the command line must be known and installed (one line otherwise)."""
    if not solver:
        return
    from ..errors import UnknownNameError, unknown_name
    from ..queries.backends import BACKENDS, available

    if solver not in (*BACKENDS, "portfolio"):
        raise UnknownNameError(unknown_name("solver", solver, [*BACKENDS, "portfolio"]))
    if solver != "portfolio" and solver not in available():
        raise InputError(f"solver {solver} is not installed; pip install 'smtmma[{solver}]'")
