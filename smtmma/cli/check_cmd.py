"""``smtmma check``: simulate every line of test-vector files and compare with the recorded d."""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Any

from ..check import CheckReport, FileReport, check_files
from ..errors import InputError, SmtmmaError
from .common import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, _non_negative, _print_error

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

examples:
  smtmma check h100-run.jsonl
  smtmma check logs/*.jsonl --json > report.json
  smtmma check big.jsonl --max-mismatches 100
  zcat run.jsonl.gz | smtmma check -"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``check`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    pc = sub.add_parser("check", help="check test-vector files (JSON Lines) against the models",
                        description="Simulate every line of each FILE and compare with its recorded d, bit for bit.",
                        epilog=_CHECK_EPILOG, formatter_class=fmt)
    pc.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines test-vector file ('-': standard input)")
    pc.add_argument("--json", action="store_true", help="print one JSON object")
    pc.add_argument("--max-mismatches", type=_non_negative, default=10, metavar="N",
                    help="mismatches (and bad lines) reported per file (default 10)")
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


def _cmd_check(args: argparse.Namespace) -> int:
    try:
        report = _run(args)
    except SmtmmaError as e:
        if args.json:
            print(json.dumps({"error": str(e)}))
        _print_error(str(e))
        return EXIT_USAGE
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        for r in report.files:
            _print_file_report(r, sys.stdout)
        if len(report.files) > 1:
            print(_total_line(report))
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


def _print_errors(report: CheckReport) -> None:
    """One line on stderr per file with bad lines, and per file that could not be read."""
    for r in report.files:
        if r.errors:
            first = r.error_list[0].message if r.error_list else ""
            _print_error(f"{r.file}: {r.errors} bad line{'s' if r.errors > 1 else ''}" + (f" (first: {first})" if first else ""))
        if r.error is not None:
            _print_error(f"{r.file}: {r.error}")


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
