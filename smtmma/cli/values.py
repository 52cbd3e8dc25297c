"""Operand values on the command line: hex patterns or exact decimals, with hints when they do not fit."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Optional

from ..errors import InputError, NotRepresentableError, SmtmmaError
from ..formats import Format, format_hex, from_fraction, parse_hex, parse_value, to_float

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
