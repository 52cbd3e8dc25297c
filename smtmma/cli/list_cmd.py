"""``smtmma list``: print the catalogue (architecture x instruction -> model)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Any

from ..errors import InputError
from ..catalogue import ARCHS, Entry, entries
from .common import EXIT_OK

_LIST_EPILOG = """\
columns: arch, family, instr (input/output types), op (instruction family;
'*' marks the default when a line or command gives no --op), model (kind and
parameters of the MMA-Sim paper), rounding (inside the fused sum -> D at the
end of each FDPA: 'RZ F=25 -> RZ fp32' truncates every term toward zero to
F=25 fraction bits below e_max, then rounds D toward zero to fp32; 'RZ F=24, RD
F2=31 -> RNE fp32' (CDNA3) also rounds the sum and c down, toward -inf, inside,
and D to nearest, ties to even, at the end; '+C RNE': C added last with one
more rounding; 'per op' / 'per FMA': every operation rounds), source (table
or experiment), shapes (mMnNkK of the instructions that run on this datapath).
A family marked '(provisional)' is a unit no recorded output is public of
(sm103, sm110, sm121, gfx950, gfx11, gfx12): its shapes and formats come from
the vendor's ISA documents, its model is the nearest modelled generation's, a
hypothesis; 'smtmma hw survey' on one runs the suite that settles it.
--json gives each object "rounding" (the same in words) and "rounding_short"
(the column).

examples:
  smtmma list                          the whole catalogue
  smtmma list --arch hopper            one architecture (names or aliases: sm90, hopper, h100)
  smtmma list --instr e4m3f32          one instruction type on every architecture
  smtmma list --arch mi300x --json     as a JSON list of objects
  smtmma list --arch cdna3             CDNA3 rounds its sums down inside, and D to nearest
  smtmma list --arch mi355x            CDNA4: provisional rows (documented shapes, CDNA3's model)"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``list`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    pl = sub.add_parser("list", help="print the catalogue: architecture x instruction -> model",
                        description="Print the catalogue: which model each (architecture, instruction, op family) runs.",
                        epilog=_LIST_EPILOG, formatter_class=fmt)
    pl.add_argument("--arch", help="only this architecture (sm90, hopper, h100, gfx942, mi300x, ...)")
    pl.add_argument("--instr", help="only this instruction type (f16f32, bf16f32, e4m3f32, ...)")
    pl.add_argument("--json", action="store_true", help="print a JSON list of objects")
    pl.set_defaults(func=_cmd_list)


def _shape_names(e: Entry) -> list[str]:
    return list(dict.fromkeys(f"m{s.m}n{s.n}k{s.k}" for s in e.shapes))


def _entry_dict(e: Entry) -> dict[str, Any]:
    m = e.model
    out = {
        "arch": e.arch,
        "vendor": ARCHS[e.arch].vendor,
        "family": ARCHS[e.arch].family,
        "provisional": bool(ARCHS[e.arch].provisional),
        **({"documents": ARCHS[e.arch].provisional, "hypothesis_from": ARCHS[e.arch].like} if ARCHS[e.arch].provisional else {}),
        "instr": e.instr,
        "op": e.op,
        "default": e.default,
        "model": m.describe(),
        "kind": m.kind,
        "formats": {"a": m.a_fmt, "b": m.b_fmt, "c": m.c_fmt, "d": m.d_fmt, **({"scale": m.scale_fmt} if m.scale_fmt else {})},
        "source": e.source,
        "shapes": [{"name": s.name, "m": s.m, "n": s.n, "k": s.k} for s in e.shapes],
        "rounding": m.rounding_summary(),
        "rounding_short": m.rounding_summary(short=True),
    }
    return out


def _table(rows: list[list[str]], out: IO[str]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths)] + [r[-1]]
        print("  ".join(cells).rstrip(), file=out)


def _cmd_list(args: argparse.Namespace) -> int:
    for opt, val in (("--arch", args.arch), ("--instr", args.instr)):
        if val is not None and not val.strip():
            raise InputError(f"{opt} is empty; give a name (see 'smtmma list' for them all) or leave the option out")
    rows = entries(args.arch, args.instr)
    if args.json:
        print(json.dumps([_entry_dict(e) for e in rows], indent=2))
        return EXIT_OK
    if not rows:
        what = ", ".join(f"{k} {v}" for k, v in (("arch", args.arch), ("instr", args.instr)) if v)
        print(f"no catalogue rows for {what}")
        return EXIT_OK
    table = [["ARCH", "FAMILY", "INSTR", "OP", "MODEL", "ROUNDING", "SOURCE", "SHAPES"]]
    for e in rows:
        op = e.op + (" *" if e.default else "")
        family = ARCHS[e.arch].family + (" (provisional)" if ARCHS[e.arch].provisional else "")
        table.append([e.arch, family, e.instr, op, e.model.describe(), e.model.rounding_summary(short=True),
                      e.source,
                      " ".join(_shape_names(e)) or "-"])
    _table(table, sys.stdout)
    print(f"\n{len(rows)} rows; * = default op family of (arch, instr)")
    shown = [a for a in dict.fromkeys(e.arch for e in rows) if ARCHS[a].provisional]
    if shown:
        print(f"provisional ({', '.join(shown)}): no recorded hardware output; documented shapes, the model of "
              f"{', '.join(dict.fromkeys(ARCHS[a].like for a in shown))} as a hypothesis; run `smtmma hw survey` on one")
    return EXIT_OK
