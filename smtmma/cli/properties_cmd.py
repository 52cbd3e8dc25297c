"""``smtmma hw properties``: put the property table's cells to a device, or judge a recording (:mod:`smtmma.hw.properties`)."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any, Optional

from ..catalogue import resolve_arch
from ..errors import InputError
from ..hw.properties import (DEFAULT_NEAR, DEFAULT_PAIRS, PropertyCase, PropertyRow, judge, load_cells, property_cases,
                             property_lines, summary_markdown)
from ..hw.record import record_vectors
from ..vectors import parse_line, read_vectors
from .common import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, print_error
from .device_options import open_for
from .output import check_output, output_folder

EPILOG = """\
Every cell of the catalogue's property table (proofs/catalogue.json, or --table
FILE from 'smtmma prove --catalogue --json') states something about one model at
one length K.  For each instruction shape of the device whose model is the
cell's, the command writes vectors that put the statement to the device and
judges the bits it returns:
  symmetry (holds)        random finite inputs and (-A, B, -C): D' = -D as values
  monotonicity (holds)    random non-negative inputs and one input raised to its
                          next pattern: D' >= D, neither a NaN
  error-bound (holds)     random finite inputs, and --near inputs the simulator's
                          search finds closest to the bound: |D - exact| <= the
                          cell's bound (a non-finite D is outside its scope)
  witnesses               a refuted monotonicity or error bound: the device shows
                          the refutation; a carry-bit witness: the model's D
DIR gets properties.jsonl (the lines with the device's d: 'smtmma check' them too),
summary.md and summary.json ({"gpu", "rows": [{"cell", "verdict", "op", "test",
"tried", "agree", "notes"}]}).  --recorded FILE judges a recording made before
(no device).  Nothing on this path needs a solver.
Exit status: 0 the device agrees with every cell it was tried on, 1 some case
disagrees, 2 bad input or nothing could be tried.

examples:
  smtmma hw properties --device cuda -o h100-properties/
  smtmma hw properties --device sim:sm90 --pairs 16             rehearse on the simulator
  smtmma hw properties --recorded h100-properties/properties.jsonl
  smtmma hw properties --arch sm90 --write props.jsonl          vectors only, for a GPU elsewhere"""


def add_arguments(p: argparse.ArgumentParser, path_arg: Any, draws_arg: Any, seed_arg: Any) -> None:
    """The options of ``hw properties``."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--device", metavar="DEVICE", help="cuda[:N], hip[:N], or sim:ARCH to rehearse on the simulator")
    src.add_argument("--recorded", type=path_arg, metavar="FILE",
                     help="judge these recorded lines (a properties.jsonl written before) instead of running a device")
    src.add_argument("--write", type=path_arg, metavar="FILE",
                     help="only write the vectors for --arch to FILE (run them with 'smtmma run', judge with --recorded)")
    p.add_argument("--arch", metavar="ARCH", help="the architecture whose cells --write writes (sm90, h100, gfx90a)")
    p.add_argument("-o", "--output", type=path_arg, metavar="DIR",
                   help="folder for properties.jsonl, summary.md and summary.json (created)")
    p.add_argument("--table", type=path_arg, metavar="FILE",
                   help="the property table ('smtmma prove --catalogue --json'; default: the shipped proofs/catalogue.json)")
    p.add_argument("--instr", action="append", metavar="INSTR", help="only this instruction type (repeatable)")
    p.add_argument("--pairs", type=draws_arg, default=DEFAULT_PAIRS, metavar="N",
                   help=f"random cases per cell and instruction shape (default {DEFAULT_PAIRS})")
    p.add_argument("--near", type=draws_arg, default=DEFAULT_NEAR, metavar="N",
                   help=f"inputs searched close to each proved error bound (default {DEFAULT_NEAR}; about 1-2 s each)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the random cases and searches (default 0)")
    p.add_argument("--json", action="store_true", help="print summary.json's object instead of the table")


def run_properties(args: argparse.Namespace) -> int:
    """The ``hw properties`` command."""
    if args.write is not None:
        return _write(args)
    if args.arch is not None:
        raise InputError("--arch goes with --write (a device names its own architecture; a recording names its own)")
    out = None if args.output is None else output_folder(args.output, "-o", "a folder for the recording (properties/)")
    cells = load_cells(args.table)
    gpu = ""
    if args.recorded is not None:
        lines = read_vectors(args.recorded)
        gpu = str(next((v.raw.get("gpu") for v in lines if v.raw.get("gpu")), args.recorded))
    else:
        lines, gpu = _record(args, cells, out)
    rows = judge(lines, cells)
    if not rows or not any(r.tried for r in rows):
        print_error("no property case to judge: no line carries a complete case of a table cell (with --device: "
                    "raise --pairs, or pick instructions whose cells hold or have witnesses)")
        return EXIT_USAGE
    summary = {"gpu": gpu, "rows": [r.as_dict() for r in rows]}
    if out is not None:
        try:
            (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
            (out / "summary.md").write_text(summary_markdown(rows, gpu), encoding="utf-8")
        except OSError as e:
            raise InputError(f"-o {out}: cannot write the summary ({e.strerror or e})") from None
    if args.json:
        print(json.dumps(summary))
    else:
        _print(rows, gpu)
    return EXIT_OK if all(r.agrees for r in rows if r.tried) else EXIT_MISMATCH


def _write(args: argparse.Namespace) -> int:
    if args.arch is None:
        raise InputError("--write needs --arch: the architecture whose cells to write (e.g. --arch sm90)")
    if args.output is not None:
        raise InputError("-o goes with --device or --recorded; --write FILE is the only output here")
    check_output(args.write, "--write", "a file for the vectors (props.jsonl)")
    cases = _cases(resolve_arch(args.arch), load_cells(args.table), args)
    recs = property_lines(cases, args.pairs, args.seed, args.near)
    text = "".join(json.dumps(r) + "\n" for r in recs)
    if args.write == "-":
        sys.stdout.write(text)
        return EXIT_OK
    try:
        Path(args.write).write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(f"--write {args.write}: cannot write ({e.strerror or e})") from None
    print(f"{len(cases)} cell x shape cases, {len(recs)} lines written to {args.write}; next: "
          f"smtmma run --device cuda {args.write} -o rec.jsonl && smtmma hw properties --recorded rec.jsonl")
    return EXIT_OK


def _record(args: argparse.Namespace, cells: list[dict[str, Any]], out: Optional[Path]) -> tuple[list, str]:
    device = open_for(args.device)
    try:
        if device.arch is None:
            raise InputError(f"device {args.device} has no architecture: give cuda, hip or sim:ARCH")
        cases = _cases(device.arch, cells, args)
        recs = property_lines(cases, args.pairs, args.seed, args.near)
        vs = [parse_line(json.dumps(r), i + 1) for i, r in enumerate(recs)]
        print(f"{len(cases)} cell x shape cases, {len(vs)} lines on {device.description}", file=sys.stderr, flush=True)

        def progress(done: int, total: int) -> None:
            if total > 4096:
                print(f"  {done}/{total} lines", file=sys.stderr, flush=True)

        fh = io.StringIO()
        rep = record_vectors(device, vs, fh, 4096, progress)
        text = fh.getvalue()
        if out is not None:
            try:
                (out / "properties.jsonl").write_text(text, encoding="utf-8")
            except OSError as e:
                raise InputError(f"-o {out}: cannot write the recording ({e.strerror or e})") from None
        if rep.error:
            print_error(f"the device stopped after {rep.written} of {rep.lines} lines: {rep.error}")
        print(f"{rep.written} lines recorded in {rep.seconds:.1f} s", file=sys.stderr, flush=True)
        return [parse_line(t, i + 1) for i, t in enumerate(text.splitlines())], device.description
    finally:
        device.close()


def _cases(arch: str, cells: list[dict[str, Any]], args: argparse.Namespace) -> list[PropertyCase]:
    """The cases of ``arch`` (announced when near-bound searches make them slow); InputError when there are none."""
    cases = property_cases(arch, cells, args.instr)
    if not cases:
        raise InputError(f"the property table has no cell that a {arch} instruction shape runs")
    _announce(cases, args.near)
    return cases


def _announce(cases: list[PropertyCase], near: int) -> None:
    """Say on stderr what the vectors cost when the near-bound searches take more than a moment."""
    bounds = {c.cell["name"] for c in cases if c.prop == "error-bound" and c.cell.get("verdict") == "holds"
              and c.model.scale_fmt is None}
    if near and bounds:
        print(f"searching {near} near-bound input(s) for each of {len(bounds)} proved error bounds "
              f"(about {len(bounds) * near * 1.5:.0f} s; --near 0 skips them)", file=sys.stderr, flush=True)


def _print(rows: list[PropertyRow], gpu: str) -> None:
    agree, tried = sum(r.agree for r in rows), sum(r.tried for r in rows)
    print(f"{gpu}: {len(rows)} cell x shape rows, {agree}/{tried} cases as the table says")
    width = max(len(r.cell) for r in rows)
    for r in rows:
        flag = "" if r.agrees or not r.tried else "   <-- " + (r.notes[0] if r.notes else "disagrees")
        print(f"  {r.cell.ljust(width)}  {r.verdict:<6} {r.op:<42} {r.test:<7} {r.agree}/{r.tried}{flag}")
