"""``smtmma check``: simulate every line of test-vector files and compare with the recorded d."""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Any, Union

from ..catalogue import provisional_warning, split_arch_op
from ..check import AgainstReport, CheckReport, FileReport, InstrCounts, check_against, check_files
from ..errors import InputError, SmtmmaError
from .common import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, non_negative_arg, print_error
from .space_options import build_space, check_space_options

_CHECK_EPILOG = """\
Each FILE is JSON Lines, one dot product per line, bit patterns in hex:
  {"arch": "sm90", "instr": "f16f32", "a": ["3c00", "1400"], "b": ["3c00", "1400"],
   "c": "00000000", "d": "3f800008"}
optional: "op" (mma, wgmma, tcgen05, mfma, ...; default: the catalogue's), "scale_a",
"scale_b" (block-scaled instructions), "expect", "gpu", "note"; other fields are ignored.
Lines without "d" are counted as 'no expectation'. A bad line (bad JSON or
UTF-8, not an object, a missing or malformed field, a field given twice) is
reported and the check goes on. FILE '-' is standard input; a UTF-8
byte-order mark and CRLF line ends are fine. A FILE that cannot be read
(missing, a directory, compressed) or holds no test vector at all is reported
as a file error and the other files are checked all the same.

"expect" ({MODEL: HEX D}, what 'smtmma suite' writes; MODEL is ARCH, ARCH/OP or a
model spec): every named model is simulated and must give its D; where a line
also has the GPU's "d", the models whose expectations equal d on every line
are printed: the known models a recorded suite run matches ('smtmma run
--device cuda suite.jsonl -o out.jsonl' records it).

--json prints one object:
  {"files": [{"file", "lines", "matched", "mismatched", "errors", "no_expectation",
              "mismatches": [{"line", "expected", "got", "a", "b", "c", ...}],
              "error_messages": [{"line", "message"}], "expect_lines", "expect_checked",
              "expect_disagree", "expect_wrong": [{"line", "model", "expected", "simulated"}],
              "consistent": [MODEL, ...] | null, "error": null | "why the file was not read"}],
   "lines", "matched", "mismatched", "errors", "no_expectation", "expect_disagree",
   "file_errors"}
With --json, stdout is that one object, file errors included (a command error
such as '-' given twice prints {"error": MESSAGE} instead). Errors also go to
stderr, one line each.

exit status, over all FILEs:
  2  some file could not be read or has no test vector (the check is incomplete;
     the other files are still checked and reported)
  1  otherwise, some line mismatched (or an expectation disagrees with its model)
  2  otherwise, some line could not be read
  0  otherwise: every line of every file read, and each one matched (or had no d)

which models match a log (--against, --grid): every candidate model of each
instruction type in the FILEs runs on every line with a "d", whatever the
line's "arch" and "op" say (a line whose arch is unknown or lacks its instr is
read in its instr's formats); the lines of one instruction type and K run
through each model at once.  Printed per instruction type: each candidate's
count of lines explained (its D equals d), best first, and the candidates that
explain every line.
  --against catalogue               every catalogue entry of each instruction type
  --against sm80,sm90/wgmma,t-fdpa:L=8,F=24,rho=rz-fp32
                                    a list: architectures (those without an
                                    instruction type are left out for it), ARCH/OP,
                                    model specs, 'catalogue'
  --grid 't-fdpa:L=8,16;F=23..26'   a parameter grid (as in 'smtmma suite --help')
  --like ARCH                       architecture whose formats and parameters specs take
  --vendor nvidia|amd               only that vendor's catalogue entries
--json prints, with --against or --grid:
  {"files": [{"file", "lines", "compared", "no_expectation", "errors",
              "error_messages": [{"line", "message"}], "error"}],
   "lines", "compared", "errors", "no_expectation", "file_errors",
   "against": {INSTR: [{"model", "spec", "explained", "lines", "first_missed"}, ...]
               (best first; null: no candidate of that instruction type)},
   "consistent": {INSTR: [MODEL, ...]}}
("compared": lines with d; "first_missed": FILE:LINE of the first line the
model does not explain, null when it explains them all.)
exit status with --against: 2 a file could not be read or holds no line with d;
1 otherwise, some instruction type has no candidate that explains all its
lines (the best one and the lines it misses are printed); 2 otherwise, some
line could not be read; 0 otherwise.

examples:
  smtmma check h100-run.jsonl
  smtmma check logs/*.jsonl --json > report.json
  smtmma check big.jsonl --max-mismatches 100
  zcat run.jsonl.gz | smtmma check -
  smtmma check mygpu.jsonl --against catalogue          which catalogue models match my log?
  smtmma check mygpu.jsonl --grid 't-fdpa:L=8,16,32;F=23..26;rho=rz-fp32,rne-fp32'"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``check`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    pc = sub.add_parser("check", help="check test-vector files (JSON Lines) against the models",
                        description="Simulate every line of each FILE and compare with its recorded d, bit for bit.",
                        epilog=_CHECK_EPILOG, formatter_class=fmt)
    pc.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines test-vector file ('-': standard input)")
    pc.add_argument("--json", action="store_true", help="print one JSON object")
    pc.add_argument("--max-mismatches", type=non_negative_arg, default=10, metavar="N",
                    help="mismatches (and bad lines) reported per file (default 10)")
    pc.add_argument("--against", action="append", metavar="LIST", help="name the models that match the log: "
                    "'catalogue' or a list of architectures, ARCH/OP and model specs (see below); may be repeated")
    pc.add_argument("--grid", action="append", metavar="GRID", help="with or instead of --against: a parameter grid of "
                    "candidate models; may be repeated")
    pc.add_argument("--like", metavar="ARCH", help="--against/--grid: architecture whose formats and parameters model specs take")
    pc.add_argument("--vendor", choices=["nvidia", "amd"], help="--against catalogue: only this vendor's entries")
    pc.set_defaults(func=_cmd_check)


def _print_file_report(r: FileReport, out: IO[str]) -> None:
    if r.error is not None and r.lines == 0:
        print(f"{r.file}: {r.error}", file=out)
        return
    extra = f", {r.no_expectation} without d (not compared)" if r.no_expectation else ""
    print(f"{r.file}: {r.lines} lines: {r.matched} matched, {r.mismatched} mismatched, {r.errors} errors{extra}", file=out)
    for m in r.mismatches:
        rec = m.to_dict()
        print(f"  line {rec['line']}: mismatch ({rec['arch']} {rec['instr']} {rec['op']}, {rec['model']})", file=out)
        print(f"    a = {' '.join(rec['a'])}", file=out)
        print(f"    b = {' '.join(rec['b'])}", file=out)
        if "scale_a" in rec:
            print(f"    scale_a = {' '.join(rec['scale_a'])}", file=out)
            print(f"    scale_b = {' '.join(rec['scale_b'])}", file=out)
        print(f"    c = {rec['c']}", file=out)
        print(f"    expected d = {rec['expected']} ({rec['expected_value']!r})", file=out)
        print(f"    got      d = {rec['got']} ({rec['got_value']!r})", file=out)
    if r.mismatched > len(r.mismatches):
        print(f"  ... {r.mismatched - len(r.mismatches)} more mismatches", file=out)
    if r.expect_lines:
        print(f"  expect: {r.expect_lines} lines, {r.expect_checked} model outputs simulated, "
              f"{r.expect_disagree} disagree with the file", file=out)
        for w in r.expect_wrong:
            print(f"    line {w['line']}: {w['model']}: the file expects {w['expected']}, the model gives {w['simulated']}", file=out)
        if r.consistent is not None:
            print(f"  models whose expectations match d on every line: {', '.join(r.consistent) if r.consistent else 'none'}",
                  file=out)
    for e in r.error_list:
        print(f"  error: {e.message}", file=out)
    if r.errors > len(r.error_list):
        print(f"  ... {r.errors - len(r.error_list)} more bad lines", file=out)
    if r.error is not None:
        print(f"  error: {r.error}", file=out)


def _refused(args: argparse.Namespace, e: SmtmmaError) -> int:
    """Bad input: the error as JSON on stdout with --json, one line on stderr, exit status 2."""
    if args.json:
        print(json.dumps({"error": str(e)}))
    print_error(str(e))
    return EXIT_USAGE


def _cmd_check(args: argparse.Namespace) -> int:
    if args.against is not None or args.grid is not None or args.like or args.vendor:
        return _cmd_against(args)
    try:
        report = _run(args)
    except SmtmmaError as e:
        return _refused(args, e)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        for r in report.files:
            _print_file_report(r, sys.stdout)
        if len(report.files) > 1:
            print(_total_line(report))
    for arch in dict.fromkeys(a for r in report.files for a in r.provisional):
        print(f"smtmma: warning: {provisional_warning(arch)}", file=sys.stderr)
    _print_errors(report)
    return exit_status(report)


def _run(args: argparse.Namespace) -> CheckReport:
    if args.files.count("-") > 1:
        raise InputError("'-' (standard input) can be given once")

    def show_progress(path: str, n: int) -> None:
        print(f"\r{path}: {n} lines", end="", file=sys.stderr, flush=True)

    progress = show_progress if not args.json and sys.stderr.isatty() else None
    report = check_files(args.files, max_mismatches=args.max_mismatches, max_errors=args.max_mismatches,
                         progress=progress)
    if progress is not None:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    return report


def _total_line(report: CheckReport) -> str:
    text = (f"total: {report.lines} lines: {report.matched} matched, {report.mismatched} mismatched, "
            f"{report.errors} errors" + (f", {report.no_expectation} without d" if report.no_expectation else ""))
    n = report.file_errors
    return text + (f", {n} file error{'s' if n > 1 else ''}" if n else "")


def _print_errors(report: Union[CheckReport, AgainstReport]) -> None:
    """One line on stderr per file with bad lines, and per file that could not be read."""
    for r in report.files:
        if r.errors:
            first = r.error_list[0].message if r.error_list else ""
            print_error(f"{r.file}: {r.errors} bad line{'s' if r.errors > 1 else ''}" + (f" (first: {first})" if first else ""))
        if r.error is not None:
            print_error(f"{r.file}: {r.error}")


def exit_status(report: CheckReport) -> int:
    """2 if a file could not be read (the check is incomplete), else 1 if a line mismatched (or an expectation
    disagrees), else 2 if a line could not be read, else 0."""
    if report.file_errors:
        return EXIT_USAGE
    if report.mismatched or report.expect_disagree:
        return EXIT_MISMATCH
    if report.errors:
        return EXIT_USAGE
    return EXIT_OK


#: Candidates shown per instruction type in the text table (--json has them all).
TABLE_ROWS = 30


def _cmd_against(args: argparse.Namespace) -> int:
    """``check --against``: which candidate models explain every line of the log."""
    try:
        if args.against is None and args.grid is None:
            raise InputError("--like and --vendor choose candidates: use them with --against or --grid")
        if args.files.count("-") > 1:
            raise InputError("'-' (standard input) can be given once")
        check_space_options(args.against, args.grid)
        if args.like:
            try:
                split_arch_op(args.like)  # an unknown --like fails here, once, not per instruction type
            except SmtmmaError as e:
                raise type(e)(f"--like {args.like}: {e}") from None

        def space_for(instr: str):  # type: ignore[no-untyped-def]
            return build_space(instr, args.against, args.grid, args.like, args.vendor, lenient=True)

        report = check_against(args.files, space_for, max_errors=args.max_mismatches)
    except SmtmmaError as e:
        return _refused(args, e)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        _print_against(report, sys.stdout)
    _print_errors(report)
    if not report.instrs and not any(f.error for f in report.files):
        print_error("no line has a recorded d: nothing to match the candidates against")
    return against_status(report)


def _best_line(i: InstrCounts) -> str:
    """Why an instruction type is unexplained: no candidate, or the best one and how many lines it misses."""
    if not i.counts:
        return f"{i.instr}: no candidate model of this instruction type (check --against / --grid)"
    best = i.counts[0]
    return (f"{i.instr}: no candidate explains every line; the best, {best.model}, misses {best.missed} of "
            f"{best.lines} (first: {best.first_missed})")


def _print_against(report: AgainstReport, out: IO[str]) -> None:
    for f in report.files:
        if f.error is not None and f.lines == 0:
            print(f"{f.file}: {f.error}", file=out)
            continue
        extra = f", {f.no_expectation} without d" if f.no_expectation else ""
        print(f"{f.file}: {f.lines} lines, {f.compared} with d{extra}, {f.errors} errors", file=out)
        for e in f.error_list:
            print(f"  error: {e.message}", file=out)
    print("(each line's arch and op are ignored: every candidate runs on every line with d)", file=out)
    for i in report.instrs:
        print(f"\n{i.instr}: {i.lines} lines with d", file=out)
        if not i.counts:
            print("  no candidate model of this instruction type", file=out)
            continue
        rows = [["MODEL", "EXPLAINED", "SPEC"]] + [[c.model, f"{c.explained}/{c.lines}", c.spec if c.spec != c.model else ""]
                                                     for c in i.counts[:TABLE_ROWS]]
        widths = [max(len(r[k]) for r in rows) for k in range(2)]
        for r in rows:
            print(f"  {r[0].ljust(widths[0])}  {r[1].rjust(widths[1])}  {r[2]}".rstrip(), file=out)
        if len(i.counts) > TABLE_ROWS:
            print(f"  ... {len(i.counts) - TABLE_ROWS} more candidates (--json lists them all)", file=out)
        names = i.consistent
        if names:
            shown = ", ".join(names[:TABLE_ROWS]) + (f" and {len(names) - TABLE_ROWS} more" if len(names) > TABLE_ROWS else "")
            print(f"consistent with every {i.instr} line: {shown}", file=out)
        else:
            print(_best_line(i), file=out)


def against_status(report: AgainstReport) -> int:
    """2 if a file could not be read or no line has d, else 1 if an instruction type has no candidate explaining
    all its lines, else 2 if a line could not be read, else 0."""
    if any(f.error is not None for f in report.files) or not report.instrs:
        return EXIT_USAGE
    if not report.explained:
        return EXIT_MISMATCH
    if any(f.errors for f in report.files):
        return EXIT_USAGE
    return EXIT_OK
