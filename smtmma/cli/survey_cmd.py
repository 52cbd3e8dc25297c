"""``smtmma hw survey``: run, record and check every instruction of a device (:mod:`smtmma.hw.survey`)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from ..errors import InputError
from ..hw.survey import InstrSurvey, Survey, survey
from .common import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, print_error
from .device_options import open_for
from .output import output_folder


def run_survey(args: argparse.Namespace) -> int:
    """The ``hw survey`` command: exit 0 all matched, 1 a difference or a failed instruction, 2 nothing surveyed."""
    out = None if args.output is None else output_folder(args.output, "-o", "a folder for the recordings (survey/)")
    device = open_for(args.device)
    if device.arch is None:
        device.close()
        raise InputError(f"device {args.device} has no architecture to survey: give cuda, hip or sim:ARCH")

    def done(n: int, total: int, s: InstrSurvey) -> None:
        what = f"error: {s.error}" if s.error else f"{s.matched}/{s.lines} matched"
        print(f"[{n + 1}/{total}] {s.arch} {s.instr} {s.op}: {what} ({s.seconds:.1f} s)", file=sys.stderr, flush=True)

    try:
        result = survey(device, out, instrs=args.instr, n_random=args.random, seed=args.seed, done=done)
    finally:
        device.close()
    result.command = "smtmma " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else None
    if out is not None:
        _write_summaries(result, out)
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        _print_table(result)
        if out is not None:
            print(f"recordings, summary.md and summary.json: {out}")
    if result.interrupted:
        print_error(f"interrupted: {len(result.instructions)} instruction(s) surveyed" + (f", kept in {out}" if out else ""))
    ran = [s for s in result.instructions if s.lines]
    if not ran:
        first = next((s.error for s in result.instructions if s.error), "no instruction to survey")
        print_error(f"nothing could be surveyed on {device.description}: {first}")
        return EXIT_USAGE
    if any(s.error or s.matched < s.lines for s in result.instructions) or result.interrupted:
        return EXIT_MISMATCH
    return EXIT_OK


def _write_summaries(result: Survey, out: Path) -> None:
    try:
        (out / "summary.json").write_text(json.dumps(result.as_dict(), indent=1) + "\n", encoding="utf-8")
        (out / "summary.md").write_text(result.markdown(), encoding="utf-8")
    except OSError as e:
        raise InputError(f"-o {out}: cannot write the summary ({e.strerror or e}); the recordings written so far "
                         f"are kept") from None


def _print_table(result: Survey) -> None:
    rows = result.table()
    widths = [min(max(len(r[i]) for r in rows), 60) for i in range(len(rows[0]))]
    print(f"{result.gpu.get('description')}: {len(result.instructions)} instructions in {result.seconds:.1f} s")
    for r in rows:
        print("  ".join(c.ljust(w) if len(c) <= w else c for c, w in zip(r, widths)).rstrip())
