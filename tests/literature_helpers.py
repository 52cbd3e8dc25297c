"""Shared helpers for the literature regression tests.

Used by ``tests/test_fasi_features.py`` (hardware results of Fasi et al. and
of the SMT paper) and ``tests/test_table8.py`` (Table 8 of the MMA-Sim paper).

Everything here is exact: values are :class:`fractions.Fraction` and are
turned into bit patterns with :func:`smtmma.formats.from_fraction`, which
raises if a value is not representable -- so a typo in a test constant fails
loudly instead of being rounded silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional, Sequence, Union

import numpy as np

import smtmma
from smtmma.catalogue import INSTRS, resolve_instr
from smtmma.formats import format_hex, from_fraction, get_format, to_fraction

__all__ = [
    "Raw",
    "Value",
    "pow2",
    "instr_formats",
    "bits_of",
    "describe",
    "run_dot",
    "Case",
    "check_case",
]


class Raw(int):
    """A raw bit pattern (used where a value cannot name the input, e.g. NaN payloads)."""


#: A test value: an exact number, one of from_fraction's special strings
#: ("-0", "inf", "-inf", "nan"), or a :class:`Raw` bit pattern.
Value = Union[Fraction, int, str, Raw]


def pow2(e: int) -> Fraction:
    """2**e as an exact Fraction (e may be negative)."""
    return Fraction(2) ** e


def instr_formats(instr: str) -> tuple[str, str, str, str]:
    """(A, B, C, D) format names of an instruction (by name or alias)."""
    i = INSTRS[resolve_instr(instr)]
    return i.a_fmt, i.b_fmt, i.c_fmt, i.d_fmt


def _dtype(fmt: str) -> type:
    nbits = get_format(fmt).bits
    if nbits <= 8:
        return np.uint8
    if nbits <= 16:
        return np.uint16
    if nbits <= 32:
        return np.uint32
    return np.uint64


def bits_of(fmt: str, value: Value) -> int:
    """Bit pattern of ``value`` in ``fmt`` (exact; raises NotRepresentableError)."""
    if isinstance(value, Raw):
        return int(value)
    return from_fraction(fmt, value)


def describe(fmt: str, bits: int) -> str:
    """``0x3c00 (=1)``-style rendering of a pattern, for assertion messages."""
    v = to_fraction(fmt, int(bits))
    if isinstance(v, Fraction) and v.denominator != 1:
        txt = f"{v} ~ {float(v)!r}"
    else:
        txt = str(v)
    return f"0x{format_hex(fmt, int(bits))} (={txt})"


def run_dot(
    arch: str,
    instr: str,
    a_rows: Sequence[Sequence[Value]],
    b_rows: Sequence[Sequence[Value]],
    c_vals: Sequence[Value],
    *,
    K: Optional[int] = None,
    op: Optional[str] = None,
) -> list[int]:
    """Run ``smtmma.simulate_dot`` on rows of exact values; return the D bit patterns.

    Each row of ``a_rows``/``b_rows`` is padded with (+0) zeros to length ``K``
    (default: the longest row).  Values are encoded exactly in the
    instruction's A, B and C formats.
    """
    fa, fb, fc, _ = instr_formats(instr)
    n = len(a_rows)
    assert len(b_rows) == n and len(c_vals) == n
    width = K if K is not None else max(len(r) for r in a_rows)
    a = np.zeros((n, width), dtype=_dtype(fa))
    b = np.zeros((n, width), dtype=_dtype(fb))
    c = np.zeros((n,), dtype=_dtype(fc))
    for r in range(n):
        assert len(a_rows[r]) == len(b_rows[r]) <= width, (len(a_rows[r]), len(b_rows[r]), width)
        for k, v in enumerate(a_rows[r]):
            a[r, k] = bits_of(fa, v)
        for k, v in enumerate(b_rows[r]):
            b[r, k] = bits_of(fb, v)
        c[r] = bits_of(fc, c_vals[r])
    if op is None:
        d = smtmma.simulate_dot(arch, instr, a, b, c)
    else:
        d = smtmma.simulate_dot(arch, instr, a, b, c, op=op)
    d = np.asarray(d)
    assert d.shape == (n,), f"simulate_dot returned shape {d.shape}, expected ({n},)"
    return [int(x) for x in d]


@dataclass(frozen=True)
class Case:
    """One literature witness: a dot product on one (arch, instr[, op]) and its result.

    ``kind`` says where ``expected`` comes from:

    * ``reported``    -- the paper reports this output for these inputs on this GPU;
    * ``inferred``    -- the paper reports the *behaviour* carries over to this GPU
      (e.g. Fasi §3.2/§3.3: "all conclusions remain valid"), and the value
      follows from what it states about the accumulator (comment says how);
    * ``constructed`` -- the paper describes the test only qualitatively; the
      inputs are ours, the expected behaviour is the paper's.
    """

    id: str
    arch: str
    instr: str
    a: tuple[Value, ...]
    b: tuple[Value, ...]
    c: Value
    expected: Value
    kind: str
    source: str
    op: Optional[str] = None
    Ks: tuple[int, ...] = (4, 16)
    xfail: Optional[str] = None
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        assert self.kind in ("reported", "inferred", "constructed"), self.kind
        assert len(self.a) == len(self.b), self.id


def check_case(case: Case) -> None:
    """Run ``case`` for each K in ``case.Ks`` and assert the exact D bits."""
    _, _, _, fd = instr_formats(case.instr)
    want = bits_of(fd, case.expected)
    fails = []
    for K in case.Ks:
        if K < len(case.a):
            continue
        (got,) = run_dot(case.arch, case.instr, [case.a], [case.b], [case.c], K=K, op=case.op)
        if got != want:
            fails.append(f"K={K}: got {describe(fd, got)}")
    assert not fails, (
        f"{case.id} [{case.kind}] on {case.arch} {case.instr}"
        f"{' op=' + case.op if case.op else ''}: expected {describe(fd, want)}; "
        + "; ".join(fails)
        + f"\n  a={case.a}\n  b={case.b}\n  c={case.c}\n  source: {case.source}"
    )
