"""The ``smtmma`` command line: a thin argparse layer over the library.

Subcommands: ``list`` (the catalogue), ``simulate`` (one dot product),
``check`` (test-vector files against the models), ``distinguish`` (a
solver's inputs on which models differ, or a proof of equivalence) and
``query`` (a property of one model: proof or witness).  Every command speaks
``--json``.  :func:`main` returns the exit status (it never raises for user
errors and never prints a traceback for them):

* 0 -- success;
* 1 -- ``check`` found mismatches;
* 2 -- usage or input error (unknown name, malformed value, missing file, bad
  line, bad or empty domain, no solver backend installed);
* 3 -- a solver gave up (timeout or resource limit): the verdict is unknown.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
from fractions import Fraction
from typing import IO, Any, NoReturn, Optional, Sequence

import numpy as np

from . import __version__
from .catalogue import ARCHS, INSTRS, Entry, entries, lookup, model_of, resolve_arch, resolve_instr
from .check import CheckReport, FileReport, check_files, json_value
from .errors import InputError, NotRepresentableError, SmtmmaError, UnknownNameError
from .formats import Format, format_hex, from_fraction, get_format, parse_hex, parse_value, to_float
from .models import KINDS, Model, parse_model_spec
from .queries.backends import BACKENDS, NoBackendError, available, default_backend
from .queries.distinguish import (
    DistinguishResult,
    EmptyDomainError,
    distinguish,
    replay,
    smt2_file_text,
    ulp_distance,
)
from .queries.formula import Domain, parse_domain
from .simulate import output_format, simulate_dot
from .vectors import VectorFormats, dump_vector, vector_formats

__all__ = ["main", "build_parser", "parse_cli_value", "EXIT_OK", "EXIT_MISMATCH", "EXIT_USAGE", "EXIT_TIMEOUT"]

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 3

_EXIT_CODES = """\
exit status:
  0  success
  1  check: some line's simulated D differs from its recorded d
  2  usage or input error (unknown name, malformed value, missing file, bad line)
  3  a solver gave up (timeout or resource limit; distinguish, query)"""

_TOP_EPILOG = f"""\
examples:
  smtmma list --arch h100                 what the H100 tensor cores run
  smtmma simulate --arch sm90 --instr f16f32 --a 1,2^-10 --b 1,2^-10 --c 0
  smtmma check logs/*.jsonl               compare recorded GPU outputs with the models
  smtmma distinguish sm80 sm90 --instr f16f32          inputs on which A100 and H100 differ
  smtmma distinguish sm80 t-fdpa:F=25 --instr f16f32 --domain exp=-8:8
  smtmma query carry-bits --arch volta --instr f16f32  do Volta's carry bits suffice?

Run 'smtmma COMMAND --help' for the options and examples of each command.

{_EXIT_CODES}"""

_LIST_EPILOG = """\
columns: arch, family, instr (input/output types), op (instruction family;
'*' marks the default when a line or command gives no --op), model (kind and
parameters of the MMA-Sim paper), source (table or experiment), shapes
(mMnNkK of the instructions that run on this datapath).

examples:
  smtmma list                          the whole catalogue
  smtmma list --arch hopper            one architecture (names or aliases: sm90, hopper, h100)
  smtmma list --instr e4m3f32          one instruction type on every architecture
  smtmma list --arch mi300x --json     as a JSON list of objects"""

_SIM_EPILOG = """\
values (comma-separated lists for --a/--b, one value for --c):
  0x3c00           hex bit pattern in the operand's format (always safe)
  3c00             hex too: a token of hex digits that is not all decimal digits
  1000             a decimal integer: tokens of digits 0-9 only are decimal;
                   write 0x1000 for the bit pattern.  Next to bare hex values,
                   a digits-only token as wide as the format's hex (1400 in
                   fp16) is refused as ambiguous: write 0x1400 or 1400.0
  1.5  -0.25  3/4  exact decimals or fractions (must be exactly representable;
                   0.1 in fp16 is an error, not a rounding)
  2^-24  -2^3      powers of two
  inf  -inf  nan  -0
  Scientific notation needs a point or a sign in it (1.5e3, 1e+3): '1e3' is hex.
  A TF32 operand given as 8 hex digits is an FP32 pattern whose 13 low bits
  are dropped, as the hardware does.
  Negative first values work both as '--a -1,2' and '--a=-1,2'.

output: the model used, the operands and D, in hex and as decimals.
--json: {"arch", "instr", "op", "model", "a", "b", "c", "d", "d_value"}; hex
strings in each operand's format; d_value is a number, or "nan", "inf", "-inf".

examples:
  smtmma simulate --arch sm90 --instr f16f32 --a 1,2^-10 --b 1,2^-10 --c 0
  smtmma simulate --arch a100 --instr f16f16 --a 0x3c00,0x1400 --b 3c00,0x1400 --c 0 --json
  smtmma simulate --arch sm90 --instr e4m3f32 --op wgmma --a 1,1 --b 0.5,-0.5 --c 2^-20
  smtmma simulate --arch sm100 --instr mxe4m3f32 --a 1 --b 1 --c 0 --scale-a 2 --scale-b 1
  smtmma simulate --arch sm90 --instr f16f32 --model t-fdpa:F=26 --a 1,2^-24 --b 1,1 --c 0"""

_CHECK_EPILOG = """\
Each FILE is JSON Lines, one dot product per line, bit patterns in hex:
  {"arch": "sm90", "instr": "f16f32", "a": ["3c00", "1400"], "b": ["3c00", "1400"],
   "c": "00000000", "d": "3f800008"}
optional: "op" (mma, wgmma, tcgen05, mfma, ...; default: the catalogue's), "scale_a",
"scale_b" (block-scaled instructions), "expect", "gpu", "note"; other fields are ignored.
Lines without "d" are counted as 'no expectation'. A bad line is reported and
the check goes on.

--json prints one object:
  {"files": [{"file", "lines", "matched", "mismatched", "errors", "no_expectation",
              "mismatches": [{"line", "expected", "got", "a", "b", "c", ...}],
              "error_messages": [{"line", "message"}]}],
   "lines", "matched", "mismatched", "errors", "no_expectation"}

exit status: 0 all lines match, 1 some line mismatched, 2 no mismatch but some
line (or file) could not be read.

examples:
  smtmma check h100-run.jsonl
  smtmma check logs/*.jsonl --json > report.json
  smtmma check big.jsonl --max-mismatches 100"""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line on stderr and status 2."""

    def error(self, message: str) -> NoReturn:
        _print_error(f"{message} (see '{self.prog} --help')")
        raise SystemExit(EXIT_USAGE)


def _print_error(message: str) -> None:
    one_line = " ".join(str(message).split())
    print(f"smtmma: error: {one_line}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``smtmma`` command."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(
        prog="smtmma",
        description="Bit-accurate models of GPU matrix units (NVIDIA Tensor Cores, AMD Matrix Cores): "
        "simulate MMA instructions, check recorded hardware outputs, and ask an SMT solver where models "
        "differ or whether a property holds.",
        epilog=_TOP_EPILOG,
        formatter_class=fmt,
    )
    p.add_argument("--version", action="version", version=f"smtmma {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    pl = sub.add_parser("list", help="print the catalogue: architecture x instruction -> model",
                        description="Print the catalogue: which model each (architecture, instruction, op family) runs.",
                        epilog=_LIST_EPILOG, formatter_class=fmt)
    pl.add_argument("--arch", help="only this architecture (sm90, hopper, h100, gfx942, mi300x, ...)")
    pl.add_argument("--instr", help="only this instruction type (f16f32, bf16f32, e4m3f32, ...)")
    pl.add_argument("--json", action="store_true", help="print a JSON list of objects")
    pl.set_defaults(func=_cmd_list)

    ps = sub.add_parser("simulate", help="simulate one dot product d = c + sum a_k b_k",
                        description="Simulate one dot product d = c + sum_k a_k * b_k, bit for bit.",
                        epilog=_SIM_EPILOG, formatter_class=fmt)
    ps.add_argument("--arch", required=True, help="architecture (sm80, sm90, h100, gfx942, ...)")
    ps.add_argument("--instr", required=True, help="instruction type (f16f32, bf16f32, e4m3f32, ...)")
    ps.add_argument("--op", help="op family (mma, wgmma, tcgen05, mfma, mfma_1k) or an instruction name; "
                    "default: the catalogue's default")
    ps.add_argument("--model", metavar="SPEC", help="override the catalogue's model, e.g. t-fdpa:F=26 "
                    "(parameters not given keep the catalogue's values)")
    ps.add_argument("--a", required=True, metavar="V1,V2,...", help="the K values of A (format of the instruction's A)")
    ps.add_argument("--b", required=True, metavar="V1,V2,...", help="the K values of B")
    ps.add_argument("--c", required=True, metavar="V", help="the accumulator C")
    ps.add_argument("--scale-a", metavar="S1,...", help="block scales of A (block-scaled instructions)")
    ps.add_argument("--scale-b", metavar="S1,...", help="block scales of B")
    ps.add_argument("--json", action="store_true", help="print one JSON object")
    ps.set_defaults(func=_cmd_simulate)

    pc = sub.add_parser("check", help="check test-vector files (JSON Lines) against the models",
                        description="Simulate every line of each FILE and compare with its recorded d, bit for bit.",
                        epilog=_CHECK_EPILOG, formatter_class=fmt)
    pc.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines test-vector file")
    pc.add_argument("--json", action="store_true", help="print one JSON object")
    pc.add_argument("--max-mismatches", type=_non_negative, default=10, metavar="N",
                    help="mismatches (and bad lines) reported per file (default 10)")
    pc.set_defaults(func=_cmd_check)
    _add_solver_parsers(sub, fmt)
    return p


def _non_negative(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return n


# ------------------------------------------------------------------ list

def _shape_names(e: Entry) -> list[str]:
    return list(dict.fromkeys(f"m{s.m}n{s.n}k{s.k}" for s in e.shapes))


def _entry_dict(e: Entry) -> dict[str, Any]:
    m = e.model
    return {
        "arch": e.arch,
        "vendor": ARCHS[e.arch].vendor,
        "family": ARCHS[e.arch].family,
        "instr": e.instr,
        "op": e.op,
        "default": e.default,
        "model": m.describe(),
        "kind": m.kind,
        "formats": {"a": m.a_fmt, "b": m.b_fmt, "c": m.c_fmt, "d": m.d_fmt, **({"scale": m.scale_fmt} if m.scale_fmt else {})},
        "source": e.source,
        "shapes": [{"name": s.name, "m": s.m, "n": s.n, "k": s.k} for s in e.shapes],
    }


def _table(rows: list[list[str]], out: IO[str]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths)] + [r[-1]]
        print("  ".join(cells).rstrip(), file=out)


def _cmd_list(args: argparse.Namespace) -> int:
    rows = entries(args.arch, args.instr)
    if args.json:
        print(json.dumps([_entry_dict(e) for e in rows], indent=2))
        return EXIT_OK
    if not rows:
        what = ", ".join(f"{k} {v}" for k, v in (("arch", args.arch), ("instr", args.instr)) if v)
        print(f"no catalogue rows for {what}")
        return EXIT_OK
    table = [["ARCH", "FAMILY", "INSTR", "OP", "MODEL", "SOURCE", "SHAPES"]]
    for e in rows:
        op = e.op + (" *" if e.default else "")
        table.append([e.arch, ARCHS[e.arch].family, e.instr, op, e.model.describe(), e.source,
                      " ".join(_shape_names(e)) or "-"])
    _table(table, sys.stdout)
    print(f"\n{len(rows)} rows; * = default op family of (arch, instr)")
    return EXIT_OK


# ------------------------------------------------------------------ simulate

_ALL_HEX = re.compile(r"[0-9a-fA-F]+")
_ALL_DEC = re.compile(r"[0-9]+")


def parse_cli_value(fmt: Format, token: str, field: str = "value") -> int:
    """Bits of a command-line value in ``fmt``: hex or exact decimal (see ``smtmma simulate --help``).

    A token of hex digits only is hex unless it is all decimal digits
    (``3c00`` and ``1e5`` are hex, ``1000`` is the integer 1000); ``0x`` forces
    hex; anything else goes to :func:`~smtmma.formats.parse_value`.
    """
    t = token.strip()
    if not t:
        raise InputError(f"{field}: empty value")
    if _ALL_HEX.fullmatch(t) and not _ALL_DEC.fullmatch(t):
        return parse_hex(fmt, t, field=field)
    try:
        return parse_value(fmt, t, field=field)
    except InputError as e:
        if not str(e).startswith(f"{field}: "):  # e.g. "format e4m3 has no infinity"
            raise type(e)(f"{field}: {e}") from None
        if not isinstance(e, NotRepresentableError):
            raise
        q = _as_fraction(t)
        if q is not None and q < 0 and "negative" in str(e):
            raise NotRepresentableError(f"{field}: {t} is negative; {fmt.name} is unsigned") from e
        if q is None or "not exactly representable" not in str(e):
            raise
        raise NotRepresentableError(f"{field}: {t} is not exactly representable in {fmt.name}{_hint(fmt, q)}") from e


_POW2 = re.compile(r"([+-]?)2\^\(?([+-]?\d+)\)?")


def _as_fraction(t: str) -> Optional[Fraction]:
    """``t`` as a Fraction (decimal, fraction or power of two), None if it is none of those."""
    m = _POW2.fullmatch(t)
    if m:
        return Fraction(2) ** int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
    try:
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        return None


def _hint(fmt: Format, q: Fraction) -> str:
    """`` (nearest: ...)``: the representable values around ``q``, for error messages."""
    sign = -1 if q < 0 else 1
    mag = abs(q)
    if mag == 0 or not fmt.signed and sign < 0:
        return ""
    top = Fraction(fmt.max_sig) * Fraction(2) ** (fmt.emax - fmt.man_bits)
    if mag > top:
        return f" (largest finite: {_display(fmt, from_fraction(fmt, sign * top))})"
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    ulp = Fraction(2) ** (max(e, fmt.emin) - fmt.man_bits)
    lo = (mag // ulp) * ulp
    near = []
    for v in (lo, lo + ulp):
        try:
            near.append(from_fraction(fmt, "-0" if v == 0 and sign < 0 else sign * v))
        except SmtmmaError:
            pass
    near.sort(key=lambda x: to_float(fmt, x))
    return f" (nearest: {' and '.join(_display(fmt, x) for x in near)})" if near else ""


def _tokens(fmt: Format, text: str, opt: str) -> list[tuple[Format, str, str]]:
    parts = text.split(",")
    return [(fmt, p.strip(), f"{opt}[{i}]" if len(parts) > 1 else opt) for i, p in enumerate(parts)]


def _check_ambiguous(tokens: list[tuple[Format, str, str]]) -> None:
    """Refuse a digits-only token that reads as a different pattern in hex when other tokens are bare hex.

    ``--a 3c00,1400`` most likely means two hex patterns, but ``1400`` is the
    decimal 1400 by the rule; rather than answer silently for another input,
    ask for ``0x1400`` or ``1400.0``.
    """
    if not any(_ALL_HEX.fullmatch(t) and not _ALL_DEC.fullmatch(t) for _, t, _ in tokens):
        return
    for fmt, t, field in tokens:
        if not (_ALL_DEC.fullmatch(t) and len(t) >= 2 and len(t) == fmt.hex_digits):
            continue
        try:
            as_dec, as_hex = parse_value(fmt, t), parse_hex(fmt, t)
        except SmtmmaError:
            continue
        if as_dec != as_hex:
            raise InputError(
                f"{field}: {t!r} is ambiguous next to bare hex values: it reads as the decimal {t} "
                f"(0x{format_hex(fmt, as_dec)}); write 0x{t} for the bit pattern or {t}.0 for the number"
            )


def _parse_tokens(tokens: list[tuple[Format, str, str]]) -> list[int]:
    return [parse_cli_value(fmt, t, field=field) for fmt, t, field in tokens]


def _display(fmt: Format, bits: int) -> str:
    v = to_float(fmt, bits)
    return f"0x{format_hex(fmt, bits)} ({v!r})" if v == v else f"0x{format_hex(fmt, bits)} (nan)"


def _cmd_simulate(args: argparse.Namespace) -> int:
    entry = lookup(args.arch, args.instr, args.op)
    model = entry.model
    if args.model:
        model = parse_model_spec(args.model, like=model)
    fm = vector_formats(entry)
    ta, tb, tc = _tokens(fm.a, args.a, "--a"), _tokens(fm.b, args.b, "--b"), _tokens(fm.c, args.c, "--c")
    if len(tc) != 1:
        raise InputError(f"--c takes one value, got {len(tc)}")
    ts = []
    if fm.scale is not None:
        for opt, text in (("--scale-a", args.scale_a), ("--scale-b", args.scale_b)):
            if text is not None:
                ts += _tokens(fm.scale, text, opt)
    _check_ambiguous(ta + tb + tc + ts)
    a, b, (c,) = _parse_tokens(ta), _parse_tokens(tb), _parse_tokens(tc)
    if len(a) != len(b):
        raise InputError(f"--a has {len(a)} values but --b has {len(b)}; a dot product needs K values of each")
    sa = sb = None
    if fm.scale is not None:
        need = -(-len(a) // (fm.block or 1))
        if args.scale_a is None or args.scale_b is None:
            raise InputError(f"{entry.instr} is block-scaled: give --scale-a and --scale-b, {need} {fm.scale.name} "
                             f"value(s) each (one per {fm.block} values)")
        sa = _parse_tokens(_tokens(fm.scale, args.scale_a, "--scale-a"))
        sb = _parse_tokens(_tokens(fm.scale, args.scale_b, "--scale-b"))
        for opt, s in (("--scale-a", sa), ("--scale-b", sb)):
            if len(s) != need:
                raise InputError(f"{opt} needs {need} value(s) (one per {fm.block} values of K={len(a)}), got {len(s)}")
    elif args.scale_a is not None or args.scale_b is not None:
        raise InputError(f"{entry.instr} is not block-scaled: --scale-a/--scale-b are not allowed")
    d = int(simulate_dot(
        model, None, [a], [b], [c],
        scale_a=[sa] if sa is not None else None, scale_b=[sb] if sb is not None else None,
    )[0])
    if args.json:
        rec: dict[str, Any] = {
            "arch": entry.arch, "instr": entry.instr, "op": entry.op, "model": model.describe(),
            "a": [format_hex(fm.a, x) for x in a], "b": [format_hex(fm.b, x) for x in b],
            "c": format_hex(fm.c, c),
        }
        if sa is not None and sb is not None and fm.scale is not None:
            rec["scale_a"] = [format_hex(fm.scale, x) for x in sa]
            rec["scale_b"] = [format_hex(fm.scale, x) for x in sb]
        rec["d"] = format_hex(fm.d, d)
        rec["d_value"] = json_value(fm.d, d)
        print(json.dumps(rec))
        return EXIT_OK
    override = "  (--model override)" if args.model else f"  [{entry.source}]"
    lines = [
        ("arch", f"{entry.arch} ({ARCHS[entry.arch].family})"),
        ("instr", f"{entry.instr}  (a {fm.a.name}, b {fm.b.name}, c {fm.c.name}, d {fm.d.name})"),
        ("op", entry.op),
        ("model", model.describe() + override),
        ("a", ", ".join(_display(fm.a, x) for x in a)),
        ("b", ", ".join(_display(fm.b, x) for x in b)),
    ]
    if sa is not None and sb is not None and fm.scale is not None:
        lines.append(("scale_a", ", ".join(_display(fm.scale, x) for x in sa)))
        lines.append(("scale_b", ", ".join(_display(fm.scale, x) for x in sb)))
    lines += [("c", _display(fm.c, c)), ("d", _display(fm.d, d))]
    for label, text in lines:
        print(f"{label:<8}{text}")
    return EXIT_OK


# ------------------------------------------------------------------ check

def _print_file_report(r: FileReport, out: IO[str]) -> None:
    extra = f", {r.no_expectation} without d (not compared)" if r.no_expectation else ""
    print(f"{r.file}: {r.lines} lines: {r.matched} matched, {r.mismatched} mismatched, {r.errors} errors{extra}", file=out)
    for m in r.mismatches:
        rec = m.to_dict()
        print(f"  line {rec['line']}: mismatch ({rec['arch']} {rec['instr']} {rec['op']}, {rec['model']})", file=out)
        print(f"    a = {' '.join(rec['a'])}", file=out)
        print(f"    b = {' '.join(rec['b'])}", file=out)
        if "scale_a" in rec:
            print(f"    scale_a = {' '.join(rec['scale_a'])}", file=out)
            print(f"    scale_b = {' '.join(rec['scale_b'])}", file=out)
        print(f"    c = {rec['c']}", file=out)
        print(f"    expected d = {rec['expected']} ({rec['expected_value']!r})", file=out)
        print(f"    got      d = {rec['got']} ({rec['got_value']!r})", file=out)
    if r.mismatched > len(r.mismatches):
        print(f"  ... {r.mismatched - len(r.mismatches)} more mismatches", file=out)
    for e in r.error_list:
        print(f"  error: {e.message}", file=out)
    if r.errors > len(r.error_list):
        print(f"  ... {r.errors - len(r.error_list)} more bad lines", file=out)


def _cmd_check(args: argparse.Namespace) -> int:
    def show_progress(path: str, n: int) -> None:
        print(f"\r{path}: {n} lines", end="", file=sys.stderr, flush=True)

    progress = show_progress if not args.json and sys.stderr.isatty() else None
    report: CheckReport = check_files(args.files, max_mismatches=args.max_mismatches, max_errors=args.max_mismatches,
                                      progress=progress)
    if progress is not None:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        for r in report.files:
            _print_file_report(r, sys.stdout)
        if len(report.files) > 1:
            print(f"total: {report.lines} lines: {report.matched} matched, {report.mismatched} mismatched, "
                  f"{report.errors} errors" + (f", {report.no_expectation} without d" if report.no_expectation else ""))
    for r in report.files:
        if r.errors:
            first = r.error_list[0].message if r.error_list else ""
            _print_error(f"{r.file}: {r.errors} bad line{'s' if r.errors > 1 else ''}" + (f" (first: {first})" if first else ""))
    if report.mismatched:
        return EXIT_MISMATCH
    if report.errors:
        return EXIT_USAGE
    return EXIT_OK


# ------------------------------------------------------------------ solver commands (distinguish, query)

_DOMAIN_HELP = """\
domain (--domain, comma-separated items; default: finite inputs):
  finite | specials        NaN/Inf inputs excluded (default) | allowed
  normal                   no subnormal inputs
  nonneg                   a, b and c non-negative
  exp=LO:HI                unbiased exponents of non-zero a and b values in [LO, HI]
  cexp=LO:HI               the same for c
  lanes=N                  only lanes 0..N-1 of a and b may be non-zero
  a3=0x3c00, b0=..., c=... a fixed bit pattern (hex) for one input
  Queries are small (fast) when the domain is.  A domain no input satisfies
  (e.g. exp=5:6,a0=0x3c00: 1.0 has exponent 0) is refused as 'empty domain'
  rather than answered with a vacuous proof."""

_SOLVER_HELP = """\
solvers (--solver): bitwuzla (usually fastest), z3, cvc5, or portfolio (races
every installed backend, first answer wins); default: the first installed of
bitwuzla, z3, cvc5.  --timeout is per solver call, in seconds.  A sat witness is
always replayed through the simulator before it is printed."""

_DIST_EPILOG = f"""\
models: each X, Y, ... is an architecture (sm80, a100, hopper, gfx942, ...; its
catalogue model for --instr and --op) or a model spec KIND:PARAM=V,... (it has a
':'; e.g. t-fdpa:F=26, tfdpa:L=8,F=24,rho=rz-fp32, e-fdpa:L=16).  A spec takes
its operand formats, and the parameters it does not name, from the model of
the first architecture given, or of --like ARCH when every model is a spec.
Kinds: ftz-addmul, fma, e-fdpa, t-fdpa, st-fdpa, gst-fdpa, tr-fdpa, gtr-fdpa
(see 'smtmma list' for the catalogue's parameters).

output: the verdict; for sat the witness (a, b per lane in hex and decimal,
lanes with a zero product are counted, not shown), each model's D, how they
differ (ulps, NaN vs number, +0 vs -0), the solver and time, and the witness as
a test-vector line (arch/instr of the first architecture, "expect": each
model's D, "d": the first architecture's D) for 'smtmma check' or hardware.
unsat: equivalent on the stated domain (K inputs).  With three or more
models, the groups of equivalent models when not all can differ.
--k: the dot-product length; default the largest L of the models (one FDPA).

{_DOMAIN_HELP}

{_SOLVER_HELP}
--confirm: re-check an unsat answer with a second installed backend.
--emit-smt2 FILE: write the SMT-LIB2 script that was checked (with check-sat),
so any solver can re-check it.

--json prints one object:
  {{"verdict": "sat"|"unsat"|"unknown", "models": [NAME, ...], "witness": {{"a": [HEX, ...],
   "b": [HEX, ...], "c": HEX}}, "outputs": {{NAME: HEX, ...}}, "solver", "seconds", "reason",
   "instr", "k", "domain", "specs", "differences", "vector", "classes", "confirmed_by"}}
  (witness, outputs, differences, vector only when sat; hex in each operand's format)

exit status: 0 sat or unsat, 2 bad input (unknown model or parameter, an
instruction the architectures do not share, bad or empty domain, no backend),
3 the solver gave up (timeout; the reason is printed).

examples:
  smtmma distinguish sm80 sm90 --instr f16f32
  smtmma distinguish sm80 t-fdpa:F=25 --instr f16f32 --domain exp=-8:8
  smtmma distinguish sm80 sm86 --instr f16f32 --confirm          (unsat: equivalent)
  smtmma distinguish t-fdpa:F=24 t-fdpa:F=25 --like sm80 --instr f16f32 --domain lanes=4
  smtmma distinguish sm70 sm75 sm80 sm90 --instr f16f32 --solver portfolio --timeout 600
  smtmma distinguish sm80 sm90 --instr f16f32 --json --emit-smt2 sm80-sm90.smt2
  smtmma distinguish sm80 sm90 --instr f16f32 --json | jq -c .vector > v.jsonl && smtmma check v.jsonl"""

_PROPERTIES_HELP = """\
properties:
  symmetry            D(-A, B, -C) = -D(A, B, C) as values (holds for NVIDIA T-FDPA,
                      fails for CDNA3's round-down sums)
  monotonicity        with non-negative inputs, enlarging a, b or c never gives a
                      smaller D
  order-independence  permuting the products (the pairs a_k, b_k) never changes D
  carry-bits          the fewest carry bits N with which the model equals the
                      unbounded model ("carry_bits": N; the witness is an input on
                      which N - 1 bits fail); one FDPA (K <= L)
  error-bound         |D - exact| <= the Table 9 bound of MMA-Sim ("bound"); --tight
                      bisects for the smallest multiple of it that holds
  custom              --predicate FILE: a Python file defining
                      predicate(alg, inputs, outputs) -> Bool; the solver looks for
                      inputs on which it is false"""

_QUERY_EPILOG = f"""\
{_PROPERTIES_HELP}

The model is the catalogue's for --arch/--instr/--op; --model SPEC overrides it
(e.g. t-fdpa:F=26; parameters not given keep the catalogue's values).
output: holds (a proof on the stated domain), or fails with a witness (inputs,
the outputs involved, and a test-vector line), or unknown; the solver and time.

{_DOMAIN_HELP}

{_SOLVER_HELP}

--json prints one object:
  {{"property": NAME, "verdict": "holds"|"fails"|"unknown", "witness": {{"a", "b", "c"}} (when it
   fails), "outputs": {{...}}, "solver", "seconds", "reason", "model", "k", "domain", "vector", ...}}
  carry-bits adds "carry_bits": N; error-bound adds "bound" (and "tight").

exit status: 0 holds or fails, 2 bad input, 3 the solver gave up.

examples:
  smtmma query carry-bits --arch volta --instr f16f32
  smtmma query symmetry --arch gfx942 --instr f16f32 --domain exp=-8:8
  smtmma query monotonicity --arch sm70 --instr f16f32 --json
  smtmma query error-bound --arch sm90 --instr f16f32 --tight --timeout 600
  smtmma query custom --arch sm80 --instr f16f32 --predicate my_predicate.py"""


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def _positive_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not x > 0 or x != x or x == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return x


def _add_solver_options(p: argparse.ArgumentParser, k_help: str) -> None:
    p.add_argument("--k", type=_positive_int, metavar="K", help=k_help)
    p.add_argument("--solver", choices=[*BACKENDS, "portfolio"], metavar="S",
                   help="bitwuzla, z3, cvc5 or portfolio (default: the first installed of bitwuzla, z3, cvc5)")
    p.add_argument("--timeout", type=_positive_float, default=60.0, metavar="SEC",
                   help="per solver call, in seconds (default 60); exit status 3 when it runs out")
    p.add_argument("--domain", metavar="ITEMS", help="restrict the inputs, e.g. exp=-8:8,lanes=4 (see below)")
    p.add_argument("--seed", type=_non_negative, default=0, metavar="N", help="solver random seed (default 0)")
    p.add_argument("--emit-smt2", metavar="FILE", help="write the SMT-LIB2 script (with check-sat) to FILE")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _add_solver_parsers(sub: Any, fmt: type) -> None:
    pd = sub.add_parser("distinguish", help="find inputs on which two or more models give different bits",
                        description="Ask a solver for inputs on which the models (architectures or model specs) "
                        "give different D bits, or prove them equivalent on a domain.",
                        epilog=_DIST_EPILOG, formatter_class=fmt)
    pd.add_argument("models", nargs="+", metavar="MODEL",
                    help="two or more architectures (sm80, h100, ...) or model specs (t-fdpa:F=26, ...)")
    pd.add_argument("--instr", required=True, help="instruction type (f16f32, bf16f32, e4m3f32, ...)")
    pd.add_argument("--op", help="op family (mma, wgmma, tcgen05, mfma, mfma_1k) or an instruction name; "
                    "default: the catalogue's default")
    pd.add_argument("--like", metavar="ARCH", help="architecture whose operand formats and parameters model specs take "
                    "(default: the first architecture among the models)")
    pd.add_argument("--confirm", action="store_true", help="re-check an unsat answer with a second installed backend")
    _add_solver_options(pd, "dot-product length (default: the largest L of the models: one FDPA)")
    pd.set_defaults(func=_cmd_distinguish)

    pq = sub.add_parser("query", help="prove or refute a property of a model (symmetry, carry bits, ...)",
                        description="Ask a solver whether a property holds for the model of an architecture's "
                        "instruction: a proof on the domain, or a witness that it fails.",
                        epilog=_QUERY_EPILOG, formatter_class=fmt)
    pq.add_argument("property", metavar="PROPERTY",
                    help="symmetry, monotonicity, order-independence, carry-bits, error-bound or custom")
    pq.add_argument("--arch", required=True, help="architecture (sm80, sm90, volta, gfx942, ...)")
    pq.add_argument("--instr", required=True, help="instruction type (f16f32, bf16f32, e4m3f32, ...)")
    pq.add_argument("--op", help="op family or an instruction name; default: the catalogue's default")
    pq.add_argument("--model", metavar="SPEC", help="override the catalogue's model, e.g. t-fdpa:F=26")
    pq.add_argument("--tight", action="store_true", help="error-bound: bisect for the smallest multiple of the bound that holds")
    pq.add_argument("--predicate", metavar="FILE", help="custom: the file defining the predicate")
    _add_solver_options(pq, "dot-product length (default: the property's, usually one FDPA: K = L)")
    pq.set_defaults(func=_cmd_query)


class _Progress:
    """A one-line note on stderr while a solver runs, only when stderr is a terminal (never on stdout)."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.shown = False

    def __enter__(self) -> "_Progress":
        try:
            self.shown = sys.stderr.isatty()
        except (AttributeError, ValueError):
            self.shown = False
        if self.shown:
            print(f"{self.message}\u2026", end="", file=sys.stderr, flush=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)


def _solver_label(name: Optional[str]) -> str:
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


def _progress_message(label: str, timeout: float) -> str:
    verb = "racing" if label.startswith("portfolio") else "solving with"
    return f"{verb} {label.replace('portfolio ', '')} (timeout {timeout:g} s)"


def _dec(fmt: Format, bits: int) -> str:
    """Decimal value of a pattern, as ``simulate`` prints it: Python's repr of the exact binary64 value.

    (Shortest round-trip digits in the pattern's own format would print
    0xfbff of fp16 as -65500.0; its value is -65504.0.)
    """
    if fmt.is_nan_bits(bits):
        return "nan"
    return repr(to_float(fmt, bits))


def _hexdec(fmt: Format, bits: int) -> str:
    return f"0x{format_hex(fmt, bits)}  {_dec(fmt, bits)}"


def _zero_product(fa: Format, fb: Format, x: int, y: int) -> bool:
    """True when a lane contributes an exact zero: one factor is +-0 and the other is finite."""
    def zero(f: Format, v: int) -> bool:
        return not f.is_nan_bits(v) and v & ~f.sign_mask == 0

    def finite(f: Format, v: int) -> bool:
        return not f.is_nan_bits(v) and not f.is_inf_bits(v)

    return (zero(fa, x) and finite(fb, y)) or (zero(fb, y) and finite(fa, x))


def _witness_lines(fm: VectorFormats, w: Any) -> list[str]:
    a, b = list(w.a), list(w.b)
    shown = [k for k in range(len(a)) if not _zero_product(fm.a, fm.b, a[k], b[k])]
    hidden = len(a) - len(shown)
    head = f"witness: K={len(a)}, {len(shown)} lane{'s' if len(shown) != 1 else ''} shown"
    if hidden:
        head += f", {hidden} lane{'s' if hidden != 1 else ''} with a zero product not shown (the test vector has all)"
    rows = [["lane", "a", "b"]] + [[str(k), _hexdec(fm.a, a[k]), _hexdec(fm.b, b[k])] for k in shown]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    out = [head] + ["  " + "  ".join(c.ljust(wd) for c, wd in zip(r[:2], widths)) + "  " + r[2] for r in rows]
    out.append(f"  {'c'.ljust(widths[0])}  {_hexdec(fm.c, w.c)}")
    for label, s in (("scale_a", getattr(w, "scale_a", None)), ("scale_b", getattr(w, "scale_b", None))):
        if s is not None and fm.scale is not None:
            out.append(f"  {label}  " + ", ".join(_hexdec(fm.scale, x) for x in s))
    return out


def _witness_json(fm: VectorFormats, w: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {"a": [format_hex(fm.a, x) for x in w.a], "b": [format_hex(fm.b, x) for x in w.b],
                           "c": format_hex(fm.c, w.c)}
    for label in ("scale_a", "scale_b"):
        s = getattr(w, label, None)
        if s is not None and fm.scale is not None:
            rec[label] = [format_hex(fm.scale, x) for x in s]
    return rec


def _difference(fmt_name: str, fmt: Format, x: int, y: int) -> tuple[Optional[int], str]:
    """(ulps or None, words) for two different D patterns."""
    nx, ny = fmt.is_nan_bits(x), fmt.is_nan_bits(y)
    if nx and ny:
        return None, "NaN vs NaN (different NaN patterns)"
    if nx or ny:
        return None, "NaN vs number"
    if x & ~fmt.sign_mask == 0 and y & ~fmt.sign_mask == 0:
        return 0, f"{'-0' if x else '+0'} vs {'-0' if y else '+0'}"
    try:
        ulps = ulp_distance(fmt_name, x, y)
    except InputError:  # not both patterns of the inner format (E8M13 in FP32): count container ulps
        fmt_name = fmt.name
        ulps = ulp_distance(fmt_name, x, y)
    assert ulps is not None
    words = f"{ulps} ulp{'s' if ulps != 1 else ''} ({fmt_name})"
    if fmt.is_inf_bits(x) or fmt.is_inf_bits(y):
        words += ", infinity vs " + ("infinity" if fmt.is_inf_bits(x) and fmt.is_inf_bits(y) else "finite")
    elif (x ^ y) & fmt.sign_mask:
        words += ", opposite signs"
    return ulps, words


def _ulp_format(model: Model) -> str:
    """The format whose ulps measure the model's outputs: the rounding format when D carries it (E8M13 in FP32)."""
    if model.rho and not model.c_after:
        inner = get_format(model.conversion.fmt)
        if inner.container == model.d_fmt:
            return inner.name
    return output_format(model).name


def _is_spec_token(token: str) -> bool:
    """A model spec: has a ':', or is a bare model kind that is not an architecture name (fma, e-fdpa)."""
    if ":" in token:
        return True
    try:
        resolve_arch(token)
        return False
    except UnknownNameError:
        key = token.strip().lower().replace("_", "-")
        return key in KINDS or key.replace("-", "") in {k.replace("-", "") for k in KINDS}


def _arch_of(token: str, what: str) -> str:
    try:
        return resolve_arch(token)
    except UnknownNameError as e:
        raise UnknownNameError(f"{what}: {e}; or give a model spec with a ':' (e.g. t-fdpa:F=26)") from None


def _check_shared_instr(archs: Sequence[str], instr: str) -> None:
    """Every architecture must have ``instr``; otherwise list the instructions they share."""
    have = {a: {e.instr for e in entries(a)} for a in archs}
    missing = [a for a in archs if instr not in have[a]]
    if not missing:
        return
    shared = sorted(set.intersection(*have.values()), key=list(INSTRS).index)
    who = ", ".join(dict.fromkeys(archs))
    raise UnknownNameError(
        f"{', '.join(dict.fromkeys(missing))} {'has' if len(set(missing)) == 1 else 'have'} no instruction {instr}; "
        f"instructions shared by {who}: {', '.join(shared) if shared else 'none'}"
    )


def _resolve_models(tokens: Sequence[str], instr_name: str, op: Optional[str], like: Optional[str]) -> tuple[
        str, list[Model], Optional[str], str]:
    """(canonical instr, models, the first architecture among the models or None, the test vector's arch).

    The vector's arch is the first architecture among the models, else ``like``.

    Architectures give the catalogue model of (arch, instr, op); specs are
    parsed against the model of ``like`` or of the first architecture.
    """
    instr = resolve_instr(instr_name)
    is_spec = [_is_spec_token(t) for t in tokens]
    archs = {t: _arch_of(t, f"model {t!r}") for t, s in zip(tokens, is_spec) if not s}
    like_arch = _arch_of(like, "--like") if like else None
    _check_shared_instr([*archs.values(), *([like_arch] if like_arch else [])], instr)
    first_arch = next((archs[t] for t, s in zip(tokens, is_spec) if not s), None)
    base_arch = like_arch or first_arch
    if any(is_spec) and base_arch is None:
        raise InputError("model specs need operand formats: name an architecture among the models or give --like ARCH "
                         f"(e.g. --like sm80: the specs take the {instr} formats and parameters of sm80)")
    assert base_arch is not None
    like_model = model_of(base_arch, instr, op) if any(is_spec) else None
    models = []
    for t, s in zip(tokens, is_spec):
        if s:
            assert like_model is not None
            try:
                models.append(parse_model_spec(t, like=like_model))
            except SmtmmaError as e:
                raise type(e)(f"model {t!r}: {e}") from None
        else:
            models.append(model_of(archs[t], instr, op))
    return instr, models, first_arch, first_arch or base_arch


def _check_fixed(domain: Domain, fm: VectorFormats) -> None:
    """Fixed inputs of ``--domain`` (a0=0x3c00) must be patterns of their operand's format."""
    for name, value in domain.fixed:
        fmt = fm.c if name == "c" else fm.a if name.startswith("a") else fm.b
        if value < 0 or value >> fmt.bits:
            raise InputError(f"domain: {name}={value:#x} is not a {fmt.name} pattern ({fmt.bits} bits, "
                             f"0x{0:0{fmt.hex_digits}x}..0x{(1 << fmt.bits) - 1:0{fmt.hex_digits}x})")


def _write_smt2(path: str, script: str, comments: Sequence[str]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(smt2_file_text(script, comments))
    except OSError as e:
        raise InputError(f"--emit-smt2 {path}: cannot write ({e.strerror or e})") from None


def _unknown_note(reason: str) -> None:
    _print_error(f"no answer: {reason or 'the solver gave up'}; try a larger --timeout, a smaller --domain "
                 "or --solver portfolio")


def _cmd_distinguish(args: argparse.Namespace) -> int:
    tokens: list[str] = args.models
    if len(tokens) < 2:
        raise InputError("distinguish needs at least two models (architectures or model specs)")
    dupes = [t for i, t in enumerate(tokens) if t in tokens[:i]]
    if dupes:
        raise InputError(f"model {dupes[0]!r} is given twice; name each model once")
    domain = parse_domain(args.domain)
    instr, models, first_arch, vec_arch = _resolve_models(tokens, args.instr, args.op, args.like)
    _check_fixed(domain, vector_formats(lookup(vec_arch, instr, args.op)))
    label = _solver_label(args.solver)
    with _Progress(_progress_message(label, args.timeout)):
        r = distinguish(models, tokens, K=args.k, domain=domain, solver=args.solver, timeout=args.timeout,
                        seed=args.seed, confirm=args.confirm)
    entry = lookup(vec_arch, instr, args.op)
    fm = vector_formats(entry)
    out_names = {_ulp_format(m) for m in models}
    d_name = out_names.pop() if len(out_names) == 1 else fm.d.name  # ulps of the models' own output format
    if args.emit_smt2:
        _write_smt2(args.emit_smt2, r.smt2, [
            f"smtmma distinguish {' '.join(tokens)} --instr {instr}" + (f" --op {args.op}" if args.op else ""),
            *(f"  {n}: {m.describe()}" for n, m in zip(tokens, models)),
            f"K={r.K}; domain: {r.domain.describe()}",
            "sat: inputs a0.., b0.., c on which the outputs out0.. differ pairwise; unsat: no such input",
            f"answer: {r.verdict} ({r.solver}, {r.seconds:.2f} s)",
        ])

    differences: list[dict[str, Any]] = []
    vector_line: Optional[str] = None
    if r.verdict == "sat" and r.witness is not None:
        for x, y in itertools.combinations(tokens, 2):
            bx, by = r.outputs[x], r.outputs[y]
            if bx != by:
                ulps, words = _difference(d_name, fm.d, bx, by)
                differences.append({"models": [x, y], "ulps": ulps, "text": words})
        w = r.witness
        d = next((r.outputs[t] for t in tokens if not _is_spec_token(t)), None)  # the first architecture's D
        vector_line = dump_vector(vec_arch, instr, w.a, w.b, w.c, d, op=args.op, scale_a=w.scale_a,
                                  scale_b=w.scale_b, expect=r.outputs)

    if args.json:
        rec: dict[str, Any] = {"verdict": r.verdict, "models": tokens}
        if r.verdict == "sat" and r.witness is not None:
            rec["witness"] = _witness_json(fm, r.witness)
            rec["outputs"] = {n: format_hex(fm.d, r.outputs[n]) for n in tokens}
        rec.update(solver=r.solver, seconds=round(r.seconds, 3),
                   reason=r.reason or ("the outputs differ" if r.verdict == "sat" else ""))
        rec.update(instr=instr, op=entry.op, k=r.K, domain=r.domain.describe(),
                   specs={n: m.describe() for n, m in zip(tokens, models)})
        if differences:
            rec["differences"] = differences
        if vector_line is not None:
            rec["vector"] = json.loads(vector_line)
        if r.classes:
            rec["classes"] = r.classes
        if args.confirm:
            rec["confirmed_by"] = r.confirmed_by
            rec["confirmation"] = r.confirmation
        print(json.dumps(rec))
    else:
        _print_distinguish(r, tokens, models, instr, fm, differences, vector_line, args)
    if r.verdict == "unknown":
        _unknown_note(r.reason)
        return EXIT_TIMEOUT
    return EXIT_OK


def _print_distinguish(r: DistinguishResult, tokens: list[str], models: list[Model], instr: str, fm: VectorFormats,
                       differences: list[dict[str, Any]], vector_line: Optional[str], args: argparse.Namespace) -> None:
    where = f"{instr}, K={r.K}, {r.domain.describe()}"
    both = " and ".join(tokens) if len(tokens) == 2 else ", ".join(tokens)
    if r.verdict == "sat":
        all_differ = len(set(r.outputs.values())) == len(tokens)
        head = f"sat: {both} differ" if all_differ else f"sat: inputs that split {both} into groups"
    elif r.verdict == "unsat":
        head = (f"unsat: {both} are equivalent on this domain" if len(tokens) == 2
                else f"unsat: no input gives {both} pairwise different outputs")
    else:
        head = f"unknown: no answer for {both}"
    print(f"{head} ({where})" + (f": {r.reason or 'the solver gave up'}" if r.verdict == "unknown" else ""))
    width = max(len(t) for t in tokens)
    for t, m in zip(tokens, models):
        print(f"  {t.ljust(width)}  {m.describe()}")
    if r.classes:
        print("equivalence classes on this domain: " + " | ".join(" = ".join(c) for c in r.classes))
    if r.verdict == "sat" and r.witness is not None:
        for line in _witness_lines(fm, r.witness):
            print(line)
        print("outputs (d)")
        for t in tokens:
            print(f"  {t.ljust(width)}  {_hexdec(fm.d, r.outputs[t])}")
        if differences:
            print("difference")
            for dif in differences:
                x, y = dif["models"]
                print(f"  {x} vs {y}: {dif['text']}")
    if r.classes and "gave up" in r.reason:
        print(r.reason.rsplit("; ", 1)[-1])  # some pairwise comparisons gave up: the groups may merge
    solved = f"solver: {r.solver}, {r.seconds:.2f} s"
    if args.confirm and r.verdict != "unknown":
        solved += f"; {'confirmed by ' + r.confirmation if r.confirmed_by else r.confirmation}"
    print(solved)
    if args.emit_smt2:
        print(f"smt2: {args.emit_smt2}")
    if vector_line is not None:
        print("test vector (for 'smtmma check' or hardware; \"expect\" holds each model's d):")
        print(vector_line)


def _json_scalar(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_json_scalar(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_scalar(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def _output_hex(fm: VectorFormats, value: Any) -> Any:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= int(value) < (1 << fm.d.bits):
        return format_hex(fm.d, int(value))
    return _json_scalar(value)


def _output_text(fm: VectorFormats, value: Any) -> str:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= int(value) < (1 << fm.d.bits):
        return _hexdec(fm.d, int(value))
    return str(value)


def _load_properties() -> Any:
    try:
        from .queries import properties
    except ModuleNotFoundError as e:
        if e.name and e.name.endswith("properties"):
            raise InputError("query is not available in this installation (smtmma.queries.properties is missing)") from None
        raise
    return properties


def _cmd_query(args: argparse.Namespace) -> int:
    properties = _load_properties()
    names = list(properties.PROPERTIES)
    prop = args.property.strip().lower().replace("_", "-")
    if prop not in names:
        raise UnknownNameError(f"unknown property {args.property!r}; valid: {', '.join(names)}")
    domain = parse_domain(args.domain)
    options: dict[str, Any] = {}
    if args.tight:
        if prop != "error-bound":
            raise InputError(f"--tight applies to error-bound only, not {prop}")
        options["tight"] = True
    if args.predicate is not None:
        if prop != "custom":
            raise InputError(f"--predicate applies to custom only, not {prop}")
        if not os.path.isfile(args.predicate):
            raise InputError(f"--predicate {args.predicate}: no such file")
        options["predicate"] = args.predicate
    elif prop == "custom":
        raise InputError("custom needs --predicate FILE (the file that defines the predicate)")
    entry = lookup(args.arch, args.instr, args.op)
    model = model_of(entry.arch, entry.instr, args.op)
    _check_fixed(domain, vector_formats(entry))
    name = args.arch
    if args.model:
        try:
            model = parse_model_spec(args.model, like=model)
        except SmtmmaError as e:
            raise type(e)(f"--model {args.model!r}: {e}") from None
        name = args.model
    label = _solver_label(args.solver)
    with _Progress(_progress_message(label, args.timeout)):
        try:  # the properties check the domain alone before they report "holds"
            r = properties.check_property(prop, model, name=name, K=args.k, domain=domain, solver=args.solver,
                                          timeout=args.timeout, seed=args.seed, **options)
        except EmptyDomainError as e:
            text = str(e)
            raise EmptyDomainError(text if "empty domain" in text else f"empty domain: {text}") from None
    K = getattr(r, "K", None) or args.k
    fm = vector_formats(entry)
    w = getattr(r, "witness", None)
    has_lanes = w is not None and all(hasattr(w, f) for f in ("a", "b", "c"))
    outputs = dict(getattr(r, "outputs", None) or {})
    extra = dict(getattr(r, "extra", None) or {})
    vector_line: Optional[str] = None
    if has_lanes:  # a failing input, or the boundary case a "holds" reports (carry-bits: N - 1 bits fail)
        try:
            d = replay([model], w)[0]
            vector_line = dump_vector(entry.arch, entry.instr, w.a, w.b, w.c, None if args.model else d, op=args.op,
                                      scale_a=getattr(w, "scale_a", None), scale_b=getattr(w, "scale_b", None),
                                      expect={name: d})
        except SmtmmaError:
            vector_line = None
    if args.emit_smt2 and getattr(r, "smt2", ""):
        _write_smt2(args.emit_smt2, r.smt2, [
            f"smtmma query {prop} --arch {entry.arch} --instr {entry.instr}" + (f" --model {args.model}" if args.model else ""),
            f"model: {model.describe()}; K={K}; domain: {domain.describe()}",
            f"answer: {r.verdict} ({r.solver}, {r.seconds:.2f} s)",
        ])
    if args.json:
        rec: dict[str, Any] = {"property": prop, "verdict": r.verdict}
        if w is not None:
            rec["witness"] = _witness_json(fm, w) if has_lanes else _json_scalar(w)
        rec["outputs"] = {str(k): _output_hex(fm, v) for k, v in outputs.items()}
        rec.update(solver=r.solver, seconds=round(float(r.seconds), 3), reason=getattr(r, "reason", "") or "")
        rec.update(arch=entry.arch, instr=entry.instr, name=name, model=model.describe(), k=K, domain=domain.describe())
        for k, v in extra.items():
            rec.setdefault(str(k), _json_scalar(v))
        if vector_line is not None:
            rec["vector"] = json.loads(vector_line)
        print(json.dumps(rec))
    else:
        where = f"{entry.arch} {entry.instr}, {model.describe()}, K={K}, {domain.describe()}"
        verdict = {"holds": "holds", "fails": "fails", "unknown": "unknown"}.get(r.verdict, r.verdict)
        print(f"{prop} {verdict} for {name} ({where})")
        for k, v in extra.items():
            v = _json_scalar(v)
            print(f"  {k}: {json.dumps(v) if isinstance(v, (dict, list)) else v}")
        reason = getattr(r, "reason", "")
        if reason:
            print(f"reason: {reason}")
        if w is not None:
            if has_lanes:
                for line in _witness_lines(fm, w):
                    print(line)
            else:
                print(f"witness: {w}")
        if outputs:
            print("outputs")
            width = max(len(str(k)) for k in outputs)
            for k, v in outputs.items():
                print(f"  {str(k).ljust(width)}  {_output_text(fm, v)}")
        print(f"solver: {r.solver}, {float(r.seconds):.2f} s")
        if args.emit_smt2 and getattr(r, "smt2", ""):
            print(f"smt2: {args.emit_smt2}")
        if vector_line is not None:
            print("test vector (for 'smtmma check' or hardware):")
            print(vector_line)
    if r.verdict == "unknown":
        _unknown_note(getattr(r, "reason", ""))
        return EXIT_TIMEOUT
    return EXIT_OK


# ------------------------------------------------------------------ main

_VALUE_OPTIONS = frozenset({"--a", "--b", "--c", "--scale-a", "--scale-b"})


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--a -1,2`` -> ``--a=-1,2`` (argparse would take ``-1,2`` for an option)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok in _VALUE_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") and argv[i + 1] not in ("-h", "--help"):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``smtmma`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(_join_negative_values(args_list))
        if getattr(args, "func", None) is None:
            _print_error("a command is required: list, simulate or check to run the models; distinguish or query "
                         "to ask a solver (see 'smtmma --help')")
            return EXIT_USAGE
        return int(args.func(args))
    except SystemExit as e:  # --help, --version, usage errors
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_USAGE)
    except SmtmmaError as e:
        _print_error(str(e))
        return EXIT_USAGE
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as e:  # a file that vanished or cannot be read mid-run
        _print_error(f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("smtmma: interrupted", file=sys.stderr)
        return 130
