"""``smtmma validate``: a device against a model on random inputs, bit for bit, mismatches shrunk."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..catalogue import lookup
from ..hw.validate import ValidationReport, validate
from .common import EXIT_MISMATCH, EXIT_OK, k_length_arg, non_negative_arg, positive_int_arg, seed_arg
from .device_options import DEVICE_HELP, add_device_option, open_for
from .progress import Status

_VALIDATE_EPILOG = f"""\
Step 4 of the MMA-Sim paper's closed loop (§3.1.4): N inputs, in turns of the
kinds normal N(0,1), uniform U(-1,1), DNN-like N(0,1) + Bernoulli(0.001) N(0,100),
ill-conditioned sums (large cancellation), and random bit streams (subnormals,
infinities, NaNs), run on the device and through the catalogue model of
--arch/--instr/--op, compared bit for bit.  The first --shrink mismatches are
shrunk as the paper debugs them: lanes set to zero while the mismatch persists,
then the values left simplified (fraction bits cleared, signs made positive);
each is printed as a test-vector line (d: the device's, expect: the model's).

{DEVICE_HELP}
A GPU whose architecture is not --arch is refused.

--json prints {{"device", "arch", "instr", "op", "model", "k", "n", "matched",
"mismatched", "by_kind": {{KIND: [RUN, MISMATCHED]}}, "mismatches": [{{"kind", "steps",
"vector": LINE}}], "seconds"}}.

exit status: 0 every output matched, 1 mismatches, 2 bad input or device error.

examples:
  smtmma validate --device cuda --arch sm90 --instr f16f32 -n 1000000
  smtmma validate --device sim:t-fdpa:L=16,F=26,rho=rz-fp32 --arch sm90 --instr f16f32 -n 100000"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``validate`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    p = sub.add_parser("validate", help="compare a device with a model on random inputs, bit for bit",
                       description="Compare a device with a catalogue model on random inputs (§3.1.4 of the MMA-Sim "
                       "paper), bit for bit, and shrink every mismatch to a minimal input.",
                       epilog=_VALIDATE_EPILOG, formatter_class=fmt)
    add_device_option(p)
    p.add_argument("--arch", required=True, help="the architecture whose model the device is compared with")
    p.add_argument("--instr", help="instruction type (f16f32, bf16f32, e4m3f32, ...); may be left out when "
                    "--op names a full instruction whose types fix it")
    p.add_argument("--op", help="op family or instruction name (default: the catalogue's default)")
    p.add_argument("-n", type=positive_int_arg, default=1_000_000, metavar="N", help="inputs to draw (default 1000000)")
    p.add_argument("--seed", type=seed_arg, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--k", type=k_length_arg, metavar="K", help="dot-product length (default: the instruction's k, at least L)")
    p.add_argument("--shrink", type=non_negative_arg, default=5, metavar="M", help="mismatches to shrink (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_validate)


def _record(r: ValidationReport) -> dict[str, Any]:
    return {"device": r.device, "arch": r.arch, "instr": r.instr, "op": r.op, "model": r.model, "k": r.K, "n": r.n,
            "matched": r.matched, "mismatched": r.mismatched, "by_kind": r.by_kind,
            "mismatches": [{"kind": s.kind, "steps": s.steps, "vector": json.loads(s.line)} for s in r.shrunk],
            "seconds": round(r.seconds, 3)}


def _cmd_validate(args: argparse.Namespace) -> int:
    entry = lookup(args.arch, args.instr, args.op)
    device = open_for(args.device, entry.arch)
    try:
        with Status() as status:
            r = validate(device, entry.arch, entry.instr, args.op, n=args.n, seed=args.seed, K=args.k, shrink_max=args.shrink,
                         progress=lambda done, total, bad: status.bar(done, total, f", {bad:,} mismatched"))
    finally:
        device.close()
    if args.json:
        print(json.dumps(_record(r)))
    else:
        print(f"{r.device} vs {r.arch} {r.instr} ({r.op}, {r.model}), K={r.K}: {r.matched:,} of {r.n:,} match, "
              f"{r.mismatched:,} mismatched ({r.seconds:.1f} s)")
        for kind, (run, bad) in r.by_kind.items():
            print(f"  {kind:<16} {run:>10,} run  {bad:>10,} mismatched")
        for s in r.shrunk:
            print(f"mismatch ({s.kind} input) shrunk in {s.steps} steps:")
            print(s.line)
    return EXIT_MISMATCH if r.mismatched else EXIT_OK
