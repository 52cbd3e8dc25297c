"""``smtmma identify``: run solver-chosen vectors on a device until one class of candidates is left (or none)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..discriminators.confirmation import CONFIRM_TIMEOUT, DEFAULT_CONFIDENCE, DEFAULT_RATE
from ..discriminators.identify import Identification, identify
from ..errors import InputError
from ..hw.device import SimDevice
from ..queries.formula import parse_domain
from .common import EXIT_MISMATCH, EXIT_OK, EXIT_TIMEOUT, print_error
from .device_options import DEVICE_HELP, add_device_option, open_for
from .progress import Status
from .space_options import SPACE_HELP, add_space_options, space_from_args
from .common import fraction_arg, positive_int_arg, seconds_arg

_IDENTIFY_EPILOG = f"""\
The closed loop of the MMA-Sim paper (§3), with a solver choosing the probes:
each round runs the one vector that best splits the surviving candidates (from a
pool of random and feature-probing inputs, or found by the solver when the pool
cannot split them), keeps the candidates whose output equals the device's, and
stops with one class (every survivor identical to, or proved equivalent with, the
others on the domain) or with none: then the last vector, which no candidate
explains, is printed as a test-vector line -- the start of a model revision.

One class left is not yet an answer: a device that is none of the candidates
can agree with one class on every vector that split them.  So the class is
confirmed before it is named: the device runs, in one batch, a vector for each
structural neighbour of the class (every model one parameter step away -- L,
F, F2, G, P, rho, one carry bit fewer, the alignment floor, zero terms in
e_max, the sign of a zero sum, round-down vs truncation, input FTZ, C added
last; the NaN pattern when --domain allows NaN/Inf -- and each model kind of
the structural grid) on which that neighbour's D differs from the class's
(found by simulation, else by the solver -- --confirm-timeout seconds a call,
one FDPA first when both chain the same FDPA structure -- which may prove the
neighbour equivalent instead), and n random vectors of the domain with
n = ceil(ln(1 - confidence) / ln(1 - rate)): a device that differs from the
class on at least --rate of random inputs passes them all with probability
at most 1 - --confidence (688 vectors at the defaults).  If the device
departs anywhere the verdict is none, with that vector and the candidates and
neighbours that explain the most vectors ("nearest"); when no candidate is left
after a round, the random vectors still run to rank the candidates and the
neighbours of the last survivors the same way.

{DEVICE_HELP}

{SPACE_HELP}

--scheme-grid: which instruction AND which kernel scheme a GEMM callable
(--device python:MODULE:FUNCTION) runs.  The candidates are every model of
--instr (the catalogue, or --candidates / --grid / --vendor) times every
scheme of the grid ('FIELD=V1,V2;FIELD=...', the fields of 'smtmma matmul
--help': promote_every, split_k, partial, reduction, round, c_in, alpha, beta;
combinations a Scheme refuses, such as beta=0.5 with c_in=accumulator, are left
out).  Probe GEMMs run on the device and through smtmma.matmul for each
candidate: a large term then small ones, dot products that split the models
(from identify's input pool), an association probe, cancellation, signed
zeros, N(0, 1), values between operand-format values when the grid rounds,
then 4 random GEMMs.  A candidate is dropped at its first differing output.
The shape is --gemm-shape, else the device's @MxNxK, else 16x16xK with
K >= 512 and K >= 2 x the largest promote_every x the largest split_k.
Candidates are merged only where smtmma.matmul provably computes the same
thing on this shape: split_k=1 with any partial format, promote_every values
at or above a slice's length, catalogue rows with one model.  promote_every
>= K is not merged with none, because the one chain is still added into an
FP32 accumulator from +0, so -0 becomes +0.
Verdicts: identified (one left); none (the nearest by outputs matched);
undecided (several distinct candidates agree on every probe: try another
--gemm-shape).  The verdict comes from probes, not proof, and is relative to
the grid.  A scheme outside the grid that computes the same thing is named by
the one inside it.  --device sim:ARCH[/OP] runs that model's plain chain, with
real operands cast to nearest even: a dry run that shows whether the grid
tells it apart at this shape.
--json with --scheme-grid prints {{"verdict", "candidate": LABEL|null,
"left": [{{"candidate", "models", "k", "scheme", "equivalent_schemes"}}],
"models", "scheme": SPEC|null, "nearest": [{{... "matched", "of"}}],
"probes": [{{"probe", "left", "dropped", "seconds"}}], "shape", "candidates",
"pairs", "seconds"}}.

--json prints one object:
  {{"verdict": "identified"|"none"|"undecided", "models": [MODEL, ...], "vectors_run": N,
   "transcript": [{{"vector": LINE, "d": HEX, "survivors": [MODEL, ...], "source": "pool"|"solver"}}],
   "evidence": [{{"rep", "member", "verdict", "solver", "seconds"}}],
   "confirmation": {{"vectors", "matched", "probes", "random", "rate", "confidence", "neighbours", "split",
                    "equivalent", "unresolved": [SPEC, ...], "proved_equivalent": [{{"model", "solver", "seconds"}}],
                    "seconds", "failure": LINE}},
   "nearest": [{{"model", "explained", "of"}}] (verdict none: up to 5, those explaining at least one
   vector), "seconds", "last_vector"}}
  (catalogue candidates are named ARCH or ARCH/OP, others by their model spec)

exit status: 0 identified, 1 no candidate matches the device, 2 bad input
(unknown device or name, empty candidate set), 3 undecided (a solver gave up: on two
candidates, or on a structural neighbour of the class the device matched; with
--scheme-grid: several candidates agree on every probe).

examples:
  smtmma identify --device sim:sm90 --instr f16f32
  smtmma identify --device cuda --instr bf16f32 --json
  smtmma identify --device sim:t-fdpa:L=16,F=26,rho=rz-fp32 --instr f16f32          (none: prints the vector)
  smtmma identify --device sim:t-fdpa:L=8,F=25,rho=rz-fp32 --instr f16f32 --grid 't-fdpa:L=4,8,16;F=23..26'
  smtmma identify --device python:mylib:gemm --instr f16f32 --scheme-grid 'promote_every=none,32,64,128;split_k=1,2'"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``identify`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    p = sub.add_parser("identify", help="name the model a device implements, one solver-chosen vector at a time",
                       description="Run one vector at a time on a device, drop the candidate models it contradicts, and "
                       "stop with the one class of candidates left, or with none.",
                       epilog=_IDENTIFY_EPILOG, formatter_class=fmt)
    add_device_option(p)
    add_space_options(p)
    p.add_argument("--max-vectors", type=positive_int_arg, default=64, metavar="N",
                   help="give up after N vectors that split candidates (default 64; the confirmation's are extra)")
    p.add_argument("--rate", type=fraction_arg("a disagreement rate in (0, 1)"), default=DEFAULT_RATE, metavar="R",
                   help=f"confirmation: catch a device differing on at least R of random inputs (default {DEFAULT_RATE:g})")
    p.add_argument("--confidence", type=fraction_arg("a confidence in (0, 1)"), default=DEFAULT_CONFIDENCE, metavar="P",
                   help=f"confirmation: ... with probability at least P (default {DEFAULT_CONFIDENCE:g})")
    p.add_argument("--confirm-timeout", type=seconds_arg, default=CONFIRM_TIMEOUT, metavar="SEC",
                   help=f"confirmation: seconds per solver call on a neighbour no simulated input splits (default "
                        f"{CONFIRM_TIMEOUT:g}, at most --timeout)")
    p.add_argument("--scheme-grid", metavar="GRID", help="identify the kernel scheme too: 'promote_every=none,64;"
                   "split_k=1,2;round=rne,rna' (a python: device; see below)")
    p.add_argument("--gemm-shape", metavar="MxNxK", help="with --scheme-grid: the probe GEMMs' shape (default 16x16xK, "
                   "K from the grid: see below)")
    p.set_defaults(func=_cmd_identify)


def _vectors(n: int) -> str:
    return f"{n} vector{'s' if n != 1 else ''}"


def _print(r: Identification) -> None:
    for i, rnd in enumerate(r.rounds, start=1):
        rec = json.loads(rnd.vector)
        shown = ", ".join(rnd.survivors[:8]) + (f", ... ({len(rnd.survivors)} in all)" if len(rnd.survivors) > 8 else "")
        print(f"vector {i} ({rnd.source}): device d = {r.d_hex(rnd.d)}; "
              f"{len(set(rec['expect'].values()))} distinct expectations; left: {shown or 'none'}")
    c = r.confirmation
    if c is not None:
        print(f"confirmation: {c.vectors} vectors ({c.plan.probes} probes, {c.plan.random} random), "
              f"{c.matched} matched; {c.scope()}")
    open_ = [n.name for n in c.plan.neighbours if n.status == "unresolved"] if c is not None else []
    if r.verdict == "identified":
        print(f"identified: {' = '.join(r.models)}  ({_vectors(r.vectors_run)}, {r.seconds:.1f} s)")
        proofs = [e for e in r.evidence if e.verdict == "unsat"]
        if proofs:
            print(f"  equivalent on the domain (solver unsat): {', '.join(e.member for e in proofs)}")
    elif r.verdict == "none":
        if c is not None:
            print(f"none: the device matched {' = '.join(r.models)} on every vector that split the candidates, but not "
                  f"on {c.vectors - c.matched} of {c.vectors} confirmation vectors ({r.seconds:.1f} s); the first:")
        else:
            print(f"none: no candidate gives the device's output ({_vectors(len(r.rounds))}"
                  f"{f', then {r.ranking_vectors} random ones to rank the nearest models' if r.ranking_vectors else ''}, "
                  f"{r.seconds:.1f} s); the vector:")
        print(r.last_vector)
        if r.nearest:
            print("nearest (vectors explained): " + ", ".join(f"{m} {k}/{n}" for m, k, n in r.nearest))
    elif open_:
        print(f"undecided: the device matched {' = '.join(r.models)} on all {_vectors(r.vectors_run)}, but "
              f"{len(open_)} structural neighbour{'s' if len(open_) > 1 else ''} of it could not be told apart (the "
              f"solver gave up, {r.seconds:.1f} s): {', '.join(open_)}")
    else:
        print(f"undecided: {', '.join(r.models)} left ({_vectors(len(r.rounds))}, {r.seconds:.1f} s)")


def _gemm_shape(text: str) -> tuple[int, int, int]:
    parts = text.strip().lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and 1 <= int(p) <= 4096 for p in parts):
        raise InputError(f"--gemm-shape must be MxNxK, three ints in 1..4096, got {text!r}")
    return int(parts[0]), int(parts[1]), int(parts[2])


def _cmd_identify_scheme(args: argparse.Namespace) -> int:
    from ..discriminators.scheme_identify import identify_scheme, parse_grid

    schemes = parse_grid(args.scheme_grid)
    shape = _gemm_shape(args.gemm_shape) if args.gemm_shape else None
    space = space_from_args(args)
    device = open_for(args.device)
    try:
        gemm = _gemm_device(device, space.instr)
        with Status() as status:
            r = identify_scheme(gemm, space.instr, schemes, candidates=space, shape=shape, seed=args.seed or 0,
                                progress=status)
    finally:
        device.close()
    if args.json:
        print(json.dumps(r.to_dict()))
    else:
        _print_scheme(r)
    if r.verdict == "none":
        return EXIT_MISMATCH
    if r.verdict == "undecided":
        print_error("undecided: the probes cannot tell the candidates left apart (try another --gemm-shape, e.g. a "
                    "larger K)")
        return EXIT_TIMEOUT
    return EXIT_OK


def _gemm_device(device: Any, instr: str) -> Any:
    """The device as a GEMM callable: python: devices are; sim:ARCH[/OP] runs its model's plain chain."""
    from ..gemm import matmul
    from ..hw.python_device import CallableDevice

    if isinstance(device, CallableDevice):
        return device
    if isinstance(device, SimDevice) and device.arch is not None:
        arch, op = device.arch, device.op
        # a cast of real operands: to nearest even (the plain chain has no rounding of its own to show)
        return CallableDevice(lambda A, B, C: matmul(arch, instr, A, B, C, op=op, round="rne"), name=device.name)
    raise InputError(f"--scheme-grid identifies a GEMM: --device {device.name} runs single instructions; use "
                     "--device python:MODULE:FUNCTION (your GEMM) or sim:ARCH (a dry run of the plain chain)")


def _print_scheme(r: Any) -> None:
    for p in r.probes:
        print(f"probe {p['probe']}: {p['left']} of {r.candidates} candidates left ({p['seconds']:.1f} s)")
    M, N, K = r.shape
    gemms = f"{len(r.probes)} GEMMs of {M}x{N}x{K}, {r.candidates} candidates from {r.pairs} pairs, {r.seconds:.1f} s"

    def same(c: Any) -> str:
        others = [s.spec() for s in c.schemes if s != c.scheme]
        return f" (on this shape the same as: {'; '.join(others)})" if others else ""

    if r.verdict == "identified":
        print(f"identified: {r.left[0].label}  ({gemms}){same(r.left[0])}")
    elif r.verdict == "none":
        print(f"none: no candidate gives the device's outputs ({gemms})")
        print("nearest (outputs matched): " + ", ".join(f"{c.label} {c.outputs - c.mismatches}/{c.outputs}"
                                                      for c in r.nearest))
    else:
        print(f"undecided: {len(r.left)} candidates agree on every probe ({gemms}):")
        for c in r.left:
            print(f"  {c.label}{same(c)}")
        if r.scheme is not None:
            print(f"  the scheme is told: {r.scheme.spec()}; the instruction is not")


def _cmd_identify(args: argparse.Namespace) -> int:
    if args.scheme_grid is not None:
        return _cmd_identify_scheme(args)
    if args.gemm_shape is not None:
        raise InputError("--gemm-shape goes with --scheme-grid")
    space = space_from_args(args)
    domain = parse_domain(args.domain)
    device = open_for(args.device)
    try:
        with Status() as status:
            r = identify(device, space, K=args.k, domain=domain, pool_size=args.pool, seed=args.seed, solver=args.solver,
                         timeout=args.timeout, max_vectors=args.max_vectors, rate=args.rate, confidence=args.confidence,
                         confirm_timeout=args.confirm_timeout, progress=status)
    finally:
        device.close()
    if args.json:
        print(json.dumps(r.to_dict()))
    else:
        _print(r)
    if r.verdict == "none":
        return EXIT_MISMATCH
    if r.verdict == "undecided":
        if r.confirmation is not None:
            why = "the confirmation could not tell some structural neighbours from the class (try a larger --confirm-timeout)"
        elif any(e.verdict == "unknown" for e in r.evidence):
            why = "a solver gave up on some pair (try a larger --timeout)"
        else:
            why = f"--max-vectors {args.max_vectors} ran out"
        print_error(f"undecided: {why}")
        return EXIT_TIMEOUT
    return EXIT_OK
