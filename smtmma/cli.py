"""The ``smtmma`` command line: a thin argparse layer over the library.

Subcommands: ``list`` (the catalogue), ``simulate`` (one dot product),
``check`` (test-vector files against the models).  Every command speaks
``--json``.  :func:`main` returns the exit status (it never raises for user
errors and never prints a traceback for them):

* 0 -- success;
* 1 -- ``check`` found mismatches;
* 2 -- usage or input error (unknown name, malformed value, missing file, bad line);
* 3 -- reserved for solver timeouts (unknown verdicts).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from fractions import Fraction
from typing import IO, Any, NoReturn, Optional, Sequence

from . import __version__
from .catalogue import ARCHS, Entry, entries, lookup
from .check import CheckReport, FileReport, check_files, json_value
from .errors import InputError, NotRepresentableError, SmtmmaError
from .formats import Format, format_hex, from_fraction, parse_hex, parse_value, to_float
from .models import parse_model_spec
from .simulate import simulate_dot
from .vectors import vector_formats

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
  3  a solver gave up (timeout or resource limit; commands that use solvers)"""

_TOP_EPILOG = f"""\
examples:
  smtmma list --arch h100                 what the H100 tensor cores run
  smtmma simulate --arch sm90 --instr f16f32 --a 1,2^-10 --b 1,2^-10 --c 0
  smtmma check logs/*.jsonl               compare recorded GPU outputs with the models

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

_CHECK_EPILOG = f"""\
Each FILE is JSON Lines, one dot product per line, bit patterns in hex:
  {{"arch": "sm90", "instr": "f16f32", "a": ["3c00", "1400"], "b": ["3c00", "1400"],
   "c": "00000000", "d": "3f800008"}}
optional: "op" (mma, wgmma, tcgen05, mfma, ...; default: the catalogue's), "scale_a",
"scale_b" (block-scaled instructions), "expect", "gpu", "note"; other fields are ignored.
Lines without "d" are counted as 'no expectation'. A bad line is reported and
the check goes on.

--json prints one object:
  {{"files": [{{"file", "lines", "matched", "mismatched", "errors", "no_expectation",
              "mismatches": [{{"line", "expected", "got", "a", "b", "c", ...}}],
              "error_messages": [{{"line", "message"}}]}}],
   "lines", "matched", "mismatched", "errors", "no_expectation"}}

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
        "simulate MMA instructions and check recorded hardware outputs.",
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
    progress = None
    if not args.json and sys.stderr.isatty():
        def progress(path: str, n: int) -> None:
            print(f"\r{path}: {n} lines", end="", file=sys.stderr, flush=True)
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
            _print_error("a command is required: list, simulate or check (see 'smtmma --help')")
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
