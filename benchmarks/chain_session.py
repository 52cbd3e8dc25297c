"""Lemma chains in one incremental solver session against one script per fact.

Run: python benchmarks/chain_session.py [--property symmetry] [--markdown] [ARCH:INSTR[:OP] ...]

A lemma chain (the symmetry proofs, the chained-FDPA facts) checks dozens of
facts about one formula.  Asked as separate scripts, each check re-parses the
formula and re-encodes every term it touches; in a session
(:mod:`smtmma.queries.session`, bitwuzla) the formula is sent once and the
terms are encoded once.  For each model the property is decided twice, with
and without the session, and the table gives both wall times, their ratio,
and whether the two certificates are byte-identical (they must be: the
session changes how facts are asked, not which).
"""

from __future__ import annotations

import argparse
import time

from smtmma.catalogue import lookup
from smtmma.queries import query_algebra
from smtmma.queries.properties import check_property

DEFAULT = ["sm70:f16f32", "sm90:f16f16", "sm90:e4m3e4m3f32:wgmma", "sm100:e4m3e5m2f32:tcgen05", "sm100:nvf4f32:tcgen05",
           "sm90:e5m2e5m2f16:mma"]


def _run(prop: str, model: object, session: bool) -> tuple[float, str, str]:
    saved = query_algebra.Runner.session
    if not session:
        query_algebra.Runner.session = lambda self: None  # type: ignore[method-assign]
    try:
        t0 = time.perf_counter()
        r = check_property(prop, model, solver="bitwuzla", timeout=300)
        return time.perf_counter() - t0, r.verdict, r.smt2
    finally:
        query_algebra.Runner.session = saved  # type: ignore[method-assign]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=DEFAULT, help="ARCH:INSTR[:OP] catalogue rows")
    ap.add_argument("--property", default="symmetry")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    head = ["model", "verdict", "scripts s", "session s", "ratio", "same certificate"]
    rows = []
    for spec in args.models:
        arch, instr, *op = spec.split(":")
        model = lookup(arch, instr, op[0] if op else None).model
        t_script, v1, c1 = _run(args.property, model, False)
        t_session, v2, c2 = _run(args.property, model, True)
        verdict = v1 if v1 == v2 else f"{v1} / {v2}"
        rows.append([spec, verdict, f"{t_script:.1f}", f"{t_session:.1f}", f"{t_script / t_session:.2f}",
                     "yes" if c1 == c2 else "NO"])
    if args.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    for r in [head, *rows]:
        print("  ".join(x.ljust(w) for x, w in zip(r, widths)))


if __name__ == "__main__":
    main()
