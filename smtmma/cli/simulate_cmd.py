"""``smtmma simulate``: one dot product d = c + sum a_k b_k, bit for bit."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..catalogue import ARCHS, lookup, model_of, warn_if_provisional
from ..check import json_value
from ..errors import InputError
from ..formats import format_hex
from ..models import parse_model_spec
from ..simulate import simulate_dot
from ..trace import trace_dot
from ..vectors import vector_formats
from .common import EXIT_OK, model_spec_arg
from .values import check_ambiguous, display_value, parse_tokens, split_tokens
from ..queries.records import value_text

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
  inf  -inf  nan  -nan  -0
                   any letter case, with + too (+Infinity, NaN); nan is the format's
                   canonical NaN (fp16 7e00), -nan the same with the sign bit set
                   (fe00; FNUZ formats have one NaN, 80); formats without infinity
                   (e4m3, FNUZ, fp6, fp4) refuse inf, unsigned ones refuse -nan
  Values beyond the format's range (70000 or 1e99999 in fp16, 2^-99999) are
  refused as overflow or underflow, never rounded.
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
  smtmma simulate --arch sm90 --instr f16f32 --model t-fdpa:F=26 --a 1,2^-24 --b 1,1 --c 0
  smtmma simulate --arch sm80 --op mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 --a 1,1 --b 1,1 --c 0
  smtmma simulate --arch mi300x --op v_mfma_f32_16x16x16_f16 --a 1,2^-10 --b 1,2^-10 --c 0"""


def add_parser(sub: Any, fmt: type) -> None:
    """Add the ``simulate`` subcommand to ``sub`` (the subparsers of ``smtmma``)."""
    ps = sub.add_parser("simulate", help="simulate one dot product d = c + sum a_k b_k",
                        description="Simulate one dot product d = c + sum_k a_k * b_k, bit for bit.",
                        epilog=_SIM_EPILOG, formatter_class=fmt)
    ps.add_argument("--arch", required=True, help="architecture (sm80, sm90, h100, gfx942, ...)")
    ps.add_argument("--instr", help="instruction type (f16f32, bf16f32, e4m3f32, ...); may be left out when "
                    "--op names a full instruction whose types fix it")
    ps.add_argument("--op", help="op family (mma, wgmma, tcgen05, mfma, mfma_1k) or an instruction name (PTX "
                    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, MMA-Sim m16n8k16.f32.f16.f16.f32, v_mfma_f32_16x16x16_f16); "
                    "default: the catalogue's default")
    ps.add_argument("--model", type=model_spec_arg, metavar="SPEC", help="override the catalogue's model, e.g. t-fdpa:F=26 "
                    "(parameters not given keep the catalogue's values)")
    ps.add_argument("--a", required=True, metavar="V1,V2,...", help="the K values of A (format of the instruction's A)")
    ps.add_argument("--b", required=True, metavar="V1,V2,...", help="the K values of B")
    ps.add_argument("--c", required=True, metavar="V", help="the accumulator C")
    ps.add_argument("--scale-a", metavar="S1,...", help="block scales of A (block-scaled instructions)")
    ps.add_argument("--scale-b", metavar="S1,...", help="block scales of B")
    ps.add_argument("--trace", action="store_true", help="also print the model's intermediate values (inputs as "
                    "read, alignment exponent, fused sum before rounding, each FDPA's result), exactly")
    ps.add_argument("--json", action="store_true", help="print one JSON object")
    ps.set_defaults(func=_cmd_simulate)


def _cmd_simulate(args: argparse.Namespace) -> int:
    entry = lookup(args.arch, args.instr, args.op)
    model = model_of(args.arch, args.instr, args.op)  # an instruction name (--op mma.sync.aligned.m16n8k16) sets its L
    warn_if_provisional(args.arch)
    if args.model:
        model = parse_model_spec(args.model, like=model)
    fm = vector_formats(entry)
    ta, tb, tc = split_tokens(fm.a, args.a, "--a"), split_tokens(fm.b, args.b, "--b"), split_tokens(fm.c, args.c, "--c")
    if len(tc) != 1:
        raise InputError(f"--c takes one value, got {len(tc)}")
    ts = []
    if fm.scale is not None:
        for opt, text in (("--scale-a", args.scale_a), ("--scale-b", args.scale_b)):
            if text is not None:
                ts += split_tokens(fm.scale, text, opt)
    check_ambiguous(ta + tb + tc + ts)
    a, b, (c,) = parse_tokens(ta), parse_tokens(tb), parse_tokens(tc)
    if len(a) != len(b):
        raise InputError(f"--a has {len(a)} values but --b has {len(b)}; a dot product needs K values of each")
    sa = sb = None
    if fm.scale is not None:
        need = -(-len(a) // (fm.block or 1))
        if args.scale_a is None or args.scale_b is None:
            raise InputError(f"{entry.instr} is block-scaled: give --scale-a and --scale-b, {need} {fm.scale.name} "
                             f"value(s) each (one per {fm.block} values)")
        sa = parse_tokens(split_tokens(fm.scale, args.scale_a, "--scale-a"))
        sb = parse_tokens(split_tokens(fm.scale, args.scale_b, "--scale-b"))
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
        if args.trace:
            rec["trace"] = [{"step": st.label, "value": value_text(st.value)} for st in trace_dot(model, a, b, c, sa, sb).steps]
        print(json.dumps(rec))
        return EXIT_OK
    override = "  (--model override)" if args.model else f"  [{entry.source}]"
    lines = [
        ("arch", f"{entry.arch} ({ARCHS[entry.arch].family})"),
        ("instr", f"{entry.instr}  (a {fm.a.name}, b {fm.b.name}, c {fm.c.name}, d {fm.d.name})"),
        ("op", entry.op),
        ("model", model.describe() + override),
        ("a", ", ".join(display_value(fm.a, x) for x in a)),
        ("b", ", ".join(display_value(fm.b, x) for x in b)),
    ]
    if sa is not None and sb is not None and fm.scale is not None:
        lines.append(("scale_a", ", ".join(display_value(fm.scale, x) for x in sa)))
        lines.append(("scale_b", ", ".join(display_value(fm.scale, x) for x in sb)))
    lines += [("c", display_value(fm.c, c)), ("d", display_value(fm.d, d))]
    for label, text in lines:
        print(f"{label:<8}{text}")
    if args.trace:
        print("trace (exact values)")
        stage = None
        for st in trace_dot(model, a, b, c, sa, sb).steps:
            if st.stage != stage:
                print(f"  {st.stage}")
                stage = st.stage
            print(f"    {st.what}: {value_text(st.value)}")
    return EXIT_OK
