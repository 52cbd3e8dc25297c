"""``smtmma check``: simulate every line of test-vector files and compare with the recorded d."""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Any

from ..check import CheckReport, FileReport, check_files
from .common import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, _non_negative, _print_error

_CHECK_EPILOG = """\
Each FILE is JSON Lines, one dot product per line, bit patterns in hex:
  {"arch": "sm90", "instr": "f16f32", "a": ["3c00", "1400"], "b": ["3c00", "1400"],
   "c": "00000000", "d": "3f800008"}
optional: "op" (mma, wgmma, tcgen05, mfma, ...; default: the catalogue's), "scale_a",
"scale_b" (block-scaled instructions), "expect", "gpu", "note"; other fields are ignored.
Lines without "d" are counted as 'no expectation'. A bad line is reported and
the check goes on.

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
              "consistent": [MODEL, ...] | null}],
   "lines", "matched", "mismatched", "errors", "no_expectation", "expect_disagree"}

exit status: 0 all lines match, 1 some line mismatched (or an expectation
disagrees with its model), 2 no mismatch but some line (or file) could not be read.

examples:
  smtmma check h100-run.jsonl
  smtmma check logs/*.jsonl --json > report.json
  smtmma check big.jsonl --max-mismatches 100"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``check`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    pc = sub.add_parser("check", help="check test-vector files (JSON Lines) against the models",
                        description="Simulate every line of each FILE and compare with its recorded d, bit for bit.",
                        epilog=_CHECK_EPILOG, formatter_class=fmt)
    pc.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines test-vector file")
    pc.add_argument("--json", action="store_true", help="print one JSON object")
    pc.add_argument("--max-mismatches", type=_non_negative, default=10, metavar="N",
                    help="mismatches (and bad lines) reported per file (default 10)")
    pc.set_defaults(func=_cmd_check)


def _print_file_report(r: FileReport, out: IO[str]) -> None:
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


def _cmd_check(args: argparse.Namespace) -> int:
    def show_progress(path: str, n: int) -> None:
        print(f"\r{path}: {n} lines", end="", file=sys.stderr, flush=True)

    progress = show_progress if not args.json and sys.stderr.isatty() else None
    report: CheckReport = check_files(args.files, max_mismatches=args.max_mismatches, max_errors=args.max_mismatches,
                                      progress=progress)
    if progress is not None:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        for r in report.files:
            _print_file_report(r, sys.stdout)
        if len(report.files) > 1:
            print(f"total: {report.lines} lines: {report.matched} matched, {report.mismatched} mismatched, "
                  f"{report.errors} errors" + (f", {report.no_expectation} without d" if report.no_expectation else ""))
    for r in report.files:
        if r.errors:
            first = r.error_list[0].message if r.error_list else ""
            _print_error(f"{r.file}: {r.errors} bad line{'s' if r.errors > 1 else ''}" + (f" (first: {first})" if first else ""))
    if report.mismatched or report.expect_disagree:
        return EXIT_MISMATCH
    if report.errors:
        return EXIT_USAGE
    return EXIT_OK
