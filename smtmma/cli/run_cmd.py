"""``smtmma run``: record a device's outputs for every line of a test-vector file."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import InputError
from ..hw.record import record_file
from .common import EXIT_OK, EXIT_USAGE, _positive_int, _print_error
from .device_options import DEVICE_HELP, add_device_option, open_for
from .progress import Status

_RUN_EPILOG = f"""\
Every line of FILE (test vectors, e.g. a suite from 'smtmma suite' or suites/*.jsonl)
runs on the device; OUT gets the same lines with "d" (the device's output, hex in
the D format) and "gpu" (the device).  On a GPU, "arch" becomes the GPU's own
architecture.  Then 'smtmma check OUT' compares the recording with that
architecture's model and with every "expect" of the lines: the known models the
GPU matches.  Lines are written batch by batch: a run that fails half-way keeps
what it did.

{DEVICE_HELP}

--json prints {{"device", "lines", "written", "seconds", "output", "error"}}.

exit status: 0 every line recorded, 2 bad input or a device error (the lines
done so far stay in OUT).

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
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where the lines with d go")
    p.add_argument("--batch", type=_positive_int, default=1024, metavar="N", help="lines per device call (default 1024)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    import os

    if os.path.exists(args.output) and os.path.samefile(args.file, args.output):
        raise InputError(f"-o {args.output} is the input file: write the recording elsewhere")
    device = open_for(args.device)
    try:
        with Status() as status:
            rep = record_file(device, args.file, args.output, batch=args.batch,
                              progress=lambda done, total: status.bar(done, total))
    finally:
        device.close()
    if args.json:
        print(json.dumps({"device": device.description, "lines": rep.lines, "written": rep.written,
                          "seconds": round(rep.seconds, 3), "output": args.output, "error": rep.error}))
    elif rep.error is None:
        print(f"{rep.written} lines recorded on {device.description} in {rep.seconds:.1f} s: {args.output}")
    if rep.error is not None:
        _print_error(f"{rep.error}; {rep.written} of {rep.lines} lines recorded in {args.output}")
        return EXIT_USAGE
    return EXIT_OK
