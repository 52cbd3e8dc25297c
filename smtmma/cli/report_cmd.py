"""``smtmma report``: claims, catalogue properties and plots as one HTML page or a Markdown file with PNGs."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Optional

from ..errors import InputError
from .common import EXIT_OK, positive_draws_arg, seconds_arg, seed_arg
from .progress import Status

_EPILOG = """\
contents: the claims table (claim, source, models, expected and obtained
verdict, agreement, solver, seconds, witness in hex and decimal); every
catalogue row grouped by distinct model, with its properties (symmetric?
monotone? carry bits needed, error bound) taken from the claims that decide
them, else from the property table (--table FILE.json, the output of 'smtmma
prove --catalogue --json'; by default the shipped proofs/catalogue.json): a
proof, a witness, "n/a" with why, "unknown" with why, or "not run" with the
command that decides it; two plots: the CDNA3 round-down bias of the
MMA-Sim paper's §6.2.4 (Fig. 3) reproduced by simulation, and every
architecture's f16f32 error distribution against exact arithmetic on the
same random inputs.

format: by the suffix of -o: .html (one self-contained file, PNGs embedded
as data URIs) or .md (PNGs written beside it as NAME-cdna3-bias.png and
NAME-f16f32-errors.png, and linked).  Plots need matplotlib
(pip install 'smtmma[report]'); the simulations use the compiled kernels
where a C compiler is found and a fixed seed, so a report is reproducible.

claims: --claims FILE.json reads saved results of 'smtmma prove --all --json';
by default the results shipped with smtmma's sources (proofs/claims.json) are
read, so a report takes seconds.  Where they are not (an installed package has
no proofs/ folder) a one-line note says so and every claim is run now (minutes;
a status line shows which, on a terminal).  --only NAME,... runs some claims
now; --no-claims leaves them out.

examples:
  smtmma report -o report.html                  the shipped claim results
  smtmma prove --all --json > claims.json && smtmma report --claims claims.json -o report.html
  smtmma report --claims claims.json -o docs/report.md --samples 20000
  smtmma report --no-claims -o plots.html       catalogue and plots only
  smtmma report --only nvidia-symmetry,cdna3-asymmetry -o sym.html"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``report`` subcommand to ``sub``."""
    p = sub.add_parser("report", help="an HTML or Markdown report: claims, catalogue properties, error plots",
                       description="Write a report: the claims table, the catalogue with each model's properties, "
                       "and plots of simulated errors (CDNA3 round-down bias, f16f32 errors of every architecture).",
                       epilog=_EPILOG, formatter_class=fmt)
    p.add_argument("-o", "--output", required=True, help="report file: .html or .md")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--claims", metavar="FILE.json",
                     help="saved output of 'smtmma prove --all --json' (default: the shipped proofs/claims.json)")
    src.add_argument("--only", metavar="NAME,...", help="run these claims now")
    src.add_argument("--no-claims", action="store_true", help="no claims: catalogue and plots only")
    p.add_argument("--table", metavar="FILE.json",
                   help="saved output of 'smtmma prove --catalogue --json': the catalogue's property cells no claim "
                   "decides (default: the shipped proofs/catalogue.json)")
    p.add_argument("--solver", help="backend for claims run now (default: the preferred one)")
    p.add_argument("--timeout", type=seconds_arg, default=60.0, help="seconds per solver call for claims run now (default 60)")
    p.add_argument("--samples", type=positive_draws_arg, default=None,
                   help="dot products of the bias experiment (default 60000; the f16f32 comparison uses a third)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--no-plots", action="store_true", help="leave the plots out (no matplotlib needed)")
    p.add_argument("--json", action="store_true", help="print a JSON summary (files written, claims, seconds)")
    p.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from ..report import DEFAULT_SAMPLES, build, check_output, load_records, write_report
    from ..report.data import load_table, shipped_claims, shipped_table

    check_output(args.output)  # a bad suffix or a folder that is not there fails before any work
    t0 = time.perf_counter()
    names = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    if args.only is not None and not names:
        raise InputError("--only is empty; give claim names (see 'smtmma prove --list')")
    shipped = None if (args.claims or args.no_claims or args.only) else shipped_claims()
    if args.claims:
        records, origin = load_records(args.claims), args.claims
    elif args.no_claims:
        records, origin = [], ""
    elif shipped is not None:
        records, origin = load_records(str(shipped)), "proofs/claims.json (shipped)"
    else:
        if not args.only:
            print("smtmma: note: no shipped proofs/claims.json (an installed package); running every claim now, "
                  "which takes minutes (--claims FILE.json or --no-claims to skip)", file=sys.stderr)
        records, origin = _run_claims(names, args), "run now"
    table = args.table or shipped_table()
    cells = load_table(str(table)) if table else []
    table_from = args.table or ("proofs/catalogue.json (shipped)" if table else "")
    t1 = time.perf_counter()
    with Status() as status:
        status("simulating and plotting")
        rep = build(records, samples=args.samples or DEFAULT_SAMPLES, seed=args.seed, plots=not args.no_plots,
                    claims_from=origin, cells=cells, table_from=table_from)
        files = write_report(rep, args.output)
    t2 = time.perf_counter()
    if args.json:
        print(json.dumps({"files": [str(f) for f in files], "claims": len(records), "claims_seconds": round(t1 - t0, 3),
                          "plots_seconds": {k: round(v, 3) for k, v in rep.timings.items()},
                          "seconds": round(t2 - t0, 3)}, indent=2))
    else:
        print(f"wrote {', '.join(str(f) for f in files)} ({len(records)} claims, {len(rep.groups)} models, "
              f"{len(rep.figures)} plots; {t2 - t0:.1f} s)")
    return EXIT_OK


def _run_claims(names: Optional[list[str]], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Claim records run now (None: every claim), with a status line (on a terminal) naming the claim under way."""
    from .. import report
    from ..proofs.runner import select

    total = len(select(list(names or ()), all_claims=not names))
    done = 0

    def progress(c: Any, rec: Optional[dict[str, Any]]) -> None:
        nonlocal done
        if rec is None:
            status(f"running claims: [{done + 1}/{total}] {c.name}")
        else:
            done += 1

    with Status(delay=0.5) as status:
        return report.run_claims(names, solver=args.solver, timeout=args.timeout, progress=progress)
