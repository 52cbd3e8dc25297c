"""A solver's witness as text and JSON: bit patterns in hex with their decimal values."""

from __future__ import annotations

from typing import Any

from ..formats import Format, format_hex, to_float
from ..vectors import VectorFormats


def _dec(fmt: Format, bits: int) -> str:
    """Decimal value of a pattern, as ``simulate`` prints it: Python's repr of the exact binary64 value.

    (Shortest round-trip digits in the pattern's own format would print
    0xfbff of fp16 as -65500.0; its value is -65504.0.)
    """
    if fmt.is_nan_bits(bits):
        return "nan"
    return repr(to_float(fmt, bits))


def hexdec(fmt: Format, bits: int) -> str:
    """``0x3c00  1.0``: a pattern in hex, two spaces, its decimal value (:func:`_dec`)."""
    return f"0x{format_hex(fmt, bits)}  {_dec(fmt, bits)}"


def _zero_product(fa: Format, fb: Format, x: int, y: int) -> bool:
    """True when a lane contributes an exact zero: one factor is +-0 and the other is finite."""
    def zero(f: Format, v: int) -> bool:
        return not f.is_nan_bits(v) and v & ~f.sign_mask == 0

    def finite(f: Format, v: int) -> bool:
        return not f.is_nan_bits(v) and not f.is_inf_bits(v)

    return (zero(fa, x) and finite(fb, y)) or (zero(fb, y) and finite(fa, x))


def witness_lines(fm: VectorFormats, w: Any) -> list[str]:
    """A witness as text: a head line, then a/b per lane (lanes with an exact zero product left out), c and the scales."""
    a, b = list(w.a), list(w.b)
    shown = [k for k in range(len(a)) if not _zero_product(fm.a, fm.b, a[k], b[k])]
    hidden = len(a) - len(shown)
    head = f"witness: K={len(a)}, {len(shown)} lane{'s' if len(shown) != 1 else ''} shown"
    if hidden:
        head += f", {hidden} lane{'s' if hidden != 1 else ''} with a zero product not shown (the test vector has all)"
    rows = [["lane", "a", "b"]] + [[str(k), hexdec(fm.a, a[k]), hexdec(fm.b, b[k])] for k in shown]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    out = [head] + ["  " + "  ".join(c.ljust(wd) for c, wd in zip(r[:2], widths)) + "  " + r[2] for r in rows]
    out.append(f"  {'c'.ljust(widths[0])}  {hexdec(fm.c, w.c)}")
    for label, s in (("scale_a", getattr(w, "scale_a", None)), ("scale_b", getattr(w, "scale_b", None))):
        if s is not None and fm.scale is not None:
            out.append(f"  {label}  " + ", ".join(hexdec(fm.scale, x) for x in s))
    return out
