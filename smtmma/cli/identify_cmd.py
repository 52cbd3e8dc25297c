"""``smtmma identify``: run solver-chosen vectors on a device until one class of candidates is left (or none)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..discriminators.identify import Identification, identify
from ..queries.formula import parse_domain
from .common import EXIT_MISMATCH, EXIT_OK, EXIT_TIMEOUT, _print_error
from .device_options import DEVICE_HELP, add_device_option, open_for
from .progress import Status
from .space_options import SPACE_HELP, add_space_options, space_from_args
from .common import _positive_int

_IDENTIFY_EPILOG = f"""\
The closed loop of the MMA-Sim paper (§3), with a solver choosing the probes:
each round runs the one vector that best splits the surviving candidates (from a
pool of random and feature-probing inputs, or found by the solver when the pool
cannot split them), keeps the candidates whose output equals the device's, and
stops with one class (every survivor identical to, or proved equivalent with, the
others on the domain) or with none: then the last vector, which no candidate
explains, is printed as a test-vector line -- the start of a model revision.
When the candidates form one class before any vector (one candidate, or all
equivalent), up to 8 pool vectors ("confirmation") still run: the device must
match them, or the verdict is none.

{DEVICE_HELP}

{SPACE_HELP}

--json prints one object:
  {{"verdict": "identified"|"none"|"undecided", "models": [MODEL, ...], "vectors_run": N,
   "transcript": [{{"vector": LINE, "d": HEX, "survivors": [MODEL, ...], "source": "pool"|"solver"|"confirmation"}}],
   "evidence": [{{"rep", "member", "verdict", "solver", "seconds"}}], "seconds", "last_vector"}}
  (catalogue candidates are named ARCH or ARCH/OP, others by their model spec)

exit status: 0 identified, 1 no candidate matches the device, 2 bad input
(unknown device or name, empty candidate set), 3 undecided (a solver gave up).

examples:
  smtmma identify --device sim:sm90 --instr f16f32
  smtmma identify --device cuda --instr bf16f32 --json
  smtmma identify --device sim:t-fdpa:L=16,F=26,rho=rz-fp32 --instr f16f32          (none: prints the vector)
  smtmma identify --device sim:t-fdpa:L=8,F=25,rho=rz-fp32 --instr f16f32 --grid 't-fdpa:L=4,8,16;F=23..26'"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``identify`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    p = sub.add_parser("identify", help="name the model a device implements, one solver-chosen vector at a time",
                       description="Run one vector at a time on a device, drop the candidate models it contradicts, and "
                       "stop with the one class of candidates left, or with none.",
                       epilog=_IDENTIFY_EPILOG, formatter_class=fmt)
    add_device_option(p)
    add_space_options(p)
    p.add_argument("--max-vectors", type=_positive_int, default=64, metavar="N", help="give up after N vectors (default 64)")
    p.set_defaults(func=_cmd_identify)


def _vectors(n: int) -> str:
    return f"{n} vector{'s' if n != 1 else ''}"


def _print(r: Identification) -> None:
    for i, rnd in enumerate(r.rounds, start=1):
        rec = json.loads(rnd.vector)
        shown = ", ".join(rnd.survivors[:8]) + (f", ... ({len(rnd.survivors)} in all)" if len(rnd.survivors) > 8 else "")
        print(f"vector {i} ({rnd.source}): device d = {r.d_hex(rnd.d)}; "
              f"{len(set(rec['expect'].values()))} distinct expectations; left: {shown or 'none'}")
    if r.verdict == "identified":
        print(f"identified: {' = '.join(r.models)}  ({_vectors(len(r.rounds))}, {r.seconds:.1f} s)")
        proofs = [e for e in r.evidence if e.verdict == "unsat"]
        if proofs:
            print(f"  equivalent on the domain (solver unsat): {', '.join(e.member for e in proofs)}")
    elif r.verdict == "none":
        print(f"none: no candidate gives the device's output ({_vectors(len(r.rounds))}, {r.seconds:.1f} s); the vector:")
        print(r.last_vector)
    else:
        print(f"undecided: {', '.join(r.models)} left ({_vectors(len(r.rounds))}, {r.seconds:.1f} s)")


def _cmd_identify(args: argparse.Namespace) -> int:
    space = space_from_args(args)
    domain = parse_domain(args.domain)
    device = open_for(args.device)
    try:
        with Status() as status:
            r = identify(device, space, K=args.k, domain=domain, pool_size=args.pool, seed=args.seed, solver=args.solver,
                         timeout=args.timeout, max_vectors=args.max_vectors, progress=status)
    finally:
        device.close()
    if args.json:
        print(json.dumps(r.to_dict()))
    else:
        _print(r)
    if r.verdict == "none":
        return EXIT_MISMATCH
    if r.verdict == "undecided":
        _print_error("undecided: " + ("a solver gave up on some pair (try a larger --timeout)" if any(
            e.verdict == "unknown" for e in r.evidence) else f"--max-vectors {args.max_vectors} ran out"))
        return EXIT_TIMEOUT
    return EXIT_OK
