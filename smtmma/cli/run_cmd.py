"""``smtmma run``: record a device's outputs for every line of a test-vector file."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..errors import InputError
from ..hw.record import record_file
from .common import EXIT_OK, EXIT_USAGE, positive_int_arg, print_error
from .device_options import DEVICE_HELP, add_device_option, open_for
from .output import check_output, is_stdout, open_output
from .progress import Status

_RUN_EPILOG = f"""\
Every line of FILE (test vectors, e.g. a suite from 'smtmma suite' or suites/*.jsonl)
runs on the device; OUT gets the same lines with "d" (the device's output, hex in
the D format) and "gpu" (the device).  On a GPU, "arch" becomes the GPU's own
architecture.  Then 'smtmma check OUT' compares the recording with that
architecture's model and with every "expect" of the lines: the known models the
GPU matches.  Lines are written batch by batch into a temporary file beside OUT
(.OUT.XXXX.part), renamed onto OUT at the end, so two runs writing one OUT never
interleave.  A run that fails or is interrupted half-way keeps what it did: the
lines done so far are renamed onto OUT (a run that did nothing leaves OUT as it
was).  -o - streams the lines to standard output (the summary goes to stderr).

{DEVICE_HELP}

--json prints {{"device", "lines", "written", "seconds", "output", "error"}}.

exit status: 0 every line recorded, 2 bad input or a device error (the lines
done so far stay in OUT), 130 interrupted (the lines done so far stay in OUT).

examples:
  smtmma run --device cuda suites/f16f32.jsonl -o my-gpu-f16f32.jsonl && smtmma check my-gpu-f16f32.jsonl
  smtmma run --device sim:sm90 suites/bf16f32.jsonl -o sm90-bf16.jsonl"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``run`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    p = sub.add_parser("run", help="record a device's outputs for a test-vector file",
                       description="Run every line of a test-vector file on a device and write the lines with the "
                       "device's d.", epilog=_RUN_EPILOG, formatter_class=fmt)
    add_device_option(p)
    p.add_argument("file", metavar="FILE", help="JSON Lines test vectors")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where the lines with d go (- for standard output)")
    p.add_argument("--batch", type=positive_int_arg, default=1024, metavar="N", help="lines per device call (default 1024)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    check_output(args.output, "-o", "a file for the recorded lines (OUT.jsonl)")
    to_stdout = is_stdout(args.output)
    if to_stdout and args.json:
        raise InputError("--json prints the summary on standard output, where -o - writes the lines: give -o FILE")
    if not to_stdout and os.path.exists(args.output) and os.path.exists(args.file) and os.path.samefile(args.file, args.output):
        raise InputError(f"-o {args.output} is the input file: write the recording elsewhere")
    device = open_for(args.device)
    try:
        with Status() as status, open_output(args.output, "-o", keep_partial=True) as fh:
            rep = record_file(device, args.file, fh, batch=args.batch,
                              progress=lambda done, total: status.bar(done, total))
    finally:
        device.close()
    where = "standard output" if to_stdout else args.output
    if args.json:
        print(json.dumps({"device": device.description, "lines": rep.lines, "written": rep.written,
                          "seconds": round(rep.seconds, 3), "output": args.output, "error": rep.error}))
    elif rep.error is None:
        print(f"{rep.written} lines recorded on {device.description} in {rep.seconds:.1f} s: {where}",
              file=sys.stderr if to_stdout else sys.stdout)
    if rep.error is not None:
        print_error(f"{rep.error}; {rep.written} of {rep.lines} lines recorded in {where}")
        return EXIT_USAGE
    return EXIT_OK
