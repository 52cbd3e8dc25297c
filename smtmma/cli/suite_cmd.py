"""``smtmma suite``: a minimal set of test vectors that tells every class of candidate models apart."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from ..arrays import check_fits_in_memory
from ..discriminators.classes import suite_length
from ..discriminators.suite import Suite, build_suite
from ..errors import InputError
from ..queries.formula import parse_domain
from .common import EXIT_OK, EXIT_TIMEOUT, path_arg, print_error
from .output import check_output, is_stdout, open_output
from .progress import Status
from .space_options import SPACE_HELP, add_space_options, space_from_args

_SUITE_EPILOG = f"""\
A suite is a few dot products (JSON Lines test vectors, one per line) whose
outputs differ between every two classes of candidates; each line's "expect"
holds every candidate's D.  Run the file on a GPU ('smtmma run --device cuda
suite.jsonl -o out.jsonl'), then 'smtmma check out.jsonl' names the candidates
whose expectations match the GPU on every line.

How: a pool of random and feature-probing inputs (--pool) is run through every
distinct model; models the pool cannot split are handed to the solver pairwise:
a witness (replayed through the simulator) joins the pool, an unsat answer
proves them equivalent on the domain.  Then vectors are chosen greedily, each
separating the most pairs of classes still together; a vector splits the
classes into as many groups as it has distinct outputs, so V vectors can split
far more than 2^V classes, and ceil(log2 M) is the bound a binary split meets.
Candidates that no input separates form one class, listed as equivalent with the
evidence: "identical" models, or the solver's unsat on the stated domain.
A space with one class gets one conformance vector (not counted in "vectors").

{SPACE_HELP}

--json prints one object:
  {{"instr", "candidates": N, "classes": M, "vectors": V, "log2_classes", "seconds": S,
   "conformance", "k", "domain", "base_arch", "equivalent": [[MODEL, ...], ...],
   "evidence": [{{"rep", "member", "verdict", "solver", "seconds"}}], "unproven",
   "solver_calls", "witnesses", "dropped": [{{"spec", "reason"}}]}}

output: -o FILE is written whole at the end (a temporary file renamed onto
FILE: concurrent runs never interleave, a failed one leaves FILE as it was);
without -o, or with -o -, the vectors go to standard output and the summary to
stderr.  A pool (--pool x --k) too large for this machine's memory is refused
before any work.

exit status: 0 done, 2 bad input (unknown name, impossible grid value, empty
candidate set, bad domain), 3 a solver gave up on some pair (the suite is
written; those candidates are listed under "unproven").

examples:
  smtmma suite --instr f16f32 -o f16f32.jsonl
  smtmma suite --instr bf16f32 --vendor amd -o cdna-bf16.jsonl --json
  smtmma suite --instr f16f32 --candidates sm80,sm90,t-fdpa:L=16,F=26 -o three.jsonl
  smtmma suite --instr f16f32 --grid 't-fdpa:L=4,8,16,32;F=23..26,35;rho=rz-fp32,rne-fp32;carry_bits=2..5' -o grid.jsonl
  smtmma suite --instr f16f32 --grid structural --like sm90 -o kinds.jsonl"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``suite`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    p = sub.add_parser("suite", help="generate a minimal test suite that tells candidate models apart",
                       description="Generate few test vectors whose outputs tell every class of candidate models apart "
                       "(the catalogue of an instruction type, a list of models, or a parameter grid).",
                       epilog=_SUITE_EPILOG, formatter_class=fmt)
    add_space_options(p)
    p.add_argument("-o", "--output", type=path_arg, metavar="FILE",
                   help="write the suite (JSON Lines) to FILE (default, or -: standard output)")
    p.set_defaults(func=_cmd_suite)


def _write(suite: Suite, out: TextIO) -> None:
    for line in suite.lines():
        out.write(line + "\n")


def _print_summary(suite: Suite, out: TextIO, path: str) -> None:
    s = suite.summary()
    print(f"suite for {s['instr']}: {s['candidates']} candidates, {s['classes']} classes, {s['vectors']} "
          f"vector{'s' if s['vectors'] != 1 else ''} "
          f"(ceil(log2 {s['classes']}) = {s['log2_classes']}); k={s['k']}, {s['domain']}; {s['seconds']:.1f} s, "
          f"{s['solver_calls']} solver calls", file=out)
    if s["conformance"]:
        print("  one class: the suite holds one conformance vector", file=out)
    for i, v in enumerate(suite.vectors, start=1):
        if v.separating:
            print(f"  vector {i}: {v.groups} distinct outputs", file=out)
    groups = [c for c in suite.classes if len(c.names) > 1]
    if groups:
        print(f"equivalent candidates ({len(groups)} groups):", file=out)
        for c in groups[:20]:
            how = sorted({e.verdict for e in c.evidence})
            print(f"  {' = '.join(c.names)}  ({', '.join(how)})", file=out)
        if len(groups) > 20:
            print(f"  ... {len(groups) - 20} more groups (--json lists them all)", file=out)
    if suite.space.dropped:
        print(f"{len(suite.space.dropped)} grid points dropped as inconsistent with {s['instr']} (--json lists them)", file=out)
    print(f"vectors written to {path}", file=out)


#: bytes per pool lane at least (a and b patterns, the models' runs over them; over 100 measured at --pool 100000 --k 256)
_POOL_LANE_BYTES = 64


def _cmd_suite(args: argparse.Namespace) -> int:
    output = None if args.output is None or is_stdout(args.output) else args.output
    if args.json and not output:
        raise InputError("--json prints the summary on standard output: give -o FILE for the vectors")
    if output:
        check_output(output, "-o", "a file for the suite (suite.jsonl)")
    space = space_from_args(args)
    domain = parse_domain(args.domain)
    K = args.k or suite_length(space)
    check_fits_in_memory(args.pool * K * _POOL_LANE_BYTES, f"the pool (--pool {args.pool} x --k {K} lanes)")
    with Status() as status:
        suite = build_suite(space, K=args.k, domain=domain, pool_size=args.pool, seed=args.seed, solver=args.solver,
                            timeout=args.timeout, progress=status)
    if output:
        with open_output(output, "-o") as fh:
            _write(suite, fh)
    else:
        _write(suite, sys.stdout)
    if args.json:
        print(json.dumps(suite.summary()))
    else:
        _print_summary(suite, sys.stdout if output else sys.stderr, output or "standard output")
    unproven = [c.names for c in suite.classes if not c.proven]
    if unproven:
        print_error(f"the solver gave up on {len(unproven)} group(s), kept together unproven: "
                    + "; ".join(" = ".join(g) for g in unproven[:3]) + " (try a larger --timeout or --solver portfolio)")
        return EXIT_TIMEOUT
    return EXIT_OK
