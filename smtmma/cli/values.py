"""Operand values on the command line: hex patterns or exact decimals, with hints when they do not fit."""

from __future__ import annotations

import re
from fractions import Fraction

from ..errors import InputError, NotRepresentableError, SmtmmaError
from ..formats import (Format, Real, clip, encode_real, floor_log2, format_hex, from_fraction, parse_hex, parse_real, parse_value,
                       to_float)

_ALL_HEX = re.compile(r"[0-9a-fA-F]+")
_ALL_DEC = re.compile(r"[0-9]+")


def parse_cli_value(fmt: Format, token: str, field: str = "value") -> int:
    """Bits of a command-line value in ``fmt``: hex or exact decimal (see ``smtmma simulate --help``).

    A token of hex digits only is hex unless it is all decimal digits
    (``3c00`` and ``1e5`` are hex, ``1000`` is the integer 1000); ``0x`` forces
    hex; anything else is read by :func:`~smtmma.formats.parse_real` (NaN and
    infinity spellings, huge exponents: see :func:`~smtmma.formats.parse_value`).
    A value the format cannot hold exactly is refused with the representable
    values around it.
    """
    t = token.strip()
    if not t:
        raise InputError(f"{field}: empty value")
    if (_ALL_HEX.fullmatch(t) and not _ALL_DEC.fullmatch(t)) or t[:2].lower() == "0x":
        return parse_hex(fmt, t, field=field)
    real = parse_real(t, field=field)
    try:
        return encode_real(fmt, real, shown=clip(t, quote=False), prefix=f"{field}: ")
    except NotRepresentableError:
        hint = _hint_for(fmt, real)
        if not hint:
            raise
        raise NotRepresentableError(f"{field}: {clip(t, quote=False)} is not exactly representable in {fmt.name}{hint}") from None


def _hint_for(fmt: Format, real: Real) -> str:
    """:func:`_hint` for a refused real; a huge or tiny one stands in as a value just beyond the format's range."""
    if real.kind == "huge":
        q = Fraction(2) ** (fmt.emax + 2)
    elif real.kind == "tiny":
        q = Fraction(2) ** (fmt.emin - fmt.man_bits - 2)
    elif real.kind == "finite" and real.magnitude != 0:
        q = real.magnitude
    else:
        return ""
    if real.negative and (not fmt.signed or fmt.sign_ignored):
        return ""  # "negative; unsigned" says it all
    return _hint(fmt, -q if real.negative else q)


def _hint(fmt: Format, q: Fraction) -> str:
    """`` (nearest: ...)``: the representable values around ``q``, for error messages; says overflow / underflow."""
    sign = -1 if q < 0 else 1
    mag = abs(q)
    if mag == 0 or not fmt.signed and sign < 0:
        return ""
    top = Fraction(fmt.max_sig) * Fraction(2) ** (fmt.emax - fmt.man_bits)
    if mag > top:
        return f" (overflow; largest finite: {display_value(fmt, from_fraction(fmt, sign * top))})"
    ulp = Fraction(2) ** (max(floor_log2(mag), fmt.emin) - fmt.man_bits)
    lo = (mag // ulp) * ulp
    near = []
    for v in (lo, lo + ulp):
        try:
            near.append(from_fraction(fmt, "-0" if v == 0 and sign < 0 else sign * v))
        except SmtmmaError:
            pass
    near.sort(key=lambda x: to_float(fmt, x))
    under = "underflow; " if mag < Fraction(2) ** (fmt.emin - (fmt.man_bits if fmt.subnormals else 0)) else ""
    return f" ({under}nearest: {' and '.join(display_value(fmt, x) for x in near)})" if near else ""


def split_tokens(fmt: Format, text: str, opt: str) -> list[tuple[Format, str, str]]:
    """The comma-separated values of option ``opt`` as ``(fmt, token, field)``; ``field`` names each (``--a[1]``)."""
    parts = text.split(",")
    return [(fmt, p.strip(), f"{opt}[{i}]" if len(parts) > 1 else opt) for i, p in enumerate(parts)]


def check_ambiguous(tokens: list[tuple[Format, str, str]]) -> None:
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


def parse_tokens(tokens: list[tuple[Format, str, str]]) -> list[int]:
    """The bit patterns of :func:`split_tokens`'s tokens (:func:`parse_cli_value`)."""
    return [parse_cli_value(fmt, t, field=field) for fmt, t, field in tokens]


def display_value(fmt: Format, bits: int) -> str:
    """``0x3c00 (1.0)``: a pattern in hex with its value (``nan`` for any NaN)."""
    v = to_float(fmt, bits)
    return f"0x{format_hex(fmt, bits)} ({v!r})" if v == v else f"0x{format_hex(fmt, bits)} (nan)"
