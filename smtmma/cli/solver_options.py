"""What the solver commands (distinguish, query) share: domain and solver options, progress, .smt2 output."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Callable, Optional, TextIO

from .output import check_output, is_stdout
from .progress import Status
from ..errors import InputError
from ..queries.backends import BACKENDS, NoBackendError, available, default_backend
from .common import k_length_arg, path_arg, print_error, seconds_arg, seed_arg

DOMAIN_HELP = """\
domain (--domain, comma-separated items; default: finite inputs):
  finite | specials        NaN/Inf inputs excluded (default) | allowed
  normal                   no subnormal inputs
  nonneg                   a, b and c non-negative
  a+ | a- (b+, c-, ...)     every a (b, c) value >= 0 | <= 0
  exp=LO:HI                unbiased exponents of non-zero a and b values in [LO, HI]
  cexp=LO:HI               the same for c
  lanes=N                  only lanes 0..N-1 of a and b may be non-zero
  a3=0x3c00, b0=..., c=... a fixed bit pattern (hex) for one input
  Queries are small (fast) when the domain is.  A domain no input satisfies
  (e.g. exp=5:6,a0=0x3c00: 1.0 has exponent 0) is refused as 'empty domain'
  rather than answered with a vacuous proof."""


SOLVER_HELP = """\
solvers (--solver): bitwuzla (usually fastest), z3, cvc5, or portfolio (races
every installed backend, first answer wins); default: the first installed of
bitwuzla, z3, cvc5.  --timeout bounds the whole command, in seconds: building
the formulas and every solver call (each call gets what is left); Ctrl-C stops
it at once.  A sat witness is always replayed through the simulator before it
is printed."""


def add_solver_options(p: argparse.ArgumentParser, k_help: str) -> None:
    """The options every solver command shares, on ``p``: --k, --solver, --timeout, --domain, --seed, --emit-smt2, --json."""
    p.add_argument("--k", type=k_length_arg, metavar="K", help=k_help)
    p.add_argument("--solver", choices=[*BACKENDS, "portfolio"], metavar="S",
                   help="bitwuzla, z3, cvc5 or portfolio (default: the first installed of bitwuzla, z3, cvc5)")
    p.add_argument("--timeout", type=seconds_arg, default=60.0, metavar="SEC",
                   help="the whole command, in seconds (default 60): building the formulas and every solver "
                   "call; exit status 3 when it runs out")
    p.set_defaults(timeout_bounds_command=True)
    p.add_argument("--domain", metavar="ITEMS", help="restrict the inputs, e.g. exp=-8:8,lanes=4 (see below)")
    p.add_argument("--seed", type=seed_arg, default=0, metavar="N", help="solver random seed (default 0)")
    p.add_argument("--emit-smt2", type=path_arg, metavar="FILE", help="write the SMT-LIB2 script (with check-sat) to FILE; for query, the "
                   "certificate when the property makes one (every check-sat with its expected answer; "
                   "order-independence then proves each swap on its own terms, which takes longer)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


class Progress:
    """A one-line note on stderr while a solver runs, with the seconds elapsed, only when stderr is a terminal."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.status = Status(delay=0.0)

    def __enter__(self) -> "Progress":
        self.status(self.message)
        return self

    def __exit__(self, *exc: object) -> None:
        self.status.close()


def solver_label(name: Optional[str]) -> str:
    """What runs for --solver ``name``; NoBackendError (exit 2) when it is not installed."""
    have = available()
    if name == "portfolio":
        if not have:
            default_backend()
        return "portfolio (" + ", ".join(have) + ")"
    if name is None:
        return default_backend()
    if name not in have:
        raise NoBackendError(f"solver {name} is not installed (installed: {', '.join(have) or 'none'}); "
                             f"pip install 'smtmma[{name}]'")
    return name


def progress_message(label: str, timeout: float) -> str:
    """The :class:`Progress` line for solver ``label`` (:func:`solver_label`), e.g. ``solving with z3 (timeout 60 s)``."""
    verb = "racing" if label.startswith("portfolio") else "solving with"
    return f"{verb} {label.replace('portfolio ', '')} (timeout {timeout:g} s)"


def with_script_output(args: argparse.Namespace, run: Callable[[argparse.Namespace, TextIO], int]) -> int:
    """``run(args, script_out)`` with ``--emit-smt2`` checked first; for ``--emit-smt2 -`` the script goes to standard
    output and the report to stderr (``--json`` then refused: both would be standard output's)."""
    if args.emit_smt2 is None or not is_stdout(args.emit_smt2):
        if args.emit_smt2 is not None:
            check_output(args.emit_smt2, "--emit-smt2", "a file for the SMT-LIB2 script (x.smt2)")
        return run(args, sys.stdout)
    if args.json:
        raise InputError("--json prints the result on standard output, where --emit-smt2 - writes the script: "
                         "give --emit-smt2 FILE")
    script_out = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):  # the script is standard output's; the report goes to stderr
        return run(args, script_out)


def unknown_note(reason: str) -> None:
    """The error line for a query no solver decided, with what to try next."""
    if reason.startswith("not covered"):  # no prover for the model's kind: more time would not help
        print_error(f"no answer: {reason}")
        return
    print_error(f"no answer: {reason or 'the solver gave up'}; try a larger --timeout, a smaller --domain "
                "or --solver portfolio")
